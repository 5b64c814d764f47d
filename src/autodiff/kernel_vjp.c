/* Reverse mode through user explicit kernels: the adjoint of AFTER(T, KERNEL) is another explicit
 * kernel over the same index space that recomputes each point's scalar program and runs it
 * backwards (seeds from the stores to T, atomic adds into the read tensors); rules in
 * docs/autodiff.md ("User explicit kernels"). */
#include "autodiff/kernel_vjp.h"

#include <stdio.h>

/* ---------- the forward values, recomputed in the reverse kernel ---------- */

static int home(kv *s, frit_uop *u) {
  int32_t v;
  if (kb_map_get(&s->home, u->id, &v)) return v;
  int h = 0;
  if (u->op == FRIT_OP_LOAD && kb_map_get(&s->after_of, u->id, &v)) {
    h = s->blocks[s->blocks[s->loops[v / 256].block].parent].depth;
  } else if (u->op == FRIT_OP_LOAD && kb_map_get(&s->phi_of, u->id, &v)) {
    h = s->blocks[s->phis[v].block].depth;
  } else if (u->op == FRIT_OP_LOAD) {
    if (kb_map_get(&s->fwd, u->id, &v)) h = home(s, s->fwdv.v[v]);
    else if (kb_map_get(&s->block_of, u->id, &v)) h = s->blocks[v].depth;
  } else if (u->op == FRIT_OP_ATOMIC) {
    if (kb_map_get(&s->block_of, u->id, &v)) h = s->blocks[v].depth;
  } else if (is_value_op((frit_op)u->op)) {
    for (uint32_t i = 0; i < u->nsrc; i++) {
      int hs = home(s, u->src[i]);
      if (hs > h) h = hs;
    }
  }
  if (!kb_map_put(&s->home, u->id, h)) kv_nomem(s);
  return h;
}

static bool tr_put(kv *s, frit_uop *u, frit_tensor *t) {
  if (!kv_grow(s->ctx, (void **)&s->trv, &s->captrv, s->ntrv + 1, sizeof *s->trv)) return false;
  s->trv[s->ntrv++] = t;
  if (s->loop_scope && !kb_list_push(&s->undo, u)) return kv_nomem(s);
  return kb_map_put(&s->tr, u->id, (int32_t)(s->ntrv - 1)) || kv_nomem(s);
}

/* Drops the translations made since undo held `mark` entries (values of a closed loop body). */
static void tr_undo(kv *s, size_t mark) {
  for (size_t i = mark; i < s->undo.n; i++) kb_map_put(&s->tr, s->undo.v[i]->id, -1); /* the slot exists */
  s->undo.n = mark;
}

/* u's value at this point of the reverse kernel. */
static frit_tensor *translate(kv *s, frit_uop *u) {
  int32_t v;
  if (kb_map_get(&s->tr, u->id, &v) && v >= 0) return s->trv[v];
  frit_op op = (frit_op)u->op;
  frit_tensor *r = NULL;
  if (op == FRIT_OP_LOAD && kb_map_get(&s->after_of, u->id, &v)) {
    r = s->loops[v / 256].v[v % 256].after;
    if (!r) return kv_refuse(s, "internal: a loop's result used before the loop"), NULL;
  } else if (op == FRIT_OP_LOAD && kb_map_get(&s->phi_of, u->id, &v)) {
    if (!(r = s->phis[v].after)) return kv_refuse(s, "internal: an if's result used before the if"), NULL;
  } else if (op == FRIT_OP_LOAD) {
    if (kb_map_get(&s->fwd, u->id, &v)) r = translate(s, s->fwdv.v[v]);
    else return kv_refuse(s, "internal: a read used before its statement"), NULL;
  } else if (op == FRIT_OP_ATOMIC) {
    return kv_refuse(s, "the value an atomic returns is used (it depends on the order the points run in)"), NULL;
  } else if (is_value_op(op)) {
    frit_uop *src[4];
    FRIT_ASSERT(u->nsrc <= 4);
    for (uint32_t i = 0; i < u->nsrc; i++) {
      frit_tensor *t = translate(s, u->src[i]);
      if (!t) return NULL;
      src[i] = TI_U(t);
    }
    frit_uop *n = frit_uop_replace_src(s->ctx, u, src, (int)u->nsrc);
    r = n ? frit_tensor_of(s->ctx, n) : NULL;
  } else {
    r = TI_T(u); /* constants, the kernel's indices, tensor-level 0-d values */
  }
  if (!r || !tr_put(s, u, r)) return NULL;
  return r;
}

/* The per-axis indices of an element address, recomputed. */
static int translate_index(kv *s, frit_uop *addr, frit_tensor **ix) {
  frit_uop *t = addr->src[0], *I = addr->src[1];
  int nd = t->op == FRIT_OP_DEFINE_REG ? 0 : ti_shape(s->ctx, TI_T(t))->ndim;
  if (nd == 0) return 0;
  for (int a = 0; a < nd; a++) {
    ix[a] = translate(s, nd == 1 ? I : I->src[a]);
    if (!ix[a]) return -1;
  }
  return nd;
}

/* ---------- adjoints ---------- */

static frit_tensor *acc_of(kv *s, frit_uop *target) {
  for (size_t i = 0; i < s->naccs; i++)
    if (s->accs[i].target == target) return s->accs[i].z;
  frit_tensor *t = TI_T(target);
  const frit_shape *sh = ti_shape(s->ctx, t);
  frit_tensor *z = frit_identity(s->ctx, ti_full(s->ctx, target->dtype, (frit_scalar){.f = 0}, sh->ndim, sh->dims));
  if (!z || !kv_grow(s->ctx, (void **)&s->accs, &s->capaccs, s->naccs + 1, sizeof *s->accs)) return NULL;
  s->accs[s->naccs++] = (kv_acc){target, z};
  return z;
}

/* The loop result an after-loop read u sees (loop * 256 + var), or -1. */
static int32_t after_id(const kv *s, const frit_uop *u) {
  int32_t v;
  return u->op == FRIT_OP_LOAD && kb_map_get(&s->after_of, u->id, &v) ? v : -1;
}
static kv_accvar *accvar(kv *s, int32_t id) { return &s->loops[id / 256].v[id % 256]; }

/* The node an accumulator starts from, following earlier loops that added into it (or NULL). */
static frit_uop *init_node(kv *s, int32_t id) {
  while (id >= 0 && !accvar(s, id)->init) {
    kv_accvar *a = accvar(s, id);
    id = a->init_loop * 256 + a->init_var;
  }
  return id >= 0 ? accvar(s, id)->init : NULL;
}

/* Adds c to the adjoint of u: in the adj map when u belongs to the current block (depth), else
 * into the variable of the enclosing if's (or loop's) sink. */
static bool adj_add(kv *s, frit_uop *u, frit_tensor *c, int depth) {
  if (!c) return s->ctx->status == FRIT_OK;
  if (!frit_dtype_is_float(u->dtype) || u->op == FRIT_OP_CONST || u->op == FRIT_OP_DEFINE_VAR) return true;
  if (home(s, u) < depth) {
    for (size_t i = 0; s->sink_nodes && i < s->sink_nodes->n; i++)
      if (s->sink_nodes->v[i] == u) {
        frit_tensor *cur = frit_kernel_var_get(s->ctx, s->sink_vars[i]);
        frit_tensor *sum = cur ? ti_alu2(s->ctx, FRIT_OP_ADD, cur, ti_cast(s->ctx, c, u->dtype)) : NULL;
        return sum && frit_kernel_var_set(s->ctx, s->sink_vars[i], sum) == FRIT_OK;
      }
    return kv_refuse(s, "internal: an adjoint leaves an if block or a loop without a sink");
  }
  int32_t v;
  if (kb_map_get(&s->adj, u->id, &v) && v >= 0) {
    s->adjv[v] = ti_alu2(s->ctx, FRIT_OP_ADD, s->adjv[v], c);
    return s->adjv[v] != NULL;
  }
  if (!kv_grow(s->ctx, (void **)&s->adjv, &s->capadjv, s->nadjv + 1, sizeof *s->adjv)) return false;
  s->adjv[s->nadjv++] = c;
  return kb_map_put(&s->adj, u->id, (int32_t)(s->nadjv - 1)) || kv_nomem(s);
}

/* The values of the current block (home == depth) reachable from u through value ops,
 * forwarded reads and the starting values of loop accumulators, into out (unsorted). */
static bool reach(kv *s, frit_uop *u, int depth, kb_map *seen, kb_list *out) {
  int32_t d;
  if (kb_map_get(seen, u->id, &d) || !frit_dtype_is_float(u->dtype) || home(s, u) != depth) return true;
  if (!kb_map_put(seen, u->id, 0) || !kb_list_push(out, u)) return kv_nomem(s);
  if (after_id(s, u) >= 0) {
    frit_uop *n = init_node(s, after_id(s, u));
    return !n || reach(s, n, depth, seen, out);
  }
  if (u->op == FRIT_OP_LOAD) {
    if (kb_map_get(&s->fwd, u->id, &d)) return reach(s, s->fwdv.v[d], depth, seen, out);
    return true;
  }
  if (!is_value_op((frit_op)u->op)) return true;
  for (uint32_t i = 0; i < u->nsrc; i++)
    if (!reach(s, u->src[i], depth, seen, out)) return false;
  return true;
}

static int by_id_desc(const void *a, const void *b) {
  uint32_t x = (*(frit_uop *const *)a)->id, y = (*(frit_uop *const *)b)->id;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* The adjoint g of what a loop left in a variable: the loop's terms take it (when the loop is
 * reversed), and so does the value the variable started from. */
static bool acc_adj(kv *s, int32_t id, frit_tensor *g, int depth) {
  for (; id >= 0; id = accvar(s, id)->init ? -1 : accvar(s, id)->init_loop * 256 + accvar(s, id)->init_var) {
    kv_accvar *a = accvar(s, id);
    a->adj = a->adj ? ti_alu2(s->ctx, FRIT_OP_ADD, a->adj, g) : g;
    if (!a->adj) return false;
    if (a->init) return adj_add(s, a->init, g, depth);
  }
  return true;
}

/* Sends the adjoints of the block's values back to their sources, in reverse topological order
 * (ids), ending in atomic adds into the accumulators of the tensors read. Each adjoint is
 * consumed, so that a later round (after a loop is reversed) sends only what is new. */
static bool propagate(kv *s, const kb_list *roots, int depth) {
  kb_map seen = {0};
  kb_list order = {0};
  bool ok = true;
  for (size_t i = 0; ok && i < roots->n; i++) ok = reach(s, roots->v[i], depth, &seen, &order);
  if (ok && order.n) qsort(order.v, order.n, sizeof *order.v, by_id_desc);
  for (size_t k = 0; ok && k < order.n; k++) {
    frit_uop *u = order.v[k];
    int32_t v, f;
    if (!kb_map_get(&s->adj, u->id, &v) || v < 0) continue;
    frit_tensor *g = s->adjv[v];
    if (!(ok = kb_map_put(&s->adj, u->id, -1) || kv_nomem(s))) break;
    frit_op op = (frit_op)u->op;
    if (after_id(s, u) >= 0) {
      ok = acc_adj(s, after_id(s, u), g, depth);
    } else if (op == FRIT_OP_LOAD && kb_map_get(&s->phi_of, u->id, &f)) {
      kv_phi *p = &s->phis[f];
      ok = (p->adj = p->adj ? ti_alu2(s->ctx, FRIT_OP_ADD, p->adj, g) : g) != NULL;
    } else if (op == FRIT_OP_LOAD && kb_map_get(&s->fwd, u->id, &f)) {
      ok = adj_add(s, s->fwdv.v[f], g, depth);
    } else if (op == FRIT_OP_LOAD) {
      frit_uop *a = addr_of(u), *target = a->src[0];
      if (target->op == FRIT_OP_DEFINE_REG || !s->wants(s->env, target)) continue;
      frit_tensor *ix[FRIT_MAX_DIMS], *z = acc_of(s, target);
      int nd = z ? translate_index(s, a, ix) : -1;
      ok = nd >= 0 && frit_kernel_atomic(s->ctx, FRIT_ATOMIC_ADD, z, nd, ix, g) != NULL;
    } else if (is_value_op(op)) {
      frit_tensor *t = translate(s, u);
      if (!(ok = t != NULL)) break;
      frit_uop *n = TI_U(t);
      if (n->op != u->op) continue; /* a symbolic value: no leaf below it takes a gradient */
      bool want[4] = {false, false, false, false};
      frit_tensor *out[4] = {NULL, NULL, NULL, NULL};
      bool any = false;
      for (uint32_t i = 0; i < u->nsrc && i < 4; i++) {
        want[i] = frit_dtype_is_float(u->src[i]->dtype) && !(op == FRIT_OP_WHERE && i == 0);
        any |= want[i];
      }
      if (!any && op != FRIT_OP_BITCAST) continue;
      if (!(ok = ad_op_vjp(s->ctx, n, g, want, out))) break;
      for (uint32_t i = 0; ok && i < u->nsrc && i < 4; i++)
        if (want[i] && out[i]) ok = adj_add(s, u->src[i], out[i], depth);
    } else if (op == FRIT_OP_ATOMIC) {
      ok = kv_refuse(s, "the value an atomic returns is used (it depends on the order the points run in)");
    } else if (op != FRIT_OP_RANGE) {
      /* a tensor-level 0-d value used as a scalar: every point adds its share */
      if (!s->wants(s->env, u)) continue;
      frit_tensor *z = acc_of(s, u);
      ok = z && frit_kernel_atomic(s->ctx, FRIT_ATOMIC_ADD, z, 0, NULL, g) != NULL;
    }
  }
  free(order.v);
  kb_map_free(&seen);
  return ok && s->ctx->status == FRIT_OK;
}

/* The outer values (home <= depth) that adjoints inside a block reach first. */
static bool frontier_walk(kv *s, frit_uop *u, int depth, kb_map *seen, kb_list *out) {
  int32_t d;
  if (kb_map_get(seen, u->id, &d) || !frit_dtype_is_float(u->dtype)) return true;
  if (!kb_map_put(seen, u->id, 0)) return kv_nomem(s);
  if (u->op == FRIT_OP_CONST || u->op == FRIT_OP_DEFINE_VAR) return true;
  if (home(s, u) <= depth) return kb_list_push(out, u) || kv_nomem(s);
  if (after_id(s, u) >= 0) {
    frit_uop *n = init_node(s, after_id(s, u));
    return !n || frontier_walk(s, n, depth, seen, out);
  }
  if (u->op == FRIT_OP_LOAD && kb_map_get(&s->phi_of, u->id, &d))
    return frontier_walk(s, s->phis[d].br[0], depth, seen, out) && frontier_walk(s, s->phis[d].br[1], depth, seen, out);
  if (u->op == FRIT_OP_LOAD) {
    if (kb_map_get(&s->fwd, u->id, &d)) return frontier_walk(s, s->fwdv.v[d], depth, seen, out);
    return true;
  }
  if (!is_value_op((frit_op)u->op)) return true;
  for (uint32_t i = 0; i < u->nsrc; i++)
    if (!frontier_walk(s, u->src[i], depth, seen, out)) return false;
  return true;
}

static kv_loop *loop_at(kv *s, const frit_uop *end) {
  int32_t li = 0;
  bool found = kb_map_get(&s->loop_of, end->id, &li);
  FRIT_ASSERT(found);
  return &s->loops[li];
}

static bool frontier(kv *s, frit_uop *seq, int depth, kb_map *seen, kb_list *out) {
  for (uint32_t i = 0; i < seq->nsrc; i++) {
    frit_uop *st = seq->src[i];
    if (st->op == FRIT_OP_IF) {
      for (uint32_t b = 1; b < st->nsrc; b++)
        if (!frontier(s, st->src[b], depth, seen, out)) return false;
    } else if (st->op == FRIT_OP_END) {
      kv_loop *L = loop_at(s, st);
      for (int k = 0; k < L->nv; k++)
        if (!frontier_walk(s, L->v[k].e, depth, seen, out)) return false;
      if (!frontier(s, st->src[0], depth, seen, out)) return false; /* its writes */
    } else if ((st->op == FRIT_OP_STORE || st->op == FRIT_OP_ATOMIC) && addr_of(st)->src[0] == s->T) {
      if (!frontier_walk(s, st->src[1], depth, seen, out)) return false;
    }
  }
  return true;
}

/* Declares a zero kernel variable per sink (the outer values a nested block sends adjoints to). */
static int *sink_vars(kv *s, const kb_list *sinks) {
  int *vars = malloc((sinks->n ? sinks->n : 1) * sizeof *vars);
  if (!vars) return kv_nomem(s), NULL;
  for (size_t i = 0; i < sinks->n; i++) {
    frit_tensor *zero = ti_full(s->ctx, sinks->v[i]->dtype, (frit_scalar){.f = 0}, 0, NULL);
    if (!zero || (vars[i] = frit_kernel_var(s->ctx, sinks->v[i]->dtype, zero)) < 0) {
      free(vars);
      return NULL;
    }
  }
  return vars;
}

/* After a nested block: its sinks' totals join the adjoints here, and become roots. */
static bool drain_sinks(kv *s, const kb_list *sinks, const int *vars, int depth, kb_list *roots) {
  for (size_t i = 0; i < sinks->n; i++)
    if (!adj_add(s, sinks->v[i], frit_kernel_var_get(s->ctx, vars[i]), depth) ||
        (roots && !kb_list_push(roots, sinks->v[i])))
      return false;
  return true;
}

/* Extra seeds of a branch: the values it set a variable to that is read after the if. */
typedef struct kv_seeds {
  frit_uop *node[16];
  frit_tensor *g[16];
  int n;
} kv_seeds;

static bool rev_block(kv *s, frit_uop *seq, int depth, const kv_seeds *extra);

/* An if reversed: the adjoint of what it left in variables goes to the branch that set it (a
 * seed inside that branch) or, for a branch that left the value from before, to that value
 * outside, masked by the condition. */
static bool rev_if(kv *s, frit_uop *st, int depth, kb_list *roots) {
  kb_map seen = {0};
  kb_list sinks = {0};
  int *vars = NULL;
  bool ok = true;
  kv_seeds br[2] = {{.n = 0}, {.n = 0}};
  frit_tensor *cond = translate(s, st->src[0]);
  for (size_t i = 0; ok && cond && i < s->nphis; i++) {
    kv_phi *p = &s->phis[i];
    if (p->ifst != st || !p->adj) continue;
    for (int k = 0; ok && k < 2; k++) {
      if (p->inside[k]) {
        if (br[k].n == 16) {
          ok = kv_refuse(s, "more than 16 variables set in one branch of an if are read after it");
          break;
        }
        br[k].node[br[k].n] = p->br[k], br[k].g[br[k].n++] = p->adj;
        ok = frontier_walk(s, p->br[k], depth, &seen, &sinks);
      } else {
        frit_tensor *zero = ti_full(s->ctx, frit_dtype_scalar(p->reg->dtype), (frit_scalar){.f = 0}, 0, NULL);
        frit_tensor *gk = k == 0 ? ti_where(s->ctx, cond, p->adj, zero) : ti_where(s->ctx, cond, zero, p->adj);
        ok = gk && adj_add(s, p->br[k], gk, depth) && kb_list_push(roots, p->br[k]);
      }
    }
  }
  for (uint32_t b = 1; ok && b < st->nsrc; b++) ok = frontier(s, st->src[b], depth, &seen, &sinks);
  kb_map_free(&seen);
  if (ok) ok = (vars = sink_vars(s, &sinks)) != NULL;
  kb_list *save_nodes = s->sink_nodes;
  int *save_vars = s->sink_vars;
  if (ok && cond && frit_kernel_if_begin(s->ctx, cond) == FRIT_OK) {
    s->sink_nodes = &sinks, s->sink_vars = vars;
    ok = rev_block(s, st->src[1], depth + 1, &br[0]);
    if (ok && st->nsrc > 2) ok = frit_kernel_else(s->ctx) == FRIT_OK && rev_block(s, st->src[2], depth + 1, &br[1]);
    s->sink_nodes = save_nodes, s->sink_vars = save_vars;
    ok = ok && frit_kernel_if_end(s->ctx) == FRIT_OK;
  } else ok = false;
  ok = ok && drain_sinks(s, &sinks, vars, depth, roots);
  free(vars);
  free(sinks.v);
  return ok && s->ctx->status == FRIT_OK;
}

static bool replay(kv *s, frit_uop *seq);

/* Opens the reverse kernel's copy of loop L (0 .. trip, the forward index recomputed from it). */
static bool open_loop(kv *s, kv_loop *L) {
  frit_tensor *trip = translate(s, L->range->src[0]), *k = NULL;
  frit_tensor *zero = frit_scalar_i(s->ctx, FRIT_I64, 0), *one = frit_scalar_i(s->ctx, FRIT_I64, 1);
  if (!trip || frit_kernel_loop_begin(s->ctx, zero, trip, one, &k) != FRIT_OK) return false;
  s->loop_scope++;
  return tr_put(s, L->range, k);
}

static bool close_loop(kv *s, size_t mark) {
  s->loop_scope--;
  tr_undo(s, mark);
  return frit_kernel_loop_end(s->ctx) == FRIT_OK;
}

/* Phase one: the loop runs forward again so that what it leaves in its variables is known. */
static bool replay_loop(kv *s, kv_loop *L) {
  if (L->nv == 0) return true; /* nothing of it is needed outside it */
  for (int k = 0; k < L->nv; k++) {
    kv_accvar *a = &L->v[k];
    frit_tensor *init = a->init ? translate(s, a->init) : accvar(s, a->init_loop * 256 + a->init_var)->after;
    if (!init || (a->var = frit_kernel_var(s->ctx, frit_dtype_scalar(a->reg->dtype), init)) < 0) return false;
  }
  size_t mark = s->undo.n;
  if (!open_loop(s, L) || !replay(s, L->end->src[0])) return false;
  for (int k = 0; k < L->nv; k++) {
    frit_tensor *cur = frit_kernel_var_get(s->ctx, L->v[k].var), *e = translate(s, L->v[k].e);
    if (!cur || !e || frit_kernel_var_set(s->ctx, L->v[k].var, ti_alu2(s->ctx, FRIT_OP_ADD, cur, e)) != FRIT_OK)
      return false;
  }
  if (!close_loop(s, mark)) return false;
  for (int k = 0; k < L->nv; k++)
    if (!(L->v[k].after = frit_kernel_var_get(s->ctx, L->v[k].var))) return false;
  return true;
}

/* A write of the block to T, in the reverse pass: if it is what the element ends up with, its
 * value's adjoint is gC there; a store's element is zeroed in the pass-through later. */
static bool seed_write(kv *s, frit_uop *st, int depth, kb_list *roots, kb_list *zeroed) {
  frit_ctx *ctx = s->ctx;
  if ((st->op != FRIT_OP_STORE && st->op != FRIT_OP_ATOMIC) || addr_of(st)->src[0] != s->T) return true;
  if (st->op == FRIT_OP_ATOMIC && st->arg.i0 != FRIT_ATOMIC_ADD)
    return kv_refuse(s, "an atomic min, max or exchange writes the differentiated tensor (only atomic add is linear)");
  int32_t bb = 0;
  kb_map_get(&s->block_of, st->id, &bb);
  const kv_event *later = kv_next_store(s, st, bb);
  if (later && !ancestor_or_self(s, later->block, bb))
    return kv_refuse(s, "a point writes the same element twice, the second time inside an if block (write it once, "
                        "choosing the value with where)");
  frit_tensor *ix[FRIT_MAX_DIMS];
  int nd = translate_index(s, addr_of(st), ix);
  if (nd < 0) return false;
  if (!later) {
    frit_tensor *gv = frit_kernel_load(ctx, s->g_src, nd, ix);
    if (!gv || !adj_add(s, st->src[1], ti_cast(ctx, gv, st->src[1]->dtype), depth) || !kb_list_push(roots, st->src[1]))
      return false;
  }
  return !(s->pass && st->op == FRIT_OP_STORE) || kb_list_push(zeroed, st) || kv_nomem(s);
}

/* The pass-through cotangent loses the elements the block stored, after every read of them. */
static bool zero_writes(kv *s, const kb_list *zeroed) {
  for (size_t i = 0; i < zeroed->n; i++) {
    frit_tensor *ix[FRIT_MAX_DIMS];
    int nd = translate_index(s, addr_of(zeroed->v[i]), ix);
    if (nd < 0 || frit_kernel_store(s->ctx, s->g_src, nd, ix, ti_full(s->ctx, s->T->dtype, (frit_scalar){.f = 0}, 0, NULL)) != FRIT_OK)
      return false;
  }
  return true;
}

/* Whether a block (with its ifs) writes T. */
static bool writes_T(const kv *s, const frit_uop *seq) {
  for (uint32_t i = 0; i < seq->nsrc; i++) {
    const frit_uop *st = seq->src[i];
    if ((st->op == FRIT_OP_STORE || st->op == FRIT_OP_ATOMIC) && addr_of(st)->src[0] == s->T) return true;
    if (st->op == FRIT_OP_IF)
      for (uint32_t b = 1; b < st->nsrc; b++)
        if (writes_T(s, st->src[b])) return true;
  }
  return false;
}

/* The loop reversed: each iteration's terms take their variable's adjoint (an accumulator's
 * result depends on every term with slope 1), and the body runs backwards per iteration as a
 * block of its own (its writes seeded from gC, its ifs reversed). */
static bool rev_loop(kv *s, kv_loop *L, int depth, kb_list *roots) {
  frit_uop *seq = L->end->src[0];
  bool any = writes_T(s, seq);
  for (int k = 0; k < L->nv; k++) any |= L->v[k].adj != NULL && frit_dtype_is_float(L->v[k].e->dtype);
  if (!any) return true;
  kv_seeds terms = {.n = 0};
  for (int k = 0; k < L->nv; k++)
    if (L->v[k].adj) {
      if (terms.n == 16) return kv_refuse(s, "a loop adds into more than 16 variables whose results take gradients");
      terms.node[terms.n] = L->v[k].e, terms.g[terms.n++] = L->v[k].adj;
    }
  kb_map seen = {0};
  kb_list sinks = {0};
  bool ok = frontier(s, seq, depth, &seen, &sinks);
  for (int k = 0; ok && k < L->nv; k++) ok = frontier_walk(s, L->v[k].e, depth, &seen, &sinks);
  kb_map_free(&seen);
  int *vars = ok ? sink_vars(s, &sinks) : NULL;
  size_t mark = s->undo.n;
  ok = vars && open_loop(s, L);
  kb_list *save_nodes = s->sink_nodes;
  int *save_vars = s->sink_vars;
  s->sink_nodes = &sinks, s->sink_vars = vars;
  ok = ok && rev_block(s, seq, depth + 1, &terms);
  s->sink_nodes = save_nodes, s->sink_vars = save_vars;
  ok = ok && close_loop(s, mark) && drain_sinks(s, &sinks, vars, depth, roots);
  free(vars);
  free(sinks.v);
  return ok && s->ctx->status == FRIT_OK;
}

/* Phase one for an if whose results (variables read after it) are needed: it runs again, each
 * branch setting a reverse-kernel variable to the value that branch leaves. */
static bool replay_if(kv *s, frit_uop *st) {
  bool any = false;
  for (size_t i = 0; i < s->nphis; i++) any |= s->phis[i].ifst == st;
  if (!any) return true;
  for (size_t i = 0; i < s->nphis; i++) {
    kv_phi *p = &s->phis[i];
    if (p->ifst != st) continue;
    frit_tensor *zero = ti_full(s->ctx, frit_dtype_scalar(p->reg->dtype), (frit_scalar){.f = 0}, 0, NULL);
    if (!zero || (p->var = frit_kernel_var(s->ctx, frit_dtype_scalar(p->reg->dtype), zero)) < 0) return false;
  }
  frit_tensor *cond = translate(s, st->src[0]);
  if (!cond || frit_kernel_if_begin(s->ctx, cond) != FRIT_OK) return false;
  for (int k = 0; k < 2; k++) {
    if (k == 1 && frit_kernel_else(s->ctx) != FRIT_OK) return false;
    size_t mark = s->undo.n;
    s->loop_scope++;
    bool ok = (k + 1 >= (int)st->nsrc || replay(s, st->src[k + 1]));
    for (size_t i = 0; ok && i < s->nphis; i++) {
      kv_phi *p = &s->phis[i];
      frit_tensor *v = p->ifst == st ? translate(s, p->br[k]) : NULL;
      ok = p->ifst != st || (v && frit_kernel_var_set(s->ctx, p->var, v) == FRIT_OK);
    }
    s->loop_scope--;
    tr_undo(s, mark);
    if (!ok) return false;
  }
  if (frit_kernel_if_end(s->ctx) != FRIT_OK) return false;
  for (size_t i = 0; i < s->nphis; i++)
    if (s->phis[i].ifst == st && !(s->phis[i].after = frit_kernel_var_get(s->ctx, s->phis[i].var))) return false;
  return true;
}

/* Phase one of a block: its reads recomputed, its loops and result-giving ifs replayed. */
static bool replay(kv *s, frit_uop *seq) {
  for (uint32_t i = 0; i < seq->nsrc; i++) { /* in program order */
    frit_uop *st = seq->src[i];
    int32_t f;
    if (st->op == FRIT_OP_END) {
      if (!replay_loop(s, loop_at(s, st))) return false;
      continue;
    }
    if (st->op == FRIT_OP_IF) {
      if (!replay_if(s, st)) return false;
      continue;
    }
    if (st->op != FRIT_OP_LOAD || is_var_addr(addr_of(st)) || kb_map_get(&s->fwd, st->id, &f)) continue;
    frit_tensor *ix[FRIT_MAX_DIMS];
    int nd = translate_index(s, addr_of(st), ix);
    frit_tensor *r = nd >= 0 ? frit_kernel_load(s->ctx, TI_T(addr_of(st)->src[0]), nd, ix) : NULL;
    if (!r || !tr_put(s, st, r)) return false;
  }
  return true;
}

/* The reverse of one block: its reads recomputed (and its loops and result-giving ifs
 * replayed), the seeds of its writes to T and the extra seeds, the adjoints propagated, then its
 * ifs and loops reversed last to first (each once the adjoints of its results are complete, each
 * followed by a propagation of what it sent out), and the elements of T it stored zeroed in the
 * pass-through cotangent last (after every read of them). */
static bool rev_block(kv *s, frit_uop *seq, int depth, const kv_seeds *extra) {
  frit_ctx *ctx = s->ctx;
  if (!replay(s, seq)) return false;
  kb_list roots = {0}, zeroed = {0};
  bool ok = true;
  for (uint32_t i = seq->nsrc; ok && i-- > 0;) ok = seed_write(s, seq->src[i], depth, &roots, &zeroed);
  for (int i = 0; ok && extra && i < extra->n; i++)
    ok = adj_add(s, extra->node[i], extra->g[i], depth) && kb_list_push(&roots, extra->node[i]);
  ok = ok && propagate(s, &roots, depth);
  for (uint32_t i = seq->nsrc; ok && i-- > 0;) { /* ifs and loops, last first */
    frit_uop *st = seq->src[i];
    if (st->op != FRIT_OP_END && st->op != FRIT_OP_IF) continue;
    roots.n = 0;
    ok = (st->op == FRIT_OP_IF ? rev_if(s, st, depth, &roots) : rev_loop(s, loop_at(s, st), depth, &roots)) &&
         propagate(s, &roots, depth);
  }
  ok = ok && zero_writes(s, &zeroed);
  free(roots.v);
  free(zeroed.v);
  return ok && ctx->status == FRIT_OK;
}

static void kv_free(kv *s) {
  for (size_t i = 0; i < s->nloops; i++) free(s->loops[i].v);
  free(s->loops), free(s->undo.v), kb_map_free(&s->loop_of), kb_map_free(&s->after_of);
  free(s->phis), free(s->ifnodes.v), kb_map_free(&s->phi_of);
  free(s->blocks), free(s->events), free(s->trv), free(s->adjv), free(s->accs), free(s->fwdv.v);
  kb_map_free(&s->block_of), kb_map_free(&s->fwd), kb_map_free(&s->home), kb_map_free(&s->tr), kb_map_free(&s->adj);
}

bool ad_kernel_vjp(frit_ctx *ctx, frit_uop *after, frit_tensor *g, ad_wants_fn wants, void *env, ad_contrib **out,
                   size_t *nout) {
  *out = NULL, *nout = 0;
  frit_uop *K = after->src[1];
  FRIT_ASSERT(after->op == FRIT_OP_AFTER && K->op == FRIT_OP_KERNEL);
  kv s = {.ctx = ctx, .kernel = K, .T = after->src[0], .g = g, .wants = wants, .env = env};
  s.name = K->arg.blob ? (const char *)K->arg.blob : "";
  char db[32];
  if (!frit_dtype_is_float(s.T->dtype)) {
    ti_fail(ctx, "grad", (frit_tensor *const[]){TI_T(after)}, 1,
            "frit_vjp through explicit kernel '%s': the written tensor has dtype %s; kernels differentiate on real floats",
            s.name, frit_dtype_name(s.T->dtype, db, sizeof db));
    return false;
  }
  kb_state *ks = kb_get(ctx, false);
  if (ks && ks->open) return kv_refuse(&s, "a kernel is open (call frit_vjp outside kernels)");
  frit_uop *body = K->src[0], *seq = body->op == FRIT_OP_END ? body->src[0] : body;
  int ndim = body->op == FRIT_OP_END ? (int)body->nsrc - 1 : 0;
  bool ok = kv_scan(&s, seq);
  s.pass = wants(env, s.T);
  s.g_src = s.pass ? frit_identity(ctx, g) : g;
  frit_uop *dims[FRIT_MAX_DIMS];
  frit_tensor *idx[FRIT_MAX_DIMS];
  for (int a = 0; a < ndim; a++) dims[a] = body->src[1 + a]->src[0];
  char name[96];
  snprintf(name, sizeof name, "%s_vjp", s.name);
  /* the user's last kernel's results (frit_kernel_written) survive the reverse kernel */
  kb_list keep_old = {0}, keep_new = {0};
  for (size_t i = 0; ok && ks && i < ks->res_new.n; i++)
    ok = (kb_list_push(&keep_old, ks->res_old.v[i]) && kb_list_push(&keep_new, ks->res_new.v[i])) || kv_nomem(&s);
  if (!ok || !s.g_src || frit_kernel_begin(ctx, name, ndim, dims, idx) != FRIT_OK) {
    free(keep_old.v), free(keep_new.v);
    kv_free(&s);
    return false;
  }
  ok = rev_block(&s, seq, 0, NULL);
  frit_status saved = ctx->status;
  char msg[sizeof ctx->errmsg];
  memcpy(msg, ctx->errmsg, sizeof msg);
  int nw = frit_kernel_end(ctx);
  if (!ok || nw < 0) {
    if (saved != FRIT_OK) ctx->status = saved, memcpy(ctx->errmsg, msg, sizeof msg);
    ok = false;
    nw = 0;
  }
  /* each accumulator's new version goes to its target; T also takes the pass-through */
  ad_contrib *c = ok ? calloc(s.naccs + 1, sizeof *c) : NULL;
  if (ok && !c) ok = kv_nomem(&s);
  size_t n = 0;
  for (int k = 0; ok && k < nw; k++) {
    frit_tensor *old = NULL, *nv = NULL;
    frit_kernel_written(ctx, k, &old, &nv);
    if (old == s.g_src) {
      c[n++] = (ad_contrib){s.T, nv};
      continue;
    }
    for (size_t i = 0; i < s.naccs; i++)
      if (s.accs[i].z == old) c[n++] = (ad_contrib){s.accs[i].target, nv};
  }
  bool zeroed = false;
  for (size_t i = 0; i < n; i++) zeroed |= c[i].target == s.T && TI_U(c[i].value)->op == FRIT_OP_AFTER &&
                                           TI_U(c[i].value)->src[0] == TI_U(s.g_src);
  if (ok && s.pass && !zeroed) c[n++] = (ad_contrib){s.T, g}; /* written only by atomic adds: all of g passes */
  kb_state *st = kb_get(ctx, false);
  FRIT_ASSERT(st);
  st->res_old.n = st->res_new.n = 0;
  for (size_t i = 0; i < keep_new.n; i++)
    if (!kb_list_push(&st->res_old, keep_old.v[i]) || !kb_list_push(&st->res_new, keep_new.v[i])) {
      st->res_old.n = st->res_new.n = 0;
      ok = kv_nomem(&s);
      break;
    }
  free(keep_old.v), free(keep_new.v);
  kv_free(&s);
  if (!ok) {
    free(c);
    return false;
  }
  *out = c, *nout = n;
  return true;
}
