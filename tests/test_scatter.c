/* Tests of frit_scatter (the SCATTER op, every mode incl. AND/OR/XOR): results of compiled and
 * interpreted programs against a plain C loop over the updates in order, with duplicate, negative
 * and out-of-range indices. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "check.h"
#include "frit.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}

static frit_program *compile_outs(frit_ctx *ctx, frit_tensor **outs, int n, int interpret, int threads,
                                  int no_fusion) {
  frit_compile_opts o;
  memset(&o, 0, sizeof o);
  o.interpret = interpret;
  o.threads = threads;
  o.no_fusion = no_fusion;
  frit_program *p = frit_compile(ctx, outs, n, &o);
  if (!p) fprintf(stderr, "compile failed: %s\n", frit_error(ctx));
  return p;
}

/* The reference: out = x; for j in order: out[clamp(wrap(idx[j]))] = combine(old, upd[j]). */
static double combine(frit_atomic_op mode, double old, double u, bool is_bool, bool is_float) {
  if (is_bool) {
    bool a = old != 0, b = u != 0;
    if (mode == FRIT_ATOMIC_XOR) return a != b;
    return mode == FRIT_ATOMIC_ADD || mode == FRIT_ATOMIC_MAX || mode == FRIT_ATOMIC_OR ? (a || b)
         : mode == FRIT_ATOMIC_MIN || mode == FRIT_ATOMIC_AND ? (a && b) : b;
  }
  /* bitwise modes: integers only (the values are small, so int64 holds them exactly) */
  if (mode == FRIT_ATOMIC_AND) return (double)((int64_t)old & (int64_t)u);
  if (mode == FRIT_ATOMIC_OR) return (double)((int64_t)old | (int64_t)u);
  if (mode == FRIT_ATOMIC_XOR) return (double)((int64_t)old ^ (int64_t)u);
  if (mode == FRIT_ATOMIC_ADD) return old + u;
  if (mode == FRIT_ATOMIC_MIN) return is_float && (isnan(old) || isnan(u)) ? NAN : (u < old ? u : old);
  if (mode == FRIT_ATOMIC_MAX) return is_float && (isnan(old) || isnan(u)) ? NAN : (u > old ? u : old);
  return u;
}

static void reference(frit_atomic_op mode, int64_t rows, int64_t inner, const double *x, const int64_t *idx,
                      int64_t nidx, const double *upd, double *out, bool is_bool, bool is_float, bool is_i32) {
  memcpy(out, x, (size_t)(rows * inner) * sizeof *out);
  for (int64_t j = 0; j < nidx; j++) {
    int64_t i = idx[j] < 0 ? idx[j] + rows : idx[j];
    i = i < 0 ? 0 : i >= rows ? rows - 1 : i;
    for (int64_t k = 0; k < inner; k++) {
      double v = combine(mode, out[i * inner + k], upd[j * inner + k], is_bool, is_float);
      if (is_float) v = (float)v;                    /* f32 rounding per step, as the kernel does */
      if (is_i32) v = (double)(int32_t)(uint32_t)(int64_t)v; /* i32 wraparound */
      out[i * inner + k] = v;
    }
  }
}

static const char *mode_name(frit_atomic_op m) {
  return m == FRIT_ATOMIC_ADD ? "add" : m == FRIT_ATOMIC_MIN ? "min" : m == FRIT_ATOMIC_MAX ? "max"
       : m == FRIT_ATOMIC_AND ? "and" : m == FRIT_ATOMIC_OR ? "or" : m == FRIT_ATOMIC_XOR ? "xor" : "set";
}

/* One scatter of dtype dt into x of shape (rows, inner...) given as (rows, d1[, d2]). */
static void run_case(frit_dtype dt, frit_atomic_op mode, int ndim, const int64_t *xdims, int64_t nidx,
                     int interpret, int threads, int no_fusion, int fused) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t rows = xdims[0], inner = 1;
  for (int k = 1; k < ndim; k++) inner *= xdims[k];
  int64_t udims[FRIT_MAX_DIMS];
  memcpy(udims, xdims, (size_t)ndim * sizeof *udims);
  udims[0] = nidx;
  bool is_bool = dt == FRIT_BOOL, is_float = dt == FRIT_F32, is_i32 = dt == FRIT_I32;
  frit_tensor *x = frit_input(ctx, "x", dt, ndim, xdims);
  frit_tensor *ix = frit_input(ctx, "idx", FRIT_I64, 1, &nidx);
  frit_tensor *u = frit_input(ctx, "upd", dt, ndim, udims);
  frit_tensor *xs = x, *us = u;
  if (fused && !is_bool) { /* x and the updates computed in the kernels: x + 1, upd * 2 */
    xs = frit_binary_t(ctx, FRIT_BF_ADD, x, frit_scalar_i(ctx, dt, 1));
    us = frit_binary_t(ctx, FRIT_BF_MUL, u, frit_scalar_i(ctx, dt, 2));
  }
  frit_tensor *y = frit_scatter(ctx, xs, ix, us, mode);
  frit_tensor *outs[2] = {y, NULL};
  int nout = 1;
  if (fused && !is_bool) outs[0] = frit_binary_t(ctx, FRIT_BF_SUB, y, frit_scalar_i(ctx, dt, 1)); /* a consumer */
  CHECK(y != NULL);
  frit_program *p = y ? compile_outs(ctx, outs, nout, interpret, threads, no_fusion) : NULL;
  CHECK(p != NULL);
  if (!p) {
    frit_ctx_free(ctx);
    return;
  }
  int64_t n = rows * inner, nu = nidx * inner;
  double *xv = malloc((size_t)(n + 1) * sizeof *xv), *uv = malloc((size_t)(nu + 1) * sizeof *uv);
  double *want = malloc((size_t)(n + 1) * sizeof *want);
  int64_t *iv = malloc((size_t)(nidx + 1) * sizeof *iv);
  size_t es = is_bool ? 1 : 4;
  char *xb = malloc((size_t)(n + 1) * es), *ub = malloc((size_t)(nu + 1) * es), *ob = malloc((size_t)(n + 1) * es);
  for (int64_t i = 0; i < n; i++) xv[i] = is_bool ? (double)(next_rand() % 2) : (double)((int)(next_rand() % 41) - 20);
  for (int64_t i = 0; i < nu; i++) uv[i] = is_bool ? (double)(next_rand() % 2) : (double)((int)(next_rand() % 41) - 20);
  if (is_float && nu > 3) uv[3] = NAN;
  /* few distinct rows, so duplicates abound; some negative and some out of range */
  for (int64_t j = 0; j < nidx; j++) iv[j] = (int64_t)(next_rand() % (uint64_t)(2 * rows + 4)) - rows - 2;
  for (int64_t i = 0; i < n; i++) {
    if (is_bool) ((bool *)xb)[i] = xv[i] != 0;
    else if (is_float) ((float *)xb)[i] = (float)xv[i];
    else ((int32_t *)xb)[i] = (int32_t)xv[i];
  }
  for (int64_t i = 0; i < nu; i++) {
    if (is_bool) ((bool *)ub)[i] = uv[i] != 0;
    else if (is_float) ((float *)ub)[i] = (float)uv[i];
    else ((int32_t *)ub)[i] = (int32_t)uv[i];
  }
  if (fused && !is_bool) {
    for (int64_t i = 0; i < n; i++) xv[i] += 1;
    for (int64_t i = 0; i < nu; i++) uv[i] *= 2;
  }
  reference(mode, rows, inner, xv, iv, nidx, uv, want, is_bool, is_float, is_i32);
  if (fused && !is_bool)
    for (int64_t i = 0; i < n; i++) want[i] -= 1;
  void *in[3] = {xb, iv, ub}, *out[1] = {ob};
  CHECK_EQ_INT(frit_program_run(p, in, out, NULL, 0), FRIT_OK);
  int bad = 0;
  for (int64_t i = 0; i < n; i++) {
    double got = is_bool ? (double)((bool *)ob)[i] : is_float ? (double)((float *)ob)[i] : (double)((int32_t *)ob)[i];
    bool same = got == want[i] || (isnan(got) && isnan(want[i]));
    if (!same && bad++ < 3)
      fprintf(stderr, "scatter_%s dt %u rows %" PRId64 " inner %" PRId64 " nidx %" PRId64
                      " interp %d fused %d: [%" PRId64 "] got %g want %g\n",
              mode_name(mode), (unsigned)dt, rows, inner, nidx, interpret, fused, i, got, want[i]);
  }
  CHECK_EQ_INT(bad, 0);
  free(xv), free(uv), free(want), free(iv), free(xb), free(ub), free(ob);
  frit_ctx_free(ctx);
}

static void test_modes(void) {
  static const frit_atomic_op modes[] = {FRIT_ATOMIC_ADD, FRIT_ATOMIC_MIN, FRIT_ATOMIC_MAX, FRIT_ATOMIC_XCHG};
  static const frit_dtype dts[] = {FRIT_F32, FRIT_I32, FRIT_BOOL};
  static const int64_t s1[] = {7}, s2[] = {6, 5}, s3[] = {4, 3, 2}, s4[] = {1, 9}, big[] = {8, 300};
  struct { int nd; const int64_t *d; int64_t nidx; } shapes[] = {{1, s1, 20}, {2, s2, 13}, {3, s3, 9}, {2, s4, 5},
                                                                  {2, s2, 0}, {1, s1, 3}, {2, big, 64}};
  const int ns = (int)(sizeof shapes / sizeof *shapes) - 1; /* the large case runs below */
  int c = 0;
  for (size_t m = 0; m < 4; m++)
    for (size_t d = 0; d < 3; d++)
      for (int interp = 0; interp < 2; interp++)
        for (int rep = 0; rep < 2; rep++, c++) {
          int s = (c * 3 + rep) % ns;
          run_case(dts[d], modes[m], shapes[s].nd, shapes[s].d, shapes[s].nidx, interp, 4, 0, rep && dts[d] != FRIT_BOOL);
        }
  for (size_t m = 0; m < 4; m++)
    for (size_t d = 0; d < 3; d++) run_case(dts[d], modes[m], 2, big, 64, 0, 4, 0, 0);
  /* the unfused reference schedule and a single thread */
  for (size_t m = 0; m < 4; m++) {
    run_case(FRIT_F32, modes[m], 2, s2, 13, 0, 1, 1, 1);
    run_case(FRIT_I32, modes[m], 2, big, 64, 0, 1, 0, 1);
  }
  /* the bitwise modes on i32 and bool: compiled, interpreted, unfused, fused producers */
  static const frit_atomic_op bw[] = {FRIT_ATOMIC_AND, FRIT_ATOMIC_OR, FRIT_ATOMIC_XOR};
  for (size_t m = 0; m < 3; m++)
    for (size_t d = 1; d < 3; d++)
      for (int s = 0; s < ns + 1; s++) {
        run_case(dts[d], bw[m], shapes[s].nd, shapes[s].d, shapes[s].nidx, s % 2, 4, 0, (s / 2) % 2 && dts[d] != FRIT_BOOL);
        if (s == 1) run_case(dts[d], bw[m], shapes[s].nd, shapes[s].d, shapes[s].nidx, 0, 1, 1, 0);
      }
}

/* Symbolic sizes: one program for several row counts and index lengths. */
static void test_symbolic(void) {
  frit_ctx *ctx = frit_ctx_new();
  frit_uop *n = frit_var(ctx, "n", 1, 1000), *m = frit_var(ctx, "m", 0, 1000);
  frit_uop *c3 = frit_const_int(ctx, FRIT_I64, 3);
  frit_uop *xd[2] = {n, c3}, *ud[2] = {m, c3};
  frit_tensor *x = frit_input_sym(ctx, "x", FRIT_F32, 2, xd);
  frit_tensor *ix = frit_input_sym(ctx, "idx", FRIT_I32, 1, ud);
  frit_tensor *u = frit_input_sym(ctx, "upd", FRIT_F32, 2, ud);
  frit_tensor *y = frit_scatter(ctx, x, ix, u, FRIT_ATOMIC_ADD);
  for (int interp = 0; interp < 2; interp++) {
    frit_program *p = compile_outs(ctx, &y, 1, interp, 4, 0);
    CHECK(p != NULL);
    if (!p) continue;
    for (int t = 0; t < 3; t++) {
      int64_t rows = 1 + t * 5, nidx = t * 7;
      float xv[64], uv[64], ov[64];
      int32_t iv[32];
      double xd64[64], ud64[64], want[64];
      int64_t i64[32];
      for (int64_t i = 0; i < rows * 3; i++) xv[i] = (float)(i % 7), xd64[i] = xv[i];
      for (int64_t i = 0; i < nidx * 3; i++) uv[i] = (float)(i % 5) - 2, ud64[i] = uv[i];
      for (int64_t j = 0; j < nidx; j++) iv[j] = (int32_t)(j * 3 % (rows + 2)) - 1, i64[j] = iv[j];
      reference(FRIT_ATOMIC_ADD, rows, 3, xd64, i64, nidx, ud64, want, false, true, false);
      frit_binding b[2] = {{"n", rows}, {"m", nidx}};
      void *in[3] = {xv, iv, uv}, *out[1] = {ov};
      CHECK_EQ_INT(frit_program_run(p, in, out, b, 2), FRIT_OK);
      int bad = 0;
      for (int64_t i = 0; i < rows * 3; i++) bad += ov[i] != (float)want[i];
      CHECK_EQ_INT(bad, 0);
    }
  }
  frit_ctx_free(ctx);
}

/* Two kernels into one buffer, one of them sequential; bad arguments give errors. */
static void test_schedule_and_errors(void) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t xd[2] = {4, 3}, id[1] = {5}, ud[2] = {5, 3}, bad_id[2] = {5, 1};
  frit_tensor *x = frit_input(ctx, "x", FRIT_F32, 2, xd);
  frit_tensor *ix = frit_input(ctx, "idx", FRIT_I64, 1, id);
  frit_tensor *u = frit_input(ctx, "upd", FRIT_F32, 2, ud);
  frit_tensor *y = frit_scatter(ctx, x, ix, u, FRIT_ATOMIC_XCHG);
  frit_program *p = compile_outs(ctx, &y, 1, 0, 0, 0);
  CHECK(p != NULL);
  if (p) {
    CHECK_EQ_INT(frit_program_num_kernels(p), 2);
    CHECK_EQ_STR(frit_program_kernel_ops(p, 0), "copy");
    CHECK(strstr(frit_program_kernel_ops(p, 1), "scatter_set") != NULL);
  }
  /* a scalar update broadcasts; an f64 one is cast to f32 */
  CHECK(frit_scatter(ctx, x, ix, frit_scalar_f(ctx, FRIT_F64, 2.5), FRIT_ATOMIC_ADD) != NULL);
  CHECK(frit_scatter(ctx, x, ix, u, FRIT_ATOMIC_AND) == NULL); /* bitwise modes on floats */
  CHECK(strstr(frit_error(ctx), "scatter") != NULL && strstr(frit_error(ctx), "mode and") != NULL &&
        strstr(frit_error(ctx), "f32") != NULL);
  CHECK(frit_scatter(ctx, x, ix, u, FRIT_ATOMIC_XOR) == NULL);
  CHECK(strstr(frit_error(ctx), "mode xor") != NULL);
  CHECK(frit_scatter(ctx, x, ix, u, FRIT_ATOMIC_COUNT_) == NULL);
  CHECK(frit_scatter(ctx, frit_scalar_f(ctx, FRIT_F32, 1), ix, u, FRIT_ATOMIC_ADD) == NULL);
  CHECK(frit_scatter(ctx, x, frit_input(ctx, "i2", FRIT_I64, 2, bad_id), u, FRIT_ATOMIC_ADD) == NULL);
  CHECK(frit_scatter(ctx, x, frit_input(ctx, "fi", FRIT_F32, 1, id), u, FRIT_ATOMIC_ADD) == NULL);
  int64_t wrong[2] = {5, 4};
  CHECK(frit_scatter(ctx, x, ix, frit_input(ctx, "u2", FRIT_F32, 2, wrong), FRIT_ATOMIC_ADD) == NULL);
  CHECK(strstr(frit_error(ctx), "(5, 4)") != NULL);
  CHECK(frit_scatter(ctx, x, NULL, u, FRIT_ATOMIC_ADD) == NULL);
  frit_ctx_free(ctx);
}

int main(void) {
  test_modes();
  test_symbolic();
  test_schedule_and_errors();
  CHECK_DONE();
}
