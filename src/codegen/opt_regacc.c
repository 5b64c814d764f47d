/* Register-array accumulation: a reduction inside the innermost output loop whose inputs are
 * contiguous along that output axis (matmul's b[k, j], a convolution's input row) is turned
 * inside out, so that the reduction loop runs outside a vector loop over the output axis:
 *   for j: acc = 0; for k: acc += f(j, k); out[j] = acc
 * becomes
 *   for j: acc[j] = 0;   for k: for j: acc[j] += f(j, k);   for j: out[j] = acc[j]
 * Each acc[j] folds the same values in the same order, so results are bit for bit the same. */
#include "codegen/cg_internal.h"
#include "ir/walk.h"

#include <unistd.h>

#define MAX_RED 8
#define MAX_EXTENT 4096

/* Does u's subgraph contain r? (iterative, visiting each node once) */
static bool depends_on(frit_uop *u, frit_uop *r, int depth) {
  (void)depth;
  if (u == r) return true;
  if (u->id < r->id) return false; /* sources have smaller ids */
  size_t n = (size_t)u->id + 1, sp = 0;
  uint8_t *seen = calloc(n, 1);
  frit_uop **stack = malloc(n * sizeof *stack);
  bool found = false;
  if (!seen || !stack) found = true; /* conservative */
  else {
    stack[sp++] = u;
    seen[u->id] = 1;
    while (sp && !found) {
      frit_uop *x = stack[--sp];
      for (uint32_t i = 0; i < x->nsrc && !found; i++) {
        frit_uop *y = x->src[i];
        if (y == r) found = true;
        else if (y->id > r->id && !seen[y->id]) seen[y->id] = 1, stack[sp++] = y;
      }
    }
  }
  free(seen);
  free(stack);
  return found;
}

static bool unit_in(frit_uop *ix, frit_uop *r, int depth) {
  if (ix == r) return true;
  if (ix->op != FRIT_OP_ADD || depth > 64) return false; /* a sum that long: not claimed (deep graphs) */
  for (int i = 0; i < 2; i++)
    if (!depends_on(ix->src[1 - i], r, 0) && unit_in(ix->src[i], r, depth + 1)) return true;
  return false;
}

typedef struct scan {
  uint8_t *seen; /* node id -> visited, for the traversals below */
  frit_uop *red[MAX_RED];
  int nred;
  bool bad;         /* something the rewrite does not handle */
  bool contiguous;  /* a load in a reduction body is stride 1 along r */
} scan;

/* Collects the outermost REDUCEs below u (through values only). */
static void collect(frit_uop *u, frit_uop *r, scan *s, int depth) {
  if (s->bad || s->seen[u->id]) return;
  s->seen[u->id] = 1;
  if (depth > 200) {
    s->bad = true;
    return;
  }
  frit_op op = (frit_op)u->op;
  if (op == FRIT_OP_AFTER || op == FRIT_OP_DEFINE_REG || op == FRIT_OP_DEFINE_LOCAL || op == FRIT_OP_IF ||
      op == FRIT_OP_END || op == FRIT_OP_ATOMIC || op == FRIT_OP_ATOMIC_CAS || op == FRIT_OP_GROUP ||
      op == FRIT_OP_BARRIER) {
    s->bad = true;
    return;
  }
  if (op == FRIT_OP_REDUCE) {
    for (int i = 0; i < s->nred; i++)
      if (s->red[i] == u) return;
    if (!depends_on(u->src[0], r, 0)) return; /* invariant in r: stays where it is */
    if (s->nred == MAX_RED || frit_dtype_lanes(u->dtype) != 1) {
      s->bad = true;
      return;
    }
    s->red[s->nred++] = u;
    return;
  }
  for (uint32_t i = 0; i < u->nsrc; i++) collect(u->src[i], r, s, depth + 1);
}

/* Does a load inside reduction red's body read contiguously along r, and along red's own ranges
 * too (x[k, j] of x.sum(axis=0), a matmul's b[k, j])? A load of red's rows alone, mean[c] in
 * var over (N, H, W) of an NCHW x, says nothing of x[n, c, hw], read 784 apart along c: split
 * into column blocks, that kernel ran 2.6x slower. */
static void body_loads(frit_uop *u, frit_uop *r, frit_uop *red, scan *s, int depth) {
  if (s->contiguous || depth > 200 || s->seen[u->id]) return;
  s->seen[u->id] = 1;
  if (u->op == FRIT_OP_LOAD && u->src[0]->op == FRIT_OP_INDEX && unit_in(u->src[0]->src[1], r, 0)) {
    for (uint32_t i = 1; i < red->nsrc && !s->contiguous; i++)
      s->contiguous = depends_on(u->src[0]->src[1], red->src[i], 0);
    return;
  }
  for (uint32_t i = 0; i < u->nsrc; i++) body_loads(u->src[i], r, red, s, depth + 1);
}

/* Rewrites one END if it fits; returns the END unchanged otherwise (NULL only on error). */
static frit_uop *rewrite_end(frit_ctx *ctx, frit_uop *e, frit_uop *g0, int *next_id) {
  if (e->nsrc < 2) return e;
  frit_uop *r = e->src[e->nsrc - 1];
  frit_uop *st = e->src[0];
  if (r == g0 || r->src[0]->op != FRIT_OP_CONST) return e;
  int64_t E = r->src[0]->arg.value.i;
  if (E < 8 || E > MAX_EXTENT || st->op != FRIT_OP_STORE || st->nsrc != 2) return e;
  scan s;
  memset(&s, 0, sizeof s);
  s.seen = calloc((size_t)e->id + 1, 1);
  if (!s.seen) return e;
  collect(st->src[1], r, &s, 0);
  memset(s.seen, 0, (size_t)e->id + 1);
  for (int t = 0; t < s.nred && !s.bad; t++) body_loads(s.red[t]->src[0], r, s.red[t], &s, 0);
  free(s.seen);
  if (s.bad || s.nred == 0 || !s.contiguous) return e;
  for (int t = 0; t < s.nred; t++) {
    frit_op op = (frit_op)s.red[t]->arg.i0;
    if (op != FRIT_OP_ADD && op != FRIT_OP_MUL && op != FRIT_OP_MAX && op != FRIT_OP_MIN && op != FRIT_OP_AND &&
        op != FRIT_OP_OR && op != FRIT_OP_XOR)
      return e;
    for (uint32_t i = 1; i < s.red[t]->nsrc; i++)
      if (depends_on(s.red[t]->src[i]->src[0], r, 0)) return e; /* reduce extent varies with r */
  }
  frit_uop *parts[MAX_RED * 2 + 1];
  frit_uop *from[MAX_RED + 1], *to[MAX_RED + 1];
  int np = 0;
  frit_uop *ro = frit_range(ctx, r->src[0], (*next_id)++, FRIT_AXIS_UPCAST);
  if (!ro) return NULL;
  for (int t = 0; t < s.nred; t++) {
    frit_uop *R = s.red[t];
    frit_scalar_kind k = frit_dtype_kind(R->dtype);
    frit_arg ra = frit_arg_none();
    ra.i0 = (*next_id)++;
    ra.i1 = E;
    frit_uop *reg = frit_uop_new(ctx, FRIT_OP_DEFINE_REG, frit_dtype_ptr(R->dtype, FRIT_ADDR_REG), NULL, 0, &ra);
    frit_uop *ri = frit_range(ctx, r->src[0], (*next_id)++, FRIT_AXIS_UPCAST);
    frit_uop *rt = frit_range(ctx, r->src[0], (*next_id)++, FRIT_AXIS_UPCAST);
    frit_uop *id = frit_const(ctx, R->dtype, cg_reduce_identity((frit_op)R->arg.i0, k));
    if (!reg || !ri || !rt || !id) return NULL;
    frit_arg z = frit_arg_none();
    frit_uop *ix_i = frit_uop_new(ctx, FRIT_OP_INDEX, reg->dtype, (frit_uop *[]){reg, ri}, 2, &z);
    frit_uop *st_i = ix_i ? frit_uop_new(ctx, FRIT_OP_STORE, FRIT_VOID, (frit_uop *[]){ix_i, id}, 2, &z) : NULL;
    frit_uop *init = st_i ? frit_uop_new(ctx, FRIT_OP_END, FRIT_VOID, (frit_uop *[]){st_i, ri}, 2, &z) : NULL;
    frit_uop *body = init ? cg_subst(ctx, R->src[0], &r, &rt, 1) : NULL;
    frit_uop *aft = body ? frit_uop_new(ctx, FRIT_OP_AFTER, reg->dtype, (frit_uop *[]){reg, init}, 2, &z) : NULL;
    frit_uop *ix_t = aft ? frit_uop_new(ctx, FRIT_OP_INDEX, reg->dtype, (frit_uop *[]){aft, rt}, 2, &z) : NULL;
    frit_uop *cur = ix_t ? frit_uop_new(ctx, FRIT_OP_LOAD, R->dtype, &ix_t, 1, &z) : NULL;
    frit_uop *nv = cur ? frit_binary(ctx, (frit_op)R->arg.i0, cur, body) : NULL;
    frit_uop *ix_w = nv ? frit_uop_new(ctx, FRIT_OP_INDEX, reg->dtype, (frit_uop *[]){reg, rt}, 2, &z) : NULL;
    frit_uop *st_w = ix_w ? frit_uop_new(ctx, FRIT_OP_STORE, FRIT_VOID, (frit_uop *[]){ix_w, nv}, 2, &z) : NULL;
    if (!st_w) return NULL;
    /* the reduction's own ranges outside, the output axis innermost */
    frit_uop *es[66];
    int ne = 0;
    es[ne++] = st_w;
    for (uint32_t i = 1; i < R->nsrc && ne < 65; i++) es[ne++] = R->src[i];
    es[ne++] = rt;
    frit_uop *acc = frit_uop_new(ctx, FRIT_OP_END, FRIT_VOID, es, ne, &z);
    frit_uop *aft2 = acc ? frit_uop_new(ctx, FRIT_OP_AFTER, reg->dtype, (frit_uop *[]){reg, acc}, 2, &z) : NULL;
    frit_uop *ix_o = aft2 ? frit_uop_new(ctx, FRIT_OP_INDEX, reg->dtype, (frit_uop *[]){aft2, ro}, 2, &z) : NULL;
    frit_uop *res = ix_o ? frit_uop_new(ctx, FRIT_OP_LOAD, R->dtype, &ix_o, 1, &z) : NULL;
    if (!res) return NULL;
    parts[np++] = init;
    parts[np++] = acc;
    from[t] = R, to[t] = res;
  }
  from[s.nred] = r, to[s.nred] = ro;
  frit_uop *st2 = cg_subst(ctx, st, from, to, s.nred + 1);
  frit_arg z = frit_arg_none();
  frit_uop *out = st2 ? frit_uop_new(ctx, FRIT_OP_END, FRIT_VOID, (frit_uop *[]){st2, ro}, 2, &z) : NULL;
  if (!out) return NULL;
  parts[np++] = out;
  frit_uop *grp = frit_uop_new(ctx, FRIT_OP_GROUP, FRIT_VOID, parts, np, &z);
  if (!grp) return NULL;
  if (e->nsrc == 2) return grp;
  frit_uop *es[64];
  if (e->nsrc > 64) return e;
  es[0] = grp;
  for (uint32_t i = 1; i + 1 < e->nsrc; i++) es[i] = e->src[i];
  return frit_uop_new(ctx, FRIT_OP_END, FRIT_VOID, es, (int)e->nsrc - 1, &z);
}

/* The columns of a block (see split_thread_axis): the widest divisor of C from 8 to 512 that
 * leaves a block for each core, else one that leaves two blocks, else all C (8 to 4096) in one
 * block; 0 for none. A block's register array of up to 512 lives in L1 and reads a row's 2 KB
 * in one stream: (4096, 1024) summed down the columns took 1.28 ms in blocks of 64 (numpy 0.92),
 * 0.65 in blocks of 512. Counts no power of two divides (100, 1001, 1023) had kept the strided
 * loop of a column at a time, 5-22x slower than numpy. */
static int64_t block_width(int64_t C) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int64_t most[2] = {C / (cores > 1 ? cores : 1), C / 2};
  for (int pass = 0; pass < 2; pass++)
    for (int64_t w = most[pass] < 512 ? most[pass] : 512; w >= 8; w--)
      if (C % w == 0) return w;
  return C >= 8 && C <= MAX_EXTENT ? C : 0;
}

/* A kernel whose one output loop is the thread axis, x.sum(axis=0) of a row-major (R, C) array
 * (g0 walks the C columns, and each column's reduction reads R elements C apart: a scalar loop
 * that took 1.6 ms where numpy adds row by row in 0.08), is split into g0' over C/W blocks of
 * columns (the threads' work) and a loop over the W columns of a block, which rewrite_end then
 * turns inside out. W divides C (block_width), so no block runs past the last column. NULL: not
 * split (ast is left as it is). */
static frit_uop *split_thread_axis(frit_ctx *ctx, frit_uop *ast, frit_uop **g0p, int *next_id) {
  frit_uop *g0 = *g0p;
  int64_t C = g0 ? cg_const_extent(g0) : -1, W = block_width(C);
  if (W < 8 || ast->nsrc > 64) return NULL;
  /* only kernels with a reduction loading along g0 (most have none: build no nodes for them) */
  for (uint32_t i = 0; i < ast->nsrc; i++) {
    frit_uop *e = ast->src[i];
    if (e->op != FRIT_OP_END || e->nsrc != 2 || e->src[1] != g0 || e->src[0]->op != FRIT_OP_STORE) return NULL;
    scan sc;
    memset(&sc, 0, sizeof sc);
    sc.seen = calloc((size_t)e->id + 1, 1);
    if (!sc.seen) return NULL;
    collect(e->src[0]->src[1], g0, &sc, 0);
    memset(sc.seen, 0, (size_t)e->id + 1);
    for (int t = 0; t < sc.nred && !sc.bad; t++) body_loads(sc.red[t]->src[0], g0, sc.red[t], &sc, 0);
    free(sc.seen);
    if (sc.bad || sc.nred == 0 || !sc.contiguous) return NULL;
  }
  frit_dtype dt = g0->src[0]->dtype;
  frit_uop *gb = frit_range(ctx, frit_const_int(ctx, dt, C / W), (*next_id)++, FRIT_AXIS_GLOBAL);
  frit_uop *gl = frit_range(ctx, frit_const_int(ctx, dt, W), (*next_id)++, FRIT_AXIS_LOOP);
  frit_uop *col = gb && gl ? frit_binary(ctx, FRIT_OP_ADD, frit_binary(ctx, FRIT_OP_MUL, gb, frit_const_int(ctx, dt, W)), gl) : NULL;
  if (!col) return NULL;
  frit_uop *src[64];
  frit_arg z = frit_arg_none();
  for (uint32_t i = 0; i < ast->nsrc; i++) {
    frit_uop *e = ast->src[i];
    if (e->op != FRIT_OP_END || e->nsrc != 2 || e->src[1] != g0) return NULL;
    frit_uop *st = cg_subst(ctx, e->src[0], &g0, &col, 1);
    frit_uop *split = st ? frit_uop_new(ctx, FRIT_OP_END, FRIT_VOID, (frit_uop *[]){st, gb, gl}, 3, &z) : NULL;
    src[i] = split ? rewrite_end(ctx, split, gb, next_id) : NULL;
    if (!src[i] || src[i] == split) return NULL; /* (an error, or a loop the rewrite leaves) */
  }
  frit_uop *out = frit_uop_replace_src(ctx, ast, src, (int)ast->nsrc);
  if (out) *g0p = gb;
  return out;
}

frit_uop *cg_regacc(frit_ctx *ctx, frit_uop *ast, frit_uop **g0p) {
  if (ast->op != FRIT_OP_SINK || ast->nsrc > 64) return ast;
  int next_id = 1000;
  frit_uop *split = split_thread_axis(ctx, ast, g0p, &next_id);
  if (split) return split;
  frit_clear_error(ctx); /* a failed attempt leaves the kernel as it was */
  frit_uop *g0 = *g0p;
  frit_uop *src[64];
  bool changed = false;
  for (uint32_t i = 0; i < ast->nsrc; i++) {
    src[i] = ast->src[i];
    if (src[i]->op == FRIT_OP_END) {
      frit_uop *n = rewrite_end(ctx, src[i], g0, &next_id);
      if (!n) return NULL;
      changed = changed || n != src[i];
      src[i] = n;
    }
  }
  return changed ? frit_uop_replace_src(ctx, ast, src, (int)ast->nsrc) : ast;
}
