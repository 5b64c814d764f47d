/* Range-driven folding of integer division, modulo and comparisons against constants, on
 * linear forms. Each fold's validity argument is in docs/simplifier.md; the recurring one: when
 * the exact (unwrapped) range of a linear sum fits the dtype, the node's value is that exact sum,
 * so integer arithmetic on it is sound. */
#include "symbolic/simplify_fns.h"
#include "symbolic/symbolic.h"

static uint64_t uabs64(int64_t v) { return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v; }

static uint64_t gcd64(uint64_t a, uint64_t b) {
  while (b) {
    uint64_t t = a % b;
    a = b, b = t;
  }
  return a;
}

/* Floor / ceiling division by b > 0. */
static int64_t floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}
static int64_t ceildiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && a > 0) ? q + 1 : q;
}

static bool fits(int64_t v, frit_dtype dt) {
  int64_t lo, hi;
  frit_dtype_limits(frit_dtype_scalar(dt), &lo, &hi);
  if (frit_dtype_kind(dt) == FRIT_U64 && v == INT64_MAX) return false;
  return v >= lo && v <= hi;
}

/* The value of an integer constant divisor/bound; false for other nodes and for u64 values
 * beyond INT64_MAX (their int64 pattern would read as negative). */
static bool int_const_value(const frit_uop *u, int64_t *v) {
  if (u->op != FRIT_OP_CONST || !frit_dtype_is_int(u->dtype)) return false;
  *v = u->arg.value.i;
  return !(frit_dtype_is_unsigned(u->dtype) && *v < 0);
}

static uint64_t lin_gcd(const frit_lin *L) {
  uint64_t g = 0;
  for (int i = 0; i < L->n; i++) g = gcd64(g, uabs64(L->t[i].c));
  return g;
}

/* Exact division of every coefficient (and k) by g, which divides them all. */
static void lin_div(frit_lin *L, int64_t g) {
  for (int i = 0; i < L->n; i++) L->t[i].c /= g;
  L->k /= g;
}

static frit_uop *cnst(frit_ctx *ctx, frit_dtype dt, int64_t v) { return frit_const_int(ctx, dt, v); }

/* x - c as a canonical sum. */
static frit_uop *minus_const(frit_ctx *ctx, frit_uop *x, int64_t c) {
  frit_lin L;
  if (!frit_lin_flatten(x, &L)) return frit_binary(ctx, FRIT_OP_SUB, x, cnst(ctx, x->dtype, c));
  L.k = frit_wrap_int((int64_t)((uint64_t)L.k - (uint64_t)c), L.dt);
  return frit_lin_build(ctx, &L);
}

/* x = c*S + R >= 0 with c | D, 1 < c < D, and R in [0, c): x/D = S/(D/c), x%D = c*(S%(D/c)) + R
 * (truncation is floor here; floor((c*S + R)/c) = S). The index of a buffer realized as
 * (OH, KH, OW, KW) read at (h, w) of its (H, W) view: (28*h + w)/56 is h/2 for w in [0, 28). */
static frit_uop *factor_split(frit_ctx *ctx, const frit_lin *L, int64_t D, bool is_div, frit_dtype dt) {
  for (int j = 0; j < L->n; j++) {
    int64_t c = L->t[j].c, rl, rh, sl, sh;
    if (c <= 1 || c >= D || D % c) continue;
    frit_lin S = {.dt = dt}, R = {.dt = dt};
    for (int i = 0; i < L->n; i++) {
      if (L->t[i].c % c == 0) S.t[S.n].v = L->t[i].v, S.t[S.n++].c = L->t[i].c / c;
      else R.t[R.n++] = L->t[i];
    }
    S.k = floordiv(L->k, c), R.k = L->k - S.k * c;
    if (!frit_lin_no_wrap(&R, &rl, &rh) || rl < 0 || rh >= c || !frit_lin_no_wrap(&S, &sl, &sh)) continue;
    frit_uop *sv = frit_lin_build(ctx, &S), *e = cnst(ctx, dt, D / c);
    if (!sv) return NULL;
    if (is_div) return frit_binary(ctx, FRIT_OP_IDIV, sv, e);
    frit_uop *r = frit_lin_build(ctx, &R);
    return r ? frit_binary(ctx, FRIT_OP_ADD, frit_binary(ctx, FRIT_OP_MUL, frit_binary(ctx, FRIT_OP_MOD, sv, e),
                                                         cnst(ctx, dt, c)), r)
             : NULL;
  }
  return NULL;
}

frit_uop *frit_simp_divmod(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int n) {
  (void)a, (void)n;
  frit_uop *x = root->src[0];
  frit_dtype dt = root->dtype;
  bool is_div = root->op == FRIT_OP_IDIV;
  int64_t D, lo, hi;
  if (!frit_dtype_is_int(dt) || !int_const_value(root->src[1], &D) || D <= 0) return NULL;

  /* Every value of x has the same quotient. */
  if (frit_range_known(x, &lo, &hi) && lo / D == hi / D) {
    int64_t q = lo / D;
    if (is_div) return cnst(ctx, dt, q);
    return q == 0 ? x : minus_const(ctx, x, q * D);
  }

  frit_lin L;
  if (!frit_lin_flatten(x, &L) || !frit_lin_no_wrap(&L, &lo, &hi)) return NULL;

  /* A common factor g of D and the whole numerator: (g*y)/(g*e) == y/e, (g*y)%(g*e) == g*(y%e). */
  uint64_t g = gcd64(gcd64(lin_gcd(&L), uabs64(L.k)), (uint64_t)D);
  if (g > 1) {
    frit_lin S = L;
    lin_div(&S, (int64_t)g);
    frit_uop *y = frit_lin_build(ctx, &S);
    int64_t e = D / (int64_t)g;
    if (!y) return NULL;
    if (is_div) return e == 1 ? y : frit_binary(ctx, FRIT_OP_IDIV, y, cnst(ctx, dt, e));
    if (e == 1) return cnst(ctx, dt, 0);
    return frit_binary(ctx, FRIT_OP_MUL, frit_binary(ctx, FRIT_OP_MOD, y, cnst(ctx, dt, e)),
                       cnst(ctx, dt, (int64_t)g));
  }

  /* x = D*Q + R with R of x's sign: truncation then splits as x/D = Q + R/D, x%D = R%D. */
  bool nonneg = lo >= 0, nonpos = hi <= 0;
  if (!nonneg && !nonpos) return NULL;
  frit_lin Q = {.dt = dt}, R = {.dt = dt};
  for (int i = 0; i < L.n; i++) {
    frit_lin_term t = L.t[i];
    int64_t vl, vh;
    if (t.c % D == 0) {
      Q.t[Q.n].v = t.v, Q.t[Q.n++].c = t.c / D;
    } else if (nonneg && t.c > D && frit_range_known(t.v, &vl, &vh) && vl >= 0) {
      /* c*v = D*(c/D)*v + (c%D)*v: the part left in R stays >= 0 (conv's (x + 59*y) % 58) */
      Q.t[Q.n].v = t.v, Q.t[Q.n++].c = t.c / D;
      R.t[R.n].v = t.v, R.t[R.n++].c = t.c % D;
    } else {
      R.t[R.n++] = t;
    }
  }
  Q.k = nonneg ? floordiv(L.k, D) : ceildiv(L.k, D);
  R.k = L.k - Q.k * D;
  if (Q.n == 0 && Q.k == 0) return nonneg ? factor_split(ctx, &L, D, is_div, dt) : NULL; /* nothing to split off */
  int64_t rl, rh;
  if (!frit_lin_no_wrap(&R, &rl, &rh) || (nonneg ? rl < 0 : rh > 0)) return NULL;
  bool whole = nonneg ? rh < D : rl > -D; /* R/D == 0 and R%D == R */
  frit_uop *r = frit_lin_build(ctx, &R);
  if (!r) return NULL;
  if (!is_div) return whole ? r : frit_binary(ctx, FRIT_OP_MOD, r, root->src[1]);
  if (!whole) {
    frit_uop *rq = frit_binary(ctx, FRIT_OP_IDIV, r, root->src[1]);
    if (!rq || !frit_lin_add(&Q, rq, 1)) return NULL;
  }
  frit_lin_normalize(&Q);
  return frit_lin_build(ctx, &Q);
}

/* Signed x / d with d < 0: -(x / -d), truncation being odd in the divisor. */
frit_uop *frit_simp_div_negdiv(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int n) {
  (void)a, (void)n;
  int64_t d;
  frit_dtype dt = root->dtype;
  if (!int_const_value(root->src[1], &d) || d >= 0 || d == INT64_MIN || !fits(-d, dt)) return NULL;
  return frit_unary(ctx, FRIT_OP_NEG, frit_binary(ctx, FRIT_OP_IDIV, root->src[0], cnst(ctx, dt, -d)));
}

/* Signed x % d with d < 0: x % -d, the remainder taking only the dividend's sign. */
frit_uop *frit_simp_mod_negdiv(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int n) {
  (void)a, (void)n;
  int64_t d;
  frit_dtype dt = root->dtype;
  if (!int_const_value(root->src[1], &d) || d >= 0 || d == INT64_MIN || !fits(-d, dt)) return NULL;
  return frit_binary(ctx, FRIT_OP_MOD, root->src[0], cnst(ctx, dt, -d));
}

static frit_uop *lt(frit_ctx *ctx, frit_uop *lhs, int64_t k) {
  if (!lhs) return NULL;
  return frit_binary(ctx, FRIT_OP_CMPLT, lhs, cnst(ctx, lhs->dtype, k));
}

/* sum c_i*v_i + k < K (or <= K): the constant moves right, a common factor g of the c_i divides
 * through (g*S < K  <=>  S < ceil(K/g)), and g*S + R < K with R in [0, g) becomes a comparison
 * of S alone when R cannot change the answer. */
frit_uop *frit_simp_cmp_lin(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int n) {
  (void)a, (void)n;
  frit_uop *x = root->src[0];
  frit_dtype dt = x->dtype;
  int64_t K, lo, hi;
  if (!frit_dtype_is_int(dt) || !int_const_value(root->src[1], &K)) return NULL;
  bool le = root->op == FRIT_OP_CMPLE;
  if (le) {
    if (K == INT64_MAX || !fits(K + 1, dt)) return NULL;
    K++; /* x <= K  <=>  x < K+1 for integers */
  }
  frit_lin L;
  if (!frit_lin_flatten(x, &L) || L.n == 0 || !frit_lin_no_wrap(&L, &lo, &hi)) return le ? lt(ctx, x, K) : NULL;
  int64_t Kp;
  if (__builtin_sub_overflow(K, L.k, &Kp)) return le ? lt(ctx, x, K) : NULL;
  bool moved = L.k != 0;
  L.k = 0;
  int64_t sl, sh;
  uint64_t g = lin_gcd(&L);
  if (g > 1 && g <= INT64_MAX) {
    frit_lin S = L;
    lin_div(&S, (int64_t)g);
    int64_t m = ceildiv(Kp, (int64_t)g);
    if (frit_lin_no_wrap(&S, &sl, &sh) && fits(m, dt)) return lt(ctx, frit_lin_build(ctx, &S), m);
  } else if (moved) {
    if (frit_lin_no_wrap(&L, &sl, &sh) && fits(Kp, dt)) return lt(ctx, frit_lin_build(ctx, &L), Kp);
  } else {
    /* g*S + R < K with R in [0, g): try each coefficient as g */
    for (int j = 0; j < L.n; j++) {
      int64_t g2 = L.t[j].c;
      if (g2 <= 1) continue;
      frit_lin S = {.dt = dt}, R = {.dt = dt};
      for (int i = 0; i < L.n; i++) {
        if (L.t[i].c % g2 == 0) S.t[S.n].v = L.t[i].v, S.t[S.n++].c = L.t[i].c / g2;
        else R.t[R.n++] = L.t[i];
      }
      int64_t rl, rh;
      if (R.n == 0 || !frit_lin_no_wrap(&R, &rl, &rh) || rl < 0 || rh >= g2) continue;
      int64_t m = floordiv(Kp, g2), t = Kp - m * g2;
      if (rh < t) m++; /* S == m still satisfies it */
      else if (rl < t) continue;
      if (!frit_lin_no_wrap(&S, &sl, &sh) || !fits(m, dt)) continue;
      return lt(ctx, frit_lin_build(ctx, &S), m);
    }
  }
  return le ? lt(ctx, x, K) : NULL;
}

/* sum + k == K  <=>  sum == K - k (a bijection in the ring); g*S == K needs g | K. */
frit_uop *frit_simp_cmp_eq_lin(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int n) {
  (void)a, (void)n;
  frit_uop *x = root->src[0];
  frit_dtype dt = x->dtype;
  frit_op op = (frit_op)root->op;
  int64_t K, lo, hi;
  if (!frit_dtype_is_int(dt) || !int_const_value(root->src[1], &K)) return NULL;
  frit_lin L;
  if (!frit_lin_flatten(x, &L) || L.n == 0) return NULL;
  if (L.k != 0) {
    int64_t Kp = frit_wrap_int((int64_t)((uint64_t)K - (uint64_t)L.k), dt);
    L.k = 0;
    frit_uop *s = frit_lin_build(ctx, &L);
    return s ? frit_binary(ctx, op, s, cnst(ctx, dt, Kp)) : NULL;
  }
  uint64_t g = lin_gcd(&L);
  if (g <= 1 || g > INT64_MAX || !frit_lin_no_wrap(&L, &lo, &hi)) return NULL;
  if (K % (int64_t)g != 0) return frit_const_int(ctx, root->dtype, op == FRIT_OP_CMPNE);
  lin_div(&L, (int64_t)g);
  frit_uop *s = frit_lin_build(ctx, &L);
  return s ? frit_binary(ctx, op, s, cnst(ctx, dt, K / (int64_t)g)) : NULL;
}
