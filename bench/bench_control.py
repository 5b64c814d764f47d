"""Benchmarks of shader-like frit programs (the examples of examples/*.py), each with its peer
measured in this same process: n-body as an explicit kernel vs the vectorised frit n-body (N=4096),
bitonic sort of 2^20 key-value pairs vs numpy, a 256-bin histogram of 16M values vs np.bincount,
prefix sum of 16M values vs np.cumsum. Prints JSON lines {"bench", "value", "unit", "peer",
"peer_value", ...}; bench/run merges them with the others. Needs numpy and FRIT_LIB (bench/run sets
it). Usage: bench_control.py [NAME...] (names containing one of these run; none: all)."""
import json
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "examples"))
import frit  # noqa: E402

REPS = int(os.environ.get("FRIT_BENCH_REPS", "0")) or 7


def times(fn, warmup=1, reps=REPS):
    """(median, best) seconds of fn() after warm-up calls; fewer runs when a call is slow."""
    for _ in range(warmup):
        t0 = time.perf_counter()
        fn()
        if time.perf_counter() - t0 > 1.0:
            reps = max(3, min(reps, 3))
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts)), float(np.min(ts))


def emit(bench, ms, peer, peer_ms, unit="ms", **extra):
    rec = {"bench": bench, "value": round(ms[0], 4), "unit": unit, "peer": peer,
           "peer_value": None if peer_ms is None else round(peer_ms[0], 4),
           "best_value": round(ms[1], 4)}
    if peer_ms is not None:
        rec["peer_best_value"] = round(peer_ms[1], 4)
    rec["threads"] = int(os.environ.get("FRIT_THREADS") or os.cpu_count() or 1)
    rec.update(extra)
    print(json.dumps(rec), flush=True)


def ms(t):
    return (1e3 * t[0], 1e3 * t[1])


def fail(bench, unit, e):
    print(json.dumps({"bench": bench, "value": None, "unit": unit, "peer": None, "peer_value": None,
                      "ok": False, "error": "%s: %s" % (type(e).__name__, str(e)[:300])}), flush=True)


def bench_nbody():
    import nbody_explicit as ex
    n = 4096
    x, v = ex.make_input(n)
    t0 = time.perf_counter()
    err_np, err_vec = ex.check(1024, 1)
    ok = bool(err_np < 1e-4 and err_vec < 1e-4)
    te = ms(times(lambda: ex.explicit(x, v), warmup=2))
    tv = ms(times(lambda: ex.vectorised(x, v), warmup=2))
    emit("nbody_explicit_4096", te, "frit vectorised n-body (same N, same run)", tv, unit="ms/step",
         ok=ok, rel_err=float("%.2g" % err_np), target_ratio=2.0,
         note="explicit kernel: loop over j accumulating in kernel variables; ratio = vectorised/explicit",
         setup_s=round(time.perf_counter() - t0, 2))


def bench_bitonic():
    import bitonic_sort as ex
    n = 1 << 20
    keys, vals = ex.make_input(n)
    f = ex._jitted(False)
    ks, vs = f(keys, vals)
    ok = bool(np.array_equal(np.asarray(ks), np.sort(keys)) and
              np.array_equal(np.asarray(vs), np.argsort(keys, kind="stable")))
    tf = ms(times(lambda: f(keys, vals)))

    def peer():
        o = np.argsort(keys, kind="stable")
        return keys[o], vals[o]
    tp = ms(times(peer))
    ts = ms(times(lambda: np.sort(keys)))
    emit("bitonic_sort_1m", tf, "numpy %s argsort(kind='stable') + gathers" % np.__version__, tp, ok=ok,
         numpy_sort_keys_only_ms=round(ts[0], 4),
         note="2^20 float32 keys with int32 values, ties broken by position; 210 kernel launches in host loops")


def bench_histogram():
    import histogram_sph as ex
    n = 1 << 24
    x = ex.make_values(n)
    ref = ex.hist_numpy(x)
    res, ok = {}, True
    for name, f in ex._hist_jit.items():
        try:
            ok &= bool(np.array_equal(np.asarray(f(x)), ref))
            res[name] = ms(times(lambda: f(x)))
        except Exception as e:  # one variant failing leaves the others measured
            res[name] = None
            ok = False
            print("bench_control: histogram %s failed: %s" % (name, e), file=sys.stderr)
    good = {k: t for k, t in res.items() if t is not None}
    if not good:
        raise RuntimeError("no histogram variant ran")
    best = min(good, key=lambda k: good[k][0])
    tp = ms(times(lambda: ex.hist_numpy(x)))
    th = ms(times(lambda: np.histogram(x, bins=ex.BINS, range=(0.0, 1.0))))
    emit("histogram_16m_256", good[best], "numpy %s bincount (binning included)" % np.__version__, tp, ok=ok,
         variant=best, **{"%s_ms" % k: (None if t is None else round(t[0], 4)) for k, t in res.items()},
         numpy_histogram_ms=round(th[0], 4),
         note="value: the fastest frit variant (scatter: frit.scatter add; atomic: atomic_add kernel; "
              "blocks: private per-block histograms + sum)")


def bench_prefix():
    import prefix_sum as ex
    n = 1 << 24
    x = ex.make_input(n)
    f = ex._jitted(ex.BLOCK)
    ok = bool(np.array_equal(np.asarray(f(x)), np.cumsum(x, dtype=np.int64)))
    tf = ms(times(lambda: f(x)))
    tp = ms(times(lambda: np.cumsum(x, dtype=np.int64)))
    cs = frit.jit(lambda a: frit.cumsum(a, dtype=frit.int64), dynamic=False)
    tb = ms(times(lambda: cs(x)))
    emit("prefix_sum_16m", tf, "numpy %s cumsum" % np.__version__, tp, ok=ok,
         frit_cumsum_ms=round(tb[0], 4),
         note="int32 -> int64, 3 kernel passes (block scans, scan of 4096 block sums, add offsets)")


BENCHES = [("nbody_explicit_4096", "ms/step", bench_nbody), ("bitonic_sort_1m", "ms", bench_bitonic),
           ("histogram_16m_256", "ms", bench_histogram), ("prefix_sum_16m", "ms", bench_prefix)]


def main(argv):
    for name, unit, fn in BENCHES:
        if argv and not any(a in name for a in argv):
            continue
        try:
            fn()
        except Exception as e:  # report and go on with the others
            fail(name, unit, e)


if __name__ == "__main__":
    main(sys.argv[1:])
