"""Rows for float sums long enough to run pairwise (rows of 300 > one 256-term block) along the
inner and the outer axis, and for the statistics built on them."""
import numpy as np

from .spec import Row, array

LONG = ("float16", "float32", "float64")


def long_rows(layout):
    def cases(rng, n, dtype):
        return [(array(rng, (n, 300), dtype, "unit", layout),)]
    return cases


ROWS = [
    Row("sum", lambda xp, a: xp.sum(a, axis=-1), long_rows("c"), dtypes=LONG, rtol=1e-5, atol=1e-5),
    Row("sum", lambda xp, a: xp.sum(a, axis=0, keepdims=True), long_rows("c"), dtypes=LONG, rtol=1e-5, atol=1e-5),
    Row("sum", lambda xp, a: xp.sum(a), long_rows("t"), dtypes=LONG, rtol=1e-5, atol=1e-4),
    Row("mean", lambda xp, a: xp.mean(a, axis=1), long_rows("c"), dtypes=LONG, rtol=1e-5, atol=1e-6),
    Row("var", lambda xp, a: xp.var(a, axis=1), long_rows("c"), dtypes=("float32", "float64"), rtol=1e-4, atol=1e-6),
    Row("std", lambda xp, a: xp.std(a, axis=-1), long_rows("s"), dtypes=("float32", "float64"), rtol=1e-4, atol=1e-6),
]
