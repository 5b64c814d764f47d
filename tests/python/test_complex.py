"""complex64/complex128 against numpy: conversion, promotion (NEP 50), every supported elementwise
op, reductions, matmul, movement and indexing; eagerly, under frit.jit (two shapes) and through
the reference interpreter; ops without a complex loop in frit raise FritError naming them."""
import warnings

import numpy as np
import pytest

import frit

CDT = [np.complex64, np.complex128]
MODES = ["eager", "jit", "interp"]
# (mode, dtype) pairs of the big elementwise tests: jit on both dtypes; eager and the interpreter
# on one each (complex64 math runs through the complex128 formulas, so both are exercised)
MODE_DT = [("eager", np.complex64), ("jit", np.complex64), ("jit", np.complex128),
           ("interp", np.complex128)]
UNARY = ["negative", "positive", "conj", "conjugate", "real", "imag", "abs", "angle", "exp",
         "expm1", "log", "log1p", "log2", "log10", "sqrt", "square", "sin", "cos", "tan", "sinh",
         "cosh", "tanh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh",
         "reciprocal", "sign", "isfinite", "isinf", "isnan"]
FRIT_NAME = {"arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh",
             "arccosh": "acosh", "arctanh": "atanh"}


def crand(rng, shape, dt, scale=1.5):
    return (rng.standard_normal(shape) * scale + 1j * rng.standard_normal(shape) * scale).astype(dt)


def tol(dt):
    return (3e-6, 3e-6) if np.dtype(dt) == np.complex64 else (1e-13, 1e-13)


def close(got, want, dt, scale=1.0):
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind in "bui":
        np.testing.assert_array_equal(got, want)
        return
    rtol, atol = tol(dt)
    np.testing.assert_allclose(got, want, rtol=rtol * scale, atol=atol * scale)


def run(mode, f, *args):
    """f(*frit args) in a mode; jit is called on two shapes by the caller."""
    if mode == "jit":
        return frit.jit(f)(*args)
    if mode == "interp":
        with frit.Session(interpret=True).as_current():
            return f(*[frit.asarray(a) for a in args])
    return f(*[frit.asarray(a) for a in args])


def test_dtype_objects_and_roundtrip(rng):
    assert frit.complex64 == np.complex64 and frit.complex128 == np.dtype("complex128")
    assert frit.dtype("complex64") is frit.complex64 and frit.dtype(complex) is frit.complex128
    for dt in CDT:
        z = crand(rng, (4, 3), dt)
        a = frit.asarray(z)
        assert a.dtype == dt and a.shape == (4, 3) and a.ndim == 2
        np.testing.assert_array_equal(np.asarray(a), z)
        np.testing.assert_array_equal(np.asarray(a.T), z.T)
        assert complex(frit.asarray(z[0, 0])) == complex(z[0, 0])
    assert frit.asarray([1 + 2j, 3]).dtype == frit.complex128
    assert frit.asarray(np.arange(3.0), dtype=frit.complex64).dtype == frit.complex64


def test_astype(rng):
    z = crand(rng, (5,), np.complex128)
    a = frit.asarray(z)
    for dt in ["float32", "float64", "int32", "bool", "complex64", "complex128"]:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            want = z.astype(dt)
        got = np.asarray(a.astype(dt))
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)
    x = frit.asarray(np.arange(4, dtype=np.int16))
    assert x.astype(frit.complex64).dtype == frit.complex64
    np.testing.assert_array_equal(np.asarray(frit.astype(x, "complex128")), np.arange(4) + 0j)


REALS = ["bool", "int8", "uint8", "int16", "uint16", "int32", "int64", "uint64", "float16",
         "float32", "float64"]


@pytest.mark.parametrize("cdt", ["complex64", "complex128"])
def test_promotion_table(cdt):
    for r in REALS + ["complex64", "complex128"]:
        x = frit.asarray(np.ones(2, r))
        z = frit.asarray(np.ones(2, cdt))
        want = np.result_type(np.dtype(r), np.dtype(cdt))
        assert (x + z).dtype == want, (r, cdt)
        assert (z * x).dtype == want, (r, cdt)
        assert frit.result_type(x, z) == want
    # weak Python scalars (NEP 50)
    for r in REALS:
        x = np.ones(2, r)
        assert (frit.asarray(x) * 1j).dtype == (x * 1j).dtype, r
        assert (1j + frit.asarray(x)).dtype == (1j + x).dtype, r
    z = np.ones(2, cdt)
    assert (frit.asarray(z) * 2.5).dtype == (z * 2.5).dtype
    assert (3 - frit.asarray(z)).dtype == (3 - z).dtype


def _unary_all(a):
    out = []
    for name in UNARY:
        out.append(getattr(frit, FRIT_NAME.get(name, name))(a))
    return tuple(out)


@pytest.mark.parametrize("mode,dt", MODE_DT)
def test_unary(rng, mode, dt):
    shapes = [(5, 3), (7, 3)] if mode == "jit" else [(4, 3)]
    f = frit.jit(_unary_all) if mode == "jit" else None
    for shp in shapes:
        z = crand(rng, shp, dt)
        z[0, 0] = 0.3 + 0.2j  # small |z|: log1p/expm1/asinh near zero
        if mode == "jit":
            got = f(z)
        elif mode == "interp":
            with frit.Session(interpret=True).as_current():
                got = frit.realize(*_unary_all(frit.asarray(z)))
        else:
            got = frit.realize(*_unary_all(frit.asarray(z)))
        for name, g in zip(UNARY, got):
            with np.errstate(all="ignore"):
                want = getattr(np, name)(z)
            scale = 30.0 if name in ("tan", "tanh", "log1p", "log", "log2", "log10") else 4.0
            try:
                close(g, want, dt, scale)
            except AssertionError as e:
                raise AssertionError("%s %s: %s" % (name, np.dtype(dt), e)) from None


def _binary_all(a, b):
    return (a + b, a - b, a * b, a / b, a ** b, a ** 3, a ** -2, a ** 0.5, frit.equal(a, b),
            frit.not_equal(a, a), frit.where(frit.real(a) > 0, a, b), a * 2 + 1j, 1.5 - a,
            frit.square(a), frit.round(a * 10))


def _binary_np(a, b):
    return (a + b, a - b, a * b, a / b, a ** b, a ** 3, a ** -2, a ** 0.5, np.equal(a, b),
            np.not_equal(a, a), np.where(a.real > 0, a, b), a * 2 + 1j, 1.5 - a,
            np.square(a), np.round(a * 10))


@pytest.mark.parametrize("mode,dt", MODE_DT)
def test_binary(rng, mode, dt):
    shapes = [(5, 3), (6, 3)] if mode == "jit" else [(4, 3)]
    f = frit.jit(_binary_all) if mode == "jit" else None
    for shp in shapes:
        a, b = crand(rng, shp, dt, 0.8), crand(rng, shp[1:], dt, 0.8)
        a[0, 0] = b[0]
        got = f(a, b) if mode == "jit" else run(mode, lambda x, y: frit.realize(
            *_binary_all(x, y)), a, b)
        for i, (g, w) in enumerate(zip(got, _binary_np(a, b))):
            try:
                close(g, w, dt, 20.0 if i in (4, 7) else 4.0)
            except AssertionError as e:
                raise AssertionError("binary op %d: %s" % (i, e)) from None


@pytest.mark.parametrize("dt", CDT)
def test_mixed_real_operands(rng, dt):
    z = crand(rng, (4, 3), dt)
    for r, ops in (("float32", ("add", "divide")), ("float64", ("multiply",)),
                   ("int8", ("subtract",)), ("bool", ("multiply",))):
        x = (rng.standard_normal((4, 3)) * 3).astype(r)
        for op in ops:
            with np.errstate(all="ignore"):
                want1 = getattr(np, op)(z, x)
                want2 = getattr(np, op)(x, z)
            close(getattr(frit, op)(frit.asarray(z), frit.asarray(x)), want1, want1.dtype, 4)
            close(getattr(frit, op)(frit.asarray(x), frit.asarray(z)), want2, want2.dtype, 4)
    x = np.arange(1, 5, dtype=np.float32)
    close(frit.asarray(x) * 1j, x * 1j, np.complex64)
    close(frit.asarray(x) + np.array([1j, 2, 3, 4], dt), x + np.array([1j, 2, 3, 4], dt),
          np.result_type(x, dt))


@pytest.mark.parametrize("mode", MODES)
def test_reductions_and_matmul(rng, mode):
    dt = np.complex128

    def f(a, b):
        return (frit.sum(a), frit.sum(a, axis=0), frit.mean(a, axis=1), frit.prod(a, axis=1),
                frit.prod(a[:2]), a @ b, frit.matmul(a, frit.real(b)), frit.dot(a[0], b[:, 0]),
                frit.vdot(a[0], b[:, 0]), frit.var(a, axis=0), frit.cumsum(a, axis=1))

    def g(a, b):
        return (np.sum(a), np.sum(a, axis=0), np.mean(a, axis=1), np.prod(a, axis=1),
                np.prod(a[:2]), a @ b, a @ b.real, np.dot(a[0], b[:, 0]),
                np.vdot(a[0], b[:, 0]), np.var(a, axis=0), np.cumsum(a, axis=1))
    rows = [5, 7] if mode == "jit" else [5]
    jf = frit.jit(f)
    for n in rows:
        a, b = crand(rng, (n, 4), dt, 0.7), crand(rng, (4, 3), dt, 0.7)
        got = jf(a, b) if mode == "jit" else run(mode, lambda x, y: frit.realize(*f(x, y)), a, b)
        for i, (x, w) in enumerate(zip(got, g(a, b))):
            try:
                close(x, w, dt, 10)
            except AssertionError as e:
                raise AssertionError("reduction/matmul %d: %s" % (i, e)) from None


@pytest.mark.parametrize("mode", MODES)
def test_movement_and_indexing(rng, mode):
    dt = np.complex64
    idx = np.array([2, 0, 1])

    def f(a):
        return (a.reshape(-1), a.T, a[1:, ::-1], a[idx], frit.concatenate([a, a * 1j], axis=1),
                frit.stack([a, a]), frit.broadcast_to(a[:, :1], (a.shape[0], 4)) if None not in
                a.shape else a[:, :1] + frit.zeros((1, 4), frit.complex64),
                frit.expand_dims(a, 0), frit.flip(a, 0), frit.swapaxes(a, 0, 1), a[..., 2],
                frit.moveaxis(a, 0, 1), frit.pad(a, 1))

    def g(a):
        return (a.reshape(-1), a.T, a[1:, ::-1], a[idx], np.concatenate([a, a * 1j], axis=1),
                np.stack([a, a]), np.broadcast_to(a[:, :1], (a.shape[0], 4)),
                np.expand_dims(a, 0), np.flip(a, 0), np.swapaxes(a, 0, 1), a[..., 2],
                np.moveaxis(a, 0, 1), np.pad(a, 1))
    jf = frit.jit(f)
    for n in ([5, 6] if mode == "jit" else [4]):
        a = crand(rng, (n, 3), dt)
        got = jf(a) if mode == "jit" else run(mode, lambda x: frit.realize(*f(x)), a)
        for i, (x, w) in enumerate(zip(got, g(a))):
            try:
                close(x, w, dt)
            except AssertionError as e:
                raise AssertionError("movement %d: %s" % (i, e)) from None


def test_setitem_and_creation(rng):
    z = crand(rng, (4, 3), np.complex128)
    a = frit.asarray(z)
    a[1] = 5 - 2j
    z = z.copy()
    z[1] = 5 - 2j
    a[0, 0] += 1j
    z[0, 0] += 1j
    np.testing.assert_array_equal(np.asarray(a), z)
    assert frit.zeros((2, 3), dtype=frit.complex64).dtype == frit.complex64
    np.testing.assert_array_equal(np.asarray(frit.full((2,), 1 + 2j)), np.full((2,), 1 + 2j))
    np.testing.assert_array_equal(np.asarray(frit.ones_like(a)), np.ones_like(z))
    np.testing.assert_array_equal(np.asarray(frit.zeros_like(np.ones(3), dtype="complex64")),
                                  np.zeros(3, np.complex64))


def test_real_inputs_of_complex_functions():
    x = np.array([-2.0, 0.0, 3.5])
    np.testing.assert_array_equal(np.asarray(frit.real(x)), np.real(x))
    np.testing.assert_array_equal(np.asarray(frit.imag(x)), np.imag(x))
    np.testing.assert_array_equal(np.asarray(frit.conj(x)), np.conj(x))
    np.testing.assert_allclose(np.asarray(frit.angle(x)), np.angle(x))
    i = np.array([1, -2, 3], np.int32)
    assert np.asarray(frit.imag(i)).dtype == np.imag(i).dtype
    np.testing.assert_allclose(np.asarray(frit.asinh(x)), np.arcsinh(x), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(frit.atanh(x / 4)), np.arctanh(x / 4), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(frit.acosh(x + 3)), np.arccosh(x + 3), rtol=1e-14)


def test_special_values():
    inf, nan = np.inf, np.nan
    z = np.array([complex(inf, 0), complex(-inf, 0), complex(0, 0), complex(nan, 1),
                  complex(1, inf), complex(-inf, 2), complex(inf, nan)])
    a = frit.asarray(z)
    with np.errstate(all="ignore"):
        for name in ("isnan", "isinf", "isfinite"):
            np.testing.assert_array_equal(np.asarray(getattr(frit, name)(a)), getattr(np, name)(z))
        np.testing.assert_array_equal(np.asarray(frit.abs(a)), np.abs(z))
        np.testing.assert_array_equal(np.asarray(frit.exp(a[:3])), np.exp(z[:3]))
        np.testing.assert_array_equal(np.asarray(frit.log(a[2:3])), np.log(z[2:3]))
        np.testing.assert_array_equal(np.asarray(frit.sqrt(a[[1, 2, 4, 5]])),
                                      np.sqrt(z[[1, 2, 4, 5]]))
        one = frit.asarray(np.array([1 + 1j, 0j]))
        got = np.asarray(one / 0j)
        want = np.array([1 + 1j, 0j]) / 0j
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    # branch cuts: signed zeros pick the side as in C99 Annex G / numpy
    w = np.array([complex(-4, 0.0), complex(-4, -0.0), complex(2, 0.0), complex(2, -0.0)])
    for name in ("sqrt", "log", "arcsin", "arccos", "arctanh"):
        got = np.asarray(getattr(frit, FRIT_NAME.get(name, name))(frit.asarray(w)))
        np.testing.assert_allclose(got, getattr(np, name)(w), rtol=1e-14, atol=1e-15,
                                   err_msg=name)


@pytest.mark.parametrize("op", ["floor", "ceil", "trunc", "remainder", "floor_divide",
                                "bitwise_and", "atan2", "argmax", "max", "sort", "logsumexp"])
def test_unsupported_ops_raise(op):
    """No complex loop in frit: a FritError naming op, shapes and dtypes (never a wrong value)."""
    a = frit.asarray(np.array([1 + 2j, 3 - 1j], np.complex64))
    f = getattr(frit, op)
    c_name = {"floor_divide": "floordiv"}.get(op, op)
    binary = op in ("remainder", "floor_divide", "bitwise_and", "atan2")
    with pytest.raises(frit.FritError, match=r"%s.*\(2,\).*c64" % c_name):
        f(a, a) if binary else f(a)
    with pytest.raises(frit.FritError, match="floordiv"):
        a // 2
    with pytest.raises(frit.FritError, match="remainder.*c128"):
        frit.asarray(np.ones(2)) % a


@pytest.mark.parametrize("mode", MODES)
def test_ordering_lexicographic(mode, rng):
    """numpy 2 orders complex numbers by real part, then imaginary part; NaNs as numpy."""
    nan = np.nan
    a = np.array([1 + 2j, 1 + 3j, 2 - 1j, complex(nan, 0), 1 + 0j, complex(0, nan), 3 + 3j],
                 np.complex128)
    b = np.array([1 + 3j, 1 + 2j, 1 + 5j, 1 + 0j, complex(nan, 1), 0 + 0j, 3 + 3j],
                 np.complex64)
    names = ["less", "less_equal", "greater", "greater_equal", "maximum", "minimum"]

    def f(x, y):
        return [getattr(frit, n)(x, y) for n in names] + [frit.clip(x, 0.5 + 1j, 2 + 0j),
                                                          x < 2.5, frit.maximum(y, 1.0)]
    got = run(mode, f, a, b)
    with np.errstate(invalid="ignore"):
        want = [getattr(np, n)(a, b) for n in names] + [np.clip(a, 0.5 + 1j, 2 + 0j), a < 2.5,
                                                        np.maximum(b, 1.0)]
    for g, w in zip(got, want):
        g = np.asarray(g)
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def test_native_interop():
    """complex arrays are frit.Arrays sharing memory with numpy both ways (interleaved layout)."""
    for dt in CDT:
        z = np.arange(6, dtype=dt).reshape(2, 3) * (1 - 2j)
        a = frit.asarray(z)
        assert isinstance(a, frit.Array)
        assert np.shares_memory(np.asarray(a), z)
        r = a * 2
        assert isinstance(r, frit.Array)
        v = np.asarray(r)
        assert np.shares_memory(np.asarray(frit.asarray(v)), v)
        np.testing.assert_array_equal(v, z * 2)
        assert isinstance(a.real, frit.Array) and a.real.dtype == np.real(z).dtype
        np.testing.assert_array_equal(np.asarray(a.imag), z.imag)
        np.testing.assert_array_equal(np.asarray(a.conj()), z.conj())


def test_promotion_against_numpy(rng):
    """result dtypes of complex with every real dtype, arrays and weak scalars, against numpy."""
    for cdt in CDT:
        z = crand(rng, (3,), cdt)
        for r in REALS + ["complex64", "complex128"]:
            x = np.ones(3, r)
            for got, want in ((frit.asarray(z) + frit.asarray(x), z + x),
                              (frit.asarray(x) * frit.asarray(z), x * z)):
                assert np.asarray(got).dtype == want.dtype, (cdt, r)
                np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
            want = x * 1j
            got = np.asarray(frit.asarray(x) * 1j)
            assert got.dtype == want.dtype, r
        assert (frit.asarray(z) * 2.5).dtype == cdt
        assert (frit.asarray(z) + 3).dtype == cdt
    got = frit.asarray(np.ones(3, np.complex64)) + frit.asarray(np.ones(3, np.float64))
    assert got.dtype == frit.complex128


def test_kernels_fft_and_norms(rng):
    """complex arrays in explicit kernels, fft results as frit.Arrays, norms of complex (|z|)."""
    z = crand(rng, (6,), np.complex64)
    a = frit.asarray(z)
    c = frit.zeros(6, dtype=frit.complex64)
    with frit.kernel(6) as i:
        c[i] = a[i] * 1j + 2
    np.testing.assert_allclose(np.asarray(c), z * 1j + 2, rtol=1e-6)
    f = frit.fft.fft(a)
    assert isinstance(f, frit.Array) and f.dtype == frit.complex64
    m = crand(rng, (3, 4), np.complex128)
    for ord_ in (None, 1, np.inf, -np.inf, 3):
        np.testing.assert_allclose(np.asarray(frit.linalg.norm(frit.asarray(m[0]), ord=ord_)),
                                   np.linalg.norm(m[0], ord=ord_), rtol=1e-12)
    for ord_ in (None, "fro", 1, np.inf):
        np.testing.assert_allclose(np.asarray(frit.linalg.norm(frit.asarray(m), ord=ord_)),
                                   np.linalg.norm(m, ord=ord_), rtol=1e-12)
    assert np.asarray(frit.linalg.vector_norm(a)).dtype == np.float32
    with pytest.raises(frit.FritError, match="nuc.*complex"):
        frit.linalg.matrix_norm(frit.asarray(m), ord="nuc")
