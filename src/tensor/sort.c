/* Sorting and searching (frit_sort, frit_argsort, frit_searchsorted) as explicit kernels built
 * with the kernel builder: a stable LSD radix sort per row on order-preserving unsigned keys. */
#include "tensor/tensor_internal.h"

/* Rows of at most this many elements are sorted by insertion (no count buffer): below this the
 * radix sort's per-pass clear and prefix of 256 counts cost more than the row itself. */
#define SMALL_ROW 64

/* ---------- kernel-scalar shorthands (0-d tensors of one dtype) ---------- */

static frit_tensor *kc(frit_ctx *ctx, frit_dtype dt, int64_t v) { return frit_scalar_i(ctx, dt, v); }
static frit_tensor *k2(frit_ctx *ctx, frit_op op, frit_tensor *a, frit_tensor *b) { return ti_alu2(ctx, op, a, b); }
static frit_tensor *ld2(frit_ctx *ctx, frit_tensor *t, frit_tensor *a, frit_tensor *b) {
  return frit_kernel_load(ctx, t, 2, (frit_tensor *const[]){a, b});
}
static void st2(frit_ctx *ctx, frit_tensor *t, frit_tensor *a, frit_tensor *b, frit_tensor *v) {
  frit_kernel_store(ctx, t, 2, (frit_tensor *const[]){a, b}, v);
}
static frit_tensor *bitcast(frit_ctx *ctx, frit_tensor *x, frit_dtype dt) {
  if (!x) return NULL;
  frit_uop *u = TI_U(x);
  frit_tensor *b = TI_T(frit_uop_new(ctx, FRIT_OP_BITCAST, dt, &u, 1, NULL));
  return b && frit_shape_of(ctx, TI_U(b)) ? b : NULL;
}

static frit_dtype key_dtype(frit_dtype dt) {
  int bits = frit_dtype_is_bool(dt) ? 8 : frit_dtype_bits(dt);
  return bits == 8 ? FRIT_U8 : bits == 16 ? FRIT_U16 : bits == 32 ? FRIT_U32 : FRIT_U64;
}

static bool sortable(frit_dtype dt) {
  return frit_dtype_is_bool(dt) || frit_dtype_is_int(dt) || frit_dtype_is_float(dt);
}

/* Unsigned keys whose unsigned order is the sort order: integers with the sign bit flipped;
 * floats by sign and magnitude with -0.0 equal to 0.0 and every NaN the largest key (last in
 * both directions, as numpy puts NaNs last); descending inverts every other key. */
static frit_tensor *sort_keys(frit_ctx *ctx, frit_tensor *x, bool descending) {
  frit_dtype dt = TI_U(x)->dtype, ut = key_dtype(dt);
  int bits = frit_dtype_bits(ut);
  uint64_t sign = 1ull << (bits - 1), umax = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
  frit_tensor *k, *nan = NULL;
  if (frit_dtype_is_bool(dt) || frit_dtype_is_unsigned(dt)) {
    k = ti_cast(ctx, x, ut);
  } else if (frit_dtype_is_int(dt)) {
    k = k2(ctx, FRIT_OP_XOR, bitcast(ctx, x, ut), ti_const_i(ctx, ut, (int64_t)sign, x));
  } else {
    frit_tensor *b = bitcast(ctx, x, ut);
    frit_tensor *zero = ti_alu2(ctx, FRIT_OP_CMPEQ, x, ti_const_f(ctx, dt, 0.0, x));
    b = ti_where(ctx, zero, ti_const_i(ctx, ut, 0, x), b);
    frit_tensor *neg = k2(ctx, FRIT_OP_CMPNE, k2(ctx, FRIT_OP_AND, b, ti_const_i(ctx, ut, (int64_t)sign, x)),
                          ti_const_i(ctx, ut, 0, x));
    k = ti_where(ctx, neg, ti_alu1(ctx, FRIT_OP_NOT, b), k2(ctx, FRIT_OP_OR, b, ti_const_i(ctx, ut, (int64_t)sign, x)));
    nan = ti_alu2(ctx, FRIT_OP_CMPNE, x, x);
  }
  if (descending) k = ti_alu1(ctx, FRIT_OP_NOT, k);
  if (nan) k = ti_where(ctx, nan, ti_const_i(ctx, ut, (int64_t)umax, x), k);
  return k;
}

/* x with `axis` moved last and the other axes merged: (R, n). */
static frit_tensor *as_rows(frit_ctx *ctx, frit_tensor *x, int axis, int *perm) {
  const frit_shape *s = ti_shape(ctx, x);
  int nd = s->ndim, j = 0;
  for (int a = 0; a < nd; a++)
    if (a != axis) perm[j++] = a;
  perm[j] = axis;
  frit_tensor *p = ti_permute(ctx, x, perm);
  frit_uop *r = ti_dim(ctx, 1);
  for (int a = 0; a < nd; a++)
    if (a != axis) r = ti_dim_mul(ctx, r, s->dims[a]);
  return frit_reshape_sym(ctx, p, 2, (frit_uop *const[]){r, s->dims[axis]});
}

/* Inverse of as_rows: (R, n) back to x's shape with the sorted axis in place. */
static frit_tensor *from_rows(frit_ctx *ctx, frit_tensor *rows, frit_tensor *x, const int *perm) {
  const frit_shape *s = ti_shape(ctx, x);
  int nd = s->ndim, inv[FRIT_MAX_DIMS];
  frit_uop *dims[FRIT_MAX_DIMS];
  for (int a = 0; a < nd; a++) dims[a] = s->dims[perm[a]], inv[perm[a]] = a;
  return ti_permute(ctx, frit_reshape_sym(ctx, rows, nd, dims), inv);
}

/* Stable insertion sort of each row of (keys, vals) in place, for short static rows. */
static void insertion_rows(frit_ctx *ctx, frit_tensor *r, frit_tensor *n, frit_tensor *ks, frit_tensor *vs) {
  frit_tensor *i, *j;
  frit_kernel_loop_begin(ctx, kc(ctx, FRIT_I64, 1), n, kc(ctx, FRIT_I64, 1), &i);
  frit_tensor *k = ld2(ctx, ks, r, i), *v = ld2(ctx, vs, r, i);
  int pos = frit_kernel_var(ctx, FRIT_I64, i);
  frit_kernel_loop_begin(ctx, k2(ctx, FRIT_OP_SUB, i, kc(ctx, FRIT_I64, 1)), kc(ctx, FRIT_I64, -1),
                         kc(ctx, FRIT_I64, -1), &j);
  frit_tensor *kj = ld2(ctx, ks, r, j);
  frit_kernel_if_begin(ctx, k2(ctx, FRIT_OP_CMPLE, kj, k));
  frit_kernel_break(ctx);
  frit_kernel_if_end(ctx);
  frit_tensor *j1 = k2(ctx, FRIT_OP_ADD, j, kc(ctx, FRIT_I64, 1));
  st2(ctx, ks, r, j1, kj);
  st2(ctx, vs, r, j1, ld2(ctx, vs, r, j));
  frit_kernel_var_set(ctx, pos, j);
  frit_kernel_loop_end(ctx);
  frit_tensor *p = frit_kernel_var_get(ctx, pos);
  st2(ctx, ks, r, p, k);
  st2(ctx, vs, r, p, v);
  frit_kernel_loop_end(ctx);
}

/* Stable LSD radix sort of each row, one 8-bit digit per pass through `cnt` (R, 256): count,
 * exclusive prefix, scatter. Passes alternate between (ka, va) and (kb, vb); the last pass
 * writes only values. Returns the buffer holding the sorted values. */
static frit_tensor *radix_rows(frit_ctx *ctx, frit_tensor *r, frit_tensor *n, frit_tensor *ka, frit_tensor *va,
                               frit_tensor *kb, frit_tensor *vb, frit_tensor *cnt, int passes) {
  frit_dtype ut = TI_U(ka)->dtype;
  frit_tensor *zero = kc(ctx, FRIT_I64, 0), *one = kc(ctx, FRIT_I64, 1), *i, *d;
  frit_tensor *sk = ka, *sv = va, *dk = kb, *dv = vb;
  for (int p = 0; p < passes; p++) {
    frit_tensor *shift = kc(ctx, ut, 8 * p), *mask = kc(ctx, ut, 255);
    frit_kernel_loop_begin(ctx, zero, kc(ctx, FRIT_I64, 256), one, &d);
    st2(ctx, cnt, r, d, zero);
    frit_kernel_loop_end(ctx);
    frit_kernel_loop_begin(ctx, zero, n, one, &i);
    frit_tensor *dig = ti_cast(ctx, k2(ctx, FRIT_OP_AND, k2(ctx, FRIT_OP_SHR, ld2(ctx, sk, r, i), shift), mask), FRIT_I64);
    st2(ctx, cnt, r, dig, k2(ctx, FRIT_OP_ADD, ld2(ctx, cnt, r, dig), one));
    frit_kernel_loop_end(ctx);
    int sum = frit_kernel_var(ctx, FRIT_I64, zero);
    frit_kernel_loop_begin(ctx, zero, kc(ctx, FRIT_I64, 256), one, &d);
    frit_tensor *c = ld2(ctx, cnt, r, d), *s = frit_kernel_var_get(ctx, sum);
    st2(ctx, cnt, r, d, s);
    frit_kernel_var_set(ctx, sum, k2(ctx, FRIT_OP_ADD, s, c));
    frit_kernel_loop_end(ctx);
    frit_kernel_loop_begin(ctx, zero, n, one, &i);
    frit_tensor *key = ld2(ctx, sk, r, i);
    frit_tensor *dg = ti_cast(ctx, k2(ctx, FRIT_OP_AND, k2(ctx, FRIT_OP_SHR, key, shift), mask), FRIT_I64);
    frit_tensor *pos = ld2(ctx, cnt, r, dg);
    st2(ctx, cnt, r, dg, k2(ctx, FRIT_OP_ADD, pos, one));
    if (p + 1 < passes) st2(ctx, dk, r, pos, key);
    st2(ctx, dv, r, pos, ld2(ctx, sv, r, i));
    frit_kernel_loop_end(ctx);
    frit_tensor *t;
    t = sk, sk = dk, dk = t;
    t = sv, sv = dv, dv = t;
  }
  return sv;
}

/* 1 when the (static or symbolic) row length n is above SMALL_ROW, else 0: the count buffer has
 * R * this rows, so short rows (insertion sort) allocate none. */
static frit_uop *needs_radix(frit_ctx *ctx, frit_uop *n) {
  frit_uop *d = ti_dim_sub(ctx, n, ti_dim(ctx, SMALL_ROW));
  if (!d) return NULL;
  if (d->op == FRIT_OP_CONST) return ti_dim(ctx, d->arg.value.i > 0);
  frit_uop *one = ti_dim(ctx, 1), *zero = ti_dim(ctx, 0);
  frit_uop *r = frit_binary(ctx, FRIT_OP_MIN, frit_binary(ctx, FRIT_OP_MAX, d, zero), one);
  return r ? frit_simplify(ctx, r) : NULL;
}

/* Sorts the rows of (R, n) keys `k` carrying `vals` (same shape); returns the sorted vals. Rows
 * of at most SMALL_ROW elements are insertion sorted in place (decided at build time for static
 * n, per run for symbolic n), longer ones radix sorted. The scratch buffers get distinct fill
 * values: equal constant tensors are one node (hash-consing), and the kernel would then write
 * two buffers into one. */
static frit_tensor *sort_rows(frit_ctx *ctx, const char *op, frit_tensor *k, frit_tensor *vals) {
  const frit_shape *s = ti_shape(ctx, k);
  frit_uop *R = s->dims[0], *N = s->dims[1], *big = needs_radix(ctx, N);
  int64_t nstat = frit_dim_value(N);
  frit_dtype ut = TI_U(k)->dtype, vt = TI_U(vals)->dtype;
  int passes = frit_dtype_bits(ut) / 8;
  frit_tensor *ntensor = frit_tensor_of(ctx, N), *r = NULL;
  if (!ntensor || !big) return NULL;
  if (nstat >= 0 && nstat <= 1) return vals;
  bool may_radix = big->op != FRIT_OP_CONST || big->arg.value.i != 0;
  bool may_insert = big->op != FRIT_OP_CONST || big->arg.value.i == 0;
  frit_tensor *kb = NULL, *vb = NULL, *cnt = NULL;
  if (may_radix || passes % 2) {
    kb = ti_full(ctx, ut, (frit_scalar){.i = 0}, 2, s->dims);
    vb = ti_full(ctx, vt, frit_scalar_normalize((frit_scalar){.i = 1}, vt), 2, s->dims);
  }
  if (may_radix)
    cnt = ti_full(ctx, FRIT_I64, (frit_scalar){.i = 2}, 2, (frit_uop *const[]){ti_dim_mul(ctx, R, big), ti_dim(ctx, 256)});
  /* the radix result lies in vals after an even number of passes, in vb after an odd one; the
   * insertion sort works in that same buffer */
  frit_tensor *res = passes % 2 ? vb : vals;
  if (frit_kernel_begin(ctx, op, 1, &R, &r) != FRIT_OK) return NULL;
  if (may_insert) {
    if (may_radix) frit_kernel_if_begin(ctx, k2(ctx, FRIT_OP_CMPLE, ntensor, kc(ctx, FRIT_I64, SMALL_ROW)));
    frit_tensor *ks = k;
    if (passes % 2) {
      frit_tensor *i;
      frit_kernel_loop_begin(ctx, kc(ctx, FRIT_I64, 0), ntensor, kc(ctx, FRIT_I64, 1), &i);
      st2(ctx, kb, r, i, ld2(ctx, k, r, i));
      st2(ctx, vb, r, i, ld2(ctx, vals, r, i));
      frit_kernel_loop_end(ctx);
      ks = kb;
    }
    insertion_rows(ctx, r, ntensor, ks, res);
    if (may_radix) frit_kernel_else(ctx);
  }
  if (may_radix) {
    radix_rows(ctx, r, ntensor, k, vals, kb, vb, cnt, passes);
    if (may_insert) frit_kernel_if_end(ctx);
  }
  int nw = frit_kernel_end(ctx);
  if (nw < 0) return NULL;
  for (int w = 0; w < nw; w++) {
    frit_tensor *old, *nu;
    if (frit_kernel_written(ctx, w, &old, &nu) != FRIT_OK) return NULL;
    if (old == res) return nu;
  }
  return res; /* not written: an empty row set */
}

static frit_tensor *sort_impl(frit_ctx *ctx, const char *op, frit_tensor *x, int axis, int descending, bool arg) {
  if (!ti_ok(ctx, op, &x, 1)) return NULL;
  frit_dtype dt = TI_U(x)->dtype;
  if (!sortable(dt)) return TI_FAIL1(ctx, op, x, "cannot sort this dtype");
  if (axis == FRIT_NO_AXIS) {
    const frit_shape *s = ti_shape(ctx, x);
    frit_uop *tot = ti_dim(ctx, 1);
    for (int d = 0; d < s->ndim; d++) tot = ti_dim_mul(ctx, tot, s->dims[d]);
    if (!(x = frit_reshape_sym(ctx, x, 1, &tot))) return NULL;
    axis = 0;
  }
  int nd = ti_shape(ctx, x)->ndim;
  if (nd == 0) {
    if (!arg) return TI_FAIL1(ctx, op, x, "axis %d is out of bounds for a 0-d array (use axis=None)", axis);
    if (axis != -1 && axis != 0) return TI_FAIL1(ctx, op, x, "axis %d is out of bounds for a 0-d array", axis);
    return ti_const_i(ctx, FRIT_I64, 0, x);
  }
  int ax = ti_axis(ctx, op, x, axis, nd);
  if (ax < 0) return NULL;
  int perm[FRIT_MAX_DIMS];
  frit_tensor *rows = as_rows(ctx, x, ax, perm);
  if (!rows) return NULL;
  frit_tensor *keys = sort_keys(ctx, rows, descending != 0);
  frit_tensor *vals = arg ? ti_axis_index(ctx, rows, 1) : rows;
  if (!keys || !vals) return NULL;
  return from_rows(ctx, sort_rows(ctx, op, keys, vals), x, perm);
}

frit_tensor *frit_sort(frit_ctx *ctx, frit_tensor *x, int axis, int descending) {
  return sort_impl(ctx, "sort", x, axis, descending, false);
}

frit_tensor *frit_argsort(frit_ctx *ctx, frit_tensor *x, int axis, int descending) {
  return sort_impl(ctx, "argsort", x, axis, descending, true);
}

/* For every element of v, the insertion point into the sorted 1-D a (numpy's searchsorted, in
 * sort order: NaN last, -0.0 == 0.0): a binary search per element over keys of the common dtype. */
frit_tensor *frit_searchsorted(frit_ctx *ctx, frit_tensor *a, frit_tensor *v, int right, frit_tensor *sorter) {
  const char *op = "searchsorted";
  if (!ti_ok(ctx, op, (frit_tensor *const[]){a, v}, 2)) return NULL;
  frit_dtype at = TI_U(a)->dtype, vt = TI_U(v)->dtype;
  if (ti_shape(ctx, a)->ndim != 1)
    return ti_fail(ctx, op, (frit_tensor *const[]){a, v}, 2, "the sorted array must be 1-d");
  if (!sortable(at) || !sortable(vt))
    return ti_fail(ctx, op, (frit_tensor *const[]){a, v}, 2, "cannot search these dtypes");
  if (sorter) {
    const frit_shape *ss = ti_shape(ctx, sorter);
    if (!frit_dtype_is_int(TI_U(sorter)->dtype) || ss->ndim != 1 || !ti_dim_eq(ss->dims[0], ti_shape(ctx, a)->dims[0]))
      return ti_fail(ctx, op, (frit_tensor *const[]){a, sorter}, 2, "sorter must be a 1-d integer array as long as a");
    a = frit_take(ctx, a, sorter, 0);
  }
  frit_dtype ct = frit_promote(at, vt);
  frit_tensor *ka = sort_keys(ctx, ti_cast(ctx, a, ct), false);
  const frit_shape *vs = ti_shape(ctx, v);
  int nd = vs->ndim;
  frit_uop *tot = ti_dim(ctx, 1);
  for (int d = 0; d < nd; d++) tot = ti_dim_mul(ctx, tot, vs->dims[d]);
  frit_tensor *kv = sort_keys(ctx, frit_reshape_sym(ctx, ti_cast(ctx, v, ct), 1, &tot), false);
  frit_tensor *out = ti_full(ctx, FRIT_I64, (frit_scalar){.i = 0}, 1, &tot);
  frit_tensor *n = frit_tensor_of(ctx, ti_shape(ctx, a)->dims[0]), *q = NULL;
  if (!ka || !kv || !out || !n || frit_kernel_begin(ctx, op, 1, &tot, &q) != FRIT_OK) return NULL;
  frit_tensor *key = frit_kernel_load(ctx, kv, 1, &q), *it;
  int lo = frit_kernel_var(ctx, FRIT_I64, kc(ctx, FRIT_I64, 0)), hi = frit_kernel_var(ctx, FRIT_I64, n);
  /* at most 64 halvings of [lo, hi) */
  frit_kernel_loop_begin(ctx, kc(ctx, FRIT_I64, 0), kc(ctx, FRIT_I64, 64), kc(ctx, FRIT_I64, 1), &it);
  frit_tensor *l = frit_kernel_var_get(ctx, lo), *h = frit_kernel_var_get(ctx, hi);
  frit_kernel_if_begin(ctx, k2(ctx, FRIT_OP_CMPLE, h, l));
  frit_kernel_break(ctx);
  frit_kernel_if_end(ctx);
  frit_tensor *mid = k2(ctx, FRIT_OP_ADD, l, k2(ctx, FRIT_OP_SHR, k2(ctx, FRIT_OP_SUB, h, l), kc(ctx, FRIT_I64, 1)));
  frit_tensor *km = frit_kernel_load(ctx, ka, 1, &mid);
  /* left: first i with a[i] >= v; right: first i with a[i] > v */
  frit_tensor *go_right = right ? k2(ctx, FRIT_OP_CMPLE, km, key) : k2(ctx, FRIT_OP_CMPLT, km, key);
  frit_kernel_if_begin(ctx, go_right);
  frit_kernel_var_set(ctx, lo, k2(ctx, FRIT_OP_ADD, mid, kc(ctx, FRIT_I64, 1)));
  frit_kernel_else(ctx);
  frit_kernel_var_set(ctx, hi, mid);
  frit_kernel_if_end(ctx);
  frit_kernel_loop_end(ctx);
  frit_kernel_store(ctx, out, 1, &q, frit_kernel_var_get(ctx, lo));
  int nw = frit_kernel_end(ctx);
  if (nw < 0) return NULL;
  frit_tensor *res = out;
  if (nw == 1 && frit_kernel_written(ctx, 0, NULL, &res) != FRIT_OK) return NULL;
  return frit_reshape_sym(ctx, res, nd, vs->dims);
}
