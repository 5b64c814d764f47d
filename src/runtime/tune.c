/* The autotuner: a beam search over a kernel's codegen choices (frit_cg_choices: register tile
 * shape, cache blocking, unrolling, register accumulation, threads), each candidate compiled and
 * timed on copies of the kernel's own buffers, checked against the heuristics' result, and the
 * winner kept on disk keyed by the kernel's code and the machine. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/profile.h"
#include "runtime/runtime.h"

enum { MAX_CANDIDATES = 256, MAX_BEAM = 8, TIME_REPS = 5 };

typedef struct candidate {
  frit_cg_choices ch;
  frit_cg_kernel *kernel; /* compiled; NULL: not built (or failed) */
  uint64_t hash;          /* its program's code hash */
  int64_t extent;
  double ms;              /* best of the timed runs; < 0: failed (error, or a different result) */
  int same_as;            /* index of an earlier candidate with the same code and launch, or -1 */
} candidate;

/* The kernel's parameters during the search: the buffers it writes are replaced by scratch copies
 * (restored before every run: a kernel may read what it writes), the reads point at the real
 * inputs. */
typedef struct scratch {
  int n;
  void **params;
  void **pristine; /* per written parameter: its contents before the kernel ran; else NULL */
  void **expect;   /* per written parameter: what the heuristics' kernel wrote */
  size_t *bytes;
  frit_dtype *dtype;
} scratch;

bool frit_rt_tune_on(void) {
  const char *t = getenv("FRIT_TUNE");
  return t && *t && strcmp(t, "0") != 0;
}

static int env_int(const char *name, int def, int lo, int hi) {
  const char *v = getenv(name);
  int x = v && *v ? atoi(v) : def;
  return x < lo ? lo : x > hi ? hi : x;
}

/* The tunings live in <cache>/tune/; without that directory no lookup is made (runs that never
 * tuned pay nothing). */
static bool tune_dir(const frit_program *p, char *out, size_t cap) {
  if (!p->cfg.cache_dir) return false;
  return (size_t)snprintf(out, cap, "%s/tune", p->cfg.cache_dir) < cap;
}

/* FRIT_TUNE_FORCE="rows=3 block=2": every kernel under these choices, no search (the tests run
 * each choice against numpy this way: every choice must render a correct kernel). */
static bool forced(frit_cg_choices *ch) {
  const char *f = getenv("FRIT_TUNE_FORCE");
  return f && *f && frit_cg_choices_parse(f, ch);
}

bool frit_rt_tune_lookups(const frit_program *p) {
  char dir[4096];
  struct stat st;
  frit_cg_choices ch;
  return frit_rt_tune_on() || forced(&ch) ||
         (tune_dir(p, dir, sizeof dir) && stat(dir, &st) == 0 && S_ISDIR(st.st_mode));
}

/* The tuning's key: the heuristics' code for the kernel at these sizes, the compiler and its
 * flags, the machine and the thread count. */
static uint64_t tune_key(const frit_program *p, const frit_cg_program *base, char *fp, size_t fpcap) {
  frit_rt_machine_fingerprint(fp, fpcap, p->threads);
  uint64_t h = frit_cg_hash(1469598103934665603ull, base->source);
  h = frit_cg_hash(h, p->cfg.cc);
  h = frit_cg_hash(h, p->cfg.cflags);
  return frit_cg_hash(h, fp);
}

static bool tune_path(const frit_program *p, uint64_t key, char *out, size_t cap) {
  char dir[4096];
  return tune_dir(p, dir, sizeof dir) && (size_t)snprintf(out, cap, "%s/%016" PRIx64 ".txt", dir, key) < cap;
}

static bool read_tuning(const char *path, frit_cg_choices *ch) {
  FILE *f = fopen(path, "r");
  if (!f) return false;
  char line[512];
  bool ok = fgets(line, sizeof line, f) && !strncmp(line, "choices: ", 9) && frit_cg_choices_parse(line + 9, ch);
  fclose(f);
  return ok;
}

/* Written to a temporary name and renamed: a concurrent reader sees the old file or the new one. */
static void write_tuning(const frit_program *p, const char *path, const char *kname, const candidate *best,
                         const candidate *base, int tried, const char *fp) {
  char dir[4096], tmp[4500], text[256];
  if (!tune_dir(p, dir, sizeof dir) || frit_cg_make_dirs(dir) != 0) return;
  snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
  FILE *f = fopen(tmp, "w");
  if (!f) return;
  frit_cg_choices_format(&best->ch, text, sizeof text);
  fprintf(f, "choices: %s\nkernel: %s\ntuned_ms: %.4f\ndefault_ms: %.4f\ncandidates: %d\nmachine: %s\n", text,
          kname, best->ms, base->ms, tried, fp);
  bool ok = fclose(f) == 0;
  if (!ok || rename(tmp, path) != 0) unlink(tmp);
}

static void scratch_free(scratch *s) {
  for (int i = 0; i < s->n; i++) {
    if (s->pristine && s->pristine[i]) free(s->params[i]), free(s->pristine[i]), free(s->expect[i]);
  }
  free(s->params), free(s->pristine), free(s->expect), free(s->bytes), free(s->dtype);
  memset(s, 0, sizeof *s);
}

static bool scratch_new(frit_program *p, int k, scratch *s) {
  const frit_sched_kernel *sk = &p->c->sched->kernels[k];
  size_t n = (size_t)(sk->nparams ? sk->nparams : 1);
  s->n = sk->nparams;
  s->params = calloc(n, sizeof *s->params);
  s->pristine = calloc(n, sizeof *s->pristine);
  s->expect = calloc(n, sizeof *s->expect);
  s->bytes = calloc(n, sizeof *s->bytes);
  s->dtype = calloc(n, sizeof *s->dtype);
  if (!s->params || !s->pristine || !s->expect || !s->bytes || !s->dtype) return false;
  for (int i = 0; i < sk->nparams; i++) {
    frit_dtype dt = p->c->sched->bufs[sk->param_buf[i]].dtype;
    s->dtype[i] = dt;
    s->bytes[i] = p->param_sizes[i] * (size_t)((frit_dtype_bits(dt) + 7) / 8);
    s->params[i] = p->params[i];
    if (!sk->param_written[i] || !p->params[i]) continue;
    size_t cap = (s->bytes[i] + 63) / 64 * 64 + 64;
    s->params[i] = aligned_alloc(64, cap);
    s->pristine[i] = malloc(s->bytes[i] + 1);
    s->expect[i] = malloc(s->bytes[i] + 1);
    if (!s->params[i] || !s->pristine[i] || !s->expect[i]) return false;
    memcpy(s->pristine[i], p->params[i], s->bytes[i]);
  }
  return true;
}

static void scratch_restore(scratch *s) {
  for (int i = 0; i < s->n; i++)
    if (s->pristine[i]) memcpy(s->params[i], s->pristine[i], s->bytes[i]);
}

static bool close_f(double a, double b, double tol) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  if (a == b) return true;
  return fabs(a - b) <= tol * (fabs(a) + fabs(b)) + tol * 1e-3;
}

/* Does every written parameter hold what the heuristics' kernel wrote? Floats within a relative
 * tolerance (a choice may reorder a reduction), everything else bit for bit. */
static bool same_result(const scratch *s) {
  for (int i = 0; i < s->n; i++) {
    if (!s->pristine[i]) continue;
    const void *a = s->params[i], *b = s->expect[i];
    size_t n = s->bytes[i];
    switch (frit_dtype_kind(s->dtype[i])) {
    case FRIT_F32: case FRIT_C64:
      for (size_t j = 0; j < n / 4; j++)
        if (!close_f(((const float *)a)[j], ((const float *)b)[j], 1e-4)) return false;
      break;
    case FRIT_F64: case FRIT_C128:
      for (size_t j = 0; j < n / 8; j++)
        if (!close_f(((const double *)a)[j], ((const double *)b)[j], 1e-10)) return false;
      break;
    case FRIT_BOOL: case FRIT_I8: case FRIT_I16: case FRIT_I32: case FRIT_I64: case FRIT_U8: case FRIT_U16:
    case FRIT_U32: case FRIT_U64: case FRIT_F16: case FRIT_BF16: case FRIT_VOID: case FRIT_SCALAR_KIND_COUNT_:
      if (memcmp(a, b, n) != 0) return false;
      break;
    }
  }
  return true;
}

static void launch(frit_program *p, frit_kernel_fn fn, void *const *params, int64_t extent, int64_t work,
                   bool alone) {
  if (extent <= 0) return;
  if (!alone && p->threads > 1 && extent > 1 && work >= FRIT_RT_MIN_PARALLEL_WORK) {
    if (!p->pool) p->pool = frit_pool_acquire(p->threads);
    frit_pool_launch(p->pool, fn, params, p->varvals, extent);
  } else {
    fn(params, p->varvals, 0, extent);
  }
}

/* Best of a few runs in ms, after one untimed run whose result is checked (or, for the first
 * candidate, kept as the expected result); -1 when the result differs. */
static double time_candidate(frit_program *p, scratch *s, const candidate *c, int64_t work, bool reference) {
  scratch_restore(s);
  launch(p, c->kernel->fn, s->params, c->extent, work, c->ch.threads == 1);
  if (reference) {
    for (int i = 0; i < s->n; i++)
      if (s->pristine[i]) memcpy(s->expect[i], s->params[i], s->bytes[i]);
  } else if (!same_result(s)) {
    return -1;
  }
  double best = INFINITY, spent = 0;
  for (int r = 0; r < TIME_REPS && (r < 2 || spent < 300); r++) {
    scratch_restore(s);
    int64_t t0 = frit_rt_now_ns();
    launch(p, c->kernel->fn, s->params, c->extent, work, c->ch.threads == 1);
    double ms = (double)(frit_rt_now_ns() - t0) / 1e6;
    spent += ms;
    if (ms < best) best = ms;
  }
  return best;
}

static bool choices_equal(const frit_cg_choices *a, const frit_cg_choices *b) { return !memcmp(a, b, sizeof *a); }

/* One step away from c in each direction the search knows. */
static int neighbours(const frit_cg_choices *c, int threads, frit_cg_choices *out) {
  static const int rows[] = {2, 3, 4, 5, 6, 7, 8}, blocks[] = {1, 2, 4, 8, 16, 32};
  int n = 0;
  frit_cg_choices x;
#define STEP(field, value) (x = *c, x.field = (value), out[n++] = x)
  STEP(tile, c->tile ? 0 : -1);
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) STEP(tile_rows, rows[i]);
  STEP(tile_vecs, c->tile_vecs == 1 ? 2 : 1);
  STEP(tile_vecs, c->tile_vecs == 4 ? 2 : 4);
  for (size_t i = 0; i < sizeof blocks / sizeof *blocks; i++) STEP(tile_block, blocks[i]);
  STEP(tile_order, !c->tile_order);
  STEP(unroll, c->unroll ? 0 : -1);
  STEP(regacc, c->regacc ? 0 : -1);
  if (threads > 1) STEP(threads, c->threads ? 0 : 1);
#undef STEP
  return n;
}

/* Generates, compiles and times the candidates [from, n) in one translation unit. */
static void run_round(frit_program *p, int k, frit_uop *fixed_ast, candidate *cs, int from, int n, scratch *s,
                      int64_t work, bool log) {
  frit_ctx *ctx = p->ctx;
  const frit_schedule *sc = p->c->sched;
  const frit_sched_kernel *sk = &sc->kernels[k];
  int m = n - from;
  frit_uop **asts = malloc((size_t)m * sizeof *asts);
  const char **names = malloc((size_t)m * sizeof *names);
  uint64_t *masks = malloc((size_t)m * sizeof *masks);
  frit_cg_choices *chs = malloc((size_t)m * sizeof *chs);
  frit_cg_program *cg = NULL;
  if (asts && names && masks && chs) {
    for (int i = 0; i < m; i++) asts[i] = fixed_ast, names[i] = sk->name, masks[i] = sk->alias_mask, chs[i] = cs[from + i].ch;
    cg = frit_codegen_generate_choices(ctx, asts, names, m, sc->vars, sc->nvars, masks, chs);
  }
  if (cg && frit_codegen_compile(ctx, cg, &p->cfg) != FRIT_OK) cg = NULL;
  if (!cg) frit_clear_error(ctx);
  for (int i = 0; i < m; i++) {
    candidate *c = &cs[from + i];
    c->ms = -1;
    if (!cg) continue;
    c->kernel = &cg->kernels[i];
    c->hash = cg->hash;
    if (frit_eval_int_expr(ctx, c->kernel->g0_extent, p->binds, sc->nvars, &c->extent) != FRIT_OK) {
      frit_clear_error(ctx);
      c->kernel = NULL;
      continue;
    }
    for (int j = 0; j < from + i && c->same_as < 0; j++)
      if (cs[j].kernel && cs[j].kernel->opt == c->kernel->opt && cs[j].ch.threads == c->ch.threads) c->same_as = j;
    c->ms = c->same_as >= 0 ? cs[c->same_as].ms : time_candidate(p, s, c, work, from + i == 0);
    if (log && c->same_as < 0) {
      char text[256];
      frit_cg_choices_format(&c->ch, text, sizeof text);
      if (c->ms < 0) fprintf(stderr, "frit tune: %s: %-44s wrong result or no build\n", sk->name, text);
      else fprintf(stderr, "frit tune: %s: %-44s %9.3f ms\n", sk->name, text, c->ms);
    }
  }
  free(asts), free(names), free(masks), free(chs);
}

static int by_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The beam's best timed again against the heuristics, round by round so that both see the same
 * machine state (a shared machine's load moves single timings by tens of percent): the winner
 * must beat the heuristics' median by 3%. */
static candidate *confirm(frit_program *p, candidate *cs, candidate *const *front, int nfront, scratch *s, int64_t work,
                          bool log) {
  enum { ROUNDS = 7 };
  candidate *who[MAX_BEAM + 1] = {&cs[0]};
  int m = 1;
  for (int b = 0; b < nfront; b++)
    if (front[b] != &cs[0]) who[m++] = front[b];
  if (m == 1) return &cs[0];
  double t[MAX_BEAM + 1][ROUNDS], spent = 0;
  int rounds = 0;
  for (; rounds < ROUNDS && (rounds < 3 || spent < 2000); rounds++)
    for (int i = 0; i < m; i++) {
      scratch_restore(s);
      int64_t t0 = frit_rt_now_ns();
      launch(p, who[i]->kernel->fn, s->params, who[i]->extent, work, who[i]->ch.threads == 1);
      t[i][rounds] = (double)(frit_rt_now_ns() - t0) / 1e6;
      spent += t[i][rounds];
    }
  candidate *best = &cs[0];
  double base_med = 0, best_med = INFINITY;
  for (int i = 0; i < m; i++) {
    qsort(t[i], (size_t)rounds, sizeof t[i][0], by_double);
    double med = t[i][rounds / 2];
    who[i]->ms = med;
    if (i == 0) base_med = med;
    else if (med < best_med) best_med = med, best = who[i];
    if (log) {
      char text[256];
      frit_cg_choices_format(&who[i]->ch, text, sizeof text);
      fprintf(stderr, "frit tune: final: %-44s %9.3f ms (median of %d)\n", text, med, rounds);
    }
  }
  return best_med < 0.97 * base_med ? best : &cs[0];
}

static int by_time(const void *a, const void *b) {
  const candidate *x = *(candidate *const *)a, *y = *(candidate *const *)b;
  if ((x->ms < 0) != (y->ms < 0)) return x->ms < 0 ? 1 : -1;
  return x->ms < y->ms ? -1 : x->ms > y->ms;
}

/* The beam search; returns the winner (cs[0], the heuristics, when nothing beats it). */
static candidate *search(frit_program *p, int k, frit_uop *fixed_ast, candidate *cs, int *ncand, scratch *s,
                         int64_t work) {
  int beam = env_int("FRIT_TUNE_BEAM", 3, 1, MAX_BEAM), rounds = env_int("FRIT_TUNE_ROUNDS", 3, 0, 16);
  double budget_ms = 1000.0 * env_int("FRIT_TUNE_SECONDS", 60, 1, 86400);
  bool log = getenv("FRIT_TUNE_LOG") && *getenv("FRIT_TUNE_LOG") && strcmp(getenv("FRIT_TUNE_LOG"), "0");
  int64_t t0 = frit_rt_now_ns();
  int n = 1;
  memset(&cs[0], 0, sizeof cs[0]);
  cs[0].same_as = -1;
  run_round(p, k, fixed_ast, cs, 0, 1, s, work, log);
  if (cs[0].ms < 0) return *ncand = 1, &cs[0];
  candidate *front[MAX_BEAM] = {&cs[0]};
  int nfront = 1;
  for (int r = 0; r < rounds && (double)(frit_rt_now_ns() - t0) / 1e6 < budget_ms; r++) {
    int from = n;
    for (int b = 0; b < nfront; b++) {
      frit_cg_choices next[32];
      int nn = neighbours(&front[b]->ch, p->threads, next);
      for (int i = 0; i < nn && n < MAX_CANDIDATES; i++) {
        bool seen = false;
        for (int j = 0; j < n && !seen; j++) seen = choices_equal(&cs[j].ch, &next[i]);
        if (seen) continue;
        memset(&cs[n], 0, sizeof cs[n]);
        cs[n].ch = next[i];
        cs[n++].same_as = -1;
      }
    }
    if (n == from) break;
    run_round(p, k, fixed_ast, cs, from, n, s, work, log);
    /* the next beam: the fastest distinct codes among all candidates so far */
    candidate *order[MAX_CANDIDATES];
    for (int i = 0; i < n; i++) order[i] = &cs[i];
    qsort(order, (size_t)n, sizeof *order, by_time);
    candidate *old_best = front[0];
    nfront = 0;
    for (int i = 0; i < n && nfront < beam; i++)
      if (order[i]->ms >= 0 && order[i]->same_as < 0) front[nfront++] = order[i];
    if (front[0] == old_best && r > 0) break; /* no better code this round */
  }
  *ncand = 0;
  for (int i = 0; i < n; i++) *ncand += cs[i].same_as < 0 && cs[i].kernel;
  return confirm(p, cs, front, nfront, s, work, log);
}

frit_status frit_rt_tune_kernel(frit_program *p, int k, const uint8_t *fixed, int64_t work, frit_cg_kernel **out,
                                uint64_t *code_hash, frit_cg_choices *chosen, frit_rt_tune_info *info) {
  frit_ctx *ctx = p->ctx;
  const frit_schedule *sc = p->c->sched;
  const frit_sched_kernel *sk = &sc->kernels[k];
  *out = NULL;
  *code_hash = 0;
  memset(chosen, 0, sizeof *chosen);
  memset(info, 0, sizeof *info);
  frit_cg_program *base = frit_codegen_generate_fixed(ctx, sk->ast, sk->name, sc->vars, sc->nvars, p->varvals, fixed,
                                                      sk->alias_mask, NULL);
  if (!base) return frit_last_status(ctx) ? frit_last_status(ctx) : FRIT_ERR_INVALID;
  char fp[512], path[4400];
  uint64_t key = tune_key(p, base, fp, sizeof fp);
  bool have_path = tune_path(p, key, path, sizeof path);
  bool force = forced(chosen);
  if (force || (have_path && read_tuning(path, chosen))) {
    info->source = force ? 3 : 1;
    frit_cg_program *cg = base;
    if (!choices_equal(chosen, &(frit_cg_choices){0})) {
      cg = frit_codegen_generate_fixed(ctx, sk->ast, sk->name, sc->vars, sc->nvars, p->varvals, fixed, sk->alias_mask,
                                       chosen);
      if (!cg) return frit_last_status(ctx);
    }
    frit_status st = frit_codegen_compile(ctx, cg, &p->cfg);
    if (st != FRIT_OK) return st;
    *out = &cg->kernels[0];
    *code_hash = cg->hash;
    return FRIT_OK;
  }
  if (!frit_rt_tune_on() || sk->structured) {
    /* no tuning: with sizes fixed, base is the heuristics' variant (compiled here rather than
     * generated again by the caller); with none fixed the program's own code serves (*out NULL) */
    bool any = false;
    for (int v = 0; v < sc->nvars && !any; v++) any = fixed[v] != 0;
    if (!any) return FRIT_OK;
    frit_status st = frit_codegen_compile(ctx, base, &p->cfg);
    if (st == FRIT_OK) *out = &base->kernels[0], *code_hash = base->hash;
    return st;
  }
  /* the search: on the kernel as base fixed it (the same substitution, rebuilt) */
  frit_uop *fixed_ast = base->kernels[0].ast;
  scratch s = {0};
  candidate *cs = calloc(MAX_CANDIDATES, sizeof *cs);
  frit_status st = FRIT_OK;
  if (!cs || !scratch_new(p, k, &s)) {
    st = frit_set_error(ctx, FRIT_ERR_NOMEM, "tune: out of memory for kernel %d (%s)", k, sk->name);
  } else {
    int n = 0;
    int64_t t0 = frit_rt_now_ns();
    candidate *best = search(p, k, fixed_ast, cs, &n, &s, work);
    if (best->kernel && best->ms >= 0) { /* else the heuristics' kernel failed: the normal path reports it */
      *out = best->kernel;
      *code_hash = best->hash;
      *chosen = best->ch;
      info->source = 2;
      info->default_ms = cs[0].ms;
      info->tuned_ms = best->ms;
      info->candidates = n;
      info->search_ms = (double)(frit_rt_now_ns() - t0) / 1e6;
      if (have_path) write_tuning(p, path, sk->name, best, &cs[0], n, fp);
    }
  }
  scratch_free(&s);
  free(cs);
  return st;
}

/* ---------- the stored tunings, for `frit tune --list/--clear` ---------- */

/* Calls fn on each <dir>/tune/<key>.txt; FRIT_OK when the folder does not exist. */
static frit_status each_tuning(frit_ctx *ctx, const char *cache_dir, frit_status (*fn)(frit_ctx *, const char *, void *),
                               void *arg) {
  if (!ctx) return FRIT_ERR_INVALID;
  char *def = NULL, dir[4096];
  if (!cache_dir) cache_dir = def = frit_cg_default_cache_dir();
  if (!cache_dir) return FRIT_OK;
  snprintf(dir, sizeof dir, "%s/tune", cache_dir);
  free(def);
  DIR *d = opendir(dir);
  if (!d) return errno == ENOENT ? FRIT_OK : frit_set_error(ctx, FRIT_ERR_RUNTIME, "tune: cannot open %s: %s", dir, strerror(errno));
  frit_status st = FRIT_OK;
  struct dirent *e;
  while ((e = readdir(d)) && st == FRIT_OK) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 4, ".txt") != 0) continue;
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    st = fn(ctx, path, arg);
  }
  closedir(d);
  return st;
}

static frit_status list_one(frit_ctx *ctx, const char *path, void *arg) {
  (void)ctx;
  FILE *f = fopen(path, "r"), *out = arg;
  char line[512], choices[256] = "", kernel[256] = "?", tuned[64] = "?", base[64] = "?", cands[32] = "?",
                  machine[256] = "?";
  struct {
    const char *key;
    char *dst;
    size_t cap;
  } fields[] = {{"choices: ", choices, sizeof choices}, {"kernel: ", kernel, sizeof kernel},
                {"tuned_ms: ", tuned, sizeof tuned},   {"default_ms: ", base, sizeof base},
                {"candidates: ", cands, sizeof cands}, {"machine: ", machine, sizeof machine}};
  while (f && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
      if (!strncmp(line, fields[i].key, strlen(fields[i].key)))
        snprintf(fields[i].dst, fields[i].cap, "%s", line + strlen(fields[i].key));
  }
  if (f) fclose(f);
  frit_cg_choices ch;
  if (!*choices || !frit_cg_choices_parse(choices, &ch))
    fprintf(out, "%s: unreadable (ignored)\n", path);
  else
    fprintf(out, "%s: %s (%s -> %s ms, %s candidates) on %s\n", kernel, choices, base, tuned, cands, machine);
  return FRIT_OK;
}

static frit_status clear_one(frit_ctx *ctx, const char *path, void *arg) {
  (void)arg;
  if (unlink(path) != 0 && errno != ENOENT)
    return frit_set_error(ctx, FRIT_ERR_RUNTIME, "tune: cannot remove %s: %s", path, strerror(errno));
  return FRIT_OK;
}

frit_status frit_tune_list(frit_ctx *ctx, const char *cache_dir, FILE *out) {
  if (ctx && !out) return frit_set_error(ctx, FRIT_ERR_INVALID, "tune_list: NULL output");
  return each_tuning(ctx, cache_dir, list_one, out);
}

/* The folder goes too: while it exists, every program looks tunings up. */
frit_status frit_tune_clear(frit_ctx *ctx, const char *cache_dir) {
  frit_status st = each_tuning(ctx, cache_dir, clear_one, NULL);
  char *def = NULL, dir[4096];
  if (st == FRIT_OK && (cache_dir || (cache_dir = def = frit_cg_default_cache_dir()))) {
    snprintf(dir, sizeof dir, "%s/tune", cache_dir);
    rmdir(dir); /* fails harmlessly when something else lives there */
  }
  free(def);
  return st;
}

