/* Tests of the textual IR: round trips of graphs using every op and dtype (identity in the same
 * context, equal text through a fresh one), exact constants, and parse errors with line numbers. */
#include "frit.h"

#include "check.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

static frit_uop *mk(frit_ctx *ctx, frit_op op, frit_dtype dt, frit_uop **src, int n, frit_arg a) {
  frit_uop *u = frit_uop_new(ctx, op, dt, src, n, &a);
  if (!u) fprintf(stderr, "build %s failed: %s\n", frit_op_name(op), frit_error(ctx));
  CHECK(u != NULL);
  return u;
}
#define MK(op, dt, ...) mk(ctx, FRIT_OP_##op, dt, (frit_uop *[]){__VA_ARGS__}, \
                           (int)(sizeof((frit_uop *[]){__VA_ARGS__}) / sizeof(frit_uop *)), frit_arg_none_())
#define MKA(op, dt, arg, ...) mk(ctx, FRIT_OP_##op, dt, (frit_uop *[]){__VA_ARGS__}, \
                                 (int)(sizeof((frit_uop *[]){__VA_ARGS__}) / sizeof(frit_uop *)), arg)
#define LEAF(op, dt, arg) mk(ctx, FRIT_OP_##op, dt, NULL, 0, arg)

static frit_arg frit_arg_none_(void) { return (frit_arg){{0}, 0, 0, NULL, 0, 0}; }
static frit_arg arg_i(int64_t i0, int64_t i1) { return (frit_arg){{0}, i0, i1, NULL, 0, 0}; }
static frit_arg arg_ints(const int64_t *v, uint32_t n, int64_t i0) {
  return (frit_arg){{0}, i0, 0, v, n, FRIT_BLOB_INTS};
}
static frit_arg arg_str(const char *s, uint32_t n) { return (frit_arg){{0}, 0, 0, s, n, FRIT_BLOB_STR}; }

static double bits_to_double(uint64_t b) {
  double d;
  memcpy(&d, &b, sizeof d);
  return d;
}

/* The constants whose exact bits the text must carry, in a fixed order. */
static int build_consts(frit_ctx *ctx, frit_uop **out) {
  int n = 0;
  out[n++] = frit_const_int(ctx, FRIT_I8, -128);
  out[n++] = frit_const_int(ctx, FRIT_I16, 12345);
  out[n++] = frit_const_int(ctx, FRIT_I32, -7);
  out[n++] = frit_const_int(ctx, FRIT_I64, INT64_MIN);
  out[n++] = frit_const_int(ctx, FRIT_I64, INT64_MAX);
  out[n++] = frit_const_int(ctx, FRIT_U8, 255);
  out[n++] = frit_const_int(ctx, FRIT_U16, 65535);
  out[n++] = frit_const_int(ctx, FRIT_U32, 4000000000);
  out[n++] = frit_const(ctx, FRIT_U64, (frit_scalar){.u = UINT64_MAX});
  out[n++] = frit_const_int(ctx, FRIT_BOOL, 1);
  out[n++] = frit_const_int(ctx, FRIT_BOOL, 0);
  out[n++] = frit_const_float(ctx, FRIT_F64, -0.0);
  out[n++] = frit_const_float(ctx, FRIT_F64, 0.0);
  out[n++] = frit_const_float(ctx, FRIT_F64, NAN);
  out[n++] = frit_const_float(ctx, FRIT_F64, -NAN);
  out[n++] = frit_const(ctx, FRIT_F64, (frit_scalar){.f = bits_to_double(0x7ff4000000000123ull)}); /* payload */
  out[n++] = frit_const_float(ctx, FRIT_F64, INFINITY);
  out[n++] = frit_const_float(ctx, FRIT_F64, -INFINITY);
  out[n++] = frit_const_float(ctx, FRIT_F64, 1e-300);
  out[n++] = frit_const_float(ctx, FRIT_F64, 4.9406564584124654e-324); /* smallest denormal */
  out[n++] = frit_const_float(ctx, FRIT_F64, 0.1);
  out[n++] = frit_const_float(ctx, FRIT_F64, 1.0 / 3.0);
  out[n++] = frit_const_float(ctx, FRIT_F64, 1.7976931348623157e308);
  out[n++] = frit_const_float(ctx, FRIT_F32, 0.1);
  out[n++] = frit_const_float(ctx, FRIT_F32, -0.0);
  out[n++] = frit_const_float(ctx, FRIT_F32, 1e-45); /* f32 denormal */
  out[n++] = frit_const_float(ctx, FRIT_F16, 65504.0);
  out[n++] = frit_const_float(ctx, FRIT_F16, 0.1);
  out[n++] = frit_const_float(ctx, FRIT_BF16, 3.14159);
  out[n++] = frit_const_float(ctx, frit_dtype_vec(FRIT_F32, 4), 2.5);
  out[n++] = frit_const_int(ctx, frit_dtype_vec(FRIT_I8, 16), -3);
  out[n++] = frit_const_int(ctx, frit_dtype_vec(FRIT_BOOL, 2), 1);
  return n;
}

static void test_consts_exact(void) {
  frit_ctx *a = frit_ctx_new(), *b = frit_ctx_new();
  frit_uop *ca[64];
  int n = build_consts(a, ca);
  frit_uop *root = frit_sink(a, ca, n);
  const char *text = frit_ir_to_string(a, root);
  CHECK(text != NULL);
  CHECK(frit_parse_ir(a, text) == root);
  frit_uop *rb = frit_parse_ir(b, text);
  CHECK(rb != NULL);
  if (rb) {
    CHECK_EQ_INT(frit_uop_nsrc(rb), n);
    for (int i = 0; i < n && i < frit_uop_nsrc(rb); i++) {
      frit_uop *x = frit_uop_src(rb, i);
      CHECK_EQ_INT(frit_uop_dtype(x), frit_uop_dtype(ca[i]));
      /* bit-exact, NaN payloads and the sign of zero included */
      CHECK(frit_uop_arg(x)->value.u == frit_uop_arg(ca[i])->value.u);
    }
    CHECK_EQ_STR(frit_ir_to_string(b, rb), text);
  }
  frit_ctx_free(a);
  frit_ctx_free(b);
}

/* A graph with every op of the table, on several dtypes, vectors and pointers. */
static frit_uop *build_all_ops(frit_ctx *ctx) {
  frit_dtype f32p = frit_dtype_ptr(FRIT_F32, FRIT_ADDR_GLOBAL);
  frit_dtype f32x4 = frit_dtype_vec(FRIT_F32, 4);
  frit_uop *cs[64];
  int nc = build_consts(ctx, cs);
  static const char weird[] = "we\"ird\\name\n\t\x01\x7f\xc3\xa9 end";
  frit_uop *x = frit_var(ctx, "x", -3, 100);
  frit_uop *y = LEAF(DEFINE_VAR, FRIT_I64, ((frit_arg){{0}, 0, 7, weird, sizeof weird - 1, FRIT_BLOB_STR}));
  frit_uop *one = frit_const_int(ctx, FRIT_I64, 1), *sixteen = frit_const_int(ctx, FRIT_I64, 16);
  frit_uop *fa = frit_const_float(ctx, FRIT_F32, 1.5), *fb = frit_const_float(ctx, FRIT_F32, -2.25);
  frit_uop *ia = frit_const_int(ctx, FRIT_I32, 7), *ib = frit_const_int(ctx, FRIT_I32, -3);
  frit_uop *t = frit_const_int(ctx, FRIT_BOOL, 1);
  frit_uop *vals[256];
  int nv = 0;
  for (int i = 0; i < nc; i++) vals[nv++] = cs[i];
  vals[nv++] = y;
  /* every ALU op */
  for (int op = 0; op < FRIT_OP_COUNT_; op++) {
    unsigned fl = frit_op_flags((frit_op)op);
    if (!(fl & FRIT_F_ALU)) continue;
    frit_uop *r = NULL;
    if (op == FRIT_OP_IDIV || op == FRIT_OP_SHL || op == FRIT_OP_SHR) r = frit_binary(ctx, (frit_op)op, ia, ib);
    else if (op == FRIT_OP_NOT) r = frit_unary(ctx, (frit_op)op, t);
    else if (op == FRIT_OP_AND || op == FRIT_OP_OR || op == FRIT_OP_XOR) r = frit_binary(ctx, (frit_op)op, ia, ib);
    else if (op == FRIT_OP_WHERE) r = frit_ternary(ctx, (frit_op)op, t, fa, fb);
    else if (op == FRIT_OP_MULACC) r = frit_ternary(ctx, (frit_op)op, fa, fb, fa);
    else if (op == FRIT_OP_REAL || op == FRIT_OP_IMAG || op == FRIT_OP_CONJ)
      r = frit_unary(ctx, (frit_op)op, frit_const(ctx, FRIT_C64, (frit_scalar){.c = {1.5, -0.25}}));
    else if (fl & FRIT_F_UNARY) r = frit_unary(ctx, (frit_op)op, fa);
    else r = frit_binary(ctx, (frit_op)op, fa, fb);
    if (!r) fprintf(stderr, "ALU %s: %s\n", frit_op_name((frit_op)op), frit_error(ctx));
    CHECK(r != NULL);
    vals[nv++] = r;
  }
  vals[nv++] = frit_binary(ctx, FRIT_OP_ADD, x, one);
  /* meta */
  frit_uop *vec = MK(VECTORIZE, f32x4, fa, fb, fa, fb);
  int64_t lanes[] = {3, 0};
  vals[nv++] = MKA(GEP, frit_dtype_vec(FRIT_F32, 2), arg_ints(lanes, 2, 0), vec);
  vals[nv++] = frit_cast(ctx, fa, FRIT_I16);
  vals[nv++] = MK(BITCAST, FRIT_U32, fa);
  vals[nv++] = MK(BIND, FRIT_I64, x, sixteen);
  vals[nv++] = MKA(SPECIAL, FRIT_I32, arg_str("gidx0", 5), ia);
  /* movement and tensor-level reduction */
  frit_uop *buf = LEAF(BUFFER, FRIT_F32, arg_i(0, 24));
  int64_t shape[] = {2, 3, 4};
  frit_uop *shp = MK(VECTORIZE, frit_dtype_vec(FRIT_I64, 3), frit_const_int(ctx, FRIT_I64, 2),
                     frit_const_int(ctx, FRIT_I64, 3), frit_const_int(ctx, FRIT_I64, 4));
  (void)shape;
  frit_uop *rs = MK(RESHAPE, FRIT_F32, buf, shp);
  int64_t perm[] = {2, 0, 1}, axes[] = {0, 2};
  frit_uop *pm = MKA(PERMUTE, FRIT_F32, arg_ints(perm, 3, 0), rs);
  frit_uop *ex = MK(EXPAND, FRIT_F32, pm, shp);
  frit_uop *pd = MK(PAD, FRIT_F32, ex, shp, shp);
  frit_uop *sh = MK(SHRINK, FRIT_F32, pd, shp, shp);
  frit_uop *fl = MKA(FLIP, FRIT_F32, arg_ints(axes, 2, 0), sh);
  vals[nv++] = MKA(REDUCE_AXIS, FRIT_F32, arg_ints(axes, 2, FRIT_OP_MAX), fl);
  int64_t none[1] = {0};
  vals[nv++] = MKA(FLIP, FRIT_F32, arg_ints(none, 0, 0), buf); /* an empty int list */
  vals[nv++] = MKA(KERNEL, FRIT_VOID, arg_str("", 0));        /* an empty string */
  frit_uop *len = frit_const_int(ctx, FRIT_I64, 5);
  frit_uop *iota = MK(IOTA, FRIT_I64, len);
  vals[nv++] = MKA(GATHER, FRIT_F32, arg_i(1, 0), fl, iota);
  vals[nv++] = MKA(SCAN, FRIT_F32, arg_i(FRIT_OP_ADD, 2), fl);
  frit_uop *upd = MKA(GATHER, FRIT_F32, arg_i(0, 0), fl, iota);
  vals[nv++] = MKA(SCATTER, FRIT_F32, arg_i(FRIT_ATOMIC_ADD, 0), fl, iota, upd);
  vals[nv++] = MK(CONTIGUOUS, FRIT_F32, fl);
  static const int64_t peers[2] = {1, 3};
  frit_arg coll = arg_ints(peers, 2, FRIT_COLL_SENDRECV);
  vals[nv++] = MKA(COLLECTIVE, FRIT_F32, coll, MK(CONTIGUOUS, FRIT_F32, fl));
  /* loops and memory */
  frit_uop *in = LEAF(DEFINE_GLOBAL, f32p, arg_i(0, 16));
  frit_uop *out = LEAF(DEFINE_GLOBAL, f32p, arg_i(1, -1));
  frit_uop *loc = LEAF(DEFINE_LOCAL, frit_dtype_ptr(FRIT_F32, FRIT_ADDR_LOCAL), arg_i(0, 16));
  frit_uop *reg = LEAF(DEFINE_REG, frit_dtype_ptr(f32x4, FRIT_ADDR_REG), arg_i(0, 1));
  frit_uop *r0 = frit_range(ctx, sixteen, 0, FRIT_AXIS_GLOBAL);
  frit_uop *r1 = frit_range(ctx, frit_const_int(ctx, FRIT_I64, 4), 1, FRIT_AXIS_REDUCE);
  frit_uop *gate = frit_binary(ctx, FRIT_OP_CMPLT, r0, frit_const_int(ctx, FRIT_I64, 8));
  frit_uop *idx_in = MK(INDEX, f32p, in, frit_binary(ctx, FRIT_OP_ADD, r0, r1), gate);
  frit_uop *ld = MK(LOAD, FRIT_F32, idx_in, fa);
  frit_uop *red = MKA(REDUCE, FRIT_F32, arg_i(FRIT_OP_ADD, 0), ld, r1);
  frit_uop *idx_loc = MK(INDEX, frit_dtype_ptr(FRIT_F32, FRIT_ADDR_LOCAL), loc, r0);
  frit_uop *st_loc = MK(STORE, FRIT_VOID, idx_loc, red);
  frit_uop *bar = MK(BARRIER, FRIT_VOID, st_loc);
  frit_uop *ld2 = MK(LOAD, FRIT_F32, MK(INDEX, frit_dtype_ptr(FRIT_F32, FRIT_ADDR_LOCAL), MK(AFTER, frit_dtype_ptr(FRIT_F32, FRIT_ADDR_LOCAL), loc, bar), r0), bar);
  frit_uop *idx_out = MK(INDEX, f32p, out, r0);
  frit_uop *at = MKA(ATOMIC, FRIT_F32, arg_i(FRIT_ATOMIC_MAX, 0), idx_out, ld2);
  frit_uop *cas = MK(ATOMIC_CAS, FRIT_F32, idx_out, fa, fb, at);
  frit_uop *st = MK(STORE, FRIT_VOID, idx_out, cas, at);
  frit_uop *regst = MK(STORE, FRIT_VOID, MK(INDEX, frit_dtype_ptr(f32x4, FRIT_ADDR_REG), reg, frit_const_int(ctx, FRIT_I64, 0)), vec);
  frit_uop *grp = MK(GROUP, FRIT_VOID, st, regst);
  frit_uop *iff = MK(IF, FRIT_VOID, gate, grp, bar);
  frit_uop *end = MK(END, FRIT_VOID, iff, r0);
  vals[nv++] = MKA(KERNEL, FRIT_VOID, arg_str("k\"0", 3), end);
  /* shader-like code: an explicit kernel (element addresses, numbered reads, an inner loop with
   * break/continue) and a host loop with one carried value */
  frit_uop *rk = frit_range(ctx, len, 2, FRIT_AXIS_LOOP);
  frit_uop *addr = MK(INDEX, f32p, buf, rk); /* element address of a tensor-level node */
  frit_uop *rd = MKA(LOAD, FRIT_F32, arg_i(0, 1), addr);
  frit_uop *then_ = MK(SEQ, FRIT_VOID, MK(BREAK, FRIT_VOID, rk));
  frit_uop *else_ = MK(SEQ, FRIT_VOID, MK(CONTINUE, FRIT_VOID, rk));
  frit_uop *ifk = MK(IF, FRIT_VOID, frit_binary(ctx, FRIT_OP_CMPLT, rd, fa), then_, else_);
  frit_uop *atk = MKA(ATOMIC, FRIT_F32, arg_i(FRIT_ATOMIC_ADD, 2), addr, fa);
  frit_uop *seq = MK(SEQ, FRIT_VOID, rd, MK(STORE, FRIT_VOID, addr, rd), atk, ifk, MK(SEQ, FRIT_VOID));
  frit_uop *ek = MKA(KERNEL, FRIT_VOID, arg_str("ek", 2), MK(END, FRIT_VOID, seq, rk), buf);
  vals[nv++] = MK(AFTER, FRIT_F32, buf, ek);
  frit_uop *ivar = frit_var(ctx, "loop7", INT64_MIN, INT64_MAX);
  frit_uop *carry = MKA(CARRY, FRIT_F32, arg_i(7, 0), sixteen);
  frit_uop *next = frit_binary(ctx, FRIT_OP_ADD, carry, carry);
  frit_uop *loop = MKA(LOOP, FRIT_VOID, arg_i(1, 7), frit_const_int(ctx, FRIT_I64, 0), len, one, ivar, carry, buf, next,
                       frit_const_int(ctx, FRIT_BOOL, 0));
  vals[nv++] = MK(AFTER, FRIT_F32, carry, loop);
  return frit_sink(ctx, vals, nv);
}

static void test_all_ops_round_trip(void) {
  frit_ctx *a = frit_ctx_new(), *b = frit_ctx_new();
  frit_uop *root = build_all_ops(a);
  CHECK(root != NULL);
  if (!root) return;
  /* every op of the table occurs */
  bool seen[FRIT_OP_COUNT_] = {0};
  const char *text = frit_ir_to_string(a, root);
  CHECK(text != NULL);
  if (!text) return;
  for (int op = 0; op < FRIT_OP_COUNT_; op++) {
    char pat[48];
    snprintf(pat, sizeof pat, " = %s ", frit_op_name((frit_op)op));
    for (char *p = pat; *p; p++) *p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
    seen[op] = strstr(text, pat) != NULL;
    if (!seen[op]) fprintf(stderr, "op %s missing from the round-trip graph\n", frit_op_name((frit_op)op));
    CHECK(seen[op]);
  }
  size_t before = frit_node_count(a);
  CHECK(frit_parse_ir(a, text) == root);
  CHECK_EQ_INT(frit_node_count(a), before); /* nothing new: every line hash-consed to an old node */
  frit_uop *rb = frit_parse_ir(b, text);
  CHECK(rb != NULL);
  if (rb) {
    const char *text2 = frit_ir_to_string(b, rb);
    CHECK_EQ_STR(text2, text);
    CHECK(frit_parse_ir(b, text2) == rb);
  }
  /* the string from the first call is still valid after later calls */
  CHECK(strstr(text, "kernel") != NULL);
  frit_ctx_free(a);
  frit_ctx_free(b);
}

/* Handwritten text: names, comments, blank lines, symbolic i0/i1, whitespace. */
static void test_handwritten(void) {
  frit_ctx *ctx = frit_ctx_new();
  const char *text =
      "# a loop that doubles a buffer\n"
      "\n"
      "%in  = define_global f32* i0=0 i1=16   # input\n"
      "%out = define_global f32* i0=1 i1=16\n"
      "%n   = const i64 value=16\n"
      "%r   = range i64 (%n) i1=loop\n"
      "%v   = load f32 ( %in_idx )\n";
  CHECK(frit_parse_ir(ctx, text) == NULL); /* %in_idx is not defined */
  CHECK_EQ_INT(frit_last_status(ctx), FRIT_ERR_PARSE);
  CHECK(strstr(frit_error(ctx), "line 7") != NULL);
  CHECK(strstr(frit_error(ctx), "%in_idx") != NULL);
  const char *good =
      "%in  = define_global f32* i0=0 i1=16   # input\r\n"
      "%out = define_global f32* i0=1 i1=16\n"
      "\t%n = const i64 value=16\n"
      "%r   = range i64 (%n) i1=loop\n"
      "%ii  = index f32* (%in, %r)\n"
      "%v   = load f32 (%ii)\n"
      "%two = const f32 value=2\n"
      "%m   = mul f32 (%v, %two)\n"
      "%st  = store void (%ii, %m)\n"
      "%e   = end void (%st, %r)\n"
      "%red = reduce f32 (%v, %r) i0=max\n"
      "%s   = sink void (%e, %red)\n";
  frit_uop *s = frit_parse_ir(ctx, good);
  CHECK(s != NULL);
  if (s) {
    CHECK_EQ_INT(frit_uop_op(s), FRIT_OP_SINK);
    frit_uop *e = frit_uop_src(s, 0), *red = frit_uop_src(s, 1);
    frit_uop *r = frit_uop_src(e, 1);
    CHECK_EQ_INT(frit_uop_op(r), FRIT_OP_RANGE);
    CHECK_EQ_INT(frit_uop_arg(r)->i1, FRIT_AXIS_LOOP);
    CHECK_EQ_INT(frit_uop_arg(red)->i0, FRIT_OP_MAX);
    /* the same graph built through the API is the same node */
    frit_dtype f32p = frit_dtype_ptr(FRIT_F32, FRIT_ADDR_GLOBAL);
    frit_uop *in = LEAF(DEFINE_GLOBAL, f32p, arg_i(0, 16));
    frit_uop *rr = frit_range(ctx, frit_const_int(ctx, FRIT_I64, 16), 0, FRIT_AXIS_LOOP);
    CHECK(rr == r);
    frit_uop *ii = MK(INDEX, f32p, in, rr);
    frit_uop *v = MK(LOAD, FRIT_F32, ii);
    frit_uop *m = frit_binary(ctx, FRIT_OP_MUL, v, frit_const_float(ctx, FRIT_F32, 2.0));
    frit_uop *e2 = MK(END, FRIT_VOID, MK(STORE, FRIT_VOID, ii, m), rr);
    CHECK(e2 == e);
  }
  /* numeric and named forms of i0 read the same */
  char buf[256];
  snprintf(buf, sizeof buf, "%%0 = const f32 value=1\n%%1 = reduce f32 (%%0) i0=%d\n", (int)FRIT_OP_MAX);
  frit_uop *r1 = frit_parse_ir(ctx, buf);
  CHECK(r1 != NULL && r1 == frit_parse_ir(ctx, "%0 = const f32 value=1\n%1 = reduce f32 (%0) i0=MAX"));
  /* hex floats and bool spellings read too */
  CHECK(frit_parse_ir(ctx, "%a = const f64 value=0x1.8p+1") == frit_const_float(ctx, FRIT_F64, 3.0));
  CHECK(frit_parse_ir(ctx, "%a = const bool value=true") == frit_const_int(ctx, FRIT_BOOL, 1));
  CHECK(frit_parse_ir(ctx, "%a = const bool value=0") == frit_const_int(ctx, FRIT_BOOL, 0));
  frit_ctx_free(ctx);
}

static void expect_error(const char *text, int line, const char *what) {
  frit_ctx *ctx = frit_ctx_new();
  frit_uop *u = frit_parse_ir(ctx, text);
  CHECK(u == NULL);
  CHECK_EQ_INT(frit_last_status(ctx), FRIT_ERR_PARSE);
  char want[32];
  snprintf(want, sizeof want, "line %d:", line);
  const char *msg = frit_error(ctx);
  if (!strstr(msg, want) || !strstr(msg, what))
    fprintf(stderr, "  text %s\n  error \"%s\", expected \"%s\" and \"%s\"\n", text, msg, want, what);
  CHECK(strstr(msg, want) != NULL);
  CHECK(strstr(msg, what) != NULL);
  frit_ctx_free(ctx);
}

static void test_parse_errors(void) {
  expect_error("", 1, "no node");
  expect_error("# only a comment\n\n", 2, "no node");
  expect_error("%0 = const i64 value=1\n%1 = add i64 (%0, %9)\n", 2, "undefined node %9");
  expect_error("%0 = frob i64\n", 1, "expected an op name");
  expect_error("%0 = const i65 value=1\n", 1, "expected a dtype");
  expect_error("%0 const i64 value=1\n", 1, "expected '='");
  expect_error("0 = const i64 value=1\n", 1, "expected '%name ='");
  expect_error("%0 = const i64 value=abc\n", 1, "bad value 'abc'");
  expect_error("%0 = const u8 value=-1\n", 1, "bad value");
  expect_error("%0 = const i64 value=99999999999999999999\n", 1, "bad value");
  expect_error("%0 = const f32 value=1.5x\n", 1, "bad value");
  expect_error("%0 = const i64 value=1 value=2\n", 1, "given twice");
  expect_error("%0 = const i64 colour=1\n", 1, "unknown field 'colour'");
  expect_error("%0 = const i64 value=1\n%0 = const i64 value=2\n", 2, "defined twice");
  expect_error("%0 = const i64 value=1\n%1 = range i64 (%0 %0)\n", 2, "expected ',' or ')'");
  expect_error("%0 = const i64 value=1\n%1 = range i64 (%0) i1=sideways\n", 2, "bad i1 'sideways'");
  expect_error("%0 = define_var i64 i0=0 i1=1 str=\"abc\n", 1, "unterminated string");
  expect_error("%0 = define_var i64 i0=0 i1=1 str=\"a\\qb\"\n", 1, "unknown escape");
  expect_error("%0 = define_var i64 i0=0 i1=1 str=\"a\\x4\"\n", 1, "two hex digits");
  expect_error("%0 = buffer f32 ints=[1, x]\n", 1, "expected an integer");
  expect_error("%0 = buffer f32 ints=[1 2]\n", 1, "expected ',' or ']'");
  /* errors of node construction carry the line and frit_uop_new's message */
  expect_error("%a = const i64 value=1\n# comment\n%b = const i32 value=1\n%c = add i64 (%a, %b)\n", 4, "op ADD");
  expect_error("%a = const i64 value=1\n%b = add i64 (%a)\n", 2, "sources");
  expect_error("%a = define_var i64 i0=5 i1=1 str=\"x\"\n", 1, "DEFINE_VAR");
}

/* A 100k-deep chain round-trips without recursion. */
static void test_deep_chain(void) {
  frit_ctx *a = frit_ctx_new(), *b = frit_ctx_new();
  frit_uop *x = frit_var(a, "x", 0, 10), *one = frit_const_int(a, FRIT_I64, 1);
  for (int i = 0; i < 100000; i++) x = frit_binary(a, FRIT_OP_ADD, x, one);
  const char *text = frit_ir_to_string(a, x);
  CHECK(text != NULL);
  CHECK(frit_parse_ir(a, text) == x);
  frit_uop *y = frit_parse_ir(b, text);
  CHECK(y != NULL && frit_uop_op(y) == FRIT_OP_ADD);
  CHECK_EQ_INT(frit_node_count(b), 100002);
  frit_ctx_free(a);
  frit_ctx_free(b);
}

int main(void) {
  test_consts_exact();
  test_all_ops_round_trip();
  test_handwritten();
  test_parse_errors();
  test_deep_chain();
  CHECK_DONE();
}
