/* Softmax over the last axis of a 4096x4096 f32 matrix, in ms. The peer, numpy's
 * exp(x - max) / sum, is measured by bench/peers/numpy_tensor.py in the same bench/run. */
#include "bench_common.h"

#define R 4096
#define C 4096

int main(void) {
  const char *name = "softmax_4096";
  float *x = bench_alloc_floats((size_t)R * C), *y = bench_alloc_floats((size_t)R * C);
  if (!x || !y) return 1;
  uint64_t q = 42;
  for (int64_t i = 0; i < (int64_t)R * C; i++) {
    q ^= q << 13, q ^= q >> 7, q ^= q << 17;
    x[i] = (float)(q >> 40) / (float)(1 << 24) * 8.0f - 4.0f;
  }
  frit_ctx *ctx = frit_ctx_new();
  int64_t shp[2] = {R, C};
  frit_tensor *in = frit_input(ctx, "x", FRIT_F32, 2, shp);
  frit_tensor *out = frit_softmax(ctx, in, -1);
  double compile_ms = 0;
  frit_program *p = out ? bench_compile(ctx, &out, 1, &compile_ms, name) : NULL;
  if (!p) {
    bench_emit(name, -1, "ms", "numpy", -1, ", \"error\": \"compile failed\"");
  } else {
    void *ins[1] = {x}, *outs[1] = {y};
    bench_run r = {p, ins, outs, FRIT_OK};
    bench_stats s = bench_time(bench_run_fn, &r, 2, bench_reps(10));
    double maxerr = 0;
    for (int i = 0; i < R; i += 127) {
      double m = -1e30, sum = 0;
      for (int j = 0; j < C; j++) m = x[(int64_t)i * C + j] > m ? x[(int64_t)i * C + j] : m;
      for (int j = 0; j < C; j++) sum += exp(x[(int64_t)i * C + j] - m);
      for (int j = 0; j < C; j++) {
        double ref = exp(x[(int64_t)i * C + j] - m) / sum, e = fabs(y[(int64_t)i * C + j] - ref) / ref;
        if (!(e <= maxerr)) maxerr = e;
      }
    }
    int ok = r.st == FRIT_OK && maxerr < 1e-4;
    bench_emit(name, 1e3 * s.median, "ms", "numpy", -1,
               ", \"best_value\": %.6g, \"best_ms\": %.3f, \"gbs\": %.2f, \"compile_ms\": %.1f, \"kernels\": %d, \"threads\": %d, "
               "\"ok\": %s, \"max_rel_err\": %.2g%s",
               1e3 * s.best, 1e3 * s.best, 2.0 * R * C * sizeof(float) / s.median / 1e9, compile_ms,
               frit_program_num_kernels(p), bench_threads(), ok ? "true" : "false", maxerr, bench_source_facts(p));
  }
  frit_ctx_free(ctx);
  free(x), free(y);
  return 0;
}
