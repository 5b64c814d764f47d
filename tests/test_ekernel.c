/* Tests of the scheduling of explicit kernels (src/schedule/ekernel.c): kernel counts, copy vs
 * in-place versions, the lowered AST and the bounds policies, then whole programs (compiled and
 * interpreted) against plain C loops: RAW/WAR/WAW across kernels, two written tensors, fused and
 * realized reads, inner loops, atomics, CHECK errors. */
#include "check.h"
#include "ir/walk.h"
#include "schedule/schedule.h"

#include <stdlib.h>

static frit_ctx *C;

static frit_tensor *I64(int64_t v) { return frit_scalar_i(C, FRIT_I64, v); }
static frit_tensor *F32(double v) { return frit_scalar_f(C, FRIT_F32, v); }
static frit_tensor *bin(frit_bfunc f, frit_tensor *a, frit_tensor *b) { return frit_binary_t(C, f, a, b); }

/* The new version of the only tensor the kernel just closed wrote (or the k-th). */
static frit_tensor *version(int k) {
  frit_tensor *old = NULL, *nw = NULL;
  CHECK(frit_kernel_written(C, k, &old, &nw) == FRIT_OK);
  return nw;
}

static int count_op(frit_uop *ast, frit_op op) {
  size_t n;
  frit_uop **all = frit_walk_topo(ast, &n);
  int c = 0;
  for (size_t i = 0; all && i < n; i++) c += all[i]->op == op;
  free(all);
  return c;
}

static frit_schedule *sched(frit_tensor *const *outs, int n, int bounds) {
  frit_uop *o[8];
  for (int i = 0; i < n; i++) o[i] = frit_tensor_uop(outs[i]);
  frit_schedule *s = frit_schedule_build_bounds(C, o, n, 0, bounds);
  if (!s) fprintf(stderr, "schedule failed: %s\n", frit_error(C));
  return s;
}

/* kernel "inc" over (n): t[i] = t[i] + src[i]; returns the new version of t */
static frit_tensor *k_add(const char *name, frit_tensor *t, frit_tensor *src, int64_t n) {
  frit_tensor *i;
  CHECK(frit_kernel_begin_static(C, name, 1, &n, &i) == FRIT_OK);
  frit_tensor *v = frit_kernel_load(C, t, 1, &i);
  CHECK(frit_kernel_store(C, t, 1, &i, bin(FRIT_BF_ADD, v, frit_kernel_load(C, src, 1, &i))) == FRIT_OK);
  CHECK_EQ_INT(frit_kernel_end(C), 1);
  return version(0);
}

/* ---------- scheduling ---------- */

static void test_versions(void) {
  C = frit_ctx_new();
  int64_t n = 8;
  frit_tensor *x = frit_input(C, "x", FRIT_F32, 1, &n);
  frit_tensor *y = bin(FRIT_BF_MUL, x, F32(2)); /* lazy: computed straight into the version */
  frit_tensor *y1 = k_add("first", y, x, n);
  frit_schedule *s = sched(&y1, 1, FRIT_BOUNDS_CLAMP);
  CHECK(s && s->nkernels == 2);
  if (s && s->nkernels == 2) {
    CHECK(!s->kernels[0].structured && s->kernels[1].structured);
    CHECK_EQ_STR(s->kernels[1].name, "k1_first");
    CHECK_EQ_STR(s->kernels[1].ops, "first");
    CHECK(s->kernels[0].param_buf[0] == s->output_buf[0] && s->kernels[1].param_buf[0] == s->output_buf[0]);
    CHECK(s->kernels[1].param_written[0] && !s->kernels[1].param_written[1]);
    CHECK_EQ_INT(count_op(s->kernels[1].ast, FRIT_OP_SEQ), 1);
    CHECK_EQ_INT(s->err_buf, -1);
  }
  /* a chain of versions: the middle one has no other reader, so the second kernel works in
   * place (in the output buffer from the start): 3 kernels, no copy */
  frit_tensor *y2 = k_add("second", y1, x, n);
  s = sched(&y2, 1, FRIT_BOUNDS_CLAMP);
  CHECK(s && s->nkernels == 3);
  if (s && s->nkernels == 3)
    for (int k = 0; k < 3; k++) CHECK(s->kernels[k].param_buf[0] == s->output_buf[0]);
  /* both versions wanted: the second kernel writes a copy */
  frit_tensor *both[2] = {y1, y2};
  s = sched(both, 2, FRIT_BOUNDS_CLAMP);
  CHECK(s && s->nkernels == 4);
  if (s && s->nkernels == 4) {
    CHECK_EQ_STR(s->kernels[2].ops, "copy");
    CHECK(s->kernels[2].param_buf[0] == s->output_buf[1] && s->kernels[3].param_buf[0] == s->output_buf[1]);
    CHECK(s->kernels[1].param_buf[0] == s->output_buf[0]);
  }
  /* a version read by a fused expression elsewhere is copied before it is overwritten */
  frit_tensor *y2b = k_add("third", y1, x, n);
  frit_tensor *e = bin(FRIT_BF_ADD, y1, F32(1));
  frit_tensor *outs2[2] = {e, y2b};
  s = sched(outs2, 2, FRIT_BOUNDS_CLAMP);
  CHECK(s && s->nkernels == 5); /* y, first (into a temp), e, copy, third */
  /* ... unless its kernel runs first (node order): e2, made before the kernel, is computed
   * before the kernel overwrites y1 in place */
  frit_tensor *e2 = bin(FRIT_BF_MUL, y1, F32(3));
  frit_tensor *y2c = k_add("fourth", y1, x, n);
  frit_tensor *outs3[2] = {e2, y2c};
  s = sched(outs3, 2, FRIT_BOUNDS_CLAMP);
  CHECK(s && s->nkernels == 4); /* y, first, e2, fourth (in place) */
  if (s && s->nkernels == 4) CHECK(s->kernels[3].param_buf[0] == s->output_buf[1]);
  for (int interp = 0; interp < 2; interp++) {
    frit_compile_opts o;
    memset(&o, 0, sizeof o);
    o.interpret = interp;
    frit_program *p = frit_compile(C, outs3, 2, &o);
    float xin[8], o0[8], o1[8];
    for (int k = 0; k < 8; k++) xin[k] = (float)(k * k - 5);
    void *ins[1] = {xin}, *op[2] = {o0, o1};
    CHECK(p && frit_program_run(p, ins, op, NULL, 0) == FRIT_OK);
    for (int k = 0; k < 8; k++) {
      CHECK(o0[k] == (xin[k] * 2 + xin[k]) * 3);
      CHECK(o1[k] == xin[k] * 2 + xin[k] + xin[k]);
    }
  }
  /* a sum of the version, read by the next kernel, runs before it: in place too */
  frit_tensor *sum = frit_reduce(C, FRIT_RF_SUM, y1, NULL, FRIT_ALL_AXES, 0, 0), *ii;
  CHECK(frit_kernel_begin_static(C, "center", 1, &n, &ii) == FRIT_OK);
  frit_kernel_store(C, y1, 1, &ii, bin(FRIT_BF_SUB, frit_kernel_load(C, y1, 1, &ii), sum));
  CHECK_EQ_INT(frit_kernel_end(C), 1);
  frit_tensor *y2d = version(0);
  s = sched(&y2d, 1, FRIT_BOUNDS_CLAMP);
  CHECK(s && s->nkernels == 4); /* y, first, sum, center */
  /* a kernel storing every element of its own point before reading needs no copy of the old
   * value; reading first, storing under an if, or a shifted store do */
  for (int variant = 0; variant < 4; variant++) {
    frit_tensor *out = frit_zeros(C, FRIT_F32, 1, &n), *iv;
    CHECK(frit_kernel_begin_static(C, "fill", 1, &n, &iv) == FRIT_OK);
    frit_tensor *val = bin(FRIT_BF_MUL, frit_kernel_load(C, x, 1, &iv), F32(2)), *at = iv;
    if (variant == 1) val = bin(FRIT_BF_ADD, val, frit_kernel_load(C, out, 1, &iv));
    if (variant == 2) frit_kernel_if_begin(C, bin(FRIT_BF_LT, iv, I64(4)));
    if (variant == 3) at = bin(FRIT_BF_SUB, I64(7), iv);
    frit_kernel_store(C, out, 1, &at, val);
    if (variant == 2) frit_kernel_if_end(C);
    frit_kernel_store(C, out, 1, &at, bin(FRIT_BF_ADD, frit_kernel_load(C, out, 1, &at), F32(1)));
    CHECK_EQ_INT(frit_kernel_end(C), 1);
    frit_tensor *o1 = version(0);
    s = sched(&o1, 1, FRIT_BOUNDS_CLAMP);
    CHECK(s && s->nkernels == (variant == 0 ? 1 : 2));
    frit_compile_opts o;
    memset(&o, 0, sizeof o);
    o.interpret = 1;
    frit_program *p = frit_compile(C, &o1, 1, &o);
    float xin[8], got[8];
    for (int k = 0; k < 8; k++) xin[k] = (float)(3 * k - 7);
    void *ins[1] = {xin}, *op[1] = {got};
    CHECK(p && frit_program_run(p, ins, op, NULL, 0) == FRIT_OK);
    for (int k = 0; k < 8; k++) {
      float w = variant == 2 && k >= 4 ? 0 : xin[variant == 3 ? 7 - k : k] * 2;
      CHECK(got[k] == w + 1);
    }
  }
  /* an input is never written in place */
  frit_tensor *x1 = k_add("ontox", x, x, n);
  s = sched(&x1, 1, FRIT_BOUNDS_CLAMP);
  CHECK(s && s->nkernels == 2);
  for (int k = 0; s && k < s->nkernels; k++)
    for (int p = 0; p < s->kernels[k].nparams; p++)
      if (s->bufs[s->kernels[k].param_buf[p]].kind == FRIT_BUF_INPUT) CHECK(!s->kernels[k].param_written[p]);
  /* an unnamed kernel */
  frit_tensor *x2 = k_add(NULL, x, x, n);
  s = sched(&x2, 1, FRIT_BOUNDS_CLAMP);
  if (s && s->nkernels == 2) CHECK_EQ_STR(s->kernels[1].name, "k1_kernel");
  frit_ctx_free(C);
}

static void test_reads(void) {
  C = frit_ctx_new();
  int64_t n = 64;
  frit_tensor *x = frit_input(C, "x", FRIT_F32, 1, &n);
  frit_tensor *lazy = bin(FRIT_BF_ADD, bin(FRIT_BF_MUL, x, F32(3)), F32(1));
  frit_tensor *z = frit_zeros(C, FRIT_F32, 1, &n);
  frit_tensor *z1 = k_add("lazy", z, lazy, n); /* the expression fuses into the kernel */
  frit_schedule *s = sched(&z1, 1, FRIT_BOUNDS_CLAMP);
  CHECK(s && s->nkernels == 2);
  if (s && s->nkernels == 2) CHECK_EQ_INT(s->kernels[1].nparams, 2); /* the version and x */
  /* a sum read as a scalar is realized first */
  frit_tensor *sum = frit_reduce(C, FRIT_RF_SUM, x, NULL, FRIT_ALL_AXES, 0, 0);
  frit_tensor *i;
  CHECK(frit_kernel_begin_static(C, "center", 1, &n, &i) == FRIT_OK);
  frit_tensor *v = frit_kernel_load(C, x, 1, &i);
  CHECK(frit_kernel_store(C, z, 1, &i, bin(FRIT_BF_SUB, v, sum)) == FRIT_OK);
  CHECK_EQ_INT(frit_kernel_end(C), 1);
  frit_tensor *z2 = version(0);
  s = sched(&z2, 1, FRIT_BOUNDS_CLAMP);
  CHECK(s && s->nkernels == 2); /* the sum, the kernel (which stores all of z first: no zeros) */
  if (s && s->nkernels == 2) CHECK(!s->kernels[0].structured && s->kernels[1].structured);
  /* a kernel-level value outside its kernel is an error naming it */
  frit_uop *r = frit_range(C, frit_const_int(C, FRIT_I64, 4), 0, FRIT_AXIS_GLOBAL);
  frit_uop *bad = frit_binary(C, FRIT_OP_ADD, r, frit_const_int(C, FRIT_I64, 1));
  CHECK(frit_schedule_build(C, &bad, 1, 0) == NULL);
  CHECK(strstr(frit_error(C), "RANGE") != NULL);
  frit_ctx_free(C);
}

static void test_bounds_ast(void) {
  C = frit_ctx_new();
  int64_t n = 8;
  frit_tensor *x = frit_input(C, "x", FRIT_F32, 1, &n);
  frit_tensor *z = frit_zeros(C, FRIT_F32, 1, &n);
  frit_tensor *i;
  CHECK(frit_kernel_begin_static(C, "shift", 1, &n, &i) == FRIT_OK);
  frit_tensor *a = frit_kernel_load(C, x, 1, &i);                                  /* in range */
  frit_tensor *ip = bin(FRIT_BF_ADD, i, I64(1));
  frit_tensor *b = frit_kernel_load(C, x, 1, &ip);                                 /* may be n */
  CHECK(frit_kernel_store(C, z, 1, &i, bin(FRIT_BF_ADD, a, b)) == FRIT_OK);
  CHECK_EQ_INT(frit_kernel_end(C), 1);
  frit_tensor *z1 = version(0);
  frit_schedule *s = sched(&z1, 1, FRIT_BOUNDS_CLAMP);
  CHECK(s && s->nkernels == 1);
  if (s && s->nkernels == 1) CHECK_EQ_INT(count_op(s->kernels[0].ast, FRIT_OP_MIN), 1);
  s = sched(&z1, 1, FRIT_BOUNDS_UNCHECKED);
  if (s && s->nkernels == 1) CHECK_EQ_INT(count_op(s->kernels[0].ast, FRIT_OP_MIN), 0);
  s = sched(&z1, 1, FRIT_BOUNDS_CHECK);
  CHECK(s && s->err_buf >= 0 && s->nerr_msgs == 1 && s->nkernels == 1);
  if (s && s->nerr_msgs == 1 && s->nkernels == 1) {
    CHECK_EQ_STR(s->err_msgs[0], "kernel k0_shift: index out of range on axis 0 of tensor 'x' (dim 8)");
    CHECK_EQ_INT(s->bufs[s->err_buf].dtype, FRIT_I32);
    CHECK_EQ_INT(count_op(s->kernels[0].ast, FRIT_OP_MIN), 1);
    int w = 0;
    for (int p = 0; p < s->kernels[0].nparams; p++) w += s->kernels[0].param_buf[p] == s->err_buf && s->kernels[0].param_written[p];
    CHECK_EQ_INT(w, 1);
  }
  frit_ctx_free(C);
}

/* ---------- whole programs against C loops ---------- */

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static int64_t rnd(int64_t lo, int64_t hi) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return lo + (int64_t)(rng % (uint64_t)(hi - lo));
}

/* mode 0: compiled, 1 thread; 1: compiled, 4 threads; 2: interpreted; 3: compiled, no fusion */
static frit_program *compile_mode(frit_tensor **outs, int n, int mode, int bounds) {
  frit_compile_opts o;
  memset(&o, 0, sizeof o);
  o.interpret = mode == 2;
  o.no_fusion = mode == 3;
  o.threads = mode == 1 ? 4 : 1;
  o.bounds = bounds;
  frit_program *p = frit_compile(C, outs, n, &o);
  if (!p) fprintf(stderr, "compile (mode %d) failed: %s\n", mode, frit_error(C));
  CHECK(p != NULL);
  return p;
}

static bool run_ok(frit_program *p, void **ins, void **outs) {
  frit_status st = frit_program_run(p, ins, outs, NULL, 0);
  if (st != FRIT_OK) fprintf(stderr, "run failed: %s\n", frit_error(C));
  return st == FRIT_OK;
}

static int count_bad_f(const float *a, const float *b, int64_t n) {
  int bad = 0;
  for (int64_t i = 0; i < n; i++) bad += a[i] != b[i];
  return bad;
}

/* RAW, WAR and WAW across kernels on one tensor's versions. */
static void test_hazards(void) {
  C = frit_ctx_new();
  enum { N = 100 };
  int64_t n = N;
  frit_tensor *x = frit_input(C, "x", FRIT_F32, 1, &n);
  frit_tensor *t = frit_zeros(C, FRIT_F32, 1, &n), *i;
  CHECK(frit_kernel_begin_static(C, "write", 1, &n, &i) == FRIT_OK);
  frit_kernel_store(C, t, 1, &i, bin(FRIT_BF_MUL, frit_kernel_load(C, x, 1, &i), F32(2)));
  frit_kernel_end(C);
  frit_tensor *t1 = version(0);
  frit_tensor *u = frit_zeros(C, FRIT_F32, 1, &n);
  CHECK(frit_kernel_begin_static(C, "reverse", 1, &n, &i) == FRIT_OK); /* RAW: reads t1 */
  frit_tensor *ri = bin(FRIT_BF_SUB, I64(N - 1), i);
  frit_kernel_store(C, u, 1, &i, bin(FRIT_BF_ADD, frit_kernel_load(C, t1, 1, &ri), F32(1)));
  frit_kernel_end(C);
  frit_tensor *u1 = version(0);
  frit_tensor *e = bin(FRIT_BF_ADD, t1, F32(1)); /* reads the old version ... */
  CHECK(frit_kernel_begin_static(C, "over", 1, &n, &i) == FRIT_OK); /* ... that this overwrites (WAR) */
  frit_kernel_store(C, t1, 1, &i, bin(FRIT_BF_MUL, frit_kernel_load(C, t1, 1, &i), F32(3)));
  frit_kernel_end(C);
  frit_tensor *t2 = version(0);
  CHECK(frit_kernel_begin_static(C, "again", 1, &n, &i) == FRIT_OK); /* WAW on the same version */
  frit_kernel_store(C, t1, 1, &i, F32(-1));
  frit_kernel_end(C);
  frit_tensor *t3 = version(0);
  /* a kernel point reading back what it stored (RAW within a point) */
  CHECK(frit_kernel_begin_static(C, "inpoint", 1, &n, &i) == FRIT_OK);
  frit_kernel_store(C, t3, 1, &i, frit_kernel_load(C, x, 1, &i));
  frit_kernel_store(C, t3, 1, &i, bin(FRIT_BF_ADD, frit_kernel_load(C, t3, 1, &i), F32(5)));
  frit_kernel_end(C);
  frit_tensor *t4 = version(0);
  frit_tensor *outs[6] = {u1, e, t2, t3, t1, t4};
  float xin[N], o[6][N], want[6][N];
  for (int k = 0; k < N; k++) {
    xin[k] = (float)rnd(-50, 50);
    want[4][k] = xin[k] * 2;
    want[1][k] = want[4][k] + 1;
    want[2][k] = want[4][k] * 3;
    want[3][k] = -1;
    want[5][k] = xin[k] + 5;
  }
  for (int k = 0; k < N; k++) want[0][k] = want[4][N - 1 - k] + 1;
  for (int mode = 0; mode < 4; mode++) {
    frit_program *p = compile_mode(outs, 6, mode, FRIT_BOUNDS_CLAMP);
    if (!p) continue;
    void *ins[1] = {xin}, *op[6] = {o[0], o[1], o[2], o[3], o[4], o[5]};
    memset(o, 0x7f, sizeof o);
    if (run_ok(p, ins, op))
      for (int r = 0; r < 6; r++) {
        int bad = count_bad_f(o[r], want[r], N);
        if (bad) fprintf(stderr, "hazards mode %d output %d: %d wrong\n", mode, r, bad);
        CHECK_EQ_INT(bad, 0);
      }
  }
  frit_ctx_free(C);
}

/* A kernel writing two tensors; a transposed 2-D write; an inner loop with a variable. */
static void test_two_and_loops(void) {
  C = frit_ctx_new();
  enum { M = 5, K = 7 };
  int64_t ad[2] = {M, K}, td[2] = {K, M}, m = M;
  frit_tensor *A = frit_input(C, "A", FRIT_F32, 2, ad);
  frit_tensor *T = frit_zeros(C, FRIT_F32, 2, td), *rows = frit_full(C, FRIT_F32, 1, &m, 100), *ix[2];
  CHECK(frit_kernel_begin_static(C, "both", 2, ad, ix) == FRIT_OK);
  frit_tensor *tix[2] = {ix[1], ix[0]};
  frit_kernel_store(C, T, 2, tix, frit_kernel_load(C, A, 2, ix));
  frit_kernel_store(C, rows, 1, &ix[0], F32(0)); /* same value from every j: no race */
  CHECK_EQ_INT(frit_kernel_end(C), 2);
  frit_tensor *T1 = version(0), *rows1 = version(1);
  frit_tensor *i, *j;
  CHECK(frit_kernel_begin_static(C, "rowsum", 1, &m, &i) == FRIT_OK);
  int acc = frit_kernel_var(C, FRIT_F32, F32(0));
  CHECK(acc >= 0);
  CHECK(frit_kernel_loop_begin(C, I64(0), I64(K), I64(1), &j) == FRIT_OK);
  frit_tensor *aij[2] = {i, j};
  frit_tensor *w = frit_astype(C, bin(FRIT_BF_ADD, j, I64(1)), FRIT_F32);
  frit_kernel_var_set(C, acc, bin(FRIT_BF_ADD, frit_kernel_var_get(C, acc), bin(FRIT_BF_MUL, frit_kernel_load(C, A, 2, aij), w)));
  CHECK(frit_kernel_loop_end(C) == FRIT_OK);
  frit_kernel_store(C, rows1, 1, &i, bin(FRIT_BF_ADD, frit_kernel_load(C, rows1, 1, &i), frit_kernel_var_get(C, acc)));
  CHECK_EQ_INT(frit_kernel_end(C), 1);
  frit_tensor *rows2 = version(0);
  frit_tensor *outs[2] = {T1, rows2};
  float a[M * K], o0[K * M], o1[M], w0[K * M], w1[M];
  for (int r = 0; r < M; r++) {
    w1[r] = 0;
    for (int c = 0; c < K; c++) {
      a[r * K + c] = (float)rnd(-9, 9);
      w0[c * M + r] = a[r * K + c];
      w1[r] += a[r * K + c] * (float)(c + 1);
    }
  }
  for (int mode = 0; mode < 3; mode++) {
    frit_program *p = compile_mode(outs, 2, mode, FRIT_BOUNDS_CLAMP);
    if (!p) continue;
    CHECK_EQ_INT(frit_program_num_kernels(p), 4); /* T's zeros, rows' fill, both, rowsum */
    void *ins[1] = {a}, *op[2] = {o0, o1};
    if (run_ok(p, ins, op)) {
      CHECK_EQ_INT(count_bad_f(o0, w0, K * M), 0);
      CHECK_EQ_INT(count_bad_f(o1, w1, M), 0);
    }
  }
  frit_ctx_free(C);
}

/* Atomic histogram with clamped indices; a clamped shifted read; the CHECK error. */
static void test_atomics_bounds(void) {
  C = frit_ctx_new();
  enum { N = 3000, B = 10 };
  int64_t n = N, nb = B;
  frit_tensor *idx = frit_input(C, "idx", FRIT_I64, 1, &n);
  frit_tensor *h = frit_zeros(C, FRIT_I32, 1, &nb), *i;
  CHECK(frit_kernel_begin_static(C, "hist", 1, &n, &i) == FRIT_OK);
  frit_tensor *b = frit_kernel_load(C, idx, 1, &i);
  CHECK(frit_kernel_atomic(C, FRIT_ATOMIC_ADD, h, 1, &b, frit_scalar_i(C, FRIT_I32, 1)) != NULL);
  frit_kernel_end(C);
  frit_tensor *h1 = version(0);
  int64_t iv[N];
  int32_t want[B] = {0}, got[B];
  for (int k = 0; k < N; k++) {
    iv[k] = rnd(-3, B + 3);
    want[iv[k] < 0 ? 0 : iv[k] >= B ? B - 1 : iv[k]]++;
  }
  for (int mode = 0; mode < 3; mode++) {
    frit_program *p = compile_mode(&h1, 1, mode, FRIT_BOUNDS_CLAMP);
    void *ins[1] = {iv}, *op[1] = {got};
    if (p && run_ok(p, ins, op)) CHECK(memcmp(got, want, sizeof want) == 0);
  }
  /* x[i + 3] reads past the end: clamped by default, an error under CHECK */
  int64_t m = 8;
  frit_tensor *x = frit_input(C, "x", FRIT_F32, 1, &m), *z = frit_zeros(C, FRIT_F32, 1, &m);
  CHECK(frit_kernel_begin_static(C, "shift", 1, &m, &i) == FRIT_OK);
  frit_tensor *ip = bin(FRIT_BF_ADD, i, I64(3));
  frit_kernel_store(C, z, 1, &i, frit_kernel_load(C, x, 1, &ip));
  frit_kernel_end(C);
  frit_tensor *z1 = version(0);
  float xin[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8], wz[8];
  for (int k = 0; k < 8; k++) wz[k] = xin[k + 3 < 8 ? k + 3 : 7];
  for (int mode = 0; mode < 3; mode++) {
    frit_program *p = compile_mode(&z1, 1, mode, FRIT_BOUNDS_CLAMP);
    void *ins[1] = {xin}, *op[1] = {out};
    if (p && run_ok(p, ins, op)) CHECK_EQ_INT(count_bad_f(out, wz, 8), 0);
    p = compile_mode(&z1, 1, mode, FRIT_BOUNDS_CHECK);
    if (!p) continue;
    frit_status st = frit_program_run(p, ins, op, NULL, 0);
    CHECK_EQ_INT(st, FRIT_ERR_RUNTIME);
    CHECK(strstr(frit_error(C), "kernel k0_shift: index out of range on axis 0 of tensor 'x' (dim 8)") != NULL);
    if (!strstr(frit_error(C), "out of range")) fprintf(stderr, "mode %d: %s\n", mode, frit_error(C));
  }
  /* CHECK with every access in range runs, also twice (the error buffer is zeroed per run) */
  for (int mode = 0; mode < 3; mode++) {
    frit_program *p = compile_mode(&h1, 1, mode, FRIT_BOUNDS_CHECK);
    int64_t ok[N];
    for (int k = 0; k < N; k++) ok[k] = k % B;
    void *ins[1] = {ok}, *op[1] = {got};
    CHECK(p && run_ok(p, ins, op) && run_ok(p, ins, op));
    CHECK_EQ_INT(got[3], N / B);
  }
  frit_ctx_free(C);
}

/* Symbolic sizes (clamps against symbolic dims), a rank-0 kernel with a loop, a heavy 1-D read,
 * and a written 0-d tensor also read as a whole value (no in place then). */
static void test_symbolic_rank0(void) {
  C = frit_ctx_new();
  frit_uop *nv = frit_var(C, "n", 1, 1000);
  int64_t rd[2] = {4, 6};
  frit_tensor *x = frit_input_sym(C, "x", FRIT_F32, 1, &nv), *R = frit_input(C, "R", FRIT_F32, 2, rd);
  frit_tensor *z = frit_full_sym(C, FRIT_F32, 1, &nv, 0), *i;
  CHECK(frit_kernel_begin(C, "nbr", 1, &nv, &i) == FRIT_OK);
  frit_tensor *l = bin(FRIT_BF_SUB, i, I64(1)), *r = bin(FRIT_BF_ADD, i, I64(1));
  frit_tensor *s3 = bin(FRIT_BF_ADD, frit_kernel_load(C, x, 1, &l), frit_kernel_load(C, x, 1, &r));
  frit_kernel_store(C, z, 1, &i, bin(FRIT_BF_ADD, s3, frit_kernel_load(C, x, 1, &i)));
  frit_kernel_end(C);
  frit_tensor *z1 = version(0);
  /* rank 0: total = sum_j rowmax(R)[j] * (j + 1), with the row maxima realized first */
  int ax = 1;
  frit_tensor *mx = frit_reduce(C, FRIT_RF_MAX, R, &ax, 1, 0, 0);
  frit_tensor *tot = frit_scalar_f(C, FRIT_F32, 0.5), *j;
  CHECK(frit_kernel_begin_static(C, "single", 0, NULL, NULL) == FRIT_OK);
  CHECK(frit_kernel_loop_begin(C, I64(0), I64(4), I64(1), &j) == FRIT_OK);
  frit_tensor *w = frit_astype(C, bin(FRIT_BF_ADD, j, I64(1)), FRIT_F32);
  frit_tensor *cur = frit_kernel_load(C, tot, 0, NULL);
  frit_kernel_store(C, tot, 0, NULL, bin(FRIT_BF_ADD, cur, bin(FRIT_BF_MUL, frit_kernel_load(C, mx, 1, &j), w)));
  CHECK(frit_kernel_loop_end(C) == FRIT_OK);
  /* tot as a whole value is the old version (0.5), not what this kernel stored */
  frit_tensor *cur2 = frit_kernel_load(C, tot, 0, NULL);
  frit_kernel_store(C, tot, 0, NULL, bin(FRIT_BF_ADD, cur2, tot));
  frit_kernel_end(C);
  frit_tensor *tot1 = version(0);
  frit_tensor *outs[2] = {z1, tot1};
  enum { NN = 37 };
  float xin[NN], o0[NN], w0[NN], rin[24], o1, w1 = 0.5f;
  for (int k = 0; k < NN; k++) xin[k] = (float)rnd(-20, 20);
  for (int k = 0; k < NN; k++) w0[k] = xin[k > 0 ? k - 1 : 0] + xin[k + 1 < NN ? k + 1 : NN - 1] + xin[k];
  for (int k = 0; k < 24; k++) rin[k] = (float)rnd(-20, 20);
  for (int rr = 0; rr < 4; rr++) {
    float m = rin[rr * 6];
    for (int c = 1; c < 6; c++) m = rin[rr * 6 + c] > m ? rin[rr * 6 + c] : m;
    w1 += m * (float)(rr + 1);
  }
  w1 += 0.5f;
  frit_binding b = {"n", NN};
  for (int mode = 0; mode < 4; mode++) {
    frit_program *p = compile_mode(outs, 2, mode, mode == 1 ? FRIT_BOUNDS_CHECK : FRIT_BOUNDS_CLAMP);
    if (!p) continue;
    void *ins[2] = {xin, rin}, *op[2] = {o0, &o1};
    frit_status st = frit_program_run(p, ins, op, &b, 1);
    if (mode == 1) { /* x[i - 1] at i = 0 */
      CHECK_EQ_INT(st, FRIT_ERR_RUNTIME);
      CHECK(strstr(frit_error(C), "kernel k0_nbr: index out of range on axis 0 of tensor 'x' (dim n)") != NULL);
      continue;
    }
    CHECK_EQ_INT(st, FRIT_OK);
    if (st != FRIT_OK) fprintf(stderr, "run: %s\n", frit_error(C));
    CHECK_EQ_INT(count_bad_f(o0, w0, NN), 0);
    CHECK(o1 == w1);
  }
  frit_ctx_free(C);
}

/* Random programs over versions of 1-D i32 tensors: kernels updating one or two tensors point
 * by point (reading others anywhere, sums as scalars), fused expressions of any version, random
 * outputs. Versions are values: a C array per pool entry is the oracle, whatever the scheduler
 * decides about copies and in-place writes. */
enum { FN = 16, FPOOL = 24 };
static void fuzz_versions(int seed) {
  C = frit_ctx_new();
  rng = 0x1234567ull + (uint64_t)seed * 7919;
  int64_t n = FN;
  frit_tensor *pool[FPOOL];
  int32_t val[FPOOL][FN], xin[FN];
  int np = 0;
  pool[np] = frit_input(C, "x", FRIT_I32, 1, &n);
  for (int k = 0; k < FN; k++) val[np][k] = xin[k] = (int32_t)rnd(-9, 9);
  np++;
  pool[np] = frit_zeros(C, FRIT_I32, 1, &n);
  memset(val[np++], 0, sizeof val[0]);
  while (np < FPOOL - 2) {
    int a = (int)rnd(0, np), b = (int)rnd(0, np), kind = (int)rnd(0, 5);
    int32_t ca = (int32_t)rnd(-3, 4), sh = (int32_t)rnd(0, FN);
    if (kind == 0) { /* fused: a * ca + b */
      pool[np] = bin(FRIT_BF_ADD, bin(FRIT_BF_MUL, pool[a], frit_scalar_i(C, FRIT_I32, ca)), pool[b]);
      for (int k = 0; k < FN; k++) val[np][k] = val[a][k] * ca + val[b][k];
      np++;
      continue;
    }
    /* kernel: a[i] = a[i] * ca + b[(i + sh) % n] (+ sum(b) when kind == 2); kind 3 also writes
     * c[i] = a_new[i] - 1 for another tensor c; kind 4 overwrites: a[i] = b[(i + sh) % n] * ca */
    int c = (int)rnd(0, np);
    if (kind == 3 && c == a) c = (a + 1) % np;
    if (b == a) b = (a + 1) % np; /* reading the tensor being written elsewhere would race */
    if (kind == 3 && b == c) kind = 1;
    frit_tensor *i;
    CHECK(frit_kernel_begin_static(C, "f", 1, &n, &i) == FRIT_OK);
    frit_tensor *j = bin(FRIT_BF_REMAINDER, bin(FRIT_BF_ADD, i, I64(sh)), I64(FN));
    frit_tensor *v = kind == 4 ? bin(FRIT_BF_MUL, frit_kernel_load(C, pool[b], 1, &j), frit_scalar_i(C, FRIT_I32, ca))
                   : bin(FRIT_BF_ADD, bin(FRIT_BF_MUL, frit_kernel_load(C, pool[a], 1, &i), frit_scalar_i(C, FRIT_I32, ca)),
                         frit_kernel_load(C, pool[b], 1, &j));
    int32_t sb = 0;
    for (int k = 0; k < FN; k++) sb += val[b][k];
    if (kind == 2) v = bin(FRIT_BF_ADD, v, frit_reduce(C, FRIT_RF_SUM, pool[b], NULL, FRIT_ALL_AXES, 0, 0));
    frit_kernel_store(C, pool[a], 1, &i, v);
    if (kind == 3) frit_kernel_store(C, pool[c], 1, &i, bin(FRIT_BF_SUB, frit_kernel_load(C, pool[a], 1, &i), frit_scalar_i(C, FRIT_I32, 1)));
    int nw = frit_kernel_end(C);
    CHECK_EQ_INT(nw, kind == 3 ? 2 : 1);
    if (nw < 1) break;
    for (int k = 0; k < FN; k++) {
      val[np][k] = kind == 4 ? val[b][(k + sh) % FN] * ca : val[a][k] * ca + val[b][(k + sh) % FN] + (kind == 2 ? sb : 0);
      if (kind == 3) val[np + 1][k] = val[np][k] - 1;
    }
    pool[np] = version(0);
    if (kind == 3) pool[np + 1] = version(1);
    np += kind == 3 ? 2 : 1;
  }
  int nout = (int)rnd(1, 4), oi[3];
  frit_tensor *outs[3];
  for (int k = 0; k < nout; k++) outs[k] = pool[oi[k] = (int)rnd(2, np)];
  for (int mode = 0; mode < 4; mode++) {
    if (mode != 2 && seed % 8 != mode) continue; /* the interpreter always, compiled now and then */
    frit_program *p = compile_mode(outs, nout, mode, FRIT_BOUNDS_CLAMP);
    int32_t o[3][FN];
    void *ins[1] = {xin}, *op[3] = {o[0], o[1], o[2]};
    if (!p || !run_ok(p, ins, op)) continue;
    for (int k = 0; k < nout; k++) {
      bool same = memcmp(o[k], val[oi[k]], sizeof o[k]) == 0;
      if (!same) fprintf(stderr, "fuzz seed %d mode %d: output %d (pool %d) differs\n", seed, mode, k, oi[k]);
      CHECK(same);
    }
  }
  frit_ctx_free(C);
}

/* A written tensor whose dim may be 0 (symbolic, lower bound 0): accesses are gated on the dim
 * being nonzero (no element to clamp into); reads of it give 0 there. */
static void test_maybe_empty(void) {
  C = frit_ctx_new();
  enum { N = 200 };
  frit_uop *bv = frit_var(C, "nb", 0, 64);
  int64_t n = N;
  frit_tensor *idx = frit_input(C, "idx", FRIT_I64, 1, &n);
  frit_tensor *h = frit_full_sym(C, FRIT_I32, 1, &bv, 0), *got_old = frit_zeros(C, FRIT_I32, 1, &n), *i;
  CHECK(frit_kernel_begin_static(C, "hist", 1, &n, &i) == FRIT_OK);
  frit_tensor *b = frit_kernel_load(C, idx, 1, &i);
  frit_tensor *old = frit_kernel_atomic(C, FRIT_ATOMIC_ADD, h, 1, &b, frit_scalar_i(C, FRIT_I32, 1));
  frit_kernel_store(C, got_old, 1, &i, bin(FRIT_BF_MUL, old, frit_scalar_i(C, FRIT_I32, 0))); /* 0 either way */
  frit_tensor *z = frit_scalar_i(C, FRIT_I64, 0);
  frit_tensor *first = frit_kernel_load(C, h, 1, &z); /* gated read: 0 when nb == 0 */
  frit_kernel_store(C, got_old, 1, &i, bin(FRIT_BF_ADD, frit_kernel_load(C, got_old, 1, &i),
                                           bin(FRIT_BF_MUL, first, frit_scalar_i(C, FRIT_I32, 0))));
  CHECK_EQ_INT(frit_kernel_end(C), 2);
  frit_tensor *outs[2] = {version(0), version(1)};
  int64_t iv[N];
  for (int k = 0; k < N; k++) iv[k] = rnd(-2, 9);
  for (int nbv = 0; nbv <= 7; nbv += 7) {
    int32_t want[8] = {0}, got[8] = {-5, -5, -5, -5, -5, -5, -5, -5}, g2[N];
    for (int k = 0; k < N && nbv; k++) want[iv[k] < 0 ? 0 : iv[k] >= nbv ? nbv - 1 : iv[k]]++;
    frit_binding bd = {"nb", nbv};
    for (int mode = 0; mode < 3; mode++) {
      frit_program *p = compile_mode(outs, 2, mode, FRIT_BOUNDS_CLAMP);
      void *ins[1] = {iv}, *op[2] = {got, g2};
      if (!p || frit_program_run(p, ins, op, &bd, 1) != FRIT_OK) {
        fprintf(stderr, "maybe_empty nb=%d mode %d: %s\n", nbv, mode, frit_error(C));
        CHECK(0);
        continue;
      }
      CHECK(memcmp(got, want, (size_t)nbv * sizeof *got) == 0);
      CHECK(nbv || got[0] == -5); /* nothing written when empty */
    }
  }
  frit_ctx_free(C);
}

static void run_tests(void) {
  test_maybe_empty();
  for (int seed = 0; seed < 96; seed++) fuzz_versions(seed);
  test_symbolic_rank0();
  test_hazards();
  test_two_and_loops();
  test_atomics_bounds();
}

int main(void) {
  test_versions();
  test_reads();
  test_bounds_ast();
  run_tests();
  CHECK_DONE();
}
