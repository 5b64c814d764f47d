"""Op-matrix rows of indexing: basic indexing (ints, slices with steps, None, Ellipsis), integer
arrays, boolean masks, take/take_along_axis, __setitem__, .at[] updates and frit.scatter. Rows
whose cases hit a bug being fixed elsewhere are separate rows with an xfail naming it."""
import numpy as np

from .spec import Row, REAL, array

ALL = REAL


def _getitem_cases(idxs):
    def cases(rng, n, dtype):
        return [(array(rng, shape, dtype, "normal", lay), idx) for shape, lay, idx in idxs(n)]
    return cases


def _basic(n):
    return [((n, 6), "c", (1,)), ((n, 6), "c", (-1, 2)), ((n, 6), "r", (slice(None, None, -1),)),
            ((n, 6), "c", (Ellipsis, 0)), ((n, 6), "c", (None, 1, None)),
            ((2, n, 3), "c", (Ellipsis, None, slice(0, 2))), ((), "c", ()), ((), "c", (None,)),
            ((n, 6), "c", (0, 0, 0))]


def _sym_slices(n):
    # bounds on the symbolic (n) axis
    # (under jit every dim >= 2 is symbolic: duck-sized)
    return [((n, 6), "t", (slice(1, 4),)), ((n, 6), "c", (slice(2, 2),)),
            ((n, 6), "c", (slice(None), slice(-3, None))),
            ((n,), "c", (slice(-2, None),))]


def _oob_ints(n):
    return [((n, 6), "c", (n,)), ((n, 6), "c", (0, 6)), ((n, 6), "c", (-n - 1,))]


def _stepped(n):
    return [((n, 6), "c", (slice(None), slice(None, None, 2))),
            ((n, 6), "c", (slice(1, None, 3), slice(5, 0, -2))),
            ((n, 6), "c", (slice(None, None, -2),))]


def _oob_slices(n):
    # numpy clamps every bound; empty results are fine
    return [((n, 6), "c", (slice(None), slice(None, 9))), ((n, 6), "c", (slice(None, 100),)),
            ((n, 6), "c", (slice(2, 50),)), ((n, 6), "c", (slice(None, -10, -1),)),
            ((n, 6), "c", (slice(50, None),)), ((n, 6), "c", (slice(None, -50),)),
            ((n, 6), "c", (slice(-100, 2),))]


def _int_array(n):
    return [((n, 4), "c", (np.array([0, 2, -1, 1]),)), ((n, 4), "t", (slice(None), np.array([3, 0]))),
            ((n, 4), "c", (np.array([[0, 1], [2, 0]]),)),
            ((n, 4), "c", (np.array([0, 1]), np.array([3, 2]))),
            ((2, n, 4), "c", (0, np.array([1, 0]), slice(1, 3))),
            ((n, 4), "c", (np.array([], np.int64),)), ((n,), "r", (np.array([1, 1, 1]),))]


def _oob_int_array(n):
    return [((n, 4), "c", (np.array([0, n]),)), ((n, 4), "c", (np.array([-n - 1]),))]


ROWS = [
    Row("Array.__getitem__", lambda xp, a, idx: a[idx], _getitem_cases(_basic), dtypes=ALL),
    Row("Array.__getitem__", lambda xp, a, idx: a[idx], _getitem_cases(_sym_slices), dtypes=ALL),
    Row("Array.__getitem__", lambda xp, a, idx: a[idx], _getitem_cases(_oob_ints), dtypes=ALL),
    Row("Array.__getitem__", lambda xp, a, idx: a[idx], _getitem_cases(_stepped), dtypes=ALL,
        xfail={"jit": "a stepped slice of a symbolic dim cannot be traced (frit_slice's "
                      "strided(): RESHAPE changes the number of elements); jit falls back to "
                      "tracing per shape"}),
    Row("Array.__getitem__", lambda xp, a, idx: a[idx], _getitem_cases(_oob_slices),
        dtypes=("int32", "float64")),
    Row("Array.__getitem__", lambda xp, a, idx: a[idx], _getitem_cases(_int_array), dtypes=ALL,
        xfail={"jit": "indexing with several integer arrays needs static sizes under jit: falls "
                      "back to per-shape tracing"}),
    Row("Array.__getitem__", lambda xp, a, idx: a[idx], _getitem_cases(_oob_int_array),
        dtypes=("float32",)),
    Row("Array.__getitem__", lambda xp, a, m: a[m],
        lambda rng, n, dt: [(array(rng, (n, 3), dt), array(rng, (n, 3), "bool")),
                            (array(rng, (n, 3), dt), array(rng, (n,), "bool")),
                            (array(rng, (), dt), np.array(True))],
        dtypes=ALL, modes=("eager", "interp"),
        why="a boolean mask's result shape depends on its values: not traceable"),
]


def _take_cases(rng, n, dtype):
    A = lambda s, lay="c": array(rng, s, dtype, "normal", lay)  # noqa: E731
    return [(A((n, 4)), np.array([0, 3, 1]), 1), (A((n, 4), "t"), np.array([[0, 1], [1, 0]]), 0),
            (A((n, 4)), np.array([-1, 2]), None), (A((n,)), np.array(2), 0),
            (A((n, 4)), np.array([], np.int64), 0)]


def _tal_cases(rng, n, dtype):
    a = array(rng, (n, 4), dtype)
    return [(a, rng.integers(0, 4, size=(n, 2)), 1), (a, rng.integers(0, n, size=(3, 4)), 0),
            (a, rng.integers(0, 4, size=(1, 4)), 1)]


def _set_cases(rng, n, dtype):
    A = lambda s: array(rng, s, dtype)  # noqa: E731
    return [(A((n, 4)), (1,), A((4,))), (A((n, 4)), (slice(None), 2), A(())),
            (A((n, 4)), (np.array([0, 2]),), A((2, 4))), (A((n, 4)), (Ellipsis,), A((1, 4))),
            (A((n, 4)), (slice(None, None, -1), 0), A((n,)))]


def _set_mask_cases(rng, n, dtype):
    A = lambda s: array(rng, s, dtype)  # noqa: E731
    return [(A((n, 4)), (array(rng, (n, 4), "bool"),), A(())),
            (A((n, 4)), (array(rng, (n, 4), "bool"),), 1)]


def _setitem(xp, a, idx, v):
    a = a.copy()
    a[idx] = v
    return a


def _at_cases(rng, n, dtype):
    A = lambda s: array(rng, s, dtype, "small")  # noqa: E731
    return [(A((n, 4)), np.array([0, 1, 0, 2]), A((4, 4))), (A((n, 4)), np.array([1]), A(())),
            (A((n,)), np.array([-1, 0, -1]), A((3,))), (A((n, 4)), np.array([], np.int64), A((4,)))]


def _np_at(mode):
    def f(np_, a, idx, v):
        a = a.copy()
        ufunc = {"add": np.add, "min": np.minimum, "max": np.maximum}.get(mode)
        if ufunc is None:
            a[idx] = v
        else:
            ufunc.at(a, idx, v)
        return a
    return f


def _at(mode):
    return lambda xp, a, idx, v: getattr(a.at[idx], mode)(v)


def _at_set_cases(rng, n, dtype):
    c = _at_cases(rng, n, dtype)
    return [(a, np.unique(i % a.shape[0]) if i.size else i, v[:len(np.unique(i % a.shape[0]))]
             if v.ndim and i.size else v) for a, i, v in c]


def _at_get_cases(rng, n, dtype):
    a = array(rng, (n, 4), dtype)
    return [(a, np.array([0, 2, -1])), (a, (slice(None), 1))]


def _scatter_cases(rng, n, dtype):
    a = array(rng, (n, 4), dtype, "small")
    return [(a, np.array([0, 1, 0]), array(rng, (3, 4), dtype, "small"))]


def _one_hot_cases(rng, n, dtype):
    return [(rng.integers(0, 5, size=(n,)).astype(dtype), 5),
            (rng.integers(0, 3, size=(n, 2)).astype(dtype), 3), (np.array(2, dtype), 4)]


def _np_one_hot(np_, idx, k):
    return (np.asarray(idx)[..., None] == np.arange(k)).astype(np.float32)


ROWS += [
    Row("take", lambda xp, a, i, ax: xp.take(a, i, axis=ax), _take_cases, dtypes=ALL),
    Row("Array.take", lambda xp, a, i, ax: a.take(i, axis=ax), _take_cases, dtypes=ALL),
    Row("take_along_axis", lambda xp, a, i, ax: xp.take_along_axis(a, i, axis=ax), _tal_cases,
        dtypes=ALL),
    Row("Array.__setitem__", _setitem, _set_cases, dtypes=ALL,
        np_fn=lambda np_, a, idx, v: _setitem(np_, a, idx, v)),
    Row("Array.__setitem__", _setitem, _set_mask_cases, dtypes=ALL,
        np_fn=lambda np_, a, idx, v: _setitem(np_, a, idx, v),
        why="a[mask] = scalar is a where: traceable (it raised under jit before)"),
    Row("Array.at", _at("add"), _at_cases, dtypes=ALL[1:], np_fn=_np_at("add")),
    Row("Array.at", _at("min"), _at_cases, dtypes=ALL[1:], np_fn=_np_at("min")),
    Row("Array.at", _at("max"), _at_cases, dtypes=ALL[1:], np_fn=_np_at("max")),
    Row("Array.at", _at("set"), _at_set_cases, dtypes=ALL, np_fn=_np_at("set")),
    Row("Array.at", lambda xp, a, idx: a.at[idx].get(), _at_get_cases, dtypes=ALL,
        np_fn=lambda np_, a, idx: a[idx]),
    Row("scatter", lambda xp, a, i, v: xp.scatter(a, i, v), _scatter_cases, dtypes=ALL[1:],
        np_fn=_np_at("add")),
    Row("scatter", lambda xp, a, i, v: xp.scatter(a, i, v, mode="max"), _scatter_cases,
        dtypes=ALL[1:], np_fn=_np_at("max")),
    Row("one_hot", lambda xp, i, k: xp.one_hot(i, k), _one_hot_cases,
        dtypes=("int32", "int64", "uint8"), np_fn=_np_one_hot),
    Row("nn.one_hot", lambda xp, i, k: xp.nn.one_hot(i, k), _one_hot_cases,
        dtypes=("int64",), np_fn=_np_one_hot),
]
