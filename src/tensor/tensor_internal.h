/* Helpers shared by the tensor frontend files (tensor.c, movement.c, reduce.c, linalg.c, nn.c):
 * raw builders of Contract-1 nodes, dim arithmetic, broadcasting, axis checks and error text. */
#ifndef FRIT_TENSOR_INTERNAL_H
#define FRIT_TENSOR_INTERNAL_H

#include "tensor/shape.h"

/* A frit_tensor* is the tensor-level frit_uop* itself. */
#define TI_T(u) ((frit_tensor *)(u))
#define TI_U(t) ((frit_uop *)(t))

/* ---------- shapes and dims ---------- */

/* Shape of a tensor (never NULL for a tensor built by the frontend). */
static inline const frit_shape *ti_shape(frit_ctx *ctx, const frit_tensor *t) {
  return frit_shape_of(ctx, TI_U(t));
}
/* i64 CONST dim. */
frit_uop *ti_dim(frit_ctx *ctx, int64_t v);
/* Dims given by a caller in canonical (simplified) form: shapes are compared node by node, so
 * 1 * n and n must be the same node. */
bool ti_canon_dims(frit_ctx *ctx, int n, frit_uop *const *in, frit_uop **out);
/* Dim arithmetic: folded in C when static, otherwise built and simplified. NULL propagates. */
frit_uop *ti_dim_add(frit_ctx *ctx, frit_uop *a, frit_uop *b);
frit_uop *ti_dim_sub(frit_ctx *ctx, frit_uop *a, frit_uop *b);
frit_uop *ti_dim_mul(frit_ctx *ctx, frit_uop *a, frit_uop *b);
frit_uop *ti_dim_cdiv(frit_ctx *ctx, frit_uop *a, int64_t b); /* ceil(a / b), b > 0, a >= 0 */
frit_uop *ti_dim_div(frit_ctx *ctx, frit_uop *a, int64_t b);  /* floor(a / b), b > 0, a >= 0 */
frit_uop *ti_dim_div_by(frit_ctx *ctx, frit_uop *a, frit_uop *b); /* floor(a / b), b > 0, a >= 0 */
frit_uop *ti_dim_min(frit_ctx *ctx, frit_uop *a, frit_uop *b);
frit_uop *ti_dim_max(frit_ctx *ctx, frit_uop *a, frit_uop *b);
frit_uop *ti_dim_pmod(frit_ctx *ctx, frit_uop *a, frit_uop *m); /* a mod m in [0, m), m > 0 */
/* Dims are equal when they are the same node (dims are kept simplified, so that is semantic
 * equality for the forms the frontend builds), or both static with the same value. */
static inline bool ti_dim_eq(const frit_uop *a, const frit_uop *b) {
  return a == b || (frit_dim_value(a) >= 0 && frit_dim_value(a) == frit_dim_value(b));
}
/* Checks a caller's dim list: rank in 0..FRIT_MAX_DIMS, dims and the output array `out` (named
 * out_name) not NULL when rank > 0, every dim a non-negative i64 node. An error naming op. */
frit_status ti_check_dim_list(frit_ctx *ctx, const char *op, int ndim, frit_uop *const *dims, const void *out,
                              const char *out_name);
/* Converts static dims to CONST dim nodes (dims[i] >= 0 is checked by the caller). */
bool ti_dims_from_ints(frit_ctx *ctx, int ndim, const int64_t *in, frit_uop **out);

/* ---------- errors ----------
 * ti_fail sets FRIT_ERR_INVALID with "op <op>: shapes (2, 3) and (4,), dtypes f32 and i64: <why>"
 * (n tensors, n may be 0) and returns NULL. */
frit_tensor *ti_fail(frit_ctx *ctx, const char *op, frit_tensor *const *ts, int n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* One-tensor shortcut. */
#define TI_FAIL1(ctx, op, x, ...) ti_fail((ctx), (op), (frit_tensor *const[]){(x)}, 1, __VA_ARGS__)
/* "(4, n, 3)" into buf. */
const char *ti_shape_text(const frit_shape *s, char *buf, size_t n);
const char *ti_dtname(frit_dtype dt, char *buf32);
/* True when none of the tensors is NULL. When one is, the earlier error stays (and a generic
 * one is set only if there was none). */
bool ti_ok(frit_ctx *ctx, const char *op, frit_tensor *const *ts, int n);

/* ---------- axes ---------- */

/* Normalises axis (negative counts from the end) for rank ndim; -1 with an error if out of range. */
int ti_axis(frit_ctx *ctx, const char *op, frit_tensor *x, int axis, int ndim);
/* Normalises a list of axes into mask[ndim]; naxes == FRIT_ALL_AXES selects every axis.
 * Duplicates and out-of-range axes are errors. Returns the number of selected axes, -1 on error. */
int ti_axes_mask(frit_ctx *ctx, const char *op, frit_tensor *x, const int *axes, int naxes, int ndim,
                 bool *mask);

/* ---------- raw builders of Contract-1 nodes (no numpy semantics; the caller checked) ---------- */

frit_tensor *ti_reshape(frit_ctx *ctx, frit_tensor *x, int ndim, frit_uop *const *dims);
frit_tensor *ti_expand(frit_ctx *ctx, frit_tensor *x, int ndim, frit_uop *const *dims);
frit_tensor *ti_permute(frit_ctx *ctx, frit_tensor *x, const int *perm); /* identity skipped */
frit_tensor *ti_pad(frit_ctx *ctx, frit_tensor *x, frit_uop *const *before, frit_uop *const *after);
frit_tensor *ti_shrink(frit_ctx *ctx, frit_tensor *x, frit_uop *const *begin, frit_uop *const *end);
frit_tensor *ti_flip(frit_ctx *ctx, frit_tensor *x, const bool *mask);
/* REDUCE_AXIS (keepdims) over the masked axes with ALU op `op` (ADD, MUL, MAX, MIN, AND, OR). */
frit_tensor *ti_reduce_axis(frit_ctx *ctx, frit_tensor *x, frit_op op, const bool *mask);
/* Whole-array reductions staged in parallel parts (staged.c). ti_whole_parts: x's first elements
 * as [parts, m] and in *tail the rest (1-D, maybe empty; NULL when the parts hold all); NULL,
 * with no error, when x is not staged (too small). ti_staged_whole_reduce: the keepdims
 * reduction of all of x by way of them; NULL, with no error, when not staged. */
frit_tensor *ti_whole_parts(frit_ctx *ctx, frit_tensor *x, frit_tensor **tail);
frit_tensor *ti_staged_whole_reduce(frit_ctx *ctx, frit_tensor *x, frit_op op);
frit_tensor *ti_scan(frit_ctx *ctx, frit_tensor *x, frit_op op, int axis);
frit_tensor *ti_gather(frit_ctx *ctx, frit_tensor *x, frit_tensor *idx, int axis);
/* One-axis pieces (movement.c): SHRINK to [b, e), PAD by b/a zeros, FLIP, replicate (k copies:
 * elementwise as repeat, else as tile), concatenation of same-dtype pieces, 1-D view. */
frit_tensor *ti_shrink_axis(frit_ctx *ctx, frit_tensor *x, int axis, frit_uop *b, frit_uop *e);
frit_tensor *ti_pad_axis(frit_ctx *ctx, frit_tensor *x, int axis, frit_uop *b, frit_uop *a);
frit_tensor *ti_flip_axis(frit_ctx *ctx, frit_tensor *x, int axis);
frit_tensor *ti_replicate_axis(frit_ctx *ctx, frit_tensor *x, int axis, frit_uop *k, bool elementwise);
frit_tensor *ti_cat(frit_ctx *ctx, frit_tensor *const *xs, int n, int axis);
frit_tensor *ti_flatten(frit_ctx *ctx, frit_tensor *x);
/* IOTA(n): i64 (n,). */
frit_tensor *ti_iota(frit_ctx *ctx, frit_uop *n);
/* Same-shape ALU ops; operands must already agree in dtype and shape. */
frit_tensor *ti_alu1(frit_ctx *ctx, frit_op op, frit_tensor *a);
frit_tensor *ti_alu2(frit_ctx *ctx, frit_op op, frit_tensor *a, frit_tensor *b);
frit_tensor *ti_where(frit_ctx *ctx, frit_tensor *c, frit_tensor *a, frit_tensor *b);
/* CAST (no node when the dtype is already dt). */
frit_tensor *ti_cast(frit_ctx *ctx, frit_tensor *x, frit_dtype dt);
/* CASTs to x's own dtype marked by arg.i0: identities the simplifier removes when kernels are
 * built, but distinct nodes (hash-consing keys on arg). STOP_GRADIENT has no gradient; FRESH
 * (with a unique arg.i1) is a new node, for attaching a rule to a value that is an input itself. */
enum { TI_CAST_STOP_GRADIENT = 1, TI_CAST_FRESH = 2 };
/* x with no gradient flowing back through it (frit_stop_gradient); shifts that cancel out
 * (softmax's max) use it so that their backward costs nothing */
frit_tensor *ti_stop_gradient(frit_ctx *ctx, frit_tensor *x);
/* x's value as a new node (frit_identity): a gradient rule's input that the op's own graph
 * would otherwise fold away (a reshape of a reshape is one reshape) */
frit_tensor *ti_fresh(frit_ctx *ctx, frit_tensor *x);

/* ---------- broadcasting and constants ---------- */

/* numpy broadcast of n shapes into dims (FRIT_MAX_DIMS); false with an error on mismatch. */
bool ti_broadcast_shapes(frit_ctx *ctx, const char *op, frit_tensor *const *ts, int n, int *ndim,
                         frit_uop **dims);
/* x broadcast to (ndim, dims): RESHAPE to rank with leading 1s, then EXPAND. No-op if equal.
 * Error (naming op) if not broadcastable. */
frit_tensor *ti_broadcast(frit_ctx *ctx, const char *op, frit_tensor *x, int ndim, frit_uop *const *dims);
/* Broadcasts both to their common shape (in place). False with an error on mismatch. */
bool ti_broadcast2(frit_ctx *ctx, const char *op, frit_tensor **a, frit_tensor **b);
/* A constant of dtype dt broadcast to (ndim, dims). */
frit_tensor *ti_full(frit_ctx *ctx, frit_dtype dt, frit_scalar v, int ndim, frit_uop *const *dims);
/* Constant with x's shape (value converted to dt like frit_const_float/int). */
frit_tensor *ti_const_f(frit_ctx *ctx, frit_dtype dt, double v, frit_tensor *like);
frit_tensor *ti_const_i(frit_ctx *ctx, frit_dtype dt, int64_t v, frit_tensor *like);
/* i64 index tensor of shape `like`'s shape, counting along `axis` (0..dim-1), built from IOTA. */
frit_tensor *ti_axis_index(frit_ctx *ctx, frit_tensor *like, int axis);

/* The gradient rule attached to u by frit_set_vjp (custom_vjp.c): false when there is none. */
bool ti_vjp_lookup(frit_ctx *ctx, const frit_uop *u, frit_vjp_rule *rule, int *nin, frit_tensor *const **ins,
                   const int64_t **params);

/* Attaches the rule of `from` (if any, with its params) to `to`, with inputs ins (as many as
 * from's): for copies of a graph (host-loop gradients copy loop bodies). */
frit_status ti_vjp_copy(frit_ctx *ctx, const frit_uop *from, frit_tensor *to, frit_tensor *const *ins);

/* A COLLECTIVE node (collective.c): kind and op of src/dist, arg a (root or dest) and b
 * (source); x is realized first unless it is an input. Its gradient for cotangent g. */
frit_tensor *ti_collective(frit_ctx *ctx, frit_tensor *x, int kind, int op, int64_t a, int64_t b);
frit_tensor *ti_collective_vjp(frit_ctx *ctx, const frit_uop *u, frit_tensor *g);

/* The frontend's inputs counter (see frit_input). */
int ti_next_input(frit_ctx *ctx);

#endif
