/* ONNX integer and quantized linear algebra: MatMulInteger, ConvInteger, QLinearMatMul,
 * QLinearConv and DynamicQuantizeLinear. Products are taken in f64, exact for the 8-bit operands
 * these ops have (sums of up to 2^37 such products), then converted. */
#include <string.h>

#include "import/onnx/onnx_internal.h"

static frit_tensor *f64(ox_cx *cx, frit_tensor *t) { return t ? frit_astype(cx->ctx, t, FRIT_F64) : NULL; }
static frit_tensor *bin(ox_cx *cx, frit_bfunc f, frit_tensor *a, frit_tensor *b) {
  return frit_binary_t(cx->ctx, f, a, b);
}

/* x - zero_point in f64; a 1-D zero point runs along axis (per row of A, per output channel of W). */
static frit_tensor *centered(ox_cx *cx, const ox_node *n, frit_tensor *x, int zp_in, int axis) {
  frit_tensor *v = f64(cx, x);
  if (!ox_has_in(n, zp_in)) return v;
  frit_tensor *zp = ox_in(cx, n, zp_in);
  if (!zp) return NULL;
  zp = f64(cx, zp);
  int nd = frit_tensor_ndim(x);
  if (frit_tensor_ndim(zp) == 1 && nd > 1) {
    int64_t dims[FRIT_MAX_DIMS];
    for (int d = 0; d < nd; d++) dims[d] = d == (axis < 0 ? axis + nd : axis) ? -1 : 1;
    zp = frit_reshape(cx->ctx, zp, nd, dims);
  }
  return bin(cx, FRIT_BF_SUB, v, zp);
}

/* round half to even and saturate into the zero point's dtype */
static frit_tensor *requantize(ox_cx *cx, frit_tensor *v, frit_dtype to) {
  frit_ctx *c = cx->ctx;
  double lo = to == FRIT_U8 ? 0 : -128, hi = to == FRIT_U8 ? 255 : 127;
  v = frit_unary_t(c, FRIT_UF_RINT, v);
  v = bin(cx, FRIT_BF_MINIMUM, bin(cx, FRIT_BF_MAXIMUM, v, frit_scalar_f(c, FRIT_F64, lo)), frit_scalar_f(c, FRIT_F64, hi));
  return frit_astype(c, v, to);
}

frit_status ox_qlinear(ox_cx *cx, const ox_node *n) {
  frit_ctx *c = cx->ctx;
  bool conv = strstr(n->op_type, "Conv") != NULL, ql = !strncmp(n->op_type, "QLinear", 7);
  /* inputs: integer ops (a, b, a_zp, b_zp); QLinear (a, a_scale, a_zp, b, b_scale, b_zp, y_scale,
   * y_zp [, bias]) */
  int ia = 0, ib = ql ? 3 : 1, iaz = 2, ibz = ql ? 5 : 3;
  frit_tensor *a = ox_in(cx, n, ia), *b = ox_in(cx, n, ib);
  if (!a || !b) return frit_last_status(c);
  frit_tensor *ac = centered(cx, n, a, iaz, conv ? 1 : -2), *bc = centered(cx, n, b, ibz, conv ? 0 : -1);
  if (!ac || !bc) return frit_last_status(c) ? frit_last_status(c) : ox_fail_frit(cx, n);
  if (ql) {
    frit_tensor *as = ox_in(cx, n, 1), *bs = ox_in(cx, n, 4);
    if (!as || !bs) return frit_last_status(c);
    int nb = frit_tensor_ndim(bc);
    as = f64(cx, as), bs = f64(cx, bs);
    if (frit_tensor_ndim(bs) == 1 && nb > 1) {
      int64_t dims[FRIT_MAX_DIMS];
      for (int d = 0; d < nb; d++) dims[d] = d == (conv ? 0 : nb - 1) ? -1 : 1;
      bs = frit_reshape(c, bs, nb, dims);
    }
    ac = bin(cx, FRIT_BF_MUL, ac, as), bc = bin(cx, FRIT_BF_MUL, bc, bs);
  }
  frit_tensor *bias = NULL;
  if (ql && conv && ox_has_in(n, 8)) {
    /* the int32 bias is in units of a_scale * w_scale */
    frit_tensor *bi = ox_in(cx, n, 8), *as = ox_in(cx, n, 1), *ws = ox_in(cx, n, 4);
    if (!bi || !as || !ws) return frit_last_status(c);
    bias = bin(cx, FRIT_BF_MUL, f64(cx, bi), bin(cx, FRIT_BF_MUL, f64(cx, as), f64(cx, ws)));
  }
  frit_tensor *r = conv ? ox_conv_of(cx, n, ac, bc, bias) : frit_matmul(c, ac, bc);
  if (!r) return frit_last_status(c) ? ox_fail_frit(cx, n) : ox_fail(cx, n, "failed");
  if (!ql) return ox_set_out(cx, n, 0, frit_astype(c, r, FRIT_I32));
  frit_tensor *ys = ox_in(cx, n, 6), *yz = ox_in(cx, n, 7);
  if (!ys || !yz) return frit_last_status(c);
  frit_dtype to = frit_tensor_dtype(yz);
  if (to != FRIT_U8 && to != FRIT_I8) return ox_fail(cx, n, "output dtype other than uint8/int8 is not supported");
  r = bin(cx, FRIT_BF_ADD, bin(cx, FRIT_BF_TRUEDIV, r, f64(cx, ys)), f64(cx, yz));
  return ox_set_out(cx, n, 0, requantize(cx, r, to));
}

/* y_scale = (max(x, 0) - min(x, 0)) / 255, y_zero_point = round(-min(x, 0) / y_scale) (uint8). */
frit_status ox_dynamic_quantize(ox_cx *cx, const ox_node *n) {
  frit_ctx *c = cx->ctx;
  frit_tensor *x = ox_in(cx, n, 0);
  if (!x) return frit_last_status(c);
  frit_tensor *xf = frit_astype(c, x, FRIT_F32), *zero = frit_scalar_f(c, FRIT_F32, 0);
  frit_tensor *mx = bin(cx, FRIT_BF_MAXIMUM, frit_reduce(c, FRIT_RF_MAX, xf, NULL, FRIT_ALL_AXES, 0, 0), zero);
  frit_tensor *mn = bin(cx, FRIT_BF_MINIMUM, frit_reduce(c, FRIT_RF_MIN, xf, NULL, FRIT_ALL_AXES, 0, 0), zero);
  frit_tensor *scale = bin(cx, FRIT_BF_TRUEDIV, bin(cx, FRIT_BF_SUB, mx, mn), frit_scalar_f(c, FRIT_F32, 255));
  frit_tensor *zp = requantize(cx, f64(cx, bin(cx, FRIT_BF_TRUEDIV, frit_unary_t(c, FRIT_UF_NEG, mn), scale)), FRIT_U8);
  /* rounded before the zero point is added, as ONNX's definition does */
  frit_tensor *q = frit_unary_t(c, FRIT_UF_RINT, bin(cx, FRIT_BF_TRUEDIV, xf, scale));
  frit_tensor *y = requantize(cx, bin(cx, FRIT_BF_ADD, f64(cx, q), f64(cx, zp)), FRIT_U8);
  frit_status st = ox_set_out(cx, n, 0, y);
  if (!st && n->n_output > 1) st = ox_set_out(cx, n, 1, scale);
  if (!st && n->n_output > 2) st = ox_set_out(cx, n, 2, zp);
  return st;
}
