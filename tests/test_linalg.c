/* The C API of frit.linalg (frit_linalg_* and frit_diagonal), compiled and interpreted, on a
 * batch of 2 matrices, checked by identities computed here in C: A inv(A) = I, A x = b, det by
 * cofactors, L L^T = A, Q R = A with Q^T Q = I, A v = w v, U S Vh = A; and every error path. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "check.h"
#include "frit.h"

#define N 3
#define B 2

static frit_ctx *C;

static bool run(frit_tensor *const *outs, int nout, void *const *ins, void *const *res, int mode) {
  frit_compile_opts o;
  memset(&o, 0, sizeof o);
  o.interpret = mode == 1;
  o.threads = 2;
  frit_program *p = frit_compile(C, outs, nout, &o);
  if (!p) {
    fprintf(stderr, "compile failed: %s\n", frit_error(C));
    return false;
  }
  frit_status st = frit_program_run(p, ins, res, NULL, 0);
  if (st != FRIT_OK) fprintf(stderr, "run failed: %s\n", frit_error(C));
  frit_program_free(p);
  return st == FRIT_OK;
}

/* Two well-conditioned symmetric positive definite 3x3 matrices. */
static const double A0[B][N][N] = {{{4, 1, 0.5}, {1, 3, -0.2}, {0.5, -0.2, 2}},
                                   {{5, -1, 0.3}, {-1, 4, 1}, {0.3, 1, 3}}};

static double det3(const double m[N][N]) {
  return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
         m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}

static bool near(double a, double b) { return fabs(a - b) <= 1e-10 * (1 + fabs(b)); }

static void test_values(int mode) {
  C = frit_ctx_new();
  int64_t d[3] = {B, N, N}, db[3] = {B, N, 1};
  frit_tensor *a = frit_input(C, "a", FRIT_F64, 3, d), *b = frit_input(C, "b", FRIT_F64, 3, db);
  frit_tensor *sign = NULL, *logabs = NULL, *q = NULL, *r = NULL, *w = NULL, *v = NULL, *u = NULL, *s = NULL,
              *vh = NULL;
  CHECK_EQ_INT(frit_linalg_slogdet(C, a, &sign, &logabs), FRIT_OK);
  CHECK_EQ_INT(frit_linalg_qr(C, a, 0, &q, &r), FRIT_OK);
  CHECK_EQ_INT(frit_linalg_eigh(C, a, &w, &v), FRIT_OK);
  CHECK_EQ_INT(frit_linalg_svd(C, a, 1, &u, &s, &vh), FRIT_OK);
  frit_tensor *outs[] = {frit_linalg_inv(C, a), frit_linalg_solve(C, a, b), frit_linalg_det(C, a),
                         frit_linalg_cholesky(C, a, 0), sign, logabs, q, r, w, v, u, s, vh,
                         frit_diagonal(C, a, 1, 1, 2)};
  int nout = (int)(sizeof outs / sizeof *outs);
  for (int k = 0; k < nout; k++) CHECK(outs[k] != NULL);
  static double inv[B][N][N], x[B][N], det[B], L[B][N][N], sg[B], la[B], Q[B][N][N], R[B][N][N], W[B][N],
      V[B][N][N], U[B][N][N], S[B][N], VH[B][N][N], dg[B][N - 1];
  double bv[B][N] = {{1, 2, 3}, {-1, 0.5, 2}};
  void *res[] = {inv, x, det, L, sg, la, Q, R, W, V, U, S, VH, dg};
  CHECK(run(outs, nout, (void *[]){(void *)A0, bv}, res, mode));
  int bad = 0;
  for (int m = 0; m < B; m++) {
    const double(*A)[N] = A0[m];
    bad += !near(det[m], det3(A)) + !near(sg[m] * exp(la[m]), det3(A));
    for (int i = 0; i < N; i++) {
      double ax = 0;
      for (int k = 0; k < N; k++) ax += A[i][k] * x[m][k];
      bad += !near(ax, bv[m][i]);
      double av[N] = {0};
      for (int j = 0; j < N; j++) {
        double ai = 0, ll = 0, qr = 0, qq = 0, usv = 0, vv = 0;
        for (int k = 0; k < N; k++) {
          ai += A[i][k] * inv[m][k][j];
          ll += L[m][i][k] * L[m][j][k];
          qr += Q[m][i][k] * R[m][k][j];
          qq += Q[m][k][i] * Q[m][k][j];
          usv += U[m][i][k] * S[m][k] * VH[m][k][j];
          vv += V[m][k][i] * V[m][k][j];
          av[j] += A[i][k] * V[m][k][j];
        }
        double id = i == j;
        bad += !near(ai, id) + !near(ll, A[i][j]) + !near(qr, A[i][j]) + !near(qq, id) + !near(usv, A[i][j]) +
               !near(vv, id) + !near(av[j], W[m][j] * V[m][i][j]);
        if (j > i) bad += L[m][i][j] != 0;
        if (i > j) bad += R[m][i][j] != 0;
      }
      if (i + 1 < N) bad += dg[m][i] != A[i][i + 1] || !(W[m][i] <= W[m][i + 1]) || !(S[m][i] >= S[m][i + 1]);
    }
  }
  CHECK_EQ_INT(bad, 0);
  frit_ctx_free(C);
}

/* A singular matrix: det 0, slogdet (0, -inf), solve and inv NaN; not positive definite: NaN. */
static void test_singular(void) {
  C = frit_ctx_new();
  int64_t d[2] = {2, 2};
  frit_tensor *a = frit_input(C, "a", FRIT_F64, 2, d), *sign = NULL, *logabs = NULL;
  CHECK_EQ_INT(frit_linalg_slogdet(C, a, &sign, &logabs), FRIT_OK);
  frit_tensor *outs[] = {frit_linalg_det(C, a), sign, logabs, frit_linalg_inv(C, a), frit_linalg_cholesky(C, a, 1)};
  double m[2][2] = {{1, 2}, {2, 4}}, det = -1, sg = -1, la = 0, inv[4], ch[4];
  CHECK(run(outs, 5, (void *[]){m}, (void *[]){&det, &sg, &la, inv, ch}, 0));
  CHECK(det == 0 && sg == 0 && isinf(la) && la < 0);
  for (int i = 0; i < 4; i++) CHECK(isnan(inv[i]) && isnan(ch[i]));
  frit_ctx_free(C);
}

static bool has(const char *s) {
  bool ok = strstr(frit_error(C), s) != NULL;
  if (!ok) fprintf(stderr, "  message \"%s\" lacks \"%s\"\n", frit_error(C), s);
  frit_clear_error(C);
  return ok;
}

static void test_errors(void) {
  C = frit_ctx_new();
  int64_t d23[2] = {2, 3}, d3[1] = {3}, d22[2] = {2, 2}, d42[2] = {4, 2};
  frit_tensor *rect = frit_input(C, "r", FRIT_F32, 2, d23), *vec = frit_input(C, "v", FRIT_F32, 1, d3);
  frit_tensor *half = frit_input(C, "h", FRIT_F16, 2, d22), *sq = frit_input(C, "s", FRIT_F32, 2, d22);
  frit_tensor *t1 = NULL, *t2 = NULL, *t3 = NULL;
  CHECK(frit_linalg_inv(C, rect) == NULL && has("linalg.inv"));
  CHECK(frit_linalg_det(C, rect) == NULL && has("square"));
  CHECK(frit_linalg_cholesky(C, vec, 0) == NULL && has("two-dimensional"));
  CHECK(frit_linalg_inv(C, half) == NULL && has("float16"));
  CHECK(frit_linalg_solve(C, sq, frit_input(C, "b", FRIT_F32, 2, d42)) == NULL && has("linalg.solve"));
  CHECK(frit_linalg_qr(C, sq, 7, &t1, &t2) != FRIT_OK && has("mode"));
  CHECK(frit_linalg_qr(C, sq, 0, NULL, &t2) != FRIT_OK && has("NULL"));
  CHECK(frit_linalg_eigh(C, rect, &t1, &t2) != FRIT_OK && has("square"));
  CHECK(frit_linalg_svd(C, vec, 0, &t1, &t2, &t3) != FRIT_OK && has("linalg.svd"));
  CHECK(frit_linalg_svd(C, sq, 0, &t1, &t2, NULL) != FRIT_OK && has("u and vh"));
  CHECK(frit_linalg_slogdet(C, rect, &t1, &t2) != FRIT_OK && has("square"));
  CHECK(frit_diagonal(C, vec, 0, 0, 1) == NULL && has("diagonal"));
  CHECK(frit_diagonal(C, sq, 0, 1, 1) == NULL && has("axis1 and axis2"));
  CHECK(frit_diagonal(C, sq, 0, 0, 2) == NULL && has("diagonal"));
  CHECK(frit_linalg_inv(C, NULL) == NULL);
  frit_clear_error(C);
  frit_ctx_free(C);
}

int main(void) {
  test_values(0);
  test_values(1);
  test_singular();
  test_errors();
  CHECK_DONE();
}
