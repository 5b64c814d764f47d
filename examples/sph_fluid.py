"""2D SPH fluid, a dam break: particles in a unit box under gravity, density by the poly6 kernel,
pressure forces by the spiky kernel's gradient, viscosity by its Laplacian (Mueller et al. 2003),
over all pairs (the (N, N) formulation frit fuses into a few kernels). The step is one `frit.jit`
function on numpy-like code, so numpy runs the same code as a check (--check). Particles are drawn
as shaded spheres: each one's sprite is scattered into the picture with frit.scatter's max, its
colour by speed.
Usage: python examples/sph_fluid.py [--n 1200] [--steps 400] [--out sph.png] [--gif sph.gif]
       [--check] [--window]"""
import argparse
import functools
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import frit  # noqa: E402

H = 0.035            # smoothing radius
RHO0 = 1000.0        # rest density
STIFF = 20.0         # pressure per density above rest (p = STIFF (rho - RHO0))
MU = 2.0             # viscosity
G = -9.8             # gravity along y (y up)
DT = 0.002
DAMP = 0.5           # speed kept by a wall bounce


def setup(n, seed=0):
    """A block of n particles on a jittered lattice against the left wall; (x, v, mass)."""
    dx = H * 0.55
    side = max(1, int(0.5 / dx))          # half the box wide
    rng = np.random.default_rng(seed)
    k = np.arange(n)
    x = np.stack([0.05 + dx * (k % side), 0.05 + dx * (k // side)], -1) + rng.uniform(-1e-3, 1e-3, (n, 2))
    mass = RHO0 * dx * dx
    return x.astype(np.float32), np.zeros((n, 2), np.float32), np.float32(mass)


def step(xp, x, v, mass):
    """One semi-implicit Euler step of every particle against every other."""
    d = x[None, :, :] - x[:, None, :]                       # d[i, j] = x_j - x_i
    r2 = xp.sum(d * d, axis=-1)
    near = r2 < H * H
    r = xp.sqrt(r2 + 1e-12)
    q2 = xp.where(near, H * H - r2, 0.0)
    rho = mass * (4.0 / (np.pi * H ** 8)) * xp.sum(q2 * q2 * q2, axis=1)
    p = STIFF * xp.maximum(rho - RHO0, 0.0)
    hr = xp.where(near, H - r, 0.0)
    # pressure: -sum_j m (p_i + p_j) / (2 rho_j) grad W(x_i - x_j); grad W(x_i - x_j) points from j to i
    gw = (-30.0 / (np.pi * H ** 5)) * hr * hr / r            # times (x_i - x_j) = -d
    pf = mass * (p[:, None] + p[None, :]) / (2.0 * rho[None, :]) * gw
    fp = xp.sum(pf[..., None] * d, axis=1)
    # viscosity: mu sum_j m (v_j - v_i) / rho_j lap W
    lw = (40.0 / (np.pi * H ** 5)) * hr
    dv = v[None, :, :] - v[:, None, :]
    fv = MU * xp.sum((mass * lw / rho[None, :])[..., None] * dv, axis=1)
    a = (fp + fv) / rho[:, None]
    gravity = xp.where(xp.arange(2) == 1, G, 0.0).astype(np.float32)
    v = v + DT * (a + gravity)
    x = x + DT * v
    # walls: clamp into the box, reflect the normal speed (damped)
    lo, hi = x < 0.0, x > 1.0
    v = xp.where(lo | hi, -DAMP * v, v)
    x = xp.clip(x, 0.0, 1.0)
    return x.astype(np.float32), v.astype(np.float32), rho


SPRITE = 3   # sphere radius in pixels at size 256


@functools.partial(frit.jit, static_argnums=(2, 3))
def render(x, v, size, radius):
    """Particles as shaded spheres: each writes its sprite's (2 radius + 1)^2 pixels, the brightest
    (the nearest sphere centre) winning, by frit.scatter's max; colour by speed, one channel a pass."""
    n = x.shape[0]
    offs = np.arange(-radius, radius + 1)
    oy, ox = np.meshgrid(offs, offs, indexing="ij")
    inside = (ox ** 2 + oy ** 2) <= radius * radius
    oy, ox = oy[inside].astype(np.int32), ox[inside].astype(np.int32)
    shade = np.sqrt(1.0 - (ox ** 2 + oy ** 2) / (radius + 0.5) ** 2).astype(np.float32)
    light = (0.55 + 0.45 * (-0.5 * ox - 0.7 * oy) / (radius + 0.5)).astype(np.float32)
    cx = frit.floor(x[:, 0] * (size - 1)).astype(frit.int32)
    cy = frit.floor((1.0 - x[:, 1]) * (size - 1)).astype(frit.int32)
    px = cx[:, None] + ox[None, :]
    py = cy[:, None] + oy[None, :]
    ok = (px >= 0) & (px < size) & (py >= 0) & (py < size)
    idx = frit.where(ok, py * size + px, size * size).reshape(-1)
    speed = frit.sqrt(frit.sum(v * v, axis=-1))
    t = frit.minimum(speed / 2.0, 1.0)[:, None]
    base = shade * light
    chans = []
    for c0, c1 in ((0.15, 1.0), (0.45, 0.9), (0.95, 0.3)):     # slow: blue, fast: white-yellow
        val = (base[None, :] * (c0 + (c1 - c0) * t)).reshape(-1)
        img = frit.scatter(frit.zeros(size * size + 1, dtype=frit.float32), idx, val, mode="max")
        chans.append(img[:size * size].reshape(size, size))
    return frit.stack(chans, axis=-1)


def simulate(n, steps, frames_every=0, size=256):
    x, v, mass = setup(n)
    f = frit.jit(lambda x, v, m: step(frit, x, v, m)[:2])
    frames = []
    t0 = time.perf_counter()
    for s in range(steps):
        x, v = f(x, v, mass)
        if frames_every and s % frames_every == 0:
            frames.append(np.asarray(render(x, v, size, SPRITE)))
    np.asarray(x)
    return x, v, frames, time.perf_counter() - t0


def check(n=300, steps=20):
    """(max difference of positions between frit and numpy after `steps` steps, relative error of
    the lattice's interior density against the rest density, whether everything stayed in the box)."""
    x0, v0, mass = setup(n)
    fx, fv, _, _ = simulate(n, steps)
    x, v = x0, v0
    for _ in range(steps):
        x, v, rho = step(np, x, v, mass)
    diff = float(np.abs(np.asarray(fx) - x).max())
    _, _, rho0 = step(np, x0, v0, mass)
    c = x0.mean(0)
    inner = np.hypot(*(x0 - c).T) < 0.3 * np.ptp(x0[:, 0])
    dens = float(np.abs(np.median(rho0[inner]) / RHO0 - 1))
    fx = np.asarray(fx)
    return diff, dens, bool(np.all((fx >= 0) & (fx <= 1)) and np.all(np.isfinite(fx)))


def interactive(n, scale=2, max_frames=600, frames_dir=None, size=256):
    x0, v0, mass = setup(n)
    f = frit.jit(lambda x, v, m: step(frit, x, v, m)[:2])
    x, v = x0, v0
    with frit.window.Window(size, size, "frit: SPH", scale=scale, max_frames=max_frames,
                            frames_dir=frames_dir) as win:
        t0, k = time.perf_counter(), 0
        while win.running:
            if win.button("reset"):
                x, v = x0, v0
            if win.mouse_down(0):   # a push away from the cursor
                mx, my = win.mouse
                c = np.float32([mx / (size - 1), 1 - my / (size - 1)])
                xa = np.asarray(x)
                dd = xa - c
                w = np.exp(-np.sum(dd * dd, -1) / 0.005)[:, None].astype(np.float32)
                v = frit.asarray(v) + frit.asarray(3.0 * w * dd / (np.linalg.norm(dd, axis=-1, keepdims=True) + 1e-3))
            for _ in range(4):
                x, v = f(x, v, mass)
            k += 4
            win.text(f"N = {n}: {k / (time.perf_counter() - t0):.0f} steps/s")
            win.show(render(x, v, size, SPRITE))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1200)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--out", default="sph.png")
    ap.add_argument("--gif", default="", help="also write an animation (every 10th step)")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--window", action="store_true")
    a = ap.parse_args(argv)
    if a.check:
        diff, dens, inbox = check()
        print(f"frit vs numpy after 20 steps: max |dx| {diff:.2e}; rest density error {dens:.3f}; in the box: {inbox}")
        if not (diff < 1e-3 and dens < 0.1 and inbox):
            sys.exit("sph_fluid: check failed")
        return
    if a.window:
        return interactive(a.n)
    x, v, frames, secs = simulate(a.n, a.steps, 10 if a.gif else 0)
    print(f"{a.steps} steps of {a.n} particles in {secs:.2f} s ({1e3 * secs / a.steps:.2f} ms/step)")
    frit.image.save(np.asarray(render(x, v, 256, SPRITE)), a.out)
    print("wrote", a.out)
    if a.gif:
        frit.image.save_animation(frames, a.gif, fps=25)
        print("wrote", a.gif)


if __name__ == "__main__":
    main()
