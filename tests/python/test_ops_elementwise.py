"""Elementwise ops of the tensor API against numpy: every ufunc/bfunc over all dtypes (bf16 as a
float32-rounded-to-bf16 emulation), result dtypes, broadcasting, views, NaN/inf, integer edges."""
import math
import warnings

import numpy as np
import pytest

from frit import _lib as L
from util import (NP_OF, assert_close, assert_exact, batch_eval, batch_result,
                  cast_values, check, dtname, evaluate, int_to_float_rne, rand)

ALL = L.ALL_DTYPES
SHAPE = (3, 7)

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _f64(fn):
    """A function numpy lacks, computed in float64 (rounded to the result dtype afterwards)."""
    return lambda x: fn(np.asarray(x, dtype=np.float64))


# name -> (numpy function, input kind, approx). Functions marked F64 are computed in float64 and
# rounded to the result dtype (numpy's float result dtype for the input).
UNARY = {
    "neg": (np.negative, "full", False), "abs": (np.abs, "full", False),
    "sign": (np.sign, "full", False), "sqrt": (np.sqrt, "positive", False),
    "rsqrt": ("F64", _f64(lambda x: 1.0 / np.sqrt(x)), "positive", True),
    "reciprocal": (np.reciprocal, "full", False),
    "exp": (np.exp, "normal", True), "exp2": (np.exp2, "normal", True),
    "log": (np.log, "positive", True), "log2": (np.log2, "positive", True),
    "log1p": (np.log1p, "positive", True), "expm1": (np.expm1, "normal", True),
    "sin": (np.sin, "normal", True), "cos": (np.cos, "normal", True),
    "tan": (np.tan, "unit", True), "asin": (np.arcsin, "unit", True),
    "acos": (np.arccos, "unit", True), "atan": (np.arctan, "normal", True),
    "sinh": (np.sinh, "normal", True), "cosh": (np.cosh, "normal", True),
    "tanh": (np.tanh, "normal", True),
    "sigmoid": ("F64", _f64(lambda x: 1.0 / (1.0 + np.exp(-x))), "normal", True),
    "relu": (lambda x: np.maximum(x, np.zeros((), x.dtype)), "normal", False),
    "gelu": ("F64", _f64(lambda x: 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))), "normal", True),
    "erf": ("F64", _f64(_erf), "normal", True),
    "floor": (np.floor, "normal", False), "ceil": (np.ceil, "normal", False),
    "round": (np.round, "normal", False), "trunc": (np.trunc, "normal", False),
    "isnan": (np.isnan, "normal", False), "isinf": (np.isinf, "normal", False),
    "logical_not": (np.logical_not, "normal", False),
    "bitwise_not": (np.invert, "full", False),
}
# Integer inputs of float-valued functions use small values (0..7) to stay in the domain.
FLOAT_VALUED = {"sqrt", "rsqrt", "exp", "exp2", "log", "log2", "log1p", "expm1", "sin", "cos",
                "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "gelu", "erf"}


def _float_result_dtype(x_np):
    """numpy's float result dtype of a float-valued ufunc on x's dtype (int8 -> f16 ...)."""
    return np.sqrt(np.zeros(1, x_np.dtype)).dtype


# numpy behaviour we do not ask frit to copy: name -> (dtypes, why)
UNARY_QUIRKS = {
    "reciprocal": (L.INT_DTYPES + [L.BOOL], "numpy's integer reciprocal is integer division 1 // x"),
    "round": ([L.BOOL], "numpy rounds bool through rint to float16"),
}


def np_unary(name, x, dt):
    """numpy reference: (values, expected frit dtype), or None when numpy rejects the dtype."""
    spec = UNARY[name]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if spec[0] == "F64":
            fn = spec[1]
            if dt == L.BF16:
                return cast_values(fn(x), L.BF16), L.BF16
            try:
                rdt = _float_result_dtype(x)
            except TypeError:
                return None
            return fn(x).astype(rdt), L.from_numpy_dtype(rdt)
        fn = spec[0]
        if dt == L.BF16:
            try:
                r = fn(x.astype(np.float32))
            except TypeError:
                return None
            if r is None:
                return None
            r = np.asarray(r)
            return (r, L.BOOL) if r.dtype == np.bool_ else (cast_values(r, L.BF16), L.BF16)
        try:
            r = fn(x)
        except TypeError:
            return None
        if r is None:
            return None
        r = np.asarray(r)
        return r, L.from_numpy_dtype(r.dtype)


def _unary_inputs(dt):
    rng = np.random.default_rng(1000 + dt)
    out = {}
    for kind in ("full", "normal", "positive", "unit", "small"):
        k = kind
        if dt in L.INT_DTYPES and kind in ("normal", "positive", "unit"):
            k = "small"
        out["x_" + kind] = (dt, rand(rng, dt, SHAPE, kind=k))
    return out


def _unary_input_name(name, dt):
    kind = UNARY[name][-2]
    if dt in L.INT_DTYPES and name in FLOAT_VALUED:
        kind = "small"
    return "x_" + kind


def _unary_builders(dt):
    return {name: (lambda c, ts, n=name: c.unary(n, ts[_unary_input_name(n, dt)])) for name in UNARY}


@pytest.mark.parametrize("dt", ALL, ids=dtname)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary(path, name, dt):
    vals, results, _ = batch_eval(("unary", dt), path, lambda: _unary_inputs(dt),
                                  _unary_builders(dt))
    x = vals[_unary_input_name(name, dt)]
    if dt in UNARY_QUIRKS.get(name, ((),))[0]:
        pytest.skip(UNARY_QUIRKS[name][1])
    ref = np_unary(name, x, dt)
    if ref is None:
        pytest.skip("numpy rejects %s on %s" % (name, dtname(dt)))
    want, want_dt = ref
    got, got_dt = batch_result(results, name)
    assert dtname(got_dt) == dtname(want_dt), "result dtype"
    check(got, want, want_dt, approx=UNARY[name][-1], what="%s(%s)" % (name, dtname(dt)))


def _unary_rejected():
    out = []
    for name in UNARY:
        for dt in ALL:
            if dt in UNARY_QUIRKS.get(name, ((),))[0]:
                continue
            if np_unary(name, _unary_inputs(dt)[_unary_input_name(name, dt)][1], dt) is None:
                out.append(pytest.param(name, dt, id="%s-%s" % (name, dtname(dt))))
    return out


@pytest.mark.parametrize("name,dt", _unary_rejected())
def test_unary_rejects_what_numpy_rejects(ctx, name, dt):
    t = ctx.input("x", dt, SHAPE)
    with pytest.raises(L.FritError):
        ctx.unary(name, t)


SPECIAL = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 1e-30,
           -1e-30, 3e38, -3e38, 70000.0, 1e300, -1e300, 5e-324]


@pytest.mark.parametrize("dt", L.FLOAT_DTYPES, ids=dtname)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_special_values(path, name, dt):
    """NaN, infinities, signed zeros, huge and tiny values (rounded into the dtype first)."""
    def inputs():
        with np.errstate(all="ignore"):
            return {"x": (dt, cast_values(np.array(SPECIAL), dt))}
    vals, results, _ = batch_eval(("unary-special", dt), path, inputs,
                                  {n: (lambda c, ts, n=n: c.unary(n, ts["x"])) for n in UNARY})
    ref = np_unary(name, vals["x"], dt)
    if ref is None:
        pytest.skip("numpy rejects")
    want, want_dt = ref
    got, got_dt = batch_result(results, name)
    assert dtname(got_dt) == dtname(want_dt)
    check(got, want, want_dt, approx=UNARY[name][-1], what="%s(special %s)" % (name, dtname(dt)))


# ---------------------------------------------------------------- binary

# name -> (numpy function, a input, b input, approx)
BINARY = {
    "add": (np.add, "a", "b", False), "sub": (np.subtract, "a", "b", False),
    "mul": (np.multiply, "a", "b", False), "truediv": (np.true_divide, "a", "bz", False),
    "floordiv": (np.floor_divide, "a", "bz", False), "remainder": (np.remainder, "a", "bz", False),
    "pow": (np.power, "pa", "pb", True), "minimum": (np.minimum, "a", "beq", False),
    "maximum": (np.maximum, "a", "beq", False), "atan2": (np.arctan2, "a", "b", True),
    "lt": (np.less, "a", "beq", False), "le": (np.less_equal, "a", "beq", False),
    "gt": (np.greater, "a", "beq", False), "ge": (np.greater_equal, "a", "beq", False),
    "eq": (np.equal, "a", "beq", False), "ne": (np.not_equal, "a", "beq", False),
    "logical_and": (np.logical_and, "az", "bz", False),
    "logical_or": (np.logical_or, "az", "bz", False),
    "logical_xor": (np.logical_xor, "az", "bz", False),
    "bitwise_and": (np.bitwise_and, "a", "b", False), "bitwise_or": (np.bitwise_or, "a", "b", False),
    "bitwise_xor": (np.bitwise_xor, "a", "b", False),
    "lshift": (np.left_shift, "a", "s", False), "rshift": (np.right_shift, "a", "s", False),
}


def _binary_inputs(dt):
    shape_a = shape_b = SHAPE
    rng = np.random.default_rng(2000 + dt)
    a = rand(rng, dt, shape_a, kind="full")
    b = rand(rng, dt, shape_b, kind="full")
    if dt in L.INT_DTYPES or dt == L.BOOL:
        lo = 0 if (dt in L.UINT_DTYPES or dt == L.BOOL) else -3
        bz = rng.integers(lo, 4, size=shape_b).astype(NP_OF[dt])
        az = rng.integers(lo, 4, size=shape_a).astype(NP_OF[dt])
        pa = rng.integers(0, 8, size=shape_a).astype(NP_OF[dt])
        pb = rng.integers(0, 8, size=shape_b).astype(NP_OF[dt])
        bits = 1 if dt == L.BOOL else np.iinfo(NP_OF[dt]).bits
        s = rng.integers(0, bits, size=shape_b).astype(NP_OF[dt])
    else:
        bz = rand(rng, dt, shape_b)
        bz = np.where(rng.random(shape_b) < 0.25, np.zeros((), bz.dtype), bz)
        az = np.where(rng.random(shape_a) < 0.25, np.zeros((), a.dtype), a)
        pa = rand(rng, dt, shape_a, kind="positive", scale=2.0)
        pb = rand(rng, dt, shape_b, scale=1.5)
        s = b
    beq = np.where(rng.random(shape_b) < 0.3, a, b).astype(a.dtype)  # many equal pairs
    d = {"a": a, "b": b, "bz": bz, "az": az, "pa": pa, "pb": pb, "s": s, "beq": beq}
    return {k: (dt, v) for k, v in d.items()}


def np_binary(name, a, dta, b, dtb):
    """numpy reference of bfunc `name`: (values, frit dtype) or None when numpy rejects it."""
    fn = BINARY[name][0]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if L.BF16 in (dta, dtb):
            rdt = expected_promote(dta, dtb)
            va = a.astype(L.value_dtype(rdt)) if rdt != L.BF16 else a.astype(np.float32)
            vb = b.astype(L.value_dtype(rdt)) if rdt != L.BF16 else b.astype(np.float32)
            try:
                r = np.asarray(fn(va, vb))
            except TypeError:
                return None
            if r.dtype == np.bool_:
                return r, L.BOOL
            if rdt == L.BF16:
                return cast_values(r, L.BF16), L.BF16
            return r, L.from_numpy_dtype(r.dtype)
        try:
            r = np.asarray(fn(a, b))
        except TypeError:
            return None
        return r, L.from_numpy_dtype(r.dtype)


def expected_promote(a, b):
    """numpy result_type of two array dtypes; bf16 ranks like f16 (bf16 with f16 gives f32)."""
    if L.BF16 in (a, b):
        o = b if a == L.BF16 else a
        if o in (L.BF16, L.BOOL, L.I8, L.U8):
            return L.BF16
        if o == L.F16:
            return L.F32
        return L.from_numpy_dtype(np.result_type(np.float16, NP_OF[o]))
    return L.from_numpy_dtype(np.result_type(NP_OF[a], NP_OF[b]))


def _binary_builders():
    return {n: (lambda c, ts, n=n: c.binary(n, ts[BINARY[n][1]], ts[BINARY[n][2]]))
            for n in BINARY}


@pytest.mark.parametrize("dt", ALL, ids=dtname)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary(path, name, dt):
    vals, results, _ = batch_eval(("binary", dt), path, lambda: _binary_inputs(dt),
                                  _binary_builders())
    _, an, bn, approx = BINARY[name]
    ref = np_binary(name, vals[an], dt, vals[bn], dt)
    if ref is None:
        pytest.skip("numpy rejects %s on %s" % (name, dtname(dt)))
    want, want_dt = ref
    got, got_dt = batch_result(results, name)
    assert dtname(got_dt) == dtname(want_dt), "result dtype"
    check(got, want, want_dt, approx=approx, ulps=8, what="%s(%s)" % (name, dtname(dt)))


def _binary_rejected():
    out = []
    for name in BINARY:
        for dt in ALL:
            z = np.zeros(2, L.value_dtype(dt))
            if np_binary(name, z, dt, z + 1, dt) is None:
                out.append(pytest.param(name, dt, id="%s-%s" % (name, dtname(dt))))
    return out


@pytest.mark.parametrize("name,dt", _binary_rejected())
def test_binary_rejects_what_numpy_rejects(ctx, name, dt):
    a = ctx.input("a", dt, (2,))
    b = ctx.input("b", dt, (2,))
    with pytest.raises(L.FritError):
        ctx.binary(name, a, b)


# Broadcasting: shapes pairs incl. 0-d, size-0, size-1, odd sizes.
BCAST = [((), (5,)), ((5,), ()), ((), ()), ((4, 1), (1, 5)), ((2, 3, 4), (4,)), ((0, 3), (1, 3)),
         ((1,), (0,)), ((5, 1, 3), (1, 7, 1)), ((1, 1), (1, 1)), ((7, 13), (13,)),
         ((3, 1, 1, 2), (2, 1)), ((1, 17), (9, 1))]


BCAST_DTS = [L.F32, L.I32, L.U8, L.BF16, L.F16, L.BOOL]


def _bcast_names(dt):
    names = ["add", "mul", "maximum", "lt", "eq", "logical_xor"]
    if dt in L.INT_DTYPES or dt == L.BOOL:
        names += ["bitwise_xor"]
    if dt == L.BOOL:
        names.remove("add")
    return names


def _bcast_inputs(dt):
    rng = np.random.default_rng(300 + dt)
    d = {}
    for i, (sa, sb) in enumerate(BCAST):
        d["a%d" % i] = (dt, rand(rng, dt, sa, kind="full"))
        d["b%d" % i] = (dt, rand(rng, dt, sb, kind="full"))
    return d


@pytest.mark.parametrize("dt", BCAST_DTS, ids=dtname)
@pytest.mark.parametrize("case", range(len(BCAST)), ids=lambda i: "%s-%s" % BCAST[i])
def test_broadcast(path, case, dt):
    names = _bcast_names(dt)
    builders = {(i, n): (lambda c, ts, i=i, n=n: c.binary(n, ts["a%d" % i], ts["b%d" % i]))
                for i in range(len(BCAST)) for n in names}
    vals, results, _ = batch_eval(("bcast", dt), path, lambda: _bcast_inputs(dt), builders)
    a, b = vals["a%d" % case], vals["b%d" % case]
    for n in names:
        want, want_dt = np_binary(n, a, dt, b, dt)
        got, got_dt = batch_result(results, (case, n))
        assert dtname(got_dt) == dtname(want_dt)
        assert_exact(got, want, "%s %s %s" % ((n,) + BCAST[case]))


PROMO_OPS = ["add", "mul", "maximum", "lt", "truediv", "eq"]


def _promo_inputs(dta):
    d = {"a": (dta, rand(np.random.default_rng(dta), dta, (4, 3)))}
    for dtb in ALL:
        d["b%d" % dtb] = (dtb, rand(np.random.default_rng(dta * 31 + dtb), dtb, (3,)))
    return d


def _promo_builders():
    return {"%d:%s" % (dtb, n): (lambda c, ts, dtb=dtb, n=n: c.binary(n, ts["a"], ts["b%d" % dtb]))
            for dtb in ALL for n in PROMO_OPS}


@pytest.mark.parametrize("dta", ALL, ids=dtname)
@pytest.mark.parametrize("dtb", ALL, ids=dtname)
def test_binary_promotion(path, dta, dtb):
    """Mixed dtypes: the frontend promotes like numpy, then computes in the promoted dtype."""
    vals, results, _ = batch_eval(("promo", dta), path, lambda: _promo_inputs(dta),
                                  _promo_builders())
    a, b = vals["a"], vals["b%d" % dtb]
    checked = 0
    for n in PROMO_OPS:
        ref = np_binary(n, a, dta, b, dtb)
        if ref is None:
            continue
        want, want_dt = ref
        got, got_dt = batch_result(results, "%d:%s" % (dtb, n))
        assert dtname(got_dt) == dtname(want_dt), n
        assert_exact(got, want, "%s(%s, %s)" % (n, dtname(dta), dtname(dtb)))
        checked += 1
    assert checked


# ---------------------------------------------------------------- integer edge cases

@pytest.mark.parametrize("dt", L.INT_DTYPES, ids=dtname)
def test_int_division_edges(ctx, path, dt):
    """numpy: x // 0 == 0 and x % 0 == 0 (with a warning), MIN // -1 == MIN, MIN % -1 == 0,
    floor semantics (rounds toward -inf, remainder takes the divisor's sign)."""
    info = np.iinfo(NP_OF[dt])
    if info.min < 0:
        av = [info.min, info.min, -7, 7, -7, 7, 0, 5, info.max, info.max, -1, -8, info.min, 3]
        bv = [-1, 0, 2, -2, -2, 2, 0, 0, -1, 0, 3, 3, 7, info.min]
    else:
        av = [info.max, 7, 0, 5, 1, info.max, 13, 0]
        bv = [0, 2, 0, 0, 3, info.max, 5, 7]
    a, b = np.array(av, NP_OF[dt]), np.array(bv, NP_OF[dt])
    ta, tb = ctx.input("a", dt, a.shape), ctx.input("b", dt, b.shape)
    got = evaluate([ctx.binary("floordiv", ta, tb), ctx.binary("remainder", ta, tb)],
                   {"a": a, "b": b}, path)
    with np.errstate(all="ignore"):
        assert_exact(got[0], a // b, "floordiv")
        assert_exact(got[1], a % b, "remainder")


@pytest.mark.parametrize("dt", L.FLOAT_DTYPES, ids=dtname)
def test_float_division_edges(ctx, path, dt):
    """Float floor_divide/remainder/truediv by +-0, inf, NaN, and values where floor(a/b) is
    not numpy's floor_divide (1 // 0.1 == 9 in numpy)."""
    av = [5.0, -5.0, 1.0, 0.0, np.nan, np.inf, 1.0, 5.0, -5.0, 1.0, 7.5, -7.5, 1.0, -1.0]
    bv = [0.0, 0.0, -0.0, 0.0, 2.0, 2.0, np.inf, 3.0, 3.0, 0.1, -2.0, 2.0, -np.inf, np.inf]
    a, b = cast_values(np.array(av), dt), cast_values(np.array(bv), dt)
    ta, tb = ctx.input("a", dt, a.shape), ctx.input("b", dt, b.shape)
    names = ["truediv", "floordiv", "remainder"]
    got = evaluate([ctx.binary(n, ta, tb) for n in names], {"a": a, "b": b}, path)
    for n, g in zip(names, got):
        want, _ = np_binary(n, a, dt, b, dt)
        assert_exact(g, want, n)


@pytest.mark.parametrize("dt", L.INT_DTYPES, ids=dtname)
def test_shift_out_of_range(ctx, path, dt):
    """numpy: counts >= bit width give 0 (<<) and 0/-1 (>>); negative counts act like huge ones."""
    bits = np.iinfo(NP_OF[dt]).bits
    counts = [bits, bits + 1, bits + 5, 2 * bits - 1]
    if dt in L.SINT_DTYPES:
        counts += [-1, -bits]
    info = np.iinfo(NP_OF[dt])
    vals = [1, -1 if info.min < 0 else info.max, info.min, info.max, 5]
    a = np.array([v for v in vals for _ in counts], NP_OF[dt])
    s = np.array([c for _ in vals for c in counts], NP_OF[dt])
    ta, ts = ctx.input("a", dt, a.shape), ctx.input("s", dt, s.shape)
    got = evaluate([ctx.binary("lshift", ta, ts), ctx.binary("rshift", ta, ts)],
                   {"a": a, "s": s}, path)
    assert_exact(got[0], np.left_shift(a, s), "lshift")
    assert_exact(got[1], np.right_shift(a, s), "rshift")


@pytest.mark.parametrize("dt", L.INT_DTYPES, ids=dtname)
def test_int_wraparound(ctx, path, dt):
    info = np.iinfo(NP_OF[dt])
    a = np.array([info.max, info.min, info.max, info.min, info.max], NP_OF[dt])
    b = np.array([1, np.array(-1).astype(NP_OF[dt]) if info.min < 0 else 1, info.max, info.max,
                  2], NP_OF[dt])
    ta, tb = ctx.input("a", dt, a.shape), ctx.input("b", dt, b.shape)
    names = ["add", "sub", "mul"]
    outs = [ctx.binary(n, ta, tb) for n in names] + [ctx.unary("neg", ta), ctx.unary("abs", ta)]
    got = evaluate(outs, {"a": a, "b": b}, path)
    with np.errstate(all="ignore"):
        for n, g in zip(names, got):
            assert_exact(g, BINARY[n][0](a, b), n)
        assert_exact(got[3], -a, "neg")
        assert_exact(got[4], np.abs(a), "abs")


@pytest.mark.parametrize("dt", L.INT_DTYPES, ids=dtname)
def test_int_pow(ctx, path, rng, dt):
    """Integer power wraps like numpy's (exponents >= 0)."""
    a = rng.integers(0, 100, size=40).astype(NP_OF[dt])
    if dt in L.SINT_DTYPES:
        a = (a.astype(np.int64) - 50).astype(NP_OF[dt])
    b = rng.integers(0, 20, size=40).astype(NP_OF[dt])
    ta, tb = ctx.input("a", dt, a.shape), ctx.input("b", dt, b.shape)
    got, = evaluate(ctx.binary("pow", ta, tb), {"a": a, "b": b}, path)
    with np.errstate(all="ignore"):
        assert_exact(got, np.power(a, b), "pow")


@pytest.mark.parametrize("dt", L.FLOAT_DTYPES, ids=dtname)
def test_minmax_nan_and_signed_zero(ctx, path, dt):
    a = cast_values(np.array([np.nan, 1.0, np.nan, -0.0, 0.0, np.inf, -np.inf]), dt)
    b = cast_values(np.array([1.0, np.nan, np.nan, 0.0, -0.0, np.nan, 3.0]), dt)
    ta, tb = ctx.input("a", dt, a.shape), ctx.input("b", dt, b.shape)
    got = evaluate([ctx.binary("minimum", ta, tb), ctx.binary("maximum", ta, tb)],
                   {"a": a, "b": b}, path)
    assert_exact(got[0], np.minimum(a, b), "minimum")
    assert_exact(got[1], np.maximum(a, b), "maximum")
    # numpy orders signed zeros the IEEE 754-2019 way only sometimes; frit does it always
    assert np.signbit(got[0][3]) and np.signbit(got[0][4]), "minimum(-0, +0) == -0"
    assert not np.signbit(got[1][3]) and not np.signbit(got[1][4]), "maximum(-0, +0) == +0"


# ---------------------------------------------------------------- where, clip, astype

@pytest.mark.parametrize("dts", [(L.F32, L.F32), (L.I8, L.F16), (L.BOOL, L.I32), (L.U8, L.I8),
                                 (L.BF16, L.F32), (L.U64, L.I64), (L.BF16, L.U8)],
                         ids=lambda d: "%s-%s" % (dtname(d[0]), dtname(d[1])))
def test_where(ctx, path, rng, dts):
    da, db = dts
    c = rng.random((4, 1)) < 0.5
    a = rand(rng, da, (4, 5))
    b = rand(rng, db, (5,))
    tc, ta, tb = ctx.input("c", L.BOOL, c.shape), ctx.input("a", da, a.shape), ctx.input("b", db, b.shape)
    out = ctx.where(tc, ta, tb)
    rdt = expected_promote(da, db)
    assert dtname(out.dtype) == dtname(rdt)
    got, = evaluate(out, {"c": c, "a": a, "b": b}, path)
    want = np.where(c, a.astype(L.value_dtype(rdt)), b.astype(L.value_dtype(rdt)))
    assert_exact(got, want)


def test_where_nonbool_cond(ctx, path, rng):
    """numpy takes any condition by truthiness (x != 0, NaN is true)."""
    c = np.array([0.0, -0.0, np.nan, 2.0, -1.0], np.float32)
    a = np.arange(5, dtype=np.int32)
    tc, ta = ctx.input("c", L.F32, c.shape), ctx.input("a", L.I32, a.shape)
    got, = evaluate(ctx.where(tc, ta, ctx.scalar(L.I32, -1)), {"c": c, "a": a}, path)
    assert_exact(got, np.where(c, a, np.int32(-1)))


@pytest.mark.parametrize("dt", [L.F32, L.F64, L.I32, L.U8, L.F16, L.BF16, L.I64], ids=dtname)
@pytest.mark.parametrize("which", ["both", "lo", "hi"])
def test_clip(ctx, path, rng, dt, which):
    x = rand(rng, dt, (6, 5), kind="full" if dt in L.INT_DTYPES else "normal")
    if dt in L.FLOAT_DTYPES:
        x[0, 0] = np.nan
    lo = rand(rng, dt, (5,))
    hi = (lo.astype(np.float64) + 3).astype(lo.dtype)
    if dt == L.BF16:
        hi = cast_values(hi, dt)
    tx = ctx.input("x", dt, x.shape)
    tlo = ctx.input("lo", dt, lo.shape) if which != "hi" else None
    thi = ctx.input("hi", dt, hi.shape) if which != "lo" else None
    ins = {"x": x}
    if tlo is not None:
        ins["lo"] = lo
    if thi is not None:
        ins["hi"] = hi
    got, = evaluate(ctx.clip(tx, tlo, thi), ins, path)
    want = np.clip(x, lo if tlo is not None else None, hi if thi is not None else None)
    assert_exact(got, want)


def _astype_values(src, dst, rng):
    """Values whose conversion numpy defines (in range after truncation) for src -> dst."""
    n = 64
    if src == L.BOOL:
        return rng.random(n) < 0.5
    lo, hi = -120.0, 120.0
    if dst in L.UINT_DTYPES or src in L.UINT_DTYPES:
        lo = 0.0
    if dst == L.BOOL:
        lo, hi = -3.0, 3.0
    if src in L.INT_DTYPES:
        v = rng.integers(int(lo), int(hi), size=n)
        if dst in L.INT_DTYPES or dst == L.BOOL:  # int -> int wraps in numpy: use the full range
            v = rand(rng, src, (n,), kind="full")
        v = np.asarray(v).astype(NP_OF[src])
        v[:3] = [0, 1, 0] if src in L.UINT_DTYPES else [0, 1, -1]
        return v
    v = rng.uniform(lo, hi, size=n).astype(np.float32)
    v[:6] = [0.0, -0.0, 0.5, -0.5 if lo < 0 else 1.5, 0.99, 2.5]
    if dst in L.FLOAT_DTYPES:
        v = np.concatenate([v, np.array([np.nan, np.inf, -np.inf, 1e-8, 65504.0, 70000.0],
                                        np.float32)])
    return cast_values(v, src)


def _astype_inputs(src):
    return {"x%d" % dst: (src, _astype_values(src, dst, np.random.default_rng(src * 17 + dst)))
            for dst in ALL}


@pytest.mark.parametrize("src", ALL, ids=dtname)
@pytest.mark.parametrize("dst", ALL, ids=dtname)
def test_astype(path, src, dst):
    builders = {d: (lambda c, ts, d=d: c.astype(ts["x%d" % d], d)) for d in ALL}
    vals, results, _ = batch_eval(("astype", src), path, lambda: _astype_inputs(src), builders)
    x = vals["x%d" % dst]
    got, got_dt = batch_result(results, dst)
    assert got_dt == dst
    with np.errstate(all="ignore"):
        if dst == L.BF16:
            want = cast_values(x, L.BF16)
        else:
            want = x.astype(np.float32 if src == L.BF16 else x.dtype).astype(NP_OF[dst])
    assert_exact(got, want, "%s -> %s" % (dtname(src), dtname(dst)))


SAT_VALUES = [np.nan, np.inf, -np.inf, 1e30, -1e30, 2.0 ** 66, -float(2 ** 70), -0.9, 0.9, 300.0,
              -300.0, 65504.0, -65504.0, 2.0 ** 31, -2.0 ** 31 - 1, 2.0 ** 63, -2.0 ** 63,
              2.0 ** 64, 4294967296.0 + 5.0]


@pytest.mark.parametrize("src", L.FLOAT_DTYPES, ids=dtname)
@pytest.mark.parametrize("dst", L.INT_DTYPES, ids=dtname)
def test_astype_float_to_int_saturates(path, src, dst):
    """Out-of-range float -> int is undefined in numpy (C UB); frit defines it (docs/semantics.md):
    truncation, NaN -> 0, saturation to the target range. Oracle: that rule in Python."""
    builders = {d: (lambda c, ts, d=d: c.astype(ts["x"], d)) for d in L.INT_DTYPES}
    vals, results, _ = batch_eval(("astype-sat", src), path,
                                  lambda: {"x": (src, cast_values(np.array(SAT_VALUES), src))},
                                  builders)
    x = vals["x"]
    got, _ = batch_result(results, dst)
    info = np.iinfo(NP_OF[dst])

    def sat(v):
        if math.isnan(v):
            return 0
        if math.isinf(v):
            return info.max if v > 0 else info.min
        return int(min(max(math.trunc(v), info.min), info.max))
    want = np.array([sat(float(v)) for v in x.astype(np.float64)], NP_OF[dst])
    assert_exact(got, want)


def test_int64_to_bf16_f16_single_rounding(ctx, path):
    """int -> f16/bf16 rounds once from the exact integer (a double step could round twice)."""
    v = np.array([2 ** 24 + 2 ** 16 + 1, 2 ** 24 + 2 ** 16, 2 ** 24 + 3 * 2 ** 16, 2049, 2051,
                  -(2 ** 62) - 1, 65520, 65519, 2 ** 62 + 2 ** 54 + 1, 2 ** 62 + 2 ** 54], np.int64)
    t = ctx.input("x", L.I64, v.shape)
    got = evaluate([ctx.astype(t, L.BF16), ctx.astype(t, L.F16)], {"x": v}, path)
    want_bf = np.array([int_to_float_rne(int(x), 7, 127) for x in v], np.float32)
    want_f16 = np.array([int_to_float_rne(int(x), 10, 15) for x in v], np.float16)
    assert_exact(got[0], want_bf, "i64 -> bf16")
    assert_exact(got[1], want_f16, "i64 -> f16")


# ---------------------------------------------------------------- views and chains

def test_views_before_ops(ctx, path, rng):
    """Non-contiguous inputs to elementwise ops: permuted, sliced with negative steps, flipped,
    broadcast."""
    x = rand(rng, L.F32, (5, 6))
    y = rand(rng, L.F32, (6,))
    tx, ty = ctx.input("x", L.F32, x.shape), ctx.input("y", L.F32, y.shape)
    v = ctx.slice(ctx.permute(tx, [1, 0]), [None, 1], [None, 4], [-2, 1])   # x.T[::-2, 1:4]
    w = ctx.flip(ty, [0])
    o1 = ctx.binary("add", ctx.unary("exp", ctx.unary("tanh", v)), ctx.unary("neg", v))
    o2 = ctx.binary("mul", tx, w)                                            # x * y[::-1]
    o3 = ctx.binary("sub", ctx.broadcast_to(ctx.reshape(ty, (6, 1)), (6, 5)), ctx.transpose(tx))
    got = evaluate([o1, o2, o3], {"x": x, "y": y}, path)
    vn = x.T[::-2, 1:4]
    assert_close(got[0], np.exp(np.tanh(vn)) - vn, 4e-6, 4e-6)
    assert_exact(got[1], x * y[::-1])
    assert_exact(got[2], y.reshape(6, 1) - x.T)


@pytest.mark.parametrize("dt", [L.F16, L.BF16, L.F32, L.F64], ids=dtname)
def test_chain_rounds_each_step(ctx, path, rng, dt):
    """A fused chain of exact ops must round at the dtype's precision after every op."""
    a, b, c = (rand(rng, dt, (33,)) for _ in range(3))
    ta, tb, tc = (ctx.input(n, dt, (33,)) for n in "abc")
    y = ctx.binary("add", ctx.binary("mul", ta, tb), tc)
    y = ctx.binary("truediv", ctx.binary("sub", y, ta), ctx.binary("add", tc, ctx.scalar(dt, 10.0)))
    y = ctx.unary("sqrt", ctx.unary("abs", y))
    got, = evaluate(y, {"a": a, "b": b, "c": c}, path)
    if dt == L.BF16:
        r = lambda v: cast_values(v, L.BF16)  # noqa: E731
        t = r(r(r(a * b) + c) - a)
        want = r(np.sqrt(np.abs(r(t / r(c + np.float32(10))))))
    else:
        s = NP_OF[dt]
        want = np.sqrt(np.abs(((a * b + c) - a) / (c + s(10))))
    assert_exact(got, want)


def test_scalar_operands_0d(ctx, path):
    """0-d tensors (frit_scalar_*) combine with arrays like numpy 0-d arrays (strongly typed)."""
    x = np.array([1, 2, 250], np.uint8)
    tx = ctx.input("x", L.U8, x.shape)
    o1 = ctx.binary("add", tx, ctx.scalar(L.U8, 10))             # wraps in u8
    o2 = ctx.binary("add", tx, ctx.scalar(L.I16, 10))            # promotes to i16
    o3 = ctx.binary("mul", tx, ctx.scalar(L.F32, 0.5))           # f32
    o4 = ctx.binary("add", ctx.scalar(L.F64, 1.5), ctx.scalar(L.F64, 2.0))  # 0-d result
    got = evaluate([o1, o2, o3, o4], {"x": x}, path)
    assert_exact(got[0], x + np.uint8(10))
    assert got[1].dtype == np.int16
    assert_exact(got[1], x.astype(np.int16) + 10)
    assert_exact(got[2], x.astype(np.float32) * np.float32(0.5))
    assert got[3].shape == () and got[3] == 3.5
