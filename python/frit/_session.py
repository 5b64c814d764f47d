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
  A single node realised again with the same signature (signature(): builders, parameters,
  structure, leaf dtypes and shapes) skips the replay: pc._fast keeps its program, input order
  and bindings (_FastEntry).
  dtype objects: frit._dtypes (DType.code: C code, .storage/.value: numpy dtypes; dtype(spec)).

Realisation (design): lazy ops are built immediately on *static* inputs (C checks and infers
shapes). To realise, the graph is rebuilt ("replayed") with canonical inputs: the k-th distinct
concrete leaf becomes input "x<k>" whose dims are duck-sized -- 0 and 1 static, every other size a
DEFINE_VAR "n<j>" shared by all dims of that size (bounds 2..2**20; larger dims: "N<j>",
2**20+1..2**31-1). The canonical graph of
`a*b+c` is then the same pointer for every size, and the program cache hits. Weak scalars are 0-d
inputs in the canonical graph, so `x * i` in a loop reuses one program too.
Threads and memory (docs/python.md, "Sessions, threads and memory"): every thread has its own
current session (threading.local), made on first use, so threads never share an eager ctx. An eager
session is split in two ctxs: the *graph* ctx holds the static graphs lazy ops build (shape and
dtype inference; most of it is garbage once arrays are realised) and the *program cache* (`.pc`,
a Session of its own) holds the canonical replays and the compiled programs. `current()` starts
a new graph generation once the graph ctx holds NODE_LIMIT nodes (not while a kernel or host-loop
scope is open), carrying the program cache over (it is replaced only past PC_NODE_LIMIT nodes or
PC_PROGRAM_LIMIT programs); lazy arrays of the previous generation keep building in it, older
ones are realised when used, and a generation is freed when no lazy array refers to it. A lazy array of another session (another
thread's, or an older generation) is realised by replaying its recipe into the caller's own
program cache, so no thread ever touches another thread's eager ctx. Sessions shared between
threads (a jitted function's) are used under their `lock`.
"""
import contextlib
import itertools
import ctypes as C
import re
import struct
import threading
import types
import weakref

import numpy as np

from . import _outpool
from . import _lib as L
from ._errors import FritError
from ._profile import P as _PROF, note as _prof_note

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
_run_at = L.run_at
_input_sym = fn["frit_input_sym"]
_const_int = fn["frit_const_int"]
_var = fn["frit_var"]

# Graph nodes of an eager generation (about 200 bytes each, 3-5 per eager op): a new generation
# costs little more than a frit_ctx_new, so it is kept small for a flat process size (two are
# alive: the current one and the one before).
NODE_LIMIT = 16_384
# The program cache is replaced (its programs compiled again, from the disk cache) only when it
# is this large: canonical graphs are shared by every size, so it grows with distinct programs.
PC_NODE_LIMIT = 200_000
PC_PROGRAM_LIMIT = 512
DEFAULT_BOUNDS = "clamp"  # frit_compile_opts.bounds of new sessions (frit.set_bounds)
VAR_LO, VAR_HI = 2, 2 ** 31 - 1  # products of two dims stay in i64 range analysis
# Realisation buckets dims: up to SMALL_HI a variable "n<j>" bounded by it (so range analysis of
# a product of three dims, a flatten, stays within i64), above it "N<j>" up to VAR_HI.
SMALL_HI = 2 ** 20
# Dims of this size or less are compiled as constants under frit.jit: they are the fixed sizes
# of coordinates, colour channels and kernel windows, and a size-3 axis known to be 3 is unrolled
# and fused (an n-body step's (N, 3) positions: one kernel instead of two that materialise N x N
# distances). Eagerly, only inputs of EAGER_STATIC_MIN_ELEMS elements or more get them: there the
# fusion pays, and such inputs come in few shapes. Small inputs keep only sizes 0 and 1 static,
# so that a loop over many small shapes shares a few programs (with 4 for every input, the program
# cache of test_steady_memory.py's loop turned over and RSS grew 2.6-4.3 MiB where it was 1.2).
STATIC_DIM_MAX = 4
EAGER_STATIC_DIM_MAX = 1
EAGER_STATIC_MIN_ELEMS = 512
_BIG = 1 << 20
_DUMMY = np.zeros(8, np.uint64)  # stands in for the NULL data pointer of size-0 arrays
_DUMMY_PTR = _DUMMY.ctypes.data


def _data_ptr(a):
    """Address of a numpy array's data (a dummy for size 0): 0.3 us where a.ctypes.data takes 1."""
    try:
        return C.addressof(C.c_char.from_buffer(a))
    except (TypeError, ValueError):  # read-only or empty
        return a.__array_interface__["data"][0] if a.size else _DUMMY_PTR


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


# Builders whose graph is costly to build again at every realisation (a sort builds dozens of
# kernels) or not the same graph when built again (conv2d's gradient rule takes fresh copies of
# its inputs, so every eager conv compiled a program of its own): their replays are memoised
# per program cache by (builder, parameters, input tensors), which gives the same tensor, hence
# a program cache hit. Only builders that are pure functions of those are listed.
REPLAY_MEMO = set()


def _memo_key(build, params, ts):
    if build not in REPLAY_MEMO:
        return None
    key = (build, tuple(ts)) + tuple(tuple(p) if isinstance(p, C.Array) else p for p in params)
    try:
        hash(key)
    except TypeError:  # an unhashable parameter: no memo
        return None
    return key


# ---- the realisation fast path
# Eager code realises the same small graphs over and over (`(a + b).numpy()` in a loop). A replay
# costs a Python visit and a C build per node, then a program cache lookup: about half of a small
# realisation. A graph's *signature* (its builders, parameters, structure, and each leaf's dtype
# and shape) determines the whole replay, so the pc keeps, per signature, the program, the order
# of its inputs among the graph's leaves and ready bindings. Graphs past FAST_MAX_OPS nodes or
# FAST_MAX_LEAVES leaves replay: hashing their signature would cost about as much.
FAST_MAX_OPS = 64
FAST_MAX_LEAVES = 16
FAST_CACHE_MAX = 256  # signatures include shapes: a loop over many shapes would fill any size
_NO_SIG = False  # a node whose graph has no signature (an unkeyable parameter, an abstract node)
_UNKEYABLE = ("unkeyable",)  # (a tuple: `in` on a tuple of keys compares by == safely)
_FUNC_TYPES = (types.FunctionType, types.BuiltinFunctionType, types.MethodType)


def _param_key(p):
    """A parameter as a key that equals another only for a parameter the builder treats the same
    (1, 1.0 and True are equal in Python, and 0.0 equals -0.0); _UNKEYABLE when there is none."""
    t = type(p)
    if t is int or p is None:
        return p
    if t is float:
        return ("f", p.hex()) if p == p else ("f", struct.pack("<d", p))
    if t is bool or t is str or t is bytes:
        return (t.__name__, p)
    if t is tuple or t is list or isinstance(p, C.Array):
        ks = tuple([_param_key(x) for x in p])
        return _UNKEYABLE if _UNKEYABLE in ks else (t, ks)
    if t is complex:
        return ("c", _param_key(p.real), _param_key(p.imag))
    if isinstance(p, _FUNC_TYPES):
        return ("o", p)  # compared by identity; the key keeps it alive
    return _UNKEYABLE


def signature(n):
    """The signature of lazy node n's graph (cached in n.sig, its leaves in n.leaves), or
    _NO_SIG. An operand already concrete is a leaf: (its index among n.leaves, dtype code,
    shape); a lazy one is (its signature, where its leaves are among n.leaves). A signature
    computed before an operand was realised stays valid: it recomputes that operand from its own
    leaves, which hold the same data (in-place writes rebind an Array to a new node)."""
    s = n.sig
    if s is not None:
        return s
    e = n.expr
    if e is None:  # realised meanwhile, by another thread that shares it
        return _NO_SIG
    build, ops, params = e
    pk = params  # a tuple of ints (most builders) is its own key, unequal to every tagged one
    if type(params) is not tuple:
        pk = _param_key(params)
    else:
        for p in params:
            if type(p) is not int:
                pk = _param_key(params)
                break
    s = _NO_SIG
    if pk is not _UNKEYABLE:
        leaves, refs, where = [], [], {}  # where: id(leaf) -> its index in leaves
        for o in ops:
            if o.np is not None:
                i = where.get(id(o))
                if i is None:
                    i = where[id(o)] = len(leaves)
                    leaves.append(o)
                refs.append((i, o.dtype.code, o.np.shape))
                continue
            if o.abstract:
                break
            so = o.sig if o.sig is not None else signature(o)
            ols = o.leaves  # (None: realised meanwhile by another thread)
            if not so or ols is None:
                break
            at = []
            for m in ols:
                i = where.get(id(m))
                if i is None:
                    i = where[id(m)] = len(leaves)
                    leaves.append(m)
                at.append(i)
            refs.append((so, tuple(at)))
        else:
            if len(leaves) <= FAST_MAX_LEAVES:
                s = (build, pk, tuple(refs))
                n.leaves = tuple(leaves)
    n.sig = s
    return s


class _FastEntry:
    """What realising a graph of one signature needs besides its leaves' data."""
    __slots__ = ("prog", "order", "bind", "bind_at", "nb", "shape", "dtype", "pooled")

    def __init__(self, prog, order, vars, shape, dtype):
        self.prog, self.order, self.shape, self.dtype = prog, order, shape, dtype
        self.bind, self.nb = L._bindings(vars)
        self.bind_at = C.addressof(self.bind)
        nbytes = np.dtype(dtype).itemsize
        for d in shape:
            nbytes *= d
        self.pooled = nbytes >= _outpool.MIN_BYTES


class Program:
    """A compiled program of a session (freed with the session's ctx)."""
    __slots__ = ("sess", "ptr", "input_names", "nout", "slot_of_input", "bind", "bind_names",
                 "bind_at", "code_status", "ins", "outs", "ins_at", "outs_at", "__weakref__")

    def __init__(self, sess, ptr):
        self.sess, self.ptr = sess, ptr
        n = fn["frit_program_num_inputs"](ptr)
        self.input_names = [fn["frit_program_input_name"](ptr, i).decode() for i in range(n)]
        self.nout = fn["frit_program_num_outputs"](ptr)
        self.slot_of_input = None  # realisation: program input i -> canonical slot
        self.bind = None
        self.bind_names = None
        self.bind_at = None
        self.code_status = None
        self.ins = (_p * max(1, n))()  # the run call's pointer arrays, refilled at each run
        self.outs = (_p * max(1, self.nout))()
        self.ins_at, self.outs_at = C.addressof(self.ins), C.addressof(self.outs)

    def info(self):
        return capture_file(lambda f: lib.frit_program_info(self.ptr, f))

    def _bindings(self, vars):
        names = tuple(vars)
        if names != self.bind_names:
            self.bind = (L.Binding * max(1, len(names)))()
            for i, k in enumerate(names):
                self.bind[i].name = k.encode()
            self.bind_names = names
            self.bind_at = C.addressof(self.bind)
        b = self.bind
        for i, v in enumerate(vars.values()):
            b[i].value = v
        return len(names)

    def run(self, inputs, vars, out_shapes, out_dtypes, in_ptrs=None):
        """inputs: C-contiguous numpy storage arrays in program input order (or in_ptrs: their
        data pointers); vars: {name: int}; out_shapes/out_dtypes: per output (numpy storage
        dtypes). Returns the output arrays."""
        outs = [_outpool.empty(s, d) for s, d in zip(out_shapes, out_dtypes)]
        if in_ptrs is None:
            in_ptrs = [_data_ptr(a) for a in inputs]
        ins, os_ = self.ins, self.outs
        ins[:len(in_ptrs)] = in_ptrs
        os_[:len(outs)] = [_data_ptr(a) for a in outs]
        nb = self._bindings(vars)
        st = _run_at(self.ptr, self.ins_at, self.outs_at, self.bind_at, nb)
        if st:
            raise self.sess.error("run")
        return outs


class Session:
    """One frit_ctx and what lives in it: lazy graphs, canonical inputs, compiled programs."""

    def __init__(self, cache_dir=None, threads=0, interpret=False, no_fusion=False, cc=None,
                 cflags=None, bounds=None, pc=None, device=None):
        """pc: the program cache (a Session) of an eager graph session; None: a standalone
        session that compiles in its own ctx (jit)."""
        self.lock = threading.RLock()  # held by every thread using a shared session
        self.tick = 0  # current(): calls until the next look at the node count
        if pc is not None:
            self.ptr = _ctx_new()
            if not self.ptr:
                raise MemoryError("frit_ctx_new failed")
            self._pc, self.opts, self.stats, self._init_kw = pc, pc.opts, pc.stats, pc._init_kw
            self.leaf_inputs = weakref.WeakValueDictionary()
            self._consts, self._programs = {}, {}
            self.sid = next(_sids)
            return
        self._init_kw = dict(cache_dir=cache_dir, threads=threads, interpret=interpret,
                             no_fusion=no_fusion, cc=cc, cflags=cflags, bounds=bounds, device=device)
        self._pc = None  # not self: a cycle would leave freeing the ctx to the cyclic GC
        if bounds is not None and bounds not in L.BOUNDS:
            raise FritError("Session: bounds must be one of %s, not %r"
                            % (", ".join(L.BOUNDS), bounds))
        self.ptr = _ctx_new()
        if not self.ptr:
            raise MemoryError("frit_ctx_new failed")
        enc = lambda s: s.encode() if s is not None else None  # noqa: E731
        self.opts = L.CompileOpts(enc(cc), enc(cflags), enc(cache_dir), int(threads),
                                  int(no_fusion), int(interpret),
                                  L.BOUNDS[bounds or DEFAULT_BOUNDS], enc(device))
        self._programs = {}
        self._canon = {}     # (slot, dtype code, dimspec) -> canonical input tensor
        self._built = {}     # (build, params, input tensors) -> tensor, for REPLAY_MEMO builds
        self._fast = {}      # graph signature -> _FastEntry (the realisation fast path)
        self._vars = {}      # duck-size variable -> DEFINE_VAR node "n<j>" / "N<j>"
        self._consts = {}
        self.leaf_inputs = weakref.WeakValueDictionary()  # "c<id>" -> concrete leaf node
        self.stats = {"compiles": 0, "hits": 0, "cc": 0, "realize": 0}
        self.sid = next(_sids)
        # while frit.jit traces: [(0-d bool Array, (exception class, message))], compiled as
        # hidden outputs and raised after every call whose flag is set
        # (frit.linalg numerical failures); None otherwise
        self.trace_checks = None

    @property
    def pc(self):
        """The session whose ctx holds the programs: self, or an eager session's cache."""
        p = self._pc
        return self if p is None else p

    # ---- lifetime
    def close(self):
        if self.ptr:
            if self._pc is None:
                self._programs.clear()
                self._fast.clear()
            ptr, self.ptr = self.ptr, None
            for hook in close_hooks:  # caches keyed by ctx address forget it before it is reused
                hook(ptr)
            _ctx_free(ptr)

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    @contextlib.contextmanager
    def as_current(self):
        """Makes self the calling thread's current session (jit tracing holds self.lock)."""
        t = _tls
        old = t.current
        t.current = self
        try:
            yield self
        finally:
            t.current = old

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
        with self.lock:
            return self._compile_locked(key)

    def _compile_locked(self, key):
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
                small = STATIC_DIM_MAX if n.np.size >= EAGER_STATIC_MIN_ELEMS else EAGER_STATIC_DIM_MAX
                for s in n.np.shape:
                    if s <= small or static:
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
                ts = [visit(o) for o in ops]
                key = _memo_key(build, params, ts)
                t = None if key is None else self._built.get(key)
                if t is None:
                    t = build(ptr, ts, *params)
                    if not t:
                        raise self.error()
                    if key is not None:
                        self._built[key] = t
            memo[n] = t
            return t

        try:
            outs = [visit(n) for n in nodes]
            if _PROF.on:  # the canonical graph's nodes get their user sites too
                for n, t in memo.items():
                    s = getattr(n, "site", None)
                    if s is not None:
                        _prof_note(ptr, t, s)
            return outs, leaves, sizes
        finally:
            # visit refers to itself through its closure cell: a cycle that would keep the memo
            # (nodes, hence whole graph generations) alive until the cyclic GC runs
            visit = None  # noqa: F841

    def realize(self, nodes):
        """Evaluates the lazy nodes (frit._array.Node) in one program (in self's program cache,
        whichever session built them: replaying needs only their recipes); afterwards each holds
        its data (node.np) and has dropped its expression."""
        nodes = [n for n in nodes if n.np is None]
        if not nodes:
            return
        for n in nodes:
            if n.expr is None:
                raise n.abstract_error()
        pc = self.pc
        with pc.lock:
            pc._realize_locked(nodes)

    def _realize_locked(self, nodes):
        sig = None
        if len(nodes) == 1 and nodes[0].nops <= FAST_MAX_OPS and not _PROF.on:
            n = nodes[0]
            sig = n.sig if n.sig is not None else signature(n)
            if sig:
                e = self._fast.get(sig)
                if e is not None:
                    self._run_fast(n, e)
                    return
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
        if sig:
            self._remember(nodes[0], sig, prog, leaves, vars)
        for n, r in zip(nodes, res):
            _settle(n, r)

    def _remember(self, n, sig, prog, leaves, vars):
        """Keeps the fast path's entry for n's signature, when the replay's leaves are n's own
        (an operand realised since n's signature was taken would be a leaf of the replay)."""
        own = n.leaves  # (None: another thread sharing n has realised it meanwhile)
        if own is None or len(leaves) != len(own):
            return
        at = {id(o): i for i, o in enumerate(own)}
        perm = [at.get(id(m)) for m in leaves]
        if None in perm:
            return
        if len(self._fast) >= FAST_CACHE_MAX:
            self._fast.clear()
        order = tuple([perm[k] for k in prog.slot_of_input])
        self._fast[sig] = _FastEntry(prog, order, vars, n.shape, n.dtype.storage)

    def _run_fast(self, n, e):
        prog, own = e.prog, n.leaves
        if own is None:  # another thread sharing n has realised it meanwhile
            return
        prog.ins[:len(e.order)] = [own[i].dptr or node_ptr(own[i]) for i in e.order]
        r = _outpool.empty(e.shape, e.dtype) if e.pooled else np.empty(e.shape, e.dtype)
        prog.outs[0] = _data_ptr(r)
        if _run_at(prog.ptr, prog.ins_at, prog.outs_at, e.bind_at, e.nb):
            raise self.error("run")
        st = self.stats
        st["hits"] += 1
        st["realize"] += 1
        _settle(n, r)


def _settle(n, r):
    """Makes n concrete with its realised data r, unless another thread realised it meanwhile."""
    if n.np is not None:
        return
    n.np = r
    n.dptr = None
    n.expr = None
    n.leaves = None  # with them, `x = x * 0.5 + 1` in a loop kept every earlier x alive
    n.sess = None  # concrete now: it no longer keeps the ctx alive (n.t stays: a thread that
    # read n.np just before may still use it, in the ctx it is reading from)


_VAR_NAMES = ["n%d" % j for j in range(64)]
_TICKS = 16
_sids = itertools.count(1)
close_hooks = []  # functions of a ctx address, called before a session frees its ctx


class _TLS(threading.local):
    current = None  # the session new lazy ops use (the eager one, or a jit trace's)
    eager = None    # the thread's eager graph session
    prev = None     # the generation before it: lazy arrays still being built on keep using it


_tls = _TLS()


def _fresh_pc(old):
    return Session(**old._init_kw) if old is not None else Session()


def _next_generation(s):
    """A new eager graph generation after s, carrying its program cache over unless it is full."""
    pc = s.pc if s is not None else None
    if pc is None or (pc.ptr and (lib.frit_node_count(pc.ptr) > PC_NODE_LIMIT
                                  or len(pc._programs) > PC_PROGRAM_LIMIT)):
        pc = _fresh_pc(pc)
    return Session(pc=pc)


def current():
    """The calling thread's session that creation functions and ops on concrete arrays use."""
    t = _tls
    s = t.current
    if s is None:
        s = t.current = t.eager = _next_generation(None)
    elif s is t.eager:
        s.tick -= 1
        if s.tick < 0:  # the sizes are looked at every _TICKS calls (a C call costs ~0.2 us)
            s.tick = _TICKS
            if (lib.frit_node_count(s.ptr) > NODE_LIMIT
                    or len(s.pc._programs) > PC_PROGRAM_LIMIT) and not scope_open():
                t.prev = s
                s = t.current = t.eager = _next_generation(s)
    return s


# frit._control sets this: True while the thread has a kernel or host-loop scope open (their
# recorded nodes live in the current generation, so it is not replaced meanwhile)
scope_open = lambda: False  # noqa: E731


def current_or_none():
    return _tls.current


def eager():
    """The calling thread's eager session (not a jit trace's)."""
    t = _tls
    if t.eager is None or t.current is t.eager:
        return current()
    return t.eager


def own(sess):
    """True when the calling thread may build into sess: its current or eager session, or the
    generation before (a lazy expression built across a generation change stays one graph)."""
    t = _tls
    return sess is t.current or sess is t.eager or (sess is t.prev and sess is not None)


def realize_one(n):
    """realize_nodes([n]) for a lazy, realisable n (the common case, with less to do)."""
    s = n.sess
    t = _tls
    if not (s is t.current or s is t.eager or (s is t.prev and s is not None)):
        s = eager()
    pc = s.pc
    with pc.lock:
        if n.np is None:
            pc._realize_locked([n])


def realize_nodes(nodes):
    """Realises lazy nodes of any session: in their own session when it is the calling
    thread's, otherwise by replaying them into the thread's eager session."""
    groups = {}
    for n in nodes:
        if n.np is not None:
            continue
        if n.abstract or n.expr is None:
            raise n.abstract_error()
        s = n.sess if own(n.sess) else eager()
        groups.setdefault(id(s), (s, []))[1].append(n)
    for s, ns in groups.values():
        s.realize(ns)


def new_session(**opts):
    """Replaces the calling thread's current session (e.g. with compile options); returns it."""
    t = _tls
    t.current = t.eager = Session(pc=Session(**opts))
    t.prev = None
    return t.current
