"""Long chains of eager and jitted ops (deep graphs) are realised without a crash and match numpy."""
import numpy as np

import frit


def _chain(x, n):
    # alternating +1 and *1 ops: the value grows by one per pair, rounding-free in float32
    for i in range(n):
        x = x + 1 if i % 2 == 0 else x * 1
    return x


def test_eager_chain_of_100000_ops():
    a = np.arange(5, dtype=np.float32) - 2
    got = np.asarray(_chain(frit.asarray(a), 100_000))
    np.testing.assert_array_equal(got, a + 50_000)


def test_jit_chain_two_shapes():
    # 20,000 ops in one traced graph: the scheduler cuts it into kernels of bounded depth, so
    # that the C compiler's time stays linear in the chain
    f = frit.jit(lambda x: _chain(x, 20_000))
    for n in (5, 8):
        a = np.arange(n, dtype=np.float32) * 0.5
        np.testing.assert_array_equal(np.asarray(f(frit.asarray(a))), a + 10_000)


def test_jit_deep_chain_into_reduction():
    f = frit.jit(lambda x: _chain(x, 3_000).sum())
    for n in (4, 7):
        a = np.arange(n, dtype=np.float32)
        np.testing.assert_allclose(float(f(frit.asarray(a))), float((a + 1_500).sum()))
