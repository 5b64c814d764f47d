/* frit import FILE [--print] [--graph]: the model's signature and its ops as parsed (with source
 * locations and what frit cannot run), or the frit tensor graph it builds. */
#include "cli/import.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frit.h"

static char *read_all(const char *path, size_t *len) {
  FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (n < cap) break;
    char *nb = realloc(buf, cap *= 2);
    if (!nb) {
      free(buf);
      buf = NULL;
    }
    buf = nb;
  }
  if (f != stdin) fclose(f);
  *len = n;
  return buf;
}

static int ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && !strcmp(s + a - b, suffix);
}

static void print_sig(frit_model *m, int output, int k) {
  int64_t dims[FRIT_MAX_DIMS];
  char dt[32];
  int nd = frit_model_value_shape(m, output, k, dims);
  printf("  %s %d %s: %s[", output ? "output" : "input", k, frit_model_value_name(m, output, k),
         frit_dtype_name(frit_model_value_dtype(m, output, k), dt, sizeof dt));
  for (int d = 0; d < nd; d++) {
    if (dims[d] < 0) printf("%s?", d ? ", " : "");
    else printf("%s%lld", d ? ", " : "", (long long)dims[d]);
  }
  printf("]%s\n", !output && frit_model_weight_data(m, k) ? " (weight)" : "");
}

int cli_import(int argc, char **argv) {
  const char *file = NULL;
  int graph = 0;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--print")) continue;
    if (!strcmp(argv[i], "--graph")) graph = 1;
    else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "frit: unknown option '%s'\n", argv[i]);
      return 2;
    } else if (file) {
      fprintf(stderr, "frit: unexpected argument '%s'\n", argv[i]);
      return 2;
    } else {
      file = argv[i];
    }
  }
  if (!file) {
    fprintf(stderr, "frit: usage: frit import FILE.mlir|FILE.onnx [--print] [--graph]\n");
    return 2;
  }
  frit_ctx *ctx = frit_ctx_new();
  if (!ctx) return 2;
  frit_model *m = NULL;
  if (ends_with(file, ".onnx")) {
    m = frit_import_onnx_file(ctx, file);
  } else {
    size_t len = 0;
    char *text = read_all(file, &len);
    if (!text) {
      fprintf(stderr, "frit: cannot read %s\n", file);
      frit_ctx_free(ctx);
      return 2;
    }
    m = frit_import_stablehlo(ctx, text, len);
    free(text);
  }
  int rc = 0;
  if (!m) {
    fprintf(stderr, "frit: %s: %s\n", file, frit_error(ctx));
    rc = 2;
  } else if (graph) {
    frit_tensor *args[512], *outs[512];
    int nin = frit_model_num_inputs(m), nout = frit_model_num_outputs(m);
    if (nin > 512 || nout > 512 || frit_model_inputs(ctx, m, args) || frit_model_call(ctx, m, args, nin, outs)) {
      fprintf(stderr, "frit: %s: %s\n", file, nin > 512 || nout > 512 ? "more than 512 values" : frit_error(ctx));
      rc = 2;
    }
    for (int k = 0; !rc && k < nout; k++) {
      printf("output %d (%s):\n", k, frit_model_value_name(m, 1, k));
      frit_print_listing(ctx, frit_tensor_uop(outs[k]), stdout);
    }
  } else {
    printf("%s: %d inputs (%d weights), %d outputs\n", file, frit_model_num_inputs(m), frit_model_num_weights(m),
           frit_model_num_outputs(m));
    for (int k = 0; k < frit_model_num_inputs(m); k++) print_sig(m, 0, k);
    for (int k = 0; k < frit_model_num_outputs(m); k++) print_sig(m, 1, k);
    frit_model_print(ctx, m, stdout);
  }
  frit_ctx_free(ctx);
  return rc;
}
