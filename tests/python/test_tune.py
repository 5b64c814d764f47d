"""The autotuner (src/runtime/tune.c): every choice it can make renders a kernel that computes
numpy's result; a search writes its tuning to the cache, a later process uses it; a damaged
tuning file is ignored. Each case runs in a fresh process: the tuner's environment variables and
the cache directory are read when kernels are built."""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))

# Workloads with float64 numpy oracles: contractions the register tile takes (eager and jit, odd sizes, a
# batch, an epilogue, an in-place update, a conv, other dtypes), a static-shape program, and
# kernels it does not (reductions, elementwise) that the other choices still touch.
WORKLOADS = r"""
import json, sys
import numpy as np
import frit

rng = np.random.default_rng(0)
def r(*s, dt=np.float32):
    return rng.standard_normal(s).astype(dt)

out = {}
def check(name, got, want, tol):
    got = np.asarray(got, dtype=np.float64)
    err = float(np.max(np.abs(got - want) / (np.abs(want) + 1.0))) if want.size else 0.0
    out[name] = err <= tol
    if err > tol:
        print(name, "error", err, file=sys.stderr)

def twice(f, *args):
    f(*args)
    return f(*args)

a, b = r(67, 33), r(33, 48)
check("matmul_odd", twice(frit.jit(lambda x, y: x @ y), a, b), a.astype(np.float64) @ b, 1e-4)
check("matmul_eager", frit.asarray(a) @ frit.asarray(b), a.astype(np.float64) @ b, 1e-4)
a, b = r(130, 70), r(70, 96)
bias = r(96)
check("dense_relu", twice(frit.jit(lambda x, y, c: frit.maximum(x @ y + c, 0.0)), a, b, bias),
      np.maximum(a.astype(np.float64) @ b + bias, 0.0), 1e-4)
a, b = r(3, 37, 20), r(3, 20, 64)
check("batched", twice(frit.jit(lambda x, y: x @ y), a, b), a.astype(np.float64) @ b, 1e-4)
a, b = r(50, 40, dt=np.float64), r(40, 64, dt=np.float64)
check("matmul_f64", twice(frit.jit(lambda x, y: x @ y), a, b), a @ b, 1e-10)
ai = rng.integers(-50, 50, (45, 30)).astype(np.int32)
bi = rng.integers(-50, 50, (30, 64)).astype(np.int32)
check("matmul_i32", twice(frit.jit(lambda x, y: x @ y), ai, bi), ai.astype(np.float64) @ bi, 0)
a, b = r(64, 32), r(32, 64)
check("matmul_static", twice(frit.jit(lambda x, y: x @ y, dynamic=False), a, b), a.astype(np.float64) @ b, 1e-4)
# an in-place update: p - 0.1 * x @ y with p donated (written over while it is read)
p0, x, y = r(61, 48), r(61, 29), r(29, 48)
step = frit.jit(lambda p, x, y: p - 0.1 * (x @ y), donate_argnums=(0,))
p = p0.copy()
p = step(p, x, y)
p = step(p, x, y)
want = p0.astype(np.float64) - 0.2 * (x.astype(np.float64) @ y)
check("inplace_update", p, want, 1e-4)
xc, wc = r(2, 8, 14, 14), r(16, 8, 3, 3)
conv = frit.jit(lambda x, w: frit.conv2d(x, w, padding=1))
xp = np.pad(xc.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))  # n c h w kh kw
want = np.einsum("nchwij,ocij->nohw", win, wc.astype(np.float64))
check("conv2d", twice(conv, xc, wc), want, 1e-4)
s = r(300, 257)
check("softmax", twice(frit.jit(lambda v: frit.exp(v - v.max(axis=-1, keepdims=True)) /
                                 frit.exp(v - v.max(axis=-1, keepdims=True)).sum(axis=-1, keepdims=True)), s),
      np.exp(s - s.max(-1, keepdims=True)) / np.exp(s - s.max(-1, keepdims=True)).sum(-1, keepdims=True), 1e-5)
check("sum_rows", twice(frit.jit(lambda v: v.sum(axis=0)), s), s.astype(np.float64).sum(0), 1e-4)
e = r(1 << 16)
check("exp_chain", twice(frit.jit(lambda v: frit.exp(v * 0.5 + 1.0)), e), np.exp(e.astype(np.float64) * 0.5 + 1.0), 1e-6)
f = frit.jit(lambda x, y: x @ y)
a, b = r(64, 32), r(32, 64)
f(a, b)
out["_info"] = f.lower(frit.asarray(a), frit.asarray(b)).info
print(json.dumps(out))
"""


def run(env_extra, tmp_path, script=WORKLOADS):
    env = dict(os.environ)
    env.pop("FRIT_TUNE", None)
    env.pop("FRIT_TUNE_FORCE", None)
    env.update({"FRIT_CACHE_DIR": str(tmp_path / "cache"), "FRIT_SPECIALISE": "always"})
    env.update(env_extra)
    env["PYTHONPATH"] = os.pathsep.join(sys.path)   # conftest.py put the package on sys.path
    p = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1]), p.stderr


# each value a field can take, some together; "default" is the heuristics
CHOICES = ["default", "tile=-1", "rows=1", "rows=3 vecs=1", "rows=8 block=1", "rows=5 block=3 order=1", "vecs=2 block=64",
           "unroll=-1 regacc=-1", "rows=4 threads=1"]


@pytest.mark.parametrize("choice", CHOICES)
def test_every_choice_computes_numpys_result(choice, tmp_path):
    res, err = run({"FRIT_TUNE_FORCE": choice}, tmp_path)
    info = res.pop("_info")
    bad = [k for k, ok in res.items() if not ok]
    assert not bad, (bad, err[-2000:])
    assert f"forced: {choice}" in info, info


def test_search_writes_a_tuning_that_a_later_process_uses(tmp_path):
    script = r"""
import json, numpy as np, frit
rng = np.random.default_rng(1)
a = rng.standard_normal((192, 160)).astype(np.float32)
b = rng.standard_normal((160, 256)).astype(np.float32)
f = frit.jit(lambda x, y: frit.maximum(x @ y, 0.0))
f(a, b)
got = np.asarray(f(a, b))
want = np.maximum(a.astype(np.float64) @ b, 0.0)
print(json.dumps({"ok": bool(np.allclose(got, want, rtol=1e-4, atol=1e-3)),
                  "info": f.lower(frit.asarray(a), frit.asarray(b)).info}))
"""
    env = {"FRIT_TUNE": "1", "FRIT_TUNE_ROUNDS": "1", "FRIT_TUNE_BEAM": "1", "FRIT_TUNE_LOG": "1"}
    res, err = run(env, tmp_path, script)
    assert res["ok"]
    assert "tuned now:" in res["info"], res["info"]
    assert "frit tune: final:" in err or "frit tune:" in err
    tune = tmp_path / "cache" / "tune"
    files = sorted(tune.glob("*.txt"))
    assert files, "no tuning written"
    texts = [f.read_text() for f in files]
    assert all(t.startswith("choices: ") and "\nkernel: " in t and "\nmachine: " in t for t in texts), texts
    assert any("mul_sum" in t or "max" in t for t in texts), texts
    # a later process, tuning off: the stored choices are used, nothing is searched
    res2, err2 = run({}, tmp_path, script)
    assert res2["ok"]
    assert "tuned earlier:" in res2["info"], res2["info"]
    assert "frit tune:" not in err2
    # a damaged tuning is ignored: the heuristics run, the result is still right
    for f in files:
        f.write_text("choices: rows=banana\n")
    res3, _ = run({}, tmp_path, script)
    assert res3["ok"]
    assert "tuned" not in res3["info"], res3["info"]
