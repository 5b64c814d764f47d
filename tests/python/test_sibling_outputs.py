"""Sibling outputs (docs/schedule.md, rule 3): a jitted function returning several arrays computed
from shared inputs stores them from one kernel where the loops agree. Kernel counts are checked
together with values against numpy (compiled, interpreted, eager), so a count is never met by
computing something else."""
import numpy as np
import pytest

import frit


def nbody(xp, X, V, dt=0.01, eps=1e-4):
    dx = xp.expand_dims(X, 0) - xp.expand_dims(X, 1)
    d2 = (dx * dx).sum(axis=-1) + eps
    F = (dx / xp.expand_dims(d2 ** 1.5, -1)).sum(axis=1)
    V = V + F * dt
    return X + V * dt, V


CASES = {
    # name: (function of xp and arrays, input shapes at two sizes, kernels under jit at most)
    "nbody": (nbody, [[(40, 3), (40, 3)], [(57, 3), (57, 3)]], 2),
    "reduce_and_epilogues": (lambda xp, a: (a.sum(axis=1), a.sum(axis=1) * 2 - 1,
                                            xp.sqrt(a.sum(axis=1) ** 2 + 1)),
                             [[(9, 13)], [(17, 5)]], 1),
    "elementwise_siblings": (lambda xp, a, b: (a + b, (a + b) * b, xp.exp(a + b) - a),
                             [[(6, 7), (6, 7)], [(11, 4), (11, 4)]], 1),
    "broadcast_input_in_sibling": (lambda xp, a, c: ((a * 2).sum(axis=0), (a * 2).sum(axis=0) + c),
                                   [[(8, 5), (5,)], [(3, 9), (9,)]], 1),
    # outputs listed before their hosts, one reading another sibling (a chain): each output
    # is written exactly once
    "chained_siblings": (lambda xp, a: ((a.sum(axis=1) * 2) * 3 - 1, a.sum(axis=1) * 2,
                                        a.sum(axis=1)), [[(5, 8)], [(9, 4)]], 2),
    # the latest kernel b reads is a scan (no host): b must not run in the earlier flip's
    # kernel, before the scan is computed (found by the program fuzzer)
    "sibling_after_scan": (lambda xp, a: (xp.flip(a, 1) + xp.cumsum(a, axis=1), xp.flip(a, 1)),
                           [[(3, 6)], [(5, 4)]], 3),
    # a sibling reading its host at another index (transpose) or shape keeps its own kernel
    "transposed_not_sibling": (lambda xp, a: (xp.exp(a), xp.exp(a).T + 1), [[(4, 6)], [(7, 3)]], 2),
    # matmul keeps one store so the tiled codegen applies; the epilogue output is a second kernel
    # (and at symbolic sizes B's copy in column panels a third, tensor/linalg.c)
    "matmul_keeps_tiling": (lambda xp, a, b: (a @ b, (a @ b) * 2 + 1),
                            [[(12, 9), (9, 10)], [(7, 16), (16, 5)]], 3),
}


def _inputs(rng, shapes):
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("mode", ["compiled", "interp"])
def test_sibling_outputs_values_and_kernels(name, mode):
    fn, sizes, kmax = CASES[name]
    rng = np.random.default_rng(len(name))
    f = frit.jit(lambda *a: fn(frit, *a))
    f._sess = frit.Session(interpret=(mode == "interp"))  # the jitted function's own session
    for shapes in sizes:
        args = _inputs(rng, shapes)
        got = f(*args)
        want = fn(np, *[a.astype(np.float64) for a in args])
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), w, rtol=2e-4, atol=2e-4)
    assert len(f.lower(*args).kernels) <= kmax, f.lower(*args).kernels
    if mode == "interp":
        assert f._sess.opts.interpret


def test_nbody_static_is_one_kernel():
    rng = np.random.default_rng(0)
    X, V = _inputs(rng, [(64, 3), (64, 3)])
    f = frit.jit(lambda X, V: nbody(frit, X, V), dynamic=False)
    assert len(f.lower(X, V).kernels) == 1, f.lower(X, V).kernels
    for g, w in zip(f(X, V), nbody(np, X.astype(np.float64), V.astype(np.float64))):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-4, atol=1e-4)


def test_eager_realize_together():
    """frit.realize of several lazy arrays is one program: siblings share a kernel there too."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((10, 6)).astype(np.float32)
    x = frit.asarray(a)
    s = x.sum(axis=1)
    t = s * 3 + 1
    frit.realize(s, t)
    np.testing.assert_allclose(np.asarray(s), a.sum(axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(t), a.sum(axis=1) * 3 + 1, rtol=1e-5, atol=1e-5)
