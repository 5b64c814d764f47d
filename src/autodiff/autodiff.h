/* Reverse-mode autodiff on the tensor-level graph: the driver (grad.c) walks the graph from the
 * output back to the inputs; the rules (vjp.c) give each op's vector-Jacobian product. */
#ifndef FRIT_AUTODIFF_H
#define FRIT_AUTODIFF_H

#include "tensor/composite.h"

/* The cotangents of u's tensor sources, given u's cotangent g (u's shape and dtype). For each
 * tensor source i with want[i], out[i] receives its contribution (source i's shape and dtype) or
 * NULL when the derivative along that edge is zero (or the source is not differentiable).
 * False with an error in ctx when u's op has no gradient (naming op and dtypes). */
bool ad_op_vjp(frit_ctx *ctx, frit_uop *u, frit_tensor *g, const bool *want, frit_tensor **out);

/* stop_gradient and frit_identity: the marked CASTs of tensor_internal.h (TI_CAST_*) */

/* Whether values of dtype dt carry gradients (real floats) or would need to (complex: refused
 * by the rules with an error, never a silent zero). */
static inline bool ad_dtype_carries(frit_dtype dt) { return frit_dtype_is_float(dt) || frit_dtype_is_complex(dt); }

#endif
