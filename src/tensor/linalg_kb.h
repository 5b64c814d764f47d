/* Builder shorthands for the frit.linalg explicit kernels (linalg_lu.c, linalg_jacobi.c): one
 * kernel point per matrix of the batch, scalar code over kernel scalars in the compute dtype. */
#ifndef FRIT_TENSOR_LINALG_KB_H
#define FRIT_TENSOR_LINALG_KB_H

#include <math.h>

#include "tensor/composite.h"

typedef struct lk {
  frit_ctx *ctx;
  frit_dtype dt; /* compute dtype of the kernel's float math */
  int nb;        /* batch rank: the kernel's index space */
  frit_tensor *b[FRIT_MAX_DIMS];
  bool bad; /* a builder call failed (the ctx holds the message) */
} lk;

static inline frit_tensor *lk_chk(lk *k, frit_tensor *t) {
  if (!t) k->bad = true;
  return t;
}
static inline void lk_st(lk *k, frit_status s) {
  if (s != FRIT_OK) k->bad = true;
}
static inline frit_tensor *kc(lk *k, double v) { return lk_chk(k, frit_scalar_f(k->ctx, k->dt, v)); }
static inline frit_tensor *ki(lk *k, int64_t v) { return lk_chk(k, frit_scalar_i(k->ctx, FRIT_I64, v)); }
static inline frit_tensor *kb(lk *k, frit_bfunc f, frit_tensor *a, frit_tensor *b) {
  return lk_chk(k, frit_binary_t(k->ctx, f, a, b));
}
static inline frit_tensor *ku(lk *k, frit_ufunc f, frit_tensor *a) { return lk_chk(k, frit_unary_t(k->ctx, f, a)); }
#define KADD(k, a, b) kb((k), FRIT_BF_ADD, (a), (b))
#define KSUB(k, a, b) kb((k), FRIT_BF_SUB, (a), (b))
#define KMUL(k, a, b) kb((k), FRIT_BF_MUL, (a), (b))
#define KDIV(k, a, b) kb((k), FRIT_BF_TRUEDIV, (a), (b))
#define KLT(k, a, b) kb((k), FRIT_BF_LT, (a), (b))
#define KGT(k, a, b) kb((k), FRIT_BF_GT, (a), (b))
#define KEQ(k, a, b) kb((k), FRIT_BF_EQ, (a), (b))
#define KNE(k, a, b) kb((k), FRIT_BF_NE, (a), (b))
#define KABS(k, a) ku((k), FRIT_UF_ABS, (a))
#define KSQRT(k, a) ku((k), FRIT_UF_SQRT, (a))
static inline frit_tensor *kwhere(lk *k, frit_tensor *c, frit_tensor *a, frit_tensor *b) {
  return lk_chk(k, frit_where(k->ctx, c, a, b));
}

/* t[batch..., idx...] */
static inline frit_tensor *kld(lk *k, frit_tensor *t, int n, frit_tensor *i, frit_tensor *j) {
  frit_tensor *ix[FRIT_MAX_DIMS];
  for (int a = 0; a < k->nb; a++) ix[a] = k->b[a];
  if (n > 0) ix[k->nb] = i;
  if (n > 1) ix[k->nb + 1] = j;
  return lk_chk(k, frit_kernel_load(k->ctx, t, k->nb + n, ix));
}
static inline void kst(lk *k, frit_tensor *t, int n, frit_tensor *i, frit_tensor *j, frit_tensor *v) {
  frit_tensor *ix[FRIT_MAX_DIMS];
  for (int a = 0; a < k->nb; a++) ix[a] = k->b[a];
  if (n > 0) ix[k->nb] = i;
  if (n > 1) ix[k->nb + 1] = j;
  lk_st(k, frit_kernel_store(k->ctx, t, k->nb + n, ix, v));
}
#define LD2(k, t, i, j) kld((k), (t), 2, (i), (j))
#define ST2(k, t, i, j, v) kst((k), (t), 2, (i), (j), (v))
#define LD1(k, t, i) kld((k), (t), 1, (i), NULL)
#define ST1(k, t, i, v) kst((k), (t), 1, (i), NULL, (v))

/* for (i = start; i < end; i += step) -- returns i */
static inline frit_tensor *kfor(lk *k, frit_tensor *start, frit_tensor *end, int64_t step) {
  frit_tensor *i = NULL;
  lk_st(k, frit_kernel_loop_begin(k->ctx, start, end, ki(k, step), &i));
  return lk_chk(k, i);
}
static inline void kendfor(lk *k) { lk_st(k, frit_kernel_loop_end(k->ctx)); }
static inline void kif(lk *k, frit_tensor *c) { lk_st(k, frit_kernel_if_begin(k->ctx, c)); }
static inline void kelse(lk *k) { lk_st(k, frit_kernel_else(k->ctx)); }
static inline void kendif(lk *k) { lk_st(k, frit_kernel_if_end(k->ctx)); }
static inline void kbreak(lk *k) { lk_st(k, frit_kernel_break(k->ctx)); }

/* Variables: an id, read with kget, written with kset. */
static inline int kvar(lk *k, frit_dtype dt, frit_tensor *init) {
  int v = frit_kernel_var(k->ctx, dt, init);
  if (v < 0) k->bad = true;
  return v;
}
static inline frit_tensor *kget(lk *k, int v) { return lk_chk(k, frit_kernel_var_get(k->ctx, v)); }
static inline void kset(lk *k, int v, frit_tensor *x) { lk_st(k, frit_kernel_var_set(k->ctx, v, x)); }

/* Shared entry points of the linalg kernel files. */
/* Checks x is a real float/int/bool array of rank >= 2 (square when `square`) and gives the
 * compute dtype (ints and bool -> f64; f16/bf16 rejected like numpy.linalg). FRIT_VOID on error. */
frit_dtype lk_check(frit_ctx *ctx, const char *op, frit_tensor *x, bool square);
/* Opens a kernel over the batch dims of `like` (all but the last `inner` axes); fills k. */
bool lk_begin(lk *k, frit_ctx *ctx, const char *name, frit_dtype dt, frit_tensor *like, int inner);
/* Closes the kernel and replaces each of ts[0..n) by its version after the kernel. */
bool lk_end(lk *k, frit_tensor **ts, int n);
/* A working buffer of the batch dims of `like` followed by `inner` dims, filled with `tag`.
 * Equal graphs are one node, so buffers of one kernel need distinct tags (kernels write every
 * element they later read). */
frit_tensor *lk_buffer(frit_ctx *ctx, frit_dtype dt, frit_tensor *like, int nbatch, int ninner,
                       frit_uop *const *inner, double tag);
/* X[:n, :n] = identity (every element written). */
void lk_identity(lk *k, frit_tensor *X, frit_tensor *n);
/* 0-d i64 tensor of a dim. */
frit_tensor *lk_dim(lk *k, frit_uop *d);

#endif
