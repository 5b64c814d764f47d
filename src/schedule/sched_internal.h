/* Internal state of the scheduler shared by its files: realize.c (kernel boundaries, buffers),
 * rangeify.c (kernel ASTs through the rewrite engine) and plan.c (memory plan, printing). */
#ifndef FRIT_SCHED_INTERNAL_H
#define FRIT_SCHED_INTERNAL_H

#include "schedule/schedule.h"
#include "tensor/shape.h"

/* One kernel to build: it computes the tensor node `root` into buffer `out_buf`. */
typedef struct sched_kspec {
  frit_uop *root;
  int out_buf;
  bool load_root; /* the value of root already lives in a buffer: copy it (duplicate outputs) */
  int scatter;    /* root is a SCATTER: 1 = the kernel copying x into the buffer, 2 = the updates */
} sched_kspec;

typedef struct sched_state {
  frit_ctx *ctx;
  int no_fusion;
  uint32_t nids;    /* node count when scheduling began: the tensor graph's ids are below it */
  int32_t *buf_of;  /* node id -> buffer holding its value, -1 when fused (not realized) */
  /* the kernel being rangeified */
  frit_uop *root;
  bool load_root;
  int *params;      /* parameter p -> buffer index */
  int nparams, cap_params;
  int64_t next_axis;
  frit_sched_buf *bufs; /* the buffer table being built (dtype, numel) */
  const frit_ruleset *rules; /* rangeify.rules */
} sched_state;

/* Tensor sources of a tensor-level node (the others are i64 dims). */
bool sched_is_tensor_src(const frit_uop *u, uint32_t i);

/* The rangeify rule set (parsed per schedule; owned by ctx). */
frit_ruleset *sched_rangeify_rules(frit_ctx *ctx);

/* Builds kernel k's AST (SINK(END(STORE...))) for spec ks into *out (ast, params). */
frit_status sched_rangeify(sched_state *S, const sched_kspec *ks, frit_sched_kernel *out);

/* Byte size of one element of a buffer. */
static inline int64_t sched_elem_bytes(frit_dtype dt) { return (frit_dtype_bits(dt) + 7) / 8; }

/* Static plan (all TEMP sizes known) or -1 offsets; fills arena_bytes. */
void sched_plan_static(frit_ctx *ctx, frit_schedule *s);

#endif
