"""frit.linalg, frit.diagonal/trace against numpy.linalg: eagerly and under frit.jit (two batch
sizes, and two matrix sizes where the op allows), float32 and float64, batched; eigen/singular
vectors checked by reconstruction and orthogonality, values directly; bad input and singular
matrices (LinAlgError eagerly, NaN under jit)."""
import numpy as np
import pytest

import frit
from frit import linalg as LA

TOL = {"float32": 2e-4, "float64": 1e-10}


def rng(seed=0):
    return np.random.default_rng(seed)


def wellcond(r, shape, dtype):
    """Random matrices with singular values in [1, 4]."""
    n = shape[-1]
    q1, _ = np.linalg.qr(r.standard_normal(shape[:-2] + (n, n)))
    q2, _ = np.linalg.qr(r.standard_normal(shape[:-2] + (n, n)))
    s = r.uniform(1, 4, shape[:-2] + (n,))
    return ((q1 * s[..., None, :]) @ q2).astype(dtype)


def spd(r, shape, dtype):
    a = wellcond(r, shape, "float64")
    return (a @ np.swapaxes(a, -1, -2)).astype(dtype)


def sym(r, shape, dtype):
    a = r.standard_normal(shape)
    return (a + np.swapaxes(a, -1, -2)).astype(dtype)


def close(got, want, dtype, scale=1.0):
    got = np.asarray(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, want, rtol=TOL[dtype] * 10,
                               atol=TOL[dtype] * scale * max(1, np.abs(want).max(initial=0)))


def check_all(pairs, dtype, scale=10):
    """Realizes all frit results as one program (one compile), then compares each."""
    frit.realize(*[g for g, _ in pairs])
    for g, w in pairs:
        close(g, w, dtype, scale)


def mT(x):
    return np.swapaxes(x, -1, -2)


DTYPES = ["float32", "float64"]
SHAPES = [(1, 1), (3, 3, 3), (2, 2, 5, 5)]  # sizes 1..8: test_sizes_jit (one compile per op)


# ---------------------------------------------------------------- LU family

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_lu_family(dtype, shape):
    r = rng(shape[-1])
    a = wellcond(r, shape, dtype)
    b = r.standard_normal(shape[:-1] + (3,)).astype(dtype)
    fa, fb = frit.asarray(a), frit.asarray(b)
    inv = LA.inv(fa)
    assert inv.dtype == np.linalg.inv(a).dtype
    close(inv, np.linalg.inv(a), dtype, 10)
    close(LA.solve(fa, fb), np.linalg.solve(a, b), dtype, 10)
    close(LA.det(fa), np.linalg.det(a), dtype, 10)
    s, l_ = LA.slogdet(fa)
    sn, ln = np.linalg.slogdet(a)
    close(s, sn, dtype)
    close(l_, ln, dtype, 10)
    v = r.standard_normal(shape[-1]).astype(dtype)
    close(LA.solve(fa, frit.asarray(v)), np.linalg.solve(a, v), dtype, 10)


def test_solve_broadcast_and_ints():
    r = rng(1)
    a = wellcond(r, (3, 1, 4, 4), "float64")
    b = r.standard_normal((2, 4, 2))
    close(LA.solve(frit.asarray(a), frit.asarray(b)), np.linalg.solve(a, b), "float64", 10)
    ai = np.array([[2, 1], [1, 3]], dtype=np.int32)
    got = LA.inv(frit.asarray(ai))
    assert got.dtype == frit.float64
    close(got, np.linalg.inv(ai), "float64")
    close(LA.det(frit.asarray(ai)), np.linalg.det(ai), "float64")


def test_singular():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(LA.LinAlgError, match="Singular matrix"):
        LA.inv(frit.asarray(a))
    with pytest.raises(LA.LinAlgError, match="Singular matrix"):
        LA.solve(frit.asarray(a), frit.asarray(np.ones(2)))
    assert issubclass(LA.LinAlgError, frit.FritError)
    assert float(LA.det(frit.asarray(a))) == 0.0
    s, l_ = LA.slogdet(frit.asarray(a))
    assert float(s) == 0.0 and float(l_) == -np.inf
    with pytest.raises(LA.LinAlgError, match="positive definite"):
        LA.cholesky(frit.asarray(-np.eye(3)))
    # under jit: the jitted call raises after the run (a hidden failure flag output) ...
    f = frit.jit(lambda x: LA.inv(x) * 2)
    batch = np.stack([a, np.eye(2) * 2])
    with pytest.raises(LA.LinAlgError, match="Singular matrix"):
        f(frit.asarray(batch))
    np.testing.assert_allclose(np.asarray(f(frit.asarray(batch[1:]))), [np.eye(2)])
    g = frit.jit(lambda x: LA.cholesky(x))
    with pytest.raises(LA.LinAlgError, match="positive definite"):
        g(frit.asarray(np.stack([-np.eye(2), np.eye(2) * 4])))
    np.testing.assert_allclose(np.asarray(g(frit.asarray(np.eye(2) * 4))), np.eye(2) * 2)
    h = frit.jit(lambda x, b: LA.solve(x, b))
    with pytest.raises(LA.LinAlgError, match="Singular matrix"):
        h(frit.asarray(a), frit.asarray(np.ones(2)))
    # ... and inside a host loop body the failing matrix's result is NaN (no raise)

    def in_loop(x):
        with frit.loop(0, 1):
            x[...] = LA.inv(x)
        return x
    for fn in (in_loop, frit.jit(in_loop)):
        got = np.asarray(fn(frit.asarray(batch)))
        assert np.isnan(got[0]).all()
        np.testing.assert_allclose(got[1], np.eye(2) / 2)


# ---------------------------------------------------------------- factorisations

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_cholesky(dtype, shape):
    a = spd(rng(2), shape, dtype)
    fa = frit.asarray(a)
    close(LA.cholesky(fa), np.linalg.cholesky(a), dtype, 10)
    close(LA.cholesky(fa, upper=True), np.linalg.cholesky(a, upper=True), dtype, 10)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (2, 6, 3), (3, 5), (1, 1)])
def test_qr(dtype, shape):
    a = rng(3).standard_normal(shape).astype(dtype)
    fa = frit.asarray(a)
    res = {m: LA.qr(fa, mode=m) for m in ("reduced", "complete")}
    r_only = LA.qr(fa, mode="r")
    frit.realize(r_only, *res["reduced"], *res["complete"])  # one program
    for mode in ("reduced", "complete"):
        q, r = res[mode]
        qn, rn = np.linalg.qr(a, mode=mode)
        q, r = np.asarray(q), np.asarray(r)
        assert q.shape == qn.shape and r.shape == rn.shape and q.dtype == qn.dtype
        close(q @ r, a, dtype, 10)
        close(mT(q) @ q, np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2),
              dtype, 10)
        assert np.allclose(np.tril(r, -1), 0)
        # same reflector convention as LAPACK: R itself matches
        close(r, rn, dtype, 10)
    close(r_only, np.linalg.qr(a, mode="r"), dtype, 10)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_eigh(dtype, shape):
    a = sym(rng(4), shape, dtype)
    fa = frit.asarray(a)
    t = np.tril(a)  # only the lower triangle is read
    w, v = LA.eigh(fa)
    P = [(LA.eigvalsh(fa), np.linalg.eigvalsh(a)), (LA.eigvalsh(fa, UPLO="U"), np.linalg.eigvalsh(a, UPLO="U")),
         (LA.eigvalsh(frit.asarray(t)), np.linalg.eigvalsh(t))]
    frit.realize(w, v, *[g for g, _ in P])
    w, v = np.asarray(w), np.asarray(v)
    close(w, np.linalg.eigvalsh(a), dtype, 10)
    close((v * w[..., None, :]) @ mT(v), a, dtype, 10)
    close(mT(v) @ v, np.broadcast_to(np.eye(shape[-1]), shape), dtype, 10)
    check_all(P, dtype)


def _check_svd(a, dtype, full, outs=None):
    u, s, vh = (np.asarray(x) for x in (outs or LA.svd(frit.asarray(a), full_matrices=full)))
    un, sn, vhn = np.linalg.svd(a, full_matrices=full)
    assert u.shape == un.shape and s.shape == sn.shape and vh.shape == vhn.shape
    close(s, sn, dtype, 10)
    k = s.shape[-1]
    close((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], a, dtype, 10)
    close(mT(u) @ u, np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] + (u.shape[-1],) * 2), dtype, 10)
    close(vh @ mT(vh), np.broadcast_to(np.eye(vh.shape[-2]), vh.shape[:-2] + (vh.shape[-2],) * 2),
          dtype, 10)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (2, 6, 3), (2, 3, 2, 7), (1, 1)])
def test_svd(dtype, shape):
    a = rng(5).standard_normal(shape).astype(dtype)
    fa = frit.asarray(a)
    full, red = LA.svd(fa), LA.svd(fa, full_matrices=False)
    sv, sv2 = LA.svdvals(fa), LA.svd(fa, compute_uv=False)
    frit.realize(*full, *red, sv, sv2)  # one program
    _check_svd(a, dtype, True, full)
    _check_svd(a, dtype, False, red)
    close(sv, np.linalg.svd(a, compute_uv=False), dtype, 10)
    close(sv2, np.linalg.svd(a, compute_uv=False), dtype, 10)


def test_svd_rank_deficient():
    r = rng(6)
    a = r.standard_normal((6, 2)) @ r.standard_normal((2, 5))
    _check_svd(a, "float64", True)
    _check_svd(np.zeros((3, 4)), "float64", True)


@pytest.mark.parametrize("n", [32, 64])
def test_large(n):
    r = rng(n)
    a = wellcond(r, (n, n), "float64")
    close(LA.solve(frit.asarray(a), frit.asarray(np.ones((n, 1)))), np.linalg.solve(a, np.ones((n, 1))),
          "float64", 100)
    s = sym(r, (n, n), "float64")
    w, v = (np.asarray(x) for x in LA.eigh(frit.asarray(s)))
    close(w, np.linalg.eigvalsh(s), "float64", 100)
    close((v * w) @ v.T, s, "float64", 100)
    if n == 32:
        _check_svd(r.standard_normal((n, n // 2)), "float64", True)


# ---------------------------------------------------------------- compositions

@pytest.mark.parametrize("dtype", DTYPES)
def test_pinv_rank_lstsq(dtype):
    r = rng(7)
    a = r.standard_normal((2, 5, 3)).astype(dtype)
    close(LA.pinv(frit.asarray(a)), np.linalg.pinv(a), dtype, 10)
    d = (r.standard_normal((6, 2)) @ r.standard_normal((2, 4))).astype(dtype)
    assert int(LA.matrix_rank(frit.asarray(d))) == np.linalg.matrix_rank(d) == 2
    np.testing.assert_array_equal(np.asarray(LA.matrix_rank(frit.asarray(a))), np.linalg.matrix_rank(a))
    assert int(LA.matrix_rank(frit.asarray(d), tol=1e-3)) == np.linalg.matrix_rank(d, tol=1e-3)
    b = r.standard_normal((5, 2)).astype(dtype)
    for bb in (b, b[:, 0]):
        x, res, rk, s = LA.lstsq(frit.asarray(a[0]), frit.asarray(bb))
        xn, resn, rkn, sn = np.linalg.lstsq(a[0], bb)
        close(x, xn, dtype, 10)
        close(res, resn, dtype, 10)
        assert rk == rkn
        close(s, sn, dtype, 10)
    if dtype == "float64":  # in float32 the rounding-level singular values pass numpy's cutoff
        x, res, rk, s = LA.lstsq(frit.asarray(d), frit.asarray(d[:, :1]))
        xn, resn, rkn, sn = np.linalg.lstsq(d, d[:, :1])
        close(x, xn, dtype, 100)
        assert rk == rkn and np.asarray(res).shape == resn.shape == (0,)


@pytest.mark.parametrize("dtype", DTYPES)
def test_norms(dtype):
    r = rng(8)
    x = r.standard_normal((3, 4, 5)).astype(dtype)
    fx = frit.asarray(x)
    inf = np.inf
    P = []
    for ordv in (None, 1, 2, inf, -inf, 0, 3, 0.5, -1):
        for axis in (None, 0, (0, 2)) if ordv is None else (-1,):
            P.append((LA.norm(fx, ord=ordv, axis=axis), np.linalg.norm(x, ord=ordv, axis=axis)))
    for ordv in ("fro", "nuc", 1, -1, 2, -2, inf, -inf):
        P.append((LA.norm(fx, ord=ordv, axis=(2, 0), keepdims=True),
                  np.linalg.norm(x, ord=ordv, axis=(2, 0), keepdims=True)))
        P.append((LA.matrix_norm(fx, ord=ordv), np.linalg.matrix_norm(x, ord=ordv)))
    P.append((LA.matrix_norm(fx, ord=2, keepdims=True), np.linalg.matrix_norm(x, ord=2, keepdims=True)))
    P.append((LA.norm(frit.asarray(x[0]), ord="fro"), np.linalg.norm(x[0], ord="fro")))
    P.append((LA.norm(frit.asarray(x[0]), ord=2), np.linalg.norm(x[0], ord=2)))
    for ordv in (2, 1, inf, -inf, 0, 3):
        P.append((LA.vector_norm(fx, ord=ordv), np.linalg.vector_norm(x, ord=ordv)))
        P.append((LA.vector_norm(fx, ord=ordv, axis=(0, 1), keepdims=True),
                  np.linalg.vector_norm(x, ord=ordv, axis=(0, 1), keepdims=True)))
    check_all(P, dtype)
    xi = np.arange(6).reshape(2, 3)
    got = LA.norm(frit.asarray(xi))
    assert got.dtype == frit.float64
    close(got, np.linalg.norm(xi), "float64")


def test_power_multidot_misc():
    r = rng(9)
    a = wellcond(r, (2, 3, 3), "float64")
    fa = frit.asarray(a)
    for n in (-3, -1, 0, 1, 2, 5):
        close(LA.matrix_power(fa, n), np.linalg.matrix_power(a, n), "float64", 100)
    ms = [r.standard_normal(s) for s in [(3,), (3, 7), (7, 2), (2, 5), (5,)]]
    close(LA.multi_dot([frit.asarray(m) for m in ms]), np.linalg.multi_dot(ms), "float64")
    ms2 = [r.standard_normal(s) for s in [(3, 7), (7, 2), (2, 5)]]
    close(LA.multi_dot([frit.asarray(m) for m in ms2]), np.linalg.multi_dot(ms2), "float64")
    u, v = r.standard_normal((4, 3)), r.standard_normal((3,))
    close(LA.cross(frit.asarray(u), frit.asarray(v)), np.linalg.cross(u, v), "float64")
    u2 = r.standard_normal((3, 4))
    close(LA.cross(frit.asarray(u2), frit.asarray(u2[::-1]), axis=0), np.cross(u2, u2[::-1], axis=0),
          "float64")
    x, y = r.standard_normal(4), r.standard_normal(5)
    close(LA.outer(frit.asarray(x), frit.asarray(y)), np.linalg.outer(x, y), "float64")
    t1, t2 = r.standard_normal((2, 3, 4)), r.standard_normal((3, 4, 5))
    close(LA.tensordot(frit.asarray(t1), frit.asarray(t2), axes=2), np.linalg.tensordot(t1, t2, axes=2),
          "float64")
    close(LA.vecdot(frit.asarray(t1), frit.asarray(t1), axis=1), np.linalg.vecdot(t1, t1, axis=1), "float64")
    close(LA.matmul(frit.asarray(t1), frit.asarray(t2[0])), np.linalg.matmul(t1, t2[0]), "float64")
    close(LA.matrix_transpose(frit.asarray(t1)), np.linalg.matrix_transpose(t1), "float64")
    P = []
    for off in (-2, -1, 0, 1, 3, 9):
        P.append((LA.diagonal(frit.asarray(t1), offset=off), np.linalg.diagonal(t1, offset=off)))
        P.append((LA.trace(frit.asarray(t1), offset=off), np.linalg.trace(t1, offset=off)))
    check_all(P, "float64", 1)


def test_diagonal_trace_main():
    x = np.arange(2 * 3 * 4, dtype=np.int32).reshape(2, 3, 4)
    fx = frit.asarray(x)
    P = []
    for off in (-3, -1, 0, 1, 2, 5):
        for a1, a2 in ((0, 1), (1, 2), (2, 0), (-1, -2)):
            P.append((frit.diagonal(fx, off, a1, a2), np.diagonal(x, off, a1, a2)))
            got, want = frit.trace(fx, off, a1, a2), np.trace(x, off, a1, a2)
            assert got.dtype == want.dtype
            P.append((got, want))
    frit.realize(*[g for g, _ in P])
    for g, w in P:
        assert np.asarray(g).shape == w.shape
        np.testing.assert_array_equal(np.asarray(g), w)
    assert frit.trace(fx, dtype=frit.float32).dtype == frit.float32
    with pytest.raises(frit.FritError, match="diagonal"):
        frit.diagonal(frit.asarray(np.ones(3)))
    with pytest.raises(frit.FritError, match="axis1 and axis2"):
        frit.diagonal(fx, 0, 1, 1)
    with pytest.raises(frit.FritError, match="diagonal"):
        frit.diagonal(fx, 0, 0, 5)


# ---------------------------------------------------------------- jit: two batch sizes, two sizes

def _recon_eigh(a):
    w, v = LA.eigh(a)
    return (v * w[..., None, :]) @ LA.matrix_transpose(v)


def _recon_svd(a):
    u, s, vh = LA.svd(a)
    return (u * s[..., None, :]) @ vh


def _recon_qr(a):
    q, r = LA.qr(a)
    return q @ r


SIZE_OPS = [
    ("inv", lambda a: LA.inv(a), np.linalg.inv, wellcond),
    ("solve", lambda a: LA.solve(a, a[..., :1] * 2 + 1), lambda a: np.linalg.solve(a, a[..., :1] * 2 + 1),
     wellcond),
    ("det", lambda a: LA.det(a), np.linalg.det, wellcond),
    ("slogdet", lambda a: LA.slogdet(a)[0] * LA.slogdet(a)[1],
     lambda a: np.prod(np.linalg.slogdet(a), axis=0), wellcond),
    ("cholesky", lambda a: LA.cholesky(a), np.linalg.cholesky, spd),
    ("eigvalsh", lambda a: LA.eigvalsh(a), np.linalg.eigvalsh, sym),
    ("eigh", _recon_eigh, lambda a: a, sym),
    ("svd", _recon_svd, lambda a: a, wellcond),
    ("qr", _recon_qr, lambda a: a, wellcond),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,ff,fn,make", SIZE_OPS, ids=[o[0] for o in SIZE_OPS])
def test_sizes_jit(name, ff, fn, make, dtype):
    """Matrix sizes 1..8 through one jitted function (the size is symbolic in the kernel)."""
    r = rng(13)
    f = frit.jit(ff)
    for n in range(1, 9):
        a = make(r, (3, n, n), dtype)
        close(f(frit.asarray(a)), fn(a), dtype, 10)


JIT_OPS = [
    ("inv", lambda a: LA.inv(a), lambda a: np.linalg.inv(a), wellcond),
    ("det", lambda a: LA.det(a), lambda a: np.linalg.det(a), wellcond),
    ("slogdet", lambda a: LA.slogdet(a)[1], lambda a: np.linalg.slogdet(a)[1], wellcond),
    ("solve", lambda a: LA.solve(a, a[..., :2]), lambda a: np.linalg.solve(a, a[..., :2]), wellcond),
    ("cholesky", lambda a: LA.cholesky(a), lambda a: np.linalg.cholesky(a), spd),
    ("eigvalsh", lambda a: LA.eigvalsh(a), lambda a: np.linalg.eigvalsh(a), sym),
    ("eigh-recon", lambda a: (lambda w, v: (v * w[..., None, :]) @ LA.matrix_transpose(v))(*LA.eigh(a)),
     lambda a: a, sym),
    ("svdvals", lambda a: LA.svdvals(a), lambda a: np.linalg.svd(a, compute_uv=False), wellcond),
    ("qr-r", lambda a: frit.abs(LA.qr(a)[1]), lambda a: np.abs(np.linalg.qr(a)[1]), wellcond),
    ("pinv", lambda a: LA.pinv(a, rtol=1e-10), lambda a: np.linalg.pinv(a), wellcond),
    ("trace", lambda a: LA.trace(a, offset=1), lambda a: np.linalg.trace(a, offset=1), wellcond),
    ("diagonal", lambda a: frit.diagonal(a, -1, -2, -1), lambda a: np.diagonal(a, -1, -2, -1), wellcond),
    ("matrix_norm", lambda a: LA.matrix_norm(a, ord=1), lambda a: np.linalg.matrix_norm(a, ord=1), wellcond),
    ("matrix_power", lambda a: LA.matrix_power(a, -2), lambda a: np.linalg.matrix_power(a, -2), wellcond),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,ff,fn,make", JIT_OPS, ids=[o[0] for o in JIT_OPS])
def test_jit(name, ff, fn, make, dtype):
    r = rng(10)
    f = frit.jit(ff)
    for shape in [(2, 4, 4), (5, 4, 4), (3, 6, 6)]:
        a = make(r, shape, dtype)
        close(f(frit.asarray(a)), fn(a), dtype, 10)


def test_jit_svd_qr_shapes():
    r = rng(11)
    f = frit.jit(lambda a: LA.svd(a, full_matrices=False))
    g = frit.jit(lambda a: LA.qr(a))
    for shape in [(2, 5, 3), (4, 5, 3)]:
        a = r.standard_normal(shape)
        u, s, vh = (np.asarray(x) for x in f(frit.asarray(a)))
        close((u * s[..., None, :]) @ vh, a, "float64", 10)
        q, rr = (np.asarray(x) for x in g(frit.asarray(a)))
        close(q @ rr, a, "float64", 10)


def test_one_kernel_per_factorisation():
    a = frit.asarray(spd(rng(12), (3, 4, 4), "float64"))
    for fn, name in ((lambda x: LA.cholesky(x), "linalg_cholesky"),
                     (lambda x: LA.eigh(x), "linalg_eigh"),
                     (lambda x: LA.svd(x), "linalg_svd")):
        ks = frit.jit(fn).lower(a).kernels
        assert sum(name in k.name for k in ks) == 1, ks


# ---------------------------------------------------------------- bad input

def test_errors():
    sq = frit.asarray(np.ones((2, 3, 4)))
    for fn in (LA.inv, LA.det, LA.cholesky, LA.eigh, LA.eigvalsh, lambda x: LA.slogdet(x),
               lambda x: LA.solve(x, x)):
        with pytest.raises(LA.LinAlgError, match=r"square \(shape \(2, 3, 4\), dtype float64"):
            fn(sq)
    for fn in (LA.inv, LA.det, LA.svd, LA.qr, LA.cholesky, LA.svdvals, LA.pinv, LA.matrix_norm):
        with pytest.raises(LA.LinAlgError, match="two-dimensional"):
            fn(frit.asarray(np.ones(3)))
    # symbolic dims that differ get the C check (op, shapes, dtypes)
    f = frit.jit(lambda x: LA.inv(x))
    with pytest.raises(frit.FritError, match=r"linalg.inv.*square"):
        f(frit.asarray(np.ones((3, 4))))
    h = np.eye(2, dtype=np.float16)
    for fn in (LA.inv, LA.det, LA.cholesky, LA.eigvalsh, LA.svdvals, LA.qr, LA.pinv,
               lambda x: LA.solve(x, x), lambda x: LA.matrix_power(x, -1)):
        with pytest.raises(TypeError):
            fn(h)
        with pytest.raises(frit.FritTypeError, match="float16"):
            fn(frit.asarray(h))
    np.testing.assert_allclose(np.asarray(LA.norm(frit.asarray(h))), np.linalg.norm(h))
    with pytest.raises(frit.FritError, match="linalg.solve"):
        LA.solve(frit.asarray(np.eye(3)), frit.asarray(np.ones((4, 2))))
    with pytest.raises(frit.FritError, match="broadcast"):
        LA.solve(frit.asarray(np.ones((2, 3, 3))), frit.asarray(np.ones((4, 3, 1))))
    with pytest.raises(frit.FritError, match="mode"):
        LA.qr(frit.asarray(np.eye(2)), mode="full")
    with pytest.raises(frit.FritError, match="UPLO"):
        LA.eigh(frit.asarray(np.eye(2)), UPLO="X")
    with pytest.raises(frit.FritError, match="cross"):
        LA.cross(frit.asarray(np.ones(2)), frit.asarray(np.ones(2)))
    with pytest.raises(frit.FritError, match="norm order"):
        LA.matrix_norm(frit.asarray(np.eye(2)), ord=3)
    with pytest.raises(frit.FritTypeError):
        LA.matrix_power(frit.asarray(np.eye(2)), 1.5)


def test_empty_and_strided():
    """0x0 matrices, an empty batch, transposed and reversed views."""
    e0, b0 = np.zeros((0, 0)), np.zeros((0, 3, 3))
    a = wellcond(rng(14), (4, 4), "float64")
    P = []
    for x in (e0, b0):
        fx = frit.asarray(x)
        P += [(LA.inv(fx), np.linalg.inv(x)), (LA.det(fx), np.linalg.det(x)),
              (LA.slogdet(fx)[1], np.linalg.slogdet(x)[1]), (LA.eigvalsh(fx), np.linalg.eigvalsh(x)),
              (LA.svdvals(fx), np.linalg.svdvals(x)), (LA.qr(fx)[1], np.linalg.qr(x)[1]),
              (LA.matrix_norm(fx, ord=2), np.linalg.matrix_norm(x, ord=2)),
              (LA.cholesky(fx), np.linalg.cholesky(x))]
    for v in (a.T, a[::-1, ::-1], np.asfortranarray(a)):
        fv = frit.asarray(v)
        P += [(LA.inv(fv), np.linalg.inv(v)), (LA.svdvals(fv), np.linalg.svdvals(v)),
              (LA.solve(fv, fv), np.eye(4))]
    check_all(P, "float64")


def test_in_host_loop():
    """The unshifted QR algorithm as a frit host loop: qr's two outputs share one kernel per
    iteration; the diagonal converges to the eigenvalues (eager and jit)."""
    a = sym(rng(15), (4, 4), "float64")

    def qr_algorithm(x):
        with frit.loop(0, 300):
            q, r = LA.qr(x)
            x[...] = r @ q
        return x

    want = np.linalg.eigvalsh(a)
    for f in (qr_algorithm, frit.jit(qr_algorithm)):
        got = np.sort(np.diag(np.asarray(f(frit.asarray(a)))))
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_kernels_index_in_range():
    """Under bounds='check' an out-of-range index in an explicit kernel is a run-time error: the
    factorisation kernels never make one (empty, 1x1, square, tall, wide)."""
    r = rng(16)
    ops = [lambda x: LA.solve(x, x[..., :1]), lambda x: LA.qr(x, mode="complete"),
           lambda x: LA.eigh(x), lambda x: LA.svd(x), lambda x: LA.slogdet(x)]
    for k, fn in enumerate(ops):
        f = frit.jit(fn, bounds="check")
        for shape in [(2, 1, 1), (0, 3, 3), (2, 4, 4), (4, 2), (2, 5)]:
            if shape[-1] != shape[-2] and k in (0, 2, 4):
                continue
            a = r.standard_normal(shape) + (4 * np.eye(shape[-1]) if shape[-1] == shape[-2] else 0)
            f(frit.asarray(a))  # raises if a kernel indexed out of range
