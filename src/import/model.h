/* An imported model (StableHLO module, ONNX graph): its signature and how to build its graph on
 * given argument tensors. Each importer fills one of these; the public frit_model_* calls use it. */
#ifndef FRIT_IMPORT_MODEL_H
#define FRIT_IMPORT_MODEL_H

#include "frit.h"

typedef struct model_value_sig {
  char *name;                       /* malloc'd; never NULL ("" when the format has none) */
  frit_dtype dtype;
  int ndim;                         /* -1: rank unknown */
  int64_t dims[FRIT_MAX_DIMS];      /* -1: dynamic */
  void *data;                       /* weights only: malloc'd C-order values (freed with the model) */
} model_value_sig;

typedef struct model_ops {
  const char *format;               /* "stablehlo", "onnx" */
  /* Builds the outputs from args (nargs == number of inputs, already checked against the
   * signature's ranks and dtypes). Returns FRIT_OK or an error left in ctx. */
  frit_status (*call)(frit_ctx *ctx, void *impl, frit_tensor *const *args, frit_tensor **outs);
  /* A readable listing of the model as parsed (functions, ops, with their source locations). */
  frit_status (*print)(frit_ctx *ctx, void *impl, FILE *out);
  void (*destroy)(void *impl);
} model_ops;

struct frit_model {
  const model_ops *ops;
  void *impl;
  int ninputs, noutputs;
  int nweights;                     /* the last nweights inputs are weights (data set) */
  model_value_sig *inputs, *outputs; /* malloc'd arrays */
};

/* A new model owned by ctx (freed with it): takes impl (destroyed through ops->destroy, also on
 * failure) and the two signature arrays with their names and data. The inputs with data
 * (weights) must come after those without. NULL when out of memory. */
frit_model *model_new(frit_ctx *ctx, const model_ops *ops, void *impl, int ninputs,
                      model_value_sig *inputs, int noutputs, model_value_sig *outputs);

#endif
