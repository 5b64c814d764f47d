"""The Python array API standard (2023.12) namespace pieces: isdtype, __array_namespace_info__,
callable dtypes (frit.float32(3) is a 0-d frit array), the accepted api_version strings."""
import functools
import inspect

import numpy as np

from . import _dtypes as D
from . import _ops as O
from . import _shape_ops as SO
from ._array import Array, asarray as _asarray
from ._errors import FritError, FritTypeError

__all__ = ["isdtype", "__array_namespace_info__"]
asarray = _asarray

API_VERSIONS = ("2021.12", "2022.12", "2023.12")


def check_api_version(api_version):
    if api_version is not None and api_version not in API_VERSIONS:
        raise ValueError("frit implements the array API versions %s, not %r"
                         % (", ".join(API_VERSIONS), api_version))


def _complex_dtypes():
    """complex64/complex128 once frit has them (looked up, so this keeps working when added)."""
    return [d for d in (getattr(D, "complex64", None), getattr(D, "complex128", None))
            if d is not None]


def _is_complex(d):
    return d.kind == "c"


_KINDS = {
    "bool": lambda d: d.kind == "b",
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: d.kind == "f",
    "complex floating": _is_complex,
    "numeric": lambda d: d.kind in "iufc",
}


def isdtype(dtype, kind):
    """Array API isdtype: whether dtype is of kind -- a dtype, one of 'bool', 'signed integer',
    'unsigned integer', 'integral', 'real floating', 'complex floating', 'numeric', or a tuple
    of those (any matches)."""
    if isinstance(dtype, Array) or not isinstance(dtype, D.DType):
        if isinstance(dtype, (str, Array)) or dtype is None:
            raise FritTypeError("isdtype: the first argument must be a dtype, got %r" % (dtype,))
        dtype = D.dtype(dtype)
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str):
        f = _KINDS.get(kind)
        if f is None:
            raise FritError("isdtype: unknown kind %r (one of %s)" % (kind, ", ".join(_KINDS)))
        return bool(f(dtype))
    try:
        return dtype is D.dtype(kind)
    except (TypeError, ValueError):
        raise FritTypeError("isdtype: kind must be a dtype, a kind name or a tuple, got %r"
                            % (kind,)) from None


class _Info:
    """What frit's array API namespace supports (frit.__array_namespace_info__())."""

    def capabilities(self):
        return {"boolean indexing": True, "data-dependent shapes": True,
                "max dimensions": 8}

    def default_device(self):
        return "cpu"

    def devices(self):
        return ["cpu"]

    def _device(self, device):
        if device not in (None, "cpu"):
            raise ValueError("frit: unknown device %r (devices: ['cpu'])" % (device,))

    def default_dtypes(self, *, device=None):
        self._device(device)
        cx = _complex_dtypes()
        out = {"real floating": D.float64, "integral": D.int64, "indexing": D.int64}
        if cx:
            out["complex floating"] = cx[-1]
        return out

    def dtypes(self, *, device=None, kind=None):
        """Array API dtypes(): name -> dtype of the standard's dtypes frit has, optionally of a
        kind (as isdtype; a tuple of kinds is their union). bfloat16 is frit's extra and is left
        out (not an array API dtype)."""
        self._device(device)
        std = [D.bool_, D.int8, D.int16, D.int32, D.int64, D.uint8, D.uint16, D.uint32,
               D.uint64, D.float32, D.float64] + _complex_dtypes()
        if kind is not None:
            std = [d for d in std if isdtype(d, kind)]
        return {d.name: d for d in std}


_INFO = _Info()


def __array_namespace_info__():
    return _INFO


def _dtype_call(self, value=0):
    """frit.float32(3): a 0-d frit array (a sequence gives an array) with numpy's conversion of
    the value: frit.int8(300) raises OverflowError as np.int8(300) does, frit.int8(3.7) is 3."""
    if isinstance(value, Array):
        return value.astype(self)
    if self is D.bfloat16:
        return _asarray(np.float32(value), dtype=self)
    return _asarray(self.value.type(value))


D.DType.__call__ = _dtype_call


def _check_device(op, device):
    if device not in (None, "cpu"):
        raise ValueError("%s: frit arrays live on 'cpu', not %r" % (op, device))


def _with_device(f):
    """The creation function f with the array API's device= keyword (only 'cpu')."""
    @functools.wraps(f)
    def g(*args, device=None, **kw):
        _check_device(f.__name__, device)
        return f(*args, **kw)
    sig = inspect.signature(f)
    params = list(sig.parameters.values())
    at = next((i for i, p in enumerate(params) if p.kind is p.VAR_KEYWORD), len(params))
    params.insert(at, inspect.Parameter("device", inspect.Parameter.KEYWORD_ONLY, default=None))
    g.__signature__ = sig.replace(parameters=params)
    return g


with_device = _with_device
# array API creation functions: numpy's signatures plus device=; frit/__init__ wraps its own
# exports of these names (the complex-aware ones) with with_device
CREATION_NAMES = ("zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like",
                  "full_like", "arange", "linspace", "eye", "asarray", "astype")
