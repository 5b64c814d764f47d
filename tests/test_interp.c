/* Tests of the reference interpreter on loop-level graphs: every expected buffer is computed by
 * a plain C loop here (an independent oracle), plus the runtime errors it must report. */
#include "check.h"
#include "frit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static frit_ctx *ctx;

#define PTR(dt) frit_dtype_ptr((dt), FRIT_ADDR_GLOBAL)

static frit_uop *node(frit_op op, frit_dtype dt, frit_uop *const *src, int n, frit_arg a) {
  frit_uop *u = frit_uop_new(ctx, op, dt, src, n, &a);
  if (!u) fprintf(stderr, "build %s failed: %s\n", frit_op_name(op), frit_error(ctx));
  return u;
}
static frit_arg A(int64_t i0, int64_t i1) { return (frit_arg){.i0 = i0, .i1 = i1}; }
static frit_uop *ci(int64_t v) { return frit_const_int(ctx, FRIT_I64, v); }
static frit_uop *cf(double v) { return frit_const_float(ctx, FRIT_F32, v); }
static frit_uop *global(int k, frit_dtype elem) { return node(FRIT_OP_DEFINE_GLOBAL, PTR(elem), NULL, 0, A(k, -1)); }
static frit_uop *reg(int id, frit_dtype elem, int64_t n) {
  return node(FRIT_OP_DEFINE_REG, frit_dtype_ptr(elem, FRIT_ADDR_REG), NULL, 0, A(id, n));
}
static frit_uop *idx(frit_uop *p, frit_uop *i) { return node(FRIT_OP_INDEX, frit_uop_dtype(p), (frit_uop *[]){p, i}, 2, A(0, 0)); }
static frit_uop *idxg(frit_uop *p, frit_uop *i, frit_uop *g) {
  return node(FRIT_OP_INDEX, frit_uop_dtype(p), (frit_uop *[]){p, i, g}, 3, A(0, 0));
}
static frit_uop *load(frit_uop *ix, frit_dtype dt) { return node(FRIT_OP_LOAD, dt, &ix, 1, A(0, 0)); }
static frit_uop *store(frit_uop *ix, frit_uop *v) { return node(FRIT_OP_STORE, FRIT_VOID, (frit_uop *[]){ix, v}, 2, A(0, 0)); }
static frit_uop *after(frit_uop *p, frit_uop *e) { return node(FRIT_OP_AFTER, frit_uop_dtype(p), (frit_uop *[]){p, e}, 2, A(0, 0)); }
static frit_uop *rng(frit_uop *end, int axis) { return frit_range(ctx, end, axis, FRIT_AXIS_LOOP); }
static frit_uop *end1(frit_uop *e, frit_uop *r) { return node(FRIT_OP_END, FRIT_VOID, (frit_uop *[]){e, r}, 2, A(0, 0)); }
static frit_uop *end2(frit_uop *e, frit_uop *r1, frit_uop *r2) {
  return node(FRIT_OP_END, FRIT_VOID, (frit_uop *[]){e, r1, r2}, 3, A(0, 0));
}
static frit_uop *group(frit_uop *a, frit_uop *b) { return node(FRIT_OP_GROUP, FRIT_VOID, (frit_uop *[]){a, b}, 2, A(0, 0)); }
static frit_uop *sink1(frit_uop *a) { return frit_sink(ctx, &a, 1); }
static frit_uop *add(frit_uop *a, frit_uop *b) { return frit_binary(ctx, FRIT_OP_ADD, a, b); }
static frit_uop *mul(frit_uop *a, frit_uop *b) { return frit_binary(ctx, FRIT_OP_MUL, a, b); }

static frit_status run(frit_uop *root, void *const *bufs, const size_t *sizes, int nbufs, frit_scalar *out) {
  frit_status st = frit_interpret(ctx, root, bufs, sizes, nbufs, NULL, 0, out);
  if (st != FRIT_OK) fprintf(stderr, "interpret: %s\n", frit_error(ctx));
  return st;
}

static void test_value_root(void) {
  frit_scalar out[4];
  frit_uop *x = add(mul(ci(6), ci(7)), ci(-2));
  CHECK_EQ_INT(run(x, NULL, NULL, 0, out), FRIT_OK);
  CHECK_EQ_INT(out[0].i, 40);
  /* vector constant broadcast and lane-wise ALU */
  frit_uop *v = frit_const_float(ctx, frit_dtype_vec(FRIT_F32, 4), 1.5);
  frit_uop *w = node(FRIT_OP_VECTORIZE, frit_dtype_vec(FRIT_F32, 4), (frit_uop *[]){cf(1), cf(2), cf(3), cf(4)}, 4, A(0, 0));
  CHECK_EQ_INT(run(mul(v, w), NULL, NULL, 0, out), FRIT_OK);
  for (int l = 0; l < 4; l++) CHECK(out[l].f == 1.5 * (l + 1));
  /* a variable */
  frit_uop *n = frit_var(ctx, "n", 0, 100);
  frit_binding b = {"n", 9};
  CHECK_EQ_INT(frit_interpret(ctx, mul(n, n), NULL, NULL, 0, &b, 1, out), FRIT_OK);
  CHECK_EQ_INT(out[0].i, 81);
}

static void test_transpose(void) {
  enum { M = 5, N = 7 };
  float in[M * N], out[N * M], want[N * M];
  for (int i = 0; i < M * N; i++) in[i] = (float)(i * 3 % 11) - 2.5f;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) want[j * M + i] = in[i * N + j];
  frit_uop *gi = global(0, FRIT_F32), *go = global(1, FRIT_F32);
  frit_uop *i = rng(ci(M), 0), *j = rng(ci(N), 1);
  frit_uop *v = load(idx(gi, add(mul(i, ci(N)), j)), FRIT_F32);
  frit_uop *s = store(idx(go, add(mul(j, ci(M)), i)), v);
  frit_uop *root = sink1(end2(s, i, j));
  memset(out, 0, sizeof out);
  CHECK_EQ_INT(run(root, (void *[]){in, out}, (size_t[]){M * N, N * M}, 2, NULL), FRIT_OK);
  CHECK(memcmp(out, want, sizeof out) == 0);
}

static void test_matmul_reduce(void) {
  enum { M = 4, K = 6, N = 3 };
  double a[M * K], b[K * N], c[M * N], want[M * N];
  for (int i = 0; i < M * K; i++) a[i] = (double)((i * 7) % 5) - 1.25;
  for (int i = 0; i < K * N; i++) b[i] = (double)((i * 3) % 4) + 0.5;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double acc = 0;
      for (int k = 0; k < K; k++) acc += a[i * K + k] * b[k * N + j];
      want[i * N + j] = acc;
    }
  frit_uop *ga = global(0, FRIT_F64), *gb = global(1, FRIT_F64), *gc = global(2, FRIT_F64);
  frit_uop *i = rng(ci(M), 0), *j = rng(ci(N), 1), *k = rng(ci(K), 2);
  frit_uop *prod = frit_binary(ctx, FRIT_OP_MUL, load(idx(ga, add(mul(i, ci(K)), k)), FRIT_F64),
                               load(idx(gb, add(mul(k, ci(N)), j)), FRIT_F64));
  frit_uop *red = node(FRIT_OP_REDUCE, FRIT_F64, (frit_uop *[]){prod, k}, 2, A(FRIT_OP_ADD, 0));
  frit_uop *root = sink1(end2(store(idx(gc, add(mul(i, ci(N)), j)), red), i, j));
  CHECK_EQ_INT(run(root, (void *[]){a, b, c}, (size_t[]){M * K, K * N, M * N}, 3, NULL), FRIT_OK);
  CHECK(memcmp(c, want, sizeof c) == 0);
  /* REDUCE MAX over a triangular range: out[i] = max_{j <= i} x[j] */
  int32_t x[9] = {3, -1, 7, 2, 7, -9, 11, 0, 4}, o[9], w[9];
  for (int p = 0; p < 9; p++) {
    w[p] = INT32_MIN;
    for (int q = 0; q <= p; q++) w[p] = x[q] > w[p] ? x[q] : w[p];
  }
  frit_uop *gx = global(0, FRIT_I32), *go = global(1, FRIT_I32);
  frit_uop *r0 = rng(ci(9), 0), *r1 = rng(add(r0, ci(1)), 1);
  frit_uop *mx = node(FRIT_OP_REDUCE, FRIT_I32, (frit_uop *[]){load(idx(gx, r1), FRIT_I32), r1}, 2, A(FRIT_OP_MAX, 0));
  root = sink1(end1(store(idx(go, r0), mx), r0));
  CHECK_EQ_INT(run(root, (void *[]){x, o}, (size_t[]){9, 9}, 2, NULL), FRIT_OK);
  CHECK(memcmp(o, w, sizeof o) == 0);
}

/* A running sum kept in a register accumulator, read back through AFTER. */
static void test_prefix_register(void) {
  enum { N = 10 };
  int64_t x[N], out[N], want[N], acc = 0;
  for (int i = 0; i < N; i++) x[i] = (i * 37) % 13 - 4, acc += x[i], want[i] = acc;
  frit_uop *gx = global(0, FRIT_I64), *go = global(1, FRIT_I64), *r = reg(0, FRIT_I64, 1);
  frit_uop *s0 = store(idx(r, ci(0)), ci(0));
  frit_uop *i = rng(ci(N), 0);
  frit_uop *cur = load(idx(after(r, s0), ci(0)), FRIT_I64);
  frit_uop *s1 = store(idx(r, ci(0)), add(cur, load(idx(gx, i), FRIT_I64)));
  frit_uop *s2 = store(idx(go, i), load(idx(after(r, s1), ci(0)), FRIT_I64));
  frit_uop *root = frit_sink(ctx, (frit_uop *[]){s0, end1(group(s1, s2), i)}, 2);
  CHECK_EQ_INT(run(root, (void *[]){x, out}, (size_t[]){N, N}, 2, NULL), FRIT_OK);
  CHECK(memcmp(out, want, sizeof out) == 0);
  /* a store listing the reset as an ordering dep, with no data dependence on the loop: the
   * reset belongs to the loop body, so it runs every iteration (out[i] = x[i]) */
  frit_uop *s0b = store(idx(r, ci(0)), ci(100));
  frit_uop *cur2 = load(idx(after(r, s0b), ci(0)), FRIT_I64);
  frit_uop *s1b = node(FRIT_OP_STORE, FRIT_VOID, (frit_uop *[]){idx(r, ci(0)), add(cur2, load(idx(gx, i), FRIT_I64)), s0b}, 3, A(0, 0));
  frit_uop *s2b = store(idx(go, i), load(idx(after(r, s1b), ci(0)), FRIT_I64));
  root = sink1(end1(s2b, i));
  CHECK_EQ_INT(run(root, (void *[]){x, out}, (size_t[]){N, N}, 2, NULL), FRIT_OK);
  for (int k = 0; k < N; k++) CHECK_EQ_INT(out[k], 100 + x[k]);
}

/* An effect referenced through AFTER from inside another loop runs in its own scope: once. */
static void test_effect_scope(void) {
  enum { N1 = 5, N2 = 4 };
  int32_t cnt[1] = {0}, out[N2] = {0};
  frit_uop *gc = global(0, FRIT_I32), *go = global(1, FRIT_I32);
  frit_uop *r1 = rng(ci(N1), 0), *r2 = rng(ci(N2), 1);
  frit_uop *e1 = end1(node(FRIT_OP_ATOMIC, FRIT_I32, (frit_uop *[]){idx(gc, ci(0)), frit_const_int(ctx, FRIT_I32, 1)}, 2,
                           A(FRIT_ATOMIC_ADD, 0)), r1);
  frit_uop *e2 = end1(store(idx(go, r2), add(load(idx(after(gc, e1), ci(0)), FRIT_I32), frit_cast(ctx, r2, FRIT_I32))), r2);
  /* listed in the "wrong" order: e2 pulls e1 in first through AFTER, the SINK does not rerun it */
  CHECK_EQ_INT(run(frit_sink(ctx, (frit_uop *[]){e2, e1}, 2), (void *[]){cnt, out}, (size_t[]){1, N2}, 2, NULL), FRIT_OK);
  CHECK_EQ_INT(cnt[0], N1);
  for (int k = 0; k < N2; k++) CHECK_EQ_INT(out[k], N1 + k);
}

static void test_if_and_gates(void) {
  enum { N = 12 };
  float x[N], out[N], want[N];
  for (int i = 0; i < N; i++) x[i] = (float)((i * 5) % 9) - 4.0f;
  for (int i = 0; i < N; i++) want[i] = x[i] < 0 ? -x[i] : x[i] * 2;
  frit_uop *gx = global(0, FRIT_F32), *go = global(1, FRIT_F32);
  frit_uop *i = rng(ci(N), 0);
  frit_uop *xi = load(idx(gx, i), FRIT_F32);
  frit_uop *cond = frit_binary(ctx, FRIT_OP_CMPLT, xi, cf(0));
  frit_uop *st_neg = store(idx(go, i), frit_unary(ctx, FRIT_OP_NEG, xi));
  frit_uop *st_dbl = store(idx(go, i), mul(xi, cf(2)));
  frit_uop *iff = node(FRIT_OP_IF, FRIT_VOID, (frit_uop *[]){cond, st_neg, st_dbl}, 3, A(0, 0));
  CHECK_EQ_INT(run(sink1(end1(iff, i)), (void *[]){x, out}, (size_t[]){N, N}, 2, NULL), FRIT_OK);
  CHECK(memcmp(out, want, sizeof out) == 0);
  /* IF without else: only odd i written */
  for (int k = 0; k < N; k++) out[k] = -1, want[k] = k % 2 ? x[k] : -1;
  frit_uop *odd = frit_binary(ctx, FRIT_OP_CMPNE, frit_binary(ctx, FRIT_OP_MOD, i, ci(2)), ci(0));
  iff = node(FRIT_OP_IF, FRIT_VOID, (frit_uop *[]){odd, store(idx(go, i), xi)}, 2, A(0, 0));
  CHECK_EQ_INT(run(sink1(end1(iff, i)), (void *[]){x, out}, (size_t[]){N, N}, 2, NULL), FRIT_OK);
  CHECK(memcmp(out, want, sizeof out) == 0);
  /* gated loads: out[i] = i > 0 ? x[i-1] : 100 (alt), and without alt: 0 */
  for (int k = 0; k < N; k++) want[k] = k > 0 ? x[k - 1] : 100;
  frit_uop *g = frit_binary(ctx, FRIT_OP_CMPLT, ci(0), i);
  frit_uop *gix = idxg(gx, add(i, ci(-1)), g);
  frit_uop *ld = node(FRIT_OP_LOAD, FRIT_F32, (frit_uop *[]){gix, cf(100)}, 2, A(0, 0));
  CHECK_EQ_INT(run(sink1(end1(store(idx(go, i), ld), i)), (void *[]){x, out}, (size_t[]){N, N}, 2, NULL), FRIT_OK);
  CHECK(memcmp(out, want, sizeof out) == 0);
  want[0] = 0;
  CHECK_EQ_INT(run(sink1(end1(store(idx(go, i), load(gix, FRIT_F32)), i)), (void *[]){x, out}, (size_t[]){N, N}, 2, NULL),
               FRIT_OK);
  CHECK(memcmp(out, want, sizeof out) == 0);
  /* a gated store writes nothing where the gate is false */
  for (int k = 0; k < N; k++) out[k] = 7, want[k] = k < 5 ? x[k] : 7;
  frit_uop *gs = idxg(go, i, frit_binary(ctx, FRIT_OP_CMPLT, i, ci(5)));
  CHECK_EQ_INT(run(sink1(end1(store(gs, xi), i)), (void *[]){x, out}, (size_t[]){N, N}, 2, NULL), FRIT_OK);
  CHECK(memcmp(out, want, sizeof out) == 0);
}

static void test_atomics(void) {
  enum { N = 50 };
  int32_t x[N], hist[4] = {0}, old[N], cnt[1] = {0}, whist[4] = {0}, wold[N];
  for (int i = 0; i < N; i++) x[i] = (i * 7 + 3) % 11;
  for (int i = 0; i < N; i++) wold[i] = whist[x[i] % 4]++;
  frit_uop *gx = global(0, FRIT_I32), *gh = global(1, FRIT_I32), *go = global(2, FRIT_I32), *gc = global(3, FRIT_I32);
  frit_uop *i = rng(ci(N), 0);
  frit_uop *bin = frit_binary(ctx, FRIT_OP_MOD, load(idx(gx, i), FRIT_I32), frit_const_int(ctx, FRIT_I32, 4));
  frit_uop *at = node(FRIT_OP_ATOMIC, FRIT_I32, (frit_uop *[]){idx(gh, frit_cast(ctx, bin, FRIT_I64)), frit_const_int(ctx, FRIT_I32, 1)}, 2,
                      A(FRIT_ATOMIC_ADD, 0));
  /* an atomic with no data dependence on the loop still runs once per iteration */
  frit_uop *at2 = node(FRIT_OP_ATOMIC, FRIT_I32, (frit_uop *[]){idx(gc, ci(0)), frit_const_int(ctx, FRIT_I32, 2)}, 2,
                       A(FRIT_ATOMIC_ADD, 0));
  frit_uop *root = sink1(end1(group(store(idx(go, i), at), at2), i));
  CHECK_EQ_INT(run(root, (void *[]){x, hist, old, cnt}, (size_t[]){N, 4, N, 1}, 4, NULL), FRIT_OK);
  CHECK(memcmp(hist, whist, sizeof hist) == 0);
  CHECK(memcmp(old, wold, sizeof old) == 0);
  CHECK_EQ_INT(cnt[0], 2 * N);
  /* atomic max */
  int32_t m[1] = {-100};
  frit_uop *gm = global(1, FRIT_I32);
  frit_uop *amax = node(FRIT_OP_ATOMIC, FRIT_I32, (frit_uop *[]){idx(gm, ci(0)), load(idx(gx, i), FRIT_I32)}, 2, A(FRIT_ATOMIC_MAX, 0));
  CHECK_EQ_INT(run(sink1(end1(amax, i)), (void *[]){x, m}, (size_t[]){N, 1}, 2, NULL), FRIT_OK);
  CHECK_EQ_INT(m[0], 10);
}

static void test_vectors(void) {
  enum { N = 16 };
  float x[N], out[N], want[N];
  for (int i = 0; i < N; i++) x[i] = (float)i * 0.5f - 3;
  for (int i = 0; i < N; i += 4)
    for (int l = 0; l < 4; l++) want[i + l] = x[i + 3 - l] + 1;
  frit_dtype v4 = frit_dtype_vec(FRIT_F32, 4);
  frit_uop *gx = global(0, FRIT_F32), *go = global(1, FRIT_F32);
  frit_uop *i = rng(ci(N / 4), 0);
  frit_uop *base = mul(i, ci(4));
  frit_uop *v = load(idx(gx, base), v4);
  frit_uop *lanes[4];
  for (int l = 0; l < 4; l++) lanes[l] = node(FRIT_OP_GEP, FRIT_F32, &v, 1, (frit_arg){.i0 = 3 - l});
  frit_uop *rev = node(FRIT_OP_VECTORIZE, v4, lanes, 4, A(0, 0));
  frit_uop *res = add(rev, frit_const_float(ctx, v4, 1));
  CHECK_EQ_INT(run(sink1(end1(store(idx(go, base), res), i)), (void *[]){x, out}, (size_t[]){N, N}, 2, NULL), FRIT_OK);
  CHECK(memcmp(out, want, sizeof out) == 0);
  /* GEP with a lane list, and BITCAST f32x2 -> i32x2 -> back */
  int64_t pick[2] = {2, 0};
  frit_uop *two = node(FRIT_OP_GEP, frit_dtype_vec(FRIT_F32, 2), &v, 1, (frit_arg){.blob = pick, .n = 2, .blob_kind = FRIT_BLOB_INTS});
  frit_uop *bc = node(FRIT_OP_BITCAST, frit_dtype_vec(FRIT_I32, 2), &two, 1, A(0, 0));
  frit_uop *gi = global(1, FRIT_I32);
  int32_t ob[N], wb[N];
  memset(ob, 0, sizeof ob);
  memset(wb, 0, sizeof wb);
  for (int k = 0; k < N / 4; k++) {
    memcpy(&wb[4 * k], &x[4 * k + 2], 4);
    memcpy(&wb[4 * k + 1], &x[4 * k], 4);
  }
  CHECK_EQ_INT(run(sink1(end1(store(idx(gi, base), bc), i)), (void *[]){x, ob}, (size_t[]){N, N}, 2, NULL), FRIT_OK);
  CHECK(memcmp(ob, wb, sizeof ob) == 0);
  /* f16 buffers: values are rounded on the way in */
  uint16_t h[2] = {0x3c00, 0x4000}, ho[2] = {0, 0};
  frit_uop *gh = global(0, FRIT_F16), *gho = global(1, FRIT_F16);
  frit_uop *sum = add(load(idx(gh, ci(0)), FRIT_F16), load(idx(gh, ci(1)), FRIT_F16));
  frit_uop *root = frit_sink(ctx, (frit_uop *[]){store(idx(gho, ci(0)), sum), store(idx(gho, ci(1)), frit_const_float(ctx, FRIT_F16, 1.0 / 3))}, 2);
  CHECK_EQ_INT(run(root, (void *[]){h, ho}, (size_t[]){2, 2}, 2, NULL), FRIT_OK);
  CHECK_EQ_INT(ho[0], 0x4200); /* 3.0 */
  CHECK_EQ_INT(ho[1], 0x3555); /* 1/3 rounded to nearest */
}

static void expect_error(frit_uop *root, void *const *bufs, const size_t *sizes, int nbufs, const char *needle) {
  frit_scalar out[8];
  frit_status st = frit_interpret(ctx, root, bufs, sizes, nbufs, NULL, 0, out);
  CHECK_EQ_INT(st, FRIT_ERR_RUNTIME);
  if (!strstr(frit_error(ctx), needle)) {
    fprintf(stderr, "message \"%s\" lacks \"%s\"\n", frit_error(ctx), needle);
    CHECK(0);
  }
  frit_clear_error(ctx);
}

static void test_errors(void) {
  float x[4] = {0};
  frit_uop *gx = global(0, FRIT_F32);
  frit_uop *i = rng(ci(5), 0);
  expect_error(sink1(end1(store(idx(gx, i), cf(1)), i)), (void *[]){x}, (size_t[]){4}, 1, "out of bounds");
  expect_error(load(idx(gx, ci(-1)), FRIT_F32), (void *[]){x}, (size_t[]){4}, 1, "index -1 out of bounds");
  expect_error(load(idx(gx, ci(0)), FRIT_F32), NULL, NULL, 0, "parameter 0");
  expect_error(add(frit_var(ctx, "nope", 0, 9), ci(1)), NULL, NULL, 0, "unbound variable 'nope'");
  frit_binding b = {"v", 50};
  CHECK_EQ_INT(frit_interpret(ctx, frit_var(ctx, "v", 0, 9), NULL, NULL, 0, &b, 1, NULL), FRIT_ERR_RUNTIME);
  CHECK(strstr(frit_error(ctx), "outside its bounds") != NULL);
  frit_uop *buf = node(FRIT_OP_BUFFER, FRIT_F32, NULL, 0, A(0, 16));
  int64_t perm[1] = {0};
  frit_uop *perm_op = node(FRIT_OP_PERMUTE, FRIT_F32, &buf, 1, (frit_arg){.blob = perm, .n = 1, .blob_kind = FRIT_BLOB_INTS});
  expect_error(perm_op, NULL, NULL, 0, "PERMUTE");
  expect_error(add(i, ci(1)), NULL, NULL, 0, "outside its loop");
  expect_error(frit_binary(ctx, FRIT_OP_ADD, load(idx(gx, ci(0)), frit_dtype_vec(FRIT_F32, 8)), frit_const_float(ctx, frit_dtype_vec(FRIT_F32, 8), 0)),
               (void *[]){x}, (size_t[]){4}, 1, "(vector) out of bounds");
  frit_uop *sp = node(FRIT_OP_SPECIAL, FRIT_I32, (frit_uop *[]){frit_const_int(ctx, FRIT_I32, 4)}, 1,
                      (frit_arg){.blob = "gidx0", .blob_kind = FRIT_BLOB_STR});
  expect_error(sp, NULL, NULL, 0, "SPECIAL 'gidx0' needs a backend");
  /* the context stays usable */
  frit_scalar out[1];
  CHECK_EQ_INT(frit_interpret(ctx, ci(3), NULL, NULL, 0, NULL, 0, out), FRIT_OK);
  CHECK_EQ_INT(out[0].i, 3);
}

static void test_deep_graph(void) {
  /* a 100k-deep chain: no recursion on graph depth */
  frit_uop *x = frit_var(ctx, "x", 0, 10), *acc = x;
  enum { D = 100000 };
  for (int k = 0; k < D; k++) acc = frit_binary(ctx, FRIT_OP_ADD, acc, k % 2 ? x : ci(k % 7));
  frit_binding b = {"x", 3};
  frit_scalar out[1];
  CHECK_EQ_INT(frit_interpret(ctx, acc, NULL, NULL, 0, &b, 1, out), FRIT_OK);
  int64_t want = 3;
  for (int k = 0; k < D; k++) want += k % 2 ? 3 : k % 7;
  CHECK_EQ_INT(out[0].i, want);
}

static void test_loop_invariants(void) {
  /* out[i*N+j] = sum over k < var n of (i + k) * x[j]; the loop end comes from a variable */
  enum { M = 3, N = 4 };
  int64_t x[N] = {1, -2, 5, 7}, out[M * N], want[M * N];
  int64_t nv = 6;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      int64_t s = 0;
      for (int k = 0; k < nv; k++) s += (i + k) * x[j];
      want[i * N + j] = s;
    }
  frit_uop *n = frit_var(ctx, "n", 1, 10);
  frit_uop *gx = global(0, FRIT_I64), *go = global(1, FRIT_I64);
  frit_uop *i = rng(ci(M), 0), *j = rng(ci(N), 1), *k = rng(n, 2);
  frit_uop *body = mul(add(i, k), load(idx(gx, j), FRIT_I64));
  frit_uop *red = node(FRIT_OP_REDUCE, FRIT_I64, (frit_uop *[]){body, k}, 2, A(FRIT_OP_ADD, 0));
  frit_uop *root = sink1(end2(store(idx(go, add(mul(i, ci(N)), j)), red), i, j));
  frit_binding b = {"n", nv};
  CHECK_EQ_INT(frit_interpret(ctx, root, (void *[]){x, out}, (size_t[]){N, M * N}, 2, &b, 1, NULL), FRIT_OK);
  CHECK(memcmp(out, want, sizeof out) == 0);
  /* zero-trip loops leave the output alone and reduce to the identity */
  frit_uop *e = rng(ci(0), 3);
  frit_uop *z = node(FRIT_OP_REDUCE, FRIT_I64, (frit_uop *[]){mul(e, ci(2)), e}, 2, A(FRIT_OP_MUL, 0));
  frit_scalar o[1];
  CHECK_EQ_INT(run(z, NULL, NULL, 0, o), FRIT_OK);
  CHECK_EQ_INT(o[0].i, 1);
}

int main(void) {
  ctx = frit_ctx_new();
  test_value_root();
  test_transpose();
  test_matmul_reduce();
  test_prefix_register();
  test_effect_scope();
  test_if_and_gates();
  test_atomics();
  test_vectors();
  test_errors();
  test_loop_invariants();
  test_deep_graph();
  frit_ctx_free(ctx);
  CHECK_DONE();
}
