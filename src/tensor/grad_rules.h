/* Attaching the gradient rules of grad_rules.c to the results of ops built from explicit kernels;
 * each returns its first argument (NULL on error). */
#ifndef FRIT_TENSOR_GRAD_RULES_H
#define FRIT_TENSOR_GRAD_RULES_H

#include "tensor/composite.h"

frit_tensor *tg_solve(frit_ctx *ctx, frit_tensor *x, frit_tensor *a, frit_tensor *b); /* x = a^-1 b */
frit_tensor *tg_det(frit_ctx *ctx, frit_tensor *d, frit_tensor *a, bool log_abs);   /* det or log|det| */
frit_tensor *tg_cholesky(frit_ctx *ctx, frit_tensor *l, frit_tensor *a);            /* lower l */
frit_tensor *tg_sort(frit_ctx *ctx, frit_tensor *sorted, frit_tensor *x, int axis, int descending);
frit_tensor *tg_copysign(frit_ctx *ctx, frit_tensor *r, frit_tensor *a, frit_tensor *b);
frit_tensor *tg_first(frit_ctx *ctx, frit_tensor *r, frit_tensor *x, frit_tensor *y); /* nextafter */
/* r = conv2d(x, w) with groups 1, before any bias (float dtypes) */
frit_tensor *tg_conv2d(frit_ctx *ctx, frit_tensor *r, frit_tensor *x, frit_tensor *w, const int64_t stride[2],
                       const int64_t padding[2], const int64_t dilation[2]);
/* r (..., OH, OW) = the max of the non-overlapping windows w (..., OH, OW, KH, KW), float dtypes */
frit_tensor *tg_max_pool(frit_ctx *ctx, frit_tensor *r, frit_tensor *w);
/* r = the max or min of all of x (keepdims), reduced in parallel parts (staged.c) */
frit_tensor *tg_whole_extreme(frit_ctx *ctx, frit_tensor *r, frit_tensor *x);
/* x cast to cdt, zero-padded by pad on its last two axes and materialised (when padded): the
 * node conv2d's forward builds for its input, so that its gradient rule reads the same buffer */
frit_tensor *tn_conv_padded(frit_ctx *ctx, frit_tensor *x, frit_dtype cdt, const int64_t pad[2]);
frit_tensor *tn_conv2d_grad_x(frit_ctx *ctx, frit_tensor *g, frit_tensor *w, const int64_t st[2], const int64_t pad[2],
                              const int64_t dl[2], int64_t h, int64_t wd);
frit_tensor *tn_conv2d_weight_grad(frit_ctx *ctx, frit_tensor *xt, frit_tensor *gt, const int64_t stride[2],
                                   const int64_t padding[2], const int64_t dilation[2]);
frit_tensor *tg_eigh(frit_ctx *ctx, frit_tensor *out, frit_tensor *a, bool vectors); /* w or V of eigh */
frit_tensor *tg_svdvals(frit_ctx *ctx, frit_tensor *s, frit_tensor *a); /* the s of svd */
/* the u (is_vh false) or vh of svd; full: full_matrices (no gradient unless square) */
frit_tensor *tg_svd_vectors(frit_ctx *ctx, frit_tensor *out, frit_tensor *a, bool is_vh, bool full);
frit_tensor *tg_qr(frit_ctx *ctx, frit_tensor *out, frit_tensor *a, bool is_r); /* reduced, M >= N */
frit_tensor *tg_constant(frit_ctx *ctx, frit_tensor *t); /* no gradient (a sign, an index) */

#endif
