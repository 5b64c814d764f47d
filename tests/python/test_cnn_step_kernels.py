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


# ---------------------------------------------------------------- max pool + GELU backward

def np_max_pool_grad(x, k, s, pad, g):
    """numpy: d/dx of sum(max_pool2d(x) * g), ties sharing each window's g equally; windows of
    the -inf-padded x, the stride s, floor mode (rows and columns past the last window get 0)."""
    N, C, H, W = x.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)), constant_values=-np.inf)
    OH, OW = (H + 2 * pad - k) // s + 1, (W + 2 * pad - k) // s + 1
    gp = np.zeros_like(xp)
    for i in range(OH):
        for j in range(OW):
            win = xp[:, :, i * s:i * s + k, j * s:j * s + k]
            m = win.max(axis=(2, 3), keepdims=True)
            hit = win == m
            gp[:, :, i * s:i * s + k, j * s:j * s + k] += hit * (g[:, :, i:i + 1, j:j + 1] / hit.sum(axis=(2, 3), keepdims=True))
    return gp[:, :, pad:pad + H, pad:pad + W]


def np_gelu(x):
    from math import erf, sqrt
    return 0.5 * x * (1 + np.vectorize(erf)(x / sqrt(2)))


def np_gelu_grad(x):
    from math import erf, sqrt, pi
    return 0.5 * (1 + np.vectorize(erf)(x / sqrt(2))) + x * np.exp(-x * x / 2) / sqrt(2 * pi)


# (x shape, kernel, stride, padding): the CNN's two pools, sizes the windows do not divide (the
# last row/column gets no gradient), batch 1, 3x3 windows, padding, overlapping windows (stride <
# kernel: the reduction's own rule)
POOLS = [((4, 8, 28, 28), 2, 2, 0), ((3, 16, 14, 14), 2, 2, 0), ((2, 3, 7, 9), 2, 2, 0), ((1, 2, 8, 8), 2, 2, 0),
         ((2, 2, 9, 12), 3, 3, 0), ((2, 3, 8, 10), 2, 2, 1), ((2, 2, 9, 9), 3, 2, 1)]


@pytest.mark.parametrize("mode", ["jit", "eager"])
@pytest.mark.parametrize("shape,k,s,pad", POOLS)
def test_max_pool_gelu_grad_vs_numpy(shape, k, s, pad, mode):
    from frit.nn import functional as F
    x = rng.standard_normal(shape).astype(np.float32)
    p = np.asarray(F.max_pool2d(x, k, s, pad))
    g = rng.standard_normal(p.shape).astype(np.float32)
    f = lambda x, g: frit.grad(lambda x: frit.sum(F.gelu(F.max_pool2d(x, k, s, pad)) * g))(x)  # noqa: E731
    if mode == "jit":
        f = frit.jit(f, dynamic=False)
    want = np_max_pool_grad(x, k, s, pad, g * np_gelu_grad(p.astype(np.float64)))
    np.testing.assert_allclose(A(f(x, g)), want, rtol=1e-5, atol=1e-6)


def test_max_pool_grad_ties_share():
    # small integers: most windows hold ties, which share g equally (the reduction's rule)
    from frit.nn import functional as F
    x = rng.integers(0, 3, (2, 3, 8, 6)).astype(np.float64)
    g = rng.standard_normal((2, 3, 4, 3))
    got = frit.grad(lambda x: frit.sum(F.max_pool2d(x, 2) * g))(x)
    np.testing.assert_allclose(A(got), np_max_pool_grad(x, 2, 2, 0, g), rtol=1e-12, atol=1e-12)


def test_max_pool_second_order():
    # grad of a gradient through the pool: the inner gradient is 2 x at each window's (untied)
    # maximum, 0 elsewhere, so d/dx sum(inner * v) is 2 v at the maxima
    from frit.nn import functional as F
    x = rng.standard_normal((2, 2, 6, 6))
    v = rng.standard_normal(x.shape)
    inner = frit.grad(lambda x: frit.sum(F.max_pool2d(x, 2) ** 2))
    got = frit.grad(lambda x: frit.sum(inner(x) * v))(x)
    hit = np_max_pool_grad(x, 2, 2, 0, np.ones((2, 2, 3, 3)))
    np.testing.assert_allclose(A(got), 2 * hit * v, rtol=1e-10, atol=1e-10)


def test_pool_gelu_backward_has_no_divmod_and_one_gelu_derivative_per_window():
    # the backward of gelu(max_pool2d(x)) read x's windows through div/mod of x's flat index and
    # evaluated GELU's derivative (an erf and an exp) once per window element
    from frit.nn import functional as F
    x = rng.standard_normal((4, 8, 28, 28)).astype(np.float32)
    g = rng.standard_normal((4, 8, 14, 14)).astype(np.float32)
    f = frit.jit(lambda x, g: frit.grad(lambda x: frit.sum(F.gelu(F.max_pool2d(x, 2)) * g))(x), dynamic=False)
    c = f.lower(x, g)
    assert divmods(c.source) == 0
    erf_kernels = [k for k in c.kernels if "erf" in k.ops]
    assert len(erf_kernels) == 1 and erf_kernels[0].launch == "(4)"
    src = c.source
    body = src[src.index("/* kernel %d:" % c.kernels.index(erf_kernels[0])):]
    assert "#pragma omp simd" in body.split("/* kernel")[1]


# ---------------------------------------------------------------- conv2d weight gradient

def np_conv_grads(x, w, g, s, p):
    """numpy: d/dw and d/dx of sum(conv2d(x, w, stride s, padding p) * g), by the taps."""
    N, C, H, W = x.shape
    O, _, KH, KW = w.shape
    OH, OW = g.shape[2:]
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (p, p), (p, p)))
    gw = np.zeros(w.shape)
    gxp = np.zeros(xp.shape)
    for i in range(KH):
        for j in range(KW):
            win = xp[:, :, i:i + s * (OH - 1) + 1:s, j:j + s * (OW - 1) + 1:s]  # (N, C, OH, OW)
            gw[:, :, i, j] = np.einsum("nohw,nchw->oc", g, win)
            gxp[:, :, i:i + s * (OH - 1) + 1:s, j:j + s * (OW - 1) + 1:s] += np.einsum("nohw,oc->nchw", g, w[:, :, i, j])
    return gw, gxp[:, :, p:p + H, p:p + W]


# (x shape, w shape, stride, padding): the CNN's conv2 (the padded GELU shared with the forward),
# conv1, batch 1, odd sizes, stride 2, no padding; batches of 64 and 48, whose weight gradients
# sum over 8 chunks of whole images (nn.c conv_im2col), and an input gradient whose pixel rows
# (7 wide) are padded to whole vectors (grad_rules.c conv_grad_x_col2im); conv1 over 16 images,
# whose weight gradient (25 rows: not a multiple of 4) is chunked too; and three input gradients of
# 16+ channels as one product on the padded g's flat grid (nn.c tn_conv2d_grad_x): odd sizes and
# kernels, rows cut to whole vectors, no padding (the widest flat padding)
CONVS = [((8, 16, 9, 11), (20, 16, 3, 5), 1, 2), ((16, 16, 14, 14), (16, 16, 5, 5), 1, 2),
         ((8, 24, 10, 12), (16, 24, 3, 3), 1, 0), ((8, 8, 14, 14), (16, 8, 5, 5), 1, 2), ((4, 1, 28, 28), (8, 1, 5, 5), 1, 2), ((1, 3, 9, 7), (4, 3, 3, 3), 1, 1),
         ((3, 5, 11, 13), (6, 5, 3, 3), 2, 1), ((2, 4, 10, 10), (5, 4, 3, 3), 1, 0), ((64, 8, 14, 14), (16, 8, 5, 5), 1, 2),
         ((48, 4, 14, 14), (16, 4, 3, 3), 1, 1), ((32, 16, 7, 7), (24, 16, 5, 5), 1, 2), ((16, 1, 28, 28), (8, 1, 5, 5), 1, 2)]


@pytest.mark.parametrize("mode", ["jit", "eager"])
@pytest.mark.parametrize("xs,ws,s,p", CONVS)
def test_conv_grads_after_gelu_vs_numpy(xs, ws, s, p, mode):
    from frit.nn import functional as F
    x = rng.standard_normal(xs).astype(np.float32)
    w = (rng.standard_normal(ws) * 0.3).astype(np.float32)
    out = np.asarray(frit.conv2d(x, w, stride=s, padding=p))
    g = rng.standard_normal(out.shape).astype(np.float32)

    def f(x, w, g):
        return frit.grad(lambda x, w: frit.sum(frit.conv2d(F.gelu(x), w, stride=s, padding=p) * g), argnums=(0, 1))(x, w)
    if mode == "jit":
        f = frit.jit(f, dynamic=False)
    gx, gw = f(x, w, g)
    a = np_gelu(x.astype(np.float64))
    want_w, want_a = np_conv_grads(a, w.astype(np.float64), g.astype(np.float64), s, p)
    np.testing.assert_allclose(A(gw), want_w, rtol=2e-4, atol=2e-4)
    np.testing.assert_allclose(A(gx), want_a * np_gelu_grad(x.astype(np.float64)), rtol=2e-4, atol=2e-4)


def test_conv_weight_gradient_reads_the_forwards_padded_input():
    # the weight gradient padded the swapped input (C, N, H, W) itself: a second copy that
    # computed the GELU before the conv (an erf per element) again
    from frit.nn import functional as F
    x = rng.standard_normal((16, 8, 14, 14)).astype(np.float32)
    w = rng.standard_normal((16, 8, 5, 5)).astype(np.float32)
    g = rng.standard_normal((16, 16, 14, 14)).astype(np.float32)
    f = frit.jit(lambda x, w, g: frit.value_and_grad(lambda w: frit.sum(frit.conv2d(F.gelu(x), w, padding=2) * g))(w),
                 dynamic=False)
    assert sum("erf" in k.ops for k in f.lower(x, w, g).kernels) == 1


@pytest.mark.parametrize("mode", ["jit", "eager"])
def test_conv_forward_and_weight_gradient_share_one_patch_matrix(mode):
    """nn.c conv_channel_rows: a conv of 16+ channels computes (O, pixels) = w @ patches with the
    patches built as the weight gradient builds them (tn_conv2d_weight_grad, no fresh input), so
    a training step materialises one patch matrix, not two; forward and gradient against numpy."""
    from frit.nn import functional as F
    x = rng.standard_normal((8, 8, 14, 14)).astype(np.float32)
    w = (rng.standard_normal((16, 8, 5, 5)) * 0.3).astype(np.float32)
    g = rng.standard_normal((8, 16, 14, 14)).astype(np.float32)

    def f(x, w, g):
        return frit.value_and_grad(lambda w: frit.sum(frit.conv2d(F.gelu(x), w, padding=2) * g))(w)
    jf = frit.jit(f, dynamic=False)
    v, gw = (jf if mode == "jit" else f)(x, w, g)
    a = np_gelu(x.astype(np.float64))
    ap = np.pad(a, ((0, 0), (0, 0), (2, 2), (2, 2)))
    out = sum(np.einsum("nchw,oc->nohw", ap[:, :, i:i + 14, j:j + 14], w[:, :, i, j].astype(np.float64))
              for i in range(5) for j in range(5))
    np.testing.assert_allclose(float(A(v)), float((out * g).sum()), rtol=1e-4)
    want_w, _ = np_conv_grads(a, w.astype(np.float64), g.astype(np.float64), 1, 2)
    np.testing.assert_allclose(A(gw), want_w, rtol=2e-4, atol=2e-4)
    # the patch matrix: 8*25 rows of 8*14*14 pixels, written by exactly one kernel
    ir = jf.lower(x, w, g).ir("kernel").split("\nkernel ")
    outs = [int(m) for k in ir for m in __import__("re").findall(r"define_global param=0 size=(\d+)", k)[:1]]
    assert outs.count(200 * 8 * 196) == 1, outs


def test_dense_input_gradient_into_pool_backward_vs_numpy():
    # the CNN's tail: pool -> GELU -> flatten -> dense. The dense input gradient, fused into the
    # pool's backward as its reduction, read the weight's panels by div/mod untiled: it is
    # realized as a product of its own
    from frit.nn import functional as F
    x = rng.standard_normal((64, 16, 14, 14)).astype(np.float32)
    w = (rng.standard_normal((784, 128)) * 0.05).astype(np.float32)
    g = rng.standard_normal((64, 128)).astype(np.float32)

    def loss(x):
        return frit.sum(frit.reshape(F.gelu(F.max_pool2d(x, 2)), (64, 784)) @ w * g)

    f = frit.jit(lambda x, g: frit.grad(loss)(x), dynamic=False)
    p = np.asarray(F.max_pool2d(x, 2)).astype(np.float64)
    gp = (g.astype(np.float64) @ w.T.astype(np.float64)).reshape(p.shape) * np_gelu_grad(p)
    np.testing.assert_allclose(A(f(x, g)), np_max_pool_grad(x, 2, 2, 0, gp), rtol=1e-4, atol=1e-5)
    assert divmods(f.lower(x, g).source) == 0

