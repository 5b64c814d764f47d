"""Reverse mode through user explicit kernels (frit.kernel): frit.grad of each kernel against
(a) the same computation written with tensor ops (whose gradients are tested elsewhere) and
(b) central finite differences in float64 of the compiled forward."""
import numpy as np
import pytest

import frit

rng = np.random.default_rng(11)


def fd(f, args, k, eps=1e-6):
    """Central differences of f's float value in argument k (f evaluated compiled)."""
    jf = frit.jit(f)
    a = [np.array(v, dtype=np.float64) for v in args]
    g = np.zeros_like(a[k])
    for j in np.ndindex(a[k].shape):
        p = [v.copy() for v in a]
        m = [v.copy() for v in a]
        p[k][j] += eps
        m[k][j] -= eps
        g[j] = (float(jf(*p)) - float(jf(*m))) / (2 * eps)
    return g


def check(f, ref, args, rtol=1e-6, atol=1e-7):
    for k in range(len(args)):
        got = np.asarray(frit.grad(f, argnums=k)(*args))
        want_fd = fd(f, args, k)
        np.testing.assert_allclose(got, want_fd, rtol=rtol, atol=atol, err_msg="argument %d vs differences" % k)
        if ref is not None:
            want = np.asarray(frit.grad(ref, argnums=k)(*args))
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg="argument %d vs tensor ops" % k)
    # the value of the loss agrees too (the forward kernel is the one differentiated)
    if ref is not None:
        np.testing.assert_allclose(float(frit.jit(f)(*args)), float(frit.jit(ref)(*args)), rtol=1e-12)


N = 9


def test_elementwise():
    x, w = rng.standard_normal(N), rng.standard_normal(N)

    def f(x, w):
        y = frit.zeros(N, frit.float64)
        with frit.kernel(N) as i:
            v = x[i] * w[i]
            y[i] = frit.tanh(v) + frit.exp(x[i] * 0.5) / (1.0 + w[i] * w[i])
        return frit.sum(y * frit.arange(N))

    def ref(x, w):
        return frit.sum((frit.tanh(x * w) + frit.exp(x * 0.5) / (1.0 + w * w)) * frit.arange(N))

    check(f, ref, [x, w])


def stencil(x):
    y = frit.zeros(N, frit.float64)
    with frit.kernel(N, name="stencil") as i:
        # neighbour reads: each x[j] is read by three points, so its adjoints collide (atomics)
        y[i] = x[(i + N - 1) % N] * 0.25 + x[i] * x[i] * 0.5 + frit.sin(x[(i + 1) % N]) * 0.25
    return frit.sum(y * y)


def test_stencil():
    def ref(x):
        y = frit.roll(x, 1) * 0.25 + x * x * 0.5 + frit.sin(frit.roll(x, -1)) * 0.25
        return frit.sum(y * y)

    check(stencil, ref, [rng.standard_normal(N)])


def test_stencil_kernel_counts():
    """The backward is one reverse kernel (plus the zero fill of the accumulator)."""
    x = rng.standard_normal(N)
    fwd = [k.name for k in frit.jit(stencil).lower(x).kernels]
    both = [k.name for k in frit.jit(frit.grad(stencil)).lower(x).kernels]
    assert sum("stencil" in k for k in fwd) == 1, fwd
    assert sum(k.endswith("stencil_vjp") for k in both) == 1, both
    assert len(both) <= len(fwd) + 2, (fwd, both)


def test_in_place():
    """C[i] is read and written by the same point: the pre-kernel C gets g * x (its read), and
    no pass-through (every element is overwritten)."""
    c, x, w = rng.standard_normal(N), rng.standard_normal(N), rng.standard_normal(N)

    def f(c, x, w):
        c = c * 1.0
        with frit.kernel(N) as i:
            c[i] = c[i] * x[i] + w[i] * c[i] * c[i]
        return frit.sum(c * c)

    def ref(c, x, w):
        return frit.sum((c * x + w * c * c) ** 2)

    check(f, ref, [c, x, w])


def test_in_place_read_after_write():
    """A point stores C[i], reads it back and stores again: the read sees the stored value."""
    c, x = rng.standard_normal(N), rng.standard_normal(N)

    def f(c, x):
        c = c * 1.0
        with frit.kernel(N) as i:
            c[i] = c[i] * x[i]
            c[i] = c[i] * c[i] + x[i]
        return frit.sum(c * frit.arange(N))

    def ref(c, x):
        t = c * x
        return frit.sum((t * t + x) * frit.arange(N))

    check(f, ref, [c, x])


def test_some_elements_only():
    """Stores under an if: written elements take g through the stored value, the others keep
    the pre-kernel value and pass g through."""
    c, x = rng.standard_normal(N), rng.standard_normal(N)

    def f(c, x):
        c = c * 1.0
        with frit.kernel(N) as i:
            v = x[i] * 2.0
            with frit.if_(x[i] > 0):
                c[i] = frit.sin(v) * c[i]
        return frit.sum(c * frit.arange(N))

    def ref(c, x):
        return frit.sum(frit.where(x > 0, frit.sin(x * 2.0) * c, c) * frit.arange(N))

    check(f, ref, [c, x])


def test_if_else():
    x, w = rng.standard_normal(N), rng.standard_normal(N)

    def f(x, w):
        out = frit.zeros(N, frit.float64)
        with frit.kernel(N) as i:
            v = x[i] * w[i]
            with frit.if_(v > 0):
                out[i] = v * v
            with frit.else_():
                out[i] = w[i] * 3.0 + x[(i + 1) % N]
        return frit.sum(out * frit.arange(N))

    def ref(x, w):
        v = x * w
        return frit.sum(frit.where(v > 0, v * v, w * 3.0 + frit.roll(x, -1)) * frit.arange(N))

    check(f, ref, [x, w])


def test_scatter_atomic_add():
    idx = np.array([0, 2, 2, 1, 0, 2, 3, 3, 0])
    x, w = rng.standard_normal(N), rng.standard_normal(N)

    def f(x, w):
        out = frit.zeros(4, frit.float64)
        ix = frit.asarray(idx)
        with frit.kernel(N) as i:
            frit.atomic_add(out, ix[i], x[i] * w[i])
        return frit.sum(out * out)

    def ref(x, w):
        return frit.sum(frit.scatter(frit.zeros(4, frit.float64), frit.asarray(idx), x * w, "add") ** 2)

    check(f, ref, [x, w])


def test_atomic_add_into_an_argument():
    """Atomic adds onto a tensor that is itself differentiated: all of g passes through."""
    idx = np.array([1, 1, 0, 2, 1, 0, 2, 2, 1])
    base, x = rng.standard_normal(3), rng.standard_normal(N)

    def f(base, x):
        out = base * 1.0
        ix = frit.asarray(idx)
        with frit.kernel(N) as i:
            frit.atomic_add(out, ix[i], frit.exp(x[i]))
        return frit.sum(out * out * frit.arange(1, 4))

    def ref(base, x):
        return frit.sum(frit.scatter(base, frit.asarray(idx), frit.exp(x), "add") ** 2 * frit.arange(1, 4))

    check(f, ref, [base, x])


def test_2d():
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 3))

    def f(a, b):
        out = frit.zeros((3, 4), frit.float64)
        with frit.kernel((3, 4)) as (i, j):
            out[i, j] = a[i, j] * b[j, i] + frit.exp(a[i, (j + 1) % 4])
        return frit.sum(out * out)

    def ref(a, b):
        return frit.sum((a * b.T + frit.exp(frit.roll(a, -1, axis=1))) ** 2)

    check(f, ref, [a, b])


def test_scalar_and_lazy_values():
    """A 0-d value used as a kernel scalar (every point adds its share) and a lazy expression
    read by the kernel."""
    x = rng.standard_normal(N)

    def f(x):
        s = frit.sum(x * x)
        e = frit.exp(x * 0.3)
        out = frit.zeros(N, frit.float64)
        with frit.kernel(N) as i:
            out[i] = x[i] * s + e[i]
        return frit.sum(out * out)

    def ref(x):
        return frit.sum((x * frit.sum(x * x) + frit.exp(x * 0.3)) ** 2)

    check(f, ref, [x])


def test_variables_set_in_branches():
    """A variable set in both branches (or one) of an if and read after it: the if's result is
    cond ? then-value : else-value; the adjoint goes to the branch that ran. An integer variable
    chosen in an if indexes a read."""
    x, w = rng.standard_normal(N), rng.standard_normal(N)

    def f(x, w):
        out = frit.zeros(N, frit.float64)
        with frit.kernel(N) as i:
            v = frit.var(w[i], frit.float64)
            j = frit.var(i, frit.int64)
            with frit.if_(x[i] > 0):
                v.set(x[i] * x[i] * 3.0)
                j.set((i + 1) % N)
            with frit.else_():
                v.set(frit.sin(x[i]) + v)
            u = frit.var(v * 2.0, frit.float64)
            with frit.if_(w[i] > 0):
                u.set(u * w[i])
            out[i] = u + x[j]
        return frit.sum(out * out)

    def ref(x, w):
        v = frit.where(x > 0, x * x * 3.0, frit.sin(x) + w)
        u = frit.where(w > 0, v * 2.0 * w, v * 2.0)
        xj = frit.where(x > 0, frit.roll(x, -1), x)
        return frit.sum((u + xj) ** 2)

    check(f, ref, [x, w])


def test_kernel_variable():
    x = rng.standard_normal(N)

    def f(x):
        out = frit.zeros(N, frit.float64)
        with frit.kernel(N) as i:
            acc = frit.var(x[i], frit.float64)
            acc.set(acc * acc + x[(i + 2) % N])
            out[i] = acc * 3.0
        return frit.sum(out * out)

    def ref(x):
        return frit.sum(((x * x + frit.roll(x, -2)) * 3.0) ** 2)

    check(f, ref, [x])


def test_chained_kernels_and_float32():
    x = rng.standard_normal(N).astype(np.float32)

    def f(x):
        y = frit.zeros(N, frit.float32)
        with frit.kernel(N) as i:
            y[i] = x[i] * x[(i + 1) % N]
        z = frit.zeros(N, frit.float32)
        with frit.kernel(N) as i:
            z[i] = y[i] + y[(i + N - 1) % N] * 2
        return frit.sum(z)

    def ref(x):
        y = x * frit.roll(x, -1)
        return frit.sum(y + frit.roll(y, 1) * 2)

    got = np.asarray(frit.grad(f)(x))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.asarray(frit.grad(ref)(x)), rtol=1e-5, atol=1e-6)


def test_matmul_loop():
    """A per-point loop adding into a variable (C[i, j] = sum_k A[i, k] B[k, j]): the reverse
    kernel replays the loop for the sum and runs a second loop sending its adjoint to every term."""
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 5))

    def f(a, b):
        c = frit.zeros((3, 5), frit.float64)
        with frit.kernel((3, 5), name="mm") as (i, j):
            acc = frit.var(0.0, frit.float64)
            with frit.loop(0, 4) as k:
                acc.set(acc + a[i, k] * b[k, j])
            c[i, j] = frit.tanh(acc)
        return frit.sum(c * c)

    def ref(a, b):
        return frit.sum(frit.tanh(a @ b) ** 2)

    check(f, ref, [a, b])


def test_loops_chained_dynamic_and_under_if():
    """Accumulators starting from a read, a loop's result feeding the next loop's terms and a
    loop adding into the same variable again, a dynamic trip count, a loop inside an if."""
    x, w = rng.standard_normal(N + 3), rng.standard_normal(3)
    trips = np.array([1, 3, 0, 2, 4, 2, 1, 0, 3])

    def f(x, w):
        n = frit.asarray(trips)
        y = frit.zeros(N, frit.float64)
        with frit.kernel(N) as i:
            acc = frit.var(x[i] * 0.5, frit.float64)
            s = x[i + 1]
            with frit.loop(0, 3) as k:
                acc.set(acc + x[i + k] * w[k] * s)
            acc2 = frit.var(0.0, frit.float64)
            with frit.loop(0, 2) as k:
                acc2.set(acc2 + acc * x[i + k])
            with frit.loop(0, 2) as k:
                acc2.set(frit.sin(w[k]) + acc2)
            with frit.if_(x[i + 2] > -0.5):
                acc3 = frit.var(0.0, frit.float64)
                with frit.loop(0, n[i]) as k:
                    acc3.set(acc3 + x[(i + k) % N] ** 2)
                y[i] = acc2 * acc + acc3
        return frit.sum(y * frit.arange(N))

    def ref_np(x, w):
        y = np.zeros(N)
        for i in range(N):
            acc = x[i] * 0.5 + sum(x[i + k] * w[k] * x[i + 1] for k in range(3))
            acc2 = sum(acc * x[i + k] for k in range(2)) + np.sin(w[:2]).sum()
            if x[i + 2] > -0.5:
                y[i] = acc2 * acc + sum(x[(i + k) % N] ** 2 for k in range(trips[i]))
        return (y * np.arange(N)).sum()

    np.testing.assert_allclose(float(frit.jit(f)(x, w)), ref_np(x, w), rtol=1e-12)
    check(f, None, [x, w])


def test_loops_writing_tensors():
    """Loops storing (and atomically adding) elements that depend on the loop index, under an
    if, into a fresh tensor and in place; an accumulator next to them; a strided loop."""
    x, w, c = rng.standard_normal(5), rng.standard_normal(4), rng.standard_normal((5, 4))

    def rows(x, w):
        out = frit.zeros((5, 4), frit.float64)
        y = frit.zeros(5, frit.float64)
        with frit.kernel(5) as i:
            s = x[i] * 2.0
            with frit.if_(x[i] > -1.0):
                acc = frit.var(0.0, frit.float64)
                with frit.loop(0, 4) as k:
                    out[i, k] = frit.sin(s * w[k]) + x[(i + k) % 5]
                    acc.set(acc + w[k] * s)
                y[i] = acc
        return frit.sum(out * out) + frit.sum(y * y * frit.arange(5))

    def rows_ref(x, w):
        on = (x > -1.0)[:, None]
        out = frit.where(on, frit.sin((x * 2.0)[:, None] * w[None, :]) + frit.stack([frit.roll(x, -k) for k in range(4)], axis=1), 0.0)
        y = frit.where(x > -1.0, frit.sum(w) * x * 2.0, 0.0)
        return frit.sum(out * out) + frit.sum(y * y * frit.arange(5))

    check(rows, rows_ref, [x, w])

    def in_place(c, x):
        c = c * 1.0
        with frit.kernel(5) as i:
            with frit.loop(1, 4, 2) as k:            # k = 1, 3: odd columns
                frit.atomic_add(c, (i, k), x[i] * k)
                c[i, k - 1] = x[i] * x[(i + 1) % 5] * (k // 2)
        return frit.sum(c * c)

    def in_place_ref(c, x):
        odd = c[:, 1::2] + x[:, None] * frit.asarray(np.array([1.0, 3.0]))[None, :]
        even = (x * frit.roll(x, -1))[:, None] * frit.asarray(np.array([0.0, 1.0]))[None, :]
        return frit.sum(odd * odd) + frit.sum(even * even)

    check(in_place, in_place_ref, [c, x])

    def binned(x, w):
        out = frit.zeros(3, frit.float64)
        with frit.kernel(5) as i:
            with frit.loop(0, 4) as k:          # the same bin every iteration: atomic adds may repeat
                frit.atomic_add(out, i % 3, x[(i + k) % 5] * w[k])
        return frit.sum(out * out)

    def binned_ref(x, w):
        per_point = frit.sum(frit.stack([frit.roll(x, -k) for k in range(4)], axis=1) * w[None, :], axis=1)
        return frit.sum(frit.scatter(frit.zeros(3, frit.float64), frit.asarray(np.arange(5) % 3), per_point, "add") ** 2)

    check(binned, binned_ref, [x, w])


def test_if_and_local_variables_inside_a_loop():
    """An if/else inside a loop (a leaky relu of each term, stores in one branch) and a variable
    declared inside the loop body."""
    x, w = rng.standard_normal(6), rng.standard_normal(4)

    def f(x, w):
        out = frit.zeros((6, 4), frit.float64)
        y = frit.zeros(6, frit.float64)
        with frit.kernel(6) as i:
            acc = frit.var(0.0, frit.float64)
            with frit.loop(0, 4) as k:
                t = x[(i + k) % 6] * w[k]
                r = frit.var(0.0, frit.float64)
                with frit.if_(t > 0):
                    r.set(t * t)
                    out[i, k] = t
                with frit.else_():
                    r.set(t * 0.1)
                acc.set(acc + r)
            y[i] = acc
        return frit.sum(y * y) + frit.sum(out * frit.arange(4))

    def ref(x, w):
        t = frit.stack([frit.roll(x, -k) for k in range(4)], axis=1) * w[None, :]
        y = frit.sum(frit.where(t > 0, t * t, t * 0.1), axis=1)
        return frit.sum(y * y) + frit.sum(frit.where(t > 0, t, 0.0) * frit.arange(4))

    check(f, ref, [x, w])


def test_grad_under_jit():
    x = rng.standard_normal(N)

    def ref(x):
        y = frit.roll(x, 1) * 0.25 + x * x * 0.5 + frit.sin(frit.roll(x, -1)) * 0.25
        return frit.sum(y * y)

    step = frit.jit(lambda x: frit.value_and_grad(stencil)(x))
    v, g = step(x)
    np.testing.assert_allclose(float(v), float(frit.jit(ref)(x)), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(g), np.asarray(frit.grad(ref)(x)), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(g), fd(stencil, [x], 0), rtol=1e-6, atol=1e-7)


def test_grad_of_kernel_in_host_loop():
    x = rng.standard_normal(N)

    def f(x):
        y = x * 1.0
        with frit.loop(3):
            z = frit.zeros(N, frit.float64)
            with frit.kernel(N) as i:
                z[i] = frit.sin(y[i]) + y[(i + 1) % N] * 0.5
            y[...] = z
        return frit.sum(y * y)

    def ref(x):
        for _ in range(3):
            x = frit.sin(x) + frit.roll(x, -1) * 0.5
        return frit.sum(x * x)

    try:
        got = np.asarray(frit.grad(f)(x))
    except frit.FritError as e:
        if "host loop" in str(e):
            pytest.skip("gradients through host loops are not on this branch")
        raise
    np.testing.assert_allclose(got, np.asarray(frit.grad(ref)(x)), rtol=1e-10, atol=1e-12)


def test_refusals_name_the_kernel():
    x = rng.standard_normal(N)

    def product_loop(x):
        out = frit.zeros(N, frit.float64)
        with frit.kernel(N, name="inner_loop") as i:
            acc = frit.var(1.0, frit.float64)
            with frit.loop(0, 3) as k:
                acc.set(acc * x[(i + k) % N])   # not an accumulation: refused
            out[i] = acc
        return frit.sum(out)

    with pytest.raises(frit.FritError, match="frit_vjp through explicit kernel 'inner_loop'.*loop.*its value plus"):
        frit.grad(product_loop)(x)

    def store_in_loop(x):
        out = frit.zeros((N, 2), frit.float64)
        with frit.kernel(N, name="rows") as i:
            acc = frit.var(0.0, frit.float64)
            with frit.loop(0, 2) as k:
                acc.set(acc + x[i] * k)
                out[i, 0] = acc         # the same element every iteration
        return frit.sum(out)

    with pytest.raises(frit.FritError, match="'rows'.*stores to an element that does not depend on the loop index"):
        frit.grad(store_in_loop)(x)

    def loop_and_outside(x):
        out = frit.zeros((N, 2), frit.float64)
        with frit.kernel(N, name="both") as i:
            with frit.loop(0, 2) as k:
                out[i, k] = x[i] * k
            out[i, 0] = x[i]          # the loop's element for k = 0
        return frit.sum(out)

    with pytest.raises(frit.FritError, match="'both'.*written inside a loop is also written elsewhere"):
        frit.grad(loop_and_outside)(x)

    def nested(x):
        out = frit.zeros(N, frit.float64)
        with frit.kernel(N, name="nest") as i:
            acc = frit.var(0.0, frit.float64)
            with frit.loop(0, 2) as k:
                acc.set(acc + x[(i + k) % N])
            with frit.if_(x[i] > 0):
                with frit.loop(0, 2) as k:
                    acc.set(acc + x[(i + k + 2) % N] * 3.0)
                out[i] = acc
        return frit.sum(out)

    with pytest.raises(frit.FritError, match="'nest'.*a loop outside its enclosing if"):
        frit.grad(nested)(x)

    def carried(x):
        out = frit.zeros(N, frit.float64)
        with frit.kernel(N, name="carried") as i:
            v = frit.var(0.0, frit.float64)
            with frit.loop(0, 3) as k:
                with frit.if_(x[(i + k) % N] > 0):
                    v.set(x[(i + k) % N])    # the last positive one: carried across iterations
            out[i] = v
        return frit.sum(out)

    with pytest.raises(frit.FritError, match="'carried'.*from outside the loop inside an if"):
        frit.grad(carried)(x)

    def brk(x):
        out = frit.zeros(N, frit.float64)
        with frit.kernel(N, name="brk") as i:
            acc = frit.var(0.0, frit.float64)
            with frit.loop(0, 3) as k:
                with frit.if_(acc > 1):
                    frit.break_()
                acc.set(acc + x[(i + k) % N])
            out[i] = acc
        return frit.sum(out)

    with pytest.raises(frit.FritError, match="'brk'"):
        frit.grad(brk)(x)

    def atomic_max(x):
        out = frit.zeros(2, frit.float64)
        with frit.kernel(N, name="amax") as i:
            frit.atomic_max(out, i % 2, x[i])
        return frit.sum(out)

    with pytest.raises(frit.FritError, match="'amax'.*atomic min, max"):
        frit.grad(atomic_max)(x)

    def twice(x):
        out = frit.zeros(N, frit.float64)
        with frit.kernel(N, name="twice") as i:
            out[i] = x[i]
            with frit.if_(x[i] > 0):
                out[i] = x[i] * 2.0
        return frit.sum(out)

    with pytest.raises(frit.FritError, match="'twice'.*same element twice"):
        frit.grad(twice)(x)

    perm = np.array([1, 0, 2, 3, 4, 5, 6, 8, 7])

    def aliased(x):
        out = x * 1.0
        p = frit.asarray(perm)
        with frit.kernel(N, name="aliased") as i:
            out[p[i]] = x[i] * 3.0
            out[i] = out[(i + 1) % N] * 2.0   # may be the element stored above, at run time
        return frit.sum(out)

    with pytest.raises(frit.FritError, match="'aliased'.*another index expression"):
        frit.grad(aliased)(x)


def test_second_order_and_jvp():
    """Hessian-vector products and jvp differentiate the reverse kernel again."""
    x, v = rng.standard_normal(N), rng.standard_normal(N)

    def ref(x):
        y = frit.roll(x, 1) * 0.25 + x * x * 0.5 + frit.sin(frit.roll(x, -1)) * 0.25
        return frit.sum(y * y)

    def hvp(f):
        return np.asarray(frit.grad(lambda x: frit.sum(frit.grad(f)(x) * v))(x))

    np.testing.assert_allclose(hvp(stencil), hvp(ref), rtol=1e-10, atol=1e-12)
    gplus = np.asarray(frit.grad(stencil)(x + 1e-5 * v))
    gminus = np.asarray(frit.grad(stencil)(x - 1e-5 * v))
    np.testing.assert_allclose(hvp(stencil), (gplus - gminus) / 2e-5, rtol=1e-5, atol=1e-6)
    _, t = frit.jvp(stencil, (x,), (v,))
    np.testing.assert_allclose(float(t), float(np.dot(np.asarray(frit.grad(ref)(x)), v)), rtol=1e-10)


def test_second_order_through_loops_and_ifs():
    """Hessian-vector products through a matmul loop kernel and through an if that outer values
    flow into (the reverse kernel carries their adjoints out in variables set inside the if,
    which the second reverse reads as the if's results)."""
    a, b, v = rng.standard_normal((3, 4)), frit.asarray(rng.standard_normal((4, 5))), rng.standard_normal((3, 4))

    def mm(a, b):
        c = frit.zeros((3, 5), frit.float64)
        with frit.kernel((3, 5), name="mm") as (i, j):
            acc = frit.var(0.0, frit.float64)
            with frit.loop(0, 4) as k:
                acc.set(acc + a[i, k] * b[k, j])
            c[i, j] = frit.tanh(acc)
        return frit.sum(c * c)

    def mm_ref(a, b):
        return frit.sum(frit.tanh(a @ b) ** 2)

    def hvp(f, x, v, *rest):
        return np.asarray(frit.grad(lambda x: frit.sum(frit.grad(f)(x, *rest) * v))(x))

    np.testing.assert_allclose(hvp(mm, a, v, b), hvp(mm_ref, a, v, b), rtol=1e-10, atol=1e-12)

    def cond(x):
        out = frit.zeros(N, frit.float64)
        with frit.kernel(N, name="cond") as i:
            y = x[i] * 2.0
            with frit.if_(x[i] > 0):
                out[i] = y * x[i] * x[(i + 1) % N]
        return frit.sum(out)

    def cond_ref(x):
        return frit.sum(frit.where(x > 0, 2.0 * x * x * frit.roll(x, -1), 0.0))

    x, u = rng.standard_normal(N), rng.standard_normal(N)
    np.testing.assert_allclose(hvp(cond, x, u), hvp(cond_ref, x, u), rtol=1e-10, atol=1e-12)
