/* The public frit_model_* calls: signature queries, calling an imported model on tensors, and
 * printing it. The formats' parsers live beside this file (stablehlo/, onnx/). */
#include "import/model.h"

#include <stdlib.h>
#include <string.h>

#include "ir/uop.h"

static void free_sigs(model_value_sig *sigs, int n) {
  for (int i = 0; i < n; i++) {
    free(sigs[i].name);
    free(sigs[i].data);
  }
  free(sigs);
}

static void model_destroy(void *p) {
  frit_model *m = p;
  if (m->impl && m->ops->destroy) m->ops->destroy(m->impl);
  free_sigs(m->inputs, m->ninputs);
  free_sigs(m->outputs, m->noutputs);
  free(m);
}

frit_model *model_new(frit_ctx *ctx, const model_ops *ops, void *impl, int ninputs,
                      model_value_sig *inputs, int noutputs, model_value_sig *outputs) {
  frit_model *m = calloc(1, sizeof *m);
  if (!m) {
    if (impl && ops->destroy) ops->destroy(impl);
    free_sigs(inputs, ninputs);
    free_sigs(outputs, noutputs);
    frit_set_error(ctx, FRIT_ERR_NOMEM, "import: out of memory");
    return NULL;
  }
  m->ops = ops;
  m->impl = impl;
  m->ninputs = ninputs;
  m->inputs = inputs;
  m->noutputs = noutputs;
  m->outputs = outputs;
  while (m->nweights < ninputs && inputs[ninputs - 1 - m->nweights].data) m->nweights++;
  for (int i = 0; i < ninputs - m->nweights; i++) FRIT_ASSERT(!inputs[i].data);
  if (!frit_ctx_own(ctx, m, model_destroy)) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "import: out of memory");
    return NULL;
  }
  return m;
}

int frit_model_num_inputs(const frit_model *m) { return m ? m->ninputs : 0; }
int frit_model_num_outputs(const frit_model *m) { return m ? m->noutputs : 0; }
int frit_model_num_weights(const frit_model *m) { return m ? m->nweights : 0; }

const void *frit_model_weight_data(const frit_model *m, int k) {
  return m && k >= 0 && k < m->ninputs ? m->inputs[k].data : NULL;
}

static const model_value_sig *model_sig(const frit_model *m, int output, int k) {
  if (!m) return NULL;
  if (output) return k >= 0 && k < m->noutputs ? &m->outputs[k] : NULL;
  return k >= 0 && k < m->ninputs ? &m->inputs[k] : NULL;
}

const char *frit_model_value_name(const frit_model *m, int output, int k) {
  const model_value_sig *s = model_sig(m, output, k);
  return s ? s->name : NULL;
}

frit_dtype frit_model_value_dtype(const frit_model *m, int output, int k) {
  const model_value_sig *s = model_sig(m, output, k);
  return s ? s->dtype : FRIT_VOID;
}

int frit_model_value_shape(const frit_model *m, int output, int k, int64_t *dims) {
  const model_value_sig *s = model_sig(m, output, k);
  if (!s) return -1;
  for (int d = 0; d < s->ndim; d++) dims[d] = s->dims[d];
  return s->ndim;
}

static const char *dtype_str(frit_dtype dt, char *buf) { return frit_dtype_name(dt, buf, 32); }

frit_status frit_model_call(frit_ctx *ctx, frit_model *m, frit_tensor *const *args, int nargs,
                            frit_tensor **outs) {
  if (!m) return frit_set_error(ctx, FRIT_ERR_INVALID, "frit_model_call: no model");
  if (nargs != m->ninputs)
    return frit_set_error(ctx, FRIT_ERR_INVALID, "%s model: %d arguments given, the model takes %d",
                          m->ops->format, nargs, m->ninputs);
  for (int i = 0; i < nargs; i++) {
    const model_value_sig *s = &m->inputs[i];
    if (!args[i]) return frit_last_status(ctx) ? frit_last_status(ctx) : FRIT_ERR_INVALID;
    char want[32], got[32];
    int nd = frit_tensor_ndim(args[i]);
    if (frit_tensor_dtype(args[i]) != s->dtype || (s->ndim >= 0 && nd != s->ndim))
      return frit_set_error(ctx, FRIT_ERR_INVALID,
                            "%s model: argument %d (%s) is %s%s, the model takes %s of rank %d",
                            m->ops->format, i, s->name, dtype_str(frit_tensor_dtype(args[i]), got),
                            frit_tensor_shape_str(ctx, args[i]), dtype_str(s->dtype, want), s->ndim);
    for (int d = 0; d < nd && s->ndim >= 0; d++) {
      int64_t have = frit_tensor_dim_static(args[i], d);
      if (s->dims[d] >= 0 && have >= 0 && have != s->dims[d])
        return frit_set_error(ctx, FRIT_ERR_INVALID,
                              "%s model: argument %d (%s) has shape %s, axis %d must be %lld",
                              m->ops->format, i, s->name, frit_tensor_shape_str(ctx, args[i]), d,
                              (long long)s->dims[d]);
    }
  }
  for (int k = 0; k < m->noutputs; k++) outs[k] = NULL;
  return m->ops->call(ctx, m->impl, args, outs);
}

frit_status frit_model_print(frit_ctx *ctx, frit_model *m, FILE *out) {
  if (!m) return frit_set_error(ctx, FRIT_ERR_INVALID, "frit_model_print: no model");
  return m->ops->print(ctx, m->impl, out);
}

frit_status frit_model_inputs(frit_ctx *ctx, frit_model *m, frit_tensor **args) {
  if (!m) return frit_set_error(ctx, FRIT_ERR_INVALID, "frit_model_inputs: no model");
  for (int i = 0; i < m->ninputs; i++) {
    const model_value_sig *s = &m->inputs[i];
    if (s->ndim < 0)
      return frit_set_error(ctx, FRIT_ERR_INVALID, "%s model: input %d (%s) has an unknown rank",
                            m->ops->format, i, s->name);
    frit_uop *dims[FRIT_MAX_DIMS];
    for (int d = 0; d < s->ndim; d++) {
      if (s->dims[d] >= 0) {
        dims[d] = frit_const_int(ctx, FRIT_I64, s->dims[d]);
      } else {
        char nm[64];
        snprintf(nm, sizeof nm, "in%d_d%d", i, d);
        dims[d] = frit_var(ctx, nm, 0, INT32_MAX);
      }
      if (!dims[d]) return frit_last_status(ctx);
    }
    char nm[32];
    snprintf(nm, sizeof nm, "in%d", i);
    args[i] = frit_input_sym(ctx, s->name[0] ? s->name : nm, s->dtype, s->ndim, dims);
    if (!args[i]) return frit_last_status(ctx);
  }
  return FRIT_OK;
}
