/* Tests of the human printers (tree with back-references, listing) and of the C expression
 * renderer, whose expected strings are checked against the C compiler's own evaluation. */
#include "frit.h"

#include "check.h"

#include <stdbool.h>
#include <stdlib.h>

/* The renderer writes the fewest parentheses C allows; the expected strings are compiled as C,
 * so the warnings that suggest extra parentheses are off here. */
#pragma GCC diagnostic ignored "-Wparentheses"

/* Runs a printer into a malloc'd string. */
static char *capture(frit_ctx *ctx, frit_status (*pr)(frit_ctx *, frit_uop *, FILE *), frit_uop *root) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CHECK_EQ_INT(pr(ctx, root, f), FRIT_OK);
  fclose(f);
  return buf;
}

/* A plain loop: sanitizer-intercepted strstr rescans the whole haystack on every call. */
static int count_substr(const char *s, const char *pat) {
  size_t m = strlen(pat);
  int n = 0;
  for (const char *p = s; *p; p++)
    if (*p == pat[0] && strncmp(p, pat, m) == 0) n++, p += m - 1;
  return n;
}

static void test_shared_subgraph(void) {
  frit_ctx *ctx = frit_ctx_new();
  frit_uop *x = frit_var(ctx, "x", 0, 10);
  frit_uop *c3 = frit_const_int(ctx, FRIT_I64, 3);
  frit_uop *a = frit_binary(ctx, FRIT_OP_ADD, x, c3);
  frit_uop *m = frit_binary(ctx, FRIT_OP_MUL, a, a);
  frit_uop *s = frit_binary(ctx, FRIT_OP_SUB, m, x);
  CHECK_EQ_INT(frit_uop_id(x), 0);
  CHECK_EQ_INT(frit_uop_id(c3), 1);
  CHECK_EQ_INT(frit_uop_id(s), 4);
  char *tree = capture(ctx, frit_print_tree, s);
  /* a and x are each used twice: expanded once, referred back to once */
  CHECK_EQ_STR(tree,
               "%4 = sub : i64\n"
               "  %3 = mul : i64\n"
               "    %2 = add : i64\n"
               "      %0 = define_var x [0, 10] : i64\n"
               "      %1 = const 3 : i64\n"
               "    ^%2\n"
               "  ^%0\n");
  free(tree);
  char *list = capture(ctx, frit_print_listing, s);
  CHECK_EQ_STR(list,
               "%0 = define_var x [0, 10] : i64\n"
               "%1 = const 3 : i64\n"
               "%2 = add(%0, %1) : i64\n"
               "%3 = mul(%2, %2) : i64\n"
               "%4 = sub(%3, %0) : i64\n");
  free(list);
  /* only reachable nodes are listed */
  char *sub = capture(ctx, frit_print_listing, a);
  CHECK_EQ_INT(count_substr(sub, "\n"), 3);
  free(sub);
  frit_ctx_free(ctx);
}

/* Many sharers: every node line appears once, back-references number uses - 1. */
static void test_backref_counts(void) {
  frit_ctx *ctx = frit_ctx_new();
  frit_uop *x = frit_var(ctx, "x", -5, 5), *y = frit_var(ctx, "y", 0, 3);
  frit_uop *nodes[40];
  int uses[64] = {0};
  int n = 0;
  nodes[n++] = x, nodes[n++] = y;
  unsigned seed = 12345;
  for (int i = 0; i < 30; i++) {
    seed = seed * 1103515245u + 12345u;
    frit_uop *l = nodes[(seed >> 8) % (unsigned)n];
    seed = seed * 1103515245u + 12345u;
    frit_uop *r = nodes[(seed >> 8) % (unsigned)n];
    frit_uop *u = frit_binary(ctx, i % 2 ? FRIT_OP_ADD : FRIT_OP_MUL, l, r);
    if (u && frit_uop_id(u) >= (uint32_t)frit_node_count(ctx) - 1 && frit_uop_id(u) < 64) nodes[n++] = u;
  }
  frit_uop *root = frit_sink(ctx, nodes, n);
  /* independent count of uses: each source edge of each node reachable from root */
  for (int i = 0; i < n; i++)
    for (int k = 0; k < frit_uop_nsrc(nodes[i]); k++) uses[frit_uop_id(frit_uop_src(nodes[i], k))]++;
  for (int i = 0; i < n; i++) uses[frit_uop_id(nodes[i])]++; /* the sink's edge */
  char *tree = capture(ctx, frit_print_tree, root);
  for (int i = 0; i < n; i++) {
    char def[32], ref[32];
    uint32_t id = frit_uop_id(nodes[i]);
    snprintf(def, sizeof def, "%%%u = ", id);
    snprintf(ref, sizeof ref, "^%%%u\n", id);
    CHECK_EQ_INT(count_substr(tree, def), 1);
    CHECK_EQ_INT(count_substr(tree, ref), uses[id] - 1);
  }
  free(tree);
  frit_ctx_free(ctx);
}

static void test_listing_memory(void) {
  frit_ctx *ctx = frit_ctx_new();
  frit_dtype f32p = frit_dtype_ptr(FRIT_F32, FRIT_ADDR_GLOBAL);
  frit_arg g0 = {.i0 = 0, .i1 = 16};
  frit_uop *buf = frit_uop_new(ctx, FRIT_OP_DEFINE_GLOBAL, f32p, NULL, 0, &g0);       /* %0 */
  frit_uop *r = frit_range(ctx, frit_const_int(ctx, FRIT_I64, 16), 0, FRIT_AXIS_GLOBAL); /* %1, %2 */
  frit_uop *idx = frit_uop_new(ctx, FRIT_OP_INDEX, f32p, (frit_uop *[]){buf, r}, 2, NULL);
  frit_uop *ld = frit_uop_new(ctx, FRIT_OP_LOAD, FRIT_F32, &idx, 1, NULL);
  frit_uop *v = frit_binary(ctx, FRIT_OP_MUL, ld, frit_const_float(ctx, FRIT_F32, 0.5));
  frit_uop *st = frit_uop_new(ctx, FRIT_OP_STORE, FRIT_VOID, (frit_uop *[]){idx, v}, 2, NULL);
  frit_uop *end = frit_uop_new(ctx, FRIT_OP_END, FRIT_VOID, (frit_uop *[]){st, r}, 2, NULL);
  char *list = capture(ctx, frit_print_listing, frit_sink(ctx, &end, 1));
  CHECK_EQ_STR(list,
               "%0 = define_global param=0 size=16 : f32*\n"
               "%1 = const 16 : i64\n"
               "%2 = range(%1) axis=0 global : i64\n"
               "%3 = index(%0, %2) : f32*\n"
               "%4 = load(%3) : f32\n"
               "%5 = const 0.5 : f32\n"
               "%6 = mul(%4, %5) : f32\n"
               "%7 = store(%3, %6)\n"
               "%8 = end(%7, %2)\n"
               "%9 = sink(%8)\n");
  free(list);
  frit_ctx_free(ctx);
}

static void test_deep_tree(void) {
  frit_ctx *ctx = frit_ctx_new();
  frit_uop *x = frit_var(ctx, "x", 0, 10), *one = frit_const_int(ctx, FRIT_I64, 1);
  for (int i = 0; i < 100000; i++) x = frit_binary(ctx, FRIT_OP_ADD, x, one);
  char *tree = capture(ctx, frit_print_tree, x);
  /* 100002 node lines and 99999 back-references to the shared constant */
  CHECK_EQ_INT(count_substr(tree, "\n"), 100002 + 99999);
  size_t longest = 0, cur = 0;
  for (const char *p = tree; *p; p++) cur = *p == '\n' ? (longest = cur > longest ? cur : longest, 0) : cur + 1;
  CHECK(longest < 200); /* indentation is capped */
  free(tree);
  char *list = capture(ctx, frit_print_listing, x);
  CHECK_EQ_INT(count_substr(list, "\n"), 100002);
  free(list);
  frit_ctx_free(ctx);
}

/* ---------- C expression renderer ---------- */

/* The graph's value by the library's own scalar semantics, for small graphs (recursive). */
static int64_t eval(frit_uop *u, int64_t a, int64_t b, int64_t c) {
  frit_op op = frit_uop_op(u);
  const frit_arg *arg = frit_uop_arg(u);
  if (op == FRIT_OP_CONST) return arg->value.i;
  if (op == FRIT_OP_DEFINE_VAR) {
    const char *name = arg->blob;
    return name[0] == 'a' ? a : name[0] == 'b' ? b : c;
  }
  frit_scalar s[3];
  int n = frit_uop_nsrc(u);
  for (int i = 0; i < n; i++) s[i].i = eval(frit_uop_src(u, i), a, b, c);
  if (op == FRIT_OP_CAST) return frit_eval_cast(s[0], frit_uop_dtype(frit_uop_src(u, 0)), frit_uop_dtype(u)).i;
  frit_dtype operand = frit_uop_dtype(frit_uop_src(u, op == FRIT_OP_WHERE ? 1 : 0));
  return frit_eval_alu(op, operand, s).i;
}

static int64_t max(int64_t x, int64_t y) { return x > y ? x : y; }
static int64_t min(int64_t x, int64_t y) { return x < y ? x : y; }

static const int64_t VA[] = {7, -9, 100, 0, 3}, VB[] = {3, -9, 5, 8, 3}, VC[] = {2, 4, -3, 7, 1};

/* The expected text is the C expression itself: the compiler evaluates it as the oracle. */
#define RCASE(graph, cexpr)                                                                  \
  do {                                                                                       \
    frit_uop *g_ = (graph);                                                                  \
    CHECK_EQ_STR(frit_render_c_expr(ctx, g_), #cexpr);                                       \
    for (int k_ = 0; k_ < 5; k_++) {                                                         \
      int64_t a = VA[k_], b = VB[k_], c = VC[k_];                                            \
      CHECK_EQ_INT(eval(g_, a, b, c), (int64_t)(cexpr));                                     \
    }                                                                                        \
  } while (0)

static void test_render(void) {
  frit_ctx *ctx = frit_ctx_new();
  frit_uop *A = frit_var(ctx, "a", -100, 100), *B = frit_var(ctx, "b", -100, 100), *C = frit_var(ctx, "c", -100, 100);
#define ADD(x, y) frit_binary(ctx, FRIT_OP_ADD, x, y)
#define SUB(x, y) frit_binary(ctx, FRIT_OP_SUB, x, y)
#define MUL(x, y) frit_binary(ctx, FRIT_OP_MUL, x, y)
#define DIV(x, y) frit_binary(ctx, FRIT_OP_IDIV, x, y)
#define MOD(x, y) frit_binary(ctx, FRIT_OP_MOD, x, y)
#define LT(x, y) frit_binary(ctx, FRIT_OP_CMPLT, x, y)
#define LE(x, y) frit_binary(ctx, FRIT_OP_CMPLE, x, y)
#define EQ(x, y) frit_binary(ctx, FRIT_OP_CMPEQ, x, y)
#define NE(x, y) frit_binary(ctx, FRIT_OP_CMPNE, x, y)
#define K(v) frit_const_int(ctx, FRIT_I64, v)
  RCASE(SUB(A, SUB(B, C)), a - (b - c));
  RCASE(SUB(SUB(A, B), C), a - b - c);
  RCASE(ADD(A, ADD(B, C)), a + (b + c));
  RCASE(MUL(ADD(A, B), C), (a + b) * c);
  RCASE(ADD(A, MUL(B, C)), a + b * c);
  RCASE(DIV(A, MUL(B, C)), a / (b * c));
  RCASE(DIV(MUL(A, B), C), a * b / c);
  RCASE(MOD(A, DIV(B, C)), a % (b / c));
  RCASE(MUL(MOD(A, B), C), a % b * c);
  RCASE(ADD(A, K(-5)), a + -5);
  RCASE(SUB(A, K(-5)), a - -5);
  RCASE(MUL(K(-5), A), -5 * a);
  RCASE(frit_unary(ctx, FRIT_OP_NEG, K(-5)), -(-5));
  RCASE(frit_unary(ctx, FRIT_OP_NEG, frit_unary(ctx, FRIT_OP_NEG, A)), -(-a));
  RCASE(frit_unary(ctx, FRIT_OP_NEG, ADD(A, B)), -(a + b));
  RCASE(MUL(frit_unary(ctx, FRIT_OP_NEG, A), B), -a * b);
  RCASE(frit_unary(ctx, FRIT_OP_NOT, A), ~a);
  RCASE(frit_binary(ctx, FRIT_OP_AND, A, frit_binary(ctx, FRIT_OP_OR, B, C)), a & (b | c));
  RCASE(frit_binary(ctx, FRIT_OP_OR, frit_binary(ctx, FRIT_OP_AND, A, B), C), a & b | c);
  RCASE(frit_binary(ctx, FRIT_OP_XOR, A, frit_binary(ctx, FRIT_OP_AND, B, C)), a ^ b & c);
  RCASE(frit_binary(ctx, FRIT_OP_AND, frit_binary(ctx, FRIT_OP_XOR, A, B), C), (a ^ b) & c);
  /* comparisons and logic */
  RCASE(LT(ADD(A, B), C), a + b < c);
  RCASE(EQ(LT(A, B), LT(B, C)), a < b == b < c); /* relational binds tighter than equality */
  RCASE(NE(LE(A, B), LT(B, C)), a <= b != b < c);
  RCASE(frit_binary(ctx, FRIT_OP_AND, LT(A, B), frit_unary(ctx, FRIT_OP_NOT, EQ(A, C))), a < b && !(a == c));
  RCASE(frit_binary(ctx, FRIT_OP_OR, frit_binary(ctx, FRIT_OP_AND, LT(A, B), LT(B, C)), EQ(A, C)),
        a < b && b < c || a == c);
  RCASE(frit_binary(ctx, FRIT_OP_AND, frit_binary(ctx, FRIT_OP_OR, LT(A, B), LT(B, C)), EQ(A, C)),
        (a < b || b < c) && a == c);
  RCASE(frit_binary(ctx, FRIT_OP_XOR, LT(A, B), LT(B, C)), a < b != b < c);
  /* where, max, min, casts */
  RCASE(frit_ternary(ctx, FRIT_OP_WHERE, LT(A, B), A, B), a < b ? a : b);
  RCASE(ADD(frit_ternary(ctx, FRIT_OP_WHERE, LT(A, B), A, B), K(1)), (a < b ? a : b) + 1);
  RCASE(frit_ternary(ctx, FRIT_OP_WHERE, LT(A, B), A, frit_ternary(ctx, FRIT_OP_WHERE, LT(B, C), B, C)),
        a < b ? a : b < c ? b : c);
  RCASE(frit_ternary(ctx, FRIT_OP_WHERE, frit_ternary(ctx, FRIT_OP_WHERE, LT(A, B), LT(B, C), LT(C, A)), A, B),
        (a < b ? b < c : c < a) ? a : b);
  RCASE(frit_ternary(ctx, FRIT_OP_WHERE, LT(A, B), frit_ternary(ctx, FRIT_OP_WHERE, LT(B, C), B, C), A),
        a < b ? b < c ? b : c : a);
  RCASE(frit_binary(ctx, FRIT_OP_MAX, ADD(A, B), C), max(a + b, c));
  RCASE(MUL(frit_binary(ctx, FRIT_OP_MIN, A, K(3)), B), min(a, 3) * b);
  RCASE(ADD(frit_cast(ctx, LT(A, B), FRIT_I64), K(1)), (a < b) + 1);
  RCASE(MUL(frit_cast(ctx, LT(A, B), FRIT_I64), C), (a < b) * c);
  RCASE(frit_cast(ctx, frit_binary(ctx, FRIT_OP_AND, LT(A, B), LT(B, C)), FRIT_I64), a < b && b < c);
  RCASE(frit_cast(ctx, A, FRIT_BOOL), a != 0);
  RCASE(frit_binary(ctx, FRIT_OP_AND, frit_cast(ctx, ADD(A, B), FRIT_BOOL), LT(B, C)), a + b != 0 && b < c);
  /* shifts, with counts kept in range */
  frit_uop *s = frit_binary(ctx, FRIT_OP_AND, C, K(7));
  RCASE(frit_binary(ctx, FRIT_OP_SHL, frit_binary(ctx, FRIT_OP_AND, A, K(255)), ADD(s, K(1))), (a & 255) << (c & 7) + 1);
  RCASE(ADD(frit_binary(ctx, FRIT_OP_SHR, A, s), B), (a >> (c & 7)) + b);
  /* INT64_MIN has no literal; narrower casts name the C type */
  CHECK_EQ_STR(frit_render_c_expr(ctx, ADD(A, K(INT64_MIN))), "a + (-9223372036854775807 - 1)");
  CHECK_EQ_STR(frit_render_c_expr(ctx, frit_cast(ctx, ADD(A, B), FRIT_I32)), "(int32_t)(a + b)");
  CHECK_EQ_STR(frit_render_c_expr(ctx, frit_range(ctx, K(8), 2, FRIT_AXIS_LOOP)), "ridx2");
  CHECK_EQ_STR(frit_render_c_expr(ctx, frit_const(ctx, FRIT_U64, (frit_scalar){.u = UINT64_MAX})),
               "18446744073709551615u");
  /* unsupported: floats, memory */
  CHECK(frit_render_c_expr(ctx, frit_binary(ctx, FRIT_OP_ADD, frit_const_float(ctx, FRIT_F32, 1.0),
                                            frit_const_float(ctx, FRIT_F32, 2.0))) == NULL);
  CHECK_EQ_INT(frit_last_status(ctx), FRIT_ERR_INVALID);
  CHECK(strstr(frit_error(ctx), "f32") != NULL);
  /* a deep chain renders without recursion */
  frit_uop *x = A;
  for (int i = 0; i < 100000; i++) x = ADD(x, K(1));
  const char *deep = frit_render_c_expr(ctx, x);
  CHECK(deep != NULL && strlen(deep) == 1 + 100000 * 4 && strncmp(deep, "a + 1 + 1", 9) == 0);
  frit_ctx_free(ctx);
}

int main(void) {
  test_shared_subgraph();
  test_backref_counts();
  test_listing_memory();
  test_deep_tree();
  test_render();
  CHECK_DONE();
}
