"""Thin ctypes binding of libfrit.so: the tensor and program API of include/frit.h, dtype mapping
to numpy, and `compile`/`run` helpers. The later `frit` Python package builds on this module."""
import ctypes as C
import os

import numpy as np

# ---------------------------------------------------------------- library loading

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(os.path.dirname(_HERE))


def library_path():
    """$FRIT_LIB, else the copy installed inside the package (pip install), else build/libfrit.so
    of the checkout this package lives in (PYTHONPATH=python, pip install -e)."""
    env = os.environ.get("FRIT_LIB")
    if env:
        return env
    for path in (os.path.join(_HERE, "libfrit.so"), os.path.join(_ROOT, "build", "libfrit.so")):
        if os.path.exists(path):
            return path
    raise ImportError("frit: libfrit.so not found: not installed in the package (%s) nor built in "
                      "a checkout (%s). Run `pip install .` or `make` in the frit checkout, or set "
                      "FRIT_LIB to the library." % (_HERE, os.path.join(_ROOT, "build")))


lib = C.CDLL(library_path())

# ---------------------------------------------------------------- dtypes

VOID, BOOL, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64, C64, C128 = range(16)
DTYPE_NAMES = ["void", "bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
               "f16", "bf16", "f32", "f64", "c64", "c128"]
ALL_DTYPES = list(range(BOOL, F64 + 1))  # the real dtypes (complex: COMPLEX_DTYPES)
COMPLEX_DTYPES = [C64, C128]
INT_DTYPES = [I8, I16, I32, I64, U8, U16, U32, U64]
SINT_DTYPES = [I8, I16, I32, I64]
UINT_DTYPES = [U8, U16, U32, U64]
FLOAT_DTYPES = [F16, BF16, F32, F64]

# Storage dtype in memory. bf16 is held as its raw uint16 bit pattern.
_STORAGE = {BOOL: np.bool_, I8: np.int8, I16: np.int16, I32: np.int32, I64: np.int64,
            U8: np.uint8, U16: np.uint16, U32: np.uint32, U64: np.uint64,
            F16: np.float16, BF16: np.uint16, F32: np.float32, F64: np.float64,
            C64: np.complex64, C128: np.complex128}  # complex: interleaved, as numpy
_FROM_NP = {np.dtype(v): k for k, v in _STORAGE.items() if k != BF16}


def storage_dtype(dt):
    """numpy dtype of the memory image of frit dtype dt (bf16: uint16 bits)."""
    return np.dtype(_STORAGE[dt])


def value_dtype(dt):
    """numpy dtype that holds the values of frit dtype dt exactly (bf16: float32)."""
    return np.dtype(np.float32) if dt == BF16 else storage_dtype(dt)


def from_numpy_dtype(npdt):
    return _FROM_NP[np.dtype(npdt)]


def to_numpy_dtype(dt):
    return value_dtype(dt)


def bf16_bits(x):
    """float32 values -> bf16 bit patterns (uint16), round to nearest even; NaN stays NaN."""
    x = np.array(x, dtype=np.float32, order="C")  # (ascontiguousarray would make 0-d 1-d)
    u = x.view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(x)
    if nan.any():
        r = np.where(nan, ((u >> 16) | 0x40).astype(np.uint16), r)
    return np.asarray(r, dtype=np.uint16).reshape(x.shape)  # ufuncs turn 0-d into scalars


def bf16_value(bits):
    """bf16 bit patterns (uint16) -> float32 values (exact)."""
    b = np.asarray(bits, dtype=np.uint16)
    return np.asarray(b.astype(np.uint32) << 16).view(np.float32).reshape(b.shape)


def round_bf16(x):
    """numpy emulation of a bf16 value: float32 rounded to bf16 (returned as float32)."""
    return bf16_value(bf16_bits(x))


def to_storage(a, dt):
    """numpy values -> dense C-order memory image for frit dtype dt."""
    if dt == BF16:
        return bf16_bits(np.asarray(a, dtype=np.float32))
    return np.array(a, dtype=storage_dtype(dt), order="C")


def from_storage(a, dt):
    return bf16_value(a) if dt == BF16 else a


# ---------------------------------------------------------------- prototypes

_p = C.c_void_p
_i64p = C.POINTER(C.c_int64)
_intp = C.POINTER(C.c_int)


class Binding(C.Structure):
    _fields_ = [("name", C.c_char_p), ("value", C.c_int64)]


class CompileOpts(C.Structure):
    _fields_ = [("cc", C.c_char_p), ("cflags", C.c_char_p), ("cache_dir", C.c_char_p),
                ("threads", C.c_int), ("no_fusion", C.c_int), ("interpret", C.c_int),
                ("bounds", C.c_int), ("device", C.c_char_p)]


DEVICES = ("cpu", "opencl", "cuda")  # frit_compile_opts.device


BOUNDS = {"clamp": 0, "check": 1, "unchecked": 2}  # FRIT_BOUNDS_*


_PROTOS = {
    # context
    "frit_version": (C.c_char_p, []), "frit_info": (C.c_int, [_p, _p]),
    "frit_ctx_new": (_p, []), "frit_ctx_free": (None, [_p]), "frit_error": (C.c_char_p, [_p]),
    "frit_last_status": (C.c_int, [_p]), "frit_clear_error": (None, [_p]),
    "frit_var": (_p, [_p, C.c_char_p, C.c_int64, C.c_int64]),
    "frit_const_int": (_p, [_p, C.c_uint32, C.c_int64]),
    # tensors
    "frit_tensor_uop": (_p, [_p]), "frit_tensor_of": (_p, [_p, _p]), "frit_uop_id": (C.c_uint32, [_p]),
    "frit_tensor_dtype": (C.c_uint32, [_p]), "frit_tensor_ndim": (C.c_int, [_p]),
    "frit_tensor_dim": (_p, [_p, C.c_int]), "frit_tensor_dim_static": (C.c_int64, [_p, C.c_int]),
    "frit_tensor_shape_str": (C.c_char_p, [_p, _p]),
    "frit_input": (_p, [_p, C.c_char_p, C.c_uint32, C.c_int, _i64p]),
    "frit_input_sym": (_p, [_p, C.c_char_p, C.c_uint32, C.c_int, C.POINTER(_p)]),
    "frit_scalar_f": (_p, [_p, C.c_uint32, C.c_double]),
    "frit_scalar_i": (_p, [_p, C.c_uint32, C.c_int64]),
    "frit_full": (_p, [_p, C.c_uint32, C.c_int, _i64p, C.c_double]),
    "frit_full_i": (_p, [_p, C.c_uint32, C.c_int, _i64p, C.c_int64]),
    "frit_full_sym": (_p, [_p, C.c_uint32, C.c_int, C.POINTER(_p), C.c_double]),
    "frit_zeros": (_p, [_p, C.c_uint32, C.c_int, _i64p]),
    "frit_ones": (_p, [_p, C.c_uint32, C.c_int, _i64p]),
    "frit_arange": (_p, [_p, C.c_double, C.c_double, C.c_double, C.c_uint32]),
    "frit_linspace": (_p, [_p, C.c_double, C.c_double, C.c_int64, C.c_int, C.c_uint32]),
    "frit_eye": (_p, [_p, C.c_int64, C.c_int64, C.c_int64, C.c_uint32]),
    "frit_rand_uniform": (_p, [_p, C.c_uint64, C.c_uint32, C.c_int, _i64p, C.c_double, C.c_double]),
    "frit_rand_normal": (_p, [_p, C.c_uint64, C.c_uint32, C.c_int, _i64p, C.c_double, C.c_double]),
    "frit_rand_int": (_p, [_p, C.c_uint64, C.c_uint32, C.c_int, _i64p, C.c_int64, C.c_int64]),
    "frit_ufunc_name": (C.c_char_p, [C.c_int]), "frit_bfunc_name": (C.c_char_p, [C.c_int]),
    "frit_unary_t": (_p, [_p, C.c_int, _p]), "frit_binary_t": (_p, [_p, C.c_int, _p, _p]),
    "frit_vjp": (C.c_int, [_p, _p, _p, C.c_int, C.POINTER(_p), C.POINTER(_p)]),
    "frit_stop_gradient": (_p, [_p, _p]), "frit_identity": (_p, [_p, _p]),
    "frit_set_loop_checkpoint": (C.c_int, [_p, C.c_int]),
    "frit_set_vjp": (C.c_int, [_p, _p, C.c_int, C.POINTER(_p), _p, C.POINTER(C.c_int64), C.c_int]),
    "frit_where": (_p, [_p, _p, _p, _p]), "frit_clip": (_p, [_p, _p, _p, _p]),
    "frit_astype": (_p, [_p, _p, C.c_uint32]), "frit_promote": (C.c_uint32, [C.c_uint32, C.c_uint32]),
    "frit_reshape": (_p, [_p, _p, C.c_int, _i64p]),
    "frit_reshape_sym": (_p, [_p, _p, C.c_int, C.POINTER(_p)]),
    "frit_permute": (_p, [_p, _p, _intp]), "frit_transpose": (_p, [_p, _p]),
    "frit_broadcast_to": (_p, [_p, _p, C.c_int, _i64p]),
    "frit_broadcast_to_sym": (_p, [_p, _p, C.c_int, C.POINTER(_p)]),
    "frit_squeeze": (_p, [_p, _p, _intp, C.c_int]), "frit_unsqueeze": (_p, [_p, _p, C.c_int]),
    "frit_pad": (_p, [_p, _p, _i64p, _i64p, C.c_int, C.c_double]),
    "frit_slice": (_p, [_p, _p, _i64p, _i64p, _i64p]),
    "frit_flip": (_p, [_p, _p, _intp, C.c_int]),
    "frit_concat": (_p, [_p, C.POINTER(_p), C.c_int, C.c_int]),
    "frit_stack": (_p, [_p, C.POINTER(_p), C.c_int, C.c_int]),
    "frit_repeat": (_p, [_p, _p, C.c_int64, C.c_int]),
    "frit_tile": (_p, [_p, _p, C.c_int, _i64p]), "frit_contiguous": (_p, [_p, _p]),
    "frit_reduce": (_p, [_p, C.c_int, _p, _intp, C.c_int, C.c_int, C.c_double]),
    "frit_cumsum": (_p, [_p, _p, C.c_int]),
    "frit_matmul": (_p, [_p, _p, _p]), "frit_dot": (_p, [_p, _p, _p]),
    "frit_conv2d": (_p, [_p, _p, _p, _p, _i64p, _i64p, _i64p, C.c_int64]),
    "frit_max_pool2d": (_p, [_p, _p, _i64p, _i64p, _i64p]),
    "frit_avg_pool2d": (_p, [_p, _p, _i64p, _i64p, _i64p]),
    "frit_softmax": (_p, [_p, _p, C.c_int]), "frit_log_softmax": (_p, [_p, _p, C.c_int]),
    "frit_take": (_p, [_p, _p, _p, C.c_int]), "frit_take_along_axis": (_p, [_p, _p, _p, C.c_int]),
    "frit_one_hot": (_p, [_p, _p, C.c_int64, C.c_uint32]),
    "frit_real": (_p, [_p, _p]), "frit_imag": (_p, [_p, _p]), "frit_conj": (_p, [_p, _p]),
    "frit_angle": (_p, [_p, _p]), "frit_complex_t": (_p, [_p, _p, _p]),
    # programs
    "frit_compile": (_p, [_p, C.POINTER(_p), C.c_int, C.POINTER(CompileOpts)]),
    "frit_program_free": (None, [_p]),
    "frit_program_num_inputs": (C.c_int, [_p]),
    "frit_program_input_name": (C.c_char_p, [_p, C.c_int]),
    "frit_program_num_outputs": (C.c_int, [_p]),
    "frit_program_run": (C.c_int, [_p, C.POINTER(_p), C.POINTER(_p), C.POINTER(Binding), C.c_int]),
    "frit_program_donate": (C.c_int, [_p, C.c_int, C.c_int, _intp]),
    "frit_program_output_shape": (C.c_int, [_p, C.c_int, C.POINTER(Binding), C.c_int, _intp, _i64p]),
    "frit_program_required_memory": (C.c_int, [_p, C.POINTER(Binding), C.c_int, C.POINTER(C.c_size_t)]),
    "frit_program_num_kernels": (C.c_int, [_p]),
    "frit_program_kernel_name": (C.c_char_p, [_p, C.c_int]),
    "frit_program_kernel_ops": (C.c_char_p, [_p, C.c_int]),
    "frit_program_kernel_launch": (C.c_char_p, [_p, C.c_int]),
    "frit_program_source": (C.c_char_p, [_p]),
    # shader-like code: explicit kernels, host loops (bound lazily: _Missing until the library
    # exports them)
    "frit_kernel_begin": (C.c_int, [_p, C.c_char_p, C.c_int, C.POINTER(_p), C.POINTER(_p)]),
    "frit_kernel_begin_static": (C.c_int, [_p, C.c_char_p, C.c_int, _i64p, C.POINTER(_p)]),
    "frit_kernel_load": (_p, [_p, _p, C.c_int, C.POINTER(_p)]),
    "frit_kernel_store": (C.c_int, [_p, _p, C.c_int, C.POINTER(_p), _p]),
    "frit_kernel_atomic": (_p, [_p, C.c_int, _p, C.c_int, C.POINTER(_p), _p]),
    "frit_kernel_var": (C.c_int, [_p, C.c_uint32, _p]),
    "frit_kernel_var_get": (_p, [_p, C.c_int]),
    "frit_kernel_var_set": (C.c_int, [_p, C.c_int, _p]),
    "frit_kernel_end": (C.c_int, [_p]),
    "frit_kernel_written": (C.c_int, [_p, C.c_int, C.POINTER(_p), C.POINTER(_p)]),
    "frit_kernel_loop_begin": (C.c_int, [_p, _p, _p, _p, C.POINTER(_p)]),
    "frit_kernel_loop_end": (C.c_int, [_p]),
    "frit_kernel_if_begin": (C.c_int, [_p, _p]),
    "frit_kernel_else": (C.c_int, [_p]),
    "frit_kernel_if_end": (C.c_int, [_p]),
    "frit_kernel_break": (C.c_int, [_p]),
    "frit_kernel_continue": (C.c_int, [_p]),
    "frit_host_loop_begin": (C.c_int, [_p, _p, _p, _p, C.c_int, C.POINTER(_p), C.POINTER(_p),
                                       C.POINTER(_p)]),
    "frit_host_loop_end": (C.c_int, [_p, C.POINTER(_p), _p, C.POINTER(_p)]),
    "frit_indices": (C.c_int, [_p, C.c_int, C.POINTER(_p), C.POINTER(_p)]),
}


class _Missing:
    """Stands in for a symbol the library does not export (yet): calling it raises."""

    def __init__(self, name):
        self.name = name

    def __call__(self, *a):
        raise NotImplementedError("libfrit has no symbol %s (%s)" % (self.name, library_path()))


def _bind():
    fns = {}
    for name, (res, args) in _PROTOS.items():
        try:
            f = getattr(lib, name)
        except AttributeError:
            fns[name] = _Missing(name)
            continue
        f.restype, f.argtypes = res, args
        fns[name] = f
    return fns


fn = _bind()


def _run_at():
    """frit_program_run with its pointer arguments given as addresses. For an array passed where
    a POINTER parameter is declared, ctypes checks the type and converts on every call: 0.35 us of
    the 1.2 a small run took. The callers keep their arrays' addresses instead."""
    try:
        f = lib["frit_program_run"]  # a function object of its own: fn's keeps its prototype
    except AttributeError:
        return _Missing("frit_program_run")
    f.restype, f.argtypes = C.c_int, [C.c_void_p, C.c_void_p, C.c_void_p, C.c_void_p, C.c_int]
    return f


run_at = _run_at()


def has(name):
    return not isinstance(fn.get(name), _Missing)


# enum values, in header order
UF_NAMES = ["neg", "abs", "sign", "sqrt", "rsqrt", "reciprocal", "exp", "exp2", "log", "log2",
            "log1p", "expm1", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
            "sigmoid", "relu", "gelu", "erf", "floor", "ceil", "round", "trunc", "isnan", "isinf",
            "logical_not", "bitwise_not", "acosh", "asinh", "atanh", "cbrt", "rint", "deg2rad",
            "rad2deg", "signbit"]
BF_NAMES = ["add", "sub", "mul", "truediv", "floordiv", "remainder", "pow", "minimum", "maximum",
            "atan2", "lt", "le", "gt", "ge", "eq", "ne", "logical_and", "logical_or", "logical_xor",
            "bitwise_and", "bitwise_or", "bitwise_xor", "lshift", "rshift", "copysign", "hypot",
            "logaddexp", "logaddexp2", "nextafter", "fmod", "fmax", "fmin"]
RF_NAMES = ["sum", "prod", "max", "min", "mean", "var", "std", "argmax", "argmin", "any", "all",
            "logsumexp"]
UF = {n: i for i, n in enumerate(UF_NAMES)}
BF = {n: i for i, n in enumerate(BF_NAMES)}
RF = {n: i for i, n in enumerate(RF_NAMES)}
PAD_MODES = {"constant": 0, "reflect": 1, "edge": 2}
ALL_AXES = -1
NO_AXIS = -(2 ** 31)
SLICE_DEFAULT = -(2 ** 63)


def promote(a, b):
    return fn["frit_promote"](a, b)


class FritError(Exception):
    pass


def _i64arr(xs):
    xs = list(xs)
    return (C.c_int64 * max(1, len(xs)))(*xs)


def _intarr(xs):
    xs = list(xs)
    return (C.c_int * max(1, len(xs)))(*xs)


def _ptrarr(xs):
    xs = list(xs)
    return (_p * max(1, len(xs)))(*xs)


def _bindings(vars):
    vars = dict(vars or {})
    arr = (Binding * max(1, len(vars)))()
    for i, (k, v) in enumerate(vars.items()):
        arr[i].name = k.encode()
        arr[i].value = int(v)
    return arr, len(vars)


# ---------------------------------------------------------------- context and tensors

class Tensor:
    """A lazy frit tensor (a handle into its Ctx)."""
    __slots__ = ("ctx", "ptr")

    def __init__(self, ctx, ptr):
        self.ctx, self.ptr = ctx, ptr

    @property
    def dtype(self):
        return fn["frit_tensor_dtype"](self.ptr)

    @property
    def ndim(self):
        return fn["frit_tensor_ndim"](self.ptr)

    @property
    def shape(self):
        """Static dims; a symbolic dim is None."""
        out = []
        for i in range(self.ndim):
            d = fn["frit_tensor_dim_static"](self.ptr, i)
            out.append(None if d < 0 else d)
        return tuple(out)

    def __repr__(self):
        return "Tensor(%s, %s)" % (fn["frit_tensor_shape_str"](self.ctx.ptr, self.ptr).decode(),
                                   DTYPE_NAMES[self.dtype])


class Dim:
    """A symbolic i64 dim (a frit_uop handle), e.g. from Ctx.var."""
    __slots__ = ("ptr", "name")

    def __init__(self, ptr, name=None):
        self.ptr, self.name = ptr, name

    def __repr__(self):
        return "Dim(%s)" % (self.name or hex(self.ptr))


class Ctx:
    """Owns a frit_ctx. Builders return Tensor or raise FritError with the library's message."""

    def __init__(self):
        self.ptr = fn["frit_ctx_new"]()
        if not self.ptr:
            raise MemoryError("frit_ctx_new")
        self.input_dtypes = {}  # input name -> frit dtype, for converting run() arguments

    def close(self):
        if self.ptr:
            fn["frit_ctx_free"](self.ptr)
            self.ptr = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def error(self):
        return (fn["frit_error"](self.ptr) or b"").decode(errors="replace")

    def _t(self, ptr, what):
        if not ptr:
            raise FritError("%s: %s" % (what, self.error()))
        return Tensor(self, ptr)

    def call(self, name, *args):
        """Calls frit_<name>(ctx, args...) with Tensor arguments unwrapped; returns a Tensor."""
        args = [a.ptr if isinstance(a, Tensor) else a for a in args]
        return self._t(fn["frit_" + name](self.ptr, *args), name)

    # symbolic dims
    def var(self, name, lo, hi):
        """A symbolic dim named `name` with inclusive bounds lo..hi (bound at run time)."""
        u = fn["frit_var"](self.ptr, name.encode(), lo, hi)
        if not u:
            raise FritError("var: " + self.error())
        return Dim(u, name)

    def _dims(self, shape):
        """Static shape -> int64 array; a shape with Dim entries -> array of i64 node pointers."""
        shape = list(shape)
        if not any(isinstance(d, Dim) for d in shape):
            return False, _i64arr(int(d) for d in shape)
        dims = [d.ptr if isinstance(d, Dim) else fn["frit_const_int"](self.ptr, I64, int(d))
                for d in shape]
        return True, _ptrarr(dims)

    # creation
    def input(self, name, dt, shape):
        sym, dims = self._dims(shape)
        f = "input_sym" if sym else "input"
        t = self.call(f, name.encode(), dt, len(shape), dims)
        self.input_dtypes[name] = dt
        return t

    def scalar(self, dt, v):
        if dt in FLOAT_DTYPES:
            return self.call("scalar_f", dt, float(v))
        return self.call("scalar_i", dt, int(v))

    def full(self, dt, shape, v):
        sym, dims = self._dims(shape)
        if sym:
            return self.call("full_sym", dt, len(shape), dims, float(v))
        if dt in FLOAT_DTYPES:
            return self.call("full", dt, len(shape), dims, float(v))
        return self.call("full_i", dt, len(shape), dims, int(v))

    def zeros(self, dt, shape):
        return self.call("zeros", dt, len(shape), _i64arr(shape))

    def ones(self, dt, shape):
        return self.call("ones", dt, len(shape), _i64arr(shape))

    def arange(self, start, stop, step, dt):
        return self.call("arange", float(start), float(stop), float(step), dt)

    def linspace(self, start, stop, num, endpoint, dt):
        return self.call("linspace", float(start), float(stop), num, int(endpoint), dt)

    def eye(self, n, m, k, dt):
        return self.call("eye", n, m, k, dt)

    def rand_uniform(self, seed, dt, shape, lo=0.0, hi=1.0):
        return self.call("rand_uniform", seed, dt, len(shape), _i64arr(shape), lo, hi)

    def rand_normal(self, seed, dt, shape, mean=0.0, std=1.0):
        return self.call("rand_normal", seed, dt, len(shape), _i64arr(shape), mean, std)

    def rand_int(self, seed, dt, shape, lo, hi):
        return self.call("rand_int", seed, dt, len(shape), _i64arr(shape), lo, hi)

    # elementwise
    def unary(self, f, x):
        return self.call("unary_t", UF[f] if isinstance(f, str) else f, x)

    def binary(self, f, a, b):
        return self.call("binary_t", BF[f] if isinstance(f, str) else f, a, b)

    def where(self, c, a, b):
        return self.call("where", c, a, b)

    def clip(self, x, lo=None, hi=None):
        return self.call("clip", x, lo, hi)

    def astype(self, x, dt):
        return self.call("astype", x, dt)

    # movement
    def reshape(self, x, shape):
        sym, dims = self._dims(shape)
        return self.call("reshape_sym" if sym else "reshape", x, len(shape), dims)

    def permute(self, x, perm):
        return self.call("permute", x, _intarr(perm))

    def transpose(self, x):
        return self.call("transpose", x)

    def broadcast_to(self, x, shape):
        sym, dims = self._dims(shape)
        return self.call("broadcast_to_sym" if sym else "broadcast_to", x, len(shape), dims)

    def squeeze(self, x, axes=()):
        return self.call("squeeze", x, _intarr(axes), len(axes))

    def unsqueeze(self, x, axis):
        return self.call("unsqueeze", x, axis)

    def pad(self, x, before, after, mode="constant", value=0.0):
        return self.call("pad", x, _i64arr(before), _i64arr(after), PAD_MODES[mode], float(value))

    def slice(self, x, start, stop, step):
        """start/stop/step per axis; None means a left-out bound."""
        d = lambda v: SLICE_DEFAULT if v is None else v  # noqa: E731
        return self.call("slice", x, _i64arr(map(d, start)), _i64arr(map(d, stop)),
                         _i64arr(map(d, step)))

    def getitem(self, x, slices):
        """x[slices] for a tuple of python slice objects (one per leading axis)."""
        slices = list(slices) + [slice(None)] * (x.ndim - len(slices))
        return self.slice(x, [s.start for s in slices], [s.stop for s in slices],
                          [s.step for s in slices])

    def flip(self, x, axes=None):
        if axes is None:
            return self.call("flip", x, _intarr([]), -1)
        return self.call("flip", x, _intarr(axes), len(axes))

    def concat(self, xs, axis):
        return self.call("concat", _ptrarr(t.ptr for t in xs), len(xs), axis)

    def stack(self, xs, axis):
        return self.call("stack", _ptrarr(t.ptr for t in xs), len(xs), axis)

    def repeat(self, x, repeats, axis=NO_AXIS):
        return self.call("repeat", x, repeats, NO_AXIS if axis is None else axis)

    def tile(self, x, reps):
        return self.call("tile", x, len(reps), _i64arr(reps))

    def contiguous(self, x):
        return self.call("contiguous", x)

    # reductions
    def reduce(self, f, x, axes=None, keepdims=False, ddof=0.0):
        """axes None: all axes; an int or a sequence otherwise."""
        if axes is None:
            return self.call("reduce", RF[f] if isinstance(f, str) else f, x, _intarr([]),
                             ALL_AXES, int(keepdims), float(ddof))
        if isinstance(axes, int):
            axes = [axes]
        return self.call("reduce", RF[f] if isinstance(f, str) else f, x, _intarr(axes),
                         len(axes), int(keepdims), float(ddof))

    def cumsum(self, x, axis=NO_AXIS):
        return self.call("cumsum", x, NO_AXIS if axis is None else axis)

    # linear algebra / nn
    def matmul(self, a, b):
        return self.call("matmul", a, b)

    def dot(self, a, b):
        return self.call("dot", a, b)

    def conv2d(self, x, w, bias=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
        return self.call("conv2d", x, w, bias, _i64arr(stride), _i64arr(padding),
                         _i64arr(dilation), groups)

    def max_pool2d(self, x, kernel, stride, padding=(0, 0)):
        return self.call("max_pool2d", x, _i64arr(kernel), _i64arr(stride), _i64arr(padding))

    def avg_pool2d(self, x, kernel, stride, padding=(0, 0)):
        return self.call("avg_pool2d", x, _i64arr(kernel), _i64arr(stride), _i64arr(padding))

    def softmax(self, x, axis=-1):
        return self.call("softmax", x, axis)

    def log_softmax(self, x, axis=-1):
        return self.call("log_softmax", x, axis)

    def take(self, x, idx, axis=NO_AXIS):
        return self.call("take", x, idx, NO_AXIS if axis is None else axis)

    def take_along_axis(self, x, idx, axis):
        return self.call("take_along_axis", x, idx, axis)

    def one_hot(self, idx, num_classes, dt):
        return self.call("one_hot", idx, num_classes, dt)

    # programs
    def compile(self, outputs, **opts):
        return compile(outputs, ctx=self, **opts)


# ---------------------------------------------------------------- programs

class Program:
    """A compiled program. Owned by its Ctx (freed with it, or earlier by free())."""

    def __init__(self, ctx, ptr, out_dtypes):
        self.ctx, self.ptr, self.out_dtypes = ctx, ptr, list(out_dtypes)

    def free(self):
        if self.ptr:
            fn["frit_program_free"](self.ptr)
            self.ptr = None

    @property
    def num_inputs(self):
        return fn["frit_program_num_inputs"](self.ptr)

    @property
    def input_names(self):
        return [fn["frit_program_input_name"](self.ptr, i).decode() for i in range(self.num_inputs)]

    @property
    def num_outputs(self):
        return fn["frit_program_num_outputs"](self.ptr)

    @property
    def num_kernels(self):
        return fn["frit_program_num_kernels"](self.ptr)

    def kernel_names(self):
        return [(fn["frit_program_kernel_name"](self.ptr, k) or b"").decode()
                for k in range(self.num_kernels)]

    def kernel_ops(self):
        return [(fn["frit_program_kernel_ops"](self.ptr, k) or b"").decode()
                for k in range(self.num_kernels)]

    def source(self):
        return (fn["frit_program_source"](self.ptr) or b"").decode()

    def _err(self, what, st):
        raise FritError("%s failed (status %d): %s" % (what, st, self.ctx.error()))

    def output_shape(self, k, vars=None):
        b, nb = _bindings(vars)
        nd = C.c_int()
        dims = (C.c_int64 * 16)()
        st = fn["frit_program_output_shape"](self.ptr, k, b, nb, C.byref(nd), dims)
        if st:
            self._err("frit_program_output_shape", st)
        return tuple(dims[i] for i in range(nd.value))

    def required_memory(self, vars=None):
        b, nb = _bindings(vars)
        n = C.c_size_t()
        st = fn["frit_program_required_memory"](self.ptr, b, nb, C.byref(n))
        if st:
            self._err("frit_program_required_memory", st)
        return n.value

    def run(self, inputs=(), vars=None, input_dtypes=None):
        """inputs: list in program input order, or dict name -> array. Values are converted to the
        inputs' dtypes (input_dtypes, else as recorded by Ctx.input). Returns numpy arrays
        (bf16 outputs as float32 values)."""
        if isinstance(inputs, dict):
            names = self.input_names
            missing = [n for n in names if n not in inputs]
            if missing:
                raise FritError("run: no value for inputs %s" % missing)
            inputs = [inputs[n] for n in names]
        inputs = list(inputs)
        if input_dtypes is None:
            input_dtypes = [self.ctx.input_dtypes.get(n) for n in self.input_names]
        if len(inputs) != self.num_inputs:
            raise FritError("run: %d inputs given, program has %d" % (len(inputs), self.num_inputs))
        bufs = []
        for i, a in enumerate(inputs):
            dt = input_dtypes[i]
            if dt is None:
                a = np.asarray(a)
                if a.dtype.kind == "V" or a.dtype not in _FROM_NP:
                    raise FritError("run: input %d has unsupported dtype %s" % (i, a.dtype))
                bufs.append(np.array(a, order="C"))
            else:
                bufs.append(to_storage(a, dt))
        outs = []
        for k in range(self.num_outputs):
            shape = self.output_shape(k, vars)
            outs.append(np.empty(shape, dtype=storage_dtype(self.out_dtypes[k])))
        b, nb = _bindings(vars)
        # size-0 arrays may have a NULL data pointer; pass a dummy non-NULL pointer instead
        dummy = np.zeros(1, np.uint64)
        ptr = lambda a: a.ctypes.data if a.size else dummy.ctypes.data  # noqa: E731
        st = fn["frit_program_run"](self.ptr, _ptrarr(ptr(a) for a in bufs),
                                    _ptrarr(ptr(a) for a in outs), b, nb)
        if st:
            self._err("frit_program_run", st)
        return [from_storage(o, dt) for o, dt in zip(outs, self.out_dtypes)]


def compile(outputs, ctx=None, cc=None, cflags=None, cache_dir=None, threads=0, no_fusion=False,
            interpret=False, bounds="clamp", device=None):
    """Compiles tensors (a Tensor or a list of them) into a Program. device: "cpu", "opencl"
    (None: $FRIT_DEVICE, else the host)."""
    if isinstance(outputs, Tensor):
        outputs = [outputs]
    outputs = list(outputs)
    ctx = ctx or outputs[0].ctx
    enc = lambda s: s.encode() if s is not None else None  # noqa: E731
    o = CompileOpts(enc(cc), enc(cflags), enc(cache_dir), threads, int(no_fusion), int(interpret),
                    BOUNDS[bounds], enc(device))
    p = fn["frit_compile"](ctx.ptr, _ptrarr(t.ptr for t in outputs), len(outputs), C.byref(o))
    if not p:
        raise FritError("frit_compile: " + ctx.error())
    return Program(ctx, p, [t.dtype for t in outputs])


def run(outputs, inputs=(), vars=None, **opts):
    """Compiles `outputs` (Tensor or list) and runs them once on `inputs` (list in input order, or
    dict by name; numpy arrays, converted to the inputs' dtypes). Returns a list of arrays."""
    single = isinstance(outputs, Tensor)
    outs = [outputs] if single else list(outputs)
    prog = compile(outs, **opts)
    try:
        res = prog.run(inputs, vars)
    finally:
        prog.free()
    return res
