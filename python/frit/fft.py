"""frit.fft: numpy.fft / array-API fft as frit programs. Mixed-radix Cooley-Tukey (each stage a
small DFT matmul, a twiddle multiply and a transpose) and Bluestein for large prime factors; the
transform length is static at trace time, batch dims may be symbolic (docs/complex.md)."""
import builtins
import math

import numpy as np

from . import _complex as CX
from . import _dtypes as D
from . import _lib as L
from . import _ops as O
from ._array import apply
from ._errors import FritError, FritTypeError

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

fn = L.fn
_RADIX_MAX = 16    # largest stage DFT done as a matmul inside Cooley-Tukey
_DIRECT_MAX = 64   # a prime length up to this is one DFT matmul; above it, Bluestein


# ---------------------------------------------------------------- last-axis reshapes

def _b_split(ctx, ts, n1, n2):
    t = ts[0]
    nd = fn["frit_tensor_ndim"](t)
    dims = [fn["frit_tensor_dim"](t, i) for i in range(nd - 1)]
    dims += [fn["frit_const_int"](ctx, L.I64, n1), fn["frit_const_int"](ctx, L.I64, n2)]
    return fn["frit_reshape_sym"](ctx, t, len(dims), O._ptrs(dims))


def _b_merge(ctx, ts, n):
    t = ts[0]
    nd = fn["frit_tensor_ndim"](t)
    dims = [fn["frit_tensor_dim"](t, i) for i in range(nd - 2)]
    dims.append(fn["frit_const_int"](ctx, L.I64, n))
    return fn["frit_reshape_sym"](ctx, t, len(dims), O._ptrs(dims))


def _split(z, n1, n2):
    return apply(_b_split, [z], (n1, n2))


def _merge(z, n):
    return apply(_b_merge, [z], (n,))


# ---------------------------------------------------------------- constants (float64, exact
# index reduction so that large n keeps full accuracy)

def _phase(k, n, sign):
    """exp(sign * 2 pi i k / n) for integer array k (complex128)."""
    ang = sign * 2.0 * np.pi * (np.mod(k, n).astype(np.float64) / n)
    return np.cos(ang) + 1j * np.sin(ang)


def _const(v, cdt):
    return O.asarray(np.ascontiguousarray(v, dtype=cdt.value), cdt)


_CACHE = {}


def _cached(key, make):
    v = _CACHE.get(key)
    if v is None:
        if len(_CACHE) > 256:
            _CACHE.clear()
        v = _CACHE[key] = make()
    return v


def _dft_matrix(n, sign, cdt):
    def make():
        k = np.arange(n)
        return _const(_phase(np.outer(k, k), n, sign), cdt)
    return _cached(("dft", n, sign, cdt.name), make)


def _twiddle(n1, n2, sign, cdt):
    def make():
        return _const(_phase(np.outer(np.arange(n1), np.arange(n2)), n1 * n2, sign), cdt)
    return _cached(("tw", n1, n2, sign, cdt.name), make)


def _factor(n):
    p = 2
    while p * p <= n:
        if n % p == 0:
            return p
        p += 1
    return n


def _radix(n):
    """The stage size: the largest divisor of n in 2.._RADIX_MAX (None if n has none)."""
    for r in range(builtins.min(_RADIX_MAX, n - 1), 1, -1):
        if n % r == 0:
            return r
    return None


# ---------------------------------------------------------------- the transform

def _dft_last(z, n, sign):
    """Unnormalised DFT of z along its last axis (static length n); sign -1 forward, +1 inverse."""
    if n == 1:
        return z
    cdt = z.dtype
    if n <= _RADIX_MAX or (n <= _DIRECT_MAX and _factor(n) == n):
        return O.matmul(z, _dft_matrix(n, sign, cdt))  # symmetric: x @ F == F applied per row
    r = _radix(n)
    if r is None:
        p = _factor(n)
        if p == n:
            return _bluestein(z, n, sign)
        r = p
    n2 = n // r
    a = _split(z, r, n2)                        # a[..., j1, j2] = z[..., j1*n2 + j2]
    if r <= _DIRECT_MAX:
        b = O.matmul(_dft_matrix(r, sign, cdt), a)  # DFT over j1
    else:
        b = O.swapaxes(_dft_last(O.swapaxes(a, -1, -2), r, sign), -1, -2)
    c = O.multiply(b, _twiddle(r, n2, sign, cdt))  # * exp(sign 2 pi i k1 j2 / n)
    d = _dft_last(c, n2, sign)                  # DFT over j2 -> [..., k1, k2]
    # out[k1 + r*k2]; materialised per stage: fusing every stage's index math into one kernel
    # overruns codegen's limit of 64 ranges per kernel
    return O.contiguous(_merge(O.swapaxes(d, -1, -2), n))


def _bluestein(z, n, sign):
    """Chirp-z: X_k = w_k sum_j (x_j w_j) conj(w_{k-j}), w_j = exp(sign i pi j^2 / n), the
    convolution done with power-of-two FFTs."""
    cdt = z.dtype
    m = 1
    while m < 2 * n - 1:
        m *= 2

    def make():
        j = np.arange(n)
        ang = sign * np.pi * (np.mod(j * j, 2 * n).astype(np.float64) / n)
        w = np.cos(ang) + 1j * np.sin(ang)
        b = np.zeros(m, np.complex128)
        b[:n] = np.conj(w)
        b[m - n + 1:] = np.conj(w)[1:][::-1]
        bf = np.fft.fft(b) / m     # the inverse FFT's 1/m folded in
        return _const(w, cdt), _const(bf, cdt)
    w, bf = _cached(("blu", n, sign, cdt.name), make)
    pad = [(0, 0)] * (z.ndim - 1) + [(0, m - n)]
    a = O.pad(O.multiply(z, w), pad)
    conv = _dft_last(O.multiply(_dft_last(a, m, -1), bf), m, 1)
    return O.multiply(conv[..., :n], w)


# ---------------------------------------------------------------- numpy-style wrappers

_NORMS = (None, "backward", "ortho", "forward")


def _scale(norm, n, inverse):
    if norm not in _NORMS:
        raise FritError('fft: invalid norm %r (use "backward", "ortho" or "forward")' % (norm,))
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    if (norm == "forward") != inverse:  # forward-normalised forward, or backward inverse
        return 1.0 / n
    return None


def _to_complex(x, what):
    x = O.operand(x)
    if x.dtype.kind == "c":
        return x
    if x.dtype.kind not in "biuf":
        raise FritTypeError("%s: unsupported dtype %s" % (what, x.dtype))
    cdt = D.complex64 if x.dtype in (D.float32, D.float16, D.bfloat16) else D.complex128
    return O.astype(x, cdt)


def _to_real(x, what):
    x = O.operand(x)
    if x.dtype.kind == "c":
        raise FritTypeError("%s: needs a real input, got complex dtype %s%s"
                            % (what, x.dtype.name, list(x.shape)))
    if x.dtype.kind not in "biuf":
        raise FritTypeError("%s: unsupported dtype %s" % (what, x.dtype))
    return x if x.dtype in (D.float32, D.float64) else O.astype(
        x, D.float32 if x.dtype in (D.float16, D.bfloat16) else D.float64)


def _axis(z, axis, what):
    nd = z.ndim
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise FritTypeError("%s: axis must be an integer" % what)
    if not -nd <= axis < nd:
        raise FritError("%s: axis %d is out of bounds for an array of dimension %d"
                        % (what, axis, nd))
    return int(axis) % nd


def _resize(z, n, what):
    """Last axis truncated or zero-padded to n (numpy's n= argument)."""
    m = z.shape[-1]
    if m is None:
        raise FritError("%s: the transformed axis must have a static length under jit (it is "
                        "symbolic here); give n= or mark the argument static" % what)
    if n == m:
        return z
    if n < m:
        return z[..., :n]
    pad = [(0, 0)] * (z.ndim - 1) + [(0, n - m)]
    return O.pad(z, pad)


def _n_arg(n, default, what):
    if n is None:
        return default
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise FritError("%s: invalid number of data points (%r) specified" % (what, n))
    return int(n)


def _c1(z, n, axis, norm, inverse, what):
    """Complex transform of complex array z along one axis."""
    ax = _axis(z, axis, what)
    z = O.moveaxis(z, ax, -1)
    if z.shape[-1] is None and n is None:
        _resize(z, 0, what)
    n = _n_arg(n, z.shape[-1], what)
    z = _resize(z, n, what)
    r = _dft_last(z, n, 1 if inverse else -1)
    s = _scale(norm, n, inverse)
    if s is not None:
        r = O.multiply(r, s)
    return O.moveaxis(r, -1, ax)


def fft(a, n=None, axis=-1, norm=None):
    return _c1(_to_complex(a, "fft"), n, axis, norm, False, "fft")


def ifft(a, n=None, axis=-1, norm=None):
    return _c1(_to_complex(a, "ifft"), n, axis, norm, True, "ifft")


def rfft(a, n=None, axis=-1, norm=None):
    x = _to_real(a, "rfft")
    z = _c1(_to_complex(x, "rfft"), n, axis, norm, False, "rfft")
    ax = _axis(z, axis, "rfft")
    m = z.shape[ax] // 2 + 1
    return z[(slice(None),) * ax + (slice(0, m),)]


def _hermitian_full(z, n, what):
    """The n-point spectrum whose first n//2+1 entries are z's (last axis), the rest conj-mirrored."""
    h = n // 2 + 1
    z = _resize(z, h, what)
    tail = (n + 1) // 2 - 1  # entries n//2+1 .. n-1 mirror 1 .. (n+1)//2-1
    if tail <= 0:
        return z
    mirror = CX.conj(O.flip(z[..., 1:1 + tail], -1))
    return O.concatenate([z, mirror], axis=-1)


def irfft(a, n=None, axis=-1, norm=None):
    z = _to_complex(a, "irfft")
    ax = _axis(z, axis, "irfft")
    z = O.moveaxis(z, ax, -1)
    m = z.shape[-1]
    if m is None:
        _resize(z, 0, "irfft")
    n = _n_arg(n, 2 * (m - 1), "irfft")
    full = _hermitian_full(z, n, "irfft")
    r = CX.real(_dft_last(full, n, 1))
    s = _scale(norm, n, True)
    if s is not None:
        r = r * s
    return O.moveaxis(r, -1, ax)


_SWAP = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def hfft(a, n=None, axis=-1, norm=None):
    if norm not in _NORMS:
        _scale(norm, 1, False)
    return irfft(CX.conj(_to_complex(a, "hfft")), n, axis, _SWAP[norm])


def ihfft(a, n=None, axis=-1, norm=None):
    if norm not in _NORMS:
        _scale(norm, 1, False)
    return CX.conj(rfft(a, n, axis, _SWAP[norm]))


def _axes_s(x, s, axes, what):
    nd = x.ndim
    if axes is None:
        axes = list(range(nd)) if s is None else list(range(nd - len(s), nd))
    else:
        axes = [int(a) for a in (axes if isinstance(axes, (list, tuple)) else (axes,))]
    if s is None:
        s = [None] * len(axes)
    else:
        s = list(s)
        if len(s) != len(axes):
            raise FritError("%s: s and axes must have the same length" % what)
    return s, axes


def fftn(a, s=None, axes=None, norm=None):
    z = _to_complex(a, "fftn")
    s, axes = _axes_s(z, s, axes, "fftn")
    for n, ax in reversed(list(zip(s, axes))):
        z = _c1(z, n, ax, norm, False, "fftn")
    return z


def ifftn(a, s=None, axes=None, norm=None):
    z = _to_complex(a, "ifftn")
    s, axes = _axes_s(z, s, axes, "ifftn")
    for n, ax in reversed(list(zip(s, axes))):
        z = _c1(z, n, ax, norm, True, "ifftn")
    return z


def fft2(a, s=None, axes=(-2, -1), norm=None):
    return fftn(a, s, axes, norm)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    return ifftn(a, s, axes, norm)


def rfftn(a, s=None, axes=None, norm=None):
    x = _to_real(a, "rfftn")
    s, axes = _axes_s(x, s, axes, "rfftn")
    z = rfft(x, s[-1], axes[-1], norm)
    for n, ax in reversed(list(zip(s[:-1], axes[:-1]))):
        z = _c1(z, n, ax, norm, False, "rfftn")
    return z


def irfftn(a, s=None, axes=None, norm=None):
    z = _to_complex(a, "irfftn")
    s, axes = _axes_s(z, s, axes, "irfftn")
    for n, ax in zip(s[:-1], axes[:-1]):
        z = _c1(z, n, ax, norm, True, "irfftn")
    return irfft(z, s[-1], axes[-1], norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    return rfftn(a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    return irfftn(a, s, axes, norm)


def _freq_dtype(dtype):
    dt = D.float64 if dtype is None else D.dtype(dtype)
    if dt.kind != "f":
        raise FritTypeError("fftfreq: dtype must be a real floating dtype, got %s" % dt)
    return dt


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    n = _n_arg(n, None, "fftfreq")
    return O.asarray(np.fft.fftfreq(n, d), _freq_dtype(dtype))


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    n = _n_arg(n, None, "rfftfreq")
    return O.asarray(np.fft.rfftfreq(n, d), _freq_dtype(dtype))


def _shift(x, axes, inverse, what):
    x = O.operand(x)
    nd = x.ndim
    axes = list(range(nd)) if axes is None else \
        [int(a) for a in (axes if isinstance(axes, (list, tuple)) else (axes,))]
    for ax in axes:
        ax = ax % nd
        m = x.shape[ax]
        if m is None:
            raise FritError("%s: axis %d has a symbolic length under jit; the shift needs it "
                            "static" % (what, ax))
        k = (m + 1) // 2 if inverse else m // 2   # new[i] = old[(i - shift) mod m]
        if k == 0 or m == 0:
            continue
        lead = (slice(None),) * ax
        parts = [x[lead + (slice(m - k, m),)], x[lead + (slice(0, m - k),)]]
        x = O.concatenate(parts, axis=ax)
    return x


def fftshift(x, axes=None):
    return _shift(x, axes, False, "fftshift")


def ifftshift(x, axes=None):
    return _shift(x, axes, True, "ifftshift")
