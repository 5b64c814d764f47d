"""frit.nn.functional: the neural-network functions, as plain frit ops (differentiable with
frit.grad, traceable by frit.jit). Layouts follow PyTorch: NCHW images, OIHW conv weights,
(in, out) Linear weights as x @ W."""
import numpy as np

from .. import _array as A
from .._errors import FritTypeError
from .._ops import (relu, gelu, sigmoid, softmax, log_softmax, logsumexp, conv2d,  # noqa: F401
                    max_pool2d, avg_pool2d, one_hot)
from .. import _ops as O
from .. import _shape_ops as SO

__all__ = ["relu", "gelu", "sigmoid", "softmax", "log_softmax", "logsumexp", "conv2d",
           "max_pool2d", "avg_pool2d", "one_hot", "silu", "tanh", "linear", "layer_norm",
           "batch_norm", "dropout", "embedding", "cross_entropy", "nll_loss", "mse_loss",
           "l1_loss", "uniform_from_key"]


def _arr(x):
    return x if isinstance(x, A.Array) else A.asarray(x)


def silu(x):
    x = _arr(x)
    return x * sigmoid(x)


def tanh(x):
    return O.tanh(_arr(x))


def linear(x, weight, bias=None):
    """x @ weight (+ bias); weight is (in_features, out_features)."""
    y = _arr(x) @ weight
    return y if bias is None else y + bias


def layer_norm(x, shape, weight=None, bias=None, eps=1e-5):
    """Normalises over the last len(shape) axes (biased variance, as PyTorch)."""
    x = _arr(x)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    mu = O.mean(x, axis=axes, keepdims=True)
    d = x - mu
    var = O.mean(d * d, axis=axes, keepdims=True)
    y = d * O.rsqrt(var + eps)
    if weight is not None:
        y = y * weight
    return y if bias is None else y + bias


def batch_norm(x, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Batch norm over every axis but 1 (N, C, ...). Returns (y, new_mean, new_var): in training
    the batch statistics normalise and the running ones move by momentum (unbiased variance, as
    PyTorch); in evaluation the running ones normalise and come back unchanged."""
    x = _arr(x)
    axes = (0,) + tuple(range(2, x.ndim))
    bshape = (1, -1) + (1,) * (x.ndim - 2)
    if training:
        mu = O.mean(x, axis=axes)
        var = O.mean((x - SO.reshape(mu, bshape)) ** 2, axis=axes)
        n = 1
        for a in axes:
            n *= x.shape[a] if x.shape[a] is not None else 0
        unbiased = var * (n / (n - 1)) if n > 1 else var
        new_mean = (1 - momentum) * running_mean + momentum * mu
        new_var = (1 - momentum) * running_var + momentum * unbiased
    else:
        mu, var, new_mean, new_var = running_mean, running_var, running_mean, running_var
    y = (x - SO.reshape(mu, bshape)) * SO.reshape(O.rsqrt(var + eps), bshape)
    if weight is not None:
        y = y * SO.reshape(weight, bshape)
    if bias is not None:
        y = y + SO.reshape(bias, bshape)
    return y, new_mean, new_var


def uniform_from_key(key, shape, dtype="float32"):
    """Uniform [0, 1) numbers from a traced uint64 key (a 0-d array): element i is the splitmix64
    finaliser of key * golden + i, so a jitted step given a new key draws new numbers without
    tracing again (frit.random's draws are fixed when traced)."""
    key = O.astype(_arr(key), "uint64")
    n = 1
    for d in shape:
        n *= d
    i = SO.reshape(O.arange(n, dtype="uint64"), shape) if shape else O.asarray(0, dtype="uint64")
    z = i + key * np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return O.astype(z >> np.uint64(40), dtype) * (1.0 / (1 << 24))


def dropout(x, p, key, training=True):
    """Zeroes each element with probability p and scales the rest by 1/(1-p) (inverted dropout);
    the mask comes from key (uniform_from_key). An identity when not training or p == 0."""
    x = _arr(x)
    if not training or p == 0:
        return x
    if not 0 <= p < 1:
        raise FritTypeError("dropout: p must be in [0, 1), got %r" % (p,))
    if None in x.shape:
        raise FritTypeError("dropout: needs static shapes (jit with dynamic=False), got %s"
                            % (x.shape,))
    keep = uniform_from_key(key, x.shape) >= p
    return O.where(keep, x * (1.0 / (1.0 - p)), 0.0)


def embedding(idx, weight):
    """Rows of weight (num_embeddings, dim) at integer idx: shape idx.shape + (dim,)."""
    return O.take(weight, _arr(idx), axis=0)


def _reduce(v, reduction, who):
    if reduction == "mean":
        return O.mean(v)
    if reduction == "sum":
        return O.sum(v)
    if reduction == "none":
        return v
    raise FritTypeError("%s: reduction must be 'mean', 'sum' or 'none', not %r" % (who, reduction))


def nll_loss(logp, target, reduction="mean"):
    """Negative log-likelihood of integer class targets (N,) in [0, C) under log-probabilities
    (N, C). The pick is a compare with the class index (a one-hot mask), so forward and backward
    stay elementwise and fuse (a gather's gradient would be a scatter). A target outside [0, C)
    raises when the targets are known (eager); while tracing its row's loss is NaN."""
    logp, target = _arr(logp), _arr(target)
    if logp.ndim != 2 or target.ndim != 1 or target.dtype.kind not in "iu":
        raise FritTypeError("nll_loss: needs log-probabilities (N, C) and integer targets (N,), got "
                            "%s %s and %s %s" % (logp.shape, logp.dtype, target.shape, target.dtype))
    n_cls = logp.shape[1]
    if not target._n.abstract and isinstance(n_cls, int):
        t = np.asarray(target)
        if t.size and (t.min() < 0 or t.max() >= n_cls):
            raise FritTypeError("nll_loss: targets must lie in [0, %d) for log-probabilities of shape %s; "
                                "got values from %d to %d" % (n_cls, logp.shape, t.min(), t.max()))
    t = SO.reshape(O.astype(target, "int64"), (-1, 1))
    hit = O.equal(SO.arange(n_cls, dtype="int64"), t)
    picked = O.sum(O.where(hit, logp, 0), axis=1)
    valid = SO.reshape(O.logical_and(O.greater_equal(t, 0), O.less(t, n_cls)), (-1,))
    picked = O.where(valid, picked, np.nan)
    return _reduce(-picked, reduction, "nll_loss")


def cross_entropy(logits, target, reduction="mean"):
    """Cross-entropy of integer class targets (N,) and logits (N, C), through log_softmax."""
    return nll_loss(log_softmax(_arr(logits), axis=1), target, reduction)


def mse_loss(pred, target, reduction="mean"):
    d = _arr(pred) - target
    return _reduce(d * d, reduction, "mse_loss")


def l1_loss(pred, target, reduction="mean"):
    return _reduce(O.abs(_arr(pred) - target), reduction, "l1_loss")
