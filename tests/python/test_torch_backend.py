"""frit.torch: torch.compile(backend="frit") against eager PyTorch (the oracle) on small models:
MLP, CNN with batchnorm (eval and train), a transformer encoder layer, in-place ops, a fallback op,
MLP training steps; explain() output; registration and DLPack behaviour."""
import os
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn
import frit  # noqa: E402
import frit.torch as ft  # noqa: E402

TOL = dict(rtol=1e-4, atol=1e-5)


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.GELU(),
                         nn.Linear(16, 3))


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 4, 3, stride=2, padding=1, groups=2)
        self.bn2 = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4 * 2 * 2, 5)

    def forward(self, x):
        x = nn.functional.max_pool2d(torch.relu(self.bn1(self.conv1(x))), 2)
        x = torch.sigmoid(self.bn2(self.conv2(x)))
        return self.fc(x.flatten(1))


class InPlace(nn.Module):
    """relu_, add_, mul_, slice assignment, index_put_ with a mask, on activations."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(5, 5)

    def forward(self, x):
        h = self.lin(x)
        h.relu_()
        h.add_(1.5)
        h[:, :2] = h[:, 3:5] * 2.0   # slice assignment: copy_ into a slice
        h.mul_(x)
        y = h.clone()
        y[:, 4] = -1.0               # select + fill
        rows = torch.tensor([2, 0])
        y[rows] = y[rows] * 3 + 1    # index_put_ (distinct indices)
        y.index_put_((torch.tensor([1, 1, 3]), torch.tensor([0, 0, 2])), torch.tensor(0.5),
                     accumulate=True)   # duplicates add up
        y[y > 4] = 4.0               # a mask assignment
        return y


class Lacking(nn.Module):
    """bessel_j0 has no frit lowering: it must fall back to PyTorch between two frit clusters."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 2)

    def forward(self, x):
        h = torch.tanh(self.a(x))
        h = torch.special.bessel_j0(h)
        return torch.exp(self.b(h))


def _close(a, b, **tol):
    kw = dict(TOL)
    kw.update(tol)
    torch.testing.assert_close(a, b, **kw)


def _frit_clusters(model, *args):
    e = ft.explain(model, *args)
    assert e.cluster_count >= 1, str(e)
    return e


def test_backend_registered_by_name():
    from torch._dynamo.backends.registry import lookup_backend
    assert lookup_backend("frit") is ft.frit_backend


def test_mlp_inference():
    m = _mlp().eval()
    x = torch.randn(7, 6)
    with torch.no_grad():
        want = m(x)
        got = torch.compile(m, backend="frit")(x)
    _close(got, want)
    e = _frit_clusters(m, x)
    # the whole MLP is supported: one cluster, nothing falls back but lone view ops
    assert e.cluster_count == 1, str(e)
    assert "aten.addmm.default" in e.compiled_ops
    assert not [f for f in e.fallbacks if f[0] == "aten.addmm.default"], str(e)


def test_cnn_batchnorm_eval():
    m = CNN().eval()
    with torch.no_grad():
        for bn in (m.bn1, m.bn2):   # non-trivial running statistics
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
    x = torch.randn(2, 3, 8, 8)
    with torch.no_grad():
        want = m(x)
        got = torch.compile(m, backend="frit")(x)
    _close(got, want)
    with torch.no_grad():
        e = _frit_clusters(m, x)
    for op in ("aten.convolution.default", "aten._native_batch_norm_legit_no_training.default",
               "aten.max_pool2d_with_indices.default"):
        assert op in e.compiled_ops, str(e)


def test_cnn_batchnorm_train_updates_running_stats():
    m1 = CNN().train()
    m2 = CNN().train()
    m2.load_state_dict(m1.state_dict())
    x = torch.randn(3, 3, 8, 8)
    want = m1(x)
    got = torch.compile(m2, backend="frit")(x)
    _close(got, want)
    for k, v in m1.state_dict().items():   # running_mean/var/num_batches_tracked updated alike
        _close(m2.state_dict()[k], v, rtol=1e-4, atol=1e-5)
    want.sum().backward()
    got.sum().backward()
    for (k, p1), p2 in zip(m1.named_parameters(), m2.parameters()):
        _close(p2.grad, p1.grad, rtol=1e-3, atol=1e-4)


def test_transformer_encoder_layer():
    torch.manual_seed(1)
    m = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0,
                                   batch_first=True).eval()
    x = torch.randn(2, 5, 8)
    m2 = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0,
                                    batch_first=True).eval()
    m2.load_state_dict(m.state_dict())
    want = m(x)   # autograd on: the decomposed (not the fused fast-path) layer
    got = torch.compile(m2, backend="frit")(x)
    _close(got, want)
    r = torch.randn(2, 5, 8)   # (a sum of squares after LayerNorm would be nearly constant)
    (want * r).sum().backward()
    (got * r).sum().backward()
    for (k, p1), p2 in zip(m.named_parameters(), m2.parameters()):
        _close(p2.grad, p1.grad, rtol=1e-4, atol=1e-5, msg=lambda s, k=k: "%s: %s" % (k, s))
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        with torch.no_grad():   # inference: attention decomposed into ops frit maps
            e = _frit_clusters(m, x)
            _close(torch.compile(m, backend="frit")(x), want.detach())
    finally:
        torch.backends.mha.set_fastpath_enabled(True)
    for op in ("aten._softmax.default", "aten.native_layer_norm.default", "aten.bmm.default"):
        assert op in e.compiled_ops, str(e)
    # training: the CPU flash-attention op is kept whole (see _backend._TRAIN_KEEP) and runs in
    # PyTorch; the rest of the layer compiles
    e = _frit_clusters(m, x)
    assert [op for op, _ in e.fallbacks if op != "getitem"] == \
        ["aten._scaled_dot_product_flash_attention_for_cpu.default"], str(e)
    assert "training graphs" in dict(e.fallbacks)[
        "aten._scaled_dot_product_flash_attention_for_cpu.default"]
    assert "aten.native_layer_norm.default" in e.compiled_ops, str(e)


def test_fallback_op_reported_and_correct():
    torch.manual_seed(2)
    m = Lacking()
    x = torch.randn(6, 4)
    with torch.no_grad():
        want = m(x)
        got = torch.compile(m, backend="frit")(x)
        e = ft.explain(m, x)
    _close(got, want)
    names = [op for op, _ in e.fallbacks]
    assert "aten.special_bessel_j0.default" in names, str(e)
    why = dict(e.fallbacks)["aten.special_bessel_j0.default"]
    assert "no frit lowering" in why
    assert e.cluster_count == 2, str(e)   # before and after the PyTorch op
    assert "bessel" not in " ".join(op for c in e.clusters for op in c)
    assert "fallback aten.special_bessel_j0.default" in str(e)


def test_inplace_ops_match_eager_exactly():
    torch.manual_seed(3)
    m = InPlace()
    with torch.no_grad():   # values on a grid of quarters: every sum is exact, so any order agrees
        m.lin.weight.copy_(torch.randint(-4, 5, (5, 5)) / 4)
        m.lin.bias.copy_(torch.randint(-4, 5, (5,)) / 4)
    x = torch.randint(-4, 5, (4, 5)).float()
    with torch.no_grad():
        want = m(x)
        got = torch.compile(m, backend="frit")(x)
        e = ft.explain(m, x)
    assert torch.equal(got, want), (got, want)
    assert "aten.slice_scatter.default" in e.compiled_ops, str(e)
    assert "aten.index_put.default" in e.compiled_ops, str(e)
    assert not e.fallbacks, str(e)   # (the mask assignment with a scalar becomes a where)


def test_inplace_on_input_is_visible_to_caller():
    def f(x):
        x[1:3] = x[1:3] * 2 + 1
        x.relu_()
        return x.sum()

    a = torch.randn(5, 3)
    b = a.clone()
    want = f(a)
    got = torch.compile(f, backend="frit")(b)
    assert torch.equal(a, b)
    _close(got, want)


def test_mlp_training_matches_eager():
    m1 = _mlp()
    m2 = _mlp()
    m2.load_state_dict(m1.state_dict())
    c2 = torch.compile(m2, backend="frit")
    o1 = torch.optim.SGD(m1.parameters(), lr=0.1)
    o2 = torch.optim.SGD(m2.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(4)
    x = torch.randn(8, 6, generator=g)
    t = torch.randint(0, 3, (8,), generator=g)
    losses1, losses2 = [], []
    for _ in range(4):
        for m, o, ls in ((m1, o1, losses1), (c2, o2, losses2)):
            o.zero_grad()
            loss = nn.functional.cross_entropy(m(x), t)
            loss.backward()
            o.step()
            ls.append(loss.item())
    np.testing.assert_allclose(losses2, losses1, rtol=1e-5, atol=1e-6)
    assert losses1[-1] < losses1[0]
    for p1, p2 in zip(m1.parameters(), m2.parameters()):
        _close(p2, p1, rtol=1e-5, atol=1e-6)


def test_backward_graph_runs_in_frit():
    m = _mlp()
    x = torch.randn(4, 6)
    reports = []
    from frit.torch import _backend as BK
    BK._tls.reports = reports
    try:
        c = torch.compile(m, backend="frit")
        c(x).sum().backward()
    finally:
        BK._tls.reports = None
    kinds = {r.kind: r for r in reports}
    assert "backward" in kinds, [r.kind for r in reports]
    bw = kinds["backward"]
    assert bw.clusters, bw.as_dict()
    assert "aten.mm.default" in bw.compiled, bw.as_dict()


def test_unsupported_dtype_falls_back_with_reason():
    def f(x):
        return torch.exp(x) * 2

    x = torch.randn(4, 3).to(torch.float16)
    want = f(x)
    got = torch.compile(f, backend="frit")(x)
    assert torch.equal(got, want)
    e = ft.explain(f, x)
    assert e.cluster_count == 0
    assert any("float16" in why for _, why in e.fallbacks), str(e)


def test_integer_and_mixed_dtype_promotion():
    def f(a, b, c):
        return (a + b * 3) // 2, a / b, (c > 0.5) & (a > 1), torch.where(c > 0, a, c)

    a = torch.arange(12, dtype=torch.int32).reshape(3, 4)
    b = torch.full((3, 4), 3, dtype=torch.int64)
    c = torch.randn(4)
    want = f(a, b, c)
    got = torch.compile(f, backend="frit")(a, b, c)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        _close(g, w)


def test_dlpack_inputs_and_outputs_are_zero_copy():
    """The conversions FritCluster uses: a tensor into a frit program and a frit result out of
    it share memory (no copy) both ways; frit.from_dlpack too."""
    from frit.torch import _backend as BK
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    assert BK._to_frit(t).__array_interface__["data"][0] == t.data_ptr()
    a = frit.from_dlpack(t)
    assert np.asarray(a).__array_interface__["data"][0] == t.data_ptr()
    b = frit.jit(lambda v: v * 2)(np.ones((2, 3), np.float32))
    tb = BK._to_torch(b)
    assert tb.data_ptr() == np.asarray(b).__array_interface__["data"][0]
    assert torch.equal(tb, torch.full((2, 3), 2.0))
    # a transposed tensor crosses as a strided view (frit.jit copies it to C order itself)
    v = BK._to_frit(t.t())
    assert v.__array_interface__["data"][0] == t.data_ptr() and not v.flags.c_contiguous


def test_explain_bad_input():
    with pytest.raises(TypeError, match="callable"):
        ft.explain(42, torch.zeros(2))
    with pytest.raises(TypeError, match="example inputs"):
        ft.explain(_mlp())


def test_public_names_documented():
    doc = open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "python-api.md")).read()
    for n in ft.__all__:
        assert "`frit.torch.%s" % n in doc, n


def test_mapped_ops_listed_in_docs():
    doc = open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "torch.md")).read()
    missing = [op for op in ft.mapped_ops() if op.replace("aten.", "", 1) not in doc]
    assert not missing, missing


def test_import_frit_registers_when_torch_already_imported():
    code = ("import sys, torch; import frit; assert 'frit.torch' in sys.modules; "
            "from torch._dynamo.backends.registry import lookup_backend; lookup_backend('frit')")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=300)
    code2 = "import sys, frit; assert 'torch' not in sys.modules, 'import frit imported torch'"
    subprocess.run([sys.executable, "-c", code2], check=True, env=env, timeout=300)


# ---------------------------------------------------------------- op coverage against eager

def _zoo_float(x, y):
    return (torch.exp(x) - torch.log1p(y.abs()), torch.sqrt(y.abs() + 1) * torch.rsqrt(x.abs() + 1),
            torch.sin(x) + torch.cos(y) * torch.erf(x), torch.expm1(x) / (1.0 + y * y),
            torch.floor(x * 3), torch.ceil(y * 3), torch.trunc(x * 3), torch.sign(y),
            torch.clamp(x, min=-0.5), torch.clamp(y, -0.25, 0.75), torch.maximum(x, y),
            torch.minimum(x, y), 2.0 ** x, x ** 2, torch.pow(x.abs(), y), 1 - x, x.reciprocal(),
            torch.div(x, y, rounding_mode="floor"), torch.div(x, y + 3, rounding_mode="trunc"),
            torch.log2(x.abs() + 1), torch.exp2(y), torch.sigmoid(x) * torch.tanh(y),
            torch.nn.functional.gelu(x, approximate="tanh"), torch.where(x > y, x, 0.5))


def _zoo_reduce(x, y):
    return (x.sum(), x.sum(dim=1, keepdim=True), x.mean(), x.mean(dim=(0, 2)),
            x.amax(dim=-1), x.amin(dim=(0, 1), keepdim=True), x.var(dim=1), x.var(dim=2, correction=0),
            torch.var_mean(x, dim=0), (x > 0).any(dim=1), (x > -3).all(), torch.softmax(x, dim=1),
            torch.log_softmax(x, dim=-1), (y > 0).sum(dim=0))


def _zoo_shape(x, y):
    z = torch.cat([x, y.to(torch.float64)], dim=1)
    return (z, x.transpose(0, 2).reshape(-1, 2), x.permute(2, 0, 1)[1], x[:, 1:3, ::2],
            x.flip(0, 2), torch.nn.functional.pad(x, (1, 2, 0, 1), value=0.5),
            x.unsqueeze(1).expand(2, 3, 3, 4) * 1.5, x.squeeze(), x[..., -1].t(),
            torch.arange(2, 14, 3) * 2, torch.full((2, 3), 7.0) + y.sum())


def _zoo_int(a, b):
    c = torch.tensor(2.5)
    return (a + b, a * 3 - b, a // 4, a % 5, -a % 3, b // b.clamp(min=1), b % b.clamp(min=1), a < b, (a == b) | (a > 5), a.to(torch.float32) * c,
            a > 2.5, torch.where(a > b, a, b), a.sum(dim=0), (a & 6), a.abs(), -a, a.max(),
            torch.clamp(a, 2, 9), a.double().mean())


def _zoo_matmul(x, w, v):
    return (x @ w, torch.bmm(x.unsqueeze(0).expand(2, 4, 5), w.unsqueeze(0).expand(2, 5, 3)),
            torch.addmm(v, x, w, beta=0.5, alpha=2.0), torch.nn.functional.conv2d(
                x.reshape(1, 1, 4, 5), w[:3, :2].reshape(1, 1, 3, 2), stride=(1, 2), padding=(1, 0),
                dilation=(1, 1)))


def _zoo_more(x, i, e):
    pool_in = x.reshape(1, 2, 4, 6)
    return (torch.nn.functional.max_pool2d(pool_in, 2), torch.nn.functional.max_pool2d(
                pool_in, 3, stride=2, padding=1), torch.nn.functional.avg_pool2d(pool_in, (2, 3)),
            torch.nn.functional.embedding(i, e), torch.index_select(e, 1, i[:2]),
            torch.remainder(x, 0.7), torch.remainder(-x, -1.3), torch.fmod(x, 0.7),
            i & 5, i | 2, i ^ 3, ~i, torch.cumsum(x, dim=1), torch.cumsum(i, dim=0),
            e[i[:3], torch.tensor([0, 2, -1])], e[i], torch.nn.functional.hardtanh(x, -0.5, 0.4),
            torch.nn.functional.leaky_relu(x, 0.2), torch.nn.functional.elu(x, 0.7), x.max(),
            x.min(), x.max(dim=1), x.min(dim=0, keepdim=True), x.argmax(), x.argmin(dim=1),
            x.argmax(dim=0, keepdim=True), x.split([5, 7], dim=1), x.chunk(2, dim=0),
            torch.gather(x, 1, i[:4, None].expand(4, 2)), torch.gather(e, 0, i[None, :2] % 5))


ZOO = [
    ("more", _zoo_more, lambda g: (torch.randn(4, 12, generator=g),
                                   torch.randint(0, 5, (6,), generator=g),
                                   torch.randn(5, 3, generator=g))),
    ("float", _zoo_float, lambda g: (torch.randn(3, 4, generator=g),
                                     torch.randn(3, 4, generator=g) * 0.9 + 0.05)),
    ("reduce", _zoo_reduce, lambda g: (torch.randn(2, 3, 4, generator=g),
                                       torch.randint(-3, 4, (5, 2), generator=g))),
    ("shape", _zoo_shape, lambda g: (torch.randn(2, 3, 4, generator=g, dtype=torch.float64),
                                     torch.randn(2, 1, 4, generator=g))),
    ("int", _zoo_int, lambda g: (torch.randint(-9, 10, (3, 4), generator=g, dtype=torch.int32),
                                 torch.randint(-9, 10, (3, 4), generator=g))),
    ("matmul", _zoo_matmul, lambda g: (torch.randn(4, 5, generator=g), torch.randn(5, 3, generator=g),
                                       torch.randn(4, 3, generator=g))),
]


@pytest.mark.parametrize("name,fn,make", ZOO, ids=[z[0] for z in ZOO])
def test_op_zoo_matches_eager(name, fn, make):
    args = make(torch.Generator().manual_seed(5))
    want = fn(*args)
    got = torch.compile(fn, backend="frit")(*args)
    flat_w = [t for w in want for t in (w if isinstance(w, tuple) else (w,))]
    flat_g = [t for w in got for t in (w if isinstance(w, tuple) else (w,))]
    assert len(flat_g) == len(flat_w)
    for i, (g, w) in enumerate(zip(flat_g, flat_w)):
        assert g.dtype == w.dtype and g.shape == w.shape, (i, g.dtype, w.dtype, g.shape, w.shape)
        _close(g, w, rtol=2e-5, atol=2e-6, msg=lambda m, i=i: "%s output %d: %s" % (name, i, m))
    e = ft.explain(fn, *args)
    assert e.cluster_count >= 1, str(e)


def test_op_zoo_compiles_what_it_maps():
    """No cluster of the zoo failed its frit trace (a lowering that raised would fall back
    silently and the comparison above would only test PyTorch); the integer ops PyTorch must
    run (floor division, remainder: division by zero raises there) fall back with a reason."""
    g = torch.Generator().manual_seed(5)
    mapped = set(ft.mapped_ops())
    for name, fn, make in ZOO:
        e = ft.explain(fn, *make(g))
        bad = [(op, why) for op, why in e.fallbacks if op in mapped and
               (why.startswith("cluster of") or why.startswith("check failed"))]
        assert not bad, (name, bad)
        if name == "int":
            why = dict(e.fallbacks)
            assert "integer division" in why["aten.div.Tensor_mode"], str(e)
            assert "aten.remainder.Scalar" not in why, str(e)   # by 5: mapped


def test_grads_through_tanh_pow_exp():
    def loss(w, x):
        h = torch.tanh(x @ w)
        return (torch.exp(h) * h ** 2).mean() + torch.sigmoid(h).sum()

    g = torch.Generator().manual_seed(6)
    w1 = torch.randn(4, 3, generator=g, requires_grad=True)
    w2 = w1.detach().clone().requires_grad_(True)
    x = torch.randn(5, 4, generator=g)
    loss(w1, x).backward()
    torch.compile(loss, backend="frit")(w2, x).backward()
    _close(w2.grad, w1.grad, rtol=1e-4, atol=1e-6)


def test_large_outputs_not_reused_while_alive():
    """Outputs of 1 MiB or more come from frit's buffer pool: a tensor still holding the last
    call's output (through DLPack) must keep its buffer."""
    def f(x):
        return x * 2 + 1

    c = torch.compile(f, backend="frit")
    x = torch.randn(512, 1024)
    y1 = c(x)
    keep = y1.clone()
    y2 = c(x + 1)
    assert y1.data_ptr() != y2.data_ptr()
    assert torch.equal(y1, keep)
    _close(y2, f(x + 1))


def test_strided_and_broadcast_inputs():
    """Non-contiguous inputs (a transpose, a stride-0 expand, a step slice) cross DLPack as
    views; frit.jit copies them to C order before its kernels run."""
    def f(a, b, c):
        return torch.exp(a) + b * 2, c.sum(dim=0)

    base = torch.randn(6, 4)
    a = base.t()
    b = torch.randn(1, 6).expand(4, 6)
    c = torch.randn(8, 5)[::2, 1:]
    want = f(a, b, c)
    got = torch.compile(f, backend="frit")(a, b, c)
    for g, w in zip(got, want):
        _close(g, w)
    e = ft.explain(f, a, b, c)
    assert "aten.exp.default" in e.compiled_ops, str(e)


def test_casts():
    def f(x, i):
        return (x.to(torch.bool), x.to(torch.int32), x.to(torch.float64), i.to(torch.bool),
                i.to(torch.float32) / 3, x.to(torch.uint8))

    x = torch.tensor([-2.7, -0.5, 0.0, 0.25, 1.5, 3.99])
    i = torch.tensor([-3, 0, 2, 0, 7, 1])
    want = f(x, i)
    got = torch.compile(f, backend="frit")(x, i)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        assert torch.equal(g, w) if not w.is_floating_point() else torch.allclose(g, w)
    e = ft.explain(f, x, i)
    assert any("float to uint8" in why for _, why in e.fallbacks), str(e)


def test_new_batch_sizes_dynamic_graph_specialised_per_shape():
    """A second batch size makes Dynamo recompile with a symbolic batch dim: frit specialises that
    graph per concrete shape (retraced, then compiled like a static graph); with dynamic=False
    Dynamo itself makes a static graph per size. Both match eager, forward and training."""
    m = _mlp().eval()
    reports = []
    from frit.torch import _backend as BK
    BK._tls.reports = reports
    try:
        with torch.no_grad():
            c = torch.compile(m, backend="frit")
            s = torch.compile(m, backend="frit", dynamic=False)
            for b in (3, 5, 8):
                x = torch.randn(b, 6)
                _close(c(x), m(x))
                _close(s(x), m(x))
        m1, m2 = _mlp(), _mlp()
        m2.load_state_dict(m1.state_dict())
        c2 = torch.compile(m2, backend="frit")
        for b in (4, 6, 9):
            x = torch.randn(b, 6)
            m1(x).square().sum().backward()
            c2(x).square().sum().backward()
        for p1, p2 in zip(m1.parameters(), m2.parameters()):
            _close(p2.grad, p1.grad, rtol=1e-4, atol=1e-5)
    finally:
        BK._tls.reports = None
    kinds = [r.kind for r in reports]
    assert "inference, specialised" in kinds, kinds
    assert "forward, specialised" in kinds and "backward, specialised" in kinds, kinds
    assert all(r.clusters for r in reports), [(r.kind, r.fallbacks) for r in reports]
    assert not [f for r in reports for f in r.fallbacks if "symbolic" in f[1]]


def test_clusters_make_no_cycle_around_a_fallback():
    """exp -> bessel (PyTorch) -> mul, with exp also feeding mul directly: one cluster holding both
    exp and mul would need bessel's output before its own; the partition splits them."""
    def f(x):
        a = torch.exp(x) * 0.5
        b = torch.special.bessel_j0(a)
        return torch.tanh(a) * b + a

    x = torch.randn(5, 3)
    _close(torch.compile(f, backend="frit")(x), f(x))
    e = ft.explain(f, x)
    assert e.cluster_count == 2, str(e)
    assert [op for op, _ in e.fallbacks] == ["aten.special_bessel_j0.default"], str(e)


def test_outputs_are_distinct_tensors():
    """Outputs that are the same value (one result returned twice through a copy, a copy of an
    input) come back as separate tensors: writing one leaves the others and the input alone.
    (frit.jit gives distinct buffers here already; FritCluster.forward also clones any output
    whose buffer is an input's or an earlier output's.)"""
    def f(x):
        y = x * 2
        return y, y.clone(), x.clone()

    x = torch.randn(3, 4)
    x0 = x.clone()
    outs = torch.compile(f, backend="frit")(x)
    for o in outs:
        o.add_(100)
    assert torch.equal(x, x0)
    _close(outs[0], x0 * 2 + 100)
    _close(outs[1], x0 * 2 + 100)
    _close(outs[2], x0 + 100)


def test_out_of_range_index_raises_like_eager():
    def f(e, i):
        return torch.nn.functional.embedding(i, e) * 2

    e = torch.randn(4, 3)
    i = torch.tensor([0, 7])
    with pytest.raises(IndexError):
        f(e, i)
    c = torch.compile(f, backend="frit")
    _close(c(e, torch.tensor([0, 3])), f(e, torch.tensor([0, 3])))
    with pytest.raises(IndexError):
        c(e, i)


def test_nan_and_ties_as_pytorch():
    def f(x):
        return (x.max(dim=1), x.argmax(dim=1), x.argmin(dim=1), x.amax(1), x.min(dim=1),
                torch.relu(x), torch.clamp(x, 0, 2), torch.maximum(x, x.flip(1)), x.sum(1))

    nan = float("nan")
    x = torch.tensor([[1., nan, 3., 3.], [2., 5., 5., -1.], [0., -0., 0., 4.]])
    want = f(x)
    got = torch.compile(f, backend="frit")(x)
    flat = lambda o: [t for e in o for t in (e if isinstance(e, tuple) else (e,))]  # noqa: E731
    for g, w in zip(flat(got), flat(want)):
        torch.testing.assert_close(g, w, equal_nan=True, rtol=0, atol=0)


def _direct_aten(x, y, i, g):
    """ATen overloads PyTorch's core decompositions do not emit in the models above, called
    directly (the backend maps them for graphs that keep them)."""
    a = torch.ops.aten
    s = torch.sigmoid(x)
    t = torch.tanh(x)
    return (a.threshold_backward.default(g, x, 0.0), a.gelu_backward.default(g, x),
            a.gelu_backward.default(g, x, approximate="tanh"), a.sigmoid_backward.default(g, s),
            a.tanh_backward.default(g, t), a._softmax_backward_data.default(
                g, torch.softmax(x, 1), 1, torch.float32),
            a._log_softmax_backward_data.default(g, torch.log_softmax(x, 0), 0, torch.float32),
            a.t.default(x), a.transpose.int(x, 0, 1), a.view_copy.default(x, [4, 3]),
            a.reshape.default(x, [2, 6]), a._unsafe_view.default(x, [12]),
            a.squeeze.dim(x[None], 0), a.squeeze.default(x[:, :1]), a.contiguous.default(x),
            a.detach.default(x), a.arange.default(5), a.arange.start(2, 9),
            a.split.Tensor(x, 2, 1), a.select_scatter.default(x, y[0], 0, 1),
            a.sum.default(x), a.rsub.Scalar(x, 2.0), a.rsub.Tensor(x, y, alpha=2),
            a.add.Scalar(x, 1.5), a.sub.Scalar(x, 0.5), a.div.Scalar_mode(x, 0.3, rounding_mode="floor"),
            a.fmod.Tensor(x, y + 3), a.remainder.Tensor(x, y + 3), a.log.default(x.abs() + 1),
            a.ge.Scalar(x, 0.1), a.ge.Tensor(x, y), a.le.Tensor(x, y), a.lt.Scalar(x, 0.2),
            a.ne.Scalar(i, 2), a.ne.Tensor(i, i.flip(0)), a.logical_and.default(x > 0, y > 0),
            a.logical_or.default(x > 0, y > 0), a.logical_xor.default(x > 0, i > 1),
            a.bitwise_xor.Tensor(i, i.flip(1)), a.any.default(x > 1), a.all.default(x > -5),
            a.all.dim(x > 0, 1), a.all.dims(x > -1, [0, 1]), a.any.dims(x > 0, [0]))


def test_lowerings_on_graphs_without_decompositions():
    """compile_graph on an ATen graph made by make_fx (no decompositions), against the same
    function run eagerly: every op of _direct_aten is compiled by frit and gives PyTorch's values."""
    from torch.fx.experimental.proxy_tensor import make_fx
    from frit.torch import _backend as BK
    g = torch.Generator().manual_seed(7)
    args = (torch.randn(3, 4, generator=g), torch.randn(3, 4, generator=g),
            torch.randint(0, 4, (3, 4), generator=g), torch.randn(3, 4, generator=g))
    gm = make_fx(_direct_aten, tracing_mode="fake")(*args)
    reports = []
    BK._tls.reports = reports
    try:
        compiled = BK.compile_graph(gm, args, "test")
    finally:
        BK._tls.reports = None
    got = compiled(*args)
    want = _direct_aten(*args)
    flat = lambda o: [t for e in o for t in (e if isinstance(e, (tuple, list)) else (e,))]  # noqa: E731
    gw, ww = flat(got), flat(want)
    assert len(gw) == len(ww)
    for k, (a, b) in enumerate(zip(gw, ww)):
        assert a.dtype == b.dtype and a.shape == b.shape, (k, a.dtype, b.dtype, a.shape, b.shape)
        _close(a, b, rtol=1e-5, atol=1e-6, msg=lambda m, k=k: "output %d: %s" % (k, m))
    (r,) = reports
    compiled_ops = set(r.compiled)
    called = {str(n.target) for n in gm.graph.nodes if n.op == "call_function"}
    missing = sorted(op for op in called & set(ft.mapped_ops()) if op not in compiled_ops)
    assert not missing, (missing, r.fallbacks)
