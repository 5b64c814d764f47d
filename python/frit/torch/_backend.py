"""The torch.compile backend "frit": partitions ATen FX graphs (from aot_autograd) into clusters
of frit-supported nodes, runs each cluster as one frit.jit program, and leaves the rest to PyTorch."""
import operator
import threading

import numpy as np
import torch
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase

import frit
from . import _lower as LW

# Ops that alone are not worth a frit program (a cluster made only of these is left to PyTorch)
_NON_COMPUTE = {"aten.view.default", "aten._unsafe_view.default", "aten.view_copy.default",
                "aten.permute.default", "aten.t.default", "aten.transpose.int",
                "aten.expand.default", "aten.unsqueeze.default", "aten.squeeze.dim",
                "aten.squeeze.dims", "aten.squeeze.default", "aten.slice.Tensor",
                "aten.select.int", "aten.alias.default", "aten.clone.default",
                "aten.lift_fresh_copy.default", "getitem"}


class Report:
    """What one backend invocation did with one FX graph: per node compiled or fallen back."""

    def __init__(self, kind):
        self.kind = kind              # "forward", "backward" or "inference"
        self.compiled = []            # op names run by frit
        self.fallbacks = []           # (op name, reason)
        self.clusters = []            # list of lists of op names, one per frit program

    def as_dict(self):
        return {"kind": self.kind, "compiled": list(self.compiled),
                "fallbacks": list(self.fallbacks), "clusters": [list(c) for c in self.clusters]}


_tls = threading.local()


def _recorder():
    """The list reports go to while frit.torch.explain runs (None otherwise)."""
    return getattr(_tls, "reports", None)


class _Support(OperatorSupportBase):
    def __init__(self, reasons):
        self.reasons = reasons        # node -> reason, filled as nodes are checked
        self.supported = {}

    def is_node_supported(self, submodules, node):
        if node in self.supported:
            return self.supported[node]
        ok = False
        if node.op == "call_function":
            try:
                if node.target is operator.getitem:
                    src = node.args[0]
                    ok = isinstance(src, torch.fx.Node) and self.is_node_supported(submodules, src)
                    if not ok:
                        self.reasons[node] = "getitem of an op PyTorch runs"
                else:
                    LW.check_node(node)
                    ok = True
            except LW.Unsupported as e:
                self.reasons[node] = str(e)
            except Exception as e:  # noqa: BLE001 (a check that crashes means: not supported)
                self.reasons[node] = "check failed: %s: %s" % (type(e).__name__, e)
        self.supported[node] = ok
        return ok


def _op_name(node):
    return "getitem" if node.target is operator.getitem else str(node.target)


def _example(v):
    """A numpy array with the shape and dtype of a FakeTensor (the compile-time trace's input;
    numpy, because the backend runs inside PyTorch's fake-tensor mode)."""
    shape = tuple(v.shape)
    npdt = _NP[v.dtype]
    if v.dtype.is_floating_point:
        return (np.random.default_rng(0).random(shape) + 0.5).astype(npdt)
    return np.ones(shape, npdt)


_NP = {torch.float32: np.float32, torch.float64: np.float64, torch.int64: np.int64,
       torch.int32: np.int32, torch.int16: np.int16, torch.int8: np.int8, torch.uint8: np.uint8,
       torch.bool: np.bool_}


def _to_frit(t):
    """A torch CPU tensor for a frit program, through DLPack: numpy's DLPack import (what
    frit.from_dlpack does, without wrapping it in a frit Array, which frit.jit would unwrap again)
    is a zero-copy view of the tensor's memory. frit.jit binds a C-contiguous view as it is and
    copies a non-contiguous one to C order."""
    return np.from_dlpack(t.detach())


def _to_torch(a):
    """A frit output as a torch tensor through DLPack (zero-copy: the tensor views the numpy
    buffer frit.jit wrote the result into)."""
    return torch.from_dlpack(a)


class FritCluster(torch.nn.Module):
    """One cluster: the sub-graph's nodes interpreted on frit arrays inside frit.jit
    (dynamic=False: PyTorch already specialised the shapes), so it compiles to fused C kernels."""

    def __init__(self, sub_gm):
        super().__init__()
        self.sub_gm = sub_gm              # kept to fall back to if the frit trace fails
        g = sub_gm.graph
        self.placeholders = [n for n in g.nodes if n.op == "placeholder"]
        self.body = [n for n in g.nodes if n.op == "call_function"]
        out = next(n for n in g.nodes if n.op == "output")
        self.out_tuple = isinstance(out.args[0], (tuple, list))
        self.outputs = list(out.args[0]) if self.out_tuple else [out.args[0]]
        self.ops = [_op_name(n) for n in self.body]
        self.jitted = frit.jit(self._program, dynamic=False)

    def _program(self, *arrays):
        env = dict(zip(self.placeholders, arrays))

        def get(a):
            if isinstance(a, torch.fx.Node):
                return env[a]
            if isinstance(a, (list, tuple)):
                return type(a)(get(e) for e in a)
            return a

        for n in self.body:
            env[n] = LW.run_node(n, get(n.args), {k: get(v) for k, v in n.kwargs.items()})
        return tuple(env[o] for o in self.outputs)

    def trace_check(self):
        """Traces and compiles the cluster on example inputs of the right shapes and dtypes
        (raises when a lowering fails, so the cluster falls back before it is used)."""
        ex = [_example(p.meta["val"]) for p in self.placeholders]
        self.jitted.lower(*ex)

    def forward(self, *tensors):
        ins = [_to_frit(t) for t in tensors]
        outs = self.jitted(*ins)
        res = []
        seen = {t.data_ptr() for t in tensors if t.numel()}
        for o in outs:
            t = _to_torch(o)
            if t.numel():
                if t.data_ptr() in seen:
                    # an input's buffer or another output's (frit returned the same array):
                    # PyTorch expects distinct new tensors
                    t = t.clone()
                seen.add(t.data_ptr())
            res.append(t)
        return tuple(res) if self.out_tuple else res[0]


def _symbolic(gm):
    """Whether the graph has symbolic sizes (Dynamo's dynamic shapes)."""
    for n in gm.graph.nodes:
        v = n.meta.get("val")
        for t in LW._tensor_vals(v) if not isinstance(v, torch.SymInt) else [None]:
            if t is None or any(not isinstance(d, int) for d in t.shape):
                return True
    return False


class Specializing:
    """A graph with symbolic sizes, run by frit per concrete signature: on a new signature the ATen
    graph is retraced (make_fx) with the call's tensors, which fixes every size, and that static
    graph goes through compile_graph. Past MAX_SPECIALISED signatures, PyTorch runs the graph."""

    MAX_SPECIALISED = 8

    def __init__(self, gm, kind):
        self.gm = gm
        self.kind = kind
        self.cache = {}

    def __call__(self, *args):
        key = tuple((tuple(a.shape), a.dtype, a.stride()) if isinstance(a, torch.Tensor) else
                    (type(a), a) for a in args)
        fn = self.cache.get(key)
        if fn is None:
            if len(self.cache) >= self.MAX_SPECIALISED:
                return self.gm(*args)
            from torch.fx.experimental.proxy_tensor import make_fx
            with torch.no_grad():
                static = make_fx(self.gm, tracing_mode="fake")(*args)
            fn = self.cache[key] = compile_graph(static, args, self.kind + ", specialised")
        return fn(*args)


def compile_graph(gm, example_inputs, kind="forward"):
    """The compiler aot_autograd calls per ATen graph: returns a callable (the graph module with
    its frit clusters swapped in; for a graph with symbolic sizes, a Specializing)."""
    if _symbolic(gm):
        return Specializing(gm, kind)
    report = Report(kind)
    rec = _recorder()
    if rec is not None:
        rec.append(report)
    reasons = {}
    support = _Support(reasons)
    nodes = [n for n in gm.graph.nodes if n.op == "call_function"]
    for n in nodes:
        support.is_node_supported({}, n)
    part = CapabilityBasedPartitioner(gm, support, allows_single_node_partition=True)
    # a partition of data movement only (views, permutes, slices) is left to PyTorch
    partitions = [p for p in part.propose_partitions()
                  if any(_op_name(n) not in _NON_COMPUTE for n in p.nodes)]
    in_cluster = {n for p in partitions for n in p.nodes}
    if not partitions:
        _record_fallbacks(report, nodes, reasons, in_cluster)
        return gm
    by_name = {n.name: n for n in nodes}   # fused sub-graphs keep the original node names
    fused = part.fuse_partitions(partitions, prefix="frit_cluster_")
    # fuse_partitions moves nodes into sub-modules in the same order as partitions
    for name, sub in list(fused.named_children()):
        if not name.startswith("frit_cluster_"):
            continue
        cluster = FritCluster(sub)
        try:
            cluster.trace_check()
        except Exception as e:  # noqa: BLE001: the cluster runs in PyTorch instead
            why = "cluster of %d ops not compiled: %s: %s" % (len(cluster.ops), type(e).__name__, e)
            for n in cluster.body:
                orig = by_name.get(n.name, n)
                reasons[orig] = why
                in_cluster.discard(orig)
            continue
        setattr(fused, name, cluster)
        report.clusters.append(list(cluster.ops))
    _record_fallbacks(report, nodes, reasons, in_cluster)
    fused.recompile()
    return fused


def _record_fallbacks(report, nodes, reasons, in_cluster):
    for n in nodes:
        if n in in_cluster:
            report.compiled.append(_op_name(n))
        else:
            report.fallbacks.append((_op_name(n), reasons.get(
                n, "supported, but alone or only moves data (left to PyTorch)")))


# Decomposing the CPU flash-attention op in a graph that also gets a backward gives wrong
# gradients in torch 2.15 (aot_autograd with core_aten_decompositions: the in-projection grads of
# nn.TransformerEncoderLayer differ from eager by more than their size, with or without frit; the
# backward op uses the decomposed forward's saved statistics). Training graphs keep the op (it runs
# in PyTorch, both directions); inference graphs decompose it into ops frit maps.
_TRAIN_KEEP = ("aten._scaled_dot_product_flash_attention_for_cpu.default",)


def _decompositions(training):
    from torch._decomp import core_aten_decompositions
    table = core_aten_decompositions()
    if training:
        table = {k: v for k, v in table.items() if str(k) not in _TRAIN_KEEP}
    return table


def _make_backend(training):
    from torch._dynamo.backends.common import aot_autograd
    from functorch.compile import make_boxed_func

    def boxed(kind):
        def comp(gm, example_inputs):
            return make_boxed_func(compile_graph(gm, example_inputs, kind))
        return comp

    return aot_autograd(fw_compiler=boxed("forward"), bw_compiler=boxed("backward"),
                        inference_compiler=boxed("inference"),
                        decompositions=lambda: _decompositions(training))


_BACKENDS = {}


def frit_backend(gm, example_inputs, **kwargs):
    """torch.compile(model, backend="frit") calls this with a Dynamo FX graph (torch-level ops);
    aot_autograd lowers it to ATen (functionalised: in-place ops become out-of-place), splits
    forward and backward, and hands each graph to compile_graph."""
    training = torch.is_grad_enabled() and any(
        isinstance(t, torch.Tensor) and t.requires_grad for t in example_inputs)
    if training not in _BACKENDS:
        _BACKENDS[training] = _make_backend(training)
    return _BACKENDS[training](gm, example_inputs, **kwargs)
