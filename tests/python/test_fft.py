"""frit.fft against numpy.fft: any length (Cooley-Tukey stages and Bluestein), both precisions,
norms, n=/s=/axes=, real-input and Hermitian transforms, round trips, helpers; eagerly, under
frit.jit with two batch sizes, and through the reference interpreter."""
import numpy as np
import pytest

import frit

LENGTHS = [1, 2, 3, 5, 7, 8, 12, 17, 64, 97, 100, 127, 1000, 1024, 4096]


def crand(rng, shape, dt=np.complex128):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)


def check(got, want, n=2):
    """Relative to the largest magnitude: a few ulp times log2(n)."""
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    eps = np.finfo(got.dtype).eps
    scale = max(np.abs(want).max(), 1e-30) if want.size else 1.0
    err = np.abs(got - want).max() / scale if want.size else 0.0
    assert err <= 8 * eps * max(1.0, np.log2(n)), (err, eps)


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_fft_lengths(rng, dt):
    xs = [crand(rng, (2, n), dt) for n in LENGTHS]
    got = frit.realize(*[frit.fft.fft(x) for x in xs])
    for n, x, g in zip(LENGTHS, xs, got):
        check(g, np.fft.fft(x), n)
    inv = frit.realize(*[frit.fft.ifft(x) for x in xs[5:10]])
    for x, g in zip(xs[5:10], inv):
        check(g, np.fft.ifft(x), x.shape[-1])


def test_real_input_dtypes(rng):
    for dt in (np.float32, np.float64, np.int32):
        x = (rng.standard_normal(12) * 4).astype(dt)
        r = frit.fft.fft(x)
        assert r.dtype == np.fft.fft(x).dtype, dt
        check(r, np.fft.fft(x), 12)
        check(frit.fft.rfft(x), np.fft.rfft(x), 12)


@pytest.mark.parametrize("n", [12, 97, 100])
def test_jit_two_batch_sizes(rng, n):
    f = frit.jit(lambda x: (frit.fft.fft(x), frit.fft.irfft(frit.fft.rfft(x.real), n=n)))
    for b in (3, 5):
        x = crand(rng, (b, n), np.complex64)
        g, rt = f(x)
        check(g, np.fft.fft(x), n)
        np.testing.assert_allclose(np.asarray(rt), x.real, atol=1e-5)


def test_interpreter(rng):
    x = crand(rng, (2, 12))
    with frit.Session(interpret=True).as_current():
        g = np.asarray(frit.fft.fft(frit.asarray(x)))
        y = crand(rng, (40,))
        h = np.asarray(frit.fft.fft(frit.asarray(y)))
    check(g, np.fft.fft(x), 12)
    check(h, np.fft.fft(y), 40)


@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
def test_norms_and_n(rng, norm):
    x = crand(rng, (3, 10))
    for f in ("fft", "ifft"):
        for n in (None, 7, 16):
            check(getattr(frit.fft, f)(x, n=n, axis=0 if n == 7 else -1, norm=norm),
                  getattr(np.fft, f)(x, n=n, axis=0 if n == 7 else -1, norm=norm), 16)
    r = x.real
    check(frit.fft.rfft(r, norm=norm), np.fft.rfft(r, norm=norm), 10)
    check(frit.fft.hfft(x[0, :6], norm=norm), np.fft.hfft(x[0, :6], norm=norm), 10)
    check(frit.fft.ihfft(r[0], norm=norm), np.fft.ihfft(r[0], norm=norm), 10)


@pytest.mark.parametrize("n", [1, 2, 7, 8, 17, 100])
def test_irfft_lengths(rng, n):
    x = crand(rng, (2, n // 2 + 1))
    check(frit.fft.irfft(x, n=n), np.fft.irfft(x, n=n), n)
    r = rng.standard_normal((2, n))
    np.testing.assert_allclose(np.asarray(frit.fft.irfft(frit.fft.rfft(r), n=n)), r, atol=1e-13)


def test_multi_axis(rng):
    x = crand(rng, (4, 6, 5))
    r = x.real
    check(frit.fft.fft2(x), np.fft.fft2(x), 30)
    check(frit.fft.ifft2(x, axes=(0, 2)), np.fft.ifft2(x, axes=(0, 2)), 30)
    check(frit.fft.fftn(x), np.fft.fftn(x), 120)
    check(frit.fft.ifftn(x, s=(3, 8)), np.fft.ifftn(x, s=(3, 8)), 24)
    check(frit.fft.rfftn(r), np.fft.rfftn(r), 120)
    check(frit.fft.rfft2(r, norm="ortho"), np.fft.rfft2(r, norm="ortho"), 30)
    h = np.fft.rfftn(r)
    check(frit.fft.irfftn(h, s=r.shape, axes=(0, 1, 2)), np.fft.irfftn(h, s=r.shape, axes=(0, 1, 2)), 120)
    check(frit.fft.irfft2(h[0]), np.fft.irfft2(h[0]), 30)


def test_helpers(rng):
    for n in (1, 4, 7):
        np.testing.assert_allclose(np.asarray(frit.fft.fftfreq(n, 0.5)), np.fft.fftfreq(n, 0.5))
        np.testing.assert_allclose(np.asarray(frit.fft.rfftfreq(n)), np.fft.rfftfreq(n))
    assert frit.fft.fftfreq(4, dtype=frit.float32).dtype == frit.float32
    x = np.arange(15.0).reshape(3, 5)
    for f in ("fftshift", "ifftshift"):
        np.testing.assert_array_equal(np.asarray(getattr(frit.fft, f)(x)), getattr(np.fft, f)(x))
        np.testing.assert_array_equal(np.asarray(getattr(frit.fft, f)(x, axes=1)),
                                      getattr(np.fft, f)(x, axes=1))
    z = crand(rng, (4,))
    np.testing.assert_array_equal(np.asarray(frit.fft.fftshift(z)), np.fft.fftshift(z))


def test_bad_input():
    x = np.ones(8)
    with pytest.raises(frit.FritError, match="norm"):
        frit.fft.fft(x, norm="bogus")
    with pytest.raises(frit.FritError, match="invalid number of data points"):
        frit.fft.fft(x, n=0)
    with pytest.raises(frit.FritError, match="out of bounds"):
        frit.fft.fft(x, axis=1)
    with pytest.raises(frit.FritTypeError, match="real input"):
        frit.fft.rfft(x + 1j)
