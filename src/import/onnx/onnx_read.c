/* Reading an ONNX ModelProto (protobuf-c, schema onnx_subset.proto): the signature, the weights
 * (initializers and Constant nodes' tensors, also from external data files) and the listing. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "import/model.h"
#include "import/onnx/onnx_internal.h"
#include "ir/uop.h"

/* Opsets frit reads: the converters follow the changes of 7 to 21; the few ops of 1 to 6 whose
 * meaning differs (Upsample-1, BatchNormalization-1..5 without is_test) are refused by them. */
enum { OX_OPSET_MIN = 1, OX_OPSET_MAX = 21 };

frit_dtype ox_dtype(int32_t t) {
  switch (t) {
  case 1: return FRIT_F32;
  case 2: return FRIT_U8;
  case 3: return FRIT_I8;
  case 4: return FRIT_U16;
  case 5: return FRIT_I16;
  case 6: return FRIT_I32;
  case 7: return FRIT_I64;
  case 9: return FRIT_BOOL;
  case 10: return FRIT_F16;
  case 11: return FRIT_F64;
  case 12: return FRIT_U32;
  case 13: return FRIT_U64;
  case 14: return FRIT_C64;
  case 15: return FRIT_C128;
  case 16: return FRIT_BF16;
  default: return FRIT_VOID;
  }
}

const char *ox_dtype_name(int32_t t) {
  static const char *names[] = {"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32",
                                "INT64", "STRING", "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64",
                                "COMPLEX64", "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ",
                                "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4", "INT4"};
  return t >= 0 && t < (int32_t)(sizeof names / sizeof *names) ? names[t] : "unknown";
}

static size_t elem_bytes(frit_dtype dt) {
  return dt == FRIT_BOOL ? 1 : (size_t)frit_dtype_bits(dt) / 8;
}

/* The external file's bytes [offset, offset+len) (len -1: to the end). */
static frit_status read_external(frit_ctx *ctx, const FritOnnx__TensorProto *t, const char *base_dir,
                                 const char *what, size_t want, void *dst) {
  const char *loc = NULL;
  long long offset = 0, length = -1;
  for (size_t i = 0; i < t->n_external_data; i++) {
    const char *k = ox_s(t->external_data[i]->key), *v = ox_s(t->external_data[i]->value);
    if (!strcmp(k, "location")) loc = v;
    else if (!strcmp(k, "offset")) offset = strtoll(v, NULL, 10);
    else if (!strcmp(k, "length")) length = strtoll(v, NULL, 10);
  }
  if (!loc || !*loc)
    return frit_set_error(ctx, FRIT_ERR_PARSE, "onnx: %s: external data without a location", what);
  if (!base_dir)
    return frit_set_error(ctx, FRIT_ERR_INVALID,
                          "onnx: %s: external data file '%s' but no directory to look in (read the model "
                          "from a file, or pass base_dir)", what, loc);
  /* the model names files beside itself; a path leaving that directory is refused */
  if (loc[0] == '/' || strstr(loc, ".."))
    return frit_set_error(ctx, FRIT_ERR_INVALID, "onnx: %s: external data location '%s' is outside the model's directory",
                          what, loc);
  if (offset < 0 || (length >= 0 && (size_t)length != want))
    return frit_set_error(ctx, FRIT_ERR_PARSE, "onnx: %s: external data length %lld, the tensor needs %zu bytes",
                          what, length, want);
  size_t plen = strlen(base_dir) + strlen(loc) + 2;
  char *path = malloc(plen);
  if (!path) return frit_set_error(ctx, FRIT_ERR_NOMEM, "onnx: out of memory");
  snprintf(path, plen, "%s/%s", base_dir, loc);
  FILE *f = fopen(path, "rb");
  frit_status st = FRIT_OK;
  if (!f) {
    st = frit_set_error(ctx, FRIT_ERR_INVALID, "onnx: %s: cannot open external data file %s: %s", what, path,
                        strerror(errno));
  } else if (fseek(f, (long)offset, SEEK_SET) != 0 || fread(dst, 1, want, f) != want) {
    st = frit_set_error(ctx, FRIT_ERR_PARSE, "onnx: %s: external data file %s is shorter than offset %lld + %zu bytes",
                        what, path, offset, want);
  }
  if (f) fclose(f);
  free(path);
  return st;
}

frit_status ox_tensor_data(frit_ctx *ctx, const FritOnnx__TensorProto *t, const char *base_dir, const char *what,
                           frit_dtype *dtp, int *ndim, int64_t *dims, void **data) {
  *data = NULL;
  frit_dtype dt = ox_dtype(t->data_type);
  if (dt == FRIT_VOID)
    return frit_set_error(ctx, FRIT_ERR_INVALID, "onnx: %s: unsupported dtype %s", what, ox_dtype_name(t->data_type));
  if (t->n_dims > FRIT_MAX_DIMS)
    return frit_set_error(ctx, FRIT_ERR_INVALID, "onnx: %s: rank %zu (frit has at most %d dims)", what, t->n_dims,
                          FRIT_MAX_DIMS);
  uint64_t n = 1;
  for (size_t d = 0; d < t->n_dims; d++) {
    if (t->dims[d] < 0 || (t->dims[d] > 0 && n > (UINT64_C(1) << 40) / (uint64_t)t->dims[d]))
      return frit_set_error(ctx, FRIT_ERR_PARSE, "onnx: %s: bad dims (dim %zu is %lld)", what, d,
                            (long long)t->dims[d]);
    n *= (uint64_t)t->dims[d];
    dims[d] = t->dims[d];
  }
  *ndim = (int)t->n_dims;
  *dtp = dt;
  size_t es = elem_bytes(dt), bytes = (size_t)n * es;
  /* typed fields hold one value per element, complex ones two */
  size_t parts = frit_dtype_is_complex(dt) ? 2 : 1;
  size_t have;
  if (t->data_location == 1) have = n * parts;
  else if (t->has_raw_data) have = t->raw_data.len / es * parts;
  else if (dt == FRIT_F32 || dt == FRIT_C64) have = t->n_float_data;
  else if (dt == FRIT_F64 || dt == FRIT_C128) have = t->n_double_data;
  else if (dt == FRIT_I64) have = t->n_int64_data;
  else if (dt == FRIT_U32 || dt == FRIT_U64) have = t->n_uint64_data;
  else have = t->n_int32_data;
  if (have != n * parts || (t->has_raw_data && t->data_location != 1 && t->raw_data.len != bytes))
    return frit_set_error(ctx, FRIT_ERR_PARSE, "onnx: %s: %llu elements of %s expected, the data holds %zu values",
                          what, (unsigned long long)n, ox_dtype_name(t->data_type), have / parts);
  uint8_t *buf = malloc(bytes ? bytes : 1);
  if (!buf) return frit_set_error(ctx, FRIT_ERR_NOMEM, "onnx: %s: out of memory (%zu bytes)", what, bytes);
  if (t->data_location == 1) {
    frit_status st = read_external(ctx, t, base_dir, what, bytes, buf);
    if (st) {
      free(buf);
      return st;
    }
  } else if (t->has_raw_data) {
    memcpy(buf, t->raw_data.data, bytes); /* little-endian, as the format and frit's storage are */
  } else {
    for (size_t i = 0; i < n * parts; i++) {
      switch (frit_dtype_kind(dt)) {
      case FRIT_F32: case FRIT_C64: ((float *)buf)[i] = t->float_data[i]; break;
      case FRIT_F64: case FRIT_C128: ((double *)buf)[i] = t->double_data[i]; break;
      case FRIT_I64: ((int64_t *)buf)[i] = t->int64_data[i]; break;
      case FRIT_U64: ((uint64_t *)buf)[i] = t->uint64_data[i]; break;
      case FRIT_U32: ((uint32_t *)buf)[i] = (uint32_t)t->uint64_data[i]; break;
      case FRIT_I32: ((int32_t *)buf)[i] = t->int32_data[i]; break;
      case FRIT_I16: ((int16_t *)buf)[i] = (int16_t)t->int32_data[i]; break;
      /* f16 and bf16 travel as their bit patterns */
      case FRIT_U16: case FRIT_F16: case FRIT_BF16: ((uint16_t *)buf)[i] = (uint16_t)t->int32_data[i]; break;
      case FRIT_I8: ((int8_t *)buf)[i] = (int8_t)t->int32_data[i]; break;
      case FRIT_U8: ((uint8_t *)buf)[i] = (uint8_t)t->int32_data[i]; break;
      case FRIT_BOOL: buf[i] = t->int32_data[i] != 0; break;
      case FRIT_VOID: case FRIT_SCALAR_KIND_COUNT_: FRIT_ASSERT(0); break;
      }
    }
  }
  *data = buf;
  return FRIT_OK;
}

/* ---------------------------------------------------------------- the model */

static void ox_model_destroy(void *p) {
  ox_model *m = p;
  if (!m) return;
  if (m->proto) frit_onnx__model_proto__free_unpacked(m->proto, NULL);
  free(m->weight_names);
  free(m->weight_values);
  free(m);
}

static frit_status ox_model_print(frit_ctx *ctx, void *impl, FILE *out) {
  (void)ctx;
  ox_model *m = impl;
  const FritOnnx__GraphProto *g = m->proto->graph;
  fprintf(out, "onnx model: ir_version %lld, opset %lld, producer '%s %s', graph '%s'\n",
          (long long)m->proto->ir_version, (long long)m->opset, ox_s(m->proto->producer_name),
          ox_s(m->proto->producer_version), ox_s(g->name));
  for (size_t i = 0; i < g->n_input; i++) fprintf(out, "  input %s\n", ox_s(g->input[i]->name));
  fprintf(out, "  %d weights\n", m->nweights);
  for (size_t i = 0; i < g->n_node; i++) {
    const ox_node *n = g->node[i];
    fprintf(out, "  node %zu: %s '%s' (", i, ox_s(n->op_type), ox_s(n->name));
    for (size_t k = 0; k < n->n_input; k++) fprintf(out, "%s%s", k ? ", " : "", ox_s(n->input[k]));
    fprintf(out, ") -> (");
    for (size_t k = 0; k < n->n_output; k++) fprintf(out, "%s%s", k ? ", " : "", ox_s(n->output[k]));
    fprintf(out, ")\n");
  }
  for (size_t i = 0; i < g->n_output; i++) fprintf(out, "  output %s\n", ox_s(g->output[i]->name));
  return FRIT_OK;
}

frit_status ox_model_call(frit_ctx *ctx, void *impl, frit_tensor *const *args, frit_tensor **outs);

static const model_ops ox_ops = {"onnx", ox_model_call, ox_model_print, ox_model_destroy};

static frit_status value_sig(frit_ctx *ctx, const FritOnnx__ValueInfoProto *v, const char *kind,
                             model_value_sig *s) {
  const char *name = ox_s(v->name);
  if (!v->type || v->type->value_case != FRIT_ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
    return frit_set_error(ctx, FRIT_ERR_INVALID, "onnx: graph %s '%s' is not a tensor (sequences, maps and "
                          "optionals are not supported)", kind, name);
  const FritOnnx__TypeProto__Tensor *tt = v->type->tensor_type;
  s->dtype = ox_dtype(tt->elem_type);
  if (s->dtype == FRIT_VOID)
    return frit_set_error(ctx, FRIT_ERR_INVALID, "onnx: graph %s '%s' has unsupported dtype %s", kind, name,
                          ox_dtype_name(tt->elem_type));
  s->ndim = -1;
  if (tt->shape) {
    if (tt->shape->n_dim > FRIT_MAX_DIMS)
      return frit_set_error(ctx, FRIT_ERR_INVALID, "onnx: graph %s '%s' has rank %zu (at most %d)", kind, name,
                            tt->shape->n_dim, FRIT_MAX_DIMS);
    s->ndim = (int)tt->shape->n_dim;
    for (int d = 0; d < s->ndim; d++) {
      const FritOnnx__TensorShapeProto__Dimension *dim = tt->shape->dim[d];
      s->dims[d] = dim->value_case == FRIT_ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && dim->dim_value >= 0
                       ? dim->dim_value : -1;
    }
  }
  s->name = strdup(name);
  return s->name ? FRIT_OK : frit_set_error(ctx, FRIT_ERR_NOMEM, "onnx: out of memory");
}

static bool is_initializer(const FritOnnx__GraphProto *g, const char *name) {
  for (size_t i = 0; i < g->n_initializer; i++)
    if (!strcmp(ox_s(g->initializer[i]->name), name)) return true;
  return false;
}

static int64_t ox_opset_of(const FritOnnx__ModelProto *p) {
  int64_t v = -1;
  for (size_t i = 0; i < p->n_opset_import; i++) {
    const char *d = ox_s(p->opset_import[i]->domain);
    if (!*d || !strcmp(d, "ai.onnx")) v = p->opset_import[i]->version;
  }
  return v;
}

/* Checks what can be checked before a call: the opset, that every op has a converter and that
 * every node has a name to report (its index otherwise). */
static frit_status check_graph(frit_ctx *ctx, ox_model *m) {
  const FritOnnx__ModelProto *p = m->proto;
  const FritOnnx__GraphProto *g = p->graph;
  for (size_t i = 0; i < g->n_node; i++) {
    const ox_node *n = g->node[i];
    const char *d = ox_s(n->domain);
    if (*d && strcmp(d, "ai.onnx"))
      return frit_set_error(ctx, FRIT_ERR_INVALID, "onnx: unsupported op '%s' of domain '%s' (node %zu '%s')",
                            ox_s(n->op_type), d, i, ox_s(n->name));
    if (!ox_find_op(ox_s(n->op_type)))
      return frit_set_error(ctx, FRIT_ERR_INVALID, "onnx: unsupported op '%s' (node %zu '%s', opset %lld)",
                            ox_s(n->op_type), i, ox_s(n->name), (long long)ox_opset_of(p));
  }
  m->opset = -1;
  for (size_t i = 0; i < p->n_opset_import; i++) {
    const char *d = ox_s(p->opset_import[i]->domain);
    if (!*d || !strcmp(d, "ai.onnx")) m->opset = p->opset_import[i]->version;
  }
  if (m->opset < 0)
    return frit_set_error(ctx, FRIT_ERR_INVALID, "onnx: the model imports no opset of the default domain");
  if (m->opset < OX_OPSET_MIN || m->opset > OX_OPSET_MAX)
    return frit_set_error(ctx, FRIT_ERR_INVALID, "onnx: unsupported opset %lld (frit reads opsets %d to %d)",
                          (long long)m->opset, OX_OPSET_MIN, OX_OPSET_MAX);
  return FRIT_OK;
}

/* Weight k of the signature from a TensorProto (an initializer or a Constant's value). */
static frit_status weight_sig(frit_ctx *ctx, const FritOnnx__TensorProto *t, const char *name, const char *base_dir,
                              model_value_sig *s) {
  char what[300];
  snprintf(what, sizeof what, "tensor '%s'", name);
  frit_status st = ox_tensor_data(ctx, t, base_dir, what, &s->dtype, &s->ndim, s->dims, &s->data);
  if (st) return st;
  s->name = strdup(name);
  return s->name ? FRIT_OK : frit_set_error(ctx, FRIT_ERR_NOMEM, "onnx: out of memory");
}

static frit_model *build_model(frit_ctx *ctx, FritOnnx__ModelProto *proto, const char *base_dir) {
  ox_model *m = calloc(1, sizeof *m);
  model_value_sig *ins = NULL, *outs = NULL;
  int nin = 0, nout = 0;
  if (!m) goto oom;
  m->proto = proto;
  if (!proto->graph) {
    frit_set_error(ctx, FRIT_ERR_PARSE, "onnx: the model has no graph");
    goto fail;
  }
  if (check_graph(ctx, m)) goto fail;
  const FritOnnx__GraphProto *g = proto->graph;
  size_t nconst = 0;
  for (size_t i = 0; i < g->n_node; i++)
    if (!strcmp(ox_s(g->node[i]->op_type), "Constant") && ox_attr(g->node[i], "value")) nconst++;
  size_t cap = g->n_input + g->n_initializer + nconst;
  if (cap > INT_MAX / 2 || g->n_output > INT_MAX / 2) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "onnx: too many inputs");
    goto fail;
  }
  ins = calloc(cap ? cap : 1, sizeof *ins);
  outs = calloc(g->n_output ? g->n_output : 1, sizeof *outs);
  if (!ins || !outs) goto oom;
  for (size_t i = 0; i < g->n_input; i++) {
    if (is_initializer(g, ox_s(g->input[i]->name))) continue; /* old models list weights as inputs */
    if (value_sig(ctx, g->input[i], "input", &ins[nin])) goto fail;
    nin++;
  }
  m->ninputs = nin;
  for (size_t i = 0; i < g->n_initializer; i++) {
    if (weight_sig(ctx, g->initializer[i], ox_s(g->initializer[i]->name), base_dir, &ins[nin])) goto fail;
    nin++;
  }
  for (size_t i = 0; i < g->n_node; i++) {
    const FritOnnx__AttributeProto *a = ox_attr(g->node[i], "value");
    if (strcmp(ox_s(g->node[i]->op_type), "Constant") || !a) continue;
    if (!a->t || g->node[i]->n_output < 1) {
      frit_set_error(ctx, FRIT_ERR_PARSE, "onnx: Constant node %zu '%s': no tensor value", i, ox_s(g->node[i]->name));
      goto fail;
    }
    if (weight_sig(ctx, a->t, ox_s(g->node[i]->output[0]), base_dir, &ins[nin])) goto fail;
    nin++;
  }
  m->nweights = nin - m->ninputs;
  m->weight_names = calloc((size_t)m->nweights + 1, sizeof *m->weight_names);
  m->weight_values = calloc((size_t)m->nweights + 1, sizeof *m->weight_values);
  if (!m->weight_names || !m->weight_values) goto oom;
  for (int k = 0; k < m->nweights; k++) {
    model_value_sig *s = &ins[m->ninputs + k];
    ox_const *c = &m->weight_values[k];
    m->weight_names[k] = s->name;
    c->dt = s->dtype, c->ndim = s->ndim, c->data = s->data, c->n = 1;
    for (int d = 0; d < s->ndim; d++) c->dims[d] = s->dims[d], c->n *= s->dims[d];
  }
  for (size_t i = 0; i < g->n_output; i++, nout++)
    if (value_sig(ctx, g->output[i], "output", &outs[i])) goto fail;
  return model_new(ctx, &ox_ops, m, nin, ins, nout, outs);
oom:
  frit_set_error(ctx, FRIT_ERR_NOMEM, "onnx: out of memory");
fail:
  for (int i = 0; i < nin; i++) free(ins[i].name), free(ins[i].data);
  for (int i = 0; i < nout; i++) free(outs[i].name);
  free(ins);
  free(outs);
  if (m) ox_model_destroy(m);
  else frit_onnx__model_proto__free_unpacked(proto, NULL);
  return NULL;
}

frit_model *frit_import_onnx(frit_ctx *ctx, const void *data, size_t len, const char *base_dir) {
  if (!data && len) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "frit_import_onnx: no data");
    return NULL;
  }
  FritOnnx__ModelProto *p = frit_onnx__model_proto__unpack(NULL, len, data);
  if (!p) {
    frit_set_error(ctx, FRIT_ERR_PARSE, "onnx: not a valid ModelProto (%zu bytes: truncated or not protobuf)", len);
    return NULL;
  }
  return build_model(ctx, p, base_dir);
}

frit_model *frit_import_onnx_file(frit_ctx *ctx, const char *path) {
  if (!path) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "frit_import_onnx_file: no path");
    return NULL;
  }
  FILE *f = fopen(path, "rb");
  if (!f) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "onnx: cannot open %s: %s", path, strerror(errno));
    return NULL;
  }
  size_t cap = 1 << 16, len = 0;
  uint8_t *buf = malloc(cap);
  while (buf) {
    size_t got = fread(buf + len, 1, cap - len, f);
    len += got;
    if (len < cap) break;
    uint8_t *nb = cap < SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
    if (!nb) free(buf);
    buf = nb, cap *= 2;
  }
  bool err = ferror(f);
  fclose(f);
  if (!buf || err) {
    frit_set_error(ctx, buf ? FRIT_ERR_INVALID : FRIT_ERR_NOMEM, "onnx: cannot read %s", path);
    free(buf);
    return NULL;
  }
  /* external data lives beside the model file */
  char *dir = strdup(path);
  if (!dir) {
    free(buf);
    frit_set_error(ctx, FRIT_ERR_NOMEM, "onnx: out of memory");
    return NULL;
  }
  char *slash = strrchr(dir, '/');
  if (slash) *slash = '\0';
  frit_model *m = frit_import_onnx(ctx, buf, len, slash ? (dir[0] ? dir : "/") : ".");
  free(buf);
  free(dir);
  return m;
}
