"""Regression tests for bugs the op matrix and the numpy fuzzer found (issue 10), each checked
against numpy eagerly and under frit.jit (the op matrix rows cover them at two shapes)."""
import numpy as np
import pytest

import frit


def both(f, *arrays):
    """f(frit, *frit arrays) eagerly, and jitted."""
    eager = np.asarray(f(frit, *[frit.asarray(a) for a in arrays]))
    g = frit.jit(lambda *xs: f(frit, *xs))
    jitted = np.asarray(g(*arrays))
    return eager, jitted, g


def check(f, *arrays):
    want = f(np, *arrays)
    eager, jitted, _ = both(f, *arrays)
    for got in (eager, jitted):
        assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
        assert np.array_equal(got, want, equal_nan=got.dtype.kind == "f"), (got, want)


def test_isclose_infinity_is_close_only_to_itself():
    a = np.array([np.nan, 1.0, np.inf, -np.inf, np.inf, 2.0])
    b = np.array([-np.inf, np.inf, 1.0, np.nan, np.inf, 2.0 + 1e-9])
    check(lambda xp, x, y: xp.isclose(x, y), a, b)
    check(lambda xp, x, y: xp.isclose(x, y, equal_nan=True), a, b[::-1].copy())


@pytest.mark.parametrize("dt", ["bool", "int8", "uint8", "int16", "uint32", "float32"])
def test_vecdot_keeps_the_operand_dtype(dt):
    x = (np.arange(60).reshape(2, 30) * 7).astype(dt)
    check(lambda xp, a: xp.vecdot(a, a), x)


@pytest.mark.parametrize("dt", ["bool", "int8", "uint8", "uint16"])
@pytest.mark.parametrize("fn", ["sum", "prod", "cumsum"])
def test_reduction_dtype_is_the_accumulator(dt, fn):
    """numpy's sum(x, dtype=uint8) wraps in uint8 and dtype=bool is any; frit returned uint64."""
    x = (np.arange(1, 61).reshape(2, 30) * 7).astype(dt)
    check(lambda xp, a: getattr(xp, fn)(a, axis=1, dtype=a.dtype), x)


@pytest.mark.parametrize("lo,hi", [(-3, None), (None, 300), (-300, 50), (2, 1000)])
def test_clip_integer_bounds_beyond_the_dtype(lo, hi):
    for dt in ("uint8", "int8", "uint64"):
        x = np.array([0, 1, 2, 100, 127], dt)
        check(lambda xp, a: xp.clip(a, lo, hi), x)


def test_logical_ops_take_the_truth_of_python_scalars():
    for dt, s in (("uint64", -1), ("int8", 300), ("uint8", float("nan")), ("int16", 0)):
        x = np.array([0, 1, 2], dt)
        for f in ("logical_and", "logical_or", "logical_xor"):
            check(lambda xp, a: getattr(xp, f)(a, s), x)
            check(lambda xp, a: getattr(xp, f)(s, a), x)


def test_var_in_an_eager_host_loop_carries_its_value():
    """Found by the fuzzer: eagerly, frit.Var(x).get() inside frit.loop read the initial data in
    every iteration (one iteration's result after three); under jit it was right."""
    def f(x):
        v = frit.Var(x)
        with frit.loop(3):
            v.set(v.get() * 2 + 1)
        return v.get()

    a = np.arange(6.0).reshape(2, 3)
    want = a
    for _ in range(3):
        want = want * 2 + 1
    assert np.array_equal(np.asarray(f(frit.asarray(a))), want)
    assert np.array_equal(np.asarray(frit.jit(f)(a)), want)


def test_sum_of_a_flipped_array_with_static_shapes():
    """GCC 12.2 -O3 miscompiled this kernel (a reduction over a nest with static trip counts and a
    negative middle stride); frit's default flags now avoid it (src/codegen/codegen.h)."""
    x = np.ones((4, 5, 4), np.int8)
    f = frit.jit(lambda a: frit.sum(frit.flip(a, axis=(1, -1)).astype(frit.float64)),
                 dynamic=False)
    assert float(np.asarray(f(x))) == 80.0
    g = frit.jit(lambda a: frit.mean(frit.flip(a, axis=(1, -1)), keepdims=True), dynamic=False)
    assert np.asarray(g(x)).ravel()[0] == 1.0


def test_setitem_with_a_boolean_mask_and_a_scalar_under_jit():
    """Found by the op matrix: x[mask] = v raised under jit ('boolean mask indexing needs the
    mask's values'), though it is a where with no data-dependent shape."""
    def f(x, m):
        x = x.copy()
        x[m] = 7
        return x

    for shape in ((3, 4), (5, 6)):
        a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        m = a % 3 == 0
        want = a.copy()
        want[m] = 7
        g = frit.jit(f)
        assert np.array_equal(np.asarray(g(a, m)), want)
        assert np.array_equal(np.asarray(f(frit.asarray(a), frit.asarray(m))), want)
    with pytest.raises(IndexError):
        f(frit.asarray(np.zeros((3, 4))), frit.asarray(np.zeros((1, 4), bool)))
