/* The device layer through the C API alone: frit_compile_opts.device = "opencl" against plain C
 * loops (an elementwise + row-sum program with symbolic sizes, run at two sizes), the errors for
 * an unknown device and an unavailable one. OpenCL missing: those checks are skipped, unless
 * FRIT_REQUIRE_OPENCL=1. Skipped in sanitizer builds: the OpenCL driver is not instrumented. */
#include <math.h>
#include <stdbool.h>
#include <string.h>
#include <stdlib.h>

#include "backend/device.h"
#include "check.h"
#include "frit.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif

static bool contains(const char *s, const char *sub) { return s && strstr(s, sub) != NULL; }

static void test_unknown_device(void) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t d[1] = {4};
  frit_tensor *x = frit_input(ctx, "x", FRIT_F32, 1, d);
  frit_tensor *y = frit_binary_t(ctx, FRIT_BF_ADD, x, x);
  frit_compile_opts o;
  memset(&o, 0, sizeof o);
  o.device = "tpu";
  CHECK(frit_compile(ctx, &y, 1, &o) == NULL);
  CHECK(contains(frit_error(ctx), "unknown device 'tpu'"));
  frit_ctx_free(ctx);
}

/* The launch geometry: a kernel without a g0 loop (extent 1, e.g. a serial scatter) is run whole
 * by every thread launched, so it must get exactly one (a bug: CUDA launched 256 threads for it,
 * and a histogram by scatter counted each value several times); a work-group kernel gets its
 * group size and a group per point up to the device's fill; a large extent is capped. */
static void test_launch_geometry(void) {
  size_t groups, size;
  frit_device_geometry(132, 1, 0, 0, &groups, &size);
  CHECK(groups * size == 1);
  frit_device_geometry(132, 0, 0, 0, &groups, &size);
  CHECK(groups * size == 1);
  frit_device_geometry(132, 100, 0, 0, &groups, &size);
  CHECK(size == 100 && groups == 1);
  frit_device_geometry(132, 1000, 0, 0, &groups, &size);
  CHECK(size == 256 && groups == 4);
  frit_device_geometry(132, (int64_t)1 << 30, 0, 0, &groups, &size);
  CHECK(size == 256 && groups * size == 132u * 2048u);
  frit_device_geometry(132, 300, 256, 0, &groups, &size);
  CHECK(size == 256 && groups == 300);
  frit_device_geometry(132, 1, 256, 0, &groups, &size);
  CHECK(size == 256 && groups == 1);
  frit_device_geometry(2, 1 << 20, 256, 0, &groups, &size);
  CHECK(size == 256 && groups == 16);
  frit_device_geometry(132, (int64_t)1 << 26, 0, (int64_t)1 << 24, &groups, &size); /* 4 points a thread */
  CHECK(size == 256 && groups * size == (size_t)1 << 24);
}

/* Which rendering runs: a work-group a point for few points or long reductions, a thread a point
 * for a matmul's many points of short-ish dot products, never for reductions shorter than a group
 * or groups larger than the device allows. */
static void test_group_choice(void) {
  frit_device_props h = {.max_group = 1024, .compute_units = 132}, small = {.max_group = 128, .compute_units = 2};
  CHECK(frit_device_use_groups(&h, 4096, 4096, 256));          /* softmax rows */
  CHECK(frit_device_use_groups(&h, 1, 1 << 20, 256));          /* a full sum's last stage */
  CHECK(frit_device_use_groups(&h, 65536, 65536, 256));        /* n-body, N = 65536 */
  CHECK(!frit_device_use_groups(&h, 1 << 24, 4096, 256));      /* matmul 4096^2 */
  CHECK(!frit_device_use_groups(&h, 65536, 256, 256));         /* matmul 256^2 */
  CHECK(!frit_device_use_groups(&h, 10, 100, 256));            /* shorter than a group */
  CHECK(!frit_device_use_groups(&small, 10, 4096, 256));       /* the device's groups are smaller */
  CHECK(!frit_device_use_groups(&h, 10, 4096, 0));
}

#ifndef SANITIZED
/* y = exp(x) * 2 + x, s = row sums of y; n x m symbolic */
static void test_opencl_program(void) {
  frit_ctx *ctx = frit_ctx_new();
  frit_uop *dims[2] = {frit_var(ctx, "n", 1, 1 << 20), frit_var(ctx, "m", 1, 1 << 20)};
  frit_tensor *x = frit_input_sym(ctx, "x", FRIT_F32, 2, dims);
  frit_tensor *two = frit_scalar_f(ctx, FRIT_F32, 2.0);
  frit_tensor *y = frit_binary_t(ctx, FRIT_BF_ADD, frit_binary_t(ctx, FRIT_BF_MUL, frit_unary_t(ctx, FRIT_UF_EXP, x), two), x);
  int ax = 1;
  frit_tensor *s = frit_reduce(ctx, FRIT_RF_SUM, y, &ax, 1, 0, 0);
  frit_tensor *outs[2] = {y, s};
  frit_compile_opts o;
  memset(&o, 0, sizeof o);
  o.device = "opencl";
  frit_program *p = frit_compile(ctx, outs, 2, &o);
  if (!p) {
    bool required = getenv("FRIT_REQUIRE_OPENCL") && strcmp(getenv("FRIT_REQUIRE_OPENCL"), "1") == 0;
    fprintf(stderr, "test_device: opencl: %s\n", frit_error(ctx));
    CHECK(!required);
    CHECK(contains(frit_error(ctx), "opencl: unavailable"));
    frit_ctx_free(ctx);
    return;
  }
  CHECK(contains(frit_program_source(p), "__kernel void frit_k0"));
  int64_t sizes[2][2] = {{3, 5}, {37, 130}};
  for (int t = 0; t < 2; t++) {
    int64_t n = sizes[t][0], m = sizes[t][1];
    float *xv = malloc((size_t)(n * m) * sizeof *xv), *yv = malloc((size_t)(n * m) * sizeof *yv);
    float *sv = malloc((size_t)n * sizeof *sv);
    for (int64_t i = 0; i < n * m; i++) xv[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
    frit_binding b[2] = {{"n", n}, {"m", m}};
    void *ins[1] = {xv}, *os[2] = {yv, sv};
    CHECK_EQ_INT(frit_program_run(p, ins, os, b, 2), FRIT_OK);
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
      double row = 0;
      for (int64_t j = 0; j < m; j++) {
        double want = exp((double)xv[i * m + j]) * 2.0 + xv[i * m + j];
        row += want;
        if (fabs(yv[i * m + j] - want) > 1e-5 * (1 + fabs(want))) bad++;
      }
      if (fabs(sv[i] - row) > 1e-4 * (1 + fabs(row))) bad++;
    }
    CHECK_EQ_INT(bad, 0);
    free(xv), free(yv), free(sv);
  }
  frit_ctx_free(ctx);
}
#endif

int main(void) {
  test_unknown_device();
  test_launch_geometry();
  test_group_choice();
#ifdef SANITIZED
  fprintf(stderr, "test_device: OpenCL checks skipped under sanitizers\n");
#else
  test_opencl_program();
#endif
  CHECK_DONE();
}
