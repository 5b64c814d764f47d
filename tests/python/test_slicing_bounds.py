"""Slices whose bounds pass the ends of an axis are clamped as in numpy (issue 10): every
start/stop/step combination against numpy, eager and under frit.jit (two shapes, one trace), on
static (0, 1) and symbolic (5, 6) dims; empty slices; slice assignment with such bounds."""
import numpy as np
import pytest

import frit

B = [None, -100, -7, -6, -1, 0, 1, 3, 5, 6, 7, 100]
S = [None, 1, 2, 3, -1, -2, -5]
ALL = [slice(a, b, c) for a in B for b in B for c in S]
RANK = 4  # four slices per result (one per axis): fewer kernels to compile


def _groups():
    """ALL in index tuples of RANK slices (each slice once; the last tuple padded with ':')."""
    out = []
    for i in range(0, len(ALL), RANK):
        g = ALL[i:i + RANK]
        out.append(tuple(g) + (slice(None),) * (RANK - len(g)))
    return out


GROUPS = _groups()


def _data(n):
    return np.arange(n ** RANK, dtype=np.int64).reshape((n,) * RANK)


def _check(outs, a):
    bad = []
    for idx, r in zip(GROUPS, outs):
        e = a[idx]
        r = np.asarray(r)
        if r.shape != e.shape or not np.array_equal(r, e):
            bad.append((idx, r.shape, e.shape))
    assert not bad, "%d wrong slices, first: %s" % (len(bad), bad[:3])


@pytest.mark.parametrize("n", [0, 1, 5, 6])
def test_all_slices_eager(n):
    a = _data(n)
    fa = frit.asarray(a)
    _check(frit.realize(*[fa[idx] for idx in GROUPS]), a)


def test_all_slices_jit():
    f = frit.jit(lambda x: tuple(x[idx] for idx in GROUPS))
    for n in (5, 6):   # symbolic dims: one trace for both sizes
        _check(f(frit.asarray(_data(n))), _data(n))
    assert f.trace_count == 1
    for n in (0, 1):   # static dims
        _check(f(frit.asarray(_data(n))), _data(n))


def test_issue_examples():
    a = np.arange(30.0).reshape(5, 6)
    fa = frit.asarray(a)
    for idx in [(slice(None), slice(None, 9)), slice(None, 100), slice(2, 50), slice(None, -10, -1),
                slice(50, None), slice(None, -50), slice(3, 1)]:
        np.testing.assert_array_equal(np.asarray(fa[idx]), a[idx])
        f = frit.jit(lambda x, idx=idx: x[idx])
        for shape in [(5, 6), (7, 3)]:
            b = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
            r = f(frit.asarray(b))
            assert r.shape == b[idx].shape
            np.testing.assert_array_equal(np.asarray(r), b[idx])


LOHI = [(None, 9), (2, 50), (-100, 2), (50, None), (-50, -20), (3, 1), (-3, 100), (-100, 100)]


@pytest.mark.parametrize("lo,hi", LOHI)
def test_slice_assignment(lo, hi):
    def upd(x):
        return x.at[lo:hi].set(-1.0), x.at[:, lo:hi].add(10.0)

    def upd_np(x):
        y, z = x.copy(), x.copy()
        y[lo:hi] = -1.0
        z[:, lo:hi] += 10.0
        return y, z

    def setitem(x):
        x = x.copy()
        x[lo:hi] = 7.0
        return x

    f, g = frit.jit(upd), frit.jit(setitem)
    for shape in [(5, 6), (7, 3)]:
        a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
        for r, e in zip(upd(frit.asarray(a)), upd_np(a)):
            np.testing.assert_array_equal(np.asarray(r), e)
        for r, e in zip(f(frit.asarray(a)), upd_np(a)):
            np.testing.assert_array_equal(np.asarray(r), e)
        e = a.copy()
        e[lo:hi] = 7.0
        np.testing.assert_array_equal(np.asarray(setitem(frit.asarray(a))), e)
        np.testing.assert_array_equal(np.asarray(g(frit.asarray(a))), e)


def test_slice_of_computed_and_huge_bounds():
    """Bounds near the i64 limits and slices of lazy values (symbolic dims in eager replay)."""
    a = np.arange(24.0).reshape(4, 6)
    big = 2 ** 63 - 1
    for idx in [slice(-big, big), slice(big, -big, -1), slice(-big, None, -3), slice(None, -big, -2)]:
        np.testing.assert_array_equal(np.asarray((frit.asarray(a) * 2)[:, idx]), (a * 2)[:, idx])
        f = frit.jit(lambda x, idx=idx: (x * 2)[idx])
        for b in (a, np.arange(35.0).reshape(7, 5)):
            np.testing.assert_array_equal(np.asarray(f(frit.asarray(b))), (b * 2)[idx])


def test_empty_slices_then_ops():
    """An empty slice composes with other ops (shapes with a 0 dim at run time)."""
    f = frit.jit(lambda x: (x[50:] + 1, x[:-50].sum(axis=0), x[3:1] * 2))
    for shape in [(5, 6), (9, 4)]:
        a = np.ones(shape)
        r = f(frit.asarray(a))
        for got, e in zip(r, (a[50:] + 1, a[:-50].sum(axis=0), a[3:1] * 2)):
            assert got.shape == e.shape or np.asarray(got).shape == e.shape
            np.testing.assert_array_equal(np.asarray(got), e)

