"""numpy ufuncs added for the array API: inverse hyperbolics, cbrt, rint, degree conversions,
signbit, copysign, hypot, logaddexp(2), nextafter, fmod, fmax, fmin (C: src/tensor/elementwise_extra.c)."""
from . import _lib as L
from ._array import Array, apply, operand, operands2
from ._ops import _b_unary, _b_binary

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


acosh = arccosh = _unary("acosh")
asinh = arcsinh = _unary("asinh")
atanh = arctanh = _unary("atanh")
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
