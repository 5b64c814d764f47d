/* Internals shared by the symbolic layer: range queries and the linear-form helpers the
 * simplifier's C callbacks use (range.c, linear.c, simplify.c, divmod.c). */
#ifndef FRIT_SYMBOLIC_H
#define FRIT_SYMBOLIC_H

#include "ir/uop.h"

/* u's bounds when they are real bounds: integer/bool dtypes, and for u64 only when the upper
 * end stays below INT64_MAX (larger u64 values are not representable in the int64 bounds). */
bool frit_range_known(const frit_uop *u, int64_t *lo, int64_t *hi);

/* An integer value written as a sum  c_0*v_0 + ... + c_{n-1}*v_{n-1} + k  in the ring of its
 * dtype (coefficients wrapped to the dtype). Atoms v_i are distinct, sorted by node id, and
 * have nonzero coefficients. */
#define FRIT_LIN_MAX 64
typedef struct frit_lin_term {
  frit_uop *v;
  int64_t c;
} frit_lin_term;
typedef struct frit_lin {
  frit_dtype dt;
  int n;
  int64_t k;
  frit_lin_term t[FRIT_LIN_MAX];
} frit_lin;

/* v wrapped to an integer dtype's width (sign- or zero-extended back to int64). */
int64_t frit_wrap_int(int64_t v, frit_dtype dt);
/* Flattens an integer ADD/SUB/NEG/MUL-by-constant tree; false when it has too many terms. */
bool frit_lin_flatten(frit_uop *u, frit_lin *L);
/* Adds c*v (v any node of L's dtype, flattened too). false when too many terms. */
bool frit_lin_add(frit_lin *L, frit_uop *v, int64_t c);
/* Sorts by atom id, merges equal atoms, drops zero terms. */
void frit_lin_normalize(frit_lin *L);
/* The canonical node for L (NULL on error). */
frit_uop *frit_lin_build(frit_ctx *ctx, const frit_lin *L);
/* u is exactly the node frit_lin_build(L) would give (found without building anything). */
bool frit_lin_is(const frit_uop *u, const frit_lin *L);
/* Bounds of the exact (unwrapped) integer sum over the atoms' ranges. false when an atom's range
 * is unknown or the bounds overflow int64. When the bounds lie inside the dtype's limits, the
 * node's value equals the exact sum for every assignment: no wraparound anywhere. */
bool frit_lin_exact_range(const frit_lin *L, int64_t *lo, int64_t *hi);
/* frit_lin_exact_range and the bounds fit the dtype. */
bool frit_lin_no_wrap(const frit_lin *L, int64_t *lo, int64_t *hi);

#endif
