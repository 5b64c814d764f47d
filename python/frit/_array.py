"""frit.Array: a concrete numpy buffer or a lazy node of a session's graph; operand conversion
(weak Python scalars per NEP 50), the generic lazy-op constructor `apply`, operators, methods.
An Array is a mutable wrapper: in-place writes rebind it to a new node (frit._control.rebind)."""
import itertools
import operator
import struct
import threading

import numpy as np

from . import _dtypes as D
from . import _lib as L
from . import _session as S
from ._donate import Donated as _Donated
from ._errors import FritError, FritTypeError
from ._profile import P as _PROF, site as _prof_site, note as _prof_note

fn = L.fn
_tensor_ndim = fn["frit_tensor_ndim"]
_tensor_dim_static = fn["frit_tensor_dim_static"]
_tensor_dtype = fn["frit_tensor_dtype"]
_input = fn["frit_input"]
_scalar_f = fn["frit_scalar_f"]
_scalar_i = fn["frit_scalar_i"]
_complex_t = fn["frit_complex_t"]
_BY_CODE = D.BY_CODE

# A lazy chain longer than this is realised as it is built (bounds graph size and the depth of
# the replay in long eager loops such as `x = x + 1` repeated).
MAX_CHAIN = 256
_leaf_ids = itertools.count()


def _abstract_error(node):
    sc = node.scope
    if sc is not None:
        return sc.value_error()
    return FritTypeError(
        "the value of a traced (abstract) array is not known while tracing: Python control flow "
        "(if/while/bool/int/float) on traced values is not supported; use frit.where for "
        "selections and frit.loop / frit.if_ for control flow, or mark the argument static "
        "(static_argnums)")


class Node:
    """The value behind an Array. Concrete: `np` holds the data (storage dtype, C-contiguous).
    Lazy: `expr` = (build, operand nodes, params) and `t` the tensor in session `sess`.
    Abstract (a jit tracer input): neither np nor expr. `tc` caches a concrete node's input
    tensor per session; `scalar` marks a weak Python scalar (a CONST when traced). `scope`: the
    frit._control scope a kernel scalar or host-loop body value belongs to (None: a plain value)."""
    __slots__ = ("np", "expr", "sess", "sid", "t", "shape", "dtype", "scalar", "nops",
                 "abstract", "dptr", "scope", "tc", "site", "sig", "leaves", "__weakref__")

    def __init__(self):
        self.np = self.expr = self.sess = self.t = self.scalar = self.dptr = self.scope = None
        self.sig = self.leaves = None  # the graph's signature and its leaves (frit._session.signature)
        self.tc = None  # a concrete node's input tensor: (session id, tensor), read in one go
        self.sid = 0
        self.nops = 0
        self.abstract = False

    def abstract_error(self):
        return _abstract_error(self)


def _concrete_node(data, dt, scalar=None):
    n = Node()
    n.np, n.shape, n.dtype, n.scalar = data, data.shape, dt, scalar
    rec = _S.rec
    if rec is not None:  # made inside a host-loop body: a body-local value
        rec.record(n)
    return n


class _Scopes(threading.local):
    # The calling thread's innermost open host-loop scope of frit._control (it records every
    # node made in its body), or None. Set by frit._control only.
    rec = None


_S = _Scopes()


def _shape_of(t):
    nd = _tensor_ndim(t)
    out = []
    for i in range(nd):
        d = _tensor_dim_static(t, i)
        out.append(None if d < 0 else d)
    return tuple(out)


def _lazy_node(sess, t, expr, dtype=None, shape=None):
    n = Node()
    n.sess, n.sid, n.t, n.expr = sess, sess.sid, t, expr
    n.dtype = dtype if dtype is not None else D.BY_CODE[_tensor_dtype(t)]
    n.shape = shape if shape is not None else _shape_of(t)
    return n


def _wrap(node):
    a = Array.__new__(Array)
    a._n = node
    return a


def _tensor_of(n, sess):
    """frit_tensor* of node n in session sess (see the module docstring of _session)."""
    if n.np is None:
        if n.sess is not sess:
            raise FritError("internal: lazy array of another session")
        return n.t
    c = n.tc  # one read: another thread may set it for its own session meanwhile
    if c is not None and c[0] == sess.sid:
        return c[1]
    if n.scalar is not None:
        t = scalar_tensor(sess.ptr, n.dtype, n.scalar)
    else:
        name = "c%d" % next(_leaf_ids)
        shp = n.np.shape
        t = _input(sess.ptr, name.encode(), n.dtype.code, len(shp), L._i64arr(shp))
        if t:
            sess.leaf_inputs[name] = n
    n.tc = (sess.sid, sess.check(t))
    return t


def scalar_tensor(ctx, dt, v):
    """A 0-d constant tensor of frit dtype dt and value v (complex: built from its parts)."""
    if dt.kind == "f":
        return _scalar_f(ctx, dt.code, float(v))
    if dt.kind == "c":
        pc = D.real_part(dt).code
        re, im = _scalar_f(ctx, pc, v.real), _scalar_f(ctx, pc, v.imag)
        return _complex_t(ctx, re, im) if re and im else None
    v = int(v)
    if v >= 2 ** 63:
        v -= 2 ** 64
    return _scalar_i(ctx, dt.code, v)


def apply(build, operands, params=()):
    """A lazy Array: build(ctx_ptr, [tensor per operand], *params) -> tensor pointer. Operands are
    Arrays. The graph is built at once (C validates and infers the shape) and replayed with
    duck-sized inputs on realisation, so `build` must be a pure function of its arguments."""
    nodes = [o._n for o in operands]
    sess = None
    tls = S._tls
    cur = tls.current
    nops = 1
    abstract = False
    kern = None
    for n in nodes:
        if n.np is None:
            if sess is None or n.sess is cur:
                sess = n.sess
            abstract = abstract or n.abstract
            nops += n.nops
            sc = n.scope
            if sc is not None:
                if not sc.open:
                    raise sc.closed_error()
                if sc.kernel:
                    kern = sc
    if sess is None:
        sess = S.current()
    else:
        if sess is not cur and sess is not tls.eager and sess is not tls.prev:
            # another thread's session or an old generation: never build into it
            sess = S.current()
        if len(nodes) > 1 or sess is not nodes[0].sess:
            foreign = [n for n in nodes if n.np is None and n.sess is not sess]
            if foreign:
                S.realize_nodes(foreign)  # raises for an abstract array of another session
    sid = sess.sid
    # a lazy node keeps its tensor after realisation (another thread may realise it meanwhile)
    ts = [n.t if n.np is None else
          c[1] if (c := n.tc) is not None and c[0] == sid else _tensor_of(n, sess)
          for n in nodes]
    t = build(sess.ptr, ts, *params)
    if not t:
        raise sess.error()
    node = Node.__new__(Node)
    node.np = node.scalar = node.dptr = node.tc = node.sig = node.leaves = None
    node.scope = kern
    node.sess, node.sid, node.t = sess, sid, t
    node.expr = (build, nodes, params)
    if _PROF.on:  # a profile records: the user's file:line names the kernels this op ends up in
        node.site = s = _prof_site()
        _prof_note(sess.ptr, t, s)
    node.dtype = _BY_CODE[_tensor_dtype(t)]
    nd = _tensor_ndim(t)
    if nd == 0:
        node.shape = ()
    else:
        shp = [_tensor_dim_static(t, i) for i in range(nd)]
        node.shape = tuple(shp) if min(shp) >= 0 else tuple(None if d < 0 else d for d in shp)
    node.abstract = abstract
    node.nops = nops
    if kern is not None:  # a kernel scalar: recorded in its kernel, never realised
        node.abstract = True
        kern.record_pure(node)
    elif _S.rec is not None:  # a value of a host-loop body: rebuilt per iteration
        rec = _S.rec
        node.abstract = True
        node.scope = rec
        rec.record(node)
    elif nops > MAX_CHAIN and not abstract:
        sess.realize([node])
        node.nops = 0
    a = Array.__new__(Array)
    a._n = node
    return a


# ---------------------------------------------------------------- conversion

def _from_numpy(a, dt=None):
    """Array around a numpy array: zero-copy when it is C-contiguous in a frit dtype."""
    if dt is None:
        dt = D.from_numpy(a.dtype)
        if dt is None:
            if a.dtype.kind in "OUSV":
                raise FritTypeError("cannot make a frit array from numpy dtype %s" % a.dtype)
            raise FritTypeError("numpy dtype %s is not supported by frit" % a.dtype)
    if dt is D.bfloat16:
        data = _bf16_bits(a)
    elif a.dtype == dt.storage and a.flags.c_contiguous:
        data = a
    else:
        with np.errstate(all="ignore"):
            data = np.ascontiguousarray(a, dtype=dt.storage)
    return _wrap(_concrete_node(data, dt))


def _bf16_bits(a):
    """values -> bf16 bit patterns, an ndarray of a's shape (rounded from float32)."""
    with np.errstate(all="ignore"):
        f = np.asarray(a, dtype=np.float32)
    return np.asarray(L.bf16_bits(f), dtype=np.uint16).reshape(f.shape)


def _py_dtype(x):
    """numpy's default dtype for a (nested) Python value."""
    try:
        a = np.asarray(x)
    except (ValueError, TypeError) as e:
        raise FritTypeError("cannot make a frit array from %r: %s" % (type(x).__name__, e)) from None
    return a


def asarray(x, dtype=None, copy=None):
    """frit array from an Array, numpy array, Python scalar or nested sequence (numpy's
    conversion rules). Zero-copy for C-contiguous numpy arrays of frit dtypes."""
    dt = None if dtype is None else D.dtype(dtype)
    if isinstance(x, Array):
        if dt is not None and dt is not x.dtype:
            return x.astype(dt)
        return x.copy() if copy else x
    if isinstance(x, (np.ndarray, np.generic)):
        a = np.asarray(x)
    elif hasattr(x, "__array__") or hasattr(x, "__dlpack__"):
        a = np.asarray(x)
    else:
        if isinstance(x, (list, tuple)) and any(isinstance(e, Array) for e in _flat(x)):
            from . import _ops
            return _ops.stack([asarray(e, dtype) for e in x]) if x else asarray([], dtype)
        a = _py_dtype(x)
        if dt is None and a.dtype.kind not in "biufc":
            raise FritTypeError("cannot make a frit array from %r" % (x,))
    if dt is not None and dt is not D.bfloat16 and a.dtype != dt.value:
        if a.dtype.kind not in "biufc":
            raise FritTypeError("cannot convert numpy dtype %s to %s" % (a.dtype, dt.name))
        if a.dtype.kind == "f" and dt.kind in "iu" and not isinstance(x, np.ndarray):
            pass
        with np.errstate(all="ignore"):
            a = a.astype(dt.value)
    r = _from_numpy(a, dt)
    if copy and r._n.np is a:
        r._n.np = a.copy()
    return r


def _flat(x):
    for e in x:
        if isinstance(e, (list, tuple)):
            yield from _flat(e)
        else:
            yield e


def weak_dtype(v, other):
    """NEP 50: the dtype a Python scalar takes next to an array of dtype `other`."""
    if isinstance(v, bool):
        return other
    if isinstance(v, int):
        return other if other.kind in "iufc" else D.int64
    if isinstance(v, float):
        return other if other.kind in "fc" else D.float64
    if isinstance(v, complex):
        return D.complex_of(other) if other.kind in "fc" else D.complex128
    raise FritTypeError("unsupported operand type %s" % type(v).__name__)


def _weak_scalar(v, other):
    """A Python scalar as a 0-d operand next to an array of dtype `other` (NEP 50: the scalar
    takes the array's dtype when the kinds allow; int8 + 300 raises OverflowError)."""
    dt = weak_dtype(v, other)
    if isinstance(v, int) and not isinstance(v, bool):
        if dt.kind in "iu":
            info = np.iinfo(dt.value)
            if v < info.min or v > info.max:
                raise OverflowError("Python integer %d out of bounds for %s" % (v, dt.name))
    if dt is D.bfloat16:
        data = _bf16_bits(np.float32(v))
    else:
        with np.errstate(all="ignore"):
            data = np.array(v, dt.value)
    if dt.kind == "f":
        sv = float(L.bf16_value(data)) if dt is D.bfloat16 else float(data)
    elif dt.kind == "c":
        sv = complex(data)
    else:
        sv = int(v)
    return _wrap(_concrete_node(data, dt, scalar=sv))


_WEAK = {}
_F64 = struct.Struct("<d")


def weak_scalar(v, other):
    """Cached _weak_scalar: loops reuse the node of a scalar (and its input tensor). Floats are
    keyed by their bits: -0.0 == 0.0 as dict keys, and max(x, -0.0) once got +0.0's node."""
    c = v.__class__
    if c is float:
        key = (c, _F64.pack(v), other)
    elif c is complex:
        key = (c, _F64.pack(v.real), _F64.pack(v.imag), other)
    else:
        key = (c, v, other)
    a = _WEAK.get(key)
    if a is None:
        a = _weak_scalar(v, other)
        if len(_WEAK) > 1024:
            _WEAK.clear()
        _WEAK[key] = a
    return a


def is_weak(x):
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def operand(x):
    """An operand that is not a weak scalar: Arrays as they are, frit.var values read, the rest
    via asarray."""
    if isinstance(x, Array):
        return x
    if isinstance(x, _control.Var):
        return x._value()
    if isinstance(x, (str, bytes, dict, set)) or x is None:
        raise FritTypeError("unsupported operand type %s" % type(x).__name__)
    return asarray(x)


def operands2(a, b):
    """Two operands of a binary op, weak Python scalars typed after the other operand."""
    wa, wb = is_weak(a), is_weak(b)
    if wa and wb:
        a = asarray(a)
        wa = False
    if wa:
        b = operand(b)
        return weak_scalar(a, b.dtype), b
    a = operand(a)
    if wb:
        return a, weak_scalar(b, a.dtype)
    return a, operand(b)


# ---------------------------------------------------------------- Array

class Array:
    """A frit array: lazy, realised on demand (np.asarray, printing, float(), .numpy())."""
    __slots__ = ("_n", "__weakref__")
    __array_priority__ = 100  # numpy defers binary operators to us

    def __init__(self, *a, **k):
        raise FritTypeError("create arrays with frit.asarray, frit.zeros, ...")

    # ---- internal constructors
    @staticmethod
    def _lazy(sess, t, dtype=None, shape=None, abstract=True):
        """An Array around a tensor built by the caller in sess (a jit tracer input when abstract;
        abstract arrays cannot be realised)."""
        n = _lazy_node(sess, sess.check(t), None, None if dtype is None else D.dtype(dtype), shape)
        n.abstract = abstract
        return _wrap(n)

    @staticmethod
    def _concrete(data, dtype):
        return _wrap(_concrete_node(data, D.dtype(dtype)))

    def _tensor(self, sess=None):
        return _tensor_of(self._n, sess or self._n.sess or S.current())

    def _realize(self):
        n = self._n
        if n.np is None:
            if n.abstract or n.expr is None:
                raise n.abstract_error()
            S.realize_one(n)
        return n.np

    # ---- attributes
    @property
    def shape(self):
        return self._n.shape

    @property
    def dtype(self):
        return self._n.dtype

    @property
    def ndim(self):
        return len(self._n.shape)

    @property
    def size(self):
        s = 1
        for d in self._n.shape:
            if d is None:
                return None
            s *= d
        return s

    @property
    def itemsize(self):
        return self._n.dtype.itemsize

    @property
    def nbytes(self):
        s = self.size
        return None if s is None else s * self.itemsize

    @property
    def device(self):
        return "cpu"

    @property
    def T(self):
        return _ops.transpose(self)

    @property
    def mT(self):
        if self.ndim < 2:
            raise FritError("mT: array of rank %d needs rank >= 2" % self.ndim)
        return _ops.swapaxes(self, -1, -2)

    @property
    def at(self):
        return _indexing.at(self)

    def __array_namespace__(self, api_version=None):
        import frit
        from ._namespace import check_api_version
        check_api_version(api_version)
        return frit

    def to_device(self, device, stream=None):
        if device != "cpu":
            raise FritError("to_device: only 'cpu' is available")
        return self

    # ---- realisation and interop
    def numpy(self):
        """The values as a numpy array (bfloat16 as float32). Zero-copy when possible."""
        d = self._realize()
        if d.__class__ is _Donated:
            raise d.error()
        if self._n.dtype is D.bfloat16:
            return np.asarray(L.bf16_value(d), np.float32).reshape(d.shape)
        return d

    def __array__(self, dtype=None, copy=None):
        v = self.numpy()
        if copy is False and (dtype is not None and np.dtype(dtype) != v.dtype
                              or self._n.dtype is D.bfloat16):
            raise ValueError("Unable to avoid copy while creating an array as requested.")
        if dtype is not None:
            v = v.astype(dtype, copy=False)
        if copy:
            v = v.copy()
        return v

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """DLPack export of the (realised) numpy storage: zero-copy, numpy's capsule."""
        if self._n.dtype is D.bfloat16:
            raise BufferError("__dlpack__: bfloat16 arrays are not exported (astype float32)")
        kw = {k: v for k, v in (("stream", stream), ("max_version", max_version),
                                ("dl_device", dl_device), ("copy", copy)) if v is not None}
        return self._realize().__dlpack__(**kw)

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU

    def _scalar_value(self, what):
        if self.ndim and self.size != 1:
            raise TypeError("only arrays of size 1 can be converted to Python scalars"
                            if what != "bool" else
                            "The truth value of an array with more than one element is "
                            "ambiguous. Use a.any() or a.all()")
        return self.numpy().reshape(())[()]

    def __float__(self):
        return float(self._scalar_value("float"))

    def __int__(self):
        return int(self._scalar_value("int"))

    def __complex__(self):
        return complex(self._scalar_value("complex"))

    def __bool__(self):
        return bool(self._scalar_value("bool"))

    def __index__(self):
        if self._n.dtype.kind not in "iub":
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        if self.ndim:
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return operator.index(self.numpy()[()])

    def __len__(self):
        if not self.ndim:
            raise TypeError("len() of unsized object")
        d = self._n.shape[0]
        if d is None:
            raise self._n.abstract_error()
        return d

    def __iter__(self):
        if not self.ndim:
            raise TypeError("iteration over a 0-d array")
        for i in range(len(self)):
            yield self[i]

    def item(self, *args):
        v = self.numpy()
        return v.item(*args)

    def tolist(self):
        return self.numpy().tolist()

    def __repr__(self):
        n = self._n
        if n.np is None and (n.abstract or n.expr is None):
            return "frit.Array(<traced>, shape=%s, dtype=%s)" % (n.shape, n.dtype.name)
        s = np.array_repr(self.numpy())
        s = "frit.Array" + s[5:]
        s = s.replace("\n", "\n" + " " * 5)
        if n.dtype is D.bfloat16:
            s = s.replace("dtype=float32", "dtype=bfloat16")
        return s

    def __str__(self):
        n = self._n
        if n.np is None and (n.abstract or n.expr is None):
            return repr(self)
        return str(self.numpy())

    def __format__(self, spec):
        if self.ndim == 0:
            return format(self.numpy()[()], spec)
        return format(str(self), spec)

    def __hash__(self):
        raise TypeError("unhashable type: 'frit.Array'")

    def __getitem__(self, idx):
        if _control.kernel_open():
            r = _control.kernel_getitem(self, idx)
            if r is not None:
                return r
        return _indexing.getitem(self, idx)

    def __setitem__(self, idx, value):
        """In place: inside frit.kernel an element store, else x is rebound to the functional
        update x.at[idx].set(value) (numpy indexing, index arrays included)."""
        _control.setitem(self, idx, value)

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    def __reduce__(self):
        return (asarray, (self.numpy(),) if self.dtype is not D.bfloat16
                else (self.numpy(), "bfloat16"))

    # ---- methods (numpy names)
    def astype(self, dtype, copy=True):
        return _ops.astype(self, dtype, copy=copy)

    def copy(self):
        n = self._n
        if n.np is not None:
            return _wrap(_concrete_node(n.np.copy(), n.dtype))  # dptr differs: a new node
        # lazy: a node of its own (same tensor), so that rebinding or carrying one of the two
        # Arrays in a host loop never affects the other
        return apply(_b_ident, [self])

    def sum(self, axis=None, dtype=None, keepdims=False):
        return _ops.sum(self, axis=axis, dtype=dtype, keepdims=keepdims)

    def prod(self, axis=None, dtype=None, keepdims=False):
        return _ops.prod(self, axis=axis, dtype=dtype, keepdims=keepdims)

    def max(self, axis=None, keepdims=False):
        return _ops.max(self, axis=axis, keepdims=keepdims)

    def min(self, axis=None, keepdims=False):
        return _ops.min(self, axis=axis, keepdims=keepdims)

    def mean(self, axis=None, dtype=None, keepdims=False):
        return _ops.mean(self, axis=axis, dtype=dtype, keepdims=keepdims)

    def var(self, axis=None, ddof=0, keepdims=False):
        return _ops.var(self, axis=axis, ddof=ddof, keepdims=keepdims)

    def std(self, axis=None, ddof=0, keepdims=False):
        return _ops.std(self, axis=axis, ddof=ddof, keepdims=keepdims)

    def argmax(self, axis=None, keepdims=False):
        return _ops.argmax(self, axis=axis, keepdims=keepdims)

    def argmin(self, axis=None, keepdims=False):
        return _ops.argmin(self, axis=axis, keepdims=keepdims)

    def any(self, axis=None, keepdims=False):
        return _ops.any(self, axis=axis, keepdims=keepdims)

    def all(self, axis=None, keepdims=False):
        return _ops.all(self, axis=axis, keepdims=keepdims)

    def cumsum(self, axis=None, dtype=None):
        return _ops.cumsum(self, axis=axis, dtype=dtype)

    def sort(self, axis=-1, kind=None, order=None, *, descending=False, stable=None):
        """In place, as numpy: x is rebound to frit.sort(x, ...); returns None."""
        from . import _sorting
        _control.rebind(self, _sorting.sort(self, axis, kind, order, descending=descending,
                                            stable=stable)._n)

    def argsort(self, axis=-1, kind=None, order=None, *, descending=False, stable=None):
        from . import _sorting
        return _sorting.argsort(self, axis, kind, order, descending=descending, stable=stable)

    def searchsorted(self, v, side="left", sorter=None):
        from . import _sorting
        return _sorting.searchsorted(self, v, side, sorter)

    def nonzero(self, *, size=None, fill_value=None):
        from . import _sorting
        return _sorting.nonzero(self, size=size, fill_value=fill_value)

    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = shape[0]
        return _ops.reshape(self, shape, order=order)

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], (int, np.integer))):
            axes = axes[0]
        return _ops.transpose(self, axes if axes != () else None)

    def swapaxes(self, a, b):
        return _ops.swapaxes(self, a, b)

    def squeeze(self, axis=None):
        return _ops.squeeze(self, axis)

    def flatten(self):
        return _ops.reshape(self, (-1,))

    def ravel(self):
        return _ops.reshape(self, (-1,))

    def clip(self, min=None, max=None):
        return _ops.clip(self, min, max)

    def round(self, decimals=0):
        return _ops.round(self, decimals)

    def repeat(self, repeats, axis=None):
        return _ops.repeat(self, repeats, axis)

    def take(self, indices, axis=None):
        return _ops.take(self, indices, axis)

    def dot(self, other):
        return _ops.dot(self, other)

    @property
    def real(self):
        return _ops._CX.real(self)

    @property
    def imag(self):
        return _ops._CX.imag(self)

    def conj(self):
        return _ops._CX.conj(self)

    conjugate = conj

    def flip(self, axis=None):
        return _ops.flip(self, axis)

    # ---- operators
    def __neg__(self):
        return _ops.negative(self)

    def __pos__(self):
        return _ops.positive(self)

    def __abs__(self):
        return _ops.abs(self)

    def __invert__(self):
        return _ops.invert(self)


def _divmod(self, other):
    return _ops.floor_divide(self, other), _ops.remainder(self, other)


def _rdivmod(self, other):
    return _ops.floor_divide(other, self), _ops.remainder(other, self)


Array.__divmod__ = _divmod
Array.__rdivmod__ = _rdivmod

def _b_ident(ctx, ts):
    return ts[0]


from . import _ops  # noqa: E402  (circular: _ops builds on apply/Array)
from . import _indexing  # noqa: E402
from . import _control  # noqa: E402


def _binop(name, fname, reflect=True, inplace=True):
    f = getattr(_ops, fname)

    def fwd(self, other):
        if not isinstance(other, _OPERAND_TYPES):
            return NotImplemented
        return f(self, other)

    def rev(self, other):
        if not isinstance(other, _OPERAND_TYPES):
            return NotImplemented
        return f(other, self)

    def inp(self, other):
        if not isinstance(other, _OPERAND_TYPES):
            return NotImplemented
        r = f(self, other)
        if r.shape != self.shape:
            raise FritError("non-broadcastable output operand with shape %s doesn't match the "
                            "broadcast shape %s" % (self.shape, r.shape))
        if r.dtype is not self.dtype:
            if not D.can_cast(r.dtype, self.dtype, "same_kind"):
                raise FritTypeError("Cannot cast ufunc '%s' output from dtype('%s') to dtype('%s') "
                                    "with casting rule 'same_kind'" % (fname, r.dtype, self.dtype))
            r = _ops.astype(r, self.dtype)
        _control.rebind(self, r._n)
        return self

    setattr(Array, "__%s__" % name, fwd)
    if reflect:
        setattr(Array, "__r%s__" % name, rev)
    if inplace:
        setattr(Array, "__i%s__" % name, inp)


_OPERAND_TYPES = (Array, np.ndarray, np.generic, bool, int, float, complex, list, tuple,
                  _control.Var)


for _name, _f in [("add", "add"), ("sub", "subtract"), ("mul", "multiply"),
                  ("truediv", "true_divide"), ("floordiv", "floor_divide"), ("mod", "remainder"),
                  ("pow", "power"), ("matmul", "matmul"), ("and", "bitwise_and"),
                  ("or", "bitwise_or"), ("xor", "bitwise_xor"), ("lshift", "left_shift"),
                  ("rshift", "right_shift")]:
    _binop(_name, _f)
for _name, _f in [("lt", "less"), ("le", "less_equal"), ("gt", "greater"),
                  ("ge", "greater_equal"), ("eq", "equal"), ("ne", "not_equal")]:
    _binop(_name, _f, reflect=False, inplace=False)
