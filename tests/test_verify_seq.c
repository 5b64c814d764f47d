/* Verifier and builder checks of the shader-like forms (docs/ir.md, "Shader-like code"):
 * explicit kernels with SEQ/BREAK/CONTINUE and element addresses, host LOOPs with CARRYs. */
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

static frit_arg arg_s(const char *str) {
  frit_arg a = frit_arg_none();
  a.blob = str, a.n = (uint32_t)strlen(str), a.blob_kind = FRIT_BLOB_STR;
  return a;
}

static void expect_ok(frit_ctx *ctx, frit_uop *root, int line) {
  frit_status st = frit_verify(ctx, root);
  if (st != FRIT_OK) fprintf(stderr, "line %d: unexpected verify failure: %s\n", line, frit_error(ctx));
  CHECK_EQ_INT(st, FRIT_OK);
}

static void expect_fail(frit_ctx *ctx, frit_uop *root, frit_uop *bad, const char *what, int line) {
  frit_status st = frit_verify(ctx, root);
  char head[64];
  snprintf(head, sizeof head, "%%%u %s ", frit_uop_id(bad), frit_op_name(frit_uop_op(bad)));
  const char *msg = frit_error(ctx);
  bool good = st == FRIT_ERR_VERIFY && strstr(msg, head) && strstr(msg, what);
  if (!good)
    fprintf(stderr, "line %d: expected failure at \"%s\" mentioning \"%s\", got %d \"%s\"\n", line, head, what, st, msg);
  CHECK(good);
}
#define OK(root) expect_ok(ctx, root, __LINE__)
#define FAIL(root, bad, what) expect_fail(ctx, root, bad, what, __LINE__)

/* Contract A: K = KERNEL(END(SEQ(...), r0), t) over a tensor t of 8 f32, with an inner loop. */
static void test_explicit_kernel(void) {
  frit_ctx *ctx = frit_ctx_new();
  frit_dtype f32p = frit_dtype_ptr(FRIT_F32, FRIT_ADDR_GLOBAL);
  frit_uop *n8 = frit_const_int(ctx, FRIT_I64, 8), *zero = frit_const_int(ctx, FRIT_I64, 0);
  frit_uop *t = frit_tensor_uop(frit_input(ctx, "t", FRIT_F32, 1, (int64_t[]){8}));
  CHECK(t != NULL);
  frit_uop *r0 = frit_range(ctx, n8, 0, FRIT_AXIS_GLOBAL);
  frit_uop *r1 = frit_range(ctx, n8, 1, FRIT_AXIS_LOOP);
  frit_uop *a0 = MK(INDEX, f32p, t, r0);
  frit_uop *a1 = MK(INDEX, f32p, t, r1, frit_binary(ctx, FRIT_OP_CMPLT, r1, n8));
  frit_uop *reg = LEAF(DEFINE_REG, frit_dtype_ptr(FRIT_F32, FRIT_ADDR_REG), arg_i(0, 1));
  frit_uop *ra = MK(INDEX, frit_dtype_ptr(FRIT_F32, FRIT_ADDR_REG), reg, zero);
  frit_uop *v1 = MKA(LOAD, FRIT_F32, arg_i(0, 1), a1);
  frit_uop *acc = MKA(LOAD, FRIT_F32, arg_i(0, 2), ra);
  frit_uop *brk = MK(BREAK, FRIT_VOID, r1);
  frit_uop *big = frit_binary(ctx, FRIT_OP_CMPLT, frit_const_float(ctx, FRIT_F32, 100.0), acc);
  frit_uop *inner = MK(SEQ, FRIT_VOID, v1, acc, MK(STORE, FRIT_VOID, ra, frit_binary(ctx, FRIT_OP_ADD, acc, v1)),
                       MK(IF, FRIT_VOID, big, MK(SEQ, FRIT_VOID, brk), MK(SEQ, FRIT_VOID, MK(CONTINUE, FRIT_VOID, r1))));
  frit_uop *acc2 = MKA(LOAD, FRIT_F32, arg_i(0, 3), ra);
  frit_uop *old = MKA(ATOMIC, FRIT_F32, arg_i(FRIT_ATOMIC_MAX, 4), a0, acc2);
  frit_uop *body = MK(SEQ, FRIT_VOID, MK(STORE, FRIT_VOID, ra, frit_const_float(ctx, FRIT_F32, 0.0)),
                      MK(END, FRIT_VOID, inner, r1), acc2, old, MK(STORE, FRIT_VOID, a0, old));
  frit_uop *k = MKA(KERNEL, FRIT_VOID, arg_s("k"), MK(END, FRIT_VOID, body, r0), t);
  frit_uop *after = MK(AFTER, FRIT_F32, t, k);
  OK(frit_sink(ctx, &after, 1));

  /* a rank-0 kernel: KERNEL(SEQ(...)) */
  frit_uop *s0 = frit_tensor_uop(frit_input(ctx, "s", FRIT_I32, 0, NULL));
  frit_uop *e0 = MK(INDEX, frit_dtype_ptr(FRIT_I32, FRIT_ADDR_GLOBAL), s0, zero);
  frit_uop *k0 = MK(KERNEL, FRIT_VOID, MK(SEQ, FRIT_VOID, MK(STORE, FRIT_VOID, e0, frit_const_int(ctx, FRIT_I32, 3))), s0);
  OK(MK(AFTER, FRIT_I32, s0, k0));

  /* BREAK outside the loop of its range: the END of r1 does not enclose it */
  frit_uop *stray = MK(BREAK, FRIT_VOID, r1);
  frit_uop *kb = MKA(KERNEL, FRIT_VOID, arg_s("kb"), MK(END, FRIT_VOID, MK(SEQ, FRIT_VOID, stray), r0), t);
  FAIL(kb, kb, "BREAK");
  /* BREAK of something that is not a RANGE */
  frit_uop *bad_brk = MK(BREAK, FRIT_VOID, n8);
  FAIL(bad_brk, bad_brk, "RANGE");
  /* a pointer listed in a SEQ (values are fine: "evaluate here") */
  frit_uop *pure = MK(SEQ, FRIT_VOID, frit_binary(ctx, FRIT_OP_ADD, r0, r0), a0);
  FAIL(pure, pure, "statement");
  /* an element address of the wrong dtype or space */
  frit_arg none = frit_arg_none();
  CHECK(frit_uop_new(ctx, FRIT_OP_INDEX, frit_dtype_ptr(FRIT_F32, FRIT_ADDR_LOCAL), (frit_uop *[]){t, r0}, 2, &none) == NULL);
  CHECK(frit_uop_new(ctx, FRIT_OP_INDEX, frit_dtype_ptr(FRIT_I32, FRIT_ADDR_GLOBAL), (frit_uop *[]){t, r0}, 2, &none) == NULL);
  frit_clear_error(ctx);
  /* an explicit kernel must list tensors, not pointers */
  frit_uop *g = LEAF(DEFINE_GLOBAL, f32p, arg_i(0, 8));
  frit_uop *kp = MK(KERNEL, FRIT_VOID, MK(SEQ, FRIT_VOID), g);
  FAIL(kp, kp, "tensor-level value");
  frit_ctx_free(ctx);
}

/* Contract C: LOOP(start, end, step, ivar, P.., init.., next.., stop), results AFTER(P_j, L). */
static void test_host_loop(void) {
  frit_ctx *ctx = frit_ctx_new();
  frit_uop *zero = frit_const_int(ctx, FRIT_I64, 0), *one = frit_const_int(ctx, FRIT_I64, 1);
  frit_uop *ten = frit_const_int(ctx, FRIT_I64, 10), *n4 = frit_const_int(ctx, FRIT_I64, 4);
  frit_uop *iv = frit_var(ctx, "loop3", 0, 9);
  frit_uop *p0 = MKA(CARRY, FRIT_F32, arg_i(3, 0), n4);
  frit_uop *p1 = MKA(CARRY, FRIT_I64, arg_i(3, 1));
  frit_uop *init0 = frit_tensor_uop(frit_input(ctx, "i", FRIT_F32, 1, (int64_t[]){4}));
  frit_uop *next1 = frit_binary(ctx, FRIT_OP_ADD, p1, iv);
  frit_uop *stop = frit_binary(ctx, FRIT_OP_CMPLT, ten, p1);
  frit_uop *l = MKA(LOOP, FRIT_VOID, arg_i(2, 3), zero, ten, one, iv, p0, p1, init0, zero, p0, next1, stop);
  frit_uop *outs[2] = {MK(AFTER, FRIT_F32, p0, l), MK(AFTER, FRIT_I64, p1, l)};
  OK(frit_sink(ctx, outs, 2));
  /* source count must be 5 + 3k with k = i0 (checked when building) */
  frit_arg a = arg_i(1, 3);
  CHECK(frit_uop_new(ctx, FRIT_OP_LOOP, FRIT_VOID, (frit_uop *[]){zero, ten, one, iv, p0, init0, p0}, 7, &a) == NULL);
  CHECK(strstr(frit_error(ctx), "LOOP") != NULL);
  frit_clear_error(ctx);
  /* carries in the wrong slot, or of another loop */
  frit_uop *l2 = MKA(LOOP, FRIT_VOID, arg_i(2, 3), zero, ten, one, iv, p1, p0, zero, init0, next1, p0, stop);
  FAIL(l2, l2, "CARRY slot 0");
  frit_uop *l3 = MKA(LOOP, FRIT_VOID, arg_i(1, 4), zero, ten, one, iv, p0, init0, p0, stop);
  FAIL(l3, l3, "CARRY slot 0 of loop 4");
  /* init of another dtype, a non-bool stop, a non-variable index */
  frit_uop *q = MKA(CARRY, FRIT_I64, arg_i(3, 0));
  frit_uop *l4 = MKA(LOOP, FRIT_VOID, arg_i(1, 3), zero, ten, one, iv, q, init0, q, stop);
  FAIL(l4, l4, "dtype");
  frit_uop *l5 = MKA(LOOP, FRIT_VOID, arg_i(1, 3), zero, ten, one, iv, q, zero, q, one);
  FAIL(l5, l5, "bool");
  OK(MKA(LOOP, FRIT_VOID, arg_i(1, 3), zero, ten, one, iv, q, zero, q, stop));
  frit_uop *l6 = MKA(LOOP, FRIT_VOID, arg_i(1, 3), zero, ten, one, one, q, zero, q, stop);
  FAIL(l6, l6, "DEFINE_VAR");
  frit_uop *bad_carry = MKA(CARRY, FRIT_F32, arg_i(3, -1));
  FAIL(bad_carry, bad_carry, "slot");
  frit_ctx_free(ctx);
}

int main(void) {
  test_explicit_kernel();
  test_host_loop();
  CHECK_DONE();
}
