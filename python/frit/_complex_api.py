"""Dispatch of the public frit functions and Array operators to frit._complex when an argument
is complex (ComplexArray, numpy complex, Python complex, or a complex dtype). Every other call
goes to the real implementation unchanged; ops without a complex meaning raise FritTypeError."""
import functools
import math

from . import _complex as CX
from . import _dtypes as D
from . import _ops as O
from ._array import Array
from ._errors import FritTypeError

ComplexArray = CX.ComplexArray
complex64, complex128 = D.complex64, D.complex128


def _dt_name(args, kw):
    for a in list(args) + list(kw.values()):
        if type(a) is ComplexArray:
            return a.dtype.name
    return "complex"


def _reject(name):
    def f(*args, **kw):
        raise FritTypeError("frit.%s is not supported for complex dtype %s (complex numbers have "
                            "no order / no integer or bit structure)" % (name, _dt_name(args, kw)))
    return f


# ---- real fallbacks for functions frit._ops may not have (the inverse hyperbolics)

def _asinh_r(x):
    x = O.operand(x)
    return CX.M.asinh_real(x if x.dtype.kind == "f" else O.astype(x, D.float64))


def _acosh_r(x):
    x = O.operand(x)
    x = x if x.dtype.kind == "f" else O.astype(x, D.float64)
    t = x - 1.0
    big = O.greater(x, 2.0 ** 28)
    ts = O.where(big, 1.0, t)
    r = O.log1p(ts + O.sqrt(2.0 * ts + ts * ts))
    return O.where(big, O.log(x) + math.log(2.0), r)


def _atanh_r(x):
    x = O.operand(x)
    x = x if x.dtype.kind == "f" else O.astype(x, D.float64)
    return 0.5 * O.log1p(2.0 * x / (1.0 - x))


_REAL_FALLBACK = {"asinh": _asinh_r, "arcsinh": _asinh_r, "acosh": _acosh_r,
                  "arccosh": _acosh_r, "atanh": _atanh_r, "arctanh": _atanh_r,
                  "conj": CX.conj, "conjugate": CX.conj, "real": CX.real, "imag": CX.imag,
                  "angle": CX.angle}

_COMPLEX = {
    "add": CX.add, "subtract": CX.subtract, "multiply": CX.multiply, "divide": CX.divide,
    "true_divide": CX.divide, "negative": CX.negative, "positive": CX.positive,
    "conj": CX.conj, "conjugate": CX.conj, "real": CX.real, "imag": CX.imag, "abs": CX.abs,
    "absolute": CX.abs, "angle": CX.angle, "square": CX.square, "reciprocal": CX.reciprocal,
    "power": CX.power, "pow": CX.power, "equal": CX.equal, "not_equal": CX.not_equal,
    "isnan": CX.isnan, "isinf": CX.isinf, "isfinite": CX.isfinite,
    "logical_not": CX.logical_not, "logical_and": CX.logical_and, "logical_or": CX.logical_or,
    "logical_xor": CX.logical_xor, "where": CX.where, "round": CX.round, "around": CX.round,
    "isclose": CX.isclose, "allclose": CX.allclose, "array_equal": CX.array_equal,
    "sum": CX.sum, "mean": CX.mean, "var": CX.var, "std": CX.std, "cumsum": CX.cumsum,
    "prod": CX.prod, "matmul": CX.matmul, "dot": CX.dot, "inner": CX.inner, "outer": CX.outer,
    "tensordot": CX.tensordot, "vdot": CX.vdot, "vecdot": CX.vecdot,
    "concatenate": CX.concatenate, "concat": CX.concatenate, "stack": CX.stack,
    "broadcast_arrays": CX.broadcast_arrays, "pad": CX.pad,
    "take_along_axis": CX.take_along_axis, "astype": CX.astype, "asarray": CX.asarray,
    "array": CX.asarray, "result_type": CX.result_type,
}
for _n in CX.M.UNARY:
    _COMPLEX[_n] = CX._unary_c(_n)
for _n in ("reshape", "transpose", "permute_dims", "swapaxes", "moveaxis", "squeeze",
           "expand_dims", "broadcast_to", "flip", "flipud", "fliplr", "roll", "repeat", "tile",
           "ravel", "matrix_transpose", "atleast_1d", "atleast_2d", "take", "contiguous"):
    _COMPLEX[_n] = CX._moving(getattr(O, _n))
for _n in ("hstack", "vstack"):
    _COMPLEX[_n] = CX._many(getattr(O, _n))
for _n in ("zeros", "ones", "empty", "full"):
    _COMPLEX[_n] = CX._creator(_n)
for _n, _v in (("zeros_like", 0.0), ("ones_like", 1.0), ("empty_like", 0.0), ("full_like", None)):
    _COMPLEX[_n] = CX._like_creator(_n, _v)


def _realize(*arrays):
    parts = []
    for a in arrays:
        parts += [a.re, a.im] if type(a) is ComplexArray else [a]
    O.realize(*parts)
    return arrays[0] if len(arrays) == 1 else arrays


_COMPLEX["realize"] = _realize


def _dispatch(name, real, cfn):
    any_c = CX._any_c

    @functools.wraps(real)
    def f(*args, **kw):
        if any_c(args, kw):
            return cfn(*args, **kw)
        return real(*args, **kw)
    return f


def complex_dispatch(fn, name):
    """fn for real arguments; for complex ones the complex form of `name`, or a clear
    FritTypeError where there is none (functions defined outside _ops)."""
    return _dispatch(name, fn, _COMPLEX.get(name) or _reject(name))


_names = sorted(set(O.__all__) | set(_COMPLEX) | set(_REAL_FALLBACK))
__all__ = ["complex64", "complex128", "ComplexArray"]
for _n in _names:
    _real = getattr(O, _n, None) or _REAL_FALLBACK.get(_n)
    if _real is None:
        continue
    _c = _COMPLEX.get(_n) or _reject(_n)
    globals()[_n] = _dispatch(_n, _real, _c)
    __all__.append(_n)


# ---------------------------------------------------------------- operators

_BIN = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
        "pow": "power", "matmul": "matmul", "eq": "equal", "ne": "not_equal"}
_BAD = {"floordiv": "floor_divide", "mod": "remainder", "and": "bitwise_and",
        "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "left_shift",
        "rshift": "right_shift", "lt": "less", "le": "less_equal", "gt": "greater",
        "ge": "greater_equal"}
_NOREFLECT = {"eq", "ne", "lt", "le", "gt", "ge"}
_OPS_TYPES = (ComplexArray, Array, complex, int, float, bool, list, tuple) + CX.np_types


def _operator(cfn, reflected):
    def m(self, other):
        if not isinstance(other, _OPS_TYPES):
            return NotImplemented
        return cfn(other, self) if reflected else cfn(self, other)
    return m


def _patched(orig, cfn, reflected):
    is_c = CX.is_c

    def m(self, other):
        if is_c(other):
            return cfn(other, self) if reflected else cfn(self, other)
        return orig(self, other)
    return m


def _inplace_c(name):
    def m(self, other):
        r = _COMPLEX[_BIN[name]](self, other)
        if r.dtype is not self.dtype:
            raise FritTypeError("Cannot cast ufunc '%s' output from dtype('%s') to dtype('%s') "
                                "with casting rule 'same_kind'" % (_BIN[name], r.dtype,
                                                                  self.dtype))
        if r.shape != self.shape:
            raise FritTypeError("non-broadcastable output operand with shape %s doesn't match "
                                "the broadcast shape %s" % (self.shape, r.shape))
        self.re, self.im = r.re, r.im
        return self
    return m


for _k, _f in _BIN.items():
    _cf = _COMPLEX[_f]
    setattr(ComplexArray, "__%s__" % _k, _operator(_cf, False))
    setattr(Array, "__%s__" % _k, _patched(getattr(Array, "__%s__" % _k), _cf, False))
    if _k not in _NOREFLECT:
        setattr(ComplexArray, "__r%s__" % _k, _operator(_cf, True))
        setattr(Array, "__r%s__" % _k, _patched(getattr(Array, "__r%s__" % _k), _cf, True))
        setattr(ComplexArray, "__i%s__" % _k, _inplace_c(_k))
for _k, _f in _BAD.items():
    _rf = _reject(_f)
    setattr(ComplexArray, "__%s__" % _k, _operator(_rf, False))
    setattr(Array, "__%s__" % _k, _patched(getattr(Array, "__%s__" % _k), _rf, False))
    if _k not in _NOREFLECT:
        setattr(ComplexArray, "__r%s__" % _k, _operator(_rf, True))
        setattr(Array, "__r%s__" % _k, _patched(getattr(Array, "__r%s__" % _k), _rf, True))
ComplexArray.__invert__ = lambda self: _reject("bitwise_not")(self)
ComplexArray.__floor__ = ComplexArray.__ceil__ = ComplexArray.__trunc__ = \
    lambda self: _reject("floor")(self)

# ---- Array methods numpy arrays have for complex work
_astype_real = Array.astype


def _array_astype(self, dtype, copy=True):
    if CX._is_c_dtype(dtype) or (isinstance(dtype, str) and D.dtype(dtype).kind == "c"):
        return CX.astype(self, dtype, copy=copy)
    return _astype_real(self, dtype, copy=copy)


Array.astype = _array_astype
Array.real = property(lambda self: self)
Array.imag = property(lambda self: O.zeros_like(self))
Array.conj = Array.conjugate = lambda self: self

# frit.var is frit._control.var (a kernel variable or the statistic), which calls _ops.var
O.var = globals()["var"]
