/* C callbacks of the simplifier's division/modulo and comparison rules (divmod.c), named in
 * the rule table of simplify.c. Validity conditions: docs/simplifier.md. */
#ifndef FRIT_SIMPLIFY_FNS_H
#define FRIT_SIMPLIFY_FNS_H

#include "ir/uop.h"

frit_uop *frit_simp_divmod(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int n);
frit_uop *frit_simp_div_negdiv(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int n);
frit_uop *frit_simp_mod_negdiv(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int n);
frit_uop *frit_simp_cmp_lin(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int n);
frit_uop *frit_simp_cmp_eq_lin(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int n);

#endif
