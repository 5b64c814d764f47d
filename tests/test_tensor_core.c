/* Tests of the tensor frontend core: numpy dtype promotion and ufunc result dtypes (tables from
 * numpy), shapes and broadcasting, error messages, graph structure, and values computed through
 * frit_compile (interpreter) against numpy tables and C arithmetic. */
#include "frit.h"
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tensor_np_tables.h"

#include "ir/uop.h"
#include "ir/walk.h"
#include "tensor/shape.h"

static const char NP_CODES[] = "?bhilBHILefd";
static const frit_dtype NP12[12] = {FRIT_BOOL, FRIT_I8,  FRIT_I16, FRIT_I32, FRIT_I64, FRIT_U8,
                                    FRIT_U16,  FRIT_U32, FRIT_U64, FRIT_F16, FRIT_F32, FRIT_F64};

static frit_dtype np_dt(char c) {
  const char *p = strchr(NP_CODES, c);
  return p ? NP12[p - NP_CODES] : FRIT_VOID;
}

/* ---------- dtype tables ---------- */

static void test_promote(void) {
  for (int i = 0; i < 12; i++)
    for (int j = 0; j < 12; j++) {
      frit_dtype want = np_dt(np_promote[i][j]), got = frit_promote(NP12[i], NP12[j]);
      if (got != want) fprintf(stderr, "promote %c %c: got %u want %u\n", NP_CODES[i], NP_CODES[j], got, want);
      CHECK_EQ_INT(got, want);
    }
  /* bf16 ranks like f16 (brief): with 8-bit ints it stays, wider ints need f32/f64, f16 -> f32 */
  const frit_dtype bf_with[12] = {FRIT_BF16, FRIT_BF16, FRIT_F32, FRIT_F64, FRIT_F64, FRIT_BF16,
                                  FRIT_F32,  FRIT_F64,  FRIT_F64, FRIT_F32, FRIT_F32, FRIT_F64};
  for (int i = 0; i < 12; i++) {
    CHECK_EQ_INT(frit_promote(FRIT_BF16, NP12[i]), bf_with[i]);
    CHECK_EQ_INT(frit_promote(NP12[i], FRIT_BF16), bf_with[i]);
  }
  CHECK_EQ_INT(frit_promote(FRIT_BF16, FRIT_BF16), FRIT_BF16);
}

static void test_ufunc_dtypes(void) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t d[1] = {2};
  for (int f = 0; f < FRIT_UF_COUNT_; f++)
    for (int k = 0; k < 12; k++) {
      char want = np_unary[f][k];
      if (want == '-') continue;
      frit_tensor *x = frit_input(ctx, "x", NP12[k], 1, d);
      frit_tensor *r = frit_unary_t(ctx, (frit_ufunc)f, x);
      if (want == 'x') {
        CHECK(r == NULL);
        CHECK(frit_last_status(ctx) == FRIT_ERR_INVALID);
        CHECK(strstr(frit_error(ctx), frit_ufunc_name((frit_ufunc)f)) != NULL);
      } else {
        if (!r || frit_tensor_dtype(r) != np_dt(want))
          fprintf(stderr, "ufunc %s on %c: got %u want %c (%s)\n", frit_ufunc_name((frit_ufunc)f), NP_CODES[k],
                  r ? frit_tensor_dtype(r) : 0, want, frit_error(ctx));
        CHECK(r && frit_tensor_dtype(r) == np_dt(want));
        CHECK(r && frit_tensor_ndim(r) == 1 && frit_tensor_dim_static(r, 0) == 2);
      }
      frit_clear_error(ctx);
    }
  /* not in numpy: rsqrt/sigmoid/gelu/erf follow the float loops; relu keeps the dtype */
  frit_tensor *xi = frit_input(ctx, "xi", FRIT_I16, 1, d), *xb = frit_input(ctx, "xb", FRIT_BF16, 1, d);
  CHECK_EQ_INT(frit_tensor_dtype(frit_unary_t(ctx, FRIT_UF_SIGMOID, xi)), FRIT_F32);
  CHECK_EQ_INT(frit_tensor_dtype(frit_unary_t(ctx, FRIT_UF_GELU, xb)), FRIT_BF16);
  CHECK_EQ_INT(frit_tensor_dtype(frit_unary_t(ctx, FRIT_UF_RELU, xi)), FRIT_I16);
  CHECK_EQ_INT(frit_tensor_dtype(frit_unary_t(ctx, FRIT_UF_ERF, xb)), FRIT_BF16);
  CHECK_EQ_INT(frit_tensor_dtype(frit_unary_t(ctx, FRIT_UF_SQRT, xb)), FRIT_BF16);
  frit_ctx_free(ctx);
}

static void test_bfunc_dtypes(void) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t d[1] = {3};
  frit_tensor *in[12];
  for (int k = 0; k < 12; k++) in[k] = frit_input(ctx, "x", NP12[k], 1, d);
  for (int f = 0; f < FRIT_BF_COUNT_; f++)
    for (int i = 0; i < 12; i++)
      for (int j = 0; j < 12; j++) {
        char want = np_binary[f][i][j];
        frit_tensor *r = frit_binary_t(ctx, (frit_bfunc)f, in[i], in[j]);
        if (want == 'x') {
          if (r) fprintf(stderr, "bfunc %s %c %c: expected an error\n", frit_bfunc_name((frit_bfunc)f), NP_CODES[i], NP_CODES[j]);
          CHECK(r == NULL && frit_last_status(ctx) == FRIT_ERR_INVALID);
        } else {
          if (!r || frit_tensor_dtype(r) != np_dt(want))
            fprintf(stderr, "bfunc %s %c %c: got %u want %c (%s)\n", frit_bfunc_name((frit_bfunc)f), NP_CODES[i],
                    NP_CODES[j], r ? frit_tensor_dtype(r) : 0, want, frit_error(ctx));
          CHECK(r && frit_tensor_dtype(r) == np_dt(want));
        }
        frit_clear_error(ctx);
      }
  frit_ctx_free(ctx);
}

/* ---------- shapes, errors, structure ---------- */

static const char *shp(frit_ctx *ctx, frit_tensor *t) { return t ? frit_tensor_shape_str(ctx, t) : "NULL"; }

/* Every node reachable from t is a Contract-1 op with a well-formed shape. */
static bool contract1(frit_ctx *ctx, frit_tensor *t) {
  size_t n;
  frit_uop **nodes = frit_walk_topo(frit_tensor_uop(t), &n);
  bool ok = nodes != NULL;
  for (size_t i = 0; ok && i < n; i++) {
    frit_op op = frit_uop_op(nodes[i]);
    unsigned fl = frit_op_flags(op);
    bool allowed = op == FRIT_OP_BUFFER || op == FRIT_OP_CONST || op == FRIT_OP_IOTA || op == FRIT_OP_DEFINE_VAR ||
                   op == FRIT_OP_CAST || op == FRIT_OP_BITCAST || op == FRIT_OP_CONTIGUOUS ||
                   op == FRIT_OP_REDUCE_AXIS || op == FRIT_OP_SCAN || (fl & (FRIT_F_ALU | FRIT_F_MOVEMENT));
    if (!allowed || !frit_shape_of(ctx, nodes[i])) {
      fprintf(stderr, "node %zu (%s) breaks contract 1: %s\n", i, frit_op_name(op), frit_error(ctx));
      ok = false;
    }
  }
  free(nodes);
  return ok;
}

static int count_op(frit_tensor *t, frit_op op) {
  size_t n;
  frit_uop **nodes = frit_walk_topo(frit_tensor_uop(t), &n);
  int c = 0;
  for (size_t i = 0; i < n; i++) c += frit_uop_op(nodes[i]) == op;
  free(nodes);
  return c;
}

static void test_shapes(void) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t d315[3] = {3, 1, 5}, d45[2] = {4, 5}, d23[2] = {2, 3}, d4[1] = {4}, d234[3] = {2, 3, 4};
  frit_tensor *a = frit_input(ctx, "a", FRIT_F32, 3, d315), *b = frit_input(ctx, "b", FRIT_I64, 2, d45);
  CHECK_EQ_INT(frit_uop_arg(frit_tensor_uop(a))->i0, 0);
  CHECK_EQ_INT(frit_uop_arg(frit_tensor_uop(b))->i0, 1);
  frit_tensor *s = frit_binary_t(ctx, FRIT_BF_ADD, a, b);
  CHECK_EQ_STR(shp(ctx, s), "(3, 4, 5)");
  CHECK_EQ_INT(frit_tensor_dtype(s), FRIT_F64);
  CHECK(contract1(ctx, s));
  CHECK(count_op(s, FRIT_OP_EXPAND) == 2 && count_op(s, FRIT_OP_CAST) == 2);

  /* errors name the op, shapes and dtypes */
  frit_tensor *c = frit_input(ctx, "c", FRIT_F32, 2, d23), *e = frit_input(ctx, "e", FRIT_I64, 1, d4);
  CHECK(frit_binary_t(ctx, FRIT_BF_ADD, c, e) == NULL);
  CHECK_EQ_STR(frit_error(ctx), "op add: shapes (2, 3) and (4,), dtypes f32 and i64: operands could not be broadcast together");
  /* a NULL argument keeps the first error */
  CHECK(frit_unary_t(ctx, FRIT_UF_EXP, frit_binary_t(ctx, FRIT_BF_MUL, NULL, c)) == NULL);
  CHECK(strstr(frit_error(ctx), "op add:") == frit_error(ctx));
  frit_clear_error(ctx);

  /* scalars: 0-d, broadcast by RESHAPE + EXPAND */
  frit_tensor *two = frit_scalar_f(ctx, FRIT_F32, 2.0);
  CHECK_EQ_STR(shp(ctx, two), "()");
  frit_tensor *m = frit_binary_t(ctx, FRIT_BF_MUL, c, two);
  CHECK_EQ_STR(shp(ctx, m), "(2, 3)");
  CHECK(count_op(m, FRIT_OP_RESHAPE) == 1 && count_op(m, FRIT_OP_EXPAND) == 1 && contract1(ctx, m));

  /* symbolic dims */
  frit_uop *n = frit_var(ctx, "n", 1, 100), *k = frit_var(ctx, "k", 1, 100);
  frit_uop *dn3[2] = {n, frit_const_int(ctx, FRIT_I64, 3)}, *dn1[2] = {n, frit_const_int(ctx, FRIT_I64, 1)};
  frit_uop *d1n[2] = {frit_const_int(ctx, FRIT_I64, 1), n}, *dk3[2] = {k, dn3[1]};
  frit_tensor *xn = frit_input_sym(ctx, "xn", FRIT_F32, 2, dn3);
  CHECK_EQ_STR(shp(ctx, frit_binary_t(ctx, FRIT_BF_SUB, xn, frit_input(ctx, "v", FRIT_F32, 1, (int64_t[]){3}))), "(n, 3)");
  frit_tensor *outer = frit_binary_t(ctx, FRIT_BF_MUL, frit_input_sym(ctx, "p", FRIT_F32, 2, dn1),
                                     frit_input_sym(ctx, "q", FRIT_F32, 2, d1n));
  CHECK_EQ_STR(shp(ctx, outer), "(n, n)");
  CHECK(frit_binary_t(ctx, FRIT_BF_ADD, xn, frit_input_sym(ctx, "xk", FRIT_F32, 2, dk3)) == NULL);
  CHECK(strstr(frit_error(ctx), "shapes (n, 3) and (k, 3)") != NULL);
  frit_clear_error(ctx);
  frit_tensor *fl = frit_reshape_sym(ctx, xn, 1, (frit_uop *[]){frit_binary(ctx, FRIT_OP_MUL, n, dn3[1])});
  CHECK(fl && frit_tensor_dim_static(fl, 0) == -1);
  CHECK(frit_reshape_sym(ctx, xn, 1, &n) == NULL);
  frit_clear_error(ctx);
  frit_tensor *sl = frit_slice(ctx, xn, (int64_t[]){1, FRIT_SLICE_DEFAULT}, (int64_t[]){FRIT_SLICE_DEFAULT, FRIT_SLICE_DEFAULT},
                               (int64_t[]){1, 2});
  CHECK_EQ_STR(shp(ctx, sl), "(n - 1, 2)");
  CHECK(contract1(ctx, sl));

  /* reshape */
  frit_tensor *x = frit_input(ctx, "x", FRIT_I32, 3, d234);
  CHECK_EQ_STR(shp(ctx, frit_reshape(ctx, x, 2, (int64_t[]){-1, 4})), "(6, 4)");
  CHECK_EQ_STR(shp(ctx, frit_reshape(ctx, x, 0, NULL)), "NULL");
  CHECK_EQ_STR(frit_error(ctx), "op reshape: shape (2, 3, 4), dtype i32: cannot reshape array of size (24,) into shape ()");
  CHECK(frit_reshape(ctx, x, 2, (int64_t[]){5, -1}) == NULL);
  CHECK_EQ_STR(frit_error(ctx), "op reshape: shape (2, 3, 4), dtype i32: cannot reshape array of size 24 into shape (5, -1)");
  CHECK(frit_reshape(ctx, x, 2, (int64_t[]){-1, -1}) == NULL);
  frit_clear_error(ctx);

  /* movement shapes */
  CHECK_EQ_STR(shp(ctx, frit_transpose(ctx, x)), "(4, 3, 2)");
  CHECK_EQ_STR(shp(ctx, frit_permute(ctx, x, (int[]){1, -1, 0})), "(3, 4, 2)");
  CHECK(frit_permute(ctx, x, (int[]){1, 1, 0}) == NULL);
  CHECK(frit_permute(ctx, x, (int[]){1, 3, 0}) == NULL);
  CHECK_EQ_STR(frit_error(ctx), "op permute: shape (2, 3, 4), dtype i32: axis 3 is out of bounds for array of dimension 3");
  frit_clear_error(ctx);
  frit_tensor *u = frit_unsqueeze(ctx, x, -1);
  CHECK_EQ_STR(shp(ctx, u), "(2, 3, 4, 1)");
  CHECK_EQ_STR(shp(ctx, frit_unsqueeze(ctx, x, 0)), "(1, 2, 3, 4)");
  CHECK_EQ_STR(shp(ctx, frit_squeeze(ctx, frit_unsqueeze(ctx, u, 1), NULL, 0)), "(2, 3, 4)");
  CHECK(frit_squeeze(ctx, x, (int[]){0}, 1) == NULL);
  frit_clear_error(ctx);
  CHECK_EQ_STR(shp(ctx, frit_broadcast_to(ctx, c, 3, (int64_t[]){5, 2, 3})), "(5, 2, 3)");
  CHECK(frit_broadcast_to(ctx, c, 2, (int64_t[]){3, 3}) == NULL);
  frit_clear_error(ctx);
  frit_tensor *cc[3] = {c, frit_input(ctx, "c2", FRIT_I16, 2, (int64_t[]){2, 5}), c};
  frit_tensor *cat = frit_concat(ctx, cc, 3, -1);
  CHECK_EQ_STR(shp(ctx, cat), "(2, 11)");
  CHECK_EQ_INT(frit_tensor_dtype(cat), FRIT_F32);
  CHECK(frit_concat(ctx, cc, 3, 0) == NULL);
  CHECK(strstr(frit_error(ctx), "op concat: shapes (2, 3), (2, 5) and (2, 3), dtypes f32, i16 and f32") == frit_error(ctx));
  frit_clear_error(ctx);
  CHECK_EQ_STR(shp(ctx, frit_concat(ctx, cc, 3, FRIT_NO_AXIS)), "(22,)");
  frit_tensor *st[2] = {c, c};
  CHECK_EQ_STR(shp(ctx, frit_stack(ctx, st, 2, 1)), "(2, 2, 3)");
  CHECK_EQ_STR(shp(ctx, frit_stack(ctx, st, 2, -1)), "(2, 3, 2)");
  CHECK_EQ_STR(shp(ctx, frit_repeat(ctx, c, 3, 1)), "(2, 9)");
  CHECK_EQ_STR(shp(ctx, frit_repeat(ctx, c, 2, FRIT_NO_AXIS)), "(12,)");
  CHECK_EQ_STR(shp(ctx, frit_repeat(ctx, c, 0, 0)), "(0, 3)");
  CHECK_EQ_STR(shp(ctx, frit_tile(ctx, c, 1, (int64_t[]){2})), "(2, 6)");
  CHECK_EQ_STR(shp(ctx, frit_tile(ctx, c, 3, (int64_t[]){2, 1, 2})), "(2, 2, 6)");
  CHECK_EQ_STR(shp(ctx, frit_pad(ctx, c, (int64_t[]){1, 0}, (int64_t[]){2, 3}, FRIT_PAD_CONSTANT, 0)), "(5, 6)");
  CHECK_EQ_STR(shp(ctx, frit_pad(ctx, c, (int64_t[]){1, 5}, (int64_t[]){2, 7}, FRIT_PAD_REFLECT, 0)), "(5, 15)");
  CHECK_EQ_STR(shp(ctx, frit_flip(ctx, c, NULL, -1)), "(2, 3)");
  CHECK_EQ_STR(shp(ctx, frit_eye(ctx, 3, 5, 1, FRIT_F32)), "(3, 5)");
  CHECK_EQ_STR(shp(ctx, frit_arange(ctx, 0, 1, 0.1, FRIT_F64)), "(10,)");
  CHECK_EQ_STR(shp(ctx, frit_arange(ctx, 10, 1, -3, FRIT_I32)), "(3,)");
  CHECK_EQ_STR(shp(ctx, frit_arange(ctx, 5, 1, 1, FRIT_I32)), "(0,)");
  CHECK(frit_arange(ctx, 0, 1, 0, FRIT_I32) == NULL);
  frit_clear_error(ctx);
  CHECK_EQ_STR(shp(ctx, frit_contiguous(ctx, c)), "(2, 3)");
  CHECK(frit_unary_t(ctx, FRIT_UF_BITWISE_NOT, c) == NULL);
  CHECK_EQ_STR(frit_error(ctx), "op bitwise_not: shape (2, 3), dtype f32: not supported for floating-point dtypes");
  frit_clear_error(ctx);

  /* slice lengths against python's slicing */
  for (size_t i = 0; i < sizeof np_slices / sizeof np_slices[0]; i++) {
    const np_slice_case *t = &np_slices[i];
    frit_tensor *v = frit_input(ctx, "v", FRIT_F32, 1, (int64_t[]){t->n});
    int64_t s0 = t->start == -99 ? FRIT_SLICE_DEFAULT : t->start, s1 = t->stop == -99 ? FRIT_SLICE_DEFAULT : t->stop;
    int64_t sp = t->step;
    frit_tensor *r = frit_slice(ctx, v, &s0, &s1, &sp);
    CHECK(r && frit_tensor_dim_static(r, 0) == t->len);
  }
  frit_ctx_free(ctx);
}

/* frit_shape_of on hand-built nodes: deep chains without recursion, malformed nodes rejected. */
static void test_shape_of(void) {
  frit_ctx *ctx = frit_ctx_new();
  frit_tensor *x = frit_input(ctx, "x", FRIT_F32, 2, (int64_t[]){2, 3});
  frit_uop *u = frit_tensor_uop(x);
  for (int i = 0; i < 200000; i++) u = frit_unary(ctx, FRIT_OP_NEG, u);
  frit_tensor *t = frit_tensor_of(ctx, u);
  CHECK_EQ_STR(shp(ctx, t), "(2, 3)");
  frit_uop *c2 = frit_const_int(ctx, FRIT_I64, 2), *c3 = frit_const_int(ctx, FRIT_I64, 3), *c1 = frit_const_int(ctx, FRIT_I64, 1);
  frit_uop *x0 = frit_tensor_uop(x);
  frit_uop *bad_reshape = frit_uop_new(ctx, FRIT_OP_RESHAPE, FRIT_F32, (frit_uop *[]){x0, c2, c2}, 3, NULL);
  frit_uop *bad_expand = frit_uop_new(ctx, FRIT_OP_EXPAND, FRIT_F32, (frit_uop *[]){x0, c2, c1}, 3, NULL);
  frit_uop *ok_expand = frit_uop_new(ctx, FRIT_OP_EXPAND, FRIT_F32,
                                     (frit_uop *[]){frit_uop_new(ctx, FRIT_OP_RESHAPE, FRIT_F32, (frit_uop *[]){x0, c2, c3, c1}, 4, NULL), c2, c3, c3}, 4, NULL);
  frit_uop *bad_alu = frit_binary(ctx, FRIT_OP_ADD, x0, frit_const_float(ctx, FRIT_F32, 1.0));
  frit_uop *bad_shrink = frit_uop_new(ctx, FRIT_OP_SHRINK, FRIT_F32, (frit_uop *[]){x0, c1, c1, c2, frit_const_int(ctx, FRIT_I64, 4)}, 5, NULL);
  /* a RANGE is a 0-d kernel scalar (explicit kernels), but a loop-level REDUCE is no tensor */
  frit_uop *rng = frit_range(ctx, c3, 0, FRIT_AXIS_LOOP);
  frit_arg radd;
  memset(&radd, 0, sizeof radd);
  radd.i0 = FRIT_OP_ADD;
  frit_uop *red = frit_uop_new(ctx, FRIT_OP_REDUCE, FRIT_I64, (frit_uop *[]){rng, rng}, 2, &radd);
  CHECK(frit_tensor_of(ctx, bad_reshape) == NULL);
  CHECK(strstr(frit_error(ctx), "RESHAPE") != NULL);
  CHECK(frit_tensor_of(ctx, bad_expand) == NULL);
  CHECK_EQ_STR(shp(ctx, frit_tensor_of(ctx, ok_expand)), "(2, 3, 3)");
  CHECK(frit_tensor_of(ctx, bad_alu) == NULL);
  CHECK(frit_tensor_of(ctx, bad_shrink) == NULL);
  CHECK(frit_tensor_of(ctx, red) == NULL);
  CHECK(strstr(frit_error(ctx), "not a tensor-level op") != NULL);
  frit_ctx_free(ctx);
}

/* ---------- values through the interpreter ---------- */

/* Compiles outs (interpreter) and runs with the given inputs; false on failure (reported). */
static bool run(frit_ctx *ctx, frit_tensor *const *outs, int nout, void *const *ins, void *const *res) {
  frit_compile_opts o;
  memset(&o, 0, sizeof o);
  o.interpret = getenv("FRIT_TEST_COMPILED") ? 0 : 1; /* the interpreter is the default oracle */
  for (int i = 0; i < nout; i++)
    if (!outs[i]) {
      fprintf(stderr, "run: output %d is NULL: %s\n", i, frit_error(ctx));
      return false;
    }
  frit_program *p = frit_compile(ctx, outs, nout, &o);
  if (!p) {
    fprintf(stderr, "compile: %s\n", frit_error(ctx));
    return false;
  }
  frit_status st = frit_program_run(p, ins, res, NULL, 0);
  if (st != FRIT_OK) fprintf(stderr, "run: %s\n", frit_error(ctx));
  return st == FRIT_OK;
}

static bool same_f64(double a, double b) { return (isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b)); }

static void test_divmod_values(void) {
  frit_ctx *ctx = frit_ctx_new();
  enum { NA = sizeof np_fd_a / sizeof np_fd_a[0], NB = sizeof np_fd_b / sizeof np_fd_b[0] };
  frit_tensor *a = frit_input(ctx, "a", FRIT_F64, 2, (int64_t[]){NA, 1});
  frit_tensor *b = frit_input(ctx, "b", FRIT_F64, 1, (int64_t[]){NB});
  frit_tensor *outs[2] = {frit_binary_t(ctx, FRIT_BF_FLOORDIV, a, b), frit_binary_t(ctx, FRIT_BF_REMAINDER, a, b)};
  double q[NA * NB], r[NA * NB];
  if (run(ctx, outs, 2, (void *[]){(void *)np_fd_a, (void *)np_fd_b}, (void *[]){q, r}))
    for (int i = 0; i < NA; i++)
      for (int j = 0; j < NB; j++) {
        if (!same_f64(q[i * NB + j], np_floordiv[i][j]) || !same_f64(r[i * NB + j], np_remainder[i][j]))
          fprintf(stderr, "divmod(%g, %g): got %g %g, numpy %g %g\n", np_fd_a[i], np_fd_b[j], q[i * NB + j],
                  r[i * NB + j], np_floordiv[i][j], np_remainder[i][j]);
        CHECK(same_f64(q[i * NB + j], np_floordiv[i][j]));
        CHECK(same_f64(r[i * NB + j], np_remainder[i][j]));
      }
  /* i8: every pair, against floor division in double (exact for these magnitudes) */
  frit_tensor *x = frit_input(ctx, "x", FRIT_I8, 2, (int64_t[]){256, 1}), *y = frit_input(ctx, "y", FRIT_I8, 1, (int64_t[]){256});
  frit_tensor *o8[5] = {frit_binary_t(ctx, FRIT_BF_FLOORDIV, x, y), frit_binary_t(ctx, FRIT_BF_REMAINDER, x, y),
                        frit_binary_t(ctx, FRIT_BF_POW, x, y), frit_binary_t(ctx, FRIT_BF_LSHIFT, x, y),
                        frit_binary_t(ctx, FRIT_BF_RSHIFT, x, y)};
  int8_t xs[256], *res[5];
  for (int i = 0; i < 256; i++) xs[i] = (int8_t)(i - 128);
  for (int k = 0; k < 5; k++) res[k] = malloc(256 * 256);
  if (run(ctx, o8, 5, (void *[]){xs, xs}, (void *[]){res[0], res[1], res[2], res[3], res[4]})) {
    int bad = 0;
    for (int i = 0; i < 256; i++)
      for (int j = 0; j < 256; j++) {
        int av = xs[i], bv = xs[j];
        int wq, wr;
        if (bv == 0) wq = wr = 0;
        else {
          wq = (int)floor((double)av / bv);
          wr = av - wq * bv;
          wq = (int8_t)wq; /* -128 // -1 wraps */
        }
        int8_t wp; /* integer power by repeated multiplication, wrapping; negative exponents: 1/base */
        if (bv < 0) wp = (int8_t)(av == 1 ? 1 : av == -1 ? ((bv & 1) ? -1 : 1) : 0);
        else {
          uint8_t acc = 1;
          for (int t = 0; t < bv; t++) acc = (uint8_t)(acc * (uint8_t)av);
          wp = (int8_t)acc;
        }
        int8_t wl = bv >= 0 && bv < 8 ? (int8_t)(uint8_t)((unsigned)av << bv) : 0;
        int8_t wrs = bv >= 0 && bv < 8 ? (int8_t)(av >> bv) : (av < 0 ? -1 : 0);
        int8_t g[5] = {res[0][i * 256 + j], res[1][i * 256 + j], res[2][i * 256 + j], res[3][i * 256 + j], res[4][i * 256 + j]};
        if ((g[0] != (int8_t)wq || g[1] != (int8_t)wr || g[2] != wp || g[3] != wl || g[4] != wrs) && bad++ < 5)
          fprintf(stderr, "i8 %d,%d: got %d %d %d %d %d want %d %d %d %d %d\n", av, bv, g[0], g[1], g[2], g[3], g[4],
                  wq, wr, wp, wl, wrs);
      }
    CHECK_EQ_INT(bad, 0);
  }
  for (int k = 0; k < 5; k++) free(res[k]);
  frit_ctx_free(ctx);
}

static void test_unary_values(void) {
  frit_ctx *ctx = frit_ctx_new();
  enum { N = 16 };
  double xs[N] = {-2.5, -1.5, -0.5, -0.0, 0.0, 0.5, 1.5, 2.5, 1e-10, -1e-12, 3.0, -700, 710, NAN, INFINITY, -INFINITY};
  frit_tensor *x = frit_input(ctx, "x", FRIT_F64, 1, (int64_t[]){N});
  frit_ufunc fs[] = {FRIT_UF_SIGN, FRIT_UF_ROUND, FRIT_UF_LOG1P, FRIT_UF_EXPM1, FRIT_UF_SIGMOID, FRIT_UF_GELU,
                     FRIT_UF_RELU, FRIT_UF_ISNAN, FRIT_UF_ISINF, FRIT_UF_ABS, FRIT_UF_FLOOR, FRIT_UF_LOGICAL_NOT};
  enum { NF = sizeof fs / sizeof fs[0] };
  frit_tensor *outs[NF];
  for (int i = 0; i < NF; i++) outs[i] = frit_astype(ctx, frit_unary_t(ctx, fs[i], x), FRIT_F64);
  double res[NF][N];
  void *rp[NF];
  for (int i = 0; i < NF; i++) rp[i] = res[i];
  if (run(ctx, outs, NF, (void *[]){xs}, rp)) {
    for (int j = 0; j < N; j++) {
      double v = xs[j];
      double want[NF] = {v > 0 ? 1 : v < 0 ? -1 : v == 0 ? 0.0 : v, nearbyint(v), log1p(v), expm1(v),
                         1 / (1 + exp(-v)), 0.5 * v * (1 + erf(v / sqrt(2.0))), isnan(v) ? v : v > 0 ? v : 0.0,
                         isnan(v), isinf(v) != 0, fabs(v), floor(v), v == 0};
      for (int i = 0; i < NF; i++) {
        double g = res[i][j], w = want[i];
        bool ok = same_f64(g, w) || (fabs(g - w) <= 2e-15 * fabs(w) && fs[i] != FRIT_UF_SIGN && fs[i] != FRIT_UF_ROUND);
        if (!ok) fprintf(stderr, "%s(%g) = %.17g, want %.17g\n", frit_ufunc_name(fs[i]), v, g, w);
        CHECK(ok);
      }
    }
  }
  frit_ctx_free(ctx);
}

static void test_minmax_where_clip(void) {
  frit_ctx *ctx = frit_ctx_new();
  float a[4] = {1, NAN, -0.0f, 5}, b[3] = {0.0f, 2, NAN};
  frit_tensor *x = frit_input(ctx, "x", FRIT_F32, 2, (int64_t[]){4, 1}), *y = frit_input(ctx, "y", FRIT_F32, 1, (int64_t[]){3});
  frit_tensor *outs[4] = {frit_binary_t(ctx, FRIT_BF_MINIMUM, x, y), frit_binary_t(ctx, FRIT_BF_MAXIMUM, x, y),
                          frit_where(ctx, frit_binary_t(ctx, FRIT_BF_LT, x, y), x, frit_scalar_i(ctx, FRIT_I8, -7)),
                          frit_clip(ctx, x, frit_scalar_f(ctx, FRIT_F32, 0.5), frit_scalar_f(ctx, FRIT_F32, 2))};
  float mn[12], mx[12], wh[12], cl[4];
  if (run(ctx, outs, 4, (void *[]){a, b}, (void *[]){mn, mx, wh, cl})) {
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 3; j++) {
        float p = a[i], q = b[j];
        float wmn = isnan(p) || isnan(q) ? NAN : (p < q || (p == q && signbit(p))) ? p : q;
        float wmx = isnan(p) || isnan(q) ? NAN : (p > q || (p == q && !signbit(p))) ? p : q;
        CHECK(same_f64(mn[i * 3 + j], wmn) && same_f64(mx[i * 3 + j], wmx));
        CHECK(same_f64(wh[i * 3 + j], p < q ? p : -7.0f));
      }
    for (int i = 0; i < 4; i++) CHECK(same_f64(cl[i], isnan(a[i]) ? NAN : a[i] < 0.5f ? 0.5f : a[i] > 2 ? 2 : a[i]));
  }
  frit_ctx_free(ctx);
}

static void test_movement_values(void) {
  frit_ctx *ctx = frit_ctx_new();
  /* slices of arange(6) (and 0, 1 long) against python's index lists */
  int nslice = sizeof np_slices / sizeof np_slices[0];
  frit_tensor **outs = malloc((size_t)nslice * sizeof *outs);
  int64_t *res = calloc((size_t)nslice * 8, sizeof *res);
  void **rp = malloc((size_t)nslice * sizeof *rp);
  for (int i = 0; i < nslice; i++) {
    const np_slice_case *t = &np_slices[i];
    int64_t s0 = t->start == -99 ? FRIT_SLICE_DEFAULT : t->start, s1 = t->stop == -99 ? FRIT_SLICE_DEFAULT : t->stop;
    int64_t sp = t->step;
    /* pad the result with -1 to length 8 so every output has one size */
    frit_tensor *r = frit_slice(ctx, frit_arange(ctx, 0, t->n, 1, FRIT_I64), &s0, &s1, &sp);
    outs[i] = frit_pad(ctx, r, (int64_t[]){0}, (int64_t[]){8 - t->len}, FRIT_PAD_CONSTANT, -1);
    rp[i] = res + 8 * i;
  }
  if (run(ctx, outs, nslice, NULL, rp)) {
    int bad = 0;
    for (int i = 0; i < nslice; i++)
      for (int k = 0; k < 8; k++) {
        int64_t want = k < np_slices[i].len ? np_slices[i].idx[k] : -1;
        if (res[8 * i + k] != want && bad++ < 5)
          fprintf(stderr, "slice n=%d %d:%d:%d [%d] = %lld want %lld\n", np_slices[i].n, np_slices[i].start,
                  np_slices[i].stop, np_slices[i].step, k, (long long)res[8 * i + k], (long long)want);
      }
    CHECK_EQ_INT(bad, 0);
  }
  free(outs), free(res), free(rp);

  /* pad modes against numpy */
  frit_tensor *v = frit_arange(ctx, 1, 4, 1, FRIT_I64);
  frit_tensor *m2 = frit_reshape(ctx, frit_arange(ctx, 0, 12, 1, FRIT_I64), 2, (int64_t[]){3, 4});
  frit_tensor *po[3] = {frit_pad(ctx, v, (int64_t[]){5}, (int64_t[]){6}, FRIT_PAD_REFLECT, 0),
                        frit_pad(ctx, v, (int64_t[]){2}, (int64_t[]){3}, FRIT_PAD_EDGE, 0),
                        frit_pad(ctx, m2, (int64_t[]){2, 3}, (int64_t[]){1, 3}, FRIT_PAD_REFLECT, 0)};
  int64_t r1[14], r2[8], r3[60];
  if (run(ctx, po, 3, NULL, (void *[]){r1, r2, r3})) {
    CHECK(memcmp(r1, np_pad_reflect, sizeof r1) == 0);
    CHECK(memcmp(r2, np_pad_edge, sizeof r2) == 0);
    CHECK(memcmp(r3, np_pad_reflect2d, sizeof r3) == 0);
  }

  /* concat keeps every bit pattern (-0.0), stack/repeat/tile/flip/transpose by brute force */
  float fa[6] = {-0.0f, 1, 2, 3, 4, 5}, fb[4] = {6, -0.0f, NAN, 9};
  frit_tensor *A = frit_input(ctx, "A", FRIT_F32, 2, (int64_t[]){2, 3}), *B = frit_input(ctx, "B", FRIT_F32, 2, (int64_t[]){2, 2});
  frit_tensor *ab[2] = {A, B}, *aa[2] = {A, A};
  frit_tensor *mo[6] = {frit_concat(ctx, ab, 2, 1), frit_stack(ctx, aa, 2, 2), frit_repeat(ctx, A, 2, 1),
                        frit_tile(ctx, A, 2, (int64_t[]){2, 2}), frit_flip(ctx, A, (int[]){1}, 1), frit_transpose(ctx, A)};
  float c5[10], s12[12], rp12[12], t24[24], f6[6], tr6[6];
  if (run(ctx, mo, 6, (void *[]){fa, fb}, (void *[]){c5, s12, rp12, t24, f6, tr6})) {
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 5; j++) CHECK(same_f64(c5[i * 5 + j], j < 3 ? fa[i * 3 + j] : fb[i * 2 + j - 3]));
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 3; j++)
        for (int k = 0; k < 2; k++) CHECK(same_f64(s12[(i * 3 + j) * 2 + k], fa[i * 3 + j]));
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 6; j++) CHECK(same_f64(rp12[i * 6 + j], fa[i * 3 + j / 2]));
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 6; j++) CHECK(same_f64(t24[i * 6 + j], fa[(i % 2) * 3 + j % 3]));
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 3; j++) CHECK(same_f64(f6[i * 3 + j], fa[i * 3 + 2 - j]) && same_f64(tr6[j * 2 + i], fa[i * 3 + j]));
  }
  frit_ctx_free(ctx);
}

static void test_creation_values(void) {
  frit_ctx *ctx = frit_ctx_new();
  enum { N1 = sizeof np_arange_f32 / 8, N2 = sizeof np_arange_f64 / 8, N5 = sizeof np_linspace_f64 / 8 };
  frit_tensor *o[9] = {
      frit_astype(ctx, frit_arange(ctx, 0.1, 20, 0.3, FRIT_F32), FRIT_F64), frit_arange(ctx, -1.25, 3.0, 0.1, FRIT_F64),
      frit_astype(ctx, frit_arange(ctx, 0.5, 7, 1.5, FRIT_I32), FRIT_I64), frit_astype(ctx, frit_arange(ctx, 10, -3, -3, FRIT_I16), FRIT_I64),
      frit_linspace(ctx, -1, 2, 7, 1, FRIT_F64), frit_astype(ctx, frit_linspace(ctx, 0, 1, 5, 0, FRIT_F32), FRIT_F64),
      frit_astype(ctx, frit_linspace(ctx, -3, 10, 7, 1, FRIT_I32), FRIT_I64), frit_eye(ctx, 3, 4, -1, FRIT_I64),
      frit_full(ctx, FRIT_U8, 2, (int64_t[]){2, 2}, 300.7)};
  double a1[N1], a2[N2], l1[N5], l2[5];
  int64_t i1[5], i2[5], l3[7], ey[12];
  uint8_t fu[4];
  CHECK_EQ_INT(frit_tensor_dim_static(o[0], 0), N1);
  CHECK_EQ_INT(frit_tensor_dim_static(o[1], 0), N2);
  if (run(ctx, o, 9, NULL, (void *[]){a1, a2, i1, i2, l1, l2, l3, ey, fu})) {
    CHECK(memcmp(a1, np_arange_f32, sizeof a1) == 0);
    CHECK(memcmp(a2, np_arange_f64, sizeof a2) == 0);
    CHECK(memcmp(i1, np_arange_i32, sizeof i1) == 0);
    CHECK(memcmp(i2, np_arange_i16_neg, sizeof i2) == 0);
    CHECK(memcmp(l1, np_linspace_f64, sizeof l1) == 0);
    CHECK(memcmp(l2, np_linspace_noend_f32, sizeof l2) == 0);
    CHECK(memcmp(l3, np_linspace_i32, sizeof l3) == 0);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 4; j++) CHECK_EQ_INT(ey[i * 4 + j], j - i == -1);
    CHECK_EQ_INT(fu[3], 255); /* float -> u8 saturates */
  }
  frit_ctx_free(ctx);
}

/* ---------- random ---------- */

/* Reference Philox-4x32-10 (Salmon et al. 2011), checked against the Random123 known answers. */
static void philox_ref(uint32_t c[4], uint32_t k0, uint32_t k1) {
  for (int r = 0; r < 10; r++) {
    uint64_t p0 = (uint64_t)0xD2511F53u * c[0], p1 = (uint64_t)0xCD9E8D57u * c[2];
    uint32_t n[4] = {(uint32_t)(p1 >> 32) ^ c[1] ^ k0, (uint32_t)p1, (uint32_t)(p0 >> 32) ^ c[3] ^ k1, (uint32_t)p0};
    memcpy(c, n, sizeof n);
    k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
  }
}

static void test_random(void) {
  uint32_t kat0[4] = {0, 0, 0, 0};
  philox_ref(kat0, 0, 0);
  CHECK(kat0[0] == 0x6627e8d5u && kat0[1] == 0xe169c58du && kat0[2] == 0xbc57ac4cu && kat0[3] == 0x9b00dbd8u);
  uint32_t kat1[4] = {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u};
  philox_ref(kat1, 0xa4093822u, 0x299f31d0u);
  CHECK(kat1[0] == 0xd16cfe09u && kat1[1] == 0x94fdccebu && kat1[2] == 0x5001e420u && kat1[3] == 0x24126ea1u);

  frit_ctx *ctx = frit_ctx_new();
  enum { N = 2000 };
  uint64_t seed = 0x123456789abcdefull;
  frit_tensor *o[4] = {frit_rand_uniform(ctx, seed, FRIT_F32, 2, (int64_t[]){40, 50}, -1, 3),
                       frit_rand_uniform(ctx, seed, FRIT_F64, 1, (int64_t[]){N}, 0, 1),
                       frit_rand_normal(ctx, 7, FRIT_F64, 1, (int64_t[]){N}, 2, 0.5),
                       frit_rand_int(ctx, seed, FRIT_I8, 1, (int64_t[]){N}, -5, 7)};
  CHECK(contract1(ctx, o[0]));
  float u32[N];
  double u64[N], nv[N];
  int8_t ri[N];
  if (run(ctx, o, 4, NULL, (void *[]){u32, u64, nv, ri})) {
    int bad = 0, hist[12] = {0};
    double mean = 0, var = 0;
    for (int i = 0; i < N; i++) {
      uint32_t c[4] = {(uint32_t)i, 0, 0, 0};
      philox_ref(c, (uint32_t)seed, (uint32_t)(seed >> 32));
      float wu = (float)(c[0] >> 8) * 0x1p-24f * 4.0f + -1.0f;
      double wd = (double)(((uint64_t)(c[0] >> 5) << 26) | (c[1] >> 6)) * 0x1p-53;
      int wi = (int)((((uint64_t)c[0] << 32) | c[1]) % 12) - 5;
      bad += u32[i] != wu || u64[i] != wd || ri[i] != wi;
      hist[ri[i] + 5 < 0 || ri[i] + 5 > 11 ? 0 : ri[i] + 5]++;
      mean += nv[i];
    }
    CHECK_EQ_INT(bad, 0);
    for (int k = 0; k < 12; k++) CHECK(hist[k] > N / 24);
    mean /= N;
    for (int i = 0; i < N; i++) var += (nv[i] - mean) * (nv[i] - mean);
    var /= N - 1;
    CHECK(fabs(mean - 2) < 0.05 && fabs(sqrt(var) - 0.5) < 0.04);
  }
  CHECK(frit_rand_int(ctx, 1, FRIT_U8, 1, (int64_t[]){3}, -1, 5) == NULL);
  CHECK(frit_rand_uniform(ctx, 1, FRIT_I32, 1, (int64_t[]){3}, 0, 1) == NULL);
  frit_ctx_free(ctx);
}

int main(void) {
  test_promote();
  test_ufunc_dtypes();
  test_bfunc_dtypes();
  test_shapes();
  test_shape_of();
  test_divmod_values();
  test_unary_values();
  test_minmax_where_clip();
  test_movement_values();
  test_creation_values();
  test_random();
  CHECK_DONE();
}
