"""Sorting, searching and sets with numpy's names: sort, argsort, searchsorted (C: stable radix
sort kernels in src/tensor/sort.c), nonzero, argwhere, flatnonzero, unique and the array API
unique_*, interp, histogram. Results whose size depends on the data take `size=` under jit."""
import builtins
import ctypes as C
from collections import namedtuple

import numpy as np

from . import _dtypes as D
from . import _lib as L
from . import _ops as O
from . import _session as S
from ._array import Array, apply, operand
from ._errors import FritError, FritTypeError

_p = C.c_void_p
for _name, _args in [("frit_sort", [_p, _p, C.c_int, C.c_int]),
                     ("frit_argsort", [_p, _p, C.c_int, C.c_int]),
                     ("frit_searchsorted", [_p, _p, _p, C.c_int, _p])]:
    _f = getattr(L.lib, _name)
    _f.restype, _f.argtypes = _p, _args
_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")

UniqueAllResult = namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def _b_flat(ctx, ts):
    from ._indexing import _dims, _prod
    d = _prod(ctx, _dims(ts[0]))
    return L.lib.frit_reshape_sym(ctx, ts[0], 1, (_p * 1)(d)) if d else None


def _flat(x):
    """x as 1-d; unlike frit.ravel it keeps symbolic dims symbolic under jit."""
    return x if x.ndim == 1 else apply(_b_flat, [x])


def _b_sort(ctx, ts, axis, desc):
    return L.lib.frit_sort(ctx, ts[0], axis, desc)


def _b_argsort(ctx, ts, axis, desc):
    return L.lib.frit_argsort(ctx, ts[0], axis, desc)


def _b_searchsorted(ctx, ts, right):
    return L.lib.frit_searchsorted(ctx, ts[0], ts[1], right, ts[2] if len(ts) > 2 else None)


S.REPLAY_MEMO.update((_b_sort, _b_argsort, _b_searchsorted))


def _no_kernel(name):
    from ._control import kernel_open
    if kernel_open():
        raise FritError("frit.%s: not available inside frit.kernel (it builds kernels of its own); "
                        "compute it before the kernel and read its elements inside" % name)


def _sort_args(name, axis, kind, order, stable):
    _no_kernel(name)
    if order is not None:
        raise FritTypeError("frit.%s: order= needs structured dtypes, which frit does not have" % name)
    if kind not in _KINDS:
        raise ValueError("frit.%s: kind must be one of quicksort, mergesort, heapsort, stable, "
                         "not %r" % (name, kind))
    if stable not in (None, True, False):
        raise FritTypeError("frit.%s: stable must be a bool or None" % name)
    if axis is None:
        return L.NO_AXIS
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise FritTypeError("frit.%s: axis must be an int or None, not %s" % (name, type(axis).__name__))
    return int(axis)


def sort(a, axis=-1, kind=None, order=None, *, descending=False, stable=None):
    """Sorted copy of a along axis (None: flattened). Always stable (kind= and stable= are
    accepted for numpy compatibility); descending keeps equal elements in their order. NaNs go
    last in both directions, as numpy puts them last."""
    ax = _sort_args("sort", axis, kind, order, stable)
    return apply(_b_sort, [operand(a)], (ax, 1 if descending else 0))


def argsort(a, axis=-1, kind=None, order=None, *, descending=False, stable=None):
    """int64 positions that sort a along axis (None: flattened); stable, see sort."""
    ax = _sort_args("argsort", axis, kind, order, stable)
    x = operand(a)
    if x.ndim == 0 and ax != L.NO_AXIS:
        x, ax = O.reshape(x, (1,)), 0   # numpy: a 0-d array argsorts as [0]
    return apply(_b_argsort, [x], (ax, 1 if descending else 0))


def searchsorted(a, v, side="left", sorter=None):
    """Insertion points of v into the sorted 1-d a (numpy semantics, NaN last); an unsorted a
    gives unspecified indices, as in numpy."""
    _no_kernel("searchsorted")
    if side not in ("left", "right"):
        raise ValueError("frit.searchsorted: side must be 'left' or 'right', not %r" % (side,))
    a = operand(a)
    if isinstance(v, (bool, int, float, np.generic)) and not isinstance(v, Array):
        v = O.asarray(v, dtype=O.result_type(a, v))
    ops = [a, operand(v)]
    if sorter is not None:
        ops.append(O.astype(operand(sorter), D.int64, copy=False)
                   if operand(sorter).dtype.kind in "iu" else operand(sorter))
    return apply(_b_searchsorted, ops, (1 if side == "right" else 0,))


# ---------------------------------------------------------------- data-dependent sizes

def _traced(x):
    n = x._n
    return n.np is None and (n.abstract or n.expr is None)


def _size(name, mask, size):
    """The static output size: size= when given, else the mask's count (eager only)."""
    if size is not None:
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
            raise FritTypeError("frit.%s: size must be a non-negative int, not %r" % (name, size))
        return int(size)
    if _traced(mask):
        raise FritError(
            "frit.%s: the size of the result depends on the values of the input, which are not "
            "known while tracing under frit.jit; pass size=N (and optionally fill_value=) to get "
            "a result of fixed size N (padded, or truncated to the first N), as in JAX" % name)
    return int(O.sum(mask))


def _compact(mask, arrays, size):
    """The elements of each 1-d array where the 1-d mask holds, in order, into `size` slots (the
    rest are left as zeros; extra ones are dropped). Also returns the lazy count of hits."""
    pos = O.cumsum(O.astype(mask, D.int64)) - 1
    tgt = O.where(mask & (pos < size), pos, size)   # misses go to a spare slot, cut off below
    outs = []
    for arr in arrays:
        base = O.zeros((size + 1,), dtype=arr.dtype)
        outs.append(base.at[tgt].set(arr)[:size])
    return outs, O.sum(O.astype(mask, D.int64))


def _filled(out, count, size, fill):
    if fill is None:
        return out
    return O.where(O.arange(size) < count, out, O.asarray(fill, dtype=out.dtype))


def nonzero(a, *, size=None, fill_value=None):
    """Tuple of int64 index arrays of the nonzero elements (numpy order); under jit pass size=
    (padding with fill_value, default 0)."""
    x = operand(a)
    if x.ndim == 0:
        raise FritError("frit.nonzero: a 0-d array is not allowed (as in numpy 2); use "
                        "frit.atleast_1d(x)")
    m = _flat(O.not_equal(x, 0) if x.dtype is not D.bool_ else x)
    n = _size("nonzero", m, size)
    from ._control import indices
    idx = [_flat(i) for i in indices(x)]
    outs, cnt = _compact(m, idx, n)
    return tuple(_filled(o, cnt, n, fill_value) for o in outs)


def flatnonzero(a, *, size=None, fill_value=None):
    return nonzero(_flat(operand(a)), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """(N, ndim) int64 indices of the nonzero elements."""
    x = operand(a)
    if x.ndim == 0:
        r = argwhere(O.reshape(x, (1,)), size=size, fill_value=fill_value)
        return r[:, :0]
    return O.stack(nonzero(x, size=size, fill_value=fill_value), axis=-1)


# ---------------------------------------------------------------- sets

def _unique(name, ar, want_index, want_inverse, want_counts, equal_nan, size, fill_value):
    x = operand(ar)
    flat = _flat(x)
    perm = argsort(flat)
    s = O.take(flat, perm)
    pos = O.cumsum(O.ones_like(s, dtype=D.int64)) - 1
    prev = O.take(s, O.maximum(pos - 1, 0))
    m = (pos == 0) | O.not_equal(s, prev)
    if equal_nan and x.dtype.kind == "f":
        m = m & ~(O.isnan(s) & O.isnan(prev) & (pos > 0))
    if size is None and not _traced(m):
        O.realize(m, s, perm)   # computed once: the count below and the results read them
    n = _size(name, m, size)
    (vals, first), cnt = _compact(m, [s, perm], n)
    if fill_value is not None:
        vals = _filled(vals, cnt, n, fill_value)
    elif size is not None:
        vals = _filled(vals, cnt, n, O.min(flat) if _nonempty(flat) else 0)
    out = [vals]
    if want_index:
        out.append(first)
    if want_inverse:
        group = O.cumsum(O.astype(m, D.int64)) - 1
        inv = O.zeros_like(group).at[perm].set(group)
        out.append(_reshape_like(inv, x))
    if want_counts:
        group = O.cumsum(O.astype(m, D.int64)) - 1
        tgt = O.where(group < n, group, n)
        out.append(O.zeros((n + 1,), dtype=D.int64).at[tgt].add(1)[:n])
    return out


def _nonempty(flat):
    s = flat.shape[0]
    return s is None or s > 0


def _reshape_like(flat, like):
    if like.ndim == 1:
        return flat
    from ._indexing import _b_reshape_as
    return apply(_b_reshape_as, [flat, like])


def _unique_axis(ar, axis, want_index, want_inverse, want_counts, size, fill_value):
    """Unique slices along `axis` (numpy's unique(axis=k)): slices compared element by element
    (-0.0 equals 0.0, a NaN makes its slice distinct), sorted lexicographically (NaN last)."""
    x = operand(ar)
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise FritTypeError("frit.unique: axis must be an int or None, not %s" % type(axis).__name__)
    if not -x.ndim <= axis < x.ndim:
        raise FritError("frit.unique: axis %d is out of bounds for an array of dimension %d"
                        % (axis, x.ndim))
    xm = O.moveaxis(x, axis, 0)
    rest = xm.shape[1:]
    if None in rest:
        raise FritError("frit.unique: axis=%d needs the other axes static (shape %s)"
                        % (axis, x.shape))
    k = int(np.prod(rest, dtype=np.int64))
    if k == 0:
        raise FritError("frit.unique: axis=%d of an array with empty slices (shape %s)"
                        % (axis, x.shape))
    rows = O.reshape(xm, (-1, k)) if xm.shape[0] is not None else \
        apply(_b_rows, [xm], (k,))
    # lexicographic order: stable sorts by the last column first
    perm = argsort(rows[:, k - 1])
    for j in range(k - 2, -1, -1):
        perm = O.take(perm, argsort(O.take(rows[:, j], perm)))
    s = O.take(rows, perm, axis=0)
    pos = O.cumsum(O.ones_like(perm)) - 1
    prev = O.take(s, O.maximum(pos - 1, 0), axis=0)
    m = (pos == 0) | O.any(O.not_equal(s, prev), axis=1)
    if size is None and not _traced(m):
        O.realize(m, s, perm)
    n = _size("unique", m, size)
    pos_c = O.cumsum(O.astype(m, D.int64)) - 1
    tgt = O.where(m & (pos_c < n), pos_c, n)
    vals = O.zeros((n + 1, k), dtype=x.dtype).at[tgt].set(s)[:n]
    if fill_value is not None:
        vals = O.where(O.reshape(O.arange(n) < O.sum(O.astype(m, D.int64)), (n, 1)), vals,
                       O.asarray(fill_value, dtype=x.dtype))
    vals = O.moveaxis(O.reshape(vals, (n,) + tuple(rest)), 0, axis)
    out = [vals]
    if want_index:
        out.append(O.zeros((n + 1,), dtype=D.int64).at[tgt].set(perm)[:n])
    group = O.cumsum(O.astype(m, D.int64)) - 1
    if want_inverse:
        out.append(O.zeros_like(group).at[perm].set(group))
    if want_counts:
        out.append(O.zeros((n + 1,), dtype=D.int64).at[O.where(group < n, group, n)].add(1)[:n])
    return out


def _b_rows(ctx, ts, k):
    from ._indexing import _dims
    d = [_dims(ts[0])[0], L.lib.frit_const_int(ctx, L.I64, k)]
    return L.lib.frit_reshape_sym(ctx, ts[0], 2, (_p * 2)(*d))


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, sorted=True, size=None, fill_value=None):
    """numpy's unique: sorted unique values (axis=None: of the flattened array; axis=k: unique
    slices along k), optionally the first index of each, the inverse (axis=None: the input's
    shape, as numpy 2) and the counts. Under jit pass size= (values padded with fill_value,
    default the smallest value (axis=None) or 0; indices and counts with 0)."""
    _no_kernel("unique")
    if axis is not None:
        out = _unique_axis(ar, axis, return_index, return_inverse, return_counts, size,
                           fill_value)
        return out[0] if len(out) == 1 else tuple(out)
    out = _unique("unique", ar, return_index, return_inverse, return_counts, equal_nan, size,
                  fill_value)
    return out[0] if len(out) == 1 else tuple(out)


def unique_values(x, *, size=None, fill_value=None):
    return _unique("unique_values", x, False, False, False, False, size, fill_value)[0]


def unique_counts(x, *, size=None, fill_value=None):
    return UniqueCountsResult(*_unique("unique_counts", x, False, False, True, False, size,
                                       fill_value))


def unique_inverse(x, *, size=None, fill_value=None):
    return UniqueInverseResult(*_unique("unique_inverse", x, False, True, False, False, size,
                                        fill_value))


def unique_all(x, *, size=None, fill_value=None):
    return UniqueAllResult(*_unique("unique_all", x, True, True, True, False, size, fill_value))


# ---------------------------------------------------------------- interp, histogram

def interp(x, xp, fp, left=None, right=None, period=None):
    """numpy's 1-d piecewise linear interpolation (float64 result), left/right/period."""
    x = O.astype(operand(x), D.float64)
    xp = O.astype(operand(xp), D.float64)
    fp = operand(fp)
    if fp.dtype.kind not in "biuf":
        raise FritTypeError("frit.interp: fp must be real, not %s" % fp.dtype)
    fp = O.astype(fp, D.float64)
    if xp.ndim != 1 or fp.ndim != 1:
        raise FritError("frit.interp: xp and fp must be 1-d, got shapes %s and %s"
                        % (xp.shape, fp.shape))
    if xp.shape[0] is not None and fp.shape[0] is not None and xp.shape[0] != fp.shape[0]:
        raise FritError("frit.interp: fp and xp are not of the same length (%d and %d)"
                        % (fp.shape[0], xp.shape[0]))
    if xp.shape[0] == 0:
        raise FritError("frit.interp: array of sample points is empty")
    if period is not None:
        if period == 0:
            raise FritError("frit.interp: period must be a non-zero value")
        period = builtins.abs(float(period))
        left = right = None
        x = O.remainder(x, period)
        xp = O.remainder(xp, period)
        order = argsort(xp)
        xp, fp = O.take(xp, order), O.take(fp, order)
        xp = O.concat([xp[-1:] - period, xp, xp[0:1] + period])
        fp = O.concat([fp[-1:], fp, fp[0:1]])
    lval = fp[0] if left is None else O.asarray(float(left), dtype=D.float64)
    rval = fp[-1] if right is None else O.asarray(float(right), dtype=D.float64)
    n = xp.shape[0]
    nlast = O.sum(O.ones_like(xp, dtype=D.int64)) - 1 if n is None else n - 1
    j = searchsorted(xp, x, side="right") - 1
    jc = O.clip(j, 0, O.maximum(nlast - 1, 0))
    # jc + 1 is past the end for a single sample point: clamped on purpose (x1 == x0 there)
    x0, x1 = O.take(xp, jc, bounds="clamp"), O.take(xp, jc + 1, bounds="clamp")
    y0, y1 = O.take(fp, jc, bounds="clamp"), O.take(fp, jc + 1, bounds="clamp")
    slope = (y1 - y0) / (x1 - x0)
    r = slope * (x - x0) + y0
    r2 = slope * (x - x1) + y1
    r = O.where(O.isnan(r), O.where(O.isnan(r2) & (y0 == y1), y0, r2), r)
    r = O.where(x0 == x, y0, r)
    r = O.where(j >= nlast, fp[-1], r)
    r = O.where(x > xp[-1], rval, r)
    r = O.where(j < 0, lval, r)
    return O.where(O.isnan(x), x, r)


def _edges(a, bins, range_):
    """numpy's uniform bin edges: linspace(first, last, bins + 1), computed as numpy does (in
    the data's float dtype when the range comes from the data, else in float64)."""
    bt = a.dtype if a.dtype.kind == "f" else D.float64
    if range_ is not None:
        first, last = float(range_[0]), float(range_[1])
        if first > last:
            raise FritError("frit.histogram: max must be larger than min in range parameter")
        if not (np.isfinite(first) and np.isfinite(last)):
            raise FritError("frit.histogram: supplied range of [%r, %r] is not finite" % (first, last))
        if first == last:
            first, last = first - 0.5, last + 0.5
        ct = D.float64
        first, last = O.asarray(first, dtype=ct), O.asarray(last, dtype=ct)
    elif a.shape[0] == 0:
        ct = D.float64
        first, last = O.asarray(0.0, dtype=ct), O.asarray(1.0, dtype=ct)
    else:
        ct = bt
        lo, hi = O.astype(O.min(a), ct), O.astype(O.max(a), ct)
        same = lo == hi
        first, last = O.where(same, lo - 0.5, lo), O.where(same, hi + 0.5, hi)
        if not _traced(a) and not (np.isfinite(float(first)) and np.isfinite(float(last))):
            raise FritError("frit.histogram: autodetected range of [%s, %s] is not finite"
                            % (float(first), float(last)))
    step = (last - first) / O.asarray(bins, dtype=ct)
    e = O.astype(O.arange(bins + 1), ct) * step + first
    e = O.where(O.arange(bins + 1) == bins, last, e)
    return O.astype(e, bt)


def histogram(a, bins=10, range=None, density=None, weights=None):
    """numpy's histogram: (counts, bin_edges); bins an int (uniform edges over range, default
    the data's min..max) or a 1-d increasing array of edges; every bin is half open except the
    last, which includes its right edge. Counts are int64 (the weights' dtype with weights)."""
    a = _flat(operand(a))
    if isinstance(bins, str):
        raise FritError("frit.histogram: bin estimators (bins=%r) are not supported; pass an int "
                        "or the edges" % bins)
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        if bins < 1:
            raise FritError("frit.histogram: `bins` must be positive, when an integer")
        edges = _edges(a, int(bins), range)
    else:
        edges = operand(bins)
        if edges.ndim != 1:
            raise FritError("frit.histogram: `bins` must be 1d, when an array")
        if not _traced(edges) and edges.shape[0] >= 2:
            e = edges.numpy()
            if np.any(e[:-1] > e[1:]):
                raise FritError("frit.histogram: `bins` must increase monotonically, when an array")
    # edges may have a symbolic length under jit: everything below is sized by `edges` itself
    nb = O.sum(O.ones_like(edges, dtype=D.int64))
    j = searchsorted(edges, a, side="right") - 1
    j = O.where(O.equal(a, edges[-1]), j - 1, j)       # the last bin includes its right edge
    keep = (j >= 0) & (j < nb - 1)
    tgt = O.where(keep, j, nb - 1)                      # misses go to a spare slot, cut off below
    if weights is None:
        counts = O.zeros_like(edges, dtype=D.int64).at[tgt].add(1)[:-1]
    else:
        w = _flat(operand(weights))
        if w.shape != a.shape:
            raise FritError("frit.histogram: weights should have the same shape as a")
        counts = O.zeros_like(edges, dtype=w.dtype).at[tgt].add(w)[:-1]
    if density:
        db = O.astype(edges[1:] - edges[:-1], D.float64)
        counts = O.astype(counts, D.float64) / db / O.sum(counts)
    return counts, edges
