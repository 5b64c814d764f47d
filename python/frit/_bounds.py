"""Out-of-range integer indices of numpy-style indexing (a[idx], take, take_along_axis, .at[]):
one policy for eager code and frit.jit. "check" (default) raises IndexError as numpy does --
eagerly at once, under jit when the compiled function runs (a guard computed with the program);
"clamp" clamps into range (negative indices wrap once first). Chosen per call (bounds=) or per
jitted function (frit.jit(bounds=...)); frit.set_bounds concerns explicit kernels only.
docs/python-api.md has the rules."""
import ctypes as C

import numpy as np

from . import _array as A
from . import _dtypes as D
from . import _lib as L
from ._errors import FritError

POLICIES = ("check", "clamp", "unchecked")
DEFAULT = "check"

_dim = L.lib.frit_tensor_dim
_dim.restype = C.c_void_p
_dim.argtypes = [C.c_void_p, C.c_int]
_tensor_of = L.lib.frit_tensor_of
_tensor_of.restype = C.c_void_p
_tensor_of.argtypes = [C.c_void_p, C.c_void_p]
_vmin, _vmax = L.lib.frit_uop_vmin, L.lib.frit_uop_vmax
for _f in (_vmin, _vmax):
    _f.restype = C.c_int64
    _f.argtypes = [C.c_void_p]


def policy(explicit, x=None):
    """The policy for one indexing op: its bounds= argument, else the bounds= of the frit.jit
    tracing x (its session's index_bounds), else "check"."""
    if explicit is not None:
        if explicit not in POLICIES:
            raise FritError("bounds must be one of %s, not %r" % (", ".join(POLICIES), explicit))
        return explicit
    if x is not None:
        s = x._n.sess
        p = getattr(s, "index_bounds", None) if s is not None else None
        if p is not None:
            return p
    return DEFAULT


def _error(op, axis, d, v):
    ax = "" if axis is None else " for axis %d" % axis
    return IndexError("%s: index %d is out of bounds%s with size %d" % (op, v, ax, d))


def check_concrete(a, d, axis, op):
    """numpy's IndexError for concrete indices a into an axis of static size d."""
    a = np.asarray(a)
    if a.size and d is not None:
        bad = (a >= d) | (a < -d) if a.dtype.kind == "i" else (a >= d)
        if bad.any():
            raise _error(op, axis, d, int(a[bad].flat[0]))


def _provably_in_range(idx, d):
    """Range analysis of the index values already shows them inside [-d, d)."""
    t = idx._n.t
    if not t:
        return False
    lo, hi = _vmin(t), _vmax(t)
    return d is not None and lo >= -d and hi < d


def guard(x, axis, idx, op, flat=False):
    """Checks idx (frit Array of integers) against axis of x under the policy "check": concrete
    or eager-lazy indices at once; traced ones by a guard the jitted program computes (its
    values [max, min, dim]) and frit.jit checks after each run. Returns the index to use (a
    concrete one when realised here)."""
    n = idx._n
    d = x.size if flat else x.shape[axis]
    if n.np is not None and (d is not None or x._n.np is not None):
        check_concrete(n.np, d, None if flat else axis, op)
        return idx
    if not (n.abstract or n.expr is None):  # eager: the values are computable now
        v = idx.numpy()
        check_concrete(v, d, None if flat else axis, op)
        return A.asarray(v)
    if n.scope is not None or x._n.scope is not None or idx.size == 0 or \
            _provably_in_range(idx, d):
        return idx  # in a kernel / host-loop body: clamped (documented); or nothing to check
    O = _ops()
    i = O.astype(idx, D.int64)
    if flat and x.ndim != 1:
        from ._indexing import _merge  # a flat view that keeps symbolic dims
        xs = _merge(x, [x.ndim]) if x.ndim else O.expand_dims(x, 0)
    else:
        xs = x
    dim = A.apply(_b_dim_of, [xs], (0 if flat else axis % x.ndim,))
    g = O.stack([O.max(i), O.min(i), dim])
    sess = x._n.sess if n.sess is None else n.sess
    lst = getattr(sess, "guards", None)
    if lst is None:
        lst = sess.guards = []
    lst.append((g, op, None if flat else axis))
    return idx


def _b_dim_of(ctx, ts, axis):
    return _tensor_of(ctx, _dim(ts[0], axis))


def raise_failed(values, infos):
    """After a jitted run: values[k] = [max, min, dim] of guard k."""
    for (hi, lo, d), (_, op, axis) in zip(values, infos):
        if hi >= d:
            raise _error(op, axis, d, int(hi))
        if lo < -d:
            raise _error(op, axis, d, int(lo))


def _ops():
    from . import _ops
    return _ops
