"""The autotuner (src/runtime/tune.c, FRIT_TUNE=1) on the tensor workloads of bench/peers/workloads.py,
through the default path (`frit.jit` with default options). Per workload, each in a fresh process:
one run with FRIT_TUNE=1 on an empty cache (the search; its first call's time is `tuning_s`), then
the untuned default and the tuned program (its tunings read from that cache) measured alternately,
twice each, with numpy in this process as the peer. Prints {"bench": "tune_<workload>", "value":
tuned, "default_value": untuned, "unit", "peer": numpy, "peer_value", "choices": the stored
tunings, "torch_eager_value" for matmul, conv and softmax, ...}; bench/peers/merge.py adds "ratio"
(tuned over numpy, > 1: frit faster).
Usage: bench_tune.py [NAME...] (workloads whose name contains a NAME; default: all)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))
sys.path.insert(0, os.path.join(ROOT, "python"))

NAMES = ["matmul_1024", "conv2d_32x64x56", "softmax_4096", "reduce_sum_16m", "elementwise_chain8_exp",
         "elementwise_chain8", "nbody_4096"]


def child(name):
    """Measures frit's default jit on one workload under this process's environment."""
    from bench_frameworks import FritRun
    from workloads import BY_NAME
    m = FritRun(BY_NAME[name]).measure()
    print(json.dumps(m))


def run_child(name, env_extra):
    env = dict(os.environ)
    env.pop("FRIT_TUNE", None)
    env.update(env_extra)
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", name], env=env, capture_output=True,
                       text=True, timeout=3600)
    if p.returncode != 0:
        raise RuntimeError(p.stderr[-2000:])
    return json.loads(p.stdout.strip().splitlines()[-1])


def numpy_peer(name):
    """numpy on the float32 inputs, as a numpy user writes the workload."""
    import numpy as np
    from workloads import chain_np, nbody_np, softmax_np
    if name.startswith("matmul"):
        return lambda a, b: a @ b
    if name.startswith("conv"):
        def conv(x, w):  # im2col + one BLAS matmul, float32
            n, c, h, wd = x.shape
            o, _, kh, kw = w.shape
            win = np.lib.stride_tricks.sliding_window_view(np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))), (kh, kw),
                                                           axis=(2, 3))
            cols = win.transpose(0, 2, 3, 1, 4, 5).reshape(n * h * wd, c * kh * kw)
            return (cols @ w.reshape(o, -1).T).reshape(n, h, wd, o).transpose(0, 3, 1, 2)
        return conv
    if name.startswith("softmax"):
        return softmax_np
    if name.startswith("reduce"):
        return np.sum
    if name.startswith("elementwise"):
        return lambda x: chain_np(x, name.endswith("exp"))
    return nbody_np


def torch_peer(name, T):
    """torch eager (oneDNN conv, its BLAS matmul) on the same inputs and threads, or None."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(T)
    if name.startswith("matmul"):
        return lambda a, b: torch.from_numpy(a) @ torch.from_numpy(b)
    if name.startswith("conv"):
        return lambda x, w: torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w), padding=1)
    if name.startswith("softmax"):
        return lambda x: torch.softmax(torch.from_numpy(x), dim=-1)
    return None


def tunings(cache):
    d = os.path.join(cache, "tune")
    out = []
    for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        fields = dict(line.split(": ", 1) for line in open(os.path.join(d, f)).read().splitlines() if ": " in line)
        out.append(f"{fields.get('kernel')}: {fields.get('choices')} ({fields.get('default_ms')} -> "
                   f"{fields.get('tuned_ms')} ms)")
    return out


def main():
    if sys.argv[1:2] == ["--child"]:
        return child(sys.argv[2])
    if sys.argv[1:2] == ["--selects"]:
        sys.exit(0 if any(a in n for a in sys.argv[2:] for n in NAMES) else 1)
    args = [a for a in sys.argv[1:] if a not in ("tune", "bench_tune")]
    names = [n for n in NAMES if not args or any(a in n for a in args)]
    import numpy as np
    from workloads import BY_NAME, threads, timed
    from blas_info import blas_note
    T = threads()
    for name in names:
        w = BY_NAME[name]
        tmp = tempfile.mkdtemp(prefix="frit-bench-tune-")
        try:
            tuned_cache, plain_cache = os.path.join(tmp, "tuned"), os.path.join(tmp, "plain")
            search = run_child(name, {"FRIT_TUNE": "1", "FRIT_CACHE_DIR": tuned_cache})
            runs = {"default": [], "tuned": []}
            for _ in range(2):
                runs["default"].append(run_child(name, {"FRIT_CACHE_DIR": plain_cache}))
                runs["tuned"].append(run_child(name, {"FRIT_CACHE_DIR": tuned_cache}))
            ins = w.inputs()
            peer_med, _, _ = timed(lambda: numpy_peer(name)(*ins), lambda r: None)
            best = {k: min(r["median_s"] for r in v) for k, v in runs.items()}
            tp = torch_peer(name, T)
            torch_value = w.value(timed(lambda: tp(*ins), lambda r: None)[0]) if tp else None
            line = {"bench": f"tune_{name}", "value": w.value(best["tuned"]), "unit": w.unit,
                    "peer": "numpy",
                    "peer_value": w.value(peer_med),
                    "default_value": w.value(best["default"]), "torch_eager_value": torch_value,
                    "tuned_over_default": round(best["default"] / best["tuned"], 4),
                    "tuning_s": round(search["first_s"], 2),
                    "ok": all(r["ok"] for v in runs.values() for r in v) and search["ok"],
                    "threads": T, "path": "frit.jit default", "choices": tunings(tuned_cache),
                    "peer_note": blas_note() if name.startswith(("matmul", "conv")) else
                    "numpy, float32 (n-body: its float64 formulation)"}
            print(json.dumps(line), flush=True)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            print(json.dumps({"bench": f"tune_{name}", "value": None, "unit": w.unit, "peer": None,
                              "peer_value": None, "error": str(e)[-500:]}), flush=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
