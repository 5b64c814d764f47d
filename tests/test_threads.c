/* Threads and steady memory in C: several threads, each with its own ctx, compile and run
 * elementwise, reduction and matmul programs at once on the shared kernel pool (checked against
 * plain C loops); the shared pool launched from several threads directly; and a ctx that
 * compiles, runs and frees programs many times without growing, or compiles many distinct ones
 * at a small cost each. Run under ThreadSanitizer by
 * `make tsan`. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "frit.h"
#include "ir/uop.h"
#include "dist/dist.h"
#include "runtime/pool.h"

#define NTHREADS 4

/* Sanitizers keep freed memory in quarantine and add shadow memory: the process-size check
 * only means something in the plain build (the owned-list and node checks run everywhere). */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

static char cache_dir[256];

/* ---------- the shared pool launched from several threads ---------- */

enum { POOL_EXTENT = 4099 };
typedef struct {
  frit_pool *pool;
  int bad;
} pool_job;

static void add_kernel(void *const *bufs, const int64_t *vars, int64_t b, int64_t e) {
  int *hits = bufs[0];
  for (int64_t i = b; i < e; i++) hits[i] += (int)vars[0];
}

static void *pool_worker(void *arg) {
  pool_job *j = arg;
  int *hits = calloc(POOL_EXTENT, sizeof *hits);
  void *bufs[1] = {hits};
  for (int it = 1; it <= 200; it++) {
    int64_t vars[1] = {it};
    frit_pool_launch(j->pool, add_kernel, bufs, vars, POOL_EXTENT);
  }
  for (int i = 0; i < POOL_EXTENT; i++) /* every index once per launch: 1 + 2 + ... + 200 */
    if (hits[i] != 200 * 201 / 2) j->bad++;
  free(hits);
  return NULL;
}

static void test_shared_pool(void) {
  frit_pool *a = frit_pool_acquire(3), *b = frit_pool_acquire(3);
  CHECK(a != NULL && a == b); /* one pool per thread count */
  CHECK(frit_pool_acquire(1) == NULL);
  pthread_t th[NTHREADS];
  pool_job jobs[NTHREADS] = {{0}};
  for (int t = 0; t < NTHREADS; t++) {
    jobs[t].pool = a;
    pthread_create(&th[t], NULL, pool_worker, &jobs[t]);
  }
  for (int t = 0; t < NTHREADS; t++) {
    pthread_join(th[t], NULL);
    CHECK_EQ_INT(jobs[t].bad, 0);
  }
  frit_pool_release(b);
  frit_pool_release(a);
}

/* ---------- programs in several threads, one ctx each ---------- */

typedef struct {
  int id;
  int bad;        /* wrong results */
  int failed;     /* API failures */
  char msg[256];
} prog_job;

static uint64_t next_rand(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}
static void fill(double *a, size_t n, uint64_t *s) {
  for (size_t i = 0; i < n; i++) a[i] = (double)(next_rand(s) >> 11) / (double)(1ull << 53) - 0.5;
}
static bool near(double got, double want) { return fabs(got - want) <= 1e-9 * (1.0 + fabs(want)); }

static frit_program *compile1(frit_ctx *ctx, frit_tensor *out) {
  frit_compile_opts o;
  memset(&o, 0, sizeof o);
  o.threads = 4; /* the shared 4-thread pool, contended by every job */
  o.cache_dir = cache_dir;
  return frit_compile(ctx, &out, 1, &o);
}

static void *prog_worker(void *arg) {
  prog_job *j = arg;
  uint64_t seed = 0x9E3779B97F4A7C15ull + (uint64_t)j->id * 7919;
  frit_ctx *ctx = frit_ctx_new();
  /* z = x * y + c (symbolic rows), s = sum(x, axis 1) (symbolic rows), m = a @ b (per job) */
  frit_uop *n = frit_var(ctx, "n", 1, 1 << 20);
  frit_uop *dims[2] = {n, frit_const_int(ctx, FRIT_I64, 128)};
  frit_tensor *x = frit_input_sym(ctx, "x", FRIT_F64, 2, dims);
  frit_tensor *y = frit_input_sym(ctx, "y", FRIT_F64, 2, dims);
  frit_tensor *z = frit_binary_t(ctx, FRIT_BF_ADD, frit_binary_t(ctx, FRIT_BF_MUL, x, y),
                                 frit_scalar_f(ctx, FRIT_F64, 0.5 * j->id));
  int ax = 1;
  frit_tensor *s = frit_reduce(ctx, FRIT_RF_SUM, x, &ax, 1, 0, 0);
  int64_t M = 48 + 8 * j->id, K = 40, N = 56;
  int64_t ad[2] = {M, K}, bd[2] = {K, N};
  frit_tensor *a = frit_input(ctx, "a", FRIT_F64, 2, ad), *b = frit_input(ctx, "b", FRIT_F64, 2, bd);
  frit_tensor *m = frit_matmul(ctx, a, b);
  frit_program *pz = z ? compile1(ctx, z) : NULL, *ps = s ? compile1(ctx, s) : NULL;
  frit_program *pm = m ? compile1(ctx, m) : NULL;
  if (!pz || !ps || !pm) {
    snprintf(j->msg, sizeof j->msg, "%s", frit_error(ctx));
    j->failed++;
    frit_ctx_free(ctx);
    return NULL;
  }
  size_t cap = 600 * 128;
  double *xb = malloc(cap * sizeof *xb), *yb = malloc(cap * sizeof *yb), *zb = malloc(cap * sizeof *zb);
  double *sb = malloc(600 * sizeof *sb);
  double *am = malloc((size_t)(M * K) * sizeof *am), *bm = malloc((size_t)(K * N) * sizeof *bm);
  double *mm = malloc((size_t)(M * N) * sizeof *mm);
  for (int it = 0; it < 24; it++) {
    int64_t rows = 200 + (int64_t)(next_rand(&seed) % 400);
    size_t cnt = (size_t)rows * 128;
    fill(xb, cnt, &seed), fill(yb, cnt, &seed), fill(am, (size_t)(M * K), &seed), fill(bm, (size_t)(K * N), &seed);
    frit_binding bind = {"n", rows};
    void *in2[2] = {xb, yb}, *out1[1] = {zb}, *in1[1] = {xb}, *outs[1] = {sb};
    void *inm[2] = {am, bm}, *outm[1] = {mm};
    if (frit_program_run(pz, in2, out1, &bind, 1) != FRIT_OK || frit_program_run(ps, in1, outs, &bind, 1) != FRIT_OK ||
        frit_program_run(pm, inm, outm, NULL, 0) != FRIT_OK) {
      snprintf(j->msg, sizeof j->msg, "%s", frit_error(ctx));
      j->failed++;
      break;
    }
    for (size_t i = 0; i < cnt; i++)
      if (!near(zb[i], xb[i] * yb[i] + 0.5 * j->id)) j->bad++;
    for (int64_t r = 0; r < rows; r++) {
      double acc = 0;
      for (int c = 0; c < 128; c++) acc += xb[r * 128 + c];
      if (!near(sb[r], acc)) j->bad++;
    }
    for (int64_t r = 0; r < M; r++)
      for (int64_t c = 0; c < N; c++) {
        double acc = 0;
        for (int64_t k = 0; k < K; k++) acc += am[r * K + k] * bm[k * N + c];
        if (!near(mm[r * N + c], acc)) j->bad++;
      }
  }
  free(xb), free(yb), free(zb), free(sb), free(am), free(bm), free(mm);
  frit_ctx_free(ctx);
  return NULL;
}

static void test_programs_in_threads(void) {
  pthread_t th[NTHREADS];
  prog_job jobs[NTHREADS];
  memset(jobs, 0, sizeof jobs);
  for (int t = 0; t < NTHREADS; t++) {
    jobs[t].id = t;
    pthread_create(&th[t], NULL, prog_worker, &jobs[t]);
  }
  for (int t = 0; t < NTHREADS; t++) {
    pthread_join(th[t], NULL);
    if (jobs[t].failed) fprintf(stderr, "thread %d: %s\n", t, jobs[t].msg);
    CHECK_EQ_INT(jobs[t].failed, 0);
    CHECK_EQ_INT(jobs[t].bad, 0);
  }
}

/* ---------- compile/free cycles reach a steady state ---------- */

static long rss_pages(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  long size = 0, res = 0;
  if (f) {
    if (fscanf(f, "%ld %ld", &size, &res) != 2) res = 0;
    fclose(f);
  }
  return res;
}

static void test_compile_free_cycles(void) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t d[1] = {4096};
  frit_tensor *x = frit_input(ctx, "x", FRIT_F64, 1, d);
  frit_tensor *z = frit_unary_t(ctx, FRIT_UF_EXP, frit_binary_t(ctx, FRIT_BF_MUL, x, x));
  double *in = calloc(4096, sizeof *in), *out = calloc(4096, sizeof *out);
  void *ins[1] = {in}, *outs[1] = {out};
  size_t owned0 = 0, nodes0 = 0;
  long rss0 = 0;
  for (int it = 0; it < 3000; it++) {
    frit_program *p = compile1(ctx, z);
    if (!p) {
      fprintf(stderr, "compile: %s\n", frit_error(ctx));
      CHECK(p != NULL);
      break;
    }
    CHECK(frit_program_run(p, ins, outs, NULL, 0) == FRIT_OK);
    const char *ir = frit_ir_to_string(ctx, frit_tensor_uop(z));
    CHECK(ir != NULL);
    frit_program_free(p);
    if (it == 100) owned0 = ctx->owned_count, nodes0 = frit_node_count(ctx), rss0 = rss_pages();
  }
  CHECK(out[1] == 1.0);
  /* nothing per cycle: the ctx's owned list, its nodes and the process size stay put */
  CHECK_EQ_INT(ctx->owned_count, owned0);
  CHECK_EQ_INT(frit_node_count(ctx), nodes0);
  long grown_kb = (rss_pages() - rss0) * (sysconf(_SC_PAGESIZE) / 1024);
  /* a leak of even 400 bytes a cycle grows it by over 1 MiB; allocator arenas and lazily
   * touched pages account for one-off jumps of ~0.5 MiB on loaded machines */
  if (!SANITIZED) {
    if (grown_kb > 1024) fprintf(stderr, "compile/free cycles grew the process by %ld KiB\n", grown_kb);
    CHECK(grown_kb <= 1024);
  }
  free(in), free(out);
  frit_ctx_free(ctx);
}

/* Distinct programs in one ctx cost what they need (their graph, schedule and code), not a
 * copy of the scheduler's rule set each (that was ~130 KB per program). The code includes the
 * program's C source, whose prelude is 59.6 KB since the twenty-first session's f32 asin, acos
 * and atan2 of their own (57 KB after the eighteenth's f64 exp2, log2, tanh, sinh, cosh, atan,
 * atan2, asin and acos, 45 KB after the seventeenth's, 38 after the fifteenth's, 30 before, with
 * the bound at 72, 64, 56 and 48 KiB; 73 measured): hence 75. A copy of the rule set would still
 * cost about twice the prelude more. */
static void test_distinct_programs(void) {
  frit_ctx *ctx = frit_ctx_new();
  long rss0 = 0;
  size_t owned0 = 0;
  int first = 40, last = 240;
  for (int n = 2; n < last; n++) {
    int64_t d[1] = {2 * n}, nd[2] = {n, 2};
    frit_tensor *x = frit_input(ctx, "x", FRIT_F64, 1, d);
    frit_tensor *y = frit_binary_t(ctx, FRIT_BF_MUL, frit_reshape(ctx, x, 2, nd), frit_scalar_f(ctx, FRIT_F64, 2.0));
    frit_program *p = y ? compile1(ctx, y) : NULL;
    if (!p) {
      fprintf(stderr, "compile: %s\n", frit_error(ctx));
      CHECK(p != NULL);
      break;
    }
    if (n == first) rss0 = rss_pages(), owned0 = ctx->owned_count;
  }
  CHECK_EQ_INT(ctx->owned_count - owned0, last - 1 - first); /* one program object each */
  long per_kb = (rss_pages() - rss0) * (sysconf(_SC_PAGESIZE) / 1024) / (last - 1 - first);
  if (!SANITIZED) {
    if (per_kb > 75) fprintf(stderr, "a distinct program costs %ld KiB\n", per_kb);
    CHECK(per_kb <= 75);
  }
  frit_ctx_free(ctx);
}

/* The exchange thread's queue with several threads starting and waiting for jobs at once (a
 * one-process world: each job is a copy), then stopped by finalize. */
static void *exchange_body(void *arg) {
  frit_ctx *ctx = arg;
  enum { NJ = 40, N = 300 };
  static _Thread_local int32_t in[NJ][N], out[NJ][N];
  frit_dist_job *jobs[NJ];
  long bad = 0;
  for (int j = 0; j < NJ; j++) {
    for (int i = 0; i < N; i++) in[j][i] = j * 1000 + i, out[j][i] = -1;
    int64_t dims[1] = {N};
    frit_coll_call c = {.kind = FRIT_COLL_ALL_REDUCE, .op = FRIT_COLL_SUM, .dtype = FRIT_I32, .numel = N,
                        .ndim = 1, .dims = dims, .tag = (uint64_t)j};
    jobs[j] = frit_dist_start(ctx, &c, in[j], out[j]);
    bad += jobs[j] == NULL;
  }
  for (int j = NJ - 1; j >= 0; j -= 2) bad += frit_dist_wait(ctx, jobs[j]) != FRIT_OK; /* odd ones first */
  for (int j = 0; j < NJ; j += 2) bad += frit_dist_wait(ctx, jobs[j]) != FRIT_OK;
  for (int j = 0; j < NJ; j++)
    for (int i = 0; i < N; i++) bad += out[j][i] != j * 1000 + i;
  return (void *)bad;
}

static void test_exchange_thread(void) {
  frit_ctx *ctx = frit_ctx_new();
  CHECK(frit_dist_init(ctx, 0) == FRIT_OK && frit_dist_size() == 1);
  pthread_t th[NTHREADS];
  frit_ctx *ctxs[NTHREADS];
  for (int t = 0; t < NTHREADS; t++) {
    ctxs[t] = frit_ctx_new();
    CHECK(pthread_create(&th[t], NULL, exchange_body, ctxs[t]) == 0);
  }
  for (int t = 0; t < NTHREADS; t++) {
    void *bad = NULL;
    pthread_join(th[t], &bad);
    if (bad) fprintf(stderr, "exchange thread test, thread %d: %ld bad, %s\n", t, (long)bad, frit_error(ctxs[t]));
    CHECK(bad == NULL);
    frit_ctx_free(ctxs[t]);
  }
  CHECK(frit_dist_finalize(ctx) == FRIT_OK);
  frit_ctx_free(ctx);
}

int main(void) {
  const char *t = getenv("TMPDIR");
  snprintf(cache_dir, sizeof cache_dir, "%s/frit-test-threads-XXXXXX", t && *t ? t : "/tmp");
  if (!mkdtemp(cache_dir)) {
    perror("mkdtemp");
    return 1;
  }
  test_shared_pool();
  test_programs_in_threads();
  test_compile_free_cycles();
  test_distinct_programs();
  test_exchange_thread();
  frit_ctx *ctx = frit_ctx_new();
  frit_cache_clear(ctx, cache_dir);
  frit_ctx_free(ctx);
  rmdir(cache_dir);
  printf("test_threads: %d checks, %d failures\n", check_count_, check_failures_);
  return check_failures_ ? 1 : 0;
}
