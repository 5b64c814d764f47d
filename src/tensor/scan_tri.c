/* cumprod (SCAN with MUL, numpy's accumulator dtypes as cumsum) and tril/triu (a mask of the last
 * two axes built from IOTA index tensors, so symbolic shapes work). */
#include "tensor/composite.h"

frit_tensor *frit_cumprod(frit_ctx *ctx, frit_tensor *x, int axis) {
  if (!ti_ok(ctx, "cumprod", &x, 1)) return NULL;
  if (axis == FRIT_NO_AXIS) {
    x = tc_flatten(ctx, x);
    if (!x) return NULL;
    axis = 0;
  } else {
    axis = ti_axis(ctx, "cumprod", x, axis, ti_shape(ctx, x)->ndim);
    if (axis < 0) return NULL;
  }
  frit_dtype dt = frit_tensor_dtype(x), sdt = tc_sum_dtype(dt);
  frit_tensor *xs = ti_cast(ctx, x, tc_is_half(dt) ? FRIT_F32 : sdt);
  return ti_cast(ctx, ti_scan(ctx, xs, FRIT_OP_MUL, axis), sdt);
}

static frit_tensor *tri(frit_ctx *ctx, const char *name, frit_tensor *x, int64_t k, bool upper) {
  if (!ti_ok(ctx, name, &x, 1)) return NULL;
  int nd = ti_shape(ctx, x)->ndim;
  if (nd < 2) return TI_FAIL1(ctx, name, x, "needs an array of at least 2 dimensions, got %d", nd);
  frit_tensor *i = ti_axis_index(ctx, x, nd - 2), *j = ti_axis_index(ctx, x, nd - 1);
  if (!i || !j) return NULL;
  /* tril keeps j - i <= k, triu keeps j - i >= k */
  frit_tensor *d = ti_alu2(ctx, FRIT_OP_SUB, j, i), *kk = ti_const_i(ctx, FRIT_I64, k, d);
  frit_tensor *keep = upper ? ti_alu2(ctx, FRIT_OP_CMPLE, kk, d) : ti_alu2(ctx, FRIT_OP_CMPLE, d, kk);
  return ti_where(ctx, keep, x, ti_const_i(ctx, frit_tensor_dtype(x), 0, x));
}

frit_tensor *frit_tril(frit_ctx *ctx, frit_tensor *x, int64_t k) { return tri(ctx, "tril", x, k, false); }
frit_tensor *frit_triu(frit_ctx *ctx, frit_tensor *x, int64_t k) { return tri(ctx, "triu", x, k, true); }
