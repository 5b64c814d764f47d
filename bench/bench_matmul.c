/* 1024x1024 f32 matmul in GFLOP/s. The peer, OpenBLAS through numpy.matmul (numpy's wheels
 * bundle OpenBLAS), is measured by bench/peers/numpy_tensor.py in the same bench/run. */
#include "bench_common.h"

#define M 1024

static void fill(float *a, int64_t n, uint64_t seed) {
  for (int64_t i = 0; i < n; i++) {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    a[i] = (float)(seed >> 40) / (float)(1 << 24) - 0.5f;
  }
}

int main(void) {
  const char *name = "matmul_1024";
  float *a = bench_alloc_floats(M * M), *b = bench_alloc_floats(M * M), *c = bench_alloc_floats(M * M);
  if (!a || !b || !c) return 1;
  fill(a, M * M, 1234567);
  fill(b, M * M, 7654321);
  frit_ctx *ctx = frit_ctx_new();
  int64_t shp[2] = {M, M};
  frit_tensor *ta = frit_input(ctx, "a", FRIT_F32, 2, shp), *tb = frit_input(ctx, "b", FRIT_F32, 2, shp);
  frit_tensor *out = frit_matmul(ctx, ta, tb);
  double compile_ms = 0;
  frit_program *p = out ? bench_compile(ctx, &out, 1, &compile_ms, name) : NULL;
  if (!p) {
    bench_emit(name, -1, "GFLOP/s", "openblas_numpy", -1, ", \"error\": \"compile failed\"");
  } else {
    void *ins[2] = {a, b}, *outs[1] = {c};
    bench_run r = {p, ins, outs, FRIT_OK};
    bench_stats s = bench_time(bench_run_fn, &r, 2, bench_reps(10));
    double maxerr = 0;
    uint64_t q = 99;
    for (int t = 0; t < 64; t++) {
      q ^= q << 13, q ^= q >> 7, q ^= q << 17;
      int i = (int)(q % M), j = (int)((q >> 20) % M);
      double ref = 0, mag = 0;
      for (int k = 0; k < M; k++) ref += (double)a[i * M + k] * b[k * M + j], mag += fabs((double)a[i * M + k] * b[k * M + j]);
      double e = fabs(c[i * M + j] - ref) / mag;
      if (!(e <= maxerr)) maxerr = e;
    }
    int ok = r.st == FRIT_OK && maxerr < 1e-5;
    double gf = 2.0 * M * M * M / s.median / 1e9;
    bench_emit(name, gf, "GFLOP/s", "openblas_numpy", -1,
               ", \"best_value\": %.6g, \"median_ms\": %.3f, \"best_ms\": %.3f, \"compile_ms\": %.1f, \"kernels\": %d, "
               "\"threads\": %d, \"ok\": %s, \"rel_err\": %.2g%s",
               2.0 * M * M * M / s.best / 1e9, 1e3 * s.median, 1e3 * s.best, compile_ms, frit_program_num_kernels(p), bench_threads(),
               ok ? "true" : "false", maxerr, bench_source_facts(p));
  }
  frit_ctx_free(ctx);
  free(a), free(b), free(c);
  return 0;
}
