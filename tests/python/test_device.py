"""Device backends (src/backend/): frit.jit(device="opencl"), or "cuda" with FRIT_TEST_DEVICE=cuda,
against numpy, the dialect the
kernels are written in, host loops and atomics on the device, and the errors for unknown or
unavailable devices. Without an OpenCL driver the OpenCL tests skip, unless FRIT_REQUIRE_OPENCL=1
(CI installs PoCL and sets it, so a missing driver fails there). The op matrix and the explicit
kernel tests run on the device too: `make pytest-opencl`."""
import os

import numpy as np
import pytest

import frit


# the device the device-generic tests run on: OpenCL (PoCL in CI), or FRIT_TEST_DEVICE=cuda on a
# machine with an NVIDIA GPU
DEV = os.environ.get("FRIT_TEST_DEVICE", "opencl")


def _device_available(dev):
    try:
        frit.jit(lambda x: x + 1, device=dev)(np.zeros(2, np.float32))
        return True
    except frit.FritError as e:
        if os.environ.get("FRIT_REQUIRE_OPENCL") == "1" and dev == "opencl":
            raise
        if os.environ.get("FRIT_TEST_DEVICE") == dev:
            raise
        return "unavailable" not in str(e) and pytest.fail(str(e))


def _opencl_available():
    return _device_available("opencl")


needs_device = pytest.mark.skipif(not _device_available(DEV), reason="no %s device" % DEV)

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
          np.float16, np.float32, np.float64]


def _vals(rng, dt, shape):
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if np.dtype(dt).kind in "iu":
        return rng.integers(0, 100, size=shape).astype(dt)
    return rng.standard_normal(shape).astype(dt)


@needs_device
@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
def test_fused_elementwise_and_reductions(dt):
    rng = np.random.default_rng(1)
    a, b = _vals(rng, dt, (37, 19)), _vals(rng, dt, (37, 19))

    def f(xp, x, y):
        s = x + y if dt != np.bool_ else x | y
        return s, xp.max(s, axis=1), xp.sum(x, axis=0), xp.where(x > y, x, y)

    got = frit.jit(lambda x, y: f(frit, x, y), device=DEV)(a, b)
    with np.errstate(all="ignore"):
        want = f(np, a, b)
    for g, w in zip(got, want):
        g = np.asarray(g)
        assert g.shape == w.shape and g.dtype == w.dtype
        if np.dtype(dt).kind == "f":
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=2e-3 if dt == np.float16 else 1e-5,
                                       atol=1e-2 if dt == np.float16 else 1e-5)
        else:
            np.testing.assert_array_equal(g, w)


@needs_device
@pytest.mark.parametrize("n", [1, 5, 64, 130])
def test_matmul_softmax_and_transcendentals(n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, 48)).astype(np.float32)
    b = rng.standard_normal((48, 33)).astype(np.float32)

    def f(xp, x, y):
        m = x @ y
        e = xp.exp(m - xp.max(m, axis=1, keepdims=True))
        return m, e / xp.sum(e, axis=1, keepdims=True), xp.tanh(x) * xp.sin(x) + xp.log1p(xp.abs(x))

    got = frit.jit(lambda x, y: f(frit, x, y), device=DEV)(a, b)
    for g, w in zip(got, f(np, a, b)):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-4, atol=1e-5)


@needs_device
def test_symbolic_sizes_reuse_the_device_program():
    f = frit.jit(lambda x: (x * 2 + 1).sum(), device=DEV)
    for n in (7, 1000, 4097):
        x = np.arange(n, dtype=np.float64)
        assert float(np.asarray(f(x))) == pytest.approx((x * 2 + 1).sum())
    assert f.compile_count == 1


@needs_device
def test_scatter_add_with_duplicates_is_atomic():
    rng = np.random.default_rng(3)
    idx = rng.integers(0, 7, size=5000).astype(np.int64)
    val = rng.integers(-3, 4, size=5000).astype(np.int32)

    def f(i, v):
        out = frit.zeros(7, frit.int32)
        with frit.kernel(i) as (k,):
            frit.atomic_add(out, i[k], v[k])
        return out

    want = np.zeros(7, np.int32)
    np.add.at(want, idx, val)
    np.testing.assert_array_equal(np.asarray(frit.jit(f, device=DEV)(idx, val)), want)


@needs_device
def test_host_loop_runs_on_the_device():
    def f(x):
        c = frit.zeros_like(x)
        with frit.loop(20):
            c[...] = c * 0.5 + x
        return c

    x = np.linspace(-1, 1, 300).astype(np.float32)
    want = np.zeros_like(x)
    for _ in range(20):
        want = want * 0.5 + x
    np.testing.assert_allclose(np.asarray(frit.jit(f, device=DEV)(x)), want, rtol=1e-6)


@needs_device
def test_kernels_are_in_the_device_dialect():
    f = frit.jit(lambda x: frit.exp(x) + 1, device=DEV)
    src = f.lower(np.ones(8, np.float32)).source
    if DEV == "opencl":
        assert "__kernel void frit_k0" in src and "get_global_id(0)" in src
    else:
        assert 'extern "C" __global__ void frit_k0' in src and "blockIdx.x" in src


@needs_device
def test_complex_is_refused_by_name():
    with pytest.raises(frit.FritError, match="complex dtypes .* not supported by the %s backend" % (
            "OpenCL" if DEV == "opencl" else "CUDA")):
        frit.jit(lambda x: x * 2, device=DEV)(np.ones(3, np.complex64))


def test_unknown_device_is_a_clear_error():
    with pytest.raises(frit.FritError, match="device must be one of"):
        frit.jit(lambda x: x, device="tpu")


def test_unavailable_opencl_says_so(tmp_path):
    """With the ICD loader hidden, asking for OpenCL names what is missing (no crash)."""
    import subprocess
    import sys
    code = ("import numpy as np, frit\n"
            "try:\n    frit.jit(lambda x: x + 1, device='opencl')(np.ones(2))\n    print('RAN')\n"
            "except frit.FritError as e:\n    print('ERR', e)\n")
    env = _env(LD_LIBRARY_PATH=str(tmp_path), OCL_ICD_VENDORS=str(tmp_path))
    # an empty vendor directory: the loader finds no platform
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    if out.stdout.startswith("RAN"):
        pytest.skip("this machine's OpenCL loader ignores OCL_ICD_VENDORS (a vendor's own libOpenCL)")
    assert "ERR opencl: unavailable" in out.stdout or not _opencl_available(), out.stdout


def _nvrtc_available():
    import ctypes.util
    for name in ("libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "/usr/local/cuda/lib64/libnvrtc.so"):
        try:
            import ctypes
            ctypes.CDLL(name)
            return True
        except OSError:
            pass
    if os.environ.get("FRIT_REQUIRE_NVRTC") == "1":
        pytest.fail("FRIT_REQUIRE_NVRTC=1 but libnvrtc cannot be loaded")
    return False


_PYDIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "python")


def _env(**extra):
    """The environment of a child Python that imports this checkout's frit."""
    path = os.pathsep.join(p for p in [_PYDIR, os.environ.get("PYTHONPATH", "")] if p)
    return dict(os.environ, PYTHONPATH=path, **extra)


def _run_with_env(code, **env):
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", code], env=_env(**env), capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


_CUDA_PROG = ("import numpy as np, frit\n"
              "x = np.linspace(-2, 2, 77).astype(np.float32)\n"
              "try:\n"
              "    r = frit.jit(lambda a: (frit.exp(a) * frit.sin(a)).sum() + frit.max(a.astype(frit.float16)))(x)\n"
              "    print('OK', float(np.asarray(r)))\n"
              "except frit.FritError as e:\n    print('ERR', e)\n")


@pytest.mark.skipif(not _nvrtc_available(), reason="no NVRTC (the CUDA toolkit)")
def test_cuda_check_compiles_every_kernel_to_ptx(tmp_path):
    """FRIT_CHECK_CUDA=1: each compiled program is also rendered in the CUDA dialect, compiled by
    NVRTC to PTX for sm_80 and sm_90 and assembled by ptxas; a ptxas that rejects fails the
    compile (so the check really runs), and the program's results are unchanged."""
    x = np.linspace(-2, 2, 77).astype(np.float32)
    want = float((np.exp(x) * np.sin(x)).sum() + np.float16(x.max()))
    ok = _run_with_env(_CUDA_PROG, FRIT_CHECK_CUDA="1", FRIT_CACHE_DIR=str(tmp_path / "a"))
    assert ok.startswith("OK") and float(ok.split()[1]) == pytest.approx(want, rel=1e-5), ok
    assert list((tmp_path / "a" / "cuda").glob("*.ptx")), "no PTX was cached"
    bad = _run_with_env(_CUDA_PROG, FRIT_CHECK_CUDA="1", FRIT_PTXAS="/bin/false",
                        FRIT_CACHE_DIR=str(tmp_path / "b"))
    assert "ERR cuda: ptxas -arch=sm_80 rejected the PTX" in bad, bad


def test_cuda_device_runs_or_says_why():
    """On a machine with an NVIDIA GPU the CUDA device matches numpy; elsewhere the error names
    what is missing."""
    x = np.linspace(-2, 2, 1000).astype(np.float32)
    try:
        got = frit.jit(lambda a: (frit.exp(a) * a).sum(), device="cuda")(x)
    except frit.FritError as e:
        assert "cuda: unavailable" in str(e), str(e)
        return
    np.testing.assert_allclose(float(np.asarray(got)), (np.exp(x) * x).sum(), rtol=1e-5)


_EAGER_SCATTER = """
import numpy as np, frit
rng = np.random.default_rng(7)
outs, refs = [], []
for shape, nidx in [((7,), 40), ((5, 3), 25), ((1,), 6), ((6,), 0)]:
    a = rng.integers(-128, 127, size=shape).astype(np.int8)
    idx = rng.integers(-shape[0], shape[0], size=nidx)
    v = rng.integers(-128, 127, size=(nidx,) + shape[1:]).astype(np.int8)
    outs.append(frit.scatter(frit.asarray(a), idx, v, mode="max"))
    r = a.copy()
    np.maximum.at(r, np.where(idx < 0, idx + shape[0], idx), v)
    refs.append(r)
frit.realize(*outs)
print(all(np.array_equal(np.asarray(o), r) for o, r in zip(outs, refs)))
"""


@needs_device
def test_eager_program_with_many_variables():
    """Eager programs bind many size variables: the device kernel's argument names must not clash
    with the renderer's value names (a bug: `redefinition of 'v4'` from the OpenCL compiler)."""
    assert _run_with_env(_EAGER_SCATTER, FRIT_DEVICE=DEV).strip() == "True"


@needs_device
def test_many_symbolic_sizes_and_scatter_modes():
    """Several symbolic dims (kernel variables) next to many named values: the device kernel's
    argument names must not clash with the renderer's value names (a bug: `redefinition of v4`)."""
    rng = np.random.default_rng(7)
    shapes = [(7,), (5, 3), (9,), (4, 6)]
    arrs = [rng.integers(-50, 50, size=s).astype(np.int8) for s in shapes]
    idxs = [rng.integers(0, s[0], size=3 * s[0]) for s in shapes]
    vals = [rng.integers(-50, 50, size=(3 * s[0],) + s[1:]).astype(np.int8) for s in shapes]

    def f(*xs):
        a, i, v = xs[0:4], xs[4:8], xs[8:12]
        out = []
        for k in range(4):
            out.append(frit.scatter(a[k], i[k], v[k], mode="max"))
            out.append(frit.scatter(a[k], i[k], v[k], mode="add"))
        return tuple(out)

    got = frit.jit(f, device=DEV)(*arrs, *idxs, *vals)
    for k in range(4):
        want_max, want_add = arrs[k].copy(), arrs[k].copy()
        np.maximum.at(want_max, idxs[k], vals[k])
        np.add.at(want_add, idxs[k], vals[k])
        np.testing.assert_array_equal(np.asarray(got[2 * k]), want_max)
        np.testing.assert_array_equal(np.asarray(got[2 * k + 1]), want_add)


_GROUP_CASES = [("sum", np.float32), ("sum", np.int32), ("sum", np.int8), ("sum", np.float16), ("max", np.float32),
                ("min", np.float64), ("prod", np.float64), ("max", np.int64), ("any", np.bool_), ("all", np.bool_)]


@needs_device
@pytest.mark.parametrize("op,dt", _GROUP_CASES, ids=lambda v: v if isinstance(v, str) else np.dtype(v).name)
@pytest.mark.parametrize("shape", [(5, 1000), (1, 300), (3, 257), (70000,)])
def test_work_group_reductions(op, dt, shape):
    """Reductions of 256 and more elements a point run a work-group per point on a device: each
    thread folds a strided share, and the shares are combined in local memory (linear_group.c).
    Every reduce op and dtype against numpy, with NaN rows for max/min and rows of one
    element's worth of threads; (70000,) is a whole-array reduction."""
    rng = np.random.default_rng(5)
    if dt == np.bool_:
        a = rng.random(shape) < (0.999 if op == "all" else 0.001)
    elif np.dtype(dt).kind in "iu":
        a = rng.integers(-3, 4, size=shape).astype(dt) if op != "prod" else rng.integers(1, 2, size=shape).astype(dt)
    else:
        a = (rng.standard_normal(shape) * (0.02 if op == "prod" else 1) + (1 if op == "prod" else 0)).astype(dt)
        if op in ("max", "min") and len(shape) == 2:
            a[0, shape[1] // 2] = np.nan
    axis = -1
    f = frit.jit(lambda x: getattr(frit, op)(x, axis=axis), dynamic=False, device=DEV)
    if shape[-1] >= 256:
        assert "frit_red" in f.lower(a).source, "no work-group reduction was rendered"
    got = np.asarray(f(a))
    with np.errstate(all="ignore"):
        want = getattr(np, op)(a, axis=axis)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if np.dtype(dt).kind == "f":
        tol = 2e-2 if dt == np.float16 else 1e-5
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got, want)


@needs_device
def test_work_group_softmax_and_nbody():
    """Fused kernels around work-group reductions: a row softmax (max, then sum of exp) and the
    vectorised n-body (three sums a body, fused into one loop)."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((40, 3000)).astype(np.float32)
    sm = frit.jit(lambda a: frit.nn.softmax(a, axis=-1), dynamic=False, device=DEV)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(np.asarray(sm(x)), e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-8)
    p = rng.random((600, 3)).astype(np.float32)

    def step(pos):
        dx = pos[None, :, :] - pos[:, None, :]
        d2 = frit.sum(dx * dx, axis=-1, keepdims=True) + 1e-3
        return frit.sum(dx / d2 ** 1.5, axis=1)
    p64 = p.astype(np.float64)
    dx = p64[None] - p64[:, None]
    want = (dx / (np.sum(dx * dx, -1, keepdims=True) + 1e-3) ** 1.5).sum(1)
    np.testing.assert_allclose(np.asarray(frit.jit(step, dynamic=False, device=DEV)(p)), want, rtol=1e-3, atol=1e-3)


_TILE_SHAPES = [(130, 70, 129), (1, 40, 300), (200, 3, 7), (129, 257, 128), (5, 0, 7)]


def _tile_close(got, want, dt):
    got = np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    if np.dtype(dt).kind == "f":
        tol = 1e-2 if dt == np.float16 else 1e-4 if dt == np.float32 else 1e-12
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got, want)


@needs_device
@pytest.mark.parametrize("tiles", ["1", "0"])
@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64, np.int8, np.int32, np.int64, np.uint16],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("m,k,n", _TILE_SHAPES)
def test_tiled_contractions_match_numpy(monkeypatch, tiles, dt, m, k, n):
    """A contraction on a device has a tiled rendering (linear_tile.c: a work-group per 128 x 128
    output tile, the operands staged through local memory, 8 x 8 outputs a thread). With
    FRIT_DEVICE_TILES=1 it runs at every size, so the edges (rows, columns and reduction steps past
    the extents, an empty reduction) are exercised; with 0 the plain rendering runs. Both against
    numpy, with an epilogue that reads a bias and the output's own row."""
    monkeypatch.setenv("FRIT_DEVICE_TILES", tiles)
    rng = np.random.default_rng(m * 1000 + k + n)
    a, b = _vals(rng, dt, (m, k)) % 7, _vals(rng, dt, (k, n)) % 7
    c = _vals(rng, dt, (n,)) % 7
    f = frit.jit(lambda x, y, z: (x @ y) * 2 + z, device=DEV)
    if k >= 16 and m >= 32 and n >= 32:
        assert "_t(" in f.lower(a, b, c).source, "no tiled rendering"
    with np.errstate(all="ignore"):
        want = (a @ b) * dt(2) + c
    _tile_close(f(a, b, c), want, dt)


@needs_device
@pytest.mark.parametrize("tiles", ["1", "0"])
def test_tiled_contraction_forms(monkeypatch, tiles):
    """The forms a tiled contraction takes: transposed operands (the staging reads the contiguous
    index fastest), a batch, an einsum, a max-plus product (a MAX reduction, NaN propagating) and a
    product of two operands per side."""
    monkeypatch.setenv("FRIT_DEVICE_TILES", tiles)
    rng = np.random.default_rng(7)
    a = rng.standard_normal((50, 70)).astype(np.float32)
    b = rng.standard_normal((90, 50)).astype(np.float32)
    _tile_close(frit.jit(lambda x, y: x.T @ y.T, device=DEV)(a, b), a.T @ b.T, np.float32)
    x = rng.standard_normal((3, 70, 40)).astype(np.float32)
    y = rng.standard_normal((3, 40, 130)).astype(np.float32)
    _tile_close(frit.jit(lambda p, q: p @ q, device=DEV)(x, y), x @ y, np.float32)
    _tile_close(frit.jit(lambda p, q: frit.einsum("ik,jk->ij", p, q), device=DEV)(a.T.copy(), b), a.T @ b.T,
                np.float32)
    a[3, 5] = np.nan
    mp = frit.jit(lambda p, q: frit.max(p[:, :, None] + q[None, :, :], axis=1), device=DEV)
    with np.errstate(all="ignore"):
        _tile_close(mp(a.T.copy(), b.T.copy()), np.max(a.T[:, :, None] + b.T[None], axis=1), np.float32)
    u = rng.standard_normal((70, 50)).astype(np.float32)
    two = frit.jit(lambda p, q, r, s: frit.sum((p * q)[:, :, None] * (r * s)[None], axis=1), device=DEV)
    _tile_close(two(u, u, b.T.copy(), b.T.copy()), (u * u) @ (b.T * b.T), np.float32)
