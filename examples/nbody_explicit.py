"""N-body step written as one explicit frit kernel over bodies i with a loop over j accumulating the
force in kernel variables, compared with the vectorised frit n-body (the (N, N, 3) formulation of
bench/bench_nbody.c) and a float64 numpy oracle; --window shows a rotating disk of bodies live.
Usage: python examples/nbody_explicit.py [--n N] [--steps S] [--window]"""
import argparse
import functools
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import frit  # noqa: E402

DT = 0.01
EPS = 1e-4


def step_explicit(x, v):
    """One step: for each body i, F_i = sum_j (x_j - x_i) / (|x_j - x_i|^2 + eps)^1.5; v += F dt;
    x += v dt. The coordinates are first made contiguous per axis (structure of arrays) so that
    the j loop reads consecutive floats."""
    n = x.shape[0]
    px, py, pz = (frit.contiguous(x[:, c]) for c in range(3))
    xn = frit.empty((n, 3), dtype=frit.float32)
    vn = frit.empty((n, 3), dtype=frit.float32)
    with frit.kernel(n, name="nbody") as i:
        xi, yi, zi = px[i], py[i], pz[i]
        ax = frit.var(0.0, dtype=frit.float32)
        ay = frit.var(0.0, dtype=frit.float32)
        az = frit.var(0.0, dtype=frit.float32)
        with frit.loop(n) as j:
            dx, dy, dz = px[j] - xi, py[j] - yi, pz[j] - zi
            d2 = dx * dx + dy * dy + dz * dz + EPS
            inv = 1.0 / (d2 * frit.sqrt(d2))
            ax.set(ax + dx * inv)
            ay.set(ay + dy * inv)
            az.set(az + dz * inv)
        for c, (acc, pc) in enumerate(((ax, xi), (ay, yi), (az, zi))):
            vc = v[i, c] + acc * DT
            vn[i, c] = vc
            xn[i, c] = pc + vc * DT
    return xn, vn


def step_vectorised(x, v):
    """The same step in numpy style (what bench/bench_nbody.c measures)."""
    dx = x[None, :, :] - x[:, None, :]
    d2 = frit.sum(dx * dx, axis=-1, keepdims=True) + EPS
    f = frit.sum(dx / d2 ** 1.5, axis=1)
    v2 = v + f * DT
    return x + v2 * DT, v2


def step_numpy(x, v):
    """float64 oracle of one step."""
    x = x.astype(np.float64)
    dx = x[None, :, :] - x[:, None, :]
    d2 = np.sum(dx * dx, axis=-1, keepdims=True) + EPS
    v2 = v + np.sum(dx / d2 ** 1.5, axis=1) * DT
    return x + v2 * DT, v2


explicit = frit.jit(step_explicit, dynamic=False)
vectorised = frit.jit(step_vectorised, dynamic=False)


def make_input(n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.random((n, 3), dtype=np.float32), (rng.random((n, 3), dtype=np.float32) - 0.5) * 0.1


def time_steps(f, x, v, steps):
    """Seconds per step (median over `steps` steps, after a warm-up call); the state advances."""
    x, v = f(x, v)
    ts = []
    for _ in range(steps):
        t0 = time.perf_counter()
        x, v = f(x, v)
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts)), x, v


def check(n, steps=1):
    """Runs `steps` steps with both frit forms and numpy; returns the max relative errors of the
    explicit form against numpy and against the vectorised form."""
    x0, v0 = make_input(n)
    xe, ve = x0, v0
    xv, vv = x0, v0
    xr, vr = x0.astype(np.float64), v0.astype(np.float64)
    for _ in range(steps):
        xe, ve = explicit(xe, ve)
        xv, vv = vectorised(xv, vv)
        xr, vr = step_numpy(xr, vr)
    xe, ve, xv, vv = (np.asarray(a, np.float64) for a in (xe, ve, xv, vv))
    scale = np.abs(vr).max()
    err_np = max(np.abs(xe - xr).max() / np.abs(xr).max(), np.abs(ve - vr).max() / scale)
    err_vec = max(np.abs(xe - xv).max() / np.abs(xv).max(), np.abs(ve - vv).max() / scale)
    assert err_np < 1e-4 and err_vec < 1e-4, (err_np, err_vec)
    return err_np, err_vec


def make_disk(n, seed=0, radius=20.0):
    """A flat disk of n unit masses, uniform in area, each on the circular orbit of the mass
    inside its radius (v = sqrt(N r / R^2)): it winds up into spiral arms. The step's units (G = 1,
    dt = 0.01) want a wide disk: at radius 20 a body moves ~1% of its orbit a step at N = 4096."""
    rng = np.random.default_rng(seed)
    r = radius * np.sqrt(0.01 + 0.99 * rng.random(n))
    a = rng.random(n) * 2 * np.pi
    x = np.stack([r * np.cos(a), r * np.sin(a), 0.05 * rng.standard_normal(n)], -1)
    speed = np.sqrt(n * r) / radius
    v = np.stack([-np.sin(a) * speed, np.cos(a) * speed, np.zeros(n)], -1)
    return x.astype(np.float32), v.astype(np.float32)


@functools.partial(frit.jit, static_argnums=(1,))
def render(x, size, zoom):
    """Bodies counted per pixel (x, y about the centre of mass), by a scatter-add of ones;
    bodies off the picture land in a spare bin past its end."""
    c = x - frit.mean(x, axis=0)
    px = frit.floor((c[:, 0] * zoom + 0.5) * size).astype(frit.int32)
    py = frit.floor((c[:, 1] * zoom + 0.5) * size).astype(frit.int32)
    inside = (px >= 0) & (px < size) & (py >= 0) & (py < size)
    idx = frit.where(inside, py * size + px, size * size)
    counts = frit.scatter(frit.zeros(size * size + 1, dtype=frit.float32), idx, 1.0, mode="add")
    return counts[:size * size].reshape(size, size)


def live(n, size=256, scale=2, max_frames=300, frames_dir=None):
    """The explicit kernel's simulation in a frit.window: a zoom slider, a reset button, the
    frame rate. Headless: writes max_frames frames into frames_dir (default ./frit_frames)."""
    x0, v0 = make_disk(n)
    x, v, zoom = x0, v0, 0.02
    with frit.window.Window(size, size, "frit: n-body", scale=scale, tonemap="reinhard", exposure=0.5,
                            max_frames=max_frames, frames_dir=frames_dir) as win:
        t0, frames = time.perf_counter(), 0
        while win.running:
            zoom = win.slider("zoom", zoom, 0.005, 0.1)
            if win.button("reset"):
                x, v = x0, v0
            x, v = explicit(x, v)
            frames += 1
            win.text(f"N = {n}: {frames / (time.perf_counter() - t0):.1f} steps/s")
            win.show(render(x, size, np.float32(zoom)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--window", action="store_true", help="watch it live in a frit.window")
    ap.add_argument("--picture", default="", help="write the disk after --steps steps as a PNG")
    a = ap.parse_args(argv)
    if a.window:
        return live(a.n)
    if a.picture:
        x, v = make_disk(a.n)
        for _ in range(a.steps):
            x, v = explicit(x, v)
        frit.image.save(render(x, 256, np.float32(0.02)), a.picture, tonemap="reinhard", exposure=0.5, gamma=2.2)
        print("wrote", a.picture)
        return
    err_np, err_vec = check(min(a.n, 1024), 2)
    print("checked 2 steps of N=%d: max rel. error vs float64 numpy %.2e, vs vectorised frit %.2e"
          % (min(a.n, 1024), err_np, err_vec))
    x, v = make_input(a.n)
    te, _, _ = time_steps(explicit, x, v, a.steps)
    tv, _, _ = time_steps(vectorised, x, v, a.steps)
    print("N=%d: explicit kernel %.2f ms/step, vectorised %.2f ms/step: explicit is %.2fx faster"
          % (a.n, 1e3 * te, 1e3 * tv, tv / te))


if __name__ == "__main__":
    main()
