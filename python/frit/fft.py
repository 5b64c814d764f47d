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
from ._array import Array, apply
from ._errors import FritError, FritTypeError

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

ComplexArray = CX.ComplexArray
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
    return ComplexArray(apply(_b_split, [z.re], (n1, n2)), apply(_b_split, [z.im], (n1, n2)))


def _merge(z, n):
    return ComplexArray(apply(_b_merge, [z.re], (n,)), apply(_b_merge, [z.im], (n,)))


# ---------------------------------------------------------------- constants (float64, exact
# index reduction so that large n keeps full accuracy)

def _phase(k, n, sign):
    """exp(sign * 2 pi i k / n) for integer array k."""
    ang = sign * 2.0 * np.pi * (np.mod(k, n).astype(np.float64) / n)
    return np.cos(ang), np.sin(ang)


def _const(v, rdt):
    return O.asarray(np.ascontiguousarray(v, dtype=rdt.value), rdt)


_CACHE = {}


def _cached(key, make):
    v = _CACHE.get(key)
    if v is None:
        if len(_CACHE) > 256:
            _CACHE.clear()
        v = _CACHE[key] = make()
    return v


def _dft_matrix(n, sign, rdt, transpose):
    def make():
        k = np.arange(n)
        c, s = _phase(np.outer(k, k), n, sign)
        return _const(c, rdt), _const(s, rdt)
    return _cached(("dft", n, sign, rdt.name, transpose), make)


def _twiddle(n1, n2, sign, rdt):
    def make():
        c, s = _phase(np.outer(np.arange(n1), np.arange(n2)), n1 * n2, sign)
        return _const(c, rdt), _const(s, rdt)
    return _cached(("tw", n1, n2, sign, rdt.name), make)


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

def _cmatmul_right(z, fr, fi):
    """z @ F for a constant complex matrix F = fr + i fi (z's last axis)."""
    return ComplexArray(O.matmul(z.re, fr) - O.matmul(z.im, fi),
                        O.matmul(z.re, fi) + O.matmul(z.im, fr))


def _cmatmul_left(fr, fi, z):
    """F @ z along z's second-last axis."""
    return ComplexArray(O.matmul(fr, z.re) - O.matmul(fi, z.im),
                        O.matmul(fr, z.im) + O.matmul(fi, z.re))


def _cmul_const(z, cr, ci):
    return ComplexArray(z.re * cr - z.im * ci, z.re * ci + z.im * cr)


def _dft_last(z, n, sign):
    """Unnormalised DFT of z along its last axis (static length n); sign -1 forward, +1 inverse."""
    if n == 1:
        return z
    rdt = z.re.dtype
    if n <= _RADIX_MAX or (n <= _DIRECT_MAX and _factor(n) == n):
        fr, fi = _dft_matrix(n, sign, rdt, True)  # symmetric: x @ F == F applied per row
        return _cmatmul_right(z, fr, fi)
    r = _radix(n)
    if r is None:
        p = _factor(n)
        if p == n:
            return _bluestein(z, n, sign)
        r = p
    n2 = n // r
    a = _split(z, r, n2)                        # a[..., j1, j2] = z[..., j1*n2 + j2]
    if r <= _DIRECT_MAX:
        fr, fi = _dft_matrix(r, sign, rdt, False)
        b = _cmatmul_left(fr, fi, a)            # DFT over j1
    else:
        b = CX._pair(O.swapaxes, _dft_last(CX._pair(O.swapaxes, a, -1, -2), r, sign), -1, -2)
    cr, ci = _twiddle(r, n2, sign, rdt)
    c = _cmul_const(b, cr, ci)                  # * exp(sign 2 pi i k1 j2 / n)
    d = _dft_last(c, n2, sign)                  # DFT over j2 -> [..., k1, k2]
    # out[k1 + r*k2]; materialised per stage: fusing every stage's index math into one kernel
    # overruns codegen's limit of 64 ranges per kernel
    return CX._pair(O.contiguous, _merge(CX._pair(O.swapaxes, d, -1, -2), n))


def _bluestein(z, n, sign):
    """Chirp-z: X_k = w_k sum_j (x_j w_j) conj(w_{k-j}), w_j = exp(sign i pi j^2 / n), the
    convolution done with power-of-two FFTs."""
    rdt = z.re.dtype
    m = 1
    while m < 2 * n - 1:
        m *= 2

    def make():
        j = np.arange(n)
        ang = sign * np.pi * (np.mod(j * j, 2 * n).astype(np.float64) / n)
        wr, wi = np.cos(ang), np.sin(ang)
        b = np.zeros(m, np.complex128)
        b[:n] = wr - 1j * wi
        b[m - n + 1:] = (wr - 1j * wi)[1:][::-1]
        bf = np.fft.fft(b) / m     # the inverse FFT's 1/m folded in
        return (_const(wr, rdt), _const(wi, rdt), _const(bf.real, rdt), _const(bf.imag, rdt))
    wr, wi, br, bi = _cached(("blu", n, sign, rdt.name), make)
    a = _cmul_const(z, wr, wi)
    pad = [(0, 0)] * (z.ndim - 1) + [(0, m - n)]
    a = ComplexArray(O.pad(a.re, pad), O.pad(a.im, pad))
    fa = _dft_last(a, m, -1)
    prod = _cmul_const(fa, br, bi)
    conv = _dft_last(prod, m, 1)
    return _cmul_const(conv[..., :n], wr, wi)


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
    if type(x) is ComplexArray:
        return x
    if CX.is_c(x):
        return CX._as_c(x)
    x = O.operand(x) if not isinstance(x, Array) else x
    if x.dtype.kind not in "biuf":
        raise FritTypeError("%s: unsupported dtype %s" % (what, x.dtype))
    cdt = D.complex64 if x.dtype in (D.float32, D.float16, D.bfloat16) else D.complex128
    return CX._as_c(x, cdt)


def _to_real(x, what):
    if CX.is_c(x):
        raise FritTypeError("%s: needs a real input, got complex dtype %s"
                            % (what, CX._dtype_of(x)))
    x = O.operand(x) if not isinstance(x, Array) else x
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
    return ComplexArray(O.pad(z.re, pad), O.pad(z.im, pad))


def _n_arg(n, default, what):
    if n is None:
        return default
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise FritError("%s: invalid number of data points (%r) specified" % (what, n))
    return int(n)


def _c1(z, n, axis, norm, inverse, what):
    """Complex transform of ComplexArray z along one axis."""
    ax = _axis(z, axis, what)
    z = CX._pair(O.moveaxis, z, ax, -1)
    if z.shape[-1] is None and n is None:
        _resize(z, 0, what)
    n = _n_arg(n, z.shape[-1], what)
    z = _resize(z, n, what)
    r = _dft_last(z, n, 1 if inverse else -1)
    s = _scale(norm, n, inverse)
    if s is not None:
        r = ComplexArray(r.re * s, r.im * s)
    return CX._pair(O.moveaxis, r, -1, ax)


def fft(a, n=None, axis=-1, norm=None):
    return _c1(_to_complex(a, "fft"), n, axis, norm, False, "fft")


def ifft(a, n=None, axis=-1, norm=None):
    return _c1(_to_complex(a, "ifft"), n, axis, norm, True, "ifft")


def rfft(a, n=None, axis=-1, norm=None):
    x = _to_real(a, "rfft")
    z = _c1(CX._as_c(x), n, axis, norm, False, "rfft")
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
    mirror = CX.conj(CX._pair(O.flip, z[..., 1:1 + tail], -1))
    return CX.concatenate([z, mirror], axis=-1)


def irfft(a, n=None, axis=-1, norm=None):
    z = _to_complex(a, "irfft")
    ax = _axis(z, axis, "irfft")
    z = CX._pair(O.moveaxis, z, ax, -1)
    m = z.shape[-1]
    if m is None:
        _resize(z, 0, "irfft")
    n = _n_arg(n, 2 * (m - 1), "irfft")
    full = _hermitian_full(z, n, "irfft")
    r = _dft_last(full, n, 1).re
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
    c = CX.is_c(x)
    x = CX._as_c(x) if c else (O.operand(x) if not isinstance(x, Array) else x)
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
        x = CX.concatenate(parts, axis=ax) if c else O.concatenate(parts, axis=ax)
    return x


def fftshift(x, axes=None):
    return _shift(x, axes, False, "fftshift")


def ifftshift(x, axes=None):
    return _shift(x, axes, True, "ifftshift")
