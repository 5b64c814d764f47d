/* frit.linalg spectral decompositions as explicit kernels, one point per matrix: symmetric
 * eigendecomposition by cyclic two-sided Jacobi and SVD by one-sided (Hestenes) Jacobi, both
 * with a sweep cap and an early exit once the off-diagonal part is at rounding level. */
#include "tensor/grad_rules.h"
#include "tensor/linalg_kb.h"

/* Jacobi converges quadratically (about 6-10 sweeps for double); the cap only bounds a stalled
 * float32 run, whose last sweeps no longer change anything measurable. */
#define LK_MAX_SWEEPS 40

static double eps_of(frit_dtype dt) { return dt == FRIT_F32 ? 1.1920929e-07 : 2.220446049250313e-16; }

static frit_tensor *ksq(lk *k, frit_tensor *x) { return KMUL(k, x, x); }

/* c, s of the rotation that zeroes the (p, q) entry: t = sign(z) / (|z| + sqrt(1 + z^2)). */
static void rot_cs(lk *k, frit_tensor *z, frit_tensor **c, frit_tensor **s) {
  frit_tensor *sg = kwhere(k, KLT(k, z, kc(k, 0)), kc(k, -1), kc(k, 1));
  frit_tensor *t = KDIV(k, sg, KADD(k, KABS(k, z), KSQRT(k, KADD(k, kc(k, 1), ksq(k, z)))));
  *c = KDIV(k, kc(k, 1), KSQRT(k, KADD(k, kc(k, 1), ksq(k, t))));
  *s = KMUL(k, *c, t);
}

/* Columns p, q of X (rows 0..rows): (x_p, x_q) <- (c x_p - s x_q, s x_p + c x_q). rowwise
 * rotates rows p, q instead. */
static void rotate(lk *k, frit_tensor *X, frit_tensor *rows, frit_tensor *p, frit_tensor *q, frit_tensor *c,
                   frit_tensor *s, bool rowwise) {
  frit_tensor *i = kfor(k, ki(k, 0), rows, 1);
  frit_tensor *xp = rowwise ? LD2(k, X, p, i) : LD2(k, X, i, p), *xq = rowwise ? LD2(k, X, q, i) : LD2(k, X, i, q);
  frit_tensor *np_ = KSUB(k, KMUL(k, c, xp), KMUL(k, s, xq)), *nq = KADD(k, KMUL(k, s, xp), KMUL(k, c, xq));
  if (rowwise) ST2(k, X, p, i, np_), ST2(k, X, q, i, nq);
  else ST2(k, X, i, p, np_), ST2(k, X, i, q, nq);
  kendfor(k);
}

/* Swaps columns a and b of X (rows 0..rows). */
static void swap_cols(lk *k, frit_tensor *X, frit_tensor *rows, frit_tensor *a, frit_tensor *b) {
  frit_tensor *i = kfor(k, ki(k, 0), rows, 1);
  frit_tensor *t = LD2(k, X, i, a);
  ST2(k, X, i, a, LD2(k, X, i, b));
  ST2(k, X, i, b, t);
  kendfor(k);
}

/* Selection sort of vector S (length n), ascending or descending, carrying columns of X (rows
 * 0..rows) and Y (rows 0..yrows) along (either may be NULL). */
static void sort_with(lk *k, frit_tensor *S, frit_tensor *n, bool descending, frit_tensor *X, frit_tensor *rows,
                      frit_tensor *Y, frit_tensor *yrows) {
  frit_tensor *i = kfor(k, ki(k, 0), n, 1);
  int best = kvar(k, FRIT_I64, i), bv = kvar(k, k->dt, LD1(k, S, i));
  frit_tensor *j = kfor(k, KADD(k, i, ki(k, 1)), n, 1);
  frit_tensor *v = LD1(k, S, j);
  kif(k, descending ? KGT(k, v, kget(k, bv)) : KLT(k, v, kget(k, bv)));
  kset(k, bv, v);
  kset(k, best, j);
  kendif(k);
  kendfor(k);
  frit_tensor *b = kget(k, best);
  kif(k, KNE(k, b, i));
  ST1(k, S, b, LD1(k, S, i));
  ST1(k, S, i, kget(k, bv));
  if (X) swap_cols(k, X, rows, i, b);
  if (Y) swap_cols(k, Y, yrows, i, b);
  kendif(k);
  kendfor(k);
}

frit_status frit_linalg_eigh(frit_ctx *ctx, frit_tensor *a, frit_tensor **w, frit_tensor **v) {
  const char *op = "linalg.eigh";
  if (!w) {
    ti_fail(ctx, op, NULL, 0, "NULL output pointer");
    return FRIT_ERR_INVALID;
  }
  *w = NULL;
  if (v) *v = NULL;
  frit_dtype dt = lk_check(ctx, op, a, true);
  if (dt == FRIT_VOID) return frit_last_status(ctx);
  const frit_shape *sh = ti_shape(ctx, a);
  int nb = sh->ndim - 2;
  frit_uop *nd = sh->dims[nb];
  frit_tensor *A = frit_astype(ctx, a, dt);
  frit_tensor *V = A ? lk_buffer(ctx, dt, A, nb, 2, (frit_uop *[]){nd, nd}, 0) : NULL;
  frit_tensor *W = V ? lk_buffer(ctx, dt, A, nb, 1, &nd, 1) : NULL;
  if (!W) return frit_last_status(ctx);
  lk k;
  if (!lk_begin(&k, ctx, op, dt, A, 2)) return frit_last_status(ctx);
  frit_tensor *n = lk_dim(&k, nd);
  if (v) lk_identity(&k, V, n);
  /* symmetric from the lower triangle, as numpy's UPLO='L' */
  int fro = kvar(&k, dt, kc(&k, 0));
  frit_tensor *i = kfor(&k, ki(&k, 0), n, 1), *j = kfor(&k, ki(&k, 0), KADD(&k, i, ki(&k, 1)), 1);
  frit_tensor *x = LD2(&k, A, i, j);
  ST2(&k, A, j, i, x);
  kset(&k, fro, KADD(&k, kget(&k, fro), ksq(&k, x)));
  kendfor(&k);
  kendfor(&k);
  frit_tensor *tol = KMUL(&k, kget(&k, fro), kc(&k, eps_of(dt) * eps_of(dt)));
  kfor(&k, ki(&k, 0), ki(&k, LK_MAX_SWEEPS), 1);
  {
    int off = kvar(&k, dt, kc(&k, 0));
    frit_tensor *p = kfor(&k, ki(&k, 0), n, 1), *q = kfor(&k, KADD(&k, p, ki(&k, 1)), n, 1);
    kset(&k, off, KADD(&k, kget(&k, off), ksq(&k, LD2(&k, A, p, q))));
    kendfor(&k);
    kendfor(&k);
    kif(&k, ku(&k, FRIT_UF_LOGICAL_NOT, KGT(&k, kget(&k, off), tol)));
    kbreak(&k);
    kendif(&k);
    p = kfor(&k, ki(&k, 0), n, 1), q = kfor(&k, KADD(&k, p, ki(&k, 1)), n, 1);
    frit_tensor *apq = LD2(&k, A, p, q);
    kif(&k, KNE(&k, apq, kc(&k, 0)));
    {
      frit_tensor *z = KDIV(&k, KSUB(&k, LD2(&k, A, q, q), LD2(&k, A, p, p)), KMUL(&k, kc(&k, 2), apq));
      frit_tensor *c, *s;
      rot_cs(&k, z, &c, &s);
      rotate(&k, A, n, p, q, c, s, false);
      rotate(&k, A, n, p, q, c, s, true);
      ST2(&k, A, p, q, kc(&k, 0));
      ST2(&k, A, q, p, kc(&k, 0));
      if (v) rotate(&k, V, n, p, q, c, s, false);
    }
    kendif(&k);
    kendfor(&k);
    kendfor(&k);
  }
  kendfor(&k);
  i = kfor(&k, ki(&k, 0), n, 1);
  ST1(&k, W, i, LD2(&k, A, i, i));
  kendfor(&k);
  sort_with(&k, W, n, false, v ? V : NULL, n, NULL, NULL);
  frit_tensor *ts[3] = {W, V, A};
  if (!lk_end(&k, ts, 3)) return frit_last_status(ctx) != FRIT_OK ? frit_last_status(ctx) : FRIT_ERR_INVALID;
  *w = frit_dtype_is_float(dt) ? tg_eigh(ctx, ts[0], a, false) : ts[0];
  if (v) *v = frit_dtype_is_float(dt) ? tg_eigh(ctx, ts[1], a, true) : ts[1];
  return *w && (!v || *v) ? FRIT_OK : frit_last_status(ctx);
}

static frit_tensor *swap_last2(frit_ctx *ctx, frit_tensor *x) {
  int nd = frit_tensor_ndim(x), perm[FRIT_MAX_DIMS];
  for (int i = 0; i < nd; i++) perm[i] = i;
  perm[nd - 1] = nd - 2, perm[nd - 2] = nd - 1;
  return frit_permute(ctx, x, perm);
}

frit_status frit_linalg_svd(frit_ctx *ctx, frit_tensor *a, int full_matrices, frit_tensor **u, frit_tensor **s,
                            frit_tensor **vh) {
  const char *op = "linalg.svd";
  bool uv = u && vh;
  if (!s || (!u) != (!vh)) {
    ti_fail(ctx, op, NULL, 0, "s must be given, and u and vh both or neither");
    return FRIT_ERR_INVALID;
  }
  *s = NULL;
  if (uv) *u = *vh = NULL;
  frit_dtype dt = lk_check(ctx, op, a, false);
  if (dt == FRIT_VOID) return frit_last_status(ctx);
  const frit_shape *sh = ti_shape(ctx, a);
  int nb = sh->ndim - 2;
  int64_t M = frit_dim_value(sh->dims[nb]), N = frit_dim_value(sh->dims[nb + 1]);
  bool same = ti_dim_eq(sh->dims[nb], sh->dims[nb + 1]);
  if (!same && (M < 0 || N < 0)) {
    TI_FAIL1(ctx, op, a, "the matrix dims must be static at trace time (or equal)");
    return FRIT_ERR_INVALID;
  }
  /* work on A (m x n) with m >= n: the transpose when M < N */
  bool tr = !same && M < N;
  frit_tensor *A = frit_astype(ctx, tr ? swap_last2(ctx, a) : a, dt);
  if (!A) return frit_last_status(ctx);
  frit_uop *md = ti_shape(ctx, A)->dims[nb], *nd = ti_shape(ctx, A)->dims[nb + 1];
  frit_uop *ud = full_matrices ? md : nd;
  frit_tensor *V = lk_buffer(ctx, dt, A, nb, 2, (frit_uop *[]){nd, nd}, 0);
  frit_tensor *S = V ? lk_buffer(ctx, dt, A, nb, 1, &nd, 1) : NULL;
  frit_tensor *U = S && uv ? lk_buffer(ctx, dt, A, nb, 2, (frit_uop *[]){md, ud}, 2) : NULL;
  if (!S || (uv && !U)) return frit_last_status(ctx);
  lk k;
  if (!lk_begin(&k, ctx, op, dt, A, 2)) return frit_last_status(ctx);
  frit_tensor *m = lk_dim(&k, md), *n = lk_dim(&k, nd), *uc = lk_dim(&k, ud);
  if (uv) lk_identity(&k, V, n);
  kfor(&k, ki(&k, 0), ki(&k, LK_MAX_SWEEPS), 1);
  {
    int rot = kvar(&k, FRIT_I64, ki(&k, 0));
    frit_tensor *p = kfor(&k, ki(&k, 0), n, 1), *q = kfor(&k, KADD(&k, p, ki(&k, 1)), n, 1);
    int al = kvar(&k, dt, kc(&k, 0)), be = kvar(&k, dt, kc(&k, 0)), ga = kvar(&k, dt, kc(&k, 0));
    frit_tensor *i = kfor(&k, ki(&k, 0), m, 1);
    frit_tensor *xp = LD2(&k, A, i, p), *xq = LD2(&k, A, i, q);
    kset(&k, al, KADD(&k, kget(&k, al), ksq(&k, xp)));
    kset(&k, be, KADD(&k, kget(&k, be), ksq(&k, xq)));
    kset(&k, ga, KADD(&k, kget(&k, ga), KMUL(&k, xp, xq)));
    kendfor(&k);
    frit_tensor *g = kget(&k, ga);
    frit_tensor *lim = KMUL(&k, kc(&k, eps_of(dt) * eps_of(dt)), KMUL(&k, kget(&k, al), kget(&k, be)));
    kif(&k, kb(&k, FRIT_BF_LOGICAL_AND, KGT(&k, ksq(&k, g), lim), KNE(&k, g, kc(&k, 0))));
    {
      kset(&k, rot, ki(&k, 1));
      frit_tensor *z = KDIV(&k, KSUB(&k, kget(&k, be), kget(&k, al)), KMUL(&k, kc(&k, 2), g));
      frit_tensor *c, *sn;
      rot_cs(&k, z, &c, &sn);
      rotate(&k, A, m, p, q, c, sn, false);
      if (uv) rotate(&k, V, n, p, q, c, sn, false);
    }
    kendif(&k);
    kendfor(&k);
    kendfor(&k);
    kif(&k, KEQ(&k, kget(&k, rot), ki(&k, 0)));
    kbreak(&k);
    kendif(&k);
  }
  kendfor(&k);
  frit_tensor *j = kfor(&k, ki(&k, 0), n, 1);
  int nr = kvar(&k, dt, kc(&k, 0));
  frit_tensor *i = kfor(&k, ki(&k, 0), m, 1);
  kset(&k, nr, KADD(&k, kget(&k, nr), ksq(&k, LD2(&k, A, i, j))));
  kendfor(&k);
  ST1(&k, S, j, KSQRT(&k, kget(&k, nr)));
  kendfor(&k);
  sort_with(&k, S, n, true, uv ? A : NULL, m, uv ? V : NULL, n);
  if (uv) {
    /* u_j = a v_j / s_j; columns with s_j at rounding level (and the extra columns of a full U)
     * complete an orthonormal basis by Gram-Schmidt on unit vectors */
    int s0 = kvar(&k, dt, kc(&k, 0));
    kif(&k, KGT(&k, n, ki(&k, 0)));
    kset(&k, s0, LD1(&k, S, ki(&k, 0)));
    kendif(&k);
    frit_tensor *mx = lk_chk(&k, frit_astype(ctx, lk_chk(&k, frit_binary_t(ctx, FRIT_BF_MAXIMUM, m, n)), dt));
    frit_tensor *tol = KMUL(&k, KMUL(&k, kget(&k, s0), mx), kc(&k, eps_of(dt)));
    j = kfor(&k, ki(&k, 0), uc, 1);
    int sj = kvar(&k, dt, kc(&k, 0));
    kif(&k, KLT(&k, j, n));
    kset(&k, sj, LD1(&k, S, j));
    kendif(&k);
    kif(&k, KGT(&k, kget(&k, sj), tol));
    i = kfor(&k, ki(&k, 0), m, 1);
    ST2(&k, U, i, j, KDIV(&k, LD2(&k, A, i, j), kget(&k, sj)));
    kendfor(&k);
    kelse(&k);
    {
      frit_tensor *e = kfor(&k, ki(&k, 0), m, 1);
      i = kfor(&k, ki(&k, 0), m, 1);
      ST2(&k, U, i, j, lk_chk(&k, frit_astype(ctx, KEQ(&k, i, e), dt)));
      kendfor(&k);
      for (int pass = 0; pass < 2; pass++) {
        frit_tensor *l = kfor(&k, ki(&k, 0), j, 1);
        int d = kvar(&k, dt, kc(&k, 0));
        i = kfor(&k, ki(&k, 0), m, 1);
        kset(&k, d, KADD(&k, kget(&k, d), KMUL(&k, LD2(&k, U, i, l), LD2(&k, U, i, j))));
        kendfor(&k);
        i = kfor(&k, ki(&k, 0), m, 1);
        ST2(&k, U, i, j, KSUB(&k, LD2(&k, U, i, j), KMUL(&k, kget(&k, d), LD2(&k, U, i, l))));
        kendfor(&k);
        kendfor(&k);
      }
      int nn = kvar(&k, dt, kc(&k, 0));
      i = kfor(&k, ki(&k, 0), m, 1);
      kset(&k, nn, KADD(&k, kget(&k, nn), ksq(&k, LD2(&k, U, i, j))));
      kendfor(&k);
      /* some unit vector keeps at least 1/m of its squared length: take the first with 1/(2m) */
      kif(&k, KGT(&k, KMUL(&k, kget(&k, nn), KMUL(&k, kc(&k, 2), mx)), kc(&k, 1)));
      frit_tensor *inv = KDIV(&k, kc(&k, 1), KSQRT(&k, kget(&k, nn)));
      i = kfor(&k, ki(&k, 0), m, 1);
      ST2(&k, U, i, j, KMUL(&k, LD2(&k, U, i, j), inv));
      kendfor(&k);
      kbreak(&k);
      kendif(&k);
      kendfor(&k);
    }
    kendif(&k);
    kendfor(&k);
  }
  frit_tensor *ts[4] = {S, U, V, A};
  if (!lk_end(&k, ts, 4)) return frit_last_status(ctx) != FRIT_OK ? frit_last_status(ctx) : FRIT_ERR_INVALID;
  if (!(*s = frit_dtype_is_float(dt) ? tg_svdvals(ctx, ts[0], a) : ts[0])) return frit_last_status(ctx);
  if (!uv) return FRIT_OK;
  /* A = U S V^T; for the transposed problem a = V S U^T */
  if (tr) *u = ts[2], *vh = swap_last2(ctx, ts[1]);
  else *u = ts[1], *vh = swap_last2(ctx, ts[2]);
  if (*u && *vh && frit_dtype_is_float(dt)) {
    *u = tg_svd_vectors(ctx, *u, a, false, full_matrices);
    *vh = *u ? tg_svd_vectors(ctx, *vh, a, true, full_matrices) : NULL;
  }
  return *u && *vh ? FRIT_OK : frit_last_status(ctx);
}
