"""Rows for the movement and indexing fixes of issue 10: roll, pad (every mode, wide pads),
expand_dims, repeat (per-element counts), slicing with out-of-range bounds, take and
take_along_axis (in-range indices; out-of-range ones are checked in test_index_bounds.py)."""

from .spec import Row, REAL, array


def _arr(rng, n, dtype, shape_of_n, layout="c"):
    return array(rng, shape_of_n(n), dtype, "small", layout)


def roll_cases(rng, n, dtype):
    return [(_arr(rng, n, dtype, lambda n: (n, 3)),),
            (_arr(rng, n, dtype, lambda n: (2, n), "t"),),
            (_arr(rng, n, dtype, lambda n: (n,), "r"),),
            (array(rng, (0, 3), dtype, "small"),)]


def pad_cases(rng, n, dtype):
    return [(_arr(rng, n, dtype, lambda n: (n, 3)),), (_arr(rng, n, dtype, lambda n: (3, n), "s"),)]


def nd_cases(rng, n, dtype):
    return [(_arr(rng, n, dtype, lambda n: (2, n, 3)),), (array(rng, (), dtype, "small"),)]


def rep_cases(rng, n, dtype):
    return [(array(rng, (3, n), dtype, "small"),), (array(rng, (3, n), dtype, "small", "t"),)]


def slice_cases(rng, n, dtype):
    return [(_arr(rng, n, dtype, lambda n: (n, 4)),), (array(rng, (0, 4), dtype, "small"),),
            (array(rng, (1, 4), dtype, "small"),)]


def take_cases(rng, n, dtype):
    x = _arr(rng, n, dtype, lambda n: (n, 3))
    return [(x, rng.integers(-n, n, size=(4,))), (x, rng.integers(-n, n, size=(2, 2)))]


def tal_cases(rng, n, dtype):
    x = _arr(rng, n, dtype, lambda n: (n, 3))
    return [(x, rng.integers(-n, n, size=(5, 3)))]


_SLICES = (slice(None, 100), slice(2, 50), slice(None, -10, -1), slice(50, None), slice(None, -50),
           slice(3, 1), slice(-100, 100, 3), slice(100, -100, -2))

ROWS = [
    Row("roll", lambda xp, a: xp.roll(a, 1, 0), roll_cases, dtypes=REAL),
    Row("roll", lambda xp, a: xp.roll(a, -7), roll_cases, dtypes=("float32", "int64")),
    Row("roll", lambda xp, a: xp.roll(a, (2, -1), (0, -1)) if a.ndim == 2 else xp.roll(a, 5, 0),
        roll_cases, dtypes=("float64",)),
    Row("pad", lambda xp, a: xp.pad(a, ((1, 2), (0, 3))), pad_cases, dtypes=REAL),
    Row("pad", lambda xp, a: xp.pad(a, ((4, 1), (7, 2)), mode="reflect"), pad_cases),
    Row("pad", lambda xp, a: xp.pad(a, ((4, 1), (7, 2)), mode="symmetric"), pad_cases, dtypes=REAL),
    Row("pad", lambda xp, a: xp.pad(a, ((9, 1), (2, 11)), mode="wrap"), pad_cases, dtypes=REAL),
    Row("pad", lambda xp, a: xp.pad(a, 3, mode="edge"), pad_cases, dtypes=REAL),
    Row("expand_dims", lambda xp, a: xp.expand_dims(a, a.ndim), nd_cases, dtypes=REAL),
    Row("expand_dims", lambda xp, a: xp.expand_dims(a, (0, -1)), nd_cases, dtypes=("float32",)),
    Row("expand_dims", lambda xp, a: xp.expand_dims(a, -a.ndim - 1), nd_cases, dtypes=("int32",)),
    Row("repeat", lambda xp, a: xp.repeat(a, [2, 0, 1], axis=0), rep_cases, dtypes=REAL),
    Row("repeat", lambda xp, a: xp.repeat(a, 2, axis=1), rep_cases, dtypes=("float64", "int8")),
    Row("repeat", lambda xp, a: xp.repeat(a, [3]), rep_cases, dtypes=("float32",)),
    Row("take", lambda xp, a, i: xp.take(a, i, axis=0), take_cases, dtypes=REAL),
    Row("take_along_axis", lambda xp, a, i: xp.take_along_axis(a, i, axis=0), tal_cases,
        dtypes=REAL),
    # functions that read shapes and were wrong or failing on symbolic (traced) dims
    Row("atleast_2d", lambda xp, a: xp.atleast_2d(a), lambda rng, n, dt: [
        (array(rng, (n,), dt, "small"),), (array(rng, (), dt, "small"),)], dtypes=REAL),
    Row("argmax", lambda xp, a: xp.argmax(a, axis=1, keepdims=True), pad_cases, dtypes=REAL),
    Row("argmin", lambda xp, a: xp.argmin(a, axis=None, keepdims=True), pad_cases,
        dtypes=("float32", "int32")),
    Row("tensordot", lambda xp, a: xp.tensordot(a, a, axes=([0], [0])), pad_cases,
        dtypes=("float64",), rtol=1e-12, atol=1e-12),
] + [Row("Array.__getitem__", lambda xp, a, s=s: a[s], slice_cases, dtypes=("float32", "int16"),
         tags=("slice",)) for s in _SLICES] + [
    Row("Array.__getitem__", lambda xp, a: a[:, :9], slice_cases, dtypes=("float64",),
        tags=("slice",)),
]
