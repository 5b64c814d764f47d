"""Movement ops of the tensor API against numpy: reshape, permute, broadcast, squeeze, pad (3
modes), slicing with negative steps, flip, concat, stack, repeat, tile, and chains of them."""
import itertools

import numpy as np
import pytest

from frit import _lib as L
from util import assert_exact, cast_values, dtname, evaluate, rand

DTS = [L.F32, L.I8, L.BF16, L.BOOL, L.U64, L.F16]


def _x(rng, dt, shape):
    return rand(rng, dt, shape, kind="full")


@pytest.mark.parametrize("dt", DTS, ids=dtname)
def test_reshape(ctx, path, rng, dt):
    x = _x(rng, dt, (2, 3, 4))
    z = _x(rng, dt, (0, 3))
    s = _x(rng, dt, ())
    tx, tz, ts = ctx.input("x", dt, x.shape), ctx.input("z", dt, z.shape), ctx.input("s", dt, ())
    cases = [(tx, x, (4, 6)), (tx, x, (-1,)), (tx, x, (3, -1, 2)), (tx, x, (24, 1)),
             (tx, x, (1, 2, 1, 12)), (tz, z, (3, 0, 5)), (tz, z, (-1,)), (ts, s, (1, 1)),
             (ts, s, ())]
    outs = [ctx.reshape(t, shp) for t, _, shp in cases]
    # reshape of a permuted (non-contiguous) view follows the logical C order
    outs.append(ctx.reshape(ctx.permute(tx, [2, 0, 1]), (8, 3)))
    got = evaluate(outs, {"x": x, "z": z, "s": s}, path)
    for (_, v, shp), g in zip(cases, got):
        assert_exact(g, v.reshape(shp), "reshape %s" % (shp,))
    assert_exact(got[-1], x.transpose(2, 0, 1).reshape(8, 3), "reshape of permute")


def test_reshape_errors(ctx):
    tx = ctx.input("x", L.F32, (2, 3))
    for shp in [(4, 2), (-1, -1), (5, -1), (-2, 3)]:
        with pytest.raises(L.FritError):
            ctx.reshape(tx, shp)


@pytest.mark.parametrize("dt", [L.F32, L.I16, L.BF16], ids=dtname)
def test_permute_transpose(ctx, path, rng, dt):
    x = _x(rng, dt, (2, 3, 5))
    tx = ctx.input("x", dt, x.shape)
    perms = list(itertools.permutations(range(3)))
    outs = [ctx.permute(tx, p) for p in perms] + [ctx.transpose(tx), ctx.permute(tx, [-1, 0, 1])]
    got = evaluate(outs, {"x": x}, path)
    for p, g in zip(perms, got):
        assert_exact(g, x.transpose(p), "perm %s" % (p,))
    assert_exact(got[len(perms)], x.T)
    assert_exact(got[-1], x.transpose(-1, 0, 1))


def test_transpose_ranks(ctx, path, rng):
    xs = [rand(rng, L.F32, s) for s in [(), (5,), (3, 4), (2, 1, 3, 2)]]
    ts = [ctx.input("x%d" % i, L.F32, x.shape) for i, x in enumerate(xs)]
    got = evaluate([ctx.transpose(t) for t in ts], {"x%d" % i: x for i, x in enumerate(xs)}, path)
    for x, g in zip(xs, got):
        assert_exact(g, x.T)


@pytest.mark.parametrize("case", [((3, 1), (2, 3, 4)), ((), (2, 2)), ((1,), (0,)), ((1, 1), (5, 7)),
                                  ((4,), (3, 4)), ((2, 1, 1), (2, 3, 1))], ids=str)
def test_broadcast_to(ctx, path, rng, case):
    src, dst = case
    x = rand(rng, L.I32, src, kind="full")
    tx = ctx.input("x", L.I32, src)
    got, = evaluate(ctx.broadcast_to(tx, dst), {"x": x}, path)
    assert_exact(got, np.broadcast_to(x, dst))


def test_broadcast_to_errors(ctx):
    tx = ctx.input("x", L.F32, (3, 2))
    for dst in [(3, 3), (2,), (0, 2)]:
        with pytest.raises(L.FritError):
            ctx.broadcast_to(tx, dst)


def test_squeeze_unsqueeze(ctx, path, rng):
    x = rand(rng, L.F32, (1, 3, 1, 2, 1))
    tx = ctx.input("x", L.F32, x.shape)
    sq = [(), (0,), (-1,), (0, 2), (2, -1)]
    us = [0, 1, 5, -1, -6, 3]
    outs = [ctx.squeeze(tx, a) for a in sq] + [ctx.unsqueeze(tx, a) for a in us]
    got = evaluate(outs, {"x": x}, path)
    for a, g in zip(sq, got):
        assert_exact(g, np.squeeze(x, axis=a if a else None), "squeeze %s" % (a,))
    for a, g in zip(us, got[len(sq):]):
        assert_exact(g, np.expand_dims(x, a), "unsqueeze %s" % a)
    with pytest.raises(L.FritError):
        ctx.squeeze(tx, (1,))   # size 3: numpy raises


PADS = [((1, 2), (0, 3)), ((0, 0), (0, 0)), ((2, 2), (2, 2)), ((3, 0), (1, 4))]


@pytest.mark.parametrize("dt", [L.F32, L.I32, L.BF16, L.U8], ids=dtname)
@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
def test_pad(ctx, path, rng, dt, mode):
    x = _x(rng, dt, (5, 6))
    tx = ctx.input("x", dt, x.shape)
    value = 7.0
    # PADS entries are ((before0, after0), (before1, after1))
    outs = [ctx.pad(tx, [p[0][0], p[1][0]], [p[0][1], p[1][1]], mode, value) for p in PADS]
    got = evaluate(outs, {"x": x}, path)
    for p, g in zip(PADS, got):
        widths = [(p[0][0], p[0][1]), (p[1][0], p[1][1])]
        kw = {"constant_values": cast_values(np.array(value), dt)} if mode == "constant" else {}
        assert_exact(g, np.pad(x, widths, mode=mode, **kw), "pad %s %s" % (mode, widths))


def test_pad_1d_3d(ctx, path, rng):
    x1 = rand(rng, L.F64, (7,))
    x3 = rand(rng, L.F64, (2, 3, 4))
    t1, t3 = ctx.input("a", L.F64, x1.shape), ctx.input("b", L.F64, x3.shape)
    outs = [ctx.pad(t1, [3], [6], "reflect"), ctx.pad(t1, [0], [5], "edge"),
            ctx.pad(t1, [2], [1], "constant", -1.5),
            ctx.pad(t3, [1, 0, 2], [0, 2, 3], "reflect"), ctx.pad(t3, [1, 1, 1], [1, 1, 1], "edge")]
    got = evaluate(outs, {"a": x1, "b": x3}, path)
    assert_exact(got[0], np.pad(x1, (3, 6), "reflect"))
    assert_exact(got[1], np.pad(x1, (0, 5), "edge"))
    assert_exact(got[2], np.pad(x1, (2, 1), constant_values=-1.5))
    assert_exact(got[3], np.pad(x3, [(1, 0), (0, 2), (2, 3)], "reflect"))
    assert_exact(got[4], np.pad(x3, 1, "edge"))


SLICES = [
    (slice(1, 5), slice(None, None, 2)), (slice(None, None, -1), slice(None, None, -3)),
    (slice(-3, None), slice(None, -2)), (slice(5, 1, -1), slice(10, -10, -1)),
    (slice(100, None), slice(None)), (slice(None, None, -2), slice(7, 0, -2)),
    (slice(None, None, 3), slice(-1, -9, -1)), (slice(3, 3), slice(None)),
    (slice(-100, 100, 4), slice(2, 3)), (slice(6, None, -4), slice(-1, None, -5)),
]


@pytest.mark.parametrize("dt", [L.F32, L.I64, L.BF16, L.BOOL], ids=dtname)
def test_slice(ctx, path, rng, dt):
    x = _x(rng, dt, (7, 8))
    tx = ctx.input("x", dt, x.shape)
    outs = [ctx.getitem(tx, s) for s in SLICES]
    got = evaluate(outs, {"x": x}, path)
    for s, g in zip(SLICES, got):
        assert_exact(g, x[s], "x[%s]" % (s,))


def test_slice_step_zero_rejected(ctx):
    tx = ctx.input("x", L.F32, (4,))
    with pytest.raises(L.FritError):
        ctx.slice(tx, [None], [None], [0])


@pytest.mark.parametrize("axes", [(0,), (1,), (0, 1), None, (-1,), (2, 0)], ids=str)
def test_flip(ctx, path, rng, axes):
    x = rand(rng, L.I32, (3, 4, 5), kind="full")
    tx = ctx.input("x", L.I32, x.shape)
    got, = evaluate(ctx.flip(tx, axes), {"x": x}, path)
    assert_exact(got, np.flip(x, axes))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat(ctx, path, rng, axis):
    shapes = {0: [(2, 3), (0, 3), (4, 3)], 1: [(2, 1), (2, 0), (2, 5)], -1: [(2, 4), (2, 2)]}[axis]
    xs = [rand(rng, L.F32, s) for s in shapes]
    ts = [ctx.input("x%d" % i, L.F32, x.shape) for i, x in enumerate(xs)]
    got, = evaluate(ctx.concat(ts, axis), {"x%d" % i: x for i, x in enumerate(xs)}, path)
    assert_exact(got, np.concatenate(xs, axis))


def test_concat_mixed_dtypes(ctx, path, rng):
    a, b = rand(rng, L.I8, (3,)), rand(rng, L.F16, (2,))
    ta, tb = ctx.input("a", L.I8, a.shape), ctx.input("b", L.F16, b.shape)
    out = ctx.concat([ta, tb], 0)
    got, = evaluate(out, {"a": a, "b": b}, path)
    want = np.concatenate([a, b])
    assert dtname(out.dtype) == "f16"
    assert_exact(got, want)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_stack(ctx, path, rng, axis):
    xs = [rand(rng, L.U16, (3, 4), kind="full") for _ in range(3)]
    ts = [ctx.input("x%d" % i, L.U16, x.shape) for i, x in enumerate(xs)]
    got, = evaluate(ctx.stack(ts, axis), {"x%d" % i: x for i, x in enumerate(xs)}, path)
    assert_exact(got, np.stack(xs, axis))


@pytest.mark.parametrize("case", [(3, 0), (2, 1), (4, None), (0, 1), (1, -1)], ids=str)
def test_repeat(ctx, path, rng, case):
    reps, axis = case
    x = rand(rng, L.F32, (2, 3))
    tx = ctx.input("x", L.F32, x.shape)
    got, = evaluate(ctx.repeat(tx, reps, axis), {"x": x}, path)
    assert_exact(got, np.repeat(x, reps, axis=axis))


@pytest.mark.parametrize("case", [((2,), (3,)), ((2, 3), (2, 2)), ((2, 1, 3), (2, 2)),
                                  ((3,), ()), ((1, 2), (3,)), ((0, 2), (2, 3))], ids=str)
def test_tile(ctx, path, rng, case):
    reps, shape = case
    x = rand(rng, L.I32, shape, kind="full")
    tx = ctx.input("x", L.I32, shape)
    got, = evaluate(ctx.tile(tx, reps), {"x": x}, path)
    assert_exact(got, np.tile(x, reps))


def test_contiguous_is_identity(ctx, path, rng):
    x = rand(rng, L.F32, (4, 5))
    tx = ctx.input("x", L.F32, x.shape)
    y = ctx.contiguous(ctx.flip(ctx.transpose(tx), [0]))
    got = evaluate([y, ctx.binary("add", y, ctx.scalar(L.F32, 1.0))], {"x": x}, path)
    assert_exact(got[0], x.T[::-1])
    assert_exact(got[1], x.T[::-1] + np.float32(1))


def test_movement_chain(ctx, path, rng):
    """pad -> flip -> negative-step slice -> permute -> reshape -> broadcast, then an ALU op."""
    x = rand(rng, L.F32, (4, 6))
    tx = ctx.input("x", L.F32, x.shape)
    t = ctx.pad(tx, [1, 2], [3, 0], "constant", 0.5)                  # (8, 8)
    t = ctx.flip(t, [1])
    t = ctx.getitem(t, (slice(None, None, -3), slice(1, 7, 2)))       # (3, 3)
    t = ctx.permute(t, [1, 0])
    t = ctx.reshape(t, (9, 1))
    t = ctx.broadcast_to(t, (9, 4))
    y = ctx.binary("mul", t, ctx.getitem(ctx.reshape(tx, (24,)), (slice(20, None),)))
    got, = evaluate(y, {"x": x}, path)
    n = np.pad(x, [(1, 3), (2, 0)], constant_values=0.5)[:, ::-1][::-3, 1:7:2].T.reshape(9, 1)
    want = np.broadcast_to(n, (9, 4)) * x.reshape(24)[20:]
    assert_exact(got, want)
