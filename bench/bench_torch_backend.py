"""frit.torch benchmark: forward passes (inference, no_grad) and an MLP training step of small
models under torch.compile(backend="frit") against PyTorch eager and torch.compile (inductor) on
CPU, same threads, measured in this process. JSON lines as bench/run expects: value is frit's ms per
call, peer/peer_value eager, peer_2/peer_value_2 inductor, and the ratios (peer ms / frit ms: above
1 means frit is faster). Usage: bench_torch_backend.py [NAME...] (mlp, cnn, transformer, mlp_train)."""
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

try:
    import torch
except ImportError:
    print(json.dumps({"bench": "torch_backend", "value": None, "unit": "ms",
                      "peer": "torch (not installed: pip install torch)", "peer_value": None}))
    sys.exit(0)
import frit.torch  # noqa: E402,F401  (registers backend="frit")

THREADS = int(os.environ.get("FRIT_THREADS", "0")) or os.cpu_count()
torch.set_num_threads(THREADS)
nn = torch.nn


def best_ms(fn, budget=2.0, least=5):
    for _ in range(3):
        fn()
    best, k, t_end = float("inf"), 0, time.perf_counter() + budget
    while k < least or time.perf_counter() < t_end:
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
        k += 1
    return best * 1e3


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16)
        self.c2, self.b2 = nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32)
        self.fc = nn.Linear(32 * 16 * 16, 10)

    def forward(self, x):
        x = torch.relu(self.b1(self.c1(x)))
        x = torch.relu(self.b2(self.c2(x)))
        return self.fc(x.flatten(1))


def models():
    torch.manual_seed(0)
    return {
        "mlp": (nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.GELU(),
                              nn.Linear(256, 10)).eval(), (torch.randn(128, 784),)),
        "cnn": (CNN().eval(), (torch.randn(16, 3, 32, 32),)),
        "transformer": (nn.TransformerEncoderLayer(64, 4, 256, dropout=0.0, batch_first=True).eval(),
                        (torch.randn(8, 32, 64),)),
    }


def emit(bench, frit_ms, eager_ms, ind_ms, note):
    rec = {"bench": bench, "value": round(frit_ms, 4), "unit": "ms",
           "peer": "torch eager", "peer_value": round(eager_ms, 4),
           "peer_2": "torch.compile inductor", "peer_value_2": round(ind_ms, 4),
           "ratio_vs_eager": round(eager_ms / frit_ms, 3),
           "ratio_vs_inductor": round(ind_ms / frit_ms, 3), "peer_note": note}
    print(json.dumps(rec), flush=True)


def bench_forward(name, model, args):
    # the transformer layer's fused inference fast path (one opaque op) would leave nothing to
    # compile: all three run it as the decomposed ops
    torch.backends.mha.set_fastpath_enabled(False)
    with torch.no_grad():
        fr = torch.compile(model, backend="frit")
        ind = torch.compile(model, backend="inductor")
        want = model(*args)
        torch.testing.assert_close(fr(*args), want, rtol=1e-3, atol=1e-4)
        torch.testing.assert_close(ind(*args), want, rtol=1e-3, atol=1e-4)
        e = frit.torch.explain(model, *args)
        t_fr = best_ms(lambda: fr(*args))
        t_eager = best_ms(lambda: model(*args))
        t_ind = best_ms(lambda: ind(*args))
    emit("torch_backend_%s_fwd" % name, t_fr, t_eager, t_ind,
         "%d threads, forward no_grad, shapes %s; frit: %d cluster(s), %d op(s) fell back"
         % (THREADS, [tuple(a.shape) for a in args], e.cluster_count, len(e.fallbacks)))


def bench_mlp_train():
    def make():
        torch.manual_seed(0)
        return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    x, y = torch.randn(128, 784), torch.randint(0, 10, (128,))

    def stepper(model):
        opt = torch.optim.SGD(model.parameters(), lr=0.01)

        def step():
            opt.zero_grad(set_to_none=True)
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        return step

    eager = make()
    t_eager = best_ms(stepper(eager))
    t_fr = best_ms(stepper(torch.compile(make(), backend="frit")))
    t_ind = best_ms(stepper(torch.compile(make(), backend="inductor")))
    emit("torch_backend_mlp_train_step", t_fr, t_eager, t_ind,
         "%d threads, 784-256-10 MLP, batch 128, SGD step (forward, backward, update in PyTorch)"
         % THREADS)


def main(names):
    ms = models()
    for name in ("mlp", "cnn", "transformer"):
        if not names or name in names:
            bench_forward(name, *ms[name])
    if not names or "mlp_train" in names:
        bench_mlp_train()


if __name__ == "__main__":
    main(sys.argv[1:])
