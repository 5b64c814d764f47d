/* Demo: one n-body integration step written with frit's C tensor API, compiled once and run
 * for several steps, timed against the same step as a plain C double loop.
 * Usage: nbody [N [STEPS]]   (defaults 4096 bodies, 5 steps) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "frit.h"

static const float DT = 0.01f, SOFTENING = 1e-4f;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The step in tensor form:
 *   dx = X[None,:,:] - X[:,None,:]          (N, N, 3): dx[i,j] = X[j] - X[i]
 *   d2 = sum(dx**2, -1) + eps               (N, N)
 *   F  = sum(dx / d2[..., None]**1.5, 1)    (N, 3)
 *   V' = V + F*dt;  X' = X + V'*dt */
static int build_step(frit_ctx *ctx, int64_t n, frit_tensor *outs[2]) {
  int64_t dims[2] = {n, 3};
  frit_tensor *X = frit_input(ctx, "X", FRIT_F32, 2, dims);
  frit_tensor *V = frit_input(ctx, "V", FRIT_F32, 2, dims);
  frit_tensor *dx = frit_binary_t(ctx, FRIT_BF_SUB, frit_unsqueeze(ctx, X, 0), frit_unsqueeze(ctx, X, 1));
  int last = -1, mid = 1;
  frit_tensor *d2 = frit_reduce(ctx, FRIT_RF_SUM, frit_binary_t(ctx, FRIT_BF_MUL, dx, dx), &last, 1, 0, 0);
  d2 = frit_binary_t(ctx, FRIT_BF_ADD, d2, frit_scalar_f(ctx, FRIT_F32, SOFTENING));
  frit_tensor *den = frit_binary_t(ctx, FRIT_BF_POW, d2, frit_scalar_f(ctx, FRIT_F32, 1.5));
  frit_tensor *f = frit_reduce(ctx, FRIT_RF_SUM,
                               frit_binary_t(ctx, FRIT_BF_TRUEDIV, dx, frit_unsqueeze(ctx, den, -1)),
                               &mid, 1, 0, 0);
  frit_tensor *dt = frit_scalar_f(ctx, FRIT_F32, DT);
  frit_tensor *v2 = frit_binary_t(ctx, FRIT_BF_ADD, V, frit_binary_t(ctx, FRIT_BF_MUL, f, dt));
  frit_tensor *x2 = frit_binary_t(ctx, FRIT_BF_ADD, X, frit_binary_t(ctx, FRIT_BF_MUL, v2, dt));
  outs[0] = x2;
  outs[1] = v2;
  return x2 && v2;
}

/* The same step as a straightforward double loop, in f32 like the tensor program. */
static void step_c(int64_t n, const float *x, const float *v, float *x2, float *v2) {
  for (int64_t i = 0; i < n; i++) {
    float f[3] = {0, 0, 0};
    for (int64_t j = 0; j < n; j++) {
      float d[3];
      for (int c = 0; c < 3; c++) d[c] = x[j * 3 + c] - x[i * 3 + c];
      float d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + SOFTENING;
      float den = powf(d2, 1.5f);
      for (int c = 0; c < 3; c++) f[c] += d[c] / den;
    }
    for (int c = 0; c < 3; c++) {
      v2[i * 3 + c] = v[i * 3 + c] + f[c] * DT;
      x2[i * 3 + c] = x[i * 3 + c] + v2[i * 3 + c] * DT;
    }
  }
}

int main(int argc, char **argv) {
  int64_t n = argc > 1 ? atoll(argv[1]) : 4096;
  int steps = argc > 2 ? atoi(argv[2]) : 5;
  if (n < 1 || steps < 1) {
    fprintf(stderr, "usage: nbody [N [STEPS]]\n");
    return 2;
  }
  frit_ctx *ctx = frit_ctx_new();
  frit_tensor *outs[2];
  if (!ctx || !build_step(ctx, n, outs)) {
    fprintf(stderr, "nbody: building the step: %s\n", ctx ? frit_error(ctx) : "out of memory");
    return 1;
  }
  double t0 = now_s();
  frit_program *p = frit_compile(ctx, outs, 2, NULL);
  double t_compile = now_s() - t0;
  if (!p) {
    fprintf(stderr, "nbody: compile: %s\n", frit_error(ctx));
    frit_ctx_free(ctx);
    return 1;
  }
  size_t sz = (size_t)n * 3;
  float *buf[8];
  for (int i = 0; i < 8; i++) {
    buf[i] = malloc(sz * sizeof(float));
    if (!buf[i]) {
      fprintf(stderr, "nbody: out of memory\n");
      return 1;
    }
  }
  float *x = buf[0], *v = buf[1], *x2 = buf[2], *v2 = buf[3]; /* frit's state, double-buffered */
  float *cx = buf[4], *cv = buf[5], *cx2 = buf[6], *cv2 = buf[7]; /* plain C's */
  srand(1);
  for (size_t i = 0; i < sz; i++) {
    x[i] = cx[i] = (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
    v[i] = cv[i] = 0.0f;
  }
  printf("n-body: N=%lld, %d steps, %d kernel(s), compile %.3f s\n", (long long)n, steps,
         frit_program_num_kernels(p), t_compile);
  double t_frit = 0, t_c = 0;
  for (int s = 0; s < steps; s++) {
    void *in[2] = {x, v}, *out[2] = {x2, v2};
    t0 = now_s();
    if (frit_program_run(p, in, out, NULL, 0) != FRIT_OK) {
      fprintf(stderr, "nbody: run: %s\n", frit_error(ctx));
      return 1;
    }
    t_frit += now_s() - t0;
    t0 = now_s();
    step_c(n, cx, cv, cx2, cv2);
    t_c += now_s() - t0;
    float *t;
    t = x, x = x2, x2 = t;
    t = v, v = v2, v2 = t;
    t = cx, cx = cx2, cx2 = t;
    t = cv, cv = cv2, cv2 = t;
  }
  double maxdiff = 0, maxabs = 0;
  for (size_t i = 0; i < sz; i++) {
    maxdiff = fmax(maxdiff, fabs((double)x[i] - cx[i]));
    maxdiff = fmax(maxdiff, fabs((double)v[i] - cv[i]));
    maxabs = fmax(maxabs, fmax(fabs((double)cx[i]), fabs((double)cv[i])));
  }
  double pairs = (double)n * (double)n * steps;
  printf("frit:    %8.2f ms/step  (%.0f M pair interactions/s)\n", 1e3 * t_frit / steps, 1e-6 * pairs / t_frit);
  printf("plain C: %8.2f ms/step  (%.0f M pair interactions/s, single thread)\n", 1e3 * t_c / steps,
         1e-6 * pairs / t_c);
  /* both compute in f32; they differ only where the compiler orders a sum differently */
  int ok = maxdiff <= 1e-3 * (1.0 + maxabs);
  printf("speedup: %.2fx; max |frit - C| = %.3g (largest |value| %.3g): %s\n", t_c / t_frit, maxdiff,
         maxabs, ok ? "agree" : "MISMATCH");
  frit_program_info(p, stdout);
  for (int i = 0; i < 8; i++) free(buf[i]);
  frit_ctx_free(ctx);
  return ok ? 0 : 1;
}
