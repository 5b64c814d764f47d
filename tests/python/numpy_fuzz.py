"""The numpy-oracle fuzzer (issue 10): random programs written once against the public array API,
f(xp, *inputs), evaluated by numpy, by eager frit and by jitted frit (at a second shape when the
program is shape-generic); any difference shrinks to a standalone Python reproducer.

Used by test_fuzz_numpy.py (fast pass, fixed seeds) and by `make fuzz-numpy` (long pass):
    python tests/python/numpy_fuzz.py [--seconds S] [--seed K] [--known]
A program is a list of steps `v<k> = <expression of earlier values>`; the expressions come from
templates over the public API (elementwise with promotion, movement, slicing, reductions,
indexing, scatter via .at[], matmul, where, host loops). Generation runs numpy step by step and
keeps only steps numpy accepts, so every program is valid numpy."""
import os
import sys
import time
import traceback
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "python"))

import frit  # noqa: E402
from frit import _session as _S  # noqa: E402

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64"]
ERRORS = (frit.FritError, TypeError, ValueError, IndexError, ZeroDivisionError, OverflowError,
          NotImplementedError)
MAX_SIZE = 2048

# Features that hit bugs being fixed on other branches (issue 10). Off by default so the fast
# pass stays green; --known / FRIT_FUZZ_KNOWN=1 turns them on.
KNOWN = {
    "roll": "roll under jit returns its input unchanged for symbolic dims",
    "slice_oob": "slice bounds past the end are not clamped (eager heap corruption, jit shapes)",
    "slice_step_jit": "a stepped slice of a symbolic dim cannot be traced (falls back per shape)",
    "pad_modes": "pad lacks modes symmetric and wrap",
    "index_oob": "out-of-range integer-array indices: clamped under jit, IndexError eagerly",
}

# Helpers the programs call; the reproducer prints them too.
HELPERS = '''
def _weak(x, v):
    # numpy's ufunc.at does not apply NEP 50 to Python scalars (uint64 += 3 goes through float64,
    # float16 += 1.34 adds the double); np.add converts the weak scalar to x's dtype first
    if (type(v) in (bool, int) and x.dtype.kind in "iub") or (
            type(v) in (bool, int, float) and x.dtype.kind == "f"):
        return np.array(v, dtype=x.dtype)
    return v


def AT_ADD(xp, x, idx, v):
    if xp is np:
        y = x.copy(); np.add.at(y, idx, _weak(x, v)); return y
    return x.at[idx].add(v)


def AT_SET(xp, x, idx, v):
    if xp is np:
        y = x.copy(); y[idx] = v; return y
    return x.at[idx].set(v)


def SETITEM(xp, x, idx, v):
    y = x.copy()
    y[idx] = v
    return y


def HLOOP(xp, k, body, x):
    if xp is np:
        for _ in range(k):
            x = body(xp, x)
        return x
    x = x.copy()  # a fresh Array: the loop rebinds it in place
    with frit.loop(k):
        x[...] = body(xp, x)
    return x


def VLOOP(xp, k, body, x):
    if xp is np:
        for _ in range(k):
            x = body(xp, x)
        return x
    v = frit.Var(x)
    with frit.loop(k):
        v.set(body(xp, v.get()))
    return v.get()
'''
_HENV = {"np": np, "frit": frit}
exec(HELPERS, _HENV)


# ---------------------------------------------------------------- programs

class Prog:
    """inputs: numpy arrays; steps: expression strings over names x<i> (inputs) and v<k>
    (earlier steps); outs: names returned. eager_min: the eager run's
    _session.EAGER_STATIC_MIN_ELEMS (None: the default), drawn so that some inputs get constant
    small dims and others symbolic ones of the same sizes (the default 512 is past the fuzzer's
    sizes)."""

    def __init__(self, inputs, steps, outs, eager_min=None):
        self.inputs, self.steps, self.outs = list(inputs), list(steps), list(outs)
        self.eager_min = eager_min

    def like(self, inputs=None, steps=None, outs=None):
        """A copy with some parts replaced (shrinking), the eager policy kept."""
        return Prog(self.inputs if inputs is None else inputs, self.steps if steps is None else steps,
                    self.outs if outs is None else outs, self.eager_min)

    def names(self):
        return ["x%d" % i for i in range(len(self.inputs))]

    def source(self, name="f"):
        lines = ["def %s(xp, %s):" % (name, ", ".join(self.names()))]
        lines += ["    v%d = %s" % (k, s) for k, s in enumerate(self.steps)]
        lines.append("    return (%s,)" % ", ".join(self.outs))
        return "\n".join(lines)

    def fn(self):
        env = dict(_HENV)
        exec(self.source(), env)
        return env["f"]

    def repro(self, mode, message, second=None):
        """A standalone script printing frit's and numpy's results (jit2: the jitted function
        is called at the program's shapes, then at the second shapes, which are compared)."""
        def lit(nm, a):
            if a.size == 0:  # tolist() loses the shape of empty arrays
                return "%s = np.zeros(%r, dtype=np.%s)" % (nm, a.shape, a.dtype)
            return "%s = np.array(%r, dtype=np.%s)" % (nm, a.tolist(), a.dtype)
        names = self.names()
        arrs = [lit(n, a) for n, a in zip(names, self.inputs)]
        args = ", ".join(names)
        if mode == "jit2" and second is not None:
            arrs += [lit(n + "_2", a) for n, a in zip(names, second)]
            args2 = ", ".join(n + "_2" for n in names)
            call = ("g = frit.jit(lambda %s: f(frit, %s))\ng(%s)\ngot = g(%s)\nwant = f(np, %s)"
                    % (args, args, args, args2, args2))
        elif mode.startswith("jit"):
            call = ("got = frit.jit(lambda %s: f(frit, %s))(%s)\nwant = f(np, %s)"
                    % (args, args, args, args))
        else:
            call = "got = f(frit, %s)\nwant = f(np, %s)" % (
                ", ".join("frit.asarray(%s)" % n for n in names), args)
            if self.eager_min is not None:
                call = "frit._session.EAGER_STATIC_MIN_ELEMS = %d\n%s" % (self.eager_min, call)
        return ("# numpy_fuzz reproducer (%s): %s\nimport numpy as np\nimport frit\n%s\n\n%s\n\n"
                "%s\n%s\nfor g_, w in zip(got, want):\n"
                "    print(np.asarray(g_).dtype, w.dtype, np.asarray(g_).shape, w.shape)\n"
                "    print(np.asarray(g_)); print(w)\n"
                % (mode, message.splitlines()[0][:200] if message else "", HELPERS.strip(),
                   "\n".join(arrs), self.source(), call))


def run_numpy(prog, inputs=None):
    f = prog.fn()
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", [np.asarray(o) for o in f(np, *[a.copy() for a in (inputs or prog.inputs)])]
        except Exception as e:  # noqa: BLE001 - numpy's refusal is the expectation
            return "raise", e


# ---------------------------------------------------------------- comparison

RTOL = {"float16": 2e-2, "float32": 2e-4, "float64": 1e-9}


def loosest_rtol(prog, inputs=None):
    """The tolerance of the least precise float the program computes in (its inputs and every
    step, by numpy): a float32 exp stacked with an int32 is a float64 result carrying float32
    rounding (numpy's own float32 exp is not correctly rounded either). 0 when no float."""
    vals = list(inputs or prog.inputs)
    st, steps = run_numpy(Prog(prog.inputs, prog.steps, ["v%d" % k for k in range(len(prog.steps))]), inputs)
    if st == "ok":
        vals += steps
    return max([RTOL.get(str(np.asarray(v).dtype), 0.0) for v in vals] + [0.0])


def compare(got, want, rtol_floor=0.0):
    """None or a message. Floats: close relative to the result's magnitude (reductions and
    chains round differently from numpy), within the tolerance of the result's dtype or of the
    least precise float computed on the way (rtol_floor); NaN and inf positions must agree."""
    got = [np.asarray(g) for g in got]
    if len(got) != len(want):
        return "%d outputs, numpy %d" % (len(got), len(want))
    for k, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape:
            return "out %d: shape %s, numpy %s" % (k, g.shape, w.shape)
        if g.dtype != w.dtype:
            return "out %d: dtype %s, numpy %s" % (k, g.dtype, w.dtype)
        if w.size == 0:
            continue
        if w.dtype.kind == "f":
            np.seterr(invalid="ignore", over="ignore")
            gd, wd = g.astype(np.float64), w.astype(np.float64)
            gn, wn = np.isnan(gd), np.isnan(wd)
            fin = np.isfinite(gd) & np.isfinite(wd)
            rtol = max(RTOL[str(w.dtype)], rtol_floor)
            scale = np.max(np.abs(wd[fin])) if fin.any() else 1.0
            tol = rtol * (np.abs(wd) + scale * 1e-2 + 1e-30)
            inf_bad = (~fin & ~(gn | wn)) & (gd != wd)
            bad = (gn != wn) | inf_bad | (fin & (np.abs(gd - wd) > tol))
        else:
            bad = g != w
        if bad.any():
            i = tuple(np.argwhere(bad)[0])
            return "out %d: %d of %d differ, at %s got %r, numpy %r" % (
                k, bad.sum(), bad.size, i, g[i], w[i])
    return None


def _mkind(message):
    """mismatch-shape / mismatch-dtype / mismatch-values: shrinking keeps the kind."""
    for k in ("shape", "dtype"):
        if message.split(": ", 1)[1].startswith(k):
            return "mismatch-" + k
    return "mismatch-values"


def check(prog, jit=True, second=None):
    """Runs prog on every path; returns None or (mode, kind, message)."""
    st, want = run_numpy(prog)
    f = prog.fn()
    # eager
    keep = _S.EAGER_STATIC_MIN_ELEMS
    if prog.eager_min is not None:
        _S.EAGER_STATIC_MIN_ELEMS = prog.eager_min
    try:
        got = f(frit, *[frit.asarray(a.copy()) for a in prog.inputs])
        got = [np.asarray(g) for g in got]
        est = "ok"
    except ERRORS as e:
        est, got = "raise", e
    except Exception as e:  # noqa: BLE001 - anything else is a bug (report it)
        return ("eager", "crash", "%s: %s" % (type(e).__name__, e))
    finally:
        _S.EAGER_STATIC_MIN_ELEMS = keep
    if st == "raise" and est == "ok":
        return ("eager", "no-raise", "numpy raises %s: %s" % (type(want).__name__, want))
    if st == "ok" and est == "raise":
        return ("eager", "raise", "%s: %s" % (type(got).__name__, got))
    if st == "ok":
        m = compare(got, want, loosest_rtol(prog))
        if m:
            return ("eager", _mkind(m), m)
    if not jit or st == "raise":
        return None
    # jit at the program's shapes, then at the second shapes if numpy accepts those
    g = frit.jit(lambda *xs: f(frit, *xs))
    for label, inputs in (("jit", prog.inputs), ("jit2", second)):
        if inputs is None:
            continue
        if label == "jit2":
            st2, want = run_numpy(prog, inputs)
            if st2 != "ok":
                continue
        try:
            got = [np.asarray(o) for o in g(*[a.copy() for a in inputs])]
        except ERRORS as e:
            return (label, "raise", "%s: %s" % (type(e).__name__, e))
        except Exception as e:  # noqa: BLE001
            return (label, "crash", "%s: %s" % (type(e).__name__, e))
        m = compare(got, want, loosest_rtol(prog, inputs))
        if m:
            return (label, _mkind(m), m)
    return None


# ---------------------------------------------------------------- generation

def rand_array(rng, shape, dt):
    dt = np.dtype(dt)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        lo = 0 if dt.kind == "u" else -20
        return rng.integers(lo, 20, size=shape, endpoint=True).astype(dt)
    return (rng.standard_normal(shape) * 3).astype(dt)


def rand_shape(rng, ndim=None):
    ndim = rng.integers(0, 4) if ndim is None else ndim
    return tuple(int(rng.choice([1, 2, 3, 4, 5, 6])) if rng.random() < 0.9 else 0
                 for _ in range(ndim))


def _lit(v):
    if isinstance(v, float):
        return repr(float(np.float32(v)))
    return repr(v)


class Gen:
    def __init__(self, rng, known=False):
        self.rng, self.known = rng, known

    def pick(self, xs):
        return xs[int(self.rng.integers(len(xs)))]

    def scalar_for(self, a):
        r = self.rng
        k = a.dtype.kind
        if k == "b" or r.random() < 0.15:
            return self.pick([True, False, 2, -1, 0.5, 3])
        if k in "iu":
            return int(r.integers(0 if k == "u" else -9, 10))
        return _lit(float(np.round(r.standard_normal() * 3, 2)))

    def axis(self, a, allow_none=True):
        r = self.rng
        if a.ndim == 0 or (allow_none and r.random() < 0.2):
            return None
        if a.ndim > 1 and r.random() < 0.25:
            ax = sorted(r.choice(a.ndim, size=int(r.integers(1, a.ndim + 1)), replace=False))
            return tuple(int(x) - (a.ndim if r.random() < 0.3 else 0) for x in ax)
        x = int(r.integers(a.ndim))
        return x - a.ndim if r.random() < 0.4 else x

    def slice_entry(self, n):
        r = self.rng
        oob = self.known and r.random() < 0.3
        hi = n + (4 if oob else 0)

        def b():
            if r.random() < 0.3:
                return None
            v = int(r.integers(-hi, hi + 1)) if hi else 0
            return v
        step = self.pick([None, None, 1, -1, 2, -2, 3])
        st, sp = b(), b()
        if not oob:
            st = None if st is None else max(-n, min(n, st))
            sp = None if sp is None else max(-n, min(n, sp))
            if st is not None and sp is not None and n:
                # an empty slice whose bounds cross (4:2) hits the open slice-clamping bug
                a, b = st % n if st < 0 else st, sp % n if sp < 0 else sp
                if (a > b) == ((step or 1) > 0):
                    st, sp = sp, st
        f = lambda v: "" if v is None else str(v)  # noqa: E731
        return "%s:%s%s" % (f(st), f(sp), "" if step is None else ":%d" % step)

    def elementwise(self, a, an, vals):
        r = self.rng
        k = a.dtype.kind
        un = ["xp.negative({0})", "xp.abs({0})", "xp.square({0})", "xp.sign({0})",
              "xp.logical_not({0})", "({0} == 0)", "xp.positive({0})"]
        if k == "f":
            un += ["xp.sqrt(xp.abs({0}))", "xp.exp(xp.clip({0}, -10, 10))", "xp.sin({0})",
                   "xp.cos({0})", "xp.tanh({0})", "xp.log1p(xp.abs({0}))", "xp.floor({0})",
                   "xp.ceil({0})", "xp.trunc({0})", "xp.round({0})", "xp.isnan({0})",
                   "xp.isfinite({0})", "xp.arctan({0})", "xp.expm1(xp.clip({0}, -5, 5))",
                   "xp.reciprocal({0})", "xp.log(xp.abs({0}) + 1)", "xp.sinh(xp.clip({0}, -5, 5))"]
        if k in "iu":
            un += ["xp.bitwise_invert({0})", "({0} >> 1)", "({0} << 2)", "xp.bitwise_and({0}, 6)"]
        if k == "b":
            un = ["xp.logical_not({0})", "xp.bitwise_invert({0})", "xp.astype({0}, xp.int8)"]
        if r.random() < 0.45:
            return self.pick(un).format(an)
        bins = ["xp.add({0}, {1})", "xp.subtract({0}, {1})", "xp.multiply({0}, {1})",
                "xp.maximum({0}, {1})", "xp.minimum({0}, {1})", "({0} < {1})", "({0} == {1})",
                "({0} >= {1})", "xp.true_divide({0}, {1})", "xp.floor_divide({0}, {1})",
                "xp.remainder({0}, {1})", "xp.where({0} > {1}, {0}, {1})",
                "xp.logical_and({0}, {1})", "xp.logical_or({0}, {1})", "({0} + {1})",
                "({0} * {1})", "({0} - {1})"]
        if k in "iub":
            bins += ["xp.bitwise_and({0}, {1})", "xp.bitwise_or({0}, {1})", "xp.bitwise_xor({0}, {1})"]
        if k == "f":
            bins += ["xp.arctan2({0}, {1})", "xp.power(xp.abs({0}), xp.clip({1}, -3, 3))"]
        t = self.pick(bins)
        c = r.random()
        if c < 0.3:
            other = self.scalar_for(a)
            return (t.format(an, other) if r.random() < 0.6 else t.format(other, an))
        cands = [n for n, v in vals if _bcast_ok(a.shape, v.shape)]
        return t.format(an, self.pick(cands)) if r.random() < 0.7 else t.format(self.pick(cands), an)

    def movement(self, a, an, vals):
        r = self.rng
        nd = a.ndim
        opts = []
        if a.size:
            fac = _factor(a.size, r)
            opts.append("xp.reshape({0}, %r)" % (tuple(fac),))
            if len(fac) > 1:
                fac[int(r.integers(len(fac)))] = -1
                opts.append("xp.reshape({0}, %r)" % (tuple(fac),))
        opts.append("xp.reshape({0}, (-1,))")
        if nd > 1:
            perm = tuple(int(x) for x in r.permutation(nd))
            opts += ["xp.permute_dims({0}, %r)" % (perm,), "xp.swapaxes({0}, 0, -1)",
                     "xp.moveaxis({0}, 0, -1)", "{0}.T" if nd == 2 else "xp.matrix_transpose({0})"]
        opts.append("xp.broadcast_to({0}, (%d,) + %r)" % (int(r.integers(1, 4)), a.shape))
        if nd:
            ents = [self.slice_entry(a.shape[i]) for i in range(nd)]
            opts.append("{0}[%s]" % ", ".join(ents))
            opts.append("xp.flip({0}, axis=%r)" % (self.axis(a),))
            if self.known:
                sh = int(r.integers(-7, 8))
                opts.append("xp.roll({0}, %d, axis=%r)" % (sh, self.axis(a)))
            pw = [(int(r.integers(0, 3)), int(r.integers(0, 3))) for _ in range(nd)]
            modes = ["constant", "edge", "reflect"] + (["symmetric", "wrap"] if self.known else [])
            opts.append("xp.pad({0}, %r, mode=%r)" % (tuple(pw), self.pick(modes)))
            ax = int(r.integers(nd))
            same = [n for n, v in vals if v.ndim == nd and all(
                v.shape[i] == a.shape[i] for i in range(nd) if i != ax)]
            opts.append("xp.concatenate([{0}, %s], axis=%d)" % (self.pick(same), ax))
            sameall = [n for n, v in vals if v.shape == a.shape]
            opts.append("xp.stack([{0}, %s], axis=%d)" % (self.pick(sameall), int(r.integers(-nd - 1, nd + 1))))
            ones = [i for i in range(nd) if a.shape[i] == 1]
            if ones:
                opts.append("xp.squeeze({0}, axis=%d)" % self.pick(ones))
            opts.append("xp.repeat({0}, %d, axis=%d)" % (int(r.integers(0, 3)), ax))
            opts.append("xp.tile({0}, %r)" % (tuple(int(r.integers(1, 3)) for _ in range(nd)),))
        opts.append("xp.expand_dims({0}, axis=%d)" % int(r.integers(-nd - 1, nd + 1)))
        return self.pick(opts).format(an)

    def reduction(self, a, an, vals):
        r = self.rng
        fn = self.pick(["sum", "prod", "max", "min", "mean", "argmax", "argmin", "any", "all",
                        "std", "var", "cumsum", "count_nonzero"])
        if fn in ("argmax", "argmin", "cumsum"):
            ax = None if a.ndim == 0 or r.random() < 0.3 else int(r.integers(-a.ndim, a.ndim))
            kd = ", keepdims=True" if fn != "cumsum" and ax is not None and r.random() < 0.3 else ""
            return "xp.%s(%s, axis=%r%s)" % (fn, an, ax, kd)
        kd = ", keepdims=True" if r.random() < 0.3 else ""
        if fn in ("std", "var") and a.dtype == np.float16:
            # frit squares and sums float16 deviations in float32 (docs/semantics.md); numpy does
            # it in float16, which overflows past 65504 (seed 10700088: std 161.75 here, inf there)
            return "xp.%s(%s.astype(xp.float32), axis=%r%s).astype(xp.float16)" % (fn, an, self.axis(a), kd)
        return "xp.%s(%s, axis=%r%s)" % (fn, an, self.axis(a), kd)

    def sorting(self, a, an, vals):
        """sort (values: -0.0 and 0.0 compare equal) and a stable argsort; the argsort only of
        exact values (integers, bools, inputs), whose order a rounding difference upstream
        cannot change."""
        r = self.rng
        if a.ndim == 0:
            return "xp.sort(%s, axis=None)" % an
        ax = None if r.random() < 0.2 else int(r.integers(-a.ndim, a.ndim))
        if r.random() < 0.5 and (a.dtype.kind in "biu" or an.startswith("x")):
            return "xp.argsort(%s, axis=%r, kind='stable')" % (an, ax)
        return "xp.sort(%s, axis=%r)" % (an, ax)

    def indexing(self, a, an, vals):
        r = self.rng
        if a.ndim == 0:
            return "%s[()]" % an
        n = a.shape[0]
        oob = self.known and r.random() < 0.2
        k = int(r.integers(0, 6))
        lo, hi = (-n - 2, n + 2) if oob else (-n, n)
        idx = [int(x) for x in r.integers(lo, hi, size=k)] if n or oob else []
        il = "xp.asarray(%r, dtype=xp.int64)" % (idx,)
        opts = ["%s[%s]" % (an, il), "xp.take(%s, %s, axis=0)" % (an, il)]
        if a.ndim > 1 and a.shape[1]:
            m = a.shape[1]
            j = [int(x) for x in r.integers(-m, m, size=2)]
            opts.append("%s[:, xp.asarray(%r)]" % (an, j))
            opts.append("%s[%d, ::-1]" % (an, int(r.integers(-n, n))) if n else "%s[:, 0]" % an)
        if n:
            opts.append("%s[%d]" % (an, int(r.integers(-n, n))))
            opts.append("%s[..., None]" % an)
        return self.pick(opts)

    def scatter(self, a, an, vals):
        r = self.rng
        if a.ndim == 0 or a.shape[0] == 0:
            return None
        n = a.shape[0]
        idx = [int(x) for x in r.integers(-n, n, size=int(r.integers(1, 5)))]
        # a float added into an int array: numpy's ufunc.at casts unsafely after adding in
        # float64, frit's .at[] casts the update first (as JAX); not compared
        v = {"b": "True", "i": str(int(r.integers(-5, 6))), "u": str(int(r.integers(0, 6)))}.get(
            a.dtype.kind) or self.scalar_for(a)
        if r.random() < 0.5:
            return "AT_ADD(xp, %s, xp.asarray(%r), %s)" % (an, idx, v)
        uniq = sorted(set(i % n for i in idx))
        h = self.pick(["AT_SET", "SETITEM"])
        return "%s(xp, %s, xp.asarray(%r), %s)" % (h, an, uniq, v)

    def matmul(self, a, an, vals):
        if a.ndim == 0:
            return None
        k = a.shape[-1]
        cands = [n for n, v in vals if v.ndim >= 1 and (v.shape[0] if v.ndim == 1 else v.shape[-2]) == k]
        if not cands:
            return None
        return "xp.matmul(%s, %s)" % (an, self.pick(cands))

    def control(self, a, an, vals):
        r = self.rng
        cands = [n for n, v in vals if _bcast_ok(a.shape, v.shape)]
        if r.random() < 0.5 or a.dtype.kind == "b":
            return "xp.where(%s > %s, %s, %s)" % (an, self.scalar_for(a), an, self.pick(cands))
        k = int(r.integers(0, 4))
        if a.dtype.kind == "f":
            body = "lambda xp, y: y * 0.5 + 1.0"
        else:
            body = "lambda xp, y: (y * 3 + 1) % 7"
        h = "VLOOP" if r.random() < 0.3 else "HLOOP"
        return "%s(xp, %d, %s, %s)" % (h, k, body, an)


def _bcast_ok(s1, s2):
    try:
        np.broadcast_shapes(s1, s2)
        return True
    except ValueError:
        return False


def _factor(n, r):
    out = []
    while n > 1 and len(out) < 3:
        ds = [d for d in range(2, n + 1) if n % d == 0]
        d = int(ds[int(r.integers(len(ds)))])
        out.append(d)
        n //= d
    if n > 1:
        out[-1] *= n
    if r.random() < 0.3:
        out.insert(int(r.integers(len(out) + 1)), 1)
    return out or [1]


KINDS = [("elementwise", 5), ("movement", 4), ("reduction", 2), ("indexing", 1.5),
         ("scatter", 1), ("matmul", 1), ("control", 1), ("sorting", 1)]


def generate(seed, known=False, nsteps=None):
    rng = np.random.default_rng(seed)
    g = Gen(rng, known)
    ninp = int(rng.integers(1, 4))
    base = rand_shape(rng)
    inputs = []
    for i in range(ninp):
        sh = base if (i == 0 or rng.random() < 0.5) else rand_shape(rng)
        if rng.random() < 0.3 and len(sh):
            sh = tuple(1 if rng.random() < 0.3 else d for d in sh)
        inputs.append(rand_array(rng, sh, g.pick(DTYPES)))
    vals = [("x%d" % i, a) for i, a in enumerate(inputs)]
    steps = []
    nsteps = int(rng.integers(1, 9)) if nsteps is None else nsteps
    kinds, w = zip(*KINDS)
    w = np.asarray(w) / sum(w)
    tries = 0
    while len(steps) < nsteps and tries < nsteps * 8:
        tries += 1
        kind = kinds[int(rng.choice(len(kinds), p=w))]
        an, a = vals[-1] if rng.random() < 0.6 else g.pick(vals)
        try:
            expr = getattr(g, kind)(a, an, vals)
        except (ValueError, IndexError):
            continue
        if expr is None:
            continue
        trial = Prog(inputs, steps + [expr], ["v%d" % len(steps)])
        st, out = run_numpy(trial)
        if st != "ok" or out[0].dtype.kind not in "biuf" or out[0].size > MAX_SIZE:
            continue
        steps.append(expr)
        vals.append(("v%d" % (len(steps) - 1), out[0]))
    if not steps:
        steps = ["xp.positive(x0)"]
    outs = ["v%d" % (len(steps) - 1)]
    if len(steps) > 2 and rng.random() < 0.3:
        outs.insert(0, "v%d" % int(rng.integers(len(steps) - 1)))
    sizes = sorted({a.size for a in inputs})
    eager_min = None if rng.random() < 0.4 else int(g.pick([0] + sizes + [s + 1 for s in sizes]))
    return Prog(inputs, steps, outs, eager_min)


def second_inputs(prog, seed):
    """Inputs of other shapes with the same duck-size pattern (every size >= 2 grown by 2)."""
    rng = np.random.default_rng(seed + 7)
    out = []
    for a in prog.inputs:
        sh = tuple(d + 2 if d >= 2 else d for d in a.shape)
        out.append(rand_array(rng, sh, a.dtype))
    return out if any(len(a.shape) for a in prog.inputs) else None


# ---------------------------------------------------------------- shrinking

def _refs(expr, name):
    import re
    return re.search(r"\b%s\b" % name, expr) is not None


def shrink(prog, fail, jit=True, budget=150):
    """Smaller program failing the same way: drop steps (re-pointing users to the step's
    first operand), drop unused inputs, shrink input shapes, simplify input values."""
    import re
    sig = (fail[0], fail[1])

    def same(p):
        nonlocal budget
        if budget <= 0:
            return False
        budget -= 1
        st, _ = run_numpy(p)
        if st != "ok" and sig[1] != "no-raise":
            return False
        try:
            r = check(p, jit=jit and sig[0].startswith("jit"),
                      second=second_inputs(p, 0) if sig[0] == "jit2" else None)
        except Exception:  # noqa: BLE001
            return False
        return r is not None and (r[0], r[1]) == sig

    changed = True
    while changed and budget > 0:
        changed = False
        # drop a step: users of v<k> use v<k>'s first operand instead
        for k in range(len(prog.steps) - 1, -1, -1):
            m = re.search(r"\b([xv]\d+)\b", prog.steps[k])
            sub = m.group(1) if m else None
            if sub is None:
                continue
            steps = []
            for j, s in enumerate(prog.steps):
                if j == k:
                    continue
                s = re.sub(r"\bv%d\b" % k, sub, s)
                s = re.sub(r"\bv(\d+)\b", lambda mm: "v%d" % (int(mm.group(1)) - (int(mm.group(1)) > k)), s)
                steps.append(s)
            outs = [re.sub(r"\bv%d\b" % k, sub, o) for o in prog.outs]
            outs = [re.sub(r"\bv(\d+)\b", lambda mm: "v%d" % (int(mm.group(1)) - (int(mm.group(1)) > k)), o)
                    for o in outs]
            p = prog.like(steps=steps, outs=outs)
            if same(p):
                prog, changed = p, True
                break
        # drop an output
        if len(prog.outs) > 1:
            for i in range(len(prog.outs)):
                p = prog.like(outs=prog.outs[:i] + prog.outs[i + 1:])
                if same(p):
                    prog, changed = p, True
                    break
        # drop an unused input
        for i in range(len(prog.inputs)):
            if not any(_refs(t, "x%d" % i) for t in prog.steps + prog.outs):
                ren = lambda t: re.sub(r"\bx(\d+)\b", lambda mm: "x%d" % (  # noqa: E731
                    int(mm.group(1)) - (int(mm.group(1)) > i)), t)
                p = prog.like(prog.inputs[:i] + prog.inputs[i + 1:], [ren(t) for t in prog.steps],
                              [ren(t) for t in prog.outs])
                if same(p):
                    prog, changed = p, True
                    break
        # shrink a dim of an input
        for i, a in enumerate(prog.inputs):
            for d in range(a.ndim):
                if a.shape[d] > 1:
                    sl = [slice(None)] * a.ndim
                    sl[d] = slice(0, a.shape[d] - 1)
                    ins = list(prog.inputs)
                    ins[i] = a[tuple(sl)].copy()
                    p = prog.like(inputs=ins)
                    if same(p):
                        prog, changed = p, True
                        break
        # simpler values
        for i, a in enumerate(prog.inputs):
            if a.size and a.dtype.kind != "b":
                for v in (np.zeros_like(a), np.ones_like(a), np.round(a).astype(a.dtype)):
                    if np.array_equal(v, a):
                        continue
                    ins = list(prog.inputs)
                    ins[i] = v
                    p = prog.like(inputs=ins)
                    if same(p):
                        prog, changed = p, True
                        break
    return prog


# ---------------------------------------------------------------- driver

def run_one(seed, known=False, jit=True, do_shrink=True):
    """None, or (failure, reproducer source)."""
    prog = generate(seed, known)
    try:
        fail = check(prog, jit=jit, second=second_inputs(prog, seed) if jit else None)
    except Exception as e:  # noqa: BLE001 - a crash of the harness itself
        fail = ("harness", "crash", "".join(traceback.format_exception_only(type(e), e)))
    if fail is None:
        return None
    small = shrink(prog, fail, jit=jit) if do_shrink and fail[0] != "harness" else prog
    if small is not prog:
        fail = check(small, jit=fail[0].startswith("jit"),
                     second=second_inputs(small, 0) if fail[0] == "jit2" else None) or fail
    return fail, small.repro(fail[0], "%s %s: %s" % fail,
                             second_inputs(small, 0 if small is not prog else seed))


def main(argv=None):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=float(os.environ.get("FRIT_FUZZ_NUMPY_SECONDS", 1800)))
    ap.add_argument("--seed", type=int, default=int(os.environ.get("FRIT_FUZZ_SEED", 1000000)))
    ap.add_argument("--known", action="store_true", default=os.environ.get("FRIT_FUZZ_KNOWN") == "1")
    ap.add_argument("--max-failures", type=int, default=20)
    args = ap.parse_args(argv)
    t0 = time.time()
    seed, count, fails = args.seed, 0, []
    sigs = set()
    while time.time() - t0 < args.seconds and len(fails) < args.max_failures:
        r = run_one(seed, known=args.known)
        count += 1
        if r is not None:
            (mode, kind, msg), src = r
            key = (mode, kind, msg.split(":")[0][:60])
            if key not in sigs:
                sigs.add(key)
                fails.append(seed)
                print("=== seed %d: %s %s: %s\n%s" % (seed, mode, kind, msg, src), flush=True)
        seed += 1
        if count % 200 == 0:
            print("... %d programs, %d failures, %.0f s" % (count, len(fails), time.time() - t0),
                  flush=True)
    print("numpy_fuzz: %d programs (seeds %d..%d), %d distinct failures %s, %.0f s"
          % (count, args.seed, seed - 1, len(fails), fails, time.time() - t0))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
