"""frit.torch.explain: runs a model once under torch.compile(backend="frit") and reports which ATen
ops frit compiled, which fell back to PyTorch and why, and the clusters (frit programs) made."""
import torch

from . import _backend as BK


class Explanation:
    """The result of explain(): one Report per ATen graph the backend compiled (Dynamo may split a
    model into several graphs; with autograd on, the forward graph; the backward graph is compiled
    only when backward runs)."""

    def __init__(self, reports, graph_breaks):
        self.reports = reports
        self.graph_breaks = graph_breaks

    @property
    def compiled_ops(self):
        return [op for r in self.reports for op in r.compiled]

    @property
    def fallbacks(self):
        """(op name, reason) for each node left to PyTorch."""
        return [fb for r in self.reports for fb in r.fallbacks]

    @property
    def clusters(self):
        """Op names per frit program, over all graphs."""
        return [c for r in self.reports for c in r.clusters]

    @property
    def cluster_count(self):
        return len(self.clusters)

    @property
    def graph_count(self):
        return len(self.reports)

    def __str__(self):
        lines = ["frit.torch.explain: %d graph(s), %d cluster(s), %d op(s) compiled, %d fell back"
                 % (self.graph_count, self.cluster_count, len(self.compiled_ops),
                    len(self.fallbacks))]
        for gi, r in enumerate(self.reports):
            lines.append("graph %d (%s):" % (gi, r.kind))
            for ci, c in enumerate(r.clusters):
                lines.append("  cluster %d: %d ops: %s" % (ci, len(c), ", ".join(c)))
            for op, why in r.fallbacks:
                lines.append("  fallback %s: %s" % (op, why))
        if self.graph_breaks:
            lines.append("Dynamo graph breaks: %d" % self.graph_breaks)
        return "\n".join(lines)

    __repr__ = __str__


def explain(model, *args, **kwargs):
    """Compiles and runs model(*args, **kwargs) once with the frit backend, recording what each
    ATen graph became. Returns an Explanation (print it, or read .compiled_ops, .fallbacks,
    .clusters, .cluster_count, .graph_count). It resets Dynamo before and after (so that every
    graph is compiled afresh and seen): models compiled earlier recompile on their next call."""
    if not callable(model):
        raise TypeError("frit.torch.explain: model must be a torch.nn.Module or a callable, got %s"
                        % type(model).__name__)
    if not args and not kwargs:
        raise TypeError("frit.torch.explain: give the model's example inputs, "
                        "e.g. explain(model, torch.randn(2, 3))")
    for i, a in enumerate(args):
        if isinstance(a, torch.Tensor) and a.device.type != "cpu":
            raise ValueError("frit.torch.explain: argument %d is on %s; frit.torch runs CPU tensors"
                             % (i, a.device))
    reports = []
    prev = getattr(BK._tls, "reports", None)
    BK._tls.reports = reports
    try:
        torch._dynamo.reset()  # compile afresh, so every graph passes through the recorder
        compiled = torch.compile(model, backend=BK.frit_backend)
        from torch._dynamo.utils import counters
        before = sum(counters["graph_break"].values())
        compiled(*args, **kwargs)
        breaks = sum(counters["graph_break"].values()) - before
    finally:
        BK._tls.reports = prev
        torch._dynamo.reset()
    return Explanation(reports, breaks)
