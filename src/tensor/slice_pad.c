/* Slicing (numpy's clamped bounds, static and symbolic dims), roll, and pad in every numpy mode
 * (widths larger than the axis repeat periodically, as numpy's repeated application does). */
#include "tensor/composite.h"

#include <math.h>

/* ---------- slicing ---------- */

/* x[b : b + len*step : step] along axis, b >= 0, step >= 1, the last element inside the axis.
 * A stride is a reshape: pad so that len*step elements exist, view as (len, step), keep column 0. */
static frit_tensor *strided(frit_ctx *ctx, frit_tensor *x, int axis, frit_uop *b, frit_uop *len, int64_t step) {
  if (!x || !b || !len) return NULL;
  /* shrink to [b, n) first, then to [0, len*step): the axis is then exactly the node len*step
   * (no b + L - b left for the simplifier to cancel), which the reshape below needs */
  frit_uop *n = ti_shape(ctx, x)->dims[axis];
  if (frit_dim_value(b) != 0) x = ti_shrink_axis(ctx, x, axis, b, n);
  if (step == 1) return ti_shrink_axis(ctx, x, axis, ti_dim(ctx, 0), len);
  if (frit_dim_value(n) < 0) {
    /* symbolic: the reshape below would need the simplifier to prove products of symbolic dims
     * equal (len*(len*2) vs (len*len)*2 on a second strided axis); a GATHER of i*step is exact */
    frit_tensor *idx = tc_bin(ctx, "slice", FRIT_OP_MUL, ti_iota(ctx, len), tc_scalar(ctx, FRIT_I64, (double)step));
    return idx ? ti_gather(ctx, x, idx, axis) : NULL;
  }
  x = ti_pad_axis(ctx, x, axis, ti_dim(ctx, 0), ti_dim(ctx, step - 1));
  frit_uop *st = ti_dim(ctx, step);
  x = ti_shrink_axis(ctx, x, axis, ti_dim(ctx, 0), ti_dim_mul(ctx, len, st));
  if (!x) return NULL;
  const frit_shape *s = ti_shape(ctx, x);
  frit_uop *d[FRIT_MAX_DIMS], *bb[FRIT_MAX_DIMS], *ee[FRIT_MAX_DIMS];
  if (s->ndim >= FRIT_MAX_DIMS) return TI_FAIL1(ctx, "slice", x, "a strided slice of a rank-%d array needs one more dim", s->ndim);
  for (int i = 0, j = 0; i < s->ndim; i++) {
    if (i == axis) {
      d[j] = len, bb[j] = ti_dim(ctx, 0), ee[j++] = len;
      d[j] = st, bb[j] = ti_dim(ctx, 0), ee[j++] = ti_dim(ctx, 1);
    } else {
      d[j] = s->dims[i], bb[j] = ti_dim(ctx, 0), ee[j++] = s->dims[i];
    }
  }
  x = ti_shrink(ctx, ti_reshape(ctx, x, s->ndim + 1, d), bb, ee);
  for (int i = 0; i < s->ndim; i++) d[i] = i == axis ? len : s->dims[i];
  return ti_reshape(ctx, x, s->ndim, d);
}

/* numpy's PySlice_AdjustIndices on a static length. */
static int64_t slice_static(int64_t n, int64_t start, int64_t stop, int64_t step, int64_t *b) {
  bool neg = step < 0;
  if (start == FRIT_SLICE_DEFAULT) start = neg ? n - 1 : 0;
  else {
    if (start < 0) start += n;
    if (start < 0) start = neg ? -1 : 0;
    else if (start >= n) start = neg ? n - 1 : n;
  }
  if (stop == FRIT_SLICE_DEFAULT) stop = neg ? -1 : n;
  else {
    if (stop < 0) stop += n;
    if (stop < 0) stop = neg ? -1 : 0;
    else if (stop >= n) stop = neg ? n - 1 : n;
  }
  *b = start;
  if (neg) return stop < start ? (start - stop - 1) / (-step) + 1 : 0;
  return start < stop ? (stop - start - 1) / step + 1 : 0;
}

/* A bound of a forward slice on a symbolic length n, clamped into [0, n] as numpy does. With a
 * negative step the axis is flipped first; bound v of the original axis is then position
 * n-1-v, which clamps the same way: n-1-min(v, n-1) = max(n-1-v, 0) and n-1-max(n+v, -1) =
 * min(-1-v, n). */
static frit_uop *sym_bound(frit_ctx *ctx, frit_uop *n, int64_t v, bool flipped, frit_uop *dflt) {
  if (v == FRIT_SLICE_DEFAULT) return dflt;
  if (!flipped)
    return v >= 0 ? ti_dim_min(ctx, ti_dim(ctx, v), n) : ti_dim_max(ctx, ti_dim_add(ctx, n, ti_dim(ctx, v)), ti_dim(ctx, 0));
  return v >= 0 ? ti_dim_max(ctx, ti_dim_sub(ctx, n, ti_dim(ctx, v + 1)), ti_dim(ctx, 0))
                : ti_dim_min(ctx, ti_dim(ctx, -1 - v), n);
}

frit_tensor *frit_slice(frit_ctx *ctx, frit_tensor *x, const int64_t *start, const int64_t *stop, const int64_t *step) {
  if (!ti_ok(ctx, "slice", &x, 1)) return NULL;
  int nd = ti_shape(ctx, x)->ndim;
  for (int i = 0; i < nd && x; i++) {
    int64_t st = step ? step[i] : 1;
    int64_t s0 = start ? start[i] : FRIT_SLICE_DEFAULT, s1 = stop ? stop[i] : FRIT_SLICE_DEFAULT;
    if (st == FRIT_SLICE_DEFAULT) st = 1;
    if (st == 0) return TI_FAIL1(ctx, "slice", x, "slice step cannot be zero (axis %d)", i);
    if (st == INT64_MIN + 1 || st < -(INT64_MAX / 2)) return TI_FAIL1(ctx, "slice", x, "slice step too large");
    /* keep n - v and -1 - v inside i64 */
    if (s0 == INT64_MIN + 1 || s0 == INT64_MAX) s0 += s0 < 0 ? 1 : -1;
    if (s1 == INT64_MIN + 1 || s1 == INT64_MAX) s1 += s1 < 0 ? 1 : -1;
    frit_uop *n = ti_shape(ctx, x)->dims[i];
    int64_t nv = frit_dim_value(n);
    if (nv >= 0) {
      int64_t b;
      int64_t len = slice_static(nv, s0, s1, st, &b);
      if (st < 0) { /* x[b], x[b+st], ... is the flipped axis read from n-1-b with stride -st */
        x = ti_flip_axis(ctx, x, i);
        b = nv - 1 - b;
        st = -st;
      }
      if (len == 0) b = 0;
      x = strided(ctx, x, i, ti_dim(ctx, b), ti_dim(ctx, len), st);
      continue;
    }
    bool flipped = st < 0;
    if (flipped) x = ti_flip_axis(ctx, x, i), st = -st;
    frit_uop *b = sym_bound(ctx, n, s0, flipped, ti_dim(ctx, 0)), *e = sym_bound(ctx, n, s1, flipped, n);
    frit_uop *len = ti_dim_cdiv(ctx, ti_dim_max(ctx, ti_dim_sub(ctx, e, b), ti_dim(ctx, 0)), st);
    x = strided(ctx, x, i, b, len, st);
  }
  return x;
}

/* ---------- roll ---------- */

/* One axis rolled by s: out[i] = x[(i + cut) mod n], cut = (n - s mod n) mod n, as one GATHER
 * (the scheduler then materialises a computed x once instead of fusing it into every reader,
 * which matters for stencils that roll one value several times). */
static frit_tensor *roll_axis(frit_ctx *ctx, frit_tensor *x, int axis, int64_t s) {
  const frit_shape *sh = ti_shape(ctx, x);
  frit_uop *n = sh->dims[axis];
  int64_t nv = frit_dim_value(n);
  frit_uop *cut;
  if (nv >= 0) {
    if (nv == 0 || (s %= nv) == 0) return x;
    cut = ti_dim(ctx, s < 0 ? -s : nv - s);
  } else {
    if (s == 0) return x;
    frit_uop *m = ti_dim_max(ctx, n, ti_dim(ctx, 1)); /* n may be 0 */
    cut = ti_dim_sub(ctx, m, frit_simplify(ctx, frit_binary(ctx, FRIT_OP_MOD, ti_dim(ctx, s), m)));
    cut = cut ? frit_simplify(ctx, frit_binary(ctx, FRIT_OP_MOD, cut, m)) : NULL;
    if (!cut) return NULL;
  }
  const char *op = "roll";
  frit_tensor *t = tc_bin(ctx, op, FRIT_OP_ADD, ti_iota(ctx, n), TI_T(cut));
  frit_tensor *w = tc_bin(ctx, op, FRIT_OP_SUB, t, TI_T(n));
  frit_tensor *idx = t && w ? ti_where(ctx, tc_bin(ctx, op, FRIT_OP_CMPLT, t, TI_T(n)), t, w) : NULL;
  return idx ? ti_gather(ctx, x, idx, axis) : NULL;
}

frit_tensor *frit_roll(frit_ctx *ctx, frit_tensor *x, int n, const int64_t *shifts, const int *axes) {
  if (!ti_ok(ctx, "roll", &x, 1)) return NULL;
  if (n < 0 || (n > 0 && !shifts)) return TI_FAIL1(ctx, "roll", x, "%d shifts given", n);
  const frit_shape *s = ti_shape(ctx, x);
  int64_t tot[FRIT_MAX_DIMS + 1] = {0};
  int nd = axes ? s->ndim : 1;
  for (int j = 0; j < n; j++) {
    int a = 0;
    if (axes && (a = ti_axis(ctx, "roll", x, axes[j], nd)) < 0) return NULL;
    if (__builtin_add_overflow(tot[a], shifts[j], &tot[a]))
      return TI_FAIL1(ctx, "roll", x, "the shifts of axis %d add up beyond 64 bits", a);
  }
  if (!axes) {
    frit_tensor *f = roll_axis(ctx, ti_flatten(ctx, x), 0, tot[0]);
    return f ? ti_reshape(ctx, f, s->ndim, s->dims) : NULL;
  }
  for (int a = 0; a < nd && x; a++) x = roll_axis(ctx, x, a, tot[a]);
  return x;
}

/* ---------- pad ---------- */

/* ---------- pad ---------- */

static frit_tensor *pad_edge_axis(frit_ctx *ctx, frit_tensor *x, int axis, int64_t b, int64_t a) {
  const frit_shape *s = ti_shape(ctx, x);
  frit_uop *n = s->dims[axis];
  frit_tensor *parts[3];
  int k = 0;
  if (b > 0) parts[k++] = ti_replicate_axis(ctx, ti_shrink_axis(ctx, x, axis, ti_dim(ctx, 0), ti_dim(ctx, 1)), axis, ti_dim(ctx, b), false);
  parts[k++] = x;
  if (a > 0)
    parts[k++] = ti_replicate_axis(ctx, ti_shrink_axis(ctx, x, axis, ti_dim_sub(ctx, n, ti_dim(ctx, 1)), n), axis, ti_dim(ctx, a), false);
  if (!ti_ok(ctx, "pad", parts, k)) return NULL;
  return ti_cat(ctx, parts, k, axis);
}

/* numpy's reflect padding is the periodic mirror image (period 2(n-1), edges not repeated). */
static frit_tensor *pad_reflect_axis(frit_ctx *ctx, frit_tensor *x, int axis, int64_t b, int64_t a) {
  const frit_shape *s = ti_shape(ctx, x);
  frit_uop *n = s->dims[axis], *one = ti_dim(ctx, 1);
  int64_t nv = frit_dim_value(n);
  if (nv == 1) return pad_edge_axis(ctx, x, axis, b, a);
  if (nv < 0 || (b <= nv - 1 && a <= nv - 1)) {
    frit_tensor *parts[3];
    int k = 0;
    if (b > 0) parts[k++] = ti_flip_axis(ctx, ti_shrink_axis(ctx, x, axis, one, ti_dim(ctx, b + 1)), axis);
    parts[k++] = x;
    if (a > 0) {
      frit_uop *e = ti_dim_sub(ctx, n, one);
      parts[k++] = ti_flip_axis(ctx, ti_shrink_axis(ctx, x, axis, ti_dim_sub(ctx, e, ti_dim(ctx, a)), e), axis);
    }
    if (!ti_ok(ctx, "pad", parts, k)) return NULL;
    return ti_cat(ctx, parts, k, axis);
  }
  int64_t m = 2 * (nv - 1);
  frit_tensor *period[2] = {x, ti_flip_axis(ctx, ti_shrink_axis(ctx, x, axis, one, ti_dim(ctx, nv - 1)), axis)};
  if (!ti_ok(ctx, "pad", period, 2)) return NULL;
  frit_tensor *p = ti_cat(ctx, period, 2, axis);
  int64_t k0 = -b >= 0 ? 0 : -((b + m - 1) / m); /* floor(-b / m) */
  int64_t first = -b - k0 * m, total = nv + b + a;
  int64_t reps = (first + total + m - 1) / m;
  p = ti_replicate_axis(ctx, p, axis, ti_dim(ctx, reps), false);
  return ti_shrink_axis(ctx, p, axis, ti_dim(ctx, first), ti_dim(ctx, first + total));
}

/* Any mode, any width, static or symbolic n >= 1: out[j] = x[idx(j - b)] with numpy's periodic
 * index maps (reflect: period 2(n-1), edges once; symmetric: period 2n; wrap: period n). */
static frit_tensor *pad_gather_axis(frit_ctx *ctx, frit_tensor *x, int axis, int64_t b, int64_t a, frit_pad_mode mode) {
  const char *op = "pad";
  frit_uop *n = ti_shape(ctx, x)->dims[axis];
  frit_uop *len = ti_dim_add(ctx, ti_dim_add(ctx, n, ti_dim(ctx, b)), ti_dim(ctx, a));
  frit_tensor *t = tc_bin(ctx, op, FRIT_OP_SUB, ti_iota(ctx, len), tc_scalar(ctx, FRIT_I64, (double)b));
  frit_uop *one = ti_dim(ctx, 1), *m = NULL;
  switch (mode) {
  case FRIT_PAD_REFLECT: m = ti_dim_max(ctx, ti_dim_sub(ctx, ti_dim_add(ctx, n, n), ti_dim(ctx, 2)), one); break;
  case FRIT_PAD_SYMMETRIC: m = ti_dim_max(ctx, ti_dim_add(ctx, n, n), one); break;
  case FRIT_PAD_WRAP: m = ti_dim_max(ctx, n, one); break;
  case FRIT_PAD_EDGE: case FRIT_PAD_CONSTANT: m = NULL; break;
  }
  frit_tensor *idx;
  if (!m) { /* edge */
    idx = tc_bin(ctx, op, FRIT_OP_MAX, t, tc_scalar(ctx, FRIT_I64, 0));
    idx = tc_bin(ctx, op, FRIT_OP_MIN, idx, TI_T(ti_dim_sub(ctx, n, one)));
  } else {
    frit_tensor *mt = TI_T(m);
    frit_tensor *u = tc_bin(ctx, op, FRIT_OP_MOD, tc_bin(ctx, op, FRIT_OP_ADD, tc_bin(ctx, op, FRIT_OP_MOD, t, mt), mt), mt);
    if (mode == FRIT_PAD_WRAP) idx = u;
    else {
      frit_tensor *back = tc_bin(ctx, op, FRIT_OP_SUB, mode == FRIT_PAD_REFLECT ? mt : TI_T(ti_dim_sub(ctx, m, one)), u);
      idx = ti_where(ctx, tc_bin(ctx, op, FRIT_OP_CMPLT, u, TI_T(n)), u, back);
    }
  }
  return idx ? ti_gather(ctx, x, idx, axis) : NULL;
}

frit_tensor *frit_pad(frit_ctx *ctx, frit_tensor *x, const int64_t *before, const int64_t *after, frit_pad_mode mode,
                      double value) {
  if (!ti_ok(ctx, "pad", &x, 1)) return NULL;
  const frit_shape *s = ti_shape(ctx, x);
  int nd = s->ndim;
  for (int i = 0; i < nd; i++)
    if (before[i] < 0 || after[i] < 0)
      return TI_FAIL1(ctx, "pad", x, "index can't contain negative values (axis %d: %lld, %lld)", i,
                      (long long)before[i], (long long)after[i]);
  if (mode == FRIT_PAD_CONSTANT) {
    frit_uop *b[FRIT_MAX_DIMS], *a[FRIT_MAX_DIMS];
    if (!ti_dims_from_ints(ctx, nd, before, b) || !ti_dims_from_ints(ctx, nd, after, a)) return NULL;
    frit_tensor *p = ti_pad(ctx, x, b, a);
    if (!p || (value == 0 && !signbit(value)) || p == x) return p;
    frit_tensor *mask = ti_pad(ctx, ti_const_i(ctx, FRIT_BOOL, 1, x), b, a);
    return ti_where(ctx, mask, p, ti_const_f(ctx, TI_U(x)->dtype, value, p));
  }
  if (mode != FRIT_PAD_REFLECT && mode != FRIT_PAD_EDGE && mode != FRIT_PAD_SYMMETRIC && mode != FRIT_PAD_WRAP)
    return TI_FAIL1(ctx, "pad", x, "unknown mode %d", (int)mode);
  for (int i = 0; i < nd && x; i++) {
    if (before[i] == 0 && after[i] == 0) continue;
    if (frit_dim_value(ti_shape(ctx, x)->dims[i]) == 0)
      return TI_FAIL1(ctx, "pad", x, "can't extend empty axis %d using modes other than 'constant' or 'empty'", i);
    frit_uop *n = ti_shape(ctx, x)->dims[i];
    int64_t nv = frit_dim_value(n), w = before[i] > after[i] ? before[i] : after[i];
    if (mode == FRIT_PAD_EDGE) x = pad_edge_axis(ctx, x, i, before[i], after[i]);
    else if (mode == FRIT_PAD_REFLECT && (nv >= 0 || n->vmin - 1 >= w)) x = pad_reflect_axis(ctx, x, i, before[i], after[i]);
    else x = pad_gather_axis(ctx, x, i, before[i], after[i], mode);
  }
  return x;
}
