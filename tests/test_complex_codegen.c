/* Tests of complex64/complex128 in the C backend: kernels of every complex ALU op, casts and
 * sum/product reductions are generated, compiled and run, and compared with the reference
 * interpreter on the same AST (itself checked against real-arithmetic formulas in
 * test_complex.c); a*b+c and the sum are also checked against formulas written out here. */
#include "check.h"
#include "codegen/codegen.h"
#include "interp/scalar.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static frit_ctx *ctx;
static frit_cg_config cfg;

#define PTR(dt) frit_dtype_ptr((dt), FRIT_ADDR_GLOBAL)
enum { N = 1000 }; /* more than one pairwise block of 256 */

static frit_arg A(int64_t i0, int64_t i1) { return (frit_arg){.i0 = i0, .i1 = i1}; }
static frit_uop *node(frit_op op, frit_dtype dt, frit_uop *const *src, int n, frit_arg a) {
  frit_uop *u = frit_uop_new(ctx, op, dt, src, n, &a);
  if (!u) fprintf(stderr, "build %s failed: %s\n", frit_op_name(op), frit_error(ctx));
  return u;
}
static frit_uop *ci(int64_t v) { return frit_const_int(ctx, FRIT_I64, v); }
static frit_uop *global(int k, frit_dtype elem) { return node(FRIT_OP_DEFINE_GLOBAL, PTR(elem), NULL, 0, A(k, -1)); }
static frit_uop *idx(frit_uop *p, frit_uop *i) { return node(FRIT_OP_INDEX, frit_uop_dtype(p), (frit_uop *[]){p, i}, 2, A(0, 0)); }
static frit_uop *load(frit_uop *ix) { return node(FRIT_OP_LOAD, frit_dtype_scalar(frit_uop_dtype(ix)), &ix, 1, A(0, 0)); }
static frit_uop *store(frit_uop *ix, frit_uop *v) { return node(FRIT_OP_STORE, FRIT_VOID, (frit_uop *[]){ix, v}, 2, A(0, 0)); }
static frit_uop *end1(frit_uop *e, frit_uop *r) { return node(FRIT_OP_END, FRIT_VOID, (frit_uop *[]){e, r}, 2, A(0, 0)); }
static frit_uop *sink1(frit_uop *a) { return frit_sink(ctx, &a, 1); }

static size_t esz(frit_dtype dt) { return (size_t)frit_kind_bytes(frit_dtype_kind(dt)); }

/* Input i of a complex buffer: moderate values of both signs, some on the axes. */
static frit_scalar input(int i, int which) {
  frit_scalar s;
  s.c.re = ((i * 37 + which * 11) % 23 - 11) / 8.0;
  s.c.im = (i % 5 == 0) ? 0.0 : ((i * 13 + which * 7) % 19 - 9) / 6.0;
  return s;
}

static bool close_to(double x, double y, double tol) {
  if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
  if (isinf(x) || isinf(y)) return x == y;
  return fabs(x - y) <= tol * (1 + fmax(fabs(x), fabs(y)));
}

/* Compiles `ast` (bufs[0] the output), runs it and the interpreter on copies of bufs and
 * compares the output buffers (complex: both parts) within tol. Returns the compiled output. */
static void *run_both(const char *what, frit_uop *ast, int nb, frit_dtype *dts, void **bufs, double tol) {
  frit_cg_program *p = frit_codegen_generate(ctx, &ast, NULL, 1, NULL, 0);
  if (!p) fprintf(stderr, "%s: generate: %s\n", what, frit_error(ctx));
  CHECK(p != NULL);
  if (!p) return NULL;
  frit_status st = frit_codegen_compile(ctx, p, &cfg);
  if (st != FRIT_OK) fprintf(stderr, "%s: compile: %s\n", what, frit_error(ctx));
  CHECK_EQ_INT(st, FRIT_OK);
  if (st != FRIT_OK) return NULL;
  void *bi[4], *bc[4];
  size_t sizes[4];
  for (int k = 0; k < nb; k++) {
    bi[k] = malloc(N * esz(dts[k])), bc[k] = malloc(N * esz(dts[k]));
    memcpy(bi[k], bufs[k], N * esz(dts[k]));
    memcpy(bc[k], bufs[k], N * esz(dts[k]));
    sizes[k] = N;
  }
  CHECK_EQ_INT(frit_interpret(ctx, ast, bi, sizes, nb, NULL, 0, NULL), FRIT_OK);
  frit_scalar ext;
  CHECK_EQ_INT(frit_interpret(ctx, p->kernels[0].g0_extent, NULL, NULL, 0, NULL, 0, &ext), FRIT_OK);
  p->kernels[0].fn(bc, (int64_t[8]){0}, 0, ext.i);
  frit_scalar_kind k = frit_dtype_kind(dts[0]);
  bool cx = k == FRIT_C64 || k == FRIT_C128;
  int bad = 0;
  for (int i = 0; i < N; i++) {
    frit_scalar x = frit_scalar_load((char *)bi[0] + i * esz(dts[0]), k);
    frit_scalar y = frit_scalar_load((char *)bc[0] + i * esz(dts[0]), k);
    bool ok = cx ? close_to(x.c.re, y.c.re, tol) && close_to(x.c.im, y.c.im, tol)
                 : frit_dtype_is_float(dts[0]) ? close_to(x.f, y.f, tol) : x.i == y.i;
    if (!ok && bad++ < 3)
      fprintf(stderr, "%s [%d]: interp %.9g%+.9gi vs compiled %.9g%+.9gi\n", what, i, x.c.re, cx ? x.c.im : 0,
              y.c.re, cx ? y.c.im : 0);
  }
  if (bad) fprintf(stderr, "%s: %d mismatches\n", what, bad);
  CHECK_EQ_INT(bad, 0);
  for (int j = 1; j < nb; j++) free(bi[j]), free(bc[j]);
  free(bi[0]);
  return bc[0];
}

static void *mkbuf(frit_dtype dt, int which) {
  void *b = calloc(N, esz(dt));
  for (int i = 0; i < N; i++)
    frit_scalar_store((char *)b + i * esz(dt), frit_dtype_kind(dt), frit_scalar_normalize(input(i, which), dt));
  return b;
}

static void test_elementwise(frit_scalar_kind k) {
  static const frit_op un[] = {FRIT_OP_NEG, FRIT_OP_ABS, FRIT_OP_SQRT, FRIT_OP_RSQRT, FRIT_OP_RECIP, FRIT_OP_EXP,
                               FRIT_OP_EXP2, FRIT_OP_LOG, FRIT_OP_LOG2, FRIT_OP_SIN, FRIT_OP_COS, FRIT_OP_TAN,
                               FRIT_OP_ASIN, FRIT_OP_ACOS, FRIT_OP_ATAN, FRIT_OP_SINH, FRIT_OP_COSH, FRIT_OP_TANH};
  static const frit_op bi[] = {FRIT_OP_ADD, FRIT_OP_SUB, FRIT_OP_MUL, FRIT_OP_FDIV, FRIT_OP_POW, FRIT_OP_CMPEQ, FRIT_OP_CMPNE};
  double tol = k == FRIT_C64 ? 1e-5 : 1e-13;
  char what[64], dn[16];
  frit_dtype_name(k, dn, sizeof dn);
  void *in[3] = {NULL, mkbuf(k, 1), mkbuf(k, 2)};
  for (size_t o = 0; o < sizeof un / sizeof un[0] + sizeof bi / sizeof bi[0]; o++) {
    bool unary = o < sizeof un / sizeof un[0];
    frit_op op = unary ? un[o] : bi[o - sizeof un / sizeof un[0]];
    bool cmp = op == FRIT_OP_CMPEQ || op == FRIT_OP_CMPNE;
    frit_dtype out = cmp ? FRIT_BOOL : k;
    frit_uop *r = frit_range(ctx, ci(N), 0, FRIT_AXIS_GLOBAL);
    frit_uop *a = load(idx(global(1, k), r)), *b = load(idx(global(2, k), r));
    frit_uop *v = unary ? frit_unary(ctx, op, a) : frit_binary(ctx, op, a, cmp ? frit_cast(ctx, frit_binary(ctx, FRIT_OP_MUL, a, frit_const_float(ctx, k, 1.0)), k) : b);
    frit_uop *ast = sink1(end1(store(idx(global(0, out), r), v), r));
    snprintf(what, sizeof what, "%s %s", frit_op_name(op), dn);
    in[0] = calloc(N, esz(out));
    free(run_both(what, ast, 3, (frit_dtype[]){out, k, k}, in, tol));
    free(in[0]);
  }
  /* parts: out = complex(imag(a) + real(b), real(conj(a)) * imag(conj(b))) */
  {
    frit_uop *r = frit_range(ctx, ci(N), 0, FRIT_AXIS_GLOBAL);
    frit_uop *a = load(idx(global(1, k), r)), *b = load(idx(global(2, k), r));
    frit_uop *ca = frit_unary(ctx, FRIT_OP_CONJ, a), *cb = frit_unary(ctx, FRIT_OP_CONJ, b);
    frit_uop *x = frit_binary(ctx, FRIT_OP_ADD, frit_unary(ctx, FRIT_OP_IMAG, a), frit_unary(ctx, FRIT_OP_REAL, b));
    frit_uop *y = frit_binary(ctx, FRIT_OP_MUL, frit_unary(ctx, FRIT_OP_REAL, ca), frit_unary(ctx, FRIT_OP_IMAG, cb));
    in[0] = calloc(N, esz(k));
    char *o = run_both("parts", sink1(end1(store(idx(global(0, k), r), frit_binary(ctx, FRIT_OP_COMPLEX, x, y)), r)), 3,
                       (frit_dtype[]){k, k, k}, in, 0);
    int bad = 0;
    for (int i = 0; o && i < N; i++) {
      frit_scalar p = frit_scalar_normalize(input(i, 1), k), q = frit_scalar_normalize(input(i, 2), k);
      frit_scalar z = frit_scalar_load(o + i * esz(k), k);
      double wx = p.c.im + q.c.re, wy = p.c.re * -q.c.im;
      if (k == FRIT_C64) wx = (float)wx, wy = (float)wy;
      bad += z.c.re != wx || z.c.im != wy;
    }
    CHECK_EQ_INT(bad, 0);
    free(o), free(in[0]);
  }
  /* a*b + c against the textbook formula */
  frit_uop *r = frit_range(ctx, ci(N), 0, FRIT_AXIS_GLOBAL);
  frit_uop *v = frit_binary(ctx, FRIT_OP_ADD,
                            frit_binary(ctx, FRIT_OP_MUL, load(idx(global(1, k), r)), load(idx(global(2, k), r))),
                            frit_const(ctx, k, frit_scalar_normalize((frit_scalar){.c = {0.25, -1.5}}, k)));
  in[0] = calloc(N, esz(k));
  char *o = run_both("a*b+c", sink1(end1(store(idx(global(0, k), r), v), r)), 3, (frit_dtype[]){k, k, k}, in, tol);
  int bad = 0;
  for (int i = 0; o && i < N; i++) {
    frit_scalar x = frit_scalar_normalize(input(i, 1), k), y = frit_scalar_normalize(input(i, 2), k);
    frit_scalar z = frit_scalar_load(o + i * esz(k), k);
    bad += !close_to(z.c.re, x.c.re * y.c.re - x.c.im * y.c.im + 0.25, tol) ||
           !close_to(z.c.im, x.c.re * y.c.im + x.c.im * y.c.re - 1.5, tol);
  }
  CHECK_EQ_INT(bad, 0);
  free(o), free(in[0]), free(in[1]), free(in[2]);
}

static void test_reduce(frit_scalar_kind k) {
  double tol = k == FRIT_C64 ? 1e-5 : 1e-12;
  void *in[2] = {calloc(N, esz(k)), mkbuf(k, 1)};
  /* out[0] = sum, out[1] = product of the first 12 (stays finite) */
  frit_uop *r = frit_range(ctx, ci(N), 1, FRIT_AXIS_REDUCE);
  frit_uop *s = node(FRIT_OP_REDUCE, k, (frit_uop *[]){load(idx(global(1, k), r)), r}, 2, A(FRIT_OP_ADD, 0));
  frit_uop *r12 = frit_range(ctx, ci(12), 2, FRIT_AXIS_REDUCE);
  frit_uop *p = node(FRIT_OP_REDUCE, k, (frit_uop *[]){load(idx(global(1, k), frit_binary(ctx, FRIT_OP_ADD, r12, ci(1)))), r12}, 2,
                     A(FRIT_OP_MUL, 0));
  frit_uop *g0 = global(0, k);
  frit_uop *ast = frit_sink(ctx, (frit_uop *[]){store(idx(g0, ci(0)), s), store(idx(g0, ci(1)), p)}, 2);
  char *o = run_both("sum/prod", ast, 2, (frit_dtype[]){k, k}, in, tol);
  if (o) {
    double sr = 0, si = 0, pr = 1, pi = 0;
    for (int i = 0; i < N; i++) {
      frit_scalar x = frit_scalar_normalize(input(i, 1), k);
      sr += x.c.re, si += x.c.im;
      if (i >= 1 && i <= 12) {
        double t = pr * x.c.re - pi * x.c.im;
        pi = pr * x.c.im + pi * x.c.re, pr = t;
      }
    }
    frit_scalar z0 = frit_scalar_load(o, k), z1 = frit_scalar_load(o + esz(k), k);
    CHECK(close_to(z0.c.re, sr, tol) && close_to(z0.c.im, si, tol));
    CHECK(close_to(z1.c.re, pr, tol * 10) && close_to(z1.c.im, pi, tol * 10));
  }
  free(o), free(in[0]), free(in[1]);
}

static void test_casts(void) {
  static const frit_scalar_kind ks[] = {FRIT_BOOL, FRIT_I32, FRIT_U8, FRIT_I64, FRIT_F16, FRIT_F32, FRIT_F64, FRIT_C64, FRIT_C128};
  int nk = (int)(sizeof ks / sizeof ks[0]);
  for (int a = 0; a < nk; a++)
    for (int b = 0; b < nk; b++) {
      bool ca = ks[a] == FRIT_C64 || ks[a] == FRIT_C128, cb = ks[b] == FRIT_C64 || ks[b] == FRIT_C128;
      if (!ca && !cb) continue;
      void *in[2] = {calloc(N, esz(ks[b])), mkbuf(ks[a], 3)};
      frit_uop *r = frit_range(ctx, ci(N), 0, FRIT_AXIS_GLOBAL);
      frit_uop *ast = sink1(end1(store(idx(global(0, ks[b]), r), frit_cast(ctx, load(idx(global(1, ks[a]), r)), ks[b])), r));
      char what[64], d1[16], d2[16];
      snprintf(what, sizeof what, "CAST %s -> %s", frit_dtype_name(ks[a], d1, 16), frit_dtype_name(ks[b], d2, 16));
      free(run_both(what, ast, 2, (frit_dtype[]){ks[b], ks[a]}, in, 0));
      free(in[0]), free(in[1]);
    }
}

int main(void) {
  ctx = frit_ctx_new();
  char dir[256];
  snprintf(dir, sizeof dir, "/tmp/frit-test-complex-%ld", (long)getpid());
  mkdir(dir, 0755);
  frit_compile_opts opts = {0};
  opts.cache_dir = dir;
  CHECK_EQ_INT(frit_codegen_config(ctx, &opts, &cfg), FRIT_OK);
  test_elementwise(FRIT_C64);
  test_elementwise(FRIT_C128);
  test_reduce(FRIT_C64);
  test_reduce(FRIT_C128);
  test_casts();
  frit_ctx_free(ctx);
  CHECK_DONE();
}
