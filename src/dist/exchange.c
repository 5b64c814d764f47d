/* The exchange thread: collectives started by a run move on a thread of their own while the run's
 * next kernels compute, and are waited for where their buffers are next touched (dist.h). */
#include "dist/dist.h"
#include "ir/uop.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct frit_dist_job {
  frit_coll_call call;
  int64_t dims[8];
  const void *in;
  void *out;
  frit_dist_job *next;
  int done;
  frit_status st;
  char msg[1024];
};

/* One FIFO for the process: jobs run in the order they were started, whichever ctx or thread
 * started them, so ranks that start the same collectives in the same order stay in step. */
static struct {
  pthread_mutex_t lock;
  pthread_cond_t more, finished;
  frit_dist_job *head, *tail;
  pthread_t thread;
  int running, stopping;
  frit_ctx *ctx; /* the thread's own: frit_dist_run sets its errors here, copied to the waiter's */
} Q = {.lock = PTHREAD_MUTEX_INITIALIZER, .more = PTHREAD_COND_INITIALIZER, .finished = PTHREAD_COND_INITIALIZER};

static void *exchange_main(void *unused) {
  (void)unused;
  pthread_mutex_lock(&Q.lock);
  for (;;) {
    while (!Q.head && !Q.stopping) pthread_cond_wait(&Q.more, &Q.lock);
    if (!Q.head) break;
    frit_dist_job *j = Q.head;
    pthread_mutex_unlock(&Q.lock);
    frit_clear_error(Q.ctx);
    frit_status st = frit_dist_run(Q.ctx, &j->call, j->in, j->out);
    pthread_mutex_lock(&Q.lock);
    j->st = st;
    if (st != FRIT_OK) snprintf(j->msg, sizeof j->msg, "%s", frit_error(Q.ctx));
    j->done = 1;
    Q.head = j->next;
    if (!Q.head) Q.tail = NULL;
    pthread_cond_broadcast(&Q.finished);
  }
  pthread_mutex_unlock(&Q.lock);
  return NULL;
}

frit_dist_job *frit_dist_start(frit_ctx *ctx, const frit_coll_call *c, const void *in, void *out) {
  frit_dist_job *j = calloc(1, sizeof *j);
  if (!j) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "dist: out of memory for a collective's job");
    return NULL;
  }
  j->call = *c;
  j->call.ndim = c->dims ? (c->ndim < 8 ? c->ndim : 8) : 0;
  if (c->dims) memcpy(j->dims, c->dims, (size_t)j->call.ndim * sizeof *j->dims);
  j->call.dims = c->dims ? j->dims : NULL;
  j->in = in, j->out = out;
  pthread_mutex_lock(&Q.lock);
  if (!Q.running) {
    if (!Q.ctx) Q.ctx = frit_ctx_new();
    if (!Q.ctx || pthread_create(&Q.thread, NULL, exchange_main, NULL) != 0) {
      pthread_mutex_unlock(&Q.lock);
      free(j);
      frit_set_error(ctx, FRIT_ERR_RUNTIME, "dist: cannot start the exchange thread");
      return NULL;
    }
    Q.running = 1, Q.stopping = 0;
  }
  if (Q.tail) Q.tail->next = j;
  else Q.head = j;
  Q.tail = j;
  pthread_cond_signal(&Q.more);
  pthread_mutex_unlock(&Q.lock);
  return j;
}

frit_status frit_dist_wait(frit_ctx *ctx, frit_dist_job *j) {
  if (!j) return FRIT_OK;
  pthread_mutex_lock(&Q.lock);
  while (!j->done) pthread_cond_wait(&Q.finished, &Q.lock);
  pthread_mutex_unlock(&Q.lock);
  frit_status st = j->st;
  if (st != FRIT_OK) frit_set_error(ctx, st, "%s", j->msg);
  free(j);
  return st;
}

void frit_dist_exchange_stop(void) {
  pthread_mutex_lock(&Q.lock);
  int running = Q.running;
  Q.stopping = 1;
  pthread_cond_signal(&Q.more);
  pthread_mutex_unlock(&Q.lock);
  if (running) pthread_join(Q.thread, NULL); /* it leaves once the queue is empty */
  pthread_mutex_lock(&Q.lock);
  Q.running = 0, Q.stopping = 0;
  frit_ctx_free(Q.ctx);
  Q.ctx = NULL;
  pthread_mutex_unlock(&Q.lock);
}
