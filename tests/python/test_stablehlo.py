"""StableHLO import (src/import/stablehlo): programs lowered by jax itself, in the pretty and the
generic form, imported with frit.import_stablehlo and run eagerly and under frit.jit; jax's own
results are the oracle. Also the errors (line and column), the weights, gradients through an
imported model, and the CLI."""
import os
import subprocess
import sys

import numpy as np
import pytest

import frit

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
from jax import lax  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.path.join(ROOT, "build", "frit")


def lower(f, *args, generic=False):
    low = jax.jit(f).lower(*args)
    if generic:
        return low.compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True)
    return low.as_text()


def _np(x):
    x = np.asarray(x)
    return x.astype(np.float32) if x.dtype == jnp.bfloat16 else x


def check(f, args, rtol=3e-5, atol=1e-6, generic=False, modes=("eager", "jit")):
    """Imports f's StableHLO, runs it in each mode, compares every output with jax's."""
    want = jax.tree_util.tree_leaves(jax.jit(f)(*args))
    m = frit.import_stablehlo(lower(f, *args, generic=generic))
    args = jax.tree_util.tree_leaves(args)  # the lowered main takes the leaves of the pytrees
    for mode in modes:
        if mode == "eager":
            got = m(*args)
        else:
            got = frit.jit(lambda *a: m(*a))(*args)
        got = got if isinstance(got, tuple) else (got,)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            g, w = _np(g), _np(w)
            assert g.shape == w.shape and g.dtype == w.dtype, (mode, g.shape, g.dtype, w.shape, w.dtype)
            if w.dtype.kind in "biu":
                np.testing.assert_array_equal(g, w, err_msg=mode)
            else:
                np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=mode)
    return m


RNG = np.random.default_rng(7)


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def randint(lo, hi, *shape, dtype=np.int32):
    return RNG.integers(lo, hi, shape).astype(dtype)


# ---------------------------------------------------------------- elementwise
UNARY = {
    "abs": jnp.abs, "neg": jnp.negative, "exp": jnp.exp, "expm1": jnp.expm1, "tanh": jnp.tanh,
    "sin": jnp.sin, "cos": jnp.cos, "floor": jnp.floor, "ceil": jnp.ceil, "sign": jnp.sign,
    "round_even": jnp.round, "round_afz": lambda x: lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO),
    "sigmoid": jax.nn.sigmoid, "isfinite": jnp.isfinite, "tan": jnp.tan, "cbrt": jnp.cbrt,
    "sqrt": lambda x: jnp.sqrt(jnp.abs(x)), "rsqrt": lambda x: lax.rsqrt(jnp.abs(x) + 0.5),
    "log": lambda x: jnp.log(jnp.abs(x) + 0.1), "log1p": lambda x: jnp.log1p(jnp.abs(x)),
    "erf": jax.scipy.special.erf, "atan2": lambda x: jnp.arctan2(x, x[::-1]),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary(name, dtype):
    x = randn(4, 5, dtype=dtype) * 2
    x[0, :3] = [0.5, -2.5, 1.5]  # halves: the two roundings differ
    with jax.enable_x64(bool(dtype == np.float64)):
        check(UNARY[name], [x], rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-6)


BINARY_F = {"add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply, "div": jnp.divide,
            "max": jnp.maximum, "min": jnp.minimum, "pow": lambda a, b: jnp.abs(a) ** b,
            "rem": lax.rem, "lt": jnp.less, "ge": jnp.greater_equal, "eq": jnp.equal}
BINARY_I = {"add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply, "div": lax.div,
            "floordiv": jnp.floor_divide, "rem": lax.rem, "max": jnp.maximum, "min": jnp.minimum,
            "and": jnp.bitwise_and, "or": jnp.bitwise_or, "xor": jnp.bitwise_xor,
            "shl": lax.shift_left, "shr_logical": lax.shift_right_logical,
            "shr_arith": lax.shift_right_arithmetic, "ne": jnp.not_equal, "gt": jnp.greater}


@pytest.mark.parametrize("name", sorted(BINARY_F))
def test_binary_float(name):
    a, b = randn(3, 4), randn(3, 4)
    b[0, 0] = a[0, 0]
    check(BINARY_F[name], [a, b], rtol=2e-5)


@pytest.mark.parametrize("name", sorted(BINARY_I))
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint8, np.uint32])
def test_binary_int(name, dtype):
    info = np.iinfo(dtype)
    a = randint(max(info.min, -100), min(info.max, 100), 5, 6, dtype=dtype)
    b = randint(max(info.min, -7), 8, 5, 6, dtype=dtype)
    if name.startswith("sh"):  # shift amounts past the width are defined in StableHLO
        b = randint(0, info.bits + 3, 5, 6, dtype=dtype)
    b[b == 0] = 3
    b[0, 0] = 0 if name in ("div", "rem") else b[0, 0]  # x / 0 and x % 0 too
    if name in ("div", "rem") and info.min < 0:
        a[0, 1], b[0, 1] = -7, 2  # truncation towards zero
    if name == "floordiv":
        b[0, 0] = 1
    check(BINARY_I[name], [a, b])


def test_bool_logic_and_select_clamp():
    a, b = randn(4, 4) > 0, randn(4, 4) > 0
    x = randn(4, 4)
    check(lambda a, b, x: (a & b, a | ~b, a ^ b, jnp.where(a, x, -x), jnp.clip(x, -0.5, 0.5),
                           lax.clamp(np.float32(-0.2), x, np.float32(0.3))), [a, b, x])


@pytest.mark.parametrize("to", [np.int32, np.uint8, np.float16, np.float32, np.bool_, jnp.bfloat16])
def test_convert(to):
    x = randn(3, 5) * 20
    i = randint(-50, 50, 3, 5)
    check(lambda x, i: (x.astype(to), i.astype(to), (x > 0).astype(to)), [x, i], rtol=1e-2)


def test_bitcast_and_iota():
    x = randn(4, 3)
    check(lambda x: (lax.bitcast_convert_type(x, jnp.int32), lax.bitcast_convert_type(x, jnp.uint32) >> 23,
                     lax.broadcasted_iota(jnp.int32, (3, 4), 1), jnp.arange(7.0)), [x])


# ---------------------------------------------------------------- movement
def test_movement():
    x = randn(4, 6)
    check(lambda x: (x.T, x.reshape(3, 8), x[1:3, ::2], jnp.concatenate([x, x * 2], 1), x[::-1],
                     jnp.pad(x, ((1, 0), (0, 2))), jnp.pad(x, ((0, 1), (2, 0)), constant_values=7.0),
                     lax.pad(x, np.float32(-1), [(1, -1, 1), (-2, 1, 0)]),
                     jnp.broadcast_to(x[:, :1], (4, 6)), jnp.expand_dims(x, 1) + x[None]), [x])


def test_dynamic_slices():
    x = randn(5, 6)
    for k in (0, 2, 9, -3):  # out of range starts are clamped
        check(lambda x, k: (lax.dynamic_slice(x, (k, 1), (2, 3)),
                            lax.dynamic_update_slice(x, jnp.ones((2, 2), jnp.float32), (k, k)),
                            lax.dynamic_index_in_dim(x, k, 1, keepdims=False)), [x, np.int32(k)])


# ---------------------------------------------------------------- reductions and windows
def test_reductions():
    x = randn(4, 5, 6)
    b = x > 0
    check(lambda x, b: (x.sum(), x.sum(axis=(0, 2)), x.max(axis=1), x.min(axis=0), x.prod(axis=2),
                        x.mean(axis=1), jnp.argmax(x, axis=1), jnp.argmin(x.reshape(-1)),
                        b.any(axis=0), b.all(axis=2), jax.nn.logsumexp(x, axis=-1)), [x, b], rtol=1e-4)


def test_cumulative_and_windows():
    x = randn(6, 7)
    check(lambda x: (jnp.cumsum(x, 0), jnp.cumprod(x, 1), lax.cummax(x, axis=1), lax.cummin(x, axis=0),
                     lax.reduce_window(x, 0.0, lax.add, (2, 3), (2, 1), "VALID"),
                     lax.reduce_window(x, -jnp.inf, lax.max, (3, 3), (1, 2), "SAME"),
                     lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 1), "VALID", window_dilation=(2, 1))),
          [x], rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- contractions
def test_dot_general():
    a, b = randn(2, 3, 4, 5), randn(2, 5, 4, 6)
    m, v = randn(7, 5), randn(5)
    check(lambda a, b, m, v: (jnp.einsum("bijk,bkjl->bil", a, b), m @ v, v @ m.T, jnp.einsum("ij,ij->i", m, m),
                              jnp.outer(v, v), jnp.tensordot(a, b, axes=([0, 3], [0, 1]))),
          [a, b, m, v], rtol=1e-4, atol=1e-4)


def _mlp_loss(params, x, y):
    (w1, b1), (w2, b2) = params
    h = jax.nn.relu(x @ w1 + b1)
    logits = h @ w2 + b2
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(y, 10), axis=1))


def test_mlp_forward_and_grad():
    params = [(randn(16, 32) * 0.3, randn(32) * 0.1), (randn(32, 10) * 0.3, randn(10) * 0.1)]
    x, y = randn(8, 16), randint(0, 10, 8)
    check(lambda p, x, y: _mlp_loss(p, x, y), [params, x, y], rtol=1e-4, atol=1e-5)
    check(jax.value_and_grad(_mlp_loss), [params, x, y], rtol=1e-4, atol=1e-5)


def _cnn(p, x):
    w1, w2, wd = p
    y = lax.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    y = jax.nn.relu(y)
    y = lax.reduce_window(y, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    y = lax.conv_general_dilated(y, w2, (2, 2), ((1, 0), (0, 1)), dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                 rhs_dilation=(1, 1))
    y = jax.nn.gelu(y)
    y = lax.reduce_window(y, 0.0, lax.add, (1, 2, 2, 1), (1, 1, 1, 1), "VALID") / 4
    return y.reshape(y.shape[0], -1) @ wd


def test_cnn_forward_and_grad():
    p = [randn(3, 3, 2, 4) * 0.3, randn(3, 3, 4, 6) * 0.2, randn(6, 3) * 0.3]
    x = randn(2, 8, 8, 2)
    check(_cnn, [p, x], rtol=1e-4, atol=1e-4)
    # the gradient: convolutions with lhs dilation, window reversal and swapped features
    check(jax.grad(lambda p, x: jnp.sum(_cnn(p, x) ** 2)), [p, x], rtol=2e-3, atol=2e-4)


def test_conv_1d_grouped_nchw():
    x, w = randn(2, 4, 9), randn(6, 2, 3)
    check(lambda x, w: lax.conv_general_dilated(x, w, (2,), [(1, 1)], rhs_dilation=(2,), feature_group_count=2),
          [x, w], rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------- control flow
def test_scan_while_fori_cond():
    xs = randn(6, 3)

    def f(xs, n):
        c, ys = lax.scan(lambda c, x: (c * 0.9 + x, jnp.sin(c).sum()), jnp.zeros(3), xs)
        w = lax.while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, s[1] * 1.5 + 1), (0, 0.5))
        fo = lax.fori_loop(0, 4, lambda i, v: v + i * v[::-1], xs[0])
        cd = lax.cond(n > 3, lambda v: v * 2, lambda v: v - 1, xs)
        sw = lax.switch(n % 3, [lambda v: v + 1, lambda v: v * v, lambda v: -v], xs[1])
        return c, ys, w, fo, cd, sw

    for n in (0, 2, 5):
        check(f, [xs, np.int32(n)], rtol=1e-5)


# ---------------------------------------------------------------- gather, scatter, sort
def test_gather_scatter():
    x = randn(6, 4)
    i = np.array([0, 5, 2, 2, -1, 9], np.int32)  # negative and too large: jax wraps and clamps
    j = np.array([[1, 3], [0, 0]], np.int32)
    u = randn(6, 4)

    def f(x, i, j, u):
        return (x[i], x[:, j], x[i[:2], j[0]], jnp.take_along_axis(x, jnp.argsort(x, axis=0), axis=0),
                x.at[i].set(u), x.at[i].add(u), x.at[i].max(u), x.at[i].min(u), x.at[:, 1].mul(2.0),
                x.at[j[0], 1].set(5.0), x.at[10].set(1.0, mode="drop"))

    check(f, [x, i, j, u])


def test_sort():
    x = randn(5, 8)
    x[0, :3] = [1.0, 1.0, -0.0]
    k = randint(0, 4, 5, 8)

    def f(x, k):
        return (jnp.sort(x, axis=1), jnp.argsort(x, axis=0), jnp.sort(k, axis=0), lax.sort((k, x), num_keys=1),
                jnp.argsort(x, axis=1, descending=True), lax.top_k(x, 3))

    check(f, [x, k])


def test_nbody_step():
    pos, vel, mass = randn(64, 3), randn(64, 3) * 0.1, np.abs(randn(64)) + 0.5

    def step(pos, vel, mass, dt=0.01, eps=0.1):
        d = pos[None, :, :] - pos[:, None, :]
        r2 = jnp.sum(d * d, axis=-1) + eps * eps
        acc = jnp.sum(d * (mass[None, :, None] * r2[..., None] ** -1.5), axis=1)
        vel = vel + dt * acc
        return pos + dt * vel, vel

    check(step, [pos, vel, mass], rtol=1e-4, atol=1e-5)
    check(jax.jit(lambda p, v, m: lax.fori_loop(0, 3, lambda _, s: step(s[0], s[1], m), (p, v))),
          [pos, vel, mass], rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- the generic form
GENERIC = {
    "mlp": (lambda p, x, y: jax.value_and_grad(_mlp_loss)(p, x, y),
            lambda: [[(randn(16, 32), randn(32)), (randn(32, 10), randn(10))], randn(8, 16), randint(0, 10, 8)]),
    "cnn": (_cnn, lambda: [[randn(3, 3, 2, 4), randn(3, 3, 4, 6), randn(6, 3)], randn(2, 8, 8, 2)]),
    "control": (lambda x: (lax.scan(lambda c, v: (c + v, c), 0.0, x), lax.cond(x[0] > 0, jnp.sin, jnp.cos, x)),
                lambda: [randn(5)]),
    "gather_sort": (lambda x, i: (x[i], x.at[i].add(1.0), jnp.sort(x), jnp.argmax(x)),
                    lambda: [randn(7), np.array([1, 6, 1], np.int32)]),
}


@pytest.mark.parametrize("name", sorted(GENERIC))
def test_generic_form(name):
    f, args = GENERIC[name]
    check(f, args(), generic=True, rtol=2e-4, atol=1e-4, modes=("eager",))


# ---------------------------------------------------------------- constants and weights
def test_constants_become_weights():
    table = np.linspace(-1, 1, 12).astype(np.float32).reshape(3, 4)
    ints = np.array([3, 1, 4, 1, 5], np.int32)

    def f(x):
        return x @ table + jnp.float32(0.5), jnp.asarray(ints)[::-1] * 2, jnp.asarray(table.astype(jnp.bfloat16))

    m = check(f, [randn(2, 3)], rtol=1e-5)
    assert len(m.weights) >= 2
    assert (3, 4) in [w.shape for w in m.weights.values()]


def test_signature_and_text():
    m = frit.import_stablehlo(lower(lambda a, b: (a + 1, b.sum()), randn(2, 3), randint(0, 3, 4)))
    assert [(v.dtype, v.shape) for v in m.inputs] == [(frit.float32, (2, 3)), (frit.int32, (4,))]
    assert [(v.dtype, v.shape) for v in m.outputs] == [(frit.float32, (2, 3)), (frit.int32, ())]
    assert "stablehlo.add" in m.text() and "(the model)" in m.text()


# ---------------------------------------------------------------- composing with frit
def test_jit_and_grad_through_imported_model():
    params = [(randn(16, 32) * 0.3, randn(32) * 0.1), (randn(32, 10) * 0.3, randn(10) * 0.1)]
    x, y = randn(8, 16), randint(0, 10, 8)
    m = frit.import_stablehlo(lower(_mlp_loss, params, x, y))
    flat = [params[0][0], params[0][1], params[1][0], params[1][1]]
    g = frit.grad(lambda w1, b1, w2, b2: m(w1, b1, w2, b2, x, y), argnums=(0, 1, 2, 3))(*flat)
    want = jax.tree_util.tree_leaves(jax.grad(_mlp_loss)(params, x, y))
    for a, b in zip(g, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- bad input
def _error(text):
    with pytest.raises(frit.FritError) as e:
        frit.import_stablehlo(text)(np.zeros(2, np.float32))
    return str(e.value)


def test_errors_name_line_and_column():
    ok = lower(lambda x: jnp.sin(x) + 1, np.zeros(2, np.float32))
    assert "line" in _error(ok.replace("stablehlo.sine", "stablehlo.frobnicate")) and "frobnicate" in \
        _error(ok.replace("stablehlo.sine", "stablehlo.frobnicate"))
    bad = ok.replace("%0 =", "%zz =", 1)  # its uses now name an undefined value
    use_line = next(n for n, l in enumerate(bad.split("\n"), 1) if "%0" in l)
    msg = _error(bad)
    assert "line %d, column" % use_line in msg and "undefined value %0" in msg, msg
    msg = _error(ok[: len(ok) // 2])
    assert "stablehlo" in msg
    assert "custom_call @foo" in _error(
        "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %0 = stablehlo.custom_call @foo(%a) : (tensor<2xf32>) -> tensor<2xf32>\n"
        "  return %0 : tensor<2xf32>\n}\n")
    with pytest.raises(frit.FritError, match="arguments"):
        frit.import_stablehlo(ok)(np.zeros(2, np.float32), np.zeros(2, np.float32))
    with pytest.raises(frit.FritError, match="int32"):
        frit.import_stablehlo(ok)(np.zeros(2, np.int32))


def test_mangled_text_never_crashes():
    """A fast fuzz pass: truncations and byte changes of real modules give errors, never crashes."""
    texts = [lower(_cnn, [randn(3, 3, 2, 4), randn(3, 3, 4, 6), randn(6, 3)], randn(2, 8, 8, 2)),
             lower(lambda x: lax.scan(lambda c, v: (c + v, c), 0.0, x), randn(5), generic=True)]
    rng = np.random.default_rng(3)
    junk = list("%@#<>{}()[],:=\"x0-^ \n") + ["tensor<", "dense<", "stablehlo.", "0x"]
    for t in texts:
        for trial in range(150):
            s = list(t)
            if trial % 3 == 0:
                s = s[: rng.integers(0, len(s))]
            for _ in range(rng.integers(1, 4)):
                k = rng.integers(0, max(1, len(s)))
                if trial % 3 == 1 and s:
                    del s[k]
                else:
                    s.insert(k, junk[rng.integers(0, len(junk))])
            try:
                frit.import_stablehlo("".join(s))
            except frit.FritError:
                pass


# ---------------------------------------------------------------- the CLI
def test_cli_import(tmp_path):
    p = tmp_path / "m.mlir"
    p.write_text(lower(lambda x: jnp.tanh(x) @ x.T, randn(3, 4)))
    r = subprocess.run([CLI, "import", str(p), "--print"], capture_output=True, text=True)
    assert r.returncode == 0 and "stablehlo.dot_general" in r.stdout and "input 0 arg0: f32[3, 4]" in r.stdout
    r = subprocess.run([CLI, "import", str(p), "--graph"], capture_output=True, text=True)
    assert r.returncode == 0 and "tanh" in r.stdout.lower()
    p.write_text("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %b : tensor<2xf32>\n}\n")
    r = subprocess.run([CLI, "import", str(p)], capture_output=True, text=True)
    assert r.returncode == 2 and "line 2, column" in r.stderr and "%b" in r.stderr


def test_max_pool_gradient_select_and_scatter():
    x = randn(2, 7, 6, 3)
    x[0, 0, :2, 0] = 1.0  # a tie: the first element of the window is picked

    def f(x):
        y = lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
        return jnp.sum(y * jnp.arange(y.size, dtype=jnp.float32).reshape(y.shape))

    check(jax.grad(f), [x], rtol=1e-5)


def test_complex_literal_arrays_are_refused():
    """Weights hold real storage: a complex literal array is an error, not wrong imaginary parts."""
    text = ("func.func @main(%a: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {\n"
            "  %c = stablehlo.constant dense<[(1.0, 2.0), (3.0, -4.0)]> : tensor<2xcomplex<f32>>\n"
            "  %0 = stablehlo.add %a, %c : tensor<2xcomplex<f32>>\n"
            "  return %0 : tensor<2xcomplex<f32>>\n}\n")
    with pytest.raises(frit.FritError, match="line 2, column 3: complex literal arrays"):
        frit.import_stablehlo(text)
