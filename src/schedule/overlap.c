/* Kernel order for overlap: a collective, and the kernels that exist only to feed collectives,
 * run as soon as their inputs are ready, so that the exchange moves while the kernels after it
 * compute (docs/distributed.md "Overlap"). */
#include "schedule/sched_internal.h"

typedef struct edge {
  int from, to;
  bool raw; /* `to` reads what `from` wrote */
} edge;

typedef struct heap {
  int *v, n;
} heap;

static void heap_push(heap *h, int x) {
  int i = h->n++;
  while (i > 0 && h->v[(i - 1) / 2] > x) h->v[i] = h->v[(i - 1) / 2], i = (i - 1) / 2;
  h->v[i] = x;
}

static int heap_pop(heap *h) {
  int top = h->v[0], x = h->v[--h->n], i = 0;
  for (;;) {
    int c = 2 * i + 1;
    if (c >= h->n) break;
    if (c + 1 < h->n && h->v[c + 1] < h->v[c]) c++;
    if (h->v[c] >= x) break;
    h->v[i] = h->v[c], i = c;
  }
  if (h->n) h->v[i] = x;
  return top;
}

/* The order constraints between kernels: through each buffer, a reader after the write it reads,
 * a writer after the reads and the write before it. */
static int collect_edges(const frit_sched_kernel *K, int n, int nb, edge **out) {
  int *last_writer = malloc((size_t)(nb + 1) * sizeof *last_writer);
  int *reader_head = malloc((size_t)(nb + 1) * sizeof *reader_head);
  int np = 0;
  for (int k = 0; k < n; k++) np += K[k].nparams;
  int *reader_next = malloc((size_t)(np + 1) * sizeof *reader_next);
  int *reader_kernel = malloc((size_t)(np + 1) * sizeof *reader_kernel);
  int ne = 0, cap = 2 * np + 8, nr = 0;
  edge *e = malloc((size_t)cap * sizeof *e);
  if (!last_writer || !reader_head || !reader_next || !reader_kernel || !e) goto oom;
  for (int b = 0; b < nb; b++) last_writer[b] = -1, reader_head[b] = -1;
  for (int k = 0; k < n; k++)
    for (int i = 0; i < K[k].nparams; i++) {
      int b = K[k].param_buf[i];
      int need = ne + 1;
      if (K[k].param_written[i])
        for (int r = reader_head[b]; r >= 0; r = reader_next[r]) need++;
      if (need > cap) {
        cap = 2 * need;
        edge *g = realloc(e, (size_t)cap * sizeof *g);
        if (!g) goto oom;
        e = g;
      }
      if (last_writer[b] >= 0 && last_writer[b] != k)
        e[ne++] = (edge){last_writer[b], k, !K[k].param_written[i]};
      if (K[k].param_written[i]) {
        for (int r = reader_head[b]; r >= 0; r = reader_next[r])
          if (reader_kernel[r] != k) e[ne++] = (edge){reader_kernel[r], k, false};
        last_writer[b] = k, reader_head[b] = -1;
      } else {
        reader_kernel[nr] = k, reader_next[nr] = reader_head[b], reader_head[b] = nr++;
      }
    }
  free(last_writer), free(reader_head), free(reader_next), free(reader_kernel);
  *out = e;
  return ne;
oom:
  free(last_writer), free(reader_head), free(reader_next), free(reader_kernel), free(e);
  return -1;
}

/* Heap keys: eager kernels first, then the others, then the readers of a collective's result;
 * each class in the old order. */
static int priority(const bool *eager, const bool *late, int n, int k) {
  return (eager[k] ? 0 : late[k] ? 2 : 1) * n + k;
}

frit_status sched_hoist_collectives(frit_ctx *ctx, frit_sched_kernel *K, int n, frit_sched_buf *bufs, int nb) {
  edge *e = NULL;
  int ne = collect_edges(K, n, nb, &e);
  size_t nk = (size_t)n + 1, nedge = (size_t)(ne > 0 ? ne : 0) + 1;
  int *first = calloc(nk, sizeof *first), *succ = malloc(nedge * sizeof *succ);
  int *owner = malloc(nk * sizeof *owner), *indeg = calloc(nk, sizeof *indeg), *order = malloc(nk * sizeof *order);
  bool *eager = calloc(nk, sizeof *eager), *late = calloc(nk, sizeof *late), *raw = malloc(nedge * sizeof *raw);
  frit_sched_kernel *tmp = malloc((size_t)(n + 1) * sizeof *tmp);
  heap h = {malloc((size_t)(n + 1) * sizeof *h.v), 0};
  frit_status rc = FRIT_OK;
  if (ne < 0 || !first || !succ || !owner || !indeg || !order || !eager || !late || !raw || !tmp || !h.v) {
    rc = frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
    goto done;
  }
  /* successors of each kernel, by source (counting sort); order[] is scratch here */
  for (int i = 0; i < ne; i++) first[e[i].from + 1]++;
  for (int k = 0; k < n; k++) first[k + 1] += first[k], order[k] = first[k];
  for (int i = 0; i < ne; i++) {
    int at = order[e[i].from]++;
    succ[at] = e[i].to, raw[at] = e[i].raw;
    indeg[e[i].to]++;
  }
  /* eager: a collective, or a kernel that exists only for one collective (each result read, and
   * only by kernels that exist only for that collective; a program output has a reader outside).
   * A backward pass's weight gradient is one; the activation gradient it was made from, which
   * the next layer's gradients read too, is not. */
  for (int k = n - 1; k >= 0; k--) {
    if (K[k].collective) {
      owner[k] = k;
      continue;
    }
    bool writes = false, outside = false;
    for (int i = 0; i < K[k].nparams; i++)
      if (K[k].param_written[i]) writes = true, outside |= bufs[K[k].param_buf[i]].kind != FRIT_BUF_TEMP;
    int own = -1;
    for (int j = first[k]; j < first[k + 1] && own != -2; j++)
      if (raw[j]) own = owner[succ[j]] < 0 || (own >= 0 && own != owner[succ[j]]) ? -2 : owner[succ[j]];
    owner[k] = writes && !outside && own >= 0 ? own : -1;
  }
  for (int k = 0; k < n; k++) eager[k] = owner[k] >= 0;
  /* list schedule: eager kernels first, the readers of an exchange's result last (each waits for
   * it), otherwise the old order */
  for (int k = 0; k < n; k++)
    if (K[k].collective)
      for (int j = first[k]; j < first[k + 1]; j++)
        if (raw[j] && !eager[succ[j]]) late[succ[j]] = true;
  for (int k = 0; k < n; k++)
    if (!indeg[k]) heap_push(&h, priority(eager, late, n, k));
  int m = 0;
  while (h.n) {
    int k = heap_pop(&h) % n;
    order[m++] = k;
    for (int j = first[k]; j < first[k + 1]; j++)
      if (--indeg[succ[j]] == 0) heap_push(&h, priority(eager, late, n, succ[j]));
  }
  FRIT_ASSERT(m == n); /* the old order is a topological order of these edges */
  memcpy(tmp, K, (size_t)n * sizeof *tmp);
  int seq = 0;
  for (int k = 0; k < n; k++) {
    K[k] = tmp[order[k]];
    if (K[k].collective) K[k].coll_seq = seq++;
  }
done:
  free(e), free(owner), free(first), free(succ), free(indeg), free(order), free(eager), free(late), free(raw), free(tmp), free(h.v);
  return rc;
}

void sched_keep_collective_sources(const frit_sched_kernel *K, int n, frit_sched_buf *bufs) {
  /* the exchange reads its source until the first kernel that reads its result waits for it */
  for (int k = 0; k < n; k++) {
    if (!K[k].collective) continue;
    int bout = K[k].param_buf[K[k].coll_out], until = n - 1;
    for (int j = k + 1; j < n && until == n - 1; j++)
      for (int p = 0; p < K[j].nparams; p++)
        if (K[j].param_buf[p] == bout) until = j;
    frit_sched_buf *src = &bufs[K[k].param_buf[K[k].coll_in]];
    if (src->last_use < until) src->last_use = until;
  }
}
