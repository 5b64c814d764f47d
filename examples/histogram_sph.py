"""Scatter-add programs: a 256-bin histogram of float values three ways (the functional
frit.scatter, an explicit kernel of atomic adds, and per-block private histograms summed), checked
against np.bincount; and SPH density (poly6 kernel) by scattering pair contributions with
frit.scatter and with float atomics in an explicit kernel, checked against a dense numpy sum.
Usage: python examples/histogram_sph.py [--n N] [--particles P]"""
import argparse
import functools
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import frit  # noqa: E402

BINS = 256
BLOCK = 1 << 16   # values per private histogram


# ---------------------------------------------------------------- histogram

def _bin_of(x):
    """The bin of values in [0, 1): floor(x * BINS) clamped to [0, BINS) (also for kernel scalars)."""
    return frit.clip((x * BINS).astype(frit.int32), 0, BINS - 1)


def hist_scatter(x):
    """Functional scatter-add of ones at the bins (sequential in index order)."""
    return frit.scatter(frit.zeros(BINS, dtype=frit.int32), _bin_of(x), 1, mode="add")


def hist_atomic(x):
    """One kernel point per value, atomic add into the shared histogram."""
    h = frit.zeros(BINS, dtype=frit.int32)
    with frit.kernel(x.shape[0], name="hist_atomic") as i:
        frit.atomic_add(h, _bin_of(x[i]), 1)
    return h


def hist_blocks(x):
    """Shader-style privatisation: point b counts its block of values into row b of a (blocks,
    BINS) table with plain read-modify-write (rows are private: no race), then the rows are
    summed. len(x) must be a multiple of the block size (the caller pads)."""
    n = x.shape[0]
    blk = min(BLOCK, n)
    nb = n // blk
    part = frit.zeros((nb, BINS), dtype=frit.int32)
    with frit.kernel(nb, name="hist_blocks") as b:
        with frit.loop(blk) as k:
            c = _bin_of(x[b * blk + k])
            part[b, c] = part[b, c] + 1
    return frit.sum(part, axis=0, dtype=frit.int32)


HIST = {"scatter": hist_scatter, "atomic": hist_atomic, "blocks": hist_blocks}
_hist_jit = {k: frit.jit(f, dynamic=False) for k, f in HIST.items()}


def hist_numpy(x):
    return np.bincount(np.clip((x * BINS).astype(np.int32), 0, BINS - 1), minlength=BINS)


def make_values(n, seed=0):
    """n float32 values in [0, 1) with a non-uniform (bell-shaped) distribution."""
    rng = np.random.default_rng(seed)
    return np.clip(rng.normal(0.5, 0.15, n), 0, 0.9999).astype(np.float32)


def check_hist(n):
    x = make_values(n)
    ref = hist_numpy(x)
    out = {}
    for name, f in _hist_jit.items():
        if name == "blocks" and n % min(BLOCK, n):
            continue
        got = np.asarray(f(x))
        assert np.array_equal(got, ref), "histogram (%s) differs from np.bincount" % name
        out[name] = got
    return out, ref


# ---------------------------------------------------------------- SPH density

H = 0.05          # smoothing length
MASS = 1.0


def poly6(r2):
    """W(r) = 315 / (64 pi h^9) (h^2 - r^2)^3 for r < h (callers only pass r < h)."""
    c = 315.0 / (64.0 * np.pi * H ** 9)
    q = H * H - r2
    return c * q * q * q


def make_particles(p, seed=1):
    """p particles in the unit cube, clustered so that densities vary."""
    rng = np.random.default_rng(seed)
    centers = rng.random((8, 3))
    pos = centers[rng.integers(0, 8, p)] + rng.normal(0, 0.12, (p, 3))
    return np.mod(pos, 1.0).astype(np.float32)


def neighbour_pairs(pos):
    """Pairs i < j closer than H, found with a uniform grid of cell size H (numpy, host side)."""
    p = len(pos)
    ncell = max(1, int(1.0 / H))
    cell = np.minimum((pos.astype(np.float64) * ncell).astype(np.int64), ncell - 1)
    key = (cell[:, 0] * ncell + cell[:, 1]) * ncell + cell[:, 2]
    order = np.argsort(key, kind="stable")
    skey = key[order]
    start = np.searchsorted(skey, np.arange(ncell ** 3))
    end = np.searchsorted(skey, np.arange(ncell ** 3), side="right")
    I, J = [], []
    for off in np.ndindex(3, 3, 3):
        o = np.array(off) - 1
        nc = cell + o
        ok = np.all((nc >= 0) & (nc < ncell), axis=1)
        nkey = (nc[:, 0] * ncell + nc[:, 1]) * ncell + nc[:, 2]
        idx = np.nonzero(ok)[0]
        lo, hi = start[nkey[idx]], end[nkey[idx]]
        cnt = hi - lo
        ii = np.repeat(idx, cnt)
        jj = order[np.repeat(lo, cnt) + (np.arange(cnt.sum()) - np.repeat(np.cumsum(cnt) - cnt, cnt))]
        keep = ii < jj
        I.append(ii[keep])
        J.append(jj[keep])
    I, J = np.concatenate(I), np.concatenate(J)
    d = pos[I].astype(np.float64) - pos[J]
    near = np.sum(d * d, 1) < H * H
    return I[near].astype(np.int32), J[near].astype(np.int32)


def _pair_w(pos, a, b):
    d = [frit.take(pos[:, c], a) - frit.take(pos[:, c], b) for c in range(3)]
    return MASS * poly6(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])


def sph_scatter(pos, I, J):
    """rho_i = m W(0) + sum over pairs containing i of m W(r_ij): pair weights computed
    vectorised, then scatter-added at both ends."""
    p = pos.shape[0]
    w = _pair_w(pos, I, J)
    rho = frit.full((p,), MASS * poly6(0.0), dtype=frit.float32)
    rho = frit.scatter(rho, I, w, mode="add")
    return frit.scatter(rho, J, w, mode="add")


def sph_atomic(pos, I, J):
    """The same with one kernel point per pair and float atomic adds (exact under contention,
    in an unspecified order)."""
    p = pos.shape[0]
    rho = frit.full((p,), MASS * poly6(0.0), dtype=frit.float32)
    with frit.kernel(I.shape[0], name="sph_pairs") as k:
        a, b = I[k], J[k]
        dx, dy, dz = pos[a, 0] - pos[b, 0], pos[a, 1] - pos[b, 1], pos[a, 2] - pos[b, 2]
        w = MASS * poly6(dx * dx + dy * dy + dz * dz)
        frit.atomic_add(rho, a, w)
        frit.atomic_add(rho, b, w)
    return rho


_sph_jit = {"scatter": frit.jit(sph_scatter, dynamic=False), "atomic": frit.jit(sph_atomic, dynamic=False)}


def sph_numpy(pos, chunk=2048):
    """Dense float64 oracle: rho_i = sum over all j with r_ij < h of m W(r_ij) (j = i included)."""
    x = pos.astype(np.float64)
    rho = np.zeros(len(x))
    for s in range(0, len(x), chunk):
        d = x[s:s + chunk, None, :] - x[None, :, :]
        r2 = np.sum(d * d, -1)
        rho[s:s + chunk] = np.sum(np.where(r2 < H * H, MASS * poly6(r2), 0.0), 1)
    return rho


def check_sph(p):
    pos = make_particles(p)
    I, J = neighbour_pairs(pos)
    ref = sph_numpy(pos)
    out = {}
    for name, f in _sph_jit.items():
        got = np.asarray(f(pos, I, J), np.float64)
        err = np.max(np.abs(got - ref) / ref)
        assert err < 1e-4, "SPH density (%s): max rel. error %.3g" % (name, err)
        out[name] = err
    return out, len(I)


def _time(f, *args, reps=5):
    f(*args)
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f(*args)
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1 << 24, help="histogram values")
    ap.add_argument("--particles", type=int, default=20000)
    a = ap.parse_args(argv)
    check_hist(a.n)
    x = make_values(a.n)
    times = {k: _time(f, x) for k, f in _hist_jit.items() if k != "blocks" or a.n % min(BLOCK, a.n) == 0}
    tn = _time(hist_numpy, x)
    print("histogram of %d values into %d bins: checked equal to np.bincount for %s" % (a.n, BINS, ", ".join(times)))
    print("  " + ", ".join("%s %.1f ms" % (k, 1e3 * t) for k, t in times.items()) + "; numpy bincount %.1f ms" % (1e3 * tn))
    errs, npairs = check_sph(a.particles)
    print("SPH density of %d particles (%d neighbour pairs): max rel. error vs dense float64 numpy: %s"
          % (a.particles, npairs, ", ".join("%s %.1e" % kv for kv in errs.items())))


if __name__ == "__main__":
    main()
