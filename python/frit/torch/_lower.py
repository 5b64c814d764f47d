"""ATen op -> frit lowering table for the torch.compile backend: which FX nodes frit can run
(support checks with the reason when not) and how each maps onto frit's numpy-like API."""
import math
import operator

import torch

import frit

aten = torch.ops.aten

# torch dtype -> frit dtype for the dtypes the backend maps (others fall back: float16,
# bfloat16, complex, unsigned > 8 bits, quantized)
DTYPES = {
    torch.float32: frit.float32, torch.float64: frit.float64,
    torch.int64: frit.int64, torch.int32: frit.int32, torch.int16: frit.int16,
    torch.int8: frit.int8, torch.uint8: frit.uint8, torch.bool: frit.bool,
}
FLOATS = (torch.float32, torch.float64)


class Unsupported(Exception):
    """A node frit cannot run exactly; the message is the reason explain() shows."""


# ------------------------------------------------------------------ helpers on node metadata

def _val(x):
    """The FakeTensor (or tuple) a node produces, from its metadata."""
    return x.meta.get("val") if isinstance(x, torch.fx.Node) else x


def _tensor_vals(v):
    if isinstance(v, torch.Tensor):
        return [v]
    if isinstance(v, (tuple, list)):
        return [t for e in v for t in _tensor_vals(e)]
    return []


def _check_tensor(t, what):
    if t.layout != torch.strided:
        raise Unsupported("%s has layout %s (only dense tensors)" % (what, t.layout))
    if t.device.type != "cpu":
        raise Unsupported("%s is on %s (frit.torch runs CPU tensors)" % (what, t.device))
    if t.dtype not in DTYPES:
        raise Unsupported("%s has dtype %s (frit.torch maps %s)" % (
            what, str(t.dtype).replace("torch.", ""),
            ", ".join(str(d).replace("torch.", "") for d in DTYPES)))
    for s in t.shape:
        if not isinstance(s, int):
            raise Unsupported("%s has a symbolic dim %s (dynamic shapes run in PyTorch)" % (what, s))


def _scalar_ok(a, what):
    """Non-tensor arguments: Python numbers, lists of ints, dtypes, None, strings; SymInts fall back."""
    if isinstance(a, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        raise Unsupported("%s is symbolic (%s)" % (what, a))
    if isinstance(a, (list, tuple)):
        for e in a:
            _scalar_ok(e, what)


def out_dtype(node, i=None):
    v = _val(node)
    if i is not None:
        v = v[i]
    return v.dtype


def _fd(td):
    return DTYPES[td]


def cast(x, td):
    """x (frit array or Python scalar) as torch dtype td."""
    if isinstance(x, frit.Array):
        fd = _fd(td)
        if x.dtype == fd:
            return x
        if td == torch.bool:
            return x != 0   # PyTorch: nonzero is True (0.5 too, which a C cast via int loses)
        return frit.astype(x, fd)
    return x


def _category(td):
    return 0 if td == torch.bool else (2 if td.is_floating_point else 1)


def result_type(*vals):
    """torch's type promotion over FakeTensors and Python scalars: dimensioned tensors over
    0-d tensors over Python scalars, within the highest category (bool < int < float)."""
    groups = {0: [], 1: [], 2: []}  # priority: 0 dim tensors, 1 zero-dim, 2 scalars
    for v in vals:
        if isinstance(v, torch.Tensor):
            groups[0 if v.dim() else 1].append(v.dtype)
        elif isinstance(v, bool):
            groups[2].append(torch.bool)
        elif isinstance(v, int):
            groups[2].append(torch.int64)
        elif isinstance(v, float):
            groups[2].append(torch.get_default_dtype())
    top = max(_category(d) for g in groups.values() for d in g)
    for p in (0, 1, 2):
        ds = [d for d in groups[p] if _category(d) == top]
        if ds:
            r = ds[0]
            for d in ds[1:]:
                r = torch.promote_types(r, d)
            return r
    raise Unsupported("no operand dtype")


def _shape(node):
    return tuple(_val(node).shape)


def _dim(d, n):
    return d + n if d < 0 else d


def _dims(dims, n):
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        return tuple(range(n))
    if isinstance(dims, int):
        dims = [dims]
    return tuple(sorted(_dim(d, n) for d in dims))


# ------------------------------------------------------------------ the table

LOWER = {}    # "aten.op.overload" -> fn(node, args, kwargs) with frit arrays for tensor args
CHECKS = {}   # "aten.op.overload" -> fn(node) raising Unsupported (op-specific conditions)


def lower(*names, check=None):
    def deco(fn):
        for n in names:
            LOWER[n] = fn
            if check is not None:
                CHECKS[n] = check
        return fn
    return deco


def _float_only(node):
    for i, a in enumerate(node.args):
        for t in _tensor_vals(_val(a)):
            if t.dtype not in FLOATS:
                raise Unsupported("%s on %s (mapped for float32/float64 only)" % (
                    node.target, str(t.dtype).replace("torch.", "")))


def _out_float(node):
    for t in _tensor_vals(_val(node)):
        if t.dtype not in FLOATS:
            raise Unsupported("%s gives %s (mapped for float32/float64 results only)" % (
                node.target, str(t.dtype).replace("torch.", "")))


# --- elementwise binary: operands cast to the result dtype first (torch computes in it)

def _binary(f):
    def run(node, args, kwargs):
        td = out_dtype(node)
        return f(cast(args[0], td), cast(args[1], td), node, kwargs)
    return run


lower("aten.add.Tensor", "aten.add.Scalar")(
    _binary(lambda a, b, n, kw: a + (b if kw.get("alpha", 1) == 1 else b * kw["alpha"])))
lower("aten.sub.Tensor", "aten.sub.Scalar")(
    _binary(lambda a, b, n, kw: a - (b if kw.get("alpha", 1) == 1 else b * kw["alpha"])))
lower("aten.mul.Tensor", "aten.mul.Scalar")(_binary(lambda a, b, n, kw: a * b))
lower("aten.maximum.default")(_binary(lambda a, b, n, kw: frit.maximum(a, b)))
lower("aten.minimum.default")(_binary(lambda a, b, n, kw: frit.minimum(a, b)))


lower("aten.div.Tensor", "aten.div.Scalar", check=_out_float)(
    _binary(lambda a, b, n, kw: a / b))


@lower("aten.rsub.Scalar", "aten.rsub.Tensor")
def _rsub(node, args, kwargs):
    td = out_dtype(node)
    a, b = cast(args[0], td), cast(args[1], td)
    alpha = kwargs.get("alpha", 1)
    return b - (a if alpha == 1 else a * alpha)


def _div_mode_check(node):
    mode = node.kwargs.get("rounding_mode")
    if mode not in (None, "floor", "trunc"):
        raise Unsupported("rounding_mode %r" % mode)
    if out_dtype(node) not in FLOATS and not (mode == "floor" and _positive_scalar_divisor(node)):
        raise Unsupported("integer division by a tensor or a non-positive number, or truncating "
                          "(division by zero raises in PyTorch)")


@lower("aten.div.Tensor_mode", "aten.div.Scalar_mode", check=_div_mode_check)
def _div_mode(node, args, kwargs):
    td = out_dtype(node)
    a, b = cast(args[0], td), cast(args[1], td)
    mode = kwargs.get("rounding_mode")
    if mode == "floor":
        return frit.floor_divide(a, b)
    if mode == "trunc":
        return frit.trunc(a / b)
    return a / b


def _pow_check(node):
    if out_dtype(node) not in FLOATS:
        raise Unsupported("integer pow (negative exponents raise in PyTorch)")


lower("aten.pow.Tensor_Scalar", "aten.pow.Tensor_Tensor", "aten.pow.Scalar", check=_pow_check)(
    _binary(lambda a, b, n, kw: frit.power(a, b)))


def _positive_scalar_divisor(node):
    b = node.args[1] if len(node.args) > 1 else None
    return isinstance(b, (int, float)) and not isinstance(b, bool) and b > 0


def _float_result(node):
    # integers: only by a positive number (a tensor may hold 0, whose division raises in PyTorch,
    # and INT_MIN / -1 overflows)
    if out_dtype(node) not in FLOATS and not _positive_scalar_divisor(node):
        raise Unsupported("integer %s by a tensor or a non-positive number (division by zero "
                          "raises in PyTorch)" % node.target)


lower("aten.remainder.Tensor", "aten.remainder.Scalar", check=_float_result)(
    _binary(lambda a, b, n, kw: frit.remainder(a, b)))
lower("aten.fmod.Tensor", "aten.fmod.Scalar", check=_float_result)(
    _binary(lambda a, b, n, kw: frit.fmod(a, b)))


def _int_or_bool(node):
    for t in _tensor_vals(_val(node)):
        if t.dtype in FLOATS:
            raise Unsupported("bitwise op on %s" % t.dtype)


lower("aten.bitwise_and.Tensor", "aten.bitwise_and.Scalar", check=_int_or_bool)(
    _binary(lambda a, b, n, kw: frit.bitwise_and(a, b)))
lower("aten.bitwise_or.Tensor", "aten.bitwise_or.Scalar", check=_int_or_bool)(
    _binary(lambda a, b, n, kw: frit.bitwise_or(a, b)))
lower("aten.bitwise_xor.Tensor", "aten.bitwise_xor.Scalar", check=_int_or_bool)(
    _binary(lambda a, b, n, kw: frit.bitwise_xor(a, b)))
lower("aten.bitwise_not.default", check=_int_or_bool)(lambda n, a, k: frit.bitwise_not(a[0]))


# --- comparisons and logic: compared in the promoted dtype, bool result

def _compare(f):
    def run(node, args, kwargs):
        td = result_type(*[_val(a) for a in node.args[:2]])
        return f(cast(args[0], td), cast(args[1], td))
    return run


for _n, _f in (("eq", operator.eq), ("ne", operator.ne), ("lt", operator.lt),
               ("le", operator.le), ("gt", operator.gt), ("ge", operator.ge)):
    lower("aten.%s.Tensor" % _n, "aten.%s.Scalar" % _n)(
        _compare(lambda a, b, f=_f: f(frit.asarray(a) if not isinstance(a, frit.Array) else a, b)))
lower("aten.logical_and.default")(
    lambda n, a, k: frit.logical_and(a[0], a[1]))
lower("aten.logical_or.default")(lambda n, a, k: frit.logical_or(a[0], a[1]))
lower("aten.logical_xor.default")(lambda n, a, k: frit.logical_xor(a[0], a[1]))
lower("aten.logical_not.default")(lambda n, a, k: frit.logical_not(a[0]))


@lower("aten.where.self")
def _where(node, args, kwargs):
    td = out_dtype(node)
    c = args[0]
    if c.dtype != frit.bool:
        c = c != 0
    return frit.where(c, cast(args[1], td), cast(args[2], td))


def _clamp_check(node):
    for a in node.args[1:3]:
        if a is not None and not isinstance(a, (int, float)):
            raise Unsupported("clamp with tensor bounds")


@lower("aten.clamp.default", check=_clamp_check)
def _clamp(node, args, kwargs):
    td = out_dtype(node)
    lo = args[1] if len(args) > 1 else kwargs.get("min")
    hi = args[2] if len(args) > 2 else kwargs.get("max")
    x = cast(args[0], td)
    # NaN propagates as in PyTorch: maximum/minimum keep a NaN x
    if lo is not None:
        x = frit.maximum(x, cast(frit.asarray(lo, dtype=_fd(td)), td))
    if hi is not None:
        x = frit.minimum(x, cast(frit.asarray(hi, dtype=_fd(td)), td))
    return x


# --- elementwise unary: float functions run in the (float) result dtype

def _unary(f, floats=True):
    def run(node, args, kwargs):
        return f(cast(args[0], out_dtype(node)))
    return run


for _name, _f in (("exp", frit.exp), ("log", frit.log), ("sqrt", frit.sqrt),
                  ("rsqrt", frit.rsqrt), ("tanh", frit.tanh), ("sigmoid", frit.sigmoid),
                  ("sin", frit.sin), ("cos", frit.cos), ("erf", frit.erf),
                  ("log1p", frit.log1p), ("expm1", frit.expm1), ("reciprocal", frit.reciprocal),
                  ("floor", frit.floor), ("ceil", frit.ceil), ("trunc", frit.trunc),
                  ("log2", frit.log2), ("exp2", frit.exp2)):
    lower("aten.%s.default" % _name, check=_out_float)(_unary(_f))
lower("aten.neg.default")(_unary(lambda x: -x))
lower("aten.abs.default")(_unary(frit.abs))
lower("aten.sign.default", check=_float_only)(_unary(frit.sign))
lower("aten.relu.default")(_unary(lambda x: frit.maximum(x, frit.zeros((), x.dtype))))


def _gelu_check(node):
    _out_float(node)
    if node.kwargs.get("approximate", "none") not in ("none", "tanh"):
        raise Unsupported("gelu approximate=%r" % node.kwargs.get("approximate"))


@lower("aten.gelu.default", check=_gelu_check)
def _gelu(node, args, kwargs):
    x = args[0]
    if kwargs.get("approximate", "none") == "tanh":
        return 0.5 * x * (1.0 + frit.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))
    return 0.5 * x * (1.0 + frit.erf(x * (1.0 / math.sqrt(2.0))))


@lower("aten.gelu_backward.default", check=_gelu_check)
def _gelu_backward(node, args, kwargs):
    g, x = args[0], args[1]
    if kwargs.get("approximate", "none") == "tanh":
        k = math.sqrt(2.0 / math.pi)
        inner = k * (x + 0.044715 * x * x * x)
        t = frit.tanh(inner)
        return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 3 * 0.044715 * x * x))
    cdf = 0.5 * (1.0 + frit.erf(x * (1.0 / math.sqrt(2.0))))
    pdf = frit.exp(-0.5 * x * x) * (1.0 / math.sqrt(2.0 * math.pi))
    return g * (cdf + x * pdf)


@lower("aten.hardtanh.default", check=_out_float)
def _hardtanh(node, args, kwargs):
    x = args[0]
    lo = args[1] if len(args) > 1 else kwargs.get("min_val", -1.0)
    hi = args[2] if len(args) > 2 else kwargs.get("max_val", 1.0)
    return frit.minimum(frit.maximum(x, frit.full((), lo, x.dtype)), frit.full((), hi, x.dtype))


@lower("aten.leaky_relu.default", check=_out_float)
def _leaky_relu(node, args, kwargs):
    x = args[0]
    slope = args[1] if len(args) > 1 else kwargs.get("negative_slope", 0.01)
    return frit.where(x > 0, x, x * slope)


@lower("aten.elu.default", check=_out_float)
def _elu(node, args, kwargs):
    a = list(args) + [None] * 3
    x = a[0]
    alpha = 1.0 if a[1] is None else a[1]
    scale = 1.0 if a[2] is None else a[2]
    iscale = 1.0 if a[3] is None else a[3]
    return frit.where(x > 0, x * scale, frit.expm1(x * iscale) * (alpha * scale))


@lower("aten.threshold_backward.default")
def _threshold_backward(node, args, kwargs):
    g, x, th = args
    return frit.where(x <= th, frit.zeros((), g.dtype), g)


@lower("aten.sigmoid_backward.default", check=_out_float)
def _sigmoid_backward(node, args, kwargs):
    g, y = args
    return g * (1 - y) * y


@lower("aten.tanh_backward.default", check=_out_float)
def _tanh_backward(node, args, kwargs):
    g, y = args
    return g * (1 - y * y)


# --- copies, casts, identity

_NARROW = (torch.int8, torch.int16, torch.uint8)


def _narrowing_check(src, dst):
    if src.dtype in FLOATS and dst.dtype in _NARROW:
        raise Unsupported("float to %s (out-of-range values are platform-defined in PyTorch)"
                          % str(dst.dtype).replace("torch.", ""))


def _to_copy_check(node):
    _narrowing_check(_val(node.args[0]), _val(node))
    for k, v in node.kwargs.items():
        if k == "dtype":
            continue
        if k == "device" and (v is None or torch.device(v).type == "cpu"):
            continue
        if k == "layout" and v in (None, torch.strided):
            continue
        if k in ("memory_format", "non_blocking", "pin_memory") and v in (None, False,
                                                                          torch.preserve_format,
                                                                          torch.contiguous_format):
            continue
        raise Unsupported("_to_copy with %s=%r" % (k, v))


lower("aten._to_copy.default", check=_to_copy_check)(
    lambda n, a, k: cast(a[0], out_dtype(n)))
for _name in ("clone", "alias", "lift_fresh_copy"):
    lower("aten.%s.default" % _name)(lambda n, a, k: a[0])


@lower("aten.copy.default", check=lambda n: _narrowing_check(_val(n.args[1]), _val(n)))
def _copy(node, args, kwargs):
    return frit.broadcast_to(cast(args[1], out_dtype(node)), _shape(node))


# --- shapes and movement

@lower("aten.view.default", "aten._unsafe_view.default", "aten.view_copy.default")
def _view(node, args, kwargs):
    return frit.reshape(args[0], _shape(node))


lower("aten.permute.default")(lambda n, a, k: frit.permute_dims(a[0], [_dim(d, a[0].ndim) for d in a[1]]))
lower("aten.t.default")(lambda n, a, k: frit.permute_dims(a[0], (1, 0)) if a[0].ndim == 2 else a[0])
lower("aten.transpose.int")(lambda n, a, k: frit.swapaxes(a[0], _dim(a[1], a[0].ndim),
                                                          _dim(a[2], a[0].ndim)))
lower("aten.expand.default")(lambda n, a, k: frit.broadcast_to(a[0], _shape(n)))
lower("aten.unsqueeze.default")(lambda n, a, k: frit.expand_dims(a[0], _dim(a[1], a[0].ndim + 1)))
lower("aten.squeeze.dim", "aten.squeeze.dims", "aten.squeeze.default")(
    lambda n, a, k: frit.reshape(a[0], _shape(n)))


@lower("aten.slice.Tensor")
def _slice(node, args, kwargs):
    x = args[0]
    dim = _dim(args[1] if len(args) > 1 else 0, x.ndim)
    start = args[2] if len(args) > 2 else None
    end = args[3] if len(args) > 3 else None
    step = args[4] if len(args) > 4 else 1
    idx = [slice(None)] * x.ndim
    idx[dim] = slice(start, end, step)
    return x[tuple(idx)]


@lower("aten.select.int")
def _select(node, args, kwargs):
    x, dim, i = args
    idx = [slice(None)] * x.ndim
    idx[_dim(dim, x.ndim)] = i
    return x[tuple(idx)]


def _scatter_index(x, dim, start, end, step):
    idx = [slice(None)] * x.ndim
    idx[_dim(dim, x.ndim)] = slice(start, end, step)
    return tuple(idx)


@lower("aten.slice_scatter.default")
def _slice_scatter(node, args, kwargs):
    x, src = args[0], args[1]
    dim = args[2] if len(args) > 2 else kwargs.get("dim", 0)
    start = args[3] if len(args) > 3 else kwargs.get("start")
    end = args[4] if len(args) > 4 else kwargs.get("end")
    step = args[5] if len(args) > 5 else kwargs.get("step", 1)
    return x.at[_scatter_index(x, dim, start, end, step)].set(cast(src, out_dtype(node)))


@lower("aten.select_scatter.default")
def _select_scatter(node, args, kwargs):
    x, src, dim, i = args
    idx = [slice(None)] * x.ndim
    idx[_dim(dim, x.ndim)] = i
    return x.at[tuple(idx)].set(cast(src, out_dtype(node)))


def _cat_check(node):
    vals = [_val(t) for t in node.args[0]]
    if any(v.dim() == 1 and v.shape[0] == 0 for v in vals) and len({v.dim() for v in vals}) > 1:
        raise Unsupported("cat with legacy empty (0,) inputs")


@lower("aten.cat.default", check=_cat_check)
def _cat(node, args, kwargs):
    td = out_dtype(node)
    ts = [cast(t, td) for t in args[0]]
    dim = args[1] if len(args) > 1 else kwargs.get("dim", 0)
    return frit.concat(ts, axis=_dim(dim, ts[0].ndim))


def _pad_check(node):
    if any(p < 0 for p in node.args[1]):
        raise Unsupported("negative padding (cropping)")


@lower("aten.constant_pad_nd.default", check=_pad_check)
def _pad(node, args, kwargs):
    x, pad = args[0], list(args[1])
    value = args[2] if len(args) > 2 else kwargs.get("value", 0)
    width = [(0, 0)] * x.ndim
    for i in range(len(pad) // 2):
        width[x.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return frit.pad(x, width, constant_values=value)


lower("aten.flip.default")(lambda n, a, k: frit.flip(a[0], axis=tuple(_dim(d, a[0].ndim) for d in a[1])))


# --- creation

def _creation_check(node):
    for k, v in node.kwargs.items():
        if k == "device" and v is not None and torch.device(v).type != "cpu":
            raise Unsupported("created on %s" % v)
        if k == "layout" and v not in (None, torch.strided):
            raise Unsupported("layout %s" % v)


@lower("aten.full.default", check=_creation_check)
def _full(node, args, kwargs):
    return frit.full(_shape(node), args[1], dtype=_fd(out_dtype(node)))


@lower("aten.scalar_tensor.default", check=_creation_check)
def _scalar_tensor(node, args, kwargs):
    return frit.full((), args[0], dtype=_fd(out_dtype(node)))


@lower("aten.full_like.default", check=_creation_check)
def _full_like(node, args, kwargs):
    return frit.full(_shape(node), args[1], dtype=_fd(out_dtype(node)))


def _arange_check(node):
    _creation_check(node)
    if out_dtype(node) in FLOATS or any(not isinstance(a, int) for a in node.args):
        raise Unsupported("arange with float values (rounding of the count)")


@lower("aten.arange.start_step", "aten.arange.start", "aten.arange.default", check=_arange_check)
def _arange(node, args, kwargs):
    a = list(args) + [None] * 3
    if str(node.target) == "aten.arange.default":
        start, end, step = 0, a[0], 1
    else:
        start, end, step = a[0], a[1], (a[2] if a[2] is not None else 1)
    return frit.arange(start, end, step, dtype=_fd(out_dtype(node)))


# ------------------------------------------------------------------ the support check

HINTS = {
    "aten._transformer_encoder_layer_fwd.default":
        "nn.TransformerEncoderLayer's fused inference fast path; "
        "torch.backends.mha.set_fastpath_enabled(False) traces it as ops frit maps",
    "aten._scaled_dot_product_flash_attention_for_cpu.default":
        "kept whole in training graphs, whose backward needs its statistics; inference graphs "
        "decompose it into ops frit maps",
    "aten.native_dropout.default": "random: dropout in training mode runs in PyTorch",
}

def check_node(node):
    """None when frit can run this FX node, else raises Unsupported with the reason."""
    if node.target is operator.getitem:
        return
    name = str(node.target)
    if name not in LOWER:
        hint = HINTS.get(name)
        raise Unsupported("no frit lowering for %s%s" % (name, "" if hint is None else " (%s)" % hint))
    for i, a in enumerate(list(node.args) + list(node.kwargs.values())):
        for e in (a if isinstance(a, (list, tuple)) else [a]):
            if isinstance(e, torch.fx.Node):
                for t in _tensor_vals(_val(e)):
                    _check_tensor(t, "an input")
            else:
                _scalar_ok(e, "an argument")
    out = _val(node)
    if out is None:
        raise Unsupported("no shape/dtype metadata")
    for t in _tensor_vals(out):
        _check_tensor(t, "the result")
    chk = CHECKS.get(name)
    if chk is not None:
        chk(node)


def run_node(node, args, kwargs):
    """Lowers one node on frit arrays; casts each result to the dtype PyTorch gives it and
    checks its shape (a mismatch raises, and the whole cluster falls back)."""
    if node.target is operator.getitem:
        return args[0][args[1]]
    r = LOWER[str(node.target)](node, args, kwargs)
    want = _val(node)
    if isinstance(want, (tuple, list)):
        if not isinstance(r, tuple) or len(r) != len(want):
            raise Unsupported("%s: %d results, PyTorch gives %d" % (node.target, len(r), len(want)))
        return tuple(_conform(node, x, w) for x, w in zip(r, want))
    return _conform(node, r, want)


def _conform(node, x, want):
    if want is None or x is None:   # None: an output the check made sure nothing uses
        return x
    if not isinstance(x, frit.Array):
        x = frit.asarray(x)
    x = cast(x, want.dtype)
    if tuple(x.shape) != tuple(want.shape):
        raise Unsupported("%s: frit shape %s, PyTorch %s" % (node.target, tuple(x.shape),
                                                            tuple(want.shape)))
    return x


def mapped_ops():
    """The ATen overloads the backend maps, sorted."""
    return sorted(LOWER)


from . import _lower_nn, _lower_reduce  # noqa: E402,F401  (register their ops in LOWER)
