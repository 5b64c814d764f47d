/* A collective's step in a run: the kernel that realizes a COLLECTIVE node hands its buffers to
 * the MPI layer (src/dist) when the world has several ranks; with one rank its copy kernel runs. */
#include "backend/device.h"
#include "dist/dist.h"
#include "runtime/runtime.h"

#include <stdlib.h>
#include <string.h>

bool frit_rt_collective_runs(const frit_program *p, int k) {
  return p->c->sched->kernels[k].collective && frit_dist_size() > 1;
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
    if (frit_rt_eval(ctx, sb->dims[d], p->binds, s->nvars, &dims[d]) != FRIT_OK) return frit_last_status(ctx);
  const int64_t *ints = (const int64_t *)u->arg.blob; /* {root or dest, source}: the verifier checks */
  frit_coll_call call = {.kind = (int)u->arg.i0, .op = (int)u->arg.i1, .root = (int)ints[0], .dest = (int)ints[0],
                         .source = (int)ints[1], .dtype = sb->dtype, .numel = p->numel[bout], .ndim = ndim,
                         .dims = dims, .tag = (uint64_t)K->coll_seq};
  if (!p->c->dev) return frit_dist_run(ctx, &call, p->bufptr[bin], p->bufptr[bout]);
  /* a device program: the exchange goes through host memory (MPI takes host pointers here; a
   * GPU-aware path, NCCL, would not copy) */
  frit_device *d = p->c->dev;
  size_t bytes = (size_t)p->numel[bout] * (size_t)(frit_dtype_bits(sb->dtype) / 8);
  unsigned char *host = malloc(2 * bytes + 1);
  if (!host) return frit_set_error(ctx, FRIT_ERR_NOMEM, "run: out of memory for a collective's %zu bytes", bytes);
  frit_status st = bytes ? d->ops->read(ctx, d, p->dev_arena, (size_t)p->devoff[bin], host, bytes) : FRIT_OK;
  if (st == FRIT_OK) st = frit_dist_run(ctx, &call, host, host + bytes);
  if (st == FRIT_OK && bytes) st = d->ops->write(ctx, d, p->dev_arena, (size_t)p->devoff[bout], host + bytes, bytes);
  free(host);
  return st;
}
