"""Programs that the system C compiler once miscompiled, checked against numpy. gcc 12.2 -O3
vectorised a float sum over a reversed, completely unrolled inner loop (a flip under a reduction
with static shapes) into wrong code; frit's default flags turn complete peeling off
(--param=max-completely-peel-times=0, see src/codegen/codegen.h). Found by the program fuzzer."""
import numpy as np
import pytest

import frit


def test_sum_over_flipped_concat_static_shapes():
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((7, 5, 1, 5)) * 3).astype(np.float32)

    def f(xp, x):
        c = xp.concatenate([x, -x], axis=3)
        fl = xp.flip(c, axis=(2, 3))
        return (fl + fl).mean(), c, fl.sum(axis=2)

    got = frit.jit(lambda x: f(frit, x), dynamic=False)(x)
    want = f(np, x.astype(np.float64))
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5, atol=1e-5)


def test_scan_of_one_element_under_an_unrolled_loop_static_shapes():
    """gcc 12.2 -O3 (AVX2 and AVX-512 alike, not with -fno-tree-loop-vectorize) miscompiled a
    loop of one iteration (a cumsum over an axis of length 1) inside a `#pragma GCC unroll` loop
    whose body gathers from a concatenation and takes an exp: the second half of the rows read
    as zeros. A range of one iteration is now a plain block (codegen/linear.c, blk.once). Found
    by the program fuzzer (seed 7301380)."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 7, 5, 5)).astype(np.float32)
    w = rng.standard_normal((5, 2)).astype(np.float32)

    def f(xp, x, w):
        t = xp.take(xp.concatenate([x, -x], axis=2), 3, axis=-3)
        return xp.maximum(t, xp.cumsum(xp.exp(t), axis=0)) @ w

    want = f(np, x.astype(np.float64), w.astype(np.float64))
    for dyn in (False, True):
        got = frit.jit(lambda a, b: f(frit, a, b), dynamic=dyn)(x, w)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_concatenation_read_through_reshapes_static_shapes():
    """gcc 12.2 -O3 (AVX2 and AVX-512) vectorised the loop of a concatenation [n, -n] read
    through a reshape, two gated loads of one buffer under complementary conditions, into code
    that stored zeros for the first elements of the second half; -fno-tree-vrp in the default
    flags (src/codegen/codegen.h) gives the right code. Eager and default jit ran the same
    kernel. Found by the program fuzzer (seed 8401408)."""
    rng = np.random.default_rng(0)
    x1 = rng.integers(-20, 20, (2, 1, 7)).astype(np.int64)

    def f(xp, x1):
        n = -xp.reshape(xp.reshape(x1, (7, 2)), (2, 7))
        return xp.reshape(xp.concatenate([n, -n], axis=0), (14, 2))

    want = f(np, x1)
    for dyn in (False, True):
        np.testing.assert_array_equal(np.asarray(frit.jit(lambda a: f(frit, a), dynamic=dyn)(x1)), want)
    np.testing.assert_array_equal(np.asarray(f(frit, frit.asarray(x1))), want)


def test_padded_cos_static_shapes():
    """gcc 12.2 -O3 (AVX-512) miscompiled a padded cos, three gated loads an iteration, once a
    float `where` rendered as a bit blend (frit_blendf) instead of `?:`: the padding's select
    took wrong lanes. frit renders a float where as `?:` again. Found by the program fuzzer (seed
    9100079, new in this session's code and not in the code before it)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 7, 3)).astype(np.float32)

    def f(xp, x):
        return xp.pad(xp.cos(x), ((1, 1), (1, 1), (0, 0)))

    want = f(np, x.astype(np.float64))
    for dyn in (False, True):
        np.testing.assert_allclose(np.asarray(frit.jit(lambda a: f(frit, a), dynamic=dyn)(x)), want, rtol=1e-6, atol=1e-6)


def test_flipped_sums_of_a_pad_under_a_scan_of_one_element_static_shapes():
    """gcc 12.2 -O3 (AVX-512) vectorised the outer loop of the sums of a padded array, flipped,
    under a cumsum over an axis of length 1, with masked loads that read the wrong rows (a value
    from past the buffer's end for one of them). Right at -O0, with clang, and with
    -fno-code-hoisting, now among the flags frit adds for gcc (src/codegen/codegen.h). Found by
    the program fuzzer (seed 9003937)."""
    x = np.arange(1, 21, dtype=np.int32).reshape(5, 2, 2)

    def f(xp, x):
        p = xp.pad(x, ((2, 2), (1, 2), (1, 1)))
        return xp.cumsum(xp.flip(xp.sum(p, axis=2, keepdims=True, dtype=xp.int64), axis=1), axis=-1)

    want = f(np, x)
    for dyn in (False, True):
        np.testing.assert_array_equal(np.asarray(frit.jit(lambda a: f(frit, a), dynamic=dyn)(x)), want)
    np.testing.assert_array_equal(np.asarray(f(frit, frit.asarray(x))), want)


@pytest.mark.parametrize("n", [4, 8, 16, 5])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_unrolled_sum_of_8_bit_casts_of_comparisons(n, dtype):
    """gcc 12.2's basic-block vectoriser summed 4, 8 or 16 int8 values converted from
    comparisons, the reduction unrolled into straight-line code (a dot product of a bool cast
    of static length), as their vector masks: -8 where 8 (codegen.h: -fno-tree-slp-vectorize).
    Found by the numpy fuzzer (seed 11800288). Static and default jit, and eager."""
    x = np.full((1, n), 3, np.uint8)
    x[0, 0] = 0

    def f(xp, x):
        v = xp.reshape(xp.astype(xp.logical_and(x, x), dtype), (-1,))
        return xp.matmul(v, v), xp.sum(v, dtype=dtype)

    want = f(np, x)
    got = [frit.jit(lambda a: f(frit, a), dynamic=False)(x), frit.jit(lambda a: f(frit, a))(x),
           f(frit, frit.asarray(x))]
    for g in got:
        for gi, wi in zip(g, want):
            assert np.asarray(gi).dtype == wi.dtype
            np.testing.assert_array_equal(np.asarray(gi), wi)
