/* frit_compile: the whole pipeline in one place, each pass followed by the verifier, plus the
 * per-ctx compile cache that lets an identical output list skip it. */
#include <stdio.h>
#include <unistd.h>

#include "ir/walk.h"
#include "runtime/profile.h"
#include "runtime/runtime.h"
#include "backend/device.h"

/* ---------- the compile cache ---------- */

/* Compiled pipelines of one ctx. Found by scanning the ctx's owned objects for its destructor,
 * so the core context needs no field for it. The entries live in the ctx arena. */
typedef struct rt_cache {
  frit_rt_compiled **items;
  size_t n, cap;
  frit_rt_stats stats;
} rt_cache;

static void rt_cache_destroy(void *ptr) {
  rt_cache *c = ptr;
  free(c->items);
  free(c);
}

static rt_cache *rt_cache_get(frit_ctx *ctx, bool create) {
  for (size_t i = 0; i < ctx->owned_count; i++)
    if (ctx->owned[i].destroy == rt_cache_destroy) return ctx->owned[i].ptr;
  if (!create) return NULL;
  rt_cache *c = calloc(1, sizeof *c);
  if (!c || !frit_ctx_own(ctx, c, rt_cache_destroy)) return NULL;
  return c;
}

frit_rt_stats frit_rt_stats_get(frit_ctx *ctx) {
  rt_cache *c = rt_cache_get(ctx, false);
  frit_rt_stats none = {0, 0};
  return c ? c->stats : none;
}

static bool same_str(const char *a, const char *b) {
  return a == b || (a && b && !strcmp(a, b));
}

static frit_rt_compiled *rt_cache_find(rt_cache *c, frit_uop *const *outs, int n, int no_fusion,
                                       int interpret, int bounds, const frit_cg_config *cfg, frit_device *dev) {
  for (size_t i = 0; i < c->n; i++) {
    frit_rt_compiled *e = c->items[i];
    if (e->noutputs != n || e->no_fusion != no_fusion || e->interpret != interpret || e->bounds != bounds) continue;
    if (e->dev != dev) continue;
    if (memcmp(e->outputs, outs, (size_t)n * sizeof *outs)) continue;
    if (!interpret && (!same_str(e->cc, cfg->cc) || !same_str(e->cflags, cfg->cflags))) continue;
    return e;
  }
  return NULL;
}

static bool rt_cache_add(rt_cache *c, frit_rt_compiled *e) {
  if (c->n == c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 8;
    frit_rt_compiled **items = realloc(c->items, cap * sizeof *items);
    if (!items) return false;
    c->items = items;
    c->cap = cap;
  }
  c->items[c->n++] = e;
  return true;
}

/* ---------- configuration ---------- */

int frit_rt_default_threads(const frit_compile_opts *opts) {
  int n = opts ? opts->threads : 0;
  if (n <= 0) {
    const char *env = getenv("FRIT_THREADS");
    if (env && *env) n = atoi(env);
  }
  if (n <= 0) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    n = cpus > 0 ? (int)cpus : 1;
  }
  return n > 1024 ? 1024 : n;
}

/* ---------- the pipeline ---------- */

/* Re-labels the verifier's message with the stage that produced the broken graph. */
static frit_status stage_failed(frit_ctx *ctx, const char *stage) {
  char msg[sizeof ctx->errmsg];
  snprintf(msg, sizeof msg, "%s", frit_error(ctx));
  frit_status st = frit_last_status(ctx);
  return frit_set_error(ctx, st == FRIT_OK ? FRIT_ERR_INVALID : st, "compile: %s: %s", stage, msg);
}

static char *arena_strdup(frit_ctx *ctx, const char *s) {
  size_t n = strlen(s) + 1;
  char *d = frit_arena_alloc(&ctx->arena, n);
  if (d) memcpy(d, s, n);
  return d;
}

static int cmp_axis(const void *a, const void *b) {
  const frit_uop *x = *(frit_uop *const *)a, *y = *(frit_uop *const *)b;
  return (x->arg.i0 > y->arg.i0) - (x->arg.i0 < y->arg.i0);
}

/* Per kernel: the RANGE extents and loop sets (work estimate) and the GLOBAL sizes as text,
 * "(n, 64)". */
static frit_status kernel_metadata(frit_ctx *ctx, frit_rt_compiled *c, int k) {
  size_t n;
  frit_uop **nodes = frit_walk_topo(c->sched->kernels[k].ast, &n);
  if (!nodes) return frit_set_error(ctx, FRIT_ERR_NOMEM, "compile: out of memory");
  int nr = 0, ng = 0;
  for (size_t i = 0; i < n; i++) nr += nodes[i]->op == FRIT_OP_RANGE;
  frit_uop **ends = frit_arena_alloc(&ctx->arena, (size_t)(nr ? nr : 1) * sizeof *ends);
  frit_uop **glob = malloc((size_t)(nr ? nr : 1) * sizeof *glob);
  if (!ends || !glob) {
    free(nodes);
    free(glob);
    return frit_set_error(ctx, FRIT_ERR_NOMEM, "compile: out of memory");
  }
  nr = 0;
  for (size_t i = 0; i < n; i++) {
    if (nodes[i]->op != FRIT_OP_RANGE) continue;
    ends[nr++] = nodes[i]->src[0];
    if (nodes[i]->arg.i1 == FRIT_AXIS_GLOBAL) glob[ng++] = nodes[i];
  }
  free(nodes);
  qsort(glob, (size_t)ng, sizeof *glob, cmp_axis);
  size_t cap = 64, len = 0;
  char *text = malloc(cap);
  bool ok = text != NULL;
  if (ok) len = (size_t)snprintf(text, cap, "(");
  for (int g = 0; ok && g < ng; g++) {
    const char *e = frit_render_c_expr(ctx, glob[g]->src[0]);
    if (!e) e = "?";
    size_t need = len + strlen(e) + 8;
    if (need > cap) {
      char *t = realloc(text, cap = 2 * need);
      if (!t) {
        ok = false;
        break;
      }
      text = t;
    }
    len += (size_t)snprintf(text + len, cap - len, "%s%s", g ? ", " : "", e);
  }
  if (ok) snprintf(text + len, cap - len, ")");
  free(glob);
  c->range_ends[k] = ends;
  c->nranges[k] = nr;
  uint64_t sets[FRIT_RT_WORK_SETS];
  int nset = frit_rt_work_sets(c->sched->kernels[k].ast, sets);
  c->nwork_sets[k] = nset;
  c->work_sets[k] = nset > 0 ? frit_arena_alloc(&ctx->arena, (size_t)nset * sizeof *sets) : NULL;
  if (nset > 0 && c->work_sets[k]) memcpy(c->work_sets[k], sets, (size_t)nset * sizeof *sets);
  else if (nset > 0) c->nwork_sets[k] = -1;
  c->launch[k] = ok ? arena_strdup(ctx, text) : NULL;
  free(text);
  if (!c->launch[k]) return frit_set_error(ctx, FRIT_ERR_NOMEM, "compile: out of memory");
  return FRIT_OK;
}

static frit_status generate(frit_ctx *ctx, frit_rt_compiled *c) {
  const frit_schedule *s = c->sched;
  frit_uop **asts = malloc((size_t)(s->nkernels ? s->nkernels : 1) * sizeof *asts);
  const char **names = malloc((size_t)(s->nkernels ? s->nkernels : 1) * sizeof *names);
  if (!asts || !names) {
    free(asts);
    free(names);
    return frit_set_error(ctx, FRIT_ERR_NOMEM, "compile: out of memory");
  }
  uint64_t *masks = malloc((size_t)(s->nkernels ? s->nkernels : 1) * sizeof *masks);
  if (!masks) {
    free(asts);
    free(names);
    return frit_set_error(ctx, FRIT_ERR_NOMEM, "compile: out of memory");
  }
  for (int k = 0; k < s->nkernels; k++) {
    asts[k] = s->kernels[k].ast;
    names[k] = s->kernels[k].name;
    masks[k] = s->kernels[k].alias_mask;
  }
  c->cg = frit_codegen_generate_for(ctx, asts, names, s->nkernels, s->vars, s->nvars, masks,
                                    c->dev ? c->dev->ops->dialect : FRIT_DIALECT_C);
  free(asts);
  free(names);
  free(masks);
  if (!c->cg) return frit_last_status(ctx) ? frit_last_status(ctx) : FRIT_ERR_INVALID;
  /* 4b. the kernels after axis choices are still well-formed IR */
  for (int k = 0; k < c->cg->nkernels; k++) {
    if (frit_verify(ctx, c->cg->kernels[k].opt) != FRIT_OK) {
      char stage[96];
      snprintf(stage, sizeof stage, "after codegen, kernel %d (%s)", k, c->cg->kernels[k].name);
      c->cg = NULL;
      return stage_failed(ctx, stage);
    }
  }
  return FRIT_OK;
}

frit_status frit_rt_ensure_codegen(frit_ctx *ctx, frit_rt_compiled *c) {
  return c->cg ? FRIT_OK : generate(ctx, c);
}

/* The passes in order. Each hands the next a graph the verifier has accepted. */
static bool check_cuda(void) {
  const char *e = getenv("FRIT_CHECK_CUDA");
  return e && strcmp(e, "1") == 0;
}

static frit_status check_cuda_program(frit_ctx *ctx, frit_rt_compiled *c) {
  const frit_schedule *s = c->sched;
  int nk = s->nkernels;
  frit_uop **asts = malloc((size_t)nk * sizeof *asts);
  const char **names = malloc((size_t)nk * sizeof *names);
  uint64_t *masks = malloc((size_t)nk * sizeof *masks);
  frit_status st = FRIT_OK;
  if (!asts || !names || !masks) st = frit_set_error(ctx, FRIT_ERR_NOMEM, "compile: out of memory");
  for (int k = 0; st == FRIT_OK && k < nk; k++)
    asts[k] = s->kernels[k].ast, names[k] = s->kernels[k].name, masks[k] = s->kernels[k].alias_mask;
  if (st == FRIT_OK) {
    frit_cg_program *cu = frit_codegen_generate_for(ctx, asts, names, nk, s->vars, s->nvars, masks, FRIT_DIALECT_CUDA);
    if (cu) st = frit_cuda_check(ctx, cu->source);
    else if (strstr(frit_error(ctx), "complex dtypes")) frit_clear_error(ctx);
    else st = frit_last_status(ctx);
  }
  free(asts), free(names), free(masks);
  return st;
}

/* Builds the program's kernels on its device; the device keeps the handles until it closes. */
static frit_status build_on_device(frit_ctx *ctx, frit_rt_compiled *c) {
  int nk = c->cg->nkernels, n = 0;
  /* per kernel its plain rendering, then the work-group and tiled ones after all of them */
  const char **fns = malloc((size_t)(3 * nk + 1) * sizeof *fns);
  void **handles = malloc((size_t)(3 * nk + 1) * sizeof *handles);
  size_t per = (size_t)(nk ? nk : 1) * sizeof(void *);
  c->dev_kernels = frit_arena_alloc(&ctx->arena, per);
  c->dev_kernels_group = frit_arena_alloc(&ctx->arena, per);
  c->dev_kernels_tile = frit_arena_alloc(&ctx->arena, per);
  if (!fns || !handles || !c->dev_kernels || !c->dev_kernels_group || !c->dev_kernels_tile) {
    free(fns), free(handles);
    return frit_set_error(ctx, FRIT_ERR_NOMEM, "compile: out of memory");
  }
  for (int k = 0; k < nk; k++) fns[n++] = c->cg->kernels[k].fn_name;
  for (int k = 0; k < nk; k++)
    if (c->cg->kernels[k].fn_name_group) fns[n++] = c->cg->kernels[k].fn_name_group;
  for (int k = 0; k < nk; k++)
    if (c->cg->kernels[k].fn_name_tile) fns[n++] = c->cg->kernels[k].fn_name_tile;
  frit_status st = n ? frit_device_build(ctx, c->dev, c->cg->source, n, fns, handles) : FRIT_OK;
  int g = nk;
  for (int k = 0; st == FRIT_OK && k < nk; k++) {
    c->dev_kernels[k] = handles[k];
    c->dev_kernels_group[k] = c->cg->kernels[k].fn_name_group ? handles[g++] : NULL;
  }
  for (int k = 0; st == FRIT_OK && k < nk; k++) c->dev_kernels_tile[k] = c->cg->kernels[k].fn_name_tile ? handles[g++] : NULL;
  free(fns), free(handles);
  return st;
}

/* A compile pass on the profile's trace (no clock read when no profile records). */
static int64_t pass_begin(void) { return frit_rt_profiling() ? frit_rt_now_ns() : 0; }
static void pass_end(const char *name, int64_t t0) {
  if (t0 && frit_rt_profiling()) frit_rt_prof_event(name, "compile", t0, frit_rt_now_ns());
}

static frit_rt_compiled *run_pipeline(frit_ctx *ctx, frit_uop *const *outs, int n, const frit_cg_config *cfg,
                                      int no_fusion, int interpret, int bounds, frit_device *dev) {
  frit_rt_compiled *c = frit_arena_alloc(&ctx->arena, sizeof *c);
  if (!c) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "compile: out of memory");
    return NULL;
  }
  memset(c, 0, sizeof *c);
  c->noutputs = n;
  c->no_fusion = no_fusion;
  c->interpret = interpret;
  c->bounds = bounds;
  c->cc = cfg->cc;
  c->cflags = cfg->cflags;
  c->dev = dev;

  /* 1. the tensor graph, as the frontend built it */
  int64_t t = pass_begin();
  for (int i = 0; i < n; i++) {
    if (frit_verify(ctx, outs[i]) != FRIT_OK) {
      char stage[64];
      snprintf(stage, sizeof stage, "tensor graph of output %d", i);
      stage_failed(ctx, stage);
      return NULL;
    }
  }
  pass_end("verify tensor graph", t);
  /* 2. schedule: realize decisions, rangeify, kernels, memory plan */
  t = pass_begin();
  c->sched = frit_schedule_build_bounds(ctx, outs, n, no_fusion, bounds);
  if (!c->sched) return NULL;
  pass_end("schedule", t);
  t = pass_begin();
  /* 3. each kernel AST is well-formed loop-level IR */
  for (int k = 0; k < c->sched->nkernels; k++) {
    if (frit_verify(ctx, c->sched->kernels[k].ast) != FRIT_OK) {
      char stage[96];
      snprintf(stage, sizeof stage, "after scheduling, kernel %d (%s)", k, c->sched->kernels[k].name);
      stage_failed(ctx, stage);
      return NULL;
    }
  }
  pass_end("verify kernels", t);
  /* 4. codegen (axis choices, linearise, render C), 5. compile and load */
  if (!interpret) {
    t = pass_begin();
    if (generate(ctx, c) != FRIT_OK) return NULL;
    pass_end("codegen", t);
    t = pass_begin();
    if (dev ? build_on_device(ctx, c) != FRIT_OK : frit_codegen_compile(ctx, c->cg, cfg) != FRIT_OK) return NULL;
    /* "C compiler" also when the code came from the disk cache (then it is a dlopen) */
    pass_end(dev ? "device build" : c->cg->cache_hit ? "load cached code" : "C compiler", t);
  }
  /* 5b. FRIT_CHECK_CUDA=1: the same kernels in the CUDA dialect must compile to PTX and assemble
   * (CI has no GPU; docs/devices.md). Programs with complex values are refused there by name. */
  if (!interpret && c->sched->nkernels > 0 && check_cuda() && check_cuda_program(ctx, c) != FRIT_OK) return NULL;
  /* 6. what the runtime needs per kernel */
  int nk = c->sched->nkernels ? c->sched->nkernels : 1;
  c->outputs = frit_arena_alloc(&ctx->arena, (size_t)n * sizeof *c->outputs);
  c->range_ends = frit_arena_alloc(&ctx->arena, (size_t)nk * sizeof *c->range_ends);
  c->nranges = frit_arena_alloc(&ctx->arena, (size_t)nk * sizeof *c->nranges);
  c->launch = frit_arena_alloc(&ctx->arena, (size_t)nk * sizeof *c->launch);
  c->work_sets = frit_arena_alloc(&ctx->arena, (size_t)nk * sizeof *c->work_sets);
  c->nwork_sets = frit_arena_alloc(&ctx->arena, (size_t)nk * sizeof *c->nwork_sets);
  if (!c->outputs || !c->range_ends || !c->nranges || !c->launch || !c->work_sets || !c->nwork_sets) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "compile: out of memory");
    return NULL;
  }
  memcpy(c->outputs, outs, (size_t)n * sizeof *outs);
  for (int k = 0; k < c->sched->nkernels; k++)
    if (kernel_metadata(ctx, c, k) != FRIT_OK) return NULL;
  return c;
}

frit_program *frit_compile(frit_ctx *ctx, frit_tensor *const *outputs, int noutputs,
                           const frit_compile_opts *opts) {
  if (!ctx) return NULL;
  if (!outputs || noutputs < 1) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "compile: need at least one output (got %d)", noutputs);
    return NULL;
  }
  for (int i = 0; i < noutputs; i++) {
    if (!outputs[i]) {
      /* a NULL output is the result of an earlier failed call: keep that call's message */
      if (frit_last_status(ctx) == FRIT_OK)
        frit_set_error(ctx, FRIT_ERR_INVALID, "compile: output %d is NULL", i);
      return NULL;
    }
  }
  /* a frit_tensor is its tensor-level node */
  frit_uop *const *outs = (frit_uop *const *)outputs;
  frit_cg_config cfg;
  if (frit_codegen_config(ctx, opts, &cfg) != FRIT_OK) return NULL;
  int no_fusion = opts ? opts->no_fusion != 0 : 0;
  int interpret = opts ? opts->interpret != 0 : 0;
  int bounds = opts ? opts->bounds : FRIT_BOUNDS_CLAMP;
  if (bounds < FRIT_BOUNDS_CLAMP || bounds > FRIT_BOUNDS_UNCHECKED) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "compile: unknown bounds policy %d (0 clamp, 1 check, 2 unchecked)", bounds);
    return NULL;
  }
  /* $FRIT_DEVICE moves compiled programs only: the interpreter is the host's reference */
  const char *devname = opts && opts->device ? opts->device : interpret ? NULL : getenv("FRIT_DEVICE");
  frit_device *dev = NULL;
  if (!frit_device_is_host(devname)) {
    if (interpret) {
      frit_set_error(ctx, FRIT_ERR_INVALID, "compile: interpret runs on the host; it cannot take device '%s'", devname);
      return NULL;
    }
    dev = frit_device_get(ctx, devname);
    if (!dev) return NULL;
  }
  rt_cache *cache = rt_cache_get(ctx, true);
  if (!cache) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "compile: out of memory");
    return NULL;
  }
  frit_rt_compiled *c = rt_cache_find(cache, outs, noutputs, no_fusion, interpret, bounds, &cfg, dev);
  if (c) {
    cache->stats.hits++;
  } else {
    cache->stats.compiles++;
    int64_t t = pass_begin();
    c = run_pipeline(ctx, outs, noutputs, &cfg, no_fusion, interpret, bounds, dev);
    pass_end("compile", t); /* a failed compile too: its time was spent */
    if (!c) return NULL;
    if (!rt_cache_add(cache, c)) {
      frit_set_error(ctx, FRIT_ERR_NOMEM, "compile: out of memory");
      return NULL;
    }
  }
  return frit_rt_program_new(ctx, c, &cfg, frit_rt_default_threads(opts));
}
