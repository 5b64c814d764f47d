/* Test oracle for the symbolic tests: brute-force evaluation of scalar expression graphs with
 * frit_eval_alu / frit_eval_cast, and a small random expression generator. */
#ifndef FRIT_TEST_SYM_EVAL_H
#define FRIT_TEST_SYM_EVAL_H

#include "frit.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SE_MAXVARS 4
typedef struct se_env {
  frit_uop *var[SE_MAXVARS];
  int64_t val[SE_MAXVARS];
  int nvars;
  /* memo by node id for one assignment */
  frit_scalar *memo;
  unsigned char *have;
  size_t cap;
} se_env;

static inline void se_reset(se_env *e, size_t nodes) {
  if (nodes > e->cap) {
    e->memo = realloc(e->memo, nodes * sizeof *e->memo);
    e->have = realloc(e->have, nodes);
    e->cap = nodes;
  }
  memset(e->have, 0, e->cap);
}

static inline void se_free(se_env *e) {
  free(e->memo);
  free(e->have);
  memset(e, 0, sizeof *e);
}

/* Value of a scalar (or broadcast-uniform) integer/float graph node; *ok cleared on a node the
 * oracle does not know. */
static inline frit_scalar se_eval(se_env *e, frit_uop *u, int *ok) {
  uint32_t id = frit_uop_id(u);
  if (id < e->cap && e->have[id]) return e->memo[id];
  frit_scalar r = {.u = 0};
  frit_op op = frit_uop_op(u);
  frit_dtype dt = frit_dtype_scalar(frit_uop_dtype(u));
  int n = frit_uop_nsrc(u);
  if (op == FRIT_OP_CONST) {
    r = frit_uop_arg(u)->value;
  } else if (op == FRIT_OP_DEFINE_VAR) {
    int found = 0;
    for (int i = 0; i < e->nvars; i++)
      if (e->var[i] == u) {
        frit_scalar s = {.i = e->val[i]};
        r = frit_scalar_normalize(s, dt);
        found = 1;
      }
    if (!found) *ok = 0;
  } else if (op == FRIT_OP_CAST) {
    frit_uop *s = frit_uop_src(u, 0);
    r = frit_eval_cast(se_eval(e, s, ok), frit_dtype_scalar(frit_uop_dtype(s)), dt);
  } else if (frit_op_flags(op) & FRIT_F_ALU) {
    frit_scalar s[3];
    for (int i = 0; i < n && i < 3; i++) s[i] = se_eval(e, frit_uop_src(u, i), ok);
    frit_dtype odt = frit_dtype_scalar(frit_uop_dtype(frit_uop_src(u, op == FRIT_OP_WHERE ? 1 : 0)));
    r = frit_eval_alu(op, odt, s);
  } else {
    *ok = 0;
  }
  if (id < e->cap) e->memo[id] = r, e->have[id] = 1;
  return r;
}

/* An integer/bool value as int64 (unsigned above INT64_MAX reads as INT64_MAX, as vmax does). */
static inline int64_t se_as_i64(frit_scalar v, frit_dtype dt) {
  if (frit_dtype_is_unsigned(dt)) return v.u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v.u;
  return v.i;
}

/* Bitwise equality for ints; floats: equal or both NaN (and the same sign of zero). */
static inline int se_same(frit_scalar a, frit_scalar b, frit_dtype dt) {
  if (frit_dtype_is_float(dt)) {
    if (isnan(a.f) && isnan(b.f)) return 1;
    return a.f == b.f && signbit(a.f) == signbit(b.f);
  }
  return a.u == b.u;
}

/* xorshift PRNG */
static uint64_t se_rng_state = 0x9e3779b97f4a7c15ull;
static inline uint64_t se_rand(void) {
  uint64_t x = se_rng_state;
  x ^= x << 13, x ^= x >> 7, x ^= x << 17;
  return se_rng_state = x;
}
static inline int64_t se_randint(int64_t lo, int64_t hi) { return lo + (int64_t)(se_rand() % (uint64_t)(hi - lo + 1)); }

/* A variable of any integer dtype (frit_var makes only i64). */
static inline frit_uop *se_var(frit_ctx *ctx, frit_dtype dt, const char *name, int64_t lo, int64_t hi) {
  frit_arg a;
  memset(&a, 0, sizeof a);
  a.blob = name, a.blob_kind = FRIT_BLOB_STR, a.n = (uint32_t)strlen(name), a.i0 = lo, a.i1 = hi;
  return frit_uop_new(ctx, FRIT_OP_DEFINE_VAR, dt, NULL, 0, &a);
}

#endif
