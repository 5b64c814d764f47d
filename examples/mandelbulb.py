"""A Mandelbulb raymarcher as one explicit frit kernel per image: per pixel, a loop of sphere-tracing
steps (break on hit or escape), each step a loop of the distance estimator (break on bailout),
normals by central differences and simple shading. Writes a PNG and checks a low-resolution render
against a numpy implementation of the same algorithm.
--samples S path-traces it instead (a jittered primary ray, the sun through a shadow ray, one
cosine-weighted bounce to the sky; S samples averaged), --window progressively in a frit.window.
Usage: python examples/mandelbulb.py [--n SIZE] [--out FILE.png] [--check-size 48] [--samples S] [--window]"""
import argparse
import functools
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import frit  # noqa: E402

POWER = 8.0
ITERS = 8          # distance-estimator iterations
BAILOUT = 2.0
MAX_STEPS = 64     # sphere-tracing steps
HIT_EPS = 1e-3
T_MAX = 4.0
NORMAL_H = 2e-3
CAM = (0.0, 0.0, -2.6)
FOCAL = 1.6
LIGHT = (-0.5773503, 0.5773503, -0.5773503)  # normalised direction towards the light
AMBIENT = 0.15
F32 = np.float32


# ---------------------------------------------------------------- frit kernel

def _clamp1(x):
    return frit.minimum(frit.maximum(x, -1.0), 1.0)


def _de(px, py, pz):
    """Emits the Mandelbulb distance estimator at (px, py, pz) into the open kernel."""
    zx, zy, zz = (frit.var(c, dtype=frit.float32) for c in (px, py, pz))
    dr = frit.var(1.0, dtype=frit.float32)
    r = frit.var(0.0, dtype=frit.float32)
    with frit.loop(ITERS):
        rr = frit.sqrt(zx * zx + zy * zy + zz * zz)
        r.set(rr)
        with frit.if_(rr > BAILOUT):
            frit.break_()
        theta = frit.acos(_clamp1(zz / rr)) * POWER
        phi = frit.atan2(zy.get(), zx.get()) * POWER
        r2 = rr * rr
        r4 = r2 * r2
        dr.set(r4 * r2 * rr * POWER * dr + 1.0)
        zr = r4 * r4
        st = frit.sin(theta)
        zx.set(zr * st * frit.cos(phi) + px)
        zy.set(zr * st * frit.sin(phi) + py)
        zz.set(zr * frit.cos(theta) + pz)
    rv = r.get()
    return 0.5 * frit.log(rv) * rv / dr


def _gradient(px, py, pz):
    """The distance estimator's central-difference gradient at p and its inverse length."""
    gx = _de(px + NORMAL_H, py, pz) - _de(px - NORMAL_H, py, pz)
    gy = _de(px, py + NORMAL_H, pz) - _de(px, py - NORMAL_H, pz)
    gz = _de(px, py, pz + NORMAL_H) - _de(px, py, pz - NORMAL_H)
    return gx, gy, gz, 1.0 / frit.sqrt(gx * gx + gy * gy + gz * gz + 1e-20)


def render(h, w):
    """The image (h, w) of shades in [0, 1] (0: background), computed by one kernel."""
    img = frit.zeros((h, w), dtype=frit.float32)
    with frit.kernel((h, w), name="mandelbulb") as (y, x):
        # ray through the pixel centre; the image spans [-1, 1] along its larger side
        s = 2.0 / max(h, w)
        u = (x.astype(frit.float32) + 0.5 - w * 0.5) * s
        v = (h * 0.5 - y.astype(frit.float32) - 0.5) * s
        inv = 1.0 / frit.sqrt(u * u + v * v + FOCAL * FOCAL)
        dx, dy, dz = u * inv, v * inv, FOCAL * inv
        t = frit.var(0.0, dtype=frit.float32)
        hit = frit.var(False, dtype=frit.bool)
        steps = frit.var(0, dtype=frit.int32)
        with frit.loop(MAX_STEPS):
            d = _de(CAM[0] + dx * t, CAM[1] + dy * t, CAM[2] + dz * t)
            with frit.if_(d < HIT_EPS):
                hit.set(True)
                frit.break_()
            t.set(t + d)
            steps.set(steps + 1)
            with frit.if_(t > T_MAX):
                frit.break_()
        with frit.if_(hit.get()):
            px, py, pz = CAM[0] + dx * t, CAM[1] + dy * t, CAM[2] + dz * t
            gx, gy, gz, gn = _gradient(px, py, pz)
            diffuse = frit.maximum((gx * LIGHT[0] + gy * LIGHT[1] + gz * LIGHT[2]) * gn, 0.0)
            occl = 1.0 - steps.astype(frit.float32) * (1.0 / MAX_STEPS)
            img[y, x] = (AMBIENT + (1.0 - AMBIENT) * diffuse) * occl
        with frit.else_():
            img[y, x] = 0.0
    return img


@functools.lru_cache(maxsize=None)
def _jitted(h, w):
    return frit.jit(lambda: render(h, w))


# ---------------------------------------------------------------- progressive path tracer

SUN = (2.6, 2.3, 1.9)        # the light's radiance along LIGHT
ALBEDO = (0.75, 0.55, 0.35)
PT_STEPS = 48                # sphere-tracing steps of the shadow and bounce rays


def _rand(state):
    """A uniform float in [0, 1) from the uint32 kernel variable state (xorshift32), advanced."""
    v = state.get()
    v = v ^ (v << 13)
    v = v ^ (v >> 17)
    v = v ^ (v << 5)
    state.set(v)
    return (v >> 8).astype(frit.float32) * (1.0 / 16777216.0)


def _march(ox, oy, oz, dx, dy, dz, steps):
    """Sphere-traces from o along the unit direction d: (hit, t) kernel variables."""
    t = frit.var(0.0, dtype=frit.float32)
    hit = frit.var(False, dtype=frit.bool)
    with frit.loop(steps):
        d = _de(ox + dx * t, oy + dy * t, oz + dz * t)
        with frit.if_(d < HIT_EPS):
            hit.set(True)
            frit.break_()
        t.set(t + d)
        with frit.if_(t > T_MAX):
            frit.break_()
    return hit, t


def _sky(dy):
    """Sky radiance (r, g, b) for a ray's y direction: horizon haze to a blue zenith."""
    k = frit.minimum(frit.maximum(dy * 0.5 + 0.5, 0.0), 1.0)
    return tuple(a + (b - a) * k for a, b in ((0.85, 0.25), (0.85, 0.45), (0.9, 0.85)))


def render_pt(h, w, frame):
    """One path-traced sample per pixel, (h, w, 4): RGB radiance of a jittered primary ray
    (miss: the sky; hit: the sun through a shadow ray plus one cosine-weighted bounce to the sky,
    times the albedo) and, in channel 3, whether it hit. frame seeds the random numbers."""
    img = frit.zeros((h, w, 4), dtype=frit.float32)
    with frit.kernel((h, w), name="mandelbulb_pt") as (y, x):
        seed = (y * w + x).astype(frit.uint32) * 2654435761 + frame.astype(frit.uint32) * 2246822519 + 1
        state = frit.var(seed ^ (seed >> 15), dtype=frit.uint32)
        _rand(state)
        s = 2.0 / max(h, w)
        u = (x.astype(frit.float32) + _rand(state) - w * 0.5) * s
        v = (h * 0.5 - y.astype(frit.float32) - _rand(state)) * s
        inv = 1.0 / frit.sqrt(u * u + v * v + FOCAL * FOCAL)
        dx, dy, dz = u * inv, v * inv, FOCAL * inv
        hit, t = _march(CAM[0], CAM[1], CAM[2], dx, dy, dz, MAX_STEPS)
        rgb = [frit.var(0.0, dtype=frit.float32) for _ in range(3)]
        with frit.if_(hit.get()):
            px, py, pz = CAM[0] + dx * t, CAM[1] + dy * t, CAM[2] + dz * t
            gx, gy, gz, gn = _gradient(px, py, pz)
            nx, ny, nz = gx * gn, gy * gn, gz * gn
            ox, oy, oz = px + nx * (4 * HIT_EPS), py + ny * (4 * HIT_EPS), pz + nz * (4 * HIT_EPS)
            # the sun: lit unless the shadow ray hits
            lit = frit.maximum(nx * LIGHT[0] + ny * LIGHT[1] + nz * LIGHT[2], 0.0)
            shadow, _ = _march(ox, oy, oz, LIGHT[0], LIGHT[1], LIGHT[2], PT_STEPS)
            sun = frit.where(shadow.get(), 0.0, lit)
            # a cosine-weighted direction about n: a tangent frame, then the disc sample lifted
            a = 6.2831853 * _rand(state)
            r2 = _rand(state)
            sr = frit.sqrt(r2)
            side = frit.abs(nx) > 0.5
            ux, uy, uz = frit.where(side, 0.0, 1.0), frit.where(side, 1.0, 0.0), 0.0 * nx
            tx, ty, tz = uy * nz - uz * ny, uz * nx - ux * nz, ux * ny - uy * nx
            tn = 1.0 / frit.sqrt(tx * tx + ty * ty + tz * tz)
            tx, ty, tz = tx * tn, ty * tn, tz * tn
            bx, by, bz = ny * tz - nz * ty, nz * tx - nx * tz, nx * ty - ny * tx
            c, sn, up = frit.cos(a) * sr, frit.sin(a) * sr, frit.sqrt(1.0 - r2)
            rx, ry, rz = tx * c + bx * sn + nx * up, ty * c + by * sn + ny * up, tz * c + bz * sn + nz * up
            bounce, _ = _march(ox, oy, oz, rx, ry, rz, PT_STEPS)
            sky = _sky(ry)
            for ch in range(3):
                rgb[ch].set(ALBEDO[ch] * (SUN[ch] * sun + frit.where(bounce.get(), 0.0, sky[ch])))
            img[y, x, 3] = 1.0
        with frit.else_():
            sky = _sky(dy)
            for ch in range(3):
                rgb[ch].set(sky[ch])
            img[y, x, 3] = 0.0
        for ch in range(3):
            img[y, x, ch] = rgb[ch].get()
    return img


@functools.lru_cache(maxsize=None)
def _jitted_pt(h, w):
    return frit.jit(lambda frame: render_pt(h, w, frame))


def path_trace(h, w, samples, first=0):
    """The mean of `samples` path-traced frames (seeds first, first + 1, ...): (h, w, 4)."""
    f = _jitted_pt(h, w)
    acc = np.zeros((h, w, 4), np.float64)
    for k in range(samples):
        acc += np.asarray(f(np.int32(first + k)))
    return (acc / samples).astype(np.float32)


def progressive(size, scale=2, max_frames=200, frames_dir=None):
    """The path tracer in a frit.window, a sample per pixel a frame, the image refining."""
    f = _jitted_pt(size, size)
    acc = np.zeros((size, size, 3), np.float64)
    with frit.window.Window(size, size, "frit: Mandelbulb, path traced", scale=scale, tonemap="aces",
                            gamma="srgb", max_frames=max_frames, frames_dir=frames_dir) as win:
        k = 0
        while win.running:
            if win.button("restart"):
                acc[:], k = 0, 0
            acc += np.asarray(f(np.int32(k)))[..., :3]
            k += 1
            win.text(f"{k} samples per pixel")
            win.show(acc / k)


# ---------------------------------------------------------------- numpy reference

def _de_np(px, py, pz):
    zx, zy, zz = px.copy(), py.copy(), pz.copy()
    dr = np.ones_like(px)
    r = np.zeros_like(px)
    live = np.ones(px.shape, bool)
    with np.errstate(all="ignore"):
        for _ in range(ITERS):
            rr = np.sqrt(zx * zx + zy * zy + zz * zz)
            r = np.where(live, rr, r)
            live &= ~(rr > F32(BAILOUT))
            theta = np.arccos(np.clip(zz / rr, F32(-1), F32(1))) * F32(POWER)
            phi = np.arctan2(zy, zx) * F32(POWER)
            r2 = rr * rr
            r4 = r2 * r2
            zr = r4 * r4
            st = np.sin(theta)
            dr = np.where(live, r4 * r2 * rr * F32(POWER) * dr + F32(1), dr)
            zx, zy, zz = (np.where(live, zr * st * np.cos(phi) + px, zx),
                          np.where(live, zr * st * np.sin(phi) + py, zy),
                          np.where(live, zr * np.cos(theta) + pz, zz))
        return F32(0.5) * np.log(r) * r / dr


def render_numpy(h, w):
    """The same algorithm, vectorised over pixels in float32 numpy."""
    y, x = np.indices((h, w), dtype=np.float32)
    s = F32(2.0 / max(h, w))
    u = (x + F32(0.5) - F32(w * 0.5)) * s
    v = (F32(h * 0.5) - y - F32(0.5)) * s
    inv = F32(1) / np.sqrt(u * u + v * v + F32(FOCAL * FOCAL))
    dx, dy, dz = u * inv, v * inv, F32(FOCAL) * inv
    t = np.zeros((h, w), F32)
    steps = np.zeros((h, w), np.int32)
    hit = np.zeros((h, w), bool)
    live = np.ones((h, w), bool)
    for _ in range(MAX_STEPS):
        d = _de_np(F32(CAM[0]) + dx * t, F32(CAM[1]) + dy * t, F32(CAM[2]) + dz * t)
        now = live & (d < F32(HIT_EPS))
        hit |= now
        live &= ~now
        t = np.where(live, t + d, t)
        steps += live
        live &= ~(t > F32(T_MAX))
    px, py, pz = F32(CAM[0]) + dx * t, F32(CAM[1]) + dy * t, F32(CAM[2]) + dz * t
    hh = F32(NORMAL_H)
    gx = _de_np(px + hh, py, pz) - _de_np(px - hh, py, pz)
    gy = _de_np(px, py + hh, pz) - _de_np(px, py - hh, pz)
    gz = _de_np(px, py, pz + hh) - _de_np(px, py, pz - hh)
    with np.errstate(all="ignore"):
        gn = F32(1) / np.sqrt(gx * gx + gy * gy + gz * gz + F32(1e-20))
        diffuse = np.maximum((gx * F32(LIGHT[0]) + gy * F32(LIGHT[1]) + gz * F32(LIGHT[2])) * gn, F32(0))
        occl = F32(1) - steps.astype(F32) * F32(1.0 / MAX_STEPS)
        shade = (F32(AMBIENT) + F32(1 - AMBIENT) * diffuse) * occl
    return np.where(hit, shade, F32(0)).astype(F32)


def compare(a, b):
    """Differences between two renders: (fraction of pixels whose hit/miss differs, fraction of
    pixels differing by more than 0.05, mean absolute difference)."""
    return (float(np.mean((a > 0) != (b > 0))), float(np.mean(np.abs(a - b) > 0.05)),
            float(np.mean(np.abs(a - b))))


def check(size=48):
    """Renders size x size with frit and numpy; asserts they agree. Rays grazing the surface may
    take another branch after last-bit differences of the libm functions (acos, atan2, sin,
    log), so a few pixels may differ; the bulk must match closely."""
    got = np.asarray(_jitted(size, size)())
    ref = render_numpy(size, size)
    miss, far, mad = compare(got, ref)
    hits = float(np.mean(ref > 0))
    assert 0.2 < hits < 0.9, "the reference render looks wrong (hit fraction %.2f)" % hits
    assert miss <= 0.01 and far <= 0.02 and mad <= 0.01, (miss, far, mad)
    return got, ref, (miss, far, mad)


def colorize(shade):
    """Shades to RGB: a warm tint on the surface, a dark blue gradient behind."""
    h, w = shade.shape
    surf = np.stack([shade, shade ** 1.3 * 0.85, shade ** 2.0 * 0.6], -1)
    bg = np.zeros((h, w, 3), np.float32)
    bg[..., 2] = np.linspace(0.25, 0.05, h, dtype=np.float32)[:, None]
    bg[..., 1] = bg[..., 2] * 0.4
    rgb = np.where((shade > 0)[..., None], surf, bg)
    return (np.clip(rgb, 0, 1) * 255 + 0.5).astype(np.uint8)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=512, help="image size (n x n)")
    ap.add_argument("--out", default="mandelbulb.png")
    ap.add_argument("--check-size", type=int, default=48)
    ap.add_argument("--samples", type=int, default=0, help="path-trace with this many samples per pixel")
    ap.add_argument("--window", action="store_true", help="path-trace progressively in a frit.window")
    a = ap.parse_args(argv)
    if a.window:
        return progressive(a.n if a.n <= 384 else 256)
    if a.samples:
        t0 = time.perf_counter()
        img = path_trace(a.n, a.n, a.samples)
        dt = time.perf_counter() - t0
        frit.image.save(img[..., :3], a.out, tonemap="aces", gamma="srgb")
        print("path-traced %dx%d, %d samples per pixel, in %.1f s, wrote %s" % (a.n, a.n, a.samples, dt, a.out))
        return
    _, _, (miss, far, mad) = check(a.check_size)
    print("checked %dx%d against numpy: %.2f%% pixels hit/miss differently, %.2f%% differ by > 0.05, "
          "mean |diff| %.4f" % (a.check_size, a.check_size, 100 * miss, 100 * far, mad))
    f = _jitted(a.n, a.n)
    f()
    t0 = time.perf_counter()
    img = np.asarray(f())
    dt = time.perf_counter() - t0
    frit.image.save(colorize(img), a.out)
    print("rendered %dx%d in %.1f ms (%d hit pixels), wrote %s" % (a.n, a.n, 1e3 * dt, int((img > 0).sum()), a.out))


if __name__ == "__main__":
    main()
