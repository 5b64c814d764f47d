"""Complex elementwise math on (re, im) pairs of real frit arrays: formulas that keep the finite
domain accurate (Kahan's branch cuts, Smith's division, log1p/expm1 forms). Used by frit._complex."""
import math

from . import _dtypes as D
from . import _ops as O

_INF = float("inf")


def signbit(x):
    """x < 0, with -0.0 counted as negative (1/-0 = -inf)."""
    return O.logical_or(O.less(x, 0.0), O.logical_and(O.equal(x, 0.0),
                                                     O.less(O.reciprocal(x), 0.0)))


def copysign(m, s):
    """|m| with the sign of s (m >= 0 here)."""
    return O.where(signbit(s), O.negative(m), m)


def hypot(a, b):
    """|a + ib| without overflow; inf when either part is infinite (nan otherwise propagates)."""
    aa, bb = O.abs(a), O.abs(b)
    m, s = O.maximum(aa, bb), O.minimum(aa, bb)
    q = s / O.where(O.equal(m, 0.0), 1.0, m)
    r = m * O.sqrt(1.0 + q * q)
    return O.where(O.logical_or(O.isinf(aa), O.isinf(bb)), _INF, r)


def asinh_real(x):
    """Real asinh, accurate near 0 and without overflow for large |x|."""
    ax = O.abs(x)
    big = O.greater(ax, 2.0 ** 28)
    axs = O.where(big, 1.0, ax)
    small = O.log1p(axs + axs * axs / (1.0 + O.sqrt(1.0 + axs * axs)))
    r = O.where(big, O.log(ax) + math.log(2.0), small)
    return copysign(r, x)


# ---- complex functions: (a, b) -> (re, im); inputs are float64 arrays (complex64 is computed
# in complex128 and rounded once, which keeps its results within an ulp or so)

def mul(a, b, c, d):
    return a * c - b * d, a * d + b * c


def div(a, b, c, d):
    """(a+ib)/(c+id) by Smith's algorithm, as numpy does (so 1/0 gives complex inf/nan)."""
    ac, ad = O.abs(c), O.abs(d)
    first = O.greater_equal(ac, ad)
    zero = O.logical_and(O.equal(ac, 0.0), O.equal(ad, 0.0))
    c1 = O.where(first, c, d)  # the larger
    d1 = O.where(first, d, c)
    c1s = O.where(zero, 1.0, c1)
    rat = d1 / c1s
    scl = 1.0 / (c1s + d1 * rat)
    re1, im1 = (a + b * rat) * scl, (b - a * rat) * scl
    re2, im2 = (a * rat + b) * scl, (b * rat - a) * scl
    re = O.where(first, re1, re2)
    im = O.where(first, im1, im2)
    re = O.where(zero, a / ac, re)
    im = O.where(zero, b / ac, im)
    return re, im


def cabs(a, b):
    return hypot(a, b)


def exp(a, b):
    ea = O.exp(a)
    re = ea * O.cos(b)
    im = O.where(O.equal(b, 0.0), b, ea * O.sin(b))
    re = O.where(O.equal(b, 0.0), ea, re)
    return re, im


def expm1(a, b):
    s = O.sin(b * 0.5)
    re = O.expm1(a) * O.cos(b) - 2.0 * s * s
    im = O.where(O.equal(b, 0.0), b, O.exp(a) * O.sin(b))
    return re, im


def log(a, b):
    h = hypot(a, b)
    near = O.logical_and(O.greater(h, 0.7), O.less(h, 1.4))
    re = O.where(near, 0.5 * O.log1p((a - 1.0) * (a + 1.0) + b * b), O.log(h))
    return re, O.atan2(b, a)


def log1p(a, b):
    h = hypot(a, b)
    small = O.less(h, 0.5)
    re = O.where(small, 0.5 * O.log1p(a * (2.0 + a) + b * b), O.log(hypot(a + 1.0, b)))
    return re, O.atan2(b, a + 1.0)


def sqrt(a, b):
    h = hypot(a, b)
    t = O.sqrt(0.5 * O.abs(a) + 0.5 * h)
    tz = O.where(O.equal(t, 0.0), 1.0, t)
    pos = O.logical_not(signbit(a))
    re = O.where(pos, t, O.abs(b) / (2.0 * tz))
    im = O.where(pos, b / (2.0 * tz), copysign(t, b))
    zero = O.equal(t, 0.0)
    re = O.where(zero, 0.0, re)
    im = O.where(zero, b, im)
    binf = O.isinf(b)
    return O.where(binf, _INF, re), O.where(binf, b, im)


def sin(a, b):
    return O.sin(a) * O.cosh(b), O.cos(a) * O.sinh(b)


def cos(a, b):
    return O.cos(a) * O.cosh(b), O.negative(O.sin(a) * O.sinh(b))


def sinh(a, b):
    return O.sinh(a) * O.cos(b), O.cosh(a) * O.sin(b)


def cosh(a, b):
    return O.cosh(a) * O.cos(b), O.sinh(a) * O.sin(b)


def tanh(a, b):
    """Kahan's tanh (as in C99 libraries): no overflow for large |a|."""
    big = O.greater(O.abs(a), 22.0)
    t = O.tan(b)
    beta = 1.0 + t * t
    s = O.sinh(O.where(big, 0.0, a))
    rho = O.sqrt(1.0 + s * s)
    den = 1.0 + beta * s * s
    re = beta * rho * s / den
    im = t / den
    re = O.where(big, copysign(O.full_like(a, 1.0), a), re)
    im = O.where(big, 4.0 * O.sin(b) * O.cos(b) * O.exp(-2.0 * O.abs(a)), im)
    return re, im


def tan(a, b):
    p, q = tanh(O.negative(b), a)
    return q, O.negative(p)


def asin(a, b):
    """Kahan: asin z = atan2(Re z, Re(sqrt(1-z) sqrt(1+z))) + i asinh(Im(conj(sqrt(1-z)) sqrt(1+z)))."""
    sr, si = sqrt(1.0 - a, O.negative(b))
    pr, pi = sqrt(1.0 + a, b)
    re = O.atan2(a, sr * pr - si * pi)
    im = asinh_real(sr * pi - si * pr)
    return re, im


def acos(a, b):
    """Kahan: acos z = 2 atan2(Re sqrt(1-z), Re sqrt(1+z)) + i asinh(Im(conj(sqrt(1+z)) sqrt(1-z)))."""
    sr, si = sqrt(1.0 - a, O.negative(b))
    pr, pi = sqrt(1.0 + a, b)
    re = 2.0 * O.atan2(sr, pr)
    im = asinh_real(pr * si - pi * sr)
    return re, im


def acosh(a, b):
    """Kahan: acosh z = asinh(Re(conj(sqrt(z-1)) sqrt(z+1))) + 2i atan2(Im sqrt(z-1), Re sqrt(z+1))."""
    mr, mi = sqrt(a - 1.0, b)
    pr, pi = sqrt(a + 1.0, b)
    re = asinh_real(mr * pr + mi * pi)
    im = 2.0 * O.atan2(mi, pr)
    return re, im


def asinh(a, b):
    p, q = asin(O.negative(b), a)  # asinh z = -i asin(iz)
    return q, O.negative(p)


def atanh(a, b):
    r1, i1 = log1p(a, b)
    r2, i2 = log1p(O.negative(a), O.negative(b))
    return 0.5 * (r1 - r2), 0.5 * (i1 - i2)


def atan(a, b):
    p, q = atanh(O.negative(b), a)  # atan z = -i atanh(iz)
    return q, O.negative(p)


def log_scaled(k):
    def f(a, b):
        re, im = log(a, b)
        return re * k, im * k
    return f


def exp2(a, b):
    return exp(a * math.log(2.0), b * math.log(2.0))


def cpow(a, b, c, d):
    """z**w = exp(w log z); 0**w is 0 for real w > 0, 1 for w == 0, nan otherwise (numpy)."""
    lr, li = log(a, b)
    er, ei = mul(c, d, lr, li)
    re, im = exp(er, ei)
    zz = O.logical_and(O.equal(a, 0.0), O.equal(b, 0.0))
    wz = O.logical_and(O.equal(c, 0.0), O.equal(d, 0.0))
    wpos = O.logical_and(O.greater(c, 0.0), O.equal(d, 0.0))
    nan = float("nan")
    re = O.where(zz, O.where(wpos, 0.0, nan), re)
    im = O.where(zz, O.where(wpos, 0.0, nan), im)
    return O.where(wz, 1.0, re), O.where(wz, 0.0, im)


def sign(a, b):
    h = hypot(a, b)
    hz = O.where(O.equal(h, 0.0), 1.0, h)
    return a / hz, b / hz


UNARY = {"exp": exp, "expm1": expm1, "log": log, "log1p": log1p,
         "log2": log_scaled(1.0 / math.log(2.0)), "log10": log_scaled(1.0 / math.log(10.0)),
         "exp2": exp2, "sqrt": sqrt, "sin": sin, "cos": cos, "tan": tan, "sinh": sinh,
         "cosh": cosh, "tanh": tanh, "asin": asin, "acos": acos, "atan": atan, "asinh": asinh,
         "acosh": acosh, "atanh": atanh, "sign": sign}
# numpy spellings of the inverse functions
for _k, _v in (("arcsin", "asin"), ("arccos", "acos"), ("arctan", "atan"), ("arcsinh", "asinh"),
               ("arccosh", "acosh"), ("arctanh", "atanh")):
    UNARY[_k] = UNARY[_v]

F64 = D.float64
