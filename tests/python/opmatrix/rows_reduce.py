"""Op-matrix rows of the reductions: sum/prod/max/min/mean/std/var/argmax/argmin/any/all/
count_nonzero/cumsum/logsumexp over None, single, negative and tuple axes, keepdims, 0-d, size 0
and non-contiguous inputs; their Array-method spellings are in rows_array.py."""
import numpy as np

from .spec import Row, FLOATS, INTS, REAL, array


def reduce_cases(kind="normal", empty_ok=True, ties=False):
    """(array, axis, keepdims) triples: axis None/int/negative/tuple, keepdims both ways."""
    def cases(rng, n, dtype):
        A = lambda s, lay="c": array(rng, s, dtype, "small" if ties else kind, lay)  # noqa: E731
        out = [(A((n, 3)), None, False), (A((n, 3)), 0, False), (A((n, 3)), -1, True),
               (A((2, n, 3), "t"), (0, 2), False), (A((2, n, 3)), (-1, -3), True),
               (A((3, n), "r"), 1, False), (A((n, 4), "s"), None, True), (A(()), None, False),
               (A((n,)), 0, False), (A((1, n)), 0, False)]
        if empty_ok:
            out += [(A((0, 3)), 0, False), (A((0, 3)), None, True), (A((n, 0)), 0, False)]
        return out
    return cases


def _fn(name, **kw):
    return lambda xp, a, axis, keepdims: getattr(xp, name)(a, axis=axis, keepdims=keepdims, **kw)


ROWS = [
    # float sums: frit's summation order differs from numpy's pairwise one
    Row("sum", _fn("sum"), reduce_cases(), dtypes=REAL, rtol=1e-5, atol=1e-5),
    Row("prod", _fn("prod"), reduce_cases("unit"), dtypes=FLOATS, rtol=1e-5),
    Row("prod", _fn("prod"), reduce_cases(ties=True), dtypes=("bool",) + INTS),
    Row("mean", _fn("mean"), reduce_cases(), dtypes=REAL, rtol=1e-5, atol=1e-5),
    Row("var", _fn("var"), reduce_cases(), dtypes=REAL, rtol=1e-4, atol=1e-5),
    Row("std", _fn("std"), reduce_cases(), dtypes=REAL, rtol=1e-4, atol=1e-5),
    Row("var", _fn("var", ddof=1), reduce_cases(), dtypes=FLOATS, rtol=1e-4, atol=1e-5),
    Row("std", _fn("std", correction=1), reduce_cases(), dtypes=FLOATS, rtol=1e-4, atol=1e-5),
    # max/min of an empty axis raise in numpy (no identity): frit must refuse too
    Row("max", _fn("max"), reduce_cases(), dtypes=REAL),
    Row("min", _fn("min"), reduce_cases(), dtypes=REAL),
    Row("any", _fn("any"), reduce_cases(ties=True), dtypes=REAL),
    Row("all", _fn("all"), reduce_cases(ties=True), dtypes=REAL),
    Row("count_nonzero", _fn("count_nonzero"), reduce_cases(ties=True), dtypes=REAL),
    Row("logsumexp", _fn("logsumexp"), reduce_cases(empty_ok=False),
        np_fn=lambda np, a, axis, keepdims: _logsumexp(a, axis, keepdims), rtol=1e-5),
]


def _logsumexp(a, axis, keepdims):
    m = np.max(a, axis=axis, keepdims=True)
    s = np.log(np.sum(np.exp((a - m).astype(np.float64)), axis=axis, keepdims=True)) + m
    return (s if keepdims else np.squeeze(s, axis=axis)).astype(a.dtype)


def _nn(name):
    return lambda xp, a, axis, keepdims: getattr(xp.nn, name)(a, axis=axis, keepdims=keepdims)


ROWS.append(Row("nn.logsumexp", _nn("logsumexp"), reduce_cases(empty_ok=False),
                np_fn=lambda np, a, axis, keepdims: _logsumexp(a, axis, keepdims), rtol=1e-5))


def arg_cases(rng, n, dtype):
    """argmax/argmin: one axis or None (numpy takes no tuple), ties resolved to the first."""
    A = lambda s, lay="c": array(rng, s, dtype, "small", lay)  # noqa: E731
    return [(A((n, 3)), None, False), (A((n, 3)), 0, False), (A((2, n, 3), "t"), 1, False),
            (A(()), None, False), (A((0, 3)), 1, False), (A((0, 3)), 0, False)]


def arg_kd_cases(rng, n, dtype):
    A = lambda s, lay="c": array(rng, s, dtype, "small", lay)  # noqa: E731
    return [(A((n, 3)), -1, True), (A((3, n), "r"), 1, True), (A((n, 4), "s"), None, True)]


ARG_KD = {"jit": "argmax/argmin(keepdims=True) do shape arithmetic in Python on symbolic dims "
                 "('shape: got None'): jit falls back to per-shape tracing"}


def _nan_arg_cases(rng, n, dtype):
    a = array(rng, (n, 3), dtype)
    a[1, 1] = np.nan
    a[2, 0] = np.nan
    return [(a, None, False), (a, 0, False), (a, 1, False)]


ROWS += [
    Row("argmax", _fn("argmax"), arg_cases, dtypes=REAL),
    Row("argmin", _fn("argmin"), arg_cases, dtypes=REAL),
    Row("argmax", _fn("argmax"), arg_kd_cases, dtypes=REAL, xfail=ARG_KD),
    Row("argmin", _fn("argmin"), arg_kd_cases, dtypes=REAL, xfail=ARG_KD),
    Row("argmax", _fn("argmax"), _nan_arg_cases, dtypes=FLOATS, why="NaN is the maximum"),
    Row("argmin", _fn("argmin"), _nan_arg_cases, dtypes=FLOATS),
    Row("max", _fn("max"), _nan_arg_cases, dtypes=FLOATS, why="NaN propagates"),
    Row("min", _fn("min"), _nan_arg_cases, dtypes=FLOATS),
    Row("sum", _fn("sum"), _nan_arg_cases, dtypes=FLOATS),
]


def cumsum_cases(rng, n, dtype):
    A = lambda s, lay="c": array(rng, s, dtype, "normal", lay)  # noqa: E731
    return [(A((n, 3)), None), (A((n, 3)), 0), (A((n, 3)), -1), (A((2, n, 3), "t"), 1),
            (A((3, n), "r"), 1), (A(()), None), (A((0, 3)), 0), (A((n,)), 0)]


ROWS += [
    Row("cumsum", lambda xp, a, axis: xp.cumsum(a, axis=axis), cumsum_cases, dtypes=REAL,
        rtol=1e-5, atol=1e-5),
    Row("sum", lambda xp, a, axis: xp.sum(a, axis=axis, dtype=xp.float64),
        cumsum_cases, dtypes=("int8", "uint8", "float32"), rtol=1e-7),
    Row("prod", lambda xp, a, axis: xp.prod(a, axis=axis, dtype=xp.int64),
        lambda rng, n, dt: [(array(rng, (n, 3), dt, "small"), 0)], dtypes=("int8", "uint16")),
    # dtype= is the accumulator: numpy's sum(uint8, dtype=uint8) wraps, dtype=bool is any
    Row("sum", lambda xp, a, axis: xp.sum(a, axis=axis, dtype=a.dtype), cumsum_cases,
        dtypes=("bool", "int8", "uint8", "int16", "uint32", "float32"), rtol=1e-5, atol=1e-5),
    Row("prod", lambda xp, a, axis: xp.prod(a, axis=axis, dtype=a.dtype), cumsum_cases,
        dtypes=("bool", "int8", "uint16"), rtol=1e-5, atol=1e-5),
    Row("cumsum", lambda xp, a, axis: xp.cumsum(a, axis=axis, dtype=a.dtype), cumsum_cases,
        dtypes=("bool", "int8", "uint8")),
    Row("mean", lambda xp, a, axis: xp.mean(a, axis=axis, dtype=xp.float32),
        cumsum_cases, dtypes=("int16", "float64"), rtol=1e-5, atol=1e-5),
]


def _bad_axis_cases(rng, n, dtype):
    a = array(rng, (n, 3), dtype)
    return [(a, 2, False), (a, -3, False), (a, (0, 0), False)]


for _name in ("sum", "max", "mean", "argmax", "any"):
    ROWS.append(Row(_name, _fn(_name), _bad_axis_cases, dtypes=("float32", "int32"),
                    tags=("errors",), why="numpy raises AxisError/ValueError: frit must raise"))
