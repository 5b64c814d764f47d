/* The smallest program against an installed frit (make install): compiles y = 2x + 1 and
 * s = sum(x*x + 1) into kernels and runs them. Built outside the tree with
 *   cc hello.c $(pkg-config --cflags --libs frit) -o hello
 * and run with LD_LIBRARY_PATH=$(pkg-config --variable=libdir frit) unless that is a system
 * directory. tests/test_install.sh builds and checks it. */
#include <stdio.h>

#include "frit.h"

int main(void) {
  frit_ctx *ctx = frit_ctx_new();
  if (!ctx) return 1;
  int64_t dims[1] = {4};
  frit_tensor *x = frit_input(ctx, "x", FRIT_F32, 1, dims);
  frit_tensor *y = frit_binary_t(ctx, FRIT_BF_ADD, frit_binary_t(ctx, FRIT_BF_MUL, x, frit_scalar_f(ctx, FRIT_F32, 2)),
                                 frit_scalar_f(ctx, FRIT_F32, 1));
  int axis = 0;
  frit_tensor *s = frit_reduce(ctx, FRIT_RF_SUM,
                               frit_binary_t(ctx, FRIT_BF_ADD, frit_binary_t(ctx, FRIT_BF_MUL, x, x),
                                             frit_scalar_f(ctx, FRIT_F32, 1)),
                               &axis, 1, 0, 0);
  frit_tensor *outs[2] = {y, s};
  frit_program *p = y && s ? frit_compile(ctx, outs, 2, NULL) : NULL;
  float xv[4] = {1, 2, 3, 4}, yv[4], sv;
  void *ins[1] = {xv}, *res[2] = {yv, &sv};
  if (!p || frit_program_run(p, ins, res, NULL, 0) != FRIT_OK) {
    fprintf(stderr, "hello: %s\n", frit_error(ctx));
    frit_ctx_free(ctx);
    return 1;
  }
  printf("frit %s (header %d.%d.%d)\n", frit_version(), FRIT_VERSION_MAJOR, FRIT_VERSION_MINOR,
         FRIT_VERSION_PATCH);
  printf("y = %g %g %g %g\nsum = %g\n", yv[0], yv[1], yv[2], yv[3], sv);
  frit_ctx_free(ctx);
  return 0;
}
