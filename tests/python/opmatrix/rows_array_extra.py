"""Rows for Array methods added with sorting and complex numbers (sort, argsort, nonzero,
searchsorted, conj/conjugate/real/imag)."""
import numpy as np

from .spec import Row, array, unary_cases


def _sorted_copy(xp, a):
    b = a.copy()
    b.sort()  # in place, as numpy
    return b


def _search_cases(rng, n, dt):
    return [(np.sort(array(rng, (n,), dt)), array(rng, (3,), dt)),
            (np.sort(array(rng, (n,), dt)), array(rng, (2, 2), dt))]


_C = ("float32", "float64", "int32", "complex64", "complex128")

ROWS = [
    Row("Array.sort", _sorted_copy, unary_cases(), dtypes=("int16", "float32", "float64")),
    Row("Array.argsort", lambda xp, a: a.argsort(axis=-1, kind="stable"), unary_cases(),
        dtypes=("int8", "float32", "float64")),
    Row("Array.nonzero", lambda xp, a: a.nonzero(),
        lambda rng, n, dt: [(array(rng, (n,), dt),), (array(rng, (n, 3), dt),)],
        dtypes=("bool", "int32", "float64"), modes=("eager", "interp"),
        why="the output size depends on the values (under jit: size=, test_sorting.py)"),
    Row("Array.searchsorted", lambda xp, a, v: a.searchsorted(v), _search_cases,
        dtypes=("int32", "float64")),
    Row("Array.conj", lambda xp, a: a.conj(), unary_cases(), dtypes=_C),
    Row("Array.conjugate", lambda xp, a: a.conjugate(), unary_cases(), dtypes=_C),
    Row("Array.real", lambda xp, a: a.real, unary_cases(), dtypes=_C),
    Row("Array.imag", lambda xp, a: a.imag, unary_cases(), dtypes=_C),
]
