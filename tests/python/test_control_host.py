"""Host-level shader-like code against numpy: in-place a[idx] = v (rebinding), in-place scatters,
x += y, host if_/else_ selects, frit.var outside kernels, host loops (static and dynamic trip
counts, start/end/step, nesting, break/continue, kernels in the body, ordering across
iterations), frit.indices, the bounds settings, and the errors. Every test runs eagerly and
inside frit.jit (symbolic shapes)."""
import numpy as np
import pytest

import frit

PATHS = ["eager", "jit"]


def run(path, f, *args):
    """f(*frit arrays) eagerly, or jitted (dynamic shapes); returns numpy results."""
    if path == "eager":
        out = f(*[frit.asarray(a) for a in args])
    else:
        out = frit.jit(f)(*args)
    if isinstance(out, tuple):
        return tuple(np.asarray(o) for o in out)
    return np.asarray(out)


# ---------------------------------------------------------------- a[idx] = v

SET_CASES = [
    (2, 7.0),
    (-1, 7.0),
    (slice(1, 4), 3.5),
    (slice(None, None, -2), np.arange(3.0)),
    ((Ellipsis,), -1.0),
    (np.array([4, 0, 4, 2]), np.array([1.0, 2.0, 3.0, 4.0])),   # duplicate 4: last wins
    (np.array([True, False, True, False, True]), 9.0),
]


@pytest.mark.parametrize("case", range(len(SET_CASES)))
@pytest.mark.parametrize("path", PATHS)
def test_setitem_1d(path, case):
    idx, v = SET_CASES[case]
    a = np.arange(5.0) * 10

    def f(x):
        x[idx] = v
        return x

    want = a.copy()
    want[idx] = v
    got = run(path, f, a)
    assert np.array_equal(got, want), (got, want)


@pytest.mark.parametrize("path", PATHS)
def test_setitem_2d_rows_columns_and_index_arrays(path):
    a = np.arange(12, dtype=np.int32).reshape(3, 4)

    def f(x):
        x[1] = -1                     # a row
        x[:, 2] = np.int32(100)       # a column
        x[np.array([0, 2]), np.array([3, 0])] = 7
        x[2, 1] += 5                  # read-modify-write of one element
        return x

    want = a.copy()
    want[1] = -1
    want[:, 2] = 100
    want[np.array([0, 2]), np.array([3, 0])] = 7
    want[2, 1] += 5
    assert np.array_equal(run(path, f, a), want)


@pytest.mark.parametrize("dt", [np.bool_, np.int8, np.uint16, np.int64, np.float16, np.float32,
                                np.float64])
def test_setitem_casts_values_like_numpy(dt):
    a = np.zeros(6, dt)
    x = frit.asarray(a)
    vals = np.array([1.75, -0.0, 3.0])
    x[np.array([0, 3, 5])] = vals
    want = a.copy()
    want[np.array([0, 3, 5])] = vals.astype(dt)
    assert np.array_equal(np.asarray(x), want)


def test_setitem_rebinds_only_that_array():
    src = np.arange(4.0)
    x = frit.asarray(src)
    y = x                   # the same Array object: sees the write, as a numpy alias would
    z = x.copy()            # a copy: does not
    w = x * 1               # a value computed before the write: does not
    x[0] = 42
    assert np.asarray(y)[0] == 42
    assert np.asarray(z)[0] == 0 and np.asarray(w)[0] == 0
    assert src[0] == 0      # the numpy array x was made from is untouched


def test_setitem_lazy_and_sequenced():
    x = frit.arange(6) * 2    # lazy
    x[1] = 0
    x[1] += 3                 # read after write
    x[x > 5] = -1             # a mask computed from the new version
    want = np.arange(6) * 2
    want[1] = 0
    want[1] += 3
    want[want > 5] = -1
    assert np.array_equal(np.asarray(x), want)


def test_inplace_operator_rebinds():
    src = np.ones(3, np.float32)
    x = frit.asarray(src)
    y = x
    x += 2
    x *= np.float32(3)
    assert np.array_equal(np.asarray(y), [9, 9, 9]) and np.asarray(y).dtype == np.float32
    assert src[0] == 1


# ---------------------------------------------------------------- in-place scatters

SCATTER = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
           "or": np.bitwise_or, "xor": np.bitwise_xor}


@pytest.mark.parametrize("mode", list(SCATTER) + ["set"])
@pytest.mark.parametrize("path", PATHS)
def test_scatter_inplace_with_duplicates(path, mode):
    rng = np.random.default_rng(1)
    a = rng.integers(0, 1000, size=16).astype(np.int32)
    idx = rng.integers(0, 16, size=40)          # many duplicates
    v = rng.integers(0, 1000, size=40).astype(np.int32)

    def f(x, vals):
        getattr(frit, "scatter_" + mode)(x, idx, vals)
        return x

    want = a.copy()
    if mode == "set":
        for j, p in enumerate(idx):
            want[p] = v[j]
    else:
        SCATTER[mode].at(want, idx, v)
    assert np.array_equal(run(path, f, a, v), want)


def test_scatter_inplace_histogram_float():
    rng = np.random.default_rng(2)
    b = rng.integers(0, 10, size=1000)
    h = frit.zeros(10, frit.float32)
    frit.scatter_add(h, b, 1.0)
    assert np.array_equal(np.asarray(h), np.bincount(b, minlength=10).astype(np.float32))


def test_scatter_inplace_errors():
    x = frit.zeros(4, frit.float32)
    with pytest.raises(frit.FritError, match="scatter"):
        frit.scatter_xor(x, np.array([0]), 1)
    with pytest.raises(frit.FritTypeError, match="scatter_add"):
        frit.scatter_add(np.zeros(3), np.array([0]), 1)


# ---------------------------------------------------------------- host if_ / else_

@pytest.mark.parametrize("flag", [False, True])
@pytest.mark.parametrize("path", PATHS)
def test_host_if_else_selects(path, flag):
    a = np.arange(5.0)
    t = np.array(2.0 if flag else 100.0)

    def f(x, thr):
        y = x * 1
        with frit.if_(x.sum() > thr):
            x[0] = -1.0
            y += 10
        with frit.else_():
            x[1] = -2.0
        return x, y

    want = a.copy()
    wy = a.copy()
    if a.sum() > t:
        want[0] = -1
        wy += 10
    else:
        want[1] = -2
    gx, gy = run(path, f, a, t)
    assert np.array_equal(gx, want) and np.array_equal(gy, wy)


@pytest.mark.parametrize("c1", [False, True])
@pytest.mark.parametrize("c2", [False, True])
def test_host_if_nested_and_var(c1, c2):
    x = frit.zeros(3, frit.int32)
    v = frit.var(0, frit.int32)
    with frit.if_(frit.asarray(c1)):
        x[0] = 1
        v.set(v + 1)
        with frit.if_(frit.asarray(c2)):
            x[1] = 2
            v += 10
        with frit.else_():
            x[2] = 3
    want = np.zeros(3, np.int32)
    wv = 0
    if c1:
        want[0] = 1
        wv += 1
        if c2:
            want[1] = 2
            wv += 10
        else:
            want[2] = 3
    assert np.array_equal(np.asarray(x), want)
    assert int(v.get()) == wv


def test_host_if_errors():
    with pytest.raises(frit.FritError, match="frit.if_.*0-d"):
        with frit.if_(frit.ones(3) > 0):
            pass
    with pytest.raises(frit.FritError, match="frit.else_"):
        with frit.else_():
            pass
    x = frit.zeros(2)
    with frit.if_(True):
        x[0] = 1
    x[1] = 2                        # something between: else_ no longer follows the if_
    with frit.if_(True):
        pass
    with pytest.raises(frit.FritError, match="frit.else_"):
        with frit.loop(1):
            with frit.else_():
                pass


# ---------------------------------------------------------------- frit.var on the host

def test_host_var_get_set_operand():
    v = frit.var(1.5, frit.float32)
    assert v.dtype == frit.float32 and v.shape == ()
    v.set(v * 2 + 1)
    assert float(v.get()) == 4.0
    v -= 1
    assert float(v) == 3.0
    assert np.asarray(frit.ones(2) + v).tolist() == [4.0, 4.0]
    assert float(2 ** v) == 8.0
    w = frit.var(np.arange(3))                # n-d
    w.set(5)                                  # broadcast
    assert np.asarray(w.get()).tolist() == [5, 5, 5]
    snap = w.get()
    w.set(w + 1)
    assert np.asarray(snap).tolist() == [5, 5, 5]


# ---------------------------------------------------------------- frit.indices

@pytest.mark.parametrize("shape", [(4,), (2, 3), (2, 1, 3), ()])
def test_indices(shape):
    got = frit.indices(shape)
    want = np.indices(shape)
    assert len(got) == len(shape)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.int64 and np.array_equal(np.asarray(g), w)


def test_indices_of_symbolic_shape_in_jit():
    f = frit.jit(lambda x: tuple(i * 1 for i in frit.indices(x)))
    for shape in [(3, 5), (7, 2)]:
        got = f(np.zeros(shape))
        for g, w in zip(got, np.indices(shape)):
            assert np.array_equal(np.asarray(g), w)
    assert f.trace_count == 1 and f.fallback_count == 0


# ---------------------------------------------------------------- bounds settings

def test_bounds_settings():
    old = frit.get_bounds()
    try:
        frit.set_bounds("check")
        assert frit.get_bounds() == "check"
        frit.set_bounds("clamp")
        assert frit.get_bounds() == "clamp"
    finally:
        frit.set_bounds(old)
    with pytest.raises(frit.FritError, match="set_bounds"):
        frit.set_bounds("wrap")
    with pytest.raises(frit.FritError, match="bounds"):
        frit.jit(lambda x: x, bounds="nope")
    with pytest.raises(frit.FritError, match="bounds"):
        frit.Session(bounds="nope")
