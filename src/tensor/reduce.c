/* Reductions of the tensor frontend (sum ... logsumexp, argmax/argmin, cumsum) lowered onto
 * REDUCE_AXIS and SCAN with numpy's dtype rules; also the helpers shared with linalg.c and nn.c. */
#include "tensor/composite.h"

#include <math.h>

/* ---------- shared helpers ---------- */

bool tc_is_half(frit_dtype dt) {
  frit_scalar_kind k = frit_dtype_kind(dt);
  return k == FRIT_F16 || k == FRIT_BF16;
}

frit_dtype tc_sum_dtype(frit_dtype dt) {
  frit_scalar_kind k = frit_dtype_kind(dt);
  if (k == FRIT_BOOL || k == FRIT_I8 || k == FRIT_I16 || k == FRIT_I32) return FRIT_I64;
  if (k == FRIT_U8 || k == FRIT_U16 || k == FRIT_U32) return FRIT_U64;
  return dt;
}

frit_dtype tc_float_compute_dtype(frit_dtype dt) {
  if (tc_is_half(dt)) return FRIT_F32;
  return frit_dtype_is_float(dt) || frit_dtype_is_complex(dt) ? dt : FRIT_F64;
}

frit_dtype tc_float_result_dtype(frit_dtype dt) {
  return frit_dtype_is_float(dt) || frit_dtype_is_complex(dt) ? dt : FRIT_F64;
}

frit_tensor *tc_bin(frit_ctx *ctx, const char *op, frit_op alu, frit_tensor *a, frit_tensor *b) {
  if (!a || !b) return NULL;
  if (!ti_broadcast2(ctx, op, &a, &b)) return NULL;
  return ti_alu2(ctx, alu, a, b);
}

frit_tensor *tc_reduce_keep(frit_ctx *ctx, frit_tensor *x, frit_op alu, const bool *mask) {
  if (!x) return NULL;
  int nd = ti_shape(ctx, x)->ndim;
  bool any = false;
  for (int i = 0; i < nd; i++) any |= mask[i];
  return any ? ti_reduce_axis(ctx, x, alu, mask) : x;
}

frit_tensor *tc_extreme_grad(frit_ctx *ctx, frit_tensor *x, frit_tensor *m, frit_tensor *g, const bool *mask) {
  const frit_shape *s = ti_shape(ctx, x);
  frit_tensor *hit = ti_alu2(ctx, FRIT_OP_CMPEQ, x, ti_expand(ctx, m, s->ndim, s->dims));
  frit_tensor *count = tc_sum_keep(ctx, ti_cast(ctx, hit, frit_tensor_dtype(x)), mask);
  frit_tensor *share = ti_expand(ctx, ti_alu2(ctx, FRIT_OP_FDIV, g, count), s->ndim, s->dims);
  return ti_where(ctx, hit, share, ti_const_f(ctx, frit_tensor_dtype(x), 0, x));
}

frit_tensor *tc_drop(frit_ctx *ctx, frit_tensor *x, const bool *mask) {
  if (!x) return NULL;
  const frit_shape *s = ti_shape(ctx, x);
  frit_uop *dims[FRIT_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < s->ndim; i++)
    if (!mask[i]) dims[n++] = s->dims[i];
  return n == s->ndim ? x : ti_reshape(ctx, x, n, dims);
}

frit_tensor *tc_flatten(frit_ctx *ctx, frit_tensor *x) {
  if (!x) return NULL;
  const frit_shape *s = ti_shape(ctx, x);
  if (s->ndim == 1) return x;
  frit_uop *n = frit_shape_numel(ctx, s);
  return n ? ti_reshape(ctx, x, 1, &n) : NULL;
}

frit_tensor *tc_count(frit_ctx *ctx, frit_tensor *x, const bool *mask, frit_dtype dt) {
  if (!x) return NULL;
  const frit_shape *s = ti_shape(ctx, x);
  frit_uop *n = ti_dim(ctx, 1);
  for (int i = 0; i < s->ndim; i++)
    if (mask[i]) n = ti_dim_mul(ctx, n, s->dims[i]);
  if (!n) return NULL;
  int64_t v = frit_dim_value(n);
  return v >= 0 ? tc_scalar(ctx, dt, (double)v) : ti_cast(ctx, TI_T(n), dt);
}

frit_tensor *tc_scalar(frit_ctx *ctx, frit_dtype dt, double v) { return TI_T(frit_const_float(ctx, dt, v)); }

frit_tensor *tc_sum_keep(frit_ctx *ctx, frit_tensor *x, const bool *mask) {
  if (!x) return NULL;
  frit_dtype dt = frit_tensor_dtype(x);
  if (frit_dtype_is_bool(dt)) return tc_reduce_keep(ctx, x, FRIT_OP_OR, mask);
  if (!tc_is_half(dt)) return tc_reduce_keep(ctx, x, FRIT_OP_ADD, mask);
  return ti_cast(ctx, tc_reduce_keep(ctx, ti_cast(ctx, x, FRIT_F32), FRIT_OP_ADD, mask), dt);
}

/* ---------- reductions ---------- */

static const char *rfunc_name(frit_rfunc f) {
  static const char *const names[FRIT_RF_COUNT_] = {"sum", "prod", "max", "min", "mean", "var", "std",
                                                    "argmax", "argmin", "any", "all", "logsumexp"};
  return (int)f >= 0 && f < FRIT_RF_COUNT_ ? names[f] : "reduce";
}

/* numpy's name of the reduction in its "no identity" message. */
static const char *ufunc_of(frit_rfunc f) {
  return f == FRIT_RF_MIN || f == FRIT_RF_ARGMIN ? "minimum" : "maximum";
}

/* x broadcast to the shape of `like`. */
static frit_tensor *bcast_like(frit_ctx *ctx, const char *op, frit_tensor *x, frit_tensor *like) {
  if (!x || !like) return NULL;
  const frit_shape *s = ti_shape(ctx, like);
  return ti_broadcast(ctx, op, x, s->ndim, s->dims);
}

static frit_op extreme_op(frit_dtype dt, bool is_max) {
  return frit_dtype_is_bool(dt) ? (is_max ? FRIT_OP_OR : FRIT_OP_AND) : (is_max ? FRIT_OP_MAX : FRIT_OP_MIN);
}

/* Where x equals m, its extreme; a NaN counts as the extreme, as in numpy. */
static frit_tensor *is_extreme(frit_ctx *ctx, frit_tensor *x, frit_tensor *m) {
  frit_tensor *hit = m ? ti_alu2(ctx, FRIT_OP_CMPEQ, x, m) : NULL;
  if (!hit || !frit_dtype_is_float(frit_tensor_dtype(x))) return hit;
  return ti_alu2(ctx, FRIT_OP_OR, hit, ti_alu2(ctx, FRIT_OP_CMPNE, x, x));
}

/* First index along `axis` where x equals its max (min), so the first NaN wins. Returns the
 * keepdims i64 result: the index, or that element's entry in `at` (i64, x's shape) if given. */
static frit_tensor *arg_extreme(frit_ctx *ctx, const char *name, frit_tensor *x, int axis, bool is_max,
                                frit_tensor *at) {
  const frit_shape *s = ti_shape(ctx, x);
  bool mask[FRIT_MAX_DIMS] = {false};
  mask[axis] = true;
  frit_tensor *mk = tc_reduce_keep(ctx, x, extreme_op(frit_tensor_dtype(x), is_max), mask);
  frit_tensor *hit = is_extreme(ctx, x, bcast_like(ctx, name, mk, x));
  if (at) /* (INT64_MAX: no hit, which cannot be: the extreme is one of x's elements) */
    return tc_reduce_keep(ctx, ti_where(ctx, hit, at, ti_const_i(ctx, FRIT_I64, INT64_MAX, at)), FRIT_OP_MIN, mask);
  frit_tensor *pos = ti_axis_index(ctx, x, axis);
  frit_tensor *none = bcast_like(ctx, name, TI_T(s->dims[axis]), x);
  if (!hit || !pos || !none) return NULL;
  /* An axis that fits in i32 takes the first hit's position in i32: 16 lanes to a vector, not 8
   * (the search pass took more time than the max). */
  if (s->dims[axis]->vmax <= INT32_MAX) {
    frit_tensor *first = tc_reduce_keep(ctx, ti_where(ctx, hit, ti_cast(ctx, pos, FRIT_I32), ti_cast(ctx, none, FRIT_I32)),
                                        FRIT_OP_MIN, mask);
    return first ? ti_cast(ctx, first, FRIT_I64) : NULL;
  }
  return tc_reduce_keep(ctx, ti_where(ctx, hit, pos, none), FRIT_OP_MIN, mask);
}

/* argmax (argmin) of the 1-D x, staged in parallel parts: each part's first extreme (one kernel
 * for all parts, in parallel, each part's max and search fused while it is in cache), then the
 * first candidate whose value is the whole's extreme, among those and the tail's elements (they
 * are in order: the least of their positions). The candidates' values are read back from x at
 * their positions rather than kept: kept, they were a kernel's output of their own and the
 * search a second pass over x. Positions come from an iota viewed as x is (dims used as values
 * were kernels of their own). NULL, with no error, when x is not staged. */
static frit_tensor *staged_arg_extreme(frit_ctx *ctx, const char *name, frit_tensor *x, bool is_max) {
  frit_tensor *tail, *parts = ti_whole_parts(ctx, x, &tail);
  if (!parts) return NULL;
  const frit_shape *sp = ti_shape(ctx, parts);
  frit_uop *n = ti_shape(ctx, x)->dims[0], *whole = ti_dim_mul(ctx, sp->dims[0], sp->dims[1]);
  frit_uop *zero = ti_dim(ctx, 0);
  frit_tensor *index = ti_iota(ctx, n);
  frit_tensor *in_parts = tail ? ti_shrink(ctx, index, &zero, &whole) : index;
  frit_tensor *part_index = ti_reshape(ctx, in_parts, 2, sp->dims);
  frit_tensor *at = frit_contiguous(ctx, arg_extreme(ctx, name, parts, 1, is_max, part_index));
  at = ti_reshape(ctx, at, 1, sp->dims);
  if (tail && at) {
    frit_tensor *both[2] = {at, ti_shrink(ctx, index, &whole, &n)};
    at = ti_cat(ctx, both, 2, 0);
  }
  if (!at) return NULL;
  /* the candidates as a row: reduced along it, not staged again */
  frit_uop *row[2] = {ti_dim(ctx, 1), ti_shape(ctx, at)->dims[0]};
  at = ti_reshape(ctx, at, 2, row);
  frit_tensor *pm = at ? ti_gather(ctx, x, at, 0) : NULL;
  const bool along[2] = {false, true};
  frit_tensor *m = bcast_like(ctx, name, tc_reduce_keep(ctx, pm, extreme_op(frit_tensor_dtype(x), is_max), along), pm);
  frit_tensor *none = ti_const_i(ctx, FRIT_I64, INT64_MAX, at);
  frit_tensor *first = tc_reduce_keep(ctx, ti_where(ctx, is_extreme(ctx, pm, m), at, none), FRIT_OP_MIN, along);
  frit_uop *one = row[0];
  return ti_reshape(ctx, first, 1, &one);
}

static frit_tensor *argreduce(frit_ctx *ctx, frit_rfunc f, frit_tensor *x, const int *axes, int naxes,
                              int keepdims) {
  const char *name = rfunc_name(f);
  int nd = ti_shape(ctx, x)->ndim;
  frit_tensor *src = x;
  int axis;
  if (naxes == FRIT_ALL_AXES) {
    src = tc_flatten(ctx, x);
    if (!src) return NULL;
    axis = 0;
  } else {
    if (naxes != 1 || !axes)
      return TI_FAIL1(ctx, name, x, "takes exactly one axis or FRIT_ALL_AXES, got %d axes", naxes);
    axis = ti_axis(ctx, name, x, axes[0], nd);
    if (axis < 0) return NULL;
  }
  if (frit_dim_value(ti_shape(ctx, src)->dims[axis]) == 0)
    return TI_FAIL1(ctx, name, x, "attempt to get %s of an empty sequence", name);
  frit_tensor *r = naxes == FRIT_ALL_AXES ? staged_arg_extreme(ctx, name, src, f == FRIT_RF_ARGMAX) : NULL;
  if (!r && ctx->status == FRIT_OK) r = arg_extreme(ctx, name, src, axis, f == FRIT_RF_ARGMAX, NULL);
  if (!r) return NULL;
  if (naxes == FRIT_ALL_AXES) {
    frit_uop *ones[FRIT_MAX_DIMS];
    for (int i = 0; i < nd; i++) ones[i] = ti_dim(ctx, 1);
    return ti_reshape(ctx, r, keepdims ? nd : 0, ones);
  }
  bool mask[FRIT_MAX_DIMS] = {false};
  mask[axis] = true;
  return keepdims ? r : tc_drop(ctx, r, mask);
}

/* mean, var/std and logsumexp: float math in the compute dtype, keepdims result. */
static frit_tensor *float_reduce(frit_ctx *ctx, frit_rfunc f, frit_tensor *x, const bool *mask, double ddof) {
  const char *name = rfunc_name(f);
  frit_dtype cdt = tc_float_compute_dtype(frit_tensor_dtype(x));
  frit_tensor *xs = ti_cast(ctx, x, cdt);
  if (!xs) return NULL;
  if (f == FRIT_RF_LOGSUMEXP) {
    /* as scipy: a non-finite max (all -inf, or +inf, NaN) is replaced by 0 so that exp(x - m)
     * stays defined; the log of the sum then gives -inf / inf / NaN by itself */
    frit_tensor *m = tc_reduce_keep(ctx, xs, FRIT_OP_MAX, mask);
    if (!m) return NULL;
    frit_tensor *finite = ti_alu2(ctx, FRIT_OP_CMPLT, ti_alu1(ctx, FRIT_OP_ABS, m), ti_const_f(ctx, cdt, INFINITY, m));
    /* the shift cancels out: no gradient through it (d lse/dx is exactly softmax(x)) */
    frit_tensor *ms = finite ? ti_stop_gradient(ctx, ti_where(ctx, finite, m, ti_const_f(ctx, cdt, 0.0, m))) : NULL;
    frit_tensor *e = ti_alu1(ctx, FRIT_OP_EXP, tc_bin(ctx, name, FRIT_OP_SUB, xs, ms));
    frit_tensor *lse = ti_alu1(ctx, FRIT_OP_LOG, tc_reduce_keep(ctx, e, FRIT_OP_ADD, mask));
    return lse && ms ? ti_alu2(ctx, FRIT_OP_ADD, lse, ms) : NULL;
  }
  frit_tensor *n = tc_count(ctx, x, mask, cdt);
  frit_tensor *mean = tc_bin(ctx, name, FRIT_OP_FDIV, tc_reduce_keep(ctx, xs, FRIT_OP_ADD, mask), n);
  if (f == FRIT_RF_MEAN || !mean) return mean;
  /* two passes, as numpy: sum((x - mean)^2) / max(n - ddof, 0) */
  frit_tensor *d = tc_bin(ctx, name, FRIT_OP_SUB, xs, mean);
  frit_tensor *ss = d ? tc_reduce_keep(ctx, ti_alu2(ctx, FRIT_OP_MUL, d, d), FRIT_OP_ADD, mask) : NULL;
  frit_tensor *den = n ? ti_alu2(ctx, FRIT_OP_SUB, n, tc_scalar(ctx, cdt, ddof)) : NULL;
  den = den ? ti_alu2(ctx, FRIT_OP_MAX, den, tc_scalar(ctx, cdt, 0.0)) : NULL;
  frit_tensor *var = tc_bin(ctx, name, FRIT_OP_FDIV, ss, den);
  return f == FRIT_RF_STD && var ? ti_alu1(ctx, FRIT_OP_SQRT, var) : var;
}

frit_tensor *frit_reduce(frit_ctx *ctx, frit_rfunc f, frit_tensor *x, const int *axes, int naxes, int keepdims,
                         double ddof) {
  const char *name = rfunc_name(f);
  if (!ti_ok(ctx, name, &x, 1)) return NULL;
  if ((int)f < 0 || f >= FRIT_RF_COUNT_) return TI_FAIL1(ctx, name, x, "unknown reduction %d", (int)f);
  if (frit_dtype_is_complex(frit_tensor_dtype(x)) && f != FRIT_RF_SUM && f != FRIT_RF_PROD && f != FRIT_RF_MEAN &&
      f != FRIT_RF_ANY && f != FRIT_RF_ALL)
    return TI_FAIL1(ctx, name, x, "not supported for complex dtypes (sum, prod, mean, any and all are)");
  if (f == FRIT_RF_ARGMAX || f == FRIT_RF_ARGMIN) return argreduce(ctx, f, x, axes, naxes, keepdims);
  const frit_shape *s = ti_shape(ctx, x);
  if (naxes > 0 && !axes) return TI_FAIL1(ctx, name, x, "%d axes given but the axes array is NULL", naxes);
  bool mask[FRIT_MAX_DIMS] = {false};
  if (ti_axes_mask(ctx, name, x, axes, naxes, s->ndim, mask) < 0) return NULL;
  if (f == FRIT_RF_MAX || f == FRIT_RF_MIN || f == FRIT_RF_LOGSUMEXP)
    for (int i = 0; i < s->ndim; i++)
      if (mask[i] && frit_dim_value(s->dims[i]) == 0)
        return TI_FAIL1(ctx, name, x, "zero-size array to reduction operation %s which has no identity", ufunc_of(f));
  frit_dtype dt = frit_tensor_dtype(x);
  bool is_bool = frit_dtype_is_bool(dt);
  frit_tensor *r = NULL;
  switch (f) {
  case FRIT_RF_SUM: case FRIT_RF_PROD: {
    frit_dtype sdt = tc_sum_dtype(dt);
    frit_tensor *xs = ti_cast(ctx, x, tc_is_half(dt) ? FRIT_F32 : sdt); /* halves accumulate in f32, as numpy */
    r = ti_cast(ctx, tc_reduce_keep(ctx, xs, f == FRIT_RF_SUM ? FRIT_OP_ADD : FRIT_OP_MUL, mask), sdt);
    break;
  }
  case FRIT_RF_MAX: r = tc_reduce_keep(ctx, x, is_bool ? FRIT_OP_OR : FRIT_OP_MAX, mask); break;
  case FRIT_RF_MIN: r = tc_reduce_keep(ctx, x, is_bool ? FRIT_OP_AND : FRIT_OP_MIN, mask); break;
  case FRIT_RF_ANY: case FRIT_RF_ALL: {
    frit_tensor *b = is_bool ? x : ti_alu2(ctx, FRIT_OP_CMPNE, x, ti_const_f(ctx, dt, 0.0, x));
    r = tc_reduce_keep(ctx, b, f == FRIT_RF_ANY ? FRIT_OP_OR : FRIT_OP_AND, mask);
    break;
  }
  case FRIT_RF_MEAN: case FRIT_RF_VAR: case FRIT_RF_STD: case FRIT_RF_LOGSUMEXP:
    r = ti_cast(ctx, float_reduce(ctx, f, x, mask, ddof), tc_float_result_dtype(dt));
    break;
  case FRIT_RF_ARGMAX: case FRIT_RF_ARGMIN: case FRIT_RF_COUNT_: break; /* handled above */
  }
  if (!r) return NULL;
  return keepdims ? r : tc_drop(ctx, r, mask);
}

frit_tensor *frit_cumsum(frit_ctx *ctx, frit_tensor *x, int axis) {
  if (!ti_ok(ctx, "cumsum", &x, 1)) return NULL;
  if (axis == FRIT_NO_AXIS) {
    x = tc_flatten(ctx, x);
    if (!x) return NULL;
    axis = 0;
  } else {
    axis = ti_axis(ctx, "cumsum", x, axis, ti_shape(ctx, x)->ndim);
    if (axis < 0) return NULL;
  }
  frit_dtype dt = frit_tensor_dtype(x), sdt = tc_sum_dtype(dt);
  frit_tensor *xs = ti_cast(ctx, x, tc_is_half(dt) ? FRIT_F32 : sdt);
  return ti_cast(ctx, ti_scan(ctx, xs, FRIT_OP_ADD, axis), sdt);
}
