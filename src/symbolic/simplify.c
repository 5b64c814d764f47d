/* The symbolic simplifier: one rule set assembled from the *.rules files of this directory and
 * the C callbacks they call (constant folding, canonical order, linear sums, range decisions). */
#include "symbolic/symbolic.h"
#include "symbolic/simplify_fns.h"

/* ---------- small queries ---------- */

static bool is_int(const frit_uop *u) { return frit_dtype_is_int(u->dtype); }

/* The integer value of an integer/bool CONST (unsigned values as their bit pattern). */
static bool const_int(const frit_uop *u, int64_t *v) {
  if (u->op != FRIT_OP_CONST || !(frit_dtype_is_int(u->dtype) || frit_dtype_is_bool(u->dtype))) return false;
  *v = u->arg.value.i;
  return true;
}

/* ---------- predicates ---------- */

/* x can never be 0 (by range). */
static int p_nonzero(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int n) {
  (void)ctx, (void)root, (void)n;
  int64_t lo, hi;
  if (!frit_range_known(a[0], &lo, &hi)) return 0;
  return lo > 0 || hi < 0;
}

/* Every argument is an integer constant > 0. */
static int p_positive(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int n) {
  (void)ctx, (void)root;
  for (int i = 0; i < n; i++) {
    int64_t v;
    if (!const_int(a[i], &v) || v <= 0 || !is_int(a[i])) return 0;
  }
  return 1;
}

/* a divides b (positive integer constants). */
static int p_divides(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int n) {
  (void)ctx, (void)root, (void)n;
  int64_t x, y;
  return const_int(a[0], &x) && const_int(a[1], &y) && x > 0 && y % x == 0;
}

/* a*b (positive constants) does not overflow the dtype. */
static int p_mul_fits(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int n) {
  (void)ctx, (void)root, (void)n;
  int64_t x, y, p, lo, hi;
  if (!const_int(a[0], &x) || !const_int(a[1], &y) || __builtin_mul_overflow(x, y, &p)) return 0;
  frit_dtype_limits(frit_dtype_scalar(a[0]->dtype), &lo, &hi);
  return p >= lo && p <= hi && !(frit_dtype_kind(a[0]->dtype) == FRIT_U64 && p == INT64_MAX);
}

/* An integer or bool constant with every bit set (-1, the unsigned maximum, true). */
static int p_all_ones(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int n) {
  (void)ctx, (void)root, (void)n;
  int64_t v;
  if (!const_int(a[0], &v)) return 0;
  if (frit_dtype_is_bool(a[0]->dtype)) return v == 1;
  return v == frit_wrap_int(-1, a[0]->dtype);
}

/* The matched root has the same dtype as x. */
static int p_same_dtype(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int n) {
  (void)ctx, (void)n;
  return root->dtype == a[0]->dtype;
}

/* x is an integer or bool (not a float): comparisons of x with itself are decided. */
static int p_notfloat(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int n) {
  (void)ctx, (void)root, (void)n;
  return !frit_dtype_is_float(a[0]->dtype) && !frit_dtype_is_complex(a[0]->dtype); /* NaN != NaN */
}

/* ---------- builders ---------- */

/* An ALU op (or CAST/BITCAST) whose sources are all constants: evaluate it. */
static frit_uop *b_fold(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int n) {
  (void)a, (void)n;
  frit_dtype rdt = root->dtype;
  if (frit_dtype_is_ptr(rdt) || root->nsrc > 3) return NULL;
  frit_scalar s[3];
  for (uint32_t i = 0; i < root->nsrc; i++) {
    if (root->src[i]->op != FRIT_OP_CONST) return NULL;
    s[i] = root->src[i]->arg.value;
  }
  frit_dtype sdt = frit_dtype_scalar(root->src[0]->dtype), rs = frit_dtype_scalar(rdt);
  frit_scalar r;
  frit_op op = (frit_op)root->op;
  if (op == FRIT_OP_CAST) {
    r = frit_eval_cast(s[0], sdt, rs);
  } else if (op == FRIT_OP_BITCAST) {
    if (frit_dtype_lanes(rdt) != 1 || frit_dtype_lanes(root->src[0]->dtype) != 1) return NULL;
    r = frit_eval_bitcast(s[0], sdt, rs);
  } else if (op == FRIT_OP_WHERE) {
    r = frit_eval_alu(FRIT_OP_WHERE, rs, s);
  } else {
    if (!(frit_op_flags(op) & FRIT_F_ALU)) return NULL;
    r = frit_eval_alu(op, sdt, s);
  }
  return frit_const(ctx, rdt, frit_scalar_normalize(r, rs));
}

/* Commutative op with a constant first and a non-constant second: swap them. */
static frit_uop *b_commute(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int n) {
  (void)a, (void)n;
  if (root->nsrc != 2 || root->src[0]->op != FRIT_OP_CONST || root->src[1]->op == FRIT_OP_CONST) return NULL;
  frit_uop *s[2] = {root->src[1], root->src[0]};
  return frit_uop_replace_src(ctx, root, s, 2);
}

/* x / d or x % d with d a positive constant: x in *x, d in *d. */
static bool divmod_by(const frit_uop *u, frit_op op, frit_uop **x, int64_t *d) {
  if (u->op != op || u->nsrc != 2 || u->src[1]->op != FRIT_OP_CONST || u->src[1]->arg.value.i <= 0) return false;
  *x = u->src[0], *d = u->src[1]->arg.value.i;
  return true;
}

/* One recombination of an unflattened index in L: c*(x%a) + c*a*(x/a) -> c*x,
 * c*(x%a) + c*a*((x/a)%b) -> c*(x%(a*b)) and c*((x/a)%b) + c*b*(x/(a*b)) -> c*(x/a). Exact
 * identities of truncating division for every x (x == (x/a)*a + x%a, and (x/a)/b == x/(a*b) for
 * positive a, b), so they hold wrapped too, and for an x below 0: a padded view's index, whose
 * gate keeps those points from being read (a pad of a max pool's reshaped gradient divided in
 * every load of its copy). A reshape that merges axes of a
 * realized buffer indexes it this way: conv's im2col patches read as (.., C*KH*KW) would
 * otherwise divide in the product's inner loop. Each step merges two terms: it terminates. */
static bool lin_recombine(frit_ctx *ctx, frit_lin *L) {
  for (int i = 0; i < L->n; i++) {
    frit_uop *x, *y, *q;
    int64_t a, b, a2, c = L->t[i].c;
    if (!divmod_by(L->t[i].v, FRIT_OP_MOD, &x, &a)) continue;
    /* c*((y/a2)%a) + c*a*(y/(a2*a)) -> c*(y/a2): the div part of the same unflattening */
    if (divmod_by(x, FRIT_OP_IDIV, &y, &a2) && a2 <= INT64_MAX / a)
      for (int j = 0; j < L->n; j++) {
        if (j == i || L->t[j].c != frit_wrap_int((int64_t)((uint64_t)c * (uint64_t)a), L->dt)) continue;
        if (!divmod_by(L->t[j].v, FRIT_OP_IDIV, &q, &b) || q != y || b != a2 * a) continue;
        frit_lin t = *L;
        t.t[i].c = t.t[j].c = 0;
        if (!frit_lin_add(&t, x, c)) return false;
        frit_lin_normalize(&t);
        *L = t;
        return true;
      }
    for (int j = 0; j < L->n; j++) {
      if (j == i || L->t[j].c != frit_wrap_int((int64_t)((uint64_t)c * (uint64_t)a), L->dt)) continue;
      frit_uop *v = L->t[j].v, *whole = NULL;
      if (divmod_by(v, FRIT_OP_IDIV, &y, &a2) && y == x && a2 == a) {
        whole = x;
      } else if (divmod_by(v, FRIT_OP_MOD, &q, &b) && divmod_by(q, FRIT_OP_IDIV, &y, &a2) && y == x &&
                 a2 == a && b <= INT64_MAX / a && frit_wrap_int(a * b, x->dtype) == a * b) {
        whole = frit_binary(ctx, FRIT_OP_MOD, x, frit_const_int(ctx, x->dtype, a * b));
      }
      if (!whole) continue;
      frit_lin t = *L;
      t.t[i].c = t.t[j].c = 0;
      if (!frit_lin_add(&t, whole, c)) return false;
      frit_lin_normalize(&t);
      *L = t;
      return true;
    }
  }
  return false;
}

/* Integer ADD/SUB/NEG/MUL trees: the canonical linear sum (NULL when already canonical). */
static frit_uop *b_linear(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int n) {
  (void)a, (void)n;
  if (!is_int(root)) return NULL;
  frit_lin L;
  if (!frit_lin_flatten(root, &L)) return NULL;
  bool changed = false;
  for (int guard = 0; guard < FRIT_LIN_MAX && lin_recombine(ctx, &L); guard++) changed = true;
  if (!changed && frit_lin_is(root, &L)) return NULL;
  frit_uop *r = frit_lin_build(ctx, &L);
  return r == root ? NULL : r;
}

/* A node whose range is a single value is that constant. */
static frit_uop *b_range_const(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int n) {
  (void)a, (void)n;
  int64_t lo, hi;
  if (root->op == FRIT_OP_CONST || !frit_range_known(root, &lo, &hi) || lo != hi) return NULL;
  return frit_const_int(ctx, root->dtype, lo);
}

/* MAX/MIN whose answer the ranges decide. */
static frit_uop *b_minmax(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int n) {
  (void)ctx, (void)a, (void)n;
  frit_uop *x = root->src[0], *y = root->src[1];
  int64_t xl, xh, yl, yh;
  if (!frit_range_known(x, &xl, &xh) || !frit_range_known(y, &yl, &yh)) return NULL;
  bool mx = root->op == FRIT_OP_MAX;
  if (xl >= yh) return mx ? x : y;
  if (yl >= xh) return mx ? y : x;
  return NULL;
}

/* cast(cast(x, mid), dst) == cast(x, dst) when the inner cast is exact: mid is an integer type
 * holding every value x takes. */
static frit_uop *b_cast_cast(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int n) {
  (void)n;
  frit_uop *x = a[0], *mid = root->src[0];
  int64_t lo, hi, mlo, mhi;
  if (!frit_dtype_is_int(mid->dtype) || !frit_range_known(x, &lo, &hi)) return NULL;
  frit_dtype_limits(frit_dtype_scalar(mid->dtype), &mlo, &mhi);
  if (lo < mlo || hi > mhi) return NULL;
  if (frit_dtype_kind(mid->dtype) == FRIT_U64 && hi == INT64_MAX) return NULL;
  if (root->dtype == x->dtype) return x;
  return frit_cast(ctx, x, root->dtype);
}

static const frit_rule_fn simplifier_fns[] = {
    {"nonzero", NULL, p_nonzero},
    {"positive", NULL, p_positive},
    {"divides", NULL, p_divides},
    {"mul_fits", NULL, p_mul_fits},
    {"all_ones", NULL, p_all_ones},
    {"same_dtype", NULL, p_same_dtype},
    {"notfloat", NULL, p_notfloat},
    {"fold", b_fold, NULL},
    {"commute", b_commute, NULL},
    {"linear", b_linear, NULL},
    {"range_const", b_range_const, NULL},
    {"minmax", b_minmax, NULL},
    {"cast_cast", b_cast_cast, NULL},
    {"divmod", frit_simp_divmod, NULL},
    {"div_negdiv", frit_simp_div_negdiv, NULL},
    {"mod_negdiv", frit_simp_mod_negdiv, NULL},
    {"cmp_lin", frit_simp_cmp_lin, NULL},
    {"cmp_eq_lin", frit_simp_cmp_eq_lin, NULL},
};

/* The rule files, in priority order: specific identities before the general canonicaliser. */
static const char simplifier_text[] =
#include "symbolic/fold.rules.inc"
#include "symbolic/identity.rules.inc"
#include "symbolic/divmod.rules.inc"
#include "symbolic/compare.rules.inc"
#include "symbolic/canon.rules.inc"
    ;

const frit_ruleset *frit_simplifier_rules(frit_ctx *ctx) {
  if (!ctx->simplifier)
    ctx->simplifier = frit_ruleset_parse(ctx, "simplifier", simplifier_text, simplifier_fns,
                                         (int)(sizeof simplifier_fns / sizeof simplifier_fns[0]));
  return ctx->simplifier;
}

frit_uop *frit_simplify(frit_ctx *ctx, frit_uop *root) {
  if (!root) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "frit_simplify: root is NULL");
    return NULL;
  }
  const frit_ruleset *rs = frit_simplifier_rules(ctx);
  if (!rs) return NULL;
  return frit_rewrite(ctx, root, rs);
}
