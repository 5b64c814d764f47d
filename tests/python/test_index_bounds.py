"""One meaning for out-of-range integer indices in eager code and under frit.jit (issue 10): by
default they raise IndexError as in numpy (under jit when the compiled function runs); bounds=
"clamp" (per call, or frit.jit(bounds="clamp")) clamps them after wrapping negatives once. Also
regression tests for functions that read shapes and were wrong or failing on symbolic dims."""
import numpy as np
import pytest

import frit

A = np.arange(30.0).reshape(5, 6)
B = np.arange(63.0).reshape(9, 7)


def _clamped(i, n):
    i = np.asarray(i)
    return np.clip(np.where(i < 0, i + n, i), 0, n - 1)


# ---------------------------------------------------------------- default: IndexError

CASES = [  # (name, fn(x, i), a valid index for A and B, an out-of-range one for A, same length)
    ("getitem", lambda x, i: x[i], [0, 4, -5], [0, 5, 1]),
    ("getitem_neg", lambda x, i: x[i], [-1, -5], [-6, 1]),
    ("getitem_2d", lambda x, i: x[i, i], [1, -2], [1, 6]),
    ("getitem_col", lambda x, i: x[:, i], [0, 5, -6], [6, 0, 1]),
    ("take", lambda x, i: frit.take(x, i, axis=1), [0, 5], [0, 7]),
    ("take_flat", lambda x, i: frit.take(x, i), [0, 29, 3], [30, 0, 3]),
    ("at_set", lambda x, i: x.at[i].set(0.0), [0, 4], [2, 5]),
    ("at_add", lambda x, i: x.at[i].add(1.0), [0, -5, 3], [-6, 0, 1]),
]


def _np(name, a, i):
    i = np.asarray(i)
    if name.startswith("getitem"):
        return {"getitem": lambda: a[i], "getitem_neg": lambda: a[i],
                "getitem_2d": lambda: a[i, i], "getitem_col": lambda: a[:, i]}[name]()
    if name == "take":
        return np.take(a, i, axis=1)
    if name == "take_flat":
        return np.take(a, i)
    y = a.copy()
    if name == "at_set":
        y[i] = 0.0
    else:
        np.add.at(y, i, 1.0)
    return y


@pytest.mark.parametrize("name,fn,good,bad", CASES, ids=[c[0] for c in CASES])
def test_out_of_range_raises_eager_and_jit(name, fn, good, bad):
    f = frit.jit(fn)
    for a in (A, B):
        e = _np(name, a, good)
        for i in (np.array(good), frit.asarray(np.array(good)) * 1):  # concrete and lazy
            np.testing.assert_array_equal(np.asarray(fn(frit.asarray(a), i)), e)
        np.testing.assert_array_equal(np.asarray(f(frit.asarray(a), frit.asarray(np.array(good)))), e)
    with pytest.raises(IndexError):
        _np(name, A, bad)  # numpy agrees the index is out of range
    for i in (np.array(bad), frit.asarray(np.array(bad)) * 1):
        with pytest.raises(IndexError, match="out of bounds"):
            np.asarray(fn(frit.asarray(A), i))
    traces = f.trace_count
    with pytest.raises(IndexError, match="out of bounds.*size"):
        f(frit.asarray(A), frit.asarray(np.array(bad)))
    assert f.trace_count == traces  # the check is in the compiled code, not a retrace
    if name != "getitem_2d":  # several index arrays need static sizes (one trace per shape)
        assert traces == 1


def test_take_along_axis_bounds():
    idx_ok = np.array([[0, 5, -6, 2, 1, 0]] * 5)
    idx_bad = idx_ok.copy()
    idx_bad[3, 2] = 6
    f = frit.jit(lambda x, i: frit.take_along_axis(x, i, axis=1))
    g = frit.jit(lambda x, i: frit.take_along_axis(x, i, axis=1), bounds="clamp")
    np.testing.assert_array_equal(np.asarray(f(frit.asarray(A), frit.asarray(idx_ok))),
                                  np.take_along_axis(A, idx_ok, axis=1))
    for run in (lambda: f(frit.asarray(A), frit.asarray(idx_bad)),
                lambda: frit.take_along_axis(frit.asarray(A), idx_bad, axis=1)):
        with pytest.raises(IndexError, match="take_along_axis: index 6 is out of bounds for axis 1"):
            run()
    want = np.take_along_axis(A, _clamped(idx_bad, 6), axis=1)
    np.testing.assert_array_equal(np.asarray(g(frit.asarray(A), frit.asarray(idx_bad))), want)
    np.testing.assert_array_equal(
        np.asarray(frit.take_along_axis(frit.asarray(A), idx_bad, axis=1, bounds="clamp")), want)


def test_error_names_op_axis_dim_and_index():
    f = frit.jit(lambda x, i: frit.take(x, i, axis=0))
    with pytest.raises(IndexError, match=r"take: index 12 is out of bounds for axis 0 with size 9"):
        f(frit.asarray(B), frit.asarray(np.array([1, 12, 3])))
    with pytest.raises(IndexError, match=r"index -10 is out of bounds for axis 0 with size 9"):
        f(frit.asarray(B), frit.asarray(np.array([-10])))


def test_int_index_on_symbolic_dim():
    f = frit.jit(lambda x: (x[3], x[-1, 2], x[:, -6]))
    for a in (A, B):
        for r, e in zip(f(frit.asarray(a)), (a[3], a[-1, 2], a[:, -6])):
            np.testing.assert_array_equal(np.asarray(r), e)
    assert f.trace_count == 1
    # a dim of 4 or less is static in the signature: the bound is checked when traced
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 2"):
        f(frit.asarray(np.zeros((2, 6))))


# ---------------------------------------------------------------- opt-in: clamp

def test_clamp_opt_in_per_call():
    x = frit.asarray(A)
    i = np.array([7, -1, -9, 2])
    np.testing.assert_array_equal(np.asarray(frit.take(x, i, axis=0, bounds="clamp")),
                                  A[_clamped(i, 5)])
    np.testing.assert_array_equal(np.asarray(x.at[i].get(bounds="clamp")), A[_clamped(i, 5)])
    want = A.copy()
    want[_clamped(i, 5)] = -1.0
    np.testing.assert_array_equal(np.asarray(x.at[i].set(-1.0, bounds="clamp")), want)
    lazy = frit.asarray(i) * 1
    np.testing.assert_array_equal(np.asarray(x.at[lazy].get(bounds="clamp")), A[_clamped(i, 5)])
    with pytest.raises(frit.FritError, match="bounds"):
        frit.take(x, i, bounds="wrap")


def test_clamp_opt_in_per_jit():
    f = frit.jit(lambda x, i: (x[i], frit.take(x, i, axis=1), x.at[i].add(1.0)), bounds="clamp")
    i = np.array([7, -1, -9, 2])
    for a in (A, B):
        r = f(frit.asarray(a), frit.asarray(i))
        np.testing.assert_array_equal(np.asarray(r[0]), a[_clamped(i, a.shape[0])])
        np.testing.assert_array_equal(np.asarray(r[1]), a[:, _clamped(i, a.shape[1])])
        want = a.copy()
        np.add.at(want, _clamped(i, a.shape[0]), 1.0)
        np.testing.assert_array_equal(np.asarray(r[2]), want)
    assert f.trace_count == 1


# ---------------------------------------------------------------- symbolic-dim audit

def _jit_two(fn, np_fn, shapes):
    f = frit.jit(fn)
    for s in shapes:
        a = np.arange(float(np.prod(s))).reshape(s)
        r = f(frit.asarray(a))
        np.testing.assert_array_equal(np.asarray(r), np_fn(a))
        np.testing.assert_array_equal(np.asarray(fn(frit.asarray(a))), np_fn(a))
    return f


def test_atleast_2d_symbolic():
    f = _jit_two(frit.atleast_2d, np.atleast_2d, [(5,), (7,)])
    assert f.trace_count == 1


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_argmax_keepdims_symbolic(axis):
    f = _jit_two(lambda x: frit.argmax(x, axis=axis, keepdims=True),
                 lambda x: np.argmax(x, axis=axis, keepdims=True), [(5, 6), (7, 8)])
    assert f.trace_count == 1


def test_tensordot_and_mask_fall_back_to_static_shapes():
    """Functions that need static sizes say so under symbolic tracing; jit then traces with the
    concrete shapes and the answer is right."""
    _jit_two(lambda x: frit.tensordot(x, x, axes=([0], [0])),
             lambda x: np.tensordot(x, x, axes=([0], [0])), [(5, 6), (7, 3)])
    m = np.array([True, False, True, True, False])
    _jit_two(lambda x: x[m], lambda x: x[m], [(5, 6), (5, 3)])


def test_broadcast_arrays_under_jit():
    f = frit.jit(lambda x, y: frit.broadcast_arrays(x, y))
    for n in (3, 5):
        a, b = np.arange(float(n)).reshape(n, 1), np.arange(4.0)
        for r, e in zip(f(frit.asarray(a), frit.asarray(b)), np.broadcast_arrays(a, b)):
            np.testing.assert_array_equal(np.asarray(r), e)
