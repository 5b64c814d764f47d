"""frit from several Python threads at once: each thread eager ops and its own jitted functions,
jitted functions shared by every thread, lazy arrays handed between threads. numpy is the
oracle; ctypes releases the GIL in C, so the threads really are inside libfrit together."""
import threading

import numpy as np
import pytest

import frit
from frit import _session as S
from threads_util import run_threads

NTHREADS = 6
NOPS = 120


def _run_threads(target, n=NTHREADS):
    run_threads(target, n)


def _close(got, want):
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


# shared by every thread: called at once with different shapes
_shared_ew = frit.jit(lambda a, b: a * b - 0.25)
_shared_mm = frit.jit(lambda a, b: frit.sum(a @ b, axis=0))


def _mixed(tid):
    rng = np.random.default_rng(1000 + tid)
    own_ew = frit.jit(lambda a, c: frit.exp(a * 0.1) + c)
    own_red = frit.jit(lambda a: frit.max(a, axis=-1) - frit.mean(a, axis=-1))
    own_mm = frit.jit(lambda a, b: a @ b)
    for i in range(NOPS):
        n, m, k = (int(v) for v in rng.integers(2, 24, size=3))
        a = rng.standard_normal((n, m))
        b = rng.standard_normal((n, m))
        c = rng.standard_normal((m, k))
        op = i % 8
        if op == 0:
            _close(own_ew(a, 1.5), np.exp(a * 0.1) + 1.5)
        elif op == 1:
            _close(own_red(a), a.max(-1) - a.mean(-1))
        elif op == 2:
            _close(own_mm(a, c), a @ c)
        elif op == 3:
            _close(_shared_ew(a, b), a * b - 0.25)
        elif op == 4:
            _close(_shared_mm(a, c), (a @ c).sum(0))
        elif op == 5:  # eager, with a Python constant per op
            x, y = frit.asarray(a), frit.asarray(b)
            _close(frit.sqrt(x * x + y * y) * float(i), np.sqrt(a * a + b * b) * float(i))
        elif op == 6:  # eager matmul and reduction
            x = frit.asarray(a)
            _close(frit.max(x @ frit.asarray(c), axis=0), (a @ c).max(0))
        else:  # eager integer ops and a cast
            ia = (a * 10).astype(np.int32)
            x = frit.asarray(ia)
            _close((x // 3 + tid).astype(frit.float64), (ia // 3 + tid).astype(np.float64))


def test_threads_mixed_eager_and_jit():
    _run_threads(_mixed)


def test_each_thread_has_its_own_session():
    seen = {}

    def body(tid):
        s = S.current()
        x = frit.asarray(np.arange(5.0)) + tid  # lazy in this thread's session
        assert x._n.sess is s
        seen[tid] = s
        _close(x, np.arange(5.0) + tid)

    _run_threads(body, 4)
    assert len({id(s) for s in seen.values()}) == 4
    assert all(s is not S.current() for s in seen.values())


def test_lazy_arrays_cross_threads():
    """A lazy array made in one thread is used in others while its maker keeps working: the
    other threads replay it in their own sessions, never touching the maker's ctx."""
    base = np.linspace(-1, 1, 35).reshape(5, 7)
    made = []
    ready = threading.Event()

    def body(tid):
        if tid == 0:
            x = frit.asarray(base)
            for j in range(4):
                made.append((j, frit.tanh(x * (j + 1)) + j))  # lazy
            ready.set()
            for j in range(60):  # keeps building in its own session meanwhile
                _close(frit.exp(x) * j, np.exp(base) * j)
        else:
            ready.wait()
            for j, arr in made:
                _close(arr * tid, (np.tanh(base * (j + 1)) + j) * tid)

    _run_threads(body, 4)


def test_one_jitted_function_many_threads_same_signature():
    f = frit.jit(lambda a: frit.cumsum(a, axis=0) * 2.0)
    data = [np.random.default_rng(t).standard_normal((9, 4)) for t in range(NTHREADS)]

    def body(tid):
        for _ in range(40):
            _close(f(data[tid]), np.cumsum(data[tid], axis=0) * 2.0)

    _run_threads(body)
    assert f.trace_count == 1


def test_new_session_is_per_thread():
    main = S.current()

    def body(tid):
        s = frit.new_session()
        assert S.current() is s and s is not main
        _close(frit.asarray(np.ones(3)) * tid, np.ones(3) * tid)

    _run_threads(body, 3)
    assert S.current() is main


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_threads_dtypes(dtype):
    def body(tid):
        rng = np.random.default_rng(tid)
        for i in range(30):
            a = (rng.standard_normal((4 + i % 5, 3)) * 10).astype(dtype)
            want = (a * 2 + 1).sum(axis=1)
            got = np.asarray(frit.sum(frit.asarray(a) * 2 + 1, axis=1))
            if dtype is np.float32:
                np.testing.assert_allclose(got, want, rtol=1e-5)
            else:
                assert got.dtype == want.dtype and np.array_equal(got, want)

    _run_threads(body, 4)


def test_scopes_are_per_thread():
    """One thread inside a host-loop body and a kernel while others do eager ops: the scopes
    (which record the ops made in them) belong to the thread that opened them."""
    inside = threading.Event()
    done = threading.Event()

    def body(tid):
        if tid == 0:
            x = frit.asarray(np.ones(4))
            with frit.loop(5) as i:
                inside.set()
                done.wait(10)  # the other threads work while this body is open
                x[...] = x * 2 + i
            _close(x, np.full(4, ((((1 * 2 + 0) * 2 + 1) * 2 + 2) * 2 + 3) * 2 + 4.0))
            y = frit.zeros(6)
            with frit.kernel(6) as k:
                y[k] = k * 3
            _close(y, np.arange(6.0) * 3)
        else:
            inside.wait(10)
            for j in range(20):
                a = np.arange(6.0) + j
                _close(frit.asarray(a) * tid + 1, a * tid + 1)
            if tid == 1:
                done.set()

    _run_threads(body, 3)


def test_random_draws_are_distinct_across_threads():
    """The global generator hands every draw its own key, whichever thread asks (a draw is
    its key: the keys are checked directly, since every eager draw compiles a program)."""
    frit.random.seed(5)
    gen = frit.random._global
    keys = {}

    def body(tid):
        keys[tid] = [gen._key() for _ in range(20000)]

    _run_threads(body, 4)
    flat = [k for v in keys.values() for k in v]
    assert len(set(flat)) == len(flat) == 80000
    a, b = frit.random.random(3, dtype=frit.float64), frit.random.random(3, dtype=frit.float64)
    assert not np.array_equal(np.asarray(a), np.asarray(b))
