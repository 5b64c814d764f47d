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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  frit_ctx *ctx = frit_ctx_new();
  if (!ctx) return 0;
  frit_model *m = frit_import_onnx(ctx, data, size, NULL);
  if (m) {
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
  frit_ctx_free(ctx);
  return 0;
}

#ifdef FRIT_FUZZ_DRIVER
/* The fallback driver: fuzz_onnx SECONDS FILE... runs each file, then mutations of them (byte
 * flips, truncations, splices, inserted varints) until SECONDS have passed. */
#include <time.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s SECONDS FILE...\n", argv[0]);
    return 2;
  }
  double secs = atof(argv[1]);
  int n = argc - 2;
  uint8_t **bufs = calloc((size_t)n, sizeof *bufs);
  size_t *lens = calloc((size_t)n, sizeof *lens);
  for (int i = 0; i < n; i++) {
    FILE *f = fopen(argv[i + 2], "rb");
    if (!f) continue;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    bufs[i] = malloc(len > 0 ? (size_t)len : 1);
    lens[i] = fread(bufs[i], 1, len > 0 ? (size_t)len : 0, f);
    fclose(f);
    LLVMFuzzerTestOneInput(bufs[i], lens[i]);
  }
  time_t start = time(NULL);
  long runs = 0;
  while (difftime(time(NULL), start) < secs) {
    int k = (int)(next_rand() % (uint64_t)n);
    if (!bufs[k] || !lens[k]) continue;
    size_t len = lens[k];
    uint8_t *b = malloc(len + 16);
    memcpy(b, bufs[k], len);
    int edits = 1 + (int)(next_rand() % 4);
    for (int e = 0; e < edits; e++) {
      switch (next_rand() % 4) {
      case 0: b[next_rand() % len] ^= (uint8_t)(1u << (next_rand() % 8)); break;
      case 1: len = 1 + next_rand() % len; break;
      case 2: b[next_rand() % len] = (uint8_t)next_rand(); break;
      default: /* a large varint where a length or value was */
        memset(b + next_rand() % len, 0xff, 1 + next_rand() % (len < 4 ? len : 4));
        break;
      }
      if (len > lens[k]) len = lens[k];
    }
    LLVMFuzzerTestOneInput(b, len);
    free(b);
    runs++;
  }
  fprintf(stderr, "fuzz_onnx: %ld mutated inputs in %.0f s, no crash\n", runs, secs);
  for (int i = 0; i < n; i++) free(bufs[i]);
  free(bufs);
  free(lens);
  return 0;
}
#endif
