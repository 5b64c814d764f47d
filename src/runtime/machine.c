/* The machine limits the profiler divides by: copy bandwidth and FMA throughput, measured by two
 * short microbenchmarks on the kernel thread pool once per process, and cached on disk
 * beside the kernel cache (the best figures seen), keyed by a fingerprint of the CPU key and
 * thread count. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>

#include "runtime/profile.h"
#include "runtime/runtime.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

enum { COPY_CHUNKS = 256, FMA_CHAINS = 12, FMA_ITERS = 1 << 19 };

/* params: dst, src, chunk bytes */
static void copy_chunk(void *const *bufs, const int64_t *vars, int64_t begin, int64_t end) {
  (void)vars;
  size_t cs = *(const size_t *)bufs[2];
  for (int64_t i = begin; i < end; i++)
    memcpy((char *)bufs[0] + (size_t)i * cs, (const char *)bufs[1] + (size_t)i * cs, cs);
}

#if defined(__x86_64__)
/* Twelve independent chains in named registers (an array would live in memory at -O2 and time
 * the store-to-load forwarding instead): enough to cover the FMA latency on two ports. Each starts
 * from its own value: chains equal from the start compute the same thing, and gcc merged them into
 * one, a latency-bound chain that the FLOP count charged twelve times (1.5x the true peak). */
__attribute__((target("avx2,fma"))) static void fma_chunk_avx2(void *const *bufs, const int64_t *vars,
                                                                int64_t begin, int64_t end) {
  (void)vars;
  for (int64_t c = begin; c < end; c++) {
    __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
    float f = (float)c;
    __m256 x0 = _mm256_set1_ps(f), x1 = _mm256_set1_ps(f + 1), x2 = _mm256_set1_ps(f + 2),
           x3 = _mm256_set1_ps(f + 3), x4 = _mm256_set1_ps(f + 4), x5 = _mm256_set1_ps(f + 5),
           x6 = _mm256_set1_ps(f + 6), x7 = _mm256_set1_ps(f + 7), x8 = _mm256_set1_ps(f + 8),
           x9 = _mm256_set1_ps(f + 9), x10 = _mm256_set1_ps(f + 10), x11 = _mm256_set1_ps(f + 11);
    for (int it = 0; it < FMA_ITERS; it++) {
      x0 = _mm256_fmadd_ps(x0, a, b), x1 = _mm256_fmadd_ps(x1, a, b), x2 = _mm256_fmadd_ps(x2, a, b);
      x3 = _mm256_fmadd_ps(x3, a, b), x4 = _mm256_fmadd_ps(x4, a, b), x5 = _mm256_fmadd_ps(x5, a, b);
      x6 = _mm256_fmadd_ps(x6, a, b), x7 = _mm256_fmadd_ps(x7, a, b), x8 = _mm256_fmadd_ps(x8, a, b);
      x9 = _mm256_fmadd_ps(x9, a, b), x10 = _mm256_fmadd_ps(x10, a, b), x11 = _mm256_fmadd_ps(x11, a, b);
    }
    __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(x0, x1), _mm256_add_ps(x2, x3)),
                             _mm256_add_ps(_mm256_add_ps(x4, x5), _mm256_add_ps(x6, x7)));
    s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(x8, x9), _mm256_add_ps(x10, x11)));
    float out[8];
    _mm256_storeu_ps(out, s);
    ((float *)bufs[0])[c] = out[0]; /* stored: the chains cannot be optimised away */
  }
}
#endif

/* The portable form: scalar chains (the compiler may vectorise them at the library's flags). */
static void fma_chunk_plain(void *const *bufs, const int64_t *vars, int64_t begin, int64_t end) {
  (void)vars;
  for (int64_t c = begin; c < end; c++) {
    float acc[FMA_CHAINS * 8];
    for (int j = 0; j < FMA_CHAINS * 8; j++) acc[j] = (float)(j + c);
    for (int it = 0; it < FMA_ITERS; it++)
      for (int j = 0; j < FMA_CHAINS * 8; j++) acc[j] = acc[j] * 0.999999f + 1e-7f;
    float s = 0;
    for (int j = 0; j < FMA_CHAINS * 8; j++) s += acc[j];
    ((float *)bufs[0])[c] = s;
  }
}

static frit_kernel_fn fma_chunk(void) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return fma_chunk_avx2;
#endif
  return fma_chunk_plain;
}

void frit_rt_fma_probe(float *sink, int64_t chunks) { fma_chunk()(&(void *){sink}, NULL, 0, chunks); }

static double best_of(frit_pool *pool, frit_kernel_fn fn, void *const *bufs, int64_t extent, int reps) {
  double best = 0;
  for (int r = 0; r < reps; r++) {
    int64_t t0 = frit_rt_now_ns();
    if (pool) frit_pool_launch(pool, fn, bufs, NULL, extent);
    else fn(bufs, NULL, 0, extent);
    double s = (frit_rt_now_ns() - t0) / 1e9;
    if (r == 0 || s < best) best = s;
  }
  return best > 0 ? best : 1e-9;
}

static void measure(int threads, double *gbps, double *gflops) {
  frit_pool *pool = threads > 1 ? frit_pool_acquire(threads) : NULL;
  size_t cs = (size_t)1 << 18, bytes = cs * COPY_CHUNKS; /* 64 MiB each way: past the caches */
  char *src = malloc(bytes), *dst = malloc(bytes);
  *gbps = 0;
  if (src && dst) {
    memset(src, 1, bytes), memset(dst, 0, bytes); /* touch the pages before timing */
    void *bufs[3] = {dst, src, &cs};
    *gbps = 2.0 * (double)bytes / best_of(pool, copy_chunk, bufs, COPY_CHUNKS, 3) / 1e9;
  }
  free(src), free(dst);
  int64_t chunks = 2 * (int64_t)threads;
  float *sink = calloc((size_t)chunks, sizeof *sink);
  *gflops = 0;
  if (sink) {
    void *bufs[1] = {sink};
    double flops = 2.0 * 8 * FMA_CHAINS * (double)FMA_ITERS * (double)chunks;
    *gflops = flops / best_of(pool, fma_chunk(), bufs, chunks, 2) / 1e9;
  }
  free(sink);
  frit_pool_release(pool);
}

/* The CPU key (model name and a hash of the ISA flags, codegen/compile.c) and the thread count:
 * VMs mask the model name ("AMD EPYC" for several generations), so the name alone let one
 * machine's figures and tunings pass for another's. */
void frit_rt_machine_fingerprint(char *out, size_t cap, int threads) {
  snprintf(out, cap, "%s, %d threads", frit_cg_cpu_key(), threads);
}

static pthread_mutex_t lim_mu = PTHREAD_MUTEX_INITIALIZER;
static double lim_bw, lim_fl;
static int lim_threads;

frit_status frit_machine_limits(frit_ctx *ctx, double *copy_gbps, double *fma_gflops) {
  if (!ctx) return FRIT_ERR_INVALID;
  if (!copy_gbps || !fma_gflops) return frit_set_error(ctx, FRIT_ERR_INVALID, "machine_limits: NULL output");
  int threads = frit_rt_default_threads(NULL);
  pthread_mutex_lock(&lim_mu);
  if (lim_threads != threads) {
    char fp[400], path[4096] = "";
    frit_rt_machine_fingerprint(fp, sizeof fp, threads);
    uint64_t h = 1469598103934665603ull;
    for (const char *c = fp; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
    frit_cg_config cfg;
    if (frit_codegen_config(ctx, NULL, &cfg) == FRIT_OK && cfg.cache_dir)
      snprintf(path, sizeof path, "%s/machine-%016" PRIx64 ".txt", cfg.cache_dir, h);
    /* measured once per process and thread count; the file keeps the best figures ever seen,
     * so a measurement taken while the machine was busy (or its vCPUs shared one core) is
     * replaced by the next process's better one rather than kept */
    double bw = 0, fl = 0, old_bw = 0, old_fl = 0;
    FILE *f = *path ? fopen(path, "r") : NULL;
    if (f) {
      if (fscanf(f, "%lf %lf", &old_bw, &old_fl) != 2 || !(old_bw > 0 && old_fl > 0)) old_bw = old_fl = 0;
      fclose(f);
    }
    measure(threads, &bw, &fl);
    bool better = bw > old_bw || fl > old_fl;
    bw = bw > old_bw ? bw : old_bw, fl = fl > old_fl ? fl : old_fl;
    /* a directory that cannot be written only loses the record */
    if (better && *path && frit_cg_make_dirs(cfg.cache_dir) == 0 && (f = fopen(path, "w"))) {
      fprintf(f, "%.6g %.6g\n%s\n", bw, fl, fp);
      fclose(f);
    }
    lim_bw = bw, lim_fl = fl, lim_threads = threads;
  }
  *copy_gbps = lim_bw, *fma_gflops = lim_fl;
  pthread_mutex_unlock(&lim_mu);
  return FRIT_OK;
}
