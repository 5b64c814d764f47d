"""numpy ufuncs added for the array API: inverse hyperbolics, cbrt, rint, degree conversions,
signbit, copysign, hypot, logaddexp(2), nextafter, fmod, fmax, fmin (C: src/tensor/elementwise_extra.c)."""
from . import _lib as L
from ._array import Array, apply, operand, operands2
from ._ops import _b_unary, _b_binary
from . import _complex as _CX

__all__ = ["acosh", "arccosh", "asinh", "arcsinh", "atanh", "arctanh", "cbrt", "rint", "deg2rad",
           "radians", "rad2deg", "degrees", "signbit", "copysign", "hypot", "logaddexp",
           "logaddexp2", "nextafter", "fmod", "fmax", "fmin"]


def _unary(f):
    code = L.UF[f]

    def op(x):
        return apply(_b_unary, [x if type(x) is Array else operand(x)], (code,))
    op.__name__ = f
    return op


def _binary(f):
    code = L.BF[f]

    def op(a, b):
        if type(a) is not Array or type(b) is not Array:
            a, b = operands2(a, b)
        return apply(_b_binary, [a, b], (code,))
    op.__name__ = f
    return op




def _c(f, complex_f):
    """f, or for a complex argument its complex form from the parts (frit._complex)."""
    def op(x):
        x = x if type(x) is Array else operand(x)
        return complex_f(x) if x.dtype.kind == "c" else f(x)
    op.__name__ = f.__name__
    return op


acosh = arccosh = _c(_unary("acosh"), lambda z: _CX.acosh(z))
asinh = arcsinh = _c(_unary("asinh"), lambda z: _CX.asinh(z))
atanh = arctanh = _c(_unary("atanh"), lambda z: _CX.atanh(z))
cbrt = _unary("cbrt")
rint = _unary("rint")
deg2rad = radians = _unary("deg2rad")
rad2deg = degrees = _unary("rad2deg")
signbit = _unary("signbit")
copysign = _binary("copysign")
hypot = _binary("hypot")
logaddexp = _binary("logaddexp")
logaddexp2 = _binary("logaddexp2")
nextafter = _binary("nextafter")
fmod = _binary("fmod")
fmax = _binary("fmax")
fmin = _binary("fmin")
