/* numpy ufuncs acosh, asinh, atanh, cbrt, rint, deg2rad, rad2deg, signbit, copysign, hypot,
 * logaddexp(2), nextafter, fmod, fmax, fmin as composites that stay accurate over the whole range
 * (no overflow in hypot/logaddexp, exact bit manipulation for copysign/nextafter/signbit). */
#include "tensor/elementwise_extra.h"
#include "tensor/grad_rules.h"

#include <math.h>
#include <stdint.h>

#define LN2 0.693147180559945309417232121458176568
#define PI 3.14159265358979323846264338327950288

/* numpy's float loop for an integer or bool input (as float_of in elementwise.c). */
static frit_dtype float_of(frit_dtype dt) {
  if (frit_dtype_is_float(dt)) return dt;
  int bits = frit_dtype_is_bool(dt) ? 8 : frit_dtype_bits(dt);
  return bits <= 8 ? FRIT_F16 : bits <= 16 ? FRIT_F32 : FRIT_F64;
}
/* The dtype a composite runs in: a wider float when there is one, so that the result is rounded
 * once (f16 -> f32; f32 and bf16 -> f64, which also keeps bf16 squares finite). */
static frit_dtype wide_of(frit_dtype dt) {
  if (dt == FRIT_F16) return FRIT_F32;
  return FRIT_F64;
}

static frit_tensor *isnan_(frit_ctx *c, frit_tensor *x) { return ne(c, x, x); }
static frit_tensor *isinf_(frit_ctx *c, frit_tensor *x) {
  return eq(c, ti_alu1(c, FRIT_OP_ABS, x), cf(c, x, INFINITY));
}

static frit_dtype int_of_width(frit_dtype dt) {
  int bits = frit_dtype_bits(dt);
  return bits == 64 ? FRIT_I64 : bits == 32 ? FRIT_I32 : FRIT_I16;
}
static frit_tensor *bitcast(frit_ctx *ctx, frit_tensor *x, frit_dtype to) {
  if (!x) return NULL;
  frit_uop *u = TI_U(x);
  frit_tensor *b = TI_T(frit_uop_new(ctx, FRIT_OP_BITCAST, to, &u, 1, NULL));
  if (!b || !frit_shape_of(ctx, TI_U(b))) return NULL;
  return b;
}
static frit_tensor *bits_of(frit_ctx *ctx, frit_tensor *x) { return bitcast(ctx, x, int_of_width(TI_U(x)->dtype)); }
/* The sign-bit mask of a same-width integer (INT_MIN). */
static frit_tensor *sign_mask(frit_ctx *ctx, frit_tensor *bits) {
  int w = frit_dtype_bits(TI_U(bits)->dtype);
  return ci(ctx, bits, w == 64 ? INT64_MIN : -((int64_t)1 << (w - 1)));
}
static frit_tensor *signbit_f(frit_ctx *ctx, frit_tensor *x) {
  frit_tensor *b = bits_of(ctx, x);
  return b ? lt(ctx, b, ci(ctx, b, 0)) : NULL;
}
/* -r where x has its sign bit set (keeps the sign of -0.0 and of signed NaNs of x). */
static frit_tensor *with_sign_of(frit_ctx *ctx, frit_tensor *r, frit_tensor *x) {
  return where(ctx, signbit_f(ctx, x), ti_alu1(ctx, FRIT_OP_NEG, r), r);
}

/* log1p(x) = x * log(u) / (u - 1) with u = 1 + x: the rounding error of u cancels. */
static frit_tensor *log1p_(frit_ctx *ctx, frit_tensor *x) {
  frit_tensor *u = add(ctx, x, cf(ctx, x, 1.0));
  frit_tensor *r = mul(ctx, ti_alu1(ctx, FRIT_OP_LOG, u), fdiv(ctx, x, sub(ctx, u, cf(ctx, x, 1.0))));
  r = where(ctx, eq(ctx, u, cf(ctx, x, INFINITY)), u, r);
  return where(ctx, eq(ctx, u, cf(ctx, x, 1.0)), x, r);
}

/* Above this, asinh/acosh(a) = log(2a) to within the rounding of the dtype (a^2 >> 1). */
static double big_of(frit_dtype ct) { return ct == FRIT_F64 ? 268435456.0 /* 2^28 */ : 8192.0; }

static frit_tensor *asinh_(frit_ctx *ctx, frit_tensor *x) {
  frit_tensor *a = ti_alu1(ctx, FRIT_OP_ABS, x);
  frit_tensor *one = cf(ctx, a, 1.0), *a2 = mul(ctx, a, a);
  frit_tensor *mid = log1p_(ctx, add(ctx, a, fdiv(ctx, a2, add(ctx, one, ti_alu1(ctx, FRIT_OP_SQRT, add(ctx, one, a2))))));
  frit_tensor *big = add(ctx, ti_alu1(ctx, FRIT_OP_LOG, a), cf(ctx, a, LN2));
  frit_tensor *r = where(ctx, lt(ctx, cf(ctx, a, big_of(TI_U(a)->dtype)), a), big, mid);
  return with_sign_of(ctx, r, x);
}

static frit_tensor *acosh_(frit_ctx *ctx, frit_tensor *x) {
  frit_tensor *t = sub(ctx, x, cf(ctx, x, 1.0)); /* exact near 1 (Sterbenz) */
  frit_tensor *mid = log1p_(ctx, add(ctx, t, ti_alu1(ctx, FRIT_OP_SQRT, add(ctx, add(ctx, t, t), mul(ctx, t, t)))));
  frit_tensor *big = add(ctx, ti_alu1(ctx, FRIT_OP_LOG, x), cf(ctx, x, LN2));
  frit_tensor *r = where(ctx, lt(ctx, cf(ctx, x, big_of(TI_U(x)->dtype)), x), big, mid);
  return where(ctx, lt(ctx, x, cf(ctx, x, 1.0)), cf(ctx, x, NAN), r);
}

static frit_tensor *atanh_(frit_ctx *ctx, frit_tensor *x) {
  frit_tensor *a = ti_alu1(ctx, FRIT_OP_ABS, x), *one = cf(ctx, a, 1.0);
  frit_tensor *a2 = add(ctx, a, a), *om = sub(ctx, one, a);
  frit_tensor *small = add(ctx, a2, fdiv(ctx, mul(ctx, a2, a), om)); /* 2a/(1-a), cancellation-free */
  frit_tensor *large = fdiv(ctx, a2, om);
  frit_tensor *r = mul(ctx, cf(ctx, a, 0.5), log1p_(ctx, where(ctx, lt(ctx, a, cf(ctx, a, 0.5)), small, large)));
  return with_sign_of(ctx, r, x);
}

/* exp(log(a)/3) then one Newton step y + (a/y^2 - y)/3: the step squares the relative error of
 * the first guess and cannot overflow (a/y^2 is about y). */
static frit_tensor *cbrt_(frit_ctx *ctx, frit_tensor *x) {
  frit_tensor *a = ti_alu1(ctx, FRIT_OP_ABS, x);
  frit_tensor *y = ti_alu1(ctx, FRIT_OP_EXP, mul(ctx, ti_alu1(ctx, FRIT_OP_LOG, a), cf(ctx, a, 1.0 / 3.0)));
  y = add(ctx, y, mul(ctx, sub(ctx, fdiv(ctx, a, mul(ctx, y, y)), y), cf(ctx, a, 1.0 / 3.0)));
  frit_tensor *r = where(ctx, or_(ctx, eq(ctx, a, cf(ctx, a, 0.0)), isinf_(ctx, a)), a, y);
  return with_sign_of(ctx, r, x);
}

frit_tensor *ti_unary_extra(frit_ctx *ctx, frit_ufunc f, frit_tensor *x) {
  const char *name = frit_ufunc_name(f);
  frit_dtype dt = TI_U(x)->dtype, out = float_of(dt);
  if (f == FRIT_UF_SIGNBIT) {
    if (frit_dtype_is_float(dt)) return signbit_f(ctx, x);
    if (frit_dtype_is_bool(dt) || frit_dtype_is_unsigned(dt)) return ti_const_i(ctx, FRIT_BOOL, 0, x);
    return lt(ctx, x, ci(ctx, x, 0));
  }
  if (f == FRIT_UF_RINT) return ti_alu1(ctx, FRIT_OP_RINT, ti_cast(ctx, x, out));
  if (f == FRIT_UF_DEG2RAD || f == FRIT_UF_RAD2DEG) {
    frit_dtype ct = frit_dtype_bits(out) == 16 ? FRIT_F32 : out;
    frit_tensor *y = ti_cast(ctx, x, ct);
    if (!y) return NULL;
    double k = f == FRIT_UF_DEG2RAD ? PI / 180.0 : 180.0 / PI;
    return ti_cast(ctx, mul(ctx, y, cf(ctx, y, k)), out);
  }
  frit_tensor *y = ti_cast(ctx, x, wide_of(out)), *r = NULL;
  if (!y) return NULL;
  if (f == FRIT_UF_ACOSH) r = acosh_(ctx, y);
  else if (f == FRIT_UF_ASINH) r = asinh_(ctx, y);
  else if (f == FRIT_UF_ATANH) r = atanh_(ctx, y);
  else if (f == FRIT_UF_CBRT) r = cbrt_(ctx, y);
  else return TI_FAIL1(ctx, name, x, "internal: not an extra ufunc");
  return ti_cast(ctx, r, out);
}

/* ---------- binary ---------- */

static frit_tensor *copysign_(frit_ctx *ctx, frit_tensor *a, frit_tensor *b) {
  frit_tensor *ia = bits_of(ctx, a), *ib = bits_of(ctx, b);
  if (!ia || !ib) return NULL;
  frit_tensor *m = sign_mask(ctx, ia);
  frit_tensor *r = ti_alu2(ctx, FRIT_OP_OR, and_(ctx, ia, ti_alu1(ctx, FRIT_OP_NOT, m)), and_(ctx, ib, m));
  return bitcast(ctx, r, TI_U(a)->dtype);
}

/* In a wider float: sqrt(a^2 + b^2) cannot overflow and is rounded once. In f64: m*sqrt(1+(n/m)^2)
 * with m = max(|a|,|b|). hypot(+-inf, NaN) is inf as in C. */
static frit_tensor *hypot_(frit_ctx *ctx, frit_tensor *a0, frit_tensor *b0) {
  frit_dtype dt = TI_U(a0)->dtype;
  frit_tensor *a = ti_alu1(ctx, FRIT_OP_ABS, a0), *b = ti_alu1(ctx, FRIT_OP_ABS, b0), *r;
  if (dt != FRIT_F64) {
    frit_dtype wt = wide_of(dt);
    frit_tensor *x = ti_cast(ctx, a, wt), *y = ti_cast(ctx, b, wt);
    if (!x || !y) return NULL;
    r = ti_cast(ctx, ti_alu1(ctx, FRIT_OP_SQRT, add(ctx, mul(ctx, x, x), mul(ctx, y, y))), dt);
  } else {
    frit_tensor *alb = lt(ctx, a, b);
    frit_tensor *m = where(ctx, alb, b, a), *n = where(ctx, alb, a, b);
    frit_tensor *q = fdiv(ctx, n, m);
    r = mul(ctx, m, ti_alu1(ctx, FRIT_OP_SQRT, add(ctx, cf(ctx, q, 1.0), mul(ctx, q, q))));
    r = where(ctx, eq(ctx, m, cf(ctx, m, 0.0)), n, r); /* 0, or NaN from n */
  }
  return where(ctx, or_(ctx, isinf_(ctx, a), isinf_(ctx, b)), cf(ctx, a, INFINITY), r);
}

/* max + log1p(exp(-|a-b|)) (base 2: max + log1p(exp2(-|a-b|))/ln 2); a == b (infinities too)
 * gives a + log(2). */
static frit_tensor *logaddexp_(frit_ctx *ctx, frit_tensor *a0, frit_tensor *b0, bool base2) {
  frit_dtype dt = TI_U(a0)->dtype, ct = dt == FRIT_F64 ? FRIT_F64 : wide_of(dt);
  frit_tensor *a = ti_cast(ctx, a0, ct), *b = ti_cast(ctx, b0, ct);
  if (!a || !b) return NULL;
  frit_tensor *m = where(ctx, lt(ctx, b, a), a, b);
  frit_tensor *d = ti_alu1(ctx, FRIT_OP_NEG, ti_alu1(ctx, FRIT_OP_ABS, sub(ctx, a, b)));
  frit_tensor *t = log1p_(ctx, ti_alu1(ctx, base2 ? FRIT_OP_EXP2 : FRIT_OP_EXP, d));
  if (base2) t = mul(ctx, t, cf(ctx, t, 1.0 / LN2));
  frit_tensor *r = where(ctx, eq(ctx, a, b), add(ctx, a, cf(ctx, a, base2 ? 1.0 : LN2)), add(ctx, m, t));
  return ti_cast(ctx, r, dt);
}

/* On the bit patterns: one step away from zero is +1 on the magnitude bits, toward zero -1. */
static frit_tensor *nextafter_(frit_ctx *ctx, frit_tensor *x, frit_tensor *y) {
  frit_dtype dt = TI_U(x)->dtype;
  frit_tensor *ix = bits_of(ctx, x), *iy = bits_of(ctx, y);
  if (!ix || !iy) return NULL;
  frit_tensor *zero = cf(ctx, x, 0.0), *one = ci(ctx, ix, 1);
  frit_tensor *away = eq(ctx, lt(ctx, x, y), lt(ctx, zero, x));
  frit_tensor *r = bitcast(ctx, where(ctx, away, add(ctx, ix, one), sub(ctx, ix, one)), dt);
  /* from zero: the smallest subnormal with y's sign */
  frit_tensor *tiny = bitcast(ctx, ti_alu2(ctx, FRIT_OP_OR, and_(ctx, iy, sign_mask(ctx, iy)), one), dt);
  r = where(ctx, eq(ctx, x, zero), tiny, r);
  r = where(ctx, eq(ctx, x, y), y, r);
  return where(ctx, or_(ctx, isnan_(ctx, x), isnan_(ctx, y)), add(ctx, x, y), r);
}

/* C fmod (sign of the dividend); integers: truncated remainder, x % 0 = 0 as numpy. */
static frit_tensor *fmod_(frit_ctx *ctx, frit_tensor *a, frit_tensor *b) {
  frit_dtype dt = TI_U(a)->dtype;
  if (frit_dtype_is_float(dt)) {
    frit_dtype ct = frit_dtype_bits(dt) == 16 ? FRIT_F32 : dt; /* exact in any wider float */
    frit_tensor *x = ti_cast(ctx, a, ct), *y = ti_cast(ctx, b, ct);
    if (!x || !y) return NULL;
    return ti_cast(ctx, ti_alu2(ctx, FRIT_OP_MOD, x, y), dt);
  }
  frit_tensor *zero = ci(ctx, a, 0), *one = ci(ctx, a, 1);
  /* divisor 0 -> 0; -1 -> 0 too (INT_MIN % -1 is undefined in C) */
  frit_tensor *bad = eq(ctx, b, zero);
  if (!frit_dtype_is_unsigned(dt)) bad = or_(ctx, bad, eq(ctx, b, ci(ctx, a, -1)));
  frit_tensor *r = ti_alu2(ctx, FRIT_OP_MOD, a, where(ctx, bad, one, b));
  return where(ctx, bad, zero, r);
}

/* numpy: fmax(a, b) = a >= b || isnan(b) ? a : b (so NaNs are ignored and ties keep a). */
static frit_tensor *fmaxmin_(frit_ctx *ctx, frit_tensor *a, frit_tensor *b, bool is_max) {
  if (frit_dtype_is_bool(TI_U(a)->dtype))
    return ti_alu2(ctx, is_max ? FRIT_OP_OR : FRIT_OP_AND, a, b);
  frit_tensor *keep = is_max ? le(ctx, b, a) : le(ctx, a, b);
  if (frit_dtype_is_float(TI_U(a)->dtype)) keep = or_(ctx, keep, isnan_(ctx, b));
  return where(ctx, keep, a, b);
}

frit_tensor *ti_binary_extra(frit_ctx *ctx, frit_bfunc f, frit_tensor *a, frit_tensor *b) {
  const char *name = frit_bfunc_name(f);
  frit_dtype da = TI_U(a)->dtype, db = TI_U(b)->dtype, pt = frit_promote(da, db);
  bool float_only = f != FRIT_BF_FMOD && f != FRIT_BF_FMAX && f != FRIT_BF_FMIN;
  frit_dtype lt_ = float_only ? frit_promote(float_of(da), float_of(db))
                              : f == FRIT_BF_FMOD && frit_dtype_is_bool(pt) ? FRIT_I8 : pt;
  if (!ti_broadcast2(ctx, name, &a, &b)) return NULL;
  a = ti_cast(ctx, a, lt_), b = ti_cast(ctx, b, lt_);
  if (!a || !b) return NULL;
  if (f == FRIT_BF_COPYSIGN) return frit_dtype_is_float(lt_) ? tg_copysign(ctx, copysign_(ctx, a, b), a, b) : NULL;
  if (f == FRIT_BF_HYPOT) return hypot_(ctx, a, b);
  if (f == FRIT_BF_LOGADDEXP || f == FRIT_BF_LOGADDEXP2) return logaddexp_(ctx, a, b, f == FRIT_BF_LOGADDEXP2);
  if (f == FRIT_BF_NEXTAFTER) return frit_dtype_is_float(lt_) ? tg_first(ctx, nextafter_(ctx, a, b), a, b) : NULL;
  if (f == FRIT_BF_FMOD) return fmod_(ctx, a, b);
  if (f == FRIT_BF_FMAX || f == FRIT_BF_FMIN) return fmaxmin_(ctx, a, b, f == FRIT_BF_FMAX);
  frit_tensor *ab[2] = {a, b};
  return ti_fail(ctx, name, ab, 2, "internal: not an extra bfunc");
}
