/* The loop sets of a kernel AST (which RANGEs each node runs inside), shared by the profiler's
 * FLOP estimate and the work estimate that decides threading and size specialisation. */
#include <stdlib.h>

#include "ir/walk.h"
#include "runtime/runtime.h"

/* node id -> masks, open addressing (a kernel's AST has few nodes; ids span the ctx) */
typedef struct node_masks {
  uint64_t dep;    /* the RANGEs its value depends on (a REDUCE's or END's: not those it closes) */
  uint64_t inside; /* dep, with the RANGEs a REDUCE or END closes */
  uint64_t outer;  /* control and effects: the loops of the END bodies that hold it */
  int range;       /* a RANGE: its number in the walk (bit), else -1 */
} node_masks;

typedef struct mask_map {
  uint32_t *ids; /* id + 1; 0: empty */
  node_masks *m;
  size_t cap;
} mask_map;

static node_masks *slot(mask_map *m, uint32_t id) {
  size_t i = (size_t)(id * 2654435761u) & (m->cap - 1);
  while (m->ids[i] && m->ids[i] != id + 1) i = (i + 1) & (m->cap - 1);
  m->ids[i] = id + 1;
  return &m->m[i];
}

/* Which nodes carry the loops they sit in down to their sources: an END's body (src0) runs in
 * its loops and the END's own; effects grouped, sequenced or guarded run where their group does.
 * A STORE's or ATOMIC's sources are values and ordering deps (placed by what they depend on). */
static bool passes_loops_down(frit_op op) {
  return op == FRIT_OP_GROUP || op == FRIT_OP_SEQ || op == FRIT_OP_AFTER || op == FRIT_OP_IF || op == FRIT_OP_KERNEL ||
         op == FRIT_OP_SINK || op == FRIT_OP_BARRIER;
}

int frit_rt_loopsets(frit_uop *ast, frit_rt_loopset_fn fn, void *arg) {
  size_t n;
  frit_uop **nodes = frit_walk_topo(ast, &n);
  if (!nodes) return -1;
  mask_map m = {NULL, NULL, 16};
  while (m.cap < 2 * n) m.cap *= 2;
  m.ids = calloc(m.cap, sizeof *m.ids), m.m = calloc(m.cap, sizeof *m.m);
  uint64_t range_outer[64] = {0}; /* per RANGE: the loops around it */
  uint64_t grid = 0;              /* the kernel's GLOBAL axes: around all of its body */
  int nr = 0;
  bool ok = m.ids && m.m;
  /* what each node depends on */
  for (size_t i = 0; ok && i < n; i++) {
    const frit_uop *u = nodes[i];
    uint64_t mk = 0;
    for (uint32_t j = 0; j < u->nsrc; j++) mk |= slot(&m, u->src[j]->id)->dep;
    node_masks *nm = slot(&m, u->id);
    nm->range = u->op == FRIT_OP_RANGE && nr < 64 ? nr : -1;
    if (nm->range >= 0 && u->arg.i1 == FRIT_AXIS_GLOBAL) grid |= (uint64_t)1 << nm->range;
    if (u->op == FRIT_OP_RANGE) mk |= nr < 64 ? (uint64_t)1 << nr : 0, nr++;
    nm->inside = mk; /* a REDUCE accumulates once per iteration of the loops it closes */
    if (u->op == FRIT_OP_REDUCE || u->op == FRIT_OP_END) /* its value lives outside them */
      for (uint32_t j = 1; j < u->nsrc; j++) {
        int r = u->src[j]->op == FRIT_OP_RANGE ? slot(&m, u->src[j]->id)->range : -1;
        if (r >= 0) mk &= ~((uint64_t)1 << r); /* (not the loops its trip count depends on) */
      }
    nm->dep = mk;
  }
  /* where the bodies sit: from the root down (a loop nested in another whose index it never
   * uses still runs once per outer iteration) */
  for (size_t i = n; ok && i-- > 0;) {
    const frit_uop *u = nodes[i];
    node_masks *nm = slot(&m, u->id);
    if (u->op == FRIT_OP_END || u->op == FRIT_OP_REDUCE) { /* its loops sit where it does */
      if (u->op == FRIT_OP_END) slot(&m, u->src[0]->id)->outer |= nm->outer | nm->inside;
      for (uint32_t j = 1; j < u->nsrc; j++) {
        int r = slot(&m, u->src[j]->id)->range;
        if (u->src[j]->op == FRIT_OP_RANGE && r >= 0) range_outer[r] |= nm->outer | nm->dep;
      }
    } else if (passes_loops_down(u->op)) {
      for (uint32_t j = 0; j < u->nsrc; j++) slot(&m, u->src[j]->id)->outer |= nm->outer;
    }
  }
  /* each node's loops: its own, those around the loops it uses, and (control, effects) those of
   * the bodies holding it */
  for (size_t i = 0; ok && i < n; i++) {
    const frit_uop *u = nodes[i];
    node_masks *nm = slot(&m, u->id);
    uint64_t loops = nm->inside | nm->outer;
    for (int r = 0; r < 64 && r < nr; r++)
      if (nm->inside >> r & 1) loops |= range_outer[r];
    if (loops) loops |= grid; /* (a computation of no loop's index runs once per point too) */
    fn(arg, u, nr > 64 ? ~(uint64_t)0 : loops);
  }
  free(m.ids), free(m.m);
  free(nodes);
  return ok ? nr : -1;
}

/* ---------- the work estimate ---------- */

typedef struct work_sets {
  uint64_t sets[FRIT_RT_WORK_SETS];
  int n;
  bool overflow;
} work_sets;

static void add_work_set(void *arg, const frit_uop *u, uint64_t loops) {
  work_sets *w = arg;
  if (!loops || u->op == FRIT_OP_RANGE || u->op == FRIT_OP_CONST) return;
  for (int i = 0; i < w->n; i++) {
    if ((w->sets[i] | loops) == w->sets[i]) return; /* within a set already there */
    if ((w->sets[i] | loops) == loops) {             /* a larger set replaces the ones it holds */
      w->sets[i] = loops;
      for (int j = w->n - 1; j > i; j--)
        if ((w->sets[j] | loops) == loops) w->sets[j] = w->sets[--w->n];
      return;
    }
  }
  if (w->n == FRIT_RT_WORK_SETS) w->overflow = true;
  else w->sets[w->n++] = loops;
}

int frit_rt_work_sets(frit_uop *ast, uint64_t *sets) {
  work_sets w = {.n = 0};
  int nr = frit_rt_loopsets(ast, add_work_set, &w);
  if (nr < 0 || nr > 64 || w.overflow) return -1;
  for (int i = 0; i < w.n; i++) sets[i] = w.sets[i];
  return w.n;
}
