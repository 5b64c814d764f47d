/* libFuzzer harness of the ONNX importer: any bytes as a ModelProto; a model that parses is also
 * built on fresh inputs (its converters see whatever values the bytes hold). Nothing may crash,
 * leak or read out of bounds; errors are fine. Built by `make fuzz-import` / `fuzz-import-short`
 * (clang -fsanitize=fuzzer,address), or with -DFRIT_FUZZ_DRIVER as a plain program that runs the
 * corpus and random mutations of it when libFuzzer is not available. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frit.h"
#include "fuzz_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  frit_ctx *ctx = frit_ctx_new();
  if (!ctx) return 0;
  frit_model *m = frit_import_onnx(ctx, data, size, NULL);
  if (m) fuzz_model(ctx, m);
  frit_ctx_free(ctx);
  return 0;
}

#define FUZZ_NAME "fuzz_onnx"
#include "driver.h"
