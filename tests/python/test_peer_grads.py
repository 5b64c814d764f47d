"""The Fashion-MNIST models' first training step against peer frameworks (issue 11's oracle):
the loss and every parameter gradient of examples/fashion_mnist.py's MLP and CNN, on the same
weights and batch, computed by frit (eager and inside the compiled training step) and by JAX
(installed by tests/python/requirements.txt) and PyTorch (when it imports: a 5 GB install, so
CI's venv does not carry it). The peers build the model from their own ops, so a frontend that
builds the wrong graph or a wrong VJP rule shows as a difference."""
import os
import sys

import numpy as np
import pytest

import frit
from frit import nn, optim

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import fashion_mnist as fm  # noqa: E402

BATCH = 32


def _batch(seed=0):
    x, y, _, _ = fm.synthetic(BATCH * 6 // 5 + 8, seed)
    return x[:BATCH].reshape(BATCH, 1, 28, 28).astype(np.float32), y[:BATCH].astype(np.int64)


def _models():
    return {"mlp": fm.mlp(), "cnn": fm.cnn(8, 16, 128)}


def _frit_loss_and_grads(model, x, y):
    params = model.parameters()

    def loss_of(p):
        out, _ = nn.functional_call(model, p, model.buffers(), x)
        return nn.cross_entropy(out, y)
    loss, g = frit.value_and_grad(loss_of)(params)
    return float(loss), {k: np.asarray(v) for k, v in g.items()}


# ------------------------------------------------------------------ JAX's forward, from lax ops
def _jax_forward(kind, p, x):
    import jax
    import jax.numpy as jnp
    from jax import lax

    def gelu(v):
        return jax.nn.gelu(v, approximate=False)

    def pool(v):
        return lax.reduce_window(v, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")

    def conv(v, w, b):
        o = lax.conv_general_dilated(v, w, (1, 1), ((2, 2), (2, 2)), dimension_numbers=("NCHW", "OIHW", "NCHW"),
                                     precision=lax.Precision.HIGHEST)
        return o + b[None, :, None, None]
    dot = lambda a, b: jnp.dot(a, b, precision=lax.Precision.HIGHEST)  # noqa: E731
    if kind == "mlp":
        h = jnp.maximum(dot(x.reshape(x.shape[0], -1), p["1.weight"]) + p["1.bias"], 0)
        return dot(h, p["3.weight"]) + p["3.bias"]
    h = gelu(pool(conv(x, p["0.weight"], p["0.bias"])))
    h = gelu(pool(conv(h, p["3.weight"], p["3.bias"])))
    h = gelu(dot(h.reshape(h.shape[0], -1), p["7.weight"]) + p["7.bias"])
    return dot(h, p["9.weight"]) + p["9.bias"]


def _jax_loss_and_grads(kind, params, x, y):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", False)
    import jax.numpy as jnp

    def loss_of(p):
        logits = _jax_forward(kind, p, jnp.asarray(x))
        return -jnp.mean(jax.nn.log_softmax(logits, axis=1)[jnp.arange(len(y)), jnp.asarray(y)])
    loss, g = jax.value_and_grad(loss_of)({k: jnp.asarray(np.asarray(v)) for k, v in params.items()})
    return float(loss), {k: np.asarray(v) for k, v in g.items()}


def _torch_loss_and_grads(kind, params, x, y):
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    p = {k: torch.tensor(np.asarray(v), requires_grad=True) for k, v in params.items()}
    xt = torch.from_numpy(x)
    if kind == "mlp":
        h = F.relu(xt.reshape(len(x), -1) @ p["1.weight"] + p["1.bias"])
        logits = h @ p["3.weight"] + p["3.bias"]
    else:
        h = F.gelu(F.max_pool2d(F.conv2d(xt, p["0.weight"], p["0.bias"], padding=2), 2))
        h = F.gelu(F.max_pool2d(F.conv2d(h, p["3.weight"], p["3.bias"], padding=2), 2))
        h = F.gelu(h.reshape(len(x), -1) @ p["7.weight"] + p["7.bias"])
        logits = h @ p["9.weight"] + p["9.bias"]
    loss = F.cross_entropy(logits, torch.from_numpy(y))
    loss.backward()
    return loss.item(), {k: v.grad.numpy() for k, v in p.items()}


def _close(name, got, want):
    # f32 through different summation orders: relative to the gradient's own scale
    scale = max(np.abs(want).max(), 1e-6)
    err = np.abs(got - want).max() / scale
    assert err < 2e-4, "%s: max |frit - peer| / max|peer| = %.3g" % (name, err)


@pytest.mark.parametrize("peer", ["jax", "torch"])
@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_first_step_gradients_match_peer(kind, peer):
    x, y = _batch()
    model = _models()[kind]
    params = model.parameters()
    ref = _jax_loss_and_grads if peer == "jax" else _torch_loss_and_grads
    want_loss, want = ref(kind, params, x, y)
    got_loss, got = _frit_loss_and_grads(model, x, y)
    assert abs(got_loss - want_loss) <= 1e-5 * max(1.0, abs(want_loss))
    assert set(got) == set(want)
    for k in want:
        assert got[k].shape == want[k].shape, k
        _close(k, got[k], want[k])


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_compiled_step_matches_peer_sgd(kind):
    """The whole compiled step (forward, backward, update in one program): with plain SGD the
    new parameters are p - lr * g, g from JAX."""
    x, y = _batch(1)
    model = _models()[kind]
    before = {k: np.asarray(v).copy() for k, v in model.parameters().items()}
    _, want = _jax_loss_and_grads(kind, before, x, y)
    lr = 0.1
    step = optim.compile_step(model, nn.cross_entropy, optim.SGD(lr))
    step(x, y)
    after = model.parameters()
    for k in before:
        _close(k, (before[k] - np.asarray(after[k])) / lr, want[k])
