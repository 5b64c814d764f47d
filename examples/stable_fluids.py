"""2D stable fluids (Stam, "Stable Fluids", 1999) on an N x N grid: a jet of dye and upward
velocity enters near the bottom; each step adds the sources, applies vorticity confinement,
advects velocity semi-Lagrangianly (back-traced, bilinear), projects it to zero divergence
(Jacobi iterations on the pressure Poisson equation), and advects the dye. The whole step is one
`frit.jit` function; the same code runs on numpy (`--check` compares the two) because it only
uses the numpy-like API both share. Writes the dye as a picture (frit.image) and, with --gif,
an animation.
Usage: python examples/stable_fluids.py [--n 128] [--steps 150] [--out fluids.png] [--gif fluids.gif]
       [--check] [--iters 30] [--window [--scale 4]]"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import frit  # noqa: E402


def sample(xp, f, x, y):
    """f (N, N) at fractional cells (x along axis 1, y along axis 0), bilinear, clamped inside."""
    n = f.shape[0]
    x = xp.clip(x, 0.0, n - 1.001)
    y = xp.clip(y, 0.0, n - 1.001)
    x0, y0 = xp.floor(x), xp.floor(y)
    sx, sy = x - x0, y - y0
    i0, j0 = y0.astype(np.int32), x0.astype(np.int32)
    i1, j1 = i0 + 1, j0 + 1
    return ((1 - sy) * ((1 - sx) * f[i0, j0] + sx * f[i0, j1]) +
            sy * ((1 - sx) * f[i1, j0] + sx * f[i1, j1]))


def neighbours(xp, f, k=1):
    """(left, right, up, down) of f at distance k, edges repeated (a zero-gradient boundary)."""
    p = xp.pad(f, k, mode="edge")
    return p[k:-k, :-2 * k], p[k:-k, 2 * k:], p[:-2 * k, k:-k], p[2 * k:, k:-k]


def divergence(xp, u, v):
    ul, ur, _, _ = neighbours(xp, u)
    _, _, vu, vd = neighbours(xp, v)
    return 0.5 * ((ur - ul) + (vd - vu))


def project(xp, u, v, iters):
    """u, v minus the central-difference gradient of p, where p solves the Poisson equation whose
    Laplacian is that gradient's central-difference divergence (the stencil two cells wide), so
    that the projected field's divergence goes to zero as the Jacobi iterations converge."""
    div = divergence(xp, u, v)
    p = div * 0.0
    for _ in range(iters):
        pl, pr, pu, pd = neighbours(xp, p, 2)
        p = pl + pr + pu + pd - 4.0 * div
        p = p * 0.25
    pl, pr, pu, pd = neighbours(xp, p)
    return u - 0.5 * (pr - pl), v - 0.5 * (pd - pu)


def vorticity_force(xp, u, v, eps):
    """Confinement: eps * (N x w) with N the normalised gradient of |w|, w the curl."""
    ul, ur, uu, ud = neighbours(xp, u)
    vl, vr, vu, vd = neighbours(xp, v)
    w = 0.5 * ((vr - vl) - (ud - uu))
    aw = xp.abs(w)
    al, ar, au, ad = neighbours(xp, aw)
    gx, gy = 0.5 * (ar - al), 0.5 * (ad - au)
    inv = 1.0 / (xp.sqrt(gx * gx + gy * gy) + 1e-5)
    return eps * gy * inv * w, -eps * gx * inv * w


def step(xp, u, v, d, src, inside, X, Y, iters=30, dt=1.0, eps=0.15):
    """One time step; u, v in cells per step, d the dye; src (N, N) the source strength, inside
    (N, N) 1 inside the walls and 0 on them, X, Y the cell coordinates."""
    v = v - dt * 0.6 * src      # upward: towards row 0
    d = d + dt * 0.5 * src
    fu, fv = vorticity_force(xp, u, v, eps)
    u, v = (u + dt * fu) * inside, (v + dt * fv) * inside
    xb, yb = X - dt * u, Y - dt * v
    u, v = sample(xp, u, xb, yb) * inside, sample(xp, v, xb, yb) * inside
    u, v = project(xp, u, v, iters)
    u, v = u * inside, v * inside
    d = sample(xp, d, X - dt * u, Y - dt * v) * 0.99
    return u, v, d


def setup(n):
    """Zero velocity and dye, the source disk near the bottom, the wall mask and coordinates."""
    Y, X = np.mgrid[0:n, 0:n].astype(np.float32)
    r2 = (X - n / 2) ** 2 + (Y - 0.85 * n) ** 2
    src = np.where(r2 < (n / 16) ** 2, 1.0, 0.0).astype(np.float32)
    inside = np.zeros((n, n), np.float32)
    inside[1:-1, 1:-1] = 1
    z = np.zeros((n, n), np.float32)
    return z, z.copy(), z.copy(), src, inside, X, Y


def picture(d):
    """The dye as an RGB image: warm where dense, blue where thin."""
    d = np.asarray(d, dtype=np.float64)
    t = d / (1.0 + d)
    return np.stack([t ** 0.6, t ** 1.2, 0.25 * t + 0.6 * t ** 3], axis=-1)


def run(n, steps, iters, frames_every=0):
    u, v, d, src, inside, X, Y = setup(n)
    f = frit.jit(lambda u, v, d, s, m, x, y: step(frit, u, v, d, s, m, x, y, iters=iters))
    args = [frit.asarray(a) for a in (src, inside, X, Y)]
    u, v, d = frit.asarray(u), frit.asarray(v), frit.asarray(d)
    frames = []
    t0 = time.perf_counter()
    for s in range(steps):
        u, v, d = f(u, v, d, *args)
        if frames_every and s % frames_every == 0:
            frames.append(picture(d))
    np.asarray(d)
    return u, v, d, frames, time.perf_counter() - t0


def interactive(n, iters, scale, max_frames=300, frames_dir=None):
    """The simulation in a frit.window: drag with the left button to push dye and velocity,
    sliders for the vorticity and the jet, a reset button. Headless: writes max_frames frames
    into frames_dir (default ./frit_frames)."""
    u0, v0, d0, src, inside, X, Y = setup(n)
    f = frit.jit(lambda u, v, d, s, m, x, y, e: step(frit, u, v, d, s, m, x, y, iters=iters, eps=e))
    inside_a, X_a, Y_a = (frit.asarray(a) for a in (inside, X, Y))
    u, v, d = (frit.asarray(a) for a in (u0, v0, d0))
    eps, jet, last = 0.15, 1.0, None
    with frit.window.Window(n, n, "frit: stable fluids", scale=scale, gamma="srgb", max_frames=max_frames,
                            frames_dir=frames_dir) as win:
        t0, frames = time.perf_counter(), 0
        while win.running:
            eps = win.slider("vorticity", eps, 0.0, 0.5)
            jet = win.slider("jet", jet, 0.0, 2.0)
            if win.button("reset"):
                u, v, d = (frit.asarray(a) for a in (u0, v0, d0))
            s = src * jet
            mx, my = win.mouse
            if win.mouse_down(0):
                # a disk of dye at the cursor, pushed along the drag
                s = s + np.where((X - mx) ** 2 + (Y - my) ** 2 < (n / 24) ** 2, 1.0, 0.0).astype(np.float32)
                if last is not None:
                    push = np.where((X - mx) ** 2 + (Y - my) ** 2 < (n / 16) ** 2, 1.0, 0.0).astype(np.float32)
                    u = u + frit.asarray(push * np.float32(0.5 * (mx - last[0])))
                    v = v + frit.asarray(push * np.float32(0.5 * (my - last[1])))
                last = (mx, my)
            else:
                last = None
            u, v, d = f(u, v, d, frit.asarray(s.astype(np.float32)), inside_a, X_a, Y_a, np.float32(eps))
            frames += 1
            win.text(f"{frames / (time.perf_counter() - t0):.0f} frames/s, {n}x{n}, {iters} Jacobi iterations")
            win.show(picture(d))


def check(n=32, steps=6, iters=20):
    """frit's steps against numpy's on the same code; returns the largest relative difference
    and the divergence left after projection relative to before."""
    u, v, d, src, inside, X, Y = setup(n)
    fu, fv, fd, _, _ = run(n, steps, iters)
    for _ in range(steps):
        u, v, d = step(np, u, v, d, src, inside, X, Y, iters=iters)
    err = max(float(np.max(np.abs(np.asarray(a) - b)) / (np.max(np.abs(b)) + 1e-12))
              for a, b in ((fu, u), (fv, v), (fd, d)))
    # a field with divergence (the sources' push) projected: what is left inside the walls' band
    before = np.abs(divergence(np, u + 0.3 * src, v - 0.7 * src)).max()
    pu, pv = project(np, u + 0.3 * src, v - 0.7 * src, 200)
    after = np.abs(divergence(np, pu, pv)[2:-2, 2:-2]).max()
    return err, after / before


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=128)
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--iters", type=int, default=30, help="Jacobi iterations per projection")
    ap.add_argument("--out", default="fluids.png")
    ap.add_argument("--gif", default="", help="also write an animation (every 5th step)")
    ap.add_argument("--check", action="store_true", help="compare with numpy at a small size")
    ap.add_argument("--window", action="store_true", help="run it live in a frit.window")
    ap.add_argument("--scale", type=int, default=4, help="window pixels per cell (--window)")
    a = ap.parse_args()
    if a.window:
        return interactive(a.n, a.iters, a.scale)
    if a.check:
        err, ratio = check()
        print(f"frit vs numpy: max relative difference {err:.2e}; divergence after projection "
              f"{ratio:.2e} of before")
        if not (err < 1e-4 and ratio < 0.01):
            sys.exit("stable_fluids: check failed")
        return
    u, v, d, frames, secs = run(a.n, a.steps, a.iters, 5 if a.gif else 0)
    print(f"{a.steps} steps of {a.n}x{a.n} in {secs:.2f} s ({1e3 * secs / a.steps:.2f} ms/step, "
          f"first step's compile included)")
    frit.image.save(picture(d), a.out, gamma="srgb")
    print("wrote", a.out)
    if a.gif:
        frit.image.save_animation(frames, a.gif, fps=20, gamma="srgb")
        print("wrote", a.gif)


if __name__ == "__main__":
    main()
