/* Collectives of the tensor frontend: all-reduce, all-gather, reduce-scatter, broadcast and
 * send/recv as COLLECTIVE nodes over the process's world (src/dist), and their gradients. */
#include "dist/dist.h"
#include "tensor/tensor_internal.h"

/* The node itself. Its source is a buffer (an input or a realized value): the exchange moves
 * memory, and a constant has none. */
frit_tensor *ti_collective(frit_ctx *ctx, frit_tensor *x, int kind, int op, int64_t a, int64_t b) {
  if (!x) return NULL;
  frit_uop *u = TI_U(x);
  if (u->op != FRIT_OP_BUFFER && u->op != FRIT_OP_CONTIGUOUS)
    u = frit_uop_new(ctx, FRIT_OP_CONTIGUOUS, u->dtype, &u, 1, NULL);
  if (!u) return NULL;
  int64_t ints[2] = {a, b};
  frit_arg arg = {.i0 = kind, .i1 = op, .blob = ints, .n = 2, .blob_kind = FRIT_BLOB_INTS};
  frit_uop *c = frit_uop_new(ctx, FRIT_OP_COLLECTIVE, u->dtype, &u, 1, &arg);
  return c && frit_shape_of(ctx, c) ? TI_T(c) : NULL;
}

static const char *rname(frit_rfunc f) {
  switch (f) {
  case FRIT_RF_SUM: return "sum";
  case FRIT_RF_PROD: return "prod";
  case FRIT_RF_MAX: return "max";
  case FRIT_RF_MIN: return "min";
  case FRIT_RF_MEAN: return "mean";
  case FRIT_RF_VAR: case FRIT_RF_STD: case FRIT_RF_ARGMAX: case FRIT_RF_ARGMIN: case FRIT_RF_ANY:
  case FRIT_RF_ALL: case FRIT_RF_LOGSUMEXP: case FRIT_RF_COUNT_: return NULL;
  }
  return NULL;
}

/* The exchange's reduction for f, with the dtype the values travel in (*dt; f16/bf16 in f32,
 * a mean of integers in f64 as numpy's mean); -1 with an error naming the op otherwise. */
static int coll_op(frit_ctx *ctx, const char *opname, frit_tensor *x, frit_rfunc f, frit_dtype *dt) {
  frit_dtype d = TI_U(x)->dtype;
  *dt = d;
  if (!rname(f)) {
    TI_FAIL1(ctx, opname, x, "reduction %d is not one of sum, prod, max, min, mean", (int)f);
    return -1;
  }
  if (frit_dtype_is_complex(d) && (f == FRIT_RF_MAX || f == FRIT_RF_MIN)) {
    TI_FAIL1(ctx, opname, x, "%s is not defined on complex values", rname(f));
    return -1;
  }
  if (d == FRIT_F16 || d == FRIT_BF16) *dt = FRIT_F32;
  if (f == FRIT_RF_MEAN && !frit_dtype_is_float(d) && !frit_dtype_is_complex(d)) *dt = FRIT_F64;
  return f == FRIT_RF_PROD ? FRIT_COLL_PROD : f == FRIT_RF_MAX ? FRIT_COLL_MAX : f == FRIT_RF_MIN ? FRIT_COLL_MIN
                                                                                      : FRIT_COLL_SUM;
}

/* The mean from the sum s of x: in x's dtype for floats, f64 for integers (numpy's mean). */
static frit_tensor *mean_of_sum(frit_ctx *ctx, frit_tensor *s, frit_tensor *x) {
  int P = frit_dist_size();
  if (s && P > 1) s = ti_alu2(ctx, FRIT_OP_FDIV, s, ti_const_f(ctx, TI_U(s)->dtype, P, s));
  frit_dtype d = TI_U(x)->dtype;
  return frit_dtype_is_float(d) || frit_dtype_is_complex(d) ? ti_cast(ctx, s, d) : s;
}

frit_tensor *frit_all_reduce(frit_ctx *ctx, frit_tensor *x, frit_rfunc f) {
  if (!ti_ok(ctx, "all_reduce", &x, 1)) return NULL;
  frit_dtype dt;
  int op = coll_op(ctx, "all_reduce", x, f, &dt);
  if (op < 0) return NULL;
  frit_tensor *r = ti_collective(ctx, ti_cast(ctx, x, dt), FRIT_COLL_ALL_REDUCE, op, 0, -1);
  if (f == FRIT_RF_MEAN) return mean_of_sum(ctx, r, x);
  return ti_cast(ctx, r, TI_U(x)->dtype);
}

/* x with `axis` moved to the front (perm and its inverse written), for the exchanges that cut
 * the flat buffer into per-rank blocks. */
static frit_tensor *axis_first(frit_ctx *ctx, frit_tensor *x, int axis, int nd, int *inv) {
  int perm[FRIT_MAX_DIMS];
  perm[0] = axis;
  for (int i = 0, j = 1; i < nd; i++)
    if (i != axis) perm[j++] = i;
  for (int i = 0; i < nd; i++) inv[perm[i]] = i;
  return ti_permute(ctx, x, perm);
}

frit_tensor *frit_all_gather(frit_ctx *ctx, frit_tensor *x, int axis) {
  if (!ti_ok(ctx, "all_gather", &x, 1)) return NULL;
  const frit_shape *s = ti_shape(ctx, x);
  if (s->ndim == 0) return TI_FAIL1(ctx, "all_gather", x, "needs an array of at least one axis");
  if ((axis = ti_axis(ctx, "all_gather", x, axis, s->ndim)) < 0) return NULL;
  int inv[FRIT_MAX_DIMS];
  frit_tensor *y = axis_first(ctx, x, axis, s->ndim, inv);
  frit_uop *n = ti_shape(ctx, y)->dims[0];
  int64_t r = frit_dist_rank(), P = frit_dist_size();
  /* this rank's rows at its own block of the gathered shape */
  frit_uop *before = frit_binary(ctx, FRIT_OP_MUL, n, ti_dim(ctx, r));
  frit_uop *after = frit_binary(ctx, FRIT_OP_MUL, n, ti_dim(ctx, P - 1 - r));
  y = ti_collective(ctx, ti_pad_axis(ctx, y, 0, before, after), FRIT_COLL_ALL_GATHER, 0, 0, -1);
  return y ? ti_permute(ctx, y, inv) : NULL;
}

frit_tensor *frit_reduce_scatter(frit_ctx *ctx, frit_tensor *x, frit_rfunc f, int axis) {
  if (!ti_ok(ctx, "reduce_scatter", &x, 1)) return NULL;
  const frit_shape *s = ti_shape(ctx, x);
  if (s->ndim == 0) return TI_FAIL1(ctx, "reduce_scatter", x, "needs an array of at least one axis");
  if ((axis = ti_axis(ctx, "reduce_scatter", x, axis, s->ndim)) < 0) return NULL;
  int64_t r = frit_dist_rank(), P = frit_dist_size(), m = frit_dim_value(s->dims[axis]);
  if (m < 0 || m % P)
    return TI_FAIL1(ctx, "reduce_scatter", x, "axis %d must have a static length divisible by the %d ranks",
                    axis, (int)P);
  frit_dtype dt;
  int op = coll_op(ctx, "reduce_scatter", x, f, &dt);
  if (op < 0) return NULL;
  int inv[FRIT_MAX_DIMS];
  frit_tensor *y = axis_first(ctx, ti_cast(ctx, x, dt), axis, s->ndim, inv);
  y = ti_collective(ctx, y, FRIT_COLL_REDUCE_SCATTER, op, 0, -1);
  y = ti_shrink_axis(ctx, y, 0, ti_dim(ctx, r * (m / P)), ti_dim(ctx, (r + 1) * (m / P)));
  if (!y) return NULL;
  y = ti_permute(ctx, y, inv);
  if (f == FRIT_RF_MEAN) return mean_of_sum(ctx, y, x);
  return ti_cast(ctx, y, TI_U(x)->dtype);
}

static bool rank_ok(frit_ctx *ctx, const char *op, frit_tensor *x, int rank, bool none_ok) {
  if ((rank >= 0 && rank < frit_dist_size()) || (none_ok && rank == -1)) return true;
  TI_FAIL1(ctx, op, x, "rank %d is outside the world of %d ranks%s", rank, frit_dist_size(),
           none_ok ? " (-1: none)" : "");
  return false;
}

frit_tensor *frit_broadcast_from(frit_ctx *ctx, frit_tensor *x, int root) {
  if (!ti_ok(ctx, "broadcast", &x, 1) || !rank_ok(ctx, "broadcast", x, root, false)) return NULL;
  return ti_collective(ctx, x, FRIT_COLL_BROADCAST, 0, root, -1);
}

frit_tensor *frit_sendrecv(frit_ctx *ctx, frit_tensor *x, int dest, int source) {
  if (!ti_ok(ctx, "sendrecv", &x, 1) || !rank_ok(ctx, "sendrecv", x, dest, true) ||
      !rank_ok(ctx, "sendrecv", x, source, true))
    return NULL;
  /* one rank: receiving from no one is zeros (the copy kernel won't do); receiving from itself
   * what it does not send would wait forever with several */
  if (frit_dist_size() == 1 && source < 0) return ti_const_f(ctx, TI_U(x)->dtype, 0, x);
  if (frit_dist_size() == 1 && dest < 0)
    return TI_FAIL1(ctx, "sendrecv", x, "rank 0 receives from rank 0, which sends it nothing (dest -1)");
  return ti_collective(ctx, x, FRIT_COLL_SENDRECV, 0, dest, source);
}

/* The gradient of COLLECTIVE u with output cotangent g (autodiff/vjp.c). Each rank runs it for
 * its own copy of the program, so the exchanges below meet their partners on the other ranks. */
frit_tensor *ti_collective_vjp(frit_ctx *ctx, const frit_uop *u, frit_tensor *g) {
  const int64_t *ints = (const int64_t *)u->arg.blob;
  switch ((frit_coll_kind)u->arg.i0) {
  case FRIT_COLL_ALL_REDUCE:
    if (u->arg.i1 != FRIT_COLL_SUM) break;
    return ti_collective(ctx, g, FRIT_COLL_ALL_REDUCE, FRIT_COLL_SUM, 0, -1);
  case FRIT_COLL_ALL_GATHER: /* block r of every rank's cotangent, summed, back to rank r */
    return ti_collective(ctx, g, FRIT_COLL_REDUCE_SCATTER, FRIT_COLL_SUM, 0, -1);
  case FRIT_COLL_REDUCE_SCATTER:
    if (u->arg.i1 != FRIT_COLL_SUM) break;
    return ti_collective(ctx, g, FRIT_COLL_ALL_GATHER, 0, 0, -1);
  case FRIT_COLL_BROADCAST: /* the root's gradient would need an exchange that only some ranks'
                               graphs hold (the others' is zero): not built */
    break;
  case FRIT_COLL_SENDRECV: /* what went to dest comes back from it */
    return ti_collective(ctx, g, FRIT_COLL_SENDRECV, 0, ints[1], ints[0]);
  case FRIT_COLL_KIND_COUNT_: break;
  }
  return ti_fail(ctx, "grad", (frit_tensor *const[]){TI_T(u)}, 1, "%s %s has no gradient (only the sum's)",
                 frit_coll_kind_name((int)u->arg.i0), frit_coll_op_name((int)u->arg.i1));
}
