/* frit_import_onnx when frit is built without protobuf-c (the Makefile then builds this file
 * instead of onnx/): the entry points exist (the ABI does not depend on the build) and say what to
 * install. */
#include "frit.h"
#include "ir/uop.h"

static frit_model *no_onnx(frit_ctx *ctx) {
  frit_set_error(ctx, FRIT_ERR_INVALID,
                 "frit was built without protobuf-c (apt-get install libprotobuf-c-dev protobuf-c-compiler)");
  return NULL;
}

frit_model *frit_import_onnx(frit_ctx *ctx, const void *data, size_t len, const char *base_dir) {
  (void)data, (void)len, (void)base_dir;
  return no_onnx(ctx);
}

frit_model *frit_import_onnx_file(frit_ctx *ctx, const char *path) {
  (void)path;
  return no_onnx(ctx);
}
