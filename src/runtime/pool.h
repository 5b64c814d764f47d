/* A persistent pthread pool that runs one compiled kernel at a time over chunks of its
 * outermost GLOBAL axis. The calling thread works too; workers sleep between launches. */
#ifndef FRIT_RUNTIME_POOL_H
#define FRIT_RUNTIME_POOL_H

#include "codegen/codegen.h" /* frit_kernel_fn: the signature every compiled kernel exports */

typedef struct frit_pool frit_pool;

/* A pool of `nthreads` threads in all, the caller included (so nthreads - 1 are started).
 * NULL when out of memory or when no thread could be started; nthreads <= 1 gives a pool
 * that runs everything on the caller. */
frit_pool *frit_pool_new(int nthreads);
void frit_pool_free(frit_pool *p);
int frit_pool_threads(const frit_pool *p);
/* The process-wide pool of `nthreads` threads, shared by every program (and thread) that asks
 * for that count; each acquire is matched by a release, the last release stops the threads.
 * NULL for nthreads < 2 or when none can be made: callers then run kernels themselves. */
frit_pool *frit_pool_acquire(int nthreads);
void frit_pool_release(frit_pool *p);
/* Runs fn over [0, extent) split into chunks, on every thread; returns when all are done.
 * Safe to call from several threads at once: one launch uses the workers at a time, a
 * concurrent one runs entirely on its caller. */
void frit_pool_launch(frit_pool *p, frit_kernel_fn fn, void *const *bufs, const int64_t *vars,
                      int64_t extent);

#endif
