/* ONNX linear algebra and neural-net ops: MatMul, Gemm, Conv, pooling, normalizations, softmax,
 * Einsum and Trilu. frit's conv and pools are 2-D: 1-D ones run as 2-D with a unit height. */
#include <math.h>
#include <string.h>

#include "import/onnx/onnx_internal.h"

#define IN_OR_FAIL(x, k)                                                                          \
  frit_tensor *x = ox_in(cx, n, k);                                                               \
  if (!x) return frit_last_status(cx->ctx)

static frit_tensor *sc(ox_cx *cx, frit_tensor *like, double v) {
  return frit_scalar_f(cx->ctx, frit_tensor_dtype(like), v);
}

frit_status ox_matmul(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(a, 0);
  IN_OR_FAIL(b, 1);
  return ox_set_out(cx, n, 0, frit_matmul(cx->ctx, a, b));
}

frit_status ox_gemm(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(a, 0);
  IN_OR_FAIL(b, 1);
  frit_ctx *c = cx->ctx;
  if (ox_attr_i(n, "transA", 0)) a = frit_transpose(c, a);
  if (ox_attr_i(n, "transB", 0)) b = frit_transpose(c, b);
  frit_tensor *r = frit_matmul(c, a, b);
  double alpha = ox_attr_f(n, "alpha", 1), beta = ox_attr_f(n, "beta", 1);
  if (r && alpha != 1) r = frit_binary_t(c, FRIT_BF_MUL, r, sc(cx, r, alpha));
  if (r && ox_has_in(n, 2)) {
    IN_OR_FAIL(bias, 2);
    if (beta != 1) bias = frit_binary_t(c, FRIT_BF_MUL, bias, sc(cx, bias, beta));
    r = frit_binary_t(c, FRIT_BF_ADD, r, bias);
  }
  return ox_set_out(cx, n, 0, r);
}

/* The spatial geometry of a conv or pool: kernel, strides, dilations and the begin/end pads for
 * the node's auto_pad, for nsp (1 or 2) spatial dims of sizes in[]. ceil_mode adds end padding
 * (extra[]) so the last partial window exists. */
typedef struct geom {
  int64_t k[3], s[3], dil[3], pb[3], pe[3], extra[3];
} geom;

static bool get_geom(ox_cx *cx, const ox_node *n, int nsp, const int64_t *in, const int64_t *kdefault, geom *g) {
  const int64_t *p;
  int cnt;
  for (int i = 0; i < nsp; i++) g->k[i] = kdefault ? kdefault[i] : 1, g->s[i] = g->dil[i] = 1, g->pb[i] = g->pe[i] = 0,
                                g->extra[i] = 0;
  if ((cnt = ox_attr_ints(n, "kernel_shape", &p)) >= 0) {
    if (cnt != nsp) return ox_fail(cx, n, "kernel_shape has %d entries for %d spatial dims", cnt, nsp), false;
    for (int i = 0; i < nsp; i++) g->k[i] = p[i];
  }
  if ((cnt = ox_attr_ints(n, "strides", &p)) >= 0) {
    if (cnt != nsp) return ox_fail(cx, n, "strides has %d entries", cnt), false;
    for (int i = 0; i < nsp; i++) g->s[i] = p[i];
  }
  if ((cnt = ox_attr_ints(n, "dilations", &p)) >= 0) {
    if (cnt != nsp) return ox_fail(cx, n, "dilations has %d entries", cnt), false;
    for (int i = 0; i < nsp; i++) g->dil[i] = p[i];
  }
  if ((cnt = ox_attr_ints(n, "pads", &p)) >= 0) {
    if (cnt != 2 * nsp) return ox_fail(cx, n, "pads has %d entries", cnt), false;
    for (int i = 0; i < nsp; i++) g->pb[i] = p[i], g->pe[i] = p[i + nsp];
  }
  for (int i = 0; i < nsp; i++)
    if (g->k[i] <= 0 || g->s[i] <= 0 || g->dil[i] <= 0 || g->pb[i] < 0 || g->pe[i] < 0)
      return ox_fail(cx, n, "bad kernel, stride, dilation or pad"), false;
  const char *ap = ox_attr_s(cx, n, "auto_pad", "NOTSET");
  if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
    for (int i = 0; i < nsp; i++) {
      int64_t out = (in[i] + g->s[i] - 1) / g->s[i], span = (g->k[i] - 1) * g->dil[i] + 1;
      int64_t total = (out - 1) * g->s[i] + span - in[i];
      if (total < 0) total = 0;
      g->pb[i] = !strcmp(ap, "SAME_UPPER") ? total / 2 : total - total / 2;
      g->pe[i] = total - g->pb[i];
    }
  } else if (!strcmp(ap, "VALID")) {
    for (int i = 0; i < nsp; i++) g->pb[i] = g->pe[i] = 0;
  } else if (strcmp(ap, "NOTSET")) {
    return ox_fail(cx, n, "auto_pad '%s'", ap), false;
  }
  if (ox_attr_i(n, "ceil_mode", 0)) {
    for (int i = 0; i < nsp; i++) {
      int64_t span = (g->k[i] - 1) * g->dil[i] + 1, len = in[i] + g->pb[i] + g->pe[i] - span;
      if (len < 0) continue;
      int64_t out = (len + g->s[i] - 1) / g->s[i] + 1;
      /* a window that would start in the end padding is dropped */
      if ((out - 1) * g->s[i] >= in[i] + g->pb[i]) out--;
      int64_t need = (out - 1) * g->s[i] + span - (in[i] + g->pb[i] + g->pe[i]);
      g->extra[i] = need > 0 ? need : 0;
    }
  }
  return true;
}

/* x (N, C, spatial...) as rank 4 with a unit height for 1-D; *nsp gets the spatial rank. */
static frit_tensor *as_2d(ox_cx *cx, const ox_node *n, frit_tensor *x, int *nsp, int64_t *in) {
  int nd = frit_tensor_ndim(x);
  if (nd != 3 && nd != 4) {
    ox_fail(cx, n, "%d-D %s is not supported (1-D and 2-D are)", nd - 2, n->op_type);
    return NULL;
  }
  *nsp = nd - 2;
  for (int i = 0; i < nd - 2; i++) {
    in[i] = frit_tensor_dim_static(x, i + 2);
    if (in[i] < 0) return ox_fail(cx, n, "symbolic spatial dims"), NULL;
  }
  return nd == 3 ? frit_unsqueeze(cx->ctx, x, 2) : x;
}

static frit_tensor *from_2d(ox_cx *cx, frit_tensor *r, int nsp) {
  return r && nsp == 1 ? frit_squeeze(cx->ctx, r, (int[]){2}, 1) : r;
}

/* Pads the 2-D spatial axes (2, 3) of x: begin pb, end pe (+ extra) with value v. */
static frit_tensor *pad_spatial(ox_cx *cx, frit_tensor *x, int nsp, const geom *g, bool with_extra, double v) {
  int64_t b[4] = {0}, e[4] = {0};
  for (int i = 0; i < nsp; i++) {
    b[2 + i + (2 - nsp)] = g->pb[i];
    e[2 + i + (2 - nsp)] = g->pe[i] + (with_extra ? g->extra[i] : 0);
  }
  return frit_pad(cx->ctx, x, b, e, FRIT_PAD_CONSTANT, v);
}

static void to2(const int64_t *v, int nsp, int64_t fill, int64_t out[2]) {
  out[0] = nsp == 1 ? fill : v[0];
  out[1] = nsp == 1 ? v[0] : v[1];
}

frit_tensor *ox_conv_of(ox_cx *cx, const ox_node *n, frit_tensor *x, frit_tensor *w, frit_tensor *bias) {
  int nsp;
  int64_t in[2], kd[2];
  x = as_2d(cx, n, x, &nsp, in);
  if (!x) return NULL;
  for (int i = 0; i < nsp; i++) kd[i] = frit_tensor_dim_static(w, i + 2);
  geom g;
  if (!get_geom(cx, n, nsp, in, kd, &g)) return NULL;
  if (nsp == 1) w = frit_unsqueeze(cx->ctx, w, 2);
  /* asymmetric pads are not frit_conv2d's: the input is padded explicitly */
  frit_tensor *xp = pad_spatial(cx, x, nsp, &g, false, 0);
  int64_t s2[2], d2[2], p2[2] = {0, 0};
  to2(g.s, nsp, 1, s2);
  to2(g.dil, nsp, 1, d2);
  return from_2d(cx, frit_conv2d(cx->ctx, xp, w, bias, s2, p2, d2, ox_attr_i(n, "group", 1)), nsp);
}

frit_status ox_conv(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  IN_OR_FAIL(w, 1);
  frit_tensor *bias = NULL;
  if (ox_has_in(n, 2) && !(bias = ox_in(cx, n, 2))) return frit_last_status(cx->ctx);
  frit_tensor *r = ox_conv_of(cx, n, x, w, bias);
  return r ? ox_set_out(cx, n, 0, r) : frit_last_status(cx->ctx) ? frit_last_status(cx->ctx) : ox_fail_frit(cx, n);
}

/* A pool of any spatial rank and dilation as the max or sum over the kernel's shifted, strided
 * slices of the padded input (frit's pools are 2-D and undilated). avg divides by the count of
 * the window's counted elements, found the same way on a mask. */
static frit_tensor *pool_slices(ox_cx *cx, const ox_node *n, frit_tensor *x, int nsp, const geom *g, bool is_max,
                                bool incl) {
  frit_ctx *c = cx->ctx;
  int nd = nsp + 2;
  int64_t pb[FRIT_MAX_DIMS] = {0}, pe[FRIT_MAX_DIMS] = {0}, pe2[FRIT_MAX_DIMS] = {0}, zero[FRIT_MAX_DIMS] = {0};
  int64_t ppe[FRIT_MAX_DIMS] = {0}, len[3], out[3];
  for (int i = 0; i < nsp; i++) {
    pb[2 + i] = g->pb[i], pe[2 + i] = g->pe[i] + g->extra[i], pe2[2 + i] = g->extra[i], ppe[2 + i] = g->pe[i];
    len[i] = frit_tensor_dim_static(x, 2 + i) + g->pb[i] + g->pe[i] + g->extra[i];
    out[i] = (len[i] - ((g->k[i] - 1) * g->dil[i] + 1)) / g->s[i] + 1;
    if (out[i] <= 0) return ox_fail(cx, n, "empty pooling output"), NULL;
  }
  frit_tensor *xp = frit_pad(c, x, pb, pe, FRIT_PAD_CONSTANT, is_max ? -INFINITY : 0), *mask = NULL;
  if (!is_max) {
    frit_tensor *ones = frit_binary_t(c, FRIT_BF_ADD, frit_binary_t(c, FRIT_BF_MUL, x, sc(cx, x, 0)), sc(cx, x, 1));
    mask = frit_pad(c, frit_pad(c, ones, pb, ppe, FRIT_PAD_CONSTANT, incl ? 1 : 0), zero, pe2, FRIT_PAD_CONSTANT, 0);
  }
  frit_tensor *acc = NULL, *cnt = NULL;
  int64_t total = 1;
  for (int i = 0; i < nsp; i++) total *= g->k[i];
  for (int64_t w = 0; w < total; w++) {
    int64_t b[FRIT_MAX_DIMS], e[FRIT_MAX_DIMS], st[FRIT_MAX_DIMS], rem = w;
    for (int d = 0; d < nd; d++) b[d] = e[d] = FRIT_SLICE_DEFAULT, st[d] = 1;
    for (int i = nsp - 1; i >= 0; i--) {
      int64_t off = rem % g->k[i];
      rem /= g->k[i];
      b[2 + i] = off * g->dil[i], st[2 + i] = g->s[i], e[2 + i] = b[2 + i] + (out[i] - 1) * g->s[i] + 1;
    }
    frit_tensor *v = frit_slice(c, xp, b, e, st);
    acc = !acc ? v : frit_binary_t(c, is_max ? FRIT_BF_MAXIMUM : FRIT_BF_ADD, acc, v);
    if (mask) {
      frit_tensor *m = frit_slice(c, mask, b, e, st);
      cnt = cnt ? frit_binary_t(c, FRIT_BF_ADD, cnt, m) : m;
    }
  }
  return is_max ? acc : frit_binary_t(c, FRIT_BF_TRUEDIV, acc, cnt);
}

frit_status ox_pool(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  if (n->n_output > 1 && n->output[1][0]) return ox_fail(cx, n, "the Indices output is not supported");
  int xnd = frit_tensor_ndim(x);
  if (xnd == 5 || (xnd >= 3 && xnd <= 4 && ox_attr(n, "dilations"))) {
    int64_t in[3];
    geom g;
    bool dilated = xnd == 5;
    for (int i = 0; i < xnd - 2; i++)
      if ((in[i] = frit_tensor_dim_static(x, 2 + i)) < 0) return ox_fail(cx, n, "symbolic spatial dims");
    if (!ox_attr(n, "kernel_shape")) return ox_fail(cx, n, "no kernel_shape");
    if (!get_geom(cx, n, xnd - 2, in, NULL, &g)) return frit_last_status(cx->ctx);
    for (int i = 0; i < xnd - 2; i++) dilated = dilated || g.dil[i] != 1;
    if (dilated)
      return ox_set_out(cx, n, 0, pool_slices(cx, n, x, xnd - 2, &g, !strcmp(n->op_type, "MaxPool"),
                                              ox_attr_i(n, "count_include_pad", 0) != 0));
  }
  int nsp;
  int64_t in[2];
  x = as_2d(cx, n, x, &nsp, in);
  if (!x) return frit_last_status(cx->ctx);
  geom g;
  if (!get_geom(cx, n, nsp, in, NULL, &g)) return frit_last_status(cx->ctx);
  if (!ox_attr(n, "kernel_shape")) return ox_fail(cx, n, "no kernel_shape");
  for (int i = 0; i < nsp; i++)
    if (g.dil[i] != 1) return ox_fail(cx, n, "dilated pooling is not supported");
  int64_t k2[2], s2[2], p0[2] = {0, 0};
  to2(g.k, nsp, 1, k2);
  to2(g.s, nsp, 1, s2);
  frit_ctx *c = cx->ctx;
  frit_tensor *r;
  if (!strcmp(n->op_type, "MaxPool")) {
    r = frit_max_pool2d(c, pad_spatial(cx, x, nsp, &g, true, -INFINITY), k2, s2, p0);
  } else {
    /* the mean over the window's counted elements: explicit pads count when
     * count_include_pad, the ceil_mode extension never does */
    bool incl = ox_attr_i(n, "count_include_pad", 0) != 0;
    frit_tensor *ones = frit_binary_t(c, FRIT_BF_ADD, frit_binary_t(c, FRIT_BF_MUL, x, sc(cx, x, 0)), sc(cx, x, 1));
    frit_tensor *num = frit_avg_pool2d(c, pad_spatial(cx, x, nsp, &g, true, 0), k2, s2, p0);
    frit_tensor *mask = pad_spatial(cx, ones, nsp, &g, false, incl ? 1 : 0);
    geom ge = g;
    for (int i = 0; i < nsp; i++) ge.pb[i] = 0, ge.pe[i] = g.extra[i];
    mask = pad_spatial(cx, mask, nsp, &ge, false, 0);
    r = frit_binary_t(c, FRIT_BF_TRUEDIV, num, frit_avg_pool2d(c, mask, k2, s2, p0));
  }
  return ox_set_out(cx, n, 0, from_2d(cx, r, nsp));
}

frit_status ox_global_pool(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  int nd = frit_tensor_ndim(x), ax[FRIT_MAX_DIMS];
  for (int d = 2; d < nd; d++) ax[d - 2] = d;
  frit_rfunc f = !strcmp(n->op_type, "GlobalMaxPool") ? FRIT_RF_MAX : FRIT_RF_MEAN;
  return ox_set_out(cx, n, 0, nd > 2 ? frit_reduce(cx->ctx, f, x, ax, nd - 2, 1, 0) : x);
}

/* A per-channel vector (C) shaped to broadcast against (N, C, spatial...). */
static frit_tensor *per_channel(ox_cx *cx, frit_tensor *v, int nd) {
  int64_t dims[FRIT_MAX_DIMS];
  dims[0] = -1;
  for (int d = 1; d < nd - 1; d++) dims[d] = 1;
  return frit_reshape(cx->ctx, v, nd - 1 > 0 ? nd - 1 : 1, dims);
}

frit_status ox_batchnorm(ox_cx *cx, const ox_node *n) {
  if (!ox_attr_i(n, "is_test", 1)) return ox_fail(cx, n, "is_test = 0 (opset < 7) is not supported");
  if (!ox_attr_i(n, "spatial", 1)) return ox_fail(cx, n, "spatial = 0 (opset < 9) is not supported");
  IN_OR_FAIL(x, 0);
  IN_OR_FAIL(scale, 1);
  IN_OR_FAIL(bias, 2);
  IN_OR_FAIL(mean, 3);
  IN_OR_FAIL(var, 4);
  frit_ctx *c = cx->ctx;
  int nd = frit_tensor_ndim(x);
  if (ox_attr_i(n, "training_mode", 0)) {
    /* batch statistics (population variance); the running ones move towards them */
    int ax[FRIT_MAX_DIMS], na = 0;
    for (int d = 0; d < nd; d++)
      if (d != 1) ax[na++] = d;
    frit_tensor *bm = frit_reduce(c, FRIT_RF_MEAN, x, ax, na, 0, 0);
    frit_tensor *xc = frit_binary_t(c, FRIT_BF_SUB, x, per_channel(cx, bm, nd));
    frit_tensor *bv = frit_reduce(c, FRIT_RF_MEAN, frit_binary_t(c, FRIT_BF_MUL, xc, xc), ax, na, 0, 0);
    double mom = ox_attr_f(n, "momentum", 0.9);
    frit_tensor *inv = frit_unary_t(c, FRIT_UF_RSQRT, frit_binary_t(c, FRIT_BF_ADD, bv, sc(cx, bv, ox_attr_f(n, "epsilon", 1e-5))));
    frit_tensor *y = frit_binary_t(c, FRIT_BF_MUL, xc, per_channel(cx, frit_binary_t(c, FRIT_BF_MUL, inv, scale), nd));
    frit_status st = ox_set_out(cx, n, 0, frit_binary_t(c, FRIT_BF_ADD, y, per_channel(cx, bias, nd)));
    frit_tensor *rm = frit_binary_t(c, FRIT_BF_ADD, frit_binary_t(c, FRIT_BF_MUL, mean, sc(cx, mean, mom)),
                                    frit_binary_t(c, FRIT_BF_MUL, bm, sc(cx, bm, 1 - mom)));
    frit_tensor *rv = frit_binary_t(c, FRIT_BF_ADD, frit_binary_t(c, FRIT_BF_MUL, var, sc(cx, var, mom)),
                                    frit_binary_t(c, FRIT_BF_MUL, bv, sc(cx, bv, 1 - mom)));
    if (!st && n->n_output > 1) st = ox_set_out(cx, n, 1, rm);
    if (!st && n->n_output > 2) st = ox_set_out(cx, n, 2, rv);
    return st;
  }
  frit_tensor *inv = frit_unary_t(c, FRIT_UF_RSQRT, frit_binary_t(c, FRIT_BF_ADD, var, sc(cx, var, ox_attr_f(n, "epsilon", 1e-5))));
  frit_tensor *r = frit_binary_t(c, FRIT_BF_SUB, x, per_channel(cx, mean, nd));
  r = frit_binary_t(c, FRIT_BF_MUL, r, per_channel(cx, frit_binary_t(c, FRIT_BF_MUL, inv, scale), nd));
  return ox_set_out(cx, n, 0, frit_binary_t(c, FRIT_BF_ADD, r, per_channel(cx, bias, nd)));
}

/* (x - mean) / sqrt(var + eps) over axes [first, nd); mean and 1/std also returned. */
static frit_tensor *normalize(ox_cx *cx, frit_tensor *x, int first, double eps, frit_tensor **mean, frit_tensor **inv) {
  frit_ctx *c = cx->ctx;
  int nd = frit_tensor_ndim(x), ax[FRIT_MAX_DIMS], na = 0;
  for (int d = first; d < nd; d++) ax[na++] = d;
  *mean = frit_reduce(c, FRIT_RF_MEAN, x, ax, na, 1, 0);
  frit_tensor *xc = frit_binary_t(c, FRIT_BF_SUB, x, *mean);
  frit_tensor *var = frit_reduce(c, FRIT_RF_MEAN, frit_binary_t(c, FRIT_BF_MUL, xc, xc), ax, na, 1, 0);
  *inv = frit_unary_t(c, FRIT_UF_RSQRT, frit_binary_t(c, FRIT_BF_ADD, var, sc(cx, x, eps)));
  return frit_binary_t(c, FRIT_BF_MUL, xc, *inv);
}

frit_status ox_instnorm(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  IN_OR_FAIL(scale, 1);
  IN_OR_FAIL(bias, 2);
  frit_ctx *c = cx->ctx;
  int nd = frit_tensor_ndim(x);
  frit_tensor *mean, *inv;
  frit_tensor *r = normalize(cx, x, 2, ox_attr_f(n, "epsilon", 1e-5), &mean, &inv);
  r = frit_binary_t(c, FRIT_BF_MUL, r, per_channel(cx, scale, nd));
  return ox_set_out(cx, n, 0, frit_binary_t(c, FRIT_BF_ADD, r, per_channel(cx, bias, nd)));
}

frit_status ox_layernorm(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  IN_OR_FAIL(scale, 1);
  frit_ctx *c = cx->ctx;
  int64_t axis = ox_attr_i(n, "axis", -1);
  if (!ox_axis(cx, n, &axis, frit_tensor_ndim(x))) return frit_last_status(c);
  frit_tensor *mean, *inv;
  frit_tensor *r = normalize(cx, x, (int)axis, ox_attr_f(n, "epsilon", 1e-5), &mean, &inv);
  r = frit_binary_t(c, FRIT_BF_MUL, r, scale);
  if (ox_has_in(n, 2)) {
    IN_OR_FAIL(bias, 2);
    r = frit_binary_t(c, FRIT_BF_ADD, r, bias);
  }
  frit_status st = ox_set_out(cx, n, 0, r);
  if (!st && n->n_output > 1) st = ox_set_out(cx, n, 1, mean);
  if (!st && n->n_output > 2) st = ox_set_out(cx, n, 2, inv);
  return st;
}

frit_status ox_softmax(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  frit_ctx *c = cx->ctx;
  int nd = frit_tensor_ndim(x);
  bool old = cx->opset < 13;
  int64_t axis = ox_attr_i(n, "axis", old ? 1 : -1);
  if (!ox_axis(cx, n, &axis, nd)) return frit_last_status(c);
  frit_tensor *v = x;
  int a = (int)axis;
  int64_t dims[FRIT_MAX_DIMS];
  if (old) {
    /* before opset 13 the input is flattened to 2-D at axis and normalized over the second */
    int64_t rows = 1, cols = 1;
    for (int d = 0; d < nd; d++) {
      dims[d] = frit_tensor_dim_static(x, d);
      if (dims[d] < 0) return ox_fail(cx, n, "symbolic dims");
      if (d < a) rows *= dims[d];
      else cols *= dims[d];
    }
    v = frit_reshape(c, x, 2, (int64_t[]){rows, cols});
    a = 1;
  }
  frit_tensor *r;
  if (!strcmp(n->op_type, "Softmax")) r = frit_softmax(c, v, a);
  else if (!strcmp(n->op_type, "LogSoftmax")) r = frit_log_softmax(c, v, a);
  else {
    int64_t len = frit_tensor_dim_static(v, a);
    int vn = frit_tensor_ndim(v), perm[FRIT_MAX_DIMS], k = 0;
    if (len < 0) return ox_fail(cx, n, "symbolic axis");
    /* one_hot puts the class axis last; it goes back to position a */
    r = frit_one_hot(c, frit_reduce(c, FRIT_RF_ARGMAX, v, &a, 1, 0, 0), len, frit_tensor_dtype(x));
    for (int d = 0; d < vn; d++) perm[d] = d == a ? vn - 1 : k++;
    if (r) r = frit_permute(c, r, perm);
  }
  if (old && r) r = frit_reshape(c, r, nd, dims);
  return ox_set_out(cx, n, 0, r);
}

frit_status ox_trilu(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  int64_t k = 0;
  if (ox_has_in(n, 1)) {
    const ox_const *kc = ox_in_const(cx, n, 1);
    if (!kc) return frit_last_status(cx->ctx);
    int64_t *kv = ox_const_ints(cx, kc);
    if (!kv || kc->n != 1) return ox_fail(cx, n, "k must be one integer");
    k = kv[0];
  }
  bool upper = ox_attr_i(n, "upper", 1) != 0;
  return ox_set_out(cx, n, 0, upper ? frit_triu(cx->ctx, x, k) : frit_tril(cx->ctx, x, k));
}

/* Einsum without ellipses or repeated letters within an operand: every operand is permuted and
 * broadcast into one index space (output letters first), multiplied, and summed over the rest. */
frit_status ox_einsum(ox_cx *cx, const ox_node *n) {
  const char *eq = ox_attr_s(cx, n, "equation", "");
  char terms[8][FRIT_MAX_DIMS + 1], out[FRIT_MAX_DIMS + 1] = {0};
  int nt = 0, len = 0;
  bool arrow = false;
  for (const char *p = eq;; p++) {
    char ch = *p;
    if (ch == ' ') continue;
    if (ch == '.') return ox_fail(cx, n, "ellipsis in '%s' is not supported", eq);
    if (ch == ',' || ch == '-' || ch == '\0') {
      if (!arrow) {
        if (nt == 8) return ox_fail(cx, n, "too many operands");
        terms[nt][len] = '\0', nt++;
      } else {
        out[len] = '\0';
      }
      len = 0;
      if (ch == '-') {
        if (p[1] != '>') return ox_fail(cx, n, "bad equation '%s'", eq);
        p++, arrow = true;
      }
      if (ch == '\0') break;
      continue;
    }
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) || len >= FRIT_MAX_DIMS)
      return ox_fail(cx, n, "bad equation '%s'", eq);
    (arrow ? out : terms[nt])[len++] = ch;
  }
  if ((size_t)nt != n->n_input) return ox_fail(cx, n, "%d terms for %zu inputs", nt, n->n_input);
  char all[2 * FRIT_MAX_DIMS + 1] = {0};
  int na = 0;
  if (!arrow) {
    /* implicit output: the letters used once, alphabetically */
    int count[128] = {0};
    for (int t = 0; t < nt; t++)
      for (const char *q = terms[t]; *q; q++) count[(int)*q]++;
    for (int ch = 0; ch < 128; ch++)
      if (count[ch] == 1 && len < FRIT_MAX_DIMS) out[len++] = (char)ch;
    out[len] = '\0';
  }
  for (const char *q = out; *q; q++) all[na++] = *q;
  for (int t = 0; t < nt; t++)
    for (const char *q = terms[t]; *q; q++)
      if (!strchr(all, *q)) {
        if (na >= FRIT_MAX_DIMS) return ox_fail(cx, n, "too many indices");
        all[na++] = *q;
      }
  int64_t size[FRIT_MAX_DIMS];
  for (int i = 0; i < na; i++) size[i] = 1;
  frit_tensor *acc = NULL;
  frit_ctx *c = cx->ctx;
  for (int t = 0; t < nt; t++) {
    IN_OR_FAIL(x, t);
    int r = (int)strlen(terms[t]);
    if (frit_tensor_ndim(x) != r) return ox_fail(cx, n, "operand %d has rank %d, '%s' has %d letters", t,
                                                 frit_tensor_ndim(x), terms[t], r);
    int perm[FRIT_MAX_DIMS], np = 0;
    int64_t shape[FRIT_MAX_DIMS];
    for (int i = 0; i < na; i++) {
      const char *q = strchr(terms[t], all[i]);
      if (q && strchr(q + 1, all[i])) return ox_fail(cx, n, "repeated index '%c' in one operand", all[i]);
      if (q) {
        perm[np++] = (int)(q - terms[t]);
        shape[i] = frit_tensor_dim_static(x, (int)(q - terms[t]));
        if (size[i] == 1) size[i] = shape[i];
      } else {
        shape[i] = 1;
      }
    }
    x = frit_reshape(c, frit_permute(c, x, perm), na, shape);
    acc = acc ? frit_binary_t(c, FRIT_BF_MUL, acc, x) : x;
  }
  int nout = (int)strlen(out), ax[FRIT_MAX_DIMS];
  for (int i = nout; i < na; i++) ax[i - nout] = i;
  frit_tensor *r = na > nout ? frit_reduce(c, FRIT_RF_SUM, acc, ax, na - nout, 0, 0) : acc;
  if (r && acc && frit_tensor_dtype(r) != frit_tensor_dtype(acc)) r = frit_astype(c, r, frit_tensor_dtype(acc));
  /* broadcast an output letter that only size-1 operands carried */
  if (r && nout) r = frit_broadcast_to(c, r, nout, size);
  return ox_set_out(cx, n, 0, r);
}

/* ConvTranspose as a conv: the input with stride-1 zeros inserted between elements, padded by
 * (k-1)*dilation - pads, convolved with the spatially flipped kernel whose in/out channels are
 * swapped within each group. */
frit_status ox_conv_transpose(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  IN_OR_FAIL(w, 1);
  frit_ctx *c = cx->ctx;
  int nsp;
  int64_t in[2], kd[2] = {1, 1};
  x = as_2d(cx, n, x, &nsp, in);
  if (!x) return frit_last_status(c);
  if (nsp == 1) w = frit_unsqueeze(c, w, 2);
  int64_t wd[4];
  for (int d = 0; d < 4; d++) wd[d] = frit_tensor_dim_static(w, d);
  for (int i = 0; i < nsp; i++) kd[i] = wd[2 + i + (2 - nsp)];
  int64_t groups = ox_attr_i(n, "group", 1);
  if (groups <= 0 || wd[0] % groups) return ox_fail(cx, n, "bad group");
  geom g;
  const char *ap = ox_attr_s(cx, n, "auto_pad", "NOTSET");
  if (!get_geom(cx, n, nsp, in, kd, &g)) return frit_last_status(c);
  const int64_t *op = NULL, *os = NULL;
  int nop = ox_attr_ints(n, "output_padding", &op), nos = ox_attr_ints(n, "output_shape", &os);
  int64_t outpad[2] = {0, 0};
  for (int i = 0; i < nsp && nop == nsp; i++) outpad[i] = op[i];
  if (nos >= nsp || strcmp(ap, "NOTSET")) {
    /* the pads follow from the wanted output size (SAME_*: input size times stride) */
    for (int i = 0; i < nsp; i++) {
      int64_t want = nos >= nsp ? os[nos - nsp + i] : in[i] * g.s[i];
      /* negative: the output is longer than the full convolution, zeros appended at the end */
      int64_t total = g.s[i] * (in[i] - 1) + outpad[i] + (g.k[i] - 1) * g.dil[i] + 1 - want;
      bool lower = !strcmp(ap, "SAME_LOWER");
      g.pb[i] = lower ? total - total / 2 : total / 2;
      g.pe[i] = total - g.pb[i];
    }
  }
  int64_t s2[2], k2[2], d2[2];
  to2(g.s, nsp, 1, s2);
  to2(g.k, nsp, 1, k2);
  to2(g.dil, nsp, 1, d2);
  int64_t pb2[2], pe2[2], op2[2];
  to2(g.pb, nsp, 0, pb2);
  to2(g.pe, nsp, 0, pe2);
  to2(outpad, nsp, 0, op2);
  int64_t N = frit_tensor_dim_static(x, 0), C = frit_tensor_dim_static(x, 1), H = frit_tensor_dim_static(x, 2),
          W = frit_tensor_dim_static(x, 3);
  /* zeros between elements: (N,C,H,1,W,1) padded to (N,C,H,sh,W,sw), then cut to (H-1)*sh+1 */
  frit_tensor *xs = frit_reshape(c, x, 6, (int64_t[]){N, C, H, 1, W, 1});
  xs = frit_pad(c, xs, (int64_t[6]){0}, (int64_t[]){0, 0, 0, s2[0] - 1, 0, s2[1] - 1}, FRIT_PAD_CONSTANT, 0);
  xs = frit_reshape(c, xs, 4, (int64_t[]){N, C, H * s2[0], W * s2[1]});
  int64_t b[4], e[4], st[4], before[4] = {0}, after[4] = {0};
  for (int d = 0; d < 4; d++) b[d] = FRIT_SLICE_DEFAULT, e[d] = FRIT_SLICE_DEFAULT, st[d] = 1;
  int64_t hw[2] = {H, W};
  for (int i = 0; i < 2; i++) {
    int64_t full = (k2[i] - 1) * d2[i];
    int64_t lo = full - pb2[i], hi = full - pe2[i] + op2[i];
    /* negative padding crops */
    b[2 + i] = lo < 0 ? -lo : 0;
    e[2 + i] = (hw[i] - 1) * s2[i] + 1 + (lo > 0 ? lo : 0) + hi; /* the zeros after the data stay zeros */
    before[2 + i] = lo > 0 ? lo : 0;
    after[2 + i] = hi > 0 ? hi : 0;
  }
  xs = frit_slice(c, frit_pad(c, xs, before, after, FRIT_PAD_CONSTANT, 0), b, e, st);
  int64_t cin_g = wd[0] / groups, cout_g = wd[1];
  frit_tensor *wt = frit_reshape(c, w, 5, (int64_t[]){groups, cin_g, cout_g, wd[2], wd[3]});
  wt = frit_permute(c, wt, (int[]){0, 2, 1, 3, 4});
  wt = frit_reshape(c, wt, 4, (int64_t[]){groups * cout_g, cin_g, wd[2], wd[3]});
  wt = frit_flip(c, wt, (int[]){2, 3}, 2);
  frit_tensor *bias = NULL;
  if (ox_has_in(n, 2) && !(bias = ox_in(cx, n, 2))) return frit_last_status(c);
  frit_tensor *r = frit_conv2d(c, xs, wt, bias, (int64_t[]){1, 1}, (int64_t[]){0, 0}, d2, groups);
  return ox_set_out(cx, n, 0, from_2d(cx, r, nsp));
}
