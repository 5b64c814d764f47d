/* Linearises a kernel AST into a C loop nest and renders it: every node is placed in the innermost
 * open loop among the ranges it depends on (loop-invariant code is hoisted), REDUCE becomes an
 * accumulator with its own loops, END and IF become blocks, effects follow their graph edges.
 * Placement follows the reference interpreter's scopes (src/interp/interp_sets.c) so that memory
 * reads and effects run exactly as often, and in the same order, as there. */
#include "codegen/linear.h"
#include "ir/walk.h"

#include <inttypes.h>
#include <stdlib.h>

bool cgl_fail(cg *g, const frit_uop *u, const char *msg) {
  if (!g->failed) {
    char dt[32];
    frit_set_error(g->ctx, FRIT_ERR_INVALID, "codegen: node %" PRIu32 " %s : %s: %s", u->id,
                   frit_op_name((frit_op)u->op), frit_dtype_name(u->dtype, dt, sizeof dt), msg);
  }
  g->failed = true;
  return false;
}

static bool is_effect_op(frit_op op) {
  return op == FRIT_OP_STORE || op == FRIT_OP_ATOMIC || op == FRIT_OP_ATOMIC_CAS || op == FRIT_OP_BARRIER ||
         op == FRIT_OP_END || op == FRIT_OP_IF || op == FRIT_OP_GROUP || op == FRIT_OP_SINK;
}

static bool is_dep(const frit_uop *u, uint32_t i) {
  frit_op op = (frit_op)u->op;
  if (op == FRIT_OP_AFTER) return i >= 1;
  if (op == FRIT_OP_LOAD || op == FRIT_OP_STORE || op == FRIT_OP_ATOMIC || op == FRIT_OP_ATOMIC_CAS)
    return i >= 1 && frit_dtype_kind(u->src[i]->dtype) == FRIT_VOID && !frit_dtype_is_ptr(u->src[i]->dtype);
  return false;
}

/* ---------- analysis: free ranges, dynamic nodes, scopes (as the interpreter) ---------- */

/* The parameter an access goes through, when its pointer is an INDEX straight on one (NULL
 * otherwise: the caller then assumes the worst). */
static const frit_uop *access_param(const frit_uop *u) {
  const frit_uop *ix = u->src[0];
  if (ix->op != FRIT_OP_INDEX || ix->src[0]->op != FRIT_OP_DEFINE_GLOBAL) return NULL;
  return ix->src[0];
}

/* Parameters this kernel writes (bit per parameter index); all ones when some write's target is
 * not a plain parameter. */
static uint64_t written_params(const cg *g) {
  uint64_t w = 0;
  for (size_t k = 0; k < g->n; k++) {
    const frit_uop *u = g->nodes[k];
    if (u->op != FRIT_OP_STORE && u->op != FRIT_OP_ATOMIC && u->op != FRIT_OP_ATOMIC_CAS) continue;
    const frit_uop *p = access_param(u);
    if (!p || p->arg.i0 < 0 || p->arg.i0 >= 64) return ~UINT64_C(0);
    w |= UINT64_C(1) << p->arg.i0;
  }
  return w;
}

/* A read of a constant element of a parameter the kernel never writes (an optimizer's step
 * count, a learning rate, a 0-d tensor broadcast over the kernel) gives the same value wherever it
 * runs, and reading it where the interpreter would not is harmless: the element exists (the
 * buffer's size is known and larger) and nothing stores to it. Placed by its free ranges like a
 * pure value, it and the arithmetic on it leave the loops: Adam's bias corrections (two powf)
 * were computed per element, and their scalar libm calls kept the loop from vectorising. */
static bool invariant_read(const frit_uop *u, uint64_t written) {
  if (u->op != FRIT_OP_LOAD || u->nsrc != 1) return false;
  const frit_uop *ix = u->src[0], *p = access_param(u);
  if (!p || ix->nsrc != 2 || ix->src[1]->op != FRIT_OP_CONST) return false;
  int64_t c = ix->src[1]->arg.value.i;
  if (p->arg.i0 < 0 || p->arg.i0 >= 64 || ((written >> p->arg.i0) & 1)) return false;
  return c >= 0 && p->arg.i1 > c;
}

static bool analyse(cg *g) {
  uint64_t written = written_params(g);
  for (size_t k = 0; k < g->n; k++) {
    frit_uop *u = g->nodes[k];
    g->rix[k] = -1;
    if (u->op == FRIT_OP_RANGE) {
      if (g->nr == 64) return cgl_fail(g, u, "more than 64 ranges in one kernel");
      g->rix[k] = g->nr;
      g->ranges[g->nr++] = u;
    }
    frit_op op = (frit_op)u->op;
    bool d = (op == FRIT_OP_LOAD && !invariant_read(u, written)) || op == FRIT_OP_AFTER || op == FRIT_OP_KERNEL ||
             is_effect_op(op);
    uint64_t f = g->rix[k] >= 0 ? UINT64_C(1) << g->rix[k] : 0;
    uint64_t closed = 0;
    if (op == FRIT_OP_END || op == FRIT_OP_REDUCE)
      for (uint32_t i = 1; i < u->nsrc; i++) {
        int r = g->rix[L(g, u->src[i])];
        if (r < 0) return cgl_fail(g, u, "sources after the first must be RANGEs");
        closed |= UINT64_C(1) << r;
      }
    for (uint32_t i = 0; i < u->nsrc; i++) {
      uint32_t s = L(g, u->src[i]);
      f |= g->free_[s] & ~closed;
      d = d || g->dyn[s];
    }
    g->free_[k] = f;
    g->dyn[k] = d;
  }
  uint64_t *acc = calloc(g->n + 1, sizeof *acc);
  bool *has = calloc(g->n + 1, sizeof *has);
  if (!acc || !has) {
    free(acc);
    free(has);
    frit_set_error(g->ctx, FRIT_ERR_NOMEM, "codegen: out of memory");
    g->failed = true;
    return false;
  }
  for (size_t k = g->n; k-- > 0;) {
    frit_uop *u = g->nodes[k];
    g->scope[k] = g->free_[k] | acc[k];
    uint64_t own = 0;
    if (u->op == FRIT_OP_END || u->op == FRIT_OP_REDUCE)
      for (uint32_t i = 1; i < u->nsrc; i++) own |= UINT64_C(1) << g->rix[L(g, u->src[i])];
    /* a reduction is placed by its free ranges (cgl_place_mode): its body's context is that */
    uint64_t ctx_k = u->op == FRIT_OP_REDUCE ? g->free_[k] : g->scope[k];
    for (uint32_t i = 0; i < u->nsrc; i++) {
      uint32_t s = L(g, u->src[i]);
      uint64_t cx = ctx_k | (i == 0 ? own : 0);
      acc[s] = has[s] ? acc[s] & cx : cx;
      has[s] = true;
    }
  }
  free(acc);
  free(has);
  return true;
}

/* ---------- blocks ---------- */

int cgl_new_block(cg *g, int parent, int rix, bool is_if) {
  if (g->nblocks == g->capblocks) {
    int cap = g->capblocks ? 2 * g->capblocks : 16;
    blk *b = realloc(g->blocks, (size_t)cap * sizeof *b);
    if (!b) {
      frit_set_error(g->ctx, FRIT_ERR_NOMEM, "codegen: out of memory");
      g->failed = true;
      return -1;
    }
    g->blocks = b, g->capblocks = cap;
  }
  blk *b = &g->blocks[g->nblocks];
  memset(b, 0, sizeof *b);
  b->parent = parent, b->rix = rix, b->is_if = is_if, b->alive = true;
  b->copies = 1;
  return g->nblocks++;
}

static int depth_of(const cg *g, int b) {
  int d = 0;
  for (; b >= 0; b = g->blocks[b].parent) d++;
  return d;
}

void cgl_line(cg *g, int b, const char *fmt, ...) {
  char tmp[512];
  va_list ap;
  va_start(ap, fmt);
  int len = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  int d = depth_of(g, b);
  for (int i = 0; i < d; i++) cg_puts(&g->blocks[b].text, "  ");
  if (len >= 0 && (size_t)len < sizeof tmp) {
    cg_puts(&g->blocks[b].text, tmp);
  } else if (len >= 0) {
    char *big = malloc((size_t)len + 1);
    if (!big) {
      g->blocks[b].text.oom = true;
      return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)len + 1, fmt, ap);
    va_end(ap);
    cg_puts(&g->blocks[b].text, big);
    free(big);
  }
  cg_puts(&g->blocks[b].text, "\n");
}

bool cgl_on_chain(const cg *g, int cur, int b) {
  if (b == -2) return true;
  for (int x = cur; x >= 0; x = g->blocks[x].parent)
    if (x == b) return true;
  return false;
}

/* The block a node goes to: the innermost open loop among the ranges of its scope; memory reads
 * and effects never leave an IF block (the branch may guard their addresses). */
static int place(cg *g, frit_uop *u, int cur) { return cgl_place_mode(g, u, cur, false); }
int cgl_place_mode(cg *g, frit_uop *u, int cur, bool quiet) {
  uint32_t k = L(g, u);
  /* a reduction guards its own loads with its own loops, so it leaves the loops it does not use
   * (a softmax's row max and sum, computed once a row, not once an element) */
  uint64_t mask = g->dyn[k] && u->op != FRIT_OP_REDUCE ? g->scope[k] : g->free_[k];
  uint64_t seen = 0;
  int at = -1;
  for (int b = cur; b >= 0; b = g->blocks[b].parent) {
    blk *B = &g->blocks[b];
    if (B->rix >= 0) seen |= UINT64_C(1) << B->rix;
    if (at < 0 && ((B->rix >= 0 && ((mask >> B->rix) & 1)) || (B->is_if && g->dyn[k]))) at = b;
  }
  if (mask & ~seen) {
    if (quiet) return -3;
    cgl_fail(g, u, "uses a RANGE outside that range's loop");
    return -3;
  }
  return at < 0 ? 0 : at;
}

/* The vector length of a simd loop over a short static row whose remainder would take gcc two
 * or more smaller pieces (7: 4+2+1 lanes, 14: 8+4+2): the largest power of two up to the row's
 * length and 16; 0 where the loop must run each iteration once (an accumulator: a reduction
 * clause or a register array's row, read, updated and stored back; a donated input written in
 * place, whose element a repeated lane would read already updated; a child loop; the thread
 * axis). */
static int64_t overlap_tail(const cg *g, const blk *B) {
  frit_uop *r = g->ranges[B->rix];
  if (g->dialect != FRIT_DIALECT_C || r == g->g0 || g->group || B->has_child_loop || B->red.s || B->red_bad || B->locals || B->lanes || g->alias_mask ||
      r->src[0]->op != FRIT_OP_CONST || getenv("FRIT_NO_OVERLAP_TAIL"))
    return 0;
  int64_t e = r->src[0]->arg.value.i, v = 16;
  while (v > e) v /= 2;
  return v >= 4 && __builtin_popcountll((unsigned long long)(e % v)) >= 2 ? v : 0;
}

/* Closes block b into its parent, choosing the loop's pragma. */
void cgl_close_block(cg *g, int b) {
  blk *B = &g->blocks[b];
  int p = B->parent;
  blk *P = &g->blocks[p];
  if (B->rix >= 0 && cgl_unrolled_in_text(g, B, P)) return;
  if (B->rix >= 0) {
    P->has_child_loop = true;
    /* a loop whose child loops are plain reductions (no stores, no pragma of their own) is
     * vectorised outside-in: each lane runs the inner loops with its own accumulators (the
     * register tile of a matmul: k inside a vector of output columns) */
    bool simd = !B->child_bad && !B->unsafe && !B->red_bad && !B->strided &&
                !(B->loaded_params & B->stored_params);
    if (B->has_store && B->nstores_ok == 0) simd = false;
    if (B->once) simd = false; /* no loop to vectorise */
    if (B->tile_gather && !B->has_child_loop) simd = false;
    frit_uop *r = g->ranges[B->rix];
    if (B->has_child_loop && !(r->src[0]->op == FRIT_OP_CONST && r->src[0]->arg.value.i >= 8)) simd = false;
    frit_uop *end = r->src[0];
    bool small = end->op == FRIT_OP_CONST && end->arg.value.i <= 8;
    B->simd_done = simd;
    /* not in a reduction's loop: gcc keeps an `omp simd` accumulator in memory across a call,
     * a store-to-load chain each vector that cost a sum of exps 16%; nor in a loop of fewer than
     * 16 iterations (a 14-wide row's two 8-lane pieces, a row of 7), whose narrower vectors have
     * no clone to call: gcc called the scalar function per lane there, 8x slower than the inline
     * form it vectorises (a CNN step's GELU derivative over 14 x 14 maps: 2.6 ms against 0.31) */
    bool short_row = end->op == FRIT_OP_CONST && end->arg.value.i < 16;
    if (simd && g->dialect == FRIT_DIALECT_C && !B->has_child_loop && !B->red.s && !B->lanes && !short_row)
      cg_use_vector_math(B->text.s);
    bool host = g->dialect == FRIT_DIALECT_C; /* device compilers vectorise across work-items instead */
    /* a GPU thread's g0 loop unrolled: several loads in flight a thread (FRIT_DEVICE_UNROLL) */
    const char *du = g->dialect == FRIT_DIALECT_CUDA && r == g->g0 && !g->group ? getenv("FRIT_DEVICE_UNROLL") : NULL;
    if (du && atoi(du) > 1) cgl_line(g, p, "#pragma unroll %d", atoi(du));
    if (B->lanes) { /* the runs' loop around the vector loop (its rest: below) */
      const char *T = cg_ctype(frit_dtype_kind(r->dtype)), *E = B->lane_end.s ? B->lane_end.s : "0";
      uint32_t id = L(g, r);
      cgl_line(g, p, "%s r%" PRIu32 "_o = r%" PRIu32 "_b;", T, id, id);
      cgl_line(g, p, "for (; r%" PRIu32 "_o + %d <= %s; r%" PRIu32 "_o += %d) {", id, B->lanes, E, id, B->lanes);
    }
    if (simd && B->has_child_loop && host) cgl_line(g, p, "#pragma omp simd");
    else if (simd && host) cgl_line(g, p, "#pragma omp simd%s", B->red.s ? B->red.s : "");
    /* not around a simd loop: gcc 12 unrolls first and then vectorises neither copy (a dot
     * product's 784-long reduction under a 2-iteration loop ran scalar, 4x slower) */
    else if (host && B->has_child_loop && small && !B->child_simd &&
             (r->arg.i1 == FRIT_AXIS_UPCAST || r->arg.i1 == FRIT_AXIS_UNROLL) &&
             end->arg.value.i > 1 && end->arg.value.i * B->copies <= MAX_UNROLL_COPIES) {
      cgl_line(g, p, "#pragma GCC unroll %d", (int)end->arg.value.i);
      B->copies *= end->arg.value.i;
    }
  }
  if (B->blocking) { /* a loop of loops: the parent is no vector loop */
    P->has_child_loop = true;
    P->child_bad = true;
    P->loaded_params |= B->loaded_params;
    P->stored_params |= B->stored_params;
  }
  int64_t tail = B->rix >= 0 && B->simd_done ? overlap_tail(g, B) : 0;
  bool body = true; /* the text once more, after the loop headers below */
  if (tail) {
    /* a short row in two whole vectors that overlap, not gcc's 4+2+1-lane pieces: the loop is
     * idempotent (stride-1 stores, nothing it stores is read, no accumulator), so the lanes the
     * second vector repeats store the same values again (a pool's 7-wide rows, a 14-wide copy) */
    frit_uop *r = g->ranges[B->rix];
    const char *T = cg_ctype(frit_dtype_kind(r->dtype));
    uint32_t id = L(g, r);
    int64_t e = r->src[0]->arg.value.i;
    cgl_line(g, p, "for (%s r%" PRIu32 " = 0; r%" PRIu32 " < %" PRId64 "; r%" PRIu32 "++) {", T, id, id, e - e % tail, id);
    if (B->text.s) cg_puts(&P->text, B->text.s);
    cgl_line(g, p, "}");
    cgl_line(g, p, "#pragma omp simd");
    cgl_line(g, p, "for (%s r%" PRIu32 " = %" PRId64 "; r%" PRIu32 " < %" PRId64 "; r%" PRIu32 "++) {", T, id, e - tail, id, e, id);
  } else if (B->lanes) {
    /* whole runs of lanes (the vector loop above), then the block's rest (below) */
    frit_uop *r = g->ranges[B->rix];
    const char *T = cg_ctype(frit_dtype_kind(r->dtype)), *E = B->lane_end.s ? B->lane_end.s : "0";
    uint32_t id = L(g, r);
    /* a run of several vectors: one vector loop each, over its own lanes, so that every loop
     * is one vector iteration and gcc keeps the lanes in registers (as one loop over them all,
     * not unrolled under the frit flags, it kept them in memory) */
    int per = B->lane_vec > 0 ? B->lane_vec : B->lanes;
    for (int c = 0; c < B->lanes / per; c++) {
      if (c > 0 && B->simd_done) cgl_line(g, p, "#pragma omp simd");
      cgl_line(g, p, "for (%s r%" PRIu32 " = r%" PRIu32 "_o + %d; r%" PRIu32 " < r%" PRIu32 "_o + %d; r%" PRIu32 "++) {", T, id,
               id, c * per, id, id, (c + 1) * per, id);
      if (B->text.s) cg_puts(&P->text, B->text.s);
      cgl_line(g, p, "}");
    }
    cgl_line(g, p, "}");
    /* the rest, where the extent may leave one (a copy of the body), added in order into lane 0
     * (r_o steps with r): a sum shorter than the lanes is then the plain loop's, as before the
     * lane form (a tree of 6 terms had rounded a cancelling sum to -7.6e-6 where numpy's row by
     * row gives 0: numpy fuzzer seed 12101090) */
    int64_t n = cg_const_extent(r);
    /* a run of several vectors: then whole single vectors of the rest, into lanes [0, per), so
     * that a row shorter than a run (17-63 terms of 64 lanes) still takes vectors */
    if (per < B->lanes && !(n > 0 && n % B->lanes == 0)) {
      cgl_line(g, p, "for (; r%" PRIu32 "_o + %d <= %s; r%" PRIu32 "_o += %d) {", id, per, E, id, per);
      if (B->simd_done) cgl_line(g, p, "#pragma omp simd");
      cgl_line(g, p, "for (%s r%" PRIu32 " = r%" PRIu32 "_o; r%" PRIu32 " < r%" PRIu32 "_o + %d; r%" PRIu32 "++) {", T, id,
               id, id, id, per, id);
      if (B->text.s) cg_puts(&P->text, B->text.s);
      cgl_line(g, p, "}");
      cgl_line(g, p, "}");
    }
    body = !(n > 0 && n % per == 0);
    if (body)
      cgl_line(g, p, "for (%s r%" PRIu32 " = r%" PRIu32 "_o; r%" PRIu32 " < %s; r%" PRIu32 "++, r%" PRIu32 "_o++) {", T, id,
               id, id, E, id, id);
  } else {
    if (B->header.s) cgl_line(g, p, "%s {", B->header.s);
    else cgl_line(g, p, "{");
  }
  if (body && B->text.s) cg_puts(&P->text, B->text.s);
  if (body) cgl_line(g, p, "}");
  if (B->lane_end.oom) P->text.oom = true;
  if (B->text.oom || B->header.oom) P->text.oom = true;
  /* child properties that stop the parent loop from being vectorised */
  if (B->is_if) P->unsafe = true;
  if (B->copies > P->copies) P->copies = B->copies;
  if (B->rix >= 0) {
    P->loaded_params |= B->loaded_params;
    P->stored_params |= B->stored_params;
    if (B->has_store || B->unsafe || B->child_bad || B->simd_done) P->child_bad = true;
    if (B->simd_done || B->child_simd) P->child_simd = true;
  }
  cgl_retire_block(B);
}

void cgl_retire_block(blk *B) {
  cg_free(&B->text);
  cg_free(&B->lane_end);
  cg_free(&B->header);
  cg_free(&B->red);
  B->alive = false;
}

/* ---------- emission ---------- */

char *cgl_strdup(cg *g, const char *s) {
  char *d = malloc(strlen(s) + 1);
  if (!d) {
    frit_set_error(g->ctx, FRIT_ERR_NOMEM, "codegen: out of memory");
    g->failed = true;
    return NULL;
  }
  strcpy(d, s);
  return d;
}

const char *cgl_set_name(cg *g, frit_uop *u, int b, const char *name) {
  nstate *s = &g->st[L(g, u)];
  free(s->name);
  s->name = cgl_strdup(g, name);
  s->blk = b;
  return s->name;
}

/* Is node x's value fixed in the innermost loop around block b (placed above that loop, or
 * valid everywhere)? */
static bool outside_loop(const cg *g, const frit_uop *x, int b) {
  int lb = b;
  while (lb >= 0 && g->blocks[lb].rix < 0) lb = g->blocks[lb].parent;
  if (lb < 0) return false;
  const nstate *s = &g->st[L(g, x)];
  if (!s->name) return false;
  if (s->blk == -2) return true;
  for (int p = g->blocks[lb].parent; p >= 0; p = g->blocks[p].parent)
    if (p == s->blk) return true;
  return false;
}

/* Declares "T v<id> = expr;" in block b and names the node after it. */
static const char *bind_value(cg *g, frit_uop *u, int b, cg_str *expr) {
  if (expr->oom) return cgl_fail(g, u, "out of memory"), NULL;
  char name[32];
  snprintf(name, sizeof name, "v%" PRIu32, L(g, u));
  cgl_line(g, b, "%s %s = %s;", cg_ctype(frit_dtype_kind(u->dtype)), name, expr->s ? expr->s : "0");
  cg_free(expr);
  return cgl_set_name(g, u, b, name);
}

/* Opens the loop of range r as a child of block parent; returns the new block. */
int cgl_open_loop(cg *g, frit_uop *r, int parent) {
  int ri = g->rix[L(g, r)];
  for (int b = parent; b >= 0; b = g->blocks[b].parent)
    if (g->blocks[b].rix == ri) return cgl_fail(g, r, "RANGE opened inside its own loop"), -1;
  const char *end = cgl_emit(g, r->src[0], parent);
  if (!end) return -1;
  int b = cgl_new_block(g, parent, ri, false);
  if (b < 0) return -1;
  const char *T = cg_ctype(frit_dtype_kind(r->dtype));
  uint32_t id = L(g, r);
  if (r == g->g0) {
    cg_printf(&g->blocks[b].header, "for (%s r%" PRIu32 " = (%s)g0_begin; r%" PRIu32 " < (%s)g0_end; r%" PRIu32 "%s)",
              T, id, T, id, T, id, cg_g0_next(g->dialect));
    if (g->group) g->group_top = b;
  } else if (g->group && parent == g->group_top)
    /* a loop of the group's point: its iterations are split across the group's threads */
    cg_printf(&g->blocks[b].header, "for (%s r%" PRIu32 " = (%s)frit_lid; r%" PRIu32 " < %s; r%" PRIu32 " += (%s)frit_lsz)",
              T, id, T, id, end, id, T);
  else if (r->src[0]->op == FRIT_OP_CONST && r->src[0]->arg.value.i == 1) {
    g->blocks[b].once = true;
    cgl_line(g, b, "const %s r%" PRIu32 " = 0; (void)r%" PRIu32 ";", T, id, id);
  } else
    cg_printf(&g->blocks[b].header, "for (%s r%" PRIu32 " = 0; r%" PRIu32 " < %s; r%" PRIu32 "++)", T, id, id, end, id);
  return b;
}

/* A pointer operand resolved to base[offset] with an optional gate; AFTER's effects are emitted. */
typedef struct ptrx {
  frit_uop *base;
  cg_str off, gate;
} ptrx;

static bool resolve_ptr(cg *g, frit_uop *p, int cur, ptrx *x) {
  if (p->op == FRIT_OP_DEFINE_GLOBAL || p->op == FRIT_OP_DEFINE_REG || p->op == FRIT_OP_DEFINE_LOCAL) {
    x->base = p;
    return true;
  }
  if (p->op == FRIT_OP_AFTER) {
    for (uint32_t i = 1; i < p->nsrc; i++)
      if (!cgl_emit(g, p->src[i], cur)) return false;
    return resolve_ptr(g, p->src[0], cur, x);
  }
  if (p->op != FRIT_OP_INDEX)
    return cgl_fail(g, p, "unsupported pointer source (expected DEFINE_GLOBAL/REG/LOCAL, INDEX or AFTER)");
  if (!resolve_ptr(g, p->src[0], cur, x)) return false;
  if (frit_dtype_lanes(p->src[1]->dtype) != 1) return cgl_fail(g, p, "vector indices are not supported");
  const char *ix = cgl_emit(g, p->src[1], cur);
  if (!ix) return false;
  if (x->off.n) {
    cg_str t = {0};
    cg_printf(&t, "(int64_t)(%s + (int64_t)%s)", x->off.s, ix);
    cg_free(&x->off);
    x->off = t;
  } else {
    cg_printf(&x->off, "%s", ix);
  }
  if (p->nsrc > 2) {
    const char *gt = cgl_emit(g, p->src[2], cur);
    if (!gt) return false;
    if (x->gate.n) cg_printf(&x->gate, " & %s", gt);
    else cg_printf(&x->gate, "%s", gt);
  }
  return true;
}

static void ptr_free(ptrx *x) {
  cg_free(&x->off);
  cg_free(&x->gate);
}

/* Names use the node's position in the kernel, not its id, so that the same kernel built in any
 * ctx renders to the same text (and hits the same cache entry). */
const char *cgl_base_name(const cg *g, frit_uop *b, char *buf, size_t n) {
  snprintf(buf, n, "%s%" PRIu32, b->op == FRIT_OP_DEFINE_GLOBAL ? "g" : "m", L(g, b));
  return buf;
}

/* Is the index stride 1 in the range with bit rbit: r itself, or r plus terms free of r? Then a
 * vector loop over r touches consecutive elements (distinct ones, for stores). */
bool cgl_stride1(const cg *g, frit_uop *ix, int rbit, int depth) {
  if (ix->op == FRIT_OP_RANGE && g->rix[L(g, ix)] == rbit) return true;
  if (ix->op != FRIT_OP_ADD || depth > 16) return false;
  for (int i = 0; i < 2; i++)
    if (!((g->free_[L(g, ix->src[1 - i])] >> rbit) & 1) && cgl_stride1(g, ix->src[i], rbit, depth + 1)) return true;
  return false;
}

/* The constant coefficient of range rbit in an index that is affine in it, or INT64_MIN. */
enum { COEF_MAX = 1 << 24 };
static int64_t coef(const cg *g, frit_uop *ix, int rbit, int depth) {
  if (!((g->free_[L(g, ix)] >> rbit) & 1)) return 0;
  if (ix->op == FRIT_OP_RANGE) return 1; /* the free set says it is this range */
  if (depth > 16) return INT64_MIN;
  if (ix->op == FRIT_OP_ADD || ix->op == FRIT_OP_SUB) {
    int64_t a = coef(g, ix->src[0], rbit, depth + 1), b = coef(g, ix->src[1], rbit, depth + 1);
    if (a == INT64_MIN || b == INT64_MIN || a > COEF_MAX || a < -COEF_MAX || b > COEF_MAX || b < -COEF_MAX) return INT64_MIN;
    return ix->op == FRIT_OP_ADD ? a + b : a - b;
  }
  if (ix->op == FRIT_OP_MUL)
    for (int i = 0; i < 2; i++) {
      frit_uop *c = ix->src[1 - i];
      if (c->op == FRIT_OP_CONST && c->arg.value.i >= -COEF_MAX && c->arg.value.i <= COEF_MAX) {
        int64_t a = coef(g, ix->src[i], rbit, depth + 1);
        return a == INT64_MIN || a > COEF_MAX || a < -COEF_MAX ? INT64_MIN : a * c->arg.value.i;
      }
    }
  return INT64_MIN;
}

/* The constant stride of ix along the loop of block B when it is neither 1 nor 0 (distinct
 * elements for distinct iterations), else 0. */
static int64_t constant_stride(const cg *g, const blk *B, frit_uop *ix) {
  if (B->rix < 0 || cgl_stride1(g, ix, B->rix, 0)) return 0;
  int64_t c = coef(g, ix, B->rix, 0);
  return c == INT64_MIN ? 0 : c;
}

/* Does the index clamp with a MIN (a register tile's columns past N: opt_tile.c pad_cols)?
 * Asked only of indexes that are not stride 1 in the loop (a clamped gather row is). */
static bool clamped_index(const frit_uop *ix, int depth) {
  if (ix->op == FRIT_OP_MIN) return true;
  if ((ix->op != FRIT_OP_ADD && ix->op != FRIT_OP_MUL) || depth > 8) return false;
  return clamped_index(ix->src[0], depth + 1) || clamped_index(ix->src[1], depth + 1);
}

/* Records in the loop block how a memory access uses the loop's range: accesses that depend on
 * it other than with stride 1 would make a forced (omp simd) vector loop gather or scatter. */
static void note_access(cg *g, int b, frit_uop *index_node) {
  frit_uop *ix = index_node->op == FRIT_OP_INDEX ? index_node->src[1] : index_node;
  /* every enclosing loop, for outer-loop vectorisation */
  for (int own = b; b >= 0; b = g->blocks[b].parent) {
    blk *B = &g->blocks[b];
    if (B->rix < 0) continue;
    if (!((g->free_[L(g, index_node)] >> B->rix) & 1)) continue; /* invariant in this loop */
    /* in the loop's own body (a register tile's epilogue after its reductions, a permuted
     * reduction's store or a strided residual): judged when the block closes */
    int64_t own_stride = b == own && index_node->op == FRIT_OP_INDEX ? constant_stride(g, B, ix) : 0;
    if (own_stride) {
      if (!(own_stride >= 2 && own_stride <= 4)) B->tile_gather = true;
      continue;
    }
    /* a tile's columns clamped at N - 1 (opt_tile.c pad_cols): a gather or scatter once a
     * tile, after the reductions, where the loop has child loops */
    if (b == own && index_node->op == FRIT_OP_INDEX && !cgl_stride1(g, ix, B->rix, 0) && clamped_index(ix, 0)) {
      B->tile_gather = true;
      continue;
    }
    if (!cgl_stride1(g, ix, B->rix, 0)) {
      /* a small constant stride (the coordinates of an (n, 3) array) is an interleaved group
       * that GCC loads with a few vector loads and shuffles, not a gather */
      int64_t c = coef(g, ix, B->rix, 0);
      if (!(c >= 2 && c <= 4) || index_node->op != FRIT_OP_INDEX) B->strided = true;
    }
  }
}

static bool emit_memory(cg *g, frit_uop *u, int b) {
  nstate *s = &g->st[L(g, u)];
  blk *B;
  for (uint32_t i = 1; i < u->nsrc; i++)
    if (is_dep(u, i) && !cgl_emit(g, u->src[i], b)) return false;
  ptrx x = {0};
  if (!resolve_ptr(g, u->src[0], b, &x)) return ptr_free(&x), false;
  char bn[32];
  cgl_base_name(g, x.base, bn, sizeof bn);
  const char *off = x.off.s ? x.off.s : "0";
  frit_scalar_kind k = frit_dtype_kind(u->op == FRIT_OP_LOAD ? u->dtype : u->src[1]->dtype);
  if (frit_dtype_lanes(u->op == FRIT_OP_LOAD ? u->dtype : u->src[1]->dtype) != 1)
    return ptr_free(&x), cgl_fail(g, u, "vector loads/stores are not supported yet");
  if (frit_dtype_kind(x.base->dtype) != k) return ptr_free(&x), cgl_fail(g, u, "element dtype differs from the buffer's");
  int p = x.base->op == FRIT_OP_DEFINE_GLOBAL ? (int)x.base->arg.i0 : -1;
  B = &g->blocks[b];
  if (x.base->op != FRIT_OP_DEFINE_GLOBAL) B->locals = true;
  /* register arrays are safe in a vector loop only when each lane owns its element */
  if (x.base->op != FRIT_OP_DEFINE_GLOBAL &&
      !(B->rix >= 0 && u->src[0]->op == FRIT_OP_INDEX && u->src[0]->src[1] == g->ranges[B->rix]))
    B->unsafe = true;
  cg_str e = {0};
  bool ok = true;
  cg_str mref = {0};
  cg_printf(&mref, "%s[%s]", bn, off);
  note_access(g, b, u->src[0]);
  B = &g->blocks[b];
  if (u->op == FRIT_OP_LOAD) {
    if (p >= 0 && p < 64) B->loaded_params |= UINT64_C(1) << p;
    const char *alt = NULL;
    if (u->nsrc > 1 && !is_dep(u, 1)) {
      alt = cgl_emit(g, u->src[1], b);
      if (!alt) ok = false;
    }
    if (ok) {
      if (x.gate.n) {
        cg_printf(&e, "(%s ? ", x.gate.s);
        cg_render_load_conv(&e, k, mref.s);
        cg_printf(&e, " : %s)", alt ? alt : "0");
      } else {
        cg_render_load_conv(&e, k, mref.s);
      }
      ok = bind_value(g, u, b, &e) != NULL;
    }
  } else if (u->op == FRIT_OP_STORE) {
    const char *v = cgl_emit(g, u->src[1], b);
    B = &g->blocks[b];
    if (!v) ok = false;
    else {
      B->has_store = true;
      if (p >= 0 && p < 64) B->stored_params |= UINT64_C(1) << p;
      if (B->rix >= 0) {
        frit_uop *six = u->src[0]->op == FRIT_OP_INDEX ? u->src[0]->src[1] : u->src[0];
        if (cgl_stride1(g, six, B->rix, 0)) B->nstores_ok++;
        else if (constant_stride(g, B, six) || clamped_index(six, 0)) B->nstores_ok++, B->tile_gather = true;
        else B->unsafe = true;
      }
      cg_render_store_conv(&e, k, v);
      if (x.gate.n) cgl_line(g, b, "if (%s) %s = %s;", x.gate.s, mref.s, e.s);
      else cgl_line(g, b, "%s = %s;", mref.s, e.s);
      cg_free(&e);
      s->done = true;
    }
  } else { /* ATOMIC / ATOMIC_CAS: read-modify-write; kernels run one chunk per thread, so a
              plain update is enough as long as chunks do not share addresses */
    B->unsafe = true;
    const char *v = cgl_emit(g, u->src[1], b);
    const char *v2 = u->op == FRIT_OP_ATOMIC_CAS ? cgl_emit(g, u->src[2], b) : "";
    if (!v || !v2) ok = false;
    else {
      char oldn[32];
      snprintf(oldn, sizeof oldn, "v%" PRIu32, L(g, u));
      cg_str cur = {0}, nv = {0}, st = {0};
      cg_render_load_conv(&cur, k, mref.s);
      cgl_line(g, b, "%s %s = 0;", cg_ctype(k), oldn);
      if (u->op == FRIT_OP_ATOMIC) {
        static const frit_op aop[FRIT_ATOMIC_COUNT_] = {
            [FRIT_ATOMIC_ADD] = FRIT_OP_ADD, [FRIT_ATOMIC_MIN] = FRIT_OP_MIN, [FRIT_ATOMIC_MAX] = FRIT_OP_MAX,
            [FRIT_ATOMIC_AND] = FRIT_OP_AND, [FRIT_ATOMIC_OR] = FRIT_OP_OR,   [FRIT_ATOMIC_XOR] = FRIT_OP_XOR,
            [FRIT_ATOMIC_XCHG] = FRIT_OP_CONST};
        if (u->arg.i0 < 0 || u->arg.i0 >= FRIT_ATOMIC_COUNT_) ok = cgl_fail(g, u, "bad atomic op");
        else if (aop[u->arg.i0] == FRIT_OP_CONST) cg_puts(&nv, v);
        else {
          const char *ab[2] = {oldn, v};
          ok = cg_render_alu(g->ctx, &nv, aop[u->arg.i0], k, ab, 2);
          if (!ok) g->failed = true;
        }
      } else {
        cg_str ob = {0}, eb = {0};
        /* compare bit patterns, as the interpreter does */
        cg_render_bitcast(g->ctx, &ob, k, cg_kind_bits(k) > 32 ? FRIT_U64 : cg_kind_bits(k) > 16 ? FRIT_U32 :
                                      cg_kind_bits(k) > 8 ? FRIT_U16 : FRIT_U8, oldn);
        cg_render_bitcast(g->ctx, &eb, k, cg_kind_bits(k) > 32 ? FRIT_U64 : cg_kind_bits(k) > 16 ? FRIT_U32 :
                                      cg_kind_bits(k) > 8 ? FRIT_U16 : FRIT_U8, v);
        if (g->dialect == FRIT_DIALECT_C)
          cg_printf(&nv, "(memcmp(&(%s){%s}, &(%s){%s}, sizeof(%s)) == 0 ? %s : %s)", cg_ctype(k), oldn,
                    cg_ctype(k), v, cg_ctype(k), v2, oldn);
        else
          cg_printf(&nv, "(%s == %s ? %s : %s)", ob.s ? ob.s : "0", eb.s ? eb.s : "0", v2, oldn);
        cg_free(&ob);
        cg_free(&eb);
      }
      if (ok) {
        cg_render_store_conv(&st, k, nv.s ? nv.s : "0");
        cgl_line(g, b, "if (%s) { %s = %s; %s = %s; }", x.gate.n ? x.gate.s : "1", oldn, cur.s, mref.s, st.s);
        cgl_set_name(g, u, b, oldn);
        s = &g->st[L(g, u)];
        s->done = true;
      }
      cg_free(&cur);
      cg_free(&nv);
      cg_free(&st);
    }
  }
  cg_free(&mref);
  ptr_free(&x);
  return ok && !g->failed;
}


static const char *emit_if(cg *g, frit_uop *u, int b) {
  const char *c = cgl_emit(g, u->src[0], b);
  if (!c) return NULL;
  if (frit_dtype_lanes(u->src[0]->dtype) != 1) return cgl_fail(g, u, "condition must be a scalar"), NULL;
  for (uint32_t i = 1; i < u->nsrc; i++) {
    int ib = cgl_new_block(g, b, -1, true);
    if (ib < 0) return NULL;
    if (i == 1) cg_printf(&g->blocks[ib].header, "if (%s)", c);
    else cg_puts(&g->blocks[ib].header, "else");
    if (!cgl_emit(g, u->src[i], ib)) return NULL;
    cgl_close_block(g, ib);
  }
  g->st[L(g, u)].done = true;
  return "";
}

static const char *emit_rec(cg *g, frit_uop *u, int cur);

/* Past this recursion depth, chains of pure values are emitted bottom-up from an explicit
 * stack, so that a graph a million operations deep does not overflow the C stack. */
#define EMIT_MAX_DEPTH 256

static bool pure_value(const frit_uop *u) {
  return (frit_op_flags((frit_op)u->op) & FRIT_F_ALU) || u->op == FRIT_OP_CAST || u->op == FRIT_OP_BITCAST;
}

static bool available(const cg *g, const frit_uop *u, int cur) {
  const nstate *s = &g->st[L(g, u)];
  return s->done || (s->name && g->blocks[s->blk < 0 ? 0 : s->blk].alive && cgl_on_chain(g, cur, s->blk));
}

/* Emits the pure values below u (not u) in post-order, each for use in block cur: a pure node
 * lands where its ranges put it, the same block from cur as from the user's own block. Each
 * call then finds its pure sources already named and recurses one level only. */
static bool pre_emit(cg *g, frit_uop *u, int cur) {
  if (!g->stamp && !(g->stamp = calloc(g->n + 1, sizeof *g->stamp)))
    return cgl_fail(g, u, "out of memory"), false;
  uint32_t gen = ++g->gen;
  typedef struct item { frit_uop *u; uint32_t next; } item;
  size_t n = 0, cap = 256;
  item *st = malloc(cap * sizeof *st);
  if (!st) return cgl_fail(g, u, "out of memory"), false;
  st[n++] = (item){u, 0};
  g->stamp[L(g, u)] = gen;
  bool ok = true;
  while (n && ok && !g->failed) {
    item *it = &st[n - 1];
    if (it->next < it->u->nsrc) {
      frit_uop *v = it->u->src[it->next++];
      if (!pure_value(v) || g->stamp[L(g, v)] == gen || available(g, v, cur)) continue;
      g->stamp[L(g, v)] = gen;
      if (n == cap) {
        item *ns = realloc(st, (cap *= 2) * sizeof *st);
        if (!ns) {
          ok = cgl_fail(g, v, "out of memory");
          break;
        }
        st = ns;
      }
      st[n++] = (item){v, 0};
      continue;
    }
    frit_uop *done = st[--n].u;
    if (done != u && !emit_rec(g, done, cur)) ok = false;
  }
  free(st);
  return ok && !g->failed;
}

const char *cgl_emit(cg *g, frit_uop *u, int cur) {
  if (g->failed) return NULL;
  if (g->depth > EMIT_MAX_DEPTH && pure_value(u) && !available(g, u, cur) && !pre_emit(g, u, cur)) return NULL;
  g->depth++;
  const char *r = emit_rec(g, u, cur);
  g->depth--;
  return r;
}

static const char *emit_rec(cg *g, frit_uop *u, int cur) {
  if (g->failed) return NULL;
  uint32_t k = L(g, u);
  nstate *s = &g->st[k];
  if (s->done) return s->name ? s->name : "";
  if (s->name && g->blocks[s->blk < 0 ? 0 : s->blk].alive && cgl_on_chain(g, cur, s->blk)) return s->name;
  frit_op op = (frit_op)u->op;
  frit_scalar_kind kd = frit_dtype_kind(u->dtype);
  if (!frit_dtype_is_ptr(u->dtype) && kd != FRIT_VOID && frit_dtype_lanes(u->dtype) != 1)
    return cgl_fail(g, u, "vector dtypes are not supported by the C backend yet"), NULL;
  switch (op) {
  case FRIT_OP_CONST: {
    cg_str e = {0};
    if (!cg_render_const(g->ctx, &e, kd, u->arg.value)) return g->failed = true, NULL;
    const char *r = cgl_set_name(g, u, -2, e.s);
    cg_free(&e);
    return r;
  }
  case FRIT_OP_DEFINE_VAR: {
    for (int i = 0; i < g->nvars; i++) {
      frit_uop *v = g->vars[i];
      if (v == u || (v && v->arg.blob && u->arg.blob && strcmp(v->arg.blob, u->arg.blob) == 0)) {
        char nm[32];
        snprintf(nm, sizeof nm, "var%d", i);
        return cgl_set_name(g, u, -2, nm);
      }
    }
    return cgl_fail(g, u, "DEFINE_VAR not in the program's variable list"), NULL;
  }
  case FRIT_OP_RANGE: {
    int ri = g->rix[k];
    for (int b = cur; b >= 0; b = g->blocks[b].parent)
      if (g->blocks[b].rix == ri) {
        char nm[32];
        snprintf(nm, sizeof nm, "r%" PRIu32, k);
        return cgl_set_name(g, u, b, nm);
      }
    return cgl_fail(g, u, "RANGE used outside its loop (no END or REDUCE of it encloses the use)"), NULL;
  }
  case FRIT_OP_BIND: {
    const char *v = cgl_emit(g, u->src[1], cur);
    return v;
  }
  case FRIT_OP_SINK: case FRIT_OP_GROUP: case FRIT_OP_BARRIER: {
    int b = place(g, u, cur);
    if (b < -1) return NULL;
    for (uint32_t i = 0; i < u->nsrc; i++)
      if (!cgl_emit(g, u->src[i], b)) return NULL;
    g->st[k].done = true;
    return "";
  }
  case FRIT_OP_AFTER: {
    int b = place(g, u, cur);
    if (b < -1) return NULL;
    for (uint32_t i = 1; i < u->nsrc; i++)
      if (!cgl_emit(g, u->src[i], b)) return NULL;
    return "";
  }
  case FRIT_OP_END: case FRIT_OP_REDUCE: case FRIT_OP_IF: {
    int b = place(g, u, cur);
    if (b < -1) return NULL;
    return op == FRIT_OP_IF ? emit_if(g, u, b) : cgl_emit_loops(g, u, b);
  }
  case FRIT_OP_LOAD: case FRIT_OP_STORE: case FRIT_OP_ATOMIC: case FRIT_OP_ATOMIC_CAS: {
    int b = place(g, u, cur);
    if (b < -1) return NULL;
    if (!emit_memory(g, u, b)) return NULL;
    s = &g->st[k];
    return s->name ? s->name : "";
  }
  case FRIT_OP_CAST: case FRIT_OP_BITCAST: {
    int b = place(g, u, cur);
    if (b < -1) return NULL;
    const char *a = cgl_emit(g, u->src[0], b);
    if (!a) return NULL;
    if (frit_dtype_is_ptr(u->dtype)) return cgl_fail(g, u, "pointer casts are not supported"), NULL;
    cg_str e = {0};
    frit_scalar_kind kf = frit_dtype_kind(u->src[0]->dtype);
    bool ok = op == FRIT_OP_CAST ? cg_render_cast(g->ctx, &e, kf, kd, a) : cg_render_bitcast(g->ctx, &e, kf, kd, a);
    if (!ok) return cg_free(&e), g->failed = true, NULL;
    return bind_value(g, u, b, &e);
  }
  case FRIT_OP_DEFINE_GLOBAL: case FRIT_OP_DEFINE_REG: case FRIT_OP_DEFINE_LOCAL: case FRIT_OP_INDEX:
    return cgl_fail(g, u, "pointer used as a value"), NULL;
  case FRIT_OP_NEG: case FRIT_OP_NOT: case FRIT_OP_ABS: case FRIT_OP_SQRT: case FRIT_OP_RSQRT: case FRIT_OP_RECIP:
  case FRIT_OP_EXP: case FRIT_OP_EXP2: case FRIT_OP_LOG: case FRIT_OP_LOG2: case FRIT_OP_SIN: case FRIT_OP_COS:
  case FRIT_OP_TAN: case FRIT_OP_ASIN: case FRIT_OP_ACOS: case FRIT_OP_ATAN: case FRIT_OP_SINH: case FRIT_OP_COSH:
  case FRIT_OP_TANH: case FRIT_OP_ERF: case FRIT_OP_FLOOR: case FRIT_OP_CEIL: case FRIT_OP_TRUNC: case FRIT_OP_RINT:
  case FRIT_OP_ADD: case FRIT_OP_SUB: case FRIT_OP_MUL: case FRIT_OP_FDIV: case FRIT_OP_IDIV: case FRIT_OP_MOD:
  case FRIT_OP_MAX: case FRIT_OP_MIN: case FRIT_OP_POW: case FRIT_OP_ATAN2: case FRIT_OP_REAL: case FRIT_OP_IMAG: case FRIT_OP_CONJ: case FRIT_OP_COMPLEX: case FRIT_OP_AND: case FRIT_OP_OR:
  case FRIT_OP_XOR: case FRIT_OP_SHL: case FRIT_OP_SHR: case FRIT_OP_CMPLT: case FRIT_OP_CMPLE: case FRIT_OP_CMPEQ:
  case FRIT_OP_CMPNE: case FRIT_OP_WHERE: case FRIT_OP_MULACC: {
    int b = place(g, u, cur);
    if (b < -1) return NULL;
    const char *a[3] = {NULL, NULL, NULL};
    char *keep[3] = {NULL, NULL, NULL};
    bool ok = true;
    for (uint32_t i = 0; i < u->nsrc && i < 3 && ok; i++) {
      const char *x = cgl_emit(g, u->src[i], b);
      if (!x || !(keep[i] = cgl_strdup(g, x))) ok = false;
      a[i] = keep[i];
    }
    cg_str e = {0};
    if (ok && op == FRIT_OP_POW && kd == FRIT_F32 && u->src[1]->op == FRIT_OP_CONST && u->src[1]->arg.value.f == 1.5 &&
        !getenv("FRIT_LIBM_POW")) {
      cg_printf(&e, "frit_pow15f(%s)", a[0]);
    } else if (ok && (op == FRIT_OP_MAX || op == FRIT_OP_MIN) && u->nsrc == 2 &&
               (u->src[1]->op == FRIT_OP_CONST || u->src[0]->op == FRIT_OP_CONST) &&
               cg_render_minmax_const(&e, op, kd, a[u->src[1]->op == FRIT_OP_CONST ? 0 : 1],
                                      a[u->src[1]->op == FRIT_OP_CONST ? 1 : 0],
                                      u->src[u->src[1]->op == FRIT_OP_CONST ? 1 : 0]->arg.value.f)) {
      /* rendered */
    } else if (ok && (op == FRIT_OP_MAX || op == FRIT_OP_MIN) && u->nsrc == 2 && (kd == FRIT_F32 || kd == FRIT_F64) &&
               (outside_loop(g, u->src[1], b) || outside_loop(g, u->src[0], b))) {
      /* one operand c fixed in the loop (a scalar held in a buffer, the eager path's): the
       * compare against its cut (frit_maxf_cut, hoisted by gcc) and one blend */
      int ci = outside_loop(g, u->src[1], b) ? 1 : 0;
      const char *sfx = kd == FRIT_F64 ? "d" : "f", *nm = op == FRIT_OP_MAX ? "max" : "min";
      cg_printf(&e, "frit_%s%s_inv(%s, %s, frit_%s%s_cut(%s))", nm, sfx, a[1 - ci], a[ci], nm, sfx, a[ci]);
    } else if (ok && cg_no_overflow(u)) {
      cg_printf(&e, "((%s)(%s %s %s))", cg_ctype(kd), a[0], op == FRIT_OP_ADD ? "+" : op == FRIT_OP_SUB ? "-" : "*", a[1]);
    } else if (ok) {
      frit_scalar_kind ko = frit_dtype_kind(u->src[op == FRIT_OP_WHERE ? 1 : 0]->dtype);
      ok = cg_render_alu(g->ctx, &e, op, ko, a, (int)u->nsrc);
      if (!ok) g->failed = true;
    }
    for (int i = 0; i < 3; i++) free(keep[i]);
    if (!ok) return cg_free(&e), NULL;
    return bind_value(g, u, b, &e);
  }
  case FRIT_OP_VECTORIZE: case FRIT_OP_GEP: case FRIT_OP_SPECIAL: case FRIT_OP_KERNEL: case FRIT_OP_IOTA:
  case FRIT_OP_CONTIGUOUS: case FRIT_OP_COLLECTIVE: case FRIT_OP_RESHAPE: case FRIT_OP_PERMUTE: case FRIT_OP_EXPAND: case FRIT_OP_PAD:
  case FRIT_OP_SHRINK: case FRIT_OP_FLIP: case FRIT_OP_GATHER: case FRIT_OP_REDUCE_AXIS: case FRIT_OP_SCAN: case FRIT_OP_SCATTER: case FRIT_OP_SEQ: case FRIT_OP_BREAK: case FRIT_OP_CONTINUE: case FRIT_OP_LOOP: case FRIT_OP_CARRY:
  case FRIT_OP_BUFFER: case FRIT_OP_COUNT_:
    break;
  }
  return cgl_fail(g, u, "not supported by the C backend (lower it first)"), NULL;
}

/* ---------- kernel ---------- */

bool cgl_setup(cg *g, frit_ctx *ctx, frit_uop *opt, frit_uop *const *vars, int nvars, frit_dialect dialect) {
  memset(g, 0, sizeof *g);
  g->ctx = ctx, g->vars = vars, g->nvars = nvars, g->dialect = dialect;
  g->nodes = frit_walk_topo(opt, &g->n);
  g->pos = malloc(((size_t)opt->id + 1) * sizeof *g->pos);
  g->free_ = calloc(g->n + 1, sizeof *g->free_);
  g->scope = calloc(g->n + 1, sizeof *g->scope);
  g->dyn = calloc(g->n + 1, sizeof *g->dyn);
  g->rix = calloc(g->n + 1, sizeof *g->rix);
  g->st = calloc(g->n + 1, sizeof *g->st);
  if (!g->nodes || !g->pos || !g->free_ || !g->scope || !g->dyn || !g->rix || !g->st) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "codegen: out of memory");
    return false;
  }
  for (size_t k = 0; k < g->n; k++) g->pos[g->nodes[k]->id] = (uint32_t)k;
  if (!analyse(g)) return false;
  for (int r = 0; r < g->nr; r++)
    if (g->ranges[r]->arg.i1 == FRIT_AXIS_GLOBAL) {
      if (g->g0) return cgl_fail(g, g->ranges[r], "more than one GLOBAL range (run frit_codegen_optimize first)");
      g->g0 = g->ranges[r];
    }
  return cgl_new_block(g, -1, -1, false) == 0;
}
