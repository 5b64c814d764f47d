/* Graph walks shared by the printers, the textual IR, the verifier and the C renderer: the nodes
 * reachable from a root in id (= topological) order, found without recursion (deep graphs). */
#ifndef FRIT_WALK_H
#define FRIT_WALK_H

#include "ir/uop.h"

/* The reachable nodes, sources before users, root last. Returns a malloc'd array of *n nodes
 * (the caller frees it) or NULL on OOM. Ids are creation order, so ordering by id is
 * topological; a slot per id up to root->id does that ordering without a sort. */
static inline frit_uop **frit_walk_topo(frit_uop *root, size_t *n) {
  size_t nslots = (size_t)root->id + 1;
  frit_uop **slot = calloc(nslots, sizeof *slot);
  size_t stack_cap = 64, sp = 0, count = 1;
  frit_uop **stack = malloc(stack_cap * sizeof *stack);
  if (!slot || !stack) {
    free(slot);
    free(stack);
    return NULL;
  }
  stack[sp++] = root;
  slot[root->id] = root;
  while (sp) {
    frit_uop *u = stack[--sp];
    for (uint32_t i = 0; i < u->nsrc; i++) {
      frit_uop *s = u->src[i];
      FRIT_ASSERT(s->id < u->id);
      if (slot[s->id]) continue;
      slot[s->id] = s;
      count++;
      if (sp == stack_cap) {
        frit_uop **grown = realloc(stack, 2 * stack_cap * sizeof *stack);
        if (!grown) {
          free(slot);
          free(stack);
          return NULL;
        }
        stack = grown;
        stack_cap *= 2;
      }
      stack[sp++] = s;
    }
  }
  free(stack);
  size_t k = 0;
  for (size_t id = 0; id < nslots; id++)
    if (slot[id]) slot[k++] = slot[id];
  FRIT_ASSERT(k == count);
  *n = count;
  return slot; /* compacted in place; the tail beyond count is unused */
}

#endif
