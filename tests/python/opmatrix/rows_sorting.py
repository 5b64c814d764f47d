"""Op-matrix rows for sorting and searching: sort, argsort (stable, descending), searchsorted,
nonzero, argwhere, flatnonzero, count_nonzero, unique and the unique_* functions, interp and
histogram. Data-dependent sizes use size= (a fixed 64, numpy's result padded) so that every row
runs under jit too."""
import numpy as np

from .spec import Row, REAL, FLOATS, array

PAD = 64


def _pad(a, fill=0, index=True):
    """numpy's data-sized result padded to PAD rows (int64 for indices and counts)."""
    a = np.asarray(a)
    out = np.full((PAD,) + a.shape[1:], fill, dtype=np.int64 if index else a.dtype)
    out[:len(a)] = a
    return out


def _desc_argsort(np_, a, axis=-1):
    """Stable descending argsort (equal elements keep their order, NaNs last)."""
    def row(r):
        idx = np_.arange(r.size)
        nan = np_.isnan(r) if r.dtype.kind == "f" else np_.zeros(r.size, bool)
        keep = idx[~nan]
        rr = r[keep]
        o = rr.size - 1 - np_.argsort(rr[::-1], kind="stable")[::-1]
        return np_.concatenate([keep[o], idx[nan]]).astype(np_.int64)
    if a.size == 0:
        return np_.zeros(a.shape, np_.int64)
    return np_.apply_along_axis(row, axis, a)


def _sort_cases(rng, n, dtype):
    """Duplicates (small ints), several shapes and layouts; no 0-d (numpy rejects axis=-1)."""
    k = "small"
    return [(array(rng, (n,), dtype, k),),
            (array(rng, (0,), dtype, k),),
            (array(rng, (n, 3), dtype, k),),
            (array(rng, (3, n), dtype, k, "t"),),
            (array(rng, (2, n, 3), dtype, k, "s"),),
            (array(rng, (n, 2), dtype, k, "r"),)]


def _flat_cases(rng, n, dtype):
    return [(array(rng, (n,), dtype, "small"),),
            (array(rng, (n, 3), dtype, "small", "t"),),
            (array(rng, (2, n), dtype, "small", "r"),)]


def _search_cases(rng, n, dtype):
    a = np.sort(array(rng, (n,), dtype, "small"))
    return [(a, array(rng, (n, 2), dtype, "small")),
            (a, array(rng, (), dtype, "small"))]


def _interp_cases(rng, n, dtype):
    xp = np.sort(rng.standard_normal(n)).astype(dtype)
    fp = rng.standard_normal(n).astype(dtype)
    return [(rng.uniform(-3, 3, (n, 2)).astype(dtype), xp, fp)]


def _hist_cases(rng, n, dtype):
    return [(array(rng, (n, 3), dtype, "normal"),)]


ROWS = [
    Row("sort", lambda xp, a: xp.sort(a), _sort_cases,
        np_fn=lambda np_, a: np_.sort(a, kind="stable"), dtypes=REAL),
    Row("sort", lambda xp, a: xp.sort(a, axis=0, descending=True), _sort_cases,
        np_fn=lambda np_, a: np_.take_along_axis(a, _desc_argsort(np_, a, 0), 0), dtypes=REAL,
        tags=("descending",)),
    Row("sort", lambda xp, a: xp.sort(a, axis=None), _flat_cases,
        np_fn=lambda np_, a: np_.sort(a, axis=None, kind="stable"), dtypes=REAL, tags=("flat",)),
    Row("argsort", lambda xp, a: xp.argsort(a), _sort_cases,
        np_fn=lambda np_, a: np_.argsort(a, kind="stable"), dtypes=REAL),
    Row("argsort", lambda xp, a: xp.argsort(a, descending=True), _sort_cases,
        np_fn=lambda np_, a: _desc_argsort(np_, a), dtypes=REAL, tags=("descending",)),
    Row("searchsorted", lambda xp, a, v: xp.searchsorted(a, v), _search_cases, dtypes=REAL),
    Row("searchsorted", lambda xp, a, v: xp.searchsorted(a, v, side="right"), _search_cases,
        dtypes=REAL, tags=("right",)),
    Row("nonzero", lambda xp, a: xp.nonzero(a, size=PAD)[0], _flat_cases,
        np_fn=lambda np_, a: _pad(np_.nonzero(a)[0]), dtypes=REAL),
    Row("flatnonzero", lambda xp, a: xp.flatnonzero(a, size=PAD), _flat_cases,
        np_fn=lambda np_, a: _pad(np_.flatnonzero(a)), dtypes=REAL),
    Row("argwhere", lambda xp, a: xp.argwhere(a, size=PAD), _flat_cases,
        np_fn=lambda np_, a: _pad(np_.argwhere(a)), dtypes=REAL),
    Row("count_nonzero", lambda xp, a: xp.count_nonzero(a), _flat_cases, dtypes=REAL),
    Row("unique", lambda xp, a: xp.unique(a, size=PAD, fill_value=0), _flat_cases,
        np_fn=lambda np_, a: _pad(np_.unique(a), index=False), dtypes=REAL),
    Row("unique", lambda xp, a: xp.unique(a, axis=0, size=PAD),
        lambda rng, n, dt: [(array(rng, (n, 3), dt, "small"),), (array(rng, (n, 2), dt, "small", "t"),)],
        np_fn=lambda np_, a: _pad(np_.unique(a, axis=0), index=False), dtypes=REAL, tags=("axis",),
        why="axis= needs the other axes static: under jit it traces per shape"),
    Row("unique_values", lambda xp, a: xp.unique_values(a, size=PAD, fill_value=0), _flat_cases,
        np_fn=lambda np_, a: _pad(np_.sort(np_.unique_values(a)), index=False), dtypes=REAL),
    Row("unique_counts", lambda xp, a: xp.unique_counts(a, size=PAD).counts, _flat_cases,
        np_fn=lambda np_, a: _pad(np_.unique_counts(a).counts), dtypes=REAL),
    Row("unique_inverse", lambda xp, a: xp.unique_inverse(a, size=PAD).inverse_indices, _flat_cases,
        np_fn=lambda np_, a: np_.unique_inverse(a).inverse_indices.astype(np_.int64), dtypes=REAL),
    Row("unique_all", lambda xp, a: xp.unique_all(a, size=PAD).indices, _flat_cases,
        np_fn=lambda np_, a: _pad(np_.unique_all(a).indices), dtypes=REAL),
    Row("interp", lambda xp, x, p, f: xp.interp(x, p, f), _interp_cases, dtypes=("float32", "float64"),
        rtol=1e-12, atol=1e-12),
    Row("histogram", lambda xp, a: xp.histogram(a, bins=5)[0], _hist_cases, dtypes=FLOATS),
    Row("histogram", lambda xp, a: xp.histogram(a, bins=4, range=(-1, 2))[1], _hist_cases,
        dtypes=FLOATS, tags=("edges",)),
]
