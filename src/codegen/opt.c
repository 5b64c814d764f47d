/* Axis choices on a kernel AST before rendering: which range the runtime splits across threads
 * (the g0 axis, type GLOBAL), the contiguous output range innermost (so the vectorizer sees
 * stride-1 stores), and small static ranges marked UPCAST/UNROLL (rendered as unrolled loops). */
#include <stddef.h>

#include "codegen/cg_internal.h"
#include "ir/walk.h"

/* Does the subgraph of u contain a node with one of these ops? (memoised by the caller's mark:
 * 1 no, 2 yes). An explicit stack (deep bodies); out of memory answers yes, the safe choice. */
static bool mentions(frit_uop *u, uint8_t *mark, const uint32_t *pos, bool (*pred)(const frit_uop *)) {
  if (mark[pos[u->id]]) return mark[pos[u->id]] == 2;
  typedef struct item {
    frit_uop *u;
    uint32_t next;
  } item;
  size_t n = 0, cap = 64;
  item *st = malloc(cap * sizeof *st);
  if (!st) return true;
  st[n++] = (item){u, 0};
  bool found = false;
  while (n && !found) {
    item *it = &st[n - 1];
    if (it->next == 0 && pred(it->u)) {
      found = true;
    } else if (it->next < it->u->nsrc) {
      frit_uop *v = it->u->src[it->next++];
      uint8_t m = mark[pos[v->id]];
      if (m == 2) {
        found = true;
      } else if (!m) {
        if (n == cap) {
          item *ns = realloc(st, (cap *= 2) * sizeof *st);
          if (!ns) {
            found = true;
            break;
          }
          st = ns;
        }
        st[n++] = (item){v, 0};
      }
    } else {
      mark[pos[it->u->id]] = 1;
      n--;
    }
  }
  /* the nodes still on the stack are the path down to the find: each contains it */
  for (size_t i = 0; found && i < n; i++) mark[pos[st[i].u->id]] = 2;
  free(st);
  return found;
}

static bool is_range_or_mem(const frit_uop *u) {
  return u->op == FRIT_OP_RANGE || u->op == FRIT_OP_LOAD || u->op == FRIT_OP_DEFINE_GLOBAL;
}

/* The range among `cand` that the index uses with coefficient 1 as a direct term of its sum. */
static frit_uop *unit_term(frit_uop *ix, frit_uop *const *cand, int n, int depth) {
  for (int i = 0; i < n; i++)
    if (ix == cand[i]) return ix;
  if (ix->op == FRIT_OP_ADD && depth < 16) {
    frit_uop *a = unit_term(ix->src[0], cand, n, depth + 1);
    return a ? a : unit_term(ix->src[1], cand, n, depth + 1);
  }
  return NULL;
}

/* How many times a load runs per store: the product of the reduction ranges its index walks. */
static int64_t load_repeats(frit_uop *ix, int depth) {
  if (ix->op == FRIT_OP_RANGE)
    return ix->arg.i1 == FRIT_AXIS_REDUCE && ix->src[0]->op == FRIT_OP_CONST ? ix->src[0]->arg.value.i : 1;
  if ((ix->op != FRIT_OP_ADD && ix->op != FRIT_OP_MUL) || depth > 16) return 1;
  int64_t a = load_repeats(ix->src[0], depth + 1), b = load_repeats(ix->src[1], depth + 1);
  return a > (1 << 20) / (b > 0 ? b : 1) ? 1 << 20 : a * b;
}

/* The range to run innermost: the one along which most accesses of the END are contiguous (each
 * load counted as often as it runs per store), the store's own on a tie. A kernel that writes
 * (N, C, OH, OW) from the 2x2 windows of an (N, H, W, C) array (a max pool after an NHWC conv)
 * ran its loads with a stride of 2C and no vectors: 7x slower than along C. */
static frit_uop *innermost_choice(frit_uop *end, frit_uop *store_unit) {
  frit_uop *const *cand = end->src + 1;
  int n = (int)end->nsrc - 1;
  int64_t loads[64] = {0};
  if (n > 64) return store_unit;
  size_t m = 0;
  frit_uop **nodes = frit_walk_topo(end->src[0]->src[1], &m);
  if (!nodes) return store_unit;
  bool reduces = false;
  for (size_t k = 0; k < m; k++) {
    frit_uop *u = nodes[k];
    reduces = reduces || u->op == FRIT_OP_REDUCE;
    if (u->op != FRIT_OP_LOAD || u->src[0]->op != FRIT_OP_INDEX || u->src[0]->nsrc != 2) continue;
    frit_uop *r = unit_term(u->src[0]->src[1], cand, n, 0);
    int64_t times = r ? load_repeats(u->src[0]->src[1], 0) : 0;
    for (int i = 0; r && i < n; i++) loads[i] += cand[i] == r ? times : 0;
  }
  free(nodes);
  frit_uop *best = store_unit;
  int64_t best_score = 0;
  for (int i = 0; i < n; i++)
    if (cand[i] == store_unit) best_score = loads[i] + 1;
  for (int i = 0; i < n; i++)
    if (cand[i] != store_unit && loads[i] > best_score) best = cand[i], best_score = loads[i];
  /* a reduction looped so that its loads run along the innermost range (a permuted reduction,
   * schedule/rangeify.c) keeps that order: its register tiles need it, the strided store is
   * once per reduction */
  if (reduces && loads[n - 1] > 0 && loads[n - 1] + 1 >= best_score) best = cand[n - 1];
  return best;
}

frit_uop *frit_codegen_optimize(frit_ctx *ctx, frit_uop *ast, frit_uop **g0_extent) {
  return frit_codegen_optimize_for(ctx, ast, g0_extent, FRIT_DIALECT_C, NULL);
}

frit_uop *frit_codegen_optimize_for(frit_ctx *ctx, frit_uop *ast, frit_uop **g0_extent, frit_dialect dialect,
                                    frit_uop **before_flatten) {
  return cg_optimize(ctx, ast, g0_extent, dialect, before_flatten, NULL);
}

frit_uop *cg_optimize(frit_ctx *ctx, frit_uop *ast, frit_uop **g0_extent, frit_dialect dialect,
                      frit_uop **before_flatten, const frit_cg_choices *ch) {
  static const frit_cg_choices heuristics;
  if (!ch) ch = &heuristics;
  if (before_flatten) *before_flatten = NULL;
  if (ast && dialect == FRIT_DIALECT_C && ch->collapse >= 0 && !getenv("FRIT_NO_COLLAPSE")) ast = cg_collapse(ctx, ast);
  if (!ast) return NULL;
  size_t n = 0;
  frit_uop **nodes = frit_walk_topo(ast, &n);
  uint32_t *pos = malloc(((size_t)ast->id + 1) * sizeof *pos);
  int64_t *retype = malloc((n + 1) * sizeof *retype);
  frit_uop **map = calloc(n + 1, sizeof *map);
  uint8_t *mark = calloc(n + 1, 1);
  int *users_bad = calloc(n + 1, sizeof *users_bad);
  frit_uop *result = NULL;
  frit_uop *g0 = NULL;
  if (!nodes || !pos || !retype || !map || !mark || !users_bad) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "codegen: out of memory");
    goto done;
  }
  for (size_t k = 0; k < n; k++) pos[nodes[k]->id] = (uint32_t)k, retype[k] = -1;

  /* the g0 candidate: the first range of every END the SINK lists, used by nothing else */
  bool ok = ast->op == FRIT_OP_SINK && ast->nsrc > 0;
  for (uint32_t i = 0; ok && i < ast->nsrc; i++) {
    frit_uop *e = ast->src[i];
    if (e->op != FRIT_OP_END || e->nsrc < 2) ok = false;
    else if (!g0) g0 = e->src[1];
    else if (e->src[1] != g0) ok = false;
  }
  if (ok && g0->arg.i1 != FRIT_AXIS_GLOBAL && g0->arg.i1 != FRIT_AXIS_LOOP) ok = false;
  if (ok && mentions(g0->src[0], mark, pos, is_range_or_mem)) ok = false;
  for (size_t k = 0; ok && k < n; k++) {
    frit_uop *u = nodes[k];
    frit_op op = (frit_op)u->op;
    /* cross-iteration state or ordering: keep the whole range in one call */
    if (op == FRIT_OP_AFTER || op == FRIT_OP_DEFINE_REG || op == FRIT_OP_DEFINE_LOCAL || op == FRIT_OP_ATOMIC ||
        op == FRIT_OP_ATOMIC_CAS || op == FRIT_OP_BARRIER)
      ok = false;
    if (u != ast)
      for (uint32_t i = 0; i < u->nsrc; i++)
        if (u->src[i]->op == FRIT_OP_END) {
          for (uint32_t j = 0; j < ast->nsrc; j++)
            if (ast->src[j] == u->src[i]) ok = false;
        }
    /* every store must write an element that depends on g0, or chunks would race */
    if (op == FRIT_OP_STORE) {
      memset(mark, 0, n + 1);
      frit_uop *ix = u->src[0];
      bool dep = false;
      /* does the index depend on g0? */
      size_t sp = 0;
      frit_uop **stack = malloc((n + 1) * sizeof *stack);
      if (!stack) {
        frit_set_error(ctx, FRIT_ERR_NOMEM, "codegen: out of memory");
        goto done;
      }
      stack[sp++] = ix;
      mark[pos[ix->id]] = 1;
      while (sp && !dep) {
        frit_uop *x = stack[--sp];
        if (x == g0) dep = true;
        /* an address that depends on g0 only through loaded data (a scatter) may collide
         * across chunks: such a dependence does not count */
        if (x->op == FRIT_OP_LOAD) continue;
        for (uint32_t i = 0; i < x->nsrc; i++)
          if (!mark[pos[x->src[i]->id]]) mark[pos[x->src[i]->id]] = 1, stack[sp++] = x->src[i];
      }
      free(stack);
      if (!dep) ok = false;
    }
  }
  memset(mark, 0, n + 1);
  if (!ok) g0 = NULL;
  for (size_t k = 0; k < n; k++) {
    frit_uop *u = nodes[k];
    if (u->op != FRIT_OP_RANGE) continue;
    int64_t t = u->arg.i1;
    if (u == g0) t = FRIT_AXIS_GLOBAL;
    else if (t == FRIT_AXIS_GLOBAL) t = FRIT_AXIS_LOOP;
    if (u != g0 && u->src[0]->op == FRIT_OP_CONST && u->src[0]->arg.value.i <= 8) {
      if (t == FRIT_AXIS_LOOP) t = FRIT_AXIS_UPCAST;
      else if (t == FRIT_AXIS_REDUCE) t = FRIT_AXIS_UNROLL;
    }
    if (t != u->arg.i1) retype[k] = t;
  }
  /* rebuild: retyped ranges, and ENDs whose contiguous store range moves innermost */
  for (size_t k = 0; k < n; k++) {
    frit_uop *u = nodes[k];
    frit_uop *src[64];
    frit_uop **s = u->nsrc <= 64 ? src : malloc(u->nsrc * sizeof *s);
    if (!s) {
      frit_set_error(ctx, FRIT_ERR_NOMEM, "codegen: out of memory");
      goto done;
    }
    for (uint32_t i = 0; i < u->nsrc; i++) s[i] = map[pos[u->src[i]->id]];
    frit_uop *nu;
    if (retype[k] >= 0) {
      frit_arg a = u->arg;
      a.i1 = retype[k];
      nu = frit_uop_new(ctx, FRIT_OP_RANGE, u->dtype, s, (int)u->nsrc, &a);
    } else if (u->op == FRIT_OP_END && u->nsrc > 2 && u->src[0]->op == FRIT_OP_STORE &&
               u->src[0]->src[0]->op == FRIT_OP_INDEX) {
      /* ranges whose ends depend on other ranges (triangular loops) keep their order */
      bool fixed = false;
      memset(mark, 0, n + 1);
      for (uint32_t i = 1; i < u->nsrc && !fixed; i++) fixed = mentions(u->src[i]->src[0], mark, pos, is_range_or_mem);
      frit_uop *unit = fixed ? NULL : unit_term(u->src[0]->src[0]->src[1], u->src + 1, (int)u->nsrc - 1, 0);
      if (!fixed && dialect == FRIT_DIALECT_C) unit = innermost_choice(u, unit);
      if (unit && unit != u->src[u->nsrc - 1] && unit != g0) {
        int w = 1;
        for (uint32_t i = 1; i < u->nsrc; i++)
          if (u->src[i] != unit) s[w++] = map[pos[u->src[i]->id]];
        s[w] = map[pos[unit->id]];
      }
      nu = frit_uop_replace_src(ctx, u, s, (int)u->nsrc);
    } else {
      nu = frit_uop_replace_src(ctx, u, s, (int)u->nsrc);
    }
    if (s != src) free(s);
    if (!nu) goto done;
    map[k] = nu;
  }
  result = map[pos[ast->id]];
  frit_uop *g0n = g0 ? map[pos[g0->id]] : NULL;
  bool host = dialect == FRIT_DIALECT_C;
  if (before_flatten && !host) *before_flatten = result;
  if (!host && result && g0n) result = cg_flatten_parallel(ctx, result, &g0n);
  if (result && host && ch->tile >= 0 && !getenv("FRIT_NO_TILE")) result = cg_tile(ctx, result, &g0n, ch);
  if (result && ch->unroll >= 0 && !getenv("FRIT_NO_UNROLL")) result = cg_unroll(ctx, result, g0n);
  if (result && host && ch->regacc >= 0 && !getenv("FRIT_NO_REGACC")) result = cg_regacc(ctx, result, &g0n);
  if (g0_extent) *g0_extent = g0n ? g0n->src[0] : frit_const_int(ctx, FRIT_I64, 1);
  if (g0n && g0_extent && frit_dtype_kind((*g0_extent)->dtype) != FRIT_I64) *g0_extent = frit_cast(ctx, *g0_extent, FRIT_I64);
  if (g0_extent && !*g0_extent) result = NULL;
done:
  free(nodes);
  free(pos);
  free(retype);
  free(map);
  free(mark);
  free(users_bad);
  return result;
}

/* ---------- the autotuner's choices as text (the tuning cache's form) ---------- */


static const struct {
  const char *name;
  size_t offset;
} choice_field[] = {{"tile", offsetof(frit_cg_choices, tile)},        {"rows", offsetof(frit_cg_choices, tile_rows)},
                    {"vecs", offsetof(frit_cg_choices, tile_vecs)},   {"block", offsetof(frit_cg_choices, tile_block)},
                    {"order", offsetof(frit_cg_choices, tile_order)},
                    {"unroll", offsetof(frit_cg_choices, unroll)},    {"regacc", offsetof(frit_cg_choices, regacc)},
                    {"threads", offsetof(frit_cg_choices, threads)},
                    {"collapse", offsetof(frit_cg_choices, collapse)}};
enum { NCHOICE_FIELDS = sizeof choice_field / sizeof choice_field[0] };

void frit_cg_choices_format(const frit_cg_choices *c, char *buf, size_t cap) {
  size_t w = 0;
  if (cap) buf[0] = 0;
  for (int f = 0; f < NCHOICE_FIELDS; f++) {
    int v = *(const int *)((const char *)c + choice_field[f].offset);
    if (v && w < cap) w += (size_t)snprintf(buf + w, cap - w, "%s%s=%d", w ? " " : "", choice_field[f].name, v);
  }
  if (!w && cap) snprintf(buf, cap, "default");
}

bool frit_cg_choices_parse(const char *s, frit_cg_choices *c) {
  memset(c, 0, sizeof *c);
  while (*s == ' ') s++;
  if (!strncmp(s, "default", 7) && (s[7] == 0 || s[7] == '\n')) return true;
  while (*s && *s != '\n') {
    int f = 0;
    while (f < NCHOICE_FIELDS && !(strncmp(s, choice_field[f].name, strlen(choice_field[f].name)) == 0 &&
                                   s[strlen(choice_field[f].name)] == '='))
      f++;
    if (f == NCHOICE_FIELDS) return false;
    char *end;
    long v = strtol(s + strlen(choice_field[f].name) + 1, &end, 10);
    if (end == s + strlen(choice_field[f].name) + 1 || v < -1 || v > 64 || (*end && *end != ' ' && *end != '\n'))
      return false;
    *(int *)((char *)c + choice_field[f].offset) = (int)v;
    for (s = end; *s == ' '; s++) {}
  }
  return true;
}

