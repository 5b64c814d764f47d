/* Complex tensors: numpy's rules for the ufuncs and reductions on complex64/complex128 (those
 * with a complex loop in numpy; the rest fail naming op, shapes and dtypes), and the part
 * functions real, imag, conj, angle and complex(re, im). docs/complex.md */
#include "tensor/composite.h"
#include "tensor/elementwise_extra.h"

#include <math.h>

frit_dtype ti_complex_of(frit_dtype real) {
  return frit_dtype_kind(real) == FRIT_F64 || frit_dtype_kind(real) == FRIT_C128 ? FRIT_C128 : FRIT_C64;
}

static frit_tensor *part(frit_ctx *ctx, frit_op op, frit_tensor *x) { return ti_alu1(ctx, op, x); }

/* |x| as the parts' real dtype (numpy: abs of complex is real) */
static frit_tensor *cabs_(frit_ctx *ctx, frit_tensor *x) { return part(ctx, FRIT_OP_REAL, ti_alu1(ctx, FRIT_OP_ABS, x)); }

frit_tensor *ti_unary_complex(frit_ctx *ctx, frit_ufunc f, frit_tensor *x) {
  const char *name = frit_ufunc_name(f);
  frit_dtype dt = TI_U(x)->dtype;
  switch (f) {
  case FRIT_UF_NEG: return ti_alu1(ctx, FRIT_OP_NEG, x);
  case FRIT_UF_ABS: return cabs_(ctx, x);
  case FRIT_UF_SQRT: return ti_alu1(ctx, FRIT_OP_SQRT, x);
  case FRIT_UF_RSQRT: return ti_alu1(ctx, FRIT_OP_RSQRT, x);
  case FRIT_UF_RECIPROCAL: return ti_alu1(ctx, FRIT_OP_RECIP, x);
  case FRIT_UF_EXP: return ti_alu1(ctx, FRIT_OP_EXP, x);
  case FRIT_UF_EXP2: return ti_alu1(ctx, FRIT_OP_EXP2, x);
  case FRIT_UF_LOG: return ti_alu1(ctx, FRIT_OP_LOG, x);
  case FRIT_UF_LOG2: return ti_alu1(ctx, FRIT_OP_LOG2, x);
  case FRIT_UF_SIN: return ti_alu1(ctx, FRIT_OP_SIN, x);
  case FRIT_UF_COS: return ti_alu1(ctx, FRIT_OP_COS, x);
  case FRIT_UF_TAN: return ti_alu1(ctx, FRIT_OP_TAN, x);
  case FRIT_UF_ASIN: return ti_alu1(ctx, FRIT_OP_ASIN, x);
  case FRIT_UF_ACOS: return ti_alu1(ctx, FRIT_OP_ACOS, x);
  case FRIT_UF_ATAN: return ti_alu1(ctx, FRIT_OP_ATAN, x);
  case FRIT_UF_SINH: return ti_alu1(ctx, FRIT_OP_SINH, x);
  case FRIT_UF_COSH: return ti_alu1(ctx, FRIT_OP_COSH, x);
  case FRIT_UF_TANH: return ti_alu1(ctx, FRIT_OP_TANH, x);
  case FRIT_UF_SIGN: { /* numpy 2: x / |x|, 0 at 0 */
    frit_tensor *zero = ti_const_f(ctx, dt, 0.0, x);
    frit_tensor *q = ti_alu2(ctx, FRIT_OP_FDIV, x, ti_alu1(ctx, FRIT_OP_ABS, x));
    return ti_where(ctx, ti_alu2(ctx, FRIT_OP_CMPEQ, x, zero), zero, q);
  }
  case FRIT_UF_ISNAN: case FRIT_UF_ISINF: { /* either part */
    frit_ufunc g = f;
    frit_tensor *re = frit_unary_t(ctx, g, part(ctx, FRIT_OP_REAL, x));
    frit_tensor *im = frit_unary_t(ctx, g, part(ctx, FRIT_OP_IMAG, x));
    return re && im ? ti_alu2(ctx, FRIT_OP_OR, re, im) : NULL;
  }
  case FRIT_UF_LOGICAL_NOT: return ti_alu2(ctx, FRIT_OP_CMPEQ, x, ti_const_f(ctx, dt, 0.0, x));
  case FRIT_UF_LOG1P: case FRIT_UF_EXPM1: case FRIT_UF_SIGMOID: case FRIT_UF_RELU: case FRIT_UF_GELU:
  case FRIT_UF_ERF: case FRIT_UF_FLOOR: case FRIT_UF_CEIL: case FRIT_UF_ROUND: case FRIT_UF_TRUNC:
  case FRIT_UF_BITWISE_NOT: case FRIT_UF_ACOSH: case FRIT_UF_ASINH: case FRIT_UF_ATANH: case FRIT_UF_CBRT:
  case FRIT_UF_RINT: case FRIT_UF_DEG2RAD: case FRIT_UF_RAD2DEG: case FRIT_UF_SIGNBIT: case FRIT_UF_COUNT_:
    break;
  }
  return TI_FAIL1(ctx, name, x, "not supported for complex dtypes");
}

/* a, b already broadcast and cast to the complex loop dtype */
frit_tensor *ti_binary_complex(frit_ctx *ctx, frit_bfunc f, frit_tensor *a, frit_tensor *b) {
  switch (f) {
  case FRIT_BF_ADD: return ti_alu2(ctx, FRIT_OP_ADD, a, b);
  case FRIT_BF_SUB: return ti_alu2(ctx, FRIT_OP_SUB, a, b);
  case FRIT_BF_MUL: return ti_alu2(ctx, FRIT_OP_MUL, a, b);
  case FRIT_BF_TRUEDIV: return ti_alu2(ctx, FRIT_OP_FDIV, a, b);
  case FRIT_BF_POW: return ti_alu2(ctx, FRIT_OP_POW, a, b);
  case FRIT_BF_EQ: return ti_alu2(ctx, FRIT_OP_CMPEQ, a, b);
  case FRIT_BF_NE: return ti_alu2(ctx, FRIT_OP_CMPNE, a, b);
  case FRIT_BF_LOGICAL_AND: case FRIT_BF_LOGICAL_OR: case FRIT_BF_LOGICAL_XOR: {
    frit_op op = f == FRIT_BF_LOGICAL_AND ? FRIT_OP_AND : f == FRIT_BF_LOGICAL_OR ? FRIT_OP_OR : FRIT_OP_XOR;
    return ti_alu2(ctx, op, ti_cast(ctx, a, FRIT_BOOL), ti_cast(ctx, b, FRIT_BOOL));
  }
  case FRIT_BF_FLOORDIV: case FRIT_BF_REMAINDER: case FRIT_BF_MINIMUM: case FRIT_BF_MAXIMUM: case FRIT_BF_ATAN2:
  case FRIT_BF_LT: case FRIT_BF_LE: case FRIT_BF_GT: case FRIT_BF_GE: case FRIT_BF_BITWISE_AND:
  case FRIT_BF_BITWISE_OR: case FRIT_BF_BITWISE_XOR: case FRIT_BF_LSHIFT: case FRIT_BF_RSHIFT:
  case FRIT_BF_COPYSIGN: case FRIT_BF_HYPOT: case FRIT_BF_LOGADDEXP: case FRIT_BF_LOGADDEXP2:
  case FRIT_BF_NEXTAFTER: case FRIT_BF_FMOD: case FRIT_BF_FMAX: case FRIT_BF_FMIN: case FRIT_BF_COUNT_:
    break;
  }
  return ti_fail(ctx, frit_bfunc_name(f), (frit_tensor *const[]){a, b}, 2, "not supported for complex dtypes");
}

/* ---------- parts ---------- */

frit_tensor *frit_real(frit_ctx *ctx, frit_tensor *x) {
  if (!ti_ok(ctx, "real", &x, 1)) return NULL;
  return frit_dtype_is_complex(TI_U(x)->dtype) ? part(ctx, FRIT_OP_REAL, x) : x;
}

frit_tensor *frit_imag(frit_ctx *ctx, frit_tensor *x) {
  if (!ti_ok(ctx, "imag", &x, 1)) return NULL;
  frit_dtype dt = TI_U(x)->dtype;
  return frit_dtype_is_complex(dt) ? part(ctx, FRIT_OP_IMAG, x) : ti_const_i(ctx, dt, 0, x);
}

frit_tensor *frit_conj(frit_ctx *ctx, frit_tensor *x) {
  if (!ti_ok(ctx, "conj", &x, 1)) return NULL;
  return frit_dtype_is_complex(TI_U(x)->dtype) ? part(ctx, FRIT_OP_CONJ, x) : x;
}

/* numpy.angle: atan2(imag, real) in the parts' dtype (f64 for integer and bool inputs) */
frit_tensor *frit_angle(frit_ctx *ctx, frit_tensor *x) {
  if (!ti_ok(ctx, "angle", &x, 1)) return NULL;
  frit_dtype dt = TI_U(x)->dtype;
  if (!frit_dtype_is_complex(dt)) {
    frit_dtype ft = frit_dtype_is_float(dt) ? dt : FRIT_F64;
    x = ti_cast(ctx, x, ft);
    return frit_binary_t(ctx, FRIT_BF_ATAN2, ti_const_f(ctx, ft, 0.0, x), x);
  }
  return ti_alu2(ctx, FRIT_OP_ATAN2, part(ctx, FRIT_OP_IMAG, x), part(ctx, FRIT_OP_REAL, x));
}

/* re + im*1j with numpy's promotion of the parts (f32/f16/bf16 -> c64, the rest c128) */
frit_tensor *frit_complex_t(frit_ctx *ctx, frit_tensor *re, frit_tensor *im) {
  frit_tensor *ab[2] = {re, im};
  if (!ti_ok(ctx, "complex", ab, 2)) return NULL;
  frit_dtype pt = frit_promote(TI_U(re)->dtype, TI_U(im)->dtype);
  if (frit_dtype_is_complex(pt))
    return ti_fail(ctx, "complex", ab, 2, "the parts must be real");
  frit_dtype part_dt = frit_dtype_is_float(pt) && frit_dtype_bits(pt) <= 32 ? FRIT_F32 : FRIT_F64;
  if (!ti_broadcast2(ctx, "complex", &re, &im)) return NULL;
  re = ti_cast(ctx, re, part_dt), im = ti_cast(ctx, im, part_dt);
  return re && im ? ti_alu2(ctx, FRIT_OP_COMPLEX, re, im) : NULL;
}
