"""Op-matrix rows of frit.Array's methods, properties and operators (numpy's ndarray as the
oracle): arithmetic/bitwise/comparison operators and their reflected and in-place forms with
arrays and Python scalars on either side, .T/.mT, astype, reshape, reductions as methods ..."""
import numpy as np

from .spec import Row, FLOATS, INTS, REAL, array, unary_cases, binary_cases
from .rows_reduce import reduce_cases, arg_cases, arg_kd_cases, cumsum_cases, ARG_KD

NUM = INTS + FLOATS
_RESHAPE_SYM = {"jit": "ravel/flatten of symbolic dims fails ('-1 needs a static shape; use "
                       "reshape_sym'): jit falls back to per-shape tracing"}
BITS = ("bool",) + INTS


def _array_first(cases):
    """binary_cases without the ones whose left operand is a Python scalar (a.__add__ needs a)."""
    return lambda rng, n, dt: [c for c in cases(rng, n, dt) if isinstance(c[0], np.ndarray)]


def _op(name):
    return lambda xp, a, b: getattr(a, "__%s__" % name)(b)


def _iop(name):
    def f(xp, a, b):
        a = a.copy()
        r = getattr(a, "__i%s__" % name)(b)
        return a if r is NotImplemented else r
    return f


def _rop_cases(kind_b="normal"):
    """a (array) and b: the left operand of the reflected op (Python scalar or array)."""
    def cases(rng, n, dtype):
        A = lambda s, k="normal", lay="c": array(rng, s, dtype, k, lay)  # noqa: E731
        return [(A((n, 3)), A((), kind_b).item()), (A(()), A((), kind_b).item()),
                (A((n, 2), lay="r"), A((n, 2), kind_b)), (A((0, 2)), A((), kind_b).item())]
    return cases


def _iop_cases(kind_b="normal"):
    """In place: the result keeps a's shape and dtype (b broadcasts into a)."""
    def cases(rng, n, dtype):
        A = lambda s, k="normal", lay="c": array(rng, s, dtype, k, lay)  # noqa: E731
        return [(A((n, 3)), A((n, 3), kind_b)), (A((n, 3)), A((3,), kind_b, "r")),
                (A((n, 2)), A((), kind_b).item()), (A(()), A((), kind_b)),
                (A((n, 1)), A((n, 3), kind_b))]  # the last: numpy cannot broadcast in place
    return cases


# (operator, dtypes, kind of b)
_BIN = [("add", REAL, "normal"), ("sub", NUM, "normal"), ("mul", REAL, "normal"),
        ("truediv", REAL, "nonzero"), ("floordiv", NUM, "normal"), ("mod", NUM, "normal"),
        ("pow", FLOATS, "normal"), ("and", BITS, "normal"), ("or", BITS, "normal"),
        ("xor", BITS, "normal"), ("lshift", INTS, "small"), ("rshift", INTS, "small")]

ROWS = []
for _name, _dts, _kb in _BIN:
    _ka = "positive" if _name == "pow" else "normal"
    ROWS.append(Row("Array.__%s__" % _name, _op(_name), _array_first(binary_cases(_ka, _kb)),
                    dtypes=_dts))
    ROWS.append(Row("Array.__r%s__" % _name, _op("r" + _name),
                    _rop_cases("positive" if _name == "pow" else _kb),
                    dtypes=_dts))
    _idts = tuple(d for d in _dts if _name != "truediv" or d in FLOATS)
    ROWS.append(Row("Array.__i%s__" % _name, _iop(_name), _iop_cases(_kb), dtypes=_idts))

ROWS += [
    Row("Array.__pow__", _op("pow"), _array_first(binary_cases("normal", "small")), dtypes=INTS),
    Row("Array.__itruediv__", _iop("truediv"), _iop_cases("nonzero"), dtypes=INTS,
        why="int /= raises in numpy (float result cannot be cast back in place)"),
    Row("Array.__matmul__", _op("matmul"),
        lambda rng, n, dt: [(array(rng, (n, 3), dt, "small"), array(rng, (3, 2), dt, "small")),
                            (array(rng, (n,), dt, "small"), array(rng, (n, 2), dt, "small"))],
        dtypes=NUM, rtol=1e-5, atol=1e-5),
    Row("Array.__rmatmul__", _op("rmatmul"),
        lambda rng, n, dt: [(array(rng, (3, 2), dt, "small"), array(rng, (n, 3), dt, "small"))],
        dtypes=NUM, rtol=1e-5, atol=1e-5),
    Row("Array.__imatmul__", _iop("matmul"),
        lambda rng, n, dt: [(array(rng, (n, 3), dt, "small"), array(rng, (3, 3), dt, "small"))],
        dtypes=("int32", "float32", "float64"), rtol=1e-5, atol=1e-5),
]

for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    ROWS.append(Row("Array.__%s__" % _name, _op(_name), _array_first(binary_cases()),
                    dtypes=REAL))

for _name, _dts in (("neg", NUM), ("pos", NUM), ("abs", NUM), ("invert", BITS)):
    ROWS.append(Row("Array.__%s__" % _name, (lambda n: lambda xp, a: getattr(a, "__%s__" % n)())(
        _name), unary_cases(), dtypes=_dts))


# ---------------------------------------------------------------- properties and methods

def _m(name, *args, **kw):
    return lambda xp, a: getattr(a, name)(*args, **kw)


def _red(name, **kw):
    return lambda xp, a, axis, keepdims: getattr(a, name)(axis=axis, keepdims=keepdims, **kw)


def _mat_cases(rng, n, dtype):
    return [(array(rng, (n, 3), dtype),), (array(rng, (2, n, 3), dtype, layout="t"),),
            (array(rng, (0, 3), dtype),)]


ROWS += [
    Row("Array.T", lambda xp, a: a.T,
        lambda rng, n, dt: [(array(rng, (n, 3), dt),), (array(rng, (n,), dt),),
                            (array(rng, (), dt),), (array(rng, (3, n), dt, layout="r"),)],
        dtypes=REAL),
    Row("Array.mT", lambda xp, a: a.mT, _mat_cases, dtypes=REAL),
    Row("Array.astype", lambda xp, a, t: a.astype(t),
        lambda rng, n, dt: [(array(rng, (n, 3), dt, "positive" if dt[0] == "f" else "small"), t)
                            for t in REAL], dtypes=REAL),
    Row("Array.reshape", lambda xp, a, s: a.reshape(s),
        lambda rng, n, dt: [(array(rng, (n, 6), dt), (6, n)),
                            (array(rng, (n, 6), dt, layout="t"), (3, 2, n)),
                            (array(rng, (), dt), (1,))], dtypes=REAL),
    Row("Array.reshape", lambda xp, a, s: a.reshape(s),
        lambda rng, n, dt: [(array(rng, (n, 6), dt), (-1,)), (array(rng, (n, 6), dt), (2, -1))],
        dtypes=REAL, xfail=_RESHAPE_SYM),
    Row("Array.reshape", lambda xp, a, s: a.reshape(*s),
        lambda rng, n, dt: [(array(rng, (n, 6), dt), (6, n))],
        dtypes=("float32",), why="the varargs spelling a.reshape(6, n)"),
    Row("Array.flatten", _m("flatten"), unary_cases(), dtypes=REAL, xfail=_RESHAPE_SYM),
    Row("Array.ravel", _m("ravel"), unary_cases(), dtypes=REAL, xfail=_RESHAPE_SYM),
    Row("Array.copy", _m("copy"), unary_cases(), dtypes=REAL),
    Row("Array.transpose", _m("transpose"), unary_cases(), dtypes=REAL),
    Row("Array.transpose", lambda xp, a: a.transpose(1, 0),
        lambda rng, n, dt: [(array(rng, (n, 3), dt),), (array(rng, (3, n), dt, layout="s"),)],
        dtypes=("int32", "float64")),
    Row("Array.swapaxes", lambda xp, a: a.swapaxes(0, -1), _mat_cases, dtypes=REAL),
    Row("Array.squeeze", lambda xp, a: a.squeeze(),
        lambda rng, n, dt: [(array(rng, (1, n, 1), dt),), (array(rng, (1,), dt),)], dtypes=REAL),
    Row("Array.flip", lambda xp, a: xp.flip(a, axis=0) if xp is np else a.flip(0),
        lambda rng, n, dt: [(array(rng, (n, 3), dt),), (array(rng, (n,), dt, layout="r"),)],
        dtypes=REAL, why="numpy has no ndarray.flip: np.flip is the oracle"),
    Row("Array.repeat", lambda xp, a: a.repeat(2, axis=1),
        lambda rng, n, dt: [(array(rng, (n, 3), dt),)], dtypes=REAL,
        xfail={"jit": "repeat along an inner symbolic axis: 'RESHAPE changes the number of "
                      "elements' (not provable symbolically); jit falls back per shape"}),
    Row("Array.round", _m("round"), unary_cases(), dtypes=NUM,
        why="numpy's round(bool) is float16; frit keeps bool (docs/testing.md)"),
    Row("Array.round", _m("round", 1), unary_cases(), dtypes=FLOATS, rtol=1e-6),
    Row("Array.clip", _m("clip", -1, 2), unary_cases(), dtypes=INTS[:4] + FLOATS),
    Row("Array.item", lambda xp, a: np.asarray(a.item()),
        lambda rng, n, dt: [(array(rng, (), dt),), (array(rng, (1, 1), dt),)], dtypes=REAL,
        modes=("eager", "interp"), why="a Python scalar out: not traceable"),
    Row("Array.dot", lambda xp, a, b: a.dot(b),
        lambda rng, n, dt: [(array(rng, (n, 3), dt, "small"), array(rng, (3, 2), dt, "small")),
                            (array(rng, (n,), dt, "small"), array(rng, (n,), dt, "small"))],
        dtypes=NUM, rtol=1e-5, atol=1e-5),
    Row("Array.sum", _red("sum"), reduce_cases(), dtypes=REAL, rtol=1e-5, atol=1e-5),
    Row("Array.prod", _red("prod"), reduce_cases("unit"), dtypes=FLOATS, rtol=1e-5),
    Row("Array.mean", _red("mean"), reduce_cases(), dtypes=REAL, rtol=1e-5, atol=1e-5),
    Row("Array.var", _red("var"), reduce_cases(), dtypes=FLOATS, rtol=1e-4, atol=1e-5),
    Row("Array.std", _red("std"), reduce_cases(), dtypes=FLOATS, rtol=1e-4, atol=1e-5),
    Row("Array.max", _red("max"), reduce_cases(), dtypes=REAL),
    Row("Array.min", _red("min"), reduce_cases(), dtypes=REAL),
    Row("Array.any", _red("any"), reduce_cases(ties=True), dtypes=REAL),
    Row("Array.all", _red("all"), reduce_cases(ties=True), dtypes=REAL),
    Row("Array.argmax", _red("argmax"), arg_cases, dtypes=REAL),
    Row("Array.argmin", _red("argmin"), arg_cases, dtypes=REAL),
    Row("Array.argmax", _red("argmax"), arg_kd_cases, dtypes=REAL, xfail=ARG_KD),
    Row("Array.cumsum", lambda xp, a, axis: a.cumsum(axis=axis), cumsum_cases, dtypes=REAL,
        rtol=1e-5, atol=1e-5),
]
