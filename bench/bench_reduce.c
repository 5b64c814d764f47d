/* Sum and max of 16M f32 to a scalar, in GB/s read, against a multithreaded read-sum in C (the
 * read bandwidth limit) and the copy bandwidth, both measured in this process on as many
 * threads, interleaved with the program's runs. */
#include "bench_common.h"

#define N ((int64_t)1 << 24)

/* One reduction (FRIT_RF_SUM or FRIT_RF_MAX) of x to a scalar, checked against ref */
static void bench_reduction(const char *name, int op, float *x, double ref, int nth) {
  float y = 0;
  frit_ctx *ctx = frit_ctx_new();
  int64_t n = N;
  frit_tensor *in = frit_input(ctx, "x", FRIT_F32, 1, &n);
  frit_tensor *out = frit_reduce(ctx, op, in, NULL, FRIT_ALL_AXES, 0, 0);
  double compile_ms = 0;
  frit_program *p = out ? bench_compile(ctx, &out, 1, &compile_ms, name) : NULL;
  void *ins[1] = {x}, *outs[1] = {&y};
  bench_run r = {p, ins, outs, FRIT_OK};
  bench_bw_result bw = bench_measure_bw_on((size_t)N, nth, bench_reps(20), p ? bench_run_fn : NULL, &r, x, NULL);
  if (!p) {
    bench_emit(name, -1, "GB/s", "readsum_c", bw.readsum, ", \"error\": \"compile failed\"");
  } else {
    bench_stats s = bw.extra;
    double err = fabs((double)y - ref) / ref;
    int ok = r.st == FRIT_OK && err < 1e-4;
    double bytes = (double)N * sizeof(float), gbs = bytes / s.median / 1e9;
    bench_emit(name, gbs, "GB/s", "readsum_c", bw.readsum,
               ", \"ratio\": %.3f, \"ratio_best\": %.3f, \"copy_gbs\": %.2f, \"ratio_vs_copy\": %.3f, "
               "\"median_ms\": %.3f, \"best_ms\": %.3f, \"compile_ms\": %.1f, \"kernels\": %d, \"threads\": %d, "
               "\"ok\": %s, \"rel_err\": %.2g%s",
               gbs / bw.readsum, bytes / s.best / 1e9 / bw.readsum_best, bw.copy, gbs / bw.copy,
               1e3 * s.median, 1e3 * s.best, compile_ms, frit_program_num_kernels(p), nth,
               ok ? "true" : "false", err, bench_source_facts(p));
  }
  frit_ctx_free(ctx);
}

int main(void) {
  int nth = bench_threads();
  float *x = bench_alloc_floats((size_t)N);
  if (!x) return 1;
  double ref = 0, top = 0;
  for (int64_t i = 0; i < N; i++) {
    x[i] = (float)((uint64_t)i * 2654435761u % 1000003u) / 1000003.0f;
    ref += x[i];
    top = x[i] > top ? x[i] : top;
  }
  bench_reduction("reduce_sum_16m", FRIT_RF_SUM, x, ref, nth);
  bench_reduction("reduce_max_16m", FRIT_RF_MAX, x, top, nth);
  free(x);
  return 0;
}
