"""Transcendental functions on 2^20 float32, each against numpy's ufunc measured in this same
process: frit.jit(f)(x) (the default jit) and the eager op, for exp, exp2, log, log2, sin, cos,
tan, tanh, x ** 2.7, atan, asin, sinh, cosh and atan2, and the float64 forms of most of them
(math_f64_*). frit's float ones (exp, exp2, log, log2,
tanh, sin, cos) are faithful, within 0.99, 0.91, 0.85, 0.83, 0.96, 0.76 and 0.74 ulp; the others
round correctly on all but a few of the 2^32 inputs (docs/codegen.md); numpy's SIMD ones are
within a few ulp. erf and GELU (0.5 x (1 + erf(x / sqrt 2)), frit.nn.functional.gelu) are
measured against torch.erf and torch's gelu on torch's two threads (numpy has neither); frit's
erf is within 0.79 ulp, torch's gelu trades accuracy for speed (up to ~9000 ulp where the result
is above 1e-3 in magnitude, the erf form ~470). Prints JSON lines like bench_sort.py;
bench/run merges them.
Usage: bench_math.py [NAME...] (names containing one of these run; none: all)."""
import json
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
import frit  # noqa: E402
from bench_sort import emit, run_selected, times  # noqa: E402 - (median, best) ms of fn()

REPS = int(os.environ.get("FRIT_BENCH_REPS", "0")) or 15
N = 1 << 20


def measure(name, f, x, ref, tol, peer, peer_fn):
    """frit.jit(f)(x) (the default jit) and the eager f on x, each checked against ref, and the
    peer's peer_fn() timed in this same process"""
    j, xa = frit.jit(f), frit.asarray(x)
    ok = all(bool(np.allclose(np.asarray(g()), ref, rtol=tol, atol=tol, equal_nan=True))
             for g in (lambda: j(x), lambda: f(xa)))
    tp = times(peer_fn, warmup=2, reps=REPS)
    for path, fn in (("jit", lambda: np.asarray(j(x))), ("eager", lambda: f(xa).numpy())):
        emit("math_%s_1m_%s" % (name, path), times(fn, warmup=2, reps=REPS), peer, tp, ok)


def bench(name, f, npf, positive=False, dtype=np.float32):
    rng = np.random.default_rng(0)
    x = rng.uniform(-10, 10, N).astype(dtype)
    if positive:
        x = np.abs(x) + dtype(0.1)
    # within a few ulp of numpy (which is itself within a few of the exact values)
    measure(name, f, x, npf(x), 1e-6 if dtype == np.float32 else 1e-13,
            "numpy %s (one thread, same run)" % np.__version__, lambda: npf(x))

P = np.float32(2.7)
BENCHES = [("exp", frit.exp, np.exp, False), ("exp2", frit.exp2, np.exp2, False), ("log", frit.log, np.log, True),
           ("log2", frit.log2, np.log2, True), ("sin", frit.sin, np.sin, False), ("cos", frit.cos, np.cos, False),
           ("tan", frit.tan, np.tan, False), ("tanh", frit.tanh, np.tanh, False),
           ("pow", lambda a: a ** 2.7, lambda a: a ** P, True), ("atan", frit.arctan, np.arctan, False),
           ("asin", lambda a: frit.arcsin(a * 0.1), lambda a: np.arcsin(a * np.float32(0.1)), False),
           ("sinh", frit.sinh, np.sinh, False), ("cosh", frit.cosh, np.cosh, False),
           ("atan2", lambda a: frit.arctan2(a, a[::-1] + 0.5), lambda a: np.arctan2(a, a[::-1] + np.float32(0.5)), False)]


def bench_torch(name, f, tf):
    """f on 2^20 float32 in [-4, 4] (where erf's pieces lie) against torch's tf, 2 threads each"""
    try:
        import torch
    except ImportError:
        print(json.dumps({"bench": "math_%s_1m" % name, "value": None, "unit": "ms", "ok": False,
                          "error": "torch is not installed: peer skipped"}), flush=True)
        return
    torch.set_num_threads(int(os.environ.get("FRIT_THREADS") or os.cpu_count() or 1))
    x = np.random.default_rng(0).uniform(-4, 4, N).astype(np.float32)
    xt = torch.from_numpy(x)
    measure(name, f, x, tf(xt.double()).numpy(), 1e-6, "torch %s (same run)" % torch.__version__,
            lambda: tf(xt))


# float64 (numpy's default dtype): frit's own exp, exp2, log, log2, tanh, sinh, cosh, atan, atan2,
# asin and acos (within 1 ulp, docs/codegen.md); sin and pow are libm's
BENCHES64 = [("f64_exp", frit.exp, np.exp, False), ("f64_exp2", frit.exp2, np.exp2, False),
             ("f64_log", frit.log, np.log, True), ("f64_log2", frit.log2, np.log2, True),
             ("f64_sin", frit.sin, np.sin, False), ("f64_tanh", frit.tanh, np.tanh, False),
             ("f64_sinh", frit.sinh, np.sinh, False), ("f64_cosh", frit.cosh, np.cosh, False),
             ("f64_atan", frit.arctan, np.arctan, False),
             ("f64_asin", lambda a: frit.arcsin(a * 0.1), lambda a: np.arcsin(a * 0.1), False),
             ("f64_acos", lambda a: frit.arccos(a * 0.1), lambda a: np.arccos(a * 0.1), False),
             ("f64_atan2", lambda a: frit.arctan2(a, a[::-1] + 0.5), lambda a: np.arctan2(a, a[::-1] + 0.5), False),
             ("f64_pow", lambda a: a ** 2.7, lambda a: a ** 2.7, True)]

TORCH_BENCHES = [("erf", frit.erf, lambda t: __import__("torch").erf(t)),
                 ("gelu", frit.nn.functional.gelu, lambda t: __import__("torch").nn.functional.gelu(t))]

if __name__ == "__main__":
    run_selected([("math_" + name, (lambda a: lambda: bench(*a))((name, f, npf, pos)))
                  for name, f, npf, pos in BENCHES]
                 + [("math_" + name, (lambda a: lambda: bench(*a, dtype=np.float64))((name, f, npf, pos)))
                    for name, f, npf, pos in BENCHES64]
                 + [("math_" + name, (lambda a: lambda: bench_torch(*a))((name, f, tf)))
                    for name, f, tf in TORCH_BENCHES], sys.argv[1:])
