"""The paths Python users take: each tensor workload of the C benchmarks run from Python eagerly
and under `frit.jit` with default options (symbolic shapes), and with dynamic=False for
reference, against numpy in this same process (bench/run starts it with the OpenBLAS variables
unset, so numpy's BLAS picks its best kernels; frit itself uses no BLAS). Prints JSON lines
{"bench": "<workload>_<path>", "value", "unit", "peer", "peer_value", ...}; higher-is-better
units are rates (GFLOP/s, GB/s), the others milliseconds. Usage: bench_paths.py [NAME...]"""
import json
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))
import frit  # noqa: E402
import nbody_numpy  # noqa: E402
from blas_info import blas_note  # noqa: E402

REPS = int(os.environ.get("FRIT_BENCH_REPS", "0")) or 7


def timed(fn, reps=REPS):
    """(median, best, first) seconds; the first call (compiles included) is timed apart."""
    t0 = time.perf_counter()
    r = fn()
    np.asarray(r[0] if isinstance(r, tuple) else r)
    first = time.perf_counter() - t0
    if first > 1.0:
        reps = min(reps, 3)
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        r = fn()
        np.asarray(r[0] if isinstance(r, tuple) else r)  # eager results are realised by the read
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts)), float(np.min(ts)), first


def report(name, unit, work, frit_fns, peer_name, peer_fn, check, **extra):
    """work: units of work per call (FLOP, bytes); None reports milliseconds."""
    tp = timed(peer_fn)

    def val(t):
        return round(work / t / 1e9, 4) if work else round(1e3 * t, 4)
    ref = peer_fn()
    for path, fn in frit_fns.items():
        try:
            t = timed(fn)
            got = fn()
            ok = bool(check(got, ref))
        except Exception as e:  # one path failing leaves the others measured
            print(json.dumps({"bench": "%s_%s" % (name, path), "value": None, "unit": unit, "ok": False,
                              "error": "%s: %s" % (type(e).__name__, str(e)[:300])}), flush=True)
            continue
        rec = {"bench": "%s_%s" % (name, path), "value": val(t[0]), "unit": unit, "peer": peer_name,
               "peer_value": val(tp[0]), "best_value": val(t[1]), "peer_best_value": val(tp[1]),
               "first_call_ms": round(1e3 * t[2], 1), "ok": ok,
               "threads": int(os.environ.get("FRIT_THREADS") or os.cpu_count() or 1)}
        rec.update(extra)
        print(json.dumps(rec), flush=True)


def close(rtol, atol=0.0):
    def check(got, ref):
        got = got if isinstance(got, tuple) else (got,)
        ref = ref if isinstance(ref, tuple) else (ref,)
        return all(np.allclose(np.asarray(g), r, rtol=rtol, atol=atol) for g, r in zip(got, ref))
    return check


def paths(f):
    return {"eager": f, "jit": frit.jit(f), "jit_static": frit.jit(f, dynamic=False)}


def bench_matmul():
    rng = np.random.default_rng(0)
    for n in (1024,):
        a = rng.random((n, n), dtype=np.float32) - 0.5
        b = rng.random((n, n), dtype=np.float32) - 0.5
        fa, fb = frit.asarray(a), frit.asarray(b)
        fns = {k: (lambda g: lambda: g(fa, fb))(g) for k, g in paths(lambda x, y: x @ y).items()}
        report("matmul_%d" % n, "GFLOP/s", 2 * n ** 3, fns, "numpy.matmul (%s)" % blas_note(),
               lambda: a @ b, close(1e-3, 1e-3))


def bench_conv():
    rng = np.random.default_rng(0)
    x = rng.random((32, 64, 56, 56), dtype=np.float32) - 0.5
    w = rng.random((64, 64, 3, 3), dtype=np.float32) - 0.5
    from numpy_tensor import conv_im2col
    fx, fw = frit.asarray(x), frit.asarray(w)
    fns = {k: (lambda g: lambda: g(fx, fw))(g)
           for k, g in paths(lambda x, w: frit.conv2d(x, w, padding=(1, 1))).items()}
    report("conv2d_32x64x56", "ms", None, fns, "numpy im2col + matmul (%s)" % blas_note(),
           lambda: conv_im2col(x, w), close(1e-3, 1e-3))


def bench_softmax():
    rng = np.random.default_rng(0)
    x = rng.random((4096, 4096), dtype=np.float32) * 8 - 4
    fx = frit.asarray(x)

    def ref():
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    fns = {k: (lambda g: lambda: g(fx))(g) for k, g in paths(lambda t: frit.nn.softmax(t, axis=-1)).items()}
    report("softmax_4096", "ms", None, fns, "numpy %s" % np.__version__, ref, close(1e-4, 1e-6))


def bench_reduce():
    x = np.random.default_rng(0).random(1 << 24, dtype=np.float32)
    fx = frit.asarray(x)
    fns = {k: (lambda g: lambda: g(fx))(g) for k, g in paths(lambda t: frit.sum(t)).items()}
    report("reduce_sum_16m", "GB/s", 4 << 24, fns, "numpy %s" % np.__version__, lambda: np.sum(x),
           close(1e-5))


def chain(t, m):
    t = m.maximum((t * 1.5 + 0.25) * 0.5 - 0.5, 0.0)
    return m.exp((t + 0.1) * -2.0)


def bench_elementwise():
    x = np.random.default_rng(0).random(1 << 24, dtype=np.float32)
    fx = frit.asarray(x)
    fns = {k: (lambda g: lambda: g(fx))(g) for k, g in paths(lambda t: chain(t, frit)).items()}
    report("elementwise_chain8_exp", "GB/s", 8 << 24, fns, "numpy %s" % np.__version__,
           lambda: chain(x, np), close(1e-5, 1e-6), note="bytes read + written per second")


def bench_nbody():
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    import nbody_explicit as ex
    n = 4096
    xn, vn = ex.make_input(n)
    x, v = frit.asarray(xn), frit.asarray(vn)
    fns = {k: (lambda g: lambda: g(x, v))(g) for k, g in paths(ex.step_vectorised).items()}
    ex_fns = {"explicit_jit": frit.jit(ex.step_explicit), "explicit_jit_static": ex.explicit}
    fns.update({k: (lambda g: lambda: g(x, v))(g) for k, g in ex_fns.items()})
    report("nbody_%d" % n, "ms", None, fns, "numpy %s (vectorised)" % np.__version__,
           lambda: nbody_numpy.step(xn, vn), close(1e-3, 1e-4), note="one step")


BENCHES = {"matmul": bench_matmul, "conv": bench_conv, "softmax": bench_softmax,
           "reduce": bench_reduce, "elementwise": bench_elementwise, "nbody": bench_nbody}

if __name__ == "__main__":
    want = sys.argv[1:]
    for name, fn in BENCHES.items():
        if want and not any(w in name or w in "paths" for w in want):
            continue
        try:
            fn()
        except Exception as e:
            print(json.dumps({"bench": name + "_paths", "value": None, "unit": None, "ok": False,
                              "error": "%s: %s" % (type(e).__name__, str(e)[:300])}), flush=True)
