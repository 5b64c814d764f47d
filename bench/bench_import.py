"""Imported models (frit.import_stablehlo) against the framework that wrote them: programs lowered
by jax, run by frit under the default frit.jit, and by jax.jit on the CPU in this same process.
Prints {"bench": "import_stablehlo_<name>", "value": frit ms, "unit": "ms", "peer": "jax.jit",
"peer_value": jax ms, "ratio": jax / frit (> 1: frit faster), "import_ms", "compile_ms"}.
Usage: bench_import.py [NAME...]."""
import json
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))


def workloads():
    import jax
    import jax.numpy as jnp
    from jax import lax
    rng = np.random.default_rng(0)

    def randn(*s):
        return rng.standard_normal(s).astype(np.float32)

    def mlp_loss(params, x, y):
        (w1, b1), (w2, b2) = params
        h = jax.nn.relu(x @ w1 + b1)
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(h @ w2 + b2) * jax.nn.one_hot(y, 10), axis=1))

    def cnn(w1, w2, wd, x):
        y = jax.nn.relu(lax.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW")))
        y = lax.reduce_window(y, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
        y = jax.nn.relu(lax.conv_general_dilated(y, w2, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW")))
        y = lax.reduce_window(y, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
        return jax.nn.log_softmax(y.reshape(y.shape[0], -1) @ wd)

    def nbody(pos, vel, mass):
        d = pos[None, :, :] - pos[:, None, :]
        r2 = jnp.sum(d * d, axis=-1) + 0.01
        acc = jnp.sum(d * (mass[None, :, None] * r2[..., None] ** -1.5), axis=1)
        vel = vel + 0.01 * acc
        return pos + 0.01 * vel, vel

    def layernorm_gelu(x, g, b):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return jax.nn.gelu((x - m) * lax.rsqrt(v + 1e-5) * g + b)

    params = [(randn(784, 256) * 0.05, randn(256) * 0.01), (randn(256, 10) * 0.05, randn(10) * 0.01)]
    return {
        "mlp_train_step": (jax.value_and_grad(mlp_loss), [params, randn(256, 784), rng.integers(0, 10, 256).astype(np.int32)]),
        "cnn_forward": (cnn, [randn(8, 1, 3, 3) * 0.3, randn(16, 8, 3, 3) * 0.1, randn(16 * 7 * 7, 10) * 0.05,
                              randn(64, 1, 28, 28)]),
        "nbody_2048": (nbody, [randn(2048, 3), randn(2048, 3) * 0.1, np.abs(randn(2048)) + 0.5]),
        "layernorm_gelu_4096x1024": (layernorm_gelu, [randn(4096, 1024), randn(1024), randn(1024)]),
    }


def block(x):
    if isinstance(x, (tuple, list)):
        for e in x:
            block(e)
    elif hasattr(x, "block_until_ready"):
        x.block_until_ready()
    else:
        np.asarray(x)


def timeit(fn, reps):
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        block(fn())
        ts.append(time.perf_counter() - t0)
    return ts


def main(names):
    import jax
    import frit
    for name, (f, args) in workloads().items():
        if names and not any(n in name for n in names):
            continue
        flat = jax.tree_util.tree_leaves(args)
        t0 = time.perf_counter()
        text = jax.jit(f).lower(*args).as_text()
        model = frit.import_stablehlo(text)
        import_ms = (time.perf_counter() - t0) * 1e3
        step = frit.jit(lambda *a: model(*a))
        jf = jax.jit(f)
        t0 = time.perf_counter()
        block(step(*flat))
        compile_ms = (time.perf_counter() - t0) * 1e3
        block(jf(*args))
        for a, b in zip(jax.tree_util.tree_leaves(jf(*args)), step(*flat) if len(model.outputs) > 1 else [step(*flat)]):
            np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=2e-3, atol=2e-3)
        fr, jx = [], []
        for _ in range(5):  # alternating rounds: both see the same machine
            fr += timeit(lambda: step(*flat), 4)
            jx += timeit(lambda: jf(*args), 4)
        fm, jm = float(np.median(fr)) * 1e3, float(np.median(jx)) * 1e3
        print(json.dumps({"bench": "import_stablehlo_" + name, "value": round(fm, 3), "unit": "ms",
                          "peer": "jax.jit", "peer_value": round(jm, 3), "ratio": round(jm / fm, 3),
                          "import_ms": round(import_ms, 1), "compile_ms": round(compile_ms, 1)}), flush=True)


if __name__ == "__main__":
    if "--selects" in sys.argv:
        sys.exit(1)
    main(sys.argv[1:])
