"""Shader-like code in Python: frit.kernel (explicit kernels over kernel scalars), frit.loop,
frit.if_/else_, break_/continue_ (per point inside kernels; host loops and selects outside),
frit.var, atomics, in-place writes that rebind Arrays, in-place scatters, frit.indices.

Design (docs/control.md has the model, docs/python.md the user's view)
- An Array is a mutable wrapper of a Node; every in-place write goes through rebind(), which also
  tells the open host scopes (loops, ifs) which Arrays changed and from which node.
- A kernel records its body as an instruction list while building it live in C (so errors appear
  at once). The written Arrays are rebound to nodes whose expr replays that list
  (_Kernel.build), which eager realisation needs (it rebuilds graphs on canonical inputs).
- A host loop runs its Python body once, recording every node made in it (via _array.apply and
  _array._concrete_node). At exit, the Arrays rebound in the body whose old value predates the
  loop are the carried values: the recorded body is rebuilt between frit_host_loop_begin/end
  with each carried array's old node replaced by its CARRY placeholder (_HostLoop.build). The
  first pass only served to find the carries; its nodes are dropped.
- A host if_ selects: each Array rebound inside becomes where(cond, new, old) at exit. break_ and
  continue_ in a host loop accumulate a 0-d `skip` condition that masks later rebinds of the
  iteration (where(skip, old, new)); break_ also sets the loop's `stop`.
"""
import ctypes as C
import itertools
import operator
import sys

import numpy as np

from . import _array as A
from . import _dtypes as D
from . import _lib as L
from . import _session as S
from ._errors import FritError, FritTypeError

_p = C.c_void_p
fn = L.fn
_ptrs = L._ptrarr

_kernel = None     # the open _Kernel (kernels do not nest)
_host = []         # open host scopes (_HostLoop, _HostIf), outermost first
_last_if = None    # (context token, condition) of the host if_ block that just closed
_loop_ids = itertools.count()
_CACHE_MAX = 16    # replays kept per recipe (keyed by context and input tensors)

ATOMIC = {"add": 0, "min": 1, "max": 2, "and": 3, "or": 4, "xor": 5, "exchange": 6}
_ALIAS_TRUE = None


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


def _const(v, dt):
    """A constant 0-d node of dtype dt (a CONST wherever it is used, like a weak scalar)."""
    if dt is D.bfloat16:
        data = A._bf16_bits(np.float32(v))
        sv = float(L.bf16_value(data))
    else:
        with np.errstate(all="ignore"):
            data = np.array(v, dt.value)
        sv = float(data) if dt.kind == "f" else int(data)
    return A._concrete_node(data, dt, scalar=sv)


def _is_const(n):
    return n.np is not None and n.scalar is not None


def _const_tensor(ctx, n):
    v = n.scalar
    if n.dtype.kind == "f":
        return fn["frit_scalar_f"](ctx, n.dtype.code, float(v))
    v = int(v)
    if v >= 2 ** 63:
        v -= 2 ** 64
    return fn["frit_scalar_i"](ctx, n.dtype.code, v)


def _new_node(sess, t, expr=None, dtype=None, shape=None, abstract=False, scope=None):
    """A lazy node made here (kernel scalars, kernel and loop results); values made inside a host
    loop body are recorded in it like those of _array.apply."""
    n = A._lazy_node(sess, t, expr, dtype, shape)
    n.abstract = abstract
    n.scope = scope
    if scope is None and A._rec is not None:
        n.abstract = True
        n.scope = A._rec
        A._rec.record(n)
    return n


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
    if isinstance(p, (_Kernel, _HostLoop)):
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
    global _last_if
    _last_if = None  # a write between an if_ block and else_: the else_ no longer follows it
    if _host:
        old = arr._n
        loop = _innermost_loop()
        if loop is not None and loop.skip is not None and node is not old:
            node = A._ops.where(loop.skip, _wrap(old), _wrap(node))._n
        key = id(arr)
        for sc in _host:
            if key not in sc.log:
                sc.log[key] = (arr, old)
    arr._n = node


def _innermost_loop():
    for sc in reversed(_host):
        if sc.__class__ is _HostLoop:
            return sc
    return None


def _restore(log):
    for arr, old in log.values():
        arr._n = old


# ---------------------------------------------------------------- kernels

def kernel_open():
    return _kernel is not None


def _need_kernel(what):
    k = _kernel
    if k is None:
        raise FritError("%s: only inside a `with frit.kernel(shape)` block" % what)
    return k


class _KernelCtx:
    """`with frit.kernel(shape, name=None) as idx:`"""

    def __init__(self, shape, name):
        self.spec = _shape_spec(shape, "frit.kernel")
        self.name = name
        self.k = None

    def __enter__(self):
        global _kernel, _last_if
        if _kernel is not None:
            raise FritError("frit.kernel: kernels do not nest (a kernel is already open)")
        _last_if = None
        dims, like, single = self.spec
        k = _Kernel(S.current(), self.name)
        idx = k.begin(dims, like)
        _kernel = self.k = k
        if single:
            return idx[0]
        return tuple(idx)

    def __exit__(self, et, ev, tb):
        global _kernel, _last_if
        k = self.k
        _kernel = None
        _last_if = None
        if et is not None:
            k.abort()
            return False
        k.end()
        return False


class _Kernel:
    """An explicit kernel being built, and afterwards its recipe: the instruction list that
    rebuilds it on other input tensors (build)."""
    kernel = True

    def __init__(self, sess, name):
        self.sess, self.ctx = sess, sess.ptr
        self.name = name
        self.open = True
        self.instrs = []
        self.ext = {}        # tensor-level node -> position in ext_list
        self.ext_list = []
        self.ext_t = []      # their tensors in the live ctx
        self.owner = {}      # accessed tensor pointer -> Array whose elements it holds
        self.target = {}     # id(Array) -> (Array, ext node, alias depth, tensor pointer)
        self.written = {}    # written tensor pointer -> Array
        self.structs = []    # open C structures: "loop", "if", "else"
        self.pending = False  # an if_ closed in Python whose C if_end waits for a possible else_
        self.cache = {}
        self.live_T = self._live_T

    # ---- errors of kernel scalars
    def value_error(self):
        return FritTypeError(
            "the value of a kernel scalar is only known per point when the kernel runs: Python "
            "control flow (if/while/bool/int/float) cannot use it; use `with frit.if_(cond):` "
            "or frit.where inside the kernel")

    def closed_error(self):
        return FritError("a kernel scalar (index, element read, variable, or a value computed "
                         "from them) is only valid inside the frit.kernel block that made it")

    # ---- tensors in the live ctx
    def _ext_node(self, n):
        i = self.ext.get(n)
        if i is not None:
            return self.ext_t[i]
        sc = n.scope
        if sc is not None and sc.kernel:
            raise sc.closed_error() if sc is not self else FritError("internal: kernel scalar")
        if n.np is None and n.sess is not self.sess:
            if n.abstract or n.expr is None:
                raise FritError("frit.kernel: an array traced in another session is used")
            n.sess.realize([n])
        t = A._tensor_of(n, self.sess)
        self.ext[n] = len(self.ext_list)
        self.ext_list.append(n)
        self.ext_t.append(t)
        return t

    def _live_T(self, n):
        if n.scope is self:
            return n.t
        if _is_const(n):
            return A._tensor_of(n, self.sess)
        return self._ext_node(n)

    def _knode(self, t, dtype=None):
        return _new_node(self.sess, t, None, dtype, (), True, self)

    # ---- recording
    def record_pure(self, node):
        for o in node.expr[1]:
            if o.scope is not self and not _is_const(o):
                self._ext_node(o)
        self.instrs.append(("pure", node))

    def _run(self, ins):
        """Executes one instruction in the live ctx and records it; returns its C result."""
        if self.pending and ins[0] != "else":
            self.pending = False
            self._run(("endif",))
        r = _exec(self.ctx, ins, self.live_T, self.vars_live, self.structs)
        self.instrs.append(ins)
        return r

    def begin(self, dims, like):
        self.vars_live = {}
        if like is not None:
            self._ext_node(like._n)
            nd = like.ndim
            dspec = ("like", like._n, nd)
        else:
            nd = len(dims)
            dspec = ("static", dims, nd)
        outs = [None] * nd
        ts = _exec(self.ctx, ("begin", self.name, dspec, outs), self.live_T, None, self.structs)
        for a in range(nd):
            outs[a] = self._knode(ts[a], D.int64)
        self.instrs.append(("begin", self.name, dspec, outs))
        return [_wrap(n) for n in outs]

    def _target(self, arr, what):
        """(ext node, alias depth) for element access to arr. Distinct Arrays whose nodes share
        one tensor (hash-consing: zeros_like(x) twice) get distinct alias tensors, so a write
        through one is never seen through the other."""
        if isinstance(arr, Var):
            raise FritTypeError("%s: a frit.var is not an array (use v.get() / v.set())" % what)
        if not isinstance(arr, A.Array):
            raise FritTypeError("%s: expected a frit.Array, got %s" % (what, type(arr).__name__))
        n = arr._n
        if n.scope is self:
            raise FritError("%s: a kernel scalar is not an array in memory" % what)
        ent = self.target.get(id(arr))
        if ent is not None and ent[1] is n:
            return ent
        t = self._ext_node(n)
        depth = 0
        while True:
            o = self.owner.get(t)
            if o is None or o is arr:
                break
            depth += 1
            t = _alias(self.ctx, t, n.dtype.code)
            _check(self.ctx, t, what)
        self.owner[t] = arr
        ent = (arr, n, depth, t)
        self.target[id(arr)] = ent
        return ent

    def load(self, arr, idx, what="element read"):
        ent = self._target(arr, what)
        inodes = _index_nodes(arr, idx, what)
        out = [None]
        t = self._run(("load", out, (ent[1], ent[2]), inodes))
        out[0] = self._knode(t)
        return _wrap(out[0])

    def store(self, arr, idx, value, what="element store"):
        ent = self._target(arr, what)
        inodes = _index_nodes(arr, idx, what)
        v = _value_node(value, arr.dtype, what)
        self._run(("store", (ent[1], ent[2]), inodes, v))
        self.written[ent[3]] = arr

    def atomic(self, op, arr, idx, value, what):
        ent = self._target(arr, what)
        inodes = _index_nodes(arr, idx, what)
        v = _value_node(value, arr.dtype, what)
        out = [None]
        t = self._run(("atomic", out, ATOMIC[op], (ent[1], ent[2]), inodes, v))
        out[0] = self._knode(t)
        self.written[ent[3]] = arr
        return _wrap(out[0])

    def end(self):
        ctx = self.ctx
        if self.pending:
            self.pending = False
            self._run(("endif",))
        self.open = False
        olds, news = _end_kernel(ctx, self.structs)
        key = (ctx, tuple(self.ext_t))
        self.cache[key] = news
        abstract = any(n.abstract for n in self.ext_list)
        results = []
        for k, (old, new) in enumerate(zip(olds, news)):
            arr = self.written.get(old)
            if arr is None:
                raise FritError("internal: frit_kernel_written gave a tensor the kernel did not "
                                "store to")
            n = arr._n
            node = _new_node(self.sess, new, (_b_kernel_out, self.ext_list, (self, k)), n.dtype,
                             n.shape, abstract)
            results.append((arr, node))
        for arr, node in results:
            rebind(arr, node)

    def abort(self):
        """Closes the kernel in C after an error in its body (best effort; nothing is rebound)."""
        self.open = False
        ctx = self.ctx
        self.pending = False  # its "if" is still in structs: closed below
        _close_structs(ctx, self.structs)
        try:
            fn["frit_kernel_end"](ctx)
        except NotImplementedError:
            pass
        fn["frit_clear_error"](ctx)

    # ---- recipe
    def build(self, ctx, ts):
        key = (ctx, tuple(ts))
        r = self.cache.get(key)
        if r is None:
            r = self._replay(ctx, ts)
            if len(self.cache) >= _CACHE_MAX:
                self.cache.clear()
            self.cache[key] = r
        return r

    def sig(self):
        s = getattr(self, "_sig", None)
        if s is not None:
            return s
        ext = self.ext
        kpos = {}
        vpos = {}

        def ref(n):
            if _is_const(n):
                return _const_sig(n)
            i = kpos.get(n)
            if i is not None:
                return ("k", i)
            return ("e", ext[n])

        out = [len(self.ext_list)]
        for j, ins in enumerate(self.instrs):
            kind = ins[0]
            if kind == "pure":
                out.append(_expr_sig(ins[1], ref))
                kpos[ins[1]] = j
            elif kind == "begin":
                d = ins[2]
                out.append(("begin", ins[1], d[0], ref(d[1]) if d[0] == "like" else d[1], d[2]))
                for a, n in enumerate(ins[3]):
                    kpos[n] = (j, a)
            else:
                e = [kind]
                for x in ins[1:]:
                    if isinstance(x, list):          # the out slot: numbered by position
                        kpos[x[0]] = j
                    elif isinstance(x, Var):
                        e.append(("v", vpos.setdefault(x, len(vpos))))
                    elif isinstance(x, tuple) and all(isinstance(y, A.Node) for y in x):
                        e.append(tuple(ref(y) for y in x))     # indices
                    elif isinstance(x, tuple):                 # (node, alias depth)
                        e.append((ref(x[0]), x[1]))
                    elif isinstance(x, A.Node):
                        e.append(ref(x))
                    else:
                        e.append(x)
                out.append(tuple(e))
        s = self._sig = ("kernel",) + tuple(out)
        return s

    def _replay(self, ctx, ts):
        ext = dict(zip(self.ext_list, ts))
        memo = {}
        vm = {}
        structs = []

        def T(n):
            t = memo.get(n)
            if t is not None:
                return t
            if _is_const(n):
                t = memo[n] = _const_tensor(ctx, n)
                return t
            t = ext.get(n)
            if t is None:
                raise FritError("internal: kernel replay met an unknown value")
            return t

        ins = self.instrs[0]
        idx = _exec(ctx, ins, T, vm, structs)
        try:
            for n, t in zip(ins[3], idx):
                memo[n] = t
            for ins in self.instrs[1:]:
                kind = ins[0]
                if kind == "pure":
                    n = ins[1]
                    build, ops, params = n.expr
                    memo[n] = _check(ctx, build(ctx, [T(o) for o in ops], *params), "frit.kernel")
                    continue
                r = _exec(ctx, ins, T, vm, structs)
                if kind in ("load", "atomic", "vget", "loop"):
                    memo[ins[1][0]] = r
        except Exception as e:
            _close_structs(ctx, structs)
            fn["frit_kernel_end"](ctx)
            fn["frit_clear_error"](ctx)
            if isinstance(e, FritError):
                raise FritError("frit.kernel (rebuilding): %s" % e) from None
            raise
        return _end_kernel(ctx, structs)[1]


def _b_kernel_out(ctx, ts, recipe, k):
    return recipe.build(ctx, ts)[k]


def _end_kernel(ctx, structs):
    """frit_kernel_end: (old tensors, their new versions) in first-store order."""
    if structs:
        raise FritError("internal: kernel closed with open %s" % structs)
    nw = fn["frit_kernel_end"](ctx)
    if nw < 0:
        raise _error(ctx, "frit.kernel")
    olds, news = [], []
    for k in range(nw):
        o, n = _p(), _p()
        _status(ctx, fn["frit_kernel_written"](ctx, k, C.byref(o), C.byref(n)), "frit.kernel")
        olds.append(o.value)
        news.append(n.value)
    return olds, news


def _close_structs(ctx, structs):
    while structs:
        s = structs.pop()
        try:
            fn["frit_kernel_loop_end" if s == "loop" else "frit_kernel_if_end"](ctx)
        except NotImplementedError:
            pass


def _alias(ctx, t, code):
    """A distinct tensor equal to t (t + 0, t + -0.0, t | false): hash-consing gives every
    distinct expression its own node."""
    kind = D.BY_CODE[code].kind
    if kind == "b":
        c = fn["frit_scalar_i"](ctx, code, 0)
        return fn["frit_binary_t"](ctx, L.BF["logical_or"], t, c)
    if kind == "f":
        c = fn["frit_scalar_f"](ctx, code, -0.0)
    else:
        c = fn["frit_scalar_i"](ctx, code, 0)
    return fn["frit_binary_t"](ctx, L.BF["add"], t, c)


def _exec(ctx, ins, T, vm, structs):
    """Runs one kernel instruction in ctx (T: node -> tensor, vm: Var -> C var id)."""
    kind = ins[0]
    if kind == "begin":
        name = ins[1].encode() if ins[1] else None
        _, dims, nd = ins[2]
        out = (_p * max(1, nd))()
        if ins[2][0] == "like":
            t = T(dims)
            ds = [_check(ctx, fn["frit_tensor_dim"](t, a), "frit.kernel") for a in range(nd)]
            st = fn["frit_kernel_begin"](ctx, name, nd, _ptrs(ds), out)
        else:
            st = fn["frit_kernel_begin_static"](ctx, name, nd, L._i64arr(dims), out)
        _status(ctx, st, "frit.kernel")
        return [out[a] for a in range(nd)]
    if kind == "load":
        _, _, tgt, idx = ins
        return _check(ctx, fn["frit_kernel_load"](ctx, _tgt(ctx, T, tgt), len(idx),
                                                  _ptrs(T(i) for i in idx)), "element read")
    if kind == "store":
        _, tgt, idx, v = ins
        _status(ctx, fn["frit_kernel_store"](ctx, _tgt(ctx, T, tgt), len(idx),
                                             _ptrs(T(i) for i in idx), T(v)), "element store")
        return None
    if kind == "atomic":
        _, _, op, tgt, idx, v = ins
        return _check(ctx, fn["frit_kernel_atomic"](ctx, op, _tgt(ctx, T, tgt), len(idx),
                                                    _ptrs(T(i) for i in idx), T(v)),
                      "frit.atomic_" + _ATOMIC_NAMES[op])
    if kind == "var":
        _, var, code, init = ins
        vid = fn["frit_kernel_var"](ctx, code, T(init))
        if vid < 0:
            raise _error(ctx, "frit.var")
        vm[var] = vid
        return vid
    if kind == "vget":
        return _check(ctx, fn["frit_kernel_var_get"](ctx, vm[ins[2]]), "frit.var get")
    if kind == "vset":
        _status(ctx, fn["frit_kernel_var_set"](ctx, vm[ins[1]], T(ins[2])), "frit.var set")
        return None
    if kind == "loop":
        _, _, a, b, s = ins
        out = _p()
        _status(ctx, fn["frit_kernel_loop_begin"](ctx, T(a), T(b), T(s), C.byref(out)),
                "frit.loop")
        structs.append("loop")
        return out.value
    if kind == "endloop":
        _status(ctx, fn["frit_kernel_loop_end"](ctx), "frit.loop")
        structs.pop()
        return None
    if kind == "if":
        _status(ctx, fn["frit_kernel_if_begin"](ctx, T(ins[1])), "frit.if_")
        structs.append("if")
        return None
    if kind == "else":
        _status(ctx, fn["frit_kernel_else"](ctx), "frit.else_")
        structs[-1] = "else"
        return None
    if kind == "endif":
        _status(ctx, fn["frit_kernel_if_end"](ctx), "frit.if_")
        structs.pop()
        return None
    if kind == "break":
        _status(ctx, fn["frit_kernel_break"](ctx), "frit.break_")
        return None
    if kind == "continue":
        _status(ctx, fn["frit_kernel_continue"](ctx), "frit.continue_")
        return None
    raise FritError("internal: kernel instruction %r" % (kind,))


_ATOMIC_NAMES = {v: k for k, v in ATOMIC.items()}


def _tgt(ctx, T, tgt):
    n, depth = tgt
    t = T(n)
    for _ in range(depth):
        t = _check(ctx, _alias(ctx, t, n.dtype.code), "frit.kernel")
    return t


def _index_nodes(arr, idx, what):
    if not isinstance(idx, tuple):
        idx = (idx,)
    if len(idx) != arr.ndim:
        raise FritError("%s: %d indices for an array of shape %s; inside frit.kernel an element "
                        "is addressed by one scalar index per axis" % (what, len(idx), arr.shape))
    out = []
    for a, e in enumerate(idx):
        if isinstance(e, Var):
            e = e._value()
        if isinstance(e, A.Array):
            if e.ndim != 0 or e.dtype.kind not in "iub":
                raise FritError("%s: index %d is a %s array of shape %s; indices are integer "
                                "scalars" % (what, a, e.dtype, e.shape))
            out.append(e._n)
        elif _is_int(e):
            v = int(e)
            d = arr.shape[a]
            if v < 0 and d is not None:
                v += d  # a negative literal counts from the end, as in numpy
            out.append(_const(v, D.int64))
        else:
            raise FritTypeError("%s: index %d is %r; inside frit.kernel indices are kernel "
                                "scalars, 0-d integer arrays or ints" % (what, a, e))
    return tuple(out)


def _is_element_index(arr, idx):
    """Whether idx addresses one element of arr with scalars (ints, 0-d integer Arrays)."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    has_k = False
    for e in idx:
        if isinstance(e, Var):
            if e._k is not None:
                has_k = True
            continue
        if isinstance(e, A.Array):
            if e.ndim != 0:
                return False, has_k
            if e._n.scope is not None and e._n.scope.kernel:
                has_k = True
            continue
        if not _is_int(e):
            return False, has_k
    return len(idx) == arr.ndim, has_k


def kernel_getitem(arr, idx):
    """arr[idx] inside a kernel: an element read when idx is one scalar per axis, else None."""
    k = _kernel
    if arr._n.scope is k:
        return None
    ok, has_k = _is_element_index(arr, idx)
    if ok:
        return k.load(arr, idx)
    if has_k:
        raise FritError("element read: inside frit.kernel an element is addressed by one scalar "
                        "index per axis (array of shape %s, index %r)" % (arr.shape, idx))
    return None


# ---------------------------------------------------------------- in-place writes

def setitem(arr, idx, value):
    """arr[idx] = value: an element store inside a kernel; otherwise arr is rebound to the
    functional update (numpy indexing, index arrays; duplicates: the last in index order)."""
    k = _kernel
    if k is not None:
        ok, has_k = _is_element_index(arr, idx)
        if ok:
            return k.store(arr, idx, value)
        if has_k:
            raise FritError("element store: inside frit.kernel an element is addressed by one "
                            "scalar index per axis (array of shape %s, index %r)"
                            % (arr.shape, idx))
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
    return I.update(arr, idx, value, "set")


def _scatter_inplace(mode):
    def f(a, idx, values):
        if not isinstance(a, A.Array):
            raise FritTypeError("frit.scatter_%s: expected a frit.Array to update, got %s"
                                % (mode, type(a).__name__))
        if _kernel is not None:
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


# ---------------------------------------------------------------- atomics

def _atomic(op):
    name = "frit.atomic_" + op

    def f(a, index, value):
        return _need_kernel(name).atomic(op, a, index, value, name)
    f.__name__ = "atomic_" + op
    f.__doc__ = ("Inside frit.kernel: atomically a[index] = %s; returns the old value."
                 % {"add": "a[index] + value", "min": "minimum(a[index], value)",
                    "max": "maximum(a[index], value)", "and": "a[index] & value",
                    "or": "a[index] | value", "xor": "a[index] ^ value",
                    "exchange": "value"}[op])
    return f


atomic_add = _atomic("add")
atomic_min = _atomic("min")
atomic_max = _atomic("max")
atomic_and = _atomic("and")
atomic_or = _atomic("or")
atomic_xor = _atomic("xor")
atomic_exchange = _atomic("exchange")


# ---------------------------------------------------------------- variables

class Var:
    """frit.var(init, dtype=None): inside a kernel a register of the kernel point; outside a
    value that host loops carry. v.get() reads it, v.set(x) assigns; a Var is also an operand."""
    __slots__ = ("_k", "_kid", "_a", "dtype", "shape", "__weakref__")
    __array_priority__ = 200

    def get(self):
        """The current value (inside a kernel: a read at this point of the program)."""
        k = self._k
        if k is not None:
            kk = _need_kernel("frit.var get")
            if kk is not k:
                raise k.closed_error()
            out = [None]
            t = k._run(("vget", out, self))
            out[0] = k._knode(t, self.dtype)
            return _wrap(out[0])
        return _fresh(self._a)

    def set(self, value):
        """Assigns value (converted to the var's dtype, broadcast to its shape)."""
        k = self._k
        if k is not None:
            kk = _need_kernel("frit.var set")
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


def var(init, dtype=None):
    """A variable: inside frit.kernel a register of each kernel point (init converted to dtype);
    outside kernels a value (0-d or n-d) that host loops carry. v.set(x), v.get(), or use v as an
    operand (reads it)."""
    dt = None if dtype is None else D.dtype(dtype)
    v = Var.__new__(Var)
    k = _kernel
    if k is not None:
        init_n = _scalar_operand(init, "frit.var", dt)
        dt = dt or init_n.dtype
        v._k, v._a, v.dtype, v.shape = k, None, dt, ()
        v._kid = k._run(("var", v, dt.code, init_n))
        return v
    if isinstance(init, Var):
        init = init.get()
    a = _fresh(A.asarray(init, dt))
    v._k, v._kid, v._a, v.dtype, v.shape = None, -1, a, a.dtype, a.shape
    return v


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
    if _kernel is not None:
        return _KernelLoop(start, end, step)
    return _HostLoopCtx(start, end, step)


class _KernelLoop:
    def __init__(self, start, end, step):
        self.args = [_scalar_operand(v, "frit.loop") for v in (start, end, step)]

    def __enter__(self):
        global _last_if
        _last_if = None
        k = _need_kernel("frit.loop")
        self.k = k
        out = [None]
        t = k._run(("loop", out) + tuple(self.args))
        out[0] = k._knode(t, D.int64)
        return _wrap(out[0])

    def __exit__(self, et, ev, tb):
        if et is not None:
            return False
        self.k._run(("endloop",))
        return False


class _HostLoopCtx:
    def __init__(self, start, end, step):
        self.args = [_loop_bound(v) for v in (start, end, step)]

    def __enter__(self):
        global _last_if
        _last_if = None
        sc = _HostLoop(S.current(), *self.args)
        self.sc = sc
        sc.prev_rec = A._rec
        _host.append(sc)
        A._rec = sc
        return _wrap(sc.i_node)

    def __exit__(self, et, ev, tb):
        global _last_if
        _last_if = None
        sc = self.sc
        _host.pop()
        A._rec = sc.prev_rec
        if et is not None:
            sc.open = False
            _restore(sc.log)
            return False
        sc.finish()
        return False


def _loop_bound(v):
    if isinstance(v, Var):
        v = v._value()
    if isinstance(v, A.Array):
        if v.ndim != 0 or v.dtype.kind not in "iu":
            raise FritError("frit.loop: start, end and step are integer scalars, got a %s array "
                            "of shape %s" % (v.dtype, v.shape))
        return v._n
    if _is_int(v):
        return _const(int(v), D.int64)
    raise FritTypeError("frit.loop: start, end and step are ints or 0-d integer arrays, got %r"
                        % (v,))


class _HostLoop:
    """A host loop: records its body's nodes, then builds LOOP with the carried Arrays."""
    kernel = False

    def __init__(self, sess, start, end, step):
        self.sess = sess
        self.open = True
        self.body = []
        self.body_set = set()
        self.log = {}
        self.skip = None
        self.stop = None
        self.bounds = (start, end, step)
        self.cache = {}
        lo, hi = -(2 ** 62), 2 ** 62
        if all(_is_const(n) for n in self.bounds):
            a, b = int(start.scalar), int(end.scalar)
            lo, hi = min(a, b), max(a, b)
        name = "_frit_loop%d" % next(_loop_ids)
        u = sess.check(fn["frit_var"](sess.ptr, name.encode(), lo, hi), "frit.loop")
        t = sess.check(fn["frit_tensor_of"](sess.ptr, u), "frit.loop")
        # the index of the recording pass: replaced by the loop's own index when built
        self.i_node = _new_node(sess, t, None, D.int64, (), True, self)

    def record(self, n):
        self.body.append(n)
        self.body_set.add(n)

    def value_error(self):
        return FritTypeError(
            "a value computed in a frit.loop body changes from iteration to iteration: Python "
            "cannot read it while the loop is built (bool/int/float/printing); use frit.if_ and "
            "frit.where, or read the arrays the loop updates after it")

    def closed_error(self):
        return FritError("a value computed inside a frit.loop body is only valid in that body; "
                         "to keep it, write it into an array or frit.var made before the loop "
                         "(a[...] = value, v.set(value))")

    def finish(self):
        bs = self.body_set
        carried = []
        for arr, old in self.log.values():
            if old in bs or old is self.i_node or arr._n is old:
                continue
            carried.append((arr, old))
        outer = _innermost_loop()
        if outer is not None:
            outer.body_set |= bs
            outer.body_set.add(self.i_node)
        if not carried:
            self.open = False
            return
        inits = [old for _, old in carried]
        if len(set(inits)) != len(inits):
            raise FritError("frit.loop: two arrays updated in the loop share one value; make one "
                            "of them a .copy() before the loop")
        self.inits = inits
        self.nexts = [arr._n for arr, _ in carried]
        stop = self.stop._n if self.stop is not None else None
        self.stop_node = stop
        # inputs of the recipe: values from outside the body, in first-use order
        ext, ext_list = set(), []

        def use(n):
            if n in bs or n is self.i_node or _is_const(n) or n in ext:
                return
            ext.add(n)
            ext_list.append(n)

        for n in self.bounds:
            use(n)
        for n in inits:
            use(n)
        for b in self.body:
            if b.np is None:
                for o in b.expr[1]:
                    use(o)
        for n in self.nexts:
            use(n)
        if stop is not None:
            use(stop)
        # concrete body values (frit.zeros(...) made in the body) are inputs too
        for b in self.body:
            if b.np is not None and not _is_const(b) and b not in ext:
                ext.add(b)
                ext_list.append(b)
        self.ext_list = ext_list
        sess = self.sess
        ts = []
        for n in ext_list:
            if n.np is None and n.sess is not sess:
                n.sess.realize([n])
            ts.append(A._tensor_of(n, sess))
        self.open = False
        recipe = self
        try:
            key = self.sig()
            recipe = _RECIPES.get(key)
            if recipe is None:
                if len(_RECIPES) >= _CACHE_MAX * 4:
                    _RECIPES.clear()
                recipe = _RECIPES[key] = self
        except TypeError:  # an unhashable parameter: no sharing
            recipe = self
        results = recipe.build(sess.ptr, ts)
        abstract = any(n.abstract for n in ext_list)
        nodes = []
        for j, (arr, old) in enumerate(carried):
            nodes.append(_new_node(sess, results[j], (_b_loop_out, ext_list, (recipe, j)),
                                   old.dtype, old.shape, abstract))
        for arr, old in carried:
            arr._n = old
        for (arr, old), node in zip(carried, nodes):
            rebind(arr, node)

    def build(self, ctx, ts):
        key = (ctx, tuple(ts))
        r = self.cache.get(key)
        if r is None:
            r = self._replay(ctx, ts)
            if len(self.cache) >= _CACHE_MAX:
                self.cache.clear()
            self.cache[key] = r
        return r

    def sig(self):
        s = getattr(self, "_sig", None)
        if s is not None:
            return s
        bidx = {n: j for j, n in enumerate(self.body)}
        eidx = {n: j for j, n in enumerate(self.ext_list)}

        def ref(n):
            if n is self.i_node:
                return ("i",)
            if _is_const(n):
                return _const_sig(n)
            j = bidx.get(n)
            if j is not None and n.np is None:
                return ("b", j)
            return ("e", eidx[n])

        body = tuple(_const_sig(b) if _is_const(b) else ("L", eidx[b]) if b.np is not None
                     else _expr_sig(b, ref) for b in self.body)
        s = self._sig = ("loop", len(self.ext_list), tuple(ref(n) for n in self.bounds),
                         tuple(ref(n) for n in self.inits), tuple(ref(n) for n in self.nexts),
                         None if self.stop_node is None else ref(self.stop_node), body)
        return s

    def _replay(self, ctx, ts):
        ext = dict(zip(self.ext_list, ts))
        memo = {}

        def T(n):
            t = memo.get(n)
            if t is not None:
                return t
            if _is_const(n):
                t = memo[n] = _const_tensor(ctx, n)
                return t
            t = ext.get(n)
            if t is None:
                raise FritError("frit.loop: a value from another loop body is used here; values "
                                "computed in a loop body are only valid in that body")
            return t

        k = len(self.inits)
        inits = [T(n) for n in self.inits]
        a, b, s = [T(n) for n in self.bounds]
        index = _p()
        carry = (_p * k)()
        _status(ctx, fn["frit_host_loop_begin"](ctx, a, b, s, k, _ptrs(inits), C.byref(index),
                                                carry), "frit.loop")
        memo[self.i_node] = index.value
        for j, n in enumerate(self.inits):
            memo[n] = carry[j]
        try:
            for n in self.body:
                if n.np is not None:
                    continue
                build, ops, params = n.expr
                memo[n] = _check(ctx, build(ctx, [T(o) for o in ops], *params), "frit.loop")
            nexts = [T(n) for n in self.nexts]
            stop = T(self.stop_node) if self.stop_node is not None else None
        except Exception:
            msg = (fn["frit_error"](ctx) or b"").decode(errors="replace")
            res = (_p * k)()
            fn["frit_host_loop_end"](ctx, carry, None, res)
            fn["frit_clear_error"](ctx)
            if msg:
                raise FritError("frit.loop (building the body): %s" % msg)
            raise
        res = (_p * k)()
        _status(ctx, fn["frit_host_loop_end"](ctx, _ptrs(nexts), stop, res), "frit.loop")
        return [res[j] for j in range(k)]


def _b_loop_out(ctx, ts, recipe, j):
    return recipe.build(ctx, ts)[j]


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
        global _last_if
        k = _kernel
        self.k = k
        if k is not None:
            if self.is_else:
                if not k.pending:
                    raise FritError("frit.else_: must directly follow a frit.if_ block")
                k._run(("else",))
                k.pending = False  # the if's end now comes at the else_ block's exit (H7)
                return None
            _last_if = None
            c = _scalar_operand(self.cond, "frit.if_")
            k._run(("if", c))
            return None
        if self.is_else:
            li = _last_if
            tok = _context_token()
            if li is None or any(x is not y for x, y in zip(li[0][1:], tok[1:])) or \
                    li[0][0] != tok[0]:
                raise FritError("frit.else_: must directly follow a frit.if_ block")
            cond = A._ops.logical_not(li[1])
        else:
            cond = _bool_cond(self.cond, "frit.if_")
        _last_if = None
        self.sc = _HostIf(cond)
        _host.append(self.sc)
        return None

    def __exit__(self, et, ev, tb):
        global _last_if
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
        _host.pop()
        if et is not None:
            _restore(sc.log)
            _last_if = None
            return False
        where = A._ops.where
        for arr, old in sc.log.values():
            if arr._n is not old:
                arr._n = where(sc.cond, _wrap(arr._n), _wrap(old))._n
        _last_if = None if self.is_else else (_context_token(), sc.cond)
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
    return (len(_host), _host[-1] if _host else None, f)


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
    for sc in _host:
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
    global _last_if
    k = _kernel
    if k is not None:
        k._run((kind,))
        return
    loop = _innermost_loop()
    if loop is None:
        raise FritError("frit.%s_: not inside a frit.loop" % kind)
    _last_if = None
    O = A._ops
    path = _host_path(loop)
    if path is None:
        path = A.asarray(True)
    if kind == "break":
        brk = path if loop.skip is None else O.logical_and(path, O.logical_not(loop.skip))
        loop.stop = brk if loop.stop is None else O.logical_or(loop.stop, brk)
    loop.skip = path if loop.skip is None else O.logical_or(loop.skip, path)


# ---------------------------------------------------------------- kernel entry point, indices

def kernel(shape, name=None):
    """`with frit.kernel(shape, name=None) as idx:` an explicit kernel over the index space
    `shape` (an int, a tuple of ints, or an array whose shape is used, symbolic dims included).
    idx is the index for an int shape, else a tuple of indices (kernel scalars, int64). The body
    runs once per point, in an unspecified order; within a point, in program order."""
    return _KernelCtx(shape, name)


def _b_indices(ctx, ts, dims, axis):
    nd = len(dims)
    if ts:
        ds = [fn["frit_tensor_dim"](ts[0], a) for a in range(nd)]
    else:
        ds = [fn["frit_const_int"](ctx, L.I64, d) for d in dims]
    if L.has("frit_indices"):
        out = (_p * max(1, nd))()
        if fn["frit_indices"](ctx, nd, _ptrs(ds), out) != 0:
            return None
        return out[axis]
    # composition (a library without frit_indices): arange along the axis, broadcast
    one = fn["frit_const_int"](ctx, L.I64, 1)
    x = fn["frit_arange"](ctx, 0.0, float(dims[axis]), 1.0, L.I64) if not ts else None
    if x is None:
        ones = fn["frit_full_sym"](ctx, L.I64, 1, _ptrs([ds[axis]]), 1.0)
        x = fn["frit_cumsum"](ctx, ones, L.NO_AXIS) if ones else None
        x = fn["frit_binary_t"](ctx, L.BF["sub"], x, fn["frit_tensor_of"](ctx, one)) if x else None
    if not x:
        return None
    shp = [one] * nd
    shp[axis] = ds[axis]
    x = fn["frit_reshape_sym"](ctx, x, nd, _ptrs(shp))
    return fn["frit_broadcast_to_sym"](ctx, x, nd, _ptrs(ds)) if x else None


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
        sess._programs.clear()  # programs compiled under the old policy (the ctx still owns them)


def get_bounds():
    """The bounds policy of eager code (see set_bounds)."""
    return {v: k for k, v in L.BOUNDS.items()}[S.current().opts.bounds]
