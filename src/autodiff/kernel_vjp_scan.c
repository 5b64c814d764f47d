/* The pre-scan of a user explicit kernel's body for its reverse kernel (kernel_vjp.c): blocks and
 * their nesting, the writes of each point, per-point loops that add into variables, and which
 * reads see a value the same point stored before (forwarded) or the value before the kernel. */
#include "autodiff/kernel_vjp.h"

#include <stdio.h>

bool kv_grow(frit_ctx *ctx, void **p, size_t *cap, size_t need, size_t elt) {
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

bool kv_refuse(kv *s, const char *why) {
  if (s->ctx->status == FRIT_OK)
    ti_fail(s->ctx, "grad", (frit_tensor *const[]){TI_T(s->T)}, 1,
            "frit_vjp through explicit kernel '%s': %s", s->name, why);
  return false;
}

bool kv_nomem(kv *s) {
  frit_set_error(s->ctx, FRIT_ERR_NOMEM, "out of memory");
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
const kv_event *kv_next_store(const kv *s, const frit_uop *w, int wb) {
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

static bool scan_loop(kv *s, frit_uop *end, int b);

/* The last write of address a before serial (program order) that a point in block b can have
 * run, or NULL. */
static const kv_event *last_write(const kv *s, const frit_uop *a, int64_t serial, int b) {
  const kv_event *last = NULL;
  for (size_t i = 0; i < s->nevents; i++) {
    const frit_uop *e = s->events[i].stmt;
    if (exclusive(s, s->events[i].block, b) || serial_of(e) >= serial) continue;
    if (addr_of(e) == a && (!last || serial_of(e) > serial_of(last->stmt))) last = &s->events[i];
  }
  return last;
}

/* A read after a loop that added into the variable: the loop's result. */
static bool after_loop(const kv *s, const kv_event *w, int b) {
  return w->loop >= 0 && ancestor_or_self(s, s->blocks[s->loops[w->loop].block].parent, b);
}

/* The serial range [lo, hi] of the reads and writes inside a statement. */
static void serials(const frit_uop *u, int64_t *lo, int64_t *hi) {
  if (u->op == FRIT_OP_LOAD || u->op == FRIT_OP_STORE || u->op == FRIT_OP_ATOMIC) {
    if (serial_of(u) < *lo) *lo = serial_of(u);
    if (serial_of(u) > *hi) *hi = serial_of(u);
    return;
  }
  if (u->op == FRIT_OP_IF || u->op == FRIT_OP_SEQ || u->op == FRIT_OP_END)
    for (uint32_t i = u->op == FRIT_OP_IF ? 1 : 0; i < u->nsrc; i++)
      if (u->src[i]->op != FRIT_OP_RANGE) serials(u->src[i], lo, hi);
}

/* The value a variable has at the end of branch bk of the if st (held in block pb), or before the
 * if when bk < 0; NULL (refused) unless it is a plain value there. */
static frit_uop *branch_value(kv *s, frit_uop *st, const frit_uop *a, int pb, int bk, bool *inside) {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  serials(st, &lo, &hi);
  const kv_event *w = bk >= 0 ? last_write(s, a, hi + 1, bk) : last_write(s, a, lo, pb);
  int at = bk >= 0 ? bk : pb;
  if (!w || w->loop >= 0 || !ancestor_or_self(s, w->block, at))
    return kv_refuse(s, "a kernel variable is read after an if that sets it inside a nested if or loop"), NULL;
  *inside = bk >= 0 && w->block == bk;
  return w->stmt->src[1];
}

/* The phi of variable address a after the if whose branch block x (a child of a block the read
 * is in) holds its last write. */
static bool make_phi(kv *s, frit_uop *ld, int x) {
  int pb = s->blocks[x].parent;
  uint32_t ifn = s->blocks[x].ifn;
  if (!ifn) return kv_refuse(s, "internal: a variable written in a loop outside the reader's blocks");
  frit_uop *a = addr_of(ld), *st = NULL;
  int bk[2] = {-1, -1};
  for (size_t i = 0; i < s->nblocks; i++)
    if (s->blocks[i].parent == pb && s->blocks[i].ifn == ifn) bk[s->blocks[i].branch - 1] = (int)i;
  for (size_t i = 0; i < s->nphis; i++)
    if (s->phis[i].ifst->id == ifn && s->phis[i].reg == a->src[0])
      return kb_map_put(&s->phi_of, ld->id, (int32_t)i) || kv_nomem(s);
  for (size_t i = 0; i < s->ifnodes.n; i++)
    if (s->ifnodes.v[i]->id == ifn) st = s->ifnodes.v[i];
  FRIT_ASSERT(st);
  kv_phi p = {st, a->src[0], pb, {NULL, NULL}, {false, false}, -1, NULL, NULL};
  for (int k = 0; k < 2; k++)
    if (!(p.br[k] = branch_value(s, st, a, pb, bk[k], &p.inside[k]))) return false;
  if (!kv_grow(s->ctx, (void **)&s->phis, &s->capphis, s->nphis + 1, sizeof *s->phis)) return false;
  s->phis[s->nphis++] = p;
  return kb_map_put(&s->phi_of, ld->id, (int32_t)(s->nphis - 1)) || kv_nomem(s);
}

static bool scan_load(kv *s, frit_uop *ld, int b) {
  frit_uop *a = addr_of(ld);
  /* the reverse kernel cannot tell whether two index expressions name one element at run time,
   * so a read after a write of the same tensor elsewhere could see either value */
  for (size_t i = 0; !is_var_addr(a) && i < s->nevents; i++) {
    const frit_uop *e = s->events[i].stmt;
    if (addr_of(e)->src[0] == a->src[0] && addr_of(e) != a && serial_of(e) < serial_of(ld) &&
        !exclusive(s, s->events[i].block, b))
      return kv_refuse(s, "a point reads a tensor after writing it at another index expression (they may name the "
                          "same element); read before writing, or index both the same way");
  }
  const kv_event *last = last_write(s, a, serial_of(ld), b);
  if (last && after_loop(s, last, b))
    return kb_map_put(&s->after_of, ld->id, last->loop * 256 + last->var) || kv_nomem(s);
  if (!last) {
    if (is_var_addr(a)) return kv_refuse(s, "internal: a kernel variable is read before it is set");
    return true; /* reads the value before the kernel */
  }
  if (last->stmt->op == FRIT_OP_ATOMIC)
    return kv_refuse(s, "a point reads an element after an atomic update of it (the value depends on the other points)");
  if (!ancestor_or_self(s, last->block, b) && is_var_addr(a) && last->loop < 0) {
    int x = last->block;
    while (x >= 0 && !ancestor_or_self(s, s->blocks[x].parent, b)) x = s->blocks[x].parent;
    FRIT_ASSERT(x >= 0);
    return make_phi(s, ld, x);
  }
  if (!ancestor_or_self(s, last->block, b))
    return kv_refuse(s, is_var_addr(a) ? "a kernel variable is read after an if block that may have set it"
                                    : "a point reads an element that an if block before the read may have written");
  if (!kb_list_push(&s->fwdv, last->stmt->src[1]) || !kb_map_put(&s->fwd, ld->id, (int32_t)(s->fwdv.n - 1)))
    return kv_nomem(s);
  return true;
}

static const char loop_rule[] =
    "a loop inside the body differentiates when it reads tensors, adds into kernel variables from outside it "
    "(acc.set(acc + x), x not using the variables it adds into), stores to tensor elements that depend on the "
    "loop index, adds atomically into tensors, and holds ifs and variables of its own; this one ";

/* Whether u (through value ops and index vectors) uses node r. */
static bool uses(const frit_uop *u, const frit_uop *r, int depth) {
  if (u == r) return true;
  if (depth > 64 || (!is_value_op((frit_op)u->op) && u->op != FRIT_OP_VECTORIZE)) return false;
  for (uint32_t i = 0; i < u->nsrc; i++)
    if (uses(u->src[i], r, depth + 1)) return true;
  return false;
}

/* Whether u (through value ops) uses one of the loop's accumulator reads. */
static bool uses_acc(const kv_loop *L, const frit_uop *u, int depth) {
  for (int i = 0; i < L->nv; i++)
    if (u == L->v[i].load) return true;
  if (depth > 64 || (!is_value_op((frit_op)u->op) && u->op != FRIT_OP_VECTORIZE)) return false;
  for (uint32_t i = 0; i < u->nsrc; i++)
    if (uses_acc(L, u->src[i], depth + 1)) return true;
  return false;
}

static bool loop_refuse(kv *s, const char *what) {
  char why[512];
  snprintf(why, sizeof why, "%s%s", loop_rule, what);
  return kv_refuse(s, why);
}

/* The tensor reads and writes of a block and the ifs in it. */
static bool subtree(const frit_uop *seq, kb_list *loads, kb_list *writes) {
  for (uint32_t i = 0; i < seq->nsrc; i++) {
    frit_uop *st = seq->src[i];
    if (st->op == FRIT_OP_IF) {
      for (uint32_t k = 1; k < st->nsrc; k++)
        if (!subtree(st->src[k], loads, writes)) return false;
    } else if ((st->op == FRIT_OP_LOAD || st->op == FRIT_OP_STORE || st->op == FRIT_OP_ATOMIC) &&
               !is_var_addr(addr_of(st))) {
      if (!kb_list_push(st->op == FRIT_OP_LOAD ? loads : writes, st)) return false;
    }
  }
  return true;
}

/* A per-point loop END(SEQ, RANGE) in block b: its body becomes a block; every variable from
 * outside that it sets must be an accumulator (one read, one update reg = read + e, in the body
 * itself), so that iterations pass nothing else to each other. */
static bool scan_loop(kv *s, frit_uop *end, int b) {
  frit_uop *seq = end->src[0];
  if (end->nsrc != 2) return kv_refuse(s, "internal: a loop with several ranges");
  if (!kv_grow(s->ctx, (void **)&s->loops, &s->caploops, s->nloops + 1, sizeof *s->loops)) return false;
  int li = (int)s->nloops++;
  kv_loop *L = &s->loops[li];
  *L = (kv_loop){end, end->src[1], (int)s->nblocks, NULL, 0};
  if (!kb_map_put(&s->loop_of, end->id, li)) return kv_nomem(s);
  if (!kv_grow(s->ctx, (void **)&s->blocks, &s->capblocks, s->nblocks + 1, sizeof *s->blocks)) return false;
  s->blocks[s->nblocks++] = (kv_block){b, s->blocks[b].depth + 1, 0, 0};
  int body = L->block;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  serials(end, &lo, &hi);
  for (uint32_t i = 0; i < seq->nsrc; i++) { /* the updates */
    frit_uop *st = seq->src[i];
    if (st->op == FRIT_OP_LOAD || st->op == FRIT_OP_IF) continue;
    if ((st->op == FRIT_OP_STORE || st->op == FRIT_OP_ATOMIC) && !is_var_addr(addr_of(st))) {
      /* stores: one element per iteration, so that iterations never overwrite each other's (atomic
       * adds are linear and may repeat) */
      if (st->op == FRIT_OP_STORE && !uses(addr_of(st)->src[1], L->range, 0))
        return loop_refuse(s, "stores to an element that does not depend on the loop index");
      continue;
    }
    if (st->op != FRIT_OP_STORE)
      return loop_refuse(s, "has a loop, break or continue inside");
    frit_uop *v = st->src[1], *reg = addr_of(st)->src[0];
    if (!last_write(s, addr_of(st), lo, b)) continue; /* declared in the loop: set again every iteration */
    for (int k = 0; k < L->nv; k++)
      if (L->v[k].reg == reg) return loop_refuse(s, "sets a variable twice per iteration");
    int side = -1;
    for (int j = 0; v->op == FRIT_OP_ADD && j < 2; j++)
      if (v->src[j]->op == FRIT_OP_LOAD && addr_of(v->src[j]) == addr_of(st) && serial_of(v->src[j]) < serial_of(st))
        side = j;
    if (side < 0) return loop_refuse(s, "sets a variable to something other than its value plus a term");
    kv_accvar *nv = realloc(L->v, (size_t)(L->nv + 1) * sizeof *nv);
    if (!nv) return kv_nomem(s);
    L->v = nv;
    L->v[L->nv++] = (kv_accvar){reg, v->src[side], v->src[1 - side], NULL, -1, -1, -1, NULL, NULL};
    if (L->nv > 255) return loop_refuse(s, "sets more than 255 variables");
  }
  for (uint32_t i = 0; i < seq->nsrc; i++) { /* the reads, ifs and plain writes, in program order */
    frit_uop *st = seq->src[i];
    bool acc_update = false;
    for (int k = 0; k < L->nv; k++) acc_update |= st->op == FRIT_OP_STORE && addr_of(st)->src[0] == L->v[k].reg;
    if ((st->op == FRIT_OP_STORE || st->op == FRIT_OP_ATOMIC) && !acc_update) {
      if (!kb_map_put(&s->block_of, st->id, body)) return kv_nomem(s);
      if (!kv_grow(s->ctx, (void **)&s->events, &s->capevents, s->nevents + 1, sizeof *s->events)) return false;
      s->events[s->nevents++] = (kv_event){st, body, -1, -1};
      continue;
    }
    if (st->op == FRIT_OP_IF) {
      size_t first = s->nevents;
      if (!kb_list_push(&s->ifnodes, st)) return kv_nomem(s);
      for (uint32_t k = 1; k < st->nsrc; k++)
        if (!kv_scan_block(s, st->src[k], body, st->id, (int)k)) return false;
      for (size_t e = first; e < s->nevents; e++) { /* what the if writes */
        frit_uop *w = s->events[e].stmt, *a = addr_of(w);
        if (s->events[e].loop >= 0) return loop_refuse(s, "has a loop inside an if");
        if (!is_var_addr(a)) {
          if (w->op == FRIT_OP_STORE && !uses(a->src[1], L->range, 0))
            return loop_refuse(s, "stores to an element that does not depend on the loop index");
          continue;
        }
        /* a variable from outside the loop set in the if would carry a value to the next iteration */
        for (size_t f = 0; f < first; f++)
          if (addr_of(s->events[f].stmt) == a && serial_of(s->events[f].stmt) < lo)
            return loop_refuse(s, "sets a variable from outside the loop inside an if");
        for (int k = 0; k < L->nv; k++)
          if (L->v[k].reg == a->src[0]) return loop_refuse(s, "sets a variable it adds into inside an if");
      }
      continue;
    }
    if (st->op != FRIT_OP_LOAD) continue;
    if (!kb_map_put(&s->block_of, st->id, body)) return kv_nomem(s);
    bool acc = false;
    for (int k = 0; k < L->nv; k++) acc |= st == L->v[k].load;
    for (int k = 0; !acc && k < L->nv; k++)
      if (addr_of(st)->src[0] == L->v[k].reg) return loop_refuse(s, "reads a variable it adds into twice");
    if (!acc && !scan_load(s, st, body)) return false;
    if (!acc && uses_acc(L, addr_of(st)->src[1], 0)) return loop_refuse(s, "indexes with a variable it adds into");
  }
  for (int k = 0; k < L->nv; k++) {
    kv_accvar *a = &L->v[k];
    if (uses_acc(L, a->e, 0)) return loop_refuse(s, "adds a term that uses a variable it adds into");
    const kv_event *w = last_write(s, addr_of(a->load), serial_of(a->load), b);
    if (!w) return kv_refuse(s, "internal: a kernel variable is read before it is set");
    if (after_loop(s, w, b) && s->blocks[s->loops[w->loop].block].parent != b)
      /* the earlier loop is reversed in its own block: an adjoint made inside an if cannot reach it */
      return loop_refuse(s, "adds into a variable that a loop outside its enclosing if added into");
    if (after_loop(s, w, b)) a->init_loop = w->loop, a->init_var = w->var;
    else if (ancestor_or_self(s, w->block, b)) a->init = w->stmt->src[1];
    else return kv_refuse(s, "a kernel variable is read after an if block that may have set it");
  }
  kb_list loads = {0}, writes = {0};
  bool ok = subtree(seq, &loads, &writes), clash = false;
  for (size_t i = 0; ok && i < loads.n; i++) /* iterations would read each other's elements */
    for (size_t j = 0; j < writes.n; j++) clash |= addr_of(loads.v[i])->src[0] == addr_of(writes.v[j])->src[0];
  free(loads.v);
  free(writes.v);
  if (!ok) return kv_nomem(s);
  if (clash) return loop_refuse(s, "reads a tensor it writes");
  for (int k = 0; k < L->nv; k++) { /* the updates are writes of the loop's block, marked as its results */
    frit_uop *st = NULL;
    for (uint32_t i = 0; i < seq->nsrc && !st; i++)
      if (seq->src[i]->op == FRIT_OP_STORE && addr_of(seq->src[i])->src[0] == L->v[k].reg) st = seq->src[i];
    if (!kb_map_put(&s->block_of, st->id, body)) return kv_nomem(s);
    if (!kv_grow(s->ctx, (void **)&s->events, &s->capevents, s->nevents + 1, sizeof *s->events)) return false;
    s->events[s->nevents++] = (kv_event){st, body, li, k};
  }
  return true;
}

bool kv_scan_block(kv *s, frit_uop *seq, int parent, uint32_t ifn, int branch) {
  if (!kv_grow(s->ctx, (void **)&s->blocks, &s->capblocks, s->nblocks + 1, sizeof *s->blocks))
    return false;
  int b = (int)s->nblocks++;
  s->blocks[b] = (kv_block){parent, parent < 0 ? 0 : s->blocks[parent].depth + 1, ifn, branch};
  for (uint32_t i = 0; i < seq->nsrc; i++) {
    frit_uop *st = seq->src[i];
    frit_op op = (frit_op)st->op;
    if (op == FRIT_OP_LOAD) {
      if (!kb_map_put(&s->block_of, st->id, b)) return kv_nomem(s);
      if (!scan_load(s, st, b)) return false;
    } else if (op == FRIT_OP_STORE || op == FRIT_OP_ATOMIC) {
      if (!kb_map_put(&s->block_of, st->id, b)) return kv_nomem(s);
      if (!kv_grow(s->ctx, (void **)&s->events, &s->capevents, s->nevents + 1, sizeof *s->events)) return false;
      s->events[s->nevents++] = (kv_event){st, b, -1, -1};
    } else if (op == FRIT_OP_IF) {
      if (!kb_list_push(&s->ifnodes, st)) return kv_nomem(s);
      if (!kv_scan_block(s, st->src[1], b, st->id, 1)) return false;
      if (st->nsrc > 2 && !kv_scan_block(s, st->src[2], b, st->id, 2)) return false;
    } else if (op == FRIT_OP_END) {
      if (!scan_loop(s, st, b)) return false;
    } else if (op == FRIT_OP_BREAK || op == FRIT_OP_CONTINUE) {
      return kv_refuse(s, "it breaks out of (or continues) a loop inside its body");
    } else {
      return kv_refuse(s, "internal: an unknown statement in its body");
    }
  }
  return true;
}

bool kv_scan(kv *s, frit_uop *seq) {
  if (!kv_scan_block(s, seq, -1, 0, 0)) return false;
  /* a loop writes many elements of a tensor: another write of that tensor by the point, at an
   * index expression of its own, could name one of them at run time */
  for (size_t i = 0; i < s->nevents; i++) {
    bool in_loop = false;
    for (int x = s->events[i].block; x >= 0 && !in_loop; x = s->blocks[x].parent)
      in_loop = s->blocks[x].parent >= 0 && !s->blocks[x].ifn;
    if (!in_loop || is_var_addr(addr_of(s->events[i].stmt))) continue;
    for (size_t j = 0; j < s->nevents; j++)
      if (s->events[j].block != s->events[i].block &&
          addr_of(s->events[j].stmt)->src[0] == addr_of(s->events[i].stmt)->src[0])
        return kv_refuse(s, "a tensor written inside a loop is also written elsewhere by the point (the elements "
                            "may be the same at run time)");
  }
  return true;
}
