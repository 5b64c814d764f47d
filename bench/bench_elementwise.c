/* Fused elementwise chain of 8 ops over 16M f32 (one read, one write per element), in GB/s,
 * against the machine's copy bandwidth (the better of memcpy and a vector scale loop) measured
 * in this process on as many threads, interleaved with the program's runs. */
#include "bench_common.h"

#define N ((int64_t)1 << 24)

static frit_tensor *sc(frit_ctx *ctx, double v) { return frit_scalar_f(ctx, FRIT_F32, v); }

/* out = exp(-2 * (max((x*1.5 + 0.25)*0.5 - 0.5, 0) + 0.1)), or min(..., -0.5) for the last op */
static frit_tensor *chain(frit_ctx *ctx, frit_tensor *x, int with_exp) {
  frit_tensor *t = frit_binary_t(ctx, FRIT_BF_MUL, x, sc(ctx, 1.5));
  t = frit_binary_t(ctx, FRIT_BF_ADD, t, sc(ctx, 0.25));
  t = frit_binary_t(ctx, FRIT_BF_MUL, t, sc(ctx, 0.5));
  t = frit_binary_t(ctx, FRIT_BF_SUB, t, sc(ctx, 0.5));
  t = frit_binary_t(ctx, FRIT_BF_MAXIMUM, t, sc(ctx, 0.0));
  t = frit_binary_t(ctx, FRIT_BF_ADD, t, sc(ctx, 0.1));
  t = frit_binary_t(ctx, FRIT_BF_MUL, t, sc(ctx, -2.0));
  return with_exp ? frit_unary_t(ctx, FRIT_UF_EXP, t) : frit_binary_t(ctx, FRIT_BF_MINIMUM, t, sc(ctx, -0.5));
}

static float chain_ref(float x, int with_exp) {
  float t = x * 1.5f + 0.25f;
  t = t * 0.5f - 0.5f;
  t = t > 0.0f ? t : 0.0f;
  t = (t + 0.1f) * -2.0f;
  return with_exp ? expf(t) : (t < -0.5f ? t : -0.5f);
}

static int run_one(const char *name, int with_exp, float *x, float *y) {
  int nth = bench_threads();
  frit_ctx *ctx = frit_ctx_new();
  int64_t n = N;
  frit_tensor *in = frit_input(ctx, "x", FRIT_F32, 1, &n);
  frit_tensor *out = chain(ctx, in, with_exp);
  double compile_ms = 0;
  frit_program *p = out ? bench_compile(ctx, &out, 1, &compile_ms, name) : NULL;
  void *ins[1] = {x}, *outs[1] = {y};
  bench_run r = {p, ins, outs, FRIT_OK};
  /* the limit is measured round by round with the program's runs (same machine state) */
  bench_bw_result bw = bench_measure_bw_on((size_t)N, nth, bench_reps(20), p ? bench_run_fn : NULL, &r, x, y);
  double limit = bw.copy > bw.scale ? bw.copy : bw.scale;
  double limit_best = bw.copy_best > bw.scale_best ? bw.copy_best : bw.scale_best;
  if (!p) {
    if (!out) fprintf(stderr, "bench %s: graph failed: %s\n", name, frit_error(ctx));
    bench_emit(name, -1, "GB/s", "stream_copy_c", limit, ", \"error\": \"compile failed\"");
    frit_ctx_free(ctx);
    return 1;
  }
  bench_stats s = bw.extra;
  double maxerr = 0;
  for (int64_t i = 0; i < N; i += 97) {
    double ref = chain_ref(x[i], with_exp), e = fabs((double)y[i] - ref) / (fabs(ref) + 1e-6);
    if (!(e <= maxerr)) maxerr = e; /* NaN counts as a failure */
  }
  int ok = r.st == FRIT_OK && maxerr < 1e-5;
  double bytes = 2.0 * (double)N * sizeof(float), gbs = bytes / s.median / 1e9;
  bench_emit(name, gbs, "GB/s", "stream_copy_c", limit,
             ", \"ratio\": %.3f, \"ratio_best\": %.3f, \"median_ms\": %.3f, \"best_ms\": %.3f, \"compile_ms\": %.1f, "
             "\"kernels\": %d, \"threads\": %d, \"copy_gbs\": %.2f, \"scale_gbs\": %.2f, \"ok\": %s, "
             "\"max_rel_err\": %.2g%s",
             gbs / limit, bytes / s.best / 1e9 / limit_best, 1e3 * s.median, 1e3 * s.best, compile_ms,
             frit_program_num_kernels(p), nth, bw.copy, bw.scale, ok ? "true" : "false", maxerr,
             bench_source_facts(p));
  frit_ctx_free(ctx);
  return !ok;
}

int main(void) {
  int fails = 0;
  float *x = bench_alloc_floats((size_t)N), *y = bench_alloc_floats((size_t)N);
  if (!x || !y) return 1;
  for (int64_t i = 0; i < N; i++) x[i] = (float)((uint64_t)i * 2654435761u % 1000003u) / 1000003.0f;
  memset(y, 0, (size_t)N * sizeof(float));
  fails += run_one("elementwise_chain8_exp", 1, x, y);
  fails += run_one("elementwise_chain8", 0, x, y);
  free(x);
  free(y);
  (void)fails; /* a wrong result shows as "ok": false; the other benchmarks still run */
  return 0;
}
