"""complex64/complex128 in the Python package: the part functions (real, imag, conj, angle) on the
C library's native complex dtypes, and the complex forms of the functions whose numpy complex
loop the C library lacks, built from the parts (docs/complex.md)."""
import math

from . import _lib as L
from . import _ops as O
from ._array import apply, operand, operands2

__all__ = ["real", "imag", "conj", "conjugate", "angle"]

fn = L.fn


def _b_part(ctx, ts, name):
    return fn[name](ctx, ts[0])


def _b_complex(ctx, ts):
    return fn["frit_complex_t"](ctx, ts[0], ts[1])


def real(x):
    """numpy.real: the real part (the parts' float dtype); a real array is itself."""
    return apply(_b_part, [operand(x)], ("frit_real",))


def imag(x):
    """numpy.imag: the imaginary part; zeros of x's dtype for a real array."""
    return apply(_b_part, [operand(x)], ("frit_imag",))


def conj(x):
    return apply(_b_part, [operand(x)], ("frit_conj",))


conjugate = conj


def angle(x, deg=False):
    """numpy.angle: atan2(imag, real), float64 for integer and bool inputs."""
    r = apply(_b_part, [operand(x)], ("frit_angle",))
    return O.multiply(r, 180.0 / math.pi) if deg else r


def make(re, im):
    """re + im*1j (numpy's promotion of the parts: float32 parts give complex64)."""
    return apply(_b_complex, [operand(re), operand(im)])


# ---------------------------------------------------------------- unary functions numpy has
# complex loops for and the C library has not; formulas accurate near 0 where numpy's are

def log1p(z):
    """log(1 + z) = 0.5 log1p(2x + x^2 + y^2) + i atan2(y, 1 + x): no loss of digits for tiny
    z (log(1 + z) would round 1 + z)."""
    x, y = real(z), imag(z)
    return make(O.multiply(O.log1p(O.add(O.multiply(x, O.add(x, 2.0)), O.multiply(y, y))), 0.5),
                O.atan2(y, O.add(x, 1.0)))


def expm1(z):
    """exp(z) - 1 = (expm1(x) cos y - 2 sin^2(y/2)) + i exp(x) sin y."""
    x, y = real(z), imag(z)
    s = O.sin(O.multiply(y, 0.5))
    re = O.subtract(O.multiply(O.expm1(x), O.cos(y)), O.multiply(O.multiply(s, s), 2.0))
    return make(re, O.multiply(O.exp(x), O.sin(y)))


def _times_i(z):
    return make(O.negative(imag(z)), real(z))


def _times_minus_i(z):
    return make(imag(z), O.negative(real(z)))


def asinh(z):
    """C99's casinh: -i asin(i z)."""
    return _times_minus_i(O.asin(_times_i(z)))


def atanh(z):
    """C99's catanh: -i atan(i z)."""
    return _times_minus_i(O.atan(_times_i(z)))


def acosh(z):
    """C99's cacosh: +-i acos(z), the sign giving a non-negative real part."""
    w = O.acos(z)
    u, v = real(w), imag(w)
    neg = O.less_equal(v, 0.0)  # i w = -v + i u
    return make(O.where(neg, O.negative(v), v), O.where(neg, u, O.negative(u)))


def round(z, decimals=0):
    """numpy rounds both parts."""
    return make(O.round(real(z), decimals), O.round(imag(z), decimals))


def isfinite(z):
    return O.logical_and(O.isfinite(real(z)), O.isfinite(imag(z)))


# ---------------------------------------------------------------- reductions

def var(x, axis, ddof, keepdims):
    """numpy: var of the real part plus var of the imaginary part (a real result)."""
    return O.add(O.var(real(x), axis=axis, ddof=ddof, keepdims=keepdims),
                 O.var(imag(x), axis=axis, ddof=ddof, keepdims=keepdims))


# ---------------------------------------------------------------- ordering (numpy 2:
# lexicographic, real part first; a NaN in either part of either operand makes it unordered)

def _parts2(a, b):
    a, b = operands2(a, b)
    return real(a), imag(a), real(b), imag(b), a, b


def _no_nan(*xs):
    r = None
    for x in xs:
        t = O.logical_not(O.isnan(x))
        r = t if r is None else O.logical_and(r, t)
    return r


def compare(f, a, b):
    """numpy's CLT/CLE/CGT/CGE on complex operands (f: 'lt' 'le' 'gt' 'ge')."""
    ar, ai, br, bi, _, _ = _parts2(a, b)
    strict = {"lt": O.less, "le": O.less, "gt": O.greater, "ge": O.greater}[f]
    tie = {"lt": O.less, "le": O.less_equal, "gt": O.greater, "ge": O.greater_equal}[f]
    first = O.logical_and(strict(ar, br), _no_nan(ai, bi))
    return O.logical_or(first, O.logical_and(O.equal(ar, br), tie(ai, bi)))


def extreme(f, a, b):
    """numpy maximum/minimum on complex: a NaN (either part) of the first operand, else of the
    second, propagates."""
    ar, ai, br, bi, a, b = _parts2(a, b)
    ct = O.result_type(a, b)
    a, b = O.astype(a, ct, copy=False), O.astype(b, ct, copy=False)
    keep_a = O.logical_or(O.logical_not(_no_nan(ar, ai)),
                          compare("ge" if f == "maximum" else "le", a, b))
    return O.where(keep_a, a, b)


def is_c_pair(a, b):
    """Is one of two binary-op operands complex (array or Python/numpy scalar)?"""
    for x in (a, b):
        if isinstance(x, complex):
            return True
        dt = getattr(x, "dtype", None)
        if dt is not None and getattr(dt, "kind", None) == "c":
            return True
    return False
