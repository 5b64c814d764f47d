"""complex64/complex128 arrays: a ComplexArray is a pair (re, im) of real frit arrays, and every
complex op is a composite of real frit ops, so fusion, jit, codegen and the reference interpreter
see only real tensors (docs/complex.md). Public functions dispatch here when an argument is
complex; the real paths of frit._ops are untouched."""
import builtins
import math

import numpy as np

from . import _complex_math as M
from . import _dtypes as D
from . import _ops as O
from ._array import Array, is_weak, weak_scalar
from ._errors import FritError, FritTypeError

complex64, complex128 = D.complex64, D.complex128
_RDT = {complex64: D.float32, complex128: D.float64}
_CDT = {D.float32: complex64, D.float64: complex128}
np_types = (np.ndarray, np.generic)
_WIDE = (D.float64, D.int32, D.int64, D.uint32, D.uint64)


def _real_to_c(d):
    """numpy's promotion of real dtype d with complex64."""
    return complex128 if d in _WIDE else complex64


def _weak_c(d):
    """NEP 50: the dtype of a Python complex next to an array of dtype d."""
    if d.kind == "c":
        return d
    return complex64 if d.kind == "f" and d is not D.float64 else complex128


def promote_c(a, b):
    a = a if a.kind == "c" else _real_to_c(a)
    b = b if b.kind == "c" else _real_to_c(b)
    return complex128 if complex128 in (a, b) else complex64


def _is_c_dtype(o):
    if isinstance(o, D.DType):
        return o.kind == "c"
    if o is complex:
        return True
    if isinstance(o, np.dtype):
        return o.kind == "c"
    if isinstance(o, type) and issubclass(o, np.complexfloating):
        return True
    return isinstance(o, str) and o in ("complex64", "complex128", "c64", "c128", "complex",
                                        "cfloat", "csingle", "cdouble")


def is_c(o):
    """Is o a complex value (array, numpy array or scalar, Python complex) or a list holding one?"""
    t = type(o)
    if t is ComplexArray or t is complex:
        return True
    if t is np.ndarray or isinstance(o, np.generic):
        return o.dtype.kind == "c"
    if t is list or t is tuple:
        return builtins.any(is_c(e) for e in o)
    return False


def _any_c(args, kw):
    for a in args:
        if is_c(a) or _is_c_dtype(a):
            return True
    for k, v in kw.items():
        if is_c(v) or (k == "dtype" and _is_c_dtype(v)):
            return True
    return False


# ---------------------------------------------------------------- the array type

class ComplexArray:
    """A complex frit array: `re` and `im` are real frit arrays of the same shape and of dtype
    float32 (complex64) or float64 (complex128). Lazy like frit.Array; np.asarray gives the
    numpy complex array."""
    __slots__ = ("re", "im", "__weakref__")
    __array_priority__ = 101

    def __init__(self, re, im):
        self.re, self.im = re, im

    @property
    def dtype(self):
        return _CDT[self.re.dtype]

    @property
    def shape(self):
        return self.re.shape

    @property
    def ndim(self):
        return self.re.ndim

    @property
    def size(self):
        return self.re.size

    @property
    def itemsize(self):
        return 2 * self.re.itemsize

    @property
    def nbytes(self):
        return 2 * self.re.nbytes

    @property
    def device(self):
        return "cpu"

    @property
    def real(self):
        return self.re

    @property
    def imag(self):
        return self.im

    @property
    def T(self):
        return transpose(self)

    @property
    def mT(self):
        return _pair(O.swapaxes, self, -1, -2)

    def __array_namespace__(self, api_version=None):
        import frit
        return frit

    def to_device(self, device, stream=None):
        if device != "cpu":
            raise FritError("to_device: only 'cpu' is available")
        return self

    def numpy(self):
        re, im = _realize_pair(self)
        out = np.empty(re.shape, self.dtype.value)
        out.real = re
        out.imag = im
        return out

    def __array__(self, dtype=None, copy=None):
        v = self.numpy()
        if dtype is not None:
            if copy is False and np.dtype(dtype) != v.dtype:
                raise ValueError("Unable to avoid copy while creating an array as requested.")
            v = v.astype(dtype, copy=False)
        return v

    def __dlpack__(self, *args, **kwargs):
        return self.numpy().__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return (1, 0)

    def __repr__(self):
        if _abstract(self.re) or _abstract(self.im):
            return "frit.Array(<traced>, shape=%s, dtype=%s)" % (self.shape, self.dtype.name)
        s = np.array_repr(self.numpy())
        return ("frit.Array" + s[5:]).replace("\n", "\n" + " " * 5)

    def __str__(self):
        if _abstract(self.re) or _abstract(self.im):
            return repr(self)
        return str(self.numpy())

    def __format__(self, spec):
        if self.ndim == 0:
            return format(self.numpy()[()], spec)
        return format(str(self), spec)

    def _scalar(self):
        if self.ndim and self.size != 1:
            raise TypeError("only arrays of size 1 can be converted to Python scalars")
        return self.numpy().reshape(())[()]

    def __complex__(self):
        return complex(self._scalar())

    def __float__(self):
        return float(self._scalar().real)

    def __int__(self):
        return int(self._scalar().real)

    def __bool__(self):
        if self.ndim and self.size != 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        return bool(self._scalar())

    def __len__(self):
        return len(self.re)

    def __iter__(self):
        if not self.ndim:
            raise TypeError("iteration over a 0-d array")
        for i in range(len(self)):
            yield self[i]

    def item(self, *args):
        return self.numpy().item(*args)

    def tolist(self):
        return self.numpy().tolist()

    __hash__ = None

    def __getitem__(self, idx):
        if is_c(idx) or isinstance(idx, ComplexArray):
            raise FritTypeError("indexing: a complex array cannot be an index")
        return ComplexArray(self.re[idx], self.im[idx])

    def __setitem__(self, idx, value):
        """x[idx] = value, rebinding the parts (frit's functional update)."""
        if is_c(idx):
            raise FritTypeError("indexing: a complex array cannot be an index")
        v = _as_c(value, self.dtype)
        self.re[idx] = v.re
        self.im[idx] = v.im

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    def __reduce__(self):
        return (asarray, (self.numpy(),))

    def copy(self):
        return ComplexArray(self.re.copy(), self.im.copy())

    def astype(self, dtype, copy=True):
        return astype(self, dtype, copy=copy)

    def conj(self):
        return conj(self)

    conjugate = conj

    def sum(self, axis=None, dtype=None, keepdims=False):
        return sum(self, axis=axis, dtype=dtype, keepdims=keepdims)

    def prod(self, axis=None, dtype=None, keepdims=False):
        return prod(self, axis=axis, dtype=dtype, keepdims=keepdims)

    def mean(self, axis=None, dtype=None, keepdims=False):
        return mean(self, axis=axis, dtype=dtype, keepdims=keepdims)

    def var(self, axis=None, ddof=0, keepdims=False):
        return var(self, axis=axis, ddof=ddof, keepdims=keepdims)

    def std(self, axis=None, ddof=0, keepdims=False):
        return std(self, axis=axis, ddof=ddof, keepdims=keepdims)

    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = shape[0]
        return _pair(O.reshape, self, shape, order=order)

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], (int, np.integer))):
            axes = axes[0]
        return _pair(O.transpose, self, axes if axes != () else None)

    def swapaxes(self, a, b):
        return _pair(O.swapaxes, self, a, b)

    def squeeze(self, axis=None):
        return _pair(O.squeeze, self, axis)

    def flatten(self):
        return _pair(O.reshape, self, (-1,))

    ravel = flatten

    def round(self, decimals=0):
        return round(self, decimals)

    def repeat(self, repeats, axis=None):
        return _pair(O.repeat, self, repeats, axis)

    def take(self, indices, axis=None):
        return _pair(O.take, self, indices, axis)

    def dot(self, other):
        return dot(self, other)

    def flip(self, axis=None):
        return _pair(O.flip, self, axis)

    def __neg__(self):
        return negative(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return abs(self)


def _abstract(a):
    n = a._n
    return n.np is None and (n.abstract or n.expr is None)


def _realize_pair(z):
    """numpy values of both parts, computed in one program when both are lazy."""
    nodes = [n for n in (z.re._n, z.im._n) if n.np is None]
    for n in nodes:
        if n.abstract or n.expr is None:
            raise n.abstract_error()
    if len(nodes) == 2 and nodes[0].sess is nodes[1].sess:
        nodes[0].sess.realize(nodes)
    else:
        for n in nodes:
            n.sess.realize([n])
    return z.re.numpy(), z.im.numpy()


# ---------------------------------------------------------------- conversion

def _from_numpy(a):
    rdt = D.float32 if a.dtype == np.complex64 else D.float64
    re = O.asarray(np.array(a.real, order="C"), rdt)  # (ascontiguousarray makes 0-d 1-d)
    im = O.asarray(np.array(a.imag, order="C"), rdt)
    return ComplexArray(re, im)


def _cast_real(x, rdt):
    return x if x.dtype is rdt else O.astype(x, rdt)


def _as_c(x, cdt=None):
    """x as a ComplexArray (of dtype cdt when given; else x's own complex dtype)."""
    if type(x) is ComplexArray:
        if cdt is None or cdt is x.dtype:
            return x
        r = _RDT[cdt]
        return ComplexArray(_cast_real(x.re, r), _cast_real(x.im, r))
    if is_weak(x):
        c = complex(x)
        cdt = cdt or complex128
        r = _RDT[cdt]
        return ComplexArray(weak_scalar(c.real, r), weak_scalar(c.imag, r))
    if not isinstance(x, Array):
        a = np.asarray(x)
        if a.dtype.kind == "c":
            z = _from_numpy(a.astype(complex64.value if a.dtype == np.complex64
                                     else complex128.value))
            return _as_c(z, cdt)
        x = O.asarray(a)
    cdt = cdt or _real_to_c(x.dtype)
    xr = _cast_real(x, _RDT[cdt])
    return ComplexArray(xr, O.zeros_like(xr))


def _dtype_of(x):
    if type(x) is ComplexArray or isinstance(x, Array):
        return x.dtype
    a = x if isinstance(x, (np.ndarray, np.generic)) else np.asarray(x)
    if a.dtype.kind == "c":
        return D.dtype(a.dtype if a.dtype != np.clongdouble else np.complex128)
    return O.asarray(a).dtype


def _common(*xs):
    """The complex dtype of an op on xs (NEP 50 for Python scalars) and xs as ComplexArrays."""
    strong = None
    weak_complex = False
    for x in xs:
        if is_weak(x):
            weak_complex = weak_complex or isinstance(x, complex)
            continue
        d = _dtype_of(x)
        if strong is None:
            strong = d
        elif d.kind == "c" or strong.kind == "c":
            strong = promote_c(strong, d)
        else:
            strong = O.result_type(strong, d)
    if strong is None:  # only Python scalars
        strong = complex128
    if strong.kind != "c":
        strong = _weak_c(strong) if weak_complex else _real_to_c(strong)
    return strong, [_as_c(x, strong) for x in xs]


def _hi(z):
    """(re, im) in float64: complex64 math runs in complex128 and is rounded once."""
    if z.re.dtype is D.float64:
        return z.re, z.im
    return O.astype(z.re, D.float64), O.astype(z.im, D.float64)


def _lo(re, im, cdt):
    r = _RDT[cdt]
    return ComplexArray(_cast_real(re, r), _cast_real(im, r))


def _bcast(re, im):
    """Both parts at their common broadcast shape (a part may come from one operand only)."""
    if re.shape == im.shape:
        return ComplexArray(re, im)
    if None not in re.shape + im.shape:
        return ComplexArray(*O.broadcast_arrays(re, im))
    # symbolic dims (jit): the shapes may agree at run time; adding zeros broadcasts either way
    return ComplexArray(re + O.zeros_like(im), im + O.zeros_like(re))


def _pair(f, z, *args, **kw):
    return ComplexArray(f(z.re, *args, **kw), f(z.im, *args, **kw))


# ---------------------------------------------------------------- public complex functions

def asarray(x, dtype=None, copy=None):
    dt = None if dtype is None else D.dtype(dtype)
    if type(x) is ComplexArray:
        if dt is not None and dt is not x.dtype:
            return astype(x, dt)
        return x.copy() if copy else x
    if isinstance(x, Array):
        return astype(x, dt)
    if isinstance(x, (list, tuple)) and builtins.any(isinstance(e, (Array, ComplexArray))
                                                      for e in x):
        return stack([asarray(e, dtype) for e in x])
    a = np.asarray(x)
    if dt is not None:
        if dt.kind != "c":
            return O.asarray(a.real if a.dtype.kind == "c" else a, dt)
        a = a.astype(dt.value)
    elif a.dtype not in (np.complex64, np.complex128):
        a = a.astype(np.complex128)
    return _from_numpy(a)


def astype(x, dtype, copy=True):
    dt = D.dtype(dtype)
    if type(x) is not ComplexArray:
        if dt.kind != "c":
            return O.astype(x, dt, copy=copy)
        return _as_c(O.asarray(x) if not isinstance(x, Array) else x, dt)
    if dt.kind == "c":
        return (x.copy() if copy else x) if dt is x.dtype else _as_c(x, dt)
    if dt is D.bool_:
        return O.logical_or(O.not_equal(x.re, 0), O.not_equal(x.im, 0))
    return O.astype(x.re, dt)  # numpy discards the imaginary part (with a ComplexWarning)


def add(a, b):
    _, (x, y) = _common(a, b)
    return _bcast(x.re + y.re, x.im + y.im)


def subtract(a, b):
    _, (x, y) = _common(a, b)
    return _bcast(x.re - y.re, x.im - y.im)


def multiply(a, b):
    _, (x, y) = _common(a, b)
    return _bcast(*M.mul(x.re, x.im, y.re, y.im))


def divide(a, b):
    _, (x, y) = _common(a, b)
    return _bcast(*M.div(x.re, x.im, y.re, y.im))


def negative(x):
    x = _as_c(x)
    return ComplexArray(O.negative(x.re), O.negative(x.im))


def positive(x):
    return _as_c(x)


def conj(x):
    if not is_c(x):
        return O.operand(x) if not isinstance(x, Array) else x
    x = _as_c(x)
    return ComplexArray(x.re, O.negative(x.im))


def real(x):
    if not is_c(x):
        return O.operand(x)
    return _as_c(x).re


def imag(x):
    if not is_c(x):
        return O.zeros_like(O.operand(x))
    return _as_c(x).im


def abs(x):
    x = _as_c(x)
    if x.re.dtype is D.float32:
        a, b = _hi(x)
        return O.astype(O.sqrt(a * a + b * b), D.float32)
    return M.hypot(x.re, x.im)


def angle(x, deg=False):
    if not is_c(x):
        x = O.operand(x)
        f = x if x.dtype.kind == "f" else O.astype(x, D.float64)
        r = O.atan2(O.zeros_like(f), f)
    else:
        x = _as_c(x)
        r = O.atan2(x.im, x.re)
    return r * (180.0 / math.pi) if deg else r


def square(x):
    x = _as_c(x)
    return ComplexArray(x.re * x.re - x.im * x.im, x.re * x.im + x.im * x.re)


def reciprocal(x):
    x = _as_c(x)
    one = O.ones_like(x.re)
    return ComplexArray(*M.div(one, O.zeros_like(x.re), x.re, x.im))


def _unary_c(name):
    f = M.UNARY[name]

    def op(x):
        x = _as_c(x)
        return _lo(*f(*_hi(x)), x.dtype)
    op.__name__ = name
    return op


def _ipow(x, n):
    """x**n by repeated squaring (numpy does the same for integer exponents |n| < 100)."""
    r = None
    base = x
    m = builtins.abs(n)
    while m:
        if m & 1:
            r = base if r is None else multiply(r, base)
        m >>= 1
        if m:
            base = multiply(base, base)
    if r is None:
        r = ComplexArray(O.ones_like(x.re), O.zeros_like(x.im))
    return reciprocal(r) if n < 0 else r


def power(a, b):
    cdt, (x, y) = _common(a, b)
    if is_weak(b) and complex(b).imag == 0 and float(complex(b).real).is_integer() \
            and builtins.abs(complex(b).real) < 100:
        return _ipow(x, int(complex(b).real))
    xr, xi = _hi(x)
    yr, yi = _hi(y)
    return _lo_b(M.cpow(xr, xi, yr, yi), cdt)


def _lo_b(parts, cdt):
    z = _lo(parts[0], parts[1], cdt)
    return _bcast(z.re, z.im)


def equal(a, b):
    _, (x, y) = _common(a, b)
    return O.logical_and(O.equal(x.re, y.re), O.equal(x.im, y.im))


def not_equal(a, b):
    _, (x, y) = _common(a, b)
    return O.logical_or(O.not_equal(x.re, y.re), O.not_equal(x.im, y.im))


def isnan(x):
    x = _as_c(x)
    return O.logical_or(O.isnan(x.re), O.isnan(x.im))


def isinf(x):
    x = _as_c(x)
    return O.logical_or(O.isinf(x.re), O.isinf(x.im))


def isfinite(x):
    x = _as_c(x)
    return O.logical_and(O.isfinite(x.re), O.isfinite(x.im))


def _nonzero(x):
    x = _as_c(x)
    return O.logical_or(O.not_equal(x.re, 0), O.not_equal(x.im, 0))


def _truth(x):
    return _nonzero(x) if is_c(x) else x


def logical_not(x):
    return O.logical_not(_nonzero(x))


def logical_and(a, b):
    return O.logical_and(_truth(a), _truth(b))


def logical_or(a, b):
    return O.logical_or(_truth(a), _truth(b))


def logical_xor(a, b):
    return O.logical_xor(_truth(a), _truth(b))


def where(condition, x, y):
    if is_c(condition):
        condition = _nonzero(condition)
    _, (u, v) = _common(x, y)
    return _bcast(O.where(condition, u.re, v.re), O.where(condition, u.im, v.im))


def round(x, decimals=0):
    x = _as_c(x)
    return ComplexArray(O.round(x.re, decimals), O.round(x.im, decimals))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    d = abs(subtract(a, b))
    close = O.less_equal(d, atol + rtol * abs(b))
    close = O.logical_or(close, equal(a, b))
    if equal_nan:
        close = O.logical_or(close, O.logical_and(isnan(a), isnan(b)))
    return close


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(O.all(isclose(a, b, rtol, atol, equal_nan)))


def array_equal(a, b):
    a, b = _as_c(a), _as_c(b)
    if a.shape != b.shape:
        return False
    return bool(O.all(equal(a, b)))


# ---- reductions

def _rdt_arg(x, dtype):
    x = _as_c(x)
    if dtype is not None:
        x = astype(x, dtype, copy=False)
        if type(x) is not ComplexArray:
            raise FritTypeError("reduction of a complex array to real dtype %s" % dtype)
    return x


def sum(x, axis=None, dtype=None, keepdims=False):
    x = _rdt_arg(x, dtype)
    return _pair(O.sum, x, axis=axis, keepdims=keepdims)


def mean(x, axis=None, dtype=None, keepdims=False):
    x = _rdt_arg(x, dtype)
    return _pair(O.mean, x, axis=axis, keepdims=keepdims)


def var(x, axis=None, dtype=None, ddof=0, keepdims=False, correction=None):
    x = _rdt_arg(x, dtype)
    return O.var(x.re, axis=axis, ddof=ddof, keepdims=keepdims, correction=correction) + \
        O.var(x.im, axis=axis, ddof=ddof, keepdims=keepdims, correction=correction)


def std(x, axis=None, dtype=None, ddof=0, keepdims=False, correction=None):
    return O.sqrt(var(x, axis, dtype, ddof, keepdims, correction))


def cumsum(x, axis=None, dtype=None):
    x = _rdt_arg(x, dtype)
    return _pair(O.cumsum, x, axis=axis)


def _prod1(z, ax):
    """Product over one static axis by pairwise halving (multiplies in a tree, not in order)."""
    y = _pair(O.moveaxis, z, ax, -1)
    m = y.shape[-1]
    if m is None:
        raise FritError("prod: a complex product needs a static length along the reduced axis "
                        "(got a symbolic dim under jit)")
    if m == 0:
        one = O.sum(y.re, axis=-1) * 0.0 + 1.0
        return ComplexArray(one, O.zeros_like(one))
    while m > 1:
        h = m // 2
        p = multiply(y[..., :h], y[..., h:2 * h])
        if m % 2:
            p = concatenate([p, y[..., 2 * h:]], axis=-1)
        y, m = p, h + m % 2
    return y[..., 0]


def prod(x, axis=None, dtype=None, keepdims=False):
    x = _rdt_arg(x, dtype)
    nd = x.ndim
    if nd == 0:
        return x
    if axis is None:
        axes = list(range(nd))
    else:
        axes = [a % builtins.max(nd, 1) for a in ((axis,) if isinstance(axis, int) else axis)]
    r = x
    for a in sorted(axes, reverse=True):
        r = _prod1(r, a)
    if keepdims:
        for a in sorted(axes):
            r = _pair(O.expand_dims, r, a)
    return r


# ---- linear algebra: bilinear real ops applied to the parts

def _bilinear(f, a, b, **kw):
    ca, cb = is_c(a), is_c(b)
    cdt, (x, y) = _common(a, b)
    r = _RDT[cdt]
    if not ca:  # real @ complex: two real products
        xr = _cast_real(O.operand(a) if not isinstance(a, Array) else a, r)
        return ComplexArray(f(xr, y.re, **kw), f(xr, y.im, **kw))
    if not cb:
        yr = _cast_real(O.operand(b) if not isinstance(b, Array) else b, r)
        return ComplexArray(f(x.re, yr, **kw), f(x.im, yr, **kw))
    return ComplexArray(f(x.re, y.re, **kw) - f(x.im, y.im, **kw),
                        f(x.re, y.im, **kw) + f(x.im, y.re, **kw))


def matmul(a, b):
    return _bilinear(O.matmul, a, b)


def dot(a, b):
    return _bilinear(O.dot, a, b)


def inner(a, b):
    return _bilinear(O.inner, a, b)


def outer(a, b):
    return _bilinear(O.outer, a, b)


def tensordot(a, b, axes=2):
    return _bilinear(O.tensordot, a, b, axes=axes)


def _ravel(x):
    return _pair(O.ravel, _as_c(x)) if is_c(x) else O.ravel(x)


def vdot(a, b):
    """numpy vdot: the first argument is conjugated."""
    return dot(_ravel(conj(a)), _ravel(b))


def vecdot(x1, x2, axis=-1):
    """Array API vecdot: sum(conj(x1) * x2) over axis."""
    return sum(multiply(conj(x1), x2), axis=axis)


# ---- movement

def _moving(f):
    def op(x, *args, **kw):
        return _pair(f, _as_c(x), *args, **kw)
    op.__name__ = f.__name__
    return op


def _many(f):
    def op(arrays, *args, **kw):
        _, zs = _common(*arrays)
        return ComplexArray(f([z.re for z in zs], *args, **kw), f([z.im for z in zs], *args, **kw))
    op.__name__ = f.__name__
    return op


concatenate = _many(O.concatenate)
stack = _many(O.stack)
transpose = _moving(O.transpose)


def broadcast_arrays(*arrays):
    _, zs = _common(*arrays)
    res = O.broadcast_arrays(*[z.re for z in zs])
    ims = O.broadcast_arrays(*[z.im for z in zs])
    return [ComplexArray(r, i) for r, i in zip(res, ims)]


def pad(x, pad_width, mode="constant", constant_values=0):
    x = _as_c(x)
    c = complex(constant_values)
    return ComplexArray(O.pad(x.re, pad_width, mode, c.real), O.pad(x.im, pad_width, mode, c.imag))


def take_along_axis(x, indices, axis):
    return _pair(O.take_along_axis, _as_c(x), indices, axis)


# ---- creation

def _creator(name):
    f = getattr(O, name)

    def op(shape, *args, dtype=None, **kw):
        if args and name == "full":
            fill, rest = args[0], args[1:]
            if rest:
                dtype = rest[0]
        elif name == "full":
            fill = kw.pop("fill_value")
        else:
            fill = 1.0 if name == "ones" else 0.0
            if args:
                dtype = args[0]
        dt = D.dtype(dtype) if dtype is not None else _dtype_of(fill)
        if dt.kind != "c":
            return f(shape, complex(fill).real, dtype=dt) if name == "full" else f(shape, dtype=dt)
        c, r = complex(fill), _RDT[dt]
        return ComplexArray(O.full(shape, c.real, dtype=r), O.full(shape, c.imag, dtype=r))
    op.__name__ = name
    return op


def _like_creator(name, fill):
    f = getattr(O, name)

    def op(x, *args, dtype=None, shape=None, **kw):
        if name == "full_like":
            v = args[0] if args else kw.pop("fill_value")
            args = args[1:]
        else:
            v = fill
        if args:
            dtype = args[0]
        src = x if (type(x) is ComplexArray or isinstance(x, Array)) else _as_c(x) \
            if is_c(x) else O.asarray(x)
        dt = src.dtype if dtype is None else D.dtype(dtype)
        base = src.re if type(src) is ComplexArray else src
        if dt.kind != "c":
            return O.full_like(base, complex(v).real, dtype=dt, shape=shape)
        c, r = complex(v), _RDT[dt]
        return ComplexArray(O.full_like(base, c.real, dtype=r, shape=shape),
                            O.full_like(base, c.imag, dtype=r, shape=shape))
    op.__name__ = name
    return op


def result_type(*args):
    if not builtins.any(is_c(a) or _is_c_dtype(a) or (getattr(a, "dtype", None) is not None
                                                       and _is_c_dtype(a.dtype)) for a in args):
        return O.result_type(*args)
    strong = None
    weak_complex = False
    for a in args:
        if is_weak(a):
            weak_complex = weak_complex or isinstance(a, complex)
            continue
        d = a.dtype if hasattr(a, "dtype") and not isinstance(a, (np.dtype, type)) else D.dtype(a)
        d = D.dtype(d)
        strong = d if strong is None else (promote_c(strong, d) if "c" in (strong.kind, d.kind)
                                           else O.result_type(strong, d))
    if strong is None:
        return complex128
    if strong.kind != "c" and weak_complex:
        return _weak_c(strong)
    return strong
