"""Op-matrix rows of the elementwise functions: unary math (floats, and integer/bool inputs with
numpy's promotion to float), integer/bool unary ops, every binary op with broadcasting and weak
Python scalars on either side, where, clip, astype, isclose/allclose/array_equal, nn activations."""
import math

import numpy as np

from .spec import Row, FLOATS, INTS, SIGNED, REAL, array, unary_cases, binary_cases

NUM = INTS + FLOATS  # every dtype but bool


def _vec(f):
    """A float64 scalar function applied elementwise, the result in the input's float dtype."""
    def g(np_, a):
        a = np.asarray(a)
        out = np.vectorize(f, otypes=[np.float64])(a.astype(np.float64))
        return out.astype(a.dtype if a.dtype.kind == "f" else np.result_type(a.dtype, np.float16))
    return g


def _gelu(x):
    return 0.5 * x * (1.0 + math.erf(x / math.sqrt(2.0)))


# (name, numpy spelling (None: same), input kind, rtol)
FLOAT_UNARY = [
    ("exp", None, "unit", 1e-5), ("exp2", None, "unit", 1e-5), ("expm1", None, "unit", 1e-5),
    ("log", None, "positive", 1e-5), ("log2", None, "positive", 1e-5),
    ("log10", None, "positive", 1e-5), ("log1p", None, "positive", 1e-5),
    ("sqrt", None, "positive", 1e-6), ("sin", None, "normal", 1e-5),
    ("cos", None, "normal", 1e-5), ("tan", None, "unit", 1e-5), ("sinh", None, "unit", 1e-5),
    ("cosh", None, "unit", 1e-5), ("tanh", None, "normal", 1e-5),
    ("arcsin", None, "unit", 1e-5), ("arccos", None, "unit", 1e-5),
    ("arctan", None, "normal", 1e-5), ("asin", None, "unit", 1e-5),
    ("acos", None, "unit", 1e-5), ("atan", None, "normal", 1e-5),
]

ROWS = []
for _name, _npn, _kind, _rtol in FLOAT_UNARY:
    ROWS.append(Row(_name, (lambda n: lambda xp, a: getattr(xp, n)(a))(_name),
                    unary_cases(_kind), dtypes=FLOATS, rtol=_rtol, atol=1e-6))
    # integer and bool inputs: numpy computes in float16/32/64 by the input's width
    ROWS.append(Row(_name, (lambda n: lambda xp, a: getattr(xp, n)(a))(_name),
                    unary_cases("small"), dtypes=("bool", "int8", "uint8", "int16", "int32",
                                                  "uint64"), rtol=_rtol, atol=1e-6))

ROWS += [
    Row("rsqrt", lambda xp, a: xp.rsqrt(a), unary_cases("positive"),
        np_fn=lambda np, a: (1 / np.sqrt(a)).astype(a.dtype), rtol=2e-6),
    Row("reciprocal", lambda xp, a: xp.reciprocal(a), unary_cases("nonzero"), dtypes=FLOATS),
    Row("erf", lambda xp, a: xp.erf(a), unary_cases("normal"), np_fn=_vec(math.erf), rtol=1e-5),
    Row("sigmoid", lambda xp, a: xp.sigmoid(a), unary_cases("normal"),
        np_fn=lambda np, a: (1 / (1 + np.exp(-a.astype(np.float64)))).astype(a.dtype), rtol=1e-5),
    Row("nn.sigmoid", lambda xp, a: xp.nn.sigmoid(a), unary_cases(),
        np_fn=lambda np, a: (1 / (1 + np.exp(-a.astype(np.float64)))).astype(a.dtype), rtol=1e-5),
    Row("relu", lambda xp, a: xp.relu(a), unary_cases(), dtypes=SIGNED + FLOATS,
        np_fn=lambda np, a: np.maximum(a, a.dtype.type(0))),
    Row("nn.relu", lambda xp, a: xp.nn.relu(a), unary_cases(), dtypes=FLOATS,
        np_fn=lambda np, a: np.maximum(a, a.dtype.type(0))),
    Row("gelu", lambda xp, a: xp.gelu(a), unary_cases(), np_fn=_vec(_gelu), rtol=1e-5),
    Row("nn.gelu", lambda xp, a: xp.nn.gelu(a), unary_cases(), np_fn=_vec(_gelu), rtol=1e-5),
]

# exact unary ops over all dtypes numpy defines them for
for _name, _dts, _kind in [
        ("negative", NUM, "normal"), ("positive", NUM, "normal"), ("abs", NUM, "normal"),
        ("absolute", NUM, "normal"), ("sign", NUM, "normal"), ("square", REAL[1:], "normal"),
        ("floor", REAL, "normal"), ("ceil", REAL, "normal"), ("trunc", REAL, "normal"),
        ("isnan", REAL, "normal"), ("isinf", REAL, "normal"), ("isfinite", REAL, "normal"),
        ("logical_not", REAL, "normal"), ("bitwise_invert", ("bool",) + INTS, "normal"),
        ("bitwise_not", ("bool",) + INTS, "normal"), ("invert", ("bool",) + INTS, "normal")]:
    ROWS.append(Row(_name, (lambda n: lambda xp, a: getattr(xp, n)(a))(_name),
                    unary_cases(_kind), dtypes=_dts))


def _special_cases(rng, n, dtype):
    """NaN, +-inf, signed zeros, halves (rounding), huge values."""
    v = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, 1.5, 2.5, -0.5, -2.5, 1e30, -1e-30,
                  3.0, 65504.0, 7.49], np.float64)
    with np.errstate(over="ignore"):
        return [(v.astype(dtype),), (np.tile(v, n).reshape(n, -1).astype(dtype),)]


for _name in ("floor", "ceil", "trunc", "round", "around", "isnan", "isinf", "isfinite", "sign",
              "abs", "negative", "square", "sqrt", "exp", "log", "tanh", "sin"):
    ROWS.append(Row(_name, (lambda n: lambda xp, a: getattr(xp, n)(a))(_name), _special_cases,
                    dtypes=FLOATS, rtol=1e-5, tags=("special",)))

ROWS += [
    # numpy's round(bool) is float16 (via rint); frit keeps bool (docs/testing.md)
    Row("round", lambda xp, a: xp.round(a), unary_cases(), dtypes=NUM),
    Row("around", lambda xp, a: xp.around(a), unary_cases(), dtypes=NUM),
    Row("round", lambda xp, a: xp.round(a, 2), unary_cases(), dtypes=FLOATS, rtol=1e-6),
    Row("round", lambda xp, a: xp.round(a, -1), unary_cases(), dtypes=SIGNED + ("float64",)),
]

# binary ops: (name, dtypes, kind of b, rtol)
_SHIFT = ("bool",) + INTS
BINARY = [
    ("add", REAL, "normal"), ("subtract", NUM, "normal"), ("multiply", REAL, "normal"),
    ("divide", REAL, "nonzero"), ("true_divide", REAL, "nonzero"),
    ("floor_divide", NUM, "normal"), ("remainder", NUM, "normal"), ("mod", NUM, "normal"),
    ("maximum", REAL, "normal"), ("minimum", REAL, "normal"), ("equal", REAL, "normal"),
    ("not_equal", REAL, "normal"), ("less", REAL, "normal"), ("less_equal", REAL, "normal"),
    ("greater", REAL, "normal"), ("greater_equal", REAL, "normal"),
    ("logical_and", REAL, "normal"), ("logical_or", REAL, "normal"),
    ("logical_xor", REAL, "normal"), ("bitwise_and", _SHIFT, "normal"),
    ("bitwise_or", _SHIFT, "normal"), ("bitwise_xor", _SHIFT, "normal"),
    ("left_shift", INTS, "small"), ("right_shift", INTS, "small"),
    ("bitwise_left_shift", INTS, "small"), ("bitwise_right_shift", INTS, "small"),
    ("arctan2", FLOATS, "normal"), ("atan2", FLOATS, "normal"),
    ("power", FLOATS, "normal"), ("pow", FLOATS, "normal"),
    ("power", INTS, "small"), ("pow", INTS, "small"),
]
for _name, _dts, _kb in BINARY:
    _ka = "positive" if _name in ("power", "pow") and _dts == FLOATS else "normal"
    ROWS.append(Row(_name, (lambda n: lambda xp, a, b: getattr(xp, n)(a, b))(_name),
                    binary_cases(_ka, _kb), dtypes=_dts, rtol=1e-5 if _dts == FLOATS else 1e-6))


def _mixed_cases(rng, n, dtype):
    """Two arrays of different dtypes (numpy's promotion table), and Python scalars of another
    kind than the array (an int with a float array is weak; a float with an int array promotes)."""
    others = ["bool", "int8", "uint8", "int32", "uint32", "int64", "uint64", "float16",
              "float32", "float64"]
    out = [(array(rng, (n, 2), dtype), array(rng, (n, 2), o)) for o in others]
    out += [(array(rng, (n,), dtype), 2), (3, array(rng, (n,), dtype)),
            (array(rng, (n,), dtype), True), (array(rng, (n,), dtype), 1.5),
            (-2.5, array(rng, (n,), dtype))]
    return out


for _name in ("add", "multiply", "maximum", "less", "true_divide"):
    ROWS.append(Row(_name, (lambda n: lambda xp, a, b: getattr(xp, n)(a, b))(_name),
                    _mixed_cases, dtypes=REAL, tags=("promotion",)))


def _where_cases(rng, n, dtype):
    A = lambda s, k="normal", lay="c": array(rng, s, dtype, k, lay)  # noqa: E731
    c = lambda s, lay="c": array(rng, s, "bool", "normal", lay)  # noqa: E731
    return [(c((n, 3)), A((n, 3)), A((n, 3))), (c((n, 1)), A((1, 4)), A(())),
            (c(()), A((n,)), A((n,), lay="r")), (c((0, 2)), A((1, 2)), A((0, 1))),
            (c((3, n), "t"), A((3, n)), 2), (c((n,)), 1, A((n,))),
            (array(rng, (n, 2), dtype), A((n, 2)), A((n, 2)))]


def _clip_cases(rng, n, dtype):
    A = lambda s, lay="c": array(rng, s, dtype, "normal", lay)  # noqa: E731
    return [(A((n, 3)), A((n, 3)), A((n, 3))), (A((n, 3), "t"), A(()), A((3,))),
            (A(()), A(()), A(())), (A((0, 2)), A((1, 2)), A((1, 2)))]


def _clip_scalar_cases(rng, n, dtype):
    a = array(rng, (n, 3), dtype)
    return [(a, 1, 5), (a, -3, None), (a, None, 2), (array(rng, (n,), dtype, layout="r"), 0, 0)]


def _astype_cases(rng, n, dtype):
    # values every target can hold: small non-negative numbers (no float->int overflow, which
    # numpy leaves undefined)
    k = "positive" if dtype.startswith("float") else "small"
    return [(array(rng, (n, 3), dtype, k), t) for t in REAL] + \
        [(array(rng, (), dtype, k), "float32"), (array(rng, (0, 2), dtype), "int8"),
         (array(rng, (3, n), dtype, k, "t"), "int64")]


def _isclose_cases(rng, n, dtype):
    a = array(rng, (n, 3), dtype)
    b = a + (array(rng, (n, 3), dtype) * 1e-3).astype(dtype)
    nan = np.array([np.nan, 1.0, np.inf, -np.inf], dtype)
    return [(a, b), (a, a), (nan, nan[::-1]), (nan, nan), (a[:1], b), (a, 0.5)]


ROWS += [
    Row("where", lambda xp, c, a, b: xp.where(c, a, b), _where_cases, dtypes=REAL),
    Row("clip", lambda xp, a, lo, hi: xp.clip(a, lo, hi), _clip_cases, dtypes=REAL,
        why="numpy's clip(x, lo, hi) with lo > hi gives hi; so must frit"),
    Row("clip", lambda xp, a, lo, hi: xp.clip(a, lo, hi), _clip_scalar_cases, dtypes=NUM),
    Row("astype", lambda xp, a, t: xp.astype(a, t), _astype_cases, dtypes=REAL),
    Row("isclose", lambda xp, a, b: xp.isclose(a, b), _isclose_cases, dtypes=FLOATS),
    Row("isclose", lambda xp, a, b: xp.isclose(a, b, equal_nan=True, rtol=1e-2, atol=0.0),
        _isclose_cases, dtypes=FLOATS),
    Row("allclose", lambda xp, a, b: xp.allclose(a, b), _isclose_cases, dtypes=FLOATS,
        modes=("eager", "interp"), why="allclose returns a Python bool (not traceable)"),
    Row("array_equal", lambda xp, a, b: xp.array_equal(a, b), binary_cases(), dtypes=REAL,
        modes=("eager", "interp"), why="array_equal returns a Python bool (not traceable)"),
]
