/* Differential fuzzer of frit_simplify: random integer/index expressions are simplified and
 * evaluated, before and after, with the interpreter and with C arithmetic in this file (the
 * oracle), at corner and random points. Failures are minimised, printed and optionally saved.
 * First replays every .ir file in tests/corpus/simplify.
 *
 * Environment: FRIT_FUZZ_SEED (or argv[1]) seed; FRIT_FUZZ_N expressions (default 100000,
 * 10000 under ASan);
 * FRIT_FUZZ_ONLY=i runs expression i alone; FRIT_FUZZ_DEPTH maximum depth (default 4);
 * FRIT_FUZZ_SAVE=1 writes minimised failures to FRIT_FUZZ_SAVE_DIR (default
 * tests/corpus/simplify); FRIT_FUZZ_KEEP_GOING=k reports up to k failures before stopping;
 * FRIT_FUZZ_CORPUS replay directory (default tests/corpus/simplify); FRIT_FUZZ_RULES=1 lists how
 * often each simplifier rule fired.
 *
 * Speed, measured on 2 cores shared with other builds: -O2, the default 100000 expressions in
 * 4.9-10 s (including the second simplify of the idempotence check); -O1 ASan+UBSan, 10000
 * expressions in 3-13 s. */
#include <dirent.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "frit.h"

/* ---------- random numbers ---------- */

static uint64_t rng_state;
static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static uint64_t rnd(void) { return splitmix(&rng_state); }
static int rn(int n) { return (int)(rnd() % (uint64_t)n); } /* 0..n-1 */
static bool chance(int percent) { return rn(100) < percent; }

/* ---------- expression trees ---------- */

#define MAXN 96
#define MAXV 4

typedef struct enode {
  frit_op op;    /* CONST (val), DEFINE_VAR (val = variable index), CAST, or an ALU op */
  frit_dtype dt; /* FRIT_BOOL, FRIT_I32 or FRIT_I64 */
  int src[3];
  int64_t val;
} enode;

typedef struct evar {
  char name[8];
  int64_t lo, hi; /* inclusive */
} evar;

typedef struct expr {
  enode n[MAXN];
  int nn, root;
  evar v[MAXV];
  int nv;
} expr;

/* Only the ops the generator makes occur here; all but these are binary. */
static int nsrc_of(frit_op op) {
  if (op == FRIT_OP_CONST || op == FRIT_OP_DEFINE_VAR) return 0;
  if (op == FRIT_OP_CAST || op == FRIT_OP_NEG || op == FRIT_OP_NOT) return 1;
  return op == FRIT_OP_WHERE ? 3 : 2;
}

static int64_t wrap(int64_t v, frit_dtype dt) {
  if (dt == FRIT_BOOL) return v != 0;
  if (dt == FRIT_I32) return (int64_t)(int32_t)(uint32_t)(uint64_t)v;
  return v;
}

static int add_node(expr *e, frit_op op, frit_dtype dt, int a, int b, int c, int64_t val) {
  if (e->nn == MAXN) return -1;
  enode *n = &e->n[e->nn];
  n->op = op;
  n->dt = dt;
  n->src[0] = a;
  n->src[1] = b;
  n->src[2] = c;
  n->val = op == FRIT_OP_CONST ? wrap(val, dt) : val;
  return e->nn++;
}

/* ---------- the oracle: C arithmetic with frit's semantics (docs/semantics.md) ---------- */

/* The self-test plants this bug (floor instead of truncating division) to see the fuzzer catch
 * and minimise it. */
static bool planted_bug;

static int64_t eval_op(frit_op op, frit_dtype dt, int64_t a, int64_t b, int64_t c) {
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  int bits = dt == FRIT_I32 ? 32 : 64;
  /* the oracle covers only the ops the generator makes, so this is a switch over int */
  switch ((int)op) {
    case FRIT_OP_ADD: return wrap((int64_t)(ua + ub), dt);
    case FRIT_OP_SUB: return wrap((int64_t)(ua - ub), dt);
    case FRIT_OP_MUL: return wrap((int64_t)(ua * ub), dt);
    case FRIT_OP_NEG: return wrap((int64_t)(0 - ua), dt);
    case FRIT_OP_IDIV:
      if (b == 0) return 0;
      if (b == -1) return wrap((int64_t)(0 - ua), dt);
      if (planted_bug && (a < 0) != (b < 0) && a % b) return a / b - 1;
      return a / b;
    case FRIT_OP_MOD:
      if (b == 0) return a;
      if (b == -1) return 0;
      return a % b;
    case FRIT_OP_MIN: return a < b ? a : b;
    case FRIT_OP_MAX: return a > b ? a : b;
    case FRIT_OP_AND: return a & b;
    case FRIT_OP_OR: return a | b;
    case FRIT_OP_XOR: return a ^ b;
    case FRIT_OP_NOT: return dt == FRIT_BOOL ? !a : ~a;
    case FRIT_OP_SHL: return wrap((int64_t)(ua << (ub & (uint64_t)(bits - 1))), dt);
    case FRIT_OP_SHR: {
      /* arithmetic shift without relying on implementation-defined >> of negatives */
      int s = (int)(ub & (uint64_t)(bits - 1));
      return a >= 0 ? a >> s : -1 - ((-1 - a) >> s);
    }
    case FRIT_OP_CMPLT: return a < b;
    case FRIT_OP_CMPLE: return a <= b;
    case FRIT_OP_CMPEQ: return a == b;
    case FRIT_OP_CMPNE: return a != b;
    case FRIT_OP_WHERE: return a ? b : c;
    default: fprintf(stderr, "fuzz: oracle lacks op %s\n", frit_op_name(op)); exit(3);
  }
}

static int64_t eval_tree(const expr *e, int i, const int64_t *vals) {
  const enode *n = &e->n[i];
  if (n->op == FRIT_OP_CONST) return n->val;
  if (n->op == FRIT_OP_DEFINE_VAR) return vals[n->val];
  if (n->op == FRIT_OP_CAST) return wrap(eval_tree(e, n->src[0], vals), n->dt);
  int k = nsrc_of(n->op);
  int64_t s[3] = {0, 0, 0};
  for (int j = 0; j < k; j++) s[j] = eval_tree(e, n->src[j], vals);
  frit_dtype opdt = n->op == FRIT_OP_WHERE ? n->dt : e->n[n->src[0]].dt;
  return eval_op(n->op, opdt, s[0], s[1], s[2]);
}

/* ---------- generation ---------- */

static int64_t gen_const(frit_dtype dt) {
  int r = rn(100);
  if (r < 55) return rn(22) - 5;
  if (r < 70) return (int64_t)1 << rn(dt == FRIT_I32 ? 24 : 40);
  if (r < 80) return -((int64_t)1 << rn(20));
  if (r < 90) return (int64_t)(rnd() >> rn(64));
  switch (rn(4)) {
    case 0: return dt == FRIT_I32 ? INT32_MIN : INT64_MIN;
    case 1: return dt == FRIT_I32 ? INT32_MAX : INT64_MAX;
    case 2: return -1;
    default: return dt == FRIT_I32 ? INT32_MAX - 1 : INT64_MAX - 1;
  }
}

static int64_t small_divisor(void) {
  int r = rn(100);
  if (r < 80) return 1 + rn(16);
  if (r < 90) return -(1 + rn(8));
  if (r < 95) return (int64_t)1 << rn(12);
  return rn(2) ? 0 : 1 + rn(1000);
}

static int gen_int(expr *e, frit_dtype dt, int depth);

static int gen_bool(expr *e, int depth) {
  int r = rn(100);
  if (depth <= 0 || r < 5)
    return add_node(e, FRIT_OP_CONST, FRIT_BOOL, -1, -1, -1, rn(2));
  if (r < 60) {
    static const frit_op cmps[] = {FRIT_OP_CMPLT, FRIT_OP_CMPLE, FRIT_OP_CMPEQ, FRIT_OP_CMPNE};
    frit_dtype dt = chance(80) ? FRIT_I64 : FRIT_I32;
    int a = gen_int(e, dt, depth - 1);
    int b = chance(60) ? add_node(e, FRIT_OP_CONST, dt, -1, -1, -1, gen_const(dt))
                       : gen_int(e, dt, depth - 1);
    return add_node(e, cmps[rn(4)], FRIT_BOOL, a, b, -1, 0);
  }
  if (r < 88) {
    int a = gen_bool(e, depth - 1), b = gen_bool(e, depth - 1);
    static const frit_op ops[] = {FRIT_OP_AND, FRIT_OP_OR, FRIT_OP_XOR, FRIT_OP_CMPNE,
                                  FRIT_OP_CMPEQ};
    return add_node(e, ops[chance(80) ? rn(2) : rn(5)], FRIT_BOOL, a, b, -1, 0);
  }
  if (r < 95) return add_node(e, FRIT_OP_NOT, FRIT_BOOL, gen_bool(e, depth - 1), -1, -1, 0);
  int c = gen_bool(e, depth - 1), a = gen_bool(e, depth - 1), b = gen_bool(e, depth - 1);
  if (c < 0 || a < 0 || b < 0) return -1;
  return add_node(e, FRIT_OP_WHERE, FRIT_BOOL, c, a, b, 0);
}

static int leaf(expr *e, frit_dtype dt) {
  if (chance(65)) {
    int v = add_node(e, FRIT_OP_DEFINE_VAR, FRIT_I64, -1, -1, -1, rn(e->nv));
    return dt == FRIT_I64 ? v : add_node(e, FRIT_OP_CAST, dt, v, -1, -1, 0);
  }
  return add_node(e, FRIT_OP_CONST, dt, -1, -1, -1, gen_const(dt));
}

static int cst(expr *e, frit_dtype dt, int64_t v) {
  return add_node(e, FRIT_OP_CONST, dt, -1, -1, -1, v);
}
static int bin(expr *e, frit_op op, int a, int b) {
  if (a < 0 || b < 0) return -1;
  return add_node(e, op, e->n[a].dt, a, b, -1, 0);
}

/* Index arithmetic as lowering produces it: (a*K+b)/K, (a*K+b)%K, ((a*K+b)*M+c)/M%K,
 * s/K*K + s%K. */
static int gen_index(expr *e, frit_dtype dt, int depth) {
  int64_t k = 1 + rn(chance(80) ? 16 : 256), m = 1 + rn(16);
  int a = gen_int(e, dt, depth - 1), b = gen_int(e, dt, depth - 1);
  int ak = bin(e, FRIT_OP_MUL, a, cst(e, dt, k));
  int s = bin(e, FRIT_OP_ADD, ak, b);
  switch (rn(5)) {
    case 4: /* quotient and remainder recombined; s is shared by both */
      return bin(e, FRIT_OP_ADD,
                 bin(e, FRIT_OP_MUL, bin(e, FRIT_OP_IDIV, s, cst(e, dt, k)), cst(e, dt, k)),
                 bin(e, FRIT_OP_MOD, s, cst(e, dt, k)));
    case 0: return bin(e, FRIT_OP_IDIV, s, cst(e, dt, k));
    case 1: return bin(e, FRIT_OP_MOD, s, cst(e, dt, k));
    case 2: {
      int c = gen_int(e, dt, depth - 1);
      int t = bin(e, FRIT_OP_ADD, bin(e, FRIT_OP_MUL, s, cst(e, dt, m)), c);
      return bin(e, FRIT_OP_MOD, bin(e, FRIT_OP_IDIV, t, cst(e, dt, m)), cst(e, dt, k));
    }
    default: {
      int t = bin(e, FRIT_OP_IDIV, s, cst(e, dt, m));
      return bin(e, chance(50) ? FRIT_OP_IDIV : FRIT_OP_MOD, t, cst(e, dt, 1 + rn(8)));
    }
  }
}

static int gen_int(expr *e, frit_dtype dt, int depth) {
  if (e->nn > MAXN - 24) return leaf(e, dt);
  if (depth <= 0 || chance(22)) return leaf(e, dt);
  int r = rn(100);
  if (r < 30) {
    static const frit_op ops[] = {FRIT_OP_ADD, FRIT_OP_SUB, FRIT_OP_MUL};
    frit_op op = ops[rn(3)];
    int a = gen_int(e, dt, depth - 1);
    int b = (op == FRIT_OP_MUL && chance(70)) || chance(30) ? cst(e, dt, gen_const(dt))
                                                           : gen_int(e, dt, depth - 1);
    return bin(e, op, a, b);
  }
  if (r < 50) {
    int a = gen_int(e, dt, depth - 1);
    int b = chance(85) ? cst(e, dt, small_divisor()) : gen_int(e, dt, depth - 1);
    return bin(e, chance(50) ? FRIT_OP_IDIV : FRIT_OP_MOD, a, b);
  }
  if (r < 60) return gen_index(e, dt, depth);
  if (r < 68) {
    int a = gen_int(e, dt, depth - 1);
    int b = chance(50) ? cst(e, dt, gen_const(dt)) : gen_int(e, dt, depth - 1);
    return bin(e, chance(50) ? FRIT_OP_MIN : FRIT_OP_MAX, a, b);
  }
  if (r < 76) {
    int c = gen_bool(e, depth - 1);
    int a = gen_int(e, dt, depth - 1), b = gen_int(e, dt, depth - 1);
    if (c < 0 || a < 0 || b < 0) return -1;
    return add_node(e, FRIT_OP_WHERE, dt, c, a, b, 0);
  }
  if (r < 83) {
    int x = chance(80) ? gen_int(e, dt == FRIT_I64 ? FRIT_I32 : FRIT_I64, depth - 1)
                       : gen_bool(e, depth - 1);
    return x < 0 ? -1 : add_node(e, FRIT_OP_CAST, dt, x, -1, -1, 0);
  }
  if (r < 89) {
    int a = gen_int(e, dt, depth - 1);
    int b = chance(85) ? cst(e, dt, rn(8)) : gen_int(e, dt, depth - 1);
    return bin(e, chance(50) ? FRIT_OP_SHL : FRIT_OP_SHR, a, b);
  }
  if (r < 95) {
    static const frit_op ops[] = {FRIT_OP_AND, FRIT_OP_OR, FRIT_OP_XOR};
    int a = gen_int(e, dt, depth - 1);
    int b = chance(60) ? cst(e, dt, chance(70) ? ((int64_t)1 << rn(8)) - 1 : gen_const(dt))
                       : gen_int(e, dt, depth - 1);
    return bin(e, ops[rn(3)], a, b);
  }
  int a = gen_int(e, dt, depth - 1);
  return a < 0 ? -1 : add_node(e, chance(70) ? FRIT_OP_NEG : FRIT_OP_NOT, dt, a, -1, -1, 0);
}

static void gen_var_range(evar *v) {
  int r = rn(100);
  int64_t lo, hi;
  if (r < 40) lo = 0, hi = rn(64);
  else if (r < 65) lo = rn(41) - 20, hi = lo + rn(40);
  else if (r < 75) lo = INT32_MIN, hi = INT32_MAX;
  else if (r < 80) lo = 0, hi = UINT32_MAX;
  else if (r < 88) lo = INT64_MIN, hi = INT64_MAX;
  else if (r < 94) lo = (int64_t)1 << 40, hi = lo + rn(1000);
  else lo = INT64_MAX - rn(100), hi = INT64_MAX;
  v->lo = lo;
  v->hi = hi;
}

static int max_depth = 4; /* FRIT_FUZZ_DEPTH */

static bool gen_expr(expr *e) {
  memset(e, 0, sizeof *e);
  e->nv = 1 + rn(MAXV);
  for (int i = 0; i < e->nv; i++) {
    snprintf(e->v[i].name, sizeof e->v[i].name, "%c", "xyzw"[i]);
    gen_var_range(&e->v[i]);
  }
  int depth = 1 + rn(max_depth);
  int r = rn(100);
  e->root = r < 70 ? gen_int(e, FRIT_I64, depth) : r < 85 ? gen_int(e, FRIT_I32, depth)
                                                          : gen_bool(e, depth);
  return e->root >= 0;
}

/* ---------- building frit graphs ---------- */

static frit_uop *build(frit_ctx *ctx, const expr *e, int i) {
  const enode *n = &e->n[i];
  if (n->op == FRIT_OP_CONST) return frit_const_int(ctx, n->dt, n->val);
  if (n->op == FRIT_OP_DEFINE_VAR) {
    const evar *v = &e->v[n->val];
    return frit_var(ctx, v->name, v->lo, v->hi);
  }
  if (n->op == FRIT_OP_CAST) {
    frit_uop *x = build(ctx, e, n->src[0]);
    return x ? frit_cast(ctx, x, n->dt) : NULL;
  }
  frit_uop *s[3];
  int k = nsrc_of(n->op);
  for (int j = 0; j < k; j++)
    if (!(s[j] = build(ctx, e, n->src[j]))) return NULL;
  return frit_alu(ctx, n->op, s, k);
}

/* ---------- checking one graph at sample points ---------- */

#define MAXPTS 32

typedef struct points {
  int n, nv;
  int64_t v[MAXPTS][MAXV];
} points;

static int64_t pick_value(int64_t lo, int64_t hi) {
  uint64_t w = (uint64_t)hi - (uint64_t)lo;
  switch (rn(6)) {
    case 0: return lo;
    case 1: return hi;
    case 2: return lo < hi ? lo + 1 : lo;
    case 3: return lo < hi ? hi - 1 : hi;
    case 4: if (lo <= 0 && hi >= 0) return rn(2) ? 0 : (lo < 0 && rn(2) ? -1 : (hi > 0 ? 1 : 0));
      /* fall through */
    default: return w == UINT64_MAX ? (int64_t)rnd() : (int64_t)((uint64_t)lo + rnd() % (w + 1));
  }
}

/* Corners of the variables' box, then random points near edges, zero and inside. */
static void make_points(points *p, const int64_t *lo, const int64_t *hi, int nv, int nrandom) {
  p->nv = nv;
  p->n = 0;
  for (int c = 0; c < (1 << nv) && p->n < MAXPTS; c++, p->n++)
    for (int j = 0; j < nv; j++) p->v[p->n][j] = (c >> j) & 1 ? hi[j] : lo[j];
  for (int k = 0; k < nrandom && p->n < MAXPTS; k++, p->n++)
    for (int j = 0; j < nv; j++) p->v[p->n][j] = pick_value(lo[j], hi[j]);
}

typedef struct outcome {
  bool failed;
  bool changed; /* simplify returned a different node */
  char what[512];
} outcome;

/* Simplifies e and compares oracle, interpreter(original), interpreter(simplified). */
static outcome check_expr(frit_ctx *ctx, const expr *e, uint64_t point_seed) {
  outcome o = {false, false, ""};
  frit_uop *orig = build(ctx, e, e->root);
  if (!orig) {
    /* the generator only builds well-typed trees: a refusal is a library bug */
    o.failed = true;
    snprintf(o.what, sizeof o.what, "building the graph failed: %s", frit_error(ctx));
    return o;
  }
  frit_uop *simp = frit_simplify(ctx, orig);
  if (!simp) {
    o.failed = true;
    snprintf(o.what, sizeof o.what, "frit_simplify failed: %s", frit_error(ctx));
    return o;
  }
  o.changed = simp != orig;
  /* a fixed point: simplifying the result again changes nothing */
  frit_uop *again = frit_simplify(ctx, simp);
  if (again != simp) {
    o.failed = true;
    const char *a = again ? frit_render_c_expr(ctx, again) : NULL;
    snprintf(o.what, sizeof o.what, "simplify is not idempotent: simplifying again gives %s",
             a ? a : frit_error(ctx));
    return o;
  }
  if (frit_uop_dtype(simp) != frit_uop_dtype(orig)) {
    o.failed = true;
    snprintf(o.what, sizeof o.what, "simplify changed the dtype");
    return o;
  }
  int64_t lo[MAXV] = {0}, hi[MAXV] = {0};
  for (int j = 0; j < e->nv; j++) lo[j] = e->v[j].lo, hi[j] = e->v[j].hi;
  uint64_t saved = rng_state;
  rng_state = point_seed;
  points p;
  make_points(&p, lo, hi, e->nv, 8);
  rng_state = saved;
  frit_binding b[MAXV];
  for (int j = 0; j < e->nv; j++) b[j].name = e->v[j].name;
  for (int k = 0; k < p.n; k++) {
    for (int j = 0; j < e->nv; j++) b[j].value = p.v[k][j];
    int64_t want = eval_tree(e, e->root, p.v[k]);
    frit_scalar got_o, got_s;
    frit_status so = frit_interpret(ctx, orig, NULL, NULL, 0, b, e->nv, &got_o);
    frit_status ss = so == FRIT_OK ? frit_interpret(ctx, simp, NULL, NULL, 0, b, e->nv, &got_s)
                                   : FRIT_OK;
    if (so != FRIT_OK || ss != FRIT_OK || got_o.i != want || got_s.i != want) {
      o.failed = true;
      int len = snprintf(o.what, sizeof o.what, "at");
      for (int j = 0; j < e->nv; j++)
        len += snprintf(o.what + len, sizeof o.what - (size_t)len, " %s=%" PRId64, b[j].name,
                        b[j].value);
      if (so != FRIT_OK || ss != FRIT_OK)
        snprintf(o.what + len, sizeof o.what - (size_t)len, ": interpreter error: %s",
                 frit_error(ctx));
      else
        snprintf(o.what + len, sizeof o.what - (size_t)len,
                 ": C oracle %" PRId64 ", interpreter on original %" PRId64
                 ", on simplified %" PRId64 "%s",
                 want, got_o.i, got_s.i,
                 got_o.i != want ? " (INTERPRETER disagrees with the oracle)" : "");
      return o;
    }
  }
  return o;
}

/* ---------- minimisation ---------- */

static uint64_t magnitude(int64_t v) { return v < 0 ? 0 - (uint64_t)v : (uint64_t)v; }

/* Smaller is simpler: node count, then constant sizes, then range widths. */
static void expr_cost(const expr *e, int i, uint64_t *nodes, uint64_t *consts) {
  const enode *n = &e->n[i];
  *nodes += 1;
  if (n->op == FRIT_OP_CONST) *consts += magnitude(n->val) / 2 + (n->val < 0);
  for (int j = 0; j < nsrc_of(n->op); j++) expr_cost(e, n->src[j], nodes, consts);
}
static bool simpler(const expr *a, const expr *b) {
  uint64_t na = 0, ca = 0, nb = 0, cb = 0;
  expr_cost(a, a->root, &na, &ca);
  expr_cost(b, b->root, &nb, &cb);
  if (na != nb) return na < nb;
  if (ca != cb) return ca < cb;
  uint64_t wa = 0, wb = 0;
  for (int j = 0; j < a->nv; j++) wa += ((uint64_t)a->v[j].hi - (uint64_t)a->v[j].lo) / 4 +
                                        magnitude(a->v[j].lo) / 4;
  for (int j = 0; j < b->nv; j++) wb += ((uint64_t)b->v[j].hi - (uint64_t)b->v[j].lo) / 4 +
                                        magnitude(b->v[j].lo) / 4;
  return wa < wb;
}

static bool still_fails(const expr *e) {
  frit_ctx *ctx = frit_ctx_new();
  outcome o = check_expr(ctx, e, 12345);
  frit_ctx_free(ctx);
  return o.failed;
}

static bool try_candidate(expr *best, const expr *cand, int *budget) {
  if (*budget <= 0 || !simpler(cand, best)) return false;
  (*budget)--;
  if (!still_fails(cand)) return false;
  *best = *cand;
  return true;
}

static void minimise(expr *e) {
  int budget = 4000;
  bool progress = true;
  while (progress && budget > 0) {
    progress = false;
    for (int i = 0; i < e->nn && budget > 0; i++) {
      enode n = e->n[i];
      expr c;
      bool replaced = false;
      /* a node by one of its sources of the same dtype */
      for (int j = 0; j < nsrc_of(n.op) && !replaced; j++) {
        if (e->n[n.src[j]].dt != n.dt) continue;
        c = *e;
        c.n[i] = e->n[n.src[j]];
        replaced = try_candidate(e, &c, &budget);
      }
      if (replaced) {
        progress = true;
        continue;
      }
      /* a node by a constant; a constant by a smaller one */
      int64_t tries[] = {0, 1, -1, n.val / 2, n.val > 0 ? n.val - 1 : n.val + 1, 2};
      for (size_t t = 0; t < sizeof tries / sizeof tries[0]; t++) {
        if (n.op == FRIT_OP_CONST && tries[t] == n.val) continue;
        if (n.op != FRIT_OP_CONST && t >= 3) break;
        c = *e;
        c.n[i].op = FRIT_OP_CONST;
        c.n[i].val = wrap(tries[t], n.dt);
        if (try_candidate(e, &c, &budget)) {
          progress = true;
          break;
        }
      }
    }
    /* narrower variable ranges */
    for (int j = 0; j < e->nv && budget > 0; j++) {
      for (int t = 0; t < 6; t++) {
        expr c = *e;
        evar *v = &c.v[j];
        int64_t mid = (int64_t)((uint64_t)v->lo + ((uint64_t)v->hi - (uint64_t)v->lo) / 2);
        switch (t) {
          case 0: if (v->lo < 0 && v->hi >= 0) v->lo = 0; break;
          case 1: v->hi = mid; break;
          case 2: v->lo = mid; break;
          case 3: if (v->lo <= 0 && v->hi > 16) v->hi = 16; break;
          case 4: if (v->lo < -16 && v->hi >= -16) v->lo = -16; break;
          default: if (v->lo < v->hi) v->hi = v->hi - 1; break;
        }
        if (try_candidate(e, &c, &budget)) progress = true;
      }
    }
  }
}

/* ---------- reporting and saving failures ---------- */

static uint64_t fnv1a(const char *s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return h;
}

static void mark_used(const expr *e, int i, bool *used) {
  if (e->n[i].op == FRIT_OP_DEFINE_VAR) used[e->n[i].val] = true;
  for (int j = 0; j < nsrc_of(e->n[i].op); j++) mark_used(e, e->n[i].src[j], used);
}

static void report_failure(const expr *e, const char *label) {
  frit_ctx *ctx = frit_ctx_new();
  outcome o = check_expr(ctx, e, 12345);
  frit_uop *orig = build(ctx, e, e->root);
  const char *ir = orig ? frit_ir_to_string(ctx, orig) : NULL;
  char *ir_copy = ir ? strdup(ir) : NULL;
  const char *c = orig ? frit_render_c_expr(ctx, orig) : NULL;
  char *c_copy = c ? strdup(c) : NULL;
  fprintf(stderr, "\nFUZZ FAILURE (%s): %s\n  ranges:", label, o.what);
  bool used[MAXV] = {false};
  mark_used(e, e->root, used);
  for (int j = 0; j < e->nv; j++)
    if (used[j])
      fprintf(stderr, " %s in [%" PRId64 ", %" PRId64 "]", e->v[j].name, e->v[j].lo, e->v[j].hi);
  fprintf(stderr, "\n  expression (C): %s\n", c_copy ? c_copy : "(render failed)");
  frit_uop *simp = orig ? frit_simplify(ctx, orig) : NULL;
  const char *sc = simp ? frit_render_c_expr(ctx, simp) : NULL;
  fprintf(stderr, "  simplified (C): %s\n", sc ? sc : "(none)");
  fprintf(stderr, "  expression (IR):\n%s\n", ir_copy ? ir_copy : "(print failed)");
  const char *save = getenv("FRIT_FUZZ_SAVE");
  if (ir_copy && save && !strcmp(save, "1")) {
    const char *dir = getenv("FRIT_FUZZ_SAVE_DIR");
    if (!dir) dir = "tests/corpus/simplify";
    char path[1024];
    snprintf(path, sizeof path, "%s/%016" PRIx64 ".ir", dir, fnv1a(ir_copy));
    FILE *f = fopen(path, "w");
    if (f) {
      fprintf(f, "# test_fuzz_simplify, %s: %s\n# C: %s\n", label, o.what, c_copy ? c_copy : "?");
      fputs(ir_copy, f);
      fclose(f);
      fprintf(stderr, "  saved to %s\n", path);
    } else {
      fprintf(stderr, "  could not write %s\n", path);
    }
  }
  free(ir_copy);
  free(c_copy);
  frit_ctx_free(ctx);
}

/* ---------- corpus replay ---------- */

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The DEFINE_VARs reachable from root (at most MAXV*4). */
static int collect_vars(frit_uop *root, frit_uop **vars, int max, unsigned char *seen) {
  int n = 0;
  frit_uop *stack[4096];
  int sp = 0;
  stack[sp++] = root;
  seen[frit_uop_id(root)] = 1;
  while (sp) {
    frit_uop *u = stack[--sp];
    if (frit_uop_op(u) == FRIT_OP_DEFINE_VAR && n < max) vars[n++] = u;
    for (int i = 0; i < frit_uop_nsrc(u); i++) {
      frit_uop *s = frit_uop_src(u, i);
      if (seen[frit_uop_id(s)] || sp == 4096) continue;
      seen[frit_uop_id(s)] = 1;
      stack[sp++] = s;
    }
  }
  return n;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = len >= 0 ? malloc((size_t)len + 1) : NULL;
  if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
    free(buf);
    buf = NULL;
  }
  if (buf) buf[len] = '\0';
  fclose(f);
  return buf;
}

static void replay_file(const char *path) {
  char *text = slurp(path);
  CHECK(text != NULL);
  if (!text) return;
  frit_ctx *ctx = frit_ctx_new();
  frit_uop *root = frit_parse_ir(ctx, text);
  free(text);
  if (!root) {
    fprintf(stderr, "%s: parse failed: %s\n", path, frit_error(ctx));
    CHECK(root != NULL);
    frit_ctx_free(ctx);
    return;
  }
  frit_uop *simp = frit_simplify(ctx, root);
  if (!simp) fprintf(stderr, "%s: simplify failed: %s\n", path, frit_error(ctx));
  CHECK(simp != NULL);
  unsigned char *seen = calloc(frit_node_count(ctx) + 1, 1);
  frit_uop *vars[16];
  int nv = collect_vars(root, vars, 16, seen);
  free(seen);
  int64_t lo[16], hi[16];
  frit_binding b[16];
  for (int j = 0; j < nv; j++) {
    lo[j] = frit_uop_arg(vars[j])->i0;
    hi[j] = frit_uop_arg(vars[j])->i1;
    b[j].name = frit_uop_arg(vars[j])->blob;
  }
  uint64_t pts_seed = 777;
  for (int round = 0; simp && round < 8; round++) {
    points p;
    uint64_t saved = rng_state;
    rng_state = pts_seed + (uint64_t)round;
    make_points(&p, lo, hi, nv < MAXV ? nv : MAXV, 16);
    int64_t extra[16];
    for (int j = MAXV; j < nv; j++) extra[j] = pick_value(lo[j], hi[j]);
    rng_state = saved;
    for (int k = 0; k < p.n; k++) {
      for (int j = 0; j < nv; j++) b[j].value = j < MAXV ? p.v[k][j] : extra[j];
      frit_scalar vo, vs;
      frit_status so = frit_interpret(ctx, root, NULL, NULL, 0, b, nv, &vo);
      frit_status ss = frit_interpret(ctx, simp, NULL, NULL, 0, b, nv, &vs);
      if (so != FRIT_OK || ss != FRIT_OK || vo.i != vs.i) {
        fprintf(stderr, "%s: mismatch at", path);
        for (int j = 0; j < nv; j++) fprintf(stderr, " %s=%" PRId64, b[j].name, b[j].value);
        if (so != FRIT_OK || ss != FRIT_OK)
          fprintf(stderr, ": interpreter error: %s\n", frit_error(ctx));
        else
          fprintf(stderr, ": original %" PRId64 ", simplified %" PRId64 "\n", vo.i, vs.i);
        CHECK(0);
        round = 8;
        break;
      }
    }
  }
  frit_ctx_free(ctx);
}

static int replay_corpus(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "fuzz: no corpus directory %s\n", dir);
    return 0;
  }
  char *names[4096];
  int n = 0;
  struct dirent *ent;
  while ((ent = readdir(d)) && n < 4096) {
    size_t len = strlen(ent->d_name);
    if (len > 3 && !strcmp(ent->d_name + len - 3, ".ir")) names[n++] = strdup(ent->d_name);
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof names[0], cmp_str);
  for (int i = 0; i < n; i++) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    replay_file(path);
    free(names[i]);
  }
  return n;
}

/* ---------- self-test of the failure path ---------- */

static int tree_size(const expr *e, int i) {
  int c = 1;
  for (int j = 0; j < nsrc_of(e->n[i].op); j++) c += tree_size(e, e->n[i].src[j]);
  return c;
}

/* With a bug planted in the oracle, the fuzzer must find a failing expression quickly and
 * minimise it to the three nodes "a / b" (any smaller cannot divide). */
static void self_test(void) {
  static expr e;
  planted_bug = true;
  bool found = false;
  for (uint64_t i = 0; i < 2000 && !found; i++) {
    uint64_t s = 0xdeadbeefull + i;
    rng_state = splitmix(&s);
    if (!gen_expr(&e) || !still_fails(&e)) continue;
    found = true;
    minimise(&e);
    int size = tree_size(&e, e.root);
    if (size != 3) report_failure(&e, "self-test: planted bug, minimised");
    CHECK_EQ_INT(size, 3);
    CHECK(e.n[e.root].op == FRIT_OP_IDIV);
  }
  CHECK(found);
  planted_bug = false;
}

/* ---------- statistics ---------- */

/* How often each simplifier rule fired, summed over the contexts of the run: a rule the fuzzer
 * never fires is a rule it does not test. */
#define MAXRULES 1024
static uint64_t rule_fired[MAXRULES];
static int nrules;

static void collect_rule_stats(frit_ctx *ctx) {
  const frit_ruleset *rs = frit_simplifier_rules(ctx);
  if (!rs) return;
  nrules = frit_ruleset_size(rs) < MAXRULES ? frit_ruleset_size(rs) : MAXRULES;
  for (int r = 0; r < nrules; r++) rule_fired[r] += frit_ruleset_fired(rs, r);
}

static void print_rule_stats(void) {
  int fired = 0;
  for (int r = 0; r < nrules; r++) fired += rule_fired[r] > 0;
  fprintf(stderr, "fuzz: %d of %d simplifier rules fired\n", fired, nrules);
  if (getenv("FRIT_FUZZ_RULES")) {
    frit_ctx *ctx = frit_ctx_new();
    const frit_ruleset *rs = frit_simplifier_rules(ctx);
    for (int r = 0; rs && r < nrules; r++)
      fprintf(stderr, "%12" PRIu64 "  %s\n", rule_fired[r], frit_ruleset_rule_text(rs, r));
    frit_ctx_free(ctx);
  }
}

/* ---------- main ---------- */

/* Sanitizers make each expression ~100x slower; `make asan` should still finish quickly. */
#if defined(__SANITIZE_ADDRESS__)
#define DEFAULT_N 10000
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DEFAULT_N 10000
#endif
#endif
#ifndef DEFAULT_N
#define DEFAULT_N 100000
#endif

static uint64_t env_u64(const char *name, uint64_t dflt) {
  const char *s = getenv(name);
  return s && *s ? strtoull(s, NULL, 0) : dflt;
}

int main(int argc, char **argv) {
  const char *cdir = getenv("FRIT_FUZZ_CORPUS");
  int nfiles = replay_corpus(cdir ? cdir : "tests/corpus/simplify");
  fprintf(stderr, "fuzz: replayed %d corpus files\n", nfiles);
  self_test();

  uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : env_u64("FRIT_FUZZ_SEED", 1);
  uint64_t n = env_u64("FRIT_FUZZ_N", DEFAULT_N);
  uint64_t only = env_u64("FRIT_FUZZ_ONLY", UINT64_MAX);
  uint64_t keep_going = env_u64("FRIT_FUZZ_KEEP_GOING", 1);
  max_depth = (int)env_u64("FRIT_FUZZ_DEPTH", 4);
  if (max_depth < 1) max_depth = 1;
  uint64_t failures = 0, ran = 0, changed = 0;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  frit_ctx *ctx = NULL;
  static expr e; /* large: keep it off the stack */
  uint64_t i0 = only == UINT64_MAX ? 0 : only, i1 = only == UINT64_MAX ? n : only + 1;
  for (uint64_t i = i0; i < i1; i++) {
    /* a fresh context every 50 expressions keeps memory flat and the interpreter quick (its
     * per-call setup grows with node ids); each expression has its own seed so that
     * FRIT_FUZZ_ONLY reproduces it alone */
    if (!ctx || i % 50 == 0) {
      if (ctx) collect_rule_stats(ctx);
      frit_ctx_free(ctx);
      ctx = frit_ctx_new();
    }
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + i;
    rng_state = splitmix(&s);
    ran++;
    if (!gen_expr(&e)) continue;
    outcome o = check_expr(ctx, &e, 12345);
    check_count_++;
    changed += o.changed;
    if (!o.failed) continue;
    fprintf(stderr, "fuzz: expression %" PRIu64 " (seed %" PRIu64 ") failed: %s\n", i, seed,
            o.what);
    minimise(&e);
    char label[128];
    snprintf(label, sizeof label, "seed %" PRIu64 " expression %" PRIu64 ", minimised", seed, i);
    report_failure(&e, label);
    fprintf(stderr, "  reproduce: FRIT_FUZZ_SEED=%" PRIu64 " FRIT_FUZZ_ONLY=%" PRIu64 " %s\n",
            seed, i, argv[0]);
    check_failures_++;
    collect_rule_stats(ctx);
    frit_ctx_free(ctx);
    ctx = NULL;
    if (++failures >= keep_going) break;
  }
  if (ctx) collect_rule_stats(ctx);
  frit_ctx_free(ctx);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  fprintf(stderr, "fuzz: seed %" PRIu64 ", %" PRIu64 " expressions (%" PRIu64
          " changed by simplify), %" PRIu64 " failures, %.2f s\n", seed, ran, changed, failures,
          secs);
  print_rule_stats();
  CHECK_DONE();
}
