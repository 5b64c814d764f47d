/* Shapes of tensor-level nodes: computed once per node and cached in it. The contract between
 * the frontend (which builds tensor graphs) and the scheduler (which reads them). */
#ifndef FRIT_SHAPE_H
#define FRIT_SHAPE_H

#include "ir/uop.h"

typedef struct frit_shape {
  int ndim;
  frit_uop *dims[]; /* i64 nodes: CONST for static dims, symbolic expressions otherwise */
} frit_shape;

/* The shape of a tensor-level node (see docs/tensor.md for which ops are tensor level), or
 * NULL with FRIT_ERR_INVALID when u is not a well-formed tensor-level node. */
const frit_shape *frit_shape_of(frit_ctx *ctx, frit_uop *u);
/* The value of a static dim, or -1 when it is symbolic. */
int64_t frit_dim_value(const frit_uop *dim);
/* Whether source i of tensor-level node u is a tensor operand (not a dim or a kernel body):
 * the edges along which shapes, and gradients, flow. */
bool frit_is_tensor_src(const frit_uop *u, uint32_t i);
/* Product of the dims as an i64 node (simplified). */
frit_uop *frit_shape_numel(frit_ctx *ctx, const frit_shape *s);

#endif
