/* Loop nests of END and REDUCE for the linearizer: accumulators with their identities, sibling
 * REDUCEs over the same loops fused into one nest, and the OpenMP reduction clauses that let an
 * innermost reduction loop vectorise (docs/codegen.md, Linearisation and Vectorisation). */
#include "codegen/linear.h"

#include <inttypes.h>

/* The reduction clause for an accumulator updated in the innermost loop, or NULL when no
 * OpenMP clause gives frit's semantics (float max/min propagate NaN; f16 rounds each step). */
static const char *omp_red(frit_op op, frit_scalar_kind k) {
  if (k == FRIT_F16 || k == FRIT_BF16) return NULL;
  if (k == FRIT_C64 || k == FRIT_C128) return op == FRIT_OP_ADD ? "+" : NULL;
  if (cg_kind_float(k)) return op == FRIT_OP_ADD ? "+" : op == FRIT_OP_MUL ? "*" : NULL;
  if (k == FRIT_BOOL) {
    if (op == FRIT_OP_ADD || op == FRIT_OP_MAX || op == FRIT_OP_OR) return "|";
    if (op == FRIT_OP_MUL || op == FRIT_OP_MIN || op == FRIT_OP_AND) return "&";
    if (op == FRIT_OP_XOR) return "^";
    return NULL;
  }
  if (op == FRIT_OP_ADD) return "+";
  if (op == FRIT_OP_MUL) return "*";
  if (op == FRIT_OP_AND) return "&";
  if (op == FRIT_OP_OR) return "|";
  if (op == FRIT_OP_XOR) return "^";
  if (op == FRIT_OP_MAX) return "max";
  if (op == FRIT_OP_MIN) return "min";
  return NULL;
}

/* f32/f64 MAX/MIN reduce integer keys of the floats' bits, ordered as the floats (with -0 below
 * +0), and the largest magnitude bits, which tell a NaN (see cgl_emit_loops): integer max/min,
 * which OpenMP's clauses and gcc's vectorizer handle. */
static bool fmaxmin_split(frit_op op, frit_scalar_kind k) {
  return (k == FRIT_F32 || k == FRIT_F64) && (op == FRIT_OP_MAX || op == FRIT_OP_MIN);
}

/* Does the subgraph of local node `from` reach local node `to` (or, with to == UINT32_MAX, an
 * AFTER)? Sources come before users in g->nodes, so the walk stops below `to`. An explicit
 * stack (deep bodies); each node is pushed once. Out of memory answers yes: do not fuse. */
static bool reaches(const cg *g, uint32_t from, uint32_t to, uint8_t *seen) {
  if (from == to) return true;
  if (seen[from]) return false;
  uint32_t *st = malloc((g->n + 1) * sizeof *st);
  if (!st) return true;
  size_t n = 0;
  bool found = false;
  seen[from] = 1;
  st[n++] = from;
  while (n && !found) {
    frit_uop *u = g->nodes[st[--n]];
    if (to == UINT32_MAX && u->op == FRIT_OP_AFTER) found = true;
    else if (to != UINT32_MAX && L(g, u) < to) continue;
    for (uint32_t i = 0; i < u->nsrc && !found; i++) {
      uint32_t k = L(g, u->src[i]);
      if (k == to) found = true;
      else if (!seen[k]) seen[k] = 1, st[n++] = k;
    }
  }
  free(st);
  return found;
}

#define MAX_FUSE 32 /* a register tile's accumulators (16 with AVX-512; forced tiles of up to 28) */

/* REDUCEs over the same ranges as u that belong in the same block and are not emitted yet:
 * they share u's loops (one loop, several accumulators), so that work common to their bodies
 * is done once per iteration. Each accumulator still folds its own values in order. */
static int fuse_siblings(cg *g, frit_uop *u, int b, frit_uop **grp) {
  int ng = 1;
  grp[0] = u;
  if (u->nsrc < 2) return ng;
  uint8_t *seen = calloc(g->n + 1, 1);
  if (!seen) return ng;
  uint32_t ku = L(g, u);
  if (reaches(g, L(g, u->src[0]), UINT32_MAX, seen)) goto done;
  for (size_t k = 0; k < g->n && ng < MAX_FUSE; k++) {
    frit_uop *w = g->nodes[k];
    if (w == u || w->op != FRIT_OP_REDUCE || w->nsrc != u->nsrc || frit_dtype_lanes(w->dtype) != 1) continue;
    bool same = true;
    for (uint32_t i = 1; i < u->nsrc && same; i++) same = w->src[i] == u->src[i];
    if (!same) continue;
    nstate *s = &g->st[k];
    if (s->name && g->blocks[s->blk < 0 ? 0 : s->blk].alive && cgl_on_chain(g, b, s->blk)) continue;
    if (cgl_place_mode(g, w, b, true) != b) continue;
    memset(seen, 0, g->n + 1);
    if (reaches(g, (uint32_t)k, ku, seen)) continue;
    memset(seen, 0, g->n + 1);
    if (reaches(g, ku, (uint32_t)k, seen)) continue;
    memset(seen, 0, g->n + 1);
    if (reaches(g, L(g, w->src[0]), UINT32_MAX, seen)) continue;
    /* w must not depend on a member already taken either */
    bool dep = false;
    for (int m = 1; m < ng && !dep; m++) {
      memset(seen, 0, g->n + 1);
      dep = reaches(g, (uint32_t)k, L(g, grp[m]), seen);
    }
    if (!dep) grp[ng++] = w;
  }
done:
  free(seen);
  return ng;
}

/* Float sums run pairwise, as numpy's do: the range is cut into blocks of SUM_BLOCK elements,
 * each summed by the (vector) loop into its own accumulator, and the block sums are combined as
 * a binary tree (frit_pw_* in the prelude). The error then grows with log2(n / SUM_BLOCK) plus
 * SUM_BLOCK / lanes instead of with n, and no partial sum saturates (a float32 sum of 2^25
 * ones stays exact). Blocks of 256 keep the per-block work (a horizontal add, one tree step)
 * small against 256 loads. */
#define SUM_BLOCK CG_SUM_BLOCK
#define SUM_INNER_MAX 64 /* ranges inside the blocked one: at most this many iterations */

/* The range of u (index into its sources) to cut into blocks, or 0 for none: the innermost
 * range longer than a block, inside which only short constant ranges (unrolled) remain. Not
 * inside a loop that may be vectorised outside-in (a constant extent of 8 or more: a register
 * tile of accumulators, as in matmul), whose lanes each run the reduction loop: those sums stay
 * plain loops, as BLAS's are. */
/* Is block b inside a loop that may be vectorised outside-in (its innermost enclosing range a
 * constant extent of 8 or more, not the g0 range: a register tile of accumulators, as in
 * matmul)? Its lanes each run the reduction loop, which then stays a plain loop. */
static bool in_outside_in_loop(const cg *g, int b) {
  for (int x = b; x >= 0; x = g->blocks[x].parent) {
    int ri = g->blocks[x].rix;
    if (ri < 0) continue;
    const frit_uop *r = g->ranges[ri], *e = r->src[0];
    return r != g->g0 && e->op == FRIT_OP_CONST && e->arg.value.i >= 8;
  }
  return false;
}

static uint32_t pairwise_range(const cg *g, const frit_uop *u, int b) {
  if (getenv("FRIT_NAIVE_SUM")) return 0;
  if (in_outside_in_loop(g, b)) return 0;
  int64_t inner = 1;
  for (uint32_t i = u->nsrc; i-- > 1;) {
    const frit_uop *r = u->src[i], *e = r->src[0];
    if (r == g->g0) return 0;
    if (e->op != FRIT_OP_CONST) return i;
    if (e->arg.value.i > SUM_BLOCK) return i;
    inner *= e->arg.value.i > 0 ? e->arg.value.i : 1;
    if (inner > SUM_INNER_MAX) return 0;
  }
  return 0;
}

/* Vectors of lanes a member sums into: with one vector a lone sum was a chain of dependent FMAs
 * (4 cycles each): a 1024^2 matrix-vector product's rows took 48.5 us a thread in C, 42 in
 * four vectors (where the loads from L3 bound it). Its block grows with them (SUM_BLOCK per vector), so
 * that each lane still adds 16 terms before the tree. Eight members already make eight chains. */
static int sum_vectors(int ng) { return ng == 1 ? 4 : ng == 2 ? 2 : 1; }

/* Are the terms of sum x cheap to make (loads, adds, products), with no function or division?
 * Costly terms hide the chain's latency by themselves, and four copies of their code a run were
 * slower than one (softmax's sum of exp over 1024^2: 0.375 -> 0.47 ms). Addresses (below a
 * LOAD) do not count. */
static bool cheap_terms(const frit_uop *v, int *budget) {
  static const bool costly[FRIT_OP_COUNT_] = {
      [FRIT_OP_SQRT] = true, [FRIT_OP_RSQRT] = true, [FRIT_OP_RECIP] = true, [FRIT_OP_EXP] = true,
      [FRIT_OP_EXP2] = true, [FRIT_OP_LOG] = true,   [FRIT_OP_LOG2] = true,  [FRIT_OP_SIN] = true,
      [FRIT_OP_COS] = true,  [FRIT_OP_TAN] = true,   [FRIT_OP_ASIN] = true,  [FRIT_OP_ACOS] = true,
      [FRIT_OP_ATAN] = true, [FRIT_OP_SINH] = true,  [FRIT_OP_COSH] = true,  [FRIT_OP_TANH] = true,
      [FRIT_OP_ERF] = true,  [FRIT_OP_FDIV] = true,  [FRIT_OP_POW] = true,   [FRIT_OP_ATAN2] = true};
  if (--*budget < 0 || costly[v->op]) return false;
  if (v->op == FRIT_OP_LOAD) return true;
  for (uint32_t i = 0; i < v->nsrc; i++)
    if (!cheap_terms(v->src[i], budget)) return false;
  return true;
}

/* Lane form of a pairwise sum's block loop (host C, every member a real float sum, the blocked
 * range innermost): accN_l[L] holds L lane sums (sum_vectors vectors of them), iteration r adding
 * to lane (r - r_o) of a run of L,
 * and the block's L lanes are added as a tree (frit_lanesum_*). gcc's
 * `reduction(+:accN_b)` instead added its lanes one by one after every block (a store, then 16
 * dependent scalar adds): a matrix-vector product's 8 rows spent more time there than in the
 * block's 16 vector FMAs (73 -> 55 us at 1024^2). 0: the clause form. */
static int sum_lanes(const cg *g, const frit_uop *u, frit_uop *const *grp, int ng, uint32_t pr) {
  if (g->dialect != FRIT_DIALECT_C || pr != u->nsrc - 1 || ng > 8 || getenv("FRIT_NO_SUM_LANES")) return 0;
  for (int m = 0; m < ng; m++) {
    frit_scalar_kind k = frit_dtype_kind(grp[m]->dtype);
    if (k != FRIT_F32 && k != FRIT_F64) return 0;
  }
  int lanes = frit_host_tile_lanes(grp[0]->dtype), budget = 64;
  if (lanes != 4 && lanes != 8 && lanes != 16) return 0;
  bool cheap = true;
  for (int m = 0; m < ng && cheap; m++) cheap = cheap_terms(grp[m]->src[0], &budget);
  return lanes * (cheap ? sum_vectors(ng) : 1); /* 4 ... 64: those of frit_lanesum_* */
}

/* The integer type of f32/f64 keys, their magnitude mask, and the key of the identity (-inf for
 * max, +inf for min) */
static const char *key_type(frit_scalar_kind k) { return k == FRIT_F64 ? "int64_t" : "int32_t"; }
static const char *key_mag(frit_scalar_kind k) { return k == FRIT_F64 ? "INT64_C(0x7fffffffffffffff)" : "0x7fffffff"; }
static const char *key_identity(frit_scalar_kind k, bool mx) {
  if (k == FRIT_F64) return mx ? "(-INT64_C(9218868437227405312) - 1)" : "INT64_C(9218868437227405312)";
  return mx ? "(-2139095040 - 1)" : "2139095040";
}

/* Lane form of a float max/min (every member one, host C): one loop `acc = v > acc ? v : acc`
 * is a chain of dependent maxes, which held a 1024^2 max to 55 us a thread where a sum's
 * blocks ran in 43. In lane form each iteration updates its own lane (key and magnitude) over
 * four vectors' worth of lanes (two for two members), and the lanes are folded into the
 * accumulators after each block of MAXMIN_BLOCK elements: exact in any order, so the result is
 * the plain loop's bit for bit. The innermost range, when it is long, not inside a loop
 * vectorised outside-in. Returns the lanes (0: the plain loop) and the range in *ri. */
#define MAXMIN_BLOCK 65536
static int maxmin_lanes(const cg *g, const frit_uop *u, frit_uop *const *grp, int ng, int b, uint32_t *ri) {
  if (g->dialect != FRIT_DIALECT_C || ng > 2 || u->nsrc < 2 || getenv("FRIT_NO_MAXMIN_LANES")) return 0;
  for (int m = 0; m < ng; m++)
    if (!fmaxmin_split((frit_op)grp[m]->arg.i0, frit_dtype_kind(grp[m]->dtype))) return 0;
  if (in_outside_in_loop(g, b)) return 0;
  const frit_uop *r = u->src[u->nsrc - 1], *e = r->src[0];
  if (r == g->g0 || (e->op == FRIT_OP_CONST && e->arg.value.i < 256)) return 0;
  int lanes = frit_host_tile_lanes(grp[0]->dtype);
  if (lanes != 4 && lanes != 8 && lanes != 16) return 0;
  *ri = u->nsrc - 1;
  return lanes * (ng == 1 ? 4 : 2);
}

/* The lanes of max/min member x (accumulator acc) at the top of a block: the identity's key,
 * and magnitude 0 */
static void maxmin_lanes_open(cg *g, int b, const frit_uop *x, const char *acc, int lanes) {
  frit_scalar_kind k = frit_dtype_kind(x->dtype);
  const char *T = key_type(k);
  cgl_line(g, b, "%s %s_k_l[%d]; %s %s_q_l[%d];", T, acc, lanes, T, acc, lanes);
  cgl_line(g, b, "#pragma omp simd");
  cgl_line(g, b, "for (int q_ = 0; q_ < %d; q_++) %s_k_l[q_] = %s, %s_q_l[q_] = 0;", lanes, acc,
           key_identity(k, x->arg.i0 == FRIT_OP_MAX), acc);
}

/* The block's lanes folded into the accumulators */
static void maxmin_lanes_fold(cg *g, int b, const frit_uop *x, const char *acc, int lanes) {
  const char *op = x->arg.i0 == FRIT_OP_MAX ? "max" : "min", *cmp = x->arg.i0 == FRIT_OP_MAX ? ">" : "<";
  cgl_line(g, b, "#pragma omp simd reduction(%s:%s_k) reduction(max:%s_q)", op, acc, acc);
  cgl_line(g, b, "for (int q_ = 0; q_ < %d; q_++) {", lanes);
  cgl_line(g, b, "  %s_k = %s_k_l[q_] %s %s_k ? %s_k_l[q_] : %s_k;", acc, acc, cmp, acc, acc, acc);
  cgl_line(g, b, "  %s_q = %s_q_l[q_] > %s_q ? %s_q_l[q_] : %s_q;", acc, acc, acc, acc, acc);
  cgl_line(g, b, "}");
}

static const char *pw_name(frit_scalar_kind k) {
  return k == FRIT_F64 ? "f64" : k == FRIT_C64 ? "c64" : k == FRIT_C128 ? "c128" : "f32";
}

static bool pairwise_member(const frit_uop *x) {
  frit_scalar_kind k = frit_dtype_kind(x->dtype);
  return x->arg.i0 == FRIT_OP_ADD && (k == FRIT_F32 || k == FRIT_F64 || k == FRIT_C64 || k == FRIT_C128);
}

int cgl_open_loop_blocked(cg *g, frit_uop *r, int parent, int64_t size, int lanes, int *outer) {
  int ri = g->rix[L(g, r)];
  for (int b = parent; b >= 0; b = g->blocks[b].parent)
    if (g->blocks[b].rix == ri) return cgl_fail(g, r, "RANGE opened inside its own loop"), -1;
  const char *end = cgl_emit(g, r->src[0], parent);
  char *e = end ? cgl_strdup(g, end) : NULL;
  if (!e) return -1;
  int ob = cgl_new_block(g, parent, -1, false);
  int b = ob < 0 ? -1 : cgl_new_block(g, ob, ri, false);
  if (b < 0) return free(e), -1;
  g->blocks[ob].blocking = true;
  const char *T = cg_ctype(frit_dtype_kind(r->dtype));
  uint32_t id = L(g, r);
  cg_printf(&g->blocks[ob].header, "for (%s r%" PRIu32 "_b = 0; r%" PRIu32 "_b < %s; r%" PRIu32 "_b += %" PRId64 ")",
            T, id, id, e, id, size);
  blk *B = &g->blocks[b];
  if (lanes) {
    B->lanes = lanes;
    cg_printf(&B->lane_end, "(%s - r%" PRIu32 "_b > %" PRId64 " ? r%" PRIu32 "_b + %" PRId64 " : %s)", e, id, size,
              id, size, e);
    /* the vector loops' headers are written on close (cgl_close_block: one per vector of a run) */
  } else {
    cg_printf(&B->header,
              "for (%s r%" PRIu32 " = r%" PRIu32 "_b; r%" PRIu32 " < (%s - r%" PRIu32 "_b > %" PRId64 " ? r%" PRIu32
              "_b + %" PRId64 " : %s); r%" PRIu32 "++)",
              T, id, id, id, e, id, size, id, size, e, id);
  }
  free(e);
  *outer = ob;
  return b;
}

/* ---------- argmax/argmin in one pass ---------- */

/* The frontend's argmax (argmin) is two reductions over x (src/tensor/reduce.c, arg_extreme):
 * the max m over one range, then the least position whose element equals m or is a NaN,
 *   REDUCE_MIN_r(WHERE(OR(CMPEQ(x[r], m), CMPNE(x[r], x[r])), f(r), g)),  m = REDUCE_MAX_s(x[s]).
 * The second pass cost more than the first (12 vector instructions per 16 floats, against 7).
 * When f grows with r and g is at least every f(r), the result is f at x's first greatest key,
 * a key ordering the floats with -0 = +0 and every NaN on top: one pass, each lane keeping its
 * greatest key and f where that key first occurred. */

/* Is a the node b with range rb in place of ra? Hash-consed: subgraphs free of both are equal
 * only as the same node. */
static bool same_over(const cg *g, const frit_uop *a, const frit_uop *b, const frit_uop *ra, const frit_uop *rb,
                      int *budget) {
  if (--*budget < 0) return false;
  if (a == ra || b == rb) return a == ra && b == rb;
  uint64_t both = (UINT64_C(1) << g->rix[L(g, ra)]) | (UINT64_C(1) << g->rix[L(g, rb)]);
  if (a == b) return !(g->free_[L(g, a)] & both);
  if (a->nsrc == 0 || a->op == FRIT_OP_RANGE || a->op != b->op || a->dtype != b->dtype || a->nsrc != b->nsrc ||
      a->arg.i0 != b->arg.i0 || a->arg.i1 != b->arg.i1 || a->arg.blob != b->arg.blob || a->arg.n != b->arg.n ||
      memcmp(&a->arg.value, &b->arg.value, sizeof a->arg.value) != 0)
    return false;
  for (uint32_t i = 0; i < a->nsrc; i++)
    if (!same_over(g, a->src[i], b->src[i], ra, rb, budget)) return false;
  return true;
}

static int64_t int_kind_max(frit_scalar_kind k) { return k == FRIT_I32 ? INT32_MAX : k == FRIT_I64 ? INT64_MAX : -1; }

/* Is f(r) increasing in r: r, r plus terms free of r, or r converted to an integer type that
 * holds every value of r? */
static bool grows_with(const cg *g, const frit_uop *f, const frit_uop *r) {
  if (f == r) return true;
  if (f->op == FRIT_OP_CAST && f->src[0] == r) return r->vmin >= 0 && r->vmax <= int_kind_max(frit_dtype_kind(f->dtype));
  if (f->op != FRIT_OP_ADD || f->dtype != r->dtype) return false;
  uint64_t rb = UINT64_C(1) << g->rix[L(g, r)];
  for (int i = 0; i < 2; i++)
    if (f->src[i] == r && !(g->free_[L(g, f->src[1 - i])] & rb)) return true;
  return false;
}

/* Is gv at least every value f takes over r's loop? */
static bool at_least_all(const frit_uop *gv, const frit_uop *f, const frit_uop *r) {
  int64_t top = int_kind_max(frit_dtype_kind(f->dtype));
  if (gv->op == FRIT_OP_CONST && gv->dtype == f->dtype && gv->arg.value.i == top) return true;
  if (f != r && !(f->op == FRIT_OP_CAST && f->src[0] == r)) return false; /* f(r) = r: bounded by r's */
  if (gv->op == FRIT_OP_CONST) return gv->dtype == f->dtype && gv->arg.value.i >= r->vmax;
  return f == r ? gv == r->src[0] : gv->op == FRIT_OP_CAST && gv->dtype == f->dtype && gv->src[0] == r->src[0];
}

/* u's x and f when u is the position pass of an argmax (*is_max) or argmin in that form, its
 * extreme is not computed yet, and its range is the innermost, long one of a host kernel. */
static bool argext_match(const cg *g, const frit_uop *u, int b, frit_uop **x, frit_uop **f, bool *is_max) {
  if (g->dialect != FRIT_DIALECT_C || g->group || u->nsrc != 2 || u->arg.i0 != FRIT_OP_MIN ||
      getenv("FRIT_NO_ONE_PASS_ARGMAX"))
    return false;
  frit_uop *r = u->src[1], *w = u->src[0];
  if (r == g->g0 || in_outside_in_loop(g, b) || (r->src[0]->op == FRIT_OP_CONST && r->src[0]->arg.value.i < 256))
    return false;
  if (w->op != FRIT_OP_WHERE || w->src[0]->op != FRIT_OP_OR || w->src[1]->dtype != u->dtype) return false;
  frit_uop *c = w->src[0], *eq = c->src[0], *nan = c->src[1];
  if (eq->op == FRIT_OP_CMPNE) eq = c->src[1], nan = c->src[0];
  if (eq->op != FRIT_OP_CMPEQ || nan->op != FRIT_OP_CMPNE || nan->src[0] != nan->src[1]) return false;
  frit_uop *xv = nan->src[0], *m = eq->src[0] == xv ? eq->src[1] : eq->src[1] == xv ? eq->src[0] : NULL;
  frit_scalar_kind k = frit_dtype_kind(xv->dtype);
  if (!m || m->op != FRIT_OP_REDUCE || m->nsrc != 2 || m->dtype != xv->dtype || (k != FRIT_F32 && k != FRIT_F64) ||
      (m->arg.i0 != FRIT_OP_MAX && m->arg.i0 != FRIT_OP_MIN) || frit_dtype_lanes(xv->dtype) != 1)
    return false;
  const frit_uop *rm = m->src[1];
  const nstate *s = &g->st[L(g, m)];
  if (rm == r || rm->src[0] != r->src[0] || (s->name && g->blocks[s->blk < 0 ? 0 : s->blk].alive)) return false;
  int budget = 256;
  if (!grows_with(g, w->src[1], r) || !at_least_all(w->src[2], w->src[1], r) || !same_over(g, xv, m->src[0], r, rm, &budget))
    return false;
  *x = xv, *f = w->src[1], *is_max = m->arg.i0 == FRIT_OP_MAX;
  return true;
}

/* f at position p (a C expression of r's type), for the forms grows_with accepts; t of r + t
 * emitted in block b. NULL on error. */
static char *value_at(cg *g, const frit_uop *f, const frit_uop *r, const char *p, int b) {
  cg_str e = {0};
  const char *FT = cg_ctype(frit_dtype_kind(f->dtype));
  if (f == r) cg_printf(&e, "%s", p);
  else if (f->op == FRIT_OP_CAST) cg_printf(&e, "((%s)%s)", FT, p);
  else {
    const char *t = cgl_emit(g, f->src[f->src[0] == r ? 1 : 0], b);
    if (!t) return NULL;
    cg_printf(&e, "((%s)(%s + %s))", FT, p, t);
  }
  if (e.oom) return cg_free(&e), g->failed = true, NULL;
  return e.s;
}

/* The one pass (argext_match) in lane form, as maxmin_lanes: per lane its greatest key and the
 * offset in the block of the run where it first occurred (the same for every lane of a run: one
 * broadcast, where f(r) per lane had gcc build a vector of 64-bit positions element by element),
 * folded after each block into the greatest key and its least position. */
static const char *emit_argext(cg *g, frit_uop *u, int b, frit_uop *x, frit_uop *f, bool is_max) {
  frit_scalar_kind k = frit_dtype_kind(x->dtype), fk = frit_dtype_kind(u->dtype);
  bool d = k == FRIT_F64;
  const char *KT = key_type(k), *FT = cg_ctype(fk);
  const char *lowest = d ? "(-INT64_C(9223372036854775807) - 1)" : "(-2147483647 - 1)";
  const char *top = d ? "INT64_C(9223372036854775807)" : "2147483647";
  const char *mag = key_mag(k);
  const char *inf = d ? "INT64_C(0x7ff0000000000000)" : "0x7f800000";
  frit_uop *r = u->src[1];
  const char *RT = cg_ctype(frit_dtype_kind(r->dtype));
  uint32_t ri = L(g, r);
  char acc[32];
  snprintf(acc, sizeof acc, "acc%" PRIu32, L(g, u));
  cg_str id = {0};
  if (!cg_render_const(g->ctx, &id, fk, cg_reduce_identity(FRIT_OP_MIN, fk))) return g->failed = true, NULL;
  cgl_line(g, b, "%s %s = %s;", FT, acc, id.s);
  cg_free(&id);
  cgl_line(g, b, "%s %s_k = %s; %s %s_p = 0;", KT, acc, lowest, RT, acc);
  int vec = frit_host_tile_lanes(x->dtype), lanes = 2 * vec, outer = -1;
  int inner = vec == 4 || vec == 8 || vec == 16 ? cgl_open_loop_blocked(g, r, b, MAXMIN_BLOCK, lanes, &outer) : -1;
  if (inner < 0) return g->failed = true, NULL;
  g->blocks[inner].lane_vec = vec;
  /* (lanes no element reached keep the lowest key: below every element's, never chosen) */
  cgl_line(g, outer, "%s %s_k_l[%d]; %s %s_o_l[%d];", KT, acc, lanes, KT, acc, lanes);
  cgl_line(g, outer, "#pragma omp simd");
  cgl_line(g, outer, "for (int q_ = 0; q_ < %d; q_++) %s_k_l[q_] = %s, %s_o_l[q_] = 0;", lanes, acc, lowest, acc);
  const char *xv = cgl_emit(g, x, inner);
  if (!xv) return NULL;
  char lane[48];
  snprintf(lane, sizeof lane, "[r%" PRIu32 " - r%" PRIu32 "_o]", ri, ri);
  /* the sign as 0 or -1 (argmin: inverted), so that (magnitude ^ s) - s is +-magnitude */
  cgl_line(g, inner, "%s %s_b = (%s)frit_f%s_bits(%s);", KT, acc, KT, d ? "64" : "32", xv);
  cgl_line(g, inner, "%s %s_m = %s_b & %s, %s_s = %s(%s_b >> %d);", KT, acc, acc, mag, acc, is_max ? "" : "~", acc,
           d ? 63 : 31);
  cgl_line(g, inner, "%s %s_kv = %s_m > %s ? %s : (%s_m ^ %s_s) - %s_s;", KT, acc, acc, inf, top, acc, acc, acc);
  cgl_line(g, inner, "%s_o_l%s = %s_kv > %s_k_l%s ? (%s)(r%" PRIu32 "_o - r%" PRIu32 "_b) : %s_o_l%s;", acc, lane, acc,
           acc, lane, KT, ri, ri, acc, lane);
  cgl_line(g, inner, "%s_k_l%s = %s_kv > %s_k_l%s ? %s_kv : %s_k_l%s;", acc, lane, acc, acc, lane, acc, acc, lane);
  cgl_close_block(g, inner);
  cgl_line(g, outer, "for (int q_ = 0; q_ < %d; q_++) {", lanes);
  cgl_line(g, outer, "  %s p_ = r%" PRIu32 "_b + %s_o_l[q_] + q_;", RT, ri, acc);
  cgl_line(g, outer, "  if (%s_k_l[q_] > %s_k || (%s_k_l[q_] == %s_k && p_ < %s_p)) %s_k = %s_k_l[q_], %s_p = p_;", acc,
           acc, acc, acc, acc, acc, acc, acc);
  cgl_line(g, outer, "}");
  cgl_close_block(g, outer);
  char p[40];
  snprintf(p, sizeof p, "%s_p", acc);
  char *fv = g->failed ? NULL : value_at(g, f, r, p, b);
  if (!fv) return NULL;
  cgl_line(g, b, "if (%s_k != %s) %s = %s;", acc, lowest, acc, fv);
  free(fv);
  return cgl_set_name(g, u, b, acc);
}

const char *cgl_emit_loops(cg *g, frit_uop *u, int b) {
  bool red = u->op == FRIT_OP_REDUCE;
  frit_uop *ax, *af;
  bool ax_max;
  if (red && argext_match(g, u, b, &ax, &af, &ax_max)) return emit_argext(g, u, b, ax, af, ax_max);
  frit_uop *grp[MAX_FUSE];
  int ng = red ? fuse_siblings(g, u, b, grp) : 1;
  grp[0] = u;
  char acc[MAX_FUSE][32];
  bool wide[MAX_FUSE];
  char *vals[MAX_FUSE];
  memset(vals, 0, sizeof vals);
  for (int m = 0; m < ng && red; m++) {
    frit_uop *x = grp[m];
    frit_scalar_kind k = frit_dtype_kind(x->dtype);
    frit_op rop = (frit_op)x->arg.i0;
    snprintf(acc[m], sizeof acc[m], "acc%" PRIu32, L(g, x));
    wide[m] = frit_dtype_is_int(x->dtype) && (rop == FRIT_OP_ADD || rop == FRIT_OP_MUL);
    if (frit_dtype_lanes(x->dtype) != 1) return cgl_fail(g, x, "vector reductions are not supported yet"), NULL;
    if (rop != FRIT_OP_ADD && rop != FRIT_OP_MUL && rop != FRIT_OP_MAX && rop != FRIT_OP_MIN &&
        rop != FRIT_OP_AND && rop != FRIT_OP_OR && rop != FRIT_OP_XOR)
      return cgl_fail(g, x, "reduce op must be ADD, MUL, MAX, MIN, AND, OR or XOR"), NULL;
    cg_str id = {0};
    if (!cg_render_const(g->ctx, &id, k, cg_reduce_identity(rop, k))) return g->failed = true, NULL;
    cgl_line(g, b, "%s %s = %s%s;", wide[m] ? cg_wtype(k) : cg_ctype(k), acc[m], wide[m] ? "(uint64_t)" : "", id.s);
    cg_free(&id);
    /* the keys as wide as the element: uint8_t flags (an earlier form) made gcc pack every
     * vector of compares into bytes, 1.2x slower */
    if (fmaxmin_split(rop, k))
      cgl_line(g, b, "%s %s_k = %s, %s_q = 0;", key_type(k), acc[m], key_identity(k, rop == FRIT_OP_MAX), acc[m]);
  }
  /* a reduction of a work-group's point: each thread folds every frit_lsz-th element (its loop
   * is split by cgl_open_loop), then the threads' accumulators are combined */
  bool grouped = red && g->group && b == g->group_top;
  /* pairwise members accumulate a block in accN_b, the blocks in accN_pw */
  uint32_t pr = red && !grouped ? pairwise_range(g, u, b) : 0;
  bool pw[MAX_FUSE];
  char accb[MAX_FUSE][40];
  bool any_pw = false;
  bool all_pw = true;
  for (int m = 0; m < ng; m++) any_pw |= pr && pairwise_member(grp[m]), all_pw &= pr && pairwise_member(grp[m]);
  if (!any_pw) pr = 0; /* max, min, products, integers: one plain loop */
  int lanes = all_pw ? sum_lanes(g, u, grp, ng, pr) : 0;
  int64_t block = lanes ? SUM_BLOCK * (lanes / frit_host_tile_lanes(grp[0]->dtype)) : SUM_BLOCK;
  bool mm_lanes = false; /* a max/min in lane form (maxmin_lanes) */
  if (red && !grouped && !any_pw && (lanes = maxmin_lanes(g, u, grp, ng, b, &pr)) > 0) mm_lanes = true, block = MAXMIN_BLOCK;
  for (int m = 0; m < ng; m++) {
    pw[m] = pr && pairwise_member(grp[m]);
    if (lanes) snprintf(accb[m], sizeof accb[m], "%s_l[r%" PRIu32 " - r%" PRIu32 "_o]", acc[m], L(g, u->src[pr]),
                        L(g, u->src[pr]));
    else snprintf(accb[m], sizeof accb[m], "%s%s", acc[m], pw[m] ? "_b" : "");
    if (pw[m]) /* s[i] is read only once written: its 64 entries need no clearing per point */
      cgl_line(g, b, "frit_pw_%s %s_pw; %s_pw.n = 0;", pw_name(frit_dtype_kind(grp[m]->dtype)), acc[m], acc[m]);
  }
  int inner = b, outer = -1;
  for (uint32_t i = 1; i < u->nsrc; i++) {
    inner = i == pr ? cgl_open_loop_blocked(g, u->src[i], inner, block, lanes, &outer) : cgl_open_loop(g, u->src[i], inner);
    if (inner < 0) return NULL;
    if (i == pr && lanes) g->blocks[inner].lane_vec = frit_host_tile_lanes(grp[0]->dtype);
    for (int m = 0; m < ng && i == pr; m++)
      if (mm_lanes) maxmin_lanes_open(g, outer, grp[m], acc[m], lanes);
      else if (lanes) cgl_line(g, outer, "%s %s_l[%d] = {0};", cg_ctype(frit_dtype_kind(grp[m]->dtype)), acc[m], lanes);
      else if (pw[m]) cgl_line(g, outer, "%s %s = 0;", cg_ctype(frit_dtype_kind(grp[m]->dtype)), accb[m]);
  }
  bool ok = true;
  /* a float sum of products accumulates by fused multiply-add: the product's operands are
   * emitted instead of the product (fma_b[m]: the second operand). Each member's update follows
   * its own operands (no member reads another's accumulator), so a register tile's loads live
   * one update long: emitted all before the updates, a 6x2 tile's 6 broadcasts and 12
   * accumulators outgrew AVX2's 16 registers and gcc spilled (2x slower). */
  char *fma_b[MAX_FUSE];
  memset(fma_b, 0, sizeof fma_b);
  for (int m = 0; m < ng && ok; m++) {
    frit_uop *x = grp[m]->src[0];
    frit_scalar_kind k = frit_dtype_kind(grp[m]->dtype);
    if (red && x->op == FRIT_OP_MUL && grp[m]->arg.i0 == FRIT_OP_ADD && (k == FRIT_F32 || k == FRIT_F64) &&
        frit_dtype_lanes(x->dtype) == 1) {
      const char *va = cgl_emit(g, x->src[0], inner);
      ok = va && (vals[m] = cgl_strdup(g, va));
      const char *vb = ok ? cgl_emit(g, x->src[1], inner) : NULL;
      ok = ok && vb && (fma_b[m] = cgl_strdup(g, vb));
    } else {
      const char *v = cgl_emit(g, x, inner);
      ok = v && (vals[m] = cgl_strdup(g, v));
    }
    if (!ok || !red) continue;
    x = grp[m];
    frit_op rop = (frit_op)x->arg.i0;
    cg_str e = {0};
    if (wide[m]) {
      cg_printf(&e, "%s %s (%s)%s", acc[m], rop == FRIT_OP_ADD ? "+" : "*", cg_wtype(k), vals[m]);
    } else if (fmaxmin_split(rop, k)) {
      /* IEEE maximum/minimum (docs/semantics.md) as integer max/min: the bits b as a signed
       * integer, with the magnitude bits flipped where b < 0 (the key), order as the floats
       * with -0 below +0 (NaNs beyond the infinities, positive above, negative below), and the
       * largest magnitude |b| is above inf's bits iff a NaN was seen. One load a vector: the
       * float compare-select with a NaN flag and the bits' max had loaded each vector twice */
      bool d = k == FRIT_F64;
      const char *T = key_type(k), *lane = mm_lanes ? strchr(accb[m], '[') : NULL;
      const char *mag = key_mag(k);
      char fk[96], fq[96]; /* the accumulators: scalars, or this iteration's lanes */
      snprintf(fk, sizeof fk, "%.31s_k%s%.40s", acc[m], lane ? "_l" : "", lane ? lane : "");
      snprintf(fq, sizeof fq, "%.31s_q%s%.40s", acc[m], lane ? "_l" : "", lane ? lane : "");
      cgl_line(g, inner, "%s %s_b = (%s)frit_f%s_bits(%s);", T, acc[m], T, d ? "64" : "32", vals[m]);
      cgl_line(g, inner, "%s %s_m = %s_b & %s, %s_kv = %s_b ^ ((%s_b >> %d) & %s);", T, acc[m], acc[m], mag, acc[m],
               acc[m], acc[m], d ? 63 : 31, mag);
      cgl_line(g, inner, "%s = %s_m > %s ? %s_m : %s;", fq, acc[m], fq, acc[m], fq);
      cgl_line(g, inner, "%s = %s_kv %s %s ? %s_kv : %s;", fk, acc[m], rop == FRIT_OP_MAX ? ">" : "<", fk, acc[m], fk);
      e.s = NULL; /* the updates are the lines above */
    } else if (fma_b[m]) {
      cg_printf(&e, "frit_fma%s(%s, %s, %s)", k == FRIT_F32 ? "f" : "", vals[m], fma_b[m], accb[m]);
    } else {
      const char *ab[2] = {accb[m], vals[m]};
      if (!cg_render_alu(g->ctx, &e, rop, k, ab, 2)) ok = false, g->failed = true;
    }
    if (ok && e.s) cgl_line(g, inner, "%s = %s;", accb[m], e.s);
    cg_free(&e);
    blk *I = &g->blocks[inner];
    const char *clause = inner != b ? omp_red(rop, k) : NULL;
    if (lanes) continue; /* each iteration its own lane: no clause */
    if (clause) cg_printf(&I->red, " reduction(%s:%s)", clause, accb[m]);
    else if (fmaxmin_split(rop, k) && inner != b)
      cg_printf(&I->red, " reduction(%s:%s_k) reduction(max:%s_q)", rop == FRIT_OP_MAX ? "max" : "min", acc[m], acc[m]);
    else I->red_bad = true;
  }
  for (int m = 0; m < ng; m++) free(vals[m]), free(fma_b[m]);
  if (!ok) return NULL;
  for (int x = inner; x != b;) {
    int p = g->blocks[x].parent;
    cgl_close_block(g, x);
    for (int m = 0; m < ng && p == outer; m++)
      if (mm_lanes)
        maxmin_lanes_fold(g, outer, grp[m], acc[m], lanes);
      else if (lanes)
        cgl_line(g, outer, "frit_pw_add_%s(&%s_pw, frit_lanesum_%s(%s_l, %d));", pw_name(frit_dtype_kind(grp[m]->dtype)),
                 acc[m], pw_name(frit_dtype_kind(grp[m]->dtype)), acc[m], lanes);
      else if (pw[m])
        cgl_line(g, outer, "frit_pw_add_%s(&%s_pw, %s);", pw_name(frit_dtype_kind(grp[m]->dtype)),
                 acc[m], accb[m]);
    x = p;
  }
  if (g->failed) return NULL;
  for (int m = 0; m < ng; m++)
    if (pw[m])
      cgl_line(g, b, "%s = frit_pw_sum_%s(&%s_pw);", acc[m], pw_name(frit_dtype_kind(grp[m]->dtype)),
               acc[m]);
  if (!red) {
    g->st[L(g, u)].done = true;
    return "";
  }
  for (int m = 0; m < ng; m++) {
    frit_scalar_kind k = frit_dtype_kind(grp[m]->dtype);
    frit_op rop = (frit_op)grp[m]->arg.i0;
    if (fmaxmin_split(rop, k))
      cgl_line(g, b, "%s = frit_keyfloat%s(%s_k, %s_q);", acc[m], k == FRIT_F64 ? "d" : "f", acc[m], acc[m]);
    if (grouped && !cgl_group_combine(g, b, acc[m], wide[m] ? cg_wtype(k) : cg_ctype(k), rop, k, wide[m])) return NULL;
  }
  const char *ret = NULL;
  for (int m = ng - 1; m >= 0; m--) {
    char res[64];
    frit_scalar_kind k = frit_dtype_kind(grp[m]->dtype);
    if (wide[m]) snprintf(res, sizeof res, "((%s)%s)", cg_ctype(k), acc[m]);
    else snprintf(res, sizeof res, "%s", acc[m]);
    ret = cgl_set_name(g, grp[m], b, res);
  }
  return ret;
}

/* A short constant inner range of a reduction over several ranges (a conv's kernel taps inside
 * its channel loop) is written out copy by copy, each in its own scope with the index a constant:
 * gcc vectorises a loop around a nest only when that nest is one loop, so the register tile of
 * a conv (its lanes outside the channel, row and column loops) stayed scalar (13 GFLOP/s). Its
 * accumulators' clauses move to the enclosing loop of the same reduction. */
static bool reduce_axis(const frit_uop *r) { return r->arg.i1 == FRIT_AXIS_REDUCE || r->arg.i1 == FRIT_AXIS_UNROLL; }

bool cgl_unrolled_in_text(cg *g, blk *B, blk *P) {
  frit_uop *r = g->ranges[B->rix], *end = r->src[0];
  if (g->dialect != FRIT_DIALECT_C || r == g->g0 || g->group || B->has_child_loop || B->blocking || B->has_store ||
      B->is_if || P->rix < 0 || !reduce_axis(r) || !reduce_axis(g->ranges[P->rix]) ||
      end->op != FRIT_OP_CONST || end->arg.value.i < 2 || end->arg.value.i > 8 ||
      end->arg.value.i * B->copies > MAX_TILE_TEXT_COPIES)
    return false;
  /* only under a loop of output lanes that may be vectorised outside-in (a register tile's):
   * elsewhere the copies let gcc 12.2's loop vectoriser take the reduction loop around them
   * as an in-order (fold-left) reduction, which it miscompiles with a negative stride (the sum
   * of a flipped array, tests/python/test_op_regressions.py) */
  bool lanes = false;
  for (int a = P->parent; a >= 0 && !lanes; a = g->blocks[a].parent) {
    const blk *A = &g->blocks[a];
    frit_uop *ra = A->rix >= 0 ? g->ranges[A->rix] : NULL;
    lanes = ra && ra != g->g0 && !reduce_axis(ra) && ra->src[0]->op == FRIT_OP_CONST && ra->src[0]->arg.value.i >= 8;
  }
  if (!lanes) return false;
  const char *T = cg_ctype(frit_dtype_kind(r->dtype));
  for (int64_t t = 0; t < end->arg.value.i; t++) {
    cgl_line(g, B->parent, "{ const %s r%" PRIu32 " = %" PRId64 ";", T, L(g, r), t);
    if (B->text.s) cg_puts(&P->text, B->text.s);
    cgl_line(g, B->parent, "}");
  }
  if (B->text.oom) P->text.oom = true;
  if (B->red.s) cg_puts(&P->red, B->red.s);
  P->red_bad |= B->red_bad;
  P->unsafe |= B->unsafe;
  P->child_bad |= B->child_bad;
  P->loaded_params |= B->loaded_params;
  P->stored_params |= B->stored_params;
  if (B->copies * end->arg.value.i > P->copies) P->copies = B->copies * end->arg.value.i;
  cgl_retire_block(B);
  return true;
}
