/* ONNX shape and movement ops. Shape-valued inputs (Reshape's shape, Slice's bounds, pads, axes)
 * must be build-time constants; integer shape arithmetic on such constants is folded here. */
#include <stdlib.h>
#include <string.h>

#include "import/onnx/onnx_internal.h"

#define IN_OR_FAIL(x, k)                                                                          \
  frit_tensor *x = ox_in(cx, n, k);                                                               \
  if (!x) return frit_last_status(cx->ctx)

static int static_dims(ox_cx *cx, const ox_node *n, frit_tensor *x, int64_t *dims) {
  int nd = frit_tensor_ndim(x);
  for (int d = 0; d < nd; d++) {
    dims[d] = frit_tensor_dim_static(x, d);
    if (dims[d] < 0) return ox_fail(cx, n, "dim %d of the input is symbolic (not supported here)", d), -1;
  }
  return nd;
}

/* Input k's integer values (a 1-D or 0-D constant) into v (at most max); the count or -1. */
static int const_ints(ox_cx *cx, const ox_node *n, int k, int64_t *v, int max) {
  const ox_const *c = ox_in_const(cx, n, k);
  if (!c) return -1;
  if (c->n > max) return ox_fail(cx, n, "input %d has %lld values (at most %d)", k, (long long)c->n, max), -1;
  int64_t *iv = ox_const_ints(cx, c);
  if (!iv) return ox_fail_frit(cx, n), -1;
  memcpy(v, iv, (size_t)c->n * sizeof *v);
  return (int)c->n;
}

static ox_const *const_i64(ox_cx *cx, int ndim, const int64_t *vals, int64_t count) {
  int64_t dims[1] = {count};
  ox_const *c = ox_const_new(cx, FRIT_I64, ndim, dims);
  if (c) memcpy((void *)c->data, vals, (size_t)count * sizeof *vals);
  return c;
}

frit_status ox_reshape(ox_cx *cx, const ox_node *n) {
  int64_t shape[FRIT_MAX_DIMS], in[FRIT_MAX_DIMS];
  int ns = const_ints(cx, n, 1, shape, FRIT_MAX_DIMS);
  if (ns < 0) return frit_last_status(cx->ctx);
  const ox_const *c = ox_in_const_opt(cx, n, 0);
  IN_OR_FAIL(x, 0);
  int nd = static_dims(cx, n, x, in);
  if (nd < 0) return frit_last_status(cx->ctx);
  bool allowzero = ox_attr_i(n, "allowzero", 0);
  for (int d = 0; d < ns; d++)
    if (shape[d] == 0 && !allowzero) {
      if (d >= nd) return ox_fail(cx, n, "shape[%d] is 0 (copy) but the input has rank %d", d, nd);
      shape[d] = in[d];
    }
  frit_tensor *r = frit_reshape(cx->ctx, x, ns, shape);
  if (r && c && c->n <= 4096) {
    /* a folded value stays folded: same data, new dims */
    ox_const *rc = ox_alloc(cx, sizeof *rc);
    if (!rc) return ox_fail(cx, n, "out of memory");
    *rc = *c;
    rc->ndim = ns;
    for (int d = 0; d < ns; d++) rc->dims[d] = frit_tensor_dim_static(r, d);
    return ox_set_out_const(cx, n, 0, rc);
  }
  return ox_set_out(cx, n, 0, r);
}

frit_status ox_transpose(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  int nd = frit_tensor_ndim(x), perm[FRIT_MAX_DIMS];
  const int64_t *p;
  int np = ox_attr_ints(n, "perm", &p);
  if (np >= 0 && np != nd) return ox_fail(cx, n, "perm has %d entries for rank %d", np, nd);
  for (int d = 0; d < nd; d++) perm[d] = np >= 0 ? (int)p[d] : nd - 1 - d;
  return ox_set_out(cx, n, 0, frit_permute(cx->ctx, x, perm));
}

frit_status ox_flatten(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  int64_t dims[FRIT_MAX_DIMS];
  int nd = static_dims(cx, n, x, dims);
  if (nd < 0) return frit_last_status(cx->ctx);
  int64_t axis = ox_attr_i(n, "axis", 1);
  if (axis < 0) axis += nd;
  if (axis < 0 || axis > nd) return ox_fail(cx, n, "axis %lld out of range for rank %d", (long long)axis, nd);
  int64_t out[2] = {1, 1};
  for (int d = 0; d < nd; d++) out[d < axis ? 0 : 1] *= dims[d];
  return ox_set_out(cx, n, 0, frit_reshape(cx->ctx, x, 2, out));
}

frit_status ox_squeeze(ox_cx *cx, const ox_node *n) {
  int64_t axes[FRIT_MAX_DIMS];
  int na = ox_axes(cx, n, "axes", 1, axes, FRIT_MAX_DIMS);
  if (na == -2) return frit_last_status(cx->ctx);
  const ox_const *c = ox_in_const_opt(cx, n, 0);
  IN_OR_FAIL(x, 0);
  int nd = frit_tensor_ndim(x), ax[FRIT_MAX_DIMS];
  for (int i = 0; i < na; i++) {
    if (!ox_axis(cx, n, &axes[i], nd)) return frit_last_status(cx->ctx);
    ax[i] = (int)axes[i];
  }
  frit_tensor *r = frit_squeeze(cx->ctx, x, ax, na < 0 ? 0 : na);
  if (r && c && c->n <= 4096) {
    ox_const *rc = ox_alloc(cx, sizeof *rc);
    if (!rc) return ox_fail(cx, n, "out of memory");
    *rc = *c;
    rc->ndim = frit_tensor_ndim(r);
    for (int d = 0; d < rc->ndim; d++) rc->dims[d] = frit_tensor_dim_static(r, d);
    return ox_set_out_const(cx, n, 0, rc);
  }
  return ox_set_out(cx, n, 0, r);
}

frit_status ox_unsqueeze(ox_cx *cx, const ox_node *n) {
  int64_t axes[FRIT_MAX_DIMS];
  int na = ox_axes(cx, n, "axes", 1, axes, FRIT_MAX_DIMS);
  if (na < 0) return na == -1 ? ox_fail(cx, n, "no axes") : frit_last_status(cx->ctx);
  const ox_const *c = ox_in_const_opt(cx, n, 0);
  IN_OR_FAIL(x, 0);
  int out_nd = frit_tensor_ndim(x) + na;
  if (out_nd > FRIT_MAX_DIMS) return ox_fail(cx, n, "rank %d (at most %d)", out_nd, FRIT_MAX_DIMS);
  bool mark[FRIT_MAX_DIMS] = {0};
  for (int i = 0; i < na; i++) {
    if (!ox_axis(cx, n, &axes[i], out_nd)) return frit_last_status(cx->ctx);
    if (mark[axes[i]]) return ox_fail(cx, n, "axis %lld repeated", (long long)axes[i]);
    mark[axes[i]] = true;
  }
  frit_tensor *r = x;
  for (int d = 0; d < out_nd && r; d++)
    if (mark[d]) r = frit_unsqueeze(cx->ctx, r, d);
  if (r && c && c->n <= 4096) {
    ox_const *rc = ox_alloc(cx, sizeof *rc);
    if (!rc) return ox_fail(cx, n, "out of memory");
    *rc = *c;
    rc->ndim = out_nd;
    for (int d = 0; d < out_nd; d++) rc->dims[d] = frit_tensor_dim_static(r, d);
    return ox_set_out_const(cx, n, 0, rc);
  }
  return ox_set_out(cx, n, 0, r);
}

frit_status ox_concat(ox_cx *cx, const ox_node *n) {
  int64_t axis = ox_attr_i(n, "axis", 0);
  int cnt = 0;
  bool folded = true;
  int64_t total = 0;
  for (size_t k = 0; k < n->n_input; k++) {
    if (!ox_has_in(n, (int)k)) continue;
    const ox_const *c = ox_in_const_opt(cx, n, (int)k);
    folded = folded && c && c->ndim == 1 && frit_dtype_is_int(c->dt);
    if (c) total += c->n;
    cnt++;
  }
  if (folded && cnt && total <= 4096) {
    /* shape vectors built from pieces (Shape -> Gather -> Concat -> Reshape) */
    int64_t *v = ox_alloc(cx, (size_t)(total ? total : 1) * sizeof *v), at = 0;
    frit_dtype dt = FRIT_VOID;
    for (size_t k = 0; k < n->n_input && v; k++) {
      if (!ox_has_in(n, (int)k)) continue;
      const ox_const *c = ox_in_const_opt(cx, n, (int)k);
      int64_t *iv = ox_const_ints(cx, c);
      if (!iv) return ox_fail_frit(cx, n);
      memcpy(v + at, iv, (size_t)c->n * sizeof *v);
      at += c->n, dt = c->dt;
    }
    if (v && dt == FRIT_I64) return ox_set_out_const(cx, n, 0, const_i64(cx, 1, v, total));
  }
  frit_tensor **xs = ox_alloc(cx, (n->n_input + 1) * sizeof *xs);
  if (!xs) return ox_fail(cx, n, "out of memory");
  cnt = 0;
  for (size_t k = 0; k < n->n_input; k++) {
    if (!ox_has_in(n, (int)k)) continue;
    if (!(xs[cnt++] = ox_in(cx, n, (int)k))) return frit_last_status(cx->ctx);
  }
  if (!cnt) return ox_fail(cx, n, "no inputs");
  if (!ox_axis(cx, n, &axis, frit_tensor_ndim(xs[0]))) return frit_last_status(cx->ctx);
  return ox_set_out(cx, n, 0, cnt == 1 ? xs[0] : frit_concat(cx->ctx, xs, cnt, (int)axis));
}

frit_status ox_slice(ox_cx *cx, const ox_node *n) {
  int64_t starts[FRIT_MAX_DIMS], ends[FRIT_MAX_DIMS], axes[FRIT_MAX_DIMS], steps[FRIT_MAX_DIMS];
  int ns, ne, na = -1, nst = -1;
  if (ox_attr(n, "starts")) { /* opset < 10 */
    const int64_t *p;
    ns = ox_attr_ints(n, "starts", &p);
    if (ns > FRIT_MAX_DIMS) return ox_fail(cx, n, "too many starts");
    memcpy(starts, p, (size_t)ns * sizeof *p);
    ne = ox_attr_ints(n, "ends", &p);
    if (ne < 0 || ne > FRIT_MAX_DIMS) return ox_fail(cx, n, "bad ends");
    memcpy(ends, p, (size_t)ne * sizeof *p);
    na = ox_attr_ints(n, "axes", &p);
    if (na > FRIT_MAX_DIMS) return ox_fail(cx, n, "too many axes");
    if (na > 0) memcpy(axes, p, (size_t)na * sizeof *p);
  } else {
    ns = const_ints(cx, n, 1, starts, FRIT_MAX_DIMS);
    ne = ns < 0 ? -1 : const_ints(cx, n, 2, ends, FRIT_MAX_DIMS);
    if (ne < 0) return frit_last_status(cx->ctx);
    if (ox_has_in(n, 3) && (na = const_ints(cx, n, 3, axes, FRIT_MAX_DIMS)) < 0) return frit_last_status(cx->ctx);
    if (ox_has_in(n, 4) && (nst = const_ints(cx, n, 4, steps, FRIT_MAX_DIMS)) < 0) return frit_last_status(cx->ctx);
  }
  if (ne != ns || (na >= 0 && na != ns) || (nst >= 0 && nst != ns))
    return ox_fail(cx, n, "starts, ends, axes and steps differ in length");
  const ox_const *c = ox_in_const_opt(cx, n, 0);
  IN_OR_FAIL(x, 0);
  int nd = frit_tensor_ndim(x);
  int64_t b[FRIT_MAX_DIMS], e[FRIT_MAX_DIMS], s[FRIT_MAX_DIMS];
  for (int d = 0; d < nd; d++) b[d] = e[d] = FRIT_SLICE_DEFAULT, s[d] = 1;
  for (int i = 0; i < ns; i++) {
    int64_t a = na >= 0 ? axes[i] : i;
    if (!ox_axis(cx, n, &a, nd)) return frit_last_status(cx->ctx);
    int64_t st = nst >= 0 ? steps[i] : 1;
    if (st == 0) return ox_fail(cx, n, "step 0");
    b[a] = starts[i], e[a] = ends[i], s[a] = st;
    /* huge bounds mean "to the end" (INT64_MIN is frit's "left out", which is the same) */
    if (e[a] < -(INT64_C(1) << 62)) e[a] = FRIT_SLICE_DEFAULT;
    if (b[a] < -(INT64_C(1) << 62)) b[a] = -(INT64_C(1) << 62);
  }
  frit_tensor *r = frit_slice(cx->ctx, x, b, e, s);
  if (r && c && nd == 1 && frit_dtype_is_int(c->dt) && c->n <= 4096) {
    int64_t *iv = ox_const_ints(cx, c);
    int64_t len = frit_tensor_dim_static(r, 0), dim = c->n, st = s[0], i0 = b[0];
    if (!iv) return ox_fail_frit(cx, n);
    /* numpy's start for this step (frit_slice agreed on the length) */
    if (i0 == FRIT_SLICE_DEFAULT) i0 = st > 0 ? 0 : dim - 1;
    else if (i0 < 0) i0 = i0 + dim < 0 ? (st > 0 ? 0 : -1) : i0 + dim;
    else if (i0 >= dim) i0 = st > 0 ? dim : dim - 1;
    int64_t *out = ox_alloc(cx, (size_t)(len ? len : 1) * sizeof *out);
    if (!out) return ox_fail(cx, n, "out of memory");
    for (int64_t k = 0; k < len; k++) out[k] = iv[i0 + k * st];
    if (c->dt == FRIT_I64) return ox_set_out_const(cx, n, 0, const_i64(cx, 1, out, len));
  }
  return ox_set_out(cx, n, 0, r);
}

frit_status ox_gather(ox_cx *cx, const ox_node *n) {
  int64_t axis = ox_attr_i(n, "axis", 0);
  const ox_const *c = ox_in_const_opt(cx, n, 0), *ci = ox_in_const_opt(cx, n, 1);
  if (c && ci && c->ndim == 1 && c->dt == FRIT_I64 && ci->ndim <= 1 && ci->n <= 4096) {
    int64_t *dv = ox_const_ints(cx, c), *iv = ox_const_ints(cx, ci);
    if (!dv || !iv) return ox_fail_frit(cx, n);
    int64_t *out = ox_alloc(cx, (size_t)(ci->n ? ci->n : 1) * sizeof *out);
    if (!out) return ox_fail(cx, n, "out of memory");
    for (int64_t k = 0; k < ci->n; k++) {
      int64_t i = iv[k] < 0 ? iv[k] + c->n : iv[k];
      if (i < 0 || i >= c->n) return ox_fail(cx, n, "index %lld out of range for %lld", (long long)iv[k], (long long)c->n);
      out[k] = dv[i];
    }
    return ox_set_out_const(cx, n, 0, const_i64(cx, ci->ndim, out, ci->n));
  }
  IN_OR_FAIL(x, 0);
  IN_OR_FAIL(idx, 1);
  if (!ox_axis(cx, n, &axis, frit_tensor_ndim(x))) return frit_last_status(cx->ctx);
  return ox_set_out(cx, n, 0, frit_take(cx->ctx, x, idx, (int)axis));
}

frit_status ox_gather_elements(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  IN_OR_FAIL(idx, 1);
  int64_t axis = ox_attr_i(n, "axis", 0);
  if (!ox_axis(cx, n, &axis, frit_tensor_ndim(x))) return frit_last_status(cx->ctx);
  return ox_set_out(cx, n, 0, frit_take_along_axis(cx->ctx, x, idx, (int)axis));
}

frit_status ox_pad(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  int nd = frit_tensor_ndim(x);
  int64_t pads[2 * FRIT_MAX_DIMS], axes[FRIT_MAX_DIMS];
  int np, na = -1;
  const int64_t *p;
  if ((np = ox_attr_ints(n, "pads", &p)) >= 0) { /* opset < 11 */
    if (np > 2 * FRIT_MAX_DIMS) return ox_fail(cx, n, "too many pads");
    memcpy(pads, p, (size_t)np * sizeof *p);
  } else if ((np = const_ints(cx, n, 1, pads, 2 * FRIT_MAX_DIMS)) < 0) {
    return frit_last_status(cx->ctx);
  }
  if (ox_has_in(n, 3) && (na = const_ints(cx, n, 3, axes, FRIT_MAX_DIMS)) < 0) return frit_last_status(cx->ctx);
  int cnt = na >= 0 ? na : nd;
  if (np != 2 * cnt) return ox_fail(cx, n, "%d pads for %d axes", np, cnt);
  int64_t before[FRIT_MAX_DIMS] = {0}, after[FRIT_MAX_DIMS] = {0}, cut_b[FRIT_MAX_DIMS], cut_e[FRIT_MAX_DIMS],
          one[FRIT_MAX_DIMS];
  bool cut = false;
  for (int i = 0; i < cnt; i++) {
    int64_t a = na >= 0 ? axes[i] : i;
    if (!ox_axis(cx, n, &a, nd)) return frit_last_status(cx->ctx);
    before[a] = pads[i], after[a] = pads[i + cnt];
  }
  /* negative pads remove elements: pad by the positive parts, then slice */
  for (int d = 0; d < nd; d++) {
    cut_b[d] = before[d] < 0 ? -before[d] : FRIT_SLICE_DEFAULT;
    cut_e[d] = after[d] < 0 ? after[d] : FRIT_SLICE_DEFAULT;
    cut = cut || before[d] < 0 || after[d] < 0;
    if (before[d] < 0) before[d] = 0;
    if (after[d] < 0) after[d] = 0;
    one[d] = 1;
  }
  const char *mode = ox_attr_s(cx, n, "mode", "constant");
  frit_pad_mode m;
  if (!strcmp(mode, "constant")) m = FRIT_PAD_CONSTANT;
  else if (!strcmp(mode, "reflect")) m = FRIT_PAD_REFLECT;
  else if (!strcmp(mode, "edge")) m = FRIT_PAD_EDGE;
  else if (!strcmp(mode, "wrap")) m = FRIT_PAD_WRAP;
  else return ox_fail(cx, n, "unsupported mode '%s'", mode);
  double value = ox_attr_f(n, "value", 0);
  if (ox_has_in(n, 2)) {
    const ox_const *cv = ox_in_const(cx, n, 2);
    if (!cv) return frit_last_status(cx->ctx);
    double *dv = cv->n ? ox_const_doubles(cx, cv) : NULL;
    if (cv->n && !dv) return ox_fail_frit(cx, n);
    value = cv->n ? dv[0] : 0;
  }
  frit_tensor *r = frit_pad(cx->ctx, x, before, after, m, value);
  if (r && cut) r = frit_slice(cx->ctx, r, cut_b, cut_e, one);
  return ox_set_out(cx, n, 0, r);
}

frit_status ox_expand(ox_cx *cx, const ox_node *n) {
  int64_t shape[FRIT_MAX_DIMS], in[FRIT_MAX_DIMS], out[FRIT_MAX_DIMS];
  int ns = const_ints(cx, n, 1, shape, FRIT_MAX_DIMS);
  if (ns < 0) return frit_last_status(cx->ctx);
  IN_OR_FAIL(x, 0);
  int nd = static_dims(cx, n, x, in);
  if (nd < 0) return frit_last_status(cx->ctx);
  int on = nd > ns ? nd : ns;
  for (int d = 0; d < on; d++) {
    int64_t a = d - (on - nd) >= 0 ? in[d - (on - nd)] : 1, b = d - (on - ns) >= 0 ? shape[d - (on - ns)] : 1;
    if (a != b && a != 1 && b != 1)
      return ox_fail(cx, n, "cannot broadcast %s to the shape given (dim %d: %lld vs %lld)",
                     frit_tensor_shape_str(cx->ctx, x), d, (long long)a, (long long)b);
    out[d] = a == 1 ? b : a;
  }
  return ox_set_out(cx, n, 0, frit_broadcast_to(cx->ctx, x, on, out));
}

frit_status ox_tile(ox_cx *cx, const ox_node *n) {
  int64_t reps[FRIT_MAX_DIMS];
  int nr = const_ints(cx, n, 1, reps, FRIT_MAX_DIMS);
  if (nr < 0) return frit_last_status(cx->ctx);
  IN_OR_FAIL(x, 0);
  return ox_set_out(cx, n, 0, frit_tile(cx->ctx, x, nr, reps));
}

frit_status ox_split(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  int nd = frit_tensor_ndim(x);
  int64_t axis = ox_attr_i(n, "axis", 0);
  if (!ox_axis(cx, n, &axis, nd)) return frit_last_status(cx->ctx);
  int64_t dim = frit_tensor_dim_static(x, (int)axis);
  if (dim < 0) return ox_fail(cx, n, "the split axis is symbolic");
  int nout = (int)n->n_output;
  int64_t *sizes = ox_alloc(cx, (size_t)(nout + 1) * sizeof *sizes);
  if (!sizes) return ox_fail(cx, n, "out of memory");
  const int64_t *p;
  int nsz = ox_attr_ints(n, "split", &p);
  if (nsz >= 0) {
    if (nsz != nout) return ox_fail(cx, n, "split has %d sizes for %d outputs", nsz, nout);
    memcpy(sizes, p, (size_t)nsz * sizeof *p);
  } else if (ox_has_in(n, 1)) {
    const ox_const *c = ox_in_const(cx, n, 1);
    if (!c) return frit_last_status(cx->ctx);
    if (c->n != nout) return ox_fail(cx, n, "split has %lld sizes for %d outputs", (long long)c->n, nout);
    int64_t *iv = ox_const_ints(cx, c);
    if (!iv) return ox_fail_frit(cx, n);
    memcpy(sizes, iv, (size_t)nout * sizeof *iv);
  } else {
    /* equal parts; the last one smaller when they do not divide (num_outputs, opset 18) */
    int64_t part = (dim + nout - 1) / (nout ? nout : 1);
    for (int k = 0; k < nout; k++) sizes[k] = k < nout - 1 ? part : dim - part * (nout - 1);
  }
  int64_t at = 0;
  for (int k = 0; k < nout; k++) {
    int64_t b[FRIT_MAX_DIMS], e[FRIT_MAX_DIMS], s[FRIT_MAX_DIMS];
    for (int d = 0; d < nd; d++) b[d] = e[d] = FRIT_SLICE_DEFAULT, s[d] = 1;
    if (sizes[k] < 0) return ox_fail(cx, n, "negative split size");
    b[axis] = at, e[axis] = at + sizes[k];
    at += sizes[k];
    frit_status st = ox_set_out(cx, n, k, frit_slice(cx->ctx, x, b, e, s));
    if (st) return st;
  }
  if (at != dim) return ox_fail(cx, n, "split sizes add up to %lld, the axis has %lld", (long long)at, (long long)dim);
  return FRIT_OK;
}

frit_status ox_shape(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  int64_t dims[FRIT_MAX_DIMS];
  int nd = static_dims(cx, n, x, dims);
  if (nd < 0) return frit_last_status(cx->ctx);
  int64_t start = ox_attr_i(n, "start", 0), end = ox_attr_i(n, "end", nd);
  if (start < 0) start += nd;
  if (end < 0) end += nd;
  start = start < 0 ? 0 : start > nd ? nd : start;
  end = end < start ? start : end > nd ? nd : end;
  return ox_set_out_const(cx, n, 0, const_i64(cx, 1, dims + start, end - start));
}

frit_status ox_size(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  int64_t dims[FRIT_MAX_DIMS], total = 1;
  int nd = static_dims(cx, n, x, dims);
  if (nd < 0) return frit_last_status(cx->ctx);
  for (int d = 0; d < nd; d++) total *= dims[d];
  return ox_set_out_const(cx, n, 0, const_i64(cx, 0, &total, 1));
}

frit_status ox_constant_of_shape(ox_cx *cx, const ox_node *n) {
  int64_t shape[FRIT_MAX_DIMS];
  int ns = const_ints(cx, n, 0, shape, FRIT_MAX_DIMS);
  if (ns < 0) return frit_last_status(cx->ctx);
  frit_dtype dt = FRIT_F32;
  double fv = 0;
  int64_t iv = 0;
  const FritOnnx__AttributeProto *a = ox_attr(n, "value");
  if (a && a->t) {
    int ndim;
    int64_t dims[FRIT_MAX_DIMS];
    void *data;
    if (ox_tensor_data(cx->ctx, a->t, NULL, "value", &dt, &ndim, dims, &data)) return ox_fail_frit(cx, n);
    ox_const c = {.dt = dt, .ndim = 0, .n = 1, .data = data};
    int64_t *ivp = frit_dtype_is_float(dt) ? NULL : ox_const_ints(cx, &c);
    double *fvp = frit_dtype_is_float(dt) ? ox_const_doubles(cx, &c) : NULL;
    if (ivp) iv = ivp[0];
    if (fvp) fv = fvp[0];
    free(data);
    if (!ivp && !fvp) return ox_fail(cx, n, "unsupported value dtype");
  }
  int64_t total = 1;
  for (int d = 0; d < ns; d++) total *= shape[d];
  if (!frit_dtype_is_float(dt) && dt == FRIT_I64 && total <= 4096) {
    ox_const *c = ox_const_new(cx, dt, ns, shape);
    if (!c) return ox_fail(cx, n, "out of memory");
    for (int64_t i = 0; i < total; i++) ((int64_t *)c->data)[i] = iv;
    return ox_set_out_const(cx, n, 0, c);
  }
  return ox_set_out(cx, n, 0, frit_dtype_is_float(dt) ? frit_full(cx->ctx, dt, ns, shape, fv)
                                                       : frit_full_i(cx->ctx, dt, ns, shape, iv));
}

frit_status ox_range(ox_cx *cx, const ox_node *n) {
  const ox_const *c[3];
  for (int k = 0; k < 3; k++)
    if (!(c[k] = ox_in_const(cx, n, k))) return frit_last_status(cx->ctx);
  frit_dtype dt = c[0]->dt;
  if (frit_dtype_is_float(dt)) {
    double *v[3];
    for (int k = 0; k < 3; k++)
      if (!(v[k] = ox_const_doubles(cx, c[k]))) return ox_fail_frit(cx, n);
    return ox_set_out(cx, n, 0, frit_arange(cx->ctx, v[0][0], v[1][0], v[2][0], dt));
  }
  int64_t *v[3];
  for (int k = 0; k < 3; k++)
    if (!(v[k] = ox_const_ints(cx, c[k]))) return ox_fail_frit(cx, n);
  int64_t s = v[0][0], l = v[1][0], d = v[2][0];
  if (d == 0) return ox_fail(cx, n, "delta 0");
  int64_t cnt = d > 0 ? (l - s + d - 1) / d : (s - l - d - 1) / -d;
  if (cnt < 0) cnt = 0;
  if (dt == FRIT_I64 && cnt <= 4096) {
    int64_t *out = ox_alloc(cx, (size_t)(cnt ? cnt : 1) * sizeof *out);
    if (!out) return ox_fail(cx, n, "out of memory");
    for (int64_t i = 0; i < cnt; i++) out[i] = s + i * d;
    return ox_set_out_const(cx, n, 0, const_i64(cx, 1, out, cnt));
  }
  return ox_set_out(cx, n, 0, frit_arange(cx->ctx, (double)s, (double)(s + cnt * d), (double)d, dt));
}

frit_status ox_constant(ox_cx *cx, const ox_node *n) {
  if (ox_attr(n, "value")) return FRIT_OK; /* a weight, bound before the walk */
  const FritOnnx__AttributeProto *a;
  if ((a = ox_attr(n, "value_int"))) return ox_set_out_const(cx, n, 0, const_i64(cx, 0, &a->i, 1));
  if ((a = ox_attr(n, "value_ints"))) return ox_set_out_const(cx, n, 0, const_i64(cx, 1, a->ints, (int64_t)a->n_ints));
  if ((a = ox_attr(n, "value_float")) || (a = ox_attr(n, "value_floats"))) {
    bool one = !strcmp(ox_s(a->name), "value_float");
    int64_t cnt = one ? 1 : (int64_t)a->n_floats;
    ox_const *c = ox_const_new(cx, FRIT_F32, one ? 0 : 1, &cnt);
    if (!c) return ox_fail(cx, n, "out of memory");
    for (int64_t i = 0; i < cnt; i++) ((float *)c->data)[i] = one ? a->f : a->floats[i];
    return ox_set_out_const(cx, n, 0, c);
  }
  return ox_fail(cx, n, "unsupported value kind (sparse and string constants are not supported)");
}

frit_status ox_onehot(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(idx, 0);
  IN_OR_FAIL(values, 2);
  const ox_const *dc = ox_in_const(cx, n, 1);
  if (!dc) return frit_last_status(cx->ctx);
  double *dv = ox_const_doubles(cx, dc);
  if (!dv || dc->n != 1) return ox_fail(cx, n, "depth must be one number");
  int64_t depth = (int64_t)dv[0], axis = ox_attr_i(n, "axis", -1);
  int nd = frit_tensor_ndim(idx);
  if (!ox_axis(cx, n, &axis, nd + 1)) return frit_last_status(cx->ctx);
  frit_ctx *c = cx->ctx;
  frit_tensor *i64 = frit_astype(c, idx, FRIT_I64), *d = frit_scalar_i(c, FRIT_I64, depth);
  i64 = frit_where(c, frit_binary_t(c, FRIT_BF_LT, i64, frit_scalar_i(c, FRIT_I64, 0)),
                   frit_binary_t(c, FRIT_BF_ADD, i64, d), i64);
  frit_tensor *oh = frit_one_hot(c, i64, depth, FRIT_BOOL);
  frit_tensor *off = frit_take(c, values, frit_scalar_i(c, FRIT_I64, 0), 0);
  frit_tensor *on = frit_take(c, values, frit_scalar_i(c, FRIT_I64, 1), 0);
  frit_tensor *r = frit_where(c, oh, on, off);
  if (r && axis != nd) {
    int perm[FRIT_MAX_DIMS], k = 0;
    for (int a = 0; a <= nd; a++) perm[a] = a == axis ? nd : k++;
    r = frit_permute(c, r, perm);
  }
  return ox_set_out(cx, n, 0, r);
}

/* DepthToSpace / SpaceToDepth on (N, C, H, W): a reshape, a transpose and a reshape. */
frit_status ox_depth_to_space(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  int64_t d[FRIT_MAX_DIMS], b = ox_attr_i(n, "blocksize", 0);
  if (static_dims(cx, n, x, d) != 4 || b <= 0 || d[1] % (b * b)) return ox_fail(cx, n, "needs rank 4 and C divisible by blocksize^2");
  bool crd = !strcmp(ox_attr_s(cx, n, "mode", "DCR"), "CRD");
  int64_t c = d[1] / (b * b);
  int64_t s1[6] = {d[0], b, b, c, d[2], d[3]}, s2[6] = {d[0], c, b, b, d[2], d[3]};
  int p1[6] = {0, 3, 4, 1, 5, 2}, p2[6] = {0, 1, 4, 2, 5, 3};
  frit_tensor *r = frit_reshape(cx->ctx, x, 6, crd ? s2 : s1);
  r = frit_permute(cx->ctx, r, crd ? p2 : p1);
  return ox_set_out(cx, n, 0, frit_reshape(cx->ctx, r, 4, (int64_t[]){d[0], c, d[2] * b, d[3] * b}));
}

frit_status ox_space_to_depth(ox_cx *cx, const ox_node *n) {
  IN_OR_FAIL(x, 0);
  int64_t d[FRIT_MAX_DIMS], b = ox_attr_i(n, "blocksize", 0);
  if (static_dims(cx, n, x, d) != 4 || b <= 0 || d[2] % b || d[3] % b)
    return ox_fail(cx, n, "needs rank 4 and H, W divisible by blocksize");
  frit_tensor *r = frit_reshape(cx->ctx, x, 6, (int64_t[]){d[0], d[1], d[2] / b, b, d[3] / b, b});
  r = frit_permute(cx->ctx, r, (int[]){0, 3, 5, 1, 2, 4});
  return ox_set_out(cx, n, 0, frit_reshape(cx->ctx, r, 4, (int64_t[]){d[0], d[1] * b * b, d[2] / b, d[3] / b}));
}
