/* Less common ONNX ops built from frit's tensor ops: the losses (NegativeLogLikelihoodLoss,
 * SoftmaxCrossEntropyLoss), window functions, EyeLike, Shrink, LRN, MeanVarianceNormalization,
 * Det, (De)QuantizeLinear, the index ops GatherND, ScatterElements, ScatterND, ReverseSequence,
 * Compress and MaxUnpool, and DFT. */
#include <math.h>
#include <string.h>

#include "import/onnx/onnx_internal.h"

#define IN_OR_FAIL(x, k)                                                                          \
  frit_tensor *x = ox_in(cx, n, k);                                                               \
  if (!x) return frit_last_status(cx->ctx)

static frit_tensor *sc(ox_cx *cx, frit_tensor *like, double v) {
  return frit_scalar_f(cx->ctx, frit_tensor_dtype(like), v);
}
static frit_tensor *bin(ox_cx *cx, frit_bfunc f, frit_tensor *a, frit_tensor *b) {
  return frit_binary_t(cx->ctx, f, a, b);
}

/* loss[n, d...] = -logp[n, target, d...] * w[target] (0 where target == ignore_index), reduced. */
static frit_tensor *nll(ox_cx *cx, const ox_node *n, frit_tensor *logp, frit_tensor *target, frit_tensor *weight) {
  frit_ctx *c = cx->ctx;
  frit_tensor *t = frit_astype(c, target, FRIT_I64);
  frit_tensor *mask = NULL;
  const FritOnnx__AttributeProto *ig = ox_attr(n, "ignore_index");
  if (ig) {
    mask = bin(cx, FRIT_BF_NE, t, frit_scalar_i(c, FRIT_I64, ig->i));
    t = frit_where(c, mask, t, frit_scalar_i(c, FRIT_I64, 0));
  }
  frit_tensor *g = frit_take_along_axis(c, logp, frit_unsqueeze(c, t, 1), 1);
  g = frit_squeeze(c, g, (int[]){1}, 1);
  frit_tensor *w = weight ? frit_take(c, weight, t, 0) : bin(cx, FRIT_BF_ADD, bin(cx, FRIT_BF_MUL, g, sc(cx, g, 0)), sc(cx, g, 1));
  if (mask) w = frit_where(c, mask, w, sc(cx, g, 0));
  frit_tensor *loss = frit_unary_t(c, FRIT_UF_NEG, bin(cx, FRIT_BF_MUL, g, w));
  const char *red = ox_attr_s(cx, n, "reduction", "mean");
  if (!strcmp(red, "none")) return loss;
  frit_tensor *sum = frit_reduce(c, FRIT_RF_SUM, loss, NULL, FRIT_ALL_AXES, 0, 0);
  if (!strcmp(red, "sum")) return sum;
  if (strcmp(red, "mean")) {
    ox_fail(cx, n, "reduction '%s' is not supported", red);
    return NULL;
  }
  return bin(cx, FRIT_BF_TRUEDIV, sum, frit_reduce(c, FRIT_RF_SUM, w, NULL, FRIT_ALL_AXES, 0, 0));
}

frit_status ox_nll_loss(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  IN_OR_FAIL(t, 1);
  frit_tensor *w = NULL;
  if (ox_has_in(n, 2) && !(w = ox_in(cx, n, 2))) return frit_last_status(cx->ctx);
  frit_tensor *r = nll(cx, n, x, t, w);
  return r ? ox_set_out(cx, n, 0, frit_astype(cx->ctx, r, frit_tensor_dtype(x))) : frit_last_status(cx->ctx);
}

frit_status ox_sce_loss(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  IN_OR_FAIL(t, 1);
  frit_tensor *w = NULL;
  if (ox_has_in(n, 2) && !(w = ox_in(cx, n, 2))) return frit_last_status(cx->ctx);
  frit_tensor *logp = frit_log_softmax(cx->ctx, x, 1);
  frit_tensor *r = nll(cx, n, logp, t, w);
  if (!r) return frit_last_status(cx->ctx);
  frit_status st = ox_set_out(cx, n, 0, frit_astype(cx->ctx, r, frit_tensor_dtype(x)));
  return st ? st : ox_set_out(cx, n, 1, logp);
}

frit_status ox_window(ox_cx *cx, const ox_node *n) {
  const ox_const *sz = ox_in_const(cx, n, 0);
  if (!sz) return frit_last_status(cx->ctx);
  int64_t *sv = ox_const_ints(cx, sz);
  if (!sv || sz->n != 1 || sv[0] < 0) return ox_fail(cx, n, "size must be one non-negative integer");
  frit_dtype dt = ox_dtype((int32_t)ox_attr_i(n, "output_datatype", 1));
  if (dt == FRIT_VOID) return ox_fail(cx, n, "unsupported output_datatype");
  int64_t len = sv[0];
  double den = ox_attr_i(n, "periodic", 1) ? (double)len : (double)(len - 1);
  frit_ctx *c = cx->ctx;
  frit_tensor *k = frit_arange(c, 0, (double)len, 1, FRIT_F64);
  frit_tensor *ph = bin(cx, FRIT_BF_MUL, k, frit_scalar_f(c, FRIT_F64, 2 * 3.14159265358979323846 / den));
  frit_tensor *cos1 = frit_unary_t(c, FRIT_UF_COS, ph), *r;
  if (!strcmp(n->op_type, "HannWindow")) {
    r = bin(cx, FRIT_BF_SUB, frit_scalar_f(c, FRIT_F64, 0.5), bin(cx, FRIT_BF_MUL, cos1, frit_scalar_f(c, FRIT_F64, 0.5)));
  } else if (!strcmp(n->op_type, "HammingWindow")) {
    double a0 = 25.0 / 46;
    r = bin(cx, FRIT_BF_SUB, frit_scalar_f(c, FRIT_F64, a0), bin(cx, FRIT_BF_MUL, cos1, frit_scalar_f(c, FRIT_F64, 1 - a0)));
  } else {
    frit_tensor *cos2 = frit_unary_t(c, FRIT_UF_COS, bin(cx, FRIT_BF_MUL, ph, frit_scalar_f(c, FRIT_F64, 2)));
    r = bin(cx, FRIT_BF_ADD, bin(cx, FRIT_BF_SUB, frit_scalar_f(c, FRIT_F64, 0.42),
                                 bin(cx, FRIT_BF_MUL, cos1, frit_scalar_f(c, FRIT_F64, 0.5))),
            bin(cx, FRIT_BF_MUL, cos2, frit_scalar_f(c, FRIT_F64, 0.08)));
  }
  return ox_set_out(cx, n, 0, frit_astype(c, r, dt));
}

frit_status ox_eyelike(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  if (frit_tensor_ndim(x) != 2) return ox_fail(cx, n, "input must be 2-D");
  frit_dtype dt = frit_tensor_dtype(x);
  if (ox_attr(n, "dtype")) dt = ox_dtype((int32_t)ox_attr_i(n, "dtype", 1));
  if (dt == FRIT_VOID) return ox_fail(cx, n, "unsupported dtype");
  return ox_set_out(cx, n, 0, frit_eye(cx->ctx, frit_tensor_dim_static(x, 0), frit_tensor_dim_static(x, 1),
                                       ox_attr_i(n, "k", 0), dt));
}

frit_status ox_shrink(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  frit_ctx *c = cx->ctx;
  double l = ox_attr_f(n, "lambd", 0.5), b = ox_attr_f(n, "bias", 0);
  frit_tensor *xf = frit_astype(c, x, FRIT_F64);
  frit_tensor *lo = bin(cx, FRIT_BF_LT, xf, sc(cx, xf, -l)), *hi = bin(cx, FRIT_BF_GT, xf, sc(cx, xf, l));
  frit_tensor *r = frit_where(c, lo, bin(cx, FRIT_BF_ADD, xf, sc(cx, xf, b)),
                              frit_where(c, hi, bin(cx, FRIT_BF_SUB, xf, sc(cx, xf, b)), sc(cx, xf, 0)));
  return ox_set_out(cx, n, 0, frit_astype(c, r, frit_tensor_dtype(x)));
}

frit_status ox_lrn(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  frit_ctx *c = cx->ctx;
  int nd = frit_tensor_ndim(x);
  int64_t size = ox_attr_i(n, "size", 0), ch = nd >= 2 ? frit_tensor_dim_static(x, 1) : -1;
  if (size <= 0 || ch < 0) return ox_fail(cx, n, "needs size > 0 and a static channel axis");
  int64_t before[FRIT_MAX_DIMS] = {0}, after[FRIT_MAX_DIMS] = {0};
  before[1] = (size - 1) / 2, after[1] = size - 1 - (size - 1) / 2;
  frit_tensor *sq = frit_pad(c, bin(cx, FRIT_BF_MUL, x, x), before, after, FRIT_PAD_CONSTANT, 0), *sum = NULL;
  for (int64_t k = 0; k < size; k++) {
    int64_t b[FRIT_MAX_DIMS], e[FRIT_MAX_DIMS], s[FRIT_MAX_DIMS];
    for (int d = 0; d < nd; d++) b[d] = e[d] = FRIT_SLICE_DEFAULT, s[d] = 1;
    b[1] = k, e[1] = k + ch;
    frit_tensor *part = frit_slice(c, sq, b, e, s);
    sum = sum ? bin(cx, FRIT_BF_ADD, sum, part) : part;
  }
  frit_tensor *den = bin(cx, FRIT_BF_ADD, sc(cx, x, ox_attr_f(n, "bias", 1)),
                         bin(cx, FRIT_BF_MUL, sc(cx, x, ox_attr_f(n, "alpha", 1e-4) / (double)size), sum));
  den = bin(cx, FRIT_BF_POW, den, sc(cx, x, ox_attr_f(n, "beta", 0.75)));
  return ox_set_out(cx, n, 0, bin(cx, FRIT_BF_TRUEDIV, x, den));
}

frit_status ox_mvn(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  frit_ctx *c = cx->ctx;
  int64_t axes[FRIT_MAX_DIMS] = {0, 2, 3};
  int na = ox_axes(cx, n, "axes", -1, axes, FRIT_MAX_DIMS), ax[FRIT_MAX_DIMS];
  if (na == -2) return frit_last_status(c);
  if (na < 0) na = 3;
  for (int i = 0; i < na; i++) {
    if (!ox_axis(cx, n, &axes[i], frit_tensor_ndim(x))) return frit_last_status(c);
    ax[i] = (int)axes[i];
  }
  frit_tensor *mean = frit_reduce(c, FRIT_RF_MEAN, x, ax, na, 1, 0);
  frit_tensor *xc = bin(cx, FRIT_BF_SUB, x, mean);
  frit_tensor *var = frit_reduce(c, FRIT_RF_MEAN, bin(cx, FRIT_BF_MUL, xc, xc), ax, na, 1, 0);
  frit_tensor *den = bin(cx, FRIT_BF_ADD, frit_unary_t(c, FRIT_UF_SQRT, var), sc(cx, x, 1e-9));
  return ox_set_out(cx, n, 0, bin(cx, FRIT_BF_TRUEDIV, xc, den));
}

frit_status ox_det(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  frit_tensor *r = frit_linalg_det(cx->ctx, x);
  return ox_set_out(cx, n, 0, r ? frit_astype(cx->ctx, r, frit_tensor_dtype(x)) : NULL);
}

/* A per-axis parameter (1-D of x's dim at axis) shaped to broadcast against x; scalars as is. */
static frit_tensor *along_axis(ox_cx *cx, const ox_node *n, frit_tensor *p, frit_tensor *x) {
  if (frit_tensor_ndim(p) == 0 || frit_tensor_ndim(x) <= 1) return p;
  int nd = frit_tensor_ndim(x);
  int64_t axis = ox_attr_i(n, "axis", 1), dims[FRIT_MAX_DIMS];
  if (!ox_axis(cx, n, &axis, nd)) return NULL;
  for (int d = 0; d < nd; d++) dims[d] = d == axis ? -1 : 1;
  return frit_reshape(cx->ctx, p, nd, dims);
}

frit_status ox_dequantize(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  IN_OR_FAIL(scale, 1);
  frit_ctx *c = cx->ctx;
  frit_dtype ft = frit_tensor_dtype(scale);
  frit_tensor *v = frit_astype(c, x, ft);
  if (ox_has_in(n, 2)) {
    IN_OR_FAIL(zp, 2);
    v = bin(cx, FRIT_BF_SUB, v, frit_astype(c, along_axis(cx, n, zp, x), ft));
  }
  return ox_set_out(cx, n, 0, bin(cx, FRIT_BF_MUL, v, along_axis(cx, n, scale, x)));
}

frit_status ox_quantize(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  IN_OR_FAIL(scale, 1);
  frit_ctx *c = cx->ctx;
  frit_dtype to = FRIT_U8;
  frit_tensor *zp = NULL;
  if (ox_has_in(n, 2)) {
    if (!(zp = ox_in(cx, n, 2))) return frit_last_status(c);
    to = frit_tensor_dtype(zp);
  }
  if (to != FRIT_U8 && to != FRIT_I8 && to != FRIT_U16 && to != FRIT_I16)
    return ox_fail(cx, n, "quantizing to this dtype is not supported");
  frit_tensor *xf = frit_astype(c, x, FRIT_F32);
  frit_tensor *q = frit_unary_t(c, FRIT_UF_RINT, bin(cx, FRIT_BF_TRUEDIV, xf, frit_astype(c, along_axis(cx, n, scale, x), FRIT_F32)));
  if (zp) q = bin(cx, FRIT_BF_ADD, q, frit_astype(c, along_axis(cx, n, zp, x), FRIT_F32));
  double lo = to == FRIT_U8 || to == FRIT_U16 ? 0 : to == FRIT_I8 ? -128 : -32768;
  double hi = to == FRIT_U8 ? 255 : to == FRIT_I8 ? 127 : to == FRIT_U16 ? 65535 : 32767;
  q = bin(cx, FRIT_BF_MINIMUM, bin(cx, FRIT_BF_MAXIMUM, q, sc(cx, q, lo)), sc(cx, q, hi));
  return ox_set_out(cx, n, 0, frit_astype(c, q, to));
}

/* The C-order strides of x's static shape; false (with an error) for symbolic dims. */
static bool strides_of(ox_cx *cx, const ox_node *n, frit_tensor *x, int64_t *dims, int64_t *strides) {
  int nd = frit_tensor_ndim(x);
  int64_t s = 1;
  for (int d = nd - 1; d >= 0; d--) {
    dims[d] = frit_tensor_dim_static(x, d);
    if (dims[d] < 0) return ox_fail(cx, n, "symbolic dims are not supported"), false;
    strides[d] = s, s *= dims[d];
  }
  return true;
}

/* Index into flattened x from idx[..., k] (last axis: k coordinates of x's leading axes), as
 * GatherND/ScatterND address it (negative coordinates count from the end). */
static frit_tensor *nd_offsets(ox_cx *cx, frit_tensor *idx, const int64_t *dims, const int64_t *strides, int k) {
  frit_ctx *c = cx->ctx;
  int ni = frit_tensor_ndim(idx);
  frit_tensor *off = NULL;
  for (int j = 0; j < k; j++) {
    frit_tensor *cj = frit_take(c, frit_astype(c, idx, FRIT_I64), frit_scalar_i(c, FRIT_I64, j), ni - 1);
    cj = frit_where(c, bin(cx, FRIT_BF_LT, cj, frit_scalar_i(c, FRIT_I64, 0)),
                    bin(cx, FRIT_BF_ADD, cj, frit_scalar_i(c, FRIT_I64, dims[j])), cj);
    cj = bin(cx, FRIT_BF_MUL, cj, frit_scalar_i(c, FRIT_I64, strides[j]));
    off = off ? bin(cx, FRIT_BF_ADD, off, cj) : cj;
  }
  return off;
}

frit_status ox_gather_nd(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  IN_OR_FAIL(idx, 1);
  if (ox_attr_i(n, "batch_dims", 0)) return ox_fail(cx, n, "batch_dims is not supported");
  frit_ctx *c = cx->ctx;
  int nd = frit_tensor_ndim(x), ni = frit_tensor_ndim(idx);
  int64_t dims[FRIT_MAX_DIMS], strides[FRIT_MAX_DIMS], k = ni ? frit_tensor_dim_static(idx, ni - 1) : -1;
  if (!strides_of(cx, n, x, dims, strides)) return frit_last_status(c);
  if (k < 1 || k > nd) return ox_fail(cx, n, "bad index depth %lld", (long long)k);
  /* rows of x's trailing axes, picked by the flattened leading-axes offset */
  int64_t rows = 1, tail[FRIT_MAX_DIMS], out[FRIT_MAX_DIMS];
  for (int d = 0; d < k; d++) rows *= dims[d];
  int nt = 0;
  for (int d = (int)k; d < nd; d++) tail[nt++] = dims[d];
  int64_t rdims[FRIT_MAX_DIMS] = {rows};
  for (int d = 0; d < nt; d++) rdims[1 + d] = tail[d];
  frit_tensor *xr = frit_reshape(c, x, 1 + nt, rdims);
  /* the leading axes' strides in rows (x's strides over the row size, which is 0 for an empty tail:
   * a fuzzed GatherND on data (2, 2, 0) divided by it) */
  int64_t rstr[FRIT_MAX_DIMS];
  int64_t row = 1;
  for (int d = (int)k - 1; d >= 0; d--) rstr[d] = row, row *= dims[d];
  frit_tensor *off = nd_offsets(cx, idx, dims, rstr, (int)k);
  frit_tensor *r = frit_take(c, xr, off, 0);
  int no = 0;
  for (int d = 0; d < ni - 1; d++) out[no++] = frit_tensor_dim_static(idx, d);
  for (int d = 0; d < nt; d++) out[no++] = tail[d];
  return ox_set_out(cx, n, 0, r ? frit_reshape(c, r, no, out) : NULL);
}

static bool scatter_mode(ox_cx *cx, const ox_node *n, frit_atomic_op *mode) {
  const char *red = ox_attr_s(cx, n, "reduction", "none");
  if (!strcmp(red, "none")) *mode = FRIT_ATOMIC_XCHG;
  else if (!strcmp(red, "add")) *mode = FRIT_ATOMIC_ADD;
  else if (!strcmp(red, "min")) *mode = FRIT_ATOMIC_MIN;
  else if (!strcmp(red, "max")) *mode = FRIT_ATOMIC_MAX;
  else return ox_fail(cx, n, "reduction '%s' is not supported", red), false;
  return true;
}

frit_status ox_scatter_elements(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  IN_OR_FAIL(idx, 1);
  IN_OR_FAIL(upd, 2);
  frit_ctx *c = cx->ctx;
  frit_atomic_op mode;
  if (!scatter_mode(cx, n, &mode)) return frit_last_status(c);
  int nd = frit_tensor_ndim(x);
  int64_t axis = ox_attr_i(n, "axis", 0), dims[FRIT_MAX_DIMS], strides[FRIT_MAX_DIMS];
  if (!ox_axis(cx, n, &axis, nd) || !strides_of(cx, n, x, dims, strides)) return frit_last_status(c);
  if (frit_tensor_ndim(idx) != nd) return ox_fail(cx, n, "indices must have the data's rank");
  /* the flat offset of each update: its own position, with the index along axis */
  frit_uop *idims[FRIT_MAX_DIMS];
  for (int d = 0; d < nd; d++) idims[d] = frit_tensor_dim(idx, d);
  frit_tensor *pos[FRIT_MAX_DIMS];
  if (frit_indices(c, nd, idims, pos)) return ox_fail_frit(cx, n);
  frit_tensor *ia = frit_astype(c, idx, FRIT_I64), *off = NULL;
  ia = frit_where(c, bin(cx, FRIT_BF_LT, ia, frit_scalar_i(c, FRIT_I64, 0)),
                  bin(cx, FRIT_BF_ADD, ia, frit_scalar_i(c, FRIT_I64, dims[axis])), ia);
  for (int d = 0; d < nd; d++) {
    frit_tensor *t = bin(cx, FRIT_BF_MUL, d == axis ? ia : pos[d], frit_scalar_i(c, FRIT_I64, strides[d]));
    off = off ? bin(cx, FRIT_BF_ADD, off, t) : t;
  }
  int64_t total = nd ? strides[0] * dims[0] : 1;
  frit_tensor *flat = frit_reshape(c, x, 1, &total);
  frit_tensor *r = frit_scatter(c, flat, frit_reshape(c, off, 1, (int64_t[]){-1}),
                                frit_reshape(c, upd, 1, (int64_t[]){-1}), mode);
  return ox_set_out(cx, n, 0, r ? frit_reshape(c, r, nd, dims) : NULL);
}

frit_status ox_scatter_nd(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  IN_OR_FAIL(idx, 1);
  IN_OR_FAIL(upd, 2);
  frit_ctx *c = cx->ctx;
  frit_atomic_op mode;
  if (!scatter_mode(cx, n, &mode)) return frit_last_status(c);
  int nd = frit_tensor_ndim(x), ni = frit_tensor_ndim(idx);
  int64_t dims[FRIT_MAX_DIMS], strides[FRIT_MAX_DIMS], k = ni ? frit_tensor_dim_static(idx, ni - 1) : -1;
  if (!strides_of(cx, n, x, dims, strides)) return frit_last_status(c);
  if (k < 1 || k > nd) return ox_fail(cx, n, "bad index depth %lld", (long long)k);
  for (int d = 0; d < nd; d++)
    if (dims[d] == 0) return ox_set_out(cx, n, 0, x); /* no elements: nothing to update (and zero strides) */
  int64_t rows = 1, rdims[FRIT_MAX_DIMS], rstr[FRIT_MAX_DIMS];
  for (int d = 0; d < k; d++) rows *= dims[d];
  rdims[0] = rows;
  int nr = 1;
  for (int d = (int)k; d < nd; d++) rdims[nr++] = dims[d];
  for (int d = 0; d < k; d++) rstr[d] = strides[d] / (nd > k ? strides[k - 1] : 1);
  frit_tensor *off = frit_reshape(c, nd_offsets(cx, idx, dims, rstr, (int)k), 1, (int64_t[]){-1});
  int64_t udims[FRIT_MAX_DIMS];
  udims[0] = -1;
  for (int d = 1; d < nr; d++) udims[d] = rdims[d];
  frit_tensor *r = frit_scatter(c, frit_reshape(c, x, nr, rdims), off, frit_reshape(c, upd, nr, udims), mode);
  return ox_set_out(cx, n, 0, r ? frit_reshape(c, r, nd, dims) : NULL);
}

/* y[t, b] = x[len[b] - 1 - t, b] for t < len[b], else x[t, b] (time and batch axes as given). */
frit_status ox_reverse_sequence(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  IN_OR_FAIL(lens, 1);
  frit_ctx *c = cx->ctx;
  int nd = frit_tensor_ndim(x);
  int64_t ta = ox_attr_i(n, "time_axis", 0), ba = ox_attr_i(n, "batch_axis", 1), shape[FRIT_MAX_DIMS];
  if (!ox_axis(cx, n, &ta, nd) || !ox_axis(cx, n, &ba, nd)) return frit_last_status(c);
  if (ta == ba) return ox_fail(cx, n, "time_axis equals batch_axis");
  frit_uop *dims[FRIT_MAX_DIMS];
  frit_tensor *pos[FRIT_MAX_DIMS];
  for (int d = 0; d < nd; d++) dims[d] = frit_tensor_dim(x, d), shape[d] = d == ba ? -1 : 1;
  if (frit_indices(c, nd, dims, pos)) return ox_fail_frit(cx, n);
  frit_tensor *t = pos[ta], *len = frit_reshape(c, frit_astype(c, lens, FRIT_I64), nd, shape);
  frit_tensor *src = frit_where(c, bin(cx, FRIT_BF_LT, t, len),
                                bin(cx, FRIT_BF_SUB, bin(cx, FRIT_BF_SUB, len, frit_scalar_i(c, FRIT_I64, 1)), t), t);
  return ox_set_out(cx, n, 0, frit_take_along_axis(c, x, src, (int)ta));
}

/* Compress with a build-time condition: the selected positions become constant indices. */
frit_status ox_compress(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  frit_ctx *c = cx->ctx;
  const ox_const *cond = ox_in_const(cx, n, 1);
  if (!cond) return frit_last_status(c);
  int64_t *cv = ox_const_ints(cx, cond);
  if (!cv) return ox_fail_frit(cx, n);
  const FritOnnx__AttributeProto *ax = ox_attr(n, "axis");
  int64_t axis = ax ? ax->i : 0;
  if (!ax) x = frit_reshape(c, x, 1, (int64_t[]){-1});
  if (!x || !ox_axis(cx, n, &axis, frit_tensor_ndim(x))) return frit_last_status(c);
  int64_t dim = frit_tensor_dim_static(x, (int)axis), cnt = 0;
  if (dim < 0) return ox_fail(cx, n, "symbolic axis");
  if (cond->n > dim) return ox_fail(cx, n, "condition longer than the axis");
  for (int64_t i = 0; i < cond->n; i++) cnt += cv[i] != 0;
  ox_const *idx = ox_const_new(cx, FRIT_I64, 1, &cnt);
  if (!idx) return ox_fail(cx, n, "out of memory");
  for (int64_t i = 0, k = 0; i < cond->n; i++)
    if (cv[i]) ((int64_t *)idx->data)[k++] = i;
  return ox_set_out(cx, n, 0, frit_take(c, x, ox_const_tensor(cx, idx), (int)axis));
}

/* MaxUnpool: X's values scattered to the flat positions I gives, in zeros of the output shape. */
frit_status ox_maxunpool(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  IN_OR_FAIL(idx, 1);
  frit_ctx *c = cx->ctx;
  int nd = frit_tensor_ndim(x), nsp = nd - 2;
  int64_t out[FRIT_MAX_DIMS], want[FRIT_MAX_DIMS], total = 1;
  if (nsp < 1) return ox_fail(cx, n, "X must have spatial dims");
  /* the indices address the default shape; a larger output_shape pads it at the end */
  const int64_t *k, *s, *p;
  int nk = ox_attr_ints(n, "kernel_shape", &k), ns = ox_attr_ints(n, "strides", &s), np = ox_attr_ints(n, "pads", &p);
  if (nk != nsp || (ns >= 0 && ns != nsp) || (np >= 0 && np != 2 * nsp)) return ox_fail(cx, n, "bad kernel_shape, strides or pads");
  out[0] = frit_tensor_dim_static(x, 0), out[1] = frit_tensor_dim_static(x, 1);
  for (int i = 0; i < nsp; i++)
    out[2 + i] = (frit_tensor_dim_static(x, 2 + i) - 1) * (ns >= 0 ? s[i] : 1) - (np >= 0 ? p[i] + p[i + nsp] : 0) + k[i];
  memcpy(want, out, sizeof out);
  if (ox_has_in(n, 2)) {
    const ox_const *os = ox_in_const(cx, n, 2);
    int64_t *ov = os ? ox_const_ints(cx, os) : NULL;
    if (!ov || os->n != nd) return frit_last_status(c) ? frit_last_status(c) : ox_fail(cx, n, "bad output_shape");
    for (int d = 0; d < nd; d++)
      if (ov[d] < out[d]) return ox_fail(cx, n, "output_shape smaller than the unpooled shape");
    memcpy(want, ov, (size_t)nd * sizeof *want);
  }
  for (int d = 0; d < nd; d++) {
    if (out[d] < 0) return ox_fail(cx, n, "bad output shape");
    total *= out[d];
  }
  frit_tensor *flat = frit_zeros(c, frit_tensor_dtype(x), 1, &total);
  frit_tensor *r = frit_scatter(c, flat, frit_reshape(c, idx, 1, (int64_t[]){-1}), frit_reshape(c, x, 1, (int64_t[]){-1}),
                                FRIT_ATOMIC_XCHG);
  int64_t before[FRIT_MAX_DIMS] = {0}, after[FRIT_MAX_DIMS];
  for (int d = 0; d < nd; d++) after[d] = want[d] - out[d];
  if (r) r = frit_pad(c, frit_reshape(c, r, nd, out), before, after, FRIT_PAD_CONSTANT, 0);
  return ox_set_out(cx, n, 0, r);
}

/* DFT along axis as two matmuls with host-built cosine and sine matrices (n x K). */
frit_status ox_dft(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  frit_ctx *c = cx->ctx;
  int nd = frit_tensor_ndim(x);
  int64_t axis = ox_attr_i(n, "axis", 1);
  if (ox_has_in(n, 2)) {
    const ox_const *ac = ox_in_const(cx, n, 2);
    int64_t *av = ac ? ox_const_ints(cx, ac) : NULL;
    if (!av || ac->n != 1) return frit_last_status(c) ? frit_last_status(c) : ox_fail(cx, n, "bad axis");
    axis = av[0];
  }
  if (nd < 2 || !ox_axis(cx, n, &axis, nd - 1)) return frit_last_status(c) ? frit_last_status(c) : ox_fail(cx, n, "rank");
  int64_t len = frit_tensor_dim_static(x, (int)axis), comp = frit_tensor_dim_static(x, nd - 1);
  if (len <= 0 || (comp != 1 && comp != 2)) return ox_fail(cx, n, "the last axis must hold 1 (real) or 2 (complex) parts");
  if (ox_has_in(n, 1)) {
    const ox_const *dl = ox_in_const(cx, n, 1);
    int64_t *dv = dl ? ox_const_ints(cx, dl) : NULL;
    if (!dv || dl->n != 1 || dv[0] != len) return ox_fail(cx, n, "dft_length other than the signal length is not supported");
  }
  bool inv = ox_attr_i(n, "inverse", 0) != 0, one = ox_attr_i(n, "onesided", 0) != 0;
  int64_t K = one ? len / 2 + 1 : len, mdims[2] = {len, K};
  if (len * K > 4096) return ox_fail(cx, n, "a DFT of length %lld is too long for the matrix form", (long long)len);
  ox_const *cm = ox_const_new(cx, FRIT_F64, 2, mdims), *sm = ox_const_new(cx, FRIT_F64, 2, mdims);
  if (!cm || !sm) return ox_fail(cx, n, "out of memory");
  for (int64_t j = 0; j < len; j++)
    for (int64_t k = 0; k < K; k++) {
      double ph = 2 * 3.14159265358979323846 * (double)((j * k) % len) / (double)len;
      ((double *)cm->data)[j * K + k] = cos(ph), ((double *)sm->data)[j * K + k] = sin(ph);
    }
  frit_dtype dt = frit_tensor_dtype(x);
  frit_tensor *C = frit_astype(c, ox_const_tensor(cx, cm), dt), *S = frit_astype(c, ox_const_tensor(cx, sm), dt);
  /* the signal axis last (the parts axis taken off first) */
  int perm[FRIT_MAX_DIMS], back[FRIT_MAX_DIMS], k = 0;
  for (int d = 0; d < nd - 1; d++)
    if (d != axis) perm[k++] = d;
  perm[k] = (int)axis;
  for (int d = 0; d < nd - 1; d++) back[perm[d]] = d;
  frit_tensor *re = frit_permute(c, frit_take(c, x, frit_scalar_i(c, FRIT_I64, 0), nd - 1), perm);
  frit_tensor *im = comp == 2 ? frit_permute(c, frit_take(c, x, frit_scalar_i(c, FRIT_I64, 1), nd - 1), perm) : NULL;
  frit_tensor *ore, *oim;
  /* forward: e^{-i phi}; inverse: e^{+i phi} / n */
  frit_bfunc s1 = inv ? FRIT_BF_SUB : FRIT_BF_ADD;
  ore = frit_matmul(c, re, C);
  oim = frit_unary_t(c, FRIT_UF_NEG, frit_matmul(c, re, S));
  if (inv) oim = frit_unary_t(c, FRIT_UF_NEG, oim);
  if (im) {
    ore = bin(cx, s1, ore, frit_matmul(c, im, S));
    oim = bin(cx, FRIT_BF_ADD, oim, frit_matmul(c, im, C));
  }
  if (inv) {
    ore = bin(cx, FRIT_BF_TRUEDIV, ore, sc(cx, ore, (double)len));
    oim = bin(cx, FRIT_BF_TRUEDIV, oim, sc(cx, oim, (double)len));
  }
  frit_tensor *parts[2] = {frit_permute(c, ore, back), frit_permute(c, oim, back)};
  return ox_set_out(cx, n, 0, frit_stack(c, parts, 2, nd - 1));
}
