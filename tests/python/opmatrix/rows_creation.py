"""Op-matrix rows of the creation functions (zeros, ones, full, arange, linspace, eye, identity,
asarray/array, *_like, empty), dtype introspection (can_cast, result_type, finfo, iinfo) and
frit.random (no numpy oracle for the values: shape, dtype, range, statistics, and determinism by
seed are checked instead)."""
import numpy as np

from .spec import Row, FLOATS, INTS, REAL, array


def _shape_cases(rng, n, dtype):
    return [((n, 3), dtype), ((), dtype), ((0, n), dtype), (n, dtype)]


def _like_cases(rng, n, dtype):
    return [(array(rng, (n, 3), dtype), None), (array(rng, (), dtype), "float32"),
            (array(rng, (0, 2), dtype), "int8"), (array(rng, (3, n), dtype, layout="t"), None)]


def _full_cases(rng, n, dtype):
    v = array(rng, (), dtype).item()
    return [((n, 3), v, dtype), ((), v, dtype), ((0,), v, dtype), ((n,), v, None)]


def _arange_cases(rng, n, dtype):
    return [(n, None, 1, dtype), (1, n + 4, 2, dtype), (n, 0, -1, dtype), (0, 0, 1, dtype),
            (n, None, 1, None), (0.5, n, 0.75, None), (2, n, 1, None)]


def _linspace_cases(rng, n, dtype):
    return [(0, 1, n, True, dtype), (-2.5, 3, n, False, dtype), (1, 1, 1, True, dtype),
            (0, 10, 0, True, dtype), (3, -3, n + 2, True, None)]


def _eye_cases(rng, n, dtype):
    return [(n, None, 0, dtype), (n, 3, 1, dtype), (n, n + 1, -2, dtype), (0, None, 0, dtype),
            (3, n, n, None)]


def _asarray_cases(rng, n, dtype):
    return [(array(rng, (n, 3), dtype), None), (array(rng, (3, n), dtype, layout="t"), None),
            (array(rng, (n,), dtype), "float64"), (array(rng, (), dtype), "int16")]


def _pylist_cases(rng, n, dtype):
    # Python data: nested lists and scalars get numpy's default dtypes
    return [([[1, 2], [3, 4]],), ([1.5, -2.0] * n,), (True,), (3,), (2.5,), ([],),
            ([[True, False]],), ([1, 2.5],)]


def _empty_check(got, shape, dtype):
    want = np.empty(shape, dtype)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape,
                                                                want.dtype)


def _empty_like_check(got, a, dtype):
    want = np.empty_like(a, dtype=dtype)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype)


ROWS = [
    Row("zeros", lambda xp, s, dt: xp.zeros(s, dtype=dt), _shape_cases, dtypes=REAL),
    Row("ones", lambda xp, s, dt: xp.ones(s, dtype=dt), _shape_cases, dtypes=REAL),
    Row("zeros", lambda xp, s: xp.zeros(s), lambda rng, n, dt: [((n, 2),), (n,), ((),)],
        dtypes=("float64",), why="the default dtype is float64 as in numpy"),
    Row("empty", lambda xp, s, dt: xp.empty(s, dtype=dt), _shape_cases, dtypes=REAL,
        check=_empty_check, why="values undefined: shape and dtype only"),
    Row("full", lambda xp, s, v, dt: xp.full(s, v, dtype=dt), _full_cases, dtypes=REAL),
    Row("zeros_like", lambda xp, a, dt: xp.zeros_like(a, dtype=dt), _like_cases, dtypes=REAL),
    Row("ones_like", lambda xp, a, dt: xp.ones_like(a, dtype=dt), _like_cases, dtypes=REAL),
    Row("empty_like", lambda xp, a, dt: xp.empty_like(a, dtype=dt), _like_cases, dtypes=REAL,
        check=_empty_like_check, why="values undefined: shape and dtype only"),
    Row("full_like", lambda xp, a, dt: xp.full_like(a, 3, dtype=dt), _like_cases, dtypes=REAL),
    Row("arange", lambda xp, a, b, s, dt: xp.arange(a, b, s, dtype=dt), _arange_cases,
        dtypes=("int8", "int32", "int64", "uint16", "float32", "float64")),
    Row("linspace", lambda xp, a, b, k, ep, dt: xp.linspace(a, b, k, endpoint=ep, dtype=dt),
        _linspace_cases, dtypes=("float32", "float64", "int32"), rtol=1e-6, atol=1e-6),
    Row("eye", lambda xp, n, m, k, dt: xp.eye(n, m, k=k, dtype=dt), _eye_cases, dtypes=REAL),
    Row("identity", lambda xp, n, m, k, dt: xp.identity(n, dtype=dt), _eye_cases, dtypes=REAL),
    Row("asarray", lambda xp, a, dt: xp.asarray(a, dtype=dt), _asarray_cases, dtypes=REAL,
        modes=("eager", "interp"), why="converts host data: nothing to trace"),
    Row("array", lambda xp, a, dt: xp.array(a, dtype=dt), _asarray_cases, dtypes=REAL,
        modes=("eager", "interp"), why="converts host data: nothing to trace"),
    Row("asarray", lambda xp, v: xp.asarray(v), _pylist_cases, dtypes=("int64",),
        modes=("eager", "interp"), why="Python data in, the dtype numpy infers out"),
    Row("array", lambda xp, v: xp.array(v), _pylist_cases, dtypes=("int64",),
        modes=("eager", "interp"), why="Python data in, the dtype numpy infers out"),
]

# dtype introspection: Python values out (compared as arrays); eager only
_DTS = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
        "float16", "float32", "float64"]


def _pairs(rng, n, dtype):
    return [(dtype, o) for o in _DTS]


def _finfo(xp, dt):
    f = xp.finfo(dt)
    return np.array([f.eps, f.max, f.min, f.tiny, f.smallest_normal, f.resolution], np.float64), \
        np.array([f.bits], np.int64)


def _iinfo(xp, dt):
    i = xp.iinfo(dt)
    return np.array([i.min, i.max, i.bits], object).astype(str)


_INTRO = dict(modes=("eager",), why="dtype introspection: host values, no arrays")
ROWS += [
    Row("can_cast", lambda xp, a, b: np.array(xp.can_cast(a, b)), _pairs, dtypes=_DTS, **_INTRO),
    Row("result_type", lambda xp, a, b: np.array(np.dtype(str(xp.result_type(a, b))).str),
        _pairs, dtypes=_DTS, **_INTRO),
    Row("result_type", lambda xp, a, s: np.array(np.dtype(str(xp.result_type(a, s))).str),
        lambda rng, n, dt: [(dt, 1), (dt, 2.5), (dt, True)], dtypes=_DTS, **_INTRO),
    Row("finfo", lambda xp, dt: _finfo(xp, dt), lambda rng, n, dt: [(dt,)], dtypes=FLOATS,
        **_INTRO),
    Row("iinfo", lambda xp, dt: _iinfo(xp, dt), lambda rng, n, dt: [(dt,)], dtypes=INTS,
        **_INTRO),
]


# ---------------------------------------------------------------- frit.random
# fn draws twice with the same seed (determinism) and returns both; check() tests shape, dtype,
# range and the first two moments (n*1000 draws: 6-sigma bounds).

def _rng_cases(rng, n, dtype):
    return [(1234, (n, 1000), dtype), (7, (n * 1000,), dtype)]


def _det(draw):
    def f(xp, seed, size, dt):
        a = draw(xp.random.default_rng(seed), size, dt)
        b = draw(xp.random.default_rng(seed), size, dt)
        return a, b
    return f


def _module(draw):
    def f(xp, seed, size, dt):
        xp.random.seed(seed)
        a = draw(xp.random, size, dt)
        xp.random.seed(seed)
        b = draw(xp.random, size, dt)
        return a, b
    return f


def _stats(lo=None, hi=None, mean=None, var=None, integer=False):
    def check(got, seed, size, dt):
        a, b = got
        size = (size,) if isinstance(size, int) else tuple(size)
        assert a.shape == size, (a.shape, size)
        assert a.dtype == np.dtype(dt), (a.dtype, dt)
        assert np.array_equal(a, b), "same seed, different numbers"
        x = a.astype(np.float64).ravel()
        assert np.isfinite(x).all()
        if lo is not None:
            assert x.min() >= lo and (x.max() < hi if not integer else x.max() <= hi), (x.min(), x.max())
        k = x.size
        if mean is not None:
            assert abs(x.mean() - mean) < 6 * np.sqrt(var / k) + 1e-3, (x.mean(), mean)
            assert abs(x.var() - var) < 6 * var * np.sqrt(2.0 / k) + 1e-3, (x.var(), var)
    return check


_U = lambda g, s, dt: g.uniform(-1.0, 3.0, size=s, dtype=dt)  # noqa: E731
_N = lambda g, s, dt: g.normal(2.0, 0.5, size=s, dtype=dt)  # noqa: E731
_SN = lambda g, s, dt: g.standard_normal(size=s, dtype=dt)  # noqa: E731
_R = lambda g, s, dt: g.random(size=s, dtype=dt)  # noqa: E731
_I = lambda g, s, dt: g.integers(-3, 5, size=s, dtype=dt)  # noqa: E731
_RND = dict(why="random numbers: no numpy oracle; shape, dtype, range, moments, determinism")
_RF = ("float32", "float64")
ROWS += [
    Row("random.uniform", _module(_U), _rng_cases, dtypes=_RF,
        check=_stats(-1, 3, 1.0, 16 / 12), **_RND),
    Row("random.normal", _module(_N), _rng_cases, dtypes=_RF, check=_stats(mean=2.0, var=0.25),
        **_RND),
    Row("random.standard_normal", _module(_SN), _rng_cases, dtypes=_RF,
        check=_stats(mean=0.0, var=1.0), **_RND),
    Row("random.random", _module(_R), _rng_cases, dtypes=_RF, check=_stats(0, 1, 0.5, 1 / 12),
        **_RND),
    Row("random.integers", _module(_I), _rng_cases, dtypes=("int32", "int64"),
        check=_stats(-3, 4, 0.5, (8 ** 2 - 1) / 12, integer=True), **_RND),
    Row("random.Generator", _det(_U), _rng_cases, dtypes=_RF,
        check=_stats(-1, 3, 1.0, 16 / 12), **_RND),
    Row("random.default_rng", _det(_N), _rng_cases, dtypes=_RF,
        check=_stats(mean=2.0, var=0.25), **_RND),
    Row("random.seed", _module(_I), _rng_cases, dtypes=("int64",),
        check=_stats(-3, 4, 0.5, (8 ** 2 - 1) / 12, integer=True), **_RND),
]
