/* libFuzzer harness of the StableHLO importer: any bytes as module text; a module that parses is
 * also built on fresh inputs and printed. Nothing may crash, leak or read out of bounds; errors
 * are fine. Seeds: tests/fuzz/stablehlo_seeds (modules jax printed, pretty and generic). Built by
 * tests/fuzz/run_fuzz.sh (make fuzz-import, fuzz-import-short); -DFRIT_FUZZ_DRIVER adds a main
 * (driver.h) for machines without libFuzzer. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "frit.h"
#include "fuzz_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  frit_ctx *ctx = frit_ctx_new();
  if (!ctx) return 0;
  frit_model *m = frit_import_stablehlo(ctx, (const char *)data, size);
  if (m) fuzz_model(ctx, m);
  frit_ctx_free(ctx);
  return 0;
}

#define FUZZ_NAME "fuzz_stablehlo"
#include "driver.h"
