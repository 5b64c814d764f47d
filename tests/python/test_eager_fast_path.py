"""The eager realisation fast path (frit._session.signature): a graph realised again with the same
builders, parameters, structure and leaf dtypes and shapes reuses its program without a replay.
Every case checks values against numpy, with the fast path hit (stats["hits"] counts it), so a
key that conflates two graphs shows as a wrong answer."""
import gc
import threading
import weakref

import numpy as np
import pytest

import frit
from threads_util import run_threads
from frit import _array as A, _ops as O, _session as S


def fa(v, dt=None):
    return frit.asarray(v, dtype=dt)


def _fast_hits(fun, reps=3):
    """Runs fun() reps times and returns (its last result, the fast path's hits in the last)."""
    for _ in range(reps - 1):
        fun()
    pc = S.current().pc
    h0, n0 = pc.stats["hits"], len(pc._fast)
    r = fun()
    return r, pc.stats["hits"] - h0, len(pc._fast) - n0


def test_repeated_graph_hits_and_reads_new_data():
    rng = np.random.default_rng(0)
    for k in range(20):
        x = rng.standard_normal(300).astype(np.float32)
        y = rng.standard_normal(300).astype(np.float32)
        got = (frit.exp(fa(x)) * fa(y) + 1).numpy()
        np.testing.assert_allclose(got, np.exp(x) * y + 1, rtol=1e-6, atol=1e-6)
    _, hits, new = _fast_hits(lambda: (frit.exp(fa(x)) * fa(y) + 1).numpy())
    assert hits == 1 and new == 0


def test_same_leaf_twice_is_not_two_leaves():
    a = np.arange(1, 301, dtype=np.float32)
    b = a[::-1].copy()
    for _ in range(3):
        np.testing.assert_array_equal((fa(a) - fa(b)).numpy(), a - b)
        x = fa(a)
        np.testing.assert_array_equal((x - x).numpy(), np.zeros_like(a))
        np.testing.assert_array_equal((fa(a) - fa(b)).numpy(), a - b)
    x = fa(a)
    r, hits, _ = _fast_hits(lambda: (x - x).numpy())
    assert hits == 1 and not r.any()
    # a leaf shared between two operands of different depth
    for _ in range(3):
        x, y = fa(a), fa(b)
        np.testing.assert_array_equal((x * 2 + y * x).numpy(), a * 2 + b * a)
        np.testing.assert_array_equal((x * 2 + y * y).numpy(), a * 2 + b * b)
        np.testing.assert_array_equal((y * 2 + x * y).numpy(), b * 2 + a * b)


def test_shapes_and_dtypes_are_part_of_the_key():
    for _ in range(3):
        for n in (5, 6, 300, 301):
            v = np.arange(n, dtype=np.float32) - 2.5
            np.testing.assert_array_equal((fa(v) * 2).numpy(), v * 2)
            np.testing.assert_array_equal((fa(v.astype(np.int32)) * 2).numpy(), v.astype(np.int32) * 2)
            np.testing.assert_array_equal((fa(v.astype(np.float64)) * 2).numpy(), v.astype(np.float64) * 2)
        m = np.arange(12, dtype=np.float32).reshape(3, 4)
        np.testing.assert_array_equal((fa(m) + fa(m[0])).numpy(), m + m[0])
        np.testing.assert_array_equal((fa(m) + fa(m[:, :1])).numpy(), m + m[:, :1])
        np.testing.assert_array_equal((fa(m.T.copy()) + fa(m[:, 0])).numpy(), m.T + m[:, 0])


def test_parameters_equal_in_python_are_different_keys():
    """0.0 == -0.0 in Python; as a builder's parameter they fill different values."""
    v = np.zeros(50, np.float32)
    code = frit.float32.code
    for _ in range(3):
        for c in (0.0, -0.0, 0.0):
            got = A.apply(O._b_full_like, [fa(v)], (c, code)).numpy()
            np.testing.assert_array_equal(np.signbit(got), np.signbit(np.full_like(v, c)))


@pytest.mark.parametrize("values", [(1, 1.0), (True, 1), (2.5, 2), (0.0, -0.0)])
def test_weak_scalars_of_equal_value(values):
    i = np.arange(50, dtype=np.int32)
    f = np.zeros(50, np.float32)
    for _ in range(3):
        for c in values:
            for x in (i, f):
                got, want = (fa(x) + c).numpy(), x + c
                np.testing.assert_array_equal(got, want)
                assert got.dtype == want.dtype, (c, got.dtype, want.dtype)
                assert (np.signbit(got) == np.signbit(want)).all(), c


def test_signature_taken_before_an_operand_was_realised():
    a = np.arange(40, dtype=np.float32)
    b = np.arange(40, dtype=np.float32) * 3
    for _ in range(3):
        c = fa(a) + fa(b)
        x = c * 2
        y = x + 1
        np.testing.assert_array_equal(y.numpy(), (a + b) * 2 + 1)   # x's signature taken here
        np.testing.assert_array_equal(c.numpy(), a + b)               # c concrete now
        np.testing.assert_array_equal(x.numpy(), (a + b) * 2)        # x: its old signature
        np.testing.assert_array_equal((c * 2).numpy(), (a + b) * 2)  # c a leaf
        np.testing.assert_array_equal((x - c).numpy(), a + b)


def test_in_place_write_between_building_and_realising():
    """An in-place write rebinds the Array: a lazy value built before reads the old data."""
    v = np.arange(10, dtype=np.float32)
    for _ in range(3):
        x = fa(v)
        y = x * 2
        x[3] = 100
        z = x * 2
        np.testing.assert_array_equal(y.numpy(), v * 2)
        w = v * 2
        w[3] = 200
        np.testing.assert_array_equal(z.numpy(), w)


def test_reductions_and_movement_through_the_fast_path():
    rng = np.random.default_rng(1)
    m = rng.standard_normal((7, 9)).astype(np.float32)
    for _ in range(3):
        np.testing.assert_allclose(frit.sum(fa(m), axis=1).numpy(), m.sum(axis=1), rtol=1e-5)
        np.testing.assert_allclose(frit.sum(fa(m), axis=0).numpy(), m.sum(axis=0), rtol=1e-5)
        np.testing.assert_allclose(frit.sum(fa(m)).numpy(), m.sum(), rtol=1e-5)
        np.testing.assert_array_equal(frit.transpose(fa(m)).numpy(), m.T)
        np.testing.assert_array_equal(fa(m)[1:5, ::2].numpy(), m[1:5, ::2])
        np.testing.assert_array_equal(fa(m)[::-1, 2:].numpy(), m[::-1, 2:])
        np.testing.assert_array_equal(frit.reshape(fa(m), (9, 7)).numpy(), m.reshape(9, 7))
        np.testing.assert_array_equal(frit.argmax(fa(m), axis=1).numpy(), m.argmax(axis=1))


def test_threads_share_no_fast_entries_wrongly():
    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(200):
            n = int(rng.integers(2, 40))
            x = rng.standard_normal(n).astype(np.float32)
            y = rng.standard_normal(n).astype(np.float32)
            np.testing.assert_allclose((fa(x) * fa(y) - fa(x)).numpy(), x * y - x, rtol=1e-6)
            np.testing.assert_allclose(frit.sum(fa(x) * fa(y)).numpy(), (x * y).sum(), rtol=1e-4,
                                       atol=1e-5)

    run_threads(work, 4)


def test_a_realised_value_does_not_keep_its_inputs_alive():
    """`x = x * 0.5 + 1` in a loop: each realised x must let the earlier ones go."""
    x = fa(np.ones(1000, np.float32))
    first = weakref.ref(x._n)
    for _ in range(50):
        x = x * 0.5 + 1
        x.numpy()
    gc.collect()
    assert first() is None
    np.testing.assert_allclose(x.numpy(), 2 - 0.5 ** 50, rtol=1e-6)


def test_an_operand_without_a_signature():
    """An operand whose parameters have no key: its graph replays, still right."""
    v = np.arange(20, dtype=np.float32)
    for _ in range(3):
        y = A.apply(O._b_binary, [fa(v), fa(v)], (np.int64(0),))  # a numpy integer: no key
        np.testing.assert_array_equal((y * 2).numpy(), (v + v) * 2)


def test_threads_realise_one_shared_lazy_array():
    """Threads realising the same lazy arrays at once (each in its own program cache): one may
    drop a node's leaves while another is about to run or remember its signature."""
    base = np.linspace(-1, 1, 35).reshape(5, 7)
    for rep in range(40):
        x = fa(base)
        made = [frit.tanh(x * (j + 1)) + j for j in range(6)]
        start = threading.Barrier(4)

        def work(tid):
            start.wait()
            for j, arr in enumerate(made):
                np.testing.assert_allclose((arr * tid).numpy(), (np.tanh(base * (j + 1)) + j) * tid,
                                           rtol=1e-12)
                np.testing.assert_allclose(arr.numpy(), np.tanh(base * (j + 1)) + j, rtol=1e-12)

        run_threads(work, 4)
