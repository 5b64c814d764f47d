"""The gradient kernels of a CNN training step (issue 11) against numpy: the matmul gradient of a
packed product (the dense layer), and the max-pool + GELU backward, for the CNN's shapes and odd
ones (sizes off the tile, batch 1, views as operands, other dtypes, symbolic sizes); and that the
hot kernels come out as intended (no div/mod left where the layout should make them strided)."""
import numpy as np
import pytest

import frit

rng = np.random.default_rng(11)


def A(x):
    return np.asarray(x)


def divmods(src):
    return src.count("frit_mod_i64") + src.count("frit_idiv_i64")


# ---------------------------------------------------------------- matmul gradient (packed B)

# (M, K, N): the CNN's dense layer (B packed in panels of 32), its input gradient's product (N =
# 784: panels of 16), sizes off every tile, batch 1 and a small M (B not packed: no rule)
MATMUL_SHAPES = [(128, 784, 128), (64, 128, 784), (68, 72, 80), (64, 200, 96), (1, 784, 128),
                 (8, 96, 64), (132, 70, 112)]


@pytest.mark.parametrize("M,K,N", MATMUL_SHAPES)
@pytest.mark.parametrize("dynamic", [False, True])
def test_matmul_grads_vs_numpy(M, K, N, dynamic):
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    g = rng.standard_normal((M, N)).astype(np.float32)
    f = frit.jit(lambda a, b, g: frit.grad(lambda a, b: frit.sum(frit.tanh(a) @ b * g), argnums=(0, 1))(a, b),
                 dynamic=dynamic)
    ga, gb = f(a, b, g)
    ta = np.tanh(a).astype(np.float64)
    np.testing.assert_allclose(A(ga), (g @ b.T.astype(np.float64)) * (1 - ta ** 2), rtol=2e-4, atol=2e-4)
    np.testing.assert_allclose(A(gb), ta.T @ g, rtol=2e-4, atol=2e-4)


def test_matmul_grads_of_views_reach_their_sources():
    # a is a flatten of a 4-D value, b a transposed view: the product's 3-D operands fold those
    # views away, and the gradients must still reach x and w
    x = rng.standard_normal((64, 16, 7, 7)).astype(np.float32)
    w = rng.standard_normal((128, 784)).astype(np.float32)
    g = rng.standard_normal((64, 128)).astype(np.float32)

    def loss(x, w):
        return frit.sum(frit.reshape(frit.sin(x), (64, 784)) @ frit.transpose(w) * g)

    gx, gw = frit.jit(lambda x, w: frit.grad(loss, argnums=(0, 1))(x, w), dynamic=False)(x, w)
    s = np.sin(x).reshape(64, 784).astype(np.float64)
    np.testing.assert_allclose(A(gx), ((g @ w) * np.cos(x).reshape(64, 784)).reshape(x.shape), rtol=2e-4,
                               atol=2e-4)
    np.testing.assert_allclose(A(gw), (s.T @ g).T, rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("da,db", [("float64", "float64"), ("float16", "float32"), ("float32", "float64")])
def test_matmul_grads_dtypes(da, db):
    M, K, N = 64, 96, 128
    a = (rng.standard_normal((M, K)) * 0.5).astype(da)
    b = (rng.standard_normal((K, N)) * 0.5).astype(db)
    ga, gb = frit.grad(lambda a, b: frit.sum(frit.sin(a @ b)), argnums=(0, 1))(a, b)
    c = np.cos(a.astype(np.float64) @ b.astype(np.float64))
    assert A(ga).dtype == np.dtype(da) and A(gb).dtype == np.dtype(db)
    tol = 3e-2 if "float16" in (da, db) else 1e-4
    np.testing.assert_allclose(A(ga), c @ b.T.astype(np.float64), rtol=tol, atol=tol * 10)
    np.testing.assert_allclose(A(gb), a.T.astype(np.float64) @ c, rtol=tol, atol=tol * 10)


def test_matmul_second_order_vs_numpy():
    # d/da of sum((a @ b)^2) is 2 (a b) b^T; its gradient again (of sum of it times v) is 2 v b b^T
    M, K, N = 64, 96, 128
    a = rng.standard_normal((M, K)).astype(np.float64)
    b = rng.standard_normal((K, N)).astype(np.float64)
    v = rng.standard_normal((M, K)).astype(np.float64)
    inner = frit.grad(lambda a: frit.sum((a @ b) ** 2))
    hv = frit.grad(lambda a: frit.sum(inner(a) * v))(a)
    np.testing.assert_allclose(A(hv), 2 * v @ b @ b.T, rtol=1e-9, atol=1e-8)


def test_dense_input_gradient_is_tiled_not_divmod():
    # the dense layer of the CNN: the gradient w.r.t. its input was a product read from B's
    # panels at (n / 32, k, n % 32), a scalar div/mod loop at 1.4 GFLOP/s
    x = rng.standard_normal((128, 784)).astype(np.float32)
    w = rng.standard_normal((784, 128)).astype(np.float32)
    g = rng.standard_normal((128, 128)).astype(np.float32)
    f = frit.jit(lambda x, w, g: frit.grad(lambda x: frit.sum(x @ w * g))(x), dynamic=False)
    np.testing.assert_allclose(A(f(x, w, g)), g @ w.T, rtol=1e-4, atol=1e-4)
    assert divmods(f.lower(x, w, g).source) == 0
