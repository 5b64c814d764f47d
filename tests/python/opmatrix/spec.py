"""What a row of the op matrix is. A row names one public function and says how to call it with
numpy and with frit, on which dtypes, and with which arguments; the driver (test_op_matrix.py)
runs it in every mode and checks values, shape and dtype against numpy."""
from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional, Sequence

import numpy as np

FLOATS = ("float16", "float32", "float64")
SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
INTS = SIGNED + UNSIGNED
REAL = ("bool",) + INTS + FLOATS
COMPLEX = ("complex64", "complex128")
MODES = ("eager", "jit", "interp")


@dataclass
class Row:
    """name: the public function, frit.<name> (dotted for submodules: "linalg.inv", "fft.fft");
    the coverage test matches it against what frit exports.
    fn(xp, *args): the op spelled with module xp (numpy or frit), e.g.
        lambda xp, a, b: xp.hypot(a, b).
    cases(rng, n, dtype): a list of argument tuples (numpy arrays and Python scalars) for one
        dtype; n is a size the driver varies (the jit mode calls with two values of n, so the
        same compiled function sees two shapes). Use spec.array() and the case builders below.
    np_fn(np, *args): numpy's spelling when it differs from fn's (default: fn).
    dtypes: dtype names the row runs on.
    rtol/atol: float tolerance, scaled by the driver for float16; integer and bool results are
        compared exactly unless exact=False.
    modes: subset of MODES the row runs in (leave out a mode only with a reason in `why`).
    check_dtype: compare the result dtype with numpy's (False only with a reason in `why`).
    why: the reason for any limitation above (documented, shown in reports).
    xfail: known bugs, {key: reason}; key is a mode, a dtype, "mode:dtype" or "*" (every mode);
        the driver marks those items xfail (strict=False), so a fix shows as XPASS.
    check(got, *args): an oracle for rows numpy cannot compute (frit.random): given the frit
        result (numpy array or tuple of them) and the case's arguments, it asserts (shape, dtype,
        statistics). With check set, numpy is not called and np_fn is ignored.
    retrace_ok: True when the jit mode may trace again at the second size even though the
        argument signature is the same (documented in why)."""
    name: str
    fn: Callable
    cases: Callable
    np_fn: Optional[Callable] = None
    dtypes: Sequence[str] = FLOATS
    rtol: float = 1e-5
    atol: float = 1e-6
    exact: Optional[bool] = None
    modes: Sequence[str] = MODES
    check_dtype: bool = True
    why: str = ""
    tags: Sequence[str] = field(default_factory=tuple)
    xfail: Mapping[str, str] = field(default_factory=dict)
    check: Optional[Callable] = None
    retrace_ok: bool = False


def array(rng, shape, dtype, kind="normal", layout="c"):
    """Random numpy array of the dtype name. kind: normal | positive | unit (in (-1, 1)) |
    small (ints 0..7) | nonzero. layout: c (contiguous) | t (transposed view) |
    s (strided view, every other element of the last axis) | r (reversed, negative strides)."""
    shape = tuple(shape)
    dt = np.dtype(dtype)
    base = shape
    if layout == "t":
        base = shape[::-1]
    elif layout == "s" and shape:
        base = shape[:-1] + (shape[-1] * 2,)
    if dt == np.bool_:
        a = rng.random(base) < 0.5
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        lo = 0 if (kind in ("positive", "small") or info.min == 0) else max(info.min, -100)
        hi = 7 if kind == "small" else min(info.max, 100)
        a = rng.integers(lo, hi, size=base, endpoint=True).astype(dt)
        if kind in ("positive", "nonzero"):
            a[a == 0] = 1
    else:
        real = dt.kind == "c"
        fdt = np.float64 if real else dt

        def draw():
            if kind == "positive":
                return np.abs(rng.standard_normal(base)) * 3 + 0.01
            if kind == "unit":
                return rng.uniform(-0.95, 0.95, size=base)
            v = np.array(rng.standard_normal(base) * 3)  # an array even when 0-d (writable)
            if kind == "nonzero":
                v[np.abs(v) < 1e-3] = 1.0
            return v
        a = draw().astype(fdt)
        if real:
            a = (a + 1j * draw()).astype(dt)
        a = a.astype(dt)
    if layout == "t":
        a = a.T
    elif layout == "s" and shape:
        a = a[..., ::2]
    elif layout == "r":
        a = a[tuple(slice(None, None, -1) for _ in shape)]
    a = np.asarray(a)  # 0-d: an array, not a numpy scalar
    assert a.shape == shape, (a.shape, shape)
    return a


def unary_cases(kind="normal"):
    """Shapes a unary elementwise op must handle: 0-d, size 0, 1-d, 2-d, 3-d, non-contiguous and
    negative strides; n is the varying size."""
    def cases(rng, n, dtype):
        return [(array(rng, (), dtype, kind),),
                (array(rng, (0,), dtype, kind),),
                (array(rng, (n,), dtype, kind),),
                (array(rng, (n, 3), dtype, kind),),
                (array(rng, (2, n, 3), dtype, kind, "t"),),
                (array(rng, (3, n), dtype, kind, "s"),),
                (array(rng, (n, 2), dtype, kind, "r"),)]
    return cases


def binary_cases(kind_a="normal", kind_b="normal", scalars=True):
    """Broadcasting pairs: equal shapes, size-1 dims, 0-d, size 0, non-contiguous, and Python
    scalars on either side (weak: they take the array's dtype, as in numpy 2)."""
    def cases(rng, n, dtype):
        A = lambda shape, k, lay="c": array(rng, shape, dtype, k, lay)  # noqa: E731
        out = [(A((n, 3), kind_a), A((n, 3), kind_b)),
               (A((n, 1), kind_a), A((1, 4), kind_b)),
               (A((), kind_a), A((n,), kind_b)),
               (A((0, 3), kind_a), A((1, 3), kind_b)),
               (A((3, n), kind_a, "t"), A((n,), kind_b, "r"))]
        if scalars:
            s = A((), kind_b).item()
            out += [(A((n, 2), kind_a), s), (A((), kind_a).item(), A((n,), kind_b))]
        return out
    return cases
