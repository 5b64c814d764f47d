"""Indexing of frit arrays with numpy semantics (x[idx]) and functional updates
(x.at[idx].set/add/min/max), lowered onto frit_slice, frit_take and frit_scatter.

Semantics and limits (docs/python-api.md):
- ints (negative too), slices with any step, None, Ellipsis, integer arrays (several are broadcast
  together; numpy's rule places their dims where the first one was when they are adjacent, else
  first), boolean masks and mixtures, as in numpy.
- Out-of-range ints and index arrays raise IndexError as in numpy, eagerly and under frit.jit
  (a run-time guard, frit._bounds); bounds="clamp" (x.at[idx].get(bounds=...), frit.jit(bounds=))
  clamps instead. Slices clamp their bounds (frit_slice).
- A boolean mask needs its values (the result's shape depends on them): a lazy mask is realised
  first; a traced mask inside frit.jit is an error (use frit.where).
- Several integer arrays, and x.at[...] updates, need the static sizes of the indexed axes.
- x.at[idx].op(v) returns a new array: v is cast to x's dtype and broadcast to x[idx].shape.
  Duplicate positions: add accumulates all of them, min/max combine all of them, set keeps the
  value that comes last in the C order of x[idx] ("last in index order wins").
- frit.scatter(x, idx, v, mode) is the same functional update with every mode, also the bitwise
  "and"/"or"/"xor" (integers and bool only; duplicates combine like np.bitwise_and.at).
"""
import ctypes as C
import operator

import numpy as np

from . import _array as A
from . import _dtypes as D
from . import _lib as L
from . import _bounds as B
from ._errors import FritError, FritTypeError

_p = C.c_void_p
try:
    _scatter = L.lib.frit_scatter
    _scatter.restype = _p
    _scatter.argtypes = [_p, _p, _p, _p, C.c_int]
except AttributeError:  # pragma: no cover - an older libfrit
    _scatter = None

ATOMIC = {"add": 0, "min": 1, "max": 2, "and": 3, "or": 4, "xor": 5, "set": 6}  # frit_atomic_op

# ---- builders with dims taken from the operands' own (possibly symbolic) shapes: realisation
# replays graphs on duck-sized inputs (frit._session), where static reshape targets would not
# match symbolic dims.
_lib = L.lib
for _name, _res, _args in [("frit_binary", _p, [_p, C.c_int, _p, _p]),
                           ("frit_simplify", _p, [_p, _p]),
                           ("frit_op_from_name", C.c_int, [C.c_char_p, C.c_size_t]),
                           ("frit_tensor_dim", _p, [_p, C.c_int]),
                           ("frit_tensor_ndim", C.c_int, [_p]),
                           ("frit_tensor_of", _p, [_p, _p]),
                           ("frit_const_int", _p, [_p, C.c_uint32, C.c_int64]),
                           ("frit_reshape_sym", _p, [_p, _p, C.c_int, C.POINTER(_p)]),
                           ("frit_broadcast_to_sym", _p, [_p, _p, C.c_int, C.POINTER(_p)]),
                           ("frit_full_sym", _p, [_p, C.c_uint32, C.c_int, C.POINTER(_p), C.c_double]),
                           ("frit_cumsum", _p, [_p, _p, C.c_int]),
                           ("frit_binary_t", _p, [_p, C.c_int, _p, _p])]:
    _f = getattr(_lib, _name)
    _f.restype, _f.argtypes = _res, _args
_OP_MUL = _lib.frit_op_from_name(b"MUL", 3)


def _dims(t):
    return [_lib.frit_tensor_dim(t, i) for i in range(_lib.frit_tensor_ndim(t))]


def _prod(ctx, ds):
    r = _lib.frit_const_int(ctx, L.I64, 1)
    for d in ds:
        r = _lib.frit_binary(ctx, _OP_MUL, r, d)
    return _lib.frit_simplify(ctx, r) if r else None


def _ptrs(xs):
    return (_p * max(1, len(xs)))(*xs)


def _b_merge(ctx, ts, groups):
    """Reshape merging consecutive axes: groups = axis counts, result dim = their product."""
    ds, out, i = _dims(ts[0]), [], 0
    for g in groups:
        out.append(_prod(ctx, ds[i:i + g]))
        i += g
    return _lib.frit_reshape_sym(ctx, ts[0], len(out), _ptrs(out))


def _b_reshape_as(ctx, ts):
    """ts[0] reshaped to the shape of ts[1]."""
    ds = _dims(ts[1])
    return _lib.frit_reshape_sym(ctx, ts[0], len(ds), _ptrs(ds))


def _b_bcast_as(ctx, ts, ntrail):
    """ts[0] broadcast to ts[1].shape + the last ntrail dims of ts[2]."""
    ds = _dims(ts[1]) + (_dims(ts[2])[-ntrail:] if ntrail else [])
    return _lib.frit_broadcast_to_sym(ctx, ts[0], len(ds), _ptrs(ds))


def _b_iota_as(ctx, ts, nlead):
    """i64 row-major positions 0..n-1 over the first nlead dims of ts[0], in that shape."""
    ds = _dims(ts[0])[:nlead]
    ones = _lib.frit_full_sym(ctx, L.I64, len(ds), _ptrs(ds), 1.0)
    c = _lib.frit_cumsum(ctx, ones, L.NO_AXIS) if ones else None
    one = _lib.frit_tensor_of(ctx, _lib.frit_const_int(ctx, L.I64, 1))
    c = _lib.frit_binary_t(ctx, L.BF["sub"], c, one) if c and one else None
    return _lib.frit_reshape_sym(ctx, c, len(ds), _ptrs(ds)) if c else None


def _merge(x, groups):
    return x if len(groups) == x.ndim and all(g == 1 for g in groups) else \
        A.apply(_b_merge, [x], (tuple(groups),))

_BAD = ("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
        "boolean arrays are valid indices")


def _ops():
    from . import _ops
    return _ops


def _is_int(e):
    return isinstance(e, (int, np.integer)) and not isinstance(e, (bool, np.bool_))


def _slice_bound(v):
    if v is None:
        return None
    if isinstance(v, A.Array):
        if v.ndim or v.dtype.kind not in "iu":
            raise IndexError("slice indices must be integers or None or have an __index__ method")
        v = int(v)
    try:
        v = operator.index(v)
    except TypeError:
        raise TypeError("slice indices must be integers or None or have an __index__ method") from None
    return max(-2 ** 63 + 1, min(2 ** 63 - 1, v))


# ---------------------------------------------------------------- parsing

def _entry(e):
    """One element of an index tuple as ('none'|'ell'|'slice'|'int'|'arr'|'mask', value).
    'arr' values are numpy int arrays (concrete) or frit Arrays (lazy); 'mask' values numpy bools."""
    if e is None:
        return ("none", None)
    if e is Ellipsis:
        return ("ell", None)
    if isinstance(e, slice):
        step = _slice_bound(e.step)
        if step == 0:
            raise ValueError("slice step cannot be zero")
        return ("slice", (_slice_bound(e.start), _slice_bound(e.stop), step))
    if isinstance(e, (bool, np.bool_)):
        return ("mask", np.asarray(bool(e)))
    if _is_int(e):
        return ("int", int(e))
    if isinstance(e, A.Array):
        if e.dtype is D.bool_:
            n = e._n
            if n.np is None and (n.abstract or n.expr is None):
                raise FritTypeError(
                    "boolean mask indexing needs the mask's values (the result's shape depends on "
                    "them), which are not known while tracing; use frit.where(mask, x, other)")
            return ("mask", np.asarray(e.numpy(), dtype=bool))
        if e.dtype.kind not in "iu":
            raise IndexError(_BAD)
        if e._n.np is not None:  # concrete: check bounds like numpy
            v = e._n.np
            return ("int", int(v)) if v.ndim == 0 else ("arr", v)
        return ("arr", e)
    if isinstance(e, (list, tuple, np.ndarray)) or hasattr(e, "__array__"):
        a = np.asarray(e)
        if a.dtype == np.bool_:
            return ("mask", a)
        if a.dtype.kind not in "iu":
            if a.size == 0:  # numpy accepts [] as an empty integer index
                a = a.astype(np.int64)
            else:
                raise IndexError(_BAD)
        return ("int", int(a)) if a.ndim == 0 and isinstance(e, np.ndarray) else ("arr", a)
    raise IndexError(_BAD)


def _parse(x, idx):
    """Index entries normalised against x: every entry but 'none' consumes one axis of the
    returned array (which is x, with unit axes inserted for scalar boolean masks); ellipsis
    expanded; masks replaced by the integer arrays of their nonzero elements."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    raw = [_entry(e) for e in idx]
    nell = sum(1 for k, _ in raw if k == "ell")
    if nell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = 0
    for k, v in raw:
        if k in ("slice", "int", "arr"):
            used += 1
        elif k == "mask":
            used += v.ndim
    if used > x.ndim:
        raise IndexError("too many indices for array: array is %d-dimensional, but %d were indexed"
                         % (x.ndim, used))
    full = ("slice", (None, None, None))
    out = []
    for k, v in raw:
        if k == "ell":
            out.extend([full] * (x.ndim - used))
        else:
            out.append((k, v))
    if not nell:
        out.extend([full] * (x.ndim - used))
    # masks: a scalar one indexes a new unit axis; a k-d one becomes k integer arrays
    ents = []
    axis = 0
    for k, v in out:
        if k == "mask" and v.ndim == 0:
            x = _ops().expand_dims(x, axis)
            ents.append(("arr", np.zeros(int(bool(v)), np.int64)))
            axis += 1
        elif k == "mask":
            for j in range(v.ndim):
                d = x.shape[axis + j]
                if d is None:  # a traced dim: the mask's length cannot be checked against it
                    raise IndexError("boolean index of shape %s on axis %d of a traced array of "
                                     "shape %s needs the static size of that axis"
                                     % (v.shape, axis + j, x.shape))
                if d != v.shape[j]:
                    raise IndexError("boolean index did not match indexed array along axis %d; size "
                                     "of axis is %d but size of corresponding boolean axis is %d"
                                     % (axis + j, d, v.shape[j]))
            for a in np.nonzero(v):
                ents.append(("arr", a.astype(np.int64)))
            axis += v.ndim
        else:
            ents.append((k, v))
            if k != "none":
                axis += 1
    return x, ents


def _check_bounds(a, d, axis, p="check"):
    """numpy's IndexError for concrete indices a into an axis of static size d (policy "check"),
    or a clamped into it ("clamp"); a wrapped. A symbolic d: left to take's check."""
    a = np.asarray(a)
    if d is None:
        return a.astype(np.int64)
    if p != "check" and a.size:
        a = a.astype(np.int64)
        return np.clip(np.where(a < 0, a + d, a), 0, max(d - 1, 0))
    if a.size:
        bad = (a >= d) | (a < -d) if a.dtype.kind == "i" else (a >= d)
        if bad.any():
            v = a[bad].flat[0]
            raise IndexError("index %d is out of bounds for axis %d with size %d" % (v, axis, d))
    a = a.astype(np.int64)
    return np.where(a < 0, a + d, a) if a.size else a


# ---------------------------------------------------------------- x[idx]

def getitem(x, idx):
    r = _basic(x, idx)
    if r is not None:
        return r
    x, ents = _parse(x, idx)
    return _index(x, ents)


_BOUND = 2 ** 63 - 1


def _basic(x, idx):
    """x[idx] where idx is Python ints (on static dims, in bounds) and slices of Python ints or
    None, at most one per axis: one lazy op, a slice and a squeeze, as _index builds (x[0] of a
    matrix took 12 us through the general path's parse, two ops and its bookkeeping). None for
    anything else (the general path, which also raises numpy's errors)."""
    if type(idx) is not tuple:
        idx = (idx,)
    shape = x.shape
    nd = len(shape)
    if len(idx) > nd:
        return None
    dflt = L.SLICE_DEFAULT
    start, stop, step, drop = [dflt] * nd, [dflt] * nd, [dflt] * nd, []
    for ax, e in enumerate(idx):
        t = type(e)
        if t is int:
            d = shape[ax]
            if d is None or not -d <= e < d:
                return None
            e %= d
            start[ax], stop[ax] = e, e + 1
            drop.append(ax)
        elif t is slice:
            b = (e.start, e.stop, e.step)
            for i, v in enumerate(b):
                if v is not None:
                    if type(v) is not int or (i == 2 and v == 0):
                        return None
                    v = -_BOUND if v < -_BOUND else _BOUND if v > _BOUND else v
                    (start, stop, step)[i][ax] = v
        else:
            return None
    if not drop and start.count(dflt) == nd and stop.count(dflt) == nd and step.count(dflt) == nd:
        return x
    O = _ops()
    return A.apply(O._b_basic_index, [x], (O._i64(start), O._i64(stop), O._i64(step), O._ints(drop), len(drop)))


def _index(x, ents, bounds=None):
    O = _ops()
    p = B.policy(bounds, x)
    has_adv = any(k == "arr" for k, _ in ents)
    start, stop, step = [], [], []
    axis = 0
    advs = []  # (x axis, index array: numpy or frit Array, entry position)
    late = {}  # x axis -> int index on a symbolic dim: a take of a 0-d index (checked per policy)
    for pos, (k, v) in enumerate(ents):
        if k == "none":
            continue
        d = x.shape[axis]
        if k == "slice":
            start.append(v[0]), stop.append(v[1]), step.append(v[2])
        elif k == "int" and not has_adv:
            if d is None:
                late[axis] = v
                start.append(None), stop.append(None), step.append(None)
            else:
                if not -d <= v < d:
                    raise IndexError("index %d is out of bounds for axis %d with size %d" % (v, axis, d))
                v %= d
                start.append(v), stop.append(None if v == -1 else v + 1), step.append(None)
        else:  # an array, or an int among arrays (numpy treats it as a 0-d array)
            if k == "int":
                v = np.asarray(v, np.int64)
            if isinstance(v, np.ndarray):
                v = _check_bounds(v, d, axis, p)
            advs.append((axis, v, pos))
            start.append(None), stop.append(None), step.append(None)
        axis += 1
    y = x
    if any(s is not None for s in start + stop + step):
        y = O.slice_(x, start, stop, step)
    if not has_adv:
        drop = [i for i, (k, _) in enumerate(e for e in ents if e[0] != "none")
                if k == "int" and i not in late]
        if drop:
            y = O.squeeze(y, tuple(drop))
        for ax in sorted(late, reverse=True):
            y = O.take(y, A.asarray(np.int64(late[ax])), axis=ax - sum(1 for i in drop if i < ax),
                       bounds=p)
        tokens = [k for k, _ in ents if k != "int"]
        return _insert_none(y, tokens)
    # advanced indices: their broadcast shape B
    shapes = [tuple(v.shape) for _, v, _ in advs]
    try:
        bshape = np.broadcast_shapes(*[tuple(1 if s is None else s for s in sh) for sh in shapes])
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with "
                         "shapes " + " ".join(str(s) for s in shapes)) from None
    nb = len(bshape)
    positions = [p for _, _, p in advs]
    adjacent = positions == list(range(positions[0], positions[0] + len(positions)))
    if len(advs) == 1:
        ax, v, _ = advs[0]
        r = O.take(y, _as_index(v), axis=ax, bounds=p)  # dims: y[:ax] + B + y[ax+1:]
        nbefore = ax
    else:
        r = _gather_flat(y, advs, bshape, p)   # dims: B + the other axes
        nbefore = 0
    # layout: B where the first advanced index was when adjacent, else first (numpy's rule)
    nslices_before = sum(1 for k, _ in ents[:positions[0]] if k == "slice")
    want = nslices_before if adjacent else 0
    if want != nbefore:
        rest = [i for i in range(r.ndim) if not nbefore <= i < nbefore + nb]
        order = rest[:want] + list(range(nbefore, nbefore + nb)) + rest[want:]
        r = O.permute_dims(r, order)
    tokens = []
    for i, (k, _) in enumerate(ents):
        if k == "none" or k == "slice":
            tokens.append(k)
        elif i == positions[0] and adjacent:
            tokens.extend(["adv"] * nb)
    if not adjacent:
        tokens = ["adv"] * nb + tokens
    return _insert_none(r, tokens)


def _insert_none(y, tokens):
    pos = [i for i, k in enumerate(tokens) if k == "none"]
    return _ops().expand_dims(y, tuple(pos)) if pos else y


def _as_index(v):
    """An index array operand (concrete numpy int64, or a lazy frit Array)."""
    return A.asarray(v) if isinstance(v, np.ndarray) else v


def _gather_flat(y, advs, bshape, p):
    """Several index arrays: y with the indexed axes moved first and flattened into one, read at
    the row-major flat index of the (broadcast) indices. Needs static sizes of y."""
    O = _ops()
    if any(d is None for d in y.shape):
        raise FritError("indexing with several integer arrays needs static sizes (array of shape "
                        "%s); index one axis at a time, or use dynamic=False in frit.jit" % (y.shape,))
    axes = [a for a, _, _ in advs]
    others = [i for i in range(y.ndim) if i not in axes]
    dims = [y.shape[a] for a in axes]
    y2 = O.permute_dims(y, axes + others)
    y2 = _merge(y2, [len(axes)] + [1] * len(others))
    if all(isinstance(v, np.ndarray) for _, v, _ in advs):
        flat = np.zeros(bshape, np.int64)
        for d, (_, v, _) in zip(dims, advs):
            flat = flat * d + v  # each already checked and wrapped
        return O.take(y2, A.asarray(flat), axis=0)
    flat = None
    for d, (a, v, _) in zip(dims, advs):
        v = _as_index(v)
        if v.dtype is not D.int64:
            v = O.astype(v, D.int64)
        if p == "check":
            v = B.guard(y, a, v, "index")
        # wrap negatives, clamp into [0, d) (a no-op for checked indices)
        v = O.clip(O.where(v < 0, v + d, v), 0, max(d - 1, 0))
        flat = v if flat is None else flat * d + v  # broadcasts the indices together
    return O.take(y2, flat, axis=0)


# ---------------------------------------------------------------- x.at[idx]

class _At:
    """x.at: x.at[idx].set(v) / .add(v) / .min(v) / .max(v) / .get()."""
    __slots__ = ("x",)

    def __init__(self, x):
        self.x = x

    def __getitem__(self, idx):
        return _AtIndex(self.x, idx)

    def __repr__(self):
        return "_At(%r)" % (self.x,)


class _AtIndex:
    __slots__ = ("x", "idx")

    def __init__(self, x, idx):
        self.x, self.idx = x, idx

    def get(self, bounds=None):
        """x[idx]."""
        x, ents = _parse(self.x, self.idx)
        return _index(x, ents, bounds)

    def set(self, values, bounds=None):
        """A copy of x with x[idx] = values (duplicates: the last in index order wins)."""
        return update(self.x, self.idx, values, "set", bounds)

    def add(self, values, bounds=None):
        """A copy of x with values added at idx (duplicates accumulate)."""
        return update(self.x, self.idx, values, "add", bounds)

    def min(self, values, bounds=None):
        """A copy of x with x[idx] = minimum(x[idx], values), all duplicates combined."""
        return update(self.x, self.idx, values, "min", bounds)

    def max(self, values, bounds=None):
        """A copy of x with x[idx] = maximum(x[idx], values), all duplicates combined."""
        return update(self.x, self.idx, values, "max", bounds)


def at(x):
    return _At(x)


def _b_scatter(ctx, ts, mode):
    return _scatter(ctx, ts[0], ts[1], ts[2], mode)


def _values(v, x):
    """The update values as an Array of x's dtype (Python scalars weak, as in x + v)."""
    O = _ops()
    v = A.weak_scalar(v, x.dtype) if A.is_weak(v) else A.operand(v)
    return v if v.dtype is x.dtype else O.astype(v, x.dtype)


def scatter(x, idx, values, mode="add"):
    """A new array: x with values combined into x[idx] (numpy indexing) by mode, one of "add",
    "min", "max", "and", "or", "xor" (integers/bool) or "set". Duplicate positions combine in
    index order (set: the last wins), like np.add.at / np.bitwise_xor.at."""
    if mode not in ATOMIC:
        raise ValueError("frit.scatter: mode must be one of %s, not %r" % (", ".join(ATOMIC), mode))
    return update(x, idx, values, mode)


def update(x, idx, values, mode, bounds=None):
    """Functional x.at[idx].<mode>(values), mode in ATOMIC (see the module doc)."""
    O = _ops()
    x = A.operand(x)
    p = B.policy(bounds, x)
    if mode in ("and", "or", "xor") and x.dtype.kind == "f":
        raise FritTypeError("frit.scatter: mode %r needs an integer or bool array, not %s"
                            % (mode, x.dtype))
    if _scatter is None:
        raise FritError("this libfrit has no frit_scatter")
    xe, ents = _parse(x, idx)
    if xe is not x:  # a scalar boolean mask added a unit axis: update that view, drop the axis
        idx2 = tuple(None if k == "none" else slice(*v) if k == "slice" else v for k, v in ents)
        return A.apply(_b_reshape_as, [update(xe, idx2, values, mode, bounds), x])
    # trailing axes the index leaves whole stay rows of the scatter (parallel inner loop)
    t = 0
    for k, v in reversed(ents):
        if k == "slice" and v == (None, None, None):
            t += 1
        else:
            break
    lead, trail = x.shape[:x.ndim - t], x.shape[x.ndim - t:]
    lents = ents[:len(ents) - t]
    static = all(d is not None for d in lead)
    if static and all(k != "arr" or isinstance(v, np.ndarray) for k, v in lents):
        if p != "check":  # clamp the index arrays (numpy would raise)
            ax, cl = 0, []
            for k, v in lents:
                cl.append((k, _check_bounds(v, lead[ax], ax, p) if k == "arr" else v))
                ax += k != "none"
            lents = cl
        nlead = int(np.prod(lead)) if lead else 1
        pos = np.arange(nlead, dtype=np.int64).reshape(lead)[_np_index(lents)]
        pos = A.asarray(np.ascontiguousarray(pos, dtype=np.int64))
    else:
        pos = _index(A.apply(_b_iota_as, [x], (len(lead),)), lents, p)
    sel_shape = tuple(pos.shape) + tuple(trail)
    v = _values(values, x)
    vs = tuple(v.shape)
    if len(vs) > len(sel_shape) or any(a != 1 and a != b and a is not None and b is not None
                                       for a, b in zip(vs[::-1], sel_shape[::-1])):
        raise FritError("at[...].%s: values of shape %s cannot be broadcast to the indexed shape %s"
                        % (mode, vs, sel_shape))
    if vs != sel_shape:
        v = A.apply(_b_bcast_as, [v, pos, x], (t,))
    # x as (lead, rows), positions flat, values as (positions, rows)
    xs = _merge(x, [len(lead)] + ([t] if t else []))
    flat_pos = _merge(pos, [pos.ndim])
    vs = _merge(v, [pos.ndim] + ([t] if t else []))
    r = A.apply(_b_scatter, [xs, flat_pos, vs], (ATOMIC[mode],))
    return A.apply(_b_reshape_as, [r, x])


def _np_index(ents):
    """The entries as a numpy index tuple (all arrays concrete)."""
    out = []
    for k, v in ents:
        out.append(None if k == "none" else slice(*v) if k == "slice" else v)
    return tuple(out)
