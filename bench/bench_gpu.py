"""frit on a GPU (frit.jit(device="cuda"), FRIT_BENCH_DEVICE overrides) against PyTorch on the same
GPU: torch eager, torch.compile and cuBLAS/cuDNN (TF32 off), on the workloads of issue 12: n-body
(vectorised and explicit), softmax 4096^2, an elementwise chain, reduce_sum, matmul 4096^2 fp32
and conv2d. Each result is checked against a float64 numpy oracle.

frit's programs take and return host arrays, so two times are given for frit:
- "value": the sum of its kernels' times for one call (frit.profile, each kernel waited for), set
  against torch's time with its tensors already on the GPU (CUDA events over repeated calls);
- "e2e_ms": one whole call, host copies included, beside torch's "peer_e2e_ms" (numpy in, the
  op, numpy out).
frit runs as users call it, frit.jit with default options (symbolic sizes); "static_value" and
"static_kernels" are the same with dynamic=False (one compilation per shape).
The bandwidth limit is a device-to-device copy through torch (bytes read + written), measured in
the same run. Prints one JSON line per (workload, peer), as bench/run expects.
Usage: bench_gpu.py [NAME...] (workloads whose name contains a NAME); FRIT_BENCH_NO_PEER=1 times
frit alone; FRIT_BENCH_SMALL=1 shrinks
every size (a dry run without a GPU: FRIT_BENCH_DEVICE=opencl FRIT_BENCH_TORCH_DEVICE=cpu)."""
import json
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))
sys.path.insert(0, os.path.join(ROOT, "examples"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import frit  # noqa: E402
from bench_frameworks import frit_fn  # noqa: E402
from frameworks import _key, _torch_fns  # noqa: E402
from workloads import DT, EPS, chain_np, conv_np, softmax_np  # noqa: E402

DEVICE = os.environ.get("FRIT_BENCH_DEVICE", "cuda")
TDEV = os.environ.get("FRIT_BENCH_TORCH_DEVICE", "cuda")
SMALL = os.environ.get("FRIT_BENCH_SMALL") == "1"
REPS = 10


def _size(big, small):
    return small if SMALL else big


def med(ts):
    return float(np.median(ts))


def frit_times(f, ins):
    """(kernel ms, e2e ms, kernel count, outputs) of frit's compiled f on host inputs."""
    out = f(*ins)  # compile
    out = f(*ins)
    e2e = []
    for _ in range(REPS):
        t0 = time.perf_counter()
        out = f(*ins)
        out = [np.asarray(o) for o in (out if isinstance(out, tuple) else (out,))]
        e2e.append(time.perf_counter() - t0)
    kern, nk = [], 0
    for _ in range(3):
        with frit.profile() as p:
            f(*ins)
        ks = p.kernels()
        nk = len(ks)
        kern.append(sum(k["dur"] for k in ks) / 1e3)
    return min(kern), 1e3 * med(e2e), nk, out


def torch_ms(torch, fn, reps=REPS):
    """ms per call of fn on the GPU (CUDA events around `reps` calls, after warm-up)."""
    if TDEV != "cuda":
        fn()
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        return 1e3 * (time.perf_counter() - t0) / reps
    fn()
    fn()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(reps):
        fn()
    b.record()
    torch.cuda.synchronize()
    return a.elapsed_time(b) / reps


def check(got, ref, rtol, atol):
    """Each output against the oracle; an oracle of fewer rows (large n-body) checks those rows."""
    got = got if isinstance(got, (tuple, list)) else (got,)
    ok = len(got) == len(ref)
    for g, r in zip(got, ref):
        g = np.asarray(g, np.float64)
        if r.ndim and g.ndim == r.ndim and g.shape[1:] == r.shape[1:] and g.shape[0] > r.shape[0]:
            g = g[:r.shape[0]]
        ok = ok and g.shape == r.shape and bool(np.allclose(g, r, rtol=rtol, atol=atol))
    return ok


def torch_step(name, torch):
    """The workload in torch (tensors on TDEV): bench/peers/frameworks.py's version."""
    if name.startswith("scale"):
        return lambda x: x * 2.0 + 1.0
    return _torch_fns(torch)[_key(name)]


def frit_step(name):
    """frit's version: bench_frameworks.py's, plus the scale-add and the explicit n-body."""
    if name.startswith("scale"):
        return lambda x: x * 2.0 + 1.0
    if name.startswith("nbody_explicit"):
        import nbody_explicit
        return nbody_explicit.step_explicit
    return frit_fn(name)


def nbody_ref(x, v):
    """float64 oracle of the first 1024 bodies (all N act on them): the whole (N, N, 3) of
    N = 65536 would not fit, and check() compares those rows."""
    x64 = x.astype(np.float64)
    m = min(len(x), 1024)
    dx = x64[None, :, :] - x64[:m, None, :]
    d2 = np.sum(dx * dx, axis=-1, keepdims=True) + float(EPS)
    v2 = v[:m] + np.sum(dx / d2 ** 1.5, axis=1) * float(DT)
    return x64[:m] + v2 * float(DT), v2


def workloads():
    rng = np.random.default_rng(0)
    nv = _size(1 << 26, 1 << 16)
    mm = _size(4096, 256)
    sm = _size(4096, 256)
    vec = rng.random(nv, dtype=np.float32)
    conv_x = rng.random(_size((32, 64, 56, 56), (2, 8, 12, 12)), dtype=np.float32) - 0.5
    conv_w = rng.random(_size((64, 64, 3, 3), (8, 8, 3, 3)), dtype=np.float32) - 0.5
    w = [
        # name, inputs, oracle, rtol, atol, bytes moved (for GB/s) or flop (for GFLOP/s)
        ("elementwise_chain_exp", (vec,), lambda x: (chain_np(x.astype(np.float64), True),), 1e-5, 1e-6,
         ("GB/s", 8 * nv)),
        # the chain's bytes without its exp: what frit's plain elementwise kernel moves
        ("scale_add", (vec,), lambda x: (x.astype(np.float64) * 2 + 1,), 1e-6, 1e-6, ("GB/s", 8 * nv)),
        ("reduce_sum", (vec,), lambda x: (np.sum(x, dtype=np.float64),), 1e-4, 0.0, ("GB/s", 4 * nv)),
        ("softmax_%d" % sm, (rng.random((sm, sm), dtype=np.float32) * 8 - 4,),
         lambda x: (softmax_np(x.astype(np.float64)),), 1e-4, 1e-6, ("GB/s", 8 * sm * sm)),
        ("matmul_%d" % mm, (rng.random((mm, mm), dtype=np.float32) - 0.5, rng.random((mm, mm), dtype=np.float32) - 0.5),
         lambda a, b: (a.astype(np.float64) @ b.astype(np.float64),), 1e-3, 1e-3, ("GFLOP/s", 2 * mm ** 3)),
        ("conv2d_32x64x56", (conv_x, conv_w), lambda x, w: (conv_np(x, w),), 1e-3, 1e-3,
         ("GFLOP/s", 2 * conv_x.size * conv_w.shape[0] * 9)),
    ]
    for n in (_size(4096, 256), _size(65536, 512)):
        x = rng.random((n, 3), dtype=np.float32)
        v = np.zeros((n, 3), np.float32)
        for kind in ("nbody", "nbody_explicit"):
            w.append(("%s_%d" % (kind, n), (x, v), nbody_ref, 1e-3, 1e-4, ("GFLOP/s", 20 * n * n)))
    return w


def bandwidth(torch):
    """GB/s of a device-to-device copy of 1 GiB (read + written)."""
    if TDEV != "cuda":
        return None
    a = torch.empty(1 << 28, dtype=torch.float32, device="cuda")
    b = torch.empty_like(a)
    ms = torch_ms(torch, lambda: b.copy_(a), reps=20)
    return 2 * a.numel() * 4 / ms / 1e6


def emit(rec):
    print(json.dumps(rec), flush=True)


def main(names):
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    bw = bandwidth(torch)
    gpu = torch.cuda.get_device_name() if TDEV == "cuda" else "cpu"
    emit({"bench": "gpu_copy_bandwidth", "value": bw and round(bw, 1), "unit": "GB/s", "peer": None,
          "peer_value": None, "device": gpu})
    for name, ins, ref, rtol, atol, (unit, work) in workloads():
        if names and not any(n in name for n in names):
            continue
        rec = {"bench": name + "_" + DEVICE, "unit": "ms", "device": gpu}
        want = ref(*ins)
        try:
            f = frit.jit(frit_step(name), device=DEVICE)
            kern, e2e, nk, out = frit_times(f, ins)
            rec.update(value=round(kern, 4), e2e_ms=round(e2e, 3), kernels=nk, ok=check(out, want, rtol, atol),
                       rate=round(work / kern / 1e6, 1), rate_unit=unit)
            if unit == "GB/s" and bw:
                rec["of_copy_bandwidth"] = round(work / kern / 1e6 / bw, 3)
            fs = frit.jit(frit_step(name), dynamic=False, device=DEVICE)
            skern, _, snk, sout = frit_times(fs, ins)
            rec.update(static_value=round(skern, 4), static_kernels=snk, static_ok=check(sout, want, rtol, atol))
        except Exception as e:  # a failing workload is reported, the others still run
            rec.update(value=rec.get("value"), error=str(e)[:400])
        if os.environ.get("FRIT_BENCH_NO_PEER") == "1":
            emit(rec)
            continue
        tins = [torch.from_numpy(a).to(TDEV) for a in ins]
        tf = torch_step(name.replace("_explicit", ""), torch)
        peers = [("torch eager", tf)]
        if TDEV == "cuda" and not name.startswith(("matmul", "conv")):  # cuBLAS / cuDNN are those peers
            peers.append(("torch.compile", torch.compile(tf)))
        if name.startswith("nbody") and ins[0].shape[0] > 8192:
            peers = peers[1:]  # eager's (N, N, 3) temporaries do not fit
        for peer, fn in peers:
            r = dict(rec, peer=peer)
            try:
                with torch.no_grad():
                    got = fn(*tins)
                    r["peer_ok"] = check([g.cpu().numpy() for g in (got if isinstance(got, tuple) else (got,))],
                                         want, rtol, atol)
                    r["peer_value"] = round(torch_ms(torch, lambda: fn(*tins)), 4)
                    if peer == "torch eager":
                        t0 = time.perf_counter()
                        g = fn(*[torch.from_numpy(a).to(TDEV) for a in ins])
                        [x.cpu().numpy() for x in (g if isinstance(g, tuple) else (g,))]
                        r["peer_e2e_ms"] = round(1e3 * (time.perf_counter() - t0), 3)
                if r.get("value"):
                    r["ratio"] = round(r["peer_value"] / r["value"], 3)
            except Exception as e:
                r.update(peer_value=None, peer_error=str(e)[:300])
            emit(r)


if __name__ == "__main__":
    main(sys.argv[1:])
