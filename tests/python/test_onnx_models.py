"""Whole models through frit.import_onnx: an MLP, a CNN and a transformer encoder block, built with
onnx.helper the way exporters write them (Gemm/MatMul, Conv + BatchNormalization, attention with
Shape -> Gather -> Concat -> Reshape shape arithmetic, LayerNormalization) and checked against numpy;
the same three exported by torch.onnx.export when torch is installed, checked against torch; external
data files; and bad input (garbage bytes, truncations, unsupported ops) as errors naming the node."""
import os
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import frit  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import onnx_cases  # noqa: E402

if onnx_cases.importer_missing():
    pytest.skip(onnx_cases.importer_missing(), allow_module_level=True)

RNG = np.random.default_rng(0)


def _w(*shape, scale=0.3):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def _model(nodes, inputs, outputs, inits, opset=17):
    g = helper.make_graph(nodes, "g", inputs, outputs, [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(m)
    return m


def _vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def _run(m, *args):
    mod = frit.import_onnx(m.SerializeToString())
    out = mod(*args)
    return np.asarray(out)


def test_mlp():
    w1, b1, w2, b2 = _w(8, 16), _w(16), _w(16, 4), _w(4)
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1"),
             helper.make_node("Relu", ["h"], ["r"], name="relu"),
             helper.make_node("MatMul", ["r", "w2"], ["m"], name="fc2"),
             helper.make_node("Add", ["m", "b2"], ["y"], name="bias2")]
    m = _model(nodes, [_vi("x", [5, 8])], [_vi("y", [5, 4])], dict(w1=w1, b1=b1, w2=w2, b2=b2))
    x = _w(5, 8, scale=1)
    want = np.maximum(x @ w1 + b1, 0) @ w2 + b2
    np.testing.assert_allclose(_run(m, x), want, rtol=1e-5, atol=1e-5)


def _conv_ref(x, w, b, pad):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    out = np.zeros((n, o, h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1), np.float32)
    for i in range(out.shape[2]):
        for j in range(out.shape[3]):
            out[:, :, i, j] = np.einsum("nchw,ochw->no", xp[:, :, i:i + kh, j:j + kw], w)
    return out + b[None, :, None, None]


def test_cnn():
    w1, b1 = _w(4, 1, 3, 3), _w(4)
    scale, bias, mean, var = _w(4) + 1, _w(4), _w(4), np.abs(_w(4)) + 0.5
    w2, b2 = _w(4 * 4 * 4, 3), _w(3)
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "s", "bb", "mu", "var"], ["bn"], name="bn",
                              epsilon=1e-5),
             helper.make_node("Relu", ["bn"], ["r"], name="relu"),
             helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Flatten", ["p"], ["f"], name="flat", axis=1),
             helper.make_node("Gemm", ["f", "w2", "b2"], ["y"], name="fc")]
    m = _model(nodes, [_vi("x", [2, 1, 8, 8])], [_vi("y", [2, 3])],
               dict(w1=w1, b1=b1, s=scale, bb=bias, mu=mean, var=var, w2=w2, b2=b2))
    x = _w(2, 1, 8, 8, scale=1)
    c = _conv_ref(x, w1, b1, 1)
    bn = (c - mean[None, :, None, None]) / np.sqrt(var[None, :, None, None] + 1e-5) * scale[None, :, None, None] \
        + bias[None, :, None, None]
    r = np.maximum(bn, 0)
    p = r.reshape(2, 4, 4, 2, 4, 2).max(axis=(3, 5))
    want = p.reshape(2, -1) @ w2 + b2
    np.testing.assert_allclose(_run(m, x), want, rtol=1e-4, atol=1e-4)


def test_transformer_block():
    """Self-attention (2 heads) + residual + LayerNorm + GELU feed-forward + residual + LayerNorm,
    with the head split written as exporters do: Shape -> Gather -> Unsqueeze -> Concat -> Reshape."""
    B, T, D, H = 2, 5, 8, 2
    wq, wk, wv, wo, w1, w2 = _w(D, D), _w(D, D), _w(D, D), _w(D, D), _w(D, 16), _w(16, D)
    g1, be1, g2, be2 = _w(D) + 1, _w(D), _w(D) + 1, _w(D)
    c = lambda name, v: helper.make_node("Constant", [], [name], name="const_" + name,  # noqa: E731
                                         value=numpy_helper.from_array(np.array(v, np.int64)))
    N = helper.make_node
    nodes = [c("i0", 0), c("i1", 1), c("heads", [H]), c("hd", [D // H]), c("ax0", [0]), c("dm", [D]),
             N("Shape", ["x"], ["xs"], name="shape"),
             N("Gather", ["xs", "i0"], ["b"], name="gather_b", axis=0),
             N("Gather", ["xs", "i1"], ["t"], name="gather_t", axis=0),
             N("Unsqueeze", ["b", "ax0"], ["b1"], name="unsq_b"),
             N("Unsqueeze", ["t", "ax0"], ["t1"], name="unsq_t"),
             N("Concat", ["b1", "t1", "heads", "hd"], ["split_shape"], name="cat_split", axis=0),
             N("Concat", ["b1", "t1", "dm"], ["merge_shape"], name="cat_merge", axis=0)]
    for nm, w in (("q", "wq"), ("k", "wk"), ("v", "wv")):
        nodes += [N("MatMul", ["x", w], [nm + "0"], name="proj_" + nm),
                  N("Reshape", [nm + "0", "split_shape"], [nm + "1"], name="split_" + nm),
                  N("Transpose", [nm + "1"], [nm], name="heads_" + nm, perm=[0, 2, 1, 3])]
    nodes += [N("Transpose", ["k"], ["kt"], name="kt", perm=[0, 1, 3, 2]),
              N("MatMul", ["q", "kt"], ["s0"], name="scores"),
              N("Div", ["s0", "sqrt_d"], ["s"], name="scale"),
              N("Softmax", ["s"], ["a"], name="softmax", axis=-1),
              N("MatMul", ["a", "v"], ["o0"], name="attend"),
              N("Transpose", ["o0"], ["o1"], name="merge_t", perm=[0, 2, 1, 3]),
              N("Reshape", ["o1", "merge_shape"], ["o2"], name="merge"),
              N("MatMul", ["o2", "wo"], ["o"], name="out_proj"),
              N("Add", ["x", "o"], ["h0"], name="res1"),
              N("LayerNormalization", ["h0", "g1", "be1"], ["h"], name="ln1", axis=-1, epsilon=1e-5),
              N("MatMul", ["h", "w1"], ["f0"], name="ff1"),
              N("Gelu", ["f0"], ["f1"], name="gelu"),
              N("MatMul", ["f1", "w2"], ["f2"], name="ff2"),
              N("Add", ["h", "f2"], ["y0"], name="res2"),
              N("LayerNormalization", ["y0", "g2", "be2"], ["y"], name="ln2", axis=-1, epsilon=1e-5)]
    inits = dict(wq=wq, wk=wk, wv=wv, wo=wo, w1=w1, w2=w2, g1=g1, be1=be1, g2=g2, be2=be2,
                 sqrt_d=np.array(np.sqrt(D // H), np.float32))
    m = _model(nodes, [_vi("x", [B, T, D])], [_vi("y", [B, T, D])], inits, opset=20)
    x = _w(B, T, D, scale=1)

    def ln(v, g, b):
        mu = v.mean(-1, keepdims=True)
        return (v - mu) / np.sqrt(((v - mu) ** 2).mean(-1, keepdims=True) + 1e-5) * g + b

    def heads(v):
        return v.reshape(B, T, H, D // H).transpose(0, 2, 1, 3)
    q, k, v = heads(x @ wq), heads(x @ wk), heads(x @ wv)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(D // H)
    a = np.exp(s - s.max(-1, keepdims=True))
    a /= a.sum(-1, keepdims=True)
    o = (a @ v).transpose(0, 2, 1, 3).reshape(B, T, D) @ wo
    h = ln(x + o, g1, be1)
    from math import erf
    f0 = h @ w1
    f1 = 0.5 * f0 * (1 + np.vectorize(erf)(f0 / np.sqrt(2)))
    want = ln(h + f1 @ w2, g2, be2)
    np.testing.assert_allclose(_run(m, x), want, rtol=1e-4, atol=1e-4)
    assert "Reshape 'split_q'" in frit.import_onnx(m.SerializeToString()).text()


def test_external_data(tmp_path):
    w = _w(64, 64)
    m = _model([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], [_vi("x", [2, 64])],
               [_vi("y", [2, 64])], dict(w=w))
    path = str(tmp_path / "m.onnx")
    onnx.save_model(m, path, save_as_external_data=True, all_tensors_to_one_file=True, location="w.data",
                    size_threshold=16)
    assert os.path.exists(tmp_path / "w.data")
    x = _w(2, 64)
    mod = frit.import_onnx(path)
    np.testing.assert_allclose(np.asarray(mod(x)), x @ w, rtol=1e-5, atol=1e-5)
    # from bytes there is no directory to find w.data in
    with pytest.raises(frit.FritError, match="w.data"):
        frit.import_onnx(open(path, "rb").read())


def test_bad_input():
    m = _model([helper.make_node("Relu", ["x"], ["y"], name="r")], [_vi("x", [3])], [_vi("y", [3])], {})
    data = m.SerializeToString()
    with pytest.raises(frit.FritError, match="not a valid ModelProto"):
        frit.import_onnx(b"\x0a\xff\xff\xff\xff\x0f garbage")
    for n in range(len(data)):
        try:
            frit.import_onnx(data[:n])
        except frit.FritError as e:
            assert str(e)
    bad = _model([helper.make_node("Relu", ["x"], ["y"], name="r")], [_vi("x", [3])], [_vi("y", [3])], {})
    bad.graph.node[0].op_type = "NoSuchOp"
    bad.graph.node[0].name = "the_node"
    with pytest.raises(frit.FritError, match=r"unsupported op 'NoSuchOp' \(node 0 'the_node'"):
        frit.import_onnx(bad.SerializeToString())
    old = _model([helper.make_node("Relu", ["x"], ["y"], name="r")], [_vi("x", [3])], [_vi("y", [3])], {}, opset=7)
    old.opset_import[0].version = 22
    with pytest.raises(frit.FritError, match="unsupported opset 22"):
        frit.import_onnx(old.SerializeToString())
    s = helper.make_model(helper.make_graph([helper.make_node("Identity", ["x"], ["y"], name="i")], "g",
                                            [helper.make_tensor_value_info("x", TensorProto.STRING, [2])],
                                            [helper.make_tensor_value_info("y", TensorProto.STRING, [2])]),
                          opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(frit.FritError, match="STRING"):
        frit.import_onnx(s.SerializeToString())


# ---------------------------------------------------------------- exported by torch

def _torch_export(model, x, tmp_path):
    torch = pytest.importorskip("torch")
    import inspect
    path = str(tmp_path / "m.onnx")
    kw = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    model.eval()
    with torch.no_grad():
        torch.onnx.export(model, (x,), path, opset_version=17, input_names=["x"], output_names=["y"], **kw)
        want = model(x).numpy()
    return path, want


def _torch_check(model, x, tmp_path, tol=1e-4):
    path, want = _torch_export(model, x, tmp_path)
    got = np.asarray(frit.import_onnx(path)(x.numpy()))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_torch_mlp(tmp_path):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    nn = torch.nn
    _torch_check(nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16), nn.Tanh(), nn.Linear(16, 4)),
                 torch.randn(5, 8), tmp_path)


def test_torch_cnn(tmp_path):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    nn = torch.nn
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(4, 8, 3, stride=2, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                          nn.Flatten(), nn.Linear(8, 3))
    with torch.no_grad():  # non-trivial running statistics
        model[1].running_mean.uniform_(-0.5, 0.5)
        model[1].running_var.uniform_(0.5, 1.5)
    _torch_check(model, torch.randn(2, 1, 12, 12), tmp_path)


def test_torch_transformer_encoder(tmp_path):
    """A pre-norm encoder block written with torch's basic ops (nn.TransformerEncoderLayer's
    exporter path fails in this torch: its scaled_dot_product_attention takes a traced is_causal)."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)

    class Block(torch.nn.Module):
        def __init__(self, d=16, heads=2, ff=32):
            super().__init__()
            self.h, self.dk = heads, d // heads
            self.qkv, self.out = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
            self.n1, self.n2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
            self.ff = torch.nn.Sequential(torch.nn.Linear(d, ff), torch.nn.GELU(), torch.nn.Linear(ff, d))

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(self.n1(x)).reshape(b, t, 3, self.h, self.dk).permute(2, 0, 3, 1, 4)
            a = torch.softmax(q @ k.transpose(-1, -2) / self.dk ** 0.5, dim=-1) @ v
            x = x + self.out(a.transpose(1, 2).reshape(b, t, d))
            return x + self.ff(self.n2(x))

    _torch_check(Block().eval(), torch.randn(2, 6, 16), tmp_path, tol=2e-4)


def test_cli_import_onnx(tmp_path):
    """frit import FILE.onnx --print: the signature (weights marked) and the nodes; --graph: the
    frit graph; a broken file: exit status 2 with the reason."""
    import subprocess
    cli = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "build", "frit")
    m = _model([helper.make_node("MatMul", ["x", "w"], ["m"], name="mm"), helper.make_node("Tanh", ["m"], ["y"], name="act")],
               [_vi("x", [2, 3])], [_vi("y", [2, 4])], dict(w=_w(3, 4)))
    path = tmp_path / "m.onnx"
    path.write_bytes(m.SerializeToString())
    r = subprocess.run([cli, "import", str(path), "--print"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "input 0 x: f32[2, 3]" in r.stdout and "(weight)" in r.stdout and "MatMul" in r.stdout
    r = subprocess.run([cli, "import", str(path), "--graph"], capture_output=True, text=True)
    assert r.returncode == 0 and "tanh" in r.stdout.lower()
    path.write_bytes(m.SerializeToString()[:20])
    r = subprocess.run([cli, "import", str(path)], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.strip()
