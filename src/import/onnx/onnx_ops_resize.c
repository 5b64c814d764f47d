/* ONNX Resize and Upsample: separable per axis. The source coordinates of every output index
 * are computed on the host (the shapes are static), so each axis is a few takes with constant
 * indices and weights: 1 tap (nearest), 2 (linear) or 4 (cubic). */
#include <math.h>
#include <string.h>

#include "import/onnx/onnx_internal.h"

typedef struct rs_opts {
  const char *mode, *coord, *nearest;
  double cubic_a;
  bool exclude_outside;
} rs_opts;

static double src_coord(const rs_opts *o, int64_t i, int64_t in, int64_t out, double scale) {
  /* the resized length as ONNX's reference takes it: in * scale, before rounding down */
  double x = (double)i, len = (double)in * scale;
  if (!strcmp(o->coord, "asymmetric")) return x / scale;
  if (!strcmp(o->coord, "align_corners")) return len == 1 ? 0 : x * (double)(in - 1) / (len - 1);
  if (!strcmp(o->coord, "pytorch_half_pixel")) return len > 1 ? (x + 0.5) / scale - 0.5 : 0;
  if (!strcmp(o->coord, "tf_half_pixel_for_nn")) return (x + 0.5) / scale;
  if (!strcmp(o->coord, "half_pixel_symmetric")) {
    double adj = (double)out / (scale * (double)in), center = (double)in / 2;
    return center * (1 - adj) + (x + 0.5) / scale - 0.5;
  }
  return (x + 0.5) / scale - 0.5; /* half_pixel */
}

static int64_t nearest_index(const rs_opts *o, double x) {
  double f = floor(x);
  if (!strcmp(o->nearest, "floor")) return (int64_t)f;
  if (!strcmp(o->nearest, "ceil")) return (int64_t)ceil(x);
  if (x - f == 0.5) return (int64_t)(!strcmp(o->nearest, "round_prefer_ceil") ? f + 1 : f);
  return (int64_t)floor(x + 0.5);
}

static double cubic_w(double a, double t) {
  t = fabs(t);
  if (t <= 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
  if (t < 2) return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
  return 0;
}

static int64_t clampi(int64_t v, int64_t n) { return v < 0 ? 0 : v >= n ? n - 1 : v; }

/* x resized along axis from in to out elements. */
static frit_tensor *resize_axis(ox_cx *cx, const rs_opts *o, frit_tensor *x, int axis, int64_t in, int64_t out,
                                double scale) {
  frit_ctx *c = cx->ctx;
  int taps = !strcmp(o->mode, "nearest") ? 1 : !strcmp(o->mode, "linear") ? 2 : 4;
  int nd = frit_tensor_ndim(x);
  int64_t wshape[FRIT_MAX_DIMS];
  for (int d = 0; d < nd; d++) wshape[d] = d == axis ? out : 1;
  frit_tensor *acc = NULL;
  for (int t = 0; t < taps; t++) {
    ox_const *ic = ox_const_new(cx, FRIT_I64, 1, &out), *wc = ox_const_new(cx, FRIT_F64, 1, &out);
    if (!ic || !wc) return NULL;
    int64_t *iv = (int64_t *)ic->data;
    double *wv = (double *)wc->data;
    for (int64_t i = 0; i < out; i++) {
      double xs = src_coord(o, i, in, out, scale);
      if (taps == 1) {
        iv[i] = clampi(nearest_index(o, xs), in), wv[i] = 1;
      } else if (taps == 2) {
        double f = floor(xs), r = xs - f;
        iv[i] = clampi((int64_t)f + t, in), wv[i] = t ? r : 1 - r;
      } else {
        double f = floor(xs), r = xs - f, sum = 0;
        for (int k = 0; k < 4; k++) {
          int64_t j = (int64_t)f - 1 + k;
          double w = cubic_w(o->cubic_a, r + 1 - k);
          if (o->exclude_outside && (j < 0 || j >= in)) w = 0;
          sum += w;
          if (k == t) iv[i] = clampi(j, in), wv[i] = w;
        }
        if (o->exclude_outside && sum != 0) wv[i] /= sum;
      }
    }
    frit_tensor *g = frit_take(c, x, ox_const_tensor(cx, ic), axis);
    if (taps > 1) {
      frit_tensor *w = frit_astype(c, frit_reshape(c, ox_const_tensor(cx, wc), nd, wshape), frit_tensor_dtype(x));
      g = frit_binary_t(c, FRIT_BF_MUL, g, w);
    }
    acc = acc ? frit_binary_t(c, FRIT_BF_ADD, acc, g) : g;
  }
  return acc;
}

frit_status ox_resize(ox_cx *cx, const ox_node *n) {
  frit_tensor *x = ox_in(cx, n, 0);
  if (!x) return frit_last_status(cx->ctx);
  int nd = frit_tensor_ndim(x);
  bool upsample = !strcmp(n->op_type, "Upsample");
  rs_opts o = {ox_attr_s(cx, n, "mode", "nearest"), ox_attr_s(cx, n, "coordinate_transformation_mode", "half_pixel"),
               ox_attr_s(cx, n, "nearest_mode", "round_prefer_floor"), ox_attr_f(n, "cubic_coeff_a", -0.75),
               ox_attr_i(n, "exclude_outside", 0) != 0};
  if (upsample || cx->opset < 11) {
    /* Upsample and Resize-10: asymmetric coordinates, nearest rounds down */
    o.coord = "asymmetric", o.nearest = "floor";
    if (!strcmp(o.mode, "bilinear")) o.mode = "linear";
  }
  if (strcmp(o.mode, "nearest") && strcmp(o.mode, "linear") && strcmp(o.mode, "cubic"))
    return ox_fail(cx, n, "mode '%s' is not supported", o.mode);
  if (!strcmp(o.coord, "tf_crop_and_resize")) return ox_fail(cx, n, "tf_crop_and_resize is not supported");
  if (strcmp(o.mode, "nearest") && !frit_dtype_is_float(frit_tensor_dtype(x)))
    return ox_fail(cx, n, "%s resizing of integer data is not supported", o.mode);
  int64_t axes[FRIT_MAX_DIMS];
  int na = ox_axes(cx, n, "axes", -1, axes, FRIT_MAX_DIMS);
  if (na == -2) return frit_last_status(cx->ctx);
  if (na < 0) {
    na = nd;
    for (int d = 0; d < nd; d++) axes[d] = d;
  }
  for (int i = 0; i < na; i++)
    if (!ox_axis(cx, n, &axes[i], nd)) return frit_last_status(cx->ctx);
  const ox_const *scales = NULL, *sizes = NULL;
  int si = upsample || cx->opset < 11 ? 1 : 2;
  if (ox_has_in(n, si) && !(scales = ox_in_const(cx, n, si))) return frit_last_status(cx->ctx);
  if (!upsample && cx->opset >= 11 && ox_has_in(n, 3) && !(sizes = ox_in_const(cx, n, 3)))
    return frit_last_status(cx->ctx);
  if (scales && scales->n == 0) scales = NULL;
  if (sizes && sizes->n == 0) sizes = NULL;
  if (!scales && !sizes) {
    const int64_t *sv;
    if (ox_attr_ints(n, "scales", &sv) < 0) return ox_fail(cx, n, "neither scales nor sizes given");
  }
  if ((scales && scales->n != na) || (sizes && sizes->n != na)) return ox_fail(cx, n, "scales/sizes do not match the rank");
  double *sv = scales ? ox_const_doubles(cx, scales) : NULL;
  int64_t *zv = sizes ? ox_const_ints(cx, sizes) : NULL;
  if ((scales && !sv) || (sizes && !zv)) return ox_fail_frit(cx, n);
  int64_t in[FRIT_MAX_DIMS], out[FRIT_MAX_DIMS];
  double sc[FRIT_MAX_DIMS];
  for (int i = 0; i < na; i++) {
    in[i] = frit_tensor_dim_static(x, (int)axes[i]);
    if (in[i] <= 0) return ox_fail(cx, n, "symbolic or empty axes are not supported");
  }
  const char *policy = ox_attr_s(cx, n, "keep_aspect_ratio_policy", "stretch");
  if (zv && strcmp(policy, "stretch")) {
    bool larger = !strcmp(policy, "not_smaller");
    double s = larger ? 0 : INFINITY;
    for (int i = 0; i < na; i++) {
      double r = (double)zv[i] / (double)in[i];
      s = larger ? fmax(s, r) : fmin(s, r);
    }
    for (int i = 0; i < na; i++) sc[i] = s, out[i] = (int64_t)floor(s * (double)in[i] + 0.5);
  } else {
    for (int i = 0; i < na; i++) {
      out[i] = zv ? zv[i] : (int64_t)floor((double)in[i] * sv[i]);
      sc[i] = zv ? (double)out[i] / (double)in[i] : sv[i];
      if (out[i] <= 0 || out[i] > (1 << 20) || !(sc[i] > 0)) return ox_fail(cx, n, "bad output size");
    }
  }
  for (int i = 0; i < na && x; i++)
    if (out[i] != in[i] || sc[i] != 1) x = resize_axis(cx, &o, x, (int)axes[i], in[i], out[i], sc[i]);
  return ox_set_out(cx, n, 0, x);
}
