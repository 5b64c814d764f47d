/* Host loops end to end (Contract C): static, symbolic and computed trip counts, negative and
 * zero-trip ranges, nested loops, several carries, stop conditions, loop bodies of several
 * kernels, interpret mode and the memory plan, each against a plain C loop. */
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "frit.h"
#include "runtime/runtime.h"

typedef frit_tensor T;

static T *add(frit_ctx *c, T *a, T *b) { return frit_binary_t(c, FRIT_BF_ADD, a, b); }
static T *sub(frit_ctx *c, T *a, T *b) { return frit_binary_t(c, FRIT_BF_SUB, a, b); }
static T *mul(frit_ctx *c, T *a, T *b) { return frit_binary_t(c, FRIT_BF_MUL, a, b); }
static T *fconst(frit_ctx *c, double v) { return frit_scalar_f(c, FRIT_F32, v); }
static T *iconst(frit_ctx *c, int64_t v) { return frit_scalar_i(c, FRIT_I64, v); }
static T *sum_all(frit_ctx *c, T *x) { return frit_reduce(c, FRIT_RF_SUM, x, NULL, FRIT_ALL_AXES, 0, 0); }
static T *max_all(frit_ctx *c, T *x) { return frit_reduce(c, FRIT_RF_MAX, x, NULL, FRIT_ALL_AXES, 0, 0); }
static T *var_t(frit_ctx *c, const char *name, int64_t lo, int64_t hi) {
  return frit_tensor_of(c, frit_var(c, name, lo, hi));
}

static frit_program *compile_n(frit_ctx *ctx, T **outs, int n, int interpret) {
  frit_compile_opts o;
  memset(&o, 0, sizeof o);
  o.interpret = interpret == 1;
  o.no_fusion = interpret == 2; /* mode 2: the unfused schedule, compiled */
  o.threads = 2;
  frit_program *p = frit_compile(ctx, outs, n, &o);
  if (!p) fprintf(stderr, "compile failed: %s\n", frit_error(ctx));
  if (p && getenv("HOSTLOOP_PRINT")) frit_program_print(p, "kernel", -1, stderr);
  return p;
}

static bool close_f(double got, double want) { return fabs(got - want) <= 1e-4 * (1.0 + fabs(want)); }

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static float frand(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (float)((double)(rng >> 11) / (double)(1ull << 53) * 2.0 - 1.0);
}

/* acc = x; for i in [0, 5): acc = acc * 0.5 + x * i */
static void test_static(int interpret) {
  frit_ctx *ctx = frit_ctx_new();
  enum { N = 37 };
  int64_t d = N;
  T *x = frit_input(ctx, "x", FRIT_F32, 1, &d);
  T *i, *acc, *res;
  CHECK(frit_host_loop_begin(ctx, iconst(ctx, 0), iconst(ctx, 5), iconst(ctx, 1), 1, &x, &i, &acc) == FRIT_OK);
  T *nx = add(ctx, mul(ctx, acc, fconst(ctx, 0.5)), mul(ctx, x, frit_astype(ctx, i, FRIT_F32)));
  CHECK(frit_host_loop_end(ctx, &nx, NULL, &res) == FRIT_OK);
  frit_program *p = compile_n(ctx, &res, 1, interpret);
  CHECK(p != NULL);
  if (p) {
    float xv[N], out[N], want[N];
    for (int k = 0; k < N; k++) xv[k] = frand();
    for (int k = 0; k < N; k++) {
      float a = xv[k];
      for (int it = 0; it < 5; it++) a = a * 0.5f + xv[k] * (float)it;
      want[k] = a;
    }
    void *in[1] = {xv}, *o[1] = {out};
    CHECK(frit_program_run(p, in, o, NULL, 0) == FRIT_OK);
    int bad = 0;
    for (int k = 0; k < N; k++) bad += !close_f(out[k], want[k]);
    CHECK_EQ_INT(bad, 0);
    const frit_schedule *s = p->c->sched;
    CHECK_EQ_INT(s->nloops, 1);
    /* init copy, then LOOP_BEGIN, the body kernel, SWAP, LOOP_END, then the output copy */
    CHECK(s->nsteps >= 5);
  }
  frit_ctx_free(ctx);
}

/* start/end/step as symbolic variables: ascending, descending, uneven and zero-trip ranges with
 * one compile; step 0 is a run-time error */
static void test_ranges(int interpret) {
  frit_ctx *ctx = frit_ctx_new();
  T *init[2] = {iconst(ctx, 7), iconst(ctx, 0)}, *i, *c[2], *res[2];
  CHECK(frit_host_loop_begin(ctx, var_t(ctx, "s", -100, 100), var_t(ctx, "e", -100, 100), var_t(ctx, "t", -10, 10),
                             2, init, &i, c) == FRIT_OK);
  T *next[2] = {frit_binary_t(ctx, FRIT_BF_REMAINDER, add(ctx, mul(ctx, c[0], iconst(ctx, 3)), i), iconst(ctx, 1000003)),
                add(ctx, c[1], iconst(ctx, 1))};
  CHECK(frit_host_loop_end(ctx, next, NULL, res) == FRIT_OK);
  frit_program *p = compile_n(ctx, res, 2, interpret);
  CHECK(p != NULL);
  static const int64_t cases[][3] = {{0, 10, 1}, {2, 11, 3}, {10, 0, -1}, {10, -7, -4}, {5, 5, 1}, {5, 0, 1},
                                     {0, 5, -1}, {-100, 100, 7}, {3, 4, 10}, {4, 3, -10}, {-3, -3, -1}};
  for (size_t k = 0; p && k < sizeof cases / sizeof *cases; k++) {
    int64_t s0 = cases[k][0], e0 = cases[k][1], t0 = cases[k][2];
    int64_t a = 7, n = 0; /* C oracle */
    for (int64_t it = s0; t0 > 0 ? it < e0 : it > e0; it += t0) a = ((a * 3 + it) % 1000003 + 1000003) % 1000003, n++;
    frit_binding b[3] = {{"s", s0}, {"e", e0}, {"t", t0}};
    int64_t out[2] = {-1, -1};
    void *o[2] = {&out[0], &out[1]};
    CHECK(frit_program_run(p, NULL, o, b, 3) == FRIT_OK);
    CHECK_EQ_INT(out[0], a);
    CHECK_EQ_INT(out[1], n);
  }
  if (p) {
    frit_binding b[3] = {{"s", 0}, {"e", 10}, {"t", 0}};
    int64_t out[2];
    void *o[2] = {&out[0], &out[1]};
    CHECK(frit_program_run(p, NULL, o, b, 3) == FRIT_ERR_RUNTIME);
    CHECK(strstr(frit_error(ctx), "step is 0") != NULL);
    frit_clear_error(ctx);
  }
  frit_ctx_free(ctx);
}

/* bounds computed by the program: start = min(x), end = sum(x), step = max(x) */
static void test_computed_bounds(int interpret) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t d = 6, vd = 8;
  T *x = frit_input(ctx, "x", FRIT_I32, 1, &d);
  T *v0 = frit_input(ctx, "v", FRIT_F32, 1, &vd);
  T *lo = frit_reduce(ctx, FRIT_RF_MIN, x, NULL, FRIT_ALL_AXES, 0, 0);
  T *i, *v, *res;
  CHECK(frit_host_loop_begin(ctx, lo, sum_all(ctx, x), max_all(ctx, x), 1, &v0, &i, &v) == FRIT_OK);
  T *nv = add(ctx, mul(ctx, v, fconst(ctx, 0.75)), frit_astype(ctx, i, FRIT_F32));
  CHECK(frit_host_loop_end(ctx, &nv, NULL, &res) == FRIT_OK);
  frit_program *p = compile_n(ctx, &res, 1, interpret);
  CHECK(p != NULL);
  static const int32_t xs[][6] = {{1, 2, 3, 4, 5, 6}, {3, 1, 1, 1, 1, 1}, {0, 0, 0, 0, 0, 1}, {7, 7, 7, 7, 7, 7}};
  for (size_t k = 0; p && k < sizeof xs / sizeof *xs; k++) {
    float vv[8], out[8], want[8];
    for (int j = 0; j < 8; j++) vv[j] = frand();
    int64_t mn = xs[k][0], mx = xs[k][0], sm = 0;
    for (int j = 0; j < 6; j++) mn = xs[k][j] < mn ? xs[k][j] : mn, mx = xs[k][j] > mx ? xs[k][j] : mx, sm += xs[k][j];
    memcpy(want, vv, sizeof vv);
    for (int64_t it = mn; it < sm; it += mx)
      for (int j = 0; j < 8; j++) want[j] = want[j] * 0.75f + (float)it;
    void *in[2] = {(void *)xs[k], vv}, *o[1] = {out};
    CHECK(frit_program_run(p, in, o, NULL, 0) == FRIT_OK);
    int bad = 0;
    for (int j = 0; j < 8; j++) bad += !close_f(out[j], want[j]);
    CHECK_EQ_INT(bad, 0);
  }
  if (p) { /* max(x) = 0: step 0 */
    int32_t z[6] = {0, 0, 0, 0, 0, 0};
    float vv[8] = {0}, out[8];
    void *in[2] = {z, vv}, *o[1] = {out};
    CHECK(frit_program_run(p, in, o, NULL, 0) == FRIT_ERR_RUNTIME);
    CHECK(strstr(frit_error(ctx), "step is 0") != NULL);
    frit_clear_error(ctx);
  }
  frit_ctx_free(ctx);
}

/* nested: for i in [0, 4): w = v; for j in [i, end_i): w = w * 0.5 + (10 i + j); v = w + 1,
 * with end_i = 3 + (sum(v) > 0) computed in the outer body */
static void test_nested(int interpret) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t d = 6;
  T *x = frit_input(ctx, "x", FRIT_F32, 1, &d);
  T *i, *v, *vres, *j, *w, *wres;
  CHECK(frit_host_loop_begin(ctx, iconst(ctx, 0), iconst(ctx, 4), iconst(ctx, 1), 1, &x, &i, &v) == FRIT_OK);
  T *pos = frit_binary_t(ctx, FRIT_BF_GT, sum_all(ctx, v), fconst(ctx, 0));
  T *end = add(ctx, iconst(ctx, 3), frit_astype(ctx, pos, FRIT_I64));
  CHECK(frit_host_loop_begin(ctx, i, end, iconst(ctx, 1), 1, &v, &j, &w) == FRIT_OK);
  T *ten_i_j = add(ctx, mul(ctx, i, iconst(ctx, 10)), j);
  T *nw = add(ctx, mul(ctx, w, fconst(ctx, 0.5)), frit_astype(ctx, ten_i_j, FRIT_F32));
  CHECK(frit_host_loop_end(ctx, &nw, NULL, &wres) == FRIT_OK);
  T *nv = add(ctx, wres, fconst(ctx, 1));
  CHECK(frit_host_loop_end(ctx, &nv, NULL, &vres) == FRIT_OK);
  frit_program *p = compile_n(ctx, &vres, 1, interpret);
  CHECK(p != NULL);
  for (int rep = 0; p && rep < 3; rep++) {
    float xv[6], out[6], want[6];
    for (int k = 0; k < 6; k++) xv[k] = frand() * 4 - (rep == 1 ? 6 : 0);
    memcpy(want, xv, sizeof xv);
    for (int ii = 0; ii < 4; ii++) {
      float s = 0;
      for (int k = 0; k < 6; k++) s += want[k];
      int e = 3 + (s > 0);
      for (int jj = ii; jj < e; jj++)
        for (int k = 0; k < 6; k++) want[k] = want[k] * 0.5f + (float)(10 * ii + jj);
      for (int k = 0; k < 6; k++) want[k] += 1;
    }
    void *in[1] = {xv}, *o[1] = {out};
    CHECK(frit_program_run(p, in, o, NULL, 0) == FRIT_OK);
    int bad = 0;
    for (int k = 0; k < 6; k++) bad += !close_f(out[k], want[k]);
    CHECK_EQ_INT(bad, 0);
  }
  if (p) {
    const frit_schedule *s = p->c->sched;
    CHECK_EQ_INT(s->nloops, 2);
    int inner = s->loops[0].parent >= 0 ? 0 : 1;
    CHECK_EQ_INT(s->loops[inner].parent, 1 - inner);
    CHECK(s->loops[inner].bound[0] != NULL);   /* start = the outer index: evaluated by the runtime */
    CHECK(s->loops[inner].bound_buf[1] >= 0);  /* end: computed by a kernel of the outer body */
  }
  frit_ctx_free(ctx);
}

/* Fibonacci on vectors: (a, b) -> (b, a + b); the next value of a is the carry b itself */
static void test_swap_carries(int interpret) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t d = 5;
  T *init[2] = {frit_input(ctx, "a", FRIT_I64, 1, &d), frit_input(ctx, "b", FRIT_I64, 1, &d)}, *i, *c[2], *res[2];
  CHECK(frit_host_loop_begin(ctx, iconst(ctx, 0), var_t(ctx, "n", 0, 90), iconst(ctx, 1), 2, init, &i, c) == FRIT_OK);
  T *next[2] = {c[1], add(ctx, c[0], c[1])};
  CHECK(frit_host_loop_end(ctx, next, NULL, res) == FRIT_OK);
  T *outs[3] = {res[0], res[1], mul(ctx, res[1], iconst(ctx, 2))};
  frit_program *p = compile_n(ctx, outs, 3, interpret);
  CHECK(p != NULL);
  for (int n = 0; p && n < 40; n += 13) {
    int64_t a[5], b[5], oa[5], ob[5], o2[5];
    for (int k = 0; k < 5; k++) a[k] = k, b[k] = 10 - k;
    int64_t wa[5], wb[5];
    for (int k = 0; k < 5; k++) {
      int64_t x = a[k], y = b[k];
      for (int it = 0; it < n; it++) {
        int64_t t = x + y;
        x = y, y = t;
      }
      wa[k] = x, wb[k] = y;
    }
    frit_binding bd = {"n", n};
    void *in[2] = {a, b}, *o[3] = {oa, ob, o2};
    CHECK(frit_program_run(p, in, o, &bd, 1) == FRIT_OK);
    int bad = 0;
    for (int k = 0; k < 5; k++) bad += oa[k] != wa[k] || ob[k] != wb[k] || o2[k] != 2 * wb[k];
    CHECK_EQ_INT(bad, 0);
  }
  frit_ctx_free(ctx);
}

/* Two carries with the same next value (one buffer cannot be swapped into two slots), and the
 * index as a next value: (a, b, k) -> (a + b, a + b, i) */
static void test_shared_next(int interpret) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t d = 3;
  T *x = frit_input(ctx, "x", FRIT_I64, 1, &d);
  T *init[3] = {x, mul(ctx, x, iconst(ctx, 2)), iconst(ctx, -1)}, *i, *c[3], *res[3];
  CHECK(frit_host_loop_begin(ctx, iconst(ctx, 0), iconst(ctx, 6), iconst(ctx, 1), 3, init, &i, c) == FRIT_OK);
  T *y = add(ctx, c[0], c[1]);
  T *next[3] = {y, y, i};
  CHECK(frit_host_loop_end(ctx, next, NULL, res) == FRIT_OK);
  frit_program *p = compile_n(ctx, res, 3, interpret);
  CHECK(p != NULL);
  if (p) {
    int64_t xv[3] = {1, -2, 5}, a[3], b[3], k = 0;
    void *in[1] = {xv}, *o[3] = {a, b, &k};
    CHECK(frit_program_run(p, in, o, NULL, 0) == FRIT_OK);
    int bad = 0;
    for (int q = 0; q < 3; q++) {
      int64_t wa = xv[q], wb = 2 * xv[q];
      for (int it = 0; it < 6; it++) wa = wb = wa + wb;
      bad += a[q] != wa || b[q] != wb;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(k, 5);
  }
  frit_ctx_free(ctx);
}

/* Two loops in a row: the second starts from the first's result (sharing its slot), the first
 * from a materialised value (computed straight into the slot); then the same with the first
 * result also an output (so the second must copy it). */
static void test_sequential(int interpret) {
  for (int both = 0; both < 2; both++) {
    frit_ctx *ctx = frit_ctx_new();
    int64_t d = 5;
    T *x = frit_input(ctx, "x", FRIT_F32, 1, &d);
    T *x3 = frit_contiguous(ctx, mul(ctx, x, fconst(ctx, 3))), *i, *v, *r1, *j, *w, *r2;
    CHECK(frit_host_loop_begin(ctx, iconst(ctx, 0), iconst(ctx, 3), iconst(ctx, 1), 1, &x3, &i, &v) == FRIT_OK);
    T *nv = mul(ctx, v, fconst(ctx, 2));
    CHECK(frit_host_loop_end(ctx, &nv, NULL, &r1) == FRIT_OK);
    CHECK(frit_host_loop_begin(ctx, iconst(ctx, 0), iconst(ctx, 4), iconst(ctx, 1), 1, &r1, &j, &w) == FRIT_OK);
    T *nw = sub(ctx, w, fconst(ctx, 1));
    CHECK(frit_host_loop_end(ctx, &nw, NULL, &r2) == FRIT_OK);
    T *outs[2] = {r2, r1};
    frit_program *p = compile_n(ctx, outs, 1 + both, interpret);
    CHECK(p != NULL);
    if (p) {
      float xv[5], o2[5], o1[5];
      for (int k = 0; k < 5; k++) xv[k] = frand();
      void *in[1] = {xv}, *o[2] = {o2, o1};
      CHECK(frit_program_run(p, in, o, NULL, 0) == FRIT_OK);
      int bad = 0;
      for (int k = 0; k < 5; k++) {
        float a = xv[k] * 3;
        for (int it = 0; it < 3; it++) a *= 2;
        float b = a;
        for (int it = 0; it < 4; it++) b -= 1;
        bad += !close_f(o2[k], b) || (both && !close_f(o1[k], a));
      }
      CHECK_EQ_INT(bad, 0);
      const frit_schedule *s = p->c->sched;
      CHECK_EQ_INT(s->nloops, 2);
      if (!both && interpret != 2) { /* x * 3 into the first slot, both loops in it, one copy out */
        CHECK_EQ_INT(s->nkernels, 4);
      }
    }
    frit_ctx_free(ctx);
  }
}

/* A LOOP built by hand (Contract C) with an unchanged carry (next == P) next to a changed one,
 * and a next value that is a loop-invariant outer value. */
static void test_hand_built(int interpret) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t d = 4;
  T *x = frit_input(ctx, "x", FRIT_F32, 1, &d);
  T *y = frit_input(ctx, "y", FRIT_F32, 1, &d);
  frit_uop *dims[1] = {frit_tensor_dim(x, 0)};
  frit_uop *iv = frit_var(ctx, "loop7", 0, 9);
  frit_arg a = frit_arg_none();
  a.i0 = 7;
  frit_uop *P[3];
  for (int j = 0; j < 3; j++) {
    a.i1 = j;
    P[j] = frit_uop_new(ctx, FRIT_OP_CARRY, FRIT_F32, dims, 1, &a);
  }
  T *iv_f = frit_astype(ctx, frit_tensor_of(ctx, iv), FRIT_F32);
  frit_uop *n0 = frit_tensor_uop(add(ctx, mul(ctx, frit_tensor_of(ctx, P[0]), fconst(ctx, 2)), iv_f));
  frit_uop *n2 = frit_tensor_uop(mul(ctx, y, fconst(ctx, 3))); /* outer value */
  frit_uop *src[5 + 9] = {frit_tensor_uop(iconst(ctx, 0)), frit_tensor_uop(iconst(ctx, 10)), frit_tensor_uop(iconst(ctx, 1)), iv,
                          P[0], P[1], P[2], frit_tensor_uop(x), frit_tensor_uop(y), frit_tensor_uop(x), n0, P[1], n2,
                          frit_const_int(ctx, FRIT_BOOL, 0)};
  frit_arg la = frit_arg_none();
  la.i0 = 3, la.i1 = 7;
  frit_uop *L = frit_uop_new(ctx, FRIT_OP_LOOP, FRIT_VOID, src, 14, &la);
  CHECK(L != NULL);
  T *res[3];
  for (int j = 0; j < 3; j++) {
    frit_uop *as[2] = {P[j], L};
    res[j] = frit_tensor_of(ctx, frit_uop_new(ctx, FRIT_OP_AFTER, FRIT_F32, as, 2, NULL));
    CHECK(res[j] != NULL);
  }
  frit_program *p = res[2] ? compile_n(ctx, res, 3, interpret) : NULL;
  CHECK(p != NULL);
  if (p) {
    float xv[4], yv[4], o0[4], o1[4], o2[4];
    for (int k = 0; k < 4; k++) xv[k] = frand(), yv[k] = frand();
    void *in[2] = {xv, yv}, *o[3] = {o0, o1, o2};
    CHECK(frit_program_run(p, in, o, NULL, 0) == FRIT_OK);
    int bad = 0;
    for (int k = 0; k < 4; k++) {
      float w = xv[k];
      for (int it = 0; it < 10; it++) w = w * 2 + (float)it;
      bad += !close_f(o0[k], w) || o1[k] != yv[k] || !close_f(o2[k], yv[k] * 3);
    }
    CHECK_EQ_INT(bad, 0);
  }
  frit_ctx_free(ctx);
}

/* while loop: c = x; for i in [0, 1000): c = c * 2; cnt += 1; stop when sum(c) > limit */
static void test_stop(int interpret) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t d = 16;
  T *x = frit_input(ctx, "x", FRIT_F32, 1, &d);
  T *init[2] = {x, iconst(ctx, 0)}, *i, *c[2], *res[2];
  CHECK(frit_host_loop_begin(ctx, iconst(ctx, 0), iconst(ctx, 1000), iconst(ctx, 1), 2, init, &i, c) == FRIT_OK);
  T *next[2] = {mul(ctx, c[0], fconst(ctx, 2)), add(ctx, c[1], iconst(ctx, 1))};
  T *limit = frit_tensor_of(ctx, frit_cast(ctx, frit_var(ctx, "limit", 0, 1 << 30), FRIT_F32));
  T *stop = frit_binary_t(ctx, FRIT_BF_GT, sum_all(ctx, next[0]), limit);
  CHECK(frit_host_loop_end(ctx, next, stop, res) == FRIT_OK);
  frit_program *p = compile_n(ctx, res, 2, interpret);
  CHECK(p != NULL);
  static const int limits[] = {0, 100, 136, 137, 5000, 1 << 30};
  for (size_t k = 0; p && k < sizeof limits / sizeof *limits; k++) {
    float xv[16], out[16], want[16];
    for (int j = 0; j < 16; j++) xv[j] = (float)(j + 1); /* integers: every sum is exact */
    memcpy(want, xv, sizeof xv);
    int64_t n = 0;
    for (int it = 0; it < 1000; it++) {
      float s = 0;
      for (int j = 0; j < 16; j++) want[j] *= 2, s += want[j];
      n++;
      if (s > (float)limits[k]) break;
    }
    int64_t cnt = -1;
    frit_binding b = {"limit", limits[k]};
    void *in[1] = {xv}, *o[2] = {out, &cnt};
    CHECK(frit_program_run(p, in, o, &b, 1) == FRIT_OK);
    CHECK_EQ_INT(cnt, n);
    int bad = 0;
    for (int j = 0; j < 16; j++) bad += out[j] != want[j];
    CHECK_EQ_INT(bad, 0);
  }
  frit_ctx_free(ctx);
}

/* A body of several kernels (reductions realized per iteration) reading a heavy value of the
 * enclosing region (computed once, before the loop):
 * w = sum(x); v' = (v - max(v)) * 0.5 + sum(v) / 64 + w * 0.001 */
static void test_body_kernels(int interpret) {
  frit_ctx *ctx = frit_ctx_new();
  enum { N = 64, IT = 6 };
  int64_t d = N;
  T *x = frit_input(ctx, "x", FRIT_F32, 1, &d);
  T *w = sum_all(ctx, x), *i, *v, *res;
  CHECK(frit_host_loop_begin(ctx, iconst(ctx, 0), iconst(ctx, IT), iconst(ctx, 1), 1, &x, &i, &v) == FRIT_OK);
  T *nv = add(ctx, add(ctx, mul(ctx, sub(ctx, v, max_all(ctx, v)), fconst(ctx, 0.5)),
                       frit_binary_t(ctx, FRIT_BF_TRUEDIV, sum_all(ctx, v), fconst(ctx, N))),
              mul(ctx, w, fconst(ctx, 0.001)));
  CHECK(frit_host_loop_end(ctx, &nv, NULL, &res) == FRIT_OK);
  frit_program *p = compile_n(ctx, &res, 1, interpret);
  CHECK(p != NULL);
  if (p) {
    float xv[N], out[N];
    double want[N], ws = 0;
    for (int k = 0; k < N; k++) xv[k] = frand(), want[k] = xv[k], ws += xv[k];
    for (int it = 0; it < IT; it++) {
      double mx = want[0], sm = 0;
      for (int k = 0; k < N; k++) mx = want[k] > mx ? want[k] : mx, sm += want[k];
      for (int k = 0; k < N; k++) want[k] = (want[k] - mx) * 0.5 + sm / N + ws * 0.001;
    }
    void *in[1] = {xv}, *o[1] = {out};
    CHECK(frit_program_run(p, in, o, NULL, 0) == FRIT_OK);
    int bad = 0;
    for (int k = 0; k < N; k++) bad += !close_f(out[k], want[k]);
    CHECK_EQ_INT(bad, 0);
    const frit_schedule *s = p->c->sched;
    const frit_sched_loop *L = &s->loops[0];
    CHECK(L->last_kernel - L->first_kernel + 1 >= 3); /* max, sum, the update */
    /* sum(x) (with its cheap epilogue) is computed before the loop, once, and stays live
     * over the whole body */
    int wk = -1;
    for (int k = 0; k < s->nkernels; k++)
      if (strstr(s->kernels[k].ops, "sum") && k < L->first_kernel) wk = k;
    CHECK(wk >= 0 && wk < L->first_kernel);
    int short_lived = 0; /* anything the body reads that was made before it lives to its end */
    for (int k = L->first_kernel; k <= L->last_kernel; k++)
      for (int q = 0; q < s->kernels[k].nparams; q++) {
        const frit_sched_buf *B = &s->bufs[s->kernels[k].param_buf[q]];
        short_lived += B->kind == FRIT_BUF_TEMP && B->first_use < L->first_kernel && B->last_use < L->last_kernel;
      }
    CHECK_EQ_INT(short_lived, 0);
  }
  frit_ctx_free(ctx);
}

/* Memory: a body of four materialised intermediates needs the slot, its partner and the body's
 * working set, however many iterations run; the trip count is symbolic. */
static void test_memory(int interpret) {
  frit_ctx *ctx = frit_ctx_new();
  enum { N = 1024 };
  int64_t d = N;
  T *x = frit_input(ctx, "x", FRIT_F32, 1, &d);
  T *i, *v, *res;
  CHECK(frit_host_loop_begin(ctx, iconst(ctx, 0), var_t(ctx, "n", 0, 1000), iconst(ctx, 1), 1, &x, &i, &v) == FRIT_OK);
  T *t1 = frit_contiguous(ctx, mul(ctx, v, fconst(ctx, 2)));
  T *t2 = frit_contiguous(ctx, add(ctx, t1, fconst(ctx, 1)));
  T *t3 = frit_contiguous(ctx, mul(ctx, t2, fconst(ctx, 0.25)));
  T *nv = sub(ctx, t3, mul(ctx, v, fconst(ctx, 0.125)));
  CHECK(frit_host_loop_end(ctx, &nv, NULL, &res) == FRIT_OK);
  T *out2 = add(ctx, res, fconst(ctx, 1));
  frit_program *p = compile_n(ctx, &out2, 1, interpret);
  CHECK(p != NULL);
  if (p) {
    size_t bytes = 0;
    frit_binding b = {"n", 1000};
    CHECK(frit_program_required_memory(p, &b, 1, &bytes) == FRIT_OK);
    /* slot + next + two body intermediates alive at once + the init/result side: <= 5 buffers */
    if (interpret != 2) CHECK(bytes <= 5 * N * sizeof(float)); /* fused: one kernel per intermediate */
    CHECK(bytes >= 3 * N * sizeof(float));
    for (int n = 0; n <= 50; n += 25) {
      static float xv[N], out[N];
      for (int k = 0; k < N; k++) xv[k] = frand();
      frit_binding bn = {"n", n};
      void *in[1] = {xv}, *o[1] = {out};
      CHECK(frit_program_run(p, in, o, &bn, 1) == FRIT_OK);
      int bad = 0;
      for (int k = 0; k < N; k++) {
        float c = xv[k];
        for (int it = 0; it < n; it++) c = (c * 2 + 1) * 0.25f - c * 0.125f;
        bad += !close_f(out[k], c + 1);
      }
      CHECK_EQ_INT(bad, 0);
    }
  }
  frit_ctx_free(ctx);
}

/* A value of a loop body used after the loop is an error naming the loop. */
static void test_errors(void) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t d = 4;
  T *x = frit_input(ctx, "x", FRIT_F32, 1, &d);
  T *i, *v, *res;
  CHECK(frit_host_loop_begin(ctx, iconst(ctx, 0), iconst(ctx, 3), iconst(ctx, 1), 1, &x, &i, &v) == FRIT_OK);
  T *nv = mul(ctx, v, fconst(ctx, 2));
  CHECK(frit_host_loop_end(ctx, &nv, NULL, &res) == FRIT_OK);
  T *outs[2] = {res, add(ctx, nv, fconst(ctx, 1))};
  CHECK(frit_compile(ctx, outs, 2, NULL) == NULL);
  CHECK(strstr(frit_error(ctx), "loop0") != NULL);
  frit_clear_error(ctx);
  T *mixed = add(ctx, res, v); /* the carry placeholder itself, outside */
  CHECK(frit_compile(ctx, &mixed, 1, NULL) == NULL);
  CHECK(strstr(frit_error(ctx), "loop0") != NULL);
  frit_clear_error(ctx);
  frit_ctx_free(ctx);
}

/* ---------- a loop of explicit kernels: bitonic sort ---------- */

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return x < y ? -1 : x > y;
}

/* One compare-exchange pass over keys (n points): l = i ^ j; if l > i, order keys[i], keys[l]
 * ascending when (i & k) == 0, else descending. Returns the new version of keys. */
static T *bitonic_pass(frit_ctx *ctx, T *keys, int64_t n, T *j, T *k) {
  T *i;
  if (frit_kernel_begin_static(ctx, "bitonic", 1, &n, &i) != FRIT_OK) return NULL;
  T *l = frit_binary_t(ctx, FRIT_BF_BITWISE_XOR, i, j);
  CHECK(frit_kernel_if_begin(ctx, frit_binary_t(ctx, FRIT_BF_GT, l, i)) == FRIT_OK);
  T *a = frit_kernel_load(ctx, keys, 1, &i), *b = frit_kernel_load(ctx, keys, 1, &l);
  T *asc = frit_binary_t(ctx, FRIT_BF_EQ, frit_binary_t(ctx, FRIT_BF_BITWISE_AND, i, k), iconst(ctx, 0));
  T *swap = frit_binary_t(ctx, FRIT_BF_LOGICAL_OR,
                          frit_binary_t(ctx, FRIT_BF_LOGICAL_AND, asc, frit_binary_t(ctx, FRIT_BF_GT, a, b)),
                          frit_binary_t(ctx, FRIT_BF_LOGICAL_AND, frit_unary_t(ctx, FRIT_UF_LOGICAL_NOT, asc),
                                        frit_binary_t(ctx, FRIT_BF_LT, a, b)));
  CHECK(frit_kernel_if_begin(ctx, swap) == FRIT_OK);
  CHECK(frit_kernel_store(ctx, keys, 1, &i, b) == FRIT_OK);
  CHECK(frit_kernel_store(ctx, keys, 1, &l, a) == FRIT_OK);
  CHECK(frit_kernel_if_end(ctx) == FRIT_OK);
  CHECK(frit_kernel_if_end(ctx) == FRIT_OK);
  if (frit_kernel_end(ctx) != 1) return NULL;
  T *old = NULL, *nw = NULL;
  CHECK(frit_kernel_written(ctx, 0, &old, &nw) == FRIT_OK);
  return nw;
}

/* for kk in [1, log2 n]: for jj in [kk - 1, -1) step -1: keys = pass(keys, 1 << jj, 1 << kk) */
static void test_bitonic(int interpret) {
  frit_ctx *ctx = frit_ctx_new();
  enum { LOGN = 8, N = 1 << LOGN };
  int64_t d = N;
  T *x = frit_input(ctx, "keys", FRIT_I32, 1, &d);
  T *kk, *jj, *c0, *c1, *r0, *r1;
  frit_status st = frit_host_loop_begin(ctx, iconst(ctx, 1), iconst(ctx, LOGN + 1), iconst(ctx, 1), 1, &x, &kk, &c0);
  if (st == FRIT_OK)
    st = frit_host_loop_begin(ctx, sub(ctx, kk, iconst(ctx, 1)), iconst(ctx, -1), iconst(ctx, -1), 1, &c0, &jj, &c1);
  T *nk = NULL;
  if (st == FRIT_OK) {
    T *one = iconst(ctx, 1);
    nk = bitonic_pass(ctx, c1, N, frit_binary_t(ctx, FRIT_BF_LSHIFT, one, jj), frit_binary_t(ctx, FRIT_BF_LSHIFT, one, kk));
  }
  if (!nk || frit_host_loop_end(ctx, &nk, NULL, &r1) != FRIT_OK || frit_host_loop_end(ctx, &r1, NULL, &r0) != FRIT_OK) {
    fprintf(stderr, "bitonic: building failed: %s\n", frit_error(ctx));
    CHECK(0);
    frit_ctx_free(ctx);
    return;
  }
  frit_program *p = compile_n(ctx, &r0, 1, interpret);
  CHECK(p != NULL);
  for (int rep = 0; p && rep < 3; rep++) {
    static int32_t keys[N], want[N], out[N];
    for (int i = 0; i < N; i++) keys[i] = rep == 2 ? N - i : (int32_t)(frand() * 1000);
    memcpy(want, keys, sizeof keys);
    qsort(want, N, sizeof *want, cmp_i32);
    void *in[1] = {keys}, *o[1] = {out};
    CHECK(frit_program_run(p, in, o, NULL, 0) == FRIT_OK);
    CHECK(memcmp(out, want, sizeof want) == 0);
  }
  if (p) { /* the pass writes the carried keys in place: no swap, one kernel per pass */
    const frit_schedule *s = p->c->sched;
    int swaps = 0, kernels_in_inner = 0;
    for (int i = 0; i < s->nsteps; i++) swaps += s->steps[i].kind == FRIT_STEP_SWAP;
    for (int l = 0; l < s->nloops; l++)
      if (s->loops[l].parent >= 0) kernels_in_inner = s->loops[l].last_kernel - s->loops[l].first_kernel + 1;
    CHECK_EQ_INT(swaps, 0);
    CHECK_EQ_INT(kernels_in_inner, 1);
  }
  frit_ctx_free(ctx);
}

/* bounds = CHECK inside a loop: out[i] = x[i + it] fails at the iteration that leaves x; the
 * error buffer is cleared by the next run. A constant true stop runs the body exactly once. */
static void test_check_and_const_stop(int interpret) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t n = 8;
  T *x = frit_input(ctx, "x", FRIT_F32, 1, &n);
  T *z = frit_zeros(ctx, FRIT_F32, 1, &n), *it, *c, *res;
  CHECK(frit_host_loop_begin(ctx, iconst(ctx, 0), var_t(ctx, "T", 0, 100), iconst(ctx, 1), 1, &z, &it, &c) == FRIT_OK);
  T *i;
  CHECK(frit_kernel_begin_static(ctx, "shifted", 1, &n, &i) == FRIT_OK);
  T *ix = add(ctx, i, it);
  T *v = add(ctx, frit_kernel_load(ctx, c, 1, &i), frit_kernel_load(ctx, x, 1, &ix));
  CHECK(frit_kernel_store(ctx, c, 1, &i, v) == FRIT_OK);
  CHECK_EQ_INT(frit_kernel_end(ctx), 1);
  T *old, *nc;
  CHECK(frit_kernel_written(ctx, 0, &old, &nc) == FRIT_OK);
  CHECK(frit_host_loop_end(ctx, &nc, NULL, &res) == FRIT_OK);
  frit_compile_opts o;
  memset(&o, 0, sizeof o);
  o.interpret = interpret == 1;
  o.no_fusion = interpret == 2;
  o.bounds = FRIT_BOUNDS_CHECK;
  frit_program *p = frit_compile(ctx, &res, 1, &o);
  CHECK(p != NULL);
  if (!p) fprintf(stderr, "compile failed: %s\n", frit_error(ctx));
  float xv[8], out[8];
  for (int k = 0; k < 8; k++) xv[k] = (float)(k + 1);
  void *in[1] = {xv}, *oo[1] = {out};
  for (int rep = 0; p && rep < 2; rep++) {
    frit_binding ok = {"T", 1}, bad = {"T", 3};
    CHECK(frit_program_run(p, in, oo, &bad, 1) == FRIT_ERR_RUNTIME);
    CHECK(strstr(frit_error(ctx), "out of range") != NULL);
    frit_clear_error(ctx);
    CHECK(frit_program_run(p, in, oo, &ok, 1) == FRIT_OK);
    int wrong = 0;
    for (int k = 0; k < 8; k++) wrong += out[k] != xv[k];
    CHECK_EQ_INT(wrong, 0);
  }
  /* stop = true: one iteration of ten */
  T *j, *d, *dres;
  CHECK(frit_host_loop_begin(ctx, iconst(ctx, 0), iconst(ctx, 10), iconst(ctx, 1), 1, &x, &j, &d) == FRIT_OK);
  T *nd = add(ctx, d, fconst(ctx, 1));
  CHECK(frit_host_loop_end(ctx, &nd, frit_scalar_i(ctx, FRIT_BOOL, 1), &dres) == FRIT_OK);
  frit_program *q = compile_n(ctx, &dres, 1, interpret);
  CHECK(q != NULL);
  if (q) {
    CHECK(frit_program_run(q, in, oo, NULL, 0) == FRIT_OK);
    int wrong = 0;
    for (int k = 0; k < 8; k++) wrong += out[k] != xv[k] + 1;
    CHECK_EQ_INT(wrong, 0);
  }
  frit_ctx_free(ctx);
}

/* The cost of a loop iteration: one 0-d kernel and a swap per iteration. Printed for the record,
 * not asserted (machine load); the result is checked. */
static void test_overhead(void) {
  frit_ctx *ctx = frit_ctx_new();
  T *init = iconst(ctx, 0), *i, *c, *r;
  CHECK(frit_host_loop_begin(ctx, iconst(ctx, 0), var_t(ctx, "n", 0, 1 << 30), iconst(ctx, 1), 1, &init, &i, &c) ==
        FRIT_OK);
  T *nx = add(ctx, c, i);
  CHECK(frit_host_loop_end(ctx, &nx, NULL, &r) == FRIT_OK);
  frit_program *p = compile_n(ctx, &r, 1, 0);
  CHECK(p != NULL);
  if (p) {
    int64_t out = 0, n = 200000;
    void *o[1] = {&out};
    frit_binding b = {"n", n};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK(frit_program_run(p, NULL, o, &b, 1) == FRIT_OK);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    CHECK_EQ_INT(out, n * (n - 1) / 2);
    double dt = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    fprintf(stderr, "host loop: %.3f us per iteration (one 0-d kernel and a swap)\n", 1e6 * dt / (double)n);
  }
  frit_ctx_free(ctx);
}

int main(void) {
  for (int interp = 0; interp < 3; interp++) { /* compiled, interpreted, unfused */
    test_static(interp);
    test_ranges(interp);
    test_computed_bounds(interp);
    test_nested(interp);
    test_swap_carries(interp);
    test_hand_built(interp);
    test_shared_next(interp);
    test_sequential(interp);
    test_stop(interp);
    test_body_kernels(interp);
    test_memory(interp);
    test_bitonic(interp);
    test_check_and_const_stop(interp);
  }
  test_errors();
  test_overhead();
  CHECK_DONE();
}
