"""Gradient check of every differentiable op-matrix row (issue 11): for each float64 case of a row,
frit.grad of sum(w * f(args)) (w fixed random weights, summed over the float outputs) with
respect to every non-empty float64 array argument, against central finite differences of numpy's
own function. numpy is the oracle, so a frontend that builds a wrong forward graph fails too.

Each row runs as one jitted program holding all its cases' gradients (one C compile per row); a
row that fails as a whole is retried per case so that failures are attributed."""
import re
import zlib

import numpy as np
import pytest

import frit
from test_op_matrix import ROWS, _row_ids

# Rows whose gradients are not implemented yet: (regex on the row id, reason). strict=False, so a
# fix shows as XPASS.
NOT_YET = []
# Rows that are not differentiable functions of arrays: (regex, reason).
SKIP = [
    (r"^Array\.(item|tolist|__float__|__int__|__bool__|__index__|__complex__)$",
     "returns a Python value: not traceable, so not differentiable"),
]
# Rows whose cases include a point where the derivative does not exist and frit, like jax and
# torch, gives NaN there (finite differences of numpy see a one-sided slope of 0).
NAN_AT_KINK = {
    "std": "sqrt at zero variance (a single element)",
    "Array.std": "sqrt at zero variance (a single element)",
}

# FD steps: x +- EPS * max(1, |x|); the check allows for the O(eps^2) truncation and rounding.
EPS = 1e-6
RTOL, ATOL = 2e-4, 2e-6
MAX_COORDS = 24  # finite differences on at most this many coordinates per argument


def _np_fn(row):
    return row.np_fn or row.fn


def _float_leaves(out):
    if isinstance(out, (tuple, list)):
        return [o for x in out for o in _float_leaves(x)]
    a = np.asarray(out)
    return [a] if a.dtype == np.float64 else []


def _np_loss(row, args, weights):
    outs = _float_leaves(_np_fn(row)(np, *args))
    return sum(float(np.sum(o * w)) for o, w in zip(outs, weights))


def _fd(row, args, k, weights, coords):
    g = np.zeros(args[k].shape)
    for c in coords:
        h = EPS * max(1.0, abs(args[k][c]))
        hi, lo = list(args), list(args)
        hi[k] = args[k].copy()
        lo[k] = args[k].copy()
        hi[k][c] += h
        lo[k][c] -= h
        g[c] = (_np_loss(row, hi, weights) - _np_loss(row, lo, weights)) / (2 * h)
    return g


def _prepare(row, rid):
    """Per case: (args, positions differentiated, weights), for cases with float64 outputs and
    float64 array arguments."""
    rng = np.random.default_rng(zlib.crc32(rid.encode()))
    out = []
    for case in row.cases(np.random.default_rng(1234), 3, "float64"):
        args = [np.ascontiguousarray(a) if isinstance(a, np.ndarray) else a for a in case]
        wrt = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype == np.float64
               and a.size > 0]
        if not wrt:
            continue
        try:
            with np.errstate(all="ignore"):
                outs = _float_leaves(_np_fn(row)(np, *args))
        except Exception:  # noqa: BLE001 - a case numpy rejects is an error case of the matrix
            continue
        if not outs or not all(np.all(np.isfinite(o)) for o in outs):
            continue
        weights = [rng.standard_normal(o.shape) for o in outs]
        out.append((args, wrt, weights))
    return out


def _frit_grads(row, cases):
    """frit's gradients of every case, in one jitted function."""
    def loss_of(args, wrt, weights):
        def loss(*xs):
            full = [frit.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
            for i, x in zip(wrt, xs):
                full[i] = x
            outs = row.fn(frit, *full)
            outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
            total = None
            fl = [o for o in outs if getattr(o, "dtype", None) == frit.float64]
            for o, w in zip(fl, weights):
                term = frit.sum(o * w)
                total = term if total is None else total + term
            return total
        return loss

    def all_cases(*flat):
        res, j = [], 0
        for args, wrt, weights in cases:
            xs = flat[j:j + len(wrt)]
            j += len(wrt)
            res.append(frit.grad(loss_of(args, wrt, weights), argnums=tuple(range(len(wrt))))(*xs))
        return res

    flat = [args[i] for args, wrt, _ in cases for i in wrt]
    got = frit.jit(all_cases)(*flat)
    return [[np.asarray(g) for g in gs] for gs in got]


def _check(row, case, grads, nan_ok=False):
    args, wrt, weights = case
    errs = []
    for i, g in zip(wrt, grads):
        a = args[i]
        if g.shape != a.shape:
            errs.append("arg %d: gradient shape %s, argument %s" % (i, g.shape, a.shape))
            continue
        coords = list(np.ndindex(a.shape))
        if len(coords) > MAX_COORDS:
            pick = np.random.default_rng(7).choice(len(coords), MAX_COORDS, replace=False)
            coords = [coords[p] for p in sorted(pick)]
        with np.errstate(all="ignore"):
            want = _fd(row, args, i, weights, coords)
        got = np.array([g[c] for c in coords])
        ref = np.array([want[c] for c in coords])
        scale = max(1.0, float(np.max(np.abs(ref))) if ref.size else 1.0)
        bad = ~(np.abs(got - ref) <= ATOL * scale + RTOL * np.abs(ref))
        if nan_ok:
            bad &= ~np.isnan(got)
        if bad.any():
            k = int(np.argmax(bad))
            errs.append("arg %d %s: frit %r, finite differences %r (%d of %d coordinates differ)"
                        % (i, coords[k], got[k], ref[k], int(bad.sum()), len(coords)))
    return errs


def _describe(args):
    return ", ".join("%s%s" % (a.dtype, a.shape) if isinstance(a, np.ndarray) else repr(a)
                     for a in args)


def _items():
    for (_, row), rid in zip(ROWS, _row_ids()):
        if "float64" not in row.dtypes or row.check is not None:
            continue
        if any(re.search(p, rid) for p, _ in SKIP):
            continue
        marks = []
        why = next((w for p, w in NOT_YET if re.search(p, rid)), None)
        if why:
            marks.append(pytest.mark.xfail(reason=why, strict=False))
        yield pytest.param(row, rid, id=rid, marks=marks)


@pytest.mark.parametrize("row,rid", list(_items()))
def test_grad(row, rid):
    cases = _prepare(row, rid)
    if not cases:
        pytest.skip("no float64 output with a float64 array argument")
    try:
        results = [(c, g) for c, g in zip(cases, _frit_grads(row, cases))]
    except Exception:  # noqa: BLE001 - retried per case for attribution
        results = []
        for c in cases:
            try:
                results.append((c, _frit_grads(row, [c])[0]))
            except Exception as e:  # noqa: BLE001
                results.append((c, e))
    errs = []
    for c, g in results:
        if isinstance(g, Exception):
            errs.append("(%s): %s: %s" % (_describe(c[0]), type(g).__name__, g))
        else:
            nan_ok = row.name in NAN_AT_KINK
            errs += ["(%s): %s" % (_describe(c[0]), e) for e in _check(row, c, g, nan_ok)]
    assert not errs, "%s:\n  %s" % (rid, "\n  ".join(errs[:6]))
