/* End-to-end runs of kernels built with the explicit-kernel API (compiled and interpreted, one
 * and several threads) against plain C loops: scalar math on indices, inner loops with dynamic
 * and negative-step trips, variables, if/else, break/continue in nested loops, read-after-write
 * within a point, atomics returning old values, and a host loop around a kernel. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "check.h"
#include "frit.h"

static frit_ctx *C;

static frit_tensor *I64(int64_t v) { return frit_scalar_i(C, FRIT_I64, v); }
static frit_tensor *F32(double v) { return frit_scalar_f(C, FRIT_F32, v); }
static frit_tensor *bin(frit_bfunc f, frit_tensor *a, frit_tensor *b) { return frit_binary_t(C, f, a, b); }
static frit_tensor *ld(frit_tensor *t, int n, frit_tensor *const *ix) { return frit_kernel_load(C, t, n, ix); }
static frit_tensor *written(int k) {
  frit_tensor *nw = NULL;
  CHECK(frit_kernel_written(C, k, NULL, &nw) == FRIT_OK);
  return nw;
}

/* Compiles outs and runs; modes: 0 compiled 1 thread, 1 compiled 4 threads, 2 interpreter. */
static bool run(frit_tensor *const *outs, int nout, void *const *ins, void *const *res, int mode) {
  frit_compile_opts o;
  memset(&o, 0, sizeof o);
  o.interpret = mode == 2;
  o.threads = mode == 1 ? 4 : 1;
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

/* C[i, j] = A[i, j] * 2 + i  (f32 * f32 + i64 promotes to f64, stored back as f32) */
static void test_scale(int mode) {
  C = frit_ctx_new();
  int64_t d[2] = {37, 5};
  frit_tensor *A = frit_input(C, "A", FRIT_F32, 2, d), *Z = frit_zeros(C, FRIT_F32, 2, d), *ix[2];
  CHECK_EQ_INT(frit_kernel_begin_static(C, "scale", 2, d, ix), FRIT_OK);
  frit_tensor *v = bin(FRIT_BF_ADD, bin(FRIT_BF_MUL, ld(A, 2, ix), F32(2)), ix[0]);
  CHECK_EQ_INT(frit_kernel_store(C, Z, 2, ix, v), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_end(C), 1);
  frit_tensor *out = written(0);
  float a[185], c[185];
  for (int k = 0; k < 185; k++) a[k] = (float)(k % 23) * 0.37f - 3;
  CHECK(run(&out, 1, (void *[]){a}, (void *[]){c}, mode));
  int bad = 0;
  for (int i = 0; i < 37; i++)
    for (int j = 0; j < 5; j++) bad += c[i * 5 + j] != (float)((double)(a[i * 5 + j] * 2.0f) + i);
  CHECK_EQ_INT(bad, 0);
  frit_ctx_free(C);
}

/* out[i] = sum of k over range(S[i], E[i], P[i]) (dynamic trips, negative and zero steps), and
 * cnt[i] = number of iterations, with a var carried across iterations. */
static void test_dynamic_loops(int mode) {
  C = frit_ctx_new();
  int64_t n = 40;
  frit_tensor *S = frit_input(C, "S", FRIT_I32, 1, &n), *E = frit_input(C, "E", FRIT_I32, 1, &n);
  frit_tensor *P = frit_input(C, "P", FRIT_I32, 1, &n);
  frit_tensor *out = frit_zeros(C, FRIT_I64, 1, &n), *cnt = frit_zeros(C, FRIT_I32, 1, &n), *i, *k;
  CHECK_EQ_INT(frit_kernel_begin_static(C, "ranges", 1, &n, &i), FRIT_OK);
  int acc = frit_kernel_var(C, FRIT_I64, I64(0)), nit = frit_kernel_var(C, FRIT_I32, I64(0));
  CHECK_EQ_INT(frit_kernel_loop_begin(C, ld(S, 1, &i), ld(E, 1, &i), ld(P, 1, &i), &k), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_var_set(C, acc, bin(FRIT_BF_ADD, frit_kernel_var_get(C, acc), k)), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_var_set(C, nit, bin(FRIT_BF_ADD, frit_kernel_var_get(C, nit), I64(1))), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_loop_end(C), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_store(C, out, 1, &i, frit_kernel_var_get(C, acc)), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_store(C, cnt, 1, &i, frit_kernel_var_get(C, nit)), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_end(C), 2);
  frit_tensor *outs[2] = {written(0), written(1)};
  int32_t s[40], e[40], p[40], c[40];
  int64_t o[40];
  for (int j = 0; j < 40; j++) {
    s[j] = (j * 7) % 13 - 6, e[j] = (j * 5) % 17 - 8, p[j] = j % 9 - 4; /* steps -4..4, 0 included */
  }
  CHECK(run(outs, 2, (void *[]){s, e, p}, (void *[]){o, c}, mode));
  int bad = 0;
  for (int j = 0; j < 40; j++) {
    int64_t sum = 0, it = 0;
    if (p[j] != 0)
      for (int64_t x = s[j]; p[j] > 0 ? x < e[j] : x > e[j]; x += p[j]) sum += x, it++;
    bad += o[j] != sum || c[j] != it;
  }
  CHECK_EQ_INT(bad, 0);
  frit_ctx_free(C);
}

/* Nested loops with if/else, continue and break at both levels:
 *   acc = 0
 *   for a in range(0, 9):
 *     if a % 3 == 1: continue
 *     for b in range(a, 20, 2):
 *       x = B[i, b]
 *       if x < 0: continue
 *       else: acc += x * a
 *       if acc > lim[i]: break
 *     if acc > 2 * lim[i]: break
 *   out[i] = acc */
static void test_nested_control(int mode) {
  C = frit_ctx_new();
  int64_t n = 16, d[2] = {16, 20};
  frit_tensor *B = frit_input(C, "B", FRIT_F32, 2, d), *lim = frit_input(C, "lim", FRIT_F32, 1, &n);
  frit_tensor *out = frit_zeros(C, FRIT_F32, 1, &n), *i, *a, *b;
  CHECK_EQ_INT(frit_kernel_begin_static(C, "nested", 1, &n, &i), FRIT_OK);
  int acc = frit_kernel_var(C, FRIT_F32, F32(0));
  frit_tensor *li = ld(lim, 1, &i);
  CHECK_EQ_INT(frit_kernel_loop_begin(C, I64(0), I64(9), I64(1), &a), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_if_begin(C, bin(FRIT_BF_EQ, bin(FRIT_BF_REMAINDER, a, I64(3)), I64(1))), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_continue(C), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_if_end(C), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_loop_begin(C, a, I64(20), I64(2), &b), FRIT_OK);
  frit_tensor *x = ld(B, 2, (frit_tensor *[]){i, b});
  CHECK_EQ_INT(frit_kernel_if_begin(C, bin(FRIT_BF_LT, x, F32(0))), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_continue(C), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_else(C), FRIT_OK);
  frit_tensor *ax = frit_astype(C, bin(FRIT_BF_MUL, x, frit_astype(C, a, FRIT_F32)), FRIT_F32);
  CHECK_EQ_INT(frit_kernel_var_set(C, acc, bin(FRIT_BF_ADD, frit_kernel_var_get(C, acc), ax)), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_if_end(C), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_if_begin(C, bin(FRIT_BF_GT, frit_kernel_var_get(C, acc), li)), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_break(C), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_if_end(C), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_loop_end(C), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_if_begin(C, bin(FRIT_BF_GT, frit_kernel_var_get(C, acc), bin(FRIT_BF_MUL, li, F32(2)))), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_break(C), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_if_end(C), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_loop_end(C), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_store(C, out, 1, &i, frit_kernel_var_get(C, acc)), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_end(C), 1);
  frit_tensor *o = written(0);
  float bv[320], lv[16], got[16];
  for (int k = 0; k < 320; k++) bv[k] = (float)((k * 37) % 29 - 9) * 0.25f;
  for (int k = 0; k < 16; k++) lv[k] = (float)(k * 3);
  CHECK(run(&o, 1, (void *[]){bv, lv}, (void *[]){got}, mode));
  int bad = 0;
  for (int r = 0; r < 16; r++) {
    float ac = 0;
    for (int64_t av = 0; av < 9; av++) {
      if (av % 3 == 1) continue;
      for (int64_t bb = av; bb < 20; bb += 2) {
        float xv = bv[r * 20 + bb];
        if (xv < 0) continue;
        ac = ac + (float)(xv * (float)av);
        if (ac > lv[r]) break;
      }
      if (ac > lv[r] * 2) break;
    }
    bad += got[r] != ac;
  }
  CHECK_EQ_INT(bad, 0);
  frit_ctx_free(C);
}

/* Within one point: T[i] = A[i]; v = T[i] (sees the store); T[i] = v * 3; w = T[i]; U[i] = w + v
 * (read-after-write twice, write-after-write); and W[i] = old T[i] read before any store. */
static void test_point_order(int mode) {
  C = frit_ctx_new();
  int64_t n = 33;
  frit_tensor *A = frit_input(C, "A", FRIT_I32, 1, &n), *T0 = frit_input(C, "T", FRIT_I32, 1, &n);
  /* U and W must be different values: equal tensors (two zeros) are one node, one target */
  frit_tensor *U = frit_zeros(C, FRIT_I32, 1, &n), *W = frit_full_i(C, FRIT_I32, 1, &n, -1), *i;
  CHECK_EQ_INT(frit_kernel_begin_static(C, "order", 1, &n, &i), FRIT_OK);
  frit_tensor *old = ld(T0, 1, &i);
  CHECK_EQ_INT(frit_kernel_store(C, T0, 1, &i, ld(A, 1, &i)), FRIT_OK);
  frit_tensor *v = ld(T0, 1, &i);
  CHECK_EQ_INT(frit_kernel_store(C, T0, 1, &i, bin(FRIT_BF_MUL, v, I64(3))), FRIT_OK);
  frit_tensor *w = ld(T0, 1, &i);
  CHECK_EQ_INT(frit_kernel_store(C, U, 1, &i, bin(FRIT_BF_ADD, w, v)), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_store(C, W, 1, &i, old), FRIT_OK);
  /* equal statements at different points stay distinct: X[i] = 1; X[i] = 2; X[i] = 1 gives 1 */
  frit_tensor *X = frit_full_i(C, FRIT_I32, 1, &n, 9);
  for (int r = 0; r < 3; r++) CHECK_EQ_INT(frit_kernel_store(C, X, 1, &i, I64(r == 1 ? 2 : 1)), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_end(C), 4);
  frit_tensor *outs[4] = {written(0), written(1), written(2), written(3)};
  int32_t a[33], t[33], rt[33], ru[33], rw[33], rx[33];
  for (int k = 0; k < 33; k++) a[k] = k * 5 - 40, t[k] = 1000 + k;
  CHECK(run(outs, 4, (void *[]){a, t}, (void *[]){rt, ru, rw, rx}, mode));
  int bad = 0;
  for (int k = 0; k < 33; k++) bad += rt[k] != a[k] * 3 || ru[k] != a[k] * 4 || rw[k] != 1000 + k || rx[k] != 1;
  CHECK_EQ_INT(bad, 0);
  frit_ctx_free(C);
}

/* Atomics: tickets from atomic add's old value form a permutation; a histogram with duplicates;
 * min/max/or/xor/exchange per bin against C. */
static void test_atomics(int mode) {
  C = frit_ctx_new();
  int64_t n = 200, one = 1, nb = 7;
  frit_tensor *x = frit_input(C, "x", FRIT_I32, 1, &n);
  frit_tensor *ctr = frit_zeros(C, FRIT_I64, 1, &one), *tick = frit_zeros(C, FRIT_I64, 1, &n);
  frit_tensor *hist = frit_zeros(C, FRIT_F32, 1, &nb), *mn = frit_full_i(C, FRIT_I32, 1, &nb, 1 << 30);
  frit_tensor *mx = frit_full_i(C, FRIT_I32, 1, &nb, -(1 << 30)), *orr = frit_zeros(C, FRIT_I32, 1, &nb);
  frit_tensor *xr = frit_full_i(C, FRIT_I32, 1, &nb, 0x100), *i; /* not orr's value: a distinct target */
  CHECK_EQ_INT(frit_kernel_begin_static(C, "atomics", 1, &n, &i), FRIT_OK);
  frit_tensor *zero = I64(0), *xv = ld(x, 1, &i);
  frit_tensor *t = frit_kernel_atomic(C, FRIT_ATOMIC_ADD, ctr, 1, &zero, I64(1));
  CHECK_EQ_INT(frit_kernel_store(C, tick, 1, &i, t), FRIT_OK);
  frit_tensor *bbin = bin(FRIT_BF_REMAINDER, xv, I64(7));
  CHECK(frit_kernel_atomic(C, FRIT_ATOMIC_ADD, hist, 1, &bbin, F32(1.5)) != NULL);
  CHECK(frit_kernel_atomic(C, FRIT_ATOMIC_MIN, mn, 1, &bbin, xv) != NULL);
  CHECK(frit_kernel_atomic(C, FRIT_ATOMIC_MAX, mx, 1, &bbin, xv) != NULL);
  CHECK(frit_kernel_atomic(C, FRIT_ATOMIC_OR, orr, 1, &bbin, xv) != NULL);
  CHECK(frit_kernel_atomic(C, FRIT_ATOMIC_XOR, xr, 1, &bbin, xv) != NULL);
  CHECK_EQ_INT(frit_kernel_end(C), 7);
  frit_tensor *outs[7];
  for (int k = 0; k < 7; k++) outs[k] = written(k);
  int32_t xs[200], rmn[7], rmx[7], ror[7], rxr[7];
  int64_t rctr[1], rtick[200];
  float rh[7];
  for (int k = 0; k < 200; k++) xs[k] = (k * 7919) % 1000;
  CHECK(run(outs, 7, (void *[]){xs}, (void *[]){rctr, rtick, rh, rmn, rmx, ror, rxr}, mode));
  CHECK_EQ_INT(rctr[0], 200);
  bool seen[200] = {0};
  int bad = 0;
  for (int k = 0; k < 200; k++) {
    bad += rtick[k] < 0 || rtick[k] >= 200 || seen[rtick[k] < 0 || rtick[k] >= 200 ? 0 : rtick[k]];
    if (rtick[k] >= 0 && rtick[k] < 200) seen[rtick[k]] = true;
  }
  CHECK_EQ_INT(bad, 0);
  float h[7] = {0};
  int32_t m0[7], m1[7], o[7] = {0}, xo[7];
  for (int b = 0; b < 7; b++) m0[b] = 1 << 30, m1[b] = -(1 << 30), xo[b] = 0x100;
  for (int k = 0; k < 200; k++) {
    int b = xs[k] % 7;
    h[b] += 1.5f, o[b] |= xs[k], xo[b] ^= xs[k];
    if (xs[k] < m0[b]) m0[b] = xs[k];
    if (xs[k] > m1[b]) m1[b] = xs[k];
  }
  for (int b = 0; b < 7; b++) bad += rh[b] != h[b] || rmn[b] != m0[b] || rmx[b] != m1[b] || ror[b] != o[b] || rxr[b] != xo[b];
  CHECK_EQ_INT(bad, 0);
  frit_ctx_free(C);
}

/* A host loop around a kernel: for it in range(5): y[j] = y[j] * 2 + it (carried y). */
static void test_host_loop_kernel(int mode) {
  C = frit_ctx_new();
  int64_t n = 12;
  frit_tensor *y0 = frit_input(C, "y", FRIT_I64, 1, &n), *it, *y, *j, *res;
  CHECK_EQ_INT(frit_host_loop_begin(C, I64(0), I64(5), I64(1), 1, &y0, &it, &y), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_begin_static(C, "step", 1, &n, &j), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_store(C, y, 1, &j, bin(FRIT_BF_ADD, bin(FRIT_BF_MUL, ld(y, 1, &j), I64(2)), it)), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_end(C), 1);
  frit_tensor *ny = written(0);
  CHECK_EQ_INT(frit_host_loop_end(C, &ny, NULL, &res), FRIT_OK);
  int64_t in[12], out[12];
  for (int k = 0; k < 12; k++) in[k] = k - 3;
  CHECK(run(&res, 1, (void *[]){in}, (void *[]){out}, mode));
  int bad = 0;
  for (int k = 0; k < 12; k++) {
    int64_t v = in[k];
    for (int s = 0; s < 5; s++) v = v * 2 + s;
    bad += out[k] != v;
  }
  CHECK_EQ_INT(bad, 0);
  frit_ctx_free(C);
}

/* A kernel over a symbolic n reading a lazy expression (fused) and a reduction (a 0-d tensor
 * value), then a rank-0 kernel updating a 0-d tensor: y[i] = (x[i] * 2) + sum(x) + n;
 * o = o + y[n - 1]. */
static void test_symbolic_and_rank0(int mode) {
  C = frit_ctx_new();
  frit_uop *nv = frit_var(C, "n", 1, 1000);
  frit_tensor *x = frit_input_sym(C, "x", FRIT_F64, 1, &nv), *o = frit_input(C, "o", FRIT_F64, 0, NULL);
  frit_tensor *x2 = bin(FRIT_BF_MUL, x, frit_scalar_f(C, FRIT_F64, 2));
  frit_tensor *tot = frit_reduce(C, FRIT_RF_SUM, x, NULL, FRIT_ALL_AXES, 0, 0);
  frit_tensor *y = frit_full_sym(C, FRIT_F64, 1, &nv, 0), *i;
  CHECK_EQ_INT(frit_kernel_begin(C, "sym", 1, &nv, &i), FRIT_OK);
  frit_tensor *v = bin(FRIT_BF_ADD, bin(FRIT_BF_ADD, ld(x2, 1, &i), tot), frit_tensor_of(C, nv));
  CHECK_EQ_INT(frit_kernel_store(C, y, 1, &i, v), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_end(C), 1);
  frit_tensor *y1 = written(0);
  CHECK(y1 && frit_tensor_dim(y1, 0) == nv);
  CHECK_EQ_INT(frit_kernel_begin(C, "last", 0, NULL, NULL), FRIT_OK);
  frit_tensor *last = bin(FRIT_BF_SUB, frit_tensor_of(C, nv), I64(1));
  CHECK_EQ_INT(frit_kernel_store(C, o, 0, NULL, bin(FRIT_BF_ADD, ld(o, 0, NULL), ld(y1, 1, &last))), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_end(C), 1);
  frit_tensor *outs[2] = {y1, written(0)};
  frit_compile_opts op;
  memset(&op, 0, sizeof op);
  op.interpret = mode == 2;
  op.threads = mode == 1 ? 4 : 1;
  frit_program *p = frit_compile(C, outs, 2, &op);
  CHECK(p != NULL);
  if (!p) fprintf(stderr, "compile failed: %s\n", frit_error(C));
  for (int64_t n = 1; p && n <= 9; n += 4) {
    double xs[9], ov = 0.25, ys[9], on = -1, sum = 0;
    for (int k = 0; k < n; k++) xs[k] = k * 1.5 - 2, sum += xs[k];
    frit_binding b = {"n", n};
    CHECK_EQ_INT(frit_program_run(p, (void *[]){xs, &ov}, (void *[]){ys, &on}, &b, 1), FRIT_OK);
    int bad = 0;
    for (int k = 0; k < n; k++) bad += ys[k] != xs[k] * 2 + sum + (double)n;
    CHECK_EQ_INT(bad, 0);
    CHECK(on == 0.25 + (xs[n - 1] * 2 + sum + (double)n));
  }
  if (p) frit_program_free(p);
  frit_ctx_free(C);
}

int main(void) {
  for (int mode = 0; mode < 3; mode++) {
    test_scale(mode);
    test_dynamic_loops(mode);
    test_nested_control(mode);
    test_point_order(mode);
    test_atomics(mode);
    test_host_loop_kernel(mode);
    test_symbolic_and_rank0(mode);
  }
  CHECK_DONE();
}
