/* Internal state of the scheduler shared by its files: realize.c (kernel boundaries, buffers),
 * rangeify.c (kernel ASTs through the rewrite engine) and plan.c (memory plan, printing). */
#ifndef FRIT_SCHED_INTERNAL_H
#define FRIT_SCHED_INTERNAL_H

#include "schedule/schedule.h"
#include "tensor/shape.h"

#define SCHED_MAX_SIB 8

/* One kernel to build: it computes the tensor node `root` into buffer `out_buf`. */
typedef struct sched_kspec {
  frit_uop *root;
  int out_buf;
  bool load_root; /* the value of root already lives in a buffer: copy it (duplicate outputs) */
  int scatter;    /* 1 = the kernel copying root->src[0] into the buffer (SCATTER's x, or the old
                     version t of AFTER(t, KERNEL)); root is a SCATTER: 2 = the updates */
  int ekernel;    /* root is a KERNEL: the explicit kernel itself (ekernel.c), out_buf unused */
  int nsib;       /* sibling outputs stored by this kernel too (siblings.c), over root's loops */
  frit_uop *sib[SCHED_MAX_SIB];
  int sib_buf[SCHED_MAX_SIB];
} sched_kspec;

typedef struct sched_ek sched_ek; /* the explicit kernels of one schedule (ekernel.c) */
typedef struct sched_loops sched_loops; /* the host loops of one schedule (loop.c) */

typedef struct sched_state {
  frit_ctx *ctx;
  int no_fusion;
  uint32_t nids;    /* node count when scheduling began: the tensor graph's ids are below it */
  int32_t *buf_of;  /* node id -> buffer holding its value, -1 when fused (not realized) */
  /* the kernel being rangeified */
  frit_uop *root;
  bool load_root;
  frit_uop *const *sibs; /* its sibling outputs: computed here, not loaded */
  const int *sib_bufs;
  int nsib;
  int *params;      /* parameter p -> buffer index */
  int nparams, cap_params;
  int64_t next_axis;
  frit_sched_buf *bufs; /* the buffer table being built (dtype, numel) */
  const frit_ruleset *rules; /* rangeify.rules */
  /* explicit kernels (ekernel.c) */
  sched_ek *ek;     /* KERNEL nodes and their written versions; NULL when there are none */
  int bounds;       /* FRIT_BOUNDS_CLAMP/CHECK/UNCHECKED */
  int err_buf;      /* CHECK: the i32 error buffer, else -1 */
  const char **err_msgs;
  int nerr_msgs, cap_err_msgs;
  /* host loops (loop.c) */
  sched_loops *loops; /* NULL when the graph has no LOOP */
} sched_state;

/* AFTER(t, K) of an explicit kernel K: the version of t once K ran (a tensor-level node). */
static inline bool sched_is_kversion(const frit_uop *u) {
  return u->op == FRIT_OP_AFTER && u->nsrc == 2 && u->src[1]->op == FRIT_OP_KERNEL;
}

/* Tensor sources of a tensor-level node (the others are i64 dims). */
bool sched_is_tensor_src(const frit_uop *u, uint32_t i);

/* Sibling outputs (siblings.c): host_of[id] = the root of the kernel that also stores output id,
 * or unchanged (-1). real/heavy: the realize decisions, by id. */
frit_status sched_find_siblings(frit_ctx *ctx, const uint8_t *real, const uint8_t *heavy, frit_uop *const *outs,
                                int nout, int32_t *host_of);

/* The rangeify rule set (parsed per schedule; owned by ctx). */
frit_ruleset *sched_rangeify_rules(frit_ctx *ctx);

/* Builds kernel k's AST (SINK(END(STORE...))) for spec ks into *out (ast, params). */
frit_status sched_rangeify(sched_state *S, const sched_kspec *ks, frit_sched_kernel *out);

/* rangeify.c hooks for explicit kernels: make S the kernel the rangeify callbacks build (its
 * parameters), and the DEFINE_GLOBAL of buffer `buf` as a parameter of it. */
void sched_rangeify_enter(sched_state *S);
frit_uop *sched_global(sched_state *S, int buf);

/* ---------- explicit kernels (ekernel.c, docs/schedule.md "Explicit kernels") ---------- */

/* A node reached while walking the tensor graph: kernel-level nodes (a kernel's RANGE, LOAD,
 * ...) are an error naming them; the rest must have a shape (KERNEL and LOOP are void). */
frit_status sched_check_tensor_node(frit_ctx *ctx, frit_uop *u);
/* Before the graph is collected: finds the KERNELs below outs, the tensors each writes and their
 * versions AFTER(t, K) (made when the graph holds none). *extra (malloc'd, *nextra entries) gets
 * the versions that the outputs do not reach: the schedule must collect them too. */
frit_status sched_ek_prepare(sched_state *S, frit_uop *const *outs, int n, frit_uop ***extra, int *nextra);
/* The versions AFTER(t, K) of kernel K, in first-store order; returns their number. */
int sched_ek_versions(const sched_state *S, const frit_uop *k, frit_uop *const **after);
/* Version a = AFTER(t, K): K stores every element of t before reading any, so t's old value is
 * dead and the version's buffer needs no copy of it. */
bool sched_ek_fully_stored(const sched_state *S, const frit_uop *a);
/* K reads t as a whole 0-d value (a scalar operand) rather than through element addresses. */
bool sched_ek_scalar_use(const sched_state *S, const frit_uop *k, const frit_uop *t);
/* Lowers explicit kernel spec ks (the k-th kernel) to Contract B into *out (ast, params, name). */
frit_status sched_ekernel(sched_state *S, const sched_kspec *ks, int k, frit_sched_kernel *out);
void sched_ek_free(sched_state *S);

/* ---------- host loops (loop.c, docs/schedule.md "Host loops") ---------- */

/* CARRY, or a loop result AFTER(P, LOOP): values that live in a loop's slot buffer. */
static inline bool sched_is_loop_after(const frit_uop *u) {
  return u->op == FRIT_OP_AFTER && u->nsrc == 2 && u->src[1]->op == FRIT_OP_LOOP;
}
static inline bool sched_in_slot(const frit_uop *u) { return u->op == FRIT_OP_CARRY || sched_is_loop_after(u); }

/* Adds a buffer holding tensor t's value (realize.c). */
frit_status sched_add_buf(frit_ctx *ctx, frit_sched_buf **bufs, int *nb, int *cap, frit_uop *t, int kind, int io);

/* After the realize decisions: regions (the innermost loop whose CARRYs or index variable each
 * node depends on), errors for body values used outside their loop, and the decisions loops
 * need (next values, stop flags and computed bounds realized; heavy outer values read in a body
 * realized before the loop; LOOP/CARRY/results never get kernels). list: the collected tensor
 * nodes, ascending id; real: by id. Sets S->loops (NULL without loops). */
frit_status sched_loops_decide(sched_state *S, frit_uop *const *list, size_t n, uint8_t *real,
                               frit_uop *const *outs, int nout);
/* Slot buffers of the CARRYs; buf_of of CARRYs and loop results. Call after the output buffers
 * and before the TEMPs of realized nodes (a loop result that is an output gets a copy kernel). */
frit_status sched_loops_buffers(sched_state *S, frit_sched_buf **bufs, int *nb, int *cap);
/* Reorders the kernel specs into execution order (loop bodies between their begin and end),
 * adds the init copies and next copies, and records the step list. nplain: specs before the
 * output copies. *specs may be reallocated. */
frit_status sched_loops_order(sched_state *S, frit_sched_buf **bufs, int *nb, int *cap, sched_kspec **specs,
                              int *nspec, int nplain);
/* Fills s->steps/loops (for every schedule), adds loop variables to s->vars and extends buffer
 * liveness over loops. Call before the memory plan. */
frit_status sched_loops_finish(sched_state *S, frit_schedule *s);
void sched_loops_free(sched_state *S);
/* In-place rule for explicit kernels: may kernel k write the new version of t into t's buffer as
 * far as loops are concerned? False when t is a value of an enclosing region (needed again by
 * the next iteration). A CARRY's slot belongs to its loop: writable from its own body. */
bool sched_loops_inplace_ok(const sched_state *S, const frit_uop *t, const frit_uop *k);
/* Does `user` (a user of t in the graph) read t's current value? A LOOP reads its own CARRY only
 * when it is a next value or the stop flag; a loop result AFTER(P, LOOP) never reads P. */
bool sched_loops_user_reads(const frit_uop *user, const frit_uop *t);

/* Byte size of one element of a buffer. */
static inline int64_t sched_elem_bytes(frit_dtype dt) { return (frit_dtype_bits(dt) + 7) / 8; }

/* Static plan (all TEMP sizes known) or -1 offsets; fills arena_bytes. */
void sched_plan_static(frit_ctx *ctx, frit_schedule *s);
/* Sets every kernel's alias_mask (alias.c). */
void sched_mark_alias(frit_schedule *s);
/* overlap.c: reorders K (a program without host loops or explicit kernels) so that collectives and
 * the kernels feeding only them run as early as they can, and renumbers coll_seq; then, once the
 * buffers' first and last uses follow that order, keeps each collective's source live until its
 * result is first read (the exchange still reads it until then). */
frit_status sched_hoist_collectives(frit_ctx *ctx, frit_sched_kernel *K, int n, frit_sched_buf *bufs, int nb);
void sched_keep_collective_sources(const frit_sched_kernel *K, int n, frit_sched_buf *bufs);

/* realize.c: the tensor graph the realize decisions are made on */
typedef struct sched_graph {
  frit_uop **list; /* tensor nodes reachable from the outputs, ascending id */
  size_t n;
  uint8_t *in;     /* by id: reachable */
  uint8_t *real;   /* by id: realized (kernel boundary) */
  uint8_t *heavy;  /* by id: its fused cone holds a reduction */
  uint8_t *costly; /* by id: its fused cone holds a transcendental (erf, exp, ...) */
  uint32_t *uoff, *ulen, *users; /* users per list position (CSR) */
  uint32_t *pos;   /* id -> list position */
  uint8_t *rowcast; /* by id, EXPANDs: 0 not judged yet, 1 broadcast along rows, 2 not */
  uint32_t *mark;   /* by list position: the walk of broadcast_along_rows that last visited it */
  uint32_t walk;
} sched_graph;
bool sched_graph_is_real(const sched_graph *g, const frit_uop *u);
bool sched_is_leaf(const frit_uop *u);
/* an elementwise op (unary, binary, ternary ALU or a cast): the same index in every operand */
bool sched_is_elementwise(const frit_uop *u);
/* A PERMUTE that moves its last axis, over a REDUCE_AXIS reached through reshapes and casts that
 * fused(node) says are not realized (nor the reduction): that reduction, else NULL (rule 6). */
frit_uop *sched_permuted_reduction(frit_uop *u, bool (*fused)(const void *env, const frit_uop *), const void *env);
/* heavy[id]: the node's fused cone holds a reduction; costly[id]: a transcendental (both
 * recomputed after decisions change) */
void sched_compute_heavy(sched_graph *g);
/* The nodes reachable from outs, their users, and the per-node arrays (freed by the caller). */
frit_status sched_collect(frit_ctx *ctx, sched_graph *g, frit_uop *const *outs, int nout, uint32_t nids);
/* The cost model: sets real[id] for the nodes that end a kernel. */
frit_status sched_decide(frit_ctx *ctx, sched_graph *g, frit_uop *const *outs, int nout, int no_fusion);

#endif
