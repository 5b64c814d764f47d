"""ATen -> frit lowerings of reductions, arg-reductions, scans, splits and gathers (sum, mean,
amax, var, max.dim, argmax, cumsum, split, gather), registered in _lower.LOWER."""
import torch

import frit

from ._lower import (lower, Unsupported, _val, _dim, _dims, cast, out_dtype, _fd, _float_only,
                     _out_float)

# --- reductions

@lower("aten.sum.dim_IntList", "aten.sum.default")
def _sum(node, args, kwargs):
    x = args[0]
    dims = _dims(args[1] if len(args) > 1 else None, x.ndim)
    keep = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
    return frit.sum(x, axis=dims, dtype=_fd(out_dtype(node)), keepdims=keep)


@lower("aten.mean.dim", "aten.mean.default", check=_out_float)
def _mean(node, args, kwargs):
    x = cast(args[0], out_dtype(node))
    dims = _dims(args[1] if len(args) > 1 else None, x.ndim)
    keep = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
    return frit.mean(x, axis=dims, keepdims=keep)


def _nonempty_reduce(node):
    if 0 in _val(node.args[0]).shape:
        raise Unsupported("max/min over an empty tensor (raises in PyTorch)")


@lower("aten.amax.default", check=_nonempty_reduce)
def _amax(node, args, kwargs):
    x = args[0]
    keep = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
    return frit.max(x, axis=_dims(args[1] if len(args) > 1 else None, x.ndim), keepdims=keep)


@lower("aten.amin.default", check=_nonempty_reduce)
def _amin(node, args, kwargs):
    x = args[0]
    keep = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
    return frit.min(x, axis=_dims(args[1] if len(args) > 1 else None, x.ndim), keepdims=keep)


@lower("aten.cumsum.default")
def _cumsum(node, args, kwargs):
    x = cast(args[0], out_dtype(node))
    return frit.cumsum(x, axis=_dim(args[1], x.ndim)) if x.ndim else x


@lower("aten.max.default", check=_nonempty_reduce)
def _max_all(node, args, kwargs):
    return frit.max(args[0])


@lower("aten.min.default", check=_nonempty_reduce)
def _min_all(node, args, kwargs):
    return frit.min(args[0])


def _arg_check(node):
    _nonempty_reduce(node)
    _float_or_int_input(node)


def _float_or_int_input(node):
    if _val(node.args[0]).dtype == torch.bool:
        raise Unsupported("%s of bool" % node.target)


@lower("aten.max.dim", "aten.min.dim", check=_arg_check)
def _max_dim(node, args, kwargs):
    x = args[0]
    d = _dim(args[1], x.ndim)
    keep = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
    if str(node.target) == "aten.max.dim":
        return frit.max(x, axis=d, keepdims=keep), frit.argmax(x, axis=d, keepdims=keep)
    return frit.min(x, axis=d, keepdims=keep), frit.argmin(x, axis=d, keepdims=keep)


@lower("aten.argmax.default", "aten.argmin.default", check=_arg_check)
def _argmax(node, args, kwargs):
    x = args[0]
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    keep = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
    f = frit.argmax if str(node.target) == "aten.argmax.default" else frit.argmin
    if dim is None:
        r = f(frit.reshape(x, (-1,)))
        return frit.reshape(r, (1,) * x.ndim) if keep else r
    return f(x, axis=_dim(dim, x.ndim), keepdims=keep)


@lower("aten.split_with_sizes.default", "aten.split.Tensor")
def _split(node, args, kwargs):
    x = args[0]
    dim = _dim(args[2] if len(args) > 2 else kwargs.get("dim", 0), x.ndim)
    out, start = [], 0
    for v in _val(node):
        n = v.shape[dim]
        idx = [slice(None)] * x.ndim
        idx[dim] = slice(start, start + n)
        out.append(x[tuple(idx)])
        start += n
    return tuple(out)


def _gather_check(node):
    if _val(node.args[2]).dtype not in (torch.int64, torch.int32):
        raise Unsupported("gather indices of dtype %s" % _val(node.args[2]).dtype)
    if node.kwargs.get("sparse_grad"):
        raise Unsupported("gather with sparse_grad")
    if 0 in _val(node.args[0]).shape or _val(node.args[0]).dim() != _val(node.args[2]).dim():
        raise Unsupported("gather of an empty tensor or with an index of another rank")


@lower("aten.gather.default", check=_gather_check)
def _gather(node, args, kwargs):
    x, dim, idx = args[0], _dim(args[1], args[0].ndim), args[2]
    # PyTorch reads only the index's extent along the other axes
    sl = tuple(slice(None) if d == dim else slice(0, idx.shape[d]) for d in range(x.ndim))
    return frit.take_along_axis(x[sl], idx, axis=dim)


def _anyall(f):
    def run(node, args, kwargs):
        x = args[0]
        dims = _dims(args[1] if len(args) > 1 else kwargs.get("dim"), x.ndim)
        keep = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
        return f(x, axis=dims, keepdims=keep)
    return run


lower("aten.any.dim", "aten.any.dims", "aten.any.default")(_anyall(frit.any))
lower("aten.all.dim", "aten.all.dims", "aten.all.default")(_anyall(frit.all))


def _var_parts(args, kwargs):
    x = args[0]
    dims = _dims(args[1] if len(args) > 1 else kwargs.get("dim"), x.ndim)
    corr = kwargs.get("correction")
    corr = 1 if corr is None else corr
    keep = kwargs.get("keepdim", False)
    mean = frit.mean(x, axis=dims, keepdims=True)
    n = 1
    for d in dims:
        n *= x.shape[d]
    ss = frit.sum(frit.square(x - mean), axis=dims, keepdims=keep)
    var = ss / (n - corr) if n - corr > 0 else ss * float("nan") if n - corr < 0 else ss / 0.0
    return var, (mean if keep else frit.reshape(mean, tuple(s for i, s in enumerate(x.shape)
                                                              if i not in dims)))


lower("aten.var.correction", check=_float_only)(lambda n, a, k: _var_parts(a, k)[0])
lower("aten.var_mean.correction", check=_float_only)(lambda n, a, k: _var_parts(a, k))
