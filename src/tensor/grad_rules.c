/* Gradient rules (frit_set_vjp) of the ops built from explicit kernels, which have no graph for
 * frit_vjp to differentiate: sort, conv2d and the LU/Cholesky/Jacobi part of frit.linalg. Each rule is written
 * with tensor ops, several of them (solve, inv) with rules of their own, so gradients of
 * gradients work. Formulas: docs/autodiff.md. */
#include "tensor/grad_rules.h"

static frit_tensor *mT(frit_ctx *ctx, frit_tensor *x) {
  int nd = ti_shape(ctx, x)->ndim, perm[FRIT_MAX_DIMS];
  for (int i = 0; i < nd; i++) perm[i] = i;
  perm[nd - 1] = nd - 2, perm[nd - 2] = nd - 1;
  return ti_permute(ctx, x, perm);
}
static frit_tensor *mm(frit_ctx *ctx, frit_tensor *a, frit_tensor *b) { return frit_matmul(ctx, a, b); }
/* g of shape (...) as (..., 1, 1), so that it scales matrices. */
static frit_tensor *as_scale(frit_ctx *ctx, frit_tensor *g) {
  const frit_shape *s = ti_shape(ctx, g);
  frit_uop *d[FRIT_MAX_DIMS];
  for (int i = 0; i < s->ndim; i++) d[i] = s->dims[i];
  d[s->ndim] = d[s->ndim + 1] = ti_dim(ctx, 1);
  return ti_reshape(ctx, g, s->ndim + 2, d);
}
static frit_status done(frit_ctx *ctx, frit_tensor *const *grads, int n) {
  for (int i = 0; i < n; i++)
    if (!grads[i]) return ctx->status != FRIT_OK ? ctx->status : FRIT_ERR_INVALID;
  return FRIT_OK;
}

/* X = A^-1 B: gB = A^-T G, gA = -gB X^T. */
static frit_status solve_rule(frit_ctx *ctx, const int64_t *params, frit_tensor *out, frit_tensor *g, int nin,
                              frit_tensor *const *ins, frit_tensor **grads) {
  (void)params, (void)nin;
  frit_dtype dt = frit_tensor_dtype(out);
  frit_tensor *a = ti_cast(ctx, ins[0], dt);
  frit_tensor *gb = frit_linalg_solve(ctx, mT(ctx, a), g);
  grads[1] = ti_cast(ctx, gb, frit_tensor_dtype(ins[1]));
  grads[0] = ti_cast(ctx, frit_unary_t(ctx, FRIT_UF_NEG, mm(ctx, gb, mT(ctx, out))), frit_tensor_dtype(ins[0]));
  return done(ctx, grads, 2);
}

/* d det(A) = det(A) A^-T; d log|det(A)| = A^-T; the sign has no gradient. */
static frit_status det_rule(frit_ctx *ctx, const int64_t *params, frit_tensor *out, frit_tensor *g, int nin,
                            frit_tensor *const *ins, frit_tensor **grads) {
  (void)nin;
  frit_dtype dt = frit_tensor_dtype(out);
  frit_tensor *a = ti_cast(ctx, ins[0], dt);
  frit_tensor *scale = params[0] ? g : frit_binary_t(ctx, FRIT_BF_MUL, g, out);
  frit_tensor *ga = frit_binary_t(ctx, FRIT_BF_MUL, as_scale(ctx, scale), mT(ctx, frit_linalg_inv(ctx, a)));
  grads[0] = ti_cast(ctx, ga, frit_tensor_dtype(ins[0]));
  return done(ctx, grads, 1);
}

/* L = cholesky(A), reading A's lower triangle: with S = L^-T Phi(L^T G) L^-1 (Phi: the lower
 * triangle, diagonal halved) and its symmetric part P = (S + S^T)/2, the lower triangle of A gets
 * 2P below the diagonal and P on it (each entry there stands for itself and its mirror). */
static frit_status cholesky_rule(frit_ctx *ctx, const int64_t *params, frit_tensor *out, frit_tensor *g, int nin,
                                 frit_tensor *const *ins, frit_tensor **grads) {
  (void)params, (void)nin;
  frit_dtype dt = frit_tensor_dtype(out);
  frit_tensor *ltg = mm(ctx, mT(ctx, out), g);
  frit_tensor *half = ti_const_f(ctx, dt, 0.5, ltg);
  frit_tensor *phi = frit_binary_t(ctx, FRIT_BF_SUB, frit_tril(ctx, ltg, 0),
                                   frit_binary_t(ctx, FRIT_BF_MUL, half, frit_binary_t(ctx, FRIT_BF_SUB, frit_tril(ctx, ltg, 0), frit_tril(ctx, ltg, -1))));
  frit_tensor *linv = frit_linalg_inv(ctx, out);
  frit_tensor *s = mm(ctx, mT(ctx, linv), mm(ctx, phi, linv));
  frit_tensor *p = frit_binary_t(ctx, FRIT_BF_MUL, half, frit_binary_t(ctx, FRIT_BF_ADD, s, mT(ctx, s)));
  /* 2 tril(P, -1) + diag(P) = tril(P, 0) + tril(P, -1) */
  frit_tensor *ga = frit_binary_t(ctx, FRIT_BF_ADD, frit_tril(ctx, p, 0), frit_tril(ctx, p, -1));
  grads[0] = ti_cast(ctx, ga, frit_tensor_dtype(ins[0]));
  return done(ctx, grads, 1);
}

/* Sorted values move each element to its rank: the cotangent moves back, read through the
 * inverse permutation (the argsort of the argsort, both stable as the sort is). */
static frit_status sort_rule(frit_ctx *ctx, const int64_t *params, frit_tensor *out, frit_tensor *g, int nin,
                             frit_tensor *const *ins, frit_tensor **grads) {
  (void)out, (void)nin;
  int axis = (int)params[0];
  frit_tensor *rank = frit_argsort(ctx, frit_argsort(ctx, ins[0], axis, (int)params[1]), axis, 0);
  grads[0] = frit_take_along_axis(ctx, g, rank, axis);
  return done(ctx, grads, 1);
}

/* A symmetric cotangent P of a function that reads only A's lower triangle (numpy's UPLO='L'):
 * an entry below the diagonal stands for itself and its mirror. */
static frit_tensor *lower_of_symmetric(frit_ctx *ctx, frit_tensor *s) {
  frit_tensor *p = frit_binary_t(ctx, FRIT_BF_MUL, ti_const_f(ctx, frit_tensor_dtype(s), 0.5, s),
                                 frit_binary_t(ctx, FRIT_BF_ADD, s, mT(ctx, s)));
  return frit_binary_t(ctx, FRIT_BF_ADD, frit_tril(ctx, p, 0), frit_tril(ctx, p, -1));
}

/* F_ij = 1/(w_j - w_i) off the diagonal and 0 on it, for w of shape (..., n): (..., n, n) */
static frit_tensor *inv_gaps(frit_ctx *ctx, frit_tensor *w, frit_dtype dt) {
  const frit_shape *sw = ti_shape(ctx, w);
  int nb = sw->ndim - 1;
  frit_uop *d[FRIT_MAX_DIMS];
  for (int i = 0; i < nb; i++) d[i] = sw->dims[i];
  frit_uop *n = sw->dims[nb], *one = ti_dim(ctx, 1);
  d[nb] = n, d[nb + 1] = one;
  frit_tensor *wi = ti_reshape(ctx, w, nb + 2, d);
  d[nb] = one, d[nb + 1] = n;
  frit_tensor *wj = ti_reshape(ctx, w, nb + 2, d);
  frit_tensor *diff = frit_binary_t(ctx, FRIT_BF_SUB, wj, wi);
  frit_tensor *i0 = ti_reshape(ctx, ti_iota(ctx, n), 2, (frit_uop *[]){n, one});
  frit_tensor *i1 = ti_reshape(ctx, ti_iota(ctx, n), 2, (frit_uop *[]){one, n});
  frit_tensor *diag = frit_binary_t(ctx, FRIT_BF_EQ, i0, i1);
  frit_tensor *safe = frit_where(ctx, diag, ti_const_f(ctx, dt, 1, diff), diff);
  return frit_where(ctx, diag, ti_const_f(ctx, dt, 0, safe),
                    frit_binary_t(ctx, FRIT_BF_TRUEDIV, ti_const_f(ctx, dt, 1, safe), safe));
}

/* (w, V) = eigh(A): params[0] 0 for w, 1 for V. gA = V (diag(gw) + F o (V^T gV)) V^T with
 * F_ij = 1/(w_j - w_i) off the diagonal, symmetrised and folded onto the lower triangle. The
 * eigenvectors come from eigh again (hash-consed with the forward's when it asked for them). */
static frit_status eigh_rule(frit_ctx *ctx, const int64_t *params, frit_tensor *out, frit_tensor *g, int nin,
                             frit_tensor *const *ins, frit_tensor **grads) {
  (void)nin;
  frit_dtype dt = frit_tensor_dtype(out);
  frit_tensor *a = ti_cast(ctx, ins[0], dt), *w = NULL, *v = NULL;
  if (frit_linalg_eigh(ctx, a, &w, &v) != FRIT_OK) return ctx->status;
  const frit_shape *sw = ti_shape(ctx, w);
  int nb = sw->ndim - 1;
  frit_uop *d[FRIT_MAX_DIMS];
  for (int i = 0; i < nb; i++) d[i] = sw->dims[i];
  frit_uop *n = sw->dims[nb], *one = ti_dim(ctx, 1);
  frit_tensor *inner;
  if (params[0] == 0) { /* diag(gw) as V scaled by columns */
    d[nb] = one, d[nb + 1] = n;
    return (grads[0] = ti_cast(ctx, lower_of_symmetric(ctx, mm(ctx, frit_binary_t(ctx, FRIT_BF_MUL, v,
                                                                                  ti_reshape(ctx, g, nb + 2, d)),
                                                               mT(ctx, v))),
                               frit_tensor_dtype(ins[0]))) ? FRIT_OK : ctx->status;
  }
  frit_tensor *f = inv_gaps(ctx, w, dt);
  inner = frit_binary_t(ctx, FRIT_BF_MUL, f, mm(ctx, mT(ctx, v), g));
  grads[0] = ti_cast(ctx, lower_of_symmetric(ctx, mm(ctx, v, mm(ctx, inner, mT(ctx, v)))), frit_tensor_dtype(ins[0]));
  return done(ctx, grads, 1);
}

/* The singular values s of A = U diag(s) Vh (thin): gA = U diag(gs) Vh (distinct, nonzero s). */
static frit_status svdvals_rule(frit_ctx *ctx, const int64_t *params, frit_tensor *out, frit_tensor *g, int nin,
                                frit_tensor *const *ins, frit_tensor **grads) {
  (void)params, (void)nin;
  frit_dtype dt = frit_tensor_dtype(out);
  frit_tensor *u = NULL, *sv = NULL, *vh = NULL;
  if (frit_linalg_svd(ctx, ti_cast(ctx, ins[0], dt), 0, &u, &sv, &vh) != FRIT_OK) return ctx->status;
  const frit_shape *sg = ti_shape(ctx, g);
  frit_uop *d[FRIT_MAX_DIMS];
  for (int i = 0; i < sg->ndim; i++) d[i] = sg->dims[i];
  d[sg->ndim] = sg->dims[sg->ndim - 1], d[sg->ndim - 1] = ti_dim(ctx, 1);
  frit_tensor *scaled = frit_binary_t(ctx, FRIT_BF_MUL, u, ti_reshape(ctx, g, sg->ndim + 1, d));
  grads[0] = ti_cast(ctx, mm(ctx, scaled, vh), frit_tensor_dtype(ins[0]));
  return done(ctx, grads, 1);
}

/* s of shape (..., k) as (..., 1, k) (scales columns) or (..., k, 1) (scales rows) */
static frit_tensor *vec_as(frit_ctx *ctx, frit_tensor *s, bool row) {
  const frit_shape *sh = ti_shape(ctx, s);
  frit_uop *d[FRIT_MAX_DIMS];
  for (int i = 0; i < sh->ndim - 1; i++) d[i] = sh->dims[i];
  d[sh->ndim - 1] = row ? ti_dim(ctx, 1) : sh->dims[sh->ndim - 1];
  d[sh->ndim] = row ? sh->dims[sh->ndim - 1] : ti_dim(ctx, 1);
  return ti_reshape(ctx, s, sh->ndim + 1, d);
}

/* The singular vectors of the thin A = U S V^T (k = min(M, N); params[0] 1 for U, 2 for Vh;
 * params[1] full_matrices). With F_ij = 1/(s_j^2 - s_i^2):
 *   from gU:  U (F o (U^T gU - gU^T U)) S V^T + (I - U U^T) gU S^-1 V^T
 *   from gV:  U S (F o (V^T gV - gV^T V)) V^T + U S^-1 ((I - V V^T) gV)^T,  gV = gVh^T
 * (distinct, nonzero s). The extra columns of a full U or V of a non-square A are any basis of
 * a complement, so they have no gradient: refused (the other factor of a full svd is the thin one). */
static frit_status svd_vectors_rule(frit_ctx *ctx, const int64_t *params, frit_tensor *out, frit_tensor *g, int nin,
                                    frit_tensor *const *ins, frit_tensor **grads) {
  (void)nin;
  frit_dtype dt = frit_tensor_dtype(out);
  frit_tensor *a = ti_cast(ctx, ins[0], dt);
  const frit_shape *sa = ti_shape(ctx, a);
  bool square = ti_dim_eq(sa->dims[sa->ndim - 2], sa->dims[sa->ndim - 1]);
  /* non-square dims are static (svd requires it) */
  int64_t m = frit_dim_value(sa->dims[sa->ndim - 2]), n = frit_dim_value(sa->dims[sa->ndim - 1]);
  if (params[1] && !square && (params[0] == 1 ? m > n : n > m)) {
    TI_FAIL1(ctx, "svd", ins[0], "the gradient of the singular vectors of full_matrices=True is not defined "
             "for a non-square matrix (the extra columns are any basis); use full_matrices=False");
    return FRIT_ERR_INVALID;
  }
  frit_tensor *u = NULL, *s = NULL, *vh = NULL;
  if (frit_linalg_svd(ctx, a, params[1] && square, &u, &s, &vh) != FRIT_OK) return ctx->status;
  frit_tensor *v = mT(ctx, vh), *srow = vec_as(ctx, s, true);
  frit_tensor *one = ti_const_f(ctx, dt, 1, s);
  frit_tensor *inv_srow = vec_as(ctx, frit_binary_t(ctx, FRIT_BF_TRUEDIV, one, s), true);
  frit_tensor *f = inv_gaps(ctx, frit_binary_t(ctx, FRIT_BF_MUL, s, s), dt);
  bool is_u = params[0] == 1;
  frit_tensor *x = is_u ? u : v, *gx = is_u ? g : mT(ctx, g);
  frit_tensor *xtg = mm(ctx, mT(ctx, x), gx);
  frit_tensor *skew = frit_binary_t(ctx, FRIT_BF_MUL, f, frit_binary_t(ctx, FRIT_BF_SUB, xtg, mT(ctx, xtg)));
  frit_tensor *inner = frit_binary_t(ctx, FRIT_BF_MUL, skew, is_u ? srow : vec_as(ctx, s, false));
  frit_tensor *proj = frit_binary_t(ctx, FRIT_BF_SUB, gx, mm(ctx, x, xtg)); /* (I - X X^T) gX */
  frit_tensor *rest = is_u ? mm(ctx, frit_binary_t(ctx, FRIT_BF_MUL, proj, inv_srow), vh)
                           : mm(ctx, frit_binary_t(ctx, FRIT_BF_MUL, u, inv_srow), mT(ctx, proj));
  grads[0] = ti_cast(ctx, frit_binary_t(ctx, FRIT_BF_ADD, mm(ctx, u, mm(ctx, inner, vh)), rest),
                     frit_tensor_dtype(ins[0]));
  return done(ctx, grads, 1);
}

/* Reduced QR with M >= N (R square): params[0] 0 for Q, 1 for R. With M = R gR^T - gQ^T Q and
 * copyltu(M) the symmetric matrix of M's lower triangle, gA = (gQ + Q copyltu(M)) R^-T. */
static frit_status qr_rule(frit_ctx *ctx, const int64_t *params, frit_tensor *out, frit_tensor *g, int nin,
                           frit_tensor *const *ins, frit_tensor **grads) {
  (void)nin;
  frit_dtype dt = frit_tensor_dtype(out);
  frit_tensor *q = NULL, *r = NULL;
  if (frit_linalg_qr(ctx, ti_cast(ctx, ins[0], dt), 0, &q, &r) != FRIT_OK) return ctx->status;
  frit_tensor *m = params[0] ? mm(ctx, r, mT(ctx, g)) : frit_unary_t(ctx, FRIT_UF_NEG, mm(ctx, mT(ctx, g), q));
  frit_tensor *sym = frit_binary_t(ctx, FRIT_BF_ADD, frit_tril(ctx, m, 0), mT(ctx, frit_tril(ctx, m, -1)));
  frit_tensor *b = mm(ctx, q, sym);
  if (!params[0]) b = frit_binary_t(ctx, FRIT_BF_ADD, g, b);
  grads[0] = ti_cast(ctx, mT(ctx, frit_linalg_solve(ctx, r, mT(ctx, b))), frit_tensor_dtype(ins[0]));
  return done(ctx, grads, 1);
}

/* copysign(a, b) = +-a: a's cotangent is g, negated where the signs differ; b gets none. */
static frit_status copysign_rule(frit_ctx *ctx, const int64_t *params, frit_tensor *out, frit_tensor *g, int nin,
                                 frit_tensor *const *ins, frit_tensor **grads) {
  (void)params, (void)nin;
  frit_tensor *same = frit_binary_t(ctx, FRIT_BF_EQ, frit_unary_t(ctx, FRIT_UF_SIGNBIT, out),
                                    frit_unary_t(ctx, FRIT_UF_SIGNBIT, ins[0]));
  grads[0] = same ? ti_where(ctx, same, g, ti_alu1(ctx, FRIT_OP_NEG, g)) : NULL;
  return done(ctx, grads, 1);
}

/* An op that moves its first input by a step of no size (nextafter): slope 1 in it, 0 in the rest. */
static frit_status first_rule(frit_ctx *ctx, const int64_t *params, frit_tensor *out, frit_tensor *g, int nin,
                              frit_tensor *const *ins, frit_tensor **grads) {
  (void)params, (void)out, (void)nin, (void)ins;
  grads[0] = g;
  return done(ctx, grads, 1);
}

/* t with s - 1 zeros between its elements along axis ax (static size n): a stride undone. */
static frit_tensor *dilate_axis(frit_ctx *ctx, frit_tensor *t, int ax, int64_t s) {
  if (s == 1 || !t) return t;
  const frit_shape *sh = ti_shape(ctx, t);
  int nd = sh->ndim;
  int64_t n = frit_dim_value(sh->dims[ax]);
  frit_uop *d[FRIT_MAX_DIMS + 1];
  for (int i = 0, j = 0; i < nd; i++) {
    d[j++] = sh->dims[i];
    if (i == ax) d[j++] = ti_dim(ctx, 1);
  }
  frit_tensor *u = ti_pad_axis(ctx, ti_reshape(ctx, t, nd + 1, d), ax + 1, ti_dim(ctx, 0), ti_dim(ctx, s - 1));
  for (int i = 0; i < nd; i++) d[i] = i == ax ? ti_dim(ctx, n * s) : sh->dims[i];
  return ti_shrink_axis(ctx, ti_reshape(ctx, u, nd, d), ax, ti_dim(ctx, 0), ti_dim(ctx, (n - 1) * s + 1));
}

/* conv2d (groups 1), x (N, C, H, W), w (O, C, KH, KW), g (N, O, OH, OW); params: stride,
 * padding, dilation (h, w each). Both cotangents are convolutions themselves (so they take the
 * fast conv paths): gx is the full correlation of g, dilated by the stride, with w flipped and
 * its channel axes swapped; gw correlates x with g, the batch axis playing the channels. */
static frit_tensor *reshape_to(frit_ctx *ctx, frit_tensor *t, int nd, const int64_t *dims) {
  frit_uop *d[FRIT_MAX_DIMS];
  for (int i = 0; i < nd; i++) d[i] = ti_dim(ctx, dims[i]);
  return t ? ti_reshape(ctx, t, nd, d) : NULL;
}

/* gx in padded coordinates by col2im: cols = w as (C*KH*KW, O) times g as (O, OH*OW) for each
 * image (one batched product the register tiler handles: rows the C*KH*KW taps, columns the
 * pixels, padded with zeros to a multiple of 16), then each tap's (N, C, OH, OW) slice of cols
 * dilated by the stride and shifted to its place, the KH*KW slices summed in one fused kernel
 * whose innermost loop reads each slice's rows consecutively. (With the pixels as the product's
 * rows, the tap sum read cols with a stride of C*KH*KW: 3x slower for the CNN's conv2.) Against
 * the conv of the dilated, padded g with the flipped kernel, which reads a (K-1)-padded map
 * through C*KH*KW taps per output (mostly zeros for a small map), this is ~O/C fewer FLOPs and
 * no padded copy. NULL where it does not pay: big kernels (many slices), or cols too large. */
static frit_tensor *conv_grad_x_col2im(frit_ctx *ctx, frit_tensor *g, frit_tensor *w, const int64_t *st,
                                       const int64_t *dl) {
  const frit_shape *sg = ti_shape(ctx, g), *sw = ti_shape(ctx, w);
  int64_t n = frit_dim_value(sg->dims[0]), o = frit_dim_value(sg->dims[1]);
  int64_t oh = frit_dim_value(sg->dims[2]), ow = frit_dim_value(sg->dims[3]);
  int64_t c = frit_dim_value(sw->dims[1]), kh = frit_dim_value(sw->dims[2]), kw = frit_dim_value(sw->dims[3]);
  if (n < 1 || o < 1 || oh < 1 || ow < 1 || c < 1) return NULL;
  /* each pixel row padded to owp columns so that a map's pixels fill whole vectors: the padding
   * is cut from the last axis again, never from a flattened one (a div/mod in every tap's load) */
  int64_t owp = ow, k = c * kh * kw;
  while ((oh * owp) % 16) owp++;
  int64_t pp = oh * owp;
  if (kh * kw > 49 || k < 4 || n * k * pp > ((int64_t)1 << 24) || n * oh * ow * k * o < ((int64_t)1 << 20)) return NULL;
  int64_t a4[4] = {1, k, o, 1}, b4[4] = {n, 1, o, pp}, c6[6] = {n, c, kh, kw, oh, owp};
  /* f16/bf16 accumulate in f32, as frit_conv2d does */
  frit_dtype dt = frit_tensor_dtype(g), cdt = tc_is_half(dt) ? FRIT_F32 : dt;
  frit_tensor *a = frit_permute(ctx, reshape_to(ctx, ti_cast(ctx, w, cdt), 2, (const int64_t[]){o, k}), (const int[]){1, 0});
  a = reshape_to(ctx, frit_contiguous(ctx, a), 4, a4);
  /* g materialised, padded: the product reads it once per tap row */
  frit_tensor *b = ti_cast(ctx, g, cdt);
  /* a g that is a view (max-pool's backward: windows reshaped) is realized before the padding,
   * whose gate the simplifier cannot use to drop the view's div/mod */
  if (b && owp != ow) b = ti_pad_axis(ctx, frit_contiguous(ctx, b), 3, ti_dim(ctx, 0), ti_dim(ctx, owp - ow));
  b = b ? reshape_to(ctx, frit_contiguous(ctx, b), 4, b4) : NULL;
  bool mask[FRIT_MAX_DIMS] = {false, false, true};
  frit_tensor *p = a && b ? tc_bin(ctx, "conv2d", FRIT_OP_MUL, a, b) : NULL;
  /* realized with its zero columns, so the cut does not reach into the product */
  frit_tensor *cols = p ? reshape_to(ctx, frit_contiguous(ctx, tc_drop(ctx, tc_sum_keep(ctx, p, mask), mask)), 6, c6) : NULL;
  if (cols && owp != ow) cols = ti_shrink_axis(ctx, cols, 5, ti_dim(ctx, 0), ti_dim(ctx, ow));
  int64_t hp = (oh - 1) * st[0] + 1 + dl[0] * (kh - 1), wp = (ow - 1) * st[1] + 1 + dl[1] * (kw - 1);
  frit_tensor *gx = NULL;
  for (int64_t i = 0; i < kh && cols; i++)
    for (int64_t j = 0; j < kw && cols; j++) {
      frit_tensor *t = ti_shrink_axis(ctx, ti_shrink_axis(ctx, cols, 2, ti_dim(ctx, i), ti_dim(ctx, i + 1)), 3,
                                      ti_dim(ctx, j), ti_dim(ctx, j + 1));
      int64_t t4[4] = {n, c, oh, ow};
      t = reshape_to(ctx, t, 4, t4);
      t = dilate_axis(ctx, dilate_axis(ctx, t, 2, st[0]), 3, st[1]);
      int64_t h0 = i * dl[0], w0 = j * dl[1];
      t = ti_pad_axis(ctx, t, 2, ti_dim(ctx, h0), ti_dim(ctx, hp - h0 - ((oh - 1) * st[0] + 1)));
      t = ti_pad_axis(ctx, t, 3, ti_dim(ctx, w0), ti_dim(ctx, wp - w0 - ((ow - 1) * st[1] + 1)));
      gx = !gx ? t : t ? ti_alu2(ctx, FRIT_OP_ADD, gx, t) : NULL;
      if (!t) return NULL;
    }
  /* realized by the caller once cut to x's size: a consumer that reads each element several
   * times (max-pool's backward) would otherwise redo the KH*KW gathers each time */
  return gx ? ti_cast(ctx, gx, dt) : NULL;
}

static frit_status conv2d_rule(frit_ctx *ctx, const int64_t *params, frit_tensor *out, frit_tensor *g, int nin,
                               frit_tensor *const *ins, frit_tensor **grads) {
  (void)nin;
  frit_dtype dt = frit_tensor_dtype(out);
  frit_tensor *x = ti_cast(ctx, ins[0], dt), *w = ti_cast(ctx, ins[1], dt);
  const frit_shape *sx = ti_shape(ctx, x), *sw = ti_shape(ctx, w);
  const int64_t *st = params, *pad = params + 2, *dl = params + 4;
  int swap[4] = {1, 0, 2, 3};
  /* gx: at x's size directly (16+ channels, stride 1: one product on g's padded grid), else in
   * padded coordinates, [0, (O-1)s + 1 + d(K-1)), then x's part of it: [pad, pad + H), zeros
   * past the last row a window reached */
  frit_tensor *gx = tn_conv2d_grad_x(ctx, g, w, st, pad, dl, frit_dim_value(sx->dims[2]), frit_dim_value(sx->dims[3]));
  bool implicit = gx != NULL;
  if (!gx) gx = conv_grad_x_col2im(ctx, g, w, st, dl);
  bool col2im = !implicit && gx != NULL;
  if (!gx) {
    frit_tensor *gd = dilate_axis(ctx, dilate_axis(ctx, g, 2, st[0]), 3, st[1]);
    frit_tensor *wt = frit_permute(ctx, frit_flip(ctx, w, (const int[]){2, 3}, 2), swap);
    int64_t cpad[2];
    for (int a = 0; a < 2; a++) cpad[a] = dl[a] * (frit_dim_value(sw->dims[2 + a]) - 1);
    gx = frit_conv2d(ctx, gd, wt, NULL, (const int64_t[]){1, 1}, cpad, dl, 1);
  }
  for (int a = 0; a < 2 && gx && !implicit; a++) {
    int64_t have = frit_dim_value(ti_shape(ctx, gx)->dims[2 + a]), want = frit_dim_value(sx->dims[2 + a]);
    int64_t lo = pad[a] < have ? pad[a] : have, hi = pad[a] + want < have ? pad[a] + want : have;
    gx = ti_shrink_axis(ctx, gx, 2 + a, ti_dim(ctx, lo), ti_dim(ctx, hi));
    if (gx && hi - lo < want) gx = ti_pad_axis(ctx, gx, 2 + a, ti_dim(ctx, 0), ti_dim(ctx, want - (hi - lo)));
  }
  /* at x's size, contiguous: its readers' loops merge (a pool's backward: one flat loop) and the
   * tap sum skips the padding's rows and columns */
  if (col2im && gx) gx = frit_contiguous(ctx, gx);
  /* gw: x as (C, N, H, W) against g as (O, N, OH, OW): stride and dilation trade places. x padded
   * before the swap is the forward's own padded copy (one node): padding the swapped x would
   * compute x again (a GELU before the conv: its erf per element) into a second copy */
  const int64_t nopad[2] = {0, 0};
  bool padded = pad[0] || pad[1];
  frit_dtype cdt = tc_is_half(dt) ? FRIT_F32 : dt;
  frit_tensor *xs = padded ? tn_conv_padded(ctx, ins[0], cdt, pad) : x;
  frit_tensor *gw = tn_conv2d_weight_grad(ctx, frit_permute(ctx, xs, swap), ti_cast(ctx, frit_permute(ctx, g, swap), cdt),
                                          dl, padded ? nopad : pad, st);
  for (int a = 0; a < 2 && gw; a++)
    gw = ti_shrink_axis(ctx, gw, 2 + a, ti_dim(ctx, 0), sw->dims[2 + a]);
  gw = gw ? frit_permute(ctx, gw, swap) : NULL;
  grads[0] = ti_cast(ctx, gx, frit_tensor_dtype(ins[0]));
  grads[1] = ti_cast(ctx, gw, frit_tensor_dtype(ins[1]));
  return done(ctx, grads, 2);
}

/* max pool over non-overlapping windows, out (..., OH, OW) = max of w (..., OH, OW, KH, KW) over
 * the last two axes, ties sharing g equally as the reduction's own rule does; but g / count is
 * realized at the pooled size, so that what g is made of (a GELU's derivative) and the tie count
 * are computed once per window instead of once per window element, and the gradient is realized
 * in (..., OH, KH, OW, KW) order: x's own layout, so that the windows' reverse (a reshape) reads
 * it linearly instead of through div/mod of x's flat index. */
static frit_status max_pool_rule(frit_ctx *ctx, const int64_t *params, frit_tensor *out, frit_tensor *g, int nin,
                                 frit_tensor *const *ins, frit_tensor **grads) {
  (void)params, (void)nin;
  frit_tensor *w = ins[0];
  const frit_shape *sw = ti_shape(ctx, w);
  int nd = sw->ndim;
  frit_uop *kd[FRIT_MAX_DIMS];
  for (int i = 0; i < nd; i++) kd[i] = sw->dims[i];
  kd[nd - 1] = kd[nd - 2] = ti_dim(ctx, 1);
  frit_tensor *m = ti_expand(ctx, ti_reshape(ctx, out, nd, kd), nd, sw->dims);
  frit_tensor *hit = ti_alu2(ctx, FRIT_OP_CMPEQ, w, m);
  bool mask[FRIT_MAX_DIMS] = {false};
  mask[nd - 1] = mask[nd - 2] = true;
  frit_tensor *count = frit_contiguous(ctx, tc_sum_keep(ctx, ti_cast(ctx, hit, frit_tensor_dtype(w)), mask));
  frit_tensor *share = frit_contiguous(ctx, ti_alu2(ctx, FRIT_OP_FDIV, ti_reshape(ctx, g, nd, kd), count));
  int perm[FRIT_MAX_DIMS];
  for (int i = 0; i < nd; i++) perm[i] = i;
  perm[nd - 3] = nd - 2, perm[nd - 2] = nd - 3; /* (..., OH, OW, KH, KW) <-> (..., OH, KH, OW, KW) */
  /* the compare again, in x's layout: the windows' permute cancels, so each x row is read and
   * written contiguously, and no mask is stored between the count and this (a uint8 mask in
   * window layout read back through pairs was 4x slower than this one pass) */
  frit_tensor *xl = frit_permute(ctx, w, perm), *ml = frit_permute(ctx, m, perm);
  frit_tensor *sl = frit_permute(ctx, ti_expand(ctx, share, nd, sw->dims), perm);
  frit_tensor *gw = ti_where(ctx, ti_alu2(ctx, FRIT_OP_CMPEQ, xl, ml), sl, ti_const_f(ctx, frit_tensor_dtype(w), 0, xl));
  gw = gw ? frit_permute(ctx, frit_contiguous(ctx, gw), perm) : NULL;
  grads[0] = gw;
  return done(ctx, grads, 1);
}

/* r = the max (min) of all of x, keepdims, reduced in stages: ties share g equally over the whole
 * array, as the unstaged reduction's own rule has them (the staged graph's rules would share it
 * among the parts first, and then within each). */
static frit_status whole_extreme_rule(frit_ctx *ctx, const int64_t *params, frit_tensor *out, frit_tensor *g,
                                      int nin, frit_tensor *const *ins, frit_tensor **grads) {
  (void)params, (void)nin;
  bool all[FRIT_MAX_DIMS];
  for (int i = 0; i < FRIT_MAX_DIMS; i++) all[i] = true;
  grads[0] = tc_extreme_grad(ctx, ins[0], out, g, all);
  return done(ctx, grads, 1);
}

static frit_status no_gradient(frit_ctx *ctx, const int64_t *params, frit_tensor *out, frit_tensor *g, int nin,
                               frit_tensor *const *ins, frit_tensor **grads) {
  (void)ctx, (void)params, (void)out, (void)g, (void)nin, (void)ins, (void)grads;
  return FRIT_OK;
}

static frit_tensor *attach(frit_ctx *ctx, frit_tensor *out, int nin, frit_tensor *const *ins, frit_vjp_rule rule,
                           const int64_t *params, int nparams) {
  if (!out) return NULL;
  for (int i = 0; i < nin; i++) /* the op returned an input as it is (a sort of one element) */
    if (!ins[i] || TI_U(ins[i])->id >= TI_U(out)->id) return out;
  return frit_set_vjp(ctx, out, nin, ins, rule, params, nparams) == FRIT_OK ? out : NULL;
}

frit_tensor *tg_whole_extreme(frit_ctx *ctx, frit_tensor *r, frit_tensor *x) {
  return attach(ctx, r, 1, &x, whole_extreme_rule, NULL, 0);
}

frit_tensor *tg_solve(frit_ctx *ctx, frit_tensor *x, frit_tensor *a, frit_tensor *b) {
  return attach(ctx, x, 2, (frit_tensor *const[]){a, b}, solve_rule, NULL, 0);
}
frit_tensor *tg_det(frit_ctx *ctx, frit_tensor *d, frit_tensor *a, bool log_abs) {
  return attach(ctx, d, 1, &a, det_rule, (const int64_t[]){log_abs}, 1);
}
frit_tensor *tg_constant(frit_ctx *ctx, frit_tensor *t) { return attach(ctx, t, 0, NULL, no_gradient, NULL, 0); }
frit_tensor *tg_cholesky(frit_ctx *ctx, frit_tensor *l, frit_tensor *a) {
  return attach(ctx, l, 1, &a, cholesky_rule, NULL, 0);
}
frit_tensor *tg_sort(frit_ctx *ctx, frit_tensor *sorted, frit_tensor *x, int axis, int descending) {
  return attach(ctx, sorted, 1, &x, sort_rule, (const int64_t[]){axis, descending}, 2);
}
frit_tensor *tg_copysign(frit_ctx *ctx, frit_tensor *r, frit_tensor *a, frit_tensor *b) {
  return attach(ctx, r, 2, (frit_tensor *const[]){a, b}, copysign_rule, NULL, 0);
}
frit_tensor *tg_first(frit_ctx *ctx, frit_tensor *r, frit_tensor *x, frit_tensor *y) {
  return attach(ctx, r, 2, (frit_tensor *const[]){x, y}, first_rule, NULL, 0);
}
frit_tensor *tg_conv2d(frit_ctx *ctx, frit_tensor *r, frit_tensor *x, frit_tensor *w, const int64_t stride[2],
                       const int64_t padding[2], const int64_t dilation[2]) {
  int64_t p[6] = {stride[0], stride[1], padding[0], padding[1], dilation[0], dilation[1]};
  return attach(ctx, r, 2, (frit_tensor *const[]){x, w}, conv2d_rule, p, 6);
}
frit_tensor *tg_max_pool(frit_ctx *ctx, frit_tensor *r, frit_tensor *w) {
  return attach(ctx, r, 1, &w, max_pool_rule, NULL, 0);
}
frit_tensor *tg_eigh(frit_ctx *ctx, frit_tensor *out, frit_tensor *a, bool vectors) {
  return attach(ctx, out, 1, &a, eigh_rule, (const int64_t[]){vectors}, 1);
}
frit_tensor *tg_svdvals(frit_ctx *ctx, frit_tensor *s, frit_tensor *a) {
  return attach(ctx, s, 1, &a, svdvals_rule, NULL, 0);
}
frit_tensor *tg_svd_vectors(frit_ctx *ctx, frit_tensor *out, frit_tensor *a, bool is_vh, bool full) {
  return attach(ctx, out, 1, &a, svd_vectors_rule, (const int64_t[]){is_vh ? 2 : 1, full}, 2);
}
frit_tensor *tg_qr(frit_ctx *ctx, frit_tensor *out, frit_tensor *a, bool is_r) {
  return attach(ctx, out, 1, &a, qr_rule, (const int64_t[]){is_r}, 1);
}
