/* Building an ONNX graph on frit tensors: the value environment of one call (names to tensors and
 * build-time constants), the helpers converters use, and the walk over the nodes. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "import/onnx/onnx_internal.h"
#include "ir/uop.h"

const char *ox_s(const char *s) { return s ? s : ""; }

frit_status ox_fail(ox_cx *cx, const ox_node *n, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return frit_set_error(cx->ctx, FRIT_ERR_INVALID, "onnx: %s node '%s': %s", ox_s(n->op_type), ox_s(n->name), msg);
}

frit_status ox_fail_frit(ox_cx *cx, const ox_node *n) {
  frit_status st = frit_last_status(cx->ctx);
  char msg[512];
  snprintf(msg, sizeof msg, "%s", frit_error(cx->ctx));
  return frit_set_error(cx->ctx, st ? st : FRIT_ERR_INVALID, "onnx: %s node '%s': %s", ox_s(n->op_type),
                        ox_s(n->name), msg);
}

void *ox_alloc(ox_cx *cx, size_t bytes) {
  if (cx->nowned == cx->owned_cap) {
    int cap = cx->owned_cap ? cx->owned_cap * 2 : 64;
    void **o = realloc(cx->owned, (size_t)cap * sizeof *o);
    if (!o) return NULL;
    cx->owned = o, cx->owned_cap = cap;
  }
  void *p = calloc(1, bytes ? bytes : 1);
  if (p) cx->owned[cx->nowned++] = p;
  return p;
}

/* ---------------------------------------------------------------- the environment */

static uint64_t hash_name(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ull;
  return h;
}

static ox_val *lookup(ox_cx *cx, const char *name) {
  if (!cx->table_cap) return NULL;
  for (uint64_t h = hash_name(name);; h++) {
    int k = cx->table[h & (uint64_t)(cx->table_cap - 1)];
    if (k < 0) return NULL;
    if (!strcmp(cx->vals[k].name, name)) return &cx->vals[k];
  }
}

static frit_status rehash(ox_cx *cx, int cap) {
  int *t = malloc((size_t)cap * sizeof *t);
  if (!t) return frit_set_error(cx->ctx, FRIT_ERR_NOMEM, "onnx: out of memory");
  for (int i = 0; i < cap; i++) t[i] = -1;
  for (int k = 0; k < cx->nvals; k++)
    for (uint64_t h = hash_name(cx->vals[k].name);; h++)
      if (t[h & (uint64_t)(cap - 1)] < 0) {
        t[h & (uint64_t)(cap - 1)] = k;
        break;
      }
  free(cx->table);
  cx->table = t, cx->table_cap = cap;
  return FRIT_OK;
}

/* Binds name (a later binding of the same name replaces the value). */
static frit_status bind(ox_cx *cx, const char *name, frit_tensor *t, ox_const *c) {
  ox_val *v = lookup(cx, name);
  if (v) {
    v->t = t, v->c = c;
    return FRIT_OK;
  }
  if (cx->nvals == cx->cap) {
    int cap = cx->cap ? cx->cap * 2 : 64;
    ox_val *nv = realloc(cx->vals, (size_t)cap * sizeof *nv);
    if (!nv) return frit_set_error(cx->ctx, FRIT_ERR_NOMEM, "onnx: out of memory");
    cx->vals = nv, cx->cap = cap;
  }
  cx->vals[cx->nvals++] = (ox_val){name, t, c};
  if (cx->nvals * 2 > cx->table_cap) return rehash(cx, cx->table_cap ? cx->table_cap * 2 : 128);
  int k = cx->nvals - 1;
  for (uint64_t h = hash_name(name);; h++)
    if (cx->table[h & (uint64_t)(cx->table_cap - 1)] < 0) {
      cx->table[h & (uint64_t)(cx->table_cap - 1)] = k;
      break;
    }
  return FRIT_OK;
}

bool ox_has_in(const ox_node *n, int k) { return k >= 0 && (size_t)k < n->n_input && n->input[k] && n->input[k][0]; }

static ox_val *in_val(ox_cx *cx, const ox_node *n, int k) {
  if (!ox_has_in(n, k)) {
    ox_fail(cx, n, "input %d is missing", k);
    return NULL;
  }
  ox_val *v = lookup(cx, n->input[k]);
  if (!v) ox_fail(cx, n, "input %d '%s' is not defined before the node", k, n->input[k]);
  return v;
}

frit_tensor *ox_in(ox_cx *cx, const ox_node *n, int k) {
  ox_val *v = in_val(cx, n, k);
  if (!v) return NULL;
  if (!v->t) {
    v->t = ox_const_tensor(cx, v->c);
    if (!v->t) ox_fail_frit(cx, n);
  }
  return v->t;
}

const ox_const *ox_in_const_opt(ox_cx *cx, const ox_node *n, int k) {
  if (!ox_has_in(n, k)) return NULL;
  ox_val *v = lookup(cx, n->input[k]);
  return v ? v->c : NULL;
}

const ox_const *ox_in_const(ox_cx *cx, const ox_node *n, int k) {
  ox_val *v = in_val(cx, n, k);
  if (!v) return NULL;
  if (!v->c)
    ox_fail(cx, n, "input %d '%s' must be known when the graph is built (an initializer, a Constant, or computed "
            "from shapes), frit does not take it as a run-time tensor", k, n->input[k]);
  return v->c;
}

frit_status ox_set_out(ox_cx *cx, const ox_node *n, int k, frit_tensor *t) {
  if (!t) return ox_fail_frit(cx, n);
  if ((size_t)k >= n->n_output || !n->output[k][0]) return FRIT_OK; /* an output nobody reads */
  return bind(cx, n->output[k], t, NULL);
}

frit_status ox_set_out_const(ox_cx *cx, const ox_node *n, int k, ox_const *c) {
  if (!c) return frit_last_status(cx->ctx) ? frit_last_status(cx->ctx) : ox_fail(cx, n, "out of memory");
  if ((size_t)k >= n->n_output || !n->output[k][0]) return FRIT_OK;
  return bind(cx, n->output[k], NULL, c);
}

/* ---------------------------------------------------------------- constants */

ox_const *ox_const_new(ox_cx *cx, frit_dtype dt, int ndim, const int64_t *dims) {
  ox_const *c = ox_alloc(cx, sizeof *c);
  if (!c) return NULL;
  c->dt = dt, c->ndim = ndim, c->n = 1;
  for (int d = 0; d < ndim; d++) c->dims[d] = dims[d], c->n *= dims[d];
  size_t es = dt == FRIT_BOOL ? 1 : (size_t)frit_dtype_bits(dt) / 8;
  c->data = ox_alloc(cx, (size_t)c->n * es);
  return c->data ? c : NULL;
}

int64_t *ox_const_ints(ox_cx *cx, const ox_const *c) {
  int64_t *v = ox_alloc(cx, (size_t)c->n * sizeof *v);
  if (!v) return NULL;
  for (int64_t i = 0; i < c->n; i++) {
    switch (frit_dtype_kind(c->dt)) {
    case FRIT_BOOL: case FRIT_U8: v[i] = ((const uint8_t *)c->data)[i]; break;
    case FRIT_I8: v[i] = ((const int8_t *)c->data)[i]; break;
    case FRIT_I16: v[i] = ((const int16_t *)c->data)[i]; break;
    case FRIT_U16: v[i] = ((const uint16_t *)c->data)[i]; break;
    case FRIT_I32: v[i] = ((const int32_t *)c->data)[i]; break;
    case FRIT_U32: v[i] = ((const uint32_t *)c->data)[i]; break;
    case FRIT_I64: v[i] = ((const int64_t *)c->data)[i]; break;
    case FRIT_U64: v[i] = (int64_t)((const uint64_t *)c->data)[i]; break;
    case FRIT_F32: v[i] = (int64_t)((const float *)c->data)[i]; break;
    case FRIT_F64: v[i] = (int64_t)((const double *)c->data)[i]; break;
    case FRIT_F16: case FRIT_BF16: case FRIT_C64: case FRIT_C128: case FRIT_VOID: case FRIT_SCALAR_KIND_COUNT_:
      frit_set_error(cx->ctx, FRIT_ERR_INVALID, "onnx: a build-time constant of dtype %s cannot be read as integers",
                     frit_dtype_name(c->dt, (char[32]){0}, 32));
      return NULL;
    }
  }
  return v;
}

double *ox_const_doubles(ox_cx *cx, const ox_const *c) {
  double *v = ox_alloc(cx, (size_t)c->n * sizeof *v);
  if (!v) return NULL;
  if (c->dt == FRIT_F32) {
    for (int64_t i = 0; i < c->n; i++) v[i] = ((const float *)c->data)[i];
  } else if (c->dt == FRIT_F64) {
    for (int64_t i = 0; i < c->n; i++) v[i] = ((const double *)c->data)[i];
  } else {
    int64_t *iv = ox_const_ints(cx, c);
    if (!iv) return NULL;
    for (int64_t i = 0; i < c->n; i++) v[i] = (double)iv[i];
  }
  return v;
}

/* A folded constant as a tensor: built from its elements (folded values are shape-sized). */
frit_tensor *ox_const_tensor(ox_cx *cx, const ox_const *c) {
  enum { MAX_FOLDED = 4096 };
  if (c->n > MAX_FOLDED) {
    frit_set_error(cx->ctx, FRIT_ERR_INVALID, "a computed constant of %lld elements is too large to embed",
                   (long long)c->n);
    return NULL;
  }
  bool is_f = frit_dtype_is_float(c->dt);
  if (!is_f && frit_dtype_is_complex(c->dt)) {
    frit_set_error(cx->ctx, FRIT_ERR_INVALID, "a computed complex constant cannot be embedded");
    return NULL;
  }
  int64_t *iv = is_f ? NULL : ox_const_ints(cx, c);
  double *fv = is_f && c->dt != FRIT_F16 && c->dt != FRIT_BF16 ? ox_const_doubles(cx, c) : NULL;
  if (!iv && !fv) {
    if (!frit_last_status(cx->ctx)) frit_set_error(cx->ctx, FRIT_ERR_INVALID, "cannot embed a constant of this dtype");
    return NULL;
  }
  if (c->n == 0) return frit_zeros(cx->ctx, c->dt, c->ndim, c->dims);
  frit_tensor **parts = ox_alloc(cx, (size_t)c->n * sizeof *parts);
  if (!parts) return NULL;
  for (int64_t i = 0; i < c->n; i++) {
    parts[i] = fv ? frit_scalar_f(cx->ctx, c->dt, fv[i]) : frit_scalar_i(cx->ctx, c->dt, iv[i]);
    if (!parts[i]) return NULL;
  }
  if (c->ndim == 0) return parts[0];
  frit_tensor *flat = c->n == 1 ? frit_reshape(cx->ctx, parts[0], 1, (int64_t[]){1})
                                : frit_stack(cx->ctx, parts, (int)c->n, 0);
  return frit_reshape(cx->ctx, flat, c->ndim, c->dims);
}

/* ---------------------------------------------------------------- attributes */

const FritOnnx__AttributeProto *ox_attr(const ox_node *n, const char *name) {
  for (size_t i = 0; i < n->n_attribute; i++)
    if (!strcmp(ox_s(n->attribute[i]->name), name)) return n->attribute[i];
  return NULL;
}

int64_t ox_attr_i(const ox_node *n, const char *name, int64_t def) {
  const FritOnnx__AttributeProto *a = ox_attr(n, name);
  return a && a->has_i ? a->i : def;
}

double ox_attr_f(const ox_node *n, const char *name, double def) {
  const FritOnnx__AttributeProto *a = ox_attr(n, name);
  return a && a->has_f ? (double)a->f : def;
}

const char *ox_attr_s(ox_cx *cx, const ox_node *n, const char *name, const char *def) {
  const FritOnnx__AttributeProto *a = ox_attr(n, name);
  if (!a || !a->has_s) return def;
  char *s = ox_alloc(cx, a->s.len + 1);
  if (!s) return def;
  if (a->s.len) memcpy(s, a->s.data, a->s.len);
  return s;
}

int ox_attr_ints(const ox_node *n, const char *name, const int64_t **out) {
  const FritOnnx__AttributeProto *a = ox_attr(n, name);
  if (!a) return -1;
  *out = a->ints;
  return a->n_ints > FRIT_MAX_DIMS * 4 ? FRIT_MAX_DIMS * 4 : (int)a->n_ints;
}

int ox_axes(ox_cx *cx, const ox_node *n, const char *attr, int k, int64_t *axes, int max) {
  const int64_t *av;
  int na = ox_attr_ints(n, attr, &av);
  if (na >= 0) {
    if (na > max) return ox_fail(cx, n, "%d axes (at most %d)", na, max), -2;
    for (int i = 0; i < na; i++) axes[i] = av[i];
    return na;
  }
  if (!ox_has_in(n, k)) return -1;
  const ox_const *c = ox_in_const(cx, n, k);
  if (!c) return -2;
  if (c->n > max) return ox_fail(cx, n, "%lld axes (at most %d)", (long long)c->n, max), -2;
  int64_t *v = ox_const_ints(cx, c);
  if (!v) return ox_fail_frit(cx, n), -2;
  for (int64_t i = 0; i < c->n; i++) axes[i] = v[i];
  return (int)c->n;
}

bool ox_axis(ox_cx *cx, const ox_node *n, int64_t *axis, int ndim) {
  int64_t a = *axis < 0 ? *axis + ndim : *axis;
  if (a < 0 || a >= (ndim ? ndim : 1)) {
    ox_fail(cx, n, "axis %lld is out of range for rank %d", (long long)*axis, ndim);
    return false;
  }
  *axis = a;
  return true;
}

/* ---------------------------------------------------------------- the op table and the walk */

static const struct {
  const char *name;
  ox_convert_fn fn;
} op_table[] = {
#define OX_ROW(name, fn) {name, fn},
    OX_OPS(OX_ROW)
#undef OX_ROW
};

ox_convert_fn ox_find_op(const char *op_type) {
  for (size_t i = 0; i < sizeof op_table / sizeof *op_table; i++)
    if (!strcmp(op_table[i].name, op_type)) return op_table[i].fn;
  return NULL;
}

frit_status ox_run_graph(ox_cx *cx) {
  const FritOnnx__GraphProto *g = cx->m->proto->graph;
  for (size_t i = 0; i < g->n_node; i++) {
    const ox_node *n = g->node[i];
    ox_convert_fn fn = ox_find_op(ox_s(n->op_type));
    FRIT_ASSERT(fn); /* checked at import */
    frit_status st = fn(cx, n);
    if (st) return st;
  }
  return FRIT_OK;
}

frit_status ox_model_call(frit_ctx *ctx, void *impl, frit_tensor *const *args, frit_tensor **outs);
frit_status ox_model_call(frit_ctx *ctx, void *impl, frit_tensor *const *args, frit_tensor **outs) {
  ox_model *m = impl;
  ox_cx cx = {.ctx = ctx, .m = m, .opset = m->opset};
  const FritOnnx__GraphProto *g = m->proto->graph;
  frit_status st = FRIT_OK;
  int k = 0;
  for (size_t i = 0; i < g->n_input && !st; i++) {
    bool init = false;
    for (int w = 0; w < m->nweights && !init; w++) init = !strcmp(m->weight_names[w], ox_s(g->input[i]->name));
    if (!init) st = bind(&cx, ox_s(g->input[i]->name), args[k++], NULL);
  }
  /* a Constant node rebinds its output (a weight) when the walk reaches it */
  for (int w = 0; w < m->nweights && !st; w++)
    st = bind(&cx, m->weight_names[w], args[m->ninputs + w], &m->weight_values[w]);
  if (!st) st = ox_run_graph(&cx);
  for (size_t i = 0; i < g->n_output && !st; i++) {
    ox_val *v = lookup(&cx, ox_s(g->output[i]->name));
    if (!v) {
      st = frit_set_error(ctx, FRIT_ERR_INVALID, "onnx: graph output '%s' is not computed by any node",
                          ox_s(g->output[i]->name));
      break;
    }
    if (!v->t) v->t = ox_const_tensor(&cx, v->c);
    if (!v->t) {
      st = frit_last_status(ctx);
      break;
    }
    outs[i] = v->t;
  }
  for (int i = 0; i < cx.nowned; i++) free(cx.owned[i]);
  free(cx.owned);
  free(cx.vals);
  free(cx.table);
  return st;
}
