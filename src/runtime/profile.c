/* The profiler (docs/profiling.md): process-wide kernel-launch and compile-pass events, their
 * bytes and FLOP estimates, the machine limits measured once and cached on disk, and the Chrome
 * trace / Perfetto JSON writer. The summary of a saved trace lives in profile_summary.c. */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "ir/walk.h"
#include "runtime/profile.h"
#include "runtime/runtime.h"

enum { MAX_GROUPS = 16 };
typedef struct flop_group {
  uint64_t loops;
  int64_t ops;
} flop_group;

typedef struct prof_event {
  const char *name, *cat, *ops, *site; /* interned: they outlive the ctx that named them */
  int64_t t0, dur;                     /* ns, t0 from the profile's origin */
  int64_t bytes_read, bytes_written, flops; /* -1: not a kernel */
  int tid;
} prof_event;

/* One launch's kernel facts, per compiled kernel, worked out on its first profiled launch. */
struct frit_rt_prof_meta {
  const char *name, *ops, *site;
  size_t site_tried; /* 1 + G.sites_n when the site was last looked for in vain: again when it grows */
  flop_group groups[MAX_GROUPS]; /* the FLOP estimate's ops per loop set */
  int ngroups;
  unsigned char *param_read; /* parameter p is loaded from */
};

/* Interned strings: chained in buckets by hash. Kernel names and op lists are interned once per
 * compiled kernel, call sites once per note (every lazy op while Python profiles). */
enum { STR_BUCKETS = 4096 };
typedef struct prof_str {
  struct prof_str *next;
  char s[];
} prof_str;

/* Sites noted by frit_profile_note_site: tensor node -> interned "file:line". */
typedef struct site_entry {
  const void *node;
  const char *site;
} site_entry;

static struct {
  pthread_mutex_t mu;
  atomic_int on;
  int64_t origin;
  prof_event *ev;
  size_t n, cap;
  prof_str *strs[STR_BUCKETS];
  site_entry *sites; /* open addressing on the node address */
  size_t sites_cap, sites_n;
} G = {.mu = PTHREAD_MUTEX_INITIALIZER};

static atomic_int next_tid = 1;
static _Thread_local int my_tid;

int64_t frit_rt_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

bool frit_rt_profiling(void) { return atomic_load_explicit(&G.on, memory_order_relaxed) != 0; }

static const char *intern(const char *s) {
  if (!s) return NULL;
  uint64_t h = 1469598103934665603ull;
  for (const char *c = s; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
  prof_str **b = &G.strs[h % STR_BUCKETS];
  for (prof_str *e = *b; e; e = e->next)
    if (!strcmp(e->s, s)) return e->s;
  size_t n = strlen(s) + 1;
  prof_str *e = malloc(sizeof *e + n);
  if (!e) return NULL;
  memcpy(e->s, s, n);
  e->next = *b;
  *b = e;
  return e->s;
}

static void push(const prof_event *e) {
  if (G.n == G.cap) {
    size_t cap = G.cap ? 2 * G.cap : 1024;
    prof_event *ev = realloc(G.ev, cap * sizeof *ev);
    if (!ev) return; /* out of memory: the event is lost, the run goes on */
    G.ev = ev, G.cap = cap;
  }
  G.ev[G.n++] = *e;
}

static int tid(void) {
  if (!my_tid) my_tid = atomic_fetch_add(&next_tid, 1);
  return my_tid;
}

void frit_rt_prof_event(const char *name, const char *cat, int64_t t0, int64_t t1) {
  pthread_mutex_lock(&G.mu);
  if (G.on) {
    prof_event e = {intern(name), intern(cat), NULL, NULL, t0 - G.origin, t1 - t0, -1, -1, -1, tid()};
    push(&e);
  }
  pthread_mutex_unlock(&G.mu);
}

/* ---------- sites ---------- */

static size_t site_slot(const void *node, size_t cap) {
  uint64_t h = (uint64_t)(uintptr_t)node * 0x9E3779B97F4A7C15ull;
  return (size_t)(h >> 20) & (cap - 1);
}

static const char *site_of(const void *node) {
  if (!G.sites_cap) return NULL;
  for (size_t i = site_slot(node, G.sites_cap);; i = (i + 1) & (G.sites_cap - 1)) {
    if (!G.sites[i].node) return NULL;
    if (G.sites[i].node == node) return G.sites[i].site;
  }
}

frit_status frit_profile_note_site(frit_ctx *ctx, const frit_tensor *t, const char *site) {
  if (!ctx) return FRIT_ERR_INVALID;
  if (!t || !site) return frit_set_error(ctx, FRIT_ERR_INVALID, "profile_note_site: NULL %s", t ? "site" : "tensor");
  (void)frit_rt_profile_env(); /* $FRIT_PROFILE=x.json starts (clearing the sites) before the first note */
  frit_status st = FRIT_OK;
  pthread_mutex_lock(&G.mu);
  if (2 * (G.sites_n + 1) > G.sites_cap) {
    size_t cap = G.sites_cap ? 2 * G.sites_cap : 1024;
    site_entry *s = calloc(cap, sizeof *s);
    if (!s) {
      st = FRIT_ERR_NOMEM;
      goto out;
    }
    for (size_t i = 0; i < G.sites_cap; i++) {
      if (!G.sites[i].node) continue;
      size_t j = site_slot(G.sites[i].node, cap);
      while (s[j].node) j = (j + 1) & (cap - 1);
      s[j] = G.sites[i];
    }
    free(G.sites);
    G.sites = s, G.sites_cap = cap;
  }
  const char *is = intern(site);
  if (!is) {
    st = FRIT_ERR_NOMEM;
    goto out;
  }
  size_t i = site_slot(t, G.sites_cap);
  while (G.sites[i].node && G.sites[i].node != t) i = (i + 1) & (G.sites_cap - 1);
  if (!G.sites[i].node) G.sites_n++;
  G.sites[i].node = t, G.sites[i].site = is; /* the latest note wins: hash-consing shares nodes */
out:
  pthread_mutex_unlock(&G.mu);
  return st == FRIT_OK ? st : frit_set_error(ctx, st, "profile_note_site: out of memory");
}

/* The site of a kernel: its tensor node's, else the first noted node among the nodes it reads
 * (breadth first, a bounded search: a fused kernel's own node may be a rewrite of the user's). */
static const char *kernel_site(const frit_uop *t) {
  if (!t || !G.sites_n) return NULL;
  enum { LIMIT = 64 };
  const frit_uop *q[LIMIT];
  int head = 0, tail = 0;
  q[tail++] = t;
  while (head < tail) {
    const frit_uop *u = q[head++];
    const char *s = site_of(u);
    if (s) return s;
    for (int i = 0; i < (int)u->nsrc && tail < LIMIT; i++) q[tail++] = u->src[i];
  }
  return NULL;
}

/* ---------- kernel launches ---------- */

/* The FLOP estimate: each floating-point ALU op counts once per iteration of the loops it sits
 * in, the RANGEs it depends on (a REDUCE or END closes the ranges it runs over), so the ops
 * after a reduction count per output element. Ops are grouped by that set of loops (a bit mask
 * over the kernel's RANGEs in walk order, the order of c->range_ends); a kernel with more than
 * 64 RANGEs counts every op per iteration of all of them (docs/profiling.md). */

typedef struct flop_count {
  flop_group *g;
  int ng;
} flop_count;

static void count_op(void *arg, const frit_uop *u, uint64_t loops) {
  flop_count *fc = arg;
  if (!(frit_dtype_is_float(u->dtype) || frit_dtype_is_complex(u->dtype))) return;
  /* a WHERE selects (padding, masks): no arithmetic */
  int64_t f = u->op == FRIT_OP_MULACC                                              ? 2
              : u->op == FRIT_OP_WHERE                                             ? 0
              : (frit_op_flags(u->op) & FRIT_F_ALU) || u->op == FRIT_OP_REDUCE ? 1
                                                                                   : 0;
  if (!f) return;
  int k = 0;
  while (k < fc->ng && fc->g[k].loops != loops) k++;
  if (k == fc->ng) {
    if (fc->ng == MAX_GROUPS) k = fc->ng - 1; /* rare: lumped with the last group */
    else fc->g[fc->ng++] = (flop_group){loops, 0};
  }
  fc->g[k].ops += f;
}

static int count_flops(frit_uop *ast, flop_group *g) {
  flop_count fc = {g, 0};
  return frit_rt_loopsets(ast, count_op, &fc) < 0 ? 0 : fc.ng;
}

static void mark_reads(frit_uop *ast, unsigned char *read, int nparams) {
  size_t n;
  frit_uop **nodes = frit_walk_topo(ast, &n);
  if (!nodes) return;
  for (size_t i = 0; i < n; i++) {
    const frit_uop *u = nodes[i];
    if (u->op != FRIT_OP_LOAD || u->nsrc < 1) continue;
    const frit_uop *ix = u->src[0];
    const frit_uop *g = ix->op == FRIT_OP_INDEX ? ix->src[0] : ix;
    if (g->op == FRIT_OP_DEFINE_GLOBAL && g->arg.i0 >= 0 && g->arg.i0 < nparams) read[g->arg.i0] = 1;
  }
  free(nodes);
}

/* Kernel a loads a buffer that kernel b stores: a kernel the library made for another's input
 * (a transposed copy for a matmul, a gradient) takes the site of the kernel that consumes it. */
static bool reads_output_of(const frit_sched_kernel *a, const frit_sched_kernel *b) {
  for (int i = 0; i < a->nparams; i++)
    for (int j = 0; !a->param_written[i] && j < b->nparams; j++)
      if (b->param_written[j] && b->param_buf[j] == a->param_buf[i]) return true;
  return false;
}

/* Kernel k's site, else that of the nearest kernel down the chain of those reading its output
 * (breadth first over at most 16 kernels: the search reruns while sites keep being noted). */
static const char *site_or_consumers(const frit_schedule *s, int k) {
  enum { LIMIT = 16 };
  int q[LIMIT], head = 0, tail = 0;
  q[tail++] = k;
  while (head < tail) {
    int a = q[head++];
    const char *site = kernel_site(s->kernels[a].tensor);
    if (site) return site;
    for (int j = a + 1; j < s->nkernels && tail < LIMIT; j++) {
      bool seen = false;
      for (int i = 0; i < tail && !seen; i++) seen = q[i] == j;
      if (!seen && reads_output_of(&s->kernels[j], &s->kernels[a])) q[tail++] = j;
    }
  }
  return NULL;
}

static frit_rt_prof_meta *kernel_meta(frit_program *p, int k) {
  frit_rt_compiled *c = p->c;
  const frit_schedule *s = c->sched;
  if (!c->prof) {
    c->prof = frit_arena_alloc(&p->ctx->arena, (size_t)s->nkernels * sizeof *c->prof);
    if (!c->prof) return NULL;
    memset(c->prof, 0, (size_t)s->nkernels * sizeof *c->prof);
  }
  frit_rt_prof_meta *m = &c->prof[k];
  const frit_sched_kernel *sk = &s->kernels[k];
  if (!m->name) {
    m->param_read = frit_arena_alloc(&p->ctx->arena, (size_t)(sk->nparams ? sk->nparams : 1));
    if (!m->param_read) return NULL;
    memset(m->param_read, 0, (size_t)(sk->nparams ? sk->nparams : 1));
    mark_reads(sk->ast, m->param_read, sk->nparams);
    m->ngroups = count_flops(sk->ast, m->groups);
    m->ops = intern(sk->ops);
    m->name = intern(sk->name);
  }
  if (!m->site && m->site_tried != G.sites_n + 1) { /* sites may be noted after the first launch */
    m->site = site_or_consumers(s, k);
    m->site_tried = G.sites_n + 1;
  }
  return m;
}

/* Sum over the op groups of ops x the iterations of their loops under p's bindings. */
static int64_t kernel_flops(frit_program *p, int k, const frit_rt_prof_meta *m) {
  int nr = p->c->nranges[k];
  int64_t ext[64];
  if (frit_rt_kernel_extents(p, k, ext)) return 0; /* unknown */
  double total = 0;
  for (int i = 0; i < m->ngroups; i++) {
    double it = (double)m->groups[i].ops;
    for (int r = 0; r < nr && r < 64; r++)
      if (m->groups[i].loops >> r & 1) it *= (double)(ext[r] > 0 ? ext[r] : 0);
    total += it;
  }
  return total < 9e18 ? (int64_t)total : INT64_MAX;
}

void frit_rt_prof_kernel(frit_program *p, int k, int64_t t0, int64_t t1) {
  pthread_mutex_lock(&G.mu);
  frit_rt_prof_meta *m = G.on ? kernel_meta(p, k) : NULL;
  if (m) {
    const frit_schedule *s = p->c->sched;
    const frit_sched_kernel *sk = &s->kernels[k];
    int64_t rd = 0, wr = 0;
    for (int i = 0; i < sk->nparams; i++) {
      int b = sk->param_buf[i];
      int64_t bytes = p->numel[b] * ((frit_dtype_bits(s->bufs[b].dtype) + 7) / 8);
      if (m->param_read[i]) rd += bytes;
      if (sk->param_written[i]) wr += bytes;
    }
    int64_t flops = kernel_flops(p, k, m);
    prof_event e = {m->name, "kernel", m->ops, m->site, t0 - G.origin, t1 - t0, rd, wr, flops, tid()};
    push(&e);
  }
  pthread_mutex_unlock(&G.mu);
}

/* ---------- start, stop, save ---------- */

void frit_profile_start(void) {
  pthread_mutex_lock(&G.mu);
  G.n = 0;
  /* notes of an earlier profile may name nodes of freed ctxs, whose addresses get reused */
  if (G.sites) memset(G.sites, 0, G.sites_cap * sizeof *G.sites);
  G.sites_n = 0;
  G.origin = frit_rt_now_ns();
  atomic_store(&G.on, 1);
  pthread_mutex_unlock(&G.mu);
}

void frit_profile_stop(void) { atomic_store(&G.on, 0); }

int frit_profile_active(void) { return frit_rt_profiling(); }

size_t frit_profile_event_count(void) {
  pthread_mutex_lock(&G.mu);
  size_t n = G.n;
  pthread_mutex_unlock(&G.mu);
  return n;
}

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
    else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
    else fputc(ch, f);
  }
  fputc('"', f);
}

frit_status frit_profile_save(frit_ctx *ctx, const char *path) {
  if (!ctx) return FRIT_ERR_INVALID;
  if (!path) return frit_set_error(ctx, FRIT_ERR_INVALID, "profile_save: NULL path");
  double bw = 0, fl = 0;
  frit_status st = frit_machine_limits(ctx, &bw, &fl);
  if (st != FRIT_OK) return st;
  FILE *f = fopen(path, "w");
  if (!f) return frit_set_error(ctx, FRIT_ERR_RUNTIME, "profile_save: cannot write '%s'", path);
  pthread_mutex_lock(&G.mu);
  fprintf(f, "{\"traceEvents\":[\n");
  fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"frit\"}}",
          (int)getpid());
  for (size_t i = 0; i < G.n; i++) {
    const prof_event *e = &G.ev[i];
    fprintf(f, ",\n{\"name\":");
    json_str(f, e->name);
    fprintf(f, ",\"cat\":");
    json_str(f, e->cat);
    /* microseconds with ns digits: Perfetto keeps the fraction */
    fprintf(f, ",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":%d,\"tid\":%d,\"args\":{", e->t0 / 1e3,
            e->dur / 1e3, (int)getpid(), e->tid);
    if (e->flops >= 0) {
      double sec = e->dur > 0 ? e->dur / 1e9 : 1e-9;
      double gbps = (double)(e->bytes_read + e->bytes_written) / sec / 1e9, gfl = (double)e->flops / sec / 1e9;
      fprintf(f, "\"ops\":");
      json_str(f, e->ops);
      fprintf(f, ",\"site\":");
      json_str(f, e->site ? e->site : "");
      fprintf(f, ",\"bytes_read\":%" PRId64 ",\"bytes_written\":%" PRId64 ",\"flops\":%" PRId64
                 ",\"gbps\":%.4g,\"gflops\":%.4g,\"frac_bw\":%.4g,\"frac_flops\":%.4g",
              e->bytes_read, e->bytes_written, e->flops, gbps, gfl, bw > 0 ? gbps / bw : 0, fl > 0 ? gfl / fl : 0);
    }
    fprintf(f, "}}");
  }
  pthread_mutex_unlock(&G.mu);
  fprintf(f, "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"frit_version\":");
  json_str(f, frit_version());
  fprintf(f, ",\"copy_gbps\":%.4g,\"fma_gflops\":%.4g}}\n", bw, fl);
  if (fclose(f) != 0) return frit_set_error(ctx, FRIT_ERR_RUNTIME, "profile_save: error writing '%s'", path);
  return FRIT_OK;
}

/* ---------- $FRIT_PROFILE=path.json ---------- */

static char *env_path;

static void save_at_exit(void) {
  frit_profile_stop();
  frit_ctx *ctx = frit_ctx_new();
  if (!ctx) return;
  if (frit_profile_save(ctx, env_path) != FRIT_OK)
    fprintf(stderr, "frit: FRIT_PROFILE: %s\n", frit_error(ctx));
  frit_ctx_free(ctx);
  free(env_path);
  env_path = NULL;
}

static void env_init(void) {
  const char *v = getenv("FRIT_PROFILE");
  size_t n = v ? strlen(v) : 0;
  if (n < 5 || strcmp(v + n - 5, ".json") != 0) return;
  env_path = malloc(n + 1);
  if (!env_path) return;
  memcpy(env_path, v, n + 1);
  frit_profile_start();
  atexit(save_at_exit);
}

bool frit_rt_profile_env(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, env_init);
  const char *v = getenv("FRIT_PROFILE");
  size_t n = v ? strlen(v) : 0;
  /* the stderr table: any other non-empty value but "0" */
  return n && strcmp(v, "0") != 0 && !(n >= 5 && !strcmp(v + n - 5, ".json"));
}
