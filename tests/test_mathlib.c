/* Accuracy of the C backend's own f32 exp/exp2/log/log2/sin/cos/tan/tanh/erf/pow
 * (src/codegen/prelude.c): kernels are generated and compiled by frit, run over float bit
 * patterns, and compared with double libm (the oracle): less than 1 ulp from the exact value,
 * exact special values (C99 Annex F), and vectorised loops; float max/min reductions
 * (compare-select with NaN/zero-sign flags) against an IEEE oracle; and the frontend's lowering
 * of pow with constant exponents against C's pow.
 * FRIT_MATHLIB_STRIDE=1 checks all 2^32 inputs of each unary function (default: every 251st
 * pattern plus dense windows) and 2^32 (x, y) pairs of pow; FRIT_MATHLIB_FNS=sin,pow limits the
 * sweep to the functions named (`make mathlib-full` runs the exhaustive sweep). */
#include "check.h"
#include "codegen/codegen.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static frit_ctx *ctx;
static frit_cg_config cfg;
static char cache_dir[256];

#define N_CHUNK (1 << 20)
#define PTR(dt) frit_dtype_ptr((dt), FRIT_ADDR_GLOBAL)

enum { NF = 14 }; /* unary functions; kernel NF is pow, NF + 1 atan2 */
static const frit_op fns[NF] = {FRIT_OP_EXP,  FRIT_OP_EXP2, FRIT_OP_LOG,  FRIT_OP_LOG2, FRIT_OP_SIN,
                                FRIT_OP_COS,  FRIT_OP_TAN,  FRIT_OP_TANH, FRIT_OP_ERF,  FRIT_OP_ASIN,
                                FRIT_OP_ACOS, FRIT_OP_ATAN, FRIT_OP_SINH, FRIT_OP_COSH};

static frit_uop *node(frit_op op, frit_dtype dt, frit_uop *const *src, int n, int64_t i0) {
  frit_arg a = {.i0 = i0, .i1 = i0 < 0 ? 0 : -1};
  return frit_uop_new(ctx, op, dt, src, n, &a);
}

/* out[i] = f(in[i]) over N_CHUNK f32 elements */
static frit_uop *unary_kernel(frit_op op) {
  frit_uop *r = frit_range(ctx, frit_const_int(ctx, FRIT_I64, N_CHUNK), 0, FRIT_AXIS_GLOBAL);
  frit_uop *po = node(FRIT_OP_DEFINE_GLOBAL, PTR(FRIT_F32), NULL, 0, 0);
  frit_uop *pi = node(FRIT_OP_DEFINE_GLOBAL, PTR(FRIT_F32), NULL, 0, 1);
  frit_uop *ii = node(FRIT_OP_INDEX, PTR(FRIT_F32), (frit_uop *[]){pi, r}, 2, 0);
  frit_uop *io = node(FRIT_OP_INDEX, PTR(FRIT_F32), (frit_uop *[]){po, r}, 2, 0);
  frit_uop *x = node(FRIT_OP_LOAD, FRIT_F32, &ii, 1, 0);
  frit_uop *st = node(FRIT_OP_STORE, FRIT_VOID, (frit_uop *[]){io, frit_unary(ctx, op, x)}, 2, 0);
  frit_uop *e = node(FRIT_OP_END, FRIT_VOID, (frit_uop *[]){st, r}, 2, 0);
  return frit_sink(ctx, &e, 1);
}

/* out[i] = op(x[i], y[i]) over N_CHUNK f32 elements (pow, atan2) */
static frit_uop *binary_kernel(frit_op op) {
  frit_uop *r = frit_range(ctx, frit_const_int(ctx, FRIT_I64, N_CHUNK), 0, FRIT_AXIS_GLOBAL);
  frit_uop *po = node(FRIT_OP_DEFINE_GLOBAL, PTR(FRIT_F32), NULL, 0, 0);
  frit_uop *px = node(FRIT_OP_DEFINE_GLOBAL, PTR(FRIT_F32), NULL, 0, 1);
  frit_uop *py = node(FRIT_OP_DEFINE_GLOBAL, PTR(FRIT_F32), NULL, 0, 2);
  frit_uop *ix = node(FRIT_OP_INDEX, PTR(FRIT_F32), (frit_uop *[]){px, r}, 2, 0);
  frit_uop *iy = node(FRIT_OP_INDEX, PTR(FRIT_F32), (frit_uop *[]){py, r}, 2, 0);
  frit_uop *io = node(FRIT_OP_INDEX, PTR(FRIT_F32), (frit_uop *[]){po, r}, 2, 0);
  frit_uop *x = node(FRIT_OP_LOAD, FRIT_F32, &ix, 1, 0), *y = node(FRIT_OP_LOAD, FRIT_F32, &iy, 1, 0);
  frit_uop *st = node(FRIT_OP_STORE, FRIT_VOID, (frit_uop *[]){io, frit_binary(ctx, op, x, y)}, 2, 0);
  frit_uop *e = node(FRIT_OP_END, FRIT_VOID, (frit_uop *[]){st, r}, 2, 0);
  return frit_sink(ctx, &e, 1);
}

static double (*const refs[NF])(double) = {exp, exp2, log, log2, sin, cos, tan, tanh, erf, asin, acos, atan, sinh, cosh};

/* Distance of f from the exact value ref in units of the float ulp at ref (subnormal spacing
 * 2^-149 below 2^-126); 0 for matching infinities/NaNs and zeros of the same sign, huge for a
 * wrong class. Any f within less than 1 is one of the two floats around ref (faithful rounding). */
static double ulp_err(float f, double ref) {
  if (isnan(ref)) return isnan(f) ? 0 : 1e9;
  if (isnan(f)) return 1e9;
  if (isinf(ref)) return f == ref ? 0 : 1e9;
  if (isinf(f)) return (f > 0) == (ref > 0) && fabs(ref) > 0x1.fffffep127 ? 0 : 1e9;
  if (ref == 0) return f == 0 && !signbit(f) == !signbit(ref) ? 0 : 1e9;
  int e;
  frexp(ref, &e);
  double u = ldexp(1.0, e - 1 - 23);
  if (u < 0x1p-149) u = 0x1p-149;
  return fabs((double)f - ref) / u;
}

typedef struct stats {
  double maxerr;
  uint32_t worst;
  long n, exact;
} stats;

static void check_chunk(frit_kernel_fn fn, int f, const float *in, float *out, long n, stats *s) {
  fn((void *[]){out, (void *)in}, NULL, 0, n);
  for (long i = 0; i < n; i++) {
    double ref = refs[f](in[i]);
    double e = ulp_err(out[i], ref);
    float rf = (float)ref;
    s->n++;
    if ((isnan(rf) && isnan(out[i])) || memcmp(&rf, &out[i], 4) == 0) s->exact++;
    if (e > s->maxerr) s->maxerr = e, memcpy(&s->worst, &in[i], 4);
  }
}

static float fbits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static long sweep_stride(void) {
  long stride = getenv("FRIT_MATHLIB_STRIDE") ? atol(getenv("FRIT_MATHLIB_STRIDE")) : 251;
  return stride < 1 ? 1 : stride;
}

/* whether FRIT_MATHLIB_FNS (a comma list of op names, e.g. "sin,pow") names op; unset: all */
static bool fn_selected(frit_op op) {
  const char *l = getenv("FRIT_MATHLIB_FNS"), *nm = frit_op_name(op);
  if (!l || !*l) return true;
  for (const char *q = l;; q++) {
    size_t k = strcspn(q, ",");
    if (k == strlen(nm) && strncasecmp(q, nm, k) == 0) return true;
    if (!q[k]) break;
    q += k;
  }
  return false;
}

static void test_accuracy(frit_cg_program *p) {
  long stride = sweep_stride();
  float *in = calloc(N_CHUNK, 4), *out = calloc(N_CHUNK, 4);
  /* dense windows: around 1 and the over/underflow thresholds, all subnormal outputs of exp;
   * the trig reduction's switch to Payne-Hanek (2^26) and pi/2; the ends of tanh's and erf's
   * pieces (1/16, 1, 4) and where they round to 1 (9, 3.92) */
  static const float centers[] = {1.0f,  88.72f, -87.33f, -103.97f, 128.0f, -126.0f, -149.0f, 0x1p-126f, 0.0f,
                                  0x1p26f, 1.5707964f, 0.0625f, 4.0f, 9.0f, 3.92f, 0x1p-26f};
  for (int f = 0; f < NF; f++) {
    if (!fn_selected(fns[f])) continue;
    stats s = {0, 0, 0, 0};
    long n = 0;
    for (uint64_t b = 0; b < (1ull << 32); b += (uint64_t)stride) {
      in[n++] = fbits((uint32_t)b);
      if (n == N_CHUNK) check_chunk(p->kernels[f].fn, f, in, out, n, &s), n = 0;
    }
    for (size_t c = 0; c < sizeof centers / sizeof centers[0]; c++)
      for (int sg = 0; sg < 2; sg++) {
        uint32_t u;
        float cf = sg ? -centers[c] : centers[c];
        memcpy(&u, &cf, 4);
        for (int64_t d = -(1 << 16); d < (1 << 16); d++) {
          in[n++] = fbits((uint32_t)((int64_t)u + d));
          if (n == N_CHUNK) check_chunk(p->kernels[f].fn, f, in, out, n, &s), n = 0;
        }
      }
    if (n) check_chunk(p->kernels[f].fn, f, in, out, n, &s);
    printf("%s f32: %ld inputs, max error %.4f ulp (at 0x%08x), %.5f%% correctly rounded\n", frit_op_name(fns[f]),
           s.n, s.maxerr, s.worst, 100.0 * (double)s.exact / (double)s.n);
    CHECK(s.maxerr < 1.0);
  }
  free(in);
  free(out);
}

/* exact special values (C99 Annex F) and exact results */
static void test_specials(frit_cg_program *p) {
  float in[N_CHUNK > 4096 ? 4096 : N_CHUNK], out[4096];
  const float inf = INFINITY;
  /* exp */
  float ex[] = {NAN, -NAN, inf, -inf, 0.0f, -0.0f, 88.72283172607422f, 88.72283935546875f, -103.972084045410f,
                -103.97208404541016f - 0.1f, -87.33654022216797f, 1e-30f, -1e-30f, 0x1p-149f};
  memset(in, 0, sizeof in);
  memcpy(in, ex, sizeof ex);
  p->kernels[0].fn((void *[]){out, in}, NULL, 0, 4096);
  CHECK(isnan(out[0]) && isnan(out[1]));
  CHECK(out[2] == inf && out[3] == 0 && !signbit(out[3]) && out[4] == 1 && out[5] == 1);
  CHECK(out[6] == (float)exp(ex[6]) && out[6] < inf);
  CHECK(out[7] == inf);
  CHECK(out[9] == 0 && !signbit(out[9]));
  CHECK(out[11] == 1 && out[12] == 1 && out[13] == 1);
  /* exp2 of integers is exact, down to the smallest subnormal; 2^128 overflows */
  for (int k = -160; k <= 140; k++) in[k + 160] = (float)k;
  p->kernels[1].fn((void *[]){out, in}, NULL, 0, 4096);
  int bad = 0;
  for (int k = -160; k <= 140; k++) bad += out[k + 160] != (k < -149 ? 0.0f : k > 127 ? inf : ldexpf(1.0f, k));
  CHECK_EQ_INT(bad, 0);
  /* log2 of powers of two is exact (subnormals included), log(1) = +0 */
  for (int k = -149; k <= 127; k++) in[k + 149] = ldexpf(1.0f, k);
  p->kernels[3].fn((void *[]){out, in}, NULL, 0, 4096);
  bad = 0;
  for (int k = -149; k <= 127; k++) bad += out[k + 149] != (float)k || (k == 0 && signbit(out[k + 149]));
  CHECK_EQ_INT(bad, 0);
  float lx[] = {NAN, inf, -inf, 0.0f, -0.0f, -1.0f, -0x1p-149f, 1.0f, 0x1p-149f, 0x1.fffffep127f};
  memcpy(in, lx, sizeof lx);
  p->kernels[2].fn((void *[]){out, in}, NULL, 0, 4096);
  CHECK(isnan(out[0]) && out[1] == inf && isnan(out[2]) && out[3] == -inf && out[4] == -inf);
  CHECK(isnan(out[5]) && isnan(out[6]) && out[7] == 0 && !signbit(out[7]));
  CHECK(out[8] == (float)log(0x1p-149) && out[9] == (float)log(0x1.fffffep127));
}

/* sin/cos/tan/tanh/erf/asin/acos/atan/sinh/cosh: NaN, infinities, signed zeros, tiny and huge
 * inputs give C's exact results (sin(-0) = -0, cos(tiny) = 1, tanh(-inf) = -1, erf(x) = +-1 from
 * 3.92 on, asin(|x| > 1) = NaN, acos(-1) = pi, atan(inf) = pi/2, sinh overflow = inf ...) */
static void test_specials_trig(frit_cg_program *p) {
  const float big = 0x1.fffffep127f;
  static const struct { int f; float x, want; } cases[] = {
    {4, NAN, NAN},        {4, INFINITY, NAN},   {4, -INFINITY, NAN}, {4, 0.0f, 0.0f},       {4, -0.0f, -0.0f},
    {4, 0x1p-149f, 0x1p-149f}, {4, -1e-30f, -1e-30f}, {4, 0x1p-13f, 0x1p-13f},
    {5, NAN, NAN},        {5, INFINITY, NAN},   {5, -INFINITY, NAN}, {5, 0.0f, 1.0f},       {5, -0.0f, 1.0f},
    {5, -0x1p-149f, 1.0f}, {5, 0x1p-13f, 1.0f},
    {6, NAN, NAN},        {6, INFINITY, NAN},   {6, -INFINITY, NAN}, {6, 0.0f, 0.0f},       {6, -0.0f, -0.0f},
    {6, -0x1p-149f, -0x1p-149f}, {6, 1e-30f, 1e-30f},
    {7, NAN, NAN},        {7, INFINITY, 1.0f},  {7, -INFINITY, -1.0f}, {7, 0.0f, 0.0f},     {7, -0.0f, -0.0f},
    {7, 0x1p-149f, 0x1p-149f}, {7, -1e-30f, -1e-30f}, {7, 20.0f, 1.0f}, {7, -9.1f, -1.0f}, {7, -big, -1.0f},
    {8, NAN, NAN},        {8, INFINITY, 1.0f},  {8, -INFINITY, -1.0f}, {8, 0.0f, 0.0f},     {8, -0.0f, -0.0f},
    {8, 0x1p-149f, 0x1p-149f}, {8, -0x1p-149f, -0x1p-149f}, {8, 3.95f, 1.0f}, {8, -5.0f, -1.0f}, {8, big, 1.0f},
    {9, NAN, NAN},        {9, INFINITY, NAN},   {9, 1.5f, NAN},      {9, 0.0f, 0.0f},       {9, -0.0f, -0.0f},
    {9, 1.0f, 0x1.921fb6p0f}, {9, -1.0f, -0x1.921fb6p0f}, {9, -0x1p-149f, -0x1p-149f}, {9, -0x1.000002p0f, NAN},
    {10, NAN, NAN},       {10, -INFINITY, NAN}, {10, 1.0f, 0.0f},    {10, -1.0f, 0x1.921fb6p1f}, {10, 0.0f, 0x1.921fb6p0f},
    {10, -0.0f, 0x1.921fb6p0f}, {10, 1.0000001f, NAN},
    {11, NAN, NAN},       {11, INFINITY, 0x1.921fb6p0f}, {11, -INFINITY, -0x1.921fb6p0f}, {11, 0.0f, 0.0f},
    {11, -0.0f, -0.0f},   {11, -0x1p-149f, -0x1p-149f}, {11, big, 0x1.921fb6p0f}, {11, 1.0f, 0x1.921fb6p-1f},
    {12, NAN, NAN},       {12, INFINITY, INFINITY}, {12, -INFINITY, -INFINITY}, {12, 0.0f, 0.0f}, {12, -0.0f, -0.0f},
    {12, 0x1p-149f, 0x1p-149f}, {12, 89.5f, INFINITY}, {12, -100.5f, -INFINITY}, {12, -big, -INFINITY},
    {13, NAN, NAN},       {13, INFINITY, INFINITY}, {13, -INFINITY, INFINITY}, {13, 0.0f, 1.0f}, {13, -0.0f, 1.0f},
    {13, -0x1p-149f, 1.0f}, {13, 89.5f, INFINITY}, {13, -big, INFINITY},
  };
  float in[64], out[64];
  int bad = 0;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    for (int i = 0; i < 64; i++) in[i] = cases[c].x;
    p->kernels[cases[c].f].fn((void *[]){out, in}, NULL, 0, 64);
    float w = cases[c].want, g = out[63];
    bool ok = isnan(w) ? isnan(g) : g == w && !signbit(g) == !signbit(w);
    if (!ok && bad++ < 8) fprintf(stderr, "%s(%a) = %a, want %a\n", frit_op_name(fns[cases[c].f]), cases[c].x, g, w);
  }
  CHECK_EQ_INT(bad, 0);
}

/* A two-input function's kernel checked on every pair of the special values sv (a and b in the
 * kernel's input order), then on the sample gen makes of (1 << 32) / stride pairs from a seeded
 * generator: check returns an error in ulp and counts failures in *bad (special: a pair of sv). */
typedef double (*pair_check)(float a, float b, float got, bool special, int *bad);
typedef void (*pair_gen)(long k, uint32_t r0, uint32_t r1, float *a, float *b);

static void binary_sweep(const char *name, frit_kernel_fn fn, const float *sv, int ns, uint64_t seed, pair_gen gen,
                         pair_check check) {
  float *x = calloc(N_CHUNK, 4), *y = calloc(N_CHUNK, 4), *out = calloc(N_CHUNK, 4);
  int bad = 0;
  long n = 0;
  for (int i = 0; i < ns; i++)
    for (int j = 0; j < ns; j++) x[n] = sv[i], y[n++] = sv[j];
  fn((void *[]){out, x, y}, NULL, 0, n);
  for (long i = 0; i < n; i++) check(x[i], y[i], out[i], true, &bad);
  CHECK_EQ_INT(bad, 0);
  long total = (long)((1ull << 32) / (uint64_t)sweep_stride());
  double maxerr = 0;
  float wx = 0, wy = 0;
  n = 0;
  for (long k = 0; k < total; k++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    gen(k, (uint32_t)(seed >> 32), (uint32_t)seed, &x[n], &y[n]);
    n++;
    if (n == N_CHUNK || k == total - 1) {
      fn((void *[]){out, x, y}, NULL, 0, n);
      for (long i = 0; i < n; i++) {
        double e = check(x[i], y[i], out[i], false, &bad);
        if (e > maxerr) maxerr = e, wx = x[i], wy = y[i];
      }
      n = 0;
    }
  }
  printf("%s f32: %d special pairs, %ld sampled pairs, max error %.4f ulp (at %a, %a)\n", name, ns * ns, total, maxerr, wx,
         wy);
  CHECK_EQ_INT(bad, 0);
  CHECK(maxerr < 1.0);
  free(x), free(y), free(out);
}

/* pow(x, y): f exact (bit for bit, sign of zero included) where pow's result is a float (0,
 * inf, NaN, +-1, powers of two, small integers), else less than 1 ulp */
static double pow_check(float x, float y, float got, bool special, int *bad) {
  (void)special;
  double ref = pow((double)x, (double)y);
  float rf = (float)ref;
  double e = ulp_err(got, ref);
  bool exact = isnan(ref) || (double)rf == ref || rf == 0 || isinf(rf);
  if (exact && !(isnan(ref) ? isnan(got) : got == rf && !signbit(got) == !signbit(rf))) e = 1e9;
  if (e >= 1.0 && (*bad)++ < 8) fprintf(stderr, "pow(%a, %a) = %a, want %a\n", x, y, got, ref);
  return e;
}

/* half uniform over the bit patterns of both, half with y chosen so that x^y lands in the float
 * range (a quarter of those integer y) */
static void pow_gen(long k, uint32_t a, uint32_t b, float *x, float *y) {
  *x = fbits(a), *y = fbits(b);
  if (k & 1) {
    *x = fbits(a & 0xff7fffffu); /* finite */
    double l = log2(fabs((double)*x)), t = ldexp((double)(b >> 8), -24) * 285.0 - 155.0;
    *y = l != 0 && isfinite(l) ? (float)(t / l) : 1.5f;
    if ((b & 3) == 0) *y = rintf(*y);
  }
}

/* C99 F.9.4.4 on every pair of special and boundary values (x^+-0 = 1 with NaN too, 1^y = 1,
 * (-1)^+-inf = 1, (+-0)^y by the parity and sign of y, negative x with non-integer y = NaN, ...),
 * then the sample against pow in double */
static void test_pow(frit_kernel_fn fn) {
  static const float sv[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, 0.5f, -0.5f, 2.0f, -2.0f,
                             3.0f, -3.0f, 2.5f, -2.5f, 0x1p-149f, -0x1p-149f, 0x1.fffffep127f, -0x1.fffffep127f,
                             1e-30f, -1e-30f, 0x1.000002p0f, 0x1.fffffep-1f, -0x1.fffffep-1f, 0x1p24f, -0x1p24f,
                             0x1.000002p24f, 8388609.0f, -8388609.0f, 0x1p-126f, 127.0f, -127.0f, 128.0f,
                             -149.0f, -150.0f, 0.25f, 1.5f, -1.5f, 10.0f, -7.0f};
  binary_sweep("pow", fn, sv, (int)(sizeof sv / sizeof sv[0]), 7, pow_gen, pow_check);
}

/* atan2(y, x): bit for bit C99 F.9.1.4 (the double atan2 rounded) on the special pairs, within
 * 1 ulp of it elsewhere */
static double atan2_check(float y, float x, float got, bool special, int *bad) {
  double ref = atan2((double)y, (double)x), e = ulp_err(got, ref);
  float w = (float)ref;
  if (special && !(isnan(w) ? isnan(got) : got == w && !signbit(got) == !signbit(w))) e = 1e9;
  if (e >= 1.0 && (*bad)++ < 8) fprintf(stderr, "atan2(%a, %a) = %a, want %a\n", y, x, got, ref);
  return e;
}

/* half uniform over the bit patterns of both, half with |y| / |x| near 1, tan(pi/8), its
 * inverse or tiny (where the reduction switches) */
static void atan2_gen(long k, uint32_t a, uint32_t b, float *y, float *x) {
  static const float ratio[] = {1.0f, 0.41421357f, 2.4142137f, 1e-20f};
  *y = fbits(a), *x = fbits(b);
  if (k & 1) {
    *x = fbits(b & 0xbf7fffffu); /* finite, below 2^64 */
    *y = *x * ratio[(a >> 30) & 3] * (1.0f + (float)(int32_t)(a & 0xfffff) * 0x1p-40f);
    if (a & 0x200000u) *y = -*y;
  }
}

/* signed zeros, infinities, NaN (+-0, +-pi, +-pi/2, +-pi/4, +-3pi/4 rounded) and the reduction's
 * switch points */
static void test_atan2(frit_kernel_fn fn) {
  static const float sv[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, 0x1p-149f, -0x1p-149f,
                             0x1.fffffep127f, -0x1.fffffep127f, 0.41421357f, 2.4142137f, 3.0f, -7.5f, 1e-30f};
  binary_sweep("atan2", fn, sv, (int)(sizeof sv / sizeof sv[0]), 11, atan2_gen, atan2_check);
}

/* occurrences of w not preceded by a letter or digit (sinf( in frit_sinf(, not in frit_asinf() */
static int count_in(const char *s, const char *w) {
  int n = 0;
  for (const char *q = s; (q = strstr(q, w)); q += strlen(w)) n += q == s || !isalnum((unsigned char)q[-1]);
  return n;
}

/* distinct source lines gcc reports as vectorised loops (some appear twice: main loop, epilogue) */
static int vectorized_loops(const char *source) {
  char path[400], cmd[1200];
  snprintf(path, sizeof path, "%s/vec_check.c", cache_dir);
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fputs(source, f);
  fclose(f);
  /* with the define frit's compile adds to these flags (compile.c prelude_defines) */
  snprintf(cmd, sizeof cmd, "%s %s -DFRIT_OMP_SIMD -fopt-info-vec-optimized -c -o /dev/null %s 2>&1", cfg.cc,
           cfg.cflags, path);
  FILE *pp = popen(cmd, "r");
  char out[8192];
  size_t n = pp ? fread(out, 1, sizeof out - 1, pp) : 0;
  out[n] = 0;
  if (pp) pclose(pp);
  unlink(path);
  int loops = 0, last = -1;
  for (const char *q = out; (q = strstr(q, "vec_check.c:")); q++) {
    int line = atoi(q + strlen("vec_check.c:"));
    const char *eol = strchr(q, '\n');
    const char *v = strstr(q, "loop vectorized");
    if (v && (!eol || v < eol) && line != last) loops++, last = line;
  }
  if (loops == 0) fprintf(stderr, "vectorizer report:\n%s\n", out);
  return loops;
}

/* Whether the kernels' target (-march=native) defines the macro (__AVX2__ ...). */
static bool native_has(const char *macro) {
  char cmd[400];
  snprintf(cmd, sizeof cmd, "%s -march=native -dM -E - </dev/null 2>/dev/null | grep -c '%s '", cfg.cc, macro);
  FILE *pp = popen(cmd, "r");
  int n = 0;
  if (pp && fscanf(pp, "%d", &n) != 1) n = 0;
  if (pp) pclose(pp);
  return n > 0;
}

/* the kernels call the prelude's functions, no libm function, and gcc vectorises all ten loops
 * on AVX2 and AVX-512 targets (on AVX2, log2f and logf once stayed scalar: a 64-bit arithmetic
 * shift and int64->double conversion have no AVX2 instruction); elsewhere at least one. */
static void test_vectorized(frit_cg_program *p) {
  static const char *const names[] = {"expf(", "exp2f(", "logf(", "log2f(", "sinf(",  "cosf(",  "tanf(",  "tanhf(",
                                      "erff(", "asinf(", "acosf(", "atanf(", "sinhf(", "coshf(", "powf(", "atan2f("};
  for (int i = 0; i < NF + 2; i++) {
    char own[32];
    snprintf(own, sizeof own, "frit_%s", names[i]);
    /* the definition and the call (exp, sin and cos: a call of their vector versions) */
    static const char *const vector[NF + 2] = {"frit_expv(", NULL, NULL, NULL, "frit_sinv(", "frit_cosv(", "frit_tanv("};
    CHECK(count_in(p->source, own) + (vector[i] ? count_in(p->source, vector[i]) : 0) >= 2);
    CHECK_EQ_INT(count_in(p->source, names[i]), count_in(p->source, own));
  }
  int loops = vectorized_loops(p->source);
  printf("vectorised loops: %d of %d\n", loops, NF + 2);
  CHECK(loops >= (native_has("__AVX2__") ? NF + 2 : 1));
}

/* The exp, sin, cos and tan kernels' vector loops call frit_expv, frit_sinv, frit_cosv and
 * frit_tanv (their hand-written AVX-512 versions under the default flags); compiled without
 * `omp declare simd` (no -fopenmp-simd), the same source runs the inline functions. The two
 * agree bit for bit (NaN as NaN) over the sweep's inputs: for sin, cos and tan, vectors of
 * inputs below 2^26 take the clone's own path, the others the inline function lane by lane. */
static void test_vector_math_matches_inline(frit_cg_program *p) {
  static const struct { int f; const char *op, *call; } fs[] = {{0, "exp", "frit_expv("}, {4, "sin", "frit_sinv("},
                                                                {5, "cos", "frit_cosv("}, {6, "tan", "frit_tanv("}};
  frit_compile_opts opts;
  memset(&opts, 0, sizeof opts);
  opts.cache_dir = cache_dir;
  opts.cflags = "-O3 -march=native -fno-math-errno -ffp-contract=off";
  frit_cg_config plain;
  CHECK_EQ_INT(frit_codegen_config(ctx, &opts, &plain), FRIT_OK);
  float *in = calloc(N_CHUNK, 4), *a = calloc(N_CHUNK, 4), *b = calloc(N_CHUNK, 4);
  for (size_t v = 0; v < sizeof fs / sizeof *fs; v++) {
    if (!fn_selected(fns[fs[v].f])) continue;
    CHECK(strstr(p->source, fs[v].call) != NULL);
    frit_uop *ast = unary_kernel(fns[fs[v].f]);
    frit_cg_program *q = frit_codegen_generate(ctx, &ast, NULL, 1, NULL, 0);
    CHECK(q != NULL);
    if (!q || frit_codegen_compile(ctx, q, &plain) != FRIT_OK) {
      fprintf(stderr, "codegen failed: %s\n", frit_error(ctx));
      CHECK(0);
      break;
    }
    long stride = sweep_stride(), n = 0, checked = 0, differ = 0;
    for (uint64_t u = 0; u < (1ull << 32) + (uint64_t)stride; u += (uint64_t)stride) {
      if (u < (1ull << 32)) in[n++] = fbits((uint32_t)u);
      if (n == N_CHUNK || (u >= (1ull << 32) && n)) {
        p->kernels[fs[v].f].fn((void *[]){a, in}, NULL, 0, n);
        q->kernels[0].fn((void *[]){b, in}, NULL, 0, n);
        for (long i = 0; i < n; i++)
          if (memcmp(&a[i], &b[i], 4) != 0 && !(isnan(a[i]) && isnan(b[i]))) {
            if (differ++ < 5) fprintf(stderr, "%s(%a): vector %a, inline %a\n", fs[v].op, in[i], a[i], b[i]);
          }
        checked += n;
        n = 0;
      }
    }
    /* vectors whose lanes mix the paths (sin and cos: below 2^20, to 2^26, beyond): random
     * exponents from 2^-27 to 2^30 */
    uint64_t rs = 0x9e3779b97f4a7c15ull;
    for (long i = 0; i < N_CHUNK; i++) {
      rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
      in[i] = fbits((uint32_t)(rs & 0x807fffffu) | (uint32_t)(100 + (rs >> 40) % 58) << 23);
    }
    p->kernels[fs[v].f].fn((void *[]){a, in}, NULL, 0, N_CHUNK);
    q->kernels[0].fn((void *[]){b, in}, NULL, 0, N_CHUNK);
    for (long i = 0; i < N_CHUNK; i++)
      if (memcmp(&a[i], &b[i], 4) != 0 && differ++ < 5) fprintf(stderr, "%s(%a): vector %a, inline %a\n", fs[v].op, in[i], a[i], b[i]);
    checked += N_CHUNK;
    printf("%s f32: vector and inline forms agree on %ld of %ld inputs\n", fs[v].op, checked - differ, checked);
    CHECK_EQ_INT(differ, 0);
  }
  free(in);
  free(a);
  free(b);
}

/* IEEE 754-2019 maximum/minimum (docs/semantics.md), the oracle for float max/min reductions */
static double ieee_max(double a, double b, bool mx) {
  if (isnan(a) || isnan(b)) return NAN;
  if (a == b) return signbit(a) == mx ? b : a;
  return (a > b) == mx ? a : b;
}

/* Float max/min reductions, rendered as integer max/min of order keys plus a NaN magnitude:
 * rows of +-0, NaN (both signs), +-inf, +-1 and subnormals, against the oracle bit for bit (NaN
 * as NaN); vectorised. Short rows (37) take the plain loop; long ones (70001: two blocks and a
 * rest) the lane form, whose lanes are folded per block. */
static void maxmin_rows(int R, int M, bool laned) {
  static const double pool[] = {0.0, -0.0, NAN, -NAN, INFINITY, -INFINITY, 1.0, -1.0, 0x1p-149, -0x1p-149, 2.5, -2.5};
  frit_scalar_kind kinds[2] = {FRIT_F32, FRIT_F64};
  frit_op ops[2] = {FRIT_OP_MAX, FRIT_OP_MIN};
  frit_uop *asts[4];
  for (int t = 0; t < 4; t++) {
    frit_scalar_kind k = kinds[t / 2];
    frit_uop *ri = frit_range(ctx, frit_const_int(ctx, FRIT_I64, R), 0, FRIT_AXIS_GLOBAL);
    frit_uop *rj = frit_range(ctx, frit_const_int(ctx, FRIT_I64, M), 1, FRIT_AXIS_REDUCE);
    frit_uop *po = node(FRIT_OP_DEFINE_GLOBAL, PTR(k), NULL, 0, 0), *pi = node(FRIT_OP_DEFINE_GLOBAL, PTR(k), NULL, 0, 1);
    frit_uop *ix = frit_binary(ctx, FRIT_OP_ADD, frit_binary(ctx, FRIT_OP_MUL, ri, frit_const_int(ctx, FRIT_I64, M)), rj);
    frit_uop *ii = node(FRIT_OP_INDEX, PTR(k), (frit_uop *[]){pi, ix}, 2, 0);
    frit_uop *x = node(FRIT_OP_LOAD, k, &ii, 1, 0);
    frit_uop *red = node(FRIT_OP_REDUCE, k, (frit_uop *[]){x, rj}, 2, ops[t % 2]);
    frit_uop *io = node(FRIT_OP_INDEX, PTR(k), (frit_uop *[]){po, ri}, 2, 0);
    frit_uop *st = node(FRIT_OP_STORE, FRIT_VOID, (frit_uop *[]){io, red}, 2, 0);
    frit_uop *e = node(FRIT_OP_END, FRIT_VOID, (frit_uop *[]){st, ri}, 2, 0);
    asts[t] = frit_sink(ctx, &e, 1);
  }
  frit_cg_program *p = frit_codegen_generate(ctx, asts, NULL, 4, NULL, 0);
  CHECK(p != NULL);
  if (!p || frit_codegen_compile(ctx, p, &cfg) != FRIT_OK) {
    fprintf(stderr, "codegen failed: %s\n", frit_error(ctx));
    CHECK(0);
    return;
  }
  /* each kernel: its keys' max (min) and the magnitudes' max, in the loop or the lanes' fold */
  CHECK_EQ_INT(count_in(p->source, "reduction(max:"), 6);
  CHECK_EQ_INT(count_in(p->source, "reduction(min:"), 2);
  CHECK_EQ_INT(strstr(p->source, "_k_l[") != NULL, laned);
  CHECK(vectorized_loops(p->source) >= 4);
  double *vals = malloc(sizeof(double) * R * M);
  float *vf = malloc(sizeof(float) * R * M);
  uint64_t seed = 12345;
  for (int i = 0; i < R * M; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    int row = i / M;
    /* row kinds: all from the pool; no NaN; only zeros and negatives; no zeros; all -0; one
     * NaN (either sign) near the end, after the last whole run of lanes; all +inf; all -inf */
    int pick = (int)((seed >> 33) % (sizeof pool / sizeof pool[0]));
    double v = pool[pick];
    if (row % 4 >= 1 && isnan(v)) v = -0.0;
    if (row % 4 == 2 && v > 0) v = (seed >> 20) & 1 ? 0.0 : -0.0;
    if (row % 4 == 3 && v == 0) v = -3.0;
    if (row % 7 == 6) v = -0.0;
    if (row % 5 == 4) v = i % M == M - 2 ? (row & 8 ? NAN : -NAN) : isnan(v) ? 1.0 : v;
    if (row % 11 == 10 || row % 13 == 12) v = row % 11 == 10 ? INFINITY : -INFINITY; /* the identities */
    vals[i] = v, vf[i] = (float)v;
  }
  int bad = 0;
  for (int t = 0; t < 4; t++) {
    bool f64 = t >= 2, mx = t % 2 == 0;
    void *out = calloc(R, 8);
    p->kernels[t].fn((void *[]){out, f64 ? (void *)vals : (void *)vf}, NULL, 0, R);
    for (int r = 0; r < R; r++) {
      double want = mx ? -INFINITY : INFINITY;
      for (int j = 0; j < M; j++) want = ieee_max(want, f64 ? vals[r * M + j] : vf[r * M + j], mx);
      double got = f64 ? ((double *)out)[r] : ((float *)out)[r];
      bool ok = isnan(want) ? isnan(got) : (got == want && signbit(got) == signbit(want));
      if (!ok && bad++ < 4) fprintf(stderr, "%s %s row %d: got %a want %a\n", mx ? "max" : "min", f64 ? "f64" : "f32", r, got, want);
    }
    free(out);
  }
  CHECK_EQ_INT(bad, 0);
  free(vals);
  free(vf);
}

static void test_maxmin_reductions(void) {
  maxmin_rows(3000, 37, false);
  maxmin_rows(28, 70001, true);
}

/* pow with constant exponents is lowered by the frontend (x*x, sqrt ...): results equal C's pow
 * on every special value and are within 2 ulp elsewhere; the lowered programs call no pow. */
static void test_pow_const(void) {
  static const double ex[] = {0, 1, 2, -1, 0.5, -0.5, 1.5, 3};
  static const double xs[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1.0, -1.0, 4.0, -4.0, 0.25, 1e-30, 1e30,
                              0x1p-149, 3e38, 1.7, 123.456, 7e-3, -2.5, 1e20, 0.9999};
  enum { NX = sizeof xs / sizeof xs[0], NR = 4096 };
  frit_compile_opts opts;
  memset(&opts, 0, sizeof opts);
  opts.cache_dir = cache_dir;
  opts.threads = 1;
  for (int f64 = 0; f64 < 2; f64++) {
    frit_dtype dt = f64 ? FRIT_F64 : FRIT_F32;
    int bad = 0;
    for (size_t e = 0; e < sizeof ex / sizeof ex[0]; e++) {
      int64_t n = NX + NR;
      frit_tensor *x = frit_input(ctx, "x", dt, 1, &n);
      frit_tensor *y = frit_binary_t(ctx, FRIT_BF_POW, x, frit_scalar_f(ctx, dt, ex[e]));
      frit_program *pr = y ? frit_compile(ctx, &y, 1, &opts) : NULL;
      CHECK(pr != NULL);
      if (!pr) {
        fprintf(stderr, "pow %g: %s\n", ex[e], frit_error(ctx));
        continue;
      }
      bool lowered = ex[e] != 3;
      const char *src = strstr(frit_program_source(pr), "void frit_k0"); /* after the prelude */
      CHECK(src && (!lowered || (!strstr(src, "powf(") && !strstr(src, "pow("))));
      CHECK(src && (lowered || strstr(src, "pow")));
      double *xd = malloc(sizeof(double) * (size_t)n), *yd = malloc(sizeof(double) * (size_t)n);
      float *xf = malloc(sizeof(float) * (size_t)n), *yf = malloc(sizeof(float) * (size_t)n);
      uint64_t seed = 99;
      for (int64_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        double v = i < NX ? xs[i] : ldexp((double)(seed >> 11) / 0x1p53, (int)((seed >> 3) % 200) - 100);
        if (i >= NX && (seed & 1)) v = -v;
        xd[i] = v, xf[i] = (float)v;
      }
      frit_status st = frit_program_run(pr, (void *[]){f64 ? (void *)xd : (void *)xf}, (void *[]){f64 ? (void *)yd : (void *)yf},
                                        NULL, 0);
      CHECK_EQ_INT(st, FRIT_OK);
      for (int64_t i = 0; i < n && st == FRIT_OK; i++) {
        double xi = f64 ? xd[i] : xf[i], got = f64 ? yd[i] : yf[i];
        double want = f64 ? pow(xi, ex[e]) : (double)powf((float)xi, (float)ex[e]);
        bool ok;
        if (isnan(want) || isinf(want) || want == 0 || xi == 0 || isinf(xi) || isnan(xi))
          ok = isnan(want) ? isnan(got) : (got == want && signbit(got) == signbit(want));
        else
          ok = fabs(got - want) <= 2.5 * fabs(want) * (f64 ? 0x1p-53 : 0x1p-24) + (f64 ? 0 : 0x1p-149);
        if (!ok && bad++ < 6)
          fprintf(stderr, "pow(%a, %g) %s: got %a want %a\n", xi, ex[e], f64 ? "f64" : "f32", got, want);
      }
      free(xd), free(yd), free(xf), free(yf);
      frit_program_free(pr);
    }
    CHECK_EQ_INT(bad, 0);
  }
}

int main(void) {
  ctx = frit_ctx_new();
  snprintf(cache_dir, sizeof cache_dir, "/tmp/frit-test-mathlib-%ld", (long)getpid());
  mkdir(cache_dir, 0755);
  frit_compile_opts opts;
  memset(&opts, 0, sizeof opts);
  opts.cache_dir = cache_dir;
  CHECK_EQ_INT(frit_codegen_config(ctx, &opts, &cfg), FRIT_OK);
  frit_uop *asts[NF + 2];
  for (int f = 0; f < NF; f++) asts[f] = unary_kernel(fns[f]);
  asts[NF] = binary_kernel(FRIT_OP_POW);
  asts[NF + 1] = binary_kernel(FRIT_OP_ATAN2);
  frit_cg_program *p = frit_codegen_generate(ctx, asts, NULL, NF + 2, NULL, 0);
  CHECK(p != NULL);
  if (p && frit_codegen_compile(ctx, p, &cfg) == FRIT_OK) {
    test_specials(p);
    test_specials_trig(p);
    test_accuracy(p);
    if (fn_selected(FRIT_OP_POW)) test_pow(p->kernels[NF].fn);
    if (fn_selected(FRIT_OP_ATAN2)) test_atan2(p->kernels[NF + 1].fn);
    test_vectorized(p);
    test_vector_math_matches_inline(p);
  } else {
    fprintf(stderr, "codegen failed: %s\n", frit_error(ctx));
    CHECK(0);
  }
  test_maxmin_reductions();
  test_pow_const();
  frit_codegen_cache_clear(ctx, cache_dir);
  rmdir(cache_dir);
  frit_ctx_free(ctx);
  CHECK_DONE();
}
