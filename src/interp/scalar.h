/* Scalar helpers shared by the interpreter, constant folding and tests: f16/bf16 conversions
 * (round to nearest even) and typed loads/stores of buffer elements. Semantics: docs/semantics.md */
#ifndef FRIT_INTERP_SCALAR_H
#define FRIT_INTERP_SCALAR_H

#include "ir/uop.h"

/* Bytes one element of a scalar kind takes in a buffer (bool: 1). */
int frit_kind_bytes(frit_scalar_kind k);

/* IEEE binary16 and bfloat16 bit patterns from a double, rounded to nearest even directly from
 * the double (no double rounding), with subnormals, overflow to inf and quiet NaNs. */
uint16_t frit_f16_from_double(double x);
uint16_t frit_bf16_from_double(double x);
/* The exact double value of a binary16 / bfloat16 bit pattern. */
double frit_f16_to_double(uint16_t h);
double frit_bf16_to_double(uint16_t h);

/* The storage bits (low frit_kind_bytes*8 bits) of a normalised value, and back. */
uint64_t frit_scalar_to_bits(frit_scalar v, frit_scalar_kind k);
frit_scalar frit_scalar_from_bits(uint64_t bits, frit_scalar_kind k);

/* An ALU op on complex operands of kind k (FRIT_C64 / FRIT_C128); comparisons give bool. */
frit_scalar frit_eval_complex(frit_op op, frit_scalar_kind k, const frit_scalar *src);

/* Reads / writes one element at p (no alignment needed). */
frit_scalar frit_scalar_load(const void *p, frit_scalar_kind k);
void frit_scalar_store(void *p, frit_scalar_kind k, frit_scalar v);

/* The value of the scalar expression u (constants, variables, ALU ops, casts) for the bindings
 * vars, as i64 (floats truncated); an error naming what cannot be evaluated otherwise. */
frit_status frit_eval_int_expr(frit_ctx *ctx, frit_uop *u, const frit_binding *vars, int nvars, int64_t *out);

#endif
