"""The N-body step of bench/bench_nbody.c in numpy, the same vectorised formulation in float32:
dx = X[None,:,:] - X[:,None,:]; d2 = sum(dx^2, -1) + 1e-4; F = sum(dx / d2^1.5, 1); V += F*dt;
X += V*dt. Run alone it prints the time per step: nbody_numpy.py [N] [REPS]."""
import sys
import time

import numpy as np

DT = np.float32(0.01)
EPS = np.float32(1e-4)


def step(x, v):
  dx = x[None, :, :] - x[:, None, :]
  d2 = np.sum(dx * dx, axis=-1, keepdims=True) + EPS
  f = np.sum(dx / d2 ** np.float32(1.5), axis=1)
  v = v + f * DT
  x = x + v * DT
  return x, v


def time_step(n=4096, reps=3):
  """(median, best) seconds per step, after one warm-up step."""
  rng = np.random.default_rng(0)
  x = rng.random((n, 3), dtype=np.float32)
  v = np.zeros((n, 3), dtype=np.float32)
  x, v = step(x, v)
  times = []
  for _ in range(reps):
    t0 = time.perf_counter()
    x, v = step(x, v)
    times.append(time.perf_counter() - t0)
  assert x.dtype == np.float32 and v.dtype == np.float32
  return float(np.median(times)), float(np.min(times))


if __name__ == "__main__":
  n = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
  reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
  med, best = time_step(n, reps)
  print(f"nbody numpy N={n}: {1e3 * med:.1f} ms/step (best {1e3 * best:.1f})")
