"""Quick timing (not a test; run: FRIT_LIB=build/libfrit.so WT=$PWD python bench/bench_complex_native.py): complex64 a*b+c and sum over 2^22 elements.
native: the C library's c64 dtype through ctypes (frit_compile + frit_program_run on numpy's
buffers, zero copy); python eager/jit: the frit package of $WT (before the switch-over a
pair-of-reals emulation, after it the native dtype; the label says which it found)."""
import ctypes as C, os, time, sys
import numpy as np

N = 1 << 22
rng = np.random.default_rng(0)
def cz():
    return (rng.standard_normal(N) + 1j * rng.standard_normal(N)).astype(np.complex64)
a, b, c = cz(), cz(), cz()

def best(f, reps=7):
    f()
    ts = []
    for _ in range(reps):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return min(ts) * 1e3

lib = C.CDLL(os.environ["FRIT_LIB"])
p = C.c_void_p
lib.frit_ctx_new.restype = p
lib.frit_input.restype = p; lib.frit_input.argtypes = [p, C.c_char_p, C.c_uint32, C.c_int, C.POINTER(C.c_int64)]
lib.frit_binary_t.restype = p; lib.frit_binary_t.argtypes = [p, C.c_int, p, p]
lib.frit_reduce.restype = p; lib.frit_reduce.argtypes = [p, C.c_int, p, C.POINTER(C.c_int), C.c_int, C.c_int, C.c_double]
lib.frit_compile.restype = p; lib.frit_compile.argtypes = [p, C.POINTER(p), C.c_int, p]
lib.frit_program_run.argtypes = [p, C.POINTER(p), C.POINTER(p), p, C.c_int]
lib.frit_program_num_inputs.argtypes = [p]
lib.frit_error.restype = C.c_char_p; lib.frit_error.argtypes = [p]
_dt = C.c_uint32(); lib.frit_dtype_parse.argtypes = [C.c_char_p, C.c_size_t, C.POINTER(C.c_uint32)]
assert lib.frit_dtype_parse(b"c64", 3, C.byref(_dt)) == 0
C64 = _dt.value
ADD, MUL = 0, 2           # frit_bfunc: FRIT_BF_ADD, FRIT_BF_MUL (include/frit.h order)
SUM, ALL_AXES = 0, -1      # frit_rfunc FRIT_RF_SUM, FRIT_ALL_AXES
ctx = lib.frit_ctx_new()
dims = (C.c_int64 * 1)(N)
ta, tb, tc = (lib.frit_input(ctx, n, C64, 1, dims) for n in (b"a", b"b", b"c"))
fma = lib.frit_binary_t(ctx, ADD, lib.frit_binary_t(ctx, MUL, ta, tb), tc)
s = lib.frit_reduce(ctx, SUM, ta, None, ALL_AXES, 0, 0.0)
assert fma and s, lib.frit_error(ctx)
def prog(t):
    pr = lib.frit_compile(ctx, (p * 1)(t), 1, None)
    assert pr, lib.frit_error(ctx)
    return pr
pf, ps = prog(fma), prog(s)
out = np.empty(N, np.complex64); sout = np.empty(1, np.complex64)
ins = (p * 3)(a.ctypes.data, b.ctypes.data, c.ctypes.data)
def run_f():
    assert lib.frit_program_run(pf, ins, (p * 1)(out.ctypes.data), None, 0) == 0
def run_s():
    assert lib.frit_program_run(ps, (p * 1)(a.ctypes.data), (p * 1)(sout.ctypes.data), None, 0) == 0
run_f(); run_s()
assert np.allclose(out, a * b + c, rtol=1e-5, atol=1e-5)
ref = a.astype(np.complex128).sum()
assert abs(sout[0] - ref) <= 1e-3 * abs(ref) + 1, (sout[0], ref)
rows = [("numpy a*b+c", best(lambda: a * b + c)), ("native c64 a*b+c (compiled program)", best(run_f)),
        ("numpy sum", best(lambda: a.sum())), ("native c64 sum (compiled program)", best(run_s))]
try:
    sys.path.insert(0, os.path.join(os.environ["WT"], "python"))
    import frit
    kind = "emulation" if hasattr(frit, "ComplexArray") else "native"
    fa, fb, fc = frit.asarray(a), frit.asarray(b), frit.asarray(c)
    def eager_f(): np.asarray(fa * fb + fc)
    def eager_s(): np.asarray(frit.sum(fa))
    jf = frit.jit(lambda x, y, z: x * y + z); js = frit.jit(lambda x: frit.sum(x))
    def jit_f(): np.asarray(jf(fa, fb, fc))
    def jit_s(): np.asarray(js(fa))
    rows += [("python eager a*b+c (%s)" % kind, best(eager_f)), ("python jit a*b+c (%s)" % kind, best(jit_f)),
             ("python eager sum (%s)" % kind, best(eager_s)), ("python jit sum (%s)" % kind, best(jit_s))]
except Exception as e:  # report, do not hide
    rows.append(("python package: %r" % (e,), float("nan")))
for name, ms in rows:
    print("%-42s %8.2f ms" % (name, ms))
