/* ONNX reductions (Reduce*, ArgMax/ArgMin), CumSum and TopK. Axes come as an attribute (older
 * opsets) or as a constant input (ReduceSum from 13, the others from 18). */
#include <string.h>

#include "import/onnx/onnx_internal.h"

static frit_tensor *same_dtype(ox_cx *cx, frit_tensor *r, frit_dtype dt) {
  return r && frit_tensor_dtype(r) != dt ? frit_astype(cx->ctx, r, dt) : r;
}

frit_status ox_reduce(ox_cx *cx, const ox_node *n) {
  frit_tensor *x = ox_in(cx, n, 0);
  if (!x) return frit_last_status(cx->ctx);
  frit_ctx *c = cx->ctx;
  int nd = frit_tensor_ndim(x);
  int64_t axes[FRIT_MAX_DIMS];
  int na = ox_axes(cx, n, "axes", 1, axes, FRIT_MAX_DIMS);
  if (na == -2) return frit_last_status(c);
  bool keep = ox_attr_i(n, "keepdims", 1) != 0;
  if (na <= 0 && ox_attr_i(n, "noop_with_empty_axes", 0)) return ox_set_out(cx, n, 0, x);
  int ax[FRIT_MAX_DIMS];
  for (int i = 0; i < na; i++) {
    if (!ox_axis(cx, n, &axes[i], nd)) return frit_last_status(c);
    ax[i] = (int)axes[i];
  }
  int cnt = na <= 0 ? FRIT_ALL_AXES : na;
  if (nd == 0) return ox_set_out(cx, n, 0, x);
  const char *op = n->op_type;
  frit_dtype dt = frit_tensor_dtype(x);
  frit_tensor *r = NULL;
  if (!strcmp(op, "ReduceSum")) r = frit_reduce(c, FRIT_RF_SUM, x, ax, cnt, keep, 0);
  else if (!strcmp(op, "ReduceMean")) r = frit_reduce(c, FRIT_RF_MEAN, x, ax, cnt, keep, 0);
  else if (!strcmp(op, "ReduceMax")) r = frit_reduce(c, FRIT_RF_MAX, x, ax, cnt, keep, 0);
  else if (!strcmp(op, "ReduceMin")) r = frit_reduce(c, FRIT_RF_MIN, x, ax, cnt, keep, 0);
  else if (!strcmp(op, "ReduceProd")) r = frit_reduce(c, FRIT_RF_PROD, x, ax, cnt, keep, 0);
  else if (!strcmp(op, "ReduceL1")) r = frit_reduce(c, FRIT_RF_SUM, frit_unary_t(c, FRIT_UF_ABS, x), ax, cnt, keep, 0);
  else if (!strcmp(op, "ReduceSumSquare") || !strcmp(op, "ReduceL2")) {
    r = frit_reduce(c, FRIT_RF_SUM, frit_binary_t(c, FRIT_BF_MUL, x, x), ax, cnt, keep, 0);
    if (!strcmp(op, "ReduceL2")) r = frit_unary_t(c, FRIT_UF_SQRT, same_dtype(cx, r, frit_dtype_is_float(dt) ? dt : FRIT_F64));
  } else if (!strcmp(op, "ReduceLogSum")) {
    r = frit_unary_t(c, FRIT_UF_LOG, frit_reduce(c, FRIT_RF_SUM, x, ax, cnt, keep, 0));
  } else if (!strcmp(op, "ReduceLogSumExp")) {
    r = frit_reduce(c, FRIT_RF_LOGSUMEXP, x, ax, cnt, keep, 0);
  }
  return ox_set_out(cx, n, 0, same_dtype(cx, r, dt));
}

frit_status ox_argminmax(ox_cx *cx, const ox_node *n) {
  frit_tensor *x = ox_in(cx, n, 0);
  if (!x) return frit_last_status(cx->ctx);
  frit_ctx *c = cx->ctx;
  int64_t axis = ox_attr_i(n, "axis", 0);
  if (!ox_axis(cx, n, &axis, frit_tensor_ndim(x))) return frit_last_status(c);
  bool keep = ox_attr_i(n, "keepdims", 1) != 0, last = ox_attr_i(n, "select_last_index", 0) != 0;
  frit_rfunc f = !strcmp(n->op_type, "ArgMax") ? FRIT_RF_ARGMAX : FRIT_RF_ARGMIN;
  int a = (int)axis;
  if (!last) return ox_set_out(cx, n, 0, frit_reduce(c, f, x, &a, 1, keep, 0));
  /* the last extreme is the first one of the flipped axis */
  int64_t dim = frit_tensor_dim_static(x, a);
  if (dim < 0) return ox_fail(cx, n, "select_last_index on a symbolic axis");
  frit_tensor *r = frit_reduce(c, f, frit_flip(c, x, &a, 1), &a, 1, keep, 0);
  return ox_set_out(cx, n, 0, frit_binary_t(c, FRIT_BF_SUB, frit_scalar_i(c, FRIT_I64, dim - 1), r));
}

frit_status ox_cumsum(ox_cx *cx, const ox_node *n) {
  frit_tensor *x = ox_in(cx, n, 0);
  if (!x) return frit_last_status(cx->ctx);
  frit_ctx *c = cx->ctx;
  const ox_const *ac = ox_in_const(cx, n, 1);
  if (!ac) return frit_last_status(c);
  int64_t *av = ox_const_ints(cx, ac);
  if (!av || ac->n != 1) return ox_fail(cx, n, "axis must be one integer");
  int64_t axis = av[0];
  int nd = frit_tensor_ndim(x);
  if (!ox_axis(cx, n, &axis, nd)) return frit_last_status(c);
  int a = (int)axis;
  bool rev = ox_attr_i(n, "reverse", 0), excl = ox_attr_i(n, "exclusive", 0);
  frit_tensor *r = rev ? frit_flip(c, x, &a, 1) : x;
  if (excl) {
    /* shifted by one along the axis: a leading zero, the last element dropped */
    int64_t b[FRIT_MAX_DIMS] = {0}, e[FRIT_MAX_DIMS] = {0}, sb[FRIT_MAX_DIMS], se[FRIT_MAX_DIMS], st[FRIT_MAX_DIMS];
    for (int d = 0; d < nd; d++) sb[d] = se[d] = FRIT_SLICE_DEFAULT, st[d] = 1;
    b[a] = 1, se[a] = -1;
    r = frit_slice(c, frit_pad(c, r, b, e, FRIT_PAD_CONSTANT, 0), sb, se, st);
  }
  r = same_dtype(cx, frit_cumsum(c, r, a), frit_tensor_dtype(x));
  if (rev) r = frit_flip(c, r, &a, 1);
  return ox_set_out(cx, n, 0, r);
}

frit_status ox_topk(ox_cx *cx, const ox_node *n) {
  frit_tensor *x = ox_in(cx, n, 0);
  if (!x) return frit_last_status(cx->ctx);
  frit_ctx *c = cx->ctx;
  int64_t k = ox_attr_i(n, "k", -1);
  if (ox_has_in(n, 1)) {
    const ox_const *kc = ox_in_const(cx, n, 1);
    if (!kc) return frit_last_status(c);
    int64_t *kv = ox_const_ints(cx, kc);
    if (!kv || kc->n != 1) return ox_fail(cx, n, "K must be one integer");
    k = kv[0];
  }
  int nd = frit_tensor_ndim(x);
  int64_t axis = ox_attr_i(n, "axis", -1);
  if (!ox_axis(cx, n, &axis, nd)) return frit_last_status(c);
  int64_t dim = frit_tensor_dim_static(x, (int)axis);
  if (k < 0 || (dim >= 0 && k > dim)) return ox_fail(cx, n, "K = %lld for an axis of %lld", (long long)k, (long long)dim);
  /* a stable sort keeps equal values in index order, which is ONNX's tie rule both ways */
  frit_tensor *idx = frit_argsort(c, x, (int)axis, ox_attr_i(n, "largest", 1) != 0);
  int64_t b[FRIT_MAX_DIMS], e[FRIT_MAX_DIMS], s[FRIT_MAX_DIMS];
  for (int d = 0; d < nd; d++) b[d] = e[d] = FRIT_SLICE_DEFAULT, s[d] = 1;
  b[axis] = 0, e[axis] = k;
  idx = frit_slice(c, idx, b, e, s);
  frit_status st = ox_set_out(cx, n, 0, frit_take_along_axis(c, x, idx, (int)axis));
  return st ? st : ox_set_out(cx, n, 1, idx);
}
