"""Shared helpers of the Python end-to-end tests: evaluation paths, random inputs per dtype, and
comparison against numpy with dtype-appropriate tolerance (bf16 emulated as float32 rounded)."""
import math

import numpy as np

from frit import _lib as L

# Evaluation paths. "compiled": the real pipeline (fusion + C codegen). "interp": the fused
# schedule run by the reference interpreter. "reference": unfused + interpreter (the fuzz oracle).
PATHS = {"compiled": {}, "interp": {"interpret": True},
         "reference": {"interpret": True, "no_fusion": True}}

EPS = {L.F16: 2.0 ** -10, L.BF16: 2.0 ** -7, L.F32: 2.0 ** -23, L.F64: 2.0 ** -52}
NP_OF = {L.BOOL: np.bool_, L.I8: np.int8, L.I16: np.int16, L.I32: np.int32, L.I64: np.int64,
         L.U8: np.uint8, L.U16: np.uint16, L.U32: np.uint32, L.U64: np.uint64,
         L.F16: np.float16, L.F32: np.float32, L.F64: np.float64}


def dtname(dt):
    return L.DTYPE_NAMES[dt]


def evaluate(outputs, inputs=None, path="compiled", vars=None):
    """Compiles and runs `outputs` (Tensor or list) on the given path; returns a list of arrays."""
    return L.run(outputs, inputs or {}, vars=vars, **PATHS[path])


def rand(rng, dt, shape, kind="normal", scale=3.0):
    """Random values of frit dtype dt as a numpy array holding the values (bf16: float32 values
    already rounded to bf16). kind: normal | positive | unit (in (-1, 1)) | small (ints 0..7) |
    full (integers over the whole range)."""
    shape = tuple(shape)
    if dt == L.BOOL:
        return rng.random(shape) < 0.5
    if dt in L.INT_DTYPES:
        info = np.iinfo(NP_OF[dt])
        if kind == "full":
            return rng.integers(info.min, info.max, size=shape, dtype=NP_OF[dt], endpoint=True)
        if kind == "small":
            return rng.integers(0, 8, size=shape).astype(NP_OF[dt])
        lo = 0 if (kind == "positive" or info.min == 0) else max(info.min, -100)
        return rng.integers(lo, min(info.max, 100), size=shape, endpoint=True).astype(NP_OF[dt])
    if kind == "positive":
        v = np.abs(rng.standard_normal(shape)) * scale + 0.01
    elif kind == "unit":
        v = rng.uniform(-0.95, 0.95, size=shape)
    else:
        v = rng.standard_normal(shape) * scale
    return cast_values(v, dt)


def cast_values(v, dt):
    """numpy values converted to frit dtype dt's values, rounded once to nearest even (bf16:
    float32 holding the bf16 value)."""
    if dt == L.BF16:
        return to_bf16_exact(v)
    with np.errstate(over="ignore"):
        return np.asarray(v).astype(NP_OF[dt])


def int_to_float_rne(n, mant_bits, max_exp):
    """Exact integer n rounded once to a binary float with mant_bits fraction bits and largest
    exponent max_exp (round half to even, overflow to inf); as a Python float."""
    n = int(n)
    if n == 0:
        return 0.0
    s, n = (-1 if n < 0 else 1), abs(n)
    e = n.bit_length() - 1
    shift = e - mant_bits
    if shift > 0:
        q, r = divmod(n, 1 << shift)
        half = 1 << (shift - 1)
        if r > half or (r == half and q & 1):
            q += 1
        n = q << shift
    if n >= 1 << (max_exp + 1):
        return s * math.inf
    return float(s * n)


def to_bf16_exact(v):
    """Values -> bf16 values (as float32), one round-to-nearest-even from the exact value:
    integers exactly in Python; floats via float64 -> float32 rounded to odd -> bf16."""
    a = np.asarray(v)
    if a.dtype.kind in "iu":
        flat = [int_to_float_rne(int(x), 7, 127) for x in a.ravel()]
        return np.array(flat, np.float32).reshape(a.shape)
    if a.dtype.kind == "b":
        return a.astype(np.float32)
    d = a.astype(np.float64)
    with np.errstate(all="ignore"):
        t = d.astype(np.float32)
        away = np.abs(t.astype(np.float64)) > np.abs(d)
        t = np.where(away, np.nextafter(t, np.float32(0)), t)
        inexact = (t.astype(np.float64) != d) & ~np.isnan(d)
        bits = t.view(np.uint32) | inexact.astype(np.uint32)
    return L.round_bf16(bits.view(np.float32))


def frit_dtype_of(a):
    return L.from_numpy_dtype(np.asarray(a).dtype)


def _nanmask(a):
    return np.isnan(a) if a.dtype.kind == "f" else np.zeros(a.shape, bool)


def assert_exact(got, want, what=""):
    """Same shape, same values; NaN where numpy has NaN. -0.0 and +0.0 are treated as equal."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, "%s: shape %s, numpy %s" % (what, got.shape, want.shape)
    if got.size == 0:
        return
    g = got.astype(np.float64) if got.dtype.kind == "f" else got
    w = want.astype(np.float64) if want.dtype.kind == "f" else want
    gn, wn = _nanmask(np.asarray(g)), _nanmask(np.asarray(w))
    bad = (gn != wn) | (~gn & ~wn & (g != w))
    if bad.any():
        idx = np.argwhere(bad)[:5]
        rows = ["at %s: got %r, numpy %r" % (tuple(i), got[tuple(i)], want[tuple(i)]) for i in idx]
        raise AssertionError("%s: %d of %d elements differ\n  %s" % (what, bad.sum(), bad.size,
                                                                     "\n  ".join(rows)))


def assert_close(got, want, rtol, atol, what=""):
    """Close within rtol/atol; NaN positions and infinities must agree exactly."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, "%s: shape %s, numpy %s" % (what, got.shape, want.shape)
    if got.size == 0:
        return
    gn, wn = np.isnan(got), np.isnan(want)
    ginf, winf = np.isinf(got), np.isinf(want)
    fin = ~(gn | wn | ginf | winf)
    err = np.zeros(got.shape)
    err[fin] = np.abs(got[fin] - want[fin]) - (atol + rtol * np.abs(want[fin]))
    bad = (gn != wn) | ((ginf | winf) & ~(gn | wn) & (got != want)) | (err > 0)
    if bad.any():
        idx = np.argwhere(bad)[:5]
        rows = ["at %s: got %r, numpy %r" % (tuple(i), got[tuple(i)], want[tuple(i)]) for i in idx]
        raise AssertionError("%s: %d of %d elements differ beyond rtol=%g atol=%g\n  %s"
                             % (what, bad.sum(), bad.size, rtol, atol, "\n  ".join(rows)))


def approx_tol(dt, ulps=4):
    """rtol/atol for libm-level transcendental results of dtype dt (a few ulps)."""
    e = EPS.get(dt, 2.0 ** -52)
    if dt in (L.F16, L.BF16):
        return 1.01 * e, e  # one rounding of a float32 result: within 1 ulp
    return ulps * e, ulps * e


def check(got, want, dt, approx=False, ulps=4, what=""):
    """Compares a frit result with a numpy expectation computed in dt's value dtype."""
    if approx and dt in EPS:
        rtol, atol = approx_tol(dt, ulps)
        assert_close(got, want, rtol, atol, what)
    else:
        assert_exact(got, want, what)


def np_result(dt_out, values):
    """numpy values rounded to frit dtype dt_out's values (for bf16 results)."""
    return cast_values(values, dt_out)


# ---------------------------------------------------------------- batched evaluation
# Many tests share inputs (one dtype, many ops). Building all their outputs into one program
# keeps the suite fast (one C compile instead of dozens). When the batch fails as a whole, each
# output is compiled on its own, so a failure stays attributed to its own test.

_BATCHES = {}


class BatchError(Exception):
    pass


def batch_eval(key, path, make_inputs, builders):
    """key: hashable id of the batch (without path); make_inputs(): dict name -> (frit dtype,
    numpy values); builders: dict name -> fn(ctx, {input name: Tensor}) -> Tensor.
    Returns (inputs, results, batch_error) where results[name] is (array, frit dtype) or an
    Exception raised while building/compiling/running that output."""
    k = (key, path)
    if k in _BATCHES:
        return _BATCHES[k]
    inputs = make_inputs()
    ctx = L.Ctx()
    ts = {n: ctx.input(n, dt, v.shape) for n, (dt, v) in inputs.items()}
    vals = {n: v for n, (dt, v) in inputs.items()}
    outs, results = {}, {}
    for name, b in builders.items():
        try:
            outs[name] = b(ctx, ts)
        except Exception as e:  # noqa: BLE001 - recorded per output
            results[name] = e
    names = list(outs)
    batch_error = None

    def run_some(ns):
        # only the inputs a program uses are passed (programs take reachable inputs only)
        prog = L.compile([outs[n] for n in ns], ctx=ctx, **PATHS[path])
        try:
            res = prog.run({n: vals[n] for n in prog.input_names})
        finally:
            prog.free()
        return res

    if names:
        try:
            res = run_some(names)
            for n, r in zip(names, res):
                results[n] = (r, outs[n].dtype)
        except Exception as e:  # noqa: BLE001
            batch_error = e
            for n in names:
                try:
                    results[n] = (run_some([n])[0], outs[n].dtype)
                except Exception as e2:  # noqa: BLE001
                    results[n] = e2
    _BATCHES[k] = (vals, results, batch_error)
    return _BATCHES[k]


def batch_result(results, name):
    r = results[name]
    if isinstance(r, Exception):
        raise r
    return r
