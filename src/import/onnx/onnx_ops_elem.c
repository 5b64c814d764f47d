/* ONNX elementwise ops: arithmetic, comparisons, logic, math functions, activations, Cast, Where
 * and Clip. ONNX gives such ops operands of one dtype; results keep it (Pow: the base's). */
#include <math.h>
#include <string.h>

#include "import/onnx/onnx_internal.h"

static frit_tensor *sc(ox_cx *cx, frit_tensor *like, double v) {
  return frit_scalar_f(cx->ctx, frit_tensor_dtype(like), v);
}
static frit_tensor *bin(ox_cx *cx, frit_bfunc f, frit_tensor *a, frit_tensor *b) {
  return frit_binary_t(cx->ctx, f, a, b);
}
static frit_tensor *un(ox_cx *cx, frit_ufunc f, frit_tensor *a) { return frit_unary_t(cx->ctx, f, a); }
static frit_tensor *same_dtype(ox_cx *cx, frit_tensor *r, frit_tensor *like) {
  return r && like && frit_tensor_dtype(r) != frit_tensor_dtype(like) ? frit_astype(cx->ctx, r, frit_tensor_dtype(like))
                                                                       : r;
}

/* ---------------------------------------------------------------- folding small integer values */

/* Host folding of integer ops on build-time constants (shape arithmetic); numpy broadcasting. */
static bool fold_binary(ox_cx *cx, const ox_node *n, const char *op) {
  const ox_const *a = ox_in_const_opt(cx, n, 0), *b = ox_in_const_opt(cx, n, 1);
  if (!a || !b || a->dt != b->dt || a->n > 4096 || b->n > 4096) return false;
  bool isf = a->dt == FRIT_F32 || a->dt == FRIT_F64;
  if (!isf && a->dt != FRIT_I64 && a->dt != FRIT_I32) return false;
  int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
  int64_t dims[FRIT_MAX_DIMS];
  for (int d = 0; d < nd; d++) {
    int64_t da = d - (nd - a->ndim) >= 0 ? a->dims[d - (nd - a->ndim)] : 1;
    int64_t db = d - (nd - b->ndim) >= 0 ? b->dims[d - (nd - b->ndim)] : 1;
    if (da != db && da != 1 && db != 1) return false;
    dims[d] = da == 1 ? db : da;
  }
  bool cmp = !strcmp(op, "Equal") || !strcmp(op, "Less") || !strcmp(op, "Greater");
  if (!cmp && strcmp(op, "Add") && strcmp(op, "Sub") && strcmp(op, "Mul") && strcmp(op, "Div")) return false;
  ox_const *r = ox_const_new(cx, cmp ? FRIT_BOOL : a->dt, nd, dims);
  int64_t *av = isf ? NULL : ox_const_ints(cx, a), *bv = isf ? NULL : ox_const_ints(cx, b);
  double *af = isf ? ox_const_doubles(cx, a) : NULL, *bf = isf ? ox_const_doubles(cx, b) : NULL;
  if (!r || (isf ? !af || !bf : !av || !bv)) return false;
  for (int64_t i = 0; i < r->n; i++) {
    int64_t ia = 0, ib = 0, rem = i, sa = 1, sb = 1;
    for (int d = nd - 1; d >= 0; d--) {
      int64_t idx = rem % dims[d];
      rem /= dims[d];
      int ad = d - (nd - a->ndim), bd = d - (nd - b->ndim);
      if (ad >= 0) ia += (a->dims[ad] == 1 ? 0 : idx) * sa, sa *= a->dims[ad];
      if (bd >= 0) ib += (b->dims[bd] == 1 ? 0 : idx) * sb, sb *= b->dims[bd];
    }
    int64_t v = 0;
    double fv = 0;
    if (isf) {
      double x = af[ia], y = bf[ib];
      if (!strcmp(op, "Add")) fv = x + y;
      else if (!strcmp(op, "Sub")) fv = x - y;
      else if (!strcmp(op, "Mul")) fv = x * y;
      else if (!strcmp(op, "Div")) fv = x / y;
      else v = !strcmp(op, "Equal") ? x == y : !strcmp(op, "Less") ? x < y : x > y;
    } else {
      int64_t x = av[ia], y = bv[ib];
      if (!strcmp(op, "Add")) v = (int64_t)((uint64_t)x + (uint64_t)y);
      else if (!strcmp(op, "Sub")) v = (int64_t)((uint64_t)x - (uint64_t)y);
      else if (!strcmp(op, "Mul")) v = (int64_t)((uint64_t)x * (uint64_t)y);
      else if (!strcmp(op, "Div")) v = y == 0 || (x == INT64_MIN && y == -1) ? 0 : x / y;
      else v = !strcmp(op, "Equal") ? x == y : !strcmp(op, "Less") ? x < y : x > y;
    }
    if (cmp) ((uint8_t *)r->data)[i] = (uint8_t)v;
    else if (r->dt == FRIT_I64) ((int64_t *)r->data)[i] = v;
    else if (r->dt == FRIT_I32) ((int32_t *)r->data)[i] = (int32_t)v;
    else if (r->dt == FRIT_F64) ((double *)r->data)[i] = fv;
    else ((float *)r->data)[i] = (float)fv;
  }
  return ox_set_out_const(cx, n, 0, r) == FRIT_OK;
}

/* ---------------------------------------------------------------- converters */

frit_status ox_binary(ox_cx *cx, const ox_node *n) {
  const char *op = n->op_type;
  if (fold_binary(cx, n, op)) return FRIT_OK;
  frit_tensor *a = ox_in(cx, n, 0), *b = ox_in(cx, n, 1), *r = NULL;
  if (!a || !b) return frit_last_status(cx->ctx);
  bool f = frit_dtype_is_float(frit_tensor_dtype(a)) || frit_dtype_is_complex(frit_tensor_dtype(a));
  if (!strcmp(op, "Add")) r = bin(cx, FRIT_BF_ADD, a, b);
  else if (!strcmp(op, "Sub")) r = bin(cx, FRIT_BF_SUB, a, b);
  else if (!strcmp(op, "Mul")) r = bin(cx, FRIT_BF_MUL, a, b);
  else if (!strcmp(op, "Div")) r = same_dtype(cx, bin(cx, FRIT_BF_TRUEDIV, a, b), a); /* ints: truncated */
  else if (!strcmp(op, "Pow")) r = same_dtype(cx, bin(cx, FRIT_BF_POW, f ? a : frit_astype(cx->ctx, a, FRIT_F64),
                                                        frit_astype(cx->ctx, b, f ? frit_tensor_dtype(a) : FRIT_F64)), a);
  else if (!strcmp(op, "Mod")) r = bin(cx, ox_attr_i(n, "fmod", 0) || f ? FRIT_BF_FMOD : FRIT_BF_REMAINDER, a, b);
  else if (!strcmp(op, "Equal")) r = bin(cx, FRIT_BF_EQ, a, b);
  else if (!strcmp(op, "Less")) r = bin(cx, FRIT_BF_LT, a, b);
  else if (!strcmp(op, "LessOrEqual")) r = bin(cx, FRIT_BF_LE, a, b);
  else if (!strcmp(op, "Greater")) r = bin(cx, FRIT_BF_GT, a, b);
  else if (!strcmp(op, "GreaterOrEqual")) r = bin(cx, FRIT_BF_GE, a, b);
  else if (!strcmp(op, "And")) r = bin(cx, FRIT_BF_LOGICAL_AND, a, b);
  else if (!strcmp(op, "Or")) r = bin(cx, FRIT_BF_LOGICAL_OR, a, b);
  else if (!strcmp(op, "Xor")) r = bin(cx, FRIT_BF_LOGICAL_XOR, a, b);
  else if (!strcmp(op, "BitwiseAnd")) r = bin(cx, FRIT_BF_BITWISE_AND, a, b);
  else if (!strcmp(op, "BitwiseOr")) r = bin(cx, FRIT_BF_BITWISE_OR, a, b);
  else if (!strcmp(op, "BitwiseXor")) r = bin(cx, FRIT_BF_BITWISE_XOR, a, b);
  else if (!strcmp(op, "BitShift")) {
    const char *dir = ox_attr_s(cx, n, "direction", "");
    if (strcmp(dir, "LEFT") && strcmp(dir, "RIGHT")) return ox_fail(cx, n, "direction '%s' (LEFT or RIGHT)", dir);
    r = same_dtype(cx, bin(cx, !strcmp(dir, "LEFT") ? FRIT_BF_LSHIFT : FRIT_BF_RSHIFT, a, b), a);
  }
  return ox_set_out(cx, n, 0, r);
}

frit_status ox_variadic(ox_cx *cx, const ox_node *n) {
  const char *op = n->op_type;
  frit_tensor *r = ox_in(cx, n, 0);
  int cnt = 1;
  for (int k = 1; r && (size_t)k < n->n_input; k++) {
    if (!ox_has_in(n, k)) continue;
    frit_tensor *x = ox_in(cx, n, k);
    if (!x) return frit_last_status(cx->ctx);
    cnt++;
    r = bin(cx, !strcmp(op, "Max") ? FRIT_BF_MAXIMUM : !strcmp(op, "Min") ? FRIT_BF_MINIMUM : FRIT_BF_ADD, r, x);
  }
  if (r && !strcmp(op, "Mean")) r = bin(cx, FRIT_BF_TRUEDIV, r, sc(cx, r, cnt));
  if (!r) return frit_last_status(cx->ctx) ? ox_fail_frit(cx, n) : ox_fail(cx, n, "no inputs");
  return ox_set_out(cx, n, 0, r);
}

static const struct { const char *name; frit_ufunc f; bool keep; } unary_ops[] = {
    {"Abs", FRIT_UF_ABS, true}, {"Neg", FRIT_UF_NEG, true}, {"Sqrt", FRIT_UF_SQRT, true},
    {"Exp", FRIT_UF_EXP, true}, {"Log", FRIT_UF_LOG, true}, {"Sin", FRIT_UF_SIN, true},
    {"Cos", FRIT_UF_COS, true}, {"Tan", FRIT_UF_TAN, true}, {"Asin", FRIT_UF_ASIN, true},
    {"Acos", FRIT_UF_ACOS, true}, {"Atan", FRIT_UF_ATAN, true}, {"Sinh", FRIT_UF_SINH, true},
    {"Cosh", FRIT_UF_COSH, true}, {"Tanh", FRIT_UF_TANH, true}, {"Asinh", FRIT_UF_ASINH, true},
    {"Acosh", FRIT_UF_ACOSH, true}, {"Atanh", FRIT_UF_ATANH, true}, {"Sigmoid", FRIT_UF_SIGMOID, true},
    {"Relu", FRIT_UF_RELU, true}, {"Erf", FRIT_UF_ERF, true}, {"Floor", FRIT_UF_FLOOR, true},
    {"Ceil", FRIT_UF_CEIL, true}, {"Round", FRIT_UF_RINT, true}, {"Sign", FRIT_UF_SIGN, true},
    {"Reciprocal", FRIT_UF_RECIPROCAL, true}, {"Not", FRIT_UF_LOGICAL_NOT, false},
    {"BitwiseNot", FRIT_UF_BITWISE_NOT, true}, {"IsNaN", FRIT_UF_ISNAN, false},
};

frit_status ox_unary(ox_cx *cx, const ox_node *n) {
  const ox_const *c = ox_in_const_opt(cx, n, 0);
  if (c && (c->dt == FRIT_I64 || c->dt == FRIT_I32) && c->n <= 4096 &&
      (!strcmp(n->op_type, "Neg") || !strcmp(n->op_type, "Abs"))) {
    /* shape arithmetic (a negative axis count) stays folded */
    ox_const *r = ox_const_new(cx, c->dt, c->ndim, c->dims);
    int64_t *v = ox_const_ints(cx, c);
    if (!r || !v) return ox_fail_frit(cx, n);
    for (int64_t i = 0; i < c->n; i++) {
      int64_t y = !strcmp(n->op_type, "Neg") ? (int64_t)(0 - (uint64_t)v[i]) : v[i] < 0 ? (int64_t)(0 - (uint64_t)v[i]) : v[i];
      if (c->dt == FRIT_I64) ((int64_t *)r->data)[i] = y;
      else ((int32_t *)r->data)[i] = (int32_t)y;
    }
    return ox_set_out_const(cx, n, 0, r);
  }
  frit_tensor *x = ox_in(cx, n, 0), *r = NULL;
  if (!x) return frit_last_status(cx->ctx);
  const char *op = n->op_type;
  if (!strcmp(op, "Softsign")) {
    r = bin(cx, FRIT_BF_TRUEDIV, x, bin(cx, FRIT_BF_ADD, sc(cx, x, 1), un(cx, FRIT_UF_ABS, x)));
  } else if (!strcmp(op, "Softplus")) {
    /* log(1 + exp(x)) without overflow: max(x, 0) + log1p(exp(-|x|)) */
    r = bin(cx, FRIT_BF_ADD, bin(cx, FRIT_BF_MAXIMUM, x, sc(cx, x, 0)),
            un(cx, FRIT_UF_LOG1P, un(cx, FRIT_UF_EXP, un(cx, FRIT_UF_NEG, un(cx, FRIT_UF_ABS, x)))));
  } else {
    for (size_t i = 0; i < sizeof unary_ops / sizeof *unary_ops; i++)
      if (!strcmp(unary_ops[i].name, op)) {
        r = un(cx, unary_ops[i].f, x);
        if (unary_ops[i].keep) r = same_dtype(cx, r, x);
      }
  }
  return ox_set_out(cx, n, 0, r);
}

frit_status ox_isinf(ox_cx *cx, const ox_node *n) {
  frit_tensor *x = ox_in(cx, n, 0);
  if (!x) return frit_last_status(cx->ctx);
  bool neg = ox_attr_i(n, "detect_negative", 1), pos = ox_attr_i(n, "detect_positive", 1);
  frit_tensor *r = un(cx, FRIT_UF_ISINF, x);
  if (!neg) r = bin(cx, FRIT_BF_LOGICAL_AND, r, bin(cx, FRIT_BF_GT, x, sc(cx, x, 0)));
  if (!pos) r = bin(cx, FRIT_BF_LOGICAL_AND, r, bin(cx, FRIT_BF_LT, x, sc(cx, x, 0)));
  return ox_set_out(cx, n, 0, r);
}

frit_status ox_identity(ox_cx *cx, const ox_node *n) {
  /* Dropout at inference is the identity; its optional mask output is all true */
  const ox_const *c = ox_in_const_opt(cx, n, 0);
  if (c && !strcmp(n->op_type, "Identity")) return ox_set_out_const(cx, n, 0, (ox_const *)c);
  frit_tensor *x = ox_in(cx, n, 0);
  if (!x) return frit_last_status(cx->ctx);
  if (!strcmp(n->op_type, "Dropout") && (ox_attr_i(n, "is_test", 1) == 0 || ox_has_in(n, 2))) {
    const ox_const *tm = ox_in_const_opt(cx, n, 2);
    int64_t *tv = tm && tm->n == 1 ? ox_const_ints(cx, tm) : NULL;
    const ox_const *rc = ox_in_const_opt(cx, n, 1);
    double *rv = rc && rc->n == 1 ? ox_const_doubles(cx, rc) : NULL;
    /* training with ratio 0 drops nothing */
    if ((!tv || tv[0]) && !(rv && rv[0] == 0))
      return ox_fail(cx, n, "training mode (random dropout) is not supported");
  }
  if (!strcmp(n->op_type, "Dropout") && n->n_output > 1 && n->output[1][0]) {
    int nd = frit_tensor_ndim(x);
    int64_t dims[FRIT_MAX_DIMS];
    for (int d = 0; d < nd; d++) dims[d] = frit_tensor_dim_static(x, d);
    frit_status st = ox_set_out(cx, n, 1, frit_full_i(cx->ctx, FRIT_BOOL, nd, dims, 1));
    if (st) return st;
  }
  return ox_set_out(cx, n, 0, x);
}

frit_status ox_cast(ox_cx *cx, const ox_node *n) {
  frit_dtype to;
  if (!strcmp(n->op_type, "CastLike")) {
    frit_tensor *like = ox_in(cx, n, 1);
    if (!like) return frit_last_status(cx->ctx);
    to = frit_tensor_dtype(like);
  } else {
    int64_t t = ox_attr_i(n, "to", 0);
    to = ox_dtype((int32_t)t);
    if (to == FRIT_VOID) return ox_fail(cx, n, "unsupported dtype %s", ox_dtype_name((int32_t)t));
  }
  const ox_const *c = ox_in_const_opt(cx, n, 0);
  bool num_from = c && (frit_dtype_is_int(c->dt) || c->dt == FRIT_BOOL || c->dt == FRIT_F32 || c->dt == FRIT_F64);
  bool num_to = to == FRIT_I64 || to == FRIT_I32 || to == FRIT_F32 || to == FRIT_F64;
  if (num_from && num_to && c->n <= 4096) {
    ox_const *r = ox_const_new(cx, to, c->ndim, c->dims);
    bool isf = frit_dtype_is_float(c->dt);
    int64_t *v = isf ? NULL : ox_const_ints(cx, c);
    double *fv = isf ? ox_const_doubles(cx, c) : NULL;
    if (!r || (!v && !fv)) return ox_fail_frit(cx, n);
    for (int64_t i = 0; i < c->n; i++) {
      double d = isf ? fv[i] : (double)v[i];
      int64_t iv = isf ? (int64_t)fv[i] : v[i];
      if (to == FRIT_I64) ((int64_t *)r->data)[i] = iv;
      else if (to == FRIT_I32) ((int32_t *)r->data)[i] = (int32_t)iv;
      else if (to == FRIT_F32) ((float *)r->data)[i] = (float)d;
      else ((double *)r->data)[i] = d;
    }
    return ox_set_out_const(cx, n, 0, r);
  }
  frit_tensor *x = ox_in(cx, n, 0);
  if (!x) return frit_last_status(cx->ctx);
  return ox_set_out(cx, n, 0, frit_astype(cx->ctx, x, to));
}

frit_status ox_where(ox_cx *cx, const ox_node *n) {
  frit_tensor *c = ox_in(cx, n, 0), *a = ox_in(cx, n, 1), *b = ox_in(cx, n, 2);
  if (!c || !a || !b) return frit_last_status(cx->ctx);
  return ox_set_out(cx, n, 0, same_dtype(cx, frit_where(cx->ctx, c, a, b), a));
}

frit_status ox_clip(ox_cx *cx, const ox_node *n) {
  frit_tensor *x = ox_in(cx, n, 0), *lo = NULL, *hi = NULL;
  if (!x) return frit_last_status(cx->ctx);
  if (ox_attr(n, "min")) lo = sc(cx, x, ox_attr_f(n, "min", 0));
  if (ox_attr(n, "max")) hi = sc(cx, x, ox_attr_f(n, "max", 0));
  if (ox_has_in(n, 1) && !(lo = ox_in(cx, n, 1))) return frit_last_status(cx->ctx);
  if (ox_has_in(n, 2) && !(hi = ox_in(cx, n, 2))) return frit_last_status(cx->ctx);
  frit_tensor *r = x;
  /* numpy clip's order: max first, then min (so lo > hi gives hi, as ONNX's reference does) */
  if (lo) r = bin(cx, FRIT_BF_MAXIMUM, r, lo);
  if (hi) r = bin(cx, FRIT_BF_MINIMUM, r, hi);
  return ox_set_out(cx, n, 0, same_dtype(cx, r, x));
}

frit_status ox_act(ox_cx *cx, const ox_node *n) {
  frit_tensor *x = ox_in(cx, n, 0), *r = NULL;
  if (!x) return frit_last_status(cx->ctx);
  const char *op = n->op_type;
  frit_tensor *zero = sc(cx, x, 0), *neg = bin(cx, FRIT_BF_LT, x, zero);
  if (!strcmp(op, "LeakyRelu")) {
    r = frit_where(cx->ctx, neg, bin(cx, FRIT_BF_MUL, x, sc(cx, x, ox_attr_f(n, "alpha", 0.01))), x);
  } else if (!strcmp(op, "Elu") || !strcmp(op, "Selu")) {
    bool selu = !strcmp(op, "Selu");
    double alpha = ox_attr_f(n, "alpha", selu ? 1.67326319217681884765625 : 1.0);
    frit_tensor *e = bin(cx, FRIT_BF_MUL, sc(cx, x, alpha), un(cx, FRIT_UF_EXPM1, x));
    r = frit_where(cx->ctx, bin(cx, FRIT_BF_LE, x, zero), e, x);
    if (selu) r = bin(cx, FRIT_BF_MUL, r, sc(cx, x, ox_attr_f(n, "gamma", 1.05070102214813232421875)));
  } else if (!strcmp(op, "Celu")) {
    double alpha = ox_attr_f(n, "alpha", 1.0);
    frit_tensor *e = bin(cx, FRIT_BF_MUL, sc(cx, x, alpha),
                         un(cx, FRIT_UF_EXPM1, bin(cx, FRIT_BF_TRUEDIV, x, sc(cx, x, alpha))));
    r = bin(cx, FRIT_BF_ADD, bin(cx, FRIT_BF_MAXIMUM, x, zero), bin(cx, FRIT_BF_MINIMUM, e, zero));
  } else if (!strcmp(op, "ThresholdedRelu")) {
    r = frit_where(cx->ctx, bin(cx, FRIT_BF_GT, x, sc(cx, x, ox_attr_f(n, "alpha", 1.0))), x, zero);
  } else if (!strcmp(op, "HardSigmoid") || !strcmp(op, "HardSwish")) {
    bool swish = !strcmp(op, "HardSwish");
    double alpha = swish ? 1.0 / 6 : ox_attr_f(n, "alpha", 0.2), beta = swish ? 0.5 : ox_attr_f(n, "beta", 0.5);
    r = bin(cx, FRIT_BF_ADD, bin(cx, FRIT_BF_MUL, x, sc(cx, x, alpha)), sc(cx, x, beta));
    r = bin(cx, FRIT_BF_MINIMUM, bin(cx, FRIT_BF_MAXIMUM, r, zero), sc(cx, x, 1));
    if (swish) r = bin(cx, FRIT_BF_MUL, x, r);
  } else if (!strcmp(op, "Mish")) {
    frit_tensor *sp = bin(cx, FRIT_BF_ADD, bin(cx, FRIT_BF_MAXIMUM, x, zero),
                          un(cx, FRIT_UF_LOG1P, un(cx, FRIT_UF_EXP, un(cx, FRIT_UF_NEG, un(cx, FRIT_UF_ABS, x)))));
    r = bin(cx, FRIT_BF_MUL, x, un(cx, FRIT_UF_TANH, sp));
  } else if (!strcmp(op, "Gelu")) {
    const char *approx = ox_attr_s(cx, n, "approximate", "none");
    if (!strcmp(approx, "tanh")) {
      frit_tensor *x3 = bin(cx, FRIT_BF_MUL, bin(cx, FRIT_BF_MUL, x, x), x);
      frit_tensor *in = bin(cx, FRIT_BF_MUL, sc(cx, x, 0.79788456080286535588),
                            bin(cx, FRIT_BF_ADD, x, bin(cx, FRIT_BF_MUL, sc(cx, x, 0.044715), x3)));
      r = bin(cx, FRIT_BF_MUL, bin(cx, FRIT_BF_MUL, sc(cx, x, 0.5), x),
              bin(cx, FRIT_BF_ADD, sc(cx, x, 1), un(cx, FRIT_UF_TANH, in)));
    } else if (!strcmp(approx, "none")) {
      frit_tensor *e = un(cx, FRIT_UF_ERF, bin(cx, FRIT_BF_MUL, x, sc(cx, x, 0.70710678118654752440)));
      r = bin(cx, FRIT_BF_MUL, bin(cx, FRIT_BF_MUL, sc(cx, x, 0.5), x), bin(cx, FRIT_BF_ADD, sc(cx, x, 1), e));
    } else {
      return ox_fail(cx, n, "approximate '%s' (none or tanh)", approx);
    }
  }
  return ox_set_out(cx, n, 0, same_dtype(cx, r, x));
}

frit_status ox_prelu(ox_cx *cx, const ox_node *n) {
  frit_tensor *x = ox_in(cx, n, 0), *s = ox_in(cx, n, 1);
  if (!x || !s) return frit_last_status(cx->ctx);
  frit_tensor *r = frit_where(cx->ctx, bin(cx, FRIT_BF_LT, x, sc(cx, x, 0)), bin(cx, FRIT_BF_MUL, x, s), x);
  return ox_set_out(cx, n, 0, same_dtype(cx, r, x));
}
