"""frit.distributed: a world of ranks over MPI (mpirun and friends) and the collectives between
them, as ops that work eagerly and under frit.jit (C: src/dist, src/tensor/collective.c;
docs/distributed.md). One process without a launcher is a world of one rank, where every
collective is the identity."""
import atexit
import ctypes as C
import threading

import numpy as np

from . import _lib as L
from ._array import apply, operand
from ._errors import FritError, FritTypeError

_p = C.c_void_p
for _name, _res, _args in [("frit_dist_init", C.c_int, [_p, C.c_int]),
                           ("frit_dist_rank", C.c_int, []), ("frit_dist_size", C.c_int, []),
                           ("frit_dist_barrier", C.c_int, [_p]), ("frit_dist_finalize", C.c_int, [_p]),
                           ("frit_all_reduce", _p, [_p, _p, C.c_int]),
                           ("frit_all_gather", _p, [_p, _p, C.c_int]),
                           ("frit_reduce_scatter", _p, [_p, _p, C.c_int, C.c_int]),
                           ("frit_broadcast_from", _p, [_p, _p, C.c_int]),
                           ("frit_sendrecv", _p, [_p, _p, C.c_int, C.c_int])]:
    _f = getattr(L.lib, _name)
    _f.restype, _f.argtypes = _res, _args

_OPS = ("sum", "prod", "max", "min", "mean")
_lock = threading.Lock()
_state = {"init": False, "final": False}


def _call(name, *args):
    """A status-returning library call with a ctx of its own for the message."""
    ctx = L.Ctx()
    try:
        if getattr(L.lib, name)(ctx.ptr, *args) != 0:
            raise FritError(ctx.error())
    finally:
        ctx.close()


def init(mpi=None):
    """Joins the world: MPI when the process was started by mpirun (or mpi=True: MPI always),
    else one rank. Idempotent. Leaves MPI when the interpreter exits. A missing or broken MPI is
    a FritError naming the reason."""
    with _lock:
        if _state["final"]:
            raise FritError("frit.distributed.init: the world was finalized (MPI cannot start twice)")
        _call("frit_dist_init", 1 if mpi else 0)
        if not _state["init"]:
            _state["init"] = True
            atexit.register(finalize)


def is_initialized():
    return _state["init"] and not _state["final"]


def rank():
    return L.lib.frit_dist_rank()


def size():
    return L.lib.frit_dist_size()


def barrier():
    _call("frit_dist_barrier")


def finalize():
    """Leaves MPI (once; later collectives fail). Runs at exit by itself after init."""
    with _lock:
        if _state["init"] and not _state["final"]:
            _state["final"] = True
            _call("frit_dist_finalize")


def _op(name, op):
    if op not in _OPS:
        raise ValueError("frit.distributed.%s: op must be one of %s, not %r" % (name, ", ".join(_OPS), op))
    return L.RF[op]


def _int(name, what, v):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise FritTypeError("frit.distributed.%s: %s must be an int, not %s" % (name, what, type(v).__name__))
    return int(v)


def _b_all_reduce(ctx, ts, op):
    return L.lib.frit_all_reduce(ctx, ts[0], op)


def _b_all_gather(ctx, ts, axis):
    return L.lib.frit_all_gather(ctx, ts[0], axis)


def _b_reduce_scatter(ctx, ts, op, axis):
    return L.lib.frit_reduce_scatter(ctx, ts[0], op, axis)


def _b_broadcast(ctx, ts, root):
    return L.lib.frit_broadcast_from(ctx, ts[0], root)


def _b_sendrecv(ctx, ts, dest, source):
    return L.lib.frit_sendrecv(ctx, ts[0], dest, source)


def all_reduce(x, op="sum"):
    """The elementwise reduction over the ranks of x (same shape and dtype on every rank):
    sum, prod, max, min (NaN wins) or mean (integers give float64)."""
    return apply(_b_all_reduce, [operand(x)], (_op("all_reduce", op),))


def all_gather(x, axis=0):
    """Every rank's x concatenated along axis in rank order."""
    return apply(_b_all_gather, [operand(x)], (_int("all_gather", "axis", axis),))


def reduce_scatter(x, op="sum", axis=0):
    """The reduction over ranks of x, cut along axis (a static length divisible by the world
    size) into one block per rank: this rank's block."""
    return apply(_b_reduce_scatter, [operand(x)], (_op("reduce_scatter", op), _int("reduce_scatter", "axis", axis)))


def broadcast(x, root=0):
    """Root's x on every rank (the others' x gives the shape and dtype)."""
    return apply(_b_broadcast, [operand(x)], (_int("broadcast", "root", root),))


def sendrecv(x, dest, source):
    """Sends x to rank dest and returns what rank source sent (of x's shape and dtype); None: no
    partner (zeros come back when source is None)."""
    d = -1 if dest is None else _int("sendrecv", "dest", dest)
    s = -1 if source is None else _int("sendrecv", "source", source)
    return apply(_b_sendrecv, [operand(x)], (d, s))


def shift(x, offset=1, periodic=True):
    """x from rank r goes to rank r + offset: returns the x of rank r - offset (zeros past the
    ends when not periodic)."""
    r, n = rank(), size()
    dest, source = r + offset, r - offset
    if periodic:
        dest, source = dest % n, source % n
    return sendrecv(x, dest if 0 <= dest < n else None, source if 0 <= source < n else None)


class Sharded:
    """A global array cut along `axis` into one equal block per rank, block r held by rank r as
    `local` (an Array, eager or traced under frit.jit). Elementwise arithmetic works block by
    block; reductions combine the blocks; roll and halo exchange rows with the neighbours."""

    def __init__(self, local, axis=0):
        self.local = operand(local)
        nd = self.local.ndim
        if not -nd <= axis < nd:
            raise ValueError("frit.distributed.Sharded: axis %d out of range for a %d-d block" % (axis, nd))
        self.axis = axis % nd

    @classmethod
    def from_global(cls, x, axis=0):
        """This rank's block of the global x (every rank passes the same x; its length along
        axis must divide by the world size)."""
        x = operand(x)
        n, P = x.shape[axis], size()
        if not isinstance(n, int) or n % P:
            raise ValueError("frit.distributed.Sharded: axis %d of shape %s does not divide into %d ranks"
                             % (axis, tuple(x.shape), P))
        b = n // P
        idx = [slice(None)] * x.ndim
        idx[axis] = slice(rank() * b, (rank() + 1) * b)
        return cls(x[tuple(idx)], axis)

    @property
    def shape(self):
        s = list(self.local.shape)
        s[self.axis] = s[self.axis] * size()
        return tuple(s)

    @property
    def dtype(self):
        return self.local.dtype

    def gather(self):
        """The global array, on every rank."""
        return all_gather(self.local, self.axis)

    def _wrap(self, local):
        return Sharded(local, self.axis)

    def _other(self, o):
        if isinstance(o, Sharded):
            if o.axis != self.axis or o.local.shape != self.local.shape:
                raise ValueError("frit.distributed.Sharded: blocks of shape %s (axis %d) and %s (axis %d) do "
                                 "not line up" % (self.local.shape, self.axis, o.local.shape, o.axis))
            return o.local
        if hasattr(o, "ndim") and o.ndim > self.local.ndim - self.axis:
            raise ValueError("frit.distributed.Sharded: an unsharded operand of shape %s would broadcast "
                             "across the sharded axis %d; shard it too" % (tuple(o.shape), self.axis))
        return o

    def map(self, f, *others):
        """f applied block by block (f elementwise, or at least not mixing rows of the sharded axis)."""
        return self._wrap(f(self.local, *[self._other(o) for o in others]))

    def __add__(self, o): return self._wrap(self.local + self._other(o))
    def __radd__(self, o): return self._wrap(self._other(o) + self.local)
    def __sub__(self, o): return self._wrap(self.local - self._other(o))
    def __rsub__(self, o): return self._wrap(self._other(o) - self.local)
    def __mul__(self, o): return self._wrap(self.local * self._other(o))
    def __rmul__(self, o): return self._wrap(self._other(o) * self.local)
    def __truediv__(self, o): return self._wrap(self.local / self._other(o))
    def __rtruediv__(self, o): return self._wrap(self._other(o) / self.local)
    def __pow__(self, o): return self._wrap(self.local ** self._other(o))
    def __neg__(self): return self._wrap(-self.local)

    def _reduce(self, fname, axis, op):
        from . import _ops as O
        f = getattr(O, fname)
        nd = self.local.ndim
        axes = tuple(range(nd)) if axis is None else tuple(a % nd for a in (axis if isinstance(axis, tuple) else (axis,)))
        part = f(self.local, axis=axes)
        if self.axis not in axes:
            kept = [a for a in range(nd) if a not in axes]
            return Sharded(part, kept.index(self.axis))
        return all_reduce(part, op)

    def sum(self, axis=None):
        """The sum over axis (None: all); an Array when the sharded axis is reduced, else Sharded."""
        return self._reduce("sum", axis, "sum")

    def max(self, axis=None):
        return self._reduce("max", axis, "max")

    def min(self, axis=None):
        return self._reduce("min", axis, "min")

    def mean(self, axis=None):
        nd = self.local.ndim
        axes = tuple(range(nd)) if axis is None else tuple(a % nd for a in (axis if isinstance(axis, tuple) else (axis,)))
        n = 1
        for a in axes:
            n *= self.shape[a]
        s = self.sum(axes)
        return s / n if not isinstance(s, Sharded) else s.map(lambda v: v / n)

    def _rows(self, lo, hi):
        idx = [slice(None)] * self.local.ndim
        idx[self.axis] = slice(lo, hi)
        return self.local[tuple(idx)]

    def roll(self, shift_by, axis=None, periodic=True):
        """numpy's roll of the global array along axis (None: the sharded axis only, unlike
        numpy's flattened roll); periodic=False lets zeros in at the ends instead (a shift)."""
        from . import _shape_ops as SO
        axis = self.axis if axis is None else axis % self.local.ndim
        if axis != self.axis:
            if not periodic:
                raise ValueError("frit.distributed.Sharded.roll: periodic=False is for the sharded axis")
            return self._wrap(SO.roll(self.local, shift_by, axis))
        n, k = self.local.shape[self.axis], int(shift_by)
        if 0 < k <= n:  # the last k rows of the block below come in front
            below = shift(self._rows(n - k, n), 1, periodic)
            return self._wrap(SO.concatenate([below, self._rows(0, n - k)], self.axis))
        if -n <= k < 0:  # the first rows of the block above go behind
            above = shift(self._rows(0, -k), -1, periodic)
            return self._wrap(SO.concatenate([self._rows(-k, n), above], self.axis))
        q, s = divmod(k, n)  # whole blocks from rank r - q, then s rows as above
        base = Sharded(shift(self.local, q, periodic) if q else self.local, self.axis)
        return base.roll(s, periodic=periodic) if s else base

    def halo(self, width=1, periodic=True):
        """This rank's block with `width` rows of each neighbour on either side along the sharded
        axis (zeros past the ends unless periodic): the input of a stencil."""
        from . import _shape_ops as SO
        n = self.local.shape[self.axis]
        if not 0 < width <= n:
            raise ValueError("frit.distributed.Sharded.halo: width %d must be in 1..%d (the block's rows)" % (width, n))
        below = shift(self._rows(n - width, n), 1, periodic)
        above = shift(self._rows(0, width), -1, periodic)
        return SO.concatenate([below, self.local, above], self.axis)


BUCKET_BYTES = 1 << 20


def _made_at(a):
    """When a traced array was made (its node's creation order; 0 for a concrete array): the
    order in which a backward pass finishes the gradients."""
    n = getattr(a, "_n", None)
    if n is None or n.np is not None or not n.t:
        return 0
    return L.fn["frit_uop_id"](L.fn["frit_tensor_uop"](n.t))


def gradient_buckets(grads, bucket_bytes=None):
    """The names of a {name: array} tree of gradients cut into buckets for the exchange: by dtype,
    in the order the backward pass makes them, each bucket up to bucket_bytes (an array larger than
    that is a bucket of its own; None: the module's BUCKET_BYTES, 1 MiB)."""
    bucket_bytes = BUCKET_BYTES if bucket_bytes is None else bucket_bytes
    if isinstance(bucket_bytes, bool) or not isinstance(bucket_bytes, (int, np.integer)) or bucket_bytes < 1:
        raise ValueError("frit.distributed.gradient_buckets: bucket_bytes must be a positive integer, got %r"
                         % (bucket_bytes,))
    names = sorted(grads, key=lambda k: (_made_at(grads[k]), k))
    buckets, open_ = [], {}
    for k in names:
        g = grads[k]
        nbytes = g.dtype.itemsize * int(np.prod(g.shape, dtype=np.int64))
        b = open_.get(str(g.dtype))
        if b is None or (b[1] and b[1] + nbytes > bucket_bytes):
            b = open_[str(g.dtype)] = [[], 0]
            buckets.append(b[0])
        b[0].append(k)
        b[1] += nbytes
    return buckets


def average_gradients(grads, bucket_bytes=None):
    """The mean over ranks of a {name: array} tree of gradients: data-parallel training's exchange.
    The gradients go in buckets (gradient_buckets), one all-reduce each, the arrays of a bucket
    flattened into one and cut apart again. A compiled step starts each bucket's all-reduce as soon
    as the backward pass has made it, and the exchange moves while the rest of the backward pass
    computes (docs/distributed.md "Overlap")."""
    from . import _shape_ops as SO
    if size() == 1:
        return dict(grads)
    out = {}
    for keys in gradient_buckets(grads, bucket_bytes):
        flat = SO.concatenate([SO.reshape(grads[k], (-1,)) for k in keys]) if len(keys) > 1 \
            else SO.reshape(grads[keys[0]], (-1,))
        avg = all_reduce(flat, "mean")
        at = 0
        for k in keys:
            n = int(np.prod(grads[k].shape, dtype=np.int64))
            out[k] = SO.reshape(avg[at:at + n], grads[k].shape)
            at += n
    return out


def broadcast_tree(tree, root=0):
    """Root's arrays of a {name: array} tree on every rank (e.g. the initial parameters)."""
    if size() == 1:
        return dict(tree)
    return {k: broadcast(v, root) for k, v in tree.items()}
