/* Whole-tensor reductions of large static tensors are staged (partials, then their reduction):
 * results checked against plain C loops for each reduction kind, and the kernel split shown. */
#include "frit.h"

#include "check.h"

#include <math.h>
#include <stdlib.h>

enum { ROWS = 1024, COLS = 1024 }; /* 2^20 elements: large enough to be staged */

static frit_program *compile1(frit_ctx *ctx, frit_tensor *out) {
  frit_compile_opts opts = {0};
  frit_program *p = frit_compile(ctx, &out, 1, &opts);
  if (!p) fprintf(stderr, "compile: %s\n", frit_error(ctx));
  return p;
}

static void test_float_sum_and_max(void) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t dims[2] = {ROWS, COLS};
  frit_tensor *x = frit_input(ctx, "x", FRIT_F32, 2, dims);
  frit_tensor *s = frit_reduce(ctx, FRIT_RF_SUM, x, NULL, FRIT_ALL_AXES, 0, 0);
  frit_tensor *m = frit_reduce(ctx, FRIT_RF_MAX, x, NULL, FRIT_ALL_AXES, 1, 0);
  float *data = malloc(sizeof(float) * ROWS * COLS);
  double ref_sum = 0;
  float ref_max = -INFINITY;
  for (int i = 0; i < ROWS * COLS; i++) {
    data[i] = (float)(((int64_t)i * 7919) % 1000) / 1000.0f - 0.5f;
    ref_sum += data[i];
    if (data[i] > ref_max) ref_max = data[i];
  }
  ref_sum += 3.5 - (double)data[777777];
  data[777777] = 3.5f, ref_max = 3.5f;
  frit_program *ps = compile1(ctx, s), *pm = compile1(ctx, m);
  CHECK(ps && pm);
  if (ps && pm) {
    CHECK_EQ_INT(frit_program_num_kernels(ps), 2); /* partials, then their sum */
    float got_sum = 0, got_max = 0;
    void *in[1] = {data}, *o1[1] = {&got_sum}, *o2[1] = {&got_max};
    CHECK(frit_program_run(ps, in, o1, NULL, 0) == FRIT_OK);
    CHECK(frit_program_run(pm, in, o2, NULL, 0) == FRIT_OK);
    CHECK(fabs(got_sum - ref_sum) <= 1e-3 * (1 + fabs(ref_sum)));
    CHECK(got_max == ref_max);
    int nd = 0;
    int64_t od[FRIT_MAX_DIMS];
    CHECK(frit_program_output_shape(pm, 0, NULL, 0, &nd, od) == FRIT_OK && nd == 2 && od[0] == 1 && od[1] == 1);
  }
  free(data);
  frit_ctx_free(ctx);
}

static void test_int_prod_and_bool_any(void) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t dims[1] = {ROWS * COLS};
  frit_tensor *x = frit_input(ctx, "x", FRIT_I32, 1, dims);
  frit_tensor *p = frit_reduce(ctx, FRIT_RF_PROD, x, NULL, FRIT_ALL_AXES, 0, 0); /* i64, wraps */
  frit_tensor *mn = frit_reduce(ctx, FRIT_RF_MIN, x, NULL, FRIT_ALL_AXES, 0, 0);
  frit_tensor *any = frit_reduce(ctx, FRIT_RF_ANY, frit_binary_t(ctx, FRIT_BF_EQ, x, frit_scalar_i(ctx, FRIT_I32, -5)),
                                 NULL, FRIT_ALL_AXES, 0, 0);
  int32_t *data = malloc(sizeof(int32_t) * ROWS * COLS);
  uint64_t ref_prod = 1;
  int32_t ref_min = INT32_MAX;
  for (int i = 0; i < ROWS * COLS; i++) data[i] = (i % 5) - 1 + (i % 3 == 0 ? 2 : 0) + (i == 5000 ? -6 : 0);
  data[12345] = -5;
  for (int i = 0; i < ROWS * COLS; i++) {
    ref_prod *= (uint64_t)(int64_t)data[i];
    if (data[i] < ref_min) ref_min = data[i];
  }
  frit_tensor *outs[3] = {p, mn, any};
  frit_compile_opts opts = {0};
  frit_program *prog = frit_compile(ctx, outs, 3, &opts);
  CHECK(prog != NULL);
  if (prog) {
    int64_t got_prod = 0;
    int32_t got_min = 0;
    uint8_t got_any = 0;
    void *in[1] = {data}, *out[3] = {&got_prod, &got_min, &got_any};
    CHECK(frit_program_run(prog, in, out, NULL, 0) == FRIT_OK);
    CHECK(got_prod == (int64_t)ref_prod);
    CHECK_EQ_INT(got_min, ref_min);
    int found = 0;
    for (int i = 0; i < ROWS * COLS; i++) found |= data[i] == -5;
    CHECK_EQ_INT(found, 1);
    CHECK_EQ_INT(got_any, found);
  }
  free(data);
  frit_ctx_free(ctx);
}

int main(void) {
  test_float_sum_and_max();
  test_int_prod_and_bool_any();
  CHECK_DONE();
}
