/* Host loops (Contract C, docs/schedule.md "Host loops"): regions of the tensor graph, the
 * realize decisions loops need, slot buffers, kernel order with the step list, and liveness. */
#include "schedule/sched_internal.h"

#include <inttypes.h>
#include <stdio.h>

typedef struct loop_info {
  frit_uop *node;     /* LOOP */
  int parent, depth;  /* enclosing loop (-1: the root region); nesting depth (1 = outermost) */
  int k;              /* carries */
  int *slot;          /* per carry: the slot buffer (the value at the start of an iteration) */
  int *nbuf;          /* per carry: the buffer swapped with the slot at the end (-1: none) */
  uint8_t *ncopy;     /* per carry: the next value is copied into nbuf by a kernel in the body */
  uint8_t *alias;     /* per carry: the slot is the initial value's own buffer (no init copy) */
  frit_uop *bound[3]; /* start, end, step: pure expressions, or NULL (then bound_buf) */
  int bound_buf[3];
  int stop;           /* 0: none (CONST false), 1: flag buffer stop_buf, 2: always (CONST true) */
  int stop_buf;
  int begin_step, end_step, first_kernel, last_kernel;
} loop_info;

struct sched_loops {
  uint32_t nids;
  int32_t *region;  /* by id: innermost loop the node depends on, -1: root */
  uint8_t *state;   /* by id: 0 not visited, 1 on the stack, 2 done */
  int32_t *loop_at; /* by id: the loop a LOOP node, CARRY or index variable belongs to, else -1 */
  uint32_t *reads;  /* by id: how many users read the value (outputs count as readers) */
  const uint8_t *real; /* by id: realized (realize.c's decisions, valid while building) */
  frit_uop *const *list; /* the collected tensor nodes (valid while the schedule is built) */
  size_t nlist;
  loop_info *loops;
  int nloops;
  frit_sched_step *steps;
  int nsteps, cap_steps;
};

static frit_uop *loop_ivar(const frit_uop *L) { return L->src[3]; }
static int loop_k(const frit_uop *L) { return (int)L->arg.i0; }
static frit_uop *loop_carry(const frit_uop *L, int j) { return L->src[4 + j]; }
static frit_uop *loop_init(const frit_uop *L, int j) { return L->src[4 + loop_k(L) + j]; }
static frit_uop *loop_next(const frit_uop *L, int j) { return L->src[4 + 2 * loop_k(L) + j]; }
static frit_uop *loop_stop(const frit_uop *L) { return L->src[4 + 3 * loop_k(L)]; }

static bool is_leaf(const frit_uop *u) {
  return u->op == FRIT_OP_BUFFER || u->op == FRIT_OP_CONST || u->op == FRIT_OP_DEFINE_VAR;
}

static frit_status oom(frit_ctx *ctx) { return frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory"); }

/* ---------- regions ---------- */

static bool is_ancestor(const sched_loops *L, int a, int b) { /* a encloses b (or a == b) */
  for (; b >= 0; b = L->loops[b].parent)
    if (a == b) return true;
  return a < 0;
}

static frit_status deeper(frit_ctx *ctx, const sched_loops *L, int a, int b, int *out) {
  if (is_ancestor(L, a, b)) *out = b;
  else if (is_ancestor(L, b, a)) *out = a;
  else
    return frit_set_error(ctx, FRIT_ERR_INVALID, "schedule: host loop loop%" PRId64 ": a value computed in its body is "
                          "used outside the loop (together with the body of loop%" PRId64 "); use the loop's results",
                          L->loops[a].node->arg.i1, L->loops[b].node->arg.i1);
  return FRIT_OK;
}

/* Sources whose region must be known before node u's: for a CARRY or an index variable, the
 * loop's outer sources (they fix the loop's parent); otherwise all sources. */
static int deps_of(const sched_loops *L, frit_uop *u, frit_uop **out) {
  int l = u->id < L->nids ? L->loop_at[u->id] : -1;
  if (l >= 0 && u->op != FRIT_OP_LOOP) {
    frit_uop *lp = L->loops[l].node;
    int n = 0;
    for (int i = 0; i < 3; i++) out[n++] = lp->src[i];
    for (int j = 0; j < loop_k(lp); j++) out[n++] = loop_init(lp, j);
    return n;
  }
  return -1; /* all sources */
}

static frit_status loop_parent(frit_ctx *ctx, sched_loops *L, int l) {
  loop_info *li = &L->loops[l];
  if (li->depth > 0) return FRIT_OK;
  frit_uop *lp = li->node;
  int r = -1;
  for (int i = 0; i < 3 + li->k; i++) {
    frit_uop *s = i < 3 ? lp->src[i] : loop_init(lp, i - 3);
    int rs = L->region[s->id];
    if (rs == l || (rs >= 0 && is_ancestor(L, l, rs)))
      return frit_set_error(ctx, FRIT_ERR_INVALID, "schedule: host loop loop%" PRId64 ": its start, end, step or "
                            "initial values depend on its own body", lp->arg.i1);
    if (deeper(ctx, L, r, rs, &r) != FRIT_OK) return frit_last_status(ctx);
  }
  li->parent = r;
  li->depth = r < 0 ? 1 : L->loops[r].depth + 1;
  return FRIT_OK;
}

static frit_status finish_region(frit_ctx *ctx, sched_loops *L, frit_uop *u) {
  int l = L->loop_at[u->id], r = -1;
  if (l >= 0 && u->op != FRIT_OP_LOOP) { /* CARRY or index variable: the body of its loop */
    if (loop_parent(ctx, L, l) != FRIT_OK) return frit_last_status(ctx);
    L->region[u->id] = l;
    return FRIT_OK;
  }
  if (u->op == FRIT_OP_LOOP) {
    if (loop_parent(ctx, L, l) != FRIT_OK) return frit_last_status(ctx);
    for (int j = 0; j <= L->loops[l].k; j++) {
      frit_uop *s = j < L->loops[l].k ? loop_next(u, j) : loop_stop(u);
      if (!is_ancestor(L, L->region[s->id], l))
        return frit_set_error(ctx, FRIT_ERR_INVALID, "schedule: host loop loop%" PRId64 ": its next values or stop "
                              "flag use a value computed in the body of loop%" PRId64 " (only valid in that body)",
                              u->arg.i1, L->loops[L->region[s->id]].node->arg.i1);
    }
    L->region[u->id] = L->loops[l].parent;
    return FRIT_OK;
  }
  if (sched_is_loop_after(u)) {
    frit_uop *lp = u->src[1], *p = u->src[0];
    if (p->op != FRIT_OP_CARRY || p->arg.i0 != lp->arg.i1)
      return frit_set_error(ctx, FRIT_ERR_INVALID, "schedule: AFTER of host loop loop%" PRId64 " must name one of "
                            "its CARRYs", lp->arg.i1);
    L->region[u->id] = L->region[lp->id];
    return FRIT_OK;
  }
  if (u->op == FRIT_OP_CARRY)
    return frit_set_error(ctx, FRIT_ERR_INVALID, "schedule: CARRY %" PRId64 " of host loop loop%" PRId64 " is used "
                          "outside its loop (a value computed in a loop body is only valid in the body)",
                          u->arg.i1, u->arg.i0);
  for (uint32_t i = 0; i < u->nsrc; i++)
    if (deeper(ctx, L, r, L->region[u->src[i]->id], &r) != FRIT_OK) return frit_last_status(ctx);
  L->region[u->id] = r;
  return FRIT_OK;
}

/* Regions of u and everything below it: iterative post-order over the dependencies. */
static frit_status compute_regions(frit_ctx *ctx, sched_loops *L, frit_uop *root) {
  if (L->state[root->id] == 2) return FRIT_OK;
  size_t cap = 64, sp = 0;
  frit_uop **st = malloc(cap * sizeof *st);
  frit_uop *deps[4 + 3 * 64];
  if (!st) return oom(ctx);
  st[sp++] = root;
  frit_status rc = FRIT_OK;
  while (sp && rc == FRIT_OK) {
    frit_uop *u = st[sp - 1];
    if (L->state[u->id] == 2) {
      sp--;
      continue;
    }
    L->state[u->id] = 1;
    frit_uop **d = deps;
    int nd = -1;
    int l = L->loop_at[u->id];
    if (l >= 0 && u->op != FRIT_OP_LOOP && 3 + L->loops[l].k > (int)(sizeof deps / sizeof *deps)) {
      rc = frit_set_error(ctx, FRIT_ERR_INVALID, "schedule: host loop loop%" PRId64 " has too many carries",
                          L->loops[l].node->arg.i1);
      break;
    }
    nd = deps_of(L, u, deps);
    if (nd < 0) d = u->src, nd = (int)u->nsrc;
    frit_uop *missing = NULL;
    for (int i = 0; i < nd && !missing; i++) {
      if (d[i]->id >= L->nids) continue;
      if (L->state[d[i]->id] == 1) {
        rc = frit_set_error(ctx, FRIT_ERR_INVALID, "schedule: host loop graph has a cycle at node %u (%s)", d[i]->id,
                            frit_op_name((frit_op)d[i]->op));
        break;
      }
      if (L->state[d[i]->id] == 0) missing = d[i];
    }
    if (rc != FRIT_OK) break;
    if (missing) {
      if (sp == cap) {
        frit_uop **g = realloc(st, 2 * cap * sizeof *g);
        if (!g) {
          rc = oom(ctx);
          break;
        }
        st = g, cap *= 2;
      }
      st[sp++] = missing;
      continue;
    }
    /* a CARRY's own sources (its dims) must not depend on loops either */
    if (l >= 0 && u->op != FRIT_OP_LOOP)
      for (uint32_t i = 0; i < u->nsrc && rc == FRIT_OK; i++)
        if (L->state[u->src[i]->id] == 0) rc = compute_regions(ctx, L, u->src[i]);
    if (rc == FRIT_OK) rc = finish_region(ctx, L, u);
    L->state[u->id] = 2;
    sp--;
  }
  free(st);
  return rc;
}

/* ---------- decisions ---------- */

static int find_loop(const sched_loops *L, int64_t id) {
  for (int l = 0; l < L->nloops; l++)
    if (L->loops[l].node->arg.i1 == id) return l;
  return -1;
}

/* A start/end/step the runtime evaluates itself: CONST and DEFINE_VAR under integer ALU ops. */
static bool pure_bound(frit_uop *u, int depth) {
  if (depth > 64) return false;
  if (u->op == FRIT_OP_CONST || u->op == FRIT_OP_DEFINE_VAR) return frit_dtype_is_int(u->dtype);
  if (!(frit_op_flags((frit_op)u->op) & FRIT_F_ALU) && u->op != FRIT_OP_CAST) return false;
  if (frit_dtype_lanes(u->dtype) != 1 || (!frit_dtype_is_int(u->dtype) && !frit_dtype_is_bool(u->dtype))) return false;
  for (uint32_t i = 0; i < u->nsrc; i++)
    if (!pure_bound(u->src[i], depth + 1)) return false;
  return true;
}

static bool in_memory(const uint8_t *real, const frit_uop *u) {
  return u->op == FRIT_OP_BUFFER || sched_in_slot(u) || real[u->id];
}

frit_status sched_loops_decide(sched_state *S, frit_uop *const *list, size_t n, uint8_t *real,
                               frit_uop *const *outs, int nout) {
  frit_ctx *ctx = S->ctx;
  S->loops = NULL;
  int nl = 0;
  for (size_t i = 0; i < n; i++) nl += list[i]->op == FRIT_OP_LOOP;
  if (!nl) return FRIT_OK;
  sched_loops *L = calloc(1, sizeof *L);
  if (!L) return oom(ctx);
  S->loops = L;
  uint32_t nids = (uint32_t)frit_node_count(ctx);
  L->nids = nids;
  L->region = malloc((size_t)nids * sizeof *L->region);
  L->state = calloc(nids, 1);
  L->loop_at = malloc((size_t)nids * sizeof *L->loop_at);
  L->loops = calloc((size_t)nl, sizeof *L->loops);
  L->reads = calloc(nids, sizeof *L->reads);
  L->list = list, L->nlist = n, L->real = real;
  uint8_t *heavy = calloc(nids, 1);
  if (!L->region || !L->state || !L->loop_at || !L->loops || !L->reads || !heavy) {
    free(heavy);
    return oom(ctx);
  }
  for (uint32_t i = 0; i < nids; i++) L->region[i] = -1, L->loop_at[i] = -1;
  frit_status rc = FRIT_OK;
  for (size_t i = 0; i < n; i++) {
    frit_uop *u = list[i];
    if (u->op != FRIT_OP_LOOP) continue;
    if (find_loop(L, u->arg.i1) >= 0) {
      rc = frit_set_error(ctx, FRIT_ERR_INVALID, "schedule: two host loops have the id %" PRId64, u->arg.i1);
      goto out;
    }
    loop_info *li = &L->loops[L->nloops];
    li->node = u;
    li->k = loop_k(u);
    li->parent = -1;
    li->slot = calloc((size_t)li->k + 1, sizeof *li->slot);
    li->nbuf = calloc((size_t)li->k + 1, sizeof *li->nbuf);
    li->ncopy = calloc((size_t)li->k + 1, 1);
    li->alias = calloc((size_t)li->k + 1, 1);
    if (!li->slot || !li->nbuf || !li->ncopy || !li->alias) {
      rc = oom(ctx);
      goto out;
    }
    L->loop_at[u->id] = L->nloops;
    frit_uop *iv = loop_ivar(u);
    if (L->loop_at[iv->id] >= 0) {
      rc = frit_set_error(ctx, FRIT_ERR_INVALID, "schedule: host loops loop%" PRId64 " and loop%" PRId64
                          " share the index variable '%s'", L->loops[L->loop_at[iv->id]].node->arg.i1, u->arg.i1,
                          (const char *)iv->arg.blob);
      goto out;
    }
    L->loop_at[iv->id] = L->nloops;
    for (int j = 0; j < li->k; j++) L->loop_at[loop_carry(u, j)->id] = L->nloops;
    L->nloops++;
  }
  for (size_t i = 0; i < n && rc == FRIT_OK; i++) rc = compute_regions(ctx, L, list[i]);
  if (rc != FRIT_OK) goto out;
  for (int k = 0; k < nout; k++) {
    int r = L->region[outs[k]->id];
    if (r >= 0) {
      rc = frit_set_error(ctx, FRIT_ERR_INVALID, "schedule: output %d is computed inside the body of host loop loop%"
                          PRId64 " (a value computed in a loop body is only valid in the body; use the loop's "
                          "results)", k, L->loops[r].node->arg.i1);
      goto out;
    }
  }
  for (int k = 0; k < nout; k++) L->reads[outs[k]->id]++;
  for (size_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < list[i]->nsrc; j++)
      if (sched_is_tensor_src(list[i], j) && list[i]->src[j]->id < nids &&
          sched_loops_user_reads(list[i], list[i]->src[j]))
        L->reads[list[i]->src[j]->id]++;
  /* loop nodes never get kernels of their own: CARRYs and results live in the slots */
  for (size_t i = 0; i < n; i++)
    if (list[i]->op == FRIT_OP_LOOP || sched_in_slot(list[i])) real[list[i]->id] = 0;
  /* values the runtime reads from memory, and next values computed by the body */
  for (int l = 0; l < L->nloops; l++) {
    loop_info *li = &L->loops[l];
    frit_uop *lp = li->node;
    for (int b = 0; b < 3; b++) {
      frit_uop *x = lp->src[b];
      li->bound_buf[b] = -1;
      if (pure_bound(x, 0)) li->bound[b] = x;
      else if (!is_leaf(x) && !sched_in_slot(x)) real[x->id] = 1;
    }
    frit_uop *stop = loop_stop(lp);
    if (stop->op != FRIT_OP_CONST && !sched_in_slot(stop) && !is_leaf(stop)) real[stop->id] = 1;
    for (int j = 0; j < li->k; j++) {
      frit_uop *x = loop_next(lp, j);
      if (x != loop_carry(lp, j) && L->region[x->id] == l && !is_leaf(x) && !sched_in_slot(x)) real[x->id] = 1;
    }
  }
  /* a heavy value of an enclosing region read in a loop body is computed once, before the loop */
  for (size_t i = 0; i < n; i++) {
    frit_uop *u = list[i];
    bool h = false;
    if (!in_memory(real, u) && !is_leaf(u) && u->op != FRIT_OP_LOOP) {
      h = u->op == FRIT_OP_REDUCE_AXIS;
      for (uint32_t j = 0; j < u->nsrc && !h; j++) h = sched_is_tensor_src(u, j) && heavy[u->src[j]->id];
    }
    heavy[u->id] = h;
  }
  for (size_t i = 0; i < n; i++) {
    frit_uop *u = list[i];
    if (is_leaf(u) || sched_in_slot(u)) continue;
    int ru = L->region[u->id];
    if (u->op == FRIT_OP_LOOP) ru = L->loop_at[u->id]; /* next copies run in the body; inits just outside */
    for (uint32_t j = 0; j < u->nsrc; j++) {
      frit_uop *s = u->src[j];
      if (!sched_is_tensor_src(u, j) || s->id >= nids) continue;
      if (L->region[s->id] != ru && heavy[s->id]) real[s->id] = 1;
    }
  }
out:
  free(heavy);
  return rc;
}

/* ---------- buffers ---------- */

static const sched_loops *cmp_L;
static int cmp_depth(const void *a, const void *b) { /* enclosing loops first, then creation order */
  const loop_info *x = &cmp_L->loops[*(const int *)a], *y = &cmp_L->loops[*(const int *)b];
  if (x->depth != y->depth) return x->depth < y->depth ? -1 : 1;
  return x->node->id < y->node->id ? -1 : x->node->id > y->node->id;
}
static int cmp_loop(const void *a, const void *b) {
  uint32_t x = cmp_L->loops[*(const int *)a].node->id, y = cmp_L->loops[*(const int *)b].node->id;
  return x < y ? -1 : x > y;
}

/* Carry j of loop l may start in its initial value's own memory (no copy) when the loop is the
 * only reader of that value and the value belongs to the loop's own region (the enclosing
 * iteration will not need it again): a slot or loop result already placed is shared (returned);
 * a value computed by a kernel of its own gets written straight into the new slot (*into). */
static int alias_of(const sched_state *S, int l, int j, bool *into) {
  const sched_loops *L = S->loops;
  const loop_info *li = &L->loops[l];
  frit_uop *x = loop_init(li->node, j);
  *into = false;
  if (x->id >= L->nids || L->reads[x->id] != 1 || L->region[x->id] != li->parent || is_leaf(x)) return -1;
  int b = S->buf_of[x->id];
  if (sched_in_slot(x)) {
    for (int i = 0; i < j; i++)
      if (li->slot[i] == b) return -1;
    return b;
  }
  *into = b < 0 && L->real[x->id];
  return -1;
}

frit_status sched_loops_buffers(sched_state *S, frit_sched_buf **bufs, int *nb, int *cap) {
  sched_loops *L = S->loops;
  if (!L) return FRIT_OK;
  int *order = malloc((size_t)L->nloops * sizeof *order);
  if (!order) return oom(S->ctx);
  for (int l = 0; l < L->nloops; l++) order[l] = l;
  cmp_L = L;
  qsort(order, (size_t)L->nloops, sizeof *order, cmp_depth);
  for (int o = 0; o < L->nloops; o++) {
    int l = order[o];
    loop_info *li = &L->loops[l];
    for (int j = 0; j < li->k; j++) {
      frit_uop *p = loop_carry(li->node, j), *x = loop_init(li->node, j);
      bool into;
      int b = alias_of(S, l, j, &into);
      if (b >= 0 && (*bufs)[b].kind != FRIT_BUF_TEMP) b = -1;
      li->alias[j] = b >= 0 || into;
      if (b < 0) {
        b = *nb;
        if (sched_add_buf(S->ctx, bufs, nb, cap, p, FRIT_BUF_TEMP, -1) != FRIT_OK) {
          free(order);
          return frit_last_status(S->ctx);
        }
      }
      if (into) S->buf_of[x->id] = b;
      li->slot[j] = b;
      S->buf_of[p->id] = b;
    }
    /* results: the slot after the loop */
    for (size_t i = 0; i < L->nlist; i++) {
      frit_uop *u = L->list[i];
      if (sched_is_loop_after(u) && u->src[1] == li->node) S->buf_of[u->id] = li->slot[u->src[0]->arg.i1];
    }
  }
  free(order);
  return FRIT_OK;
}

/* ---------- order and steps ---------- */

static frit_status add_step(frit_ctx *ctx, sched_loops *L, frit_sched_step st) {
  if (L->nsteps == L->cap_steps) {
    int c = L->cap_steps ? 2 * L->cap_steps : 16;
    frit_sched_step *ns = realloc(L->steps, (size_t)c * sizeof *ns);
    if (!ns) return oom(ctx);
    L->steps = ns, L->cap_steps = c;
  }
  L->steps[L->nsteps++] = st;
  return FRIT_OK;
}

typedef struct order_ctx {
  sched_state *S;
  sched_loops *L;
  const sched_kspec *in;
  int nin, nplain;
  sched_kspec *out;
  int nout;
  int *loop_order; /* loops by node id */
} order_ctx;

static frit_status emit_kernel(order_ctx *O, sched_kspec ks) {
  O->out[O->nout] = ks;
  frit_sched_step st = {.kind = FRIT_STEP_KERNEL, .kernel = O->nout, .loop = -1, .a = -1, .b = -1};
  O->nout++;
  return add_step(O->S->ctx, O->L, st);
}

static bool copy_of(const sched_state *S, frit_uop *x) { return !is_leaf(x) && S->buf_of[x->id] >= 0; }

static frit_status emit_region(order_ctx *O, int r);

static frit_status emit_loop(order_ctx *O, int l) {
  sched_state *S = O->S;
  frit_ctx *ctx = S->ctx;
  loop_info *li = &O->L->loops[l];
  frit_uop *lp = li->node;
  for (int j = 0; j < li->k; j++) { /* the slots start as the initial values */
    frit_uop *init = loop_init(lp, j);
    if (li->alias[j]) continue; /* already there */
    if (emit_kernel(O, (sched_kspec){.root = init, .out_buf = li->slot[j], .load_root = copy_of(S, init)}) != FRIT_OK)
      return frit_last_status(ctx);
  }
  li->begin_step = O->L->nsteps;
  if (add_step(ctx, O->L, (frit_sched_step){.kind = FRIT_STEP_LOOP_BEGIN, .kernel = -1, .loop = l, .a = -1, .b = -1}))
    return frit_last_status(ctx);
  li->first_kernel = O->nout;
  if (emit_region(O, l) != FRIT_OK) return frit_last_status(ctx);
  for (int j = 0; j < li->k; j++) {
    if (!li->ncopy[j]) continue;
    frit_uop *x = loop_next(lp, j);
    if (emit_kernel(O, (sched_kspec){.root = x, .out_buf = li->nbuf[j], .load_root = copy_of(S, x)}) != FRIT_OK)
      return frit_last_status(ctx);
  }
  li->last_kernel = O->nout - 1;
  /* the flag is read before the swaps: it may live in a buffer that takes part in one */
  if (li->stop && add_step(ctx, O->L, (frit_sched_step){.kind = FRIT_STEP_STOP_IF, .kernel = -1, .loop = l,
                                                         .a = li->stop == 2 ? -1 : li->stop_buf, .b = -1}))
    return frit_last_status(ctx);
  for (int j = 0; j < li->k; j++)
    if (li->nbuf[j] >= 0 && add_step(ctx, O->L, (frit_sched_step){.kind = FRIT_STEP_SWAP, .kernel = -1, .loop = l,
                                                                 .a = li->slot[j], .b = li->nbuf[j]}))
      return frit_last_status(ctx);
  li->end_step = O->L->nsteps;
  return add_step(ctx, O->L, (frit_sched_step){.kind = FRIT_STEP_LOOP_END, .kernel = -1, .loop = l, .a = -1, .b = -1});
}

static frit_status emit_region(order_ctx *O, int r) {
  sched_loops *L = O->L;
  int li = 0;
  for (int s = 0; s <= O->nin; s++) {
    uint32_t key = s < O->nplain ? O->in[s].root->id : UINT32_MAX;
    /* another region's kernel neither runs here nor places this region's loops: its root may
     * be a node a rewrite made late, with an id past loops that must follow this region's
     * kernels (a reverse loop whose computed start reads an earlier loop's result) */
    if (s < O->nplain && O->in[s].root->id < L->nids && L->region[O->in[s].root->id] != r) continue;
    /* loops of this region whose LOOP node precedes this kernel's root */
    for (; li < L->nloops; li++) {
      int l = O->loop_order[li];
      if (L->loops[l].parent != r) continue;
      if (s < O->nin && L->loops[l].node->id > key) break;
      if (emit_loop(O, l) != FRIT_OK) return frit_last_status(O->S->ctx);
    }
    if (s == O->nin) break;
    frit_uop *root = O->in[s].root;
    int rr = s < O->nplain && root->id < L->nids ? L->region[root->id] : -1;
    if (rr == r && emit_kernel(O, O->in[s]) != FRIT_OK) return frit_last_status(O->S->ctx);
  }
  return FRIT_OK;
}

frit_status sched_loops_order(sched_state *S, frit_sched_buf **bufs, int *nb, int *cap, sched_kspec **specs,
                              int *nspec, int nplain) {
  sched_loops *L = S->loops;
  frit_ctx *ctx = S->ctx;
  if (!L) return FRIT_OK;
  int extra = 0;
  for (int l = 0; l < L->nloops; l++) {
    loop_info *li = &L->loops[l];
    frit_uop *lp = li->node;
    extra += 2 * li->k;
    for (int b = 0; b < 3; b++)
      if (!li->bound[b]) {
        li->bound_buf[b] = S->buf_of[lp->src[b]->id];
        if (li->bound_buf[b] < 0)
          return frit_set_error(ctx, FRIT_ERR_INVALID, "schedule: host loop loop%" PRId64 ": %s is not in memory",
                                lp->arg.i1, b == 0 ? "start" : b == 1 ? "end" : "step");
      }
    frit_uop *stop = loop_stop(lp);
    if (stop->op == FRIT_OP_CONST) li->stop = stop->arg.value.i ? 2 : 0;
    else {
      li->stop = 1;
      li->stop_buf = S->buf_of[stop->id];
      if (li->stop_buf < 0)
        return frit_set_error(ctx, FRIT_ERR_INVALID, "schedule: host loop loop%" PRId64 ": stop is not in memory",
                              lp->arg.i1);
    }
    /* next values: swapped with the slot when they own a per-iteration buffer of the body,
     * written in place into the slot, or copied into a buffer of their own */
    for (int j = 0; j < li->k; j++) {
      frit_uop *x = loop_next(lp, j), *p = loop_carry(lp, j);
      li->nbuf[j] = -1;
      if (x == p) continue;
      int b = S->buf_of[x->id];
      if (b == li->slot[j]) continue; /* in place */
      bool own = b >= 0 && L->region[x->id] == l && (*bufs)[b].kind == FRIT_BUF_TEMP;
      for (int i = 0; own && i < li->k; i++) own = b != li->slot[i] && (i >= j || b != li->nbuf[i]);
      if (own) {
        li->nbuf[j] = b;
        continue;
      }
      li->nbuf[j] = *nb;
      li->ncopy[j] = 1;
      if (sched_add_buf(ctx, bufs, nb, cap, p, FRIT_BUF_TEMP, -1) != FRIT_OK) return frit_last_status(ctx);
    }
  }
  order_ctx O = {.S = S, .L = L, .in = *specs, .nin = *nspec, .nplain = nplain};
  O.out = malloc((size_t)(*nspec + extra + 1) * sizeof *O.out);
  O.loop_order = malloc((size_t)L->nloops * sizeof *O.loop_order);
  if (!O.out || !O.loop_order) {
    free(O.out), free(O.loop_order);
    return oom(ctx);
  }
  for (int l = 0; l < L->nloops; l++) O.loop_order[l] = l;
  cmp_L = L;
  qsort(O.loop_order, (size_t)L->nloops, sizeof *O.loop_order, cmp_loop);
  frit_status rc = emit_region(&O, -1);
  free(O.loop_order);
  if (rc != FRIT_OK) {
    free(O.out);
    return rc;
  }
  free(*specs);
  *specs = O.out;
  *nspec = O.nout;
  return FRIT_OK;
}

/* ---------- finishing: steps, variables, liveness ---------- */

static int cmp_var_name(const void *a, const void *b) {
  const frit_uop *x = *(frit_uop *const *)a, *y = *(frit_uop *const *)b;
  return strcmp((const char *)x->arg.blob, (const char *)y->arg.blob);
}

/* Appends the DEFINE_VARs below e to vars (deduplicated). */
static frit_status add_vars(frit_ctx *ctx, frit_uop *e, frit_uop ***vars, int *nv, int *cap, int depth) {
  if (depth > 256) return frit_set_error(ctx, FRIT_ERR_INVALID, "schedule: host loop bound expression too deep");
  if (e->op == FRIT_OP_DEFINE_VAR) {
    for (int i = 0; i < *nv; i++)
      if ((*vars)[i] == e) return FRIT_OK;
    if (*nv == *cap) {
      int c = *cap ? 2 * *cap : 8;
      frit_uop **g = realloc(*vars, (size_t)c * sizeof *g);
      if (!g) return oom(ctx);
      *vars = g, *cap = c;
    }
    (*vars)[(*nv)++] = e;
    return FRIT_OK;
  }
  for (uint32_t i = 0; i < e->nsrc; i++)
    if (add_vars(ctx, e->src[i], vars, nv, cap, depth + 1) != FRIT_OK) return frit_last_status(ctx);
  return FRIT_OK;
}

static bool uses_var(const frit_uop *e, const frit_uop *v, int depth) {
  if (e == v) return true;
  if (depth > 256) return false;
  for (uint32_t i = 0; i < e->nsrc; i++)
    if (uses_var(e->src[i], v, depth + 1)) return true;
  return false;
}

static int uf_find(int *par, int x) {
  while (par[x] != x) x = par[x] = par[par[x]];
  return x;
}

/* Liveness across loops: a buffer used in a loop body but defined before it, a slot, the buffer
 * swapped with it, a stop flag and a computed bound stay live over the loop's whole kernel range
 * (the plan must not reuse them inside it); buffers whose memory trades places by SWAP share the
 * union of their intervals. Repeated until nothing changes (nested loops). */
static frit_status extend_liveness(frit_ctx *ctx, const sched_loops *L, frit_schedule *s) {
  int *par = malloc((size_t)(s->nbufs + 1) * sizeof *par);
  uint8_t *mark = malloc((size_t)s->nbufs + 1);
  if (!par || !mark) {
    free(par), free(mark);
    return oom(ctx);
  }
  for (int b = 0; b < s->nbufs; b++) par[b] = b;
  for (int i = 0; i < L->nsteps; i++)
    if (L->steps[i].kind == FRIT_STEP_SWAP) par[uf_find(par, L->steps[i].a)] = uf_find(par, L->steps[i].b);
  int maxdepth = 0;
  for (int l = 0; l < L->nloops; l++) maxdepth = L->loops[l].depth > maxdepth ? L->loops[l].depth : maxdepth;
  for (bool changed = true; changed;) {
    changed = false;
    for (int depth = maxdepth; depth >= 1; depth--) {
      for (int l = 0; l < L->nloops; l++) {
        const loop_info *li = &L->loops[l];
        if (li->depth != depth) continue;
        int lo = li->first_kernel, hi = li->last_kernel > lo - 1 ? li->last_kernel : lo - 1;
        memset(mark, 0, (size_t)s->nbufs);
        for (int k = li->first_kernel; k <= li->last_kernel; k++)
          for (int p = 0; p < s->kernels[k].nparams; p++) {
            int b = s->kernels[k].param_buf[p];
            if (s->bufs[b].first_use < lo) mark[b] = 1;
          }
        for (int j = 0; j < li->k; j++) {
          mark[li->slot[j]] = 1;
          if (li->nbuf[j] >= 0) mark[li->nbuf[j]] = 1;
        }
        if (li->stop == 1) mark[li->stop_buf] = 1;
        for (int b = 0; b < 3; b++)
          if (li->bound_buf[b] >= 0) mark[li->bound_buf[b]] = 1;
        for (int b = 0; b < s->nbufs; b++) {
          if (!mark[b]) continue;
          frit_sched_buf *B = &s->bufs[b];
          int f = B->first_use < 0 ? (lo > 0 ? lo - 1 : 0) : B->first_use;
          int e = B->last_use > hi ? B->last_use : hi;
          if (e < f) e = f;
          if (f != B->first_use || e != B->last_use) changed = true;
          B->first_use = f, B->last_use = e;
        }
      }
    }
    for (int b = 0; b < s->nbufs; b++) {
      int r = uf_find(par, b);
      if (r == b) continue;
      frit_sched_buf *B = &s->bufs[b], *R = &s->bufs[r];
      int f = B->first_use < R->first_use ? B->first_use : R->first_use;
      int e = B->last_use > R->last_use ? B->last_use : R->last_use;
      if (f != B->first_use || e != B->last_use || f != R->first_use || e != R->last_use) changed = true;
      B->first_use = R->first_use = f, B->last_use = R->last_use = e;
    }
  }
  free(par);
  free(mark);
  return FRIT_OK;
}

frit_status sched_loops_finish(sched_state *S, frit_schedule *s) {
  frit_ctx *ctx = S->ctx;
  sched_loops *L = S->loops;
  if (!L) {
    s->steps = frit_arena_alloc(&ctx->arena, (size_t)(s->nkernels + 1) * sizeof *s->steps);
    if (!s->steps) return oom(ctx);
    for (int k = 0; k < s->nkernels; k++)
      s->steps[k] = (frit_sched_step){.kind = FRIT_STEP_KERNEL, .kernel = k, .loop = -1, .a = -1, .b = -1};
    s->nsteps = s->nkernels;
    s->loops = NULL;
    s->nloops = 0;
    return FRIT_OK;
  }
  /* variables: the loops' index variables and those of bounds the runtime evaluates */
  int nv = s->nvars, cap = nv + 8;
  frit_uop **vars = malloc((size_t)cap * sizeof *vars);
  if (!vars) return oom(ctx);
  if (nv) memcpy(vars, s->vars, (size_t)nv * sizeof *vars);
  frit_status rc = FRIT_OK;
  for (int l = 0; l < L->nloops && rc == FRIT_OK; l++) {
    rc = add_vars(ctx, loop_ivar(L->loops[l].node), &vars, &nv, &cap, 0);
    for (int b = 0; b < 3 && rc == FRIT_OK; b++)
      if (L->loops[l].bound[b]) rc = add_vars(ctx, L->loops[l].bound[b], &vars, &nv, &cap, 0);
  }
  if (rc == FRIT_OK && nv > 1) qsort(vars, (size_t)nv, sizeof *vars, cmp_var_name);
  frit_uop **av = rc == FRIT_OK ? frit_arena_alloc(&ctx->arena, (size_t)(nv + 1) * sizeof *av) : NULL;
  s->steps = rc == FRIT_OK ? frit_arena_alloc(&ctx->arena, (size_t)(L->nsteps + 1) * sizeof *s->steps) : NULL;
  s->loops = rc == FRIT_OK ? frit_arena_alloc(&ctx->arena, (size_t)(L->nloops + 1) * sizeof *s->loops) : NULL;
  if (rc == FRIT_OK && (!av || !s->steps || !s->loops)) rc = oom(ctx);
  if (rc != FRIT_OK) {
    free(vars);
    return rc;
  }
  memcpy(av, vars, (size_t)nv * sizeof *av);
  free(vars);
  s->vars = av;
  s->nvars = nv;
  memcpy(s->steps, L->steps, (size_t)L->nsteps * sizeof *s->steps);
  s->nsteps = L->nsteps;
  s->nloops = L->nloops;
  for (int l = 0; l < L->nloops; l++) {
    const loop_info *li = &L->loops[l];
    frit_sched_loop *o = &s->loops[l];
    memset(o, 0, sizeof *o);
    o->node = li->node;
    o->id = li->node->arg.i1;
    o->ivar = -1;
    for (int v = 0; v < nv; v++)
      if (av[v] == loop_ivar(li->node)) o->ivar = v;
    for (int b = 0; b < 3; b++) {
      o->bound_buf[b] = li->bound[b] ? -1 : li->bound_buf[b];
      o->bound[b] = li->bound[b];
      if (o->bound[b] && o->bound[b]->dtype != FRIT_I64 && !(o->bound[b] = frit_cast(ctx, o->bound[b], FRIT_I64)))
        return frit_last_status(ctx);
    }
    o->parent = li->parent;
    o->begin_step = li->begin_step;
    o->end_step = li->end_step;
    o->first_kernel = li->first_kernel;
    o->last_kernel = li->last_kernel;
    /* buffers are sized once per run: their shapes may not follow the loop index */
    for (int b = 0; b < s->nbufs; b++)
      if (uses_var(s->bufs[b].numel, loop_ivar(li->node), 0))
        return frit_set_error(ctx, FRIT_ERR_INVALID, "schedule: host loop loop%" PRId64 ": the shape of a value in "
                              "its body depends on the loop index (buffer %d); shapes must be fixed for the loop",
                              o->id, b);
  }
  return extend_liveness(ctx, L, s);
}

void sched_loops_free(sched_state *S) {
  sched_loops *L = S->loops;
  if (!L) return;
  for (int l = 0; l < L->nloops; l++)
    free(L->loops[l].slot), free(L->loops[l].nbuf), free(L->loops[l].ncopy), free(L->loops[l].alias);
  free(L->loops), free(L->region), free(L->state), free(L->loop_at), free(L->reads), free(L->steps);
  free(L);
  S->loops = NULL;
}

/* ---------- hooks for explicit kernels ---------- */

bool sched_loops_inplace_ok(const sched_state *S, const frit_uop *t, const frit_uop *k) {
  const sched_loops *L = S->loops;
  if (!L || t->id >= L->nids || k->id >= L->nids) return true;
  return L->region[t->id] == L->region[k->id];
}

bool sched_loops_user_reads(const frit_uop *user, const frit_uop *t) {
  if (sched_is_loop_after(user) && user->src[0] == t) return false;
  if (user->op == FRIT_OP_LOOP && t->op == FRIT_OP_CARRY && t->arg.i0 == user->arg.i1) {
    for (int j = 0; j < loop_k(user); j++)
      if (loop_next(user, j) == t) return true;
    return loop_stop(user) == t;
  }
  return true;
}
