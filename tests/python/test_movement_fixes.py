"""Movement ops that were wrong under frit.jit or missing numpy cases (issue 10): roll on symbolic
dims, pad modes and wide pads, expand_dims axes, repeat with per-element counts. Each is checked
against numpy eagerly and under frit.jit called with two shapes (one trace)."""
import numpy as np
import pytest

import frit


def _both(fn, np_fn, shapes, dtype=np.float64, same_trace=True):
    """fn eager and jitted (two shapes) against np_fn."""
    f = frit.jit(fn)
    for shape in shapes:
        a = (np.arange(int(np.prod(shape))) * 3 % 7).astype(dtype).reshape(shape)
        e = np_fn(a)
        r = fn(frit.asarray(a))
        assert r.shape == e.shape
        np.testing.assert_array_equal(np.asarray(r), e)
        rj = f(frit.asarray(a))
        assert tuple(rj.shape) == e.shape
        np.testing.assert_array_equal(np.asarray(rj), e)
    if same_trace:
        assert f.trace_count == 1, "jit retraced for a new shape"
    return f


# ---------------------------------------------------------------- roll

ROLLS = [(1, 0), (-1, 0), (7, 1), (-13, -1), (100, None), (-3, None), ((1, 2), (0, 1)),
         ((2, -5), (1, 1)), ((1, 1), 0), (0, 0), (2 ** 40, 0), (-(2 ** 62), 1)]


@pytest.mark.parametrize("shift,axis", ROLLS)
def test_roll(shift, axis):
    _both(lambda x: frit.roll(x, shift, axis), lambda x: np.roll(x, shift, axis), [(6, 8), (5, 7)])


def test_roll_issue_example():
    f = frit.jit(lambda a: frit.roll(a, 1, 0))
    a = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(np.asarray(f(frit.asarray(a))), np.roll(a, 1, 0))


def test_roll_int_and_3d():
    _both(lambda x: frit.roll(x, (2, -1), (0, 2)), lambda x: np.roll(x, (2, -1), (0, 2)),
          [(6, 5, 8), (7, 9, 5)], dtype=np.int32)


def test_roll_errors():
    x = frit.asarray(np.zeros((3, 4)))
    with pytest.raises(frit.FritError, match="axis"):
        frit.roll(x, 1, 2)
    with pytest.raises(frit.FritError, match="broadcast"):
        frit.roll(x, (1, 2, 3), (0, 1))


def _heat(xp, u, steps=20):
    for _ in range(steps):
        lap = (xp.roll(u, 1, 0) + xp.roll(u, -1, 0) + xp.roll(u, 1, 1) + xp.roll(u, -1, 1) - 4 * u)
        u = u + 0.1 * lap
    return u


def test_heat_stencil_jit():
    f = frit.jit(lambda u: _heat(frit, u))
    rng = np.random.default_rng(0)
    for shape in [(6, 9), (11, 5)]:
        u = rng.random(shape)
        np.testing.assert_allclose(np.asarray(f(frit.asarray(u))), _heat(np, u), rtol=1e-12, atol=1e-12)
    assert f.trace_count == 1


# ---------------------------------------------------------------- pad

MODES = ["constant", "edge", "reflect", "symmetric", "wrap"]
WIDTHS = [1, ((1, 2), (0, 3)), ((7, 9), (11, 0)), ((0, 0), (13, 5))]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("pw", WIDTHS)
def test_pad(mode, pw):
    _both(lambda x: frit.pad(x, pw, mode), lambda x: np.pad(x, pw, mode), [(6, 8), (5, 7)])


@pytest.mark.parametrize("mode", ["edge", "reflect", "symmetric", "wrap"])
def test_pad_unit_axis(mode):
    a = np.arange(3.0).reshape(1, 3)
    np.testing.assert_array_equal(np.asarray(frit.pad(frit.asarray(a), 4, mode)), np.pad(a, 4, mode))


def test_pad_errors():
    x = frit.asarray(np.zeros((3, 4)))
    with pytest.raises(frit.FritError, match="linear_ramp"):
        frit.pad(x, 1, "linear_ramp")
    with pytest.raises(frit.FritError, match="negative"):
        frit.pad(x, -1, "wrap")
    with pytest.raises(frit.FritError, match="empty axis"):
        frit.pad(frit.asarray(np.zeros((0, 2))), 1, "wrap")


# ---------------------------------------------------------------- expand_dims

@pytest.mark.parametrize("axis", [3, -4, 0, -1, (0, 4), (3, 4), (-1, -5), (1, -2)])
def test_expand_dims(axis):
    _both(lambda x: frit.expand_dims(x, axis), lambda x: np.expand_dims(x, axis),
          [(6, 7, 8), (5, 9, 6)])


@pytest.mark.parametrize("axis", [4, -5, (0, 0), (0, 5)])
def test_expand_dims_errors(axis):
    with pytest.raises(frit.FritError):
        frit.expand_dims(frit.asarray(np.zeros((2, 3, 4))), axis)


# ---------------------------------------------------------------- repeat

REPEATS = [([1, 0, 3], 0), ((2, 1, 0, 1), 1), (np.array([2]), 0), ([2], None),
           (list(range(12)), None), (3, 1), (np.array([1, 2, 3]), -2), ([0, 0, 0], 0)]


@pytest.mark.parametrize("reps,axis", REPEATS)
def test_repeat(reps, axis):
    a = np.arange(12.0).reshape(3, 4)
    e = np.repeat(a, reps, axis)
    for r in (reps, frit.asarray(np.asarray(reps))):
        np.testing.assert_array_equal(np.asarray(frit.repeat(frit.asarray(a), r, axis)), e)
    f = frit.jit(lambda x: frit.repeat(x, reps, axis))
    np.testing.assert_array_equal(np.asarray(f(frit.asarray(a))), e)
    if np.ndim(reps) == 0 or np.size(reps) == 1:  # scalar counts: symbolic shapes, one trace
        traces = f.trace_count  # (3, 4) has static dims (4 and less); (5, 7) and (6, 9) share one
        for shape in ((5, 7), (6, 9)):
            b = np.arange(float(np.prod(shape))).reshape(shape)
            np.testing.assert_array_equal(np.asarray(f(frit.asarray(b))), np.repeat(b, reps, axis))
        assert f.trace_count == traces + 1


def test_repeat_errors():
    a = frit.asarray(np.arange(12.0).reshape(3, 4))
    with pytest.raises(frit.FritError, match="broadcast"):
        frit.repeat(a, [1, 2], 0)
    with pytest.raises(frit.FritError, match="negative"):
        frit.repeat(a, [1, -1, 2], 0)
    with pytest.raises(TypeError):
        frit.repeat(a, [1.5, 2, 1], 0)
    f = frit.jit(lambda x, r: frit.repeat(x, r, 0))
    with pytest.raises(frit.FritError, match="traced"):
        f(a, frit.asarray(np.array([1, 2, 3])))


def test_iterated_slice_stencil_jit():
    """x[2:] + x[:-2] - 2 x[1:-1] repeated: the scheduler materialises each step instead of
    recomputing earlier steps along every path (compile time was exponential in the steps)."""
    def st(xp, u):
        for _ in range(20):
            u = xp.pad(u[2:] + u[:-2] - 2 * u[1:-1], 1) * 0.25 + u
        return u
    f = frit.jit(lambda u: st(frit, u))
    rng = np.random.default_rng(1)
    for n in (30, 41):
        u = rng.random(n)
        np.testing.assert_allclose(np.asarray(f(frit.asarray(u))), st(np, u), rtol=1e-12)
    assert f.trace_count == 1
