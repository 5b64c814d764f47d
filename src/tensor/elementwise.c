/* Elementwise tensor ops with numpy's dtype rules (ufunc loop selection) and numpy's results:
 * unary/binary ufuncs, where, clip and astype, lowered onto ALU/CAST/WHERE nodes. */
#include "tensor/tensor_internal.h"
#include "tensor/elementwise_extra.h"

#include <math.h>

static const char *const ufunc_names[FRIT_UF_COUNT_] = {
    "neg", "abs", "sign", "sqrt", "rsqrt", "reciprocal", "exp", "exp2", "log", "log2", "log1p",
    "expm1", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid",
    "relu", "gelu", "erf", "floor", "ceil", "round", "trunc", "isnan", "isinf", "logical_not",
    "bitwise_not", "acosh", "asinh", "atanh", "cbrt", "rint", "deg2rad", "rad2deg", "signbit",
};
static const char *const bfunc_names[FRIT_BF_COUNT_] = {
    "add", "sub", "mul", "truediv", "floordiv", "remainder", "pow", "minimum", "maximum", "atan2",
    "lt", "le", "gt", "ge", "eq", "ne", "logical_and", "logical_or", "logical_xor", "bitwise_and",
    "bitwise_or", "bitwise_xor", "lshift", "rshift", "copysign", "hypot", "logaddexp", "logaddexp2",
    "nextafter", "fmod", "fmax", "fmin",
};

const char *frit_ufunc_name(frit_ufunc f) { return (unsigned)f < FRIT_UF_COUNT_ ? ufunc_names[f] : "?"; }
const char *frit_bfunc_name(frit_bfunc f) { return (unsigned)f < FRIT_BF_COUNT_ ? bfunc_names[f] : "?"; }

/* The float loop numpy picks for a float-only ufunc: the smallest float that holds the input
 * safely (bool/8-bit ints -> f16, 16-bit -> f32, wider -> f64). bf16 stays bf16. */
static frit_dtype float_of(frit_dtype dt) {
  if (frit_dtype_is_float(dt)) return dt;
  int bits = frit_dtype_is_bool(dt) ? 8 : frit_dtype_bits(dt);
  return bits <= 8 ? FRIT_F16 : bits <= 16 ? FRIT_F32 : FRIT_F64;
}

/* Composite float formulas of 16-bit floats run in f32 and are rounded once at the end. */
static frit_dtype compute_of(frit_dtype dt) { return frit_dtype_bits(dt) == 16 ? FRIT_F32 : dt; }


/* Sign bit of a float, through its bit pattern (sees -0.0 and signed NaNs). */
static frit_tensor *signbit_of(frit_ctx *ctx, frit_tensor *x) {
  int bits = frit_dtype_bits(TI_U(x)->dtype);
  frit_dtype it = bits == 64 ? FRIT_I64 : bits == 32 ? FRIT_I32 : FRIT_I16;
  frit_uop *u = TI_U(x);
  frit_tensor *b = TI_T(frit_uop_new(ctx, FRIT_OP_BITCAST, it, &u, 1, NULL));
  if (!b || !frit_shape_of(ctx, TI_U(b))) return NULL;
  return lt(ctx, b, ti_const_i(ctx, it, 0, b));
}
/* copysign(0, y) */
static frit_tensor *signed_zero(frit_ctx *ctx, frit_tensor *y) {
  return where(ctx, signbit_of(ctx, y), cf(ctx, y, -0.0), cf(ctx, y, 0.0));
}

/* ---------- unary ---------- */

/* log1p(x) = x * log(u) / (u - 1) with u = 1 + x: the rounding error of u cancels. */
static frit_tensor *log1p_(frit_ctx *ctx, frit_tensor *x) {
  frit_tensor *u = add(ctx, x, cf(ctx, x, 1.0));
  frit_tensor *r = mul(ctx, ti_alu1(ctx, FRIT_OP_LOG, u), fdiv(ctx, x, sub(ctx, u, cf(ctx, x, 1.0))));
  r = where(ctx, eq(ctx, u, cf(ctx, x, INFINITY)), u, r);
  return where(ctx, eq(ctx, u, cf(ctx, x, 1.0)), x, r);
}

/* expm1(x) = (u - 1) * x / log(u) with u = exp(x) (Kahan). */
static frit_tensor *expm1_(frit_ctx *ctx, frit_tensor *x) {
  frit_tensor *u = ti_alu1(ctx, FRIT_OP_EXP, x);
  frit_tensor *um1 = sub(ctx, u, cf(ctx, x, 1.0));
  frit_tensor *r = fdiv(ctx, mul(ctx, um1, x), ti_alu1(ctx, FRIT_OP_LOG, u));
  r = where(ctx, eq(ctx, u, cf(ctx, x, INFINITY)), u, r);
  r = where(ctx, eq(ctx, um1, cf(ctx, x, -1.0)), um1, r);
  return where(ctx, eq(ctx, u, cf(ctx, x, 1.0)), x, r);
}

static frit_tensor *float_composite(frit_ctx *ctx, frit_ufunc f, frit_tensor *x) {
  frit_dtype out = float_of(TI_U(x)->dtype), ct = compute_of(out);
  frit_tensor *y = ti_cast(ctx, x, ct), *r = NULL;
  if (!y) return NULL;
  if (f == FRIT_UF_LOG1P) {
    r = log1p_(ctx, y);
  } else if (f == FRIT_UF_EXPM1) {
    r = expm1_(ctx, y);
  } else if (f == FRIT_UF_SIGMOID) {
    r = ti_alu1(ctx, FRIT_OP_RECIP, add(ctx, cf(ctx, y, 1.0), ti_alu1(ctx, FRIT_OP_EXP, ti_alu1(ctx, FRIT_OP_NEG, y))));
  } else { /* gelu, the exact erf form */
    FRIT_ASSERT(f == FRIT_UF_GELU);
    frit_tensor *e = ti_alu1(ctx, FRIT_OP_ERF, mul(ctx, y, cf(ctx, y, 0.70710678118654752440)));
    r = mul(ctx, mul(ctx, cf(ctx, y, 0.5), y), add(ctx, cf(ctx, y, 1.0), e));
  }
  return ti_cast(ctx, r, out);
}

frit_tensor *frit_unary_t(frit_ctx *ctx, frit_ufunc f, frit_tensor *x) {
  const char *name = frit_ufunc_name(f);
  if (!ti_ok(ctx, name, &x, 1)) return NULL;
  if ((unsigned)f >= FRIT_UF_COUNT_) return TI_FAIL1(ctx, "unary", x, "unknown ufunc %d", (int)f);
  frit_dtype dt = TI_U(x)->dtype;
  if (frit_dtype_is_complex(dt)) return ti_unary_complex(ctx, f, x);
  bool isb = frit_dtype_is_bool(dt), isf = frit_dtype_is_float(dt), isu = frit_dtype_is_unsigned(dt);
  static const frit_op direct[FRIT_UF_COUNT_] = {
      [FRIT_UF_SQRT] = FRIT_OP_SQRT, [FRIT_UF_RSQRT] = FRIT_OP_RSQRT, [FRIT_UF_EXP] = FRIT_OP_EXP,
      [FRIT_UF_EXP2] = FRIT_OP_EXP2, [FRIT_UF_LOG] = FRIT_OP_LOG,     [FRIT_UF_LOG2] = FRIT_OP_LOG2,
      [FRIT_UF_SIN] = FRIT_OP_SIN,   [FRIT_UF_COS] = FRIT_OP_COS,     [FRIT_UF_TAN] = FRIT_OP_TAN,
      [FRIT_UF_ASIN] = FRIT_OP_ASIN, [FRIT_UF_ACOS] = FRIT_OP_ACOS,   [FRIT_UF_ATAN] = FRIT_OP_ATAN,
      [FRIT_UF_SINH] = FRIT_OP_SINH, [FRIT_UF_COSH] = FRIT_OP_COSH,   [FRIT_UF_TANH] = FRIT_OP_TANH,
      [FRIT_UF_ERF] = FRIT_OP_ERF,
  };
  switch (f) {
  case FRIT_UF_NEG:
    if (isb) return TI_FAIL1(ctx, name, x, "the numpy boolean negative is not supported, use logical_not");
    return ti_alu1(ctx, FRIT_OP_NEG, x);
  case FRIT_UF_ABS:
    return isb || isu ? x : ti_alu1(ctx, FRIT_OP_ABS, x);
  case FRIT_UF_SIGN:
    if (isb) return TI_FAIL1(ctx, name, x, "not supported for bool");
    if (isu) return ti_cast(ctx, lt(ctx, ci(ctx, x, 0), x), dt);
    if (!isf) return sub(ctx, ti_cast(ctx, lt(ctx, ci(ctx, x, 0), x), dt), ti_cast(ctx, lt(ctx, x, ci(ctx, x, 0)), dt));
    /* numpy: 1, -1, 0 for either zero, NaN stays NaN */
    return where(ctx, lt(ctx, cf(ctx, x, 0), x), cf(ctx, x, 1),
                 where(ctx, lt(ctx, x, cf(ctx, x, 0)), cf(ctx, x, -1),
                       where(ctx, eq(ctx, x, cf(ctx, x, 0)), cf(ctx, x, 0), x)));
  case FRIT_UF_SQRT: case FRIT_UF_RSQRT: case FRIT_UF_EXP: case FRIT_UF_EXP2: case FRIT_UF_LOG:
  case FRIT_UF_LOG2: case FRIT_UF_SIN: case FRIT_UF_COS: case FRIT_UF_TAN: case FRIT_UF_ASIN:
  case FRIT_UF_ACOS: case FRIT_UF_ATAN: case FRIT_UF_SINH: case FRIT_UF_COSH: case FRIT_UF_TANH:
  case FRIT_UF_ERF:
    return ti_alu1(ctx, direct[f], ti_cast(ctx, x, float_of(dt)));
  case FRIT_UF_RECIPROCAL:
    if (isf) return ti_alu1(ctx, FRIT_OP_RECIP, x);
    /* numpy keeps integers: 1/x truncated (1, -1 or 0); 1/0 gives 0 here */
    if (isb) x = ti_cast(ctx, x, FRIT_I8);
    return ti_alu2(ctx, FRIT_OP_IDIV, ci(ctx, x, 1), x);
  case FRIT_UF_LOG1P: case FRIT_UF_EXPM1: case FRIT_UF_SIGMOID: case FRIT_UF_GELU:
    return float_composite(ctx, f, x);
  case FRIT_UF_RELU:
    return isb || isu ? x : ti_alu2(ctx, FRIT_OP_MAX, x, ci(ctx, x, 0));
  case FRIT_UF_FLOOR: case FRIT_UF_CEIL: case FRIT_UF_TRUNC:
    if (!isf) return x; /* numpy 2 keeps integer and bool dtypes */
    return ti_alu1(ctx, f == FRIT_UF_FLOOR ? FRIT_OP_FLOOR : f == FRIT_UF_CEIL ? FRIT_OP_CEIL : FRIT_OP_TRUNC, x);
  case FRIT_UF_ROUND: /* half to even; numpy rounds bool in f16 and keeps integers */
    if (isb) return ti_cast(ctx, x, FRIT_F16);
    return isf ? ti_alu1(ctx, FRIT_OP_RINT, x) : x;
  case FRIT_UF_ISNAN:
    return isf ? ne(ctx, x, x) : ti_const_i(ctx, FRIT_BOOL, 0, x);
  case FRIT_UF_ISINF:
    return isf ? eq(ctx, ti_alu1(ctx, FRIT_OP_ABS, x), cf(ctx, x, INFINITY)) : ti_const_i(ctx, FRIT_BOOL, 0, x);
  case FRIT_UF_LOGICAL_NOT:
    return isb ? ti_alu1(ctx, FRIT_OP_NOT, x) : eq(ctx, x, ci(ctx, x, 0));
  case FRIT_UF_BITWISE_NOT:
    if (isf) return TI_FAIL1(ctx, name, x, "not supported for floating-point dtypes");
    return ti_alu1(ctx, FRIT_OP_NOT, x);
  case FRIT_UF_ACOSH: case FRIT_UF_ASINH: case FRIT_UF_ATANH: case FRIT_UF_CBRT: case FRIT_UF_RINT:
  case FRIT_UF_DEG2RAD: case FRIT_UF_RAD2DEG: case FRIT_UF_SIGNBIT:
    return ti_unary_extra(ctx, f, x);
  case FRIT_UF_COUNT_:
    break;
  }
  return TI_FAIL1(ctx, "unary", x, "unknown ufunc %d", (int)f);
}

/* ---------- binary helpers ---------- */

/* numpy floor division and remainder of integers: rounded toward -inf, x//0 = x%0 = 0. */
static frit_tensor *int_divmod(frit_ctx *ctx, frit_tensor *a, frit_tensor *b, bool want_mod) {
  frit_tensor *zero = ci(ctx, a, 0);
  frit_tensor *q = ti_alu2(ctx, FRIT_OP_IDIV, a, b), *r = ti_alu2(ctx, FRIT_OP_MOD, a, b);
  if (!frit_dtype_is_unsigned(TI_U(a)->dtype)) {
    frit_tensor *fix = and_(ctx, ne(ctx, r, zero), ne(ctx, lt(ctx, r, zero), lt(ctx, b, zero)));
    q = where(ctx, fix, sub(ctx, q, ci(ctx, a, 1)), q);
    r = where(ctx, fix, add(ctx, r, b), r);
  }
  return where(ctx, eq(ctx, b, zero), zero, want_mod ? r : q);
}

/* numpy's npy_divmod for floats (in f32 for 16-bit floats). */
static frit_tensor *float_divmod(frit_ctx *ctx, frit_tensor *a0, frit_tensor *b0, bool want_mod) {
  frit_dtype dt = TI_U(a0)->dtype, ct = compute_of(dt);
  frit_tensor *a = ti_cast(ctx, a0, ct), *b = ti_cast(ctx, b0, ct);
  if (!a || !b) return NULL;
  frit_tensor *zero = cf(ctx, a, 0.0);
  frit_tensor *mod = ti_alu2(ctx, FRIT_OP_MOD, a, b);
  frit_tensor *div = fdiv(ctx, sub(ctx, a, mod), b);
  frit_tensor *nz = ne(ctx, mod, zero);
  frit_tensor *fix = and_(ctx, nz, ne(ctx, lt(ctx, b, zero), lt(ctx, mod, zero)));
  frit_tensor *r;
  if (want_mod) {
    r = where(ctx, fix, add(ctx, mod, b), where(ctx, nz, mod, signed_zero(ctx, b)));
  } else {
    div = where(ctx, fix, sub(ctx, div, cf(ctx, a, 1.0)), div);
    frit_tensor *fl = ti_alu1(ctx, FRIT_OP_FLOOR, div);
    fl = where(ctx, lt(ctx, cf(ctx, a, 0.5), sub(ctx, div, fl)), add(ctx, fl, cf(ctx, a, 1.0)), fl);
    frit_tensor *q = fdiv(ctx, a, b);
    r = where(ctx, ne(ctx, div, zero), fl, signed_zero(ctx, q));
    r = where(ctx, eq(ctx, b, zero), q, r);
  }
  return ti_cast(ctx, r, dt);
}

/* Integer power by squaring over every exponent bit (exact, wrapping like numpy). Negative
 * exponents, an error in numpy, give 1/base truncated: 1 for base 1, +-1 for base -1, else 0. */
static frit_tensor *int_pow(frit_ctx *ctx, frit_tensor *a, frit_tensor *e) {
  frit_dtype dt = TI_U(a)->dtype;
  bool sgn = !frit_dtype_is_unsigned(dt);
  int bits = frit_dtype_bits(dt) - (sgn ? 1 : 0);
  frit_tensor *one = ci(ctx, a, 1), *zero = ci(ctx, a, 0), *res = one, *base = a;
  for (int k = 0; k < bits && res; k++) {
    frit_tensor *bit = ne(ctx, and_(ctx, ti_alu2(ctx, FRIT_OP_SHR, e, ci(ctx, a, k)), one), zero);
    res = where(ctx, bit, mul(ctx, res, base), res);
    if (k + 1 < bits) base = mul(ctx, base, base);
  }
  if (!sgn) return res;
  frit_tensor *odd = ne(ctx, and_(ctx, e, one), zero);
  frit_tensor *m1 = ci(ctx, a, -1);
  frit_tensor *negexp = where(ctx, eq(ctx, a, one), one, where(ctx, eq(ctx, a, m1), where(ctx, odd, m1, one), zero));
  return where(ctx, lt(ctx, e, zero), negexp, res);
}

/* The value of b when it is a constant broadcast (CONST under RESHAPE/EXPAND, maybe CAST). */
static bool const_value(frit_tensor *b, double *v) {
  frit_uop *u = TI_U(b);
  frit_dtype dt = u->dtype;
  while (u->op == FRIT_OP_RESHAPE || u->op == FRIT_OP_EXPAND || u->op == FRIT_OP_CAST) u = u->src[0];
  if (u->op != FRIT_OP_CONST || frit_dtype_lanes(u->dtype) != 1) return false;
  frit_scalar s = frit_eval_cast(u->arg.value, u->dtype, dt);
  *v = s.f;
  return true;
}

/* Float power. Constant exponents with an exact or cheaper formula skip POW, like numpy's fast
 * paths for x**2, x**0.5, x**-1, x**0, x**1, plus 1.5 and -0.5 (numpy calls pow for those): the
 * results equal pow's for every special value (-0, +-inf, NaN, negatives), and the loops
 * vectorise (a libm pow does not). See docs/semantics.md for the rounding. */
static frit_tensor *float_pow(frit_ctx *ctx, frit_tensor *a, frit_tensor *b) {
  double e;
  if (!const_value(b, &e)) return ti_alu2(ctx, FRIT_OP_POW, a, b);
  frit_dtype dt = TI_U(a)->dtype;
  if (e == 0) return cf(ctx, a, 1.0); /* pow(NaN, 0) = 1 */
  if (e == 1) return a;
  if (e == 2) return mul(ctx, a, a);
  if (e == -1) return fdiv(ctx, cf(ctx, a, 1.0), a);
  if (e != 0.5 && e != -0.5 && e != 1.5) return ti_alu2(ctx, FRIT_OP_POW, a, b);
  /* 16-bit floats: computed in f32, rounded once */
  frit_tensor *x = ti_cast(ctx, a, compute_of(dt));
  if (!x) return NULL;
  frit_tensor *s = ti_alu1(ctx, FRIT_OP_SQRT, x), *r, *at_minf;
  if (e == 0.5) { /* pow(-0, .5) = +0 where sqrt(-0) = -0; pow(-inf, .5) = inf */
    r = ti_alu1(ctx, FRIT_OP_ABS, s);
    at_minf = cf(ctx, x, INFINITY);
  } else if (e == -0.5) { /* pow(-0, -.5) = +inf; pow(-inf, -.5) = +0 */
    r = ti_alu1(ctx, FRIT_OP_ABS, fdiv(ctx, cf(ctx, x, 1.0), s));
    at_minf = cf(ctx, x, 0.0);
  } else { /* x*sqrt(x): pow(-0, 1.5) = +0 = -0 * -0; pow(-inf, 1.5) = inf */
    r = mul(ctx, x, s);
    at_minf = cf(ctx, x, INFINITY);
  }
  r = where(ctx, eq(ctx, x, cf(ctx, x, -INFINITY)), at_minf, r);
  return ti_cast(ctx, r, dt);
}

/* numpy shifts: counts outside [0, bits) shift everything out (0, or -1 for negative >>). */
static frit_tensor *shift(frit_ctx *ctx, frit_tensor *a, frit_tensor *b, bool left) {
  frit_dtype dt = TI_U(a)->dtype;
  frit_tensor *zero = ci(ctx, a, 0);
  frit_tensor *in = lt(ctx, b, ci(ctx, a, frit_dtype_bits(dt)));
  if (!frit_dtype_is_unsigned(dt)) in = and_(ctx, in, ti_alu1(ctx, FRIT_OP_NOT, lt(ctx, b, zero)));
  frit_tensor *s = ti_alu2(ctx, left ? FRIT_OP_SHL : FRIT_OP_SHR, a, b);
  frit_tensor *out = zero;
  if (!left && !frit_dtype_is_unsigned(dt)) out = where(ctx, lt(ctx, a, zero), ci(ctx, a, -1), zero);
  return where(ctx, in, s, out);
}

frit_tensor *frit_binary_t(frit_ctx *ctx, frit_bfunc f, frit_tensor *a, frit_tensor *b) {
  const char *name = frit_bfunc_name(f);
  frit_tensor *ab[2] = {a, b};
  if (!ti_ok(ctx, name, ab, 2)) return NULL;
  if ((unsigned)f >= FRIT_BF_COUNT_) return ti_fail(ctx, "binary", ab, 2, "unknown bfunc %d", (int)f);
  frit_dtype pt = frit_promote(TI_U(a)->dtype, TI_U(b)->dtype);
  if (frit_dtype_is_complex(pt)) {
    if (!ti_broadcast2(ctx, name, &a, &b)) return NULL;
    a = ti_cast(ctx, a, pt), b = ti_cast(ctx, b, pt);
    return a && b ? ti_binary_complex(ctx, f, a, b) : NULL;
  }
  bool isb = frit_dtype_is_bool(pt), isf = frit_dtype_is_float(pt);
  /* dtype of the loop numpy runs */
  frit_dtype lt_ = pt;
  switch (f) {
  case FRIT_BF_TRUEDIV: lt_ = isf ? pt : FRIT_F64; break;
  case FRIT_BF_ATAN2: lt_ = frit_promote(float_of(TI_U(a)->dtype), float_of(TI_U(b)->dtype)); break;
  case FRIT_BF_FLOORDIV: case FRIT_BF_REMAINDER: case FRIT_BF_POW: case FRIT_BF_LSHIFT: case FRIT_BF_RSHIFT:
    lt_ = isb ? FRIT_I8 : pt;
    break;
  case FRIT_BF_LOGICAL_AND: case FRIT_BF_LOGICAL_OR: case FRIT_BF_LOGICAL_XOR: lt_ = FRIT_BOOL; break;
  case FRIT_BF_SUB:
    if (isb) return ti_fail(ctx, name, ab, 2, "numpy boolean subtract is not supported, use bitwise_xor or logical_xor");
    break;
  case FRIT_BF_BITWISE_AND: case FRIT_BF_BITWISE_OR: case FRIT_BF_BITWISE_XOR:
    if (isf) return ti_fail(ctx, name, ab, 2, "not supported for floating-point dtypes");
    break;
  case FRIT_BF_ADD: case FRIT_BF_MUL: case FRIT_BF_MINIMUM: case FRIT_BF_MAXIMUM: case FRIT_BF_LT: case FRIT_BF_LE:
  case FRIT_BF_GT: case FRIT_BF_GE: case FRIT_BF_EQ: case FRIT_BF_NE: case FRIT_BF_COUNT_:
    break;
  case FRIT_BF_COPYSIGN: case FRIT_BF_HYPOT: case FRIT_BF_LOGADDEXP: case FRIT_BF_LOGADDEXP2:
  case FRIT_BF_NEXTAFTER: case FRIT_BF_FMOD: case FRIT_BF_FMAX: case FRIT_BF_FMIN:
    return ti_binary_extra(ctx, f, a, b);
  }
  if ((f == FRIT_BF_LSHIFT || f == FRIT_BF_RSHIFT) && isf)
    return ti_fail(ctx, name, ab, 2, "not supported for floating-point dtypes");
  if (!ti_broadcast2(ctx, name, &a, &b)) return NULL;
  a = ti_cast(ctx, a, lt_), b = ti_cast(ctx, b, lt_);
  if (!a || !b) return NULL;
  bool lf = frit_dtype_is_float(lt_), lb = frit_dtype_is_bool(lt_);
  switch (f) {
  case FRIT_BF_ADD: return ti_alu2(ctx, lb ? FRIT_OP_OR : FRIT_OP_ADD, a, b);
  case FRIT_BF_SUB: return sub(ctx, a, b);
  case FRIT_BF_MUL: return ti_alu2(ctx, lb ? FRIT_OP_AND : FRIT_OP_MUL, a, b);
  case FRIT_BF_TRUEDIV: return fdiv(ctx, a, b);
  case FRIT_BF_FLOORDIV: return lf ? float_divmod(ctx, a, b, false) : int_divmod(ctx, a, b, false);
  case FRIT_BF_REMAINDER: return lf ? float_divmod(ctx, a, b, true) : int_divmod(ctx, a, b, true);
  case FRIT_BF_POW: return lf ? float_pow(ctx, a, b) : int_pow(ctx, a, b);
  case FRIT_BF_MINIMUM: return ti_alu2(ctx, FRIT_OP_MIN, a, b);
  case FRIT_BF_MAXIMUM: return ti_alu2(ctx, FRIT_OP_MAX, a, b);
  case FRIT_BF_ATAN2: return ti_alu2(ctx, FRIT_OP_ATAN2, a, b);
  case FRIT_BF_LT: return lt(ctx, a, b);
  case FRIT_BF_LE: return ti_alu2(ctx, FRIT_OP_CMPLE, a, b);
  case FRIT_BF_GT: return lt(ctx, b, a);
  case FRIT_BF_GE: return ti_alu2(ctx, FRIT_OP_CMPLE, b, a);
  case FRIT_BF_EQ: return eq(ctx, a, b);
  case FRIT_BF_NE: return ne(ctx, a, b);
  case FRIT_BF_LOGICAL_AND: case FRIT_BF_BITWISE_AND: return and_(ctx, a, b);
  case FRIT_BF_LOGICAL_OR: case FRIT_BF_BITWISE_OR: return ti_alu2(ctx, FRIT_OP_OR, a, b);
  case FRIT_BF_LOGICAL_XOR: case FRIT_BF_BITWISE_XOR: return ti_alu2(ctx, FRIT_OP_XOR, a, b);
  case FRIT_BF_LSHIFT: return shift(ctx, a, b, true);
  case FRIT_BF_RSHIFT: return shift(ctx, a, b, false);
  case FRIT_BF_COPYSIGN: case FRIT_BF_HYPOT: case FRIT_BF_LOGADDEXP: case FRIT_BF_LOGADDEXP2:
  case FRIT_BF_NEXTAFTER: case FRIT_BF_FMOD: case FRIT_BF_FMAX: case FRIT_BF_FMIN: /* returned above */
  case FRIT_BF_COUNT_: break;
  }
  return ti_fail(ctx, "binary", ab, 2, "unknown bfunc %d", (int)f);
}

/* ---------- where, clip, astype ---------- */

frit_tensor *frit_where(frit_ctx *ctx, frit_tensor *cond, frit_tensor *a, frit_tensor *b) {
  frit_tensor *ts[3] = {cond, a, b};
  if (!ti_ok(ctx, "where", ts, 3)) return NULL;
  frit_uop *dims[FRIT_MAX_DIMS];
  int nd;
  if (!ti_broadcast_shapes(ctx, "where", ts, 3, &nd, dims)) return NULL;
  frit_dtype dt = frit_promote(TI_U(a)->dtype, TI_U(b)->dtype);
  cond = ti_broadcast(ctx, "where", ti_cast(ctx, cond, FRIT_BOOL), nd, dims);
  a = ti_broadcast(ctx, "where", ti_cast(ctx, a, dt), nd, dims);
  b = ti_broadcast(ctx, "where", ti_cast(ctx, b, dt), nd, dims);
  if (!cond || !a || !b) return NULL;
  return where(ctx, cond, a, b);
}

frit_tensor *frit_clip(frit_ctx *ctx, frit_tensor *x, frit_tensor *lo, frit_tensor *hi) {
  if (!ti_ok(ctx, "clip", &x, 1)) return NULL;
  if (lo) x = frit_binary_t(ctx, FRIT_BF_MAXIMUM, x, lo);
  if (hi) x = frit_binary_t(ctx, FRIT_BF_MINIMUM, x, hi);
  return x;
}

frit_tensor *frit_astype(frit_ctx *ctx, frit_tensor *x, frit_dtype dt) {
  if (!ti_ok(ctx, "astype", &x, 1)) return NULL;
  char b[32];
  if (frit_dtype_is_ptr(dt) || frit_dtype_lanes(dt) != 1 || frit_dtype_kind(dt) == FRIT_VOID ||
      frit_dtype_kind(dt) >= FRIT_SCALAR_KIND_COUNT_)
    return TI_FAIL1(ctx, "astype", x, "cannot convert to %s", ti_dtname(dt, b));
  return ti_cast(ctx, x, dt);
}
