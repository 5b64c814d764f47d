/* Unrolling of small static loops on the AST, so that work shared between their iterations is
 * computed once: a REDUCE over a few elements becomes its fold chain, and a small output axis
 * whose elements each need a reduction, or share most of their loads, becomes one store per
 * element inside the other loops (as does a short innermost axis, for the vectoriser). */
#include "codegen/cg_internal.h"
#include "ir/walk.h"
#include "symbolic/symbolic.h"

#include <math.h>

#define MAX_UNROLL 8
#define MAX_UPCAST 16 /* a register tile's rows (the tiler keeps rows x vectors within the registers) */

frit_uop *cg_subst(frit_ctx *ctx, frit_uop *root, frit_uop *const *from, frit_uop *const *to, int n) {
  size_t cnt = 0;
  frit_uop **nodes = frit_walk_topo(root, &cnt);
  frit_uop **map = calloc((size_t)root->id + 1, sizeof *map);
  frit_uop *res = NULL;
  if (!nodes || !map) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "codegen: out of memory");
    goto done;
  }
  for (size_t k = 0; k < cnt; k++) {
    frit_uop *u = nodes[k], *nu = NULL;
    for (int i = 0; i < n && !nu; i++)
      if (u == from[i]) nu = to[i];
    if (!nu) {
      frit_uop *src[64];
      if (u->nsrc > 64) goto done;
      for (uint32_t i = 0; i < u->nsrc; i++) src[i] = map[u->src[i]->id];
      /* a loop that closes a substituted range cannot be rebuilt over a non-RANGE */
      if (u->op == FRIT_OP_END || u->op == FRIT_OP_REDUCE)
        for (uint32_t i = 1; i < u->nsrc; i++)
          if (src[i]->op != FRIT_OP_RANGE) goto done;
      nu = frit_uop_replace_src(ctx, u, src, (int)u->nsrc);
      if (!nu) goto done;
    }
    map[u->id] = nu;
  }
  res = map[root->id];
done:
  free(nodes);
  free(map);
  return res;
}

static bool small_range(const frit_uop *r) {
  return r->op == FRIT_OP_RANGE && r->src[0]->op == FRIT_OP_CONST && r->src[0]->arg.value.i >= 1 &&
         r->src[0]->arg.value.i <= (r->arg.i1 == FRIT_AXIS_UPCAST ? MAX_UPCAST : MAX_UNROLL);
}

static bool foldable(frit_op op) {
  return op == FRIT_OP_ADD || op == FRIT_OP_MUL || op == FRIT_OP_MAX || op == FRIT_OP_MIN || op == FRIT_OP_AND ||
         op == FRIT_OP_OR || op == FRIT_OP_XOR;
}

/* Does the subgraph of u contain a node for which pred holds (or the node x)? */
static bool contains(frit_uop *u, const frit_uop *x, bool (*pred)(const frit_uop *)) {
  size_t n = 0;
  frit_uop **nodes = frit_walk_topo(u, &n);
  bool r = !nodes; /* conservative on OOM */
  for (size_t k = 0; k < n && !r; k++) r = nodes[k] == x || (pred && pred(nodes[k]));
  free(nodes);
  return r;
}

static bool is_state(const frit_uop *u) {
  frit_op op = (frit_op)u->op;
  return op == FRIT_OP_AFTER || op == FRIT_OP_DEFINE_REG || op == FRIT_OP_DEFINE_LOCAL || op == FRIT_OP_ATOMIC ||
         op == FRIT_OP_ATOMIC_CAS || op == FRIT_OP_BARRIER || op == FRIT_OP_IF;
}

/* A float max/min of the unrolled bodies b[0..n) as the looped reduction renders it
 * (linear_reduce.c): a plain compare-select chain, which gcc turns into one vmaxps/vminps a
 * step, with a NaN seen and a +0 (max) / -0 (min) seen as flags resolved at the end. Equal to
 * folding frit_maxf/frit_minf (a NaN result is the default NaN): a 2x2 max-pool's fold of three
 * frit_maxf bit blends, in 7-wide rows, took 2.3x as long. */
static frit_uop *minmax_split(frit_ctx *ctx, frit_op op, frit_dtype dt, frit_uop *const *b, int64_t n) {
  bool d = frit_dtype_kind(dt) == FRIT_F64;
  frit_dtype ut = d ? FRIT_U64 : FRIT_U32;
  frit_uop *zbits = frit_const_int(ctx, ut, op == FRIT_OP_MAX ? 0 : d ? INT64_MIN : (int64_t)0x80000000u);
  frit_uop *m = b[0], *nan = NULL, *z = NULL;
  for (int64_t t = 0; t < n && m && zbits; t++) {
    frit_uop *x = b[t], *bits = frit_uop_new(ctx, FRIT_OP_BITCAST, ut, &x, 1, NULL);
    frit_uop *xn = frit_binary(ctx, FRIT_OP_CMPNE, x, x), *xz = bits ? frit_binary(ctx, FRIT_OP_CMPEQ, bits, zbits) : NULL;
    nan = t ? frit_binary(ctx, FRIT_OP_OR, nan, xn) : xn;
    z = t ? frit_binary(ctx, FRIT_OP_OR, z, xz) : xz;
    if (t) m = frit_ternary(ctx, FRIT_OP_WHERE, op == FRIT_OP_MAX ? frit_binary(ctx, FRIT_OP_CMPLT, m, x) :
                                                 frit_binary(ctx, FRIT_OP_CMPLT, x, m), x, m);
  }
  frit_uop *pz = frit_const_float(ctx, dt, 0.0), *nz = frit_const_float(ctx, dt, -0.0);
  frit_uop *zero = op == FRIT_OP_MAX ? frit_ternary(ctx, FRIT_OP_WHERE, z, pz, nz) : frit_ternary(ctx, FRIT_OP_WHERE, z, nz, pz);
  m = frit_ternary(ctx, FRIT_OP_WHERE, frit_binary(ctx, FRIT_OP_CMPEQ, m, pz), zero, m);
  return frit_ternary(ctx, FRIT_OP_WHERE, nan, frit_const_float(ctx, dt, NAN), m);
}

/* REDUCE(body, r1..rm), every range small: the fold chain op(..op(op(identity, b(0)), b(1)).., b(E-1))
 * in the odometer order the interpreter folds in, so results are bit for bit the same (a float
 * max/min: minmax_split). */
static frit_uop *unroll_reduce(frit_ctx *ctx, frit_uop *u) {
  int m = (int)u->nsrc - 1;
  if (m < 1 || m > 4 || !foldable((frit_op)u->arg.i0) || frit_dtype_lanes(u->dtype) != 1) return u;
  int64_t total = 1, ext[4], idx[4] = {0, 0, 0, 0};
  for (int i = 0; i < m; i++) {
    if (!small_range(u->src[1 + i])) return u;
    ext[i] = u->src[1 + i]->src[0]->arg.value.i;
    total *= ext[i];
  }
  if (total > MAX_UNROLL) return u;
  frit_op op = (frit_op)u->arg.i0;
  frit_scalar_kind k = frit_dtype_kind(u->dtype);
  bool split = (op == FRIT_OP_MAX || op == FRIT_OP_MIN) && (k == FRIT_F32 || k == FRIT_F64);
  frit_uop *acc = frit_const(ctx, u->dtype, cg_reduce_identity(op, k)), *body[MAX_UNROLL];
  if (!acc) return NULL;
  frit_arg z = frit_arg_none();
  for (int64_t t = 0; t < total; t++) {
    frit_uop *to[4];
    for (int i = 0; i < m; i++)
      if (!(to[i] = frit_const_int(ctx, u->src[1 + i]->dtype, idx[i]))) return NULL;
    frit_uop *b = cg_subst(ctx, u->src[0], u->src + 1, to, m);
    if (!b) return NULL;
    body[t] = b;
    if (!split && !(acc = frit_uop_new(ctx, op, u->dtype, (frit_uop *[]){acc, b}, 2, &z))) return NULL;
    for (int i = m - 1; i >= 0; i--) {
      if (++idx[i] < ext[i]) break;
      idx[i] = 0;
    }
  }
  return split ? minmax_split(ctx, op, u->dtype, body, total) : acc;
}

static bool is_reduce(const frit_uop *u) { return u->op == FRIT_OP_REDUCE; }

#define MAX_STORES 16
#define MAX_SHARED_COPIES 16

static frit_uop *unroll_at(frit_ctx *ctx, frit_uop *e, int pick, bool upcast_only, frit_uop *const *st, int ns);

/* END(eff, ..., c, ...) with c small and eff a store (or a GROUP of stores: a kernel with several
 * outputs, as the n-body step's x and v) whose values hold reductions that depend on c:
 * END(GROUP(eff[c:=0], ..., eff[c:=E-1]), ...). The reductions of the copies then share
 * their loops (the renderer fuses REDUCEs over the same ranges) and every subexpression that
 * does not depend on c. The stores write distinct elements and the kernel reads none of them
 * (no AFTER), so their order does not matter. */
static frit_uop *unroll_end(frit_ctx *ctx, frit_uop *e, frit_uop *g0, bool upcast_only) {
  frit_uop *eff = e->src[0];
  frit_uop *const *st = &eff;
  int ns = 1;
  if (eff->op == FRIT_OP_GROUP) st = eff->src, ns = (int)eff->nsrc;
  if (ns < 1 || ns > MAX_STORES || contains(eff, NULL, is_state)) return e;
  for (int i = 0; i < ns; i++)
    if (st[i]->op != FRIT_OP_STORE) return e;
  int pick = -1;
  /* UPCAST ranges first (the tiler's row tile), innermost first */
  for (uint32_t t = 0; t < 2 * (e->nsrc - 1) && pick < 0; t++) {
    uint32_t i = e->nsrc - 1 - t % (e->nsrc - 1);
    frit_uop *c = e->src[i];
    if ((t < e->nsrc - 1) != (c->arg.i1 == FRIT_AXIS_UPCAST) || (upcast_only && t >= e->nsrc - 1)) continue;
    if (c == g0 || !small_range(c) || c->arg.i1 == FRIT_AXIS_REDUCE) continue;
    if (c->src[0]->arg.value.i == 1) { /* a loop of one iteration: always dropped */
      pick = (int)i;
      break;
    }
    /* a value must hold a reduction that depends on c (else nothing is shared) */
    for (int s = 0; s < ns && pick < 0; s++) {
      size_t n = 0;
      frit_uop **nodes = frit_walk_topo(st[s]->src[1], &n);
      if (!nodes) return e;
      for (size_t k = 0; k < n && pick < 0; k++)
        if (nodes[k]->op == FRIT_OP_REDUCE && contains(nodes[k]->src[0], c, NULL)) pick = (int)i;
      free(nodes);
    }
  }
  if (pick < 0) return e;
  return unroll_at(ctx, e, pick, upcast_only, st, ns);
}

/* END(eff, ..., c) with eff its stores st[0..ns): the copies of eff for c = 0..E-1 in one GROUP
 * (e unchanged where they cannot be; NULL on error). */
static frit_uop *unroll_at(frit_ctx *ctx, frit_uop *e, int pick, bool upcast_only, frit_uop *const *st, int ns) {
  frit_uop *c = e->src[pick];
  for (uint32_t i = 1; i < e->nsrc; i++)
    if (contains(e->src[i]->src[0], c, NULL)) return e; /* a triangular loop keeps its order */
  int64_t E = c->src[0]->arg.value.i;
  /* a store of a GROUP that does not mention c (a sibling output without that axis) is kept
   * once; one whose value depends on c but its element does not (the last c wins) keeps the loop */
  bool uses_c[MAX_STORES];
  for (int s = 0; s < ns; s++) {
    uses_c[s] = contains(st[s]->src[0], c, NULL);
    if (!uses_c[s] && E > 1 && contains(st[s], c, NULL)) return e;
  }
  /* a second axis only while the copies fit a register tile (the tiler's rows x 2 vectors): a
   * conv's 5x5 taps as 25 accumulators spilled on AVX2, where 5 had not */
  int nuse = 0;
  for (int s = 0; s < ns; s++) nuse += uses_c[s];
  if (upcast_only && (ns - nuse) + nuse * E > frit_host_tile_accumulators()) return e;
  /* one flat GROUP of the stores' copies, copy by copy */
  if (E > MAX_UPCAST) return e;
  frit_uop *parts[MAX_UPCAST * MAX_STORES];
  int np = 0;
  for (int64_t t = 0; t < E; t++) {
    frit_uop *k = frit_const_int(ctx, c->dtype, t);
    for (int s = 0; s < ns; s++) {
      if (!uses_c[s] && t > 0) continue;
      frit_uop *p = k ? cg_subst(ctx, st[s], &c, &k, 1) : NULL;
      if (!p) return NULL;
      parts[np++] = p;
    }
  }
  frit_arg z = frit_arg_none();
  frit_uop *grp = frit_uop_new(ctx, FRIT_OP_GROUP, FRIT_VOID, parts, np, &z);
  if (!grp || e->nsrc == 2) return grp;
  frit_uop *es[64];
  if (e->nsrc > 64) return e;
  int w = 0;
  es[w++] = grp;
  for (uint32_t i = 1; i < e->nsrc; i++)
    if ((int)i != pick) es[w++] = e->src[i];
  return frit_uop_new(ctx, FRIT_OP_END, FRIT_VOID, es, w, &z);
}

/* END(store, ..., o, c) with c innermost, 2..4 iterations, and the store writing o and c as one
 * contiguous run (index o*E + c): c's copies in a GROUP, so that o runs innermost with each
 * iteration writing E neighbours, which the vectoriser takes as one interleaved group. Left as
 * it was, the innermost loop was c's own 2 iterations (a 2x2 max pool's backward: 2.6 ms, now 1.4). */
static frit_uop *unroll_short_inner(frit_ctx *ctx, frit_uop *e, frit_uop *g0) {
  if (e->nsrc < 3 || e->src[0]->op != FRIT_OP_STORE || contains(e->src[0], NULL, is_state)) return e;
  frit_uop *c = e->src[e->nsrc - 1], *o = e->src[e->nsrc - 2], *st = e->src[0];
  int64_t E = cg_const_extent(c);
  if (c == g0 || E < 2 || E > 4 || cg_const_extent(o) < 8) return e;
  frit_lin L;
  if (st->src[0]->op != FRIT_OP_INDEX || !frit_lin_flatten(st->src[0]->src[1], &L)) return e;
  int64_t cc = 0, co = 0;
  for (int i = 0; i < L.n; i++) {
    if (L.t[i].v == c) cc = L.t[i].c;
    if (L.t[i].v == o) co = L.t[i].c;
  }
  if (cc != 1 || co != E) return e;
  return unroll_at(ctx, e, (int)e->nsrc - 1, false, &st, 1);
}

/* END(store, ..., c, ..., inner) with c a small output range (UPCAST, or a loop of at most 16
 * iterations) that is not innermost, and a value with at least as many loads that do not depend
 * on c as loads that do: c's copies in a GROUP share those loads (hash-consing makes them one
 * node each). A conv as the sum of its 25 taps (conv_taps) loaded its input rows once per output
 * channel: 8x the loads of one pass. */
static frit_uop *unroll_shared_loads(frit_ctx *ctx, frit_uop *e, frit_uop *g0) {
  if (e->nsrc < 3 || e->src[0]->op != FRIT_OP_STORE || contains(e->src[0], NULL, is_state)) return e;
  frit_uop *st = e->src[0];
  size_t n = 0;
  frit_uop **nodes = NULL;
  for (uint32_t i = e->nsrc - 2; i >= 1; i--) {
    frit_uop *c = e->src[i];
    int64_t E = cg_const_extent(c);
    /* up to 16 copies of a serial loop too: conv1 over 16 channels, 43.6 -> 32.0 ms over 20 steps */
    bool fits = c->arg.i1 == FRIT_AXIS_UPCAST ? E <= MAX_UPCAST : c->arg.i1 == FRIT_AXIS_LOOP && E <= MAX_SHARED_COPIES;
    if (c == g0 || !fits || E < 2) continue;
    if (!nodes && !(nodes = frit_walk_topo(st->src[1], &n))) return e;
    int shared = 0, own = 0;
    for (size_t k = 0; k < n; k++)
      if (nodes[k]->op == FRIT_OP_LOAD) {
        if (contains(nodes[k], c, NULL)) own++;
        else shared++;
      }
    if (shared >= 2 && shared >= own) {
      free(nodes);
      return unroll_at(ctx, e, (int)i, false, &st, 1);
    }
  }
  free(nodes);
  return e;
}

frit_uop *cg_unroll(frit_ctx *ctx, frit_uop *ast, frit_uop *g0) {
  size_t n = 0;
  frit_uop **nodes = frit_walk_topo(ast, &n);
  frit_uop **map = calloc((size_t)ast->id + 1, sizeof *map);
  frit_uop *res = NULL;
  if (!nodes || !map) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "codegen: out of memory");
    goto done;
  }
  for (size_t k = 0; k < n; k++) {
    frit_uop *u = nodes[k], *src[64];
    if (u->nsrc > 64) {
      map[u->id] = u;
      continue;
    }
    bool same = true;
    for (uint32_t i = 0; i < u->nsrc; i++) {
      src[i] = map[u->src[i]->id];
      same = same && src[i] == u->src[i];
    }
    frit_uop *nu = same ? u : frit_uop_replace_src(ctx, u, src, (int)u->nsrc);
    if (nu && nu->op == FRIT_OP_REDUCE) nu = unroll_reduce(ctx, nu);
    else if (nu && nu->op == FRIT_OP_END && !contains(nu->src[0], NULL, is_reduce)) {
      nu = unroll_short_inner(ctx, nu, g0);
      if (nu && nu->op == FRIT_OP_END) nu = unroll_shared_loads(ctx, nu, g0);
    }
    else
      /* again while it unrolls UPCAST axes: a register tile has two (rows, column vectors) */
      for (int pass = 0; nu && nu->op == FRIT_OP_END && nu->nsrc >= 2 && contains(nu->src[0], NULL, is_reduce);
           pass++) {
        frit_uop *before = nu;
        nu = unroll_end(ctx, nu, g0, pass > 0);
        if (nu == before) break;
      }
    if (!nu) goto done;
    map[u->id] = nu;
  }
  res = map[ast->id];
done:
  free(nodes);
  free(map);
  return res;
}
