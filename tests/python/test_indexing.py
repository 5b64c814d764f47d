"""frit indexing (x[idx]) and functional updates (x.at[idx].set/add/min/max) against numpy:
basic, advanced and boolean indices over shapes incl. 0-d and size 0, negative steps, errors,
and duplicate positions (numpy oracle: np.add.at / np.minimum.at / np.maximum.at, and a plain
loop in index order for set)."""
import random

import numpy as np
import pytest

import frit

SHAPES = [(), (0,), (1,), (5,), (3, 4), (2, 0, 3), (2, 3, 4), (4, 1, 5)]


def _rand_slice(r, d):
    def bound():
        c = r.random()
        if c < 0.3:
            return None
        return r.randint(-d - 3, d + 3)
    step = r.choice([None, None, 1, 2, 3, -1, -2, -3])
    return slice(bound(), bound(), step)


def _rand_basic_index(r, shape):
    """A random index tuple of ints, slices, None and at most one Ellipsis (always valid)."""
    out = []
    axis = 0
    used_ell = False
    while axis < len(shape):
        c = r.random()
        if c < 0.15:
            out.append(None)
            continue
        if c < 0.22 and not used_ell:
            used_ell = True
            out.append(Ellipsis)
            axis = len(shape) - r.randint(0, len(shape) - axis)
            continue
        if c < 0.5 and shape[axis] > 0:
            out.append(r.randint(-shape[axis], shape[axis] - 1))
        elif c < 0.95:
            out.append(_rand_slice(r, shape[axis]))
        else:
            break
        axis += 1
    if r.random() < 0.1:
        out.append(None)
    return tuple(out)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_basic_random(shape):
    r = random.Random(hash(shape) & 0xffff)
    a = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape) * 3 - 7
    x = frit.asarray(a)
    idxs = [_rand_basic_index(r, shape) for _ in range(40)]
    idxs += [(), Ellipsis, (None,), (Ellipsis, None), (None, Ellipsis, None)]
    got = [x[i] for i in idxs]
    frit.realize(*got)  # one program for all of them
    for i, g in zip(idxs, got):
        want = a[i]
        assert g.shape == want.shape, i
        assert g.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(g), want, err_msg=str(i))


@pytest.mark.parametrize("step", [-1, -2, -3, 2, 5])
def test_steps(step):
    a = np.arange(60, dtype=np.float32).reshape(6, 10)
    x = frit.asarray(a)
    cases = [np.s_[::step], np.s_[:, ::step], np.s_[1:5:step, -1:2:step], np.s_[..., 8:1:step],
             np.s_[-100:100:step, 100:-100:step], np.s_[::step, ::-step]]
    got = [x[c] for c in cases]
    frit.realize(*got)
    for c, g in zip(cases, got):
        np.testing.assert_array_equal(np.asarray(g), a[c], err_msg=str(c))


def test_ints_and_python_scalars():
    a = np.arange(24).reshape(2, 3, 4)
    x = frit.asarray(a)
    assert int(x[1, 2, 3]) == a[1, 2, 3]
    assert int(x[-1, -1, -1]) == a[-1, -1, -1]
    assert int(x[np.int64(1), np.int32(0), 2]) == a[1, 0, 2]
    assert x[0].shape == (3, 4)
    np.testing.assert_array_equal(np.asarray(x[np.array(1)]), a[np.array(1)])
    np.testing.assert_array_equal(np.asarray(x[frit.asarray(np.int64(1))]), a[1])
    assert [int(v) for v in frit.asarray(np.array([5, 6, 7]))] == [5, 6, 7]


ADV_CASES = [
    np.s_[[0, 2, 1, 2]],
    np.s_[[-1, 0]],
    np.s_[[[0, 1], [2, 2]]],
    np.s_[:, [3, 0, 3]],
    np.s_[..., [1, -1]],
    np.s_[[0, 1], [1, 2]],
    np.s_[[0, 1], :, [1, 2]],          # separated by a slice: broadcast dims go first
    np.s_[0, :, [1, 2]],               # an int among arrays counts as an array
    np.s_[:, 0, [1, 2]],               # adjacent: in place
    np.s_[[[0], [1]], [0, 2, 1]],      # broadcast (2,1) with (3,)
    np.s_[None, [0, 1], None, 1],
    np.s_[[0, 1], None, [0, 1]],
    np.s_[1:, [2, 0], ::-1],
    np.s_[[], :],
    np.s_[np.array([], dtype=np.int64), 1],
    np.s_[[True, False, True]],
    np.s_[:, [True, False, True, False]],
    np.s_[True],
    np.s_[False],
    np.s_[..., True],
    np.s_[np.array(True), 0],
]


@pytest.mark.parametrize("case", range(len(ADV_CASES)))
def test_advanced(case):
    a = (np.arange(60, dtype=np.float64).reshape(3, 4, 5) - 5) / 4
    x = frit.asarray(a)
    idx = ADV_CASES[case]
    want = a[idx]
    got = x[idx]
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)


def test_boolean_masks():
    a = np.arange(30, dtype=np.int16).reshape(5, 6) - 10
    x = frit.asarray(a)
    for m in [a > 3, a % 3 == 0, np.zeros_like(a, bool), np.ones_like(a, bool)]:
        np.testing.assert_array_equal(np.asarray(x[m]), a[m])
        np.testing.assert_array_equal(np.asarray(x[frit.asarray(m)]), a[m])
    # a lazy mask (computed by frit) is realised first
    np.testing.assert_array_equal(np.asarray(x[x > 3]), a[a > 3])
    np.testing.assert_array_equal(np.asarray(x[:, (x[0] % 2) == 0]), a[:, (a[0] % 2) == 0])
    np.testing.assert_array_equal(np.asarray(x[a[:, 0] > -5, 1:]), a[a[:, 0] > -5, 1:])


def test_lazy_index_arrays():
    a = np.arange(40, dtype=np.float32).reshape(8, 5)
    x = frit.asarray(a)
    i = frit.asarray(np.array([3, 1, 7, -1])) * 1  # lazy
    assert i._n.np is None
    iv = np.array([3, 1, 7, -1])
    np.testing.assert_array_equal(np.asarray(x[i]), a[iv])
    np.testing.assert_array_equal(np.asarray(x[i, 2]), a[iv, 2])
    np.testing.assert_array_equal(np.asarray(x[i, i % 5]), a[iv, iv % 5])
    np.testing.assert_array_equal(np.asarray(x[:, i % 5]), a[:, iv % 5])
    # out-of-range lazy indices raise IndexError as in numpy (the default bounds policy "check");
    # x.at[...].get(bounds="clamp") clamps them (negatives wrapped once first)
    j = frit.asarray(np.array([100, -100])) * 1
    with pytest.raises(IndexError, match="out of bounds"):
        x[j]
    with pytest.raises(IndexError, match="out of bounds"):
        x[j, j]
    np.testing.assert_array_equal(np.asarray(x.at[j].get(bounds="clamp")), a[[7, 0]])
    np.testing.assert_array_equal(np.asarray(x.at[j, j].get(bounds="clamp")), a[[7, 0], [4, 0]])


def test_non_contiguous_and_dtypes():
    for dt in [np.bool_, np.int8, np.uint16, np.int64, np.float16, np.float32]:
        a = (np.arange(48).reshape(4, 12) % 7).astype(dt)
        x = frit.asarray(a[:, ::-2])  # a non-contiguous input
        want = a[:, ::-2]
        for idx in [np.s_[1], np.s_[::-1, 1:4], np.s_[[0, 3], [5, 1]], np.s_[want[:, 0] > 2]]:
            np.testing.assert_array_equal(np.asarray(x[idx]), want[idx])
    b = frit.asarray(np.arange(6, dtype=np.float32), "bfloat16")
    np.testing.assert_array_equal(np.asarray(b[::-2]), np.arange(6, dtype=np.float32)[::-2])
    assert b[1].dtype == frit.bfloat16


@pytest.mark.parametrize("idx,exc", [
    (np.s_[3], IndexError), (np.s_[-4], IndexError), (np.s_[0, 5], IndexError),
    (np.s_[0, 0, 0], IndexError), (np.s_[[0, 3]], IndexError), (np.s_[:, [-5]], IndexError),
    (np.s_[1.5], IndexError), (np.s_[..., ...], IndexError), (np.s_[[1.5]], IndexError),
    (np.s_[[0, 1], [0, 1, 2]], IndexError), (np.s_[[True, False]], IndexError),
    (np.s_[::0], ValueError), (np.s_["a"], IndexError),
])
def test_errors(idx, exc):
    a = np.zeros((3, 4))
    with pytest.raises(exc):
        a[idx]
    with pytest.raises(exc):
        frit.asarray(a)[idx]


def test_setitem_rebinds_in_place():
    # x[idx] = v rebinds x (more in test_control_host.py); the source numpy array is untouched
    src = np.zeros(3)
    x = frit.asarray(src)
    x[0] = 1
    assert np.array_equal(np.asarray(x), [1, 0, 0]) and not src.any()


# ---------------------------------------------------------------- x.at[...]

def _ref_update(a, idx, v, mode):
    """numpy oracle: np.<ufunc>.at, or the positions of a[idx] visited in C order for set."""
    w = a.copy()
    if mode == "add":
        if w.dtype == np.bool_:
            np.logical_or.at(w, idx, v)
        else:
            np.add.at(w, idx, v)
    elif mode == "min":
        (np.logical_and if w.dtype == np.bool_ else np.minimum).at(w, idx, v)
    elif mode == "max":
        (np.logical_or if w.dtype == np.bool_ else np.maximum).at(w, idx, v)
    else:
        pos = np.arange(a.size).reshape(a.shape)[idx]
        vals = np.broadcast_to(np.asarray(v, dtype=a.dtype), pos.shape)
        flat = w.reshape(-1)
        for p, val in zip(pos.reshape(-1), vals.reshape(-1)):
            flat[p] = val
    return w


AT_CASES = [
    (np.s_[[0, 0, 2, 0]], None),
    (np.s_[1], None),
    (np.s_[-1, 2], None),
    (np.s_[:, [1, 1, 1]], None),
    (np.s_[[0, 3, 0], [2, 2, 2]], None),
    (np.s_[[[0], [0]], [1, 1, 3]], None),
    (np.s_[1:3], None),
    (np.s_[::-2, 1::2], None),
    (np.s_[[0, 1], :, None], None),
    (np.s_[...], None),
    (np.s_[[]], None),
    (np.s_[[2, 2]], (2, 1)),       # values broadcast along rows
    (np.s_[[2, 2], 0], ()),        # a scalar
]


@pytest.mark.parametrize("mode", ["set", "add", "min", "max"])
@pytest.mark.parametrize("dt", [np.float32, np.int32, np.bool_, np.uint8])
def test_at_modes(mode, dt):
    rng = np.random.default_rng(7)
    a = rng.integers(-9, 10, size=(4, 5)).astype(dt)
    x = frit.asarray(a)
    outs, wants = [], []
    for idx, vshape in AT_CASES:
        sel = a[idx].shape if vshape is None else vshape
        v = rng.integers(-9, 10, size=sel).astype(dt)
        wants.append(_ref_update(a, idx, v, mode))
        outs.append(getattr(x.at[idx], mode)(v))
    frit.realize(*outs)
    for (idx, _), o, w in zip(AT_CASES, outs, wants):
        assert o.dtype == x.dtype and o.shape == a.shape
        np.testing.assert_array_equal(np.asarray(o), w, err_msg="%s %s" % (mode, idx))
    np.testing.assert_array_equal(np.asarray(x), a)  # functional: x unchanged


def test_at_set_last_wins_and_accumulate():
    x = frit.zeros((3,), dtype=frit.float32)
    np.testing.assert_array_equal(np.asarray(x.at[[1, 1, 1]].set([5, 6, 7])), [0, 7, 0])
    np.testing.assert_array_equal(np.asarray(x.at[[1, 1, 1]].add([5, 6, 7])), [0, 18, 0])
    np.testing.assert_array_equal(np.asarray(x.at[[2, 2, 2]].min([5, -6, 7])), [0, 0, -6])
    np.testing.assert_array_equal(np.asarray(x.at[[0, 0]].max([5, -6])), [5, 0, 0])
    # a 2-d index: C order of x[idx] decides
    y = frit.zeros((2,), dtype=frit.int64).at[np.array([[0, 1], [0, 1]])].set([[1, 2], [3, 4]])
    np.testing.assert_array_equal(np.asarray(y), [3, 4])


def test_at_nan_and_floats():
    a = np.array([1.0, 2.0, np.nan, 4.0], np.float32)
    x = frit.asarray(a)
    v = np.array([np.nan, 0.5, 3.0], np.float32)
    idx = [0, 1, 2]
    for mode in ["min", "max", "add"]:
        np.testing.assert_array_equal(np.asarray(getattr(x.at[idx], mode)(v)), _ref_update(a, idx, v, mode))
    # float16 and bfloat16
    h = frit.asarray(np.arange(4, dtype=np.float16))
    np.testing.assert_array_equal(np.asarray(h.at[[1, 1]].add(0.5)), np.array([0, 2, 2, 3], np.float16))
    b = frit.asarray(np.arange(4, dtype=np.float32), "bfloat16")
    r = b.at[3].set(-1.5)
    assert r.dtype == frit.bfloat16
    np.testing.assert_array_equal(np.asarray(r), [0, 1, 2, -1.5])


def test_at_scalars_shapes_and_lazy():
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    x = frit.asarray(a) + 0  # lazy x
    np.testing.assert_array_equal(np.asarray(x.at[1, 2].set(-1)), _ref_update(a, np.s_[1, 2], -1, "set"))
    # lazy indices and lazy values
    i = frit.asarray(np.array([2, 0, 2])) * 1
    v = frit.asarray(np.array([10, 20, 30])) + 0
    np.testing.assert_array_equal(np.asarray(x.at[i, 1].add(v)),
                                  _ref_update(a, np.s_[[2, 0, 2], 1], [10, 20, 30], "add"))
    np.testing.assert_array_equal(np.asarray(x.at[:, i % 4].max(100)),
                                  _ref_update(a, np.s_[:, [2, 0, 2]], 100, "max"))
    # 0-d and size-0 arrays
    s = frit.asarray(np.float32(2.5))
    np.testing.assert_array_equal(np.asarray(s.at[()].add(1)), np.float32(3.5))
    np.testing.assert_array_equal(np.asarray(s.at[...].set(7)), np.float32(7))
    e = frit.zeros((0, 3))
    assert e.at[[]].add(1.0).shape == (0, 3)
    # boolean masks
    m = a % 3 == 0
    np.testing.assert_array_equal(np.asarray(x.at[m].set(0)), np.where(m, 0, a))
    np.testing.assert_array_equal(np.asarray(x.at[True].add(1)), a + 1)
    np.testing.assert_array_equal(np.asarray(x.at[False].add(1)), a)
    # get
    np.testing.assert_array_equal(np.asarray(x.at[1:, ::-1].get()), a[1:, ::-1])
    # values cast to x's dtype
    np.testing.assert_array_equal(np.asarray(x.at[0].set(np.array([1.7, 2.2, -3.9, 4.0]))),
                                  _ref_update(a, 0, np.array([1, 2, -3, 4]), "set"))


def test_at_errors():
    x = frit.zeros((3, 4))
    with pytest.raises(IndexError):
        x.at[3].set(1)
    with pytest.raises(IndexError):
        x.at[[0, -4]].add(1)
    with pytest.raises(ValueError):
        x.at[0].set(np.zeros(5))
    with pytest.raises(ValueError):
        x.at[[0, 1]].set(np.zeros((3, 4)))


def test_at_large_parallel():
    # many duplicates into a wide matrix: the update loop runs in parallel over columns
    rng = np.random.default_rng(3)
    a = rng.standard_normal((50, 300)).astype(np.float32)
    idx = rng.integers(0, 50, size=400)
    v = rng.standard_normal((400, 300)).astype(np.float32)
    x = frit.asarray(a)
    np.testing.assert_allclose(np.asarray(x.at[idx].add(v)), _ref_update(a, idx, v, "add"), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(np.asarray(x.at[idx].set(v)), _ref_update(a, idx, v, "set"))
    np.testing.assert_array_equal(np.asarray(x.at[idx].min(v)), _ref_update(a, idx, v, "min"))
    flat = frit.asarray(a.reshape(-1))
    i1 = rng.integers(-15000, 15000, size=5000)
    v1 = rng.standard_normal(5000).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(flat.at[i1].max(v1)), _ref_update(a.reshape(-1), i1, v1, "max"))


@pytest.mark.skipif(not hasattr(frit, "jit"), reason="frit.jit not available")
def test_indexing_and_at_under_jit():
    # traced with symbolic (duck-sized) shapes: one trace serves several sizes
    @frit.jit
    def f(x, i, v):
        return x.at[i].add(v), x[i], x[1:, ::-1], x[:, 0], x.at[1, -1].set(-1.0), x[-1, None]

    # same equality pattern of dims, each over 4 (smaller dims are static in the signature)
    for n, m, k in [(9, 6, 5), (11, 8, 7), (13, 10, 6)]:
        a = np.arange(n * m, dtype=np.float32).reshape(n, m)
        i = np.array([n - 1, 2, 2, 0, 1, 3, n - 2][:k])
        v = np.ones((k, m), np.float32)
        r = f(a, i, v)
        np.testing.assert_array_equal(np.asarray(r[0]), _ref_update(a, i, v, "add"))
        np.testing.assert_array_equal(np.asarray(r[1]), a[i])
        np.testing.assert_array_equal(np.asarray(r[2]), a[1:, ::-1])
        np.testing.assert_array_equal(np.asarray(r[3]), a[:, 0])
        np.testing.assert_array_equal(np.asarray(r[4]), _ref_update(a, np.s_[1, -1], -1.0, "set"))
        np.testing.assert_array_equal(np.asarray(r[5]), a[-1, None])
    if hasattr(f, "trace_count"):
        assert f.trace_count == 1


BASIC = [0, -1, 3, (1, 2), (-4, -6), slice(1, 3), slice(None, None, -1), (slice(None), 2), (2, slice(1, None, 2)),
         slice(10 ** 30, -10 ** 30, -1), (slice(-100, 100), slice(None, None, 3)), (), slice(None)]


@pytest.mark.parametrize("idx", BASIC, ids=repr)
def test_basic_index_fast_path_matches_numpy(idx):
    """Ints and slices of Python ints (frit._indexing._basic): one lazy op, a slice and a squeeze,
    against numpy, eager and under jit (static and default); x[0] is that one op."""
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    want = a[idx]
    x = frit.asarray(a)
    got = [x[idx], frit.jit(lambda t: t[idx], dynamic=False)(a), frit.jit(lambda t: t[idx])(a)]
    for g in got:
        assert np.asarray(g).shape == want.shape
        np.testing.assert_array_equal(np.asarray(g), want)
    if isinstance(idx, int):
        from frit import _ops
        assert x[idx]._n.expr[0] is _ops._b_basic_index


@pytest.mark.parametrize("idx", [4, -5, (0, 6), (0, 0, 0)], ids=repr)
def test_basic_index_errors_are_numpys(idx):
    a = np.zeros((4, 6), np.float32)
    with pytest.raises(IndexError) as want:
        a[idx]
    with pytest.raises(IndexError) as got:
        frit.asarray(a)[idx]
    assert str(got.value) == str(want.value)
