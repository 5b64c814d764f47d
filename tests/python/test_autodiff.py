"""frit.grad / value_and_grad / vjp / jvp / stop_gradient: the API around the C autodiff (argnums,
pytrees, has_aux, grad of grad, Hessian-vector products, errors), checked against finite
differences and closed forms. Per-op gradients are checked by test_grad_matrix.py."""
import numpy as np
import pytest

import frit


def fd_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        hi, lo = x.copy(), x.copy()
        hi[i] += eps
        lo[i] -= eps
        g[i] = (f(hi) - f(lo)) / (2 * eps)
    return g


rng = np.random.default_rng(0)


def test_grad_matches_finite_differences_mlp():
    W1, b1 = rng.standard_normal((4, 8)), rng.standard_normal(8)
    W2 = rng.standard_normal((8, 3))
    X, y = rng.standard_normal((16, 4)), rng.integers(0, 3, 16)

    def loss(W1, b1, W2, xp):
        h = xp.tanh(X @ W1 + b1)
        z = h @ W2
        z = z - xp.max(z, axis=1, keepdims=True)
        logp = z - xp.log(xp.sum(xp.exp(z), axis=1, keepdims=True))
        return -xp.mean(xp.take_along_axis(logp, y[:, None], axis=1))

    g = frit.grad(lambda a, b, c: loss(a, b, c, frit), argnums=(0, 1, 2))(W1, b1, W2)
    want = [fd_grad(lambda v: loss(v, b1, W2, np), W1), fd_grad(lambda v: loss(W1, v, W2, np), b1),
            fd_grad(lambda v: loss(W1, b1, v, np), W2)]
    for got, w in zip(g, want):
        np.testing.assert_allclose(np.asarray(got), w, rtol=1e-5, atol=1e-8)


def test_value_and_grad_has_aux_and_pytrees():
    params = {"w": rng.standard_normal(5), "b": np.float64(0.5) + np.zeros(())}
    x = rng.standard_normal((7, 5))

    def f(p, x):
        r = x @ p["w"] + p["b"]
        return frit.sum(r * r), r

    (val, aux), g = frit.value_and_grad(f, has_aux=True)(params, x)
    r = x @ params["w"] + params["b"]
    np.testing.assert_allclose(float(val), np.sum(r * r), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(aux), r, rtol=1e-12)
    assert set(g) == {"w", "b"}
    np.testing.assert_allclose(np.asarray(g["w"]), 2 * x.T @ r, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(g["b"]), 2 * np.sum(r), rtol=1e-10)


def test_grad_of_grad_and_hessian_vector_product():
    # d2/dx2 of x^3 sin(x)
    f = lambda x: x ** 3 * frit.sin(x)  # noqa: E731
    x = 0.7
    d2 = frit.grad(frit.grad(f))(x)
    want = 6 * x * np.sin(x) + 6 * x ** 2 * np.cos(x) - x ** 3 * np.sin(x)
    np.testing.assert_allclose(float(d2), want, rtol=1e-12)
    # Hessian-vector product of sum(exp(A x)) as grad of <grad f, v>
    A = rng.standard_normal((4, 3))
    x, v = rng.standard_normal(3), rng.standard_normal(3)
    g = frit.grad(lambda x: frit.sum(frit.exp(A @ x)))
    hvp = frit.grad(lambda x: frit.sum(g(x) * v))(x)
    H = A.T @ np.diag(np.exp(A @ x)) @ A
    np.testing.assert_allclose(np.asarray(hvp), H @ v, rtol=1e-10)


def test_vjp_and_jvp():
    A = rng.standard_normal((3, 4))
    x = rng.standard_normal(4)
    f = lambda x: frit.tanh(A @ x)  # noqa: E731
    out, back = frit.vjp(f, x)
    np.testing.assert_allclose(np.asarray(out), np.tanh(A @ x), rtol=1e-12)
    J = (1 - np.tanh(A @ x) ** 2)[:, None] * A
    ct = rng.standard_normal(3)
    (gx,) = back(ct)
    np.testing.assert_allclose(np.asarray(gx), J.T @ ct, rtol=1e-10)
    t = rng.standard_normal(4)
    out2, tan = frit.jvp(f, (x,), (t,))
    np.testing.assert_allclose(np.asarray(out2), np.tanh(A @ x), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(tan), J @ t, rtol=1e-10)


def test_stop_gradient():
    x = rng.standard_normal(5)
    g = frit.grad(lambda x: frit.sum(x * frit.stop_gradient(x)))(x)
    np.testing.assert_allclose(np.asarray(g), x, rtol=1e-12)  # not 2x
    np.testing.assert_allclose(np.asarray(frit.stop_gradient(frit.asarray(x))), x)


def test_grad_inside_jit_is_one_program_and_float32():
    x = rng.standard_normal((6, 4)).astype(np.float32)
    w = rng.standard_normal(4).astype(np.float32)

    @frit.jit
    def step(w, x):
        loss, g = frit.value_and_grad(lambda w: frit.mean((x @ w) ** 2))(w)
        return loss, w - 0.1 * g

    loss, w2 = step(w, x)
    r = x @ w
    assert np.asarray(w2).dtype == np.float32
    np.testing.assert_allclose(float(loss), np.mean(r ** 2), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(w2), w - 0.1 * (2 * x.T @ r / 6), rtol=1e-5)
    assert step.compile_count == 1


def test_unused_argument_gets_zeros_and_max_ties_split():
    x, y = rng.standard_normal(3), rng.standard_normal(2)
    gx, gy = frit.grad(lambda x, y: frit.sum(x * x), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(np.asarray(gy), np.zeros(2))
    # max over ties shares the gradient equally (documented convention)
    g = frit.grad(lambda v: frit.max(v))(np.array([1.0, 3.0, 3.0]))
    np.testing.assert_allclose(np.asarray(g), [0, 0.5, 0.5])
    g = frit.grad(lambda v: frit.sum(frit.maximum(v, 1.0)))(np.array([1.0, 2.0, 0.0]))
    np.testing.assert_allclose(np.asarray(g), [0.5, 1.0, 0.0])


def test_gradients_of_scatter_and_gather():
    x = rng.standard_normal(5)
    idx = np.array([0, 2, 2, 4])
    w = rng.standard_normal(4)
    # gather: repeated indices accumulate
    g = frit.grad(lambda x: frit.sum(x[idx] * w))(x)
    want = np.zeros(5)
    np.add.at(want, idx, w)
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-12)
    # .at[].set: the overwritten rows get no gradient, the last write of a row takes it
    u = rng.standard_normal(4)
    wx = rng.standard_normal(5)
    gx, gu = frit.grad(lambda x, u: frit.sum(x.at[idx].set(u) * wx), argnums=(0, 1))(x, u)
    np.testing.assert_allclose(np.asarray(gx), wx * np.isin(np.arange(5), idx, invert=True))
    np.testing.assert_allclose(np.asarray(gu), [wx[0], 0, wx[2], wx[4]])
    gx, gu = frit.grad(lambda x, u: frit.sum(x.at[idx].add(u) * wx), argnums=(0, 1))(x, u)
    np.testing.assert_allclose(np.asarray(gx), wx)
    np.testing.assert_allclose(np.asarray(gu), wx[idx])


def test_errors_name_function_and_argument():
    x = rng.standard_normal(3)
    with pytest.raises(TypeError, match="grad: the function must return a scalar"):
        frit.grad(lambda x: x * 2)(x)
    with pytest.raises(TypeError, match="argument 0 has shape \\(3,\\) int64"):
        frit.grad(lambda x: frit.sum(x))(np.arange(3))
    with pytest.raises(TypeError, match="argnums 2 out of range"):
        frit.grad(lambda x: frit.sum(x), argnums=2)(x)
    with pytest.raises(TypeError, match="has_aux=True needs"):
        frit.grad(lambda x: frit.sum(x), has_aux=True)(x)


def test_explicit_kernels_refuse_instead_of_zero():
    x = rng.standard_normal(4)

    def f(x):
        y = frit.zeros(4)
        with frit.kernel(4) as i:
            y[i] = x[i] * 2.0
        return frit.sum(y)

    with pytest.raises(frit.FritError, match="through an explicit kernel"):
        frit.grad(f)(x)


@pytest.mark.parametrize("stride,padding,dilation", [(1, 0, 1), (2, 1, 1), (3, 4, 1), (1, 2, 2), ((2, 1), (0, 3), (1, 2))])
def test_conv2d_gradient_rule_geometries(stride, padding, dilation):
    # the conv rule (two convolutions) against finite differences of a numpy convolution
    x = rng.standard_normal((2, 3, 7, 8))
    w = rng.standard_normal((4, 3, 3, 2))
    s = (stride, stride) if isinstance(stride, int) else stride
    p = (padding, padding) if isinstance(padding, int) else padding
    d = (dilation, dilation) if isinstance(dilation, int) else dilation

    def np_conv(x, w):
        xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
        oh = (xp.shape[2] - d[0] * (w.shape[2] - 1) - 1) // s[0] + 1
        ow = (xp.shape[3] - d[1] * (w.shape[3] - 1) - 1) // s[1] + 1
        out = np.zeros((x.shape[0], w.shape[0], oh, ow))
        for i in range(w.shape[2]):
            for j in range(w.shape[3]):
                patch = xp[:, :, i * d[0]:i * d[0] + s[0] * (oh - 1) + 1:s[0], j * d[1]:j * d[1] + s[1] * (ow - 1) + 1:s[1]]
                out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
        return out

    wout = rng.standard_normal(np_conv(x, w).shape)
    gx, gw = frit.grad(lambda x, w: frit.sum(frit.conv2d(x, w, stride=stride, padding=padding,
                                                         dilation=dilation) * wout), argnums=(0, 1))(x, w)
    np.testing.assert_allclose(np.asarray(gx), fd_grad(lambda v: np.sum(np_conv(v, w) * wout), x), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(np.asarray(gw), fd_grad(lambda v: np.sum(np_conv(x, v) * wout), w), rtol=1e-5, atol=1e-7)


def test_custom_vjp_replaces_the_gradient_and_composes():
    @frit.custom_vjp
    def clip_gradient(x):
        return x

    clip_gradient.defvjp(lambda x: (x, None), lambda res, g: (frit.clip(g, -0.5, 0.5),))
    x = np.array([1.0, 2.0, 3.0])
    w = np.array([0.1, 1.0, -3.0])
    g = frit.grad(lambda x: frit.sum(clip_gradient(x) * w))(x)
    np.testing.assert_allclose(np.asarray(g), np.clip(w, -0.5, 0.5))
    np.testing.assert_allclose(np.asarray(clip_gradient(x)), x)  # eager: the plain function

    @frit.custom_vjp
    def softplus(x):
        return frit.log(1 + frit.exp(x))

    def fwd(x):
        e = frit.exp(x)
        return frit.log(1 + e), e

    softplus.defvjp(fwd, lambda e, g: (g * e / (1 + e),))
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    np.testing.assert_allclose(np.asarray(frit.grad(lambda x: frit.sum(softplus(x)))(x)), sig(x), rtol=1e-12)
    # the rule's own graph differentiates again
    d2 = frit.grad(frit.grad(lambda t: softplus(t)))(0.3)
    np.testing.assert_allclose(float(d2), sig(0.3) * (1 - sig(0.3)), rtol=1e-12)

    @frit.custom_vjp
    def bad(x):
        return x

    bad.defvjp(lambda x: (x, None), lambda r, g: (g, g))
    with pytest.raises(TypeError, match="bwd returned 2 cotangents for 1 arguments"):
        frit.grad(lambda x: frit.sum(bad(x)))(x)
