"""sort, argsort, searchsorted, nonzero/argwhere/flatnonzero, unique and the array API unique_*,
interp and histogram against numpy: eagerly (compiled and through the reference interpreter) and
under frit.jit with two shapes; every dtype, duplicates, NaNs, -0.0, empty and 0-d arrays, axis
variations, stability on large arrays, the size= rule under jit, and bad input."""
import numpy as np
import pytest

import frit

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
          np.uint64, np.float16, np.float32, np.float64]
PATHS = ["eager", "interp", "jit"]


def run(path, f, *args):
    """f on numpy args: eagerly, eagerly in an interpreting session, or jitted (symbolic
    shapes); numpy results."""
    def out(r):
        if isinstance(r, (tuple, list)):
            return tuple(out(o) for o in r)
        return np.asarray(r)
    if path in ("eager", "interp"):
        sess = frit.Session(interpret=True) if path == "interp" else frit.current_session()
        with sess.as_current():
            r = f(*[frit.asarray(a) for a in args])
            frit.realize(*(r if isinstance(r, tuple) else (r,)))   # one program for all
            return out(r)
    j = frit.jit(f)
    r = out(j(*args))
    assert j.fallback_count == 0, "traced with static shapes: symbolic dims were not kept"
    return r


def vals(rng, dt, shape, special=True):
    """Values with many duplicates; floats also get NaN, -0.0, 0.0, +-inf."""
    dt = np.dtype(dt)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        v = rng.integers(0, 6, size=shape).astype(dt)
        if v.size:
            v.flat[0], v.flat[-1] = info.max, info.min
        if dt.kind == "i" and v.size > 2:
            v.flat[1] = -3
        return v
    v = rng.integers(-3, 4, size=shape).astype(dt) / 2
    if special and v.size >= 6:
        flat = v.reshape(-1)
        k = rng.permutation(v.size)
        flat[k[0]], flat[k[1]], flat[k[2]] = np.nan, -0.0, 0.0
        flat[k[3]], flat[k[4]] = np.inf, -np.inf
        flat[k[5]] = np.nan
    return v


def np_argsort(x, axis=-1, descending=False):
    """Oracle: numpy's stable argsort; descending keeps equal elements in their order and puts
    NaNs last (built from ascending sorts of the reversed, NaN-free row)."""
    if axis is None:
        return np_argsort(x.reshape(-1), 0, descending)
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")

    def row(r):
        idx = np.arange(r.size)
        nan = np.isnan(r) if r.dtype.kind == "f" else np.zeros(r.size, bool)
        keep = idx[~nan]
        rr = r[keep]
        o = rr.size - 1 - np.argsort(rr[::-1], kind="stable")[::-1]
        return np.concatenate([keep[o], idx[nan]]).astype(np.int64)
    return np.apply_along_axis(row, axis, x) if x.size else np.zeros(x.shape, np.int64)


def same(got, want, signed_zero=True):
    """Exact equality, NaN equal to NaN, sign of zero and dtype included."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind == "f" and signed_zero:
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------- sort and argsort

@pytest.mark.parametrize("path", PATHS)
def test_sort_every_dtype(path, rng):
    """All dtypes in one program (one compile): sort and descending argsort along the last axis,
    and for a few dtypes ascending argsort and a descending sort along axis 0."""
    few = (np.int8, np.uint32, np.float32)

    def f(*xs):
        out = []
        for x, dt in zip(xs, DTYPES):
            out += [frit.sort(x), frit.argsort(x, descending=True)]
            if dt in few:
                out += [frit.argsort(x), frit.sort(x, axis=0, descending=True)]
        return tuple(out)
    for n in ((5, 9) if path == "jit" else (7,)):
        xs = [vals(rng, dt, (n, 6)) for dt in DTYPES]
        keep = [x.copy() for x in xs]
        got = iter(run(path, f, *xs))
        for x, k in zip(xs, keep):
            same(x, k)                                   # inputs are never written
        for x, dt in zip(xs, DTYPES):
            same(next(got), np.sort(x, axis=-1, kind="stable"))
            same(next(got), np_argsort(x, descending=True))
            if dt in few:
                same(next(got), np_argsort(x))
                same(next(got), np.take_along_axis(x, np_argsort(x, 0, True), 0))


def test_sort_long_rows_radix(rng):
    """Rows longer than the insertion threshold take the radix paths: many rows (a row per
    kernel point) and a single row (chunked passes); every dtype in one program."""
    xs = [vals(rng, dt, (10, 200)) for dt in DTYPES]
    outs = []
    for x in xs:
        outs += [frit.sort(x), frit.argsort(x, descending=True), frit.sort(x, axis=None)]
    frit.realize(*outs)
    for i, x in enumerate(xs):
        same(outs[3 * i].numpy(), np.sort(x, kind="stable"))
        same(outs[3 * i + 1].numpy(), np_argsort(x, descending=True))
        same(outs[3 * i + 2].numpy(), np.sort(x, axis=None, kind="stable"))


def test_sort_large_stable(rng):
    """1e5 elements with few distinct keys (two chunks of the chunked passes): stability is
    visible in every position."""
    xs = [vals(rng, dt, (100_000,)) for dt in (np.int32, np.float32, np.float64, np.uint8)]
    outs = []
    for x in xs:
        outs += [frit.argsort(x), frit.argsort(x, descending=True)]
    frit.realize(*outs)
    for i, x in enumerate(xs):
        same(outs[2 * i].numpy(), np.argsort(x, kind="stable"))
        same(outs[2 * i + 1].numpy(), np_argsort(x, descending=True))


def test_sort_many_short_rows_network(rng):
    """Many rows of at most 256 keys sorted alone (sort, not argsort) take the bitonic network,
    32 rows a block (a row count that blocks do not divide leaves lanes that are never stored):
    every dtype, both directions, row lengths around the powers of two and the 256 limit, static
    shapes and one symbolic program run at several lengths (its network, radix and trivial
    paths chosen at run time), bit for bit against numpy's stable sort."""
    lengths = (1, 2, 3, 65, 100, 129, 256, 257)
    static = frit.jit(lambda *xs: tuple(frit.sort(x) for x in xs) + tuple(frit.sort(x, descending=True) for x in xs),
                      dynamic=False)
    xs = [vals(rng, dt, (45, 100)) for dt in DTYPES]
    assert "sort_network" in static.lower(*xs).source
    for n in (100, 3):
        xs = [vals(rng, dt, (45, n)) for dt in DTYPES]
        got = static(*xs)
        for i, x in enumerate(xs):
            same(got[i], np.sort(x, axis=-1, kind="stable"))
            same(got[len(xs) + i], np.take_along_axis(x, np_argsort(x, descending=True), -1))
    dyn = frit.jit(lambda x: (frit.sort(x), frit.sort(x, descending=True), frit.argsort(x),
                              frit.argsort(x, descending=True)))
    for n in lengths:
        for dt in (np.float32, np.int64, np.uint8, np.float16, np.bool_):
            x = vals(rng, dt, (70, n))
            got = dyn(x)
            same(got[0], np.sort(x, axis=-1, kind="stable"))
            same(got[1], np.take_along_axis(x, np_argsort(x, descending=True), -1))
            same(got[2], np_argsort(x))
            same(got[3], np_argsort(x, descending=True))
    assert dyn.fallback_count == 0


def test_paths_not_taken_have_no_points(rng):
    """Under the default jit a sort builds its network, radix and insertion kernels, each guarded
    by its condition on the row length; the kernels of the paths a run does not take have no
    points, so no size-specialised variant is compiled for them (a radix kernel's variant once
    cost every new row length up to 0.3 s of compiling for a kernel that did nothing)."""
    import re
    f = frit.jit(lambda x: (frit.sort(x), frit.argsort(x)))
    for n, idle in ((100, ("sort_rows", "sort_short")), (300, ("sort_network", "sort_short"))):
        x = vals(rng, np.float32, (70, n))
        for _ in range(3):
            got = f(x)
        same(got[0], np.sort(x, axis=-1, kind="stable"))
        same(got[1], np_argsort(x))
        lo = f.lower(x)
        spec = [lo.ir("kernel", int(k)).splitlines()[0]
                for k, at in re.findall(r"^kernel (\d+): specialised for ([^(]*)", lo.info, re.M)
                if "=%d," % n in at.strip() + "," and "=70," in at]
        assert spec and not [s for s in spec if any(i in s for i in idle)], (n, spec)


def test_argsort_many_short_rows_network(rng):
    """argsort of many rows of at most 256 keys of at most 32 bits takes the network too, on keys
    widened by the position (unique, so the network's order is the stable order): every such
    dtype, both directions, many ties, static shapes, against numpy's stable argsort."""
    dts = [dt for dt in DTYPES if np.dtype(dt).itemsize <= 4]
    f = frit.jit(lambda *xs: tuple(frit.argsort(x) for x in xs) + tuple(frit.argsort(x, descending=True) for x in xs),
                 dynamic=False)
    for n in (100, 256):
        xs = [vals(rng, dt, (40, n)) for dt in dts]
        if n == 100:
            assert f.lower(*xs).source.count("sort_network") >= len(xs)
        got = f(*xs)
        for i, x in enumerate(xs):
            same(got[i], np_argsort(x))
            same(got[len(xs) + i], np_argsort(x, descending=True))


@pytest.mark.parametrize("path", ["eager", "jit"])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_float_sort_restores_zeros_and_nan_bits(path, dt, rng):
    """A float sort moves its keys alone, which merge -0.0 with 0.0 and every NaN: the zeros'
    signs and the NaNs' bits (quiet and signalling, either sign, payloads) come back in the
    input's order, in both directions, within one chunk, across chunks (140000 elements a row)
    and in many short rows, bit for bit against numpy's stable sort."""
    ut = np.uint32 if dt == np.float32 else np.uint64
    nans = (np.array([0x7fc00000, 0xffc00000, 0x7f800001, 0xffc12345], np.uint32).view(np.float32)
            if dt == np.float32 else
            np.array([0x7ff8000000000000, 0xfff8000000000000, 0x7ff0000000000001, 0xfff8000000012345],
                     np.uint64).view(np.float64))
    for shape in [(9,), (3, 1000), (2, 140_000)]:
        x = rng.standard_normal(shape).astype(dt)
        m = rng.random(shape)
        x[m < 0.1], x[m > 0.93] = 0.0, -0.0
        pick = rng.random(shape) < 0.05
        x[pick] = rng.choice(nans, int(pick.sum()))
        for desc in (False, True):
            got = run(path, lambda a: frit.sort(a, descending=desc), x)
            want = np.take_along_axis(x, np.argsort(-x if desc else x, axis=-1, kind="stable"), -1)
            np.testing.assert_array_equal(got.view(ut), want.view(ut))


@pytest.mark.parametrize("path", PATHS)
def test_sort_axes_and_shapes(path, rng):
    x3 = vals(rng, np.float32, (3, 4, 5))
    f = lambda x: (frit.sort(x, axis=1), frit.argsort(x, axis=-3), frit.sort(x, axis=None),  # noqa: E731
                   frit.argsort(x, axis=None), frit.sort(x.T, axis=0), frit.sort(x[:, ::-1], axis=1))
    got = run(path, f, x3)
    same(got[0], np.sort(x3, axis=1, kind="stable"))
    same(got[1], np.argsort(x3, axis=0, kind="stable"))
    same(got[2], np.sort(x3, axis=None, kind="stable"))
    same(got[3], np.argsort(x3, axis=None, kind="stable"))
    same(got[4], np.sort(x3.T, axis=0, kind="stable"))
    same(got[5], np.sort(x3[:, ::-1], axis=1, kind="stable"))


def test_sort_empty_0d_and_methods(rng):
    for shape in [(0,), (0, 3), (3, 0)]:
        x = np.zeros(shape, np.float32)
        same(frit.sort(x).numpy(), np.sort(x, kind="stable"))
        same(frit.argsort(x, axis=0).numpy(), np.argsort(x, axis=0))
    z = np.array(2.5)
    same(frit.sort(z, axis=None).numpy(), np.sort(z, axis=None, kind="stable"))
    same(frit.argsort(z).numpy(), np.argsort(z))
    with pytest.raises(frit.FritError, match="out of bounds|0-d"):
        frit.sort(z)
    x = vals(rng, np.int16, (4, 5))
    same(frit.sort(x, kind="mergesort", stable=True).numpy(), np.sort(x, kind="mergesort"))
    a = frit.asarray(x)
    same(a.argsort(axis=0).numpy(), np.argsort(x, axis=0, kind="stable"))
    same(a.nonzero()[1].numpy(), x.nonzero()[1].astype(np.int64))
    same(frit.asarray(np.sort(x[0])).searchsorted(x[1], side="right").numpy(),
         np.sort(x[0]).searchsorted(x[1], side="right"))
    y = x.copy()
    assert a.sort() is None and y.sort() is None     # in place, as numpy
    same(a.numpy(), y)


def test_bfloat16():
    """numpy has no bfloat16: values rounded to it through frit, then compared as float32."""
    x = np.array([3.0, -0.0, np.nan, 1.0, 0.0, -2.5, 1.0, np.inf, -np.inf, 1e-3], np.float32)
    b = frit.astype(frit.asarray(x), frit.bfloat16)
    xb = b.astype(frit.float32).numpy()
    same(frit.argsort(b).numpy(), np.argsort(xb, kind="stable"))
    same(frit.argsort(b, descending=True).numpy(), np_argsort(xb, descending=True))
    same(frit.sort(b).astype(frit.float32).numpy(), np.sort(xb, kind="stable"))
    same(frit.searchsorted(frit.sort(b), b).numpy(), np.searchsorted(np.sort(xb), xb))


def test_sort_bad_input():
    x = np.arange(6.0).reshape(2, 3)
    with pytest.raises(frit.FritError, match="axis"):
        frit.sort(x, axis=2)
    with pytest.raises(frit.FritError, match="axis"):
        frit.argsort(x, axis=-3)
    with pytest.raises(frit.FritTypeError):
        frit.sort(x, axis=1.5)
    with pytest.raises(ValueError, match="kind"):
        frit.sort(x, kind="bogo")
    with pytest.raises(frit.FritTypeError, match="order"):
        frit.sort(x, order="f0")
    a, out = frit.asarray(x[0]), frit.zeros(3)
    with pytest.raises(frit.FritError, match="inside frit.kernel"):
        with frit.kernel(3) as i:
            out[i] = frit.sort(a)[i]


# ---------------------------------------------------------------- searchsorted

@pytest.mark.parametrize("path", PATHS)
def test_searchsorted(path, rng):
    for dt in (np.float32, np.int16, np.uint64, np.float16, np.bool_):
        for n in ((5, 9) if path == "jit" else (8,)):
            a = np.sort(vals(rng, dt, (n,)))
            v = vals(rng, dt, (3, 4))
            perm = rng.permutation(n)
            unsorted = a[np.argsort(perm)]          # unsorted[perm] == a
            got = run(path, lambda a_, v_, u_, p_: (frit.searchsorted(a_, v_),
                                                    frit.searchsorted(a_, v_, side="right"),
                                                    frit.searchsorted(u_, v_, sorter=p_)),
                      a, v, unsorted, perm)
            same(got[0], np.searchsorted(a, v))
            same(got[1], np.searchsorted(a, v, side="right"))
            same(got[2], np.searchsorted(unsorted, v, sorter=perm))


def test_searchsorted_scalars_promotion_and_errors():
    a = np.array([0.0, -0.0, 1.0, np.nan, np.nan])
    for v in (0.0, -0.0, np.nan, 2, True):
        same(frit.searchsorted(a, v).numpy(), np.searchsorted(a, v))
        same(frit.searchsorted(a, v, "right").numpy(), np.searchsorted(a, v, "right"))
    ai = np.array([1, 2, 3], np.int8)
    same(frit.searchsorted(ai, np.array([2.5, 300.0])).numpy(), np.searchsorted(ai, [2.5, 300.0]))
    same(frit.searchsorted(np.zeros(0), np.array([1.0])).numpy(), np.searchsorted(np.zeros(0), [1.0]))
    with pytest.raises(ValueError, match="side"):
        frit.searchsorted(a, 1.0, side="middle")
    with pytest.raises(frit.FritError, match="1-d"):
        frit.searchsorted(np.zeros((2, 2)), 1.0)
    with pytest.raises(frit.FritError, match="sorter"):
        frit.searchsorted(a, 1.0, sorter=np.arange(3))


# ---------------------------------------------------------------- nonzero family

def test_nonzero_eager(rng):
    for dt, shape in [(np.bool_, (7,)), (np.int8, (3, 4)), (np.float16, (0, 3)), (np.uint64, (2, 3, 2))]:
        if True:
            x = vals(rng, dt, shape)
            got = frit.nonzero(x)
            want = np.nonzero(x)
            assert len(got) == len(want)
            for g, w in zip(got, want):
                same(g.numpy(), w.astype(np.int64))
    x = vals(rng, np.float32, (2, 3, 2))
    same(frit.argwhere(x).numpy(), np.argwhere(x).astype(np.int64))
    same(frit.flatnonzero(x).numpy(), np.flatnonzero(x).astype(np.int64))
    same(frit.count_nonzero(x).numpy(), np.asarray(np.count_nonzero(x), np.int64))
    same(frit.argwhere(np.array(3.0)).numpy(), np.argwhere(np.array(3.0)).astype(np.int64))
    same(frit.flatnonzero(np.array(0.0)).numpy(), np.flatnonzero(np.array(0.0)).astype(np.int64))
    with pytest.raises(frit.FritError, match="0-d"):
        frit.nonzero(np.array(1.0))


@pytest.mark.parametrize("path", ["interp", "jit"])
def test_nonzero_size(path, rng):
    """Fixed-size results: padded with fill_value, truncated to the first `size`."""
    for n in (5, 9):
        x = rng.integers(0, 2, size=(n, 3)).astype(np.float32)
        nz = np.nonzero(x)
        k = 4
        got = run(path, lambda x_: frit.nonzero(x_, size=k) + frit.nonzero(x_, size=3 * n + 1,
                                                                          fill_value=-1), x)
        for a in range(2):
            same(got[a], nz[a][:k].astype(np.int64) if len(nz[a]) >= k else
                 np.pad(nz[a], (0, k - len(nz[a]))).astype(np.int64))
            want = np.full(3 * n + 1, -1, np.int64)
            want[:len(nz[a])] = nz[a]
            same(got[2 + a], want)


def test_data_dependent_size_under_jit_is_an_error():
    x = np.array([1.0, 0.0, 2.0])
    for f in (frit.nonzero, frit.unique, frit.unique_values, frit.argwhere, frit.flatnonzero):
        with pytest.raises(frit.FritError, match="size="):
            frit.jit(f)(x)


# ---------------------------------------------------------------- unique

def test_unique_eager(rng):
    """np.unique sorts with an unstable sort, so which of 0.0 / -0.0 it keeps is arbitrary:
    zeros are compared by value only."""
    cases = [(np.uint8, (3, 4)), (np.float16, (3, 4)), (np.float32, (0,)), (np.int16, ()),
             (np.float64, (9,)), (np.bool_, (5,))]
    for dt, shape in cases:
        x = vals(rng, dt, shape)
        got = frit.unique(x, return_index=True, return_inverse=True, return_counts=True)
        want = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
        for g, w in zip(got, want):
            same(g.numpy(), w if w.dtype == x.dtype else w.astype(np.int64), signed_zero=False)
    for dt in (np.int32, np.float64):
        x = vals(rng, dt, (3, 4))
        ua, wa = frit.unique_all(x), np.unique_all(x)
        for g, w in zip(ua, wa):
            same(g.numpy(), w if w.dtype == x.dtype else w.astype(np.int64), signed_zero=False)
        uc, wc = frit.unique_counts(x), np.unique_counts(x)
        same(uc.values.numpy(), wc.values, signed_zero=False)
        same(uc.counts.numpy(), wc.counts.astype(np.int64))
        ui, wi = frit.unique_inverse(x), np.unique_inverse(x)
        same(ui.inverse_indices.numpy(), wi.inverse_indices.astype(np.int64))
        same(frit.unique_values(x).numpy(), np.sort(np.unique_values(x)), signed_zero=False)
        same(frit.unique(x).numpy(), np.unique(x), signed_zero=False)


def test_unique_every_dtype_jit(rng):
    """Every dtype in one jitted program (size= the largest input size: the unique values, then
    padding), two shapes served by one compile."""
    k = 18
    f = frit.jit(lambda *a: tuple(frit.unique(x, return_index=True, return_inverse=True,
                                              return_counts=True, size=k) for x in a))
    for n in (5, 9):
        xs = [vals(rng, dt, (n, 2)) for dt in DTYPES]
        got = f(*xs)
        for x, g in zip(xs, got):
            u, idx, inv, cnt = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
            m = len(u)
            same(g[0].numpy()[:m], u, signed_zero=False)
            same(g[1].numpy()[:m], idx.astype(np.int64))
            same(g[2].numpy(), inv.astype(np.int64))
            same(g[3].numpy(), np.concatenate([cnt, np.zeros(k - m, int)]).astype(np.int64))
    assert f.compile_count == 1


def test_unique_axis():
    """Unique slices: -0.0 equals 0.0, a NaN makes its slice distinct, lexicographic order."""
    x = np.array([[1, 0, 1], [2, 3, 2], [1, 0, 1], [1, 0, 0]], np.int16)
    y = np.array([[np.nan, 1.0], [np.nan, 1.0], [0.0, 2.0], [-0.0, 2.0], [0.0, -1.0]])
    z = (np.arange(24).reshape(2, 3, 4) % 3).astype(np.uint8)
    for a, ax in [(x, 0), (x, 1), (x, -1), (y, 0), (z, 1), (z, 2)]:
        got = frit.unique(a, axis=ax, return_index=True, return_inverse=True, return_counts=True)
        want = np.unique(a, axis=ax, return_index=True, return_inverse=True, return_counts=True)
        for g, w in zip(got, want):
            same(g.numpy(), w if w.dtype == a.dtype else w.astype(np.int64), signed_zero=False)
    f = frit.jit(lambda a: frit.unique(a, axis=0, return_inverse=True, return_counts=True, size=6))
    for n in (5, 9):        # traced per shape: axis= needs the other axes static
        a = np.random.default_rng(n).integers(0, 2, (n, 2)).astype(np.int32)
        u, inv, c = np.unique(a, axis=0, return_inverse=True, return_counts=True)
        g = f(a)
        same(g[0].numpy()[:len(u)], u)
        same(g[1].numpy(), inv.astype(np.int64))
        same(g[2].numpy()[:len(u)], c.astype(np.int64))
    with pytest.raises(frit.FritError, match="out of bounds"):
        frit.unique(x, axis=2)


def test_unique_nan_and_zero():
    x = np.array([np.nan, 0.0, -0.0, 1.0, np.nan, 1.0])
    same(frit.unique(x).numpy(), np.unique(x))
    same(frit.unique(x, equal_nan=False).numpy(), np.unique(x, equal_nan=False))
    for g, w in zip(frit.unique_all(x), np.unique_all(x)):
        np.testing.assert_array_equal(g.numpy(), w)


@pytest.mark.parametrize("path", ["interp", "jit"])
def test_unique_size(path, rng):
    for n in (5, 9):
        x = rng.integers(0, 4, size=(n, 2)).astype(np.int32)
        u, idx, inv, cnt = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
        k = 6
        got = run(path, lambda x_: frit.unique(x_, return_index=True, return_inverse=True,
                                               return_counts=True, size=k, fill_value=-5), x)
        m = len(u)
        same(got[0][:m], u)
        same(got[0][m:], np.full(k - m, -5, np.int32))
        same(got[1][:m], idx.astype(np.int64))
        same(got[2], inv.astype(np.int64))
        same(got[3][:m], cnt.astype(np.int64))
        same(got[3][m:], np.zeros(k - m, np.int64))
        got = run(path, lambda x_: frit.unique_values(x_, size=k), x)
        same(got[:m], u)
        same(got[m:], np.full(k - m, u.min(), np.int32))


# ---------------------------------------------------------------- interp and histogram

@pytest.mark.parametrize("path", PATHS)
def test_interp(path, rng):
    for n in ((5, 9) if path == "jit" else (7,)):
        xp = np.sort(rng.standard_normal(n))
        xp[2] = xp[1]                                   # a repeated sample point
        fp = rng.standard_normal(n)
        x = np.concatenate([rng.uniform(-3, 3, 20), xp, [np.nan, np.inf, -np.inf]])
        # period: numpy sorts xp with an unstable sort, so its samples must be distinct
        xq = rng.permutation(np.linspace(-4, 4, n) + rng.uniform(0, 0.1, n))
        got = run(path, lambda a, b, c, d: (frit.interp(a, b, c), frit.interp(a, b, c, left=-9, right=9),
                                            frit.interp(a, d, c, period=2.5)), x, xp, fp, xq)
        np.testing.assert_allclose(got[0], np.interp(x, xp, fp), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got[1], np.interp(x, xp, fp, left=-9, right=9), rtol=1e-12, atol=1e-12)
        with np.errstate(invalid="ignore"):      # numpy: inf % period
            want = np.interp(x, xq, fp, period=2.5)
        np.testing.assert_allclose(got[2], want, rtol=1e-12, atol=1e-12)
        assert got[0].dtype == np.float64


def test_interp_errors_and_one_point():
    same(frit.interp(np.array([0.0, 1.0, 2.0]), [1.0], [5.0]).numpy(),
         np.interp([0.0, 1.0, 2.0], [1.0], [5.0]))
    with pytest.raises(frit.FritError, match="empty"):
        frit.interp(np.zeros(3), np.zeros(0), np.zeros(0))
    with pytest.raises(frit.FritError, match="same length"):
        frit.interp(np.zeros(3), np.arange(3.0), np.arange(4.0))
    with pytest.raises(frit.FritError, match="period"):
        frit.interp(np.zeros(3), np.arange(3.0), np.arange(3.0), period=0)


@pytest.mark.parametrize("path", PATHS)
def test_histogram(path, rng):
    for n in ((5, 9) if path == "jit" else (40,)):
        a = rng.standard_normal((n, 3)).astype(np.float32)
        ai = rng.integers(0, 10, size=n * 3)
        w = rng.random((n, 3))
        edges = np.array([-1.0, -0.5, 0.0, 2.0])
        got = run(path, lambda a_, ai_, w_, e_: (
            frit.histogram(a_, bins=4) + frit.histogram(a_, bins=3, range=(-1, 1), weights=w_) +
            frit.histogram(ai_, bins=5, density=True) + frit.histogram(a_, bins=e_)), a, ai, w, edges)
        want = (np.histogram(a, bins=4) + np.histogram(a, bins=3, range=(-1, 1), weights=w) +
                np.histogram(ai, bins=5, density=True) + np.histogram(a, bins=edges))
        for i, (g, wv) in enumerate(zip(got, want)):
            if wv.dtype.kind in "iu":
                same(g, wv.astype(np.int64))
            else:
                assert g.dtype == wv.dtype, (i, g.dtype, wv.dtype)
                np.testing.assert_allclose(g, wv, rtol=1e-6, err_msg=str(i))


def test_histogram_edges_rules():
    a = np.array([0.0, 1.0, 1.0, 2.0, 3.0, 3.0, np.nan])     # values on edges, the last closed
    e = np.array([0.0, 1.0, 2.0, 3.0])
    same(frit.histogram(a, bins=e)[0].numpy(), np.histogram(a, bins=e)[0].astype(np.int64))
    b = np.full(5, 2.0)
    for g, w in zip(frit.histogram(b, bins=3), np.histogram(b, bins=3)):
        np.testing.assert_array_equal(g.numpy(), w)
    with pytest.raises(frit.FritError, match="monoton"):
        frit.histogram(a, bins=np.array([0.0, 2.0, 1.0]))
    with pytest.raises(frit.FritError, match="larger"):
        frit.histogram(a, bins=3, range=(2, 1))
    with pytest.raises(frit.FritError, match="not finite"):
        frit.histogram(a, bins=3)
    with pytest.raises(frit.FritError, match="estimator"):
        frit.histogram(a, bins="auto")


POISONED = """
import numpy as np, frit
rng = np.random.default_rng(0)
for shape in [(50, 100), (3, 70000), (70000,), (40, 300), (9, 20)]:
    for dt in [np.float32, np.float64, np.int8, np.uint16]:
        x = (rng.standard_normal(shape) * 100).astype(dt)
        for arg in (False, True):
            op = frit.argsort if arg else frit.sort
            want = np.argsort(x, kind="stable") if arg else np.sort(x)
            for f in (op, frit.jit(op)):
                for _ in range(2):  # the second run finds the first one's values in the arena
                    got = np.asarray(f(frit.asarray(x)))
                    assert np.array_equal(got, want), (shape, dt, arg)
print("sorted")
"""


def test_sort_scratch_under_a_poisoned_arena():
    """The radix sort's counts and ping-pong buffers are scratch that no kernel fills
    (kb_scratch): with every temporary full of 0xA5 bytes at the start of each run, a kernel
    that read what no kernel wrote this run would give a wrong result."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, FRIT_POISON_ARENA="1",
               PYTHONPATH=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
    r = subprocess.run([sys.executable, "-c", POISONED], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "sorted" in r.stdout, r.stdout[-2000:] + r.stderr[-3000:]
