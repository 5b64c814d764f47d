"""ATen -> frit lowerings of the contractions and neural-network ops (mm, addmm, convolution and
its backward, batch and layer norm, softmax and their backward ops), registered in _lower.LOWER."""
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


def _conv_check(node):
    _float_only(node)
    a = node.args
    if len(_val(a[0]).shape) != 4:
        raise Unsupported("convolution of rank %d input (2-d convolutions only)" % len(_val(a[0]).shape))
    if a[6]:
        raise Unsupported("transposed convolution")


@lower("aten.convolution.default", check=_conv_check)
def _convolution(node, args, kwargs):
    x, w, b, stride, padding, dilation, _tr, _op, groups = args
    return _C(frit.conv2d(_C(x), _C(w), b, stride=tuple(stride), padding=tuple(padding),
                          dilation=tuple(dilation), groups=groups))


def _conv_bw_check(node):
    _float_only(node)
    a = node.args
    if len(_val(a[1]).shape) != 4:
        raise Unsupported("convolution of rank %d input (2-d convolutions only)" % len(_val(a[1]).shape))
    if a[7]:
        raise Unsupported("transposed convolution")


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


@lower("aten._native_batch_norm_legit_no_training.default", check=_float_only)
def _bn_eval(node, args, kwargs):
    x, w, b, rm, rv, _momentum, eps = args
    inv = frit.rsqrt(rv + eps)
    y = (x - _bn_shape(x, rm)) * _bn_shape(x, inv)
    if w is not None:
        y = y * _bn_shape(x, w)
    if b is not None:
        y = y + _bn_shape(x, b)
    return (y, frit.zeros((0,), x.dtype), frit.zeros((0,), x.dtype))


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
    y = (x - _bn_shape(x, mean)) * _bn_shape(x, rstd)
    if w is not None:
        y = y * _bn_shape(x, w)
    if b is not None:
        y = y + _bn_shape(x, b)
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
