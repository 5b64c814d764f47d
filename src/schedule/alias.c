/* Which kernel parameters may share memory: the element-wise access test behind buffer donation
 * written in place (src/runtime/donate.c), and each kernel's alias_mask, which codegen reads to
 * leave `restrict` off those parameters. docs/runtime.md "Donated buffers". */
#include "ir/walk.h"
#include "schedule/sched_internal.h"

bool frit_sched_in_loop(const frit_schedule *s, int k) {
  for (int l = 0; l < s->nloops; l++)
    if (s->loops[l].first_kernel <= k && k <= s->loops[l].last_kernel) return true;
  return false;
}

bool frit_sched_same_dims(const frit_sched_buf *a, const frit_sched_buf *b) {
  if (a->ndim != b->ndim) return false;
  for (int d = 0; d < a->ndim; d++) {
    const frit_uop *x = a->dims[d], *y = b->dims[d];
    if (x != y && !(x->op == FRIT_OP_CONST && y->op == FRIT_OP_CONST && x->arg.value.i == y->arg.value.i))
      return false;
  }
  return true;
}

static bool reaches(frit_uop *root, const frit_uop *target) {
  size_t n = 0;
  frit_uop **all = frit_walk_topo(root, &n);
  if (!all) return true; /* out of memory: the answer that keeps the caller conservative */
  bool found = false;
  for (size_t i = 0; i < n && !found; i++) found = all[i] == target;
  free(all);
  return found;
}

static bool is_param(const frit_uop *u, int p) {
  return u->op == FRIT_OP_INDEX && u->src[0]->op == FRIT_OP_DEFINE_GLOBAL && u->src[0]->arg.i0 == p;
}

/* Why this is enough: when every address into pin equals the one address stored to in pout, the
 * element e that iteration i stores is only ever loaded by iteration i; when each such load also
 * feeds the stored value, it runs before the store (a data dependence, which codegen's
 * reordering and vectorisation keep; with restrict left off the pair the C compiler must keep it
 * too). A load of e that feeds only a sibling store has no such order (tests/test_donate.c
 * test_unordered_read). A loop around the store that does not move its address would revisit e
 * after the store, hence the last check. Explicit kernels index freely and run statements in
 * order: never. */
bool frit_sched_same_element(const frit_sched_kernel *K, int pin, int pout) {
  if (K->structured || pin == pout) return false;
  size_t n = 0;
  frit_uop **all = frit_walk_topo(K->ast, &n);
  if (!all) return false;
  frit_uop *widx = NULL, *store = NULL;
  bool ok = true;
  for (size_t i = 0; i < n && ok; i++) {
    if (!is_param(all[i], pout)) continue;
    if (widx && widx != all[i]) ok = false; /* a second address into the output */
    widx = all[i];
  }
  for (size_t i = 0; i < n && ok && widx; i++) {
    frit_uop *u = all[i];
    if (u->op == FRIT_OP_STORE && u->src[0] == widx) {
      if (store) ok = false;
      store = u;
    }
    if (!is_param(u, pin)) continue;
    if (u->nsrc != widx->nsrc) ok = false;
    for (uint32_t j = 1; ok && j < u->nsrc; j++) ok = u->src[j] == widx->src[j];
  }
  ok = ok && widx && store;
  /* every read of pin must feed the store: that data dependence is what runs it first */
  if (ok) {
    size_t m = 0;
    frit_uop **feed = frit_walk_topo(store, &m);
    if (!feed) ok = false;
    for (size_t i = 0; i < n && ok; i++) {
      if (!is_param(all[i], pin)) continue;
      bool found = false;
      for (size_t j = 0; j < m && !found; j++) found = feed[j] == all[i];
      ok = found;
    }
    free(feed);
  }
  for (size_t i = 0; i < n && ok; i++) {
    frit_uop *e = all[i];
    if (e->op != FRIT_OP_END) continue;
    bool all_move = true;
    for (uint32_t j = 1; j < e->nsrc && all_move; j++)
      if (e->src[j]->op == FRIT_OP_RANGE && !reaches(widx, e->src[j])) all_move = false;
    if (!all_move && reaches(e->src[0], store)) ok = false;
  }
  free(all);
  return ok;
}

void sched_mark_alias(frit_schedule *s) {
  for (int k = 0; k < s->nkernels; k++) {
    frit_sched_kernel *K = &s->kernels[k];
    K->alias_mask = 0;
    if (K->structured || K->collective || frit_sched_in_loop(s, k)) continue;
    for (int q = 0; q < K->nparams && q < 64; q++) {
      const frit_sched_buf *bi = &s->bufs[K->param_buf[q]];
      if (bi->kind != FRIT_BUF_INPUT || K->param_written[q]) continue;
      for (int r = 0; r < K->nparams && r < 64; r++) {
        const frit_sched_buf *bo = &s->bufs[K->param_buf[r]];
        if (bo->kind != FRIT_BUF_OUTPUT || !K->param_written[r] || bo->dtype != bi->dtype ||
            !frit_sched_same_dims(bi, bo) || !frit_sched_same_element(K, q, r))
          continue;
        K->alias_mask |= (uint64_t)1 << q | (uint64_t)1 << r;
      }
    }
  }
}
