/* Building frit tensor graphs from parsed StableHLO: the shared state of build.c (functions,
 * elementwise, movement, control flow) and build_ops.c (contractions, windows, gathers, sort). */
#ifndef FRIT_IMPORT_SHLO_BUILD_H
#define FRIT_IMPORT_SHLO_BUILD_H

#include "import/stablehlo/shlo.h"

typedef struct shlo_impl {
  shlo_module m;
  shlo_func *main;
  int nweights;
} shlo_impl;

typedef struct B {
  frit_ctx *ctx;
  shlo_impl *impl;
  frit_tensor *const *weights;
  int depth;
  int nenv; /* values of the function being built */
} B;

/* A handler builds op's results out[0 .. nres-1] from its operands in[]; env holds the values of
 * the function being built (regions read it). */
typedef frit_status (*shlo_op_fn)(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out);

/* Errors naming the op and where it is. fail: a new message; wrap: after a frit call failed,
 * its message prefixed with the op. */
frit_status shlo_fail(B *b, const shlo_op *op, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
frit_status shlo_wrap(B *b, const shlo_op *op);
#define SHLO_CHECK(b, op, t) \
  do {                       \
    if (!(t)) return shlo_wrap((b), (op)); \
  } while (0)

/* The type of result k as written. */
const shlo_type *shlo_rtype(const shlo_op *op, int k);
/* A static shape of a type, or an error naming the op. */
frit_status shlo_static_dims(B *b, const shlo_op *op, const shlo_type *t, int64_t *dims);
/* Runs region r with its block arguments bound to args; results[] gets what its return gives
 * (*nres of them, at most max). */
frit_status shlo_run_region(B *b, const shlo_region *r, frit_tensor **env, frit_tensor *const *args, int nargs,
                            frit_tensor **results, int *nres, int max);
/* A reduction region that is one binary op of its two arguments: that op's name ("add",
 * "maximum" ...), else NULL. */
const char *shlo_region_binop(const shlo_region *r);
/* The binary op by name applied elementwise (StableHLO semantics); NULL with an error. */
frit_tensor *shlo_binop(frit_ctx *ctx, const char *name, frit_tensor *a, frit_tensor *c);
/* Product of the dims of axes [lo, hi) of x (an i64 node). */
frit_uop *shlo_dim_prod(frit_ctx *ctx, const frit_tensor *x, const int *axes, int n);

/* A padded with value (a 0-d tensor): edges lo/hi (negative crops) and interior zeros. */
frit_tensor *shlo_pad_value(frit_ctx *ctx, frit_tensor *x, frit_tensor *value, const int64_t *lo,
                            const int64_t *hi, const int64_t *interior);
/* A dense literal's element count, and its values in C-order storage of its dtype (malloc'd). */
int64_t shlo_dense_count(const shlo_attr *a, frit_dtype dt);
void *shlo_dense_storage(const shlo_attr *a, int64_t count);
/* Whether the op table has a handler for this op name. */
int shlo_op_known(const char *name);
/* Builds impl's main function on args (its inputs, then the weights). */
frit_status shlo_call_main(frit_ctx *ctx, shlo_impl *impl, frit_tensor *const *args, frit_tensor **outs);

/* build_ops.c */
frit_status shlo_dot_general(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out);
frit_status shlo_convolution(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out);
frit_status shlo_reduce(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out);
frit_status shlo_reduce_window(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out);
frit_status shlo_gather(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out);
frit_status shlo_scatter(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out);
frit_status shlo_select_and_scatter(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out);
frit_status shlo_top_k(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out);
frit_status shlo_sort(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out);
frit_status shlo_dynamic_slice(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out);
frit_status shlo_dynamic_update_slice(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in,
                                      frit_tensor **out);

#endif
