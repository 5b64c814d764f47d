"""Op-matrix rows of the products: matmul (1-d, 2-d, batched with broadcasting, size 0), dot,
vdot, inner, outer, tensordot, einsum, vecdot; shape mismatches must raise as in numpy."""
import numpy as np

from .spec import Row, FLOATS, INTS, REAL, array

PY_SHAPES = {"jit": "Python-level shape arithmetic on symbolic dims (int(None), reshape -1): "
                    "jit falls back to per-shape tracing"}

NUM = ("bool",) + INTS + FLOATS


def _mm_cases(rng, n, dtype):
    A = lambda s, lay="c": array(rng, s, dtype, "small" if dtype != "bool" else "normal", lay)  # noqa: E731
    return [(A((n, 3)), A((3, 4))), (A((n, 3), "t"), A((3, n), "r")), (A((3,)), A((3, n))),
            (A((n, 3)), A((3,))), (A((n,)), A((n,))), (A((2, n, 3)), A((3, 2))),
            (A((2, 1, n, 3)), A((4, 3, 2))), (A((0, 3)), A((3, 2))), (A((n, 0)), A((0, 2))),
            (A((n, 3)), A((4, 2))), (A(()), A((3,)))]  # the last two: numpy raises


def _dot_cases(rng, n, dtype):
    A = lambda s, lay="c": array(rng, s, dtype, "small" if dtype != "bool" else "normal", lay)  # noqa: E731
    return [(A((n, 3)), A((3, 4))), (A((n,)), A((n,))), (A((n, 3)), A((3,))),
            (A((2, n, 3)), A((3, 2))), (A(()), A((n, 2))), (A((n, 3), "t"), A((3, 2)))]


def _vec_cases(rng, n, dtype):
    A = lambda s, lay="c": array(rng, s, dtype, "small", lay)  # noqa: E731
    return [(A((n,)), A((n,))), (A((n,), "r"), A((n,))), (A((0,)), A((0,))), (A((n,)), A((3,)))]


def _outer_cases(rng, n, dtype):
    A = lambda s, lay="c": array(rng, s, dtype, "small", lay)  # noqa: E731
    return [(A((n,)), A((3,))), (A((n, 2)), A((3,))), (A(()), A((n,))), (A((0,)), A((3,)))]


def _inner_cases(rng, n, dtype):
    A = lambda s, lay="c": array(rng, s, dtype, "small", lay)  # noqa: E731
    return [(A((n,)), A((n,))), (A((n, 3)), A((2, 3))), (A(()), A((n,))), (A((n, 3)), A((3,)))]


def _tensordot_cases(rng, n, dtype):
    A = lambda s: array(rng, s, dtype, "small")  # noqa: E731
    return [(A((n, 3, 2)), A((3, 2, 4)), 2), (A((n, 3)), A((3, 4)), 1), (A((n, 3)), A((2, 4)), 0),
            (A((3, n)), A((n, 3)), ((0, 1), (1, 0))), (A((n, 3)), A((2, 4)), 1),
            (A((n, 0)), A((0, 3)), 1), (A((0, n, 0)), A((n, 0)), 2)]  # empty contractions


def _einsum_cases(rng, n, dtype):
    A = lambda s, lay="c": array(rng, s, dtype, "small", lay)  # noqa: E731
    return [("ij,jk->ik", A((n, 3)), A((3, 4))), ("ij->ji", A((n, 3), "t")),
            ("ij->", A((n, 3))), ("i,i->", A((n,)), A((n,))), ("bij,bjk->bik", A((2, n, 3)), A((2, 3, 2))),
            ("ii->i", A((n, n))), ("ij,j->i", A((n, 3)), A((3,))), ("i,j->ij", A((n,)), A((3,))),
            ("...j,j->...", A((2, n, 3)), A((3,))), ("ij", A((n, 3)))]


def _vecdot_cases(rng, n, dtype):
    A = lambda s, lay="c": array(rng, s, dtype, "small", lay)  # noqa: E731
    return [(A((n, 3)), A((n, 3)), -1), (A((n, 3)), A((3,)), -1), (A((3, n)), A((3, n)), 0),
            (A((n, 3)), A((n, 2)), -1)]


ROWS = [
    Row("matmul", lambda xp, a, b: xp.matmul(a, b), _mm_cases, dtypes=NUM, rtol=1e-5, atol=1e-5),
    Row("dot", lambda xp, a, b: xp.dot(a, b), _dot_cases, dtypes=NUM, rtol=1e-5, atol=1e-5),
    Row("vdot", lambda xp, a, b: xp.vdot(a, b), _vec_cases, dtypes=NUM[1:], rtol=1e-5,
        atol=1e-5, xfail=PY_SHAPES),
    Row("inner", lambda xp, a, b: xp.inner(a, b), _inner_cases, dtypes=NUM[1:], rtol=1e-5,
        atol=1e-5, xfail=PY_SHAPES),
    Row("outer", lambda xp, a, b: xp.outer(a, b), _outer_cases, dtypes=REAL, xfail=PY_SHAPES),
    Row("tensordot", lambda xp, a, b, ax: xp.tensordot(a, b, axes=ax), _tensordot_cases,
        dtypes=NUM[1:], rtol=1e-5, atol=1e-5, xfail=PY_SHAPES),
    Row("einsum", lambda xp, s, *ops: xp.einsum(s, *ops), _einsum_cases, dtypes=NUM[1:],
        rtol=1e-5, atol=1e-5),
    Row("vecdot", lambda xp, a, b, ax: xp.vecdot(a, b, axis=ax), _vecdot_cases, dtypes=NUM[1:],
        rtol=1e-5, atol=1e-5),
]
