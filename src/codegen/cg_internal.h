/* Internal helpers shared by the C backend's files: a growing string, C type names of dtypes,
 * and the expression renderers (render.c) used by the linearizer (linear.c). */
#ifndef FRIT_CG_INTERNAL_H
#define FRIT_CG_INTERNAL_H

#include "codegen/codegen.h"

#include <stdarg.h>

typedef struct cg_str {
  char *s;
  size_t n, cap;
  bool oom;
} cg_str;

void cg_puts(cg_str *b, const char *s);
void cg_printf(cg_str *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Takes the string out (malloc'd, NUL-terminated; "" when empty); b is reset. NULL on OOM. */
char *cg_take(cg_str *b);
void cg_free(cg_str *b);

/* C types: the register type of a value (f16/bf16 live as float), the memory type of an element
 * (f16/bf16 as uint16_t bits, bool as uint8_t), and the unsigned type integer ops wrap in. */
const char *cg_ctype(frit_scalar_kind k);
const char *cg_mtype(frit_scalar_kind k);
const char *cg_wtype(frit_scalar_kind k);
bool cg_kind_float(frit_scalar_kind k);
bool cg_kind_signed(frit_scalar_kind k);
int cg_kind_bits(frit_scalar_kind k);

/* Expression renderers. Operands are C expressions of the operands' register type. Each returns
 * false (with the error set, naming the op and dtype) on something the backend cannot express. */
bool cg_render_const(frit_ctx *ctx, cg_str *o, frit_scalar_kind k, frit_scalar v);
bool cg_render_alu(frit_ctx *ctx, cg_str *o, frit_op op, frit_scalar_kind k, const char *const *a, int n);
bool cg_render_cast(frit_ctx *ctx, cg_str *o, frit_scalar_kind from, frit_scalar_kind to, const char *a);
bool cg_render_bitcast(frit_ctx *ctx, cg_str *o, frit_scalar_kind from, frit_scalar_kind to, const char *a);
/* max/min of float x against a constant c (value cv) that is not NaN (a ReLU, a clip): one
 * compare and a blend instead of frit_max*'s full ordering; false (nothing written) otherwise. */
bool cg_render_minmax_const(cg_str *o, frit_op op, frit_scalar_kind k, const char *x, const char *c, double cv);
/* Signed ADD/SUB/MUL that range analysis proves cannot overflow (plain C arithmetic is exact). */
bool cg_no_overflow(const frit_uop *u);
/* Converts memory (mtype) to a register value and back. */
void cg_render_load_conv(cg_str *o, frit_scalar_kind k, const char *mem);
void cg_render_store_conv(cg_str *o, frit_scalar_kind k, const char *val);
/* The identity of a reduction op on a dtype (as the interpreter starts its folds). */
frit_scalar cg_reduce_identity(frit_op op, frit_scalar_kind k);

/* The text each translation unit of a dialect starts with (prelude.c). */
void cg_put_prelude(cg_str *o, frit_dialect d, unsigned clones);
/* The vector functions (frit_expv ...) that text calls, as the mask cg_put_prelude takes: the C
 * prelude defines only those (a definition is compiled whether called or not). */
unsigned cg_vector_clones_used(const char *text);
/* In the body of a C vector loop, calls frit_expf, frit_sinf, frit_cosf and frit_tanf through their vector
 * versions where gcc can still vectorise the loop (prelude.c); rewrites the text in place. */
void cg_use_vector_math(char *body);
/* The kernel function's signature and opening brace in dialect d (ABI: codegen.h), declaring
 * g0_begin and g0_end (and g0_step on devices); nparams: highest parameter index used + 1. */
/* group > 0 (devices): the kernel runs a work-group of that many threads per g0 point. */
void cg_kernel_open(cg_str *fn, frit_dialect d, const char *fn_name, int nvars, int nparams, int group);
/* The work-group barrier of a device dialect. */
const char *cg_group_barrier(frit_dialect d);
/* One parameter pointer `name` of memory type mtype at parameter index. */
void cg_param_decl(cg_str *fn, frit_dialect d, const char *mtype, bool restrict_, const char *name, int64_t index);
/* `var<i>`, the value of the program's variable i. */
void cg_var_decl(cg_str *fn, frit_dialect d, int i, const char *blob);
/* The increment of the g0 loop: "++" on the host, by the launch size on devices. */
const char *cg_g0_next(frit_dialect d);
/* Highest DEFINE_GLOBAL index in the kernel + 1. */
int cg_param_count(frit_uop *const *nodes, size_t n);

/* The register-array accumulation rewrite (opt_regacc.c), run after the axis choices; g0 is the
 * optimised AST's g0 range or NULL. Returns the AST unchanged when nothing fits; NULL on error. */
frit_uop *cg_regacc(frit_ctx *ctx, frit_uop *ast, frit_uop **g0p);

/* A RANGE's iteration count when it is a constant, else -1. */
static inline int64_t cg_const_extent(const frit_uop *r) {
  return r->op == FRIT_OP_RANGE && r->src[0]->op == FRIT_OP_CONST ? r->src[0]->arg.value.i : -1;
}

/* The terms of one block of a pairwise float sum (linear_reduce.c, per vector of lanes in lane
 * form): a float sum over more terms than this (or a symbolic count) is blocked, and on the
 * host takes the lane form, whose vectors give a lone sum enough FMA chains (opt_tile.c leaves
 * such rows untiled). */
#define CG_SUM_BLOCK 256
static inline bool cg_long_float_sum(const frit_uop *reduce) {
  frit_scalar_kind k = frit_dtype_kind(reduce->dtype);
  int64_t n = reduce->nsrc == 2 ? cg_const_extent(reduce->src[1]) : 0;
  return reduce->arg.i0 == FRIT_OP_ADD && (k == FRIT_F32 || k == FRIT_F64) && (n < 0 || n > CG_SUM_BLOCK);
}

/* Adjacent loops that every index walks as one become one loop (opt_collapse.c), host kernels
 * only, before the axis choices. Returns the AST unchanged when nothing merges; NULL on error. */
frit_uop *cg_collapse(frit_ctx *ctx, frit_uop *ast);

/* Unrolling of small static loops (opt_unroll.c): REDUCEs over at most 8 elements become fold
 * chains, small output axes whose values hold reductions become one store per element. */
frit_uop *cg_unroll(frit_ctx *ctx, frit_uop *ast, frit_uop *g0);

/* Register tiling of a matmul-shaped kernel (opt_tile.c); may replace the g0 range (*g0).
 * ch (never NULL) may override the tile's shape and blocking. */
frit_uop *cg_tile(frit_ctx *ctx, frit_uop *ast, frit_uop **g0, const frit_cg_choices *ch);

/* frit_codegen_optimize_for under the autotuner's choices (NULL: the heuristics). */
frit_uop *cg_optimize(frit_ctx *ctx, frit_uop *ast, frit_uop **g0_extent, frit_dialect dialect,
                      frit_uop **before_flatten, const frit_cg_choices *ch);

/* Devices (opt_device.c): g0 merged with the output ranges every top-level END lists right
 * inside it, where every store depends on each, into one flat launch range, the last varying
 * fastest; *g0 becomes it. The AST unchanged when nothing merges; NULL on error. */
frit_uop *cg_flatten_parallel(frit_ctx *ctx, frit_uop *ast, frit_uop **g0);

/* root with the nodes from[i] replaced by to[i] (rebuilt bottom-up); NULL on error or when a
 * loop closing a replaced RANGE would lose it. */
frit_uop *cg_subst(frit_ctx *ctx, frit_uop *root, frit_uop *const *from, frit_uop *const *to, int n);

#endif
