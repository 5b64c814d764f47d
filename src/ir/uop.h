/* Internal view of the node store and context: struct layouts, arena, errors, asserts.
 * Every source file of the library includes this; users only see include/frit.h. */
#ifndef FRIT_UOP_H
#define FRIT_UOP_H

#include "frit.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Internal invariant check: aborts with file and line. Never used for user errors. */
#define FRIT_ASSERT(cond)                                                                    \
  do {                                                                                       \
    if (!(cond)) frit_assert_fail(#cond, __FILE__, __LINE__);                                \
  } while (0)
_Noreturn void frit_assert_fail(const char *expr, const char *file, int line);

struct frit_uop {
  uint32_t id;
  uint16_t op;     /* frit_op */
  uint16_t pad_;
  frit_dtype dtype;
  uint32_t nsrc;
  uint64_t hash;
  frit_uop **src;
  frit_arg arg;    /* blob points into ctx-owned, interned storage */
  int64_t vmin, vmax; /* range analysis, filled in at creation */
  const void *shape;  /* tensor level: cached shape (src/tensor), not part of identity */
};

/* A bump allocator: memory lives until the context dies. */
typedef struct frit_arena_chunk frit_arena_chunk;
typedef struct frit_arena {
  frit_arena_chunk *head;
  size_t used, cap;
} frit_arena;
void *frit_arena_alloc(frit_arena *a, size_t size); /* 16-byte aligned; NULL on OOM */
void frit_arena_free_all(frit_arena *a);

/* A registry of objects with destructors, freed with the context (rule sets, caches ...). */
typedef struct frit_owned {
  void *ptr;
  void (*destroy)(void *ptr);
} frit_owned;

struct frit_ctx {
  frit_arena arena;
  /* hash-consing table: open addressing; the hash sits beside the pointer so that probing
   * does not touch the nodes themselves (one cache miss per lookup, not one per probe) */
  struct frit_slot {
    uint64_t hash;
    frit_uop *node;
  } *table;
  size_t table_cap, count;
  /* nodes by id */
  frit_uop **nodes;
  size_t nodes_cap;
  /* interned blobs (strings and int arrays), open addressing */
  struct frit_blob **blobs;
  size_t blobs_cap, blobs_count;
  /* errors */
  frit_status status;
  char errmsg[1024];
  /* owned objects freed at the end, in reverse order */
  frit_owned *owned;
  size_t owned_count, owned_cap;
  /* lazily built simplifier rule set */
  frit_ruleset *simplifier;
  /* scratch for string results (frit_ir_to_string etc.) */
  char *strbuf;
  /* tensor frontend: frit_input numbers inputs in creation order (src/tensor) */
  int tensor_ninputs;
  /* tensor frontend: gradient rules attached to nodes (src/tensor/custom_vjp.c) */
  struct ti_vjp_table *vjp_rules;
  /* autodiff: checkpoint interval of host-loop gradients (0: default; frit_set_loop_checkpoint) */
  int loop_checkpoint;
};

/* Records an error in ctx (printf-style) and returns `st`. */
frit_status frit_set_error(frit_ctx *ctx, frit_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Hands `ptr` to the context: destroy(ptr) is called by frit_ctx_free. Returns false on OOM
 * (and then destroys it at once). */
bool frit_ctx_own(frit_ctx *ctx, void *ptr, void (*destroy)(void *));
/* Keeps a copy of a string in the context's result slot (replacing the previous one). */
const char *frit_ctx_keep_string(frit_ctx *ctx, char *malloced);

/* Elements of dt that one vector register of this machine holds, counting 8- and 16-bit types
 * as the 32-bit values they compute in, and never fewer than 8: the register tiler's column
 * step (codegen/opt_tile.c), which the matmul's packed panels (tensor/linalg.c) match. */
int frit_host_tile_lanes(frit_dtype dt);
/* the vector accumulators a host register tile holds: 16 of AVX-512's 32 registers (8 rows x 2
 * vectors), else 12 of 16 (6 x 2); the rest hold the loads and broadcasts */
int frit_host_tile_accumulators(void);

/* Node for an id (0 <= id < frit_node_count). */
static inline frit_uop *frit_node_by_id(const frit_ctx *ctx, uint32_t id) { return ctx->nodes[id]; }

/* A default-zero arg. */
static inline frit_arg frit_arg_none(void) {
  frit_arg a;
  memset(&a, 0, sizeof a);
  return a;
}

/* Local well-formedness of one node (source count, ALU dtype rules, basic arg shape); shared
 * by construction and the verifier. Sets the error and returns its status. */
frit_status frit_check_node(frit_ctx *ctx, frit_op op, frit_dtype dt, frit_uop *const *src, int nsrc,
                            const frit_arg *arg);

/* Same node with new sources (returns u itself when unchanged). NULL on error. */
frit_uop *frit_uop_replace_src(frit_ctx *ctx, frit_uop *u, frit_uop *const *src, int nsrc);

/* Range analysis of a freshly built node (sources already analysed); see src/symbolic/range.c */
void frit_range_analyse(frit_uop *u);
/* Inclusive limits of an integer/bool scalar kind (u64 high end capped at INT64_MAX). */
void frit_dtype_limits(frit_dtype dt, int64_t *lo, int64_t *hi);

/* Constant helpers */
static inline bool frit_is_const(const frit_uop *u) { return u->op == FRIT_OP_CONST; }

#endif
