/* Neural-net ops of the tensor frontend: conv2d and pooling through a window view built from
 * movement ops only (tinygrad's _pool), softmax/log_softmax, and take/take_along_axis/one_hot. */
#include "tensor/composite.h"
#include "tensor/grad_rules.h"

#include <math.h>

/* ---------- the window view ---------- */

static int64_t cdiv64(int64_t a, int64_t b) { return (a + b - 1) / b; }

static frit_tensor *reshape_i(frit_ctx *ctx, frit_tensor *x, int nkeep, int n, const int64_t *tail) {
  if (!x) return NULL;
  const frit_shape *s = ti_shape(ctx, x);
  frit_uop *d[FRIT_MAX_DIMS];
  for (int i = 0; i < nkeep; i++) d[i] = s->dims[i];
  for (int i = 0; i < n; i++) d[nkeep + i] = ti_dim(ctx, tail[i]);
  return ti_reshape(ctx, x, nkeep + n, d);
}

static frit_tensor *expand_i(frit_ctx *ctx, frit_tensor *x, int nkeep, int n, const int64_t *tail) {
  if (!x) return NULL;
  const frit_shape *s = ti_shape(ctx, x);
  frit_uop *d[FRIT_MAX_DIMS];
  for (int i = 0; i < nkeep; i++) d[i] = s->dims[i];
  for (int i = 0; i < n; i++) d[nkeep + i] = ti_dim(ctx, tail[i]);
  return ti_expand(ctx, x, nkeep + n, d);
}

/* Keeps [0, end[i]) of the trailing n axes; the first nkeep axes are left whole. */
static frit_tensor *shrink_i(frit_ctx *ctx, frit_tensor *x, int nkeep, int n, const int64_t *end) {
  if (!x) return NULL;
  const frit_shape *s = ti_shape(ctx, x);
  frit_uop *b[FRIT_MAX_DIMS], *e[FRIT_MAX_DIMS], *zero = ti_dim(ctx, 0);
  for (int i = 0; i < nkeep; i++) b[i] = zero, e[i] = s->dims[i];
  for (int i = 0; i < n; i++) b[nkeep + i] = zero, e[nkeep + i] = ti_dim(ctx, end[i]);
  return ti_shrink(ctx, x, b, e);
}

/* Zero padding of the trailing n axes by before[i] / after[i]. */
static frit_tensor *pad_i(frit_ctx *ctx, frit_tensor *x, int nkeep, int n, const int64_t *before,
                          const int64_t *after) {
  if (!x) return NULL;
  frit_uop *b[FRIT_MAX_DIMS], *a[FRIT_MAX_DIMS], *zero = ti_dim(ctx, 0);
  bool any = false;
  for (int i = 0; i < nkeep; i++) b[i] = a[i] = zero;
  for (int i = 0; i < n; i++) {
    b[nkeep + i] = ti_dim(ctx, before[i]), a[nkeep + i] = ti_dim(ctx, after[i]);
    any |= before[i] != 0 || after[i] != 0;
  }
  return any ? ti_pad(ctx, x, b, a) : x;
}

/* Output size of a window of k taps with stride st and dilation dl over i elements, or <= 0. */
static int64_t win_out(int64_t i, int64_t k, int64_t st, int64_t dl) {
  int64_t span = dl * (k - 1) + 1;
  return i < span ? 0 : cdiv64(i - span + 1, st);
}

/* The trailing nk axes of x (static sizes i_j, at least one window each) as windows:
 * (lead..., o_1..o_nk, k_1..k_nk) with out[.., o.., t..] = x[.., o_j*st_j + t_j*dl_j ..].
 * Movement ops only, so a consumer fuses it; this is tinygrad's _pool. */
static frit_tensor *windows(frit_ctx *ctx, frit_tensor *x, int nk, const int64_t *k, const int64_t *st,
                            const int64_t *dl) {
  if (!x) return NULL;
  const frit_shape *s = ti_shape(ctx, x);
  int lead = s->ndim - nk;
  int64_t i[2], o[2], t[6];
  bool general = false;
  for (int j = 0; j < nk; j++) {
    i[j] = frit_dim_value(s->dims[lead + j]);
    o[j] = win_out(i[j], k[j], st[j], dl[j]);
    general |= k[j] > st[j] || dl[j] != 1;
  }
  int perm[FRIT_MAX_DIMS];
  for (int j = 0; j < lead; j++) perm[j] = j;
  if (general) {
    /* repeat each axis enough times that a row of length i*f+d walks the taps: element
     * (t, q) of the (k, i*f+d) view is x[(t*(i*f+d) + q) mod i] = x[t*d + q] (q < i) */
    int64_t f[2], rep[2], row[2];
    for (int j = 0; j < nk; j++) {
      f[j] = 1 + (o[j] * st[j] > i[j] - dl[j] * (k[j] - 1));
      row[j] = i[j] * f[j] + dl[j];
      rep[j] = cdiv64(k[j] * row[j], i[j]);
    }
    for (int j = 0; j < nk; j++) t[2 * j] = 1, t[2 * j + 1] = i[j];
    x = reshape_i(ctx, x, lead, 2 * nk, t);
    for (int j = 0; j < nk; j++) t[2 * j] = rep[j];
    x = expand_i(ctx, x, lead, 2 * nk, t);
    for (int j = 0; j < nk; j++) t[j] = rep[j] * i[j];
    x = reshape_i(ctx, x, lead, nk, t);
    for (int j = 0; j < nk; j++) t[j] = k[j] * row[j];
    x = shrink_i(ctx, x, lead, nk, t);
    for (int j = 0; j < nk; j++) t[2 * j] = k[j], t[2 * j + 1] = row[j];
    x = reshape_i(ctx, x, lead, 2 * nk, t);
    for (int j = 0; j < nk; j++) t[2 * j] = k[j], t[2 * j + 1] = o[j] * st[j]; /* stride */
    x = shrink_i(ctx, x, lead, 2 * nk, t);
    for (int j = 0; j < nk; j++) t[3 * j] = k[j], t[3 * j + 1] = o[j], t[3 * j + 2] = st[j];
    x = reshape_i(ctx, x, lead, 3 * nk, t);
    for (int j = 0; j < nk; j++) t[3 * j] = k[j], t[3 * j + 1] = o[j], t[3 * j + 2] = 1;
    x = shrink_i(ctx, x, lead, 3 * nk, t);
    for (int j = 0; j < nk; j++) t[2 * j] = k[j], t[2 * j + 1] = o[j];
    x = reshape_i(ctx, x, lead, 2 * nk, t);
    for (int j = 0; j < nk; j++) perm[lead + j] = lead + 2 * j + 1, perm[lead + nk + j] = lead + 2 * j;
  } else {
    /* taps within one stride: cut each axis into (o, st) rows and keep the first k of a row */
    int64_t before[2] = {0, 0}, after[2];
    for (int j = 0; j < nk; j++) after[j] = o[j] * st[j] > i[j] ? o[j] * st[j] - i[j] : 0;
    x = pad_i(ctx, x, lead, nk, before, after);
    for (int j = 0; j < nk; j++) t[j] = o[j] * st[j];
    x = shrink_i(ctx, x, lead, nk, t);
    for (int j = 0; j < nk; j++) t[2 * j] = o[j], t[2 * j + 1] = st[j];
    x = reshape_i(ctx, x, lead, 2 * nk, t);
    for (int j = 0; j < nk; j++) t[2 * j] = o[j], t[2 * j + 1] = k[j];
    x = shrink_i(ctx, x, lead, 2 * nk, t);
    for (int j = 0; j < nk; j++) perm[lead + j] = lead + 2 * j, perm[lead + nk + j] = lead + 2 * j + 1;
  }
  return x ? ti_permute(ctx, x, perm) : NULL;
}

/* ---------- pooling ---------- */

typedef struct pool_geom {
  int64_t k[2], st[2], pad[2], o[2];
} pool_geom;

/* Checks a 2-D pooling/conv geometry over the last two axes of x (static sizes required). */
static bool pool_check(frit_ctx *ctx, const char *name, frit_tensor *x, const int64_t *kernel,
                       const int64_t *stride, const int64_t *padding, const int64_t *dilation, pool_geom *g) {
  const frit_shape *s = ti_shape(ctx, x);
  if (s->ndim < 2) return TI_FAIL1(ctx, name, x, "needs at least 2 dims"), false;
  if (s->ndim + 4 > FRIT_MAX_DIMS) return TI_FAIL1(ctx, name, x, "too many dims for the window view"), false;
  for (int j = 0; j < 2; j++) {
    int64_t i = frit_dim_value(s->dims[s->ndim - 2 + j]);
    if (i < 0) return TI_FAIL1(ctx, name, x, "spatial dims must be static"), false;
    g->k[j] = kernel[j];
    g->st[j] = stride ? stride[j] : kernel[j];
    g->pad[j] = padding ? padding[j] : 0;
    int64_t dl = dilation ? dilation[j] : 1;
    if (g->k[j] < 1 || g->st[j] < 1 || g->pad[j] < 0 || dl < 1)
      return TI_FAIL1(ctx, name, x,
                      "bad geometry on spatial axis %d: kernel %lld, stride %lld, padding %lld, dilation %lld "
                      "(need kernel, stride, dilation >= 1, padding >= 0)",
                      j, (long long)g->k[j], (long long)g->st[j], (long long)g->pad[j], (long long)dl),
             false;
    g->o[j] = win_out(i + 2 * g->pad[j], g->k[j], g->st[j], dl);
    if (g->o[j] < 1)
      return TI_FAIL1(ctx, name, x, "kernel %lld (dilation %lld) is larger than the padded input %lld on spatial axis %d",
                      (long long)g->k[j], (long long)dl, (long long)(i + 2 * g->pad[j]), j),
             false;
  }
  return true;
}

static const int64_t unit2[2] = {1, 1};

/* Windows of the padded last two axes reduced with `op` (keepdims dropped): (..., OH, OW). */
static frit_tensor *pool_reduce(frit_ctx *ctx, frit_tensor *xp, const pool_geom *g, frit_op op) {
  frit_tensor *w = windows(ctx, xp, 2, g->k, g->st, unit2);
  if (!w) return NULL;
  int nd = ti_shape(ctx, w)->ndim;
  bool mask[FRIT_MAX_DIMS] = {false};
  mask[nd - 1] = mask[nd - 2] = true;
  frit_tensor *r = op == FRIT_OP_ADD ? tc_sum_keep(ctx, w, mask) : tc_reduce_keep(ctx, w, op, mask);
  return tc_drop(ctx, r, mask);
}

frit_tensor *frit_max_pool2d(frit_ctx *ctx, frit_tensor *x, const int64_t kernel[2], const int64_t stride[2],
                             const int64_t padding[2]) {
  if (!ti_ok(ctx, "max_pool2d", &x, 1)) return NULL;
  if (!kernel) return TI_FAIL1(ctx, "max_pool2d", x, "needs a kernel size");
  pool_geom g;
  if (!pool_check(ctx, "max_pool2d", x, kernel, stride, padding, NULL, &g)) return NULL;
  frit_dtype dt = frit_tensor_dtype(x);
  int nd = ti_shape(ctx, x)->ndim;
  /* padding never wins: -inf for floats, the dtype's minimum for integers, false for bool */
  double lowest = -INFINITY;
  if (!frit_dtype_is_float(dt)) {
    int64_t lo, hi;
    frit_dtype_limits(dt, &lo, &hi);
    lowest = (double)lo;
  }
  int64_t before[FRIT_MAX_DIMS] = {0}, after[FRIT_MAX_DIMS] = {0};
  before[nd - 2] = after[nd - 2] = g.pad[0];
  before[nd - 1] = after[nd - 1] = g.pad[1];
  frit_tensor *xp = g.pad[0] || g.pad[1] ? frit_pad(ctx, x, before, after, FRIT_PAD_CONSTANT, lowest) : x;
  frit_tensor *r = pool_reduce(ctx, xp, &g, frit_dtype_is_bool(dt) ? FRIT_OP_OR : FRIT_OP_MAX);
  if (!r || !frit_dtype_is_float(dt) || g.k[0] != g.st[0] || g.k[1] != g.st[1]) return r;
  /* the windows as the reduction reads them (the node the gradient walk meets) */
  frit_tensor *red = TI_T(TI_U(r)->op == FRIT_OP_RESHAPE ? TI_U(r)->src[0] : TI_U(r));
  if (TI_U(red)->op != FRIT_OP_REDUCE_AXIS) return r;
  return tg_max_pool(ctx, r, TI_T(TI_U(red)->src[0]));
}

frit_tensor *frit_avg_pool2d(frit_ctx *ctx, frit_tensor *x, const int64_t kernel[2], const int64_t stride[2],
                             const int64_t padding[2]) {
  if (!ti_ok(ctx, "avg_pool2d", &x, 1)) return NULL;
  if (!kernel) return TI_FAIL1(ctx, "avg_pool2d", x, "needs a kernel size");
  pool_geom g;
  if (!pool_check(ctx, "avg_pool2d", x, kernel, stride, padding, NULL, &g)) return NULL;
  frit_dtype dt = frit_tensor_dtype(x), cdt = tc_float_compute_dtype(dt);
  const frit_shape *s = ti_shape(ctx, x);
  int nd = s->ndim;
  int64_t before[2] = {g.pad[0], g.pad[1]};
  frit_tensor *sum = pool_reduce(ctx, pad_i(ctx, ti_cast(ctx, x, cdt), nd - 2, 2, before, before), &g, FRIT_OP_ADD);
  frit_tensor *count;
  if (!g.pad[0] && !g.pad[1]) {
    count = tc_scalar(ctx, cdt, (double)(g.k[0] * g.k[1]));
  } else {
    /* padding is not counted: the count of each window is the window sum of padded ones */
    frit_scalar one = {.f = 1.0};
    frit_tensor *ones = ti_full(ctx, cdt, frit_scalar_normalize(one, cdt), 2, s->dims + nd - 2);
    count = pool_reduce(ctx, pad_i(ctx, ones, 0, 2, before, before), &g, FRIT_OP_ADD);
  }
  return ti_cast(ctx, tc_bin(ctx, "avg_pool2d", FRIT_OP_FDIV, sum, count), tc_float_result_dtype(dt));
}

/* ---------- convolution ---------- */

static frit_tensor *conv_direct(frit_ctx *ctx, frit_tensor *x, frit_tensor *w, const pool_geom *gp, const int64_t *dl,
                                int64_t groups, frit_dtype cdt, frit_dtype dt);

/* conv2d (groups 1) as a product the register-tiled matmul codegen handles: out[n, oh, ow, o] =
 * sum over (c, kh, kw) of the window of the padded input (materialised once, so its loads are not
 * gated) times w laid out as (C, KH, KW, O) (a small copy), with o the contiguous axis and n
 * the tiled rows; the (N, OH, OW, O) result is then permuted to NCHW. Large static shapes only:
 * a small conv is cheaper in one direct kernel. 1.8x the direct form on the bench shape, still
 * far from BLAS: gcc does not vectorise the columns around the three nested reduction loops, and
 * one flat C*KH*KW loop indexes the window by div/mod, which its data-ref analysis rejects. */
static frit_tensor *conv_as_gemm(frit_ctx *ctx, frit_tensor *x, frit_tensor *w, const pool_geom *g, const int64_t *dl,
                                 frit_dtype cdt, frit_dtype dt) {
  const frit_shape *sx = ti_shape(ctx, x), *sw = ti_shape(ctx, w);
  int64_t n = frit_dim_value(sx->dims[0]), c = frit_dim_value(sw->dims[1]), o = frit_dim_value(sw->dims[0]);
  int64_t kh = frit_dim_value(sw->dims[2]), kw = frit_dim_value(sw->dims[3]);
  if (n < 8 || n % 4 || o % 16 || o < 16 || c * kh * kw < 16 || n * o * c * kh * kw * g->o[0] * g->o[1] < ((int64_t)1 << 24))
    return NULL;
  frit_tensor *xp = pad_i(ctx, ti_cast(ctx, x, cdt), 2, 2, g->pad, g->pad);
  if (xp != x) xp = frit_contiguous(ctx, xp);
  frit_tensor *xw = windows(ctx, xp, 2, g->k, g->st, dl); /* (N, C, OH, OW, KH, KW) */
  int px[6] = {0, 2, 3, 1, 4, 5}, pw[4] = {1, 2, 3, 0}, pout[4] = {0, 3, 1, 2};
  int64_t t7[7] = {g->o[0], g->o[1], c, kh, kw, 1};
  frit_tensor *a = reshape_i(ctx, frit_permute(ctx, xw, px), 1, 6, t7); /* (N, OH, OW, C, KH, KW, 1) */
  int64_t w7[7] = {1, 1, 1, c, kh, kw, o};
  frit_tensor *wt = reshape_i(ctx, frit_contiguous(ctx, frit_permute(ctx, ti_cast(ctx, w, cdt), pw)), 0, 7, w7);
  frit_tensor *p = tc_bin(ctx, "conv2d", FRIT_OP_MUL, a, wt);
  bool mask[FRIT_MAX_DIMS] = {false};
  mask[3] = mask[4] = mask[5] = true;
  int64_t t4[4] = {n, g->o[0], g->o[1], o};
  /* realized as NCHW, the permute's kernel loops in the product's order (schedule/rangeify.c) */
  frit_tensor *r = reshape_i(ctx, ti_cast(ctx, tc_sum_keep(ctx, p, mask), dt), 0, 4, t4);
  return frit_permute(ctx, r, pout);
}

/* conv2d (groups 1) as im2col: the windows materialised as an (N, OH, OW, C*KH*KW) patch array,
 * then one product with w as (C*KH*KW, O) over that single reduction axis, which the
 * register-tiling codegen (opt_tile.c) turns into
 * vector FMAs held in registers over the whole reduction. The tiler wants O divisible by 16, so a
 * smaller O is padded with zero columns that are cut off again (their sums are separate: the kept
 * columns are exact). For the small-channel convs of a CNN (5x5 kernels over 1-16 channels, and
 * their gradients, whose "kernel" is a whole feature map) the direct loop nests run at 1-5 GFLOP/s;
 * this runs at tens. The patches cost memory: only when they stay small (below). */
/* x in the compute dtype, zero-padded; materialised when padded and `copy` (the conv's loads of
 * a materialised copy need no bounds gates, which keeps its inner loops vectorisable) */
static frit_tensor *padded_input(frit_ctx *ctx, frit_tensor *x, frit_dtype cdt, const pool_geom *g, bool copy) {
  frit_tensor *xp = pad_i(ctx, ti_cast(ctx, x, cdt), 2, 2, g->pad, g->pad);
  return xp && copy && (g->pad[0] || g->pad[1]) ? frit_contiguous(ctx, xp) : xp;
}

frit_tensor *tn_conv_padded(frit_ctx *ctx, frit_tensor *x, frit_dtype cdt, const int64_t pad[2]) {
  pool_geom g = {.pad = {pad[0], pad[1]}};
  return padded_input(ctx, x, cdt, &g, true);
}

/* conv_im2col's size conditions (m = N*OH*OW patch rows, k = C*KH*KW terms, o channels out):
 * the tiler's row blocks need m divisible by 4, except for a long reduction (a weight gradient,
 * chunked: its direct loop nest reduces rows of a feature map without vectors); small problems,
 * and a short reduction (conv1 of a CNN: one channel, 25 taps, where the patches cost more than
 * the product), are cheaper in one direct kernel; patches over 64 MiB (the bench's 32x64x56^2
 * 3x3 conv) stream more than conv_as_gemm; O is padded by at most 2x + 8 */
static bool im2col_fits(int64_t n, int64_t m, int64_t k, int64_t o) {
  int64_t op = (o + 15) / 16 * 16;
  return n >= 1 && (m % 4 == 0 || k >= 8192) && k >= 32 && m * k <= ((int64_t)1 << 24) && m * k * o >= ((int64_t)1 << 20) &&
         op <= 2 * o + 8;
}

/* x's windows as (N, OH, OW, C*KH*KW, 1), materialised as (N, OH, OW, C, KH, KW) (copied in loops
 * without division; the product reads it with one reduction axis, whose index the simplifier
 * recombines) from the padded input, itself materialised so the copy's loads are not gated. */
static frit_tensor *im2col_patches(frit_ctx *ctx, frit_tensor *x, const pool_geom *g, const int64_t *dl, frit_dtype cdt,
                                   int64_t k) {
  frit_tensor *xw = windows(ctx, padded_input(ctx, x, cdt, g, true), 2, g->k, g->st, dl); /* (N, C, OH, OW, KH, KW) */
  int px[6] = {0, 2, 3, 1, 4, 5};
  int64_t t4[4] = {g->o[0], g->o[1], k, 1};
  return xw ? reshape_i(ctx, frit_contiguous(ctx, frit_permute(ctx, xw, px)), 1, 4, t4) : NULL;
}

/* A long reduction's chunk: channels of x (the batch, in a weight gradient) whose windows make
 * about 2048 terms. */
static int64_t chunk_channels(int64_t c, int64_t taps) {
  int64_t kb = c;
  while (kb % 2 == 0 && kb * taps > 2048) kb /= 2;
  return kb;
}

/* x's windows as (KC, N*OH*OW, KB*KH*KW): im2col's patches with the reduction (C*KH*KW) cut into
 * KC chunks of KB whole channels, each chunk's rows contiguous, for the chunked products below;
 * materialised (copied in loops without division, as im2col_patches). */
static frit_tensor *im2col_chunks(frit_ctx *ctx, frit_tensor *x, const pool_geom *g, const int64_t *dl, frit_dtype cdt,
                                  int64_t kc) {
  frit_tensor *xw = windows(ctx, padded_input(ctx, x, cdt, g, true), 2, g->k, g->st, dl); /* (N, C, OH, OW, KH, KW) */
  if (!xw) return NULL;
  const frit_shape *s = ti_shape(ctx, xw);
  int64_t d[6];
  for (int i = 0; i < 6; i++) d[i] = frit_dim_value(s->dims[i]);
  int64_t t7[7] = {d[0], kc, d[1] / kc, d[2], d[3], d[4], d[5]}, t3[3] = {kc, d[0] * d[2] * d[3], d[1] / kc * d[4] * d[5]};
  if (kc == 1) /* one chunk: the unchunked patches themselves (the same node as theirs) */
    return reshape_i(ctx, im2col_patches(ctx, x, g, dl, cdt, t3[2]), 0, 3, t3);
  int pc[7] = {1, 0, 3, 4, 2, 5, 6}; /* (KC, N, OH, OW, KB, KH, KW) */
  return reshape_i(ctx, frit_contiguous(ctx, frit_permute(ctx, reshape_i(ctx, xw, 0, 7, t7), pc)), 0, 3, t3);
}

/* conv2d (groups 1, 16 or more output channels) as out (O, pixels) = w (O, C*KH*KW) @ patches
 * (C*KH*KW, pixels), with the pixels of all images as the vector columns. The patches are built
 * as conv2d's weight gradient builds them (grad_rules.c: x swapped to (C, N, H, W), windows of
 * the output's size), so a training step materialises them once for both; w is read as it is
 * (no transposed copy); and the result lies channel by channel, each channel's rows of pixels
 * contiguous, which the pooling after a conv and its backward read along their rows (an
 * (N, OH, OW, O) result was read across the channels: transposes at a third of the bandwidth).
 * The columns are cut into chunks of whole images: the chunks are the threads' work, and each
 * chunk's rows (the O channels) are register tiles (opt_tile.c). */
static frit_tensor *conv_channel_rows(frit_ctx *ctx, frit_tensor *x, frit_tensor *w, const pool_geom *g,
                                      const int64_t *dl, frit_dtype cdt, frit_dtype dt) {
  const frit_shape *sx = ti_shape(ctx, x), *sw = ti_shape(ctx, w);
  int64_t n = frit_dim_value(sx->dims[0]), c = frit_dim_value(sw->dims[1]), o = frit_dim_value(sw->dims[0]);
  int64_t kh = frit_dim_value(sw->dims[2]), kw = frit_dim_value(sw->dims[3]), k = c * kh * kw;
  int64_t p = g->o[0] * g->o[1];
  /* the weight gradient's windows (grad_rules.c) are exactly the taps: else they cover more
   * positions than KH x KW (a stride that does not divide the padded input), cut off after */
  for (int a = 0; a < 2; a++)
    if (win_out(frit_dim_value(sx->dims[2 + a]) + 2 * g->pad[a], g->o[a], dl[a], g->st[a]) != (a ? kw : kh)) return NULL;
  if (o < 16 || (n * p) % 32 || k < 32 || k * n * p > ((int64_t)1 << 24) || n * p * k * o < ((int64_t)1 << 20))
    return NULL;
  /* images a chunk: the weight gradient's chunk of its reduction (the same patches), in whole
   * vector pairs */
  int64_t nb = chunk_channels(n, p), nch = n / nb, cols = nb * p;
  if (cols % 32) return NULL;
  int swap[4] = {1, 0, 2, 3};
  frit_tensor *xt = frit_permute(ctx, padded_input(ctx, x, cdt, g, true), swap); /* (C, N, HP, WP) */
  pool_geom gt = {.k = {g->o[0], g->o[1]}, .st = {dl[0], dl[1]}, .pad = {0, 0}, .o = {kh, kw}};
  frit_tensor *pt = xt ? im2col_chunks(ctx, xt, &gt, g->st, cdt, nch) : NULL; /* (NCH, C*KH*KW, NB*P) */
  int64_t b4[4] = {nch, 1, k, cols}, a4[4] = {1, o, k, 1};
  frit_tensor *b = reshape_i(ctx, pt, 0, 4, b4);
  frit_tensor *a = reshape_i(ctx, ti_cast(ctx, w, cdt), 0, 4, a4);
  bool mask[FRIT_MAX_DIMS] = {false, false, true};
  frit_tensor *r = a && b ? tc_bin(ctx, "conv2d", FRIT_OP_MUL, a, b) : NULL;
  r = r ? frit_contiguous(ctx, ti_cast(ctx, tc_drop(ctx, tc_sum_keep(ctx, r, mask), mask), dt)) : NULL;
  int64_t r5[5] = {nch, o, nb, g->o[0], g->o[1]}, r4[4] = {n, o, g->o[0], g->o[1]};
  r = r ? frit_permute(ctx, reshape_i(ctx, r, 0, 5, r5), (const int[]){0, 2, 1, 3, 4}) : NULL;
  return reshape_i(ctx, r, 0, 4, r4);
}

static frit_tensor *conv_im2col(frit_ctx *ctx, frit_tensor *x, frit_tensor *w, const pool_geom *g, const int64_t *dl,
                                frit_dtype cdt, frit_dtype dt) {
  const frit_shape *sx = ti_shape(ctx, x), *sw = ti_shape(ctx, w);
  int64_t n = frit_dim_value(sx->dims[0]), c = frit_dim_value(sw->dims[1]), o = frit_dim_value(sw->dims[0]);
  int64_t kh = frit_dim_value(sw->dims[2]), kw = frit_dim_value(sw->dims[3]);
  int64_t m = n * g->o[0] * g->o[1], k = c * kh * kw, op = (o + 15) / 16 * 16;
  if (!im2col_fits(n, m, k, o)) return NULL;
  int pw[4] = {1, 2, 3, 0}, pout[4] = {0, 3, 1, 2};
  frit_tensor *wt = frit_permute(ctx, ti_cast(ctx, w, cdt), pw); /* (C, KH, KW, O) */
  int64_t before[1] = {0}, after[1] = {op - o}, w2[2] = {k, op}, w5[5] = {1, 1, 1, k, op};
  wt = pad_i(ctx, wt, 3, 1, before, after);
  wt = wt ? reshape_i(ctx, frit_contiguous(ctx, reshape_i(ctx, wt, 0, 2, w2)), 0, 5, w5) : NULL;
  bool mask[FRIT_MAX_DIMS] = {false};
  frit_tensor *r;
  /* a long reduction (a weight gradient: k is the batch times a feature map) in chunks of whole
   * channels, each chunk's partial product realized, then summed: one pass streamed all of w
   * (k x O, megabytes) again for every tile of rows; a chunk of w stays in cache */
  int64_t kb = chunk_channels(c, kh * kw), kc = c / kb;
  frit_tensor *ach = k >= 8192 && kc >= 2 ? im2col_chunks(ctx, x, g, dl, cdt, kc) : NULL; /* (KC, M, KB*KH*KW) */
  if (ach && op != o) {
    /* too few columns for whole vectors (conv1's 8 channels): each output a dot product of a
     * patch row with a row of w, both read along the reduction as they lie, where the padded
     * (K x OP) copy of w was a transpose at a third of the bandwidth and half its columns zeros */
    int64_t a5[5] = {kc, m, 1, kb, kh * kw}, w5b[5] = {o, kc, 1, kb, kh * kw}, nhwo[4] = {n, g->o[0], g->o[1], o};
    int pb[5] = {1, 2, 0, 3, 4};
    frit_tensor *a3 = reshape_i(ctx, ach, 0, 5, a5);                                            /* (KC, M, 1, KB, HW) */
    frit_tensor *w3 = frit_permute(ctx, reshape_i(ctx, ti_cast(ctx, w, cdt), 0, 5, w5b), pb); /* (KC, 1, O, KB, HW) */
    mask[3] = mask[4] = true;
    frit_tensor *part = frit_contiguous(ctx, tc_sum_keep(ctx, tc_bin(ctx, "conv2d", FRIT_OP_MUL, a3, w3), mask));
    bool first[FRIT_MAX_DIMS] = {true};
    r = frit_contiguous(ctx, reshape_i(ctx, ti_cast(ctx, tc_sum_keep(ctx, part, first), dt), 0, 4, nhwo));
    return r ? frit_permute(ctx, r, pout) : NULL;
  } else if (ach && wt) {
    int64_t a6[6] = {kc, m, 1, 1, kb * kh * kw, 1}, w6[6] = {1, 1, 1, kc, kb * kh * kw, op};
    int pa[6] = {3, 0, 1, 2, 4, 5};
    frit_tensor *a3 = reshape_i(ctx, ach, 0, 6, a6);                            /* (KC, M, 1, 1, KB, 1) */
    frit_tensor *w3 = frit_permute(ctx, reshape_i(ctx, wt, 0, 6, w6), pa);      /* (KC, 1, 1, 1, KB, OP) */
    mask[4] = true;
    frit_tensor *part = frit_contiguous(ctx, tc_sum_keep(ctx, tc_bin(ctx, "conv2d", FRIT_OP_MUL, a3, w3), mask));
    bool first[FRIT_MAX_DIMS] = {true};
    int64_t nhwo[4] = {n, g->o[0], g->o[1], op};
    r = frit_contiguous(ctx, reshape_i(ctx, ti_cast(ctx, tc_sum_keep(ctx, part, first), dt), 0, 4, nhwo));
  } else if ((r = conv_channel_rows(ctx, x, w, g, dl, cdt, dt))) {
    return r;
  } else {
    frit_tensor *p = tc_bin(ctx, "conv2d", FRIT_OP_MUL, im2col_patches(ctx, x, g, dl, cdt, k), wt);
    mask[3] = true;
    /* realized with the zero columns: a shrink before that would reach into the product's loop */
    r = frit_contiguous(ctx, ti_cast(ctx, tc_drop(ctx, tc_sum_keep(ctx, p, mask), mask), dt));
  }
  if (r && op != o) r = ti_shrink_axis(ctx, r, 3, ti_dim(ctx, 0), ti_dim(ctx, o)); /* (N, OH, OW, O) */
  return r ? frit_permute(ctx, r, pout) : NULL;
}

/* x (N, C, H, W) zero-padded by (ph, pw) on both sides, with zero rows added below until the
 * flat padded plane holds at least `need` elements, materialised row by row (a copy without
 * division), then read flat: (N, C, L), L >= need. The taps of a conv on the padded grid read
 * it at offsets past the last row. */
static frit_tensor *padded_flat(frit_ctx *ctx, frit_tensor *x, frit_dtype cdt, int64_t ph, int64_t pw, int64_t need) {
  const frit_shape *s = ti_shape(ctx, x);
  int64_t n = frit_dim_value(s->dims[0]), c = frit_dim_value(s->dims[1]);
  int64_t hp = frit_dim_value(s->dims[2]) + 2 * ph, wp = frit_dim_value(s->dims[3]) + 2 * pw;
  int64_t extra = need > hp * wp ? (need - hp * wp + wp - 1) / wp : 0;
  int64_t before[2] = {ph, pw}, after[2] = {ph + extra, pw}, f3[3] = {n, c, (hp + extra) * wp};
  return reshape_i(ctx, frit_contiguous(ctx, pad_i(ctx, ti_cast(ctx, x, cdt), 2, 2, before, after)), 0, 3, f3);
}

/* A conv with a short reduction (C*KH*KW <= 32, stride 1: conv1 of a CNN) as the sum of its taps:
 * each tap is the padded input shifted by (i, j) times the column w[:, c, i, j], all elementwise,
 * so the fused kernel runs the taps unrolled with the output row innermost, where it vectorises
 * (the direct form reduces the taps innermost: 1.6-7 GFLOP/s on conv1 of the Fashion-MNIST CNN).
 * The output is computed on the padded input's grid, OH rows of WP = W + 2*pad columns, one flat
 * axis: a tap is then the flat padded input shifted by i*WP + j, so the kernel's pixel loop is one
 * contiguous run of OH*WP (whole vectors) instead of OH rows of OW (28: a 16-lane vector and a
 * 12-lane remainder), and the WP - OW columns past each row are cut off after. */
static frit_tensor *conv_taps(frit_ctx *ctx, frit_tensor *x, frit_tensor *w, const pool_geom *g, const int64_t *dl,
                              frit_dtype cdt, frit_dtype dt) {
  const frit_shape *sw = ti_shape(ctx, w), *sx = ti_shape(ctx, x);
  int64_t c = frit_dim_value(sw->dims[1]), o = frit_dim_value(sw->dims[0]);
  int64_t kh = frit_dim_value(sw->dims[2]), kw = frit_dim_value(sw->dims[3]);
  int64_t n = frit_dim_value(sx->dims[0]);
  /* small convs stay one direct kernel: the padded copy and the materialised result cost more */
  if (g->st[0] != 1 || g->st[1] != 1 || c * kh * kw > 32 || g->o[0] < 1 || g->o[1] < 1 || n < 1 ||
      n * o * g->o[0] * g->o[1] * c * kh * kw < ((int64_t)1 << 22))
    return NULL;
  int64_t hp = frit_dim_value(sx->dims[2]) + 2 * g->pad[0], wp = frit_dim_value(sx->dims[3]) + 2 * g->pad[1];
  int64_t span = g->o[0] * wp;
  /* the last row's taps reach dl*(KW-1) past the padded input */
  frit_tensor *xp = padded_flat(ctx, x, cdt, g->pad[0], g->pad[1], hp * wp + dl[1] * (kw - 1));
  frit_tensor *wc = ti_cast(ctx, w, cdt), *acc = NULL;
  int64_t col[3] = {1, o, 1};
  for (int64_t ci = 0; ci < c && xp && wc; ci++)
    for (int64_t i = 0; i < kh; i++)
      for (int64_t j = 0; j < kw; j++) {
        int64_t at = i * dl[0] * wp + j * dl[1];
        frit_tensor *t = ti_shrink_axis(ctx, xp, 1, ti_dim(ctx, ci), ti_dim(ctx, ci + 1));
        t = t ? ti_shrink_axis(ctx, t, 2, ti_dim(ctx, at), ti_dim(ctx, at + span)) : NULL;
        frit_tensor *wv = ti_shrink_axis(ctx, wc, 1, ti_dim(ctx, ci), ti_dim(ctx, ci + 1));
        wv = wv ? ti_shrink_axis(ctx, wv, 2, ti_dim(ctx, i), ti_dim(ctx, i + 1)) : NULL;
        wv = wv ? reshape_i(ctx, ti_shrink_axis(ctx, wv, 3, ti_dim(ctx, j), ti_dim(ctx, j + 1)), 0, 3, col) : NULL;
        frit_tensor *term = t && wv ? tc_bin(ctx, "conv2d", FRIT_OP_MUL, t, wv) : NULL;
        if (!term) return NULL;
        acc = acc ? ti_alu2(ctx, FRIT_OP_ADD, acc, term) : term;
      }
  /* materialised: its consumers (pooling windows, the backward) would each recompute the taps */
  int64_t rows[2] = {g->o[0], wp};
  frit_tensor *r = acc ? reshape_i(ctx, frit_contiguous(ctx, ti_cast(ctx, acc, dt)), 2, 2, rows) : NULL;
  return r && wp != g->o[1] ? ti_shrink_axis(ctx, r, 3, ti_dim(ctx, 0), ti_dim(ctx, g->o[1])) : r;
}

/* by size: the taps while the reduction is short, im2col while its patches stay small, the
 * product form above that, else direct */
static frit_tensor *conv_routes(frit_ctx *ctx, frit_tensor *x, frit_tensor *w, const pool_geom *g, const int64_t *dl,
                                int64_t groups, frit_dtype cdt, frit_dtype dt) {
  frit_tensor *r = NULL;
  if (groups == 1 && frit_dtype_is_float(dt)) r = conv_taps(ctx, x, w, g, dl, cdt, dt);
  if (!r && groups == 1 && !frit_dtype_is_bool(dt)) r = conv_im2col(ctx, x, w, g, dl, cdt, dt);
  if (!r && groups == 1 && !frit_dtype_is_bool(dt)) r = conv_as_gemm(ctx, x, w, g, dl, cdt, dt);
  return r ? r : conv_direct(ctx, x, w, g, dl, groups, cdt, dt);
}

/* conv2d's weight gradient (grad_rules.c): the conv of x swapped to (C, N, H, W) with g swapped
 * to (O, N, OH, OW), both float and of static sizes, by the same routes as frit_conv2d but with
 * no rule of its own, so that its x is the forward's own node: the patches it materialises are
 * then the very ones conv_channel_rows built in the forward, one buffer for both. (Its gradient,
 * for a gradient of a gradient, is that of the graph it builds.) */
frit_tensor *tn_conv2d_weight_grad(frit_ctx *ctx, frit_tensor *xt, frit_tensor *gt, const int64_t stride[2],
                                   const int64_t padding[2], const int64_t dilation[2]) {
  if (!ti_ok(ctx, "conv2d", (frit_tensor *[]){xt, gt}, 2)) return NULL;
  const frit_shape *sw = ti_shape(ctx, gt);
  int64_t kernel[2] = {frit_dim_value(sw->dims[2]), frit_dim_value(sw->dims[3])};
  pool_geom g;
  if (!pool_check(ctx, "conv2d", xt, kernel, stride, padding, dilation, &g)) return NULL;
  frit_dtype dt = frit_promote(frit_tensor_dtype(xt), frit_tensor_dtype(gt));
  return conv_routes(ctx, xt, gt, &g, dilation, 1, tc_is_half(dt) ? FRIT_F32 : dt, dt);
}

/* conv2d's input gradient (stride 1, dilation 1) as one register-tiled product, no patches:
 * gx[n, c] = sum over (o, i, j) of w[o, c, KH-1-i, KW-1-j] * g[n, o] padded by K-1-pad and
 * shifted by (i, j). On the padded g's grid, one flat axis of OH' rows of WG columns, a shift is
 * an offset i*WG + j, so each (o, i, j) term reads a contiguous run of the flat g (the WG - W
 * columns past each row are cut after): the tiler holds C rows x 32 pixels in registers over the
 * O*KH*KW terms, with the shifted runs of g in cache. col2im materialised a product of KH*KW*C
 * rows a pixel (46 MB for the CNN's 16-64-256 conv2) and then summed its shifted taps. */
frit_tensor *tn_conv2d_grad_x(frit_ctx *ctx, frit_tensor *g, frit_tensor *w, const int64_t st[2], const int64_t pad[2],
                              const int64_t dl[2], int64_t h, int64_t wd) {
  const frit_shape *sg = ti_shape(ctx, g), *sw = ti_shape(ctx, w);
  int64_t n = frit_dim_value(sg->dims[0]), o = frit_dim_value(sg->dims[1]);
  int64_t oh = frit_dim_value(sg->dims[2]), ow = frit_dim_value(sg->dims[3]);
  int64_t c = frit_dim_value(sw->dims[1]), kh = frit_dim_value(sw->dims[2]), kw = frit_dim_value(sw->dims[3]);
  if (st[0] != 1 || st[1] != 1 || dl[0] != 1 || dl[1] != 1 || pad[0] > kh - 1 || pad[1] > kw - 1 || c < 16 ||
      n < 1 || o < 1 || oh + kh - 1 - 2 * pad[0] != h || ow + kw - 1 - 2 * pad[1] != wd)
    return NULL;
  int64_t ph = kh - 1 - pad[0], pw = kw - 1 - pad[1], wg = ow + 2 * pw;
  int64_t cols = (h * wg + 31) / 32 * 32, taps = (kh - 1) * wg + kw, len = taps + cols - 1;
  if (n * o * kh * kw * cols * c < ((int64_t)1 << 22)) return NULL;
  frit_dtype dt = frit_tensor_dtype(g), cdt = tc_is_half(dt) ? FRIT_F32 : dt;
  frit_tensor *gp = padded_flat(ctx, g, cdt, ph, pw, len); /* the last row's shifts read past it */
  /* (N, O, shift, pixel) = flat g[shift + pixel]; the shifts i*WG + j of the kernel's taps */
  const int64_t k1[1] = {cols}, one[1] = {1};
  frit_tensor *b = windows(ctx, gp, 1, k1, one, one);
  b = b ? ti_shrink_axis(ctx, b, 2, ti_dim(ctx, 0), ti_dim(ctx, taps)) : NULL;
  b = b ? ti_pad_axis(ctx, b, 2, ti_dim(ctx, 0), ti_dim(ctx, kh * wg - taps)) : NULL;
  int64_t b5[5] = {kh, wg, cols}, b6[6] = {n, 1, o, kh, kw, cols};
  b = b ? ti_shrink_axis(ctx, reshape_i(ctx, b, 2, 3, b5), 3, ti_dim(ctx, 0), ti_dim(ctx, kw)) : NULL;
  b = reshape_i(ctx, b, 0, 6, b6); /* (N, 1, O, KH, KW, pixels) */
  /* w flipped, as (1, C, O, KH, KW, 1) */
  int swap[4] = {1, 0, 2, 3};
  int64_t a6[6] = {1, c, o, kh, kw, 1};
  frit_tensor *a = reshape_i(ctx, frit_permute(ctx, frit_flip(ctx, ti_cast(ctx, w, cdt), (const int[]){2, 3}, 2), swap), 0, 6, a6);
  bool mask[FRIT_MAX_DIMS] = {false, false, true, true, true};
  frit_tensor *r = a && b ? tc_bin(ctx, "conv2d", FRIT_OP_MUL, a, b) : NULL;
  r = r ? frit_contiguous(ctx, ti_cast(ctx, tc_drop(ctx, tc_sum_keep(ctx, r, mask), mask), dt)) : NULL; /* (N, C, cols) */
  int64_t r4[4] = {n, c, h, wg};
  r = r ? reshape_i(ctx, ti_shrink_axis(ctx, r, 2, ti_dim(ctx, 0), ti_dim(ctx, h * wg)), 0, 4, r4) : NULL;
  return r && wg != wd ? ti_shrink_axis(ctx, r, 3, ti_dim(ctx, 0), ti_dim(ctx, wd)) : r;
}

frit_tensor *frit_conv2d(frit_ctx *ctx, frit_tensor *x, frit_tensor *w, frit_tensor *bias, const int64_t stride[2],
                         const int64_t padding[2], const int64_t dilation[2], int64_t groups) {
  frit_tensor *ts[3] = {x, w, bias};
  int nt = bias ? 3 : 2;
  if (!ti_ok(ctx, "conv2d", ts, nt)) return NULL;
  const frit_shape *sx = ti_shape(ctx, x), *sw = ti_shape(ctx, w);
  if (sx->ndim != 4 || sw->ndim != 4)
    return ti_fail(ctx, "conv2d", ts, nt, "x must be (N, C, H, W) and w (O, C/groups, KH, KW)");
  int64_t c = frit_dim_value(sx->dims[1]), o = frit_dim_value(sw->dims[0]), cg = frit_dim_value(sw->dims[1]);
  int64_t kh = frit_dim_value(sw->dims[2]), kw = frit_dim_value(sw->dims[3]);
  if (c < 0 || o < 0 || cg < 0 || kh < 0 || kw < 0)
    return ti_fail(ctx, "conv2d", ts, nt, "channel and kernel dims must be static");
  if (groups < 1 || c % groups != 0 || o % groups != 0 || cg != c / groups)
    return ti_fail(ctx, "conv2d", ts, nt,
                   "groups %lld with C = %lld, O = %lld and w's dim 1 = %lld: need C and O divisible by groups "
                   "and w's dim 1 == C / groups",
                   (long long)groups, (long long)c, (long long)o, (long long)cg);
  if (bias && (ti_shape(ctx, bias)->ndim != 1 || !ti_dim_eq(ti_shape(ctx, bias)->dims[0], sw->dims[0])))
    return ti_fail(ctx, "conv2d", ts, nt, "bias must be (O,)");
  if (kh < 1 || kw < 1) return ti_fail(ctx, "conv2d", ts, nt, "empty kernel");
  int64_t kernel[2] = {kh, kw}, dl[2] = {dilation ? dilation[0] : 1, dilation ? dilation[1] : 1};
  pool_geom g;
  if (!pool_check(ctx, "conv2d", x, kernel, stride ? stride : unit2, padding, dl, &g)) return NULL;
  frit_dtype dt = frit_promote(frit_tensor_dtype(x), frit_tensor_dtype(w));
  frit_dtype cdt = tc_is_half(dt) ? FRIT_F32 : dt;
  frit_tensor *r = NULL;
  bool rule = groups == 1 && frit_dtype_is_float(dt);
  if (rule) x = ti_fresh(ctx, x), w = ti_fresh(ctx, w); /* the rule's inputs stay in the graph */
  if (!x || !w) return NULL;
  r = conv_routes(ctx, x, w, &g, dl, groups, cdt, dt);
  if (r && rule) r = tg_conv2d(ctx, r, x, w, g.st, g.pad, dl);
  if (!r || !bias) return r;
  frit_dtype rdt = frit_promote(dt, frit_tensor_dtype(bias));
  int64_t b4[4] = {1, o, 1, 1};
  frit_tensor *br = reshape_i(ctx, ti_cast(ctx, bias, rdt), 0, 4, b4);
  return tc_bin(ctx, "conv2d", frit_dtype_is_bool(rdt) ? FRIT_OP_OR : FRIT_OP_ADD, ti_cast(ctx, r, rdt), br);
}

static frit_tensor *conv_direct(frit_ctx *ctx, frit_tensor *x, frit_tensor *w, const pool_geom *gp, const int64_t *dl,
                                int64_t groups, frit_dtype cdt, frit_dtype dt) {
  pool_geom g = *gp;
  const frit_shape *sw = ti_shape(ctx, w);
  int64_t o = frit_dim_value(sw->dims[0]), cg = frit_dim_value(sw->dims[1]);
  int64_t kh = frit_dim_value(sw->dims[2]), kw = frit_dim_value(sw->dims[3]);
  /* the padded input of a large conv materialised (a copy small next to the conv's work) keeps
   * the window loads of the reduction ungated */
  const frit_shape *sx = ti_shape(ctx, x);
  int64_t n = frit_dim_value(sx->dims[0]), work = n * o * g.o[0] * g.o[1] * cg * kh * kw;
  frit_tensor *xw = windows(ctx, padded_input(ctx, x, cdt, &g, n > 0 && work >= ((int64_t)1 << 22)), 2, g.k, g.st, dl);
  int64_t og = o / groups;
  int64_t t8[8] = {groups, 1, cg, g.o[0], g.o[1], kh, kw};
  xw = reshape_i(ctx, xw, 1, 7, t8);
  int64_t w8[8] = {1, groups, og, cg, 1, 1, kh, kw};
  frit_tensor *wr = reshape_i(ctx, ti_cast(ctx, w, cdt), 0, 8, w8);
  frit_tensor *p = tc_bin(ctx, "conv2d", frit_dtype_is_bool(dt) ? FRIT_OP_AND : FRIT_OP_MUL, xw, wr);
  bool mask[FRIT_MAX_DIMS] = {false};
  mask[3] = mask[6] = mask[7] = true;
  frit_tensor *r = ti_cast(ctx, tc_sum_keep(ctx, p, mask), dt);
  int64_t t4[3] = {o, g.o[0], g.o[1]};
  return reshape_i(ctx, r, 1, 3, t4);
}

/* ---------- softmax ---------- */

static frit_tensor *softmax_impl(frit_ctx *ctx, const char *name, frit_tensor *x, int axis, bool logsm) {
  if (!ti_ok(ctx, name, &x, 1)) return NULL;
  const frit_shape *s = ti_shape(ctx, x);
  bool mask[FRIT_MAX_DIMS] = {false};
  if (axis == FRIT_NO_AXIS) {
    for (int i = 0; i < s->ndim; i++) mask[i] = true;
  } else {
    int a = ti_axis(ctx, name, x, axis, s->ndim);
    if (a < 0) return NULL;
    mask[a] = true;
  }
  for (int i = 0; i < s->ndim; i++)
    if (mask[i] && frit_dim_value(s->dims[i]) == 0)
      return TI_FAIL1(ctx, name, x, "zero-size array to reduction operation maximum which has no identity");
  frit_dtype dt = frit_tensor_dtype(x), cdt = tc_float_compute_dtype(dt);
  frit_tensor *xs = ti_cast(ctx, x, cdt);
  frit_tensor *m = tc_reduce_keep(ctx, xs, FRIT_OP_MAX, mask);
  if (logsm && m) { /* as scipy: a non-finite max shifts by 0 */
    frit_tensor *fin = ti_alu2(ctx, FRIT_OP_CMPLT, ti_alu1(ctx, FRIT_OP_ABS, m), ti_const_f(ctx, cdt, INFINITY, m));
    m = fin ? ti_where(ctx, fin, m, ti_const_f(ctx, cdt, 0.0, m)) : NULL;
  }
  m = ti_stop_gradient(ctx, m); /* the result does not depend on the shift: its gradient is 0 */
  frit_tensor *sh = tc_bin(ctx, name, FRIT_OP_SUB, xs, m);
  frit_tensor *e = ti_alu1(ctx, FRIT_OP_EXP, sh);
  frit_tensor *sum = tc_reduce_keep(ctx, e, FRIT_OP_ADD, mask);
  frit_tensor *r = logsm ? tc_bin(ctx, name, FRIT_OP_SUB, sh, ti_alu1(ctx, FRIT_OP_LOG, sum))
                         : tc_bin(ctx, name, FRIT_OP_FDIV, e, sum);
  return ti_cast(ctx, r, tc_float_result_dtype(dt));
}

frit_tensor *frit_softmax(frit_ctx *ctx, frit_tensor *x, int axis) { return softmax_impl(ctx, "softmax", x, axis, false); }
frit_tensor *frit_log_softmax(frit_ctx *ctx, frit_tensor *x, int axis) {
  return softmax_impl(ctx, "log_softmax", x, axis, true);
}

/* ---------- indexing ---------- */

/* idx (any integer dtype) as i64 with negatives wrapped by n and the result clamped to [0, n). */
static frit_tensor *wrap_clamp(frit_ctx *ctx, const char *name, frit_tensor *idx, frit_uop *n) {
  frit_tensor *i = ti_cast(ctx, idx, FRIT_I64);
  frit_tensor *nt = TI_T(n);
  frit_tensor *neg = tc_bin(ctx, name, FRIT_OP_CMPLT, i, tc_scalar(ctx, FRIT_I64, 0));
  frit_tensor *shifted = tc_bin(ctx, name, FRIT_OP_ADD, i, nt);
  if (!neg || !shifted) return NULL;
  i = ti_where(ctx, neg, shifted, i);
  i = tc_bin(ctx, name, FRIT_OP_MAX, i, tc_scalar(ctx, FRIT_I64, 0));
  return tc_bin(ctx, name, FRIT_OP_MIN, i, TI_T(ti_dim_sub(ctx, n, ti_dim(ctx, 1))));
}

static bool check_index_dtype(frit_ctx *ctx, const char *name, frit_tensor *x, frit_tensor *idx) {
  if (frit_dtype_is_int(frit_tensor_dtype(idx))) return true;
  frit_tensor *ts[2] = {x, idx};
  ti_fail(ctx, name, ts, 2, "indices must be integers");
  return false;
}

frit_tensor *frit_take(frit_ctx *ctx, frit_tensor *x, frit_tensor *idx, int axis) {
  frit_tensor *ts[2] = {x, idx};
  if (!ti_ok(ctx, "take", ts, 2) || !check_index_dtype(ctx, "take", x, idx)) return NULL;
  if (axis == FRIT_NO_AXIS) {
    x = tc_flatten(ctx, x);
    if (!x) return NULL;
    axis = 0;
  } else {
    axis = ti_axis(ctx, "take", x, axis, ti_shape(ctx, x)->ndim);
    if (axis < 0) return NULL;
  }
  const frit_shape *sx = ti_shape(ctx, x), *si = ti_shape(ctx, idx);
  if (sx->ndim - 1 + si->ndim > FRIT_MAX_DIMS) return ti_fail(ctx, "take", ts, 2, "result has too many dims");
  frit_uop *n = sx->dims[axis];
  if (frit_dim_value(n) == 0) {
    frit_uop *ni = frit_shape_numel(ctx, si);
    if (!ni || frit_dim_value(ni) != 0) return ti_fail(ctx, "take", ts, 2, "cannot do a non-empty take from an empty axis");
  }
  return ti_gather(ctx, x, wrap_clamp(ctx, "take", idx, n), axis);
}

frit_tensor *frit_take_along_axis(frit_ctx *ctx, frit_tensor *x, frit_tensor *idx, int axis) {
  const char *name = "take_along_axis";
  frit_tensor *ts[2] = {x, idx};
  if (!ti_ok(ctx, name, ts, 2) || !check_index_dtype(ctx, name, x, idx)) return NULL;
  if (axis == FRIT_NO_AXIS) {
    if (ti_shape(ctx, idx)->ndim != 1) return ti_fail(ctx, name, ts, 2, "with no axis, indices must be 1-D");
    x = tc_flatten(ctx, x);
    if (!x) return NULL;
    axis = 0;
  }
  const frit_shape *sx = ti_shape(ctx, x), *si = ti_shape(ctx, idx);
  int nd = sx->ndim;
  if (si->ndim != nd) return ti_fail(ctx, name, ts, 2, "indices and array must have the same number of dims");
  axis = ti_axis(ctx, name, x, axis, nd);
  if (axis < 0) return NULL;
  /* result dims: indices' dim on the axis, numpy broadcasting elsewhere */
  frit_uop *rd[FRIT_MAX_DIMS];
  for (int d = 0; d < nd; d++) {
    frit_uop *a = sx->dims[d], *b = si->dims[d];
    if (d == axis || ti_dim_eq(a, b) || frit_dim_value(a) == 1) rd[d] = b;
    else if (frit_dim_value(b) == 1) rd[d] = a;
    else return ti_fail(ctx, name, ts, 2, "dim %d does not broadcast", d);
  }
  if (frit_dim_value(sx->dims[axis]) == 0) {
    frit_uop *ni = frit_shape_numel(ctx, si);
    if (!ni || frit_dim_value(ni) != 0) return ti_fail(ctx, name, ts, 2, "cannot take from an empty axis");
  }
  /* one GATHER from the flat array: flat = sum_d coord_d * stride_d, with the indices as the
   * coordinate on the axis and the result position elsewhere (0 where x has size 1) */
  frit_uop *stride = ti_dim(ctx, 1);
  frit_tensor *flat = NULL;
  for (int d = nd - 1; d >= 0 && stride; d--) {
    frit_tensor *coord;
    if (d == axis) {
      coord = wrap_clamp(ctx, name, idx, sx->dims[d]);
    } else if (frit_dim_value(sx->dims[d]) == 1) {
      coord = NULL;
    } else {
      frit_uop *shp[FRIT_MAX_DIMS];
      for (int j = 0; j < nd; j++) shp[j] = j == d ? rd[d] : ti_dim(ctx, 1);
      coord = ti_reshape(ctx, ti_iota(ctx, rd[d]), nd, shp);
      if (!coord) return NULL;
    }
    if (coord) {
      frit_tensor *term = frit_dim_value(stride) == 1 ? coord : tc_bin(ctx, name, FRIT_OP_MUL, coord, TI_T(stride));
      flat = flat ? tc_bin(ctx, name, FRIT_OP_ADD, flat, term) : term;
      if (!flat) return NULL;
    }
    stride = ti_dim_mul(ctx, stride, sx->dims[d]);
  }
  if (!flat) return NULL;
  flat = ti_broadcast(ctx, name, flat, nd, rd);
  return ti_gather(ctx, tc_flatten(ctx, x), flat, 0);
}

frit_tensor *frit_one_hot(frit_ctx *ctx, frit_tensor *idx, int64_t num_classes, frit_dtype dt) {
  if (!ti_ok(ctx, "one_hot", &idx, 1)) return NULL;
  if (!frit_dtype_is_int(frit_tensor_dtype(idx))) return TI_FAIL1(ctx, "one_hot", idx, "indices must be integers");
  if (num_classes < 0) return TI_FAIL1(ctx, "one_hot", idx, "num_classes %lld < 0", (long long)num_classes);
  if (frit_dtype_lanes(dt) != 1 || frit_dtype_is_ptr(dt) || frit_dtype_kind(dt) == FRIT_VOID ||
      frit_dtype_kind(dt) >= FRIT_SCALAR_KIND_COUNT_)
    return TI_FAIL1(ctx, "one_hot", idx, "bad result dtype");
  const frit_shape *s = ti_shape(ctx, idx);
  if (s->ndim + 1 > FRIT_MAX_DIMS) return TI_FAIL1(ctx, "one_hot", idx, "result has too many dims");
  frit_uop *d[FRIT_MAX_DIMS];
  for (int i = 0; i < s->ndim; i++) d[i] = s->dims[i];
  d[s->ndim] = ti_dim(ctx, 1);
  frit_tensor *col = ti_reshape(ctx, ti_cast(ctx, idx, FRIT_I64), s->ndim + 1, d);
  frit_tensor *hit = tc_bin(ctx, "one_hot", FRIT_OP_CMPEQ, col, ti_iota(ctx, ti_dim(ctx, num_classes)));
  return ti_cast(ctx, hit, dt);
}
