/* Graph walks shared by every pass that visits a graph: the nodes reachable from a root in id
 * (= topological) order, found without recursion (deep graphs). */
#ifndef FRIT_WALK_H
#define FRIT_WALK_H

#include "ir/uop.h"

/* The reachable nodes, sources before users, root last. Returns a malloc'd array of *n nodes
 * (the caller frees it) or NULL on OOM. Costs O(r log r) in the r reachable nodes, not in the
 * size of the context, so that small graphs in a large context stay cheap to walk. */
frit_uop **frit_walk_topo(frit_uop *root, size_t *n);

/* For recursive passes over sources: calls leave(arg, v) on the nodes below root for which
 * enter(arg, v) holds, each after its own such sources (post-order, left to right), without
 * recursion. Root itself is not left. A memoised recursive pass calls it before recursing past a
 * depth bound, so that its own recursion then stops one level down. False when leave fails
 * (or out of memory). */
typedef bool (*frit_walk_fn)(void *arg, frit_uop *u);
bool frit_walk_post(frit_uop *root, frit_walk_fn enter, frit_walk_fn leave, void *arg);

#endif
