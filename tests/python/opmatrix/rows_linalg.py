"""Op-matrix rows for frit.linalg, frit.diagonal/trace and frit.einsum. Decompositions whose
vectors are defined only up to sign are checked through a sign-free quantity (the
reconstruction, |R|); their values directly."""
import numpy as np

from .spec import Row, REAL, array

LA_DT = ("float32", "float64")
LA_WHY = "numpy.linalg rejects float16 (frit too); ints are checked in test_linalg.py"


def _wc(rng, shape, dtype):
    """Well-conditioned: normal + n * I (diagonally dominant)."""
    a = array(rng, shape, "float64") / 3
    n = shape[-1]
    return (a + n * np.eye(n)).astype(dtype)


def _spd(rng, shape, dtype):
    a = array(rng, shape, "float64") / 3
    return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def _sym(rng, shape, dtype):
    a = array(rng, shape, "float64")
    return (a + np.swapaxes(a, -1, -2)).astype(dtype)


def sq(make=_wc):
    """Square matrices: single, batched, a size-1 batch, and a 1x1."""
    def cases(rng, n, dtype):
        return [(make(rng, (n, n), dtype),), (make(rng, (2, n, n), dtype),),
                (make(rng, (1, 3, n, n), dtype),), (make(rng, (2, 1, 1), dtype),)]
    return cases


def rect(rng, n, dtype):
    return [(array(rng, (n, 3), dtype),), (array(rng, (2, 3, n), dtype),), (array(rng, (n, n), dtype),)]


def _mT(xp, x):
    return xp.swapaxes(x, -1, -2)


def _eigh_recon(xp, a):
    w, v = xp.linalg.eigh(a)
    return xp.matmul(v * w[..., None, :], _mT(xp, v))


def _svd_recon(xp, a):
    u, s, vh = xp.linalg.svd(a, full_matrices=False)
    return xp.matmul(u * s[..., None, :], vh)


def _qr_recon(xp, a):
    q, r = xp.linalg.qr(a)
    return xp.matmul(q, r)


def _solve_cases(rng, n, dtype):
    return [(_wc(rng, (n, n), dtype), array(rng, (n, 2), dtype)),
            (_wc(rng, (3, n, n), dtype), array(rng, (n,), dtype)),
            (_wc(rng, (2, 1, n, n), dtype), array(rng, (3, n, 1), dtype))]


def _vec_cases(rng, n, dtype):
    return [(array(rng, (n,), dtype),), (array(rng, (2, n), dtype),), (array(rng, (n, 3), dtype, layout="t"),)]


def _pair3(rng, n, dtype):
    return [(array(rng, (n, 3), dtype), array(rng, (n, 3), dtype)),
            (array(rng, (n, 3), dtype), array(rng, (3,), dtype))]


def _diag_cases(rng, n, dtype):
    return [(array(rng, (n, n), dtype),), (array(rng, (2, n, 3), dtype),), (array(rng, (n, 4), dtype, layout="t"),),
            (array(rng, (3, n, n), dtype, layout="r"),)]


def _ein(spec):
    def fn(xp, *ops):
        return xp.einsum(spec, *ops)
    return fn


def _ein_cases(shapes):
    def cases(rng, n, dtype):
        return [tuple(array(rng, s(n), dtype, "small" if dtype not in LA_DT else "normal") for s in shapes)]
    return cases


TOL = dict(rtol=2e-4, atol=2e-4)

ROWS = [
    Row("linalg.inv", lambda xp, a: xp.linalg.inv(a), sq(), dtypes=LA_DT, why=LA_WHY, **TOL),
    Row("linalg.solve", lambda xp, a, b: xp.linalg.solve(a, b), _solve_cases, dtypes=LA_DT, why=LA_WHY, **TOL),
    Row("linalg.det", lambda xp, a: xp.linalg.det(a), sq(), dtypes=LA_DT, why=LA_WHY, **TOL),
    Row("linalg.slogdet", lambda xp, a: xp.linalg.slogdet(a)[0] * xp.linalg.slogdet(a)[1], sq(),
        dtypes=LA_DT, why=LA_WHY, **TOL),
    Row("linalg.cholesky", lambda xp, a: xp.linalg.cholesky(a), sq(_spd), dtypes=LA_DT, why=LA_WHY, **TOL),
    Row("linalg.qr", _qr_recon, rect, dtypes=LA_DT, why=LA_WHY + "; Q, R compared as Q @ R", **TOL),
    Row("linalg.eigh", _eigh_recon, sq(_sym), dtypes=LA_DT,
        why=LA_WHY + "; vectors compared by reconstruction", **TOL),
    Row("linalg.eigvalsh", lambda xp, a: xp.linalg.eigvalsh(a), sq(_sym), dtypes=LA_DT, why=LA_WHY, **TOL),
    Row("linalg.svd", _svd_recon, rect, dtypes=LA_DT, why=LA_WHY + "; compared as U S Vh", **TOL),
    Row("linalg.svdvals", lambda xp, a: xp.linalg.svdvals(a), rect, dtypes=LA_DT, why=LA_WHY, **TOL),
    Row("linalg.pinv", lambda xp, a: xp.linalg.pinv(a), rect, dtypes=LA_DT, why=LA_WHY, **TOL),
    Row("linalg.matrix_rank", lambda xp, a: xp.linalg.matrix_rank(a), rect, dtypes=LA_DT, why=LA_WHY),
    Row("linalg.lstsq", lambda xp, a, b: xp.linalg.lstsq(a, b)[0],
        lambda rng, n, dt: [(array(rng, (n + 2, n), dt), array(rng, (n + 2, 2), dt))],
        dtypes=LA_DT, why=LA_WHY + "; x only (residuals are data-dependent in size)", **TOL),
    Row("linalg.norm", lambda xp, a: xp.linalg.norm(a), rect, dtypes=LA_DT, why=LA_WHY, **TOL),
    Row("linalg.matrix_norm", lambda xp, a: xp.linalg.matrix_norm(a, ord="nuc"), rect, dtypes=LA_DT,
        why=LA_WHY, **TOL),
    Row("linalg.vector_norm", lambda xp, a: xp.linalg.vector_norm(a, ord=3, axis=-1), _vec_cases,
        dtypes=LA_DT, why=LA_WHY, **TOL),
    Row("linalg.matrix_power", lambda xp, a: xp.linalg.matrix_power(a, -2), sq(), dtypes=LA_DT,
        why=LA_WHY, **TOL),
    Row("linalg.multi_dot", lambda xp, a, b: xp.linalg.multi_dot([a, b, a]),
        lambda rng, n, dt: [(array(rng, (3, n), dt), array(rng, (n, 3), dt))], dtypes=LA_DT,
        why=LA_WHY, **TOL),
    Row("linalg.cross", lambda xp, a, b: xp.linalg.cross(a, b), _pair3, dtypes=LA_DT, why=LA_WHY, **TOL),
    Row("linalg.outer", lambda xp, a, b: xp.linalg.outer(a, b),
        lambda rng, n, dt: [(array(rng, (n,), dt), array(rng, (3,), dt))], dtypes=LA_DT, why=LA_WHY, **TOL),
    Row("linalg.tensordot", lambda xp, a, b: xp.linalg.tensordot(a, b, axes=1),
        lambda rng, n, dt: [(array(rng, (2, n), dt), array(rng, (n, 3), dt))], dtypes=LA_DT,
        why=LA_WHY, **TOL),
    Row("linalg.vecdot", lambda xp, a, b: xp.linalg.vecdot(a, b), _pair3, dtypes=LA_DT, why=LA_WHY, **TOL),
    Row("linalg.matmul", lambda xp, a, b: xp.linalg.matmul(a, b),
        lambda rng, n, dt: [(array(rng, (2, n, 3), dt), array(rng, (3, 4), dt))], dtypes=LA_DT,
        why=LA_WHY, **TOL),
    Row("linalg.matrix_transpose", lambda xp, a: xp.linalg.matrix_transpose(a), rect, dtypes=LA_DT,
        why=LA_WHY),
    Row("linalg.diagonal", lambda xp, a: xp.linalg.diagonal(a, offset=1), _diag_cases, dtypes=LA_DT,
        why=LA_WHY),
    Row("linalg.trace", lambda xp, a: xp.linalg.trace(a, offset=-1), _diag_cases, dtypes=LA_DT,
        why=LA_WHY, **TOL),
    Row("diagonal", lambda xp, a: xp.diagonal(a, 1, -1, 0), _diag_cases, dtypes=REAL),
    Row("trace", lambda xp, a: xp.trace(a, -1, 1, 0), _diag_cases, dtypes=REAL, rtol=1e-3, atol=1e-3,
        why="float16 sums round differently from numpy's (one ulp)"),
    Row("einsum", _ein("ij,jk->ik"), _ein_cases([lambda n: (n, 3), lambda n: (3, 4)]), dtypes=REAL,
        rtol=1e-4, atol=1e-4, why="float16 accumulates in float32 (numpy: in float16)"),
    Row("einsum", _ein("bii->bi"), _ein_cases([lambda n: (2, n, n)]), dtypes=REAL),
    Row("einsum", _ein("...j,j"), _ein_cases([lambda n: (2, n, 3), lambda n: (3,)]), dtypes=REAL,
        rtol=1e-4, atol=1e-4),
    Row("einsum", _ein("ij,jk,kl"), _ein_cases([lambda n: (2, n), lambda n: (n, 3), lambda n: (3, 2)]),
        dtypes=LA_DT, rtol=1e-4, atol=1e-4),
]
