/* Contract 3: the C backend. Kernel ASTs (Contract 2) -> axis choices -> linearised loop nest ->
 * one C translation unit -> compiled shared object (disk + in-memory cache) -> kernel functions. */
#ifndef FRIT_CODEGEN_H
#define FRIT_CODEGEN_H

#include "ir/uop.h"

/* The kernel languages the renderer writes: the C of the CPU backend, OpenCL C, and CUDA C++
 * for NVRTC. One renderer serves all three; the differences are the prelude's head, the kernel
 * signature, the g0 loop (a grid-stride loop on devices) and atomics (prelude.c, render.c). */
typedef enum frit_dialect { FRIT_DIALECT_C = 0, FRIT_DIALECT_OPENCL, FRIT_DIALECT_CUDA } frit_dialect;

/* The ABI of every generated kernel (exported as "frit_k<k>", k = kernel index in the program):
 *   bufs      the kernel's parameters in parameter order (DEFINE_GLOBAL arg.i0 = p -> bufs[p]),
 *             each a dense buffer of the pointee dtype (bool: 1 byte 0/1, f16/bf16: 16-bit bits);
 *   vars      the values of the program's DEFINE_VARs, in the order given to frit_codegen_generate
 *             (the schedule's var order);
 *   [g0_begin, g0_end)  the slice of the outermost GLOBAL axis this call computes; the runtime
 *             splits [0, g0_extent) into chunks across threads. A kernel without a GLOBAL axis
 *             has g0_extent 1 and must be called with [0, 1).
 * Calls on disjoint chunks may run concurrently. */
typedef void (*frit_kernel_fn)(void *const *bufs, const int64_t *vars, int64_t g0_begin, int64_t g0_end);

/* Compiler configuration, resolved from frit_compile_opts and the environment. Strings are
 * owned by the ctx. */
typedef struct frit_cg_config {
  const char *cc;        /* opts->cc, else $FRIT_CC, else "cc" */
  const char *cflags;    /* opts->cflags, else $FRIT_CFLAGS, else FRIT_CG_DEFAULT_CFLAGS (gcc: and FRIT_CG_GCC_CFLAGS) */
  const char *cache_dir; /* opts->cache_dir, else $FRIT_CACHE_DIR, else $XDG_CACHE_HOME/frit,
                            else $HOME/.cache/frit (NULL when none of these is known) */
} frit_cg_config;

/* --param=max-completely-peel-times=0: gcc 12.2 -O3 miscompiles a float sum over a completely
 * unrolled reversed inner loop. clang ignores it. */
#define FRIT_CG_DEFAULT_CFLAGS \
  "-O3 -march=native -fPIC -shared -fopenmp-simd -fno-math-errno -ffp-contract=off --param=max-completely-peel-times=0"

/* Appended to the default flags when the compiler is gcc (clang rejects -fno-code-hoisting).
 * gcc 12.2 -O3 vectorises loops whose iterations hold gated loads (a concatenation or a pad read
 * through reshapes, two loads of one buffer under complementary conditions; masked AVX-512 loads
 * beside a loop of one iteration) into wrong code: the loads hoisted out of their branches by
 * code hoisting (a part of PRE) and value-range facts taken from the conditions meet in the
 * vectoriser. Found by the program fuzzer (tests/python/test_compiler_bugs.py); each flag alone
 * leaves one of those programs wrong, both together fix all of them. Its basic-block (SLP)
 * vectoriser sums 4, 8 or 16 8-bit integers converted from comparisons, unrolled (an int8 dot
 * product of a bool cast, found by the numpy fuzzer, seed 11800288), as their masks: -8 for 8.
 * Without SLP the benchmarks' kernels, loop-vectorised, ran the same (matmul, conv, n-body,
 * softmax, the elementwise chains and sums). RTL forward propagation put a vector load into
 * each of its uses as a memory operand: a float max over integer keys loaded every vector three
 * times (a 1024^2 max took 58 us, 37 without it; bench_ops and bench_math otherwise within 4%). */
#define FRIT_CG_GCC_CFLAGS "-fno-tree-vrp -fno-code-hoisting -fno-tree-slp-vectorize -fno-forward-propagate"

/* The kernel cache directory when none is configured: $FRIT_CACHE_DIR, else
 * $XDG_CACHE_HOME/frit, else $HOME/.cache/frit (malloc'd; NULL when none of these is known).
 * Other caches (PTX, machine limits) live in or under it. */
char *frit_cg_default_cache_dir(void);

/* This CPU as /proc/cpuinfo names it: its "model name" ("unknown" where it cannot be read), and
 * a key of the model and its feature flags, which the kernel cache hashes when the flags compile
 * for the native CPU (a cache shared by machines then keeps their kernels apart).
 * $FRIT_CPU_KEY replaces the key (machines that share kernels on purpose; tests). Read once. */
const char *frit_cg_cpu_model(void);
const char *frit_cg_cpu_key(void);
/* mkdir -p; 0 on success. */
int frit_cg_make_dirs(const char *dir);
/* FNV-1a of s continuing from h, with a separator after it (cache keys of several fields). */
uint64_t frit_cg_hash(uint64_t h, const char *s);

/* opts may be NULL. Never fails except on OOM. */
frit_status frit_codegen_config(frit_ctx *ctx, const frit_compile_opts *opts, frit_cg_config *out);

/* Devices: the launch of a tiled rendering (linear_tile.c): the extents of its rows, columns and
 * reduction (i64 UOps of the program's variables), the work-groups it wants (count) and their
 * threads. All NULL/0: the kernel has none. */
typedef struct frit_cg_tile {
  frit_uop *m, *n, *k, *count;
  int threads;
} frit_cg_tile;

/* A kernel's tunable choices, the autotuner's search space (src/runtime/tune.c). Zero in a field
 * keeps the heuristics' choice, so a zeroed struct (or NULL) is the untuned kernel. A choice that
 * does not fit the kernel (a row tile longer than its rows, two vectors a row on an odd width)
 * falls back to the heuristic: every choice renders a correct kernel. */
typedef struct frit_cg_choices {
  int tile;       /* register tiles for a contraction (opt_tile.c): 0 where they fit, -1 never */
  int tile_rows;  /* rows of a register tile (1-16): 0 the heuristic (6 or 8 by the registers, 8 with one vector a row) */
  int tile_vecs;  /* vectors a tile row: 0 the heuristic (2 when the columns allow), else 1, 2 or 4 */
  int tile_block; /* row tiles a thread block (cache blocking): 0 the heuristic (L2-sized), else 1..64 */
  int tile_order; /* loop order inside a block: 0 column panels outermost, 1 row tiles outermost */
  int unroll;     /* small static ranges unrolled (opt_unroll.c): 0 yes, -1 no */
  int regacc;     /* reductions kept in register accumulators (opt_regacc.c): 0 yes, -1 no */
  int threads;    /* the launch: 0 the program's threads, 1 the calling thread alone */
  int collapse;   /* adjacent loops walked as one merged (opt_collapse.c): 0 yes, -1 no */
} frit_cg_choices;
/* "tile=0 rows=6 vecs=2 block=0 unroll=0 regacc=0 threads=0"; the fields that differ from zero
 * only, or "default". Parse accepts that form (any order, missing fields 0); false on bad text. */
void frit_cg_choices_format(const frit_cg_choices *c, char *buf, size_t cap);
bool frit_cg_choices_parse(const char *s, frit_cg_choices *c);

/* One generated kernel. */
typedef struct frit_cg_kernel {
  frit_uop *ast;          /* the kernel AST as given */
  frit_uop *opt;          /* after axis choices and simplification (stage "optimized") */
  frit_uop *g0_extent;    /* i64 UOp (CONST or an expression of DEFINE_VARs): extent of the
                             axis split into [g0_begin, g0_end); CONST 1 when there is none */
  const char *fn_name;    /* "frit_k<k>" */
  const char *name;       /* the name given (or fn_name) */
  const char *linear;     /* the linearised program as text (stage "linear") */
  /* devices: a second rendering of the kernel, fn_name_group, runs each g0 point on a
   * work-group of `group` threads that share its reductions (linear.c); the launch picks it by
   * the extent and group_trip, the length of the reduction it splits (frit_device_use_groups).
   * group 0: no such variant. */
  int group;
  const char *fn_name_group;
  frit_uop *group_trip;
  /* devices: a third rendering, fn_name_tile, for a contraction (a matmul and its epilogue): a
   * work-group per output tile, its operands staged through local memory (linear_tile.c). */
  const char *fn_name_tile;
  frit_cg_tile tile;
  frit_kernel_fn fn;      /* set by frit_codegen_compile */
  size_t src_begin, src_end; /* its text in the program's source (after the prelude) */
} frit_cg_kernel;

/* A program: all kernels in one translation unit. Owned by the ctx. */
typedef struct frit_cg_program {
  int nkernels;
  frit_cg_kernel *kernels;
  const char *source;     /* the C translation unit */
  size_t prelude_len;     /* source[0, prelude_len): the prelude every kernel needs */
  uint64_t hash;          /* of source + compiler + flags + compiler version (set by compile) */
  void *handle;           /* dlopen handle (shared through the ctx's in-memory cache) */
  int cache_hit;          /* compile: 0 compiled now, 1 found on disk, 2 found in memory */
} frit_cg_program;

/* Optimises, linearises and renders the kernels. names[k] may be NULL (names may be NULL).
 * vars: the DEFINE_VAR nodes in ABI order (every DEFINE_VAR a kernel uses must be listed).
 * NULL with an error (naming the kernel and node) on an AST the backend cannot render. */
frit_cg_program *frit_codegen_generate(frit_ctx *ctx, frit_uop *const *asts, const char *const *names,
                                       int nkernels, frit_uop *const *vars, int nvars);
/* The same, where alias_masks[k] (NULL: all 0) has bit p set when kernel k's parameter p may share
 * memory with another of its parameters (frit_sched_kernel.alias_mask): declared without
 * `restrict`. */
frit_cg_program *frit_codegen_generate_alias(frit_ctx *ctx, frit_uop *const *asts, const char *const *names,
                                             int nkernels, frit_uop *const *vars, int nvars,
                                             const uint64_t *alias_masks);
/* The same in another kernel language. A device dialect's kernels take (arena, g0_end, the
 * variables, one byte offset into the arena per parameter up to the highest the kernel uses)
 * and stride over g0 by the launch size (frit_device_ops.launch); fn is never set. Complex
 * dtypes are refused on devices (an error naming the kernel). */
frit_cg_program *frit_codegen_generate_for(frit_ctx *ctx, frit_uop *const *asts, const char *const *names,
                                           int nkernels, frit_uop *const *vars, int nvars,
                                           const uint64_t *alias_masks, frit_dialect dialect);

/* One kernel with some variables fixed: vars[v] with fixed[v] set becomes the constant values[v],
 * the AST is simplified again and generated alone (as kernel 0, same ABI: the other variables are
 * still read from vars). The runtime's size-specialised variants (src/runtime/specialize.c). */
/* Kernels already fixed and simplified, each under its own choices (choices[k]; the autotuner's
 * candidates, src/runtime/tune.c). */
frit_cg_program *frit_codegen_generate_choices(frit_ctx *ctx, frit_uop *const *asts, const char *const *names,
                                               int nkernels, frit_uop *const *vars, int nvars,
                                               const uint64_t *alias_masks, const frit_cg_choices *choices);
/* choices (NULL: the heuristics) are the autotuner's (src/runtime/tune.c). */
frit_cg_program *frit_codegen_generate_fixed(frit_ctx *ctx, frit_uop *ast, const char *name, frit_uop *const *vars,
                                             int nvars, const int64_t *values, const uint8_t *fixed,
                                             uint64_t alias_mask, const frit_cg_choices *choices);

/* Compiles the program's source (or finds it in the caches), loads it and fills in each
 * kernel's fn. FRIT_ERR_RUNTIME with the compiler's first output lines when compiling fails. */
frit_status frit_codegen_compile(frit_ctx *ctx, frit_cg_program *p, const frit_cg_config *cfg);

/* Prints stage "optimized" or "linear" of kernel k (-1: all). */
frit_status frit_codegen_print(frit_ctx *ctx, const frit_cg_program *p, const char *stage, int k, FILE *out);

/* Configuration as text: "cc: ...\ncflags: ...\ncache: ...\ncompiler: <version line>\n". */
frit_status frit_codegen_info(frit_ctx *ctx, const frit_cg_config *cfg, FILE *out);

/* Removes the cached shared objects (frit-*.so, frit-*.c and stale temporaries) from dir (NULL:
 * the default dir). Does not touch other files. */
frit_status frit_codegen_cache_clear(frit_ctx *ctx, const char *dir);

/* Lower-level pieces, exposed for tests and for the runtime's stage printing. */
/* Axis choices on one kernel AST: returns the optimised AST and its g0 extent. */
frit_uop *frit_codegen_optimize(frit_ctx *ctx, frit_uop *ast, frit_uop **g0_extent);
/* The same for a dialect: devices skip the host's register tiling and accumulation and merge
 * the parallel axes into one launch axis (opt_device.c). */
/* before_flatten (may be NULL; devices): the kernel before its parallel axes are merged into one
 * launch axis, which the tiled rendering takes. */
frit_uop *frit_codegen_optimize_for(frit_ctx *ctx, frit_uop *ast, frit_uop **g0_extent, frit_dialect dialect,
                                    frit_uop **before_flatten);
/* The tiled rendering of a device kernel ast (optimized, before flattening) as function fn_name
 * in *text (malloc'd), with its launch in *tile; *text NULL (and *tile zeros) when the kernel is
 * no contraction it tiles. */
frit_status frit_codegen_render_tiled(frit_ctx *ctx, frit_uop *ast, const char *fn_name, frit_uop *const *vars,
                                      int nvars, uint64_t alias_mask, frit_dialect dialect, char **text,
                                      frit_cg_tile *tile);
/* Renders one kernel (already optimised) as a C function named fn_name; returns a malloc'd
 * string, or NULL with an error. group == NULL: one g0 point a thread. Else (devices) the kernel
 * is rendered with a work-group a point when it has a long reduction to share: *group gets the
 * group size and *group_trip that reduction's length, or *group 0 and NULL is returned when
 * the kernel has none (nothing is rendered). */
char *frit_codegen_render_kernel(frit_ctx *ctx, frit_uop *opt, const char *fn_name, frit_uop *const *vars,
                                 int nvars, uint64_t alias_mask, frit_dialect dialect, char **linear_text, int *group,
                                 frit_uop **group_trip);


#endif
