"""One rank of the multi-rank tests (tests/python/test_distributed.py starts it under mpirun).
Each case checks its results against numpy on every rank (each rank can compute every rank's
data: it is seeded by the rank) and exits nonzero on a mismatch; some write results for the
test to compare with a one-process run."""
import json
import os
import sys
import time

import numpy as np

import frit
import frit.distributed as dist

DTYPES = ["float32", "float64", "int32", "int64", "uint8", "bool", "float16", "complex64"]
SHAPES = [(), (0,), (5,), (4, 3), (2, 3, 4)]
failures = []


def check(what, got, want, exact=False):
    got, want = np.asarray(got), np.asarray(want)
    ok = got.shape == want.shape and got.dtype == want.dtype
    if ok and got.size:
        if exact or got.dtype.kind in "biu":
            ok = np.array_equal(got, want)
        else:
            tol = 2e-3 if got.dtype == np.float16 else 1e-5
            ok = np.allclose(got.astype(np.complex128), want.astype(np.complex128), rtol=tol, atol=tol, equal_nan=True)
    if not ok:
        failures.append("%s: got %s %s %r, want %s %s %r" % (what, got.dtype, got.shape, got.ravel()[:6],
                                                             want.dtype, want.shape, want.ravel()[:6]))


def data(q, shape, dt, salt=0):
    rng = np.random.default_rng(1000 * q + 7 * len(shape) + salt)
    if dt == "bool":
        return rng.random(shape) < 0.3
    if dt.startswith("int") or dt.startswith("uint"):
        return rng.integers(0, 5, shape).astype(dt)
    x = rng.standard_normal(shape)
    if dt.startswith("complex"):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dt)


def reduce_np(xs, op, dt):
    if dt == "bool" and op != "mean":
        return (np.logical_or.reduce(xs) if op in ("sum", "max") else np.logical_and.reduce(xs)).astype(bool)
    acc = [x.astype(np.float32) if dt == "float16" else x for x in xs]
    f = {"sum": np.add, "prod": np.multiply, "max": np.fmax, "min": np.fmin}
    if op == "mean":
        r = np.add.reduce([a.astype(np.complex128 if dt.startswith("complex") else np.float64) for a in acc]) / len(xs)
        return r.astype(dt) if dt.startswith(("float", "complex")) else r
    r = acc[0]
    for a in acc[1:]:
        r = f[op](r, a)
    return r.astype(dt)


def case_collectives():
    r, P = dist.rank(), dist.size()
    for mode in ("eager", "jit"):
        wrap = (lambda f: frit.jit(f)) if mode == "jit" else (lambda f: f)
        for dt in DTYPES:
            for shape in SHAPES:
                xs = [data(q, shape, dt) for q in range(P)]
                x = frit.asarray(xs[r])
                ops = ["sum", "prod", "max", "min", "mean"] if not dt.startswith("complex") else ["sum", "prod", "mean"]
                for op in ops:
                    got = wrap(lambda v, op=op: dist.all_reduce(v, op))(x)
                    check("%s all_reduce %s %s %s" % (mode, op, dt, shape), got, reduce_np(xs, op, dt))
                got = wrap(lambda v: dist.broadcast(v, P - 1))(x)
                check("%s broadcast %s %s" % (mode, dt, shape), got, xs[P - 1], exact=True)
                got = wrap(lambda v: dist.shift(v, 1))(x)
                check("%s ring shift %s %s" % (mode, dt, shape), got, xs[(r - 1) % P], exact=True)
                got = wrap(lambda v: dist.shift(v, -1, periodic=False))(x)
                want = xs[r + 1] if r + 1 < P else np.zeros(shape, dt)
                check("%s edge shift %s %s" % (mode, dt, shape), got, want, exact=True)
                if shape:
                    for axis in (0, -1):
                        got = wrap(lambda v, a=axis: dist.all_gather(v, a))(x)
                        check("%s all_gather axis %d %s %s" % (mode, axis, dt, shape), got,
                              np.concatenate(xs, axis), exact=True)
            big = [data(q, (2 * P, 3), dt, 1) for q in range(P)]
            for op in (["sum", "max"] if not dt.startswith("complex") else ["sum"]):
                got = wrap(lambda v, op=op: dist.reduce_scatter(v, op, 0))(frit.asarray(big[r]))
                check("%s reduce_scatter %s %s" % (mode, op, dt), got, reduce_np(big, op, dt)[2 * r:2 * r + 2])
            got = wrap(lambda v: dist.reduce_scatter(v, "sum", 1))(frit.asarray(data(r, (3, 2 * P), dt, 2)))
            want = reduce_np([data(q, (3, 2 * P), dt, 2) for q in range(P)], "sum", dt)[:, 2 * r:2 * r + 2]
            check("%s reduce_scatter axis 1 %s" % (mode, dt), got, want)
    # NaN wins in max and min, whichever rank holds it
    x = np.arange(4, dtype=np.float32) + r
    if r == P - 1:
        x[1] = np.nan
    for op in ("max", "min"):
        got = np.asarray(dist.all_reduce(frit.asarray(x), op))
        if not np.isnan(got[1]) or np.isnan(got[0]):
            failures.append("NaN in all_reduce %s: %r" % (op, got))
    # several collectives in one compiled program, in order
    f = frit.jit(lambda v: dist.all_reduce(v * 2, "sum") + dist.shift(v, 1) - dist.all_gather(v, 0)[:v.shape[0]])
    xs = [data(q, (6,), "float64", 3) for q in range(P)]
    check("jit program of three collectives", f(frit.asarray(xs[r])),
          2 * sum(xs) + xs[(r - 1) % P] - xs[0])


def case_grad():
    r, P = dist.rank(), dist.size()
    c = [np.arange(5, dtype=np.float64) + q for q in range(P)]
    x = frit.asarray(np.ones(5))
    for mode in ("eager", "jit"):
        wrap = (lambda f: frit.jit(f)) if mode == "jit" else (lambda f: f)
        # the ranks' losses together: L = sum_q c_q . all_reduce(x); dL/dx_r = sum_q c_q
        g = wrap(frit.grad(lambda v: frit.sum(frit.asarray(c[r]) * dist.all_reduce(v, "sum"))))(x)
        check("%s grad of all_reduce" % mode, g, sum(c))
        # L = sum_q c_q . x_{q-1}: rank r's x went to r + 1
        g = wrap(frit.grad(lambda v: frit.sum(frit.asarray(c[r]) * dist.shift(v, 1))))(x)
        check("%s grad of a ring shift" % mode, g, c[(r + 1) % P])
        g = wrap(frit.grad(lambda v: frit.sum(frit.asarray(np.tile(c[r], P)) * dist.all_gather(v, 0))))(x)
        check("%s grad of all_gather" % mode, g, sum(c))


def heat_step(u, alpha=0.1):
    """One explicit step of the heat equation on a periodic grid (the one-process form)."""
    lap = frit.roll(u, 1, 0) + frit.roll(u, -1, 0) + frit.roll(u, 1, 1) + frit.roll(u, -1, 1) - 4 * u
    return u + alpha * lap


def sharded_heat_step(u, alpha=0.1):
    s = dist.Sharded(u, 0)
    lap = s.roll(1, 0) + s.roll(-1, 0) + s.roll(1, 1) + s.roll(-1, 1) - 4 * s
    return (s + alpha * lap).local


def case_heat(out):
    u0 = np.random.default_rng(5).random((32, 24))
    res = {}
    for dt in ("float32", "float64"):
        u = dist.Sharded.from_global(frit.asarray(u0.astype(dt)), 0).local
        step = frit.jit(sharded_heat_step)
        for _ in range(20):
            u = step(u)
        res[dt] = np.asarray(dist.all_gather(u, 0))
        total = float(np.asarray(dist.Sharded(u, 0).sum()))
        check("heat %s conserves the total" % dt, np.float64(total), np.float64(float(u0.astype(dt).astype(np.float64).sum())))
    if dist.rank() == 0:
        np.savez(out, **res)


def mlp_model():
    from frit import nn
    return nn.Sequential(nn.Linear(20, 32, rng=np.random.default_rng(0)), nn.GELU(),
                         nn.Linear(32, 4, rng=np.random.default_rng(1)))


def train_data(steps):
    """A global batch of 64 whose classes a linear teacher sets, the same batch every step (so
    the loss falls)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((64, 20)).astype(np.float32)
    y = np.argmax(x @ rng.standard_normal((20, 4)), axis=1).astype(np.int64)
    return np.broadcast_to(x, (steps, 64, 20)), np.broadcast_to(y, (steps, 64))


def case_train(out, steps=6):
    from frit import nn, optim
    r, P = dist.rank(), dist.size()
    X, Y = train_data(steps)
    model = mlp_model()
    if r:  # rank 0's parameters must win: the others start elsewhere
        model.load_parameters({k: np.asarray(v) + 1 for k, v in model.parameters().items()}, model.buffers())
    step = optim.compile_step(model, nn.functional.cross_entropy, optim.Adam(lr=1e-2))
    b = 64 // P
    if dist.BUCKET_BYTES < 4096:  # a bucket a gradient or two: exchanges amid the backward pass
        names = [k.name for k in step.jitted.lower(*step._args(X[0, :b], Y[0, :b])).kernels]
        exchanges = [i for i, n in enumerate(names) if "all_reduce" in n]
        matmuls = [i for i, n in enumerate(names) if "_mul_sum" in n]
        if len(exchanges) < 3 or not matmuls or exchanges[0] > matmuls[-1]:
            failures.append("no bucket's all-reduce before the backward pass's last matmul: %s" % names)
    losses = [float(np.asarray(step(X[i, r * b:(r + 1) * b], Y[i, r * b:(r + 1) * b]))) for i in range(steps)]
    ck = out + ".ckpt.safetensors"
    step.save(ck)
    other = optim.compile_step(mlp_model(), nn.functional.cross_entropy, optim.Adam(lr=1e-2))
    other.load(ck)
    for k, v in step.model.parameters().items():
        check("checkpoint %s" % k, np.asarray(other.model.parameters()[k]), np.asarray(v), exact=True)
    if r == 0:
        with open(out, "w") as f:
            json.dump(losses, f)


def case_overlap():
    """Exchanges that move while the kernels after them compute: every result is numpy's, whichever
    kernel first waits for it (a reader of the result, a writer of the memory, the end). New
    inputs each run, so that a result left from the run before cannot pass for this one."""
    r, P = dist.rank(), dist.size()

    def f(x, big):
        a = dist.all_reduce(big * 2, "sum")  # 2 MB: still moving when a + s reads it
        s = frit.sum(x)
        b = (x * 0.5) @ frit.transpose(x)  # quarters: every sum exact, in any order
        c = dist.all_reduce(b[:, :40], "max")
        d = dist.all_gather(x + 1, 0)
        e = dist.all_reduce(frit.sum(b, axis=1), "mean")
        return a + s, b, c * b[:, :40], frit.sum(d, axis=0), e

    for mode, g in (("eager", f), ("jit", frit.jit(f))):
        for i in range(3):  # a compiled program runs again on the same arena
            xs = [np.round(data(q, (96, 40), "float32", 11 + i) * 4) / 4 for q in range(P)]
            bigs = [data(q, (512, 1024), "float32", 20 + i) for q in range(P)]
            bs = [(x * 0.5) @ x.T for x in xs]
            want = [2 * sum(bigs) + xs[r].sum(), bs[r], np.max([b[:, :40] for b in bs], axis=0) * bs[r][:, :40],
                    np.concatenate([x + 1 for x in xs]).sum(axis=0), sum(b.sum(axis=1) for b in bs) / P]
            for j, (got, w) in enumerate(zip(g(frit.asarray(xs[r]), frit.asarray(bigs[r])), want)):
                check("%s run %d output %d" % (mode, i, j), got, w.astype(np.float32))


def case_mismatch():
    r = dist.rank()
    try:
        np.asarray(dist.all_reduce(frit.asarray(np.ones(4 + r, np.float32)), "sum"))
        failures.append("a collective over shapes that differ between ranks did not fail")
    except frit.FritError as e:
        msg = str(e)
        if "(4)" not in msg.replace("[4]", "(4)") and "4" not in msg:
            failures.append("mismatch message lacks the shapes: " + msg)
        print("rank %d: %s" % (r, msg), flush=True)


def case_timeout():
    r = dist.rank()
    if r == 1:  # never arrives
        time.sleep(6)
        os._exit(0)
    t = time.time()
    try:
        np.asarray(dist.all_reduce(frit.asarray(np.ones(3, np.float32)), "sum"))
        failures.append("a collective whose partner never came did not fail")
    except frit.FritError as e:
        took = time.time() - t
        print("rank %d after %.1f s: %s" % (r, took, e), flush=True)
        if took > 10 or "timed out" not in str(e):
            failures.append("timeout: %.1f s, %s" % (took, e))
    sys.stdout.flush()
    os._exit(1 if failures else 0)  # MPI's state is broken: no finalize


def case_mpi4py():
    """MPI started by mpi4py (imported first): frit joins it and agrees with mpi4py's own results."""
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    r, P = dist.rank(), dist.size()
    if (comm.Get_rank(), comm.Get_size()) != (r, P):
        failures.append("mpi4py sees rank %d of %d, frit %d of %d" % (comm.Get_rank(), comm.Get_size(), r, P))
    x = data(r, (3, 4), "float64")
    check("all_reduce against mpi4py", dist.all_reduce(frit.asarray(x)), comm.allreduce(x))
    check("all_gather against mpi4py", dist.all_gather(frit.asarray(x), 0), np.concatenate(comm.allgather(x)), exact=True)
    comm.Barrier()


def case_device():
    """A program compiled for OpenCL: its collectives go through host memory."""
    r, P = dist.rank(), dist.size()
    xs = [data(q, (40,), "float32", 4) for q in range(P)]
    f = frit.jit(lambda v: dist.all_reduce(v * 2, "sum") + dist.shift(v, 1), device="opencl")
    check("opencl program with collectives", f(frit.asarray(xs[r])), 2 * sum(xs) + xs[(r - 1) % P])


def case_dies():
    """Rank 1 exits in the middle; the others wait in a collective until mpirun ends the job."""
    if dist.rank() == 1:
        os._exit(3)
    np.asarray(dist.all_reduce(frit.asarray(np.ones(3, np.float32)), "sum"))
    failures.append("a collective with a dead partner returned")


if __name__ == "__main__":
    if sys.argv[1] == "mpi4py":
        from mpi4py import MPI  # noqa: F401  (initialises MPI before frit does)
    dist.init()
    if os.environ.get("FRIT_TEST_BUCKET_BYTES"):
        dist.BUCKET_BYTES = int(os.environ["FRIT_TEST_BUCKET_BYTES"])
    case, out = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "")
    {"collectives": case_collectives, "grad": case_grad, "heat": lambda: case_heat(out),
     "train": lambda: case_train(out), "mismatch": case_mismatch, "overlap": case_overlap, "timeout": case_timeout,
     "mpi4py": case_mpi4py, "dies": case_dies, "device": case_device}[case]()
    for f in failures:
        print("rank %d FAIL %s" % (dist.rank(), f), flush=True)
    print("rank %d of %d: %s %s" % (dist.rank(), dist.size(), case, "FAILED" if failures else "ok"), flush=True)
    dist.finalize()
    sys.exit(1 if failures else 0)
