/* Sorting and searching (frit_sort, frit_argsort, frit_searchsorted) as explicit kernels built
 * with the kernel builder: a stable LSD radix sort per row on order-preserving unsigned keys. */
#include "tensor/grad_rules.h"
#include "tensor/kernel_build.h"
#include "tensor/tensor_internal.h"

/* Rows of at most this many elements are sorted by insertion (no count buffer): below this the
 * radix sort's per-pass clear and prefix of 256 counts cost more than the row itself. */
#define SMALL_ROW 64

/* Opens a sort kernel: its indices (chunk bounds, digits, counted positions) are in range by
 * construction, so the schedule leaves them unclamped (kb_trust_indices). */
static bool begin(frit_ctx *ctx, const char *name, int nd, frit_uop *const *dims, frit_tensor **idx) {
  if (frit_kernel_begin(ctx, name, nd, dims, idx) != FRIT_OK) return false;
  kb_trust_indices(ctx);
  return true;
}

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

/* The largest key of an unsigned key dtype (all ones). */
static uint64_t key_max(frit_dtype ut) {
  int bits = frit_dtype_bits(ut);
  return bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
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
  uint64_t sign = 1ull << (bits - 1), umax = key_max(ut);
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

/* The values of keys made by sort_keys (its inverse there; a float's -0.0 comes back as 0.0 and
 * every NaN as one NaN, which restore_zeros_nans puts right). */
static frit_tensor *from_keys(frit_ctx *ctx, frit_tensor *k, frit_dtype dt, bool descending) {
  frit_dtype ut = TI_U(k)->dtype;
  frit_tensor *sign = ti_const_i(ctx, ut, (int64_t)(1ull << (frit_dtype_bits(ut) - 1)), k);
  if (descending) k = ti_alu1(ctx, FRIT_OP_NOT, k);
  if (frit_dtype_is_bool(dt) || frit_dtype_is_unsigned(dt)) return ti_cast(ctx, k, dt);
  frit_tensor *b = k2(ctx, FRIT_OP_XOR, k, sign);
  if (frit_dtype_is_float(dt)) /* a negative float's key is its bits inverted */
    b = ti_where(ctx, k2(ctx, FRIT_OP_CMPNE, k2(ctx, FRIT_OP_AND, k, sign), ti_const_i(ctx, ut, 0, k)), b,
                 ti_alu1(ctx, FRIT_OP_NOT, k));
  return bitcast(ctx, b, dt);
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
  frit_tensor *k = ld2(ctx, ks, r, i), *v = vs ? ld2(ctx, vs, r, i) : NULL;
  int pos = frit_kernel_var(ctx, FRIT_I64, i);
  frit_kernel_loop_begin(ctx, k2(ctx, FRIT_OP_SUB, i, kc(ctx, FRIT_I64, 1)), kc(ctx, FRIT_I64, -1),
                         kc(ctx, FRIT_I64, -1), &j);
  frit_tensor *kj = ld2(ctx, ks, r, j);
  frit_kernel_if_begin(ctx, k2(ctx, FRIT_OP_CMPLE, kj, k));
  frit_kernel_break(ctx);
  frit_kernel_if_end(ctx);
  frit_tensor *j1 = k2(ctx, FRIT_OP_ADD, j, kc(ctx, FRIT_I64, 1));
  st2(ctx, ks, r, j1, kj);
  if (vs) st2(ctx, vs, r, j1, ld2(ctx, vs, r, j));
  frit_kernel_var_set(ctx, pos, j);
  frit_kernel_loop_end(ctx);
  frit_tensor *p = frit_kernel_var_get(ctx, pos);
  st2(ctx, ks, r, p, k);
  if (vs) st2(ctx, vs, r, p, v);
  frit_kernel_loop_end(ctx);
}

static frit_tensor *ld3(frit_ctx *ctx, frit_tensor *t, frit_tensor *a, frit_tensor *b, frit_tensor *c) {
  return frit_kernel_load(ctx, t, 3, (frit_tensor *const[]){a, b, c});
}
static void st3(frit_ctx *ctx, frit_tensor *t, frit_tensor *a, frit_tensor *b, frit_tensor *c, frit_tensor *v) {
  frit_kernel_store(ctx, t, 3, (frit_tensor *const[]){a, b, c}, v);
}

/* Closes the open kernel and moves every tensor of `ts` that it wrote to its new version. */
static bool close_kernel(frit_ctx *ctx, frit_tensor **const *ts, int n) {
  int nw = frit_kernel_end(ctx);
  if (nw < 0) return false;
  for (int w = 0; w < nw; w++) {
    frit_tensor *old, *nu;
    if (frit_kernel_written(ctx, w, &old, &nu) != FRIT_OK) return false;
    for (int i = 0; i < n; i++)
      if (*ts[i] == old) *ts[i] = nu;
  }
  return true;
}

/* Rows are cut into chunks of CHUNK elements so that one long row is counted and scattered by
 * many kernel points (threads) at once; the per-chunk counts keep the order stable. */
#define CHUNK (1 << 16)
/* At most this many static rows take the chunked passes (see sort_rows). */
#define FEW_ROWS 8

typedef struct radix {
  frit_tensor *n, *nchunks, *cnt; /* row length, chunks per row (0-d i64), counts (R.., C, 256) */
  frit_uop *rows, *C, *grid[2];   /* R; C; the chunk grid: (R * C) for a static R, else (R, C) */
  int grid_nd;
} radix;

/* d itself, or max(d, 0) when range analysis cannot tell that d >= 0 (a product of several
 * symbolic dims may overflow its bounds): kernel grids must be provably non-negative. */
static frit_uop *grid_dim(frit_ctx *ctx, frit_uop *d) {
  if (!d || frit_uop_vmin(d) >= 0) return d;
  frit_uop *m = frit_binary(ctx, FRIT_OP_MAX, d, ti_dim(ctx, 0));
  return m ? frit_simplify(ctx, m) : NULL;
}

/* The chunks of R rows of n (N as a dim) elements: rx without its counts. live (NULL: 1) is a
 * dim of value 0 or 1 that multiplies the chunk count: 0 where the run takes another path, so
 * that the kernels have no points (and no work that a size-specialised variant would be built
 * for). */
static bool chunk_grid(frit_ctx *ctx, frit_uop *R, frit_uop *N, frit_tensor *n, frit_uop *live, radix *rx) {
  frit_uop *C = ti_dim_cdiv(ctx, N, CHUNK);
  *rx = (radix){.n = n, .C = live ? ti_dim_mul(ctx, C, live) : C, .rows = grid_dim(ctx, R)};
  rx->nchunks = frit_tensor_of(ctx, rx->C);
  if (frit_dim_value(R) >= 0)
    rx->grid_nd = 1, rx->grid[0] = grid_dim(ctx, ti_dim_mul(ctx, R, rx->C));
  else
    rx->grid_nd = 2, rx->grid[0] = rx->rows, rx->grid[1] = grid_dim(ctx, rx->C);
  return rx->C && rx->nchunks && rx->rows && rx->grid[0];
}

/* Opens a kernel over the chunk grid; the point's row, chunk and element range [lo, hi). One
 * flat axis when R is static, so that the chunks of one long row run in parallel (a 2-d grid
 * splits only its first axis among threads); (R, C) otherwise, as range analysis cannot bound
 * a product of three symbolic dims. */
static bool chunk_kernel(frit_ctx *ctx, const char *name, const radix *rx, frit_tensor **r, frit_tensor **c,
                         frit_tensor **lo, frit_tensor **hi) {
  frit_tensor *q[2];
  if (!begin(ctx, name, rx->grid_nd, rx->grid, q)) return false;
  if (rx->grid_nd == 1) {
    *r = k2(ctx, FRIT_OP_IDIV, q[0], rx->nchunks);
    *c = k2(ctx, FRIT_OP_MOD, q[0], rx->nchunks);
  } else {
    *r = q[0], *c = q[1];
  }
  *lo = k2(ctx, FRIT_OP_MUL, *c, kc(ctx, FRIT_I64, CHUNK));
  *hi = k2(ctx, FRIT_OP_MIN, k2(ctx, FRIT_OP_ADD, *lo, kc(ctx, FRIT_I64, CHUNK)), rx->n);
  return true;
}

static frit_tensor *digit(frit_ctx *ctx, frit_tensor *key, int p) {
  frit_dtype ut = TI_U(key)->dtype;
  frit_tensor *sh = k2(ctx, FRIT_OP_SHR, key, kc(ctx, ut, 8 * p));
  return ti_cast(ctx, k2(ctx, FRIT_OP_AND, sh, kc(ctx, ut, 255)), FRIT_I64);
}

/* Opens `if (n > SMALL_ROW)` when shorter rows may occur (insertion sort takes them). */
static void if_long(frit_ctx *ctx, const radix *rx, bool guard) {
  if (guard) frit_kernel_if_begin(ctx, k2(ctx, FRIT_OP_CMPLT, kc(ctx, FRIT_I64, SMALL_ROW), rx->n));
}

/* One stable LSD radix pass on the 8-bit digit p: three kernels (count per chunk, exclusive
 * prefix per row over (digit, chunk), scatter per chunk) from (sk, sv) into (*dk, *dv); the
 * last pass writes no keys, unless no values travel (sv NULL). */
static bool radix_pass(frit_ctx *ctx, radix *rx, int p, bool last, bool guard, frit_tensor *sk, frit_tensor *sv,
                       frit_tensor **dk, frit_tensor **dv) {
  frit_tensor *zero = kc(ctx, FRIT_I64, 0), *one = kc(ctx, FRIT_I64, 1), *c256 = kc(ctx, FRIT_I64, 256);
  frit_tensor *r, *c, *lo, *hi, *i, *d;
  frit_tensor **ts[3] = {&rx->cnt, dk, dv};
  /* count (a chunk clears its own counts first: their old values are scratch) */
  if (!chunk_kernel(ctx, "sort_count", rx, &r, &c, &lo, &hi)) return false;
  kb_scratch(ctx, rx->cnt);
  if_long(ctx, rx, guard);
  frit_kernel_loop_begin(ctx, zero, c256, one, &d);
  st3(ctx, rx->cnt, r, c, d, zero);
  frit_kernel_loop_end(ctx);
  frit_kernel_loop_begin(ctx, lo, hi, one, &i);
  frit_tensor *dg = digit(ctx, ld2(ctx, sk, r, i), p);
  st3(ctx, rx->cnt, r, c, dg, k2(ctx, FRIT_OP_ADD, ld3(ctx, rx->cnt, r, c, dg), one));
  frit_kernel_loop_end(ctx);
  if (guard) frit_kernel_if_end(ctx);
  if (!close_kernel(ctx, ts, 1)) return false;
  /* exclusive prefix in (digit, chunk) order */
  if (!begin(ctx, "sort_prefix", 1, &rx->rows, &r)) return false;
  if_long(ctx, rx, guard);
  int run = frit_kernel_var(ctx, FRIT_I64, zero);
  frit_kernel_loop_begin(ctx, zero, c256, one, &d);
  frit_kernel_loop_begin(ctx, zero, rx->nchunks, one, &c);
  frit_tensor *t = ld3(ctx, rx->cnt, r, c, d), *acc = frit_kernel_var_get(ctx, run);
  st3(ctx, rx->cnt, r, c, d, acc);
  frit_kernel_var_set(ctx, run, k2(ctx, FRIT_OP_ADD, acc, t));
  frit_kernel_loop_end(ctx);
  frit_kernel_loop_end(ctx);
  if (guard) frit_kernel_if_end(ctx);
  if (!close_kernel(ctx, ts, 1)) return false;
  /* scatter (a permutation of each row: every element of the destinations is written) */
  if (!chunk_kernel(ctx, "sort_scatter", rx, &r, &c, &lo, &hi)) return false;
  if (!last || !sv) kb_scratch(ctx, *dk);
  if (sv) kb_scratch(ctx, *dv);
  if_long(ctx, rx, guard);
  frit_kernel_loop_begin(ctx, lo, hi, one, &i);
  frit_tensor *key = ld2(ctx, sk, r, i), *dk_ = digit(ctx, key, p);
  frit_tensor *pos = ld3(ctx, rx->cnt, r, c, dk_);
  st3(ctx, rx->cnt, r, c, dk_, k2(ctx, FRIT_OP_ADD, pos, one));
  if (!last || !sv) st2(ctx, *dk, r, pos, key);
  if (sv) st2(ctx, *dv, r, pos, ld2(ctx, sv, r, i));
  frit_kernel_loop_end(ctx);
  if (guard) frit_kernel_if_end(ctx);
  return close_kernel(ctx, ts, 3);
}

/* The whole radix sort of one row in one kernel point (rows of SMALL_ROW < n <= CHUNK: a row and
 * its 256 counts stay in cache through all passes), over the same buffers as the chunked passes:
 * A -> B -> C -> B ...; cnt is (R.., 256). */
static bool radix_rows(frit_ctx *ctx, frit_uop *R, frit_tensor *n, frit_tensor *cond, frit_tensor *k,
                       frit_tensor *vals, frit_tensor **bk, frit_tensor **bv, frit_tensor **cnt, int passes) {
  frit_tensor *zero = kc(ctx, FRIT_I64, 0), *one = kc(ctx, FRIT_I64, 1), *c256 = kc(ctx, FRIT_I64, 256);
  frit_tensor *r, *i, *d;
  frit_tensor **ts[5] = {cnt, &bk[0], &bv[0], &bk[1], &bv[1]};
  R = grid_dim(ctx, R);
  if (!begin(ctx, "sort_rows", 1, &R, &r)) return false;
  /* each row clears its counts, and every pass writes a permutation of the row: scratch all
   * (with cond false, short rows, the insertion sort's kernel writes the result in full) */
  for (int b = 0; b < 2; b++) kb_scratch(ctx, bk[b]), kb_scratch(ctx, vals ? bv[b] : NULL);
  kb_scratch(ctx, *cnt);
  if (cond) frit_kernel_if_begin(ctx, cond);
  for (int p = 0; p < passes; p++) {
    frit_tensor *sk = p == 0 ? k : bk[(p + 1) % 2], *sv = !vals ? NULL : p == 0 ? vals : bv[(p + 1) % 2];
    frit_tensor *dk = bk[p % 2], *dv = vals ? bv[p % 2] : NULL;
    frit_kernel_loop_begin(ctx, zero, c256, one, &d);
    st2(ctx, *cnt, r, d, zero);
    frit_kernel_loop_end(ctx);
    frit_kernel_loop_begin(ctx, zero, n, one, &i);
    frit_tensor *dg = digit(ctx, ld2(ctx, sk, r, i), p);
    st2(ctx, *cnt, r, dg, k2(ctx, FRIT_OP_ADD, ld2(ctx, *cnt, r, dg), one));
    frit_kernel_loop_end(ctx);
    int sum = frit_kernel_var(ctx, FRIT_I64, zero);
    frit_kernel_loop_begin(ctx, zero, c256, one, &d);
    frit_tensor *c = ld2(ctx, *cnt, r, d), *acc = frit_kernel_var_get(ctx, sum);
    st2(ctx, *cnt, r, d, acc);
    frit_kernel_var_set(ctx, sum, k2(ctx, FRIT_OP_ADD, acc, c));
    frit_kernel_loop_end(ctx);
    frit_kernel_loop_begin(ctx, zero, n, one, &i);
    frit_tensor *key = ld2(ctx, sk, r, i), *dg2 = digit(ctx, key, p);
    frit_tensor *pos = ld2(ctx, *cnt, r, dg2);
    st2(ctx, *cnt, r, dg2, k2(ctx, FRIT_OP_ADD, pos, one));
    if (p + 1 < passes || !sv) st2(ctx, dk, r, pos, key);
    if (sv) st2(ctx, dv, r, pos, ld2(ctx, sv, r, i));
    frit_kernel_loop_end(ctx);
  }
  if (cond) frit_kernel_if_end(ctx);
  return close_kernel(ctx, ts, 5);
}

/* max(0, min(1, d)) as a dim: 1 when d > 0 (d an integer dim expression). */
static frit_uop *positive(frit_ctx *ctx, frit_uop *d) {
  if (!d) return NULL;
  if (d->op == FRIT_OP_CONST) return ti_dim(ctx, d->arg.value.i > 0);
  frit_uop *r = frit_binary(ctx, FRIT_OP_MIN, frit_binary(ctx, FRIT_OP_MAX, d, ti_dim(ctx, 0)), ti_dim(ctx, 1));
  return r ? frit_simplify(ctx, r) : NULL;
}

/* 1 when the dim N <= m, else 0 (a dim). */
static frit_uop *at_most(frit_ctx *ctx, frit_uop *N, int64_t m) { return positive(ctx, ti_dim_sub(ctx, ti_dim(ctx, m + 1), N)); }

static frit_tensor *fill(frit_ctx *ctx, frit_dtype dt, int64_t v, int nd, frit_uop *const *dims) {
  frit_scalar sc = frit_dtype_is_float(dt) ? (frit_scalar){.f = (double)v} : (frit_scalar){.i = v};
  return ti_full(ctx, dt, frit_scalar_normalize(sc, dt), nd, dims);
}

/* Many rows of keys alone (no values: a sorting network is not stable) of at most NET_MAX
 * elements are sorted by a bitonic network, NET_LANES rows at a time: the rows of a block are
 * the lanes of one vector (a scratch (blocks, P, NET_LANES), P the power of two >= n, padded with
 * the largest key), so each compare-exchange is a vector min and max over consecutive memory.
 * n log^2 n comparisons a row, but NET_LANES rows an instruction: at 10^4 rows of 100 this is
 * several times the radix sort's speed, whose scalar passes clear and sum 256 counts each. */
#define NET_MAX 256
#define NET_LANES 32

/* q with `bits` zero bits inserted at the bit of the power of two j (and above it). */
static frit_tensor *insert_zero_bits(frit_ctx *ctx, frit_tensor *q, frit_tensor *j, int bits) {
  frit_tensor *low = k2(ctx, FRIT_OP_AND, q, k2(ctx, FRIT_OP_SUB, j, kc(ctx, FRIT_I64, 1)));
  return k2(ctx, FRIT_OP_OR, k2(ctx, FRIT_OP_SHL, k2(ctx, FRIT_OP_SUB, q, low), kc(ctx, FRIT_I64, bits)), low);
}

/* For every lane of block blk of the network scratch t: compare-exchanges of the keys at the m
 * (2 or 4) positions at, ascending: (0, 1) for a pair; (0, 2), (1, 3), then (0, 1), (2, 3) for a
 * quad (two steps of a bitonic merge). */
static void net_exchange(frit_ctx *ctx, frit_tensor *t, frit_tensor *blk, int m, frit_tensor *const *at) {
  frit_tensor *b, *v[4];
  frit_kernel_loop_begin(ctx, kc(ctx, FRIT_I64, 0), kc(ctx, FRIT_I64, NET_LANES), kc(ctx, FRIT_I64, 1), &b);
  for (int e = 0; e < m; e++) v[e] = ld3(ctx, t, blk, at[e], b);
  static const int pair[2] = {0, 1}, quad[8] = {0, 2, 1, 3, 0, 1, 2, 3};
  const int *pr = m == 4 ? quad : pair, exchanges = m == 4 ? 4 : 1;
  for (int c = 0; c < exchanges; c++) {
    frit_tensor *x = v[pr[2 * c]], *y = v[pr[2 * c + 1]];
    v[pr[2 * c]] = k2(ctx, FRIT_OP_MIN, x, y);
    v[pr[2 * c + 1]] = k2(ctx, FRIT_OP_MAX, x, y);
  }
  for (int e = 0; e < m; e++) st3(ctx, t, blk, at[e], b, v[e]);
  frit_kernel_loop_end(ctx);
}

/* The rows (R, n) of keys k sorted ascending into out (R, n), when cond (NULL: always). With
 * `positions` (an argsort, keys of at most 32 bits), out gets the positions that sort each row,
 * stably: the network sorts keys widened by POS_BITS bits that hold the position (unique keys
 * whose order is the stable order), and the store keeps those bits. */
#define POS_BITS 8 /* positions < NET_MAX */
static bool network_rows(frit_ctx *ctx, frit_uop *R, frit_uop *N, frit_tensor *n, frit_tensor *cond, frit_tensor *k,
                         bool positions, frit_tensor **out) {
  frit_dtype kt = TI_U(k)->dtype, ut = kt;
  if (positions) ut = frit_dtype_bits(kt) == 8 ? FRIT_U16 : frit_dtype_bits(kt) == 16 ? FRIT_U32 : FRIT_U64;
  int64_t nstat = frit_dim_value(N), P = 1, lgP = 0;
  for (; nstat >= 0 && P < nstat; P *= 2) lgP++;
  frit_uop *blocks = ti_dim_cdiv(ctx, R, NET_LANES);
  if (nstat < 0) blocks = ti_dim_mul(ctx, blocks, at_most(ctx, N, NET_MAX));
  blocks = grid_dim(ctx, blocks);
  /* a static n gets its own P; a symbolic one room for any P < 2n that the network takes */
  frit_uop *room = nstat >= 0 ? ti_dim(ctx, P)
                              : frit_binary(ctx, FRIT_OP_MIN, ti_dim_mul(ctx, N, ti_dim(ctx, 2)), ti_dim(ctx, NET_MAX));
  if (room && nstat < 0) room = frit_simplify(ctx, room);
  frit_uop *tdims[3] = {blocks, room, ti_dim(ctx, NET_LANES)};
  frit_tensor *t = fill(ctx, ut, 6, 3, tdims);
  frit_tensor *zero = kc(ctx, FRIT_I64, 0), *one = kc(ctx, FRIT_I64, 1), *lanes = kc(ctx, FRIT_I64, NET_LANES);
  frit_tensor *blk, *b, *i, *q, *kk, *rows = frit_tensor_of(ctx, R);
  frit_tensor **ts[2] = {&t, out};
  if (!t || !rows || !blocks || !begin(ctx, "sort_network", 1, &blocks, &blk)) return false;
  kb_scratch(ctx, t), kb_scratch(ctx, *out);
  if (cond) frit_kernel_if_begin(ctx, cond);
  frit_tensor *pw = kc(ctx, FRIT_I64, P), *lg = kc(ctx, FRIT_I64, lgP);
  if (nstat < 0) { /* P and log2 P at run time (n >= 1 here) */
    int pv = frit_kernel_var(ctx, FRIT_I64, one), lv = frit_kernel_var(ctx, FRIT_I64, zero);
    frit_kernel_loop_begin(ctx, zero, kc(ctx, FRIT_I64, 64), one, &i);
    frit_kernel_if_begin(ctx, k2(ctx, FRIT_OP_CMPLE, n, frit_kernel_var_get(ctx, pv)));
    frit_kernel_break(ctx);
    frit_kernel_if_end(ctx);
    frit_kernel_var_set(ctx, pv, k2(ctx, FRIT_OP_SHL, frit_kernel_var_get(ctx, pv), one));
    frit_kernel_var_set(ctx, lv, k2(ctx, FRIT_OP_ADD, frit_kernel_var_get(ctx, lv), one));
    frit_kernel_loop_end(ctx);
    pw = frit_kernel_var_get(ctx, pv), lg = frit_kernel_var_get(ctx, lv);
  }
  frit_tensor *last = k2(ctx, FRIT_OP_SUB, rows, one), *nlast = k2(ctx, FRIT_OP_SUB, n, one);
  frit_tensor *base = k2(ctx, FRIT_OP_MUL, blk, lanes);
  frit_tensor *umax = kc(ctx, ut, (int64_t)key_max(ut));
  /* load: a row per lane (rows past R repeat the last one), the padding the largest key */
  frit_kernel_loop_begin(ctx, zero, pw, one, &i);
  frit_kernel_loop_begin(ctx, zero, lanes, one, &b);
  frit_tensor *r = k2(ctx, FRIT_OP_MIN, k2(ctx, FRIT_OP_ADD, base, b), last);
  frit_tensor *v = ld2(ctx, k, r, k2(ctx, FRIT_OP_MIN, i, nlast));
  if (positions) v = k2(ctx, FRIT_OP_OR, k2(ctx, FRIT_OP_SHL, ti_cast(ctx, v, ut), kc(ctx, ut, POS_BITS)), ti_cast(ctx, i, ut));
  st3(ctx, t, blk, i, b, ti_where(ctx, k2(ctx, FRIT_OP_CMPLT, i, n), v, umax));
  frit_kernel_loop_end(ctx);
  frit_kernel_loop_end(ctx);
  /* stage kk sorts blocks of kp = 2 << kk in kk + 1 steps: the first pairs i with its mirror
   * i ^ (kp - 1), the others i with i | j (j = kp / 4, ..., 1), the smaller key always to i (i's
   * bit j clear). Those later steps go two at a time over quads i, i | h, i | j, i | j | h (h =
   * j / 2): each key is loaded and stored once for two compare-exchanges. */
  frit_kernel_loop_begin(ctx, zero, lg, one, &kk);
  frit_tensor *kp = k2(ctx, FRIT_OP_SHL, kc(ctx, FRIT_I64, 2), kk), *half = k2(ctx, FRIT_OP_SHR, pw, one);
  frit_tensor *j = k2(ctx, FRIT_OP_SHR, kp, one);
  frit_kernel_loop_begin(ctx, zero, half, one, &q);
  frit_tensor *ia = insert_zero_bits(ctx, q, j, 1);
  net_exchange(ctx, t, blk, 2, (frit_tensor *const[]){ia, k2(ctx, FRIT_OP_XOR, ia, k2(ctx, FRIT_OP_SUB, kp, one))});
  frit_kernel_loop_end(ctx);
  frit_tensor *pp;
  frit_kernel_loop_begin(ctx, zero, k2(ctx, FRIT_OP_SHR, kk, one), one, &pp);
  j = k2(ctx, FRIT_OP_SHR, kp, k2(ctx, FRIT_OP_ADD, kc(ctx, FRIT_I64, 2), k2(ctx, FRIT_OP_SHL, pp, one)));
  frit_tensor *h = k2(ctx, FRIT_OP_SHR, j, one);
  frit_kernel_loop_begin(ctx, zero, k2(ctx, FRIT_OP_SHR, pw, kc(ctx, FRIT_I64, 2)), one, &q);
  frit_tensor *i0 = insert_zero_bits(ctx, q, h, 2), *i2 = k2(ctx, FRIT_OP_ADD, i0, j);
  net_exchange(ctx, t, blk, 4, (frit_tensor *const[]){i0, k2(ctx, FRIT_OP_ADD, i0, h), i2, k2(ctx, FRIT_OP_ADD, i2, h)});
  frit_kernel_loop_end(ctx);
  frit_kernel_loop_end(ctx);
  frit_kernel_if_begin(ctx, k2(ctx, FRIT_OP_AND, kk, one)); /* an odd count: the step j = 1 */
  frit_kernel_loop_begin(ctx, zero, half, one, &q);
  ia = k2(ctx, FRIT_OP_SHL, q, one);
  net_exchange(ctx, t, blk, 2, (frit_tensor *const[]){ia, k2(ctx, FRIT_OP_ADD, ia, one)});
  frit_kernel_loop_end(ctx);
  frit_kernel_if_end(ctx);
  frit_kernel_loop_end(ctx);
  /* store the rows that exist */
  frit_kernel_loop_begin(ctx, zero, lanes, one, &b);
  frit_tensor *rr = k2(ctx, FRIT_OP_ADD, base, b);
  frit_kernel_if_begin(ctx, k2(ctx, FRIT_OP_CMPLT, rr, rows));
  frit_kernel_loop_begin(ctx, zero, n, one, &i);
  frit_tensor *sorted = ld3(ctx, t, blk, i, b);
  if (positions) sorted = ti_cast(ctx, k2(ctx, FRIT_OP_AND, sorted, kc(ctx, ut, (1 << POS_BITS) - 1)), TI_U(*out)->dtype);
  st2(ctx, *out, rr, i, sorted);
  frit_kernel_loop_end(ctx);
  frit_kernel_if_end(ctx);
  frit_kernel_loop_end(ctx);
  if (cond) frit_kernel_if_end(ctx);
  return close_kernel(ctx, ts, 2);
}

/* Sorts the rows of (R, n) keys `k` (costly_keys: computed by many operations); with
 * `positions` (argsort) carrying each element's position along its row and returning the sorted
 * positions, else returning the sorted keys (half the bytes moved a pass). Many rows of keys
 * alone, or of positions with keys of at most 32 bits, of n <= NET_MAX: the bitonic network; else rows
 * of n <= SMALL_ROW: insertion sort (each decided at build time for a static n, per run for a
 * symbolic one, each path then guarded by its condition); longer rows: radix sort, for many rows
 * a row per kernel point, for a few static rows passes of three kernels over chunks of the rows
 * (many threads per row). Radix passes go through two scratch
 * pairs: A (the inputs) -> B -> C -> B ... The scratch buffers get distinct fill values: equal
 * constant tensors are one node (hash-consing), and a kernel would then write two buffers as one. */
static frit_tensor *sort_rows(frit_ctx *ctx, frit_tensor *k, bool positions, bool costly_keys) {
  const frit_shape *s = ti_shape(ctx, k);
  frit_tensor *vals = positions ? ti_axis_index(ctx, k, 1) : NULL;
  if (positions && !vals) return NULL;
  frit_uop *R = s->dims[0], *N = s->dims[1];
  int64_t nstat = frit_dim_value(N);
  frit_dtype ut = TI_U(k)->dtype, vt = vals ? TI_U(vals)->dtype : ut;
  int passes = frit_dtype_bits(ut) / 8;
  frit_tensor *ntensor = frit_tensor_of(ctx, N);
  if (!ntensor) return NULL;
  if (nstat >= 0 && nstat <= 1) return vals ? vals : k;
  /* chunked passes serve a few static rows (a 1-d sort): they bring threads to one row; many
   * rows are parallel already and sort faster a row per point, in cache (and two radix paths for
   * symbolic rows would double the code to compile) */
  bool stat = nstat >= 0, few = frit_dim_value(R) >= 0 && frit_dim_value(R) <= FEW_ROWS;
  /* many rows of keys alone: the network up to NET_MAX, where the insertion sort would be too */
  bool net = !few && (!vals || frit_dtype_bits(ut) <= 32);
  int64_t small_max = net ? NET_MAX : SMALL_ROW;
  bool may_insert = !net && (!stat || nstat <= SMALL_ROW), may_net = net && (!stat || nstat <= NET_MAX);
  bool may_mid = !few && (!stat || nstat > small_max), may_long = few && (!stat || nstat > SMALL_ROW);
  /* keys that cost many operations (floats: ten) in one vectorised kernel, not in the scalar
   * loops of a row's first count and scatter; measured 1.2x on 1e4 rows of 100, but 0.9x on one
   * row of 1e7, which the chunked passes read from memory either way */
  if (costly_keys && !few && !(k = frit_contiguous(ctx, k))) return NULL;
  frit_tensor *bk[2] = {fill(ctx, ut, 0, 2, s->dims), fill(ctx, ut, 3, 2, s->dims)};
  frit_tensor *bv[2] = {NULL, NULL};
  if (vals) bv[0] = fill(ctx, vt, 1, 2, s->dims), bv[1] = fill(ctx, vt, 4, 2, s->dims);
  int res = (passes + 1) % 2; /* the pair the last pass writes */
  frit_uop *gt_small = positive(ctx, ti_dim_sub(ctx, N, ti_dim(ctx, small_max)));
  frit_tensor *small = k2(ctx, FRIT_OP_CMPLE, ntensor, kc(ctx, FRIT_I64, small_max));
  if (!gt_small || !small) return NULL;
  if (may_net) {
    frit_tensor *cond = stat ? NULL : k2(ctx, FRIT_OP_AND, small, k2(ctx, FRIT_OP_CMPLT, kc(ctx, FRIT_I64, 0), ntensor));
    if (!network_rows(ctx, R, N, ntensor, cond, k, vals != NULL, vals ? &bv[res] : &bk[res])) return NULL;
  }
  if (may_mid) {
    frit_tensor *cnt = fill(ctx, FRIT_I64, 2, 2, (frit_uop *const[]){ti_dim_mul(ctx, R, gt_small), ti_dim(ctx, 256)});
    frit_tensor *cond = stat ? NULL : ti_alu1(ctx, FRIT_OP_NOT, small);
    /* with a symbolic n, no points where the run takes another path (nor work to specialise) */
    frit_uop *RM = stat ? R : ti_dim_mul(ctx, R, gt_small);
    if (!radix_rows(ctx, RM, ntensor, cond, k, vals, bk, bv, &cnt, passes)) return NULL;
  }
  if (may_long) {
    radix rx;
    if (!chunk_grid(ctx, R, N, ntensor, stat ? NULL : gt_small, &rx)) return NULL;
    rx.cnt = fill(ctx, FRIT_I64, 5, 3, (frit_uop *const[]){ti_dim_mul(ctx, R, gt_small), rx.C, ti_dim(ctx, 256)});
    if (!rx.cnt) return NULL;
    for (int p = 0; p < passes; p++) {
      frit_tensor *sk = p == 0 ? k : bk[(p + 1) % 2], *sv = !vals ? NULL : p == 0 ? vals : bv[(p + 1) % 2];
      if (!radix_pass(ctx, &rx, p, p + 1 == passes, !stat, sk, sv, &bk[p % 2], &bv[p % 2])) return NULL;
    }
  }
  if (may_insert) {
    frit_tensor *r, *i, **ts[2] = {&bk[res], &bv[res]};
    frit_uop *RG = grid_dim(ctx, stat ? R : ti_dim_mul(ctx, R, at_most(ctx, N, SMALL_ROW)));
    if (!begin(ctx, "sort_short", 1, &RG, &r)) return NULL;
    if (!stat) frit_kernel_if_begin(ctx, small);
    frit_kernel_loop_begin(ctx, kc(ctx, FRIT_I64, 0), ntensor, kc(ctx, FRIT_I64, 1), &i);
    st2(ctx, bk[res], r, i, ld2(ctx, k, r, i));
    if (vals) st2(ctx, bv[res], r, i, ld2(ctx, vals, r, i));
    frit_kernel_loop_end(ctx);
    insertion_rows(ctx, r, ntensor, bk[res], vals ? bv[res] : NULL);
    if (!stat) frit_kernel_if_end(ctx);
    if (!close_kernel(ctx, ts, 2)) return NULL;
  }
  return vals ? bv[res] : bk[res];
}

/* Puts the zeros and NaNs of the rows x (R, n) back into sorted, the floats of their sorted keys,
 * where the keys lost them: the zeros' block (after the elements below zero, or above it when
 * descending) gets x's zeros with their signs, and the NaN block (last) x's NaNs with their bits,
 * each in x's order, as a stable sort of the values would have left them. Three kernels over
 * chunks of the rows: count zeros, NaNs and elements before the zeros; turn the counts into
 * each chunk's first positions (and whether it has any); copy from the chunks that have some. */
static frit_tensor *restore_zeros_nans(frit_ctx *ctx, frit_tensor *sorted, frit_tensor *x, bool descending) {
  const frit_shape *s = ti_shape(ctx, x);
  frit_dtype dt = TI_U(x)->dtype;
  frit_tensor *n = frit_tensor_of(ctx, s->dims[1]), *zero = kc(ctx, FRIT_I64, 0), *one = kc(ctx, FRIT_I64, 1);
  frit_tensor *two = kc(ctx, FRIT_I64, 2), *r, *c, *lo, *hi, *i;
  radix rx;
  if (!n || !chunk_grid(ctx, s->dims[0], s->dims[1], n, NULL, &rx)) return NULL;
  frit_tensor *cnt = fill(ctx, FRIT_I64, 7, 3, (frit_uop *const[]){s->dims[0], rx.C, ti_dim(ctx, 3)});
  frit_tensor **ts[2] = {&cnt, &sorted};
  if (!cnt) return NULL;
  /* per chunk: zeros, NaNs, and elements sorted before the zeros */
  if (!chunk_kernel(ctx, "sort_fix_count", &rx, &r, &c, &lo, &hi)) return NULL;
  kb_scratch(ctx, cnt); /* each chunk stores its three counts */
  int nv[3];
  for (int k = 0; k < 3; k++) nv[k] = frit_kernel_var(ctx, FRIT_I64, zero);
  frit_kernel_loop_begin(ctx, lo, hi, one, &i);
  frit_tensor *v = ld2(ctx, x, r, i), *fz = ti_const_f(ctx, dt, 0.0, v);
  frit_tensor *is[3] = {k2(ctx, FRIT_OP_CMPEQ, v, fz), k2(ctx, FRIT_OP_CMPNE, v, v),
                        descending ? k2(ctx, FRIT_OP_CMPLT, fz, v) : k2(ctx, FRIT_OP_CMPLT, v, fz)};
  for (int k = 0; k < 3; k++)
    frit_kernel_var_set(ctx, nv[k], k2(ctx, FRIT_OP_ADD, frit_kernel_var_get(ctx, nv[k]), ti_cast(ctx, is[k], FRIT_I64)));
  frit_kernel_loop_end(ctx);
  for (int k = 0; k < 3; k++) st3(ctx, cnt, r, c, kc(ctx, FRIT_I64, k), frit_kernel_var_get(ctx, nv[k]));
  if (!close_kernel(ctx, ts, 1)) return NULL;
  /* per row: each chunk's first zero and first NaN position */
  if (!begin(ctx, "sort_fix_prefix", 1, &rx.rows, &r)) return NULL;
  int before = frit_kernel_var(ctx, FRIT_I64, zero), nans = frit_kernel_var(ctx, FRIT_I64, zero);
  frit_kernel_loop_begin(ctx, zero, rx.nchunks, one, &c);
  frit_kernel_var_set(ctx, before, k2(ctx, FRIT_OP_ADD, frit_kernel_var_get(ctx, before), ld3(ctx, cnt, r, c, two)));
  frit_kernel_var_set(ctx, nans, k2(ctx, FRIT_OP_ADD, frit_kernel_var_get(ctx, nans), ld3(ctx, cnt, r, c, one)));
  frit_kernel_loop_end(ctx);
  int pz = frit_kernel_var(ctx, FRIT_I64, frit_kernel_var_get(ctx, before));
  int pn = frit_kernel_var(ctx, FRIT_I64, k2(ctx, FRIT_OP_SUB, n, frit_kernel_var_get(ctx, nans)));
  frit_kernel_loop_begin(ctx, zero, rx.nchunks, one, &c);
  frit_tensor *z = ld3(ctx, cnt, r, c, zero), *q = ld3(ctx, cnt, r, c, one);
  frit_tensor *az = frit_kernel_var_get(ctx, pz), *an = frit_kernel_var_get(ctx, pn);
  st3(ctx, cnt, r, c, zero, az);
  st3(ctx, cnt, r, c, one, an);
  st3(ctx, cnt, r, c, two, k2(ctx, FRIT_OP_ADD, z, q));
  frit_kernel_var_set(ctx, pz, k2(ctx, FRIT_OP_ADD, az, z));
  frit_kernel_var_set(ctx, pn, k2(ctx, FRIT_OP_ADD, an, q));
  frit_kernel_loop_end(ctx);
  if (!close_kernel(ctx, ts, 1)) return NULL;
  /* per chunk that has any: copy the zeros and NaNs to their positions */
  if (!chunk_kernel(ctx, "sort_fix_copy", &rx, &r, &c, &lo, &hi)) return NULL;
  frit_kernel_if_begin(ctx, k2(ctx, FRIT_OP_CMPLT, zero, ld3(ctx, cnt, r, c, two)));
  int at[2] = {frit_kernel_var(ctx, FRIT_I64, ld3(ctx, cnt, r, c, zero)),
               frit_kernel_var(ctx, FRIT_I64, ld3(ctx, cnt, r, c, one))};
  frit_kernel_loop_begin(ctx, lo, hi, one, &i);
  v = ld2(ctx, x, r, i);
  frit_tensor *which[2] = {k2(ctx, FRIT_OP_CMPEQ, v, ti_const_f(ctx, dt, 0.0, v)), k2(ctx, FRIT_OP_CMPNE, v, v)};
  for (int k = 0; k < 2; k++) {
    frit_kernel_if_begin(ctx, which[k]);
    frit_tensor *a = frit_kernel_var_get(ctx, at[k]);
    st2(ctx, sorted, r, a, v);
    frit_kernel_var_set(ctx, at[k], k2(ctx, FRIT_OP_ADD, a, one));
    frit_kernel_if_end(ctx);
  }
  frit_kernel_loop_end(ctx);
  frit_kernel_if_end(ctx);
  return close_kernel(ctx, ts, 2) ? sorted : NULL;
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
  /* argsort carries the indices; a sort moves its keys alone (half the bytes a pass), whose
   * values they give back, except a float's zeros (-0.0 and 0.0 have one key) and NaNs (one
   * key), which restore_zeros_nans copies from the input in its order */
  frit_tensor *keys = sort_keys(ctx, rows, descending != 0);
  if (!keys) return NULL;
  frit_tensor *sorted = sort_rows(ctx, keys, arg, frit_dtype_is_float(dt));
  if (sorted && !arg) sorted = from_keys(ctx, sorted, dt, descending != 0);
  if (sorted && !arg && frit_dtype_is_float(dt)) sorted = restore_zeros_nans(ctx, sorted, rows, descending != 0);
  /* the rule sees the rows the kernel reads; the moves around them differentiate as a graph */
  if (sorted && !arg && frit_dtype_is_float(dt)) sorted = tg_sort(ctx, sorted, rows, 1, descending);
  return sorted ? from_rows(ctx, sorted, x, perm) : NULL;
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
  frit_uop *grid = grid_dim(ctx, tot);
  if (!ka || !kv || !out || !n || frit_kernel_begin(ctx, op, 1, &grid, &q) != FRIT_OK) return NULL;
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
