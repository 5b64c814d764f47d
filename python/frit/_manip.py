"""numpy / array API manipulation and cumulative functions built on the frit core: cumprod,
cumulative_sum/prod, tril/triu, unstack, split/array_split, rot90, meshgrid, diff."""
import ctypes as C
import operator

import numpy as np

from . import _dtypes as D
from . import _lib as L
from ._array import Array, apply, asarray, operand
from ._errors import FritError, FritTypeError
from . import _ops as O

__all__ = ["cumprod", "cumulative_sum", "cumulative_prod", "tril", "triu", "unstack", "split",
           "array_split", "rot90", "meshgrid", "diff"]

_p = C.c_void_p
for _name, _argt in (("frit_cumprod", [_p, _p, C.c_int]), ("frit_tril", [_p, _p, C.c_int64]),
                     ("frit_triu", [_p, _p, C.c_int64])):
    getattr(L.lib, _name).restype = _p
    getattr(L.lib, _name).argtypes = _argt


def _b_cumprod(ctx, ts, axis):
    return L.lib.frit_cumprod(ctx, ts[0], axis)


def _b_tri(ctx, ts, name, k):
    return getattr(L.lib, name)(ctx, ts[0], k)


def _index(v, what):
    try:
        return operator.index(v)
    except TypeError:
        raise FritTypeError("%s must be an integer, got %s" % (what, type(v).__name__)) from None


def _norm_axis(axis, ndim, op):
    axis = _index(axis, "%s: axis" % op)
    if not -ndim <= axis < ndim:
        raise FritError("%s: axis %d is out of bounds for array of dimension %d"
                        % (op, axis, ndim))
    return axis % ndim


def _cum(op, x, axis, dtype):
    x = operand(x)
    if dtype is not None:
        dtype = D.dtype(dtype)
        x = O.astype(x, dtype, copy=False)
    if axis is None:
        ax = L.NO_AXIS
    else:
        ax = _norm_axis(axis, x.ndim, op) if x.ndim else _index(axis, "%s: axis" % op)
    if op == "cumsum":
        r = O.cumsum(x, axis=None if axis is None else ax)
    else:
        r = apply(_b_cumprod, [x], (ax,))
    # the C op accumulates in numpy's default accumulator; an explicit dtype wins (integer sums
    # and products wrap the same way in any width, so casting afterwards is exact)
    if dtype is not None and r.dtype is not dtype:
        r = O.astype(r, dtype, copy=False)
    return r


def cumprod(x, axis=None, dtype=None):
    """numpy.cumprod: axis=None flattens; ints and bool accumulate in int64/uint64 as numpy."""
    return _cum("cumprod", x, axis, dtype)


def _cumulative(op, x, axis, dtype, include_initial):
    x = operand(x)
    name = "cumulative_sum" if op == "cumsum" else "cumulative_prod"
    if x.ndim == 0:
        raise FritError("%s: needs an array of at least one dimension, got a 0-d %s array"
                        % (name, x.dtype))
    if axis is None:
        if x.ndim > 1:
            raise FritError("%s: axis must be given for an array of %d dimensions (shape %s)"
                            % (name, x.ndim, x.shape))
        axis = 0
    axis = _norm_axis(axis, x.ndim, name)
    r = _cum(op, x, axis, dtype)
    if include_initial:
        pw = [(0, 0)] * x.ndim
        pw[axis] = (1, 0)
        r = O.pad(r, pw, constant_values=0 if op == "cumsum" else 1)
    return r


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Array API cumulative_sum (numpy.cumulative_sum): axis may be left out for 1-d input only;
    include_initial prepends the sum of nothing (0)."""
    return _cumulative("cumsum", x, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Array API cumulative_prod; include_initial prepends 1."""
    return _cumulative("cumprod", x, axis, dtype, include_initial)


def _bcast_all(*xs):
    """broadcast_arrays that also works on symbolic (jit) dims: a bool array of the common shape
    built by broadcasting ops, then where(it, x, x) (WHERE keeps every bit pattern)."""
    if not any(d is None for x in xs for d in x.shape):
        return list(O.broadcast_arrays(*xs))
    full = O.zeros_like(xs[0], dtype=D.bool_)
    for x in xs[1:]:
        full = O.logical_or(full, O.zeros_like(x, dtype=D.bool_))
    return [O.where(full, x, x) for x in xs]


def _tri(name, x, k):
    x = operand(x)
    k = _index(k, "%s: k" % name)
    if x.ndim == 1:  # numpy: the 1-d input is the row of a square matrix
        x = _bcast_all(O.expand_dims(x, 0), O.expand_dims(x, 1))[0]
    return apply(_b_tri, [x], ("frit_" + name, k))


def tril(x, k=0):
    """Lower triangle of the last two axes (elements with j - i <= k); 1-d input as numpy."""
    return _tri("tril", x, k)


def triu(x, k=0):
    """Upper triangle of the last two axes (elements with j - i >= k); 1-d input as numpy."""
    return _tri("triu", x, k)


def _static_len(x, axis, op):
    n = x.shape[axis]
    if n is None:
        raise FritTypeError("%s: the length of axis %d must be known (it is symbolic under jit; "
                            "jit retraces with static shapes)" % (op, axis))
    return n


def _take_range(x, axis, start, stop):
    idx = [slice(None)] * x.ndim
    idx[axis] = slice(start, stop)
    return x[tuple(idx)]


def unstack(x, /, *, axis=0):
    """Array API unstack: the tuple of slices of x along axis."""
    x = operand(x)
    if x.ndim == 0:
        raise FritError("unstack: needs an array of at least one dimension, got a 0-d array")
    axis = _norm_axis(axis, x.ndim, "unstack")
    n = _static_len(x, axis, "unstack")
    idx = [slice(None)] * x.ndim
    out = []
    for i in range(n):
        idx[axis] = i
        out.append(x[tuple(idx)])
    return tuple(out)


def array_split(ary, indices_or_sections, axis=0):
    """numpy.array_split: a number of sections (the first ones one longer when they do not
    divide) or a list of split points, which follow Python slice clamping (as numpy)."""
    x = operand(ary)
    if x.ndim == 0:
        raise FritError("array_split: needs an array of at least one dimension")
    axis = _norm_axis(axis, x.ndim, "array_split")
    n = _static_len(x, axis, "array_split")
    if isinstance(indices_or_sections, Array):
        indices_or_sections = indices_or_sections.tolist()
    if isinstance(indices_or_sections, (list, tuple, np.ndarray)):
        pts = [0] + [_index(i, "array_split: index") for i in indices_or_sections] + [n]
    else:
        k = _index(indices_or_sections, "array_split: sections")
        if k <= 0:
            raise FritError("array_split: number sections must be larger than 0, got %d" % k)
        each, extra = divmod(n, k)
        sizes = [0] + extra * [each + 1] + (k - extra) * [each]
        pts = np.cumsum(sizes).tolist()
    out = []
    for st, end in zip(pts[:-1], pts[1:]):
        s, e, _ = slice(st, end).indices(n)
        out.append(_take_range(x, axis, s, max(s, e)))
    return out


def split(ary, indices_or_sections, axis=0):
    """numpy.split: as array_split, but a number of sections must divide the axis."""
    x = operand(ary)
    if not isinstance(indices_or_sections, (list, tuple, np.ndarray, Array)):
        k = _index(indices_or_sections, "split: sections")
        if x.ndim == 0:
            raise FritError("split: needs an array of at least one dimension")
        ax = _norm_axis(axis, x.ndim, "split")
        n = _static_len(x, ax, "split")
        if k <= 0 or n % k:
            raise FritError("split: array split does not result in an equal division (axis %d "
                            "of length %d into %d sections)" % (ax, n, k))
    return array_split(x, indices_or_sections, axis)


def rot90(m, k=1, axes=(0, 1)):
    """numpy.rot90: rotates by 90 degrees k times in the plane of axes (from the first toward
    the second)."""
    x = operand(m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise FritError("rot90: len(axes) must be 2, got %d" % len(axes))
    a0, a1 = (_index(a, "rot90: axes") for a in axes)
    nd = x.ndim
    if a0 == a1 or abs(a0 - a1) == nd:
        raise FritError("rot90: axes must be different, got %s for an array of dimension %d"
                        % (axes, nd))
    if not (-nd <= a0 < nd and -nd <= a1 < nd):
        raise FritError("rot90: axes %s out of range for an array of dimension %d" % (axes, nd))
    k = _index(k, "rot90: k") % 4
    if k == 0:
        return x
    if k == 2:
        return O.flip(O.flip(x, a0), a1)
    perm = list(range(nd))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return O.permute_dims(O.flip(x, a1), perm)
    return O.flip(O.permute_dims(x, perm), a1)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """numpy.meshgrid: coordinate arrays from 1-d (flattened) inputs; indexing 'xy' (Cartesian,
    the first two outputs swapped) or 'ij' (matrix); sparse keeps the size-1 dims. Returns a
    list (array API) where numpy returns a tuple."""
    if indexing not in ("xy", "ij"):
        raise FritError("meshgrid: indexing must be 'xy' or 'ij', got %r" % (indexing,))
    nd = len(xi)
    outs = []
    for i, x in enumerate(xi):
        x = operand(x)
        if x.ndim != 1:
            x = O.ravel(x)
        pos = i
        if indexing == "xy" and nd > 1 and i < 2:
            pos = 1 - i
        for ax in range(nd):
            if ax != pos:
                x = O.expand_dims(x, ax)
        outs.append(x)
    if not sparse and nd > 1:
        outs = _bcast_all(*outs)
    if copy:
        outs = [O.contiguous(o) if not sparse else o for o in outs]
    return outs  # a list, as the array API says (numpy gives a tuple)


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """numpy.diff: n-th discrete difference along axis; bool uses not_equal; prepend/append
    (scalars broadcast to one slice) join before differencing, promoting as concatenate."""
    x = operand(a)
    n = _index(n, "diff: n")
    if n < 0:
        raise FritError("diff: order must be non-negative but got %d" % n)
    if n == 0:
        return x
    if x.ndim == 0:
        raise FritError("diff: requires input that is at least one dimensional")
    axis = _norm_axis(axis, x.ndim, "diff")
    def edge(v):
        e = asarray(v)
        if e.ndim == 0:
            shape = list(x.shape)
            if any(d is None for d in shape):
                raise FritTypeError("diff: a scalar prepend/append needs static shapes")
            shape[axis] = 1
            e = O.broadcast_to(e, tuple(shape))
        return e
    parts = ([] if prepend is None else [edge(prepend)]) + [x] + \
        ([] if append is None else [edge(append)])
    if len(parts) > 1:
        x = O.concatenate(parts, axis=axis)
    hi = [slice(None)] * x.ndim
    lo = [slice(None)] * x.ndim
    hi[axis], lo[axis] = slice(1, None), slice(None, -1)
    op = O.not_equal if x.dtype is D.bool_ else O.subtract
    for _ in range(n):
        if x.shape[axis] == 0:  # numpy: differences of nothing stay empty
            break
        x = op(x[tuple(hi)], x[tuple(lo)])
    return x
