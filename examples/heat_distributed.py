"""The heat equation on a periodic grid split by rows across the ranks of an MPI world: each
rank holds a block of rows, and each step exchanges one halo row with either neighbour (through
frit.distributed.Sharded.roll) inside one compiled program.

    mpirun -n 4 python examples/heat_distributed.py            # add --allow-run-as-root as root
    python examples/heat_distributed.py                         # one rank, the same numbers

--check also runs the whole grid in one process on rank 0 and compares bit for bit."""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import frit  # noqa: E402
import frit.distributed as dist  # noqa: E402


def step_sharded(u, alpha=0.2):
    s = dist.Sharded(u, 0)
    lap = s.roll(1, 0) + s.roll(-1, 0) + s.roll(1, 1) + s.roll(-1, 1) - 4 * s
    return (s + alpha * lap).local


def step_whole(u, alpha=0.2):
    lap = frit.roll(u, 1, 0) + frit.roll(u, -1, 0) + frit.roll(u, 1, 1) + frit.roll(u, -1, 1) - 4 * u
    return u + alpha * lap


def initial(n, m, dtype):
    y, x = np.mgrid[0:n, 0:m]
    return (np.exp(-((y - n / 2) ** 2 + (x - m / 3) ** 2) / (0.02 * n * m))).astype(dtype)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=512)
    ap.add_argument("--cols", type=int, default=512)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    dist.init()
    r, P = dist.rank(), dist.size()
    u0 = initial(a.rows, a.cols, a.dtype)
    u = dist.Sharded.from_global(frit.asarray(u0), 0).local
    step = frit.jit(step_sharded)
    u = step(u)  # compile
    np.asarray(u)
    t = time.perf_counter()
    for _ in range(a.steps - 1):
        u = step(u)
    np.asarray(u)
    dt = time.perf_counter() - t
    total = float(np.asarray(dist.Sharded(u, 0).sum()))
    grid = np.asarray(dist.all_gather(u, 0))
    if r == 0:
        print("%d rank(s), grid %dx%d %s, %d steps: %.3f ms/step, heat %.6f (start %.6f)"
              % (P, a.rows, a.cols, a.dtype, a.steps, 1e3 * dt / max(a.steps - 1, 1), total,
                 float(u0.astype(np.float64).sum())))
        if a.check:
            w, f = frit.asarray(u0), frit.jit(step_whole)
            for _ in range(a.steps):
                w = f(w)
            same = np.array_equal(grid, np.asarray(w))
            print("one process: %s" % ("bitwise equal" if same else "DIFFERENT"))
            if not same:
                sys.exit(1)


if __name__ == "__main__":
    main()
