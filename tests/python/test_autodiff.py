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
    """Kernels differentiate (tests/python/test_kernel_grad.py); outside the rules they refuse."""
    x = rng.standard_normal(4)

    def f(x):
        y = frit.zeros(2)
        with frit.kernel(4) as i:
            frit.atomic_max(y, i % 2, x[i] * 2.0)
        return frit.sum(y)

    with pytest.raises(frit.FritError, match="frit_vjp through explicit kernel"):
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


@pytest.mark.parametrize("shape,full", [((5, 3), False), ((3, 5), False), ((4, 4), True), ((4, 4), False),
                                        ((2, 5, 3), False), ((5, 3), True), ((3, 5), True)])
def test_svd_singular_vector_gradients(shape, full):
    """U and Vh of svd against finite differences of numpy's svd. The loss weighs the squares
    of the vectors' entries, which do not depend on each pair's sign (the part of U, Vh that is
    not unique). Of a full non-square svd, only the factor without extra columns differentiates."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal(shape)
    m, n = shape[-2:]
    k = min(m, n)
    w_u = rng.standard_normal(shape[:-2] + (m, m if full else k))
    w_v = rng.standard_normal(shape[:-2] + (n if full else k, n))
    use_u, use_v = not (full and m > n), not (full and n > m)

    def loss(xp, x):
        u, s, vh = xp.linalg.svd(x, full_matrices=full)
        r = xp.sum(w_v * vh * vh) if use_v else 0.0
        return r + xp.sum(w_u * u * u) if use_u else r
    got = np.asarray(frit.grad(lambda x: loss(frit, x))(a))
    want = fd_grad(lambda x: loss(np, x), a)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_svd_vectors_of_full_nonsquare_refused_and_pinv_lstsq_differentiate():
    rng = np.random.default_rng(4)
    with pytest.raises(frit.FritError, match="full_matrices=True is not defined for a non-square"):
        frit.grad(lambda x: frit.sum(frit.linalg.svd(x)[0]))(rng.standard_normal((5, 3)))
    for shape in [(5, 3), (3, 5)]:
        a, w = rng.standard_normal(shape), rng.standard_normal(shape[::-1])
        got = np.asarray(frit.grad(lambda x: frit.sum(frit.linalg.pinv(x) * w))(a))
        np.testing.assert_allclose(got, fd_grad(lambda x: np.sum(np.linalg.pinv(x) * w), a), rtol=1e-5, atol=1e-7)
    a, b = rng.standard_normal((6, 3)), rng.standard_normal((6, 2))
    got = np.asarray(frit.grad(lambda x: frit.sum(frit.linalg.lstsq(x, b)[0] ** 2))(a))
    want = fd_grad(lambda x: np.sum(np.linalg.lstsq(x, b)[0] ** 2), a)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


_W8, _W5 = np.random.default_rng(5).standard_normal(8), np.random.default_rng(6).standard_normal(5)
COMPLEX_LOSSES = {
    "fft_power": lambda xp, x: xp.sum(_W8 * xp.abs(xp.fft.fft(x)) ** 2),
    "fft_parts": lambda xp, x: xp.sum(_W8 * xp.real(xp.fft.fft(x)) + _W8 * xp.imag(xp.fft.fft(x)) ** 2),
    "rfft_abs": lambda xp, x: xp.sum(_W5 * xp.abs(xp.fft.rfft(x))),
    "ifft_of_product": lambda xp, x: xp.sum(_W8 * xp.real(xp.fft.ifft(xp.fft.fft(x) * xp.exp(1j * x)))),
    "irfft_rfft": lambda xp, x: xp.sum(_W8 * xp.fft.irfft(xp.fft.rfft(x) * (1 + 2j))),
    "mul_div_exp": lambda xp, x: xp.sum(xp.abs(xp.exp((x + 1j * x[::-1]) * (0.5 - 0.2j)) / (x + 2 + 1j))),
    "sqrt_log_conj_sin": lambda xp, x: xp.sum(xp.real(xp.log(xp.sqrt(x + 3j)) * xp.conj(xp.sin(x * 1j + 1)))),
    "angle": lambda xp, x: xp.sum(xp.angle(x + 1j * _W8)),
}


@pytest.mark.parametrize("name", sorted(COMPLEX_LOSSES))
def test_gradients_through_complex_values_and_fft(name):
    """Real losses of real inputs through complex intermediates (fft, complex arithmetic, parts)
    against finite differences of the same function in numpy."""
    f = COMPLEX_LOSSES[name]
    x = np.random.default_rng(7).standard_normal(8)
    got = np.asarray(frit.grad(lambda a: f(frit, a))(x))
    np.testing.assert_allclose(got, fd_grad(lambda a: f(np, a), x), rtol=1e-5, atol=1e-7)


def test_gradient_of_complex_input_is_d_re_plus_i_d_im():
    rng = np.random.default_rng(8)
    z = rng.standard_normal(6) + 1j * rng.standard_normal(6)
    w = rng.standard_normal(6) + 1j * rng.standard_normal(6)

    def loss(xp, a):
        return xp.sum(xp.abs(a * w + xp.exp(a)) ** 2)
    got = np.asarray(frit.grad(lambda a: loss(frit, a))(z))
    d_re = fd_grad(lambda r: loss(np, r + 1j * z.imag), z.real)
    d_im = fd_grad(lambda i: loss(np, z.real + 1j * i), z.imag)
    np.testing.assert_allclose(got, d_re + 1j * d_im, rtol=1e-5, atol=1e-7)
    with pytest.raises(frit.FritError, match="real float"):  # the output must stay real
        frit.grad(lambda a: frit.sum(a))(z)


def test_jvp_inside_jit_and_forward_over_reverse_hvp():
    rng = np.random.default_rng(9)
    x, v = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))

    def f(a):
        return frit.tanh(a) @ frit.ones((4, 2)) * frit.sum(a ** 2)

    def f_np(a):
        return np.tanh(a) @ np.ones((4, 2)) * np.sum(a ** 2)
    eps = 1e-6
    want = (f_np(x + eps * v) - f_np(x - eps * v)) / (2 * eps)
    got = frit.jit(lambda a, b: frit.jvp(f, (a,), (b,))[1])(x, v)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-8)
    hvp = frit.jit(lambda a, b: frit.jvp(frit.grad(lambda z: frit.sum(frit.sin(z) * z)), (a,), (b,))[1])
    np.testing.assert_allclose(np.asarray(hvp(x, v)), (2 * np.cos(x) - x * np.sin(x)) * v, rtol=1e-10, atol=1e-12)


def test_conv2d_gradient_when_the_weight_is_a_view_of_a_view():
    """The conv rule's inputs stay in the graph even when the conv's own reshape of w folds into
    the reshapes that made w (this failed with an internal error: a rule input not in the graph)."""
    rng = np.random.default_rng(10)
    x, v = rng.standard_normal((2, 3, 8, 8)), rng.standard_normal(4 * 3 * 3 * 3 + 5)

    def loss(xp, vv):
        w = xp.reshape(xp.reshape(vv[5:], (12, 9)), (4, 3, 3, 3))
        if xp is frit:
            out = frit.conv2d(x, w)
        else:
            win = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3))  # (2, 3, 6, 6, 3, 3)
            out = np.einsum("nchwij,ocij->nohw", win, w)
        return xp.sum(out * out)
    got = np.asarray(frit.grad(lambda vv: loss(frit, vv))(v))
    np.testing.assert_allclose(got, fd_grad(lambda vv: loss(np, vv), v), rtol=1e-5, atol=1e-5)
