"""Training benchmarks (issue 11): training iterations per second, batch 128, for the MLP
784-256-10 and TensorFrost's Fashion-MNIST CNN at its configs c1-c2-d, each a frit compiled step
(frit.optim.compile_step, Adam) against PyTorch eager and torch.compile on the same model, data
and threads, measured in this process; and a simulation-parameter fit: the gradient of an
n-body-style loss through 100 steps of a (Python, unrolled) loop. JSON lines as bench/run
expects. mlp_donate: the MLP step with parameters and optimizer state donated (updated in place) against
the same step without donation, interleaved rounds in this process (the median of each).
The frit step and its peers run in FRIT_BENCH_ROUNDS (5) interleaved rounds of about a second
each; the medians are reported, and the note gives frit / torch eager round by round.
Usage: bench_train.py [NAME...] (mlp, cnn, nbody_fit, mlp_donate; FRIT_BENCH_CONFS=4-4-32,...)."""
import json
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "examples"))
import frit  # noqa: E402
import fashion_mnist as fm  # noqa: E402
from frit import nn, optim  # noqa: E402

CONFS = os.environ.get("FRIT_BENCH_CONFS", "4-4-32,4-8-64,8-16-64,8-16-128,8-32-128,16-64-256,16-128-512").split(",")
THREADS = int(os.environ.get("FRIT_THREADS", "0")) or os.cpu_count()
ROUNDS = int(os.environ.get("FRIT_BENCH_ROUNDS", "5"))
BATCH = 128

try:
    import torch
    torch.set_num_threads(THREADS)
    TORCH = "torch %s" % torch.__version__
except ImportError:
    torch = None
    TORCH = None


def its_per_s(step, n=None, warm=2, budget=3.0):
    for _ in range(warm):
        step()
    t0, k = time.perf_counter(), 0
    while True:
        step()
        k += 1
        dt = time.perf_counter() - t0
        if (n and k >= n) or (not n and dt > budget and k >= 3):
            return k / dt


def frit_step(model, x, y):
    step = optim.compile_step(model, nn.cross_entropy, optim.Adam(5e-4))
    return lambda: float(step(x, y))


def torch_model(kind, conf):
    tn = torch.nn
    if kind == "mlp":
        return tn.Sequential(tn.Flatten(), tn.Linear(784, 256), tn.ReLU(), tn.Linear(256, 10))
    c1, c2, d = conf
    return tn.Sequential(tn.Conv2d(1, c1, 5, padding=2), tn.MaxPool2d(2), tn.GELU(), tn.Conv2d(c1, c2, 5, padding=2), tn.MaxPool2d(2),
                         tn.GELU(), tn.Flatten(), tn.Linear(c2 * 49, d), tn.GELU(), tn.Linear(d, 10))


def torch_steps(kind, conf, x, y):
    """{peer name: step fn} for torch eager and torch.compile (when it works)."""
    if torch is None:
        return {}
    out = {}
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    for name in ("torch eager", "torch.compile"):
        m = torch_model(kind, conf)
        opt = torch.optim.Adam(m.parameters(), lr=5e-4)
        lossf = torch.nn.CrossEntropyLoss()

        def step(m=m, opt=opt):
            opt.zero_grad(set_to_none=True)
            loss = lossf(m(xt), yt)
            loss.backward()
            opt.step()
            return loss.item()
        if name == "torch.compile":
            try:
                step = torch.compile(step)
                step()
            except Exception as e:  # noqa: BLE001 - a peer that does not run is skipped with a note
                print("bench_train: torch.compile failed: %s" % str(e).splitlines()[0][:200], file=sys.stderr)
                continue
        out[name] = step
    return out


def emit(bench, value, unit, peers, note=""):
    rec = {"bench": bench, "value": round(value, 3), "unit": unit}
    if peers:
        for i, (pname, pval) in enumerate(peers.items()):
            key = "" if i == 0 else "_%d" % (i + 1)
            rec["peer" + key], rec["peer_value" + key] = pname, round(pval, 3)
    else:
        rec["peer"], rec["peer_value"] = "torch (not installed: pip install torch)", None
    if note:
        rec["peer_note"] = note
    print(json.dumps(rec), flush=True)


def bench_model(kind, conf=None):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, BATCH).astype(np.int64)
    frit.random.seed(0)
    model = fm.mlp() if kind == "mlp" else fm.cnn(*conf)
    steps = {"frit": frit_step(model, x, y)}
    steps.update(torch_steps(kind, conf, x, y))
    # rounds interleaved (frit, eager, compile, frit, ...), medians compared: this VM's speed
    # drifts by tens of percent over a minute, which back-to-back runs would charge to one side
    res = {name: [] for name in steps}
    for _ in range(ROUNDS):
        for name, fn in steps.items():
            res[name].append(its_per_s(fn, warm=1, budget=1.0))
    med = {name: float(np.median(v)) for name, v in res.items()}
    mine = med.pop("frit")
    ratios = [f / t for f, t in zip(res["frit"], res.get("torch eager", []))]
    label = "train_mlp" if kind == "mlp" else "train_cnn_%d-%d-%d" % conf
    note = "%d threads, batch %d, Adam; median of %d interleaved rounds" % (THREADS, BATCH, ROUNDS)
    if ratios:
        note += "; frit / torch eager per round %.2f-%.2f" % (min(ratios), max(ratios))
    emit(label, mine, "it/s", med, note)


def bench_donate(rounds=7, budget=1.0):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, BATCH).astype(np.int64)
    steps = {}
    for donate in (True, False):
        frit.random.seed(0)
        st = optim.compile_step(fm.mlp(), nn.cross_entropy, optim.Adam(5e-4), donate=donate)
        steps[donate] = lambda st=st: float(st(x, y))
        its_per_s(steps[donate], n=3)
    res = {True: [], False: []}
    for _ in range(rounds):
        for donate in (True, False):
            res[donate].append(its_per_s(steps[donate], warm=1, budget=budget))
    med = {k: float(np.median(v)) for k, v in res.items()}
    # what a step allocates, free of timing noise: minor page faults and numpy's traced bytes
    import resource
    import tracemalloc
    alloc = {}
    for donate in (True, False):
        n = 20
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        tracemalloc.start()
        for _ in range(n):
            steps[donate]()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        alloc[donate] = ((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / n, peak)
    emit("train_mlp_donated_step_faults", alloc[True][0], "page faults/step", {"frit, no donation": alloc[False][0]},
         "peak bytes traced over %d steps: donated %d, plain %d" % (20, alloc[True][1], alloc[False][1]))
    emit("train_mlp_donated", med[True], "it/s", {"frit, no donation": med[False]},
         "%d threads, batch %d, Adam; median of %d interleaved rounds (donated %.1f-%.1f, plain %.1f-%.1f)"
         % (THREADS, BATCH, rounds, min(res[True]), max(res[True]), min(res[False]), max(res[False])))


def nbody_fit():
    """d loss / d masses through 100 steps of a leapfrog n-body (N=64) in Python, traced by grad."""
    n, steps, dt = 64, 100, 0.01
    rng = np.random.default_rng(1)
    pos0 = rng.standard_normal((n, 3)).astype(np.float32)
    vel0 = np.zeros((n, 3), np.float32)
    target = rng.standard_normal((n, 3)).astype(np.float32)
    m0 = np.ones(n, np.float32)

    def sim(xp, mass):
        p, v = pos0, vel0
        for _ in range(steps):
            d = p[None, :, :] - p[:, None, :]
            r2 = xp.sum(d * d, axis=-1) + 0.01
            a = xp.sum(d * (mass[None, :] / (r2 * xp.sqrt(r2)))[:, :, None], axis=1)
            v = v + dt * a
            p = p + dt * v
        return xp.mean((p - target) ** 2)

    def sim_loop(mass):  # the same integrator as one frit.loop: its gradient is a reverse loop
        p, v = frit.asarray(pos0).copy(), frit.asarray(vel0).copy()
        with frit.loop(steps):
            d = p[None, :, :] - p[:, None, :]
            r2 = frit.sum(d * d, axis=-1) + 0.01
            a = frit.sum(d * (mass[None, :] / (r2 * frit.sqrt(r2)))[:, :, None], axis=1)
            v[...] = v + dt * a
            p[...] = p + dt * v
        return frit.mean((p - target) ** 2)

    g = frit.jit(frit.grad(lambda m: sim(frit, m)), dynamic=False)
    gl = frit.jit(frit.grad(sim_loop), dynamic=False)
    got, want = np.asarray(gl(m0)), np.asarray(g(m0))
    assert np.allclose(got, want, rtol=1e-3, atol=1e-6 * np.abs(want).max()), "loop gradient differs"
    mine = its_per_s(lambda: np.asarray(g(m0)))
    mine_loop = its_per_s(lambda: np.asarray(gl(m0)))
    fwd = frit.jit(sim_loop, dynamic=False)
    emit("nbody_fit_grad_100_steps_frit_loop", mine_loop, "it/s", {"frit unrolled": mine},
         "N=64, gradient w.r.t. the masses through frit.loop (default checkpoints); kernels: "
         "forward %d, forward+gradient %d (unrolled: %d)"
         % (len(fwd.lower(m0).kernels), len(gl.lower(m0).kernels), len(g.lower(m0).kernels)))
    peers = {}
    if torch is not None:
        mt = torch.from_numpy(m0)

        def tstep():
            m = mt.clone().requires_grad_(True)
            loss = sim_torch(m)
            loss.backward()
            return m.grad

        def sim_torch(mass):
            p, v = torch.from_numpy(pos0), torch.from_numpy(vel0)
            tg = torch.from_numpy(target)
            for _ in range(steps):
                d = p[None, :, :] - p[:, None, :]
                r2 = (d * d).sum(-1) + 0.01
                a = (d * (mass[None, :] / (r2 * torch.sqrt(r2)))[:, :, None]).sum(1)
                v = v + dt * a
                p = p + dt * v
            return ((p - tg) ** 2).mean()
        peers["torch eager"] = its_per_s(tstep)
    emit("nbody_fit_grad_100_steps", mine, "it/s", peers, "N=64, gradient w.r.t. the masses")


def main(names):
    if not names or "mlp" in names:
        bench_model("mlp")
    if not names or "cnn" in names:
        for c in CONFS:
            bench_model("cnn", tuple(int(v) for v in c.split("-")))
    if not names or "nbody_fit" in names:
        nbody_fit()
    if not names or "mlp_donate" in names:
        bench_donate()


if __name__ == "__main__":
    main(sys.argv[1:])
