"""Explicit kernels from Python (frit.kernel, element reads and stores, atomics, per-point
loops): the kernel body is built live in C and recorded as an instruction list, so that the
written Arrays can be rebuilt on other input tensors (eager realisation replays graphs).
Part of frit._control (shared state and helpers live there)."""
import ctypes as C

from . import _array as A
from . import _dtypes as D
from . import _lib as L
from . import _session as S
from . import _control as K
from ._control import (_chain, _status, _error, _check, _is_int, _const, _is_const, _const_tensor,
                      _new_node, _wrap, _scalar_operand, _value_node, _shape_spec, _const_sig,
                      _expr_sig, Var, rebind, ATOMIC, _p, fn, _ptrs)
from ._errors import FritError, FritTypeError


def kernel_open():
    return K._T.kernel is not None


def _need_kernel(what):
    k = K._T.kernel
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
        if K._T.kernel is not None:
            raise FritError("frit.kernel: kernels do not nest (a kernel is already open)")
        K._T.last_if = None
        dims, like, single = self.spec
        k = _Kernel(S.current(), self.name)
        idx = k.begin(dims, like)
        K._T.kernel = self.k = k
        if single:
            return idx[0]
        return tuple(idx)

    def __exit__(self, et, ev, tb):
        k = self.k
        K._T.kernel = None
        K._T.last_if = None
        if et is not None:
            k.abort()
            return False
        k.end()
        return False


class _Kernel(K._Recipe):
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
            S.realize_nodes([n])
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
        _chain([n for _, n in results], self.ext_list, self.sess)
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
            if v < 0 and d is None:
                raise FritError("%s: the negative index %d on axis %d counts from the end of a "
                                "traced (symbolic) dim; write it as arr.shape-based arithmetic in "
                                "the kernel or use a static shape" % (what, v, a))
            if v < 0:
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
    k = K._T.kernel
    if arr._n.scope is k:
        return None
    ok, has_k = _is_element_index(arr, idx)
    if ok:
        return k.load(arr, idx)
    if has_k:
        raise FritError("element read: inside frit.kernel an element is addressed by one scalar "
                        "index per axis (array of shape %s, index %r)" % (arr.shape, idx))
    return None


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


class _KernelLoop:
    def __init__(self, start, end, step):
        self.args = [_scalar_operand(v, "frit.loop") for v in (start, end, step)]

    def __enter__(self):
        K._T.last_if = None
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


# ---------------------------------------------------------------- entry point


def kernel(shape, name=None):
    """`with frit.kernel(shape, name=None) as idx:` an explicit kernel over the index space
    `shape` (an int, a tuple of ints, or an array whose shape is used, symbolic dims included).
    idx is the index for an int shape, else a tuple of indices (kernel scalars, int64). The body
    runs once per point, in an unspecified order; within a point, in program order."""
    return _KernelCtx(shape, name)
