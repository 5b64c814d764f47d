"""The tensor workloads frit is compared on against other frameworks (bench/bench_frameworks.py
and bench/peers/frameworks.py): their inputs, their numpy reference results and tolerances, and
the one timer both sides use, so frit and each framework are timed and checked the same way.
numpy only: the framework processes import it without frit."""
import os
import time

import numpy as np

REPS = int(os.environ.get("FRIT_BENCH_REPS", "0")) or 7
DT = np.float32(0.01)
EPS = np.float32(1e-4)


def threads():
    """The thread count frit runs on, which every framework is given too."""
    return int(os.environ.get("FRIT_THREADS") or os.cpu_count() or 1)


def timed(fn, sync, reps=REPS):
    """(median, best, first) seconds of fn(); sync(result) waits for the result to exist. The
    first call (tracing and compiling included) is timed apart; one more untimed call warms
    caches and allocators; a workload whose warm call takes over a second gets 3 timed runs."""
    t0 = time.perf_counter()
    sync(fn())
    first = time.perf_counter() - t0
    sync(fn())
    ts = []
    while len(ts) < reps:
        t0 = time.perf_counter()
        sync(fn())
        ts.append(time.perf_counter() - t0)
        if ts[0] > 1.0:
            reps = min(reps, 3)
    return float(np.median(ts)), float(np.min(ts)), first


def chain_np(t, with_exp):
    t = np.maximum((t * np.float32(1.5) + np.float32(0.25)) * np.float32(0.5) - np.float32(0.5), np.float32(0))
    t = (t + np.float32(0.1)) * np.float32(-2.0)
    return np.exp(t) if with_exp else np.minimum(t, np.float32(-0.5))


def softmax_np(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def conv_np(x, w):
    """conv2d, stride 1, padding 1, NCHW / OIHW, in float64 (the oracle, computed once)."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))  # n c h w kh kw
    cols = win.transpose(0, 2, 3, 1, 4, 5).reshape(n * h * wd, c * kh * kw)
    out = cols @ w.reshape(o, c * kh * kw).T.astype(np.float64)
    return out.reshape(n, h, wd, o).transpose(0, 3, 1, 2)


def nbody_np(x, v):
    """One step of bench/bench_nbody.c's softened gravity, in float64 (the oracle)."""
    x = x.astype(np.float64)
    dx = x[None, :, :] - x[:, None, :]
    d2 = np.sum(dx * dx, axis=-1, keepdims=True) + float(EPS)
    v2 = v + np.sum(dx / d2 ** 1.5, axis=1) * float(DT)
    return x + v2 * float(DT), v2


class Workload:
    """name; unit and work (units of work per call: FLOP or bytes; None: the unit is ms);
    inputs(): the float32 arrays; ref(*inputs): the expected outputs (a tuple); rtol/atol."""

    def __init__(self, name, unit, work, inputs, ref, rtol, atol, what):
        self.name, self.unit, self.work, self.inputs, self.ref = name, unit, work, inputs, ref
        self.rtol, self.atol, self.what = rtol, atol, what

    def value(self, seconds):
        return round(self.work / seconds / 1e9, 4) if self.work else round(1e3 * seconds, 4)

    def check(self, got, ref):
        """(ok, max abs error over the outputs)."""
        got = got if isinstance(got, (tuple, list)) else (got,)
        ok, err = len(got) == len(ref), 0.0
        for g, r in zip(got, ref):
            g = np.asarray(g, dtype=np.float64)
            if g.shape != r.shape:
                return False, None
            ok = ok and bool(np.allclose(g, r, rtol=self.rtol, atol=self.atol))
            err = max(err, float(np.max(np.abs(g - r))) if g.size else 0.0)
        return ok, err


def _rng():
    return np.random.default_rng(0)


def _matmul_in():
    rng = _rng()
    return (rng.random((1024, 1024), dtype=np.float32) - 0.5, rng.random((1024, 1024), dtype=np.float32) - 0.5)


def _conv_in():
    rng = _rng()
    return (rng.random((32, 64, 56, 56), dtype=np.float32) - 0.5, rng.random((64, 64, 3, 3), dtype=np.float32) - 0.5)


def _vec_in():
    return (_rng().random(1 << 24, dtype=np.float32),)


def _nbody_in(n):
    return lambda: (_rng().random((n, 3), dtype=np.float32), np.zeros((n, 3), np.float32))


WORKLOADS = [
    Workload("matmul_1024", "GFLOP/s", 2 * 1024 ** 3, _matmul_in,
             lambda a, b: (a.astype(np.float64) @ b.astype(np.float64),), 1e-3, 1e-3, "1024x1024 f32 matmul"),
    Workload("conv2d_32x64x56", "ms", None, _conv_in, lambda x, w: (conv_np(x, w),), 1e-3, 1e-3,
             "conv2d 32x64x56x56 * 64x64x3x3, stride 1, padding 1"),
    Workload("softmax_4096", "ms", None, lambda: (_rng().random((4096, 4096), dtype=np.float32) * 8 - 4,),
             lambda x: (softmax_np(x.astype(np.float64)),), 1e-4, 1e-6, "softmax over the last axis of 4096x4096 f32"),
    Workload("reduce_sum_16m", "GB/s", 4 << 24, _vec_in, lambda x: (np.sum(x, dtype=np.float64),), 1e-5, 0.0,
             "sum of 16M f32 to a scalar"),
    Workload("elementwise_chain8_exp", "GB/s", 8 << 24, _vec_in, lambda x: (chain_np(x.astype(np.float64), True),),
             1e-5, 1e-6, "8 fused elementwise ops ending in exp on 16M f32 (bytes read + written)"),
    Workload("elementwise_chain8", "GB/s", 8 << 24, _vec_in, lambda x: (chain_np(x.astype(np.float64), False),),
             1e-5, 1e-6, "the same chain ending in min (no transcendental)"),
    Workload("nbody_1024", "ms", None, _nbody_in(1024), nbody_np, 1e-3, 1e-4, "one N-body step, N = 1024"),
    Workload("nbody_4096", "ms", None, _nbody_in(4096), nbody_np, 1e-3, 1e-4, "one N-body step, N = 4096"),
]
BY_NAME = {w.name: w for w in WORKLOADS}
