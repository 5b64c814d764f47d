"""A large program is compiled as several translation units at once (src/codegen/compile.c,
split_parts): the results are the one-unit build's, the cache holds one shared object under the
same name, and no part files are left behind. FRIT_CC_JOBS sets the number of parts' compilers."""
import os
import subprocess
import sys

import numpy as np

SCRIPT = r"""
import json, os, sys, numpy as np, frit
rng = np.random.default_rng(0)
xs = [rng.standard_normal((40, 30)).astype(np.float32) for _ in range(3)]

def f(a, b, c):
    # many kernels (each reduction realised): a program whose source is well over 24 KB a part
    outs = []
    for k in range(24):
        t = frit.tanh(a * (k + 1) + b) - frit.exp(c * 0.1 * k)
        outs.append(frit.sum(t, axis=k % 2) + frit.max(t * t))
    return outs

jf = frit.jit(f, dynamic=False)
got = [np.asarray(o) for o in jf(*xs)]
want = [np.asarray(o, dtype=np.float64) for o in f(*[frit.asarray(x) for x in xs])]
a, b, c = (x.astype(np.float64) for x in xs)
ref = []
for k in range(24):
    t = np.tanh(a * (k + 1) + b) - np.exp(c * 0.1 * k)
    ref.append(t.sum(axis=k % 2) + (t * t).max())
c_ = jf.lower(*xs)
print(json.dumps({"ok": all(np.allclose(g, r, rtol=1e-4, atol=1e-4) for g, r in zip(got, ref)),
                  "kernels": len(c_.kernels), "source": len(c_.source)}))
"""


def run(tmp_path, jobs):
    cache = tmp_path / ("cache%d" % jobs)
    env = dict(os.environ, FRIT_CACHE_DIR=str(cache), FRIT_CC_JOBS=str(jobs), PYTHONPATH=os.pathsep.join(sys.path))
    p = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    import json
    return json.loads(p.stdout.strip().splitlines()[-1]), sorted(os.listdir(cache))


def test_parts_build_the_same_program(tmp_path):
    one, files1 = run(tmp_path, 1)
    four, files4 = run(tmp_path, 4)
    assert one["ok"] and four["ok"]
    assert one["kernels"] >= 24 and one["source"] > 4 * 24 * 1024 // 2
    assert files1 == files4                           # same hashes: the parts are a build detail
    assert not [f for f in files4 if "part" in f or f.endswith(".o") or ".tmp." in f], files4


CPU_SCRIPT = r"""
import numpy as np, frit
x = np.arange(64, dtype=np.float32)
print(float(np.asarray(frit.jit(lambda a: frit.sum(a * 3 + 1))(x))))
"""


def test_cache_keeps_kernels_of_different_cpus_apart(tmp_path):
    """Kernels are compiled for the native CPU (-march=native): a cache directory shared by two
    machines (a home on NFS under mpirun across hosts) must not hand one machine's shared objects
    to the other, which could run AVX-512 code on an AVX2 CPU. The key hashes the CPU's model and
    flags (codegen/compile.c frit_cg_cpu_key); FRIT_CPU_KEY stands in for two machines here."""
    cache = tmp_path / "shared"

    def objects(key):
        env = dict(os.environ, FRIT_CACHE_DIR=str(cache), PYTHONPATH=os.pathsep.join(sys.path))
        env.pop("FRIT_CPU_KEY", None)
        if key:
            env["FRIT_CPU_KEY"] = key
        p = subprocess.run([sys.executable, "-c", CPU_SCRIPT], env=env, capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr[-3000:]
        assert float(p.stdout.split()[-1]) == float((np.arange(64) * 3 + 1).sum())
        return {n for n in os.listdir(cache) if n.endswith(".so")}

    a = objects("machine-a")
    assert objects("machine-a") == a            # the same CPU hits its own kernels
    b = objects("machine-b")
    assert a < b and len(b - a) == len(a)       # another CPU compiles its own, beside them
    assert objects(None) - b                    # and this machine's real key is neither
