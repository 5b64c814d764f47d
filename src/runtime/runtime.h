/* Internal view of compiled programs: the program object, the per-ctx compile cache, and the
 * pieces the runtime's files share (pipeline.c builds programs, program.c runs and queries them). */
#ifndef FRIT_RUNTIME_H
#define FRIT_RUNTIME_H

#include "codegen/codegen.h"
#include "interp/scalar.h"
#include "ir/uop.h"
#include "runtime/pool.h"
#include "schedule/schedule.h"

#include <stdatomic.h>

/* Kernels whose loop nest runs fewer iterations than this (frit_rt_kernel_work) run on the
 * calling thread: waking the pool costs more than they do. */
#define FRIT_RT_MIN_PARALLEL_WORK 32768
/* At most this many loop sets in a kernel's work estimate (more: the product of all its loops). */
#define FRIT_RT_WORK_SETS 16

/* What the pipeline produced for one output list; shared by every program compiled from it
 * (the compile cache hands it out again). Lives in the ctx. */
typedef struct frit_rt_compiled {
  frit_uop **outputs; /* the cache key: hash-consing makes pointer equality graph equality */
  int noutputs;
  int no_fusion, interpret;
  int bounds;              /* explicit kernels' bounds policy (FRIT_BOUNDS_*): part of the key */
  const char *cc, *cflags; /* compiled code depends on these too */
  frit_schedule *sched;
  frit_cg_program *cg;     /* NULL when interpreting (built lazily for printing) */
  /* per kernel */
  frit_uop ***range_ends;  /* RANGE extents of each kernel AST, for the work estimate */
  int *nranges;
  uint64_t **work_sets;    /* the loop sets whose iterations make the work (loopsets.c) */
  int *nwork_sets;         /* -1: unknown (the product of all extents) */
  char **launch;           /* launch dims as text */
  struct frit_rt_spec *spec; /* per kernel: its size-specialised variants (specialize.c), lazily */
  struct frit_device *dev; /* NULL: the host; else the device its kernels were built for */
  void **dev_kernels;      /* per kernel: the device's handle (the device owns it) */
  void **dev_kernels_group; /* per kernel: its work-group rendering's handle, or NULL */
  void **dev_kernels_tile;  /* per kernel: its tiled rendering's handle, or NULL */
  struct frit_rt_prof_meta *prof; /* per kernel: the profiler's facts (profile.c), lazily */
} frit_rt_compiled;
typedef struct frit_rt_prof_meta frit_rt_prof_meta;

/* One frit_program_donate declaration and how the current run uses it. */
typedef struct frit_rt_donation {
  int input, output;
  bool direct; /* the schedule lets the output be written straight into the input (donate.c) */
  bool active; /* this run: the caller passed NULL or the input's pointer for the output */
  bool staged; /* this run: the output goes to p->stage, copied into the input after the run */
} frit_rt_donation;

struct frit_program {
  frit_ctx *ctx;
  frit_rt_compiled *c;
  frit_cg_config cfg;
  int threads;       /* threads the pool uses (1: none started) */
  int specialise;    /* $FRIT_SPECIALISE: 0 never, 1 by work (default), 2 every kernel at once */
  frit_pool *pool;   /* the shared pool, acquired on the first run that needs it */
  /* run state, reused between runs */
  void *arena;
  size_t arena_cap;
  int64_t *numel, *offsets, *varvals, *scratch_i64;
  void **bufptr;     /* buffer table index -> memory */
  void **params;     /* one kernel's parameters */
  size_t *param_sizes;
  frit_binding *binds;
  /* host loops (per run): the index, end and step of each loop, its stop flag; which variables
   * are loop indices (set by the runtime, never bound by the caller) */
  int64_t *loop_i, *loop_end, *loop_step;
  uint8_t *loop_stop;
  uint8_t *is_ivar;
  /* $FRIT_PROFILE: per kernel, the calls and the nanoseconds they took (NULL when off); printed
   * to stderr when the program is freed */
  int64_t *prof_calls, *prof_ns;
  /* donated outputs (frit_program_donate) and the staging memory of those not written in place */
  frit_rt_donation *donate;
  int ndonate;
  void *stage;
  size_t stage_cap;
  /* device programs (device_run.c): the device arena, each buffer's byte offset in it (swapped
   * with bufptr by host loops), the io buffers' first offsets, one kernel's parameter offsets */
  void *dev_arena;
  size_t dev_cap;
  int64_t *devoff, *devoff0, *param_off;
  /* collectives moving on the exchange thread (collective.c), waited for before a kernel touches
   * their memory and at the end of the run */
  struct frit_rt_pending *pending;
  int npending, pending_cap;
};

/* Compile-cache statistics of a ctx (for tests and `frit_program_info`). */
typedef struct frit_rt_stats {
  uint64_t compiles; /* pipeline runs */
  uint64_t hits;     /* frit_compile calls answered from the cache */
} frit_rt_stats;
frit_rt_stats frit_rt_stats_get(frit_ctx *ctx);

/* Iterations of kernel k's loop nest under p's current bindings (saturating; INT64_MAX when
 * unknown, and then *unknown set when given): the parallelism decision's input. */
int64_t frit_rt_kernel_work(frit_program *p, int k, bool *unknown);
/* The trip counts of kernel k's first 64 loops under p's bindings, negative ones as 0, into ext;
 * returns the mask of loops whose count the bindings do not give (ext INT64_MAX there). */
uint64_t frit_rt_kernel_extents(frit_program *p, int k, int64_t ext[64]);

/* Threads from opts, $FRIT_THREADS or the online CPUs (at least 1). */
int frit_rt_default_threads(const frit_compile_opts *opts);

/* The program object for a pipeline result (program.c). NULL on OOM (error set). */
frit_program *frit_rt_program_new(frit_ctx *ctx, frit_rt_compiled *c, const frit_cg_config *cfg,
                                  int threads);
/* The variant of kernel k compiled for the sizes of this run, when its work (loop iterations)
 * (-1: unknown) makes one worth having (specialize.c): *have set with *fn, *extent and *alone (a tuning chose
 * the calling thread alone); else the generic code
 * runs. A variant that cannot be built is no error (the generic code stays in use) except under
 * FRIT_SPECIALISE=always, which the tests use to check every kernel's variant. */
typedef struct frit_rt_spec frit_rt_spec;
frit_status frit_rt_specialised(frit_program *p, int k, int64_t work, frit_kernel_fn *fn, int64_t *extent,
                                bool *have, bool *alone);

/* The autotuner (tune.c). FRIT_TUNE set (not "0"): search. Lookups of earlier tunings happen
 * when searching or when the cache directory holds a tune/ folder. */
bool frit_rt_tune_on(void);
bool frit_rt_tune_lookups(const frit_program *p);
typedef struct frit_rt_tune_info {
  int source;        /* 0 the heuristics, 1 a tuning found on disk, 2 searched now, 3 FRIT_TUNE_FORCE */
  double default_ms, tuned_ms, search_ms; /* a search's figures */
  int candidates;
} frit_rt_tune_info;
/* Kernel k at the current bindings with the variables marked in fixed as constants, generated
 * and compiled under the best choices known: *out (a kernel of a program the ctx owns) with its
 * fn set and *chosen its choices. Searches now (timing on copies of the buffers p->params points
 * at, which must be set for kernel k) when tuning is on and no tuning is stored; *code_hash is
 * its program's hash. *out NULL: static sizes and no tuning (the program's own code serves). */
frit_status frit_rt_tune_kernel(frit_program *p, int k, const uint8_t *fixed, int64_t work, frit_cg_kernel **out,
                                uint64_t *code_hash, frit_cg_choices *chosen, frit_rt_tune_info *info);
/* For each node of a kernel AST in topological order, fn(arg, node, loops): loops has bit r set
 * when the node runs once per iteration of the r-th RANGE of that walk (the order of
 * range_ends; a REDUCE or END counts inside the loops it closes); past 64 RANGEs every bit. Returns
 * the number of RANGEs, -1 when out of memory (loopsets.c). */
typedef void (*frit_rt_loopset_fn)(void *arg, const frit_uop *u, uint64_t loops);
int frit_rt_loopsets(frit_uop *ast, frit_rt_loopset_fn fn, void *arg);
/* The maximal loop sets of a kernel's work into sets[FRIT_RT_WORK_SETS] (sequential loops in one
 * body are separate sets whose iterations add up); their count, or -1 when they do not fit. */
int frit_rt_work_sets(frit_uop *ast, uint64_t *sets);

/* "CPU key, N threads": the key of the machine limits and of tunings (machine.c). */
void frit_rt_machine_fingerprint(char *out, size_t cap, int threads);
/* The FMA microbenchmark's chunks [0, chunks), chunk c's result into sink[c] (machine.c). */
void frit_rt_fma_probe(float *sink, int64_t chunks);

/* One line per compiled variant: the kernel, the sizes it is fixed to, its code hash. */
void frit_rt_spec_print(const frit_program *p, FILE *out);

/* Donation at run time (donate.c): points each active donated output at its input's memory or
 * at staging memory (after bufptr is filled for the plain buffers), and after a successful run
 * copies staged outputs into their inputs. */
frit_status frit_rt_donate_bind(frit_program *p, void *const *inputs, void *const *outputs);
void frit_rt_donate_finish(frit_program *p, void *const *inputs);

/* Device programs (device_run.c): a run after binding, sizing and the memory plan (total bytes
 * of temporaries), with the host pointers checked; one kernel launch; element 0 of buffer b as
 * an integer (host loop bounds, stop flags). */
/* Executes the schedule's steps (kernels, host loops, swaps) once (program.c). */
frit_status frit_rt_run_steps(frit_program *p);
frit_status frit_rt_device_run(frit_program *p, void *const *inputs, void *const *outputs, int64_t total);
frit_status frit_rt_device_kernel(frit_program *p, int k);

/* Collectives (collective.c): kernel k realizes a COLLECTIVE and the world has several ranks (its
 * compiled copy is then not run); the exchange itself, on the buffers of the current run. */
bool frit_rt_collective_runs(const frit_program *p, int k);
frit_status frit_rt_collective(frit_program *p, int k);
/* Whether $name equals value, read once into *cached (initially -1) and kept for the process. */
bool frit_rt_env_is(atomic_int *cached, const char *name, const char *value);
/* Waits for the pending collectives whose memory kernel k writes, or whose output it reads. */
frit_status frit_rt_collective_settle(frit_program *p, int k);
/* Waits for every pending collective; returns st, or the first failure when st is FRIT_OK (an
 * earlier error's message is kept). */
frit_status frit_rt_collective_wait_all(frit_program *p, frit_status st);
frit_status frit_rt_device_read_int(frit_program *p, int b, int64_t *out);
void frit_rt_device_release(frit_program *p);

/* Builds the codegen program of an interpreted compile, for printing its stages. */
frit_status frit_rt_ensure_codegen(frit_ctx *ctx, frit_rt_compiled *c);

#endif
