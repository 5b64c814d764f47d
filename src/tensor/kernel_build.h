/* Builder state of explicit kernels and host loops (kernel.c, kernel_flow.c, loop.c): the open
 * kernel with its stack of statement blocks, and the open host loops; one per ctx (an owned object). */
#ifndef FRIT_KERNEL_BUILD_H
#define FRIT_KERNEL_BUILD_H

#include "tensor/tensor_internal.h"

/* node id -> small int, open addressing (key 0 = empty slot, keys are id + 1) */
typedef struct kb_map {
  struct kb_slot {
    uint32_t key;
    int32_t val;
  } *slots;
  size_t cap, n;
} kb_map;
bool kb_map_get(const kb_map *m, uint32_t id, int32_t *val);
bool kb_map_put(kb_map *m, uint32_t id, int32_t val); /* false on OOM */
void kb_map_clear(kb_map *m);
void kb_map_free(kb_map *m);

/* A growable array of nodes. */
typedef struct kb_list {
  frit_uop **v;
  size_t n, cap;
} kb_list;
bool kb_list_push(kb_list *l, frit_uop *u);

typedef enum kb_kind { KB_KERNEL, KB_LOOP, KB_THEN, KB_ELSE } kb_kind;

/* An open block collecting the statements of its SEQ. */
typedef struct kb_block {
  kb_kind kind;
  int32_t uid;        /* values made in the block are valid while a block of this uid is open */
  kb_list stmts;
  frit_uop *range;    /* KB_LOOP: its RANGE */
  frit_uop *cond;     /* KB_THEN, KB_ELSE: the bool condition */
  frit_uop *then_seq; /* KB_ELSE: the closed then-branch */
} kb_block;

typedef struct kb_var {
  frit_uop *reg; /* DEFINE_REG */
  int32_t uid;   /* block that declared it */
} kb_var;

typedef struct kb_host_loop {
  int64_t id;
  frit_uop *start, *end, *step, *ivar;
  int k;
  frit_uop **init, **carry; /* malloc'd, k each */
} kb_host_loop;

typedef struct kb_state {
  /* the open kernel */
  bool open, failed;
  bool trusted; /* kb_trust_indices: the schedule skips this kernel's bounds policy */
  char *name;
  int ndim;
  frit_uop *ranges[FRIT_MAX_DIMS];
  kb_block *blocks;
  size_t nblocks, capblocks;
  int32_t next_uid;
  int64_t next_serial, next_axis;
  kb_var *vars;
  size_t nvars, capvars;
  kb_map leaves; /* RANGE/LOAD/ATOMIC made by this kernel -> uid of the block that made them */
  kb_map memo;   /* classification of values (kb_classify), cleared whenever a block closes */
  kb_list written; /* targets stored to, in first-store order */
  kb_list scratch; /* kb_scratch: targets whose old values the (trusted) kernel never needs */
  /* results of the last closed kernel (frit_kernel_written) */
  kb_list res_old, res_new;
  /* open host loops, innermost last */
  kb_host_loop *loops;
  size_t nloops, caploops;
  int64_t next_loop_id;
  /* host loops whose bounds are computed but bounded by construction (the reverse loops of
   * frit_vjp, src/autodiff/loop_vjp.c): loop id -> the most trips they run */
  kb_map trips;
} kb_state;

/* Marks the open kernel's indices as in range by construction (frit's own kernels, such as the
 * radix sort's scatter to positions it counted): the schedule neither clamps nor gates them, as
 * with FRIT_BOUNDS_UNCHECKED. A clamp on a data-dependent index costs a third of a scatter loop. */
void kb_trust_indices(frit_ctx *ctx);

/* Marks t, a tensor the open trusted kernel writes, as scratch there: its old values are never
 * read (the kernel stores every element before reading it, or no one reads what it leaves), so
 * the schedule does not copy them into the new version's buffer, and a fill that only gave the
 * scratch a shape costs nothing. A wrong claim reads uninitialised memory: frit's own kernels
 * only (the radix sort's counts and ping-pong buffers). */
void kb_scratch(frit_ctx *ctx, frit_tensor *t);

/* The ctx's builder state; created on first use when `create` (NULL on OOM, with an error). */
kb_state *kb_get(frit_ctx *ctx, bool create);

/* Sets FRIT_ERR_INVALID ("op <op>: shapes ...: <why>", like ti_fail) and marks the open kernel
 * as failed (its frit_kernel_end returns -1). Returns NULL. */
frit_tensor *kb_fail(frit_ctx *ctx, const char *op, frit_tensor *const *ts, int n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* ti_ok, marking the open kernel failed on a NULL argument. */
bool kb_ok(frit_ctx *ctx, const char *op, frit_tensor *const *ts, int n);

/* Classes of values (kb_classify). */
enum {
  KB_SYM = 1,    /* CONST / DEFINE_VAR / ALU over those: symbolic, needs no tensor */
  KB_TENSOR,     /* a tensor-level value */
  KB_SCALAR,     /* a kernel scalar of the open kernel, valid here */
  KB_FOREIGN,    /* a kernel scalar of another kernel (or made when no kernel was open) */
  KB_OUT_SCOPE,  /* a kernel scalar of this kernel whose loop/if block has closed */
};
/* Class of a value, looking through ALU/CAST/BITCAST chains (memoised in st->memo).
 * scoped = false: only whether it depends on kernel-level leaves (KB_SCALAR) at all. */
int kb_classify(frit_ctx *ctx, kb_state *st, frit_uop *u, bool scoped);

/* A 0-d value usable at this point of the open kernel (kernel scalar or 0-d tensor), or NULL
 * with an error naming op and `what` ("index 1", "value"). int_only: integer dtypes only. */
frit_tensor *kb_scalar(frit_ctx *ctx, kb_state *st, const char *op, const char *what, frit_tensor *v, bool int_only);

/* The open kernel's innermost block, and appending a statement to it (false on OOM). */
kb_block *kb_top(kb_state *st);
bool kb_emit(frit_ctx *ctx, kb_state *st, frit_uop *stmt);
/* Records a kernel-level leaf (RANGE/LOAD/ATOMIC) made in block uid. */
bool kb_leaf(frit_ctx *ctx, kb_state *st, frit_uop *u, int32_t uid);
/* Opens a block (false on OOM); closing pops it (the caller takes its statements). */
kb_block *kb_push_block(frit_ctx *ctx, kb_state *st, kb_kind kind);
/* SEQ of a list of statements (with its shape-less node; NULL on error). */
frit_uop *kb_seq(frit_ctx *ctx, const kb_list *stmts);
/* The next serial number for LOAD / STORE / ATOMIC nodes of the open kernel. */
static inline int64_t kb_serial(kb_state *st) { return st->next_serial++; }

#endif
