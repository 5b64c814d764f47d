"""CNN step benchmark: one compiled training step (frit.optim.compile_step, Adam) of the Fashion-MNIST
CNN at conf 8-16-128, batch 128, and its convolutions on their own (the two forward 5x5 convs,
conv2's input gradient as the vjp the step runs and as the conv the rule falls back to, and the
two weight-gradient convs as the gradient rule forms them), in milliseconds, against PyTorch eager
(F.conv2d, torch.nn.grad, the same model's step) when torch imports; the peer is skipped with a
note otherwise. JSON lines as bench/run expects. Usage: bench_cnn_step.py [step|conv]
(FRIT_BENCH_CONF=c1-c2-d; FRIT_BENCH_TORCH_DEVICE=cuda puts the torch step on the GPU, =none skips it)."""
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

CONF = tuple(int(v) for v in os.environ.get("FRIT_BENCH_CONF", "8-16-128").split("-"))
THREADS = int(os.environ.get("FRIT_THREADS", "0")) or os.cpu_count()
BATCH = 128
# the step's peer on a GPU: FRIT_DEVICE=cuda FRIT_BENCH_TORCH_DEVICE=cuda
TORCH_DEVICE = os.environ.get("FRIT_BENCH_TORCH_DEVICE", "cpu")

try:
    import torch
    torch.set_num_threads(THREADS)
except ImportError:
    torch = None


def best_ms(fn, warm=2, budget=2.0, least=5):
    """The fastest of repeated calls (ms): the shared machine's noise only ever adds time."""
    for _ in range(warm):
        fn()
    best, t_end, k = float("inf"), time.perf_counter() + budget, 0
    while k < least or time.perf_counter() < t_end:
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
        k += 1
    return best * 1e3


def emit(bench, value, peer_value, note):
    rec = {"bench": bench, "value": round(value, 3), "unit": "ms"}
    if peer_value is None:
        rec["peer"], rec["peer_value"] = "torch eager (not installed)", None
    else:
        rec["peer"], rec["peer_value"] = "torch eager", round(peer_value, 3)
    rec["peer_note"] = note
    print(json.dumps(rec), flush=True)


def conv_cases(c1, c2):
    """(name, x shape, w shape, padding): the convs of one step, NCHW / OIHW."""
    return [
        ("conv1_fwd", (BATCH, 1, 28, 28), (c1, 1, 5, 5), 2),
        ("conv2_fwd", (BATCH, c1, 14, 14), (c2, c1, 5, 5), 2),
        # conv2's input gradient as a conv (the rule's fallback where col2im does not pay): g
        # (N, c2, 14, 14) padded by 4 - 2 against w flipped to (c1, c2, 5, 5)
        ("conv2_grad_x_as_conv", (BATCH, c2, 14, 14), (c1, c2, 5, 5), 2),
        # weight gradients: x as (C, N, H, W) against g as (O, N, OH, OW)
        ("conv1_grad_w", (1, BATCH, 28, 28), (c1, BATCH, 28, 28), 2),
        ("conv2_grad_w", (c1, BATCH, 14, 14), (c2, BATCH, 14, 14), 2),
    ]


def bench_grad_x(c1, c2):
    """conv2's input gradient as the step computes it: the vjp of conv2d w.r.t. x."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, c1, 14, 14)).astype(np.float32)
    w = rng.standard_normal((c2, c1, 5, 5)).astype(np.float32)
    g = rng.standard_normal((BATCH, c2, 14, 14)).astype(np.float32)
    f = frit.jit(lambda a, b, gg: frit.grad(lambda aa: frit.sum(frit.conv2d(aa, b, padding=2) * gg))(a),
                 dynamic=False)
    mine = best_ms(lambda: np.asarray(f(x, w, g)))
    peer = None
    if torch is not None:
        wt, gt = torch.from_numpy(w), torch.from_numpy(g)
        peer = best_ms(lambda: torch.nn.grad.conv2d_input(x.shape, wt, gt, padding=2))
    emit("cnn_conv2_vjp_x_%d-%d" % (c1, c2), mine, peer, "d/dx of conv2d(x %s, w %s), f32, %d threads" % (
        x.shape, w.shape, THREADS))


def bench_convs(c1, c2):
    bench_grad_x(c1, c2)
    rng = np.random.default_rng(0)
    for name, xs, ws, pad in conv_cases(c1, c2):
        x = rng.standard_normal(xs).astype(np.float32)
        w = rng.standard_normal(ws).astype(np.float32)
        f = frit.jit(lambda a, b, pad=pad: frit.conv2d(a, b, padding=pad), dynamic=False)
        mine = best_ms(lambda: np.asarray(f(x, w)))
        peer = None
        if torch is not None:
            xt, wt = torch.from_numpy(x), torch.from_numpy(w)
            with torch.no_grad():
                peer = best_ms(lambda: torch.nn.functional.conv2d(xt, wt, padding=pad))
        flop = 2.0 * np.prod(np.asarray(f(x, w)).shape) * ws[1] * ws[2] * ws[3]
        emit("cnn_%s_%d-%d" % (name, c1, c2), mine, peer, "x %s * w %s pad %d, f32, %d threads, %.1f GFLOP/s" % (
            xs, ws, pad, THREADS, flop / mine / 1e6))


def bench_step(conf):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, BATCH).astype(np.int64)
    frit.random.seed(0)
    step = optim.compile_step(fm.cnn(*conf), nn.cross_entropy, optim.Adam(5e-4))
    mine = best_ms(lambda: float(step(x, y)), budget=3.0)
    peer = None
    if torch is not None and TORCH_DEVICE != "none":
        tn = torch.nn
        c1, c2, d = conf
        m = tn.Sequential(tn.Conv2d(1, c1, 5, padding=2), tn.MaxPool2d(2), tn.GELU(), tn.Conv2d(c1, c2, 5, padding=2), tn.MaxPool2d(2),
                          tn.GELU(), tn.Flatten(), tn.Linear(c2 * 49, d), tn.GELU(), tn.Linear(d, 10))
        m = m.to(TORCH_DEVICE)
        opt = torch.optim.Adam(m.parameters(), lr=5e-4)
        lossf = tn.CrossEntropyLoss()
        xt, yt = torch.from_numpy(x).to(TORCH_DEVICE), torch.from_numpy(y).to(TORCH_DEVICE)

        def tstep():
            opt.zero_grad(set_to_none=True)
            loss = lossf(m(xt), yt)
            loss.backward()
            opt.step()
            return loss.item()
        peer = best_ms(tstep, budget=3.0)
    emit("cnn_step_%d-%d-%d" % conf, mine, peer, "compiled training step, Adam, batch %d, %d threads; frit on %s, "
         "torch on %s" % (BATCH, THREADS, os.environ.get("FRIT_DEVICE") or "cpu", TORCH_DEVICE))


def main(names):
    if not names or "step" in names:
        bench_step(CONF)
    if not names or "conv" in names:
        bench_convs(CONF[0], CONF[1])


if __name__ == "__main__":
    main(sys.argv[1:])
