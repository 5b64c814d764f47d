"""Gradients through host loops (frit.loop outside kernels; src/autodiff/loop_vjp.c): each against
the same body written as a Python for-loop (unrolled into the graph, whose gradient needs no loop
rule) and against central finite differences in float64, for several checkpoint intervals."""
import re

import numpy as np
import pytest

import frit

rng = np.random.default_rng(11)
CKPTS = [1, 2, None]  # every iteration, every other one, the default ceil(sqrt(T))


def fd(f, args, argnum, eps=1e-6):
    """Central differences of the float f(*args) (numpy in, float out) w.r.t. args[argnum]."""
    args = [np.array(a, np.float64) for a in args]
    x = args[argnum]
    g = np.zeros_like(x)
    for k in np.ndindex(*x.shape):
        old = x[k]
        x[k] = old + eps
        hi = float(f(*args))
        x[k] = old - eps
        lo = float(f(*args))
        x[k] = old
        g[k] = (hi - lo) / (2 * eps)
    return g


def check(looped, unrolled, args, argnums, ckpt, fd_too=True, rtol=1e-9):
    got = frit.grad(looped, argnums=argnums, loop_checkpoint=ckpt)(*args)
    want = frit.grad(unrolled, argnums=argnums)(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=1e-12)
    if fd_too:
        f = frit.jit(looped)
        for g, k in zip(got, argnums):
            np.testing.assert_allclose(np.asarray(g), fd(f, args, k), rtol=1e-6, atol=1e-7)
    return got


# --------------------------------------------------------------- one and several carries

def body(x, w, i):
    return x * w + frit.sin(x) * 0.1 + i * 0.01


def loop_simple(x, w, T=7):
    x = x.copy()
    with frit.loop(T) as i:
        x[...] = body(x, w, i)
    return frit.sum(x * x)


def unrolled_simple(x, w, T=7):
    for i in range(T):
        x = body(x, w, i)
    return frit.sum(x * x)


@pytest.mark.parametrize("ckpt", CKPTS + [3])  # 3: T = 7 not divisible by n
def test_simple_carry(ckpt):
    x, w = rng.standard_normal(5), rng.uniform(0.5, 1.1, 5)
    check(loop_simple, unrolled_simple, (x, w), (0, 1), ckpt)


def _buffer_rows(g, *args):
    """The leading sizes of the program's 2-D float64 temporaries (..., 5): the checkpoint and
    segment buffers of the reverse pass. (The 5 is a size variable under the default jit; its
    trace fell back to static shapes until whole-array sums of symbolic sizes were cut into whole
    parts and a tail instead of padded.)"""
    plan = g.jitted.lower(*args).ir("plan")
    return sorted(int(r) for r in re.findall(r"temp\s+f64 \((\d+), (?:5|n\d+)\)", plan))


@pytest.mark.parametrize("ckpt,rows", [(1, [7]), (2, [2, 5]), (None, [3, 4]), (7, [7, 2])])
def test_checkpoint_buffers(ckpt, rows):
    # T = 7: n = 1 stores all 7 carries; n = 2: 4 checkpoints + a scratch row, segments of 2;
    # the default n = 3: 3 + 1 rows, segments of 3; n = 7: one checkpoint, one segment of 7
    x, w = rng.standard_normal(5), rng.uniform(0.5, 1.1, 5)
    assert sorted(set(_buffer_rows(frit.grad(loop_simple, argnums=1, loop_checkpoint=ckpt), x, w))) \
        == sorted(rows)


def test_checkpoint_env_and_errors(monkeypatch):
    x, w = rng.standard_normal(5), rng.uniform(0.5, 1.1, 5)
    want = frit.grad(unrolled_simple, argnums=(0, 1))(x, w)
    monkeypatch.setenv("FRIT_LOOP_CHECKPOINT", "4")
    got = frit.grad(loop_simple, argnums=(0, 1))(x, w)
    assert sorted(set(_buffer_rows(frit.grad(loop_simple, argnums=(0, 1)), x, w))) == [3, 4]
    for g, v in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(v), rtol=1e-10)
    with pytest.raises(frit.FritTypeError, match="loop_checkpoint"):
        frit.grad(loop_simple, loop_checkpoint=-1)


def loop_several(p, v, m, T=9):
    p, v = p.copy(), v.copy()
    e = frit.var(0.0, frit.float64)
    with frit.loop(T) as i:
        a = -p * m - 0.1 * v * v
        v[...] = v + 0.1 * a
        p[...] = p + 0.1 * v
        e.set(e.get() + frit.sum(v * v) * frit.cos(i * 0.3))
    return frit.sum(p * p) + frit.sum(v) + e.get()


def unrolled_several(p, v, m, T=9):
    e = 0.0
    for i in range(T):
        a = -p * m - 0.1 * v * v
        v = v + 0.1 * a
        p = p + 0.1 * v
        e = e + frit.sum(v * v) * np.cos(i * 0.3)
    return frit.sum(p * p) + frit.sum(v) + e


@pytest.mark.parametrize("ckpt", CKPTS)
def test_several_carries_and_captured(ckpt):
    p, v, m = rng.standard_normal(4), rng.standard_normal(4), rng.uniform(0.5, 2, 4)
    check(loop_several, unrolled_several, (p, v, m), (0, 1, 2), ckpt)


def test_start_end_step():
    def looped(x, w):
        x = x.copy()
        with frit.loop(10, 1, -3) as i:  # i = 10, 7, 4
            x[...] = x * w + i * 0.1
        return frit.sum(x * x)

    def unrolled(x, w):
        for i in (10, 7, 4):
            x = x * w + i * 0.1
        return frit.sum(x * x)

    x, w = rng.standard_normal(3), rng.uniform(0.5, 1.1, 3)
    for ck in CKPTS:
        check(looped, unrolled, (x, w), (0, 1), ck)


def test_index_reads_and_writes():
    # the loop index used to read rows and to write one (a scatter) in the body
    def looped(x, w):
        acc = frit.zeros((), frit.float64)
        y = x.copy()
        with frit.loop(4) as i:
            acc[...] = acc + frit.sum(y[i] * w[i])
            y[...] = y.at[(i + 1) % 4].set(y[i] * 2.0 + w[i])
        return acc + frit.sum(y * y)

    def unrolled(x, w):
        acc = 0.0
        y = x
        for i in range(4):
            acc = acc + frit.sum(y[i] * w[i])
            y = y.at[(i + 1) % 4].set(y[i] * 2.0 + w[i])
        return acc + frit.sum(y * y)

    x, w = rng.standard_normal((4, 2)), rng.standard_normal((4, 2))
    for ck in CKPTS:
        check(looped, unrolled, (x, w), (0, 1), ck)


# --------------------------------------------------------------- break / stop, conditionals

def loop_break(x, w, T=40):
    x = x.copy()
    n = frit.var(0.0, frit.float64)
    with frit.loop(T):
        x[...] = x * w + 0.05
        n.set(n.get() + 1.0)
        with frit.if_(frit.sum(x * x) > 30.0):
            frit.break_()
        x[...] = x + 0.01  # after the break point: discarded in the breaking iteration
    return frit.sum(x * x) + n.get()


def unrolled_break(x, w, trips):
    n = 0.0
    for t in range(trips):
        x = x * w + 0.05
        n += 1.0
        if t < trips - 1:
            x = x + 0.01
    return frit.sum(x * x) + n


@pytest.mark.parametrize("ckpt", CKPTS + [3])
def test_break_reverses_the_trips_run(ckpt):
    x, w = np.array([0.5, -0.3, 0.8]), np.array([1.3, 1.2, 1.25])
    # the trip count of the reference, in numpy
    xn, trips = x.copy(), 0
    for t in range(40):
        xn = xn * w + 0.05
        trips += 1
        if (xn * xn).sum() > 30.0:
            break
        xn = xn + 0.01
    assert 1 < trips < 40
    check(loop_break, lambda x, w: unrolled_break(x, w, trips), (x, w), (0, 1), ckpt)


def test_conditional_in_body():
    def looped(x, w):
        x = x.copy()
        with frit.loop(8) as i:
            with frit.if_(i % 2 == 0):
                x[...] = x * w
            with frit.else_():
                x[...] = frit.tanh(x) + w
        return frit.sum(x * x)

    def unrolled(x, w):
        for i in range(8):
            x = x * w if i % 2 == 0 else frit.tanh(x) + w
        return frit.sum(x * x)

    x, w = rng.standard_normal(4), rng.uniform(0.5, 1.1, 4)
    for ck in CKPTS:
        check(looped, unrolled, (x, w), (0, 1), ck)


# --------------------------------------------------------------- nested loops, second order

def test_nested_loops():
    def looped(x, w):
        x = x.copy()
        with frit.loop(4) as i:
            y = x * 1.0
            with frit.loop(3) as j:
                y[...] = frit.sin(y) * w + j * 0.1
            x[...] = x + 0.5 * y + i * 0.01
        return frit.sum(x * x)

    def unrolled(x, w):
        for i in range(4):
            y = x
            for j in range(3):
                y = frit.sin(y) * w + j * 0.1
            x = x + 0.5 * y + i * 0.01
        return frit.sum(x * x)

    x, w = rng.standard_normal(3), rng.uniform(0.5, 1.1, 3)
    for ck in CKPTS:
        check(looped, unrolled, (x, w), (0, 1), ck)


def test_grad_of_grad():
    def inner(x, w):
        return frit.sum(frit.grad(loop_simple, argnums=1)(x, w) * x)

    def inner_u(x, w):
        return frit.sum(frit.grad(unrolled_simple, argnums=1)(x, w) * x)

    x, w = rng.standard_normal(3), rng.uniform(0.5, 1.1, 3)
    got = frit.grad(inner, argnums=(0, 1))(x, w)
    want = frit.grad(inner_u, argnums=(0, 1))(x, w)
    for g, v in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(v), rtol=1e-9, atol=1e-12)


# --------------------------------------------------------------- API paths

def test_value_and_grad_vjp_and_jit():
    x, w = rng.standard_normal(5), rng.uniform(0.5, 1.1, 5)
    want_v = float(frit.jit(unrolled_simple)(x, w))
    want_g = np.asarray(frit.grad(unrolled_simple, argnums=1)(x, w))
    v, g = frit.value_and_grad(loop_simple, argnums=1, loop_checkpoint=2)(x, w)
    np.testing.assert_allclose(float(v), want_v, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(g), want_g, rtol=1e-10)
    # under jit: one program
    step = frit.jit(lambda x, w: frit.value_and_grad(loop_simple, argnums=1)(x, w))
    v, g = step(x, w)
    np.testing.assert_allclose(float(v), want_v, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(g), want_g, rtol=1e-10)
    # vjp of a loop with an array output
    def f(x, w):
        x = x.copy()
        with frit.loop(5) as i:
            x[...] = body(x, w, i)
        return x

    def fu(x, w):
        for i in range(5):
            x = body(x, w, i)
        return x

    ct = rng.standard_normal(5)
    _, back = frit.vjp(f, x, w, loop_checkpoint=1)
    _, back_u = frit.vjp(fu, x, w)
    for a, b in zip(back(ct), back_u(ct)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10)


def test_interpreting_session():
    x, w = rng.standard_normal(5), rng.uniform(0.5, 1.1, 5)
    want = frit.grad(unrolled_simple, argnums=(0, 1))(x, w)
    with frit.Session(interpret=True).as_current():
        got = frit.grad(loop_simple, argnums=(0, 1), loop_checkpoint=2)(x, w)
        for g, v in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), np.asarray(v), rtol=1e-10)


def test_float32_loop():
    x, w = rng.standard_normal(5).astype(np.float32), rng.uniform(0.5, 1.1, 5).astype(np.float32)
    got = frit.grad(loop_simple, argnums=(0, 1))(x, w)
    want = frit.grad(unrolled_simple, argnums=(0, 1))(x, w)
    for g, v in zip(got, want):
        assert np.asarray(g).dtype == np.float32
        np.testing.assert_allclose(np.asarray(g), np.asarray(v), rtol=1e-5, atol=1e-6)


def test_run_time_bounds_refused_by_name():
    def f(x, n):
        x = x.copy()
        with frit.loop(n.astype(frit.int64)):
            x[...] = x * 0.5
        return frit.sum(x)

    with pytest.raises(frit.FritError, match="frit_vjp through host loop.*computed at run time"):
        frit.grad(f)(rng.standard_normal(3), np.array(3.0))

    # the same inside another loop: the reverse loops already open are closed again, and the
    # context stays usable
    def g(x, n):
        x = x.copy()
        with frit.loop(3):
            y = x * 1.0
            with frit.loop(n.astype(frit.int64)):
                y[...] = y * 0.5
            x[...] = x + y
        return frit.sum(x) + loop_simple(x, x)

    with pytest.raises(frit.FritError, match="frit_vjp through host loop.*computed at run time"):
        frit.jit(frit.grad(g))(rng.standard_normal(3), np.array(2.0))
    x, w = rng.standard_normal(5), rng.uniform(0.5, 1.1, 5)
    check(loop_simple, unrolled_simple, (x, w), (0, 1), 2, fd_too=False)


# --------------------------------------------------------------- an n-body integrator

def nbody_step(p, v, m, dt=0.01, soft=0.1):
    d = p[None, :, :] - p[:, None, :]                      # (n, n, 3): p_j - p_i
    r2 = frit.sum(d * d, axis=-1) + soft
    inv = r2 ** -1.5
    a = frit.sum(d * (m[None, :] * inv)[:, :, None], axis=1)
    v = v + dt * a
    return p + dt * v, v


def nbody_loss(p, v):
    return frit.sum(p * p) + 0.5 * frit.sum(v * v)


def nbody_looped(p, v, m, T=100):
    p, v = p.copy(), v.copy()
    with frit.loop(T):
        np_, nv = nbody_step(p, v, m)
        p[...] = np_
        v[...] = nv
    return nbody_loss(p, v)


def nbody_unrolled(p, v, m, T=100):
    for _ in range(T):
        p, v = nbody_step(p, v, m)
    return nbody_loss(p, v)


def nbody_np(p, v, m, T=100, dt=0.01, soft=0.1):
    for _ in range(T):
        d = p[None, :, :] - p[:, None, :]
        inv = ((d * d).sum(-1) + soft) ** -1.5
        v = v + dt * (d * (m[None, :] * inv)[:, :, None]).sum(1)
        p = p + dt * v
    return (p * p).sum() + 0.5 * (v * v).sum()


@pytest.mark.parametrize("ckpt", CKPTS)
def test_nbody_integrator(ckpt):
    n = 4
    p, v, m = rng.standard_normal((n, 3)), 0.1 * rng.standard_normal((n, 3)), rng.uniform(0.5, 1.5, n)
    got = frit.grad(nbody_looped, argnums=(0, 1, 2), loop_checkpoint=ckpt)(p, v, m)
    want = frit.grad(nbody_unrolled, argnums=(0, 1, 2))(p, v, m)
    for g, w, k in zip(got, want, range(3)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(np.asarray(g), fd(nbody_np, (p, v, m), k), rtol=1e-5, atol=1e-7)


# --------------------------------------------------------------- explicit kernels in the body

@pytest.mark.parametrize("ckpt", [1, None])
def test_explicit_kernels_in_body(ckpt):
    # sort is built from explicit kernels with a gradient rule: the body's copies keep the rule;
    # a user kernel under stop_gradient is copied and recomputed
    def looped(x, w):
        y = x.copy()
        with frit.loop(3):
            z = frit.zeros(4, frit.float64)
            with frit.kernel(4) as i:
                z[i] = y[i] * 2.0
            y[...] = frit.sort(y * w) + 0.1 * frit.stop_gradient(z)
        return frit.sum(y * frit.arange(4.0))

    def unrolled(x, w):
        for _ in range(3):
            x = frit.sort(x * w) + 0.1 * frit.stop_gradient(x * 2.0)
        return frit.sum(x * frit.arange(4.0))

    x, w = np.array([0.3, -0.2, 0.9, 0.1]), np.array([1.1, 0.9, 1.3, 0.7])
    check(looped, unrolled, (x, w), (0, 1), ckpt, fd_too=False)


def test_custom_vjp_in_body_refused():
    @frit.custom_vjp
    def clip_gradient(x):
        return x

    clip_gradient.defvjp(lambda x: (x, None), lambda res, g: (frit.clip(g, -0.5, 0.5),))

    def looped(x):
        x = x.copy()
        with frit.loop(3):
            x[...] = clip_gradient(x * 1.5)
        return frit.sum(x)

    x = rng.standard_normal(3)
    np.testing.assert_allclose(np.asarray(frit.jit(looped)(x)), (x * 1.5 ** 3).sum())
    with pytest.raises(frit.FritError, match="custom_vjp clip_gradient inside a frit.loop body"):
        frit.grad(looped)(x)
