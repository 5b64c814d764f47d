/* conv2d: input 32x64x56x56 f32, 64 output channels, 3x3 kernel, stride 1, padding 1, in ms
 * (and GFLOP/s). The peer, im2col + matmul in numpy (OpenBLAS), is measured by
 * bench/peers/numpy_tensor.py in the same bench/run. */
#include "bench_common.h"

#define NB 32
#define CI 64
#define CO 64
#define H 56
#define W 56

int main(void) {
  const char *name = "conv2d_32x64x56x56";
  size_t nx = (size_t)NB * CI * H * W, nw = (size_t)CO * CI * 9, ny = (size_t)NB * CO * H * W;
  float *x = bench_alloc_floats(nx), *w = bench_alloc_floats(nw), *y = bench_alloc_floats(ny);
  if (!x || !w || !y) return 1;
  uint64_t q = 7;
  for (size_t i = 0; i < nx; i++) q ^= q << 13, q ^= q >> 7, q ^= q << 17, x[i] = (float)(q >> 40) / (float)(1 << 24) - 0.5f;
  for (size_t i = 0; i < nw; i++) q ^= q << 13, q ^= q >> 7, q ^= q << 17, w[i] = (float)(q >> 40) / (float)(1 << 24) - 0.5f;
  frit_ctx *ctx = frit_ctx_new();
  int64_t xs[4] = {NB, CI, H, W}, ws[4] = {CO, CI, 3, 3};
  int64_t stride[2] = {1, 1}, pad[2] = {1, 1}, dil[2] = {1, 1};
  frit_tensor *tx = frit_input(ctx, "x", FRIT_F32, 4, xs), *tw = frit_input(ctx, "w", FRIT_F32, 4, ws);
  frit_tensor *out = frit_conv2d(ctx, tx, tw, NULL, stride, pad, dil, 1);
  double compile_ms = 0;
  frit_program *p = out ? bench_compile(ctx, &out, 1, &compile_ms, name) : NULL;
  if (!p) {
    bench_emit(name, -1, "ms", "numpy_im2col_openblas", -1, ", \"error\": \"compile failed\"");
  } else {
    void *ins[2] = {x, w}, *outs[1] = {y};
    bench_run r = {p, ins, outs, FRIT_OK};
    bench_stats s = bench_time(bench_run_fn, &r, 1, bench_reps(5));
    double maxerr = 0;
    for (int t = 0; t < 200; t++) {
      q ^= q << 13, q ^= q >> 7, q ^= q << 17;
      int n = (int)(q % NB), o = (int)((q >> 8) % CO), i = (int)((q >> 16) % H), j = (int)((q >> 32) % W);
      if (t < 4) i = t % 2 ? H - 1 : 0, j = t / 2 ? W - 1 : 0; /* the padded corners */
      double ref = 0, mag = 1e-30;
      for (int c = 0; c < CI; c++)
        for (int ki = 0; ki < 3; ki++)
          for (int kj = 0; kj < 3; kj++) {
            int ii = i + ki - 1, jj = j + kj - 1;
            if (ii < 0 || ii >= H || jj < 0 || jj >= W) continue;
            double v = (double)x[(((size_t)n * CI + c) * H + ii) * W + jj] * w[(((size_t)o * CI + c) * 3 + ki) * 3 + kj];
            ref += v, mag += fabs(v);
          }
      double e = fabs(y[(((size_t)n * CO + o) * H + i) * W + j] - ref) / mag;
      if (!(e <= maxerr)) maxerr = e;
    }
    int ok = r.st == FRIT_OK && maxerr < 1e-5;
    double flops = 2.0 * NB * CO * H * W * CI * 9;
    bench_emit(name, 1e3 * s.median, "ms", "numpy_im2col_openblas", -1,
               ", \"best_value\": %.6g, \"best_ms\": %.3f, \"gflops\": %.2f, \"compile_ms\": %.1f, \"kernels\": %d, \"threads\": %d, "
               "\"ok\": %s, \"rel_err\": %.2g%s",
               1e3 * s.best, 1e3 * s.best, flops / s.median / 1e9, compile_ms, frit_program_num_kernels(p), bench_threads(),
               ok ? "true" : "false", maxerr, bench_source_facts(p));
  }
  frit_ctx_free(ctx);
  free(x), free(w), free(y);
  return 0;
}
