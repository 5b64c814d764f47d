/* The scheduler's realize decisions: where kernels begin and end, by the cost model of
 * docs/schedule.md (build.c turns them into kernels and buffers). */
#include "schedule/sched_internal.h"

#include <stdio.h>
#include <stdlib.h>

#define LARGE INT64_MAX
/* A fused value holding a reduction is materialised when a consumer reads each of its elements
 * more than this many times (docs/schedule.md). */
#define RECOMPUTE_LIMIT 16
/* The same for a value without a reduction whose cone holds a transcendental (a GELU's erf read
 * by the 10 columns of a dense layer's product: computed 10 times per element). */
#define COSTLY_READS 4
/* A fused chain of elementwise ops is cut (an intermediate materialised) past this depth: C
 * compilers take time superlinear in one function's size (gcc: 0.6 s for a chain of 1,000 ops,
 * 15 s for 20,000), and a 100,000-op chain would never finish compiling. */
#define MAX_FUSED_DEPTH 1000

bool sched_is_tensor_src(const frit_uop *u, uint32_t i) {
  /* the scheduler also follows the kernel (AFTER's src1) and the host loop's bounds and carries,
   * which have no shape */
  frit_op op = (frit_op)u->op;
  if (op == FRIT_OP_KERNEL) return i >= 1; /* src0 is the kernel body (loop level) */
  if (op == FRIT_OP_AFTER) return true;    /* tensor level: AFTER(t, KERNEL), the new version of t */
  if (op == FRIT_OP_LOOP) return true;     /* host loop: bounds, index var, carries, inits, nexts, stop */
  return frit_is_tensor_src(u, i);
}

bool sched_is_leaf(const frit_uop *u) {
  return u->op == FRIT_OP_BUFFER || u->op == FRIT_OP_CONST || u->op == FRIT_OP_DEFINE_VAR;
}

bool sched_is_elementwise(const frit_uop *u) {
  return (frit_op_flags((frit_op)u->op) & (FRIT_F_UNARY | FRIT_F_BINARY | FRIT_F_TERNARY)) || u->op == FRIT_OP_CAST;
}

frit_uop *sched_permuted_reduction(frit_uop *u, bool (*fused)(const void *env, const frit_uop *), const void *env) {
  if (u->op != FRIT_OP_PERMUTE || u->arg.blob_kind != FRIT_BLOB_INTS || u->arg.n < 2) return NULL;
  if (((const int64_t *)u->arg.blob)[u->arg.n - 1] == (int64_t)u->arg.n - 1) return NULL;
  frit_uop *c = u->src[0];
  while ((c->op == FRIT_OP_RESHAPE || c->op == FRIT_OP_CAST) && fused(env, c)) c = c->src[0];
  return c->op == FRIT_OP_REDUCE_AXIS && fused(env, c) ? c : NULL;
}

static int64_t sat_mul(int64_t a, int64_t b) {
  if (a == LARGE || b == LARGE || (b && a > INT64_MAX / b)) return LARGE;
  return a * b;
}

/* How many times an EXPAND reads each element of its source: the product of the grown dims
 * (LARGE when one is symbolic). */
static int64_t expand_factor(frit_ctx *ctx, frit_uop *e) {
  const frit_shape *in = frit_shape_of(ctx, e->src[0]);
  int64_t f = 1;
  for (int k = 0; in && k < in->ndim; k++) {
    frit_uop *o = e->src[1 + k];
    if (o == in->dims[k]) continue;
    int64_t v = frit_dim_value(o);
    f = sat_mul(f, v < 0 ? LARGE : v);
  }
  return f;
}

static int64_t static_numel(frit_ctx *ctx, frit_uop *x, int skip_axis) {
  const frit_shape *s = frit_shape_of(ctx, x);
  int64_t f = 1;
  for (int k = 0; s && k < s->ndim; k++) {
    if (k == skip_axis) continue;
    int64_t v = frit_dim_value(s->dims[k]);
    f = sat_mul(f, v < 0 ? LARGE : v);
  }
  return f;
}


bool sched_graph_is_real(const sched_graph *g, const frit_uop *u) {
  return u->op == FRIT_OP_BUFFER || g->real[u->id] || sched_in_slot(u); /* loop.c: CARRYs, loop results */
}

/* The first axis an EXPAND grows when it grows only trailing axes (every axis after it grown or
 * of size 1) and leaves rows before them, else -1: a row's value broadcast along its row. */
static int trailing_growth(frit_ctx *ctx, frit_uop *e) {
  const frit_shape *in = frit_shape_of(ctx, e->src[0]);
  int a = -1;
  bool rows = false; /* an axis before the grown ones that is not the constant 1 */
  for (int k = 0; in && k < in->ndim; k++) {
    bool grown = e->src[1 + k] != in->dims[k];
    if (grown && a < 0) a = k;
    if (a < 0 && frit_dim_value(in->dims[k]) != 1) rows = true;
    if (a >= 0 && !grown && frit_dim_value(in->dims[k]) != 1) return -1;
  }
  /* without rows (a whole-array value, or a single static row) the kernel's outermost loop, which
   * threads and work-items split, would be a grown axis: each part would compute it again */
  return rows ? a : -1;
}

/* Does a row's value broadcast along trailing axes (EXPAND e, growing axes a and after) reach
 * its kernels only through elementwise ops of its shape, and reductions over those axes? Then
 * every kernel it fuses into loops over the grown axes inside the others (its store is row
 * major), and the linearizer computes the value once a row, outside those loops
 * (cgl_place_mode): a softmax or a layer norm is one kernel, reading its row from cache. A
 * permute or gather on the way could put a grown axis outside: the value would be computed again
 * for every point of it. */
static bool broadcast_along_rows(sched_graph *g, frit_uop *e, int a) {
  size_t cap = g->n + 1, sp = 0;
  frit_uop **stack = malloc(cap * sizeof *stack);
  if (!stack) return false; /* out of memory: the safe answer */
  uint32_t walk = ++g->walk;
  bool ok = true;
  stack[sp++] = e;
  while (sp && ok) {
    frit_uop *w = stack[--sp];
    uint32_t p = g->pos[w->id];
    for (uint32_t j = 0; j < g->ulen[p] && ok; j++) {
      uint32_t q = g->users[g->uoff[p] + j];
      frit_uop *v = g->list[q];
      frit_op op = (frit_op)v->op;
      if (g->mark[q] == walk) continue;
      g->mark[q] = walk;
      if (op == FRIT_OP_REDUCE_AXIS) {
        const int64_t *ax = (const int64_t *)v->arg.blob;
        for (uint32_t i = 0; i < v->arg.n; i++)
          if (!ax || ax[i] < a) ok = false;
        continue; /* its own broadcasts are judged on their own */
      }
      if (!(frit_op_flags(op) & FRIT_F_ALU) && op != FRIT_OP_CAST) ok = false;
      else if (!sched_graph_is_real(g, v)) stack[sp++] = v; /* each node once: sp stays below cap */
    }
  }
  free(stack);
  return ok;
}

/* The read factor of EXPAND e: 1 for a row's value broadcast along its row (judged once, when
 * first asked: later decisions only realize more, which the answer does not need), else the
 * product of the grown dims. */
static int64_t expand_reads(frit_ctx *ctx, sched_graph *g, frit_uop *e) {
  if (!g->rowcast[e->id]) {
    int a = trailing_growth(ctx, e);
    g->rowcast[e->id] = a >= 0 && broadcast_along_rows(g, e, a) ? 1 : 2;
  }
  return g->rowcast[e->id] == 1 ? 1 : expand_factor(ctx, e);
}

/* A vectorised polynomial (tens of FLOPs) per element: computed again per broadcast element it
 * costs more than a round trip through memory. */
static bool costly_op(frit_op op) {
  return op == FRIT_OP_ERF || op == FRIT_OP_EXP || op == FRIT_OP_EXP2 || op == FRIT_OP_LOG || op == FRIT_OP_LOG2 ||
         op == FRIT_OP_SIN || op == FRIT_OP_COS || op == FRIT_OP_TAN || op == FRIT_OP_ASIN || op == FRIT_OP_ACOS ||
         op == FRIT_OP_ATAN || op == FRIT_OP_SINH || op == FRIT_OP_COSH || op == FRIT_OP_TANH || op == FRIT_OP_POW;
}

void sched_compute_heavy(sched_graph *g) {
  for (size_t i = 0; i < g->n; i++) {
    frit_uop *u = g->list[i];
    bool h = u->op == FRIT_OP_REDUCE_AXIS, c = costly_op((frit_op)u->op);
    for (uint32_t j = 0; j < u->nsrc && !sched_is_leaf(u); j++)
      if (sched_is_tensor_src(u, j) && !sched_graph_is_real(g, u->src[j]))
        h = h || g->heavy[u->src[j]->id], c = c || g->costly[u->src[j]->id];
    g->heavy[u->id] = h && !sched_is_leaf(u);
    g->costly[u->id] = c && !sched_is_leaf(u);
  }
}

/* Materialises s (a value read `f` times per element) when it is heavy and f > RECOMPUTE_LIMIT,
 * or costly and f > COSTLY_READS; through RESHAPEs the underlying value is realized instead,
 * which holds the same elements in the same order. */
static bool realize_if_expensive(sched_graph *g, frit_uop *s, int64_t f) {
  if (sched_graph_is_real(g, s) || !((g->heavy[s->id] && f > RECOMPUTE_LIMIT) || (g->costly[s->id] && f > COSTLY_READS)))
    return false;
  while (s->op == FRIT_OP_RESHAPE && !sched_graph_is_real(g, s->src[0]) && (g->heavy[s->src[0]->id] || g->costly[s->src[0]->id]))
    s = s->src[0];
  g->real[s->id] = 1;
  return true;
}

/* Rule 1d: a PAD evaluates its source's fused cone at every element of the padded result, the
 * padding included (the loads are gated, the loops still run): a reduction concatenated into a
 * larger array (`concatenate([sum(a, 0), b])`, a flattened gradient bucket) ran its whole loop for
 * each element of the concatenation: the gradients of a 784-512-512-512-10 MLP flattened into one
 * array took 26.8 ms a step instead of 14.8 (a 6.3 ms kernel). A heavy source of a PAD
 * that grows it is materialised, and a costly one that it grows more than COSTLY_READS times. */
static bool realize_if_padded(frit_ctx *ctx, sched_graph *g, frit_uop *pad) {
  frit_uop *s = pad->src[0];
  int64_t out = static_numel(ctx, pad, -1), in = static_numel(ctx, s, -1);
  bool grows = out == LARGE || in == LARGE || out > in;
  if (sched_graph_is_real(g, s) || !grows) return false;
  int64_t f = out == LARGE || in == LARGE || in == 0 ? LARGE : (out + in - 1) / in;
  return realize_if_expensive(g, s, g->heavy[s->id] ? LARGE : f);
}

/* A computed value gathered and also read elsewhere (a stencil: roll(u, 1) + roll(u, -1) + u) is
 * read at several positions per element of one kernel; fused, each step of an iterated stencil
 * would multiply the work of the steps before it. It is materialised once instead. */
static bool realize_if_shared(sched_graph *g, frit_uop *s) {
  frit_uop *c = s;
  while (!sched_graph_is_real(g, c) && !sched_is_leaf(c) && (frit_op_flags((frit_op)c->op) & FRIT_F_MOVEMENT) && c->op != FRIT_OP_GATHER)
    c = c->src[0];
  if (sched_graph_is_real(g, c) || sched_is_leaf(c) || g->ulen[g->pos[s->id]] < 2 || sched_graph_is_real(g, s)) return false;
  g->real[s->id] = 1;
  return true;
}

frit_status sched_collect(frit_ctx *ctx, sched_graph *g, frit_uop *const *outs, int nout, uint32_t nids) {
  g->in = calloc(nids, 1);
  g->real = calloc(nids, 1);
  g->heavy = calloc(nids, 1);
  g->costly = calloc(nids, 1);
  g->rowcast = calloc(nids, 1);
  g->pos = calloc(nids, sizeof *g->pos);
  frit_uop **stack = malloc(((size_t)nids + 1) * sizeof *stack);
  if (!g->in || !g->real || !g->heavy || !g->costly || !g->rowcast || !g->pos || !stack) {
    free(stack);
    return frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
  }
  size_t sp = 0;
  for (int k = 0; k < nout; k++)
    if (!g->in[outs[k]->id]) g->in[outs[k]->id] = 1, stack[sp++] = outs[k];
  while (sp) {
    frit_uop *u = stack[--sp];
    if (sched_check_tensor_node(ctx, u) != FRIT_OK) {
      free(stack);
      return frit_last_status(ctx);
    }
    for (uint32_t i = 0; i < u->nsrc; i++) {
      frit_uop *s = u->src[i];
      if (sched_is_tensor_src(u, i) && !g->in[s->id]) g->in[s->id] = 1, stack[sp++] = s;
    }
  }
  free(stack);
  g->n = 0;
  for (uint32_t id = 0; id < nids; id++) g->n += g->in[id];
  g->list = malloc((g->n + 1) * sizeof *g->list);
  g->uoff = calloc(g->n + 1, sizeof *g->uoff);
  g->mark = calloc(g->n + 1, sizeof *g->mark);
  g->ulen = calloc(g->n + 1, sizeof *g->ulen);
  if (!g->list || !g->uoff || !g->ulen || !g->mark) return frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
  size_t at = 0, nedges = 0;
  for (uint32_t id = 0; id < nids; id++)
    if (g->in[id]) g->pos[id] = (uint32_t)at, g->list[at++] = frit_node_by_id(ctx, id);
  for (size_t i = 0; i < g->n; i++) {
    frit_uop *u = g->list[i];
    for (uint32_t j = 0; j < u->nsrc; j++)
      if (sched_is_tensor_src(u, j)) g->ulen[g->pos[u->src[j]->id]]++, nedges++;
  }
  g->users = malloc((nedges + 1) * sizeof *g->users);
  if (!g->users) return frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
  for (size_t i = 0, o = 0; i < g->n; i++) g->uoff[i] = (uint32_t)o, o += g->ulen[i], g->ulen[i] = 0;
  for (size_t i = 0; i < g->n; i++) {
    frit_uop *u = g->list[i];
    for (uint32_t j = 0; j < u->nsrc; j++) {
      if (!sched_is_tensor_src(u, j)) continue;
      uint32_t p = g->pos[u->src[j]->id];
      g->users[g->uoff[p] + g->ulen[p]++] = (uint32_t)i;
    }
  }
  return FRIT_OK;
}

/* How many times consumer v reads each element of its source u (the read factor of rule 1). */
static int64_t read_factor(frit_ctx *ctx, sched_graph *g, const frit_uop *v, const frit_uop *u) {
  int64_t f = 0;
  for (uint32_t j = 0; j < v->nsrc; j++) {
    if (v->src[j] != u || !sched_is_tensor_src(v, j)) continue;
    int64_t e = 1;
    if (v->op == FRIT_OP_EXPAND) e = expand_reads(ctx, g, (frit_uop *)v);
    else if (v->op == FRIT_OP_GATHER) e = static_numel(ctx, v->src[j ? 0 : 1], j ? (int)v->arg.i0 : -1);
    else if (v->op == FRIT_OP_SCATTER || v->op == FRIT_OP_KERNEL) e = LARGE;
    f = f > LARGE - e ? LARGE : f + e;
  }
  return f;
}

/* Rule 1b: recomputation compounds. A heavy value fused into a consumer that is itself computed
 * m times per element is computed m times more (a chain of small matmuls, fft stages), so each
 * node's multiplicity is the sum over its fused users of theirs times the read factor (users
 * first). While some heavy node exceeds the limit, the deepest one is realized (it divides every
 * multiplicity above it), and the multiplicities are computed again. */
static frit_status compound_rule(frit_ctx *ctx, sched_graph *g) {
  int64_t *m = malloc((g->n + 1) * sizeof *m);
  if (!m) return frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
  for (;;) {
    size_t deepest = g->n;
    for (size_t i = g->n; i-- > 0;) {
      frit_uop *u = g->list[i];
      m[i] = 0;
      if (sched_graph_is_real(g, u)) {
        m[i] = 1;
        continue;
      }
      for (uint32_t j = 0; j < g->ulen[i]; j++) {
        uint32_t v = g->users[g->uoff[i] + j];
        int64_t t = sat_mul(sched_graph_is_real(g, g->list[v]) ? 1 : m[v], read_factor(ctx, g, g->list[v], u));
        m[i] = m[i] > LARGE - t ? LARGE : m[i] + t;
      }
      if (m[i] > RECOMPUTE_LIMIT && g->heavy[u->id] && !sched_is_leaf(u)) deepest = i;
    }
    if (deepest == g->n || !realize_if_expensive(g, g->list[deepest], m[deepest])) break;
    sched_compute_heavy(g);
  }
  free(m);
  return FRIT_OK;
}

/* Rule 4: a computed value evaluated through more than RECOMPUTE_LIMIT fused paths per element
 * of its kernels (an iterated stencil of shifted reads, x[1:] + x[:-1] repeated, multiplies
 * the work of every earlier step) is materialised once. reads(u) = 1 for a realized u, else the
 * sum of reads over its users; users come later in the list. */
static frit_status bound_recompute(frit_ctx *ctx, sched_graph *g) {
  int64_t *reads = malloc((g->n + 1) * sizeof *reads);
  if (!reads) return frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
  for (size_t i = g->n; i-- > 0;) {
    frit_uop *u = g->list[i];
    if (sched_graph_is_real(g, u) || sched_is_leaf(u)) {
      reads[i] = 1;
      continue;
    }
    int64_t r = 0;
    for (uint32_t j = 0; j < g->ulen[i]; j++) {
      int64_t v = reads[g->users[g->uoff[i] + j]];
      r = r > INT64_MAX - v ? INT64_MAX : r + v;
    }
    frit_uop *c = u; /* a view of a leaf or realized value is a load: cheap to repeat */
    while (!sched_graph_is_real(g, c) && !sched_is_leaf(c) && (frit_op_flags((frit_op)c->op) & FRIT_F_MOVEMENT) && c->op != FRIT_OP_GATHER)
      c = c->src[0];
    if (r > RECOMPUTE_LIMIT && !sched_graph_is_real(g, c) && !sched_is_leaf(c)) {
      g->real[u->id] = 1;
      r = 1;
    }
    reads[i] = r;
  }
  free(reads);
  return FRIT_OK;
}

/* Is the node at list position i realized, or read only by fused elementwise ops that are? */
static bool elementwise_to_real(const sched_graph *g, size_t i, int depth) {
  frit_uop *u = g->list[i];
  if (sched_graph_is_real(g, u)) return true;
  if (depth > 0 && !sched_is_elementwise(u)) return false;
  if (depth > 8 || g->ulen[i] == 0) return false;
  for (uint32_t j = 0; j < g->ulen[i]; j++)
    if (!elementwise_to_real(g, g->users[g->uoff[i] + j], depth + 1)) return false;
  return true;
}

/* Rule 6: a reduction read through a permute that moves its last axis ((a @ b).T, jax's
 * transposed weight gradients) is materialised. Fused, the kernel would store along a strided
 * axis and lose its register tiling (jax's MLP training step, imported: 25.5 ms fused, 1.7 ms
 * with this rule); apart, the permute is one copy. A permute that is realized itself, or read
 * by elementwise ops only up to a realized node (a conv's bias), needs neither: that kernel loops
 * in the reduction's order and stores through the permutation (rangeify.c). */
static bool unrealized(const void *g, const frit_uop *u) {
  return !sched_graph_is_real((const sched_graph *)g, u) && !sched_is_leaf(u);
}

static void realize_transposed_reductions(sched_graph *g) {
  for (size_t i = 0; i < g->n; i++) {
    /* a realized permute, or one read only by elementwise ops up to a realized node, is stored
     * in the reduction's own loop order instead (rangeify.c) */
    frit_uop *c = sched_permuted_reduction(g->list[i], unrealized, g);
    if (c && !elementwise_to_real(g, i, 0)) g->real[c->id] = 1;
  }
}

/* The cost model (docs/schedule.md): which tensor nodes end a kernel. */
frit_status sched_decide(frit_ctx *ctx, sched_graph *g, frit_uop *const *outs, int nout, int no_fusion) {
  for (int k = 0; k < nout; k++)
    if (!sched_is_leaf(outs[k])) g->real[outs[k]->id] = 1;
  for (size_t i = 0; i < g->n; i++) {
    frit_uop *u = g->list[i];
    if (sched_is_leaf(u)) continue;
    if (no_fusion || u->op == FRIT_OP_CONTIGUOUS || u->op == FRIT_OP_SCAN || u->op == FRIT_OP_SCATTER ||
        u->op == FRIT_OP_KERNEL || u->op == FRIT_OP_COLLECTIVE || sched_is_kversion(u))
      g->real[u->id] = 1;
    /* the exchange moves a buffer: its source is one, never fused into the collective's kernel */
    if (u->op == FRIT_OP_COLLECTIVE && !sched_is_leaf(u->src[0])) g->real[u->src[0]->id] = 1;
  }
  if (no_fusion) return FRIT_OK;
  /* rule 1: a heavy value read many times per element (broadcast, gathered) is materialised */
  bool dirty = true;
  for (size_t i = 0; i < g->n; i++) {
    frit_uop *u = g->list[i];
    if (u->op != FRIT_OP_EXPAND && u->op != FRIT_OP_GATHER && u->op != FRIT_OP_SCATTER && u->op != FRIT_OP_KERNEL &&
        u->op != FRIT_OP_PAD)
      continue;
    if (dirty) sched_compute_heavy(g); /* earlier decisions change what is heavy above them */
    dirty = false;
    if (u->op == FRIT_OP_EXPAND) dirty |= realize_if_expensive(g, u->src[0], expand_reads(ctx, g, u));
    if (u->op == FRIT_OP_PAD) dirty |= realize_if_padded(ctx, g, u);
    if (u->op == FRIT_OP_GATHER) {
      dirty |= realize_if_expensive(g, u->src[0], static_numel(ctx, u->src[1], -1));
      dirty |= realize_if_shared(g, u->src[0]);
      dirty |= realize_if_expensive(g, u->src[1], static_numel(ctx, u->src[0], (int)u->arg.i0));
    }
    if (u->op == FRIT_OP_SCATTER) { /* keep the sequential update loop free of reductions */
      dirty |= realize_if_expensive(g, u->src[1], LARGE);
      dirty |= realize_if_expensive(g, u->src[2], LARGE);
    }
    if (u->op == FRIT_OP_KERNEL) /* an explicit kernel reads its tensors at arbitrary points */
      for (uint32_t j = 1; j < u->nsrc; j++) dirty |= realize_if_expensive(g, u->src[j], LARGE);
  }
  sched_compute_heavy(g);
  if (compound_rule(ctx, g) != FRIT_OK) return frit_last_status(ctx);
  realize_transposed_reductions(g);
  /* rule 2: a heavy value feeding two or more kernels is materialised once. Users first: each
   * node learns the kernels (realized nodes) its value reaches through fused paths. */
  int32_t *root = malloc((g->n + 1) * sizeof *root);
  uint8_t *multi = calloc(g->n + 1, 1);
  if (!root || !multi) {
    free(root), free(multi);
    return frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
  }
  for (size_t i = g->n; i-- > 0;) {
    frit_uop *u = g->list[i];
    root[i] = -1;
    if (sched_graph_is_real(g, u)) {
      root[i] = (int32_t)u->id;
      continue;
    }
    for (uint32_t j = 0; j < g->ulen[i]; j++) {
      uint32_t v = g->users[g->uoff[i] + j];
      int32_t r = root[v];
      if (multi[v]) multi[i] = 1;
      if (r < 0) continue;
      if (root[i] < 0) root[i] = r;
      else if (root[i] != r) multi[i] = 1;
    }
    if (multi[i] && g->heavy[u->id] && !sched_is_leaf(u)) {
      /* a broadcast or reshape of the value is realized as the value itself: the same work once,
       * in fewer bytes (a max pool's output broadcast over its windows, read by the count and
       * by the gradient, was copied at the windows' size) */
      frit_uop *c = u;
      if (u->op == FRIT_OP_EXPAND)
        while ((c->op == FRIT_OP_EXPAND || c->op == FRIT_OP_RESHAPE) && !sched_graph_is_real(g, c->src[0]) &&
               !sched_is_leaf(c->src[0]))
          c = c->src[0];
      g->real[c->id] = 1;
      root[i] = (int32_t)c->id;
      multi[i] = 0;
    }
  }
  free(root);
  free(multi);
  /* rule 5: no fused chain deeper than MAX_FUSED_DEPTH */
  uint32_t *depth = calloc(g->n + 1, sizeof *depth);
  if (!depth) return frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
  for (size_t i = 0; i < g->n; i++) {
    frit_uop *u = g->list[i];
    if (sched_is_leaf(u) || sched_graph_is_real(g, u)) continue; /* read by its users as a load: depth 0 */
    uint32_t d = 0;
    for (uint32_t j = 0; j < u->nsrc; j++)
      if (sched_is_tensor_src(u, j) && depth[g->pos[u->src[j]->id]] > d) d = depth[g->pos[u->src[j]->id]];
    depth[i] = d + 1;
    if (depth[i] > MAX_FUSED_DEPTH && (frit_op_flags((frit_op)u->op) & FRIT_F_ALU)) {
      g->real[u->id] = 1;
      depth[i] = 0;
    }
  }
  free(depth);
  return bound_recompute(ctx, g); /* rule 4 */
}
