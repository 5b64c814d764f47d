/* The kernel thread pool: workers wait on a launch counter, take chunks of the outermost
 * GLOBAL axis from a shared atomic cursor, and report back through a countdown. Programs share
 * one process-wide pool per thread count (frit_pool_acquire); a launch that finds the pool busy
 * with another caller's kernel runs on its own caller instead of waiting. */
#include "runtime/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

/* Iterations a thread polls before sleeping on a condition variable. Kernels of one run are
 * launched back to back, so a short spin saves the futex wake-up on each launch; between runs
 * the workers fall asleep and cost nothing. Kept short because a spinning thread on a busy
 * machine takes the core from the threads doing the work. */
#define SPIN_ITERS 4000
/* Chunks per thread: more than one lets fast threads pick up the work of slow ones (uneven
 * kernels, a busy core) while keeping each chunk a contiguous run of rows. */
#define CHUNKS_PER_THREAD 4

/* The chunk cursor packs the launch number, the chunk count and the next chunk into one word,
 * so that claiming a chunk (one CAS) also proves the launch is still the current one: a worker
 * that wakes late can never take a chunk of a finished launch. The caller waits for claimed
 * chunks only, never for a worker that did not wake up: the caller takes what is left itself. */
#define CUR_BITS 20
#define CUR_MASK ((UINT64_C(1) << CUR_BITS) - 1)
#define MAX_CHUNKS ((int64_t)CUR_MASK)

struct frit_pool {
  int n;
  pthread_t *th;
  int nstarted;
  pthread_mutex_t mu;
  pthread_cond_t wake, done_cv;
  atomic_uint_fast64_t gen; /* launch counter; changes under mu */
  int stop;
  atomic_int busy;             /* a caller is launching: others run their kernels themselves */
  atomic_uint_fast64_t cursor; /* gen (24 bits) | nchunks (20) | next chunk (20) */
  atomic_int_fast64_t done;    /* chunks finished in the current launch */
  /* the current launch: read only by a thread holding a claimed chunk */
  frit_kernel_fn fn;
  void *const *bufs;
  const int64_t *vars;
  int64_t extent;
};

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* Claims and runs chunks of launch `g` until none is left. */
static void run_chunks(frit_pool *p, uint64_t g) {
  uint64_t cur = atomic_load_explicit(&p->cursor, memory_order_acquire);
  for (;;) {
    if ((cur >> (2 * CUR_BITS)) != (g & 0xffffff)) return;
    int64_t n = (int64_t)((cur >> CUR_BITS) & CUR_MASK), c = (int64_t)(cur & CUR_MASK);
    if (c >= n) return;
    if (!atomic_compare_exchange_weak_explicit(&p->cursor, &cur, cur + 1, memory_order_acq_rel,
                                               memory_order_acquire))
      continue;
    int64_t base = p->extent / n, rem = p->extent % n;
    int64_t b = c * base + (c < rem ? c : rem);
    int64_t e = b + base + (c < rem ? 1 : 0);
    p->fn(p->bufs, p->vars, b, e);
    if (atomic_fetch_add_explicit(&p->done, 1, memory_order_acq_rel) + 1 == n) {
      pthread_mutex_lock(&p->mu);
      pthread_cond_signal(&p->done_cv);
      pthread_mutex_unlock(&p->mu);
    }
    cur = atomic_load_explicit(&p->cursor, memory_order_acquire);
  }
}

static void *worker(void *arg) {
  frit_pool *p = arg;
  uint_fast64_t seen = 0;
  for (;;) {
    int spins = 0;
    while (atomic_load_explicit(&p->gen, memory_order_acquire) == seen && spins < SPIN_ITERS) {
      cpu_relax();
      spins++;
    }
    if (spins == SPIN_ITERS) {
      pthread_mutex_lock(&p->mu);
      while (atomic_load_explicit(&p->gen, memory_order_acquire) == seen && !p->stop)
        pthread_cond_wait(&p->wake, &p->mu);
      int stop = p->stop;
      pthread_mutex_unlock(&p->mu);
      if (stop) return NULL;
    }
    seen = atomic_load_explicit(&p->gen, memory_order_acquire);
    run_chunks(p, seen);
  }
}

frit_pool *frit_pool_new(int nthreads) {
  if (nthreads < 1) nthreads = 1;
  frit_pool *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->n = nthreads;
  atomic_init(&p->gen, 0);
  atomic_init(&p->cursor, 0);
  atomic_init(&p->done, 0);
  atomic_init(&p->busy, 0);
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->wake, NULL);
  pthread_cond_init(&p->done_cv, NULL);
  if (nthreads > 1) {
    p->th = calloc((size_t)nthreads - 1, sizeof *p->th);
    if (!p->th) {
      frit_pool_free(p);
      return NULL;
    }
    for (int i = 0; i < nthreads - 1; i++) {
      if (pthread_create(&p->th[i], NULL, worker, p) != 0) break;
      p->nstarted++;
    }
    /* fewer threads than asked still works: the caller and the started ones share the chunks */
    p->n = p->nstarted + 1;
  }
  return p;
}

void frit_pool_free(frit_pool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->stop = 1;
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);
  for (int i = 0; i < p->nstarted; i++) pthread_join(p->th[i], NULL);
  free(p->th);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->wake);
  pthread_cond_destroy(&p->done_cv);
  free(p);
}

int frit_pool_threads(const frit_pool *p) { return p ? p->n : 1; }

void frit_pool_launch(frit_pool *p, frit_kernel_fn fn, void *const *bufs, const int64_t *vars,
                      int64_t extent) {
  if (extent <= 0) return;
  /* one launch at a time: a second caller (another program, another thread) does its work
     alone rather than queueing behind the first; the cores are busy with the first anyway */
  if (!p || p->n <= 1 || extent == 1 ||
      atomic_exchange_explicit(&p->busy, 1, memory_order_acquire)) {
    fn(bufs, vars, 0, extent);
    return;
  }
  int64_t want = (int64_t)p->n * CHUNKS_PER_THREAD;
  if (want > MAX_CHUNKS) want = MAX_CHUNKS;
  int64_t nchunks = extent < want ? extent : want;
  /* no chunk of the previous launch is outstanding here, so nobody reads these fields */
  p->fn = fn;
  p->bufs = bufs;
  p->vars = vars;
  p->extent = extent;
  atomic_store_explicit(&p->done, 0, memory_order_relaxed);
  pthread_mutex_lock(&p->mu);
  uint64_t g = atomic_load_explicit(&p->gen, memory_order_relaxed) + 1;
  atomic_store_explicit(&p->cursor, ((g & 0xffffff) << (2 * CUR_BITS)) | ((uint64_t)nchunks << CUR_BITS),
                        memory_order_release);
  atomic_store_explicit(&p->gen, g, memory_order_release);
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);
  run_chunks(p, g);
  int spins = 0;
  while (atomic_load_explicit(&p->done, memory_order_acquire) < nchunks && spins < SPIN_ITERS) {
    cpu_relax();
    spins++;
  }
  pthread_mutex_lock(&p->mu);
  while (atomic_load_explicit(&p->done, memory_order_acquire) < nchunks)
    pthread_cond_wait(&p->done_cv, &p->mu);
  pthread_mutex_unlock(&p->mu);
  atomic_store_explicit(&p->busy, 0, memory_order_release);
}

/* ---------- the shared pools ---------- */

/* A few pools by thread count, reference-counted by the programs using them: the threads live
 * while some program needs them, and a process has as many workers as cores, not as many as
 * programs times cores. */
#define MAX_SHARED 8
static struct {
  int nthreads, refs;
  frit_pool *pool;
} shared[MAX_SHARED];
static pthread_mutex_t shared_mu = PTHREAD_MUTEX_INITIALIZER;

frit_pool *frit_pool_acquire(int nthreads) {
  if (nthreads < 2) return NULL;
  frit_pool *p = NULL;
  pthread_mutex_lock(&shared_mu);
  int slot = -1;
  for (int i = 0; i < MAX_SHARED && !p; i++) {
    if (shared[i].pool && shared[i].nthreads == nthreads) {
      p = shared[i].pool;
      shared[i].refs++;
    } else if (!shared[i].pool && slot < 0) {
      slot = i;
    }
  }
  if (!p && slot >= 0 && (p = frit_pool_new(nthreads)) != NULL) {
    shared[slot].pool = p;
    shared[slot].nthreads = nthreads;
    shared[slot].refs = 1;
  }
  pthread_mutex_unlock(&shared_mu);
  return p; /* NULL (out of memory, or every slot taken by another count): run on the caller */
}

void frit_pool_release(frit_pool *p) {
  if (!p) return;
  frit_pool *dead = NULL;
  pthread_mutex_lock(&shared_mu);
  for (int i = 0; i < MAX_SHARED; i++)
    if (shared[i].pool == p && --shared[i].refs == 0) {
      dead = p;
      shared[i].pool = NULL;
    }
  pthread_mutex_unlock(&shared_mu);
  frit_pool_free(dead); /* no program uses it: nobody launches on it any more */
}
