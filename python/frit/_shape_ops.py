"""frit functions, part 2: movement, linear algebra, nn and creation (numpy names and
signatures). Builders and elementwise functions live in _ops, which re-exports these."""
import builtins

import numpy as np

from . import _dtypes as D
from . import _lib as L
from ._array import Array, apply, asarray, operand, operands2
from ._errors import FritError, FritTypeError
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
            raise FritError("expand_dims: axis %d is out of bounds for array of dimension %d"
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
    return reshape(x, (1,) * (2 - x.ndim) + x.shape) if x.ndim < 2 else x


_PAD_MODES = {"constant": 0, "reflect": 1, "edge": 2}


def pad(x, pad_width, mode="constant", constant_values=0):
    x = operand(x)
    if mode not in _PAD_MODES:
        raise FritError("pad: mode %r is not supported (constant, reflect, edge)" % (mode,))
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


def roll(x, shift, axis=None):
    x = operand(x)
    if axis is None:
        return reshape(roll(reshape(x, (-1,)), shift, 0), x.shape)
    shifts, axes = _axes(shift, "shift"), _axes(axis)
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    for s, a in zip(shifts, axes):
        n = x.shape[a]
        if not n:
            continue
        s %= n
        if s == 0:
            continue
        nd = x.ndim
        st = [None] * nd
        sp = [None] * nd
        st[a] = n - s
        head = slice_(x, st, [None] * nd, [None] * nd)
        sp[a] = n - s
        tail = slice_(x, [None] * nd, sp, [None] * nd)
        x = concatenate([head, tail], a)
    return x


def repeat(x, repeats, axis=None):
    x = operand(x)
    r = _int(repeats, "repeats")
    return apply(_b_repeat, [x], (r, L.NO_AXIS if axis is None else _int(axis, "axis")))


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
    return dot(ravel(a), ravel(b))


def inner(a, b):
    a, b = operand(a), operand(b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    return tensordot(a, b, ([-1], [-1]))


def outer(a, b):
    a, b = operand(a), operand(b)
    return multiply(reshape(a, (-1, 1)), reshape(b, (1, -1)))


def vecdot(x1, x2, axis=-1):
    p = multiply(x1, x2)
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
        if a.shape[i] != b.shape[j]:
            raise FritError("tensordot: shape-mismatch for sum: %s vs %s" % (a.shape, b.shape))
    fa = [i for i in range(a.ndim) if i not in ax_a]
    fb = [i for i in range(b.ndim) if i not in ax_b]
    k = int(np.prod([a.shape[i] for i in ax_a], dtype=np.int64))
    out_shape = tuple(a.shape[i] for i in fa) + tuple(b.shape[i] for i in fb)
    ma = reshape(permute_dims(a, fa + ax_a), (-1 if fa else 1, k))
    mb = reshape(permute_dims(b, ax_b + fb), (k, -1 if fb else 1))
    return reshape(matmul(ma, mb), out_shape)


def einsum(*args, **kwargs):
    raise FritError("einsum is not supported yet")


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


def take(x, indices, axis=None):
    x = operand(x)
    idx = _index_arg(indices, "take")
    ax = L.NO_AXIS if axis is None else _int(axis, "axis")
    return apply(_b_take, [x, idx], ("frit_take", ax))


def take_along_axis(x, indices, axis):
    x = operand(x)
    idx = _index_arg(indices, "take_along_axis")
    return apply(_b_take, [x, idx], ("frit_take_along_axis", _int(axis, "axis")))


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
    if not isinstance(fill_value, (bool, int, float, np.generic, Array)):
        if isinstance(fill_value, complex):
            raise FritTypeError("complex numbers are not supported by frit")
        raise FritTypeError("full: fill_value must be a scalar, got %s" % type(fill_value).__name__)
    return _np_create(shape, fill_value, dtype)


def _like(x, dtype, shape):
    x = operand(x) if not hasattr(x, "shape") or not hasattr(x, "dtype") else x
    return (x.shape if shape is None else shape), (x.dtype if dtype is None else dtype)


def _lazy_like(x, value, dtype, shape):
    """full_like of a traced array (symbolic dims): built in C on x's dims."""
    if shape is None and isinstance(x, Array) and x._n.np is None and None in x.shape:
        dt = x.dtype if dtype is None else D.dtype(dtype)
        if not isinstance(value, (bool, int, float, np.generic)):
            raise FritTypeError("full_like: fill_value must be a scalar")
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


def from_dlpack(x):
    return asarray(np.from_dlpack(x))


def realize(*arrays):
    """Evaluates lazy arrays together (one program); returns them."""
    by_sess = {}
    for a in arrays:
        n = a._n
        if n.np is None:
            if n.abstract or n.expr is None:
                raise n.abstract_error()
            by_sess.setdefault(id(n.sess), (n.sess, []))[1].append(n)
    for sess, nodes in by_sess.values():
        sess.realize(nodes)
    return arrays[0] if len(arrays) == 1 else arrays
