"""Buffer donation (frit.jit donate_argnums, TrainStep): results equal to the same step without
donation and to numpy, outputs in the donated arrays' memory, reads of a donated input after its
update still see the old value, and what a donated argument refers to afterwards."""
import numpy as np
import pytest

import frit
from frit import nn, optim
from frit._errors import FritError, FritTypeError


# ---------------------------------------------------------------- numpy oracle of an MLP step

def _np_mlp_grads(P, x, y):
    """loss and gradients of Linear-ReLU-Linear + mean cross-entropy, in float64."""
    W1, b1, W2, b2 = (P[k].astype(np.float64) for k in ("0.weight", "0.bias", "2.weight", "2.bias"))
    x = x.astype(np.float64)
    h = x @ W1 + b1
    r = np.maximum(h, 0)
    z = r @ W2 + b2
    z = z - z.max(axis=1, keepdims=True)
    lse = np.log(np.exp(z).sum(axis=1, keepdims=True))
    logp = z - lse
    n = len(y)
    loss = -logp[np.arange(n), y].mean()
    dz = np.exp(logp)
    dz[np.arange(n), y] -= 1
    dz /= n
    dr = dz @ W2.T
    dh = dr * (h > 0)
    return loss, {"0.weight": x.T @ dh, "0.bias": dh.sum(0), "2.weight": r.T @ dz, "2.bias": dz.sum(0)}


def _np_train(P, opt, steps):
    P = {k: v.astype(np.float64) for k, v in P.items()}
    st = {k: (np.zeros_like(v), np.zeros_like(v)) for k, v in P.items()}
    losses = []
    for t, (x, y) in enumerate(steps, 1):
        loss, G = _np_mlp_grads(P, x, y)
        losses.append(loss)
        for k in P:
            a, b = st[k]
            if opt == "sgd":
                a = 0.9 * a + G[k]
                P[k] = P[k] - 0.05 * a
            else:
                a = 0.9 * a + 0.1 * G[k]
                b = 0.999 * b + 0.001 * G[k] ** 2
                mhat, vhat = a / (1 - 0.9 ** t), b / (1 - 0.999 ** t)
                P[k] = P[k] - 0.01 * mhat / (np.sqrt(vhat) + 1e-8)
            st[k] = (a, b)
    return losses, P


def _batches(shape, nclass, n=4, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((8,) + shape).astype(np.float32), rng.integers(0, nclass, 8)) for _ in range(n)]


def _make_opt(kind):
    return optim.SGD(0.05, momentum=0.9) if kind == "sgd" else optim.Adam(0.01)


def _mlp():
    return nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 5))


def _cnn():
    return nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 5))


def _run(make, kind, donate, batches, init):
    model = make()
    model.load_parameters({k: v for k, v in init.items() if k in model.parameters()},
                          {k: v for k, v in init.items() if k not in model.parameters()})
    step = optim.compile_step(model, nn.cross_entropy, _make_opt(kind), donate=donate)
    losses = [float(step(x, y)) for x, y in batches]
    return step, losses, model.state_dict()


@pytest.mark.parametrize("kind", ["sgd", "adam"])
@pytest.mark.parametrize("net", ["mlp", "cnn"])
def test_train_step_same_with_and_without_donation(kind, net):
    frit.random.seed(1)
    make = _mlp if net == "mlp" else _cnn
    batches = _batches((12,) if net == "mlp" else (1, 8, 8), 5)
    init = make().state_dict()
    s0, l0, p0 = _run(make, kind, False, batches, init)
    s1, l1, p1 = _run(make, kind, True, batches, init)
    assert s0.lower(*batches[0]).donated == []
    don = s1.lower(*batches[0]).donated
    # every parameter, buffer and optimizer slot is donated (in place, or staged where a fused
    # kernel recomputes from an old parameter after its update: the MLP's first bias under SGD)
    nstate = len(p1) + sum(len(v) if isinstance(v, dict) else 1 for v in s1.state.values())
    assert len(don) == nstate
    assert l0 == l1
    for k in p0:
        np.testing.assert_array_equal(p0[k], p1[k], err_msg=k)
    if net == "mlp":  # numpy, independently
        want_l, want_p = _np_train(init, kind, batches)
        np.testing.assert_allclose(l1, want_l, rtol=1e-4, atol=1e-5)
        for k in want_p:
            np.testing.assert_allclose(p1[k], want_p[k], rtol=1e-4, atol=1e-5, err_msg=k)


def test_train_step_allocates_only_the_loss():
    frit.random.seed(2)
    model = _cnn()
    step = optim.compile_step(model, nn.cross_entropy, optim.Adam(0.01))
    batches = _batches((1, 8, 8), 5)
    step(*batches[0])
    before = [a._n.np for a in list(step.params.values()) + list(step.buffers.values())]
    before += [a._n.np for v in step.state.values() for a in (v.values() if isinstance(v, dict) else [v])]
    loss = step(*batches[1])
    after = [a._n.np for a in list(step.params.values()) + list(step.buffers.values())]
    after += [a._n.np for v in step.state.values() for a in (v.values() if isinstance(v, dict) else [v])]
    assert len(before) == len(after) == 21  # 6 parameters, 2 buffers, step, m and v
    for a, b in zip(before, after):
        assert a is b or np.shares_memory(a, b)
    assert not any(np.shares_memory(loss._n.np, b) for b in before)
    # the model holds the same memory
    for k, v in model.parameters().items():
        assert np.shares_memory(v._n.np, step.params[k]._n.np)


def test_read_after_update():
    """p is donated to p - g, and read again by a sum, a broadcast product and a reversal: each
    sees the old p (the runtime stages the output where a kernel reads p after the write)."""
    def f(p, g):
        return p - g, frit.sum(p), p * frit.max(p), p[::-1] + g

    jf = frit.jit(f, donate_argnums=0)
    rng = np.random.default_rng(3)
    for n in (5, 1000):
        p = rng.standard_normal(n).astype(np.float32)
        g = rng.standard_normal(n).astype(np.float32)
        p0 = p.copy()
        a, s, m, r = jf(p, g)
        np.testing.assert_array_equal(np.asarray(a), p0 - g)
        np.testing.assert_allclose(float(s), p0.sum(dtype=np.float64), rtol=1e-5)
        np.testing.assert_array_equal(np.asarray(m), p0 * p0.max())
        np.testing.assert_array_equal(np.asarray(r), p0[::-1] + g)
        assert np.shares_memory(np.asarray(a), p)
        np.testing.assert_array_equal(p, p0 - g)  # the donated numpy array holds the output


def test_read_feeding_only_a_sibling():
    """p's memory goes to g + 1, whose kernel also stores (g + 1) * p: the read of p[i] does not
    feed the store into p[i], so nothing orders it first (staged, and numpy's answer)."""
    jf = frit.jit(lambda p, g: (g + 1, (g + 1) * p), donate_argnums=0)
    rng = np.random.default_rng(4)
    p = rng.standard_normal(1000).astype(np.float32)
    g = rng.standard_normal(1000).astype(np.float32)
    p0 = p.copy()
    assert jf.lower(p, g).donated == [(0, 0, False)]
    a, b = jf(p, g)
    np.testing.assert_array_equal(np.asarray(a), g + 1)
    np.testing.assert_array_equal(np.asarray(b), (g + 1) * p0)
    assert np.shares_memory(np.asarray(a), p)


def test_in_place_and_staged():
    jf = frit.jit(lambda p, g: p - 0.5 * g, donate_argnums=0)
    jr = frit.jit(lambda p, g: p[::-1] + g, donate_argnums=(0,))
    p, g = np.arange(8, dtype=np.float32), np.ones(8, np.float32)
    assert jf.lower(p, g).donated == [(0, 0, True)]
    assert jr.lower(p, g).donated == [(0, 0, False)]  # reads elements it does not write
    out = jr(p, g)
    np.testing.assert_array_equal(np.asarray(out), np.arange(8, dtype=np.float32)[::-1] + 1)
    assert np.asarray(out).__array_interface__["data"][0] == p.__array_interface__["data"][0]


def test_donated_array_afterwards():
    jf = frit.jit(lambda p, g: p - g, donate_argnums=0)
    p = frit.asarray(np.arange(6, dtype=np.float32))
    lazy = p * 2  # built from the old value, not evaluated
    q = jf(p, np.ones(6, np.float32))
    np.testing.assert_array_equal(np.asarray(p), np.arange(6) - 1.0)  # refers to the new value
    assert np.shares_memory(np.asarray(p), np.asarray(q))
    with pytest.raises(FritError, match="donated to .*<lambda> .donate_argnums"):
        np.asarray(lazy)
    r = jf(p, np.ones(6, np.float32))  # the rebound Array can be donated again
    np.testing.assert_array_equal(np.asarray(r), np.arange(6) - 2.0)
    np.testing.assert_array_equal(np.asarray(p), np.arange(6) - 2.0)
    with pytest.raises(FritError, match="donated"):  # q's value (p's before) was donated
        np.asarray(q)


def test_donation_edge_cases():
    f = frit.jit(lambda a, b: (a + b, a - b), donate_argnums=(0, 1))
    x = np.arange(4, dtype=np.float32)
    s, d = f(x, x)  # the same memory donated twice: one output gets fresh memory
    np.testing.assert_array_equal(np.asarray(s), np.arange(4) * 2.0)
    np.testing.assert_array_equal(np.asarray(d), np.zeros(4))
    ro = np.arange(4, dtype=np.float32)
    ro.flags.writeable = False  # never written: a fresh output
    s, d = f(ro, np.ones(4, np.float32))
    np.testing.assert_array_equal(ro, np.arange(4))
    np.testing.assert_array_equal(np.asarray(s), np.arange(4) + 1.0)
    # no output of the donated shape or dtype: nothing donated, the argument stays valid
    g = frit.jit(lambda a: frit.sum(a), donate_argnums=0)
    a = frit.asarray(np.ones((2, 3), np.float32))
    assert float(g(a)) == 6.0 and g.lower(a).donated == []
    np.testing.assert_array_equal(np.asarray(a), np.ones((2, 3)))
    with pytest.raises(FritTypeError, match="both static and donated"):
        frit.jit(lambda a: a, static_argnums=0, donate_argnums=0)


def test_matching_by_path():
    """state["m"] goes to the new state["m"] and state["w"] to the new state["w"], though the
    outputs are listed in another order and all have one shape."""
    def f(s, g):
        return frit.sum(g), {"w": s["w"] - g, "m": s["m"] * 0.5 + g}, g * 2

    jf = frit.jit(f, donate_argnums=0)
    s = {"w": np.full(4, 3.0, np.float32), "m": np.full(4, 1.0, np.float32)}
    g = np.ones(4, np.float32)
    assert jf.lower(s, g).donated == [(0, 1, True), (1, 2, True)]
    w, m = s["w"], s["m"]
    _, new, _ = jf(s, g)
    assert np.shares_memory(np.asarray(new["w"]), w) and np.shares_memory(np.asarray(new["m"]), m)
    np.testing.assert_array_equal(w, np.full(4, 2.0))
    np.testing.assert_array_equal(m, np.full(4, 1.5))
