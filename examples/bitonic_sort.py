"""Bitonic sort of keys with values as a host loop of explicit frit kernels (one launch per (k, j)
pass), checked against numpy's stable argsort. Usage: python examples/bitonic_sort.py [--n N]
(N a power of two, default 2^20) [--unrolled] (Python loops: one kernel per pass in the graph)."""
import argparse
import functools
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import frit  # noqa: E402


def _pass(keys, vals, k, j):
    """One compare-exchange pass: point i with partner l = i ^ j > i orders the pair (i, l)
    ascending when i & k == 0, else descending. Ties of keys are broken by the value (the
    original position), so the result is exactly numpy's stable argsort."""
    n = keys.shape[0]
    with frit.kernel(n, name="bitonic") as i:
        l = i ^ j
        with frit.if_(l > i):
            a, b = keys[i], keys[l]
            va, vb = vals[i], vals[l]
            gt = (a > b) | ((a == b) & (va > vb))   # (a, va) > (b, vb) lexicographically
            with frit.if_(gt == ((i & k) == 0)):
                keys[i] = b
                keys[l] = a
                vals[i] = vb
                vals[l] = va
    return keys, vals


def bitonic_sort(keys, vals, unrolled=False):
    """Sorts (keys, vals) by (key, value); len(keys) a power of two. A host loop over the stages
    kk (k = 2 << kk) with an inner host loop over the passes (j = k >> 1, k >> 2, ..., 1)."""
    n = keys.shape[0]
    logn = n.bit_length() - 1
    assert n == 1 << logn, "bitonic sort needs a power-of-two length"
    if unrolled:
        k = 2
        while k <= n:
            j = k // 2
            while j > 0:
                keys, vals = _pass(keys, vals, k, j)
                j //= 2
            k *= 2
        return keys, vals
    if logn == 0:
        return keys, vals
    with frit.loop(logn) as kk:              # stage: k = 2^(kk+1)
        k = frit.left_shift(2, kk)
        with frit.loop(kk + 1) as jj:        # pass: j = k/2, k/4, ..., 1 (trip count kk + 1)
            j = frit.right_shift(k, jj + 1)
            keys, vals = _pass(keys, vals, k, j)
    return keys, vals


@functools.lru_cache(maxsize=None)
def _jitted(unrolled):
    return frit.jit(functools.partial(bitonic_sort, unrolled=unrolled), dynamic=False)


def make_input(n, seed=0):
    """float32 keys with many ties (n/8 distinct values), values = original positions."""
    rng = np.random.default_rng(seed)
    keys = (rng.integers(0, max(1, n // 8), size=n) * 0.25 - 7.0).astype(np.float32)
    vals = np.arange(n, dtype=np.int32)
    return keys, vals


def run(n=1 << 20, unrolled=False, verbose=True):
    """Sorts n keys with frit and checks against numpy; returns (keys, vals, seconds of the
    timed second call)."""
    keys, vals = make_input(n)
    f = _jitted(unrolled)
    ks, vs = f(keys, vals)                    # traces and compiles
    t0 = time.perf_counter()
    ks, vs = f(keys, vals)
    dt = time.perf_counter() - t0
    ks, vs = np.asarray(ks), np.asarray(vs)
    order = np.argsort(keys, kind="stable")
    assert np.array_equal(ks, np.sort(keys)), "keys differ from np.sort"
    assert np.array_equal(vs, order), "values differ from np.argsort(kind='stable')"
    if verbose:
        t1 = time.perf_counter()
        np.argsort(keys, kind="stable")
        tn = time.perf_counter() - t1
        print("bitonic sort of %d float32 keys with int32 values (%s): %.1f ms; numpy stable argsort "
              "%.1f ms" % (n, "unrolled passes" if unrolled else "host loops", 1e3 * dt, 1e3 * tn))
        print("checked: keys == np.sort(keys), values == np.argsort(keys, kind='stable') "
              "(ties broken by original position)")
    return ks, vs, dt


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1 << 20)
    ap.add_argument("--unrolled", action="store_true")
    a = ap.parse_args(argv)
    run(a.n, a.unrolled)


if __name__ == "__main__":
    main()
