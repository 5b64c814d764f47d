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

/* stop_gradient and frit_identity: the marked CASTs of tensor_internal.h (TI_CAST_*) */

/* Whether values of dtype dt carry gradients (real floats) or would need to (complex: refused
 * by the rules with an error, never a silent zero). */
static inline bool ad_dtype_carries(frit_dtype dt) { return frit_dtype_is_float(dt) || frit_dtype_is_complex(dt); }

/* frit_vjp for several outputs at once: grads[i] gets the cotangent of wrt[i] for the seed
 * seeds[o] (outs[o]'s shape and dtype) on each output (grad.c). */
frit_status ad_vjp_multi(frit_ctx *ctx, int nout, frit_tensor *const *outs, frit_tensor *const *seeds, int nwrt,
                         frit_tensor *const *wrt, frit_tensor **grads);

/* The VJP of a host loop L (loop_vjp.c): gres[j] is the cotangent of its result j (AFTER of
 * CARRY j; NULL: none). Calls emit(cb, v, cot) for each init and each captured float value v
 * (used by the body, made outside it) for which want(cb, v) holds. False with an error in ctx. */
bool ad_loop_vjp(frit_ctx *ctx, frit_uop *L, frit_tensor *const *gres, bool (*want)(void *, frit_uop *),
                 bool (*emit)(void *, frit_uop *, frit_tensor *), void *cb);

#endif
