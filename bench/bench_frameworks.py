"""frit's default path (`frit.jit` with default options: symbolic shapes) against the frameworks a
user would pick instead: numpy, torch eager, torch.compile, jax.jit, numba (numba: outputs
preallocated, as loop-kernel code usually has them; numba_fresh: a new output array per call, as
frit and the array libraries return), taichi and warp (preallocated outputs), on
the tensor workloads of bench/peers/workloads.py (matmul, conv2d, softmax, sum, the elementwise
chains, n-body at N = 1024 and 4096). frit is timed here, again right before each framework runs
in its own process (bench/peers/frameworks.py), on the same thread count (FRIT_THREADS; warp's
CPU kernels run on one thread whatever it is: its peer_note says so), the same inputs,
with the same timer (median of the timed runs; the first call, tracing and compiling included,
reported apart as first_call_ms / peer_first_call_ms, with cold caches on both sides) and checked against the same float64 numpy
oracle ("ok" for frit, "peer_ok" for the framework: a framework that computes something else is
caught). Prints one JSON line per (workload, framework): {"bench": "<workload>_jit_vs_<framework>",
"value": frit's, "unit", "peer", "peer_value", "peer_note", ...}; bench/peers/merge.py adds "ratio"
(> 1: frit is faster). A framework that is not installed gives peer_value null and says why.
Usage: bench_frameworks.py [NAME...]: only the workloads or frameworks whose name contains a NAME
(a NAME matching neither, other than "frameworks", selects nothing). FRIT_BENCH_FRAMEWORKS=a,b
limits the frameworks; FRIT_BENCH_NO_PEER=1 skips them all (nothing is printed)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS = os.path.join(ROOT, "bench", "peers")
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, PEERS)
from frameworks import FRAMEWORKS  # noqa: E402
from workloads import BY_NAME, WORKLOADS, threads, timed  # noqa: E402


def frit_fn(name):
    """frit's version of a workload, as a Python user writes it (the numpy-like API)."""
    import frit
    from workloads import DT, EPS
    if name.startswith("matmul"):
        return lambda a, b: a @ b
    if name.startswith("conv2d"):
        return lambda x, w: frit.conv2d(x, w, padding=(1, 1))
    if name.startswith("softmax"):
        return lambda x: frit.nn.softmax(x, axis=-1)
    if name.startswith("reduce"):
        return lambda x: frit.sum(x)
    if name.startswith("elementwise"):
        e = name.endswith("exp")

        def chain(t):
            t = frit.maximum((t * 1.5 + 0.25) * 0.5 - 0.5, 0.0)
            t = (t + 0.1) * -2.0
            return frit.exp(t) if e else frit.minimum(t, -0.5)
        return chain
    if name.startswith("nbody"):
        def step(x, v):
            dx = x[None, :, :] - x[:, None, :]
            d2 = frit.sum(dx * dx, axis=-1, keepdims=True) + float(EPS)
            f = frit.sum(dx / d2 ** 1.5, axis=1)
            v2 = v + f * float(DT)
            return x + v2 * float(DT), v2
        return step
    raise KeyError(name)


class FritRun:
    """frit's default jit on one workload; measured again right before each framework's process
    (the machine is shared: each ratio compares figures taken minutes apart at most), the first
    call (trace and compile) only once."""

    def __init__(self, w):
        import frit
        import numpy as np
        self.w, self.np, self.ins = w, np, w.inputs()
        self.args = [frit.asarray(a) for a in self.ins]
        self.f = frit.jit(frit_fn(w.name))  # the default options: what a user gets
        self.first = None

    def run(self):
        return self.f(*self.args)

    def sync(self, r):  # jit outputs are realised by reading them (zero-copy)
        for a in (r if isinstance(r, tuple) else (r,)):
            self.np.asarray(a)

    def measure(self):
        med, best, first = timed(self.run, self.sync)
        self.first = first if self.first is None else self.first
        got = self.run()
        got = tuple(self.np.asarray(a) for a in (got if isinstance(got, tuple) else (got,)))
        ok, err = self.w.check(got, self.w.ref(*self.ins))
        return {"median_s": med, "best_s": best, "first_s": self.first, "ok": ok, "max_abs_err": err}


def select(args):
    """(workloads, frameworks) that the NAMEs pick; no NAME (or "frameworks"): all."""
    allowed = [f for f in os.environ.get("FRIT_BENCH_FRAMEWORKS", ",".join(FRAMEWORKS)).split(",") if f]
    args = [a for a in args if a not in ("frameworks", "bench_frameworks")]
    if not args:
        return [w.name for w in WORKLOADS], allowed
    ws = [w.name for w in WORKLOADS if any(a in w.name for a in args)]
    fs = [f for f in allowed if any(a in f for a in args)]
    if ws and not fs:
        return ws, allowed
    if fs and not ws:
        return [w.name for w in WORKLOADS], fs
    return ws, fs


def main():
    if sys.argv[1:2] == ["--selects"]:  # for bench/run: does NAME pick anything here (status 0)?
        ws, fs = select(sys.argv[2:])
        sys.exit(0 if ws and fs else 1)
    names, fws = select(sys.argv[1:])
    if not names or not fws or os.environ.get("FRIT_BENCH_NO_PEER"):
        return
    T = threads()
    # cold caches on every side, so the first calls are comparable: frit's compiled kernels,
    # inductor's and warp's kernel caches in fresh directories (numba and taichi are told not to
    # cache; jax keeps no persistent cache unless asked)
    cold = tempfile.mkdtemp(prefix="frit-bench-frameworks-")
    os.environ["FRIT_CACHE_DIR"] = os.path.join(cold, "frit")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(cold, "inductor")
    os.environ["FRIT_PEER_CACHE_DIR"] = cold
    try:
        run_all(names, fws, T)
    finally:
        shutil.rmtree(cold, ignore_errors=True)


def run_all(names, fws, T):
    runs = {}
    for fw in fws:
        mine = {}
        for n in names:
            print("bench_frameworks: frit %s" % n, file=sys.stderr, flush=True)
            try:
                if n not in runs:
                    runs[n] = FritRun(BY_NAME[n])
                mine[n] = runs[n].measure()
            except Exception as e:
                mine[n] = {"error": "%s: %s" % (type(e).__name__, str(e)[:300])}
        print("bench_frameworks: %s" % fw, file=sys.stderr, flush=True)
        peer = {}
        try:
            p = subprocess.run([sys.executable, os.path.join(PEERS, "frameworks.py"), fw, *names],
                               stdout=subprocess.PIPE, text=True, timeout=1800)
            for line in p.stdout.splitlines():
                if line.startswith("{"):
                    r = json.loads(line)
                    peer[r["workload"]] = r
            died = "the %s process exited with status %d" % (fw, p.returncode) if p.returncode else None
        except subprocess.TimeoutExpired:
            died = "the %s process took over 30 min" % fw
        for n in names:
            emit(BY_NAME[n], fw, mine[n], peer.get(n) or {"error": died or "no result"}, T)


def emit(w, fw, m, p, T):
    rec = {"bench": "%s_jit_vs_%s" % (w.name, fw), "value": w.value(m["median_s"]) if "median_s" in m else None,
           "unit": w.unit, "peer": p.get("peer", fw), "peer_value": None, "threads": T, "path": "frit.jit default"}
    if "median_s" in m:
        rec.update(best_value=w.value(m["best_s"]), first_call_ms=round(1e3 * m["first_s"], 1), ok=m["ok"],
                   max_abs_err=m["max_abs_err"])
    else:
        rec["error"] = m.get("error")
    if "median_s" in p:
        rec.update(peer_value=w.value(p["median_s"]), peer_best_value=w.value(p["best_s"]),
                   peer_first_call_ms=round(1e3 * p["first_s"], 1), peer_ok=p["ok"], peer_max_abs_err=p["max_abs_err"],
                   peer_note=p.get("note", ""))
    else:
        rec["peer_note"] = p.get("skipped") or "failed: %s" % p.get("error")
    print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
