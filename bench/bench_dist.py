"""Scaling over MPI ranks on this machine (docs/distributed.md): all-reduce latency and bandwidth,
the sharded heat equation (strong: one grid over 1, 2, 4 ranks; weak: a block a rank) and
data-parallel training steps, each against the one-rank run measured in the same invocation,
with the cost model's prediction next to each figure. Starts `mpirun -n P` itself (P = 1, 2, 4;
FRIT_DIST_RANKS="1 2"); prints JSON lines. This machine has 2 cores: 4 ranks share them."""
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "examples"))

SIZES = [8, 1 << 10, 1 << 14, 1 << 17, 1 << 20, 1 << 22, 1 << 24]  # bytes of the all-reduce


def timed(f, reps, *args):
    import numpy as np
    np.asarray(f(*args))
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(reps):
            out = f(*args)
        np.asarray(out)
        best = min(best, (time.perf_counter() - t) / reps)
    return best


def worker(kind):
    import frit
    import frit.distributed as dist
    dist.init()
    r, P = dist.rank(), dist.size()
    res = {}
    if kind == "allreduce":
        f = frit.jit(lambda v: dist.all_reduce(v, "sum"))
        for nb in SIZES:
            x = frit.asarray(np.ones(nb // 4, np.float32))
            dist.barrier()
            res[nb] = timed(f, 20 if nb < (1 << 20) else 5, x)
    elif kind == "heat":
        from heat_distributed import step_sharded, initial
        for mode, rows in (("strong", 2048), ("weak", 1024 * P)):
            u = dist.Sharded.from_global(frit.asarray(initial(rows, 2048, "float32")), 0).local
            step = frit.jit(step_sharded)
            dist.barrier()
            res[mode] = timed(step, 10, u)
    elif kind == "train_deep":  # 4 layers: the buckets of the last ones move while the first compute
        from frit import nn, optim
        if os.environ.get("BENCH_BUCKET_BYTES"):
            dist.BUCKET_BYTES = int(os.environ["BENCH_BUCKET_BYTES"])
        rng = np.random.default_rng(0)
        X = rng.standard_normal((512, 784)).astype(np.float32)
        Y = rng.integers(0, 10, 512).astype(np.int64)
        model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                              nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
        step = optim.compile_step(model, nn.functional.cross_entropy, optim.Adam(lr=1e-3))
        b = 512 // P
        x, y = X[r * b:(r + 1) * b], Y[r * b:(r + 1) * b]
        dist.barrier()
        res["step"] = timed(lambda: step(x, y), 10)
    elif kind in ("train", "train_parts"):
        from frit import nn, optim
        rng = np.random.default_rng(0)
        X = rng.standard_normal((512, 784)).astype(np.float32)
        Y = rng.integers(0, 10, 512).astype(np.int64)
        model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
        step = optim.compile_step(model, nn.functional.cross_entropy, optim.Adam(lr=1e-3))
        if kind == "train_parts":  # one rank's step at the batches the ranks get
            for b in (512, 256, 128):
                res["b%d" % b] = timed(lambda b=b: step(X[:b], Y[:b]), 10)
        else:
            b = 512 // P
            x, y = X[r * b:(r + 1) * b], Y[r * b:(r + 1) * b]
            dist.barrier()
            res["step"] = timed(lambda: step(x, y), 10)
    if r == 0:
        print("RESULT " + json.dumps(res), flush=True)
    dist.finalize()


def run(P, kind, threads=None, env=None):
    cmd = [shutil.which("mpirun"), "--oversubscribe", "-n", str(P)]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    threads = threads or max(1, (os.cpu_count() or 1) // P)
    env = dict(os.environ, FRIT_THREADS=str(threads), OMP_NUM_THREADS=str(threads), **(env or {}))
    out = subprocess.run(cmd + [sys.executable, os.path.abspath(__file__), "--worker", kind], env=env,
                         capture_output=True, text=True, timeout=1200)
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return {k: v for k, v in json.loads(line[7:]).items()}
    raise RuntimeError("bench_dist %s on %d ranks failed:\n%s\n%s" % (kind, P, out.stdout[-2000:], out.stderr[-2000:]))


def fit(times):
    """alpha (s) and beta (s/byte) of t = alpha + bytes * beta over the measured sizes."""
    n = np.array([float(k) for k in times])
    t = np.array([times[k] for k in times])
    beta, alpha = np.polyfit(n, t, 1)
    return max(alpha, float(t.min())), max(beta, 0.0)


def emit(**kw):
    print(json.dumps(kw), flush=True)


def main():
    if not shutil.which("mpirun"):
        print("bench_dist: no mpirun (make mpi-deps installs Open MPI); skipped", file=sys.stderr)
        return
    ranks = [int(p) for p in os.environ.get("FRIT_DIST_RANKS", "1 2 4").split()]
    ar = {P: run(P, "allreduce") for P in ranks if P > 1}
    heat = {P: run(P, "heat") for P in ranks}
    train = {P: run(P, "train") for P in ranks}
    parts = run(1, "train_parts")               # with every core: the model's terms at scale
    parts1 = run(1, "train_parts", threads=1)   # with one core: what a rank here computes
    # all-reduce: the measured time against the model's alpha + 2 (P-1)/P n beta, with alpha and
    # beta fitted at 2 ranks; the peer is the same bytes copied once (numpy), the memory's limit
    x = np.ones(1 << 22, np.float32)
    copy_s = timed(lambda: x.copy(), 20)
    alpha = beta = None
    for P, times in ar.items():
        times = {int(k): v for k, v in times.items()}
        if alpha is None:
            alpha, beta = fit({k: v / 1.0 for k, v in times.items()})
        for nb, s in times.items():
            model = alpha + 2 * (P - 1) / P * nb * beta
            emit(bench="dist_allreduce_%dB_%dranks" % (nb, P), value=round(s * 1e6, 2), unit="us",
                 peer="numpy copy of 16 MB (us, the memory's limit)", peer_value=round(copy_s * 1e6, 2),
                 model_us=round(model * 1e6, 2))
    emit(bench="dist_cost_model", value=round(alpha * 1e6, 3), unit="us latency (alpha)",
         peer="bytes per second (1/beta)", peer_value=round(1 / beta / 1e9, 3) if beta else None)
    cores = os.cpu_count() or 1
    t1 = heat[1]["strong"] if 1 in heat else None
    for P, h in heat.items():
        # the model: the one-rank time divided among the cores the ranks get (on one host, no more
        # than it has), plus the two halo rows a step (sendrecvs of 8 KB)
        model = (t1 / min(P, cores) + 2 * (alpha + 2048 * 4 * beta)) if t1 and alpha is not None and P > 1 else t1
        emit(bench="dist_heat_strong_2048x2048_%dranks" % P, value=round(h["strong"] * 1e3, 3), unit="ms/step",
             peer="1 rank", peer_value=round(t1 * 1e3, 3) if t1 else None,
             model_ms=round(model * 1e3, 3) if model else None)
        emit(bench="dist_heat_weak_1024x2048_per_rank_%dranks" % P, value=round(h["weak"] * 1e3, 3),
             unit="ms/step", peer="1 rank", peer_value=round(heat[1]["weak"] * 1e3, 3) if 1 in heat else None)
    s1 = train[1]["step"] if 1 in train else None
    nparams = 784 * 256 + 256 + 256 * 10 + 10
    # a step is a fixed part (the optimizer's update, launches) and a part in proportion to the
    # batch: one rank's steps at 512 and 256 samples give both (for ranks on machines of their own)
    per_sample = (parts["b512"] - parts["b256"]) / 256
    fixed = parts["b512"] - 512 * per_sample
    emit(bench="dist_train_model_terms", value=round(fixed * 1e3, 3), unit="ms fixed a step (F)",
         peer="us a sample (s)", peer_value=round(per_sample * 1e6, 3),
         one_core_ms={k: round(v * 1e3, 3) for k, v in parts1.items()})
    for P, t in train.items():
        # here the ranks share the cores: a rank computes its 512/P samples on one core (two ranks
        # to a core past 2), then the gradient all-reduce and the loss's
        here = parts1.get("b%d" % (512 // P), s1) * max(1, P / cores) if P > 1 else None
        model = (here + 2 * alpha + 2 * (P - 1) / P * nparams * 4 * beta) if here and alpha is not None else s1
        emit(bench="dist_train_mlp_batch512_%dranks" % P, value=round(1 / t["step"], 2), unit="steps/s",
             peer="1 rank", peer_value=round(1 / s1, 2) if s1 else None,
             model_steps_per_s=round(1 / model, 2) if model else None)

    # overlap: the 4-layer step on 2 ranks as it runs by default (1 MiB buckets, each exchanged on
    # the exchange thread while the backward pass goes on), without the exchange thread, and with
    # the design before buckets (one bucket after the whole backward pass); alternating, best of 3
    if 2 in ranks:
        variants = {"default": {}, "no_overlap": {"FRIT_DIST_OVERLAP": "0"},
                    "one_bucket": {"BENCH_BUCKET_BYTES": str(1 << 40), "FRIT_DIST_OVERLAP": "0"}}
        best = {v: float("inf") for v in variants}
        for _ in range(3):
            for v, e in variants.items():
                best[v] = min(best[v], run(2, "train_deep", env=e)["step"])
        one = run(1, "train_deep")["step"]
        emit(bench="dist_train_mlp4x512_batch512_2ranks", value=round(1 / best["default"], 2), unit="steps/s",
             peer="one bucket after the backward pass, no exchange thread", peer_value=round(1 / best["one_bucket"], 2),
             no_overlap_steps_per_s=round(1 / best["no_overlap"], 2), one_rank_steps_per_s=round(1 / one, 2))

    # the same model at 8 to 1024 ranks on separate machines: a network of NET_ALPHA latency and
    # NET_GBS bandwidth (assumed, stated in the output), and frit's own cost a collective (the
    # check's small all-reduce doubles the latency terms)
    if t1 and s1:
        net_alpha, net_beta = 5e-6, 1 / 12.5e9
        for P in (8, 16, 64, 256, 1024):
            lg = max(1, int(np.ceil(np.log2(P))))
            ar = lambda n: 2 * lg * net_alpha * 2 + 2 * (P - 1) / P * n * net_beta
            heat_s = t1 / P + 2 * (2 * net_alpha + 2048 * 4 * net_beta)
            heat_w = heat[1]["weak"] + 2 * (2 * net_alpha + 2048 * 4 * net_beta)
            step = fixed + 512 / P * per_sample + ar(nparams * 4) + ar(4)
            emit(bench="dist_model_%dranks" % P, value=round(heat_s * 1e3, 4), unit="ms/step heat strong (predicted)",
                 peer="1 rank, measured", peer_value=round(t1 * 1e3, 3),
                 heat_weak_ms=round(heat_w * 1e3, 4),
                 train_steps_per_s=round(1 / step, 1) if P <= 512 else None,  # a sample a rank at most
                 assumed="network 5 us latency, 12.5 GB/s; compute divides by P")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        worker(sys.argv[2])
    else:
        main()
