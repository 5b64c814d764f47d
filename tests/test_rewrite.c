/* Tests of the rule notation and the rewrite engine, with small rule sets of their own: every
 * result is compared by node identity with an expected graph built directly. */
#include "frit.h"
#include "check.h"

#include <math.h>
#include <stdlib.h>

static frit_ctx *ctx;

/* An opaque value of dtype dt (a cast of a variable, so no rule sees through it). */
static frit_uop *val(frit_dtype dt, const char *name) {
  frit_uop *v = frit_var(ctx, name, -100, 100);
  return dt == FRIT_I64 ? v : frit_cast(ctx, v, dt);
}
static frit_uop *vec4(frit_uop *s) {
  frit_uop *src[4] = {s, s, s, s};
  return frit_uop_new(ctx, FRIT_OP_VECTORIZE, frit_dtype_vec(frit_uop_dtype(s), 4), src, 4, NULL);
}
static frit_uop *bin(frit_op op, frit_uop *a, frit_uop *b) { return frit_binary(ctx, op, a, b); }
static frit_uop *ci(frit_dtype dt, int64_t v) { return frit_const_int(ctx, dt, v); }
static frit_uop *cf(frit_dtype dt, double v) { return frit_const_float(ctx, dt, v); }

static frit_ruleset *rules(const char *text, const frit_rule_fn *fns, int nfns) {
  frit_ruleset *rs = frit_ruleset_parse(ctx, "t", text, fns, nfns);
  if (!rs) fprintf(stderr, "unexpected parse error: %s\n", frit_error(ctx));
  CHECK(rs != NULL);
  return rs;
}

/* ---------- C functions the rules call ---------- */

static int64_t cval(frit_uop *c) { return frit_uop_arg(c)->value.i; }

/* Folds ADD/MUL of two i64-ish signed constants with C's own arithmetic. */
static frit_uop *fold(frit_ctx *c, frit_uop *root, frit_uop *const *args, int n) {
  (void)args, (void)n;
  int64_t a = cval(frit_uop_src(root, 0)), b = cval(frit_uop_src(root, 1));
  if (frit_uop_op(root) == FRIT_OP_ADD) return frit_const_int(c, frit_uop_dtype(root), a + b);
  return frit_const_int(c, frit_uop_dtype(root), a * b);
}
static frit_uop *sum2(frit_ctx *c, frit_uop *root, frit_uop *const *args, int n) {
  (void)root;
  if (n != 2) return NULL;
  return frit_const_int(c, frit_uop_dtype(args[0]), cval(args[0]) + cval(args[1]));
}
static int never_calls;
static frit_uop *never(frit_ctx *c, frit_uop *root, frit_uop *const *args, int n) {
  (void)c, (void)root, (void)args, (void)n;
  never_calls++;
  return NULL;
}
static frit_uop *broken(frit_ctx *c, frit_uop *root, frit_uop *const *args, int n) {
  (void)root, (void)args, (void)n;
  /* operands of different dtypes: frit_binary reports an error */
  return frit_binary(c, FRIT_OP_ADD, frit_const_int(c, FRIT_I32, 1), frit_const_int(c, FRIT_I64, 1));
}
static int nonzero(frit_ctx *c, frit_uop *root, frit_uop *const *args, int n) {
  (void)c, (void)root;
  return n == 1 && frit_uop_op(args[0]) == FRIT_OP_CONST && cval(args[0]) != 0;
}
static int positive(frit_ctx *c, frit_uop *root, frit_uop *const *args, int n) {
  (void)c, (void)root;
  for (int i = 0; i < n; i++)
    if (frit_uop_op(args[i]) != FRIT_OP_CONST || cval(args[i]) <= 0) return 0;
  return 1;
}
/* Sees a root bound to a variable: it must be a real, interned node. */
static int rootcheck_bad, rootcheck_calls;
static frit_uop *rootcheck(frit_ctx *c, frit_uop *root, frit_uop *const *args, int n) {
  rootcheck_calls++;
  if (n != 1 || args[0] != root || frit_uop_id(root) >= frit_node_count(c)) rootcheck_bad++;
  return NULL;
}
static int rootpos(frit_ctx *c, frit_uop *root, frit_uop *const *args, int n) {
  (void)args, (void)n;
  if (frit_uop_id(root) >= frit_node_count(c)) rootcheck_bad++;
  return frit_uop_op(frit_uop_src(root, 1)) == FRIT_OP_CONST;
}
static const frit_ruleset *nested_rs;
static frit_uop *nested(frit_ctx *c, frit_uop *root, frit_uop *const *args, int n) {
  (void)root, (void)n;
  /* a callback that itself rewrites with the same rule set */
  return frit_rewrite(c, frit_binary(c, FRIT_OP_ADD, args[0], frit_const_int(c, frit_uop_dtype(args[0]), 0)),
                      nested_rs);
}

static const frit_rule_fn fns[] = {
    {"fold", fold, NULL},       {"sum2", sum2, NULL},         {"never", never, NULL},
    {"broken", broken, NULL},   {"nonzero", NULL, nonzero},   {"positive", NULL, positive},
    {"nested", nested, NULL},   {"rootcheck", rootcheck, NULL}, {"rootpos", NULL, rootpos},
};
#define NFNS ((int)(sizeof fns / sizeof fns[0]))

/* ---------- tests ---------- */

static void test_identity_and_commutative(void) {
  frit_ruleset *rs = rules("(add x 0) -> x\n(sub x 0) -> x\n", NULL, 0);
  if (!rs) return;
  frit_uop *a = val(FRIT_I32, "a"), *z = ci(FRIT_I32, 0);
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_ADD, a, z), rs) == a);
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_ADD, z, a), rs) == a); /* commutative: either order */
  frit_uop *s = bin(FRIT_OP_SUB, z, a);                       /* sub is not commutative */
  CHECK(frit_rewrite(ctx, s, rs) == s);
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_SUB, a, z), rs) == a);
  CHECK_EQ_INT(frit_ruleset_size(rs), 2);
  CHECK_EQ_STR(frit_ruleset_rule_text(rs, 1), "(sub x 0) -> x");
  CHECK_EQ_INT(frit_ruleset_fired(rs, 0), 2);
  CHECK_EQ_INT(frit_ruleset_fired(rs, 1), 1);
  CHECK(frit_ruleset_rule_text(rs, 2) == NULL);
}

static void test_same_name(void) {
  frit_ruleset *rs = rules("(sub x x) -> 0   # same node twice\n(cmplt x x) -> false\n", NULL, 0);
  if (!rs) return;
  frit_uop *a = val(FRIT_I16, "a"), *b = val(FRIT_I16, "b");
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_SUB, a, a), rs) == ci(FRIT_I16, 0));
  frit_uop *ab = bin(FRIT_OP_SUB, a, b);
  CHECK(frit_rewrite(ctx, ab, rs) == ab);
  /* a literal at the root takes the root's dtype: bool here */
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_CMPLT, a, a), rs) == ci(FRIT_BOOL, 0));
  /* sources are rewritten first, so sub(a-a, 0) has sub(0, 0) and folds again */
  frit_uop *f = val(FRIT_F32, "f");
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_SUB, bin(FRIT_OP_SUB, f, f), cf(FRIT_F32, 0)), rs) == cf(FRIT_F32, 0));
}

static void test_literals_across_dtypes(void) {
  frit_ruleset *rs = rules("(mul x 1) -> x\n(add x 0) -> x\n(and x true) -> x\n(max x -1) -> 7\n"
                           "(min x inf) -> x\n(min x 1) -> x\n(max x -inf) -> x\n(add x nan) -> nan\n(mul x 0.5) -> 2.5\n",
                           NULL, 0);
  if (!rs) return;
  frit_dtype dts[] = {FRIT_I8, FRIT_I32, FRIT_I64, FRIT_U8, FRIT_U64, FRIT_F16, FRIT_BF16, FRIT_F32, FRIT_F64};
  for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
    frit_dtype dt = dts[i];
    frit_uop *x = val(dt, "x");
    CHECK(frit_rewrite(ctx, bin(FRIT_OP_MUL, x, ci(dt, 1)), rs) == x);
    CHECK(frit_rewrite(ctx, bin(FRIT_OP_ADD, ci(dt, 0), x), rs) == x);
    frit_uop *two = bin(FRIT_OP_MUL, x, ci(dt, 2));
    CHECK(frit_rewrite(ctx, two, rs) == two);
    /* vectors: a broadcast CONST matches too */
    frit_dtype vt = frit_dtype_vec(dt, 4);
    frit_uop *xv = vec4(x);
    CHECK(frit_rewrite(ctx, bin(FRIT_OP_MUL, xv, ci(vt, 1)), rs) == xv);
    /* -1 matches signed and float -1, not the unsigned all-ones */
    frit_uop *m = bin(FRIT_OP_MAX, x, ci(dt, -1));
    frit_uop *want = (dt >= FRIT_U8 && dt <= FRIT_U64) ? m : ci(dt, 7);
    CHECK(frit_rewrite(ctx, m, rs) == want);
  }
  /* 0 matches -0.0; 1 matches bool true; float literals match floats exactly */
  frit_uop *f = val(FRIT_F32, "f");
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_ADD, f, cf(FRIT_F32, -0.0)), rs) == f);
  frit_uop *p = val(FRIT_BOOL, "p");
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_AND, p, ci(FRIT_BOOL, 1)), rs) == p);
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_MIN, p, ci(FRIT_BOOL, 1)), rs) == p);
  frit_uop *pf = bin(FRIT_OP_AND, p, ci(FRIT_BOOL, 0));
  CHECK(frit_rewrite(ctx, pf, rs) == pf);
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_MIN, f, cf(FRIT_F32, INFINITY)), rs) == f);
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_MAX, f, cf(FRIT_F32, -INFINITY)), rs) == f);
  frit_uop *mi = bin(FRIT_OP_MIN, f, cf(FRIT_F32, -INFINITY));
  CHECK(frit_rewrite(ctx, mi, rs) == mi);
  frit_uop *r = frit_rewrite(ctx, bin(FRIT_OP_ADD, f, cf(FRIT_F32, NAN)), rs);
  CHECK(r && frit_uop_op(r) == FRIT_OP_CONST && frit_uop_dtype(r) == FRIT_F32 && isnan(frit_uop_arg(r)->value.f));
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_MUL, f, cf(FRIT_F32, 0.5)), rs) == cf(FRIT_F32, 2.5));
  frit_uop *i = val(FRIT_I32, "i");
  frit_uop *ih = bin(FRIT_OP_MUL, i, ci(FRIT_I32, 0)); /* 0.5 never matches an integer */
  CHECK(frit_rewrite(ctx, ih, rs) == ih);
}

static void test_classes(void) {
  frit_ruleset *rs = rules("(mul x:int 0) -> 0\n"
                           "(idiv x:uint 1) -> x\n"
                           "(idiv x:sint -1) -> (neg x)\n"
                           "(fdiv x:float x) -> 1\n"
                           "(cast (cast x:i32):i64):i32 -> x\n"
                           "(xor x:bool true) -> (not x)\n"
                           "(add x:const:i8 y) -> y\n",
                           NULL, 0);
  if (!rs) return;
  frit_uop *i = val(FRIT_I32, "i"), *u = val(FRIT_U16, "u"), *f = val(FRIT_F32, "f"), *b = val(FRIT_BOOL, "b");
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_MUL, i, ci(FRIT_I32, 0)), rs) == ci(FRIT_I32, 0));
  frit_uop *fz = bin(FRIT_OP_MUL, f, cf(FRIT_F32, 0)); /* x*0 is not 0 for floats (nan, inf) */
  CHECK(frit_rewrite(ctx, fz, rs) == fz);
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_IDIV, u, ci(FRIT_U16, 1)), rs) == u);
  frit_uop *i1 = bin(FRIT_OP_IDIV, i, ci(FRIT_I32, 1));
  CHECK(frit_rewrite(ctx, i1, rs) == i1);
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_IDIV, i, ci(FRIT_I32, -1)), rs) == frit_unary(ctx, FRIT_OP_NEG, i));
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_FDIV, f, f), rs) == cf(FRIT_F32, 1));
  frit_uop *ii = bin(FRIT_OP_FDIV, i, i);
  CHECK(frit_rewrite(ctx, ii, rs) == ii);
  CHECK(frit_rewrite(ctx, frit_cast(ctx, frit_cast(ctx, i, FRIT_I64), FRIT_I32), rs) == i);
  frit_uop *c16 = frit_cast(ctx, frit_cast(ctx, u, FRIT_I64), FRIT_U16); /* wrong dtypes */
  CHECK(frit_rewrite(ctx, c16, rs) == c16);
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_XOR, b, ci(FRIT_BOOL, 1)), rs) == frit_unary(ctx, FRIT_OP_NOT, b));
  frit_uop *c8 = val(FRIT_I8, "c8");
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_ADD, ci(FRIT_I8, 5), c8), rs) == c8);
  frit_uop *n8 = bin(FRIT_OP_ADD, c8, c8); /* not a const */
  CHECK(frit_rewrite(ctx, n8, rs) == n8);
  frit_uop *n16 = bin(FRIT_OP_ADD, ci(FRIT_I16, 5), val(FRIT_I16, "s")); /* not i8 */
  CHECK(frit_rewrite(ctx, n16, rs) == n16);
}

static void test_callbacks_guards_alternatives(void) {
  frit_ruleset *rs = rules("(add x y) -> @never\n"
                           "(add|mul a:const b:const) -> @fold\n"
                           "(sub a:const b:const) -> @sum2(a, b) if positive(a, b)\n"
                           "(idiv x x) -> 1 if nonzero(x)\n"
                           "(mod x y:const) -> x if !nonzero(y)\n"
                           "(add x 0) -> x\n",
                           fns, NFNS);
  if (!rs) return;
  frit_dtype dt = FRIT_I64;
  frit_uop *x = val(dt, "x");
  /* ((3 + 4) * 5) + x: folds bottom-up; never is tried first and declines every time */
  never_calls = 0;
  frit_uop *e = bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, bin(FRIT_OP_ADD, ci(dt, 3), ci(dt, 4)), ci(dt, 5)), x);
  CHECK(frit_rewrite(ctx, e, rs) == bin(FRIT_OP_ADD, ci(dt, 35), x));
  CHECK(never_calls >= 2);
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_MUL, ci(dt, -6), ci(dt, 7)), rs) == ci(dt, -42));
  /* the guard holds: 2 and 9 positive, sum2 computes a + b (not a - b: it is just a callback) */
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_SUB, ci(dt, 2), ci(dt, 9)), rs) == ci(dt, 11));
  frit_uop *neg = bin(FRIT_OP_SUB, ci(dt, -2), ci(dt, 9));
  CHECK(frit_rewrite(ctx, neg, rs) == neg);
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_IDIV, ci(dt, 3), ci(dt, 3)), rs) == ci(dt, 1));
  frit_uop *d0 = bin(FRIT_OP_IDIV, ci(dt, 0), ci(dt, 0));
  CHECK(frit_rewrite(ctx, d0, rs) == d0);
  frit_uop *dx = bin(FRIT_OP_IDIV, x, x); /* nonzero(x) does not hold for a variable */
  CHECK(frit_rewrite(ctx, dx, rs) == dx);
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_MOD, x, ci(dt, 0)), rs) == x);
  frit_uop *m3 = bin(FRIT_OP_MOD, x, ci(dt, 3));
  CHECK(frit_rewrite(ctx, m3, rs) == m3);
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_ADD, x, ci(dt, 0)), rs) == x);

  /* a callback that fails with an error aborts the rewrite */
  frit_ruleset *bad = rules("(neg x) -> @broken\n", fns, NFNS);
  if (bad) {
    CHECK(frit_rewrite(ctx, frit_unary(ctx, FRIT_OP_NEG, x), bad) == NULL);
    CHECK(strstr(frit_error(ctx), "line 1") != NULL);
    frit_clear_error(ctx);
  }
  /* a callback may itself rewrite with the same rule set */
  frit_ruleset *nr = rules("(add x 0) -> x\n(neg (neg x)) -> @nested(x)\n", fns, NFNS);
  if (nr) {
    nested_rs = nr;
    frit_uop *nn = frit_unary(ctx, FRIT_OP_NEG, frit_unary(ctx, FRIT_OP_NEG, bin(FRIT_OP_ADD, x, ci(dt, 0))));
    CHECK(frit_rewrite(ctx, bin(FRIT_OP_MUL, nn, nn), nr) == bin(FRIT_OP_MUL, x, x));
  }
}

static void test_backtracking(void) {
  frit_ruleset *rs = rules("(sub (add x y) y) -> x\n"
                           "(add (mul a b) a) -> (mul a (add b 1))\n"
                           "(max x:const _) -> x\n"
                           "(group x ...) -> x\n",
                           NULL, 0);
  if (!rs) return;
  frit_uop *a = val(FRIT_I64, "a"), *b = val(FRIT_I64, "b"), *c = val(FRIT_I64, "c");
  /* the first order binds x=a, y=b and fails on the outer y; the swap must unbind them */
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_SUB, bin(FRIT_OP_ADD, a, b), a), rs) == b);
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_SUB, bin(FRIT_OP_ADD, a, b), b), rs) == a);
  frit_uop *no = bin(FRIT_OP_SUB, bin(FRIT_OP_ADD, a, b), c);
  CHECK(frit_rewrite(ctx, no, rs) == no);
  /* the inner commutative order is retried when the later sibling fails */
  frit_uop *want = bin(FRIT_OP_MUL, b, bin(FRIT_OP_ADD, c, ci(FRIT_I64, 1)));
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, b, c), b), rs) == want);
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_ADD, b, bin(FRIT_OP_MUL, c, b)), rs) ==
        bin(FRIT_OP_MUL, b, bin(FRIT_OP_ADD, c, ci(FRIT_I64, 1))));
  /* '_' matches anything without binding */
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_MAX, a, ci(FRIT_I64, 4)), rs) == ci(FRIT_I64, 4));
  /* '...' takes any further sources, but the written ones must be there */
  frit_uop *g3[3] = {a, b, c};
  CHECK(frit_rewrite(ctx, frit_uop_new(ctx, FRIT_OP_GROUP, FRIT_VOID, g3, 3, NULL), rs) == a);
  CHECK(frit_rewrite(ctx, frit_uop_new(ctx, FRIT_OP_GROUP, FRIT_VOID, g3, 1, NULL), rs) == a);
  frit_uop *g0 = frit_uop_new(ctx, FRIT_OP_GROUP, FRIT_VOID, NULL, 0, NULL);
  CHECK(frit_rewrite(ctx, g0, rs) == g0);
}

/* Rules whose C code sees the root, on a node whose sources were rewritten (so it is rebuilt). */
static void test_root_visible(void) {
  frit_ruleset *rs = rules("q:u16 -> @rootcheck(q)\n(mul x 1) -> x\n(add x y) -> y if rootpos(x)\n"
                           "z:i8:const -> 1\n", fns, NFNS);
  if (!rs) return;
  frit_uop *a = val(FRIT_U16, "a"), *b = val(FRIT_U16, "b");
  rootcheck_bad = rootcheck_calls = 0;
  frit_uop *e = bin(FRIT_OP_MAX, bin(FRIT_OP_MUL, a, ci(FRIT_U16, 1)), b);
  CHECK(frit_rewrite(ctx, e, rs) == bin(FRIT_OP_MAX, a, b));
  CHECK(rootcheck_calls >= 3);
  /* the guard sees add(a, 7) rebuilt from add(a*1, 7) */
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, a, ci(FRIT_U16, 1)), ci(FRIT_U16, 7)), rs) ==
        ci(FRIT_U16, 7));
  CHECK_EQ_INT(rootcheck_bad, 0);
  /* a root that is a bare variable: every i8 CONST becomes 1, then add(x, 1) keeps 1 */
  frit_uop *c8 = val(FRIT_I8, "c8");
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_ADD, c8, ci(FRIT_I8, 5)), rs) == ci(FRIT_I8, 1));
}

static void test_result_dtypes(void) {
  frit_ruleset *rs = rules("(neg x:float) -> (mul x -1)\n"
                           "(cast x:bool):i32 -> (where x 1 0)\n"
                           "(recip x) -> (fdiv 1 x)\n"
                           "(abs x:u8) -> (cast (add (cast x):i32 3)):u8\n"
                           "(exp2 x) -> (where true x 2)\n"
                           "(cmpne x:int 7) -> (cmpne (add 3 4) (mul x 1))\n",
                           NULL, 0);
  if (!rs) return;
  frit_uop *f = val(FRIT_F32, "f"), *b = val(FRIT_BOOL, "b"), *u = val(FRIT_U8, "u");
  CHECK(frit_rewrite(ctx, frit_unary(ctx, FRIT_OP_NEG, f), rs) == bin(FRIT_OP_MUL, f, cf(FRIT_F32, -1)));
  frit_uop *fv = vec4(f);
  frit_dtype v4 = frit_dtype_vec(FRIT_F32, 4);
  CHECK(frit_rewrite(ctx, frit_unary(ctx, FRIT_OP_NEG, fv), rs) == bin(FRIT_OP_MUL, fv, cf(v4, -1)));
  CHECK(frit_rewrite(ctx, frit_cast(ctx, b, FRIT_I32), rs) ==
        frit_ternary(ctx, FRIT_OP_WHERE, b, ci(FRIT_I32, 1), ci(FRIT_I32, 0)));
  frit_uop *h = val(FRIT_F16, "h");
  CHECK(frit_rewrite(ctx, frit_unary(ctx, FRIT_OP_RECIP, h), rs) == bin(FRIT_OP_FDIV, cf(FRIT_F16, 1), h));
  CHECK(frit_rewrite(ctx, frit_unary(ctx, FRIT_OP_ABS, u), rs) ==
        frit_cast(ctx, bin(FRIT_OP_ADD, frit_cast(ctx, u, FRIT_I32), ci(FRIT_I32, 3)), FRIT_U8));
  CHECK(frit_rewrite(ctx, frit_unary(ctx, FRIT_OP_EXP2, f), rs) ==
        frit_ternary(ctx, FRIT_OP_WHERE, ci(FRIT_BOOL, 1), f, cf(FRIT_F32, 2)));
  frit_uop *fv2 = frit_rewrite(ctx, frit_unary(ctx, FRIT_OP_EXP2, fv), rs);
  frit_dtype b4 = frit_dtype_vec(FRIT_BOOL, 4);
  CHECK(fv2 == frit_ternary(ctx, FRIT_OP_WHERE, ci(b4, 1), fv, cf(v4, 2)));
  /* an all-literal template takes its dtype from a sibling template built before it */
  frit_uop *s16 = val(FRIT_I16, "s16");
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_CMPNE, s16, ci(FRIT_I16, 7)), rs) ==
        bin(FRIT_OP_CMPNE, bin(FRIT_OP_ADD, ci(FRIT_I16, 3), ci(FRIT_I16, 4)), bin(FRIT_OP_MUL, s16, ci(FRIT_I16, 1))));
}

static void test_fixed_point_and_memo(void) {
  frit_ruleset *rs = rules("(mul x 2) -> (add x x)\n"
                           "(add x x) -> (shl x 1)\n"
                           "(sub x y) -> (add x (neg y))\n"
                           "(neg (neg x)) -> x\n"
                           "(add x 0) -> x\n",
                           NULL, 0);
  if (!rs) return;
  frit_uop *a = val(FRIT_I32, "a"), *b = val(FRIT_I32, "b");
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_MUL, a, ci(FRIT_I32, 2)), rs) == bin(FRIT_OP_SHL, a, ci(FRIT_I32, 1)));
  /* the result's new subterm neg(neg b) must itself be rewritten */
  CHECK(frit_rewrite(ctx, bin(FRIT_OP_SUB, a, frit_unary(ctx, FRIT_OP_NEG, b)), rs) == bin(FRIT_OP_ADD, a, b));
  /* a shared subterm is rewritten once: the memo keeps the sharing */
  uint64_t before = frit_ruleset_fired(rs, 4);
  frit_uop *t = bin(FRIT_OP_ADD, b, ci(FRIT_I32, 0));
  frit_uop *shared = bin(FRIT_OP_MUL, bin(FRIT_OP_MAX, t, a), bin(FRIT_OP_MIN, t, a));
  CHECK(frit_rewrite(ctx, shared, rs) == bin(FRIT_OP_MUL, bin(FRIT_OP_MAX, b, a), bin(FRIT_OP_MIN, b, a)));
  CHECK_EQ_INT(frit_ruleset_fired(rs, 4) - before, 1);
  /* afterwards nothing matches: rewriting the result again is the identity */
  frit_uop *r = frit_rewrite(ctx, bin(FRIT_OP_SUB, bin(FRIT_OP_MUL, a, ci(FRIT_I32, 2)), b), rs);
  CHECK(r != NULL && frit_rewrite(ctx, r, rs) == r);
  CHECK(r == bin(FRIT_OP_ADD, bin(FRIT_OP_SHL, a, ci(FRIT_I32, 1)), frit_unary(ctx, FRIT_OP_NEG, b)));
}

static void test_nontermination(void) {
  frit_ruleset *rs = rules("(add x y) -> (add y x)\n", NULL, 0);
  frit_uop *a = val(FRIT_I64, "a"), *b = val(FRIT_I64, "b");
  if (rs) {
    CHECK(frit_rewrite(ctx, bin(FRIT_OP_ADD, a, b), rs) == NULL);
    CHECK_EQ_INT(frit_last_status(ctx), FRIT_ERR_INVALID);
    CHECK(strstr(frit_error(ctx), "(add x y) -> (add y x)") != NULL);
    frit_clear_error(ctx);
    /* the context and the rule set stay usable */
    frit_uop *m = bin(FRIT_OP_MUL, a, b);
    CHECK(frit_rewrite(ctx, m, rs) == m);
  }
  rs = rules("(neg x) -> (neg (neg x))\n", NULL, 0);
  if (rs) {
    CHECK(frit_rewrite(ctx, frit_unary(ctx, FRIT_OP_NEG, a), rs) == NULL);
    CHECK(strstr(frit_error(ctx), "line 1") != NULL);
    frit_clear_error(ctx);
  }
  /* growth that never revisits a node stops at the firing budget */
  rs = rules("(exp2 x) -> (exp2 (add x 1))\n", NULL, 0);
  if (rs) {
    CHECK(frit_rewrite(ctx, frit_unary(ctx, FRIT_OP_EXP2, val(FRIT_F32, "g")), rs) == NULL);
    CHECK(strstr(frit_error(ctx), "does not terminate") != NULL);
    frit_clear_error(ctx);
  }
}

static void expect_parse_error(const char *text, const char *where, const char *what) {
  frit_clear_error(ctx);
  frit_ruleset *rs = frit_ruleset_parse(ctx, "bad", text, fns, NFNS);
  CHECK(rs == NULL);
  CHECK_EQ_INT(frit_last_status(ctx), FRIT_ERR_PARSE);
  const char *msg = frit_error(ctx);
  if (strstr(msg, where) != msg || !strstr(msg, what)) {
    fprintf(stderr, "parse error message \"%s\" lacks \"%s\" / \"%s\"\n", msg, where, what);
    CHECK(0);
  }
}

static void test_parse_errors(void) {
  expect_parse_error("(add x 0) -> x\n\n(frob x) -> x\n", "rules bad:3:", "unknown op 'frob'");
  expect_parse_error("# c\n(add x y) -> @nope\n", "rules bad:2:", "unknown function 'nope'");
  expect_parse_error("(add x y) -> z\n", "rules bad:1:", "unbound variable 'z'");
  expect_parse_error("(add x y) -> x if positive(q)\n", "rules bad:1:", "unbound variable 'q'");
  expect_parse_error("(add x:flot y) -> x\n", "rules bad:1:", "bad class 'flot'");
  expect_parse_error("(neg x 0) -> x\n", "rules bad:1:", "arity mismatch");
  expect_parse_error("(add x 0) -> (neg x x)\n", "rules bad:1:", "arity mismatch");
  expect_parse_error("(add|neg x y) -> x\n", "rules bad:1:", "arity mismatch");
  expect_parse_error("(add x 0) x\n", "rules bad:1:", "expected '->'");
  expect_parse_error("(add x 0 -> x\n", "rules bad:1:", "");
  expect_parse_error("(neg x) -> (cast x)\n", "rules bad:1:", "needs ':dtype'");
  expect_parse_error("(add x y) -> @positive\n", "rules bad:1:", "predicate");
  expect_parse_error("(add x y) -> x if fold(x)\n", "rules bad:1:", "build function");
  expect_parse_error("(add x y) -> x junk\n", "rules bad:1:", "junk");
  expect_parse_error("(add x y) -> (add|mul x y)\n", "rules bad:1:", "alternatives");
  expect_parse_error("(add x y) -> x if !\n", "rules bad:1:", "guard");
  frit_clear_error(ctx);
  /* comments, blank lines and whitespace are fine; an empty set is valid */
  frit_ruleset *rs = frit_ruleset_parse(ctx, "ok", "  # only a comment\n\n\t\n", NULL, 0);
  CHECK(rs != NULL && frit_ruleset_size(rs) == 0);
  frit_uop *a = val(FRIT_I64, "a");
  if (rs) CHECK(frit_rewrite(ctx, a, rs) == a);
  rs = frit_ruleset_parse(ctx, "ok", "(ADD x 0)->x # upper case and no spaces", NULL, 0);
  CHECK(rs != NULL && rs && strcmp(frit_ruleset_rule_text(rs, 0), "(ADD x 0)->x") == 0);
}

/* x_{k+1} = (x_k * 1) + c over a chain of n links: deep enough to break any recursion. */
static void test_deep_chain(void) {
  frit_ruleset *rs = rules("(mul x 1) -> x\n", NULL, 0);
  if (!rs) return;
  const int n = 1000000;
  frit_uop *c = val(FRIT_I64, "c"), *one = ci(FRIT_I64, 1);
  frit_uop *x = val(FRIT_I64, "x0"), *y = x;
  for (int k = 0; k < n; k++) {
    x = bin(FRIT_OP_ADD, bin(FRIT_OP_MUL, x, one), c);
    y = bin(FRIT_OP_ADD, y, c); /* the expected chain, built independently */
  }
  uint64_t before = frit_ruleset_fired(rs, 0);
  CHECK(frit_rewrite(ctx, x, rs) == y);
  CHECK_EQ_INT(frit_ruleset_fired(rs, 0) - before, n);
  CHECK(frit_rewrite(ctx, y, rs) == y);
}

int main(void) {
  ctx = frit_ctx_new();
  CHECK(ctx != NULL);
  if (!ctx) CHECK_DONE();
  test_identity_and_commutative();
  test_same_name();
  test_literals_across_dtypes();
  test_classes();
  test_callbacks_guards_alternatives();
  test_backtracking();
  test_result_dtypes();
  test_root_visible();
  test_fixed_point_and_memo();
  test_nontermination();
  test_parse_errors();
  test_deep_chain();
  frit_ctx_free(ctx);
  CHECK_DONE();
}
