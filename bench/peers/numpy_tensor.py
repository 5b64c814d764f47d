"""numpy peers of frit's tensor benchmarks (bench/bench_{reduce,nbody,matmul,softmax,conv}.c), timed in
the same bench/run invocation. Prints one JSON object per benchmark: {"bench", "value", "unit",
"n", "peer", "note", "best_value"}, in the unit the frit benchmark reports (value: the median
run, best_value: the fastest). Matmul and conv use the OpenBLAS
that numpy's wheel bundles (numpy.show_config() names it); elementwise numpy is one thread.
Usage: numpy_tensor.py [BENCH...]   (no name: all; names it does not know are ignored)
"""
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nbody_numpy  # noqa: E402
from blas_info import blas_note  # noqa: E402

REPS = int(os.environ.get("FRIT_BENCH_REPS", "0")) or None


def blas_name():
  try:
    cfg = np.show_config(mode="dicts")
    b = cfg["Build Dependencies"]["blas"]
    return f"{b['name']} {b.get('version', '')}".strip()
  except Exception:  # pragma: no cover - old numpy
    return "numpy's BLAS"


def best_median(fn, warmup, reps):
  for _ in range(warmup):
    fn()
  t = []
  for _ in range(reps):
    t0 = time.perf_counter()
    fn()
    t.append(time.perf_counter() - t0)
  return float(np.median(t)), float(np.min(t))


def emit(bench, value, unit, peer, **extra):
  extra = {k: float(f"{v:.6g}") if isinstance(v, float) else v for k, v in extra.items()}
  print(json.dumps({"bench": bench, "value": float(f"{value:.6g}"), "unit": unit, "peer": peer, **extra}),
        flush=True)


def nbody():
  med, best = nbody_numpy.time_step(4096, REPS or 3)
  emit("nbody_step_4096", 1e3 * med, "ms/step", f"numpy {np.__version__}", n=4096, best_value=1e3 * best,
       note="same formulation, float32, materialises (N, N, 3)")


def matmul():
  rng = np.random.default_rng(0)
  a = rng.random((1024, 1024), dtype=np.float32) - 0.5
  b = rng.random((1024, 1024), dtype=np.float32) - 0.5
  med, best = best_median(lambda: np.matmul(a, b), 3, REPS or 10)
  emit("matmul_1024", 2 * 1024 ** 3 / med / 1e9, "GFLOP/s", f"OpenBLAS via numpy {np.__version__}",
       n=1024, best_value=2 * 1024 ** 3 / best / 1e9, note=f"numpy.matmul on {blas_name()}: {blas_note()}")


def softmax_np(x):
  e = np.exp(x - x.max(axis=-1, keepdims=True))
  return e / e.sum(axis=-1, keepdims=True)


def softmax():
  rng = np.random.default_rng(0)
  x = rng.random((4096, 4096), dtype=np.float32) * 8 - 4
  med, best = best_median(lambda: softmax_np(x), 1, REPS or 5)
  emit("softmax_4096", 1e3 * med, "ms", f"numpy {np.__version__}", n=4096, best_value=1e3 * best,
       note="exp(x - max) / sum, float32, one thread")


def conv_im2col(x, w):
  n, c, h, wd = x.shape
  o, _, kh, kw = w.shape
  xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
  win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))  # n c h w kh kw
  cols = np.ascontiguousarray(win.transpose(0, 2, 3, 1, 4, 5)).reshape(n * h * wd, c * kh * kw)
  out = cols @ w.reshape(o, c * kh * kw).T  # (n h w, o)
  return np.ascontiguousarray(out.reshape(n, h, wd, o).transpose(0, 3, 1, 2))


def conv():
  rng = np.random.default_rng(0)
  x = rng.random((32, 64, 56, 56), dtype=np.float32) - 0.5
  w = rng.random((64, 64, 3, 3), dtype=np.float32) - 0.5
  # the im2col formulation is right: one output against the direct sum
  y = conv_im2col(x, w)
  ref = sum(float(np.sum(np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))[1, :, 10 + i, 20 + j] * w[5, :, i, j]))
            for i in range(3) for j in range(3))
  assert abs(y[1, 5, 10, 20] - ref) < 1e-3 * (1 + abs(ref)), (y[1, 5, 10, 20], ref)
  med, best = best_median(lambda: conv_im2col(x, w), 1, REPS or 3)
  emit("conv2d_32x64x56x56", 1e3 * med, "ms", f"numpy {np.__version__} im2col + OpenBLAS", n=32,
       best_value=1e3 * best,
       note=f"pad + sliding_window_view im2col + matmul on {blas_name()}: {blas_note()}")


def reduce_sum():
  # the data of bench/bench_reduce.c; numpy sums float32 pairwise (blocks of 128, 8 accumulators)
  n = 1 << 24
  x = ((np.arange(n, dtype=np.uint64) * np.uint64(2654435761)) % np.uint64(1000003)).astype(np.float32)
  x /= np.float32(1000003.0)
  med, best = best_median(lambda: x.sum(), 3, REPS or 20)
  ref = float(np.sum(x, dtype=np.float64))
  emit("reduce_sum_16m", 4 * n / med / 1e9, "GB/s", f"numpy {np.__version__}", n=n, best_value=4 * n / best / 1e9,
       rel_err=abs(float(x.sum()) - ref) / ref, note="numpy.sum of float32 (pairwise), one thread")


BENCHES = {"reduce_sum_16m": reduce_sum, "nbody_step_4096": nbody, "matmul_1024": matmul, "softmax_4096": softmax,
           "conv2d_32x64x56x56": conv}

if __name__ == "__main__":
  names = sys.argv[1:] or list(BENCHES)
  for name in names:
    if name in BENCHES:
      try:
        BENCHES[name]()
      except Exception as e:  # one failing peer leaves the others measured
        print(f"numpy_tensor.py: {name}: {e!r}", file=sys.stderr)
