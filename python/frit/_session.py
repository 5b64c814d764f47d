"""Sessions: a frit_ctx holding the lazy graphs of arrays, duck-sized realisation, program cache.

Internal API (what frit._jit, frit._indexing and frit.random build on)
----------------------------------------------------------------------
Session()                    owns a frit_ctx (`.ptr`). `current()` is the session new lazy ops
                             and creation functions use; `with sess.as_current(): ...` makes
                             `sess` current (jit tracing does this). `Session(cache_dir=..,
                             threads=.., interpret=..)` sets frit_compile_opts.
sess.check(ptr, what)        returns ptr, or raises FritError with the C message if it is NULL.
sess.error(what)             the FritError for the ctx's last failure.
sess.var(name, lo, hi)       a DEFINE_VAR i64 node (frit_var).
sess.const_i64(v)            an i64 CONST node (for symbolic dim lists).
sess.compile(out_ptrs)       -> Program (cached on the tuple of output tensor pointers: hash-consing
                             makes equal graphs equal pointers, so a hit is one dict lookup).
                             Counts sess.stats["compiles"] (frit_compile calls), ["hits"] and
                             ["cc"] (C translation units compiled now, not found in any cache).
Program.input_names          program input order (frit_input tensors reachable, creation order).
Program.run(inputs, vars, out_shapes, out_dtypes, in_ptrs=None) -> numpy storage arrays.
                             inputs: numpy arrays in storage dtype, C-contiguous, program order;
                             vars: {name: int}; out_shapes: concrete shapes of the outputs.
sess.realize(nodes)          evaluates lazy nodes (see _array.Node) together in one program;
                             frit.realize(*arrays) is the public form.
sess.stats                   {"compiles", "hits", "cc", "realize"} counters (tests use them).

Arrays (frit._array)
  Array._lazy(sess, tensor_ptr, dtype=None, shape=None, abstract=True) -> Array around a
                             tensor built by the caller (a jit tracer input: abstract arrays
                             cannot be realised); shape/dtype are read from C if not given
                             (symbolic dims are None).
  Array._concrete(np_storage_array, DType) -> Array around data (no copy).
  arr._tensor(sess=None)     -> frit_tensor* of the array in sess (current() if None): lazy arrays
                             give their node; concrete arrays a static frit_input named "c<id>"
                             (sess.leaf_inputs[name] is a weakref to the node, so jit can bind the
                             data), weak Python scalars a CONST.
  _array.apply(build, operands, params=()) -> Array. build(ctx_ptr, [tensor ptrs], *params) must
                             return a tensor pointer (NULL: error) and be replayable (a pure
                             function of its arguments): realisation rebuilds the graph.
  _array.operand(x) / operands2(a, b) / weak_scalar(v, dtype): operand conversion (Python
                             scalars are weak per NEP 50: they take the other operand's dtype).
  If a graph cannot be built on duck-sized dims (e.g. a reshape to fixed sizes, conv channels),
  realisation retries with static dims (then that program serves only these shapes).
  dtype objects: frit._dtypes (DType.code: C code, .storage/.value: numpy dtypes; dtype(spec)).

Realisation (design): lazy ops are built immediately on *static* inputs (C checks and infers
shapes). To realise, the graph is rebuilt ("replayed") with canonical inputs: the k-th distinct
concrete leaf becomes input "x<k>" whose dims are duck-sized -- 0 and 1 static, every other size a
DEFINE_VAR "n<j>" shared by all dims of that size (bounds 2..2**20; larger dims: "N<j>",
2**20+1..2**31-1). The canonical graph of
`a*b+c` is then the same pointer for every size, and the program cache hits. Weak scalars are 0-d
inputs in the canonical graph, so `x * i` in a loop reuses one program too.
Memory: a long-lived ctx grows with every op; `current()` starts a new session once the ctx holds
more than NODE_LIMIT nodes; the old ctx is freed when no array refers to it any more.
"""
import contextlib
import itertools
import ctypes as C
import re
import weakref

import numpy as np

from . import _lib as L
from ._errors import FritError

lib = L.lib
fn = L.fn
_p = C.c_void_p

# ---------------------------------------------------------------- extra C declarations
lib.frit_node_count.restype = C.c_size_t
lib.frit_node_count.argtypes = [_p]
lib.frit_program_info.restype = C.c_int
lib.frit_program_info.argtypes = [_p, _p]
_libc = C.CDLL(None)
_libc.open_memstream.restype = _p
_libc.open_memstream.argtypes = [C.POINTER(C.c_char_p), C.POINTER(C.c_size_t)]
_libc.fclose.argtypes = [_p]
_libc.free.argtypes = [_p]

_ctx_new = fn["frit_ctx_new"]
_ctx_free = fn["frit_ctx_free"]
_error = fn["frit_error"]
_clear_error = fn["frit_clear_error"]
_compile = fn["frit_compile"]
_run = fn["frit_program_run"]
_input_sym = fn["frit_input_sym"]
_const_int = fn["frit_const_int"]
_var = fn["frit_var"]

NODE_LIMIT = 4_000_000
DEFAULT_BOUNDS = "clamp"  # frit_compile_opts.bounds of new sessions (frit.set_bounds)
VAR_LO, VAR_HI = 2, 2 ** 31 - 1  # products of two dims stay in i64 range analysis
# Realisation buckets dims: up to SMALL_HI a variable "n<j>" bounded by it (so range analysis of
# a product of three dims, a flatten, stays within i64), above it "N<j>" up to VAR_HI.
SMALL_HI = 2 ** 20
_BIG = 1 << 20
_DUMMY = np.zeros(8, np.uint64)  # stands in for the NULL data pointer of size-0 arrays
_DUMMY_PTR = _DUMMY.ctypes.data


def _data_ptr(a):
    return a.ctypes.data if a.size else _DUMMY_PTR


def node_ptr(n):
    """Data pointer of a concrete node (cached: computing it costs microseconds)."""
    p = n.dptr
    if p is None:
        p = n.dptr = _data_ptr(n.np)
    return p


def capture_file(write):
    """Calls write(FILE*) and returns what it wrote (open_memstream)."""
    buf, size = C.c_char_p(), C.c_size_t()
    f = _libc.open_memstream(C.byref(buf), C.byref(size))
    if not f:
        return ""
    try:
        write(f)
    finally:
        _libc.fclose(f)
    text = C.string_at(buf, size.value).decode(errors="replace") if buf else ""
    _libc.free(buf)
    return text


class Program:
    """A compiled program of a session (freed with the session's ctx)."""
    __slots__ = ("sess", "ptr", "input_names", "nout", "slot_of_input", "bind", "bind_names",
                 "code_status", "__weakref__")

    def __init__(self, sess, ptr):
        self.sess, self.ptr = sess, ptr
        n = fn["frit_program_num_inputs"](ptr)
        self.input_names = [fn["frit_program_input_name"](ptr, i).decode() for i in range(n)]
        self.nout = fn["frit_program_num_outputs"](ptr)
        self.slot_of_input = None  # realisation: program input i -> canonical slot
        self.bind = None
        self.bind_names = None
        self.code_status = None

    def info(self):
        return capture_file(lambda f: lib.frit_program_info(self.ptr, f))

    def _bindings(self, vars):
        names = tuple(vars)
        if names != self.bind_names:
            self.bind = (L.Binding * max(1, len(names)))()
            for i, k in enumerate(names):
                self.bind[i].name = k.encode()
            self.bind_names = names
        b = self.bind
        for i, v in enumerate(vars.values()):
            b[i].value = v
        return b, len(names)

    def run(self, inputs, vars, out_shapes, out_dtypes, in_ptrs=None):
        """inputs: C-contiguous numpy storage arrays in program input order (or in_ptrs: their
        data pointers); vars: {name: int}; out_shapes/out_dtypes: per output (numpy storage
        dtypes). Returns the output arrays."""
        outs = [np.empty(s, d) for s, d in zip(out_shapes, out_dtypes)]
        if in_ptrs is None:
            in_ptrs = [_data_ptr(a) for a in inputs]
        ins = (_p * max(1, len(in_ptrs)))(*in_ptrs)
        os_ = (_p * max(1, len(outs)))(*[_data_ptr(a) for a in outs])
        b, nb = self._bindings(vars)
        st = _run(self.ptr, ins, os_, b, nb)
        if st:
            raise self.sess.error("run")
        return outs


class Session:
    """One frit_ctx and what lives in it: lazy graphs, canonical inputs, compiled programs."""

    def __init__(self, cache_dir=None, threads=0, interpret=False, no_fusion=False, cc=None,
                 cflags=None, bounds=None):
        if bounds is not None and bounds not in L.BOUNDS:
            raise FritError("Session: bounds must be one of %s, not %r"
                            % (", ".join(L.BOUNDS), bounds))
        self.ptr = _ctx_new()
        if not self.ptr:
            raise MemoryError("frit_ctx_new failed")
        enc = lambda s: s.encode() if s is not None else None  # noqa: E731
        self.opts = L.CompileOpts(enc(cc), enc(cflags), enc(cache_dir), int(threads),
                                  int(no_fusion), int(interpret),
                                  L.BOUNDS[bounds or DEFAULT_BOUNDS])
        self._programs = {}
        self._canon = {}     # (slot, dtype code, dimspec) -> canonical input tensor
        self._vars = {}      # duck-size variable -> DEFINE_VAR node "n<j>" / "N<j>"
        self._consts = {}
        self.leaf_inputs = weakref.WeakValueDictionary()  # "c<id>" -> concrete leaf node
        self.stats = {"compiles": 0, "hits": 0, "cc": 0, "realize": 0}
        self.sid = next(_sids)
        # while frit.jit traces: [(0-d bool Array, (exception class, message))], compiled as
        # hidden outputs and raised after every call whose flag is set
        # (frit.linalg numerical failures); None otherwise
        self.trace_checks = None

    # ---- lifetime
    def close(self):
        if self.ptr:
            self._programs.clear()
            _ctx_free(self.ptr)
            self.ptr = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    @contextlib.contextmanager
    def as_current(self):
        global _current
        old = _current
        _current = self
        try:
            yield self
        finally:
            _current = old

    def node_count(self):
        return lib.frit_node_count(self.ptr)

    # ---- errors and small builders
    def error(self, what=None):
        msg = (_error(self.ptr) or b"").decode(errors="replace") or "unknown error"
        _clear_error(self.ptr)
        return FritError(msg if what is None or msg.startswith(what) else msg)

    def check(self, ptr, what=None):
        if not ptr:
            raise self.error(what)
        return ptr

    def var(self, name, lo=VAR_LO, hi=VAR_HI):
        return self.check(_var(self.ptr, name.encode(), lo, hi), "var")

    def const_i64(self, v):
        u = self._consts.get(v)
        if u is None:
            u = self._consts[v] = self.check(_const_int(self.ptr, L.I64, v))
        return u

    # ---- compile
    def compile(self, outputs):
        """Program computing the tensors `outputs` (sequence of pointers); cached per graph."""
        key = tuple(outputs)
        p = self._programs.get(key)
        if p is not None:
            self.stats["hits"] += 1
            return p
        arr = (_p * max(1, len(key)))(*key)
        ptr = _compile(self.ptr, arr, len(key), C.byref(self.opts))
        self.stats["compiles"] += 1
        if not ptr:
            raise self.error("compile")
        p = Program(self, ptr)
        m = re.search(r"^code: \S+ \(([^)]*)\)", p.info(), re.M)
        p.code_status = m.group(1) if m else None
        if p.code_status == "compiled now":
            self.stats["cc"] += 1
        self._programs[key] = p
        return p

    # ---- canonical (duck-sized) inputs
    def _size_var(self, k):
        """Duck-size variable k (k >= _BIG: a large dim, variable "N<j>")."""
        v = self._vars.get(k)
        if v is None:
            if k >= _BIG:
                v = self.var("N%d" % (k - _BIG), SMALL_HI + 1, VAR_HI)
            else:
                v = self.var("n%d" % k, VAR_LO, SMALL_HI)
            self._vars[k] = v
        return v

    def _canon_input(self, slot, code, dimspec):
        key = (slot, code, dimspec)
        t = self._canon.get(key)
        if t is None:
            dims = [self._size_var(-d - 1) if d < 0 else self.const_i64(d) for d in dimspec]
            arr = (_p * max(1, len(dims)))(*dims)
            t = self.check(_input_sym(self.ptr, ("x%d" % slot).encode(), code, len(dims), arr))
            self._canon[key] = t
        return t

    def _replay(self, nodes, static):
        """Builds the canonical graph of nodes: returns (output tensors, leaves, {size: var})."""
        memo = {}
        leaves = []
        sizes = {}
        ptr = self.ptr
        canon = self._canon

        def visit(n):
            t = memo.get(n)
            if t is not None:
                return t
            if n.np is not None:  # a concrete leaf: canonical input number len(leaves)
                spec = []
                for s in n.np.shape:
                    if s <= 1 or static:
                        spec.append(s)
                    else:
                        j = sizes.get(s)
                        if j is None:
                            j = sizes[s] = len(sizes)
                        spec.append(-j - 1 if s <= SMALL_HI else -j - 1 - _BIG)
                key = (len(leaves), n.dtype.code, tuple(spec))
                t = canon.get(key)
                if t is None:
                    t = self._canon_input(*key)
                leaves.append(n)
            elif n.expr is None:
                raise n.abstract_error()
            else:
                build, ops, params = n.expr
                t = build(ptr, [visit(o) for o in ops], *params)
                if not t:
                    raise self.error()
            memo[n] = t
            return t

        return [visit(n) for n in nodes], leaves, sizes

    def realize(self, nodes):
        """Evaluates the lazy nodes (frit._array.Node) in one program; afterwards each holds its
        data (node.np) and has dropped its expression."""
        nodes = [n for n in nodes if n.np is None]
        if not nodes:
            return
        for n in nodes:
            if n.sess is not self:
                raise FritError("internal: realising a node of another session")
            if n.expr is None:
                raise n.abstract_error()
        try:
            outs, leaves, sizes = self._replay(nodes, False)
        except FritError:
            # an op needs static dims (a reshape to fixed sizes, conv channels ...): this graph
            # is compiled for these shapes
            outs, leaves, sizes = self._replay(nodes, True)
        prog = self.compile(outs)
        if prog.slot_of_input is None:
            prog.slot_of_input = [int(nm[1:]) for nm in prog.input_names]
        vars = {(_VAR_NAMES[j] if j < 64 else "n%d" % j) if s <= SMALL_HI else "N%d" % j: s
                for s, j in sizes.items()}
        ptrs = [node_ptr(leaves[k]) for k in prog.slot_of_input]
        res = prog.run(None, vars, [n.shape for n in nodes], [n.dtype.storage for n in nodes], ptrs)
        self.stats["realize"] += 1
        for n, r in zip(nodes, res):
            n.np = r
            n.dptr = None
            n.expr = None
            n.sess = None  # concrete now: it no longer keeps the ctx alive
            n.t = None


_VAR_NAMES = ["n%d" % j for j in range(64)]
_current = None
_sids = itertools.count(1)


def current():
    """The session that creation functions and ops on concrete arrays use."""
    global _current
    s = _current
    if s is None or (s.ptr and lib.frit_node_count(s.ptr) > NODE_LIMIT):
        s = _current = Session()
    return s


def new_session(**opts):
    """Replaces the current session (e.g. with compile options); returns it."""
    global _current
    _current = Session(**opts)
    return _current
