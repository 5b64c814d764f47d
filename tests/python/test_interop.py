"""numpy interop (zero-copy asarray, np.asarray, __array__, DLPack, non-contiguous and negative-
stride inputs, bfloat16) and eager performance: new sizes reuse one compiled program."""
import gc
import time

import numpy as np
import pytest

import frit
from util import to_bf16_exact


def test_asarray_zero_copy_and_back():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = frit.asarray(a)
    assert np.asarray(x) is a or np.shares_memory(np.asarray(x), a)  # zero-copy both ways
    assert x.dtype == frit.float32 and x.shape == (3, 4)
    c = frit.asarray(a, copy=True)
    assert not np.shares_memory(np.asarray(c), a)
    r = np.asarray(x + 1)
    assert r.dtype == np.float32 and r.flags.c_contiguous
    np.testing.assert_array_equal(np.asarray(frit.asarray(r)), a + 1)


@pytest.mark.parametrize("dt", ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                "uint32", "uint64", "float16", "float32", "float64"])
def test_round_trip_dtypes(dt):
    a = (np.arange(-3, 9) % 5).astype(dt).reshape(3, 4)
    x = frit.asarray(a)
    assert x.dtype == dt
    b = np.asarray(x.T.T + frit.zeros((), dt))
    assert b.dtype == a.dtype
    np.testing.assert_array_equal(b, a + np.zeros((), dt))


def test_non_contiguous_and_negative_steps(rng):
    base = rng.standard_normal((6, 8)).astype(np.float32)
    for view in (base[::2, 1::3], base[::-1], base[:, ::-2], base.T, base[1:5, 2][:, None],
                 np.broadcast_to(base[0], (3, 8))):
        x = frit.asarray(view)
        np.testing.assert_array_equal(np.asarray(x * 2), view * 2)
        np.testing.assert_allclose(np.asarray(frit.sum(x, axis=0)), view.sum(axis=0), rtol=1e-5,
                                   atol=1e-6)


def test_list_and_scalar_inputs():
    assert frit.asarray([1, 2, 3]).dtype == frit.int64
    assert frit.asarray([1.0, 2]).dtype == frit.float64
    assert frit.asarray(True).dtype == frit.bool and frit.asarray(2.5).shape == ()
    assert frit.asarray([[1, 2]], dtype=frit.float32).dtype == frit.float32
    x = frit.asarray([frit.asarray(np.float32(1)), frit.asarray(np.float32(2))])
    np.testing.assert_array_equal(np.asarray(x), [1, 2])
    assert frit.asarray(np.float32(3)).dtype == frit.float32  # numpy scalars are strong
    e = frit.asarray(np.zeros((0, 5), np.int16))
    assert e.shape == (0, 5) and np.asarray(e + 1).shape == (0, 5)


def test_array_protocol():
    x = frit.asarray(np.array([1.5, 2.5], np.float32))
    assert np.array(x, dtype=np.float64).dtype == np.float64
    c = np.array(x, copy=True)
    c[0] = 9
    assert float(x[0]) == 1.5
    with pytest.raises(ValueError):
        np.asarray(frit.asarray(np.zeros(2, np.float32), "bfloat16"), copy=False)


def test_dlpack():
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    x = frit.asarray(a) * 3
    assert x.__dlpack_device__() == (1, 0)
    b = np.from_dlpack(x)
    np.testing.assert_array_equal(b, a * 3)
    y = frit.from_dlpack(b)
    np.testing.assert_array_equal(np.asarray(y), a * 3)


def test_bfloat16_values(rng):
    v = rng.standard_normal(10).astype(np.float32)
    x = frit.asarray(v, dtype=frit.bfloat16)
    assert x.dtype == frit.bfloat16
    got = np.asarray(x)
    assert got.dtype == np.float32  # numpy has no bfloat16: values come back as float32
    np.testing.assert_array_equal(got, to_bf16_exact(v.astype(np.float64)))
    s = np.asarray(x * 2)
    np.testing.assert_array_equal(s, to_bf16_exact(got.astype(np.float64) * 2))
    assert (x + 1.0).dtype == frit.bfloat16 and (x + x.astype(frit.float16)).dtype == frit.float32


def test_eager_conv_and_sort_reuse_their_programs(tmp_path):
    """Eager conv2d (whose gradient rule takes fresh copies of its inputs: a new graph each build),
    sort (dozens of kernels a build) and inv (LU kernels) replay from a memo: repeated calls, at the same and at
    other sizes, hit the program cache instead of compiling a program each (every eager conv
    once ran the whole compile pipeline, 0.4 ms). Results against numpy."""
    sess = frit.new_session(cache_dir=str(tmp_path))
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)

    def conv_np(x):  # valid 3x3 cross-correlation, stride 1
        n, c, h, wd = x.shape
        out = np.zeros((n, 4, h - 2, wd - 2))
        for i in range(3):
            for j in range(3):
                out += np.einsum("nchw,oc->nohw", x[:, :, i:i + h - 2, j:j + wd - 2], w[:, :, i, j])
        return out
    for rep in range(3):
        for hw in (8, 11):
            x = rng.standard_normal((2, 3, hw, hw)).astype(np.float32)
            got = np.asarray(frit.nn.conv2d(frit.asarray(x), frit.asarray(w)))
            np.testing.assert_allclose(got, conv_np(x.astype(np.float64)), rtol=1e-4, atol=1e-4)
            v = rng.standard_normal((40, 30)).astype(np.float32)
            xs = frit.asarray(v)
            np.testing.assert_array_equal(np.asarray(frit.sort(xs)), np.sort(v))
            np.testing.assert_array_equal(np.asarray(frit.argsort(xs)), np.argsort(v, kind="stable"))
            m = rng.standard_normal((hw, hw)) + hw * np.eye(hw)
            np.testing.assert_allclose(np.asarray(frit.linalg.inv(frit.asarray(m))), np.linalg.inv(m), rtol=1e-9, atol=1e-12)
        if rep == 0:
            first = dict(sess.stats)
    assert sess.stats["compiles"] == first["compiles"], (first, sess.stats)


def test_eager_new_sizes_compile_once(tmp_path):
    """a*b+c on 20 different sizes: one C translation unit is compiled, the rest hit caches."""
    sess = frit.new_session(cache_dir=str(tmp_path))
    rng = np.random.default_rng(0)
    for n in range(2, 22):
        a, b, c = (rng.standard_normal(n * 3 + 1).astype(np.float32) for _ in range(3))
        got = np.asarray(frit.asarray(a) * frit.asarray(b) + frit.asarray(c))
        np.testing.assert_allclose(got, a * b + c, rtol=1e-6)
    assert sess.stats["cc"] == 1, sess.stats
    assert sess.stats["compiles"] == 1 and sess.stats["hits"] == 19, sess.stats
    # 2-d with broadcasting, and scalars of changing values: still one program each (dims of 4
    # or less are constants of their program, as under frit.jit: sizes from 5)
    for n in range(5, 15):
        a = rng.standard_normal((n, n + 1)).astype(np.float32)
        b = rng.standard_normal(n + 1).astype(np.float32)
        got = np.asarray(frit.asarray(a) * (n + 0.5) + frit.asarray(b))
        np.testing.assert_allclose(got, a * np.float32(n + 0.5) + b, rtol=1e-6)
    assert sess.stats["cc"] == 2, sess.stats


def test_eager_overhead_report(capsys):
    """Prints per-op costs (not asserted: machines differ)."""
    frit.new_session()
    a, b = (frit.asarray(np.ones(100, np.float32)) for _ in range(2))
    np.asarray(a * b)
    np.asarray(a * b + 1.5)
    n = 300
    gc.collect()
    t = time.perf_counter()
    for _ in range(n):
        a * b
    lazy = (time.perf_counter() - t) / n
    t = time.perf_counter()
    for _ in range(n):
        np.asarray(a * b)
    real = (time.perf_counter() - t) / n
    t = time.perf_counter()
    for _ in range(n):
        np.asarray(a * b + 1.5)
    real2 = (time.perf_counter() - t) / n
    with capsys.disabled():
        print("\n[frit eager] lazy op %.1f us; op + realise (cache hit) %.1f us; "
              "2 ops + scalar + realise %.1f us" % (lazy * 1e6, real * 1e6, real2 * 1e6))
