"""Differential fuzzer of whole tensor programs. Each seed builds a random program (inputs with
broadcastable shapes, elementwise ops, movement ops, reductions, small matmuls, casts) and runs it
three ways: compiled (fused C), fused + interpreter, and the reference path (no_fusion +
interpreter); all must agree, and agree with a numpy mirror of the same program.
FRIT_FUZZ_PROGRAMS=N sets the number of programs (default 150), FRIT_FUZZ_SEED the first seed.
FRIT_FUZZ_GROUP=G compiles G programs together (default 4; 1 isolates each program).
Repro: FRIT_FUZZ_GROUP=1 FRIT_FUZZ_SEED=1234 FRIT_FUZZ_PROGRAMS=1 pytest -s
tests/python/test_fuzz_programs.py prints the program."""
import os
import warnings

import numpy as np
import pytest

from frit import _lib as L
from util import assert_close, assert_exact, cast_values, evaluate

NPROG = int(os.environ.get("FRIT_FUZZ_PROGRAMS", "120"))
SEED0 = int(os.environ.get("FRIT_FUZZ_SEED", "0"))
MAX_NUMEL = 1500
FUZZ_DTS = (L.I32, L.I64, L.F32, L.F64, L.F16, L.BF16)
# tolerance relative to an entry's scale, by the program's float dtype: (vs reference, vs numpy)
TOL = {L.F32: (1e-5, 1e-4), L.F64: (1e-5, 1e-4), L.F16: (4e-3, 2e-2), L.BF16: (3e-2, 1.2e-1)}
DIMS = [1, 1, 2, 3, 4, 5, 7]


class Entry:
    """A pool value: the frit tensor, its numpy mirror, and an error scale for float compares."""
    __slots__ = ("t", "v", "scale", "desc")

    def __init__(self, t, v, scale, desc):
        self.t, self.v, self.scale, self.desc = t, v, scale, desc


def _maxabs(v):
    v = np.asarray(v)
    if v.size == 0 or v.dtype == np.bool_:
        return 1.0
    a = np.abs(v.astype(np.float64))
    a = a[np.isfinite(a)]
    return float(a.max()) if a.size else 1.0


class ProgramGen:
    def __init__(self, seed, ctx=None):
        self.rng = np.random.default_rng(seed)
        self.ctx = ctx or L.Ctx()
        self.prefix = "s%d_" % seed
        self.is_int = self.rng.random() < 0.35
        if self.is_int:
            self.dt = [L.I32, L.I64, L.I32][self.rng.integers(3)]
        else:
            self.dt = [L.F32, L.F32, L.F32, L.F64, L.F64, L.F16, L.BF16][self.rng.integers(7)]
        self.pool, self.inputs, self.log, self.ids = [], {}, [], {}

    # -- helpers
    def pick(self, pred=None):
        cands = [e for e in self.pool if pred is None or pred(e)]
        if not cands:
            return None
        # prefer recent values, so programs grow deep rather than wide
        w = np.arange(1, len(cands) + 1, dtype=np.float64) ** 2
        return cands[self.rng.choice(len(cands), p=w / w.sum())]

    def add(self, t, v, scale, desc):
        v = np.asarray(v)
        if t.dtype == L.BF16 and v.dtype.kind == "f":
            v = cast_values(v, L.BF16)  # the mirror of a bf16 value: float32, rounded to bf16
        got_shape = t.shape
        assert got_shape == v.shape, "%s: frit shape %s, numpy %s" % (desc, got_shape, v.shape)
        e = Entry(t, v, max(scale, _maxabs(v)), desc)
        self.pool.append(e)
        self.ids[id(e)] = len(self.ids)
        self.log.append("%s = %s  # %s %s" % (self.ref(e), desc, L.DTYPE_NAMES[t.dtype], v.shape))
        return e

    def ref(self, e):
        return "%%%d" % self.ids[id(e)]

    def rand_shape(self, ndim=None):
        ndim = int(self.rng.choice([0, 1, 2, 2, 3, 3, 4])) if ndim is None else ndim
        shape = [int(self.rng.choice(DIMS)) for _ in range(ndim)]
        if self.rng.random() < 0.03 and ndim:
            shape[self.rng.integers(ndim)] = 0
        return tuple(shape)

    def new_input(self, shape, dt=None):
        dt = dt or self.dt
        name = "%sin%d" % (self.prefix, len(self.inputs))
        if dt in L.INT_DTYPES:
            info = np.iinfo(L.value_dtype(dt))
            big = self.rng.random() < 0.3
            lo, hi = (info.min, info.max) if big else (-20, 20)
            v = self.rng.integers(lo, hi, size=shape, endpoint=True).astype(L.value_dtype(dt))
        else:
            v = cast_values(self.rng.standard_normal(shape) * 2, dt)
        t = self.ctx.input(name, dt, shape)
        self.inputs[name] = v
        return self.add(t, v, 1.0, "input %s" % name)

    def compatible_shape(self, shape):
        """A random shape that broadcasts with `shape`."""
        s = [1 if self.rng.random() < 0.3 else d for d in shape]
        drop = int(self.rng.integers(0, len(s) + 1)) if self.rng.random() < 0.3 else 0
        s = s[drop:]
        if self.rng.random() < 0.15 and len(s) < 4:
            s = [int(self.rng.choice([2, 3]))] + s if not shape else s
        return tuple(s)

    def np_float(self, v):
        return v.astype(np.float64) if v.dtype.kind == "f" else v

    # -- op kinds
    def op_unary(self):
        e = self.pick()
        if e.v.dtype.kind == "f":
            name = self.rng.choice(["neg", "abs", "tanh", "sin", "relu", "sigmoid", "cos", "exp_tanh",
                                    "sqrt_abs", "leaky"])
            with np.errstate(all="ignore"):
                if name == "exp_tanh":
                    t = self.ctx.unary("exp", self.ctx.unary("tanh", e.t))
                    v = np.exp(np.tanh(e.v))
                elif name == "sqrt_abs":
                    t = self.ctx.unary("sqrt", self.ctx.unary("abs", e.t))
                    v = np.sqrt(np.abs(e.v))
                elif name == "leaky":
                    c = self.ctx.scalar(e.t.dtype, 0.125)
                    zero = self.ctx.scalar(e.t.dtype, 0.0)
                    t = self.ctx.where(self.ctx.binary("gt", e.t, zero), e.t,
                                       self.ctx.binary("mul", e.t, c))
                    v = np.where(e.v > 0, e.v, e.v * 0.125)
                else:
                    t = self.ctx.unary(name, e.t)
                    f = {"neg": np.negative, "abs": np.abs, "tanh": np.tanh, "sin": np.sin,
                         "relu": lambda x: np.maximum(x, 0), "cos": np.cos,
                         "sigmoid": lambda x: 1 / (1 + np.exp(-x))}[name]
                    v = f(e.v)
            scale = e.scale
        else:
            name = self.rng.choice(["neg", "abs", "bitwise_not"])
            t = self.ctx.unary(name, e.t)
            with np.errstate(all="ignore"):
                v = {"neg": np.negative, "abs": np.abs, "bitwise_not": np.invert}[name](e.v)
            scale = e.scale
        self.add(t, v, scale, "%s(%s)" % (name, self.ref(e)))

    def op_binary(self):
        a = self.pick()

        def ok(e):
            try:
                s = np.broadcast_shapes(a.v.shape, e.v.shape)
            except ValueError:
                return False
            return int(np.prod(s)) <= MAX_NUMEL

        b = self.pick(ok) if self.rng.random() < 0.7 else None
        if b is None:
            b = self.new_input(self.compatible_shape(a.v.shape),
                               dt=a.t.dtype if a.t.dtype in FUZZ_DTS else None)
        if self.rng.random() < 0.5:
            a, b = b, a
        isf = a.v.dtype.kind == "f" or b.v.dtype.kind == "f"
        if isf:
            name = self.rng.choice(["add", "sub", "mul", "maximum", "minimum", "max_where", "add",
                                    "mul"])
        else:
            name = self.rng.choice(["add", "sub", "mul", "maximum", "minimum", "bitwise_xor",
                                    "bitwise_and", "floordiv", "remainder", "min_where", "shift"])
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if name == "max_where":
                t = self.ctx.where(self.ctx.binary("gt", a.t, b.t), a.t, b.t)
                v = np.where(a.v > b.v, a.v, b.v)
                v = v.astype(np.result_type(a.v, b.v))
            elif name == "min_where":
                t = self.ctx.where(self.ctx.binary("lt", a.t, b.t), a.t, b.t)
                v = np.where(a.v < b.v, a.v, b.v).astype(np.result_type(a.v, b.v))
            elif name == "shift":
                k = int(self.rng.integers(0, 4))
                op = "lshift" if self.rng.random() < 0.5 else "rshift"
                t = self.ctx.binary(op, a.t, self.ctx.scalar(a.t.dtype, k))
                v = (np.left_shift if op == "lshift" else np.right_shift)(
                    a.v, np.asarray(k, a.v.dtype))
                b = None
                name = "%s %d" % (op, k)
            else:
                t = self.ctx.binary(name, a.t, b.t)
                f = {"add": np.add, "sub": np.subtract, "mul": np.multiply,
                     "maximum": np.maximum, "minimum": np.minimum, "bitwise_xor": np.bitwise_xor,
                     "bitwise_and": np.bitwise_and, "floordiv": np.floor_divide,
                     "remainder": np.remainder}[name]
                v = f(a.v, b.v)
        if b is None:
            self.add(t, v, a.scale, "%s(%s)" % (name, self.ref(a)))
            return
        scale = a.scale * b.scale if name == "mul" else max(a.scale, b.scale)
        self.add(t, v, scale, "%s(%s, %s)" % (name, self.ref(a), self.ref(b)))

    def op_movement(self):
        e = self.pick()
        v, t, nd = e.v, e.t, e.v.ndim
        kind = self.rng.choice(["permute", "flip", "slice", "pad", "reshape", "expand",
                                "contiguous", "unsqueeze", "concat"])
        if kind in ("permute", "flip", "slice", "concat", "pad") and nd == 0:
            kind = "unsqueeze"
        if kind == "permute":
            p = [int(i) for i in self.rng.permutation(nd)]
            t2, v2, d = self.ctx.permute(t, p), v.transpose(p), "permute%s" % (p,)
        elif kind == "flip":
            axes = [i for i in range(nd) if self.rng.random() < 0.5] or [0]
            t2, v2, d = self.ctx.flip(t, axes), np.flip(v, axes), "flip%s" % (axes,)
        elif kind == "slice":
            sl = []
            for n in v.shape:
                step = int(self.rng.choice([1, 1, 2, -1, -2, 3]))
                a = int(self.rng.integers(-n - 1, n + 2)) if self.rng.random() < 0.7 else None
                b = int(self.rng.integers(-n - 1, n + 2)) if self.rng.random() < 0.7 else None
                sl.append(slice(a, b, step))
            t2, v2, d = self.ctx.getitem(t, sl), v[tuple(sl)], "slice%s" % (sl,)
        elif kind == "pad":
            before = [int(self.rng.integers(0, 3)) for _ in range(nd)]
            after = [int(self.rng.integers(0, 3)) for _ in range(nd)]
            if int(np.prod([s + b + a for s, b, a in zip(v.shape, before, after)])) > MAX_NUMEL:
                return
            t2 = self.ctx.pad(t, before, after, "constant", 0.0)
            v2, d = np.pad(v, list(zip(before, after))), "pad(%s, %s)" % (before, after)
        elif kind == "reshape":
            n = v.size
            dims = []
            rest = n
            while rest > 1 and len(dims) < 3:
                divs = [k for k in range(2, rest + 1) if rest % k == 0]
                k = int(self.rng.choice(divs))
                dims.append(k)
                rest //= k
            if rest != 1 or n == 0:
                dims.append(rest)
            if self.rng.random() < 0.3 and dims:
                dims[self.rng.integers(len(dims))] = -1
            t2, v2, d = self.ctx.reshape(t, dims), v.reshape(dims), "reshape%s" % (dims,)
        elif kind == "expand":
            shp = [int(self.rng.choice([2, 3])) if s == 1 and self.rng.random() < 0.7 else s
                   for s in v.shape]
            if self.rng.random() < 0.3 and nd < 4:
                shp = [int(self.rng.choice([2, 3]))] + shp
            if int(np.prod(shp)) > MAX_NUMEL:
                return
            t2, v2, d = self.ctx.broadcast_to(t, shp), np.broadcast_to(v, shp), "expand%s" % (shp,)
        elif kind == "contiguous":
            t2, v2, d = self.ctx.contiguous(t), v, "contiguous"
        elif kind == "unsqueeze":
            ax = int(self.rng.integers(0, nd + 1))
            t2, v2, d = self.ctx.unsqueeze(t, ax), np.expand_dims(v, ax), "unsqueeze %d" % ax
        else:  # concat with a transformed copy of itself along an axis
            ax = int(self.rng.integers(0, nd))
            if 2 * v.size > MAX_NUMEL:
                return
            other = self.ctx.unary("neg", t)
            with np.errstate(all="ignore"):
                t2, v2 = self.ctx.concat([t, other], ax), np.concatenate([v, -v], ax)
            d = "concat(x, -x, axis=%d)" % ax
        self.add(t2, v2, e.scale, "%s(%s)" % (d, self.ref(e)))

    def op_reduce(self):
        e = self.pick(lambda e: e.v.ndim > 0)
        if e is None:
            return
        v, nd = e.v, e.v.ndim
        axes = [i for i in range(nd) if self.rng.random() < 0.5] or [int(self.rng.integers(nd))]
        if self.rng.random() < 0.1:
            axes = None
        keep = bool(self.rng.random() < 0.4)
        isf = v.dtype.kind == "f"
        choices = ["sum", "max", "min"] + (["mean"] if isf else ["argmax", "argmin", "prod"])
        f = str(self.rng.choice(choices))
        if f in ("argmax", "argmin"):
            axes = int(self.rng.integers(nd)) if axes is not None else None
        if v.size == 0 and f in ("max", "min", "argmax", "argmin", "mean"):
            return
        ax = axes if axes is None or isinstance(axes, int) else tuple(axes)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if f in ("argmax", "argmin"):
                r = getattr(np, f)(v, axis=ax, keepdims=keep if axes is not None else False)
                keep = keep if axes is not None else False
            else:
                r = getattr(np, f)(v, axis=ax, keepdims=keep)
                if isf:
                    r = np.asarray(r).astype(v.dtype)
        t = self.ctx.reduce(f, e.t, axes, keep)
        n = v.size if axes is None else int(np.prod([v.shape[a] for a in np.atleast_1d(axes)]))
        scale = e.scale * max(n, 1) if f in ("sum",) else e.scale
        self.add(t, r, scale, "%s(%s, axes=%s, keepdims=%s)" % (f, self.ref(e), axes, keep))

    def op_matmul(self):
        e = self.pick(lambda e: e.v.ndim >= 1 and 0 < e.v.shape[-1] <= 8 and e.v.ndim <= 3)
        if e is None:
            return
        k = e.v.shape[-1]
        m = int(self.rng.choice([1, 2, 3, 5]))
        w = self.new_input((k, m), dt=e.t.dtype if e.t.dtype in FUZZ_DTS else None)
        if int(np.prod(e.v.shape[:-1])) * m > MAX_NUMEL:
            return
        with np.errstate(all="ignore"):
            r = np.matmul(e.v, w.v)
        self.add(self.ctx.matmul(e.t, w.t), r, e.scale * w.scale * k,
                 "matmul(%s, %s)" % (self.ref(e), self.ref(w)))

    def op_scan_softmax_take(self):
        e = self.pick(lambda e: e.v.ndim > 0 and e.v.size > 0)
        if e is None:
            return
        v, nd = e.v, e.v.ndim
        ax = int(self.rng.integers(-nd, nd))
        kind = self.rng.choice(["cumsum", "softmax", "take", "take"] if v.dtype.kind == "f"
                               else ["cumsum", "take"])
        if kind == "cumsum":
            with np.errstate(all="ignore"):
                r = np.cumsum(v, axis=ax)
            if v.dtype.kind == "f" and e.t.dtype != L.BF16:
                r = r.astype(v.dtype)
            self.add(self.ctx.cumsum(e.t, ax), r, e.scale * v.shape[ax],
                     "cumsum(%s, axis=%d)" % (self.ref(e), ax))
        elif kind == "softmax":
            with np.errstate(all="ignore"):
                x = v.astype(np.float64)
                ex = np.exp(x - x.max(axis=ax, keepdims=True))
                r = (ex / ex.sum(axis=ax, keepdims=True)).astype(v.dtype)
            self.add(self.ctx.softmax(e.t, ax), r, max(1.0, e.scale),
                     "softmax(%s, axis=%d)" % (self.ref(e), ax))
        else:
            n = v.shape[ax]
            ishape = self.rand_shape(int(self.rng.integers(0, 3)))
            if int(np.prod(ishape)) * v.size // max(n, 1) > MAX_NUMEL:
                return
            idx = self.new_index(ishape, n)
            wrapped = np.where(idx.v < 0, idx.v + n, idx.v)
            r = np.take(v, np.clip(wrapped, 0, n - 1), axis=ax)
            self.add(self.ctx.take(e.t, idx.t, ax), r, e.scale,
                     "take(%s, %s, axis=%d)" % (self.ref(e), self.ref(idx), ax))

    def new_index(self, shape, n):
        """An i64 index input with values in [-n-2, n+2) (negatives wrap, the rest clamp)."""
        name = "%sin%d" % (self.prefix, len(self.inputs))
        v = self.rng.integers(-n - 2, n + 2, size=shape).astype(np.int64)
        t = self.ctx.input(name, L.I64, shape)
        self.inputs[name] = v
        e = Entry(t, v, 1.0, "index input %s" % name)
        self.ids[id(e)] = len(self.ids)   # numbered, but kept out of the pool: not data
        self.log.append("%s = index input %s  # i64 %s" % (self.ref(e), name, shape))
        return e

    def op_cast(self):
        e = self.pick(lambda e: e.v.dtype.kind in "iu")
        if e is None:
            return
        dt = L.F64 if self.rng.random() < 0.5 else L.F32
        self.add(self.ctx.astype(e.t, dt), e.v.astype(L.value_dtype(dt)), e.scale,
                 "astype %s(%s)" % (L.DTYPE_NAMES[dt], self.ref(e)))

    def build(self):
        for _ in range(int(self.rng.integers(1, 3))):
            self.new_input(self.rand_shape())
        nops = int(self.rng.integers(3, 22))
        ops = [self.op_unary, self.op_binary, self.op_binary, self.op_movement, self.op_movement,
               self.op_reduce, self.op_matmul, self.op_cast, self.op_scan_softmax_take]
        w = np.array([3, 4, 4, 4, 4, 3, 1, 0.5 if self.is_int else 0, 1.5])
        for _ in range(nops):
            ops[self.rng.choice(len(ops), p=w / w.sum())]()
        outs = [self.pool[-1]]
        for _ in range(int(self.rng.integers(0, 3))):
            e = self.pick()
            if e not in outs:
                outs.append(e)
        return outs


def _compare(got, want, e, what, tol):
    if got.dtype.kind == "f" or np.asarray(want).dtype.kind == "f":
        assert_close(got, want, tol, tol * e.scale, what)
    else:
        assert_exact(got, want, what)


GROUP = int(os.environ.get("FRIT_FUZZ_GROUP", "4"))


@pytest.mark.parametrize("first", [pytest.param(SEED0 + i, id="seed_%d" % (SEED0 + i))
                                   for i in range(0, NPROG, GROUP)])
def test_fuzz_programs(first):
    """GROUP programs (seeds first .. first+GROUP-1) share one compile: the C compiler's start-up
    dominates the cost of small programs. Each is also run alone on the interpreter paths."""
    ctx = L.Ctx()
    progs = []
    for seed in range(first, min(first + GROUP, SEED0 + NPROG)):
        g = ProgramGen(seed, ctx)
        try:
            outs = g.build()
        except L.FritError as ex:
            raise AssertionError("seed %d: building failed: %s\n%s" % (seed, ex, "\n".join(g.log)))
        listing = "\n".join(g.log) + "\noutputs: " + ", ".join(g.ref(e) for e in outs)
        progs.append((seed, g, outs, listing))
    all_ts = [e.t for _, _, outs, _ in progs for e in outs]
    all_in = {k: v for _, g, _, _ in progs for k, v in g.inputs.items()}
    try:
        comp_all = evaluate(all_ts, all_in, "compiled")
    except Exception:  # noqa: BLE001 - find the program that fails, below
        comp_all = None
    k = 0
    for seed, g, outs, listing in progs:
        ts = [e.t for e in outs]
        try:
            ref = evaluate(ts, g.inputs, "reference")
            fused = evaluate(ts, g.inputs, "interp")
            comp = comp_all[k:k + len(ts)] if comp_all else evaluate(ts, g.inputs, "compiled")
        except Exception as ex:
            raise AssertionError("seed %d: %s\n%s" % (seed, ex, listing)) from ex
        k += len(ts)
        for i, e in enumerate(outs):
            what = "seed %d output %d (%s)\n%s" % (seed, i, g.ref(e), listing)
            mirror_dt = L.from_numpy_dtype(e.v.dtype)
            if not (e.t.dtype == L.BF16 and mirror_dt == L.F32):   # bf16 mirrors are float32
                assert L.DTYPE_NAMES[e.t.dtype] == L.DTYPE_NAMES[mirror_dt], \
                    "dtype differs from numpy: " + what
            t_ref, t_np = TOL.get(g.dt, TOL[L.F32])
            _compare(fused[i], ref[i], e, "fused interpreter vs reference: " + what, t_ref)
            _compare(comp[i], ref[i], e, "compiled vs reference: " + what, t_ref)
            _compare(ref[i], e.v, e, "reference vs numpy: " + what, t_np)
    if comp_all is None:
        raise AssertionError("seeds %d..%d: each program compiles alone but not together"
                             % (first, first + len(progs) - 1))
    ctx.close()
