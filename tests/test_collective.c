/* Collectives in a world of one rank (no launcher: MPI is not loaded), through the C API: each is
 * its own kernel, named after it, whose result is the one-rank meaning (the identity; sendrecv
 * from no one gives zeros), compiled and interpreted, eager-sized and symbolic; the gradients;
 * and the errors for bad arguments. The multi-rank cases are tests/mpi/test_dist_mpi.c and
 * tests/python/test_distributed.py (under mpirun). This one runs under the sanitizers. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "check.h"
#include "frit.h"

static frit_program *compile1(frit_ctx *ctx, frit_tensor *out, int interpret) {
  frit_compile_opts o;
  memset(&o, 0, sizeof o);
  o.interpret = interpret;
  o.threads = 2;
  frit_program *p = frit_compile(ctx, &out, 1, &o);
  if (!p) fprintf(stderr, "compile failed: %s\n", frit_error(ctx));
  return p;
}

/* out = f(x) for x = 0.5 * i - 3 over n floats; compares with want(i). */
static void check_f32(frit_ctx *ctx, frit_tensor *x, frit_tensor *y, int64_t n, float (*want)(int64_t),
                      const char *name) {
  for (int interpret = 0; interpret < 2; interpret++) {
    frit_program *p = compile1(ctx, y, interpret);
    CHECK(p != NULL);
    if (!p) return;
    float *in = malloc((size_t)n * sizeof *in), *out = malloc((size_t)n * sizeof *out);
    for (int64_t i = 0; i < n; i++) in[i] = 0.5f * (float)i - 3, out[i] = NAN;
    void *ins[1] = {in}, *outs[1] = {out};
    CHECK_EQ_INT(frit_program_run(p, ins, outs, NULL, 0), FRIT_OK);
    int bad = 0;
    for (int64_t i = 0; i < n; i++) bad += out[i] != want(i);
    if (bad) fprintf(stderr, "%s (interpret %d): %d of %lld wrong\n", name, interpret, bad, (long long)n);
    CHECK_EQ_INT(bad, 0);
    bool named = false;
    for (int k = 0; k < frit_program_num_kernels(p); k++)
      named |= strstr(frit_program_kernel_name(p, k), name) != NULL;
    if (strcmp(name, "none") != 0) {
      if (!named) fprintf(stderr, "%s: no kernel named after it\n", name);
      CHECK(named);
    }
    free(in), free(out);
    (void)x;
  }
}

static float same(int64_t i) { return 0.5f * (float)i - 3; }
static float zero(int64_t i) { (void)i; return 0; }
static float twice_plus_one(int64_t i) { return 2 * (0.5f * (float)i - 3) + 1; }

static void test_one_rank(void) {
  frit_ctx *ctx = frit_ctx_new();
  CHECK_EQ_INT(frit_dist_init(ctx, 0), FRIT_OK);
  CHECK_EQ_INT(frit_dist_size(), 1);
  CHECK_EQ_INT(frit_dist_rank(), 0);
  CHECK_EQ_INT(frit_dist_barrier(ctx), FRIT_OK);
  int64_t dims[2] = {37, 3};
  frit_tensor *x = frit_input(ctx, "x", FRIT_F32, 2, dims);
  check_f32(ctx, x, frit_all_reduce(ctx, x, FRIT_RF_SUM), 111, same, "all_reduce");
  check_f32(ctx, x, frit_all_reduce(ctx, x, FRIT_RF_MEAN), 111, same, "all_reduce");
  check_f32(ctx, x, frit_all_gather(ctx, x, 1), 111, same, "all_gather");
  check_f32(ctx, x, frit_reduce_scatter(ctx, x, FRIT_RF_MAX, 0), 111, same, "reduce_scatter");
  check_f32(ctx, x, frit_broadcast_from(ctx, x, 0), 111, same, "broadcast");
  check_f32(ctx, x, frit_sendrecv(ctx, x, 0, 0), 111, same, "sendrecv");
  check_f32(ctx, x, frit_sendrecv(ctx, x, 0, -1), 111, zero, "none");
  /* the source is computed in a kernel of its own, then exchanged */
  frit_tensor *two = frit_scalar_f(ctx, FRIT_F32, 2), *one = frit_scalar_f(ctx, FRIT_F32, 1);
  frit_tensor *e = frit_binary_t(ctx, FRIT_BF_ADD, frit_binary_t(ctx, FRIT_BF_MUL, x, two), one);
  check_f32(ctx, x, frit_all_reduce(ctx, e, FRIT_RF_SUM), 111, twice_plus_one, "all_reduce");
  /* symbolic sizes */
  frit_uop *n = frit_var(ctx, "n", 1, 1 << 20);
  frit_tensor *xs = frit_input_sym(ctx, "xs", FRIT_F32, 1, &n);
  frit_tensor *ys = frit_all_gather(ctx, xs, 0);
  frit_program *p = compile1(ctx, ys, 0);
  CHECK(p != NULL);
  if (p) {
    float in[50], out[50];
    for (int i = 0; i < 50; i++) in[i] = (float)i, out[i] = -1;
    frit_binding b = {"n", 50};
    void *ins[1] = {in}, *outs[1] = {out};
    CHECK_EQ_INT(frit_program_run(p, ins, outs, &b, 1), FRIT_OK);
    CHECK(memcmp(in, out, sizeof in) == 0);
  }
  /* gradients: the sum's is an all-reduce of the cotangent; max has none */
  frit_tensor *g = NULL;
  frit_tensor *loss = frit_reduce(ctx, FRIT_RF_SUM, frit_all_reduce(ctx, e, FRIT_RF_SUM), NULL, FRIT_ALL_AXES, 0, 0);
  CHECK_EQ_INT(frit_grad(ctx, loss, 1, &x, &g), FRIT_OK);
  CHECK(g != NULL);
  loss = frit_reduce(ctx, FRIT_RF_SUM, frit_all_reduce(ctx, x, FRIT_RF_MAX), NULL, FRIT_ALL_AXES, 0, 0);
  CHECK(frit_grad(ctx, loss, 1, &x, &g) != FRIT_OK);
  CHECK(strstr(frit_error(ctx), "all_reduce max") != NULL);
  /* bad arguments name the op */
  CHECK(frit_all_reduce(ctx, x, FRIT_RF_ARGMAX) == NULL);
  CHECK(strstr(frit_error(ctx), "all_reduce") != NULL);
  CHECK(frit_broadcast_from(ctx, x, 1) == NULL);
  CHECK(strstr(frit_error(ctx), "rank 1 is outside the world of 1 ranks") != NULL);
  CHECK(frit_sendrecv(ctx, x, -2, 0) == NULL);
  CHECK(frit_all_gather(ctx, x, 2) == NULL);
  frit_tensor *c = frit_input(ctx, "c", FRIT_C64, 2, dims);
  CHECK(frit_all_reduce(ctx, c, FRIT_RF_MIN) == NULL);
  CHECK(strstr(frit_error(ctx), "complex") != NULL);
  CHECK(frit_reduce_scatter(ctx, frit_input(ctx, "s", FRIT_F32, 0, NULL), FRIT_RF_SUM, 0) == NULL);
  frit_ctx_free(ctx);
}

int main(void) {
  test_one_rank();
  printf("tests/test_collective.c: %d checks, %d failed\n", check_count_, check_failures_);
  return check_failures_ != 0;
}
