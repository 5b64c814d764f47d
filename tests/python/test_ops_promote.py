"""frit_promote against numpy's result_type for every pair of dtypes (bf16 ranks like f16:
bf16 with bool/i8/u8/bf16 stays bf16, bf16 with f16 gives f32, otherwise as f16 would)."""
import pytest

from frit import _lib as L
from test_ops_elementwise import expected_promote
from util import dtname


@pytest.mark.parametrize("a", L.ALL_DTYPES, ids=dtname)
@pytest.mark.parametrize("b", L.ALL_DTYPES, ids=dtname)
def test_promote(a, b):
    assert dtname(L.promote(a, b)) == dtname(expected_promote(a, b))


@pytest.mark.parametrize("a", L.ALL_DTYPES, ids=dtname)
@pytest.mark.parametrize("b", L.ALL_DTYPES, ids=dtname)
def test_promote_symmetric(a, b):
    assert L.promote(a, b) == L.promote(b, a)


@pytest.mark.parametrize("a", L.ALL_DTYPES, ids=dtname)
def test_promote_tensor_dtype(ctx, a):
    """The frontend's add uses frit_promote: mixed-dtype add has the promoted dtype."""
    for b in L.ALL_DTYPES:
        ta, tb = ctx.input("a%d" % b, a, (2,)), ctx.input("b%d" % b, b, (2,))
        assert dtname(ctx.binary("maximum", ta, tb).dtype) == dtname(expected_promote(a, b))
