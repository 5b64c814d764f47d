"""The frameworks a user would pick instead of frit, each at its best on the workloads of
bench/peers/workloads.py: one framework per process (bench/bench_frameworks.py starts them), so
its thread settings are made before it is imported and a crash costs only its own lines.
Usage: frameworks.py FRAMEWORK [WORKLOAD...]; FRAMEWORK is one of FRAMEWORKS below. Prints one
JSON line per workload: {"workload", "framework", "peer", "median_s", "best_s", "first_s", "ok",
"max_abs_err", "note"}, or {"workload", "framework", "skipped": why} (not installed, or the
workload has no implementation), or an "error" when it failed. Threads: the count frit runs on
(FRIT_THREADS, else all cores), given to each framework through its own knob (peer_note says
which); warp runs CPU kernels on one thread whatever it is given."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from workloads import BY_NAME, DT, EPS, threads, timed  # noqa: E402

FRAMEWORKS = ["numpy", "torch_eager", "torch_compile", "jax_jit", "numba", "numba_fresh", "taichi", "warp"]
T = threads()


def _np_sync(r):
    return r


# ---------------------------------------------------------------------------------------- numpy
def setup_numpy():
    import numpy as np
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from blas_info import blas_note
    from numpy_tensor import conv_im2col
    from workloads import chain_np, softmax_np
    import nbody_numpy

    def impl(name, ins):
        if name.startswith("matmul"):
            a, b = ins
            return lambda: a @ b
        if name.startswith("conv2d"):
            return lambda: conv_im2col(*ins)
        if name.startswith("softmax"):
            return lambda: softmax_np(ins[0])
        if name.startswith("reduce"):
            return lambda: np.sum(ins[0])
        if name.startswith("elementwise"):
            e = name.endswith("exp")
            return lambda: chain_np(ins[0], e)
        if name.startswith("nbody"):
            return lambda: nbody_numpy.step(*ins)
        return None
    return ("numpy %s" % np.__version__, impl, _np_sync,
            "one thread except matmul and conv (%s); n-body materialises (N, N, 3)" % blas_note())


# ---------------------------------------------------------------------------------------- torch
def _torch_fns(torch):
    F = torch.nn.functional

    def chain(t, e):
        t = torch.clamp_min((t * 1.5 + 0.25) * 0.5 - 0.5, 0.0)
        t = (t + 0.1) * -2.0
        return torch.exp(t) if e else torch.clamp_max(t, -0.5)

    def nbody(x, v):
        dx = x[None, :, :] - x[:, None, :]
        d2 = torch.sum(dx * dx, dim=-1, keepdim=True) + float(EPS)
        f = torch.sum(dx / d2 ** 1.5, dim=1)
        v2 = v + f * float(DT)
        return x + v2 * float(DT), v2
    return {"matmul": lambda a, b: a @ b, "conv2d": lambda x, w: F.conv2d(x, w, padding=1),
            "softmax": lambda x: torch.softmax(x, dim=-1), "reduce": lambda x: torch.sum(x),
            "chain8_exp": lambda x: chain(x, True), "chain8": lambda x: chain(x, False), "nbody": nbody}


def _key(name):
    if name.startswith("elementwise"):
        return "chain8_exp" if name.endswith("exp") else "chain8"
    return name.split("_")[0]


def _setup_torch(compiled):
    import torch
    torch.set_num_threads(T)
    fns = _torch_fns(torch)

    def impl(name, ins):
        f = fns[_key(name)]
        if compiled:  # a fresh compiled function per workload, static shapes: its best code
            f = torch.compile(f, dynamic=False)
        ts = [torch.from_numpy(a) for a in ins]

        def run():
            with torch.no_grad():
                return f(*ts)
        return run
    how = ("torch.compile(dynamic=False), inductor's default mode (C++/OpenMP kernels; matmul and conv "
           "stay library calls)" if compiled else "eager ops (matmul/conv on oneDNN/MKL)")
    return ("torch %s %s" % (torch.__version__, "compile" if compiled else "eager"), impl, _np_sync,
            "%s; torch.set_num_threads(%d); n-body in the vectorised formulation" % (how, T))


def setup_torch_eager():
    return _setup_torch(False)


def setup_torch_compile():
    return _setup_torch(True)


# ------------------------------------------------------------------------------------------ jax
def setup_jax_jit():
    note = "XLA CPU"
    if T == 1:  # XLA has no thread-count flag beyond this one-thread switch
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                                   " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1").strip()
        note += " with --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    cpus = sorted(os.sched_getaffinity(0))
    if T < len(cpus):  # and the process is kept to T cores
        os.sched_setaffinity(0, set(cpus[:T]))
        note += ", pinned to %d core(s)" % T
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_platforms", "cpu")

    def chain(t, e):
        t = jnp.maximum((t * 1.5 + 0.25) * 0.5 - 0.5, 0.0)
        t = (t + 0.1) * -2.0
        return jnp.exp(t) if e else jnp.minimum(t, -0.5)

    def nbody(x, v):
        dx = x[None, :, :] - x[:, None, :]
        d2 = jnp.sum(dx * dx, axis=-1, keepdims=True) + float(EPS)
        f = jnp.sum(dx / d2 ** 1.5, axis=1)
        v2 = v + f * float(DT)
        return x + v2 * float(DT), v2

    def conv(x, w):
        return jax.lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)),
                                            dimension_numbers=("NCHW", "OIHW", "NCHW"))
    fns = {"matmul": lambda a, b: a @ b, "conv2d": conv, "softmax": lambda x: jax.nn.softmax(x, axis=-1),
           "reduce": jnp.sum, "chain8_exp": lambda x: chain(x, True), "chain8": lambda x: chain(x, False),
           "nbody": nbody}

    def impl(name, ins):
        f = jax.jit(fns[_key(name)])
        args = [jax.device_put(a) for a in ins]
        return lambda: f(*args)
    return ("jax %s jit" % jax.__version__, impl, jax.block_until_ready,
            "jax.jit on %s; inputs already on the device; n-body in the vectorised formulation" % note)


# ---------------------------------------------------------------------------------------- numba
def _setup_numba(fresh):
    os.environ["NUMBA_NUM_THREADS"] = str(T)
    import numba
    from frameworks_kernels import numba_kernels
    k = numba_kernels(numba, fresh)
    out = ("a new output array per call (np.empty inside the call, as frit, numpy, torch and jax return)"
           if fresh else "outputs preallocated once and overwritten by every call")
    return ("numba %s" % numba.__version__, k, _np_sync,
            "@njit(parallel=True, fastmath=True) loops over prange, NUMBA_NUM_THREADS=%d (%s layer); %s; "
            "matmul i-k-j, conv direct (no im2col), n-body pairwise without the (N, N, 3) temporary, "
            "sum accumulated in float64" % (T, numba.config.THREADING_LAYER, out))


def setup_numba():
    return _setup_numba(False)


def setup_numba_fresh():
    return _setup_numba(True)


# --------------------------------------------------------------------------------------- taichi
def setup_taichi():
    import taichi as ti
    ti.init(arch=ti.cpu, cpu_max_num_threads=T, default_fp=ti.f32, offline_cache=False, log_level=ti.WARN)
    from frameworks_kernels import taichi_kernels
    return ("taichi %s" % ".".join(map(str, ti.__version__)), taichi_kernels(ti), lambda r: (ti.sync(), r)[1],
            "@ti.kernel on arch=cpu, cpu_max_num_threads=%d, numpy arrays passed as ti.types.ndarray; "
            "outermost loop parallel; outputs preallocated once; matmul i-k-j, conv direct, n-body pairwise, "
            "sum in float64" % T)


# ----------------------------------------------------------------------------------------- warp
def setup_warp():
    import warp as wp
    wp.config.quiet = True
    if os.environ.get("FRIT_PEER_CACHE_DIR"):  # a cold kernel cache, as the other frameworks get
        wp.config.kernel_cache_dir = os.path.join(os.environ["FRIT_PEER_CACHE_DIR"], "warp")
    wp.init()
    from frameworks_kernels import warp_kernels
    return ("warp %s" % wp.config.version, warp_kernels(wp), lambda r: (wp.synchronize(), r)[1],
            "@wp.kernel on device='cpu': warp runs CPU kernels on ONE thread (no thread knob), whatever "
            "FRIT_THREADS is; outputs preallocated once; matmul i-k-j per row, conv direct, n-body pairwise, "
            "sum in float64 blocks; the first workload's first call compiles the whole module")


def main():
    fw, names = sys.argv[1], sys.argv[2:] or list(BY_NAME)
    try:
        peer, impl, sync, note = globals()["setup_" + fw]()
    except Exception as e:  # not installed or cannot start: every workload is skipped, nothing crashes
        why = "%s unavailable: %s: %s" % (fw, type(e).__name__, str(e)[:200])
        for n in names:
            print(json.dumps({"workload": n, "framework": fw, "skipped": why}), flush=True)
        return
    import numpy as np
    for n in names:
        w = BY_NAME[n]
        rec = {"workload": n, "framework": fw, "peer": peer, "note": note, "threads": T}
        try:
            ins = w.inputs()
            fn = impl(n, ins)
            if fn is None:
                rec["skipped"] = "%s: no implementation of %s" % (fw, n)
            else:
                med, best, first = timed(fn, sync)
                ok, err = w.check(jsonable(fn(), np), w.ref(*ins))
                rec.update(median_s=med, best_s=best, first_s=first, ok=ok, max_abs_err=err)
        except Exception as e:  # one workload failing leaves the others measured
            rec["error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
        print(json.dumps(rec), flush=True)


def jsonable(r, np):
    """The outputs as numpy arrays (torch tensors, jax arrays, warp arrays)."""
    r = r if isinstance(r, (tuple, list)) else (r,)
    out = []
    for a in r:
        if hasattr(a, "detach"):
            a = a.detach().numpy()
        elif hasattr(a, "numpy") and not isinstance(a, np.ndarray):
            a = a.numpy()
        out.append(np.asarray(a))
    return tuple(out)


if __name__ == "__main__":
    main()
