"""frit.scatter with every mode (add/min/max/and/or/xor/set) on every integer dtype and bool, with
duplicate indices, against numpy's unbuffered ufunc.at (np.bitwise_and.at ...) and a plain loop in
index order for set; the C frit_scatter on the compiled, fused-interpreter and unfused paths; and
the errors for bitwise modes on floats."""
import numpy as np
import pytest

import frit
from frit import _indexing as I
from frit import _lib as L

from util import NP_OF, PATHS

INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
              np.bool_]
UFUNC = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
         "or": np.bitwise_or, "xor": np.bitwise_xor}
MODES = ["add", "min", "max", "and", "or", "xor", "set"]


def _oracle(a, idx, v, mode):
    """numpy: ufunc.at combines duplicates one after another in index order (bool add is OR, bool
    min/max are AND/OR, as numpy does them); set keeps the last duplicate."""
    out = a.copy()
    v = np.broadcast_to(np.asarray(v).astype(a.dtype), np.asarray(idx).shape + a.shape[1:])
    if mode == "set":
        for j, p in enumerate(np.asarray(idx)):
            out[p] = v[j]
    else:
        UFUNC[mode].at(out, idx, v)
    return out


def _rand(rng, dt, shape):
    if dt is np.bool_:
        return rng.random(shape) < 0.5
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)


@pytest.mark.parametrize("dt", INT_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("mode", MODES)
def test_scatter_modes_python(dt, mode):
    rng = np.random.default_rng(abs(hash((np.dtype(dt).name, mode))) % 2 ** 32)
    outs, refs = [], []
    for shape, nidx in [((7,), 40), ((5, 3), 25), ((1,), 6), ((6,), 0)]:
        a = _rand(rng, dt, shape)
        idx = rng.integers(-shape[0], shape[0], size=nidx)   # many duplicates, negatives too
        v = _rand(rng, dt, (nidx,) + shape[1:])
        outs.append(frit.scatter(frit.asarray(a), idx, v, mode=mode))
        refs.append(_oracle(a, np.where(idx < 0, idx + shape[0], idx), v, mode))
    frit.realize(*outs)
    for o, r in zip(outs, refs):
        assert o.dtype.name == np.dtype(dt).name
        np.testing.assert_array_equal(np.asarray(o), r)


@pytest.mark.parametrize("mode", ["and", "or", "xor"])
def test_scatter_bitwise_broadcast_and_lazy(mode):
    a = np.arange(24, dtype=np.int32).reshape(4, 6) * 37 - 300
    x = frit.asarray(a)
    # a scalar value broadcast over rows, indices given as a lazy frit array (computed on device)
    li = frit.asarray(np.array([3, 1, 3, 3, 0], np.int64)) * 1
    got = frit.scatter(x, li, 0x55, mode=mode)
    np.testing.assert_array_equal(np.asarray(got), _oracle(a, [3, 1, 3, 3, 0], 0x55, mode))
    # numpy-style 2-D index (x[i, j] element updates) with duplicate pairs
    ii, jj = np.array([0, 2, 0, 0]), np.array([5, 1, 5, 5])
    v = np.array([1, 2, 4, 8], np.int32)
    ref = a.copy()
    UFUNC[mode].at(ref, (ii, jj), v)
    np.testing.assert_array_equal(np.asarray(frit.scatter(x, (ii, jj), v, mode=mode)), ref)


def test_scatter_large_parallel_xor():
    """Rows in parallel (trailing axis) with a long sequential duplicate chain per element."""
    rng = np.random.default_rng(5)
    a = rng.integers(0, 2 ** 31, size=(64, 512), dtype=np.int64)
    idx = rng.integers(0, 64, size=5000)
    v = rng.integers(0, 2 ** 40, size=(5000, 512), dtype=np.int64)
    for mode in ("xor", "or", "and", "add"):
        np.testing.assert_array_equal(np.asarray(frit.scatter(frit.asarray(a), idx, v, mode=mode)),
                                      _oracle(a, idx, v, mode))


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("mode", ["and", "or", "xor"])
def test_scatter_c_paths(path, mode):
    """frit_scatter through the C API on every evaluation path (u16 and bool)."""
    rng = np.random.default_rng(11)
    for ldt in (L.U16, L.BOOL, L.I64):
        a = _rand(rng, NP_OF[ldt], (9, 2))
        idx = rng.integers(0, 9, size=30).astype(np.int32)
        v = _rand(rng, NP_OF[ldt], (30, 2))
        with L.Ctx() as ctx:
            x = ctx.input("x", ldt, (9, 2))
            i = ctx.input("i", L.I32, (30,))
            u = ctx.input("u", ldt, (30, 2))
            t = L.Tensor(ctx, I._scatter(ctx.ptr, x.ptr, i.ptr, u.ptr, I.ATOMIC[mode]))
            got = L.run(t, [a, idx, v], **PATHS[path])[0]
        np.testing.assert_array_equal(got, _oracle(a, idx, v, mode))


@pytest.mark.parametrize("mode", ["and", "or", "xor"])
@pytest.mark.parametrize("dt", [frit.float32, frit.float64, frit.float16, frit.bfloat16])
def test_scatter_bitwise_on_floats_is_an_error(mode, dt):
    x = frit.zeros((4,), dtype=dt)
    with pytest.raises(frit.FritError, match=mode):
        frit.scatter(x, [0, 1], 1, mode=mode)
    with L.Ctx() as ctx:   # the C API names the op, the mode and the dtype
        xt = ctx.input("x", L.F32, (4,))
        it = ctx.input("i", L.I64, (2,))
        p = I._scatter(ctx.ptr, xt.ptr, it.ptr, xt.ptr, I.ATOMIC[mode])
        assert not p
        msg = ctx.error()
        assert "scatter" in msg and mode in msg and "f32" in msg


def test_scatter_bad_mode():
    with pytest.raises(ValueError, match="mode"):
        frit.scatter(frit.zeros((3,)), [0], 1, mode="mul")
