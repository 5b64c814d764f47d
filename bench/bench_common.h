/* Shared helpers of the tensor-compiler benchmarks: timing, a pthread team for the in-process
 * bandwidth references (copy, scale, read-sum), cold compiles and the JSON line format. */
#ifndef FRIT_BENCH_COMMON_H
#define FRIT_BENCH_COMMON_H

#include "frit.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static inline double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The thread count frit uses by default ($FRIT_THREADS or the online CPUs): the references
 * run on as many threads so that both sides have the same machine. */
static inline int bench_threads(void) {
  const char *e = getenv("FRIT_THREADS");
  if (e && atoi(e) > 0) return atoi(e);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

/* Repetitions; FRIT_BENCH_REPS overrides (a quick run uses fewer). */
static inline int bench_reps(int dflt) {
  const char *e = getenv("FRIT_BENCH_REPS");
  return e && atoi(e) > 0 ? atoi(e) : dflt;
}

static inline int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct bench_stats { double median, best; int n; } bench_stats;

static inline bench_stats bench_summarise(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, bench_cmp_double);
  bench_stats s = {n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]), t[0], n};
  return s;
}

/* Times fn(arg) `reps` times after `warmup` untimed calls. A slow fn gets fewer runs (at least
 * 3, about 10 s of timed runs) so that a slow kernel does not hold the whole suite up. */
static inline bench_stats bench_time(void (*fn)(void *), void *arg, int warmup, int reps) {
  double t[256];
  if (reps > 256) reps = 256;
  for (int i = 0; i < warmup; i++) {
    double t0 = bench_now();
    fn(arg);
    double dt = bench_now() - t0;
    double fit = dt > 3.3 ? 3 : 10.0 / dt;
    if (fit < reps) reps = (int)fit;
    if (dt > 1.0) break;
  }
  for (int i = 0; i < reps; i++) {
    double t0 = bench_now();
    fn(arg);
    t[i] = bench_now() - t0;
  }
  return bench_summarise(t, reps);
}

/* ---------- a team of threads for the references ---------- */

typedef struct bench_team bench_team;
typedef void (*bench_team_fn)(void *arg, int tid, int nthreads);
typedef struct bench_worker { bench_team *team; int tid; } bench_worker;
struct bench_team {
  int n;
  pthread_t *th;
  bench_worker *w;
  pthread_barrier_t start, done;
  bench_team_fn fn;
  void *arg;
  int quit;
};

static inline void *bench_team_main(void *p) {
  bench_worker *w = p;
  bench_team *t = w->team;
  for (;;) {
    pthread_barrier_wait(&t->start);
    if (t->quit) return NULL;
    t->fn(t->arg, w->tid, t->n);
    pthread_barrier_wait(&t->done);
  }
}

static inline bench_team *bench_team_new(int n) {
  bench_team *t = calloc(1, sizeof *t);
  t->n = n;
  t->th = calloc((size_t)n, sizeof *t->th);
  t->w = calloc((size_t)n, sizeof *t->w);
  pthread_barrier_init(&t->start, NULL, (unsigned)n);
  pthread_barrier_init(&t->done, NULL, (unsigned)n);
  for (int i = 1; i < n; i++) {
    t->w[i].team = t;
    t->w[i].tid = i;
    pthread_create(&t->th[i], NULL, bench_team_main, &t->w[i]);
  }
  return t;
}

/* Runs fn(arg, tid, n) on every thread (the caller is thread 0) and waits for all. */
static inline void bench_team_run(bench_team *t, bench_team_fn fn, void *arg) {
  t->fn = fn;
  t->arg = arg;
  pthread_barrier_wait(&t->start);
  fn(arg, 0, t->n);
  pthread_barrier_wait(&t->done);
}

static inline void bench_team_free(bench_team *t) {
  t->quit = 1;
  pthread_barrier_wait(&t->start);
  for (int i = 1; i < t->n; i++) pthread_join(t->th[i], NULL);
  pthread_barrier_destroy(&t->start);
  pthread_barrier_destroy(&t->done);
  free(t->th);
  free(t->w);
  free(t);
}

static inline void bench_chunk(size_t n, int tid, int nth, size_t *b, size_t *e) {
  /* chunk edges on 16-float (64-byte) boundaries so that no cache line is shared */
  size_t lines = (n + 15) / 16, per = (lines + (size_t)nth - 1) / (size_t)nth;
  *b = (size_t)tid * per * 16;
  *e = *b + per * 16;
  if (*b > n) *b = n;
  if (*e > n) *e = n;
}

/* ---------- bandwidth references over n floats ---------- */

typedef float bench_v8f __attribute__((vector_size(32)));

typedef struct bench_bw {
  bench_team *team;
  float *a, *b;
  size_t n;
  double sums[256];
} bench_bw;

static inline void bench_bw_copy_part(void *p, int tid, int nth) {
  bench_bw *bw = p;
  size_t b, e;
  bench_chunk(bw->n, tid, nth, &b, &e);
  if (e > b) memcpy(bw->b + b, bw->a + b, (e - b) * sizeof(float));
}

/* STREAM "scale": b = s*a, plain stores (what a compiled elementwise kernel does). */
static inline void bench_bw_scale_part(void *p, int tid, int nth) {
  bench_bw *bw = p;
  size_t b, e;
  bench_chunk(bw->n, tid, nth, &b, &e);
  const bench_v8f s = {3, 3, 3, 3, 3, 3, 3, 3};
  size_t i = b;
  for (; i + 8 <= e; i += 8) {
    bench_v8f v;
    memcpy(&v, bw->a + i, sizeof v);
    v *= s;
    memcpy(bw->b + i, &v, sizeof v);
  }
  for (; i < e; i++) bw->b[i] = 3.0f * bw->a[i];
}

static inline void bench_bw_sum_part(void *p, int tid, int nth) {
  bench_bw *bw = p;
  size_t b, e;
  bench_chunk(bw->n, tid, nth, &b, &e);
  bench_v8f s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};
  size_t i = b;
  for (; i + 32 <= e; i += 32) {
    bench_v8f v0, v1, v2, v3;
    memcpy(&v0, bw->a + i, sizeof v0);
    memcpy(&v1, bw->a + i + 8, sizeof v1);
    memcpy(&v2, bw->a + i + 16, sizeof v2);
    memcpy(&v3, bw->a + i + 24, sizeof v3);
    s0 += v0;
    s1 += v1;
    s2 += v2;
    s3 += v3;
  }
  s0 += s1 + s2 + s3;
  double s = 0;
  for (int k = 0; k < 8; k++) s += s0[k];
  for (; i < e; i++) s += bw->a[i];
  bw->sums[tid] = s;
}

static inline void bench_bw_copy(void *p) { bench_bw *bw = p; bench_team_run(bw->team, bench_bw_copy_part, bw); }
/* the same on the calling thread alone: under contention a team can lose more to its barriers
   than one thread does, and the limit is the better of the two */
static inline void bench_bw_copy1(void *p) { bench_bw_copy_part(p, 0, 1); }
static inline void bench_bw_scale1(void *p) { bench_bw_scale_part(p, 0, 1); }
static inline void bench_bw_sum1(void *p) { bench_bw_sum_part(p, 0, 1); }
static inline void bench_bw_scale(void *p) { bench_bw *bw = p; bench_team_run(bw->team, bench_bw_scale_part, bw); }
static inline void bench_bw_sum(void *p) { bench_bw *bw = p; bench_team_run(bw->team, bench_bw_sum_part, bw); }

static inline void bench_fill_part(void *p, int tid, int nth) {
  bench_bw *bw = p;
  size_t b, e;
  bench_chunk(bw->n, tid, nth, &b, &e);
  for (size_t i = b; i < e; i++) {
    bw->a[i] = (float)((i * 2654435761u) % 1000003u) / 1000003.0f;
    if (bw->b) bw->b[i] = 0;
  }
}

/* Buffers touched first by the team's threads (their pages then live near them). */
static inline float *bench_alloc_floats(size_t n) {
  void *p = NULL;
  if (posix_memalign(&p, 64, n * sizeof(float) + 64)) return NULL;
  return p;
}

/* Bandwidth of the machine over two n-float buffers on nth threads, in GB/s (bytes read +
 * written per second, as STREAM counts them): copy (memcpy per chunk), scale (b = 3a with plain
 * stores) and read-sum (read only), each the better of nth threads and one thread. When fn is given, fn(arg) (the frit program) is timed too,
 * interleaved with the references round by round, so that both see the same machine state
 * (other tenants, clock); `extra` gets its times. Medians (and bests) of `reps` rounds after
 * two warm-up rounds. bench_measure_bw_on runs the references over the caller's buffers (a read,
 * b written; b may be NULL), the ones fn reads and writes: this VM's last-level cache holds a few
 * hundred MB, and references that kept their own buffers warm while fn's were evicted between
 * rounds measured the cache against fn's DRAM traffic. */
typedef struct bench_bw_result {
  double copy, scale, readsum;                /* medians, GB/s */
  double copy_best, scale_best, readsum_best; /* fastest rounds, GB/s */
  bench_stats extra;                          /* fn's times, s */
} bench_bw_result;

static inline bench_bw_result bench_measure_bw_on(size_t n, int nth, int reps, void (*fn)(void *), void *arg,
                                                  float *a, float *b) {
  bench_bw_result r;
  memset(&r, 0, sizeof r);
  r.copy = r.scale = r.readsum = -1; /* each the better of nth threads and one thread */
  bench_bw bw;
  memset(&bw, 0, sizeof bw);
  if (nth > 256) nth = 256;
  if (reps > 256) reps = 256;
  bw.n = n;
  bw.a = a ? a : bench_alloc_floats(n);
  bw.b = b ? b : bench_alloc_floats(n);
  if (!bw.a || !bw.b) {
    if (!a) free(bw.a);
    if (!b) free(bw.b);
    return r;
  }
  bw.team = bench_team_new(nth);
  if (!a) bench_team_run(bw.team, bench_fill_part, &bw);
  void (*const refs[6])(void *) = {bench_bw_copy, bench_bw_scale, bench_bw_sum,
                                   bench_bw_copy1, bench_bw_scale1, bench_bw_sum1};
  int nref = nth > 1 ? 6 : 3;
  static double t[7][256];
  for (int round = -2; round < reps; round++) {
    for (int k = 0; k <= nref; k++) {
      if (k == nref && !fn) break;
      double t0 = bench_now();
      if (k < nref) refs[k](&bw); else fn(arg);
      if (round >= 0) t[k][round] = bench_now() - t0;
    }
  }
  double bytes2 = 2.0 * (double)n * sizeof(float), bytes1 = (double)n * sizeof(float);
  for (int k = 0; k < nref; k++) {
    double bytes = k % 3 == 2 ? bytes1 : bytes2;
    bench_stats st = bench_summarise(t[k], reps);
    double *med = k % 3 == 0 ? &r.copy : k % 3 == 1 ? &r.scale : &r.readsum;
    double *best = k % 3 == 0 ? &r.copy_best : k % 3 == 1 ? &r.scale_best : &r.readsum_best;
    if (bytes / st.median / 1e9 > *med) *med = bytes / st.median / 1e9;
    if (bytes / st.best / 1e9 > *best) *best = bytes / st.best / 1e9;
  }
  if (fn) r.extra = bench_summarise(t[nref], reps);
  bench_team_free(bw.team);
  if (!a) free(bw.a);
  if (!b) free(bw.b);
  return r;
}

static inline bench_bw_result bench_measure_bw(size_t n, int nth, int reps, void (*fn)(void *), void *arg) {
  return bench_measure_bw_on(n, nth, reps, fn, arg, NULL, NULL);
}

/* ---------- frit programs ---------- */

/* A fresh cache directory, so that the reported compile time is a cold compile. */
static inline char *bench_cold_cache(void) {
  static char dir[64];
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/frit-bench-XXXXXX", tmp && strlen(tmp) < 40 ? tmp : "/tmp");
  if (!mkdtemp(dir)) return NULL;
  return dir;
}

static inline void bench_rm_cache(const char *dir) {
  if (!dir) return;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "bench: could not remove %s\n", dir);
}

/* Compiles with a cold cache; *ms gets the wall time of frit_compile. NULL (message printed)
 * when the pipeline cannot compile it yet. */
static inline frit_program *bench_compile(frit_ctx *ctx, frit_tensor *const *outs, int n, double *ms,
                                   const char *what) {
  char *dir = bench_cold_cache();
  frit_compile_opts o;
  memset(&o, 0, sizeof o);
  o.cache_dir = dir;
  double t0 = bench_now();
  frit_program *p = frit_compile(ctx, outs, n, &o);
  *ms = 1e3 * (bench_now() - t0);
  bench_rm_cache(dir);
  if (!p) fprintf(stderr, "bench %s: compile failed: %s\n", what, frit_error(ctx));
  if (p && getenv("FRIT_BENCH_DUMP")) { /* FRIT_BENCH_DUMP=dir: keep the generated C */
    char path[512];
    snprintf(path, sizeof path, "%s/%s.c", getenv("FRIT_BENCH_DUMP"), what);
    FILE *f = fopen(path, "w");
    if (f) {
      fputs(frit_program_source(p), f);
      fclose(f);
    }
  }
  return p;
}

/* Facts about the generated C for the record, as JSON fields: how many loops carry an
 * `omp simd` pragma and which scalar libm functions the kernels call (a libm call in a loop
 * usually keeps the C compiler from vectorising it). Text in `buf`, valid until the next call. */
static inline const char *bench_source_facts(frit_program *p) {
  static char buf[256];
  static const char *const fns[] = {"expf(", "exp2f(", "logf(", "log2f(", "powf(", "sqrtf(", "sinf(",
                                    "cosf(", "tanhf(", "erff(", "exp(", "log(", "pow(", "fmaf("};
  const char *src = frit_program_source(p), *k = src ? strstr(src, "void frit_k") : NULL;
  int simd = 0;
  char calls[160] = "";
  if (k) {
    for (const char *q = k; (q = strstr(q, "omp simd")) != NULL; q++) simd++;
    for (size_t i = 0; i < sizeof fns / sizeof *fns; i++) {
      const char *q = k;
      while ((q = strstr(q, fns[i])) != NULL && q > k && (q[-1] == '_' || (q[-1] >= 'a' && q[-1] <= 'z'))) q++;
      if (q && strlen(calls) + strlen(fns[i]) + 2 < sizeof calls) {
        size_t at = strlen(calls), len = strlen(fns[i]) - 1; /* without the '(' */
        if (at) calls[at++] = ',';
        memcpy(calls + at, fns[i], len);
        calls[at + len] = '\0';
      }
    }
  }
  snprintf(buf, sizeof buf, ", \"simd_loops\": %d, \"libm_calls\": \"%s\"", simd, calls);
  return buf;
}

typedef struct bench_run {
  frit_program *p;
  void *const *in;
  void *const *out;
  frit_status st;
} bench_run;

static inline void bench_run_fn(void *arg) {
  bench_run *r = arg;
  frit_status st = frit_program_run(r->p, r->in, r->out, NULL, 0);
  if (st != FRIT_OK) r->st = st;
}

/* Prints one JSON line; `extra` is more ", \"k\": v" text (or ""). A value < 0 prints null. */
static inline void bench_emit(const char *bench, double value, const char *unit, const char *peer,
                       double peer_value, const char *fmt, ...) {
  char extra[1024] = "";
  if (fmt) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(extra, sizeof extra, fmt, ap);
    va_end(ap);
  }
  char v[64], pv[64];
  if (value >= 0 && isfinite(value)) snprintf(v, sizeof v, "%.6g", value); else strcpy(v, "null");
  if (peer_value >= 0 && isfinite(peer_value)) snprintf(pv, sizeof pv, "%.6g", peer_value); else strcpy(pv, "null");
  printf("{\"bench\": \"%s\", \"value\": %s, \"unit\": \"%s\", \"peer\": \"%s\", \"peer_value\": %s%s}\n",
         bench, v, unit, peer, pv, extra);
  fflush(stdout);
}


#endif
