"""frit: an optimizing tensor compiler. numpy-style arrays, evaluated lazily and compiled to fused
C kernels (see docs/python-api.md). The C library is reached through ctypes (frit._lib)."""
from . import _dtypes
from ._dtypes import (bool_ as bool, bool_, int8, int16, int32, int64, uint8, uint16, uint32,
                      uint64, float16, bfloat16, float32, float64, complex64, complex128, dtype,
                      DType)
from ._errors import FritError, FritTypeError, FritAxisError  # noqa: F401
from ._array import Array, asarray
from ._ops import *  # noqa: F401,F403
from ._ops import (abs, all, any, max, min, pow, round, sum, can_cast, finfo, iinfo,  # noqa: F401
                   result_type, realize)
from ._complex import *  # noqa: F401,F403  (real, imag, conj, angle)
from ._session import Session, current as current_session, new_session  # noqa: F401
from . import nn  # noqa: F401  (a package: imports _ops, _shape_ops, random)

__array_api_version__ = "2023.12"
newaxis = None
pi = 3.141592653589793
e = 2.718281828459045
inf = float("inf")
nan = float("nan")

from ._jit import jit  # noqa: E402,F401
from . import random  # noqa: E402,F401
from . import fft  # noqa: E402,F401
from . import image  # noqa: E402,F401  (Pillow imported on first use)
from . import window  # noqa: E402,F401  (glfw and PyOpenGL imported on first use)
from ._indexing import scatter  # noqa: E402,F401
from ._control import (kernel, loop, if_, else_, break_, continue_, var, Var,  # noqa: E402,F401
                       atomic_add, atomic_min, atomic_max, atomic_and, atomic_or, atomic_xor,
                       atomic_exchange, scatter_add, scatter_min, scatter_max, scatter_and,
                       scatter_or, scatter_xor, scatter_set, indices, set_bounds, get_bounds)
from ._diagonal import diagonal, trace  # noqa: E402,F401
from . import linalg  # noqa: E402,F401
from ._sorting import (sort, argsort, searchsorted, nonzero, flatnonzero, argwhere,  # noqa: E402,F401
                       unique, unique_all, unique_counts, unique_inverse, unique_values, interp,
                       histogram)
from . import _elementwise_extra, _manip  # noqa: E402
from ._elementwise_extra import *  # noqa: E402,F401,F403
from ._manip import *  # noqa: E402,F401,F403
from ._namespace import (isdtype, __array_namespace_info__, CREATION_NAMES as _CREATION,  # noqa: E402,F401
                         with_device as _with_device)
for _name in _CREATION:  # the array API's device= keyword
    globals()[_name] = _with_device(globals()[_name])
del _name
from ._autodiff import grad, value_and_grad, vjp, jvp, stop_gradient  # noqa: E402,F401
from . import optim  # noqa: E402,F401
from ._autodiff import custom_vjp  # noqa: E402,F401
from ._config import __version__, show_config  # noqa: E402,F401
from ._profile import profile, machine_limits  # noqa: E402,F401
from ._import import import_stablehlo, import_onnx  # noqa: E402,F401

import sys as _sys  # noqa: E402
if "torch" in _sys.modules:  # register the torch.compile backend "frit"; never imports torch itself
    try:
        from . import torch as _frit_torch  # noqa: F401
    except Exception:  # noqa: BLE001 (a torch too old or half imported: frit works without it)
        pass
del _sys
