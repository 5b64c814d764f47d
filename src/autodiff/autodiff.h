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

/* Explicit kernels (kernel_vjp.c): the cotangent contributions of AFTER(T, KERNEL) given its
 * cotangent g, one per target (T itself, the tensors the kernel reads, 0-d values it uses) that
 * wants(env, target) accepts; *out is malloc'd (the caller frees it). False with an error in
 * ctx when the kernel is outside the rules of docs/autodiff.md. */
typedef bool (*ad_wants_fn)(void *env, const frit_uop *u);
typedef struct ad_contrib {
  frit_uop *target;
  frit_tensor *value;
} ad_contrib;
bool ad_kernel_vjp(frit_ctx *ctx, frit_uop *after, frit_tensor *g, ad_wants_fn wants, void *env, ad_contrib **out,
                   size_t *nout);

/* stop_gradient is a CAST to x's own dtype marked by this arg.i0: an identity the simplifier
 * removes when kernels are built, but a distinct node (hash-consing keys on arg) whose rule
 * gives no gradient. AD_CAST_FRESH (with a unique arg.i1) is a plain identity that is a new
 * node, for attaching a rule to a value that is an input itself (frit_identity). */
enum { AD_CAST_STOP_GRADIENT = 1, AD_CAST_FRESH = 2 };

/* Whether values of dtype dt carry gradients (real floats) or would need to (complex: refused
 * by the rules with an error, never a silent zero). */
static inline bool ad_dtype_carries(frit_dtype dt) { return frit_dtype_is_float(dt) || frit_dtype_is_complex(dt); }

#endif
