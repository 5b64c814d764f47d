/* Tests of the node store: hash-consing, topological ids, dtypes, op table, errors. */
#include "frit.h"

#include "check.h"

#include <stdlib.h>

static void test_hash_consing(void) {
  frit_ctx *ctx = frit_ctx_new();
  frit_uop *x = frit_var(ctx, "x", 0, 15), *x2 = frit_var(ctx, "x", 0, 15);
  frit_uop *x_other = frit_var(ctx, "x", 0, 16);
  CHECK(x == x2);
  CHECK(x != x_other);
  frit_uop *four = frit_const_int(ctx, FRIT_I64, 4);
  frit_uop *a = frit_binary(ctx, FRIT_OP_MUL, x, four);
  frit_uop *b = frit_binary(ctx, FRIT_OP_MUL, x, frit_const_int(ctx, FRIT_I64, 4));
  CHECK(a == b);
  CHECK(frit_binary(ctx, FRIT_OP_MUL, four, x) != a); /* no implicit canonicalisation */
  /* constants normalise to their dtype: 260 as u8 is 4 */
  CHECK(frit_const_int(ctx, FRIT_U8, 260) == frit_const_int(ctx, FRIT_U8, 4));
  CHECK(frit_const_int(ctx, FRIT_I32, 4) != four);
  /* f32 constants are rounded, so two doubles rounding to the same float are one node */
  CHECK(frit_const_float(ctx, FRIT_F32, 0.1) == frit_const_float(ctx, FRIT_F32, (double)0.1f));
  CHECK(frit_const_float(ctx, FRIT_F64, 0.1) != frit_const_float(ctx, FRIT_F64, (double)0.1f));
  CHECK(frit_const_float(ctx, FRIT_F32, 0.0) != frit_const_float(ctx, FRIT_F32, -0.0));
  /* args with blobs intern by content */
  int64_t perm1[] = {1, 0}, perm2[] = {1, 0};
  frit_arg p1 = {.blob = perm1, .n = 2, .blob_kind = FRIT_BLOB_INTS};
  frit_arg p2 = {.blob = perm2, .n = 2, .blob_kind = FRIT_BLOB_INTS};
  frit_uop *buf = frit_uop_new(ctx, FRIT_OP_BUFFER, FRIT_F32, NULL, 0, &(frit_arg){.i0 = 0, .i1 = 16});
  CHECK(frit_uop_new(ctx, FRIT_OP_PERMUTE, FRIT_F32, &buf, 1, &p1) ==
        frit_uop_new(ctx, FRIT_OP_PERMUTE, FRIT_F32, &buf, 1, &p2));
  frit_ctx_free(ctx);
}

static void test_ids_topological(void) {
  frit_ctx *ctx = frit_ctx_new();
  frit_uop *v = frit_var(ctx, "v", -5, 5);
  for (int i = 0; i < 1000; i++) {
    frit_uop *c = frit_const_int(ctx, FRIT_I64, i % 7);
    v = frit_binary(ctx, i % 2 ? FRIT_OP_ADD : FRIT_OP_MUL, v, c);
  }
  size_t n = frit_node_count(ctx);
  CHECK(n > 1000);
  /* every source of every node has a smaller id: ids are a topological order */
  int bad = 0;
  for (frit_uop *stack[1] = {v}; stack[0];) {
    frit_uop *u = stack[0];
    stack[0] = NULL;
    for (int i = 0; i < frit_uop_nsrc(u); i++) {
      if (frit_uop_id(frit_uop_src(u, i)) >= frit_uop_id(u)) bad++;
      if (frit_uop_op(frit_uop_src(u, i)) != FRIT_OP_CONST) stack[0] = frit_uop_src(u, i);
    }
  }
  CHECK_EQ_INT(bad, 0);
  frit_ctx_free(ctx);
}

static void test_dtypes(void) {
  char buf[32];
  frit_dtype v4 = frit_dtype_vec(FRIT_F32, 4);
  CHECK_EQ_INT(frit_dtype_lanes(v4), 4);
  CHECK_EQ_INT(frit_dtype_kind(v4), FRIT_F32);
  CHECK(frit_dtype_is_float(v4) && !frit_dtype_is_int(v4));
  frit_dtype p = frit_dtype_ptr(v4, FRIT_ADDR_LOCAL);
  CHECK(frit_dtype_is_ptr(p) && frit_dtype_scalar(p) == v4);
  CHECK_EQ_STR(frit_dtype_name(p, buf, sizeof buf), "f32x4*local");
  CHECK_EQ_STR(frit_dtype_name(FRIT_BF16, buf, sizeof buf), "bf16");
  /* every scalar, vector and pointer form round-trips through its name */
  int roundtrips = 0, total = 0;
  for (int k = FRIT_BOOL; k < FRIT_SCALAR_KIND_COUNT_; k++) {
    int lanes_list[] = {1, 2, 16, FRIT_MAX_LANES};
    for (int li = 0; li < 4; li++) {
      frit_dtype d = frit_dtype_vec((frit_dtype)k, lanes_list[li]);
      frit_dtype forms[4] = {d, frit_dtype_ptr(d, FRIT_ADDR_GLOBAL), frit_dtype_ptr(d, FRIT_ADDR_LOCAL),
                             frit_dtype_ptr(d, FRIT_ADDR_REG)};
      for (int f = 0; f < 4; f++) {
        frit_dtype back = 0;
        const char *name = frit_dtype_name(forms[f], buf, sizeof buf);
        total++;
        if (frit_dtype_parse(name, strlen(name), &back) == FRIT_OK && back == forms[f]) roundtrips++;
      }
    }
  }
  CHECK_EQ_INT(roundtrips, total);
  frit_dtype out;
  CHECK(frit_dtype_parse("f33", 3, &out) == FRIT_ERR_PARSE);
  CHECK(frit_dtype_parse("i32x0", 5, &out) == FRIT_ERR_PARSE);
  CHECK(frit_dtype_parse("i32x65", 6, &out) == FRIT_ERR_PARSE);
  CHECK(frit_dtype_parse("i32*shared", 10, &out) == FRIT_ERR_PARSE);
  CHECK_EQ_INT(frit_dtype_bits(FRIT_BF16), 16);
  CHECK_EQ_INT(frit_dtype_bits(FRIT_U64), 64);
}

static void test_op_table(void) {
  CHECK_EQ_STR(frit_op_name(FRIT_OP_ADD), "ADD");
  CHECK_EQ_INT(frit_op_from_name("idiv", 4), FRIT_OP_IDIV);
  CHECK_EQ_INT(frit_op_from_name("define_global", 13), FRIT_OP_DEFINE_GLOBAL);
  CHECK_EQ_INT(frit_op_from_name("nope", 4), -1);
  CHECK(frit_op_flags(FRIT_OP_ADD) & FRIT_F_COMMUTATIVE);
  CHECK(!(frit_op_flags(FRIT_OP_SUB) & FRIT_F_COMMUTATIVE));
  CHECK(frit_op_flags(FRIT_OP_STORE) & FRIT_F_EFFECT);
  CHECK(frit_op_flags(FRIT_OP_RESHAPE) & FRIT_F_MOVEMENT);
  CHECK_EQ_INT(frit_op_max_src(FRIT_OP_SINK), -1);
  /* every op has a name that maps back to it */
  int ok = 0;
  for (int op = 0; op < FRIT_OP_COUNT_; op++) {
    const char *n = frit_op_name((frit_op)op);
    ok += frit_op_from_name(n, strlen(n)) == op;
  }
  CHECK_EQ_INT(ok, FRIT_OP_COUNT_);
}

static void test_errors(void) {
  frit_ctx *ctx = frit_ctx_new();
  frit_uop *i = frit_const_int(ctx, FRIT_I32, 1), *f = frit_const_float(ctx, FRIT_F32, 1.0);
  CHECK(frit_binary(ctx, FRIT_OP_ADD, i, f) == NULL);
  CHECK(frit_last_status(ctx) == FRIT_ERR_INVALID);
  CHECK(strstr(frit_error(ctx), "ADD") && strstr(frit_error(ctx), "i32") && strstr(frit_error(ctx), "f32"));
  CHECK(frit_unary(ctx, FRIT_OP_SQRT, i) == NULL);
  CHECK(strstr(frit_error(ctx), "SQRT") != NULL);
  CHECK(frit_binary(ctx, FRIT_OP_SHL, f, f) == NULL);
  CHECK(frit_uop_new(ctx, FRIT_OP_ADD, FRIT_I32, &i, 1, NULL) == NULL);
  CHECK(strstr(frit_error(ctx), "sources") != NULL);
  CHECK(frit_uop_new(ctx, FRIT_OP_ADD, FRIT_I64, (frit_uop *[]){i, i}, 2, NULL) == NULL); /* wrong result dtype */
  /* a failed builder feeding another keeps the first message */
  frit_clear_error(ctx);
  frit_uop *bad = frit_binary(ctx, FRIT_OP_ADD, i, f);
  char first[1024];
  snprintf(first, sizeof first, "%s", frit_error(ctx));
  CHECK(frit_binary(ctx, FRIT_OP_MUL, bad, i) == NULL);
  CHECK_EQ_STR(frit_error(ctx), first);
  CHECK(frit_var(ctx, "n", 5, 4) == NULL);
  CHECK(frit_uop_new(ctx, FRIT_OP_INDEX, FRIT_F32, (frit_uop *[]){i, i}, 2, NULL) == NULL);
  /* the context is still usable */
  frit_clear_error(ctx);
  frit_uop *ok = frit_binary(ctx, FRIT_OP_ADD, i, i);
  CHECK(ok != NULL && frit_last_status(ctx) == FRIT_OK);
  CHECK(frit_binary(ctx, FRIT_OP_CMPLT, i, i) != NULL && frit_uop_dtype(frit_binary(ctx, FRIT_OP_CMPLT, i, i)) == FRIT_BOOL);
  frit_uop *vi = frit_const_int(ctx, frit_dtype_vec(FRIT_I32, 4), 3);
  CHECK(frit_uop_dtype(frit_binary(ctx, FRIT_OP_CMPEQ, vi, vi)) == frit_dtype_vec(FRIT_BOOL, 4));
  frit_ctx_free(ctx);
}

static void test_many_nodes(void) {
  /* a million distinct nodes, then the same million again, which must all be found */
  frit_ctx *ctx = frit_ctx_new();
  frit_uop *x = frit_var(ctx, "x", 0, 100);
  frit_uop *first = NULL, *v = x;
  for (int i = 0; i < 500000; i++) v = frit_binary(ctx, FRIT_OP_ADD, v, frit_const_int(ctx, FRIT_I64, i));
  first = v;
  size_t n = frit_node_count(ctx);
  v = x;
  for (int i = 0; i < 500000; i++) v = frit_binary(ctx, FRIT_OP_ADD, v, frit_const_int(ctx, FRIT_I64, i));
  CHECK(v == first);
  CHECK_EQ_INT(frit_node_count(ctx), n);
  CHECK(n >= 1000000);
  frit_ctx_free(ctx);
}

int main(void) {
  test_hash_consing();
  test_ids_topological();
  test_dtypes();
  test_op_table();
  test_errors();
  test_many_nodes();
  CHECK_DONE();
}
