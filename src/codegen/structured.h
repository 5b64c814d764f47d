/* The C emitter for structured (explicit) kernels, Contract B of docs/control.md: kernel ASTs
 * holding SEQ are rendered statement by statement instead of by the opt/linear passes. */
#ifndef FRIT_CG_STRUCTURED_H
#define FRIT_CG_STRUCTURED_H

#include "codegen/cg_internal.h"

/* Does the kernel AST contain a SEQ (a structured kernel)? */
bool cg_is_structured(frit_uop *ast);

/* Renders a structured kernel as the C function fn_name (ABI of codegen.h); *g0_extent gets the
 * extent of the axis split into [g0_begin, g0_end) (CONST 1 when there is none). Returns a
 * malloc'd string, or NULL with the error set (naming the node). */
char *cg_render_structured(frit_ctx *ctx, frit_uop *ast, const char *fn_name, frit_uop *const *vars, int nvars,
                           frit_dialect dialect, frit_uop **g0_extent);

/* The statements of an atomic read-modify-write of `mem` (a C lvalue of the memory type; global:
 * shared memory, else a register of one point) with value expression v, setting `old` (declared
 * by the caller) to the previous value. Each line starts with ind. structured_atomic.c. On devices
 * every global atomic is a compare-and-swap loop on the element's bits (the prelude's frit_cas_*). */
bool cg_render_atomic(frit_ctx *ctx, frit_dialect d, cg_str *o, const char *ind, frit_atomic_op op, frit_scalar_kind k, bool global,
                      const char *mem, const char *v, const char *old);

#endif
