"""frit.nn: neural-network functions (frit.nn.functional, also importable from here as before),
modules (Linear, Conv2d, ...), losses and initialisers. See docs/training.md."""
from .functional import *  # noqa: F401,F403
from . import checkpoint, functional, init  # noqa: F401
from .checkpoint import save, load  # noqa: F401
from .modules import *  # noqa: F401,F403
