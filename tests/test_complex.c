/* Tests of the complex64/complex128 dtypes in the IR, scalar semantics and interpreter: each
 * result is checked against a computation written out here in real arithmetic (an oracle
 * independent of <complex.h>), plus the dtype checks that reject ordering ops on complex. */
#include "check.h"
#include "frit.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static frit_ctx *ctx;

#define LN2 0.693147180559945309417232121458176568

#define PTR(dt) frit_dtype_ptr((dt), FRIT_ADDR_GLOBAL)

static frit_scalar C(double re, double im) {
  frit_scalar s;
  s.c.re = re, s.c.im = im;
  return s;
}
static bool near(double got, double want, double tol) {
  return fabs(got - want) <= tol * (1 + fabs(want));
}
static bool cnear(frit_scalar z, double re, double im, double tol) {
  bool ok = near(z.c.re, re, tol) && near(z.c.im, im, tol);
  if (!ok) fprintf(stderr, "  got %.17g%+.17gi, want %.17g%+.17gi\n", z.c.re, z.c.im, re, im);
  return ok;
}
static frit_arg A(int64_t i0, int64_t i1) { return (frit_arg){.i0 = i0, .i1 = i1}; }
static frit_uop *node(frit_op op, frit_dtype dt, frit_uop *const *src, int n, frit_arg a) {
  frit_uop *u = frit_uop_new(ctx, op, dt, src, n, &a);
  if (!u) fprintf(stderr, "build %s failed: %s\n", frit_op_name(op), frit_error(ctx));
  return u;
}

static void test_dtypes(void) {
  char buf[32];
  CHECK_EQ_STR(frit_dtype_name(FRIT_C64, buf, sizeof buf), "c64");
  CHECK_EQ_STR(frit_dtype_name(frit_dtype_vec(FRIT_C128, 2), buf, sizeof buf), "c128x2");
  frit_dtype d = 0;
  CHECK_EQ_INT(frit_dtype_parse("c128*", 5, &d), FRIT_OK);
  CHECK_EQ_INT(d, frit_dtype_ptr(FRIT_C128, FRIT_ADDR_GLOBAL));
  CHECK_EQ_INT(frit_dtype_bits(FRIT_C64), 64);
  CHECK_EQ_INT(frit_dtype_bits(FRIT_C128), 128);
  CHECK(frit_dtype_is_complex(FRIT_C64) && !frit_dtype_is_float(FRIT_C64) && !frit_dtype_is_complex(FRIT_F64));
  CHECK_EQ_INT(frit_dtype_real_part(FRIT_C64), FRIT_F32);
  CHECK_EQ_INT(frit_dtype_real_part(frit_dtype_vec(FRIT_C128, 4)), frit_dtype_vec(FRIT_F64, 4));
}

/* Each op on (a, b) against the textbook real formulas. */
static void test_scalar_ops(void) {
  double ar = 1.25, ai = -0.75, br = -0.5, bi = 2.0;
  frit_scalar s[3] = {C(ar, ai), C(br, bi), C(0.125, -3)};
  double d = br * br + bi * bi, m = hypot(ar, ai), th = atan2(ai, ar);
  struct { frit_op op; double re, im; } want[] = {
      {FRIT_OP_ADD, ar + br, ai + bi},
      {FRIT_OP_SUB, ar - br, ai - bi},
      {FRIT_OP_MUL, ar * br - ai * bi, ar * bi + ai * br},
      {FRIT_OP_FDIV, (ar * br + ai * bi) / d, (ai * br - ar * bi) / d},
      {FRIT_OP_MULACC, ar * br - ai * bi + 0.125, ar * bi + ai * br - 3},
      {FRIT_OP_NEG, -ar, -ai},
      {FRIT_OP_ABS, m, 0},
      {FRIT_OP_RECIP, ar / (m * m), -ai / (m * m)},
      {FRIT_OP_EXP, exp(ar) * cos(ai), exp(ar) * sin(ai)},
      {FRIT_OP_EXP2, exp(ar * LN2) * cos(ai * LN2), exp(ar * LN2) * sin(ai * LN2)},
      {FRIT_OP_LOG, log(m), th},
      {FRIT_OP_LOG2, log(m) / LN2, th / LN2},
      {FRIT_OP_SQRT, sqrt(m) * cos(th / 2), sqrt(m) * sin(th / 2)},
      {FRIT_OP_SIN, sin(ar) * cosh(ai), cos(ar) * sinh(ai)},
      {FRIT_OP_COS, cos(ar) * cosh(ai), -sin(ar) * sinh(ai)},
      {FRIT_OP_SINH, sinh(ar) * cos(ai), cosh(ar) * sin(ai)},
      {FRIT_OP_COSH, cosh(ar) * cos(ai), sinh(ar) * sin(ai)},
      {FRIT_OP_TANH, sinh(2 * ar) / (cosh(2 * ar) + cos(2 * ai)), sin(2 * ai) / (cosh(2 * ar) + cos(2 * ai))},
      {FRIT_OP_TAN, sin(2 * ar) / (cos(2 * ar) + cosh(2 * ai)), sinh(2 * ai) / (cos(2 * ar) + cosh(2 * ai))},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    frit_scalar z = frit_eval_alu(want[i].op, FRIT_C128, s);
    if (!cnear(z, want[i].re, want[i].im, 1e-14)) fprintf(stderr, "  c128 %s\n", frit_op_name(want[i].op));
    CHECK(cnear(z, want[i].re, want[i].im, 1e-14));
    frit_scalar s32[3];
    for (int k = 0; k < 3; k++) s32[k] = frit_scalar_normalize(s[k], FRIT_C64);
    z = frit_eval_alu(want[i].op, FRIT_C64, s32);
    CHECK(z.c.re == (double)(float)z.c.re && z.c.im == (double)(float)z.c.im); /* f32 parts */
    if (!cnear(z, want[i].re, want[i].im, 2e-6)) fprintf(stderr, "  c64 %s\n", frit_op_name(want[i].op));
    CHECK(cnear(z, want[i].re, want[i].im, 2e-6));
  }
  /* parts, conjugate and the constructor */
  CHECK(frit_eval_alu(FRIT_OP_REAL, FRIT_C128, s).f == ar);
  CHECK(frit_eval_alu(FRIT_OP_IMAG, FRIT_C128, s).f == ai);
  CHECK(cnear(frit_eval_alu(FRIT_OP_CONJ, FRIT_C64, s), ar, -ai, 0));
  frit_scalar parts[2] = {{.f = 3.5}, {.f = -0.25}};
  CHECK(cnear(frit_eval_alu(FRIT_OP_COMPLEX, FRIT_F32, parts), 3.5, -0.25, 0));
  /* pow through exp(b log a) */
  double lr = log(m), pr = exp(br * lr - bi * th), pa = bi * lr + br * th;
  CHECK(cnear(frit_eval_alu(FRIT_OP_POW, FRIT_C128, s), pr * cos(pa), pr * sin(pa), 1e-13));
  /* comparisons: equal only when both parts are */
  frit_scalar e[2] = {C(1, 2), C(1, 2)}, f[2] = {C(1, 2), C(1, -2)};
  CHECK_EQ_INT(frit_eval_alu(FRIT_OP_CMPEQ, FRIT_C64, e).i, 1);
  CHECK_EQ_INT(frit_eval_alu(FRIT_OP_CMPEQ, FRIT_C64, f).i, 0);
  CHECK_EQ_INT(frit_eval_alu(FRIT_OP_CMPNE, FRIT_C128, f).i, 1);
}

static void test_casts(void) {
  frit_scalar z = C(-2.75, 0.5), r;
  r = frit_eval_cast(z, FRIT_C128, FRIT_F32); /* numpy: the real part */
  CHECK(r.f == -2.75);
  r = frit_eval_cast(z, FRIT_C128, FRIT_I32);
  CHECK_EQ_INT(r.i, -2);
  CHECK_EQ_INT(frit_eval_cast(C(0, 0.5), FRIT_C64, FRIT_BOOL).i, 1);
  CHECK_EQ_INT(frit_eval_cast(C(0, 0), FRIT_C64, FRIT_BOOL).i, 0);
  frit_scalar i = {.i = -7};
  r = frit_eval_cast(i, FRIT_I64, FRIT_C64);
  CHECK(r.c.re == -7 && r.c.im == 0);
  r = frit_eval_cast(C(0.1, 1e40), FRIT_C128, FRIT_C64); /* both parts rounded to f32 */
  CHECK(r.c.re == (double)0.1f && isinf(r.c.im));
  /* a 2^24+1 integer rounds like its f32 */
  frit_scalar big = {.i = (1 << 24) + 1};
  CHECK(frit_eval_cast(big, FRIT_I64, FRIT_C64).c.re == (double)(float)((1 << 24) + 1));
}

static void test_nodes(void) {
  /* constants differing only in the imaginary part are different nodes */
  frit_uop *a = frit_const(ctx, FRIT_C64, C(1, 2)), *b = frit_const(ctx, FRIT_C64, C(1, 3));
  CHECK(a && b && a != b);
  CHECK(frit_const(ctx, FRIT_C64, C(1, 2)) == a);
  frit_uop *c1 = frit_const_float(ctx, FRIT_C128, 2.5);
  CHECK(frit_uop_arg(c1)->value.c.re == 2.5 && frit_uop_arg(c1)->value.c.im == 0);
  /* constant folding goes through the same scalar semantics */
  frit_uop *p = frit_simplify(ctx, frit_binary(ctx, FRIT_OP_MUL, a, b));
  CHECK(p && frit_uop_op(p) == FRIT_OP_CONST);
  if (p) CHECK(cnear(frit_uop_arg(p)->value, 1 * 1 - 2 * 3, 1 * 3 + 2 * 1, 0));
  /* ops without numpy complex semantics are refused at build time */
  frit_op bad[] = {FRIT_OP_CMPLT, FRIT_OP_MAX, FRIT_OP_MIN, FRIT_OP_MOD, FRIT_OP_FLOOR, FRIT_OP_ERF};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int n = frit_op_min_src(bad[i]);
    frit_uop *u = n == 1 ? frit_unary(ctx, bad[i], a) : frit_binary(ctx, bad[i], a, b);
    CHECK(u == NULL);
    CHECK(strstr(frit_error(ctx), "c64") != NULL);
  }
  /* part ops change the dtype: c64 <-> f32 */
  frit_uop *re = frit_unary(ctx, FRIT_OP_REAL, a), *im = frit_unary(ctx, FRIT_OP_IMAG, a);
  CHECK(re && frit_uop_dtype(re) == FRIT_F32 && im && frit_uop_dtype(im) == FRIT_F32);
  frit_uop *back = re && im ? frit_binary(ctx, FRIT_OP_COMPLEX, im, re) : NULL;
  CHECK(back && frit_uop_dtype(back) == FRIT_C64);
  frit_uop *sw = back ? frit_simplify(ctx, back) : NULL; /* folds to 2 + 1i */
  CHECK(sw && frit_uop_op(sw) == FRIT_OP_CONST && frit_uop_arg(sw)->value.c.re == 2 && frit_uop_arg(sw)->value.c.im == 1);
  CHECK(frit_unary(ctx, FRIT_OP_REAL, frit_const_float(ctx, FRIT_F32, 1)) == NULL);
  CHECK(frit_binary(ctx, FRIT_OP_COMPLEX, frit_const_int(ctx, FRIT_I32, 1), frit_const_int(ctx, FRIT_I32, 1)) == NULL);
  /* complex reductions: sums and products only */
  frit_uop *rr = frit_range(ctx, frit_const_int(ctx, FRIT_I64, 4), 0, FRIT_AXIS_REDUCE);
  frit_arg mx = {.i0 = FRIT_OP_MAX};
  CHECK(frit_uop_new(ctx, FRIT_OP_REDUCE, FRIT_C64, (frit_uop *[]){a, rr}, 2, &mx) == NULL);
  CHECK(strstr(frit_error(ctx), "ADD or MUL") != NULL);
  frit_arg none = {0};
  CHECK(frit_uop_new(ctx, FRIT_OP_BITCAST, FRIT_F64, &a, 1, &none) == NULL);
  /* textual IR keeps both parts exactly */
  frit_uop *g = frit_sink(ctx, (frit_uop *[]){frit_binary(ctx, FRIT_OP_ADD, a, frit_const(ctx, FRIT_C64, C(-0.0, NAN)))}, 1);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  CHECK_EQ_INT(frit_print_ir(ctx, g, f), FRIT_OK);
  fclose(f);
  CHECK(strstr(text, "value=1:2") != NULL);
  CHECK(frit_parse_ir(ctx, text) == g);
  free(text);
}

/* out[i] = a[i]*b[i] + c[i] and s = sum(a[i]) through buffers in numpy's interleaved layout. */
static void test_interp(void) {
  enum { N = 300 }; /* more than one pairwise block */
  float a[2 * N], b[2 * N], c[2 * N], o[2 * N];
  for (int i = 0; i < N; i++) {
    a[2 * i] = (float)(i % 7) - 3.5f, a[2 * i + 1] = (float)(i % 5) * 0.25f;
    b[2 * i] = 0.5f + (float)(i % 3), b[2 * i + 1] = -(float)(i % 4);
    c[2 * i] = (float)i, c[2 * i + 1] = 1.0f;
  }
  frit_uop *ga = node(FRIT_OP_DEFINE_GLOBAL, PTR(FRIT_C64), NULL, 0, A(0, -1));
  frit_uop *gb = node(FRIT_OP_DEFINE_GLOBAL, PTR(FRIT_C64), NULL, 0, A(1, -1));
  frit_uop *gc = node(FRIT_OP_DEFINE_GLOBAL, PTR(FRIT_C64), NULL, 0, A(2, -1));
  frit_uop *go = node(FRIT_OP_DEFINE_GLOBAL, PTR(FRIT_C64), NULL, 0, A(3, -1));
  frit_uop *r = frit_range(ctx, frit_const_int(ctx, FRIT_I64, N), 0, FRIT_AXIS_LOOP);
#define LD(g) node(FRIT_OP_LOAD, FRIT_C64, (frit_uop *[]){node(FRIT_OP_INDEX, PTR(FRIT_C64), (frit_uop *[]){g, r}, 2, A(0, 0))}, 1, A(0, 0))
  frit_uop *v = frit_binary(ctx, FRIT_OP_ADD, frit_binary(ctx, FRIT_OP_MUL, LD(ga), LD(gb)), LD(gc));
  frit_uop *st = node(FRIT_OP_STORE, FRIT_VOID, (frit_uop *[]){node(FRIT_OP_INDEX, PTR(FRIT_C64), (frit_uop *[]){go, r}, 2, A(0, 0)), v}, 2, A(0, 0));
  frit_uop *root = frit_sink(ctx, (frit_uop *[]){node(FRIT_OP_END, FRIT_VOID, (frit_uop *[]){st, r}, 2, A(0, 0))}, 1);
  CHECK_EQ_INT(frit_interpret(ctx, root, (void *[]){a, b, c, o}, (size_t[]){N, N, N, N}, 4, NULL, 0, NULL), FRIT_OK);
  int bad = 0;
  for (int i = 0; i < N; i++) {
    float re = a[2 * i] * b[2 * i] - a[2 * i + 1] * b[2 * i + 1] + c[2 * i];
    float im = a[2 * i] * b[2 * i + 1] + a[2 * i + 1] * b[2 * i] + c[2 * i + 1];
    bad += !near(o[2 * i], re, 1e-6) || !near(o[2 * i + 1], im, 1e-6);
  }
  CHECK_EQ_INT(bad, 0);
  frit_uop *red = node(FRIT_OP_REDUCE, FRIT_C64, (frit_uop *[]){LD(ga), r}, 2, A(FRIT_OP_ADD, 0));
  frit_scalar s[1];
  CHECK_EQ_INT(frit_interpret(ctx, red, (void *[]){a}, (size_t[]){N}, 1, NULL, 0, s), FRIT_OK);
  double wr = 0, wi = 0;
  for (int i = 0; i < N; i++) wr += a[2 * i], wi += a[2 * i + 1];
  CHECK(cnear(s[0], wr, wi, 1e-6));
  r = frit_range(ctx, frit_const_int(ctx, FRIT_I64, 8), 1, FRIT_AXIS_LOOP);
  frit_uop *prod = node(FRIT_OP_REDUCE, FRIT_C128, (frit_uop *[]){frit_cast(ctx, LD(gb), FRIT_C128), r}, 2, A(FRIT_OP_MUL, 0));
  CHECK_EQ_INT(frit_interpret(ctx, prod, (void *[]){NULL, b}, (size_t[]){0, 8}, 2, NULL, 0, s), FRIT_OK);
  wr = 1, wi = 0;
  for (int i = 0; i < 8; i++) {
    double xr = b[2 * i], xi = b[2 * i + 1], t = wr * xr - wi * xi;
    wi = wr * xi + wi * xr, wr = t;
  }
  CHECK(cnear(s[0], wr, wi, 1e-12));
#undef LD
}

int main(void) {
  ctx = frit_ctx_new();
  test_dtypes();
  test_scalar_ops();
  test_casts();
  test_nodes();
  test_interp();
  frit_ctx_free(ctx);
  CHECK_DONE();
}
