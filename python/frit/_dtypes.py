"""frit dtype objects (frit.float32 ...): compare equal to numpy dtypes, scalar types and names;
conversions between frit C codes, numpy storage/value dtypes and user dtype specifications."""
import numpy as np

from . import _lib as L
from ._errors import FritTypeError


class DType:
    """A frit element dtype. `code` is the C frit_dtype; `storage` the numpy dtype of its memory
    image (bfloat16: uint16 bits); `value` the numpy dtype holding its values (bfloat16: float32)."""
    __slots__ = ("name", "code", "storage", "value", "kind", "itemsize", "short")

    def __init__(self, name, code, storage, value, kind, short):
        self.name, self.code, self.short = name, code, short
        self.storage, self.value = np.dtype(storage), np.dtype(value)
        self.kind = kind  # numpy kind letter: b i u f
        self.itemsize = self.storage.itemsize

    @property
    def dtype(self):
        """numpy's dtype protocol: np.dtype(frit.float32) == np.float32. bfloat16 has none."""
        if self.code == L.BF16:
            raise AttributeError("bfloat16 has no numpy dtype")
        return self.value

    def __repr__(self):
        return "frit." + self.name

    def __str__(self):
        return self.name

    def __eq__(self, other):
        if isinstance(other, DType):
            return self is other
        try:
            return self is dtype(other)
        except (TypeError, ValueError):
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(self.value) if self.code != L.BF16 else hash("bfloat16")

    def __reduce__(self):
        return (dtype, (self.name,))


bool_ = DType("bool", L.BOOL, np.bool_, np.bool_, "b", "bool")
int8 = DType("int8", L.I8, np.int8, np.int8, "i", "i8")
int16 = DType("int16", L.I16, np.int16, np.int16, "i", "i16")
int32 = DType("int32", L.I32, np.int32, np.int32, "i", "i32")
int64 = DType("int64", L.I64, np.int64, np.int64, "i", "i64")
uint8 = DType("uint8", L.U8, np.uint8, np.uint8, "u", "u8")
uint16 = DType("uint16", L.U16, np.uint16, np.uint16, "u", "u16")
uint32 = DType("uint32", L.U32, np.uint32, np.uint32, "u", "u32")
uint64 = DType("uint64", L.U64, np.uint64, np.uint64, "u", "u64")
float16 = DType("float16", L.F16, np.float16, np.float16, "f", "f16")
bfloat16 = DType("bfloat16", L.BF16, np.uint16, np.float32, "f", "bf16")
float32 = DType("float32", L.F32, np.float32, np.float32, "f", "f32")
float64 = DType("float64", L.F64, np.float64, np.float64, "f", "f64")

# complex: interleaved (re, im) pairs, numpy's layout, so numpy buffers are shared as they are
complex64 = DType("complex64", L.C64, np.complex64, np.complex64, "c", "c64")
complex128 = DType("complex128", L.C128, np.complex128, np.complex128, "c", "c128")
COMPLEX = [complex64, complex128]

ALL = [bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, bfloat16,
       float32, float64, complex64, complex128]
BY_CODE = {d.code: d for d in ALL}
_BY_NP = {d.value: d for d in ALL if d is not bfloat16}
_BY_NAME = {}
for _d in ALL:
    _BY_NAME[_d.name] = _d
    _BY_NAME[_d.short] = _d
_BY_NAME.update({"bool_": bool_, "float": float64, "int": int64, "double": float64,
                 "half": float16, "single": float32, "complex": complex128,
                 "cfloat": complex128, "csingle": complex64, "cdouble": complex128})
_PY = {bool: bool_, int: int64, float: float64, complex: complex128}


def real_part(d):
    """The float dtype of a complex dtype's parts (complex64 -> float32); other dtypes: d."""
    return float32 if d is complex64 else float64 if d is complex128 else d


def complex_of(d):
    """numpy's complex dtype for real parts of dtype d (float32/16, bfloat16, small ints:
    complex64; the rest complex128); a complex dtype is itself."""
    if d.kind == "c":
        return d
    return complex64 if d in (bool_, int8, uint8, int16, uint16, float16, bfloat16, float32) \
        else complex128


def dtype(x):
    """frit DType of a specification: a DType, numpy dtype or scalar type, a name ('float32',
    'f32', 'bfloat16'), or the Python types bool/int/float."""
    if isinstance(x, DType):
        return x
    if isinstance(x, str):
        d = _BY_NAME.get(x)
        if d is not None:
            return d
    elif x in _PY and isinstance(x, type):
        return _PY[x]
    if x is None:
        raise FritTypeError("dtype None: give a dtype such as frit.float32")
    try:
        npd = np.dtype(x)
    except (TypeError, ValueError):
        raise FritTypeError("not a dtype frit supports: %r" % (x,)) from None
    d = _BY_NP.get(npd)
    if d is None:
        raise FritTypeError("dtype %s is not supported by frit (supported: %s)"
                            % (npd, ", ".join(d.name for d in ALL)))
    return d


def from_numpy(npd):
    """frit DType of a numpy array dtype, or None when frit has no such dtype."""
    return _BY_NP.get(npd)


def is_float(d):
    return d.kind == "f"


def is_int(d):
    return d.kind in "iu"


class _BF16Info:
    """numpy.finfo-like limits of bfloat16."""
    bits = 16
    dtype = bfloat16
    eps = float(2.0 ** -7)
    epsneg = float(2.0 ** -8)
    max = float(np.float32(3.3895313892515355e38))
    min = -max
    tiny = smallest_normal = float(2.0 ** -126)
    smallest_subnormal = float(2.0 ** -133)
    resolution = 0.01
    precision = 2
    nmant = 7
    nexp = 8
    maxexp = 128
    minexp = -126

    def __repr__(self):
        return "finfo(resolution=0.01, min=-3.39e+38, max=3.39e+38, dtype=bfloat16)"


class _Info:
    """numpy's finfo/iinfo with the array API's types: Python floats/ints for the limits and the
    frit dtype as .dtype; numpy's other attributes pass through."""

    def __init__(self, npinfo, d):
        self._np, self.dtype = npinfo, d
        self.bits = int(npinfo.bits)
        conv = float if d.kind == "f" else int
        for k in ("max", "min") + (("eps", "smallest_normal") if d.kind == "f" else ()):
            setattr(self, k, conv(getattr(npinfo, k)))

    def __getattr__(self, k):
        return getattr(self._np, k)

    def __repr__(self):
        return repr(self._np).replace(str(self._np.dtype), self.dtype.name)


def finfo(x):
    """numpy.finfo of a float dtype (or array); bfloat16 gets its own limits."""
    d = dtype(getattr(x, "dtype", x))
    if d is bfloat16:
        return _BF16Info()
    if d.kind == "c":
        return np.finfo(d.value)
    if d.kind != "f":
        raise FritTypeError("finfo of non-float dtype %s" % d.name)
    return _Info(np.finfo(d.value), d)


def iinfo(x):
    """numpy.iinfo of an integer dtype (or array)."""
    d = dtype(getattr(x, "dtype", x))
    if d.kind not in "iu":
        raise FritTypeError("iinfo of non-integer dtype %s" % d.name)
    return _Info(np.iinfo(d.value), d)


def can_cast(from_, to, casting="safe"):
    """numpy.can_cast on frit dtypes (bfloat16: exact in float32/float64; bool/int8/uint8 fit)."""
    a = dtype(getattr(from_, "dtype", from_))
    b = dtype(to)
    if casting not in ("no", "equiv", "safe", "same_kind", "unsafe"):
        raise FritTypeError("casting must be one of 'no', 'equiv', 'safe', 'same_kind', 'unsafe'")
    if a is not bfloat16 and b is not bfloat16:
        return bool(np.can_cast(a.value, b.value, casting))
    if a is b or casting == "unsafe":
        return True
    if casting in ("no", "equiv"):
        return False
    safe = (b in (float32, float64, complex64, complex128)) if a is bfloat16 else (a in (bool_, int8, uint8))
    if casting == "safe":
        return safe
    return safe or b.kind in "fc"  # same_kind: anything casts to a float kind
