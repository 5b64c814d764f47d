"""Fashion-MNIST with frit: an MLP (784-256-10) or the CNN TensorFrost benchmarks
(conv5x5(c1) -> maxpool -> GELU -> conv5x5(c2) -> maxpool -> GELU -> dense(d) -> GELU -> dense(10)),
log-softmax cross-entropy, Adam, batch 128; each training step is one compiled frit program.

    python examples/fashion_mnist.py --model mlp --epochs 5
    python examples/fashion_mnist.py --model cnn --conf 8-16-128 --epochs 5

Data: the idx files of Debian's dataset-fashion-mnist (/usr/share/datasets/fashion-mnist; `make
fashion-mnist` installs it), or --data DIR; --synthetic N trains on N generated images (tests).
Writes a loss/accuracy curve (--plot, PNG) and prints one line per epoch."""
import argparse
import gzip
import os
import struct
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import frit  # noqa: E402
from frit import nn, optim  # noqa: E402

DATA_DIR = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        zero, dtype, ndim = struct.unpack(">HBB", f.read(4))
        if zero != 0 or dtype != 0x08:
            raise ValueError("%s: not an idx file of unsigned bytes" % path)
        shape = struct.unpack(">" + "I" * ndim, f.read(4 * ndim))
        return np.frombuffer(f.read(), np.uint8).reshape(shape)


def load(data_dir):
    def part(name):
        for ext in (".gz", ""):
            p = os.path.join(data_dir, name + ext)
            if os.path.exists(p):
                return read_idx(p)
        raise FileNotFoundError("%s/%s(.gz) not found: install dataset-fashion-mnist (make "
                                "fashion-mnist) or pass --data" % (data_dir, name))
    xtr, ytr = part("train-images-idx3-ubyte"), part("train-labels-idx1-ubyte")
    xte, yte = part("t10k-images-idx3-ubyte"), part("t10k-labels-idx1-ubyte")
    scale = lambda x: (x.astype(np.float32) / 255.0 - 0.2860) / 0.3530  # noqa: E731
    return scale(xtr), ytr.astype(np.int64), scale(xte), yte.astype(np.int64)


def synthetic(n, seed=0):
    """n 28x28 images of 10 classes, each a class template plus noise: learnable in one epoch."""
    rng = np.random.default_rng(seed)
    templates = rng.standard_normal((10, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, n)
    x = templates[y] + 0.8 * rng.standard_normal((n, 28, 28)).astype(np.float32)
    k = n * 5 // 6
    return x[:k], y[:k], x[k:], y[k:]


def mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))


def cnn(c1, c2, d, padding=2):
    # padding 2 keeps each 5x5 conv's output the size of its input ("same"): 28 -> 14 -> 7
    side = ((28 + 2 * padding - 4) // 2 + 2 * padding - 4) // 2
    return nn.Sequential(nn.Conv2d(1, c1, 5, padding=padding), nn.MaxPool2d(2), nn.GELU(),
                         nn.Conv2d(c1, c2, 5, padding=padding), nn.MaxPool2d(2), nn.GELU(),
                         nn.Flatten(), nn.Linear(c2 * side * side, d), nn.GELU(), nn.Linear(d, 10))


def accuracy(model, x, y, batch=1000):
    model.eval()
    predict = frit.jit(lambda xb: frit.argmax(model(xb), axis=1), dynamic=False)
    hits = 0
    for i in range(0, len(x), batch):
        hits += int(np.sum(np.asarray(predict(x[i:i + batch])) == y[i:i + batch]))
    return hits / len(x)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", choices=("mlp", "cnn"), default="mlp")
    ap.add_argument("--conf", default="8-16-128", help="CNN channels c1-c2-dense")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=None, help="Adam lr (default 1e-3)")
    ap.add_argument("--schedule", choices=("cosine", "constant"), default=None,
                    help="learning rate over the run (cosine, the default: decays to lr/20)")
    ap.add_argument("--padding", type=int, default=2, help="CNN conv padding (2: same size)")
    ap.add_argument("--data", default=DATA_DIR)
    ap.add_argument("--synthetic", type=int, default=0, help="train on N generated images")
    ap.add_argument("--plot", default="fashion_mnist.png", help="PNG of the curves ('' for none)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)

    xtr, ytr, xte, yte = synthetic(a.synthetic, a.seed) if a.synthetic else load(a.data)
    frit.random.seed(a.seed)
    if a.model == "mlp":
        model, lr = mlp(), a.lr or 1e-3
    else:
        c1, c2, d = (int(v) for v in a.conf.split("-"))
        model, lr = cnn(c1, c2, d, a.padding), a.lr or 1e-3
    xtr, xte = xtr[:, None], xte[:, None]  # NCHW
    nb = len(xtr) // a.batch  # the last partial batch is dropped: one compiled shape
    if (a.schedule or "cosine") == "cosine":
        lr = optim.cosine_lr(lr, a.epochs * nb, lr / 20)
    step = optim.compile_step(model, nn.cross_entropy, optim.Adam(lr))
    rng = np.random.default_rng(a.seed)
    try:
        from tqdm import tqdm
    except ImportError:  # the progress bar is optional
        tqdm = None
    history = []
    for ep in range(a.epochs):
        order = rng.permutation(len(xtr))
        bar = tqdm(range(nb), desc="epoch %d" % (ep + 1), disable=a.quiet or tqdm is None,
                   unit="it") if tqdm else range(nb)
        t0, losses = time.perf_counter(), []
        for b in bar:
            idx = order[b * a.batch:(b + 1) * a.batch]
            loss = step(xtr[idx], ytr[idx])
            if b % 20 == 0 or b == nb - 1:
                losses.append(float(loss))
                if tqdm and not a.quiet:
                    bar.set_postfix(loss="%.4f" % losses[-1])
        dt = time.perf_counter() - t0
        acc = accuracy(model, xte, yte)
        history.append((ep + 1, float(np.mean(losses)), acc))
        print("epoch %d: loss %.4f, test accuracy %.4f, %.1f it/s" % (ep + 1, history[-1][1], acc, nb / dt),
              flush=True)
    if a.plot:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("matplotlib not installed: no plot")
        else:
            fig, ax = plt.subplots(1, 2, figsize=(9, 3.5))
            e = [h[0] for h in history]
            ax[0].plot(e, [h[1] for h in history], "o-")
            ax[0].set_xlabel("epoch"), ax[0].set_ylabel("training loss")
            ax[1].plot(e, [h[2] for h in history], "o-")
            ax[1].set_xlabel("epoch"), ax[1].set_ylabel("test accuracy")
            fig.suptitle("frit, Fashion-MNIST, %s" % (a.model if a.model == "mlp" else "cnn " + a.conf))
            fig.tight_layout()
            fig.savefig(a.plot, dpi=100)
    return history


if __name__ == "__main__":
    main()
