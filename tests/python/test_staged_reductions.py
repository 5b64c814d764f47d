"""Whole-array reductions staged in parallel parts (src/tensor/staged.c): parts of
floor(size / parts) elements and a tail, for the sizes eager ops and the default jit leave
symbolic, and parts that divide large static sizes. Every reduction is checked against numpy
eagerly, under the default jit and with static shapes, at sizes around the part boundaries, with
NaNs, ties and infinities; max's gradient against jax's (ties share it equally over the whole
array, not part by part)."""
import numpy as np
import pytest

import frit

# sizes: a single part, part boundaries (2048 elements to a part), many parts with a tail, a
# size the 128 parts divide, one past 2^20, and 2^20 itself (with static shapes, staged in 256
# parts: a static size is staged from 2^20 elements on where the parts divide it)
SIZES = [1, 7, 2047, 2048, 2049, 4096 * 5 + 77, 128 * 2048, (1 << 20) + 5, 1 << 20]
DTYPES = [np.float32, np.float64, np.float16, np.int32, np.uint8, np.int64, np.bool_]


def _data(n, dt, seed):
    rng = np.random.default_rng(seed)
    if dt == np.bool_:
        return rng.random(n) < 0.01
    if dt == np.uint8:
        return rng.integers(0, 255, n).astype(dt)
    if np.issubdtype(dt, np.integer):
        return rng.integers(-1000, 1000, n).astype(dt)
    return (rng.standard_normal(n) * 10).astype(dt)


def _paths(name):
    f = getattr(frit, name)
    jd, js = frit.jit(lambda a: f(a)), frit.jit(lambda a: f(a), dynamic=False)
    return (("eager", f), ("jit", jd), ("static", js))


def _same(got, want, exact):
    got = np.asarray(got)
    assert got.shape == np.shape(want) and got.dtype == np.asarray(want).dtype, (got, want)
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got.astype(np.float64), np.float64(want), rtol=2e-3, atol=1e-3)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
def test_whole_array_reductions_match_numpy(n, dt):
    x = _data(n, dt, n)
    fx = frit.asarray(x)
    names = ["max", "min", "argmax", "argmin", "any", "all"] + ([] if dt == np.bool_ else ["sum"])
    for name in names:
        want = getattr(np, name)(x)
        exact = name != "sum" or not np.issubdtype(dt, np.floating)
        for path, f in _paths(name):
            _same(f(fx), want, exact)


@pytest.mark.parametrize("n", [5, 2049, 4096 * 5 + 77, (1 << 20) + 5, 1 << 20])
@pytest.mark.parametrize("case", ["nan", "nan_last", "nan_tail", "all_-inf", "all_inf", "ties", "-0"])
@pytest.mark.parametrize("shape", ["1d", "2d"])
def test_extremes_with_nan_ties_and_infinities(n, case, shape):
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(np.float32)
    if case == "nan":
        x[rng.integers(0, n, 3)] = np.nan
    elif case == "nan_last":
        x[-1] = np.nan
    elif case == "nan_tail":  # in the elements past the whole parts
        x[n - 1 - (n % 128) // 2] = np.nan
    elif case == "all_-inf":
        x[:] = -np.inf
    elif case == "all_inf":
        x[:] = np.inf
    elif case == "ties":  # the extremes in several parts and in the tail
        x = np.round(x).astype(np.float32)
        x[[0, n // 3, n - 1]] = 9
        x[[1, n // 2, n - 2]] = -9
    elif case == "-0":
        x[:] = 0
        x[n // 2] = -0.0
    if shape == "2d":
        x = x.reshape(1, n)
    fx = frit.asarray(x)
    for name in ["max", "min", "argmax", "argmin"]:
        want = getattr(np, name)(x)
        for path, f in _paths(name):
            got = np.asarray(f(fx))
            if name in ("max", "min") and np.isnan(want):
                assert np.isnan(got), (path, name)
            else:
                assert got == want, (path, name, got, want)
    got = np.asarray(frit.argmax(fx, keepdims=True))
    want = np.argmax(x, keepdims=True)
    assert got.shape == want.shape and (got == want).all()


@pytest.mark.parametrize("n", [3000, (1 << 20)])  # symbolic under jit; the second static too
@pytest.mark.parametrize("op", ["max", "min"])
def test_max_gradient_ties_share_equally_over_the_whole_array(n, op):
    """Ties in different parts: 3 at the max, in parts of different sizes of tie; staged through
    the parts' own rules, the share would be 1/2 and 1/4 instead of 1/3 each."""
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    x = np.linspace(-1, 1, n).astype(np.float32)
    np.random.default_rng(0).shuffle(x)
    sign = 1 if op == "max" else -1
    x[[0, n // 2, n // 2 + 1]] = sign * 5.0
    want = np.asarray(jax.grad(lambda a: getattr(jnp, op)(a) * 3.0)(jnp.asarray(x)))
    f = getattr(frit, op)
    g_eager = frit.grad(lambda a: f(a) * 3.0)
    np.testing.assert_allclose(np.asarray(g_eager(frit.asarray(x))), want, rtol=1e-6)
    for dynamic in (True, False):
        g = frit.jit(frit.grad(lambda a: f(a) * 3.0), dynamic=dynamic)
        np.testing.assert_allclose(np.asarray(g(frit.asarray(x))), want, rtol=1e-6)


def test_static_whole_reductions_are_staged_at_two_to_the_twenty():
    """The static sizes the matrix above checks with dynamic=False at 2^20: staged in parts."""
    x = frit.asarray(np.zeros(1 << 20, np.float32))
    for f in (frit.max, frit.argmax, frit.sum):
        launches = [k.launch for k in frit.jit(lambda a: f(a), dynamic=False).lower(x).kernels]
        assert launches[0] == "(256)", (f.__name__, launches)


def test_whole_argmax_is_one_parallel_pass_and_a_small_combine():
    """The parts' max and first position in one kernel over every part; the candidates (one a
    part and the tail's elements) in two small ones. (A staged max and then a staged search for
    its first position, two parallel passes over x, took 1.1x as long.)"""
    x = frit.asarray(np.zeros((1000, 1000), np.float32))
    c = frit.jit(lambda a: frit.argmax(a)).lower(x)
    launches = [k.launch for k in c.kernels]
    assert launches == ["(max(min(n0 * n0 / 2048, 128), 1))", "(1)", "()"], launches


def test_flat_index_of_a_symbolic_2d_array_has_no_division():
    """x.sum() of a symbolic (m, n) array reads it as one flat run: (i % n) + (i / n) * n is i."""
    x = frit.asarray(np.ones((300, 70), np.float32))
    src = frit.jit(lambda a: frit.sum(a)).lower(x).source
    k0 = src[src.index("void frit_k0"):]
    k0 = k0[:k0.index("\n}\n")]
    loops = k0[k0.index("for ("):]
    assert "frit_mod_i64" not in k0 and "frit_idiv_i64" not in loops, k0
