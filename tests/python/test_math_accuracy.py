"""float32 exp, exp2, log, log2, sin, cos, tan, tanh, erf, arcsin, arccos, arctan, sinh, cosh and
arctan2 within 1 ulp of the exact value (numpy in float64,
rounded to float32 only by the check), eagerly and under both jit modes: special values as C99
Annex F, subnormal inputs and results, the ends of each function's pieces, and log-uniform
samples over the whole float range. tests/test_mathlib.c sweeps the C functions themselves; this
checks the paths Python users take (the frontend, vector clones, threads). `make pytest-opencl`
runs it again with FRIT_DEVICE=opencl, where the jit paths run the same functions on PoCL and
FRIT_CHECK_CUDA=1 compiles their CUDA form."""
import math

import numpy as np
import pytest

import frit

F32 = np.float32
TINY = float(np.finfo(F32).smallest_subnormal)
REFS = {
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "tanh": np.tanh,
    "erf": np.vectorize(math.erf, otypes=[np.float64]), "arcsin": np.arcsin, "arccos": np.arccos,
    "arctan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "sin": np.sin, "cos": np.cos, "tan": np.tan,
}


def ulps(got, x, name):
    """Distance of each float32 result from the exact value in ulps of the result's binade
    (2^-149 below 2^-126); 0 where both are the same NaN/inf/zero, inf for a wrong class."""
    with np.errstate(all="ignore"):
        ref = REFS[name](x.astype(np.float64))
    return ulps_of(got, ref)


def ulps_of(got, ref):
    """ulps of float32 results got from float64 reference values ref (see ulps)"""
    got = got.astype(np.float64)
    out = np.zeros(ref.shape)
    nan_r, nan_g = np.isnan(ref), np.isnan(got)
    out[nan_r != nan_g] = np.inf
    fin = ~nan_r & ~nan_g
    # beyond FLT_MAX the float neighbours are FLT_MAX and inf (from 2^128 on, inf alone)
    over = fin & (np.abs(ref) > float(np.finfo(F32).max))
    top = np.where(np.abs(ref) >= 2.0 ** 128, np.inf, float(np.finfo(F32).max))
    with np.errstate(invalid="ignore"):
        out[over & (got != np.sign(ref) * np.inf) & (got != np.sign(ref) * top)] = np.inf
    zero = fin & (ref == 0)
    out[zero & ((got != 0) | (np.signbit(got) != np.signbit(ref)))] = np.inf
    reg = fin & ~over & ~zero
    e = np.floor(np.log2(np.abs(ref[reg])))
    ulp = np.exp2(np.maximum(e - 23, -149))
    with np.errstate(invalid="ignore"):
        out[reg] = np.abs(got[reg] - ref[reg]) / ulp
    return out


def special_inputs():
    bits = lambda b: np.array(b, dtype=np.uint32).view(F32)  # noqa: E731
    v = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.0, 0.5, TINY, -TINY, 1e-45, 1e-40,
         float(np.finfo(F32).tiny), float(np.finfo(F32).max), -float(np.finfo(F32).max),
         # log: around 1, sqrt(1/2) (where the reduction changes k) and the subnormal edge
         *bits([0x3f800001, 0x3f7fffff, 0x3f3504f2, 0x3f3504f3, 0x3f3504f4, 0x007fffff, 0x00800000,
                0x00000002, 0x3fb40d47, 0x3fb4ba1f]),
         # exp/exp2: over- and underflow, subnormal results
         88.72283, 88.72284, -87.33655, -103.97, -104.0, 127.99999, 128.0, -126.0, -126.5, -149.0, -149.5,
         -150.0, -160.0, -1000.0, 1000.0,
         # tanh's and erf's pieces and where they round to 1
         0.0625, 0.9999999, 1.0000001, 9.0, 9.01, 9.5, 10.0, 3.92, 4.0, -3.92, 0.84375, *bits([0x3f657fac]),
         # erf's pieces meet at 0.75 and 1.5; its worst input (0.7875 ulp)
         0.75, 1.5, -1.5, *bits([0x3f3fffff, 0x3fbfffff, 0x3fc00001, 0x3f3fbcec, 0x407ae148, 0x407fffff]),
         # arcsin/arccos: their pieces meet at 1/2, the domain ends at 1; arctan's at tan(pi/8) and
         # its inverse; sinh/cosh: overflow
         *bits([0x3effffff, 0x3f000001, 0xbf000001, 0x3f7fffff, 0xbf7fffff, 0x3f800001, 0xbf800001,
                0x3ed413cc, 0x3ed413cd, 0x401a827a, 0x401a8279, 0x3eb89b64, 0x3ec42fe6, 0x3ed85bc6]),
         89.4, 89.42, -89.42, 100.0, -100.0,
         # sinh/cosh: where the reduction's n turns 1 (ln2/2); sin/cos/tan: pi/4, pi/2 (tan's pole)
         # and their multiples, where the float and double reductions (2^20) and Payne-Hanek (2^26)
         # take over
         *bits([0x3eb17217, 0x3eb17218, 0xbeb17218, 0x3f490fdb, 0x3fc90fdb, 0xbfc90fdb, 0x3fc90fda,
                0x40490fdb, 0x4096cbe4, 0x497fffff, 0x49800000, 0x4c7fffff, 0x4c800000, 0x5a7ef7a1]),
         ]
    return np.array(v, dtype=F32)


def sampled_inputs(n=20000):
    """log-uniform magnitudes from the smallest subnormal to FLT_MAX, both signs, as many uniform
    in [-10, 10], where tanh's and erf's pieces lie, and in [-1, 1], arcsin's and arccos's domain"""
    rng = np.random.default_rng(17)
    u = rng.integers(0, 0x7f800000, n, dtype=np.uint32).view(F32)
    return np.concatenate([np.where(rng.random(n) < 0.5, -u, u), rng.uniform(-10, 10, n),
                           rng.uniform(-1, 1, n)]).astype(F32)


def paths(name):
    f = getattr(frit, name)
    yield "eager", lambda x: f(frit.asarray(x)).numpy()
    yield "jit", frit.jit(f)
    yield "jit static", frit.jit(f, dynamic=False)


@pytest.mark.parametrize("name", sorted(REFS))
@pytest.mark.parametrize("inputs", ["special", "sampled"])
def test_within_one_ulp(name, inputs):
    x = special_inputs() if inputs == "special" else sampled_inputs()
    for path, f in paths(name):
        got = np.asarray(f(x))
        assert got.dtype == F32
        err = ulps(got, x, name)
        worst = int(np.argmax(err))
        assert err[worst] < 1.0, "%s %s(%r) = %r: %.3f ulp" % (path, name, x[worst], got[worst], err[worst])
    # and the values the special inputs must give exactly (C99 Annex F)
    if inputs == "special":
        got = np.asarray(frit.jit(getattr(frit, name))(x))
        with np.errstate(all="ignore"):
            want = REFS[name](x.astype(np.float64)).astype(F32)
        exact = np.isnan(x) | np.isinf(x) | (x == 0)
        np.testing.assert_array_equal(got[exact], want[exact])
        assert (np.signbit(got[exact]) == np.signbit(want[exact]))[~np.isnan(want[exact])].all()


def test_arctan2_within_one_ulp():
    """float32 arctan2 (one division: n/d, or (n - d)/(n + d) above tan(pi/8)) within 1 ulp on
    sampled pairs and the C99 F.9.1.4 pairs exactly, eagerly and under both jit modes"""
    rng = np.random.default_rng(5)
    sp = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, TINY, 3.0], F32)
    ys, xs = [a.ravel() for a in np.meshgrid(sp, sp)]
    n = 20000
    mag = lambda: rng.integers(0, 0x7f800000, n, dtype=np.uint32).view(F32) * np.where(rng.random(n) < 0.5, -1, 1)  # noqa: E731
    near = rng.uniform(-3, 3, n).astype(F32)  # |y/x| near tan(pi/8), 1 and its inverse
    y = np.concatenate([ys, mag(), near, near * F32(0.41421357)]).astype(F32)
    x = np.concatenate([xs, mag(), rng.uniform(-3, 3, n), near]).astype(F32)
    with np.errstate(all="ignore"):
        ref = np.arctan2(y.astype(np.float64), x.astype(np.float64))
    f = frit.arctan2
    for path, g in (("eager", lambda a, b: f(frit.asarray(a), frit.asarray(b)).numpy()), ("jit", frit.jit(f)),
                    ("jit static", frit.jit(f, dynamic=False))):
        got = np.asarray(g(y, x))
        assert got.dtype == F32
        err = ulps_of(got, ref)
        worst = int(np.argmax(err))
        assert err[worst] < 1.0, "%s arctan2(%r, %r) = %r: %.3f ulp" % (path, y[worst], x[worst], got[worst], err[worst])
        k = len(ys)
        np.testing.assert_array_equal(got[:k], ref[:k].astype(F32), err_msg=path)
        assert (np.signbit(got[:k]) == np.signbit(ref[:k].astype(F32)))[~np.isnan(ref[:k])].all(), path


def test_log_of_subnormals_and_negatives():
    x = np.array([1e-45, 1e-40, 3e-39, -1e-40, -1.0, -np.inf], dtype=F32)
    for path, f in paths("log"):
        got = np.asarray(f(x))
        assert np.all(np.isnan(got[3:])), path
        np.testing.assert_allclose(got[:3], np.log(x[:3].astype(np.float64)), rtol=2 ** -23, err_msg=path)


def ulps64(got, x, fn):
    """ulps of a float64 result from numpy's long double value (64-bit significand on x86-64,
    2^-11 of a double's ulp), 0 for matching specials, inf for a wrong class"""
    with np.errstate(all="ignore"):
        ref = fn(x.astype(np.longdouble))
    out = np.zeros(x.shape)
    nan_r, nan_g = np.isnan(ref), np.isnan(got)
    out[nan_r != nan_g] = np.inf
    fin = ~nan_r & ~nan_g
    top = np.longdouble(np.finfo(np.float64).max)
    over = fin & (np.abs(ref) > top)
    out[over & ~np.isinf(got) & (np.abs(got) != np.finfo(np.float64).max)] = np.inf
    zero = fin & (ref == 0)
    out[zero & (got != 0)] = np.inf
    reg = fin & ~over & ~zero
    with np.errstate(all="ignore"):  # a long double below a double's least subnormal: log2(0)
        e = np.floor(np.log2(np.abs(ref[reg].astype(np.float64))))
    ulp = np.exp2(np.maximum(e - 52, -1074))
    with np.errstate(invalid="ignore"):
        # divided in long double: the difference itself may be below a double's least subnormal
        out[reg] = np.abs((got[reg].astype(np.longdouble) - ref[reg]) / ulp.astype(np.longdouble)).astype(np.float64)
    return out


@pytest.mark.skipif(np.finfo(np.longdouble).nmant < 63, reason="needs an 80-bit long double oracle")
@pytest.mark.parametrize("name", ["exp", "exp2", "log", "log2", "tanh", "sinh", "cosh", "arctan", "arcsin",
                                  "arccos"])
def test_float64_exp_log_within_one_ulp(name):
    """the C backend's own f64 exp, exp2, log, log2, tanh, sinh, cosh, atan, asin and acos (libm's
    are scalar calls) against long double"""
    rng = np.random.default_rng(23)
    if name in ("arcsin", "arccos"):
        # near +-1, where sqrt(1 - x^2) is small, tiny and subnormal inputs, and past +-1 (NaN)
        x = np.concatenate([rng.uniform(-1, 1, 20000), 1 - np.exp(rng.uniform(-37, 0, 5000)),
                            np.exp(rng.uniform(-37, 0, 5000)) - 1, np.exp(rng.uniform(-745, 0, 5000)),
                            [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, np.nextafter(1.0, 2.0),
                             np.nextafter(-1.0, -2.0), np.nextafter(1.0, 0.0), 2.0, -3.0]])
    elif name == "arctan":
        # each reduction interval and its ends (7/16, 11/16, 19/16, 39/16), the clamp at 2^60
        ends = np.array([0.4375, 0.6875, 1.1875, 2.4375])
        x = np.concatenate([rng.uniform(-3, 3, 20000), np.exp(rng.uniform(-745, 709, 10000)),
                            -np.exp(rng.uniform(-40, 40, 10000)), ends, np.nextafter(ends, 0), -ends,
                            [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0 ** 60, 2.0 ** 61, 1e300, 5e-324, -5e-324]])
    elif name in ("tanh", "sinh", "cosh"):
        # the polynomials' ends (tanh 0.5493, sinh 1), tanh's saturation at 19-22, the overflow
        # of sinh and cosh at 710.476, tiny and subnormal inputs
        x = np.concatenate([rng.uniform(-2, 2, 20000), rng.uniform(-30, 30, 10000), rng.uniform(-712, 712, 10000),
                            np.exp(rng.uniform(-745, 6.6, 5000)), -np.exp(rng.uniform(-745, 6.6, 5000)),
                            [0.0, -0.0, np.inf, -np.inf, np.nan, 0.5493061443340548, 0.5493061443340549, 1.0,
                             np.nextafter(1.0, 0.0), -1.0, 19.0, 19.1, 22.0, 22.5, 710.4758600739439,
                             710.475860073944, -710.4758600739439, -710.475860073944, 711.0, 1e300, -1e300, 5e-324,
                             -5e-324, 1e-300]])
    elif name == "exp":
        x = np.concatenate([rng.uniform(-750, 712, 30000), rng.uniform(-1, 1, 10000), rng.uniform(-1e-8, 1e-8, 1000),
                            [0.0, -0.0, np.inf, -np.inf, np.nan, 709.782712893384, 709.7827128933841, -745.1332191019411,
                             -745.2, -708.4, 1e300, -1e300]])
    elif name == "exp2":
        # every integer power (exact, subnormal ones too), the ends of the reduction (+-1/2) and
        # the over- and underflow edges
        x = np.concatenate([rng.uniform(-1080, 1025, 30000), rng.uniform(-1, 1, 10000), np.arange(-1080.0, 1026.0),
                            np.arange(-1080, 1025) + 0.5, rng.uniform(-1e-8, 1e-8, 1000),
                            [0.0, -0.0, np.inf, -np.inf, np.nan, 1023.9999999999999, 1024.0, -1074.0, -1074.5,
                             -1075.0, -1022.0000000000001, 1e300, -1e300]])
    else:
        bits = rng.integers(0, 0x7ff0000000000000, 30000, dtype=np.uint64)
        x = np.concatenate([bits.view(np.float64), rng.uniform(0.7, 1.4, 10000), bits[:1000] >> np.uint64(12),
                            [0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, 1.0, 5e-324, np.finfo(np.float64).max,
                             np.nextafter(1.0, 2.0), np.nextafter(1.0, 0.0)]])
        x[40000:41000] = bits[:1000].view(np.float64) * 0 + (bits[:1000] >> np.uint64(12)).view(np.float64)
        if name == "log2":  # powers of two give their exponents exactly
            x = np.concatenate([x, np.exp2(np.arange(-1074.0, 1024.0))])
    fn = getattr(np, name)
    f = getattr(frit, name)
    for path, g in (("eager", lambda v: f(frit.asarray(v)).numpy()), ("jit", frit.jit(f)),
                    ("jit static", frit.jit(f, dynamic=False))):
        got = np.asarray(g(x))
        assert got.dtype == np.float64
        err = ulps64(got, x, fn)
        worst = int(np.argmax(err))
        assert err[worst] < 1.0, "%s %s(%r) = %r: %.3f ulp" % (path, name, x[worst], got[worst], err[worst])
        special = ~np.isfinite(x) | (x == 0)
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(got[special], fn(x[special]))
        if name == "exp2":  # 2^k exactly, down to the least subnormal (and 0, inf beyond)
            ints = np.isfinite(x) & (x == np.trunc(x))
            with np.errstate(over="ignore"):
                want = np.ldexp(1.0, np.clip(x[ints], -1100, 1100).astype(int))
            np.testing.assert_array_equal(got[ints], want)
        if name == "log2":
            m, e = np.frexp(x)
            p2 = np.isfinite(x) & (x > 0) & (m == 0.5)
            np.testing.assert_array_equal(got[p2], (e[p2] - 1).astype(np.float64))


@pytest.mark.skipif(np.finfo(np.longdouble).nmant < 63, reason="needs an 80-bit long double oracle")
def test_float64_atan2_within_one_ulp():
    """the C backend's own f64 atan2 against long double on sampled pairs (ratios near the
    reduction's breakpoints, magnitudes from 1e-300 to 1e300), and C99 F.9.1.4's special pairs
    bit for bit against libm, eagerly and under both jit modes"""
    rng = np.random.default_rng(29)
    n = 20000
    y = np.concatenate([rng.uniform(-3, 3, n), np.exp(rng.uniform(-690, 690, n)) * np.sign(rng.uniform(-1, 1, n))])
    x = np.concatenate([rng.uniform(-3, 3, n), np.exp(rng.uniform(-690, 690, n)) * np.sign(rng.uniform(-1, 1, n))])
    x[::5] = y[::5] * np.array([0.4375, 0.6875, 1.1875, 2.4375, 1.0])[np.arange(len(x[::5])) % 5]
    x[1::5] = y[1::5] * rng.uniform(0.3, 3, len(x[1::5]))
    sv = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1e308, -1e308, 2.5, -0.3])
    sy, sx = (a.ravel() for a in np.meshgrid(sv, sv))
    for path, g in (("eager", lambda a, b: frit.arctan2(frit.asarray(a), frit.asarray(b)).numpy()),
                    ("jit", frit.jit(frit.arctan2)), ("jit static", frit.jit(frit.arctan2, dynamic=False))):
        got = np.asarray(g(y, x))
        assert got.dtype == np.float64
        err = ulps64(got, y, lambda yy: np.arctan2(yy, x.astype(np.longdouble)))
        worst = int(np.argmax(err))
        assert err[worst] < 1.0, "%s atan2(%r, %r) = %r: %.3f ulp" % (path, y[worst], x[worst], got[worst], err[worst])
        got = np.asarray(g(sy, sx))
        want = np.arctan2(sy, sx)
        np.testing.assert_array_equal(got, want, err_msg=path)
        assert (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all(), path
