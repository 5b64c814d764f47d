/* The scheduler's realize decisions (where kernels begin and end, by the cost model of
 * docs/schedule.md), the buffer table, and frit_schedule_build tying the stages together. */
#include "schedule/sched_internal.h"

#include <stdio.h>
#include <stdlib.h>

#define LARGE INT64_MAX
/* A fused value holding a reduction is materialised when a consumer reads each of its elements
 * more than this many times (docs/schedule.md). */
#define RECOMPUTE_LIMIT 16
/* A fused chain of elementwise ops is cut (an intermediate materialised) past this depth: C
 * compilers take time superlinear in one function's size (gcc: 0.6 s for a chain of 1,000 ops,
 * 15 s for 20,000), and a 100,000-op chain would never finish compiling. */
#define MAX_FUSED_DEPTH 1000

bool sched_is_tensor_src(const frit_uop *u, uint32_t i) {
  frit_op op = (frit_op)u->op;
  if (op == FRIT_OP_GATHER) return i < 2;
  if (op == FRIT_OP_SCATTER) return i < 3;
  if (op == FRIT_OP_KERNEL) return i >= 1; /* src0 is the kernel body (loop level) */
  if (op == FRIT_OP_AFTER) return true;    /* tensor level: AFTER(t, KERNEL), the new version of t */
  if (op == FRIT_OP_LOOP) return true;     /* host loop: bounds, index var, carries, inits, nexts, stop */
  if (op == FRIT_OP_CAST || op == FRIT_OP_BITCAST || op == FRIT_OP_CONTIGUOUS || op == FRIT_OP_SCAN ||
      op == FRIT_OP_REDUCE_AXIS || (frit_op_flags(op) & FRIT_F_MOVEMENT))
    return i == 0;
  return (frit_op_flags(op) & FRIT_F_ALU) != 0;
}

static bool is_leaf(const frit_uop *u) {
  return u->op == FRIT_OP_BUFFER || u->op == FRIT_OP_CONST || u->op == FRIT_OP_DEFINE_VAR;
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

typedef struct graph {
  frit_uop **list; /* tensor nodes reachable from the outputs, ascending id */
  size_t n;
  uint8_t *in;     /* by id: reachable */
  uint8_t *real;   /* by id: realized (kernel boundary) */
  uint8_t *heavy;  /* by id: its fused cone holds a reduction */
  uint32_t *uoff, *ulen, *users; /* users per list position (CSR) */
  uint32_t *pos;   /* id -> list position */
  uint8_t *rowcast; /* by id, EXPANDs: 0 not judged yet, 1 broadcast along rows, 2 not */
  uint32_t *mark;   /* by list position: the walk of broadcast_along_rows that last visited it */
  uint32_t walk;
} graph;

static bool is_real(const graph *g, const frit_uop *u) {
  return u->op == FRIT_OP_BUFFER || g->real[u->id] || sched_in_slot(u); /* loop.c: CARRYs, loop results */
}

/* The first axis an EXPAND grows when it grows only trailing axes (every axis after it grown or
 * of size 1), else -1: a row's value broadcast along its row. */
static int trailing_growth(frit_ctx *ctx, frit_uop *e) {
  const frit_shape *in = frit_shape_of(ctx, e->src[0]);
  int a = -1;
  for (int k = 0; in && k < in->ndim; k++) {
    bool grown = e->src[1 + k] != in->dims[k];
    if (grown && a < 0) a = k;
    if (a >= 0 && !grown && frit_dim_value(in->dims[k]) != 1) return -1;
  }
  return a;
}

/* Does a row's value broadcast along trailing axes (EXPAND e, growing axes a and after) reach
 * its kernels only through elementwise ops of its shape, and reductions over those axes? Then
 * every kernel it fuses into loops over the grown axes inside the others (its store is row
 * major), and the linearizer computes the value once a row, outside those loops
 * (cgl_place_mode): a softmax or a layer norm is one kernel, reading its row from cache. A
 * permute or gather on the way could put a grown axis outside: the value would be computed again
 * for every point of it. */
static bool broadcast_along_rows(graph *g, frit_uop *e, int a) {
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
      else if (!is_real(g, v)) stack[sp++] = v; /* each node once: sp stays below cap */
    }
  }
  free(stack);
  return ok;
}

/* The read factor of EXPAND e: 1 for a row's value broadcast along its row (judged once, when
 * first asked: later decisions only realize more, which the answer does not need), else the
 * product of the grown dims. */
static int64_t expand_reads(frit_ctx *ctx, graph *g, frit_uop *e) {
  if (!g->rowcast[e->id]) {
    int a = trailing_growth(ctx, e);
    g->rowcast[e->id] = a >= 0 && broadcast_along_rows(g, e, a) ? 1 : 2;
  }
  return g->rowcast[e->id] == 1 ? 1 : expand_factor(ctx, e);
}

static void compute_heavy(graph *g) {
  for (size_t i = 0; i < g->n; i++) {
    frit_uop *u = g->list[i];
    bool h = u->op == FRIT_OP_REDUCE_AXIS;
    for (uint32_t j = 0; j < u->nsrc && !h && !is_leaf(u); j++)
      if (sched_is_tensor_src(u, j) && !is_real(g, u->src[j]) && g->heavy[u->src[j]->id]) h = true;
    g->heavy[u->id] = h && !is_leaf(u);
  }
}

/* Materialises s (a value read `f` times per element) when it is heavy; through RESHAPEs the
 * underlying value is realized instead, which holds the same elements in the same order. */
static bool realize_if_heavy(graph *g, frit_uop *s, int64_t f) {
  if (f <= RECOMPUTE_LIMIT || is_real(g, s) || !g->heavy[s->id]) return false;
  while (s->op == FRIT_OP_RESHAPE && !is_real(g, s->src[0]) && g->heavy[s->src[0]->id]) s = s->src[0];
  g->real[s->id] = 1;
  return true;
}

/* A computed value gathered and also read elsewhere (a stencil: roll(u, 1) + roll(u, -1) + u) is
 * read at several positions per element of one kernel; fused, each step of an iterated stencil
 * would multiply the work of the steps before it. It is materialised once instead. */
static bool realize_if_shared(graph *g, frit_uop *s) {
  frit_uop *c = s;
  while (!is_real(g, c) && !is_leaf(c) && (frit_op_flags((frit_op)c->op) & FRIT_F_MOVEMENT) && c->op != FRIT_OP_GATHER)
    c = c->src[0];
  if (is_real(g, c) || is_leaf(c) || g->ulen[g->pos[s->id]] < 2 || is_real(g, s)) return false;
  g->real[s->id] = 1;
  return true;
}

static frit_status collect(frit_ctx *ctx, graph *g, frit_uop *const *outs, int nout, uint32_t nids) {
  g->in = calloc(nids, 1);
  g->real = calloc(nids, 1);
  g->heavy = calloc(nids, 1);
  g->rowcast = calloc(nids, 1);
  g->pos = calloc(nids, sizeof *g->pos);
  frit_uop **stack = malloc(((size_t)nids + 1) * sizeof *stack);
  if (!g->in || !g->real || !g->heavy || !g->rowcast || !g->pos || !stack) {
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
static int64_t read_factor(frit_ctx *ctx, graph *g, const frit_uop *v, const frit_uop *u) {
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
static frit_status compound_rule(frit_ctx *ctx, graph *g) {
  int64_t *m = malloc((g->n + 1) * sizeof *m);
  if (!m) return frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
  for (;;) {
    size_t deepest = g->n;
    for (size_t i = g->n; i-- > 0;) {
      frit_uop *u = g->list[i];
      m[i] = 0;
      if (is_real(g, u)) {
        m[i] = 1;
        continue;
      }
      for (uint32_t j = 0; j < g->ulen[i]; j++) {
        uint32_t v = g->users[g->uoff[i] + j];
        int64_t t = sat_mul(is_real(g, g->list[v]) ? 1 : m[v], read_factor(ctx, g, g->list[v], u));
        m[i] = m[i] > LARGE - t ? LARGE : m[i] + t;
      }
      if (m[i] > RECOMPUTE_LIMIT && g->heavy[u->id] && !is_leaf(u)) deepest = i;
    }
    if (deepest == g->n || !realize_if_heavy(g, g->list[deepest], m[deepest])) break;
    compute_heavy(g);
  }
  free(m);
  return FRIT_OK;
}

/* Rule 4: a computed value evaluated through more than RECOMPUTE_LIMIT fused paths per element
 * of its kernels (an iterated stencil of shifted reads, x[1:] + x[:-1] repeated, multiplies
 * the work of every earlier step) is materialised once. reads(u) = 1 for a realized u, else the
 * sum of reads over its users; users come later in the list. */
static frit_status bound_recompute(frit_ctx *ctx, graph *g) {
  int64_t *reads = malloc((g->n + 1) * sizeof *reads);
  if (!reads) return frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
  for (size_t i = g->n; i-- > 0;) {
    frit_uop *u = g->list[i];
    if (is_real(g, u) || is_leaf(u)) {
      reads[i] = 1;
      continue;
    }
    int64_t r = 0;
    for (uint32_t j = 0; j < g->ulen[i]; j++) {
      int64_t v = reads[g->users[g->uoff[i] + j]];
      r = r > INT64_MAX - v ? INT64_MAX : r + v;
    }
    frit_uop *c = u; /* a view of a leaf or realized value is a load: cheap to repeat */
    while (!is_real(g, c) && !is_leaf(c) && (frit_op_flags((frit_op)c->op) & FRIT_F_MOVEMENT) && c->op != FRIT_OP_GATHER)
      c = c->src[0];
    if (r > RECOMPUTE_LIMIT && !is_real(g, c) && !is_leaf(c)) {
      g->real[u->id] = 1;
      r = 1;
    }
    reads[i] = r;
  }
  free(reads);
  return FRIT_OK;
}

/* The cost model (docs/schedule.md): which tensor nodes end a kernel. */
static frit_status decide(frit_ctx *ctx, graph *g, frit_uop *const *outs, int nout, int no_fusion) {
  for (int k = 0; k < nout; k++)
    if (!is_leaf(outs[k])) g->real[outs[k]->id] = 1;
  for (size_t i = 0; i < g->n; i++) {
    frit_uop *u = g->list[i];
    if (is_leaf(u)) continue;
    if (no_fusion || u->op == FRIT_OP_CONTIGUOUS || u->op == FRIT_OP_SCAN || u->op == FRIT_OP_SCATTER ||
        u->op == FRIT_OP_KERNEL || sched_is_kversion(u))
      g->real[u->id] = 1;
  }
  if (no_fusion) return FRIT_OK;
  /* rule 1: a heavy value read many times per element (broadcast, gathered) is materialised */
  bool dirty = true;
  for (size_t i = 0; i < g->n; i++) {
    frit_uop *u = g->list[i];
    if (u->op != FRIT_OP_EXPAND && u->op != FRIT_OP_GATHER && u->op != FRIT_OP_SCATTER && u->op != FRIT_OP_KERNEL)
      continue;
    if (dirty) compute_heavy(g); /* earlier decisions change what is heavy above them */
    dirty = false;
    if (u->op == FRIT_OP_EXPAND) dirty |= realize_if_heavy(g, u->src[0], expand_reads(ctx, g, u));
    if (u->op == FRIT_OP_GATHER) {
      dirty |= realize_if_heavy(g, u->src[0], static_numel(ctx, u->src[1], -1));
      dirty |= realize_if_shared(g, u->src[0]);
      dirty |= realize_if_heavy(g, u->src[1], static_numel(ctx, u->src[0], (int)u->arg.i0));
    }
    if (u->op == FRIT_OP_SCATTER) { /* keep the sequential update loop free of reductions */
      dirty |= realize_if_heavy(g, u->src[1], LARGE);
      dirty |= realize_if_heavy(g, u->src[2], LARGE);
    }
    if (u->op == FRIT_OP_KERNEL) /* an explicit kernel reads its tensors at arbitrary points */
      for (uint32_t j = 1; j < u->nsrc; j++) dirty |= realize_if_heavy(g, u->src[j], LARGE);
  }
  compute_heavy(g);
  if (compound_rule(ctx, g) != FRIT_OK) return frit_last_status(ctx);
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
    if (is_real(g, u)) {
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
    if (multi[i] && g->heavy[u->id] && !is_leaf(u)) {
      g->real[u->id] = 1;
      root[i] = (int32_t)u->id;
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
    if (is_leaf(u) || is_real(g, u)) continue; /* read by its users as a load: depth 0 */
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

static bool has_sib(const sched_kspec *ks, const frit_uop *b) {
  for (int k = 0; k < ks->nsib; k++)
    if (ks->sib[k] == b) return true;
  return false;
}

/* ---------- names ---------- */

static const char *op_label(const frit_uop *u, bool *compute) {
  static const struct { frit_op op; const char *red, *scan; } names[] = {
      {FRIT_OP_ADD, "sum", "cumsum"}, {FRIT_OP_MUL, "prod", "cumprod"}, {FRIT_OP_MAX, "max", "cummax"},
      {FRIT_OP_MIN, "min", "cummin"}, {FRIT_OP_AND, "all", "scan_and"}, {FRIT_OP_OR, "any", "scan_or"}};
  *compute = true;
  if (u->op == FRIT_OP_REDUCE_AXIS || u->op == FRIT_OP_SCAN) {
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
      if ((int64_t)names[i].op == u->arg.i0) return u->op == FRIT_OP_SCAN ? names[i].scan : names[i].red;
    return u->op == FRIT_OP_SCAN ? "scan" : "reduce";
  }
  if (u->op == FRIT_OP_SCATTER) {
    static const char *const modes[] = {"scatter_add", "scatter_min", "scatter_max", "scatter_and",
                                        "scatter_or", "scatter_xor", "scatter_set"};
    return u->arg.i0 >= 0 && u->arg.i0 < FRIT_ATOMIC_COUNT_ ? modes[u->arg.i0] : "scatter";
  }
  *compute = !(frit_op_flags((frit_op)u->op) & FRIT_F_MOVEMENT) && u->op != FRIT_OP_CONTIGUOUS;
  if (u->op == FRIT_OP_GATHER) *compute = true;
  return frit_op_name((frit_op)u->op);
}

/* "mul,add,sum": the ops folded into the kernel of root, in graph order. */
static void kernel_ops(frit_ctx *ctx, graph *g, frit_uop *root, bool load_root, char *out, size_t cap) {
  uint8_t *seen = calloc((size_t)root->id + 1, 1);
  frit_uop **st = malloc(((size_t)root->id + 2) * sizeof *st);
  uint8_t *inc = calloc((size_t)root->id + 1, 1);
  out[0] = 0;
  if (!seen || !st || !inc) goto done;
  size_t sp = 0;
  if (!load_root) st[sp++] = root, seen[root->id] = 1;
  while (sp) {
    frit_uop *u = st[--sp];
    if (is_leaf(u)) continue;
    inc[u->id] = 1;
    for (uint32_t i = u->op == FRIT_OP_SCATTER ? 1 : 0; i < u->nsrc; i++) {
      frit_uop *s = u->src[i];
      if (!sched_is_tensor_src(u, i) || seen[s->id] || is_real(g, s)) continue;
      seen[s->id] = 1;
      st[sp++] = s;
    }
  }
  for (int pass = 0; pass < 2 && !out[0]; pass++) {
    size_t len = 0;
    for (uint32_t id = 0; id <= root->id; id++) {
      if (!inc[id]) continue;
      bool compute;
      const char *lab = op_label(frit_node_by_id(ctx, id), &compute);
      if (compute != (pass == 0)) continue;
      char low[32];
      size_t l = strlen(lab);
      if (l >= sizeof low) l = sizeof low - 1;
      for (size_t i = 0; i < l; i++) low[i] = (char)(lab[i] >= 'A' && lab[i] <= 'Z' ? lab[i] - 'A' + 'a' : lab[i]);
      low[l] = 0;
      /* each name once */
      bool dup = false;
      for (const char *p = out; *p && !dup; p = strchr(p, ',') ? strchr(p, ',') + 1 : p + strlen(p))
        dup = strncmp(p, low, l) == 0 && (p[l] == ',' || p[l] == 0);
      if (dup || len + l + 2 >= cap) continue;
      if (len) out[len++] = ',';
      memcpy(out + len, low, l + 1);
      len += l;
    }
  }
  if (!out[0]) snprintf(out, cap, "copy");
  if (root->op == FRIT_OP_SCATTER && !load_root) { /* name the kernel after the scatter */
    bool compute;
    const char *lab = op_label(root, &compute);
    size_t l = strlen(lab), n = strlen(out);
    char *p = strstr(out, lab);
    if (p && (p == out || p[-1] == ',') && (p[l] == ',' || p[l] == 0) && p != out && n + 1 < cap) {
      memmove(p - 1, p + l, strlen(p + l) + 1); /* drop ",label" */
      n = strlen(out);
      if (n + l + 2 < cap) {
        memmove(out + l + 1, out, n + 1);
        memcpy(out, lab, l);
        out[l] = ',';
      }
    }
  }
done:
  free(seen);
  free(st);
  free(inc);
}

static const char *kernel_name(frit_ctx *ctx, int k, const char *ops) {
  char buf[96];
  int len = snprintf(buf, sizeof buf, "k%d", k);
  int nops = 0;
  for (const char *p = ops; *p && nops < 3 && len < 80; nops++) {
    const char *e = strchr(p, ',');
    size_t l = e ? (size_t)(e - p) : strlen(p);
    len += snprintf(buf + len, sizeof buf - (size_t)len, "_%.*s", (int)(l > 16 ? 16 : l), p);
    p = e ? e + 1 : p + l;
  }
  char *s = frit_arena_alloc(&ctx->arena, strlen(buf) + 1);
  if (s) strcpy(s, buf);
  return s;
}

static const char *arena_str(frit_ctx *ctx, const char *src) {
  char *s = frit_arena_alloc(&ctx->arena, strlen(src) + 1);
  if (s) strcpy(s, src);
  return s;
}

/* ---------- build ---------- */

/* Without host loops kernels run in node order (a realized node's kernels at its place, an
 * explicit kernel's copies and itself at the KERNEL's). Is every kernel that reads t through
 * user v (a fused v: the kernels it fuses into) before K, so done with t when K overwrites it?
 * Conservative: false when the search grows large. */
static bool read_before(const graph *g, frit_uop *v, const frit_uop *t, const frit_uop *k) {
  enum { CAP = 256 };
  frit_uop *st[CAP];
  int sp = 0, visits = 0;
  st[sp++] = v;
  while (sp) {
    frit_uop *u = st[--sp];
    if (++visits > 4 * CAP || u->op == FRIT_OP_LOOP || u->op == FRIT_OP_CARRY) return false;
    uint32_t at;
    if (u->op == FRIT_OP_KERNEL) at = u->id;
    else if (sched_is_kversion(u)) at = u->src[1]->id; /* its copy kernel runs with its KERNEL */
    else if (g->real[u->id]) at = u->id;
    else { /* fused: read wherever its value goes */
      uint32_t p = g->pos[u->id];
      for (uint32_t j = 0; j < g->ulen[p]; j++) {
        if (sp == CAP) return false;
        st[sp++] = g->list[g->users[g->uoff[p] + j]];
      }
      continue;
    }
    if (at >= k->id) return false;
  }
  (void)t;
  return true;
}

/* Explicit kernels: may AFTER(t, K) be written in t's own buffer (no copy)? Only when nothing
 * still reads t: t is realized by this schedule (not an input or output), its other users are
 * K, this AFTER and readers whose kernels all run before K, and K reads it only through element
 * addresses (docs/schedule.md). */
static bool version_in_place(const graph *g, const sched_state *st, frit_uop *a, frit_uop *const *outs, int n) {
  frit_uop *t = a->src[0], *k = a->src[1];
  if (is_leaf(t) || !g->in[t->id] || (!g->real[t->id] && !sched_in_slot(t))) return false;
  if (!sched_loops_inplace_ok(st, t, k)) return false; /* loop.c: not a value the next iteration needs */
  for (int j = 0; j < n; j++)
    if (outs[j] == t) return false;
  uint32_t p = g->pos[t->id];
  for (uint32_t j = 0; j < g->ulen[p]; j++) {
    frit_uop *v = g->list[g->users[g->uoff[p] + j]];
    if (v != k && v != a && sched_loops_user_reads(v, t) && !(st->loops == NULL && read_before(g, v, t, k)))
      return false;
  }
  return !sched_ek_scalar_use(st, k, t);
}

/* A buffer a kernel may overwrite in place: a TEMP of this schedule. */
static bool buffer_reusable(const frit_sched_buf *bufs, int b) { return b >= 0 && bufs[b].kind == FRIT_BUF_TEMP; }

static frit_status add_buf(frit_ctx *ctx, frit_sched_buf **bufs, int *nb, int *cap, frit_uop *t, int kind, int io);
frit_status sched_add_buf(frit_ctx *ctx, frit_sched_buf **bufs, int *nb, int *cap, frit_uop *t, int kind, int io) {
  return add_buf(ctx, bufs, nb, cap, t, kind, io);
}

static frit_status add_buf(frit_ctx *ctx, frit_sched_buf **bufs, int *nb, int *cap, frit_uop *t, int kind, int io) {
  if (*nb == *cap) {
    int c = *cap ? 2 * *cap : 16;
    frit_sched_buf *nbufs = realloc(*bufs, (size_t)c * sizeof *nbufs);
    if (!nbufs) return frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
    *bufs = nbufs, *cap = c;
  }
  const frit_shape *s = frit_shape_of(ctx, t);
  frit_uop *numel = s ? frit_shape_numel(ctx, s) : NULL;
  if (!numel) return frit_last_status(ctx);
  frit_sched_buf *b = &(*bufs)[(*nb)++];
  memset(b, 0, sizeof *b);
  b->dtype = t->dtype;
  b->numel = numel;
  b->kind = kind;
  b->io_index = io;
  b->first_use = b->last_use = -1;
  b->arena_offset = -1;
  b->tensor = t;
  b->ndim = s->ndim;
  b->dims = (frit_uop **)s->dims;
  return FRIT_OK;
}

static int cmp_input(const void *a, const void *b) {
  const frit_uop *x = *(frit_uop *const *)a, *y = *(frit_uop *const *)b;
  if (x->arg.i0 != y->arg.i0) return x->arg.i0 < y->arg.i0 ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_var(const void *a, const void *b) {
  const frit_uop *x = *(frit_uop *const *)a, *y = *(frit_uop *const *)b;
  return strcmp((const char *)x->arg.blob, (const char *)y->arg.blob);
}

/* The DEFINE_VARs below root, added to vars (deduplicated). */
static frit_status collect_vars(frit_ctx *ctx, frit_uop *root, frit_uop ***vars, int *nv, int *cap) {
  uint8_t *seen = calloc((size_t)root->id + 1, 1);
  frit_uop **st = malloc(((size_t)root->id + 2) * sizeof *st);
  frit_status rc = FRIT_OK;
  if (!seen || !st) {
    rc = frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
    goto done;
  }
  size_t sp = 0;
  st[sp++] = root, seen[root->id] = 1;
  while (sp) {
    frit_uop *u = st[--sp];
    if (u->op == FRIT_OP_DEFINE_VAR) {
      bool have = false;
      for (int i = 0; i < *nv && !have; i++) have = (*vars)[i] == u;
      if (!have) {
        if (*nv == *cap) {
          int c = *cap ? 2 * *cap : 8;
          frit_uop **nvs = realloc(*vars, (size_t)c * sizeof *nvs);
          if (!nvs) {
            rc = frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
            goto done;
          }
          *vars = nvs, *cap = c;
        }
        (*vars)[(*nv)++] = u;
      }
    }
    for (uint32_t i = 0; i < u->nsrc; i++)
      if (!seen[u->src[i]->id]) seen[u->src[i]->id] = 1, st[sp++] = u->src[i];
  }
done:
  free(seen);
  free(st);
  return rc;
}

frit_schedule *frit_schedule_build(frit_ctx *ctx, frit_uop *const *outputs, int n, int no_fusion) {
  return frit_schedule_build_bounds(ctx, outputs, n, no_fusion, FRIT_BOUNDS_CLAMP);
}

frit_schedule *frit_schedule_build_bounds(frit_ctx *ctx, frit_uop *const *outputs, int n, int no_fusion,
                                          int bounds) {
  if (!ctx) return NULL;
  if (bounds < FRIT_BOUNDS_CLAMP || bounds > FRIT_BOUNDS_UNCHECKED) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "schedule: unknown bounds policy %d", bounds);
    return NULL;
  }
  if (n <= 0 || !outputs) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "schedule: no outputs");
    return NULL;
  }
  for (int k = 0; k < n; k++)
    if (!outputs[k] || !frit_shape_of(ctx, outputs[k])) {
      if (frit_last_status(ctx) == FRIT_OK) frit_set_error(ctx, FRIT_ERR_INVALID, "schedule: output %d is NULL", k);
      return NULL;
    }
  frit_schedule *S = NULL;
  graph g;
  memset(&g, 0, sizeof g);
  sched_state st;
  memset(&st, 0, sizeof st);
  st.ctx = ctx;
  st.bounds = bounds;
  st.err_buf = -1;
  frit_sched_buf *bufs = NULL;
  sched_kspec *specs = NULL;
  frit_uop **inputs = NULL, **vars = NULL, **extra = NULL, **roots = NULL;
  int32_t *host_of = NULL; /* rule 3: by node id, the root of the kernel storing this output too */
  int nb = 0, capb = 0, nspec = 0, nv = 0, capv = 0, nextra = 0;
  frit_sched_kernel *kernels = NULL;
  const char **amsgs = NULL;
  /* explicit kernels: versions nobody reads are still written, so they are collected too */
  if (sched_ek_prepare(&st, outputs, n, &extra, &nextra) != FRIT_OK) goto fail;
  uint32_t nids = (uint32_t)frit_node_count(ctx);
  if (!(roots = malloc((size_t)(n + nextra) * sizeof *roots))) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
    goto fail;
  }
  memcpy(roots, outputs, (size_t)n * sizeof *roots);
  if (nextra) memcpy(roots + n, extra, (size_t)nextra * sizeof *roots);
  if (collect(ctx, &g, roots, n + nextra, nids) != FRIT_OK || decide(ctx, &g, outputs, n, no_fusion) != FRIT_OK)
    goto fail;
  st.ctx = ctx;
  if (sched_loops_decide(&st, g.list, g.n, g.real, outputs, n) != FRIT_OK) goto fail; /* host loops */
  /* rule 3: sibling outputs (not across host loops or explicit kernels, whose order is their own) */
  if (!no_fusion && !st.ek && !st.loops) {
    if (!(host_of = malloc((size_t)nids * sizeof *host_of))) {
      frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
      goto fail;
    }
    for (uint32_t id = 0; id < nids; id++) host_of[id] = -1;
    compute_heavy(&g);
    if (sched_find_siblings(ctx, g.real, g.heavy, outputs, n, host_of) != FRIT_OK) goto fail;
  }

  /* buffer table: inputs (by input number), outputs, then temps in kernel order */
  st.buf_of = malloc((size_t)nids * sizeof *st.buf_of);
  inputs = malloc((g.n + 1) * sizeof *inputs);
  specs = malloc((2 * g.n + (size_t)n + 1) * sizeof *specs);
  if (!st.buf_of || !inputs || !specs) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
    goto fail;
  }
  for (uint32_t id = 0; id < nids; id++) st.buf_of[id] = -1;
  int ninputs = 0;
  for (size_t i = 0; i < g.n; i++)
    if (g.list[i]->op == FRIT_OP_BUFFER) inputs[ninputs++] = g.list[i];
  qsort(inputs, (size_t)ninputs, sizeof *inputs, cmp_input);
  for (int i = 0; i < ninputs; i++) {
    st.buf_of[inputs[i]->id] = nb;
    if (add_buf(ctx, &bufs, &nb, &capb, inputs[i], FRIT_BUF_INPUT, i) != FRIT_OK) goto fail;
  }
  int first_out = nb;
  for (int k = 0; k < n; k++) {
    frit_uop *t = outputs[k];
    if (add_buf(ctx, &bufs, &nb, &capb, t, FRIT_BUF_OUTPUT, k) != FRIT_OK) goto fail;
    if (!is_leaf(t) && st.buf_of[t->id] < 0) st.buf_of[t->id] = nb - 1;
  }
  if (sched_loops_buffers(&st, &bufs, &nb, &capb) != FRIT_OK) goto fail; /* host loops: slots */
  /* an output version AFTER(t, K) written in place: t (and its own in-place chain) lives in the
   * output buffer from the start, so that no copy is needed at the end */
  for (int k = 0; k < n; k++)
    for (frit_uop *u = outputs[k]; sched_is_kversion(u) && st.buf_of[u->id] >= 0;) {
      frit_uop *t = u->src[0];
      if (st.buf_of[t->id] >= 0 || (t->op == FRIT_OP_AFTER && !sched_is_kversion(t)) ||
          !version_in_place(&g, &st, u, outputs, n))
        break;
      st.buf_of[t->id] = st.buf_of[u->id];
      u = t;
    }
  for (size_t i = 0; i < g.n; i++) {
    frit_uop *u = g.list[i];
    if (u->op == FRIT_OP_KERNEL) {
      /* each version AFTER(t, K) gets a buffer holding t before K runs: t's own (in place) or a
       * copy made by a kernel just before K */
      frit_uop *const *vs;
      int nvs = sched_ek_versions(&st, u, &vs);
      for (int j = 0; j < nvs; j++) {
        frit_uop *a = vs[j];
        int tb = st.buf_of[a->src[0]->id];
        bool inplace = version_in_place(&g, &st, a, outputs, n) && tb >= 0 &&
                       (tb == st.buf_of[a->id] || (st.buf_of[a->id] < 0 && buffer_reusable(bufs, tb)));
        if (st.buf_of[a->id] < 0) {
          if (inplace) st.buf_of[a->id] = tb;
          else {
            st.buf_of[a->id] = nb;
            if (add_buf(ctx, &bufs, &nb, &capb, a, FRIT_BUF_TEMP, -1) != FRIT_OK) goto fail;
          }
        }
        if (!inplace && !sched_ek_fully_stored(&st, a)) /* K overwrites every element first: no copy */
          specs[nspec++] = (sched_kspec){.root = a, .out_buf = st.buf_of[a->id], .scatter = 1};
      }
      specs[nspec++] = (sched_kspec){.root = u, .out_buf = -1, .ekernel = 1};
      continue;
    }
    if (sched_is_kversion(u)) continue; /* its buffer came with its kernel */
    if (!g.real[u->id] || is_leaf(u)) continue;
    if (st.buf_of[u->id] < 0) {
      st.buf_of[u->id] = nb;
      if (add_buf(ctx, &bufs, &nb, &capb, u, FRIT_BUF_TEMP, -1) != FRIT_OK) goto fail;
    }
    if (u->op == FRIT_OP_SCATTER) {
      /* two kernels into one buffer: a copy of x, then the in-order updates */
      specs[nspec++] = (sched_kspec){.root = u, .out_buf = st.buf_of[u->id], .scatter = 1};
      specs[nspec++] = (sched_kspec){.root = u, .out_buf = st.buf_of[u->id], .scatter = 2};
      continue;
    }
    if (host_of && host_of[u->id] >= 0) continue; /* stored by its host's kernel */
    sched_kspec ks = {.root = u, .out_buf = st.buf_of[u->id], .load_root = false};
    for (int k = 0; host_of && k < n; k++) {
      frit_uop *b = outputs[k];
      if (host_of[b->id] != (int32_t)u->id || st.buf_of[b->id] != first_out + k || ks.nsib == SCHED_MAX_SIB) continue;
      ks.sib_buf[ks.nsib] = first_out + k;
      ks.sib[ks.nsib++] = b;
    }
    for (int k = 0; host_of && k < n; k++) /* past the limit: a kernel of its own after all */
      if (host_of[outputs[k]->id] == (int32_t)u->id && !has_sib(&ks, outputs[k])) host_of[outputs[k]->id] = -1;
    specs[nspec++] = ks;
  }
  int nplain = nspec;
  /* outputs that are inputs, constants, or the same node twice get a copy kernel */
  for (int k = 0; k < n; k++) {
    frit_uop *t = outputs[k];
    if (!is_leaf(t) && st.buf_of[t->id] == first_out + k) continue;
    specs[nspec++] = (sched_kspec){.root = t, .out_buf = first_out + k, .load_root = !is_leaf(t)};
  }

  /* host loops: execution order, init and next copies, the step list */
  if (sched_loops_order(&st, &bufs, &nb, &capb, &specs, &nspec, nplain) != FRIT_OK) goto fail;

  /* bounds policy CHECK: the i32 error buffer of explicit kernels */
  if (bounds == FRIT_BOUNDS_CHECK && st.ek) {
    frit_uop *zero = frit_const_int(ctx, FRIT_I32, 0);
    if (!zero || add_buf(ctx, &bufs, &nb, &capb, zero, FRIT_BUF_TEMP, -1) != FRIT_OK) goto fail;
    st.err_buf = nb - 1;
  }

  /* kernels */
  st.ctx = ctx;
  st.no_fusion = no_fusion;
  st.nids = nids;
  st.bufs = bufs;
  if (!(st.rules = sched_rangeify_rules(ctx))) goto fail;
  kernels = calloc((size_t)nspec + 1, sizeof *kernels);
  if (!kernels) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
    goto fail;
  }
  for (int k = 0; k < nspec; k++) {
    if (specs[k].ekernel) { /* explicit kernel: ekernel.c names it */
      if (sched_ekernel(&st, &specs[k], k, &kernels[k]) != FRIT_OK) goto fail;
    } else {
      if (sched_rangeify(&st, &specs[k], &kernels[k]) != FRIT_OK) goto fail;
      char ops[256];
      if (specs[k].scatter == 1) { /* the copy of x (SCATTER) or of the old version (AFTER) */
        frit_uop *x = specs[k].root->src[0];
        kernel_ops(ctx, &g, x, is_real(&g, x), ops, sizeof ops);
      } else {
        kernel_ops(ctx, &g, specs[k].root, specs[k].load_root, ops, sizeof ops);
        for (int j = 0; j < specs[k].nsib; j++) { /* "ops of root;ops of sibling" */
          size_t len = strlen(ops);
          if (len + 2 >= sizeof ops) break;
          ops[len] = ';';
          kernel_ops(ctx, &g, specs[k].sib[j], false, ops + len + 1, sizeof ops - len - 1);
        }
      }
      kernels[k].ops = arena_str(ctx, ops);
      kernels[k].name = kernel_name(ctx, k, ops);
    }
    if (!kernels[k].ops || !kernels[k].name) {
      frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
      goto fail;
    }
    for (int p = 0; p < kernels[k].nparams; p++) {
      frit_sched_buf *b = &bufs[kernels[k].param_buf[p]];
      if (b->first_use < 0) b->first_use = k;
      b->last_use = k;
    }
    if (collect_vars(ctx, kernels[k].ast, &vars, &nv, &capv) != FRIT_OK) goto fail;
  }
  for (int b = 0; b < nb; b++) {
    if (collect_vars(ctx, bufs[b].numel, &vars, &nv, &capv) != FRIT_OK) goto fail;
    for (int d = 0; d < bufs[b].ndim; d++)
      if (collect_vars(ctx, bufs[b].dims[d], &vars, &nv, &capv) != FRIT_OK) goto fail;
  }
  if (nv > 1) qsort(vars, (size_t)nv, sizeof *vars, cmp_var);
  if (st.err_buf >= 0) { /* read by the runtime after every kernel: live throughout */
    bufs[st.err_buf].first_use = 0;
    bufs[st.err_buf].last_use = nspec - 1;
  }

  /* move everything into the context's arena */
  S = frit_arena_alloc(&ctx->arena, sizeof *S);
  frit_sched_kernel *ak = frit_arena_alloc(&ctx->arena, (size_t)(nspec + 1) * sizeof *ak);
  frit_sched_buf *ab = frit_arena_alloc(&ctx->arena, (size_t)(nb + 1) * sizeof *ab);
  frit_uop **av = frit_arena_alloc(&ctx->arena, (size_t)(nv + 1) * sizeof *av);
  int *ib = frit_arena_alloc(&ctx->arena, (size_t)(ninputs + 1) * sizeof *ib);
  int *ob = frit_arena_alloc(&ctx->arena, (size_t)(n + 1) * sizeof *ob);
  amsgs = frit_arena_alloc(&ctx->arena, (size_t)(st.nerr_msgs + 1) * sizeof *amsgs);
  if (!S || !ak || !ab || !av || !ib || !ob || !amsgs) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
    S = NULL;
    goto fail;
  }
  memcpy(ak, kernels, (size_t)nspec * sizeof *ak);
  memcpy(ab, bufs, (size_t)nb * sizeof *ab);
  if (nv) memcpy(av, vars, (size_t)nv * sizeof *av);
  for (int i = 0; i < ninputs; i++) ib[i] = i;
  for (int k = 0; k < n; k++) ob[k] = first_out + k;
  if (st.nerr_msgs) memcpy(amsgs, st.err_msgs, (size_t)st.nerr_msgs * sizeof *amsgs);
  *S = (frit_schedule){.kernels = ak, .nkernels = nspec, .bufs = ab, .nbufs = nb, .vars = av, .nvars = nv,
                       .ninputs = ninputs, .noutputs = n, .input_buf = ib, .output_buf = ob, .arena_bytes = -1,
                       .no_fusion = no_fusion, .err_buf = st.err_buf, .err_msgs = amsgs,
                       .nerr_msgs = st.nerr_msgs};
  if (sched_loops_finish(&st, S) != FRIT_OK) goto fail; /* steps, loop variables, liveness */
  sched_plan_static(ctx, S);
  sched_mark_alias(S);
  goto done;
fail:
  S = NULL;
done:
  free(g.list), free(g.in), free(g.real), free(g.heavy), free(g.rowcast), free(g.mark), free(g.uoff), free(g.ulen), free(g.users), free(g.pos);
  free(st.buf_of), free(st.params), free(st.err_msgs);
  sched_ek_free(&st);
  sched_loops_free(&st);
  free(bufs), free(specs), free(inputs), free(vars), free(kernels), free(extra), free(roots), free(host_of);
  return S;
}
