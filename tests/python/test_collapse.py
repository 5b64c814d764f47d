"""Loop collapse (src/codegen/opt_collapse.c): adjacent loops that every index walks as one become
one loop. A (N, 8, 14, 14) elementwise op ran as rows of 14 that a 16-lane vectoriser left scalar
(5x slower than the same op on a flat array). The merge must only happen where every access
agrees, so the results are checked against numpy on layouts where it must not (transposes,
slices, broadcasts, gates), and the merged kernels are checked to have lost their short loops."""
import re

import numpy as np
import pytest

import frit


def _rand(shape, seed, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _loops(src, kernel):
    body = src[src.index("/* kernel %d:" % kernel):]
    nxt = body.find("/* kernel %d:" % (kernel + 1))
    body = body if nxt < 0 else body[:nxt]
    return re.findall(r"for \(int64_t r\d+ = [^;]*; r\d+ < ([^;]*);", body)


def test_contiguous_elementwise_is_one_loop():
    x = _rand((16, 8, 14, 14), 0)
    f = frit.jit(lambda a: frit.erf(a) * 2.0 + 1.0, dynamic=False)
    np.testing.assert_allclose(np.asarray(f(x)), np.vectorize(__import__("math").erf)(x.astype(np.float64)) * 2 + 1,
                               rtol=1e-6, atol=1e-6)
    loops = _loops(f.lower(x).source, 0)
    assert len(loops) == 1, loops  # the g0 loop over all 25088 elements, nothing inside it


def test_broadcast_keeps_the_axes_it_reads_apart():
    x, b = _rand((16, 8, 14, 14), 1), _rand((8, 1, 1), 2)
    f = frit.jit(lambda a, c: a * c + 1.0, dynamic=False)
    np.testing.assert_array_equal(np.asarray(f(x, b)), x * b + np.float32(1.0))
    loops = _loops(f.lower(x, b).source, 0)
    # (n), (c) and one loop over the 196 pixels: c is read by the bias, so it stays its own loop
    assert any("196" in e for e in loops), loops
    assert not any(e.strip("()int64_LL ") in ("14",) for e in loops), loops


@pytest.mark.parametrize("perm", [(0, 1, 3, 2), (0, 2, 1, 3), (1, 0, 2, 3), (3, 2, 1, 0)])
def test_transposed_reads_match_numpy(perm):
    x = _rand((6, 5, 7, 9), 3)
    f = frit.jit(lambda a: frit.transpose(a, perm) * 3.0 - frit.transpose(a, perm) ** 2, dynamic=False)
    want = np.transpose(x, perm) * np.float32(3.0) - np.transpose(x, perm) ** 2
    np.testing.assert_allclose(np.asarray(f(x)), want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dynamic", [False, True])
def test_slices_pads_and_flips_match_numpy(dynamic):
    x = _rand((4, 6, 10, 12), 4)
    f = frit.jit(lambda a: a[:, 1:5, 2:9, ::2] + frit.flip(a, axis=3)[:, 1:5, 2:9, 1::2], dynamic=dynamic)
    want = x[:, 1:5, 2:9, ::2] + np.flip(x, axis=3)[:, 1:5, 2:9, 1::2]
    np.testing.assert_array_equal(np.asarray(f(x)), want)
    g = frit.jit(lambda a: frit.pad(a, ((0, 0), (0, 0), (1, 1), (2, 0))) * 2.0, dynamic=dynamic)
    np.testing.assert_array_equal(np.asarray(g(x)), np.pad(x, ((0, 0), (0, 0), (1, 1), (2, 0))) * np.float32(2))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8])
@pytest.mark.parametrize("axes", [(1, 2, 3), (2, 3), (0, 1), (0, 2)])
def test_reductions_over_merged_axes_match_numpy(dtype, axes):
    x = (_rand((5, 6, 7, 8), 5) * 10).astype(dtype)
    f = frit.jit(lambda a: frit.sum(a, axis=axes), dynamic=False)
    got, want = np.asarray(f(x)), np.sum(x, axis=axes, dtype=x.dtype if dtype != np.uint8 else np.uint64)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-5)


def test_iota_and_where_over_ranges_match_numpy():
    x = _rand((3, 4, 5, 6), 6)
    f = frit.jit(lambda a: frit.where(a > 0, a, frit.arange(360, dtype=frit.float32).reshape((3, 4, 5, 6))), dynamic=False)
    np.testing.assert_array_equal(np.asarray(f(x)), np.where(x > 0, x, np.arange(360, dtype=np.float32).reshape(3, 4, 5, 6)))


def test_eager_ops_on_odd_shapes_match_numpy():
    for shape in [(2, 3, 14, 14), (1, 1, 1, 17), (7, 1, 13), (3, 28, 28)]:
        x = _rand(shape, 7)
        np.testing.assert_allclose(np.asarray(frit.tanh(frit.asarray(x)) + 1), np.tanh(x) + 1, rtol=1e-6, atol=1e-6)


def test_pool_of_a_channels_last_array_runs_along_the_channels():
    """opt.c innermost_choice: a max pool reading an (N, H, W, C) array through a transpose and
    writing (N, C, OH, OW) ran its innermost loop along the output's OW, each of its four loads
    2C floats apart (no vectors: 7x slower than running along C, where all four are contiguous)."""
    from frit.nn import functional as F
    x = _rand((8, 14, 14, 48), 8)
    f = frit.jit(lambda a: F.max_pool2d(frit.transpose(a, (0, 3, 1, 2)), 2), dynamic=False)
    want = x.transpose(0, 3, 1, 2).reshape(8, 48, 7, 2, 7, 2).max(axis=(3, 5))
    np.testing.assert_array_equal(np.asarray(f(x)), want)
    src = f.lower(x).source
    k = [i for i, kk in enumerate(f.lower(x).kernels) if "max" in kk.ops][0]
    loops = _loops(src, k)
    assert "48" in loops[-1] or "16" in loops[-1], loops  # C (or a 16-lane slice of it) innermost


@pytest.mark.parametrize("shape", [(4, 5, 6, 7), (3, 16, 9, 32)])
def test_transposed_binary_ops_match_numpy(shape):
    a = _rand(shape, 9)
    b = _rand(tuple(shape[i] for i in (0, 2, 3, 1)), 10)
    f = frit.jit(lambda x, y: x * 2.0 + frit.transpose(y, (0, 3, 1, 2)) - frit.transpose(y, (0, 3, 1, 2)) ** 2, dynamic=False)
    bt = b.transpose(0, 3, 1, 2)
    np.testing.assert_allclose(np.asarray(f(a, b)), a * np.float32(2) + bt - bt ** 2, rtol=1e-6, atol=1e-6)


def test_bool_to_float_goes_through_int32():
    """render.c: gcc's vectoriser reads a compare's 0/1 as a 1-bit type whose conversion to float it
    does not vectorise; a max pool's tie count (the sum of (x == max) over a window) kept the
    GELU backward it was fused into scalar, 6x slower. The cast goes through int32."""
    x, y = _rand((4, 3, 10, 10), 11), _rand((4, 3, 10, 10), 12)
    f = frit.jit(lambda a, b: (a > 0).astype(frit.float32) * b + (a < b).astype(frit.float64), dynamic=False)
    np.testing.assert_allclose(np.asarray(f(x, y)), (x > 0).astype(np.float32) * y + (x < y).astype(np.float64),
                               rtol=1e-7, atol=1e-7)
    src = f.lower(x, y).source
    assert "(float)(int32_t)" in src and "(double)(int32_t)" in src, src[-2000:]


def test_pool_backward_runs_its_pairs_inside_the_row_loop():
    """opt_unroll.c unroll_short_inner: the max pool's backward wrote (.., OW, 2) with the window's
    2 columns as the innermost (vector) loop; the 2 stores now sit in a loop over OW."""
    from frit.nn import functional as F
    x = _rand((4, 8, 28, 28), 13)
    g = _rand((4, 8, 14, 14), 14)
    f = frit.jit(lambda x, g: frit.grad(lambda x: frit.sum(F.max_pool2d(x, 2) * g))(x), dynamic=False)
    got = np.asarray(f(x, g))
    win = x.reshape(4, 8, 14, 2, 14, 2)
    hit = win == win.max(axis=(3, 5), keepdims=True)
    want = (hit * (g[:, :, :, None, :, None] / hit.sum(axis=(3, 5), keepdims=True))).reshape(x.shape)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    lo = f.lower(x, g)
    k = [i for i, kk in enumerate(lo.kernels) if "where" in kk.ops][0]
    assert _loops(lo.source, k)[-1] not in ("((int64_t)2LL)",), _loops(lo.source, k)
    # grad_rules.c max_pool_rule: the compare is made again in x's layout, so no mask of the
    # window hits is stored between the count and the gradient (it was a uint8 buffer, read back
    # in pairs: 4x slower); realize.c rule 2 keeps the max itself, not its broadcast over windows
    assert "uint8_t *restrict" not in lo.source, [kk.ops for kk in lo.kernels]
    assert not any(kk.ops == ["expand"] for kk in lo.kernels), [kk.ops for kk in lo.kernels]


@pytest.mark.parametrize("channels", [8, 16])
def test_conv_taps_load_each_input_row_once_for_all_channels(channels):
    """opt_unroll.c unroll_shared_loads: conv1 of the CNN (one input channel, 25 taps, nn.c
    conv_taps) ran its 8 (or 16) output channels as a loop around the rows, loading the 25 shifted
    input rows again for each channel; the channels are now stores in the row loop, sharing them."""
    x = _rand((32, 1, 28, 28), 15)
    w = _rand((channels, 1, 5, 5), 16)
    f = frit.jit(lambda a, b: frit.conv2d(a, b, padding=2), dynamic=False)
    got = np.asarray(f(x, w))
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (2, 2), (2, 2)))
    want = sum(xp[:, :, i:i + 28, j:j + 28] * w[None, :, 0, i, j, None, None] for i in range(5) for j in range(5))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    lo = f.lower(x, w)
    k = [i for i, kk in enumerate(lo.kernels) if "mul" in kk.ops][0]
    loops = _loops(lo.source, k)
    assert "((int64_t)%dLL)" % channels not in loops, loops
    # nn.c conv_taps computes on the padded grid (28 rows of 32): one run of 896 pixels, whole
    # 16-lane vectors, instead of rows of 28 (a vector and a 12-lane remainder)
    assert loops[-1] == "((int64_t)896LL)", loops


@pytest.mark.parametrize("shape,pad,dil", [((3, 2, 13, 11), (1, 2), (1, 1)), ((2, 1, 9, 12), (0, 3), (2, 1)),
                                           ((2, 1, 10, 10), (2, 0), (1, 2))])
def test_conv_taps_on_the_padded_grid_match_numpy(shape, pad, dil):
    """The padded-grid taps cut WP - OW columns after each row and read dl*(KW-1) zeros past the
    last row: odd sizes, one-sided padding and dilation check both cuts, eagerly and under jit."""
    n, c, h, wd = shape
    x = _rand(shape, 17)
    w = _rand((16, c, 3, 3), 18)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    oh, ow = xp.shape[2] - dil[0] * 2, xp.shape[3] - dil[1] * 2
    want = sum(xp[:, ci, None, i * dil[0]:i * dil[0] + oh, j * dil[1]:j * dil[1] + ow] * w[None, :, ci, i, j, None, None]
               for ci in range(c) for i in range(3) for j in range(3))
    # big enough for the taps route (N*O*OH*OW*C*9 >= 2^22): the batch repeats
    reps = -(-(1 << 22) // (n * 16 * oh * ow * c * 9))
    xb = np.concatenate([x] * reps)
    f = lambda a, b: frit.conv2d(a, b, padding=pad, dilation=dil)  # noqa: E731
    for got in (np.asarray(frit.jit(f, dynamic=False)(xb, w)), np.asarray(f(frit.asarray(xb), frit.asarray(w)))):
        np.testing.assert_allclose(got, np.concatenate([want] * reps), rtol=1e-5, atol=1e-5)
