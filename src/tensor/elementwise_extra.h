/* The numpy ufuncs added after the first set (acosh ... signbit, copysign ... fmin): composites
 * of ALU ops, reached from frit_unary_t / frit_binary_t. */
#ifndef FRIT_TENSOR_ELEMENTWISE_EXTRA_H
#define FRIT_TENSOR_ELEMENTWISE_EXTRA_H

#include "tensor/tensor_internal.h"

frit_tensor *ti_unary_extra(frit_ctx *ctx, frit_ufunc f, frit_tensor *x);
/* a, b are checked (ti_ok) but not yet broadcast or cast. */
frit_tensor *ti_binary_extra(frit_ctx *ctx, frit_bfunc f, frit_tensor *a, frit_tensor *b);

#endif
