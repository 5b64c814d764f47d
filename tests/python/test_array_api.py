"""frit.Array and the package surface: dtype objects, attributes, repr, Python conversions,
operators (reflected, in-place), laziness, result_type/can_cast/finfo, error types and messages."""
import math
import operator

import numpy as np
import pytest

import frit


def fa(v, dt=None):
    return frit.asarray(v, dtype=dt)


# ---------------------------------------------------------------- dtypes

def test_dtype_objects():
    assert frit.float32 == np.float32 and frit.float32 == np.dtype("float32")
    assert np.dtype("float32") == frit.float32 and np.float32 == frit.float32
    assert frit.float32 == "float32" and frit.float32 != frit.float64
    assert frit.int8 != np.uint8 and frit.bool == np.bool_ and frit.bool == bool
    assert np.dtype(frit.int16) == np.int16
    assert np.zeros(2, dtype=frit.uint32).dtype == np.uint32
    assert frit.dtype("bf16") is frit.bfloat16 and frit.dtype(float) is frit.float64
    assert frit.bfloat16 != np.float32 and np.dtype("float32") != frit.bfloat16
    assert repr(frit.float16) == "frit.float16" and str(frit.uint64) == "uint64"
    assert frit.dtype("complex64") is frit.complex64  # complex dtypes: docs/complex.md
    assert frit.dtype(np.complex128) is frit.complex128


def test_finfo_iinfo_result_type_can_cast():
    assert frit.finfo(frit.float32).eps == np.finfo(np.float32).eps
    assert frit.iinfo(frit.int8).max == 127
    assert frit.finfo(frit.bfloat16).eps == 2.0 ** -7
    with pytest.raises(TypeError):
        frit.iinfo(frit.float32)
    for a in ("int8", "uint8", "int32", "float16", "float32", "bool", "uint64", "int64"):
        for b in ("int8", "uint16", "float64", "bool", "float16", "int64"):
            assert frit.result_type(a, b) == np.result_type(a, b), (a, b)
            for c in ("safe", "same_kind", "unsafe", "no"):
                assert frit.can_cast(a, b, c) == np.can_cast(a, b, c), (a, b, c)
    x = fa(np.zeros(2, np.int8))
    assert frit.result_type(x, 1) == frit.int8
    assert frit.result_type(x, 1.0) == frit.float64
    assert frit.result_type(fa(np.zeros(2, np.float16)), 1.0) == frit.float16
    assert frit.result_type(frit.bfloat16, frit.float16) == frit.float32
    assert frit.can_cast(frit.bfloat16, frit.float32) and not frit.can_cast(frit.float32, frit.bfloat16)


# ---------------------------------------------------------------- arrays

def test_attributes_and_repr():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = fa(a)
    assert x.shape == (3, 4) and x.ndim == 2 and x.size == 12 and x.dtype == np.float32
    assert len(x) == 3 and x.T.shape == (4, 3) and x.mT.shape == (4, 3)
    assert isinstance(x, frit.Array)
    assert repr(x) == "frit." + repr(a)[0].upper() + repr(a)[1:].replace("\n", "\n" + " " * 5)
    assert repr(fa(np.arange(3))) == "frit.Array([0, 1, 2])"
    assert str(x) == str(a)
    assert repr(fa(np.array([1.5], np.float32), "bfloat16")) == "frit.Array([1.5], dtype=bfloat16)"
    assert f"{fa(np.float64(2.5)):.2f}" == "2.50"
    with pytest.raises(TypeError):
        hash(x)
    with pytest.raises(TypeError):
        frit.Array()


def test_lazy_and_realise_once():
    s = frit.new_session()
    x = fa(np.arange(5, dtype=np.float32))
    y = x * 2 + 1
    assert s.stats["realize"] == 0  # nothing ran yet: lazy
    assert y.shape == (5,) and y.dtype == frit.float32
    np.testing.assert_array_equal(np.asarray(y), np.arange(5) * 2 + 1)
    np.asarray(y), y.tolist(), repr(y)
    assert s.stats["realize"] == 1  # realised once, then concrete
    z = y - 1  # built on the realised value
    np.testing.assert_array_equal(z.numpy(), np.arange(5) * 2)


def test_long_chain_is_bounded():
    x = fa(np.zeros(4, np.float32))
    for _ in range(1000):  # chains are realised as they grow: no deep recursion, bounded graph
        x = x + 1
    np.testing.assert_array_equal(np.asarray(x), np.full(4, 1000, np.float32))


def test_scalar_conversions():
    x = fa(np.array([[2.5]], np.float32))
    assert float(x) == 2.5 and int(x) == 2 and bool(x) is True
    assert float(fa(np.float32(1.25))) == 1.25
    assert operator.index(fa(np.int64(7))) == 7 and [10, 20, 30][fa(np.int32(1))] == 20
    assert x.item() == 2.5 and fa(np.arange(3)).tolist() == [0, 1, 2]
    with pytest.raises(TypeError):
        float(fa(np.zeros(3)))
    with pytest.raises(ValueError) if False else pytest.raises(TypeError):
        bool(fa(np.zeros(3)))
    with pytest.raises(TypeError):
        operator.index(fa(np.float32(1)))
    with pytest.raises(TypeError):
        len(fa(np.float32(1)))
    assert bool(fa(np.zeros((1, 1)))) is False


def test_iteration():
    a = np.arange(6).reshape(3, 2)
    rows = [np.asarray(r) for r in fa(a)]
    assert len(rows) == 3 and all((r == w).all() for r, w in zip(rows, a))
    with pytest.raises(TypeError):
        iter(fa(np.int8(3))).__next__()


def test_operators_and_reflected():
    a = np.array([[1, -2, 3], [4, 5, -6]], np.int32)
    b = np.array([2, 3, 1], np.int32)
    x, y = fa(a), fa(b)
    cases = [(x + y, a + b), (x - y, a - b), (x * y, a * b), (x / y, a / b), (x // y, a // b),
             (x % y, a % b), (x ** 2, a ** 2), (x & y, a & b), (x | y, a | b), (x ^ y, a ^ b),
             (x << 1, a << 1), (x >> 1, a >> 1), (~x, ~a), (-x, -a), (+x, +a), (abs(x), abs(a)),
             (x < y, a < b), (x <= 2, a <= 2), (x > y, a > b), (x >= y, a >= b),
             (x == y, a == b), (x != 3, a != 3), (3 - x, 3 - a), (2 * x, 2 * a), (7 // y, 7 // b),
             (1 / y, 1 / b), (2 ** y, 2 ** b), (5 % y, 5 % b), (1 << y, 1 << b), (b - x, b - a),
             (a @ fa(b.reshape(3, 1)), a @ b.reshape(3, 1)), (np.int32(3) * x, np.int32(3) * a)]
    q, r = divmod(x, y)
    cases += [(q, a // b), (r, a % b)]
    frit.realize(*[c[0] for c in cases])
    for i, (g, w) in enumerate(cases):
        assert isinstance(g, frit.Array), i
        assert g.dtype == w.dtype, (i, g.dtype, w.dtype)
        np.testing.assert_array_equal(np.asarray(g), w, err_msg="case %d" % i)


def test_numpy_operand_defers_to_frit():
    a = np.arange(3.0)
    x = fa(np.ones(3))
    r = a + x
    assert isinstance(r, frit.Array)
    np.testing.assert_array_equal(np.asarray(r), a + 1)
    assert isinstance(a < x, frit.Array)
    # numpy functions take frit arrays through __array__
    np.testing.assert_array_equal(np.sin(x), np.sin(np.ones(3)))


def test_inplace_rebinds_object():
    x = fa(np.array([1, 2, 3], np.int8))
    alias = x
    x += 1
    assert x is alias and x.dtype == frit.int8
    np.testing.assert_array_equal(np.asarray(alias), [2, 3, 4])
    y = x * 10  # y keeps the value x had
    x *= 2
    np.testing.assert_array_equal(np.asarray(y), [20, 30, 40])
    np.testing.assert_array_equal(np.asarray(x), [4, 6, 8])
    with pytest.raises(TypeError):
        x /= 2  # float64 result cannot be cast back to int8 (same_kind), as in numpy
    with pytest.raises(TypeError):
        x += 1.5
    f = fa(np.ones(3, np.float32))
    f += fa(np.ones(3, np.float64))  # float64 -> float32 is same_kind
    assert f.dtype == frit.float32
    with pytest.raises(ValueError):
        f += fa(np.ones((2, 3), np.float32))  # broadcasting would change the shape
    for op in ("isub", "imul", "ifloordiv", "imod", "ipow", "iand", "ior", "ixor", "ilshift",
               "irshift"):
        v = fa(np.array([5, 6], np.int32))
        getattr(operator, op)(v, 2)
        want = getattr(operator, op)(np.array([5, 6], np.int32), 2)
        np.testing.assert_array_equal(np.asarray(v), want, err_msg=op)


def test_methods():
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4) - 7
    x = fa(a)
    cases = [(x.sum(), a.sum()), (x.sum(axis=1, keepdims=True), a.sum(axis=1, keepdims=True)),
             (x.mean(axis=(0, 2)), a.mean(axis=(0, 2))), (x.max(axis=0), a.max(axis=0)),
             (x.min(), a.min()), (x.prod(axis=2), a.prod(axis=2)), (x.var(), a.var()),
             (x.std(ddof=1), a.std(ddof=1)), (x.argmax(axis=1), a.argmax(axis=1)),
             (x.argmin(), a.argmin()), (x.any(axis=0), a.any(axis=0)), (x.all(), a.all()),
             (x.cumsum(axis=2), a.cumsum(axis=2)), (x.reshape(6, 4), a.reshape(6, 4)),
             (x.transpose(), a.transpose()), (x.transpose((1, 0, 2)), a.transpose((1, 0, 2))),
             (x[:1].squeeze(0), a[:1].squeeze(0)), (x.flatten(), a.flatten()), (x.ravel(), a.ravel()),
             (x.astype(frit.int32), a.astype(np.int32)), (x.clip(-2, 5), a.clip(-2, 5)),
             (x.round(), a.round()), (x.copy(), a.copy()), (x.T, a.T),
             (x.argmax(axis=1, keepdims=True), a.argmax(axis=1, keepdims=True))]
    frit.realize(*[c[0] for c in cases])
    for i, (g, w) in enumerate(cases):
        w = np.asarray(w)
        assert g.dtype == w.dtype, (i, g.dtype, w.dtype)
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12, err_msg="method case %d" % i)
    assert x.astype(frit.float64, copy=False) is x


# ---------------------------------------------------------------- errors

def test_error_types_and_messages():
    x = fa(np.zeros((2, 3), np.float32))
    y = fa(np.zeros((4,), np.float32))
    assert issubclass(frit.FritError, ValueError)
    assert issubclass(frit.FritTypeError, TypeError) and issubclass(frit.FritTypeError, frit.FritError)
    with pytest.raises(frit.FritError) as e:
        x + y
    msg = str(e.value)
    assert "(2, 3)" in msg and "(4)" in msg.replace(",)", ")") and "f32" in msg, msg
    with pytest.raises(frit.FritError, match="matmul"):
        frit.matmul(x, x)
    with pytest.raises(TypeError):
        x + "a"  # NotImplemented from both sides: Python's TypeError
    with pytest.raises(frit.FritTypeError):
        frit.add(x, "a")
    with pytest.raises(TypeError):
        x + None
    assert (x + 1j).dtype.kind == "c"
    with pytest.raises(TypeError):
        frit.asarray(["a", "b"])
    assert frit.asarray(np.zeros(2, np.complex64)).dtype == frit.complex64
    with pytest.raises(TypeError):
        frit.sum(x, axis="0")
    with pytest.raises(TypeError):
        x[0] = "a"  # in-place writes exist (test_control_host.py); a string value is a TypeError
    with pytest.raises(frit.FritError):
        x.sum(axis=5)
    with pytest.raises(frit.FritError):
        frit.transpose(x, (0, 0))
    # the session stays usable after errors
    np.testing.assert_array_equal(np.asarray(x + 1), np.ones((2, 3), np.float32))


def test_bool_and_nan_semantics():
    a = np.array([np.nan, 1.0, -np.inf, 0.0], np.float32)
    x = fa(a)
    np.testing.assert_array_equal(np.asarray(x == x), a == a)
    np.testing.assert_array_equal(np.asarray(frit.isnan(x)), np.isnan(a))
    np.testing.assert_array_equal(np.asarray(x.astype(bool)), a.astype(bool))
    assert math.isnan(float(frit.maximum(x, 0.0)[0]))
    np.testing.assert_array_equal(np.asarray(frit.minimum(x, 0.5)), np.minimum(a, np.float32(0.5)))
