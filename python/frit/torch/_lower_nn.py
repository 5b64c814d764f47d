"""ATen -> frit lowerings of the contractions and neural-network ops (mm, addmm, convolution and
its backward, batch and layer norm, softmax and their backward ops), registered in _lower.LOWER."""
import operator

import torch

import frit

from ._lower import lower, Unsupported, _float_only, _val, _dim, cast, out_dtype

# --- linear algebra and nn

# Contractions get kernel boundaries (frit.contiguous) on their operands and result: frit's
# scheduler otherwise fuses a bias add or activation into the matmul's reduction loop, or
# recomputes an elementwise producer (GELU's erf) once per output column, which measured 6-7x
# slower on an MLP (bench/bench_torch_backend.py) than the contraction on materialised arrays.
_C = frit.contiguous


def _matmul(a, b):
    return _C(frit.matmul(_C(a), _C(b)))


lower("aten.mm.default", "aten.bmm.default", check=_float_only)(
    lambda n, a, k: _matmul(a[0], a[1]))


@lower("aten.addmm.default", check=_float_only)
def _addmm(node, args, kwargs):
    bias, a, b = args[:3]
    beta, alpha = kwargs.get("beta", 1), kwargs.get("alpha", 1)
    y = _matmul(a, b)
    if alpha != 1:
        y = y * alpha
    if beta == 0:
        return y
    return y + (bias if beta == 1 else bias * beta)


def _conv_checker(input_arg, transposed_arg):
    """The check of a convolution node whose input and `transposed` flag are those arguments."""
    def check(node):
        _float_only(node)
        a = node.args
        if len(_val(a[input_arg]).shape) != 4:
            raise Unsupported("convolution of rank %d input (2-d convolutions only)" % len(_val(a[input_arg]).shape))
        if a[transposed_arg]:
            raise Unsupported("transposed convolution")
    return check


_conv_check = _conv_checker(0, 6)


@lower("aten.convolution.default", check=_conv_check)
def _convolution(node, args, kwargs):
    x, w, b, stride, padding, dilation, _tr, _op, groups = args
    return _C(frit.conv2d(_C(x), _C(w), b, stride=tuple(stride), padding=tuple(padding),
                          dilation=tuple(dilation), groups=groups))


_conv_bw_check = _conv_checker(1, 7)  # convolution_backward(grad_output, input, weight, ..., transposed, ...)


@lower("aten.convolution_backward.default", check=_conv_bw_check)
def _convolution_backward(node, args, kwargs):
    """(grad_input, grad_weight, grad_bias) by frit.vjp of frit.conv2d; None where output_mask
    says PyTorch does not need it."""
    g, x, w, _bias_sizes, stride, padding, dilation, _tr, _op, groups, mask = args

    def conv(xx, ww):
        return frit.conv2d(xx, ww, None, stride=tuple(stride), padding=tuple(padding),
                           dilation=tuple(dilation), groups=groups)

    _, pull = frit.vjp(conv, _C(x), _C(w))
    gx, gw = pull(_C(g))
    gb = frit.sum(g, axis=(0, 2, 3)) if mask[2] else None
    return (_C(gx) if mask[0] else None, _C(gw) if mask[1] else None, gb)


def _bn_shape(x, v):
    return frit.reshape(v, (1, -1) + (1,) * (x.ndim - 2))


def _bn_apply(x, mean, rstd, w, b):
    """(x - mean) * rstd, then the optional scale and shift, per channel (axis 1)."""
    y = (x - _bn_shape(x, mean)) * _bn_shape(x, rstd)
    if w is not None:
        y = y * _bn_shape(x, w)
    if b is not None:
        y = y + _bn_shape(x, b)
    return y


@lower("aten._native_batch_norm_legit_no_training.default", check=_float_only)
def _bn_eval(node, args, kwargs):
    x, w, b, rm, rv, _momentum, eps = args
    y = _bn_apply(x, rm, frit.rsqrt(rv + eps), w, b)
    # materialised: fused into the next layer's contraction it was recomputed per output (the
    # bench's CNN forward ran 30% slower)
    return (_C(y), frit.zeros((0,), x.dtype), frit.zeros((0,), x.dtype))


def _bn_train_check(node):
    _float_only(node)
    if not node.args[5]:
        raise Unsupported("_native_batch_norm_legit_functional with training=False")


@lower("aten._native_batch_norm_legit_functional.default", check=_bn_train_check)
def _bn_train(node, args, kwargs):
    x, w, b, rm, rv, _training, momentum, eps = args
    axes = (0,) + tuple(range(2, x.ndim))
    n = 1
    for a in axes:
        n *= x.shape[a]
    mean = frit.mean(x, axis=axes)
    var = frit.mean(frit.square(x - _bn_shape(x, mean)), axis=axes)
    rstd = frit.rsqrt(var + eps)
    y = _bn_apply(x, mean, rstd, w, b)
    unbiased = var * (n / (n - 1)) if n > 1 else var * float("nan")
    new_rm = (1 - momentum) * rm + momentum * mean
    new_rv = (1 - momentum) * rv + momentum * cast(unbiased, out_dtype(node, 4))
    return (y, mean, rstd, new_rm, new_rv)


@lower("aten.native_layer_norm.default", check=_float_only)
def _layer_norm(node, args, kwargs):
    x, shape, w, b, eps = args
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    mean = frit.mean(x, axis=axes, keepdims=True)
    var = frit.mean(frit.square(x - mean), axis=axes, keepdims=True)
    rstd = frit.rsqrt(var + eps)
    y = (x - mean) * rstd
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return (y, mean, rstd)


def _softmax_check(node):
    _float_only(node)
    if len(node.args) > 2 and node.args[2] is True:
        raise Unsupported("half_to_float softmax")


lower("aten._softmax.default", check=_softmax_check)(
    lambda n, a, k: frit.softmax(a[0], axis=_dim(a[1], a[0].ndim)))
lower("aten._log_softmax.default", check=_softmax_check)(
    lambda n, a, k: frit.log_softmax(a[0], axis=_dim(a[1], a[0].ndim)))


@lower("aten._softmax_backward_data.default", check=_float_only)
def _softmax_bw(node, args, kwargs):
    g, y, dim = args[:3]
    d = _dim(dim, y.ndim)
    return y * (g - frit.sum(g * y, axis=d, keepdims=True))


@lower("aten._log_softmax_backward_data.default", check=_float_only)
def _log_softmax_bw(node, args, kwargs):
    g, y, dim = args[:3]
    d = _dim(dim, y.ndim)
    return g - frit.exp(y) * frit.sum(g, axis=d, keepdims=True)


# --- pooling, embedding

def _pool_common(node, what):
    _float_only(node)
    a = list(node.args) + [None] * 8
    if len(_val(a[0]).shape) != 4:
        raise Unsupported("%s of a rank-%d input (NCHW only)" % (what, len(_val(a[0]).shape)))


def _max_pool_check(node):
    _pool_common(node, "max_pool2d")
    a = list(node.args) + [None] * 6
    if a[4] is not None and any(d != 1 for d in a[4]):
        raise Unsupported("max_pool2d with dilation")
    if a[5]:
        raise Unsupported("max_pool2d with ceil_mode")
    if any(u.target is not operator.getitem or u.args[1] != 0 for u in node.users):
        raise Unsupported("max_pool2d's indices are used (training: the backward needs them)")


def _pair(v, default):
    if v is None or (isinstance(v, (list, tuple)) and len(v) == 0):
        v = default
    v = tuple(v) if isinstance(v, (list, tuple)) else (v, v)
    return v if len(v) == 2 else (v[0], v[0])


@lower("aten.max_pool2d_with_indices.default", check=_max_pool_check)
def _max_pool(node, args, kwargs):
    a = list(args) + [None] * 6
    k = _pair(a[1], None)
    return (frit.max_pool2d(a[0], k, _pair(a[2], k), _pair(a[3], 0)), None)


def _avg_pool_check(node):
    _pool_common(node, "avg_pool2d")
    a = list(node.args) + [None] * 7
    if a[3] is not None and any(p != 0 for p in _pair(a[3], 0)):
        raise Unsupported("avg_pool2d with padding (count_include_pad not mapped)")
    if a[4]:
        raise Unsupported("avg_pool2d with ceil_mode")
    if a[6] is not None:
        raise Unsupported("avg_pool2d with divisor_override")


@lower("aten.avg_pool2d.default", check=_avg_pool_check)
def _avg_pool(node, args, kwargs):
    a = list(args) + [None] * 7
    k = _pair(a[1], None)
    return frit.avg_pool2d(a[0], k, _pair(a[2], k), 0)


def _index_check(node, data, idx):
    if _val(idx).dtype not in (torch.int64, torch.int32):
        raise Unsupported("indices of dtype %s" % _val(idx).dtype)
    if 0 in _val(data).shape:
        raise Unsupported("indexing an empty tensor")


@lower("aten.embedding.default", check=lambda n: _index_check(n, n.args[0], n.args[1]))
def _embedding(node, args, kwargs):
    # out-of-range indices raise IndexError when the program runs, as in PyTorch
    return frit.take(args[0], args[1], axis=0)


@lower("aten.index_select.default", check=lambda n: _index_check(n, n.args[0], n.args[2]))
def _index_select(node, args, kwargs):
    x, dim, idx = args
    return frit.take(x, idx, axis=_dim(dim, x.ndim))


def _index_put_check(node):
    idx = node.args[1]
    if any(i is None for i in idx):
        raise Unsupported("%s with slices between the index tensors" % node.target)
    for i in idx:
        if _val(i).dtype not in (torch.int64, torch.int32):
            raise Unsupported("%s with %s indices (masks need their values to size the result)"
                              % (node.target, str(_val(i).dtype).replace("torch.", "")))
    if 0 in _val(node.args[0]).shape:
        raise Unsupported("%s of an empty tensor" % node.target)


@lower("aten.index_put.default", check=_index_put_check)
def _index_put(node, args, kwargs):
    """x[idx] = v (accumulate: x[idx] += v, duplicates adding up, as PyTorch); out-of-range
    indices raise IndexError when the program runs. Duplicates without accumulate: PyTorch leaves
    the winner undefined; frit keeps the last."""
    x, idx, v = args[0], tuple(args[1]), cast(args[2], out_dtype(node))
    acc = args[3] if len(args) > 3 else kwargs.get("accumulate", False)
    return x.at[idx].add(v) if acc else x.at[idx].set(v)


@lower("aten.index.Tensor", check=_index_put_check)
def _index(node, args, kwargs):
    """x[idx0, idx1, ...] with integer index tensors (numpy advanced indexing, as PyTorch)."""
    return args[0][tuple(args[1])]
