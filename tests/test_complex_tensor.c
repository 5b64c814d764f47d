/* Tests of complex tensors through the whole pipeline (compiled and interpreted): numpy's
 * promotion, elementwise ops, parts, sum/prod/mean, matmul, where and casts, each against a
 * value computed here in real arithmetic; and the errors for ops without complex loops. */
#include "check.h"
#include "frit.h"

#include <complex.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define D(...) ((const int64_t[]){__VA_ARGS__})
enum { M = 3, K = 5, N = 4 };

static double xa[2 * M * K], xb[2 * K * N]; /* interleaved (re, im) as numpy's complex128 */

/* Runs t (one output of n elements, dtype dt) with inputs a (M, K) c128 and b (K, N) c64. */
static bool run(frit_ctx *ctx, frit_tensor *t, int interpret, void *out) {
  frit_compile_opts o;
  memset(&o, 0, sizeof o);
  o.interpret = interpret;
  frit_program *p = frit_compile(ctx, &t, 1, &o);
  if (!p) {
    fprintf(stderr, "compile: %s\n", frit_error(ctx));
    CHECK(p != NULL);
    return false;
  }
  float b32[2 * K * N];
  for (int i = 0; i < 2 * K * N; i++) b32[i] = (float)xb[i];
  void *ins[2];
  for (int i = 0; i < frit_program_num_inputs(p); i++)
    ins[i] = strcmp(frit_program_input_name(p, i), "a") == 0 ? (void *)xa : (void *)b32;
  frit_status st = frit_program_run(p, ins, (void *[]){out}, NULL, 0);
  if (st != FRIT_OK) fprintf(stderr, "run: %s\n", frit_error(ctx));
  CHECK_EQ_INT(st, FRIT_OK);
  return st == FRIT_OK;
}

static bool close_c(double re, double im, double wre, double wim, double tol) {
  bool ok = fabs(re - wre) <= tol * (1 + fabs(wre)) && fabs(im - wim) <= tol * (1 + fabs(wim));
  if (!ok) fprintf(stderr, "  got %.9g%+.9gi want %.9g%+.9gi\n", re, im, wre, wim);
  return ok;
}

#define CHECK_ERR(ctx, expr, sub)                                                                  \
  do {                                                                                             \
    frit_tensor *r_ = (expr);                                                                      \
    bool ok_ = r_ == NULL && strstr(frit_error(ctx), sub) != NULL;                                 \
    if (!ok_) fprintf(stderr, "error check: got \"%s\"\n", frit_error(ctx));                      \
    CHECK(ok_);                                                                                    \
    frit_clear_error(ctx);                                                                         \
  } while (0)

static void test_promotion(void) {
  struct { frit_dtype a, b, want; } p[] = {
      {FRIT_C64, FRIT_F32, FRIT_C64},  {FRIT_C64, FRIT_F64, FRIT_C128}, {FRIT_C64, FRIT_I64, FRIT_C128},
      {FRIT_C64, FRIT_I16, FRIT_C64},  {FRIT_C64, FRIT_I32, FRIT_C128}, {FRIT_C64, FRIT_BOOL, FRIT_C64},
      {FRIT_C64, FRIT_C128, FRIT_C128}, {FRIT_F16, FRIT_C64, FRIT_C64}, {FRIT_U8, FRIT_C128, FRIT_C128},
  };
  for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) {
    CHECK_EQ_INT(frit_promote(p[i].a, p[i].b), p[i].want);
    CHECK_EQ_INT(frit_promote(p[i].b, p[i].a), p[i].want);
  }
}

static void test_values(int interpret) {
  frit_ctx *ctx = frit_ctx_new();
  frit_tensor *a = frit_input(ctx, "a", FRIT_C128, 2, D(M, K)), *b = frit_input(ctx, "b", FRIT_C64, 2, D(K, N));
  double complex A[M][K], B[K][N];
  for (int i = 0; i < M; i++)
    for (int k = 0; k < K; k++) A[i][k] = CMPLX(xa[2 * (i * K + k)], xa[2 * (i * K + k) + 1]);
  for (int k = 0; k < K; k++)
    for (int j = 0; j < N; j++) B[k][j] = CMPLX((float)xb[2 * (k * N + j)], (float)xb[2 * (k * N + j) + 1]);
  /* matmul: c64 @ c128 -> c128 */
  frit_tensor *mm = frit_matmul(ctx, a, b);
  CHECK(mm && frit_tensor_dtype(mm) == FRIT_C128);
  double out[2 * M * N * 4];
  if (mm && run(ctx, mm, interpret, out)) {
    int bad = 0;
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) {
        double wr = 0, wi = 0;
        for (int k = 0; k < K; k++) {
          double ar = creal(A[i][k]), ai = cimag(A[i][k]), br = creal(B[k][j]), bi = cimag(B[k][j]);
          wr += ar * br - ai * bi, wi += ar * bi + ai * br;
        }
        bad += !close_c(out[2 * (i * N + j)], out[2 * (i * N + j) + 1], wr, wi, 1e-6);
      }
    CHECK_EQ_INT(bad, 0);
  }
  /* a * 2 - conj(a) / (1 + |a|) with an i64 scalar: stays c128 */
  frit_tensor *two = frit_scalar_i(ctx, FRIT_I64, 2), *one = frit_scalar_f(ctx, FRIT_F64, 1.0);
  frit_tensor *e = frit_binary_t(ctx, FRIT_BF_SUB, frit_binary_t(ctx, FRIT_BF_MUL, a, two),
                                 frit_binary_t(ctx, FRIT_BF_TRUEDIV, frit_conj(ctx, a),
                                               frit_binary_t(ctx, FRIT_BF_ADD, one, frit_unary_t(ctx, FRIT_UF_ABS, a))));
  CHECK(e && frit_tensor_dtype(e) == FRIT_C128);
  if (e && run(ctx, e, interpret, out)) {
    int bad = 0;
    for (int i = 0; i < M * K; i++) {
      double ar = xa[2 * i], ai = xa[2 * i + 1], d = 1 + hypot(ar, ai);
      bad += !close_c(out[2 * i], out[2 * i + 1], 2 * ar - ar / d, 2 * ai + ai / d, 1e-13);
    }
    CHECK_EQ_INT(bad, 0);
  }
  /* parts: real, imag, angle (f64) and complex(imag, real) */
  frit_tensor *ang = frit_angle(ctx, a);
  CHECK(ang && frit_tensor_dtype(ang) == FRIT_F64);
  if (ang && run(ctx, ang, interpret, out)) {
    int bad = 0;
    for (int i = 0; i < M * K; i++) bad += fabs(out[i] - atan2(xa[2 * i + 1], xa[2 * i])) > 1e-15;
    CHECK_EQ_INT(bad, 0);
  }
  frit_tensor *sw = frit_complex_t(ctx, frit_imag(ctx, b), frit_real(ctx, b));
  CHECK(sw && frit_tensor_dtype(sw) == FRIT_C64);
  float o32[2 * K * N];
  if (sw && run(ctx, sw, interpret, o32)) {
    int bad = 0;
    for (int i = 0; i < K * N; i++) bad += o32[2 * i] != (float)xb[2 * i + 1] || o32[2 * i + 1] != (float)xb[2 * i];
    CHECK_EQ_INT(bad, 0);
  }
  /* sum over axis 0, prod of all, mean of all */
  frit_tensor *s0 = frit_reduce(ctx, FRIT_RF_SUM, b, (const int[]){0}, 1, 0, 0);
  CHECK(s0 && frit_tensor_dtype(s0) == FRIT_C64);
  if (s0 && run(ctx, s0, interpret, o32)) {
    int bad = 0;
    for (int j = 0; j < N; j++) {
      double wr = 0, wi = 0;
      for (int k = 0; k < K; k++) wr += creal(B[k][j]), wi += cimag(B[k][j]);
      bad += !close_c(o32[2 * j], o32[2 * j + 1], wr, wi, 1e-6);
    }
    CHECK_EQ_INT(bad, 0);
  }
  frit_tensor *pr = frit_reduce(ctx, FRIT_RF_PROD, a, NULL, FRIT_ALL_AXES, 0, 0);
  frit_tensor *mn = frit_reduce(ctx, FRIT_RF_MEAN, a, NULL, FRIT_ALL_AXES, 0, 0);
  CHECK(pr && mn && frit_tensor_dtype(mn) == FRIT_C128);
  double wpr = 1, wpi = 0, wmr = 0, wmi = 0;
  for (int i = 0; i < M * K; i++) {
    double t = wpr * xa[2 * i] - wpi * xa[2 * i + 1];
    wpi = wpr * xa[2 * i + 1] + wpi * xa[2 * i], wpr = t;
    wmr += xa[2 * i] / (M * K), wmi += xa[2 * i + 1] / (M * K);
  }
  if (pr && run(ctx, pr, interpret, out)) CHECK(close_c(out[0], out[1], wpr, wpi, 1e-12));
  if (mn && run(ctx, mn, interpret, out)) CHECK(close_c(out[0], out[1], wmr, wmi, 1e-12));
  /* where with a real branch, and a cast to f32 (the real part) */
  frit_tensor *w = frit_where(ctx, frit_binary_t(ctx, FRIT_BF_NE, b, frit_conj(ctx, b)), b, frit_scalar_f(ctx, FRIT_F32, -1));
  CHECK(w && frit_tensor_dtype(w) == FRIT_C64);
  if (w && run(ctx, w, interpret, o32)) {
    int bad = 0;
    for (int i = 0; i < K * N; i++) {
      bool real = (float)xb[2 * i + 1] == 0;
      bad += !close_c(o32[2 * i], o32[2 * i + 1], real ? -1 : (float)xb[2 * i], real ? 0 : (float)xb[2 * i + 1], 0);
    }
    CHECK_EQ_INT(bad, 0);
  }
  frit_tensor *c = frit_astype(ctx, frit_transpose(ctx, a), FRIT_F32);
  if (c && run(ctx, c, interpret, o32)) {
    int bad = 0;
    for (int i = 0; i < M; i++)
      for (int k = 0; k < K; k++) bad += o32[k * M + i] != (float)xa[2 * (i * K + k)];
    CHECK_EQ_INT(bad, 0);
  }
  /* errors name the op and the dtypes */
  CHECK_ERR(ctx, frit_binary_t(ctx, FRIT_BF_LT, a, a), "lt");
  CHECK_ERR(ctx, frit_binary_t(ctx, FRIT_BF_MAXIMUM, b, b), "c64");
  CHECK_ERR(ctx, frit_unary_t(ctx, FRIT_UF_FLOOR, a), "complex");
  CHECK_ERR(ctx, frit_reduce(ctx, FRIT_RF_MAX, a, NULL, FRIT_ALL_AXES, 0, 0), "complex");
  CHECK_ERR(ctx, frit_complex_t(ctx, a, a), "real");
  frit_ctx_free(ctx);
}

/* A matmul large enough for the panel packing and register tiling of src/tensor/linalg.c and
 * src/codegen/opt_tile.c (sizes not multiples of the panel), against a plain loop. */
static void test_big_matmul(void) {
  enum { BM = 132, BK = 80, BN = 224 }; /* packed: N a multiple of 32, M*N*K >= 2^21 */
  frit_ctx *ctx = frit_ctx_new();
  frit_tensor *a = frit_input(ctx, "x", FRIT_C64, 2, D(BM, BK)), *b = frit_input(ctx, "y", FRIT_C64, 2, D(BK, BN));
  frit_tensor *mm = frit_matmul(ctx, a, b);
  float *x = malloc(sizeof(float) * 2 * BM * BK), *y = malloc(sizeof(float) * 2 * BK * BN);
  float *o = malloc(sizeof(float) * 2 * BM * BN);
  for (int i = 0; i < 2 * BM * BK; i++) x[i] = (float)((i * 7) % 13 - 6) / 8;
  for (int i = 0; i < 2 * BK * BN; i++) y[i] = (float)((i * 5) % 11 - 5) / 4;
  frit_program *p = mm ? frit_compile(ctx, &mm, 1, NULL) : NULL;
  if (!p) fprintf(stderr, "big matmul: %s\n", frit_error(ctx));
  CHECK(p != NULL);
  if (p) {
    bool x_first = strcmp(frit_program_input_name(p, 0), "x") == 0;
    void *ins[2] = {x_first ? (void *)x : (void *)y, x_first ? (void *)y : (void *)x};
    CHECK_EQ_INT(frit_program_run(p, ins, (void *[]){o}, NULL, 0), FRIT_OK);
    int bad = 0;
    for (int i = 0; i < BM; i++)
      for (int j = 0; j < BN; j++) {
        double wr = 0, wi = 0;
        for (int k = 0; k < BK; k++) {
          double ar = x[2 * (i * BK + k)], ai = x[2 * (i * BK + k) + 1], br = y[2 * (k * BN + j)], bi = y[2 * (k * BN + j) + 1];
          wr += ar * br - ai * bi, wi += ar * bi + ai * br;
        }
        bad += !close_c(o[2 * (i * BN + j)], o[2 * (i * BN + j) + 1], wr, wi, 1e-5);
        if (bad > 3) break;
      }
    CHECK_EQ_INT(bad, 0);
  }
  free(x), free(y), free(o);
  frit_ctx_free(ctx);
}

int main(void) {
  for (int i = 0; i < 2 * M * K; i++) xa[i] = ((i * 7) % 11 - 5) / 4.0;
  for (int i = 0; i < 2 * K * N; i++) xb[i] = (i % 3 == 1 && i % 2) ? 0.0 : ((i * 5) % 13 - 6) / 3.0;
  test_promotion();
  test_values(0);
  test_values(1);
  test_big_matmul();
  CHECK_DONE();
}
