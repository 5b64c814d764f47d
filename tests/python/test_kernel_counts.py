"""Golden kernel counts of the fusing scheduler (frit_program_num_kernels) for the shapes of
program that must fuse, and the memory plan's reuse of intermediates. Results are also checked
against numpy, so a count is never met by computing something else."""
import re
import numpy as np
import pytest

from frit import _lib as L
from util import assert_close, assert_exact, evaluate, rand


def _compile(outs, **kw):
    return L.compile(outs, **kw)


def test_elementwise_chain_is_one_kernel(ctx, rng):
    x = rand(rng, L.F32, (64, 33))
    tx = ctx.input("x", L.F32, x.shape)
    t = tx
    ops = ["exp", "neg", "tanh", "abs", "sqrt", "sin", "relu", "floor"]
    for op in ops:
        t = ctx.unary(op, t)
    p = _compile([t])
    assert p.num_kernels == 1, p.kernel_names()
    want = x
    for f in [np.exp, np.negative, np.tanh, np.abs, np.sqrt, np.sin, lambda v: np.maximum(v, 0),
              np.floor]:
        want = f(want)
    assert_close(p.run({"x": x})[0], want, 1e-5, 1e-5)


def test_binary_broadcast_chain_is_one_kernel(ctx, rng):
    x, b = rand(rng, L.F32, (16, 8)), rand(rng, L.F32, (8,))
    tx, tb = ctx.input("x", L.F32, x.shape), ctx.input("b", L.F32, b.shape)
    y = ctx.binary("mul", ctx.binary("add", tx, tb), ctx.binary("sub", tb, ctx.scalar(L.F32, 2.0)))
    y = ctx.where(ctx.binary("gt", y, ctx.scalar(L.F32, 0.0)), y, ctx.unary("neg", y))
    p = _compile([y])
    assert p.num_kernels == 1, p.kernel_names()
    t = (x + b) * (b - np.float32(2))
    assert_exact(p.run({"x": x, "b": b})[0], np.where(t > 0, t, -t))


def test_matmul_is_one_kernel(ctx, rng):
    a, b = rand(rng, L.F32, (32, 48)), rand(rng, L.F32, (48, 24))
    ta, tb = ctx.input("a", L.F32, a.shape), ctx.input("b", L.F32, b.shape)
    p = _compile([ctx.matmul(ta, tb)])
    assert p.num_kernels == 1, p.kernel_names()
    assert_close(p.run({"a": a, "b": b})[0], a @ b, 1e-5, 1e-4)


def test_matmul_bias_relu_is_one_kernel(ctx, rng):
    a, b, c = rand(rng, L.F32, (32, 48)), rand(rng, L.F32, (48, 24)), rand(rng, L.F32, (24,))
    ta, tb, tc = (ctx.input(n, L.F32, v.shape) for n, v in zip("abc", (a, b, c)))
    y = ctx.unary("relu", ctx.binary("add", ctx.matmul(ta, tb), tc))
    p = _compile([y])
    assert p.num_kernels == 1, p.kernel_names()
    assert_close(p.run({"a": a, "b": b, "c": c})[0], np.maximum(a @ b + c, 0), 1e-5, 1e-4)


@pytest.mark.parametrize("shape", [(8, 100), (3, 5, 7)])
def test_softmax_last_axis_is_one_kernel(ctx, rng, shape):
    """A row's max and sum broadcast along the row fuse into the kernel that uses them: the
    linearizer computes each once a row, outside the loop over the row (realize.c,
    broadcast_along_rows; linear.c places a reduction by its own ranges)."""
    x = rand(rng, L.F32, shape)
    tx = ctx.input("x", L.F32, x.shape)
    p = _compile([ctx.softmax(tx, -1)])
    assert p.num_kernels == 1, p.kernel_names()
    e = np.exp(x - x.max(-1, keepdims=True))
    assert_close(p.run({"x": x})[0], e / e.sum(-1, keepdims=True), 1e-6, 1e-7)


def nbody(ctx, n, dt=L.F32):
    X = ctx.input("X", dt, (n, 3))
    V = ctx.input("V", dt, (n, 3))
    d = ctx.binary("sub", ctx.unsqueeze(X, 0), ctx.unsqueeze(X, 1))           # X[None] - X[:, None]
    d2 = ctx.binary("add", ctx.reduce("sum", ctx.binary("mul", d, d), -1), ctx.scalar(dt, 1e-4))
    inv = ctx.binary("pow", d2, ctx.scalar(dt, 1.5))
    F = ctx.reduce("sum", ctx.binary("truediv", d, ctx.unsqueeze(inv, -1)), 1)
    dtc = ctx.scalar(dt, 0.01)
    V2 = ctx.binary("add", V, ctx.binary("mul", F, dtc))
    X2 = ctx.binary("add", X, ctx.binary("mul", V2, dtc))
    return [V2, X2]


def nbody_np(X, V):
    d = X[None, :, :] - X[:, None, :]
    d2 = (d * d).sum(-1) + 1e-4
    F = (d / d2[..., None] ** 1.5).sum(1)
    V2 = V + F * 0.01
    return V2, X + V2 * 0.01


def test_nbody_at_most_2_kernels(ctx, rng):
    n = 57
    X, V = rand(rng, L.F64, (n, 3)), rand(rng, L.F64, (n, 3), scale=0.1)
    p = _compile(nbody(ctx, n, L.F64))
    assert p.num_kernels <= 2, p.kernel_names()
    V2, X2 = p.run({"X": X, "V": V})
    wV, wX = nbody_np(X, V)
    assert_close(V2, wV, 1e-10, 1e-10)
    assert_close(X2, wX, 1e-10, 1e-10)


@pytest.mark.parametrize("K", [3, 6, 10])
def test_memory_plan_reuses_intermediates(ctx, rng, K):
    """A chain of K materialised (CONTIGUOUS) intermediates of n floats needs ~2 of them at once."""
    n = 1 << 18
    x = rand(rng, L.F32, (n,))
    tx = ctx.input("x", L.F32, x.shape)
    t, want = tx, x
    for i in range(K):
        t = ctx.contiguous(ctx.binary("add", ctx.binary("mul", t, ctx.scalar(L.F32, 0.5)),
                                      ctx.scalar(L.F32, float(i))))
        want = want * np.float32(0.5) + np.float32(i)
    out = ctx.binary("add", t, ctx.scalar(L.F32, 1.0))
    p = _compile([out])
    assert p.num_kernels >= K, "CONTIGUOUS must end a kernel: %s" % p.kernel_names()
    mem = p.required_memory()
    nbytes = 4 * n
    assert mem <= 2 * nbytes + 4096 * K, "required memory %d for %d buffers of %d bytes" % (
        mem, K, nbytes)
    assert mem >= nbytes, "a materialised intermediate must live somewhere: %d" % mem
    assert_exact(p.run({"x": x})[0], want + np.float32(1))


def test_no_fusion_gives_more_kernels(ctx, rng):
    x = rand(rng, L.F32, (10, 10))
    tx = ctx.input("x", L.F32, x.shape)
    y = ctx.unary("exp", ctx.unary("neg", ctx.unary("abs", tx)))
    p1 = _compile([y])
    p2 = _compile([y], no_fusion=True, interpret=True)
    assert p1.num_kernels == 1 and p2.num_kernels >= 3, (p1.kernel_names(), p2.kernel_names())
    assert_close(p1.run({"x": x})[0], p2.run({"x": x})[0], 4e-6, 4e-6)  # exp: a few ulps


def test_broadcasts_that_are_not_along_rows_stay_materialised(ctx, rng):
    """A row sum broadcast and then transposed, or summed over the other axis, would put the
    broadcast axis outside the row's loop and compute the sum again for every element of it:
    those sums are materialised (several kernels), and the values are numpy's."""
    x = np.abs(rand(rng, L.F32, (40, 30))) + np.float32(0.5)  # sums far from 0
    tx = ctx.input("x", L.F32, x.shape)
    norm = ctx.binary("truediv", tx, ctx.unsqueeze(ctx.reduce("sum", tx, 1), 1))
    t = _compile([ctx.permute(norm, [1, 0])])
    assert t.num_kernels >= 2, t.kernel_names()
    assert_close(t.run({"x": x})[0], (x / x.sum(1, keepdims=True)).T, 1e-5, 1e-6)
    c = _compile([ctx.reduce("sum", norm, 0)])
    assert c.num_kernels >= 2, c.kernel_names()
    assert_close(c.run({"x": x})[0], (x / x.sum(1, keepdims=True)).sum(0), 1e-5, 1e-5)


def test_whole_array_and_single_row_broadcasts_stay_materialised(ctx, rng):
    """A whole-array value (x - mean(x)) or a single static row's (softmax of a (1, n) array)
    broadcast along every remaining axis: fused, the kernel's outermost loop would be a broadcast
    axis, split over threads (work-items on a device), each part computing the reduction again."""
    x = rand(rng, L.F32, (64, 50))
    tx = ctx.input("x", L.F32, x.shape)
    m = ctx.reduce("sum", tx, [0, 1], keepdims=True)
    p = _compile([ctx.binary("sub", tx, m)])
    assert p.num_kernels >= 2, p.kernel_names()
    assert_close(p.run({"x": x})[0], x - x.sum(), 1e-4, 1e-3)
    row = rand(rng, L.F32, (1, 300))
    tr = ctx.input("r", L.F32, row.shape)
    q = _compile([ctx.softmax(tr, -1)])
    assert q.num_kernels >= 2, q.kernel_names()
    e = np.exp(row - row.max())
    assert_close(q.run({"r": row})[0], e / e.sum(), 1e-6, 1e-7)


@pytest.mark.parametrize("epilogue", ["none", "relu", "residual"])
def test_transposed_matmul_keeps_its_register_tiles(ctx, rng, epilogue):
    """(a @ b).T as an output, or read by elementwise ops only (relu, a residual read in the
    output's own layout): one kernel that loops in the product's order (register-tiled, a
    vector loop over b's columns) and stores through the transpose, the residual gathered once
    per tile. Fused in the output's order instead, the strided stores lost the register tiling."""
    a, b, c = rand(rng, L.F32, (64, 48)), rand(rng, L.F32, (48, 32)), rand(rng, L.F32, (32, 64))
    ta, tb, tc = (ctx.input(n, L.F32, v.shape) for n, v in (("a", a), ("b", b), ("c", c)))
    t = ctx.permute(ctx.matmul(ta, tb), [1, 0])
    want = (a.astype(np.float64) @ b).T
    if epilogue == "relu":
        t, want = ctx.unary("relu", t), np.maximum(want, 0)
    if epilogue == "residual":
        t, want = ctx.binary("add", t, tc), want + c
    p = _compile([t])
    assert p.num_kernels == 1, p.kernel_names()
    assert "#pragma omp simd" in p.source(), p.source()
    assert_close(p.run({"a": a, "b": b, "c": c})[0], want, 1e-5, 1e-4)


def test_transposed_matmul_read_by_a_reduction_is_materialised_first(ctx, rng):
    """(a @ b).T read by another product: the first product keeps its own kernel (rule 6)."""
    a, b, c = rand(rng, L.F32, (64, 48)), rand(rng, L.F32, (48, 32)), rand(rng, L.F32, (64, 16))
    ta, tb, tc = (ctx.input(n, L.F32, v.shape) for n, v in (("a", a), ("b", b), ("c", c)))
    p = _compile([ctx.matmul(ctx.permute(ctx.matmul(ta, tb), [1, 0]), tc)])
    assert p.num_kernels >= 2, p.kernel_names()
    assert_close(p.run({"a": a, "b": b, "c": c})[0], (a.astype(np.float64) @ b).T @ c, 1e-4, 1e-2)


def test_product_then_elementwise_fuses(ctx, rng):
    a, b = rand(rng, L.F32, (40, 48)), rand(rng, L.F32, (48, 24))
    ta, tb = ctx.input("a", L.F32, a.shape), ctx.input("b", L.F32, b.shape)
    # an elementwise consumer in the product's own order still fuses
    p = _compile([ctx.unary("relu", ctx.matmul(ta, tb))])
    assert p.num_kernels == 1, p.kernel_names()


@pytest.mark.parametrize("first", [True, False])
def test_a_reduction_concatenated_into_a_larger_array_is_its_own_kernel(first):
    """A PAD evaluates its fused source at every element of the padded result: a reduction
    concatenated into a larger array ran its whole loop for each element of the concatenation
    (a flattened gradient bucket took 7 ms instead of a copy). The reduction is a kernel of its
    own, and the concatenation's kernel only copies."""
    import frit
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 32)).astype(np.float32)
    b = rng.standard_normal(5000).astype(np.float32)
    parts = lambda x, y: [frit.sum(x, axis=0), y] if first else [y, frit.sum(x, axis=0)]  # noqa: E731
    f = frit.jit(lambda x, y: frit.concatenate(parts(x, y)))
    kernels = f.lower(frit.asarray(a), frit.asarray(b)).kernels
    assert len(kernels) == 2, [k.name for k in kernels]
    assert any(k.ops == ["sum"] for k in kernels), [k.ops for k in kernels]
    assert sum("sum" in k.ops for k in kernels) == 1, [k.ops for k in kernels]
    want = np.concatenate([a.sum(axis=0), b] if first else [b, a.sum(axis=0)])
    np.testing.assert_allclose(np.asarray(f(frit.asarray(a), frit.asarray(b))), want, rtol=1e-5, atol=1e-5)


def _sigmoid(frit, x):
    return 1 / (1 + frit.exp(-x))


def _softmax(frit, x):
    e = frit.exp(x - frit.max(x, axis=-1, keepdims=True))
    return e / frit.sum(e, axis=-1, keepdims=True)


def _np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _np_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("case", ["sigmoid", "softmax"])
def test_exp_map_loops_take_the_vector_exp(case):
    """A float32 exp in a vector loop without selects or a reduction clause calls the prelude's
    vector exp (frit_expv): a sigmoid's loop, and a softmax's normalising loop (its sum keeps
    the inline exp: gcc would keep the accumulator in memory across the call). Results match
    numpy eagerly and under jit."""
    import frit
    f, ref = {"sigmoid": (_sigmoid, _np_sigmoid), "softmax": (_softmax, _np_softmax)}[case]
    x = np.random.default_rng(1).standard_normal((48, 200)).astype(np.float32)
    g = frit.jit(lambda v: f(frit, v))
    src = g.lower(frit.asarray(x)).source
    body = src[src.index("void frit_k"):]
    assert "frit_expv(" in body, body
    if case == "sigmoid":
        assert "frit_expf(" not in body, body
    np.testing.assert_allclose(np.asarray(g(frit.asarray(x))), ref(x), rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(np.asarray(f(frit, frit.asarray(x))), ref(x), rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("w", [7, 14, 15, 16, 40])
def test_short_rows_keep_the_inline_exp(w):
    """Rows of fewer than 16 elements that cannot be flattened (a strided slice, as a CNN's 14 x 14
    maps read from a padded buffer) are vectorised in 8- or 4-lane pieces, for which the vector
    exp has no clone: gcc called the scalar function per lane, 8.7x slower than the inline exp it
    vectorises (exp of 200000 rows of 14 on one thread: 11.5 ms against 1.32). So such loops keep
    frit_expf; rows of 16 or more take frit_expv. Against numpy, static and default jit."""
    import frit
    x = np.linspace(-5, 5, 64 * (w + 4)).astype(np.float32).reshape(64, w + 4)
    for dynamic in (False, True):
        g = frit.jit(lambda a: frit.exp(a[:, 2:2 + w]) * 2, dynamic=dynamic)
        if not dynamic:
            src = g.lower(x).source
            body = src[src.index("void frit_k"):]
            assert ("frit_expv(" in body) == (w >= 16), body
        np.testing.assert_allclose(np.asarray(g(x)), np.exp(x[:, 2:2 + w]) * 2, rtol=2e-6)


def _cpu_has(flag):
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and flag in line.split() for line in f)
    except OSError:
        return False


@pytest.mark.parametrize("n", [24, 40, 1000, 1020, 1023])
def test_matmul_columns_that_vectors_do_not_divide(n):
    """Columns that whole 16-lane vectors do not cover. Where 8 lanes divide N (24, 40, 1000),
    the tiler takes 8-lane tiles (the static kernel's vector loop runs over 8 lanes). Elsewhere
    (1020, 1023) every path, whose B is packed in panels padded with copies of its last
    column, tile the padded columns and store the last column's copies at column N - 1.
    Untiled, a 1000^2 or 1023^2 product read B's panels with a stride of 32 per k (550-600 ms
    on the default paths). Results match numpy on the static, default-jit and eager paths; the
    sizes are large enough that the default paths run a size-specialised variant at once."""
    import frit
    rng = np.random.default_rng(n)
    m, k = (48, 56) if n < 100 else (300, 300)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    want = a.astype(np.float64) @ b
    static = frit.jit(lambda x, y: x @ y, dynamic=False)
    src = static.lower(a, b).source
    if _cpu_has("avx2") and n % 8 == 0:  # 8 or 16 float lanes a tile vector
        assert "< ((int64_t)8LL); r" in src, src[src.index("void frit_k"):]
    if _cpu_has("avx2") and n > 100:  # a register tile: a vector loop of several accumulators
        body = src[src.index("void frit_k"):]
        assert re.search(r"omp simd\n\s*for \(int64_t r\d+ = 0; r\d+ < \(\(int64_t\)(8|16)LL\)", body), body
        assert body.count("frit_fmaf(") >= 4, body
    dyn = frit.jit(lambda x, y: frit.maximum(x @ y, -1.0))
    for got in (static(a, b), frit.jit(lambda x, y: x @ y)(a, b), frit.asarray(a) @ frit.asarray(b)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(np.asarray(dyn(a, b)), np.maximum(want, -1), rtol=1e-4, atol=1e-3)
    if n > 100:
        assert "specialised" in dyn.lower(a, b).info, dyn.lower(a, b).info


def test_gather_rows_keep_their_vector_loop():
    """A row gather (take along axis 0, its index clamped by a MIN) reads each row with stride 1:
    its loop stays a vector loop. The clamp of pad_cols' store columns (not stride 1) once
    marked every MIN-clamped index a gather, and the take lost its `omp simd`."""
    import frit
    x = np.random.default_rng(2).random((64, 256)).astype(np.float32)
    i = np.array([3, 63, 0, 5])
    g = frit.jit(lambda a, b: frit.take(a, b, axis=0) * 2.0, dynamic=False)
    src = g.lower(x, i).source
    assert "#pragma omp simd" in src[src.index("void frit_k"):], src[src.index("void frit_k"):]
    np.testing.assert_allclose(np.asarray(g(x, i)), np.take(x, i, axis=0) * 2)
    np.testing.assert_allclose(np.asarray(frit.take(frit.asarray(x), frit.asarray(i), axis=0) * 2.0),
                               np.take(x, i, axis=0) * 2)
