"""frit functions, part 2: movement, linear algebra, nn and creation (numpy names and
signatures). Builders and elementwise functions live in _ops, which re-exports these."""
import builtins
import ctypes as C

import numpy as np

from . import _dtypes as D
from . import _lib as L
from . import _bounds as B
from . import _session as S
from ._array import Array, apply, asarray, operand, operands2
from ._errors import FritAxisError, FritError, FritTypeError
from . import _ops
from ._ops import (_b_reshape_dims, _reshape_groups, _b_permute, _b_broadcast, _b_squeeze, _b_unsqueeze, _b_pad,  # noqa: F401
                   _b_slice, _b_flip, _b_concat, _b_stack, _b_repeat, _b_tile, _b_contiguous,
                   _b_matmul, _b_dot, _b_conv2d, _b_pool, _b_softmax, _b_take, _b_one_hot,
                   _b_full_like, _b_arange, _b_linspace, _b_eye, _i64, _ints, _int, _axes,
                   _shape_arg, astype, multiply, sum, result_type)
__all__ = ["arange", "array", "atleast_1d", "atleast_2d", "avg_pool2d", "broadcast_arrays",
           "broadcast_shapes", "broadcast_to", "concat", "concatenate", "contiguous", "conv2d",
           "dot", "einsum", "empty", "empty_like", "expand_dims", "eye", "flip", "fliplr",
           "flipud", "from_dlpack", "full", "full_like", "hstack", "identity", "inner",
           "linspace", "log_softmax", "matmul", "matrix_transpose", "max_pool2d", "moveaxis",
           "one_hot", "ones", "ones_like", "outer", "pad", "permute_dims", "ravel", "realize",
           "repeat", "reshape", "roll", "softmax", "squeeze", "stack", "swapaxes", "take",
           "take_along_axis", "tensordot", "tile", "transpose", "vdot", "vecdot", "vstack",
           "zeros", "zeros_like"]


# ---------------------------------------------------------------- movement

def reshape(x, shape, order="C", copy=None):
    x = operand(x)
    if order != "C":
        raise FritError("reshape: only order='C' is supported")
    shape = _shape_arg(shape)
    if shape == x.shape:
        return x
    if None not in x.shape and -1 in shape:
        known = 1
        for d in shape:
            known *= d if d != -1 else 1
        size = x.size
        if known and size % known == 0 and shape.count(-1) == 1:
            shape = tuple(size // known if d == -1 else d for d in shape)
    groups = _reshape_groups(x.shape, shape) if None not in x.shape and -1 not in shape and \
        x.size == _prod(shape) else None
    return apply(_b_reshape_dims, [x], (len(shape), _i64(shape), groups))


def _prod(shape):
    p = 1
    for d in shape:
        p *= d
    return p


def ravel(x):
    return reshape(x, (-1,))


def transpose(x, axes=None):
    x = operand(x)
    if axes is None:
        axes = tuple(range(x.ndim))[::-1]
    return permute_dims(x, axes)


def permute_dims(x, axes):
    x = operand(x)
    axes = _axes(axes, "axes")
    if len(axes) != x.ndim:
        raise FritError("permute: axes %s don't match array of shape %s" % (axes, x.shape))
    if axes == tuple(range(x.ndim)):
        return x
    return apply(_b_permute, [x], (_ints(axes),))


def matrix_transpose(x):
    return swapaxes(x, -1, -2)


def swapaxes(x, axis1, axis2):
    x = operand(x)
    n = x.ndim
    a, b = _int(axis1, "axis1"), _int(axis2, "axis2")
    if not (-n <= a < n and -n <= b < n):
        raise FritError("swapaxes: axis %d/%d out of bounds for array of dimension %d" % (a, b, n))
    perm = list(range(n))
    perm[a % n], perm[b % n] = perm[b % n], perm[a % n]
    return permute_dims(x, perm)


def moveaxis(x, source, destination):
    x = operand(x)
    n = x.ndim
    src, dst = _axes(source, "source"), _axes(destination, "destination")
    if len(src) != len(dst):
        raise FritError("moveaxis: source and destination need the same number of elements")
    for a in src + dst:
        if not -n <= a < n:
            raise FritError("moveaxis: axis %d is out of bounds for array of dimension %d" % (a, n))
    src = [a % n for a in src]
    dst = [a % n for a in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise FritError("moveaxis: repeated axis in source %s or destination %s"
                        % (source, destination))
    order = [i for i in range(n) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute_dims(x, order)


def expand_dims(x, axis=0):
    x = operand(x)
    axes = _axes(axis)
    n = x.ndim + len(axes)
    norm = sorted(a % n if -n <= a < n else a for a in axes)
    for a in norm:
        if not 0 <= a < n:
            raise FritAxisError("expand_dims: axis %d is out of bounds for array of dimension %d"
                                % (a, n))
    if len(set(norm)) != len(norm):
        raise FritError("expand_dims: repeated axis")
    for a in norm:
        x = apply(_b_unsqueeze, [x], (a,))
    return x


def squeeze(x, axis=None):
    x = operand(x)
    axes = _axes(axis)
    if axes is None:
        if 1 not in x.shape:
            return x
        return apply(_b_squeeze, [x], (_ints([]), 0))
    if not axes:
        return x
    return apply(_b_squeeze, [x], (_ints(axes), len(axes)))


def broadcast_to(x, shape):
    x = operand(x)
    shape = _shape_arg(shape)
    if shape == x.shape:
        return x
    return apply(_b_broadcast, [x], (len(shape), _i64(shape)))


def broadcast_shapes(*shapes):
    return np.broadcast_shapes(*shapes)


def broadcast_arrays(*arrays):
    arrays = [operand(a) for a in arrays]
    if builtins.any(None in a.shape for a in arrays):
        raise FritError("broadcast_arrays: needs static shapes, got traced (symbolic) shapes %s; "
                        "use binary ops, which broadcast symbolic dims" % [a.shape for a in arrays])
    try:
        shape = np.broadcast_shapes(*[a.shape for a in arrays])
    except ValueError as e:
        raise FritError("broadcast_arrays: %s" % e) from None
    return [broadcast_to(a, shape) for a in arrays]


def _seq(arrays, what):
    if isinstance(arrays, Array) or not isinstance(arrays, (list, tuple)):
        if isinstance(arrays, Array) and arrays.ndim:
            return [arrays[i] for i in range(len(arrays))]
        raise FritTypeError("%s needs a sequence of arrays" % what)
    if not arrays:
        raise FritError("%s: need at least one array" % what)
    xs = [operand(a) for a in arrays]
    dt = result_type(*xs)
    return [astype(a, dt, copy=False) for a in xs]


def concatenate(arrays, axis=0):
    xs = _seq(arrays, "concatenate")
    if axis is None:
        xs, axis = [reshape(a, (-1,)) for a in xs], 0
    return apply(_b_concat, xs, (_int(axis, "axis"),))


concat = concatenate


def stack(arrays, axis=0):
    xs = _seq(arrays, "stack")
    return apply(_b_stack, xs, (_int(axis, "axis"),))


def hstack(arrays):
    xs = [atleast_1d(a) for a in arrays]
    return concatenate(xs, 0 if xs and xs[0].ndim == 1 else 1)


def vstack(arrays):
    return concatenate([atleast_2d(a) for a in arrays], 0)


def atleast_1d(x):
    x = operand(x)
    return reshape(x, (1,)) if x.ndim == 0 else x


def atleast_2d(x):
    x = operand(x)
    return expand_dims(x, tuple(range(2 - x.ndim))) if x.ndim < 2 else x


# frit_pad_mode; "empty" (values unspecified in numpy) pads with zeros
_PAD_MODES = {"constant": 0, "reflect": 1, "edge": 2, "symmetric": 3, "wrap": 4, "empty": 0}


def pad(x, pad_width, mode="constant", constant_values=0):
    x = operand(x)
    if mode not in _PAD_MODES:
        raise FritError("pad: mode %r is not supported (%s)" % (mode, ", ".join(_PAD_MODES)))
    n = x.ndim
    pw = np.asarray(pad_width)
    if pw.dtype.kind not in "iu":
        raise FritTypeError("pad: pad_width must be integers")
    try:
        pw = np.broadcast_to(pw, (n, 2))
    except ValueError:
        raise FritError("pad: pad_width %s does not fit an array of rank %d"
                        % (pad_width, n)) from None
    if not isinstance(constant_values, (int, float, np.integer, np.floating)):
        raise FritTypeError("pad: constant_values must be a scalar")
    return apply(_b_pad, [x], (_i64(pw[:, 0].tolist()), _i64(pw[:, 1].tolist()),
                               _PAD_MODES[mode], float(constant_values)))


def slice_(x, start, stop, step):
    """x[start:stop:step] per axis (lists of ndim entries; None: left out). Used by indexing."""
    x = operand(x)
    d = lambda v: L.SLICE_DEFAULT if v is None else int(v)  # noqa: E731
    return apply(_b_slice, [x], (_i64(map(d, start)), _i64(map(d, stop)), _i64(map(d, step))))


def flip(x, axis=None):
    x = operand(x)
    axes = _axes(axis)
    if axes is None:
        return apply(_b_flip, [x], (_ints([]), -1))
    return apply(_b_flip, [x], (_ints(axes), len(axes)))


def flipud(x):
    return flip(x, 0)


def fliplr(x):
    return flip(x, 1)


_roll = L.lib.frit_roll
_roll.restype = C.c_void_p
_roll.argtypes = [C.c_void_p, C.c_void_p, C.c_int, C.POINTER(C.c_int64), C.POINTER(C.c_int)]


def _b_roll(ctx, ts, n, shifts, axes):
    return _roll(ctx, ts[0], n, shifts, axes)


def roll(x, shift, axis=None):
    """numpy.roll. The shift is taken modulo the axis length in the graph, so it also holds for
    symbolic (traced) dims."""
    x = operand(x)
    shifts = _axes(shift, "shift")
    if axis is None:
        s = builtins.sum(shifts)
        if not -2 ** 63 <= s < 2 ** 63:
            if x.size is None:
                raise FritError("roll: shift %d does not fit 64 bits" % s)
            s = s % x.size if x.size else 0
        return apply(_b_roll, [x], (1, _i64([s]), None))
    axes = _axes(axis)
    try:
        pairs = np.broadcast(np.asarray(shifts, dtype=object), np.asarray(axes))
    except ValueError:
        raise FritError("roll: shift %s and axis %s must broadcast together" % (shift, axis)) from None
    sh, ax = [], []
    for s, a in pairs:
        if not -2 ** 63 <= s < 2 ** 63:
            d = x.shape[a] if -x.ndim <= a < x.ndim else None
            if d is None:
                raise FritError("roll: shift %d does not fit 64 bits" % s)
            s = s % d if d else 0
        sh.append(int(s)), ax.append(int(a))
    return apply(_b_roll, [x], (len(sh), _i64(sh), _ints(ax)))


def repeat(x, repeats, axis=None):
    """numpy.repeat. repeats: an int, or one count per element along the axis (a sequence, numpy
    array or concrete frit array; length 1 broadcasts). Per-element counts fix the output size
    from their values, so a traced (abstract) frit array of counts is an error under frit.jit:
    pass them as a Python list or numpy array (static), which works with symbolic shapes."""
    x = operand(x)
    if isinstance(repeats, Array):
        n = repeats._n
        if n.np is None and (n.abstract or n.expr is None):
            raise FritTypeError(
                "repeat: the repeat counts are a traced array, but the output size depends on their "
                "values; pass them as a Python list or numpy array (or mark the argument static)")
        repeats = repeats.numpy()
    if not isinstance(repeats, (int, np.integer)) or isinstance(repeats, bool):
        r = np.asarray(repeats)
        if r.dtype.kind not in "iub" or r.ndim > 1:
            raise FritTypeError("repeat: repeats must be an int or a 1-D sequence of ints, got %r"
                                % (repeats,))
        if r.ndim == 0 or r.size == 1:
            repeats = int(r.reshape(()))
        else:
            return _repeat_each(x, r.astype(np.int64), axis)
    r = _int(repeats, "repeats")
    return apply(_b_repeat, [x], (r, L.NO_AXIS if axis is None else _int(axis, "axis")))


def _repeat_each(x, r, axis):
    """Per-element counts: a take of the static index list np.repeat(arange(n), r)."""
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    ax = _int(axis, "axis")
    if not -x.ndim <= ax < x.ndim:
        raise FritError("repeat: axis %d is out of bounds for array of dimension %d" % (ax, x.ndim))
    n = x.shape[ax]
    if (r < 0).any():
        raise FritError("repeat: repeats may not contain negative values")
    if n is None:
        raise FritError("repeat: %d per-element counts need the static size of axis %d (array of "
                        "shape %s)" % (r.size, ax, x.shape))
    if n != r.size:
        raise FritError("repeat: operands could not be broadcast together with shape (%d,) (%d,)"
                        % (n, r.size))
    return take(x, asarray(np.repeat(np.arange(n, dtype=np.int64), r)), axis=ax)


def tile(x, reps):
    x = operand(x)
    reps = _shape_arg(reps, "reps")
    return apply(_b_tile, [x], (len(reps), _i64(reps)))


def contiguous(x):
    """Marks x to be materialised (a kernel boundary hint)."""
    return apply(_b_contiguous, [operand(x)])


# ---------------------------------------------------------------- linear algebra

def matmul(a, b):
    a, b = operand(a), operand(b)
    return apply(_b_matmul, [a, b])


def dot(a, b):
    a, b = operands2(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    return apply(_b_dot, [a, b])


def vdot(a, b):
    """numpy.vdot: the first argument is conjugated."""
    return dot(ravel(_conj(a)), ravel(b))


def _conj(x):
    x = operand(x)
    return _ops._CX.conj(x) if x.dtype.kind == "c" else x


def inner(a, b):
    a, b = operand(a), operand(b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    return tensordot(a, b, ([-1], [-1]))


def outer(a, b):
    a, b = operand(a), operand(b)
    return multiply(reshape(a, (-1, 1)), reshape(b, (1, -1)))


def vecdot(x1, x2, axis=-1):
    """The array API's vecdot: sum(conj(x1) * x2) over axis."""
    p = multiply(_conj(x1), x2)
    return sum(p, axis=axis, dtype=p.dtype)  # numpy keeps the operands' dtype (no uint8 -> uint64)


def tensordot(a, b, axes=2):
    """numpy.tensordot via transpose + reshape + matmul."""
    a, b = operand(a), operand(b)
    if isinstance(axes, (int, np.integer)):
        k = int(axes)
        ax_a, ax_b = list(range(a.ndim - k, a.ndim)), list(range(k))
    else:
        ax_a, ax_b = (list(_axes(v)) for v in axes)
    if len(ax_a) != len(ax_b):
        raise FritError("tensordot: shape-mismatch for sum")
    ax_a = [x % a.ndim for x in ax_a]
    ax_b = [x % b.ndim for x in ax_b]
    for i, j in zip(ax_a, ax_b):
        if a.shape[i] is None or b.shape[j] is None:
            raise FritError("tensordot: contracting symbolic (traced) dims needs their static sizes "
                            "(shapes %s and %s)" % (a.shape, b.shape))
        if a.shape[i] != b.shape[j]:
            raise FritError("tensordot: shape-mismatch for sum: %s vs %s" % (a.shape, b.shape))
    fa = [i for i in range(a.ndim) if i not in ax_a]
    fb = [i for i in range(b.ndim) if i not in ax_b]
    k = int(np.prod([a.shape[i] for i in ax_a], dtype=np.int64))
    out_shape = tuple(a.shape[i] for i in fa) + tuple(b.shape[i] for i in fb)
    # the free size spelled out where it is static: -1 is ambiguous when k is 0
    ma = reshape(permute_dims(a, fa + ax_a), (_free_size(a, fa), k))
    mb = reshape(permute_dims(b, ax_b + fb), (k, _free_size(b, fb)))
    return reshape(matmul(ma, mb), out_shape)


def _free_size(x, axes):
    dims = [x.shape[i] for i in axes]
    return -1 if None in dims else int(np.prod(dims, dtype=np.int64))


def einsum(*args, **kwargs):
    """numpy.einsum (frit._einsum: lowered to diagonal views, sums and matmul contractions)."""
    from ._einsum import einsum as _einsum  # deferred: _einsum builds on this module
    return _einsum(*args, **kwargs)


# ---------------------------------------------------------------- nn

def _pair(v, what):
    if isinstance(v, (int, np.integer)):
        return (int(v), int(v))
    v = tuple(_int(e, what) for e in v)
    if len(v) != 2:
        raise FritError("%s must be an int or a pair" % what)
    return v


def softmax(x, axis=-1):
    return apply(_b_softmax, [operand(x)], ("frit_softmax", _int(axis, "axis")))


def log_softmax(x, axis=-1):
    return apply(_b_softmax, [operand(x)], ("frit_log_softmax", _int(axis, "axis")))


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """x: (N, C, H, W), weight: (O, C/groups, KH, KW), bias: (O,) or None (PyTorch layout)."""
    ops = [operand(x), operand(weight)] + ([] if bias is None else [operand(bias)])
    return apply(_b_conv2d, ops, (_i64(_pair(stride, "stride")), _i64(_pair(padding, "padding")),
                                  _i64(_pair(dilation, "dilation")), _int(groups, "groups")))


def _pool(name, x, kernel_size, stride, padding):
    k = _pair(kernel_size, "kernel_size")
    s = k if stride is None else _pair(stride, "stride")
    return apply(_b_pool, [operand(x)], (name, _i64(k), _i64(s), _i64(_pair(padding, "padding"))))


def max_pool2d(x, kernel_size, stride=None, padding=0):
    return _pool("frit_max_pool2d", x, kernel_size, stride, padding)


def avg_pool2d(x, kernel_size, stride=None, padding=0):
    return _pool("frit_avg_pool2d", x, kernel_size, stride, padding)


def _index_arg(idx, what):
    idx = operand(idx)
    if idx.dtype.kind not in "iu":
        raise FritTypeError("%s: indices must be integers, got %s" % (what, idx.dtype.name))
    return idx if idx.dtype is D.int64 else astype(idx, D.int64)


def take(x, indices, axis=None, bounds=None):
    """numpy.take. Out-of-range indices (outside -n..n-1) raise IndexError (bounds="check", the
    default; under frit.jit when the compiled function runs) or are clamped (bounds="clamp",
    negatives wrapped once first); see frit.set_bounds."""
    x = operand(x)
    idx = _index_arg(indices, "take")
    ax = L.NO_AXIS if axis is None else _int(axis, "axis")
    if axis is not None and not -x.ndim <= ax < x.ndim:
        raise FritError("take: axis %d is out of bounds for array of dimension %d" % (ax, x.ndim))
    if B.policy(bounds, x) == "check":
        idx = B.guard(x, ax, idx, "take", flat=axis is None)
    return apply(_b_take, [x, idx], ("frit_take", ax))


def take_along_axis(x, indices, axis, bounds=None):
    """numpy.take_along_axis; out-of-range indices follow `bounds` as in take."""
    x = operand(x)
    idx = _index_arg(indices, "take_along_axis")
    flat = axis is None
    ax = L.NO_AXIS if flat else _int(axis, "axis")
    if not flat and not -x.ndim <= ax < x.ndim:
        raise FritError("take_along_axis: axis %d is out of bounds for array of dimension %d"
                        % (ax, x.ndim))
    if B.policy(bounds, x) == "check":
        idx = B.guard(x, ax, idx, "take_along_axis", flat=flat)
    return apply(_b_take, [x, idx], ("frit_take_along_axis", ax))


def one_hot(indices, num_classes, dtype=D.float32):
    idx = _index_arg(indices, "one_hot")
    return apply(_b_one_hot, [idx], (_int(num_classes, "num_classes"), D.dtype(dtype).code))


# ---------------------------------------------------------------- creation

def _np_create(shape, value, dtype):
    shape = _shape_arg(shape)
    for d in shape:
        if d < 0:
            raise FritError("negative dimensions are not allowed (shape %s)" % (shape,))
    if dtype is None:
        dt = asarray(value).dtype if not isinstance(value, Array) else value.dtype
    else:
        dt = D.dtype(dtype)
    if isinstance(value, Array):
        return broadcast_to(astype(value, dt, copy=False), shape)
    with np.errstate(all="ignore"):
        v = np.full(shape, value, dtype=dt.value)
    return asarray(v, dt) if dt is not D.bfloat16 else asarray(v, dt)


def zeros(shape, dtype=None):
    return _np_create(shape, 0, D.float64 if dtype is None else dtype)


def ones(shape, dtype=None):
    return _np_create(shape, 1, D.float64 if dtype is None else dtype)


def empty(shape, dtype=None):
    return zeros(shape, dtype)


def full(shape, fill_value, dtype=None):
    if not isinstance(fill_value, (bool, int, float, complex, np.generic, Array)):
        raise FritTypeError("full: fill_value must be a scalar, got %s" % type(fill_value).__name__)
    return _np_create(shape, fill_value, dtype)


def _like(x, dtype, shape):
    x = operand(x) if not hasattr(x, "shape") or not hasattr(x, "dtype") else x
    return (x.shape if shape is None else shape), (x.dtype if dtype is None else dtype)


def _lazy_like(x, value, dtype, shape):
    """full_like of a traced array (symbolic dims): built in C on x's dims."""
    if shape is None and isinstance(x, Array) and x._n.np is None and None in x.shape:
        dt = x.dtype if dtype is None else D.dtype(dtype)
        if not isinstance(value, (bool, int, float, complex, np.generic)):
            raise FritTypeError("full_like: fill_value must be a scalar")
        if isinstance(value, (complex, np.complexfloating)):
            if dt.kind == "c":  # the C fill is a double: the imaginary part is added
                return _ops.add(apply(_b_full_like, [x], (0.0, dt.code)), complex(value))
            value = value.real  # numpy keeps the real part
        return apply(_b_full_like, [x], (float(value), dt.code))
    return None


def zeros_like(x, dtype=None, shape=None):
    r = _lazy_like(x, 0, dtype, shape)
    return r if r is not None else zeros(*_like(x, dtype, shape))


def ones_like(x, dtype=None, shape=None):
    r = _lazy_like(x, 1, dtype, shape)
    return r if r is not None else ones(*_like(x, dtype, shape))


def empty_like(x, dtype=None, shape=None):
    return zeros_like(x, dtype, shape)


def full_like(x, fill_value, dtype=None, shape=None):
    r = _lazy_like(x, fill_value, dtype, shape)
    if r is not None:
        return r
    s, d = _like(x, dtype, shape)
    return full(s, fill_value, d)


def _num(v, what):
    if isinstance(v, Array):
        v = v.item()
    if isinstance(v, np.generic):
        v = v.item()
    if not isinstance(v, (int, float)):
        raise FritTypeError("%s must be a real number, got %s" % (what, type(v).__name__))
    return v


def arange(start, stop=None, step=1, dtype=None):
    if stop is None:
        start, stop = 0, start
    start, stop, step = _num(start, "start"), _num(stop, "stop"), _num(step, "step")
    if step == 0:
        raise FritError("arange: step must not be zero")
    if dtype is None:
        dt = D.float64 if builtins.any(isinstance(v, float) for v in (start, stop, step)) else D.int64
    else:
        dt = D.dtype(dtype)
    return apply(_b_arange, [], (float(start), float(stop), float(step), dt.code))


def linspace(start, stop, num=50, endpoint=True, dtype=None):
    start, stop = _num(start, "start"), _num(stop, "stop")
    num = _int(num, "num")
    if num < 0:
        raise FritError("linspace: number of samples, %d, must be non-negative" % num)
    dt = D.float64 if dtype is None else D.dtype(dtype)
    return apply(_b_linspace, [], (float(start), float(stop), num, int(bool(endpoint)), dt.code))


def eye(N, M=None, k=0, dtype=None):
    n = _int(N, "N")
    m = n if M is None else _int(M, "M")
    dt = D.float64 if dtype is None else D.dtype(dtype)
    return apply(_b_eye, [], (n, m, _int(k, "k"), dt.code))


def identity(n, dtype=None):
    return eye(n, dtype=dtype)


def array(x, dtype=None, copy=True):
    return asarray(x, dtype=dtype, copy=copy)


def from_dlpack(x, /, *, device=None, copy=None):
    """Array API from_dlpack: zero-copy view of a DLPack producer's CPU memory (numpy, torch,
    frit); copy=True copies, copy=False refuses to copy (as numpy.from_dlpack)."""
    if device not in (None, "cpu"):
        raise ValueError("from_dlpack: frit arrays live on 'cpu', not %r" % (device,))
    a = np.from_dlpack(x) if copy is None else np.from_dlpack(x, copy=copy)
    return asarray(a)


def realize(*arrays):
    """Evaluates lazy arrays together (one program); returns them."""
    S.realize_nodes([a._n for a in arrays])
    return arrays[0] if len(arrays) == 1 else arrays
