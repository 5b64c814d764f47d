/* The MPI layer of dist/dist.h: Open MPI's libmpi.so.40 opened with dlopen, so that frit builds and
 * runs on machines without MPI; each collective checked across ranks and completed by a deadline. */
#include "dist/dist.h"
#include "ir/uop.h"

#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

/* This layer speaks the Open MPI ABI only (libmpi.so.40 of Open MPI 4.x/5.x): every handle is a
 * pointer, the predefined handles are the addresses of the library's ompi_mpi_* objects
 * (MPI_COMM_WORLD is &ompi_mpi_comm_world), MPI_STATUS_IGNORE is NULL, and the constants below are
 * the values of Open MPI's mpi.h. MPICH and its derivatives use int handles and other values. */
typedef void *mpi_h; /* MPI_Comm, MPI_Datatype, MPI_Op, MPI_Request, MPI_Errhandler */
typedef void mpi_user_fn(void *in, void *inout, int *len, mpi_h *dtype);
enum { MPI_SUCCESS_ = 0, MPI_PROC_NULL_ = -2, MPI_THREAD_SERIALIZED_ = 2, MPI_MAX_ERROR_STRING_ = 256 };
#define MPI_LIB "libmpi.so.40"

typedef struct mpi_api {
  int (*Initialized)(int *);
  int (*Finalized)(int *);
  int (*Init_thread)(int *, char ***, int, int *);
  int (*Query_thread)(int *);
  int (*Finalize)(void);
  int (*Comm_rank)(mpi_h, int *);
  int (*Comm_size)(mpi_h, int *);
  int (*Comm_idup)(mpi_h, mpi_h *, mpi_h *);
  int (*Comm_free)(mpi_h *);
  int (*Comm_set_errhandler)(mpi_h, mpi_h);
  int (*Error_string)(int, char *, int *);
  int (*Op_create)(mpi_user_fn *, int, mpi_h *);
  int (*Op_free)(mpi_h *);
  int (*Iallreduce)(const void *, void *, int, mpi_h, mpi_h, mpi_h, mpi_h *);
  int (*Allreduce)(const void *, void *, int, mpi_h, mpi_h, mpi_h);
  int (*Iallgather)(const void *, int, mpi_h, void *, int, mpi_h, mpi_h, mpi_h *);
  int (*Ireduce_scatter_block)(const void *, void *, int, mpi_h, mpi_h, mpi_h, mpi_h *);
  int (*Ibcast)(void *, int, mpi_h, int, mpi_h, mpi_h *);
  int (*Isend)(const void *, int, mpi_h, int, int, mpi_h, mpi_h *);
  int (*Irecv)(void *, int, mpi_h, int, int, mpi_h, mpi_h *);
  int (*Test)(mpi_h *, int *, void *);
} mpi_api;

enum { OP_SUM, OP_PROD, OP_MAX, OP_MIN, OP_LOR, OP_LAND, OP_BUILTIN_COUNT };
enum { NAN_MAX_F32, NAN_MIN_F32, NAN_MAX_F64, NAN_MIN_F64, NAN_OP_COUNT };
/* the record each rank contributes when the ranks disagree: what the error message shows */
enum { R_KIND, R_OP, R_ROOT, R_DTYPE, R_NUMEL, R_TAG, R_BAD, R_NDIM, R_DIMS, R_MAXDIMS = 8, R_LEN = R_DIMS + R_MAXDIMS };
#define KIND_BARRIER FRIT_COLL_KIND_COUNT_
#define P2P_TAG 0x4652 /* "FR": our own communicator carries nothing else */
#define STAGE_KEEP ((size_t)64 << 20) /* staging kept between calls; a larger one is given back after use */

/* Getters read atomics so that they never wait behind a collective that holds the lock. */
static atomic_int g_inited, g_rank, g_size = 1, g_uses_mpi;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  int finalized, broken, owns_mpi, check;
  double timeout;
  char why_broken[512];
  void *lib;
  mpi_api f;
  mpi_h world, comm, errors_return, i64, types[FRIT_SCALAR_KIND_COUNT_], ops[OP_BUILTIN_COUNT], nan_ops[NAN_OP_COUNT];
  /* Buffers MPI reads and writes live here, not with the caller: after a timeout the request stays
   * pending and may still touch them, so they are never freed once the layer is broken. */
  int64_t sig[4], sig_all[4], rec[R_LEN], *recs;
  unsigned char *stage;
  size_t stage_cap;
} S;

static const char *const kind_names[] = {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "sendrecv"};
static const char *const op_names[] = {"sum", "prod", "max", "min"};
const char *frit_coll_kind_name(int kind) {
  return kind >= 0 && kind < FRIT_COLL_KIND_COUNT_ ? kind_names[kind] : kind == KIND_BARRIER ? "barrier" : "?";
}
const char *frit_coll_op_name(int op) { return op >= 0 && op < FRIT_COLL_OP_COUNT_ ? op_names[op] : "?"; }

int frit_dist_initialized(void) { return atomic_load(&g_inited); }
int frit_dist_rank(void) { return atomic_load(&g_rank); }
int frit_dist_size(void) { return atomic_load(&g_size); }
int frit_dist_uses_mpi(void) { return atomic_load(&g_uses_mpi); }

/* numpy's maximum/minimum: a NaN on either side wins */
#define NAN_OP(name, T, cmp)                                                                                \
  static void name(void *in, void *inout, int *len, mpi_h *dtype) {                                         \
    (void)dtype;                                                                                            \
    const T *a = in;                                                                                        \
    T *b = inout;                                                                                           \
    for (int i = 0; i < *len; i++)                                                                          \
      if (!isnan(b[i]) && (isnan(a[i]) || a[i] cmp b[i])) b[i] = a[i];                                      \
  }
NAN_OP(nan_max_f32, float, >)
NAN_OP(nan_min_f32, float, <)
NAN_OP(nan_max_f64, double, >)
NAN_OP(nan_min_f64, double, <)

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* appends to a message, cutting it at the buffer's end */
static void app(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void app(char *buf, size_t n, const char *fmt, ...) {
  size_t len = strlen(buf);
  if (len + 1 >= n) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + len, n - len, fmt, ap);
  va_end(ap);
}

/* "all_reduce sum f32[4,3]"; with_op 0 leaves out the op and the root */
static void describe(char *buf, size_t n, int kind, int op, int root, frit_dtype dt, int ndim, const int64_t *dims,
                     int64_t numel, int with_op) {
  char dn[32];
  snprintf(buf, n, "%s", frit_coll_kind_name(kind));
  if (kind == KIND_BARRIER) return;
  if (with_op && (kind == FRIT_COLL_ALL_REDUCE || kind == FRIT_COLL_REDUCE_SCATTER)) app(buf, n, " %s", frit_coll_op_name(op));
  if (with_op && kind == FRIT_COLL_BROADCAST) app(buf, n, " from %d", root);
  app(buf, n, " %s[", frit_dtype_name(dt, dn, sizeof dn));
  if (!dims || ndim < 0) app(buf, n, "%lld", (long long)numel);
  for (int i = 0; dims && i < ndim && i < R_MAXDIMS; i++) app(buf, n, "%s%lld", i ? "," : "", (long long)dims[i]);
  app(buf, n, "%s]", dims && ndim > R_MAXDIMS ? ",..." : "");
}

static frit_status mark_broken(frit_ctx *ctx) {
  snprintf(S.why_broken, sizeof S.why_broken, "%s", frit_error(ctx));
  S.broken = 1;
  return FRIT_ERR_RUNTIME;
}

/* An MPI failure in the middle of a collective leaves the ranks out of step: the layer is broken. */
static frit_status mpi_fail(frit_ctx *ctx, const char *call, int rc, const char *what) {
  char es[MPI_MAX_ERROR_STRING_ + 1] = "";
  int len = 0;
  if (S.f.Error_string(rc, es, &len) != MPI_SUCCESS_) snprintf(es, sizeof es, "error %d", rc);
  frit_set_error(ctx, FRIT_ERR_RUNTIME, "dist: %s failed in %s on rank %d of %d: %s", call, what,
                 atomic_load(&g_rank), atomic_load(&g_size), es);
  return mark_broken(ctx);
}

/* Completes requests by MPI_Test, which is also what moves a nonblocking collective on from one
 * round to the next (Open MPI has no progress thread): so it polls without pausing for 100 ms
 * (yielding the core, for ranks that share one), and only then naps with a growing pause so that a
 * long wait does not burn a core. Napping from the start made a 16 MB all-reduce 3x slower. */
/* All-reduces of at least this many bytes use the blocking call after the check (below that the
 * two forms cost the same). */
#define BLOCKING_MIN 65536

static frit_status wait_reqs(frit_ctx *ctx, mpi_h *reqs, int n, const char *what, double t0) {
  int done[2] = {0, 0}, left = n;
  double spin_until = now_s() + 0.1;
  long nap_ns = 10000;
  for (;;) {
    for (int i = 0; i < n; i++) {
      if (done[i]) continue;
      int flag = 0, rc = S.f.Test(&reqs[i], &flag, NULL);
      if (rc != MPI_SUCCESS_) return mpi_fail(ctx, "MPI_Test", rc, what);
      if (flag) done[i] = 1, left--;
    }
    if (!left) return FRIT_OK;
    double t = now_s();
    if (S.timeout > 0 && t - t0 > S.timeout) {
      frit_set_error(ctx, FRIT_ERR_RUNTIME,
                     "dist: %s timed out after %g s on rank %d of %d waiting for the other ranks (a rank died, or "
                     "ranks ran different collectives)",
                     what, S.timeout, atomic_load(&g_rank), atomic_load(&g_size));
      return mark_broken(ctx);
    }
    if (t < spin_until) {
      sched_yield();
      continue;
    }
    struct timespec nap = {0, nap_ns};
    nanosleep(&nap, NULL);
    if (nap_ns < 500000) nap_ns *= 2;
  }
}

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull;
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

/* S.rec holds this rank's collective. All ranks learn from one small allreduce (MAX over
 * {sig, -sig, bad, -bad}) whether they all run the same one and whether any rejected it; the
 * result is the same everywhere, so every rank takes the same branch below and none is left
 * waiting. Only on trouble do they gather each rank's record for the message. `local` is this
 * rank's own rejection (when S.rec[R_BAD]), returned as is where this rank is at fault. */
static frit_status agree(frit_ctx *ctx, const char *what, double t0, frit_status local_st, const char *local) {
  const int64_t *r = S.rec;
  uint64_t h = mix(mix(0, (uint64_t)r[R_KIND]), (uint64_t)r[R_DTYPE]);
  if (r[R_KIND] == FRIT_COLL_ALL_REDUCE || r[R_KIND] == FRIT_COLL_REDUCE_SCATTER) h = mix(h, (uint64_t)r[R_OP]);
  if (r[R_KIND] == FRIT_COLL_BROADCAST) h = mix(h, (uint64_t)r[R_ROOT]);
  h = mix(mix(h, (uint64_t)r[R_NUMEL]), (uint64_t)r[R_TAG]);
  int64_t sig = (int64_t)(h & (uint64_t)INT64_MAX); /* non-negative, so that -sig exists */
  S.sig[0] = sig, S.sig[1] = -sig, S.sig[2] = r[R_BAD], S.sig[3] = -r[R_BAD];
  mpi_h req;
  int rc = S.f.Iallreduce(S.sig, S.sig_all, 4, S.i64, S.ops[OP_MAX], S.comm, &req);
  if (rc != MPI_SUCCESS_) return mpi_fail(ctx, "MPI_Iallreduce", rc, what);
  frit_status st = wait_reqs(ctx, &req, 1, what, t0);
  if (st != FRIT_OK) return st;
  int same = S.sig_all[0] == -S.sig_all[1], any_bad = S.sig_all[2] != 0, all_bad = S.sig_all[3] != 0;
  if (same && !any_bad) return FRIT_OK;
  if (same && all_bad) return frit_set_error(ctx, local_st, "%s", local);
  int P = atomic_load(&g_size);
  rc = S.f.Iallgather(S.rec, R_LEN, S.i64, S.recs, R_LEN, S.i64, S.comm, &req);
  if (rc != MPI_SUCCESS_) return mpi_fail(ctx, "MPI_Iallgather", rc, what);
  if ((st = wait_reqs(ctx, &req, 1, what, t0)) != FRIT_OK) return st;
  if (r[R_BAD]) return frit_set_error(ctx, local_st, "%s", local);
  /* Ranks may differ only in what the shapes do not show (the tag, or numel against the dims): then
   * those are shown too. */
  int shown_differ = 0;
  char msg[1000], d[160], d0[160];
  for (int pass = 0; pass < 2; pass++) {
    snprintf(msg, sizeof msg, "dist: %s: ", same ? "a collective was rejected on some ranks" : "ranks disagree on a collective");
    for (int j = 0; j < P; j++) {
      const int64_t *q = S.recs + (size_t)j * R_LEN;
      int ndim = (int)q[R_NDIM];
      describe(d, sizeof d, (int)q[R_KIND], (int)q[R_OP], (int)q[R_ROOT], (frit_dtype)q[R_DTYPE], ndim,
               ndim >= 0 ? q + R_DIMS : NULL, q[R_NUMEL], 1);
      if (pass == 1) app(d, sizeof d, " (%lld elements, tag %#llx)", (long long)q[R_NUMEL], (unsigned long long)q[R_TAG]);
      if (q[R_BAD]) app(d, sizeof d, " (rejected there: see that rank's error)");
      if (j == 0) snprintf(d0, sizeof d0, "%s", d);
      else if (strcmp(d, d0) != 0) shown_differ = 1;
      if (strlen(msg) + strlen(d) + 40 > sizeof msg) {
        app(msg, sizeof msg, ", ... (%d more ranks)", P - j);
        break;
      }
      app(msg, sizeof msg, "%srank %d %s", j ? ", " : "", j, d);
    }
    if (shown_differ || same) break;
  }
  return frit_set_error(ctx, FRIT_ERR_RUNTIME, "%s", msg);
}

/* This rank's objections to a call, before anything moves; the MPI op to reduce with. */
static frit_status validate(const frit_coll_call *c, int P, const void *in, void *out, char *msg, size_t n,
                            mpi_h *mop) {
  char dn[32], what[160];
  describe(what, sizeof what, c->kind, c->op, c->root, c->dtype, c->ndim, c->dims, c->numel, 1);
  frit_dtype dt = c->dtype;
  int reduce = c->kind == FRIT_COLL_ALL_REDUCE || c->kind == FRIT_COLL_REDUCE_SCATTER;
#define REJECT(...) return snprintf(msg, n, __VA_ARGS__), FRIT_ERR_INVALID
  if (c->kind < 0 || c->kind >= FRIT_COLL_KIND_COUNT_) REJECT("dist: unknown collective kind %d", c->kind);
  if (frit_dtype_is_ptr(dt) || frit_dtype_lanes(dt) != 1 || dt < FRIT_BOOL || dt > FRIT_C128)
    REJECT("dist: %s: %s is not a scalar dtype", what, frit_dtype_name(dt, dn, sizeof dn));
  if (c->numel < 0 || (c->numel > 0 && (!in || !out))) REJECT("dist: %s: bad buffers or element count", what);
  if (c->numel > INT_MAX) REJECT("dist: %s: %lld elements are more than one MPI call takes (2^31-1)", what, (long long)c->numel);
  if ((c->kind == FRIT_COLL_ALL_GATHER || c->kind == FRIT_COLL_REDUCE_SCATTER) && c->numel % P != 0)
    REJECT("dist: %s: %lld elements do not split into %d equal blocks, one per rank", what, (long long)c->numel, P);
  if (c->kind == FRIT_COLL_BROADCAST && (c->root < 0 || c->root >= P))
    REJECT("dist: %s: root %d is not a rank of a world of %d", what, c->root, P);
  if (c->kind == FRIT_COLL_SENDRECV && (c->dest < -1 || c->dest >= P || c->source < -1 || c->source >= P))
    REJECT("dist: %s: dest %d or source %d is not -1 or a rank of a world of %d", what, c->dest, c->source, P);
  if (!reduce) return FRIT_OK;
  if (c->op < 0 || c->op >= FRIT_COLL_OP_COUNT_) REJECT("dist: %s: unknown reduction op %d", what, c->op);
  if (dt == FRIT_F16 || dt == FRIT_BF16)
    REJECT("dist: %s: reductions on %s are not supported (reduce in f32: upcast first)", what, frit_dtype_name(dt, dn, sizeof dn));
  if ((dt == FRIT_C64 || dt == FRIT_C128) && (c->op == FRIT_COLL_MAX || c->op == FRIT_COLL_MIN))
    REJECT("dist: %s: complex numbers have no order for %s", what, frit_coll_op_name(c->op));
#undef REJECT
  if (!mop) return FRIT_OK;
  static const int builtin[] = {OP_SUM, OP_PROD, OP_MAX, OP_MIN};
  if (dt == FRIT_BOOL) *mop = S.ops[c->op == FRIT_COLL_SUM || c->op == FRIT_COLL_MAX ? OP_LOR : OP_LAND];
  else if ((dt == FRIT_F32 || dt == FRIT_F64) && (c->op == FRIT_COLL_MAX || c->op == FRIT_COLL_MIN))
    *mop = S.nan_ops[(dt == FRIT_F64 ? 2 : 0) + (c->op == FRIT_COLL_MIN)];
  else *mop = S.ops[builtin[c->op]];
  return FRIT_OK;
}

static frit_status not_ready(frit_ctx *ctx) {
  if (S.broken)
    return frit_set_error(ctx, FRIT_ERR_RUNTIME,
                          "dist: unusable since an earlier failure left the ranks out of step (%s); end the processes",
                          S.why_broken);
  if (!atomic_load(&g_inited))
    return frit_set_error(ctx, FRIT_ERR_RUNTIME, "dist: not initialised (call frit_dist_init first)%s",
                          S.finalized ? ": it was finalised" : "");
  return FRIT_OK;
}

/* one rank, or P == 1: every kind is a copy (SENDRECV receives from itself, or nothing) */
static frit_status run_local(frit_ctx *ctx, const frit_coll_call *c, const void *in, void *out) {
  size_t bytes = (size_t)c->numel * (size_t)(frit_dtype_bits(c->dtype) / 8);
  if (c->kind == FRIT_COLL_SENDRECV && c->source < 0) {
    if (bytes) memset(out, 0, bytes);
    return FRIT_OK;
  }
  if (c->kind == FRIT_COLL_SENDRECV && c->dest < 0)
    return frit_set_error(ctx, FRIT_ERR_INVALID, "dist: sendrecv: rank 0 receives from rank 0, which sends it nothing");
  if (bytes) memcpy(out, in, bytes);
  return FRIT_OK;
}

frit_status frit_dist_run(frit_ctx *ctx, const frit_coll_call *c, const void *in, void *out) {
  pthread_mutex_lock(&g_lock);
  frit_status st = not_ready(ctx);
  int P = atomic_load(&g_size), r = atomic_load(&g_rank);
  char local[600] = "", what[160];
  mpi_h op = NULL;
  frit_status lst = st == FRIT_OK ? validate(c, P, in, out, local, sizeof local, S.comm ? &op : NULL) : st;
  if (st != FRIT_OK || P == 1 || !atomic_load(&g_uses_mpi) || (lst != FRIT_OK && !S.check)) {
    if (st == FRIT_OK) st = lst != FRIT_OK ? frit_set_error(ctx, lst, "%s", local) : run_local(ctx, c, in, out);
    pthread_mutex_unlock(&g_lock);
    return st;
  }
  double t0 = now_s();
  size_t es = lst == FRIT_OK ? (size_t)frit_dtype_bits(c->dtype) / 8 : 0, bytes = es * (size_t)(lst == FRIT_OK ? c->numel : 0);
  if (lst == FRIT_OK && 2 * bytes > S.stage_cap) {
    unsigned char *p = realloc(S.stage, 2 * bytes);
    if (p) S.stage = p, S.stage_cap = 2 * bytes;
    else lst = FRIT_ERR_NOMEM, snprintf(local, sizeof local, "dist: out of memory for %zu bytes of staging", 2 * bytes);
  }
  describe(what, sizeof what, c->kind, c->op, c->root, c->dtype, c->ndim, c->dims, c->numel, 0);
  if (S.check) {
    memset(S.rec, 0, sizeof S.rec);
    S.rec[R_KIND] = c->kind, S.rec[R_OP] = c->op, S.rec[R_ROOT] = c->root, S.rec[R_DTYPE] = c->dtype;
    S.rec[R_NUMEL] = c->numel, S.rec[R_TAG] = (int64_t)c->tag, S.rec[R_BAD] = lst != FRIT_OK;
    S.rec[R_NDIM] = c->dims ? c->ndim : -1;
    for (int i = 0; c->dims && i < c->ndim && i < R_MAXDIMS; i++) S.rec[R_DIMS + i] = c->dims[i];
    if ((st = agree(ctx, what, t0, lst, local)) != FRIT_OK) goto done;
  }
  if (lst != FRIT_OK) { /* with the check off, or all ranks rejected alike (agree returned it then) */
    st = frit_set_error(ctx, lst, "%s", local);
    goto done;
  }
  if (!bytes) goto done; /* every rank has nothing to move (the check compared numel) */
  /* Every rank has arrived at this all-reduce (the check says so): the blocking form cannot wait
   * on a missing rank, and Open MPI's is 2.4x faster than its nonblocking one (16 MB: 4.0 against
   * 9.5 ms on 2 ranks), which moves round by round only as MPI_Test is called. */
  if (S.check && c->kind == FRIT_COLL_ALL_REDUCE && bytes >= BLOCKING_MIN) {
    int rc = S.f.Allreduce(in, out, (int)c->numel, S.types[c->dtype], op, S.comm);
    st = rc == MPI_SUCCESS_ ? FRIT_OK : mpi_fail(ctx, "MPI_Allreduce", rc, what);
    goto done;
  }
  /* The data moves through S.stage ([send | receive]), which outlives a timed-out request. */
  unsigned char *sb = S.stage, *rb = S.stage + bytes;
  int n = (int)c->numel, b = (int)(c->numel / P), rc = MPI_SUCCESS_, nreq = 1;
  size_t bb = (size_t)b * es;
  mpi_h dt = S.types[c->dtype], reqs[2];
  const char *call = "";
  switch ((frit_coll_kind)c->kind) {
  case FRIT_COLL_ALL_REDUCE:
    memcpy(sb, in, bytes), call = "MPI_Iallreduce";
    rc = S.f.Iallreduce(sb, rb, n, dt, op, S.comm, reqs);
    break;
  case FRIT_COLL_ALL_GATHER:
    memcpy(sb, (const unsigned char *)in + (size_t)r * bb, bb), call = "MPI_Iallgather";
    rc = S.f.Iallgather(sb, b, dt, rb, b, dt, S.comm, reqs);
    break;
  case FRIT_COLL_REDUCE_SCATTER:
    memcpy(sb, in, bytes), call = "MPI_Ireduce_scatter_block";
    rc = S.f.Ireduce_scatter_block(sb, rb, b, dt, op, S.comm, reqs);
    break;
  case FRIT_COLL_BROADCAST:
    if (r == c->root) memcpy(rb, in, bytes);
    call = "MPI_Ibcast", rc = S.f.Ibcast(rb, n, dt, c->root, S.comm, reqs);
    break;
  case FRIT_COLL_SENDRECV:
    memcpy(sb, in, bytes), memset(rb, 0, bytes), call = "MPI_Irecv";
    rc = S.f.Irecv(rb, n, dt, c->source < 0 ? MPI_PROC_NULL_ : c->source, P2P_TAG, S.comm, &reqs[0]);
    if (rc == MPI_SUCCESS_)
      call = "MPI_Isend", nreq = 2, rc = S.f.Isend(sb, n, dt, c->dest < 0 ? MPI_PROC_NULL_ : c->dest, P2P_TAG, S.comm, &reqs[1]);
    break;
  case FRIT_COLL_KIND_COUNT_: break;
  }
  if (rc != MPI_SUCCESS_) st = mpi_fail(ctx, call, rc, what);
  else if ((st = wait_reqs(ctx, reqs, nreq, what, t0)) == FRIT_OK) {
    if (c->kind == FRIT_COLL_REDUCE_SCATTER) {
      memset(out, 0, bytes);
      memcpy((unsigned char *)out + (size_t)r * bb, rb, bb);
    } else {
      memcpy(out, rb, bytes);
    }
    if (S.stage_cap > STAGE_KEEP) free(S.stage), S.stage = NULL, S.stage_cap = 0;
  }
done:
  pthread_mutex_unlock(&g_lock);
  return st;
}

frit_status frit_dist_barrier(frit_ctx *ctx) {
  pthread_mutex_lock(&g_lock);
  frit_status st = not_ready(ctx);
  if (st == FRIT_OK && atomic_load(&g_uses_mpi) && atomic_load(&g_size) > 1) {
    /* the check's allreduce is the barrier: so a rank here and one in a collective both hear of it */
    memset(S.rec, 0, sizeof S.rec);
    S.rec[R_KIND] = KIND_BARRIER, S.rec[R_NDIM] = -1;
    st = agree(ctx, "barrier", now_s(), FRIT_OK, "");
  }
  pthread_mutex_unlock(&g_lock);
  return st;
}

static int load_mpi(void) {
  mpi_api *f = &S.f;
#define SYM(fn) (*(void **)&f->fn = dlsym(S.lib, "MPI_" #fn)) != NULL
  if (!(SYM(Initialized) && SYM(Finalized) && SYM(Init_thread) && SYM(Query_thread) && SYM(Finalize) &&
        SYM(Comm_rank) && SYM(Comm_size) && SYM(Comm_idup) && SYM(Comm_free) && SYM(Comm_set_errhandler) &&
        SYM(Error_string) && SYM(Op_create) && SYM(Op_free) && SYM(Iallreduce) && SYM(Allreduce) && SYM(Iallgather) &&
        SYM(Ireduce_scatter_block) && SYM(Ibcast) && SYM(Isend) && SYM(Irecv) && SYM(Test)))
    return 0;
#undef SYM
  /* f16 and bf16 only move, as their 16 bits */
  static const char *const types[FRIT_SCALAR_KIND_COUNT_] = {
      [FRIT_BOOL] = "c_bool", [FRIT_I8] = "int8_t", [FRIT_I16] = "int16_t", [FRIT_I32] = "int32_t",
      [FRIT_I64] = "int64_t", [FRIT_U8] = "uint8_t", [FRIT_U16] = "uint16_t", [FRIT_U32] = "uint32_t",
      [FRIT_U64] = "uint64_t", [FRIT_F16] = "uint16_t", [FRIT_BF16] = "uint16_t", [FRIT_F32] = "float",
      [FRIT_F64] = "double", [FRIT_C64] = "c_float_complex", [FRIT_C128] = "c_double_complex"};
  static const char *const ops[OP_BUILTIN_COUNT] = {"sum", "prod", "max", "min", "lor", "land"};
  char name[64];
#define DATA(dst, ...) (snprintf(name, sizeof name, __VA_ARGS__), ((dst) = dlsym(S.lib, name)) != NULL)
  for (int k = FRIT_BOOL; k < FRIT_SCALAR_KIND_COUNT_; k++)
    if (!DATA(S.types[k], "ompi_mpi_%s", types[k])) return 0;
  for (int k = 0; k < OP_BUILTIN_COUNT; k++)
    if (!DATA(S.ops[k], "ompi_mpi_op_%s", ops[k])) return 0;
  return DATA(S.world, "ompi_mpi_comm_world") && DATA(S.errors_return, "ompi_mpi_errors_return") &&
         DATA(S.i64, "ompi_mpi_int64_t");
#undef DATA
}

static frit_status init_mpi(frit_ctx *ctx) {
  if (!S.lib) {
    /* $FRIT_MPI_LIB: another build of Open MPI's library (and the tests' missing one) */
    const char *name = getenv("FRIT_MPI_LIB") && *getenv("FRIT_MPI_LIB") ? getenv("FRIT_MPI_LIB") : MPI_LIB;
    S.lib = dlopen(name, RTLD_NOW | RTLD_GLOBAL); /* GLOBAL: Open MPI's plugins resolve against it */
    if (!S.lib)
      return frit_set_error(ctx, FRIT_ERR_RUNTIME, "dist: MPI unavailable: %s (install Open MPI: apt-get install openmpi-bin)",
                            dlerror());
    if (!load_mpi()) {
      frit_status st = frit_set_error(ctx, FRIT_ERR_RUNTIME,
                                      "dist: MPI unavailable: %s is not Open MPI's (%s); this layer speaks the "
                                      "Open MPI ABI only (install Open MPI: apt-get install openmpi-bin)", name, dlerror());
      dlclose(S.lib);
      S.lib = NULL;
      return st;
    }
  }
  int inited = 0, fin = 0, provided = 0, rc;
  S.f.Initialized(&inited), S.f.Finalized(&fin);
  if (fin) return frit_set_error(ctx, FRIT_ERR_RUNTIME, "dist: MPI was already finalised in this process");
  if (!inited) {
    if ((rc = S.f.Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED_, &provided)) != MPI_SUCCESS_)
      return frit_set_error(ctx, FRIT_ERR_RUNTIME, "dist: MPI_Init_thread failed (error %d)", rc);
    S.owns_mpi = 1;
  }
  /* Our lock serialises the calls, but they may come from any thread. Someone else's MPI at a lower
   * level is theirs to use rightly (e.g. all of it from the main thread), so it is not refused. */
  S.f.Query_thread(&provided);
  if (S.owns_mpi && provided < MPI_THREAD_SERIALIZED_)
    return frit_set_error(ctx, FRIT_ERR_RUNTIME, "dist: MPI provides thread level %d, frit needs MPI_THREAD_SERIALIZED",
                          provided);
  int rank = 0, size = 1;
  S.f.Comm_rank(S.world, &rank), S.f.Comm_size(S.world, &size);
  atomic_store(&g_rank, rank), atomic_store(&g_size, size);
  /* a communicator of our own: frit's traffic never matches the application's, and its errors return */
  mpi_h req;
  frit_status st = FRIT_OK;
  if ((rc = S.f.Comm_idup(S.world, &S.comm, &req)) != MPI_SUCCESS_) st = mpi_fail(ctx, "MPI_Comm_idup", rc, "init");
  else st = wait_reqs(ctx, &req, 1, "init (every rank must call frit_dist_init)", now_s());
  if (st == FRIT_OK && (rc = S.f.Comm_set_errhandler(S.comm, S.errors_return)) != MPI_SUCCESS_)
    st = mpi_fail(ctx, "MPI_Comm_set_errhandler", rc, "init");
  /* Open MPI 4.1 reports a failed nonblocking collective (e.g. truncation) in MPI_Test on
   * MPI_COMM_WORLD's handler, not on the request's communicator: where the MPI is ours, so is the
   * choice not to abort. Someone else's world keeps its handler. */
  if (st == FRIT_OK && S.owns_mpi && (rc = S.f.Comm_set_errhandler(S.world, S.errors_return)) != MPI_SUCCESS_)
    st = mpi_fail(ctx, "MPI_Comm_set_errhandler", rc, "init");
  static mpi_user_fn *const fns[NAN_OP_COUNT] = {nan_max_f32, nan_min_f32, nan_max_f64, nan_min_f64};
  for (int i = 0; st == FRIT_OK && i < NAN_OP_COUNT; i++)
    if ((rc = S.f.Op_create(fns[i], 1, &S.nan_ops[i])) != MPI_SUCCESS_) st = mpi_fail(ctx, "MPI_Op_create", rc, "init");
  if (st == FRIT_OK && !(S.recs = malloc(sizeof *S.recs * R_LEN * (size_t)size)))
    st = frit_set_error(ctx, FRIT_ERR_NOMEM, "dist: out of memory");
  if (st != FRIT_OK) {
    for (int i = 0; i < NAN_OP_COUNT; i++)
      if (S.nan_ops[i]) S.f.Op_free(&S.nan_ops[i]), S.nan_ops[i] = NULL;
    if (S.comm && !S.broken) S.f.Comm_free(&S.comm);
    S.comm = NULL;
    atomic_store(&g_rank, 0), atomic_store(&g_size, 1);
  }
  return st;
}

frit_status frit_dist_init(frit_ctx *ctx, int mode) {
  if (mode != 0 && mode != 1) return frit_set_error(ctx, FRIT_ERR_INVALID, "dist: init mode %d is not 0 or 1", mode);
  pthread_mutex_lock(&g_lock);
  frit_status st = FRIT_OK;
  if (S.finalized) {
    st = frit_set_error(ctx, FRIT_ERR_RUNTIME, "dist: frit_dist_init after frit_dist_finalize: MPI cannot be initialised "
                                               "twice in one process");
  } else if (S.broken) {
    st = not_ready(ctx);
  } else if (atomic_load(&g_inited)) {
    if (mode == 1 && !atomic_load(&g_uses_mpi))
      st = frit_set_error(ctx, FRIT_ERR_RUNTIME, "dist: MPI asked for, but the world was already set up without MPI "
                                                 "(by frit_dist_init mode 0 in a process no MPI launcher started)");
  } else {
    const char *t = getenv("FRIT_DIST_TIMEOUT"), *chk = getenv("FRIT_DIST_CHECK");
    char *end = NULL;
    double timeout = t && *t ? strtod(t, &end) : 600;
    S.check = !(chk && strcmp(chk, "0") == 0);
    const char *launchers[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"};
    int launched = 0;
    for (int i = 0; i < 3; i++) launched |= getenv(launchers[i]) && *getenv(launchers[i]);
    S.timeout = timeout;
    if ((end && *end) || !(timeout >= 0) || !isfinite(timeout))
      st = frit_set_error(ctx, FRIT_ERR_INVALID, "dist: FRIT_DIST_TIMEOUT=%s is not a number of seconds >= 0", t);
    else if (mode == 1 || launched)
      st = init_mpi(ctx);
    if (st == FRIT_OK) {
      atomic_store(&g_uses_mpi, mode == 1 || launched);
      atomic_store(&g_inited, 1);
    }
  }
  pthread_mutex_unlock(&g_lock);
  return st;
}

frit_status frit_dist_finalize(frit_ctx *ctx) {
  frit_dist_exchange_stop();
  pthread_mutex_lock(&g_lock);
  frit_status st = FRIT_OK;
  if (atomic_load(&g_inited) && atomic_load(&g_uses_mpi)) {
    int fin = 0;
    S.f.Finalized(&fin);
    for (int i = 0; !fin && i < NAN_OP_COUNT; i++) /* local, and allowed while a request uses it */
      if (S.nan_ops[i]) S.f.Op_free(&S.nan_ops[i]);
    if (S.broken) {
      /* S.stage and S.recs stay: a pending request may still write them */
      st = frit_set_error(ctx, FRIT_ERR_RUNTIME,
                          "dist: MPI left unfinalised after an earlier failure (%s): MPI_Finalize could wait forever "
                          "on ranks out of step; end the process",
                          S.why_broken);
    } else {
      int rc = MPI_SUCCESS_;
      if (!fin) S.f.Comm_free(&S.comm);
      if (!fin && S.owns_mpi) rc = S.f.Finalize();
      if (rc != MPI_SUCCESS_) st = frit_set_error(ctx, FRIT_ERR_RUNTIME, "dist: MPI_Finalize failed (error %d)", rc);
      free(S.stage), free(S.recs);
      S.stage = NULL, S.recs = NULL, S.stage_cap = 0;
    }
  }
  if (atomic_load(&g_inited)) S.finalized = 1;
  atomic_store(&g_inited, 0), atomic_store(&g_uses_mpi, 0);
  atomic_store(&g_rank, 0), atomic_store(&g_size, 1);
  pthread_mutex_unlock(&g_lock);
  return st;
}
