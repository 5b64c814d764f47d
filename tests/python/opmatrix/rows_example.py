"""Example rows (the format every rows_<area>.py follows)."""
from .spec import Row, FLOATS, REAL, unary_cases, binary_cases

ROWS = [
    Row("exp", lambda xp, a: xp.exp(a), unary_cases("unit"), dtypes=FLOATS),
    Row("add", lambda xp, a, b: xp.add(a, b), binary_cases(), dtypes=REAL),
]
