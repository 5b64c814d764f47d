/* The process-wide MPI layer that frit's collective ops run on: the world (rank, size), and one
 * collective at a time on this rank's buffers, checked across ranks and never waiting forever. */
#ifndef FRIT_DIST_H
#define FRIT_DIST_H

#include "frit.h"

#include <stdint.h>

/* frit_coll_kind and frit_coll_op (arg.i0 and arg.i1 of COLLECTIVE) are in frit.h. */
const char *frit_coll_kind_name(int kind); /* "all_reduce", "all_gather", ...; "?" out of range */
const char *frit_coll_op_name(int op);     /* "sum", "prod", "max", "min"; "?" out of range */

/* mode 0: join MPI when the process was started by an MPI launcher (env OMPI_COMM_WORLD_SIZE,
 * PMIX_RANK or PMI_SIZE set), else a one-process world without loading MPI;
 * mode 1: always load MPI (singleton init when not launched).
 * Idempotent: a second call returns FRIT_OK, except that mode 1 after a one-process world is an
 * error (the world was already set up without MPI). MPI already initialised by someone else
 * (e.g. mpi4py) is reused and left for them to finalise. Errors are FRIT_ERR_RUNTIME and name
 * "dist" and the reason. Every rank must call it (it duplicates the world communicator).
 * Env, read here once: FRIT_DIST_TIMEOUT (seconds, default 600, 0: no deadline),
 * FRIT_DIST_CHECK=0 (skip the cross-rank check of each collective; set it alike on all ranks). */
frit_status frit_dist_init(frit_ctx *ctx, int mode);
int frit_dist_initialized(void);
int frit_dist_rank(void); /* 0 before init */
int frit_dist_size(void); /* 1 before init */
int frit_dist_uses_mpi(void);
/* Finalises MPI if this layer initialised it, and frees what the layer made. Afterwards init is an
 * error (MPI cannot be initialised twice). After a timeout or MPI failure it does not call
 * MPI_Finalize (that could wait forever for a lost rank) and says so in an error: end the process. */
frit_status frit_dist_finalize(frit_ctx *ctx);
/* All ranks meet; with the check on, a rank in a collective while another is here is an error on all. */
frit_status frit_dist_barrier(frit_ctx *ctx);

typedef struct frit_coll_call {
  int kind, op;                  /* frit_coll_kind; frit_coll_op (ALL_REDUCE, REDUCE_SCATTER) */
  int root;                      /* BROADCAST: the root rank */
  int dest, source;              /* SENDRECV: the rank this one sends to / receives from; -1: none */
  frit_dtype dtype;              /* a scalar frit dtype (FRIT_BOOL .. FRIT_C128) */
  int64_t numel;                 /* elements of in and of out (both buffers have this many) */
  int ndim; const int64_t *dims; /* the shape, for error messages only */
  uint64_t tag;                  /* the caller's identity of the call site, compared across ranks */
} frit_coll_call;

/* Runs one collective on this rank; in and out never overlap, each holds numel elements.
 * World of P ranks, this is rank r, B = numel / P (numel % P must be 0 for ALL_GATHER and
 * REDUCE_SCATTER):
 *  ALL_REDUCE: out = op over ranks of in (elementwise).
 *  ALL_GATHER: out block j = block j of rank j's in (the other blocks of in are ignored).
 *  REDUCE_SCATTER: out block r = op over ranks of block r of in; the other blocks of out are zero.
 *  BROADCAST: out = root's in.
 *  SENDRECV: sends in to dest (none if -1); out = what source sent (zeros if source is -1).
 * With P == 1 every kind copies in to out (SENDRECV: zeros if source is -1).
 * Reductions: bool (sum/max: or, prod/min: and), ints, f32/f64 (max/min propagate NaN as numpy
 * does), c64/c128 (sum, prod); f16/bf16 only move (reductions are an error: upcast first).
 * Errors (FRIT_ERR_RUNTIME): the ranks disagree on the collective (every rank gets the error,
 * naming each rank's collective and shape), a timeout (FRIT_DIST_TIMEOUT), an MPI failure; after
 * a timeout or an MPI failure every later call fails at once (the ranks are out of step). */
frit_status frit_dist_run(frit_ctx *ctx, const frit_coll_call *c, const void *in, void *out);

/* The same on the exchange thread (exchange.c), so that the caller computes while it moves.
 * Jobs run one at a time in the order they were started, process-wide: ranks that start the same
 * collectives in the same order stay in step, and a frit_dist_run of this thread must not pass
 * jobs it started and has not waited for. The caller leaves in and out alone until the wait.
 * Start: NULL with an error on ctx when no job could be queued. Wait: blocks until the job is
 * done, frees it, and returns its status (its error message set on ctx). */
typedef struct frit_dist_job frit_dist_job;
frit_dist_job *frit_dist_start(frit_ctx *ctx, const frit_coll_call *c, const void *in, void *out);
frit_status frit_dist_wait(frit_ctx *ctx, frit_dist_job *job);
/* Ends the exchange thread once its queue is empty (frit_dist_finalize calls it). */
void frit_dist_exchange_stop(void);

#endif
