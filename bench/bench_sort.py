"""Sorting benchmarks, each with its numpy peer measured in this same process: frit.sort of 1e6
and 1e7 float32 (one row, split into chunks over the threads) vs np.sort, frit.argsort (stable)
of 1e6 float32 vs np.argsort(kind="stable"), and batches of 1000 rows of 1000 and 10000 rows of
100 float32 sorted along the last axis (rows in parallel) vs np.sort, and the argsort of 10000
rows of 100 vs np.argsort. Prints JSON lines like
bench_control.py; bench/run merges them.
Usage: bench_sort.py [NAME...] (names containing one of these run; none: all)."""
import json
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
import frit  # noqa: E402

REPS = int(os.environ.get("FRIT_BENCH_REPS", "0")) or 7


def times(fn, warmup=1, reps=REPS):
    """(median, best) milliseconds of fn() after warm-up calls; fewer runs when a call is slow."""
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
    return 1e3 * float(np.median(ts)), 1e3 * float(np.min(ts))


def emit(bench, t, peer, pt, ok, **extra):
    rec = {"bench": bench, "value": round(t[0], 3), "unit": "ms", "peer": peer,
           "peer_value": round(pt[0], 3), "ratio": round(pt[0] / t[0], 4),
           "best_value": round(t[1], 3), "peer_best_value": round(pt[1], 3),
           "ratio_best": round(pt[1] / t[1], 4), "ok": ok,
           "threads": int(os.environ.get("FRIT_THREADS") or os.cpu_count() or 1)}
    rec.update(extra)
    print(json.dumps(rec), flush=True)


def bench_sort(n, name, dtype=np.float32):
    rng = np.random.default_rng(0)
    if np.dtype(dtype).kind == "f":
        x = rng.standard_normal(n).astype(dtype)
    else:
        x = rng.integers(-10 ** 9, 10 ** 9, n).astype(dtype)
    f = frit.jit(lambda a: frit.sort(a))
    t0 = time.perf_counter()
    out = np.asarray(f(x))
    compile_s = time.perf_counter() - t0
    ok = bool(np.array_equal(out, np.sort(x)))
    tf = times(lambda: np.asarray(f(x)))
    tn = times(lambda: np.sort(x))
    passes = np.dtype(dtype).itemsize
    emit(name, tf, "np.sort (numpy %s, same run)" % np.__version__, tn, ok,
         first_call_s=round(compile_s, 2),
         note="LSD radix sort, %d passes of 8 bits, chunks of one row in parallel, keys alone%s" % (
             passes, " (zeros and NaNs copied back from the input)" if np.dtype(dtype).kind == "f" else ""))


def bench_argsort(n, name):
    x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    f = frit.jit(lambda a: frit.argsort(a))
    ok = bool(np.array_equal(np.asarray(f(x)), np.argsort(x, kind="stable")))
    tf = times(lambda: np.asarray(f(x)))
    tn = times(lambda: np.argsort(x, kind="stable"))
    emit(name, tf, "np.argsort(kind='stable') (same run)", tn, ok)


def bench_rows(r, n, name, arg=False):
    x = np.random.default_rng(2).standard_normal((r, n)).astype(np.float32)
    if arg:
        f = frit.jit(lambda a: frit.argsort(a, axis=-1))
        ok = bool(np.array_equal(np.asarray(f(x)), np.argsort(x, axis=-1, kind="stable")))
        tf = times(lambda: np.asarray(f(x)))
        tn = times(lambda: np.argsort(x, axis=-1))
        peer = "np.argsort(axis=-1) (its default quicksort, not stable; same run)"
    else:
        f = frit.jit(lambda a: frit.sort(a, axis=-1))
        ok = bool(np.array_equal(np.asarray(f(x)), np.sort(x, axis=-1)))
        tf = times(lambda: np.asarray(f(x)))
        tn = times(lambda: np.sort(x, axis=-1))
        peer = "np.sort(axis=-1) (same run)"
    note = "rows in parallel on frit's threads"
    if n <= 256:
        note += "; a bitonic network over 32 rows at a time%s" % (" on keys widened by the position" if arg else "")
    emit(name, tf, peer, tn, ok, note=note)


BENCHES = [("sort_f32_1m", lambda: bench_sort(1_000_000, "sort_f32_1m")),
           ("sort_f32_10m", lambda: bench_sort(10_000_000, "sort_f32_10m")),
           ("sort_i32_1m", lambda: bench_sort(1_000_000, "sort_i32_1m", np.int32)),
           ("argsort_f32_1m", lambda: bench_argsort(1_000_000, "argsort_f32_1m")),
           ("sort_rows_1000x1000", lambda: bench_rows(1000, 1000, "sort_rows_1000x1000")),
           ("sort_rows_10000x100", lambda: bench_rows(10000, 100, "sort_rows_10000x100")),
           ("argsort_rows_10000x100", lambda: bench_rows(10000, 100, "argsort_rows_10000x100", arg=True))]

def run_selected(benches, want):
    """Runs each (name, fn) of benches whose name contains one of want (none: all); a bench that
    raises prints an error line instead, and the others still run."""
    for name, fn in benches:
        if want and not any(w in name for w in want):
            continue
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - one failing bench must not hide the others
            print(json.dumps({"bench": name, "value": None, "unit": "ms", "ok": False,
                              "error": "%s: %s" % (type(e).__name__, str(e)[:300])}), flush=True)


if __name__ == "__main__":
    run_selected(BENCHES, sys.argv[1:])
