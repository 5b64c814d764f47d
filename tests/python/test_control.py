"""Explicit kernels from Python against numpy and plain-Python oracles: element reads/writes over
1-D/2-D/3-D index spaces for every dtype family, inner loops with break/continue, variables,
per-point if/else, atomics with duplicate indices, program order inside a kernel (RAW, WAR,
WAW), ordering across kernels, distinct Arrays with equal lazy values, symbolic shapes inside
frit.jit, the bounds modes, and errors. Each runs eagerly and under frit.jit."""
import numpy as np
import pytest

import frit
from frit import _lib as L

PATHS = ["eager", "interp", "jit", "jit_static"]


def run(path, f, *args):
    """f on numpy args: eagerly, eagerly in an interpreting session (the reference interpreter
    runs the kernels), or jitted with symbolic / static shapes; returns numpy results."""
    if path in ("eager", "interp"):
        sess = frit.Session(interpret=True) if path == "interp" else frit.current_session()
        with sess.as_current():
            out = f(*[frit.asarray(a) for a in args])
            out = tuple(np.asarray(o) for o in out) if isinstance(out, tuple) else np.asarray(out)
        return out
    out = frit.jit(f, dynamic=(path == "jit"))(*args)
    if isinstance(out, tuple):
        return tuple(np.asarray(o) for o in out)
    return np.asarray(out)


def _vals(rng, dt, shape):
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if np.dtype(dt).kind in "iu":
        return rng.integers(0, 50, size=shape).astype(dt)
    return rng.standard_normal(shape).astype(dt)


DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
          np.uint64, np.float16, np.float32, np.float64]


# ---------------------------------------------------------------- element reads and writes

@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 4)], ids=lambda s: "%dd" % len(s))
def test_kernel_elementwise_every_dtype(shape, dt):
    rng = np.random.default_rng(len(shape))
    a, b = _vals(rng, dt, shape), _vals(rng, dt, shape)

    def f(x, y):
        out = frit.zeros(shape, x.dtype)
        with frit.kernel(shape) as idx:
            u, v = x[idx], y[idx]
            if x.dtype == frit.bool:
                out[idx] = u ^ v
            else:
                out[idx] = u * v + u
        return out

    with np.errstate(all="ignore"):
        want = a ^ b if dt == np.bool_ else a * b + a
    for path in PATHS:
        got = run(path, f, a, b)
        assert got.dtype == want.dtype
        if np.dtype(dt).kind == "f":
            np.testing.assert_allclose(got, want, rtol=2e-3 if dt == np.float16 else 1e-6)
        else:
            assert np.array_equal(got, want), path


def test_kernel_bfloat16():
    rng = np.random.default_rng(0)
    a = L.round_bf16(rng.standard_normal(9).astype(np.float32))
    x = frit.asarray(a, frit.bfloat16)
    out = frit.zeros(9, frit.bfloat16)
    with frit.kernel(9) as i:
        out[i] = x[i] * 2
    assert np.array_equal(np.asarray(out), L.round_bf16(a * 2))


@pytest.mark.parametrize("path", PATHS)
def test_kernel_index_arithmetic_and_gathers(path):
    a = np.arange(24, dtype=np.float64).reshape(4, 6)

    def f(x):
        out = frit.zeros((4, 6), frit.float64)
        with frit.kernel((4, 6), name="gather") as (i, j):
            out[i, j] = x[3 - i, (j * 5) % 6] + i * 100 + j   # another point's element
        return out

    want = np.empty_like(a)
    for i in range(4):
        for j in range(6):
            want[i, j] = a[3 - i, (j * 5) % 6] + i * 100 + j
    assert np.array_equal(run(path, f, a), want)


@pytest.mark.parametrize("path", PATHS)
def test_kernel_math_on_scalars(path):
    a = np.linspace(-2, 2, 11).astype(np.float32)

    def f(x):
        out = frit.zeros_like(x)
        with frit.kernel(x) as (i,):
            v = x[i]
            s = frit.sqrt(frit.abs(v)) + frit.where(v > 0, v, -v * 2)
            out[i] = frit.minimum(s, 2.5).astype(frit.float64).astype(frit.float32)
        return out

    want = np.minimum(np.sqrt(np.abs(a)) + np.where(a > 0, a, -a * 2), 2.5).astype(np.float32)
    np.testing.assert_allclose(run(path, f, a), want, rtol=1e-6)


@pytest.mark.parametrize("path", PATHS)
def test_kernel_reads_tensor_level_values(path):
    """Lazy expressions and reductions (0-d values) mixed into a kernel."""
    a = np.arange(10, dtype=np.float64)

    def f(x):
        y = frit.exp(x * 0.1)          # lazy: fuses into the kernel
        s = x.sum()                    # a 0-d value used as a scalar
        out = frit.zeros_like(x)
        with frit.kernel(x) as (i,):
            out[i] = y[i] / s + x[0]
        return out

    np.testing.assert_allclose(run(path, f, a), np.exp(a * 0.1) / a.sum() + a[0], rtol=1e-12)


def test_rank0_kernel():
    x = frit.asarray(np.array(3.0))
    with frit.kernel(()) as idx:
        assert idx == ()
        x[()] = x[()] * 7
    assert float(x) == 21.0


# ---------------------------------------------------------------- loops, vars, if/else

@pytest.mark.parametrize("path", PATHS)
def test_inner_loop_break_continue_vars(path):
    """Per point i: walk k over [i, n) skipping multiples of 3, adding a[k]; stop once the sum
    exceeds limit[i]; record the sum and the number of terms."""
    rng = np.random.default_rng(3)
    n = 40
    a = rng.integers(1, 10, size=n).astype(np.int32)
    lim = rng.integers(0, 60, size=n).astype(np.int32)

    def f(x, limit):
        total = frit.zeros(n, frit.int32)
        count = frit.zeros(n, frit.int32)
        with frit.kernel(n) as i:
            acc = frit.var(0, frit.int32)
            cnt = frit.var(0, frit.int32)
            with frit.loop(i, n) as k:
                with frit.if_(k % 3 == 0):
                    frit.continue_()
                acc.set(acc + x[k])
                cnt += 1
                with frit.if_(acc > limit[i]):
                    frit.break_()
            total[i] = acc
            count[i] = cnt.get()
        return total, count

    wt, wc = np.zeros(n, np.int32), np.zeros(n, np.int32)
    for i in range(n):
        acc = cnt = 0
        for k in range(i, n):
            if k % 3 == 0:
                continue
            acc += a[k]
            cnt += 1
            if acc > lim[i]:
                break
        wt[i], wc[i] = acc, cnt
    gt, gc = run(path, f, a, lim)
    assert np.array_equal(gt, wt) and np.array_equal(gc, wc)


@pytest.mark.parametrize("path", PATHS)
def test_dynamic_trip_count_step_and_nested_loops(path):
    """Trip counts read from memory, negative steps, nested loops with vars."""
    cnt = np.array([0, 1, 5, 3, 7], np.int64)

    def f(c):
        out = frit.zeros(5, frit.int64)
        down = frit.zeros(5, frit.int64)
        with frit.kernel(5) as i:
            s = frit.var(0, frit.int64)
            with frit.loop(c[i]) as a:
                with frit.loop(0, a + 1, 2) as b:
                    s.set(s + a * 10 + b)
            out[i] = s
            d = frit.var(0, frit.int64)
            with frit.loop(c[i], -1, -2) as a:          # c[i], c[i]-2, ... > -1
                d.set(d * 3 + a)
            down[i] = d
        return out, down

    wo, wd = np.zeros(5, np.int64), np.zeros(5, np.int64)
    for i in range(5):
        wo[i] = sum(a * 10 + b for a in range(cnt[i]) for b in range(0, a + 1, 2))
        d = 0
        for a in range(cnt[i], -1, -2):
            d = d * 3 + a
        wd[i] = d
    go, gd = run(path, f, cnt)
    assert np.array_equal(go, wo) and np.array_equal(gd, wd)


@pytest.mark.parametrize("path", PATHS)
def test_per_point_if_else_and_collatz(path):
    x0 = np.arange(1, 30, dtype=np.int64)

    def f(x):
        steps = frit.zeros_like(x)
        kind = frit.zeros_like(x).astype(frit.int8)
        with frit.kernel(x) as (i,):
            v = frit.var(x[i])
            n = frit.var(0, frit.int64)
            with frit.loop(1000):
                with frit.if_(v == 1):
                    frit.break_()
                with frit.if_(v % 2 == 0):
                    v.set(v // 2)
                with frit.else_():
                    v.set(v * 3 + 1)
                n += 1
            steps[i] = n
            with frit.if_(x[i] % 3 == 0):
                kind[i] = 1
            with frit.else_():
                with frit.if_(x[i] % 3 == 1):
                    kind[i] = 2
                with frit.else_():
                    kind[i] = 3
        return steps, kind

    def collatz(v):
        n = 0
        while v != 1:
            v = v // 2 if v % 2 == 0 else 3 * v + 1
            n += 1
        return n

    gs, gk = run(path, f, x0)
    assert np.array_equal(gs, [collatz(int(v)) for v in x0])
    assert np.array_equal(gk, np.where(x0 % 3 == 0, 1, np.where(x0 % 3 == 1, 2, 3)))


# ---------------------------------------------------------------- atomics

@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("dt", [np.int32, np.uint8, np.int64, np.float32, np.float64])
def test_atomic_add_histogram(path, dt):
    rng = np.random.default_rng(4)
    b = rng.integers(0, 17, size=5000)

    def f(bins):
        h = frit.zeros(17, dt)
        with frit.kernel(bins) as (i,):
            frit.atomic_add(h, bins[i], 1)
        return h

    assert np.array_equal(run(path, f, b), np.bincount(b, minlength=17).astype(dt))


@pytest.mark.parametrize("path", PATHS)
def test_atomic_old_values_are_a_permutation(path):
    """Each point takes a ticket from one counter: the old values are exactly 0..n-1."""
    n = 3000

    def f():
        ctr = frit.zeros(1, frit.int32)
        tickets = frit.zeros(n, frit.int32)
        with frit.kernel(n) as i:
            tickets[i] = frit.atomic_add(ctr, 0, 1)
        return ctr, tickets

    c, t = run(path, f)
    assert c[0] == n and np.array_equal(np.sort(t), np.arange(n))


ATOMIC_UFUNC = {"min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
                "or": np.bitwise_or, "xor": np.bitwise_xor, "add": np.add}


@pytest.mark.parametrize("op", list(ATOMIC_UFUNC))
@pytest.mark.parametrize("dt", [np.int8, np.uint16, np.int32, np.uint64, np.bool_])
def test_atomics_with_duplicates(op, dt):
    rng = np.random.default_rng(5)
    idx = rng.integers(0, 8, size=400)
    v = _vals(rng, dt, 400)
    base = _vals(rng, dt, 8)
    h = frit.asarray(base)
    iv, vv = frit.asarray(idx), frit.asarray(v)
    with frit.kernel(400) as i:
        getattr(frit, "atomic_" + op)(h, iv[i], vv[i])
    want = base.copy()
    if dt == np.bool_ and op == "add":
        np.logical_or.at(want, idx, v)
    else:
        with np.errstate(all="ignore"):
            ATOMIC_UFUNC[op].at(want, idx, v)
    assert np.array_equal(np.asarray(h), want)


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64])
def test_float_atomic_min_max_and_add_exact(dt):
    rng = np.random.default_rng(6)
    idx = rng.integers(0, 5, size=2000)
    v = rng.standard_normal(2000).astype(dt)
    lo = frit.full(5, np.inf, dt)
    hi = frit.full(5, -np.inf, dt)
    s = frit.zeros(5, dt)
    iv, vv = frit.asarray(idx), frit.asarray(v)
    with frit.kernel(2000) as i:
        frit.atomic_min(lo, iv[i], vv[i])
        frit.atomic_max(hi, iv[i], vv[i])
        frit.atomic_add(s, iv[i], 0.5)          # exact in every order
    wl, wh = np.full(5, np.inf, dt), np.full(5, -np.inf, dt)
    np.minimum.at(wl, idx, v)
    np.maximum.at(wh, idx, v)
    assert np.array_equal(np.asarray(lo), wl) and np.array_equal(np.asarray(hi), wh)
    assert np.array_equal(np.asarray(s), (np.bincount(idx, minlength=5) * 0.5).astype(dt))


def test_atomic_exchange_and_tuple_index():
    g = frit.asarray(np.arange(12, dtype=np.int32).reshape(3, 4))
    old = frit.zeros((3, 4), frit.int32)
    with frit.kernel((3, 4)) as (i, j):
        old[i, j] = frit.atomic_exchange(g, (i, j), i * 4 + j + 100)
    assert np.array_equal(np.asarray(old), np.arange(12).reshape(3, 4))
    assert np.array_equal(np.asarray(g), np.arange(12).reshape(3, 4) + 100)


# ---------------------------------------------------------------- program order

@pytest.mark.parametrize("path", PATHS)
def test_order_within_a_kernel(path):
    a = np.arange(6, dtype=np.int32)

    def f(x):
        raw = frit.zeros(6, frit.int32)
        war = frit.zeros(6, frit.int32)
        waw = frit.zeros(6, frit.int32)
        with frit.kernel(6) as i:
            x[i] = x[i] + 10          # read then write
            raw[i] = x[i]             # read after write: the new value
            t = waw[i]                # read before the writes below: 0
            waw[i] = 1
            waw[i] = waw[i] + 5       # write after write, read in between
            war[i] = t
            x[i] = x[i] * 2           # RAW on the same element again
        return x, raw, war, waw

    gx, graw, gwar, gwaw = run(path, f, a)
    assert np.array_equal(graw, a + 10)
    assert np.array_equal(gx, (a + 10) * 2)
    assert np.array_equal(gwar, np.zeros(6)) and np.array_equal(gwaw, np.full(6, 6))


@pytest.mark.parametrize("path", PATHS)
def test_order_across_kernels(path):
    a = np.arange(8, dtype=np.float32)

    def f(x):
        before = x * 1                        # read before the kernels write x (WAR)
        with frit.kernel(8) as i:
            x[i] = x[i] + 1
        mid = x * 1                           # read between (RAW)
        y = x * 0
        with frit.kernel(8) as i:
            y[i] = x[7 - i] * 10              # reads other points' elements of the new version
        with frit.kernel(4) as i:
            y[i] = -1.0                       # WAW: the last write wins
        return before, mid, y

    b, m, x = run(path, f, a)
    want = ((a + 1)[::-1] * 10).copy()
    want[:4] = -1
    assert np.array_equal(b, a) and np.array_equal(m, a + 1) and np.array_equal(x, want)


@pytest.mark.parametrize("path", ["eager", "jit"])
def test_distinct_arrays_with_equal_lazy_values(path):
    """x * 0 twice is one hash-consed node: writes through one must not show in the other,
    even in the same kernel."""
    a = np.arange(5, dtype=np.float64)

    def f(x):
        p = x * 0                        # one hash-consed node for both
        q = x * 0
        r = q.copy()
        with frit.kernel(x) as (i,):
            p[i] = x[i] + 1
            q[i] = p[i] * 2 + q[i]       # q still 0 here
            r[i] = r[i] + q[i] + p[i]    # r is a copy of q from before the kernel: 0
        return p, q, r

    p, q, r = run(path, f, a)
    assert np.array_equal(p, a + 1) and np.array_equal(q, (a + 1) * 2)
    assert np.array_equal(r, (a + 1) * 3)


def test_kernel_writes_rebind_only_the_target():
    src = np.zeros(4)
    x = frit.asarray(src)
    keep = x.copy()
    with frit.kernel(4) as i:
        x[i] = i * 1.5
    assert np.array_equal(np.asarray(x), np.arange(4) * 1.5)
    assert not np.asarray(keep).any() and not src.any()


# ---------------------------------------------------------------- jit: symbolic shapes

def test_symbolic_shapes_one_trace():
    @frit.jit
    def f(x, y):
        out = frit.zeros_like(x)
        with frit.kernel(x) as (i, j):
            acc = frit.var(0.0, frit.float64)
            with frit.loop(j + 1) as k:
                acc += x[i, k]
            out[i, j] = acc + y[j]
        return out

    for shape in [(6, 8), (5, 9)]:
        x = np.random.default_rng(7).standard_normal(shape)
        y = np.arange(shape[1], dtype=np.float64)
        np.testing.assert_allclose(np.asarray(f(x, y)), np.cumsum(x, axis=1) + y, rtol=1e-12)
    assert f.trace_count == 1 and f.fallback_count == 0


def test_explicit_kernel_is_one_kernel():
    f = frit.jit(lambda x: _double(x))
    c = f.lower(np.zeros(100, np.float32))
    assert sum(1 for k in c.kernels if "twice" in k.name) == 1, [k.name for k in c.kernels]


def _double(x):
    with frit.kernel(x, name="twice") as (i,):
        x[i] = x[i] * 2
    return x


# ---------------------------------------------------------------- bounds

def _oob(x):
    out = frit.zeros_like(x)
    with frit.kernel(x, name="shift") as (i,):
        out[i] = x[i + 3]
    return out


def test_bounds_clamp_default_and_check():
    a = np.arange(6, dtype=np.int32)
    assert np.array_equal(np.asarray(frit.jit(_oob)(a)), np.minimum(np.arange(6) + 3, 5))
    assert np.array_equal(np.asarray(_oob(frit.asarray(a))), np.minimum(np.arange(6) + 3, 5))
    with pytest.raises(frit.FritError, match="out of range"):
        np.asarray(frit.jit(_oob, bounds="check")(a))
    ok = frit.jit(lambda x: _double(x), bounds="check")(a)
    assert np.array_equal(np.asarray(ok), a * 2)
    ok = frit.jit(lambda x: _double(x), bounds="unchecked")(a)
    assert np.array_equal(np.asarray(ok), a * 2)
    old = frit.get_bounds()
    try:
        frit.set_bounds("check")
        with pytest.raises(frit.FritError, match="out of range"):
            np.asarray(_oob(frit.asarray(a)))
    finally:
        frit.set_bounds(old)


# ---------------------------------------------------------------- errors

def test_python_control_flow_on_kernel_scalars_raises():
    x = frit.zeros(4)
    with frit.kernel(4) as i:
        v = x[i]
        for conv in (bool, float, int):
            with pytest.raises(frit.FritError, match="frit.if_"):
                conv(v > 0)
        with pytest.raises(frit.FritError, match="frit.if_"):
            if v:
                pass


def test_kernel_errors_name_the_operation():
    x = frit.zeros((3, 4))
    with pytest.raises(frit.FritError, match="element"):
        with frit.kernel(3) as i:
            x[i] = 1.0                        # one index for a 2-d array
    with pytest.raises(frit.FritError, match="element"):
        with frit.kernel(3) as i:
            x[i, 1.5]
    with pytest.raises(frit.FritError, match="frit.atomic_add"):
        frit.atomic_add(x, (0, 0), 1)
    with pytest.raises(frit.FritError, match="break"):
        with frit.kernel(3) as i:
            frit.break_()
    with pytest.raises(frit.FritError, match="frit.else_"):
        with frit.kernel(3) as i:
            with frit.else_():
                pass
    with pytest.raises(frit.FritError, match="nest"):
        with frit.kernel(3):
            with frit.kernel(3):
                pass
    with frit.kernel(3) as i:
        leaked = i * 2
    with pytest.raises(frit.FritError, match="only valid inside"):
        leaked + 1
    # after all these failures kernels still work
    y = frit.zeros(3)
    with frit.kernel(3) as i:
        y[i] = i
    assert np.asarray(y).tolist() == [0, 1, 2]


def test_tensor_level_writes_inside_a_kernel_are_errors():
    x = frit.zeros(4)
    with pytest.raises(frit.FritError, match="element store"):
        with frit.kernel(4) as i:
            x[1:3] = 1.0
    with pytest.raises(frit.FritError, match="element store"):
        with frit.kernel(4) as i:
            x[np.array([0, 1])] = 1.0
    with pytest.raises(frit.FritError, match="in-place update"):
        with frit.kernel(4) as i:
            x += 1
    with frit.kernel(4) as i:
        v = x[i]
        v += 1                     # a kernel scalar: only a new name for v + 1
        x[i] = v
    assert np.asarray(x).tolist() == [1, 1, 1, 1]
