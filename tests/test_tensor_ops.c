/* Tests of the composite tensor ops (reductions, matmul/dot, conv2d, pooling, softmax, take,
 * one_hot): shapes, dtypes and errors by numpy's rules, and values against plain C loops. */
#include "frit.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "tensor_values.h"

/* ---------- shape, dtype and error checks ---------- */

static char shp_buf[256];
/* Shape as "(2,3)" in this file's own notation; "NULL" for a failed build. */
static const char *shp(frit_tensor *t) {
  if (!t) return "NULL";
  int n = 0;
  n += snprintf(shp_buf + n, sizeof shp_buf - (size_t)n, "(");
  for (int i = 0; i < frit_tensor_ndim(t); i++)
    n += snprintf(shp_buf + n, sizeof shp_buf - (size_t)n, "%s%lld", i ? "," : "", (long long)frit_tensor_dim_static(t, i));
  snprintf(shp_buf + n, sizeof shp_buf - (size_t)n, ")");
  return shp_buf;
}

#define CHECK_SHAPE(t, s) CHECK_EQ_STR(shp(t), s)
#define CHECK_DT(t, dt) CHECK((t) && frit_tensor_dtype(t) == (dt))
/* The build fails with FRIT_ERR_INVALID and a message containing each of the given strings. */
#define CHECK_ERR(ctx, expr, ...)                                                                  \
  do {                                                                                             \
    frit_tensor *r_ = (expr);                                                                      \
    const char *subs_[] = {__VA_ARGS__};                                                           \
    bool ok_ = r_ == NULL && frit_last_status(ctx) == FRIT_ERR_INVALID;                            \
    for (size_t s_ = 0; ok_ && s_ < sizeof subs_ / sizeof subs_[0]; s_++) ok_ = strstr(frit_error(ctx), subs_[s_]) != NULL; \
    if (!ok_) fprintf(stderr, "error check: got \"%s\"\n", frit_error(ctx));                      \
    CHECK(ok_);                                                                                    \
    frit_clear_error(ctx);                                                                         \
  } while (0)

#define D(...) ((const int64_t[]){__VA_ARGS__})
#define AX(...) ((const int[]){__VA_ARGS__})

static void test_reduce_shapes(void) {
  frit_ctx *ctx = frit_ctx_new();
  frit_tensor *x = frit_input(ctx, "x", FRIT_F32, 3, D(2, 3, 4));
  CHECK_SHAPE(frit_reduce(ctx, FRIT_RF_SUM, x, AX(0, -1), 2, 0, 0), "(3)");
  CHECK_SHAPE(frit_reduce(ctx, FRIT_RF_SUM, x, AX(0, -1), 2, 1, 0), "(1,3,1)");
  CHECK_SHAPE(frit_reduce(ctx, FRIT_RF_MEAN, x, NULL, FRIT_ALL_AXES, 0, 0), "()");
  CHECK_SHAPE(frit_reduce(ctx, FRIT_RF_MEAN, x, NULL, FRIT_ALL_AXES, 1, 0), "(1,1,1)");
  CHECK_SHAPE(frit_reduce(ctx, FRIT_RF_MAX, x, NULL, 0, 0, 0), "(2,3,4)"); /* axis=() */
  CHECK_SHAPE(frit_reduce(ctx, FRIT_RF_ARGMAX, x, AX(1), 1, 0, 0), "(2,4)");
  CHECK_SHAPE(frit_reduce(ctx, FRIT_RF_ARGMIN, x, AX(-1), 1, 1, 0), "(2,3,1)");
  CHECK_SHAPE(frit_reduce(ctx, FRIT_RF_ARGMAX, x, NULL, FRIT_ALL_AXES, 0, 0), "()");
  CHECK_SHAPE(frit_reduce(ctx, FRIT_RF_ARGMAX, x, NULL, FRIT_ALL_AXES, 1, 0), "(1,1,1)");
  CHECK_SHAPE(frit_reduce(ctx, FRIT_RF_VAR, x, AX(2), 1, 0, 1), "(2,3)");
  CHECK_SHAPE(frit_reduce(ctx, FRIT_RF_LOGSUMEXP, x, AX(1, 2), 2, 0, 0), "(2)");
  CHECK_SHAPE(frit_cumsum(ctx, x, 1), "(2,3,4)");
  CHECK_SHAPE(frit_cumsum(ctx, x, FRIT_NO_AXIS), "(24)");
  /* dtypes, numpy's rules */
  frit_dtype in_dt[] = {FRIT_BOOL, FRIT_I8, FRIT_I32, FRIT_I64, FRIT_U8, FRIT_U32, FRIT_U64, FRIT_F16, FRIT_F32, FRIT_F64};
  frit_dtype sum_dt[] = {FRIT_I64, FRIT_I64, FRIT_I64, FRIT_I64, FRIT_U64, FRIT_U64, FRIT_U64, FRIT_F16, FRIT_F32, FRIT_F64};
  frit_dtype mean_dt[] = {FRIT_F64, FRIT_F64, FRIT_F64, FRIT_F64, FRIT_F64, FRIT_F64, FRIT_F64, FRIT_F16, FRIT_F32, FRIT_F64};
  for (size_t i = 0; i < sizeof in_dt / sizeof in_dt[0]; i++) {
    char name[16];
    snprintf(name, sizeof name, "d%zu", i);
    frit_tensor *t = frit_input(ctx, name, in_dt[i], 2, D(2, 3));
    CHECK_DT(frit_reduce(ctx, FRIT_RF_SUM, t, AX(0), 1, 0, 0), sum_dt[i]);
    CHECK_DT(frit_reduce(ctx, FRIT_RF_PROD, t, AX(0), 1, 0, 0), sum_dt[i]);
    CHECK_DT(frit_cumsum(ctx, t, 0), sum_dt[i]);
    CHECK_DT(frit_reduce(ctx, FRIT_RF_MAX, t, AX(0), 1, 0, 0), in_dt[i]);
    CHECK_DT(frit_reduce(ctx, FRIT_RF_MIN, t, AX(1), 1, 0, 0), in_dt[i]);
    CHECK_DT(frit_reduce(ctx, FRIT_RF_MEAN, t, AX(0), 1, 0, 0), mean_dt[i]);
    CHECK_DT(frit_reduce(ctx, FRIT_RF_VAR, t, AX(0), 1, 0, 0), mean_dt[i]);
    CHECK_DT(frit_reduce(ctx, FRIT_RF_STD, t, AX(0), 1, 0, 0), mean_dt[i]);
    CHECK_DT(frit_reduce(ctx, FRIT_RF_LOGSUMEXP, t, AX(0), 1, 0, 0), mean_dt[i]);
    CHECK_DT(frit_reduce(ctx, FRIT_RF_ARGMAX, t, AX(0), 1, 0, 0), FRIT_I64);
    CHECK_DT(frit_reduce(ctx, FRIT_RF_ANY, t, AX(0), 1, 0, 0), FRIT_BOOL);
    CHECK_DT(frit_reduce(ctx, FRIT_RF_ALL, t, NULL, FRIT_ALL_AXES, 0, 0), FRIT_BOOL);
    CHECK_DT(frit_softmax(ctx, t, 1), mean_dt[i]);
  }
  /* empty reductions: sum/prod have identities, max/argmax have none (numpy raises) */
  frit_tensor *z = frit_input(ctx, "z", FRIT_F32, 2, D(0, 3));
  CHECK_SHAPE(frit_reduce(ctx, FRIT_RF_SUM, z, AX(0), 1, 0, 0), "(3)");
  CHECK_SHAPE(frit_reduce(ctx, FRIT_RF_MAX, z, AX(1), 1, 0, 0), "(0)");
  CHECK_ERR(ctx, frit_reduce(ctx, FRIT_RF_MAX, z, AX(0), 1, 0, 0), "op max", "(0, 3)", "no identity");
  CHECK_ERR(ctx, frit_reduce(ctx, FRIT_RF_MIN, z, NULL, FRIT_ALL_AXES, 0, 0), "op min", "no identity");
  CHECK_ERR(ctx, frit_reduce(ctx, FRIT_RF_ARGMAX, z, AX(0), 1, 0, 0), "op argmax", "empty");
  CHECK_ERR(ctx, frit_reduce(ctx, FRIT_RF_ARGMIN, z, NULL, FRIT_ALL_AXES, 0, 0), "op argmin", "empty");
  /* bad axes */
  CHECK_ERR(ctx, frit_reduce(ctx, FRIT_RF_SUM, x, AX(3), 1, 0, 0), "op sum", "3");
  CHECK_ERR(ctx, frit_reduce(ctx, FRIT_RF_SUM, x, AX(-4), 1, 0, 0), "op sum");
  CHECK_ERR(ctx, frit_reduce(ctx, FRIT_RF_SUM, x, AX(1, -2), 2, 0, 0), "op sum");
  CHECK_ERR(ctx, frit_reduce(ctx, FRIT_RF_ARGMAX, x, AX(0, 1), 2, 0, 0), "op argmax", "one axis");
  CHECK_ERR(ctx, frit_cumsum(ctx, x, 3), "op cumsum");
  CHECK_ERR(ctx, frit_reduce(ctx, FRIT_RF_SUM, x, NULL, 2, 0, 0), "op sum", "NULL");
  CHECK_ERR(ctx, frit_reduce(ctx, (frit_rfunc)99, x, NULL, FRIT_ALL_AXES, 0, 0), "unknown");
  /* NULL propagates and keeps the earlier error */
  CHECK_ERR(ctx, frit_reduce(ctx, FRIT_RF_SUM, frit_reduce(ctx, FRIT_RF_SUM, x, AX(7), 1, 0, 0), NULL, FRIT_ALL_AXES, 0, 0),
            "op sum");
  frit_ctx_free(ctx);
}

static void test_linalg_shapes(void) {
  frit_ctx *ctx = frit_ctx_new();
  frit_tensor *a23 = frit_input(ctx, "a23", FRIT_F32, 2, D(2, 3));
  frit_tensor *b45 = frit_input(ctx, "b45", FRIT_F32, 2, D(4, 5));
  frit_tensor *b34 = frit_input(ctx, "b34", FRIT_I32, 2, D(3, 4));
  frit_tensor *v3 = frit_input(ctx, "v3", FRIT_F64, 1, D(3));
  frit_tensor *s = frit_input(ctx, "s", FRIT_F32, 0, NULL);
  frit_tensor *a234 = frit_input(ctx, "a234", FRIT_F32, 3, D(2, 3, 4));
  frit_tensor *v4 = frit_input(ctx, "v4", FRIT_F32, 1, D(4));
  frit_tensor *b5123 = frit_input(ctx, "b5123", FRIT_F32, 4, D(5, 1, 2, 3));
  frit_tensor *b436 = frit_input(ctx, "b436", FRIT_F32, 3, D(4, 3, 6));
  frit_tensor *b546 = frit_input(ctx, "b546", FRIT_F32, 3, D(5, 4, 6));
  frit_tensor *h = frit_input(ctx, "h", FRIT_F16, 2, D(3, 4));
  frit_tensor *bb = frit_input(ctx, "bb", FRIT_BOOL, 2, D(3, 3));
  CHECK_SHAPE(frit_matmul(ctx, a23, b34), "(2,4)");
  CHECK_DT(frit_matmul(ctx, a23, b34), FRIT_F64); /* f32 x i32 -> f64, numpy */
  CHECK_SHAPE(frit_matmul(ctx, v3, v3), "()");
  CHECK_SHAPE(frit_matmul(ctx, v3, b34), "(4)");
  CHECK_SHAPE(frit_matmul(ctx, a234, v4), "(2,3)");
  CHECK_SHAPE(frit_matmul(ctx, b5123, b436), "(5,4,2,6)");
  CHECK_DT(frit_matmul(ctx, a23, h), FRIT_F32);
  CHECK_DT(frit_matmul(ctx, h, frit_transpose(ctx, h)), FRIT_F16);
  CHECK_DT(frit_matmul(ctx, bb, bb), FRIT_BOOL);
  CHECK_ERR(ctx, frit_matmul(ctx, a23, b45), "op matmul", "(2, 3)", "(4, 5)", "inner dims 3 and 4 differ");
  CHECK_ERR(ctx, frit_matmul(ctx, s, a23), "op matmul", "dimensions");
  CHECK_ERR(ctx, frit_matmul(ctx, a234, b546), "op matmul");
  frit_tensor *b2x = frit_input(ctx, "b2x", FRIT_F32, 3, D(3, 4, 2));
  CHECK_ERR(ctx, frit_matmul(ctx, a234, b2x), "op matmul", "broadcast"); /* batch 2 vs 3 */
  CHECK_SHAPE(frit_dot(ctx, a234, b546), "(2,3,5,6)");
  CHECK_SHAPE(frit_dot(ctx, v4, b546), "(5,6)");
  CHECK_SHAPE(frit_dot(ctx, v3, v3), "()");
  CHECK_SHAPE(frit_dot(ctx, s, a234), "(2,3,4)");
  CHECK_SHAPE(frit_dot(ctx, a234, v4), "(2,3)");
  CHECK_SHAPE(frit_dot(ctx, a23, b34), "(2,4)");
  CHECK_ERR(ctx, frit_dot(ctx, a23, b45), "op dot", "not aligned");
  CHECK_ERR(ctx, frit_matmul(ctx, NULL, a23), "op");
  frit_ctx_free(ctx);
}

static void test_nn_shapes(void) {
  frit_ctx *ctx = frit_ctx_new();
  frit_tensor *x = frit_input(ctx, "x", FRIT_F32, 4, D(1, 4, 8, 8));
  frit_tensor *w = frit_input(ctx, "w", FRIT_F32, 4, D(6, 2, 3, 3));
  frit_tensor *b = frit_input(ctx, "b", FRIT_F32, 1, D(6));
  CHECK_SHAPE(frit_conv2d(ctx, x, w, b, D(2, 2), D(1, 1), D(1, 1), 2), "(1,6,4,4)");
  CHECK_SHAPE(frit_conv2d(ctx, x, w, NULL, D(1, 1), D(0, 0), D(2, 2), 2), "(1,6,4,4)");
  CHECK_ERR(ctx, frit_conv2d(ctx, x, w, b, D(1, 1), D(0, 0), D(1, 1), 1), "op conv2d", "groups");
  CHECK_ERR(ctx, frit_conv2d(ctx, x, w, b, D(1, 1), D(0, 0), D(5, 5), 2), "op conv2d", "larger");
  CHECK_ERR(ctx, frit_conv2d(ctx, x, w, b, D(0, 1), D(0, 0), D(1, 1), 2), "op conv2d", "stride");
  CHECK_ERR(ctx, frit_conv2d(ctx, x, w, x, D(1, 1), D(0, 0), D(1, 1), 2), "op conv2d", "bias");
  frit_tensor *p = frit_input(ctx, "p", FRIT_F32, 4, D(2, 3, 7, 7));
  CHECK_SHAPE(frit_max_pool2d(ctx, p, D(3, 3), D(2, 2), D(1, 1)), "(2,3,4,4)");
  CHECK_SHAPE(frit_avg_pool2d(ctx, p, D(2, 2), D(2, 2), D(0, 0)), "(2,3,3,3)");
  CHECK_SHAPE(frit_max_pool2d(ctx, p, D(2, 3), NULL, NULL), "(2,3,3,2)");
  CHECK_ERR(ctx, frit_max_pool2d(ctx, p, D(9, 3), NULL, NULL), "op max_pool2d", "larger");
  frit_tensor *pi = frit_input(ctx, "pi", FRIT_I32, 2, D(4, 4));
  CHECK_DT(frit_max_pool2d(ctx, pi, D(2, 2), NULL, D(1, 1)), FRIT_I32);
  CHECK_DT(frit_avg_pool2d(ctx, pi, D(2, 2), NULL, NULL), FRIT_F64);
  CHECK_SHAPE(frit_softmax(ctx, p, -1), "(2,3,7,7)");
  CHECK_SHAPE(frit_log_softmax(ctx, p, FRIT_NO_AXIS), "(2,3,7,7)");
  CHECK_ERR(ctx, frit_softmax(ctx, p, 4), "op softmax");
  /* take */
  frit_tensor *t = frit_input(ctx, "t", FRIT_F32, 3, D(3, 4, 5));
  frit_tensor *idx = frit_input(ctx, "idx", FRIT_I32, 2, D(2, 6));
  frit_tensor *i0 = frit_input(ctx, "i0", FRIT_I64, 0, NULL);
  frit_tensor *fi = frit_input(ctx, "fi", FRIT_F32, 1, D(2));
  CHECK_SHAPE(frit_take(ctx, t, idx, 1), "(3,2,6,5)");
  CHECK_SHAPE(frit_take(ctx, t, idx, -1), "(3,4,2,6)");
  CHECK_SHAPE(frit_take(ctx, t, idx, FRIT_NO_AXIS), "(2,6)");
  CHECK_SHAPE(frit_take(ctx, t, i0, 0), "(4,5)");
  CHECK_DT(frit_take(ctx, t, idx, 0), FRIT_F32);
  CHECK_ERR(ctx, frit_take(ctx, t, fi, 0), "op take", "integer");
  CHECK_ERR(ctx, frit_take(ctx, t, idx, 3), "op take");
  frit_tensor *e = frit_input(ctx, "e", FRIT_F32, 2, D(0, 3));
  CHECK_ERR(ctx, frit_take(ctx, e, idx, 0), "op take", "empty");
  frit_tensor *ia = frit_input(ctx, "ia", FRIT_I64, 3, D(3, 2, 1));
  CHECK_SHAPE(frit_take_along_axis(ctx, t, ia, 1), "(3,2,5)");
  CHECK_ERR(ctx, frit_take_along_axis(ctx, t, idx, 1), "op take_along_axis", "dims");
  frit_tensor *ib = frit_input(ctx, "ib", FRIT_I64, 3, D(2, 2, 5));
  CHECK_ERR(ctx, frit_take_along_axis(ctx, t, ib, 1), "op take_along_axis", "broadcast");
  CHECK_SHAPE(frit_one_hot(ctx, idx, 5, FRIT_F32), "(2,6,5)");
  CHECK_DT(frit_one_hot(ctx, idx, 5, FRIT_U8), FRIT_U8);
  CHECK_ERR(ctx, frit_one_hot(ctx, fi, 5, FRIT_F32), "op one_hot");
  CHECK_ERR(ctx, frit_one_hot(ctx, idx, -1, FRIT_F32), "op one_hot");
  frit_ctx_free(ctx);
}

/* ---------- values against C loops ---------- */

static const double *IN(int k) { return ins[k].d; }

static void test_matmul_values(void) {
  frit_ctx *ctx = frit_ctx_new();
  reset_inputs();
  /* (2,1,3,4) @ (3,4,5) -> (2,3,3,5) with batch broadcasting */
  frit_tensor *a = input(ctx, "a", FRIT_F32, 4, D(2, 1, 3, 4), NULL);
  frit_tensor *b = input(ctx, "b", FRIT_F32, 3, D(3, 4, 5), NULL);
  double want[2 * 3 * 3 * 5];
  for (int p = 0; p < 2; p++)
    for (int q = 0; q < 3; q++)
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 5; j++) {
          double s = 0;
          for (int k = 0; k < 4; k++) s += IN(0)[(p * 3 + i) * 4 + k] * IN(1)[(q * 4 + k) * 5 + j];
          want[((p * 3 + q) * 3 + i) * 5 + j] = s;
        }
  check_values(ctx, "matmul batch", frit_matmul(ctx, a, b), want, 90, 1e-5);
  /* 1-D @ 2-D and 2-D @ 1-D */
  frit_tensor *v = input(ctx, "v", FRIT_F32, 1, D(4), NULL);
  double w1[5];
  for (int j = 0; j < 5; j++) {
    w1[j] = 0;
    for (int k = 0; k < 4; k++) w1[j] += IN(2)[k] * IN(1)[k * 5 + j];
  }
  check_values(ctx, "vec @ mat", frit_matmul(ctx, v, frit_take(ctx, b, frit_scalar_i(ctx, FRIT_I64, 0), 0)), w1, 5, 1e-5);
  double w2[2 * 3];
  for (int p = 0; p < 2; p++)
    for (int i = 0; i < 3; i++) {
      w2[p * 3 + i] = 0;
      for (int k = 0; k < 4; k++) w2[p * 3 + i] += IN(0)[(p * 3 + i) * 4 + k] * IN(2)[k];
    }
  check_values(ctx, "batch mat @ vec", frit_matmul(ctx, a, v), w2, 6, 1e-5);
  /* int matmul stays in its dtype */
  frit_tensor *ai = input(ctx, "ai", FRIT_I64, 2, D(3, 4), NULL);
  frit_tensor *bi = input(ctx, "bi", FRIT_I64, 2, D(4, 2), NULL);
  double wi[6];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 2; j++) {
      wi[i * 2 + j] = 0;
      for (int k = 0; k < 4; k++) wi[i * 2 + j] += IN(3)[i * 4 + k] * IN(4)[k * 2 + j];
    }
  check_values(ctx, "int matmul", frit_matmul(ctx, ai, bi), wi, 6, 0);
  /* dot of N-D and M-D: (2,3,4) . (5,4,2) -> (2,3,5,2) */
  frit_tensor *d1 = input(ctx, "d1", FRIT_F64, 3, D(2, 3, 4), NULL);
  frit_tensor *d2 = input(ctx, "d2", FRIT_F64, 3, D(5, 4, 2), NULL);
  double wd[2 * 3 * 5 * 2];
  for (int i = 0; i < 6; i++)
    for (int q = 0; q < 5; q++)
      for (int n = 0; n < 2; n++) {
        double s = 0;
        for (int k = 0; k < 4; k++) s += IN(5)[i * 4 + k] * IN(6)[(q * 4 + k) * 2 + n];
        wd[(i * 5 + q) * 2 + n] = s;
      }
  check_values(ctx, "dot N-D M-D", frit_dot(ctx, d1, d2), wd, 60, 1e-12);
  reset_inputs();
  frit_ctx_free(ctx);
}

static void test_conv_values(void) {
  struct {
    int64_t n, c, h, w, o, kh, kw, g, sh, sw, ph, pw, dh, dw;
    bool bias;
  } cases[] = {
      {1, 1, 5, 5, 1, 3, 3, 1, 1, 1, 0, 0, 1, 1, false},
      {2, 4, 7, 6, 6, 3, 2, 2, 2, 1, 1, 2, 2, 1, true}, /* groups, stride, padding, dilation */
      {1, 3, 6, 6, 3, 2, 2, 3, 2, 2, 0, 0, 1, 1, true}, /* depthwise, stride == kernel */
      {1, 2, 5, 4, 2, 1, 1, 1, 3, 2, 1, 0, 1, 1, false},
  };
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
    frit_ctx *ctx = frit_ctx_new();
    reset_inputs();
    __typeof__(cases[0]) c = cases[ci];
    int64_t cg = c.c / c.g, og = c.o / c.g;
    frit_tensor *x = input(ctx, "x", FRIT_F32, 4, D(c.n, c.c, c.h, c.w), NULL);
    frit_tensor *w = input(ctx, "w", FRIT_F32, 4, D(c.o, cg, c.kh, c.kw), NULL);
    frit_tensor *b = c.bias ? input(ctx, "b", FRIT_F32, 1, D(c.o), NULL) : NULL;
    int64_t oh = (c.h + 2 * c.ph - c.dh * (c.kh - 1) - 1) / c.sh + 1;
    int64_t ow = (c.w + 2 * c.pw - c.dw * (c.kw - 1) - 1) / c.sw + 1;
    int64_t n = c.n * c.o * oh * ow;
    double *want = calloc((size_t)n, sizeof(double));
    for (int64_t in = 0; in < c.n; in++)
      for (int64_t o = 0; o < c.o; o++)
        for (int64_t y = 0; y < oh; y++)
          for (int64_t xx = 0; xx < ow; xx++) {
            double s = c.bias ? IN(2)[o] : 0;
            int64_t grp = o / og;
            for (int64_t k = 0; k < cg; k++)
              for (int64_t i = 0; i < c.kh; i++)
                for (int64_t j = 0; j < c.kw; j++) {
                  int64_t yy = y * c.sh + i * c.dh - c.ph, xw = xx * c.sw + j * c.dw - c.pw;
                  if (yy < 0 || yy >= c.h || xw < 0 || xw >= c.w) continue;
                  s += IN(0)[((in * c.c + grp * cg + k) * c.h + yy) * c.w + xw] * IN(1)[((o * cg + k) * c.kh + i) * c.kw + j];
                }
            want[((in * c.o + o) * oh + y) * ow + xx] = s;
          }
    char what[32];
    snprintf(what, sizeof what, "conv2d case %zu", ci);
    check_values(ctx, what, frit_conv2d(ctx, x, w, b, D(c.sh, c.sw), D(c.ph, c.pw), D(c.dh, c.dw), c.g), want, n, 1e-5);
    free(want);
    reset_inputs();
    frit_ctx_free(ctx);
  }
}

static void test_pool_values(void) {
  struct {
    int64_t h, w, kh, kw, sh, sw, ph, pw;
  } cases[] = {{7, 7, 3, 3, 2, 2, 1, 1}, {6, 5, 2, 2, 2, 2, 0, 0}, {5, 6, 3, 2, 1, 2, 1, 0}, {4, 4, 2, 2, 3, 3, 1, 1}};
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
    frit_ctx *ctx = frit_ctx_new();
    reset_inputs();
    __typeof__(cases[0]) c = cases[ci];
    frit_tensor *x = input(ctx, "x", FRIT_F32, 3, D(2, c.h, c.w), NULL);
    int64_t oh = (c.h + 2 * c.ph - c.kh) / c.sh + 1, ow = (c.w + 2 * c.pw - c.kw) / c.sw + 1, n = 2 * oh * ow;
    double *wmax = calloc((size_t)n, sizeof(double)), *wavg = calloc((size_t)n, sizeof(double));
    for (int64_t p = 0; p < 2; p++)
      for (int64_t y = 0; y < oh; y++)
        for (int64_t xx = 0; xx < ow; xx++) {
          double m = -INFINITY, s = 0;
          int cnt = 0;
          for (int64_t i = 0; i < c.kh; i++)
            for (int64_t j = 0; j < c.kw; j++) {
              int64_t yy = y * c.sh + i - c.ph, xw = xx * c.sw + j - c.pw;
              if (yy < 0 || yy >= c.h || xw < 0 || xw >= c.w) continue;
              double v = IN(0)[(p * c.h + yy) * c.w + xw];
              m = v > m ? v : m, s += v, cnt++;
            }
          wmax[(p * oh + y) * ow + xx] = m;
          wavg[(p * oh + y) * ow + xx] = s / cnt;
        }
    char what[32];
    snprintf(what, sizeof what, "max_pool2d case %zu", ci);
    check_values(ctx, what, frit_max_pool2d(ctx, x, D(c.kh, c.kw), D(c.sh, c.sw), D(c.ph, c.pw)), wmax, n, 0);
    snprintf(what, sizeof what, "avg_pool2d case %zu", ci);
    check_values(ctx, what, frit_avg_pool2d(ctx, x, D(c.kh, c.kw), D(c.sh, c.sw), D(c.ph, c.pw)), wavg, n, 1e-6);
    free(wmax), free(wavg);
    reset_inputs();
    frit_ctx_free(ctx);
  }
}

static void test_reduce_values(void) {
  frit_ctx *ctx = frit_ctx_new();
  reset_inputs();
  /* argmax/argmin ties (first wins) and NaN (the first NaN wins) */
  const double av[] = {1, 3, 3, 2, 5, 5, 5, 0, NAN, 2, NAN, 9, -1, -1, 4, -1};
  frit_tensor *a = input(ctx, "a", FRIT_F32, 2, D(4, 4), av);
  const double amax1[] = {1, 0, 0, 2}, amin1[] = {0, 3, 0, 0}, amax0[] = {2, 1, 2, 2}, amin0[] = {2, 3, 2, 3};
  check_values(ctx, "argmax rows", frit_reduce(ctx, FRIT_RF_ARGMAX, a, AX(1), 1, 0, 0), amax1, 4, 0);
  check_values(ctx, "argmin rows", frit_reduce(ctx, FRIT_RF_ARGMIN, a, AX(-1), 1, 0, 0), amin1, 4, 0);
  check_values(ctx, "argmax cols", frit_reduce(ctx, FRIT_RF_ARGMAX, a, AX(0), 1, 0, 0), amax0, 4, 0);
  check_values(ctx, "argmin cols", frit_reduce(ctx, FRIT_RF_ARGMIN, a, AX(0), 1, 0, 0), amin0, 4, 0);
  const double aflat[] = {8};
  check_values(ctx, "argmax flat", frit_reduce(ctx, FRIT_RF_ARGMAX, a, NULL, FRIT_ALL_AXES, 0, 0), aflat, 1, 0);
  const double mx[] = {3, 5, NAN, 4};
  check_values(ctx, "max rows (NaN propagates)", frit_reduce(ctx, FRIT_RF_MAX, a, AX(1), 1, 0, 0), mx, 4, 0);
  /* integer argmax with ties */
  const double iv[] = {4, 7, 7, 1, 7, 0};
  frit_tensor *ia = input(ctx, "ia", FRIT_I32, 2, D(2, 3), iv);
  const double iam[] = {1, 1}, iam0[] = {0, 0, 0};
  check_values(ctx, "int argmax", frit_reduce(ctx, FRIT_RF_ARGMAX, ia, AX(1), 1, 0, 0), iam, 2, 0);
  check_values(ctx, "int argmax keepdims", frit_reduce(ctx, FRIT_RF_ARGMAX, ia, AX(0), 1, 1, 0), iam0, 3, 0);
  /* var/std/mean with ddof, over several axes */
  frit_tensor *x = input(ctx, "x", FRIT_F64, 3, D(3, 4, 5), NULL);
  const double *xv = IN(2);
  double mean[4], var1[4], std0[4];
  for (int j = 0; j < 4; j++) {
    double s = 0, ss = 0;
    for (int i = 0; i < 3; i++)
      for (int k = 0; k < 5; k++) s += xv[(i * 4 + j) * 5 + k];
    mean[j] = s / 15;
    for (int i = 0; i < 3; i++)
      for (int k = 0; k < 5; k++) ss += (xv[(i * 4 + j) * 5 + k] - mean[j]) * (xv[(i * 4 + j) * 5 + k] - mean[j]);
    var1[j] = ss / 14, std0[j] = sqrt(ss / 15);
  }
  check_values(ctx, "mean", frit_reduce(ctx, FRIT_RF_MEAN, x, AX(0, 2), 2, 0, 0), mean, 4, 1e-12);
  check_values(ctx, "var ddof=1", frit_reduce(ctx, FRIT_RF_VAR, x, AX(0, 2), 2, 0, 1), var1, 4, 1e-12);
  check_values(ctx, "std ddof=0", frit_reduce(ctx, FRIT_RF_STD, x, AX(2, 0), 2, 1, 0), std0, 4, 1e-12);
  frit_tensor *one = input(ctx, "one", FRIT_F64, 1, D(1), (const double[]){2.5});
  const double vnan[] = {NAN};
  check_values(ctx, "var ddof=n", frit_reduce(ctx, FRIT_RF_VAR, one, AX(0), 1, 0, 1), vnan, 1, 0); /* 0/0 */
  /* sum/prod of ints widen; any/all */
  double sumi[2] = {18, 8}, prodi[2] = {196, 0}, anyv[2] = {1, 1}, allv[2] = {1, 0};
  check_values(ctx, "int sum", frit_reduce(ctx, FRIT_RF_SUM, ia, AX(1), 1, 0, 0), sumi, 2, 0);
  check_values(ctx, "int prod", frit_reduce(ctx, FRIT_RF_PROD, ia, AX(1), 1, 0, 0), prodi, 2, 0);
  check_values(ctx, "any", frit_reduce(ctx, FRIT_RF_ANY, ia, AX(1), 1, 0, 0), anyv, 2, 0);
  check_values(ctx, "all", frit_reduce(ctx, FRIT_RF_ALL, ia, AX(1), 1, 0, 0), allv, 2, 0);
  /* logsumexp: stable for large values, -inf rows give -inf */
  const double lv[] = {1000, 1000, 999, -INFINITY, -INFINITY, -INFINITY, 0, -INFINITY, 1};
  frit_tensor *l = input(ctx, "l", FRIT_F64, 2, D(3, 3), lv);
  double lw[3] = {1000 + log(2 + exp(-1.0)), -INFINITY, log(1 + exp(1.0))};
  check_values(ctx, "logsumexp", frit_reduce(ctx, FRIT_RF_LOGSUMEXP, l, AX(1), 1, 0, 0), lw, 3, 1e-12);
  /* empty sum and prod */
  frit_tensor *z = input(ctx, "z", FRIT_F32, 2, D(3, 0), NULL);
  const double zs[] = {0, 0, 0}, zp[] = {1, 1, 1};
  check_values(ctx, "empty sum", frit_reduce(ctx, FRIT_RF_SUM, z, AX(1), 1, 0, 0), zs, 3, 0);
  check_values(ctx, "empty prod", frit_reduce(ctx, FRIT_RF_PROD, z, AX(1), 1, 0, 0), zp, 3, 0);
  /* cumsum along an axis and flattened */
  double cs1[6], csf[6];
  for (int r = 0; r < 2; r++)
    for (int j = 0; j < 3; j++) cs1[r * 3 + j] = (j ? cs1[r * 3 + j - 1] : 0) + iv[r * 3 + j];
  for (int i = 0; i < 6; i++) csf[i] = (i ? csf[i - 1] : 0) + iv[i];
  check_values(ctx, "cumsum axis 1", frit_cumsum(ctx, ia, -1), cs1, 6, 0);
  check_values(ctx, "cumsum flat", frit_cumsum(ctx, ia, FRIT_NO_AXIS), csf, 6, 0);
  double cs0[6];
  for (int j = 0; j < 3; j++) cs0[j] = iv[j], cs0[3 + j] = iv[j] + iv[3 + j];
  check_values(ctx, "cumsum axis 0", frit_cumsum(ctx, ia, 0), cs0, 6, 0);
  reset_inputs();
  frit_ctx_free(ctx);
}

static void test_nn_values(void) {
  frit_ctx *ctx = frit_ctx_new();
  reset_inputs();
  /* softmax / log_softmax on each axis */
  frit_tensor *x = input(ctx, "x", FRIT_F32, 2, D(3, 4), NULL);
  const double *xv = IN(0);
  for (int ax = 0; ax < 2; ax++) {
    double sm[12], lsm[12];
    int nr = ax ? 3 : 4, nc = ax ? 4 : 3;
    for (int r = 0; r < nr; r++) {
      double m = -INFINITY, s = 0;
#define XAT(c) (ax ? xv[r * 4 + (c)] : xv[(c) * 4 + r])
#define OAT(c) (ax ? r * 4 + (c) : (c) * 4 + r)
      for (int c = 0; c < nc; c++) m = XAT(c) > m ? XAT(c) : m;
      for (int c = 0; c < nc; c++) s += exp(XAT(c) - m);
      for (int c = 0; c < nc; c++) sm[OAT(c)] = exp(XAT(c) - m) / s, lsm[OAT(c)] = XAT(c) - m - log(s);
#undef XAT
#undef OAT
    }
    check_values(ctx, ax ? "softmax axis 1" : "softmax axis 0", frit_softmax(ctx, x, ax), sm, 12, 1e-5);
    check_values(ctx, ax ? "log_softmax axis -1" : "log_softmax axis -2", frit_log_softmax(ctx, x, ax - 2), lsm, 12, 1e-5);
  }
  /* take with negative and out-of-range (clamped) indices */
  frit_tensor *t = input(ctx, "t", FRIT_F32, 2, D(3, 4), NULL);
  const double idv[] = {0, -1, 3, -4, 7, -9};
  frit_tensor *idx = input(ctx, "idx", FRIT_I32, 2, D(2, 3), idv);
  const double *tv = IN(1);
  double w1[3 * 6], wf[6], w0[6 * 4];
  for (int r = 0; r < 3; r++)
    for (int k = 0; k < 6; k++) {
      int64_t j = (int64_t)idv[k];
      j = j < 0 ? j + 4 : j;
      j = j < 0 ? 0 : j > 3 ? 3 : j;
      w1[r * 6 + k] = tv[r * 4 + j];
    }
  for (int k = 0; k < 6; k++) {
    int64_t j = (int64_t)idv[k];
    j = j < 0 ? j + 12 : j;
    j = j < 0 ? 0 : j > 11 ? 11 : j;
    wf[k] = tv[j];
    int64_t r = (int64_t)idv[k];
    r = r < 0 ? r + 3 : r;
    r = r < 0 ? 0 : r > 2 ? 2 : r;
    for (int c = 0; c < 4; c++) w0[k * 4 + c] = tv[r * 4 + c];
  }
  check_values(ctx, "take axis 1", frit_take(ctx, t, idx, 1), w1, 18, 0);
  check_values(ctx, "take flat", frit_take(ctx, t, idx, FRIT_NO_AXIS), wf, 6, 0);
  check_values(ctx, "take axis 0", frit_take(ctx, t, idx, 0), w0, 24, 0);
  /* take_along_axis: (3,4) with (3,2) indices on axis 1, and (1,4) on axis 0 */
  const double tav[] = {3, 0, -1, 1, 2, 2};
  frit_tensor *ta = input(ctx, "ta", FRIT_I64, 2, D(3, 2), tav);
  double wta[6];
  for (int r = 0; r < 3; r++)
    for (int k = 0; k < 2; k++) {
      int64_t j = (int64_t)tav[r * 2 + k];
      j = j < 0 ? j + 4 : j;
      wta[r * 2 + k] = tv[r * 4 + j];
    }
  check_values(ctx, "take_along_axis 1", frit_take_along_axis(ctx, t, ta, 1), wta, 6, 0);
  const double tbv[] = {2, 0, 1, -1};
  frit_tensor *tb = input(ctx, "tb", FRIT_I64, 2, D(1, 4), tbv);
  double wtb[4];
  for (int c = 0; c < 4; c++) wtb[c] = tv[(int)(tbv[c] < 0 ? tbv[c] + 3 : tbv[c]) * 4 + c];
  check_values(ctx, "take_along_axis 0", frit_take_along_axis(ctx, t, tb, 0), wtb, 4, 0);
  /* a size-1 x dim broadcasts against the indices */
  frit_tensor *col = input(ctx, "col", FRIT_F32, 2, D(3, 1), (const double[]){5, 6, 7});
  frit_tensor *tc = input(ctx, "tc", FRIT_I64, 2, D(3, 2), (const double[]){0, 0, 0, 0, 0, 0});
  const double wtc[] = {5, 5, 6, 6, 7, 7};
  check_values(ctx, "take_along_axis bcast", frit_take_along_axis(ctx, col, tc, 1), wtc, 6, 0);
  /* one_hot: out-of-range and negative indices give all-zero rows */
  const double ohv[] = {0, 2, -1, 3};
  frit_tensor *oi = input(ctx, "oi", FRIT_I32, 1, D(4), ohv);
  double woh[12] = {0};
  for (int i = 0; i < 4; i++)
    if (ohv[i] >= 0 && ohv[i] < 3) woh[i * 3 + (int)ohv[i]] = 1;
  check_values(ctx, "one_hot", frit_one_hot(ctx, oi, 3, FRIT_F32), woh, 12, 0);
  reset_inputs();
  frit_ctx_free(ctx);
}

/* The ops with a symbolic dim n (bound to 5 for the runs). */
static void test_symbolic_values(void) {
  frit_ctx *ctx = frit_ctx_new();
  reset_inputs();
  frit_uop *nv = frit_var(ctx, "n", 1, 64);
  binds[nbinds++] = (frit_binding){"n", 5};
  frit_tensor *x = input_sym(ctx, "x", FRIT_F64, 2, D(5, 3), (frit_uop *const[]){nv, NULL}, NULL);
  frit_tensor *w = input(ctx, "w", FRIT_F64, 2, D(3, 2), NULL);
  frit_tensor *idx = input(ctx, "idx", FRIT_I64, 1, D(3), (const double[]){-1, 0, 9});
  const double *xv = IN(0), *wv = IN(1);
  double mean[3], var1[3], am[3], cs[15], mm[10], tk[9], sm[15], tot = 0;
  for (int c = 0; c < 3; c++) {
    double s = 0, ss = 0, best = -INFINITY;
    for (int r = 0; r < 5; r++) {
      s += xv[r * 3 + c], tot += xv[r * 3 + c];
      cs[r * 3 + c] = s;
      if (xv[r * 3 + c] > best) best = xv[r * 3 + c], am[c] = r;
    }
    mean[c] = s / 5;
    double se = 0;
    for (int r = 0; r < 5; r++) ss += (xv[r * 3 + c] - mean[c]) * (xv[r * 3 + c] - mean[c]), se += exp(xv[r * 3 + c] - best);
    for (int r = 0; r < 5; r++) sm[r * 3 + c] = exp(xv[r * 3 + c] - best) / se;
    var1[c] = ss / 4;
  }
  for (int r = 0; r < 5; r++)
    for (int j = 0; j < 2; j++) {
      mm[r * 2 + j] = 0;
      for (int k = 0; k < 3; k++) mm[r * 2 + j] += xv[r * 3 + k] * wv[k * 2 + j];
    }
  const int rows[3] = {4, 0, 4};
  for (int i = 0; i < 3; i++)
    for (int c = 0; c < 3; c++) tk[i * 3 + c] = xv[rows[i] * 3 + c];
  check_values(ctx, "sym mean", frit_reduce(ctx, FRIT_RF_MEAN, x, AX(0), 1, 0, 0), mean, 3, 1e-12);
  check_values(ctx, "sym var", frit_reduce(ctx, FRIT_RF_VAR, x, AX(0), 1, 0, 1), var1, 3, 1e-12);
  check_values(ctx, "sym argmax", frit_reduce(ctx, FRIT_RF_ARGMAX, x, AX(0), 1, 0, 0), am, 3, 0);
  check_values(ctx, "sym sum", frit_reduce(ctx, FRIT_RF_SUM, x, NULL, FRIT_ALL_AXES, 0, 0), &tot, 1, 1e-12);
  check_values(ctx, "sym cumsum", frit_cumsum(ctx, x, 0), cs, 15, 1e-12);
  check_values(ctx, "sym matmul", frit_matmul(ctx, x, w), mm, 10, 1e-12);
  check_values(ctx, "sym take", frit_take(ctx, x, idx, 0), tk, 9, 0);
  check_values(ctx, "sym softmax", frit_softmax(ctx, x, 0), sm, 15, 1e-12);
  reset_inputs();
  frit_ctx_free(ctx);
}

/* max pooling of integers: the padding (the dtype's minimum) never wins */
static void test_int_pool_values(void) {
  frit_ctx *ctx = frit_ctx_new();
  reset_inputs();
  const double v[] = {-5, -7, -3, -9, -2, -8, -4, -6, -1};
  frit_tensor *x = input(ctx, "x", FRIT_I32, 2, D(3, 3), v);
  double want[4];
  for (int y = 0; y < 2; y++)
    for (int xx = 0; xx < 2; xx++) {
      double m = -INFINITY;
      for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
          int yy = y * 2 + i - 1, xw = xx * 2 + j - 1;
          if (yy >= 0 && yy < 3 && xw >= 0 && xw < 3 && v[yy * 3 + xw] > m) m = v[yy * 3 + xw];
        }
      want[y * 2 + xx] = m;
    }
  check_values(ctx, "int max_pool2d", frit_max_pool2d(ctx, x, D(2, 2), D(2, 2), D(1, 1)), want, 4, 0);
  reset_inputs();
  frit_ctx_free(ctx);
}

/* matmul and conv2d are built as broadcast-multiply + REDUCE_AXIS so that the scheduler fuses
 * each into a single kernel with no materialised product. */
static int kernels_of(frit_ctx *ctx, frit_tensor *t) {
  frit_compile_opts o;
  memset(&o, 0, sizeof o);
  frit_program *p = t ? frit_compile(ctx, &t, 1, &o) : NULL;
  return p ? frit_program_num_kernels(p) : -1;
}

static void test_fusion(void) {
  if (!pipeline_mode()) return;
  frit_ctx *ctx = frit_ctx_new();
  frit_tensor *a = frit_input(ctx, "a", FRIT_F32, 3, D(2, 16, 8));
  frit_tensor *b = frit_input(ctx, "b", FRIT_F32, 2, D(8, 12));
  CHECK_EQ_INT(kernels_of(ctx, frit_matmul(ctx, a, b)), 1);
  frit_tensor *x = frit_input(ctx, "x", FRIT_F32, 4, D(2, 4, 9, 9));
  frit_tensor *w = frit_input(ctx, "w", FRIT_F32, 4, D(6, 2, 3, 3));
  CHECK_EQ_INT(kernels_of(ctx, frit_conv2d(ctx, x, w, NULL, D(2, 1), D(1, 1), D(1, 2), 2)), 1);
  CHECK_EQ_INT(kernels_of(ctx, frit_max_pool2d(ctx, x, D(3, 3), D(2, 2), D(1, 1))), 1);
  frit_ctx_free(ctx);
}

int main(void) {
  test_reduce_shapes();
  test_linalg_shapes();
  test_nn_shapes();
  test_reduce_values();
  test_matmul_values();
  test_conv_values();
  test_pool_values();
  test_nn_values();
  test_symbolic_values();
  test_int_pool_values();
  test_fusion();
  reset_inputs();
  CHECK_DONE();
}
