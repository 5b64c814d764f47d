"""Shader-like code in Python: frit.kernel (explicit kernels over kernel scalars), frit.loop,
frit.if_/else_, break_/continue_ (per point inside kernels; host loops and selects outside),
frit.var, atomics, in-place writes that rebind Arrays, in-place scatters, frit.indices. This
module holds the shared state, rebinding, variables and conditionals; frit._kernel the kernels,
frit._hostloop the host loops.

Design (docs/control.md has the model, docs/python.md the user's view)
- An Array is a mutable wrapper of a Node; every in-place write goes through rebind(), which also
  tells the open host scopes (loops, ifs) which Arrays changed and from which node.
- A kernel records its body as an instruction list while building it live in C (so errors appear
  at once). The written Arrays are rebound to nodes whose expr replays that list
  (KN._Kernel.build), which eager realisation needs (it rebuilds graphs on canonical inputs).
- A host loop runs its Python body once, recording every node made in it (via _array.apply and
  _array._concrete_node). At exit, the Arrays rebound in the body whose old value predates the
  loop are the carried values: the recorded body is rebuilt between frit_host_loop_begin/end
  with each carried array's old node replaced by its CARRY placeholder (HL._HostLoop.build). The
  first pass only served to find the carries; its nodes are dropped.
- A host if_ selects: each Array rebound inside becomes where(cond, new, old) at exit. break_ and
  continue_ in a host loop accumulate a 0-d `skip` condition that masks later rebinds of the
  iteration (where(skip, old, new)); break_ also sets the loop's `stop`.
"""
import ctypes as C
import itertools
import operator
import sys
import threading
import weakref

import numpy as np

from . import _array as A
from . import _dtypes as D
from . import _lib as L
from . import _session as S
from ._errors import FritError, FritTypeError

_p = C.c_void_p
fn = L.fn
_ptrs = L._ptrarr

class _Scopes(threading.local):
    """The open scopes of the calling thread (each thread traces its own kernels and loops)."""
    kernel = None   # the open KN._Kernel (kernels do not nest)
    last_if = None  # (context token, condition) of the host if_ block that just closed

    def __init__(self):
        self.host = []  # open host scopes (HL._HostLoop, _HostIf), outermost first


_T = _Scopes()
S.scope_open = lambda: _T.kernel is not None or bool(_T.host) or A._S.rec is not None
_loop_ids = itertools.count()
_CACHE_MAX = 16    # replays kept per recipe (keyed by context and input tensors)

ATOMIC = {"add": 0, "min": 1, "max": 2, "and": 3, "or": 4, "xor": 5, "exchange": 6}


# ---------------------------------------------------------------- small helpers

def _status(ctx, st, what):
    if st != 0:
        raise _error(ctx, what)


def _error(ctx, what):
    msg = (fn["frit_error"](ctx) or b"").decode(errors="replace") or "failed"
    fn["frit_clear_error"](ctx)
    return FritError("%s: %s" % (what, msg))


def _check(ctx, t, what):
    if not t:
        raise _error(ctx, what)
    return t


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


# Constants of the control structure itself (index literals, loop bounds, variable inits) are
# baked into the graph as CONSTs (static trip counts, folded indices). Weak scalars of arithmetic
# are inputs of kernel and loop recipes instead, as everywhere in eager frit: a kernel run again
# with another Python scalar reuses its compiled code.
_BAKED = weakref.WeakSet()


def _const(v, dt):
    """A constant 0-d node of dtype dt, always a CONST in the graph."""
    if dt is D.bfloat16:
        data = A._bf16_bits(np.float32(v))
        sv = float(L.bf16_value(data))
    else:
        with np.errstate(all="ignore"):
            data = np.array(v, dt.value)
        sv = float(data) if dt.kind == "f" else complex(data) if dt.kind == "c" else int(data)
    n = A._concrete_node(data, dt, scalar=sv)
    _BAKED.add(n)
    return n


def _is_const(n):
    return n.np is not None and n.scalar is not None and n in _BAKED


def _const_tensor(ctx, n):
    return A.scalar_tensor(ctx, n.dtype, n.scalar)


def _new_node(sess, t, expr=None, dtype=None, shape=None, abstract=False, scope=None):
    """A lazy node made here (kernel scalars, kernel and loop results); values made inside a host
    loop body are recorded in it like those of _array.apply."""
    n = A._lazy_node(sess, t, expr, dtype, shape)
    n.abstract = abstract
    n.scope = scope
    if scope is None and A._S.rec is not None:
        n.abstract = True
        n.scope = A._S.rec
        A._S.rec.record(n)
    return n


def _chain(nodes, ops, sess):
    """Lazy-chain length of results made from ops (as _array.apply counts it): a long eager
    chain of kernels or loops is realised as it is built, all results together."""
    nops = 1 + sum(o.nops for o in ops if o.np is None)
    for n in nodes:
        n.nops = nops
    if nops > A.MAX_CHAIN and A._S.rec is None and not any(n.abstract for n in nodes):
        sess.realize(nodes)
        for n in nodes:
            n.nops = 0


def _wrap(n):
    return A._wrap(n)


def _scalar_operand(v, what, dtype=None):
    """A node for a scalar operand: Arrays (0-d), frit.var values, Python scalars (constants of
    dtype, else numpy's default dtype)."""
    if isinstance(v, Var):
        v = v._value()
    if isinstance(v, A.Array):
        if v.ndim != 0:
            raise FritError("%s: expected a scalar (a 0-d array or kernel scalar), got an array of "
                            "shape %s" % (what, v.shape))
        return v._n
    if isinstance(v, (bool, np.bool_)):
        return _const(bool(v), dtype or D.bool_)
    if _is_int(v):
        return _const(int(v), dtype or D.int64)
    if isinstance(v, (float, np.floating)):
        return _const(float(v), dtype or D.float64)
    if isinstance(v, np.ndarray) and v.ndim == 0:
        return A.asarray(v)._n
    raise FritTypeError("%s: expected a scalar, got %s" % (what, type(v).__name__))


def _value_node(v, dt, what):
    """A value to store into / combine with an element of dtype dt (Python scalars are weak)."""
    if isinstance(v, Var):
        v = v._value()
    if A.is_weak(v):
        return A.weak_scalar(v, dt)._n
    return _scalar_operand(v, what)


def _shape_spec(shape, what):
    """(dims, like): dims a tuple of ints, or like an Array whose (possibly symbolic) shape is
    meant. Returns (dims or None, like node or None, single index?)."""
    if isinstance(shape, A.Array):
        return None, shape, False
    if _is_int(shape):
        return (int(shape),), None, True
    try:
        dims = tuple(shape)
    except TypeError:
        raise FritTypeError("%s: shape must be an int, a tuple of ints or an array, got %s"
                            % (what, type(shape).__name__)) from None
    for d in dims:
        if d is None:
            raise FritError("%s: shape %s has a symbolic dim (None); pass the array itself, "
                            "%s(x), to use its symbolic shape" % (what, dims, what))
        if not _is_int(d):
            raise FritTypeError("%s: shape entries must be ints, got %r" % (what, d))
        if d < 0:
            raise FritError("%s: negative dimension in shape %s" % (what, dims))
    return tuple(int(d) for d in dims), None, False


# ---------------------------------------------------------------- structural signatures
# Host loops get a fresh LOOP node (a new loop id) each time they are built, so an eager loop
# run again would compile again. Recipes with equal signatures (equal build sequences over
# inputs in the same positions) are shared instead: the replay cache then returns the same
# graph, and the session's program cache hits.

_RECIPES = {}


def _param_sig(p):
    if isinstance(p, (KN._Kernel, HL._HostLoop)):
        return p.sig()
    if isinstance(p, C.Array):
        return ("ct", type(p)._type_, tuple(p))
    if isinstance(p, tuple):
        return tuple(_param_sig(x) for x in p)
    if isinstance(p, (int, float, str, bytes, bool)) or p is None:
        return (type(p), p)
    return ("id", id(p), p)  # compared by identity: never a false match


def _expr_sig(n, ref):
    build, ops, params = n.expr
    return (build, tuple(_param_sig(p) for p in params), tuple(ref(o) for o in ops))


def _const_sig(n):
    return ("c", n.dtype.code, n.scalar)


# ---------------------------------------------------------------- rebinding

def rebind(arr, node):
    """arr now holds `node` (an in-place write). Open host scopes log the change; after a break_
    or continue_ in the innermost host loop the new value is masked by the loop's skip condition."""
    _T.last_if = None  # a write between an if_ block and else_: the else_ no longer follows it
    if _T.kernel is not None and arr._n.scope is not _T.kernel:
        # (x += 1 on a kernel scalar only renames a value: allowed)
        raise FritError("in-place update of an array inside frit.kernel: kernels write elements "
                        "(a[i, j] = v) and variables (frit.var); whole-array updates belong "
                        "outside the kernel")
    if _T.host:
        old = arr._n
        loop = _innermost_loop()
        if loop is not None and loop.skip is not None and node is not old:
            node = A._ops.where(loop.skip, _wrap(old), _wrap(node))._n
        key = id(arr)
        for sc in _T.host:
            if key not in sc.log:
                sc.log[key] = (arr, old)
    arr._n = node


def _innermost_loop():
    for sc in reversed(_T.host):
        if sc.__class__ is HL._HostLoop:
            return sc
    return None


def _restore(log):
    for arr, old in log.values():
        arr._n = old


# ---------------------------------------------------------------- in-place writes

def setitem(arr, idx, value):
    """arr[idx] = value: an element store inside a kernel; otherwise arr is rebound to the
    functional update (numpy indexing, index arrays; duplicates: the last in index order)."""
    k = _T.kernel
    if k is not None:
        ok, _ = KN._is_element_index(arr, idx)
        if ok:
            return k.store(arr, idx, value)
        raise FritError("element store: inside frit.kernel an element is addressed by one "
                        "scalar index per axis (array of shape %s, index %r); slices and index "
                        "arrays are for code outside kernels" % (arr.shape, idx))
    rebind(arr, _functional_set(arr, idx, value)._n)


def _is_full(idx):
    if not isinstance(idx, tuple):
        idx = (idx,)
    return all(e is Ellipsis or (isinstance(e, slice) and e == slice(None)) for e in idx) and \
        sum(1 for e in idx if e is Ellipsis) <= 1


def _functional_set(arr, idx, value):
    from . import _indexing as I
    if _is_full(idx) and (not isinstance(idx, tuple) or
                          len([e for e in idx if e is not Ellipsis]) <= arr.ndim):
        v = I._values(value.get() if isinstance(value, Var) else value, arr)
        if tuple(v.shape) != tuple(arr.shape) or None in arr.shape:
            v = A.apply(I._b_bcast_as, [v, arr, arr], (0,))
        else:
            v = A.apply(A._b_ident, [v])  # a node of its own
        return v
    if isinstance(value, Var):
        value = value.get()
    m = idx[0] if isinstance(idx, tuple) and len(idx) == 1 else idx
    if (isinstance(m, (A.Array, np.ndarray)) and m.dtype == D.bool_ and m.ndim == arr.ndim
            and np.ndim(value) == 0):
        # a[mask] = scalar is a where: no data-dependent shape, so it also works under jit
        if tuple(m.shape) != tuple(arr.shape) and None not in tuple(m.shape) + tuple(arr.shape):
            raise IndexError("boolean index of shape %s does not match the array's shape %s"
                             % (tuple(m.shape), tuple(arr.shape)))
        v = I._values(value, arr)
        return A._ops.where(m, v, arr)
    return I.update(arr, idx, value, "set")


def _scatter_inplace(mode):
    def f(a, idx, values):
        if not isinstance(a, A.Array):
            raise FritTypeError("frit.scatter_%s: expected a frit.Array to update, got %s"
                                % (mode, type(a).__name__))
        if _T.kernel is not None:
            raise FritError("frit.scatter_%s: not inside frit.kernel (use frit.atomic_%s on "
                            "elements)" % (mode, "exchange" if mode == "set" else mode))
        from . import _indexing as I
        if isinstance(values, Var):
            values = values.get()
        rebind(a, I.update(a, idx, values, mode)._n)
    f.__name__ = "scatter_" + mode
    f.__doc__ = ("In place: a is rebound to frit.scatter(a, idx, values, mode=%r) (duplicate "
                 "indices combine in index order)." % mode)
    return f


scatter_add = _scatter_inplace("add")
scatter_min = _scatter_inplace("min")
scatter_max = _scatter_inplace("max")
scatter_and = _scatter_inplace("and")
scatter_or = _scatter_inplace("or")
scatter_xor = _scatter_inplace("xor")
scatter_set = _scatter_inplace("set")


# ---------------------------------------------------------------- variables

class _Recipe:
    """A recorded kernel or host loop: build(ctx, ts) replays it on input tensors ts in a C
    context, memoised per (ctx, inputs) for the last _CACHE_MAX input sets. Subclasses set
    self.cache = {} and define _replay(ctx, ts)."""

    def build(self, ctx, ts):
        key = (ctx, tuple(ts))
        r = self.cache.get(key)
        if r is None:
            r = self._replay(ctx, ts)
            if len(self.cache) >= _CACHE_MAX:
                self.cache.clear()
            self.cache[key] = r
            _LIVE_RECIPES.add(self)
        return r


# Recipes whose cache holds tensors of some ctx: a freed ctx's address can be reused by a new
# one (sessions come and go: eager generations, threads), so its entries are dropped first.
_LIVE_RECIPES = weakref.WeakSet()


def _forget_ctx(ctx):
    for r in list(_LIVE_RECIPES):
        for k in [k for k in list(r.cache) if k[0] == ctx]:
            r.cache.pop(k, None)


S.close_hooks.append(_forget_ctx)


class Var:
    """frit.Var(init, dtype=None) / frit.var(init, dtype=...): inside a kernel a register of the
    kernel point; outside a value that host loops carry. v.get() reads it, v.set(x) assigns; a
    Var is also an operand."""
    __slots__ = ("_k", "_kid", "_a", "dtype", "shape", "__weakref__")
    __array_priority__ = 200

    def __init__(self, init, dtype=None):
        _make_var(self, init, dtype)

    def get(self):
        """The current value (inside a kernel: a read at this point of the program)."""
        k = self._k
        if k is not None:
            kk = KN._need_kernel("frit.var get")
            if kk is not k:
                raise k.closed_error()
            out = [None]
            t = k._run(("vget", out, self))
            out[0] = k._knode(t, self.dtype)
            return _wrap(out[0])
        if _T.host:
            # inside a host loop the read must follow the carried value: a copy of concrete
            # data (eager init) would read the initial value in every iteration
            return A.apply(A._b_ident, [self._a])
        return _fresh(self._a)

    def set(self, value):
        """Assigns value (converted to the var's dtype, broadcast to its shape)."""
        k = self._k
        if k is not None:
            kk = KN._need_kernel("frit.var set")
            if kk is not k:
                raise k.closed_error()
            k._run(("vset", self, _value_node(value, self.dtype, "frit.var set")))
            return
        from . import _indexing as I
        a = self._a
        v = I._values(value.get() if isinstance(value, Var) else value, a)
        if tuple(v.shape) != tuple(a.shape) or None in a.shape:
            v = A.apply(I._b_bcast_as, [v, a, a], (0,))
        rebind(a, v._n)

    def _value(self):
        return self.get() if self._k is not None else self._a

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return "frit.var(%s, dtype=%s%s)" % ("<kernel>" if self._k is not None else
                                             repr(self._a), self.dtype,
                                             "" if self._k is not None else "")

    def __bool__(self):
        return bool(self._value())

    def __float__(self):
        return float(self._value())

    def __int__(self):
        return int(self._value())

    def __index__(self):
        return operator.index(self._value())

    def __hash__(self):
        return id(self)

    def astype(self, dtype):
        return self._value().astype(dtype)


def _var_binop(name, fname):
    def fwd(self, other):
        return getattr(A._ops, fname)(self._value(), other)

    def rev(self, other):
        return getattr(A._ops, fname)(other, self._value())

    def inp(self, other):
        self.set(getattr(A._ops, fname)(self._value(), other))
        return self
    setattr(Var, "__%s__" % name, fwd)
    if name not in ("lt", "le", "gt", "ge", "eq", "ne"):
        setattr(Var, "__r%s__" % name, rev)
        setattr(Var, "__i%s__" % name, inp)


for _n, _f in [("add", "add"), ("sub", "subtract"), ("mul", "multiply"),
               ("truediv", "true_divide"), ("floordiv", "floor_divide"), ("mod", "remainder"),
               ("pow", "power"), ("matmul", "matmul"), ("and", "bitwise_and"),
               ("or", "bitwise_or"), ("xor", "bitwise_xor"), ("lshift", "left_shift"),
               ("rshift", "right_shift"), ("lt", "less"), ("le", "less_equal"),
               ("gt", "greater"), ("ge", "greater_equal"), ("eq", "equal"), ("ne", "not_equal")]:
    _var_binop(_n, _f)
Var.__neg__ = lambda self: A._ops.negative(self._value())
Var.__pos__ = lambda self: A._ops.positive(self._value())
Var.__abs__ = lambda self: A._ops.abs(self._value())
Var.__invert__ = lambda self: A._ops.invert(self._value())




def var(x, /, axis=None, dtype=None, ddof=0, keepdims=False, correction=None):
    """frit.var(init, dtype=None): a variable (a frit.Var) when init is a Python scalar or a Var,
    or a 0-d value inside frit.kernel; otherwise numpy's variance frit.var(x, axis=None, ddof=0,
    keepdims=False, dtype=None, correction=None) (the array API name), so that an array argument
    always means the variance. frit.Var(init, dtype) always makes a variable.
    The parameters are the variance's (the array API's signature); for a variable the second
    positional argument is its dtype."""
    if isinstance(x, Var) or A.is_weak(x) or (_T.kernel is not None and getattr(x, "ndim", 0) == 0):
        if ddof != 0 or keepdims or correction is not None or (axis is not None and dtype is not None):
            raise FritTypeError("frit.var(init, dtype=None) makes a variable: it takes no axis, "
                                "ddof, keepdims or correction")
        return Var(x, dtype if axis is None else axis)
    return A._ops.var(x, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, correction=correction)


def _make_var(v, init, dtype):
    """Fills Var v: inside frit.kernel a register of each kernel point (init converted to dtype);
    outside kernels a value (0-d or n-d) that host loops carry."""
    dt = None if dtype is None else D.dtype(dtype)
    k = _T.kernel
    if k is not None:
        init_n = _scalar_operand(init, "frit.var", dt)
        dt = dt or init_n.dtype
        v._k, v._a, v.dtype, v.shape = k, None, dt, ()
        v._kid = k._run(("var", v, dt.code, init_n))
        return
    if isinstance(init, Var):
        init = init.get()
    a = _fresh(A.asarray(init, dt))
    v._k, v._kid, v._a, v.dtype, v.shape = None, -1, a, a.dtype, a.shape


def _fresh(a):
    """An Array with a node of its own holding a's value (no copy of data)."""
    n = a._n
    if n.np is not None:
        return _wrap(A._concrete_node(n.np, n.dtype, n.scalar))
    return A.apply(A._b_ident, [a])


# ---------------------------------------------------------------- loops

def loop(start, end=None, step=1):
    """`with frit.loop(n) as i:` / `frit.loop(start, end, step=1)`: inside frit.kernel a loop of
    each kernel point; outside kernels a host loop whose body (any frit code) runs once per
    iteration, carrying every Array or frit.var rebound in it."""
    if end is None:
        start, end = 0, start
    if _is_int(step) and int(step) == 0:
        raise FritError("frit.loop: step must not be zero")
    if _T.kernel is not None:
        return KN._KernelLoop(start, end, step)
    return HL._HostLoopCtx(start, end, step)


# ---------------------------------------------------------------- conditionals

def _bool_cond(c, what):
    if isinstance(c, Var):
        c = c._value()
    if isinstance(c, (bool, np.bool_)):
        return A.asarray(bool(c))
    if not isinstance(c, A.Array):
        c = A.asarray(c)
    if c.ndim != 0:
        raise FritError("%s: the condition must be a scalar (0-d), got shape %s; per element, "
                        "use frit.where or a condition inside frit.kernel" % (what, c.shape))
    if c.dtype is not D.bool_:
        c = A._ops.not_equal(c, 0)
    return c


class _If:
    """`with frit.if_(cond):` (and else_)."""

    def __init__(self, cond, is_else=False):
        self.cond, self.is_else = cond, is_else

    def __enter__(self):
        k = _T.kernel
        self.k = k
        if k is not None:
            if self.is_else:
                if not k.pending:
                    raise FritError("frit.else_: must directly follow a frit.if_ block")
                k._run(("else",))
                k.pending = False  # the if's end now comes at the else_ block's exit (H7)
                return None
            _T.last_if = None
            c = _scalar_operand(self.cond, "frit.if_")
            k._run(("if", c))
            return None
        if self.is_else:
            li = _T.last_if
            tok = _context_token()
            if li is None or any(x is not y for x, y in zip(li[0][1:], tok[1:])) or \
                    li[0][0] != tok[0]:
                raise FritError("frit.else_: must directly follow a frit.if_ block")
            cond = A._ops.logical_not(li[1])
        else:
            cond = _bool_cond(self.cond, "frit.if_")
        _T.last_if = None
        self.sc = _HostIf(cond)
        _T.host.append(self.sc)
        return None

    def __exit__(self, et, ev, tb):
        k = self.k
        if k is not None:
            if et is not None:
                return False
            if self.is_else:
                k._run(("endif",))
            else:
                if k.pending:  # a nested if_ that just closed ends first (H7: nested ifs)
                    k.pending = False
                    k._run(("endif",))
                k.pending = True  # if_end deferred: an else_ may follow
            return False
        sc = self.sc
        _T.host.pop()
        if et is not None:
            _restore(sc.log)
            _T.last_if = None
            return False
        where = A._ops.where
        for arr, old in sc.log.values():
            if arr._n is not old:
                arr._n = where(sc.cond, _wrap(arr._n), _wrap(old))._n
        _T.last_if = None if self.is_else else (_context_token(), sc.cond)
        return False


class _HostIf:
    kernel = False

    def __init__(self, cond):
        self.cond = cond
        self.log = {}


def _context_token():
    """Where an if_/else_ is written: the scope it is in and the user's frame (so an else_ in
    another function, or after other statements that write, does not pair with an old if_)."""
    f = sys._getframe(2)
    while f is not None and f.f_globals.get("__name__", "").startswith("frit."):
        f = f.f_back
    return (len(_T.host), _T.host[-1] if _T.host else None, f)


def if_(cond):
    """`with frit.if_(cond):` inside frit.kernel: per-point if on a scalar condition. Outside:
    cond is 0-d; the Arrays rebound in the block become where(cond, new, old)."""
    return _If(cond)


def else_():
    """`with frit.else_():` directly after a frit.if_ block: its other branch."""
    return _If(None, True)


def _host_path(loop):
    """The conjunction of the host if_ conditions between loop and the innermost scope."""
    conds = []
    seen = False
    for sc in _T.host:
        if sc is loop:
            seen = True
        elif seen and sc.__class__ is _HostIf:
            conds.append(sc.cond)
    c = None
    for x in conds:
        c = x if c is None else A._ops.logical_and(c, x)
    return c


def break_():
    """Leaves the innermost loop: inside a kernel at once; in a host loop the loop stops after
    this iteration and what the iteration writes after the break_ is discarded."""
    _jump("break")


def continue_():
    """Skips the rest of this iteration of the innermost loop (in a host loop: the values the
    iteration writes after the continue_ are discarded)."""
    _jump("continue")


def _jump(kind):
    k = _T.kernel
    if k is not None:
        k._run((kind,))
        return
    loop = _innermost_loop()
    if loop is None:
        raise FritError("frit.%s_: not inside a frit.loop" % kind)
    _T.last_if = None
    O = A._ops
    path = _host_path(loop)
    if path is None:
        path = A.asarray(True)
    if kind == "break":
        brk = path if loop.skip is None else O.logical_and(path, O.logical_not(loop.skip))
        loop.stop = brk if loop.stop is None else O.logical_or(loop.stop, brk)
    loop.skip = path if loop.skip is None else O.logical_or(loop.skip, path)


# ---------------------------------------------------------------- indices
def _b_indices(ctx, ts, dims, axis):
    nd = len(dims)
    if ts:
        ds = [fn["frit_tensor_dim"](ts[0], a) for a in range(nd)]
    else:
        ds = [fn["frit_const_int"](ctx, L.I64, d) for d in dims]
    out = (_p * max(1, nd))()
    if fn["frit_indices"](ctx, nd, _ptrs(ds), out) != 0:
        return None
    return out[axis]


def indices(shape):
    """Index arrays of a shape: a tuple of int64 arrays, the k-th counting along axis k (numpy's
    indices, as a tuple; I, J = frit.indices((n, m)) works as in numpy). shape may be an array,
    whose shape (symbolic dims included) is used."""
    dims, like, _ = _shape_spec(shape, "frit.indices")
    if like is not None:
        return tuple(A.apply(_b_indices, [like], ((None,) * like.ndim, a))
                     for a in range(like.ndim))
    return tuple(A.apply(_b_indices, [], (dims, a)) for a in range(len(dims)))


# ---------------------------------------------------------------- bounds policy

def set_bounds(mode):
    """Out-of-range indices in explicit kernels of eager code (and sessions made later):
    "clamp" (default: clamped into range per axis), "check" (clamped, and the run fails naming
    kernel, tensor and axis) or "unchecked" (raw indices: fastest, undefined out of range)."""
    if mode not in L.BOUNDS:
        raise FritError("frit.set_bounds: mode must be one of %s, not %r"
                        % (", ".join(L.BOUNDS), mode))
    S.DEFAULT_BOUNDS = mode
    sess = S.current()
    if sess.opts.bounds != L.BOUNDS[mode]:
        sess.opts.bounds = L.BOUNDS[mode]
        sess.pc._init_kw["bounds"] = mode  # the next program cache of this thread too
        sess.pc._programs.clear()  # programs compiled under the old policy (the ctx still owns them)


def get_bounds():
    """The bounds policy of eager code (see set_bounds)."""
    return {v: k for k, v in L.BOUNDS.items()}[S.current().opts.bounds]


from . import _kernel as KN  # noqa: E402  (circular: they build on this module)
from . import _hostloop as HL  # noqa: E402
from ._kernel import (kernel, kernel_open, kernel_getitem,  # noqa: E402,F401  (re-exported)
                      atomic_add, atomic_min, atomic_max, atomic_and, atomic_or, atomic_xor,
                      atomic_exchange)
