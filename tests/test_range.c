/* Range analysis checked by brute force: every node's value at every variable assignment lies
 * within its vmin..vmax, and the bounds are attained where the analysis is exact. */
#include "check.h"
#include "frit.h"
#include "sym_eval.h"

static const frit_dtype int_dts[] = {FRIT_I8, FRIT_I16, FRIT_I32, FRIT_I64, FRIT_U8, FRIT_U16, FRIT_U32, FRIT_U64};
#define NDT ((int)(sizeof int_dts / sizeof int_dts[0]))

static frit_uop *edge_const(frit_ctx *ctx, frit_dtype dt) {
  frit_scalar v = {.u = 0};
  int bits = frit_dtype_bits(dt);
  int uns = frit_dtype_is_unsigned(dt);
  switch (se_rand() % 5) {
  case 0: v.u = uns ? (bits == 64 ? UINT64_MAX : (((uint64_t)1 << bits) - 1)) : (uint64_t)(((uint64_t)1 << (bits - 1)) - 1); break;
  case 1: v.i = uns ? 0 : -(int64_t)(((uint64_t)1 << (bits - 1)) - 1) - 1; break;
  case 2: v.i = uns ? (int64_t)(((uint64_t)1 << (bits - 1))) : -1; break;
  case 3: v.i = 1; break;
  default: v.i = bits; break;
  }
  if (bits == 64 && uns && v.u == 0) v.u = (uint64_t)INT64_MAX + 3;
  return frit_const(ctx, dt, frit_scalar_normalize(v, dt));
}

static frit_uop *gen(frit_ctx *ctx, int depth, frit_dtype dt, frit_uop *a, frit_uop *b);

static frit_uop *gen_bool(frit_ctx *ctx, int depth, frit_uop *a, frit_uop *b) {
  frit_dtype idt = int_dts[se_rand() % NDT];
  if (depth <= 0) return frit_binary(ctx, FRIT_OP_CMPLT, gen(ctx, 0, idt, a, b), gen(ctx, 0, idt, a, b));
  switch (se_rand() % 6) {
  case 0: {
    static const frit_op cmps[] = {FRIT_OP_CMPLT, FRIT_OP_CMPLE, FRIT_OP_CMPEQ, FRIT_OP_CMPNE};
    return frit_binary(ctx, cmps[se_rand() % 4], gen(ctx, depth - 1, idt, a, b), gen(ctx, depth - 1, idt, a, b));
  }
  case 1: {
    static const frit_op lops[] = {FRIT_OP_AND, FRIT_OP_OR, FRIT_OP_XOR, FRIT_OP_MAX, FRIT_OP_MIN};
    return frit_binary(ctx, lops[se_rand() % 5], gen_bool(ctx, depth - 1, a, b), gen_bool(ctx, depth - 1, a, b));
  }
  case 2: return frit_unary(ctx, FRIT_OP_NOT, gen_bool(ctx, depth - 1, a, b));
  case 3: return frit_cast(ctx, gen(ctx, depth - 1, idt, a, b), FRIT_BOOL);
  case 4: return frit_const_int(ctx, FRIT_BOOL, (int64_t)(se_rand() & 1));
  default:
    return frit_ternary(ctx, FRIT_OP_WHERE, gen_bool(ctx, depth - 1, a, b), gen_bool(ctx, depth - 1, a, b),
                        gen_bool(ctx, depth - 1, a, b));
  }
}

static frit_uop *gen(frit_ctx *ctx, int depth, frit_dtype dt, frit_uop *a, frit_uop *b) {
  if (depth <= 0 || se_rand() % 5 == 0) {
    switch (se_rand() % 6) {
    case 0: case 1: return frit_cast(ctx, a, dt);
    case 2: case 3: return frit_cast(ctx, b, dt);
    case 4: return frit_const_int(ctx, dt, se_randint(-4, 9));
    default: return edge_const(ctx, dt);
    }
  }
  static const frit_op bins[] = {FRIT_OP_ADD, FRIT_OP_SUB, FRIT_OP_MUL, FRIT_OP_IDIV, FRIT_OP_MOD,
                                 FRIT_OP_MAX, FRIT_OP_MIN, FRIT_OP_AND, FRIT_OP_OR, FRIT_OP_XOR,
                                 FRIT_OP_SHL, FRIT_OP_SHR};
  static const frit_op uns[] = {FRIT_OP_NEG, FRIT_OP_NOT, FRIT_OP_ABS};
  switch (se_rand() % 8) {
  case 0: case 1: case 2: case 3:
    return frit_binary(ctx, bins[se_rand() % 12], gen(ctx, depth - 1, dt, a, b), gen(ctx, depth - 1, dt, a, b));
  case 4: return frit_unary(ctx, uns[se_rand() % 3], gen(ctx, depth - 1, dt, a, b));
  case 5:
    return frit_ternary(ctx, FRIT_OP_WHERE, gen_bool(ctx, depth - 1, a, b), gen(ctx, depth - 1, dt, a, b),
                        gen(ctx, depth - 1, dt, a, b));
  case 6: {
    frit_dtype o = se_rand() % 4 == 0 ? FRIT_BOOL : int_dts[se_rand() % NDT];
    frit_uop *s = o == FRIT_BOOL ? gen_bool(ctx, depth - 1, a, b) : gen(ctx, depth - 1, o, a, b);
    return frit_cast(ctx, s, dt);
  }
  default:
    return frit_ternary(ctx, FRIT_OP_MULACC, gen(ctx, depth - 1, dt, a, b), gen(ctx, depth - 1, dt, a, b),
                        gen(ctx, depth - 1, dt, a, b));
  }
}

static frit_uop **g_nodes;
static size_t g_nnodes, g_cap;
static void keep(frit_uop *u) {
  if (g_nnodes == g_cap) {
    g_cap = g_cap ? 2 * g_cap : 256;
    g_nodes = realloc(g_nodes, g_cap * sizeof *g_nodes);
  }
  g_nodes[g_nnodes++] = u;
}
/* Collects every node reachable from u (duplicates are harmless). */
static void collect(frit_uop *u) {
  for (size_t i = 0; i < g_nnodes; i++)
    if (g_nodes[i] == u) return;
  keep(u);
  for (int i = 0; i < frit_uop_nsrc(u); i++) collect(frit_uop_src(u, i));
}

static int g_fail_report;
static frit_ctx *frit_dbg_ctx;

static void check_sound(se_env *e, frit_uop *root) {
  g_nnodes = 0;
  collect(root);
  int64_t alo = frit_uop_arg(e->var[0])->i0, ahi = frit_uop_arg(e->var[0])->i1;
  int64_t blo = frit_uop_arg(e->var[1])->i0, bhi = frit_uop_arg(e->var[1])->i1;
  for (int64_t av = alo;; av++) {
    for (int64_t bv = blo;; bv++) {
      e->val[0] = av, e->val[1] = bv;
      se_reset(e, frit_uop_id(root) + 1);
      for (size_t i = 0; i < g_nnodes; i++) {
        frit_uop *u = g_nodes[i];
        frit_dtype dt = frit_uop_dtype(u);
        if (!(frit_dtype_is_int(dt) || frit_dtype_is_bool(dt))) continue;
        int ok = 1;
        int64_t v = se_as_i64(se_eval(e, u, &ok), dt);
        if (!ok) continue;
        int good = v >= frit_uop_vmin(u) && v <= frit_uop_vmax(u);
        CHECK(good);
        if (!good && g_fail_report < 1) fprintf(stderr, "%s\n", frit_ir_to_string(frit_dbg_ctx, root));
        if (!good && g_fail_report++ < 10)
          fprintf(stderr, "  node %s a=%lld b=%lld value %lld outside [%lld, %lld]\n", frit_op_name(frit_uop_op(u)),
                  (long long)av, (long long)bv, (long long)v, (long long)frit_uop_vmin(u),
                  (long long)frit_uop_vmax(u));
      }
      if (bv == bhi) break;
    }
    if (av == ahi) break;
  }
}

static void test_random_soundness(void) {
  static const int64_t centres[] = {0, -4, 3, 120, -130, 250, 32765, -32770, 65530, 2147483645, -2147483650,
                                    4294967290, INT64_MAX - 6, INT64_MIN + 1};
  se_env e;
  memset(&e, 0, sizeof e);
  for (int trial = 0; trial < 5000; trial++) {
    frit_ctx *ctx = frit_ctx_new();
    frit_dbg_ctx = ctx;
    int64_t ca = centres[se_rand() % 14], cb = centres[se_rand() % 14];
    int64_t wa = se_randint(0, 7), wb = se_randint(0, 7);
    if (ca > INT64_MAX - 8) wa = 5;
    if (cb > INT64_MAX - 8) wb = 5;
    frit_uop *a = frit_var(ctx, "a", ca, ca + wa), *b = frit_var(ctx, "b", cb, cb + wb);
    e.var[0] = a, e.var[1] = b, e.nvars = 2;
    frit_uop *root = trial % 5 == 0 ? gen_bool(ctx, 4, a, b) : gen(ctx, 4, int_dts[se_rand() % NDT], a, b);
    CHECK(root != NULL);
    if (!root) fprintf(stderr, "  build failed: %s\n", frit_error(ctx));
    if (root) check_sound(&e, root);
    frit_ctx_free(ctx);
  }
  se_free(&e);
}

/* Ops where the analysis is exact for two independent variables: the bounds are attained. */
static void test_tight(void) {
  static const frit_op ops[] = {FRIT_OP_ADD, FRIT_OP_SUB, FRIT_OP_MUL, FRIT_OP_MAX, FRIT_OP_MIN,
                                FRIT_OP_IDIV, FRIT_OP_CMPLT, FRIT_OP_CMPEQ};
  se_env e;
  memset(&e, 0, sizeof e);
  for (int trial = 0; trial < 400; trial++) {
    frit_ctx *ctx = frit_ctx_new();
    int64_t alo = se_randint(-20, 20), blo = se_randint(-20, 20);
    int64_t ahi = alo + se_randint(0, 12), bhi = blo + se_randint(0, 12);
    frit_op op = ops[trial % 8];
    if (op == FRIT_OP_IDIV && blo <= 0 && bhi >= 0) blo = 1, bhi = blo + se_randint(0, 5);
    frit_uop *a = frit_var(ctx, "a", alo, ahi), *b = frit_var(ctx, "b", blo, bhi);
    e.var[0] = a, e.var[1] = b, e.nvars = 2;
    frit_uop *u = frit_binary(ctx, op, a, b);
    int64_t mn = INT64_MAX, mx = INT64_MIN;
    for (int64_t av = alo; av <= ahi; av++)
      for (int64_t bv = blo; bv <= bhi; bv++) {
        int ok = 1;
        e.val[0] = av, e.val[1] = bv;
        se_reset(&e, frit_uop_id(u) + 1);
        int64_t v = se_as_i64(se_eval(&e, u, &ok), frit_uop_dtype(u));
        mn = v < mn ? v : mn, mx = v > mx ? v : mx;
      }
    CHECK_EQ_INT(frit_uop_vmin(u), mn);
    CHECK_EQ_INT(frit_uop_vmax(u), mx);
    /* unary ops on a */
    frit_uop *un[2] = {frit_unary(ctx, FRIT_OP_NEG, a), frit_unary(ctx, FRIT_OP_ABS, a)};
    for (int k = 0; k < 2; k++) {
      mn = INT64_MAX, mx = INT64_MIN;
      for (int64_t av = alo; av <= ahi; av++) {
        int ok = 1;
        e.val[0] = av;
        se_reset(&e, frit_uop_id(un[k]) + 1);
        int64_t v = se_eval(&e, un[k], &ok).i;
        mn = v < mn ? v : mn, mx = v > mx ? v : mx;
      }
      CHECK_EQ_INT(frit_uop_vmin(un[k]), mn);
      CHECK_EQ_INT(frit_uop_vmax(un[k]), mx);
    }
    frit_ctx_free(ctx);
  }
  se_free(&e);
}

static void test_specific(void) {
  frit_ctx *ctx = frit_ctx_new();
  frit_uop *x = frit_var(ctx, "x", 0, 15), *y = frit_var(ctx, "y", 0, 3);
  frit_uop *four = frit_const_int(ctx, FRIT_I64, 4);
  frit_uop *s = frit_binary(ctx, FRIT_OP_ADD, frit_binary(ctx, FRIT_OP_MUL, x, four), y);
  CHECK_EQ_INT(frit_uop_vmin(s), 0);
  CHECK_EQ_INT(frit_uop_vmax(s), 63);
  frit_uop *q = frit_binary(ctx, FRIT_OP_IDIV, s, four), *m = frit_binary(ctx, FRIT_OP_MOD, s, four);
  CHECK_EQ_INT(frit_uop_vmax(q), 15);
  CHECK_EQ_INT(frit_uop_vmin(m), 0);
  CHECK_EQ_INT(frit_uop_vmax(m), 3);
  /* (x / y) * y lies between 0 and x for any y (a size cut to whole parts): the product of the
   * two ranges' corners would overflow here */
  frit_uop *bx = frit_var(ctx, "bx", 0, (int64_t)1 << 61), *by = frit_var(ctx, "by", 1, 128);
  frit_uop *cut = frit_binary(ctx, FRIT_OP_MUL, frit_binary(ctx, FRIT_OP_IDIV, bx, by), by);
  CHECK_EQ_INT(frit_uop_vmin(cut), 0);
  CHECK_EQ_INT(frit_uop_vmax(cut), (int64_t)1 << 61);
  frit_uop *sx = frit_var(ctx, "sx", -20, 17), *sy = frit_var(ctx, "sy", -5, 5);
  frit_uop *scut = frit_binary(ctx, FRIT_OP_MUL, sy, frit_binary(ctx, FRIT_OP_IDIV, sx, sy));
  for (int64_t a = -20; a <= 17; a++)
    for (int64_t b = -5; b <= 5; b++) {
      int64_t v = b ? a / b * b : 0;
      CHECK(frit_uop_vmin(scut) <= v && v <= frit_uop_vmax(scut));
    }
  CHECK_EQ_INT(frit_uop_vmin(scut), -20);
  CHECK_EQ_INT(frit_uop_vmax(scut), 17);
  /* RANGE: [0, end-1]; an empty loop gets a sane [0, 0] */
  frit_uop *r = frit_range(ctx, frit_const_int(ctx, FRIT_I64, 10), 0, FRIT_AXIS_LOOP);
  CHECK_EQ_INT(frit_uop_vmin(r), 0);
  CHECK_EQ_INT(frit_uop_vmax(r), 9);
  frit_uop *r0 = frit_range(ctx, frit_const_int(ctx, FRIT_I64, 0), 1, FRIT_AXIS_LOOP);
  CHECK_EQ_INT(frit_uop_vmin(r0), 0);
  CHECK_EQ_INT(frit_uop_vmax(r0), 0);
  /* division by a range containing 0: x/0 == 0, x%0 == x */
  frit_uop *z = frit_var(ctx, "z", -1, 1);
  frit_uop *d = frit_binary(ctx, FRIT_OP_IDIV, frit_const_int(ctx, FRIT_I64, 100), z);
  CHECK_EQ_INT(frit_uop_vmin(d), -100);
  CHECK_EQ_INT(frit_uop_vmax(d), 100);
  frit_uop *md = frit_binary(ctx, FRIT_OP_MOD, frit_const_int(ctx, FRIT_I64, 100), z);
  CHECK_EQ_INT(frit_uop_vmin(md), 0);
  CHECK_EQ_INT(frit_uop_vmax(md), 100);
  /* overflow of i32 gives the full i32 range */
  frit_uop *big = frit_cast(ctx, frit_var(ctx, "w", 2147483600, 2147483647), FRIT_I32);
  CHECK_EQ_INT(frit_uop_vmin(big), 2147483600);
  frit_uop *ov = frit_binary(ctx, FRIT_OP_ADD, big, frit_const_int(ctx, FRIT_I32, 100));
  CHECK_EQ_INT(frit_uop_vmin(ov), INT32_MIN);
  CHECK_EQ_INT(frit_uop_vmax(ov), INT32_MAX);
  /* u64 beyond INT64_MAX is unknown: reported as the capped dtype limits */
  frit_scalar huge = {.u = UINT64_MAX - 1};
  frit_uop *h = frit_const(ctx, FRIT_U64, huge);
  CHECK_EQ_INT(frit_uop_vmin(h), 0);
  CHECK_EQ_INT(frit_uop_vmax(h), INT64_MAX);
  frit_uop *h2 = frit_binary(ctx, FRIT_OP_IDIV, h, frit_const_int(ctx, FRIT_U64, 2));
  CHECK(frit_uop_vmax(h2) >= (int64_t)((UINT64_MAX - 1) / 2));
  /* comparisons settle */
  frit_uop *c = frit_binary(ctx, FRIT_OP_CMPLT, y, frit_const_int(ctx, FRIT_I64, 4));
  CHECK_EQ_INT(frit_uop_vmin(c), 1);
  CHECK_EQ_INT(frit_uop_vmax(c), 1);
  frit_uop *w = frit_ternary(ctx, FRIT_OP_WHERE, c, x, frit_const_int(ctx, FRIT_I64, 100));
  CHECK_EQ_INT(frit_uop_vmax(w), 15);
  /* casts */
  frit_uop *cb = frit_cast(ctx, c, FRIT_I32);
  CHECK_EQ_INT(frit_uop_vmin(cb), 1);
  frit_uop *nz = frit_cast(ctx, frit_binary(ctx, FRIT_OP_ADD, y, frit_const_int(ctx, FRIT_I64, 1)), FRIT_BOOL);
  CHECK_EQ_INT(frit_uop_vmin(nz), 1);
  frit_uop *nar = frit_cast(ctx, frit_var(ctx, "v", 0, 300), FRIT_U8);
  CHECK_EQ_INT(frit_uop_vmin(nar), 0);
  CHECK_EQ_INT(frit_uop_vmax(nar), 255);
  /* floats: unknown unless constant */
  frit_uop *f = frit_const_float(ctx, FRIT_F32, 2.5);
  CHECK_EQ_INT(frit_uop_vmin(f), 2);
  CHECK_EQ_INT(frit_uop_vmax(f), 3);
  frit_uop *fx = frit_cast(ctx, x, FRIT_F32);
  CHECK_EQ_INT(frit_uop_vmin(fx), INT64_MIN);
  /* vectors: union of lanes */
  frit_uop *lanes[2] = {x, y};
  frit_uop *vec = frit_uop_new(ctx, FRIT_OP_VECTORIZE, frit_dtype_vec(FRIT_I64, 2), lanes, 2, NULL);
  CHECK_EQ_INT(frit_uop_vmin(vec), 0);
  CHECK_EQ_INT(frit_uop_vmax(vec), 15);
  /* shifts */
  frit_uop *sh = frit_binary(ctx, FRIT_OP_SHL, y, frit_const_int(ctx, FRIT_I64, 3));
  CHECK_EQ_INT(frit_uop_vmax(sh), 24);
  frit_uop *sr = frit_binary(ctx, FRIT_OP_SHR, x, frit_const_int(ctx, FRIT_I64, 2));
  CHECK_EQ_INT(frit_uop_vmax(sr), 3);
  frit_ctx_free(ctx);
}

int main(void) {
  test_specific();
  test_tight();
  test_random_soundness();
  free(g_nodes);
  CHECK_DONE();
}
