/* Helpers shared by the composite tensor ops (reduce.c, linalg.c, nn.c): broadcasting ALU,
 * reductions with keepdims handling, numpy's reduction dtypes, and the pooling window view. */
#ifndef FRIT_TENSOR_COMPOSITE_H
#define FRIT_TENSOR_COMPOSITE_H

#include "tensor/tensor_internal.h"

/* numpy's accumulator dtype of sum/prod/cumsum: bool and small ints widen to i64 (u64). */
frit_dtype tc_sum_dtype(frit_dtype dt);
/* Dtype the float math of mean/var/logsumexp/softmax runs in: f16/bf16 in f32, other floats
 * as they are, everything else in f64. */
frit_dtype tc_float_compute_dtype(frit_dtype dt);
/* Dtype such results have: floats keep theirs, the rest give f64. */
frit_dtype tc_float_result_dtype(frit_dtype dt);
bool tc_is_half(frit_dtype dt);

/* Binary ALU op with numpy broadcasting; operands must already share a dtype. */
frit_tensor *tc_bin(frit_ctx *ctx, const char *op, frit_op alu, frit_tensor *a, frit_tensor *b);
/* REDUCE_AXIS over the masked axes, keeping them as size 1 (x itself when none is masked). */
frit_tensor *tc_reduce_keep(frit_ctx *ctx, frit_tensor *x, frit_op alu, const bool *mask);
/* Drops the masked axes (which must have size 1). */
frit_tensor *tc_drop(frit_ctx *ctx, frit_tensor *x, const bool *mask);
/* 1-D view of all elements. */
frit_tensor *tc_flatten(frit_ctx *ctx, frit_tensor *x);
/* Product of the masked dims of x as a 0-d tensor of dtype dt. */
frit_tensor *tc_count(frit_ctx *ctx, frit_tensor *x, const bool *mask, frit_dtype dt);
/* 0-d constant. */
frit_tensor *tc_scalar(frit_ctx *ctx, frit_dtype dt, double v);
/* Same-dtype sum over the masked axes (keepdims), accumulating f16/bf16 in f32, bool as OR. */
frit_tensor *tc_sum_keep(frit_ctx *ctx, frit_tensor *x, const bool *mask);
/* The cotangent of x for m = its max (min) over the masked axes (keepdims), given m's cotangent
 * g: the ties share g equally. */
frit_tensor *tc_extreme_grad(frit_ctx *ctx, frit_tensor *x, frit_tensor *m, frit_tensor *g, const bool *mask);

#endif
