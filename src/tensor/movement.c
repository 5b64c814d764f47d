/* Movement ops of the tensor frontend: raw Contract-1 builders (RESHAPE, EXPAND, PERMUTE, PAD,
 * SHRINK, FLIP, ...), numpy broadcasting, and reshape/slice/pad/concat/tile built on them. */
#include "tensor/tensor_internal.h"

#include <math.h>

static frit_tensor *fin(frit_ctx *ctx, frit_uop *u) {
  if (!u || !frit_shape_of(ctx, u)) return NULL;
  return TI_T(u);
}

static bool dims_present(frit_uop *const *d, int n) {
  for (int i = 0; i < n; i++)
    if (!d[i]) return false;
  return true;
}

static bool same_dims(const frit_shape *s, int ndim, frit_uop *const *dims) {
  if (s->ndim != ndim) return false;
  for (int i = 0; i < ndim; i++)
    if (!ti_dim_eq(s->dims[i], dims[i])) return false;
  return true;
}

/* ---------- raw builders ---------- */

frit_tensor *ti_reshape(frit_ctx *ctx, frit_tensor *x, int ndim, frit_uop *const *dims) {
  if (!x || !dims_present(dims, ndim)) return NULL;
  frit_uop *u = TI_U(x);
  if (same_dims(ti_shape(ctx, x), ndim, dims)) return x;
  if (u->op == FRIT_OP_RESHAPE) { /* a reshape of a reshape is one reshape */
    u = u->src[0];
    if (same_dims(u->shape, ndim, dims)) return TI_T(u);
  }
  frit_uop *src[1 + FRIT_MAX_DIMS];
  src[0] = u;
  memcpy(src + 1, dims, (size_t)ndim * sizeof *dims);
  return fin(ctx, frit_uop_new(ctx, FRIT_OP_RESHAPE, u->dtype, src, 1 + ndim, NULL));
}

frit_tensor *ti_expand(frit_ctx *ctx, frit_tensor *x, int ndim, frit_uop *const *dims) {
  if (!x || !dims_present(dims, ndim)) return NULL;
  if (same_dims(ti_shape(ctx, x), ndim, dims)) return x;
  frit_uop *src[1 + FRIT_MAX_DIMS];
  src[0] = TI_U(x);
  memcpy(src + 1, dims, (size_t)ndim * sizeof *dims);
  return fin(ctx, frit_uop_new(ctx, FRIT_OP_EXPAND, TI_U(x)->dtype, src, 1 + ndim, NULL));
}

static frit_tensor *with_ints(frit_ctx *ctx, frit_op op, frit_tensor *x, const int64_t *ints, int n, int64_t i0,
                              int64_t i1, frit_uop *src1) {
  frit_arg a = frit_arg_none();
  a.i0 = i0, a.i1 = i1;
  if (n) a.blob = ints, a.n = (uint32_t)n, a.blob_kind = FRIT_BLOB_INTS;
  frit_uop *src[2] = {TI_U(x), src1};
  return fin(ctx, frit_uop_new(ctx, op, TI_U(x)->dtype, src, src1 ? 2 : 1, &a));
}

frit_tensor *ti_permute(frit_ctx *ctx, frit_tensor *x, const int *perm) {
  if (!x) return NULL;
  int nd = ti_shape(ctx, x)->ndim;
  int64_t p[FRIT_MAX_DIMS];
  bool ident = true;
  for (int i = 0; i < nd; i++) p[i] = perm[i], ident &= perm[i] == i;
  return ident ? x : with_ints(ctx, FRIT_OP_PERMUTE, x, p, nd, 0, 0, NULL);
}

static frit_tensor *begin_end(frit_ctx *ctx, frit_op op, frit_tensor *x, frit_uop *const *b, frit_uop *const *e) {
  if (!x) return NULL;
  const frit_shape *s = ti_shape(ctx, x);
  int n = s->ndim;
  if (!dims_present(b, n) || !dims_present(e, n)) return NULL;
  bool noop = true;
  for (int i = 0; i < n && noop; i++)
    noop = op == FRIT_OP_PAD ? frit_dim_value(b[i]) == 0 && frit_dim_value(e[i]) == 0
                             : frit_dim_value(b[i]) == 0 && ti_dim_eq(e[i], s->dims[i]);
  if (noop) return x;
  frit_uop *src[1 + 2 * FRIT_MAX_DIMS];
  src[0] = TI_U(x);
  memcpy(src + 1, b, (size_t)n * sizeof *b);
  memcpy(src + 1 + n, e, (size_t)n * sizeof *e);
  return fin(ctx, frit_uop_new(ctx, op, TI_U(x)->dtype, src, 1 + 2 * n, NULL));
}

frit_tensor *ti_pad(frit_ctx *ctx, frit_tensor *x, frit_uop *const *before, frit_uop *const *after) {
  return begin_end(ctx, FRIT_OP_PAD, x, before, after);
}
frit_tensor *ti_shrink(frit_ctx *ctx, frit_tensor *x, frit_uop *const *begin, frit_uop *const *end) {
  return begin_end(ctx, FRIT_OP_SHRINK, x, begin, end);
}

frit_tensor *ti_flip(frit_ctx *ctx, frit_tensor *x, const bool *mask) {
  if (!x) return NULL;
  const frit_shape *s = ti_shape(ctx, x);
  int64_t ax[FRIT_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < s->ndim; i++) /* flipping a size-1 axis changes nothing */
    if (mask[i] && frit_dim_value(s->dims[i]) != 1 && frit_dim_value(s->dims[i]) != 0) ax[n++] = i;
  return n ? with_ints(ctx, FRIT_OP_FLIP, x, ax, n, 0, 0, NULL) : x;
}

frit_tensor *ti_reduce_axis(frit_ctx *ctx, frit_tensor *x, frit_op op, const bool *mask) {
  if (!x) return NULL;
  int64_t ax[FRIT_MAX_DIMS];
  int n = 0, nd = ti_shape(ctx, x)->ndim;
  for (int i = 0; i < nd; i++)
    if (mask[i]) ax[n++] = i;
  if (n == nd && nd > 0) {
    frit_tensor *staged = ti_staged_whole_reduce(ctx, x, op);
    if (staged) return staged;
  }
  return with_ints(ctx, FRIT_OP_REDUCE_AXIS, x, ax, n, op, 0, NULL);
}

frit_tensor *ti_scan(frit_ctx *ctx, frit_tensor *x, frit_op op, int axis) {
  if (!x) return NULL;
  return with_ints(ctx, FRIT_OP_SCAN, x, NULL, 0, op, axis, NULL);
}

frit_tensor *ti_gather(frit_ctx *ctx, frit_tensor *x, frit_tensor *idx, int axis) {
  if (!x || !idx) return NULL;
  return with_ints(ctx, FRIT_OP_GATHER, x, NULL, 0, axis, 0, TI_U(idx));
}

/* ---------- axes ---------- */

int ti_axis(frit_ctx *ctx, const char *op, frit_tensor *x, int axis, int ndim) {
  if (axis < -ndim || axis >= ndim) {
    if (x)
      TI_FAIL1(ctx, op, x, "axis %d is out of bounds for array of dimension %d", axis, ndim);
    else
      ti_fail(ctx, op, NULL, 0, "axis %d is out of bounds for array of dimension %d", axis, ndim);
    return -1;
  }
  return axis < 0 ? axis + ndim : axis;
}

int ti_axes_mask(frit_ctx *ctx, const char *op, frit_tensor *x, const int *axes, int naxes, int ndim, bool *mask) {
  for (int i = 0; i < ndim; i++) mask[i] = naxes == FRIT_ALL_AXES;
  if (naxes == FRIT_ALL_AXES) return ndim;
  if (naxes < 0 || naxes > ndim) {
    TI_FAIL1(ctx, op, x, "%d axes given for an array of dimension %d", naxes, ndim);
    return -1;
  }
  for (int i = 0; i < naxes; i++) {
    int a = ti_axis(ctx, op, x, axes[i], ndim);
    if (a < 0) return -1;
    if (mask[a]) {
      TI_FAIL1(ctx, op, x, "repeated axis %d", axes[i]);
      return -1;
    }
    mask[a] = true;
  }
  return naxes;
}

/* ---------- broadcasting ---------- */

static const char *dims_text(frit_ctx *ctx, int ndim, frit_uop *const *dims, char *buf, size_t n) {
  frit_shape *s = frit_arena_alloc(&ctx->arena, sizeof *s + (size_t)(ndim + 1) * sizeof(frit_uop *));
  if (!s) return "?";
  s->ndim = ndim;
  memcpy(s->dims, dims, (size_t)ndim * sizeof *dims);
  return ti_shape_text(s, buf, n);
}

bool ti_broadcast_shapes(frit_ctx *ctx, const char *op, frit_tensor *const *ts, int n, int *ndim, frit_uop **dims) {
  int nd = 0;
  for (int i = 0; i < n; i++) {
    int k = ti_shape(ctx, ts[i])->ndim;
    nd = k > nd ? k : nd;
  }
  for (int p = 0; p < nd; p++) {
    frit_uop *r = NULL;
    for (int i = 0; i < n; i++) {
      const frit_shape *s = ti_shape(ctx, ts[i]);
      int k = s->ndim - nd + p;
      if (k < 0) continue;
      frit_uop *d = s->dims[k];
      if (!r || frit_dim_value(r) == 1) r = d;
      else if (!ti_dim_eq(r, d) && frit_dim_value(d) != 1) {
        ti_fail(ctx, op, ts, n, "operands could not be broadcast together");
        return false;
      }
    }
    dims[p] = r;
  }
  *ndim = nd;
  return true;
}

frit_tensor *ti_broadcast(frit_ctx *ctx, const char *op, frit_tensor *x, int ndim, frit_uop *const *dims) {
  if (!x || !dims_present(dims, ndim)) return NULL;
  const frit_shape *s = ti_shape(ctx, x);
  char b[256];
  if (s->ndim > ndim)
    return TI_FAIL1(ctx, op, x, "cannot broadcast to shape %s (fewer dims)", dims_text(ctx, ndim, dims, b, sizeof b));
  frit_uop *mid[FRIT_MAX_DIMS];
  int lead = ndim - s->ndim;
  for (int i = 0; i < ndim; i++) {
    if (i < lead) {
      mid[i] = ti_dim(ctx, 1);
      continue;
    }
    frit_uop *d = s->dims[i - lead];
    if (!ti_dim_eq(d, dims[i]) && frit_dim_value(d) != 1)
      return TI_FAIL1(ctx, op, x, "cannot broadcast to shape %s", dims_text(ctx, ndim, dims, b, sizeof b));
    mid[i] = d;
  }
  return ti_expand(ctx, ti_reshape(ctx, x, ndim, mid), ndim, dims);
}

bool ti_broadcast2(frit_ctx *ctx, const char *op, frit_tensor **a, frit_tensor **b) {
  if (!*a || !*b) return ti_ok(ctx, op, (frit_tensor *const[]){*a, *b}, 2);
  frit_tensor *ts[2] = {*a, *b};
  frit_uop *dims[FRIT_MAX_DIMS];
  int nd;
  if (!ti_broadcast_shapes(ctx, op, ts, 2, &nd, dims)) return false;
  *a = ti_broadcast(ctx, op, ts[0], nd, dims);
  *b = ti_broadcast(ctx, op, ts[1], nd, dims);
  return *a && *b;
}

/* ---------- reshape family ---------- */

/* A dim expression known to be >= 0: by range analysis, or as a product of such (products of
 * several wide-ranged dims overflow the analysis although every real size fits). */
static bool nonneg_dim_rec(const frit_uop *d, int depth) {
  if (d->vmin >= 0) return true;
  return d->op == FRIT_OP_MUL && depth < 64 && nonneg_dim_rec(d->src[0], depth + 1) && nonneg_dim_rec(d->src[1], depth + 1);
}
static bool nonneg_dim(const frit_uop *d) { return nonneg_dim_rec(d, 0); }

frit_tensor *frit_reshape_sym(frit_ctx *ctx, frit_tensor *x, int ndim, frit_uop *const *dims) {
  if (!ti_ok(ctx, "reshape", &x, 1)) return NULL;
  if (ndim < 0 || ndim > FRIT_MAX_DIMS) return TI_FAIL1(ctx, "reshape", x, "rank %d outside 0..%d", ndim, FRIT_MAX_DIMS);
  frit_uop *canon[FRIT_MAX_DIMS];
  if (!ti_canon_dims(ctx, ndim, dims, canon)) return NULL;
  dims = canon;
  for (int i = 0; i < ndim; i++)
    if (!dims[i] || dims[i]->dtype != FRIT_I64 || !nonneg_dim(dims[i]))
      return dims[i] || ctx->status == FRIT_OK
                 ? TI_FAIL1(ctx, "reshape", x, "dim %d must be a non-negative i64 expression", i)
                 : NULL;
  const frit_shape *s = ti_shape(ctx, x);
  frit_uop *a = frit_shape_numel(ctx, s), *b = ti_dim(ctx, 1);
  for (int i = 0; i < ndim; i++) b = ti_dim_mul(ctx, b, dims[i]);
  if (!a || !b) return NULL;
  if (!ti_dim_eq(a, b)) {
    frit_uop *d = ti_dim_sub(ctx, a, b);
    if (!d) return NULL;
    if (d->op != FRIT_OP_CONST || d->arg.value.i != 0) {
      char t1[256], t2[256];
      return TI_FAIL1(ctx, "reshape", x, "cannot reshape array of size %s into shape %s",
                      dims_text(ctx, 1, &a, t1, sizeof t1), dims_text(ctx, ndim, dims, t2, sizeof t2));
    }
  }
  return ti_reshape(ctx, x, ndim, dims);
}

frit_tensor *frit_reshape(frit_ctx *ctx, frit_tensor *x, int ndim, const int64_t *dims) {
  if (!ti_ok(ctx, "reshape", &x, 1)) return NULL;
  if (ndim < 0 || ndim > FRIT_MAX_DIMS) return TI_FAIL1(ctx, "reshape", x, "rank %d outside 0..%d", ndim, FRIT_MAX_DIMS);
  int unknown = -1;
  int64_t known = 1;
  for (int i = 0; i < ndim; i++) {
    if (dims[i] == -1) {
      if (unknown >= 0) return TI_FAIL1(ctx, "reshape", x, "can only specify one unknown dimension");
      unknown = i;
    } else if (dims[i] < 0) {
      return TI_FAIL1(ctx, "reshape", x, "negative dimension %lld", (long long)dims[i]);
    } else {
      known *= dims[i];
    }
  }
  frit_uop *d[FRIT_MAX_DIMS];
  for (int i = 0; i < ndim; i++) d[i] = i == unknown ? NULL : ti_dim(ctx, dims[i]);
  if (unknown >= 0) {
    int64_t n = frit_dim_value(frit_shape_numel(ctx, ti_shape(ctx, x)));
    if (n < 0) return TI_FAIL1(ctx, "reshape", x, "-1 needs a static shape; use reshape_sym");
    if (known == 0 || n % known != 0) {
      char t[256];
      frit_uop *shown[FRIT_MAX_DIMS];
      for (int i = 0; i < ndim; i++) shown[i] = i == unknown ? frit_const_int(ctx, FRIT_I64, -1) : d[i];
      return TI_FAIL1(ctx, "reshape", x, "cannot reshape array of size %lld into shape %s", (long long)n,
                      dims_text(ctx, ndim, shown, t, sizeof t));
    }
    d[unknown] = ti_dim(ctx, n / known);
  }
  return frit_reshape_sym(ctx, x, ndim, d);
}

frit_tensor *frit_permute(frit_ctx *ctx, frit_tensor *x, const int *perm) {
  if (!ti_ok(ctx, "permute", &x, 1)) return NULL;
  int nd = ti_shape(ctx, x)->ndim;
  int p[FRIT_MAX_DIMS];
  bool seen[FRIT_MAX_DIMS] = {0};
  for (int i = 0; i < nd; i++) {
    int a = ti_axis(ctx, "permute", x, perm[i], nd);
    if (a < 0) return NULL;
    if (seen[a]) return TI_FAIL1(ctx, "permute", x, "repeated axis in transpose");
    seen[a] = true;
    p[i] = a;
  }
  return ti_permute(ctx, x, p);
}

frit_tensor *frit_transpose(frit_ctx *ctx, frit_tensor *x) {
  if (!ti_ok(ctx, "transpose", &x, 1)) return NULL;
  int nd = ti_shape(ctx, x)->ndim, p[FRIT_MAX_DIMS];
  for (int i = 0; i < nd; i++) p[i] = nd - 1 - i;
  return ti_permute(ctx, x, p);
}

frit_tensor *frit_broadcast_to_sym(frit_ctx *ctx, frit_tensor *x, int ndim, frit_uop *const *dims) {
  if (!ti_ok(ctx, "broadcast_to", &x, 1)) return NULL;
  if (ndim < 0 || ndim > FRIT_MAX_DIMS) return TI_FAIL1(ctx, "broadcast_to", x, "rank %d outside 0..%d", ndim, FRIT_MAX_DIMS);
  frit_uop *canon[FRIT_MAX_DIMS];
  if (!ti_canon_dims(ctx, ndim, dims, canon)) return NULL;
  dims = canon;
  for (int i = 0; i < ndim; i++)
    if (!dims[i] || dims[i]->dtype != FRIT_I64 || !nonneg_dim(dims[i]))
      return dims[i] || ctx->status == FRIT_OK
                 ? TI_FAIL1(ctx, "broadcast_to", x, "dim %d must be a non-negative i64 expression", i)
                 : NULL;
  return ti_broadcast(ctx, "broadcast_to", x, ndim, dims);
}

frit_tensor *frit_broadcast_to(frit_ctx *ctx, frit_tensor *x, int ndim, const int64_t *dims) {
  if (!ti_ok(ctx, "broadcast_to", &x, 1)) return NULL;
  if (ndim < 0 || ndim > FRIT_MAX_DIMS) return TI_FAIL1(ctx, "broadcast_to", x, "rank %d outside 0..%d", ndim, FRIT_MAX_DIMS);
  frit_uop *d[FRIT_MAX_DIMS];
  for (int i = 0; i < ndim; i++)
    if (dims[i] < 0) return TI_FAIL1(ctx, "broadcast_to", x, "negative dimension %lld", (long long)dims[i]);
  if (!ti_dims_from_ints(ctx, ndim, dims, d)) return NULL;
  return ti_broadcast(ctx, "broadcast_to", x, ndim, d);
}

frit_tensor *frit_squeeze(frit_ctx *ctx, frit_tensor *x, const int *axes, int naxes) {
  if (!ti_ok(ctx, "squeeze", &x, 1)) return NULL;
  const frit_shape *s = ti_shape(ctx, x);
  bool mask[FRIT_MAX_DIMS];
  if (naxes <= 0) {
    for (int i = 0; i < s->ndim; i++) mask[i] = frit_dim_value(s->dims[i]) == 1;
  } else {
    if (ti_axes_mask(ctx, "squeeze", x, axes, naxes, s->ndim, mask) < 0) return NULL;
    for (int i = 0; i < s->ndim; i++)
      if (mask[i] && frit_dim_value(s->dims[i]) != 1)
        return TI_FAIL1(ctx, "squeeze", x, "cannot select an axis to squeeze out which has size not equal to one (axis %d)", i);
  }
  frit_uop *d[FRIT_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < s->ndim; i++)
    if (!mask[i]) d[n++] = s->dims[i];
  return ti_reshape(ctx, x, n, d);
}

frit_tensor *frit_unsqueeze(frit_ctx *ctx, frit_tensor *x, int axis) {
  if (!ti_ok(ctx, "unsqueeze", &x, 1)) return NULL;
  const frit_shape *s = ti_shape(ctx, x);
  if (s->ndim == FRIT_MAX_DIMS) return TI_FAIL1(ctx, "unsqueeze", x, "rank would exceed %d", FRIT_MAX_DIMS);
  int a = ti_axis(ctx, "unsqueeze", x, axis, s->ndim + 1);
  if (a < 0) return NULL;
  frit_uop *d[FRIT_MAX_DIMS];
  for (int i = 0, k = 0; i <= s->ndim; i++) d[i] = i == a ? ti_dim(ctx, 1) : s->dims[k++];
  return ti_reshape(ctx, x, s->ndim + 1, d);
}

frit_tensor *frit_flip(frit_ctx *ctx, frit_tensor *x, const int *axes, int naxes) {
  if (!ti_ok(ctx, "flip", &x, 1)) return NULL;
  bool mask[FRIT_MAX_DIMS];
  if (ti_axes_mask(ctx, "flip", x, axes, naxes, ti_shape(ctx, x)->ndim, mask) < 0) return NULL;
  return ti_flip(ctx, x, mask);
}

frit_tensor *frit_contiguous(frit_ctx *ctx, frit_tensor *x) {
  if (!ti_ok(ctx, "contiguous", &x, 1)) return NULL;
  if (TI_U(x)->op == FRIT_OP_CONTIGUOUS) return x;
  frit_uop *u = TI_U(x);
  return fin(ctx, frit_uop_new(ctx, FRIT_OP_CONTIGUOUS, u->dtype, &u, 1, NULL));
}

/* ---------- pieces along one axis ---------- */

/* SHRINK of one axis to [b, e). */
static frit_tensor *shrink_axis(frit_ctx *ctx, frit_tensor *x, int axis, frit_uop *b, frit_uop *e) {
  if (!x) return NULL;
  const frit_shape *s = ti_shape(ctx, x);
  frit_uop *bb[FRIT_MAX_DIMS], *ee[FRIT_MAX_DIMS];
  for (int i = 0; i < s->ndim; i++) bb[i] = ti_dim(ctx, 0), ee[i] = s->dims[i];
  bb[axis] = b, ee[axis] = e;
  return ti_shrink(ctx, x, bb, ee);
}

static frit_tensor *pad_axis(frit_ctx *ctx, frit_tensor *x, int axis, frit_uop *b, frit_uop *a) {
  if (!x) return NULL;
  const frit_shape *s = ti_shape(ctx, x);
  frit_uop *bb[FRIT_MAX_DIMS], *aa[FRIT_MAX_DIMS];
  for (int i = 0; i < s->ndim; i++) bb[i] = aa[i] = ti_dim(ctx, 0);
  bb[axis] = b, aa[axis] = a;
  return ti_pad(ctx, x, bb, aa);
}

static frit_tensor *flip_axis(frit_ctx *ctx, frit_tensor *x, int axis) {
  bool mask[FRIT_MAX_DIMS] = {0};
  mask[axis] = true;
  return ti_flip(ctx, x, mask);
}

/* Splits axis into (outer, inner) when `split_inner` is NULL-free: the new axis of size `k` is
 * inserted before (tile: blocks repeat) or after (repeat: elements repeat) `axis` and merged. */
static frit_tensor *replicate_axis(frit_ctx *ctx, frit_tensor *x, int axis, frit_uop *k, bool elementwise) {
  if (!x || !k) return NULL;
  const frit_shape *s = ti_shape(ctx, x);
  if (s->ndim == FRIT_MAX_DIMS) return TI_FAIL1(ctx, "tile", x, "rank limit %d reached", FRIT_MAX_DIMS);
  frit_uop *mid[FRIT_MAX_DIMS], *big[FRIT_MAX_DIMS], *out[FRIT_MAX_DIMS];
  int at = elementwise ? axis + 1 : axis;
  for (int i = 0, j = 0; i <= s->ndim; i++) {
    if (i == at) {
      mid[i] = ti_dim(ctx, 1), big[i] = k;
    } else {
      mid[i] = big[i] = s->dims[j++];
    }
  }
  for (int i = 0; i < s->ndim; i++) out[i] = s->dims[i];
  out[axis] = ti_dim_mul(ctx, s->dims[axis], k);
  frit_tensor *t = ti_expand(ctx, ti_reshape(ctx, x, s->ndim + 1, mid), s->ndim + 1, big);
  return ti_reshape(ctx, t, s->ndim, out);
}

/* Pieces of one dtype joined along axis: each is zero-padded to the full length and selected
 * with an index mask (WHERE keeps every bit pattern, -0.0 and NaN payloads included). */
static frit_tensor *cat(frit_ctx *ctx, frit_tensor *const *xs, int n, int axis) {
  frit_tensor *keep[64], **ps = n <= 64 ? keep : malloc((size_t)n * sizeof *ps);
  if (!ps) return NULL;
  frit_uop *off[64], **offs = n <= 64 ? off : malloc((size_t)n * sizeof *offs);
  frit_tensor *acc = NULL;
  if (!offs) goto done;
  int m = 0;
  frit_uop *total = ti_dim(ctx, 0);
  for (int i = 0; i < n; i++) {
    frit_uop *len = ti_shape(ctx, xs[i])->dims[axis];
    if (frit_dim_value(len) == 0 && !(i == n - 1 && m == 0)) continue;
    ps[m] = xs[i];
    offs[m++] = total;
    total = ti_dim_add(ctx, total, len);
  }
  if (!total) goto done;
  if (m == 1) {
    acc = ps[0];
    goto done;
  }
  frit_tensor *idx = NULL;
  for (int i = 0; i < m; i++) {
    frit_uop *len = ti_shape(ctx, ps[i])->dims[axis];
    frit_tensor *p = pad_axis(ctx, ps[i], axis, offs[i], ti_dim_sub(ctx, ti_dim_sub(ctx, total, offs[i]), len));
    if (!p) {
      acc = NULL;
      goto done;
    }
    if (i == 0) {
      acc = p;
      idx = ti_axis_index(ctx, p, axis);
      continue;
    }
    const frit_shape *s = ti_shape(ctx, p);
    frit_tensor *o = ti_broadcast(ctx, "concat", fin(ctx, offs[i]), s->ndim, s->dims);
    acc = ti_where(ctx, ti_alu2(ctx, FRIT_OP_CMPLT, idx, o), acc, p);
  }
done:
  if (ps != keep) free(ps);
  if (offs != off) free(offs);
  return acc;
}

static frit_tensor *flatten(frit_ctx *ctx, frit_tensor *x) {
  if (!x) return NULL;
  frit_uop *n = frit_shape_numel(ctx, ti_shape(ctx, x));
  return ti_reshape(ctx, x, 1, &n);
}

frit_tensor *frit_concat(frit_ctx *ctx, frit_tensor *const *xs, int n, int axis) {
  if (n <= 0) return ti_fail(ctx, "concat", NULL, 0, "need at least one array to concatenate");
  if (!ti_ok(ctx, "concat", xs, n)) return NULL;
  frit_tensor *loc[64], **ys = n <= 64 ? loc : malloc((size_t)n * sizeof *ys);
  if (!ys) return NULL;
  frit_tensor *r = NULL;
  frit_dtype dt = TI_U(xs[0])->dtype;
  for (int i = 1; i < n; i++) dt = frit_promote(dt, TI_U(xs[i])->dtype);
  const frit_shape *s0 = ti_shape(ctx, xs[0]);
  int nd = axis == FRIT_NO_AXIS ? 1 : s0->ndim, a = 0;
  if (axis != FRIT_NO_AXIS) {
    if (nd == 0) {
      ti_fail(ctx, "concat", xs, n, "zero-dimensional arrays cannot be concatenated");
      goto out;
    }
    if ((a = ti_axis(ctx, "concat", xs[0], axis, nd)) < 0) goto out;
  }
  for (int i = 0; i < n; i++) {
    ys[i] = ti_cast(ctx, axis == FRIT_NO_AXIS ? flatten(ctx, xs[i]) : xs[i], dt);
    if (!ys[i]) goto out;
    const frit_shape *s = ti_shape(ctx, ys[i]);
    if (s->ndim != nd) {
      ti_fail(ctx, "concat", xs, n,
              "all the input arrays must have same number of dimensions, but the array at index 0 has %d "
              "dimension(s) and the array at index %d has %d dimension(s)", nd, i, s->ndim);
      goto out;
    }
    for (int k = 0; k < nd; k++)
      if (k != a && !ti_dim_eq(s->dims[k], ti_shape(ctx, ys[0])->dims[k])) {
        ti_fail(ctx, "concat", xs, n,
                "all the input array dimensions except for the concatenation axis must match exactly, but "
                "along dimension %d, the array at index 0 and the array at index %d differ", k, i);
        goto out;
      }
  }
  r = cat(ctx, ys, n, a);
out:
  if (ys != loc) free(ys);
  return r;
}

frit_tensor *frit_stack(frit_ctx *ctx, frit_tensor *const *xs, int n, int axis) {
  if (n <= 0) return ti_fail(ctx, "stack", NULL, 0, "need at least one array to stack");
  if (!ti_ok(ctx, "stack", xs, n)) return NULL;
  const frit_shape *s0 = ti_shape(ctx, xs[0]);
  for (int i = 1; i < n; i++) {
    const frit_shape *s = ti_shape(ctx, xs[i]);
    bool same = s->ndim == s0->ndim;
    for (int k = 0; same && k < s->ndim; k++) same = ti_dim_eq(s->dims[k], s0->dims[k]);
    if (!same) return ti_fail(ctx, "stack", xs, n, "all input arrays must have the same shape");
  }
  int a = ti_axis(ctx, "stack", xs[0], axis, s0->ndim + 1);
  if (a < 0) return NULL;
  frit_tensor *loc[64], **ys = n <= 64 ? loc : malloc((size_t)n * sizeof *ys);
  if (!ys) return NULL;
  frit_tensor *r = NULL;
  for (int i = 0; i < n; i++)
    if (!(ys[i] = frit_unsqueeze(ctx, xs[i], a))) goto out;
  r = frit_concat(ctx, ys, n, a);
out:
  if (ys != loc) free(ys);
  return r;
}

/* An empty axis: shrink to [0, 0). */
static frit_tensor *empty_axis(frit_ctx *ctx, frit_tensor *x, int axis) {
  frit_uop *z = ti_dim(ctx, 0);
  return shrink_axis(ctx, x, axis, z, z);
}

frit_tensor *frit_repeat(frit_ctx *ctx, frit_tensor *x, int64_t repeats, int axis) {
  if (!ti_ok(ctx, "repeat", &x, 1)) return NULL;
  if (repeats < 0) return TI_FAIL1(ctx, "repeat", x, "repeats may not contain negative values (%lld)", (long long)repeats);
  if (axis == FRIT_NO_AXIS) x = flatten(ctx, x), axis = 0;
  int a = ti_axis(ctx, "repeat", x, axis, ti_shape(ctx, x)->ndim);
  if (a < 0) return NULL;
  if (repeats == 0) return empty_axis(ctx, x, a);
  return repeats == 1 ? x : replicate_axis(ctx, x, a, ti_dim(ctx, repeats), true);
}

frit_tensor *frit_tile(frit_ctx *ctx, frit_tensor *x, int nreps, const int64_t *reps) {
  if (!ti_ok(ctx, "tile", &x, 1)) return NULL;
  if (nreps < 0 || nreps > FRIT_MAX_DIMS) return TI_FAIL1(ctx, "tile", x, "%d repetitions given", nreps);
  const frit_shape *s = ti_shape(ctx, x);
  int nd = nreps > s->ndim ? nreps : s->ndim;
  int64_t r[FRIT_MAX_DIMS];
  for (int i = 0; i < nd; i++) {
    int k = i - (nd - nreps);
    r[i] = k >= 0 ? reps[k] : 1;
    if (r[i] < 0) return TI_FAIL1(ctx, "tile", x, "negative repetition count %lld", (long long)r[i]);
  }
  frit_uop *d[FRIT_MAX_DIMS];
  for (int i = 0; i < nd; i++) d[i] = i < nd - s->ndim ? ti_dim(ctx, 1) : s->dims[i - (nd - s->ndim)];
  x = ti_reshape(ctx, x, nd, d);
  for (int i = 0; i < nd && x; i++) {
    if (r[i] == 0) x = empty_axis(ctx, x, i);
    else if (r[i] > 1) x = replicate_axis(ctx, x, i, ti_dim(ctx, r[i]), false);
  }
  return x;
}

/* The axis helpers above, for slice_pad.c. */
frit_tensor *ti_shrink_axis(frit_ctx *ctx, frit_tensor *x, int axis, frit_uop *b, frit_uop *e) {
  return shrink_axis(ctx, x, axis, b, e);
}
frit_tensor *ti_pad_axis(frit_ctx *ctx, frit_tensor *x, int axis, frit_uop *b, frit_uop *a) {
  return pad_axis(ctx, x, axis, b, a);
}
frit_tensor *ti_flip_axis(frit_ctx *ctx, frit_tensor *x, int axis) { return flip_axis(ctx, x, axis); }
frit_tensor *ti_replicate_axis(frit_ctx *ctx, frit_tensor *x, int axis, frit_uop *k, bool elementwise) {
  return replicate_axis(ctx, x, axis, k, elementwise);
}
frit_tensor *ti_cat(frit_ctx *ctx, frit_tensor *const *xs, int n, int axis) { return cat(ctx, xs, n, axis); }
frit_tensor *ti_flatten(frit_ctx *ctx, frit_tensor *x) { return flatten(ctx, x); }
