/* End-to-end tests of the runtime: compile and run tensor programs against plain C loops,
 * the interpreter path against the compiled one, symbolic shapes under one compile, errors,
 * memory and kernel queries, thread-count independence, and the thread pool itself. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "frit.h"
#include "runtime/pool.h"
#include "runtime/runtime.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static float frand(void) { /* xorshift; values in [-1, 1) */
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (float)((double)(rng_state >> 11) / (double)(1ull << 53) * 2.0 - 1.0);
}
static void fill(float *a, size_t n) {
  for (size_t i = 0; i < n; i++) a[i] = frand();
}
static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static bool close_enough(double got, double want, double tol) {
  return fabs(got - want) <= tol * (1.0 + fabs(want));
}
static bool contains(const char *s, const char *sub) { return s && strstr(s, sub) != NULL; }

/* ---------- the thread pool, without the compiler ---------- */

static atomic_int hits[10007];
static void count_kernel(void *const *bufs, const int64_t *vars, int64_t b, int64_t e) {
  (void)bufs;
  (void)vars;
  for (int64_t i = b; i < e; i++) atomic_fetch_add(&hits[i], 1);
}
static void empty_kernel(void *const *bufs, const int64_t *vars, int64_t b, int64_t e) {
  (void)bufs, (void)vars, (void)b, (void)e;
}

/* a chunk of real work: spins ~5 us per index, so workers must take part for a speedup */
static void busy_kernel(void *const *bufs, const int64_t *vars, int64_t b, int64_t e) {
  (void)bufs, (void)vars;
  double until = now_s() + 5e-6 * (double)(e - b);
  while (now_s() < until) {
  }
}

static void test_pool(void) {
  int sizes[] = {1, 2, 3, 7, 64, 10007};
  for (int nt = 1; nt <= 4; nt++) {
    frit_pool *pool = frit_pool_new(nt);
    CHECK(pool != NULL);
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
      for (int i = 0; i < sizes[s]; i++) atomic_store(&hits[i], 0);
      frit_pool_launch(pool, count_kernel, NULL, NULL, sizes[s]);
      int bad = 0;
      for (int i = 0; i < sizes[s]; i++) bad += atomic_load(&hits[i]) != 1;
      CHECK_EQ_INT(bad, 0); /* every index exactly once */
    }
    /* launch overhead of an empty kernel: printed for the record, not asserted (machine load) */
    int n = 20000;
    double t0 = now_s();
    for (int i = 0; i < n; i++) frit_pool_launch(pool, empty_kernel, NULL, NULL, 1 << 20);
    double dt = now_s() - t0;
    int m = 2000, nt_real = frit_pool_threads(pool);
    double t1 = now_s();
    for (int i = 0; i < m; i++) frit_pool_launch(pool, busy_kernel, NULL, NULL, 4 * nt_real);
    double busy = (now_s() - t1) / m;
    fprintf(stderr, "pool: %d thread(s): %.2f us per empty launch; %.1f us per launch of %d x 5 us "
            "(%.1f us if perfectly split)\n", nt_real, 1e6 * dt / n, 1e6 * busy, 4 * nt_real, 20.0);
    frit_pool_free(pool);
  }
}

/* ---------- programs ---------- */

static frit_program *compile1(frit_ctx *ctx, frit_tensor *out, int interpret, int threads) {
  frit_compile_opts o;
  memset(&o, 0, sizeof o);
  o.interpret = interpret;
  o.threads = threads;
  frit_program *p = frit_compile(ctx, &out, 1, &o);
  if (!p) fprintf(stderr, "compile failed: %s\n", frit_error(ctx));
  return p;
}

/* z = x * y + 1 with y broadcast along rows; also cast to i32 of floor */
static void test_elementwise(int interpret) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t xd[2] = {5, 7}, yd[1] = {7};
  frit_tensor *x = frit_input(ctx, "x", FRIT_F32, 2, xd);
  frit_tensor *y = frit_input(ctx, "y", FRIT_F32, 1, yd);
  frit_tensor *one = frit_scalar_f(ctx, FRIT_F32, 1.0);
  frit_tensor *z = frit_binary_t(ctx, FRIT_BF_ADD, frit_binary_t(ctx, FRIT_BF_MUL, x, y), one);
  frit_program *p = compile1(ctx, z, interpret, 0);
  CHECK(p != NULL);
  if (p) {
    CHECK_EQ_INT(frit_program_num_inputs(p), 2);
    CHECK_EQ_STR(frit_program_input_name(p, 0), "x");
    CHECK_EQ_STR(frit_program_input_name(p, 1), "y");
    CHECK_EQ_INT(frit_program_num_outputs(p), 1);
    float xv[35], yv[7], zv[35];
    fill(xv, 35);
    fill(yv, 7);
    void *in[2] = {xv, yv}, *out[1] = {zv};
    CHECK_EQ_INT(frit_program_run(p, in, out, NULL, 0), FRIT_OK);
    int bad = 0;
    for (int i = 0; i < 5; i++)
      for (int j = 0; j < 7; j++) {
        float want = xv[i * 7 + j] * yv[j] + 1.0f;
        bad += zv[i * 7 + j] != want; /* one rounding per op in f32, as C does */
      }
    CHECK_EQ_INT(bad, 0);
  }
  frit_ctx_free(ctx);
}

/* row sums and column maxima of a (13, 9) matrix */
static void test_reductions(int interpret) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t xd[2] = {13, 9};
  frit_tensor *x = frit_input(ctx, "x", FRIT_F32, 2, xd);
  int ax1 = 1, ax0 = 0;
  frit_tensor *outs[2] = {frit_reduce(ctx, FRIT_RF_SUM, x, &ax1, 1, 0, 0),
                          frit_reduce(ctx, FRIT_RF_MAX, x, &ax0, 1, 0, 0)};
  frit_compile_opts o;
  memset(&o, 0, sizeof o);
  o.interpret = interpret;
  frit_program *p = frit_compile(ctx, outs, 2, &o);
  if (!p) fprintf(stderr, "compile failed: %s\n", frit_error(ctx));
  CHECK(p != NULL);
  if (p) {
    float xv[13 * 9], s[13], m[9];
    fill(xv, 13 * 9);
    void *in[1] = {xv}, *out[2] = {s, m};
    CHECK_EQ_INT(frit_program_run(p, in, out, NULL, 0), FRIT_OK);
    int bad = 0;
    for (int i = 0; i < 13; i++) {
      double want = 0;
      for (int j = 0; j < 9; j++) want += xv[i * 9 + j];
      bad += !close_enough(s[i], want, 1e-5);
    }
    for (int j = 0; j < 9; j++) {
      float want = xv[j];
      for (int i = 1; i < 13; i++) want = xv[i * 9 + j] > want ? xv[i * 9 + j] : want;
      bad += m[j] != want;
    }
    CHECK_EQ_INT(bad, 0);
  }
  frit_ctx_free(ctx);
}

static void test_matmul(void) {
  frit_ctx *ctx = frit_ctx_new();
  enum { M = 24, K = 33, N = 17 };
  int64_t ad[2] = {M, K}, bd[2] = {K, N};
  frit_tensor *a = frit_input(ctx, "a", FRIT_F32, 2, ad);
  frit_tensor *b = frit_input(ctx, "b", FRIT_F32, 2, bd);
  frit_program *p = compile1(ctx, frit_matmul(ctx, a, b), 0, 0);
  CHECK(p != NULL);
  if (p) {
    static float av[M * K], bv[K * N], cv[M * N];
    fill(av, M * K);
    fill(bv, K * N);
    void *in[2] = {av, bv}, *out[1] = {cv};
    CHECK_EQ_INT(frit_program_run(p, in, out, NULL, 0), FRIT_OK);
    int bad = 0;
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) {
        double want = 0;
        for (int k = 0; k < K; k++) want += (double)av[i * K + k] * bv[k * N + j];
        bad += !close_enough(cv[i * N + j], want, 1e-4);
      }
    CHECK_EQ_INT(bad, 0);
  }
  frit_ctx_free(ctx);
}

/* y[i] = sum_j x[i,j]^2 for x of shape (n, 3): one compile, runs at several n */
static void test_symbolic(void) {
  frit_ctx *ctx = frit_ctx_new();
  frit_uop *n = frit_var(ctx, "n", 1, 4096);
  frit_uop *three = frit_const_int(ctx, FRIT_I64, 3);
  frit_uop *dims[2] = {n, three};
  frit_tensor *x = frit_input_sym(ctx, "x", FRIT_F32, 2, dims);
  int ax = 1;
  frit_tensor *y = frit_reduce(ctx, FRIT_RF_SUM, frit_binary_t(ctx, FRIT_BF_MUL, x, x), &ax, 1, 0, 0);
  frit_program *p = compile1(ctx, y, 0, 0);
  CHECK(p != NULL);
  if (!p) {
    frit_ctx_free(ctx);
    return;
  }
  frit_rt_stats before = frit_rt_stats_get(ctx);
  CHECK_EQ_INT(before.compiles, 1);
  int64_t ns[] = {1, 7, 100, 4096, 3};
  for (size_t t = 0; t < sizeof ns / sizeof *ns; t++) {
    int64_t nv = ns[t];
    float *xv = malloc((size_t)nv * 3 * sizeof *xv), *yv = malloc((size_t)nv * sizeof *yv);
    fill(xv, (size_t)nv * 3);
    frit_binding b = {"n", nv};
    void *in[1] = {xv}, *out[1] = {yv};
    CHECK_EQ_INT(frit_program_run(p, in, out, &b, 1), FRIT_OK);
    int bad = 0;
    for (int64_t i = 0; i < nv; i++) {
      double want = 0;
      for (int j = 0; j < 3; j++) want += (double)xv[i * 3 + j] * xv[i * 3 + j];
      bad += !close_enough(yv[i], want, 1e-5);
    }
    CHECK_EQ_INT(bad, 0);
    int nd = -1;
    int64_t shp[FRIT_MAX_DIMS];
    CHECK_EQ_INT(frit_program_output_shape(p, 0, &b, 1, &nd, shp), FRIT_OK);
    CHECK_EQ_INT(nd, 1);
    CHECK_EQ_INT(shp[0], nv);
    free(xv);
    free(yv);
  }
  /* the same outputs again: answered by the cache, no new pipeline run */
  double t0 = now_s();
  frit_program *p2 = compile1(ctx, y, 0, 0);
  fprintf(stderr, "compile cache: %.1f us for a repeated compile\n", 1e6 * (now_s() - t0));
  CHECK(p2 != NULL && p2 != p);
  frit_rt_stats after = frit_rt_stats_get(ctx);
  CHECK_EQ_INT(after.compiles, 1);
  CHECK_EQ_INT(after.hits, before.hits + 1);
  /* errors: a missing variable, one outside its bounds */
  float dummy[3 * 5000];
  void *in[1] = {dummy}, *out[1] = {dummy};
  CHECK_EQ_INT(frit_program_run(p, in, out, NULL, 0), FRIT_ERR_RUNTIME);
  CHECK(contains(frit_error(ctx), "'n' is not bound"));
  frit_binding bad_b = {"n", 5000};
  CHECK_EQ_INT(frit_program_run(p, in, out, &bad_b, 1), FRIT_ERR_RUNTIME);
  CHECK(contains(frit_error(ctx), "outside its bounds 1..4096"));
  frit_binding zero_b = {"n", 0};
  CHECK_EQ_INT(frit_program_run(p, in, out, &zero_b, 1), FRIT_ERR_RUNTIME);
  /* kernel metadata: every kernel is named, and the launch of the one writing y mentions n */
  int nk = frit_program_num_kernels(p), saw_n = 0;
  CHECK(nk >= 1);
  for (int k = 0; k < nk; k++) {
    CHECK(frit_program_kernel_name(p, k) != NULL);
    CHECK(frit_program_kernel_ops(p, k) != NULL);
    saw_n += contains(frit_program_kernel_launch(p, k), "n");
  }
  CHECK(saw_n >= 1);
  CHECK(frit_program_kernel_name(p, nk) == NULL);
  CHECK(contains(frit_program_source(p), "frit_k0"));
  /* the interpreter path binds variables by name too, and prints the codegen stages on demand */
  frit_program *pi = compile1(ctx, y, 1, 0);
  CHECK(pi != NULL);
  if (pi) {
    float xv[21], a[7], b2[7];
    fill(xv, 21);
    frit_binding b = {"n", 7};
    void *in2[1] = {xv}, *oa[1] = {a}, *ob[1] = {b2};
    CHECK_EQ_INT(frit_program_run(p, in2, oa, &b, 1), FRIT_OK);
    CHECK_EQ_INT(frit_program_run(pi, in2, ob, &b, 1), FRIT_OK);
    int bad = 0;
    for (int i = 0; i < 7; i++) bad += !close_enough(a[i], b2[i], 1e-6);
    CHECK_EQ_INT(bad, 0);
    FILE *f = fopen("/dev/null", "w");
    CHECK_EQ_INT(frit_program_print(pi, "linear", 0, f), FRIT_OK);
    fclose(f);
    CHECK_EQ_INT(frit_program_run(pi, in2, ob, NULL, 0), FRIT_ERR_RUNTIME);
  }
  frit_program_free(p2); /* freed early; frit_ctx_free must not free it again */
  frit_ctx_free(ctx);
}

/* required memory: exp(x) + 1 unfused keeps exp(x) in the arena; fused it needs none */
static void test_memory(void) {
  frit_ctx *ctx = frit_ctx_new();
  frit_uop *n = frit_var(ctx, "n", 1, 1 << 20);
  frit_tensor *x = frit_input_sym(ctx, "x", FRIT_F32, 1, &n);
  frit_tensor *e = frit_unary_t(ctx, FRIT_UF_EXP, x);
  frit_tensor *y = frit_binary_t(ctx, FRIT_BF_ADD, e, frit_scalar_f(ctx, FRIT_F32, 1.0));
  frit_compile_opts o;
  memset(&o, 0, sizeof o);
  o.no_fusion = 1;
  frit_program *unfused = frit_compile(ctx, &y, 1, &o);
  frit_program *fused = compile1(ctx, y, 0, 0);
  CHECK(unfused != NULL && fused != NULL);
  if (unfused && fused) {
    size_t small = 0, big = 0, none = 1;
    frit_binding b1 = {"n", 100}, b2 = {"n", 10000};
    CHECK_EQ_INT(frit_program_required_memory(unfused, &b1, 1, &small), FRIT_OK);
    CHECK_EQ_INT(frit_program_required_memory(unfused, &b2, 1, &big), FRIT_OK);
    CHECK_EQ_INT(frit_program_required_memory(fused, &b2, 1, &none), FRIT_OK);
    CHECK(small >= 100 * sizeof(float));
    CHECK(big >= 10000 * sizeof(float));
    CHECK(big > small);
    CHECK_EQ_INT(none, 0);
    CHECK(frit_program_num_kernels(unfused) > frit_program_num_kernels(fused));
    CHECK_EQ_INT(frit_program_required_memory(unfused, NULL, 0, &small), FRIT_ERR_RUNTIME);
    /* both compute the same thing; the unfused one through its arena, at growing sizes */
    int64_t sizes[] = {10, 10000, 300};
    for (int t = 0; t < 3; t++) {
      int64_t nv = sizes[t];
      float *xv = malloc((size_t)nv * 4), *a = malloc((size_t)nv * 4), *bb = malloc((size_t)nv * 4);
      fill(xv, (size_t)nv);
      frit_binding bn = {"n", nv};
      void *in[1] = {xv}, *oa[1] = {a}, *ob[1] = {bb};
      CHECK_EQ_INT(frit_program_run(unfused, in, oa, &bn, 1), FRIT_OK);
      CHECK_EQ_INT(frit_program_run(fused, in, ob, &bn, 1), FRIT_OK);
      int bad = 0;
      for (int64_t i = 0; i < nv; i++) bad += a[i] != bb[i] || !close_enough(a[i], expf(xv[i]) + 1.0f, 1e-6);
      CHECK_EQ_INT(bad, 0);
      free(xv);
      free(a);
      free(bb);
    }
  }
  frit_ctx_free(ctx);
}

/* The mappings of at least min_bytes that carry madvise(MADV_HUGEPAGE) ("hg" in smaps' VmFlags);
 * -1 where /proc/self/smaps cannot be read. */
static int hugepage_advised_maps(uint64_t min_bytes) {
  FILE *f = fopen("/proc/self/smaps", "r");
  if (!f) return -1;
  char line[512];
  uint64_t size = 0;
  int n = 0;
  while (fgets(line, sizeof line, f)) {
    unsigned long long lo, hi;
    if (sscanf(line, "%llx-%llx ", &lo, &hi) == 2) size = hi - lo;
    else if (!strncmp(line, "VmFlags:", 8) && strstr(line, " hg") && size >= min_bytes) n++;
  }
  fclose(f);
  return n;
}

/* An arena of 4 MiB or more is advised into transparent huge pages (runtime.md), unless
 * FRIT_NO_HUGEPAGES is set: the unfused exp(x) + 1 of 2M floats keeps 8 MiB in its arena. */
static void test_huge_page_arena(void) {
  FILE *thp = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  int before = hugepage_advised_maps((uint64_t)4 << 20);
  if (!thp || before < 0) {
    printf("no transparent huge pages here: the arena's advice is not checked\n");
    if (thp) fclose(thp);
    return;
  }
  fclose(thp);
  frit_ctx *ctx = frit_ctx_new();
  frit_uop *n = frit_var(ctx, "n", 1, 1 << 22);
  frit_tensor *x = frit_input_sym(ctx, "x", FRIT_F32, 1, &n);
  frit_tensor *y = frit_binary_t(ctx, FRIT_BF_ADD, frit_unary_t(ctx, FRIT_UF_EXP, x), frit_scalar_f(ctx, FRIT_F32, 1.0));
  frit_compile_opts o;
  memset(&o, 0, sizeof o);
  o.no_fusion = 1;
  int64_t nv = 1 << 21;
  float *xv = calloc((size_t)nv, 4), *out = malloc((size_t)nv * 4);
  frit_binding bn = {"n", nv};
  void *in[1] = {xv}, *ob[1] = {out};
  frit_program *p = frit_compile(ctx, &y, 1, &o);
  CHECK(p != NULL);
  if (p) {
    CHECK_EQ_INT(frit_program_run(p, in, ob, &bn, 1), FRIT_OK);
    CHECK(out[0] == 2.0f && out[nv - 1] == 2.0f);
    CHECK_EQ_INT(hugepage_advised_maps((uint64_t)4 << 20), before + 1);
    frit_program_free(p);
  }
  /* (a sanitizer's allocator may keep the freed arena mapped, advice and all) */
  int kept = hugepage_advised_maps((uint64_t)4 << 20);
  setenv("FRIT_NO_HUGEPAGES", "1", 1);
  p = frit_compile(ctx, &y, 1, &o);
  CHECK(p != NULL);
  if (p) {
    CHECK_EQ_INT(frit_program_run(p, in, ob, &bn, 1), FRIT_OK);
    CHECK_EQ_INT(hugepage_advised_maps((uint64_t)4 << 20), kept);
    frit_program_free(p);
  }
  unsetenv("FRIT_NO_HUGEPAGES");
  free(xv);
  free(out);
  frit_ctx_free(ctx);
}

/* a softmax-like program big enough to be split across threads: results must not depend on
 * the thread count, and the interpreter must agree with the compiled code */
static void test_threads_and_interpret(void) {
  frit_ctx *ctx = frit_ctx_new();
  enum { R = 512, C = 200 };
  int64_t xd[2] = {R, C};
  frit_tensor *x = frit_input(ctx, "x", FRIT_F32, 2, xd);
  frit_tensor *y = frit_softmax(ctx, x, -1);
  static float xv[R * C], y1[R * C], y4[R * C], yi[R * C];
  fill(xv, R * C);
  float *outs[3] = {y1, y4, yi};
  int threads[3] = {1, 4, 1}, interp[3] = {0, 0, 1};
  for (int v = 0; v < 3; v++) {
    frit_program *p = compile1(ctx, y, interp[v], threads[v]);
    CHECK(p != NULL);
    if (!p) continue;
    void *in[1] = {xv}, *out[1] = {outs[v]};
    CHECK_EQ_INT(frit_program_run(p, in, out, NULL, 0), FRIT_OK);
    CHECK_EQ_INT(frit_program_run(p, in, out, NULL, 0), FRIT_OK); /* arena and pool reused */
  }
  int diff_threads = 0, diff_interp = 0, bad = 0;
  for (int i = 0; i < R; i++) {
    double mx = -INFINITY, sum = 0;
    for (int j = 0; j < C; j++) mx = fmax(mx, xv[i * C + j]);
    for (int j = 0; j < C; j++) sum += exp(xv[i * C + j] - mx);
    for (int j = 0; j < C; j++) {
      int k = i * C + j;
      diff_threads += memcmp(&y1[k], &y4[k], sizeof(float)) != 0;
      diff_interp += !close_enough(y1[k], yi[k], 1e-6);
      bad += !close_enough(y1[k], exp(xv[k] - mx) / sum, 1e-5);
    }
  }
  CHECK_EQ_INT(diff_threads, 0);
  CHECK_EQ_INT(diff_interp, 0);
  CHECK_EQ_INT(bad, 0);
  frit_ctx_free(ctx);
}

/* bad compile calls; a dim that is an expression of a variable */
static void test_compile_errors(void) {
  frit_ctx *ctx = frit_ctx_new();
  CHECK(frit_compile(ctx, NULL, 0, NULL) == NULL);
  CHECK_EQ_INT(frit_last_status(ctx), FRIT_ERR_INVALID);
  frit_tensor *none = NULL;
  frit_clear_error(ctx);
  CHECK(frit_compile(ctx, &none, 1, NULL) == NULL);
  CHECK(contains(frit_error(ctx), "output 0 is NULL"));
  /* x has n - 5 rows (the frontend requires n >= 5 through the bounds, so no shape can be
   * negative at run time) */
  frit_uop *n = frit_var(ctx, "n", 5, 100);
  frit_uop *rows = frit_binary(ctx, FRIT_OP_SUB, n, frit_const_int(ctx, FRIT_I64, 5));
  frit_tensor *x = frit_input_sym(ctx, "x", FRIT_F32, 1, &rows);
  frit_tensor *y = x ? frit_unary_t(ctx, FRIT_UF_NEG, x) : NULL;
  frit_program *p = y ? compile1(ctx, y, 0, 0) : NULL;
  if (p) {
    float xv[8], yv[8];
    fill(xv, 8);
    void *in[1] = {xv}, *out[1] = {yv};
    frit_binding ok = {"n", 13}, neg = {"n", 3};
    CHECK_EQ_INT(frit_program_run(p, in, out, &ok, 1), FRIT_OK);
    int bad = 0;
    for (int i = 0; i < 8; i++) bad += yv[i] != -xv[i];
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(frit_program_run(p, in, out, &neg, 1), FRIT_ERR_RUNTIME);
    CHECK(contains(frit_error(ctx), "outside its bounds 5..100"));
  }
  CHECK(p != NULL);
  frit_ctx_free(ctx);
}

static void test_info_and_print(void) {
  frit_ctx *ctx = frit_ctx_new();
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CHECK_EQ_INT(frit_info(ctx, f), FRIT_OK);
  fclose(f);
  CHECK(contains(buf, "threads: "));
  CHECK(contains(buf, "cc"));
  CHECK(contains(buf, "cache"));
  /* the version the library reports is the header's, and frit info says it */
  char want[64], line[80];
  snprintf(want, sizeof want, "%d.%d.%d", FRIT_VERSION_MAJOR, FRIT_VERSION_MINOR, FRIT_VERSION_PATCH);
  CHECK(strcmp(frit_version(), want) == 0);
  snprintf(line, sizeof line, "version: %s\n", want);
  CHECK(contains(buf, line));
  free(buf);

  int64_t d[1] = {10};
  frit_tensor *x = frit_input(ctx, "x", FRIT_F32, 1, d);
  frit_tensor *y = frit_unary_t(ctx, FRIT_UF_SQRT, x);
  frit_program *p = compile1(ctx, y, 0, 2);
  CHECK(p != NULL);
  if (p) {
    const char *stages[] = {"tensor", "kernel", "optimized", "linear"};
    for (int s = 0; s < 4; s++) {
      buf = NULL;
      f = open_memstream(&buf, &len);
      CHECK_EQ_INT(frit_program_print(p, stages[s], -1, f), FRIT_OK);
      fclose(f);
      CHECK(len > 0);
      free(buf);
    }
    f = fopen("/dev/null", "w");
    CHECK_EQ_INT(frit_program_print(p, "bogus", -1, f), FRIT_ERR_INVALID);
    CHECK_EQ_INT(frit_program_print(p, "kernel", 99, f), FRIT_ERR_INVALID);
    fclose(f);
    buf = NULL;
    f = open_memstream(&buf, &len);
    CHECK_EQ_INT(frit_program_info(p, f), FRIT_OK);
    fclose(f);
    CHECK(contains(buf, "threads: 2"));
    free(buf);
    /* the whole per-run cost of a tiny program (bind, size, plan, one kernel on the caller) */
    float xv[10], yv[10];
    fill(xv, 10);
    void *in[1] = {xv}, *out[1] = {yv};
    int n = 20000, bad = 0;
    double t0 = now_s();
    for (int i = 0; i < n; i++) bad += frit_program_run(p, in, out, NULL, 0) != FRIT_OK;
    fprintf(stderr, "run: %.2f us per run of a 10-element program\n", 1e6 * (now_s() - t0) / n);
    CHECK_EQ_INT(bad, 0);
  }
  frit_ctx_free(ctx);
}

/* The profiler's FMA microbenchmark runs twelve distinct chains: its result is that of twelve
 * chains started at c, c+1, ..., c+11 (when all twelve started equal, gcc merged them into one and
 * the peak read 1.5x too high). The AVX2 form only: the portable one sums its 96 lanes. */
static void test_fma_probe(void) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return;
  float sink[2];
  frit_rt_fma_probe(sink, 2);
  for (int c = 0; c < 2; c++) {
    float x[12];
    for (int i = 0; i < 12; i++) {
      x[i] = (float)c + (float)i;
      for (int it = 0; it < (1 << 19); it++) x[i] = fmaf(x[i], 0.999999f, 1e-7f);
    }
    float s = ((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7]));
    s = s + ((x[8] + x[9]) + (x[10] + x[11]));
    CHECK(sink[c] == s);
    CHECK(s > 12 * x[0] + 1); /* distinct chains: twelve copies of the first would sum to 12 x[0] */
  }
#endif
}

/* The work estimate adds loops that run one after the other in a body: a kernel of 1000 points,
 * each running two loops of 50 and one nest of 20 x 30, does 1000 * (50 + 50 + 600) iterations
 * (the product of all its loops, 1000 * 50 * 50 * 20 * 30, made such kernels look big: threaded
 * and size-specialised for nothing). Checked against the sum computed here, and by the result. */
static void test_work_estimate(void) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t d[1] = {1000};
  frit_tensor *x = frit_input(ctx, "x", FRIT_F32, 1, d), *out = frit_zeros(ctx, FRIT_F32, 1, d), *i;
  CHECK_EQ_INT(frit_kernel_begin_static(ctx, "two_loops", 1, d, &i), FRIT_OK);
  frit_tensor *zero = frit_scalar_i(ctx, FRIT_I64, 0), *one = frit_scalar_i(ctx, FRIT_I64, 1);
  int acc = frit_kernel_var(ctx, FRIT_F32, frit_scalar_f(ctx, FRIT_F32, 0));
  frit_tensor *xi = frit_kernel_load(ctx, x, 1, &i), *j, *j2;
  for (int loop = 0; loop < 3; loop++) {
    frit_kernel_loop_begin(ctx, zero, frit_scalar_i(ctx, FRIT_I64, loop < 2 ? 50 : 20), one, &j);
    if (loop == 2) frit_kernel_loop_begin(ctx, zero, frit_scalar_i(ctx, FRIT_I64, 30), one, &j2);
    frit_tensor *t = frit_binary_t(ctx, FRIT_BF_MUL, xi, frit_astype(ctx, loop == 2 ? j2 : j, FRIT_F32));
    frit_kernel_var_set(ctx, acc, frit_binary_t(ctx, FRIT_BF_ADD, frit_kernel_var_get(ctx, acc), t));
    if (loop == 2) frit_kernel_loop_end(ctx);
    frit_kernel_loop_end(ctx);
  }
  frit_kernel_store(ctx, out, 1, &i, frit_kernel_var_get(ctx, acc));
  CHECK_EQ_INT(frit_kernel_end(ctx), 1);
  frit_tensor *nw = NULL;
  CHECK(frit_kernel_written(ctx, 0, NULL, &nw) == FRIT_OK);
  frit_program *p = nw ? compile1(ctx, nw, 0, 1) : NULL;
  CHECK(p != NULL);
  if (p) {
    float xv[1000], ov[1000];
    for (int k = 0; k < 1000; k++) xv[k] = (float)(k % 7);
    CHECK_EQ_INT(frit_program_run(p, (void *[]){xv}, (void *[]){ov}, NULL, 0), FRIT_OK);
    int bad = 0;
    for (int k = 0; k < 1000; k++) bad += ov[k] != xv[k] * (float)(2 * 1225 + 20 * 435);
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(frit_program_num_kernels(p), 1);
    bool unknown = true;
    int64_t work = frit_rt_kernel_work(p, 0, &unknown);
    if (work != 1000 * (50 + 50 + 20 * 30)) fprintf(stderr, "work estimate %lld\n", (long long)work);
    CHECK(work == 1000 * (50 + 50 + 20 * 30));
    CHECK(!unknown);
  }
  frit_program_free(p);
  frit_ctx_free(ctx);
}

int main(void) {
  test_fma_probe();
  test_work_estimate();
  test_pool();
  test_elementwise(0);
  test_elementwise(1);
  test_reductions(0);
  test_reductions(1);
  test_matmul();
  test_symbolic();
  test_memory();
  test_huge_page_arena();
  test_threads_and_interpret();
  test_compile_errors();
  test_info_and_print();
  CHECK_DONE();
}
