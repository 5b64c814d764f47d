/* Reverse mode through user explicit kernels: the adjoint of AFTER(T, KERNEL) is another explicit
 * kernel over the same index space that recomputes each point's scalar program and runs it
 * backwards (seeds from the stores to T, atomic adds into the read tensors); rules in
 * docs/autodiff.md ("Explicit kernels"). */
#include "autodiff/autodiff.h"
#include "tensor/kernel_build.h"

#include <stdio.h>

/* A write of the forward body (STORE or ATOMIC, to a tensor or a kernel variable). */
typedef struct kv_event {
  frit_uop *stmt;
  int block;
} kv_event;

typedef struct kv_block {
  int parent, depth;
  uint32_t ifn; /* the IF whose branch it is (node id; 0 for the kernel's block) */
  int branch;   /* 1 then, 2 else */
} kv_block;

/* An accumulator of the adjoints of one read tensor (or 0-d value): a fresh zero buffer the
 * reverse kernel adds into. */
typedef struct kv_acc {
  frit_uop *target;
  frit_tensor *z;
} kv_acc;

typedef struct kv {
  frit_ctx *ctx;
  const char *name;
  frit_uop *kernel, *T;
  frit_tensor *g, *g_src; /* the cotangent of AFTER(T, K); what the seeds read (fresh when zeroed) */
  bool pass;              /* T's own cotangent is wanted: written elements are zeroed in g_src */
  ad_wants_fn wants;
  void *env;
  kv_block *blocks;
  size_t nblocks, capblocks;
  kv_event *events;
  size_t nevents, capevents;
  kb_map block_of;  /* LOAD/STORE/ATOMIC id -> its block */
  kb_map fwd;       /* forwarded LOAD id -> index in fwdv of the value it reads */
  kb_list fwdv;
  kb_map home;      /* value id -> depth of the innermost block whose leaves it uses */
  kb_map tr;        /* old value id -> index in trv: its recomputation in the reverse kernel */
  frit_tensor **trv;
  size_t ntrv, captrv;
  kb_map adj;       /* old value id -> index in adjv */
  frit_tensor **adjv;
  size_t nadjv, capadjv;
  kv_acc *accs;
  size_t naccs, capaccs;
  /* the sinks of the innermost open if: outer values that inner adjoints add into */
  kb_list *sink_nodes;
  int *sink_vars;
} kv;

static bool grow(frit_ctx *ctx, void **p, size_t *cap, size_t need, size_t elt) {
  if (need <= *cap) return true;
  size_t c = *cap ? *cap * 2 : 16;
  while (c < need) c *= 2;
  void *q = realloc(*p, c * elt);
  if (!q) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "out of memory");
    return false;
  }
  *p = q, *cap = c;
  return true;
}

static bool refuse(kv *s, const char *why) {
  if (s->ctx->status == FRIT_OK)
    ti_fail(s->ctx, "grad", (frit_tensor *const[]){TI_T(s->T)}, 1,
            "frit_vjp through explicit kernel '%s': %s", s->name, why);
  return false;
}

static bool nomem(kv *s) {
  frit_set_error(s->ctx, FRIT_ERR_NOMEM, "out of memory");
  return false;
}

static bool is_value_op(frit_op op) {
  return (frit_op_flags(op) & FRIT_F_ALU) || op == FRIT_OP_CAST || op == FRIT_OP_BITCAST;
}
static bool is_var_addr(const frit_uop *addr) { return addr->src[0]->op == FRIT_OP_DEFINE_REG; }
static frit_uop *addr_of(const frit_uop *stmt) { return stmt->src[0]; }
static int64_t serial_of(const frit_uop *stmt) { return stmt->arg.i1; }

static bool ancestor_or_self(const kv *s, int a, int b) {
  for (; b >= 0; b = s->blocks[b].parent)
    if (a == b) return true;
  return false;
}

/* Whether no point runs both blocks: they lie in the two branches of one if. */
static bool exclusive(const kv *s, int a, int b) {
  for (int x = a; x >= 0; x = s->blocks[x].parent)
    for (int y = b; y >= 0; y = s->blocks[y].parent)
      if (s->blocks[x].parent == s->blocks[y].parent && s->blocks[x].ifn && s->blocks[x].ifn == s->blocks[y].ifn &&
          s->blocks[x].branch != s->blocks[y].branch)
        return true;
  return false;
}

/* The first STORE after w at w's address (program order), or NULL. */
static const kv_event *next_store(const kv *s, const frit_uop *w, int wb) {
  const kv_event *best = NULL;
  for (size_t i = 0; i < s->nevents; i++) {
    const frit_uop *e = s->events[i].stmt;
    if (exclusive(s, s->events[i].block, wb)) continue;
    if (e->op == FRIT_OP_STORE && addr_of(e) == addr_of(w) && serial_of(e) > serial_of(w) &&
        (!best || serial_of(e) < serial_of(best->stmt)))
      best = &s->events[i];
  }
  return best;
}

/* ---------- pre-scan: blocks, writes, which reads see a value this point stored ---------- */

static bool scan_block(kv *s, frit_uop *seq, int parent, uint32_t ifn, int branch);

static bool scan_load(kv *s, frit_uop *ld, int b) {
  frit_uop *a = addr_of(ld);
  const kv_event *last = NULL;
  for (size_t i = 0; i < s->nevents; i++) {
    const frit_uop *e = s->events[i].stmt;
    if (exclusive(s, s->events[i].block, b)) continue;
    if (addr_of(e) == a && (!last || serial_of(e) > serial_of(last->stmt))) last = &s->events[i];
  }
  if (!last) {
    if (is_var_addr(a)) return refuse(s, "internal: a kernel variable is read before it is set");
    return true; /* reads the value before the kernel */
  }
  if (last->stmt->op == FRIT_OP_ATOMIC)
    return refuse(s, "a point reads an element after an atomic update of it (the value depends on the other points)");
  if (!ancestor_or_self(s, last->block, b))
    return refuse(s, is_var_addr(a) ? "a kernel variable is read after an if block that may have set it (set it on "
                                      "both paths before the if instead)"
                                    : "a point reads an element that an if block before the read may have written");
  if (!kb_list_push(&s->fwdv, last->stmt->src[1]) || !kb_map_put(&s->fwd, ld->id, (int32_t)(s->fwdv.n - 1)))
    return nomem(s);
  return true;
}

static bool scan_block(kv *s, frit_uop *seq, int parent, uint32_t ifn, int branch) {
  if (!grow(s->ctx, (void **)&s->blocks, &s->capblocks, s->nblocks + 1, sizeof *s->blocks))
    return false;
  int b = (int)s->nblocks++;
  s->blocks[b] = (kv_block){parent, parent < 0 ? 0 : s->blocks[parent].depth + 1, ifn, branch};
  for (uint32_t i = 0; i < seq->nsrc; i++) {
    frit_uop *st = seq->src[i];
    frit_op op = (frit_op)st->op;
    if (op == FRIT_OP_LOAD) {
      if (!kb_map_put(&s->block_of, st->id, b)) return nomem(s);
      if (!scan_load(s, st, b)) return false;
    } else if (op == FRIT_OP_STORE || op == FRIT_OP_ATOMIC) {
      if (!kb_map_put(&s->block_of, st->id, b)) return nomem(s);
      if (!grow(s->ctx, (void **)&s->events, &s->capevents, s->nevents + 1, sizeof *s->events)) return false;
      s->events[s->nevents++] = (kv_event){st, b};
    } else if (op == FRIT_OP_IF) {
      if (!scan_block(s, st->src[1], b, st->id, 1)) return false;
      if (st->nsrc > 2 && !scan_block(s, st->src[2], b, st->id, 2)) return false;
    } else if (op == FRIT_OP_END || op == FRIT_OP_BREAK || op == FRIT_OP_CONTINUE) {
      return refuse(s, "it has a loop inside its body; gradients through per-point loops are not implemented "
                       "(write the loop out as kernel statements, or use tensor ops)");
    } else {
      return refuse(s, "internal: an unknown statement in its body");
    }
  }
  return true;
}

/* ---------- the forward values, recomputed in the reverse kernel ---------- */

static int home(kv *s, frit_uop *u) {
  int32_t v;
  if (kb_map_get(&s->home, u->id, &v)) return v;
  int h = 0;
  if (u->op == FRIT_OP_LOAD) {
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
  if (!kb_map_put(&s->home, u->id, h)) nomem(s);
  return h;
}

static bool tr_put(kv *s, const frit_uop *u, frit_tensor *t) {
  if (!grow(s->ctx, (void **)&s->trv, &s->captrv, s->ntrv + 1, sizeof *s->trv)) return false;
  s->trv[s->ntrv++] = t;
  return kb_map_put(&s->tr, u->id, (int32_t)(s->ntrv - 1)) || nomem(s);
}

/* u's value at this point of the reverse kernel. */
static frit_tensor *translate(kv *s, frit_uop *u) {
  int32_t v;
  if (kb_map_get(&s->tr, u->id, &v)) return s->trv[v];
  frit_op op = (frit_op)u->op;
  frit_tensor *r = NULL;
  if (op == FRIT_OP_LOAD) {
    if (kb_map_get(&s->fwd, u->id, &v)) r = translate(s, s->fwdv.v[v]);
    else return refuse(s, "internal: a read used before its statement"), NULL;
  } else if (op == FRIT_OP_ATOMIC) {
    return refuse(s, "the value an atomic returns is used (it depends on the order the points run in)"), NULL;
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
  if (!z || !grow(s->ctx, (void **)&s->accs, &s->capaccs, s->naccs + 1, sizeof *s->accs)) return NULL;
  s->accs[s->naccs++] = (kv_acc){target, z};
  return z;
}

/* Adds c to the adjoint of u: in the adj map when u belongs to the current block (depth), else
 * into the variable of the enclosing if's sink. */
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
    return refuse(s, "internal: an adjoint leaves an if block without a sink");
  }
  int32_t v;
  if (kb_map_get(&s->adj, u->id, &v)) {
    s->adjv[v] = ti_alu2(s->ctx, FRIT_OP_ADD, s->adjv[v], c);
    return s->adjv[v] != NULL;
  }
  if (!grow(s->ctx, (void **)&s->adjv, &s->capadjv, s->nadjv + 1, sizeof *s->adjv)) return false;
  s->adjv[s->nadjv++] = c;
  return kb_map_put(&s->adj, u->id, (int32_t)(s->nadjv - 1)) || nomem(s);
}

/* The values of the current block (home == depth) reachable from u through value ops and
 * forwarded reads, into out (unsorted, without duplicates). */
static bool reach(kv *s, frit_uop *u, int depth, kb_map *seen, kb_list *out) {
  int32_t d;
  if (kb_map_get(seen, u->id, &d) || !frit_dtype_is_float(u->dtype) || home(s, u) != depth) return true;
  if (!kb_map_put(seen, u->id, 0) || !kb_list_push(out, u)) return nomem(s);
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

/* Sends the adjoints of the block's values back to their sources, in reverse topological order
 * (ids), ending in atomic adds into the accumulators of the tensors read. */
static bool propagate(kv *s, const kb_list *roots, int depth) {
  kb_map seen = {0};
  kb_list order = {0};
  bool ok = true;
  for (size_t i = 0; ok && i < roots->n; i++) ok = reach(s, roots->v[i], depth, &seen, &order);
  if (ok && order.n) qsort(order.v, order.n, sizeof *order.v, by_id_desc);
  for (size_t k = 0; ok && k < order.n; k++) {
    frit_uop *u = order.v[k];
    int32_t v, f;
    if (!kb_map_get(&s->adj, u->id, &v)) continue;
    frit_tensor *g = s->adjv[v];
    frit_op op = (frit_op)u->op;
    if (op == FRIT_OP_LOAD && kb_map_get(&s->fwd, u->id, &f)) {
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
      ok = refuse(s, "the value an atomic returns is used (it depends on the order the points run in)");
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

/* The outer values (home <= depth) that adjoints inside the subtree of seq reach first. */
static bool frontier_walk(kv *s, frit_uop *u, int depth, kb_map *seen, kb_list *out) {
  int32_t d;
  if (kb_map_get(seen, u->id, &d) || !frit_dtype_is_float(u->dtype)) return true;
  if (!kb_map_put(seen, u->id, 0)) return nomem(s);
  if (u->op == FRIT_OP_CONST || u->op == FRIT_OP_DEFINE_VAR) return true;
  if (home(s, u) <= depth) return kb_list_push(out, u) || nomem(s);
  if (u->op == FRIT_OP_LOAD) {
    if (kb_map_get(&s->fwd, u->id, &d)) return frontier_walk(s, s->fwdv.v[d], depth, seen, out);
    return true;
  }
  if (!is_value_op((frit_op)u->op)) return true;
  for (uint32_t i = 0; i < u->nsrc; i++)
    if (!frontier_walk(s, u->src[i], depth, seen, out)) return false;
  return true;
}

static bool frontier(kv *s, frit_uop *seq, int depth, kb_map *seen, kb_list *out) {
  for (uint32_t i = 0; i < seq->nsrc; i++) {
    frit_uop *st = seq->src[i];
    if (st->op == FRIT_OP_IF) {
      for (uint32_t b = 1; b < st->nsrc; b++)
        if (!frontier(s, st->src[b], depth, seen, out)) return false;
    } else if ((st->op == FRIT_OP_STORE || st->op == FRIT_OP_ATOMIC) && addr_of(st)->src[0] == s->T) {
      if (!frontier_walk(s, st->src[1], depth, seen, out)) return false;
    }
  }
  return true;
}

static bool rev_block(kv *s, frit_uop *seq, int depth);

static bool rev_if(kv *s, frit_uop *st, int depth) {
  kb_map seen = {0};
  kb_list sinks = {0};
  int *vars = NULL;
  bool ok = true;
  for (uint32_t b = 1; ok && b < st->nsrc; b++) ok = frontier(s, st->src[b], depth, &seen, &sinks);
  kb_map_free(&seen);
  if (ok && sinks.n && !(vars = malloc(sinks.n * sizeof *vars))) ok = nomem(s);
  for (size_t i = 0; ok && i < sinks.n; i++) {
    frit_tensor *zero = ti_full(s->ctx, sinks.v[i]->dtype, (frit_scalar){.f = 0}, 0, NULL);
    ok = zero && (vars[i] = frit_kernel_var(s->ctx, sinks.v[i]->dtype, zero)) >= 0;
  }
  frit_tensor *cond = ok ? translate(s, st->src[0]) : NULL;
  kb_list *save_nodes = s->sink_nodes;
  int *save_vars = s->sink_vars;
  if (cond && frit_kernel_if_begin(s->ctx, cond) == FRIT_OK) {
    s->sink_nodes = &sinks, s->sink_vars = vars;
    ok = rev_block(s, st->src[1], depth + 1);
    if (ok && st->nsrc > 2) ok = frit_kernel_else(s->ctx) == FRIT_OK && rev_block(s, st->src[2], depth + 1);
    s->sink_nodes = save_nodes, s->sink_vars = save_vars;
    ok = ok && frit_kernel_if_end(s->ctx) == FRIT_OK;
  } else ok = false;
  for (size_t i = 0; ok && i < sinks.n; i++) ok = adj_add(s, sinks.v[i], frit_kernel_var_get(s->ctx, vars[i]), depth);
  free(vars);
  free(sinks.v);
  return ok && s->ctx->status == FRIT_OK;
}

/* The reverse of one block: its reads recomputed, the seeds of its writes to T, its ifs
 * (reversed inside an if on the same condition), the adjoints propagated, and the written
 * elements of T zeroed in the pass-through cotangent last (after every read of them). */
static bool rev_block(kv *s, frit_uop *seq, int depth) {
  frit_ctx *ctx = s->ctx;
  for (uint32_t i = 0; i < seq->nsrc; i++) { /* reads, in program order */
    frit_uop *st = seq->src[i];
    int32_t f;
    if (st->op != FRIT_OP_LOAD || kb_map_get(&s->fwd, st->id, &f)) continue;
    frit_tensor *ix[FRIT_MAX_DIMS];
    int nd = translate_index(s, addr_of(st), ix);
    frit_tensor *r = nd >= 0 ? frit_kernel_load(ctx, TI_T(addr_of(st)->src[0]), nd, ix) : NULL;
    if (!r || !tr_put(s, st, r)) return false;
  }
  kb_list roots = {0}, zeroed = {0};
  bool ok = true;
  for (uint32_t i = seq->nsrc; ok && i-- > 0;) {
    frit_uop *st = seq->src[i];
    if (st->op == FRIT_OP_IF) {
      kb_map seen = {0};
      ok = rev_if(s, st, depth);
      for (uint32_t b = 1; ok && b < st->nsrc; b++) /* the outer values it sent adjoints to */
        ok = frontier(s, st->src[b], depth, &seen, &roots);
      kb_map_free(&seen);
      continue;
    }
    if ((st->op != FRIT_OP_STORE && st->op != FRIT_OP_ATOMIC) || addr_of(st)->src[0] != s->T) continue;
    if (st->op == FRIT_OP_ATOMIC && st->arg.i0 != FRIT_ATOMIC_ADD) {
      ok = refuse(s, "an atomic min, max or exchange writes the differentiated tensor (only atomic add is linear)");
      break;
    }
    int32_t bb = 0;
    kb_map_get(&s->block_of, st->id, &bb);
    const kv_event *later = next_store(s, st, bb);
    if (later && !ancestor_or_self(s, later->block, bb)) {
      ok = refuse(s, "a point writes the same element twice, the second time inside an if block (write it once, "
                     "choosing the value with where)");
      break;
    }
    frit_tensor *ix[FRIT_MAX_DIMS];
    int nd = translate_index(s, addr_of(st), ix);
    if (!(ok = nd >= 0)) break;
    if (!later) { /* this write's value is what the element ends up with */
      frit_tensor *gv = frit_kernel_load(ctx, s->g_src, nd, ix);
      ok = gv && adj_add(s, st->src[1], ti_cast(ctx, gv, st->src[1]->dtype), depth) && kb_list_push(&roots, st->src[1]);
    }
    if (ok && s->pass && st->op == FRIT_OP_STORE) ok = kb_list_push(&zeroed, st);
  }
  ok = ok && propagate(s, &roots, depth);
  for (size_t i = 0; ok && i < zeroed.n; i++) {
    frit_tensor *ix[FRIT_MAX_DIMS];
    int nd = translate_index(s, addr_of(zeroed.v[i]), ix);
    ok = nd >= 0 && frit_kernel_store(ctx, s->g_src, nd, ix, ti_full(ctx, s->T->dtype, (frit_scalar){.f = 0}, 0, NULL)) == FRIT_OK;
  }
  free(roots.v);
  free(zeroed.v);
  return ok && ctx->status == FRIT_OK;
}

static void kv_free(kv *s) {
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
  if (ks && ks->open) return refuse(&s, "a kernel is open (call frit_vjp outside kernels)");
  frit_uop *body = K->src[0], *seq = body->op == FRIT_OP_END ? body->src[0] : body;
  int ndim = body->op == FRIT_OP_END ? (int)body->nsrc - 1 : 0;
  bool ok = scan_block(&s, seq, -1, 0, 0);
  s.pass = wants(env, s.T);
  s.g_src = s.pass ? frit_identity(ctx, g) : g;
  frit_uop *dims[FRIT_MAX_DIMS];
  frit_tensor *idx[FRIT_MAX_DIMS];
  for (int a = 0; a < ndim; a++) dims[a] = body->src[1 + a]->src[0];
  char name[96];
  snprintf(name, sizeof name, "%s_vjp", s.name);
  if (!ok || !s.g_src || frit_kernel_begin(ctx, name, ndim, dims, idx) != FRIT_OK) {
    kv_free(&s);
    return false;
  }
  ok = rev_block(&s, seq, 0);
  frit_status saved = ctx->status;
  char msg[sizeof ctx->errmsg];
  memcpy(msg, ctx->errmsg, sizeof msg);
  int nw = frit_kernel_end(ctx);
  if (!ok || nw < 0) {
    if (saved != FRIT_OK) ctx->status = saved, memcpy(ctx->errmsg, msg, sizeof msg);
    kv_free(&s);
    return false;
  }
  /* each accumulator's new version goes to its target; T also takes the pass-through */
  ad_contrib *c = calloc(s.naccs + 1, sizeof *c);
  if (!c) {
    kv_free(&s);
    return nomem(&s);
  }
  size_t n = 0;
  for (int k = 0; k < nw; k++) {
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
  if (s.pass && !zeroed) c[n++] = (ad_contrib){s.T, g}; /* written only by atomic adds: all of g passes */
  kv_free(&s);
  *out = c, *nout = n;
  return true;
}
