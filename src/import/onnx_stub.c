/* Placeholder for the ONNX importer until src/import/onnx lands: both entry points report that
 * ONNX import is not built in. */
#include "frit.h"
#include "ir/uop.h"

frit_model *frit_import_onnx(frit_ctx *ctx, const void *data, size_t len, const char *base_dir) {
  (void)data, (void)len, (void)base_dir;
  frit_set_error(ctx, FRIT_ERR_INVALID, "frit_import_onnx: this frit was built without the ONNX importer");
  return NULL;
}

frit_model *frit_import_onnx_file(frit_ctx *ctx, const char *path) { return frit_import_onnx(ctx, path, 0, NULL); }
