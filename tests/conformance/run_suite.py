"""Runs the public array API conformance suite (data-apis/array-api-tests) against frit, one
pytest process per test file, and prints pass/fail counts per file plus each file's peak RSS.

One process per file: a single process over the whole suite once grew past many GB, and a file
that crashes or is killed then loses only its own results (they are read from pytest's verbose
lines as they come, so even a killed file keeps the outcomes it printed).
Usage: run_suite.py SUITE_DIR [--max-examples N] [--timeout S] [--mem-gb G] [--out DIR] [FILE...]
"""
import argparse
import collections
import os
import re
import resource
import subprocess
import sys
import time

OUTCOME = re.compile(r"^(array_api_tests/\S+::\S+(?:\[.*?\])?) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)")
SUMMARY = re.compile(r"^(FAILED|ERROR) (array_api_tests/\S+::\S+(?:\[.*?\])?)(?: - (.*))?$")


def run_file(args, suite, name, out):
    log_path = os.path.join(out, name.replace(".py", ".log"))
    cmd = [sys.executable, "-m", "pytest", "-v", "-rfE", "--tb=short", "-p", "no:cacheprovider",
           "--max-examples", str(args.max_examples), "--derandomize", "--disable-deadline",
           "array_api_tests/" + name]
    # COLUMNS: pytest cuts the summary lines (the failure messages) to the terminal width
    env = dict(os.environ, ARRAY_API_TESTS_MODULE="frit", ARRAY_API_TESTS_VERSION="2023.12",
               COLUMNS="400")
    mem = int(args.mem_gb * (1 << 30))

    def limit():  # the cap turns a runaway process into a MemoryError instead of the OOM killer
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    t0 = time.time()
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, cwd=suite, env=env, stdout=log, stderr=subprocess.STDOUT,
                                preexec_fn=limit)
        status = "ok"
        deadline = t0 + args.timeout
        while True:
            pid, st, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.time() > deadline:
                proc.kill()
                pid, st, ru = os.wait4(proc.pid, 0)
                status = "timeout"
                break
            time.sleep(0.2)
    rc = os.waitstatus_to_exitcode(st)
    if status == "ok" and rc not in (0, 1, 5):
        status = "crash rc=%d" % rc
    outcomes, messages = {}, {}
    with open(log_path, errors="replace") as log:
        for line in log:
            m = OUTCOME.match(line)
            if m:
                outcomes[m.group(1)] = m.group(2)
            m = SUMMARY.match(line.rstrip("\n"))
            if m:
                messages[m.group(2)] = m.group(3) or ""
    return dict(name=name, status=status, seconds=time.time() - t0, rss_mb=ru.ru_maxrss / 1024,
                outcomes=outcomes, messages=messages, log=log_path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("suite")
    ap.add_argument("files", nargs="*")
    ap.add_argument("--max-examples", type=int, default=20)
    ap.add_argument("--timeout", type=float, default=1800)  # per file; a loaded machine is slow
    ap.add_argument("--mem-gb", type=float, default=6)
    ap.add_argument("--out", default="build/conformance")
    args = ap.parse_args()
    suite = os.path.abspath(args.suite)
    if not os.path.isfile(os.path.join(suite, "array_api_tests", "__init__.py")):
        sys.exit("no array-api-tests checkout at %s (set ARRAY_API_TESTS_DIR)" % suite)
    if not os.path.isdir(os.path.join(suite, "array-api", "src", "array_api_stubs")):
        sys.exit("%s/array-api (the spec submodule, for array_api_stubs) is missing" % suite)
    os.makedirs(args.out, exist_ok=True)
    files = args.files or sorted(f for f in os.listdir(os.path.join(suite, "array_api_tests"))
                                 if f.startswith("test_") and f.endswith(".py"))
    totals = collections.Counter()
    failures = []
    print("%-44s %6s %6s %6s %6s %7s %8s  %s" % ("file", "pass", "fail", "error", "skip", "secs",
                                                 "rss MB", "status"))
    for name in files:
        r = run_file(args, suite, name, args.out)
        c = collections.Counter(r["outcomes"].values())
        totals.update(c)
        print("%-44s %6d %6d %6d %6d %7.0f %8.0f  %s" % (
            name, c["PASSED"], c["FAILED"], c["ERROR"], c["SKIPPED"], r["seconds"], r["rss_mb"],
            r["status"]), flush=True)
        for node, outcome in sorted(r["outcomes"].items()):
            if outcome in ("FAILED", "ERROR"):
                failures.append("%s %s - %s" % (outcome, node, r["messages"].get(node, "")[:300]))
    ran = totals["PASSED"] + totals["FAILED"] + totals["ERROR"]
    print("%-44s %6d %6d %6d %6d" % ("TOTAL", totals["PASSED"], totals["FAILED"], totals["ERROR"],
                                      totals["SKIPPED"]))
    print("pass rate: %d / %d = %.1f%% (skipped %d)" % (totals["PASSED"], ran,
                                                        100.0 * totals["PASSED"] / max(ran, 1),
                                                        totals["SKIPPED"]))
    with open(os.path.join(args.out, "failures.txt"), "w") as f:
        f.write("\n".join(failures) + "\n")
    print("failures listed in %s/failures.txt, logs per file in %s/" % (args.out, args.out))


if __name__ == "__main__":
    main()
