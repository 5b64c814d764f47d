"""Everyday array ops on 1024^2 float32 (and an NCHW batch) against numpy, measured in this same
process: the default frit.jit and the eager op, each checked against numpy's values. A scan for
performance cliffs on the paths Python users take (a column sum was 40x slower than numpy until
the fifteenth session; docs/benchmarks.md). Prints JSON lines like bench_math.py; bench/run
merges them. Usage: bench_ops.py [NAME...] (names containing one of these run; none: all)."""
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
import frit  # noqa: E402
from bench_sort import emit, run_selected, times  # noqa: E402 - (median, best) ms of fn()

REPS = int(os.environ.get("FRIT_BENCH_REPS", "0")) or 9
_rng = np.random.default_rng(0)
X = _rng.standard_normal((1024, 1024)).astype(np.float32)
Y = _rng.standard_normal((1024, 1024)).astype(np.float32)
X4 = _rng.standard_normal((32, 64, 28, 28)).astype(np.float32)

# name: (f(module, a, b), a, b); f is called with numpy or frit as the module
OPS = {
    "add": (lambda m, a, b: a + b, X, Y),
    "where": (lambda m, a, b: m.where(a > 0, a, b), X, Y),
    "clip": (lambda m, a, b: m.clip(a, -0.5, 0.5), X, Y),
    "sum_axis0": (lambda m, a, b: a.sum(axis=0), X, Y),
    "sum_axis1": (lambda m, a, b: a.sum(axis=1), X, Y),
    "max_axis0": (lambda m, a, b: a.max(axis=0), X, Y),
    "max_all": (lambda m, a, b: a.max(), X, Y),
    "argmax_all": (lambda m, a, b: m.argmax(a), X, Y),
    "argmax_axis0": (lambda m, a, b: m.argmax(a, axis=0), X, Y),
    "argmax_axis1": (lambda m, a, b: m.argmax(a, axis=1), X, Y),
    "var_axis0": (lambda m, a, b: a.var(axis=0), X, Y),
    "mean_center_axis0": (lambda m, a, b: a - a.mean(axis=0, keepdims=True), X, Y),
    "softmax_axis1": (lambda m, a, b: m.exp(a - a.max(axis=1, keepdims=True)) /
                      m.exp(a - a.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True), X, Y),
    "cumsum_axis1": (lambda m, a, b: m.cumsum(a, axis=1), X, Y),
    "matvec": (lambda m, a, b: a @ b[0], X, Y),
    "vecmat": (lambda m, a, b: b[0] @ a, X, Y),
    "aT_at_a": (lambda m, a, b: a.T @ a, X, Y),
    "arctan2": (lambda m, a, b: m.arctan2(a, b), X, Y),
    "hypot": (lambda m, a, b: m.hypot(a, b), X, Y),
    "sort_axis1": (lambda m, a, b: m.sort(a, axis=1), X, Y),
    "nchw_max_channels": (lambda m, a, b: a.max(axis=1), X4, None),
    "nchw_batchnorm_stats": (lambda m, a, b: a.var(axis=(0, 2, 3)), X4, None),
}


def bench(name, f, a, b):
    ref = f(np, a, b)
    fa, fb = frit.asarray(a), None if b is None else frit.asarray(b)
    j = frit.jit(lambda p, q: f(frit, p, q)) if b is not None else frit.jit(lambda p: f(frit, p, None))
    call = (lambda: j(fa, fb)) if b is not None else (lambda: j(fa))
    check = lambda r: bool(np.allclose(np.asarray(r), ref, rtol=1e-3, atol=1e-3, equal_nan=True))  # noqa: E731
    ok = check(call()) and check(f(frit, fa, fb))
    tn = times(lambda: f(np, a, b), warmup=2, reps=REPS)
    for path, fn in (("jit", lambda: np.asarray(call())), ("eager", lambda: np.asarray(f(frit, fa, fb)))):
        emit("ops_%s_%s" % (name, path), times(fn, warmup=2, reps=REPS), "numpy %s (same run)" % np.__version__,
             tn, ok)

if __name__ == "__main__":
    run_selected([("ops_" + name, (lambda a: lambda: bench(*a))((name,) + case)) for name, case in OPS.items()],
                 sys.argv[1:])
