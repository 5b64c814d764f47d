"""Runs one ONNX backend node test case (Debian's libonnx-testdata: model.onnx and
test_data_set_0/{input,output}_N.pb) through frit.import_onnx and compares with the stored outputs.
Shared by tests/python/test_onnx_node.py and tests/python/onnx_table.py (docs/onnx.md's table).

Graph inputs that an op needs while the graph is built (Reshape's shape, Slice's bounds, axes, pads,
repeats ...) are turned into initializers holding the test's values: frit builds static graphs, and
a deployed model has them as initializers or Constant nodes. Everything else stays a run-time
argument."""
import glob
import os

import numpy as np

TESTDATA = os.environ.get("FRIT_ONNX_TESTDATA", "/usr/share/libonnx-testdata/data/node")

# op -> positions of inputs frit must know at build time (see the module docstring)
STATIC_INPUTS = {
    "Reshape": {1}, "Slice": {1, 2, 3, 4}, "Pad": {1, 2, 3}, "Expand": {1}, "Tile": {1},
    "Unsqueeze": {1}, "Squeeze": {1}, "Split": {1}, "ConstantOfShape": {0}, "Range": {0, 1, 2},
    "TopK": {1}, "OneHot": {1}, "CumSum": {1}, "Trilu": {1},
    "ReduceSum": {1}, "ReduceMean": {1}, "ReduceMax": {1}, "ReduceMin": {1}, "ReduceProd": {1},
    "ReduceL1": {1}, "ReduceL2": {1}, "ReduceLogSum": {1}, "ReduceLogSumExp": {1},
    "ReduceSumSquare": {1}, "HannWindow": {0}, "HammingWindow": {0}, "BlackmanWindow": {0},
    "Dropout": {1, 2}, "RNN": {4}, "GRU": {4}, "LSTM": {4},
    "Compress": {1}, "MaxUnpool": {2}, "DFT": {1, 2}, "Resize": {1, 2, 3}, "Upsample": {1},
}


def importer_missing():
    """The reason this libfrit cannot import ONNX (built without protobuf-c), or None."""
    import frit
    try:
        frit.import_onnx(b"")
    except frit.FritError as e:
        if "without protobuf-c" in str(e) or "without the ONNX importer" in str(e):
            return str(e)
    return None


def cases():
    if not os.path.isdir(TESTDATA):
        return []
    return sorted(d for d in os.listdir(TESTDATA) if os.path.exists(os.path.join(TESTDATA, d, "model.onnx")))


def case_ops(model):
    return sorted({n.op_type for n in model.graph.node})


def load_case(name):
    import onnx
    from onnx import numpy_helper
    d = os.path.join(TESTDATA, name)
    model = onnx.load(os.path.join(d, "model.onnx"))
    ds = os.path.join(d, "test_data_set_0")

    def read(kind):
        out = []
        files = sorted(glob.glob(os.path.join(ds, kind + "_*.pb")), key=lambda p: int(p.rsplit("_", 1)[1][:-3]))
        for p in files:
            t = onnx.TensorProto()
            with open(p, "rb") as f:
                t.ParseFromString(f.read())
            out.append(numpy_helper.to_array(t))
        return out
    return model, read("input"), read("output")


def bind_static_inputs(model, inputs):
    """The model with build-time inputs made initializers, and the remaining arguments."""
    from onnx import numpy_helper
    g = model.graph
    inits = {i.name for i in g.initializer}
    real = [v for v in g.input if v.name not in inits]
    static = set()
    for node in g.node:
        for k in STATIC_INPUTS.get(node.op_type, ()):
            if k < len(node.input) and node.input[k]:
                static.add(node.input[k])
    # and what those values are computed from (Shape and Size only need their input's shape)
    for node in reversed(g.node):
        if node.op_type not in ("Shape", "Size") and static & set(node.output):
            static.update(i for i in node.input if i)
    if not static & {v.name for v in real}:
        return model, inputs
    keep_vals, keep_vis = [], []
    for v, x in zip(real, inputs):
        if v.name in static:
            g.initializer.append(numpy_helper.from_array(np.asarray(x), v.name))
        else:
            keep_vals.append(x)
            keep_vis.append(v)
    del g.input[:]
    g.input.extend(keep_vis)
    return model, keep_vals


def compare(got, want, rtol=1e-3, atol=1e-5):
    """None when equal within the backend tests' tolerance, else a message."""
    got = np.asarray(got)
    if got.shape != want.shape:
        return "shape %s, expected %s" % (got.shape, want.shape)
    if want.dtype == np.bool_ or want.dtype.kind in "iu":
        if got.dtype != want.dtype:
            return "dtype %s, expected %s" % (got.dtype, want.dtype)
        return None if np.array_equal(got, want) else "values differ: %s vs %s" % (got.ravel()[:8], want.ravel()[:8])
    g, w = got.astype(np.float64), want.astype(np.float64)
    if got.dtype != want.dtype:
        return "dtype %s, expected %s" % (got.dtype, want.dtype)
    if np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True):
        return None
    err = np.nanmax(np.abs(g - w)) if g.size else 0
    return "max abs error %g" % err


def _non_tensor(model):
    for v in list(model.graph.input) + list(model.graph.output):
        if not v.type.HasField("tensor_type"):
            return "graph value '%s' is a %s, not a tensor" % (v.name, v.type.WhichOneof("value"))
    return None


BF16 = 16  # onnx.TensorProto.BFLOAT16


def _bf16_values(bits):
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def run_case(name):
    """('pass', ''), ('unsupported', reason) or ('fail', reason)."""
    import onnx
    import frit
    model = onnx.load(os.path.join(TESTDATA, name, "model.onnx"))
    why = _non_tensor(model)
    if why:
        return "unsupported", why
    model, inputs, outputs = load_case(name)
    inits = {i.name for i in model.graph.initializer}
    in_types = [v.type.tensor_type.elem_type for v in model.graph.input if v.name not in inits]
    inputs = [frit.asarray(_bf16_values(x), dtype=frit.bfloat16) if t == BF16 else x
              for x, t in zip(inputs, in_types)]
    outputs = [_bf16_values(w) if v.type.tensor_type.elem_type == BF16 else w
               for w, v in zip(outputs, model.graph.output)]
    model, args = bind_static_inputs(model, inputs)
    try:
        m = frit.import_onnx(model.SerializeToString())
    except frit.FritError as e:
        msg = str(e)
        if "unsupported" in msg or "not supported" in msg:
            return "unsupported", msg
        return "fail", "import: " + msg
    try:
        res = m._tuple and m(*args) or m(*args)
        res = res if isinstance(res, tuple) else (res,)
        res = [np.asarray(r.astype(frit.float32)) if r.dtype is frit.bfloat16 else np.asarray(r) for r in res]
    except frit.FritError as e:
        msg = str(e)
        if "not supported" in msg or "unsupported" in msg:
            return "unsupported", msg
        return "fail", "call: " + msg
    if len(res) != len(outputs):
        return "fail", "%d outputs, expected %d" % (len(res), len(outputs))
    for k, (g, w) in enumerate(zip(res, outputs)):
        err = compare(g, w)
        if err:
            return "fail", "output %d: %s" % (k, err)
    return "pass", ""
