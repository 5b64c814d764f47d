/* One step of softened-gravity N-body, N = 4096, in numpy's vectorised formulation (the
 * (N, N, 3) pairwise differences are never materialised when fused), in ms per step.
 * The peer, numpy running the same formulation, is measured by bench/peers/numpy_tensor.py. */
#include "bench_common.h"

#define NB 4096
#define DT 0.01
#define EPS 1e-4

static frit_tensor *sc(frit_ctx *ctx, double v) { return frit_scalar_f(ctx, FRIT_F32, v); }

/* dx = X[None,:,:] - X[:,None,:]; d2 = sum(dx^2, -1) + eps; F = sum(dx / d2^1.5, 1);
 * V += F*dt; X += V*dt. outs[0] = X', outs[1] = V'. */
static int build(frit_ctx *ctx, frit_tensor **outs) {
  int64_t shp[2] = {NB, 3}, a[3] = {1, NB, 3}, b[3] = {NB, 1, 3};
  frit_tensor *x = frit_input(ctx, "X", FRIT_F32, 2, shp), *v = frit_input(ctx, "V", FRIT_F32, 2, shp);
  frit_tensor *dx = frit_binary_t(ctx, FRIT_BF_SUB, frit_reshape(ctx, x, 3, a), frit_reshape(ctx, x, 3, b));
  int last = -1, mid = 1;
  frit_tensor *d2 = frit_reduce(ctx, FRIT_RF_SUM, frit_binary_t(ctx, FRIT_BF_MUL, dx, dx), &last, 1, 1, 0);
  d2 = frit_binary_t(ctx, FRIT_BF_ADD, d2, sc(ctx, EPS));
  frit_tensor *f = frit_binary_t(ctx, FRIT_BF_TRUEDIV, dx, frit_binary_t(ctx, FRIT_BF_POW, d2, sc(ctx, 1.5)));
  f = frit_reduce(ctx, FRIT_RF_SUM, f, &mid, 1, 0, 0);
  frit_tensor *v2 = frit_binary_t(ctx, FRIT_BF_ADD, v, frit_binary_t(ctx, FRIT_BF_MUL, f, sc(ctx, DT)));
  frit_tensor *x2 = frit_binary_t(ctx, FRIT_BF_ADD, x, frit_binary_t(ctx, FRIT_BF_MUL, v2, sc(ctx, DT)));
  outs[0] = x2;
  outs[1] = v2;
  return x2 && v2;
}

typedef struct stepper { frit_program *p; float *x[2], *v[2]; int cur; frit_status st; } stepper;

static void step(void *arg) {
  stepper *s = arg;
  void *ins[2] = {s->x[s->cur], s->v[s->cur]}, *outs[2] = {s->x[!s->cur], s->v[!s->cur]};
  frit_status st = frit_program_run(s->p, ins, outs, NULL, 0);
  if (st != FRIT_OK) s->st = st;
  s->cur = !s->cur;
}

int main(void) {
  const char *name = "nbody_step_4096";
  stepper s;
  memset(&s, 0, sizeof s);
  for (int k = 0; k < 2; k++) {
    s.x[k] = bench_alloc_floats(NB * 3);
    s.v[k] = bench_alloc_floats(NB * 3);
  }
  uint64_t r = 88172645463325252ull;
  for (int i = 0; i < NB * 3; i++) {
    r ^= r << 13, r ^= r >> 7, r ^= r << 17;
    s.x[0][i] = (float)(r >> 40) / (float)(1 << 24);
    s.v[0][i] = 0;
  }
  frit_ctx *ctx = frit_ctx_new();
  frit_tensor *outs[2];
  double compile_ms = 0;
  s.p = build(ctx, outs) ? bench_compile(ctx, outs, 2, &compile_ms, name) : NULL;
  if (!s.p) {
    if (!outs[0]) fprintf(stderr, "bench %s: graph failed: %s\n", name, frit_error(ctx));
    bench_emit(name, -1, "ms/step", "numpy", -1, ", \"error\": \"compile failed\"");
    frit_ctx_free(ctx);
    return 0;
  }
  /* check the first step against the formula in double on some rows */
  step(&s);
  double maxerr = 0, scale = 0;
  for (int i = 0; i < NB; i += 61) {
    double f[3] = {0, 0, 0};
    for (int j = 0; j < NB; j++) {
      double d[3], d2 = EPS;
      for (int c = 0; c < 3; c++) d[c] = (double)s.x[0][j * 3 + c] - s.x[0][i * 3 + c], d2 += d[c] * d[c];
      for (int c = 0; c < 3; c++) f[c] += d[c] / pow(d2, 1.5);
    }
    for (int c = 0; c < 3; c++) {
      double v = f[c] * DT, e = fabs(v - s.v[1][i * 3 + c]);
      if (fabs(v) > scale) scale = fabs(v);
      if (!(e <= maxerr)) maxerr = e;
      double xe = fabs(s.x[0][i * 3 + c] + v * DT - s.x[1][i * 3 + c]);
      if (!(xe <= 1e-5)) maxerr = 1e30;
    }
  }
  double err = maxerr / scale;
  int ok = s.st == FRIT_OK && err < 1e-3;
  bench_stats st = bench_time(step, &s, 1, bench_reps(10));
  double ms = 1e3 * st.median;
  bench_emit(name, ms, "ms/step", "numpy", -1,
             ", \"best_value\": %.6g, \"best_ms\": %.3f, \"compile_ms\": %.1f, \"kernels\": %d, \"threads\": %d, "
             "\"gflops\": %.2f, \"ok\": %s, \"rel_err\": %.2g%s",
             1e3 * st.best, 1e3 * st.best, compile_ms, frit_program_num_kernels(s.p), bench_threads(),
             /* ~20 flops per pair: 3 sub, 3 mul + 3 add (d2), pow, 3 div, 3 add */
             20.0 * NB * NB / st.median / 1e9, ok ? "true" : "false", err, bench_source_facts(s.p));
  frit_ctx_free(ctx);
  for (int k = 0; k < 2; k++) free(s.x[k]), free(s.v[k]);
  return 0;
}
