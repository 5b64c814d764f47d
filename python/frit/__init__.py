"""frit: an optimizing tensor compiler. numpy-style arrays, evaluated lazily and compiled to fused
C kernels (see docs/python-api.md). The C library is reached through ctypes (frit._lib)."""
from . import _dtypes
from ._dtypes import (bool_ as bool, bool_, int8, int16, int32, int64, uint8, uint16, uint32,
                      uint64, float16, bfloat16, float32, float64, dtype, DType)
from ._errors import FritError, FritTypeError
from ._array import Array, asarray
from ._ops import *  # noqa: F401,F403
from ._ops import (abs, all, any, max, min, pow, round, sum, can_cast, finfo, iinfo,  # noqa: F401
                   result_type, realize)
from ._session import Session, current as current_session, new_session  # noqa: F401
from . import nn  # noqa: F401

__array_api_version__ = "2023.12"
newaxis = None
pi = 3.141592653589793
e = 2.718281828459045
inf = float("inf")
nan = float("nan")

from ._jit import jit  # noqa: E402,F401
from . import random  # noqa: E402,F401
from ._indexing import scatter  # noqa: E402,F401
from ._control import (kernel, loop, if_, else_, break_, continue_, var, Var,  # noqa: E402,F401
                       atomic_add, atomic_min, atomic_max, atomic_and, atomic_or, atomic_xor,
                       atomic_exchange, scatter_add, scatter_min, scatter_max, scatter_and,
                       scatter_or, scatter_xor, scatter_set, indices, set_bounds, get_bounds)
from ._elementwise_extra import *  # noqa: E402,F401,F403
from ._manip import *  # noqa: E402,F401,F403
from ._namespace import isdtype, __array_namespace_info__, CREATION as _C  # noqa: E402,F401
globals().update(_C)  # creation functions with device= (array API)
