/* Tests of the verifier: valid programs pass; each kind of violation is caught and named. Nodes
 * that frit_uop_new refuses to build are made by corrupting a built node in a scratch context. */
#include "frit.h"
#include "ir/uop.h"

#include "check.h"

#include <stdlib.h>

static frit_uop *mk(frit_ctx *ctx, frit_op op, frit_dtype dt, frit_uop **src, int n, frit_arg a) {
  frit_uop *u = frit_uop_new(ctx, op, dt, src, n, &a);
  if (!u) fprintf(stderr, "build %s failed: %s\n", frit_op_name(op), frit_error(ctx));
  CHECK(u != NULL);
  return u;
}
#define SRCS(...) (frit_uop *[]){__VA_ARGS__}, (int)(sizeof((frit_uop *[]){__VA_ARGS__}) / sizeof(frit_uop *))
#define MK(op, dt, ...) mk(ctx, FRIT_OP_##op, dt, SRCS(__VA_ARGS__), frit_arg_none())
#define MKA(op, dt, arg, ...) mk(ctx, FRIT_OP_##op, dt, SRCS(__VA_ARGS__), arg)
#define LEAF(op, dt, arg) mk(ctx, FRIT_OP_##op, dt, NULL, 0, arg)

static frit_arg arg_i(int64_t i0, int64_t i1) {
  frit_arg a = frit_arg_none();
  a.i0 = i0, a.i1 = i1;
  return a;
}

static void expect_ok(frit_ctx *ctx, frit_uop *root, int line) {
  frit_status st = frit_verify(ctx, root);
  if (st != FRIT_OK) fprintf(stderr, "line %d: unexpected verify failure: %s\n", line, frit_error(ctx));
  CHECK_EQ_INT(st, FRIT_OK);
}

/* Fails naming `bad` (its id and op) and mentioning `what`. */
static void expect_fail(frit_ctx *ctx, frit_uop *root, frit_uop *bad, const char *what, int line) {
  frit_status st = frit_verify(ctx, root);
  char head[64];
  snprintf(head, sizeof head, "%%%u %s ", frit_uop_id(bad), frit_op_name(frit_uop_op(bad)));
  const char *msg = frit_error(ctx);
  bool good = st == FRIT_ERR_VERIFY && strstr(msg, head) && strstr(msg, what);
  if (!good) fprintf(stderr, "line %d: expected failure at \"%s\" mentioning \"%s\", got %d \"%s\"\n", line, head, what, st, msg);
  CHECK(good);
}
#define OK(root) expect_ok(ctx, root, __LINE__)
#define FAIL(root, bad, what) expect_fail(ctx, root, bad, what, __LINE__)

typedef struct prog {
  frit_dtype f32p;
  frit_uop *in, *out, *tmp, *r0, *r1, *n16, *n4;
} prog;

static prog mkprog(frit_ctx *ctx) {
  prog p;
  p.f32p = frit_dtype_ptr(FRIT_F32, FRIT_ADDR_GLOBAL);
  p.in = LEAF(DEFINE_GLOBAL, p.f32p, arg_i(0, 64));
  p.out = LEAF(DEFINE_GLOBAL, p.f32p, arg_i(1, 64));
  p.tmp = LEAF(DEFINE_GLOBAL, p.f32p, arg_i(2, 64));
  p.n16 = frit_const_int(ctx, FRIT_I64, 16);
  p.n4 = frit_const_int(ctx, FRIT_I64, 4);
  p.r0 = frit_range(ctx, p.n16, 0, FRIT_AXIS_GLOBAL);
  p.r1 = frit_range(ctx, p.n4, 1, FRIT_AXIS_LOOP);
  return p;
}

static void test_valid(void) {
  frit_ctx *ctx = frit_ctx_new();
  prog p = mkprog(ctx);
  frit_uop *x = frit_var(ctx, "x", 0, 9);
  OK(frit_binary(ctx, FRIT_OP_IDIV, frit_binary(ctx, FRIT_OP_ADD, x, p.n4), p.n16));
  /* out[r0] = in[r0] * 2, closed by END */
  frit_uop *ii = MK(INDEX, p.f32p, p.in, p.r0);
  frit_uop *v = frit_binary(ctx, FRIT_OP_MUL, MK(LOAD, FRIT_F32, ii), frit_const_float(ctx, FRIT_F32, 2.0));
  frit_uop *st = MK(STORE, FRIT_VOID, MK(INDEX, p.f32p, p.out, p.r0), v);
  OK(frit_sink(ctx, SRCS(MK(END, FRIT_VOID, st, p.r0))));
  /* two loops, closed together or one by one */
  frit_uop *flat = frit_binary(ctx, FRIT_OP_ADD, frit_binary(ctx, FRIT_OP_MUL, p.r0, p.n4), p.r1);
  frit_uop *st2 = MK(STORE, FRIT_VOID, MK(INDEX, p.f32p, p.out, flat), frit_const_float(ctx, FRIT_F32, 1.0));
  OK(frit_sink(ctx, SRCS(MK(END, FRIT_VOID, st2, p.r0, p.r1))));
  OK(frit_sink(ctx, SRCS(MK(END, FRIT_VOID, MK(END, FRIT_VOID, st2, p.r1), p.r0))));
  /* a reduction closes its own range: the store only loops over r0 */
  frit_uop *red = MKA(REDUCE, FRIT_F32, arg_i(FRIT_OP_ADD, 0), MK(LOAD, FRIT_F32, MK(INDEX, p.f32p, p.in, flat)), p.r1);
  frit_uop *st3 = MK(STORE, FRIT_VOID, MK(INDEX, p.f32p, p.out, p.r0), red);
  OK(frit_sink(ctx, SRCS(MK(END, FRIT_VOID, st3, p.r0))));
  /* read after write through AFTER: loop 1 fills tmp, loop 2 reads it */
  frit_uop *w = MK(STORE, FRIT_VOID, MK(INDEX, p.f32p, p.tmp, p.r0), v);
  frit_uop *e1 = MK(END, FRIT_VOID, w, p.r0);
  frit_uop *r2 = frit_range(ctx, p.n16, 2, FRIT_AXIS_LOOP);
  frit_uop *rd = MK(LOAD, FRIT_F32, MK(INDEX, p.f32p, MK(AFTER, p.f32p, p.tmp, e1), r2));
  frit_uop *e2 = MK(END, FRIT_VOID, MK(STORE, FRIT_VOID, MK(INDEX, p.f32p, p.out, r2), rd, e1), r2);
  OK(frit_sink(ctx, SRCS(e2)));
  /* a store outside any loop needs no END; gated index, IF, GROUP, BARRIER, atomics */
  frit_uop *zero = frit_const_int(ctx, FRIT_I64, 0);
  frit_uop *gate = frit_binary(ctx, FRIT_OP_CMPLT, x, p.n4);
  frit_uop *gi = MK(INDEX, p.f32p, p.out, zero, gate);
  frit_uop *at = MKA(ATOMIC, FRIT_F32, arg_i(FRIT_ATOMIC_ADD, 0), gi, v);
  frit_uop *bar = MK(BARRIER, FRIT_VOID, at);
  frit_uop *grp = MK(GROUP, FRIT_VOID, bar, MK(STORE, FRIT_VOID, gi, at, bar));
  frit_uop *ld_alt = MK(LOAD, FRIT_F32, gi, frit_const_float(ctx, FRIT_F32, 0.0), grp);
  frit_uop *st_e = MK(STORE, FRIT_VOID, MK(INDEX, p.f32p, p.out, p.r0), ld_alt);
  OK(frit_sink(ctx, SRCS(MK(IF, FRIT_VOID, gate, grp), MK(END, FRIT_VOID, st_e, p.r0))));
  /* permutations, vectors */
  frit_uop *buf = LEAF(BUFFER, FRIT_F32, arg_i(0, 6));
  int64_t perm[] = {1, 2, 0};
  frit_arg pa = {.blob = perm, .n = 3, .blob_kind = FRIT_BLOB_INTS};
  OK(MKA(PERMUTE, FRIT_F32, pa, buf));
  frit_uop *vec = MK(VECTORIZE, frit_dtype_vec(FRIT_I64, 3), x, p.n4, p.n16);
  int64_t lanes[] = {2, 0};
  frit_arg la = {.blob = lanes, .n = 2, .blob_kind = FRIT_BLOB_INTS};
  OK(MKA(GEP, frit_dtype_vec(FRIT_I64, 2), la, vec));
  frit_ctx_free(ctx);
}

static void test_invalid_built(void) {
  frit_ctx *ctx = frit_ctx_new();
  prog p = mkprog(ctx);
  frit_uop *one = frit_const_float(ctx, FRIT_F32, 1.0);
  frit_uop *flat = frit_binary(ctx, FRIT_OP_ADD, frit_binary(ctx, FRIT_OP_MUL, p.r0, p.n4), p.r1);
  frit_uop *st = MK(STORE, FRIT_VOID, MK(INDEX, p.f32p, p.out, flat), one);
  /* effects left open */
  frit_uop *s0 = frit_sink(ctx, SRCS(st));
  FAIL(s0, s0, "no END closes");
  char want[64];
  snprintf(want, sizeof want, "effect %%%u STORE", frit_uop_id(st));
  FAIL(s0, s0, want);
  frit_uop *half = MK(END, FRIT_VOID, st, p.r1);
  frit_uop *s1 = frit_sink(ctx, SRCS(half));
  snprintf(want, sizeof want, "RANGE %%%u", frit_uop_id(p.r0));
  FAIL(s1, s1, want);
  frit_uop *kern = MKA(KERNEL, FRIT_VOID, ((frit_arg){.blob = "k", .blob_kind = FRIT_BLOB_STR}), half);
  FAIL(kern, kern, "no END closes");
  /* END closing something that is not a RANGE */
  frit_uop *bad_end = MK(END, FRIT_VOID, st, p.r0, p.n4);
  FAIL(frit_sink(ctx, SRCS(bad_end)), bad_end, "not a RANGE");
  /* memory typing */
  frit_uop *ii = MK(INDEX, p.f32p, p.in, p.r0);
  frit_uop *st_i32 = MK(STORE, FRIT_VOID, ii, frit_const_int(ctx, FRIT_I32, 1));
  FAIL(st_i32, st_i32, "pointee");
  frit_uop *ld_i32 = MK(LOAD, FRIT_I32, ii);
  FAIL(ld_i32, ld_i32, "pointee");
  frit_uop *st_f32 = MK(STORE, FRIT_F32, ii, one);
  FAIL(st_f32, st_f32, "void");
  frit_uop *st_dep = MK(STORE, FRIT_VOID, ii, one, one);
  FAIL(st_dep, st_dep, "must be an effect");
  frit_uop *ld_alt = MK(LOAD, FRIT_F32, ii, frit_const_int(ctx, FRIT_I32, 0));
  FAIL(ld_alt, ld_alt, "alternative");
  frit_uop *idx_f = MK(INDEX, FRIT_F32, p.in, p.r0);
  FAIL(idx_f, idx_f, "pointer");
  frit_uop *glob = LEAF(DEFINE_GLOBAL, FRIT_F32, arg_i(0, 4));
  FAIL(glob, glob, "pointer");
  frit_uop *glob_local = LEAF(DEFINE_GLOBAL, frit_dtype_ptr(FRIT_F32, FRIT_ADDR_LOCAL), arg_i(0, 4));
  FAIL(glob_local, glob_local, "address space");
  frit_uop *at = MKA(ATOMIC, FRIT_F32, arg_i(99, 0), ii, one);
  FAIL(at, at, "atomic op");
  frit_uop *aft = MK(AFTER, FRIT_I64, p.in, st);
  FAIL(aft, aft, "source 0's dtype");
  /* control */
  frit_uop *sink_i = MK(SINK, FRIT_I64, st);
  FAIL(sink_i, sink_i, "void");
  frit_uop *iff = MK(IF, FRIT_VOID, p.n4, st);
  FAIL(iff, iff, "bool");
  frit_uop *grp = MK(GROUP, FRIT_VOID, st, one);
  FAIL(grp, grp, "effect");
  /* arguments */
  frit_uop *buf = LEAF(BUFFER, FRIT_F32, arg_i(0, 6));
  int64_t perm[] = {1, 1, 0}, lanes[] = {0, 3};
  frit_arg pa = {.blob = perm, .n = 3, .blob_kind = FRIT_BLOB_INTS};
  frit_uop *pm = MKA(PERMUTE, FRIT_F32, pa, buf);
  FAIL(pm, pm, "permutation");
  frit_uop *red = MKA(REDUCE, FRIT_F32, arg_i(FRIT_OP_SUB, 0), one, p.r0);
  FAIL(red, red, "associative");
  frit_uop *red2 = MKA(REDUCE, FRIT_F32, arg_i(FRIT_OP_MAX, 0), one, p.n4);
  FAIL(red2, red2, "must be a RANGE");
  frit_uop *v32 = LEAF(DEFINE_VAR, FRIT_I32, ((frit_arg){.i0 = 0, .i1 = 3, .blob = "v", .blob_kind = FRIT_BLOB_STR}));
  FAIL(v32, v32, "i64");
  frit_uop *vec = MK(VECTORIZE, frit_dtype_vec(FRIT_F32, 4), one, one, one);
  FAIL(vec, vec, "lanes");
  frit_uop *vec2 = MK(VECTORIZE, frit_dtype_vec(FRIT_F32, 2), one, one);
  frit_arg la = {.blob = lanes, .n = 2, .blob_kind = FRIT_BLOB_INTS};
  frit_uop *gep = MKA(GEP, frit_dtype_vec(FRIT_F32, 2), la, vec2);
  FAIL(gep, gep, "lanes");
  /* the failure is found below a valid root too */
  frit_uop *deep = frit_sink(ctx, SRCS(frit_binary(ctx, FRIT_OP_ADD, p.n4, p.n4), red));
  FAIL(deep, red, "associative");
  frit_ctx_free(ctx);
}

/* Nodes frit_uop_new refuses: built valid in a scratch context, then corrupted. */
static void test_invalid_corrupted(void) {
  frit_ctx *ctx;
  frit_uop *u;
#define SCRATCH() (ctx = frit_ctx_new())
  /* operands disagree */
  SCRATCH();
  frit_uop *i32 = frit_const_int(ctx, FRIT_I32, 1), *x = frit_var(ctx, "x", 0, 3);
  u = frit_binary(ctx, FRIT_OP_ADD, x, x);
  u->src[1] = i32;
  FAIL(u, u, "operand dtypes differ");
  frit_ctx_free(ctx);
  /* comparison result not bool */
  SCRATCH();
  x = frit_var(ctx, "x", 0, 3);
  u = frit_binary(ctx, FRIT_OP_CMPLT, x, x);
  u->dtype = FRIT_I64;
  FAIL(u, u, "result dtype");
  frit_ctx_free(ctx);
  /* WHERE condition not bool */
  SCRATCH();
  x = frit_var(ctx, "x", 0, 3);
  u = frit_ternary(ctx, FRIT_OP_WHERE, frit_binary(ctx, FRIT_OP_CMPLT, x, x), x, x);
  u->src[0] = x;
  FAIL(u, u, "condition");
  frit_ctx_free(ctx);
  /* integer-only op on floats */
  SCRATCH();
  frit_uop *f = frit_const_float(ctx, FRIT_F32, 2.0);
  i32 = frit_const_int(ctx, FRIT_I32, 3);
  u = frit_binary(ctx, FRIT_OP_IDIV, i32, i32);
  u->src[0] = u->src[1] = f;
  u->dtype = FRIT_F32;
  FAIL(u, u, "unsupported operand dtype f32");
  frit_ctx_free(ctx);
  /* float-only op on integers */
  SCRATCH();
  f = frit_const_float(ctx, FRIT_F32, 2.0);
  i32 = frit_const_int(ctx, FRIT_I32, 3);
  u = frit_unary(ctx, FRIT_OP_SQRT, f);
  u->src[0] = i32;
  u->dtype = FRIT_I32;
  FAIL(u, u, "unsupported operand dtype i32");
  frit_ctx_free(ctx);
  /* shift on bool is not allowed, bitwise AND on bool is */
  SCRATCH();
  frit_uop *t = frit_const_int(ctx, FRIT_BOOL, 1);
  i32 = frit_const_int(ctx, FRIT_I32, 3);
  OK(frit_binary(ctx, FRIT_OP_AND, t, t));
  u = frit_binary(ctx, FRIT_OP_SHL, i32, i32);
  u->src[0] = u->src[1] = t;
  u->dtype = FRIT_BOOL;
  FAIL(u, u, "unsupported operand dtype bool");
  frit_ctx_free(ctx);
  /* BITCAST between different widths */
  SCRATCH();
  f = frit_const_float(ctx, FRIT_F32, 2.0);
  u = frit_uop_new(ctx, FRIT_OP_BITCAST, FRIT_U32, &f, 1, NULL);
  u->dtype = FRIT_F64;
  FAIL(u, u, "sizes differ");
  frit_ctx_free(ctx);
  /* CAST changing lanes */
  SCRATCH();
  f = frit_const_float(ctx, frit_dtype_vec(FRIT_F32, 4), 2.0);
  u = frit_cast(ctx, f, frit_dtype_vec(FRIT_I32, 4));
  u->dtype = FRIT_I32;
  FAIL(u, u, "lanes differ");
  frit_ctx_free(ctx);
  /* RANGE over a float end, and a RANGE whose dtype differs from its end */
  SCRATCH();
  f = frit_const_float(ctx, FRIT_F32, 2.0);
  i32 = frit_const_int(ctx, FRIT_I32, 3);
  u = frit_range(ctx, frit_const_int(ctx, FRIT_I64, 4), 0, FRIT_AXIS_LOOP);
  u->src[0] = i32;
  FAIL(u, u, "RANGE");
  u->src[0] = f;
  u->dtype = FRIT_F32;
  FAIL(u, u, "integer");
  frit_ctx_free(ctx);
  /* wrong source count */
  SCRATCH();
  x = frit_var(ctx, "x", 0, 3);
  u = frit_binary(ctx, FRIT_OP_ADD, x, x);
  u->nsrc = 1;
  FAIL(u, u, "sources");
  frit_ctx_free(ctx);
  /* DEFINE_VAR with lo > hi */
  SCRATCH();
  x = frit_var(ctx, "x", 0, 3);
  x->arg.i0 = 5;
  FAIL(x, x, "DEFINE_VAR");
  frit_ctx_free(ctx);
  /* INDEX gate not bool, LOAD from a non-pointer */
  SCRATCH();
  {
    frit_dtype f32p = frit_dtype_ptr(FRIT_F32, FRIT_ADDR_GLOBAL);
    frit_uop *n = frit_const_int(ctx, FRIT_I64, 4);
    frit_uop *g = LEAF(DEFINE_GLOBAL, f32p, arg_i(0, 4));
    frit_uop *ok_gate = frit_binary(ctx, FRIT_OP_CMPLT, n, n);
    frit_uop *idx = MK(INDEX, f32p, g, n, ok_gate);
    frit_uop *ld = MK(LOAD, FRIT_F32, idx);
    OK(ld);
    idx->src[2] = n;
    FAIL(ld, idx, "bool gate");
    idx->src[2] = ok_gate;
    ld->src[0] = n;
    FAIL(ld, ld, "pointer");
  }
  frit_ctx_free(ctx);
  /* a constant that is not normalised to its dtype */
  SCRATCH();
  u = frit_const_int(ctx, FRIT_U8, 7);
  u->arg.value.u = 300;
  FAIL(u, u, "normalised");
  frit_ctx_free(ctx);
}

static void test_deep(void) {
  frit_ctx *ctx = frit_ctx_new();
  frit_uop *x = frit_var(ctx, "x", 0, 10), *one = frit_const_int(ctx, FRIT_I64, 1);
  for (int i = 0; i < 100000; i++) x = frit_binary(ctx, FRIT_OP_ADD, x, one);
  OK(x);
  /* and a long chain of ordered stores in one loop */
  frit_dtype f32p = frit_dtype_ptr(FRIT_F32, FRIT_ADDR_GLOBAL);
  frit_uop *g = LEAF(DEFINE_GLOBAL, f32p, arg_i(0, 16));
  frit_uop *r = frit_range(ctx, frit_const_int(ctx, FRIT_I64, 16), 0, FRIT_AXIS_LOOP);
  frit_uop *idx = MK(INDEX, f32p, g, r);
  frit_uop *st = MK(STORE, FRIT_VOID, idx, frit_const_float(ctx, FRIT_F32, 0.0));
  for (int i = 1; i < 20000; i++) st = MK(STORE, FRIT_VOID, idx, frit_const_float(ctx, FRIT_F32, (float)i), st);
  frit_uop *open = frit_sink(ctx, SRCS(st));
  FAIL(open, open, "no END closes");
  OK(frit_sink(ctx, SRCS(MK(END, FRIT_VOID, st, r))));
  frit_ctx_free(ctx);
}

int main(void) {
  test_valid();
  test_invalid_built();
  test_invalid_corrupted();
  test_deep();
  CHECK_DONE();
}
