/* frit_scatter: the functional update behind Python's x.at[idx].set/add/min/max (and the bitwise
 * and/or/xor scatters of frit.scatter), lowered to
 * the tensor-level SCATTER node (a copy kernel, then a sequential update kernel: docs/schedule.md). */
#include "tensor/composite.h"

frit_tensor *frit_scatter(frit_ctx *ctx, frit_tensor *x, frit_tensor *idx, frit_tensor *updates,
                          frit_atomic_op mode) {
  const char *name = "scatter";
  frit_tensor *ts[3] = {x, idx, updates};
  if (!ti_ok(ctx, name, ts, 3)) return NULL;
  if ((int)mode < 0 || mode >= FRIT_ATOMIC_COUNT_)
    return ti_fail(ctx, name, ts, 3, "mode %d is not ADD, MIN, MAX, AND, OR, XOR or XCHG (set)", (int)mode);
  bool bitwise = mode == FRIT_ATOMIC_AND || mode == FRIT_ATOMIC_OR || mode == FRIT_ATOMIC_XOR;
  if (bitwise && frit_dtype_is_float(frit_tensor_dtype(x))) {
    static const char *mn[] = {[FRIT_ATOMIC_AND] = "and", [FRIT_ATOMIC_OR] = "or", [FRIT_ATOMIC_XOR] = "xor"};
    char db[32];
    return ti_fail(ctx, name, ts, 3, "mode %s needs an integer or bool x, not %s", mn[mode],
                   frit_dtype_name(frit_tensor_dtype(x), db, sizeof db));
  }
  const frit_shape *sx = ti_shape(ctx, x), *si = ti_shape(ctx, idx);
  if (sx->ndim < 1) return ti_fail(ctx, name, ts, 3, "cannot scatter into a 0-d tensor");
  if (si->ndim != 1) return ti_fail(ctx, name, ts, 3, "indices must be 1-D");
  if (!frit_dtype_is_int(frit_tensor_dtype(idx))) return ti_fail(ctx, name, ts, 3, "indices must be integers");
  frit_uop *n = sx->dims[0];
  if (frit_dim_value(n) == 0 && frit_dim_value(si->dims[0]) != 0)
    return ti_fail(ctx, name, ts, 3, "cannot scatter into an empty axis");
  /* updates: cast to x's dtype and broadcast to (len(idx),) + x.shape[1:] */
  frit_uop *dims[FRIT_MAX_DIMS];
  dims[0] = si->dims[0];
  for (int k = 1; k < sx->ndim; k++) dims[k] = sx->dims[k];
  frit_tensor *u = ti_broadcast(ctx, name, ti_cast(ctx, updates, frit_tensor_dtype(x)), sx->ndim, dims);
  if (!u) return NULL;
  /* indices as i64, negatives counted from the end, then clamped to [0, n) like take */
  frit_tensor *i = ti_cast(ctx, idx, FRIT_I64);
  if (frit_dim_value(n) != 0) {
    frit_tensor *neg = tc_bin(ctx, name, FRIT_OP_CMPLT, i, tc_scalar(ctx, FRIT_I64, 0));
    frit_tensor *shifted = tc_bin(ctx, name, FRIT_OP_ADD, i, TI_T(n));
    if (!neg || !shifted) return NULL;
    i = ti_where(ctx, neg, shifted, i);
    i = tc_bin(ctx, name, FRIT_OP_MAX, i, tc_scalar(ctx, FRIT_I64, 0));
    i = tc_bin(ctx, name, FRIT_OP_MIN, i, TI_T(ti_dim_sub(ctx, n, ti_dim(ctx, 1))));
  }
  if (!i) return NULL;
  frit_arg a = frit_arg_none();
  a.i0 = mode;
  frit_uop *src[3] = {TI_U(x), TI_U(i), TI_U(u)};
  frit_uop *r = frit_uop_new(ctx, FRIT_OP_SCATTER, TI_U(x)->dtype, src, 3, &a);
  if (!r || !frit_shape_of(ctx, r)) return NULL;
  return TI_T(r);
}
