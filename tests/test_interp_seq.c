/* Tests of the structured-kernel interpreter (statement semantics, src/interp/interp_seq.c):
 * hand-built kernel ASTs (Contract B) run by frit_interpret and compared with plain C loops. */
#include "frit.h"

#include "check.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

static frit_ctx *C;

#define I64 FRIT_I64
static frit_uop *mk(frit_op op, frit_dtype dt, frit_uop **src, int n, frit_arg a) {
  frit_uop *u = frit_uop_new(C, op, dt, src, n, &a);
  if (!u) fprintf(stderr, "build %s failed: %s\n", frit_op_name(op), frit_error(C));
  CHECK(u != NULL);
  return u;
}
static frit_arg arg_i(int64_t i0, int64_t i1) { return (frit_arg){{0}, i0, i1, NULL, 0, 0}; }
#define LIST(...) (frit_uop *[]){__VA_ARGS__}, (int)(sizeof((frit_uop *[]){__VA_ARGS__}) / sizeof(frit_uop *))
#define SEQ(...) mk(FRIT_OP_SEQ, FRIT_VOID, LIST(__VA_ARGS__), arg_i(0, 0))

static frit_uop *ci(int64_t v) { return frit_const_int(C, I64, v); }
static frit_uop *cx(frit_dtype dt, double v) { return frit_const_float(C, dt, v); }
static frit_uop *bin(frit_op op, frit_uop *a, frit_uop *b) {
  frit_uop *u = frit_binary(C, op, a, b);
  if (!u) fprintf(stderr, "binary %s: %s\n", frit_op_name(op), frit_error(C));
  CHECK(u != NULL);
  return u;
}
#define ADD(a, b) bin(FRIT_OP_ADD, a, b)
#define MUL(a, b) bin(FRIT_OP_MUL, a, b)
#define LT(a, b) bin(FRIT_OP_CMPLT, a, b)
#define EQ(a, b) bin(FRIT_OP_CMPEQ, a, b)
static frit_uop *glob(int param, frit_dtype elem, int64_t size) {
  return mk(FRIT_OP_DEFINE_GLOBAL, frit_dtype_ptr(elem, FRIT_ADDR_GLOBAL), NULL, 0, arg_i(param, size));
}
static frit_uop *reg(int id, frit_dtype elem) {
  frit_uop *r = mk(FRIT_OP_DEFINE_REG, frit_dtype_ptr(elem, FRIT_ADDR_REG), NULL, 0, arg_i(id, 1));
  return mk(FRIT_OP_INDEX, frit_dtype_ptr(elem, FRIT_ADDR_REG), LIST(r, ci(0)), arg_i(0, 0));
}
static frit_uop *at(frit_uop *p, frit_uop *i) { return mk(FRIT_OP_INDEX, frit_uop_dtype(p), LIST(p, i), arg_i(0, 0)); }
static frit_uop *atg(frit_uop *p, frit_uop *i, frit_uop *g) { return mk(FRIT_OP_INDEX, frit_uop_dtype(p), LIST(p, i, g), arg_i(0, 0)); }
static frit_dtype elem(frit_uop *addr) { return frit_dtype_scalar(frit_uop_dtype(addr)); }
static frit_uop *ld(frit_uop *addr, int serial) { return mk(FRIT_OP_LOAD, elem(addr), LIST(addr), arg_i(0, serial)); }
static frit_uop *ld_alt(frit_uop *addr, frit_uop *alt, int serial) {
  return mk(FRIT_OP_LOAD, elem(addr), LIST(addr, alt), arg_i(0, serial));
}
static frit_uop *st(frit_uop *addr, frit_uop *v) { return mk(FRIT_OP_STORE, FRIT_VOID, LIST(addr, v), arg_i(0, 0)); }
static frit_uop *atom(frit_atomic_op op, frit_uop *addr, frit_uop *v, int serial) {
  return mk(FRIT_OP_ATOMIC, elem(addr), LIST(addr, v), arg_i(op, serial));
}
static frit_uop *rng(frit_uop *end, int axis, frit_axis type) { return frit_range(C, end, axis, type); }
static frit_uop *end1(frit_uop *body, frit_uop *r) { return mk(FRIT_OP_END, FRIT_VOID, LIST(body, r), arg_i(0, 0)); }
static frit_uop *iff(frit_uop *c, frit_uop *t, frit_uop *e) {
  return e ? mk(FRIT_OP_IF, FRIT_VOID, LIST(c, t, e), arg_i(0, 0)) : mk(FRIT_OP_IF, FRIT_VOID, LIST(c, t), arg_i(0, 0));
}
static frit_uop *brk(frit_uop *r) { return mk(FRIT_OP_BREAK, FRIT_VOID, LIST(r), arg_i(0, 0)); }
static frit_uop *cont(frit_uop *r) { return mk(FRIT_OP_CONTINUE, FRIT_VOID, LIST(r), arg_i(0, 0)); }
static frit_uop *sink1(frit_uop *x) { return frit_sink(C, &x, 1); }

/* Runs a kernel: verifies it first (the verifier must accept Contract B), then interprets it. */
static frit_status run(frit_uop *root, void *const *bufs, const size_t *sizes, int n, const frit_binding *vars,
                       int nvars) {
  frit_status v = frit_verify(C, root);
  if (v != FRIT_OK) fprintf(stderr, "verify: %s\n", frit_error(C));
  CHECK_EQ_INT(v, FRIT_OK);
  frit_status st = frit_interpret(C, root, bufs, sizes, n, vars, nvars, NULL);
  if (st != FRIT_OK) fprintf(stderr, "interpret: %s\n", frit_error(C));
  return st;
}

/* Nested loops with dynamic trip counts (a loaded count, a variable, a triangular inner loop)
 * and a register accumulating across iterations. */
static void test_nested_dynamic(void) {
  enum { N = 7, M = 11 };
  int64_t cnt[N] = {0, 3, 1, 5, 2, 0, 4};
  float data[M], out[N], want[N];
  for (int i = 0; i < M; i++) data[i] = 0.25f * (float)i - 1.0f / (float)(i + 3);
  int64_t cap = 4;
  for (int i = 0; i < N; i++) {
    float acc = 0;
    int64_t trip = cnt[i] < cap ? cnt[i] : cap;
    for (int64_t j = 0; j < trip; j++)
      for (int64_t k = 0; k < j + 1; k++) acc += data[(i + j * k) % M];
    want[i] = acc;
  }
  frit_uop *pc = glob(0, I64, N), *pd = glob(1, FRIT_F32, M), *po = glob(2, FRIT_F32, N);
  frit_uop *ri = rng(ci(N), 0, FRIT_AXIS_GLOBAL);
  frit_uop *trip = bin(FRIT_OP_MIN, ld(at(pc, ri), 0), frit_var(C, "cap", 0, 100));
  frit_uop *rj = rng(trip, 1, FRIT_AXIS_LOOP);
  frit_uop *rk = rng(ADD(rj, ci(1)), 2, FRIT_AXIS_LOOP);
  frit_uop *acc = reg(0, FRIT_F32);
  frit_uop *a = ld(acc, 1);
  frit_uop *x = ld(at(pd, bin(FRIT_OP_MOD, ADD(ri, MUL(rj, rk)), ci(M))), 0); /* pure read: not listed */
  frit_uop *kb = SEQ(a, st(acc, ADD(a, x)));
  frit_uop *fin = ld(acc, 2);
  frit_uop *body = SEQ(st(acc, cx(FRIT_F32, 0)), end1(SEQ(end1(kb, rk)), rj), fin, st(at(po, ri), fin));
  void *bufs[] = {cnt, data, out};
  size_t sizes[] = {N, M, N};
  frit_binding vars[] = {{"cap", cap}};
  CHECK_EQ_INT(run(sink1(end1(body, ri)), bufs, sizes, 3, vars, 1), FRIT_OK);
  CHECK(memcmp(out, want, sizeof out) == 0);
  for (int i = 0; i < N; i++)
    if (out[i] != want[i]) fprintf(stderr, "  nested: out[%d] = %g, want %g\n", i, out[i], want[i]);
}

/* break/continue under ifs, in both loops of a nest, including a break of the outer loop from
 * inside the inner one and a continue in an else branch. */
static void test_break_continue(void) {
  enum { N = 100 };
  int64_t out[N], want[N];
  for (int i = 0; i < N; i++) {
    int64_t acc = 0;
    for (int64_t j = 0; j < 20; j++) {
      if (j % 3 == 0) continue;
      bool leave = false;
      for (int64_t k = 0; k < 10; k++) {
        if (k * j > i) break;
        if (k % 2 == 1) {
          acc += 1000;
        } else if (k == 4) {
          continue;
        }
        acc += k;
        if (acc > 3000 + 50 * i) {
          leave = true;
          break;
        }
      }
      if (leave) break;
      acc += 100;
    }
    want[i] = acc;
  }
  frit_uop *po = glob(0, I64, N);
  frit_uop *ri = rng(ci(N), 0, FRIT_AXIS_GLOBAL);
  frit_uop *rj = rng(ci(20), 1, FRIT_AXIS_LOOP), *rk = rng(ci(10), 2, FRIT_AXIS_LOOP);
  frit_uop *acc = reg(0, I64);
  frit_uop *a1 = ld(acc, 1), *a2 = ld(acc, 2), *a3 = ld(acc, 3), *a4 = ld(acc, 4), *a5 = ld(acc, 5);
  frit_uop *kbody = SEQ(iff(LT(ri, MUL(rk, rj)), SEQ(brk(rk)), NULL),
                        iff(EQ(bin(FRIT_OP_MOD, rk, ci(2)), ci(1)), SEQ(a1, st(acc, ADD(a1, ci(1000)))),
                            SEQ(iff(EQ(rk, ci(4)), SEQ(cont(rk)), NULL))),
                        a2, st(acc, ADD(a2, rk)), a3,
                        iff(LT(ADD(ci(3000), MUL(ci(50), ri)), a3), SEQ(brk(rj)), NULL));
  frit_uop *jbody = SEQ(iff(EQ(bin(FRIT_OP_MOD, rj, ci(3)), ci(0)), SEQ(cont(rj)), NULL), end1(kbody, rk), a4,
                        st(acc, ADD(a4, ci(100))));
  frit_uop *body = SEQ(st(acc, ci(0)), end1(jbody, rj), a5, st(at(po, ri), a5));
  void *bufs[] = {out};
  size_t sizes[] = {N};
  CHECK_EQ_INT(run(sink1(end1(body, ri)), bufs, sizes, 1, NULL, 0), FRIT_OK);
  int bad = 0;
  for (int i = 0; i < N; i++)
    if (out[i] != want[i] && bad++ < 5) fprintf(stderr, "  break/continue: out[%d] = %lld, want %lld\n", i, (long long)out[i], (long long)want[i]);
  CHECK_EQ_INT(bad, 0);
}

/* Read-after-write, write-after-read and write-after-write on one buffer within a point; a read
 * keeps the value it had when its SEQ evaluated it; points run in order (a neighbour's write is
 * seen by a later point); a loop-carried read-modify-write. */
static void test_hazards(void) {
  enum { N = 9 };
  int32_t b[N], bw[N], o[2 * N], ow[2 * N], c[N], cw[N];
  for (int i = 0; i < N; i++) b[i] = bw[i] = 3 * i - 7, c[i] = cw[i] = i;
  for (int i = 0; i < N; i++) {
    int32_t v1 = bw[i];
    bw[i] = v1 + 1;
    int32_t v2 = bw[i];
    bw[i] = v2 * 3;
    bw[i] = v2 * 3 + v1;
    int32_t w = bw[(i + 1) % N];
    ow[2 * i] = v1;
    ow[2 * i + 1] = w;
    for (int j = 0; j < 5; j++) cw[i] = cw[i] * 2 + j;
  }
  frit_uop *pb = glob(0, FRIT_I32, N), *po = glob(1, FRIT_I32, 2 * N), *pc = glob(2, FRIT_I32, N);
  frit_uop *ri = rng(ci(N), 0, FRIT_AXIS_GLOBAL), *rj = rng(ci(5), 1, FRIT_AXIS_LOOP);
  frit_uop *bi = at(pb, ri);
  frit_uop *v1 = ld(bi, 1), *v2 = ld(bi, 2), *w = ld(at(pb, bin(FRIT_OP_MOD, ADD(ri, ci(1)), ci(N))), 3);
  frit_uop *three = frit_const_int(C, FRIT_I32, 3);
  frit_uop *t = ld(at(pc, ri), 4);
  frit_uop *loop = end1(SEQ(t, st(at(pc, ri), ADD(MUL(t, frit_const_int(C, FRIT_I32, 2)), frit_cast(C, rj, FRIT_I32)))), rj);
  frit_uop *body = SEQ(v1, st(bi, ADD(v1, frit_const_int(C, FRIT_I32, 1))), v2, st(bi, MUL(v2, three)),
                       st(bi, ADD(MUL(v2, three), v1)), w, st(at(po, MUL(ri, ci(2))), v1),
                       st(at(po, ADD(MUL(ri, ci(2)), ci(1))), w), loop);
  void *bufs[] = {b, o, c};
  size_t sizes[] = {N, 2 * N, N};
  CHECK_EQ_INT(run(sink1(end1(body, ri)), bufs, sizes, 3, NULL, 0), FRIT_OK);
  CHECK(memcmp(b, bw, sizeof b) == 0);
  CHECK(memcmp(o, ow, sizeof o) == 0);
  CHECK(memcmp(c, cw, sizeof c) == 0);
}

/* ---------- atomics: every op on several dtypes against a sequential C loop ---------- */

enum { AN = 16, AH = 5 };

#define INT_ORACLE(T, UT, NAME)                                                                         \
  static void NAME(int op, T *h, const T *v, T *olds) {                                                  \
    for (int i = 0; i < AN; i++) {                                                                       \
      T *p = &h[(i * 7) % AH], o = *p, x = v[i], r;                                                      \
      switch (op) {                                                                                      \
      case FRIT_ATOMIC_ADD: r = (T)(UT)((UT)o + (UT)x); break;                                           \
      case FRIT_ATOMIC_MIN: r = x < o ? x : o; break;                                                    \
      case FRIT_ATOMIC_MAX: r = x > o ? x : o; break;                                                    \
      case FRIT_ATOMIC_AND: r = (T)(o & x); break;                                                       \
      case FRIT_ATOMIC_OR: r = (T)(o | x); break;                                                        \
      case FRIT_ATOMIC_XOR: r = (T)(o ^ x); break;                                                       \
      default: r = x; break;                                                                             \
      }                                                                                                  \
      *p = r;                                                                                            \
      olds[i] = o;                                                                                       \
    }                                                                                                    \
  }
#define FLOAT_ORACLE(T, NAME)                                                                           \
  static void NAME(int op, T *h, const T *v, T *olds) {                                                  \
    for (int i = 0; i < AN; i++) {                                                                       \
      T *p = &h[(i * 7) % AH], o = *p, x = v[i], r;                                                      \
      switch (op) {                                                                                      \
      case FRIT_ATOMIC_ADD: r = o + x; break;                                                            \
      case FRIT_ATOMIC_MIN: r = x < o ? x : o; break;                                                    \
      case FRIT_ATOMIC_MAX: r = x > o ? x : o; break;                                                    \
      default: r = x; break;                                                                             \
      }                                                                                                  \
      *p = r;                                                                                            \
      olds[i] = o;                                                                                       \
    }                                                                                                    \
  }
INT_ORACLE(int32_t, uint32_t, oracle_i32)
INT_ORACLE(int8_t, uint8_t, oracle_i8)
INT_ORACLE(uint16_t, uint16_t, oracle_u16)
INT_ORACLE(int64_t, uint64_t, oracle_i64)
INT_ORACLE(uint64_t, uint64_t, oracle_u64)
FLOAT_ORACLE(float, oracle_f32)
FLOAT_ORACLE(double, oracle_f64)

static void oracle_bool(int op, bool *h, const bool *v, bool *olds) {
  for (int i = 0; i < AN; i++) {
    bool *p = &h[(i * 7) % AH], o = *p, x = v[i], r;
    switch (op) {
    case FRIT_ATOMIC_ADD: case FRIT_ATOMIC_MAX: case FRIT_ATOMIC_OR: r = o || x; break;
    case FRIT_ATOMIC_MIN: case FRIT_ATOMIC_AND: r = o && x; break;
    case FRIT_ATOMIC_XOR: r = o != x; break;
    default: r = x; break;
    }
    *p = r;
    olds[i] = o;
  }
}

/* h[(i*7) % 5] op= v[i] for i in 0..15 in a kernel, the old values stored to olds[i]. */
static void run_atomic(frit_dtype dt, int op, void *h, void *v, void *olds) {
  frit_uop *ph = glob(0, dt, AH), *pv = glob(1, dt, AN), *po = glob(2, dt, AN);
  frit_uop *ri = rng(ci(AN), 0, FRIT_AXIS_GLOBAL);
  frit_uop *old = atom((frit_atomic_op)op, at(ph, bin(FRIT_OP_MOD, MUL(ri, ci(7)), ci(AH))), ld(at(pv, ri), 0), 1);
  frit_uop *body = SEQ(old, st(at(po, ri), old));
  void *bufs[] = {h, v, olds};
  size_t sizes[] = {AH, AN, AN};
  CHECK_EQ_INT(run(sink1(end1(body, ri)), bufs, sizes, 3, NULL, 0), FRIT_OK);
}

#define ATOMIC_CASE(T, DT, ORACLE, INIT_H, INIT_V, NOPS)                                     \
  for (int op = 0; op < FRIT_ATOMIC_COUNT_; op++) {                                        \
    if ((NOPS) == 4 && (op == FRIT_ATOMIC_AND || op == FRIT_ATOMIC_OR || op == FRIT_ATOMIC_XOR)) continue; \
    T h[AH], hw[AH], v[AN], olds[AN], ow[AN];                                              \
    for (int i = 0; i < AH; i++) h[i] = hw[i] = (T)(INIT_H);                               \
    for (int i = 0; i < AN; i++) v[i] = (T)(INIT_V);                                       \
    ORACLE(op, hw, v, ow);                                                                 \
    run_atomic(DT, op, h, v, olds);                                                        \
    bool ok = memcmp(h, hw, sizeof h) == 0 && memcmp(olds, ow, sizeof olds) == 0;         \
    if (!ok) fprintf(stderr, "  atomic op %d on %s differs\n", op, #T);                   \
    CHECK(ok);                                                                             \
  }

static void test_atomics(void) {
  ATOMIC_CASE(int32_t, FRIT_I32, oracle_i32, 1000 * i - 1777, (i * 2654435761u) % 4001 - 2000, 7)
  ATOMIC_CASE(int8_t, FRIT_I8, oracle_i8, 30 * i - 60, (i * 37) % 200 - 100, 7)
  ATOMIC_CASE(uint16_t, FRIT_U16, oracle_u16, 20000 * i + 5, (i * 40503u) % 65536, 7)
  ATOMIC_CASE(int64_t, FRIT_I64, oracle_i64, INT64_MAX - 3 * i, (int64_t)(i * 0x9E3779B97F4A7C15ull), 7)
  ATOMIC_CASE(uint64_t, FRIT_U64, oracle_u64, UINT64_MAX - i, i * 0x9E3779B97F4A7C15ull, 7)
  ATOMIC_CASE(float, FRIT_F32, oracle_f32, 0.1f * (float)i - 0.3f, 1.0f / (float)(i + 1) - 0.4f, 4)
  ATOMIC_CASE(double, FRIT_F64, oracle_f64, 1e10 * i - 3.5, sin((double)i) * 1e-3, 4)
  ATOMIC_CASE(bool, FRIT_BOOL, oracle_bool, i % 2, (i * 5) % 3 == 0, 7)
}

/* Gates: a false gate reads the alternative (or 0) without touching memory, and stores and
 * atomics do nothing (an atomic yields 0), even where the index is out of range. */
static void test_gates(void) {
  enum { N = 8, S = 4 };
  float a[S] = {1.5f, -2.f, 3.25f, 8.f}, a2[S] = {0}, h[S] = {10, 20, 30, 40}, out[N];
  float a2w[S], hw[S] = {10, 20, 30, 40}, want[N];
  for (int i = 0; i < N; i++) {
    bool g = i < S;
    float x = g ? a[i] : -1.f, y = g ? a[i] : 0.f, old = 0;
    if (g) a2w[i] = x * 2, old = hw[i], hw[i] += 1;
    want[i] = x + y * 10 + old * 100;
  }
  frit_uop *pa = glob(0, FRIT_F32, S), *pa2 = glob(1, FRIT_F32, S), *ph = glob(2, FRIT_F32, S), *po = glob(3, FRIT_F32, N);
  frit_uop *ri = rng(ci(N), 0, FRIT_AXIS_GLOBAL);
  frit_uop *g = LT(ri, ci(S));
  frit_uop *x = ld_alt(atg(pa, ri, g), cx(FRIT_F32, -1), 1), *y = ld(atg(pa, ri, g), 2);
  frit_uop *old = atom(FRIT_ATOMIC_ADD, atg(ph, ri, g), cx(FRIT_F32, 1), 3);
  frit_uop *res = ADD(ADD(x, MUL(y, cx(FRIT_F32, 10))), MUL(old, cx(FRIT_F32, 100)));
  frit_uop *body = SEQ(x, y, st(atg(pa2, ri, g), MUL(x, cx(FRIT_F32, 2))), old, st(at(po, ri), res));
  void *bufs[] = {a, a2, h, out};
  size_t sizes[] = {S, S, S, N};
  CHECK_EQ_INT(run(sink1(end1(body, ri)), bufs, sizes, 4, NULL, 0), FRIT_OK);
  CHECK(memcmp(a2, a2w, sizeof a2) == 0);
  CHECK(memcmp(h, hw, sizeof h) == 0);
  CHECK(memcmp(out, want, sizeof out) == 0);
}

/* Points run in row-major order: a counter bumped atomically at each point of a 3x5 kernel. */
static void test_row_major(void) {
  enum { R = 3, K = 5 };
  int64_t cnt = 0, out[R * K];
  frit_uop *pc = glob(0, I64, 1), *po = glob(1, I64, R * K);
  frit_uop *ri = rng(ci(R), 0, FRIT_AXIS_GLOBAL), *rj = rng(frit_var(C, "k", 1, 10), 1, FRIT_AXIS_GLOBAL);
  frit_uop *old = atom(FRIT_ATOMIC_ADD, at(pc, ci(0)), ci(1), 1);
  frit_uop *body = SEQ(old, st(at(po, ADD(MUL(ri, frit_var(C, "k", 1, 10)), rj)), old));
  frit_uop *k = mk(FRIT_OP_END, FRIT_VOID, LIST(body, ri, rj), arg_i(0, 0));
  void *bufs[] = {&cnt, out};
  size_t sizes[] = {1, R * K};
  frit_binding vars[] = {{"k", K}};
  CHECK_EQ_INT(run(sink1(k), bufs, sizes, 2, vars, 1), FRIT_OK);
  CHECK_EQ_INT(cnt, R * K);
  for (int i = 0; i < R * K; i++) CHECK_EQ_INT(out[i], i);
}

/* A rank-0 kernel: SINK(SEQ(...)), one point. */
static void test_rank0(void) {
  int32_t out[2] = {5, 5};
  frit_uop *po = glob(0, FRIT_I32, 2);
  frit_uop *v = ld(at(po, ci(0)), 1);
  frit_uop *root = sink1(SEQ(st(at(po, ci(0)), frit_const_int(C, FRIT_I32, 42)), v,
                             st(at(po, ci(1)), ADD(v, frit_const_int(C, FRIT_I32, 1)))));
  void *bufs[] = {out};
  size_t sizes[] = {2};
  CHECK_EQ_INT(run(root, bufs, sizes, 1, NULL, 0), FRIT_OK);
  CHECK_EQ_INT(out[0], 42);
  CHECK_EQ_INT(out[1], 43);
}

/* Per point, registers start at zero; a read in a loop keeps its last value after the loop. */
static void test_point_state(void) {
  enum { N = 4 };
  int32_t data[4] = {7, 8, 9, 10}, out[N], want[N];
  for (int i = 0; i < N; i++) {
    int32_t v = 0, r = 0;
    for (int j = 0; j < 4 - i; j++) v = data[j], r += 1;
    want[i] = v + r * 100;
  }
  frit_uop *pd = glob(0, FRIT_I32, 4), *po = glob(1, FRIT_I32, N);
  frit_uop *ri = rng(ci(N), 0, FRIT_AXIS_GLOBAL), *rj = rng(bin(FRIT_OP_SUB, ci(4), ri), 1, FRIT_AXIS_LOOP);
  frit_uop *r = reg(0, FRIT_I32);
  frit_uop *v = ld(at(pd, rj), 1), *r1 = ld(r, 2), *r2 = ld(r, 3);
  frit_uop *one = frit_const_int(C, FRIT_I32, 1);
  frit_uop *body = SEQ(end1(SEQ(v, r1, st(r, ADD(r1, one))), rj), r2,
                       st(at(po, ri), ADD(v, MUL(r2, frit_const_int(C, FRIT_I32, 100)))));
  void *bufs[] = {data, out};
  size_t sizes[] = {4, N};
  CHECK_EQ_INT(run(sink1(end1(body, ri)), bufs, sizes, 2, NULL, 0), FRIT_OK);
  CHECK(memcmp(out, want, sizeof out) == 0);
}

/* Values listed in a SEQ that read memory the kernel does not write are pure: one may be used
 * (inside a fused expression) before the point that lists it; a value computed in a loop keeps
 * its last value after the loop, as does the loop index. */
static void test_listed_pure(void) {
  enum { N = 5, D = 8 };
  int64_t d[D], o1[N], o2[N], o3[N], w1[N], w2[N], w3[N];
  for (int i = 0; i < D; i++) d[i] = i * i - 3;
  for (int i = 0; i < N; i++) {
    w1[i] = d[i] * 2, w2[i] = d[i] + 1;
    int64_t w = 0, k = 0;
    for (k = 0; k < 3; k++) w = d[k + i] + k;
    w3[i] = w * 10 + (k - 1);
  }
  frit_uop *pd = glob(0, I64, D), *p1 = glob(1, I64, N), *p2 = glob(2, I64, N), *p3 = glob(3, I64, N);
  frit_uop *ri = rng(ci(N), 0, FRIT_AXIS_GLOBAL), *rk = rng(ci(3), 1, FRIT_AXIS_LOOP);
  frit_uop *x = ld(at(pd, ri), 0), *m = MUL(x, ci(2));
  frit_uop *v = ld(at(pd, ADD(rk, ri)), 0), *w = ADD(v, rk);
  frit_uop *body = SEQ(m, st(at(p1, ri), m), x, st(at(p2, ri), ADD(x, ci(1))), end1(SEQ(v), rk),
                       st(at(p3, ri), ADD(MUL(w, ci(10)), rk)));
  void *bufs[] = {d, o1, o2, o3};
  size_t sizes[] = {D, N, N, N};
  CHECK_EQ_INT(run(sink1(end1(body, ri)), bufs, sizes, 4, NULL, 0), FRIT_OK);
  CHECK(memcmp(o1, w1, sizeof o1) == 0);
  CHECK(memcmp(o2, w2, sizeof o2) == 0);
  CHECK(memcmp(o3, w3, sizeof o3) == 0);
}

/* Pure reads fused into a kernel: a REDUCE over a row of an input inside a statement. */
static void test_pure_reduce(void) {
  enum { R = 4, K = 6 };
  double m[R * K], out[R], want[R];
  for (int i = 0; i < R * K; i++) m[i] = 1.0 / (i + 1) - 0.1 * (i % 3);
  for (int i = 0; i < R; i++) {
    double s = 0;
    for (int j = 0; j < K; j++) s += m[i * K + j];
    want[i] = s * 2;
  }
  frit_uop *pm = glob(0, FRIT_F64, R * K), *po = glob(1, FRIT_F64, R);
  frit_uop *ri = rng(ci(R), 0, FRIT_AXIS_GLOBAL), *rr = rng(ci(K), 1, FRIT_AXIS_REDUCE);
  frit_uop *sum = mk(FRIT_OP_REDUCE, FRIT_F64, LIST(ld(at(pm, ADD(MUL(ri, ci(K)), rr)), 0), rr), arg_i(FRIT_OP_ADD, 0));
  frit_uop *body = SEQ(st(at(po, ri), MUL(sum, cx(FRIT_F64, 2))));
  void *bufs[] = {m, out};
  size_t sizes[] = {R * K, R};
  CHECK_EQ_INT(run(sink1(end1(body, ri)), bufs, sizes, 2, NULL, 0), FRIT_OK);
  CHECK(memcmp(out, want, sizeof out) == 0);
}

/* Every dtype through a load, a register and a store (bit-exact copies), and a deep expression. */
static void test_dtypes_and_depth(void) {
  static const frit_dtype dts[] = {FRIT_BOOL, FRIT_I8, FRIT_I16, FRIT_I32, FRIT_I64, FRIT_U8, FRIT_U16,
                                   FRIT_U32, FRIT_U64, FRIT_F16, FRIT_BF16, FRIT_F32, FRIT_F64};
  enum { N = 6 };
  for (size_t d = 0; d < sizeof dts / sizeof *dts; d++) {
    uint8_t in[N * 8], out[N * 8];
    int bytes = frit_dtype_bits(dts[d]) / 8;
    for (int i = 0; i < N * bytes; i++) in[i] = (uint8_t)(i * 37 + 11);
    if (dts[d] == FRIT_BOOL)
      for (int i = 0; i < N; i++) in[i] = (uint8_t)(i % 2);
    if (dts[d] == FRIT_F16 || dts[d] == FRIT_BF16 || dts[d] == FRIT_F32 || dts[d] == FRIT_F64)
      for (int i = 0; i < N; i++) in[i * bytes + bytes - 1] = 0x3c; /* finite, no NaN payload games */
    memset(out, 0, sizeof out);
    frit_uop *pi = glob(0, dts[d], N), *po = glob(1, dts[d], N);
    frit_uop *ri = rng(ci(N), 0, FRIT_AXIS_GLOBAL);
    frit_uop *r = reg(0, dts[d]);
    frit_uop *v = ld(at(pi, ri), 1), *rv = ld(r, 2);
    frit_uop *body = SEQ(v, st(r, v), rv, st(at(po, ri), rv));
    void *bufs[] = {in, out};
    size_t sizes[] = {N, N};
    CHECK_EQ_INT(run(sink1(end1(body, ri)), bufs, sizes, 2, NULL, 0), FRIT_OK);
    if (memcmp(in, out, (size_t)(N * bytes)) != 0) fprintf(stderr, "  copy of dtype %d differs\n", (int)dts[d]);
    CHECK(memcmp(in, out, (size_t)(N * bytes)) == 0);
  }
  /* a 100k-deep chain of adds on the point index: evaluated without recursion */
  int64_t out[3];
  frit_uop *po = glob(0, I64, 3), *ri = rng(ci(3), 0, FRIT_AXIS_GLOBAL), *x = ri;
  for (int i = 0; i < 100000; i++) x = ADD(x, ci(i % 3));
  void *bufs[] = {out};
  size_t sizes[] = {3};
  CHECK_EQ_INT(frit_interpret(C, sink1(end1(SEQ(st(at(po, ri), x)), ri)), bufs, sizes, 1, NULL, 0, NULL), FRIT_OK);
  for (int i = 0; i < 3; i++) CHECK_EQ_INT(out[i], i + 99999);
}

static void expect_runtime_error(frit_uop *root, void *const *bufs, const size_t *sizes, int n, const char *what,
                                 int line) {
  frit_status st = frit_interpret(C, root, bufs, sizes, n, NULL, 0, NULL);
  bool ok = st == FRIT_ERR_RUNTIME && strstr(frit_error(C), what);
  if (!ok) fprintf(stderr, "line %d: expected a runtime error mentioning \"%s\", got %d \"%s\"\n", line, what, st, frit_error(C));
  CHECK(ok);
  frit_clear_error(C);
}
#define EXPECT_ERR(root, what) expect_runtime_error(root, bufs, sizes, 1, what, __LINE__)

static void test_errors(void) {
  enum { N = 4 };
  int64_t out[N];
  void *bufs[] = {out};
  size_t sizes[] = {N};
  frit_uop *po = glob(0, I64, N);
  frit_uop *ri = rng(ci(N), 0, FRIT_AXIS_GLOBAL), *rj = rng(ci(3), 1, FRIT_AXIS_LOOP);
  /* out of bounds with a true gate (the last point), and a load below 0 */
  EXPECT_ERR(sink1(end1(SEQ(st(at(po, ADD(ri, ci(1))), ri)), ri)), "index 4 out of bounds");
  EXPECT_ERR(sink1(end1(SEQ(ld(at(po, bin(FRIT_OP_SUB, ri, ci(1))), 1)), ri)), "out of bounds");
  /* an unbound trip-count variable */
  frit_uop *rv = rng(frit_var(C, "n", 0, 10), 2, FRIT_AXIS_LOOP);
  EXPECT_ERR(sink1(end1(SEQ(end1(SEQ(st(at(po, ri), rv)), rv)), ri)), "unbound variable 'n'");
  /* BREAK after its loop has ended; a range (or a value over it) used after a loop that did not run */
  EXPECT_ERR(sink1(end1(SEQ(end1(SEQ(st(at(po, ri), rj)), rj), brk(rj)), ri)), "not inside the loop");
  frit_uop *r0 = rng(ci(0), 3, FRIT_AXIS_LOOP);
  EXPECT_ERR(sink1(end1(SEQ(end1(SEQ(st(at(po, ri), r0)), r0), st(at(po, ri), r0)), ri)), "outside its loop");
  EXPECT_ERR(sink1(end1(SEQ(end1(SEQ(st(at(po, ri), r0)), r0), st(at(po, ri), ADD(r0, ri))), ri)), "outside its loop");
  /* a read of memory the kernel writes, used before its statement ran at this point */
  frit_uop *late = ld(at(po, ri), 7);
  EXPECT_ERR(sink1(end1(SEQ(end1(SEQ(late), r0), st(at(po, ri), late)), ri)), "before the statement");
  EXPECT_ERR(sink1(end1(SEQ(st(at(po, ri), ADD(late, ci(1))), late), ri)), "before the statement");
  /* ... also when a value computed from it at the previous point is still cached */
  frit_uop *use = ADD(late, ci(1));
  EXPECT_ERR(sink1(end1(SEQ(iff(EQ(ri, ci(0)), SEQ(late), NULL), st(at(po, ri), use)), ri)), "before the statement");
  /* an element address of a tensor-level node (Contract A) must be scheduled first */
  frit_uop *t = frit_tensor_uop(frit_input(C, "t", I64, 1, (int64_t[]){N}));
  frit_uop *ea = mk(FRIT_OP_INDEX, frit_dtype_ptr(I64, FRIT_ADDR_GLOBAL), LIST(t, ri), arg_i(0, 0));
  EXPECT_ERR(sink1(end1(SEQ(st(ea, ri)), ri)), "schedule");
}

int main(void) {
  C = frit_ctx_new();
  test_nested_dynamic();
  test_break_continue();
  test_hazards();
  test_atomics();
  test_gates();
  test_row_major();
  test_rank0();
  test_point_state();
  test_listed_pure();
  test_pure_reduce();
  test_dtypes_and_depth();
  test_errors();
  frit_ctx_free(C);
  CHECK_DONE();
}
