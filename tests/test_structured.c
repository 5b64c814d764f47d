/* Tests of the structured-kernel C emitter (src/codegen/structured.c): Contract-B kernel ASTs
 * built by hand are compiled, run (g0 split into chunks, atomics from many threads) and compared
 * with plain C oracles written here, and with the reference interpreter once it runs SEQ. */
#include "check.h"
#include "codegen/codegen.h"
#include "interp/scalar.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static frit_ctx *ctx;
static frit_cg_config cfg;
static char cache_dir[256];
static int serial;
static bool interp_ok; /* the interpreter runs structured kernels (probed in main) */

/* ---------- builders ---------- */

static frit_uop *N(frit_op op, frit_dtype dt, frit_uop *const *src, int n, int64_t i0, int64_t i1) {
  frit_arg a = {.i0 = i0, .i1 = i1};
  frit_uop *u = frit_uop_new(ctx, op, dt, src, n, &a);
  if (!u) fprintf(stderr, "build %s failed: %s\n", frit_op_name(op), frit_error(ctx));
  return u;
}
static frit_uop *ci(int64_t v) { return frit_const_int(ctx, FRIT_I64, v); }
static frit_uop *cf(frit_dtype dt, double v) { return frit_const_float(ctx, dt, v); }
static frit_uop *gl(int k, frit_dtype dt) { return N(FRIT_OP_DEFINE_GLOBAL, frit_dtype_ptr(dt, FRIT_ADDR_GLOBAL), NULL, 0, k, -1); }
static frit_uop *reg(int id, frit_dtype dt) { return N(FRIT_OP_DEFINE_REG, frit_dtype_ptr(dt, FRIT_ADDR_REG), NULL, 0, id, 1); }
static frit_uop *ix(frit_uop *p, frit_uop *i) { return N(FRIT_OP_INDEX, frit_uop_dtype(p), (frit_uop *[]){p, i}, 2, 0, 0); }
static frit_uop *ixg(frit_uop *p, frit_uop *i, frit_uop *g) {
  return N(FRIT_OP_INDEX, frit_uop_dtype(p), (frit_uop *[]){p, i, g}, 3, 0, 0);
}
static frit_uop *ld(frit_uop *a) { return N(FRIT_OP_LOAD, frit_dtype_scalar(frit_uop_dtype(a)), &a, 1, 0, ++serial); }
static frit_uop *ldalt(frit_uop *a, frit_uop *alt) {
  return N(FRIT_OP_LOAD, frit_dtype_scalar(frit_uop_dtype(a)), (frit_uop *[]){a, alt}, 2, 0, ++serial);
}
static frit_uop *st(frit_uop *a, frit_uop *v) { return N(FRIT_OP_STORE, FRIT_VOID, (frit_uop *[]){a, v}, 2, 0, 0); }
static frit_uop *at(frit_atomic_op op, frit_uop *a, frit_uop *v) {
  return N(FRIT_OP_ATOMIC, frit_dtype_scalar(frit_uop_dtype(a)), (frit_uop *[]){a, v}, 2, op, ++serial);
}
static frit_uop *rget(frit_uop *r) { return ld(ix(r, ci(0))); }
static frit_uop *rset(frit_uop *r, frit_uop *v) { return st(ix(r, ci(0)), v); }
static frit_uop *rng(frit_uop *end, int axis, frit_axis t) { return frit_range(ctx, end, axis, t); }
static frit_uop *B(frit_op op, frit_uop *a, frit_uop *b) { return frit_binary(ctx, op, a, b); }
static frit_uop *cast(frit_uop *x, frit_dtype dt) { return frit_cast(ctx, x, dt); }
static frit_uop *brk(frit_uop *r) { return N(FRIT_OP_BREAK, FRIT_VOID, &r, 1, 0, 0); }
static frit_uop *cont(frit_uop *r) { return N(FRIT_OP_CONTINUE, FRIT_VOID, &r, 1, 0, 0); }
static frit_uop *sink(frit_uop *a) { return frit_sink(ctx, &a, 1); }

#define SEQ(...) seqv((frit_uop *[]){__VA_ARGS__}, (int)(sizeof((frit_uop *[]){__VA_ARGS__}) / sizeof(frit_uop *)))
static frit_uop *seqv(frit_uop *const *s, int n) { return N(FRIT_OP_SEQ, FRIT_VOID, s, n, 0, 0); }
static frit_uop *end1(frit_uop *body, frit_uop *r) { return N(FRIT_OP_END, FRIT_VOID, (frit_uop *[]){body, r}, 2, 0, 0); }
static frit_uop *end2(frit_uop *body, frit_uop *r0, frit_uop *r1) {
  return N(FRIT_OP_END, FRIT_VOID, (frit_uop *[]){body, r0, r1}, 3, 0, 0);
}
static frit_uop *iff(frit_uop *c, frit_uop *then) { return N(FRIT_OP_IF, FRIT_VOID, (frit_uop *[]){c, then}, 2, 0, 0); }
static frit_uop *ife(frit_uop *c, frit_uop *then, frit_uop *els) {
  return N(FRIT_OP_IF, FRIT_VOID, (frit_uop *[]){c, then, els}, 3, 0, 0);
}
static frit_uop *kr(int64_t n) { return rng(ci(n), 0, FRIT_AXIS_GLOBAL); }

/* ---------- compile and run ---------- */

static frit_cg_program *compile(frit_uop *const *asts, int n, frit_uop *const *vars, int nvars) {
  frit_cg_program *p = frit_codegen_generate(ctx, asts, NULL, n, vars, nvars);
  if (!p) {
    fprintf(stderr, "generate failed: %s\n", frit_error(ctx));
    return NULL;
  }
  if (frit_codegen_compile(ctx, p, &cfg) != FRIT_OK) {
    fprintf(stderr, "compile failed: %s\n%s\n", frit_error(ctx), p->source);
    return NULL;
  }
  if (getenv("FRIT_TEST_DUMP")) fputs(strstr(p->source, "\n/* kernel ") ? strstr(p->source, "\n/* kernel ") : p->source, stderr);
  return p;
}

static int64_t extent(const frit_cg_kernel *K, const frit_binding *b, int nb) {
  frit_scalar e = {0};
  CHECK_EQ_INT(frit_interpret(ctx, K->g0_extent, NULL, NULL, 0, b, nb, &e), FRIT_OK);
  return e.i;
}

/* Runs kernel K over its g0 extent in `chunks` pieces, last piece first. */
static void run_chunks(const frit_cg_kernel *K, void **bufs, const int64_t *varv, int64_t E, int chunks) {
  int64_t per = (E + chunks - 1) / chunks;
  if (per < 1) per = 1;
  for (int64_t b = ((E - 1) / per) * per; b >= 0; b -= per) K->fn(bufs, varv, b, b + per < E ? b + per : E);
}

typedef struct thr {
  const frit_cg_kernel *K;
  void **bufs;
  int64_t E, chunk;
  int t, nt;
  pthread_barrier_t *start;
} thr;

static void *thr_main(void *p) {
  thr *a = p;
  pthread_barrier_wait(a->start); /* all threads at once: real contention */
  for (int64_t c = a->t; c * a->chunk < a->E; c += a->nt) {
    int64_t b = c * a->chunk, e = b + a->chunk < a->E ? b + a->chunk : a->E;
    a->K->fn(a->bufs, NULL, b, e);
  }
  return NULL;
}

/* Runs K split into chunks over nt threads at once (interleaved chunks: heavy contention). */
static void run_threads(const frit_cg_kernel *K, void **bufs, int64_t E, int nt) {
  pthread_t th[16];
  thr a[16];
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, (unsigned)nt);
  for (int t = 0; t < nt; t++) {
    a[t] = (thr){K, bufs, E, 37, t, nt, &start};
    pthread_create(&th[t], NULL, thr_main, &a[t]);
  }
  for (int t = 0; t < nt; t++) pthread_join(th[t], NULL);
  pthread_barrier_destroy(&start);
}

/* Compares buffers bit for bit (NaN == NaN); reports the first differences. */
static int cmp_buf(const char *what, frit_scalar_kind k, const void *want, const void *got, size_t n) {
  int bad = 0;
  size_t sz = (size_t)frit_kind_bytes(k);
  for (size_t i = 0; i < n; i++) {
    frit_scalar x = frit_scalar_load((const uint8_t *)want + i * sz, k), y = frit_scalar_load((const uint8_t *)got + i * sz, k);
    bool same = frit_scalar_to_bits(x, k) == frit_scalar_to_bits(y, k);
    if (k >= FRIT_F16 && isnan(x.f) && isnan(y.f)) same = true;
    if (!same && bad++ < 4)
      fprintf(stderr, "%s [%zu]: want %.17g (0x%llx) got %.17g (0x%llx)\n", what, i, k >= FRIT_F16 ? x.f : (double)x.i,
              (unsigned long long)frit_scalar_to_bits(x, k), k >= FRIT_F16 ? y.f : (double)y.i,
              (unsigned long long)frit_scalar_to_bits(y, k));
  }
  return bad;
}

/* Interprets ast on copies of init (nb buffers) and compares with the compiled results got[]. */
static void interp_cmp(const char *what, frit_uop *ast, int nb, void *const *init, const size_t *sizes,
                       const frit_scalar_kind *kinds, void *const *got, const frit_binding *b, int nbind, uint32_t mask) {
  if (!interp_ok) return;
  void *bi[8] = {0};
  for (int k = 0; k < nb; k++) {
    size_t bytes = sizes[k] * (size_t)frit_kind_bytes(kinds[k]);
    bi[k] = malloc(bytes + 8);
    memcpy(bi[k], init[k], bytes);
  }
  frit_status s = frit_interpret(ctx, ast, bi, sizes, nb, b, nbind, NULL);
  if (s != FRIT_OK) fprintf(stderr, "%s: interpret: %s\n", what, frit_error(ctx));
  CHECK_EQ_INT(s, FRIT_OK);
  for (int k = 0; k < nb && s == FRIT_OK; k++)
    if ((mask >> k) & 1) CHECK_EQ_INT(cmp_buf(what, kinds[k], bi[k], got[k], sizes[k]), 0);
  for (int k = 0; k < nb; k++) free(bi[k]);
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void) {
  rnd_state ^= rnd_state << 13, rnd_state ^= rnd_state >> 7, rnd_state ^= rnd_state << 17;
  return rnd_state;
}

/* ---------- loops, break/continue, registers ---------- */

enum { L_N = 96, L_M = 37, L_LIMIT = 260 };

static void test_loops(void) {
  frit_uop *gA = gl(1, FRIT_I32), *gB = gl(2, FRIT_I32), *gO = gl(0, FRIT_I64);
  frit_uop *acc = reg(0, FRIT_I64);
  frit_uop *R0 = kr(L_N);
  frit_uop *cnt = ld(ix(gA, R0));
  frit_uop *Rj = rng(cast(cnt, FRIT_I64), 1, FRIT_AXIS_LOOP);
  frit_uop *t = ld(ix(gB, B(FRIT_OP_MOD, B(FRIT_OP_ADD, R0, Rj), ci(L_M))));
  frit_uop *Rk = rng(cast(B(FRIT_OP_AND, t, frit_const_int(ctx, FRIT_I32, 7)), FRIT_I64), 2, FRIT_AXIS_LOOP);
  frit_uop *a1 = rget(acc);
  /* for k: if k == 5: break; acc += k * j */
  frit_uop *kloop = end1(SEQ(iff(B(FRIT_OP_CMPEQ, Rk, ci(5)), SEQ(brk(Rk))), a1,
                             rset(acc, B(FRIT_OP_ADD, a1, B(FRIT_OP_MUL, Rk, Rj)))),
                         Rk);
  frit_uop *a2 = rget(acc);
  /* for q < 4: if j == 6 and q == 2: break j (from inside q); if j == 4 and q == 0: continue j; acc += 1 */
  frit_uop *Rq = rng(ci(4), 3, FRIT_AXIS_LOOP);
  frit_uop *a3 = rget(acc);
  frit_uop *qloop =
      end1(SEQ(iff(B(FRIT_OP_AND, B(FRIT_OP_CMPEQ, Rj, ci(6)), B(FRIT_OP_CMPEQ, Rq, ci(2))), SEQ(brk(Rj))),
               iff(B(FRIT_OP_AND, B(FRIT_OP_CMPEQ, Rj, ci(4)), B(FRIT_OP_CMPEQ, Rq, ci(0))), SEQ(cont(Rj))), a3,
               rset(acc, B(FRIT_OP_ADD, a3, ci(1)))),
           Rq);
  frit_uop *jbody = SEQ(iff(B(FRIT_OP_CMPEQ, B(FRIT_OP_MOD, Rj, ci(3)), ci(1)), SEQ(cont(Rj))), t, kloop, a2,
                        iff(B(FRIT_OP_CMPLT, ci(L_LIMIT), a2), SEQ(brk(Rj))), qloop);
  frit_uop *a4 = rget(acc);
  frit_uop *ast = sink(end1(SEQ(rset(acc, ci(0)), cnt, end1(jbody, Rj), a4, st(ix(gO, R0), a4)), R0));
  frit_cg_program *p = compile(&ast, 1, NULL, 0);
  CHECK(p != NULL);
  if (!p) return;
  CHECK(strstr(p->source, "goto brk") != NULL && strstr(p->source, "goto cont") != NULL);
  CHECK(strstr(p->source, "__atomic") == NULL);
  int32_t A[L_N], Bv[L_M];
  int64_t O[L_N], want[L_N];
  for (int i = 0; i < L_N; i++) A[i] = (int32_t)(rnd() % 30) - 4; /* some negative: no iterations */
  for (int i = 0; i < L_M; i++) Bv[i] = (int32_t)(rnd() % 200) - 100;
  for (int i = 0; i < L_N; i++) {
    int64_t a = 0;
    for (int64_t j = 0; j < A[i]; j++) {
      if (j % 3 == 1) continue;
      int64_t tt = Bv[(i + j) % L_M] & 7;
      for (int64_t k = 0; k < tt; k++) {
        if (k == 5) break;
        a += k * j;
      }
      if (L_LIMIT < a) break;
      int leave = 0;
      for (int q = 0; q < 4 && !leave; q++) {
        if (j == 6 && q == 2) leave = 2;
        else if (j == 4 && q == 0) leave = 1;
        else a += 1;
      }
      if (leave == 2) break;
    }
    want[i] = a;
  }
  memset(O, 0, sizeof O);
  void *bufs[3] = {O, A, Bv};
  run_chunks(&p->kernels[0], bufs, NULL, extent(&p->kernels[0], NULL, 0), 5);
  CHECK_EQ_INT(extent(&p->kernels[0], NULL, 0), L_N);
  CHECK_EQ_INT(cmp_buf("loops", FRIT_I64, want, O, L_N), 0);
  int64_t O0[L_N] = {0};
  interp_cmp("loops", ast, 3, (void *[]){O0, A, Bv}, (size_t[]){L_N, L_N, L_M},
             (frit_scalar_kind[]){FRIT_I64, FRIT_I32, FRIT_I32}, bufs, NULL, 0, 1);
}

/* ---------- program order within a point: RAW, WAR, WAW; f16 memory; values used later ---------- */

enum { O_N = 50 };

static void test_order(void) {
  frit_uop *gC = gl(0, FRIT_I32), *gD = gl(1, FRIT_I32), *gE = gl(2, FRIT_I32), *gH = gl(3, FRIT_F16),
           *gF = gl(4, FRIT_F32), *gA = gl(5, FRIT_I32), *gP = gl(6, FRIT_I32);
  frit_uop *R0 = kr(O_N);
  frit_uop *c = ix(gC, R0);
  frit_uop *x0 = ld(c);
  frit_uop *x1 = ld(c);
  frit_uop *x2 = ld(c);
  frit_uop *one = frit_const_int(ctx, FRIT_I32, 1);
  /* f16 store then load: the load sees the rounded value */
  frit_uop *h = ix(gH, R0);
  frit_uop *hv = cast(B(FRIT_OP_MUL, cast(R0, FRIT_F32), cf(FRIT_F32, 1.1)), FRIT_F16);
  frit_uop *y = ld(h);
  /* v read in one IF, used in another; w read in a loop, used after it */
  frit_uop *cnd = B(FRIT_OP_CMPEQ, B(FRIT_OP_MOD, R0, ci(3)), ci(0));
  frit_uop *v = ld(ix(gA, R0));
  frit_uop *Rj = rng(ci(4), 1, FRIT_AXIS_LOOP);
  frit_uop *w = ld(ix(gA, B(FRIT_OP_MOD, B(FRIT_OP_ADD, R0, Rj), ci(O_N))));
  frit_uop *body = SEQ(x0, st(c, B(FRIT_OP_ADD, x0, one)), x1,
                       st(ix(gD, R0), B(FRIT_OP_ADD, B(FRIT_OP_MUL, x0, frit_const_int(ctx, FRIT_I32, 10)), x1)),
                       st(c, frit_const_int(ctx, FRIT_I32, 100)), st(c, B(FRIT_OP_MUL, x1, frit_const_int(ctx, FRIT_I32, 2))),
                       x2, st(ix(gE, R0), x2), st(h, hv), y, st(ix(gF, R0), cast(y, FRIT_F32)), iff(cnd, SEQ(v)),
                       end1(SEQ(w), Rj), iff(cnd, SEQ(st(ix(gP, R0), B(FRIT_OP_ADD, v, w)))),
                       st(ix(gA, R0), B(FRIT_OP_MUL, w, frit_const_int(ctx, FRIT_I32, 2))));
  /* gA is read by other points after this point writes it: run one point per call, in order,
     so that the oracle is deterministic */
  frit_uop *ast = sink(end1(body, R0));
  frit_cg_program *p = compile(&ast, 1, NULL, 0);
  CHECK(p != NULL);
  if (!p) return;
  int32_t C[O_N], D[O_N] = {0}, E[O_N] = {0}, A[O_N], P[O_N], wC[O_N], wD[O_N], wE[O_N], wA[O_N], wP[O_N];
  uint16_t H[O_N] = {0}, wH[O_N];
  float F[O_N] = {0}, wF[O_N];
  for (int i = 0; i < O_N; i++) C[i] = (int32_t)(rnd() % 1000) - 500, A[i] = (int32_t)(rnd() % 100), P[i] = -1;
  int32_t C0[O_N], A0[O_N], P0[O_N];
  memcpy(C0, C, sizeof C), memcpy(A0, A, sizeof A), memcpy(P0, P, sizeof P);
  memcpy(wA, A, sizeof A), memcpy(wP, P, sizeof P);
  for (int i = 0; i < O_N; i++) {
    int32_t a0 = C[i], a1 = a0 + 1;
    wD[i] = a0 * 10 + a1;
    wC[i] = wE[i] = a1 * 2;
    wH[i] = frit_f16_from_double((double)((float)i * 1.1f));
    wF[i] = (float)frit_f16_to_double(wH[i]);
    int32_t vv = i % 3 == 0 ? wA[i] : 0, ww = 0;
    for (int j = 0; j < 4; j++) ww = wA[(i + j) % O_N];
    if (i % 3 == 0) wP[i] = vv + ww;
    wA[i] = ww * 2;
  }
  void *bufs[7] = {C, D, E, H, F, A, P};
  const frit_cg_kernel *K = &p->kernels[0];
  for (int64_t i = 0; i < O_N; i++) K->fn(bufs, NULL, i, i + 1);
  CHECK_EQ_INT(cmp_buf("RAW/WAW C", FRIT_I32, wC, C, O_N), 0);
  CHECK_EQ_INT(cmp_buf("WAR D", FRIT_I32, wD, D, O_N), 0);
  CHECK_EQ_INT(cmp_buf("RAW E", FRIT_I32, wE, E, O_N), 0);
  CHECK_EQ_INT(cmp_buf("f16 H", FRIT_F16, wH, H, O_N), 0);
  CHECK_EQ_INT(cmp_buf("f16 reload F", FRIT_F32, wF, F, O_N), 0);
  CHECK_EQ_INT(cmp_buf("if-scoped P", FRIT_I32, wP, P, O_N), 0);
  CHECK_EQ_INT(cmp_buf("loop-scoped A", FRIT_I32, wA, A, O_N), 0);
  int32_t z[O_N] = {0};
  uint16_t hz[O_N] = {0};
  float fz[O_N] = {0};
  interp_cmp("order", ast, 7, (void *[]){C0, z, z, hz, fz, A0, P0}, (size_t[]){O_N, O_N, O_N, O_N, O_N, O_N, O_N},
             (frit_scalar_kind[]){FRIT_I32, FRIT_I32, FRIT_I32, FRIT_F16, FRIT_F32, FRIT_I32, FRIT_I32}, bufs, NULL, 0,
             0x7f);
}

/* ---------- if/else, gated accesses ---------- */

enum { G_N = 200, G_K = 150 };

static void test_if_gates(void) {
  frit_uop *gO = gl(0, FRIT_F32), *gA = gl(1, FRIT_F32), *gQ = gl(2, FRIT_F32), *gH = gl(3, FRIT_I32);
  frit_uop *R0 = kr(G_N);
  frit_uop *x = ld(ix(gA, R0));
  frit_uop *neg = B(FRIT_OP_CMPLT, x, cf(FRIT_F32, 0));
  frit_uop *big = B(FRIT_OP_CMPLT, cf(FRIT_F32, 10), x);
  frit_uop *ifs = ife(neg, SEQ(st(ix(gO, R0), frit_alu(ctx, FRIT_OP_NEG, &x, 1))),
                      SEQ(ife(big, SEQ(st(ix(gO, R0), cf(FRIT_F32, 10))), SEQ(st(ix(gO, R0), B(FRIT_OP_MUL, x, cf(FRIT_F32, 2)))))));
  /* gated: a[i] only for i < K (else the alt value); a far index behind a false gate is never read */
  frit_uop *gate = B(FRIT_OP_CMPLT, R0, ci(G_K));
  frit_uop *g1 = ldalt(ixg(gA, R0, gate), cf(FRIT_F32, -7));
  frit_uop *g2 = ld(ixg(gA, B(FRIT_OP_ADD, R0, ci(1 << 30)), B(FRIT_OP_CMPLT, R0, ci(0))));
  frit_uop *odd = B(FRIT_OP_CMPNE, B(FRIT_OP_MOD, R0, ci(2)), ci(0));
  frit_uop *cnt = at(FRIT_ATOMIC_ADD, ixg(gH, ci(0), B(FRIT_OP_CMPEQ, B(FRIT_OP_MOD, R0, ci(5)), ci(0))),
                     frit_const_int(ctx, FRIT_I32, 1));
  frit_uop *ast = sink(end1(SEQ(x, ifs, g1, g2, st(ixg(gQ, R0, odd), B(FRIT_OP_ADD, g1, g2)), cnt), R0));
  frit_cg_program *p = compile(&ast, 1, NULL, 0);
  CHECK(p != NULL);
  if (!p) return;
  float O[G_N], A[G_N], Q[G_N], wO[G_N], wQ[G_N];
  int32_t H[1] = {3};
  for (int i = 0; i < G_N; i++) {
    A[i] = (float)((int)(rnd() % 400) - 100) * 0.125f;
    O[i] = Q[i] = wQ[i] = -1;
    wO[i] = A[i] < 0 ? -A[i] : 10 < A[i] ? 10 : A[i] * 2;
    if (i % 2) wQ[i] = (i < G_K ? A[i] : -7) + 0.0f;
  }
  float O0[G_N], Q0[G_N];
  memcpy(O0, O, sizeof O), memcpy(Q0, Q, sizeof Q);
  void *bufs[4] = {O, A, Q, H};
  run_threads(&p->kernels[0], bufs, G_N, 4);
  CHECK_EQ_INT(cmp_buf("if/else", FRIT_F32, wO, O, G_N), 0);
  CHECK_EQ_INT(cmp_buf("gated", FRIT_F32, wQ, Q, G_N), 0);
  CHECK_EQ_INT(H[0], 3 + (G_N + 4) / 5);
  int32_t H0[1] = {3};
  interp_cmp("if/gates", ast, 4, (void *[]){O0, A, Q0, H0}, (size_t[]){G_N, G_N, G_N, 1},
             (frit_scalar_kind[]){FRIT_F32, FRIT_F32, FRIT_F32, FRIT_I32}, bufs, NULL, 0, 0xf);
}

/* ---------- multi-dim kernels with symbolic extents, g0 split; rank 0; REDUCE ---------- */

static void test_multidim(void) {
  frit_uop *n = frit_var(ctx, "n", 0, 1000), *m = frit_var(ctx, "m", 0, 1000);
  CHECK(n && m);
  if (!n || !m) return;
  frit_uop *gO = gl(0, FRIT_F64), *gA = gl(1, FRIT_F64), *gS = gl(2, FRIT_F64);
  /* (i, j) over (n, m): acc = sum_{k < (i + j) % 4} a[i, j] * k, then a REDUCE over m of row i */
  frit_uop *Ri = rng(n, 0, FRIT_AXIS_GLOBAL), *Rj = rng(m, 1, FRIT_AXIS_GLOBAL);
  frit_uop *Rk = rng(B(FRIT_OP_MOD, B(FRIT_OP_ADD, Ri, Rj), ci(4)), 2, FRIT_AXIS_LOOP);
  frit_uop *flat = B(FRIT_OP_ADD, B(FRIT_OP_MUL, Ri, m), Rj);
  frit_uop *acc = reg(0, FRIT_F64);
  frit_uop *a = ld(ix(gA, flat));
  frit_uop *g = rget(acc);
  frit_uop *Rr = rng(m, 3, FRIT_AXIS_REDUCE);
  frit_uop *row = N(FRIT_OP_REDUCE, FRIT_F64, (frit_uop *[]){ld(ix(gA, B(FRIT_OP_ADD, B(FRIT_OP_MUL, Ri, m), Rr))), Rr}, 2,
                    FRIT_OP_ADD, 0);
  frit_uop *g2 = rget(acc);
  frit_uop *body = SEQ(rset(acc, cf(FRIT_F64, 0)), a,
                       end1(SEQ(g, rset(acc, B(FRIT_OP_ADD, g, B(FRIT_OP_MUL, a, cast(Rk, FRIT_F64))))), Rk), g2,
                       st(ix(gO, flat), B(FRIT_OP_ADD, g2, row)));
  frit_uop *ast = sink(end2(body, Ri, Rj));
  /* rank 0: s[0] = sum of the first n*m elements, via a loop and a register */
  frit_uop *acc0 = reg(0, FRIT_F64);
  frit_uop *Rl = rng(B(FRIT_OP_MUL, n, m), 1, FRIT_AXIS_LOOP);
  frit_uop *q = rget(acc0), *q2 = rget(acc0);
  frit_uop *e = ld(ix(gA, Rl));
  frit_uop *ast0 = sink(SEQ(rset(acc0, cf(FRIT_F64, 0)), end1(SEQ(e, q, rset(acc0, B(FRIT_OP_ADD, q, e))), Rl), q2,
                            st(ix(gS, ci(0)), q2)));
  frit_uop *asts[2] = {ast, ast0}, *vars[2] = {n, m};
  frit_cg_program *p = compile(asts, 2, vars, 2);
  CHECK(p != NULL);
  if (!p) return;
  enum { NI = 13, NJ = 7 };
  frit_binding bind[2] = {{"n", NI}, {"m", NJ}};
  int64_t varv[2] = {NI, NJ};
  CHECK_EQ_INT(extent(&p->kernels[0], bind, 2), NI);
  CHECK_EQ_INT(extent(&p->kernels[1], bind, 2), 1);
  double A[NI * NJ], O[NI * NJ], S[1] = {0}, wO[NI * NJ], ws = 0;
  for (int i = 0; i < NI * NJ; i++) A[i] = (double)(rnd() % 1000) * 0.25 - 100, O[i] = 0;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++) {
      double s = 0, r = 0;
      for (int k = 0; k < (i + j) % 4; k++) s = s + A[i * NJ + j] * k;
      for (int k = 0; k < NJ; k++) r = r + A[i * NJ + k];
      wO[i * NJ + j] = s + r;
    }
  for (int i = 0; i < NI * NJ; i++) ws = ws + A[i];
  void *bufs[3] = {O, A, S};
  run_chunks(&p->kernels[0], bufs, varv, NI, 4);
  run_chunks(&p->kernels[1], bufs, varv, 1, 1);
  CHECK_EQ_INT(cmp_buf("2-d", FRIT_F64, wO, O, NI * NJ), 0);
  CHECK_EQ_INT(cmp_buf("rank 0", FRIT_F64, &ws, S, 1), 0);
  double O0[NI * NJ] = {0}, S0[1] = {0};
  size_t sz[3] = {NI * NJ, NI * NJ, 1};
  frit_scalar_kind kk[3] = {FRIT_F64, FRIT_F64, FRIT_F64};
  interp_cmp("2-d", ast, 3, (void *[]){O0, A, S0}, sz, kk, bufs, bind, 2, 1);
  interp_cmp("rank 0", ast0, 3, (void *[]){O0, A, S0}, sz, kk, bufs, bind, 2, 4);
}

/* ---------- vectorisable inner loop: plain C the compiler optimises ---------- */

static void test_plain_loop(void) {
  frit_uop *gO = gl(0, FRIT_F32), *gA = gl(1, FRIT_F32);
  frit_uop *R0 = kr(64);
  frit_uop *Rj = rng(ci(256), 1, FRIT_AXIS_LOOP);
  frit_uop *f = B(FRIT_OP_ADD, B(FRIT_OP_MUL, R0, ci(256)), Rj);
  frit_uop *ast = sink(end1(SEQ(end1(SEQ(st(ix(gO, f), B(FRIT_OP_ADD, B(FRIT_OP_MUL, ld(ix(gA, f)), cf(FRIT_F32, 2)),
                                                              cf(FRIT_F32, 1)))),
                                     Rj)),
                            R0));
  frit_cg_program *p = compile(&ast, 1, NULL, 0);
  CHECK(p != NULL);
  if (!p) return;
  char path[512], cmd[2048], ver[256] = "";
  /* -fopt-info-vec is GCC's report */
  snprintf(cmd, sizeof cmd, "%s --version 2>&1", cfg.cc);
  FILE *vp = popen(cmd, "r");
  if (vp) {
    size_t nv = fread(ver, 1, sizeof ver - 1, vp);
    ver[nv] = 0;
    pclose(vp);
  }
  if (strstr(ver, "clang")) return;
  snprintf(path, sizeof path, "%s/vec.c", cache_dir);
  FILE *fp = fopen(path, "w");
  CHECK(fp != NULL);
  if (!fp) return;
  fputs(p->source, fp);
  fclose(fp);
  snprintf(cmd, sizeof cmd, "%s %s -fopt-info-vec-optimized -c -o /dev/null %s 2>&1", cfg.cc, cfg.cflags, path);
  FILE *pp = popen(cmd, "r");
  char out[8192];
  size_t nr = pp ? fread(out, 1, sizeof out - 1, pp) : 0;
  out[nr] = 0;
  if (pp) pclose(pp);
  CHECK(strstr(out, "loop vectorized") != NULL);
  unlink(path);
}

/* ---------- atomics of every op on every dtype under contention ---------- */

static const frit_scalar_kind akinds[] = {FRIT_BOOL, FRIT_I8,  FRIT_I16, FRIT_I32,  FRIT_I64, FRIT_U8,  FRIT_U16,
                                          FRIT_U32,  FRIT_U64, FRIT_F16, FRIT_BF16, FRIT_F32, FRIT_F64};
enum { NAK = (int)(sizeof akinds / sizeof akinds[0]), NBIN = 3 };

static bool isfl(frit_scalar_kind k) { return k >= FRIT_F16 && k <= FRIT_F64; }
static uint64_t kmask(frit_scalar_kind k) {
  int b = frit_kind_bytes(k) * 8;
  return b >= 64 ? UINT64_MAX : (UINT64_C(1) << b) - 1;
}

/* The oracle's combine: the op on two values of kind k (integers wrap; floats exact here). */
static frit_scalar combine(frit_scalar_kind k, frit_atomic_op op, frit_scalar a, frit_scalar b) {
  if (op == FRIT_ATOMIC_XCHG) return b;
  if (isfl(k)) {
    frit_scalar r;
    if (op == FRIT_ATOMIC_ADD) r.f = a.f + b.f;
    else if (isnan(a.f) || isnan(b.f)) r.f = NAN;
    else if (a.f == b.f) r.f = (op == FRIT_ATOMIC_MAX) == !signbit(a.f) ? a.f : b.f; /* +0 > -0 */
    else r.f = (op == FRIT_ATOMIC_MAX) == (a.f > b.f) ? a.f : b.f;
    return r;
  }
  uint64_t x = frit_scalar_to_bits(a, k), y = frit_scalar_to_bits(b, k), z = 0;
  bool sg = k >= FRIT_I8 && k <= FRIT_I64;
  if (k == FRIT_BOOL) {
    z = op == FRIT_ATOMIC_MIN || op == FRIT_ATOMIC_AND ? (x & y) : op == FRIT_ATOMIC_XOR ? (x ^ y) : (x | y);
  } else if (op == FRIT_ATOMIC_ADD) {
    z = x + y;
  } else if (op == FRIT_ATOMIC_AND) {
    z = x & y;
  } else if (op == FRIT_ATOMIC_OR) {
    z = x | y;
  } else if (op == FRIT_ATOMIC_XOR) {
    z = x ^ y;
  } else {
    bool lt = sg ? a.i < b.i : a.u < b.u;
    z = (op == FRIT_ATOMIC_MIN) == lt ? x : y;
  }
  return frit_scalar_from_bits(z & kmask(k), k);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static uint64_t canon_bits(frit_scalar v, frit_scalar_kind k) { return isfl(k) && isnan(v.f) ? 1 : frit_scalar_to_bits(v, k); }

typedef struct acase {
  frit_scalar_kind k;
  frit_atomic_op op;
  int n;
  frit_uop *ast;
} acase;

static void test_atomics(void) {
  acase cs[NAK * FRIT_ATOMIC_COUNT_];
  frit_uop *asts[NAK * FRIT_ATOMIC_COUNT_];
  int nc = 0;
  for (int ki = 0; ki < NAK; ki++)
    for (int op = 0; op < FRIT_ATOMIC_COUNT_; op++) {
      frit_scalar_kind k = akinds[ki];
      if (isfl(k) && (op == FRIT_ATOMIC_AND || op == FRIT_ATOMIC_OR || op == FRIT_ATOMIC_XOR)) continue;
      int n = k == FRIT_BF16 ? 600 : k == FRIT_F16 ? 3000 : 20000;
      frit_uop *R0 = kr(n);
      frit_uop *gH = gl(0, (frit_dtype)k), *gO = gl(1, (frit_dtype)k), *gV = gl(2, (frit_dtype)k);
      frit_uop *v = ld(ix(gV, R0));
      frit_uop *old = at((frit_atomic_op)op, ix(gH, B(FRIT_OP_MOD, R0, ci(NBIN))), v);
      cs[nc] = (acase){k, (frit_atomic_op)op, n, sink(end1(SEQ(v, old, st(ix(gO, R0), old)), R0))};
      asts[nc] = cs[nc].ast;
      nc++;
    }
  frit_cg_program *p = compile(asts, nc, NULL, 0);
  CHECK(p != NULL);
  if (!p) return;
  for (int c = 0; c < nc; c++) {
    frit_scalar_kind k = cs[c].k;
    frit_atomic_op op = cs[c].op;
    int n = cs[c].n;
    size_t sz = (size_t)frit_kind_bytes(k);
    uint8_t *V = calloc((size_t)n, sz), *O = calloc((size_t)n, sz), H[NBIN * 8], H0[NBIN * 8];
    frit_scalar init[NBIN];
    for (int b = 0; b < NBIN; b++) {
      if (isfl(k)) init[b].f = op == FRIT_ATOMIC_ADD ? (double)b - 1 : b == 1 ? 0.0 : (double)b * 3 - 2;
      else init[b] = frit_scalar_from_bits(rnd() & kmask(k), k);
      if (k == FRIT_BOOL) init[b].u = b != 0;
      frit_scalar_store(H + b * sz, k, init[b]);
    }
    memcpy(H0, H, sizeof H);
    for (int i = 0; i < n; i++) {
      frit_scalar x;
      int b = i % NBIN;
      if (k == FRIT_BOOL) x.u = b == 2 ? 1 : rnd() & 1;
      else if (!isfl(k)) x = frit_scalar_from_bits(rnd() & kmask(k), k);
      else if (op == FRIT_ATOMIC_ADD) x.f = (double)(int)(rnd() % (k == FRIT_BF16 ? 3 : k == FRIT_F16 ? 4 : 101)) - 1 -
                                          (k == FRIT_F32 || k == FRIT_F64 ? 49 : 0);
      else if (b == 1) x.f = rnd() & 1 ? 0.0 : -0.0; /* zeros of both signs: max +0, min -0 */
      else if (b == 0 && i == 300) x.f = NAN;
      else x.f = frit_scalar_normalize((frit_scalar){.f = ((double)(rnd() % 20001) - 10000) / 64}, (frit_dtype)k).f;
      frit_scalar_store(V + (size_t)i * sz, k, x);
    }
    void *bufs[3] = {H, O, V};
    run_threads(&p->kernels[c], bufs, n, 8);
    /* final value: the fold of all values in index order (every op here is order-independent;
       XCHG: the chain below pins it down) */
    frit_scalar want[NBIN];
    for (int b = 0; b < NBIN; b++) want[b] = init[b];
    for (int i = 0; i < n; i++)
      want[i % NBIN] = combine(k, op, want[i % NBIN], frit_scalar_load(V + (size_t)i * sz, k));
    char what[64], dn[16];
    snprintf(what, sizeof what, "atomic %d on %s", (int)op, frit_dtype_name((frit_dtype)k, dn, sizeof dn));
    int bad = 0;
    for (int b = 0; b < NBIN && op != FRIT_ATOMIC_XCHG; b++)
      if (canon_bits(want[b], k) != canon_bits(frit_scalar_load(H + b * sz, k), k)) {
        if (bad++ < 2)
          fprintf(stderr, "%s bin %d: want %g got %g\n", what, b, isfl(k) ? want[b].f : (double)want[b].i,
                  isfl(k) ? frit_scalar_load(H + b * sz, k).f : (double)frit_scalar_load(H + b * sz, k).i);
      }
    /* the old values form a chain per bin: {init} + {op(old_i, v_i)} == {old_i} + {final} */
    for (int b = 0; b < NBIN; b++) {
      int cnt = 0;
      uint64_t *l = malloc(sizeof *l * (size_t)(n / NBIN + 2)), *r = malloc(sizeof *r * (size_t)(n / NBIN + 2));
      l[cnt] = canon_bits(init[b], k), r[cnt] = canon_bits(frit_scalar_load(H + b * sz, k), k), cnt++;
      for (int i = b; i < n; i += NBIN) {
        frit_scalar o = frit_scalar_load(O + (size_t)i * sz, k);
        l[cnt] = canon_bits(combine(k, op, o, frit_scalar_load(V + (size_t)i * sz, k)), k);
        r[cnt] = canon_bits(o, k);
        cnt++;
      }
      qsort(l, (size_t)cnt, sizeof *l, cmp_u64);
      qsort(r, (size_t)cnt, sizeof *r, cmp_u64);
      if (memcmp(l, r, sizeof *l * (size_t)cnt) != 0 && bad++ < 2) fprintf(stderr, "%s bin %d: old values do not chain\n", what, b);
      free(l), free(r);
    }
    CHECK_EQ_INT(bad, 0);
    if (op != FRIT_ATOMIC_XCHG && (c % 3 == 0 || k == FRIT_F16 || k == FRIT_BOOL)) {
      uint8_t *O0 = calloc((size_t)n, sz);
      interp_cmp(what, cs[c].ast, 3, (void *[]){H0, O0, V}, (size_t[]){NBIN, (size_t)n, (size_t)n},
                 (frit_scalar_kind[]){k, k, k}, bufs, NULL, 0, 1);
      free(O0);
    }
    free(V), free(O);
  }
}

/* ---------- an unlisted read of written memory is re-read at each use ---------- */

static void test_volatile(void) {
  frit_uop *gX = gl(0, FRIT_I64), *gY = gl(1, FRIT_I64);
  frit_uop *R0 = kr(10);
  frit_uop *u = ld(ix(gX, R0)); /* not listed in the SEQ */
  frit_uop *ast = sink(end1(SEQ(st(ix(gX, R0), B(FRIT_OP_ADD, u, ci(1))), st(ix(gY, R0), u)), R0));
  frit_cg_program *p = compile(&ast, 1, NULL, 0);
  CHECK(p != NULL);
  if (!p) return;
  int64_t X[10], Y[10] = {0}, X0[10], Y0[10] = {0};
  for (int i = 0; i < 10; i++) X[i] = X0[i] = i * 7 - 20;
  void *bufs[2] = {X, Y};
  run_chunks(&p->kernels[0], bufs, NULL, 10, 3);
  for (int i = 0; i < 10; i++) CHECK(X[i] == X0[i] + 1 && Y[i] == X0[i] + 1);
  interp_cmp("volatile", ast, 2, (void *[]){X0, Y0}, (size_t[]){10, 10}, (frit_scalar_kind[]){FRIT_I64, FRIT_I64}, bufs,
             NULL, 0, 3);
}

/* ---------- errors ---------- */

static void test_errors(void) {
  frit_uop *gO = gl(0, FRIT_I32);
  frit_uop *R0 = kr(8), *Rj = rng(ci(3), 1, FRIT_AXIS_LOOP);
  /* BREAK of a loop that does not enclose it */
  frit_uop *bad1 = sink(end1(SEQ(end1(SEQ(st(ix(gO, R0), frit_const_int(ctx, FRIT_I32, 1))), Rj), brk(Rj)), R0));
  frit_cg_program *p = frit_codegen_generate(ctx, &bad1, NULL, 1, NULL, 0);
  CHECK(p == NULL && strstr(frit_error(ctx), "BREAK") != NULL);
  frit_clear_error(ctx);
  /* BREAK of a kernel axis */
  frit_uop *bad2 = sink(end1(SEQ(brk(R0)), R0));
  p = frit_codegen_generate(ctx, &bad2, NULL, 1, NULL, 0);
  CHECK(p == NULL && strstr(frit_error(ctx), "kernel axis") != NULL);
  frit_clear_error(ctx);
}

/* Does the interpreter run structured kernels (src/interp/interp_seq.c)? */
static bool probe_interp(void) {
  frit_uop *gO = gl(0, FRIT_I32);
  frit_uop *R0 = kr(2);
  frit_uop *ast = sink(end1(SEQ(st(ix(gO, R0), frit_const_int(ctx, FRIT_I32, 5))), R0));
  int32_t o[2] = {0, 0};
  void *b[1] = {o};
  frit_status s = frit_interpret(ctx, ast, b, (size_t[]){2}, 1, NULL, 0, NULL);
  if (s != FRIT_OK) {
    fprintf(stderr, "the interpreter cannot run a structured kernel: %s\n", frit_error(ctx));
    frit_clear_error(ctx);
    return false;
  }
  return o[0] == 5 && o[1] == 5;
}

int main(void) {
  ctx = frit_ctx_new();
  snprintf(cache_dir, sizeof cache_dir, "/tmp/frit-test-structured-%ld", (long)getpid());
  mkdir(cache_dir, 0755);
  frit_compile_opts opts = {0};
  opts.cache_dir = cache_dir;
  CHECK_EQ_INT(frit_codegen_config(ctx, &opts, &cfg), FRIT_OK);
  interp_ok = probe_interp();
  CHECK(interp_ok); /* src/interp/interp_seq.c: every case below is also compared with it */
  test_loops();
  test_order();
  test_if_gates();
  test_multidim();
  test_plain_loop();
  test_atomics();
  test_volatile();
  test_errors();
  frit_codegen_cache_clear(ctx, cache_dir);
  rmdir(cache_dir);
  frit_ctx_free(ctx);
  CHECK_DONE();
}
