/* Tests of the symbolic simplifier: expected results built independently and compared by node
 * identity, brute-force semantic equivalence of random expressions before and after (with
 * frit_eval_alu as the oracle), and a check that every simplifier rule fired at least once. */
#include "check.h"
#include "frit.h"
#include "sym_eval.h"

static frit_ctx *ctx; /* the structural tests and the rule-coverage check share this context */

static frit_uop *ci(int64_t v) { return frit_const_int(ctx, FRIT_I64, v); }
static frit_uop *ct(frit_dtype dt, int64_t v) { return frit_const_int(ctx, dt, v); }
static frit_uop *cf(frit_dtype dt, double v) { return frit_const_float(ctx, dt, v); }
static frit_uop *bin(frit_op op, frit_uop *a, frit_uop *b) { return frit_binary(ctx, op, a, b); }
static frit_uop *un(frit_op op, frit_uop *a) { return frit_unary(ctx, op, a); }
static frit_uop *add(frit_uop *a, frit_uop *b) { return bin(FRIT_OP_ADD, a, b); }
static frit_uop *sub(frit_uop *a, frit_uop *b) { return bin(FRIT_OP_SUB, a, b); }
static frit_uop *mul(frit_uop *a, frit_uop *b) { return bin(FRIT_OP_MUL, a, b); }
static frit_uop *dv(frit_uop *a, frit_uop *b) { return bin(FRIT_OP_IDIV, a, b); }
static frit_uop *md(frit_uop *a, frit_uop *b) { return bin(FRIT_OP_MOD, a, b); }
static frit_uop *lt(frit_uop *a, frit_uop *b) { return bin(FRIT_OP_CMPLT, a, b); }
static frit_uop *where(frit_uop *c, frit_uop *a, frit_uop *b) { return frit_ternary(ctx, FRIT_OP_WHERE, c, a, b); }
static frit_uop *simp(frit_uop *u) {
  frit_uop *r = frit_simplify(ctx, u);
  if (!r) fprintf(stderr, "simplify failed: %s\n", frit_error(ctx));
  return r;
}
static frit_uop *opaque(frit_dtype dt, const char *name) { return frit_cast(ctx, frit_var(ctx, name, -1000, 1000), dt); }

#define CHECK_SIMP(expr, expected)                                                           \
  do {                                                                                       \
    frit_uop *got_ = simp(expr), *exp_ = (expected);                                         \
    CHECK(got_ == exp_);                                                                     \
    if (got_ != exp_ && got_ && exp_)                                                        \
      fprintf(stderr, "  got:\n%s  expected:\n%s", frit_ir_to_string(ctx, got_),            \
              frit_ir_to_string(ctx, exp_));                                                 \
  } while (0)

/* ---------- structural tests ---------- */

static void test_fold(void) {
  CHECK_SIMP(add(ci(3), ci(4)), ci(7));
  CHECK_SIMP(mul(ci(-3), ci(5)), ci(-15));
  CHECK_SIMP(dv(ci(-7), ci(2)), ci(-3));   /* truncation */
  CHECK_SIMP(md(ci(-7), ci(2)), ci(-1));   /* sign of the dividend */
  CHECK_SIMP(dv(ci(7), ci(0)), ci(0));     /* x/0 == 0 */
  CHECK_SIMP(md(ci(7), ci(0)), ci(7));     /* x%0 == x */
  CHECK_SIMP(add(ct(FRIT_I8, 127), ct(FRIT_I8, 1)), ct(FRIT_I8, -128));
  CHECK_SIMP(un(FRIT_OP_NEG, ct(FRIT_I32, 5)), ct(FRIT_I32, -5));
  CHECK_SIMP(un(FRIT_OP_SQRT, cf(FRIT_F32, 16.0)), cf(FRIT_F32, 4.0));
  CHECK_SIMP(bin(FRIT_OP_CMPLT, ci(3), ci(4)), ct(FRIT_BOOL, 1));
  CHECK_SIMP(bin(FRIT_OP_CMPEQ, cf(FRIT_F32, NAN), cf(FRIT_F32, NAN)), ct(FRIT_BOOL, 0));
  CHECK_SIMP(frit_ternary(ctx, FRIT_OP_MULACC, ci(2), ci(3), ci(4)), ci(10));
  CHECK_SIMP(frit_ternary(ctx, FRIT_OP_WHERE, ct(FRIT_BOOL, 1), cf(FRIT_F32, 1.5), cf(FRIT_F32, 2.5)),
             cf(FRIT_F32, 1.5));
  CHECK_SIMP(frit_cast(ctx, cf(FRIT_F32, -2.75), FRIT_I32), ct(FRIT_I32, -2));
  CHECK_SIMP(frit_cast(ctx, ci(300), FRIT_U8), ct(FRIT_U8, 44));
  frit_scalar one = {.f = 1.0};
  frit_scalar bits = {.u = 0x3f800000u};
  CHECK_SIMP(frit_uop_new(ctx, FRIT_OP_BITCAST, FRIT_U32, (frit_uop *[]){frit_const(ctx, FRIT_F32, one)}, 1, NULL),
             frit_const(ctx, FRIT_U32, bits));
  /* vector broadcasts */
  frit_dtype v4 = frit_dtype_vec(FRIT_I32, 4);
  CHECK_SIMP(add(ct(v4, 2), ct(v4, 5)), ct(v4, 7));
}

static void test_identities(void) {
  frit_uop *x = frit_var(ctx, "x", -50, 50), *y = frit_var(ctx, "y", -50, 50);
  frit_uop *f = opaque(FRIT_F32, "f"), *g = opaque(FRIT_F32, "g");
  frit_uop *b = bin(FRIT_OP_CMPLT, x, y);
  frit_uop *u = opaque(FRIT_U32, "u");
  CHECK_SIMP(add(x, ci(0)), x);
  CHECK_SIMP(add(ci(0), x), x);
  CHECK_SIMP(sub(x, ci(0)), x);
  CHECK_SIMP(sub(x, x), ci(0));
  CHECK_SIMP(sub(ct(FRIT_I32, 0), opaque(FRIT_I32, "i")), un(FRIT_OP_NEG, opaque(FRIT_I32, "i")));
  CHECK_SIMP(mul(x, ci(1)), x);
  CHECK_SIMP(mul(x, ci(0)), ci(0));
  CHECK_SIMP(mul(f, cf(FRIT_F32, 1.0)), f);
  /* float x*0, x+0, x-x are not identities (NaN, inf, -0.0) */
  CHECK_SIMP(mul(f, cf(FRIT_F32, 0.0)), mul(f, cf(FRIT_F32, 0.0)));
  CHECK_SIMP(add(f, cf(FRIT_F32, 0.0)), add(f, cf(FRIT_F32, 0.0)));
  CHECK_SIMP(sub(f, f), sub(f, f));
  CHECK_SIMP(add(f, un(FRIT_OP_NEG, g)), sub(f, g));
  CHECK_SIMP(bin(FRIT_OP_FDIV, f, cf(FRIT_F32, 1.0)), f);
  CHECK_SIMP(un(FRIT_OP_NEG, un(FRIT_OP_NEG, f)), f);
  CHECK_SIMP(mul(opaque(FRIT_I16, "s"), ct(FRIT_I16, -1)), un(FRIT_OP_NEG, opaque(FRIT_I16, "s")));
  CHECK_SIMP(dv(x, ci(1)), x);
  CHECK_SIMP(dv(x, ci(-1)), un(FRIT_OP_NEG, x));
  CHECK_SIMP(md(x, ci(1)), ci(0));
  CHECK_SIMP(md(x, ci(-1)), ci(0));
  CHECK_SIMP(md(x, x), ci(0));
  CHECK_SIMP(dv(ci(0), x), ci(0));
  CHECK_SIMP(md(ci(0), x), ci(0));
  frit_uop *pos = frit_var(ctx, "p", 1, 9), *nn = frit_var(ctx, "q", 0, 9);
  CHECK_SIMP(dv(pos, pos), ci(1));
  CHECK_SIMP(dv(nn, nn), dv(nn, nn)); /* 0/0 == 0, so not 1 */
  /* bitwise */
  CHECK_SIMP(un(FRIT_OP_NOT, un(FRIT_OP_NOT, u)), u);
  CHECK_SIMP(bin(FRIT_OP_AND, u, ct(FRIT_U32, 0)), ct(FRIT_U32, 0));
  CHECK_SIMP(bin(FRIT_OP_AND, u, u), u);
  CHECK_SIMP(bin(FRIT_OP_AND, u, ct(FRIT_U32, 0xffffffff)), u);
  CHECK_SIMP(bin(FRIT_OP_AND, u, un(FRIT_OP_NOT, u)), ct(FRIT_U32, 0));
  CHECK_SIMP(bin(FRIT_OP_OR, u, ct(FRIT_U32, 0)), u);
  CHECK_SIMP(bin(FRIT_OP_OR, u, u), u);
  CHECK_SIMP(bin(FRIT_OP_OR, u, ct(FRIT_U32, 0xffffffff)), ct(FRIT_U32, 0xffffffff));
  CHECK_SIMP(bin(FRIT_OP_XOR, u, ct(FRIT_U32, 0)), u);
  CHECK_SIMP(bin(FRIT_OP_XOR, u, u), ct(FRIT_U32, 0));
  CHECK_SIMP(bin(FRIT_OP_SHL, u, ct(FRIT_U32, 0)), u);
  CHECK_SIMP(bin(FRIT_OP_SHR, u, ct(FRIT_U32, 0)), u);
  CHECK_SIMP(bin(FRIT_OP_SHL, ct(FRIT_U32, 0), u), ct(FRIT_U32, 0));
  CHECK_SIMP(bin(FRIT_OP_SHR, ct(FRIT_U32, 0), u), ct(FRIT_U32, 0));
  CHECK_SIMP(bin(FRIT_OP_AND, bin(FRIT_OP_AND, u, ct(FRIT_U32, 12)), ct(FRIT_U32, 10)), bin(FRIT_OP_AND, u, ct(FRIT_U32, 8)));
  CHECK_SIMP(bin(FRIT_OP_OR, bin(FRIT_OP_OR, u, ct(FRIT_U32, 12)), ct(FRIT_U32, 10)), bin(FRIT_OP_OR, u, ct(FRIT_U32, 14)));
  CHECK_SIMP(bin(FRIT_OP_XOR, bin(FRIT_OP_XOR, u, ct(FRIT_U32, 12)), ct(FRIT_U32, 10)), bin(FRIT_OP_XOR, u, ct(FRIT_U32, 6)));
  /* bool logic */
  CHECK_SIMP(bin(FRIT_OP_AND, b, ct(FRIT_BOOL, 1)), b);
  CHECK_SIMP(bin(FRIT_OP_AND, b, ct(FRIT_BOOL, 0)), ct(FRIT_BOOL, 0));
  CHECK_SIMP(bin(FRIT_OP_OR, b, ct(FRIT_BOOL, 1)), ct(FRIT_BOOL, 1));
  frit_uop *bb = frit_cast(ctx, x, FRIT_BOOL); /* opaque bool: NOT stays */
  CHECK_SIMP(bin(FRIT_OP_OR, bb, un(FRIT_OP_NOT, bb)), ct(FRIT_BOOL, 1));
  CHECK_SIMP(bin(FRIT_OP_AND, un(FRIT_OP_NOT, bb), bb), ct(FRIT_BOOL, 0));
  CHECK_SIMP(bin(FRIT_OP_XOR, b, ct(FRIT_BOOL, 1)), bin(FRIT_OP_CMPLE, y, x));
  /* max/min */
  CHECK_SIMP(bin(FRIT_OP_MAX, f, f), f);
  CHECK_SIMP(bin(FRIT_OP_MIN, f, f), f);
  CHECK_SIMP(bin(FRIT_OP_MAX, bin(FRIT_OP_MAX, x, ci(3)), ci(7)), bin(FRIT_OP_MAX, x, ci(7)));
  CHECK_SIMP(bin(FRIT_OP_MIN, bin(FRIT_OP_MIN, x, ci(3)), ci(7)), bin(FRIT_OP_MIN, x, ci(3)));
  frit_uop *hi = frit_var(ctx, "h", 60, 90);
  CHECK_SIMP(bin(FRIT_OP_MAX, x, hi), hi);
  CHECK_SIMP(bin(FRIT_OP_MIN, hi, x), x);
  /* where */
  CHECK_SIMP(where(ct(FRIT_BOOL, 1), f, g), f);
  CHECK_SIMP(where(ct(FRIT_BOOL, 0), f, g), g);
  CHECK_SIMP(where(b, f, f), f);
  CHECK_SIMP(where(un(FRIT_OP_NOT, bb), f, g), where(bb, g, f));
  CHECK_SIMP(where(b, ct(FRIT_BOOL, 1), ct(FRIT_BOOL, 0)), b);
  CHECK_SIMP(where(b, ct(FRIT_BOOL, 0), ct(FRIT_BOOL, 1)), bin(FRIT_OP_CMPLE, y, x));
  CHECK_SIMP(where(bin(FRIT_OP_CMPLT, x, ci(100)), f, g), f); /* decided by range */
  /* casts */
  frit_uop *i32 = frit_cast(ctx, frit_var(ctx, "wide", -((int64_t)1 << 40), (int64_t)1 << 40), FRIT_I32);
  CHECK_SIMP(frit_cast(ctx, x, FRIT_I64), x);
  CHECK_SIMP(frit_cast(ctx, frit_cast(ctx, i32, FRIT_I64), FRIT_I32), i32);
  CHECK_SIMP(frit_cast(ctx, frit_cast(ctx, i32, FRIT_I64), FRIT_I16), frit_cast(ctx, i32, FRIT_I16));
  CHECK_SIMP(frit_cast(ctx, frit_cast(ctx, b, FRIT_I32), FRIT_BOOL), b);
  CHECK_SIMP(frit_cast(ctx, frit_cast(ctx, x, FRIT_I8), FRIT_I64), x); /* x in [-50, 50] fits i8 */
  CHECK_SIMP(frit_cast(ctx, add(pos, ci(0)), FRIT_BOOL), ct(FRIT_BOOL, 1));
  /* comparisons */
  CHECK_SIMP(lt(f, f), ct(FRIT_BOOL, 0));
  CHECK_SIMP(bin(FRIT_OP_CMPLE, x, x), ct(FRIT_BOOL, 1));
  CHECK_SIMP(bin(FRIT_OP_CMPEQ, x, x), ct(FRIT_BOOL, 1));
  CHECK_SIMP(bin(FRIT_OP_CMPNE, x, x), ct(FRIT_BOOL, 0));
  CHECK_SIMP(bin(FRIT_OP_CMPEQ, f, f), bin(FRIT_OP_CMPEQ, f, f)); /* NaN */
  CHECK_SIMP(un(FRIT_OP_NOT, lt(x, y)), bin(FRIT_OP_CMPLE, y, x));
  CHECK_SIMP(un(FRIT_OP_NOT, bin(FRIT_OP_CMPLE, x, y)), lt(y, x));
  CHECK_SIMP(un(FRIT_OP_NOT, bin(FRIT_OP_CMPEQ, f, g)), bin(FRIT_OP_CMPNE, f, g));
  CHECK_SIMP(un(FRIT_OP_NOT, bin(FRIT_OP_CMPNE, f, g)), bin(FRIT_OP_CMPEQ, f, g));
  CHECK_SIMP(un(FRIT_OP_NOT, lt(f, g)), un(FRIT_OP_NOT, lt(f, g))); /* NaN: !(a<b) is not b<=a */
  CHECK_SIMP(lt(x, ci(51)), ct(FRIT_BOOL, 1));
  CHECK_SIMP(lt(x, ci(-50)), ct(FRIT_BOOL, 0));
}

static void test_linear(void) {
  frit_uop *x = frit_var(ctx, "lx", -100, 100), *y = frit_var(ctx, "ly", -100, 100);
  frit_uop *z = frit_var(ctx, "lz", -100, 100);
  CHECK_SIMP(add(ci(3), x), add(x, ci(3)));
  CHECK_SIMP(add(add(x, ci(1)), ci(2)), add(x, ci(3)));
  CHECK_SIMP(mul(mul(x, ci(2)), ci(3)), mul(x, ci(6)));
  CHECK_SIMP(add(mul(x, ci(2)), mul(x, ci(3))), mul(x, ci(5)));
  CHECK_SIMP(sub(add(x, y), x), y);
  CHECK_SIMP(add(add(z, y), x), add(add(x, y), z));
  CHECK_SIMP(mul(add(x, ci(1)), ci(4)), add(mul(x, ci(4)), ci(4)));
  CHECK_SIMP(sub(x, mul(y, ci(2))), sub(x, mul(y, ci(2))));
  CHECK_SIMP(add(un(FRIT_OP_NEG, x), y), add(un(FRIT_OP_NEG, x), y));
  CHECK_SIMP(add(mul(x, ci(-3)), y), add(mul(x, ci(-3)), y));
  CHECK_SIMP(un(FRIT_OP_NEG, add(x, ci(5))), sub(un(FRIT_OP_NEG, x), ci(5)));
  CHECK_SIMP(sub(add(x, ci(2)), ci(9)), sub(x, ci(7)));
  /* unsigned: the ring still cancels */
  frit_uop *u = opaque(FRIT_U32, "lu");
  CHECK_SIMP(sub(add(u, ct(FRIT_U32, 5)), ct(FRIT_U32, 5)), u);
}

static void test_divmod(void) {
  frit_uop *x = frit_var(ctx, "dx", 0, 15), *y = frit_var(ctx, "dy", 0, 3), *w = frit_var(ctx, "dw", 0, 7);
  frit_uop *s = frit_var(ctx, "ds", -100, 100), *t = frit_var(ctx, "dt", -100, 100);
  CHECK_SIMP(dv(add(mul(x, ci(4)), y), ci(4)), x);
  CHECK_SIMP(md(add(mul(x, ci(4)), y), ci(4)), y);
  CHECK_SIMP(md(add(mul(x, ci(4)), w), ci(4)), md(w, ci(4)));
  CHECK_SIMP(dv(add(mul(x, ci(4)), w), ci(4)), add(x, dv(w, ci(4))));
  CHECK_SIMP(add(dv(add(mul(x, ci(4)), y), ci(4)), md(add(mul(x, ci(4)), y), ci(4))), add(x, y));
  CHECK_SIMP(dv(add(mul(s, ci(6)), mul(t, ci(4))), ci(2)), add(mul(s, ci(3)), mul(t, ci(2))));
  CHECK_SIMP(dv(add(mul(s, ci(6)), ci(4)), ci(4)), dv(add(mul(s, ci(3)), ci(2)), ci(2)));
  CHECK_SIMP(md(mul(s, ci(6)), ci(4)), mul(md(mul(s, ci(3)), ci(2)), ci(2)));
  CHECK_SIMP(md(mul(s, ci(6)), ci(3)), ci(0));
  CHECK_SIMP(dv(add(x, ci(9)), ci(4)), add(dv(add(x, ci(1)), ci(4)), ci(2)));
  CHECK_SIMP(dv(y, ci(4)), ci(0));
  CHECK_SIMP(md(y, ci(4)), y);
  CHECK_SIMP(md(add(y, ci(8)), ci(4)), y);
  CHECK_SIMP(dv(add(y, ci(8)), ci(4)), ci(2));
  /* coefficients above the divisor on non-negative atoms split: conv's window index
   * (x + 59*y) % 58 with x in [0, 55], y in [0, 2] is x + y, and (x + 59*y) / 58 is y */
  frit_uop *cx = frit_var(ctx, "dcx", 0, 55), *cy = frit_var(ctx, "dcy", 0, 2);
  CHECK_SIMP(md(add(cx, mul(cy, ci(59))), ci(58)), add(cx, cy));
  CHECK_SIMP(dv(add(cx, mul(cy, ci(59))), ci(58)), cy);
  /* (5x + y) / 4 = x + (x + y) / 4 for x, y >= 0; (5x + y) % 4 = (x + y) % 4 */
  CHECK_SIMP(dv(add(mul(x, ci(5)), y), ci(4)), add(x, dv(add(x, y), ci(4))));
  CHECK_SIMP(md(add(mul(x, ci(5)), y), ci(4)), md(add(x, y), ci(4)));
  /* a common factor c of the divisor and some terms, the rest in [0, c): x = c*S + R, x/(c*e) =
   * S/e. A buffer realized as (OH, KH, OW, KW) (max-pool's gradient) read at (h, w) of its
   * (28, 28) view: (28h + w)/56 = h/2, and the whole index recombines to 28h + w */
  frit_uop *ph = frit_var(ctx, "dph", 0, 27), *pw = frit_var(ctx, "dpw", 0, 27);
  frit_uop *pflat = add(mul(ph, ci(28)), pw);
  CHECK_SIMP(dv(pflat, ci(56)), dv(ph, ci(2)));
  CHECK_SIMP(md(pflat, ci(56)), simp(add(mul(md(ph, ci(2)), ci(28)), pw)));
  CHECK_SIMP(add(add(mul(dv(pflat, ci(56)), ci(56)), mul(md(ph, ci(2)), ci(28))), pw), pflat);
  /* the constant splits too: (28h + w + 30)/56 = (h + 1)/2 for w in [0, 20] */
  frit_uop *pw20 = frit_var(ctx, "dpw20", 0, 20);
  CHECK_SIMP(dv(add(add(mul(ph, ci(28)), pw20), ci(30)), ci(56)), dv(add(ph, ci(1)), ci(2)));
  /* not when the rest can reach c (w = 28 is the next row) */
  frit_uop *pw28 = frit_var(ctx, "dpw28", 0, 28);
  CHECK(simp(dv(add(mul(ph, ci(28)), pw28), ci(56))) != dv(ph, ci(2)));
  /* a negative atom keeps its term whole: (5s + 500) % 4 is left to the other folds */
  CHECK_SIMP(md(add(mul(s, ci(5)), ci(500)), ci(4)), md(add(mul(s, ci(5)), ci(500)), ci(4)));
  /* negative numerators: the split works by symmetry */
  frit_uop *n = frit_var(ctx, "dn", -15, 0), *m = frit_var(ctx, "dm", -3, 0);
  CHECK_SIMP(dv(add(mul(n, ci(4)), m), ci(4)), n);
  CHECK_SIMP(md(add(mul(n, ci(4)), m), ci(4)), m);
  /* mixed signs: truncation differs from floor, so no split */
  CHECK_SIMP(dv(add(mul(s, ci(4)), y), ci(4)), dv(add(y, mul(s, ci(4))), ci(4))); /* canonical: by id */
  /* an index unflattened by div/mod and flattened again (a reshape merging the axes of a
   * realized buffer: conv's im2col patches) is the index; partial recombination gives a mod */
  frit_uop *kk = frit_var(ctx, "dk", 0, 199);
  frit_uop *unfl = add(add(mul(dv(kk, ci(25)), ci(25)), mul(md(dv(kk, ci(5)), ci(5)), ci(5))), md(kk, ci(5)));
  CHECK_SIMP(unfl, kk);
  CHECK_SIMP(add(mul(unfl, ci(3)), ci(7)), add(mul(kk, ci(3)), ci(7)));
  CHECK_SIMP(add(mul(md(dv(kk, ci(5)), ci(5)), ci(5)), md(kk, ci(5))), md(kk, ci(25)));
  CHECK_SIMP(add(mul(md(dv(kk, ci(5)), ci(5)), ci(3)), mul(dv(kk, ci(25)), ci(15))), mul(dv(kk, ci(5)), ci(3)));
  /* a matmul row m in [0, 8191] read from a realized (N, OH, OW, 16) buffer as (M, 16) */
  frit_uop *mrow = frit_var(ctx, "dmr", 0, 8191), *col = frit_var(ctx, "dcol", 0, 15);
  frit_uop *flat = add(mul(mrow, ci(16)), col);
  CHECK_SIMP(add(add(mul(md(dv(flat, ci(128)), ci(8)), ci(128)), mul(dv(flat, ci(1024)), ci(1024))), md(flat, ci(128))),
             add(mul(mrow, ci(16)), col));
  frit_uop *kmod = md(kk, ci(5)), *kdiv = dv(kk, ci(5)); /* the canonical sum orders atoms by id */
  CHECK_SIMP(add(mul(kdiv, ci(4)), kmod), add(kmod, mul(kdiv, ci(4))));
  /* a dividend of either sign: truncating division keeps x == (x/5)*5 + x%5 (a padded view's
   * index is below 0 where its gate holds the load); checked at every value below */
  frit_uop *smod = md(s, ci(5)), *sdiv = dv(s, ci(5));
  CHECK_SIMP(add(mul(sdiv, ci(5)), smod), s);
  CHECK_SIMP(add(md(s, ci(3)), mul(md(dv(s, ci(3)), ci(4)), ci(3))), md(s, ci(12)));
  CHECK_SIMP(add(md(dv(s, ci(3)), ci(4)), mul(dv(s, ci(12)), ci(4))), dv(s, ci(3)));
  for (int64_t v = -100; v <= 100; v++) { /* the identities, in C's truncating division */
    CHECK(v / 5 * 5 + v % 5 == v);
    CHECK(v % 3 + (v / 3) % 4 * 3 == v % 12);
    CHECK((v / 3) % 4 + v / 12 * 4 == v / 3);
  }
  /* a symbolic divisor (a flat index over a symbolic 2-D shape, a size cut to whole parts):
   * x == (x/n)*n + x%n and x - (x/n)*n == x%n for every n (x/0 == 0, x%0 == x), in any order
   * of the operands; checked at every value below */
  frit_uop *sn = frit_var(ctx, "dsn", -6, 6);
  CHECK_SIMP(add(md(s, sn), mul(dv(s, sn), sn)), s);
  CHECK_SIMP(add(mul(dv(s, sn), sn), md(s, sn)), s);
  CHECK_SIMP(add(md(s, sn), mul(sn, dv(s, sn))), s);
  CHECK_SIMP(add(mul(sn, dv(s, sn)), md(s, sn)), s);
  CHECK_SIMP(sub(s, mul(dv(s, sn), sn)), md(s, sn));
  CHECK_SIMP(sub(s, mul(sn, dv(s, sn))), md(s, sn));
  for (int64_t v = -100; v <= 100; v++)
    for (int64_t d = -6; d <= 6; d++) {
      int64_t q = d ? v / d : 0, r = d ? v % d : v;
      CHECK(q * d + r == v);
    }
  /* a select inside a select on the same condition takes that branch */
  frit_uop *wc = lt(x, y), *wa = opaque(FRIT_F32, "dwa"), *wb = opaque(FRIT_F32, "dwb"), *wd = opaque(FRIT_F32, "dwd");
  CHECK_SIMP(where(wc, where(wc, wa, wb), wd), where(wc, wa, wd));
  CHECK_SIMP(where(wc, wa, where(wc, wb, wd)), where(wc, wa, wd));
  /* nested */
  CHECK_SIMP(dv(dv(s, ci(3)), ci(4)), dv(s, ci(12)));
  CHECK_SIMP(md(md(s, ci(12)), ci(4)), md(s, ci(4)));
  CHECK_SIMP(dv(md(s, ci(12)), ci(4)), md(dv(s, ci(4)), ci(3)));
  /* negative divisors */
  CHECK_SIMP(dv(s, ci(-3)), un(FRIT_OP_NEG, dv(s, ci(3))));
  CHECK_SIMP(md(s, ci(-3)), md(s, ci(3)));
  /* wraparound blocks the folds: i8 (v*2)/2 is not v when v*2 wraps */
  frit_uop *v8 = frit_cast(ctx, frit_var(ctx, "d8", 0, 100), FRIT_I8);
  CHECK_SIMP(dv(mul(v8, ct(FRIT_I8, 2)), ct(FRIT_I8, 2)), dv(mul(v8, ct(FRIT_I8, 2)), ct(FRIT_I8, 2)));
  frit_uop *v8s = frit_cast(ctx, frit_var(ctx, "d8s", 0, 60), FRIT_I8);
  CHECK_SIMP(dv(mul(v8s, ct(FRIT_I8, 2)), ct(FRIT_I8, 2)), v8s);
}

static void test_compare(void) {
  frit_uop *x = frit_var(ctx, "cx", 0, 15), *y = frit_var(ctx, "cy", 0, 3), *s = frit_var(ctx, "cs", -20, 20);
  CHECK_SIMP(lt(add(mul(x, ci(4)), y), ci(8)), lt(x, ci(2)));
  CHECK_SIMP(lt(add(mul(x, ci(4)), y), ci(10)), lt(add(mul(x, ci(4)), y), ci(10))); /* y decides at x == 2 */
  CHECK_SIMP(lt(add(mul(x, ci(4)), ci(1)), ci(10)), lt(x, ci(3)));
  CHECK_SIMP(lt(add(mul(s, ci(2)), ci(4)), ci(9)), lt(s, ci(3)));
  CHECK_SIMP(lt(mul(s, ci(3)), ci(-4)), lt(s, ci(-1)));
  CHECK_SIMP(bin(FRIT_OP_CMPLE, s, ci(4)), lt(s, ci(5)));
  CHECK_SIMP(lt(add(s, ci(3)), ci(5)), lt(s, ci(2)));
  CHECK_SIMP(bin(FRIT_OP_CMPEQ, add(s, ci(3)), ci(5)), bin(FRIT_OP_CMPEQ, s, ci(2)));
  CHECK_SIMP(bin(FRIT_OP_CMPNE, mul(s, ci(4)), ci(8)), bin(FRIT_OP_CMPNE, s, ci(2)));
  CHECK_SIMP(bin(FRIT_OP_CMPEQ, mul(s, ci(4)), ci(6)), ct(FRIT_BOOL, 0));
  CHECK_SIMP(bin(FRIT_OP_CMPNE, ci(6), mul(s, ci(4))), ct(FRIT_BOOL, 1));
}

/* ---------- semantic equivalence by brute force ---------- */

static const frit_dtype sem_dts[] = {FRIT_I64, FRIT_I64, FRIT_I64, FRIT_I32, FRIT_I8, FRIT_U8, FRIT_U32, FRIT_U64, FRIT_I16};
#define NSEM ((int)(sizeof sem_dts / sizeof sem_dts[0]))

static frit_uop *gen_int(frit_ctx *c, int depth, frit_dtype dt, frit_uop *a, frit_uop *b);

static frit_uop *gen_cmp(frit_ctx *c, int depth, frit_uop *a, frit_uop *b) {
  static const frit_op cmps[] = {FRIT_OP_CMPLT, FRIT_OP_CMPLE, FRIT_OP_CMPEQ, FRIT_OP_CMPNE};
  frit_dtype dt = sem_dts[se_rand() % NSEM];
  frit_uop *l = gen_int(c, depth, dt, a, b);
  frit_uop *r = se_rand() % 2 ? frit_const_int(c, dt, se_randint(-9, 20)) : gen_int(c, depth, dt, a, b);
  frit_uop *res = frit_binary(c, cmps[se_rand() % 4], l, r);
  switch (se_rand() % 6) {
  case 0: return frit_unary(c, FRIT_OP_NOT, res);
  case 1: return frit_binary(c, FRIT_OP_AND, res, gen_cmp(c, depth - 1 < 0 ? 0 : depth - 1, a, b));
  case 2: return frit_binary(c, FRIT_OP_XOR, res, frit_const_int(c, FRIT_BOOL, (int64_t)(se_rand() & 1)));
  default: return res;
  }
}

/* Index-style integer expressions: sums, products by constants, div/mod, min/max, selects. */
static frit_uop *gen_int(frit_ctx *c, int depth, frit_dtype dt, frit_uop *a, frit_uop *b) {
  if (depth <= 0 || se_rand() % 6 == 0) {
    switch (se_rand() % 5) {
    case 0: case 1: return frit_cast(c, a, dt);
    case 2: case 3: return frit_cast(c, b, dt);
    default: return frit_const_int(c, dt, se_randint(-6, 12));
    }
  }
  frit_uop *l = gen_int(c, depth - 1, dt, a, b);
  frit_uop *k = frit_const_int(c, dt, se_randint(-8, 16));
  switch (se_rand() % 16) {
  case 0: case 1: return frit_binary(c, FRIT_OP_ADD, l, gen_int(c, depth - 1, dt, a, b));
  case 2: return frit_binary(c, FRIT_OP_SUB, l, gen_int(c, depth - 1, dt, a, b));
  case 3: case 4: return frit_binary(c, FRIT_OP_MUL, l, k);
  case 5: return frit_binary(c, FRIT_OP_MUL, l, gen_int(c, depth - 1, dt, a, b));
  case 6: case 7: return frit_binary(c, FRIT_OP_IDIV, l, k);
  case 8: case 9: return frit_binary(c, FRIT_OP_MOD, l, k);
  case 10: return frit_binary(c, se_rand() % 2 ? FRIT_OP_IDIV : FRIT_OP_MOD, l, gen_int(c, depth - 1, dt, a, b));
  case 11: return frit_binary(c, se_rand() % 2 ? FRIT_OP_MAX : FRIT_OP_MIN, l, gen_int(c, depth - 1, dt, a, b));
  case 12: return frit_ternary(c, FRIT_OP_WHERE, gen_cmp(c, depth - 1, a, b), l, gen_int(c, depth - 1, dt, a, b));
  case 13: {
    static const frit_op ops[] = {FRIT_OP_AND, FRIT_OP_OR, FRIT_OP_XOR, FRIT_OP_SHL, FRIT_OP_SHR};
    frit_uop *r = se_rand() % 2 ? frit_const_int(c, dt, se_randint(0, 9)) : gen_int(c, depth - 1, dt, a, b);
    return frit_binary(c, ops[se_rand() % 5], l, r);
  }
  case 14: {
    static const frit_op ops[] = {FRIT_OP_NEG, FRIT_OP_NOT, FRIT_OP_ABS};
    return frit_unary(c, ops[se_rand() % 3], l);
  }
  default: {
    frit_dtype o = sem_dts[se_rand() % NSEM];
    return frit_cast(c, frit_cast(c, l, o), dt);
  }
  }
}

/* Float expressions over special values: the simplifier must respect NaN, inf and -0.0. */
static frit_uop *gen_float(frit_ctx *c, int depth, frit_uop *a, frit_uop *b) {
  static const double specials[] = {0.0, -0.0, 1.0, -1.0, 2.5, INFINITY, -INFINITY, NAN};
  if (depth <= 0 || se_rand() % 5 == 0) {
    switch (se_rand() % 4) {
    case 0: return frit_cast(c, a, FRIT_F32);
    case 1: return frit_binary(c, FRIT_OP_FDIV, frit_cast(c, b, FRIT_F32), frit_const_float(c, FRIT_F32, 0.0));
    default: return frit_const_float(c, FRIT_F32, specials[se_rand() % 8]);
    }
  }
  static const frit_op ops[] = {FRIT_OP_ADD, FRIT_OP_SUB, FRIT_OP_MUL, FRIT_OP_FDIV, FRIT_OP_MAX, FRIT_OP_MIN};
  frit_uop *l = gen_float(c, depth - 1, a, b);
  switch (se_rand() % 5) {
  case 0: case 1: return frit_binary(c, ops[se_rand() % 6], l, gen_float(c, depth - 1, a, b));
  case 2: return frit_binary(c, ops[se_rand() % 6], l, frit_const_float(c, FRIT_F32, specials[se_rand() % 8]));
  case 3: return frit_unary(c, se_rand() % 2 ? FRIT_OP_NEG : FRIT_OP_SQRT, l);
  default: {
    static const frit_op cmps[] = {FRIT_OP_CMPLT, FRIT_OP_CMPLE, FRIT_OP_CMPEQ, FRIT_OP_CMPNE};
    frit_uop *cnd = frit_binary(c, cmps[se_rand() % 4], l, gen_float(c, depth - 1, a, b));
    if (se_rand() % 2) cnd = frit_unary(c, FRIT_OP_NOT, cnd);
    return frit_ternary(c, FRIT_OP_WHERE, cnd, l, gen_float(c, depth - 1, a, b));
  }
  }
}

/* Index arithmetic as a lowering produces it: ((a*K + b)*M + c) / M % K and friends. */
static frit_uop *gen_index(frit_ctx *c, frit_uop *a, frit_uop *b) {
  frit_dtype dt = se_rand() % 4 ? FRIT_I64 : FRIT_I32;
  frit_uop *A = frit_cast(c, a, dt), *B = frit_cast(c, b, dt);
  int64_t K = se_randint(1, 8), M = se_randint(1, 6), off = se_randint(-3, 5);
  frit_uop *k = frit_const_int(c, dt, K), *m = frit_const_int(c, dt, M);
  frit_uop *lin = frit_binary(c, FRIT_OP_ADD, frit_binary(c, FRIT_OP_MUL, A, k), B);
  frit_uop *lin2 = frit_binary(c, FRIT_OP_ADD, frit_binary(c, FRIT_OP_MUL, lin, m), frit_const_int(c, dt, off));
  switch (se_rand() % 9) {
  case 8: { /* unflattened by (K, M) and flattened again */
    frit_uop *km = frit_const_int(c, dt, K * M), *l3 = frit_binary(c, FRIT_OP_MUL, frit_binary(c, FRIT_OP_IDIV, lin2, km), km);
    frit_uop *mid = frit_binary(c, FRIT_OP_MOD, frit_binary(c, FRIT_OP_IDIV, lin2, m), k);
    l3 = frit_binary(c, FRIT_OP_ADD, l3, frit_binary(c, FRIT_OP_MUL, mid, m));
    return frit_binary(c, FRIT_OP_ADD, l3, frit_binary(c, FRIT_OP_MOD, lin2, m));
  }
  case 0: return frit_binary(c, FRIT_OP_IDIV, lin, k);
  case 1: return frit_binary(c, FRIT_OP_MOD, lin, k);
  case 2: return frit_binary(c, FRIT_OP_MOD, frit_binary(c, FRIT_OP_IDIV, lin2, m), k);
  case 3: return frit_binary(c, FRIT_OP_IDIV, frit_binary(c, FRIT_OP_IDIV, lin2, m), k);
  case 4:
    return frit_binary(c, FRIT_OP_ADD, frit_binary(c, FRIT_OP_MUL, frit_binary(c, FRIT_OP_IDIV, lin2, k), k),
                       frit_binary(c, FRIT_OP_MOD, lin2, k));
  case 5: return frit_binary(c, FRIT_OP_CMPLT, lin2, frit_const_int(c, dt, se_randint(-5, 60)));
  case 6: return frit_binary(c, FRIT_OP_IDIV, frit_binary(c, FRIT_OP_MOD, lin2, frit_const_int(c, dt, K * M)), m);
  default: return frit_binary(c, FRIT_OP_MOD, frit_binary(c, FRIT_OP_MOD, lin2, frit_const_int(c, dt, K * M)), k);
  }
}

static int g_reported;

static void check_equivalent(frit_ctx *c, se_env *e, frit_uop *orig, int64_t alo, int64_t ahi, int64_t blo,
                             int64_t bhi) {
  frit_uop *s = frit_simplify(c, orig);
  CHECK(s != NULL);
  if (!s) {
    fprintf(stderr, "  simplify failed: %s\n", frit_error(c));
    return;
  }
  CHECK(frit_uop_dtype(s) == frit_uop_dtype(orig));
  frit_dtype dt = frit_dtype_scalar(frit_uop_dtype(orig));
  for (int64_t av = alo; av <= ahi; av++)
    for (int64_t bv = blo; bv <= bhi; bv++) {
      e->val[0] = av, e->val[1] = bv;
      int ok1 = 1, ok2 = 1;
      se_reset(e, frit_node_count(c));
      frit_scalar r1 = se_eval(e, orig, &ok1);
      se_reset(e, frit_node_count(c));
      frit_scalar r2 = se_eval(e, s, &ok2);
      int same = ok1 && ok2 && se_same(r1, r2, dt);
      CHECK(same);
      if (!same && g_reported++ < 3) {
        fprintf(stderr, "  a=%lld b=%lld: %llx vs %llx\n  original:\n%s", (long long)av, (long long)bv,
                (unsigned long long)r1.u, (unsigned long long)r2.u, frit_ir_to_string(c, orig));
        fprintf(stderr, "  simplified:\n%s", frit_ir_to_string(c, s));
        return;
      }
    }
}

static void test_semantics(void) {
  se_env e;
  memset(&e, 0, sizeof e);
  const char *env = getenv("FRIT_SIMPLIFY_N"), *seed = getenv("FRIT_SIMPLIFY_SEED");
  int trials = env ? atoi(env) : 4000;
  if (seed) se_rng_state = strtoull(seed, NULL, 0) | 1;
  for (int trial = 0; trial < trials; trial++) {
    frit_ctx *c = frit_ctx_new();
    int64_t alo = se_randint(-12, 12), blo = se_randint(-12, 12);
    if (trial % 3 == 0) alo = se_randint(0, 5), blo = se_randint(0, 5); /* index-like: nonnegative */
    int64_t ahi = alo + se_randint(0, 9), bhi = blo + se_randint(0, 9);
    frit_uop *a = frit_var(c, "a", alo, ahi), *b = frit_var(c, "b", blo, bhi);
    e.var[0] = a, e.var[1] = b, e.nvars = 2;
    frit_uop *root;
    switch (trial % 8) {
    case 0: root = gen_cmp(c, 3, a, b); break;
    case 1: root = gen_float(c, 4, a, b); break;
    case 2: case 3: root = gen_index(c, a, b); break;
    default: root = gen_int(c, 4, sem_dts[se_rand() % NSEM], a, b); break;
    }
    CHECK(root != NULL);
    if (root) check_equivalent(c, &e, root, alo, ahi, blo, bhi);
    frit_ctx_free(c);
  }
  se_free(&e);
}

/* ---------- rule coverage ---------- */

static void test_coverage(void) {
  const frit_ruleset *rs = frit_simplifier_rules(ctx);
  CHECK(rs != NULL);
  if (!rs) return;
  int unfired = 0;
  for (int i = 0; i < frit_ruleset_size(rs); i++) {
    if (frit_ruleset_fired(rs, i) == 0) {
      fprintf(stderr, "  rule never fired: %s\n", frit_ruleset_rule_text(rs, i));
      unfired++;
    }
  }
  CHECK_EQ_INT(unfired, 0);
}

int main(void) {
  ctx = frit_ctx_new();
  CHECK(frit_simplifier_rules(ctx) != NULL);
  if (!frit_simplifier_rules(ctx)) fprintf(stderr, "rules: %s\n", frit_error(ctx));
  test_fold();
  test_identities();
  test_linear();
  test_divmod();
  test_compare();
  test_coverage();
  frit_ctx_free(ctx);
  test_semantics();
  CHECK_DONE();
}
