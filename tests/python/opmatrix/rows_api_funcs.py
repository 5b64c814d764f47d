"""Op-matrix rows of the issue-10 array API functions: the new ufuncs, cumulative functions,
tril/triu, unstack/split/array_split, rot90, meshgrid, diff, tile, moveaxis."""
import numpy as np

from .spec import Row, FLOATS, INTS, REAL, SIGNED, array, unary_cases, binary_cases

NUMERIC = INTS + FLOATS


def _mapped(cases, f):
    """cases with every numpy array x replaced by f(x) in x's dtype (keeps views' layout out:
    the mapped arrays are contiguous; the unmapped case builders cover layouts)."""
    def out(rng, n, dtype):
        res = []
        for args in cases(rng, n, dtype):
            res.append(tuple(np.asarray(f(a)).astype(a.dtype) if isinstance(a, np.ndarray)
                             else a for a in args))
        return res
    return out


def _ge1(a):  # acosh's domain
    return np.abs(a.astype(np.float64)) + 1 if a.dtype != np.bool_ else np.ones_like(a)


def _u(name, alias=None, cases=None, dtypes=REAL, **kw):
    rows = [Row(name, lambda xp, a, f=name: getattr(xp, f)(a), cases or unary_cases(),
                np_fn=lambda np_, a, f=(alias or name): getattr(np_, f)(a), dtypes=dtypes, **kw)]
    return rows


def _b(name, cases=None, dtypes=REAL, **kw):
    return [Row(name, lambda xp, a, b, f=name: getattr(xp, f)(a, b), cases or binary_cases(),
                dtypes=dtypes, **kw)]


ROWS = []
for _name, _np_name, _cases in [
        ("acosh", "arccosh", _mapped(unary_cases(), _ge1)),
        ("arccosh", None, _mapped(unary_cases(), _ge1)),
        ("asinh", "arcsinh", unary_cases()), ("arcsinh", None, unary_cases()),
        ("atanh", "arctanh", unary_cases("unit")), ("arctanh", None, unary_cases("unit")),
        ("cbrt", None, unary_cases()), ("rint", None, unary_cases()),
        ("deg2rad", None, unary_cases()), ("radians", None, unary_cases()),
        ("rad2deg", None, unary_cases()), ("degrees", None, unary_cases()),
        ("signbit", None, unary_cases())]:
    ROWS += _u(_name, _np_name, _cases)
for _name in ("copysign", "hypot", "logaddexp", "logaddexp2", "nextafter", "fmax", "fmin"):
    ROWS += _b(_name)
# divisors away from 0 (x % 0 is 0 for integers as numpy, NaN for floats: covered by the tests),
# both signs through the negated copy
ROWS += _b("fmod", binary_cases("normal", "positive"))
ROWS += _b("fmod", _mapped(binary_cases("normal", "positive"), np.negative), dtypes=FLOATS + SIGNED)


def _mat_cases(rng, n, dtype):
    return [(array(rng, (n, n + 1), dtype),), (array(rng, (2, n, 3), dtype, "normal", "t"),),
            (array(rng, (n, 2), dtype, "normal", "r"),), (array(rng, (0, 3), dtype),),
            (array(rng, (n,), dtype),)]


def _nd_cases(rng, n, dtype):
    return [(array(rng, (n, 4), dtype),), (array(rng, (2, n, 3), dtype, "normal", "t"),),
            (array(rng, (n, 6), dtype, "normal", "s"),), (array(rng, (n, 2), dtype, "normal", "r"),)]


def _1d_cases(rng, n, dtype):
    return [(array(rng, (n,), dtype),), (array(rng, (0,), dtype),),
            (array(rng, (n, 3), dtype, "normal", "t"),), (array(rng, (2, n, 3), dtype),)]


def _pos_small(rng, n, dtype):  # products that stay in range
    return [tuple(np.asarray(np.clip(np.abs(a), 0.5, 1.5) if a.dtype.kind == "f" else
                             np.clip(np.abs(a.astype(np.int64)), 0, 3)).astype(a.dtype)
                  for a in args) for args in _nd_cases(rng, n, dtype)]


NO_F16 = tuple(d for d in REAL if d != "float16")
_F16_WHY = ("numpy accumulates a float16 cumsum in float16, rounding every step; frit accumulates "
            "in float32 as numpy's sum does, so the partial sums differ by numpy's rounding")
ROWS += [
    Row("cumsum", lambda xp, a: xp.cumsum(a), _nd_cases, dtypes=NO_F16),
    Row("cumsum", lambda xp, a: xp.cumsum(a), _nd_cases, dtypes=("float16",), atol=0.1,
        why=_F16_WHY),
    Row("cumulative_sum", lambda xp, a: xp.cumulative_sum(a, axis=0), _nd_cases,
        dtypes=("float16",), atol=0.1, why=_F16_WHY),
    Row("cumsum", lambda xp, a: xp.cumsum(a, axis=-1), _nd_cases, dtypes=NO_F16),
    Row("cumsum", lambda xp, a: xp.cumsum(a, axis=0, dtype=xp.int8), _nd_cases, dtypes=INTS,
        tags=("wraps",)),
    Row("cumprod", lambda xp, a: xp.cumprod(a, axis=1), _pos_small, dtypes=REAL),
    Row("cumprod", lambda xp, a: xp.cumprod(a), _pos_small, dtypes=NUMERIC),
    Row("cumulative_sum", lambda xp, a: xp.cumulative_sum(a, axis=0, include_initial=True),
        _nd_cases, dtypes=NO_F16),
    Row("cumulative_sum", lambda xp, a: xp.cumulative_sum(a, axis=-1, dtype=xp.float64),
        _nd_cases, dtypes=NUMERIC),
    Row("cumulative_prod", lambda xp, a: xp.cumulative_prod(a, axis=1, include_initial=True),
        _pos_small, dtypes=REAL),
    Row("tril", lambda xp, a: xp.tril(a), _mat_cases, dtypes=REAL),
    Row("tril", lambda xp, a: xp.tril(a, k=-1), _mat_cases, dtypes=REAL),
    Row("triu", lambda xp, a: xp.triu(a), _mat_cases, dtypes=REAL),
    Row("triu", lambda xp, a: xp.triu(a, k=2), _mat_cases, dtypes=REAL),
    Row("unstack", lambda xp, a: xp.stack(xp.unstack(a, axis=-1)), _nd_cases, dtypes=REAL,
        np_fn=lambda np_, a: np_.stack(tuple(np_.moveaxis(a, -1, 0))),
        why="stacked back so the row has one output; jit needs the static axis length"),
    Row("split", lambda xp, a: xp.stack(xp.split(a, 2, axis=-1)),
        lambda rng, n, d: [(array(rng, (n, 4), d),), (array(rng, (2, n, 6), d, "normal", "t"),)],
        dtypes=REAL, why="stacked back so the row has one output"),
    Row("array_split", lambda xp, a: xp.array_split(a, [1, -1, 9], axis=0)[1], _nd_cases,
        dtypes=REAL, why="one piece as the output (index list with negative and out-of-range "
                         "points)"),
    Row("array_split", lambda xp, a: xp.array_split(a, 3, axis=-1)[0], _nd_cases, dtypes=REAL,
        why="the first (longer) piece as the output"),
    Row("rot90", lambda xp, a: xp.rot90(a), _nd_cases, dtypes=REAL),
    Row("rot90", lambda xp, a: xp.rot90(a, 3, axes=(1, 0)), _nd_cases, dtypes=REAL),
    Row("rot90", lambda xp, a: xp.rot90(a, -2, axes=(-1, 0)), _nd_cases, dtypes=REAL),
    Row("meshgrid", lambda xp, a, b: xp.stack(xp.meshgrid(a, b)),
        lambda rng, n, d: [(array(rng, (n,), d), array(rng, (3,), d)),
                           (array(rng, (0,), d), array(rng, (n,), d, "normal", "r"))],
        dtypes=REAL, why="stacked so the row has one output"),
    Row("meshgrid", lambda xp, a, b: xp.meshgrid(a, b, indexing="ij", sparse=True)[1],
        lambda rng, n, d: [(array(rng, (n,), d), array(rng, (3,), d))], dtypes=REAL,
        why="one output of the sparse grid"),
    Row("diff", lambda xp, a: xp.diff(a), _1d_cases, dtypes=REAL),
    Row("diff", lambda xp, a: xp.diff(a, 2, axis=0), _nd_cases, dtypes=REAL),
    Row("diff", lambda xp, a: xp.diff(a, axis=-1, prepend=a[..., :1], append=a[..., -1:]),
        _nd_cases, dtypes=REAL),
    Row("tile", lambda xp, a: xp.tile(a, 2), _nd_cases, dtypes=REAL),
    Row("tile", lambda xp, a: xp.tile(a, (2, 1, 3)), _nd_cases, dtypes=REAL),
    Row("moveaxis", lambda xp, a: xp.moveaxis(a, 0, -1), _nd_cases, dtypes=REAL),
    Row("moveaxis", lambda xp, a: xp.moveaxis(a, [0, -1], [-1, 0]), _nd_cases, dtypes=REAL),
]
