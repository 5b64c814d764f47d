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
