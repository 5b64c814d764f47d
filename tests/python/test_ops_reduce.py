"""Reductions and scans against numpy: sum/prod/max/min/mean/var/std/argmax/argmin/any/all/
logsumexp over axis sets, keepdims, ddof, result dtypes, NaN, ties, empty axes; cumsum."""
import warnings

import numpy as np
import pytest

from frit import _lib as L
from util import EPS, NP_OF, assert_close, assert_exact, cast_values, dtname, evaluate, rand

AXES = [None, 0, 1, -1, (0, 2), (0, 1, 2), ()]
SHAPE = (3, 5, 4)


def np_reduce(f, x, axes, keepdims, ddof=0.0, dt=None):
    """numpy reference. bf16 inputs (float32 values) reduce in float32 and round to bf16."""
    ax = axes if axes is None or isinstance(axes, int) else tuple(axes)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if f in ("argmax", "argmin"):
            r = getattr(np, f)(x, axis=ax, keepdims=keepdims)
        elif f in ("var", "std"):
            r = getattr(np, f)(x, axis=ax, keepdims=keepdims, ddof=ddof)
        elif f == "logsumexp":
            m = np.max(x.astype(np.float64), axis=ax, keepdims=True)
            m = np.where(np.isfinite(m), m, 0)
            r = np.log(np.sum(np.exp(x.astype(np.float64) - m), axis=ax, keepdims=True)) + m
            if not keepdims:
                r = np.squeeze(r, axis=ax) if ax is not None else r.reshape(())
            # numpy has no logsumexp; scipy.special.logsumexp gives float64 for integer input
            fd = x.dtype if x.dtype.kind == "f" else np.float64
            r = r.astype(fd)
        else:
            r = getattr(np, {"max": "max", "min": "min", "sum": "sum", "prod": "prod",
                             "mean": "mean", "any": "any", "all": "all"}[f])(x, axis=ax,
                                                                           keepdims=keepdims)
    r = np.asarray(r)
    if dt == L.BF16 and r.dtype.kind == "f":
        return cast_values(r, L.BF16), L.BF16
    return r, L.from_numpy_dtype(r.dtype)


def _tol(f, dt, x, axes):
    """Tolerance for float reductions: summation order may differ (pairwise vs sequential)."""
    if dt not in EPS or f in ("max", "min", "argmax", "argmin", "any", "all"):
        return None
    n = x.size if axes is None else int(np.prod([x.shape[a] for a in np.atleast_1d(axes)]))
    e = EPS[dt]
    scale = float(np.max(np.abs(x.astype(np.float64)), initial=1.0))
    k = 4.0 if dt in (L.F32, L.F64) else 2.0
    if f == "prod":
        return (k * n * e, 0.0)
    if f in ("var", "std"):
        return (k * n * e * 4, k * n * e * scale * scale)
    return (k * n * e, k * n * e * scale)


FUNCS = ["sum", "prod", "max", "min", "mean", "var", "std", "argmax", "argmin", "any", "all",
         "logsumexp"]


@pytest.mark.parametrize("dt", [L.F32, L.F64, L.F16, L.BF16, L.I32, L.I8, L.U8, L.U64, L.BOOL,
                                L.I64], ids=dtname)
@pytest.mark.parametrize("f", FUNCS)
def test_reduce(ctx, path, f, dt):
    rng = np.random.default_rng(dt * 7 + FUNCS.index(f))
    kind = "small" if f == "prod" else "normal"
    x = rand(rng, dt, SHAPE, kind=kind, scale=1.0 if f in ("prod", "logsumexp") else 3.0)
    if f == "prod" and dt in L.FLOAT_DTYPES:
        x = cast_values(rng.uniform(0.5, 1.5, SHAPE), dt)
    if f in ("argmax", "argmin") and dt not in (L.BOOL,):
        x = (x.astype(np.float64) // 2).astype(x.dtype)  # many ties: numpy takes the first
        x = cast_values(x, dt)
    tx = ctx.input("x", dt, SHAPE)
    cases, outs = [], []
    for axes in AXES:
        if f in ("argmax", "argmin") and not (axes is None or isinstance(axes, int)):
            continue
        for keepdims in ([False, True] if axes is not None or f not in ("argmax", "argmin")
                         else [False]):
            ddofs = [0.0, 1.0] if f in ("var", "std") else [0.0]
            for ddof in ddofs:
                try:
                    ref = np_reduce(f, x, axes, keepdims, ddof, dt)
                except (TypeError, ValueError):
                    continue
                cases.append((axes, keepdims, ddof, ref))
                outs.append(ctx.reduce(f, tx, axes, keepdims, ddof))
    if not outs:
        pytest.skip("numpy rejects %s on %s" % (f, dtname(dt)))
    got = evaluate(outs, {"x": x}, path)
    for (axes, keepdims, ddof, (want, want_dt)), g, o in zip(cases, got, outs):
        what = "%s(%s, axes=%s, keepdims=%s, ddof=%s)" % (f, dtname(dt), axes, keepdims, ddof)
        assert dtname(o.dtype) == dtname(want_dt), what + ": result dtype"
        tol = _tol(f, dt if dt in EPS else want_dt, x, axes)
        if tol is None or want_dt not in EPS:
            assert_exact(g, want, what)
        else:
            assert_close(g, want, tol[0], tol[1], what)


@pytest.mark.parametrize("f", ["max", "min", "argmax", "argmin", "sum", "mean", "logsumexp"])
def test_reduce_nan_inf(ctx, path, f):
    x = np.array([[1.0, np.nan, 3.0, np.nan], [np.inf, -np.inf, 0.0, 1.0],
                  [-np.inf, -np.inf, -np.inf, -np.inf], [2.0, 5.0, 5.0, -1.0]], np.float32)
    tx = ctx.input("x", L.F32, x.shape)
    outs = [ctx.reduce(f, tx, 1), ctx.reduce(f, tx, 0), ctx.reduce(f, tx, None)]
    got = evaluate(outs, {"x": x}, path)
    for axes, g in zip([1, 0, None], got):
        want, _ = np_reduce(f, x, axes, False)
        if f in ("sum", "mean", "logsumexp"):
            assert_close(g, want, 1e-6, 1e-6, "%s axis %s" % (f, axes))
        else:
            assert_exact(g, want, "%s axis %s" % (f, axes))


@pytest.mark.parametrize("f", ["sum", "prod", "any", "all", "mean"])
def test_reduce_empty(ctx, path, f):
    """Reducing a size-0 axis gives the identity (sum 0, prod 1, any False, all True, mean NaN)."""
    x = np.zeros((3, 0), np.float32)
    tx = ctx.input("x", L.F32, x.shape)
    got = evaluate([ctx.reduce(f, tx, 1), ctx.reduce(f, tx, 0)], {"x": x}, path)
    for axes, g in zip([1, 0], got):
        want, _ = np_reduce(f, x, axes, False)
        assert_exact(g, want, "%s of empty axis %d" % (f, axes))


def test_reduce_0d_and_size1(ctx, path, rng):
    s = np.array(2.5, np.float32)
    x = rand(rng, L.F32, (1, 1, 5))
    ts, tx = ctx.input("s", L.F32, ()), ctx.input("x", L.F32, x.shape)
    outs = [ctx.reduce("sum", ts, None), ctx.reduce("max", tx, (0, 1)),
            ctx.reduce("sum", tx, (0, 1), keepdims=True), ctx.reduce("argmax", ts, None)]
    got = evaluate(outs, {"s": s, "x": x}, path)
    assert_exact(got[0], np.sum(s))
    assert_exact(got[1], np.max(x, axis=(0, 1)))
    assert_exact(got[2], np.sum(x, axis=(0, 1), keepdims=True))
    assert_exact(got[3], np.argmax(s))


def test_reduce_of_view(ctx, path, rng):
    """Reductions over permuted/flipped/sliced inputs."""
    x = rand(rng, L.F64, (6, 7))
    tx = ctx.input("x", L.F64, x.shape)
    v = ctx.getitem(ctx.transpose(tx), (slice(None, None, -2), slice(1, None, 2)))
    got = evaluate([ctx.reduce("sum", v, 0), ctx.reduce("max", v, 1), ctx.reduce("argmin", v, 1)],
                   {"x": x}, path)
    vn = x.T[::-2, 1::2]
    assert_close(got[0], vn.sum(0), 1e-14, 1e-14)
    assert_exact(got[1], vn.max(1))
    assert_exact(got[2], vn.argmin(1))


@pytest.mark.parametrize("dt", [L.F32, L.I32, L.I8, L.U8, L.BOOL, L.F64], ids=dtname)
@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_cumsum(ctx, path, rng, dt, axis):
    x = rand(rng, dt, (4, 6), kind="full" if dt in L.INT_DTYPES else "normal")
    tx = ctx.input("x", dt, x.shape)
    out = ctx.cumsum(tx, axis)
    got, = evaluate(out, {"x": x}, path)
    want = np.cumsum(x, axis=axis)
    assert dtname(out.dtype) == dtname(L.from_numpy_dtype(want.dtype))
    if dt in EPS:
        assert_close(got, want, 8 * EPS[dt], 8 * EPS[dt] * 20)
    else:
        assert_exact(got, want)


def test_sum_large_f32_accuracy(ctx, path, rng):
    """A long float32 sum: at most a modest error relative to the exact (float64) sum."""
    x = rng.uniform(0.0, 1.0, 100003).astype(np.float32)
    tx = ctx.input("x", L.F32, x.shape)
    got, = evaluate(ctx.reduce("sum", tx, None), {"x": x}, path)
    exact = np.sum(x.astype(np.float64))
    assert abs(float(got) - exact) <= 1e-4 * exact, (float(got), exact)
