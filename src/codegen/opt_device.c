/* Axis choices for devices: a GPU wants one work-item per point of every parallel output axis,
 * with the innermost (contiguous) axis varying fastest across neighbouring work-items, so that
 * their loads and stores coalesce. The host's g0 is only the outermost parallel axis (rows); here
 * it is merged with the parallel axes nested right inside it into one flat launch axis, each old
 * index recovered by division and modulo. */
#include "codegen/cg_internal.h"
#include "ir/walk.h"

/* Does u's subgraph reach target without passing through a LOAD (an index through loaded data
 * may collide across work-items, as a scatter's does)? */
static bool reaches(frit_uop *u, frit_uop *target, uint8_t *seen, const uint32_t *pos) {
  if (u == target) return true;
  if (seen[pos[u->id]] || u->op == FRIT_OP_LOAD) return false;
  seen[pos[u->id]] = 1;
  for (uint32_t i = 0; i < u->nsrc; i++)
    if (reaches(u->src[i], target, seen, pos)) return true;
  return false;
}

/* Does u's subgraph reach target (through loads too)? */
static bool uses_range(frit_uop *u, frit_uop *target, uint8_t *seen, const uint32_t *pos) {
  if (u == target) return true;
  if (seen[pos[u->id]]) return false;
  seen[pos[u->id]] = 1;
  for (uint32_t i = 0; i < u->nsrc; i++)
    if (uses_range(u->src[i], target, seen, pos)) return true;
  return false;
}

static bool mentions_range(frit_uop *u, int depth) {
  if (u->op == FRIT_OP_RANGE || u->op == FRIT_OP_LOAD) return true;
  if (depth > 64) return true;
  for (uint32_t i = 0; i < u->nsrc; i++)
    if (mentions_range(u->src[i], depth + 1)) return true;
  return false;
}

frit_uop *cg_flatten_parallel(frit_ctx *ctx, frit_uop *ast, frit_uop **g0) {
  if (!*g0 || ast->op != FRIT_OP_SINK || ast->nsrc < 1) return ast;
  /* the merged ranges: g0, then the ranges every top-level END lists next (output axes: a loop
   * with state carried across iterations would hold AFTER or registers, and then the kernel has
   * no g0), while their extents are known at launch */
  enum { MAXR = 8 };
  frit_uop *rr[MAXR];
  int m = 1;
  rr[0] = *g0;
  for (;; m++) {
    if (m == MAXR) break;
    frit_uop *e0 = ast->src[0];
    if (e0->op != FRIT_OP_END || (uint32_t)m + 1 >= e0->nsrc) break;
    frit_uop *r = e0->src[m + 1];
    bool same = true;
    for (uint32_t i = 1; i < ast->nsrc && same; i++) {
      frit_uop *e = ast->src[i];
      same = e->op == FRIT_OP_END && (uint32_t)m + 1 < e->nsrc && e->src[m + 1] == r;
    }
    bool parallel = r->arg.i1 == FRIT_AXIS_GLOBAL || r->arg.i1 == FRIT_AXIS_LOOP || r->arg.i1 == FRIT_AXIS_UPCAST;
    if (!same || !parallel || mentions_range(r->src[0], 0)) break;
    rr[m] = r;
  }
  if (m == 1) return ast;
  /* every store must write an element that depends on each merged range, or work-items race */
  size_t n = 0;
  frit_uop **nodes = frit_walk_topo(ast, &n);
  uint32_t *pos = malloc(((size_t)ast->id + 1) * sizeof *pos);
  uint8_t *seen = malloc(n + 1);
  if (!nodes || !pos || !seen) {
    free(nodes), free(pos), free(seen);
    frit_set_error(ctx, FRIT_ERR_NOMEM, "codegen: out of memory");
    return NULL;
  }
  for (size_t k = 0; k < n; k++) pos[nodes[k]->id] = (uint32_t)k;
  /* a reduction that does not use a merged range would run again for each of its points (a
   * softmax's row max, once an element instead of once a row): merge only the ranges before it */
  for (size_t k = 0; k < n && m > 1; k++) {
    if (nodes[k]->op != FRIT_OP_REDUCE) continue;
    for (int i = 1; i < m; i++) {
      memset(seen, 0, n + 1);
      if (!uses_range(nodes[k], rr[i], seen, pos)) {
        m = i;
        break;
      }
    }
  }
  for (size_t k = 0; k < n && m > 1; k++) {
    if (nodes[k]->op != FRIT_OP_STORE) continue;
    for (int i = 1; i < m; i++) {
      memset(seen, 0, n + 1);
      bool one = rr[i]->src[0]->op == FRIT_OP_CONST && rr[i]->src[0]->arg.value.i == 1; /* one point: no race */
      if (!one && !reaches(nodes[k]->src[0], rr[i], seen, pos)) {
        m = i; /* merge only the ranges before it */
        break;
      }
    }
  }
  int64_t next_id = 0;
  for (size_t k = 0; k < n; k++)
    if (nodes[k]->op == FRIT_OP_RANGE && nodes[k]->arg.i0 >= next_id) next_id = nodes[k]->arg.i0 + 1;
  free(nodes), free(pos), free(seen);
  if (m == 1) return ast;
  frit_dtype I64 = FRIT_I64;
  frit_uop *ext[MAXR], *total = NULL;
  for (int i = 0; i < m; i++) {
    ext[i] = frit_dtype_kind(rr[i]->src[0]->dtype) == FRIT_I64 ? rr[i]->src[0] : frit_cast(ctx, rr[i]->src[0], I64);
    if (!ext[i]) return NULL;
    total = total ? frit_binary(ctx, FRIT_OP_MUL, total, ext[i]) : ext[i];
    if (!total) return NULL;
  }
  frit_uop *flat = frit_range(ctx, total, next_id, FRIT_AXIS_GLOBAL);
  if (!flat) return NULL;
  /* rr[i] = (flat / stride_i) % extent_i, the last range varying fastest */
  frit_uop *idx[MAXR], *stride = NULL;
  for (int i = m - 1; i >= 0; i--) {
    frit_uop *q = stride ? frit_binary(ctx, FRIT_OP_IDIV, flat, stride) : flat;
    frit_uop *v = q && i > 0 ? frit_binary(ctx, FRIT_OP_MOD, q, ext[i]) : q;
    if (v && frit_dtype_kind(rr[i]->dtype) != FRIT_I64) v = frit_cast(ctx, v, rr[i]->dtype);
    stride = stride ? frit_binary(ctx, FRIT_OP_MUL, stride, ext[i]) : ext[i];
    if (!v || !stride) return NULL;
    idx[i] = v;
  }
  frit_uop **ends = malloc(ast->nsrc * sizeof *ends);
  if (!ends) return frit_set_error(ctx, FRIT_ERR_NOMEM, "codegen: out of memory"), NULL;
  for (uint32_t i = 0; i < ast->nsrc; i++) {
    frit_uop *e = ast->src[i];
    frit_uop *body = cg_subst(ctx, e->src[0], rr, idx, m);
    frit_uop *src[64];
    if (!body || e->nsrc - (uint32_t)m + 1 > 64) { /* a nested loop closes a merged range: keep the host's shape */
      free(ends);
      frit_clear_error(ctx);
      return ast;
    }
    int w = 0;
    src[w++] = body;
    src[w++] = flat;
    for (uint32_t j = (uint32_t)m + 1; j < e->nsrc; j++) src[w++] = e->src[j];
    ends[i] = frit_uop_replace_src(ctx, e, src, w);
    if (!ends[i]) {
      free(ends);
      return NULL;
    }
  }
  frit_uop *res = frit_uop_replace_src(ctx, ast, ends, (int)ast->nsrc);
  free(ends);
  /* (flat / n) * n + flat % n folds back to flat, and so on */
  if (res) res = frit_simplify(ctx, res);
  if (res) *g0 = flat;
  return res;
}
