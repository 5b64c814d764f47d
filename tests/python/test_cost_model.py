"""The scheduler's cost model on shapes where recomputation compounds (docs/schedule.md, rule
1b): each fused value may be recomputed at most 16 times per element in total, not 16 times per
edge. Values are checked against numpy, so a kernel count is never met by computing something
else."""
import numpy as np
import pytest

import frit


@pytest.mark.parametrize("dynamic", [False, True])
def test_chain_of_small_matmuls_does_not_compound(dynamic):
    rng = np.random.default_rng(0)
    ms = [rng.standard_normal((12, 12)).astype(np.float32) / 4 for _ in range(6)]

    def chain(xp, *m):
        r = m[0]
        for x in m[1:]:
            r = xp.tanh(r @ x)
        return r

    f = frit.jit(lambda *m: chain(frit, *m), dynamic=dynamic)
    np.testing.assert_allclose(np.asarray(f(*ms)), chain(np, *[m.astype(np.float64) for m in ms]),
                               rtol=1e-4, atol=1e-5)
    # fused into one kernel, the first product would be recomputed 12**4 times per element:
    # each of the first products is materialised, the last one may stay fused (factor 12 <= 16)
    assert len(f.lower(*ms).kernels) >= 4, f.lower(*ms).kernels


@pytest.mark.parametrize("dynamic", [False, True])
def test_a_transcendental_read_by_a_product_is_computed_once(dynamic):
    """realize.c COSTLY_READS: a GELU (an erf per element) read by the 10 columns of a dense
    layer's product was computed 10 times per element, in the forward and in both gradients."""
    from frit.nn import functional as F
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 48)).astype(np.float32)
    w1 = (rng.standard_normal((48, 32)) * 0.2).astype(np.float32)
    w2 = (rng.standard_normal((32, 10)) * 0.2).astype(np.float32)
    f = frit.jit(lambda x, w1, w2: frit.grad(lambda w1, w2: frit.sum(F.gelu(x @ w1) @ w2), argnums=(0, 1))(w1, w2),
                 dynamic=dynamic)
    g1, g2 = f(x, w1, w2)
    import math
    h = x.astype(np.float64) @ w1
    erf = np.vectorize(math.erf)(h / math.sqrt(2))
    gelu, dgelu = 0.5 * h * (1 + erf), 0.5 * (1 + erf) + h * np.exp(-h * h / 2) / math.sqrt(2 * math.pi)
    np.testing.assert_allclose(np.asarray(g2), gelu.T @ np.ones((64, 10)), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(g1), x.T.astype(np.float64) @ (np.ones((64, 10)) @ w2.T * dgelu),
                               rtol=1e-4, atol=1e-4)
    products = [k for k in f.lower(x, w1, w2).kernels if "sum" in k.ops]
    assert products and not any("erf" in k.ops for k in products), f.lower(x, w1, w2).kernels
