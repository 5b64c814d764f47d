"""The default paths (eager ops, `frit.jit` with symbolic shapes) get the fast code of static
shapes: size-specialised kernel variants (src/runtime/specialize.c) compiled for the run's sizes
when a kernel's work is large, and whole-array sums staged over parallel partial sums for
symbolic sizes too. The results must be numpy's, and the default paths must actually take the
fast route. The op matrix and the numpy fuzzer also run with FRIT_SPECIALISE=always in CI."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import frit

HERE = os.path.dirname(os.path.abspath(__file__))


def _rand(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_large_matmul_under_default_jit_uses_a_variant_and_matches_numpy():
    f = frit.jit(lambda a, b: frit.maximum(a @ b + 1.0, 0.0))
    a, b = _rand((520, 260), 1), _rand((260, 515), 2)  # 2^26+ multiply-adds, odd sizes
    got = np.asarray(f(frit.asarray(a), frit.asarray(b)))
    want = np.maximum(a.astype(np.float64) @ b + 1.0, 0.0)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
    info = f.lower(frit.asarray(a), frit.asarray(b)).info
    assert "specialised for" in info, info
    # another size reuses the same program and gets its own variant
    a2, b2 = _rand((300, 700), 3), _rand((700, 330), 4)
    got2 = np.asarray(f(frit.asarray(a2), frit.asarray(b2)))
    np.testing.assert_allclose(got2, np.maximum(a2.astype(np.float64) @ b2 + 1.0, 0.0), rtol=1e-4, atol=1e-3)
    assert f.lower(frit.asarray(a2), frit.asarray(b2)).dynamic


def test_small_kernels_are_not_specialised():
    f = frit.jit(lambda a: (a * 2).sum(axis=0))
    a = _rand((30, 40), 5)
    np.testing.assert_allclose(np.asarray(f(frit.asarray(a))), (a * 2).sum(axis=0), rtol=1e-5, atol=1e-5)
    assert "specialised for" not in f.lower(frit.asarray(a)).info


def test_repeated_medium_size_is_specialised_on_second_run():
    f = frit.jit(lambda a: (a * a).sum(axis=1))
    a = _rand((1100, 1000), 6)  # 2^20 .. 2^26 iterations: compiled when seen twice
    x = frit.asarray(a)
    want = (a.astype(np.float64) ** 2).sum(axis=1)
    np.testing.assert_allclose(np.asarray(f(x)), want, rtol=1e-4)
    assert "specialised for" not in f.lower(x).info
    np.testing.assert_allclose(np.asarray(f(x)), want, rtol=1e-4)
    assert "specialised for" in f.lower(x).info


_CHILD = r"""
import numpy as np, frit
rng = np.random.default_rng(0)
a = rng.standard_normal((6, 7)).astype(np.float32)
b = rng.standard_normal((7, 5)).astype(np.float32)
f = frit.jit(lambda a, b: (a @ b, (a[:, ::-1] * 2).sum(axis=1), frit.roll(a, 2, 1)))
r = f(frit.asarray(a), frit.asarray(b))
np.testing.assert_allclose(np.asarray(r[0]), a @ b, rtol=1e-5, atol=1e-5)
np.testing.assert_allclose(np.asarray(r[1]), (a[:, ::-1] * 2).sum(axis=1), rtol=1e-5, atol=1e-5)
np.testing.assert_array_equal(np.asarray(r[2]), np.roll(a, 2, 1))
info = f.lower(frit.asarray(a), frit.asarray(b)).info
assert "specialised for" in info, info
print("ok")
"""


def test_always_mode_specialises_every_kernel():
    path = os.path.join(os.path.dirname(os.path.dirname(HERE)), "python")
    env = dict(os.environ, FRIT_SPECIALISE="always",
               PYTHONPATH=os.pathsep.join([path] + os.environ.get("PYTHONPATH", "").split(os.pathsep)))
    r = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("shape", [(0,), (1,), (255,), (256,), (257,), (3, 5), (100, 37), (2, 0, 3)])
def test_whole_array_sum_of_symbolic_size_is_staged_and_exact(shape):
    f = frit.jit(lambda t: frit.sum(t))
    i = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) * 7 - 3
    got = np.asarray(f(frit.asarray(i)))
    assert got == i.sum() and got.dtype == i.sum().dtype
    a = _rand(shape, 7)
    np.testing.assert_allclose(np.asarray(f(frit.asarray(a))), a.astype(np.float64).sum(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(frit.sum(frit.asarray(a))), a.astype(np.float64).sum(), rtol=1e-5, atol=1e-5)
    if min(shape) < 2:
        return  # jit keeps sizes 0 and 1 static: the static rule (large sizes only) applies
    c = f.lower(frit.asarray(a))
    assert c.dynamic
    # partial sums over parallel parts of 2048 elements or more (at least 1, at most 128), then
    # their sum and the tail's: two kernels, the first parallel. (1024 parts of one element each
    # made an eager sum of 1000 floats take 17 us.)
    launches = [k.launch for k in c.kernels]
    assert len(launches) == 2 and re.fullmatch(r"\(max\(min\(.+ / 2048, 128\), 1\)\)", launches[0]), launches
    assert launches[1] == "()", launches


def test_whole_array_sum_of_a_large_symbolic_size():
    """Past 2**20 elements an eager sum's size is an "N" variable, known to be large: it has up
    to 1024 parts. jit's size variables may be small, so its sum has up to 128 at any size."""
    f = frit.jit(lambda t: frit.sum(t))
    for n in ((1 << 20) + 3, 3 << 20):
        a = _rand((n,), 8)
        np.testing.assert_allclose(np.asarray(f(frit.asarray(a))), a.astype(np.float64).sum(), rtol=1e-5)
        np.testing.assert_allclose(np.asarray(frit.sum(frit.asarray(a))), a.astype(np.float64).sum(), rtol=1e-5)
        assert [k.launch for k in f.lower(frit.asarray(a)).kernels] == ["(max(min(n0 / 2048, 128), 1))", "()"]


@pytest.mark.parametrize("dynamic", [True, False])
@pytest.mark.parametrize("mkn", [(128, 128, 128), (64, 80, 70), (100, 130, 65), (256, 128, 64)])
def test_matmul_with_b_packed_in_panels_matches_numpy(dynamic, mkn):
    """Large matmuls read B through a copy packed in 32-column panels (tensor/linalg.c): the
    copy, the zero padding of a partial panel and the tiled kernel's panel reads must give
    numpy's product, with an epilogue fused after it."""
    m, k, n = mkn
    a, b, bias = _rand((m, k), 11), _rand((k, n), 12), _rand((n,), 13)
    f = frit.jit(lambda x, y, c: frit.maximum(x @ y + c, 0.0), dynamic=dynamic)
    args = [frit.asarray(v) for v in (a, b, bias)]
    want = np.maximum(a.astype(np.float64) @ b + bias, 0.0)
    np.testing.assert_allclose(np.asarray(f(*args)), want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(frit.maximum(args[0] @ args[1] + args[2], 0.0)), want,
                               rtol=1e-4, atol=1e-4)
    kernels = f.lower(*args).kernels
    packs = dynamic or n % 32 == 0  # static: sizes above the copy-pays threshold, whole panels
    assert len(kernels) == (2 if packs else 1), kernels


def test_matmul_whose_b_outgrows_the_caches_matches_numpy():
    """B of 33 MB (more than 16 L2s here): the tiled kernel takes taller thread blocks
    (opt_tile.c tiles_per_block), whose last block is cut short and clamped (298 rows)."""
    a, b = _rand((298, 4096), 16), _rand((4096, 2080), 17)
    f = frit.jit(lambda x, y: x @ y, dynamic=False)
    want = a.astype(np.float64) @ b
    np.testing.assert_allclose(np.asarray(f(frit.asarray(a), frit.asarray(b))), want, rtol=1e-4, atol=2e-3)


def test_packed_static_matmul_is_register_tiled():
    a, b = _rand((256, 128), 14), _rand((128, 256), 15)
    f = frit.jit(lambda x, y: x @ y, dynamic=False)
    np.testing.assert_allclose(np.asarray(f(frit.asarray(a), frit.asarray(b))), a.astype(np.float64) @ b,
                               rtol=1e-4, atol=1e-4)
    src = f.lower(frit.asarray(a), frit.asarray(b)).source
    mm = src[src.index("k1_"):]
    # a tile of accumulators over one k loop (6 rows x 2 vectors, or 6 x 2 of 16-float vectors), reading the panel consecutively
    assert mm.count("frit_fmaf(") in (8, 12) or mm.count(" + ") >= 8, mm[:3000]
    assert "frit_idiv_i64" not in mm and "frit_mod_i64" not in mm, mm[:3000]


def test_packed_matmul_with_bias_reads_its_panel_without_division():
    """x @ w + b: the bias is read along j in the epilogue, which once passed for B's own loads, so
    the packed panel's index stayed (j / 32, j % 32) and the j loop did not vectorise (10x slower)."""
    a, b, c = _rand((256, 128), 16), _rand((128, 256), 17), _rand((256,), 18)
    f = frit.jit(lambda x, y, z: x @ y + z, dynamic=False)
    np.testing.assert_allclose(np.asarray(f(a, b, c)), a.astype(np.float64) @ b + c, rtol=1e-4, atol=1e-4)
    src = f.lower(a, b, c).source
    mm = src[src.index("k1_"):]
    assert "frit_idiv_i64" not in mm and "frit_mod_i64" not in mm, mm[:3000]


def _has_avx512():
    try:
        return " avx512f" in open("/proc/cpuinfo").read()
    except OSError:
        return False


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("mkn", [(12, 64, 16), (13, 70, 48), (97, 64, 40), (200, 100, 784), (67, 129, 24),
                                 (130, 64, 8)])
def test_register_tile_edges_match_numpy(dtype, mkn):
    """The register tiler (codegen/opt_tile.c) takes any M of two tiles or more: rows past M in
    the last tile are clamped to row M - 1 and store its values again. Column counts that
    are one vector (8) but not two a tile get one vector a row. Static shapes, the default jit
    (called twice: the size-specialised variant) and eager, with a fused epilogue, against
    numpy; integers exactly."""
    m, k, n = mkn
    rng = np.random.default_rng(m * 1000 + n)
    if dtype == np.int32:
        a, b, c = (rng.integers(-50, 50, s).astype(dtype) for s in ((m, k), (k, n), (n,)))
    else:
        a, b, c = (rng.standard_normal(s).astype(dtype) for s in ((m, k), (k, n), (n,)))
    want = np.maximum(a.astype(np.float64) @ b + c, 0)
    fn = lambda x, y, z: frit.maximum(x @ y + z, 0)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)
    for f in (frit.jit(fn, dynamic=False), frit.jit(fn)):
        for _ in range(2):
            np.testing.assert_allclose(np.asarray(f(a, b, c)), want, **tol)
    got = np.asarray(fn(frit.asarray(a), frit.asarray(b), frit.asarray(c)))
    np.testing.assert_allclose(got, want, **tol)
    import re
    src = frit.jit(fn, dynamic=False).lower(a, b, c).source
    accs = len(re.findall(r"\bacc\d+ = \(", src))  # accumulators declared, one per tile element
    # the tiler's vector (frit_host_tile_lanes): 16 lanes of 4 bytes with AVX-512, 8 with AVX2;
    # a tile of 8 rows x 2 vectors with AVX-512's 32 registers (6 x 2 with AVX2's 16) where N
    # holds two vectors, else 8 rows x 1; two tiles of rows (fewer rows a tile for M of 12 to 15)
    lanes = max(8, (64 if _has_avx512() else 32) // np.dtype(dtype).itemsize)
    rows = (8 if _has_avx512() else 6) if n % (2 * lanes) == 0 else 8
    rows = m // 2 if rows > 6 and 12 <= m < 2 * rows else rows
    tiled = n % lanes == 0 and m >= 2 * rows
    if tiled:  # (an untiled product may keep its sums in a register array instead)
        assert accs >= rows, src[-3000:]


def test_symbolic_panel_reads_need_no_division_by_a_size():
    """A reshape that keeps its leading dims maps them one to one (schedule/rangeify.c): the
    generic (symbolic-size) matmul reads B's panels at (k*32 + j%32 + (j/32)*K*32), with no
    division by a run-time size in the k loop (which made a 64x64 product 6x slower)."""
    import re
    a = _rand((64, 64), 16)
    f = frit.jit(lambda x: x @ x)
    np.testing.assert_allclose(np.asarray(f(frit.asarray(a))), a.astype(np.float64) @ a, rtol=1e-4, atol=1e-4)
    src = f.lower(frit.asarray(a)).source
    product = src[src.index("mul_sum"):]
    assert not re.search(r"frit_(idiv|mod)_i64\([^;]*, (v\d+|var\d+)\)", product), product[:3000]


@pytest.mark.parametrize("dynamic", [False, True])
def test_large_conv_product_is_a_vectorised_register_tile(dynamic):
    """A conv too large for im2col patches (tensor/nn.c conv_as_gemm) is one product over the
    channel and tap ranges: the tiler takes the output column and the channels as its rows and
    columns, and the 3x3 taps inside the channel loop are written out copy by copy
    (codegen/linear.c), so that gcc vectorises the tile's lanes around a single loop (with the
    tap loops nested, it kept the kernel scalar at 13 GFLOP/s). The tiles store the NCHW output
    directly, a scatter per tile (schedule/rangeify.c). Against numpy's im2col product."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((8, 64, 64, 64)).astype(np.float32)
    w = rng.standard_normal((32, 64, 3, 3)).astype(np.float32)
    f = frit.jit(lambda a, b: frit.conv2d(a, b, padding=(1, 1)), dynamic=dynamic)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))  # (N, C, H, W, 3, 3)
    want = np.einsum("nchwij,ocij->nohw", win, w.astype(np.float64), optimize=True)
    for _ in range(2):  # the second call of the default jit runs the size-specialised variant
        np.testing.assert_allclose(np.asarray(f(x, w)), want, rtol=1e-4, atol=1e-3)
    if not dynamic:
        src = f.lower(x, w).source
        product = src[src.index("mul_sum"):]
        assert "{ const int64_t r" in product and "#pragma omp simd\n" in product, product[:4000]
        assert product.count("frit_fmaf(") >= 6, product[:4000]
        # the product loops over (N, OH, OW, O) and stores NCHW itself: no transposing kernel
        names = [k.name for k in f.lower(x, w).kernels]
        assert not any("permute" in n for n in names), names


@pytest.mark.parametrize("m", [13, 20, 67])
def test_tiled_in_place_update_applies_once_per_row(m):
    """A donated parameter updated in place by a tiled product's epilogue (p - lr * a @ b: the
    kernel reads p and writes p's memory): the last tile's rows past M read row M - 1 but must not
    store it again, which would apply row M - 1's update several times (the SGD step of a dense
    layer went wrong that way). M = 20 takes 4-row tiles, 13 and 67 (primes) gate those stores."""
    rng = np.random.default_rng(m)
    p, a, b = (rng.standard_normal(s).astype(np.float32) for s in ((m, 16), (m, 64), (64, 16)))
    want = p.astype(np.float64) - 0.5 * (a.astype(np.float64) @ b)
    f = frit.jit(lambda p, a, b: p - 0.5 * (a @ b), donate_argnums=0, dynamic=False)
    got = np.asarray(f(p.copy(), a, b))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def _ieee_minmax(op, x, c):
    """IEEE 754-2019 maximum/minimum (frit's documented semantics): NaN propagates, and of two
    zeros max gives +0 unless both are -0 (min: -0 unless both are +0)."""
    with np.errstate(invalid="ignore"):
        r = (np.maximum if op == "max" else np.minimum)(x, c)
    z = (x == 0) & (c == 0)
    neg = np.signbit(x) & np.signbit(c) if op == "max" else np.signbit(x) | np.signbit(c)
    return np.where(z, np.where(neg, -0.0, 0.0).astype(x.dtype), r)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("c", [0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, "tiny", "-tiny"])
@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_against_a_constant_keep_nan_and_signed_zeros(dt, c, op):
    """max/min with a constant operand (a ReLU, a clip) render as one compare and a blend
    (cg_render_minmax_const) instead of the full ordering: NaN, infinities and both zeros must
    still come out as IEEE maximum/minimum, with the constant on either side, eager and under jit
    (bit for bit, so the zeros' signs count). This test found that Python scalars were cached by
    value, -0.0 == 0.0: max(x, -0.0) after max(x, 0.0) in one process computed the latter."""
    tiny = np.finfo(dt).smallest_subnormal
    c = {"tiny": tiny, "-tiny": -tiny}.get(c, c)
    x = np.array([np.nan, -np.nan, 0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, 3.0, -1e-30, tiny, -tiny] * 7, dt)
    fn = frit.maximum if op == "max" else frit.minimum
    want = _ieee_minmax(op, x, dt(c))
    # a scalar fixed in the loop (eager: held in a buffer; jit: a 0-d argument) renders as a
    # compare against its cut (frit_maxf_cut: the float below -0 for -0, inf for NaN) and a blend
    cj = frit.jit(lambda a, k: fn(a, k))
    for f in (lambda a: fn(a, c), lambda a: fn(c, a)):
        for got in (f(frit.asarray(x)), frit.jit(f)(x), cj(x, np.array(c, dt))):
            got = np.asarray(got)
            assert got.dtype == dt
            same = (got.view(np.uint32 if dt == np.float32 else np.uint64) == want.view(got.view(
                np.uint32 if dt == np.float32 else np.uint64).dtype)) | (np.isnan(got) & np.isnan(want))
            assert same.all(), (op, c, x[~same], got[~same], want[~same])


def _ieee_reduce(op, x, axis):
    """IEEE maximum/minimum folded over `axis` (numpy's max keeps the first of two equal zeros)."""
    r = np.moveaxis(x, axis, -1)
    acc = r[..., 0]
    for i in range(1, r.shape[-1]):
        acc = _ieee_minmax(op, acc, r[..., i])
    return acc


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 2, 4, 7])
@pytest.mark.parametrize("op", ["max", "min"])
def test_short_max_min_reductions_keep_nan_and_signed_zeros(dt, n, op):
    """A max/min over a few elements is unrolled (opt_unroll.c) into a plain compare-select chain
    with NaN and zero flags resolved at the end (minmax_split), not a fold of frit_maxf: the
    result must still be IEEE maximum/minimum bit for bit (the zeros' signs, NaN anywhere in the
    window, infinities), eagerly, under jit and as a 2x2 max-pool's windows."""
    rng = np.random.default_rng(n)
    special = np.array([np.nan, 0.0, -0.0, np.inf, -np.inf, 1.0, -1.0, 2.5], dt)
    x = special[rng.integers(0, len(special), (40, n))]
    x[:8] = rng.choice(np.array([0.0, -0.0], dt), (8, n))  # rows of zeros only
    want = _ieee_reduce(op, x, 1)
    red = frit.max if op == "max" else frit.min
    ut = np.uint32 if dt == np.float32 else np.uint64
    for got in (red(frit.asarray(x), axis=1), frit.jit(lambda a: red(a, axis=1))(x)):
        got = np.asarray(got)
        same = (got.view(ut) == want.view(ut)) | (np.isnan(got) & np.isnan(want))
        assert same.all(), (op, x[~same], got[~same], want[~same])
    if op == "max" and n == 4:
        img = special[rng.integers(0, len(special), (2, 3, 6, 8))]
        wp = _ieee_reduce("max", img.reshape(2, 3, 3, 2, 4, 2).transpose(0, 1, 2, 4, 3, 5).reshape(2, 3, 3, 4, 4), 4)
        pool = lambda a: frit.nn.max_pool2d(a, 2)
        for got in (pool(frit.asarray(img)), frit.jit(pool)(img)):
            got = np.asarray(got)
            same = (got.view(ut) == wp.view(ut)) | (np.isnan(got) & np.isnan(wp))
            assert same.all(), (got[~same], wp[~same])


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("n", [300, 4099, 70001])
@pytest.mark.parametrize("op", ["max", "min"])
def test_long_max_min_reductions_keep_nan_and_signed_zeros(dt, n, op):
    """A long float max/min runs on integer order keys in lanes (linear_reduce.c maxmin_lanes:
    four vectors of lanes, folded per block of 65536, the rest into lane 0), a whole array in
    parts: IEEE maximum/minimum bit for bit, eagerly and under jit, with NaN of either sign
    anywhere (also only in the rest), rows of zeros of mixed and single signs, infinities only;
    and argmax/argmin, which compare against that max, as numpy's."""
    rng = np.random.default_rng(n)
    special = np.array([0.0, -0.0, np.inf, -np.inf, 1.0, -1.0, 2.5, -3.0, 1e-40], dt)
    x = special[rng.integers(0, len(special), (8, n))]
    x[0] = rng.choice(np.array([0.0, -0.0], dt), n)  # zeros of both signs
    x[1] = -0.0
    x[2] = 0.0
    x[3, n - 3] = np.nan  # a NaN in the rest after the last whole run of 64 lanes
    x[4, rng.integers(0, n)] = -np.nan
    x[5] = np.inf if op == "min" else -np.inf  # only the identity
    x[6] = np.abs(x[6])
    red = frit.max if op == "max" else frit.min
    arg = frit.argmax if op == "max" else frit.argmin
    ut = np.uint32 if dt == np.float32 else np.uint64

    def same(got, want):
        got = np.asarray(got)
        return (got.view(ut) == want.view(ut)) | (np.isnan(got) & np.isnan(want))

    want = _ieee_reduce(op, x, 1)
    whole = _ieee_reduce(op, x[2:3].reshape(1, -1), 1)  # one row: +0 only
    for got in (red(frit.asarray(x), axis=1), frit.jit(lambda a: red(a, axis=1))(x)):
        assert same(got, want).all(), (op, np.asarray(got), want)
    for row in range(8):
        w1 = _ieee_reduce(op, x[row:row + 1], 1)
        for got in (red(frit.asarray(x[row])), frit.jit(lambda a: red(a))(x[row])):
            assert same(np.asarray(got).reshape(1), w1).all(), (op, row, np.asarray(got), w1)
    assert same(np.asarray(red(frit.asarray(x[2]))).reshape(1), whole).all()
    npa = np.argmax if op == "max" else np.argmin
    for got in (arg(frit.asarray(x), axis=1), frit.jit(lambda a: arg(a, axis=1))(x)):
        np.testing.assert_array_equal(np.asarray(got), npa(x, axis=1))


def _host_c(src):
    """Is this program's source host C (not an OpenCL or CUDA device's, as under FRIT_DEVICE)?"""
    return "__kernel" not in src and "__global__" not in src


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("n", [300, 4099, 70001, 131075])
def test_argmax_in_one_pass_finds_the_first_extreme(dt, n):
    """A long row's argmax/argmin runs in one pass (linear_reduce.c emit_argext): each lane keeps
    its greatest key (-0 = +0, every NaN on top) and the run where it first occurred, folded per
    block of 65536 by key, then least position. Against numpy, eagerly and under jit, by rows,
    whole arrays (in parts) and columns: ties whose first is in a later lane than a second (and
    in an earlier block), -0/+0 ties in either order, NaN of either sign (the first wins, also
    in the rest), subnormals, rows all -inf, all +inf, all equal; and a jit that also returns
    the max, which then has a pass of its own."""
    rng = np.random.default_rng(n + 7)
    x = rng.standard_normal((12, n)).astype(dt)
    late = [p for p in (31, 64, n // 2 + 1, 65536 + 3) if p < n]
    x[0, late] = 9.0  # the first tie sits in lane 31, the next ones in lane 0 of later runs/blocks
    x[0, [p - 31 for p in late[1:]]] = -9.0
    x[1] = -np.abs(x[1]) - 1.0
    x[1, n // 3] = -0.0  # max is a zero; the first zero is -0
    x[1, n - 2] = 0.0
    x[2] = np.abs(x[2]) + 1.0
    x[2, n // 4] = 0.0  # min is a zero; the first zero is +0
    x[2, n // 2] = -0.0
    x[3, n - 5] = -np.nan  # a NaN of either sign: the first wins
    x[3, n - 2] = np.nan
    x[4, n - 1] = np.nan  # in the rest, after the last whole run
    x[5, n // 5] = -np.nan
    x[5, n // 5 + 1] = np.nan
    x[6] = -np.inf
    x[7] = np.inf
    x[8] = 2.5
    x[9] = rng.choice(np.array([1e-45, -1e-45, 0.0, -0.0], dt), n)  # subnormals and zeros
    x[10] = np.where(rng.random(n) < 0.5, np.inf, -np.inf)
    x[11] = np.round(x[11])  # many ties
    for op, npf in (("argmax", np.argmax), ("argmin", np.argmin)):
        f = getattr(frit, op)
        for got in (f(frit.asarray(x), axis=1), frit.jit(lambda a: f(a, axis=1))(x)):
            np.testing.assert_array_equal(np.asarray(got), npf(x, axis=1), err_msg="%s rows" % op)
        for row in (0, 1, 2, 3, 4, 5, 9):
            want = npf(x[row])
            for got in (f(frit.asarray(x[row])), frit.jit(lambda a: f(a))(x[row])):
                assert int(np.asarray(got)) == want, (op, row, int(np.asarray(got)), want)
        xt = np.ascontiguousarray(x[:, :300].T)
        for got in (f(frit.asarray(xt), axis=0), frit.jit(lambda a: f(a, axis=0))(xt)):
            np.testing.assert_array_equal(np.asarray(got), npf(xt, axis=0), err_msg="%s columns" % op)
    src = frit.jit(lambda a: frit.argmax(a, axis=1)).lower(x).source
    if _host_c(src):  # the one-pass form, not the search after the max (device kernels keep two passes)
        assert "_o_l[" in src and "_k_l[" in src
    both = frit.jit(lambda a: (a.max(axis=1), frit.argmax(a, axis=1)))(x)
    mx = np.asarray(both[0])
    assert ((mx == x.max(axis=1)) | (np.isnan(mx) & np.isnan(x.max(axis=1)))).all()
    np.testing.assert_array_equal(np.asarray(both[1]), np.argmax(x, axis=1))


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int8, np.int32])
@pytest.mark.parametrize("w", [7, 14, 28, 3, 16, 49])
def test_short_rows_in_overlapping_vectors(dt, w):
    """A simd loop over a short static row whose remainder gcc would split into several smaller
    pieces (7: 4+2+1 lanes) runs as two whole vectors that overlap (linear.c overlap_tail): the
    repeated lanes store the same values again. Elementwise chains, a broadcast and a strided
    read (a 2x2 pool's windows) over rows of every width, against numpy, eagerly and under jit;
    the source of the 7-wide case holds the overlapping loop."""
    rng = np.random.default_rng(w)
    x = (rng.standard_normal((5, 3, 2 * w)) * 20).astype(dt)
    b = (rng.standard_normal((5, 3, 1)) * 20).astype(dt)

    def f(xp, x, b):
        y = x[..., ::2] * 3 + b
        return xp.maximum(y, x[..., 1::2]) - y // 2 if np.issubdtype(dt, np.integer) else xp.maximum(y, x[..., 1::2]) - y / 2

    with np.errstate(over="ignore"):
        want = f(np, x, b)
    jf = frit.jit(lambda x, b: f(frit, x, b), dynamic=False)
    for got in (f(frit, frit.asarray(x), frit.asarray(b)), jf(x, b)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    if w == 7 and dt == np.float32:
        src = jf.lower(x, b).source
        assert re.search(r"= 0; r\d+ < 4; r\d+\+\+\)", src), "the first whole vector [0, 4)"
        assert re.search(r"= 3; r\d+ < 7; r\d+\+\+\)", src), "the overlapping tail loop [3, 7)"


@pytest.mark.parametrize("shape", [(4, 7), (3, 14), (5, 28)])
def test_donated_update_of_short_rows_applies_once(shape):
    """A donated input updated in place (p = p * 0.5 + b per row, the output written into p's
    memory) is read and written by one loop through two pointers without restrict: the
    overlapping-vectors form of a short row (overlap_tail) would read the repeated lanes already
    updated and apply the update twice, so such kernels keep gcc's remainder pieces."""
    rng = np.random.default_rng(len(shape))
    p = rng.standard_normal(shape).astype(np.float32)
    b = rng.standard_normal(shape[:1]).astype(np.float32)
    want = p * np.float32(0.5) + b[:, None]
    f = frit.jit(lambda p, b: p * 0.5 + b[:, None], donate_argnums=0, dynamic=False)
    got = np.asarray(f(frit.asarray(p.copy()), b))
    np.testing.assert_array_equal(got, want)


PERMUTED_REDUCTIONS = {
    # a reduction read through a permute that moves its last axis, as an output or through
    # elementwise ops only: one kernel that loops in the reduction's order and stores through
    # the permutation (schedule/rangeify.c); read by a reduction, the product is realized first
    "matmul_T": (lambda fr, a, b, c: (a @ b).T, ((48, 40), (40, 32), (32, 48))),
    "matmul_T_relu_residual": (lambda fr, a, b, c: fr.maximum((a @ b).T + c, 0), ((48, 40), (40, 32), (32, 48))),
    "matmul_T_bias": (lambda fr, a, b, c: (a @ b).T * c[:, :1], ((33, 20), (20, 48), (48, 33))),
    "batched_transposed": (lambda fr, a, b, c: fr.permute_dims(a @ b, (0, 2, 1)) - c,
                           ((3, 24, 16), (3, 16, 32), (3, 32, 24))),
    "sum_then_T": (lambda fr, a, b, c: fr.sum(a, axis=1).T + c, ((8, 5, 32), (1, 1), (32, 8))),
    "max_then_T": (lambda fr, a, b, c: fr.max(a, axis=1).T, ((8, 5, 32), (1, 1), (1, 1))),
    "product_of_T": (lambda fr, a, b, c: (a @ b).T @ c, ((32, 24), (24, 32), (32, 16))),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("case", sorted(PERMUTED_REDUCTIONS))
def test_permuted_reductions_match_numpy(case, dtype):
    """Reductions stored through a permutation, eager, default jit (twice: the size-specialised
    variant), static jit and OpenCL where it is available, against numpy; integers exactly."""
    fn, shapes = PERMUTED_REDUCTIONS[case]
    rng = np.random.default_rng(len(case))
    if dtype == np.int32:
        args = [rng.integers(-20, 20, s).astype(dtype) for s in shapes]
    else:
        args = [rng.standard_normal(s).astype(dtype) for s in shapes]
    want = fn(np, *[x.astype(np.float64) if dtype != np.int32 else x.astype(np.int64) for x in args])
    tol = dict(rtol=1e-4, atol=1e-3) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)
    if dtype == np.int32:
        tol = dict(rtol=0, atol=0)
    got = np.asarray(fn(frit, *[frit.asarray(x) for x in args]))
    np.testing.assert_allclose(got, want, **tol)
    for f in (frit.jit(lambda a, b, c: fn(frit, a, b, c)), frit.jit(lambda a, b, c: fn(frit, a, b, c), dynamic=False)):
        for _ in range(2):
            np.testing.assert_allclose(np.asarray(f(*args)), want, **tol)
    if _opencl():  # the same kernels rendered for a device (PoCL in CI)
        f = frit.jit(lambda a, b, c: fn(frit, a, b, c), device="opencl")
        np.testing.assert_allclose(np.asarray(f(*args)), want, **tol)


COLUMN_REDUCTIONS = {
    "sum": lambda m, x: x.sum(axis=0),
    "max": lambda m, x: x.max(axis=0),
    "min": lambda m, x: m.min(x, axis=0),
    "mean": lambda m, x: x.mean(axis=0),
    "argmax": lambda m, x: m.argmax(x, axis=0),
    "var": lambda m, x: x.var(axis=0),
    "sum_plus_max": lambda m, x: x.sum(axis=0) * 2 + x.max(axis=0),
    "sum_3d": lambda m, x: x.reshape(4, -1, x.shape[1]).sum(axis=1),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("cols", [1024, 48, 40, 1000, 1023, 16, 10, 100, 1021])
@pytest.mark.parametrize("op", sorted(COLUMN_REDUCTIONS))
def test_column_reductions_match_numpy(op, cols, dtype):
    """Reductions down the columns of a row-major array (x.sum(axis=0)), whose only output loop
    is the thread axis: codegen/opt_regacc.c splits it into blocks of W columns (a divisor of
    the count, block_width; 1023 columns in blocks of 341) and adds row by
    row in a register array. Against numpy, eager, static jit and the default jit (twice: the
    size-specialised variant); a NaN in a column propagates through max/min/argmax."""
    fn = COLUMN_REDUCTIONS[op]
    rng = np.random.default_rng(cols)
    if dtype == np.int32:
        x = rng.integers(-50, 50, (64, cols)).astype(dtype)
    else:
        x = rng.standard_normal((64, cols)).astype(dtype)
        x[5, 3] = np.nan
    want = fn(np, x.astype(np.float64) if dtype != np.int32 else x.astype(np.int64))
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    if dtype == np.int32 and op not in ("mean", "var"):
        tol = dict(rtol=0, atol=0)
    got = [np.asarray(fn(frit, frit.asarray(x)))]
    for f in (frit.jit(lambda a: fn(frit, a), dynamic=False), frit.jit(lambda a: fn(frit, a))):
        got += [np.asarray(f(x)) for _ in range(2)]
    for g in got:
        np.testing.assert_allclose(g, want, equal_nan=True, **tol)


@pytest.mark.parametrize("cols,width", [(1024, 512), (1023, 341), (1021, 1021), (100, 50), (10, 10), (7, None)])
def test_column_sum_adds_row_by_row_in_a_register_array(cols, width):
    """The block of W columns (opt_regacc.c block_width, on this machine's 2 cores): the widest
    divisor up to 512 leaving a block per core, else two blocks, else one block of all the columns
    (a prime count); fewer than 8 columns are not split. From the kernel source, and the values."""
    if os.cpu_count() != 2 and width in (512, 50):
        pytest.skip("the width depends on the core count")
    x = _rand((64, cols), 3)
    f = frit.jit(lambda a: a.sum(axis=0), dynamic=False)
    np.testing.assert_allclose(np.asarray(f(x)), x.astype(np.float64).sum(axis=0), rtol=1e-5, atol=1e-5)
    src = f.lower(x).source
    if width is None:
        assert not re.search(r"float m\d+\[", src), src[-2000:]
    else:
        assert re.search(r"float m\d+\[%d\]" % width, src), src[-2000:]


@pytest.mark.parametrize("op", ["max", "sum", "argmax"])
def test_channel_reduction_is_not_register_tiled(op):
    """x.max(axis=1) of (N, C, H, W) reads x[n, c, hw] alone: a register tile's rows would share
    no load (codegen/opt_tile.c shares_a_load), so the register-array rewrite takes it (its
    accumulators in an m array), 4x faster for max and 12x for argmax. Against numpy."""
    x = _rand((32, 64, 28, 28), 11)
    x[1, 5, 2, 3] = np.nan
    fn = {"max": lambda m, a: a.max(axis=1), "sum": lambda m, a: a.sum(axis=1),
          "argmax": lambda m, a: m.argmax(a, axis=1)}[op]
    f = frit.jit(lambda a: fn(frit, a), dynamic=False)
    np.testing.assert_allclose(np.asarray(f(x)), fn(np, x.astype(np.float64)), rtol=1e-5, atol=1e-5,
                               equal_nan=True)
    src = f.lower(x).source
    assert re.search(r"\b(float|int64_t) m\d+\[", src), src[-3000:]


DOT_ROWS = {
    "matvec": lambda m, a, v, b: a @ v,
    "matvec_bias_relu": lambda m, a, v, b: m.maximum(a @ v + b, 0),
    "weighted_row_sums": lambda m, a, v, b: (a * v).sum(axis=1),
    "two_dots": lambda m, a, v, b: (a * v).sum(axis=1) - (a * b[:1]).sum(axis=1),
    "row_norms": lambda m, a, v, b: m.sqrt((a * a).sum(axis=1)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mk", [(1024, 1024), (13, 300), (1001, 77), (20, 1000), (7, 16), (1000, 1)])
@pytest.mark.parametrize("op", sorted(DOT_ROWS))
def test_dot_product_rows_match_numpy(op, mk, dtype):
    """Kernels of dot products whose one output loop is the thread axis (a @ v): codegen/opt_tile.c
    tile_dot_rows computes 8 rows a tile (4 with two reductions), sharing v's loads, and the sums'
    blocks run in lane form (codegen/linear_reduce.c sum_lanes). Rows that 8 does not divide are
    clamped (1001, 13), or with an epilogue that reads the row (+ b) take a dividing tile height;
    reduction lengths not a multiple of the lanes (77, 300) take the rest loop. Against numpy:
    eager, static jit and the default jit (twice: the size-specialised variant)."""
    m, k = mk
    rng = np.random.default_rng(m * 7 + k)
    a = rng.standard_normal((m, k)).astype(dtype)
    v = rng.standard_normal(k).astype(dtype)
    b = rng.standard_normal(m).astype(dtype)
    if op == "two_dots":
        b = rng.standard_normal(k).astype(dtype)
    fn = DOT_ROWS[op]
    want = fn(np, a.astype(np.float64), v.astype(np.float64), b.astype(np.float64))
    tol = dict(rtol=2e-5, atol=2e-5 * np.sqrt(k)) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12 * np.sqrt(k))
    got = [np.asarray(fn(frit, frit.asarray(a), frit.asarray(v), frit.asarray(b)))]
    for f in (frit.jit(lambda x, y, z: fn(frit, x, y, z), dynamic=False), frit.jit(lambda x, y, z: fn(frit, x, y, z))):
        got += [np.asarray(f(a, v, b)) for _ in range(2)]
    for g in got:
        np.testing.assert_allclose(g, want, **tol)


@pytest.mark.parametrize("m", [13, 20, 67, 1001, 1024])
def test_dot_rows_in_place_update_applies_once_per_row(m):
    """p - lr * (a @ v) with p donated: the kernel reads p's element and writes its memory, so a
    clamped last tile (rows past M computing row M - 1 again) would apply row M - 1's update
    twice. tile_dot_rows then takes a tile height that divides M (20: 5 rows; 1001: 7) or stays
    untiled (13, 67: primes)."""
    rng = np.random.default_rng(m)
    p, a, v = (rng.standard_normal(s).astype(np.float32) for s in ((m,), (m, 300), (300,)))
    want = p.astype(np.float64) - 0.5 * (a.astype(np.float64) @ v)
    f = frit.jit(lambda p, a, v: p - 0.5 * (a @ v), donate_argnums=0, dynamic=False)
    np.testing.assert_allclose(np.asarray(f(p.copy(), a, v)), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("n", [1, 15, 16, 17, 33, 50, 63, 64, 65, 100, 130, 1100])
def test_lane_forms_of_every_row_length(n):
    """A lane form's run is several vectors (64 lanes of f32 on AVX-512); a row's rest takes
    whole single vectors, then one term at a time into lane 0 (linear.c, cgl_close_block). With a
    symbolic row length (default jit), rows of every length around those sizes: sums, max,
    argmax and argmin against numpy, rows holding NaN and ties."""
    rng = np.random.default_rng(n)
    x = np.round(rng.standard_normal((6, n)) * 3).astype(np.float32)
    x[1, n // 2] = np.nan
    x[2] = 0.0
    x[2, n - 1] = -0.0
    for name, f in (("sum", lambda m, a: a.sum(axis=1)), ("max", lambda m, a: a.max(axis=1)),
                    ("argmax", lambda m, a: m.argmax(a, axis=1)), ("argmin", lambda m, a: m.argmin(a, axis=1))):
        want = f(np, x)
        got = np.asarray(frit.jit(lambda a: f(frit, a))(x))
        if name == "sum":
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4, err_msg=name)
        else:
            np.testing.assert_array_equal(got, want, err_msg=name)
    src = frit.jit(lambda a: a.sum(axis=1)).lower(np.zeros((4, 50), np.float32)).source
    steps = sorted({int(v) for v in re.findall(r"_o \+= (\d+)\)", src)})
    if _host_c(src):  # runs of 4 vectors, then 1 (device kernels sum by work-groups)
        assert len(steps) == 2 and steps[1] == 4 * steps[0], (steps, src[-2500:])


def test_matvec_rows_are_sums_in_four_vectors_of_lanes():
    """The structure behind the figures of docs/benchmarks.md: a long row's dot product is one
    lane array of four vectors (four FMA chains) summed as a tree, no `reduction`
    clause (whose lanes gcc added one by one after every block), and not tiled in rows (8 row
    streams ran 58 us a thread against 42); a short one (K = 200, no lane form) is still tiled,
    8 rows sharing v's loads. Values against numpy."""
    a, v = _rand((1024, 1024), 1), _rand((1024,), 2)
    f = frit.jit(lambda x, y: x @ y, dynamic=False)
    np.testing.assert_allclose(np.asarray(f(a, v)), a.astype(np.float64) @ v, rtol=1e-4, atol=1e-4)
    body = f.lower(a, v).source
    body = body[body.rindex("void frit_k0"):]
    assert body.count("frit_lanesum_f32(acc") == 1, body[:3000]
    assert "reduction(+:" not in body, body[:3000]
    # 1024 is a whole number of runs: no rest loop (the body once per vector of the run)
    assert body.count("frit_fmaf(") == 4, body[:3000]
    a2, v2 = _rand((512, 200), 3), _rand((200,), 4)
    f2 = frit.jit(lambda x, y: x @ y, dynamic=False)
    np.testing.assert_allclose(np.asarray(f2(a2, v2)), a2.astype(np.float64) @ v2, rtol=1e-4, atol=1e-4)
    body2 = f2.lower(a2, v2).source
    assert body2[body2.rindex("void frit_k0"):].count("reduction(+:acc") == 8
    # a sum of exp keeps one vector of lanes: its terms hide the chain (cheap_terms)
    sm = frit.jit(lambda x: frit.exp(x).sum(axis=1), dynamic=False)
    np.testing.assert_allclose(np.asarray(sm(a)), np.exp(a.astype(np.float64)).sum(axis=1), rtol=1e-4)
    one = re.search(r"float acc\d+_l\[(\d+)\]", sm.lower(a).source)
    four = re.search(r"float acc\d+_l\[(\d+)\]", body)
    assert one and four and int(four.group(1)) == 4 * int(one.group(1)), (one, four)


def test_batchnorm_statistics_are_not_split_into_column_blocks():
    """x.var(axis=(0, 2, 3)) of NCHW: the variance kernel's one output loop is the channel c, and
    the only load contiguous along c is mean[c], outside the reduction's own ranges; x[n, c, hw]
    is 784 apart along c. The column split (opt_regacc.c) must not take it (it ran 2.6x slower
    as blocks of 32 channels added in a register array). Against numpy, and the source."""
    x = _rand((8, 64, 28, 28), 12)
    f = frit.jit(lambda a: a.var(axis=(0, 2, 3)), dynamic=False)
    np.testing.assert_allclose(np.asarray(f(x)), x.astype(np.float64).var(axis=(0, 2, 3)), rtol=1e-4)
    src = f.lower(x).source
    assert not re.search(r"float m\d+\[", src), src[-3000:]


def test_vector_matrix_product_is_not_tiled_as_dot_rows():
    """v @ a reads a[k, j] down the columns and only v[k] along k: the register array's case
    (rows added one by one into a vector of columns), not tile_dot_rows's (tiled, it ran 4x
    slower). The source, and the values against numpy."""
    a, v = _rand((512, 1024), 4), _rand((512,), 5)
    f = frit.jit(lambda x, y: y @ x, dynamic=False)
    np.testing.assert_allclose(np.asarray(f(a, v)), v.astype(np.float64) @ a, rtol=1e-4, atol=1e-4)
    src = f.lower(a, v).source
    assert re.search(r"float m\d+\[\d+\]", src), src[-3000:]


def _opencl():
    try:
        frit.jit(lambda x: x + 1, device="opencl")(np.zeros(2, np.float32))
        return True
    except frit.FritError as e:
        if "unavailable" in str(e):
            return False
        raise


def test_eager_nbody_step_calls_no_pow():
    """An eager n-body step (examples/nbody_explicit.py step_vectorised): `d2 ** 1.5` is d2 *
    sqrt(d2), not a pow of an input scalar (4x slower eagerly), and the step is one kernel (the
    (N, 3) inputs' 3 is a constant, so no N x N distances are materialised). Against numpy in
    float64."""
    sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))
    import nbody_explicit as ex
    xn, vn = ex.make_input(300)
    x, v = frit.asarray(xn), frit.asarray(vn)
    with frit.profile() as p:
        got = ex.step_vectorised(x, v)
        frit.realize(*got)
    wx, wv = ex.step_numpy(xn, vn)
    np.testing.assert_allclose(np.asarray(got[0]), wx, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(got[1]), wv, rtol=1e-4, atol=1e-5)
    kernels = [l for l in str(p).splitlines() if re.match(r"k\d+_", l)]
    assert len(kernels) == 1, str(p)
    sources = []
    for prog in frit.current_session().pc._programs.values():
        info = prog.info()
        code = re.search(r"^code: (\S+)", info, re.M).group(1)
        cache = re.search(r"^cache: (\S+)", info, re.M).group(1)
        path = os.path.join(cache, "frit-%s.c" % code)
        if os.path.exists(path):
            sources.append(open(path).read())
    body = [src[src.index("void frit_k"):] for src in sources if "void frit_k" in src and "sub_mul_sum" in src]
    assert body and not any("frit_powf(" in b for b in body)


def test_eager_small_dims_are_constants_of_large_inputs_only():
    """Eagerly, dims of 4 or less are constants in inputs of 512 elements or more (their fusion
    pays, and they come in few shapes); small inputs of many shapes share one program."""
    from frit import _session as S
    frit.new_session()
    pc = S.current().pc
    for shape in [(2, 5), (3, 6), (4, 7), (3, 9), (5, 3)]:
        a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        np.testing.assert_array_equal(np.asarray(frit.asarray(a) * 2 + 1), a * 2 + 1)
    assert pc.stats["compiles"] == 1, pc.stats
    for shape in [(600, 3), (700, 3), (700, 4), (3, 700)]:
        a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        np.testing.assert_array_equal(np.asarray(frit.asarray(a) * 2 + 1), a * 2 + 1)
    assert pc.stats["compiles"] == 1 + 3, pc.stats  # (600, 3) and (700, 3) share one
    # a large input with a constant 3 meets a small one whose 3 is symbolic
    p = np.arange(1800, dtype=np.float32).reshape(600, 3)
    w = np.array([1.0, -2.0, 0.5], np.float32)
    np.testing.assert_array_equal(np.asarray(frit.asarray(p) * frit.asarray(w)), p * w)
    np.testing.assert_array_equal(np.asarray(frit.asarray(p)[:3] + frit.asarray(w.reshape(3, 1))),
                                  p[:3] + w.reshape(3, 1))


@pytest.mark.parametrize("e", [0, 1, 2, -1, 0.5, -0.5, 1.5, 3, 0.25])
@pytest.mark.parametrize("dt", [np.float32, np.float64, np.float16])
def test_eager_power_of_a_python_scalar(e, dt):
    """x ** e eagerly and under jit, the exponents the frontend computes without pow (0, 1, 2,
    -1, 0.5, -0.5, 1.5) as constants and others (3, 0.25) through pow: pow's values, special
    values included (-0, +-inf, NaN, negatives), which numpy gives for an array of exponents
    (for a scalar 0.5 numpy takes sqrt: (-inf)**0.5 NaN, (-0)**0.5 -0; docs/semantics.md)."""
    x = np.array([-0.0, 0.0, np.inf, -np.inf, np.nan, -2.0, 0.3, 1.0, 2.5, 7.0, 1e-3, -1e-3], dt)
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        want = np.power(x64, np.full_like(x64, e)).astype(dt)
    with np.errstate(all="ignore"):
        for got in (frit.asarray(x) ** e, frit.jit(lambda a: a ** e)(x)):
            g = np.asarray(got)
            assert g.dtype == want.dtype
            np.testing.assert_allclose(g, want, rtol=2e-3 if dt == np.float16 else 2e-6, atol=0)
            np.testing.assert_array_equal(np.signbit(g[~np.isnan(want)]), np.signbit(want[~np.isnan(want)]))
