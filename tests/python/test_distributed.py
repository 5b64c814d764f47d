"""frit.distributed: the collectives in a world of one rank (eagerly and under jit, against
numpy), their errors, and the multi-rank cases of dist_worker.py under mpirun (2 and 4 ranks):
every collective and dtype, gradients through them, data-parallel training against one process
with the global batch, and a sharded heat equation against the one-process grid, bit for bit."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import frit
import frit.distributed as dist

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
PYPATH = os.pathsep.join([os.path.join(os.path.dirname(os.path.dirname(HERE)), "python"),
                          os.environ.get("PYTHONPATH", "")])
import dist_worker  # noqa: E402

MPIRUN = shutil.which("mpirun")
need_mpi = pytest.mark.skipif(not MPIRUN and os.environ.get("FRIT_REQUIRE_MPI") != "1",
                              reason="no mpirun (make mpi-deps installs Open MPI)")


def test_one_rank_world_without_a_launcher():
    dist.init()
    assert (dist.rank(), dist.size()) == (0, 1)
    dist.barrier()


@pytest.mark.parametrize("mode", ["eager", "jit"])
@pytest.mark.parametrize("dt", dist_worker.DTYPES)
def test_one_rank_collectives_are_the_identity(mode, dt):
    dist.init()
    wrap = frit.jit if mode == "jit" else (lambda f: f)
    for shape in dist_worker.SHAPES:
        x = dist_worker.data(0, shape, dt)
        ops = ["sum", "prod", "max", "min", "mean"] if not dt.startswith("complex") else ["sum", "prod", "mean"]
        for op in ops:
            got = np.asarray(wrap(lambda v, op=op: dist.all_reduce(v, op))(frit.asarray(x)))
            want = dist_worker.reduce_np([x], op, dt)
            assert got.dtype == want.dtype and got.shape == want.shape, (op, dt, shape)
            np.testing.assert_array_equal(got, want)
        for f in (lambda v: dist.broadcast(v, 0), lambda v: dist.shift(v, 1), lambda v: dist.sendrecv(v, 0, 0)):
            np.testing.assert_array_equal(np.asarray(wrap(f)(frit.asarray(x))), x)
        got = np.asarray(wrap(lambda v: dist.sendrecv(v, None, None))(frit.asarray(x)))
        np.testing.assert_array_equal(got, np.zeros(shape, dt))
        if shape:
            np.testing.assert_array_equal(np.asarray(wrap(lambda v: dist.all_gather(v, -1))(frit.asarray(x))), x)
            np.testing.assert_array_equal(np.asarray(wrap(lambda v: dist.reduce_scatter(v, "sum", 0))(frit.asarray(x))),
                                          dist_worker.reduce_np([x], "sum", dt))


def test_collective_kernels_are_named_and_kept_apart():
    """The exchange is a kernel of its own (printed by name), its input realized apart from it."""
    f = frit.jit(lambda v: dist.all_reduce(v * 2 + 1, "sum") * 3)
    x = frit.asarray(np.arange(6.0))
    np.testing.assert_array_equal(np.asarray(f(x)), (np.arange(6.0) * 2 + 1) * 3)
    names = [k.name for k in f.lower(x).kernels]
    assert any("all_reduce" in n for n in names), names
    assert len(names) == 3, names


@pytest.mark.parametrize("call, words", [
    (lambda x: dist.all_reduce(x, "median"), ["all_reduce", "median"]),
    (lambda x: dist.all_reduce(frit.asarray(np.ones(3, np.complex64)), "max"), ["all_reduce", "complex"]),
    (lambda x: dist.all_gather(x, 3), ["all_gather", "axis"]),
    (lambda x: dist.all_gather(frit.asarray(np.float32(1)), 0), ["all_gather", "axis"]),
    (lambda x: dist.broadcast(x, 1), ["broadcast", "rank 1", "1 ranks"]),
    (lambda x: dist.sendrecv(x, 0, 2), ["sendrecv", "rank 2"]),
    (lambda x: dist.sendrecv(x, None, 0), ["sendrecv", "sends it nothing"]),
    (lambda x: dist.all_gather(x, 1.5), ["all_gather", "axis"]),
])
def test_bad_collective_arguments_are_named(call, words):
    dist.init()
    x = frit.asarray(np.ones((2, 3), np.float32))
    with pytest.raises((frit.FritError, ValueError, TypeError)) as e:
        np.asarray(call(x))
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_gradient_buckets_follow_the_backward_pass():
    """Buckets take the gradients in the order they were made (a backward pass makes the last
    layer's first), one dtype each, up to the byte limit; a larger array is a bucket of its own."""
    seen = []

    def f(x):
        a = x * 2
        b = a + 1
        w = frit.astype(b, "float64")
        c = b * 3
        big = frit.concatenate([c, c, c])
        seen.append(dist.gradient_buckets({"z": c, "y": b, "x": a, "w": w, "big": big}, bucket_bytes=800))
        seen.append(dist.gradient_buckets({"z": c, "y": b, "x": a}, bucket_bytes=10 ** 6))
        return x

    frit.jit(f)(frit.asarray(np.ones(100, np.float32)))  # 400 bytes each, w 800
    assert seen == [[["x", "y"], ["w"], ["z"], ["big"]], [["x", "y", "z"]]]
    concrete = {k: np.ones(n, np.float32) for k, n in (("b", 300), ("a", 100), ("c", 10))}
    assert dist.gradient_buckets(concrete, bucket_bytes=1600) == [["a", "b"], ["c"]]
    for bad in (0, -5, 1.5, "1M", True):
        with pytest.raises(ValueError, match="gradient_buckets: bucket_bytes must be a positive integer"):
            dist.gradient_buckets(concrete, bucket_bytes=bad)


def test_gradient_of_a_max_all_reduce_is_refused():
    dist.init()
    with pytest.raises(frit.FritError) as e:
        frit.grad(lambda v: frit.sum(dist.all_reduce(v, "max")))(frit.asarray(np.ones(3)))
    assert "all_reduce max" in str(e.value) and "no gradient" in str(e.value)


def test_missing_mpi_is_a_clear_error(tmp_path):
    """A process asking for MPI where the library cannot be loaded gets a message, not a crash."""
    code = ("import frit.distributed as d\n"
            "try:\n    d.init(mpi=True)\nexcept Exception as e:\n    print('ERR', e)\n")
    env = dict(os.environ, FRIT_MPI_LIB=str(tmp_path / "libmpi-missing.so"), PYTHONPATH=PYPATH)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "ERR" in out.stdout and "MPI unavailable" in out.stdout, out.stdout + out.stderr


def mpirun(n, case, out="", env=None, timeout=600):
    cmd = [MPIRUN, "--allow-run-as-root", "--oversubscribe", "-n", str(n), sys.executable,
           os.path.join(HERE, "dist_worker.py"), case] + ([out] if out else [])
    e = dict(os.environ, PYTHONPATH=PYPATH, **(env or {}))
    e.setdefault("OMPI_MCA_btl_vader_single_copy_mechanism", "none")  # no ptrace in containers
    e.setdefault("FRIT_THREADS", "1")
    return subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=timeout)


def all_ranks_ok(n, case, out=""):
    """Runs a case of dist_worker.py on n ranks: every rank reports it passed."""
    r = mpirun(n, case, out)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    assert r.stdout.count(": %s ok" % case) == n, r.stdout


@need_mpi
@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("case", ["collectives", "grad", "overlap"])
def test_ranks_against_numpy(n, case):
    all_ranks_ok(n, case)


@need_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_sharded_heat_matches_one_process_bitwise(n, tmp_path):
    out = str(tmp_path / "heat.npz")
    r = mpirun(n, "heat", out)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    got = np.load(out)
    u0 = np.random.default_rng(5).random((32, 24))
    for dt in ("float32", "float64"):
        u = frit.asarray(u0.astype(dt))
        step = frit.jit(dist_worker.heat_step)
        for _ in range(20):
            u = step(u)
        np.testing.assert_array_equal(got[dt], np.asarray(u))


@need_mpi
@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("bucket", [None, 512])
def test_data_parallel_training_matches_the_global_batch(n, bucket, tmp_path):
    """n ranks with 64/n samples each follow one process's loss curve over the 64: with the
    default buckets (one here), and with a bucket a gradient or two, exchanged amid the backward
    pass (the worker checks that the schedule starts one before the last matmul)."""
    out = str(tmp_path / "losses.json")
    r = mpirun(n, "train", out, env={"FRIT_TEST_BUCKET_BYTES": str(bucket)} if bucket else None)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    with open(out) as f:
        losses = json.load(f)
    from frit import nn, optim
    X, Y = dist_worker.train_data(6)
    step = optim.compile_step(dist_worker.mlp_model(), nn.functional.cross_entropy, optim.Adam(lr=1e-2))
    ref = [float(np.asarray(step(X[i], Y[i]))) for i in range(6)]
    np.testing.assert_allclose(losses, ref, rtol=2e-5)
    assert ref[-1] < ref[0]


@need_mpi
def test_ranks_that_disagree_fail_on_every_rank():
    r = mpirun(2, "mismatch")
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    # mpirun may merge the two ranks' lines, so the reports are found by pattern, not by line
    import re
    reports = re.findall(r"rank (\d): (dist: ranks disagree on a collective: rank 0 all_reduce sum f32\[\d\], "
                         r"rank 1 all_reduce sum f32\[\d\])", r.stdout)
    assert sorted(q for q, _ in reports) == ["0", "1"], r.stdout
    assert all("f32[4]" in m and "f32[5]" in m for _, m in reports), reports


@need_mpi
def test_collectives_in_an_opencl_program():
    import glob
    if not glob.glob("/etc/OpenCL/vendors/*.icd") and os.environ.get("FRIT_REQUIRE_OPENCL") != "1":
        pytest.skip("no OpenCL driver (make opencl-driver installs PoCL)")
    all_ranks_ok(2, "device")


@need_mpi
def test_mpi_started_by_mpi4py_is_joined():
    pytest.importorskip("mpi4py")
    all_ranks_ok(2, "mpi4py")


@need_mpi
def test_a_rank_that_dies_ends_the_others():
    """The launcher ends the job when a rank exits without finalizing: no rank hangs (the timeout
    below is far longer than the run)."""
    r = mpirun(2, "dies", env={"FRIT_DIST_TIMEOUT": "60"}, timeout=120)
    assert r.returncode != 0
    assert "FAIL" not in r.stdout, r.stdout


@need_mpi
def test_a_rank_that_never_arrives_is_a_timeout_not_a_hang():
    r = mpirun(2, "timeout", env={"FRIT_DIST_TIMEOUT": "2"}, timeout=120)
    assert "timed out" in r.stdout, r.stdout[-4000:] + r.stderr[-4000:]
