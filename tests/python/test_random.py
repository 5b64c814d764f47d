"""frit.random: reproducibility (same seed and call sequence -> same arrays; successive draws
differ), ranges, dtypes and shapes, and statistics (moments, bucket counts) with tolerances set
at many standard errors so that the fixed seeds cannot fail by chance."""
import numpy as np
import pytest

import frit
import frit.random as fr


def test_reproducible_and_distinct():
    fr.seed(123)
    a1, b1, c1 = np.asarray(fr.uniform(size=100)), np.asarray(fr.normal(size=100)), \
        np.asarray(fr.integers(0, 1000, size=100))
    fr.seed(123)
    a2, b2, c2 = np.asarray(fr.uniform(size=100)), np.asarray(fr.normal(size=100)), \
        np.asarray(fr.integers(0, 1000, size=100))
    np.testing.assert_array_equal(a1, a2)
    np.testing.assert_array_equal(b1, b2)
    np.testing.assert_array_equal(c1, c2)
    # successive draws of the same generator differ
    assert not np.array_equal(np.asarray(fr.uniform(size=100)), np.asarray(fr.uniform(size=100)))
    # default_rng(s) follows the same sequence as seed(s) + module calls
    g = fr.default_rng(123)
    np.testing.assert_array_equal(np.asarray(g.uniform(size=100)), a1)
    np.testing.assert_array_equal(np.asarray(g.normal(size=100)), b1)
    # different seeds differ; generators are independent of each other and of the global one
    assert not np.array_equal(np.asarray(fr.default_rng(1).uniform(size=50)),
                              np.asarray(fr.default_rng(2).uniform(size=50)))
    g1, g2 = fr.default_rng(9), fr.default_rng(9)
    fr.uniform(size=3)
    np.testing.assert_array_equal(np.asarray(g1.integers(10, size=20)), np.asarray(g2.integers(10, size=20)))


def test_prefix_property_and_lazy_consumers():
    # element i depends only on (draw key, i): a larger draw extends a smaller one
    small = np.asarray(fr.default_rng(5).uniform(size=10))
    big = np.asarray(fr.default_rng(5).uniform(size=(4, 10)))
    np.testing.assert_array_equal(big.reshape(-1)[:10], small)
    # used inside lazy expressions, realised together or apart: same values
    g = fr.default_rng(6)
    x = g.normal(size=(3, 5))
    y = x * 2 + 1
    np.testing.assert_allclose(np.asarray(y), np.asarray(x) * 2 + 1, rtol=1e-6)


@pytest.mark.parametrize("dt", [frit.float16, frit.bfloat16, frit.float32, frit.float64])
def test_uniform(dt):
    n = 200_000
    u = fr.default_rng(11).uniform(-2.0, 3.0, size=n, dtype=dt)
    assert u.dtype == dt and u.shape == (n,)
    v = np.asarray(u).astype(np.float64)
    assert v.min() >= -2.0 and v.max() <= 3.0
    if dt in (frit.float32, frit.float64):
        assert v.max() < 3.0
    se = 5.0 / np.sqrt(12 * n)
    assert abs(v.mean() - 0.5) < 6 * se
    assert abs(v.var() - 25.0 / 12) < 0.05
    counts = np.histogram(v, bins=10, range=(-2, 3))[0]
    assert np.all(np.abs(counts - n / 10) < 6 * np.sqrt(n / 10) + (n / 100 if dt != frit.float64 and dt != frit.float32 else 0))


@pytest.mark.parametrize("dt", [frit.float32, frit.float64])
def test_normal(dt):
    n = 200_000
    z = np.asarray(fr.default_rng(12).normal(1.5, 2.0, size=(n,), dtype=dt)).astype(np.float64)
    assert np.all(np.isfinite(z))
    assert abs(z.mean() - 1.5) < 6 * 2.0 / np.sqrt(n)
    assert abs(z.std() - 2.0) < 0.03
    s = (z - 1.5) / 2.0
    assert abs(np.mean(s ** 3)) < 0.05          # skew
    assert abs(np.mean(s ** 4) - 3.0) < 0.1     # kurtosis
    assert abs(np.mean(np.abs(s) < 1) - 0.6827) < 0.01


@pytest.mark.parametrize("dt", [frit.int8, frit.uint8, frit.int32, frit.int64, frit.uint64])
def test_integers(dt):
    g = fr.default_rng(13)
    n = 100_000
    lo, hi = (-5, 7) if np.dtype(dt.value).kind == "i" else (3, 15)
    x = g.integers(lo, hi, size=n, dtype=dt)
    assert x.dtype == dt
    v = np.asarray(x).astype(np.int64)
    assert v.min() == lo and v.max() == hi - 1
    counts = np.bincount(v - lo, minlength=hi - lo)
    assert np.all(np.abs(counts - n / (hi - lo)) < 6 * np.sqrt(n / (hi - lo)))
    # high=None and endpoint
    w = np.asarray(g.integers(4, size=1000))
    assert w.min() >= 0 and w.max() <= 3
    e = np.asarray(g.integers(1, 3, size=1000, endpoint=True))
    assert set(np.unique(e)) == {1, 2, 3}


def test_shapes_and_arrays_of_parameters():
    g = fr.default_rng(14)
    assert g.uniform().shape == () and g.normal().shape == ()
    assert g.uniform(size=(2, 0, 3)).shape == (2, 0, 3)
    assert g.integers(5, size=4).shape == (4,)
    assert fr.random((3, 2)).shape == (3, 2)
    assert fr.standard_normal(7).dtype == frit.float32
    lo = np.array([0.0, 10.0, 100.0])
    u = np.asarray(g.uniform(lo, lo + 1))
    assert u.shape == (3,) and np.all((u >= lo) & (u < lo + 1))
    z = np.asarray(g.normal(np.array([[0.0], [1000.0]]), 1.0, size=(2, 4)))
    assert z.shape == (2, 4) and np.all(z[1] > 900)


def test_errors():
    g = fr.default_rng(0)
    with pytest.raises(frit.FritError):
        g.integers(5, 5)
    with pytest.raises(frit.FritError):
        g.integers(0, 300, dtype=frit.int8)
    with pytest.raises(TypeError):
        g.uniform(dtype=frit.int32)
    with pytest.raises(frit.FritError):
        g.uniform(size=(-1,))
    with pytest.raises(frit.FritError):
        g.normal(0, -1)
    with pytest.raises(TypeError):
        fr.default_rng("abc")
