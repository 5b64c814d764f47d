"""The loop-kernel frameworks' versions of bench/peers/workloads.py (numba, taichi, warp), written
as a user of each would write them for speed: parallel outer loop, contiguous inner loop, no
temporaries the loop form does not need. Used by bench/peers/frameworks.py; each factory takes
the imported module and returns impl(workload_name, inputs) -> a function running one call."""
import numpy as np

from workloads import DT, EPS

F32 = np.float32
BLOCK = 4096  # sums of this many f32 are exact enough in f32; the blocks are added in f64


def _dispatch(name, table, ins):
    if name.startswith("elementwise"):
        key = "chain8_exp" if name.endswith("exp") else "chain8"
    else:
        key = name.split("_")[0]
    return table[key](*ins) if key in table else None


# ---------------------------------------------------------------------------------------- numba
def numba_kernels(numba, fresh=False):
    nj = numba.njit(parallel=True, fastmath=True, cache=False)
    prange = numba.prange
    dt, eps = F32(DT), F32(EPS)

    @nj
    def matmul(a, b, c):
        n, m = a.shape[0], b.shape[1]
        for i in prange(n):
            for j in range(m):
                c[i, j] = F32(0)
            for k in range(a.shape[1]):
                aik = a[i, k]
                for j in range(m):
                    c[i, j] += aik * b[k, j]

    @nj
    def conv(x, w, out):
        nb, c_in, h, wd = x.shape
        o = w.shape[0]
        for p in prange(nb * o):
            n, oc = p // o, p % o
            out[n, oc] = F32(0)
            for c in range(c_in):
                for kh in range(3):
                    for kw in range(3):
                        wv = w[oc, c, kh, kw]
                        for y in range(max(0, 1 - kh), min(h, h + 1 - kh)):
                            for xx in range(max(0, 1 - kw), min(wd, wd + 1 - kw)):
                                out[n, oc, y, xx] += wv * x[n, c, y + kh - 1, xx + kw - 1]

    @nj
    def softmax(x, out):
        for i in prange(x.shape[0]):
            m = x[i, 0]
            for j in range(x.shape[1]):
                m = max(m, x[i, j])
            s = F32(0)
            for j in range(x.shape[1]):
                e = np.exp(x[i, j] - m)
                out[i, j] = e
                s += e
            r = F32(1) / s
            for j in range(x.shape[1]):
                out[i, j] *= r

    @nj
    def reduce_sum(x):
        nblk = (x.shape[0] + BLOCK - 1) // BLOCK
        total = 0.0
        for b in prange(nblk):
            s = F32(0)
            for i in range(b * BLOCK, min(x.shape[0], (b + 1) * BLOCK)):
                s += x[i]
            total += np.float64(s)
        return total

    @nj
    def chain(x, out, with_exp):
        for i in prange(x.shape[0]):
            t = max((x[i] * F32(1.5) + F32(0.25)) * F32(0.5) - F32(0.5), F32(0))
            t = (t + F32(0.1)) * F32(-2.0)
            out[i] = np.exp(t) if with_exp else min(t, F32(-0.5))

    @nj
    def nbody(x, v, xo, vo):
        n = x.shape[0]
        for i in prange(n):
            xi, yi, zi = x[i, 0], x[i, 1], x[i, 2]
            ax = ay = az = F32(0)
            for j in range(n):
                dx, dy, dz = x[j, 0] - xi, x[j, 1] - yi, x[j, 2] - zi
                d2 = dx * dx + dy * dy + dz * dz + eps
                inv = F32(1) / (d2 * np.sqrt(d2))
                ax += dx * inv
                ay += dy * inv
                az += dz * inv
            for c, acc in ((0, ax), (1, ay), (2, az)):
                vc = v[i, c] + acc * dt
                vo[i, c] = vc
                xo[i, c] = x[i, c] + vc * dt

    def out_like(shape):
        """The output of each call: one array written by every call, or (fresh) a new one per
        call, as numpy, torch, jax and frit return (first-touch page faults included)."""
        if fresh:
            return lambda: np.empty(shape, np.float32)
        o = np.empty(shape, np.float32)
        return lambda: o

    def mm(a, b):
        c = out_like((a.shape[0], b.shape[1]))
        return lambda: (lambda o: (matmul(a, b, o), o)[1])(c())

    def cv(x, w):
        c = out_like((x.shape[0], w.shape[0], x.shape[2], x.shape[3]))
        return lambda: (lambda o: (conv(x, w, o), o)[1])(c())

    def sm(x):
        c = out_like(x.shape)
        return lambda: (lambda o: (softmax(x, o), o)[1])(c())

    def ch(e):
        def make(x):
            c = out_like(x.shape)
            return lambda: (lambda o: (chain(x, o, e), o)[1])(c())
        return make

    def nb(x, v):
        cx, cv_ = out_like(x.shape), out_like(v.shape)
        return lambda: (lambda xo, vo: (nbody(x, v, xo, vo), (xo, vo))[1])(cx(), cv_())
    table = {"matmul": mm, "conv2d": cv, "softmax": sm, "reduce": lambda x: lambda: reduce_sum(x),
             "chain8_exp": ch(True), "chain8": ch(False), "nbody": nb}
    return lambda name, ins: _dispatch(name, table, ins)


# --------------------------------------------------------------------------------------- taichi
def taichi_kernels(ti):
    arr = ti.types.ndarray()
    dt, eps = float(DT), float(EPS)

    @ti.kernel
    def matmul(a: arr, b: arr, c: arr):
        for i in range(a.shape[0]):
            for j in range(b.shape[1]):
                c[i, j] = 0.0
            for k in range(a.shape[1]):
                aik = a[i, k]
                for j in range(b.shape[1]):
                    c[i, j] += aik * b[k, j]

    @ti.kernel
    def conv(x: arr, w: arr, out: arr):
        for n, oc in ti.ndrange(x.shape[0], w.shape[0]):
            for y, xx in ti.ndrange(x.shape[2], x.shape[3]):
                out[n, oc, y, xx] = 0.0
            for c in range(x.shape[1]):
                for kh in range(3):
                    for kw in range(3):
                        wv = w[oc, c, kh, kw]
                        for y in range(ti.max(0, 1 - kh), ti.min(x.shape[2], x.shape[2] + 1 - kh)):
                            for xx in range(ti.max(0, 1 - kw), ti.min(x.shape[3], x.shape[3] + 1 - kw)):
                                out[n, oc, y, xx] += wv * x[n, c, y + kh - 1, xx + kw - 1]

    @ti.kernel
    def softmax(x: arr, out: arr):
        for i in range(x.shape[0]):
            m = x[i, 0]
            for j in range(x.shape[1]):
                m = ti.max(m, x[i, j])
            s = 0.0
            for j in range(x.shape[1]):
                e = ti.exp(x[i, j] - m)
                out[i, j] = e
                s += e
            r = 1.0 / s
            for j in range(x.shape[1]):
                out[i, j] *= r

    @ti.kernel
    def reduce_sum(x: arr) -> ti.f64:
        total = ti.cast(0.0, ti.f64)
        for b in range((x.shape[0] + BLOCK - 1) // BLOCK):
            s = 0.0
            for i in range(b * BLOCK, ti.min(x.shape[0], (b + 1) * BLOCK)):
                s += x[i]
            total += ti.cast(s, ti.f64)
        return total

    @ti.kernel
    def chain_exp(x: arr, out: arr):
        for i in range(x.shape[0]):
            t = ti.max((x[i] * 1.5 + 0.25) * 0.5 - 0.5, 0.0)
            out[i] = ti.exp((t + 0.1) * -2.0)

    @ti.kernel
    def chain_min(x: arr, out: arr):
        for i in range(x.shape[0]):
            t = ti.max((x[i] * 1.5 + 0.25) * 0.5 - 0.5, 0.0)
            out[i] = ti.min((t + 0.1) * -2.0, -0.5)

    @ti.kernel
    def nbody(x: arr, v: arr, xo: arr, vo: arr):
        for i in range(x.shape[0]):
            xi = ti.Vector([x[i, 0], x[i, 1], x[i, 2]])
            acc = ti.Vector([0.0, 0.0, 0.0])
            for j in range(x.shape[0]):
                d = ti.Vector([x[j, 0], x[j, 1], x[j, 2]]) - xi
                d2 = d.dot(d) + eps
                acc += d / (d2 * ti.sqrt(d2))
            for c in ti.static(range(3)):
                vc = v[i, c] + acc[c] * dt
                vo[i, c] = vc
                xo[i, c] = x[i, c] + vc * dt

    def two(k, shape_of):
        def make(*ins):
            o = np.empty(shape_of(*ins), np.float32)
            return lambda: (k(*ins, o), o)[1]
        return make

    def nb(x, v):
        xo, vo = np.empty_like(x), np.empty_like(v)
        return lambda: (nbody(x, v, xo, vo), (xo, vo))[1]
    table = {"matmul": two(matmul, lambda a, b: (a.shape[0], b.shape[1])),
             "conv2d": two(conv, lambda x, w: (x.shape[0], w.shape[0], x.shape[2], x.shape[3])),
             "softmax": two(softmax, lambda x: x.shape), "reduce": lambda x: lambda: reduce_sum(x),
             "chain8_exp": two(chain_exp, lambda x: x.shape), "chain8": two(chain_min, lambda x: x.shape),
             "nbody": nb}
    return lambda name, ins: _dispatch(name, table, ins)


# ----------------------------------------------------------------------------------------- warp
def warp_kernels(wp):
    dt, eps = float(DT), float(EPS)

    @wp.kernel
    def matmul(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float), c: wp.array2d(dtype=float)):
        i = wp.tid()
        m = b.shape[1]
        for j in range(m):
            c[i, j] = 0.0
        for k in range(a.shape[1]):
            aik = a[i, k]
            for j in range(m):
                c[i, j] = c[i, j] + aik * b[k, j]

    @wp.kernel
    def conv(x: wp.array4d(dtype=float), w: wp.array4d(dtype=float), out: wp.array4d(dtype=float)):
        n, oc = wp.tid()
        h, wd = x.shape[2], x.shape[3]
        for y in range(h):
            for xx in range(wd):
                out[n, oc, y, xx] = 0.0
        for c in range(x.shape[1]):
            for kh in range(3):
                for kw in range(3):
                    wv = w[oc, c, kh, kw]
                    for y in range(wp.max(0, 1 - kh), wp.min(h, h + 1 - kh)):
                        for xx in range(wp.max(0, 1 - kw), wp.min(wd, wd + 1 - kw)):
                            out[n, oc, y, xx] = out[n, oc, y, xx] + wv * x[n, c, y + kh - 1, xx + kw - 1]

    @wp.kernel
    def softmax(x: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
        i = wp.tid()
        m = x[i, 0]
        for j in range(x.shape[1]):
            m = wp.max(m, x[i, j])
        s = float(0.0)
        for j in range(x.shape[1]):
            e = wp.exp(x[i, j] - m)
            out[i, j] = e
            s = s + e
        r = 1.0 / s
        for j in range(x.shape[1]):
            out[i, j] = out[i, j] * r

    @wp.kernel
    def reduce_sum(x: wp.array(dtype=float), total: wp.array(dtype=wp.float64)):
        b = wp.tid()
        s = float(0.0)
        for i in range(b * BLOCK, wp.min(x.shape[0], (b + 1) * BLOCK)):
            s = s + x[i]
        wp.atomic_add(total, 0, wp.float64(s))

    @wp.kernel
    def chain_exp(x: wp.array(dtype=float), out: wp.array(dtype=float)):
        i = wp.tid()
        t = wp.max((x[i] * 1.5 + 0.25) * 0.5 - 0.5, 0.0)
        out[i] = wp.exp((t + 0.1) * -2.0)

    @wp.kernel
    def chain_min(x: wp.array(dtype=float), out: wp.array(dtype=float)):
        i = wp.tid()
        t = wp.max((x[i] * 1.5 + 0.25) * 0.5 - 0.5, 0.0)
        out[i] = wp.min((t + 0.1) * -2.0, -0.5)

    @wp.kernel
    def nbody(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), xo: wp.array(dtype=wp.vec3),
              vo: wp.array(dtype=wp.vec3)):
        i = wp.tid()
        xi = x[i]
        acc = wp.vec3(0.0, 0.0, 0.0)
        for j in range(x.shape[0]):
            d = x[j] - xi
            d2 = wp.dot(d, d) + eps
            acc = acc + d / (d2 * wp.sqrt(d2))
        vc = v[i] + acc * dt
        vo[i] = vc
        xo[i] = xi + vc * dt

    dev = "cpu"

    def put(a, dtype=float):
        return wp.array(a, dtype=dtype, device=dev)

    def launch(k, dim, ins, out_shape):
        o = wp.empty(out_shape, dtype=float, device=dev)
        return lambda: (wp.launch(k, dim=dim, inputs=[*ins, o], device=dev), o)[1]

    def mm(a, b):
        return launch(matmul, a.shape[0], [put(a), put(b)], (a.shape[0], b.shape[1]))

    def cv(x, w):
        return launch(conv, (x.shape[0], w.shape[0]), [put(x), put(w)],
                      (x.shape[0], w.shape[0], x.shape[2], x.shape[3]))

    def red(x):
        xa, tot = put(x), wp.zeros(1, dtype=wp.float64, device=dev)

        def run():
            tot.zero_()
            wp.launch(reduce_sum, dim=(x.shape[0] + BLOCK - 1) // BLOCK, inputs=[xa, tot], device=dev)
            return tot
        return run

    def nb(x, v):
        xa, va = put(x, wp.vec3), put(v, wp.vec3)
        xo, vo = wp.empty(x.shape[0], dtype=wp.vec3, device=dev), wp.empty(x.shape[0], dtype=wp.vec3, device=dev)
        return lambda: (wp.launch(nbody, dim=x.shape[0], inputs=[xa, va, xo, vo], device=dev), (xo, vo))[1]
    table = {"matmul": mm, "conv2d": cv, "softmax": lambda x: launch(softmax, x.shape[0], [put(x)], x.shape),
             "reduce": lambda x: (lambda f: lambda: f().numpy()[0])(red(x)),
             "chain8_exp": lambda x: launch(chain_exp, x.shape[0], [put(x)], x.shape),
             "chain8": lambda x: launch(chain_min, x.shape[0], [put(x)], x.shape), "nbody": nb}
    return lambda name, ins: _dispatch(name, table, ins)
