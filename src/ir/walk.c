/* The reachable-nodes walk: depth-first over sources with a hash set of visited ids, then the
 * nodes ordered by id (ids are creation order, hence topological). */
#include "ir/walk.h"

static int by_id(const void *a, const void *b) {
  uint32_t x = (*(frit_uop *const *)a)->id, y = (*(frit_uop *const *)b)->id;
  return x < y ? -1 : x > y;
}

/* Open-addressing set of node ids (id + 1 stored so that 0 means empty). */
typedef struct idset {
  uint32_t *slot;
  size_t cap, count;
} idset;

static bool idset_grow(idset *s) {
  size_t cap = s->cap ? s->cap * 2 : 256;
  uint32_t *t = calloc(cap, sizeof *t);
  if (!t) return false;
  for (size_t i = 0; i < s->cap; i++) {
    if (!s->slot[i]) continue;
    size_t j = (s->slot[i] * 0x9e3779b1u) & (cap - 1);
    while (t[j]) j = (j + 1) & (cap - 1);
    t[j] = s->slot[i];
  }
  free(s->slot);
  s->slot = t;
  s->cap = cap;
  return true;
}

/* Inserts id; returns 1 if new, 0 if present, -1 on OOM. */
static int idset_add(idset *s, uint32_t id) {
  if ((s->count + 1) * 2 > s->cap && !idset_grow(s)) return -1;
  uint32_t key = id + 1;
  size_t j = (key * 0x9e3779b1u) & (s->cap - 1);
  for (; s->slot[j]; j = (j + 1) & (s->cap - 1))
    if (s->slot[j] == key) return 0;
  s->slot[j] = key;
  s->count++;
  return 1;
}

frit_uop **frit_walk_topo(frit_uop *root, size_t *n) {
  idset seen = {0};
  size_t out_cap = 64, count = 0, stack_cap = 64, sp = 0;
  frit_uop **out = malloc(out_cap * sizeof *out), **stack = malloc(stack_cap * sizeof *stack);
  if (!out || !stack || idset_add(&seen, root->id) < 0) goto oom;
  stack[sp++] = root;
  while (sp) {
    frit_uop *u = stack[--sp];
    if (count == out_cap) {
      frit_uop **grown = realloc(out, 2 * out_cap * sizeof *out);
      if (!grown) goto oom;
      out = grown, out_cap *= 2;
    }
    out[count++] = u;
    for (uint32_t i = 0; i < u->nsrc; i++) {
      frit_uop *s = u->src[i];
      FRIT_ASSERT(s->id < u->id);
      int added = idset_add(&seen, s->id);
      if (added < 0) goto oom;
      if (!added) continue;
      if (sp == stack_cap) {
        frit_uop **grown = realloc(stack, 2 * stack_cap * sizeof *stack);
        if (!grown) goto oom;
        stack = grown, stack_cap *= 2;
      }
      stack[sp++] = s;
    }
  }
  free(stack);
  free(seen.slot);
  qsort(out, count, sizeof *out, by_id);
  *n = count;
  return out;
oom:
  free(out);
  free(stack);
  free(seen.slot);
  return NULL;
}

/* Sources left to right before their user, from an explicit stack. A node is on the stack at
 * most once at a time (a DAG has no cycles), and `enter` is asked again when a later user
 * reaches it, so a memoising caller's `enter` (false once done) keeps the walk linear. */
bool frit_walk_post(frit_uop *root, frit_walk_fn enter, frit_walk_fn leave, void *arg) {
  typedef struct item {
    frit_uop *u;
    uint32_t next;
  } item;
  size_t n = 0, cap = 64;
  item *st = malloc(cap * sizeof *st);
  if (!st) return false;
  st[n++] = (item){root, 0};
  bool ok = true;
  while (n && ok) {
    item *it = &st[n - 1];
    if (it->next < it->u->nsrc) {
      frit_uop *v = it->u->src[it->next++];
      if (!enter(arg, v)) continue;
      if (n == cap) {
        item *ns = realloc(st, (cap *= 2) * sizeof *st);
        if (!ns) {
          ok = false;
          break;
        }
        st = ns;
      }
      st[n++] = (item){v, 0};
      continue;
    }
    frit_uop *u = st[--n].u;
    if (u != root) ok = leave(arg, u);
  }
  free(st);
  return ok;
}
