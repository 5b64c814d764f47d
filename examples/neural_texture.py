"""A neural texture: a small MLP maps a pixel's coordinates (through Fourier features) to its
colour, trained with frit's autodiff and Adam (one compiled training step, frit.optim) to
reproduce an image: by default a procedural one (rings, stripes and a colour sweep), or any
picture given with --image. Writes target | learned side by side, and the learned texture at a
higher resolution than it was trained at (the network is a continuous function of position).
Usage: python examples/neural_texture.py [--size 64] [--steps 1500] [--image PATH] [--out texture.png]
       [--window]"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import frit  # noqa: E402
from frit import nn, optim  # noqa: E402

BANDS = 6   # Fourier feature frequencies 1, 2, 4, ... 32 (times pi) on each axis


def target_image(size):
    """A procedural (size, size, 3) float image in [0, 1]."""
    y, x = np.mgrid[0:size, 0:size].astype(np.float32) / size
    r = np.hypot(x - 0.5, y - 0.45)
    rings = 0.5 + 0.5 * np.cos(40 * r)
    stripes = (np.sin(18 * (x + 0.3 * y)) > 0).astype(np.float32)
    img = np.stack([rings * (0.6 + 0.4 * x), 0.3 + 0.5 * stripes * y, 0.8 * (1 - r) * (1 - rings * 0.5)], -1)
    return np.clip(img, 0, 1).astype(np.float32)


def load_image(path, size):
    from PIL import Image
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB").resize((size, size)), np.float32) / 255.0


def features(size):
    """(size*size, 4*BANDS + 2): the pixel centres in [0, 1) and their sines and cosines."""
    y, x = np.mgrid[0:size, 0:size].astype(np.float32)
    p = np.stack([(x.ravel() + 0.5) / size, (y.ravel() + 0.5) / size], -1)
    f = [p]
    for k in range(BANDS):
        a = np.pi * (2.0 ** k) * p
        f += [np.sin(a), np.cos(a)]
    return np.concatenate(f, -1).astype(np.float32)


def model(width=64):
    nf = 4 * BANDS + 2
    return nn.Sequential(nn.Linear(nf, width), nn.GELU(), nn.Linear(width, width), nn.GELU(), nn.Linear(width, 3))


def loss_fn(out, target):
    return nn.mse_loss(frit.sigmoid(out), target)


def predict(net, size):
    return np.asarray(frit.sigmoid(net(frit.asarray(features(size))))).reshape(size, size, 3)


def psnr(a, b):
    return float(10 * np.log10(1.0 / max(np.mean((a - b) ** 2), 1e-12)))


def train(target, steps, batch=1024, lr=3e-3, seed=0, on_step=None):
    """Trains on random batches of pixels; returns (net, losses)."""
    size = target.shape[0]
    frit.random.seed(seed)
    net = model()
    step = optim.compile_step(net, loss_fn, optim.Adam(optim.cosine_lr(lr, steps, lr / 20)))
    feats, colours = features(size), target.reshape(-1, 3)
    rng = np.random.default_rng(seed)
    losses = []
    for s in range(steps):
        idx = rng.integers(0, size * size, batch)
        losses.append(float(step(feats[idx], colours[idx])))
        if on_step is not None and not on_step(s, net):
            break
    return net, losses


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--image", default="", help="a picture to learn instead of the procedural one")
    ap.add_argument("--out", default="texture.png")
    ap.add_argument("--window", action="store_true", help="watch the texture learn in a frit.window")
    a = ap.parse_args(argv)
    target = load_image(a.image, a.size) if a.image else target_image(a.size)
    win = frit.window.Window(2 * a.size, a.size, "frit: neural texture", scale=4) if a.window else None

    def on_step(s, net):
        if win is None or s % 25:
            return True
        win.text(f"step {s}")
        win.show(np.concatenate([target, predict(net, a.size)], axis=1))
        return win.running
    t0 = time.perf_counter()
    net, losses = train(target, a.steps, on_step=on_step)
    secs = time.perf_counter() - t0
    if win is not None:
        win.close()
    learned = predict(net, a.size)
    print(f"{len(losses)} steps in {secs:.1f} s ({len(losses) / secs:.0f} steps/s): loss {losses[0]:.4f} -> "
          f"{np.mean(losses[-20:]):.4f}, PSNR {psnr(learned, target):.1f} dB")
    frit.image.save(np.concatenate([target, learned, predict(net, 2 * a.size)[::2, ::2]], axis=1), a.out)
    big = os.path.splitext(a.out)[0] + "_4x.png"
    frit.image.save(predict(net, 4 * a.size), big)
    print("wrote", a.out, "and", big)
    return losses, psnr(learned, target)


if __name__ == "__main__":
    main()
