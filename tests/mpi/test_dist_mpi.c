/* Test of the MPI layer (src/dist): every collective kind and dtype against results worked out here,
 * NaN propagation, sendrecv rings and edges, the cross-rank mismatch check, and (mode "timeout") the
 * deadline. Not part of `make test` (it needs mpirun). By hand, from the repository root:
 *
 *   make -s -j2 all
 *   mkdir -p build/mpi && ln -sf ../libfrit.so build/mpi/libfrit.so.0    # libfrit.so's soname
 *   gcc -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -O1 -g -Iinclude -Isrc tests/mpi/test_dist_mpi.c \
 *       build/libfrit.so -Wl,-rpath,'$ORIGIN' -lm -lpthread -o build/mpi/test_dist_mpi
 *   build/mpi/test_dist_mpi                     # no launcher: a one-process world, MPI not loaded
 *   build/mpi/test_dist_mpi singleton           # no launcher, mode 1: MPI's singleton init, size 1
 *   mpirun --allow-run-as-root --oversubscribe -n 2 build/mpi/test_dist_mpi
 *   mpirun --allow-run-as-root --oversubscribe -n 4 build/mpi/test_dist_mpi
 *   mpirun --allow-run-as-root --oversubscribe -n 2 build/mpi/test_dist_mpi timeout
 *
 * (--allow-run-as-root only when running as root.) Each rank prints its failures and a summary;
 * the exit status is nonzero when a check failed.
 * Timeout mode: rank 1 skips the collective and sleeps 4 s; rank 0 (FRIT_DIST_TIMEOUT=1) must get
 * the timeout error within 2 s, then an immediate "unusable" error, and an error from
 * frit_dist_finalize, which leaves MPI unfinalised (in general MPI_Finalize could wait forever on a
 * lost rank). Here rank 1 is alive and finalises after its sleep, so rank 0 calls MPI_Finalize
 * itself (dlsym, no -lmpi) and both exit 0. Without that, mpirun would call rank 0's exit without
 * MPI_Finalize an abnormal termination, kill rank 1 and return 1. */
#include "dist/dist.h"
#include "frit.h"

#include <complex.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int fails, checks, R, P;
#define CHECK(cond, ...)                                                                    \
  do {                                                                                      \
    checks++;                                                                               \
    if (!(cond)) {                                                                          \
      fails++;                                                                              \
      fprintf(stderr, "rank %d of %d: line %d: %s: ", R, P, __LINE__, #cond);               \
      fprintf(stderr, __VA_ARGS__);                                                         \
      fputc('\n', stderr);                                                                  \
    }                                                                                       \
  } while (0)

#define FAIL(...) CHECK(!"mismatch", __VA_ARGS__)

static frit_ctx *ctx;

static size_t esize(frit_dtype dt) { return (size_t)frit_dtype_bits(dt) / 8; }

/* element i of a buffer as a complex double (the real part only for real dtypes) */
static void put(frit_dtype dt, void *b, int64_t i, double complex v) {
  switch (dt) {
  case FRIT_BOOL: ((unsigned char *)b)[i] = creal(v) != 0; break;
  case FRIT_U8: ((unsigned char *)b)[i] = (unsigned char)(((int64_t)creal(v) % 256 + 256) % 256); break;
  case FRIT_U16: case FRIT_F16: case FRIT_BF16: ((uint16_t *)b)[i] = (uint16_t)(int64_t)creal(v); break;
  case FRIT_I32: ((int32_t *)b)[i] = (int32_t)creal(v); break;
  case FRIT_I64: ((int64_t *)b)[i] = (int64_t)creal(v); break;
  case FRIT_F32: ((float *)b)[i] = (float)creal(v); break;
  case FRIT_F64: ((double *)b)[i] = creal(v); break;
  case FRIT_C64: ((float *)b)[2 * i] = (float)creal(v), ((float *)b)[2 * i + 1] = (float)cimag(v); break;
  case FRIT_C128: ((double *)b)[2 * i] = creal(v), ((double *)b)[2 * i + 1] = cimag(v); break;
  default: break;
  }
}
static double complex get(frit_dtype dt, const void *b, int64_t i) {
  switch (dt) {
  case FRIT_BOOL: case FRIT_U8: return ((const unsigned char *)b)[i];
  case FRIT_U16: case FRIT_F16: case FRIT_BF16: return ((const uint16_t *)b)[i];
  case FRIT_I32: return ((const int32_t *)b)[i];
  case FRIT_I64: return (double)((const int64_t *)b)[i];
  case FRIT_F32: return ((const float *)b)[i];
  case FRIT_F64: return ((const double *)b)[i];
  case FRIT_C64: return ((const float *)b)[2 * i] + I * ((const float *)b)[2 * i + 1];
  case FRIT_C128: return ((const double *)b)[2 * i] + I * ((const double *)b)[2 * i + 1];
  default: return 0;
  }
}

/* Rank r's element i: small values, so that sums and products over 4 ranks are exact in every dtype
 * (u8 products wrap, as they do in MPI and in put) and signs vary, so that max and min matter. */
static double complex val(frit_dtype dt, int r, int64_t i) {
  switch (dt) {
  case FRIT_BOOL: return (r + i) % 3 != 0;
  case FRIT_U8: return (r + 2 * i) % 7 + 1;
  case FRIT_U16: case FRIT_F16: case FRIT_BF16: return 1000 * r + i; /* only moved: any bits */
  case FRIT_I32: case FRIT_I64: return (r + 1) * (i % 7 - 3) + i;
  case FRIT_C64: case FRIT_C128: return ((r + i) % 3 - 1) + I * ((r * i) % 2 + 1);
  default: return (r + 1) * (i % 5 - 2) + 0.5 * (double)i; /* f32, f64 */
  }
}

/* op over ranks 0..P-1 of val(.., i), in exact arithmetic (u8 wraps in put) */
static double complex reduce_expect(frit_dtype dt, int op, int64_t i) {
  double complex acc = val(dt, 0, i);
  for (int r = 1; r < P; r++) {
    double complex v = val(dt, r, i);
    if (dt == FRIT_BOOL) acc = (op == FRIT_COLL_SUM || op == FRIT_COLL_MAX) ? (creal(acc) || creal(v)) : (creal(acc) && creal(v));
    else if (op == FRIT_COLL_SUM) acc += v;
    else if (op == FRIT_COLL_PROD) acc *= v;
    else if (op == FRIT_COLL_MAX) acc = creal(v) > creal(acc) ? v : acc;
    else acc = creal(v) < creal(acc) ? v : acc;
  }
  if (dt == FRIT_U8) acc = (double)(((int64_t)creal(acc) % 256 + 256) % 256);
  return acc;
}

static int same(double complex a, double complex b) {
  int nan_a = isnan(creal(a)) || isnan(cimag(a)), nan_b = isnan(creal(b)) || isnan(cimag(b));
  return nan_a || nan_b ? nan_a && nan_b : a == b;
}

static frit_coll_call call_of(int kind, int op, frit_dtype dt, int64_t numel) {
  static int64_t dims[1];
  dims[0] = numel;
  frit_coll_call c = {.kind = kind, .op = op, .dtype = dt, .numel = numel, .ndim = 1, .dims = dims, .tag = 42};
  return c;
}

/* Runs c with in = val(dt, R, .) (or `in` when given) and compares out with expect(i). */
static void run_and_compare(const frit_coll_call *c, const void *in_given, double complex (*expect)(const frit_coll_call *, int64_t),
                            int line) {
  size_t bytes = (size_t)c->numel * esize(c->dtype);
  unsigned char *in = malloc(bytes + 1), *out = malloc(bytes + 1);
  if (in_given) memcpy(in, in_given, bytes);
  else
    for (int64_t i = 0; i < c->numel; i++) put(c->dtype, in, i, val(c->dtype, R, i));
  memset(out, 0xA5, bytes);
  char dn[16];
  frit_dtype_name(c->dtype, dn, sizeof dn);
  frit_status st = frit_dist_run(ctx, c, in, out);
  CHECK(st == FRIT_OK, "line %d: %s %s %s: %s", line, frit_coll_kind_name(c->kind), frit_coll_op_name(c->op), dn, frit_error(ctx));
  for (int64_t i = 0; st == FRIT_OK && i < c->numel; i++) {
    double complex want = expect(c, i), got = get(c->dtype, out, i);
    if (!same(want, got)) {
      FAIL("line %d: %s %s %s (root %d dest %d source %d): element %lld is %g%+gi, expected %g%+gi", line,
           frit_coll_kind_name(c->kind), frit_coll_op_name(c->op), dn, c->root, c->dest, c->source, (long long)i,
           creal(got), cimag(got), creal(want), cimag(want));
      break;
    }
  }
  free(in), free(out);
}

static double complex expect_copy(const frit_coll_call *c, int64_t i) { return val(c->dtype, R, i); }
static double complex expect_reduce(const frit_coll_call *c, int64_t i) { return reduce_expect(c->dtype, c->op, i); }
static double complex expect_gather(const frit_coll_call *c, int64_t i) { return val(c->dtype, (int)(i / (c->numel / P)), i); }
static double complex expect_scatter(const frit_coll_call *c, int64_t i) {
  int64_t b = c->numel / P;
  if (i / b != R) return 0;
  double complex v = reduce_expect(c->dtype, c->op, i);
  return c->dtype == FRIT_BOOL ? (creal(v) != 0) : v;
}
static double complex expect_bcast(const frit_coll_call *c, int64_t i) { return val(c->dtype, c->root, i); }
static double complex expect_recv(const frit_coll_call *c, int64_t i) { return c->source < 0 ? 0 : val(c->dtype, c->source, i); }

/* NaN on rank P-1 at element 0 and on rank 0 at element 1: max and min give NaN there (numpy) */
static double complex expect_nan(const frit_coll_call *c, int64_t i) {
  if (i == 0 || i == 1) return NAN;
  return c->kind == FRIT_COLL_REDUCE_SCATTER ? expect_scatter(c, i) : reduce_expect(c->dtype, c->op, i);
}
static void test_nan(void) {
  frit_dtype dts[] = {FRIT_F32, FRIT_F64};
  int kinds[] = {FRIT_COLL_ALL_REDUCE, FRIT_COLL_REDUCE_SCATTER};
  for (int d = 0; d < 2; d++)
    for (int k = 0; k < 2; k++)
      for (int op = FRIT_COLL_MAX; op <= FRIT_COLL_MIN; op++) {
        frit_coll_call c = call_of(kinds[k], op, dts[d], 6 * P);
        double in[64];
        for (int64_t i = 0; i < c.numel; i++) put(c.dtype, in, i, val(c.dtype, R, i));
        if (R == P - 1) put(c.dtype, in, 0, NAN);
        if (R == 0) put(c.dtype, in, 1, NAN);
        /* under reduce_scatter only rank 0 holds elements 0 and 1 of the result */
        run_and_compare(&c, in, kinds[k] == FRIT_COLL_REDUCE_SCATTER && R != 0 ? expect_scatter : expect_nan, __LINE__);
      }
}

static void test_kinds(void) {
  frit_dtype dts[] = {FRIT_F32, FRIT_F64, FRIT_I32, FRIT_I64, FRIT_U8, FRIT_BOOL, FRIT_C64, FRIT_C128};
  int64_t n = 6 * P;
  for (size_t d = 0; d < sizeof dts / sizeof *dts; d++) {
    frit_dtype dt = dts[d];
    int cplx = dt == FRIT_C64 || dt == FRIT_C128;
    for (int op = 0; op < FRIT_COLL_OP_COUNT_; op++) {
      if (cplx && (op == FRIT_COLL_MAX || op == FRIT_COLL_MIN)) continue;
      frit_coll_call c = call_of(FRIT_COLL_ALL_REDUCE, op, dt, n);
      run_and_compare(&c, NULL, P == 1 ? expect_copy : expect_reduce, __LINE__);
      c.kind = FRIT_COLL_REDUCE_SCATTER;
      run_and_compare(&c, NULL, P == 1 ? expect_copy : expect_scatter, __LINE__);
    }
  }
  frit_dtype moved[] = {FRIT_F32, FRIT_F64, FRIT_I32, FRIT_I64, FRIT_U8, FRIT_BOOL, FRIT_C64, FRIT_F16, FRIT_BF16};
  for (size_t d = 0; d < sizeof moved / sizeof *moved; d++) {
    frit_coll_call c = call_of(FRIT_COLL_ALL_GATHER, 0, moved[d], n);
    run_and_compare(&c, NULL, expect_gather, __LINE__);
    c.kind = FRIT_COLL_BROADCAST;
    for (c.root = 0; c.root < P; c.root += P > 1 ? P - 1 : 1) run_and_compare(&c, NULL, expect_bcast, __LINE__);
    c.kind = FRIT_COLL_SENDRECV, c.root = 0;
    c.dest = (R + 1) % P, c.source = (R + P - 1) % P; /* a ring */
    run_and_compare(&c, NULL, expect_recv, __LINE__);
    c.dest = R + 1 < P ? R + 1 : -1, c.source = R > 0 ? R - 1 : -1; /* a line: the ends send or receive nothing */
    run_and_compare(&c, NULL, expect_recv, __LINE__);
  }
  /* larger than the staging the layer keeps between calls (64 MiB for send and receive) */
  int64_t big = 9 << 20;
  float *in = malloc(sizeof *in * (size_t)big), *out = malloc(sizeof *out * (size_t)big);
  for (int64_t i = 0; i < big; i++) in[i] = (float)((R + 1) * (i % 7));
  frit_coll_call cb = call_of(FRIT_COLL_ALL_REDUCE, FRIT_COLL_SUM, FRIT_F32, big);
  CHECK(frit_dist_run(ctx, &cb, in, out) == FRIT_OK, "big all_reduce: %s", frit_error(ctx));
  int64_t wrong = 0;
  for (int64_t i = 0; i < big; i++) wrong += out[i] != (float)(P * (P + 1) / 2 * (i % 7));
  CHECK(wrong == 0, "big all_reduce: %lld elements wrong", (long long)wrong);
  free(in), free(out);
  /* an empty tensor moves nothing */
  frit_coll_call c = call_of(FRIT_COLL_ALL_REDUCE, FRIT_COLL_SUM, FRIT_F32, 0);
  CHECK(frit_dist_run(ctx, &c, NULL, NULL) == FRIT_OK, "empty all_reduce: %s", frit_error(ctx));
}

/* Refusals that every rank makes alike come back at once, and the layer stays usable. */
static void test_refusals(void) {
  float in[64] = {0}, out[64];
  frit_coll_call c = call_of(FRIT_COLL_ALL_REDUCE, FRIT_COLL_SUM, FRIT_F16, 4 * P);
  CHECK(frit_dist_run(ctx, &c, in, out) == FRIT_ERR_INVALID && strstr(frit_error(ctx), "f16"), "%s", frit_error(ctx));
  c = call_of(FRIT_COLL_ALL_REDUCE, FRIT_COLL_MAX, FRIT_C64, 4 * P);
  CHECK(frit_dist_run(ctx, &c, in, out) == FRIT_ERR_INVALID && strstr(frit_error(ctx), "complex"), "%s", frit_error(ctx));
  if (P > 1) {
    c = call_of(FRIT_COLL_ALL_GATHER, 0, FRIT_F32, 4 * P + 1);
    CHECK(frit_dist_run(ctx, &c, in, out) == FRIT_ERR_INVALID && strstr(frit_error(ctx), "blocks"), "%s", frit_error(ctx));
  }
  c = call_of(FRIT_COLL_BROADCAST, 0, FRIT_F32, 4);
  c.root = P;
  CHECK(frit_dist_run(ctx, &c, in, out) == FRIT_ERR_INVALID && strstr(frit_error(ctx), "root"), "%s", frit_error(ctx));
}

/* Ranks that disagree all get the error, naming each rank's collective; none hangs. */
static void test_mismatch(void) {
  if (P == 1) return;
  float in[64] = {0}, out[64];
  int64_t dims[2] = {4, R % 2 ? 2 : 3};
  frit_coll_call c = call_of(FRIT_COLL_ALL_REDUCE, FRIT_COLL_SUM, FRIT_F32, dims[0] * dims[1]);
  c.ndim = 2, c.dims = dims;
  frit_status st = frit_dist_run(ctx, &c, in, out);
  const char *e = frit_error(ctx);
  CHECK(st == FRIT_ERR_RUNTIME && strstr(e, "ranks disagree") && strstr(e, "rank 0 all_reduce sum f32[4,3]") &&
            strstr(e, "rank 1 all_reduce sum f32[4,2]"),
        "status %d: %s", (int)st, e);
  /* the same shapes from different call sites: the tags are shown */
  c = call_of(FRIT_COLL_ALL_GATHER, 0, FRIT_F32, 4 * P);
  c.tag = 7 + (uint64_t)(R == P - 1);
  st = frit_dist_run(ctx, &c, in, out);
  CHECK(st == FRIT_ERR_RUNTIME && strstr(frit_error(ctx), "tag 0x8") && strstr(frit_error(ctx), "tag 0x7"), "status %d: %s",
        (int)st, frit_error(ctx));
  /* one rank refuses its call (a bad dest): it says why, the others name it */
  c = call_of(FRIT_COLL_SENDRECV, 0, FRIT_F32, 4);
  c.dest = R == 1 ? P + 3 : -1, c.source = -1;
  st = frit_dist_run(ctx, &c, in, out);
  if (R == 1) CHECK(st == FRIT_ERR_INVALID && strstr(frit_error(ctx), "dest"), "status %d: %s", (int)st, frit_error(ctx));
  else CHECK(st == FRIT_ERR_RUNTIME && strstr(frit_error(ctx), "rank 1 sendrecv f32[4] (rejected there"), "status %d: %s", (int)st,
             frit_error(ctx));
  /* a barrier against a collective */
  if (R == 0) st = frit_dist_barrier(ctx);
  else c = call_of(FRIT_COLL_BROADCAST, 0, FRIT_F32, 4), st = frit_dist_run(ctx, &c, in, out);
  CHECK(st == FRIT_ERR_RUNTIME && strstr(frit_error(ctx), "rank 0 barrier, rank 1 broadcast from 0 f32[4]"), "status %d: %s",
        (int)st, frit_error(ctx));
  /* still usable */
  c = call_of(FRIT_COLL_ALL_REDUCE, FRIT_COLL_SUM, FRIT_I32, 6 * P);
  run_and_compare(&c, NULL, expect_reduce, __LINE__);
  CHECK(frit_dist_barrier(ctx) == FRIT_OK, "%s", frit_error(ctx));
}

/* Threads of a rank issue collectives at once: the layer serialises them; identical calls pair up
 * across ranks in whatever order, so each result is still the closed form. (Different calls from
 * racing threads would pair up differently on each rank: the check reports that, as it should.) */
static void *thread_body(void *arg) {
  long bad = 0;
  for (int k = 0; k < 25; k++) {
    int32_t in[64], out[64];
    frit_coll_call c = call_of(FRIT_COLL_ALL_REDUCE, FRIT_COLL_SUM, FRIT_I32, 6 * P);
    for (int64_t i = 0; i < c.numel; i++) in[i] = (int32_t)creal(val(FRIT_I32, R, i));
    if (frit_dist_run(arg, &c, in, out) != FRIT_OK) bad++;
    for (int64_t i = 0; i < c.numel; i++) bad += out[i] != (int32_t)creal(reduce_expect(FRIT_I32, FRIT_COLL_SUM, i));
    bad += frit_dist_size() != P || frit_dist_rank() != R;
  }
  return (void *)bad;
}
static void test_threads(void) {
  pthread_t th[4];
  frit_ctx *ctxs[4];
  for (int t = 0; t < 4; t++) {
    ctxs[t] = frit_ctx_new();
    CHECK(pthread_create(&th[t], NULL, thread_body, ctxs[t]) == 0, "pthread_create");
  }
  for (int t = 0; t < 4; t++) {
    void *bad = NULL;
    pthread_join(th[t], &bad);
    CHECK(bad == NULL, "thread %d: %ld failures, last error: %s", t, (long)bad, frit_error(ctxs[t]));
    frit_ctx_free(ctxs[t]);
  }
}

/* The exchange thread: jobs started back to back run in order and are waited for in any order; a
 * job's error (the ranks disagree) reaches whoever waits for it, and the jobs after it still run. */
static void test_exchange_thread(void) {
  enum { NJ = 6, N = 40000 }; /* 160 KB of i32: the blocking form after the check */
  int32_t *in = malloc(NJ * N * sizeof *in), *out = malloc(NJ * N * sizeof *out);
  frit_dist_job *jobs[NJ];
  for (int j = 0; j < NJ; j++) {
    frit_coll_call c = call_of(j % 2 ? FRIT_COLL_ALL_REDUCE : FRIT_COLL_BROADCAST, FRIT_COLL_SUM, FRIT_I32, j == 3 ? 7 : N);
    c.root = j % P, c.tag = (uint64_t)j;
    for (int64_t i = 0; i < N; i++) in[j * N + i] = (int32_t)creal(val(FRIT_I32, R, i)) + j;
    jobs[j] = frit_dist_start(ctx, &c, in + j * N, out + j * N);
    CHECK(jobs[j] != NULL, "start %d: %s", j, frit_error(ctx));
  }
  for (int j = NJ - 1; j >= 0; j--) { /* last first: each wait leaves the others queued or done */
    frit_status st = frit_dist_wait(ctx, jobs[j]);
    CHECK(st == FRIT_OK, "job %d: %s", j, frit_error(ctx));
    int64_t n = j == 3 ? 7 : N, bad = 0;
    for (int64_t i = 0; st == FRIT_OK && i < n; i++) {
      int32_t want = j % 2 ? (int32_t)creal(reduce_expect(FRIT_I32, FRIT_COLL_SUM, i)) + P * j
                           : (int32_t)creal(val(FRIT_I32, j % P, i)) + j;
      bad += out[j * N + i] != want;
    }
    CHECK(!bad, "job %d: %lld wrong elements", j, (long long)bad);
  }
  if (P > 1) { /* rank 1 starts a different shape: both ranks hear it from their wait */
    frit_coll_call c = call_of(FRIT_COLL_ALL_REDUCE, FRIT_COLL_SUM, FRIT_I32, R == 1 ? 5 : 6);
    frit_dist_job *bad_job = frit_dist_start(ctx, &c, in, out);
    c = call_of(FRIT_COLL_ALL_REDUCE, FRIT_COLL_SUM, FRIT_I32, 6 * P);
    frit_dist_job *after = frit_dist_start(ctx, &c, in, out + N);
    frit_status st = frit_dist_wait(ctx, bad_job);
    CHECK(st == FRIT_ERR_RUNTIME && strstr(frit_error(ctx), "ranks disagree") && strstr(frit_error(ctx), "i32[5]"),
          "status %d: %s", (int)st, frit_error(ctx));
    CHECK(frit_dist_wait(ctx, after) == FRIT_OK, "after a failed job: %s", frit_error(ctx));
  }
  free(in), free(out);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int timeout_mode(void) {
  setenv("FRIT_DIST_TIMEOUT", "1", 1);
  CHECK(frit_dist_init(ctx, 0) == FRIT_OK, "%s", frit_error(ctx));
  R = frit_dist_rank(), P = frit_dist_size();
  CHECK(P == 2, "timeout mode wants 2 ranks, has %d", P);
  if (R == 1) {
    sleep(4);
    CHECK(frit_dist_finalize(ctx) == FRIT_OK, "%s", frit_error(ctx));
  } else if (R == 0) {
    static float in[1000], out[1000];
    frit_coll_call c = call_of(FRIT_COLL_ALL_REDUCE, FRIT_COLL_SUM, FRIT_F32, 1000);
    double t0 = now_s();
    frit_status st = frit_dist_run(ctx, &c, in, out);
    double dt = now_s() - t0;
    CHECK(st == FRIT_ERR_RUNTIME && strstr(frit_error(ctx), "dist: all_reduce f32[1000] timed out after 1 s on rank 0 of 2"),
          "status %d: %s", (int)st, frit_error(ctx));
    CHECK(dt > 0.9 && dt < 2.0, "timed out after %.2f s", dt);
    printf("rank 0: after %.2f s: %s\n", dt, frit_error(ctx));
    t0 = now_s();
    st = frit_dist_run(ctx, &c, in, out);
    CHECK(st == FRIT_ERR_RUNTIME && strstr(frit_error(ctx), "unusable") && now_s() - t0 < 0.1, "status %d: %s", (int)st,
          frit_error(ctx));
    CHECK(frit_dist_barrier(ctx) == FRIT_ERR_RUNTIME, "barrier after a timeout");
    CHECK(frit_dist_finalize(ctx) == FRIT_ERR_RUNTIME && strstr(frit_error(ctx), "unfinalised"), "%s", frit_error(ctx));
    /* frit rightly refuses (a lost rank would never reach MPI_Finalize), but rank 1 is alive and
     * finalises after its sleep, so MPI_Finalize returns: mpirun then sees a clean exit */
    void *lib = dlopen("libmpi.so.40", RTLD_NOW);
    int (*fin)(void) = NULL;
    if (lib) *(void **)&fin = dlsym(lib, "MPI_Finalize");
    CHECK(fin && fin() == 0, "MPI_Finalize by hand");
  }
  printf("rank %d of %d (timeout mode): %d checks, %d failed\n", R, P, checks, fails);
  frit_ctx_free(ctx);
  return fails ? 1 : 0;
}

int main(int argc, char **argv) {
  ctx = frit_ctx_new();
  CHECK(frit_dist_rank() == 0 && frit_dist_size() == 1 && !frit_dist_initialized(), "before init");
  CHECK(strcmp(frit_coll_kind_name(FRIT_COLL_REDUCE_SCATTER), "reduce_scatter") == 0 && strcmp(frit_coll_op_name(FRIT_COLL_PROD), "prod") == 0,
        "names");
  float x[4] = {0}, y[4];
  frit_coll_call c0 = call_of(FRIT_COLL_ALL_REDUCE, FRIT_COLL_SUM, FRIT_F32, 4);
  CHECK(frit_dist_run(ctx, &c0, x, y) == FRIT_ERR_RUNTIME && strstr(frit_error(ctx), "not initialised"), "%s", frit_error(ctx));
  if (argc > 1 && strcmp(argv[1], "timeout") == 0) return timeout_mode();

  /* "singleton": MPI loaded and initialised without a launcher (mode 1), a world of one */
  int singleton = argc > 1 && strcmp(argv[1], "singleton") == 0;
  CHECK(frit_dist_init(ctx, singleton) == FRIT_OK, "%s", frit_error(ctx));
  CHECK(frit_dist_init(ctx, 0) == FRIT_OK, "second init: %s", frit_error(ctx));
  R = frit_dist_rank(), P = frit_dist_size();
  int launched = getenv("OMPI_COMM_WORLD_SIZE") != NULL || singleton;
  CHECK(frit_dist_initialized() && frit_dist_uses_mpi() == launched, "uses_mpi %d", frit_dist_uses_mpi());
  if (!launched) {
    CHECK(P == 1 && R == 0, "one-process world: rank %d size %d", R, P);
    CHECK(frit_dist_init(ctx, 1) == FRIT_ERR_RUNTIME && strstr(frit_error(ctx), "without MPI"), "%s", frit_error(ctx));
    /* receiving from itself with nothing sent */
    frit_coll_call c = call_of(FRIT_COLL_SENDRECV, 0, FRIT_F32, 2);
    c.dest = -1, c.source = 0;
    CHECK(frit_dist_run(ctx, &c, x, y) == FRIT_ERR_INVALID, "%s", frit_error(ctx));
  }
  CHECK(frit_dist_init(ctx, 1) == (launched ? FRIT_OK : FRIT_ERR_RUNTIME), "init mode 1: %s", frit_error(ctx));
  test_kinds();
  test_nan();
  test_refusals();
  test_mismatch();
  test_threads();
  test_exchange_thread();
  CHECK(frit_dist_barrier(ctx) == FRIT_OK, "%s", frit_error(ctx));
  CHECK(frit_dist_finalize(ctx) == FRIT_OK, "%s", frit_error(ctx));
  CHECK(!frit_dist_initialized() && frit_dist_size() == 1, "after finalize");
  CHECK(frit_dist_init(ctx, 0) == FRIT_ERR_RUNTIME && strstr(frit_error(ctx), "finalize"), "%s", frit_error(ctx));
  CHECK(frit_dist_run(ctx, &c0, x, y) == FRIT_ERR_RUNTIME, "run after finalize");
  printf("rank %d of %d: %d checks, %d failed\n", R, P, checks, fails);
  frit_ctx_free(ctx);
  return fails ? 1 : 0;
}
