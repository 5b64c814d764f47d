/* Collapse of adjacent loops that every access walks as one: ranges a (outer, extent Ea) and b
 * (inner, extent Eb) become one range r of Ea*Eb iterations when each index reads them as
 * ca*a + cb*b with ca == cb*Eb (a contiguous (N, C, 14, 14) array: one loop of 196, not 14 of 14,
 * which a 16-lane vectoriser leaves scalar), then c*r. */
#include "codegen/cg_internal.h"
#include "ir/walk.h"
#include "symbolic/symbolic.h"

enum { MAX_MERGES = 64, MAX_TRIES = 256 };

static bool closes_ranges(const frit_uop *u) { return u->op == FRIT_OP_END || u->op == FRIT_OP_REDUCE; }

/* In every END/REDUCE that lists a or b, b follows a directly (so one loop can replace both
 * without reordering any iteration). */
static bool always_adjacent(frit_uop *const *nodes, size_t n, const frit_uop *a, const frit_uop *b) {
  for (size_t k = 0; k < n; k++) {
    const frit_uop *u = nodes[k];
    if (!closes_ranges(u)) continue;
    for (uint32_t i = 1; i < u->nsrc; i++) {
      if (u->src[i] == a && (i + 1 >= u->nsrc || u->src[i + 1] != b)) return false;
      if (u->src[i] == b && u->src[i - 1] != a) return false;
    }
  }
  return true;
}

/* The index with a and b replaced by r; NULL with *ok false when it reads them otherwise than
 * ca*a + cb*b with ca == cb*eb, or with a or b of one iteration (always 0); the caller then
 * leaves the pair alone. */
static frit_uop *merged_index(frit_ctx *ctx, frit_uop *ix, const frit_uop *a, const frit_uop *b, frit_uop *r,
                              int64_t ea, int64_t eb, bool *ok) {
  frit_lin L;
  if (!frit_lin_flatten(ix, &L)) return *ok = false, NULL;
  int ia = -1, ib = -1;
  for (int i = 0; i < L.n; i++) {
    if (L.t[i].v == a) ia = i;
    if (L.t[i].v == b) ib = i;
  }
  if (ia < 0 && ib < 0) return ix;
  int64_t ca = ia < 0 ? 0 : L.t[ia].c, cb = ib < 0 ? 0 : L.t[ib].c, c;
  if (ea == 1) c = cb; /* a is always 0: whatever it multiplies */
  else if (eb == 1) c = ca;
  else if (ca == cb * eb && cb != 0) c = cb;
  else return *ok = false, NULL;
  if (ia >= 0) L.t[ia].c = 0;
  if (ib >= 0) L.t[ib].c = 0;
  frit_lin_normalize(&L);
  if (c != 0 && !frit_lin_add(&L, r, c)) return *ok = false, NULL;
  frit_lin_normalize(&L);
  return frit_lin_build(ctx, &L);
}

/* The AST with the pair merged into r, or NULL (*ok false: not mergeable; else an error). */
static frit_uop *merge_pair(frit_ctx *ctx, frit_uop *ast, frit_uop *const *nodes, size_t n, frit_uop *a, frit_uop *b,
                            frit_uop *r, bool *ok) {
  int64_t eb = cg_const_extent(b);
  frit_uop **map = calloc(n, sizeof *map);
  uint32_t *pos = malloc(((size_t)ast->id + 1) * sizeof *pos);
  frit_uop *result = NULL;
  if (!map || !pos) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "codegen: out of memory");
    goto done;
  }
  for (size_t k = 0; k < n; k++) pos[nodes[k]->id] = (uint32_t)k;
  for (size_t k = 0; k < n && *ok; k++) {
    frit_uop *u = nodes[k], *src[64];
    frit_uop **s = u->nsrc <= 64 ? src : malloc(u->nsrc * sizeof *s);
    if (!s) {
      frit_set_error(ctx, FRIT_ERR_NOMEM, "codegen: out of memory");
      goto done;
    }
    int ns = 0;
    for (uint32_t i = 0; i < u->nsrc; i++) {
      frit_uop *v = map[pos[u->src[i]->id]];
      if (closes_ranges(u) && i > 0 && u->src[i] == a) v = r, i++; /* (a, b) -> r; b follows a */
      s[ns++] = v;
    }
    bool index_ok = true;
    if (u->op == FRIT_OP_INDEX && ns >= 2 && frit_dtype_kind(s[1]->dtype) == FRIT_I64)
      index_ok = (s[1] = merged_index(ctx, s[1], a, b, r, cg_const_extent(a), eb, ok)) != NULL;
    frit_uop *nu = index_ok ? frit_uop_replace_src(ctx, u, s, ns) : NULL;
    if (s != src) free(s);
    if (!nu) goto done;
    map[k] = nu;
  }
  if (!*ok) goto done;
  result = map[pos[ast->id]];
  /* a use of a or b that is not an index term (a gate, a value, a non-linear index) is left */
  size_t m = 0;
  frit_uop **after = frit_walk_topo(result, &m);
  if (!after) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "codegen: out of memory");
    result = NULL;
    goto done;
  }
  for (size_t k = 0; k < m && *ok; k++)
    if (after[k] == a || after[k] == b) *ok = false;
  free(after);
  if (!*ok) result = NULL;
done:
  free(map);
  free(pos);
  return result;
}

frit_uop *cg_collapse(frit_ctx *ctx, frit_uop *ast) {
  size_t n = 0;
  frit_uop **nodes = frit_walk_topo(ast, &n);
  if (!nodes) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "codegen: out of memory");
    return NULL;
  }
  int64_t next_axis = 0;
  for (size_t k = 0; k < n; k++) {
    const frit_uop *u = nodes[k];
    if (u->op == FRIT_OP_AFTER || u->op == FRIT_OP_DEFINE_REG || u->op == FRIT_OP_DEFINE_LOCAL ||
        u->op == FRIT_OP_BARRIER)
      goto out; /* state carried across iterations: left as the scheduler wrote it */
    if (u->op == FRIT_OP_RANGE && u->arg.i0 >= next_axis) next_axis = u->arg.i0 + 1;
  }
  uint32_t failed[MAX_TRIES][2];
  int nfailed = 0, merges = 0;
  bool again = true;
  while (again && merges < MAX_MERGES && nfailed < MAX_TRIES) {
    again = false;
    /* innermost pairs first: the merged range may then merge with the next one out */
    for (size_t k = 0; k < n && !again && nfailed < MAX_TRIES; k++) {
      frit_uop *u = nodes[k];
      if (!closes_ranges(u)) continue;
      for (uint32_t i = u->nsrc - 1; i >= 2 && !again && nfailed < MAX_TRIES; i--) {
        frit_uop *a = u->src[i - 1], *b = u->src[i];
        int64_t ea = cg_const_extent(a), eb = cg_const_extent(b);
        /* a parallel loop absorbs the serial ones inside it (its threads split the merged loop) */
        bool same = a->arg.i1 == b->arg.i1 || (a->arg.i1 == FRIT_AXIS_GLOBAL && b->arg.i1 == FRIT_AXIS_LOOP);
        if (ea < 1 || eb < 1 || !same || ea > INT64_MAX / eb) continue;
        bool tried = false;
        for (int f = 0; f < nfailed && !tried; f++) tried = failed[f][0] == a->id && failed[f][1] == b->id;
        if (tried) continue;
        bool ok = always_adjacent(nodes, n, a, b);
        frit_uop *merged = NULL;
        if (ok) {
          frit_arg arg = a->arg;
          arg.i0 = next_axis;
          frit_uop *ext = frit_const_int(ctx, a->src[0]->dtype, ea * eb);
          frit_uop *r = ext ? frit_uop_new(ctx, FRIT_OP_RANGE, a->dtype, &ext, 1, &arg) : NULL;
          if (!r) goto fail;
          merged = merge_pair(ctx, ast, nodes, n, a, b, r, &ok);
          if (!merged && ok) goto fail;
        }
        if (!merged) {
          failed[nfailed][0] = a->id, failed[nfailed][1] = b->id, nfailed++;
          continue;
        }
        next_axis++, merges++;
        ast = merged;
        free(nodes);
        nodes = frit_walk_topo(ast, &n);
        if (!nodes) {
          frit_set_error(ctx, FRIT_ERR_NOMEM, "codegen: out of memory");
          return NULL;
        }
        again = true;
      }
    }
  }
out:
  free(nodes);
  return ast;
fail:
  free(nodes);
  return NULL;
}
