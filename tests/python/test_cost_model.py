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
