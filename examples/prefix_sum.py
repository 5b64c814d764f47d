"""Inclusive prefix sum as a multi-pass program of explicit frit kernels: (1) each block scanned
sequentially by one kernel point, which also records the block's total; (2) an exclusive scan of
the block totals by a single point; (3) every element adds its block's offset. Checked against
np.cumsum. Usage: python examples/prefix_sum.py [--n N] [--block B]"""
import argparse
import functools
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import frit  # noqa: E402

BLOCK = 4096


def prefix_sum(x, block=BLOCK):
    """Inclusive scan of a 1-D array in int64 (x of any integer dtype); len(x) need not be a
    multiple of the block size."""
    n = x.shape[0]
    nb = max(1, -(-n // block))
    out = frit.empty((n,), dtype=frit.int64)
    sums = frit.empty((nb,), dtype=frit.int64)
    with frit.kernel(nb, name="scan_blocks") as b:          # pass 1: scan inside each block
        acc = frit.var(0, dtype=frit.int64)
        lo = b * block
        hi = frit.minimum(lo + block, n)
        with frit.loop(lo, hi) as k:
            acc.set(acc + x[k].astype(frit.int64))
            out[k] = acc
        sums[b] = acc
    offs = frit.empty((nb,), dtype=frit.int64)
    with frit.kernel(1, name="scan_sums"):                    # pass 2: exclusive scan of totals
        run = frit.var(0, dtype=frit.int64)
        with frit.loop(nb) as k:
            offs[k] = run
            run.set(run + sums[k])
    with frit.kernel(n, name="add_offsets") as i:           # pass 3: add the block offsets
        out[i] = out[i] + offs[i // block]
    return out


@functools.lru_cache(maxsize=None)
def _jitted(block):
    return frit.jit(functools.partial(prefix_sum, block=block), dynamic=False)


def make_input(n, seed=0):
    return np.random.default_rng(seed).integers(-1000, 1000, size=n, dtype=np.int32)


def run(n=1 << 24, block=BLOCK, verbose=True):
    x = make_input(n)
    f = _jitted(block)
    f(x)
    t0 = time.perf_counter()
    got = f(x)
    dt = time.perf_counter() - t0
    got = np.asarray(got)
    t1 = time.perf_counter()
    ref = np.cumsum(x, dtype=np.int64)
    tn = time.perf_counter() - t1
    assert got.dtype == np.int64 and np.array_equal(got, ref), "prefix sum differs from np.cumsum"
    if verbose:
        print("prefix sum of %d int32 values (int64 sums, %d blocks of %d): %.1f ms; np.cumsum %.1f ms"
              % (n, max(1, -(-n // block)), block, 1e3 * dt, 1e3 * tn))
        print("checked: equal to np.cumsum(x, dtype=int64)")
    return got, dt


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1 << 24)
    ap.add_argument("--block", type=int, default=BLOCK)
    a = ap.parse_args(argv)
    run(a.n, a.block)


if __name__ == "__main__":
    main()
