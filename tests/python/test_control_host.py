"""Host-level shader-like code against numpy: in-place a[idx] = v (rebinding), in-place scatters,
x += y, host if_/else_ selects, frit.var outside kernels, host loops (static and dynamic trip
counts, start/end/step, nesting, break/continue, kernels in the body, ordering across
iterations), frit.indices, the bounds settings, and the errors. Every test runs eagerly and
inside frit.jit (symbolic shapes)."""
import numpy as np
import pytest

import frit

PATHS = ["eager", "interp", "jit"]


def run(path, f, *args):
    """f(*frit arrays) eagerly (also in an interpreting session), or jitted (dynamic shapes);
    returns numpy results."""
    if path in ("eager", "interp"):
        sess = frit.Session(interpret=True) if path == "interp" else frit.current_session()
        with sess.as_current():
            out = f(*[frit.asarray(a) for a in args])
            out = tuple(np.asarray(o) for o in out) if isinstance(out, tuple) else np.asarray(out)
        return out
    out = frit.jit(f)(*args)
    if isinstance(out, tuple):
        return tuple(np.asarray(o) for o in out)
    return np.asarray(out)


# ---------------------------------------------------------------- a[idx] = v

SET_CASES = [
    (2, 7.0),
    (-1, 7.0),
    (slice(1, 4), 3.5),
    (slice(None, None, -2), np.arange(3.0)),
    ((Ellipsis,), -1.0),
    (np.array([4, 0, 4, 2]), np.array([1.0, 2.0, 3.0, 4.0])),   # duplicate 4: last wins
    (np.array([True, False, True, False, True]), 9.0),
]


@pytest.mark.parametrize("case", range(len(SET_CASES)))
@pytest.mark.parametrize("path", PATHS)
def test_setitem_1d(path, case):
    idx, v = SET_CASES[case]
    a = np.arange(5.0) * 10

    def f(x):
        x[idx] = v
        return x

    want = a.copy()
    want[idx] = v
    got = run(path, f, a)
    assert np.array_equal(got, want), (got, want)


@pytest.mark.parametrize("path", PATHS)
def test_setitem_2d_rows_columns_and_index_arrays(path):
    a = np.arange(12, dtype=np.int32).reshape(3, 4)

    def f(x):
        x[1] = -1                     # a row
        x[:, 2] = np.int32(100)       # a column
        x[np.array([0, 2]), np.array([3, 0])] = 7
        x[2, 1] += 5                  # read-modify-write of one element
        return x

    want = a.copy()
    want[1] = -1
    want[:, 2] = 100
    want[np.array([0, 2]), np.array([3, 0])] = 7
    want[2, 1] += 5
    assert np.array_equal(run(path, f, a), want)


@pytest.mark.parametrize("dt", [np.bool_, np.int8, np.uint16, np.int64, np.float16, np.float32,
                                np.float64])
def test_setitem_casts_values_like_numpy(dt):
    a = np.zeros(6, dt)
    x = frit.asarray(a)
    vals = np.array([1.75, -0.0, 3.0])
    x[np.array([0, 3, 5])] = vals
    want = a.copy()
    want[np.array([0, 3, 5])] = vals.astype(dt)
    assert np.array_equal(np.asarray(x), want)


def test_setitem_rebinds_only_that_array():
    src = np.arange(4.0)
    x = frit.asarray(src)
    y = x                   # the same Array object: sees the write, as a numpy alias would
    z = x.copy()            # a copy: does not
    w = x * 1               # a value computed before the write: does not
    x[0] = 42
    assert np.asarray(y)[0] == 42
    assert np.asarray(z)[0] == 0 and np.asarray(w)[0] == 0
    assert src[0] == 0      # the numpy array x was made from is untouched


def test_setitem_lazy_and_sequenced():
    x = frit.arange(6) * 2    # lazy
    x[1] = 0
    x[1] += 3                 # read after write
    x[x > 5] = -1             # a mask computed from the new version
    want = np.arange(6) * 2
    want[1] = 0
    want[1] += 3
    want[want > 5] = -1
    assert np.array_equal(np.asarray(x), want)


def test_inplace_operator_rebinds():
    src = np.ones(3, np.float32)
    x = frit.asarray(src)
    y = x
    x += 2
    x *= np.float32(3)
    assert np.array_equal(np.asarray(y), [9, 9, 9]) and np.asarray(y).dtype == np.float32
    assert src[0] == 1


# ---------------------------------------------------------------- in-place scatters

SCATTER = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
           "or": np.bitwise_or, "xor": np.bitwise_xor}


@pytest.mark.parametrize("mode", list(SCATTER) + ["set"])
@pytest.mark.parametrize("path", PATHS)
def test_scatter_inplace_with_duplicates(path, mode):
    rng = np.random.default_rng(1)
    a = rng.integers(0, 1000, size=16).astype(np.int32)
    idx = rng.integers(0, 16, size=40)          # many duplicates
    v = rng.integers(0, 1000, size=40).astype(np.int32)

    def f(x, vals):
        getattr(frit, "scatter_" + mode)(x, idx, vals)
        return x

    want = a.copy()
    if mode == "set":
        for j, p in enumerate(idx):
            want[p] = v[j]
    else:
        SCATTER[mode].at(want, idx, v)
    assert np.array_equal(run(path, f, a, v), want)


def test_scatter_inplace_histogram_float():
    rng = np.random.default_rng(2)
    b = rng.integers(0, 10, size=1000)
    h = frit.zeros(10, frit.float32)
    frit.scatter_add(h, b, 1.0)
    assert np.array_equal(np.asarray(h), np.bincount(b, minlength=10).astype(np.float32))


def test_scatter_inplace_errors():
    x = frit.zeros(4, frit.float32)
    with pytest.raises(frit.FritError, match="scatter"):
        frit.scatter_xor(x, np.array([0]), 1)
    with pytest.raises(frit.FritTypeError, match="scatter_add"):
        frit.scatter_add(np.zeros(3), np.array([0]), 1)


# ---------------------------------------------------------------- host if_ / else_

@pytest.mark.parametrize("flag", [False, True])
@pytest.mark.parametrize("path", PATHS)
def test_host_if_else_selects(path, flag):
    a = np.arange(5.0)
    t = np.array(2.0 if flag else 100.0)

    def f(x, thr):
        y = x * 1
        with frit.if_(x.sum() > thr):
            x[0] = -1.0
            y += 10
        with frit.else_():
            x[1] = -2.0
        return x, y

    want = a.copy()
    wy = a.copy()
    if a.sum() > t:
        want[0] = -1
        wy += 10
    else:
        want[1] = -2
    gx, gy = run(path, f, a, t)
    assert np.array_equal(gx, want) and np.array_equal(gy, wy)


@pytest.mark.parametrize("c1", [False, True])
@pytest.mark.parametrize("c2", [False, True])
def test_host_if_nested_and_var(c1, c2):
    x = frit.zeros(3, frit.int32)
    v = frit.var(0, frit.int32)
    with frit.if_(frit.asarray(c1)):
        x[0] = 1
        v.set(v + 1)
        with frit.if_(frit.asarray(c2)):
            x[1] = 2
            v += 10
        with frit.else_():
            x[2] = 3
    want = np.zeros(3, np.int32)
    wv = 0
    if c1:
        want[0] = 1
        wv += 1
        if c2:
            want[1] = 2
            wv += 10
        else:
            want[2] = 3
    assert np.array_equal(np.asarray(x), want)
    assert int(v.get()) == wv


def test_host_if_errors():
    with pytest.raises(frit.FritError, match="frit.if_.*0-d"):
        with frit.if_(frit.ones(3) > 0):
            pass
    with pytest.raises(frit.FritError, match="frit.else_"):
        with frit.else_():
            pass
    x = frit.zeros(2)
    with frit.if_(True):
        x[0] = 1
    x[1] = 2                        # something between: else_ no longer follows the if_
    with frit.if_(True):
        pass
    with pytest.raises(frit.FritError, match="frit.else_"):
        with frit.loop(1):
            with frit.else_():
                pass


# ---------------------------------------------------------------- frit.var on the host

def test_host_var_get_set_operand():
    v = frit.var(1.5, frit.float32)
    assert v.dtype == frit.float32 and v.shape == ()
    v.set(v * 2 + 1)
    assert float(v.get()) == 4.0
    v -= 1
    assert float(v) == 3.0
    assert np.asarray(frit.ones(2) + v).tolist() == [4.0, 4.0]
    assert float(2 ** v) == 8.0
    w = frit.Var(np.arange(3))                # n-d (frit.var(array) is the variance)
    w.set(5)                                  # broadcast
    assert np.asarray(w.get()).tolist() == [5, 5, 5]
    snap = w.get()
    w.set(w + 1)
    assert np.asarray(snap).tolist() == [5, 5, 5]
    u = frit.Var(np.arange(3), dtype=frit.float32)
    assert isinstance(u, frit.Var) and u.dtype == frit.float32
    # an array argument to frit.var always means the variance, dtype= or not
    assert float(frit.var(np.arange(4), dtype=frit.float64)) == np.var(np.arange(4), dtype=np.float64)
    # numpy's variance keeps its name
    assert float(frit.var(frit.asarray(np.arange(4.0)))) == np.var(np.arange(4.0))
    assert np.allclose(np.asarray(frit.var(frit.ones((2, 3)), axis=0)), 0)


# ---------------------------------------------------------------- frit.indices

@pytest.mark.parametrize("shape", [(4,), (2, 3), (2, 1, 3), ()])
def test_indices(shape):
    got = frit.indices(shape)
    want = np.indices(shape)
    assert len(got) == len(shape)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.int64 and np.array_equal(np.asarray(g), w)


def test_indices_of_symbolic_shape_in_jit():
    f = frit.jit(lambda x: tuple(i * 1 for i in frit.indices(x)))
    for shape in [(6, 5), (7, 9)]:
        got = f(np.zeros(shape))
        for g, w in zip(got, np.indices(shape)):
            assert np.array_equal(np.asarray(g), w)
    assert f.trace_count == 1 and f.fallback_count == 0


# ---------------------------------------------------------------- bounds settings

def test_bounds_settings():
    old = frit.get_bounds()
    try:
        frit.set_bounds("check")
        assert frit.get_bounds() == "check"
        frit.set_bounds("clamp")
        assert frit.get_bounds() == "clamp"
    finally:
        frit.set_bounds(old)
    with pytest.raises(frit.FritError, match="set_bounds"):
        frit.set_bounds("wrap")
    with pytest.raises(frit.FritError, match="bounds"):
        frit.jit(lambda x: x, bounds="nope")
    with pytest.raises(frit.FritError, match="bounds"):
        frit.Session(bounds="nope")


# ---------------------------------------------------------------- host loops

@pytest.mark.parametrize("path", PATHS)
def test_host_loop_static_trip_count(path):
    def f(x):
        acc = frit.var(0.0, frit.float64)
        with frit.loop(10) as i:
            acc.set(acc + i * x.sum())
            x[...] = x * 0.5
        return acc.get(), x

    a = np.arange(4.0)
    acc, x = 0.0, a.copy()
    for i in range(10):
        acc += i * x.sum()
        x = x * 0.5
    ga, gx = run(path, f, a)
    np.testing.assert_allclose(ga, acc, rtol=1e-12)
    np.testing.assert_allclose(gx, x, rtol=1e-12)


@pytest.mark.parametrize("start,end,step", [(0, 7, 1), (2, 11, 3), (10, 0, -1), (5, -6, -4),
                                            (3, 3, 1), (5, 2, 1), (0, 5, 10)])
@pytest.mark.parametrize("path", PATHS)
def test_host_loop_start_end_step(path, start, end, step):
    def f(x):
        with frit.loop(start, end, step) as i:
            x[...] = x * 3 + i
        return x

    x = np.array([1], np.int64)
    for i in range(start, end, step):
        x = x * 3 + i
    assert np.array_equal(run(path, f, np.array([1], np.int64)), x)


@pytest.mark.parametrize("path", PATHS)
def test_host_loop_dynamic_trip_count(path):
    """The trip count is computed by the program (a reduction), and one from a symbolic size."""
    def f(x, n):
        s = frit.var(0, frit.int64)
        with frit.loop(n.sum()) as i:
            s += i
        t = frit.var(0, frit.int64)
        with frit.loop(frit.asarray(1), x.sum().astype(frit.int64), 2) as i:
            t.set(t * 2 + i)
        return s.get(), t.get()

    for nv in [np.array([2, 3]), np.array([0, 0]), np.array([7, 1])]:
        x = np.arange(5)
        ws = sum(range(int(nv.sum())))
        wt = 0
        for i in range(1, int(x.sum()), 2):
            wt = wt * 2 + i
        gs, gt = run(path, f, x, nv)
        assert int(gs) == ws and int(gt) == wt


@pytest.mark.parametrize("path", PATHS)
def test_host_loop_nested_and_kernels_in_body(path):
    """Nested host loops whose bodies launch kernels; the inner trip count depends on the outer
    index. Each kernel reads what the previous iteration wrote (RAW across iterations)."""
    n = 16

    def f(x):
        y = x * 0
        with frit.loop(3) as a:
            with frit.loop(a + 1) as b:
                with frit.kernel(n) as i:               # reads x, writes y: no race
                    y[i] = x[(i + 1) % n] + a * 10 + b
                with frit.kernel(n) as i:
                    x[i] = y[i]
        return x

    x = np.arange(n, dtype=np.int64)
    for a in range(3):
        for b in range(a + 1):
            x = np.roll(x, -1) + a * 10 + b
    assert np.array_equal(run(path, f, np.arange(n, dtype=np.int64)), x)


@pytest.mark.parametrize("path", PATHS)
def test_host_loop_break_and_continue(path):
    def f(x):
        it = frit.var(0, frit.int64)
        with frit.loop(100) as i:
            with frit.if_(i % 3 == 1):
                frit.continue_()
            x[...] = x * 2
            with frit.if_(x.sum() > 1000):
                frit.break_()
            it.set(it + 1)               # after the break point: discarded when breaking
            x[0] = x[0] + 1
        return x, it.get()

    x = np.array([1, 2, 3], np.int64)
    it = 0
    for i in range(100):
        if i % 3 == 1:
            continue
        x = x * 2
        if x.sum() > 1000:
            break
        it += 1
        x[0] += 1
    gx, gi = run(path, f, np.array([1, 2, 3], np.int64))
    assert np.array_equal(gx, x) and int(gi) == it


@pytest.mark.parametrize("path", PATHS)
def test_host_loop_unconditional_break_and_zero_trip(path):
    def f(x):
        with frit.loop(5):
            x[...] = x + 1
            frit.break_()
            x[...] = x + 100
        with frit.loop(0):
            x[...] = x * 0
        return x

    assert np.array_equal(run(path, f, np.arange(3.0)), np.arange(3.0) + 1)


@pytest.mark.parametrize("path", PATHS)
def test_host_loop_order_across_iterations(path):
    """WAR and WAW across iterations: b snapshots a before a is written; c is written twice per
    iteration; d is only read (never carried) and keeps its value."""
    def f(a, d):
        b = a * 0
        c = a * 0
        with frit.loop(4) as i:
            b[...] = a                  # read a (the previous iteration's value)
            a[...] = a + d              # then write it
            c[...] = b + 1
            c[...] = c * 2 + i          # write after write
        return a, b, c, d

    a0, d0 = np.arange(3.0), np.array([1.0, 10.0, 100.0])
    a, b, c = a0.copy(), None, None
    for i in range(4):
        b = a.copy()
        a = a + d0
        c = (b + 1) * 2 + i
    ga, gb, gc, gd = run(path, f, a0, d0)
    assert np.array_equal(ga, a) and np.array_equal(gb, b) and np.array_equal(gc, c)
    assert np.array_equal(gd, d0)


def test_host_loop_body_values_and_snapshots():
    x = frit.asarray(np.arange(3.0))
    before = x.copy()
    ref = x                                  # the same Array: follows it
    with frit.loop(3) as i:
        y = x * 2                            # a body value
        x[...] = y + i
        tmp = frit.zeros(3)                  # made in the body: fresh each iteration
        tmp[0] = tmp[0] + 1
        x[...] = x + tmp
    want = np.arange(3.0)
    for i in range(3):
        want = want * 2 + i
        want[0] += 1
    assert np.array_equal(np.asarray(x), want) and np.array_equal(np.asarray(ref), want)
    assert np.array_equal(np.asarray(before), np.arange(3.0))
    with pytest.raises(frit.FritError, match="only valid in that body"):
        y + 1
    with pytest.raises(frit.FritError, match="frit.loop"):
        with frit.loop(2) as i:
            float(i)


def test_host_loop_eager_reuses_compiled_code():
    sess = frit.current_session()

    def step(x):
        with frit.loop(4) as i:
            x[...] = x + i
        return x

    np.asarray(step(frit.asarray(np.zeros(5))))
    c0 = sess.stats["cc"]
    got = np.asarray(step(frit.asarray(np.ones(7))))
    assert np.array_equal(got, np.ones(7) + 6)
    assert sess.stats["cc"] == c0


def test_host_loop_errors():
    with pytest.raises(frit.FritError, match="frit.break_"):
        frit.break_()
    with pytest.raises(frit.FritError, match="step"):
        frit.loop(0, 10, 0)
    with pytest.raises(frit.FritError, match="frit.loop"):
        frit.loop(frit.ones(3))
    x = frit.zeros(2)
    with pytest.raises(ZeroDivisionError):
        with frit.loop(3):
            x[0] = 1
            1 / 0
    assert np.asarray(x).tolist() == [0, 0]      # the failed loop left x as it was


# ---------------------------------------------------------------- kernels under host control flow

@pytest.mark.parametrize("path", PATHS)
def test_kernels_under_host_if_and_break(path):
    """Kernel writes inside a host if_ are selected; kernel writes after a break_ in the same
    iteration are discarded; a host var is read inside kernels."""
    n = 8

    def f(x, h):
        scale = frit.var(1.0, dtype=frit.float64)
        with frit.loop(20) as it:
            with frit.kernel(n) as i:
                x[i] = x[i] * scale + 1
            with frit.if_(it % 2 == 0):
                with frit.kernel(n) as i:
                    frit.atomic_add(h, (x[i] * 7).astype(frit.int64) % 5, 1)
            with frit.if_(x.max() > 50):
                frit.break_()
            scale.set(scale * 1.5)
            with frit.kernel(n) as i:
                x[i] = x[i] - 0.25
        return x, h, scale.get()

    x0 = np.linspace(0, 1, n)
    x, h, scale = x0.copy(), np.zeros(5, np.int64), 1.0
    for it in range(20):
        x = x * scale + 1
        if it % 2 == 0:
            np.add.at(h, (x * 7).astype(np.int64) % 5, 1)
        if x.max() > 50:
            break
        scale *= 1.5
        x = x - 0.25
    gx, gh, gs = run(path, f, x0, np.zeros(5, np.int64))
    np.testing.assert_allclose(gx, x, rtol=1e-12)
    assert np.array_equal(gh, h) and float(gs) == scale


def test_long_eager_chain_of_kernels(monkeypatch):
    """Kernel results count in the lazy chain length: a long eager chain is realised as it
    grows (MAX_CHAIN lowered to keep the test fast), with one program for the equal chunks."""
    from frit import _array
    monkeypatch.setattr(_array, "MAX_CHAIN", 16)
    sess = frit.current_session()
    x = frit.asarray(np.zeros(4, np.int64))
    r0, c0 = sess.stats["realize"], sess.stats["compiles"]
    for k in range(100):
        with frit.kernel(4) as i:
            x[i] = x[i] + i + k
    assert sess.stats["realize"] - r0 >= 5
    assert np.array_equal(np.asarray(x), np.arange(4) * 100 + sum(range(100)))
    assert sess.stats["compiles"] - c0 <= 3   # chunks differ only in the scalar k: inputs
