"""frit.diagonal and frit.trace (numpy signatures): the diagonal is a view built in C
(frit_diagonal), so it fuses into whatever reads it and works with symbolic dims under jit."""
import ctypes as C

import numpy as np

from . import _lib as L
from . import _ops as O
from ._array import apply, operand
from ._errors import FritTypeError

_p = C.c_void_p
_f = L.lib.frit_diagonal
_f.restype, _f.argtypes = _p, [_p, _p, C.c_int64, C.c_int, C.c_int]


def _int(v, what):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise FritTypeError("%s must be an integer, got %s" % (what, type(v).__name__))
    return int(v)


def _b_diagonal(ctx, ts, offset, axis1, axis2):
    return _f(ctx, ts[0], offset, axis1, axis2)


def diagonal(a, offset=0, axis1=0, axis2=1):
    """numpy.diagonal: the diagonal (offset > 0 above, < 0 below) of the axis1/axis2 planes,
    as the last axis of the result."""
    return apply(_b_diagonal, [operand(a)], (_int(offset, "diagonal: offset"),
                                             _int(axis1, "diagonal: axis1"),
                                             _int(axis2, "diagonal: axis2")))


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """numpy.trace: sum of diagonal(a, offset, axis1, axis2) with numpy's sum dtype."""
    if out is not None:
        raise FritTypeError("trace: out= is not supported (frit arrays are values)")
    return O.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)
