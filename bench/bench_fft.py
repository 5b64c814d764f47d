"""frit.fft against numpy.fft (pocketfft) measured in this same process: a 2^20-point complex64
FFT and a batch of 1000 x 1024 complex64 FFTs (jitted; compile time reported separately).
Prints JSON lines like bench_control.py; ratio = numpy ms / frit ms (> 1: frit is faster)."""
import json
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
import frit  # noqa: E402

REPS = int(os.environ.get("FRIT_BENCH_REPS", "0")) or 5


def times(fn, reps=REPS):
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(ts)), 1e3 * float(np.min(ts))


def run(bench, shape):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
    f = frit.jit(lambda a: frit.fft.fft(a))
    t0 = time.perf_counter()
    r = np.asarray(f(x))
    compile_ms = 1e3 * (time.perf_counter() - t0)
    ref = np.fft.fft(x)
    err = float(np.abs(r - ref).max() / np.abs(ref).max())
    mine = times(lambda: f(x))
    peer = times(lambda: np.fft.fft(x))
    print(json.dumps({"bench": bench, "value": round(mine[0], 4), "unit": "ms",
                      "peer": "numpy.fft %s" % np.__version__, "peer_value": round(peer[0], 4),
                      "ratio": round(peer[0] / mine[0], 4), "best_value": round(mine[1], 4),
                      "peer_best_value": round(peer[1], 4), "compile_ms": round(compile_ms, 1),
                      "max_rel_err": err, "ok": err < 1e-5,
                      "threads": int(os.environ.get("FRIT_THREADS") or os.cpu_count() or 1)}),
          flush=True)


if __name__ == "__main__":
    names = sys.argv[1:]
    for bench, shape in (("fft_c64_1m", (1 << 20,)), ("fft_c64_1000x1024", (1000, 1024))):
        if not names or any(n in bench for n in names):
            run(bench, shape)
