"""frit.nn and frit.optim against independent numpy implementations of the same formulas (PyTorch's
documented algorithms): layers, losses, initialiser statistics, every optimizer over several
steps, clipping, schedules, the compiled training step, and the Fashion-MNIST example on a
small synthetic set."""
import os
import sys

import numpy as np
import pytest

import frit
from frit import nn, optim

rng = np.random.default_rng(0)
HERE = os.path.dirname(os.path.abspath(__file__))


def A(x):
    return np.asarray(x)


# ---------------------------------------------------------------- layers and losses

def test_linear_conv_and_sequential_forward():
    frit.random.seed(1)
    lin = nn.Linear(5, 3)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    np.testing.assert_allclose(A(lin(x)), x @ A(lin.weight) + A(lin.bias), rtol=1e-5, atol=1e-6)
    assert list(lin.parameters()) == ["weight", "bias"]
    w = A(lin.weight)
    assert np.all(np.abs(w) <= 1 / np.sqrt(5)) and w.std() > 0.1  # U(-1/sqrt(in), 1/sqrt(in))
    model = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(4 * 4 * 4, 2))
    assert list(model.parameters()) == ["0.weight", "0.bias", "4.weight", "4.bias"]
    xi = rng.standard_normal((3, 2, 8, 8)).astype(np.float32)
    assert A(model(xi)).shape == (3, 2)


def test_batchnorm_train_updates_running_stats_eval_uses_them():
    bn = nn.BatchNorm2d(3)
    x = rng.standard_normal((4, 3, 5, 5)).astype(np.float32) * 2 + 1
    y = A(bn(x))  # training mode: batch statistics
    mu, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    np.testing.assert_allclose(y, (x - mu[None, :, None, None]) / np.sqrt(var[None, :, None, None] + 1e-5),
                               rtol=1e-4, atol=1e-5)
    n = 4 * 5 * 5
    np.testing.assert_allclose(A(bn.running_mean), 0.1 * mu, rtol=1e-5)
    np.testing.assert_allclose(A(bn.running_var), 0.9 + 0.1 * var * n / (n - 1), rtol=1e-5)
    bn.eval()
    rm, rv = A(bn.running_mean), A(bn.running_var)
    np.testing.assert_allclose(A(bn(x)), (x - rm[None, :, None, None]) / np.sqrt(rv[None, :, None, None] + 1e-5),
                               rtol=1e-4, atol=1e-5)


def test_layernorm_embedding_losses():
    x = rng.standard_normal((3, 4, 6)).astype(np.float32)
    ln = nn.LayerNorm(6)
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    np.testing.assert_allclose(A(ln(x)), (x - mu) / np.sqrt(var + 1e-5), rtol=1e-4, atol=1e-5)
    emb = nn.Embedding(10, 4)
    idx = np.array([[1, 9], [0, 1]])
    np.testing.assert_allclose(A(emb(idx)), A(emb.weight)[idx])
    logits = rng.standard_normal((5, 7))
    t = rng.integers(0, 7, 5)
    logp = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    np.testing.assert_allclose(float(nn.cross_entropy(logits, t)), -logp[np.arange(5), t].mean(), rtol=1e-10)
    np.testing.assert_allclose(float(nn.nll_loss(logp, t, reduction="sum")), -logp[np.arange(5), t].sum(),
                               rtol=1e-10)
    p, q = rng.standard_normal(6), rng.standard_normal(6)
    np.testing.assert_allclose(float(nn.mse_loss(p, q)), np.mean((p - q) ** 2), rtol=1e-12)
    np.testing.assert_allclose(float(nn.l1_loss(p, q)), np.mean(np.abs(p - q)), rtol=1e-12)
    with pytest.raises(TypeError, match="nll_loss: needs log-probabilities"):
        nn.nll_loss(logp, t.astype(np.float64))
    # targets outside [0, C): an error when they are known, NaN (never a silent pick) when traced
    bad = np.array([0, 7, 1, -1, 2])
    with pytest.raises(TypeError, match=r"nll_loss: targets must lie in \[0, 7\)"):
        nn.nll_loss(logp, bad)
    per_row = np.asarray(frit.jit(lambda a, b: nn.nll_loss(a, b, reduction="none"))(logp, bad))
    assert np.isnan(per_row[[1, 3]]).all()
    np.testing.assert_allclose(per_row[[0, 2, 4]], -logp[[0, 2, 4], [0, 1, 2]], rtol=1e-12)


def test_dropout_masks_scale_and_vary_with_key():
    x = np.ones((200, 50), np.float32)
    a = A(nn.dropout(x, 0.3, np.uint64(1)))
    b = A(nn.dropout(x, 0.3, np.uint64(2)))
    assert set(np.unique(a)) <= {0.0, np.float32(1 / 0.7)}
    assert abs((a == 0).mean() - 0.3) < 0.02  # 10,000 draws: 5 sigma ~ 0.023
    assert (a != b).mean() > 0.3
    np.testing.assert_array_equal(A(nn.dropout(x, 0.3, np.uint64(1), training=False)), x)
    d = nn.Dropout(0.5)
    with pytest.raises(TypeError, match="needs a key"):
        d(x)


def test_initialisers_statistics():
    w = A(nn.init.kaiming_normal((256, 128, 3, 3)))
    assert abs(w.std() - np.sqrt(2.0 / (128 * 9))) < 0.01 * np.sqrt(2.0 / (128 * 9)) * 10
    u = A(nn.init.xavier_uniform((300, 200)))
    bound = np.sqrt(6.0 / 500)
    assert u.max() <= bound and u.min() >= -bound and abs(u.std() - bound / np.sqrt(3)) < 0.02 * bound


# ---------------------------------------------------------------- optimizers

def _np_quadratic_grads(p, target):
    return {k: 2 * (p[k] - target[k]) for k in p}


def _run_frit(opt, p0, target, steps):
    params = {k: v.copy() for k, v in p0.items()}
    state = opt.init(params)

    @frit.jit
    def step(params, state, lr):
        loss = lambda p: sum(frit.sum((p[k] - target[k]) ** 2) for k in sorted(p))  # noqa: E731
        g = frit.grad(loss)(params)
        return opt.update(params, g, state, lr)

    for t in range(steps):
        params, state = step(params, state, np.float32(opt.lr_at(t)))
    return {k: A(v) for k, v in params.items()}


def _np_adam(p, g, m, v, t, lr, b1=0.9, b2=0.999, eps=1e-8, wd=0.0, decoupled=False):
    if wd and not decoupled:
        g = g + wd * p
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    mh, vh = m / (1 - b1 ** t), v / (1 - b2 ** t)
    if decoupled and wd:
        p = p - lr * wd * p
    return p - lr * mh / (np.sqrt(vh) + eps), m, v


@pytest.mark.parametrize("name", ["sgd", "momentum", "nesterov", "adam", "adamw", "rmsprop", "l1_clip"])
def test_optimizers_match_numpy_reference(name):
    p0 = {"a": rng.standard_normal((3, 4)).astype(np.float32), "b": rng.standard_normal(5).astype(np.float32)}
    target = {"a": rng.standard_normal((3, 4)).astype(np.float32), "b": rng.standard_normal(5).astype(np.float32)}
    lr, steps = 0.05, 6
    ref = {k: v.astype(np.float64) for k, v in p0.items()}
    st = {k: {"m": np.zeros_like(v), "v": np.zeros_like(v), "buf": np.zeros_like(v)} for k, v in ref.items()}
    opts = {"sgd": optim.SGD(lr), "momentum": optim.SGD(lr, momentum=0.9),
            "nesterov": optim.SGD(lr, momentum=0.9, nesterov=True), "adam": optim.Adam(lr),
            "adamw": optim.AdamW(lr, weight_decay=0.1), "rmsprop": optim.RMSProp(lr, momentum=0.5),
            "l1_clip": optim.SGD(lr, l1=0.01, weight_decay=0.02, clip_norm=0.5)}
    for t in range(1, steps + 1):
        g = _np_quadratic_grads(ref, target)
        for k in ref:
            p, s = ref[k], st[k]
            if name == "sgd":
                ref[k] = p - lr * g[k]
            elif name in ("momentum", "nesterov"):
                s["buf"] = 0.9 * s["buf"] + g[k]
                ref[k] = p - lr * (g[k] + 0.9 * s["buf"] if name == "nesterov" else s["buf"])
            elif name in ("adam", "adamw"):
                ref[k], s["m"], s["v"] = _np_adam(p, g[k], s["m"], s["v"], t, lr, wd=0.1 if name == "adamw" else 0,
                                                  decoupled=name == "adamw")
            elif name == "rmsprop":
                s["v"] = 0.99 * s["v"] + 0.01 * g[k] ** 2
                s["buf"] = 0.5 * s["buf"] + g[k] / (np.sqrt(s["v"]) + 1e-8)
                ref[k] = p - lr * s["buf"]
        if name == "l1_clip":  # clip by the global norm first, then L2 and L1 terms
            norm = np.sqrt(sum(np.sum(v ** 2) for v in g.values()))
            scale = min(1.0, 0.5 / (norm + 1e-12))
            for k in ref:
                ref[k] = ref[k] - lr * (g[k] * scale + 0.02 * ref[k] + 0.01 * np.sign(ref[k]))
    got = _run_frit(opts[name], p0, target, steps)
    for k in ref:
        np.testing.assert_allclose(got[k], ref[k], rtol=2e-5, atol=2e-6)


def test_schedules():
    s = optim.step_lr(1.0, 10, 0.5)
    assert s(0) == 1.0 and s(10) == 0.5 and s(25) == 0.25
    c = optim.cosine_lr(1.0, 100, 0.1)
    assert c(0) == 1.0 and abs(c(100) - 0.1) < 1e-12 and abs(c(50) - 0.55) < 1e-12
    w = optim.warmup(0.4, 4)
    assert [round(w(i), 6) for i in range(5)] == [0.1, 0.2, 0.3, 0.4, 0.4]


# ---------------------------------------------------------------- the compiled step

def test_compile_step_is_one_program_and_learns():
    frit.random.seed(3)
    X = rng.standard_normal((256, 10)).astype(np.float32)
    y = (X[:, 0] + X[:, 1] > 0).astype(np.int64)
    model = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Dropout(0.1), nn.Linear(16, 2))
    step = optim.compile_step(model, nn.cross_entropy, optim.Adam(0.02))
    before = float(nn.cross_entropy(model.eval()(X), y))
    for epoch in range(15):
        for i in range(0, 256, 64):
            step(X[i:i + 64], y[i:i + 64])
    assert step.jitted.compile_count == 1
    model.eval()
    after = float(nn.cross_entropy(model(X), y))
    assert after < 0.5 * before
    assert (np.argmax(A(model(X)), 1) == y).mean() > 0.9


def test_compile_step_gradients_match_finite_differences():
    # one SGD step moves each parameter by -lr * grad: compare with central differences of the
    # loss computed in numpy from the same weights
    frit.random.seed(5)
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.GELU(), nn.Flatten(), nn.Linear(2 * 4 * 4, 3))
    x = rng.standard_normal((4, 1, 6, 6)).astype(np.float32)
    y = np.array([0, 2, 1, 2])
    params = {k: A(v).astype(np.float64) for k, v in model.parameters().items()}

    def np_loss(p):
        w, b = p["0.weight"], p["0.bias"]
        conv = np.zeros((4, 2, 4, 4))
        for i in range(4):
            for j in range(4):
                conv[:, :, i, j] = np.einsum("nchw,ochw->no", x[:, :, i:i + 3, j:j + 3], w) + b
        from math import erf
        h = 0.5 * conv * (1 + np.vectorize(erf)(conv / np.sqrt(2)))
        z = h.reshape(4, -1) @ p["3.weight"] + p["3.bias"]
        logp = z - np.log(np.exp(z).sum(1, keepdims=True))
        return -logp[np.arange(4), y].mean()

    lr = 0.1
    step = optim.compile_step(model, nn.cross_entropy, optim.SGD(lr))
    step(x, y)
    for k, p in params.items():
        fd = np.zeros_like(p)
        for i in np.ndindex(p.shape):
            hi = {q: v.copy() for q, v in params.items()}
            lo = {q: v.copy() for q, v in params.items()}
            hi[k][i] += 1e-5
            lo[k][i] -= 1e-5
            fd[i] = (np_loss(hi) - np_loss(lo)) / 2e-5
        moved = (p - A(model.parameters()[k])) / lr
        np.testing.assert_allclose(moved, fd, rtol=2e-3, atol=2e-4)


def test_load_parameters_checks_shapes():
    lin = nn.Linear(3, 2)
    with pytest.raises(TypeError, match="has shape \\(3, 2\\), the value \\(2, 3\\)"):
        lin.load_parameters({"weight": np.zeros((2, 3), np.float32)})
    with pytest.raises(TypeError, match="no parameter named 'w'"):
        lin.load_parameters({"w": np.zeros((3, 2), np.float32)})


def test_fashion_mnist_example_on_synthetic_data(tmp_path):
    sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))
    import fashion_mnist
    hist = fashion_mnist.main(["--model", "mlp", "--synthetic", "3000", "--epochs", "2", "--quiet",
                               "--plot", str(tmp_path / "curve.png")])
    assert hist[-1][2] > 0.9  # separable templates: near-perfect after two epochs
    assert (tmp_path / "curve.png").stat().st_size > 1000  # matplotlib is in the test requirements


# ---------------------------------------------------------------- checkpoints

def test_safetensors_round_trip_with_the_safetensors_package(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    model = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.Linear(3, 2))
    p = str(tmp_path / "m.safetensors")
    model.save(p)
    theirs = st.load_file(p)
    mine = model.state_dict()
    assert set(theirs) == set(mine)
    for k in mine:
        np.testing.assert_array_equal(theirs[k], mine[k])
    # and a file the package wrote, loaded here
    other = {k: (v + 1).astype(v.dtype) for k, v in mine.items()}
    q = str(tmp_path / "o.safetensors")
    st.save_file(other, q)
    model.load(q)
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(v, other[k])


def test_failed_load_changes_nothing(tmp_path):
    model = nn.Sequential(nn.Linear(4, 3), nn.Linear(3, 2))
    before = model.state_dict()
    bad = dict(before)
    bad["1.weight"] = np.zeros((2, 3), np.float32)  # transposed shape
    p = str(tmp_path / "bad.npz")
    nn.save(p, bad)
    with pytest.raises(TypeError, match="1.weight"):
        model.load(p)
    junk = tmp_path / "junk.safetensors"
    junk.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json}......")
    with pytest.raises(frit.FritError, match="not a safetensors file"):
        model.load(str(junk))
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(v, before[k])


def test_train_step_checkpoint_resumes_exactly(tmp_path):
    X = rng.standard_normal((64, 6)).astype(np.float32)
    y = rng.integers(0, 3, 64)

    def make():
        frit.random.seed(11)
        m = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
        return m, optim.compile_step(m, nn.cross_entropy, optim.Adam(0.01))

    m1, s1 = make()
    for i in range(6):
        s1(X[i % 4 * 16:(i % 4 + 1) * 16], y[i % 4 * 16:(i % 4 + 1) * 16])
    m2, s2 = make()
    for i in range(3):
        s2(X[i % 4 * 16:(i % 4 + 1) * 16], y[i % 4 * 16:(i % 4 + 1) * 16])
    p = str(tmp_path / "ck.safetensors")
    s2.save(p)
    m3, s3 = make()
    s3.load(p)
    for i in range(3, 6):
        s3(X[i % 4 * 16:(i % 4 + 1) * 16], y[i % 4 * 16:(i % 4 + 1) * 16])
    for k, v in m1.state_dict().items():
        np.testing.assert_allclose(m3.state_dict()[k], v, rtol=1e-6, atol=1e-7)


def test_c_example_trains_through_the_c_api_alone():
    import subprocess
    root = os.path.join(HERE, "..", "..")
    lib = os.environ.get("FRIT_LIB", os.path.join(root, "build", "libfrit.so"))
    build = os.path.dirname(os.path.abspath(lib))
    exe = os.path.join(build, "examples", "train_mlp")
    subprocess.run(["make", "-s", "BUILD=" + os.path.relpath(build, root), os.path.relpath(exe, root)],
                   cwd=root, check=True)
    out = subprocess.run([exe, "--synthetic", "3000", "2"], capture_output=True, text=True, check=True).stdout
    acc = float(out.strip().splitlines()[-1].split()[-1])
    assert "one step = " in out and acc > 0.9, out
    assert "12 of 12 state arrays updated in place" in out, out  # frit_program_donate
