/* Internal state of the reference interpreter (frit_interpret), shared by its files:
 * interp_sets.c computes which loop ranges each node's cached value depends on, interp.c runs;
 * interp_seq*.c run structured kernels (SEQ) with statement semantics. */
#ifndef FRIT_INTERP_INTERP_H
#define FRIT_INTERP_INTERP_H

#include "ir/uop.h"

/* A pointer value: a buffer slot and an element offset, plus the AND of the gates on the way. */
typedef struct frit_ptrval {
  int32_t buf;
  int64_t off;
  bool gate;
} frit_ptrval;

/* One evaluation in progress on the explicit stack (no recursion on graph depth). */
typedef struct frit_iframe {
  uint32_t n;     /* local node index */
  uint32_t phase; /* op-specific step */
  uint32_t i;     /* next source to ensure */
  int32_t lvl;    /* loop level (END/REDUCE) or chosen branch (IF) */
} frit_iframe;

typedef struct frit_ibuf {
  uint8_t *data;
  size_t size;           /* elements */
  frit_scalar_kind kind; /* FRIT_VOID until first typed use */
  bool owned;
} frit_ibuf;

typedef struct frit_interp {
  frit_ctx *ctx;
  frit_uop **nodes; /* reachable nodes in id order */
  size_t n;
  uint32_t *pos; /* node id -> local index, UINT32_MAX when unreachable */
  /* values */
  frit_scalar **val;
  frit_scalar *pool;
  frit_ptrval *ptr;
  uint64_t *stamp; /* clock when last computed/executed; 0: never */
  /* validity set of each node: ranges whose change invalidates its cached value */
  uint32_t *set_off, *set_len, *sets;
  bool *dyn; /* reads memory or has effects: depends on its loop context, not only its data */
  /* ranges */
  int32_t *rix; /* local index -> range index or -1 */
  size_t nr;
  bool *r_active;
  uint64_t *r_changed;
  int64_t *r_end;
  uint64_t clock;
  /* memory */
  frit_ibuf *bufs;
  size_t nbufs, cap_bufs;
  size_t nuser; /* slots 0..nuser-1 are the caller's buffers */
  const frit_binding *vars;
  int nvars;
  /* stack */
  frit_iframe *fr;
  size_t fsp, fcap;
  /* pairwise float sums: per REDUCE (local index) running, one state per lane (interp.c) */
  struct frit_ipw **pw;
} frit_interp;

/* Value lanes of a dtype (0 for pointers and void). */
static inline int frit_interp_lanes(frit_dtype dt) {
  return frit_dtype_is_ptr(dt) || frit_dtype_kind(dt) == FRIT_VOID ? 0 : frit_dtype_lanes(dt);
}

/* Memory semantics shared by both interpreters (interp_mem.c). The bool functions return false
 * with FRIT_ERR_RUNTIME set, naming node u (as frit_interp_error does). */
void frit_interp_error(frit_ctx *ctx, const frit_uop *u, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* An integer scalar value as int64 (u64 beyond INT64_MAX saturates). */
int64_t frit_interp_as_i64(const frit_uop *u, frit_scalar v);
/* INDEX u: base plus the integer index value ix, gates ANDed (gate NULL: no gate source). */
bool frit_interp_index(frit_ctx *ctx, const frit_uop *u, frit_ptrval base, const frit_scalar *ix,
                       const frit_scalar *gate, frit_ptrval *out);
/* LOAD u through p into out; a closed gate gives alt (alt_lanes lanes, 1 broadcasts), or zeros. */
bool frit_interp_load(frit_ctx *ctx, const frit_uop *u, frit_ibuf *bufs, const frit_ptrval *p,
                      const frit_scalar *alt, int alt_lanes, frit_scalar *out);
/* STORE / ATOMIC / ATOMIC_CAS u through p with value v (desired: CAS's new value); out (NULL
 * when u yields nothing) receives the old values, zeros behind a closed gate. */
bool frit_interp_write(frit_ctx *ctx, const frit_uop *u, frit_ibuf *bufs, const frit_ptrval *p, const frit_scalar *v,
                       const frit_scalar *desired, frit_scalar *out);

/* Fills rix, nr, dyn, set_off/set_len/sets. Returns FRIT_OK or FRIT_ERR_NOMEM (error set). */
frit_status frit_interp_compute_sets(frit_interp *I);

/* The starting value of a REDUCE with ALU op `op` over dtype dt (0, 1, -inf/min, +inf/max, ~0). */
frit_scalar frit_interp_reduce_identity(frit_op op, frit_dtype dt);

/* Structured kernels (interp_seq.c): whether the graph has a SEQ (*st: FRIT_ERR_NOMEM on OOM),
 * and frit_interpret's statement-semantics counterpart that runs them. */
bool frit_interp_is_structured(frit_uop *root, frit_status *st);
frit_status frit_interpret_seq(frit_ctx *ctx, frit_uop *root, void *const *bufs, const size_t *bufsizes, int nbufs,
                               const frit_binding *vars, int nvars, frit_scalar *out);

#endif
