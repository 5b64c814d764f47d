/* StableHLO ops onto frit tensors: the op table, functions and calls, elementwise ops, movement,
 * constants, and control flow (while as a host loop, case and if as selects). */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "import/stablehlo/build.h"
#include "interp/scalar.h"
#include "ir/uop.h"
#include "tensor/tensor_internal.h"

/* ---------------------------------------------------------------- errors and types */
frit_status shlo_fail(B *b, const shlo_op *op, const char *fmt, ...) {
  char msg[700];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return frit_set_error(b->ctx, FRIT_ERR_INVALID, "stablehlo: line %d, column %d: %s: %s", op->line, op->col,
                        op->name, msg);
}

frit_status shlo_wrap(B *b, const shlo_op *op) {
  char msg[800];
  snprintf(msg, sizeof msg, "%s", frit_error(b->ctx));
  if (strncmp(msg, "stablehlo: ", 11) == 0) return frit_last_status(b->ctx); /* already placed */
  frit_status st = frit_last_status(b->ctx);
  frit_set_error(b->ctx, st ? st : FRIT_ERR_INVALID, "stablehlo: line %d, column %d: %s: %s", op->line, op->col,
                 op->name, msg[0] ? msg : "failed");
  return st ? st : FRIT_ERR_INVALID;
}

const shlo_type *shlo_rtype(const shlo_op *op, int k) {
  if (op->ntout == 0) return NULL;
  if (op->ntin > 0 || op->ntout == op->nres) return k < op->ntout ? &op->tout[k] : NULL;
  return &op->tout[op->ntout - 1];
}

frit_status shlo_static_dims(B *b, const shlo_op *op, const shlo_type *t, int64_t *dims) {
  if (!t) return shlo_fail(b, op, "its result type is not written");
  if (t->ndim < 0 || t->dt == FRIT_VOID) return shlo_fail(b, op, "result type %s is not a tensor frit holds", t->text);
  for (int d = 0; d < t->ndim; d++) {
    if (t->dims[d] < 0) return shlo_fail(b, op, "result type %s has a dynamic dim", t->text);
    dims[d] = t->dims[d];
  }
  return FRIT_OK;
}

frit_uop *shlo_dim_prod(frit_ctx *ctx, const frit_tensor *x, const int *axes, int n) {
  frit_uop *p = frit_const_int(ctx, FRIT_I64, 1);
  for (int i = 0; i < n && p; i++) p = frit_binary(ctx, FRIT_OP_MUL, p, frit_tensor_dim(x, axes[i]));
  return p;
}

static frit_tensor *bitcast(frit_ctx *ctx, frit_tensor *x, frit_dtype to) {
  if (!x) return NULL;
  if (frit_tensor_dtype(x) == to) return x;
  frit_uop *u = frit_tensor_uop(x);
  frit_uop *r = frit_uop_new(ctx, FRIT_OP_BITCAST, to, &u, 1, NULL);
  return r ? frit_tensor_of(ctx, r) : NULL;
}

static frit_dtype same_width_int(frit_dtype dt, int is_unsigned) {
  switch (frit_dtype_bits(dt)) {
  case 8: return is_unsigned ? FRIT_U8 : FRIT_I8;
  case 16: return is_unsigned ? FRIT_U16 : FRIT_I16;
  case 32: return is_unsigned ? FRIT_U32 : FRIT_I32;
  default: return is_unsigned ? FRIT_U64 : FRIT_I64;
  }
}

/* ---------------------------------------------------------------- elementwise */
static const struct {
  const char *name;
  frit_ufunc f;
} unary_ops[] = {
    {"abs", FRIT_UF_ABS},         {"negate", FRIT_UF_NEG},        {"sqrt", FRIT_UF_SQRT},
    {"rsqrt", FRIT_UF_RSQRT},     {"exponential", FRIT_UF_EXP},   {"exponential_minus_one", FRIT_UF_EXPM1},
    {"log", FRIT_UF_LOG},         {"log_plus_one", FRIT_UF_LOG1P}, {"logistic", FRIT_UF_SIGMOID},
    {"tanh", FRIT_UF_TANH},       {"sine", FRIT_UF_SIN},          {"cosine", FRIT_UF_COS},
    {"tan", FRIT_UF_TAN},         {"floor", FRIT_UF_FLOOR},       {"ceil", FRIT_UF_CEIL},
    {"round_nearest_even", FRIT_UF_RINT}, {"sign", FRIT_UF_SIGN}, {"cbrt", FRIT_UF_CBRT},
    {"erf", FRIT_UF_ERF},         {"asin", FRIT_UF_ASIN},         {"acos", FRIT_UF_ACOS},
    {"atan", FRIT_UF_ATAN},       {"sinh", FRIT_UF_SINH},         {"cosh", FRIT_UF_COSH},
    {"asinh", FRIT_UF_ASINH},     {"acosh", FRIT_UF_ACOSH},       {"atanh", FRIT_UF_ATANH},
};

static const char *short_name(const char *name) {
  const char *dot = strchr(name, '.');
  return dot ? dot + 1 : name;
}

static frit_tensor *shift(frit_ctx *ctx, const char *kind, frit_tensor *x, frit_tensor *s) {
  frit_dtype dt = frit_tensor_dtype(x);
  int bits = frit_dtype_bits(dt);
  /* StableHLO defines shifts by >= the width (0, or the sign for arithmetic); C does not */
  frit_tensor *su = bitcast(ctx, s, same_width_int(dt, 1));
  frit_tensor *big = frit_binary_t(ctx, FRIT_BF_GE, su, frit_scalar_i(ctx, frit_tensor_dtype(su), bits));
  frit_tensor *sc = frit_where(ctx, big, frit_scalar_i(ctx, frit_tensor_dtype(su), bits - 1), su);
  sc = bitcast(ctx, sc, dt);
  if (!strcmp(kind, "shift_left")) {
    frit_tensor *r = ti_alu2(ctx, FRIT_OP_SHL, x, sc);
    return frit_where(ctx, big, frit_scalar_i(ctx, dt, 0), r);
  }
  if (!strcmp(kind, "shift_right_logical")) {
    frit_dtype u = same_width_int(dt, 1);
    frit_tensor *r = bitcast(ctx, ti_alu2(ctx, FRIT_OP_SHR, bitcast(ctx, x, u), bitcast(ctx, sc, u)), dt);
    return frit_where(ctx, big, frit_scalar_i(ctx, dt, 0), r);
  }
  frit_dtype sdt = same_width_int(dt, 0);
  return bitcast(ctx, ti_alu2(ctx, FRIT_OP_SHR, bitcast(ctx, x, sdt), bitcast(ctx, sc, sdt)), dt);
}

frit_tensor *shlo_binop(frit_ctx *ctx, const char *name, frit_tensor *a, frit_tensor *c) {
  if (!a || !c) return NULL;
  const char *n = short_name(name);
  frit_dtype dt = frit_tensor_dtype(a);
  int isint = frit_dtype_is_int(dt) || frit_dtype_is_bool(dt);
  if (!ti_broadcast2(ctx, n, &a, &c)) return NULL;
  if (!strcmp(n, "add")) return frit_dtype_is_bool(dt) ? ti_alu2(ctx, FRIT_OP_OR, a, c) : ti_alu2(ctx, FRIT_OP_ADD, a, c);
  if (!strcmp(n, "subtract")) return ti_alu2(ctx, FRIT_OP_SUB, a, c);
  if (!strcmp(n, "multiply")) return frit_dtype_is_bool(dt) ? ti_alu2(ctx, FRIT_OP_AND, a, c) : ti_alu2(ctx, FRIT_OP_MUL, a, c);
  if (!strcmp(n, "divide")) {
    if (!isint) return ti_alu2(ctx, FRIT_OP_FDIV, a, c);
    /* x / 0 is -1 (all ones) in StableHLO; C traps: divide by a safe 1 and patch */
    frit_tensor *zero = frit_binary_t(ctx, FRIT_BF_EQ, c, frit_scalar_i(ctx, dt, 0));
    frit_tensor *safe = frit_where(ctx, zero, frit_scalar_i(ctx, dt, 1), c);
    frit_tensor *q = ti_alu2(ctx, FRIT_OP_IDIV, a, safe);
    return frit_where(ctx, zero, frit_scalar_i(ctx, dt, -1), q);
  }
  if (!strcmp(n, "remainder")) {
    if (!isint) return ti_alu2(ctx, FRIT_OP_MOD, a, c);
    frit_tensor *zero = frit_binary_t(ctx, FRIT_BF_EQ, c, frit_scalar_i(ctx, dt, 0));
    frit_tensor *safe = frit_where(ctx, zero, frit_scalar_i(ctx, dt, 1), c);
    return frit_where(ctx, zero, a, ti_alu2(ctx, FRIT_OP_MOD, a, safe));
  }
  if (!strcmp(n, "maximum")) return frit_dtype_is_bool(dt) ? ti_alu2(ctx, FRIT_OP_OR, a, c) : frit_binary_t(ctx, FRIT_BF_MAXIMUM, a, c);
  if (!strcmp(n, "minimum")) return frit_dtype_is_bool(dt) ? ti_alu2(ctx, FRIT_OP_AND, a, c) : frit_binary_t(ctx, FRIT_BF_MINIMUM, a, c);
  if (!strcmp(n, "power")) return frit_binary_t(ctx, FRIT_BF_POW, a, c);
  if (!strcmp(n, "atan2")) return frit_binary_t(ctx, FRIT_BF_ATAN2, a, c);
  if (!strcmp(n, "and")) return ti_alu2(ctx, FRIT_OP_AND, a, c);
  if (!strcmp(n, "or")) return ti_alu2(ctx, FRIT_OP_OR, a, c);
  if (!strcmp(n, "xor")) return ti_alu2(ctx, FRIT_OP_XOR, a, c);
  if (!strcmp(n, "complex")) return frit_complex_t(ctx, a, c);
  if (!strncmp(n, "shift_", 6) && isint) return shift(ctx, n, a, c);
  frit_set_error(ctx, FRIT_ERR_INVALID, "%s is not an elementwise binary op frit has (on %s)", name,
                 frit_dtype_name(dt, (char[32]){0}, 32));
  return NULL;
}

static frit_status op_unary(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out) {
  (void)env;
  const char *n = short_name(op->name);
  frit_ctx *ctx = b->ctx;
  frit_tensor *x = in[0], *r = NULL;
  frit_dtype dt = frit_tensor_dtype(x);
  if (!strcmp(n, "not")) {
    r = ti_alu1(ctx, FRIT_OP_NOT, x);
  } else if (!strcmp(n, "is_finite")) {
    r = frit_unary_t(ctx, FRIT_UF_LOGICAL_NOT, frit_binary_t(ctx, FRIT_BF_LOGICAL_OR, frit_unary_t(ctx, FRIT_UF_ISNAN, x),
                                                             frit_unary_t(ctx, FRIT_UF_ISINF, x)));
  } else if (!strcmp(n, "round_nearest_afz")) { /* halves away from zero */
    frit_tensor *t = frit_unary_t(ctx, FRIT_UF_TRUNC, x);
    frit_tensor *frac = frit_unary_t(ctx, FRIT_UF_ABS, frit_binary_t(ctx, FRIT_BF_SUB, x, t));
    frit_tensor *up = frit_binary_t(ctx, FRIT_BF_GE, frac, frit_scalar_f(ctx, dt, 0.5));
    r = frit_where(ctx, up, frit_binary_t(ctx, FRIT_BF_ADD, t, frit_unary_t(ctx, FRIT_UF_SIGN, x)), t);
  } else if (!strcmp(n, "real")) {
    r = frit_dtype_is_complex(dt) ? frit_real(ctx, x) : x;
  } else if (!strcmp(n, "imag")) {
    r = frit_imag(ctx, x);
  } else if (!strcmp(n, "optimization_barrier")) {
    for (int i = 0; i < op->nopnd; i++) out[i] = in[i];
    return FRIT_OK;
  } else {
    for (size_t i = 0; i < sizeof unary_ops / sizeof unary_ops[0]; i++)
      if (!strcmp(unary_ops[i].name, n)) r = frit_unary_t(ctx, unary_ops[i].f, x);
    if (r && frit_tensor_dtype(r) != dt && !frit_dtype_is_complex(dt)) r = frit_astype(ctx, r, dt);
  }
  SHLO_CHECK(b, op, r);
  out[0] = r;
  return FRIT_OK;
}

static frit_status op_binary(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out) {
  (void)env;
  if (op->nopnd != 2) return shlo_fail(b, op, "takes 2 operands, %d given", op->nopnd);
  out[0] = shlo_binop(b->ctx, op->name, in[0], in[1]);
  SHLO_CHECK(b, op, out[0]);
  return FRIT_OK;
}

/* Floats in IEEE total order: the bits as signed integers, negatives reflected. */
static frit_tensor *total_order_key(frit_ctx *ctx, frit_tensor *x) {
  frit_dtype it = same_width_int(frit_tensor_dtype(x), 0);
  frit_tensor *k = bitcast(ctx, x, it);
  int bits = frit_dtype_bits(it);
  int64_t maxv = bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
  frit_tensor *neg = frit_binary_t(ctx, FRIT_BF_LT, k, frit_scalar_i(ctx, it, 0));
  return frit_where(ctx, neg, ti_alu2(ctx, FRIT_OP_XOR, k, ti_const_i(ctx, it, maxv, k)), k);
}

static const char *word_or_attr(const shlo_op *op, int word_index, const char *key) {
  shlo_attr *a = shlo_attr_get(op, key);
  if (a && (a->kind == SA_WORD || a->kind == SA_STRING)) return a->s;
  return word_index < op->nword ? op->words[word_index] : NULL;
}

static frit_status op_compare(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out) {
  (void)env;
  frit_ctx *ctx = b->ctx;
  const char *dir = word_or_attr(op, 0, "comparison_direction");
  const char *ty = word_or_attr(op, 1, "compare_type");
  frit_tensor *x = in[0], *y = in[1];
  if (ty && !strcmp(ty, "TOTALORDER") && frit_dtype_is_float(frit_tensor_dtype(x))) {
    x = total_order_key(ctx, x);
    y = total_order_key(ctx, y);
  }
  static const struct {
    const char *dir;
    frit_bfunc f;
  } dirs[] = {{"EQ", FRIT_BF_EQ}, {"NE", FRIT_BF_NE}, {"LT", FRIT_BF_LT},
              {"LE", FRIT_BF_LE}, {"GT", FRIT_BF_GT}, {"GE", FRIT_BF_GE}};
  for (size_t i = 0; dir && i < sizeof dirs / sizeof dirs[0]; i++) {
    if (!strcmp(dir, dirs[i].dir)) {
      out[0] = frit_binary_t(ctx, dirs[i].f, x, y);
      SHLO_CHECK(b, op, out[0]);
      return FRIT_OK;
    }
  }
  return shlo_fail(b, op, "unknown comparison direction %s", dir ? dir : "(none)");
}

static frit_status op_convert(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out) {
  (void)env;
  const shlo_type *t = shlo_rtype(op, 0);
  if (!t || t->dt == FRIT_VOID) return shlo_fail(b, op, "needs a result type frit holds");
  frit_tensor *x = in[0];
  if (frit_dtype_is_complex(frit_tensor_dtype(x)) && !frit_dtype_is_complex(t->dt)) x = frit_real(b->ctx, x);
  out[0] = frit_astype(b->ctx, x, t->dt);
  SHLO_CHECK(b, op, out[0]);
  return FRIT_OK;
}

static frit_status op_bitcast_convert(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out) {
  (void)env;
  const shlo_type *t = shlo_rtype(op, 0);
  if (!t || t->dt == FRIT_VOID) return shlo_fail(b, op, "needs a result type frit holds");
  if (frit_dtype_bits(t->dt) != frit_dtype_bits(frit_tensor_dtype(in[0])))
    return shlo_fail(b, op, "between element types of different widths (%s) is not supported", t->text);
  out[0] = bitcast(b->ctx, in[0], t->dt);
  SHLO_CHECK(b, op, out[0]);
  return FRIT_OK;
}

static frit_status op_select(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out) {
  (void)env;
  out[0] = frit_where(b->ctx, in[0], in[1], in[2]);
  SHLO_CHECK(b, op, out[0]);
  return FRIT_OK;
}

static frit_status op_clamp(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out) {
  (void)env;
  out[0] = shlo_binop(b->ctx, "minimum", shlo_binop(b->ctx, "maximum", in[1], in[0]), in[2]);
  SHLO_CHECK(b, op, out[0]);
  return FRIT_OK;
}

/* ---------------------------------------------------------------- constants */
static double half_to_double(uint16_t h, int is_bf16) {
  return is_bf16 ? frit_bf16_to_double(h) : frit_f16_to_double(h);
}

/* Element k of a dense literal as a double and as an integer, from its values or its bytes. */
static void dense_elem(const shlo_attr *a, frit_dtype dt, int64_t k, double *f, int64_t *i) {
  int size = frit_dtype_bits(dt) / 8;
  if (frit_dtype_is_bool(dt)) size = 1;
  if (a->hex) {
    size_t n = a->hexlen / (size_t)size;
    const uint8_t *p = a->hex + (size_t)(n == 1 ? 0 : k) * (size_t)size;
    uint64_t bits = 0;
    memcpy(&bits, p, (size_t)size);
    if (dt == FRIT_F32) {
      float x;
      memcpy(&x, &bits, 4);
      *f = x;
    } else if (dt == FRIT_F64) {
      memcpy(f, &bits, 8);
    } else if (dt == FRIT_F16 || dt == FRIT_BF16) {
      *f = half_to_double((uint16_t)bits, dt == FRIT_BF16);
    } else {
      int sh = 64 - 8 * size;
      *i = frit_dtype_is_unsigned(dt) || frit_dtype_is_bool(dt) ? (int64_t)bits : ((int64_t)(bits << sh) >> sh);
      *f = (double)*i;
    }
    return;
  }
  int64_t j = a->n == 1 ? 0 : k;
  *f = a->fv[j];
  *i = a->iv[j];
  if (a->imv && a->imv[j] == 1e300) { /* a hex scalar: the bits of a float */
    uint64_t bits = (uint64_t)a->iv[j];
    if (dt == FRIT_F32) {
      uint32_t b32 = (uint32_t)bits;
      float x;
      memcpy(&x, &b32, 4);
      *f = x;
    } else if (dt == FRIT_F64) {
      memcpy(f, &bits, 8);
    } else if (dt == FRIT_F16 || dt == FRIT_BF16) {
      *f = half_to_double((uint16_t)bits, dt == FRIT_BF16);
    }
  }
}

int64_t shlo_dense_count(const shlo_attr *a, frit_dtype dt) {
  int size = frit_dtype_is_bool(dt) ? 1 : frit_dtype_bits(dt) / 8;
  if (a->hex) return (int64_t)(a->hexlen / (size_t)(size ? size : 1));
  return a->n;
}

/* The literal in C-order storage of its dtype (malloc'd, count elements). */
void *shlo_dense_storage(const shlo_attr *a, int64_t count) {
  frit_dtype dt = a->type.dt;
  int size = frit_dtype_is_bool(dt) ? 1 : frit_dtype_bits(dt) / 8;
  uint8_t *buf = malloc((size_t)(count ? count : 1) * (size_t)size);
  if (!buf) return NULL;
  for (int64_t k = 0; k < count; k++) {
    double f = 0;
    int64_t i = 0;
    dense_elem(a, dt, k, &f, &i);
    if (frit_dtype_is_float(dt)) i = (int64_t)f;
    if (!frit_dtype_is_float(dt) && !a->hex && a->fv && f != (double)i) f = (double)i;
    frit_scalar s;
    memset(&s, 0, sizeof s);
    if (frit_dtype_is_float(dt)) s.f = f;
    else if (frit_dtype_is_unsigned(dt)) s.u = (uint64_t)i;
    else s.i = frit_dtype_is_bool(dt) ? i != 0 : i;
    frit_scalar_store(buf + (size_t)k * (size_t)size, frit_dtype_kind(dt), frit_scalar_normalize(s, dt));
  }
  return buf;
}

static frit_status op_constant(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out) {
  (void)env, (void)in;
  if (op->weight1) {
    out[0] = b->weights[op->weight1 - 1];
    return FRIT_OK;
  }
  shlo_attr *v = shlo_attr_get(op, "value");
  if (!v) { /* pretty: the literal is the op's only attribute-like item */
    for (int i = 0; i < op->nattr && !v; i++)
      if (op->avals[i]->kind == SA_DENSE) v = op->avals[i];
  }
  if (!v || v->kind != SA_DENSE) return shlo_fail(b, op, "expected a dense literal");
  frit_dtype dt = v->type.dt;
  if (dt == FRIT_VOID || v->type.ndim < 0) return shlo_fail(b, op, "literal of type %s", v->type.text);
  double f = 0;
  int64_t i = 0;
  dense_elem(v, dt, 0, &f, &i);
  frit_tensor *t;
  if (frit_dtype_is_complex(dt)) {
    frit_dtype pt = frit_dtype_real_part(dt);
    double im = v->imv && v->imv[0] != 1e300 ? v->imv[0] : 0;
    t = frit_complex_t(b->ctx, frit_full(b->ctx, pt, v->type.ndim, v->type.dims, f),
                       frit_full(b->ctx, pt, v->type.ndim, v->type.dims, im));
  } else if (frit_dtype_is_float(dt)) {
    t = frit_full(b->ctx, dt, v->type.ndim, v->type.dims, f);
  } else {
    t = frit_full_i(b->ctx, dt, v->type.ndim, v->type.dims, i);
  }
  SHLO_CHECK(b, op, t);
  out[0] = t;
  return FRIT_OK;
}

/* ---------------------------------------------------------------- movement */
static frit_status op_iota(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out) {
  (void)env, (void)in;
  int64_t dims[FRIT_MAX_DIMS], ax = 0;
  const shlo_type *t = shlo_rtype(op, 0);
  if (shlo_static_dims(b, op, t, dims)) return frit_last_status(b->ctx);
  shlo_attr *a = shlo_attr_get(op, "dim");
  if (!a) a = shlo_attr_get(op, "iota_dimension");
  if (shlo_attr_ints(a, &ax, 1) != 1 || ax < 0 || ax >= t->ndim) return shlo_fail(b, op, "needs a dimension");
  int64_t shape[FRIT_MAX_DIMS];
  for (int d = 0; d < t->ndim; d++) shape[d] = d == ax ? dims[d] : 1;
  frit_tensor *r = frit_arange(b->ctx, 0, (double)dims[ax], 1, FRIT_I64);
  r = frit_broadcast_to(b->ctx, frit_reshape(b->ctx, r, t->ndim, shape), t->ndim, dims);
  out[0] = frit_astype(b->ctx, r, t->dt);
  SHLO_CHECK(b, op, out[0]);
  return FRIT_OK;
}

static frit_status op_broadcast_in_dim(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out) {
  (void)env;
  frit_ctx *ctx = b->ctx;
  int64_t dims[FRIT_MAX_DIMS], map[FRIT_MAX_DIMS];
  const shlo_type *t = shlo_rtype(op, 0);
  if (shlo_static_dims(b, op, t, dims)) return frit_last_status(ctx);
  shlo_attr *a = shlo_attr_get(op, "dims");
  if (!a) a = shlo_attr_get(op, "broadcast_dimensions");
  frit_tensor *x = in[0];
  int r = frit_tensor_ndim(x);
  if (shlo_attr_ints(a, map, FRIT_MAX_DIMS) != r) return shlo_fail(b, op, "needs %d broadcast dimensions", r);
  /* order the operand's axes as their places in the result, then insert the new axes */
  int perm[FRIT_MAX_DIMS];
  for (int i = 0; i < r; i++) perm[i] = i;
  for (int i = 0; i < r; i++)
    for (int j = i + 1; j < r; j++)
      if (map[perm[j]] < map[perm[i]]) {
        int tmp = perm[i];
        perm[i] = perm[j];
        perm[j] = tmp;
      }
  x = frit_permute(ctx, x, perm);
  SHLO_CHECK(b, op, x);
  frit_uop *shape[FRIT_MAX_DIMS];
  for (int d = 0; d < t->ndim; d++) shape[d] = frit_const_int(ctx, FRIT_I64, 1);
  for (int i = 0; i < r; i++) {
    if (map[perm[i]] < 0 || map[perm[i]] >= t->ndim) return shlo_fail(b, op, "broadcast dimension out of range");
    shape[map[perm[i]]] = frit_tensor_dim(x, i);
  }
  x = frit_reshape_sym(ctx, x, t->ndim, shape);
  out[0] = frit_broadcast_to(ctx, x, t->ndim, dims);
  SHLO_CHECK(b, op, out[0]);
  return FRIT_OK;
}

static frit_status op_reshape(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out) {
  (void)env;
  int64_t dims[FRIT_MAX_DIMS];
  const shlo_type *t = shlo_rtype(op, 0);
  if (shlo_static_dims(b, op, t, dims)) return frit_last_status(b->ctx);
  out[0] = frit_reshape(b->ctx, in[0], t->ndim, dims);
  SHLO_CHECK(b, op, out[0]);
  return FRIT_OK;
}

static frit_status op_transpose(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out) {
  (void)env;
  int64_t p[FRIT_MAX_DIMS];
  shlo_attr *a = shlo_attr_get(op, "dims");
  if (!a) a = shlo_attr_get(op, "permutation");
  int n = shlo_attr_ints(a, p, FRIT_MAX_DIMS);
  if (n != frit_tensor_ndim(in[0])) return shlo_fail(b, op, "needs a permutation of %d axes", frit_tensor_ndim(in[0]));
  int perm[FRIT_MAX_DIMS];
  for (int i = 0; i < n; i++) perm[i] = (int)p[i];
  out[0] = frit_permute(b->ctx, in[0], perm);
  SHLO_CHECK(b, op, out[0]);
  return FRIT_OK;
}

static frit_status op_slice(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out) {
  (void)env;
  int r = frit_tensor_ndim(in[0]);
  int64_t st[FRIT_MAX_DIMS], li[FRIT_MAX_DIMS], sp[FRIT_MAX_DIMS];
  if (op->slice) {
    if (op->nslice != r) return shlo_fail(b, op, "%d ranges for %d axes", op->nslice, r);
    for (int d = 0; d < r; d++) st[d] = op->slice[3 * d], li[d] = op->slice[3 * d + 1], sp[d] = op->slice[3 * d + 2];
  } else if (shlo_attr_ints(shlo_attr_get(op, "start_indices"), st, FRIT_MAX_DIMS) != r ||
             shlo_attr_ints(shlo_attr_get(op, "limit_indices"), li, FRIT_MAX_DIMS) != r ||
             shlo_attr_ints(shlo_attr_get(op, "strides"), sp, FRIT_MAX_DIMS) != r) {
    return shlo_fail(b, op, "needs start_indices, limit_indices and strides for %d axes", r);
  }
  for (int d = 0; d < r; d++) {
    int64_t n = frit_tensor_dim_static(in[0], d);
    if (st[d] < 0 || sp[d] < 1 || li[d] < st[d] || (n >= 0 && li[d] > n))
      return shlo_fail(b, op, "range %lld:%lld:%lld of axis %d (size %lld) is not valid", (long long)st[d],
                       (long long)li[d], (long long)sp[d], d, (long long)n);
  }
  out[0] = frit_slice(b->ctx, in[0], st, li, sp);
  SHLO_CHECK(b, op, out[0]);
  return FRIT_OK;
}

static frit_status op_concatenate(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out) {
  (void)env;
  int64_t ax;
  shlo_attr *a = shlo_attr_get(op, "dim");
  if (!a) a = shlo_attr_get(op, "dimension");
  if (shlo_attr_ints(a, &ax, 1) != 1) return shlo_fail(b, op, "needs a dimension");
  out[0] = frit_concat(b->ctx, in, op->nopnd, (int)ax);
  SHLO_CHECK(b, op, out[0]);
  return FRIT_OK;
}

static frit_status op_reverse(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out) {
  (void)env;
  int64_t d[FRIT_MAX_DIMS];
  shlo_attr *a = shlo_attr_get(op, "dims");
  if (!a) a = shlo_attr_get(op, "dimensions");
  int n = shlo_attr_ints(a, d, FRIT_MAX_DIMS);
  if (n < 0) return shlo_fail(b, op, "needs dimensions");
  int axes[FRIT_MAX_DIMS];
  for (int i = 0; i < n; i++) axes[i] = (int)d[i];
  out[0] = n ? frit_flip(b->ctx, in[0], axes, n) : in[0];
  SHLO_CHECK(b, op, out[0]);
  return FRIT_OK;
}

/* Interior padding: k zeros between neighbours along axis. */
static frit_tensor *dilate(frit_ctx *ctx, frit_tensor *x, int axis, int64_t k) {
  if (k == 0 || !x) return x;
  int r = frit_tensor_ndim(x);
  int64_t n = frit_tensor_dim_static(x, axis);
  if (n <= 0) return x;
  frit_tensor *u = frit_unsqueeze(ctx, x, axis + 1);
  int64_t before[FRIT_MAX_DIMS + 1] = {0}, after[FRIT_MAX_DIMS + 1] = {0};
  after[axis + 1] = k;
  u = frit_pad(ctx, u, before, after, FRIT_PAD_CONSTANT, 0);
  int64_t shape[FRIT_MAX_DIMS];
  for (int d = 0; d < r; d++) shape[d] = frit_tensor_dim_static(x, d);
  shape[axis] = n * (k + 1);
  for (int d = 0; d < r; d++)
    if (shape[d] < 0) shape[d] = -1;
  u = frit_reshape(ctx, u, r, shape);
  int64_t st[FRIT_MAX_DIMS], sp[FRIT_MAX_DIMS], li[FRIT_MAX_DIMS];
  for (int d = 0; d < r; d++) st[d] = 0, sp[d] = 1, li[d] = FRIT_SLICE_DEFAULT;
  li[axis] = (n - 1) * (k + 1) + 1;
  return frit_slice(ctx, u, st, li, sp);
}

/* Edge padding lo/hi (negative: cropping) with the constant v. */
static frit_tensor *pad_edges(frit_ctx *ctx, frit_tensor *x, const int64_t *lo, const int64_t *hi, double v) {
  int r = frit_tensor_ndim(x);
  int64_t before[FRIT_MAX_DIMS], after[FRIT_MAX_DIMS], st[FRIT_MAX_DIMS], li[FRIT_MAX_DIMS], sp[FRIT_MAX_DIMS];
  int crop = 0;
  for (int d = 0; d < r; d++) {
    before[d] = lo[d] > 0 ? lo[d] : 0;
    after[d] = hi[d] > 0 ? hi[d] : 0;
    st[d] = lo[d] < 0 ? -lo[d] : 0;
    li[d] = hi[d] < 0 ? hi[d] : FRIT_SLICE_DEFAULT;
    sp[d] = 1;
    crop |= lo[d] < 0 || hi[d] < 0;
  }
  if (crop) {
    for (int d = 0; d < r; d++)
      if (hi[d] < 0) li[d] = frit_tensor_dim_static(x, d) + hi[d];
    x = frit_slice(ctx, x, st, li, sp);
  }
  return frit_pad(ctx, x, before, after, FRIT_PAD_CONSTANT, v);
}

frit_tensor *shlo_pad_value(frit_ctx *ctx, frit_tensor *x, frit_tensor *value, const int64_t *lo,
                            const int64_t *hi, const int64_t *interior) {
  int r = frit_tensor_ndim(x), interior_any = 0;
  for (int d = 0; d < r && interior; d++) interior_any |= interior[d] != 0;
  frit_uop *vu = value ? frit_tensor_uop(value) : NULL;
  frit_dtype dt = frit_tensor_dtype(x);
  if (!interior_any && vu && frit_uop_op(vu) == FRIT_OP_CONST && !frit_dtype_is_complex(dt)) {
    /* a constant pad value (zeros, -inf): padded directly, no mask */
    const frit_arg *arg = frit_uop_arg(vu);
    double v = frit_dtype_is_float(dt) ? arg->value.f : frit_dtype_is_unsigned(dt) ? (double)arg->value.u : (double)arg->value.i;
    if (frit_dtype_is_float(dt) || (double)(int64_t)v == v) return pad_edges(ctx, x, lo, hi, v);
  }
  frit_uop *dims[FRIT_MAX_DIMS];
  for (int d = 0; d < r; d++) dims[d] = frit_tensor_dim(x, d);
  frit_scalar one = {.i = 1};
  frit_tensor *mask = ti_full(ctx, FRIT_BOOL, one, r, dims);
  for (int d = 0; d < r; d++) {
    x = dilate(ctx, x, d, interior ? interior[d] : 0);
    mask = dilate(ctx, mask, d, interior ? interior[d] : 0);
  }
  x = pad_edges(ctx, x, lo, hi, 0);
  mask = pad_edges(ctx, mask, lo, hi, 0);
  return frit_where(ctx, mask, x, value);
}

static frit_status op_pad(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out) {
  (void)env;
  int r = frit_tensor_ndim(in[0]);
  int64_t lo[FRIT_MAX_DIMS], hi[FRIT_MAX_DIMS], it[FRIT_MAX_DIMS];
  shlo_attr *l = shlo_attr_get(op, "low"), *h = shlo_attr_get(op, "high"), *i = shlo_attr_get(op, "interior");
  if (!l) l = shlo_attr_get(op, "edge_padding_low");
  if (!h) h = shlo_attr_get(op, "edge_padding_high");
  if (!i) i = shlo_attr_get(op, "interior_padding");
  if (shlo_attr_ints(l, lo, FRIT_MAX_DIMS) != r || shlo_attr_ints(h, hi, FRIT_MAX_DIMS) != r ||
      shlo_attr_ints(i, it, FRIT_MAX_DIMS) != r)
    return shlo_fail(b, op, "needs low, high and interior padding for %d axes", r);
  for (int d = 0; d < r; d++)
    if (it[d] < 0) return shlo_fail(b, op, "negative interior padding");
  out[0] = shlo_pad_value(b->ctx, in[0], in[1], lo, hi, it);
  SHLO_CHECK(b, op, out[0]);
  return FRIT_OK;
}

/* ---------------------------------------------------------------- functions and control */
static frit_status run_func(B *b, const shlo_func *f, frit_tensor *const *args, frit_tensor **outs);

static const shlo_func *find_func(const B *b, const char *name) {
  for (int i = 0; i < b->impl->m.nfuncs; i++)
    if (!strcmp(b->impl->m.funcs[i]->name, name)) return b->impl->m.funcs[i];
  return NULL;
}

static frit_status op_call(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out) {
  (void)env;
  shlo_attr *ca = shlo_attr_get(op, "callee");
  const char *callee = op->callee ? op->callee : ca && ca->kind == SA_SYMBOL ? ca->s : NULL;
  const shlo_func *f = callee ? find_func(b, callee) : NULL;
  if (!f) return shlo_fail(b, op, "calls @%s, which the module does not define", callee ? callee : "?");
  if (f->nargs != op->nopnd || f->nres != op->nres)
    return shlo_fail(b, op, "@%s takes %d values and gives %d; the call passes %d and takes %d", f->name, f->nargs,
                     f->nres, op->nopnd, op->nres);
  if (b->depth > 64) return shlo_fail(b, op, "calls nest deeper than 64 (recursion?)");
  b->depth++;
  frit_status st = run_func(b, f, in, out);
  b->depth--;
  return st;
}

static frit_status op_custom_call(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out) {
  (void)env;
  shlo_attr *t = shlo_attr_get(op, "call_target_name");
  const char *target = op->callee ? op->callee : t && t->kind == SA_STRING ? t->s : "?";
  /* annotations that change nothing on one device */
  static const char *const identity[] = {"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape",
                                         "annotate_device_placement", "MoveToHost", "MoveToDevice"};
  for (size_t i = 0; i < sizeof identity / sizeof identity[0]; i++) {
    if (!strcmp(target, identity[i]) && op->nopnd == op->nres) {
      for (int k = 0; k < op->nres; k++) out[k] = in[k];
      return FRIT_OK;
    }
  }
  return shlo_fail(b, op, "custom_call @%s is not supported (only sharding and placement annotations are)", target);
}

static frit_status op_while(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out) {
  frit_ctx *ctx = b->ctx;
  if (op->nregion != 2) return shlo_fail(b, op, "needs a cond and a body region");
  int n = op->nopnd;
  frit_tensor *carry[64], *next[64], *cond[1], *idx;
  if (n > 64) return shlo_fail(b, op, "more than 64 loop values");
  /* The loop runs on the host until cond is false: each iteration computes cond and the body on
   * the carried values and keeps the body's values only where cond held. */
  frit_tensor *zero = frit_scalar_i(ctx, FRIT_I64, 0), *one = frit_scalar_i(ctx, FRIT_I64, 1);
  frit_tensor *end = frit_scalar_i(ctx, FRIT_I64, INT64_MAX / 2);
  if (frit_host_loop_begin(ctx, zero, end, one, n, in, &idx, carry)) return shlo_wrap(b, op);
  int nc = 0, nb = 0;
  frit_status st = shlo_run_region(b, op->regions[0], env, carry, n, cond, &nc, 1);
  if (!st && nc != 1) st = shlo_fail(b, op, "cond gives %d values, not 1", nc);
  if (!st) st = shlo_run_region(b, op->regions[1], env, carry, n, next, &nb, 64);
  if (!st && nb != n) st = shlo_fail(b, op, "body gives %d values for %d loop values", nb, n);
  frit_tensor *go = st ? NULL : frit_reshape(ctx, cond[0], 0, NULL);
  for (int k = 0; !st && k < n; k++) {
    next[k] = frit_where(ctx, go, next[k], carry[k]);
    if (!next[k]) st = shlo_wrap(b, op);
  }
  frit_tensor *stop = st ? NULL : frit_unary_t(ctx, FRIT_UF_LOGICAL_NOT, go);
  if (!st && !stop) st = shlo_wrap(b, op);
  if (st) { /* close the loop so that the ctx stays usable */
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", frit_error(ctx));
    frit_host_loop_end(ctx, in, NULL, out);
    frit_set_error(ctx, st, "%s", msg);
    return st;
  }
  if (frit_host_loop_end(ctx, next, stop, out)) return shlo_wrap(b, op);
  return FRIT_OK;
}

/* case and if: every branch is built, and the index selects among their values. */
static frit_status op_case(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out) {
  frit_ctx *ctx = b->ctx;
  int nbr = op->nregion, isif = !strcmp(short_name(op->name), "if");
  if (nbr < 1 || (isif && nbr != 2)) return shlo_fail(b, op, "needs %s branch regions", isif ? "2" : "its");
  frit_tensor *res[64];
  for (int k = nbr - 1; k >= 0; k--) {
    int nr = 0;
    frit_status st = shlo_run_region(b, op->regions[k], env, NULL, 0, res, &nr, 64);
    if (st) return st;
    if (nr != op->nres) return shlo_fail(b, op, "branch %d gives %d values, the op %d", k, nr, op->nres);
    for (int j = 0; j < nr; j++) {
      if (k == nbr - 1) {
        out[j] = res[j];
        continue;
      }
      frit_tensor *pick = isif ? in[0]
                               : frit_binary_t(ctx, FRIT_BF_EQ, in[0], frit_scalar_i(ctx, frit_tensor_dtype(in[0]), k));
      out[j] = frit_where(ctx, pick, res[j], out[j]);
      SHLO_CHECK(b, op, out[j]);
    }
  }
  return FRIT_OK;
}

/* ---------------------------------------------------------------- the op table */
static const struct {
  const char *name;
  shlo_op_fn fn;
  int min_operands, max_operands; /* -1: any number */
} op_table[] = {
    {"add", op_binary, 2, 2}, {"subtract", op_binary, 2, 2}, {"multiply", op_binary, 2, 2}, {"divide", op_binary, 2, 2},
    {"remainder", op_binary, 2, 2}, {"maximum", op_binary, 2, 2}, {"minimum", op_binary, 2, 2}, {"power", op_binary, 2, 2},
    {"atan2", op_binary, 2, 2}, {"and", op_binary, 2, 2}, {"or", op_binary, 2, 2}, {"xor", op_binary, 2, 2},
    {"shift_left", op_binary, 2, 2}, {"shift_right_logical", op_binary, 2, 2}, {"shift_right_arithmetic", op_binary, 2, 2},
    {"complex", op_binary, 2, 2},
    {"abs", op_unary, 1, 1}, {"negate", op_unary, 1, 1}, {"sqrt", op_unary, 1, 1}, {"rsqrt", op_unary, 1, 1}, {"exponential", op_unary, 1, 1},
    {"exponential_minus_one", op_unary, 1, 1}, {"log", op_unary, 1, 1}, {"log_plus_one", op_unary, 1, 1}, {"logistic", op_unary, 1, 1},
    {"tanh", op_unary, 1, 1}, {"sine", op_unary, 1, 1}, {"cosine", op_unary, 1, 1}, {"tan", op_unary, 1, 1}, {"floor", op_unary, 1, 1},
    {"ceil", op_unary, 1, 1}, {"round_nearest_even", op_unary, 1, 1}, {"round_nearest_afz", op_unary, 1, 1}, {"sign", op_unary, 1, 1},
    {"cbrt", op_unary, 1, 1}, {"not", op_unary, 1, 1}, {"is_finite", op_unary, 1, 1}, {"real", op_unary, 1, 1}, {"imag", op_unary, 1, 1},
    {"erf", op_unary, 1, 1}, {"asin", op_unary, 1, 1}, {"acos", op_unary, 1, 1}, {"atan", op_unary, 1, 1}, {"sinh", op_unary, 1, 1},
    {"cosh", op_unary, 1, 1}, {"asinh", op_unary, 1, 1}, {"acosh", op_unary, 1, 1}, {"atanh", op_unary, 1, 1},
    {"optimization_barrier", op_unary, 0, -1},
    {"compare", op_compare, 2, 2}, {"select", op_select, 3, 3}, {"clamp", op_clamp, 3, 3}, {"convert", op_convert, 1, 1},
    {"bitcast_convert", op_bitcast_convert, 1, 1}, {"constant", op_constant, 0, 0}, {"iota", op_iota, 0, 0},
    {"broadcast_in_dim", op_broadcast_in_dim, 1, 1}, {"reshape", op_reshape, 1, 1}, {"transpose", op_transpose, 1, 1},
    {"slice", op_slice, 1, 1}, {"concatenate", op_concatenate, 1, -1}, {"reverse", op_reverse, 1, 1}, {"pad", op_pad, 2, 2},
    {"dynamic_slice", shlo_dynamic_slice, 1, -1}, {"dynamic_update_slice", shlo_dynamic_update_slice, 2, -1},
    {"dot_general", shlo_dot_general, 2, 2}, {"convolution", shlo_convolution, 2, 2}, {"reduce", shlo_reduce, 2, -1},
    {"reduce_window", shlo_reduce_window, 2, -1}, {"gather", shlo_gather, 2, 2}, {"scatter", shlo_scatter, 3, -1},
    {"sort", shlo_sort, 1, -1}, {"top_k", shlo_top_k, 1, 1}, {"select_and_scatter", shlo_select_and_scatter, 3, 3}, {"while", op_while, 0, -1}, {"case", op_case, 1, 1}, {"if", op_case, 1, 1},
    {"call", op_call, 0, -1}, {"custom_call", op_custom_call, 0, -1},
};

static int find_op_index(const char *name) {
  const char *dot = strchr(name, '.');
  if (!dot) return -1;
  size_t dl = (size_t)(dot - name);
  int known_dialect = (dl == 9 && !strncmp(name, "stablehlo", 9)) || (dl == 4 && !strncmp(name, "chlo", 4)) ||
                      (dl == 4 && !strncmp(name, "func", 4)) || (dl == 4 && !strncmp(name, "mhlo", 4));
  if (!known_dialect) return -1;
  for (size_t i = 0; i < sizeof op_table / sizeof op_table[0]; i++)
    if (!strcmp(op_table[i].name, dot + 1)) return (int)i;
  return -1;
}

int shlo_op_known(const char *name) { return find_op_index(name) >= 0; }

frit_status shlo_run_region(B *b, const shlo_region *r, frit_tensor **env, frit_tensor *const *args, int nargs,
                            frit_tensor **results, int *nres, int max) {
  if (r->nargs != nargs)
    return r->nops ? shlo_fail(b, r->ops[0], "its region takes %d arguments, %d given", r->nargs, nargs)
                   : frit_set_error(b->ctx, FRIT_ERR_INVALID, "stablehlo: a region takes %d arguments, %d given", r->nargs, nargs);
  for (int i = 0; i < r->nargs; i++) {
    FRIT_ASSERT(r->args[i] >= 0 && r->args[i] < b->nenv);
    env[r->args[i]] = args[i];
  }
  *nres = 0;
  for (int k = 0; k < r->nops; k++) {
    const shlo_op *op = r->ops[k];
    frit_tensor *in[256];
    if (op->nopnd > 256) return shlo_fail(b, op, "more than 256 operands");
    for (int i = 0; i < op->nopnd; i++) {
      FRIT_ASSERT(op->opnd[i] >= 0 && op->opnd[i] < b->nenv);
      in[i] = env[op->opnd[i]];
      if (!in[i]) return shlo_fail(b, op, "operand %d has no value (defined in another region?)", i);
    }
    const char *sn = short_name(op->name);
    if (!strcmp(sn, "return")) {
      if (op->nopnd > max) return shlo_fail(b, op, "returns %d values, %d expected", op->nopnd, max);
      for (int i = 0; i < op->nopnd; i++) results[i] = in[i];
      *nres = op->nopnd;
      return FRIT_OK;
    }
    int oi = find_op_index(op->name);
    if (oi < 0) return shlo_fail(b, op, "op not supported by frit's StableHLO importer");
    if (op->nopnd < op_table[oi].min_operands || (op_table[oi].max_operands >= 0 && op->nopnd > op_table[oi].max_operands))
      return shlo_fail(b, op, "takes %d%s operands, %d given", op_table[oi].min_operands,
                       op_table[oi].max_operands == op_table[oi].min_operands ? "" : " or more", op->nopnd);
    shlo_op_fn fn = op_table[oi].fn;
    frit_tensor *out[256];
    if (op->nres > 256) return shlo_fail(b, op, "more than 256 results");
    for (int i = 0; i < op->nres; i++) out[i] = NULL;
    frit_status st = fn(b, op, env, in, out);
    if (st) return st;
    for (int i = 0; i < op->nres; i++) {
      if (!out[i]) return shlo_fail(b, op, "result %d was not built", i);
      const shlo_type *t = shlo_rtype(op, i);
      if (t && t->dt != FRIT_VOID && frit_tensor_dtype(out[i]) != t->dt) {
        char have[32];
        return shlo_fail(b, op, "built %s for result %d of type %s (an importer bug)",
                         frit_dtype_name(frit_tensor_dtype(out[i]), have, sizeof have), i, t->text);
      }
      FRIT_ASSERT(op->res0 + i >= 0 && op->res0 + i < b->nenv);
      env[op->res0 + i] = out[i];
    }
  }
  return FRIT_OK;
}

static frit_status run_func(B *b, const shlo_func *f, frit_tensor *const *args, frit_tensor **outs) {
  frit_tensor **env = calloc((size_t)(f->nvalues ? f->nvalues : 1), sizeof *env);
  if (!env) return frit_set_error(b->ctx, FRIT_ERR_NOMEM, "stablehlo: out of memory");
  int n = 0, saved = b->nenv;
  b->nenv = f->nvalues;
  frit_status st = shlo_run_region(b, f->body, env, args, f->nargs, outs, &n, f->nres);
  b->nenv = saved;
  if (!st && n != f->nres)
    st = frit_set_error(b->ctx, FRIT_ERR_INVALID, "stablehlo: @%s returns %d values, its type says %d", f->name, n,
                        f->nres);
  free(env);
  return st;
}

frit_status shlo_call_main(frit_ctx *ctx, shlo_impl *impl, frit_tensor *const *args, frit_tensor **outs) {
  B b = {ctx, impl, args + impl->main->nargs, 0, 0};
  return run_func(&b, impl->main, args, outs);
}
