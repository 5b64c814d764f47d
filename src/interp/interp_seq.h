/* Internal state of the structured-kernel interpreter, shared by interp_seq.c (execution) and
 * interp_seq_setup.c (node kinds, leaf sets, buffers). */
#ifndef FRIT_INTERP_SEQ_H
#define FRIT_INTERP_SEQ_H

#include "interp/interp.h"

enum { S_OK, S_ERR, S_PUSHED, S_DONE };

/* How a node gets its value. */
enum {
  K_STMT,     /* void: executed, never evaluated */
  K_PURE,     /* computed from its sources, cached while its leaves are unchanged */
  K_VOLATILE, /* pure but reads memory the kernel writes (an unlisted LOAD): recomputed per use */
  K_RANGE,    /* a loop index: set by its END/REDUCE */
  K_SOURCE    /* a value source (an ATOMIC, or a LOAD of memory the kernel writes, listed in a
               * SEQ): set where the SEQ evaluates it. A listed LOAD of memory the kernel does not
               * write is K_PURE: listing it only evaluates it there. */
};

enum { SIG_NONE, SIG_BREAK, SIG_CONTINUE };

typedef struct sframe {
  uint32_t k;
  uint32_t phase;
  int32_t lvl;
} sframe;

typedef struct sq {
  frit_ctx *ctx;
  frit_uop **nodes;
  size_t n;
  uint32_t *pos;
  frit_scalar **val;
  frit_scalar *pool;
  frit_ptrval *ptr;
  uint8_t *kind;
  bool *active;   /* ranges currently running */
  int64_t *rend;  /* trip count of a running range */
  uint64_t *stamp; /* clock when computed (K_PURE/K_VOLATILE) or last set (K_RANGE/K_SOURCE); 0 never */
  uint32_t *set_off, *set_len, *sets; /* leaves (ranges, value sources) each pure value depends on */
  uint64_t clock, req;
  uint64_t point; /* clock when the current kernel point started */
  uint32_t *regs; /* DEFINE_REG buffers (slots), zeroed at each kernel point */
  size_t nregs;
  frit_ibuf *bufs;
  size_t nbufs, cap_bufs, nuser;
  const frit_binding *vars;
  int nvars;
  sframe *fr;
  size_t fsp, fcap;
  int sig;         /* pending BREAK/CONTINUE */
  uint32_t sig_at; /* its RANGE (local index) */
} sq;

int frit_sq_fail(sq *S, const frit_uop *u, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static inline uint32_t frit_sq_pos(const sq *S, const frit_uop *u) { return S->pos[u->id]; }
#define frit_sq_lanes frit_interp_lanes
static inline bool frit_sq_is_void(frit_dtype dt) { return !frit_dtype_is_ptr(dt) && frit_dtype_kind(dt) == FRIT_VOID; }

/* Ordering sources (deps of memory ops, AFTER's effects): order comes from SEQ here, so a value
 * never waits on them. */
static inline bool frit_sq_is_dep(const frit_uop *u, uint32_t i) {
  frit_op op = (frit_op)u->op;
  if (op == FRIT_OP_AFTER) return i >= 1;
  if (op == FRIT_OP_LOAD || op == FRIT_OP_STORE || op == FRIT_OP_ATOMIC || op == FRIT_OP_ATOMIC_CAS)
    return i >= 1 && frit_sq_is_void(u->src[i]->dtype);
  return false;
}

/* Sources a pure value is computed from (a RANGE's end is read by its loop, not by the RANGE). */
static inline bool frit_sq_needed(const frit_uop *u, uint32_t i) {
  return u->op != FRIT_OP_RANGE && !frit_sq_is_dep(u, i);
}

/* Builds the state for root (nodes, kinds, leaf sets, buffers); FRIT_OK or the error set. */
frit_status frit_sq_setup(sq *S, frit_uop *root, void *const *bufs, const size_t *bufsizes, int nbufs);
void frit_sq_free(sq *S);

#endif
