/* Scalar semantics against independent oracles: the C compiler's own arithmetic on native types,
 * and a slow table-based reference for f16/bf16 rounding (docs/semantics.md). */
#include "check.h"
#include "frit.h"
#include "interp/scalar.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t rnd(void) {
  uint64_t x = rng_state;
  x ^= x << 13, x ^= x >> 7, x ^= x << 17;
  return rng_state = x;
}

static frit_scalar si(int64_t v) { frit_scalar s; s.i = v; return s; }
static frit_scalar su(uint64_t v) { frit_scalar s; s.u = v; return s; }
static frit_scalar sf(double v) { frit_scalar s; s.f = v; return s; }

static frit_scalar alu2(frit_op op, frit_dtype dt, frit_scalar a, frit_scalar b) {
  frit_scalar s[3] = {a, b, b};
  return frit_eval_alu(op, dt, s);
}

/* ---------- integers vs native C ---------- */

/* u with random bits above the low `bits`: normalisation must discard them. */
static uint64_t garbage_above(uint64_t u, int bits) {
  if (bits >= 64) return u;
  uint64_t mask = (UINT64_C(1) << bits) - 1;
  return (u & mask) | (rnd() & ~mask);
}

static int int_fail_reports;
#define INT_EXPECT(opname, got, want)                                                         \
  do {                                                                                        \
    check_count_++;                                                                           \
    if ((got) != (want)) {                                                                    \
      check_failures_++;                                                                      \
      if (int_fail_reports++ < 20)                                                            \
        fprintf(stderr, "%s %s a=%lld b=%lld: got %llu want %llu\n", kname, opname,          \
                (long long)a, (long long)b, (unsigned long long)(got),                        \
                (unsigned long long)(want));                                                  \
    }                                                                                         \
  } while (0)

#define DEFINE_INT_TEST(fname, T, UT, KIND, SIGNED, MINV, MAXV, BITS)                          \
  static frit_scalar fname##_box(T v) { return SIGNED ? si((int64_t)v) : su((uint64_t)v); }  \
  static uint64_t fname##_bits(T v) { return fname##_box(v).u; }                              \
  static void fname##_pair(T a, T b) {                                                        \
    const char *kname = #T;                                                                   \
    frit_scalar x[3] = {fname##_box(a), fname##_box(b), fname##_box(b)};                      \
    unsigned c = (unsigned)((UT)b % BITS);                                                    \
    T add = (T)(UT)((uint64_t)(UT)a + (uint64_t)(UT)b);                                       \
    T sub = (T)(UT)((uint64_t)(UT)a - (uint64_t)(UT)b);                                       \
    T mul = (T)(UT)((uint64_t)(UT)a * (uint64_t)(UT)b);                                       \
    T mulacc = (T)(UT)((uint64_t)(UT)mul + (uint64_t)(UT)b);                                  \
    T quo, rem;                                                                               \
    if (b == 0) quo = 0, rem = a; /* documented: x/0 == 0, x%0 == x */                       \
    else if (SIGNED && a == (T)(MINV) && b == (T)-1) quo = a, rem = 0; /* INT_MIN/-1 */      \
    else quo = (T)(a / b), rem = (T)(a % b);                                                  \
    T shl = (T)(UT)((uint64_t)(UT)a << c);                                                    \
    T shr = (T)(a >> c);                                                                      \
    INT_EXPECT("add", frit_eval_alu(FRIT_OP_ADD, KIND, x).u, fname##_bits(add));             \
    INT_EXPECT("sub", frit_eval_alu(FRIT_OP_SUB, KIND, x).u, fname##_bits(sub));             \
    INT_EXPECT("mul", frit_eval_alu(FRIT_OP_MUL, KIND, x).u, fname##_bits(mul));             \
    frit_scalar y[3] = {fname##_box(a), fname##_box(b), fname##_box(b)};                      \
    INT_EXPECT("mulacc", frit_eval_alu(FRIT_OP_MULACC, KIND, y).u, fname##_bits(mulacc));    \
    INT_EXPECT("idiv", frit_eval_alu(FRIT_OP_IDIV, KIND, x).u, fname##_bits(quo));           \
    INT_EXPECT("fdiv", frit_eval_alu(FRIT_OP_FDIV, KIND, x).u, fname##_bits(quo));           \
    INT_EXPECT("mod", frit_eval_alu(FRIT_OP_MOD, KIND, x).u, fname##_bits(rem));             \
    INT_EXPECT("and", frit_eval_alu(FRIT_OP_AND, KIND, x).u, fname##_bits((T)(a & b)));      \
    INT_EXPECT("or", frit_eval_alu(FRIT_OP_OR, KIND, x).u, fname##_bits((T)(a | b)));        \
    INT_EXPECT("xor", frit_eval_alu(FRIT_OP_XOR, KIND, x).u, fname##_bits((T)(a ^ b)));      \
    INT_EXPECT("shl", frit_eval_alu(FRIT_OP_SHL, KIND, x).u, fname##_bits(shl));             \
    INT_EXPECT("shr", frit_eval_alu(FRIT_OP_SHR, KIND, x).u, fname##_bits(shr));             \
    INT_EXPECT("max", frit_eval_alu(FRIT_OP_MAX, KIND, x).u, fname##_bits(a > b ? a : b));   \
    INT_EXPECT("min", frit_eval_alu(FRIT_OP_MIN, KIND, x).u, fname##_bits(a < b ? a : b));   \
    INT_EXPECT("cmplt", frit_eval_alu(FRIT_OP_CMPLT, KIND, x).u, (uint64_t)(a < b));         \
    INT_EXPECT("cmple", frit_eval_alu(FRIT_OP_CMPLE, KIND, x).u, (uint64_t)(a <= b));        \
    INT_EXPECT("cmpeq", frit_eval_alu(FRIT_OP_CMPEQ, KIND, x).u, (uint64_t)(a == b));        \
    INT_EXPECT("cmpne", frit_eval_alu(FRIT_OP_CMPNE, KIND, x).u, (uint64_t)(a != b));        \
    T neg = (T)(UT)(UINT64_C(0) - (uint64_t)(UT)a);                                           \
    INT_EXPECT("neg", frit_eval_alu(FRIT_OP_NEG, KIND, x).u, fname##_bits(neg));             \
    INT_EXPECT("not", frit_eval_alu(FRIT_OP_NOT, KIND, x).u, fname##_bits((T)~a));           \
    INT_EXPECT("abs", frit_eval_alu(FRIT_OP_ABS, KIND, x).u, fname##_bits((SIGNED && x[0].i < 0) ? neg : a)); \
    INT_EXPECT("trunc", frit_eval_alu(FRIT_OP_TRUNC, KIND, x).u, fname##_bits(a));           \
    frit_scalar w[3] = {si(a < b), fname##_box(a), fname##_box(b)};                           \
    INT_EXPECT("where", frit_eval_alu(FRIT_OP_WHERE, KIND, w).u, fname##_bits(a < b ? a : b)); \
    /* casts to every other integer type: the compiler's conversions */                       \
    INT_EXPECT("cast i8", frit_eval_cast(x[0], KIND, FRIT_I8).u, si((int8_t)a).u);           \
    INT_EXPECT("cast i16", frit_eval_cast(x[0], KIND, FRIT_I16).u, si((int16_t)a).u);        \
    INT_EXPECT("cast i32", frit_eval_cast(x[0], KIND, FRIT_I32).u, si((int32_t)a).u);        \
    INT_EXPECT("cast i64", frit_eval_cast(x[0], KIND, FRIT_I64).u, si((int64_t)a).u);        \
    INT_EXPECT("cast u8", frit_eval_cast(x[0], KIND, FRIT_U8).u, su((uint8_t)a).u);          \
    INT_EXPECT("cast u16", frit_eval_cast(x[0], KIND, FRIT_U16).u, su((uint16_t)a).u);       \
    INT_EXPECT("cast u32", frit_eval_cast(x[0], KIND, FRIT_U32).u, su((uint32_t)a).u);       \
    INT_EXPECT("cast u64", frit_eval_cast(x[0], KIND, FRIT_U64).u, su((uint64_t)a).u);       \
    INT_EXPECT("cast bool", frit_eval_cast(x[0], KIND, FRIT_BOOL).u, (uint64_t)(a != 0));    \
    double fd = frit_eval_cast(x[0], KIND, FRIT_F64).f;                                       \
    INT_EXPECT("cast f64", fd == (double)a, 1);                                               \
    double ff = frit_eval_cast(x[0], KIND, FRIT_F32).f;                                       \
    INT_EXPECT("cast f32", ff == (double)(float)a, 1);                                        \
    INT_EXPECT("normalize", frit_scalar_normalize(su(garbage_above(x[0].u, BITS)), KIND).u, \
               x[0].u);                                                                       \
  }                                                                                           \
  static void fname(void) {                                                                   \
    T edge[] = {0, 1, (T)-1, 2, (T)-2, 3, 5, 7, 8, 31, 32, 33, 63, 64, 65, 100, (T)-100,      \
                (T)(MINV), (T)(MAXV), (T)((MINV) + 1), (T)((MAXV) - 1), (T)((MAXV) / 2)};     \
    int ne = (int)(sizeof edge / sizeof edge[0]);                                             \
    for (int i = 0; i < ne; i++)                                                              \
      for (int j = 0; j < ne; j++) fname##_pair(edge[i], edge[j]);                            \
    for (int i = 0; i < 20000; i++) {                                                         \
      T a = (T)rnd(), b = (T)rnd();                                                           \
      if (i % 3 == 0) b = (T)(rnd() % 70);                                                    \
      if (i % 5 == 0) b = (T)((int)(rnd() % 9) - 4);                                          \
      fname##_pair(a, b);                                                                     \
    }                                                                                         \
  }

DEFINE_INT_TEST(test_i8, int8_t, uint8_t, FRIT_I8, 1, INT8_MIN, INT8_MAX, 8)
DEFINE_INT_TEST(test_i16, int16_t, uint16_t, FRIT_I16, 1, INT16_MIN, INT16_MAX, 16)
DEFINE_INT_TEST(test_i32, int32_t, uint32_t, FRIT_I32, 1, INT32_MIN, INT32_MAX, 32)
DEFINE_INT_TEST(test_i64, int64_t, uint64_t, FRIT_I64, 1, INT64_MIN, INT64_MAX, 64)
DEFINE_INT_TEST(test_u8, uint8_t, uint8_t, FRIT_U8, 0, 0, UINT8_MAX, 8)
DEFINE_INT_TEST(test_u16, uint16_t, uint16_t, FRIT_U16, 0, 0, UINT16_MAX, 16)
DEFINE_INT_TEST(test_u32, uint32_t, uint32_t, FRIT_U32, 0, 0, UINT32_MAX, 32)
DEFINE_INT_TEST(test_u64, uint64_t, uint64_t, FRIT_U64, 0, 0, UINT64_MAX, 64)

static void test_int_documented(void) {
  /* the documented exceptions, spelled out */
  CHECK_EQ_INT(alu2(FRIT_OP_IDIV, FRIT_I32, si(7), si(0)).i, 0);
  CHECK_EQ_INT(alu2(FRIT_OP_MOD, FRIT_I32, si(7), si(0)).i, 7);
  CHECK_EQ_INT(alu2(FRIT_OP_IDIV, FRIT_I64, si(INT64_MIN), si(-1)).i, INT64_MIN);
  CHECK_EQ_INT(alu2(FRIT_OP_MOD, FRIT_I64, si(INT64_MIN), si(-1)).i, 0);
  CHECK_EQ_INT(alu2(FRIT_OP_IDIV, FRIT_I32, si(-7), si(2)).i, -3);
  CHECK_EQ_INT(alu2(FRIT_OP_MOD, FRIT_I32, si(-7), si(2)).i, -1);
  CHECK_EQ_INT(alu2(FRIT_OP_MOD, FRIT_I32, si(7), si(-2)).i, 1);
  CHECK_EQ_INT(alu2(FRIT_OP_SHL, FRIT_I32, si(1), si(33)).i, 2);
  CHECK_EQ_INT(alu2(FRIT_OP_SHL, FRIT_I32, si(1), si(-1)).i, INT32_MIN);
  CHECK_EQ_INT(alu2(FRIT_OP_SHR, FRIT_I8, si(-128), si(7)).i, -1);
  CHECK_EQ_INT(alu2(FRIT_OP_SHR, FRIT_U8, su(128), su(7)).i, 1);
  CHECK_EQ_INT(alu2(FRIT_OP_ADD, FRIT_I32, si(INT32_MAX), si(1)).i, INT32_MIN);
  CHECK_EQ_INT(frit_eval_alu(FRIT_OP_ABS, FRIT_I64, (frit_scalar[]){si(INT64_MIN)}).i, INT64_MIN);
  /* bool: 0/1 computed as integers then != 0 */
  for (int a = 0; a < 2; a++)
    for (int b = 0; b < 2; b++) {
      CHECK_EQ_INT(alu2(FRIT_OP_AND, FRIT_BOOL, si(a), si(b)).i, a && b);
      CHECK_EQ_INT(alu2(FRIT_OP_OR, FRIT_BOOL, si(a), si(b)).i, a || b);
      CHECK_EQ_INT(alu2(FRIT_OP_XOR, FRIT_BOOL, si(a), si(b)).i, a != b);
      CHECK_EQ_INT(alu2(FRIT_OP_ADD, FRIT_BOOL, si(a), si(b)).i, a || b);
      CHECK_EQ_INT(alu2(FRIT_OP_MUL, FRIT_BOOL, si(a), si(b)).i, a && b);
      CHECK_EQ_INT(alu2(FRIT_OP_MAX, FRIT_BOOL, si(a), si(b)).i, a || b);
      CHECK_EQ_INT(alu2(FRIT_OP_MIN, FRIT_BOOL, si(a), si(b)).i, a && b);
      CHECK_EQ_INT(alu2(FRIT_OP_CMPLT, FRIT_BOOL, si(a), si(b)).i, a < b);
      CHECK_EQ_INT(alu2(FRIT_OP_CMPNE, FRIT_BOOL, si(a), si(b)).i, a != b);
      CHECK_EQ_INT(alu2(FRIT_OP_SHL, FRIT_BOOL, si(a), si(b)).i, a);
    }
  CHECK_EQ_INT(frit_eval_alu(FRIT_OP_NOT, FRIT_BOOL, (frit_scalar[]){si(1)}).i, 0);
  CHECK_EQ_INT(frit_eval_alu(FRIT_OP_NOT, FRIT_BOOL, (frit_scalar[]){si(0)}).i, 1);
  CHECK_EQ_INT(frit_eval_alu(FRIT_OP_NOT, FRIT_I32, (frit_scalar[]){si(0)}).i, -1);
  CHECK_EQ_INT(frit_scalar_normalize(si(2), FRIT_BOOL).i, 1);
  CHECK_EQ_INT(frit_scalar_normalize(si(256 + 255), FRIT_I8).i, -1);
  CHECK_EQ_INT(frit_scalar_normalize(si(-1), FRIT_U16).i, 65535);
  /* float-only ops on integers: via f64, converted back like CAST */
  CHECK_EQ_INT(frit_eval_alu(FRIT_OP_SQRT, FRIT_I32, (frit_scalar[]){si(17)}).i, 4);
  CHECK_EQ_INT(alu2(FRIT_OP_POW, FRIT_I32, si(3), si(4)).i, 81);
  CHECK_EQ_INT(alu2(FRIT_OP_POW, FRIT_I32, si(3), si(40)).i, INT32_MAX);
  CHECK_EQ_INT(frit_eval_alu(FRIT_OP_RECIP, FRIT_I32, (frit_scalar[]){si(0)}).i, INT32_MAX);
}

/* ---------- floats vs native C ---------- */

static int same_float(double x, double y) { return (isnan(x) && isnan(y)) || (x == y && signbit(x) == signbit(y)); }

static int float_fail_reports;
#define FLT_EXPECT(opname, got, want)                                                         \
  do {                                                                                        \
    check_count_++;                                                                           \
    if (!same_float((got), (want))) {                                                         \
      check_failures_++;                                                                      \
      if (float_fail_reports++ < 20)                                                          \
        fprintf(stderr, "%s %s a=%a b=%a: got %a want %a\n", kname, opname, (double)a,       \
                (double)b, (double)(got), (double)(want));                                    \
    }                                                                                         \
  } while (0)

/* Native MAX/MIN with the documented NaN and signed-zero rules. */
#define NATIVE_MAX(a, b) (isnan(a) || isnan(b) ? NAN : (a) == (b) ? (signbit(a) ? (b) : (a)) : (a) > (b) ? (a) : (b))
#define NATIVE_MIN(a, b) (isnan(a) || isnan(b) ? NAN : (a) == (b) ? (signbit(a) ? (a) : (b)) : (a) < (b) ? (a) : (b))

#define DEFINE_FLOAT_TEST(fname, T, S, KIND, INTT, UINTT)                                    \
  static void fname##_pair(T a, T b) {                                                        \
    const char *kname = #T;                                                                   \
    frit_scalar x[3] = {sf(a), sf(b), sf(a)};                                                 \
    static const frit_op un[] = {FRIT_OP_NEG, FRIT_OP_ABS, FRIT_OP_SQRT, FRIT_OP_EXP,          \
                                 FRIT_OP_EXP2, FRIT_OP_LOG, FRIT_OP_LOG2, FRIT_OP_SIN,         \
                                 FRIT_OP_COS, FRIT_OP_TAN, FRIT_OP_ASIN, FRIT_OP_ACOS,         \
                                 FRIT_OP_ATAN, FRIT_OP_SINH, FRIT_OP_COSH, FRIT_OP_TANH,       \
                                 FRIT_OP_ERF, FRIT_OP_FLOOR, FRIT_OP_CEIL, FRIT_OP_TRUNC,      \
                                 FRIT_OP_RINT, FRIT_OP_RECIP, FRIT_OP_RSQRT};                  \
    T unw[] = {-a, fabs##S(a), sqrt##S(a), exp##S(a), exp2##S(a), log##S(a), log2##S(a),      \
               sin##S(a), cos##S(a), tan##S(a), asin##S(a), acos##S(a), atan##S(a),           \
               sinh##S(a), cosh##S(a), tanh##S(a), erf##S(a), floor##S(a), ceil##S(a),        \
               trunc##S(a), nearbyint##S(a), (T)1 / a, (T)1 / sqrt##S(a)};                    \
    for (size_t i = 0; i < sizeof un / sizeof un[0]; i++)                                     \
      FLT_EXPECT(frit_op_name(un[i]), (T)frit_eval_alu(un[i], KIND, x).f, unw[i]);            \
    FLT_EXPECT("add", (T)frit_eval_alu(FRIT_OP_ADD, KIND, x).f, a + b);                      \
    FLT_EXPECT("sub", (T)frit_eval_alu(FRIT_OP_SUB, KIND, x).f, a - b);                      \
    FLT_EXPECT("mul", (T)frit_eval_alu(FRIT_OP_MUL, KIND, x).f, a * b);                      \
    FLT_EXPECT("fdiv", (T)frit_eval_alu(FRIT_OP_FDIV, KIND, x).f, a / b);                    \
    FLT_EXPECT("idiv", (T)frit_eval_alu(FRIT_OP_IDIV, KIND, x).f, trunc##S(a / b));          \
    FLT_EXPECT("mod", (T)frit_eval_alu(FRIT_OP_MOD, KIND, x).f, fmod##S(a, b));              \
    FLT_EXPECT("pow", (T)frit_eval_alu(FRIT_OP_POW, KIND, x).f, pow##S(a, b));               \
    FLT_EXPECT("atan2", (T)frit_eval_alu(FRIT_OP_ATAN2, KIND, x).f, atan2##S(a, b));         \
    FLT_EXPECT("max", (T)frit_eval_alu(FRIT_OP_MAX, KIND, x).f, (T)NATIVE_MAX(a, b));        \
    FLT_EXPECT("min", (T)frit_eval_alu(FRIT_OP_MIN, KIND, x).f, (T)NATIVE_MIN(a, b));        \
    T prod = a * b;                                                                           \
    FLT_EXPECT("mulacc", (T)frit_eval_alu(FRIT_OP_MULACC, KIND, x).f, prod + a);             \
    CHECK_EQ_INT(frit_eval_alu(FRIT_OP_CMPLT, KIND, x).i, a < b);                            \
    CHECK_EQ_INT(frit_eval_alu(FRIT_OP_CMPLE, KIND, x).i, a <= b);                           \
    CHECK_EQ_INT(frit_eval_alu(FRIT_OP_CMPEQ, KIND, x).i, a == b);                           \
    CHECK_EQ_INT(frit_eval_alu(FRIT_OP_CMPNE, KIND, x).i, a != b);                           \
    CHECK_EQ_INT(frit_eval_cast(x[0], KIND, FRIT_BOOL).i, a != 0);                           \
    /* float -> int: truncation where in range, NaN -> 0, saturation otherwise */              \
    T t = trunc##S(a);                                                                        \
    int64_t wi = isnan(a) ? 0 : t <= (T)INT32_MIN ? INT32_MIN : t >= (T)2147483648.0 ? INT32_MAX : (int32_t)t; \
    CHECK_EQ_INT(frit_eval_cast(x[0], KIND, FRIT_I32).i, wi);                                \
    int64_t wb = isnan(a) ? 0 : t <= -128 ? -128 : t >= 127 ? 127 : (int8_t)t;               \
    CHECK_EQ_INT(frit_eval_cast(x[0], KIND, FRIT_I8).i, wb);                                 \
    uint64_t wu = isnan(a) || t <= 0 ? 0 : t >= (T)18446744073709551616.0 ? UINT64_MAX : (uint64_t)t; \
    CHECK(frit_eval_cast(x[0], KIND, FRIT_U64).u == wu);                                     \
    int64_t wl = isnan(a) ? 0 : t <= (T)INT64_MIN ? INT64_MIN : t >= (T)9223372036854775808.0 ? INT64_MAX : (int64_t)t; \
    CHECK(frit_eval_cast(x[0], KIND, FRIT_I64).i == wl);                                     \
    /* bitcast to the same-width unsigned integer is the memory image */                      \
    UINTT img;                                                                                \
    memcpy(&img, &a, sizeof img);                                                             \
    if (!isnan(a)) CHECK(frit_eval_bitcast(x[0], KIND, sizeof(T) == 4 ? FRIT_U32 : FRIT_U64).u == img); \
    INTT ii = (INTT)(rnd() >> 1);                                                             \
    CHECK(same_float(frit_eval_cast(si(ii), FRIT_I64, KIND).f, (T)ii));                      \
    uint64_t uu = rnd();                                                                      \
    CHECK(same_float(frit_eval_cast(su(uu), FRIT_U64, KIND).f, (T)uu));                      \
    CHECK(same_float(frit_eval_cast(si(-(int64_t)(uu >> 2)), FRIT_I64, KIND).f, (T)(-(int64_t)(uu >> 2)))); \
  }                                                                                           \
  static T fname##_random(void) {                                                             \
    UINTT bits = (UINTT)rnd();                                                                \
    T v;                                                                                      \
    memcpy(&v, &bits, sizeof v);                                                              \
    return v;                                                                                 \
  }                                                                                           \
  static void fname(void) {                                                                   \
    T edge[] = {0, -(T)0, 1, -1, (T)0.5, (T)-0.5, (T)1.5, (T)2.5, (T)-2.5, (T)3, (T)-7.25,    \
                (T)INFINITY, -(T)INFINITY, (T)NAN, (T)1e-30, (T)3.14159, 100, (T)1e10};       \
    int ne = (int)(sizeof edge / sizeof edge[0]);                                             \
    for (int i = 0; i < ne; i++)                                                              \
      for (int j = 0; j < ne; j++) fname##_pair(edge[i], edge[j]);                            \
    for (int i = 0; i < 20000; i++) {                                                         \
      T a = fname##_random(), b = fname##_random();                                           \
      if (i % 2) a = (T)((double)(int64_t)(rnd() % 2001 - 1000) / 8), b = (T)((double)(int64_t)(rnd() % 41 - 20) / 4); \
      fname##_pair(a, b);                                                                     \
    }                                                                                         \
  }

DEFINE_FLOAT_TEST(test_f64, double, , FRIT_F64, int64_t, uint64_t)
DEFINE_FLOAT_TEST(test_f32, float, f, FRIT_F32, int32_t, uint32_t)

static void test_float_documented(void) {
  double nan = NAN;
  CHECK(isnan(alu2(FRIT_OP_MAX, FRIT_F32, sf(nan), sf(1)).f));
  CHECK(isnan(alu2(FRIT_OP_MIN, FRIT_F64, sf(1), sf(nan)).f));
  CHECK(!signbit(alu2(FRIT_OP_MAX, FRIT_F64, sf(-0.0), sf(0.0)).f));
  CHECK(signbit(alu2(FRIT_OP_MIN, FRIT_F64, sf(0.0), sf(-0.0)).f));
  CHECK_EQ_INT(alu2(FRIT_OP_CMPNE, FRIT_F64, sf(nan), sf(nan)).i, 1);
  CHECK_EQ_INT(alu2(FRIT_OP_CMPEQ, FRIT_F64, sf(-0.0), sf(0.0)).i, 1);
  CHECK(frit_eval_alu(FRIT_OP_RINT, FRIT_F64, (frit_scalar[]){sf(2.5)}).f == 2.0);
  CHECK(frit_eval_alu(FRIT_OP_RINT, FRIT_F64, (frit_scalar[]){sf(-3.5)}).f == -4.0);
  CHECK(frit_eval_cast(sf(nan), FRIT_F64, FRIT_I32).i == 0);
  CHECK(frit_eval_cast(sf(1e300), FRIT_F64, FRIT_I32).i == INT32_MAX);
  CHECK(frit_eval_cast(sf(-1e300), FRIT_F64, FRIT_U8).i == 0);
  CHECK(frit_eval_cast(sf(-0.9), FRIT_F64, FRIT_U8).i == 0);
  CHECK(frit_eval_cast(sf(nan), FRIT_F64, FRIT_BOOL).i == 1);
  /* f64 beyond FLT_MAX: overflow to inf, or round down to FLT_MAX within half an ulp */
  CHECK(isinf(frit_scalar_normalize(sf(1e300), FRIT_F32).f));
  CHECK(frit_scalar_normalize(sf((double)FLT_MAX * (1 + 0x1p-26)), FRIT_F32).f == FLT_MAX);
  CHECK(isinf(frit_eval_cast(sf(1e39), FRIT_F64, FRIT_F32).f));
  /* i64 -> bf16 rounds once: 2^60 + 2^52 + 1 is just above the half-way point */
  CHECK(frit_eval_cast(si((INT64_C(1) << 60) + (INT64_C(1) << 52) + 1), FRIT_I64, FRIT_BF16).f ==
        ldexp(1, 60) + ldexp(1, 53));
  CHECK(frit_eval_cast(si((INT64_C(1) << 60) + (INT64_C(1) << 52)), FRIT_I64, FRIT_BF16).f == ldexp(1, 60));
  CHECK(frit_eval_cast(su(UINT64_MAX), FRIT_U64, FRIT_F16).f == INFINITY);
  CHECK(frit_eval_cast(si(65519), FRIT_I64, FRIT_F16).f == 65504);
  CHECK(frit_eval_cast(si(65520), FRIT_I64, FRIT_F16).f == INFINITY);
  CHECK(frit_eval_cast(si(-2049), FRIT_I64, FRIT_F16).f == -2048);
  CHECK(frit_eval_cast(si(2051), FRIT_I32, FRIT_F16).f == 2052);
}

/* ---------- f16 / bf16 against a slow table-based reference ---------- */

/* Independent decode: the textbook formula. */
static double ref_decode(uint16_t h, int eb, int mb) {
  int bias = (1 << (eb - 1)) - 1;
  int s = h >> (eb + mb), e = (h >> mb) & ((1 << eb) - 1), m = h & ((1 << mb) - 1);
  double v;
  if (e == (1 << eb) - 1) v = m ? NAN : INFINITY;
  else if (e == 0) v = ldexp(m, 1 - bias - mb);
  else v = ldexp(1.0 + ldexp(m, -mb), e - bias);
  return s ? -v : v;
}

/* Positive finite values in increasing order (bit patterns 0 .. max finite). */
static double f16_tab[0x7c00], bf16_tab[0x7f80];

/* Round-to-nearest-even by search in the table of all finite values. */
static uint16_t ref_round(double x, const double *tab, int ntab, int eb, int mb) {
  uint16_t sign = signbit(x) ? (uint16_t)(1u << (eb + mb)) : 0;
  uint16_t inf = (uint16_t)(((1u << eb) - 1) << mb);
  double ax = fabs(x);
  if (isnan(x)) return 0xffff;
  int lo = 0, hi = ntab - 1;
  if (ax >= tab[hi]) {
    /* above the largest finite value: halfway to the next power of two decides */
    double next = tab[hi] + (tab[hi] - tab[hi - 1]);
    if (ax < (tab[hi] + next) / 2) return sign | (uint16_t)hi;
    return sign | inf;
  }
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    if (tab[mid] <= ax) lo = mid;
    else hi = mid;
  }
  /* tab[lo] <= ax < tab[hi] */
  double midpt = (tab[lo] + tab[hi]) / 2; /* exact: both have few significant bits */
  int pick = ax < midpt ? lo : ax > midpt ? hi : (lo % 2 == 0 ? lo : hi);
  return sign | (uint16_t)pick;
}

static void test_half_formats(void) {
  for (int i = 0; i < 0x7c00; i++) f16_tab[i] = ref_decode((uint16_t)i, 5, 10);
  for (int i = 0; i < 0x7f80; i++) bf16_tab[i] = ref_decode((uint16_t)i, 8, 7);
  int bad = 0;
  for (uint32_t p = 0; p < 65536; p++) {
    uint16_t h = (uint16_t)p;
    double d = frit_f16_to_double(h), rd = ref_decode(h, 5, 10);
    double b = frit_bf16_to_double(h), rb = ref_decode(h, 8, 7);
    if (!same_float(d, rd) || !same_float(b, rb)) bad++;
    /* round trip: every non-NaN pattern comes back; NaNs stay NaN and quiet */
    uint16_t h2 = frit_f16_from_double(d), b2 = frit_bf16_from_double(b);
    if (isnan(d) ? !isnan(frit_f16_to_double(h2)) || !(h2 & 0x200) : h2 != h) bad++;
    if (isnan(b) ? !isnan(frit_bf16_to_double(b2)) || !(b2 & 0x40) : b2 != h) bad++;
    /* and through the scalar API */
    frit_scalar v = frit_scalar_from_bits(h, FRIT_F16);
    if (!isnan(d) && frit_scalar_to_bits(v, FRIT_F16) != h) bad++;
    if (!same_float(frit_scalar_normalize(sf(d), FRIT_F16).f, d)) bad++;
  }
  CHECK_EQ_INT(bad, 0);
  /* rounding: random f32 values in and around the formats' ranges, midpoints, random doubles */
  bad = 0;
  for (int i = 0; i < 400000; i++) {
    double x;
    int mode = i % 4;
    if (mode == 0) {
      uint32_t bits = (uint32_t)rnd();
      float f;
      memcpy(&f, &bits, 4);
      x = f;
    } else if (mode == 1) {
      x = ldexp((double)(rnd() % (1u << 24)), (int)(rnd() % 60) - 60);
    } else if (mode == 2) {
      /* a value next to a midpoint between two neighbours */
      int k = (int)(rnd() % 0x7bff);
      double mid = (f16_tab[k] + f16_tab[k + 1]) / 2;
      x = mid + (double)((int)(rnd() % 3) - 1) * ldexp(mid, -40);
      if (rnd() & 1) x = -x;
    } else {
      uint64_t bits = rnd();
      memcpy(&x, &bits, 8);
      if (!isnan(x) && !isinf(x)) x = ldexp(frexp(x, &(int){0}), (int)(rnd() % 300) - 150);
    }
    if (isnan(x)) continue;
    uint16_t h = frit_f16_from_double(x), r = ref_round(x, f16_tab, 0x7c00, 5, 10);
    uint16_t b = frit_bf16_from_double(x), rb = ref_round(x, bf16_tab, 0x7f80, 8, 7);
    if (h != r || b != rb) {
      if (bad++ < 10)
        fprintf(stderr, "round %a: f16 %04x ref %04x, bf16 %04x ref %04x\n", x, h, r, b, rb);
    }
    if (mode == 2) {
      int k = (int)(rnd() % 0x7f7f);
      double mid = (bf16_tab[k] + bf16_tab[k + 1]) / 2;
      if (frit_bf16_from_double(mid) != ref_round(mid, bf16_tab, 0x7f80, 8, 7)) bad++;
    }
  }
  CHECK_EQ_INT(bad, 0);
  CHECK(frit_f16_from_double(65504) == 0x7bff);
  CHECK(frit_f16_from_double(65520) == 0x7c00);
  CHECK(frit_f16_from_double(65519.99) == 0x7bff);
  CHECK(frit_f16_from_double(0x1p-25) == 0); /* half the smallest subnormal: tie to even (0) */
  CHECK(frit_f16_from_double(0x1.0000000001p-25) == 1);
  CHECK(frit_f16_from_double(-0.0) == 0x8000);
  CHECK(frit_bf16_from_double(1.0) == 0x3f80);
  /* f16/bf16 ALU: each op rounded once from the exact result (sum and product exact in f64) */
  bad = 0;
  for (int i = 0; i < 200000; i++) {
    uint16_t ha = (uint16_t)rnd(), hb = (uint16_t)rnd();
    int bf = i & 1;
    double a = bf ? frit_bf16_to_double(ha) : frit_f16_to_double(ha);
    double b = bf ? frit_bf16_to_double(hb) : frit_f16_to_double(hb);
    if (isnan(a) || isnan(b) || isinf(a) || isinf(b)) continue;
    frit_dtype dt = bf ? FRIT_BF16 : FRIT_F16;
    const double *tab = bf ? bf16_tab : f16_tab;
    int ntab = bf ? 0x7f80 : 0x7c00, eb = bf ? 8 : 5, mb = bf ? 7 : 10;
    double s = frit_eval_alu(FRIT_OP_ADD, dt, (frit_scalar[]){sf(a), sf(b)}).f;
    double p = frit_eval_alu(FRIT_OP_MUL, dt, (frit_scalar[]){sf(a), sf(b)}).f;
    /* bf16 products of two 8-bit significands are exact in f64 too; sums of bf16 may not be
     * (exponent spread up to 254), so compare bf16 sums only when the spread is small */
    if (!bf || a == 0 || b == 0 || abs(ilogb(a) - ilogb(b)) < 40) {
      uint16_t rs = ref_round(a + b, tab, ntab, eb, mb);
      double want = ref_decode(rs, eb, mb);
      if (!same_float(s, want) && !(s == 0 && want == 0)) bad++;
    }
    uint16_t rp = ref_round(a * b, tab, ntab, eb, mb);
    if (!bf || (fabs(a * b) < 1e300 && (a * b == 0 || fabs(a * b) > 1e-300))) {
      if (!same_float(p, ref_decode(rp, eb, mb))) bad++;
    }
  }
  CHECK_EQ_INT(bad, 0);
  /* casts and bitcasts among the halves */
  CHECK(frit_eval_cast(sf(1.0 / 3), FRIT_F64, FRIT_F16).f == frit_f16_to_double(0x3555));
  CHECK(frit_eval_bitcast(su(0x3c00), FRIT_U16, FRIT_F16).f == 1.0);
  CHECK(frit_eval_bitcast(sf(-2.0), FRIT_BF16, FRIT_I16).i == (int16_t)0xc000);
  CHECK(frit_eval_bitcast(sf(1.0), FRIT_F32, FRIT_I32).i == 0x3f800000);
  CHECK(frit_eval_bitcast(si(0x3ff0000000000000), FRIT_I64, FRIT_F64).f == 1.0);
}

int main(void) {
  test_i8();
  test_i16();
  test_i32();
  test_i64();
  test_u8();
  test_u16();
  test_u32();
  test_u64();
  test_int_documented();
  test_f64();
  test_f32();
  test_float_documented();
  test_half_formats();
  CHECK_DONE();
}
