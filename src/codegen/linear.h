/* State shared by the linearizer's files: linear.c (analysis, placement, blocks, memory, the
 * emitter) and linear_reduce.c (loop nests of END/REDUCE: accumulators, fused reductions). */
#ifndef FRIT_CG_LINEAR_H
#define FRIT_CG_LINEAR_H

#include "codegen/cg_internal.h"

typedef struct blk {
  int parent;       /* block index, -1 for the function body */
  int rix;          /* range index of a loop block, -1 otherwise */
  bool is_if, alive;
  bool has_child_loop, unsafe, has_store;
  bool strided; /* a memory access not stride 1 in this loop's range */
  bool tile_gather; /* an access in this loop's own body with a constant stride other than 1: a
                     * gather or scatter per iteration, cheap beside the reductions of child loops */
  bool simd_done;  /* this loop got a simd pragma */
  bool child_bad;  /* a child loop stores, is unsafe or got its own simd pragma */
  bool child_simd; /* a loop inside got a simd pragma */
  uint64_t loaded_params, stored_params; /* bit p: DEFINE_GLOBAL p read / written directly here */
  int nstores_ok;                        /* stores whose index is injective in this block's range */
  cg_str text;
  cg_str header; /* "for (...)" or "if (...)"; the pragma is chosen on close */
  cg_str red;    /* reduction clauses for #pragma omp simd */
  bool red_bad;  /* an accumulator here that no omp clause expresses */
  int64_t copies; /* copies of the innermost bodies one pass of this block's code holds (unrolling) */
  bool blocking;  /* the loop over the blocks of a pairwise sum's range (linear_reduce.c) */
  int lanes;      /* a pairwise block's loop in lane form: whole runs of `lanes` iterations, each
                   * iteration its own accumulator lane, then the rest (cgl_open_loop_blocked) */
  cg_str lane_end; /* the block's end, for that form */
  int lane_vec;    /* lanes of one vector loop when a run holds several (0: one) */
  bool locals;    /* reads or writes a register array (an accumulator row of a register tile) */
  bool once;      /* a range of one iteration, rendered as a block: gcc 12 -O3 miscompiled a loop
                     of one iteration inside a `GCC unroll` loop (tests/python/test_compiler_bugs.py) */
} blk;

typedef struct nstate {
  char *name; /* C expression of the value */
  int blk;    /* where it was placed; -2: valid everywhere (constants, parameters) */
  bool done;  /* effects: emitted */
} nstate;

typedef struct cg {
  frit_ctx *ctx;
  frit_dialect dialect;
  frit_uop **nodes;
  size_t n;
  uint32_t *pos;
  uint64_t *free_, *scope;
  bool *dyn;
  int *rix;                /* local index -> range index or -1 */
  frit_uop *ranges[64];
  int nr;
  nstate *st;
  blk *blocks;
  int nblocks, capblocks;
  frit_uop *g0;
  frit_uop *const *vars;
  int nvars;
  int tmp;
  bool failed;
  int depth;       /* cgl_emit's recursion depth */
  uint32_t *stamp; /* per node: the pre-emission pass that last visited it (deep chains) */
  uint32_t gen;
  /* devices: > 0 when a work-group of this many threads runs each g0 point; the loops opened
   * directly in block group_top (the g0 loop's body, or the function body without g0) are
   * split across its threads and their reductions combined (cgl_group_combine) */
  int group, group_top;
  uint64_t alias_mask; /* parameters a donated input and its output share (no restrict) */
} cg;

/* linear_group.c: the work-group size of a grouped rendering of the kernel (0: the kernel has
 * none), and in *trip the length of the reduction its groups split. */
int cgl_group_size(cg *g, frit_uop **trip);
/* An extent the launch can evaluate: constants and kernel variables only. */
bool cgl_launch_known(const frit_uop *u, int depth);
/* Combines accumulator acc (C type T) across the work-group: every thread gets the result of
 * folding all threads' values with rop (wide: integer sums and products in the wide type). */
bool cgl_group_combine(cg *g, int b, const char *acc, const char *T, frit_op rop, frit_scalar_kind k, bool wide);

/* local index of a node (its position in the kernel's topological order) */
static inline uint32_t L(const cg *g, const frit_uop *u) { return g->pos[u->id]; }

/* Sets the error (naming the node) once and marks the kernel failed; returns false. */
bool cgl_fail(cg *g, const frit_uop *u, const char *msg);
/* Appends one indented line to block b. */
/* Unrolled loops nest multiplicatively: gcc copies the whole nest below a `#pragma GCC unroll`
 * loop, and f16/bf16 bodies carry a rounding helper per operation, so unrolling every small loop
 * of a 4x4x7 nest took gcc 20+ s. Loops are unrolled innermost first while the copies of the
 * innermost bodies stay within this many. */
#define MAX_UNROLL_COPIES 16
/* A register tile's short reduction ranges written out as copies (cgl_unrolled_in_text): up to
 * a 5x5 kernel's taps, so that one loop (the channels) stays around them; with two nested loops
 * under its lanes gcc 12 does not vectorise the tile at all (a conv's input gradient ran scalar) */
#define MAX_TILE_TEXT_COPIES 25
/* Closes loop block B into its parent P as copies of its text, when it is a short inner range of
 * a reduction under a loop of output lanes (linear_reduce.c); false: a loop it stays. */
bool cgl_unrolled_in_text(cg *g, blk *B, blk *P);
void cgl_line(cg *g, int b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Is block b (-2: everywhere) cur or one of its enclosing blocks? */
bool cgl_on_chain(const cg *g, int cur, int b);
/* The block node u goes to from cur; -3 when it uses a range whose loop is not open (quiet: no
 * error set). */
int cgl_place_mode(cg *g, frit_uop *u, int cur, bool quiet);
/* Closes block b into its parent, choosing the loop's pragma. */
void cgl_close_block(cg *g, int b);
/* Frees a closed block's texts; the names placed in it are no longer valid. */
void cgl_retire_block(blk *B);
char *cgl_strdup(cg *g, const char *s);
/* Names node u by the C expression `name`, valid in block b. */
const char *cgl_set_name(cg *g, frit_uop *u, int b, const char *name);
/* A new open block (a loop of range index rix, an IF, or neither) inside parent; -1 on OOM. */
int cgl_new_block(cg *g, int parent, int rix, bool is_if);
/* Opens the loop of range r as a child of block parent; returns the new block or -1. */
int cgl_open_loop(cg *g, frit_uop *r, int parent);
/* The loop of range r in blocks of `size`: a loop over the blocks (returned in *outer, a child
 * of parent) around r's loop over one block (returned). lanes > 0: that loop in lane form
 * (rN_o counts whole runs of `lanes`, rN - rN_o is the lane). -1 on error. */
int cgl_open_loop_blocked(cg *g, frit_uop *r, int parent, int64_t size, int lanes, int *outer);
/* Emits u (and what it needs) for use in block cur; returns its C expression ("" for effects),
 * NULL on error. */
const char *cgl_emit(cg *g, frit_uop *u, int cur);
/* The C name of parameter or register array b ("g<k>", "m<k>": by position, so that the same
 * kernel renders to the same text in any ctx) in buf. */
const char *cgl_base_name(const cg *g, frit_uop *b, char *buf, size_t n);
/* Is the index stride 1 in the range with index rbit (r itself, or r plus terms free of r)? */
bool cgl_stride1(const cg *g, frit_uop *ix, int rbit, int depth);
/* Kernel rendering in three steps: the analysis of kernel opt and the root block (block 0),
 * the declarations of its parameters, variables and register arrays (appended to fn), and
 * freeing what the first two built. setup and declare return false with the error set. */
bool cgl_setup(cg *g, frit_ctx *ctx, frit_uop *opt, frit_uop *const *vars, int nvars, frit_dialect dialect);
bool cgl_declare(cg *g, cg_str *fn, uint64_t alias_mask);
void cgl_teardown(cg *g);
/* END or REDUCE u placed in block b (linear_reduce.c). */
const char *cgl_emit_loops(cg *g, frit_uop *u, int b);

#endif
