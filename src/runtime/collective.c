/* A collective's step in a run: the kernel that realizes a COLLECTIVE node hands its buffers to
 * the MPI layer (src/dist) when the world has several ranks; with one rank its copy kernel runs.
 * On the CPU, outside host loops, the exchange moves on the exchange thread while the next
 * kernels compute; a kernel that touches its memory waits for it first. */
#include "backend/device.h"
#include "dist/dist.h"
#include "runtime/runtime.h"

#include <stdlib.h>
#include <string.h>

bool frit_rt_collective_runs(const frit_program *p, int k) {
  return p->c->sched->kernels[k].collective && frit_dist_size() > 1;
}

typedef struct frit_rt_pending {
  frit_dist_job *job;
  uintptr_t in_lo, in_hi, out_lo, out_hi; /* the bytes it reads and writes */
} frit_rt_pending;

static size_t buf_bytes(const frit_program *p, int b) {
  return (size_t)p->numel[b] * (size_t)((frit_dtype_bits(p->c->sched->bufs[b].dtype) + 7) / 8);
}

static bool overlaps(uintptr_t lo, uintptr_t hi, uintptr_t lo2, uintptr_t hi2) { return lo < hi2 && lo2 < hi; }

static frit_status wait_one(frit_program *p, int i) {
  frit_status st = frit_dist_wait(p->ctx, p->pending[i].job);
  p->pending[i] = p->pending[--p->npending];
  return st;
}

frit_status frit_rt_collective_settle(frit_program *p, int k) {
  const frit_sched_kernel *K = &p->c->sched->kernels[k];
  frit_status st = FRIT_OK;
  for (int i = 0; i < K->nparams && p->npending; i++) {
    int b = K->param_buf[i];
    size_t n = buf_bytes(p, b);
    uintptr_t lo = (uintptr_t)p->bufptr[b], hi = lo + n;
    if (!n || !lo) continue;
    for (int j = 0; j < p->npending; j++) {
      const frit_rt_pending *q = &p->pending[j];
      if (overlaps(lo, hi, q->out_lo, q->out_hi) || (K->param_written[i] && overlaps(lo, hi, q->in_lo, q->in_hi))) {
        frit_status r = wait_one(p, j--);
        if (st == FRIT_OK) st = r;
      }
    }
  }
  return st;
}

frit_status frit_rt_collective_wait_all(frit_program *p, frit_status st) {
  if (!p->npending) return st;
  const char *m = st != FRIT_OK ? frit_error(p->ctx) : "";
  char *keep = st != FRIT_OK ? malloc(strlen(m) + 1) : NULL;
  if (keep) strcpy(keep, m);
  while (p->npending) {
    frit_status r = wait_one(p, p->npending - 1);
    if (st == FRIT_OK) st = r;
  }
  if (keep) frit_set_error(p->ctx, st, "%s", keep);
  free(keep);
  return st;
}

/* Overlap is for host programs without host loops (whose control reads buffers between kernels),
 * and only when the next kernel does not read the result at once: handing a job to the thread
 * and back costs microseconds that a lone collective would only wait. FRIT_DIST_OVERLAP=0 turns
 * it off. */
static bool may_overlap(const frit_program *p, int k) {
  static atomic_int off = -1;
  const frit_schedule *s = p->c->sched;
  if (frit_rt_env_is(&off, "FRIT_DIST_OVERLAP", "0") || p->c->dev || s->nloops != 0 || k + 1 >= s->nkernels) return false;
  const frit_sched_kernel *K = &s->kernels[k], *next = &s->kernels[k + 1];
  for (int i = 0; i < next->nparams; i++)
    if (next->param_buf[i] == K->param_buf[K->coll_out]) return false;
  return true;
}

static frit_status start(frit_program *p, const frit_coll_call *call, int bin, int bout) {
  if (p->npending == p->pending_cap) {
    int cap = p->pending_cap ? 2 * p->pending_cap : 8;
    frit_rt_pending *q = realloc(p->pending, (size_t)cap * sizeof *q);
    if (!q) return frit_set_error(p->ctx, FRIT_ERR_NOMEM, "run: out of memory for a collective");
    p->pending = q, p->pending_cap = cap;
  }
  frit_dist_job *job = frit_dist_start(p->ctx, call, p->bufptr[bin], p->bufptr[bout]);
  if (!job) return frit_last_status(p->ctx);
  uintptr_t in = (uintptr_t)p->bufptr[bin], out = (uintptr_t)p->bufptr[bout];
  p->pending[p->npending++] = (frit_rt_pending){job, in, in + buf_bytes(p, bin), out, out + buf_bytes(p, bout)};
  return FRIT_OK;
}

frit_status frit_rt_collective(frit_program *p, int k) {
  frit_ctx *ctx = p->ctx;
  const frit_schedule *s = p->c->sched;
  const frit_sched_kernel *K = &s->kernels[k];
  const frit_uop *u = K->collective;
  int bin = K->param_buf[K->coll_in], bout = K->param_buf[K->coll_out];
  const frit_sched_buf *sb = &s->bufs[bout];
  int64_t dims[8];
  int ndim = sb->ndim < 8 ? sb->ndim : 8;
  for (int d = 0; d < ndim; d++)
    if (frit_eval_int_expr(ctx, sb->dims[d], p->binds, s->nvars, &dims[d]) != FRIT_OK) return frit_last_status(ctx);
  const int64_t *ints = (const int64_t *)u->arg.blob; /* {root or dest, source}: the verifier checks */
  frit_coll_call call = {.kind = (int)u->arg.i0, .op = (int)u->arg.i1, .root = (int)ints[0], .dest = (int)ints[0],
                         .source = (int)ints[1], .dtype = sb->dtype, .numel = p->numel[bout], .ndim = ndim,
                         .dims = dims, .tag = (uint64_t)K->coll_seq};
  if (may_overlap(p, k)) return start(p, &call, bin, bout);
  /* in order after the ones already started */
  frit_status prior = frit_rt_collective_wait_all(p, FRIT_OK);
  if (prior != FRIT_OK) return prior;
  if (!p->c->dev) return frit_dist_run(ctx, &call, p->bufptr[bin], p->bufptr[bout]);
  /* a device program: the exchange goes through host memory (MPI takes host pointers here; a
   * GPU-aware path, NCCL, would not copy) */
  frit_device *d = p->c->dev;
  size_t bytes = buf_bytes(p, bout);
  unsigned char *host = malloc(2 * bytes + 1);
  if (!host) return frit_set_error(ctx, FRIT_ERR_NOMEM, "run: out of memory for a collective's %zu bytes", bytes);
  frit_status st = bytes ? d->ops->read(ctx, d, p->dev_arena, (size_t)p->devoff[bin], host, bytes) : FRIT_OK;
  if (st == FRIT_OK) st = frit_dist_run(ctx, &call, host, host + bytes);
  if (st == FRIT_OK && bytes) st = d->ops->write(ctx, d, p->dev_arena, (size_t)p->devoff[bout], host + bytes, bytes);
  free(host);
  return st;
}
