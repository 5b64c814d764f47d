"""frit.nn modules: layers holding parameters (float32 frit arrays) and buffers, PyTorch-style
(Linear, Conv2d, pools, BatchNorm, LayerNorm, Dropout, Embedding, Sequential, activations).

A module's forward pass is ordinary frit code, so it runs eagerly, under frit.jit and under
frit.grad. For training, functional_call(module, params, buffers, *args) runs it with given
parameter values (traced ones inside a jitted step) and returns the buffers it updated (the
BatchNorm running statistics); frit.optim.compile_step builds the whole step on it."""
import contextlib
import threading

import numpy as np

from .. import _array as A
from .. import _ops as O
from .. import _shape_ops as SO
from .._errors import FritTypeError
from . import checkpoint
from . import functional as F
from . import init

__all__ = ["Module", "Linear", "Conv2d", "MaxPool2d", "AvgPool2d", "BatchNorm1d", "BatchNorm2d",
           "LayerNorm", "Dropout", "Embedding", "Sequential", "Flatten", "ReLU", "GELU", "SiLU",
           "Tanh", "Sigmoid", "functional_call"]


class _CallState(threading.local):
    # the functional call in progress on this thread: its dropout key, a count of the dropout
    # layers it met (each gets its own stream) and the buffers updated so far
    call = None


_state = _CallState()


class Module:
    """Base class: parameters and buffers are frit arrays set as attributes (registered by
    register_parameter / register_buffer, or any Module attribute for submodules)."""

    def __init__(self):
        object.__setattr__(self, "_params", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        if isinstance(value, Module):
            self._modules[name] = value
        object.__setattr__(self, name, value)

    def register_parameter(self, name, value):
        self._params[name] = None
        object.__setattr__(self, name, _as_param(value))

    def register_buffer(self, name, value):
        self._buffers[name] = None
        object.__setattr__(self, name, _as_param(value))

    def named_modules(self, prefix=""):
        yield prefix, self
        for n, m in self._modules.items():
            yield from m.named_modules(prefix + n + ".")

    def parameters(self):
        """{dotted name: array}, in registration order (a pytree for frit.grad)."""
        return {p + n: getattr(m, n) for p, m in self.named_modules() for n in m._params}

    def buffers(self):
        return {p + n: getattr(m, n) for p, m in self.named_modules() for n in m._buffers}

    def load_parameters(self, params, buffers=None):
        """Sets parameters (and buffers) from {dotted name: array}; shapes must match."""
        for kind, values in (("parameter", params), ("buffer", buffers or {})):
            owned = self.parameters() if kind == "parameter" else self.buffers()
            for name, v in values.items():
                if name not in owned:
                    raise FritTypeError("load: no %s named %r" % (kind, name))
                old = owned[name]
                if tuple(v.shape) != tuple(old.shape):
                    raise FritTypeError("load: %s %r has shape %s, the value %s"
                                        % (kind, name, tuple(old.shape), tuple(v.shape)))
                if np.dtype(str(v.dtype)) != np.dtype(str(old.dtype)):
                    raise FritTypeError("load: %s %r has dtype %s, the value %s"
                                        % (kind, name, old.dtype, v.dtype))
            for name, v in values.items():
                mod, attr = self._owner(name)
                object.__setattr__(mod, attr, v if isinstance(v, A.Array) else _as_param(v))

    def state_dict(self):
        """Parameters and buffers as {dotted name: numpy array} (copies: a compiled training step
        updates the model's arrays in place)."""
        d = {k: np.array(v) for k, v in self.parameters().items()}
        d.update({k: np.array(v) for k, v in self.buffers().items()})
        return d

    def save(self, path):
        """Parameters and buffers to path (.safetensors or .npz)."""
        checkpoint.save(path, self.state_dict())

    def load(self, path, strict=True):
        """Parameters and buffers from path; strict: every one must be in the file and nothing
        else. On any error (shape, dtype, missing name) nothing changes."""
        data = checkpoint.load(path)
        params, buffers = self.parameters(), self.buffers()
        own = dict(params)
        own.update(buffers)
        if strict:
            missing, extra = sorted(set(own) - set(data)), sorted(set(data) - set(own))
            if missing or extra:
                raise FritTypeError("load: %s: missing %s, unexpected %s" % (path, missing, extra))
        for k, v in data.items():
            if k in own and np.dtype(v.dtype) != np.dtype(str(own[k].dtype)):
                raise FritTypeError("load: %s: %r has dtype %s, the model %s" % (path, k, v.dtype, own[k].dtype))
        self.load_parameters({k: v for k, v in data.items() if k in params},
                             {k: v for k, v in data.items() if k in buffers})

    def _owner(self, dotted):
        parts = dotted.split(".")
        mod = self
        for p in parts[:-1]:
            mod = mod._modules[p]
        return mod, parts[-1]

    def train(self, mode=True):
        for _, m in self.named_modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self):
        return self.train(False)

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args):
        raise NotImplementedError


def _as_param(v):
    return v if isinstance(v, A.Array) else A.asarray(np.asarray(v))


@contextlib.contextmanager
def _swapped(module, params, buffers):
    saved = []
    try:
        for values in (params, buffers):
            for name, v in values.items():
                mod, attr = module._owner(name)
                saved.append((mod, attr, getattr(mod, attr)))
                object.__setattr__(mod, attr, v)
        yield
    finally:
        for mod, attr, v in reversed(saved):
            object.__setattr__(mod, attr, v)


class _Call:
    def __init__(self, key):
        self.key, self.count, self.updated = key, 0, {}


def functional_call(module, params, buffers, *args, key=None):
    """module(*args) with the given parameters and buffers ({dotted name: array}) in place of its
    own, which are left unchanged. Returns (output, updated buffers). key: a uint64 0-d array
    seeding the dropout masks (required when a training-mode Dropout runs)."""
    prev = _state.call
    _state.call = call = _Call(key)
    try:
        with _swapped(module, params, buffers):
            names = {id(m): p for p, m in module.named_modules()}
            call.names = names
            out = module(*args)
    finally:
        _state.call = prev
    new_buffers = dict(buffers)
    new_buffers.update(call.updated)
    return out, new_buffers


def _update_buffer(module, name, value):
    call = _state.call
    if call is None:  # eager use: the module keeps the new value
        object.__setattr__(module, name, value)
    else:
        call.updated[call.names[id(module)] + name] = value


class Linear(Module):
    """y = x @ weight + bias, weight (in, out); init as PyTorch (uniform +-1/sqrt(in))."""

    def __init__(self, in_features, out_features, bias=True, rng=None):
        super().__init__()
        bound = 1.0 / np.sqrt(in_features)
        self.register_parameter("weight", init.uniform((in_features, out_features), -bound, bound, rng))
        if bias:
            self.register_parameter("bias", init.uniform((out_features,), -bound, bound, rng))
        self.has_bias = bias

    def forward(self, x):
        return F.linear(x, self.weight, self.bias if self.has_bias else None)


class Conv2d(Module):
    """2-D convolution, NCHW input, weight (out, in/groups, kh, kw)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, rng=None):
        super().__init__()
        kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
        if in_channels % groups or out_channels % groups:
            raise FritTypeError("Conv2d: channels %d -> %d are not divisible by groups %d"
                                % (in_channels, out_channels, groups))
        fan_in = in_channels // groups * kh * kw
        bound = 1.0 / np.sqrt(fan_in)
        self.register_parameter("weight", init.uniform((out_channels, in_channels // groups, kh, kw),
                                                       -bound, bound, rng))
        if bias:
            self.register_parameter("bias", init.uniform((out_channels,), -bound, bound, rng))
        self.has_bias = bias
        self.conf = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)

    def forward(self, x):
        return F.conv2d(x, self.weight, self.bias if self.has_bias else None, **self.conf)


class MaxPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.conf = (kernel_size, stride, padding)

    def forward(self, x):
        return F.max_pool2d(x, *self.conf)


class AvgPool2d(MaxPool2d):
    def forward(self, x):
        return F.avg_pool2d(x, *self.conf)


class _BatchNorm(Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True):
        super().__init__()
        self.eps, self.momentum, self.affine = eps, momentum, affine
        if affine:
            self.register_parameter("weight", np.ones(num_features, np.float32))
            self.register_parameter("bias", np.zeros(num_features, np.float32))
        self.register_buffer("running_mean", np.zeros(num_features, np.float32))
        self.register_buffer("running_var", np.ones(num_features, np.float32))

    def forward(self, x):
        y, m, v = F.batch_norm(x, self.running_mean, self.running_var,
                               self.weight if self.affine else None,
                               self.bias if self.affine else None, self.training, self.momentum,
                               self.eps)
        if self.training:
            _update_buffer(self, "running_mean", m)
            _update_buffer(self, "running_var", v)
        return y


class BatchNorm1d(_BatchNorm):
    pass


class BatchNorm2d(_BatchNorm):
    pass


class LayerNorm(Module):
    def __init__(self, shape, eps=1e-5, elementwise_affine=True):
        super().__init__()
        self.shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self.eps, self.affine = eps, elementwise_affine
        if elementwise_affine:
            self.register_parameter("weight", np.ones(self.shape, np.float32))
            self.register_parameter("bias", np.zeros(self.shape, np.float32))

    def forward(self, x):
        return F.layer_norm(x, self.shape, self.weight if self.affine else None,
                            self.bias if self.affine else None, self.eps)


class Dropout(Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        call = _state.call
        if call is None or call.key is None:
            raise FritTypeError("Dropout: a training-mode Dropout needs a key: run the model through "
                                "functional_call(..., key=) or frit.optim.compile_step, or call "
                                "model.eval()")
        call.count += 1
        return F.dropout(x, self.p, call.key * np.uint64(1000003) + np.uint64(call.count))


class Embedding(Module):
    def __init__(self, num_embeddings, dim, rng=None):
        super().__init__()
        self.register_parameter("weight", init.normal((num_embeddings, dim), 1.0, rng))

    def forward(self, idx):
        return F.embedding(idx, self.weight)


class Sequential(Module):
    def __init__(self, *layers):
        super().__init__()
        for i, layer in enumerate(layers):
            setattr(self, str(i), layer)
        self.layers = list(layers)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class Flatten(Module):
    """(N, ...) -> (N, prod(...))."""

    def forward(self, x):
        return SO.reshape(x, (x.shape[0], -1))


def _activation(name, fn):
    cls = type(name, (Module,), {"forward": lambda self, x: fn(x), "__doc__": name + " activation"})
    return cls


ReLU = _activation("ReLU", F.relu)
GELU = _activation("GELU", F.gelu)
SiLU = _activation("SiLU", F.silu)
Tanh = _activation("Tanh", F.tanh)
Sigmoid = _activation("Sigmoid", F.sigmoid)
