/* The ufuncs added for the array API (acosh ... fmin) through the C API, interpreted and compiled,
 * against the C library's functions (an independent oracle) on special and swept values. */
#include "frit.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define N 64

static double xs[N], ys[N];

static void make_values(void) {
  static const double sp[] = {0.0, -0.0, 1.0, -1.0, INFINITY, -INFINITY, NAN, 1e-300, -1e-300, 5e-324,
                              1e300, -1e300, 1.7e308, 0.5, -0.5, 0.999999, 1.000001, 2.0, 1e10, -1e10,
                              1e-8, 3e-20, 0.3, 1e5};
  int ns = (int)(sizeof sp / sizeof sp[0]);
  uint64_t r = 12345;
  for (int i = 0; i < N; i++) {
    r = r * 6364136223846793005ull + 1442695040888963407ull;
    double u = (double)(r >> 11) / 9007199254740992.0; /* [0, 1) */
    double sweep = (i & 1 ? -1 : 1) * pow(10.0, -300 + 600 * u);
    xs[i] = i < ns ? sp[i] : sweep;
    ys[i] = i < ns ? sp[(i * 7 + 3) % ns] : (i & 2 ? 1 : -1) * pow(10.0, -5 + 10 * u);
  }
}

/* Distance in units of the last place; equal values with equal signs and NaN pairs are 0. */
static double ulps(double got, double want) {
  if (isnan(want)) return isnan(got) ? 0 : INFINITY;
  if (got == want) return signbit(got) == signbit(want) ? 0 : INFINITY;
  if (isinf(want) || isinf(got)) return INFINITY;
  double sp = nextafter(fabs(want), INFINITY) - fabs(want);
  return fabs(got - want) / sp;
}

static long double la_exp(double a, double b, bool base2) { /* logaddexp in long double */
  if (a == b) return (long double)a + (base2 ? 1.0L : logl(2.0L));
  long double m = a > b ? a : b, d = -fabsl((long double)a - b);
  if (isnan(a) || isnan(b)) return NAN;
  return base2 ? m + log2l(1.0L + exp2l(d)) : m + log1pl(expl(d));
}

static double oracle1(frit_ufunc f, double x) {
  if (f == FRIT_UF_ACOSH) return acosh(x);
  if (f == FRIT_UF_ASINH) return asinh(x);
  if (f == FRIT_UF_ATANH) return atanh(x);
  if (f == FRIT_UF_CBRT) return cbrt(x);
  if (f == FRIT_UF_RINT) return nearbyint(x);
  if (f == FRIT_UF_DEG2RAD) return x * (3.14159265358979323846 / 180.0);
  if (f == FRIT_UF_RAD2DEG) return x * (180.0 / 3.14159265358979323846);
  if (f == FRIT_UF_SIGNBIT) return signbit(x) ? 1 : 0;
  return NAN;
}

static double oracle2(frit_bfunc f, double a, double b) {
  if (f == FRIT_BF_COPYSIGN) return copysign(a, b);
  if (f == FRIT_BF_HYPOT) return hypot(a, b);
  if (f == FRIT_BF_LOGADDEXP) return (double)la_exp(a, b, false);
  if (f == FRIT_BF_LOGADDEXP2) return (double)la_exp(a, b, true);
  if (f == FRIT_BF_NEXTAFTER) return nextafter(a, b);
  if (f == FRIT_BF_FMOD) return fmod(a, b);
  if (f == FRIT_BF_FMAX) return a >= b || isnan(b) ? a : b; /* numpy's tie rule */
  if (f == FRIT_BF_FMIN) return a <= b || isnan(b) ? a : b;
  return NAN;
}

/* Runs t (inputs x, y: f64[N]) on one path; results as doubles. */
static bool run(frit_ctx *ctx, frit_tensor *t, int interpret, double *got) {
  frit_compile_opts o;
  memset(&o, 0, sizeof o);
  o.interpret = interpret;
  frit_program *p = frit_compile(ctx, &t, 1, &o);
  if (!p) {
    fprintf(stderr, "compile failed: %s\n", frit_error(ctx));
    return false;
  }
  void *in[2] = {NULL, NULL};
  for (int i = 0; i < frit_program_num_inputs(p); i++)
    in[i] = !strcmp(frit_program_input_name(p, i), "x") ? (void *)xs : (void *)ys;
  bool isb = frit_tensor_dtype(t) == FRIT_BOOL;
  unsigned char bb[N];
  void *out[1] = {isb ? (void *)bb : (void *)got};
  frit_status st = frit_program_run(p, in, out, NULL, 0);
  if (st != FRIT_OK) fprintf(stderr, "run failed: %s\n", frit_error(ctx));
  if (isb)
    for (int i = 0; i < N; i++) got[i] = bb[i];
  return st == FRIT_OK;
}

static void check_all(frit_ctx *ctx, const char *name, frit_tensor *t, const double *want, double tol) {
  for (int interp = 0; interp < 2; interp++) {
    double got[N];
    CHECK(t && run(ctx, t, interp, got));
    if (!t) return;
    for (int i = 0; i < N; i++) {
      double d = ulps(got[i], want[i]);
      if (d > tol) fprintf(stderr, "%s (%s) at %d (x=%.17g y=%.17g): got %.17g want %.17g (%g ulps)\n", name,
                           interp ? "interp" : "compiled", i, xs[i], ys[i], got[i], want[i], d);
      CHECK(d <= tol);
    }
  }
}

static void test_values(void) {
  frit_ctx *ctx = frit_ctx_new();
  const int64_t dims[1] = {N};
  frit_tensor *x = frit_input(ctx, "x", FRIT_F64, 1, dims), *y = frit_input(ctx, "y", FRIT_F64, 1, dims);
  double want[N];
  for (int f = FRIT_UF_ACOSH; f < FRIT_UF_COUNT_; f++) {
    double xx[N];
    for (int i = 0; i < N; i++) xx[i] = f == FRIT_UF_ACOSH ? fabs(xs[i]) + (i % 3 ? 1.0 : 0.0) : f == FRIT_UF_ATANH ? xs[i] / (1 + fabs(xs[i])) : xs[i];
    for (int i = 0; i < N; i++) want[i] = oracle1((frit_ufunc)f, xx[i]);
    double keep[N];
    memcpy(keep, xs, sizeof keep);
    memcpy(xs, xx, sizeof xs);
    check_all(ctx, frit_ufunc_name((frit_ufunc)f), frit_unary_t(ctx, (frit_ufunc)f, x), want, 2);
    memcpy(xs, keep, sizeof xs);
  }
  for (int f = FRIT_BF_COPYSIGN; f < FRIT_BF_COUNT_; f++) {
    for (int i = 0; i < N; i++) want[i] = oracle2((frit_bfunc)f, xs[i], ys[i]);
    check_all(ctx, frit_bfunc_name((frit_bfunc)f), frit_binary_t(ctx, (frit_bfunc)f, x, y), want, 2);
  }
  frit_ctx_free(ctx);
}

static void test_errors(void) {
  frit_ctx *ctx = frit_ctx_new();
  frit_tensor *a = frit_input(ctx, "a", FRIT_F32, 2, (const int64_t[]){2, 3});
  frit_tensor *b = frit_input(ctx, "b", FRIT_I8, 1, (const int64_t[]){4});
  CHECK(frit_binary_t(ctx, FRIT_BF_HYPOT, a, b) == NULL);
  CHECK(frit_last_status(ctx) == FRIT_ERR_INVALID);
  CHECK(strstr(frit_error(ctx), "hypot") && strstr(frit_error(ctx), "(2, 3)") && strstr(frit_error(ctx), "(4,)"));
  frit_clear_error(ctx);
  /* integer fmod: x % 0 = 0 and INT_MIN % -1 = 0 (numpy), no trap */
  frit_tensor *p = frit_input(ctx, "p", FRIT_I32, 1, (const int64_t[]){4});
  frit_tensor *q = frit_input(ctx, "q", FRIT_I32, 1, (const int64_t[]){4});
  frit_tensor *r = frit_binary_t(ctx, FRIT_BF_FMOD, p, q);
  CHECK(r && frit_tensor_dtype(r) == FRIT_I32);
  frit_program *prog = r ? frit_compile(ctx, &r, 1, NULL) : NULL;
  CHECK(prog != NULL);
  if (prog) {
    int32_t pv[4] = {INT32_MIN, -7, 7, 5}, qv[4] = {-1, 0, -3, 3}, out[4];
    void *in[2];
    for (int i = 0; i < 2; i++) in[i] = !strcmp(frit_program_input_name(prog, i), "p") ? (void *)pv : (void *)qv;
    void *o[1] = {out};
    CHECK(frit_program_run(prog, in, o, NULL, 0) == FRIT_OK);
    CHECK(out[0] == 0 && out[1] == 0 && out[2] == 1 && out[3] == 2);
  }
  frit_ctx_free(ctx);
}

int main(void) {
  make_values();
  test_values();
  test_errors();
  CHECK_DONE();
}
