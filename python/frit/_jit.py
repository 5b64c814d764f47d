"""frit.jit: traces a Python function once per signature with abstract (duck-sized symbolic)
arrays, compiles the traced graph with frit_compile and replays it from a per-signature cache.

Signature key: the pytree structure of the arguments, the values of static arguments (static_argnums,
static_argnames and every Python scalar), and per array leaf its dtype and shape pattern: with
dynamic=True the rank, the dims of STATIC_DIM_MAX (4) or less, and which other dims are equal to
each other (each other size becomes a DEFINE_VAR shared by all dims of that size, bound at call
time); with dynamic=False the concrete shape. Small dims are compiled as constants: they are the
fixed sizes of coordinates, colour channels and kernel windows, and a size-3 axis known to be 3
is unrolled and fused (an n-body step's (N, 3) positions: one kernel instead of two that
materialise N x N distances); a program called with several small sizes compiles once each. A cache hit is a dict lookup, binding the variables, an empty array per output (outputs of
1 MiB or more reuse freed buffers: frit._outpool) and one frit_program_run call: everything else is precomputed when the signature is first seen.

donate_argnums: the array leaves of those positional arguments give their memory to outputs of
the same shape and dtype (the output at the same pytree path first, then the first free one;
frit_program_donate; frit._donate), so a step that updates state allocates nothing for it. After
the call a donated frit Array refers to the new value (its output, until that is donated in
turn), a donated numpy array holds it, and any other reference to the old value (a lazy
expression built from it and not yet evaluated) raises a FritError when used. See
docs/training.md "In-place updates".
"""
import ctypes as C
import functools
import operator
import os
import sys
import threading

import numpy as np

from . import _array as A
from . import _dtypes as D
from . import _lib as L
from . import _session as S
from . import _bounds as B
from . import _donate as DN
from . import _outpool
from ._errors import FritError, FritTypeError

_p = C.c_void_p
lib = L.lib
lib.frit_program_print.restype = C.c_int
lib.frit_program_print.argtypes = [_p, C.c_char_p, C.c_int, _p]
_run_at = L.run_at
_output_shape = L.fn["frit_program_output_shape"]
_required_memory = L.fn["frit_program_required_memory"]
_input = L.fn["frit_input"]
_input_sym = L.fn["frit_input_sym"]
_tensor_ndim = L.fn["frit_tensor_ndim"]
_tensor_dim = L.fn["frit_tensor_dim"]
_tensor_dim_static = L.fn["frit_tensor_dim_static"]

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
_Array = A.Array
_ndarray = np.ndarray
_wrap = A._wrap
_concrete_node = A._concrete_node
_np_empty = _outpool.empty  # large outputs reuse freed buffers (no page faults)
_BY_NP = {d.value: d for d in D.ALL if d is not D.bfloat16}
_LEAF = DN.LEAF  # treedef of an array leaf
_WEAK = (bool, int, float)

# dims of this size or less are part of a dynamic signature (see the module docstring)
STATIC_DIM_MAX = S.STATIC_DIM_MAX


_data_ptr = S._data_ptr


# ---------------------------------------------------------------- pytrees

def _flatten(x, leaves):
    """treedef of x; appends array leaves to `leaves`. Containers: tuple, list, dict (sorted
    keys), namedtuple; arrays: frit/numpy arrays, numpy scalars, objects with __array__; every
    other value (Python scalars, None, strings ...) is static and part of the treedef."""
    t = type(x)
    if t is _ndarray or t is _Array:
        leaves.append(x)
        return _LEAF
    if t is tuple or t is list:
        return (t, tuple([_flatten(e, leaves) for e in x]))
    if t is dict:
        try:
            keys = tuple(sorted(x))
        except TypeError:
            raise FritTypeError("jit: dict keys must be sortable, got %r" % (list(x),)) from None
        return (dict, keys, tuple([_flatten(x[k], leaves) for k in keys]))
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return (t, tuple([_flatten(e, leaves) for e in x]))
    if t in _WEAK or x is None:
        return ("s", t, x)
    if isinstance(x, (_ndarray, np.generic, _Array)) or hasattr(x, "__array__"):
        leaves.append(x)
        return _LEAF
    try:
        hash(x)
    except TypeError:
        raise FritTypeError("jit: argument of type %s is neither an array, a container of "
                            "arrays nor a hashable static value" % t.__name__) from None
    return ("s", t, x)


def _unflatten(tree, it):
    if tree is _LEAF:
        return next(it)
    tag = tree[0]
    if tag == "s":
        return tree[2]
    if tag == "S":
        return tree[2]
    if tag is dict:
        return {k: _unflatten(c, it) for k, c in zip(tree[1], tree[2])}
    if tag is tuple:
        return tuple([_unflatten(c, it) for c in tree[1]])
    if tag is list:
        return [_unflatten(c, it) for c in tree[1]]
    return tag(*[_unflatten(c, it) for c in tree[1]])  # namedtuple


# ---------------------------------------------------------------- user frames

def _user_frame(tb=None):
    """'file:line' of the innermost frame outside the frit package: of the traceback `tb`, or
    of the current stack."""
    found = None
    if tb is not None:
        while tb is not None:
            f = tb.tb_frame.f_code.co_filename
            if not os.path.abspath(f).startswith(_PKG_DIR + os.sep):
                found = "%s:%d" % (f, tb.tb_lineno)
            tb = tb.tb_next
        return found
    f = sys._getframe(1)
    while f is not None:
        if not os.path.abspath(f.f_code.co_filename).startswith(_PKG_DIR + os.sep):
            return "%s:%d" % (f.f_code.co_filename, f.f_lineno)
        f = f.f_back
    return None


def _annotate(e, fn_name):
    """Adds where in the user's traced function a FritError happened (once)."""
    if getattr(e, "_frit_where", False):
        return
    where = _user_frame(e.__traceback__)
    msg = str(e.args[0]) if e.args else str(e)
    msg += "\n  while tracing %s%s" % (fn_name, " at " + where if where else "")
    e.args = (msg,) + tuple(e.args[1:])
    e._frit_where = True


# ---------------------------------------------------------------- compiled entries

class Kernel:
    """One kernel of a compiled program: name, the frontend ops fused into it, launch dims."""
    __slots__ = ("name", "ops", "launch")

    def __init__(self, name, ops, launch):
        self.name, self.ops, self.launch = name, ops, launch

    def __repr__(self):
        return "Kernel(%s, ops=%s, launch=%s)" % (self.name, ",".join(self.ops), self.launch)


class _Entry:
    """What a cache hit needs for one signature: the program, where each program input comes
    from, the variable bindings, how to size each output and the output pytree."""
    __slots__ = ("prog", "ptr", "arg_slots", "consts", "ins", "outs", "bind", "nbind",
                 "bvals", "dynamic", "out_specs", "out_tree", "out_static", "static_out", "nout",
                 "sess", "arg_dtypes", "shape_buf", "ndim_buf", "checks", "guards", "lock",
                 "donate", "donate_slots", "fn_name", "tomb", "at")

    def run(self, leaves, sizes, objs=None):
        """leaves: the argument arrays (numpy storage, C-contiguous); sizes: the duck-size values
        in variable order; objs: the argument leaves as passed (for donation). Returns the output
        pytree of frit Arrays. The binding and pointer arrays and the program's run state are per
        entry: one thread at a time (the lock)."""
        with self.lock:
            return self._run(leaves, sizes, objs)

    def _run(self, leaves, sizes, objs=None):
        if self.nbind:
            bv = self.bvals
            j = 1
            for v in sizes:
                bv[j] = v
                j += 2
        ins = self.ins
        for slot, li in self.arg_slots:
            ins[slot] = _data_ptr(leaves[li])
        use = DN.usable(self.donate_slots, ins, leaves) if self.donate else None
        outs = []
        optr = self.outs
        k = 0
        for spec, storage, dt in self.out_specs:
            if spec is None:
                shape = self._query_shape(k)
            elif spec.__class__ is list:
                shape = [d if d >= 0 else sizes[-d - 1] for d in spec]
            else:
                shape = spec
            if use and k in use:
                o = use[k]
                optr[k] = None  # NULL: into the donated input's memory
            else:
                o = _np_empty(shape, storage)
                optr[k] = _data_ptr(o)
            outs.append(_wrap(_concrete_node(o, dt)))
            k += 1
        if self.nout:
            st = _run_at(self.ptr, *self.at, self.nbind)
            if use:
                DN.retire(self, leaves, objs, use, None if st else outs, _Array)
            if st:
                raise self.sess.error("run")
            for k, (exc, msg) in self.checks:
                if outs[k]._n.np:
                    raise exc(msg)
            if self.guards:  # index checks computed with the outputs (frit._bounds)
                g = self.guards
                B.raise_failed([o._n.np for o in outs[len(outs) - len(g):]], g)
        if self.static_out:
            return self.out_static
        if self.out_tree is _LEAF:
            return outs[0]
        return _unflatten(self.out_tree, iter(outs))

    def _query_shape(self, k):
        st = _output_shape(self.ptr, k, self.bind, self.nbind, C.byref(self.ndim_buf),
                           self.shape_buf)
        if st:
            raise self.sess.error("output_shape")
        return tuple(self.shape_buf[:self.ndim_buf.value])


class Compiled:
    """The compiled form of a jitted function for one signature (from f.lower(*args)):
    kernels, generated C source, the IR of each pipeline stage, memory needs, and __call__."""

    def __init__(self, jitted, entry, sizes):
        self._jitted, self._entry, self._sizes = jitted, entry, tuple(sizes)
        p = entry.ptr
        n = L.fn["frit_program_num_kernels"](p)
        dec = lambda s: (s or b"").decode()  # noqa: E731
        self.kernels = [Kernel(dec(L.fn["frit_program_kernel_name"](p, k)),
                               [o for o in dec(L.fn["frit_program_kernel_ops"](p, k)).split(",") if o],
                               dec(L.fn["frit_program_kernel_launch"](p, k)))
                        for k in range(n)]

    @property
    def source(self):
        """The generated C source of the program (one translation unit)."""
        with self._entry.lock:  # may run codegen in the function's ctx
            return (L.fn["frit_program_source"](self._entry.ptr) or b"").decode()

    def ir(self, stage="kernel", kernel=-1):
        """The program at a pipeline stage: 'tensor', 'kernel', 'optimized', 'linear' (also
        'plan', 'source'); for one kernel index or all (-1)."""
        e = self._entry
        st = []
        with e.lock:
            text = S.capture_file(lambda f: st.append(
                lib.frit_program_print(e.ptr, str(stage).encode(), int(kernel), f)))
        if st and st[0]:
            raise e.sess.error("ir")
        return text

    @property
    def required_memory(self):
        """Bytes of intermediate memory for the shapes this was lowered with."""
        e = self._entry
        with e.lock:
            b = e.bind
            if e.nbind:
                for i, v in enumerate(self._sizes):
                    b[i].value = v
            n = C.c_size_t()
            if _required_memory(e.ptr, b, e.nbind, C.byref(n)):
                raise e.sess.error("required_memory")
            return n.value

    @property
    def dynamic(self):
        """True when the code serves every size of this signature (symbolic dims); False when
        it was traced for the concrete shapes (dynamic=False, or the function needed them)."""
        return self._entry.dynamic

    @property
    def info(self):
        """Compiler, flags, cache and whether the code was compiled now or found in a cache."""
        with self._entry.lock:
            return self._entry.prog.info()

    @property
    def donated(self):
        """(argument leaf, output, in place) of each donation: leaves and outputs numbered in
        flattened order; in place False means each call stages the output and copies it into
        the donated memory (a kernel reads the input after the output is written)."""
        return list(self._entry.donate)

    def __call__(self, *args, **kwargs):
        return self._jitted(*args, **kwargs)

    def __repr__(self):
        return "Compiled(%s, %d kernels)" % (self._jitted.__name__, len(self.kernels))


# ---------------------------------------------------------------- the jitted function

class Jitted:
    """A function compiled by frit.jit. Call it like the function; f.lower(*args) gives the
    Compiled object; f.trace_count / f.compile_count count traces and frit_compile calls."""

    def __init__(self, fn, static_argnums=(), static_argnames=(), dynamic=True, bounds=None,
                 donate_argnums=(), device=None):
        if not callable(fn):
            raise FritTypeError("jit: %r is not callable" % (fn,))
        if device is not None and device not in L.DEVICES:
            raise FritError("jit: device must be one of %s, not %r" % (", ".join(L.DEVICES), device))
        self._device = device
        if bounds is not None and bounds not in L.BOUNDS:
            raise FritError("jit: bounds must be one of %s, not %r" % (", ".join(L.BOUNDS), bounds))
        self._bounds = bounds
        if isinstance(static_argnums, int):
            static_argnums = (static_argnums,)
        if isinstance(static_argnames, str):
            static_argnames = (static_argnames,)
        try:
            self._static = frozenset(operator.index(i) for i in static_argnums)
        except TypeError:
            raise FritTypeError("jit: static_argnums must be an int or a sequence of ints") from None
        self._static_names = frozenset(static_argnames)
        if isinstance(donate_argnums, int):
            donate_argnums = (donate_argnums,)
        try:
            self._donate = frozenset(operator.index(i) for i in donate_argnums)
        except TypeError:
            raise FritTypeError("jit: donate_argnums must be an int or a sequence of ints") from None
        if self._donate & self._static:
            raise FritTypeError("jit: arguments %s are both static and donated"
                                % sorted(self._donate & self._static))
        if any(i < 0 for i in self._donate):
            raise FritTypeError("jit: donate_argnums must be non-negative, got %s" % sorted(self._donate))
        self._fn = fn
        self._dynamic = bool(dynamic)
        self._fast = self._dynamic and not self._static
        self._cache = {}
        self._sess = None
        self._lock = threading.RLock()
        self.trace_count = 0
        self.fallback_count = 0  # signatures traced with static shapes after a dynamic failure
        self._ntrace_names = 0
        functools.update_wrapper(self, fn)

    # ---- statistics
    @property
    def compile_count(self):
        """frit_compile calls made for this function (one per distinct traced graph)."""
        return self._sess.stats["compiles"] if self._sess else 0

    @property
    def cc_count(self):
        """C translation units compiled for this function (not found in the compile caches)."""
        return self._sess.stats["cc"] if self._sess else 0

    def clear_cache(self):
        self._cache.clear()

    # ---- signature
    def _signature(self, args, kwargs):
        """(key, leaves as numpy storage arrays, duck sizes, treedef, leaf dtypes); None when an
        argument is an abstract array (a jitted function called while tracing: inline it)."""
        leaves = []
        static = self._static
        trees = []
        for i, a in enumerate(args):
            t = type(a)
            if i in static:
                try:
                    hash(a)
                except TypeError:
                    raise FritTypeError("jit: static argument %d of type %s is not hashable"
                                        % (i, t.__name__)) from None
                trees.append(("S", t, a))
            elif t is _ndarray or t is _Array:
                leaves.append(a)
                trees.append(_LEAF)
            else:
                trees.append(_flatten(a, leaves))
        if kwargs:
            names = self._static_names
            kt = []
            for k in sorted(kwargs):
                v = kwargs[k]
                if k in names:
                    try:
                        hash(v)
                    except TypeError:
                        raise FritTypeError("jit: static argument %r of type %s is not hashable"
                                            % (k, type(v).__name__)) from None
                    kt.append((k, ("S", type(v), v)))
                else:
                    kt.append((k, _flatten(v, leaves)))
            trees.append(("kw", tuple(kt)))
        key = list(trees)
        sizes = {}
        data = []
        dts = []
        dynamic = self._dynamic
        for a in leaves:
            t = type(a)
            if t is _Array:
                n = a._n
                if n.np is None:
                    if n.abstract or n.expr is None:
                        return None
                    a._realize()
                dt = n.dtype
                arr = n.np
            else:
                if t is not _ndarray:
                    if isinstance(a, _Array):
                        dt, arr, a = a._n.dtype, a._realize(), None
                    else:
                        try:
                            a = np.asarray(a)
                        except Exception as ex:  # noqa: BLE001 - any conversion failure
                            raise FritTypeError("jit: cannot convert argument of type %s to an "
                                                "array: %s" % (type(a).__name__, ex)) from None
                if a is not None:
                    dt = _BY_NP.get(a.dtype)
                    if dt is None and a.dtype.kind in "biuf" and not a.dtype.isnative:
                        a = a.astype(a.dtype.newbyteorder("="))
                        dt = _BY_NP.get(a.dtype)
                    if dt is None:
                        raise FritTypeError("jit: argument of numpy dtype %s is not supported by "
                                            "frit (supported: %s)" % (a.dtype, ", ".join(
                                                d.name for d in D.ALL if d is not D.bfloat16)))
                    arr = a if a.flags.c_contiguous else np.ascontiguousarray(a)
            data.append(arr)
            dts.append(dt)
            key.append(dt.code)
            shape = arr.shape
            if dynamic:
                key.append(len(shape))
                for s in shape:
                    if s <= STATIC_DIM_MAX:
                        key.append(s)
                    else:
                        j = sizes.get(s)
                        if j is None:
                            j = sizes[s] = len(sizes)
                        key.append(-1 - j)
            else:
                key.append(shape)
        return tuple(key), data, list(sizes), trees, dts, leaves

    def __call__(self, *args, **kwargs):
        if self._fast and not kwargs:
            # the common cache hit: positional concrete arrays, dynamic shapes (builds the same
            # key as _signature)
            key = [_LEAF] * len(args)
            data = []
            sizes = {}
            for a in args:
                t = type(a)
                if t is _ndarray:
                    dt = _BY_NP.get(a.dtype)
                    if dt is None or not a.flags.c_contiguous:
                        break
                elif t is _Array:
                    n = a._n
                    a = n.np
                    if a is None:
                        break
                    dt = n.dtype
                else:
                    break
                data.append(a)
                shape = a.shape
                key.append(dt.code)
                key.append(len(shape))
                for d in shape:
                    if d <= STATIC_DIM_MAX:
                        key.append(d)
                    else:
                        j = sizes.get(d)
                        if j is None:
                            j = sizes[d] = len(sizes)
                        key.append(-1 - j)
            else:
                e = self._cache.get(tuple(key))
                if e is not None and e.__class__ is not dict:
                    return e.run(data, list(sizes), args)
        sig = self._signature(args, kwargs)
        if sig is None:  # called inside another trace: trace through
            return self._fn(*args, **kwargs)
        key, data, sizes, trees, dts, objs = sig
        e = self._cache.get(key)
        if e is None:
            e = self._trace(key, data, sizes, trees, dts)
        if e.__class__ is dict:  # this signature only traces with static shapes
            e = self._static_entry(e, data, trees, dts)
        return e.run(data, sizes, objs)

    def lower(self, *args, **kwargs):
        """Traces and compiles for these arguments (without running): a Compiled object."""
        sig = self._signature(args, kwargs)
        if sig is None:
            raise FritError("jit: lower() called with traced arrays")
        key, data, sizes, trees, dts, _ = sig
        e = self._cache.get(key)
        if e is None:
            e = self._trace(key, data, sizes, trees, dts)
        if e.__class__ is dict:
            e = self._static_entry(e, data, trees, dts)
        return Compiled(self, e, sizes)

    # ---- tracing
    def _session(self):
        if self._sess is None:
            self._sess = S.Session(bounds=self._bounds, device=self._device)
            self._sess.index_bounds = self._bounds  # numpy-style indexing too (frit._bounds)
        return self._sess

    def _trace(self, key, data, sizes, trees, dts):
        """The cache entry of a new signature: an _Entry, or (when the function cannot be traced
        with symbolic dims) a dict concrete shapes -> _Entry of static traces."""
        with self._lock:
            e = self._cache.get(key)
            if e is not None:
                return e
            if len(self._cache) >= JIT_CACHE_MAX:
                # bounded: start over in a new ctx (the old one is freed with its last entry)
                self._cache = {}
                self._sess = None
            with self._session().lock:
                return self._trace_new(key, data, sizes, trees, dts)

    def _trace_new(self, key, data, sizes, trees, dts):
        """_trace for a key not in the cache (both locks held)."""
        if not self._dynamic:
            e = self._cache[key] = self._trace_locked(data, sizes, trees, dts, False)
            return e
        try:
            e = self._trace_locked(data, sizes, trees, dts, True)
        except Exception:  # noqa: BLE001 - retried with static shapes, which re-raises
            # e.g. a closure constant of shape (3,) next to a symbolic dim, or shape
            # arithmetic on x.shape (None for symbolic dims): trace per concrete shape
            self.fallback_count += 1
            e = self._trace_locked(data, [], trees, dts, False)
            self._cache[key] = {tuple([a.shape for a in data]): e}
            return self._cache[key]
        self._cache[key] = e
        return e

    def _static_entry(self, fb, data, trees, dts):
        skey = tuple([a.shape for a in data])
        e = fb.get(skey)
        if e is None:
            with self._lock, self._session().lock:
                e = fb.get(skey)
                if e is None:
                    if len(fb) >= JIT_CACHE_MAX:
                        fb.clear()
                    e = fb[skey] = self._trace_locked(data, [], trees, dts, False)
        return e

    def _trace_locked(self, data, sizes, trees, dts, dynamic):
        sess = self._session()
        sp = sess.ptr
        self.trace_count += 1
        tag = self._ntrace_names
        self._ntrace_names += 1
        # duck-size variables, in the order of `sizes`
        vars_ = [sess.var("n%d" % j) for j in range(len(sizes))] if dynamic else []
        var_index = {v: j for j, v in enumerate(vars_)}
        size_index = {s: j for j, s in enumerate(sizes)}
        tracers = []
        input_leaf = {}
        for li, (arr, dt) in enumerate(zip(data, dts)):
            name = "a%d_%d" % (tag, li)
            if dynamic:
                dims = [sess.const_i64(s) if s <= STATIC_DIM_MAX else vars_[size_index[s]] for s in arr.shape]
                t = _input_sym(sp, name.encode(), dt.code, len(dims), (_p * max(1, len(dims)))(*dims))
                shape = tuple(s if s <= STATIC_DIM_MAX else None for s in arr.shape)
            else:
                t = _input(sp, name.encode(), dt.code, arr.ndim, L._i64arr(arr.shape))
                shape = arr.shape
            tracers.append(_Array._lazy(sess, sess.check(t), dt, shape, abstract=True))
            input_leaf[name] = li
        it = iter(tracers)
        targs = []
        kw = {}
        for tr in trees:
            if type(tr) is tuple and tr and tr[0] == "kw":
                kw = {k: _unflatten(c, it) for k, c in tr[1]}
            else:
                targs.append(_unflatten(tr, it))
        fn_name = getattr(self._fn, "__qualname__", None) or repr(self._fn)
        outer_checks = sess.trace_checks
        sess.trace_checks = []
        sess.guards = []
        try:
            with sess.as_current():
                out = self._fn(*targs, **kw)
                out_leaves = []
                out_tree = _flatten(out, out_leaves)
                out_ts = []
                out_nodes = []
                for o in out_leaves:
                    if not isinstance(o, _Array):
                        o = A.asarray(o)
                    n = o._n
                    if n.np is None and n.sess is not sess:
                        o._realize()
                    out_ts.append(o._tensor(sess))
                    out_nodes.append(n)
                nuser = len(out_ts)
                # run-time failure flags (frit.linalg): extra outputs after the user's
                checks = []
                for flag, exc in sess.trace_checks:
                    checks.append((len(out_ts), exc))
                    out_ts.append(flag._tensor(sess))
                    out_nodes.append(flag._n)
                guards = sess.guards
                sess.guards = []
                for g, _, _ in guards:  # extra outputs (last), checked after each run
                    out_ts.append(g._tensor(sess))
                    out_nodes.append(g._n)
        except FritError as ex:
            _annotate(ex, fn_name)
            raise
        finally:
            sess.trace_checks = outer_checks
        e = _Entry()
        e.sess = sess
        e.checks = tuple(checks)
        e.lock = sess.lock
        e.dynamic = dynamic
        e.out_tree = out_tree
        e.nout = len(out_ts)
        e.static_out = not nuser
        e.guards = [(None, op, axis) for _, op, axis in guards]
        e.out_static = _unflatten(out_tree, iter(())) if not out_ts else None
        e.donate = e.donate_slots = ()
        e.fn_name = fn_name
        e.tomb = None
        e.arg_dtypes = dts
        nb = len(vars_)
        e.bind = (L.Binding * max(1, nb))()
        for j in range(nb):
            e.bind[j].name = ("n%d" % j).encode()
        e.nbind = nb
        e.bvals = (C.c_int64 * (2 * max(1, nb))).from_buffer(e.bind)  # [name ptr, value] pairs
        e.shape_buf = (C.c_int64 * L_MAX_DIMS)()
        e.ndim_buf = C.c_int()
        if not out_ts:
            e.prog = None
            e.ptr = None
            e.ins = e.outs = None
            e.arg_slots = ()
            e.out_specs = ()
            e.consts = []
            return e
        try:
            prog = sess.compile(out_ts)
        except FritError as ex:
            _annotate(ex, fn_name)
            raise
        e.prog, e.ptr = prog, prog.ptr
        names = prog.input_names
        e.ins = (_p * max(1, len(names)))()
        e.outs = (_p * max(1, len(out_ts)))()
        e.at = (C.addressof(e.ins), C.addressof(e.outs), C.addressof(e.bind))  # for run_at
        slots = []
        consts = []
        for slot, nm in enumerate(names):
            li = input_leaf.get(nm)
            if li is not None:
                slots.append((slot, li))
                continue
            node = sess.leaf_inputs.get(nm)
            if node is None or node.np is None:
                raise FritError("internal: jit program input %r has no data" % nm)
            consts.append(node)  # a captured constant: keep its data alive with the entry
            e.ins[slot] = _data_ptr(node.np)
        e.arg_slots = tuple(slots)
        e.consts = consts
        specs = []
        for t, n in zip(out_ts, out_nodes):
            spec = []
            for ax in range(_tensor_ndim(t)):
                d = _tensor_dim_static(t, ax)
                if d >= 0:
                    spec.append(d)
                    continue
                j = var_index.get(_tensor_dim(t, ax))
                if j is None:
                    spec = None
                    break
                spec.append(-1 - j)
            if spec is not None:  # all static: a ready tuple; with variables: filled per call
                spec = spec if any(d < 0 for d in spec) else tuple(spec)
            specs.append((spec, n.dtype.storage, n.dtype))
        e.out_specs = tuple(specs)
        e.donate = DN.declare(prog, self._donate, trees, data, dts, sizes, slots, specs, nuser, out_tree) \
            if self._donate else ()
        slot_of = {li: slot for slot, li in slots}
        e.donate_slots = tuple((li, k, slot_of[li]) for li, k, _ in e.donate)
        e.tomb = DN.Donated(fn_name)
        return e

    def __repr__(self):
        return "frit.jit(%s)" % getattr(self._fn, "__qualname__", self._fn)

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)


L_MAX_DIMS = 16
# Signatures a jitted function keeps (each holds a program in the function's ctx); past it the
# cache and the ctx start over, so a function called with ever new static shapes stays bounded.
JIT_CACHE_MAX = 256


def jit(fn=None, *, static_argnums=(), static_argnames=(), dynamic=True, bounds=None, donate_argnums=(),
        device=None):
    """Compiles `fn` on first call per signature (decorator or call: frit.jit(f),
    @frit.jit, @frit.jit(static_argnums=1)). dynamic=True: dims over 4 are symbolic, so
    new sizes reuse the compiled code; dynamic=False: one compilation per concrete shape.
    bounds: out-of-range indices in explicit kernels, "clamp" / "check" / "unchecked" (None: the
    frit.set_bounds setting when first traced). donate_argnums: positional arguments whose arrays
    outputs of the same shape and dtype may overwrite (see the module docstring). device: where
    the kernels run, "cpu" or "opencl" (None: $FRIT_DEVICE, else the host); arguments and results
    stay host arrays, copied to and from the device around each call."""
    if fn is None:
        return lambda f: Jitted(f, static_argnums, static_argnames, dynamic, bounds, donate_argnums, device)
    return Jitted(fn, static_argnums, static_argnames, dynamic, bounds, donate_argnums, device)
