"""Regressions for failures the public array API conformance suite (docs/conformance.md) found in
the Python package; numpy is the oracle."""
import numpy as np
import pytest

import frit


def test_expand_dims_out_of_range_axis_is_index_error():
    x = frit.asarray(np.zeros((2, 3), np.float32))
    for axis in (3, -4, 7):
        with pytest.raises(IndexError):
            frit.expand_dims(x, axis=axis)
        with pytest.raises(ValueError):  # numpy's AxisError is both
            frit.expand_dims(x, axis=axis)
    for axis in (2, -3):
        np.testing.assert_array_equal(np.asarray(frit.expand_dims(x, axis=axis)),
                                      np.expand_dims(np.zeros((2, 3), np.float32), axis))


@pytest.mark.parametrize("sa,sb,axes", [((0, 0, 0), (0, 0), 2), ((3, 0), (0, 4), 1),
                                        ((0, 2), (2, 0), 1), ((2, 0), (0,), 1),
                                        ((0,), (0,), 1), ((2, 3), (3, 2), 0)])
def test_tensordot_empty_contraction(sa, sb, axes):
    a = np.arange(np.prod(sa), dtype=np.uint8).reshape(sa)
    b = np.arange(np.prod(sb), dtype=np.uint8).reshape(sb)
    got = frit.tensordot(frit.asarray(a), frit.asarray(b), axes=axes)
    want = np.tensordot(a, b, axes=axes)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("scale", [1.5e-37, 1e-20, 1.0, 1e20, 1e30])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_tiny_and_huge_columns(scale, mode):
    """Squares of the column entries under- or overflowed: R was not triangular, or inf."""
    x = (np.array([[1, 2, 0.5], [1, 1, 3], [0.25, 4, 1], [2, 1, 1]], np.float32) * scale).astype(np.float32)
    q, r = frit.linalg.qr(frit.asarray(x), mode=mode)
    q, r = np.asarray(q), np.asarray(r)
    assert np.array_equal(r, np.triu(r)) and np.isfinite(r).all()
    wq, wr = np.linalg.qr(x, mode=mode)
    np.testing.assert_allclose(np.abs(r), np.abs(wr), rtol=1e-5, atol=1e-6 * scale)
    np.testing.assert_allclose(q @ r, x, rtol=1e-5, atol=1e-5 * scale)
    np.testing.assert_allclose(q.T @ q, np.eye(q.shape[1]), atol=1e-5)


def test_qr_tiny_subdiagonal_is_zeroed():
    x = np.array([[1, 2], [1e-30, 3]], np.float32)
    q, r = frit.linalg.qr(frit.asarray(x))
    r = np.asarray(r)
    assert r[1, 0] == 0
    np.testing.assert_allclose(np.asarray(q) @ r, x, atol=1e-6)


def test_var_has_the_array_api_signature():
    import inspect
    params = inspect.signature(frit.var).parameters
    assert params["x"].kind is inspect.Parameter.POSITIONAL_ONLY
    assert {"axis", "correction", "keepdims"} <= set(params)
    x = np.arange(12, dtype=np.float64).reshape(3, 4)
    np.testing.assert_allclose(np.asarray(frit.var(frit.asarray(x), axis=1, correction=1, keepdims=True)),
                               np.var(x, axis=1, ddof=1, keepdims=True))
    np.testing.assert_allclose(np.asarray(frit.var(frit.asarray(x), 0)), np.var(x, 0))
    v = frit.var(1.5, frit.float32)  # a scalar init still makes a variable, dtype second
    assert isinstance(v, frit.Var) and v.dtype == frit.float32
    with pytest.raises(TypeError):
        frit.var(1.5, keepdims=True)
