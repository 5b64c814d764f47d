/* Shape inference for tensor-level nodes (Contract 1), cached in each node, plus the dim
 * arithmetic and the error texts the frontend files share. */
#include "tensor/tensor_internal.h"

#include <inttypes.h>
#include <stdio.h>

int64_t frit_dim_value(const frit_uop *dim) {
  if (!dim || dim->op != FRIT_OP_CONST || !frit_dtype_is_int(dim->dtype)) return -1;
  return dim->arg.value.i >= 0 ? dim->arg.value.i : -1;
}

/* ---------- dim arithmetic ---------- */

frit_uop *ti_dim(frit_ctx *ctx, int64_t v) { return frit_const_int(ctx, FRIT_I64, v); }

bool ti_canon_dims(frit_ctx *ctx, int n, frit_uop *const *in, frit_uop **out) {
  for (int i = 0; i < n; i++) {
    out[i] = in[i] && in[i]->op != FRIT_OP_CONST && in[i]->op != FRIT_OP_DEFINE_VAR ? frit_simplify(ctx, in[i]) : in[i];
    if (in[i] && !out[i]) return false;
  }
  return true;
}

static frit_uop *dim_op(frit_ctx *ctx, frit_op op, frit_uop *a, frit_uop *b) {
  if (!a || !b) return NULL;
  if (a->op == FRIT_OP_CONST && b->op == FRIT_OP_CONST) {
    frit_scalar s[2] = {a->arg.value, b->arg.value};
    return frit_const(ctx, FRIT_I64, frit_eval_alu(op, FRIT_I64, s));
  }
  frit_uop *r = frit_binary(ctx, op, a, b);
  return r ? frit_simplify(ctx, r) : NULL;
}

frit_uop *ti_dim_add(frit_ctx *ctx, frit_uop *a, frit_uop *b) {
  if (b && b->op == FRIT_OP_CONST && b->arg.value.i == 0) return a;
  if (a && a->op == FRIT_OP_CONST && a->arg.value.i == 0) return b;
  return dim_op(ctx, FRIT_OP_ADD, a, b);
}
frit_uop *ti_dim_sub(frit_ctx *ctx, frit_uop *a, frit_uop *b) {
  if (b && b->op == FRIT_OP_CONST && b->arg.value.i == 0) return a;
  return dim_op(ctx, FRIT_OP_SUB, a, b);
}
frit_uop *ti_dim_mul(frit_ctx *ctx, frit_uop *a, frit_uop *b) {
  if (b && b->op == FRIT_OP_CONST && b->arg.value.i == 1) return a;
  if (a && a->op == FRIT_OP_CONST && a->arg.value.i == 1) return b;
  return dim_op(ctx, FRIT_OP_MUL, a, b);
}
frit_uop *ti_dim_div(frit_ctx *ctx, frit_uop *a, int64_t b) {
  if (b == 1) return a;
  return dim_op(ctx, FRIT_OP_IDIV, a, ti_dim(ctx, b));
}
frit_uop *ti_dim_div_by(frit_ctx *ctx, frit_uop *a, frit_uop *b) { return dim_op(ctx, FRIT_OP_IDIV, a, b); }
frit_uop *ti_dim_min(frit_ctx *ctx, frit_uop *a, frit_uop *b) { return dim_op(ctx, FRIT_OP_MIN, a, b); }
frit_uop *ti_dim_max(frit_ctx *ctx, frit_uop *a, frit_uop *b) { return dim_op(ctx, FRIT_OP_MAX, a, b); }
/* Python's a % m (result in [0, m)) for m > 0; any a. */
frit_uop *ti_dim_pmod(frit_ctx *ctx, frit_uop *a, frit_uop *m) {
  frit_uop *r = dim_op(ctx, FRIT_OP_MOD, a, m);
  return dim_op(ctx, FRIT_OP_MOD, ti_dim_add(ctx, r, m), m);
}
frit_uop *ti_dim_cdiv(frit_ctx *ctx, frit_uop *a, int64_t b) {
  if (b == 1) return a;
  return ti_dim_div(ctx, ti_dim_add(ctx, a, ti_dim(ctx, b - 1)), b);
}

bool ti_dims_from_ints(frit_ctx *ctx, int ndim, const int64_t *in, frit_uop **out) {
  for (int i = 0; i < ndim; i++)
    if (!(out[i] = ti_dim(ctx, in[i]))) return false;
  return true;
}

/* Products of symbolic dims equal up to the order and grouping of their factors ((a*b)*3 and
 * a*(b*3)): the simplifier does not always bring them to one form. Flattens MUL trees into a
 * constant and a sorted list of the other factors. */
enum { MAX_FACTORS = 64 };
static bool factors(const frit_uop *u, int64_t *c, const frit_uop **f, int *n) {
  if (u->op == FRIT_OP_MUL) return factors(u->src[0], c, f, n) && factors(u->src[1], c, f, n);
  if (u->op == FRIT_OP_CONST) return !__builtin_mul_overflow(*c, u->arg.value.i, c);
  if (*n == MAX_FACTORS) return false;
  f[(*n)++] = u;
  return true;
}
static int cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)*(const frit_uop *const *)a, y = (uintptr_t)*(const frit_uop *const *)b;
  return x < y ? -1 : x > y;
}
static bool same_product(const frit_uop *a, const frit_uop *b) {
  const frit_uop *fa[MAX_FACTORS], *fb[MAX_FACTORS];
  int64_t ca = 1, cb = 1;
  int na = 0, nb = 0;
  if (!factors(a, &ca, fa, &na) || !factors(b, &cb, fb, &nb) || ca != cb || na != nb) return false;
  qsort(fa, (size_t)na, sizeof *fa, cmp_ptr);
  qsort(fb, (size_t)nb, sizeof *fb, cmp_ptr);
  return !memcmp(fa, fb, (size_t)na * sizeof *fa);
}

frit_uop *frit_shape_numel(frit_ctx *ctx, const frit_shape *s) {
  frit_uop *n = ti_dim(ctx, 1);
  for (int i = 0; i < s->ndim && n; i++) n = ti_dim_mul(ctx, n, s->dims[i]);
  return n;
}

/* ---------- text ---------- */

const char *ti_dtname(frit_dtype dt, char *buf32) { return frit_dtype_name(dt, buf32, 32); }

static void append(char *buf, size_t n, size_t *len, const char *s) {
  size_t l = strlen(s);
  if (*len + l + 1 > n) l = *len + 1 < n ? n - *len - 1 : 0;
  memcpy(buf + *len, s, l);
  *len += l;
  buf[*len] = 0;
}

/* A dim as text; symbolic dims as a C expression (the renderer's scratch string is copied). */
static void dim_text(frit_ctx *ctx, const frit_uop *d, char *out, size_t n) {
  if (d->op == FRIT_OP_CONST && frit_dtype_is_int(d->dtype)) {
    snprintf(out, n, "%" PRId64, d->arg.value.i);
  } else if (d->op == FRIT_OP_DEFINE_VAR) {
    snprintf(out, n, "%s", (const char *)d->arg.blob);
  } else if (ctx) {
    frit_status st = ctx->status;
    char saved[sizeof ctx->errmsg];
    memcpy(saved, ctx->errmsg, sizeof saved);
    char *keep = ctx->strbuf ? strdup(ctx->strbuf) : NULL;
    const char *s = frit_render_c_expr(ctx, (frit_uop *)d);
    snprintf(out, n, "%s", s ? s : "?");
    frit_ctx_keep_string(ctx, keep); /* the caller may still hold the previous string */
    ctx->status = st;
    memcpy(ctx->errmsg, saved, sizeof saved);
  } else {
    snprintf(out, n, "?");
  }
}

static const char *shape_text_ctx(frit_ctx *ctx, const frit_shape *s, char *buf, size_t n) {
  size_t len = 0;
  buf[0] = 0;
  append(buf, n, &len, "(");
  for (int i = 0; i < s->ndim; i++) {
    char d[128];
    dim_text(ctx, s->dims[i], d, sizeof d);
    if (i) append(buf, n, &len, ", ");
    append(buf, n, &len, d);
  }
  append(buf, n, &len, s->ndim == 1 ? ",)" : ")");
  return buf;
}

const char *ti_shape_text(const frit_shape *s, char *buf, size_t n) { return shape_text_ctx(NULL, s, buf, n); }

const char *frit_tensor_shape_str(frit_ctx *ctx, const frit_tensor *t) {
  if (!t) return NULL;
  const frit_shape *s = frit_shape_of(ctx, TI_U(t));
  if (!s) return NULL;
  char buf[1024];
  shape_text_ctx(ctx, s, buf, sizeof buf);
  char *m = strdup(buf);
  if (!m) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "out of memory");
    return NULL;
  }
  return frit_ctx_keep_string(ctx, m);
}

frit_tensor *ti_fail(frit_ctx *ctx, const char *op, frit_tensor *const *ts, int n, const char *fmt, ...) {
  char head[900], why[512];
  size_t len = 0;
  head[0] = 0;
  if (n > 0) {
    append(head, sizeof head, &len, n == 1 ? "shape " : "shapes ");
    for (int i = 0; i < n; i++) {
      char b[256];
      const frit_shape *s = ts[i] ? (const frit_shape *)TI_U(ts[i])->shape : NULL;
      if (i) append(head, sizeof head, &len, i == n - 1 ? " and " : ", ");
      append(head, sizeof head, &len, s ? shape_text_ctx(ctx, s, b, sizeof b) : "?");
    }
    append(head, sizeof head, &len, n == 1 ? ", dtype " : ", dtypes ");
    for (int i = 0; i < n; i++) {
      char b[32];
      if (i) append(head, sizeof head, &len, i == n - 1 ? " and " : ", ");
      append(head, sizeof head, &len, ts[i] ? ti_dtname(TI_U(ts[i])->dtype, b) : "?");
    }
    append(head, sizeof head, &len, ": ");
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  frit_set_error(ctx, FRIT_ERR_INVALID, "op %s: %s%s", op, head, why);
  return NULL;
}

bool ti_ok(frit_ctx *ctx, const char *op, frit_tensor *const *ts, int n) {
  for (int i = 0; i < n; i++) {
    if (!ts[i]) {
      if (ctx->status == FRIT_OK) frit_set_error(ctx, FRIT_ERR_INVALID, "op %s: argument %d is NULL", op, i);
      return false;
    }
  }
  return true;
}

/* ---------- shape inference ---------- */

/* Sources that are tensors (the rest are i64 dim expressions, or the KERNEL/LOOP an AFTER
 * follows, which have no shape). */
bool frit_is_tensor_src(const frit_uop *u, uint32_t i) {
  frit_op op = (frit_op)u->op;
  if (op == FRIT_OP_AFTER) return i == 0 && !frit_dtype_is_ptr(u->dtype);
  if (op == FRIT_OP_GATHER) return i < 2;
  if (op == FRIT_OP_SCATTER) return i < 3;
  if (op == FRIT_OP_CAST || op == FRIT_OP_BITCAST || op == FRIT_OP_CONTIGUOUS || op == FRIT_OP_SCAN ||
      op == FRIT_OP_COLLECTIVE || op == FRIT_OP_REDUCE_AXIS || (frit_op_flags(op) & FRIT_F_MOVEMENT))
    return i == 0;
  return (frit_op_flags(op) & FRIT_F_ALU) != 0;
}

static frit_shape *new_shape(frit_ctx *ctx, int ndim) {
  frit_shape *s = frit_arena_alloc(&ctx->arena, sizeof *s + (size_t)(ndim > 0 ? ndim : 1) * sizeof(frit_uop *));
  if (!s) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "out of memory");
    return NULL;
  }
  s->ndim = ndim;
  return s;
}

static frit_shape *bad(frit_ctx *ctx, const frit_uop *u, const char *why) {
  frit_set_error(ctx, FRIT_ERR_INVALID, "op %s (node %u): not a well-formed tensor-level node: %s",
                 frit_op_name((frit_op)u->op), u->id, why);
  return NULL;
}

static bool dims_ok(frit_uop *const *d, int n) {
  for (int i = 0; i < n; i++)
    if (d[i]->dtype != FRIT_I64) return false;
  return true;
}

/* Checks an ints arg of n axes in range; perm also requires a permutation. */
static bool axes_arg_ok(const frit_uop *u, int ndim, bool perm) {
  if (u->arg.blob_kind != FRIT_BLOB_INTS && u->arg.n) return false;
  const int64_t *a = u->arg.blob;
  bool seen[FRIT_MAX_DIMS] = {0};
  if (perm && (int)u->arg.n != ndim) return false;
  for (uint32_t i = 0; i < u->arg.n; i++) {
    if (a[i] < 0 || a[i] >= ndim || seen[a[i]]) return false;
    seen[a[i]] = true;
  }
  return true;
}

/* Shape of one node whose tensor sources already have shapes. */
static frit_shape *infer(frit_ctx *ctx, frit_uop *u) {
  const frit_shape *x = u->nsrc && frit_is_tensor_src(u, 0) ? u->src[0]->shape : NULL;
  frit_shape *s;
  int n;
  if (frit_dtype_lanes(u->dtype) != 1 || frit_dtype_is_ptr(u->dtype) || frit_dtype_kind(u->dtype) == FRIT_VOID)
    return bad(ctx, u, "tensor dtypes are scalar");
  switch ((frit_op)u->op) {
  case FRIT_OP_CONST: case FRIT_OP_DEFINE_VAR:
    return new_shape(ctx, 0);
  case FRIT_OP_BUFFER:
    if ((int)u->nsrc > FRIT_MAX_DIMS || !dims_ok(u->src, (int)u->nsrc)) return bad(ctx, u, "dims must be i64");
    if (!(s = new_shape(ctx, (int)u->nsrc))) return NULL;
    memcpy(s->dims, u->src, u->nsrc * sizeof *u->src);
    return s;
  case FRIT_OP_IOTA:
    if (u->dtype != FRIT_I64 || !dims_ok(u->src, 1)) return bad(ctx, u, "IOTA is i64 of an i64 length");
    if (!(s = new_shape(ctx, 1))) return NULL;
    s->dims[0] = u->src[0];
    return s;
  case FRIT_OP_CAST: case FRIT_OP_CONTIGUOUS: case FRIT_OP_COLLECTIVE: case FRIT_OP_BITCAST: case FRIT_OP_SCAN:
    if (u->op == FRIT_OP_BITCAST && frit_dtype_bits(u->dtype) != frit_dtype_bits(u->src[0]->dtype))
      return bad(ctx, u, "BITCAST between dtypes of different sizes");
    if (u->op == FRIT_OP_CONTIGUOUS && u->dtype != u->src[0]->dtype) return bad(ctx, u, "dtype changes");
    if (u->op == FRIT_OP_SCAN && (u->dtype != u->src[0]->dtype || u->arg.i1 < 0 || u->arg.i1 >= x->ndim))
      return bad(ctx, u, "SCAN axis out of range or dtype changes");
    return (frit_shape *)x;
  case FRIT_OP_RESHAPE: case FRIT_OP_EXPAND: {
    n = (int)u->nsrc - 1;
    if (n > FRIT_MAX_DIMS || !dims_ok(u->src + 1, n) || u->dtype != u->src[0]->dtype)
      return bad(ctx, u, "dims must be i64 (at most 16) and the dtype unchanged");
    if (u->op == FRIT_OP_EXPAND) {
      if (n != x->ndim) return bad(ctx, u, "EXPAND keeps the rank");
      for (int i = 0; i < n; i++)
        if (!ti_dim_eq(x->dims[i], u->src[1 + i]) && frit_dim_value(x->dims[i]) != 1)
          return bad(ctx, u, "EXPAND only grows size-1 dims");
    } else {
      frit_shape *tmp = new_shape(ctx, n);
      if (!tmp) return NULL;
      memcpy(tmp->dims, u->src + 1, (size_t)n * sizeof *u->src);
      frit_uop *a = frit_shape_numel(ctx, x), *b = frit_shape_numel(ctx, tmp);
      if (!a || !b) return NULL;
      if (!ti_dim_eq(a, b) && !same_product(a, b)) {
        frit_uop *d = ti_dim_sub(ctx, a, b);
        if (!d || d->op != FRIT_OP_CONST || d->arg.value.i != 0)
          return bad(ctx, u, "RESHAPE changes the number of elements");
      }
      return tmp;
    }
    if (!(s = new_shape(ctx, n))) return NULL;
    memcpy(s->dims, u->src + 1, (size_t)n * sizeof *u->src);
    return s;
  }
  case FRIT_OP_PERMUTE: case FRIT_OP_FLIP:
    if (!axes_arg_ok(u, x->ndim, u->op == FRIT_OP_PERMUTE) || u->dtype != u->src[0]->dtype)
      return bad(ctx, u, "bad axes");
    if (u->op == FRIT_OP_FLIP) return (frit_shape *)x;
    if (!(s = new_shape(ctx, x->ndim))) return NULL;
    for (int i = 0; i < x->ndim; i++) s->dims[i] = x->dims[((const int64_t *)u->arg.blob)[i]];
    return s;
  case FRIT_OP_PAD: case FRIT_OP_SHRINK:
    n = x->ndim;
    if ((int)u->nsrc != 1 + 2 * n || !dims_ok(u->src + 1, 2 * n) || u->dtype != u->src[0]->dtype)
      return bad(ctx, u, "needs x, then ndim begins and ndim ends (i64)");
    if (!(s = new_shape(ctx, n))) return NULL;
    for (int i = 0; i < n; i++) {
      frit_uop *b = u->src[1 + i], *e = u->src[1 + n + i];
      if (u->op == FRIT_OP_PAD) {
        if (b->vmin < 0 || e->vmin < 0) return bad(ctx, u, "negative padding");
        s->dims[i] = ti_dim_add(ctx, ti_dim_add(ctx, x->dims[i], b), e);
      } else {
        int64_t bv = frit_dim_value(b), ev = frit_dim_value(e), dv = frit_dim_value(x->dims[i]);
        if (b->vmin < 0 || (bv >= 0 && ev >= 0 && bv > ev) || (ev >= 0 && dv >= 0 && ev > dv))
          return bad(ctx, u, "SHRINK bounds outside the dim");
        s->dims[i] = ti_dim_sub(ctx, e, b);
      }
      if (!s->dims[i]) return NULL;
    }
    return s;
  case FRIT_OP_REDUCE_AXIS:
    if (!axes_arg_ok(u, x->ndim, false)) return bad(ctx, u, "bad axes");
    if (!(s = new_shape(ctx, x->ndim))) return NULL;
    memcpy(s->dims, x->dims, (size_t)x->ndim * sizeof *x->dims);
    for (uint32_t i = 0; i < u->arg.n; i++)
      if (!(s->dims[((const int64_t *)u->arg.blob)[i]] = ti_dim(ctx, 1))) return NULL;
    return s;
  case FRIT_OP_GATHER: {
    const frit_shape *ix = u->src[1]->shape;
    int ax = (int)u->arg.i0;
    if (u->src[1]->dtype != FRIT_I64 || ax < 0 || ax >= x->ndim || u->dtype != u->src[0]->dtype ||
        x->ndim - 1 + ix->ndim > FRIT_MAX_DIMS)
      return bad(ctx, u, "GATHER needs i64 indices and an axis in range");
    if (!(s = new_shape(ctx, x->ndim - 1 + ix->ndim))) return NULL;
    n = 0;
    for (int i = 0; i < ax; i++) s->dims[n++] = x->dims[i];
    for (int i = 0; i < ix->ndim; i++) s->dims[n++] = ix->dims[i];
    for (int i = ax + 1; i < x->ndim; i++) s->dims[n++] = x->dims[i];
    return s;
  }
  case FRIT_OP_SCATTER: {
    /* updates are (len(idx),) + x.shape[1:] */
    const frit_shape *ix = u->src[1]->shape, *up = u->src[2]->shape;
    bool ok = u->src[1]->dtype == FRIT_I64 && ix->ndim == 1 && x->ndim >= 1 && u->dtype == u->src[0]->dtype &&
              u->src[2]->dtype == u->dtype && up->ndim == x->ndim && ti_dim_eq(up->dims[0], ix->dims[0]);
    for (int i = 1; ok && i < x->ndim; i++) ok = ti_dim_eq(up->dims[i], x->dims[i]);
    if (!ok) return bad(ctx, u, "SCATTER needs x of rank >= 1, 1-D i64 indices and updates of shape (len(idx),) + x.shape[1:] in x's dtype");
    return (frit_shape *)x;
  }
  /* Explicit kernels (docs/control.md): kernel scalars are 0-d; AFTER(t, KERNEL) is t's new
   * version and AFTER(CARRY, LOOP) a host loop's result, both of src0's shape. */
  case FRIT_OP_RANGE: case FRIT_OP_LOAD: case FRIT_OP_ATOMIC:
    return new_shape(ctx, 0);
  case FRIT_OP_AFTER:
    if (u->nsrc < 2 || u->dtype != u->src[0]->dtype) return bad(ctx, u, "AFTER needs a tensor and a KERNEL or LOOP");
    for (uint32_t i = 1; i < u->nsrc; i++)
      if (u->src[i]->op != FRIT_OP_KERNEL && u->src[i]->op != FRIT_OP_LOOP)
        return bad(ctx, u, "a tensor-level AFTER follows KERNEL or LOOP nodes");
    return (frit_shape *)x;
  case FRIT_OP_CARRY:
    if ((int)u->nsrc > FRIT_MAX_DIMS || !dims_ok(u->src, (int)u->nsrc)) return bad(ctx, u, "dims must be i64");
    if (!(s = new_shape(ctx, (int)u->nsrc))) return NULL;
    memcpy(s->dims, u->src, u->nsrc * sizeof *u->src);
    return s;
  case FRIT_OP_VECTORIZE: case FRIT_OP_GEP: case FRIT_OP_BIND: case FRIT_OP_SINK: case FRIT_OP_GROUP:
  case FRIT_OP_SPECIAL: case FRIT_OP_REDUCE: case FRIT_OP_END:
  case FRIT_OP_IF: case FRIT_OP_BARRIER: case FRIT_OP_KERNEL: case FRIT_OP_DEFINE_GLOBAL:
  case FRIT_OP_DEFINE_LOCAL: case FRIT_OP_DEFINE_REG: case FRIT_OP_INDEX: case FRIT_OP_STORE:
  case FRIT_OP_ATOMIC_CAS: case FRIT_OP_COUNT_: case FRIT_OP_SEQ: case FRIT_OP_BREAK:
  case FRIT_OP_CONTINUE: case FRIT_OP_LOOP:
    return bad(ctx, u, "not a tensor-level op");
  case FRIT_OP_NEG: case FRIT_OP_NOT: case FRIT_OP_ABS: case FRIT_OP_SQRT: case FRIT_OP_RSQRT: case FRIT_OP_RECIP:
  case FRIT_OP_EXP: case FRIT_OP_EXP2: case FRIT_OP_LOG: case FRIT_OP_LOG2: case FRIT_OP_SIN: case FRIT_OP_COS:
  case FRIT_OP_TAN: case FRIT_OP_ASIN: case FRIT_OP_ACOS: case FRIT_OP_ATAN: case FRIT_OP_SINH: case FRIT_OP_COSH:
  case FRIT_OP_TANH: case FRIT_OP_ERF: case FRIT_OP_FLOOR: case FRIT_OP_CEIL: case FRIT_OP_TRUNC: case FRIT_OP_RINT:
  case FRIT_OP_ADD: case FRIT_OP_SUB: case FRIT_OP_MUL: case FRIT_OP_FDIV: case FRIT_OP_IDIV: case FRIT_OP_MOD:
  case FRIT_OP_MAX: case FRIT_OP_MIN: case FRIT_OP_POW: case FRIT_OP_ATAN2: case FRIT_OP_REAL: case FRIT_OP_IMAG: case FRIT_OP_CONJ: case FRIT_OP_COMPLEX: case FRIT_OP_AND: case FRIT_OP_OR:
  case FRIT_OP_XOR: case FRIT_OP_SHL: case FRIT_OP_SHR: case FRIT_OP_CMPLT: case FRIT_OP_CMPLE: case FRIT_OP_CMPEQ:
  case FRIT_OP_CMPNE: case FRIT_OP_WHERE: case FRIT_OP_MULACC:
    break;
  }
  {
    for (uint32_t i = 1; i < u->nsrc; i++) {
      const frit_shape *y = u->src[i]->shape;
      bool same = y->ndim == x->ndim;
      for (int k = 0; same && k < x->ndim; k++) same = ti_dim_eq(x->dims[k], y->dims[k]);
      if (!same) return bad(ctx, u, "ALU operands must have the same shape");
    }
    return (frit_shape *)x;
  }
}

const frit_shape *frit_shape_of(frit_ctx *ctx, frit_uop *u) {
  if (!u) {
    if (ctx->status == FRIT_OK) frit_set_error(ctx, FRIT_ERR_INVALID, "shape: NULL node");
    return NULL;
  }
  if (u->shape) return u->shape;
  bool ready = true; /* the usual case: the frontend built the sources first */
  for (uint32_t i = 0; i < u->nsrc && ready; i++) ready = !frit_is_tensor_src(u, i) || u->src[i]->shape;
  if (ready) return u->shape = infer(ctx, u);
  /* Iterative post-order over tensor-source edges: graphs may be deep. */
  size_t cap = 64, sp = 0;
  frit_uop **stack = malloc(cap * sizeof *stack);
  if (!stack) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "out of memory");
    return NULL;
  }
  stack[sp++] = u;
  while (sp) {
    frit_uop *t = stack[sp - 1];
    if (t->shape) {
      sp--;
      continue;
    }
    frit_uop *missing = NULL;
    for (uint32_t i = 0; i < t->nsrc && !missing; i++)
      if (frit_is_tensor_src(t, i) && !t->src[i]->shape) missing = t->src[i];
    if (missing) {
      if (sp == cap) {
        frit_uop **g = realloc(stack, 2 * cap * sizeof *stack);
        if (!g) {
          free(stack);
          frit_set_error(ctx, FRIT_ERR_NOMEM, "out of memory");
          return NULL;
        }
        stack = g;
        cap *= 2;
      }
      stack[sp++] = missing;
      continue;
    }
    frit_shape *s = infer(ctx, t);
    if (!s) {
      free(stack);
      return NULL;
    }
    t->shape = s;
    sp--;
  }
  free(stack);
  return u->shape;
}
