"""Float sums as accurate as numpy's pairwise summation: the error of frit's sum (and of mean,
var, std, which build on it) against a float64 reference stays within a small factor of numpy's
own error, eagerly, under jit (two shapes), along inner and outer axes, and in the interpreter;
constant inputs, where a running float32 sum drifts or saturates, come out exact."""
import numpy as np
import pytest

import frit
from frit import _lib as L


def rel_err(got, ref):
    got, ref = np.asarray(got, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    return float(np.max(np.abs(got - ref) / np.abs(ref)))


ULP32 = 2.0 ** -23  # a float32 result is only known to about this (relative), numpy's too


def within_numpy(got, ref, np_got, floor=ULP32):
    """frit's error at most 4x numpy's, plus a floor: the rounding of the result itself, which
    numpy's may happen to escape (a running float32 sum is off by 1e-5 on these inputs)."""
    e, e_np = rel_err(got, ref), rel_err(np_got, ref)
    assert e <= 4 * e_np + floor, (e, e_np)


@pytest.fixture(scope="module")
def big32():
    # 2^24 uniform float32: a running float32 sum is off by ~1e-5 here, numpy by ~1e-8
    return np.random.default_rng(7).random(1 << 24, dtype=np.float32)


def test_sum_f32_eager(big32):
    ref = np.sum(big32, dtype=np.float64)
    within_numpy(float(frit.asarray(big32).sum()), ref, big32.sum())


def test_sum_f32_jit_two_shapes(big32):
    f = frit.jit(lambda a: a.sum())
    for n in (1 << 24, (1 << 23) + 12345):
        x = big32[:n]
        within_numpy(float(f(frit.asarray(x))), np.sum(x, dtype=np.float64), x.sum())


def test_mean_var_std_f32(big32):
    x = big32[: 1 << 23]
    x64 = x.astype(np.float64)
    a = frit.asarray(x)
    within_numpy(float(a.mean()), x64.mean(), x.mean())
    within_numpy(float(frit.var(a)), x64.var(), x.var())
    within_numpy(float(frit.std(a)), x64.std(), x.std())


@pytest.mark.parametrize("keepdims", [False, True])
def test_axis_sums_f32(keepdims):
    rng = np.random.default_rng(3)
    x = rng.random((4, 1 << 20), dtype=np.float32)
    x64 = x.astype(np.float64)
    f = frit.jit(lambda a: a.sum(axis=1, keepdims=keepdims))
    for arr in (x, x[:3, : (1 << 19) + 7]):
        got = np.asarray(f(frit.asarray(arr)))
        want = arr.sum(axis=1, keepdims=keepdims)
        assert got.shape == want.shape
        within_numpy(got, arr.astype(np.float64).sum(axis=1, keepdims=keepdims), want)
    # the outer axis (numpy itself adds row by row there)
    y = np.ascontiguousarray(x.T)
    got = np.asarray(frit.asarray(y).sum(axis=0, keepdims=keepdims))
    within_numpy(got, x64.sum(axis=1), y.sum(axis=0))


def test_sum_f64():
    x = np.random.default_rng(5).random(1 << 22)
    ref = np.sum(x.astype(np.longdouble))
    within_numpy(float(frit.asarray(x).sum()), ref, x.sum(), 2.0 ** -52)
    f = frit.jit(lambda a: a.sum(axis=-1))
    for n in (1 << 20, 1000003):
        y = x[: 2 * n].reshape(2, n)
        within_numpy(np.asarray(f(frit.asarray(y))), y.astype(np.longdouble).sum(axis=-1), y.sum(axis=-1), 2.0 ** -52)


def test_sum_f16_accumulates_in_f32():
    # numpy sums float16 pairwise in float32 and rounds once; a float16 running sum would stop
    # growing at 2048
    x = np.full(1 << 20, 0.1, dtype=np.float16)
    got = frit.asarray(x).sum()
    assert got.dtype == frit.float16
    assert float(got) == float(x.sum())
    g = frit.jit(lambda a: a.sum(axis=0))
    for n in (1 << 20, 99991):
        assert float(g(frit.asarray(x[:n]))) == float(x[:n].sum())


def test_sum_bf16_accumulates_in_f32():
    x = np.random.default_rng(11).random(1 << 20, dtype=np.float32)
    b = frit.asarray(x).astype(frit.bfloat16)
    vals = np.asarray(b.astype(frit.float32), dtype=np.float64)  # the bf16 values, exactly
    got = b.sum()
    assert got.dtype == frit.bfloat16
    assert rel_err(float(got.astype(frit.float32)), vals.sum()) <= 2.0 ** -8


@pytest.mark.parametrize("c", [0.1, 3.3, 1.0])
def test_constant_sums(c):
    # a broadcast constant, never materialised: a running float32 sum drifts by ~1e-4 here (and
    # saturates for ones once a partial passes 2^24); pairwise stays within a few ulps
    n = 1 << 26
    one = frit.asarray(np.full(1, c, dtype=np.float32))
    exact = float(np.float32(c)) * n
    np_sum = np.broadcast_to(np.float32(c), (n,)).sum()
    within_numpy(float(frit.broadcast_to(one, (n,)).sum()), exact, np_sum)
    f = frit.jit(lambda a: frit.broadcast_to(a, (n,)).sum())
    within_numpy(float(f(one)), exact, np_sum)


def _interp_sum(x):
    ctx = L.Ctx()
    t = ctx.input("x", L.F32, x.shape)
    return L.run(ctx.reduce("sum", t, 1), {"x": x}, interpret=True)[0]


def test_interpreter_sums_pairwise():
    # the reference interpreter sums blocks of 256 in order, then pairwise: its error stays
    # bounded where a running sum's (numpy's cumsum, which adds in order) grows with the length
    n = 1 << 20
    c = np.full((1, n), 0.1, dtype=np.float32)
    exact = float(np.float32(0.1)) * n
    running = rel_err(np.cumsum(c[0])[-1], exact)
    e = rel_err(_interp_sum(c)[0], exact)
    assert e <= 1e-5 and e <= running / 10, (e, running)
    # a running float32 sum stops growing at 2^24: every later 1.0 is rounded away
    y = np.ones((1, n), dtype=np.float32)
    y[0, 0] = 2.0 ** 24
    exact = 2.0 ** 24 + n - 1
    assert rel_err(np.cumsum(y[0])[-1], exact) > 0.05
    assert rel_err(_interp_sum(y)[0], exact) < 1e-4
    # a short sum is the plain loop's, term by term in order
    z = np.random.default_rng(2).random((2, 200), dtype=np.float32)
    np.testing.assert_array_equal(_interp_sum(z), np.cumsum(z, axis=1)[:, -1])


@pytest.mark.parametrize("n", [2, 5, 6, 9, 15, 16, 17, 40])
def test_short_sums_add_in_order(n):
    """A sum shorter than the lanes of the lane form (codegen/linear_reduce.c sum_lanes: 16
    floats) adds its terms in order, bit for bit the plain loop (and numpy's, below 8 terms); the
    rest after whole runs of lanes goes into lane 0 in order. The eager path's symbolic sizes take
    the lane form: a tree of 6 cancelling terms had given -7.6e-6 where numpy gives 0 (numpy
    fuzzer seed 12101090). Terms of mixed magnitudes, so that orders differ in their rounding."""
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((64, n)) * 10.0 ** rng.integers(-3, 4, (64, n))).astype(np.float32)
    seq = np.zeros(64, np.float32)
    for j in range(n):
        seq = (seq + x[:, j]).astype(np.float32)
    got = [frit.asarray(x).sum(axis=1), frit.jit(lambda a: a.sum(axis=1))(x)]
    if n < 16:
        for g in got:
            np.testing.assert_array_equal(np.asarray(g), seq)
    else:  # whole runs of lanes, then the tree: a valid order, within a few ulp of the terms
        for g in got:
            np.testing.assert_allclose(np.asarray(g), x.astype(np.float64).sum(axis=1),
                                       rtol=0, atol=1e-5 * np.abs(x).sum(axis=1).max())
