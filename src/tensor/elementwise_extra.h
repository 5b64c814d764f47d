/* The numpy ufuncs added after the first set (acosh ... signbit, copysign ... fmin): composites
 * of ALU ops, reached from frit_unary_t / frit_binary_t. */
#ifndef FRIT_TENSOR_ELEMENTWISE_EXTRA_H
#define FRIT_TENSOR_ELEMENTWISE_EXTRA_H

#include "tensor/tensor_internal.h"

frit_tensor *ti_unary_extra(frit_ctx *ctx, frit_ufunc f, frit_tensor *x);
/* a, b are checked (ti_ok) but not yet broadcast or cast. */
frit_tensor *ti_binary_extra(frit_ctx *ctx, frit_bfunc f, frit_tensor *a, frit_tensor *b);
/* complex.c: ufuncs on complex x; binary ufuncs on a, b broadcast and cast to the complex loop
 * dtype; the complex dtype whose parts hold a real dtype (f64 -> c128, else c64). */
frit_tensor *ti_unary_complex(frit_ctx *ctx, frit_ufunc f, frit_tensor *x);
frit_tensor *ti_binary_complex(frit_ctx *ctx, frit_bfunc f, frit_tensor *a, frit_tensor *b);
frit_dtype ti_complex_of(frit_dtype real);

/* Short builders both elementwise files write their composites with (operands already share a
 * shape and dtype; constants take like's dtype and shape). */
static inline frit_tensor *cf(frit_ctx *ctx, frit_tensor *like, double v) {
  return ti_const_f(ctx, TI_U(like)->dtype, v, like);
}
static inline frit_tensor *ci(frit_ctx *ctx, frit_tensor *like, int64_t v) {
  return ti_const_i(ctx, TI_U(like)->dtype, v, like);
}
static inline frit_tensor *add(frit_ctx *c, frit_tensor *a, frit_tensor *b) { return ti_alu2(c, FRIT_OP_ADD, a, b); }
static inline frit_tensor *sub(frit_ctx *c, frit_tensor *a, frit_tensor *b) { return ti_alu2(c, FRIT_OP_SUB, a, b); }
static inline frit_tensor *mul(frit_ctx *c, frit_tensor *a, frit_tensor *b) { return ti_alu2(c, FRIT_OP_MUL, a, b); }
static inline frit_tensor *fdiv(frit_ctx *c, frit_tensor *a, frit_tensor *b) { return ti_alu2(c, FRIT_OP_FDIV, a, b); }
static inline frit_tensor *lt(frit_ctx *c, frit_tensor *a, frit_tensor *b) { return ti_alu2(c, FRIT_OP_CMPLT, a, b); }
static inline frit_tensor *le(frit_ctx *c, frit_tensor *a, frit_tensor *b) { return ti_alu2(c, FRIT_OP_CMPLE, a, b); }
static inline frit_tensor *eq(frit_ctx *c, frit_tensor *a, frit_tensor *b) { return ti_alu2(c, FRIT_OP_CMPEQ, a, b); }
static inline frit_tensor *ne(frit_ctx *c, frit_tensor *a, frit_tensor *b) { return ti_alu2(c, FRIT_OP_CMPNE, a, b); }
static inline frit_tensor *and_(frit_ctx *c, frit_tensor *a, frit_tensor *b) { return ti_alu2(c, FRIT_OP_AND, a, b); }
static inline frit_tensor *or_(frit_ctx *c, frit_tensor *a, frit_tensor *b) { return ti_alu2(c, FRIT_OP_OR, a, b); }
static inline frit_tensor *where(frit_ctx *c, frit_tensor *m, frit_tensor *a, frit_tensor *b) {
  return ti_where(c, m, a, b);
}

#endif
