"""frit functions with numpy names and signatures (plus array-API spellings): elementwise,
reductions, movement, linear algebra, nn. Each is a thin call of the C frontend via _array.apply;
argument checking of Python types happens here, everything else (shapes, dtypes) in C."""
import builtins
import ctypes as C
import math

import numpy as np

from . import _dtypes as D
from . import _array as A
from . import _lib as L
from . import _session as S
from ._array import Array, apply, asarray, operand, operands2, weak_scalar, weak_dtype, is_weak
from ._errors import FritError, FritTypeError

__all__ = ["abs", "absolute", "acos", "add", "all", "allclose", "any", "arange", "arccos",
           "arcsin", "arctan", "arctan2", "argmax", "argmin", "around", "array", "array_equal",
           "asin", "astype", "atan", "atan2", "atleast_1d", "atleast_2d", "avg_pool2d",
           "bitwise_and", "bitwise_invert", "bitwise_left_shift", "bitwise_not", "bitwise_or",
           "bitwise_right_shift", "bitwise_xor", "broadcast_arrays", "broadcast_shapes",
           "broadcast_to", "can_cast", "ceil", "clip", "concat", "concatenate", "contiguous",
           "conv2d", "cos", "cosh", "count_nonzero", "cumsum", "divide", "dot", "einsum",
           "empty", "empty_like", "equal", "erf", "exp", "exp2", "expand_dims", "expm1", "eye",
           "finfo", "flip", "fliplr", "flipud", "floor", "floor_divide", "from_dlpack", "full",
           "full_like", "gelu", "greater", "greater_equal", "hstack", "identity", "iinfo",
           "inner", "invert", "isclose", "isfinite", "isinf", "isnan", "left_shift", "less",
           "less_equal", "linspace", "log", "log10", "log1p", "log2", "log_softmax",
           "logical_and", "logical_not", "logical_or", "logical_xor", "logsumexp", "matmul",
           "matrix_transpose", "max", "max_pool2d", "maximum", "mean", "min", "minimum", "mod",
           "moveaxis", "multiply", "negative", "not_equal", "one_hot", "ones", "ones_like",
           "outer", "pad", "permute_dims", "positive", "pow", "power", "prod", "ravel",
           "realize", "reciprocal", "relu", "remainder", "repeat", "reshape", "result_type",
           "right_shift", "roll", "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "softmax",
           "sqrt", "square", "squeeze", "stack", "std", "subtract", "sum", "swapaxes", "take",
           "take_along_axis", "tan", "tanh", "tensordot", "tile", "transpose", "true_divide",
           "trunc", "var", "vdot", "vecdot", "vstack", "where", "zeros", "zeros_like"]

fn = L.fn
_p = C.c_void_p
_unary_t, _binary_t = fn["frit_unary_t"], fn["frit_binary_t"]
_UF, _BF, _RF = L.UF, L.BF, L.RF


def _i64(xs):
    xs = list(xs)
    return (C.c_int64 * builtins.max(1, len(xs)))(*xs)


def _ints(xs):
    xs = list(xs)
    return (C.c_int * builtins.max(1, len(xs)))(*xs)


def _ptrs(xs):
    xs = list(xs)
    return (_p * builtins.max(1, len(xs)))(*xs)


def _int(v, what):
    if v is None:
        raise FritTypeError("%s: got None -- a symbolic (traced) dim has no Python value; use "
                            "frit.zeros_like/full_like/broadcast_to with arrays, or jit with "
                            "dynamic=False" % what)
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        if isinstance(v, Array) and v.ndim == 0 and v.dtype.kind in "iu":
            return int(v)
        raise FritTypeError("%s must be an integer, got %s" % (what, type(v).__name__))
    return int(v)


def _axes(axis, what="axis"):
    """None -> None; int -> (int,); sequence of ints -> tuple."""
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        return tuple(_int(a, what) for a in axis)
    return (_int(axis, what),)


def _shape_arg(shape, what="shape"):
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        return (int(shape),)
    if isinstance(shape, Array):
        shape = shape.tolist()
    if not isinstance(shape, (tuple, list)):
        raise FritTypeError("%s must be an int or a sequence of ints, got %s"
                            % (what, type(shape).__name__))
    return tuple(_int(d, what) for d in shape)


# ---------------------------------------------------------------- builders (replayable)

def _b_unary(ctx, ts, f):
    return _unary_t(ctx, f, ts[0])


def _b_binary(ctx, ts, f):
    return _binary_t(ctx, f, ts[0], ts[1])


def _b_where(ctx, ts):
    return fn["frit_where"](ctx, ts[0], ts[1], ts[2])


def _b_clip(ctx, ts, has_lo, has_hi):
    i = 1
    lo = hi = None
    if has_lo:
        lo, i = ts[i], i + 1
    if has_hi:
        hi = ts[i]
    return fn["frit_clip"](ctx, ts[0], lo, hi)


def _b_astype(ctx, ts, code):
    return fn["frit_astype"](ctx, ts[0], code)


def _b_reduce(ctx, ts, f, axes, naxes, keepdims, ddof):
    return fn["frit_reduce"](ctx, f, ts[0], axes, naxes, keepdims, ddof)


def _b_cumsum(ctx, ts, axis):
    return fn["frit_cumsum"](ctx, ts[0], axis)


def _b_reshape(ctx, ts, n, dims):
    return fn["frit_reshape"](ctx, ts[0], n, dims)


L.lib.frit_binary.restype = _p
L.lib.frit_binary.argtypes = [_p, C.c_int, _p, _p]
L.lib.frit_op_from_name.restype = C.c_int
L.lib.frit_op_from_name.argtypes = [C.c_char_p, C.c_size_t]
_OP_MUL = L.lib.frit_op_from_name(b"MUL", 3)


def _reshape_groups(src, dst):
    """Output dim -> the input dims whose product it is (merges and kept dims), or None for a
    dim that splits an input dim. src/dst are static shapes with equal products."""
    out, i = [], 0
    for j, d in enumerate(dst):
        if d == 1:
            out.append([])
            continue
        grp, prod = [], 1
        while i < len(src) and (prod < d or not grp):
            if src[i] == 1 and grp and prod == d:
                break
            grp.append(i)
            prod *= src[i]
            i += 1
        if prod != d:
            return None
        out.append(grp)
    return out


def _b_reshape_dims(ctx, ts, n, dims, groups):
    """reshape whose output dims are products of input dims: on duck-sized inputs (replay) the
    output dims are those products, so the graph stays the same for every size."""
    t = ts[0]
    if groups is None or builtins.all(fn["frit_tensor_dim_static"](t, i) >= 0
                             for i in range(fn["frit_tensor_ndim"](t))):
        return fn["frit_reshape"](ctx, t, n, dims)
    out = []
    for j, grp in enumerate(groups):
        if not grp:
            out.append(fn["frit_const_int"](ctx, L.I64, 1))
            continue
        u = fn["frit_tensor_dim"](t, grp[0])
        for i in grp[1:]:
            u = L.lib.frit_binary(ctx, _OP_MUL, u, fn["frit_tensor_dim"](t, i))
        out.append(u)
    if not builtins.all(out):
        return None
    return fn["frit_reshape_sym"](ctx, t, n, _ptrs(out))


def _b_permute(ctx, ts, perm):
    return fn["frit_permute"](ctx, ts[0], perm)


def _b_broadcast(ctx, ts, n, dims):
    return fn["frit_broadcast_to"](ctx, ts[0], n, dims)


def _b_squeeze(ctx, ts, axes, n):
    return fn["frit_squeeze"](ctx, ts[0], axes, n)


def _b_unsqueeze(ctx, ts, axis):
    return fn["frit_unsqueeze"](ctx, ts[0], axis)


def _b_pad(ctx, ts, before, after, mode, value):
    return fn["frit_pad"](ctx, ts[0], before, after, mode, value)


def _b_slice(ctx, ts, start, stop, step):
    return fn["frit_slice"](ctx, ts[0], start, stop, step)


def _b_basic_index(ctx, ts, start, stop, step, axes, n):
    """x[ints and slices]: the slice, then the integer-indexed axes squeezed (one lazy op)."""
    t = fn["frit_slice"](ctx, ts[0], start, stop, step)
    return fn["frit_squeeze"](ctx, t, axes, n) if t and n else t


def _b_flip(ctx, ts, axes, n):
    return fn["frit_flip"](ctx, ts[0], axes, n)


def _b_concat(ctx, ts, axis):
    return fn["frit_concat"](ctx, _ptrs(ts), len(ts), axis)


def _b_stack(ctx, ts, axis):
    return fn["frit_stack"](ctx, _ptrs(ts), len(ts), axis)


def _b_repeat(ctx, ts, reps, axis):
    return fn["frit_repeat"](ctx, ts[0], reps, axis)


def _b_tile(ctx, ts, n, reps):
    return fn["frit_tile"](ctx, ts[0], n, reps)


def _b_contiguous(ctx, ts):
    return fn["frit_contiguous"](ctx, ts[0])


def _b_matmul(ctx, ts):
    return fn["frit_matmul"](ctx, ts[0], ts[1])


def _b_dot(ctx, ts):
    return fn["frit_dot"](ctx, ts[0], ts[1])


def _b_conv2d(ctx, ts, stride, padding, dilation, groups):
    return fn["frit_conv2d"](ctx, ts[0], ts[1], ts[2] if len(ts) > 2 else None, stride, padding,
                             dilation, groups)


S.REPLAY_MEMO.add(_b_conv2d)


def _b_pool(ctx, ts, name, kernel, stride, padding):
    return fn[name](ctx, ts[0], kernel, stride, padding)


def _b_softmax(ctx, ts, name, axis):
    return fn[name](ctx, ts[0], axis)


def _b_take(ctx, ts, name, axis):
    return fn[name](ctx, ts[0], ts[1], axis)


def _b_one_hot(ctx, ts, n, code):
    return fn["frit_one_hot"](ctx, ts[0], n, code)


def _b_full_like(ctx, ts, value, code):
    t = ts[0]
    nd = fn["frit_tensor_ndim"](t)
    dims = [fn["frit_tensor_dim"](t, i) for i in range(nd)]
    return fn["frit_full_sym"](ctx, code, nd, _ptrs(dims), value)


def _b_arange(ctx, ts, start, stop, step, code):
    return fn["frit_arange"](ctx, start, stop, step, code)


def _b_linspace(ctx, ts, start, stop, num, endpoint, code):
    return fn["frit_linspace"](ctx, start, stop, num, endpoint, code)


def _b_eye(ctx, ts, n, m, k, code):
    return fn["frit_eye"](ctx, n, m, k, code)


# ---------------------------------------------------------------- elementwise

def _unary(f):
    code = _UF[f]

    def op(x):
        return apply(_b_unary, [x if type(x) is Array else operand(x)], (code,))
    return op


negative = _unary("neg")
abs = absolute = _unary("abs")
sign = _unary("sign")
sqrt = _unary("sqrt")
rsqrt = _unary("rsqrt")
reciprocal = _unary("reciprocal")
exp = _unary("exp")
exp2 = _unary("exp2")
log = _unary("log")
log2 = _unary("log2")
_log1p = _unary("log1p")
_expm1 = _unary("expm1")


def log1p(x):
    x = operand(x)
    return _CX.log1p(x) if x.dtype.kind == "c" else _log1p(x)


def expm1(x):
    x = operand(x)
    return _CX.expm1(x) if x.dtype.kind == "c" else _expm1(x)


sin = _unary("sin")
cos = _unary("cos")
tan = _unary("tan")
arcsin = asin = _unary("asin")
arccos = acos = _unary("acos")
arctan = atan = _unary("atan")
sinh = _unary("sinh")
cosh = _unary("cosh")
tanh = _unary("tanh")
sigmoid = _unary("sigmoid")
relu = _unary("relu")
gelu = _unary("gelu")
erf = _unary("erf")
floor = _unary("floor")
ceil = _unary("ceil")
trunc = _unary("trunc")
isnan = _unary("isnan")
isinf = _unary("isinf")
logical_not = _unary("logical_not")
bitwise_not = bitwise_invert = invert = _unary("bitwise_not")
_round0 = _unary("round")


def round(x, decimals=0):
    """numpy.round: half to even; decimals != 0 scales by 10**decimals (as numpy does)."""
    x = operand(x)
    decimals = _int(decimals, "decimals")
    if x.dtype.kind == "c":
        return _CX.round(x, decimals)
    if x.dtype.kind != "f":
        if decimals >= 0:
            return x
        s = 10.0 ** -decimals
        return astype(multiply(_round0(true_divide(astype(x, D.float64), s)), s), x.dtype)
    if decimals == 0:
        return _round0(x)
    if decimals > 0:
        s = 10.0 ** decimals
        return true_divide(_round0(multiply(x, s)), s)
    s = 10.0 ** -decimals
    return multiply(_round0(true_divide(x, s)), s)


around = round


def positive(x):
    x = operand(x)
    if x.dtype is D.bool_:
        raise FritTypeError("positive: the bool dtype is not supported")
    return x


def square(x):
    x = operand(x)
    if x.dtype is D.bool_:
        x = astype(x, D.int8)  # numpy squares bools in int8
    return multiply(x, x)


def isfinite(x):
    x = operand(x)
    if x.dtype.kind == "c":
        return _CX.isfinite(x)
    if x.dtype.kind != "f":
        return logical_not(zeros_like(x, D.bool_))
    return logical_not(logical_or(isnan(x), isinf(x)))


def log10(x):
    """log(x) / log(10) in x's float dtype (composite; within an ulp or two of numpy)."""
    x = operand(x)
    return multiply(log(x), 1.0 / math.log(10.0)) if x.dtype.kind == "f" else \
        multiply(log(x), 1.0 / math.log(10.0))


_CMP = {"lt", "le", "gt", "ge", "eq", "ne"}
# a comparison with a Python int outside the array's range: every element compares the same way
_CMP_ABOVE = {"lt": True, "le": True, "gt": False, "ge": False, "eq": False, "ne": True}


def _binary(f):
    code = _BF[f]
    is_cmp = f in _CMP
    is_logical = f in ("logical_and", "logical_or", "logical_xor")

    def op(a, b):
        if type(a) is Array and type(b) is Array:
            return apply(_b_binary, [a, b], (code,))
        if is_logical:  # numpy: only the truth of a Python scalar matters (-1 with uint8 is fine)
            a = bool(a) if is_weak(a) else a
            b = bool(b) if is_weak(b) else b
        try:
            a, b = operands2(a, b)
        except OverflowError:
            if not is_cmp:
                raise
            return _cmp_out_of_range(f, a, b)
        return apply(_b_binary, [a, b], (code,))
    op.__name__ = f
    return op


def _cmp_out_of_range(f, a, b):
    if is_weak(a):  # mirror: 5 < x  is  x > 5
        f = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}[f]
        a, b = b, a
    a = operand(a)
    above = b > 0
    val = _CMP_ABOVE[f] if above else not _CMP_ABOVE[f] if f not in ("eq", "ne") else _CMP_ABOVE[f]
    base = astype(a, D.bool_)
    return logical_or(base, True) if val else logical_and(base, False)


def true_divide(a, b):
    """numpy true_divide: integer operands divide in float64, so a weak Python int never
    overflows the array's integer dtype."""
    if is_weak(a) and not isinstance(a, (bool, float, complex)) and isinstance(b, Array) \
            and b.dtype.kind in "iub":
        a = float(a)
    elif is_weak(b) and not isinstance(b, (bool, float, complex)) and isinstance(a, Array) \
            and a.dtype.kind in "iub":
        b = float(b)
    return _true_divide(a, b)


add = _binary("add")
subtract = _binary("sub")
multiply = _binary("mul")
_true_divide = _binary("truediv")
divide = true_divide
floor_divide = _binary("floordiv")
remainder = mod = _binary("remainder")
_power = _binary("pow")


# Exponents whose power of a float array the C frontend computes without pow (x*x, 1/x,
# x*sqrt(x) ...: exact or cheaper, and vectorised) when it sees them as constants. A Python
# scalar is otherwise an input of the eager program (one program for every value), which hid
# them: an eager n-body step's d2 ** 1.5 called powf.
_POW_CONST = frozenset((0.0, 1.0, 2.0, -1.0, 0.5, -0.5, 1.5))


def _b_pow_const(ctx, ts, code, dtcode, e):
    c = A._scalar_f(ctx, dtcode, e)
    return _binary_t(ctx, code, ts[0], c) if c else None


def power(a, b):
    """numpy power; a negative Python-int exponent of an integer array raises ValueError."""
    if is_weak(b) and not isinstance(b, (bool, float, complex)) and b < 0 and isinstance(a, Array) \
            and a.dtype.kind in "iu":
        raise FritError("Integers to negative integer powers are not allowed.")
    if type(a) is Array and a.dtype.kind == "f" and type(b) in (int, float) and b in _POW_CONST:
        return apply(_b_pow_const, [a], (_BF["pow"], a.dtype.code, float(b)))
    return _power(a, b)


pow = power


def _ordered(f, complex_fn):
    """A comparison or maximum/minimum: numpy 2 orders complex numbers lexicographically, which
    the C library leaves to frit._complex."""
    real = _binary(f)

    def op(a, b):
        if _CX.is_c_pair(a, b):
            return complex_fn(f, a, b)
        return real(a, b)
    op.__name__ = real.__name__
    return op


minimum = _ordered("minimum", lambda f, a, b: _CX.extreme(f, a, b))
maximum = _ordered("maximum", lambda f, a, b: _CX.extreme(f, a, b))
arctan2 = atan2 = _binary("atan2")
less = _ordered("lt", lambda f, a, b: _CX.compare(f, a, b))
less_equal = _ordered("le", lambda f, a, b: _CX.compare(f, a, b))
greater = _ordered("gt", lambda f, a, b: _CX.compare(f, a, b))
greater_equal = _ordered("ge", lambda f, a, b: _CX.compare(f, a, b))
equal = _binary("eq")
not_equal = _binary("ne")
logical_and = _binary("logical_and")
logical_or = _binary("logical_or")
logical_xor = _binary("logical_xor")
bitwise_and = _binary("bitwise_and")
bitwise_or = _binary("bitwise_or")
bitwise_xor = _binary("bitwise_xor")
left_shift = bitwise_left_shift = _binary("lshift")
right_shift = bitwise_right_shift = _binary("rshift")


def _cast_int_like_where(v, other):
    """numpy's where casts a Python int the other operand's integer dtype cannot hold C-style,
    modulo 2^bits (where(c, uint64_x, -1) holds 2^64 - 1), where a ufunc raises OverflowError."""
    if isinstance(v, int) and not isinstance(v, bool) and other.kind in "iu":
        bits = np.iinfo(other.value).bits
        v &= (1 << bits) - 1
        if other.kind == "i" and v >= 1 << (bits - 1):
            v -= 1 << bits
    return v


def where(condition, x, y):
    c = operand(condition)
    if c.dtype is not D.bool_:
        c = astype(c, D.bool_)
    if is_weak(x) != is_weak(y):
        if is_weak(x):
            y = operand(y)
            x = _cast_int_like_where(x, y.dtype)
        else:
            x = operand(x)
            y = _cast_int_like_where(y, x.dtype)
    x, y = operands2(x, y)
    return apply(_b_where, [c, x, y])


def clip(x, min=None, max=None):
    x = operand(x)
    if x.dtype.kind == "c" or _CX.is_c_pair(min, max):  # numpy: lexicographic, as maximum/minimum
        r = x if min is None else maximum(x, min)
        return r if max is None else minimum(r, max)
    ops = [x]
    for v in (min, max):
        if v is not None:
            if type(v) is int and x.dtype.kind in "iu":
                # numpy: an integer bound beyond the dtype's range bounds nothing
                info = np.iinfo(x.dtype.value)
                v = builtins.max(int(info.min), builtins.min(int(info.max), v))
            ops.append(weak_scalar(v, x.dtype) if is_weak(v) else operand(v))
    if len(ops) == 1:
        return x
    return apply(_b_clip, ops, (min is not None, max is not None))


def astype(x, dtype, copy=True):
    x = operand(x)
    dt = D.dtype(dtype)
    if dt is x.dtype:
        return x.copy() if copy else x
    return apply(_b_astype, [x], (dt.code,))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = operands2(a, b)
    close = less_equal(abs(subtract(a, b)), add(multiply(abs(b), rtol), atol))
    # an infinity is close only to itself (numpy): inf - x is inf, but so is rtol * inf
    close = logical_and(close, logical_and(isfinite(a), isfinite(b)))
    close = logical_or(close, equal(a, b))
    if equal_nan:
        close = logical_or(close, logical_and(isnan(a), isnan(b)))
    return close


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(all(isclose(a, b, rtol, atol, equal_nan)))


def array_equal(a, b):
    a, b = operand(a), operand(b)
    if a.shape != b.shape:
        return False
    return bool(all(equal(a, b)))


# ---------------------------------------------------------------- type helpers

def result_type(*args):
    """numpy.result_type of arrays and dtypes; Python scalars are weak (NEP 50)."""
    strong = None
    weak = []
    for a in args:
        if is_weak(a):
            weak.append(a)
            continue
        d = a.dtype if isinstance(a, Array) else D.dtype(getattr(a, "dtype", a))
        strong = d if strong is None else D.BY_CODE[fn["frit_promote"](strong.code, d.code)]
    if strong is None:
        if not weak:
            raise FritTypeError("result_type needs at least one array or dtype")
        return asarray(np.result_type(*weak) if len(weak) > 1 else np.asarray(weak[0])).dtype
    for w in weak:
        strong = weak_dtype(w, strong)
    return strong


can_cast = D.can_cast
finfo = D.finfo
iinfo = D.iinfo


# ---------------------------------------------------------------- reductions

def _reduce(fname, x, axis, keepdims, ddof=0.0, dtype=None):
    x = operand(x)
    if dtype is not None:
        x = astype(x, dtype, copy=False)
    axes = _axes(axis)
    if axes is not None and x.ndim == 0 and fname not in ("mean", "var", "std") \
            and builtins.all(a in (0, -1) for a in axes):
        axes = None  # numpy's ufunc reductions accept axis 0 / -1 of a 0-d array
    if fname in ("max", "min", "argmax", "argmin"):
        sh = x.shape
        red = range(len(sh)) if axes is None else [a % len(sh) if len(sh) else a for a in axes]
        if builtins.any(sh[a] == 0 for a in red if isinstance(a, int) and 0 <= a < len(sh)):
            raise FritError("%s: zero-size array to reduction operation which has no identity "
                            "(shape %s)" % (fname, sh))
    if axes is None:
        r = apply(_b_reduce, [x], (_RF[fname], _ints([]), L.ALL_AXES, int(bool(keepdims)),
                                   float(ddof)))
    else:
        r = apply(_b_reduce, [x], (_RF[fname], _ints(axes), len(axes), int(bool(keepdims)),
                                   float(ddof)))
    if dtype is not None and fname in ("sum", "prod") and r.dtype is not x.dtype:
        # numpy accumulates in dtype= itself (sum(uint8, dtype=uint8) wraps, dtype=bool is any);
        # the wider accumulator cast back gives the same integers
        r = astype(r, x.dtype, copy=False)
    return r


def _in_dtype(r, dtype):
    """numpy: an explicit dtype is the result dtype (integer sums/products wrap alike in the
    wider accumulator, so casting afterwards is exact)."""
    if dtype is not None and r.dtype is not D.dtype(dtype):
        r = astype(r, dtype, copy=False)
    return r


def sum(x, axis=None, dtype=None, keepdims=False):
    return _in_dtype(_reduce("sum", x, axis, keepdims, dtype=dtype), dtype)


def prod(x, axis=None, dtype=None, keepdims=False):
    return _in_dtype(_reduce("prod", x, axis, keepdims, dtype=dtype), dtype)


def max(x, axis=None, keepdims=False):
    return _reduce("max", x, axis, keepdims)


def min(x, axis=None, keepdims=False):
    return _reduce("min", x, axis, keepdims)


amax, amin = max, min


def mean(x, axis=None, dtype=None, keepdims=False):
    return _reduce("mean", x, axis, keepdims, dtype=dtype)


def var(x, axis=None, dtype=None, ddof=0, keepdims=False, correction=None):
    """numpy's var; dtype, as in numpy, is the type the computation runs in."""
    x = operand(x) if dtype is None else operand(x).astype(dtype)
    ddof = ddof if correction is None else correction
    if x.dtype.kind == "c":
        return _CX.var(x, axis, ddof, keepdims)
    return _reduce("var", x, axis, keepdims, ddof=ddof)


def std(x, axis=None, dtype=None, ddof=0, keepdims=False, correction=None):
    x = operand(x) if dtype is None else operand(x).astype(dtype)
    ddof = ddof if correction is None else correction
    if x.dtype.kind == "c":
        return sqrt(_CX.var(x, axis, ddof, keepdims))
    return _reduce("std", x, axis, keepdims, ddof=ddof)


def _arg(fname, x, axis, keepdims):
    x = operand(x)
    if axis is not None and not isinstance(axis, (int, np.integer)):
        raise FritTypeError("%s: axis must be an integer or None" % fname)
    r = _reduce(fname, x, axis, False)
    if keepdims:
        r = expand_dims(r, tuple(range(x.ndim)) if axis is None else int(axis) % builtins.max(x.ndim, 1))
    return r


def argmax(x, axis=None, keepdims=False):
    return _arg("argmax", x, axis, keepdims)


def argmin(x, axis=None, keepdims=False):
    return _arg("argmin", x, axis, keepdims)


def any(x, axis=None, keepdims=False):
    return _reduce("any", x, axis, keepdims)


def all(x, axis=None, keepdims=False):
    return _reduce("all", x, axis, keepdims)


def logsumexp(x, axis=None, keepdims=False):
    return _reduce("logsumexp", x, axis, keepdims)


def count_nonzero(x, axis=None, keepdims=False):
    return sum(not_equal(operand(x), 0), axis=axis, keepdims=keepdims)


def cumsum(x, axis=None, dtype=None):
    x = operand(x)
    if dtype is not None:
        x = astype(x, dtype, copy=False)
    ax = L.NO_AXIS if axis is None else _int(axis, "axis")
    r = apply(_b_cumsum, [x], (ax,))
    if dtype is not None and r.dtype is not x.dtype:  # numpy: an explicit dtype accumulates in it
        r = astype(r, x.dtype, copy=False)  # (integer sums wrap alike in any width)
    return r


from ._shape_ops import *  # noqa: E402,F401,F403  (movement, linalg, nn, creation)
from ._shape_ops import (slice_, realize, reshape, zeros_like, zeros, ones,  # noqa: E402,F401
                         _np_create)
from . import _complex as _CX  # noqa: E402  (circular: the complex forms build on these)
