"""Programs that the system C compiler once miscompiled, checked against numpy. gcc 12.2 -O3
vectorised a float sum over a reversed, completely unrolled inner loop (a flip under a reduction
with static shapes) into wrong code; frit's default flags turn complete peeling off
(--param=max-completely-peel-times=0, see src/codegen/codegen.h). Found by the program fuzzer."""
import numpy as np

import frit


def test_sum_over_flipped_concat_static_shapes():
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((7, 5, 1, 5)) * 3).astype(np.float32)

    def f(xp, x):
        c = xp.concatenate([x, -x], axis=3)
        fl = xp.flip(c, axis=(2, 3))
        return (fl + fl).mean(), c, fl.sum(axis=2)

    got = frit.jit(lambda x: f(frit, x), dynamic=False)(x)
    want = f(np, x.astype(np.float64))
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5, atol=1e-5)
