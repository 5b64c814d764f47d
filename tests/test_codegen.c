/* Tests of the C backend: kernel ASTs built by hand are generated, compiled and run, and every
 * output buffer is compared with the reference interpreter (the oracle) on the same AST and
 * inputs -- all ALU ops and casts on all dtypes with edge values, reductions, gated loads,
 * symbolic extents, g0 chunks, scans, IF; plus vectorisation of the emitted loops and the caches. */
#include "check.h"
#include "codegen/codegen.h"
#include "interp/scalar.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static frit_ctx *ctx;
static frit_cg_config cfg;
static char cache_dir[256];

#define PTR(dt) frit_dtype_ptr((dt), FRIT_ADDR_GLOBAL)

static frit_uop *node(frit_op op, frit_dtype dt, frit_uop *const *src, int n, frit_arg a) {
  frit_uop *u = frit_uop_new(ctx, op, dt, src, n, &a);
  if (!u) fprintf(stderr, "build %s failed: %s\n", frit_op_name(op), frit_error(ctx));
  return u;
}
static frit_arg A(int64_t i0, int64_t i1) { return (frit_arg){.i0 = i0, .i1 = i1}; }
static frit_uop *ci(int64_t v) { return frit_const_int(ctx, FRIT_I64, v); }
static frit_uop *global(int k, frit_dtype elem) { return node(FRIT_OP_DEFINE_GLOBAL, PTR(elem), NULL, 0, A(k, -1)); }
static frit_uop *idx(frit_uop *p, frit_uop *i) { return node(FRIT_OP_INDEX, frit_uop_dtype(p), (frit_uop *[]){p, i}, 2, A(0, 0)); }
static frit_uop *idxg(frit_uop *p, frit_uop *i, frit_uop *g) {
  return node(FRIT_OP_INDEX, frit_uop_dtype(p), (frit_uop *[]){p, i, g}, 3, A(0, 0));
}
static frit_uop *load(frit_uop *ix) { return node(FRIT_OP_LOAD, frit_dtype_scalar(frit_uop_dtype(ix)), &ix, 1, A(0, 0)); }
static frit_uop *store(frit_uop *ix, frit_uop *v) { return node(FRIT_OP_STORE, FRIT_VOID, (frit_uop *[]){ix, v}, 2, A(0, 0)); }
static frit_uop *end1(frit_uop *e, frit_uop *r) { return node(FRIT_OP_END, FRIT_VOID, (frit_uop *[]){e, r}, 2, A(0, 0)); }
static frit_uop *end2(frit_uop *e, frit_uop *r1, frit_uop *r2) {
  return node(FRIT_OP_END, FRIT_VOID, (frit_uop *[]){e, r1, r2}, 3, A(0, 0));
}
static frit_uop *sink1(frit_uop *a) { return frit_sink(ctx, &a, 1); }
static frit_uop *bin(frit_op op, frit_uop *a, frit_uop *b) { return frit_binary(ctx, op, a, b); }
static frit_uop *reduce(frit_op op, frit_uop *v, frit_uop *r) {
  return node(FRIT_OP_REDUCE, frit_uop_dtype(v), (frit_uop *[]){v, r}, 2, A(op, 0));
}

/* ---------- buffers and the differential runner ---------- */

typedef struct tbuf {
  frit_dtype dt;
  size_t n;
  uint8_t *init;
} tbuf;

typedef struct tcase {
  frit_uop *ast;
  int nb;
  tbuf b[4];
  double tol;  /* relative tolerance for floats (0: bit-exact, NaN == NaN) */
  double atol; /* absolute tolerance added to it (sums whose terms cancel) */
  char what[96];
} tcase;

static size_t esz(frit_dtype dt) { return (size_t)frit_kind_bytes(frit_dtype_kind(dt)); }

static tbuf mkbuf(frit_dtype dt, size_t n, const frit_scalar *vals, size_t nvals) {
  tbuf b = {dt, n, calloc(n + 1, esz(dt))};
  for (size_t i = 0; vals && i < n; i++)
    frit_scalar_store(b.init + i * esz(dt), frit_dtype_kind(dt), frit_scalar_normalize(vals[i % nvals], dt));
  return b;
}

static bool same_value(frit_scalar_kind k, frit_scalar x, frit_scalar y, double tol, double atol) {
  if (k >= FRIT_F16 && k <= FRIT_F64) {
    if (isnan(x.f) || isnan(y.f)) return isnan(x.f) && isnan(y.f);
    if (tol == 0) return frit_scalar_to_bits(x, k) == frit_scalar_to_bits(y, k);
    if (x.f == y.f) return true;
    return fabs(x.f - y.f) <= tol * fmax(fabs(x.f), fabs(y.f)) + atol + 1e-30;
  }
  return frit_scalar_to_bits(x, k) == frit_scalar_to_bits(y, k);
}

static frit_status compile_cases(tcase *cs, int n, frit_uop *const *vars, int nvars, frit_cg_program **out) {
  frit_uop **asts = malloc((size_t)n * sizeof *asts);
  for (int i = 0; i < n; i++) asts[i] = cs[i].ast;
  frit_cg_program *p = frit_codegen_generate(ctx, asts, NULL, n, vars, nvars);
  free(asts);
  if (!p) {
    fprintf(stderr, "generate failed: %s\n", frit_error(ctx));
    return frit_last_status(ctx);
  }
  frit_status st = frit_codegen_compile(ctx, p, &cfg);
  if (st != FRIT_OK) fprintf(stderr, "compile failed: %s\n", frit_error(ctx));
  *out = p;
  return st;
}

/* Runs every case compiled (g0 split into `chunks` pieces, called last chunk first) and
 * interpreted, and compares all buffers. */
static void run_cases(tcase *cs, int n, const frit_binding *binds, int nbind, frit_uop *const *vars, int nvars,
                      int chunks) {
  frit_cg_program *p = NULL;
  frit_status st = compile_cases(cs, n, vars, nvars, &p);
  CHECK_EQ_INT(st, FRIT_OK);
  if (st != FRIT_OK) return;
  int64_t varv[8] = {0};
  for (int i = 0; i < nvars; i++)
    for (int j = 0; j < nbind; j++)
      if (strcmp((const char *)frit_uop_arg(vars[i])->blob, binds[j].name) == 0) varv[i] = binds[j].value;
  for (int c = 0; c < n; c++) {
    tcase *t = &cs[c];
    void *bi[4], *bc[4];
    size_t sizes[4];
    for (int k = 0; k < t->nb; k++) {
      size_t bytes = t->b[k].n * esz(t->b[k].dt);
      bi[k] = malloc(bytes + 8), bc[k] = malloc(bytes + 8);
      memcpy(bi[k], t->b[k].init, bytes);
      memcpy(bc[k], t->b[k].init, bytes);
      sizes[k] = t->b[k].n;
    }
    frit_status ist = frit_interpret(ctx, t->ast, bi, sizes, t->nb, binds, nbind, NULL);
    if (ist != FRIT_OK) fprintf(stderr, "%s: interpret: %s\n", t->what, frit_error(ctx));
    CHECK_EQ_INT(ist, FRIT_OK);
    frit_scalar ext;
    st = frit_interpret(ctx, p->kernels[c].g0_extent, NULL, NULL, 0, binds, nbind, &ext);
    CHECK_EQ_INT(st, FRIT_OK);
    int64_t E = ext.i, per = (E + chunks - 1) / chunks;
    if (per < 1) per = 1;
    for (int64_t b = ((E - 1) / per) * per; b >= 0; b -= per) p->kernels[c].fn(bc, varv, b, b + per < E ? b + per : E);
    int bad = 0;
    for (int k = 0; k < t->nb && ist == FRIT_OK; k++) {
      frit_scalar_kind kind = frit_dtype_kind(t->b[k].dt);
      for (size_t i = 0; i < t->b[k].n; i++) {
        frit_scalar x = frit_scalar_load((uint8_t *)bi[k] + i * esz(t->b[k].dt), kind);
        frit_scalar y = frit_scalar_load((uint8_t *)bc[k] + i * esz(t->b[k].dt), kind);
        if (!same_value(kind, x, y, t->tol, t->atol)) {
          if (bad++ < 4)
            fprintf(stderr, "%s: buffer %d [%zu]: interp %.17g (0x%llx) vs compiled %.17g (0x%llx)\n", t->what, k, i,
                    kind >= FRIT_F16 ? x.f : (double)x.i, (unsigned long long)frit_scalar_to_bits(x, kind),
                    kind >= FRIT_F16 ? y.f : (double)y.i, (unsigned long long)frit_scalar_to_bits(y, kind));
        }
      }
    }
    CHECK_EQ_INT(bad, 0);
    for (int k = 0; k < t->nb; k++) free(bi[k]), free(bc[k]);
  }
  for (int c = 0; c < n; c++)
    for (int k = 0; k < cs[c].nb; k++) free(cs[c].b[k].init);
}

/* ---------- edge values ---------- */

static const frit_scalar_kind all_kinds[] = {FRIT_BOOL, FRIT_I8,  FRIT_I16, FRIT_I32,  FRIT_I64, FRIT_U8,  FRIT_U16,
                                             FRIT_U32,  FRIT_U64, FRIT_F16, FRIT_BF16, FRIT_F32, FRIT_F64};
#define NKINDS (int)(sizeof all_kinds / sizeof all_kinds[0])

static int edge_values(frit_scalar_kind k, frit_scalar *v) {
  int n = 0;
  if (k >= FRIT_F16) {
    static const double f[] = {0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.7, -7.25, 1e-3, 65504.0, 65520.0, 1e30, -1e30,
                               3e9, -3e9, 1e19, 255.5, -0.9, 6e-8, 1e-40, 1e300, -1e300, 2.0, 100.0};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) v[n++].f = f[i];
    v[n++].f = INFINITY, v[n++].f = -INFINITY, v[n++].f = NAN;
    return n;
  }
  static const int64_t s[] = {0, 1, -1, 2, -2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, -100, 127, -128,
                              255, 32767, -32768, 65535, INT32_MAX, INT32_MIN, UINT32_MAX, INT64_MAX, INT64_MIN,
                              (INT64_C(1) << 53) + 1, 1234567};
  for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) v[n++].i = s[i];
  return n;
}

/* an elementwise kernel out[i] = f(a[i], b[i]) over all pairs of edge values */
static tcase pair_case(frit_scalar_kind k, frit_uop *(*f)(frit_op, frit_uop *, frit_uop *), frit_op op) {
  tcase t;
  memset(&t, 0, sizeof t);
  frit_scalar e[64], av[4096], bv[4096];
  int ne = edge_values(k, e);
  size_t n = (size_t)ne * (size_t)ne;
  for (size_t i = 0; i < n; i++) av[i] = e[i / (size_t)ne], bv[i] = e[i % (size_t)ne];
  frit_uop *r = frit_range(ctx, ci((int64_t)n), 0, FRIT_AXIS_GLOBAL);
  frit_uop *pa = global(1, k), *pb = global(2, k);
  frit_uop *x = f(op, load(idx(pa, r)), load(idx(pb, r)));
  if (!x) {
    frit_clear_error(ctx);
    return t;
  }
  frit_uop *po = global(0, frit_dtype_scalar(frit_uop_dtype(x)));
  t.ast = sink1(end1(store(idx(po, r), x), r));
  t.nb = 3;
  t.b[0] = mkbuf(frit_uop_dtype(x), n, NULL, 0);
  t.b[1] = mkbuf(k, n, av, n);
  t.b[2] = mkbuf(k, n, bv, n);
  char dn[32];
  snprintf(t.what, sizeof t.what, "%s %s", frit_op_name(op), frit_dtype_name(k, dn, sizeof dn));
  /* the C backend's own f32 exp/exp2/log/log2/sin/cos/tan/tanh/erf/asin/acos/atan/sinh/cosh/
   * pow/atan2 are within 1 ulp of the exact value (docs/semantics.md) */
  if ((op == FRIT_OP_EXP || op == FRIT_OP_EXP2 || op == FRIT_OP_LOG || op == FRIT_OP_LOG2 || op == FRIT_OP_SIN ||
       op == FRIT_OP_COS || op == FRIT_OP_TAN || op == FRIT_OP_TANH || op == FRIT_OP_ERF || op == FRIT_OP_POW ||
       op == FRIT_OP_ASIN || op == FRIT_OP_ACOS || op == FRIT_OP_ATAN || op == FRIT_OP_SINH || op == FRIT_OP_COSH ||
       op == FRIT_OP_ATAN2) &&
      k != FRIT_F64)
    t.tol = k == FRIT_F32 ? 3e-7 : k == FRIT_F16 ? 2e-3 : 1.6e-2;
  /* and its own f64 exp, exp2, log, log2, tanh, sinh, cosh, atan, atan2, asin and acos (libm's
     are scalar calls): within 1 ulp of the exact value, so within 2 of libm's */
  if ((op == FRIT_OP_EXP || op == FRIT_OP_EXP2 || op == FRIT_OP_LOG || op == FRIT_OP_LOG2 || op == FRIT_OP_TANH ||
       op == FRIT_OP_SINH || op == FRIT_OP_COSH || op == FRIT_OP_ATAN || op == FRIT_OP_ATAN2 || op == FRIT_OP_ASIN ||
       op == FRIT_OP_ACOS) &&
      k == FRIT_F64)
    t.tol = 4.5e-16;
  return t;
}

static frit_uop *f_bin(frit_op op, frit_uop *a, frit_uop *b) { return bin(op, a, b); }
static frit_uop *f_un(frit_op op, frit_uop *a, frit_uop *b) {
  (void)b;
  return frit_unary(ctx, op, a);
}
static frit_uop *f_tern(frit_op op, frit_uop *a, frit_uop *b) {
  if (op == FRIT_OP_WHERE) return frit_ternary(ctx, op, bin(FRIT_OP_CMPLT, a, b), a, b);
  return frit_ternary(ctx, op, a, b, a);
}
static void test_alu_all_dtypes(void) {
  static const frit_op un[] = {FRIT_OP_NEG,  FRIT_OP_NOT,  FRIT_OP_ABS,  FRIT_OP_SQRT,  FRIT_OP_RSQRT, FRIT_OP_RECIP,
                               FRIT_OP_EXP,  FRIT_OP_EXP2, FRIT_OP_LOG,  FRIT_OP_LOG2,  FRIT_OP_SIN,   FRIT_OP_COS,
                               FRIT_OP_TAN,  FRIT_OP_ASIN, FRIT_OP_ACOS, FRIT_OP_ATAN,  FRIT_OP_SINH,  FRIT_OP_COSH,
                               FRIT_OP_TANH, FRIT_OP_ERF,  FRIT_OP_FLOOR, FRIT_OP_CEIL, FRIT_OP_TRUNC, FRIT_OP_RINT};
  static const frit_op bi[] = {FRIT_OP_ADD, FRIT_OP_SUB, FRIT_OP_MUL,   FRIT_OP_FDIV,  FRIT_OP_IDIV,  FRIT_OP_MOD,
                               FRIT_OP_MAX, FRIT_OP_MIN, FRIT_OP_POW,   FRIT_OP_ATAN2, FRIT_OP_AND,   FRIT_OP_OR,
                               FRIT_OP_XOR, FRIT_OP_SHL, FRIT_OP_SHR,   FRIT_OP_CMPLT, FRIT_OP_CMPLE, FRIT_OP_CMPEQ,
                               FRIT_OP_CMPNE};
  int total = 0;
  for (int ki = 0; ki < NKINDS; ki++) {
    frit_scalar_kind k = all_kinds[ki];
    tcase cs[64];
    int n = 0;
    for (size_t i = 0; i < sizeof un / sizeof un[0]; i++) {
      tcase t = pair_case(k, f_un, un[i]);
      if (t.ast) cs[n++] = t;
    }
    for (size_t i = 0; i < sizeof bi / sizeof bi[0]; i++) {
      tcase t = pair_case(k, f_bin, bi[i]);
      if (t.ast) cs[n++] = t;
    }
    tcase t = pair_case(k, f_tern, FRIT_OP_WHERE);
    if (t.ast) cs[n++] = t;
    t = pair_case(k, f_tern, FRIT_OP_MULACC);
    if (t.ast) cs[n++] = t;
    total += n;
    run_cases(cs, n, NULL, 0, NULL, 0, 3);
  }
  CHECK(total > 300);
}

static void test_casts(void) {
  for (int ki = 0; ki < NKINDS; ki++) {
    frit_scalar_kind from = all_kinds[ki];
    tcase cs[2 * NKINDS];
    int n = 0;
    frit_scalar e[64];
    int ne = edge_values(from, e);
    for (int kj = 0; kj < NKINDS; kj++) {
      frit_scalar_kind to = all_kinds[kj];
      for (int bc = 0; bc < 2; bc++) {
        if (bc && frit_kind_bytes(from) != frit_kind_bytes(to)) continue;
        frit_uop *r = frit_range(ctx, ci(ne), 0, FRIT_AXIS_GLOBAL);
        frit_uop *x = load(idx(global(1, from), r));
        frit_uop *y = frit_uop_new(ctx, bc ? FRIT_OP_BITCAST : FRIT_OP_CAST, to, &x, 1, NULL);
        if (!y) {
          frit_clear_error(ctx);
          continue;
        }
        tcase t;
        memset(&t, 0, sizeof t);
        t.ast = sink1(end1(store(idx(global(0, to), r), y), r));
        t.nb = 2;
        t.b[0] = mkbuf(to, (size_t)ne, NULL, 0);
        t.b[1] = mkbuf(from, (size_t)ne, e, (size_t)ne);
        char d1[32], d2[32];
        snprintf(t.what, sizeof t.what, "%s %s->%s", bc ? "BITCAST" : "CAST", frit_dtype_name(from, d1, 32),
                 frit_dtype_name(to, d2, 32));
        cs[n++] = t;
      }
    }
    run_cases(cs, n, NULL, 0, NULL, 0, 2);
  }
}

/* out[i] = REDUCE_op over j of a[i*M + j], for every op and dtype; float sums may be reassociated */
static void test_reductions(void) {
  static const frit_op ops[] = {FRIT_OP_ADD, FRIT_OP_MUL, FRIT_OP_MAX, FRIT_OP_MIN, FRIT_OP_AND, FRIT_OP_OR, FRIT_OP_XOR};
  const int64_t N = 7, M = 37;
  for (int ki = 0; ki < NKINDS; ki++) {
    frit_scalar_kind k = all_kinds[ki];
    tcase cs[8];
    int n = 0;
    frit_scalar e[64], vals[512];
    int ne = edge_values(k, e);
    for (int i = 0; i < N * M; i++) {
      /* mostly small values (so products stay finite), with edge values mixed into two rows */
      if (i / M >= 5) vals[i] = e[(i * 7) % ne];
      else if (k >= FRIT_F16) vals[i].f = ((i * 37) % 17 - 8) / 8.0;
      else vals[i].i = (i * 37) % 17 - 3;
    }
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
      bool fl = k >= FRIT_F16;
      if (fl && (ops[o] == FRIT_OP_AND || ops[o] == FRIT_OP_OR || ops[o] == FRIT_OP_XOR)) continue;
      frit_uop *ri = frit_range(ctx, ci(N), 0, FRIT_AXIS_GLOBAL);
      frit_uop *rj = frit_range(ctx, ci(M), 1, FRIT_AXIS_REDUCE);
      frit_uop *x = load(idx(global(1, k), bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, ri, ci(M)), rj)));
      tcase t;
      memset(&t, 0, sizeof t);
      t.ast = sink1(end1(store(idx(global(0, k), ri), reduce(ops[o], x, rj)), ri));
      t.nb = 2;
      t.b[0] = mkbuf(k, (size_t)N, NULL, 0);
      t.b[1] = mkbuf(k, (size_t)(N * M), vals, (size_t)(N * M));
      t.tol = fl && (ops[o] == FRIT_OP_ADD || ops[o] == FRIT_OP_MUL) ? 1e-5 : 0;
      char dn[32];
      snprintf(t.what, sizeof t.what, "REDUCE %s %s", frit_op_name(ops[o]), frit_dtype_name(k, dn, 32));
      cs[n++] = t;
    }
    run_cases(cs, n, NULL, 0, NULL, 0, 3);
  }
}

/* Gated loads (padding), symbolic extents, a transposing 2-D kernel, a matmul, a scan through a
 * register accumulator, a two-pass kernel through AFTER, and IF. */
static void test_structures(void) {
  frit_uop *nv = frit_var(ctx, "n", 1, 1000);
  frit_uop *mv = frit_var(ctx, "m", 1, 1000);
  frit_uop *vars[2] = {nv, mv};
  frit_binding binds[2] = {{"n", 37}, {"m", 5}};
  tcase cs[10];
  int nc = 0;
  frit_scalar vals[4096];
  for (int i = 0; i < 4096; i++) vals[i].f = (double)((i * 29) % 23) - 11.5;
  /* padding: out[i] = 2 <= i < n+2 ? a[i-2] : -1, over n+4 elements */
  {
    frit_uop *r = frit_range(ctx, bin(FRIT_OP_ADD, nv, ci(4)), 0, FRIT_AXIS_GLOBAL);
    frit_uop *g = bin(FRIT_OP_AND, bin(FRIT_OP_CMPLE, ci(2), r), bin(FRIT_OP_CMPLT, r, bin(FRIT_OP_ADD, nv, ci(2))));
    frit_uop *ix = idxg(global(1, FRIT_F32), bin(FRIT_OP_SUB, r, ci(2)), g);
    frit_uop *ld = node(FRIT_OP_LOAD, FRIT_F32, (frit_uop *[]){ix, frit_const_float(ctx, FRIT_F32, -1)}, 2, A(0, 0));
    tcase *t = &cs[nc++];
    memset(t, 0, sizeof *t);
    t->ast = sink1(end1(store(idx(global(0, FRIT_F32), r), ld), r));
    t->nb = 2, t->b[0] = mkbuf(FRIT_F32, 41, NULL, 0), t->b[1] = mkbuf(FRIT_F32, 37, vals, 4096);
    snprintf(t->what, sizeof t->what, "gated load");
  }
  /* transpose: out[i*n + j] = a[j*m + i], i < m (GLOBAL), j < n */
  {
    frit_uop *ri = frit_range(ctx, mv, 0, FRIT_AXIS_GLOBAL), *rj = frit_range(ctx, nv, 1, FRIT_AXIS_LOOP);
    frit_uop *x = load(idx(global(1, FRIT_F32), bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, rj, mv), ri)));
    frit_uop *y = frit_unary(ctx, FRIT_OP_EXP, x);
    tcase *t = &cs[nc++];
    memset(t, 0, sizeof *t);
    t->ast = sink1(end2(store(idx(global(0, FRIT_F32), bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, ri, nv), rj)), y), ri, rj));
    t->nb = 2, t->b[0] = mkbuf(FRIT_F32, 185, NULL, 0), t->b[1] = mkbuf(FRIT_F32, 185, vals, 4096);
    snprintf(t->what, sizeof t->what, "transpose exp");
    t->tol = 3e-7; /* exp: within 1 ulp, docs/semantics.md */
  }
  /* matmul: c[i, j] = sum_k a[i, k] * b[k, j]; (m x n) @ (n x 6), f64 */
  {
    frit_uop *ri = frit_range(ctx, mv, 0, FRIT_AXIS_GLOBAL), *rj = frit_range(ctx, ci(6), 1, FRIT_AXIS_LOOP);
    frit_uop *rk = frit_range(ctx, nv, 2, FRIT_AXIS_REDUCE);
    frit_uop *a = load(idx(global(1, FRIT_F64), bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, ri, nv), rk)));
    frit_uop *b = load(idx(global(2, FRIT_F64), bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, rk, ci(6)), rj)));
    frit_uop *s = reduce(FRIT_OP_ADD, bin(FRIT_OP_MUL, a, b), rk);
    tcase *t = &cs[nc++];
    memset(t, 0, sizeof *t);
    t->ast = sink1(end2(store(idx(global(0, FRIT_F64), bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, ri, ci(6)), rj)), s), ri, rj));
    t->nb = 3, t->b[0] = mkbuf(FRIT_F64, 30, NULL, 0), t->b[1] = mkbuf(FRIT_F64, 185, vals, 4096);
    t->b[2] = mkbuf(FRIT_F64, 222, vals + 7, 4000);
    t->tol = 1e-12;
    snprintf(t->what, sizeof t->what, "matmul");
  }
  /* register-array accumulation (matmul with a static output row of 40, and a max over k with
     NaNs in f16): the rewrite must fire and keep results bit for bit */
  for (int v = 0; v < 2; v++) {
    frit_dtype dt = v ? FRIT_F16 : FRIT_F32;
    frit_uop *ri = frit_range(ctx, mv, 0, FRIT_AXIS_GLOBAL), *rj = frit_range(ctx, ci(40), 1, FRIT_AXIS_LOOP);
    frit_uop *rk = frit_range(ctx, nv, 2, FRIT_AXIS_REDUCE);
    frit_uop *a = load(idx(global(1, dt), bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, ri, nv), rk)));
    frit_uop *b = load(idx(global(2, dt), bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, rk, ci(40)), rj)));
    frit_uop *s = reduce(v ? FRIT_OP_MAX : FRIT_OP_ADD, bin(FRIT_OP_MUL, a, b), rk);
    tcase *t = &cs[nc++];
    memset(t, 0, sizeof *t);
    t->ast = sink1(end2(store(idx(global(0, dt), bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, ri, ci(40)), rj)), s), ri, rj));
    frit_scalar wv[4096];
    for (int i = 0; i < 4096; i++) wv[i].f = i % 97 == 0 ? NAN : vals[i].f * 0.37;
    t->nb = 3, t->b[0] = mkbuf(dt, 200, NULL, 0), t->b[1] = mkbuf(dt, 185, vals, 4096);
    t->b[2] = mkbuf(dt, 1480, wv, 4096);
    snprintf(t->what, sizeof t->what, "register-array %s", v ? "max f16" : "matmul f32");
    frit_uop *g0e = NULL;
    frit_uop *o = frit_codegen_optimize(ctx, t->ast, &g0e);
    const char *txt = o ? frit_ir_to_string(ctx, o) : NULL;
    CHECK(txt && strstr(txt, "define_reg") != NULL);
  }
  /* inclusive scan through a register: acc = acc + a[i]; out[i] = acc (i32) */
  {
    frit_uop *rg = node(FRIT_OP_DEFINE_REG, frit_dtype_ptr(FRIT_I32, FRIT_ADDR_REG), NULL, 0, A(0, 1));
    frit_uop *r = frit_range(ctx, nv, 0, FRIT_AXIS_LOOP);
    frit_uop *acc = load(idx(rg, ci(0)));
    frit_uop *nx = bin(FRIT_OP_ADD, acc, load(idx(global(1, FRIT_I32), r)));
    frit_uop *st = store(idx(rg, ci(0)), nx);
    frit_uop *so = node(FRIT_OP_STORE, FRIT_VOID, (frit_uop *[]){idx(global(0, FRIT_I32), r), nx, st}, 3, A(0, 0));
    frit_scalar iv[64];
    for (int i = 0; i < 64; i++) iv[i].i = i % 3 == 0 ? INT32_MAX : i * 1000 - 7;
    tcase *t = &cs[nc++];
    memset(t, 0, sizeof *t);
    t->ast = sink1(end1(so, r));
    t->nb = 2, t->b[0] = mkbuf(FRIT_I32, 37, NULL, 0), t->b[1] = mkbuf(FRIT_I32, 37, iv, 64);
    snprintf(t->what, sizeof t->what, "scan");
  }
  /* two passes: tmp[i] = a[i] * 3; then out[i] = tmp[n-1-i] + tmp[i] (read through AFTER) */
  {
    frit_uop *r0 = frit_range(ctx, nv, 0, FRIT_AXIS_LOOP), *r1 = frit_range(ctx, nv, 1, FRIT_AXIS_LOOP);
    frit_uop *tmp = global(2, FRIT_F32);
    frit_uop *e1 = end1(store(idx(tmp, r0), bin(FRIT_OP_MUL, load(idx(global(1, FRIT_F32), r0)), frit_const_float(ctx, FRIT_F32, 3))), r0);
    frit_uop *ta = node(FRIT_OP_AFTER, frit_uop_dtype(tmp), (frit_uop *[]){tmp, e1}, 2, A(0, 0));
    frit_uop *rd = bin(FRIT_OP_ADD, load(idx(ta, bin(FRIT_OP_SUB, bin(FRIT_OP_SUB, nv, ci(1)), r1))), load(idx(ta, r1)));
    frit_uop *e2 = end1(store(idx(global(0, FRIT_F32), r1), rd), r1);
    tcase *t = &cs[nc++];
    memset(t, 0, sizeof *t);
    t->ast = frit_sink(ctx, (frit_uop *[]){e1, e2}, 2);
    t->nb = 3, t->b[0] = mkbuf(FRIT_F32, 37, NULL, 0), t->b[1] = mkbuf(FRIT_F32, 37, vals, 4096);
    t->b[2] = mkbuf(FRIT_F32, 37, NULL, 0);
    snprintf(t->what, sizeof t->what, "two passes via AFTER");
  }
  /* IF: for i < n: if a[i] > 0 then out[i] = a[i] else out[i] = 0 - a[i]/0 ... (u8 with div by 0) */
  {
    frit_uop *r = frit_range(ctx, nv, 0, FRIT_AXIS_GLOBAL);
    frit_uop *a = load(idx(global(1, FRIT_U8), r));
    frit_uop *c = bin(FRIT_OP_CMPLT, frit_const_int(ctx, FRIT_U8, 100), a);
    frit_uop *s1 = store(idx(global(0, FRIT_U8), r), bin(FRIT_OP_IDIV, a, frit_const_int(ctx, FRIT_U8, 0)));
    frit_uop *s2 = store(idx(global(0, FRIT_U8), r), bin(FRIT_OP_MUL, a, a));
    frit_uop *iff = node(FRIT_OP_IF, FRIT_VOID, (frit_uop *[]){c, s1, s2}, 3, A(0, 0));
    frit_scalar uv[64];
    for (int i = 0; i < 64; i++) uv[i].u = (uint64_t)(i * 53 % 256);
    tcase *t = &cs[nc++];
    memset(t, 0, sizeof *t);
    t->ast = sink1(end1(iff, r));
    t->nb = 2, t->b[0] = mkbuf(FRIT_U8, 37, uv + 3, 61), t->b[1] = mkbuf(FRIT_U8, 37, uv, 64);
    snprintf(t->what, sizeof t->what, "IF");
  }
  run_cases(cs, nc, binds, 2, vars, 2, 4);
}

/* ---------- vectorisation of the emitted code ---------- */

static int count_in(const char *s, const char *what) {
  int c = 0;
  for (const char *p = s; (p = strstr(p, what)); p += strlen(what)) c++;
  return c;
}

static void test_vectorized(void) {
  /* out[i] = a[i] * b[i] + 1 (f32) and out[i] = sum_j a[i*512 + j] (f32) */
  frit_uop *r = frit_range(ctx, ci(4096), 0, FRIT_AXIS_GLOBAL);
  frit_uop *x = bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, load(idx(global(1, FRIT_F32), r)), load(idx(global(2, FRIT_F32), r))),
                    frit_const_float(ctx, FRIT_F32, 1));
  frit_uop *k0 = sink1(end1(store(idx(global(0, FRIT_F32), r), x), r));
  frit_uop *ri = frit_range(ctx, ci(64), 0, FRIT_AXIS_GLOBAL), *rj = frit_range(ctx, ci(512), 1, FRIT_AXIS_REDUCE);
  frit_uop *y = load(idx(global(1, FRIT_F32), bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, ri, ci(512)), rj)));
  frit_uop *k1 = sink1(end1(store(idx(global(0, FRIT_F32), ri), reduce(FRIT_OP_ADD, y, rj)), ri));
  frit_uop *asts[2] = {k0, k1};
  frit_cg_program *p = frit_codegen_generate(ctx, asts, NULL, 2, NULL, 0);
  CHECK(p != NULL);
  if (!p) return;
  /* the sum in lane form (a lane array, no reduction clause, four vector loops of its lanes a
   * run: sum_vectors), and the elementwise loop: all plain `omp simd` */
  CHECK_EQ_INT(count_in(p->source, "#pragma omp simd\n"), 5);
  CHECK_EQ_INT(count_in(p->source, "frit_lanesum_f32(acc"), 1);
  CHECK_EQ_INT(count_in(p->source, "reduction(+:acc"), 0);
  char path[400], cmd[1200];
  snprintf(path, sizeof path, "%s/vec_check.c", cache_dir);
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (!f) return;
  fputs(p->source, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "%s %s -fopt-info-vec-optimized -c -o /dev/null %s 2>&1", cfg.cc, cfg.cflags, path);
  FILE *pp = popen(cmd, "r");
  char out[8192];
  size_t n = pp ? fread(out, 1, sizeof out - 1, pp) : 0;
  out[n] = 0;
  if (pp) pclose(pp);
  /* one message per vectorised loop: the elementwise loop and the reduction's four */
  int vec = count_in(out, "loop vectorized");
  if (vec < 5) fprintf(stderr, "vectorizer report:\n%s\nsource:\n%s\n", out, p->source);
  CHECK(vec >= 5);
  unlink(path);
}

/* ---------- tiling, unrolling, fused reductions, pow(x, 1.5) ---------- */

static frit_uop *mm_case(tcase *t, frit_dtype dt, int64_t M, int64_t N, frit_uop *K, int64_t kmax, frit_op rop,
                         bool epilogue, const char *what) {
  frit_scalar vals[4096], wv[4096];
  for (int i = 0; i < 4096; i++) {
    vals[i].f = (double)((i * 29) % 23) - 11.5;
    wv[i].f = i % 97 == 0 && rop == FRIT_OP_MAX ? NAN : (double)((i * 13) % 31) * 0.37 - 5;
  }
  frit_uop *ri = frit_range(ctx, ci(M), 0, FRIT_AXIS_GLOBAL), *rj = frit_range(ctx, ci(N), 1, FRIT_AXIS_LOOP);
  frit_uop *rk = frit_range(ctx, K, 2, FRIT_AXIS_REDUCE);
  frit_uop *a = load(idx(global(1, dt), bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, ri, K), rk)));
  frit_uop *b = load(idx(global(2, dt), bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, rk, ci(N)), rj)));
  frit_uop *v = reduce(rop, bin(FRIT_OP_MUL, a, b), rk);
  if (epilogue) { /* relu(acc + bias[j]) */
    v = bin(FRIT_OP_ADD, v, load(idx(global(3, dt), rj)));
    v = bin(FRIT_OP_MAX, v, frit_const_float(ctx, dt, 0));
  }
  memset(t, 0, sizeof *t);
  t->ast = sink1(end2(store(idx(global(0, dt), bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, ri, ci(N)), rj)), v), ri, rj));
  t->nb = epilogue ? 4 : 3;
  t->b[0] = mkbuf(dt, (size_t)(M * N), NULL, 0), t->b[1] = mkbuf(dt, (size_t)(M * kmax), vals, 4096);
  t->b[2] = mkbuf(dt, (size_t)(kmax * N), wv, 4096);
  if (epilogue) t->b[3] = mkbuf(dt, (size_t)N, vals + 5, 100);
  snprintf(t->what, sizeof t->what, "%s", what);
  return t->ast;
}

static void test_opt_passes(void) {
  frit_uop *nv = frit_var(ctx, "n", 1, 1000);
  frit_binding binds[1] = {{"n", 37}};
  tcase cs[12];
  int nc = 0;
  /* register tiling: N a multiple of the vector lanes, k symbolic (37) and static (odd); M = 40
   * and 13 are no multiples of the 6-row tile: their last tile's rows are clamped */
  struct { frit_dtype dt; int64_t M, N; bool symk; frit_op rop; bool epi; const char *what; } mm[] = {
      {FRIT_F32, 40, 48, true, FRIT_OP_ADD, true, "tiled matmul f32 + bias + relu"},
      {FRIT_F64, 12, 32, false, FRIT_OP_MAX, false, "tiled max-product f64, k = 13"},
      {FRIT_I32, 64, 64, true, FRIT_OP_ADD, false, "tiled matmul i32"},
      {FRIT_F32, 13, 48, true, FRIT_OP_ADD, false, "tiled matmul M = 13"},
  };
  for (size_t c = 0; c < sizeof mm / sizeof mm[0]; c++) {
    tcase *t = &cs[nc++];
    frit_uop *ast = mm_case(t, mm[c].dt, mm[c].M, mm[c].N, mm[c].symk ? nv : ci(13), mm[c].symk ? 37 : 13, mm[c].rop,
                            mm[c].epi, mm[c].what);
    /* compiled float sums of products accumulate by fused multiply-add where the machine has FMA
     * (docs/semantics.md), the interpreter rounds the product: an ulp or two per term */
    if (mm[c].dt == FRIT_F32 && mm[c].rop == FRIT_OP_ADD) t->tol = 1e-6, t->atol = 1e-4;
    frit_uop *g0e = NULL;
    frit_uop *o = frit_codegen_optimize(ctx, ast, &g0e);
    /* the tiler replaced the thread axis by blocks of row tiles (M = 13 with 16 lanes a vector
     * gets one vector a row, in 6-row tiles: 8 rows, its default, would be too tall for 13) */
    CHECK(o && g0e && frit_uop_op(g0e) == FRIT_OP_CONST && frit_uop_arg(g0e)->value.i < mm[c].M);
  }
  /* out[i, c, j] = sum_k a[i,k] b[k,j] + s[c]: the range next to j (c) is static and long, but
   * no reduction reads it: the rows are the thread axis i again (tiled, g0 = row blocks) */
  {
    tcase *t = &cs[nc++];
    memset(t, 0, sizeof *t);
    frit_uop *ri = frit_range(ctx, ci(24), 0, FRIT_AXIS_GLOBAL), *rc = frit_range(ctx, ci(12), 1, FRIT_AXIS_LOOP);
    frit_uop *rj = frit_range(ctx, ci(16), 2, FRIT_AXIS_LOOP), *rk = frit_range(ctx, ci(20), 3, FRIT_AXIS_REDUCE);
    frit_uop *a = load(idx(global(1, FRIT_F32), bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, ri, ci(20)), rk)));
    frit_uop *b = load(idx(global(2, FRIT_F32), bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, rk, ci(16)), rj)));
    frit_uop *v = bin(FRIT_OP_ADD, reduce(FRIT_OP_ADD, bin(FRIT_OP_MUL, a, b), rk), load(idx(global(3, FRIT_F32), rc)));
    frit_uop *o = bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, ri, ci(12)), rc), ci(16)), rj);
    frit_uop *st = store(idx(global(0, FRIT_F32), o), v);
    t->ast = sink1(node(FRIT_OP_END, FRIT_VOID, (frit_uop *[]){st, ri, rc, rj}, 4, frit_arg_none()));
    frit_scalar xv[4096];
    for (int q = 0; q < 4096; q++) xv[q].f = (double)((q * 29) % 23) - 11.5;
    t->nb = 4, t->b[0] = mkbuf(FRIT_F32, 24 * 12 * 16, NULL, 0), t->b[1] = mkbuf(FRIT_F32, 24 * 20, xv, 4096);
    t->b[2] = mkbuf(FRIT_F32, 20 * 16, xv + 7, 4000), t->b[3] = mkbuf(FRIT_F32, 12, xv + 3, 100);
    t->tol = 1e-6, t->atol = 1e-4;
    snprintf(t->what, sizeof t->what, "tiled matmul with a middle axis no reduction reads");
    frit_uop *g0e = NULL;
    CHECK(frit_codegen_optimize(ctx, t->ast, &g0e) && frit_uop_arg(g0e)->value.i < 24);
  }
  /* not tiled: M = 5, shorter than two tiles (the untiled paths stay correct) */
  {
    tcase *t = &cs[nc++];
    frit_uop *ast = mm_case(t, FRIT_F32, 5, 48, nv, 37, FRIT_OP_ADD, false, "matmul M = 5");
    frit_uop *g0e = NULL;
    CHECK(frit_codegen_optimize(ctx, ast, &g0e) && frit_uop_arg(g0e)->value.i == 5);
  }
  /* n-body shape: out[i, c] = sum_j (x[j,c] - x[i,c]) / sqrt(sum_k (x[j,k] - x[i,k])^2 + 1), c, k < 3:
   * the size-3 output axis is unrolled into three reductions sharing one j loop, the k reduction
   * into its fold chain (exact), the j loop is a vector reduction (reassociated: tolerance) */
  frit_uop *nbody = NULL, *nbody2 = NULL, *nbody3 = NULL;
  for (int v = 0; v < 4; v++) {
    frit_uop *ri = frit_range(ctx, nv, 0, FRIT_AXIS_GLOBAL), *rc = frit_range(ctx, ci(3), 1, FRIT_AXIS_LOOP);
    frit_uop *rj = frit_range(ctx, nv, 2, FRIT_AXIS_REDUCE), *rk = frit_range(ctx, ci(3), 3, FRIT_AXIS_REDUCE);
    frit_uop *X = global(1, FRIT_F32);
    frit_uop *dk = bin(FRIT_OP_SUB, load(idx(X, bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, rj, ci(3)), rk))),
                       load(idx(X, bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, ri, ci(3)), rk))));
    frit_uop *d2 = bin(FRIT_OP_ADD, reduce(FRIT_OP_ADD, bin(FRIT_OP_MUL, dk, dk), rk), frit_const_float(ctx, FRIT_F32, 1));
    frit_uop *dc = bin(FRIT_OP_SUB, load(idx(X, bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, rj, ci(3)), rc))),
                       load(idx(X, bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, ri, ci(3)), rc))));
    /* v = 1: a max reduction over j (no vector clause: bit-exact) */
    frit_uop *f = reduce(v == 1 ? FRIT_OP_MAX : FRIT_OP_ADD, bin(FRIT_OP_FDIV, dc, frit_unary(ctx, FRIT_OP_SQRT, d2)), rj);
    tcase *t = &cs[nc++];
    memset(t, 0, sizeof *t);
    frit_uop *oix = bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, ri, ci(3)), rc);
    frit_uop *eff = store(idx(global(0, FRIT_F32), oix), f);
    /* v = 2: two outputs, as the n-body step's v' = v + f dt and x' = x + v' dt: a GROUP of two
     * stores, unrolled all the same (else the distance is computed once per component) */
    frit_uop *v2 = bin(FRIT_OP_ADD, load(idx(global(2, FRIT_F32), oix)), bin(FRIT_OP_MUL, f, frit_const_float(ctx, FRIT_F32, 0.5)));
    frit_uop *x2 = bin(FRIT_OP_ADD, load(idx(X, oix)), bin(FRIT_OP_MUL, v2, frit_const_float(ctx, FRIT_F32, 0.25)));
    if (v == 2)
      eff = node(FRIT_OP_GROUP, FRIT_VOID, (frit_uop *[]){store(idx(global(0, FRIT_F32), oix), v2), store(idx(global(3, FRIT_F32), oix), x2)},
                 2, frit_arg_none());
    /* v = 3: a sibling output without the size-3 axis (out3[i] = X[i*3] * 2) is stored once */
    if (v == 3)
      eff = node(FRIT_OP_GROUP, FRIT_VOID,
                 (frit_uop *[]){store(idx(global(0, FRIT_F32), oix), v2),
                                store(idx(global(3, FRIT_F32), ri), bin(FRIT_OP_MUL, load(idx(X, bin(FRIT_OP_MUL, ri, ci(3)))),
                                                                          frit_const_float(ctx, FRIT_F32, 2)))},
                 2, frit_arg_none());
    t->ast = sink1(end2(eff, ri, rc));
    frit_scalar xv[111];
    for (int i = 0; i < 111; i++) xv[i].f = (double)((i * 37) % 101) / 7.0 - 6;
    t->nb = v >= 2 ? 4 : 2, t->b[0] = mkbuf(FRIT_F32, 111, NULL, 0), t->b[1] = mkbuf(FRIT_F32, 111, xv, 111);
    if (v >= 2) t->b[2] = mkbuf(FRIT_F32, 111, xv + 5, 100), t->b[3] = mkbuf(FRIT_F32, 111, NULL, 0);
    t->tol = v == 1 ? 0 : 1e-5;
    /* terms of size ~1 cancel to sums of ~0.01, and the vector width (8 lanes with AVX2, 16 with
     * AVX-512) sets the summation order: the error is relative to the terms, not the sum */
    t->atol = v == 1 ? 0 : 1e-5;
    snprintf(t->what, sizeof t->what, "n-body shape (%s)",
             v == 1 ? "max" : v == 2 ? "sum, two outputs" : v ? "sum, and an output without the axis" : "sum");
    if (!v) nbody = t->ast;
    if (v == 2) nbody2 = t->ast;
    if (v == 3) nbody3 = t->ast;
  }
  /* column sums out[j] = sum_i a[i*48 + j]: the j loop is vectorised outside-in, bit-exact */
  {
    frit_uop *rj = frit_range(ctx, ci(48), 0, FRIT_AXIS_GLOBAL), *ri = frit_range(ctx, nv, 1, FRIT_AXIS_REDUCE);
    frit_uop *rj2 = frit_range(ctx, ci(48), 2, FRIT_AXIS_LOOP), *rb = frit_range(ctx, ci(2), 3, FRIT_AXIS_GLOBAL);
    (void)rj;
    frit_uop *x = load(idx(global(1, FRIT_F32), bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, ri, ci(48)), rj2)));
    frit_uop *s = reduce(FRIT_OP_ADD, x, ri);
    tcase *t = &cs[nc++];
    memset(t, 0, sizeof *t);
    t->ast = sink1(end2(store(idx(global(0, FRIT_F32), bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, rb, ci(48)), rj2)), s), rb, rj2));
    frit_scalar xv[4096];
    for (int i = 0; i < 4096; i++) xv[i].f = i % 5 == 0 ? 1e8 : (double)((i * 7) % 13) * 0.1;
    t->nb = 2, t->b[0] = mkbuf(FRIT_F32, 96, NULL, 0), t->b[1] = mkbuf(FRIT_F32, 37 * 48, xv, 4096);
    snprintf(t->what, sizeof t->what, "column sums");
  }
  frit_uop *asts[12];
  for (int i = 0; i < nc; i++) asts[i] = cs[i].ast;
  frit_cg_program *p = frit_codegen_generate(ctx, asts, NULL, nc, &nv, 1);
  CHECK(p != NULL);
  if (p) {
    /* the tiled kernel: TI accumulators in an outer-vectorised loop; the n-body kernel: three
     * accumulators in one vector loop, no loop over the size-3 axes left */
    CHECK(strstr(p->kernels[0].linear, "#pragma omp simd\n") != NULL);
    CHECK(count_in(p->kernels[0].linear, " = ((float)0x0p+0);") >= 8);
    const char *nb = NULL;
    for (int i = 0; i < nc; i++)
      if (cs[i].ast == nbody) nb = p->kernels[i].linear;
    /* (sums in lane form, linear_reduce.c sum_lanes: the j extent is symbolic, so the body is
     * there twice, for the whole runs of lanes and for the rest) */
    CHECK(nb && count_in(nb, "frit_lanesum_f32(acc") == 3 && count_in(nb, "#pragma omp simd\n") == 1);
    CHECK(nb && !strstr(nb, "< ((int64_t)3LL)"));
    const char *nb2 = NULL;
    for (int i = 0; i < nc; i++)
      if (cs[i].ast == nbody2) nb2 = p->kernels[i].linear;
    CHECK(nb2 && count_in(nb2, "frit_lanesum_f32(acc") == 3 && count_in(nb2, "#pragma omp simd\n") == 1);
    CHECK(nb2 && !strstr(nb2, "< ((int64_t)3LL)") && count_in(nb2, "sqrtf(") == 2);
    const char *nb3 = NULL;
    for (int i = 0; i < nc; i++)
      if (cs[i].ast == nbody3) nb3 = p->kernels[i].linear;
    CHECK(nb3 && count_in(nb3, "frit_lanesum_f32(acc") == 3 && !strstr(nb3, "< ((int64_t)3LL)"));
    CHECK(nb3 && count_in(nb3, "((float)0x1p+1)") == 1); /* the sibling's store, once */
    CHECK(strstr(p->kernels[nc - 1].linear, "#pragma omp simd\n") != NULL);
  }
  run_cases(cs, nc, binds, 1, &nv, 1, 3);
}

/* out[i, j] = x[i, j] * pow(s[0], t[0]): the reads of the 1-element parameters, which the kernel
 * does not write, and the powf on them leave the loops (Adam's bias corrections were computed per
 * element, a scalar libm call that also kept the loop scalar); with the element count unknown the
 * read stays where the interpreter does it. Both against the interpreter. */
static void test_invariant_reads(void) {
  tcase cs[2];
  for (int known = 1; known >= 0; known--) {
    frit_uop *ri = frit_range(ctx, ci(8), 0, FRIT_AXIS_GLOBAL), *rj = frit_range(ctx, ci(64), 1, FRIT_AXIS_LOOP);
    frit_uop *s = node(FRIT_OP_DEFINE_GLOBAL, PTR(FRIT_F32), NULL, 0, A(2, known ? 1 : -1));
    frit_uop *t = node(FRIT_OP_DEFINE_GLOBAL, PTR(FRIT_F32), NULL, 0, A(3, known ? 1 : -1));
    frit_uop *at = bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, ri, ci(64)), rj);
    frit_uop *v = bin(FRIT_OP_MUL, load(idx(global(1, FRIT_F32), at)), bin(FRIT_OP_POW, load(idx(s, ci(0))), load(idx(t, ci(0)))));
    tcase *c = &cs[1 - known];
    memset(c, 0, sizeof *c);
    c->ast = sink1(node(FRIT_OP_END, FRIT_VOID, (frit_uop *[]){store(idx(global(0, FRIT_F32), at), v), ri, rj}, 3, A(0, 0)));
    frit_scalar xv[512], sv = {.f = 0.9}, tv = {.f = 7};
    for (int i = 0; i < 512; i++) xv[i].f = (double)(i % 17) - 8.5;
    c->nb = 4, c->b[0] = mkbuf(FRIT_F32, 512, NULL, 0), c->b[1] = mkbuf(FRIT_F32, 512, xv, 512);
    c->b[2] = mkbuf(FRIT_F32, 1, &sv, 1), c->b[3] = mkbuf(FRIT_F32, 1, &tv, 1);
    c->tol = 1e-6;
    snprintf(c->what, sizeof c->what, "invariant reads (size %s)", known ? "known" : "unknown");
  }
  frit_uop *asts[2] = {cs[0].ast, cs[1].ast};
  frit_cg_program *p = frit_codegen_generate(ctx, asts, NULL, 2, NULL, 0);
  CHECK(p != NULL);
  if (p) {
    const char *hoisted = p->kernels[0].linear, *kept = p->kernels[1].linear;
    const char *pw = strstr(hoisted, "powf("), *loop = strstr(hoisted, "for (");
    CHECK(pw && loop && pw < loop);
    pw = strstr(kept, "powf("), loop = strstr(kept, "for (");
    CHECK(pw && loop && pw > loop);
  }
  run_cases(cs, 2, NULL, 0, NULL, 0, 3);
}

/* pow(x, 1.5) on f32 is x*sqrt(x) in double, rounded once: checked against powl (long double)
 * rounded to float -- the correctly rounded result -- and libm's special cases. */
static void test_pow15(void) {
  enum { N = 20000 };
  frit_uop *r = frit_range(ctx, ci(N), 0, FRIT_AXIS_GLOBAL);
  frit_uop *x = bin(FRIT_OP_POW, load(idx(global(1, FRIT_F32), r)), frit_const_float(ctx, FRIT_F32, 1.5));
  frit_uop *ast = sink1(end1(store(idx(global(0, FRIT_F32), r), x), r));
  frit_cg_program *p = frit_codegen_generate(ctx, &ast, NULL, 1, NULL, 0);
  CHECK(p && frit_codegen_compile(ctx, p, &cfg) == FRIT_OK);
  if (!p || !p->kernels[0].fn) return;
  CHECK(strstr(p->source, "frit_pow15f(") != NULL);
  float *in = malloc(N * sizeof *in), *out = malloc(N * sizeof *out);
  static const float sp[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, 4.0f, 66049.0f, 1e-45f, 3e38f, -2.0f};
  uint32_t s = 12345;
  for (int i = 0; i < N; i++) {
    s = s * 1664525u + 1013904223u;
    uint32_t bits = s & 0x7fffffffu;
    memcpy(&in[i], &bits, 4);
    if (i < (int)(sizeof sp / sizeof sp[0])) in[i] = sp[i];
  }
  void *bufs[2] = {out, in};
  p->kernels[0].fn(bufs, NULL, 0, N);
  int bad = 0;
  for (int i = 0; i < N; i++) {
    float want = isnan(in[i]) || isinf(in[i]) || in[i] <= 0 ? powf(in[i], 1.5f) : (float)powl((long double)in[i], 1.5L);
    bool ok = isnan(want) ? isnan(out[i]) : memcmp(&want, &out[i], 4) == 0;
    if (!ok && bad++ < 4) fprintf(stderr, "pow(%a, 1.5) = %a, want %a\n", in[i], out[i], want);
  }
  CHECK_EQ_INT(bad, 0);
  free(in);
  free(out);
}

/* A nest of small static loops (4 x 4 x 7 x 2 per g0 row) of f16 work: unrolling every loop of
 * it copied the body 224 times, each copy with its rounding helpers, and gcc took 20+ s. The
 * unrolled loops' factors must stay within the cap (16) and the results must equal the
 * interpreter's bit for bit. */
static void test_unroll_cap(void) {
  enum { G = 3, NA = 4, NB = 4, NC = 7, ND = 2, N = G * NA * NB * NC * ND };
  frit_uop *r[5] = {frit_range(ctx, ci(G), 0, FRIT_AXIS_GLOBAL), frit_range(ctx, ci(NA), 1, FRIT_AXIS_LOOP),
                    frit_range(ctx, ci(NB), 2, FRIT_AXIS_LOOP), frit_range(ctx, ci(NC), 3, FRIT_AXIS_LOOP),
                    frit_range(ctx, ci(ND), 4, FRIT_AXIS_LOOP)};
  static const int64_t ext[5] = {G, NA, NB, NC, ND};
  frit_uop *ix = r[0];
  for (int i = 1; i < 5; i++) ix = bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, ix, ci(ext[i])), r[i]);
  frit_uop *x = load(idx(global(1, FRIT_F16), ix)), *y = load(idx(global(2, FRIT_F16), ix));
  frit_uop *v = bin(FRIT_OP_MAX, bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, x, x), y), bin(FRIT_OP_SUB, bin(FRIT_OP_MUL, y, y), x));
  frit_uop *ast = sink1(node(FRIT_OP_END, FRIT_VOID, (frit_uop *[]){store(idx(global(0, FRIT_F16), ix), v), r[0], r[1], r[2], r[3], r[4]},
                             6, A(0, 0)));
  /* the nest as written: merged into one loop (opt_collapse.c), it would have nothing to unroll */
  setenv("FRIT_NO_COLLAPSE", "1", 1);
  frit_cg_program *p = frit_codegen_generate(ctx, &ast, NULL, 1, NULL, 0);
  unsetenv("FRIT_NO_COLLAPSE");
  CHECK(p != NULL);
  if (!p) return;
  int64_t product = 1;
  int pragmas = 0;
  for (const char *s = p->source; (s = strstr(s, "#pragma GCC unroll ")); s++, pragmas++)
    product *= strtol(s + strlen("#pragma GCC unroll "), NULL, 10);
  /* the innermost loop vectorises: no unroll pragma around it (linear.c: gcc 12 would unroll
   * first and vectorise neither copy); any unrolling left stays within the cap */
  CHECK(strstr(p->source, "#pragma omp simd") != NULL);
  for (const char *s = p->source; (s = strstr(s, "#pragma GCC unroll ")); s++) {
    const char *next_loop = strstr(s, "for (");
    const char *simd = strstr(s, "#pragma omp simd");
    CHECK(!simd || !next_loop || simd > strstr(next_loop + 1, "for ("));
  }
  CHECK(product <= 16);
  (void)pragmas;
  frit_scalar vals[61];
  for (int i = 0; i < 61; i++) vals[i].f = (i * 17 % 61 - 30) * 0.173;
  tcase t;
  memset(&t, 0, sizeof t);
  t.ast = ast, t.nb = 3;
  t.b[0] = mkbuf(FRIT_F16, N, NULL, 0), t.b[1] = mkbuf(FRIT_F16, N, vals, 61), t.b[2] = mkbuf(FRIT_F16, N, vals + 7, 50);
  snprintf(t.what, sizeof t.what, "f16 4x4x7x2 nest");
  run_cases(&t, 1, NULL, 0, NULL, 0, 2);
}

/* ---------- caches and errors ---------- */

static frit_uop *small_kernel(double c) {
  frit_uop *r = frit_range(ctx, ci(100), 0, FRIT_AXIS_GLOBAL);
  frit_uop *x = bin(FRIT_OP_ADD, load(idx(global(1, FRIT_F32), r)), frit_const_float(ctx, FRIT_F32, c));
  return sink1(end1(store(idx(global(0, FRIT_F32), r), x), r));
}

static void test_caches(void) {
  frit_uop *k = small_kernel(123.25);
  frit_cg_program *p1 = frit_codegen_generate(ctx, &k, NULL, 1, NULL, 0);
  CHECK(p1 && frit_codegen_compile(ctx, p1, &cfg) == FRIT_OK);
  CHECK_EQ_INT(p1->cache_hit, 0);
  frit_cg_program *p2 = frit_codegen_generate(ctx, &k, NULL, 1, NULL, 0);
  CHECK(p2 && frit_codegen_compile(ctx, p2, &cfg) == FRIT_OK);
  CHECK_EQ_INT(p2->cache_hit, 2); /* in memory */
  CHECK(p1->handle == p2->handle);
  /* a fresh ctx finds the object on disk */
  frit_ctx *c2 = frit_ctx_new();
  frit_cg_program *p3 = frit_codegen_generate(c2, (frit_uop *[]){frit_parse_ir(c2, frit_ir_to_string(ctx, k))}, NULL, 1, NULL, 0);
  frit_cg_config cfg2 = {cfg.cc, cfg.cflags, cfg.cache_dir};
  CHECK(p3 && frit_codegen_compile(c2, p3, &cfg2) == FRIT_OK);
  CHECK_EQ_INT(p3 ? p3->cache_hit : -1, 1);
  float in[100], o1[100], o3[100];
  for (int i = 0; i < 100; i++) in[i] = (float)i;
  p1->kernels[0].fn((void *[]){o1, in}, NULL, 0, 100);
  if (p3) p3->kernels[0].fn((void *[]){o3, in}, NULL, 0, 100);
  CHECK(memcmp(o1, o3, sizeof o1) == 0 && o1[5] == 128.25f);
  frit_ctx_free(c2);

  /* two processes compile the same new program at once into an empty cache */
  CHECK_EQ_INT(frit_codegen_cache_clear(ctx, cache_dir), FRIT_OK);
  frit_uop *k2 = small_kernel(-9.5);
  const char *text = frit_ir_to_string(ctx, k2);
  pid_t kids[2];
  for (int i = 0; i < 2; i++) {
    kids[i] = fork();
    if (kids[i] == 0) {
      frit_ctx *cc = frit_ctx_new();
      frit_uop *a = frit_parse_ir(cc, text);
      frit_cg_program *pp = a ? frit_codegen_generate(cc, &a, NULL, 1, NULL, 0) : NULL;
      frit_cg_config c3 = {cfg.cc, cfg.cflags, cfg.cache_dir};
      int ok = pp && frit_codegen_compile(cc, pp, &c3) == FRIT_OK;
      float o[100];
      if (ok) pp->kernels[0].fn((void *[]){o, in}, NULL, 0, 100);
      ok = ok && o[10] == 0.5f;
      frit_ctx_free(cc);
      _exit(ok ? 0 : 1);
    }
  }
  for (int i = 0; i < 2; i++) {
    int status = -1;
    waitpid(kids[i], &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  frit_cg_program *p4 = frit_codegen_generate(ctx, &k2, NULL, 1, NULL, 0);
  CHECK(p4 && frit_codegen_compile(ctx, p4, &cfg) == FRIT_OK);
  CHECK_EQ_INT(p4 ? p4->cache_hit : -1, 1);

  /* compiler errors carry the compiler's message */
  frit_cg_config bad = cfg;
  bad.cflags = "-O1 -include /nonexistent/frit_missing.h";
  frit_uop *k3 = small_kernel(7);
  frit_cg_program *p5 = frit_codegen_generate(ctx, &k3, NULL, 1, NULL, 0);
  CHECK(p5 != NULL);
  CHECK_EQ_INT(p5 ? frit_codegen_compile(ctx, p5, &bad) : FRIT_OK, FRIT_ERR_RUNTIME);
  CHECK(strstr(frit_error(ctx), "frit_missing.h") != NULL);
  frit_clear_error(ctx);
  CHECK_EQ_INT(frit_codegen_cache_clear(ctx, cache_dir), FRIT_OK);
}

/* The autotuner's choices as text: the tuning cache's form round-trips, bad text is refused. */
static void test_choices_text(void) {
  frit_cg_choices c = {0}, d;
  char buf[256];
  frit_cg_choices_format(&c, buf, sizeof buf);
  CHECK(!strcmp(buf, "default"));
  CHECK(frit_cg_choices_parse(buf, &d) && !memcmp(&c, &d, sizeof c));
  c = (frit_cg_choices){.tile = -1, .tile_rows = 5, .tile_vecs = 1, .tile_block = 16, .tile_order = 1, .unroll = -1,
                        .regacc = -1, .threads = 1};
  frit_cg_choices_format(&c, buf, sizeof buf);
  CHECK(!strcmp(buf, "tile=-1 rows=5 vecs=1 block=16 order=1 unroll=-1 regacc=-1 threads=1"));
  CHECK(frit_cg_choices_parse(buf, &d) && !memcmp(&c, &d, sizeof c));
  CHECK(frit_cg_choices_parse("block=4 rows=3\n", &d) && d.tile_block == 4 && d.tile_rows == 3 && d.tile_vecs == 0);
  CHECK(!frit_cg_choices_parse("rows=banana", &d));
  CHECK(!frit_cg_choices_parse("colour=3", &d));
  CHECK(!frit_cg_choices_parse("rows=65", &d));
  CHECK(!frit_cg_choices_parse("rows=", &d));
}

int main(void) {
  ctx = frit_ctx_new();
  snprintf(cache_dir, sizeof cache_dir, "/tmp/frit-test-codegen-%ld", (long)getpid());
  mkdir(cache_dir, 0755);
  frit_compile_opts opts = {0};
  opts.cache_dir = cache_dir;
  CHECK_EQ_INT(frit_codegen_config(ctx, &opts, &cfg), FRIT_OK);
  test_vectorized();
  test_opt_passes();
  test_pow15();
  test_invariant_reads();
  test_unroll_cap();
  test_structures();
  test_reductions();
  test_casts();
  test_alu_all_dtypes();
  test_caches();
  test_choices_text();
  frit_codegen_cache_clear(ctx, cache_dir);
  rmdir(cache_dir);
  frit_ctx_free(ctx);
  CHECK_DONE();
}
