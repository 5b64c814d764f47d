/* The vector-Jacobian product of every tensor-level op: given the cotangent g of a node, the
 * contribution to each source's cotangent, built from the same tensor ops as any program (so
 * the backward graph is simplified, fused and scheduled like the forward one). Conventions
 * (ties of max/min, points where a derivative does not exist) are in docs/autodiff.md. */
#include "autodiff/autodiff.h"

static frit_tensor *src_t(frit_uop *u, int i) { return TI_T(u->src[i]); }
static frit_tensor *cst(frit_ctx *ctx, double v, frit_tensor *like) {
  return ti_const_f(ctx, frit_tensor_dtype(like), v, like);
}
static frit_tensor *mul(frit_ctx *ctx, frit_tensor *a, frit_tensor *b) { return ti_alu2(ctx, FRIT_OP_MUL, a, b); }
static frit_tensor *dvd(frit_ctx *ctx, frit_tensor *a, frit_tensor *b) { return ti_alu2(ctx, FRIT_OP_FDIV, a, b); }
static frit_tensor *add(frit_ctx *ctx, frit_tensor *a, frit_tensor *b) { return ti_alu2(ctx, FRIT_OP_ADD, a, b); }
static frit_tensor *sub(frit_ctx *ctx, frit_tensor *a, frit_tensor *b) { return ti_alu2(ctx, FRIT_OP_SUB, a, b); }
static frit_tensor *neg(frit_ctx *ctx, frit_tensor *a) { return ti_alu1(ctx, FRIT_OP_NEG, a); }
/* g where c holds, zero elsewhere. */
static frit_tensor *masked(frit_ctx *ctx, frit_tensor *c, frit_tensor *g) {
  return ti_where(ctx, c, g, cst(ctx, 0, g));
}
/* 1 - x*x, the derivative pieces of asin/acos/tanh. */
static frit_tensor *one_minus_sq(frit_ctx *ctx, frit_tensor *x) { return sub(ctx, cst(ctx, 1, x), mul(ctx, x, x)); }

/* Complex cotangents follow PyTorch's convention: for a real loss L of z = x + iy, the cotangent
 * is dL/dx + i dL/dy. A holomorphic f then sends g back as g * conj(f'), which is
 * conj(conj(g) f'): the real formulas below applied to conj(g), conjugated (docs/autodiff.md). */
static frit_tensor *conj_(frit_ctx *ctx, frit_tensor *a) { return ti_alu1(ctx, FRIT_OP_CONJ, a); }
static frit_tensor *cplx(frit_ctx *ctx, frit_tensor *re, frit_tensor *im, frit_dtype dt) {
  return ti_cast(ctx, ti_alu2(ctx, FRIT_OP_COMPLEX, re, im), dt);
}
static const bool holomorphic[FRIT_OP_COUNT_] = {
    [FRIT_OP_NEG] = 1, [FRIT_OP_SQRT] = 1, [FRIT_OP_RSQRT] = 1, [FRIT_OP_RECIP] = 1, [FRIT_OP_EXP] = 1,
    [FRIT_OP_EXP2] = 1, [FRIT_OP_LOG] = 1, [FRIT_OP_LOG2] = 1, [FRIT_OP_SIN] = 1, [FRIT_OP_COS] = 1,
    [FRIT_OP_TAN] = 1, [FRIT_OP_ASIN] = 1, [FRIT_OP_ACOS] = 1, [FRIT_OP_ATAN] = 1, [FRIT_OP_SINH] = 1,
    [FRIT_OP_COSH] = 1, [FRIT_OP_TANH] = 1, [FRIT_OP_ADD] = 1, [FRIT_OP_SUB] = 1, [FRIT_OP_MUL] = 1,
    [FRIT_OP_FDIV] = 1, [FRIT_OP_POW] = 1, [FRIT_OP_WHERE] = 1, [FRIT_OP_MULACC] = 1};

/* Cotangent of an elementwise op's sources. x, y: the first two sources; u: the result. */
static bool alu_vjp(frit_ctx *ctx, frit_uop *node, frit_tensor *g, frit_tensor **out) {
  frit_tensor *u = TI_T(node), *x = src_t(node, 0), *y = node->nsrc > 1 ? src_t(node, 1) : NULL;
  switch ((frit_op)node->op) {
  case FRIT_OP_NEG: out[0] = neg(ctx, g); return true;
  case FRIT_OP_ABS: /* sign(x) g, 0 at x == 0 */
    out[0] = ti_where(ctx, ti_alu2(ctx, FRIT_OP_CMPLT, cst(ctx, 0, x), x), g,
                      masked(ctx, ti_alu2(ctx, FRIT_OP_CMPLT, x, cst(ctx, 0, x)), neg(ctx, g)));
    return true;
  case FRIT_OP_SQRT: out[0] = dvd(ctx, g, mul(ctx, cst(ctx, 2, u), u)); return true;
  case FRIT_OP_RSQRT: out[0] = mul(ctx, g, mul(ctx, cst(ctx, -0.5, u), mul(ctx, u, mul(ctx, u, u)))); return true;
  case FRIT_OP_RECIP: out[0] = neg(ctx, mul(ctx, g, mul(ctx, u, u))); return true;
  case FRIT_OP_EXP: out[0] = mul(ctx, g, u); return true;
  case FRIT_OP_EXP2: out[0] = mul(ctx, g, mul(ctx, u, cst(ctx, 0.69314718055994530942, u))); return true;
  case FRIT_OP_LOG: out[0] = dvd(ctx, g, x); return true;
  case FRIT_OP_LOG2: out[0] = dvd(ctx, g, mul(ctx, x, cst(ctx, 0.69314718055994530942, x))); return true;
  case FRIT_OP_SIN: out[0] = mul(ctx, g, ti_alu1(ctx, FRIT_OP_COS, x)); return true;
  case FRIT_OP_COS: out[0] = neg(ctx, mul(ctx, g, ti_alu1(ctx, FRIT_OP_SIN, x))); return true;
  case FRIT_OP_TAN: out[0] = mul(ctx, g, add(ctx, cst(ctx, 1, u), mul(ctx, u, u))); return true;
  case FRIT_OP_ASIN: out[0] = mul(ctx, g, ti_alu1(ctx, FRIT_OP_RSQRT, one_minus_sq(ctx, x))); return true;
  case FRIT_OP_ACOS: out[0] = neg(ctx, mul(ctx, g, ti_alu1(ctx, FRIT_OP_RSQRT, one_minus_sq(ctx, x)))); return true;
  case FRIT_OP_ATAN: out[0] = dvd(ctx, g, add(ctx, cst(ctx, 1, x), mul(ctx, x, x))); return true;
  case FRIT_OP_SINH: out[0] = mul(ctx, g, ti_alu1(ctx, FRIT_OP_COSH, x)); return true;
  case FRIT_OP_COSH: out[0] = mul(ctx, g, ti_alu1(ctx, FRIT_OP_SINH, x)); return true;
  case FRIT_OP_TANH: out[0] = mul(ctx, g, one_minus_sq(ctx, u)); return true;
  case FRIT_OP_ERF: /* 2/sqrt(pi) exp(-x^2) */
    out[0] = mul(ctx, g, mul(ctx, cst(ctx, 1.12837916709551257390, x), ti_alu1(ctx, FRIT_OP_EXP, neg(ctx, mul(ctx, x, x)))));
    return true;
  case FRIT_OP_FLOOR: case FRIT_OP_CEIL: case FRIT_OP_TRUNC: case FRIT_OP_RINT: case FRIT_OP_IDIV:
    return true; /* piecewise constant: zero almost everywhere */
  case FRIT_OP_ADD: out[0] = g, out[1] = g; return true;
  case FRIT_OP_SUB: out[0] = g, out[1] = neg(ctx, g); return true;
  case FRIT_OP_MUL: out[0] = mul(ctx, g, y), out[1] = mul(ctx, g, x); return true;
  case FRIT_OP_FDIV: {
    frit_tensor *gy = dvd(ctx, g, y);
    out[0] = gy, out[1] = neg(ctx, mul(ctx, gy, u));
    return true;
  }
  case FRIT_OP_MOD: /* fmod: x - trunc(x/y) y */
    out[0] = g, out[1] = neg(ctx, mul(ctx, g, ti_alu1(ctx, FRIT_OP_TRUNC, dvd(ctx, x, y))));
    return true;
  case FRIT_OP_MAX: case FRIT_OP_MIN: {
    /* the chosen operand takes g; on a tie each takes half (as jax.numpy.maximum) */
    bool is_max = node->op == FRIT_OP_MAX;
    frit_tensor *x_wins = is_max ? ti_alu2(ctx, FRIT_OP_CMPLT, y, x) : ti_alu2(ctx, FRIT_OP_CMPLT, x, y);
    frit_tensor *y_wins = is_max ? ti_alu2(ctx, FRIT_OP_CMPLT, x, y) : ti_alu2(ctx, FRIT_OP_CMPLT, y, x);
    frit_tensor *half = mul(ctx, g, cst(ctx, 0.5, g));
    frit_tensor *tie = ti_alu2(ctx, FRIT_OP_CMPEQ, x, y);
    out[0] = ti_where(ctx, x_wins, g, masked(ctx, tie, half));
    out[1] = ti_where(ctx, y_wins, g, masked(ctx, tie, half));
    return true;
  }
  case FRIT_OP_POW: {
    /* d/dx = y x^(y-1); d/dy = u ln x, taken as 0 where x == 0 (the limit for y > 0) */
    out[0] = mul(ctx, g, mul(ctx, y, ti_alu2(ctx, FRIT_OP_POW, x, sub(ctx, y, cst(ctx, 1, y)))));
    frit_tensor *zero = ti_alu2(ctx, FRIT_OP_CMPEQ, x, cst(ctx, 0, x));
    frit_tensor *safe_x = ti_where(ctx, zero, cst(ctx, 1, x), x);
    out[1] = masked(ctx, ti_alu1(ctx, FRIT_OP_NOT, zero), mul(ctx, g, mul(ctx, u, ti_alu1(ctx, FRIT_OP_LOG, safe_x))));
    return true;
  }
  case FRIT_OP_ATAN2: { /* atan2(x, y): d/dx = y/(x^2+y^2), d/dy = -x/(x^2+y^2) */
    frit_tensor *r = dvd(ctx, g, add(ctx, mul(ctx, x, x), mul(ctx, y, y)));
    out[0] = mul(ctx, r, y), out[1] = neg(ctx, mul(ctx, r, x));
    return true;
  }
  case FRIT_OP_WHERE: {
    frit_tensor *c = x, *zero = cst(ctx, 0, g);
    out[1] = ti_where(ctx, c, g, zero), out[2] = ti_where(ctx, c, zero, g);
    return true;
  }
  case FRIT_OP_MULACC:
    out[0] = mul(ctx, g, y), out[1] = mul(ctx, g, x), out[2] = g;
    return true;
  case FRIT_OP_NOT: case FRIT_OP_AND: case FRIT_OP_OR: case FRIT_OP_XOR: case FRIT_OP_SHL: case FRIT_OP_SHR:
  case FRIT_OP_CMPLT: case FRIT_OP_CMPLE: case FRIT_OP_CMPEQ: case FRIT_OP_CMPNE:
    return true; /* integer or bool results carry no gradient */
  case FRIT_OP_REAL: case FRIT_OP_IMAG: case FRIT_OP_CONJ: case FRIT_OP_COMPLEX:
  case FRIT_OP_CONST: case FRIT_OP_VECTORIZE: case FRIT_OP_GEP: case FRIT_OP_CAST: case FRIT_OP_BITCAST:
  case FRIT_OP_DEFINE_VAR: case FRIT_OP_BIND: case FRIT_OP_IOTA: case FRIT_OP_CONTIGUOUS: case FRIT_OP_COLLECTIVE: case FRIT_OP_SINK:
  case FRIT_OP_GROUP: case FRIT_OP_AFTER: case FRIT_OP_SPECIAL: case FRIT_OP_RESHAPE: case FRIT_OP_PERMUTE:
  case FRIT_OP_EXPAND: case FRIT_OP_PAD: case FRIT_OP_SHRINK: case FRIT_OP_FLIP: case FRIT_OP_GATHER:
  case FRIT_OP_REDUCE_AXIS: case FRIT_OP_REDUCE: case FRIT_OP_SCAN: case FRIT_OP_RANGE: case FRIT_OP_END:
  case FRIT_OP_IF: case FRIT_OP_BARRIER: case FRIT_OP_KERNEL: case FRIT_OP_BUFFER: case FRIT_OP_DEFINE_GLOBAL:
  case FRIT_OP_DEFINE_LOCAL: case FRIT_OP_DEFINE_REG: case FRIT_OP_INDEX: case FRIT_OP_LOAD: case FRIT_OP_STORE:
  case FRIT_OP_ATOMIC: case FRIT_OP_ATOMIC_CAS: case FRIT_OP_SCATTER: case FRIT_OP_SEQ: case FRIT_OP_BREAK:
  case FRIT_OP_CONTINUE: case FRIT_OP_LOOP: case FRIT_OP_CARRY: case FRIT_OP_COUNT_:
    break;
  }
  FRIT_ASSERT(!"alu_vjp: not an elementwise op");
  return false;
}

/* Sums g over the axes that EXPAND grew from size 1 back to size 1. */
static frit_tensor *unexpand(frit_ctx *ctx, frit_tensor *g, const frit_shape *from) {
  const frit_shape *to = ti_shape(ctx, g);
  bool mask[FRIT_MAX_DIMS];
  for (int i = 0; i < to->ndim; i++) mask[i] = frit_dim_value(from->dims[i]) == 1 && frit_dim_value(to->dims[i]) != 1;
  return tc_sum_keep(ctx, g, mask);
}

static void axes_mask_of(const frit_uop *u, int ndim, bool *mask) {
  const int64_t *ax = u->arg.blob;
  for (int i = 0; i < ndim; i++) mask[i] = false;
  for (uint32_t i = 0; i < u->arg.n; i++) mask[ax[i]] = true;
}

/* The cotangent of x in u = reduce(x) over the masked axes, g of u's (keepdims) shape. */
static frit_tensor *reduce_vjp(frit_ctx *ctx, frit_uop *node, frit_tensor *g) {
  frit_tensor *x = src_t(node, 0), *u = TI_T(node);
  const frit_shape *sx = ti_shape(ctx, x);
  bool mask[FRIT_MAX_DIMS];
  axes_mask_of(node, sx->ndim, mask);
  frit_tensor *gx = ti_expand(ctx, g, sx->ndim, sx->dims);
  frit_op op = (frit_op)node->arg.i0;
  if (op == FRIT_OP_ADD) return gx;
  if (op == FRIT_OP_MAX || op == FRIT_OP_MIN) return tc_extreme_grad(ctx, x, u, g, mask); /* ties share g */
  if (op == FRIT_OP_MUL) {
    /* prod of the others: u/x where x != 0; where x is the only zero, the product of the rest */
    frit_tensor *zero = ti_alu2(ctx, FRIT_OP_CMPEQ, x, cst(ctx, 0, x));
    frit_tensor *nzeros = tc_sum_keep(ctx, ti_cast(ctx, zero, frit_tensor_dtype(x)), mask);
    frit_tensor *rest = tc_reduce_keep(ctx, ti_where(ctx, zero, cst(ctx, 1, x), x), FRIT_OP_MUL, mask);
    frit_tensor *only = ti_alu2(ctx, FRIT_OP_CMPEQ, nzeros, cst(ctx, 1, nzeros));
    frit_tensor *at_zero = ti_expand(ctx, masked(ctx, only, rest), sx->ndim, sx->dims);
    frit_tensor *elsewhere = dvd(ctx, ti_expand(ctx, u, sx->ndim, sx->dims), ti_where(ctx, zero, cst(ctx, 1, x), x));
    return mul(ctx, gx, ti_where(ctx, zero, at_zero, elsewhere));
  }
  char db[32];
  ti_fail(ctx, "grad", NULL, 0, "no gradient for a %s reduction of %s", frit_op_name((frit_op)node->arg.i0),
          frit_dtype_name(node->dtype, db, sizeof db));
  return NULL;
}

/* Reverse inclusive scan: out[i] = sum over k >= i of g[k] along axis. */
static frit_tensor *rev_cumsum(frit_ctx *ctx, frit_tensor *g, int axis) {
  return ti_flip_axis(ctx, ti_scan(ctx, ti_flip_axis(ctx, g, axis), FRIT_OP_ADD, axis), axis);
}

static frit_tensor *scan_vjp(frit_ctx *ctx, frit_uop *node, frit_tensor *g) {
  int axis = (int)node->arg.i1;
  frit_tensor *x = src_t(node, 0), *u = TI_T(node);
  if (node->arg.i0 == FRIT_OP_ADD) return rev_cumsum(ctx, g, axis);
  if (node->arg.i0 == FRIT_OP_MUL) {
    /* d u[k] / d x[i] = u[k] / x[i] for k >= i. Design debt: inf/nan where x has zeros. */
    return dvd(ctx, rev_cumsum(ctx, mul(ctx, g, u), axis), x);
  }
  char db[32];
  ti_fail(ctx, "grad", NULL, 0, "no gradient for a %s scan of %s", frit_op_name((frit_op)node->arg.i0),
          frit_dtype_name(node->dtype, db, sizeof db));
  return NULL;
}

/* x[..., idx, ...] read along axis: the cotangent of x adds g's slices at the indices read
 * (a scatter-add, so repeated indices accumulate). The gathered axis goes first, the index
 * dims are flattened, and SCATTER (which updates rows of axis 0) adds into zeros. */
static frit_tensor *gather_vjp(frit_ctx *ctx, frit_uop *node, frit_tensor *g) {
  frit_tensor *x = src_t(node, 0), *idx = src_t(node, 1);
  const frit_shape *sx = ti_shape(ctx, x), *si = ti_shape(ctx, idx);
  int ax = (int)node->arg.i0, ni = si->ndim, nd = sx->ndim, ng = nd - 1 + ni;
  int perm[FRIT_MAX_DIMS], k = 0;
  for (int i = 0; i < ni; i++) perm[k++] = ax + i;
  for (int i = 0; i < ng; i++)
    if (i < ax || i >= ax + ni) perm[k++] = i;
  frit_tensor *gt = ti_permute(ctx, g, perm); /* index dims, then x's other dims */
  frit_uop *rows = frit_shape_numel(ctx, si);
  frit_uop *dims[FRIT_MAX_DIMS];
  dims[0] = rows;
  for (int i = 0, j = 1; i < nd; i++)
    if (i != ax) dims[j++] = sx->dims[i];
  frit_tensor *flat_idx = ni == 1 ? idx : ti_reshape(ctx, idx, 1, &rows);
  frit_tensor *flat_g = ni == 1 ? gt : ti_reshape(ctx, gt, nd, dims);
  dims[0] = sx->dims[ax];
  frit_tensor *zeros = ti_full(ctx, frit_tensor_dtype(x), (frit_scalar){.f = 0}, nd, dims);
  if (!flat_idx || !flat_g || !zeros) return NULL;
  frit_tensor *acc = frit_scatter(ctx, zeros, flat_idx, flat_g, FRIT_ATOMIC_ADD);
  int back[FRIT_MAX_DIMS];
  for (int i = 0; i < nd; i++) back[i] = i == ax ? 0 : (i < ax ? i + 1 : i);
  return ti_permute(ctx, acc, back);
}

/* out = x with rows idx updated by upd (SCATTER: sets, adds, min or max, in index order). */
static bool scatter_vjp(frit_ctx *ctx, frit_uop *node, frit_tensor *g, const bool *want, frit_tensor **out) {
  frit_tensor *x = src_t(node, 0), *idx = src_t(node, 1), *upd = src_t(node, 2), *u = TI_T(node);
  frit_tensor *g_rows = ti_gather(ctx, g, idx, 0);
  switch ((frit_atomic_op)node->arg.i0) {
  case FRIT_ATOMIC_ADD:
    out[0] = g, out[2] = g_rows;
    return true;
  case FRIT_ATOMIC_XCHG: {
    /* x keeps g where no row was written; an update takes g only if it was the last write to its
     * row (found by scattering each update's position and reading it back) */
    const frit_shape *si = ti_shape(ctx, idx);
    frit_tensor *pos = ti_iota(ctx, si->dims[0]);
    frit_tensor *rows = ti_const_i(ctx, FRIT_I64, -1, ti_iota(ctx, ti_shape(ctx, x)->dims[0]));
    frit_tensor *last = ti_gather(ctx, frit_scatter(ctx, rows, idx, pos, FRIT_ATOMIC_XCHG), idx, 0);
    frit_tensor *won = ti_alu2(ctx, FRIT_OP_CMPEQ, last, pos);
    if (want[0])
      out[0] = frit_scatter(ctx, g, idx, ti_const_f(ctx, frit_tensor_dtype(g), 0, g_rows), FRIT_ATOMIC_XCHG);
    if (want[2] && won) {
      const frit_shape *sg = ti_shape(ctx, g_rows);
      frit_uop *dims[FRIT_MAX_DIMS];
      dims[0] = sg->dims[0];
      for (int i = 1; i < sg->ndim; i++) dims[i] = ti_dim(ctx, 1);
      frit_tensor *won_b = ti_expand(ctx, ti_reshape(ctx, won, sg->ndim, dims), sg->ndim, sg->dims);
      out[2] = masked(ctx, won_b, g_rows);
    }
    return true;
  }
  case FRIT_ATOMIC_MIN: case FRIT_ATOMIC_MAX: {
    /* the value that ended up in the output takes g; ties each take all of it */
    out[0] = masked(ctx, ti_alu2(ctx, FRIT_OP_CMPEQ, x, u), g);
    out[2] = masked(ctx, ti_alu2(ctx, FRIT_OP_CMPEQ, upd, ti_gather(ctx, u, idx, 0)), g_rows);
    return true;
  }
  case FRIT_ATOMIC_AND: case FRIT_ATOMIC_OR: case FRIT_ATOMIC_XOR: case FRIT_ATOMIC_COUNT_:
    break;
  }
  return true; /* integer scatters carry no gradient */
}

/* Elementwise ops with a complex result. |x| (complex, zero imaginary part): only its real part
 * depends on x, with d|x| = Re(conj(x)/|x| dx), so x gets Re(g) x/|x| (0 at x = 0). */
static bool complex_alu_vjp(frit_ctx *ctx, frit_uop *u, frit_tensor *g, const bool *want, frit_tensor **out) {
  char db[32];
  if (u->op == FRIT_OP_ABS) {
    frit_tensor *x = src_t(u, 0), *zero = ti_alu2(ctx, FRIT_OP_CMPEQ, TI_T(u), cst(ctx, 0, x));
    frit_tensor *unit = dvd(ctx, x, ti_where(ctx, zero, cst(ctx, 1, x), TI_T(u)));
    frit_tensor *re = ti_cast(ctx, ti_alu1(ctx, FRIT_OP_REAL, g), u->dtype);
    out[0] = masked(ctx, ti_alu1(ctx, FRIT_OP_NOT, zero), mul(ctx, re, unit));
    return ctx->status == FRIT_OK;
  }
  if (!holomorphic[u->op]) {
    ti_fail(ctx, "grad", (frit_tensor *const[]){TI_T(u)}, 1, "no gradient through %s of %s",
            frit_op_name((frit_op)u->op), frit_dtype_name(u->dtype, db, sizeof db));
    return false;
  }
  if (!alu_vjp(ctx, u, conj_(ctx, g), out)) return false;
  for (uint32_t i = 0; i < u->nsrc; i++) {
    if (!want[i] || !out[i]) {
      out[i] = NULL;
      continue;
    }
    /* a real source of a complex op (where's condition aside) takes the real part */
    out[i] = conj_(ctx, out[i]);
    if (!frit_dtype_is_complex(u->src[i]->dtype) && out[i])
      out[i] = frit_dtype_is_float(u->src[i]->dtype) ? ti_cast(ctx, ti_alu1(ctx, FRIT_OP_REAL, out[i]), u->src[i]->dtype)
                                                    : NULL;
  }
  return ctx->status == FRIT_OK;
}

bool ad_op_vjp(frit_ctx *ctx, frit_uop *u, frit_tensor *g, const bool *want, frit_tensor **out) {
  char db[32], db2[32];
  frit_tensor *x = u->nsrc ? src_t(u, 0) : NULL;
  const frit_shape *sx = x && frit_shape_of(ctx, TI_U(x)) ? ti_shape(ctx, x) : NULL;
  switch ((frit_op)u->op) {
  case FRIT_OP_CONST: case FRIT_OP_DEFINE_VAR: case FRIT_OP_BUFFER: case FRIT_OP_IOTA:
    return true;
  case FRIT_OP_CAST:
    if (u->arg.i0 == TI_CAST_STOP_GRADIENT) return true;
    if (frit_dtype_is_complex(u->src[0]->dtype) && frit_dtype_is_complex(u->dtype))
      out[0] = ti_cast(ctx, g, u->src[0]->dtype);
    else if (frit_dtype_is_complex(u->src[0]->dtype) && frit_dtype_is_float(u->dtype)) /* numpy drops imag */
      out[0] = cplx(ctx, g, cst(ctx, 0, g), u->src[0]->dtype);
    else if (frit_dtype_is_complex(u->dtype) && frit_dtype_is_float(u->src[0]->dtype))
      out[0] = ti_cast(ctx, ti_alu1(ctx, FRIT_OP_REAL, g), u->src[0]->dtype);
    else if (frit_dtype_is_float(u->src[0]->dtype) && frit_dtype_is_float(u->dtype))
      out[0] = ti_cast(ctx, g, u->src[0]->dtype);
    return ctx->status == FRIT_OK; /* from or to an integer: no gradient */
  case FRIT_OP_CONTIGUOUS: out[0] = g; return true;
  case FRIT_OP_COLLECTIVE: out[0] = ti_collective_vjp(ctx, u, g); return out[0] != NULL;
  case FRIT_OP_BITCAST:
    ti_fail(ctx, "grad", (frit_tensor *const[]){TI_T(u)}, 1,
            "the output depends on a differentiated input through its bits (BITCAST): an op built that "
            "way needs a gradient rule (frit_set_vjp)");
    return false;
  case FRIT_OP_RESHAPE: out[0] = ti_reshape(ctx, g, sx->ndim, sx->dims); return out[0] != NULL;
  case FRIT_OP_EXPAND: out[0] = unexpand(ctx, g, sx); return out[0] != NULL;
  case FRIT_OP_PERMUTE: {
    const int64_t *p = u->arg.blob;
    int inv[FRIT_MAX_DIMS];
    for (int i = 0; i < sx->ndim; i++) inv[p[i]] = i;
    out[0] = ti_permute(ctx, g, inv);
    return out[0] != NULL;
  }
  case FRIT_OP_FLIP: {
    bool mask[FRIT_MAX_DIMS];
    axes_mask_of(u, sx->ndim, mask);
    out[0] = ti_flip(ctx, g, mask);
    return out[0] != NULL;
  }
  case FRIT_OP_PAD: case FRIT_OP_SHRINK: {
    int n = sx->ndim;
    frit_uop *b[FRIT_MAX_DIMS], *e[FRIT_MAX_DIMS];
    for (int i = 0; i < n; i++) {
      frit_uop *lo = u->src[1 + i], *hi = u->src[1 + n + i];
      if (u->op == FRIT_OP_PAD) /* cut the padding off again: [lo, lo + dim) */
        b[i] = lo, e[i] = ti_dim_add(ctx, lo, sx->dims[i]);
      else /* zeros where the slice cut: lo before, dim - hi after */
        b[i] = lo, e[i] = ti_dim_sub(ctx, sx->dims[i], hi);
      if (!e[i]) return false;
    }
    out[0] = u->op == FRIT_OP_PAD ? ti_shrink(ctx, g, b, e) : ti_pad(ctx, g, b, e);
    return out[0] != NULL;
  }
  case FRIT_OP_REDUCE_AXIS: /* complex: sums only */
    if (frit_dtype_is_complex(u->dtype) && u->arg.i0 != FRIT_OP_ADD) break;
    out[0] = reduce_vjp(ctx, u, g);
    return out[0] != NULL;
  case FRIT_OP_SCAN: /* complex: sums only */
    if (frit_dtype_is_complex(u->dtype) && u->arg.i0 != FRIT_OP_ADD) break;
    out[0] = scan_vjp(ctx, u, g);
    return out[0] != NULL;
  case FRIT_OP_GATHER:
    out[0] = gather_vjp(ctx, u, g);
    return out[0] != NULL;
  case FRIT_OP_SCATTER: /* complex: add and set (min/max order complex values lexicographically) */
    if (frit_dtype_is_complex(u->dtype) && u->arg.i0 != FRIT_ATOMIC_ADD && u->arg.i0 != FRIT_ATOMIC_XCHG) break;
    return scatter_vjp(ctx, u, g, want, out) && ctx->status == FRIT_OK;
  case FRIT_OP_AFTER:
    ti_fail(ctx, "grad", (frit_tensor *const[]){TI_T(u)}, 1,
            "the output depends on a differentiated input through a value written by an explicit "
            "kernel or host loop that has no reverse rule");
    return false;
  case FRIT_OP_REAL: /* the real part of x: g enters x's real part */
    out[0] = cplx(ctx, g, cst(ctx, 0, g), u->src[0]->dtype);
    return out[0] != NULL;
  case FRIT_OP_IMAG:
    out[0] = cplx(ctx, cst(ctx, 0, g), g, u->src[0]->dtype);
    return out[0] != NULL;
  case FRIT_OP_CONJ: out[0] = conj_(ctx, g); return out[0] != NULL;
  case FRIT_OP_COMPLEX:
    out[0] = ti_cast(ctx, ti_alu1(ctx, FRIT_OP_REAL, g), u->src[0]->dtype);
    out[1] = ti_cast(ctx, ti_alu1(ctx, FRIT_OP_IMAG, g), u->src[1]->dtype);
    return ctx->status == FRIT_OK;
  case FRIT_OP_NEG: case FRIT_OP_NOT: case FRIT_OP_ABS: case FRIT_OP_SQRT: case FRIT_OP_RSQRT: case FRIT_OP_RECIP:
  case FRIT_OP_EXP: case FRIT_OP_EXP2: case FRIT_OP_LOG: case FRIT_OP_LOG2: case FRIT_OP_SIN: case FRIT_OP_COS:
  case FRIT_OP_TAN: case FRIT_OP_ASIN: case FRIT_OP_ACOS: case FRIT_OP_ATAN: case FRIT_OP_SINH: case FRIT_OP_COSH:
  case FRIT_OP_TANH: case FRIT_OP_ERF: case FRIT_OP_FLOOR: case FRIT_OP_CEIL: case FRIT_OP_TRUNC: case FRIT_OP_RINT:
  case FRIT_OP_ADD: case FRIT_OP_SUB: case FRIT_OP_MUL: case FRIT_OP_FDIV: case FRIT_OP_IDIV: case FRIT_OP_MOD:
  case FRIT_OP_MAX: case FRIT_OP_MIN: case FRIT_OP_POW: case FRIT_OP_ATAN2: case FRIT_OP_AND: case FRIT_OP_OR:
  case FRIT_OP_XOR: case FRIT_OP_SHL: case FRIT_OP_SHR: case FRIT_OP_CMPLT: case FRIT_OP_CMPLE: case FRIT_OP_CMPEQ:
  case FRIT_OP_CMPNE: case FRIT_OP_WHERE: case FRIT_OP_MULACC:
    if (frit_dtype_is_complex(u->dtype)) return complex_alu_vjp(ctx, u, g, want, out);
    if (!alu_vjp(ctx, u, g, out)) return false;
    for (uint32_t i = 0; i < u->nsrc; i++)
      if (!want[i]) out[i] = NULL;
    return ctx->status == FRIT_OK;
  case FRIT_OP_VECTORIZE: case FRIT_OP_GEP: case FRIT_OP_BIND: case FRIT_OP_SINK: case FRIT_OP_GROUP:
  case FRIT_OP_SPECIAL: case FRIT_OP_REDUCE: case FRIT_OP_RANGE: case FRIT_OP_END: case FRIT_OP_IF:
  case FRIT_OP_BARRIER: case FRIT_OP_KERNEL: case FRIT_OP_DEFINE_GLOBAL: case FRIT_OP_DEFINE_LOCAL:
  case FRIT_OP_DEFINE_REG: case FRIT_OP_INDEX: case FRIT_OP_LOAD: case FRIT_OP_STORE: case FRIT_OP_ATOMIC:
  case FRIT_OP_ATOMIC_CAS: case FRIT_OP_SEQ: case FRIT_OP_BREAK: case FRIT_OP_CONTINUE: case FRIT_OP_LOOP:
  case FRIT_OP_CARRY: case FRIT_OP_COUNT_:
    ti_fail(ctx, "grad", NULL, 0, "%s is not a tensor-level op", frit_op_name((frit_op)u->op));
    return false;
  }
  ti_fail(ctx, "grad", (frit_tensor *const[]){TI_T(u)}, 1,
          "no gradient through %s of %s (from %s): complex gradients are not implemented yet",
          frit_op_name((frit_op)u->op), frit_dtype_name(u->dtype, db, sizeof db),
          frit_dtype_name(u->nsrc ? u->src[0]->dtype : u->dtype, db2, sizeof db2));
  return false;
}
