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

/* f32/f64 MAX/MIN accumulators are updated by a compare-select with flags for NaN and the
 * zero's sign (see cgl_emit_loops), which OpenMP's max/min clause and gcc's vectorizer handle. */
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
#define SUM_BLOCK 256
#define SUM_INNER_MAX 64 /* ranges inside the blocked one: at most this many iterations */

/* The range of u (index into its sources) to cut into blocks, or 0 for none: the innermost
 * range longer than a block, inside which only short constant ranges (unrolled) remain. Not
 * inside a loop that may be vectorised outside-in (a constant extent of 8 or more: a register
 * tile of accumulators, as in matmul), whose lanes each run the reduction loop: those sums stay
 * plain loops, as BLAS's are. */
static uint32_t pairwise_range(const cg *g, const frit_uop *u, int b) {
  if (getenv("FRIT_NAIVE_SUM")) return 0;
  for (int x = b; x >= 0; x = g->blocks[x].parent) {
    int ri = g->blocks[x].rix;
    if (ri < 0) continue;
    const frit_uop *r = g->ranges[ri], *e = r->src[0];
    if (r != g->g0 && e->op == FRIT_OP_CONST && e->arg.value.i >= 8) return 0;
    break;
  }
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

/* Lane form of a pairwise sum's block loop (host C, every member a real float sum, the blocked
 * range innermost): accN_l[L] holds L lane sums, iteration r adding to lane (r - r_o) of a run of L
 * (one vector register), and the block's L lanes are added as a tree (frit_lanesum_*). gcc's
 * `reduction(+:accN_b)` instead added its lanes one by one after every block (a store, then 16
 * dependent scalar adds): a matrix-vector product's 8 rows spent more time there than in the
 * block's 16 vector FMAs (73 -> 55 us at 1024^2). 0: the clause form. */
static int sum_lanes(const cg *g, const frit_uop *u, frit_uop *const *grp, int ng, uint32_t pr) {
  if (g->dialect != FRIT_DIALECT_C || pr != u->nsrc - 1 || ng > 8 || getenv("FRIT_NO_SUM_LANES")) return 0;
  for (int m = 0; m < ng; m++) {
    frit_scalar_kind k = frit_dtype_kind(grp[m]->dtype);
    if (k != FRIT_F32 && k != FRIT_F64) return 0;
  }
  int lanes = frit_host_tile_lanes(grp[0]->dtype);
  return lanes == 4 || lanes == 8 || lanes == 16 ? lanes : 0; /* those of frit_lanesum_* */
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
    cg_printf(&B->header, "for (%s r%" PRIu32 " = r%" PRIu32 "_o; r%" PRIu32 " < r%" PRIu32 "_o + %d; r%" PRIu32 "++)",
              T, id, id, id, id, lanes, id);
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

const char *cgl_emit_loops(cg *g, frit_uop *u, int b) {
  bool red = u->op == FRIT_OP_REDUCE;
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
    /* the flags as wide as the element: uint8_t flags made gcc pack every vector of compares
     * into bytes (about 20 instructions a 64 floats beside the 4 maxes); max(axis=1) of 256x1024
     * floats on one thread was 1.2x slower */
    if (fmaxmin_split(rop, k))
      cgl_line(g, b, "%s %s_n = 0, %s_z = 0;", k == FRIT_F64 ? "uint64_t" : "uint32_t", acc[m], acc[m]);
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
    inner = i == pr ? cgl_open_loop_blocked(g, u->src[i], inner, SUM_BLOCK, lanes, &outer) : cgl_open_loop(g, u->src[i], inner);
    if (inner < 0) return NULL;
    for (int m = 0; m < ng && i == pr; m++)
      if (lanes) cgl_line(g, outer, "%s %s_l[%d] = {0};", cg_ctype(frit_dtype_kind(grp[m]->dtype)), acc[m], lanes);
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
      /* vectorisable form: plain compare-select, NaN and the zero's sign as flags resolved after
       * the loop (frit_redmax*), equal to folding frit_max* (docs/codegen.md) */
      bool d = k == FRIT_F64;
      cgl_line(g, inner, "%s %s_v = %s;", cg_ctype(k), acc[m], vals[m]);
      cgl_line(g, inner, "%s_n |= %s_v != %s_v;", acc[m], acc[m], acc[m]);
      cgl_line(g, inner, "%s_z |= frit_f%s_bits(%s_v) == %s;", acc[m], d ? "64" : "32", acc[m],
           rop == FRIT_OP_MAX ? "0u" : d ? "0x8000000000000000ull" : "0x80000000u");
      cg_printf(&e, "%s_v %s %s ? %s_v : %s", acc[m], rop == FRIT_OP_MAX ? ">" : "<", acc[m], acc[m], acc[m]);
    } else if (fma_b[m]) {
      cg_printf(&e, "frit_fma%s(%s, %s, %s)", k == FRIT_F32 ? "f" : "", vals[m], fma_b[m], accb[m]);
    } else {
      const char *ab[2] = {accb[m], vals[m]};
      if (!cg_render_alu(g->ctx, &e, rop, k, ab, 2)) ok = false, g->failed = true;
    }
    if (ok) cgl_line(g, inner, "%s = %s;", accb[m], e.s);
    cg_free(&e);
    blk *I = &g->blocks[inner];
    const char *clause = inner != b ? omp_red(rop, k) : NULL;
    if (lanes) continue; /* each iteration its own lane: no clause */
    if (clause) cg_printf(&I->red, " reduction(%s:%s)", clause, accb[m]);
    else if (fmaxmin_split(rop, k) && inner != b)
      cg_printf(&I->red, " reduction(%s:%s) reduction(|:%s_n) reduction(|:%s_z)", rop == FRIT_OP_MAX ? "max" : "min",
                acc[m], acc[m], acc[m]);
    else I->red_bad = true;
  }
  for (int m = 0; m < ng; m++) free(vals[m]), free(fma_b[m]);
  if (!ok) return NULL;
  for (int x = inner; x != b;) {
    int p = g->blocks[x].parent;
    cgl_close_block(g, x);
    for (int m = 0; m < ng && p == outer; m++)
      if (lanes)
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
      cgl_line(g, b, "%s = frit_red%s%s(%s, %s_n, %s_z);", acc[m], rop == FRIT_OP_MAX ? "max" : "min",
           k == FRIT_F64 ? "d" : "f", acc[m], acc[m], acc[m]);
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
