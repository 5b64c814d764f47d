"""frit.torch: a torch.compile backend ("frit") that runs the ATen ops frit supports as fused frit
programs and leaves the rest to PyTorch, and explain() to show what compiled. Importing it registers
the backend name: torch.compile(model, backend="frit"). See docs/torch.md."""
from ._backend import frit_backend, compile_graph  # noqa: F401
from ._explain import explain, Explanation  # noqa: F401
from ._lower import mapped_ops  # noqa: F401

__all__ = ["frit_backend", "explain", "Explanation", "mapped_ops", "register"]


def register(name="frit"):
    """Registers frit_backend under `name` with Dynamo (done on import; a no-op when the name is
    already registered, or is an installed entry point Dynamo will load by itself)."""
    from torch._dynamo.backends import registry as R
    if name in R._COMPILER_FNS:
        return
    if R._BACKENDS.get(name) is not None and name == "frit":
        return  # the installed entry point: lookup_backend loads and registers it
    R.register_backend(compiler_fn=frit_backend, name=name)


register()
