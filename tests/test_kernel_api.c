/* Tests of the explicit-kernel and host-loop builders (include/frit.h "shader-like code"):
 * the graphs they build (Contract A and C of docs/control.md), shapes, every error path, trip
 * counts against a C loop, and frit_indices values against C loops. */
#include <stdbool.h>
#include <stdlib.h>

#include "check.h"
#include "frit.h"

#define U(t) frit_tensor_uop(t)

static frit_tensor *f32c(frit_ctx *ctx, double v) { return frit_scalar_f(ctx, FRIT_F32, v); }
static frit_tensor *i64c(frit_ctx *ctx, int64_t v) { return frit_scalar_i(ctx, FRIT_I64, v); }
static bool has(frit_ctx *ctx, const char *s) {
  bool ok = strstr(frit_error(ctx), s) != NULL;
  if (!ok) fprintf(stderr, "  message \"%s\" lacks \"%s\"\n", frit_error(ctx), s);
  return ok;
}

/* Is `target` reachable from u? */
static bool reaches(frit_uop *u, frit_uop *target, int depth) {
  if (u == target) return true;
  if (depth > 200) return false;
  for (int i = 0; i < frit_uop_nsrc(u); i++)
    if (reaches(frit_uop_src(u, i), target, depth + 1)) return true;
  return false;
}
static frit_uop *find_op(frit_uop *u, frit_op op, int depth) {
  if (frit_uop_op(u) == op) return u;
  if (depth > 200) return NULL;
  for (int i = 0; i < frit_uop_nsrc(u); i++) {
    frit_uop *r = find_op(frit_uop_src(u, i), op, depth + 1);
    if (r) return r;
  }
  return NULL;
}

/* C[i, j] = A[i, j] * 2 + i, then a second read of A: the whole Contract-A structure. */
static void test_kernel_structure(void) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t d[2] = {4, 5};
  frit_tensor *A = frit_input(ctx, "A", FRIT_F32, 2, d), *C = frit_input(ctx, "C", FRIT_F32, 2, d);
  frit_tensor *idx[2];
  CHECK_EQ_INT(frit_kernel_begin_static(ctx, "scale", 2, d, idx), FRIT_OK);
  for (int a = 0; a < 2; a++) {
    CHECK_EQ_INT(frit_uop_op(U(idx[a])), FRIT_OP_RANGE);
    CHECK_EQ_INT(frit_uop_arg(U(idx[a]))->i0, a);
    CHECK_EQ_INT(frit_uop_arg(U(idx[a]))->i1, FRIT_AXIS_GLOBAL);
    CHECK_EQ_INT(frit_tensor_ndim(idx[a]), 0);
    CHECK_EQ_INT(frit_tensor_dtype(idx[a]), FRIT_I64);
  }
  frit_tensor *v = frit_kernel_load(ctx, A, 2, idx);
  CHECK(v && frit_uop_op(U(v)) == FRIT_OP_LOAD && frit_tensor_ndim(v) == 0 && frit_tensor_dtype(v) == FRIT_F32);
  frit_uop *addr = frit_uop_src(U(v), 0);
  CHECK_EQ_INT(frit_uop_op(addr), FRIT_OP_INDEX);
  CHECK_EQ_INT(frit_uop_dtype(addr), frit_dtype_ptr(FRIT_F32, FRIT_ADDR_GLOBAL));
  CHECK(frit_uop_src(addr, 0) == U(A));
  frit_uop *I = frit_uop_src(addr, 1);
  CHECK(frit_uop_op(I) == FRIT_OP_VECTORIZE && frit_uop_src(I, 0) == U(idx[0]) && frit_uop_src(I, 1) == U(idx[1]));
  /* elementwise ops over kernel scalars are 0-d with numpy promotion */
  frit_tensor *w = frit_binary_t(ctx, FRIT_BF_MUL, v, f32c(ctx, 2));
  frit_tensor *x = frit_binary_t(ctx, FRIT_BF_ADD, w, idx[0]); /* f32 + i64 -> f64 */
  CHECK(x && frit_tensor_ndim(x) == 0 && frit_tensor_dtype(x) == FRIT_F64);
  CHECK_EQ_INT(frit_kernel_store(ctx, C, 2, idx, x), FRIT_OK);
  frit_tensor *v2 = frit_kernel_load(ctx, A, 2, idx);
  CHECK(v2 && v2 != v && frit_uop_arg(U(v2))->i1 != frit_uop_arg(U(v))->i1);
  CHECK_EQ_INT(frit_kernel_end(ctx), 1);
  frit_tensor *old = NULL, *nw = NULL;
  CHECK_EQ_INT(frit_kernel_written(ctx, 0, &old, &nw), FRIT_OK);
  CHECK(old == C);
  CHECK(nw && frit_uop_op(U(nw)) == FRIT_OP_AFTER && frit_uop_src(U(nw), 0) == U(C));
  CHECK(nw && frit_tensor_ndim(nw) == 2 && frit_tensor_dim_static(nw, 0) == 4 && frit_tensor_dim_static(nw, 1) == 5);
  CHECK(nw && frit_tensor_dtype(nw) == FRIT_F32);
  CHECK_EQ_INT(frit_kernel_written(ctx, 1, &old, &nw), FRIT_ERR_INVALID);
  frit_clear_error(ctx);
  frit_uop *K = frit_uop_src(U(nw), 1);
  CHECK_EQ_INT(frit_uop_op(K), FRIT_OP_KERNEL);
  CHECK_EQ_STR((const char *)frit_uop_arg(K)->blob, "scale");
  frit_uop *body = frit_uop_src(K, 0);
  CHECK_EQ_INT(frit_uop_op(body), FRIT_OP_END);
  CHECK_EQ_INT(frit_uop_nsrc(body), 3);
  CHECK(frit_uop_src(body, 1) == U(idx[0]) && frit_uop_src(body, 2) == U(idx[1]));
  frit_uop *seq = frit_uop_src(body, 0);
  CHECK_EQ_INT(frit_uop_op(seq), FRIT_OP_SEQ);
  CHECK_EQ_INT(frit_uop_nsrc(seq), 3); /* read, store, read: program order */
  CHECK(frit_uop_src(seq, 0) == U(v));
  CHECK_EQ_INT(frit_uop_op(frit_uop_src(seq, 1)), FRIT_OP_STORE);
  CHECK(frit_uop_src(seq, 2) == U(v2));
  frit_uop *st = frit_uop_src(seq, 1);
  CHECK_EQ_INT(frit_uop_dtype(frit_uop_src(st, 1)), FRIT_F32); /* value cast to C's dtype */
  CHECK(frit_uop_src(frit_uop_src(st, 0), 0) == U(C));
  /* serials of the reads and the store are distinct */
  int64_t s0 = frit_uop_arg(frit_uop_src(seq, 0))->i1, s1 = frit_uop_arg(st)->i1, s2 = frit_uop_arg(frit_uop_src(seq, 2))->i1;
  CHECK(s0 != s1 && s1 != s2 && s0 != s2);
  /* referenced tensors: A then C, once each */
  CHECK_EQ_INT(frit_uop_nsrc(K), 3);
  CHECK(frit_uop_src(K, 1) == U(A) && frit_uop_src(K, 2) == U(C));
  frit_uop *sink = frit_sink(ctx, (frit_uop *[]){U(nw)}, 1);
  CHECK_EQ_INT(frit_verify(ctx, sink), FRIT_OK);
  if (frit_last_status(ctx) != FRIT_OK) fprintf(stderr, "verify: %s\n", frit_error(ctx));
  frit_clear_error(ctx);
  frit_ctx_free(ctx);
}

/* Rank-0 kernel, a 0-d tensor-level value (a reduction, a symbolic var) mixed into scalars,
 * atomics and a kernel writing two tensors. */
static void test_kernel_rank0_and_refs(void) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t d[1] = {6};
  frit_tensor *x = frit_input(ctx, "x", FRIT_F32, 1, d), *h = frit_input(ctx, "h", FRIT_I32, 1, d);
  frit_tensor *o = frit_input(ctx, "o", FRIT_F32, 0, NULL);
  frit_tensor *total = frit_reduce(ctx, FRIT_RF_SUM, x, NULL, FRIT_ALL_AXES, 0, 0);
  frit_uop *nv = frit_var(ctx, "n", 0, 100);
  CHECK(total && frit_tensor_ndim(total) == 0);
  CHECK_EQ_INT(frit_kernel_begin_static(ctx, NULL, 0, NULL, NULL), FRIT_OK);
  frit_tensor *cur = frit_kernel_load(ctx, o, 0, NULL);
  frit_tensor *val = frit_binary_t(ctx, FRIT_BF_ADD, cur, total);
  val = frit_binary_t(ctx, FRIT_BF_ADD, val, frit_tensor_of(ctx, nv));
  CHECK_EQ_INT(frit_kernel_store(ctx, o, 0, NULL, val), FRIT_OK);
  frit_tensor *three = i64c(ctx, 3);
  frit_tensor *oldv = frit_kernel_atomic(ctx, FRIT_ATOMIC_ADD, h, 1, &three, i64c(ctx, 1));
  CHECK(oldv && frit_tensor_dtype(oldv) == FRIT_I32 && frit_tensor_ndim(oldv) == 0);
  CHECK(oldv && frit_uop_op(U(oldv)) == FRIT_OP_ATOMIC && frit_uop_arg(U(oldv))->i0 == FRIT_ATOMIC_ADD);
  CHECK_EQ_INT(frit_kernel_end(ctx), 2);
  frit_tensor *o2 = NULL, *h2 = NULL, *t = NULL;
  CHECK_EQ_INT(frit_kernel_written(ctx, 0, &t, &o2), FRIT_OK);
  CHECK(t == o);
  CHECK_EQ_INT(frit_kernel_written(ctx, 1, &t, &h2), FRIT_OK);
  CHECK(t == h);
  CHECK(h2 && frit_tensor_ndim(h2) == 1 && frit_tensor_dim_static(h2, 0) == 6 && frit_tensor_dtype(h2) == FRIT_I32);
  CHECK(o2 && frit_tensor_ndim(o2) == 0);
  frit_uop *K = frit_uop_src(U(o2), 1);
  CHECK(frit_uop_src(U(h2), 1) == K);
  CHECK_EQ_INT(frit_uop_op(frit_uop_src(K, 0)), FRIT_OP_SEQ); /* rank 0: no END */
  /* o, the reduction, h: the symbolic var and constants are not tensor references */
  CHECK_EQ_INT(frit_uop_nsrc(K), 4);
  CHECK(frit_uop_src(K, 1) == U(o));
  CHECK(frit_uop_src(K, 2) == U(total) || frit_uop_op(frit_uop_src(K, 2)) == FRIT_OP_CAST);
  CHECK(frit_uop_src(K, 3) == U(h));
  for (int i = 1; i < frit_uop_nsrc(K); i++) CHECK(frit_uop_op(frit_uop_src(K, i)) != FRIT_OP_DEFINE_VAR);
  /* the element address of a rank-0 tensor is CONST 0 */
  frit_uop *seq = frit_uop_src(K, 0);
  frit_uop *a0 = frit_uop_src(frit_uop_src(seq, 0), 0);
  CHECK(frit_uop_op(frit_uop_src(a0, 1)) == FRIT_OP_CONST && frit_uop_arg(frit_uop_src(a0, 1))->value.i == 0);
  /* the atomic's index 3 is i64; the value is cast to i32 */
  frit_uop *at = frit_uop_src(seq, 2);
  CHECK_EQ_INT(frit_uop_op(at), FRIT_OP_ATOMIC);
  CHECK_EQ_INT(frit_uop_dtype(frit_uop_src(at, 1)), FRIT_I32);
  frit_ctx_free(ctx);
}

/* Inner loops, variables, if/else, break/continue: the nesting of SEQs. */
static void test_kernel_control(void) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t d[2] = {3, 7}, n = 3;
  frit_tensor *B = frit_input(ctx, "B", FRIT_F32, 2, d), *out = frit_input(ctx, "out", FRIT_F32, 1, &n);
  frit_tensor *i;
  CHECK_EQ_INT(frit_kernel_begin_static(ctx, "rowsum", 1, &n, &i), FRIT_OK);
  int acc = frit_kernel_var(ctx, FRIT_F32, f32c(ctx, 0));
  CHECK_EQ_INT(acc, 0);
  frit_tensor *k;
  CHECK_EQ_INT(frit_kernel_loop_begin(ctx, i64c(ctx, 0), i64c(ctx, 7), i64c(ctx, 1), &k), FRIT_OK);
  CHECK(k && frit_uop_op(U(k)) == FRIT_OP_RANGE && frit_uop_arg(U(k))->i1 == FRIT_AXIS_LOOP);
  CHECK(k && frit_uop_arg(U(k))->i0 >= 1); /* inner axis ids follow the kernel's */
  CHECK(k && frit_uop_op(frit_uop_src(U(k), 0)) == FRIT_OP_CONST && frit_uop_arg(frit_uop_src(U(k), 0))->value.i == 7);
  frit_tensor *x = frit_kernel_load(ctx, B, 2, (frit_tensor *[]){i, k});
  CHECK_EQ_INT(frit_kernel_if_begin(ctx, frit_binary_t(ctx, FRIT_BF_GT, x, f32c(ctx, 0))), FRIT_OK);
  frit_tensor *a = frit_kernel_var_get(ctx, acc);
  CHECK(a && frit_tensor_ndim(a) == 0 && frit_tensor_dtype(a) == FRIT_F32);
  CHECK_EQ_INT(frit_kernel_var_set(ctx, acc, frit_binary_t(ctx, FRIT_BF_ADD, a, x)), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_else(ctx), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_continue(ctx), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_if_end(ctx), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_if_begin(ctx, frit_binary_t(ctx, FRIT_BF_GT, frit_kernel_var_get(ctx, acc), f32c(ctx, 100))), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_break(ctx), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_if_end(ctx), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_loop_end(ctx), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_store(ctx, out, 1, &i, frit_kernel_var_get(ctx, acc)), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_end(ctx), 1);
  frit_tensor *nw;
  CHECK_EQ_INT(frit_kernel_written(ctx, 0, NULL, &nw), FRIT_OK);
  frit_uop *K = frit_uop_src(U(nw), 1), *seq = frit_uop_src(frit_uop_src(K, 0), 0);
  /* var init store, END(loop), var read, store */
  CHECK_EQ_INT(frit_uop_nsrc(seq), 4);
  frit_uop *init = frit_uop_src(seq, 0);
  CHECK_EQ_INT(frit_uop_op(init), FRIT_OP_STORE);
  frit_uop *reg = frit_uop_src(frit_uop_src(init, 0), 0);
  CHECK_EQ_INT(frit_uop_op(reg), FRIT_OP_DEFINE_REG);
  CHECK_EQ_INT(frit_uop_dtype(reg), frit_dtype_ptr(FRIT_F32, FRIT_ADDR_REG));
  CHECK_EQ_INT(frit_uop_arg(reg)->i1, 1);
  frit_uop *loop = frit_uop_src(seq, 1);
  CHECK(frit_uop_op(loop) == FRIT_OP_END && frit_uop_nsrc(loop) == 2 && frit_uop_src(loop, 1) == U(k));
  CHECK_EQ_INT(frit_uop_op(frit_uop_src(seq, 2)), FRIT_OP_LOAD);
  CHECK_EQ_INT(frit_uop_op(frit_uop_src(seq, 3)), FRIT_OP_STORE);
  frit_uop *lseq = frit_uop_src(loop, 0);
  /* load x, IF(then: get, set; else: continue), get, IF(break) */
  CHECK_EQ_INT(frit_uop_nsrc(lseq), 4);
  CHECK(frit_uop_src(lseq, 0) == U(x));
  frit_uop *if1 = frit_uop_src(lseq, 1);
  CHECK(frit_uop_op(if1) == FRIT_OP_IF && frit_uop_nsrc(if1) == 3);
  CHECK_EQ_INT(frit_uop_dtype(frit_uop_src(if1, 0)), FRIT_BOOL);
  CHECK(frit_uop_op(frit_uop_src(if1, 1)) == FRIT_OP_SEQ && frit_uop_nsrc(frit_uop_src(if1, 1)) == 2);
  frit_uop *els = frit_uop_src(if1, 2);
  CHECK(frit_uop_nsrc(els) == 1 && frit_uop_op(frit_uop_src(els, 0)) == FRIT_OP_CONTINUE &&
        frit_uop_src(frit_uop_src(els, 0), 0) == U(k));
  frit_uop *if2 = frit_uop_src(lseq, 3);
  CHECK(frit_uop_op(if2) == FRIT_OP_IF && frit_uop_nsrc(if2) == 2);
  CHECK(frit_uop_op(frit_uop_src(frit_uop_src(if2, 1), 0)) == FRIT_OP_BREAK);
  /* B and out referenced; the register is not a tensor */
  CHECK_EQ_INT(frit_uop_nsrc(K), 3);
  CHECK(frit_uop_src(K, 1) == U(B) && frit_uop_src(K, 2) == U(out));
  CHECK_EQ_INT(frit_verify(ctx, frit_sink(ctx, (frit_uop *[]){U(nw)}, 1)), FRIT_OK);
  if (frit_last_status(ctx) != FRIT_OK) fprintf(stderr, "verify: %s\n", frit_error(ctx));
  frit_ctx_free(ctx);
}

/* Trip counts of inner loops with constant and with symbolic bounds, against a C loop. */
static int64_t c_trips(int64_t s, int64_t e, int64_t p) {
  int64_t n = 0;
  if (p == 0) return 0;
  for (int64_t i = s; p > 0 ? i < e : i > e; i += p) n++;
  return n;
}

static void test_trip_counts(void) {
  frit_ctx *ctx = frit_ctx_new();
  frit_uop *sv = frit_var(ctx, "s", -50, 50), *ev = frit_var(ctx, "e", -50, 50), *pv = frit_var(ctx, "p", -7, 7);
  int64_t n = 2;
  static const int64_t cases[][3] = {{0, 10, 1}, {2, 11, 3}, {2, 12, 3}, {10, 0, -3}, {10, 1, -3}, {5, 5, 1},
                                     {5, 2, 1}, {2, 5, -1}, {0, 7, 0}, {-4, 9, 2}, {-4, -9, -2}, {3, 50, 7}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    int64_t s = cases[c][0], e = cases[c][1], p = cases[c][2], want = c_trips(s, e, p);
    /* constant bounds: folded */
    frit_tensor *i;
    CHECK_EQ_INT(frit_kernel_begin_static(ctx, "t", 1, &n, &i), FRIT_OK);
    frit_tensor *k = NULL;
    CHECK_EQ_INT(frit_kernel_loop_begin(ctx, i64c(ctx, s), i64c(ctx, e), i64c(ctx, p), &k), FRIT_OK);
    frit_uop *r = k ? find_op(U(k), FRIT_OP_RANGE, 0) : NULL;
    frit_uop *trip = r ? frit_uop_src(r, 0) : NULL;
    CHECK(trip && frit_uop_op(trip) == FRIT_OP_CONST && frit_uop_arg(trip)->value.i == want);
    CHECK_EQ_INT(frit_kernel_loop_end(ctx), FRIT_OK);
    CHECK_EQ_INT(frit_kernel_end(ctx), 0);
    /* symbolic bounds (and, separately, a constant step): evaluated by the interpreter */
    for (int constant_step = 0; constant_step < 2; constant_step++) {
      CHECK_EQ_INT(frit_kernel_begin_static(ctx, "t", 1, &n, &i), FRIT_OK);
      frit_tensor *pt = constant_step ? i64c(ctx, p) : frit_tensor_of(ctx, pv);
      CHECK_EQ_INT(frit_kernel_loop_begin(ctx, frit_tensor_of(ctx, sv), frit_tensor_of(ctx, ev), pt, &k), FRIT_OK);
      r = k ? find_op(U(k), FRIT_OP_RANGE, 0) : NULL;
      trip = r ? frit_uop_src(r, 0) : NULL;
      frit_binding b[3] = {{"s", s}, {"e", e}, {"p", p}};
      frit_scalar got = {.i = -1};
      CHECK(trip && frit_interpret(ctx, trip, NULL, NULL, 0, b, 3, &got) == FRIT_OK);
      if (got.i != want) fprintf(stderr, "trip(%lld, %lld, %lld) = %lld, want %lld\n", (long long)s, (long long)e, (long long)p, (long long)got.i, (long long)want);
      CHECK_EQ_INT(got.i, want);
      /* the index is start + R*step: check it at R = 1 through its expression */
      CHECK_EQ_INT(frit_kernel_loop_end(ctx), FRIT_OK);
      CHECK_EQ_INT(frit_kernel_end(ctx), 0);
    }
  }
  frit_ctx_free(ctx);
}

/* Every error path: the failed call has no effect, the kernel end then reports -1, and the
 * builder stays usable. */
static void test_errors(void) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t d[2] = {4, 5}, n = 4;
  frit_tensor *A = frit_input(ctx, "A", FRIT_F32, 2, d), *v4 = frit_input(ctx, "v", FRIT_I64, 1, &n);
  frit_tensor *idx[2], *i, *k;
  /* outside a kernel */
  CHECK(frit_kernel_store(ctx, A, 2, (frit_tensor *[]){i64c(ctx, 0), i64c(ctx, 0)}, f32c(ctx, 1)) == FRIT_ERR_INVALID);
  CHECK(has(ctx, "kernel_store") && has(ctx, "outside a kernel"));
  CHECK(frit_kernel_load(ctx, A, 2, (frit_tensor *[]){i64c(ctx, 0), i64c(ctx, 0)}) == NULL && has(ctx, "kernel_load"));
  CHECK(frit_kernel_atomic(ctx, FRIT_ATOMIC_ADD, v4, 1, (frit_tensor *[]){i64c(ctx, 0)}, i64c(ctx, 1)) == NULL);
  CHECK(frit_kernel_var(ctx, FRIT_F32, f32c(ctx, 0)) == -1 && has(ctx, "kernel_var"));
  CHECK(frit_kernel_loop_begin(ctx, i64c(ctx, 0), i64c(ctx, 1), i64c(ctx, 1), &k) != FRIT_OK && has(ctx, "kernel_loop"));
  CHECK(frit_kernel_if_begin(ctx, frit_scalar_i(ctx, FRIT_BOOL, 1)) != FRIT_OK && has(ctx, "kernel_if"));
  CHECK(frit_kernel_break(ctx) != FRIT_OK && has(ctx, "kernel_break"));
  CHECK(frit_kernel_end(ctx) == -1 && has(ctx, "kernel_end"));
  CHECK(frit_kernel_begin_static(ctx, "neg", 1, (int64_t[]){-1}, idx) != FRIT_OK && has(ctx, "negative"));
  frit_clear_error(ctx);

  /* wrong number of indices (names the op, the shape and the dtype) */
  CHECK_EQ_INT(frit_kernel_begin_static(ctx, "e1", 2, d, idx), FRIT_OK);
  CHECK(frit_kernel_load(ctx, A, 1, idx) == NULL);
  CHECK(has(ctx, "kernel_load") && has(ctx, "(4, 5)") && has(ctx, "f32") && has(ctx, "rank 2"));
  CHECK(frit_kernel_store(ctx, A, 2, idx, f32c(ctx, 1)) == FRIT_OK); /* the builder goes on */
  CHECK_EQ_INT(frit_kernel_end(ctx), -1);
  CHECK(frit_last_status(ctx) == FRIT_ERR_INVALID);
  frit_clear_error(ctx);
  /* an earlier error is reported even after the message was cleared */
  CHECK_EQ_INT(frit_kernel_begin_static(ctx, "e1b", 2, d, idx), FRIT_OK);
  CHECK(frit_kernel_load(ctx, A, 3, (frit_tensor *[]){idx[0], idx[1], idx[0]}) == NULL);
  frit_clear_error(ctx);
  CHECK_EQ_INT(frit_kernel_end(ctx), -1);
  CHECK(has(ctx, "earlier"));
  frit_clear_error(ctx);

  /* index dtype and rank */
  CHECK_EQ_INT(frit_kernel_begin_static(ctx, "e2", 2, d, idx), FRIT_OK);
  frit_tensor *fv = frit_kernel_load(ctx, A, 2, idx);
  CHECK(frit_kernel_load(ctx, A, 2, (frit_tensor *[]){fv, idx[1]}) == NULL && has(ctx, "index 0 has dtype f32"));
  CHECK(frit_kernel_load(ctx, A, 2, (frit_tensor *[]){idx[0], frit_scalar_i(ctx, FRIT_BOOL, 1)}) == NULL &&
        has(ctx, "index 1 has dtype bool"));
  CHECK(frit_kernel_load(ctx, A, 2, (frit_tensor *[]){v4, idx[1]}) == NULL && has(ctx, "index 0 must be 0-d"));
  CHECK(frit_kernel_load(ctx, A, 2, (frit_tensor *[]){NULL, idx[1]}) == NULL);
  CHECK(frit_kernel_store(ctx, A, 2, idx, v4) != FRIT_OK && has(ctx, "value must be 0-d"));
  CHECK(frit_kernel_load(ctx, fv, 0, NULL) == NULL && has(ctx, "kernel scalar, not a tensor"));
  /* atomics: bitwise ops need integers */
  CHECK(frit_kernel_atomic(ctx, FRIT_ATOMIC_XOR, A, 2, idx, f32c(ctx, 1)) == NULL && has(ctx, "atomic xor") && has(ctx, "f32"));
  CHECK(frit_kernel_atomic(ctx, FRIT_ATOMIC_AND, A, 2, idx, f32c(ctx, 1)) == NULL);
  CHECK(frit_kernel_atomic(ctx, FRIT_ATOMIC_OR, A, 2, idx, f32c(ctx, 1)) == NULL);
  CHECK(frit_kernel_atomic(ctx, (frit_atomic_op)99, A, 2, idx, f32c(ctx, 1)) == NULL);
  CHECK(frit_kernel_atomic(ctx, FRIT_ATOMIC_MAX, A, 2, idx, f32c(ctx, 1)) != NULL); /* fine on floats */
  /* structure errors */
  CHECK(frit_kernel_else(ctx) != FRIT_OK && has(ctx, "else without an open if"));
  CHECK(frit_kernel_if_end(ctx) != FRIT_OK && has(ctx, "not an if"));
  CHECK(frit_kernel_loop_end(ctx) != FRIT_OK && has(ctx, "not a loop"));
  CHECK(frit_kernel_break(ctx) != FRIT_OK && has(ctx, "not inside a loop"));
  CHECK(frit_kernel_continue(ctx) != FRIT_OK && has(ctx, "kernel_continue"));
  CHECK(frit_kernel_begin_static(ctx, "nested", 2, d, idx) != FRIT_OK && has(ctx, "do not nest"));
  CHECK(frit_kernel_var_get(ctx, 3) == NULL && has(ctx, "variable 3"));
  CHECK(frit_kernel_var_set(ctx, -1, f32c(ctx, 0)) != FRIT_OK);
  CHECK(frit_kernel_var(ctx, frit_dtype_ptr(FRIT_F32, FRIT_ADDR_GLOBAL), f32c(ctx, 0)) == -1);
  CHECK(frit_host_loop_begin(ctx, i64c(ctx, 0), i64c(ctx, 3), i64c(ctx, 1), 0, NULL, &i, NULL) != FRIT_OK &&
        has(ctx, "host loops cannot run inside a kernel"));
  CHECK(frit_kernel_loop_begin(ctx, f32c(ctx, 0), i64c(ctx, 3), i64c(ctx, 1), &k) != FRIT_OK && has(ctx, "start has dtype f32"));
  CHECK(frit_kernel_if_begin(ctx, v4) != FRIT_OK && has(ctx, "condition must be 0-d"));
  CHECK(frit_kernel_if_begin(ctx, NULL) != FRIT_OK);
  CHECK_EQ_INT(frit_kernel_end(ctx), -1);
  frit_clear_error(ctx);

  /* else twice */
  CHECK_EQ_INT(frit_kernel_begin_static(ctx, "e3", 2, d, idx), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_if_begin(ctx, frit_binary_t(ctx, FRIT_BF_LT, idx[0], idx[1])), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_else(ctx), FRIT_OK);
  CHECK(frit_kernel_else(ctx) != FRIT_OK && has(ctx, "already has an else"));
  CHECK(frit_kernel_loop_end(ctx) != FRIT_OK && has(ctx, "an if, not a loop"));
  CHECK_EQ_INT(frit_kernel_if_end(ctx), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_end(ctx), -1);
  frit_clear_error(ctx);

  /* unbalanced kernel end: the open loop is reported, the kernel discarded */
  CHECK_EQ_INT(frit_kernel_begin_static(ctx, "e4", 2, d, idx), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_loop_begin(ctx, i64c(ctx, 0), i64c(ctx, 3), i64c(ctx, 1), &k), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_end(ctx), -1);
  CHECK(has(ctx, "still open") && has(ctx, "loop"));
  CHECK(frit_kernel_written(ctx, 0, NULL, NULL) != FRIT_OK);
  frit_clear_error(ctx);

  /* scalars of a closed kernel, of a closed loop, of an if branch, variables out of scope */
  CHECK_EQ_INT(frit_kernel_begin_static(ctx, "k1", 2, d, idx), FRIT_OK);
  frit_tensor *from_k1 = frit_kernel_load(ctx, A, 2, (frit_tensor *[]){idx[1], idx[0]});
  frit_tensor *k1_atomic = frit_kernel_atomic(ctx, FRIT_ATOMIC_ADD, v4, 1, &idx[0], i64c(ctx, 1));
  CHECK_EQ_INT(frit_kernel_end(ctx), 1);
  CHECK_EQ_INT(frit_kernel_begin_static(ctx, "k2", 2, d, idx), FRIT_OK);
  CHECK(frit_kernel_store(ctx, A, 2, idx, from_k1) != FRIT_OK && has(ctx, "another kernel"));
  CHECK(frit_kernel_store(ctx, A, 2, idx, frit_binary_t(ctx, FRIT_BF_ADD, from_k1, f32c(ctx, 1))) != FRIT_OK &&
        has(ctx, "another kernel"));
  CHECK(frit_kernel_load(ctx, v4, 1, &k1_atomic) == NULL && has(ctx, "index 0") && has(ctx, "another kernel"));
  CHECK_EQ_INT(frit_kernel_end(ctx), -1);
  frit_clear_error(ctx);
  CHECK_EQ_INT(frit_kernel_begin_static(ctx, "k3", 2, d, idx), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_loop_begin(ctx, i64c(ctx, 0), i64c(ctx, 3), i64c(ctx, 1), &k), FRIT_OK);
  frit_tensor *inner = frit_kernel_load(ctx, A, 2, (frit_tensor *[]){idx[0], k});
  CHECK(inner && frit_kernel_store(ctx, A, 2, idx, inner) == FRIT_OK); /* valid inside */
  CHECK_EQ_INT(frit_kernel_loop_end(ctx), FRIT_OK);
  CHECK(frit_kernel_store(ctx, A, 2, idx, inner) != FRIT_OK && has(ctx, "block that has ended"));
  CHECK(frit_kernel_load(ctx, A, 2, (frit_tensor *[]){idx[0], k}) == NULL && has(ctx, "block that has ended"));
  CHECK_EQ_INT(frit_kernel_if_begin(ctx, frit_binary_t(ctx, FRIT_BF_LT, idx[0], idx[1])), FRIT_OK);
  frit_tensor *in_then = frit_kernel_load(ctx, A, 2, idx);
  int var_then = frit_kernel_var(ctx, FRIT_I32, i64c(ctx, 1));
  CHECK(var_then >= 0);
  CHECK_EQ_INT(frit_kernel_else(ctx), FRIT_OK);
  CHECK(frit_kernel_store(ctx, A, 2, idx, in_then) != FRIT_OK && has(ctx, "block that has ended"));
  CHECK(frit_kernel_var_get(ctx, var_then) == NULL && has(ctx, "has ended"));
  CHECK_EQ_INT(frit_kernel_if_end(ctx), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_end(ctx), -1);
  frit_clear_error(ctx);

  /* after all that, a clean kernel builds */
  CHECK_EQ_INT(frit_kernel_begin_static(ctx, "ok", 2, d, idx), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_store(ctx, A, 2, idx, frit_kernel_load(ctx, A, 2, idx)), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_end(ctx), 1);
  CHECK(frit_last_status(ctx) == FRIT_OK);
  frit_ctx_free(ctx);
}

/* Host loops: LOOP/CARRY structure, dropped unchanged carries, nesting, kernels in bodies, errors. */
static void test_host_loops(void) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t n = 8;
  frit_tensor *a = frit_input(ctx, "a", FRIT_F32, 1, &n), *b = frit_input(ctx, "b", FRIT_I32, 1, &n);
  frit_tensor *c = frit_input(ctx, "c", FRIT_F32, 0, NULL);
  frit_tensor *iv, *car[3], *res[3];
  CHECK_EQ_INT(frit_host_loop_begin(ctx, i64c(ctx, 0), i64c(ctx, 10), i64c(ctx, 1), 3, (frit_tensor *[]){a, b, c}, &iv, car),
               FRIT_OK);
  CHECK(frit_uop_op(U(iv)) == FRIT_OP_DEFINE_VAR && frit_tensor_ndim(iv) == 0);
  CHECK(strncmp((const char *)frit_uop_arg(U(iv))->blob, "loop", 4) == 0);
  CHECK(frit_uop_arg(U(iv))->i0 == 0 && frit_uop_arg(U(iv))->i1 == 9);
  for (int j = 0; j < 3; j++) {
    CHECK_EQ_INT(frit_uop_op(U(car[j])), FRIT_OP_CARRY);
    CHECK_EQ_INT(frit_uop_arg(U(car[j]))->i1, j);
  }
  CHECK(frit_tensor_ndim(car[0]) == 1 && frit_tensor_dim_static(car[0], 0) == 8 && frit_tensor_dtype(car[0]) == FRIT_F32);
  CHECK(frit_tensor_dtype(car[1]) == FRIT_I32 && frit_tensor_ndim(car[2]) == 0);
  /* a' = a * b (reads the unchanged carry b), b unchanged, c' = c + i */
  frit_tensor *na = frit_binary_t(ctx, FRIT_BF_MUL, car[0], frit_astype(ctx, car[1], FRIT_F32));
  frit_tensor *nc = frit_astype(ctx, frit_binary_t(ctx, FRIT_BF_ADD, car[2], iv), FRIT_F32);
  frit_tensor *stop = frit_binary_t(ctx, FRIT_BF_GT, nc, f32c(ctx, 20));
  /* errors first: they leave the loop open */
  CHECK(frit_host_loop_end(ctx, (frit_tensor *[]){na, b, a}, NULL, res) != FRIT_OK && has(ctx, "host_loop_end") &&
        has(ctx, "shape"));
  CHECK(frit_host_loop_end(ctx, (frit_tensor *[]){na, frit_astype(ctx, b, FRIT_I64), nc}, NULL, res) != FRIT_OK &&
        has(ctx, "i64"));
  CHECK(frit_host_loop_end(ctx, (frit_tensor *[]){na, car[1], nc}, nc, res) != FRIT_OK && has(ctx, "stop must be a 0-d bool"));
  frit_clear_error(ctx);
  CHECK_EQ_INT(frit_host_loop_end(ctx, (frit_tensor *[]){na, car[1], nc}, stop, res), FRIT_OK);
  CHECK(res[1] == b);
  for (int j = 0; j < 3; j += 2) CHECK(frit_uop_op(U(res[j])) == FRIT_OP_AFTER);
  frit_uop *L = frit_uop_src(U(res[0]), 1);
  CHECK(frit_uop_src(U(res[2]), 1) == L);
  CHECK_EQ_INT(frit_uop_op(L), FRIT_OP_LOOP);
  CHECK_EQ_INT(frit_uop_arg(L)->i0, 2);
  CHECK_EQ_INT(frit_uop_nsrc(L), 5 + 3 * 2);
  CHECK(frit_uop_src(L, 3) == U(iv));
  /* P_1 is c's placeholder renumbered to slot 1; inits a, c; the nexts read b itself */
  frit_uop *P0 = frit_uop_src(L, 4), *P1 = frit_uop_src(L, 5);
  CHECK(P0 == U(car[0]) && frit_uop_op(P1) == FRIT_OP_CARRY && frit_uop_arg(P1)->i1 == 1 && frit_uop_arg(P1)->i0 == frit_uop_arg(L)->i1);
  CHECK(frit_uop_src(L, 6) == U(a) && frit_uop_src(L, 7) == U(c));
  frit_uop *N0 = frit_uop_src(L, 8), *N1 = frit_uop_src(L, 9), *S = frit_uop_src(L, 10);
  CHECK(!reaches(N0, U(car[1]), 0) && reaches(N0, U(b), 0) && reaches(N0, P0, 0));
  CHECK(!reaches(N1, U(car[2]), 0) && reaches(N1, P1, 0) && reaches(N1, U(iv), 0));
  CHECK(!reaches(S, U(car[2]), 0) && reaches(S, P1, 0));
  CHECK(frit_uop_src(U(res[2]), 0) == P1);
  CHECK(frit_tensor_ndim(res[0]) == 1 && frit_tensor_dim_static(res[0], 0) == 8 && frit_tensor_ndim(res[2]) == 0);
  CHECK_EQ_INT(frit_verify(ctx, frit_sink(ctx, (frit_uop *[]){U(res[0]), U(res[2])}, 2)), FRIT_OK);
  if (frit_last_status(ctx) != FRIT_OK) fprintf(stderr, "verify: %s\n", frit_error(ctx));
  frit_clear_error(ctx);

  /* every carry unchanged: no loop at all */
  CHECK_EQ_INT(frit_host_loop_begin(ctx, i64c(ctx, 0), i64c(ctx, 4), i64c(ctx, 1), 1, &a, &iv, car), FRIT_OK);
  CHECK_EQ_INT(frit_host_loop_end(ctx, car, NULL, res), FRIT_OK);
  CHECK(res[0] == a);

  /* nested loops with a kernel in the inner body writing the carried tensor */
  frit_tensor *ov, *oc, *iv2, *ic, *ires, *ores;
  frit_uop *nv = frit_var(ctx, "steps", 0, 1000);
  CHECK_EQ_INT(frit_host_loop_begin(ctx, i64c(ctx, 0), frit_tensor_of(ctx, nv), i64c(ctx, 1), 1, &a, &ov, &oc), FRIT_OK);
  CHECK(frit_uop_arg(U(ov))->i0 == INT64_MIN && frit_uop_arg(U(ov))->i1 == INT64_MAX); /* symbolic end: wide */
  CHECK_EQ_INT(frit_host_loop_begin(ctx, i64c(ctx, 5), i64c(ctx, -1), i64c(ctx, -2), 1, &oc, &iv2, &ic), FRIT_OK);
  CHECK(frit_uop_arg(U(iv2))->i0 == 0 && frit_uop_arg(U(iv2))->i1 == 5);
  CHECK(frit_uop_arg(U(iv2))->i1 != frit_uop_arg(U(ov))->i1 || strcmp(frit_uop_arg(U(iv2))->blob, frit_uop_arg(U(ov))->blob));
  frit_tensor *j;
  CHECK_EQ_INT(frit_kernel_begin_static(ctx, "step", 1, &n, &j), FRIT_OK);
  frit_tensor *e = frit_kernel_load(ctx, ic, 1, &j);
  frit_tensor *upd = frit_binary_t(ctx, FRIT_BF_ADD, e, frit_astype(ctx, frit_binary_t(ctx, FRIT_BF_MUL, iv2, ov), FRIT_F32));
  CHECK_EQ_INT(frit_kernel_store(ctx, ic, 1, &j, upd), FRIT_OK);
  CHECK(frit_host_loop_end(ctx, &ic, NULL, &ires) != FRIT_OK && has(ctx, "still open"));
  CHECK_EQ_INT(frit_kernel_end(ctx), -1); /* that error counted against the kernel */
  frit_clear_error(ctx);
  CHECK_EQ_INT(frit_kernel_begin_static(ctx, "step", 1, &n, &j), FRIT_OK);
  e = frit_kernel_load(ctx, ic, 1, &j);
  upd = frit_binary_t(ctx, FRIT_BF_ADD, e, frit_astype(ctx, frit_binary_t(ctx, FRIT_BF_MUL, iv2, ov), FRIT_F32));
  CHECK_EQ_INT(frit_kernel_store(ctx, ic, 1, &j, upd), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_end(ctx), 1);
  frit_tensor *knew;
  CHECK_EQ_INT(frit_kernel_written(ctx, 0, NULL, &knew), FRIT_OK);
  CHECK_EQ_INT(frit_host_loop_end(ctx, &knew, NULL, &ires), FRIT_OK);
  CHECK_EQ_INT(frit_host_loop_end(ctx, &ires, NULL, &ores), FRIT_OK);
  CHECK(frit_uop_op(U(ores)) == FRIT_OP_AFTER && frit_tensor_ndim(ores) == 1 && frit_tensor_dtype(ores) == FRIT_F32);
  frit_uop *Lo = frit_uop_src(U(ores), 1);
  CHECK(frit_uop_op(Lo) == FRIT_OP_LOOP && frit_uop_src(Lo, 1) == nv);
  CHECK(frit_uop_src(Lo, 6) == U(ires)); /* outer next = inner result */
  CHECK_EQ_INT(frit_verify(ctx, frit_sink(ctx, (frit_uop *[]){U(ores)}, 1)), FRIT_OK);
  if (frit_last_status(ctx) != FRIT_OK) fprintf(stderr, "verify: %s\n", frit_error(ctx));
  frit_clear_error(ctx);

  /* errors */
  CHECK(frit_host_loop_end(ctx, NULL, NULL, NULL) != FRIT_OK && has(ctx, "no open host loop"));
  CHECK(frit_host_loop_begin(ctx, f32c(ctx, 0), i64c(ctx, 3), i64c(ctx, 1), 0, NULL, &iv, NULL) != FRIT_OK &&
        has(ctx, "start has dtype f32"));
  CHECK(frit_host_loop_begin(ctx, i64c(ctx, 0), frit_astype(ctx, b, FRIT_I64), i64c(ctx, 1), 0, NULL, &iv, NULL) != FRIT_OK &&
        has(ctx, "end must be a 0-d"));
  CHECK(frit_host_loop_begin(ctx, i64c(ctx, 0), i64c(ctx, 3), NULL, 0, NULL, &iv, NULL) != FRIT_OK);
  CHECK(frit_host_loop_begin(ctx, i64c(ctx, 0), i64c(ctx, 3), i64c(ctx, 1), 1, (frit_tensor *[]){NULL}, &iv, car) != FRIT_OK);
  frit_tensor *ki;
  CHECK_EQ_INT(frit_kernel_begin_static(ctx, "x", 1, &n, &ki), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_end(ctx), 0);
  CHECK(frit_host_loop_begin(ctx, i64c(ctx, 0), ki, i64c(ctx, 1), 0, NULL, &iv, NULL) != FRIT_OK && has(ctx, "kernel scalar"));
  frit_clear_error(ctx);
  frit_ctx_free(ctx);
}

/* frit_indices against C loops, through compile + run (static and symbolic dims). */
static void test_indices(void) {
  frit_ctx *ctx = frit_ctx_new();
  frit_uop *dims[3] = {frit_const_int(ctx, FRIT_I64, 3), frit_var(ctx, "n", 1, 64), frit_const_int(ctx, FRIT_I64, 5)};
  frit_tensor *ix[3];
  CHECK_EQ_INT(frit_indices(ctx, 3, dims, ix), FRIT_OK);
  for (int a = 0; a < 3; a++) CHECK(frit_tensor_ndim(ix[a]) == 3 && frit_tensor_dtype(ix[a]) == FRIT_I64);
  for (int interp = 0; interp < 2; interp++) {
    frit_compile_opts o;
    memset(&o, 0, sizeof o);
    o.interpret = interp;
    o.threads = 2;
    frit_program *p = frit_compile(ctx, ix, 3, &o);
    CHECK(p != NULL);
    if (!p) {
      fprintf(stderr, "compile: %s\n", frit_error(ctx));
      break;
    }
    const int64_t nn = 6, total = 3 * nn * 5;
    int64_t *out[3];
    for (int a = 0; a < 3; a++) out[a] = calloc((size_t)total, sizeof(int64_t));
    frit_binding b = {"n", nn};
    CHECK_EQ_INT(frit_program_run(p, NULL, (void *const *)out, &b, 1), FRIT_OK);
    int bad = 0;
    for (int64_t i = 0; i < 3; i++)
      for (int64_t j = 0; j < nn; j++)
        for (int64_t k = 0; k < 5; k++) {
          int64_t f = (i * nn + j) * 5 + k;
          bad += out[0][f] != i || out[1][f] != j || out[2][f] != k;
        }
    CHECK_EQ_INT(bad, 0);
    for (int a = 0; a < 3; a++) free(out[a]);
  }
  /* errors */
  CHECK(frit_indices(ctx, -1, dims, ix) != FRIT_OK && has(ctx, "indices"));
  frit_uop *neg = frit_var(ctx, "m", -3, 3);
  CHECK(frit_indices(ctx, 1, &neg, ix) != FRIT_OK && has(ctx, "non-negative"));
  CHECK_EQ_INT(frit_indices(ctx, 0, NULL, NULL), FRIT_OK);
  frit_ctx_free(ctx);
}

int main(void) {
  test_kernel_structure();
  test_kernel_rank0_and_refs();
  test_kernel_control();
  test_trip_counts();
  test_errors();
  test_host_loops();
  test_indices();
  CHECK_DONE();
}
