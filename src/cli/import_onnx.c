/* `frit import FILE.onnx --print` (src/cli/import_onnx.h): reads the model with frit_import_onnx_file
 * and prints its signature and frit_model_print's listing. */
#include "cli/import_onnx.h"

#include "frit.h"

static void print_value(frit_model *m, int output, int k, FILE *out) {
  char dt[32];
  int64_t dims[FRIT_MAX_DIMS];
  int nd = frit_model_value_shape(m, output, k, dims);
  fprintf(out, "  %s %s: %s", output ? "output" : k >= frit_model_num_inputs(m) - frit_model_num_weights(m) ? "weight" : "input",
          frit_model_value_name(m, output, k), frit_dtype_name(frit_model_value_dtype(m, output, k), dt, sizeof dt));
  if (nd < 0) {
    fprintf(out, "[?]\n");
    return;
  }
  fprintf(out, "[");
  for (int d = 0; d < nd; d++) {
    if (dims[d] < 0) fprintf(out, "%s?", d ? ", " : "");
    else fprintf(out, "%s%lld", d ? ", " : "", (long long)dims[d]);
  }
  fprintf(out, "]\n");
}

int cli_import_onnx(const char *path, int print, FILE *out, FILE *err) {
  frit_ctx *ctx = frit_ctx_new();
  if (!ctx) return 1;
  frit_model *m = frit_import_onnx_file(ctx, path);
  if (!m) {
    fprintf(err, "frit import: %s\n", frit_error(ctx));
    frit_ctx_free(ctx);
    return 1;
  }
  if (print) {
    for (int k = 0; k < frit_model_num_inputs(m); k++) print_value(m, 0, k, out);
    for (int k = 0; k < frit_model_num_outputs(m); k++) print_value(m, 1, k, out);
    frit_model_print(ctx, m, out);
  }
  frit_ctx_free(ctx);
  return 0;
}
