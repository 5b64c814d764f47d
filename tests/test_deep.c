/* Deep graphs and deeply nested text: every pass must finish (or fail with a message) without
 * overflowing the C stack. FRIT_DEEP_N sets the chain length: the default, 200,000, is far past
 * what recursion on an 8 MB stack survives and keeps the test fast; 1000000 passes too (slower). */
#include "frit.h"

#include "check.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

static long deep_n(void) {
  const char *e = getenv("FRIT_DEEP_N");
  long n = e ? atol(e) : 200000;
  return n > 10 ? n : 10;
}

/* Runs a printer into /dev/null-like sink: only the status matters. */
static frit_status print_to_null(frit_ctx *ctx, frit_status (*pr)(frit_ctx *, frit_uop *, FILE *), frit_uop *root) {
  FILE *f = fopen("/dev/null", "w");
  if (!f) return FRIT_ERR_RUNTIME;
  frit_status st = pr(ctx, root, f);
  fclose(f);
  return st;
}

/* x + x + 1 + x + 1 ... (left-deep: each node's first source is the previous one), n adds:
 * (n+1)/2 ... the value is x*(1 + ceil(n/2)) + floor(n/2). */
static void test_left_chain(long n) {
  frit_ctx *ctx = frit_ctx_new();
  frit_uop *x = frit_var(ctx, "x", 0, 10), *one = frit_const_int(ctx, FRIT_I64, 1), *e = x;
  for (long i = 0; i < n && e; i++) e = frit_binary(ctx, FRIT_OP_ADD, e, (i & 1) ? one : x);
  CHECK(e != NULL);
  if (!e) return frit_ctx_free(ctx);
  int64_t want = 3 * (1 + (n + 1) / 2) + n / 2;
  CHECK_EQ_INT(frit_verify(ctx, e), FRIT_OK);
  CHECK_EQ_INT(print_to_null(ctx, frit_print_tree, e), FRIT_OK);
  CHECK_EQ_INT(print_to_null(ctx, frit_print_listing, e), FRIT_OK);
  const char *c = frit_render_c_expr(ctx, e);
  CHECK(c != NULL);
  const char *ir = frit_ir_to_string(ctx, e);
  CHECK(ir != NULL);
  CHECK(ir && frit_parse_ir(ctx, ir) == e); /* the same nodes, interned again */
  frit_binding b = {"x", 3};
  frit_scalar out[FRIT_MAX_LANES];
  CHECK_EQ_INT(frit_interpret(ctx, e, NULL, NULL, 0, &b, 1, out), FRIT_OK);
  CHECK_EQ_INT(out[0].i, want);
  frit_uop *s = frit_simplify(ctx, e);
  CHECK(s != NULL);
  if (s) {
    CHECK(frit_uop_op(s) == FRIT_OP_ADD || frit_uop_op(s) == FRIT_OP_MUL);
    CHECK_EQ_INT(frit_interpret(ctx, s, NULL, NULL, 0, &b, 1, out), FRIT_OK);
    CHECK_EQ_INT(out[0].i, want);
  }
  frit_ctx_free(ctx);
}

/* Right-deep and unary chains: 1 - (2 - (3 - ... x)) and ~(-(~(-x))). */
static void test_right_and_unary_chains(long n) {
  frit_ctx *ctx = frit_ctx_new();
  frit_uop *x = frit_var(ctx, "x", 0, 10), *e = x;
  int64_t v = 3; /* the value at x = 3, wrapping like i64 */
  for (long i = 0; i < n && e; i++) {
    frit_uop *c = frit_const_int(ctx, FRIT_I64, i % 7);
    e = frit_binary(ctx, FRIT_OP_SUB, c, e);
    v = (int64_t)((uint64_t)(i % 7) - (uint64_t)v);
  }
  frit_uop *u = x;
  for (long i = 0; i < n && u; i++) u = frit_unary(ctx, (i & 1) ? FRIT_OP_NOT : FRIT_OP_NEG, u);
  int64_t uv = 3;
  /* ~(-y) == y - 1: each NEG then NOT pair subtracts one */
  uv = n % 2 ? -(uv - n / 2) : uv - n / 2;
  CHECK(e && u);
  if (!e || !u) return frit_ctx_free(ctx);
  frit_uop *both = frit_binary(ctx, FRIT_OP_XOR, e, u);
  CHECK_EQ_INT(frit_verify(ctx, both), FRIT_OK);
  CHECK_EQ_INT(print_to_null(ctx, frit_print_ir, both), FRIT_OK);
  frit_binding b = {"x", 3};
  frit_scalar out[FRIT_MAX_LANES];
  CHECK_EQ_INT(frit_interpret(ctx, both, NULL, NULL, 0, &b, 1, out), FRIT_OK);
  CHECK_EQ_INT(out[0].i, v ^ uv);
  frit_uop *s = frit_simplify(ctx, both);
  CHECK(s != NULL);
  if (s) {
    CHECK_EQ_INT(frit_interpret(ctx, s, NULL, NULL, 0, &b, 1, out), FRIT_OK);
    CHECK_EQ_INT(out[0].i, v ^ uv);
  }
  frit_ctx_free(ctx);
}

/* A tensor graph of n chained elementwise ops: (x + 1) * 1 + 1 ... */
static frit_tensor *tensor_chain(frit_ctx *ctx, frit_tensor *x, long n) {
  frit_tensor *one = frit_scalar_f(ctx, FRIT_F32, 1.0), *y = x;
  for (long i = 0; i < n && y; i++) y = frit_binary_t(ctx, (i & 1) ? FRIT_BF_MUL : FRIT_BF_ADD, y, one);
  return y;
}

static void run_chain(long n, int interpret) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t d[1] = {5};
  frit_tensor *x = frit_input(ctx, "x", FRIT_F32, 1, d), *y = tensor_chain(ctx, x, n);
  CHECK(y != NULL);
  frit_compile_opts o = {0};
  o.interpret = interpret;
  o.threads = 1;
  frit_program *p = y ? frit_compile(ctx, &y, 1, &o) : NULL;
  if (!p) fprintf(stderr, "compile: %s\n", frit_error(ctx));
  CHECK(p != NULL);
  if (p) {
    float in[5] = {0, 1, 2, 3, -4}, res[5] = {0};
    void *ip[1] = {in}, *op[1] = {res};
    CHECK_EQ_INT(frit_program_run(p, ip, op, NULL, 0), FRIT_OK);
    int bad = 0;
    for (int i = 0; i < 5; i++) bad += res[i] != in[i] + (float)((n + 1) / 2);
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(frit_program_print(p, "linear", -1, fopen("/dev/null", "w")), FRIT_OK);
  }
  frit_ctx_free(ctx);
}

/* An explicit kernel whose body is a deep chain (the structured emitter and kernel lowering). */
static void test_kernel_chain(long n, int interpret) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t d[1] = {6};
  frit_tensor *a = frit_input(ctx, "a", FRIT_F32, 1, d), *z = frit_zeros(ctx, FRIT_F32, 1, d), *i = NULL;
  CHECK_EQ_INT(frit_kernel_begin_static(ctx, "deep", 1, d, &i), FRIT_OK);
  frit_tensor *v = tensor_chain(ctx, frit_kernel_load(ctx, a, 1, &i), n);
  CHECK_EQ_INT(frit_kernel_store(ctx, z, 1, &i, v), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_end(ctx), 1);
  frit_tensor *old = NULL, *nw = NULL;
  CHECK_EQ_INT(frit_kernel_written(ctx, 0, &old, &nw), FRIT_OK);
  frit_compile_opts o = {0};
  o.interpret = interpret;
  o.threads = 1;
  frit_program *p = nw ? frit_compile(ctx, &nw, 1, &o) : NULL;
  if (!p) fprintf(stderr, "compile: %s\n", frit_error(ctx));
  CHECK(p != NULL);
  if (p) {
    float in[6] = {0, 1, 2, 3, -4, 0.5f}, res[6] = {0};
    void *ip[1] = {in}, *op[1] = {res};
    CHECK_EQ_INT(frit_program_run(p, ip, op, NULL, 0), FRIT_OK);
    int bad = 0;
    for (int k = 0; k < 6; k++) bad += res[k] != in[k] + (float)((n + 1) / 2);
    CHECK_EQ_INT(bad, 0);
  }
  frit_ctx_free(ctx);
}

/* The rules parser refuses nesting past its limit with a message instead of recursing on. */
static void test_rules_nesting(void) {
  frit_ctx *ctx = frit_ctx_new();
  enum { DEPTH = 100000 };
  char *text = malloc(DEPTH * 6 + 64);
  size_t k = 0;
  for (int i = 0; i < DEPTH; i++) k += (size_t)sprintf(text + k, "(neg ");
  k += (size_t)sprintf(text + k, "x");
  for (int i = 0; i < DEPTH; i++) text[k++] = ')';
  k += (size_t)sprintf(text + k, " -> x\n");
  frit_ruleset *rs = frit_ruleset_parse(ctx, "deep", text, NULL, 0);
  CHECK(rs == NULL);
  CHECK_EQ_INT(frit_last_status(ctx), FRIT_ERR_PARSE);
  CHECK(strstr(frit_error(ctx), "nested") != NULL);
  free(text);
  frit_ctx_free(ctx);
}

int main(void) {
  long n = deep_n();
  test_left_chain(n);
  test_right_and_unary_chains(n);
  run_chain(n / 10, 1);
  /* compiled: deep enough for the emitters' explicit-stack paths; gcc's time grows faster than
   * linearly in a function's size, so the chain is shorter than the interpreted one */
  const char *e = getenv("FRIT_DEEP_CC_N");
  long ncc = e ? atol(e) : 3001;
  run_chain(ncc, 0);
  test_kernel_chain(n / 10, 1);
  test_kernel_chain(ncc, 0);
  test_rules_nesting();
  CHECK_DONE();
}
