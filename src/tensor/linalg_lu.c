/* frit.linalg factorisations as explicit kernels, one point per matrix of the batch: LU with
 * partial pivoting (solve, inv, det, slogdet), Cholesky and Householder QR. Each is one named
 * frontend op (frit_linalg_*), so a later VJP can attach to it. */
#include "tensor/grad_rules.h"
#include "tensor/linalg_kb.h"

frit_dtype lk_check(frit_ctx *ctx, const char *op, frit_tensor *x, bool square) {
  if (!ti_ok(ctx, op, &x, 1)) return FRIT_VOID;
  frit_dtype dt = frit_tensor_dtype(x);
  const frit_shape *s = ti_shape(ctx, x);
  if (s->ndim < 2) {
    TI_FAIL1(ctx, op, x, "%d-dimensional array given; the array must be at least two-dimensional", s->ndim);
    return FRIT_VOID;
  }
  if (square && !ti_dim_eq(s->dims[s->ndim - 1], s->dims[s->ndim - 2])) {
    TI_FAIL1(ctx, op, x, "last 2 dimensions of the array must be square");
    return FRIT_VOID;
  }
  if (dt == FRIT_F32 || dt == FRIT_F64) return dt;
  if (frit_dtype_is_int(dt) || frit_dtype_is_bool(dt)) return FRIT_F64;
  if (tc_is_half(dt)) TI_FAIL1(ctx, op, x, "array type float16/bfloat16 is unsupported in linalg (as in numpy)");
  else TI_FAIL1(ctx, op, x, "dtype is unsupported in linalg (complex dtypes are not supported yet)");
  return FRIT_VOID;
}

bool lk_begin(lk *k, frit_ctx *ctx, const char *name, frit_dtype dt, frit_tensor *like, int inner) {
  const frit_shape *s = ti_shape(ctx, like);
  k->ctx = ctx, k->dt = dt, k->nb = s->ndim - inner, k->bad = false;
  return frit_kernel_begin(ctx, name, k->nb, s->dims, k->b) == FRIT_OK;
}

bool lk_end(lk *k, frit_tensor **ts, int n) {
  int w = frit_kernel_end(k->ctx);
  if (w < 0 || k->bad) return false;
  for (int i = 0; i < w; i++) {
    frit_tensor *old = NULL, *nw = NULL;
    if (frit_kernel_written(k->ctx, i, &old, &nw) != FRIT_OK) return false;
    for (int j = 0; j < n; j++)
      if (ts[j] == old) ts[j] = nw;
  }
  return true;
}

frit_tensor *lk_buffer(frit_ctx *ctx, frit_dtype dt, frit_tensor *like, int nbatch, int ninner,
                       frit_uop *const *inner, double tag) {
  const frit_shape *s = ti_shape(ctx, like);
  frit_uop *d[FRIT_MAX_DIMS];
  for (int i = 0; i < nbatch; i++) d[i] = s->dims[i];
  for (int i = 0; i < ninner; i++) d[nbatch + i] = inner[i];
  return frit_contiguous(ctx, frit_full_sym(ctx, dt, nbatch + ninner, d, tag));
}

frit_tensor *lk_dim(lk *k, frit_uop *d) { return lk_chk(k, frit_tensor_of(k->ctx, d)); }

void lk_identity(lk *k, frit_tensor *X, frit_tensor *n) {
  frit_tensor *i = kfor(k, ki(k, 0), n, 1), *j = kfor(k, ki(k, 0), n, 1);
  ST2(k, X, i, j, lk_chk(k, frit_astype(k->ctx, KEQ(k, i, j), k->dt)));
  kendfor(k);
  kendfor(k);
}

/* A working copy of x in dtype dt: a buffer the kernel may overwrite. */
static frit_tensor *work_copy(frit_ctx *ctx, frit_tensor *x, frit_dtype dt) {
  return frit_astype(ctx, x, dt); /* the scheduler copies before the kernel writes */
}

/* ---------- LU with partial pivoting ---------- */

/* Eliminates A (n x n) in place, applying the row operations to X (n x nx columns, NULL: none).
 * sign/logabs/det vars (or -1) accumulate the determinant; *sing is set to 1 on a zero pivot
 * (elimination then stops when stop_on_zero). */
static void lu_eliminate(lk *k, frit_tensor *A, frit_tensor *X, frit_tensor *n, frit_tensor *nx, int sing, int sign,
                         int logabs, int det, bool stop_on_zero) {
  frit_tensor *c = kfor(k, ki(k, 0), n, 1);
  int p = kvar(k, FRIT_I64, c), best = kvar(k, k->dt, KABS(k, LD2(k, A, c, c)));
  frit_tensor *r = kfor(k, KADD(k, c, ki(k, 1)), n, 1);
  frit_tensor *v = KABS(k, LD2(k, A, r, c));
  kif(k, KGT(k, v, kget(k, best)));
  kset(k, best, v);
  kset(k, p, r);
  kendif(k);
  kendfor(k);
  frit_tensor *pv = kget(k, p);
  kif(k, KNE(k, pv, c));
  {
    frit_tensor *j = kfor(k, ki(k, 0), n, 1);
    frit_tensor *t = LD2(k, A, c, j);
    ST2(k, A, c, j, LD2(k, A, pv, j));
    ST2(k, A, pv, j, t);
    kendfor(k);
    if (X) {
      j = kfor(k, ki(k, 0), nx, 1);
      t = LD2(k, X, c, j);
      ST2(k, X, c, j, LD2(k, X, pv, j));
      ST2(k, X, pv, j, t);
      kendfor(k);
    }
    if (sign >= 0) kset(k, sign, KMUL(k, kget(k, sign), kc(k, -1)));
  }
  kendif(k);
  frit_tensor *piv = LD2(k, A, c, c);
  if (sign >= 0 && logabs >= 0) kset(k, sign, KMUL(k, kget(k, sign), ku(k, FRIT_UF_SIGN, piv)));
  if (logabs >= 0) kset(k, logabs, KADD(k, kget(k, logabs), ku(k, FRIT_UF_LOG, KABS(k, piv))));
  if (det >= 0) kset(k, det, KMUL(k, kget(k, det), piv));
  kif(k, KEQ(k, piv, kc(k, 0)));
  kset(k, sing, ki(k, 1));
  if (stop_on_zero) kbreak(k);
  kendif(k);
  r = kfor(k, KADD(k, c, ki(k, 1)), n, 1);
  frit_tensor *f = KDIV(k, LD2(k, A, r, c), piv);
  ST2(k, A, r, c, f);
  frit_tensor *j = kfor(k, KADD(k, c, ki(k, 1)), n, 1);
  ST2(k, A, r, j, KSUB(k, LD2(k, A, r, j), KMUL(k, f, LD2(k, A, c, j))));
  kendfor(k);
  if (X) {
    j = kfor(k, ki(k, 0), nx, 1);
    ST2(k, X, r, j, KSUB(k, LD2(k, X, r, j), KMUL(k, f, LD2(k, X, c, j))));
    kendfor(k);
  }
  kendfor(k);
  kendfor(k);
}

/* Broadcasts the batch dims of a (..., n, n) and b (..., n, k) against each other. */
static bool bcast_batch(frit_ctx *ctx, const char *op, frit_tensor **a, frit_tensor **b) {
  const frit_shape *sa = ti_shape(ctx, *a), *sb = ti_shape(ctx, *b);
  int na = sa->ndim - 2, nbb = sb->ndim - 2, n = na > nbb ? na : nbb;
  frit_uop *da[FRIT_MAX_DIMS], *db[FRIT_MAX_DIMS], *one = ti_dim(ctx, 1);
  frit_tensor *ab[2] = {*a, *b};
  for (int i = 0; i < n; i++) {
    int ia = i - (n - na), ib = i - (n - nbb);
    frit_uop *x = ia >= 0 ? sa->dims[ia] : one, *y = ib >= 0 ? sb->dims[ib] : one;
    if (ti_dim_eq(x, y) || frit_dim_value(y) == 1) da[i] = db[i] = x;
    else if (frit_dim_value(x) == 1) da[i] = db[i] = y;
    else return ti_fail(ctx, op, ab, 2, "batch dims do not broadcast") != NULL;
  }
  da[n] = sa->dims[na], da[n + 1] = sa->dims[na + 1];
  db[n] = sb->dims[nbb], db[n + 1] = sb->dims[nbb + 1];
  *a = ti_broadcast(ctx, op, *a, n + 2, da);
  *b = ti_broadcast(ctx, op, *b, n + 2, db);
  return *a && *b;
}

static frit_tensor *solve_impl(frit_ctx *ctx, const char *op, frit_tensor *a, frit_tensor *b, frit_dtype dt) {
  const frit_shape *sa = ti_shape(ctx, a);
  frit_uop *nd = sa->dims[sa->ndim - 1];
  /* X must be a node distinct from A even when b is a */
  frit_tensor *A = work_copy(ctx, a, dt), *X = frit_contiguous(ctx, work_copy(ctx, b, dt));
  if (!A || !X) return NULL;
  const frit_shape *sx = ti_shape(ctx, X);
  lk k;
  if (!lk_begin(&k, ctx, op, dt, A, 2)) return NULL;
  frit_tensor *n = lk_dim(&k, nd), *nx = lk_dim(&k, sx->dims[sx->ndim - 1]);
  int sing = kvar(&k, FRIT_I64, ki(&k, 0));
  lu_eliminate(&k, A, X, n, nx, sing, -1, -1, -1, true);
  kif(&k, KEQ(&k, kget(&k, sing), ki(&k, 0)));
  { /* back substitution */
    frit_tensor *c = kfor(&k, KSUB(&k, n, ki(&k, 1)), ki(&k, -1), -1);
    frit_tensor *piv = LD2(&k, A, c, c);
    frit_tensor *j = kfor(&k, ki(&k, 0), nx, 1);
    int s = kvar(&k, dt, LD2(&k, X, c, j));
    frit_tensor *r = kfor(&k, KADD(&k, c, ki(&k, 1)), n, 1);
    kset(&k, s, KSUB(&k, kget(&k, s), KMUL(&k, LD2(&k, A, c, r), LD2(&k, X, r, j))));
    kendfor(&k);
    ST2(&k, X, c, j, KDIV(&k, kget(&k, s), piv));
    kendfor(&k);
    kendfor(&k);
  }
  kelse(&k);
  { /* singular: NaN (eager callers raise LinAlgError) */
    frit_tensor *i = kfor(&k, ki(&k, 0), n, 1), *j = kfor(&k, ki(&k, 0), nx, 1);
    ST2(&k, X, i, j, kc(&k, NAN));
    kendfor(&k);
    kendfor(&k);
  }
  kendif(&k);
  frit_tensor *ts[1] = {X};
  return lk_end(&k, ts, 1) ? tg_solve(ctx, ts[0], a, b) : NULL;
}

frit_tensor *frit_linalg_solve(frit_ctx *ctx, frit_tensor *a, frit_tensor *b) {
  frit_tensor *ab[2] = {a, b};
  if (!ti_ok(ctx, "linalg.solve", ab, 2)) return NULL;
  frit_dtype da = lk_check(ctx, "linalg.solve", a, true), db = lk_check(ctx, "linalg.solve", b, false);
  if (da == FRIT_VOID || db == FRIT_VOID) return NULL;
  const frit_shape *sa = ti_shape(ctx, a), *sb = ti_shape(ctx, b);
  if (!ti_dim_eq(sa->dims[sa->ndim - 1], sb->dims[sb->ndim - 2]))
    return ti_fail(ctx, "linalg.solve", ab, 2, "b must have shape (..., M, K) with M the size of a (..., M, M)");
  if (!bcast_batch(ctx, "linalg.solve", &a, &b)) return NULL;
  return solve_impl(ctx, "linalg.solve", a, b, frit_promote(da, db));
}

frit_tensor *frit_linalg_inv(frit_ctx *ctx, frit_tensor *a) {
  frit_dtype dt = lk_check(ctx, "linalg.inv", a, true);
  if (dt == FRIT_VOID) return NULL;
  const frit_shape *s = ti_shape(ctx, a);
  frit_uop *n = s->dims[s->ndim - 1];
  /* the identity as (n, n): rows == cols, broadcast over the batch */
  frit_tensor *i0 = ti_reshape(ctx, ti_iota(ctx, n), 2, (frit_uop *[]){n, ti_dim(ctx, 1)});
  frit_tensor *i1 = ti_reshape(ctx, ti_iota(ctx, n), 2, (frit_uop *[]){ti_dim(ctx, 1), n});
  frit_tensor *eye = frit_astype(ctx, frit_binary_t(ctx, FRIT_BF_EQ, i0, i1), dt);
  if (!eye) return NULL;
  frit_uop *d[FRIT_MAX_DIMS];
  for (int i = 0; i < s->ndim; i++) d[i] = s->dims[i];
  eye = ti_broadcast(ctx, "linalg.inv", eye, s->ndim, d);
  return eye ? solve_impl(ctx, "linalg.inv", a, eye, dt) : NULL;
}

/* det (slog false) or slogdet (sign, logabsdet). */
static frit_status det_impl(frit_ctx *ctx, const char *op, frit_tensor *a, bool slog, frit_tensor **out0,
                            frit_tensor **out1) {
  frit_dtype dt = lk_check(ctx, op, a, true);
  if (dt == FRIT_VOID) return frit_last_status(ctx);
  const frit_shape *s = ti_shape(ctx, a);
  frit_uop *nd = s->dims[s->ndim - 1];
  frit_tensor *A = work_copy(ctx, a, dt);
  frit_tensor *o0 = A ? lk_buffer(ctx, dt, A, s->ndim - 2, 0, NULL, 0) : NULL;
  frit_tensor *o1 = o0 && slog ? lk_buffer(ctx, dt, A, s->ndim - 2, 0, NULL, 1) : NULL;
  if (!o0 || (slog && !o1)) return frit_last_status(ctx);
  lk k;
  if (!lk_begin(&k, ctx, op, dt, A, 2)) return frit_last_status(ctx);
  frit_tensor *n = lk_dim(&k, nd);
  int sing = kvar(&k, FRIT_I64, ki(&k, 0));
  int sign = kvar(&k, dt, kc(&k, 1)), logabs = slog ? kvar(&k, dt, kc(&k, 0)) : -1;
  int det = slog ? -1 : kvar(&k, dt, kc(&k, 1));
  lu_eliminate(&k, A, NULL, n, NULL, sing, sign, logabs, det, true);
  frit_tensor *is_sing = KNE(&k, kget(&k, sing), ki(&k, 0));
  if (slog) {
    kst(&k, o0, 0, NULL, NULL, kwhere(&k, is_sing, kc(&k, 0), kget(&k, sign)));
    kst(&k, o1, 0, NULL, NULL, kwhere(&k, is_sing, kc(&k, -INFINITY), kget(&k, logabs)));
  } else {
    kst(&k, o0, 0, NULL, NULL, kwhere(&k, is_sing, kc(&k, 0), KMUL(&k, kget(&k, sign), kget(&k, det))));
  }
  frit_tensor *ts[2] = {o0, o1};
  if (!lk_end(&k, ts, 2)) return frit_last_status(ctx) != FRIT_OK ? frit_last_status(ctx) : FRIT_ERR_INVALID;
  *out0 = slog ? tg_constant(ctx, ts[0]) : tg_det(ctx, ts[0], a, false);
  if (out1) *out1 = tg_det(ctx, ts[1], a, true);
  return *out0 && (!out1 || *out1) ? FRIT_OK : frit_last_status(ctx);
}

frit_tensor *frit_linalg_det(frit_ctx *ctx, frit_tensor *a) {
  frit_tensor *d = NULL;
  return det_impl(ctx, "linalg.det", a, false, &d, NULL) == FRIT_OK ? d : NULL;
}

frit_status frit_linalg_slogdet(frit_ctx *ctx, frit_tensor *a, frit_tensor **sign, frit_tensor **logabsdet) {
  if (!sign || !logabsdet) {
    ti_fail(ctx, "linalg.slogdet", NULL, 0, "NULL output pointer");
    return FRIT_ERR_INVALID;
  }
  *sign = *logabsdet = NULL;
  return det_impl(ctx, "linalg.slogdet", a, true, sign, logabsdet);
}

/* ---------- Cholesky ---------- */

frit_tensor *frit_linalg_cholesky(frit_ctx *ctx, frit_tensor *a, int upper) {
  frit_dtype dt = lk_check(ctx, "linalg.cholesky", a, true);
  if (dt == FRIT_VOID) return NULL;
  const frit_shape *s = ti_shape(ctx, a);
  frit_uop *nd = s->dims[s->ndim - 1];
  frit_tensor *L = work_copy(ctx, a, dt);
  if (!L) return NULL;
  lk k;
  if (!lk_begin(&k, ctx, "linalg.cholesky", dt, L, 2)) return NULL;
  frit_tensor *n = lk_dim(&k, nd);
  int bad = kvar(&k, FRIT_I64, ki(&k, 0));
  frit_tensor *j = kfor(&k, ki(&k, 0), n, 1);
  {
    int d = kvar(&k, dt, LD2(&k, L, j, j));
    frit_tensor *q = kfor(&k, ki(&k, 0), j, 1);
    frit_tensor *l = LD2(&k, L, j, q);
    kset(&k, d, KSUB(&k, kget(&k, d), KMUL(&k, l, l)));
    kendfor(&k);
    /* not (d > 0) also catches NaN: numpy's potrf fails there too */
    kif(&k, ku(&k, FRIT_UF_LOGICAL_NOT, KGT(&k, kget(&k, d), kc(&k, 0))));
    kset(&k, bad, ki(&k, 1));
    kbreak(&k);
    kendif(&k);
    frit_tensor *dj = KSQRT(&k, kget(&k, d));
    ST2(&k, L, j, j, dj);
    frit_tensor *i = kfor(&k, KADD(&k, j, ki(&k, 1)), n, 1);
    int t = kvar(&k, dt, LD2(&k, L, i, j));
    q = kfor(&k, ki(&k, 0), j, 1);
    kset(&k, t, KSUB(&k, kget(&k, t), KMUL(&k, LD2(&k, L, i, q), LD2(&k, L, j, q))));
    kendfor(&k);
    ST2(&k, L, i, j, KDIV(&k, kget(&k, t), dj));
    kendfor(&k);
  }
  kendfor(&k);
  /* zero the strict upper triangle, or everything (NaN) on failure */
  frit_tensor *isbad = KNE(&k, kget(&k, bad), ki(&k, 0));
  frit_tensor *i = kfor(&k, ki(&k, 0), n, 1);
  j = kfor(&k, ki(&k, 0), n, 1);
  frit_tensor *keep = KLT(&k, j, KADD(&k, i, ki(&k, 1)));
  frit_tensor *v = kwhere(&k, keep, LD2(&k, L, i, j), kc(&k, 0));
  ST2(&k, L, i, j, kwhere(&k, isbad, kc(&k, NAN), v));
  kendfor(&k);
  kendfor(&k);
  frit_tensor *ts[1] = {L};
  if (!lk_end(&k, ts, 1) || !tg_cholesky(ctx, ts[0], a)) return NULL;
  if (!upper) return ts[0];
  int perm[FRIT_MAX_DIMS];
  for (int q = 0; q < s->ndim; q++) perm[q] = q;
  perm[s->ndim - 1] = s->ndim - 2, perm[s->ndim - 2] = s->ndim - 1;
  return frit_permute(ctx, ts[0], perm);
}

/* ---------- Householder QR ---------- */

frit_status frit_linalg_qr(frit_ctx *ctx, frit_tensor *a, int mode, frit_tensor **q, frit_tensor **r) {
  const char *op = "linalg.qr";
  if (!q || !r) {
    ti_fail(ctx, op, NULL, 0, "NULL output pointer");
    return FRIT_ERR_INVALID;
  }
  *q = *r = NULL;
  frit_dtype dt = lk_check(ctx, op, a, false);
  if (dt == FRIT_VOID) return frit_last_status(ctx);
  if (mode < 0 || mode > 2) {
    TI_FAIL1(ctx, op, a, "mode must be 0 (reduced), 1 (complete) or 2 (r), got %d", mode);
    return FRIT_ERR_INVALID;
  }
  const frit_shape *s = ti_shape(ctx, a);
  int nb = s->ndim - 2;
  frit_uop *md = s->dims[nb], *ndm = s->dims[nb + 1];
  int64_t mv = frit_dim_value(md), nv = frit_dim_value(ndm);
  frit_uop *kd = NULL; /* min(m, n) */
  if (mv >= 0 && nv >= 0) kd = ti_dim(ctx, mv < nv ? mv : nv);
  else if (ti_dim_eq(md, ndm)) kd = md;
  else if (mode != 1) {
    TI_FAIL1(ctx, op, a, "reduced QR needs min(M, N) known at trace time (static M and N, or M == N)");
    return FRIT_ERR_INVALID;
  }
  frit_tensor *R = work_copy(ctx, a, dt);
  frit_tensor *Q = R ? lk_buffer(ctx, dt, R, nb, 2, (frit_uop *[]){md, md}, 0) : NULL;
  frit_tensor *V = Q ? lk_buffer(ctx, dt, R, nb, 1, &md, 1) : NULL;
  if (!V) return frit_last_status(ctx);
  lk k;
  if (!lk_begin(&k, ctx, op, dt, R, 2)) return frit_last_status(ctx);
  frit_tensor *m = lk_dim(&k, md), *n = lk_dim(&k, ndm);
  frit_tensor *i;
  if (mode != 2) lk_identity(&k, Q, m);
  frit_tensor *kk = lk_chk(&k, frit_binary_t(ctx, FRIT_BF_MINIMUM, m, n));
  frit_tensor *c = kfor(&k, ki(&k, 0), kk, 1);
  {
    /* reflector as LAPACK's dlarfg: H = I - beta v v^T, v[c] = x0 - alpha, alpha = -sign(x0)|x|.
     * The column is scaled by its largest magnitude first (as dnrm2): squares of tiny entries
     * underflow (the reflection was skipped, R not triangular) and of large ones overflow (inf).
     * H does not change with the scale of v, so v keeps the scaled entries. */
    int big = kvar(&k, dt, kc(&k, 0));
    i = kfor(&k, KADD(&k, c, ki(&k, 1)), m, 1);
    frit_tensor *ax = KABS(&k, LD2(&k, R, i, c));
    kset(&k, big, kwhere(&k, KGT(&k, ax, kget(&k, big)), ax, kget(&k, big)));
    kendfor(&k);
    kif(&k, KGT(&k, kget(&k, big), kc(&k, 0)));
    {
      frit_tensor *x0 = LD2(&k, R, c, c), *ax0 = KABS(&k, x0);
      frit_tensor *scale = kwhere(&k, KGT(&k, ax0, kget(&k, big)), ax0, kget(&k, big));
      int sub = kvar(&k, dt, kc(&k, 0));
      i = kfor(&k, KADD(&k, c, ki(&k, 1)), m, 1);
      frit_tensor *x = KDIV(&k, LD2(&k, R, i, c), scale);
      kset(&k, sub, KADD(&k, kget(&k, sub), KMUL(&k, x, x)));
      ST1(&k, V, i, x);
      kendfor(&k);
      frit_tensor *x0s = KDIV(&k, x0, scale);
      frit_tensor *nrm = KSQRT(&k, KADD(&k, kget(&k, sub), KMUL(&k, x0s, x0s)));
      frit_tensor *alphas = kwhere(&k, KLT(&k, x0, kc(&k, 0)), nrm, ku(&k, FRIT_UF_NEG, nrm));
      frit_tensor *alpha = KMUL(&k, alphas, scale);
      frit_tensor *v0 = KSUB(&k, x0s, alphas);
      ST1(&k, V, c, v0);
      frit_tensor *beta = KDIV(&k, kc(&k, 2), KADD(&k, kget(&k, sub), KMUL(&k, v0, v0)));
      frit_tensor *j = kfor(&k, c, n, 1);
      {
        int t = kvar(&k, dt, kc(&k, 0));
        i = kfor(&k, c, m, 1);
        kset(&k, t, KADD(&k, kget(&k, t), KMUL(&k, LD1(&k, V, i), LD2(&k, R, i, j))));
        kendfor(&k);
        frit_tensor *f = KMUL(&k, beta, kget(&k, t));
        i = kfor(&k, c, m, 1);
        ST2(&k, R, i, j, KSUB(&k, LD2(&k, R, i, j), KMUL(&k, f, LD1(&k, V, i))));
        kendfor(&k);
      }
      kendfor(&k);
      ST2(&k, R, c, c, alpha);
      i = kfor(&k, KADD(&k, c, ki(&k, 1)), m, 1);
      ST2(&k, R, i, c, kc(&k, 0));
      kendfor(&k);
      if (mode != 2) { /* Q = Q H */
        frit_tensor *row = kfor(&k, ki(&k, 0), m, 1);
        int t = kvar(&k, dt, kc(&k, 0));
        frit_tensor *l = kfor(&k, c, m, 1);
        kset(&k, t, KADD(&k, kget(&k, t), KMUL(&k, LD2(&k, Q, row, l), LD1(&k, V, l))));
        kendfor(&k);
        frit_tensor *f = KMUL(&k, beta, kget(&k, t));
        l = kfor(&k, c, m, 1);
        ST2(&k, Q, row, l, KSUB(&k, LD2(&k, Q, row, l), KMUL(&k, f, LD1(&k, V, l))));
        kendfor(&k);
        kendfor(&k);
      }
    }
    kendif(&k);
  }
  kendfor(&k);
  frit_tensor *ts[3] = {R, Q, V};
  if (!lk_end(&k, ts, 3)) return frit_last_status(ctx) != FRIT_OK ? frit_last_status(ctx) : FRIT_ERR_INVALID;
  R = ts[0], Q = ts[1];
  if (mode == 1) {
    *q = Q, *r = R;
    return FRIT_OK;
  }
  /* reduced: Q[..., :, :k], R[..., :k, :] */
  frit_uop *b0[FRIT_MAX_DIMS], *e0[FRIT_MAX_DIMS], *b1[FRIT_MAX_DIMS], *e1[FRIT_MAX_DIMS];
  for (int d = 0; d < nb; d++) b0[d] = b1[d] = ti_dim(ctx, 0), e0[d] = e1[d] = s->dims[d];
  b0[nb] = b0[nb + 1] = b1[nb] = b1[nb + 1] = ti_dim(ctx, 0);
  e0[nb] = md, e0[nb + 1] = kd;
  e1[nb] = kd, e1[nb + 1] = ndm;
  *r = ti_shrink(ctx, R, b1, e1);
  if (mode == 0) *q = ti_shrink(ctx, Q, b0, e0);
  /* gradient rules where R is square (M >= N); others have none yet (an error under grad) */
  bool tall = ti_dim_eq(kd, ndm);
  if (*r && tall && frit_dtype_is_float(dt)) *r = tg_qr(ctx, *r, a, true);
  if (mode == 0 && *q && tall && frit_dtype_is_float(dt)) *q = tg_qr(ctx, *q, a, false);
  return *r && (mode == 2 || *q) ? FRIT_OK : frit_last_status(ctx);
}
