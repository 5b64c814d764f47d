"""Op-matrix rows for frit.fft (transform lengths are static; batch dims vary with n)."""
import numpy as np

from .spec import Row, COMPLEX, array


def _c(shape_fn):
    def cases(rng, n, dt):
        return [(array(rng, shape_fn(n), dt),)]
    return cases


def _r(shape_fn):
    def cases(rng, n, dt):
        return [(array(rng, shape_fn(n), "float64" if dt == "complex128" else "float32"),)]
    return cases


_T = dict(dtypes=COMPLEX, rtol=1e-4, atol=1e-4, tags=("fft",))
ROWS = [
    Row("fft.fft", lambda xp, a: xp.fft.fft(a), _c(lambda n: (n, 12)), **_T),
    Row("fft.ifft", lambda xp, a: xp.fft.ifft(a, n=10, norm="ortho"), _c(lambda n: (n, 7)), **_T),
    Row("fft.fft2", lambda xp, a: xp.fft.fft2(a), _c(lambda n: (2, 6, 5)), **_T),
    Row("fft.ifft2", lambda xp, a: xp.fft.ifft2(a), _c(lambda n: (2, 6, 5)), **_T),
    Row("fft.fftn", lambda xp, a: xp.fft.fftn(a, axes=(1, 2)), _c(lambda n: (n, 4, 3)), **_T),
    Row("fft.ifftn", lambda xp, a: xp.fft.ifftn(a, axes=(1, 2)), _c(lambda n: (n, 4, 3)), **_T),
    Row("fft.rfft", lambda xp, a: xp.fft.rfft(a), _r(lambda n: (n, 9)), **_T),
    Row("fft.irfft", lambda xp, a: xp.fft.irfft(a), _c(lambda n: (n, 5)), **_T),
    Row("fft.rfft2", lambda xp, a: xp.fft.rfft2(a), _r(lambda n: (2, 6, 5)), **_T),
    Row("fft.irfft2", lambda xp, a: xp.fft.irfft2(a), _c(lambda n: (2, 6, 5)), **_T),
    Row("fft.rfftn", lambda xp, a: xp.fft.rfftn(a, axes=(1, 2)), _r(lambda n: (n, 4, 6)), **_T),
    Row("fft.irfftn", lambda xp, a: xp.fft.irfftn(a, axes=(1, 2)), _c(lambda n: (n, 4, 4)),
        **_T),
    Row("fft.hfft", lambda xp, a: xp.fft.hfft(a), _c(lambda n: (n, 6)), **_T),
    Row("fft.ihfft", lambda xp, a: xp.fft.ihfft(a), _r(lambda n: (n, 7)), **_T),
    Row("fft.fftshift", lambda xp, a: xp.fft.fftshift(a, axes=1), _c(lambda n: (n, 7)), **_T),
    Row("fft.ifftshift", lambda xp, a: xp.fft.ifftshift(a, axes=1), _c(lambda n: (n, 8)),
        **_T),
    Row("fft.fftfreq", lambda xp: xp.fft.fftfreq(9, 0.5), lambda rng, n, dt: [()],
        dtypes=("float64",), tags=("fft",)),
    Row("fft.rfftfreq", lambda xp: xp.fft.rfftfreq(9, 0.5), lambda rng, n, dt: [()],
        dtypes=("float64",), tags=("fft",)),
]
_ = np
