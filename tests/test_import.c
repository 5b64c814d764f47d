/* The StableHLO importer from C: small modules (pretty and generic form) compiled and run, with
 * the expected values computed here in plain C; errors with their line and column; and a fast
 * fuzz pass of mangled modules that must give errors, never crashes (this test runs under
 * ASan/UBSan in CI). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "frit.h"

/* relu(x @ w + b) summed over the rows, in a private function called from main */
static const char *MLP =
    "module @m {\n"
    "  func.func public @main(%x: tensor<3x4xf32>, %w: tensor<4x2xf32>, %b: tensor<2xf32>) -> (tensor<2xf32>) {\n"
    "    %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>\n"
    "    %1 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<2xf32>) -> tensor<3x2xf32>\n"
    "    %2 = stablehlo.add %0, %1 : tensor<3x2xf32>\n"
    "    %3 = call @relu(%2) : (tensor<3x2xf32>) -> tensor<3x2xf32>\n"
    "    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>\n"
    "    %4 = stablehlo.reduce(%3 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<3x2xf32>, tensor<f32>) -> tensor<2xf32>\n"
    "    return %4 : tensor<2xf32>\n"
    "  }\n"
    "  func.func private @relu(%a: tensor<3x2xf32>) -> tensor<3x2xf32> {\n"
    "    %z = stablehlo.constant dense<0.0> : tensor<3x2xf32>\n"
    "    %r = stablehlo.maximum %a, %z : tensor<3x2xf32>\n"
    "    return %r : tensor<3x2xf32>\n"
    "  }\n"
    "}\n";

/* while i < n: (i + 1, s * 2 + [1, 2, 3] (a literal array: a weight)) in the generic form */
static const char *LOOP =
    "\"builtin.module\"() ({\n"
    "  \"func.func\"() <{function_type = (tensor<i32>, tensor<3xf32>) -> tensor<3xf32>, sym_name = \"main\"}> ({\n"
    "  ^bb0(%n: tensor<i32>, %s0: tensor<3xf32>):\n"
    "    %c0 = \"stablehlo.constant\"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>\n"
    "    %r:2 = \"stablehlo.while\"(%c0, %s0) ({\n"
    "    ^bb0(%i: tensor<i32>, %s: tensor<3xf32>):\n"
    "      %p = \"stablehlo.compare\"(%i, %n) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "      \"stablehlo.return\"(%p) : (tensor<i1>) -> ()\n"
    "    }, {\n"
    "    ^bb0(%i: tensor<i32>, %s: tensor<3xf32>):\n"
    "      %one = \"stablehlo.constant\"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>\n"
    "      %i2 = \"stablehlo.add\"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>\n"
    "      %two = \"stablehlo.constant\"() <{value = dense<2.0> : tensor<3xf32>}> : () -> tensor<3xf32>\n"
    "      %k = \"stablehlo.constant\"() <{value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>}> : () -> tensor<3xf32>\n"
    "      %m = \"stablehlo.multiply\"(%s, %two) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>\n"
    "      %s2 = \"stablehlo.add\"(%m, %k) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>\n"
    "      \"stablehlo.return\"(%i2, %s2) : (tensor<i32>, tensor<3xf32>) -> ()\n"
    "    }) : (tensor<i32>, tensor<3xf32>) -> (tensor<i32>, tensor<3xf32>)\n"
    "    \"func.return\"(%r#1) : (tensor<3xf32>) -> ()\n"
    "  }) : () -> ()\n"
    "}) : () -> ()\n";

/* Builds m on new inputs, compiles, runs on ins, and returns the program (owned by ctx). */
static int run_model(frit_ctx *ctx, frit_model *m, void *const *ins, void *const *outs) {
  frit_tensor *args[16], *res[16];
  int nin = frit_model_num_inputs(m);
  void *bufs[16];
  if (frit_model_inputs(ctx, m, args) || frit_model_call(ctx, m, args, nin, res)) return 1;
  for (int i = 0; i < nin; i++) bufs[i] = frit_model_weight_data(m, i) ? (void *)frit_model_weight_data(m, i) : ins[i];
  frit_program *p = frit_compile(ctx, res, frit_model_num_outputs(m), NULL);
  return !p || frit_program_run(p, bufs, outs, NULL, 0);
}

/* The module imported, or NULL with the error printed, a failed check counted and ctx freed. */
static frit_model *import_or_report(frit_ctx *ctx, const char *text) {
  frit_model *m = frit_import_stablehlo(ctx, text, strlen(text));
  CHECK(m != NULL);
  if (!m) {
    fprintf(stderr, "%s\n", frit_error(ctx));
    frit_ctx_free(ctx);
  }
  return m;
}

static void test_mlp(void) {
  frit_ctx *ctx = frit_ctx_new();
  frit_model *m = import_or_report(ctx, MLP);
  if (!m) return;
  CHECK_EQ_INT(frit_model_num_inputs(m), 3);
  CHECK_EQ_INT(frit_model_num_weights(m), 0);
  CHECK_EQ_INT(frit_model_num_outputs(m), 1);
  int64_t dims[FRIT_MAX_DIMS];
  CHECK_EQ_INT(frit_model_value_shape(m, 0, 1, dims), 2);
  CHECK_EQ_INT(dims[0], 4);
  CHECK_EQ_INT(frit_model_value_dtype(m, 1, 0), FRIT_F32);
  float x[12], w[8], b[2] = {0.5f, -3.0f}, got[2] = {0, 0}, want[2] = {0, 0};
  for (int i = 0; i < 12; i++) x[i] = (float)(i % 5) - 1.5f;
  for (int i = 0; i < 8; i++) w[i] = 0.25f * (float)(i - 3);
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 2; c++) {
      float acc = b[c];
      for (int k = 0; k < 4; k++) acc += x[r * 4 + k] * w[k * 2 + c];
      want[c] += acc > 0 ? acc : 0;
    }
  void *ins[3] = {x, w, b}, *outs[1] = {got};
  CHECK(run_model(ctx, m, ins, outs) == 0);
  for (int c = 0; c < 2; c++) CHECK(fabsf(got[c] - want[c]) < 1e-5f);
  frit_ctx_free(ctx);
}

static void test_generic_while_and_weight(void) {
  frit_ctx *ctx = frit_ctx_new();
  frit_model *m = import_or_report(ctx, LOOP);
  if (!m) return;
  CHECK_EQ_INT(frit_model_num_inputs(m), 3);
  CHECK_EQ_INT(frit_model_num_weights(m), 1);
  CHECK(frit_model_weight_data(m, 0) == NULL && frit_model_weight_data(m, 2) != NULL);
  for (int n = 0; n <= 4; n += 2) {
    int32_t nn = n;
    float s[3] = {1, -1, 0.5f}, got[3], want[3] = {1, -1, 0.5f};
    for (int it = 0; it < n; it++)
      for (int j = 0; j < 3; j++) want[j] = want[j] * 2 + (float)(j + 1);
    void *ins[3] = {&nn, s, NULL}, *outs[1] = {got};
    CHECK(run_model(ctx, m, ins, outs) == 0);
    for (int j = 0; j < 3; j++) CHECK(fabsf(got[j] - want[j]) < 1e-5f);
  }
  frit_ctx_free(ctx);
}

static void expect_error(const char *text, const char *fragment) {
  frit_ctx *ctx = frit_ctx_new();
  frit_model *m = frit_import_stablehlo(ctx, text, strlen(text));
  frit_tensor *args[8], *res[8];
  if (m && !frit_model_inputs(ctx, m, args)) m = frit_model_call(ctx, m, args, frit_model_num_inputs(m), res) ? NULL : m;
  CHECK(m == NULL);
  CHECK(strstr(frit_error(ctx), fragment) != NULL);
  if (!strstr(frit_error(ctx), fragment)) fprintf(stderr, "  got: %s\n", frit_error(ctx));
  frit_ctx_free(ctx);
}

static void test_errors(void) {
  expect_error("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %b : tensor<2xf32>\n}\n",
               "line 2, column 10: undefined value %b");
  expect_error("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
               "  %0 = stablehlo.rng_bit_generator %a, algorithm = DEFAULT : (tensor<2xf32>) -> tensor<2xf32>\n"
               "  return %0 : tensor<2xf32>\n}\n",
               "line 2, column 3: stablehlo.rng_bit_generator: op not supported");
  expect_error("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %0 = stablehlo.add %a, %a : tensor<2xf32>\n",
               "unterminated region");
  expect_error("", "no func.func");
  expect_error("func.func @f(%a: tensor<2xcomplex<f99>>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}\n",
               "not supported");
  expect_error("func.func @main(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {\n"
               "  %0 = stablehlo.transpose %a, dims = [0] : (tensor<2x3xf32>) -> tensor<3x2xf32>\n"
               "  return %0 : tensor<3x2xf32>\n}\n",
               "line 2, column 3: stablehlo.transpose: needs a permutation of 2 axes");
  frit_ctx *ctx = frit_ctx_new();
  CHECK(frit_import_stablehlo(ctx, NULL, 0) == NULL);
  frit_ctx_free(ctx);
}

/* Mangled modules: truncated, bytes deleted, junk inserted. Each must fail cleanly or import. */
static void test_fuzz(void) {
  const char *seeds[2] = {MLP, LOOP};
  const char *junk[] = {"%", "@", "#", "<", ">", "{", "}", "(", ")", "[", "]", ",", ":", "=", "\"", "x", "0",
                        "-", "^", " ", "\n", "tensor<", "dense<", "stablehlo.", "0x", "?", "#0", ":9"};
  int n = getenv("FRIT_FUZZ_IMPORT_N") ? atoi(getenv("FRIT_FUZZ_IMPORT_N")) : 3000;
  uint64_t state = 0x9E3779B97F4A7C15ull;
  char *buf = malloc(8192);
  int imported = 0;
  for (int it = 0; it < n && buf; it++) {
    const char *seed = seeds[it % 2];
    size_t len = strlen(seed);
    memcpy(buf, seed, len + 1);
    int edits = 1 + (int)(it % 4);
    for (int e = 0; e < edits; e++) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      size_t pos = (size_t)(state >> 33) % (len ? len : 1);
      int kind = (int)((state >> 20) % 3);
      if (kind == 0) {
        len = pos;
      } else if (kind == 1 && len) {
        memmove(buf + pos, buf + pos + 1, len - pos);
        len--;
      } else {
        const char *j = junk[(state >> 40) % (sizeof junk / sizeof junk[0])];
        size_t jl = strlen(j);
        if (len + jl < 8000) {
          memmove(buf + pos + jl, buf + pos, len - pos);
          memcpy(buf + pos, j, jl);
          len += jl;
        }
      }
      buf[len] = 0;
    }
    frit_ctx *ctx = frit_ctx_new();
    frit_model *m = frit_import_stablehlo(ctx, buf, len);
    if (m) {
      frit_tensor *args[16], *res[16];
      if (frit_model_num_inputs(m) <= 16 && frit_model_num_outputs(m) <= 16 && !frit_model_inputs(ctx, m, args) &&
          !frit_model_call(ctx, m, args, frit_model_num_inputs(m), res))
        imported++;
    } else {
      CHECK(frit_error(ctx)[0] != 0);
    }
    frit_ctx_free(ctx);
  }
  free(buf);
  fprintf(stderr, "fuzz: %d mangled modules, %d still built\n", n, imported);
}

int main(void) {
  test_mlp();
  test_generic_while_and_weight();
  test_errors();
  test_fuzz();
  CHECK_DONE();
}
