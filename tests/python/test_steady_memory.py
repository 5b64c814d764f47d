"""A long-running process reaches a steady memory state: a long loop of varied eager ops
(shapes, Python constants, dtypes) and jitted calls does not grow the process after warm-up
(RSS from /proc/self/statm), and every cache stays bounded."""
import ctypes
import gc
import os

import numpy as np
import pytest

import frit
from frit import _session as S

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")

# Each test runs in a fresh child process (a long-running process from its start): in the full
# suite, state left by earlier tests kept the eager session from turning over its generations
# (found in CI on 2026-11-25, cause not yet identified: recorded as design debt).
_CHILD = os.environ.get("FRIT_STEADY_CHILD") == "1"


def _in_child(name):
    import subprocess
    import sys
    env = dict(os.environ, FRIT_STEADY_CHILD="1")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "%s::%s" % (os.path.abspath(__file__), name)], env=env,
                       capture_output=True, text=True, cwd=os.path.dirname(os.path.abspath(__file__)))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]


def isolated(fn):
    """Runs the test body in a fresh process unless already in one."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if _CHILD:
            return fn(*args, **kwargs)
        return _in_child(fn.__name__)
    return wrapper

_PAGE = os.sysconf("SC_PAGE_SIZE")
try:
    _libc = ctypes.CDLL(None)
    _libc.malloc_trim  # glibc's
except (OSError, AttributeError):
    _libc = None


def _rss():
    # malloc_trim first: what is measured is live memory, not the heap's high-water mark. Without
    # it, the 5k-10k against 20k-25k growth of test_rss_is_flat_after_warmup was 1.2-4.2 MiB
    # depending on how allocations interleave (the eager fast path's changed it from 1.2 to 4.1),
    # while a 60k-op run stays at 65-67.5 MiB from 25k on; trimmed, 0.2 and 0.9 MiB.
    if _libc is not None:
        _libc.malloc_trim(0)
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * _PAGE


def _loop(n_ops, sample_every, on_sample):
    rng = np.random.default_rng(7)
    f = frit.jit(lambda a, b: a * b + 2.0)
    g = frit.jit(lambda a: frit.sum(frit.exp(a), axis=-1))
    dts = (np.float64, np.float32, np.int32)
    for i in range(n_ops):
        n, m = 2 + i % 13, 3 + (i // 13) % 7
        dt = dts[i % 3]
        a_np = (rng.standard_normal((n, m)) * 4).astype(dt)
        a = frit.asarray(a_np)
        k = i % 8
        if k == 0:
            r = a * (i % 97) + 1
        elif k == 1:
            r = frit.sum(a, axis=0) - i
        elif k == 2:
            r = frit.exp(a.astype(frit.float32) * 0.01) * 0.5
        elif k == 3:
            r = f(a_np, a_np)
        elif k == 4:
            r = (a @ a.T)[0]
        elif k == 5:
            r = frit.where(a > 0.1 * (i % 10), a, -a)
        elif k == 6:
            r = g(a_np.astype(np.float64))
        elif i % 400 == 7:  # a reshape to fixed sizes compiles per shape (a few shapes here;
            # ever new ones are distinct programs: test_program_cache_is_bounded)
            b = frit.asarray(np.ones((2 + i % 3, 6), dt))
            r = frit.reshape(b, (6, -1))[:, 1:] + float(i) / 3
        else:
            r = frit.reshape(a, (-1,))[1:] + float(i) / 3
        np.asarray(r)
        if i % sample_every == 0:
            on_sample(i)


@isolated
def test_rss_is_flat_after_warmup():
    samples = {}
    _loop(25_000, 250, lambda i: samples.__setitem__(i, _rss()))
    early = max(v for i, v in samples.items() if 5_000 <= i < 10_000)
    late = max(v for i, v in samples.items() if 20_000 <= i < 25_000)
    grown = (late - early) / 2 ** 20
    # the sawtooth of graph generations is inside both windows; what must not be there is a trend
    assert grown < 4.0, "RSS grew %.1f MiB between ops 5k-10k and 20k-25k (%s)" % (
        grown, {i: round(v / 2 ** 20, 1) for i, v in sorted(samples.items()) if i % 2500 == 0})


@isolated
def test_sessions_and_caches_stay_bounded():
    pcs, gens = set(), set()

    def sample(i):
        s = S.current()
        gens.add(s.sid)
        pcs.add(s.pc.sid)
        assert s.node_count() <= S.NODE_LIMIT + 20_000
        assert len(s.pc._programs) <= S.PC_PROGRAM_LIMIT + 1

    _loop(12_000, 100, sample)
    gc.collect()
    # the generations this loop made (other tests' jitted functions keep sessions of their own)
    live = [o for o in gc.get_objects() if type(o) is S.Session and o.ptr and o.sid in gens]
    assert len(gens) >= 2  # the graph ctx did turn over ...
    assert len(pcs) == 1   # ... while the program cache was carried over
    assert len(live) < 12, len(live)  # old generations were freed


@isolated
def test_old_generation_arrays_stay_valid():
    """Lazy arrays of a retired generation are realised (replayed in the new one) on use."""
    x = frit.asarray(np.arange(6.0))
    lazy = x * 3 + 1
    old = S.current()
    S._tls.current = S._tls.eager = S._next_generation(old)  # what NODE_LIMIT triggers
    assert lazy._n.sess is old
    y = lazy * 2
    assert y._n.sess is S.current()
    assert np.array_equal(np.asarray(y), (np.arange(6.0) * 3 + 1) * 2)


def _new_generation(monkeypatch):
    """What current() does once the graph ctx is past NODE_LIMIT."""
    s = S.current()
    monkeypatch.setattr(S, "NODE_LIMIT", -1)
    s.tick = 0
    n = S.current()
    monkeypatch.setattr(S, "NODE_LIMIT", 10 ** 9)
    assert n is not s and S._tls.prev is s
    return n


def test_lazy_expression_across_a_generation_change_stays_one_graph(monkeypatch):
    """A lazy expression still being built when the generation changes keeps building in the
    previous generation (one program, no early realisation); two generations old, it is realised."""
    frit.new_session()
    x = frit.asarray(np.arange(5.0))
    a = frit.exp(x) * 2
    old = S.current()
    _new_generation(monkeypatch)
    r0 = old.stats["realize"]
    b = a + 1  # still lazy, in the previous generation
    assert b._n.np is None and b._n.sess is old and old.stats["realize"] == r0
    _new_generation(monkeypatch)  # now `old` is two generations back
    c = b * 3
    assert old.stats["realize"] == r0 + 1 and c._n.sess is S.current()
    assert np.allclose(np.asarray(c), (np.exp(np.arange(5.0)) * 2 + 1) * 3)


def test_no_generation_change_inside_scopes(monkeypatch):
    monkeypatch.setattr(S, "NODE_LIMIT", -1)
    monkeypatch.setattr(S, "_TICKS", 0)
    x = frit.asarray(np.ones(4))
    with frit.loop(3) as i:
        s0 = S.current()
        for _ in range(5):
            x[...] = x + frit.asarray(np.ones(4)) * 0 + 1
        assert S.current() is s0
        x[...] = x * 1 + i
    assert np.array_equal(np.asarray(x), np.full(4, 1 + 5 + 0 + 5 + 1 + 5 + 2.0))
    y = frit.zeros(6)
    with frit.kernel(6) as k:
        s1 = S.current()
        y[k] = frit.asarray(np.arange(6.0))[k] * 2 + 1
        assert S.current() is s1
    assert np.array_equal(np.asarray(y), np.arange(6.0) * 2 + 1)


def test_jit_cache_is_bounded(monkeypatch):
    from frit import _jit
    monkeypatch.setattr(_jit, "JIT_CACHE_MAX", 4)
    f = frit.jit(lambda a: a + 1, dynamic=False)
    for n in range(2, 14):
        a = np.arange(float(n))
        assert np.array_equal(np.asarray(f(a)), a + 1)
        assert len(f._cache) <= 4
    assert f.trace_count == 12


def test_program_cache_is_bounded(monkeypatch):
    """Ever new static shapes (a reshape to fixed sizes compiles per shape) fill the program
    cache; past PC_PROGRAM_LIMIT programs the thread starts a new one."""
    monkeypatch.setattr(S, "PC_PROGRAM_LIMIT", 6)
    monkeypatch.setattr(S, "NODE_LIMIT", 50)  # a new generation (and the check) every few ops
    monkeypatch.setattr(S, "_TICKS", 0)       # look at the sizes on every current()
    frit.new_session()
    pcs = set()
    for n in range(2, 30):
        a = np.arange(2.0 * n)
        r = frit.reshape(frit.asarray(a), (n, 2))[:, 1] * 2
        assert np.array_equal(np.asarray(r), a.reshape(n, 2)[:, 1] * 2)
        pc = S.current().pc
        pcs.add(pc.sid)
        assert len(pc._programs) <= 6 + 1
    assert len(pcs) >= 3


def test_large_outputs_reuse_freed_buffers_and_never_live_ones(monkeypatch):
    """Outputs of 1 MiB or more come from frit._outpool: a dropped output's buffer serves the next
    call (no fresh mapping, no page faults), while an output that is still referenced, directly or
    through a view, keeps its memory and values. Its free buffers stay under the pool's cap."""
    from frit import _outpool
    f = frit.jit(lambda x: x * 2.0 + 1.0)
    x = np.arange(1 << 19, dtype=np.float32)  # 2 MiB
    want = x * 2.0 + 1.0
    a = np.asarray(f(x))
    pa = a.ctypes.data
    b = np.asarray(f(x))
    assert b.ctypes.data != pa  # a is alive
    keep = a[100:200]
    del a
    c = np.asarray(f(x + 1))
    assert c.ctypes.data != pa  # a view of a is alive
    np.testing.assert_array_equal(keep, want[100:200])
    del keep, c
    d = np.asarray(f(x))
    e = np.asarray(frit.asarray(x) * 3.0)  # eager ops too
    assert pa in (d.ctypes.data, e.ctypes.data)  # a's buffer, free again, was reused
    np.testing.assert_array_equal(d, want)
    np.testing.assert_array_equal(e, x * 3.0)
    np.testing.assert_array_equal(b, want)
    small = np.asarray(f(x[:1000]))  # below the threshold: numpy's own allocation
    np.testing.assert_array_equal(small, want[:1000])
    monkeypatch.setattr(_outpool, "MAX_POOL_BYTES", 16 << 20)
    for n in range(40):  # many sizes: the free buffers stay under the cap
        np.asarray(f(np.ones((1 << 20) + n * 4096, np.float32)))
    assert _outpool._total <= (16 << 20) + (5 << 20) + 3 * (2 << 20)
