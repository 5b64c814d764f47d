/* Size-specialised kernel variants: a kernel compiled for symbolic sizes (default jit, eager ops)
 * is also compiled, when its work is large, with the sizes of the run fixed as constants, so that
 * tiling, unrolling and vectorisation see concrete extents. One program still means one schedule;
 * only the kernel functions differ, and a bounded table per kernel keeps the variants. */
#include <inttypes.h>

#include "ir/walk.h"
#include "runtime/runtime.h"

/* A kernel whose loop nest runs at least SPEC_NOW_WORK iterations is specialised on its first run
 * at a size: the generic code would take longer than the compile. Between SPEC_MIN_WORK and that,
 * on the second run at the same sizes (a loop or a repeated call), so one-off shapes never pay a
 * compile that costs more than they do. */
#define SPEC_MIN_WORK (INT64_C(1) << 20)
#define SPEC_NOW_WORK (INT64_C(1) << 26)
#define SPEC_MAX_VARIANTS 8
#define SPEC_MAX_VARS 16

typedef struct spec_variant {
  int64_t key[SPEC_MAX_VARS]; /* the fixed variables' values, in the kernel's order */
  frit_kernel_fn fn;          /* NULL: seen once, not compiled yet */
  int64_t extent;             /* the variant's g0 extent */
  uint64_t hash;              /* its code's hash: frit-<hash>.c in the cache directory */
  uint64_t last_use;
  bool used;
  bool alone;                 /* tuned to run on the calling thread */
  frit_cg_choices ch;         /* the autotuner's choices (zero: the heuristics) */
  frit_rt_tune_info tune;
} spec_variant;

struct frit_rt_spec {
  int state; /* 0 not looked at, 1 specialisable, 2 never (no fixed sizes, or generation failed) */
  int nfixed;
  int fixed[SPEC_MAX_VARS]; /* schedule var indices the kernel's code depends on */
  uint64_t clock;
  spec_variant v[SPEC_MAX_VARIANTS];
};

/* Which of the schedule's variables kernel k's AST mentions, host-loop indices left out: they
 * change every iteration, and a variant per iteration would compile without end. */
static void find_fixed(frit_program *p, int k, frit_rt_spec *sp) {
  const frit_schedule *s = p->c->sched;
  size_t n = 0;
  frit_uop **nodes = frit_walk_topo(s->kernels[k].ast, &n);
  sp->state = 2;
  if (!nodes) return;
  sp->nfixed = 0;
  for (size_t i = 0; i < n; i++) {
    if (nodes[i]->op != FRIT_OP_DEFINE_VAR) continue;
    for (int v = 0; v < s->nvars; v++) {
      if (s->vars[v] != nodes[i] || p->is_ivar[v]) continue;
      if (sp->nfixed == SPEC_MAX_VARS) goto out;
      sp->fixed[sp->nfixed++] = v;
    }
  }
  /* a kernel of static sizes has a variant only when a tuning may replace its code */
  if (sp->nfixed > 0 || frit_rt_tune_lookups(p)) sp->state = 1;
out:
  free(nodes);
}

static frit_status build_variant(frit_program *p, int k, frit_rt_spec *sp, spec_variant *var, int64_t work) {
  frit_ctx *ctx = p->ctx;
  const frit_schedule *s = p->c->sched;
  uint8_t fixed[256] = {0};
  if (s->nvars > 256) return frit_set_error(ctx, FRIT_ERR_INVALID, "specialise: %d variables", s->nvars);
  for (int j = 0; j < sp->nfixed; j++) fixed[sp->fixed[j]] = 1;
  frit_cg_kernel *K = NULL;
  uint64_t hash = 0;
  if (frit_rt_tune_lookups(p)) {
    frit_status st = frit_rt_tune_kernel(p, k, fixed, work, &K, &hash, &var->ch, &var->tune);
    if (st != FRIT_OK) return st;
  }
  if (!K && sp->nfixed == 0) {
    /* static sizes, no tuning: the program's own code */
    K = &p->c->cg->kernels[k];
    hash = p->c->cg->hash;
  } else if (!K) {
    frit_cg_program *cg = frit_codegen_generate_fixed(ctx, s->kernels[k].ast, s->kernels[k].name, s->vars, s->nvars,
                                                      p->varvals, fixed, s->kernels[k].alias_mask, NULL);
    if (!cg) return frit_last_status(ctx) ? frit_last_status(ctx) : FRIT_ERR_INVALID;
    frit_status st = frit_codegen_compile(ctx, cg, &p->cfg);
    if (st != FRIT_OK) return st;
    K = &cg->kernels[0];
    hash = cg->hash;
  }
  frit_status st = frit_eval_int_expr(ctx, K->g0_extent, p->binds, s->nvars, &var->extent);
  if (st != FRIT_OK) return st;
  var->fn = K->fn;
  var->hash = hash;
  var->alone = var->ch.threads == 1;
  return FRIT_OK;
}

frit_status frit_rt_specialised(frit_program *p, int k, int64_t work, frit_kernel_fn *fn, int64_t *extent,
                                bool *have, bool *alone) {
  frit_rt_compiled *c = p->c;
  *have = false;
  *alone = false;
  if (p->specialise == 0 || c->interpret) return FRIT_OK;
  if (p->specialise == 2) work = INT64_MAX;
  /* unknown (a loop bounded by a kernel's own variable, e.g. the sort network's stages): maybe
   * little work, so a variant is compiled on the second run at the same sizes, not the first */
  if (work < 0) work = SPEC_MIN_WORK;
  if (work < SPEC_MIN_WORK) return FRIT_OK;
  if (!c->spec) {
    int nk = c->sched->nkernels;
    c->spec = frit_arena_alloc(&p->ctx->arena, (size_t)nk * sizeof *c->spec);
    if (!c->spec) return FRIT_OK;
    memset(c->spec, 0, (size_t)nk * sizeof *c->spec);
  }
  frit_rt_spec *sp = &c->spec[k];
  if (sp->state == 0) find_fixed(p, k, sp);
  if (sp->state != 1) return FRIT_OK;
  int64_t key[SPEC_MAX_VARS];
  for (int j = 0; j < sp->nfixed; j++) key[j] = p->varvals[sp->fixed[j]];
  spec_variant *var = NULL, *oldest = &sp->v[0];
  for (int i = 0; i < SPEC_MAX_VARIANTS && !var; i++) {
    spec_variant *v = &sp->v[i];
    if (v->used && !memcmp(v->key, key, (size_t)sp->nfixed * sizeof *key)) var = v;
    else if (!v->used || (oldest->used && v->last_use < oldest->last_use)) oldest = v;
  }
  sp->clock++;
  if (!var) {
    /* a new size: remember it (evicting the least recently used), compile now only when large */
    var = oldest;
    memset(var, 0, sizeof *var);
    memcpy(var->key, key, (size_t)sp->nfixed * sizeof *key);
    var->used = true;
    var->last_use = sp->clock;
    if (work < SPEC_NOW_WORK) return FRIT_OK;
  }
  var->last_use = sp->clock;
  if (!var->fn && build_variant(p, k, sp, var, work) != FRIT_OK) {
    /* by default the generic code runs on: a kernel the backend cannot specialise is no error;
     * FRIT_SPECIALISE=always (the tests) reports it */
    if (p->specialise == 2) return frit_last_status(p->ctx);
    frit_clear_error(p->ctx);
    sp->state = 2;
    return FRIT_OK;
  }
  *fn = var->fn;
  *extent = var->extent;
  *alone = var->alone;
  *have = true;
  return FRIT_OK;
}

void frit_rt_spec_print(const frit_program *p, FILE *out) {
  const frit_rt_compiled *c = p->c;
  if (!c->spec) return;
  const frit_schedule *s = c->sched;
  for (int k = 0; k < s->nkernels; k++) {
    const frit_rt_spec *sp = &c->spec[k];
    for (int i = 0; i < SPEC_MAX_VARIANTS; i++) {
      const spec_variant *v = &sp->v[i];
      if (!v->used || !v->fn) continue;
      fprintf(out, "kernel %d: specialised for", k);
      for (int j = 0; j < sp->nfixed; j++)
        fprintf(out, "%s %s=%" PRId64, j ? "," : "", (const char *)s->vars[sp->fixed[j]]->arg.blob, v->key[j]);
      if (!sp->nfixed) fprintf(out, " its static sizes");
      char ch[256];
      frit_cg_choices_format(&v->ch, ch, sizeof ch);
      if (v->tune.source == 2)
        fprintf(out, ", tuned now: %s (%.3f ms, heuristics %.3f ms, %d candidates in %.0f ms)", ch, v->tune.tuned_ms,
                v->tune.default_ms, v->tune.candidates, v->tune.search_ms);
      else if (v->tune.source == 1)
        fprintf(out, ", tuned earlier: %s", ch);
      else if (v->tune.source == 3)
        fprintf(out, ", forced: %s", ch);
      fprintf(out, " (code %016" PRIx64 ")\n", v->hash);
    }
  }
}
