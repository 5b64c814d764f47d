"""frit.import_stablehlo and frit.import_onnx: models read by the C importers (src/import) as
Python callables. A call builds the model's graph on its arguments, lazily like any frit op, so it
runs eagerly, under frit.jit, and under frit.grad."""
import ctypes as C
import os

import numpy as np

from . import _dtypes as D
from . import _lib as L
from ._array import Array, apply, asarray
from ._errors import FritError
from ._session import capture_file

_p = C.c_void_p
_lib = L.lib
for _name, _res, _args in [
        ("frit_import_stablehlo", _p, [_p, C.c_char_p, C.c_size_t]),
        ("frit_model_num_inputs", C.c_int, [_p]),
        ("frit_model_num_weights", C.c_int, [_p]),
        ("frit_model_num_outputs", C.c_int, [_p]),
        ("frit_model_weight_data", _p, [_p, C.c_int]),
        ("frit_model_value_name", C.c_char_p, [_p, C.c_int, C.c_int]),
        ("frit_model_value_dtype", C.c_uint32, [_p, C.c_int, C.c_int]),
        ("frit_model_value_shape", C.c_int, [_p, C.c_int, C.c_int, C.POINTER(C.c_int64)]),
        ("frit_model_call", C.c_int, [_p, _p, C.POINTER(_p), C.c_int, C.POINTER(_p)]),
        ("frit_model_print", C.c_int, [_p, _p, _p])]:
    _f = getattr(_lib, _name, None)  # a library built without an importer lacks its entry
    if _f is not None:
        _f.restype, _f.argtypes = _res, _args
_ctx_new, _ctx_free, _error = _lib.frit_ctx_new, _lib.frit_ctx_free, _lib.frit_error
_ctx_new.restype, _ctx_free.argtypes, _error.restype, _error.argtypes = _p, [_p], C.c_char_p, [_p]


class Value:
    """One input or output of a model: name, frit dtype and shape (None for a dynamic dim)."""
    __slots__ = ("name", "dtype", "shape")

    def __init__(self, name, dtype, shape):
        self.name, self.dtype, self.shape = name, dtype, shape

    def __repr__(self):
        return "Value(%r, %s, %s)" % (self.name, self.dtype, self.shape)


class Model:
    """An imported model: call it with the arguments listed in `inputs` (frit or numpy arrays);
    it returns one frit array per output (a tuple when there are several, or always with
    `tuple_result=True`). `weights` are the model's stored values, passed along by each call."""

    def __init__(self, ctx, ptr, fmt, tuple_result=False):
        self._ctx, self._ptr, self.format = ctx, ptr, fmt
        self._tuple = tuple_result
        nin, nw = _lib.frit_model_num_inputs(ptr), _lib.frit_model_num_weights(ptr)
        self.inputs = [self._value(0, k) for k in range(nin - nw)]
        self.outputs = [self._value(1, k) for k in range(_lib.frit_model_num_outputs(ptr))]
        self.weights = {}
        for k in range(nin - nw, nin):
            v = self._value(0, k)
            shape = tuple(v.shape)
            count = int(np.prod(shape, dtype=np.int64))
            sd = L.storage_dtype(v.dtype.code)
            data = _lib.frit_model_weight_data(ptr, k)
            raw = (C.c_char * (count * sd.itemsize)).from_address(data) if count else b""
            arr = np.frombuffer(bytes(raw), dtype=sd).reshape(shape)
            self.weights[v.name] = asarray(L.from_storage(arr, v.dtype.code), dtype=v.dtype)
        self._weight_list = list(self.weights.values())
        self._memo = {}

    def _value(self, output, k):
        name = (_lib.frit_model_value_name(self._ptr, output, k) or b"").decode()
        dt = D.BY_CODE[_lib.frit_model_value_dtype(self._ptr, output, k)]
        dims = (C.c_int64 * 16)()  # FRIT_MAX_DIMS
        nd = _lib.frit_model_value_shape(self._ptr, output, k, dims)
        shape = None if nd < 0 else tuple(None if dims[i] < 0 else int(dims[i]) for i in range(nd))
        return Value(name, dt, shape)

    def __del__(self):
        if getattr(self, "_ctx", None):
            _ctx_free(self._ctx)
            self._ctx = None

    def __call__(self, *args):
        if len(args) != len(self.inputs):
            raise FritError("%s model: %d arguments given, it takes %d (%s)" % (
                self.format, len(args), len(self.inputs),
                ", ".join("%s: %s%s" % (v.name, v.dtype, list(v.shape or ())) for v in self.inputs)))
        xs = []
        for i, (a, v) in enumerate(zip(args, self.inputs)):
            x = a if isinstance(a, Array) else asarray(a)
            if x.dtype is not v.dtype:
                raise FritError("%s model: argument %d (%s) is %s, the model takes %s" % (
                    self.format, i, v.name, x.dtype, v.dtype))
            xs.append(x)
        xs += self._weight_list
        memo = {}
        outs = [apply(_b_model_output, xs, (k, self, memo)) for k in range(len(self.outputs))]
        if len(outs) == 1 and not self._tuple:
            return outs[0]
        return tuple(outs)

    def text(self):
        """The model as parsed, with source locations (frit_model_print)."""
        return capture_file(lambda f: _lib.frit_model_print(self._ctx, self._ptr, f))

    def __repr__(self):
        return "<frit %s model: %d inputs, %d weights, %d outputs>" % (
            self.format, len(self.inputs), len(self.weights), len(self.outputs))


def _b_model_output(ctx, ts, k, model, memo):
    """Build function of output k: the whole model is built once per (ctx, inputs)."""
    key = (ctx, tuple(ts))
    outs = memo.get(key)
    if outs is None:
        n = len(ts)
        arr = (_p * n)(*ts)
        res = (_p * max(1, len(model.outputs)))()
        if _lib.frit_model_call(ctx, model._ptr, arr, n, res) != 0:
            return None
        outs = tuple(res)
        if len(memo) >= 16:
            memo.clear()
        memo[key] = outs
    return outs[k]


def _model_or_raise(ctx, ptr, fmt, what):
    if not ptr:
        msg = (_error(ctx) or b"").decode(errors="replace")
        _ctx_free(ctx)
        raise FritError("%s: %s" % (what, msg))
    return Model(ctx, ptr, fmt)


def import_stablehlo(text):
    """A StableHLO module (textual MLIR, pretty or generic, as jax.jit(f).lower(...).as_text()
    prints it; or a path to a .mlir file) as a callable Model running its main function."""
    if isinstance(text, os.PathLike) or (isinstance(text, str) and "\n" not in text
                                         and text.endswith(".mlir") and os.path.exists(text)):
        with open(text, "rb") as f:
            data = f.read()
    else:
        data = text.encode() if isinstance(text, str) else bytes(text)
    if getattr(_lib, "frit_import_stablehlo", None) is None:
        raise FritError("import_stablehlo: this libfrit was built without the StableHLO importer")
    ctx = _ctx_new()
    ptr = _lib.frit_import_stablehlo(ctx, data, len(data))
    return _model_or_raise(ctx, ptr, "stablehlo", "import_stablehlo")


def import_onnx(model):
    """An ONNX model (a path to a .onnx file, or its bytes) as a callable Model. External data
    files are looked up beside the model file."""
    fn = getattr(_lib, "frit_import_onnx_file", None)
    if fn is None:
        raise FritError("import_onnx: this libfrit was built without the ONNX importer")
    ctx = _ctx_new()
    if isinstance(model, (bytes, bytearray, memoryview)):
        f = _lib.frit_import_onnx
        f.restype, f.argtypes = _p, [_p, C.c_char_p, C.c_size_t, C.c_char_p]
        data = bytes(model)
        ptr = f(ctx, data, len(data), None)
    else:
        fn.restype, fn.argtypes = _p, [_p, C.c_char_p]
        ptr = fn(ctx, os.fsencode(model))
    return _model_or_raise(ctx, ptr, "onnx", "import_onnx")
