"""Op-matrix rows for complex64/complex128 (native dtypes; frit._complex): elementwise, reductions,
matmul, lexicographic ordering (numpy 2) and the functions conj/real/imag/angle that numpy also
defines on real inputs."""
from .spec import Row, COMPLEX, FLOATS, array, unary_cases, binary_cases

_UNARY = ["negative", "positive", "conj", "conjugate", "real", "imag", "abs", "angle", "exp",
          "expm1", "log", "log1p", "log2", "log10", "sqrt", "square", "sin", "cos", "tan",
          "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh",
          "reciprocal", "sign", "isfinite", "isinf", "isnan"]
_NP = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh",
       "acosh": "arccosh", "atanh": "arctanh"}
_BINARY = ["add", "subtract", "multiply", "divide", "power", "equal", "not_equal"]


def _u(name):
    npn = _NP.get(name, name)
    return Row(name, lambda xp, a, _n=name: getattr(xp, _n)(a), unary_cases(),
               np_fn=lambda np, a, _m=npn: getattr(np, _m)(a), dtypes=COMPLEX,
               rtol=1e-5, atol=1e-5, tags=("complex",))


ROWS = [_u(n) for n in _UNARY]
ROWS += [Row(n, lambda xp, a, b, _n=n: getattr(xp, _n)(a, b), binary_cases("unit"),
             dtypes=COMPLEX, rtol=1e-5, atol=1e-5, tags=("complex",)) for n in _BINARY]
ROWS += [
    Row("where", lambda xp, a, b: xp.where(xp.real(a) > 0, a, b), binary_cases(scalars=False),
        dtypes=COMPLEX, tags=("complex",)),
    Row("round", lambda xp, a: xp.round(a * 10), unary_cases(), dtypes=COMPLEX,
        tags=("complex",)),
    Row("sum", lambda xp, a: xp.sum(a), unary_cases(), dtypes=COMPLEX, rtol=1e-5,
        atol=1e-5, tags=("complex",)),
    Row("mean", lambda xp, a: xp.mean(a), unary_cases(), dtypes=COMPLEX, rtol=1e-5,
        atol=1e-5, tags=("complex",)),
    Row("prod", lambda xp, a: xp.prod(a, axis=-1), unary_cases("unit"), dtypes=COMPLEX,
        rtol=1e-5, atol=1e-5, tags=("complex",)),
    Row("matmul", lambda xp, a, b: xp.matmul(a, b),
        lambda rng, n, dt: [(array(
            rng, (n, 3), dt), array(
            rng, (3, 4), dt))], dtypes=COMPLEX, rtol=1e-5, atol=1e-5, tags=("complex",)),
    Row("vdot", lambda xp, a, b: xp.vdot(a, b),
        lambda rng, n, dt: [(array(
            rng, (n,), dt), array(
            rng, (n,), dt))], dtypes=COMPLEX, rtol=1e-5, atol=1e-5, tags=("complex",)),
    # numpy defines these on real inputs too
    Row("real", lambda xp, a: xp.real(a), unary_cases(), dtypes=FLOATS, tags=("complex",)),
    Row("imag", lambda xp, a: xp.imag(a), unary_cases(), dtypes=FLOATS, tags=("complex",)),
    Row("conj", lambda xp, a: xp.conj(a), unary_cases(), dtypes=FLOATS, tags=("complex",)),
]


def _ties(rng, n, dt):
    """Pairs whose real parts tie in places (the imaginary part then decides)."""
    a = array(rng, (n, 3), dt)
    b = array(rng, (n, 3), dt)
    b.real[::2] = a.real[::2]
    return [(a, b), (a[:, :1], b)]


# numpy 2 orders complex numbers lexicographically (real part, then imaginary part)
_ORDER = ["less", "less_equal", "greater", "greater_equal", "maximum", "minimum"]
ROWS += [Row(n, lambda xp, a, b, _n=n: getattr(xp, _n)(a, b), binary_cases(), dtypes=COMPLEX,
             tags=("complex",)) for n in _ORDER]
ROWS += [Row(n, lambda xp, a, b, _n=n: getattr(xp, _n)(a, b), _ties, dtypes=COMPLEX,
             tags=("complex",)) for n in _ORDER]
ROWS += [
    Row("clip", lambda xp, a: xp.clip(a, -0.5 + 0.5j, 0.5 - 0.25j), unary_cases(), dtypes=COMPLEX,
        tags=("complex",)),
    Row("var", lambda xp, a: xp.var(a, axis=-1), unary_cases(), dtypes=COMPLEX, rtol=1e-5,
        atol=1e-5, tags=("complex",)),
    Row("std", lambda xp, a: xp.std(a), unary_cases(), dtypes=COMPLEX, rtol=1e-5, atol=1e-5,
        tags=("complex",)),
    Row("cumsum", lambda xp, a: xp.cumsum(a), unary_cases(), dtypes=COMPLEX, rtol=1e-5,
        atol=1e-5, tags=("complex",)),
]
