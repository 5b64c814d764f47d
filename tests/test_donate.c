/* Buffer donation (frit_program_donate): outputs written into donated inputs' memory give the
 * same values as plain outputs (checked against plain C loops), in place only where the
 * schedule allows it, staged where a kernel reads the input after (or beside) the write, where
 * another input shares the memory, and errors for mismatched or repeated declarations. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "frit.h"

#define N 1000

static frit_program *compile_n(frit_ctx *ctx, frit_tensor **outs, int n, int interpret) {
  frit_compile_opts o;
  memset(&o, 0, sizeof o);
  o.interpret = interpret;
  o.threads = 2;
  frit_program *p = frit_compile(ctx, outs, n, &o);
  if (!p) fprintf(stderr, "compile failed: %s\n", frit_error(ctx));
  return p;
}

static void fill(float *a, int n, int seed) {
  for (int i = 0; i < n; i++) a[i] = (float)((i * 37 + seed * 11) % 101) / 50.0f - 1.0f;
}

static frit_tensor *sub(frit_ctx *c, frit_tensor *a, frit_tensor *b) { return frit_binary_t(c, FRIT_BF_SUB, a, b); }
static frit_tensor *add(frit_ctx *c, frit_tensor *a, frit_tensor *b) { return frit_binary_t(c, FRIT_BF_ADD, a, b); }
static frit_tensor *mul(frit_ctx *c, frit_tensor *a, frit_tensor *b) { return frit_binary_t(c, FRIT_BF_MUL, a, b); }

/* p <- p - 0.5 g, three steps, p donated: in place, and p's memory holds the result */
static void test_sgd(int interpret) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t d[1] = {N};
  frit_tensor *p = frit_input(ctx, "p", FRIT_F32, 1, d), *g = frit_input(ctx, "g", FRIT_F32, 1, d);
  frit_tensor *out = sub(ctx, p, mul(ctx, g, frit_scalar_f(ctx, FRIT_F32, 0.5)));
  frit_program *prog = compile_n(ctx, &out, 1, interpret);
  CHECK(prog != NULL);
  if (prog) {
    int in_place = -1;
    CHECK_EQ_INT(frit_program_donate(prog, 0, 0, &in_place), FRIT_OK);
    CHECK_EQ_INT(in_place, 1);
    /* p, g and the output are each read or written only at the stored element: no restrict */
    if (!interpret) CHECK(strstr(frit_program_source(prog), "restrict") == NULL);
    static float pv[N], gv[N], want[N];
    fill(pv, N, 1), fill(want, N, 1);
    for (int step = 0; step < 3; step++) {
      fill(gv, N, step + 2);
      for (int i = 0; i < N; i++) want[i] = want[i] - gv[i] * 0.5f;
      void *in[2] = {pv, gv}, *o[1] = {step == 1 ? pv : NULL}; /* NULL or the input itself */
      CHECK_EQ_INT(frit_program_run(prog, in, o, NULL, 0), FRIT_OK);
    }
    int bad = 0;
    for (int i = 0; i < N; i++) bad += pv[i] != want[i];
    CHECK_EQ_INT(bad, 0);
    /* a separate output pointer: a plain run, the input keeps its value */
    static float sep[N], keep[N];
    memcpy(keep, pv, sizeof keep);
    void *in[2] = {pv, gv}, *o[1] = {sep};
    CHECK_EQ_INT(frit_program_run(prog, in, o, NULL, 0), FRIT_OK);
    CHECK(memcmp(pv, keep, sizeof keep) == 0);
    bad = 0;
    for (int i = 0; i < N; i++) bad += sep[i] != keep[i] - gv[i] * 0.5f;
    CHECK_EQ_INT(bad, 0);
  }
  frit_ctx_free(ctx);
}

/* outputs {p - g, sum(p)}: whichever order the kernels run in, sum(p) is of the old p */
static void test_read_after(int interpret) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t d[1] = {N};
  frit_tensor *p = frit_input(ctx, "p", FRIT_F32, 1, d), *g = frit_input(ctx, "g", FRIT_F32, 1, d);
  int ax = 0;
  frit_tensor *outs[3] = {sub(ctx, p, g), frit_reduce(ctx, FRIT_RF_SUM, p, &ax, 1, 0, 0),
                          mul(ctx, p, frit_reduce(ctx, FRIT_RF_MAX, p, &ax, 1, 0, 0))};
  frit_program *prog = compile_n(ctx, outs, 3, interpret);
  CHECK(prog != NULL);
  if (prog) {
    int in_place = -1;
    CHECK_EQ_INT(frit_program_donate(prog, 0, 0, &in_place), FRIT_OK);
    static float pv[N], gv[N], p0[N], o2[N];
    float s = 0;
    fill(pv, N, 3), fill(gv, N, 4);
    memcpy(p0, pv, sizeof p0);
    void *in[2] = {pv, gv}, *o[3] = {NULL, &s, o2};
    CHECK_EQ_INT(frit_program_run(prog, in, o, NULL, 0), FRIT_OK);
    double want = 0;
    float mx = -INFINITY;
    for (int i = 0; i < N; i++) want += p0[i], mx = p0[i] > mx ? p0[i] : mx;
    CHECK(fabs(s - want) <= 1e-3 * (1 + fabs(want)));
    int bad = 0;
    for (int i = 0; i < N; i++) bad += pv[i] != p0[i] - gv[i] || o2[i] != p0[i] * mx;
    CHECK_EQ_INT(bad, 0);
  }
  frit_ctx_free(ctx);
}

/* outputs {g + 1, (g + 1) * p}, one kernel (the second a sibling output), p donated to the first: p[i] is read at the very
 * element the first store writes, but that store does not depend on it, so nothing orders the
 * read before the write: staged */
static void test_unordered_read(int interpret) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t d[1] = {N};
  frit_tensor *p = frit_input(ctx, "p", FRIT_F32, 1, d), *g = frit_input(ctx, "g", FRIT_F32, 1, d);
  frit_tensor *g1 = add(ctx, g, frit_scalar_f(ctx, FRIT_F32, 1.0));
  frit_tensor *outs[2] = {g1, mul(ctx, g1, p)};
  frit_program *prog = compile_n(ctx, outs, 2, interpret);
  CHECK(prog != NULL);
  if (prog) {
    int in_place = -1;
    CHECK_EQ_INT(frit_program_donate(prog, 0, 0, &in_place), FRIT_OK);
    CHECK_EQ_INT(frit_program_num_kernels(prog), 1);
    CHECK_EQ_INT(in_place, 0);
    static float pv[N], gv[N], p0[N], o1[N];
    fill(pv, N, 11), fill(gv, N, 12);
    memcpy(p0, pv, sizeof p0);
    void *in[2] = {pv, gv}, *o[2] = {NULL, o1};
    CHECK_EQ_INT(frit_program_run(prog, in, o, NULL, 0), FRIT_OK);
    int bad = 0;
    for (int i = 0; i < N; i++) bad += pv[i] != gv[i] + 1.0f || o1[i] != (gv[i] + 1.0f) * p0[i];
    CHECK_EQ_INT(bad, 0);
  }
  frit_ctx_free(ctx);
}

/* out[i] = p[N-1-i] + g[i]: the one kernel reads an element it does not write, so the output
 * cannot go straight into p (it would read already-overwritten elements): staged */
static void test_other_element(int interpret) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t d[1] = {N};
  frit_tensor *p = frit_input(ctx, "p", FRIT_F32, 1, d), *g = frit_input(ctx, "g", FRIT_F32, 1, d);
  frit_tensor *out = add(ctx, frit_flip(ctx, p, NULL, -1), g);
  frit_program *prog = compile_n(ctx, &out, 1, interpret);
  CHECK(prog != NULL);
  if (prog) {
    int in_place = -1;
    CHECK_EQ_INT(frit_program_donate(prog, 0, 0, &in_place), FRIT_OK);
    CHECK_EQ_INT(in_place, 0);
    if (!interpret) CHECK(strstr(frit_program_source(prog), "*restrict") != NULL); /* p stays restrict */
    static float pv[N], gv[N], p0[N];
    fill(pv, N, 5), fill(gv, N, 6);
    memcpy(p0, pv, sizeof p0);
    void *in[2] = {pv, gv}, *o[1] = {NULL};
    CHECK_EQ_INT(frit_program_run(prog, in, o, NULL, 0), FRIT_OK);
    int bad = 0;
    for (int i = 0; i < N; i++) bad += pv[i] != p0[N - 1 - i] + gv[i];
    CHECK_EQ_INT(bad, 0);
  }
  frit_ctx_free(ctx);
}

/* out[i] = p[i] + flip(g)[i] is in place for p alone, but g passed in p's memory is read at
 * other elements: that run is staged */
static void test_shared_memory(int interpret) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t d[1] = {N};
  frit_tensor *p = frit_input(ctx, "p", FRIT_F32, 1, d), *g = frit_input(ctx, "g", FRIT_F32, 1, d);
  frit_tensor *out = add(ctx, p, frit_flip(ctx, g, NULL, -1));
  frit_program *prog = compile_n(ctx, &out, 1, interpret);
  CHECK(prog != NULL);
  if (prog) {
    int in_place = -1;
    CHECK_EQ_INT(frit_program_donate(prog, 0, 0, &in_place), FRIT_OK);
    CHECK_EQ_INT(in_place, 1);
    static float pv[N], p0[N];
    fill(pv, N, 7);
    memcpy(p0, pv, sizeof p0);
    void *in[2] = {pv, pv}, *o[1] = {NULL};
    CHECK_EQ_INT(frit_program_run(prog, in, o, NULL, 0), FRIT_OK);
    int bad = 0;
    for (int i = 0; i < N; i++) bad += pv[i] != p0[i] + p0[N - 1 - i];
    CHECK_EQ_INT(bad, 0);
  }
  frit_ctx_free(ctx);
}

/* acc = p; for i in [0, 5): acc = acc * 0.5 + p * i. Outputs: the result, p - result (after the
 * loop), and 2 p, into which p is donated: p is read in every trip of the loop, so 2 p can only
 * go into p's memory after the loop */
static void test_host_loop(int interpret) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t d[1] = {N};
  frit_tensor *p = frit_input(ctx, "p", FRIT_F32, 1, d);
  frit_tensor *i, *acc, *res;
  CHECK_EQ_INT(frit_host_loop_begin(ctx, frit_scalar_i(ctx, FRIT_I64, 0), frit_scalar_i(ctx, FRIT_I64, 5),
                                    frit_scalar_i(ctx, FRIT_I64, 1), 1, &p, &i, &acc), FRIT_OK);
  frit_tensor *nx = add(ctx, mul(ctx, acc, frit_scalar_f(ctx, FRIT_F32, 0.5)), mul(ctx, p, frit_astype(ctx, i, FRIT_F32)));
  CHECK_EQ_INT(frit_host_loop_end(ctx, &nx, NULL, &res), FRIT_OK);
  frit_tensor *outs[3] = {mul(ctx, p, frit_scalar_f(ctx, FRIT_F32, 2.0)), res, sub(ctx, p, res)};
  frit_program *prog = compile_n(ctx, outs, 3, interpret);
  CHECK(prog != NULL);
  if (prog) {
    CHECK_EQ_INT(frit_program_donate(prog, 0, 0, NULL), FRIT_OK);
    static float pv[N], p0[N], diff[N], r[N];
    fill(pv, N, 10);
    memcpy(p0, pv, sizeof p0);
    void *in[1] = {pv}, *o[3] = {NULL, r, diff};
    CHECK_EQ_INT(frit_program_run(prog, in, o, NULL, 0), FRIT_OK);
    int bad = 0;
    for (int k = 0; k < N; k++) {
      float a = p0[k];
      for (int it = 0; it < 5; it++) a = a * 0.5f + p0[k] * (float)it;
      bad += pv[k] != 2 * p0[k] || fabsf(r[k] - a) > 1e-4f * (1 + fabsf(a)) ||
             fabsf(diff[k] - (p0[k] - a)) > 1e-4f * (1 + fabsf(a));
    }
    CHECK_EQ_INT(bad, 0);
  }
  frit_ctx_free(ctx);
}

static void test_errors(void) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t d[1] = {N}, d2[1] = {N / 2};
  frit_tensor *p = frit_input(ctx, "p", FRIT_F32, 1, d), *q = frit_input(ctx, "q", FRIT_F32, 1, d);
  frit_tensor *h = frit_input(ctx, "h", FRIT_F32, 1, d2), *i32 = frit_input(ctx, "i", FRIT_I32, 1, d);
  frit_tensor *outs[4] = {add(ctx, p, q), mul(ctx, h, h), frit_binary_t(ctx, FRIT_BF_ADD, i32, i32), sub(ctx, q, p)};
  frit_program *prog = compile_n(ctx, outs, 4, 0);
  CHECK(prog != NULL);
  if (prog) {
    CHECK_EQ_INT(frit_program_donate(prog, 0, 1, NULL), FRIT_ERR_INVALID); /* shape */
    CHECK(strstr(frit_error(ctx), "differ in dtype or shape") != NULL);
    CHECK_EQ_INT(frit_program_donate(prog, 0, 2, NULL), FRIT_ERR_INVALID); /* dtype */
    CHECK_EQ_INT(frit_program_donate(prog, 0, 9, NULL), FRIT_ERR_INVALID); /* range */
    CHECK_EQ_INT(frit_program_donate(prog, 0, 0, NULL), FRIT_OK);
    CHECK_EQ_INT(frit_program_donate(prog, 0, 3, NULL), FRIT_ERR_INVALID); /* input twice */
    CHECK_EQ_INT(frit_program_donate(prog, 1, 0, NULL), FRIT_ERR_INVALID); /* output twice */
    CHECK_EQ_INT(frit_program_donate(prog, 1, 3, NULL), FRIT_OK);
    /* p and q donated and passed in the same memory: two outputs cannot both take it */
    static float pv[N], hv[N / 2], ho[N / 2];
    static int32_t iv[N], io[N];
    void *in[4] = {pv, pv, hv, iv}, *o[4] = {NULL, ho, io, NULL};
    CHECK_EQ_INT(frit_program_run(prog, in, o, NULL, 0), FRIT_ERR_INVALID);
    CHECK(strstr(frit_error(ctx), "share memory") != NULL);
    static float qv[N];
    fill(pv, N, 8), fill(qv, N, 9);
    static float p0[N], q0[N];
    memcpy(p0, pv, sizeof p0), memcpy(q0, qv, sizeof q0);
    void *in2[4] = {pv, qv, hv, iv};
    CHECK_EQ_INT(frit_program_run(prog, in2, o, NULL, 0), FRIT_OK);
    int bad = 0;
    for (int i = 0; i < N; i++) bad += pv[i] != p0[i] + q0[i] || qv[i] != q0[i] - p0[i];
    CHECK_EQ_INT(bad, 0);
  }
  CHECK_EQ_INT(frit_program_donate(NULL, 0, 0, NULL), FRIT_ERR_INVALID);
  frit_ctx_free(ctx);
}

int main(void) {
  for (int interpret = 0; interpret < 2; interpret++) {
    test_sgd(interpret);
    test_read_after(interpret);
    test_other_element(interpret);
    test_shared_memory(interpret);
    test_host_loop(interpret);
    test_unordered_read(interpret);
  }
  test_errors();
  CHECK_DONE();
}
