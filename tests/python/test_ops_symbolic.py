"""Programs with symbolic dims (frit_input_sym + frit_var): one compile, runs at several sizes,
output shapes from the bindings, and errors for unbound or out-of-range variables. Also the
program API itself: input order and names, output counts, threads, the compile cache."""
import numpy as np
import pytest

from frit import _lib as L
from util import assert_close, assert_exact, evaluate, rand


def test_symbolic_elementwise_and_reduce(ctx, path, rng):
    n = ctx.var("n", 1, 1000)
    x = ctx.input("x", L.F32, (n, 3))
    b = ctx.input("b", L.F32, (3,))
    y = ctx.binary("mul", ctx.unary("tanh", x), b)
    s = ctx.reduce("sum", y, 0)
    m = ctx.reduce("max", y, 1, keepdims=True)
    p = L.compile([y, s, m], **({"interpret": True} if path == "interp" else {}))
    bv = rand(rng, L.F32, (3,))
    for size in (1, 7, 64, 1000):
        xv = rand(rng, L.F32, (size, 3))
        assert p.output_shape(0, {"n": size}) == (size, 3)
        assert p.output_shape(1, {"n": size}) == (3,)
        got = p.run({"x": xv, "b": bv}, vars={"n": size})
        want = np.tanh(xv) * bv
        assert_close(got[0], want, 4e-6, 4e-6)
        assert_close(got[1], want.sum(0), 1e-5, 1e-5 * size)
        assert_close(got[2], want.max(1, keepdims=True), 4e-6, 4e-6)


def test_symbolic_movement(ctx, path, rng):
    n = ctx.var("n", 2, 64)
    x = ctx.input("x", L.I32, (n, 4))
    t = ctx.flip(ctx.transpose(x), [1])                            # (4, n)
    t = ctx.getitem(t, (slice(None, None, -1), slice(1, None)))    # (4, n-1)
    p = L.compile([t], **({"interpret": True} if path == "interp" else {}))
    for size in (2, 5, 64):
        xv = rand(rng, L.I32, (size, 4), kind="full")
        got, = p.run({"x": xv}, vars={"n": size})
        assert_exact(got, xv.T[:, ::-1][::-1, 1:])


def test_symbolic_matmul(ctx, path, rng):
    n = ctx.var("n", 1, 128)
    a = ctx.input("a", L.F64, (n, 5))
    w = ctx.input("w", L.F64, (5, 3))
    p = L.compile([ctx.matmul(a, w)], **({"interpret": True} if path == "interp" else {}))
    wv = rand(rng, L.F64, (5, 3))
    for size in (1, 3, 128):
        av = rand(rng, L.F64, (size, 5))
        got, = p.run({"a": av, "w": wv}, vars={"n": size})
        assert_close(got, av @ wv, 1e-13, 1e-13)


def test_unbound_and_out_of_range_variable(ctx):
    n = ctx.var("n", 1, 10)
    x = ctx.input("x", L.F32, (n,))
    p = L.compile([ctx.unary("neg", x)])
    xv = np.zeros(11, np.float32)
    with pytest.raises(L.FritError):
        p.run({"x": xv[:3]})                     # n unbound
    with pytest.raises(L.FritError):
        p.run({"x": xv}, vars={"n": 11})         # outside 1..10
    got, = p.run({"x": xv[:3] + 1}, vars={"n": 3})
    assert_exact(got, -np.ones(3, np.float32))


def test_program_inputs_in_creation_order(ctx, rng):
    """Inputs are the reachable frit_input tensors in creation order; unused ones are left out."""
    a = ctx.input("a", L.F32, (2,))
    ctx.input("unused", L.F32, (2,))
    c = ctx.input("c", L.F32, (2,))
    p = L.compile([ctx.binary("sub", c, a)])
    assert p.num_inputs == 2 and p.input_names == ["a", "c"]
    assert p.num_outputs == 1
    got, = p.run([np.array([1, 2], np.float32), np.array([10, 20], np.float32)])
    assert_exact(got, np.array([9, 18], np.float32))


def test_output_is_input_and_view_of_input(ctx, path, rng):
    """An output that is an input (or a view of one) still gets its own copy."""
    x = rand(rng, L.F32, (3, 4))
    tx = ctx.input("x", L.F32, x.shape)
    got = evaluate([tx, ctx.transpose(tx), ctx.getitem(tx, (slice(None, None, -1),))], {"x": x}, path)
    assert_exact(got[0], x)
    assert_exact(got[1], x.T)
    assert_exact(got[2], x[::-1])


def test_constant_only_program(ctx, path):
    got = evaluate([ctx.binary("add", ctx.full(L.F32, (2, 2), 1.5), ctx.eye(2, 2, 0, L.F32))], {}, path)
    assert_exact(got[0], np.full((2, 2), 1.5, np.float32) + np.eye(2, dtype=np.float32))


def test_same_output_twice(ctx, path, rng):
    x = rand(rng, L.F32, (5,))
    tx = ctx.input("x", L.F32, x.shape)
    y = ctx.unary("exp", tx)
    got = evaluate([y, y], {"x": x}, path)
    assert_exact(got[0], got[1])


@pytest.mark.parametrize("threads", [1, 2, 3, 7])
def test_threads_give_identical_results(ctx, rng, threads):
    """The thread pool splits the outer axis; results must not depend on the thread count."""
    x = rand(rng, L.F32, (129, 67))
    w = rand(rng, L.F32, (67, 33))
    tx, tw = ctx.input("x", L.F32, x.shape), ctx.input("w", L.F32, w.shape)
    outs = [ctx.unary("relu", ctx.matmul(tx, tw)), ctx.reduce("sum", tx, 1),
            ctx.softmax(tx, -1), ctx.cumsum(tx, 0)]
    ref = L.compile(outs, threads=1).run({"x": x, "w": w})
    got = L.compile(outs, threads=threads).run({"x": x, "w": w})
    for r, g in zip(ref, got):
        assert_exact(g, r)


def test_run_twice_and_recompile_cached(ctx, rng):
    x = rand(rng, L.F32, (16,))
    tx = ctx.input("x", L.F32, x.shape)
    y = ctx.unary("sin", tx)
    p = L.compile([y])
    a, = p.run({"x": x})
    b, = p.run({"x": x})
    assert_exact(a, b)
    p2 = L.compile([y])   # same graph, same ctx: from the in-memory cache
    assert_exact(p2.run({"x": x})[0], a)
    c2 = L.Ctx()           # another ctx: same source, so the disk cache serves it
    t2 = c2.input("x", L.F32, x.shape)
    assert_exact(L.compile([c2.unary("sin", t2)]).run({"x": x})[0], a)
    c2.close()


def test_large_arrays_threaded(ctx, rng):
    x = rng.standard_normal((1 << 20,)).astype(np.float32)
    tx = ctx.input("x", L.F32, x.shape)
    got = L.compile([ctx.binary("mul", tx, tx), ctx.reduce("max", tx, 0)]).run({"x": x})
    assert_exact(got[0], x * x)
    assert_exact(got[1], x.max())


def test_symbolic_creation_reshape_broadcast(ctx, path, rng):
    """full_sym, reshape_sym and broadcast_to_sym with a symbolic dim."""
    n = ctx.var("n", 1, 50)
    x = ctx.input("x", L.F32, (n, 2))
    f = ctx.full(L.F32, (n, 2), 0.5)                       # full_sym
    r = ctx.reshape(ctx.binary("add", x, f), (2, n))        # reshape_sym (row-major reinterpretation)
    b = ctx.broadcast_to(ctx.input("b", L.F32, (1, 2)), (n, 2))   # broadcast_to_sym
    p = L.compile([r, b], **({"interpret": True} if path == "interp" else {}))
    bv = rand(rng, L.F32, (1, 2))
    for size in (1, 4, 50):
        xv = rand(rng, L.F32, (size, 2))
        got = p.run({"x": xv, "b": bv}, vars={"n": size})
        assert_exact(got[0], (xv + np.float32(0.5)).reshape(2, size))
        assert_exact(got[1], np.broadcast_to(bv, (size, 2)))


def test_tensor_introspection(ctx):
    n = ctx.var("n", 1, 9)
    x = ctx.input("x", L.F16, (4, n, 3))
    assert x.ndim == 3 and x.dtype == L.F16
    assert x.shape == (4, None, 3)
    s = L.fn["frit_tensor_shape_str"](ctx.ptr, x.ptr).decode()
    assert s.replace(" ", "") == "(4,n,3)", s


def test_null_tensor_keeps_earlier_error(ctx):
    """A failed builder returns NULL; passing that NULL on returns NULL and keeps the message."""
    a = ctx.input("a", L.F32, (2, 3))
    b = ctx.input("b", L.F32, (4, 5))
    assert not L.fn["frit_binary_t"](ctx.ptr, L.BF["add"], a.ptr, b.ptr)
    msg = ctx.error()
    assert "add" in msg.lower() or "broadcast" in msg.lower(), msg
    assert not L.fn["frit_unary_t"](ctx.ptr, L.UF["exp"], None)
    assert ctx.error() == msg
    assert L.fn["frit_last_status"](ctx.ptr) == 1   # FRIT_ERR_INVALID


def test_error_messages_name_op_shapes_dtypes(ctx):
    a = ctx.input("a", L.F32, (2, 3))
    b = ctx.input("b", L.I8, (4, 5))
    with pytest.raises(L.FritError) as ei:
        ctx.matmul(a, b)
    msg = str(ei.value)
    assert "matmul" in msg and "(2, 3)" in msg.replace("(2,3)", "(2, 3)"), msg
