/* The schedule: tensor-level graph -> kernels (loop-level ASTs), buffer table and memory plan.
 * Contract 2 between the scheduler (src/schedule) and codegen/runtime. See docs/schedule.md. */
#ifndef FRIT_SCHEDULE_H
#define FRIT_SCHEDULE_H

#include "ir/uop.h"

enum { FRIT_BUF_INPUT, FRIT_BUF_OUTPUT, FRIT_BUF_TEMP };

/* Alignment (bytes) of every TEMP buffer's offset in the arena. */
#define FRIT_ARENA_ALIGN 64

typedef struct frit_sched_buf {  /* one buffer in the program's buffer table */
  frit_dtype dtype;              /* element dtype (scalar) */
  frit_uop *numel;               /* i64 UOp (may be symbolic) */
  int kind;                      /* FRIT_BUF_INPUT, FRIT_BUF_OUTPUT, FRIT_BUF_TEMP */
  int io_index;                  /* INPUT: position among the program's inputs (reachable
                                    BUFFERs sorted by input number); OUTPUT: output number;
                                    TEMP: -1 */
  int first_use, last_use;       /* kernel indices, for the memory plan (-1: never used) */
  int64_t arena_offset;          /* TEMP: byte offset (static plan) or -1 (planned at run) */
  /* extra */
  frit_uop *tensor;              /* the tensor-level node whose value the buffer holds
                                    (INPUT: the BUFFER node) */
  int ndim;                      /* its shape */
  frit_uop **dims;               /* ndim i64 UOps */
} frit_sched_buf;

typedef struct frit_sched_kernel {
  frit_uop *ast;         /* loop-level graph: SINK(END(STORE(INDEX(DEFINE_GLOBAL p, idx), value), RANGE...), ...)
                            DEFINE_GLOBAL arg.i0 = parameter number p; DEFINE_VARs appear directly. */
  int nparams;
  int *param_buf;        /* parameter p -> buffer table index */
  unsigned char *param_written; /* parameter p is stored to by this kernel (else only read) */
  const char *name;      /* e.g. "k3_exp_sum" */
  const char *ops;       /* frontend ops it came from, "exp,sub,max" */
  frit_uop *tensor;      /* the tensor-level node the kernel realises (for the "tensor" stage) */
  int structured;        /* 1: an explicit kernel (Contract B of docs/schedule.md "Explicit kernels"):
                            SINK(END(SEQ(...), R_0..)) or SINK(SEQ(...)), statements in program order */
  uint64_t alias_mask;   /* bit p: parameter p may share its memory with another parameter of this
                            kernel (a program input read only at the element that the kernel stores
                            to a program output of its dtype and shape: a donation written in place,
                            alias.c); rendered without `restrict`. Parameters >= 64: never */
  const frit_uop *collective; /* the COLLECTIVE node this kernel realizes, or NULL. Its AST is the
                            one-rank meaning (a copy of parameter coll_in into coll_out); in a world
                            of several ranks the runtime runs the exchange (src/dist) instead */
  int coll_in, coll_out;
  int coll_seq;          /* its place among the program's collectives, compared across ranks */
} frit_sched_kernel;

/* Host loops (Contract C, docs/schedule.md "Host loops"): the runtime executes the schedule's
 * step list with a program counter. Without loops the steps are the kernels in order. */
typedef enum frit_step_kind {
  FRIT_STEP_KERNEL,     /* run kernel `kernel` */
  FRIT_STEP_LOOP_BEGIN, /* evaluate loop `loop`'s start/end/step; zero trips: jump past its LOOP_END */
  FRIT_STEP_LOOP_END,   /* i += step; more trips (and no stop): jump back after its LOOP_BEGIN */
  FRIT_STEP_SWAP,       /* buffers a and b trade their memory (pointer swap, no copy) */
  FRIT_STEP_STOP_IF     /* buffer a (0-d bool; -1: always) is true: leave loop `loop` at its LOOP_END */
} frit_step_kind;

typedef struct frit_sched_step {
  int kind;              /* frit_step_kind */
  int kernel;            /* KERNEL */
  int loop;              /* LOOP_BEGIN, LOOP_END, STOP_IF: index into frit_schedule.loops */
  int a, b;              /* SWAP: the two buffers; STOP_IF: a = the flag buffer or -1 */
} frit_sched_step;

typedef struct frit_sched_loop {
  frit_uop *node;        /* the LOOP node */
  int64_t id;            /* its loop id (arg.i1): messages say "loop<id>" */
  int ivar;              /* index in vars of its index variable (set by the runtime, not bound) */
  frit_uop *bound[3];    /* start, end, step: i64 expressions of vars (enclosing ivars included),
                            evaluated at LOOP_BEGIN; NULL when read from bound_buf */
  int bound_buf[3];      /* buffer whose element 0 holds the value (any integer dtype), or -1 */
  int parent;            /* enclosing loop or -1 */
  int begin_step, end_step; /* positions of its LOOP_BEGIN and LOOP_END in steps */
  int first_kernel, last_kernel; /* the kernels of its body (first > last: none) */
} frit_sched_loop;

typedef struct frit_schedule {
  frit_sched_kernel *kernels;
  int nkernels;
  frit_sched_buf *bufs;
  int nbufs;
  frit_uop **vars;       /* DEFINE_VARs used by any kernel or buffer size, sorted by name */
  int nvars;
  int ninputs, noutputs;
  int *input_buf;        /* input i -> buffer table index */
  int *output_buf;       /* output k -> buffer table index */
  int64_t arena_bytes;   /* static arena size (TEMPs after reuse), or -1 when symbolic */
  int no_fusion;
  /* bounds policy FRIT_BOUNDS_CHECK: a TEMP i32 buffer of one element (-1 if none). The runtime
   * zeroes it before a run and reads it after each kernel: a nonzero value c is the error
   * err_msgs[c - 1] (FRIT_ERR_RUNTIME). */
  int err_buf;
  const char **err_msgs;
  int nerr_msgs;
  /* execution order (kernels are numbered in step order; a kernel appears once even when a
   * loop runs it many times) */
  frit_sched_step *steps;
  int nsteps;
  frit_sched_loop *loops;
  int nloops;
} frit_schedule;

/* Builds the schedule computing `outputs` (tensor-level nodes). no_fusion = 1: every tensor op
 * is its own kernel. Owned by ctx. NULL with an error on bad input. */
frit_schedule *frit_schedule_build(frit_ctx *ctx, frit_uop *const *outputs, int n, int no_fusion);
/* The same with the bounds policy of explicit kernels (FRIT_BOUNDS_CLAMP/CHECK/UNCHECKED);
 * frit_schedule_build uses FRIT_BOUNDS_CLAMP. */
frit_schedule *frit_schedule_build_bounds(frit_ctx *ctx, frit_uop *const *outputs, int n, int no_fusion,
                                          int bounds);

/* Memory plan for these variable bindings: offsets[b] (nbufs entries) gets the byte offset of
 * each TEMP buffer in the arena (-1 for non-TEMP buffers), *total the arena size in bytes.
 * Either pointer may be NULL. Uses the same first-fit-by-liveness plan as the static one. */
frit_status frit_schedule_plan_memory(frit_ctx *ctx, const frit_schedule *s, const frit_binding *vars,
                                      int nvars, int64_t *offsets, int64_t *total);

/* Evaluates an i64 size expression (CONST, DEFINE_VAR, ALU) under bindings. */
frit_status frit_schedule_eval_size(frit_ctx *ctx, frit_uop *e, const frit_binding *vars, int nvars,
                                    int64_t *out);

/* Kernel k (not explicit) reads parameter pin only at the element its single store to parameter
 * pout writes, in the same loop iteration, every such read feeds the stored value, and no loop
 * closed around that store leaves its address unchanged (alias.c): pout may then be written into
 * pin's memory. */
bool frit_sched_same_element(const frit_sched_kernel *K, int pin, int pout);
/* Kernel k runs inside a host loop. */
bool frit_sched_in_loop(const frit_schedule *s, int k);
/* Buffers a and b have the same shape expressions (hash-consed, or equal constants). */
bool frit_sched_same_dims(const frit_sched_buf *a, const frit_sched_buf *b);

/* Prints stage "tensor" (tensor graph of each kernel), "kernel" (loop-level AST), or "plan"
 * (buffer table and memory plan) for kernel k (-1: all kernels; the plan is printed with -1). */
frit_status frit_schedule_print(frit_ctx *ctx, const frit_schedule *s, const char *stage, int k, FILE *out);

#endif
