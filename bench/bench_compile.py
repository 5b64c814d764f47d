"""Compile time on the paths users take (issue 13, part 4): for a few typical programs, the
milliseconds of
- a cold compile (an empty kernel cache: frit's passes and the C compiler),
- a warm disk-cache hit (a new process, the same program: traced, scheduled and rendered, its .so
  loaded from the cache; after another small program has started the library),
- a warm in-process hit (frit.jit called again with new arrays of the same shapes: the call's
  overhead beyond running the kernels, measured on inputs small enough that running is ~free).
Each process is a fresh interpreter with FRIT_CACHE_DIR pointed at a temporary directory. The
peer is the limit the issue sets (1 ms in-process, 5 ms from disk). One JSON line per figure.
Usage: bench_compile.py [NAME...]"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROGRAMS = {
    "elementwise": "lambda x: frit.exp(frit.maximum(x * 1.5 + 0.25, 0.0))",
    "softmax": "lambda x: frit.nn.softmax(x, axis=-1)",
    "matmul_bias_relu": "lambda x: frit.maximum(x @ x.T + 1.0, 0.0)",
    "nbody": "lambda x: frit.sum((x[None] - x[:, None]) / (frit.sum((x[None] - x[:, None]) ** 2, -1, keepdims=True)"
             " + 1e-3) ** 1.5, axis=1)",
}

# one process: the first call (compile or disk hit) and then in-process hits
CHILD = r"""
import sys, time, json
import numpy as np
sys.path.insert(0, %(py)r)
import frit
frit.jit(lambda a: a - 1)(np.zeros(%(shape)r, np.float32))  # the library's own start (threads, first dlopen)
f = frit.jit(%(fn)s)
x = np.random.default_rng(0).random(%(shape)r, dtype=np.float32)
t0 = time.perf_counter(); f(x); first = time.perf_counter() - t0
hits = []
for i in range(200):
    y = np.random.default_rng(i).random(%(shape)r, dtype=np.float32)
    t0 = time.perf_counter(); f(y); hits.append(time.perf_counter() - t0)
hits.sort()
print(json.dumps({"first_ms": 1e3 * first, "hit_ms": 1e3 * hits[len(hits) // 2]}))
"""


def run_child(name, cache):
    shape = (3, 8) if name != "nbody" else (8, 3)
    src = CHILD % {"py": os.path.join(ROOT, "python"), "fn": PROGRAMS[name], "shape": shape}
    env = dict(os.environ, FRIT_CACHE_DIR=cache)
    out = subprocess.run([sys.executable, "-c", src], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(names):
    for name in PROGRAMS:
        if names and not any(n in name for n in names):
            continue
        with tempfile.TemporaryDirectory() as cache:
            cold = run_child(name, cache)
            warm = run_child(name, cache)
        for bench, value, peer, limit in (("compile_cold_" + name, cold["first_ms"], None, None),
                                          ("compile_disk_hit_" + name, warm["first_ms"], "limit 5 ms", 5.0),
                                          ("compile_inprocess_hit_" + name, warm["hit_ms"], "limit 1 ms", 1.0)):
            print(json.dumps({"bench": bench, "value": round(value, 3), "unit": "ms", "peer": peer,
                              "peer_value": limit}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
