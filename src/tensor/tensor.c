/* Tensor frontend core: accessors, inputs, creation ops, numpy dtype promotion and the raw
 * same-shape ALU/constant builders the other frontend files use. */
#include "tensor/tensor_internal.h"

#include <math.h>

/* Every node the frontend hands out has its shape computed (and thereby checked). */
static frit_tensor *fin(frit_ctx *ctx, frit_uop *u) {
  if (!u || !frit_shape_of(ctx, u)) return NULL;
  return TI_T(u);
}

/* ---------- accessors ---------- */

frit_uop *frit_tensor_uop(const frit_tensor *t) { return (frit_uop *)t; }

frit_tensor *frit_tensor_of(frit_ctx *ctx, frit_uop *u) { return fin(ctx, u); }

frit_dtype frit_tensor_dtype(const frit_tensor *t) { return t ? TI_U(t)->dtype : FRIT_VOID; }

static const frit_shape *cached(const frit_tensor *t) { return t ? (const frit_shape *)TI_U(t)->shape : NULL; }

int frit_tensor_ndim(const frit_tensor *t) {
  const frit_shape *s = cached(t);
  return s ? s->ndim : -1;
}

frit_uop *frit_tensor_dim(const frit_tensor *t, int axis) {
  const frit_shape *s = cached(t);
  if (!s) return NULL;
  if (axis < 0) axis += s->ndim;
  return axis >= 0 && axis < s->ndim ? s->dims[axis] : NULL;
}

int64_t frit_tensor_dim_static(const frit_tensor *t, int axis) { return frit_dim_value(frit_tensor_dim(t, axis)); }

/* ---------- promotion ---------- */

/* numpy's kind order and, inside a kind, the bits. bf16 ranks like f16; bf16 with f16 needs f32. */
frit_dtype frit_promote(frit_dtype a, frit_dtype b) {
  a = frit_dtype_kind(a), b = frit_dtype_kind(b);
  if (a == b) return a;
  if (a == FRIT_BOOL) return b;
  if (b == FRIT_BOOL) return a;
  if (frit_dtype_is_complex(a) || frit_dtype_is_complex(b)) {
    /* numpy: the complex whose parts hold the promotion of the real parts (NEP 50 for arrays:
     * c64 with f64 or i32/i64 gives c128) */
    frit_dtype r = frit_promote(frit_dtype_real_part(a), frit_dtype_real_part(b));
    return frit_dtype_kind(r) == FRIT_F64 ? FRIT_C128 : FRIT_C64;
  }
  bool fa = frit_dtype_is_float(a), fb = frit_dtype_is_float(b);
  if (fa && fb) {
    int ba = frit_dtype_bits(a), bb = frit_dtype_bits(b);
    if (ba == 16 && bb == 16) return FRIT_F32; /* f16 with bf16 */
    return ba > bb ? a : b;
  }
  if (fa || fb) {
    frit_dtype f = fa ? a : b, i = fa ? b : a;
    int ib = frit_dtype_bits(i), fbits = frit_dtype_bits(f);
    /* the smallest float of at least f's size that holds every value of the int exactly
     * (numpy: i8/u8 -> f16, i16/u16 -> f32, wider -> f64) */
    int need = ib <= 8 ? 16 : ib <= 16 ? 32 : 64;
    if (fbits >= need) return f;
    return need == 32 ? FRIT_F32 : FRIT_F64;
  }
  bool ua = frit_dtype_is_unsigned(a), ub = frit_dtype_is_unsigned(b);
  int ba = frit_dtype_bits(a), bb = frit_dtype_bits(b);
  if (ua == ub) return ba >= bb ? a : b;
  int sbits = ua ? bb : ba, ubits = ua ? ba : bb;
  if (sbits > ubits) return ua ? b : a;
  switch (ubits) { /* a signed type strictly wider than the unsigned one */
  case 8: return FRIT_I16;
  case 16: return FRIT_I32;
  case 32: return FRIT_I64;
  default: return FRIT_F64;
  }
}

/* ---------- raw builders ---------- */

frit_tensor *ti_alu1(frit_ctx *ctx, frit_op op, frit_tensor *a) { return fin(ctx, frit_unary(ctx, op, TI_U(a))); }
frit_tensor *ti_alu2(frit_ctx *ctx, frit_op op, frit_tensor *a, frit_tensor *b) {
  return fin(ctx, frit_binary(ctx, op, TI_U(a), TI_U(b)));
}
frit_tensor *ti_where(frit_ctx *ctx, frit_tensor *c, frit_tensor *a, frit_tensor *b) {
  return fin(ctx, frit_ternary(ctx, FRIT_OP_WHERE, TI_U(c), TI_U(a), TI_U(b)));
}
frit_tensor *ti_cast(frit_ctx *ctx, frit_tensor *x, frit_dtype dt) {
  if (!x) return NULL;
  if (TI_U(x)->dtype == dt) return x;
  return fin(ctx, frit_cast(ctx, TI_U(x), dt));
}
frit_tensor *ti_iota(frit_ctx *ctx, frit_uop *n) {
  if (!n) return NULL;
  return fin(ctx, frit_uop_new(ctx, FRIT_OP_IOTA, FRIT_I64, &n, 1, NULL));
}

frit_tensor *ti_full(frit_ctx *ctx, frit_dtype dt, frit_scalar v, int ndim, frit_uop *const *dims) {
  frit_tensor *c = fin(ctx, frit_const(ctx, dt, frit_scalar_normalize(v, dt)));
  if (!c || ndim == 0) return c;
  frit_uop *ones[FRIT_MAX_DIMS];
  for (int i = 0; i < ndim; i++)
    if (!(ones[i] = ti_dim(ctx, 1))) return NULL;
  return ti_expand(ctx, ti_reshape(ctx, c, ndim, ones), ndim, dims);
}

frit_tensor *ti_const_f(frit_ctx *ctx, frit_dtype dt, double v, frit_tensor *like) {
  if (!like) return NULL;
  const frit_shape *s = ti_shape(ctx, like);
  frit_scalar x = {.f = v};
  return ti_full(ctx, dt, frit_eval_cast(x, FRIT_F64, dt), s->ndim, s->dims);
}

frit_tensor *ti_const_i(frit_ctx *ctx, frit_dtype dt, int64_t v, frit_tensor *like) {
  if (!like) return NULL;
  const frit_shape *s = ti_shape(ctx, like);
  frit_scalar x = {.i = v};
  return ti_full(ctx, dt, frit_eval_cast(x, FRIT_I64, dt), s->ndim, s->dims);
}

frit_tensor *ti_axis_index(frit_ctx *ctx, frit_tensor *like, int axis) {
  if (!like) return NULL;
  const frit_shape *s = ti_shape(ctx, like);
  frit_uop *d[FRIT_MAX_DIMS];
  for (int i = 0; i < s->ndim; i++) d[i] = i == axis ? s->dims[i] : ti_dim(ctx, 1);
  frit_tensor *r = ti_reshape(ctx, ti_iota(ctx, s->dims[axis]), s->ndim, d);
  return ti_expand(ctx, r, s->ndim, s->dims);
}

int ti_next_input(frit_ctx *ctx) { return ctx->tensor_ninputs++; }

/* ---------- inputs ---------- */

static bool tensor_dtype_ok(frit_ctx *ctx, const char *op, frit_dtype dt) {
  char b[32];
  if (frit_dtype_is_ptr(dt) || frit_dtype_lanes(dt) != 1 || frit_dtype_kind(dt) == FRIT_VOID ||
      frit_dtype_kind(dt) >= FRIT_SCALAR_KIND_COUNT_) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "op %s: dtype %s: tensors have scalar element dtypes", op,
                   ti_dtname(dt, b));
    return false;
  }
  return true;
}

frit_tensor *frit_input_sym(frit_ctx *ctx, const char *name, frit_dtype dt, int ndim, frit_uop *const *dims) {
  if (!name || !*name) return ti_fail(ctx, "input", NULL, 0, "needs a non-empty name");
  if (ndim < 0 || ndim > FRIT_MAX_DIMS) return ti_fail(ctx, "input", NULL, 0, "input '%s': rank %d outside 0..%d", name, ndim, FRIT_MAX_DIMS);
  if (!tensor_dtype_ok(ctx, "input", dt)) return NULL;
  for (int i = 0; i < ndim; i++) {
    if (!dims[i]) {
      if (ctx->status == FRIT_OK) ti_fail(ctx, "input", NULL, 0, "input '%s': dim %d is NULL", name, i);
      return NULL;
    }
    if (dims[i]->dtype != FRIT_I64 || dims[i]->vmin < 0)
      return ti_fail(ctx, "input", NULL, 0, "input '%s': dim %d must be a non-negative i64 expression", name, i);
  }
  frit_arg a = frit_arg_none();
  a.i0 = ctx->tensor_ninputs;
  a.blob = name;
  a.blob_kind = FRIT_BLOB_STR;
  frit_tensor *t = fin(ctx, frit_uop_new(ctx, FRIT_OP_BUFFER, dt, dims, ndim, &a));
  if (t) ctx->tensor_ninputs++;
  return t;
}

frit_tensor *frit_input(frit_ctx *ctx, const char *name, frit_dtype dt, int ndim, const int64_t *dims) {
  frit_uop *d[FRIT_MAX_DIMS];
  if (ndim < 0 || ndim > FRIT_MAX_DIMS) return ti_fail(ctx, "input", NULL, 0, "rank %d outside 0..%d", ndim, FRIT_MAX_DIMS);
  for (int i = 0; i < ndim; i++)
    if (dims[i] < 0) return ti_fail(ctx, "input", NULL, 0, "input '%s': negative dim %lld", name ? name : "?", (long long)dims[i]);
  if (!ti_dims_from_ints(ctx, ndim, dims, d)) return NULL;
  return frit_input_sym(ctx, name, dt, ndim, d);
}

/* ---------- creation ---------- */

frit_tensor *frit_scalar_f(frit_ctx *ctx, frit_dtype dt, double v) {
  if (!tensor_dtype_ok(ctx, "scalar", dt)) return NULL;
  return fin(ctx, frit_const_float(ctx, dt, v));
}

frit_tensor *frit_scalar_i(frit_ctx *ctx, frit_dtype dt, int64_t v) {
  if (!tensor_dtype_ok(ctx, "scalar", dt)) return NULL;
  return fin(ctx, frit_const_int(ctx, dt, v));
}

static bool static_dims(frit_ctx *ctx, const char *op, int ndim, const int64_t *dims, frit_uop **out) {
  if (ndim < 0 || ndim > FRIT_MAX_DIMS) {
    ti_fail(ctx, op, NULL, 0, "rank %d outside 0..%d", ndim, FRIT_MAX_DIMS);
    return false;
  }
  for (int i = 0; i < ndim; i++)
    if (dims[i] < 0) {
      ti_fail(ctx, op, NULL, 0, "negative dimensions are not allowed (dim %d is %lld)", i, (long long)dims[i]);
      return false;
    }
  return ti_dims_from_ints(ctx, ndim, dims, out);
}

static bool sym_dims_ok(frit_ctx *ctx, const char *op, int ndim, frit_uop *const *dims) {
  if (ndim < 0 || ndim > FRIT_MAX_DIMS) {
    ti_fail(ctx, op, NULL, 0, "rank %d outside 0..%d", ndim, FRIT_MAX_DIMS);
    return false;
  }
  for (int i = 0; i < ndim; i++) {
    if (!dims[i]) {
      if (ctx->status == FRIT_OK) ti_fail(ctx, op, NULL, 0, "dim %d is NULL", i);
      return false;
    }
    if (dims[i]->dtype != FRIT_I64 || dims[i]->vmin < 0) {
      ti_fail(ctx, op, NULL, 0, "dim %d must be a non-negative i64 expression", i);
      return false;
    }
  }
  return true;
}

frit_tensor *frit_full_sym(frit_ctx *ctx, frit_dtype dt, int ndim, frit_uop *const *dims, double v) {
  if (!tensor_dtype_ok(ctx, "full", dt) || !sym_dims_ok(ctx, "full", ndim, dims)) return NULL;
  frit_scalar s = {.f = v};
  return ti_full(ctx, dt, frit_eval_cast(s, FRIT_F64, dt), ndim, dims);
}

frit_tensor *frit_full(frit_ctx *ctx, frit_dtype dt, int ndim, const int64_t *dims, double v) {
  frit_uop *d[FRIT_MAX_DIMS];
  if (!static_dims(ctx, "full", ndim, dims, d)) return NULL;
  return frit_full_sym(ctx, dt, ndim, d, v);
}

frit_tensor *frit_full_i(frit_ctx *ctx, frit_dtype dt, int ndim, const int64_t *dims, int64_t v) {
  frit_uop *d[FRIT_MAX_DIMS];
  if (!tensor_dtype_ok(ctx, "full", dt) || !static_dims(ctx, "full", ndim, dims, d)) return NULL;
  frit_scalar s = {.i = v};
  return ti_full(ctx, dt, frit_eval_cast(s, FRIT_I64, dt), ndim, d);
}

frit_tensor *frit_zeros(frit_ctx *ctx, frit_dtype dt, int ndim, const int64_t *dims) {
  return frit_full_i(ctx, dt, ndim, dims, 0);
}
frit_tensor *frit_ones(frit_ctx *ctx, frit_dtype dt, int ndim, const int64_t *dims) {
  return frit_full_i(ctx, dt, ndim, dims, 1);
}

/* x (n,) op 0-d constant, broadcast. */
static frit_tensor *vec_op_const(frit_ctx *ctx, frit_op op, frit_tensor *x, frit_dtype dt, frit_scalar v) {
  if (!x) return NULL;
  const frit_shape *s = ti_shape(ctx, x);
  return ti_alu2(ctx, op, x, ti_full(ctx, dt, v, s->ndim, s->dims));
}

/* numpy fills arange as a[i] = a[0] + i*(a[1] - a[0]) with a[0], a[1] converted to the dtype:
 * integers in the dtype, f32 in float, f16 in float (then rounded), f64 in double. */
frit_tensor *frit_arange(frit_ctx *ctx, double start, double stop, double step, frit_dtype dt) {
  char b[32];
  if (!tensor_dtype_ok(ctx, "arange", dt)) return NULL;
  if (step == 0 || isnan(step) || isnan(start) || isnan(stop))
    return ti_fail(ctx, "arange", NULL, 0, "start %g, stop %g, step %g: step must be nonzero and values finite", start, stop, step);
  double len_d = ceil((stop - start) / step);
  if (!(len_d <= (double)INT64_MAX / 2)) return ti_fail(ctx, "arange", NULL, 0, "start %g, stop %g, step %g: too many elements", start, stop, step);
  int64_t len = len_d > 0 ? (int64_t)len_d : 0;
  frit_tensor *i = ti_iota(ctx, ti_dim(ctx, len));
  frit_scalar s0 = {.f = start}, s1 = {.f = start + step};
  frit_scalar v0 = frit_eval_cast(s0, FRIT_F64, dt), v1 = frit_eval_cast(s1, FRIT_F64, dt);
  if (frit_dtype_is_float(dt)) {
    frit_dtype ct = frit_dtype_bits(dt) == 64 ? FRIT_F64 : FRIT_F32;
    frit_scalar a = frit_eval_cast(v0, dt, ct), d = frit_eval_cast(v1, dt, ct);
    frit_scalar sub[2] = {d, a};
    d = frit_eval_alu(FRIT_OP_SUB, ct, sub);
    frit_tensor *t = vec_op_const(ctx, FRIT_OP_MUL, ti_cast(ctx, i, ct), ct, d);
    t = vec_op_const(ctx, FRIT_OP_ADD, t, ct, a);
    return ti_cast(ctx, t, dt);
  }
  if (!frit_dtype_is_int(dt) && !frit_dtype_is_bool(dt))
    return ti_fail(ctx, "arange", NULL, 0, "unsupported dtype %s", ti_dtname(dt, b));
  /* integers: in i64 (wrapping is the same modulo the width), then converted */
  frit_scalar a = frit_eval_cast(v0, dt, FRIT_I64), e = frit_eval_cast(v1, dt, FRIT_I64);
  frit_scalar sub[2] = {e, a};
  frit_scalar d = frit_eval_alu(FRIT_OP_SUB, FRIT_I64, sub);
  frit_tensor *t = vec_op_const(ctx, FRIT_OP_ADD, vec_op_const(ctx, FRIT_OP_MUL, i, FRIT_I64, d), FRIT_I64, a);
  return ti_cast(ctx, t, dt);
}

/* numpy: y = i*step + start in f64 (step = (stop-start)/div), last = stop with the endpoint,
 * floored for integer dtypes, then converted. */
frit_tensor *frit_linspace(frit_ctx *ctx, double start, double stop, int64_t num, int endpoint, frit_dtype dt) {
  if (!tensor_dtype_ok(ctx, "linspace", dt)) return NULL;
  if (num < 0) return ti_fail(ctx, "linspace", NULL, 0, "number of samples, %lld, must be non-negative", (long long)num);
  int64_t div = endpoint ? num - 1 : num;
  double delta = stop - start;
  frit_tensor *y = ti_cast(ctx, ti_iota(ctx, ti_dim(ctx, num)), FRIT_F64);
  frit_scalar sv;
  if (div > 0) {
    double step = delta / (double)div;
    if (step == 0) {
      sv.f = (double)div;
      y = vec_op_const(ctx, FRIT_OP_FDIV, y, FRIT_F64, sv);
      sv.f = delta;
      y = vec_op_const(ctx, FRIT_OP_MUL, y, FRIT_F64, sv);
    } else {
      sv.f = step;
      y = vec_op_const(ctx, FRIT_OP_MUL, y, FRIT_F64, sv);
    }
  } else {
    sv.f = delta;
    y = vec_op_const(ctx, FRIT_OP_MUL, y, FRIT_F64, sv);
  }
  sv.f = start;
  y = vec_op_const(ctx, FRIT_OP_ADD, y, FRIT_F64, sv);
  if (endpoint && num > 1 && y) {
    frit_tensor *idx = ti_iota(ctx, ti_dim(ctx, num));
    frit_scalar last = {.i = num - 1};
    frit_tensor *is_last = vec_op_const(ctx, FRIT_OP_CMPEQ, idx, FRIT_I64, last);
    y = ti_where(ctx, is_last, ti_const_f(ctx, FRIT_F64, stop, y), y);
  }
  if (frit_dtype_is_int(dt)) y = ti_alu1(ctx, FRIT_OP_FLOOR, y);
  return ti_cast(ctx, y, dt);
}

frit_tensor *frit_eye(frit_ctx *ctx, int64_t n, int64_t m, int64_t k, frit_dtype dt) {
  if (!tensor_dtype_ok(ctx, "eye", dt)) return NULL;
  if (n < 0 || m < 0) return ti_fail(ctx, "eye", NULL, 0, "negative dimensions are not allowed (%lld, %lld)", (long long)n, (long long)m);
  frit_uop *dims[2] = {ti_dim(ctx, n), ti_dim(ctx, m)};
  frit_tensor *like = ti_full(ctx, FRIT_I64, (frit_scalar){.i = 0}, 2, dims);
  frit_tensor *r = ti_axis_index(ctx, like, 0), *c = ti_axis_index(ctx, like, 1);
  frit_tensor *d = ti_alu2(ctx, FRIT_OP_SUB, c, r);
  return ti_cast(ctx, ti_alu2(ctx, FRIT_OP_CMPEQ, d, ti_const_i(ctx, FRIT_I64, k, d)), dt);
}

frit_status ti_check_dim_list(frit_ctx *ctx, const char *op, int ndim, frit_uop *const *dims, const void *out,
                              const char *out_name) {
  if (ndim < 0 || ndim > FRIT_MAX_DIMS) {
    ti_fail(ctx, op, NULL, 0, "rank %d outside 0..%d", ndim, FRIT_MAX_DIMS);
    return FRIT_ERR_INVALID;
  }
  if (ndim > 0 && (!dims || !out)) {
    ti_fail(ctx, op, NULL, 0, "dims and %s must not be NULL for rank %d", out_name, ndim);
    return FRIT_ERR_INVALID;
  }
  for (int a = 0; a < ndim; a++) {
    if (!dims[a]) {
      if (ctx->status == FRIT_OK) ti_fail(ctx, op, NULL, 0, "dim %d is NULL", a);
      return ctx->status;
    }
    if (dims[a]->dtype != FRIT_I64 || dims[a]->vmin < 0) {
      ti_fail(ctx, op, NULL, 0, "dim %d must be a non-negative i64 expression", a);
      return FRIT_ERR_INVALID;
    }
  }
  return FRIT_OK;
}

static frit_tensor *marked_cast(frit_ctx *ctx, frit_tensor *x, int64_t mark, int64_t unique) {
  if (!x || !frit_shape_of(ctx, TI_U(x))) return NULL;
  frit_arg a = frit_arg_none();
  a.i0 = mark, a.i1 = unique;
  frit_uop *u = TI_U(x);
  frit_uop *r = frit_uop_new(ctx, FRIT_OP_CAST, u->dtype, &u, 1, &a);
  return r && frit_shape_of(ctx, r) ? TI_T(r) : NULL;
}
frit_tensor *ti_stop_gradient(frit_ctx *ctx, frit_tensor *x) { return marked_cast(ctx, x, TI_CAST_STOP_GRADIENT, 0); }
/* the node count only grows: a unique arg */
frit_tensor *ti_fresh(frit_ctx *ctx, frit_tensor *x) { return marked_cast(ctx, x, TI_CAST_FRESH, (int64_t)ctx->count); }
