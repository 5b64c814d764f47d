/* What the importers' fuzz harnesses do with a model that was read: print it, and build it on
 * fresh inputs (its ops see whatever values the bytes hold). Errors are fine; crashes are not. */
#ifndef FRIT_FUZZ_MODEL_H
#define FRIT_FUZZ_MODEL_H
#include <stdio.h>
#include <stdlib.h>

#include "frit.h"

static void fuzz_model(frit_ctx *ctx, frit_model *m) {
  int nin = frit_model_num_inputs(m), nout = frit_model_num_outputs(m);
  frit_tensor **args = calloc((size_t)nin + 1, sizeof *args), **outs = calloc((size_t)nout + 1, sizeof *outs);
  FILE *devnull = fopen("/dev/null", "w");
  if (devnull) {
    frit_model_print(ctx, m, devnull);
    fclose(devnull);
  }
  if (args && outs && frit_model_inputs(ctx, m, args) == FRIT_OK) (void)frit_model_call(ctx, m, args, nin, outs);
  free(args);
  free(outs);
}
#endif
