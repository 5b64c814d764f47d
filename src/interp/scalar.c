/* Scalar semantics of every ALU op, CAST and BITCAST on every scalar dtype: the single definition
 * that constant folding, the interpreter and (by docs/semantics.md) every backend follow. */
#include "interp/scalar.h"

#include <float.h>
#include <math.h>

/* ---------- kinds ---------- */

static int kind_bits(frit_scalar_kind k) {
  switch (k) {
  case FRIT_BOOL: case FRIT_I8: case FRIT_U8: return 8;
  case FRIT_I16: case FRIT_U16: case FRIT_F16: case FRIT_BF16: return 16;
  case FRIT_I32: case FRIT_U32: case FRIT_F32: return 32;
  case FRIT_I64: case FRIT_U64: case FRIT_F64: case FRIT_C64: return 64;
  case FRIT_C128: return 128;
  case FRIT_VOID: case FRIT_SCALAR_KIND_COUNT_: break;
  }
  frit_assert_fail("scalar op on void or bad dtype", __FILE__, __LINE__);
}

int frit_kind_bytes(frit_scalar_kind k) { return kind_bits(k) / 8; }

static bool kind_is_float(frit_scalar_kind k) { return k >= FRIT_F16 && k <= FRIT_F64; }
static bool kind_is_signed(frit_scalar_kind k) { return k >= FRIT_I8 && k <= FRIT_I64; }
static bool kind_is_complex(frit_scalar_kind k) { return k == FRIT_C64 || k == FRIT_C128; }
/* The real kind of a complex kind's parts. */
static frit_scalar_kind part_kind(frit_scalar_kind k) { return k == FRIT_C64 ? FRIT_F32 : FRIT_F64; }

/* Two's-complement wrap of a 64-bit pattern to `bits`, sign- or zero-extended back to 64. */
static uint64_t wrap_bits(uint64_t u, int bits, bool sgn) {
  if (bits >= 64) return u;
  uint64_t mask = (UINT64_C(1) << bits) - 1;
  u &= mask;
  if (sgn && ((u >> (bits - 1)) & 1)) u |= ~mask;
  return u;
}

/* ---------- small float formats ---------- */

/* Rounds a double to nearest-even in a binary format with `eb` exponent and `mb` mantissa bits,
 * straight from the double's bits so there is exactly one rounding. Returns the format's bits. */
static uint64_t round_to_format(double x, int eb, int mb) {
  uint64_t d;
  memcpy(&d, &x, sizeof d);
  uint64_t sign = (d >> 63) << (eb + mb);
  int dexp = (int)((d >> 52) & 0x7ff);
  uint64_t dman = d & ((UINT64_C(1) << 52) - 1);
  uint64_t emax_field = (UINT64_C(1) << eb) - 1;
  if (dexp == 0x7ff) {
    if (dman == 0) return sign | (emax_field << mb);
    /* NaN: keep the top payload bits, force quiet */
    return sign | (emax_field << mb) | (dman >> (52 - mb)) | (UINT64_C(1) << (mb - 1));
  }
  /* double subnormals are far below half the smallest subnormal of every narrower format */
  if (dexp == 0) return sign;
  int bias = (1 << (eb - 1)) - 1;
  int te = dexp - 1023 + bias; /* biased target exponent */
  uint64_t m = dman | (UINT64_C(1) << 52);
  int shift = 52 - mb;
  if (te <= 0) shift += 1 - te; /* target subnormal: fewer significant bits */
  if (shift > 54) return sign;  /* below half the smallest subnormal */
  uint64_t q = m >> shift, rem = m & ((UINT64_C(1) << shift) - 1), half = UINT64_C(1) << (shift - 1);
  if (rem > half || (rem == half && (q & 1))) q++;
  /* q carries the implicit bit, so adding it to (te-1) lets a rounding carry bump the exponent */
  uint64_t bits = te <= 0 ? q : ((uint64_t)(te - 1) << mb) + q;
  if ((bits >> mb) >= emax_field) bits = emax_field << mb;
  return sign | bits;
}

static double decode_format(uint64_t bits, int eb, int mb) {
  int bias = (1 << (eb - 1)) - 1;
  bool neg = (bits >> (eb + mb)) & 1;
  uint64_t e = (bits >> mb) & ((UINT64_C(1) << eb) - 1);
  uint64_t man = bits & ((UINT64_C(1) << mb) - 1);
  uint64_t d;
  if (e == (UINT64_C(1) << eb) - 1) {
    d = (UINT64_C(0x7ff) << 52) | (man << (52 - mb));
  } else if (e == 0) {
    double v = ldexp((double)man, 1 - bias - mb);
    return neg ? -v : v;
  } else {
    d = ((e - (uint64_t)bias + 1023) << 52) | (man << (52 - mb));
  }
  d |= (uint64_t)neg << 63;
  double v;
  memcpy(&v, &d, sizeof v);
  return v;
}

uint16_t frit_f16_from_double(double x) { return (uint16_t)round_to_format(x, 5, 10); }
uint16_t frit_bf16_from_double(double x) { return (uint16_t)round_to_format(x, 8, 7); }
double frit_f16_to_double(uint16_t h) { return decode_format(h, 5, 10); }
double frit_bf16_to_double(uint16_t h) { return decode_format(h, 8, 7); }

static double round_f32(double x) {
  if (isnan(x) || fabs(x) <= FLT_MAX || isinf(x)) return (double)(float)x;
  /* finite beyond FLT_MAX: the C conversion would be undefined, so round by hand */
  return decode_format(round_to_format(x, 8, 23), 8, 23);
}

static double round_float(double x, frit_scalar_kind k) {
  switch (k) {
  case FRIT_F64: return x;
  case FRIT_F32: return round_f32(x);
  case FRIT_F16: return frit_f16_to_double(frit_f16_from_double(x));
  case FRIT_BF16: return frit_bf16_to_double(frit_bf16_from_double(x));
  case FRIT_VOID: case FRIT_BOOL: case FRIT_I8: case FRIT_I16: case FRIT_I32: case FRIT_I64:
  case FRIT_U8: case FRIT_U16: case FRIT_U32: case FRIT_U64: case FRIT_C64: case FRIT_C128:
  case FRIT_SCALAR_KIND_COUNT_: break;
  }
  frit_assert_fail("round_float on a non-float kind", __FILE__, __LINE__);
}

frit_scalar frit_scalar_normalize(frit_scalar v, frit_dtype dt) {
  frit_scalar_kind k = frit_dtype_kind(dt);
  frit_scalar r;
  if (kind_is_complex(k)) {
    r.c.re = round_float(v.c.re, part_kind(k));
    r.c.im = round_float(v.c.im, part_kind(k));
  } else if (kind_is_float(k)) {
    r.f = round_float(v.f, k);
  } else if (k == FRIT_BOOL) {
    r.i = v.u != 0;
  } else {
    r.u = wrap_bits(v.u, kind_bits(k), kind_is_signed(k));
  }
  return r;
}

/* ---------- casts ---------- */

/* m as a double rounded to odd at 53 bits: a later round-to-nearest to <= 51 bits is then exact
 * (as if rounded once from m), which plain (double)m would not guarantee for f16/bf16. */
static double u64_to_double_odd(uint64_t m) {
  if (m < (UINT64_C(1) << 53)) return (double)m;
  int s = 0;
  while ((m >> s) >= (UINT64_C(1) << 53)) s++;
  uint64_t low = m & ((UINT64_C(1) << s) - 1);
  return ldexp((double)((m >> s) | (low != 0)), s);
}

static double uint_to_float(uint64_t u, frit_scalar_kind k) {
  if (k == FRIT_F64) return (double)u;
  if (k == FRIT_F32) return (double)(float)u;
  return round_float(u64_to_double_odd(u), k);
}

static double int_to_float(int64_t i, frit_scalar_kind k) {
  if (k == FRIT_F64) return (double)i;
  if (k == FRIT_F32) return (double)(float)i;
  uint64_t mag = i < 0 ? UINT64_C(0) - (uint64_t)i : (uint64_t)i;
  double d = u64_to_double_odd(mag);
  return round_float(i < 0 ? -d : d, k);
}

static uint64_t float_to_int(double x, frit_scalar_kind k) {
  if (isnan(x)) return 0;
  int bits = kind_bits(k);
  double t = trunc(x);
  if (kind_is_signed(k)) {
    double lim = ldexp(1.0, bits - 1);
    if (t <= -lim) return wrap_bits(UINT64_C(1) << (bits - 1), bits, true);
    if (t >= lim) return (UINT64_C(1) << (bits - 1)) - 1;
    return (uint64_t)(int64_t)t;
  }
  if (t <= 0) return 0;
  if (t >= ldexp(1.0, bits)) return bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
  return (uint64_t)t;
}

frit_scalar frit_eval_cast(frit_scalar v, frit_dtype from, frit_dtype to) {
  frit_scalar_kind kf = frit_dtype_kind(from), kt = frit_dtype_kind(to);
  frit_scalar r;
  (void)kind_bits(kf); /* asserts a real scalar kind */
  if (kind_is_complex(kf)) {
    /* numpy: to bool, nonzero in either part; to another complex, both parts; to a real type,
     * the real part alone */
    if (kt == FRIT_BOOL) {
      r.i = v.c.re != 0 || v.c.im != 0;
    } else if (kind_is_complex(kt)) {
      r.c.re = round_float(v.c.re, part_kind(kt));
      r.c.im = round_float(v.c.im, part_kind(kt));
    } else {
      frit_scalar re = {.f = v.c.re};
      r = frit_eval_cast(re, part_kind(kf), to);
    }
    return r;
  }
  if (kind_is_complex(kt)) {
    frit_scalar re = frit_eval_cast(v, from, part_kind(kt));
    r.c.re = re.f, r.c.im = 0;
    return r;
  }
  if (kt == FRIT_BOOL) {
    r.i = kind_is_float(kf) ? v.f != 0 : v.u != 0;
  } else if (kind_is_float(kt)) {
    if (kind_is_float(kf)) r.f = round_float(v.f, kt);
    else if (kind_is_signed(kf) || kf == FRIT_BOOL) r.f = int_to_float(v.i, kt);
    else r.f = uint_to_float(v.u, kt);
  } else if (kind_is_float(kf)) {
    r.u = float_to_int(v.f, kt);
  } else {
    r.u = wrap_bits(v.u, kind_bits(kt), kind_is_signed(kt));
  }
  return r;
}

uint64_t frit_scalar_to_bits(frit_scalar v, frit_scalar_kind k) {
  switch (k) {
  case FRIT_BOOL: return v.u != 0;
  case FRIT_I8: case FRIT_U8: return v.u & 0xffu;
  case FRIT_I16: case FRIT_U16: return v.u & 0xffffu;
  case FRIT_I32: case FRIT_U32: return v.u & 0xffffffffu;
  case FRIT_I64: case FRIT_U64: return v.u;
  case FRIT_F16: return frit_f16_from_double(v.f);
  case FRIT_BF16: return frit_bf16_from_double(v.f);
  case FRIT_F32: {
    float f = (float)round_f32(v.f);
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
  }
  case FRIT_F64: {
    uint64_t b;
    memcpy(&b, &v.f, sizeof b);
    return b;
  }
  case FRIT_C64: case FRIT_C128: /* no BITCAST of complex; loads and stores handle them apart */
  case FRIT_VOID: case FRIT_SCALAR_KIND_COUNT_: break;
  }
  frit_assert_fail("scalar bits of void, complex or bad dtype", __FILE__, __LINE__);
}

frit_scalar frit_scalar_from_bits(uint64_t bits, frit_scalar_kind k) {
  frit_scalar r;
  switch (k) {
  case FRIT_BOOL: r.i = (bits & 0xffu) != 0; return r;
  case FRIT_I8: case FRIT_I16: case FRIT_I32: case FRIT_I64:
  case FRIT_U8: case FRIT_U16: case FRIT_U32: case FRIT_U64:
    r.u = wrap_bits(bits, kind_bits(k), kind_is_signed(k));
    return r;
  case FRIT_F16: r.f = frit_f16_to_double((uint16_t)bits); return r;
  case FRIT_BF16: r.f = frit_bf16_to_double((uint16_t)bits); return r;
  case FRIT_F32: {
    uint32_t b = (uint32_t)bits;
    float f;
    memcpy(&f, &b, sizeof f);
    r.f = f;
    return r;
  }
  case FRIT_F64: memcpy(&r.f, &bits, sizeof r.f); return r;
  case FRIT_C64: case FRIT_C128:
  case FRIT_VOID: case FRIT_SCALAR_KIND_COUNT_: break;
  }
  frit_assert_fail("scalar from bits of void or bad dtype", __FILE__, __LINE__);
}

frit_scalar frit_eval_bitcast(frit_scalar v, frit_dtype from, frit_dtype to) {
  return frit_scalar_from_bits(frit_scalar_to_bits(v, frit_dtype_kind(from)), frit_dtype_kind(to));
}

frit_scalar frit_scalar_load(const void *p, frit_scalar_kind k) {
  if (kind_is_complex(k)) { /* interleaved (re, im), as C's _Complex and numpy */
    frit_scalar r;
    if (k == FRIT_C64) {
      float f[2];
      memcpy(f, p, sizeof f);
      r.c.re = f[0], r.c.im = f[1];
    } else {
      memcpy(&r.c, p, sizeof r.c);
    }
    return r;
  }
  uint64_t bits = 0;
  switch (kind_bits(k)) {
  case 8: { uint8_t b; memcpy(&b, p, 1); bits = b; break; }
  case 16: { uint16_t b; memcpy(&b, p, 2); bits = b; break; }
  case 32: { uint32_t b; memcpy(&b, p, 4); bits = b; break; }
  default: memcpy(&bits, p, 8); break;
  }
  return frit_scalar_from_bits(bits, k);
}

void frit_scalar_store(void *p, frit_scalar_kind k, frit_scalar v) {
  if (kind_is_complex(k)) {
    if (k == FRIT_C64) {
      float f[2] = {(float)round_f32(v.c.re), (float)round_f32(v.c.im)};
      memcpy(p, f, sizeof f);
    } else {
      double d[2] = {v.c.re, v.c.im};
      memcpy(p, d, sizeof d);
    }
    return;
  }
  uint64_t bits = frit_scalar_to_bits(v, k);
  switch (kind_bits(k)) {
  case 8: { uint8_t b = (uint8_t)bits; memcpy(p, &b, 1); break; }
  case 16: { uint16_t b = (uint16_t)bits; memcpy(p, &b, 2); break; }
  case 32: { uint32_t b = (uint32_t)bits; memcpy(p, &b, 4); break; }
  default: memcpy(p, &bits, 8); break;
  }
}

/* ---------- ALU ---------- */

#define NON_ALU_CASES                                                                       \
  case FRIT_OP_CONST: case FRIT_OP_VECTORIZE: case FRIT_OP_GEP: case FRIT_OP_CAST:           \
  case FRIT_OP_BITCAST: case FRIT_OP_DEFINE_VAR: case FRIT_OP_BIND: case FRIT_OP_SINK:       \
  case FRIT_OP_GROUP: case FRIT_OP_AFTER: case FRIT_OP_SPECIAL: case FRIT_OP_RESHAPE:        \
  case FRIT_OP_PERMUTE: case FRIT_OP_EXPAND: case FRIT_OP_PAD: case FRIT_OP_SHRINK:          \
  case FRIT_OP_FLIP: case FRIT_OP_GATHER: case FRIT_OP_SCAN: case FRIT_OP_SCATTER: case FRIT_OP_SEQ: case FRIT_OP_BREAK: case FRIT_OP_CONTINUE: case FRIT_OP_LOOP: case FRIT_OP_CARRY: case FRIT_OP_IOTA: case FRIT_OP_CONTIGUOUS: case FRIT_OP_COLLECTIVE: case FRIT_OP_REDUCE_AXIS: case FRIT_OP_REDUCE: case FRIT_OP_RANGE:      \
  case FRIT_OP_END: case FRIT_OP_IF: case FRIT_OP_BARRIER: case FRIT_OP_KERNEL:              \
  case FRIT_OP_BUFFER: case FRIT_OP_DEFINE_GLOBAL: case FRIT_OP_DEFINE_LOCAL:                \
  case FRIT_OP_DEFINE_REG: case FRIT_OP_INDEX: case FRIT_OP_LOAD: case FRIT_OP_STORE:        \
  case FRIT_OP_ATOMIC: case FRIT_OP_ATOMIC_CAS: case FRIT_OP_COUNT_:                           \
  case FRIT_OP_REAL: case FRIT_OP_IMAG: case FRIT_OP_CONJ: case FRIT_OP_COMPLEX

/* The float arithmetic of one precision T with libm suffix S (empty: double, f: float).
 * Comparisons, bitwise ops and WHERE are handled by the caller. */
#define DEFINE_FLOAT_OPS(fname, T, S)                                                       \
  static T fname(frit_op op, T a, T b, T c) {                                               \
    switch (op) {                                                                           \
    case FRIT_OP_NEG: return -a;                                                            \
    case FRIT_OP_ABS: return fabs##S(a);                                                    \
    case FRIT_OP_SQRT: return sqrt##S(a);                                                   \
    case FRIT_OP_RSQRT: { T s = sqrt##S(a); return (T)1 / s; }                              \
    case FRIT_OP_RECIP: return (T)1 / a;                                                    \
    case FRIT_OP_EXP: return exp##S(a);                                                     \
    case FRIT_OP_EXP2: return exp2##S(a);                                                   \
    case FRIT_OP_LOG: return log##S(a);                                                     \
    case FRIT_OP_LOG2: return log2##S(a);                                                   \
    case FRIT_OP_SIN: return sin##S(a);                                                     \
    case FRIT_OP_COS: return cos##S(a);                                                     \
    case FRIT_OP_TAN: return tan##S(a);                                                     \
    case FRIT_OP_ASIN: return asin##S(a);                                                   \
    case FRIT_OP_ACOS: return acos##S(a);                                                   \
    case FRIT_OP_ATAN: return atan##S(a);                                                   \
    case FRIT_OP_SINH: return sinh##S(a);                                                   \
    case FRIT_OP_COSH: return cosh##S(a);                                                   \
    case FRIT_OP_TANH: return tanh##S(a);                                                   \
    case FRIT_OP_ERF: return erf##S(a);                                                     \
    case FRIT_OP_FLOOR: return floor##S(a);                                                 \
    case FRIT_OP_CEIL: return ceil##S(a);                                                   \
    case FRIT_OP_TRUNC: return trunc##S(a);                                                 \
    case FRIT_OP_RINT: return nearbyint##S(a);                                              \
    case FRIT_OP_ADD: return a + b;                                                         \
    case FRIT_OP_SUB: return a - b;                                                         \
    case FRIT_OP_MUL: return a * b;                                                         \
    case FRIT_OP_FDIV: return a / b;                                                        \
    case FRIT_OP_IDIV: { T q = a / b; return trunc##S(q); }                                 \
    case FRIT_OP_MOD: return fmod##S(a, b);                                                 \
    case FRIT_OP_MAX:                                                                       \
      if (isnan(a) || isnan(b)) return a + b;                                               \
      if (a == b) return signbit(a) ? b : a; /* max(-0, +0) = +0 */                         \
      return a > b ? a : b;                                                                 \
    case FRIT_OP_MIN:                                                                       \
      if (isnan(a) || isnan(b)) return a + b;                                               \
      if (a == b) return signbit(a) ? a : b;                                                \
      return a < b ? a : b;                                                                 \
    case FRIT_OP_POW: return pow##S(a, b);                                                  \
    case FRIT_OP_ATAN2: return atan2##S(a, b);                                              \
    case FRIT_OP_MULACC: { T p = a * b; return p + c; } /* unfused: two roundings */       \
    case FRIT_OP_NOT: case FRIT_OP_AND: case FRIT_OP_OR: case FRIT_OP_XOR:                  \
    case FRIT_OP_SHL: case FRIT_OP_SHR: case FRIT_OP_CMPLT: case FRIT_OP_CMPLE:             \
    case FRIT_OP_CMPEQ: case FRIT_OP_CMPNE: case FRIT_OP_WHERE:                             \
    NON_ALU_CASES:                                                                          \
      break;                                                                                \
    }                                                                                       \
    frit_assert_fail("float op not handled", __FILE__, __LINE__);                           \
  }

DEFINE_FLOAT_OPS(f64_op, double, )
DEFINE_FLOAT_OPS(f32_op, float, f)

static frit_scalar make_bool(bool b) {
  frit_scalar r;
  r.i = b;
  return r;
}

static frit_scalar eval_float(frit_op op, frit_scalar_kind k, const frit_scalar *src) {
  double a = src[0].f;
  frit_scalar r;
  switch (op) {
  case FRIT_OP_CMPLT: return make_bool(a < src[1].f);
  case FRIT_OP_CMPLE: return make_bool(a <= src[1].f);
  case FRIT_OP_CMPEQ: return make_bool(a == src[1].f);
  case FRIT_OP_CMPNE: return make_bool(a != src[1].f);
  case FRIT_OP_NOT: case FRIT_OP_AND: case FRIT_OP_OR: case FRIT_OP_XOR: case FRIT_OP_SHL:
  case FRIT_OP_SHR: {
    /* not valid IR on floats; defined on the IEEE bit pattern so folding never traps */
    int bits = kind_bits(k);
    uint64_t x = frit_scalar_to_bits(src[0], k), y = 0, m = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    if (op != FRIT_OP_NOT) y = frit_scalar_to_bits(src[1], k);
    uint64_t z = op == FRIT_OP_NOT ? ~x : op == FRIT_OP_AND ? x & y : op == FRIT_OP_OR ? x | y
               : op == FRIT_OP_XOR ? x ^ y : op == FRIT_OP_SHL ? x << (y % (uint64_t)bits)
               : x >> (y % (uint64_t)bits);
    return frit_scalar_from_bits(z & m, k);
  }
  case FRIT_OP_NEG: case FRIT_OP_ABS: case FRIT_OP_SQRT: case FRIT_OP_RSQRT: case FRIT_OP_RECIP:
  case FRIT_OP_EXP: case FRIT_OP_EXP2: case FRIT_OP_LOG: case FRIT_OP_LOG2: case FRIT_OP_SIN:
  case FRIT_OP_COS: case FRIT_OP_TAN: case FRIT_OP_ASIN: case FRIT_OP_ACOS: case FRIT_OP_ATAN:
  case FRIT_OP_SINH: case FRIT_OP_COSH: case FRIT_OP_TANH: case FRIT_OP_ERF: case FRIT_OP_FLOOR:
  case FRIT_OP_CEIL: case FRIT_OP_TRUNC: case FRIT_OP_RINT: case FRIT_OP_ADD: case FRIT_OP_SUB:
  case FRIT_OP_MUL: case FRIT_OP_FDIV: case FRIT_OP_IDIV: case FRIT_OP_MOD: case FRIT_OP_MAX:
  case FRIT_OP_MIN: case FRIT_OP_POW: case FRIT_OP_ATAN2: case FRIT_OP_MULACC: {
    unsigned flags = frit_op_flags(op);
    double b = (flags & (FRIT_F_BINARY | FRIT_F_TERNARY)) ? src[1].f : 0;
    double c = (flags & FRIT_F_TERNARY) ? src[2].f : 0;
    if (k == FRIT_F64) {
      r.f = f64_op(op, a, b, c);
    } else {
      /* f32, f16, bf16: operands are exact floats; f16/bf16 results are rounded once more */
      r.f = f32_op(op, (float)a, (float)b, (float)c);
      if (k != FRIT_F32) r.f = round_float(r.f, k);
    }
    return r;
  }
  case FRIT_OP_WHERE:
  NON_ALU_CASES:
    break;
  }
  frit_assert_fail("frit_eval_alu: not an ALU op", __FILE__, __LINE__);
}

static frit_scalar eval_int(frit_op op, frit_scalar_kind k, const frit_scalar *src) {
  int bits = kind_bits(k);
  bool sgn = kind_is_signed(k), is_bool = k == FRIT_BOOL;
  unsigned flags = frit_op_flags(op);
  uint64_t a = src[0].u;
  uint64_t b = (flags & (FRIT_F_BINARY | FRIT_F_TERNARY)) ? src[1].u : 0;
  int64_t sa = (int64_t)a, sb = (int64_t)b;
  uint64_t z = 0;
  frit_scalar r;
  switch (op) {
  case FRIT_OP_CMPLT: return make_bool(sgn ? sa < sb : a < b);
  case FRIT_OP_CMPLE: return make_bool(sgn ? sa <= sb : a <= b);
  case FRIT_OP_CMPEQ: return make_bool(a == b);
  case FRIT_OP_CMPNE: return make_bool(a != b);
  case FRIT_OP_NEG: z = UINT64_C(0) - a; break;
  case FRIT_OP_NOT: z = is_bool ? !a : ~a; break;
  case FRIT_OP_ABS: z = sgn && sa < 0 ? UINT64_C(0) - a : a; break;
  case FRIT_OP_FLOOR: case FRIT_OP_CEIL: case FRIT_OP_TRUNC: case FRIT_OP_RINT: z = a; break;
  case FRIT_OP_ADD: z = a + b; break;
  case FRIT_OP_SUB: z = a - b; break;
  case FRIT_OP_MUL: z = a * b; break;
  case FRIT_OP_MULACC: z = a * b + src[2].u; break;
  case FRIT_OP_FDIV: /* documented: integer FDIV is IDIV */
  case FRIT_OP_IDIV:
    if (b == 0) z = 0;
    else if (sgn) z = sb == -1 ? UINT64_C(0) - a : (uint64_t)(sa / sb);
    else z = a / b;
    break;
  case FRIT_OP_MOD:
    if (b == 0) z = a;
    else if (sgn) z = sb == -1 ? 0 : (uint64_t)(sa % sb);
    else z = a % b;
    break;
  case FRIT_OP_MAX: z = (sgn ? sa > sb : a > b) ? a : b; break;
  case FRIT_OP_MIN: z = (sgn ? sa < sb : a < b) ? a : b; break;
  case FRIT_OP_AND: z = a & b; break;
  case FRIT_OP_OR: z = a | b; break;
  case FRIT_OP_XOR: z = a ^ b; break;
  case FRIT_OP_SHL: case FRIT_OP_SHR: {
    if (is_bool) { /* a 1-bit type: every count is 0 modulo the width */
      z = a;
      break;
    }
    unsigned c = (unsigned)(b & (uint64_t)(bits - 1));
    if (op == FRIT_OP_SHL) z = a << c;
    else if (sgn && sa < 0) z = ~((~a) >> c); /* arithmetic shift without relying on >> of negatives */
    else z = a >> c;
    break;
  }
  case FRIT_OP_SQRT: case FRIT_OP_RSQRT: case FRIT_OP_RECIP: case FRIT_OP_EXP: case FRIT_OP_EXP2:
  case FRIT_OP_LOG: case FRIT_OP_LOG2: case FRIT_OP_SIN: case FRIT_OP_COS: case FRIT_OP_TAN:
  case FRIT_OP_ASIN: case FRIT_OP_ACOS: case FRIT_OP_ATAN: case FRIT_OP_SINH: case FRIT_OP_COSH:
  case FRIT_OP_TANH: case FRIT_OP_ERF: case FRIT_OP_POW: case FRIT_OP_ATAN2: {
    /* float-only ops on integers: computed in f64, converted back like CAST */
    frit_scalar fs[2];
    fs[0] = frit_eval_cast(src[0], k, FRIT_F64);
    fs[1] = (flags & FRIT_F_BINARY) ? frit_eval_cast(src[1], k, FRIT_F64) : fs[0];
    return frit_eval_cast(eval_float(op, FRIT_F64, fs), FRIT_F64, k);
  }
  case FRIT_OP_WHERE:
  NON_ALU_CASES:
    frit_assert_fail("frit_eval_alu: not an ALU op", __FILE__, __LINE__);
  }
  if (is_bool) r.i = z != 0;
  else r.u = wrap_bits(z, bits, sgn);
  return r;
}

frit_scalar frit_eval_alu(frit_op op, frit_dtype dt, const frit_scalar *src) {
  frit_scalar_kind k = frit_dtype_kind(dt);
  if (op == FRIT_OP_WHERE) return src[0].u ? src[1] : src[2];
  if (op == FRIT_OP_COMPLEX) { /* the operands are the parts, already of the part's dtype */
    frit_scalar r;
    r.c.re = src[0].f, r.c.im = src[1].f;
    return r;
  }
  if (kind_is_complex(k)) return frit_eval_complex(op, k, src);
  if (kind_is_float(k)) return eval_float(op, k, src);
  return eval_int(op, k, src);
}
