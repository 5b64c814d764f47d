"""Linear algebra and neural-net ops against numpy: matmul/dot shape rules and dtypes, conv2d
(stride, padding, dilation, groups), pooling, softmax, log_softmax, take, take_along_axis,
one_hot, and conv2d's gradients. Oracles are plain numpy (einsum over explicit windows)."""
import numpy as np
import pytest

import frit
from frit import _lib as L
from util import EPS, assert_close, assert_exact, cast_values, dtname, evaluate, rand

MATMUL_SHAPES = [((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)),
                 ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (5, 4, 6)), ((1, 1), (1, 1)), ((3, 0), (0, 2)),
                 ((0, 3), (3, 2)), ((7, 13), (13, 9)), ((2, 3, 4), (2, 4, 1))]


def _mm_tol(dt, k):
    e = EPS.get(dt)
    return None if e is None else (4 * (k + 1) * e, 4 * (k + 1) * e * 9)


@pytest.mark.parametrize("dt", [L.F32, L.F64, L.I32, L.I8, L.F16, L.BF16, L.U8], ids=dtname)
@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=lambda s: "%s@%s" % s)
def test_matmul(ctx, path, rng, dt, shapes):
    sa, sb = shapes
    kind = "full" if dt in (L.I32, L.I8, L.U8) else "normal"
    a, b = rand(rng, dt, sa, kind=kind, scale=1.0), rand(rng, dt, sb, kind=kind, scale=1.0)
    ta, tb = ctx.input("a", dt, sa), ctx.input("b", dt, sb)
    out = ctx.matmul(ta, tb)
    got, = evaluate(out, {"a": a, "b": b}, path)
    if dt == L.BF16:
        want = cast_values(np.matmul(a.astype(np.float64), b.astype(np.float64)), L.BF16)
    else:
        want = np.matmul(a, b)  # integer matmul wraps in numpy too
    assert dtname(out.dtype) == dtname(dt)
    tol = _mm_tol(dt, sa[-1])
    if tol is None:
        assert_exact(got, want)
    else:
        assert_close(got, want, *tol)


def test_matmul_errors(ctx):
    a, b = ctx.input("a", L.F32, (3, 4)), ctx.input("b", L.F32, (5, 6))
    with pytest.raises(L.FritError):
        ctx.matmul(a, b)
    with pytest.raises(L.FritError):
        ctx.matmul(ctx.input("s", L.F32, ()), b)   # numpy: matmul of a 0-d operand is an error


def test_matmul_mixed_dtypes(ctx, path, rng):
    a, b = rand(rng, L.I8, (3, 4)), rand(rng, L.F32, (4, 2))
    ta, tb = ctx.input("a", L.I8, a.shape), ctx.input("b", L.F32, b.shape)
    out = ctx.matmul(ta, tb)
    got, = evaluate(out, {"a": a, "b": b}, path)
    assert dtname(out.dtype) == "f32"
    assert_close(got, a.astype(np.float32) @ b, 1e-5, 1e-4)


@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((), (3, 2)),
                                    ((2, 3, 4), (5, 4, 2)), ((4,), (2, 4, 3)), ((2, 3), ())],
                         ids=lambda s: "%s.%s" % s)
def test_dot(ctx, path, rng, shapes):
    sa, sb = shapes
    a, b = rand(rng, L.F64, sa), rand(rng, L.F64, sb)
    ta, tb = ctx.input("a", L.F64, sa), ctx.input("b", L.F64, sb)
    got, = evaluate(ctx.dot(ta, tb), {"a": a, "b": b}, path)
    assert_close(got, np.dot(a, b), 1e-13, 1e-12)


def np_conv2d(x, w, bias, stride, padding, dilation, groups):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, [(0, 0), (0, 0), (padding[0], padding[0]), (padding[1], padding[1])])
    oh = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow), np.float64)
    og = o // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg].astype(np.float64)
        ws = w[g * og:(g + 1) * og].astype(np.float64)
        for i in range(kh):
            for j in range(kw):
                win = xs[:, :, i * dilation[0]: i * dilation[0] + stride[0] * (oh - 1) + 1: stride[0],
                         j * dilation[1]: j * dilation[1] + stride[1] * (ow - 1) + 1: stride[1]]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", win, ws[:, :, i, j])
    if bias is not None:
        out += bias.astype(np.float64)[None, :, None, None]
    return out


CONVS = [  # x shape, w shape, stride, padding, dilation, groups, bias
    ((1, 1, 5, 5), (1, 1, 3, 3), (1, 1), (0, 0), (1, 1), 1, False),
    ((2, 3, 7, 6), (4, 3, 3, 2), (1, 1), (1, 0), (1, 1), 1, True),
    ((1, 2, 9, 9), (3, 2, 3, 3), (2, 2), (1, 1), (1, 1), 1, True),
    ((1, 2, 9, 8), (2, 2, 2, 3), (1, 2), (0, 2), (2, 1), 1, False),
    ((2, 4, 6, 6), (6, 2, 3, 3), (1, 1), (1, 1), (1, 1), 2, True),
    ((1, 4, 5, 5), (4, 1, 3, 3), (1, 1), (1, 1), (1, 1), 4, False),   # depthwise
    ((1, 3, 4, 4), (2, 3, 1, 1), (1, 1), (0, 0), (1, 1), 1, True),    # 1x1
    ((1, 1, 3, 3), (1, 1, 5, 5), (1, 1), (2, 2), (1, 1), 1, False),   # kernel > input
    # large enough for the product form (tensor/nn.c conv_as_gemm): padding, stride, dilation
    ((8, 16, 32, 32), (32, 16, 3, 3), (1, 1), (1, 1), (1, 1), 1, True),
    ((8, 16, 45, 40), (32, 16, 3, 2), (2, 1), (2, 0), (1, 2), 1, False),
    # im2col (tensor/nn.c conv_im2col): a CNN's 5x5 conv, its input gradient (O = 8, padded to
    # 16 columns and cut back), its weight gradient (a map-sized kernel, tiny output), and
    # O = 24 with stride, padding and dilation
    ((8, 8, 12, 12), (16, 8, 5, 5), (1, 1), (0, 0), (1, 1), 1, True),
    ((16, 16, 8, 8), (8, 16, 5, 5), (1, 1), (4, 4), (1, 1), 1, False),
    ((8, 32, 12, 12), (16, 32, 8, 8), (1, 1), (0, 0), (1, 1), 1, False),
    ((8, 6, 20, 18), (24, 6, 3, 3), (2, 1), (1, 2), (2, 1), 1, True),
    # tap sums (tensor/nn.c conv_taps: C*KH*KW <= 32, stride 1): a CNN's conv1 with "same"
    # padding, and padding with dilation
    ((8, 1, 28, 28), (8, 1, 5, 5), (1, 1), (2, 2), (1, 1), 1, True),
    ((2, 3, 10, 9), (4, 3, 3, 2), (1, 1), (2, 1), (2, 3), 1, False),
]


@pytest.mark.parametrize("dt", [L.F32, L.F64], ids=dtname)
@pytest.mark.parametrize("case", CONVS, ids=lambda c: "x%s-w%s-s%s-p%s-d%s-g%d-%s" % (
    c[0], c[1], c[2], c[3], c[4], c[5], "bias" if c[6] else "nobias"))
def test_conv2d(ctx, path, rng, dt, case):
    xs, ws, stride, padding, dilation, groups, has_bias = case
    x, w = rand(rng, dt, xs, scale=1.0), rand(rng, dt, ws, scale=1.0)
    b = rand(rng, dt, (ws[0],), scale=1.0) if has_bias else None
    tx, tw = ctx.input("x", dt, xs), ctx.input("w", dt, ws)
    tb = ctx.input("b", dt, b.shape) if has_bias else None
    ins = {"x": x, "w": w}
    if has_bias:
        ins["b"] = b
    got, = evaluate(ctx.conv2d(tx, tw, tb, stride, padding, dilation, groups), ins, path)
    want = np_conv2d(x, w, b, stride, padding, dilation, groups)
    k = ws[1] * ws[2] * ws[3]
    tol = 8 * (k + 1) * EPS[dt]
    assert_close(got, want, tol, tol * 4)


@pytest.mark.parametrize("dt", [L.I32, L.F16], ids=dtname)
def test_conv2d_im2col_dtypes(ctx, path, rng, dt):
    # the im2col path computes in the promoted dtype (f32 for f16) and casts back
    xs, ws = (8, 8, 12, 12), (16, 8, 5, 5)
    x, w = rand(rng, dt, xs, scale=1.0), rand(rng, dt, ws, scale=1.0)
    got, = evaluate(ctx.conv2d(ctx.input("x", dt, xs), ctx.input("w", dt, ws), None, (1, 1), (1, 1), (1, 1), 1),
                    {"x": x, "w": w}, path)
    want = np_conv2d(x, w, None, (1, 1), (1, 1), (1, 1), 1)
    if dt == L.I32:
        assert_exact(got, want.astype(np.int64).astype(np.int32))
    else:
        assert_close(got, want, 8 * 201 * EPS[L.F32] + 2 * EPS[dt], 4 * EPS[dt] * 201)


def np_pool(x, kernel, stride, padding, kind):
    n = x.shape[:-2]
    h, w = x.shape[-2:]
    oh = (h + 2 * padding[0] - kernel[0]) // stride[0] + 1
    ow = (w + 2 * padding[1] - kernel[1]) // stride[1] + 1
    fill = -np.inf if kind == "max" else np.nan
    xp = np.pad(x.astype(np.float64), [(0, 0)] * len(n) + [(padding[0],) * 2, (padding[1],) * 2],
                constant_values=fill)
    out = np.zeros(n + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            win = xp[..., i * stride[0]: i * stride[0] + kernel[0], j * stride[1]: j * stride[1] + kernel[1]]
            win = win.reshape(n + (-1,))
            out[..., i, j] = np.max(win, -1) if kind == "max" else np.nanmean(win, -1)
    return out


POOLS = [((2, 3, 6, 6), (2, 2), (2, 2), (0, 0)), ((1, 1, 7, 5), (3, 3), (2, 1), (1, 1)),
         ((2, 5, 5), (3, 2), (1, 2), (1, 0)), ((1, 2, 4, 4), (1, 1), (1, 1), (0, 0)),
         ((1, 1, 5, 5), (5, 5), (1, 1), (2, 2))]


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("case", POOLS, ids=str)
def test_pool2d(ctx, path, rng, kind, case):
    xs, kernel, stride, padding = case
    x = rand(rng, L.F32, xs)
    tx = ctx.input("x", L.F32, xs)
    f = ctx.max_pool2d if kind == "max" else ctx.avg_pool2d
    got, = evaluate(f(tx, kernel, stride, padding), {"x": x}, path)
    want = np_pool(x, kernel, stride, padding, kind)
    if kind == "max":
        assert_exact(got, want.astype(np.float32))
    else:
        assert_close(got, want, 1e-6, 1e-6)


def np_softmax(x, axis):
    x = x.astype(np.float64)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


@pytest.mark.parametrize("dt", [L.F32, L.F64, L.F16, L.BF16], ids=dtname)
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax(ctx, path, rng, dt, axis):
    x = rand(rng, dt, (4, 7, 5), scale=4.0)
    x[0, 0, 0] = 80.0 if dt in (L.F32, L.F64) else 8.0  # large values: needs the max shift
    x = cast_values(x, dt)
    tx = ctx.input("x", dt, x.shape)
    got = evaluate([ctx.softmax(tx, axis), ctx.log_softmax(tx, axis)], {"x": x}, path)
    sm = np_softmax(x, axis)
    lsm = np.log(sm)
    e = EPS[dt]
    assert_close(got[0], sm, 16 * e, 16 * e, "softmax")
    assert_close(got[1], lsm, 16 * e, 16 * e * 10, "log_softmax")


def test_softmax_inf(ctx, path):
    x = np.array([[0.0, -np.inf, 1.0], [-np.inf, -np.inf, 2.0]], np.float32)
    tx = ctx.input("x", L.F32, x.shape)
    got, = evaluate(ctx.softmax(tx, -1), {"x": x}, path)
    assert_close(got, np_softmax(x, -1), 1e-6, 1e-7)


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_take(ctx, path, rng, axis):
    x = rand(rng, L.F32, (4, 5))
    n = x.size if axis is None else x.shape[axis]
    idx = np.array([[0, 1, n - 1], [-1, -n, 2], [n + 3, -n - 7, 1]], np.int64)
    tx, ti = ctx.input("x", L.F32, x.shape), ctx.input("i", L.I64, idx.shape)
    got, = evaluate(ctx.take(tx, ti, axis), {"x": x, "i": idx}, path)
    # frit: negatives count from the end, out-of-range indices are clamped
    wrapped = np.where(idx < 0, idx + n, idx)
    want = np.take(x, np.clip(wrapped, 0, n - 1), axis=axis)
    assert_exact(got, want)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_take_along_axis(ctx, path, rng, axis):
    x = rand(rng, L.I32, (3, 4, 5), kind="full")
    shp = list(x.shape)
    shp[axis] = 6
    n = x.shape[axis]
    idx = rng.integers(-n, n, size=shp).astype(np.int64)
    tx, ti = ctx.input("x", L.I32, x.shape), ctx.input("i", L.I64, idx.shape)
    got, = evaluate(ctx.take_along_axis(tx, ti, axis), {"x": x, "i": idx}, path)
    assert_exact(got, np.take_along_axis(x, np.where(idx < 0, idx + n, idx), axis))


def test_take_along_axis_argmax(ctx, path, rng):
    """The common use: gather the max via argmax(keepdims)."""
    x = rand(rng, L.F32, (4, 6))
    tx = ctx.input("x", L.F32, x.shape)
    am = ctx.reduce("argmax", tx, 1, keepdims=True)
    got, = evaluate(ctx.take_along_axis(tx, am, 1), {"x": x}, path)
    assert_exact(got, np.max(x, 1, keepdims=True))


@pytest.mark.parametrize("dt", [L.F32, L.I64, L.BOOL, L.U8], ids=dtname)
def test_one_hot(ctx, path, rng, dt):
    idx = rng.integers(0, 7, size=(3, 4)).astype(np.int64)
    ti = ctx.input("i", L.I64, idx.shape)
    out = ctx.one_hot(ti, 7, dt)
    got, = evaluate(out, {"i": idx}, path)
    assert dtname(out.dtype) == dtname(dt)
    assert_exact(got, np.eye(7, dtype=np.float64)[idx].astype(L.value_dtype(dt)))


def np_conv2d_grads(x, w, g, stride, padding, dilation):
    """d/dx and d/dw of sum(conv2d(x, w) * g) (groups 1), by scattering each tap's window back."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    _, _, oh, ow = g.shape
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2])
    gx, gw = np.zeros_like(xp), np.zeros(w.shape)
    g64, w64 = g.astype(np.float64), w.astype(np.float64)
    for i in range(kh):
        for j in range(kw):
            rows = slice(i * dilation[0], i * dilation[0] + stride[0] * (oh - 1) + 1, stride[0])
            cols = slice(j * dilation[1], j * dilation[1] + stride[1] * (ow - 1) + 1, stride[1])
            gx[:, :, rows, cols] += np.einsum("nohw,oc->nchw", g64, w64[:, :, i, j])
            gw[:, :, i, j] = np.einsum("nohw,nchw->oc", g64, xp[:, :, rows, cols])
    return gx[:, :, padding[0]:padding[0] + h, padding[1]:padding[1] + wd], gw


GRAD_CONVS = [  # x, w, stride, padding, dilation: large enough for the col2im input gradient
    ((16, 8, 12, 12), (16, 8, 5, 5), (1, 1), (0, 0), (1, 1)),    # a CNN's conv2
    ((16, 8, 20, 19), (16, 8, 3, 3), (2, 1), (1, 0), (1, 1)),    # stride
    ((8, 8, 24, 24), (16, 8, 3, 2), (1, 1), (2, 1), (2, 3)),     # dilation, C*KH*KW not a multiple of 16
    ((16, 1, 28, 28), (8, 1, 5, 5), (1, 1), (2, 2), (1, 1)),     # a CNN's conv1, "same" padding
]


@pytest.mark.parametrize("case", GRAD_CONVS, ids=lambda c: "x%s-w%s-s%s-p%s-d%s" % c)
def test_conv2d_grads(rng, case):
    xs, ws, stride, padding, dilation = case
    x, w = rand(rng, L.F32, xs, scale=1.0), rand(rng, L.F32, ws, scale=1.0)
    y = np_conv2d(x, w, None, stride, padding, dilation, 1)
    g = rand(rng, L.F32, y.shape, scale=1.0)
    loss = lambda a, b: frit.sum(frit.conv2d(a, b, stride=stride, padding=padding, dilation=dilation) * g)  # noqa: E731
    gx, gw = frit.jit(frit.grad(loss, argnums=(0, 1)), dynamic=False)(x, w)
    want_x, want_w = np_conv2d_grads(x, w, g, stride, padding, dilation)
    tol_x = 8 * (ws[0] * ws[2] * ws[3] + 1) * EPS[L.F32]
    tol_w = 8 * (y.shape[0] * y.shape[2] * y.shape[3] + 1) * EPS[L.F32]
    assert_close(np.asarray(gx), want_x, tol_x, tol_x * 4)
    assert_close(np.asarray(gw), want_w, tol_w, tol_w * 4)


def test_conv2d_grad_x_f16(rng):
    # the col2im input gradient of an f16 conv accumulates in f32 (as the forward does)
    xs, ws = (16, 8, 12, 12), (16, 8, 5, 5)
    x, w = rand(rng, L.F16, xs, scale=1.0), rand(rng, L.F16, ws, scale=1.0)
    g = rand(rng, L.F16, (16, 16, 8, 8), scale=1.0)
    loss = lambda a: frit.sum(frit.conv2d(a, w).astype(np.float32) * g.astype(np.float32))  # noqa: E731
    got = np.asarray(frit.jit(frit.grad(loss), dynamic=False)(x))
    want, _ = np_conv2d_grads(x, w, g, (1, 1), (0, 0), (1, 1))
    assert got.dtype == np.float16
    assert_close(got, want, 4 * EPS[L.F16], 4 * EPS[L.F16] * np.abs(want).max())
