"""frit.profile, FRIT_PROFILE=trace.json and `frit profile`: the trace is valid Chrome trace JSON
whose kernel events carry bytes and FLOPs equal to the counts worked out here by hand, the user's
own file:line, and durations that fit in the wall time measured around the run."""
import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import frit

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.path.join(ROOT, "build", "frit")


def _env(**kw):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(ROOT, "python")
    env.update(kw)
    return env


def test_elementwise_bytes_flops_site(tmp_path):
    n = 4096
    x = frit.asarray(np.arange(n, dtype=np.float32))
    y = frit.asarray(np.full(n, 3.0, np.float32))
    with frit.profile() as p:
        t0 = time.perf_counter()
        line = sys._getframe().f_lineno + 1
        z = x * y
        frit.realize(z)
        wall_us = (time.perf_counter() - t0) * 1e6
    np.testing.assert_array_equal(np.asarray(z), np.arange(n, dtype=np.float32) * 3)
    ks = p.kernels()
    assert len(ks) == 1
    a = ks[0]["args"]
    # x * y over n float32: both inputs read once, the output written once, one multiply each
    assert (a["bytes_read"], a["bytes_written"], a["flops"]) == (2 * n * 4, n * 4, n)
    assert a["ops"] == "mul"
    assert a["site"] == "%s:%d" % (__file__, line)
    assert 0 < ks[0]["dur"] <= wall_us
    assert a["gbps"] == pytest.approx(3 * n * 4 / (ks[0]["dur"] * 1e-6) / 1e9, rel=1e-2)
    # the file is valid JSON with complete events
    path = tmp_path / "trace.json"
    p.save(str(path))
    tr = json.loads(path.read_text())
    for e in tr["traceEvents"]:
        assert e["ph"] in ("X", "M") and isinstance(e["pid"], int) and isinstance(e["tid"], int)
        if e["ph"] == "X":
            assert e["dur"] >= 0 and e["ts"] >= 0
    assert tr["otherData"]["copy_gbps"] > 0 and tr["otherData"]["fma_gflops"] > 0


def test_matmul_flops_and_compile_passes():
    m, k, n = 6, 20, 7
    a = frit.asarray(np.random.rand(m, k).astype(np.float32))
    b = frit.asarray(np.random.rand(k, n).astype(np.float32))
    with frit.profile() as p:
        line = sys._getframe().f_lineno + 1
        c = frit.tanh(a @ b) * 0.25  # a graph no other test compiles: its passes are on the trace
        frit.realize(c)
    # the matmul's transposed copy of b is the library's own node: it takes its consumer's line
    assert len(p.kernels()) >= 1
    assert {e["args"]["site"] for e in p.kernels()} == {"%s:%d" % (__file__, line)}
    flops = sum(e["args"]["flops"] for e in p.kernels())
    # 2*m*n*k for the matmul (a multiply and an add per term), then tanh and the scale per output
    assert flops == 2 * m * n * k + 2 * m * n
    names = {e["name"] for e in p.trace["traceEvents"] if e.get("cat") == "compile"}
    assert {"compile", "schedule", "codegen", "verify kernels"} <= names
    assert names & {"C compiler", "load cached code"}
    assert "compile passes" in p.table()


def test_table_and_cli_agree(tmp_path):
    x = frit.asarray(np.ones((64, 64), np.float32))
    frit.realize(frit.sum(x * x, axis=1))  # compiled before: the block times only runs
    with frit.profile() as p:
        t0 = time.perf_counter()
        for _ in range(3):
            frit.realize(frit.sum(x * x, axis=1))
        wall_us = (time.perf_counter() - t0) * 1e6
    durs = [e["dur"] for e in p.kernels()]
    assert all(d > 0 for d in durs) and sum(durs) <= wall_us
    t = p.table()
    kname = p.kernels()[0]["name"]
    row = [ln for ln in t.splitlines() if ln.startswith(kname)]
    assert len(row) == 1 and row[0].split()[1] == "3"  # three calls
    path = tmp_path / "run.json"
    p.save(str(path))
    out = subprocess.run([CLI, "profile", str(path)], capture_output=True, text=True, check=True).stdout
    assert out == t
    bad = tmp_path / "bad.json"
    bad.write_text('{"nothing": 1}')
    r = subprocess.run([CLI, "profile", str(bad)], capture_output=True, text=True)
    assert r.returncode != 0 and "traceEvents" in r.stderr


def test_raise_inside_still_saves(tmp_path):
    x = frit.asarray(np.ones(10, np.float32))
    with pytest.raises(ValueError):
        with frit.profile() as p:
            frit.realize(x + 2)
            raise ValueError("boom")
    assert len(p.kernels()) == 1
    p.save(str(tmp_path / "t.json"))
    json.loads((tmp_path / "t.json").read_text())


def test_env_json_and_table(tmp_path):
    out = tmp_path / "env.json"
    code = ("import numpy as np, frit\n"
            "x = frit.asarray(np.ones(100, np.float32))\n"
            "frit.realize(x * 2)\n")
    subprocess.run([sys.executable, "-c", code], env=_env(FRIT_PROFILE=str(out)), check=True)
    tr = json.loads(out.read_text())
    ks = [e for e in tr["traceEvents"] if e.get("cat") == "kernel"]
    assert len(ks) == 1 and ks[0]["args"]["site"] == "<string>:3"
    r = subprocess.run([sys.executable, "-c", code], env=_env(FRIT_PROFILE="1"), check=True,
                       capture_output=True, text=True)
    assert "frit profile:" in r.stderr  # the stderr table of FRIT_PROFILE=1 is kept


def test_site_cost_only_while_profiling():
    # sites are recorded only inside a profile: measure what they cost per lazy op
    x = frit.asarray(np.ones(8, np.float32))

    def build(reps):
        t0 = time.perf_counter()
        for _ in range(reps):
            y = x
            for _ in range(20):
                y = y + 1.0
        return (time.perf_counter() - t0) / (reps * 20)

    build(5)
    off = min(build(20) for _ in range(3))
    with frit.profile():
        on = min(build(20) for _ in range(3))
    print("lazy op: %.2f us without a profile, %.2f us while profiling" % (off * 1e6, on * 1e6))
    assert frit._profile.P.on is False


def test_machine_limits_keep_the_best_measurement(tmp_path):
    """Each process measures the machine limits once; the cache file keeps the best figures seen,
    so a measurement taken on a busy machine does not stay (a file of tiny figures is replaced by
    the new measurement), while better recorded figures than this process measures are kept."""
    env = _env(FRIT_CACHE_DIR=str(tmp_path))
    code = "import frit; print(*frit.machine_limits())"

    def limits():
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        return [float(v) for v in r.stdout.split()]

    bw, fl = limits()
    assert bw > 0 and fl > 0
    files = [f for f in os.listdir(tmp_path) if f.startswith("machine-")]
    assert len(files) == 1
    path = os.path.join(tmp_path, files[0])
    key = open(path).read().splitlines()[1]
    with open(path, "w") as f:
        f.write("0.001 0.001\n%s\n" % key)
    bw2, fl2 = limits()
    assert bw2 > 0.001 and fl2 > 0.001
    assert [float(v) for v in open(path).read().split("\n")[0].split()] == pytest.approx([bw2, fl2], rel=1e-5)
    with open(path, "w") as f:
        f.write("1e9 1e9\n%s\n" % key)
    assert limits() == [1e9, 1e9]
