"""frit.optim: optimizers (SGD with momentum/Nesterov, Adam, AdamW, RMSProp), gradient clipping,
L1/L2 regularisation, learning-rate schedules, and compile_step: forward, backward and update of
a frit.nn module as one compiled program. See docs/training.md.

An optimizer is pure: init(params) -> state and update(params, grads, state, lr) ->
(params, state) work on pytrees ({name: array}) and trace under frit.jit. The learning rate is an
argument (a traced scalar), so a schedule never causes a new trace."""
import math

import numpy as np

from .. import _array as A
from .. import _ops as O
from .._autodiff import value_and_grad
from .._errors import FritTypeError
from .._jit import jit
from ..nn.modules import functional_call

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSProp", "clip_grad_norm", "clip_grad_value", "global_norm",
           "step_lr", "cosine_lr", "warmup", "compile_step", "TrainStep"]


def _map(fn, *trees):
    return {k: fn(*[t[k] for t in trees]) for k in trees[0]}


def global_norm(grads):
    total = None
    for g in grads.values():
        s = O.sum(g * g)
        total = s if total is None else total + s
    return O.sqrt(total)


def clip_grad_norm(grads, max_norm):
    """Scales all gradients by min(1, max_norm / global L2 norm)."""
    scale = O.minimum(1.0, max_norm / (global_norm(grads) + 1e-12))
    return _map(lambda g: g * O.astype(scale, g.dtype), grads)


def clip_grad_value(grads, value):
    return _map(lambda g: O.clip(g, -value, value), grads)


class Optimizer:
    """lr: a float or a schedule (a function of the step number). weight_decay: L2, added to the
    gradient (decoupled in AdamW); l1: l1 * sign(p) added to the gradient. clip_norm /
    clip_value: gradient clipping before the update."""

    def __init__(self, lr, weight_decay=0.0, l1=0.0, clip_norm=None, clip_value=None):
        if not callable(lr) and not lr > 0:
            raise FritTypeError("%s: lr must be positive, got %r" % (type(self).__name__, lr))
        self.lr, self.weight_decay, self.l1 = lr, weight_decay, l1
        self.clip_norm, self.clip_value = clip_norm, clip_value

    def lr_at(self, step):
        return float(self.lr(step)) if callable(self.lr) else float(self.lr)

    def init(self, params):
        return {"step": np.zeros((), np.float32)}

    def prepare(self, params, grads, coupled_decay=True):
        if self.clip_value is not None:
            grads = clip_grad_value(grads, self.clip_value)
        if self.clip_norm is not None:
            grads = clip_grad_norm(grads, self.clip_norm)
        if self.weight_decay and coupled_decay:
            grads = _map(lambda g, p: g + self.weight_decay * p, grads, params)
        if self.l1:
            grads = _map(lambda g, p: g + self.l1 * O.sign(p), grads, params)
        return grads

    def update(self, params, grads, state, lr):
        raise NotImplementedError


def _zeros_like(params):
    return {k: np.zeros(tuple(v.shape), np.dtype(str(v.dtype))) for k, v in params.items()}


class SGD(Optimizer):
    def __init__(self, lr, momentum=0.0, nesterov=False, **kw):
        super().__init__(lr, **kw)
        if nesterov and momentum <= 0:
            raise FritTypeError("SGD: nesterov needs momentum > 0")
        self.momentum, self.nesterov = momentum, nesterov

    def init(self, params):
        s = super().init(params)
        if self.momentum:
            s["v"] = _zeros_like(params)
        return s

    def update(self, params, grads, state, lr):
        g = self.prepare(params, grads)
        new = {"step": state["step"] + 1}
        if self.momentum:
            v = _map(lambda v, g: self.momentum * v + g, state["v"], g)
            new["v"] = v
            g = _map(lambda g, v: g + self.momentum * v, g, v) if self.nesterov else v
        return _map(lambda p, g: p - O.astype(lr, p.dtype) * g, params, g), new


class Adam(Optimizer):
    decoupled = False

    def __init__(self, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, **kw):
        super().__init__(lr, **kw)
        self.b1, self.b2 = betas
        self.eps = eps

    def init(self, params):
        s = super().init(params)
        s["m"], s["v"] = _zeros_like(params), _zeros_like(params)
        return s

    def update(self, params, grads, state, lr):
        g = self.prepare(params, grads, coupled_decay=not self.decoupled)
        t = state["step"] + 1
        m = _map(lambda m, g: self.b1 * m + (1 - self.b1) * g, state["m"], g)
        v = _map(lambda v, g: self.b2 * v + (1 - self.b2) * g * g, state["v"], g)
        c1 = 1 - O.pow(np.float32(self.b1), t)
        c2 = 1 - O.pow(np.float32(self.b2), t)
        step = lr * O.sqrt(c2) / c1

        def upd(p, m, v):
            q = p - O.astype(step, p.dtype) * m / (O.sqrt(v) + self.eps * O.astype(O.sqrt(c2), p.dtype))
            if self.decoupled and self.weight_decay:
                q = q - O.astype(lr * self.weight_decay, p.dtype) * p
            return q

        return _map(upd, params, m, v), {"step": t, "m": m, "v": v}


class AdamW(Adam):
    """Adam with decoupled weight decay (default 0.01)."""
    decoupled = True

    def __init__(self, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01, **kw):
        super().__init__(lr, betas, eps, weight_decay=weight_decay, **kw)


class RMSProp(Optimizer):
    def __init__(self, lr=1e-2, alpha=0.99, eps=1e-8, momentum=0.0, **kw):
        super().__init__(lr, **kw)
        self.alpha, self.eps, self.momentum = alpha, eps, momentum

    def init(self, params):
        s = super().init(params)
        s["sq"] = _zeros_like(params)
        if self.momentum:
            s["buf"] = _zeros_like(params)
        return s

    def update(self, params, grads, state, lr):
        g = self.prepare(params, grads)
        sq = _map(lambda s, g: self.alpha * s + (1 - self.alpha) * g * g, state["sq"], g)
        d = _map(lambda g, s: g / (O.sqrt(s) + self.eps), g, sq)
        new = {"step": state["step"] + 1, "sq": sq}
        if self.momentum:
            d = new["buf"] = _map(lambda b, d: self.momentum * b + d, state["buf"], d)
        return _map(lambda p, d: p - O.astype(lr, p.dtype) * d, params, d), new


def step_lr(base, step_size, gamma=0.1):
    return lambda step: base * gamma ** (step // step_size)


def cosine_lr(base, total_steps, min_lr=0.0):
    return lambda step: min_lr + 0.5 * (base - min_lr) * (1 + math.cos(math.pi * min(step, total_steps) / total_steps))


def warmup(schedule, steps):
    """Linear warm-up over `steps` into schedule (a float or a function of the step)."""
    f = schedule if callable(schedule) else (lambda step: schedule)
    return lambda step: f(step) * min(1.0, (step + 1) / steps)


def _own(tree):
    """Copies of a {name: array} tree, so that donation overwrites only memory the step owns."""
    return {k: v.copy() if isinstance(v, A.Array) else np.array(v) for k, v in tree.items()}


class TrainStep:
    """One training step of model as one compiled program: forward, loss, backward, gradient
    transforms and the optimizer update (params, buffers and optimizer state in, new ones out).
    Call with (inputs, targets) (each an array or a tuple of arrays): returns the loss (a 0-d
    array) and leaves the model holding the new parameters and buffers.

    donate=True (the default): parameters, buffers and optimizer state are donated to the step
    (frit.jit donate_argnums), so each step updates them in place and allocates only the loss.
    The step copies the model's arrays once when built; an array read from the model between
    steps (np.asarray(model.fc.weight)) is the live state, which the next step overwrites: copy it
    to keep it (model.state_dict() copies). docs/training.md "In-place updates"."""

    def __init__(self, model, loss_fn, optimizer, dynamic=False, donate=True):
        from .. import distributed as dist
        self.model, self.loss_fn, self.opt = model, loss_fn, optimizer
        self.donate = bool(donate)
        # data parallel (frit.distributed.init under mpirun): every rank starts from rank 0's
        # parameters, and the step averages the gradients and the loss over the ranks
        self.world = dist.size()
        if self.world > 1:
            model.load_parameters(_own(dist.broadcast_tree(model.parameters())), model.buffers())
        if self.donate:
            model.load_parameters(_own(model.parameters()), _own(model.buffers()))
        self.params = model.parameters()
        self.buffers = model.buffers()
        self.state = optimizer.init(self.params)
        self.step = 0

        def step(params, buffers, state, key, lr, inputs, targets):
            def loss_of(p):
                out, nb = functional_call(model, p, buffers, *inputs, key=key)
                return loss_fn(out, *targets), nb

            (loss, nb), g = value_and_grad(loss_of, has_aux=True)(params)
            if self.world > 1:
                g = dist.average_gradients(g)
                loss = dist.all_reduce(loss, "mean")
            p2, s2 = optimizer.update(params, g, state, lr)
            return loss, p2, nb, s2

        self.jitted = jit(step, dynamic=dynamic, donate_argnums=(0, 1, 2) if self.donate else ())

    def _args(self, inputs, targets):
        inputs = inputs if isinstance(inputs, tuple) else (inputs,)
        targets = targets if isinstance(targets, tuple) else (targets,)
        key = np.asarray(self.step, np.uint64)
        lr = np.asarray(self.opt.lr_at(self.step), np.float32)
        return self.params, self.buffers, self.state, key, lr, inputs, targets

    def __call__(self, inputs, targets):
        self.model.train()
        loss, self.params, self.buffers, self.state = self.jitted(*self._args(inputs, targets))
        self.step += 1
        self.model.load_parameters(self.params, self.buffers)
        return loss

    def save(self, path):
        """Parameters, buffers, optimizer state ("optim/<slot>/<name>") and the step count."""
        from ..nn import checkpoint
        d = self.model.state_dict()
        for slot, v in self.state.items():
            if isinstance(v, dict):
                d.update({"optim/%s/%s" % (slot, k): np.asarray(a) for k, a in v.items()})
            else:
                d["optim/" + slot] = np.asarray(v)
        d["optim/__step__"] = np.asarray(self.step, np.int64)
        from .. import distributed as dist
        if dist.rank() == 0:  # data parallel: the ranks hold the same state; one writes it
            checkpoint.save(path, d)
        if dist.size() > 1:
            dist.barrier()  # the file is complete before any rank goes on (to load it, say)

    def load(self, path):
        """Everything save wrote; on any error nothing changes."""
        from ..nn import checkpoint
        data = checkpoint.load(path)
        state = {}
        for slot, v in self.state.items():
            if isinstance(v, dict):
                state[slot] = {}
                for k, a in v.items():
                    key = "optim/%s/%s" % (slot, k)
                    if key not in data or data[key].shape != tuple(a.shape):
                        raise FritTypeError("load: %s: optimizer state %r is missing or of another shape" % (path, key))
                    state[slot][k] = data[key]
            else:
                if "optim/" + slot not in data:
                    raise FritTypeError("load: %s: optimizer state %r is missing" % (path, "optim/" + slot))
                state[slot] = data["optim/" + slot].astype(np.asarray(v).dtype)
        if "optim/__step__" not in data:
            raise FritTypeError("load: %s: no step count (not a TrainStep checkpoint)" % path)
        model_part = {k: v for k, v in data.items() if not k.startswith("optim/")}
        own = dict(self.model.parameters())
        own.update(self.model.buffers())
        if set(own) != set(model_part):
            raise FritTypeError("load: %s: the model's names differ: missing %s, unexpected %s"
                                % (path, sorted(set(own) - set(model_part)), sorted(set(model_part) - set(own))))
        params = {k: v for k, v in model_part.items() if k in self.model.parameters()}
        buffers = {k: v for k, v in model_part.items() if k not in params}
        self.model.load_parameters(params, buffers)  # checks shapes before setting any
        self.params, self.buffers = self.model.parameters(), self.model.buffers()
        self.state, self.step = state, int(data["optim/__step__"])

    def lower(self, inputs, targets):
        """The compiled program of a step on these arrays (.kernels, .ir(), .source)."""
        return self.jitted.lower(*self._args(inputs, targets))


def compile_step(model, loss_fn, optimizer, dynamic=False, donate=True):
    return TrainStep(model, loss_fn, optimizer, dynamic, donate)
