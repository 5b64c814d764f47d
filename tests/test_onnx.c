/* The ONNX importer from C: a small model read from memory and from a file with external data,
 * built and run; every truncation and many corruptions of it fail cleanly; unsupported ops,
 * opsets and dtypes are errors naming what and where. Without protobuf-c: the stub's message. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "frit.h"
#include "onnx_pb.h"

static int contains(const char *s, const char *part) { return s && strstr(s, part) != NULL; }

/* Builds the model on fresh inputs, compiles (interpreted) and runs it on x; y gets 3 values. */
static int run_model(frit_ctx *ctx, frit_model *m, const float *x, float *y) {
  int nin = frit_model_num_inputs(m);
  frit_tensor *args[8], *outs[4];
  if (nin > 8 || frit_model_inputs(ctx, m, args) || frit_model_call(ctx, m, args, nin, outs)) return 1;
  frit_compile_opts o;
  memset(&o, 0, sizeof o);
  o.interpret = 1;
  frit_program *p = frit_compile(ctx, outs, 1, &o);
  if (!p) return 1;
  void *in[8];
  for (int i = 0; i < frit_program_num_inputs(p); i++) {
    const char *nm = frit_program_input_name(p, i);
    in[i] = NULL;
    for (int k = 0; k < nin; k++)
      if (!strcmp(nm, frit_model_value_name(m, 0, k))) in[i] = k == 0 ? (void *)x : (void *)frit_model_weight_data(m, k);
    if (!in[i]) return 1;
  }
  void *out[1] = {y};
  return frit_program_run(p, in, out, NULL, 0) != FRIT_OK;
}

static void test_basic(frit_ctx *ctx, const pb *model) {
  frit_model *m = frit_import_onnx(ctx, model->p, model->n, NULL);
  CHECK(m != NULL);
  if (!m) {
    fprintf(stderr, "import: %s\n", frit_error(ctx));
    return;
  }
  CHECK_EQ_INT(frit_model_num_inputs(m), 3);
  CHECK_EQ_INT(frit_model_num_weights(m), 2);
  CHECK_EQ_STR(frit_model_value_name(m, 0, 0), "x");
  CHECK_EQ_INT(frit_model_value_dtype(m, 1, 0), FRIT_F32);
  const float x[3] = {0.5f, 1.0f, -1.0f};
  float y[3] = {0};
  CHECK_EQ_INT(run_model(ctx, m, x, y), 0);
  const float want[3] = {3.0f, 0.0f, 0.0f};
  for (int i = 0; i < 3; i++) CHECK(y[i] == want[i]);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CHECK_EQ_INT(frit_model_print(ctx, m, f), FRIT_OK);
  fclose(f);
  CHECK(contains(buf, "Add 'add0' (x, w) -> (s)"));
  CHECK(contains(buf, "Reshape 'reshape0'"));
  free(buf);
}

/* Each prefix of the model and each byte flipped: a model or NULL with a message, never a crash
 * (the ASan run of this test is where that shows). */
static void test_corrupt(const pb *model) {
  int failed_quietly = 0;
  for (size_t n = 0; n < model->n; n++) {
    frit_ctx *ctx = frit_ctx_new();
    frit_model *m = frit_import_onnx(ctx, model->p, n, NULL);
    if (!m && !frit_error(ctx)[0]) failed_quietly++;
    frit_ctx_free(ctx);
  }
  uint8_t *copy = malloc(model->n);
  for (size_t i = 0; i < model->n; i++)
    for (int bit = 0; bit < 8; bit += 3) {
      memcpy(copy, model->p, model->n);
      copy[i] ^= (uint8_t)(1u << bit);
      frit_ctx *ctx = frit_ctx_new();
      frit_model *m = frit_import_onnx(ctx, copy, model->n, NULL);
      if (m) {
        /* a model that still parses is built too: its converters see the corrupt values */
        frit_tensor *args[8], *outs[4];
        if (frit_model_num_inputs(m) <= 8 && frit_model_num_outputs(m) <= 4 && !frit_model_inputs(ctx, m, args))
          (void)frit_model_call(ctx, m, args, frit_model_num_inputs(m), outs);
      } else if (!frit_error(ctx)[0]) {
        failed_quietly++;
      }
      frit_ctx_free(ctx);
    }
  free(copy);
  CHECK_EQ_INT(failed_quietly, 0);
  frit_ctx *ctx = frit_ctx_new();
  CHECK(frit_import_onnx(ctx, "\xff\xff\xff\xff", 4, NULL) == NULL);
  CHECK(contains(frit_error(ctx), "not a valid ModelProto"));
  frit_ctx_free(ctx);
}

static void test_errors(void) {
  int64_t d3[1] = {3};
  frit_ctx *ctx = frit_ctx_new();
  /* an op frit lacks: its name and the node's */
  pb g = {0};
  pb_node(&g, "FancyOp", "node_seven", "x", NULL, "y");
  pb_value_info(&g, 11, "x", 1, 1, d3);
  pb_value_info(&g, 12, "y", 1, 1, d3);
  pb m = pb_model(&g, 17);
  CHECK(frit_import_onnx(ctx, m.p, m.n, NULL) == NULL);
  CHECK(contains(frit_error(ctx), "unsupported op 'FancyOp'") && contains(frit_error(ctx), "node_seven"));
  free(m.p);
  /* an opset newer than 21 */
  pb_node(&g, "Relu", "r", "x", NULL, "y");
  pb_value_info(&g, 11, "x", 1, 1, d3);
  pb_value_info(&g, 12, "y", 1, 1, d3);
  m = pb_model(&g, 22);
  CHECK(frit_import_onnx(ctx, m.p, m.n, NULL) == NULL);
  CHECK(contains(frit_error(ctx), "unsupported opset 22"));
  free(m.p);
  /* a string input */
  pb_node(&g, "Identity", "id", "x", NULL, "y");
  pb_value_info(&g, 11, "x", 8, 1, d3);
  pb_value_info(&g, 12, "y", 8, 1, d3);
  m = pb_model(&g, 17);
  CHECK(frit_import_onnx(ctx, m.p, m.n, NULL) == NULL);
  CHECK(contains(frit_error(ctx), "STRING"));
  free(m.p);
  /* a Reshape whose shape is a run-time input: an error at call time naming the node */
  pb_node(&g, "Reshape", "reshape_rt", "x", "shape", "y");
  pb_value_info(&g, 11, "x", 1, 1, d3);
  pb_value_info(&g, 11, "shape", 7, 1, (int64_t[]){1});
  pb_value_info(&g, 12, "y", 1, 1, d3);
  m = pb_model(&g, 17);
  frit_model *mod = frit_import_onnx(ctx, m.p, m.n, NULL);
  CHECK(mod != NULL);
  frit_tensor *args[2], *outs[1];
  if (mod) {
    CHECK_EQ_INT(frit_model_inputs(ctx, mod, args), FRIT_OK);
    CHECK(frit_model_call(ctx, mod, args, 2, outs) != FRIT_OK);
    CHECK(contains(frit_error(ctx), "Reshape node 'reshape_rt'") && contains(frit_error(ctx), "'shape'"));
  }
  free(m.p);
  frit_ctx_free(ctx);
}

/* The initializer's values in a file beside the model. */
static void test_external(void) {
  char dir[] = "/tmp/frit_onnx_XXXXXX";
  if (!mkdtemp(dir)) {
    CHECK(0);
    return;
  }
  char path[256], wpath[256];
  snprintf(path, sizeof path, "%s/model.onnx", dir);
  snprintf(wpath, sizeof wpath, "%s/weights.bin", dir);
  const float wv[4] = {9, 1.0f, -2.0f, 0.5f}; /* one float of padding before the tensor */
  FILE *f = fopen(wpath, "wb");
  fwrite(wv, sizeof wv, 1, f);
  fclose(f);
  int64_t d3[1] = {3};
  pb g = {0}, w = {0}, e = {0};
  pb_node(&g, "Add", "add0", "x", "w", "y");
  pb_int(&w, 1, 3);
  pb_int(&w, 2, 1);
  pb_str(&w, 8, "w");
  pb_str(&e, 1, "location"), pb_str(&e, 2, "weights.bin"), pb_msg(&w, 13, &e);
  pb_str(&e, 1, "offset"), pb_str(&e, 2, "4"), pb_msg(&w, 13, &e);
  pb_str(&e, 1, "length"), pb_str(&e, 2, "12"), pb_msg(&w, 13, &e);
  pb_int(&w, 14, 1);
  pb_msg(&g, 5, &w);
  pb_value_info(&g, 11, "x", 1, 1, d3);
  pb_value_info(&g, 12, "y", 1, 1, d3);
  pb m = pb_model(&g, 17);
  f = fopen(path, "wb");
  fwrite(m.p, m.n, 1, f);
  fclose(f);
  frit_ctx *ctx = frit_ctx_new();
  frit_model *mod = frit_import_onnx_file(ctx, path);
  CHECK(mod != NULL);
  if (mod) {
    const float *data = frit_model_weight_data(mod, 1);
    CHECK(data && data[0] == 1.0f && data[1] == -2.0f && data[2] == 0.5f);
  }
  /* from memory there is no directory to look in */
  CHECK(frit_import_onnx(ctx, m.p, m.n, NULL) == NULL);
  CHECK(contains(frit_error(ctx), "weights.bin"));
  frit_ctx_free(ctx);
  free(m.p);
  remove(path);
  remove(wpath);
  rmdir(dir);
}

int main(void) {
  pb model = pb_sample_model();
  frit_ctx *ctx = frit_ctx_new();
  frit_model *m = frit_import_onnx(ctx, model.p, model.n, NULL);
  if (!m && contains(frit_error(ctx), "built without protobuf-c")) {
    CHECK(contains(frit_error(ctx), "apt-get install libprotobuf-c-dev protobuf-c-compiler"));
    CHECK(frit_import_onnx_file(ctx, "/nonexistent.onnx") == NULL);
    fprintf(stderr, "test_onnx: frit built without protobuf-c; only the stub is checked\n");
  } else {
    test_basic(ctx, &model);
    test_corrupt(&model);
    test_errors();
    test_external();
  }
  frit_ctx_free(ctx);
  free(model.p);
  CHECK_DONE();
}
