/* Slicing, roll and pad on a symbolic axis (n bound to 5 at run time) through the interpreter,
 * against values from numpy: out-of-range slice bounds clamp, rolls wrap, wide pads repeat. */
#include "frit.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *what;
  frit_tensor *t;
  int len;
  int64_t want[24];
} sym_case;

static void test_symbolic_axis(void) {
  frit_ctx *ctx = frit_ctx_new();
  frit_uop *n = frit_var(ctx, "n", 2, 1 << 20);
  frit_tensor *x = frit_input_sym(ctx, "x", FRIT_I64, 1, &n);
  const int64_t D = FRIT_SLICE_DEFAULT;
#define SL(a, b, c) frit_slice(ctx, x, (int64_t[]){a}, (int64_t[]){b}, (int64_t[]){c})
#define PAD(b, a, m) frit_pad(ctx, x, (int64_t[]){b}, (int64_t[]){a}, m, 0)
  sym_case cs[] = {
      {"x[:100]", SL(D, 100, 1), 5, {0, 1, 2, 3, 4}},
      {"x[2:50]", SL(2, 50, 1), 3, {2, 3, 4}},
      {"x[:-10:-1]", SL(D, -10, -1), 5, {4, 3, 2, 1, 0}},
      {"x[50:]", SL(50, D, 1), 0, {0}},
      {"x[-100:3:2]", SL(-100, 3, 2), 2, {0, 2}},
      {"x[100:-100:-2]", SL(100, -100, -2), 3, {4, 2, 0}},
      {"roll(x, 7)", frit_roll(ctx, x, 1, (int64_t[]){7}, (int[]){0}), 5, {3, 4, 0, 1, 2}},
      {"roll(x, -13)", frit_roll(ctx, x, 1, (int64_t[]){-13}, NULL), 5, {3, 4, 0, 1, 2}},
      {"pad wrap (7, 3)", PAD(7, 3, FRIT_PAD_WRAP), 15, {3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2}},
      {"pad symmetric (6, 9)", PAD(6, 9, FRIT_PAD_SYMMETRIC), 20,
       {4, 4, 3, 2, 1, 0, 0, 1, 2, 3, 4, 4, 3, 2, 1, 0, 0, 1, 2, 3}},
      {"pad reflect (9, 8)", PAD(9, 8, FRIT_PAD_REFLECT), 22,
       {1, 0, 1, 2, 3, 4, 3, 2, 1, 0, 1, 2, 3, 4, 3, 2, 1, 0, 1, 2, 3, 4}},
  };
#undef SL
#undef PAD
  enum { NC = sizeof cs / sizeof cs[0] };
  frit_tensor *outs[NC];
  int64_t res[NC][24];
  void *rp[NC];
  for (int i = 0; i < NC; i++) {
    if (!cs[i].t) fprintf(stderr, "%s: %s\n", cs[i].what, frit_error(ctx));
    CHECK(cs[i].t != NULL);
    outs[i] = cs[i].t;
    rp[i] = res[i];
  }
  frit_compile_opts o;
  memset(&o, 0, sizeof o);
  o.interpret = getenv("FRIT_TEST_COMPILED") ? 0 : 1;
  frit_program *p = frit_compile(ctx, outs, NC, &o);
  if (!p) fprintf(stderr, "compile: %s\n", frit_error(ctx));
  CHECK(p != NULL);
  if (p) {
    int64_t xin[5] = {0, 1, 2, 3, 4};
    frit_binding b = {"n", 5};
    frit_status st = frit_program_run(p, (void *const[]){xin}, rp, &b, 1);
    if (st != FRIT_OK) fprintf(stderr, "run: %s\n", frit_error(ctx));
    CHECK_EQ_INT(st, FRIT_OK);
    for (int i = 0; st == FRIT_OK && i < NC; i++) {
      int64_t dims[1] = {-1};
      int nd = 0;
      CHECK_EQ_INT(frit_program_output_shape(p, i, &b, 1, &nd, dims), FRIT_OK);
      if (dims[0] != cs[i].len) fprintf(stderr, "%s: length %lld, want %d\n", cs[i].what, (long long)dims[0], cs[i].len);
      CHECK_EQ_INT(dims[0], cs[i].len);
      for (int k = 0; k < cs[i].len && k < dims[0]; k++) {
        if (res[i][k] != cs[i].want[k]) fprintf(stderr, "%s [%d] = %lld\n", cs[i].what, k, (long long)res[i][k]);
        CHECK_EQ_INT(res[i][k], cs[i].want[k]);
      }
    }
  }
  /* errors */
  CHECK(frit_roll(ctx, x, 1, (int64_t[]){1}, (int[]){1}) == NULL);
  CHECK(strstr(frit_error(ctx), "axis 1 is out of bounds") != NULL);
  frit_clear_error(ctx);
  CHECK(frit_roll(ctx, x, 2, (int64_t[]){INT64_MAX, 1}, (int[]){0, 0}) == NULL);
  CHECK(strstr(frit_error(ctx), "64 bits") != NULL);
  frit_clear_error(ctx);
  frit_ctx_free(ctx);
}

int main(void) {
  test_symbolic_axis();
  CHECK_DONE();
}
