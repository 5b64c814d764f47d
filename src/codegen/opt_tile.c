/* Register tiling of matmul-shaped kernels: out[i, j] = f(reductions over k of terms loading
 * contiguously along j). The (i, j) loops become i1 (the thread axis), j0, i0, ii, jj with
 * i = i1*IB + i0*TI + ii and j = j0*TJ + jj: the unroller then gives the TI rows their own
 * reductions in one k loop, and the renderer vectorises the jj loop outside-in, so each of the
 * TI accumulators is a vector register of TJ columns that stays in registers over k, every
 * loaded column vector of b serves TI rows, and the B panel (TJ columns) stays in cache over the
 * IB rows of a thread's block. Each output element still folds its k terms in order: results
 * are bit for bit those of the untiled loop. */
#include "codegen/cg_internal.h"
#include "ir/walk.h"

static int64_t cext(const frit_uop *r) { return r->src[0]->op == FRIT_OP_CONST ? r->src[0]->arg.value.i : -1; }

/* Is r a term of the index sum with coefficient 1 (the other terms free of r)? */
static bool unit_term(frit_uop *ix, frit_uop *r, const uint8_t *dep, int depth) {
  if (ix == r) return true;
  if (ix->op != FRIT_OP_ADD || depth > 64) return false; /* a sum that long: not claimed (deep graphs) */
  for (int i = 0; i < 2; i++)
    if (!dep[ix->src[1 - i]->id] && unit_term(ix->src[i], r, dep, depth + 1)) return true;
  return false;
}

/* dep[id] = the node depends on r, for every node below root */
static uint8_t *dep_map(frit_uop *root, frit_uop *r, frit_uop **nodes, size_t n) {
  uint8_t *dep = calloc((size_t)root->id + 1, 1);
  if (!dep) return NULL;
  for (size_t k = 0; k < n; k++) {
    frit_uop *u = nodes[k];
    bool d = u == r;
    for (uint32_t i = 0; i < u->nsrc && !d; i++) d = dep[u->src[i]->id];
    dep[u->id] = d;
  }
  return dep;
}

/* Does a load of st read consecutive elements along j? */
static bool loads_along(frit_uop *st, frit_uop *j) {
  size_t n = 0;
  frit_uop **nodes = frit_walk_topo(st, &n);
  uint8_t *dj = nodes ? dep_map(st, j, nodes, n) : NULL;
  bool r = false;
  for (size_t k = 0; k < n && dj && !r; k++) {
    frit_uop *u = nodes[k];
    r = u->op == FRIT_OP_LOAD && u->src[0]->op == FRIT_OP_INDEX && unit_term(u->src[0]->src[1], j, dj, 0);
  }
  free(nodes);
  free(dj);
  return r;
}

/* contiguous: a load reads along j as it stands (else only after j is split into panels) */
static bool fits(frit_uop *e, frit_uop *i, frit_uop *j, bool *contiguous_out) {
  frit_uop *st = e->src[0];
  if (st->op != FRIT_OP_STORE || st->nsrc != 2) return false;
  size_t n = 0;
  frit_uop **nodes = frit_walk_topo(st, &n);
  if (!nodes) return false;
  uint8_t *di = dep_map(st, i, nodes, n), *dj = dep_map(st, j, nodes, n);
  bool ok = di && dj, red = false;
  for (size_t k = 0; k < n && ok; k++) {
    frit_uop *u = nodes[k];
    frit_op op = (frit_op)u->op;
    if (op == FRIT_OP_AFTER || op == FRIT_OP_DEFINE_REG || op == FRIT_OP_DEFINE_LOCAL || op == FRIT_OP_IF ||
        op == FRIT_OP_END || op == FRIT_OP_ATOMIC || op == FRIT_OP_ATOMIC_CAS || op == FRIT_OP_GROUP ||
        op == FRIT_OP_BARRIER)
      ok = false;
    if (op == FRIT_OP_REDUCE) {
      if (!di[u->src[0]->id] || !dj[u->src[0]->id] || frit_dtype_lanes(u->dtype) != 1) ok = false;
      for (uint32_t s = 1; s < u->nsrc && ok; s++)
        if (di[u->src[s]->src[0]->id] || dj[u->src[s]->src[0]->id]) ok = false; /* triangular */
      red = true;
    }
  }
  free(nodes);
  free(di);
  free(dj);
  *contiguous_out = ok && red && loads_along(st, j);
  return ok && red;
}

frit_uop *cg_tile(frit_ctx *ctx, frit_uop *ast, frit_uop **g0p) {
  frit_uop *g0 = *g0p;
  if (!g0 || ast->op != FRIT_OP_SINK || ast->nsrc != 1) return ast;
  frit_uop *e = ast->src[0];
  if (e->op != FRIT_OP_END || e->nsrc < 3 || e->nsrc > 16 || e->src[1] != g0) return ast;
  frit_uop *i = g0, *j = e->src[e->nsrc - 1];
  int64_t M = cext(i), N = cext(j);
  if (M <= 0 || N <= 0 || N % 16 || frit_dtype_kind(i->dtype) != frit_dtype_kind(j->dtype)) return ast;
  int64_t TI = M % 8 == 0 ? 8 : M % 4 == 0 ? 4 : 0, TJ = N % 32 == 0 ? 32 : 16, IB = TI;
  if (!TI || M < 2 * TI) return ast;
  /* a thread's block of rows: up to 64, keeping at least 4 blocks for the pool to share */
  while (IB < 64 && M % (2 * IB) == 0 && M / (2 * IB) >= 4) IB *= 2;
  bool contiguous = false;
  if (!fits(e, i, j, &contiguous)) return ast;
  frit_dtype dt = i->dtype;
  frit_uop *i1 = frit_range(ctx, frit_const_int(ctx, dt, M / IB), 3000, FRIT_AXIS_GLOBAL);
  frit_uop *i0 = frit_range(ctx, frit_const_int(ctx, dt, IB / TI), 3001, FRIT_AXIS_LOOP);
  frit_uop *ii = frit_range(ctx, frit_const_int(ctx, dt, TI), 3002, FRIT_AXIS_UPCAST);
  frit_uop *j0 = frit_range(ctx, frit_const_int(ctx, dt, N / TJ), 3003, FRIT_AXIS_LOOP);
  frit_uop *jj = frit_range(ctx, frit_const_int(ctx, dt, TJ), 3004, FRIT_AXIS_LOOP);
  if (!i1 || !i0 || !ii || !j0 || !jj) return NULL;
  frit_uop *ie = frit_binary(ctx, FRIT_OP_ADD,
                             frit_binary(ctx, FRIT_OP_ADD, frit_binary(ctx, FRIT_OP_MUL, i1, frit_const_int(ctx, dt, IB)),
                                         frit_binary(ctx, FRIT_OP_MUL, i0, frit_const_int(ctx, dt, TI))),
                             ii);
  frit_uop *je = frit_binary(ctx, FRIT_OP_ADD, frit_binary(ctx, FRIT_OP_MUL, j0, frit_const_int(ctx, dt, TJ)), jj);
  if (!ie || !je) return NULL;
  frit_uop *from[2] = {i, j}, *to[2] = {ie, je};
  frit_uop *st = cg_subst(ctx, e->src[0], from, to, 2);
  if (!st) return ctx->status == FRIT_OK ? ast : NULL;
  /* B packed in panels of TJ columns (tensor/linalg.c) is read at (j / TJ, k, j % TJ): with
   * j = j0*TJ + jj that simplifies to consecutive jj */
  if (!contiguous && (!(st = frit_simplify(ctx, st)) || !loads_along(st, jj))) return st ? ast : NULL;
  frit_uop *es[24];
  int w = 0;
  es[w++] = st;
  es[w++] = i1;
  for (uint32_t k = 2; k + 1 < e->nsrc; k++) es[w++] = e->src[k];
  es[w++] = j0;
  es[w++] = i0;
  es[w++] = ii;
  es[w++] = jj;
  frit_arg z = frit_arg_none();
  frit_uop *ne = frit_uop_new(ctx, FRIT_OP_END, FRIT_VOID, es, w, &z);
  frit_uop *sink = ne ? frit_uop_replace_src(ctx, ast, &ne, 1) : NULL;
  if (sink) *g0p = i1;
  return sink;
}
