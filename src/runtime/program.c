/* Compiled programs: binding variables, sizing and planning memory, executing the step list
 * (kernels on the thread pool or in the reference interpreter, host loops, the bounds-check
 * error buffer), and the queries and printers of the API. */
#define _DEFAULT_SOURCE /* madvise's MADV_HUGEPAGE */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#include "runtime/profile.h"
#include "runtime/runtime.h"

#define now_ns frit_rt_now_ns

/* The FRIT_PROFILE table: kernels by time taken, with their share. */
static void profile_print(const frit_program *p) {
  const frit_schedule *s = p->c->sched;
  int64_t total = 0;
  for (int k = 0; k < s->nkernels; k++) total += p->prof_ns[k];
  if (!total) return;
  fprintf(stderr, "frit profile: %d kernels, %.3f ms in all\n", s->nkernels, total / 1e6);
  bool *done = calloc((size_t)s->nkernels, 1);
  for (int n = 0; done && n < s->nkernels; n++) {
    int best = -1;
    for (int k = 0; k < s->nkernels; k++)
      if (!done[k] && (best < 0 || p->prof_ns[k] > p->prof_ns[best])) best = k;
    done[best] = true;
    if (!p->prof_calls[best]) continue;
    fprintf(stderr, "  %6.2f%% %10.3f ms %8" PRId64 " calls %10.1f us/call  %s\n", 100.0 * p->prof_ns[best] / total,
            p->prof_ns[best] / 1e6, p->prof_calls[best], p->prof_ns[best] / 1e3 / p->prof_calls[best],
            s->kernels[best].name);
  }
  free(done);
}

/* ---------- lifetime ---------- */

static void program_destroy(void *ptr) {
  frit_program *p = ptr;
  if (p->prof_ns) profile_print(p);
  free(p->prof_ns), free(p->prof_calls);
  frit_pool_release(p->pool);
  free(p->arena);
  free(p->numel);
  free(p->offsets);
  free(p->varvals);
  free(p->bufptr);
  free(p->params);
  free(p->param_sizes);
  free(p->binds);
  free(p->donate), free(p->stage);
  free(p->loop_i), free(p->loop_end), free(p->loop_step), free(p->loop_stop), free(p->is_ivar);
  frit_rt_device_release(p);
  free(p->devoff), free(p->devoff0), free(p->param_off);
  free(p->pending); /* empty: every run waits for its collectives */
  free(p);
}

static void owned_noop(void *ptr) { (void)ptr; }

frit_program *frit_rt_program_new(frit_ctx *ctx, frit_rt_compiled *c, const frit_cg_config *cfg,
                                  int threads) {
  const frit_schedule *s = c->sched;
  frit_program *p = calloc(1, sizeof *p);
  if (!p) goto oom;
  p->ctx = ctx;
  p->c = c;
  p->cfg = *cfg;
  p->threads = threads;
  const char *spec = getenv("FRIT_SPECIALISE");
  p->specialise = !spec || !*spec ? 1 : !strcmp(spec, "0") ? 0 : !strcmp(spec, "always") ? 2 : 1;
  int maxp = 1;
  for (int k = 0; k < s->nkernels; k++)
    if (s->kernels[k].nparams > maxp) maxp = s->kernels[k].nparams;
  size_t nb = (size_t)(s->nbufs ? s->nbufs : 1), nv = (size_t)(s->nvars ? s->nvars : 1);
  p->numel = calloc(nb, sizeof *p->numel);
  p->offsets = calloc(nb, sizeof *p->offsets);
  p->bufptr = calloc(nb, sizeof *p->bufptr);
  p->varvals = calloc(nv, sizeof *p->varvals);
  p->binds = calloc(nv, sizeof *p->binds);
  p->params = calloc((size_t)maxp, sizeof *p->params);
  p->param_sizes = calloc((size_t)maxp, sizeof *p->param_sizes);
  size_t nl = (size_t)(s->nloops ? s->nloops : 1);
  p->loop_i = calloc(nl, sizeof *p->loop_i);
  p->loop_end = calloc(nl, sizeof *p->loop_end);
  p->loop_step = calloc(nl, sizeof *p->loop_step);
  p->loop_stop = calloc(nl, 1);
  p->is_ivar = calloc(nv, 1);
  if (c->dev) {
    p->devoff = calloc(nb, sizeof *p->devoff);
    p->devoff0 = calloc(nb, sizeof *p->devoff0);
    p->param_off = calloc((size_t)maxp, sizeof *p->param_off);
    if (!p->devoff || !p->devoff0 || !p->param_off) {
      program_destroy(p);
      goto oom;
    }
  }
  if (!p->numel || !p->offsets || !p->bufptr || !p->varvals || !p->binds || !p->params ||
      !p->param_sizes || !p->loop_i || !p->loop_end || !p->loop_step || !p->loop_stop || !p->is_ivar) {
    program_destroy(p);
    goto oom;
  }
  for (int l = 0; l < s->nloops; l++)
    if (s->loops[l].ivar >= 0) p->is_ivar[s->loops[l].ivar] = 1;
  if (frit_rt_profile_env()) {
    p->prof_ns = calloc((size_t)(s->nkernels ? s->nkernels : 1), sizeof *p->prof_ns);
    p->prof_calls = calloc((size_t)(s->nkernels ? s->nkernels : 1), sizeof *p->prof_calls);
  }
  if (!frit_ctx_own(ctx, p, program_destroy)) goto oom; /* it destroyed p */
  return p;
oom:
  frit_set_error(ctx, FRIT_ERR_NOMEM, "compile: out of memory");
  return NULL;
}

void frit_program_free(frit_program *p) {
  if (!p) return;
  frit_ctx *ctx = p->ctx;
  /* the ctx keeps a slot for every program; disarm it so that frit_ctx_free skips this one */
  for (size_t i = ctx->owned_count; i-- > 0;) {
    if (ctx->owned[i].ptr == p && ctx->owned[i].destroy == program_destroy) {
      ctx->owned[i].destroy = owned_noop;
      ctx->owned[i].ptr = NULL;
      break;
    }
  }
  /* drop disarmed slots at the end, so that compile/free cycles do not grow the list */
  while (ctx->owned_count > 0 && ctx->owned[ctx->owned_count - 1].destroy == owned_noop)
    ctx->owned_count--;
  program_destroy(p);
}

/* ---------- simple queries ---------- */

int frit_program_num_inputs(const frit_program *p) { return p ? p->c->sched->ninputs : 0; }
int frit_program_num_outputs(const frit_program *p) { return p ? p->c->sched->noutputs : 0; }
int frit_program_num_kernels(const frit_program *p) { return p ? p->c->sched->nkernels : 0; }

const char *frit_program_input_name(const frit_program *p, int i) {
  if (!p || i < 0 || i >= p->c->sched->ninputs) return NULL;
  const frit_sched_buf *b = &p->c->sched->bufs[p->c->sched->input_buf[i]];
  return b->tensor && b->tensor->arg.blob_kind == FRIT_BLOB_STR ? b->tensor->arg.blob : "";
}

static bool kernel_ok(const frit_program *p, int k) {
  return p && k >= 0 && k < p->c->sched->nkernels;
}
const char *frit_program_kernel_name(const frit_program *p, int k) {
  return kernel_ok(p, k) ? p->c->sched->kernels[k].name : NULL;
}
const char *frit_program_kernel_ops(const frit_program *p, int k) {
  return kernel_ok(p, k) ? p->c->sched->kernels[k].ops : NULL;
}
const char *frit_program_kernel_launch(const frit_program *p, int k) {
  return kernel_ok(p, k) ? p->c->launch[k] : NULL;
}

const char *frit_program_source(const frit_program *p) {
  if (!p || frit_rt_ensure_codegen(p->ctx, p->c) != FRIT_OK) return NULL;
  return p->c->cg->source;
}

/* ---------- binding and sizing ---------- */

/* Fills p->binds and p->varvals (schedule var order) from the caller's bindings. */
static frit_status bind_vars(frit_program *p, const frit_binding *vars, int nvars, const char *what) {
  const frit_schedule *s = p->c->sched;
  frit_ctx *ctx = p->ctx;
  if (nvars < 0 || (nvars > 0 && !vars))
    return frit_set_error(ctx, FRIT_ERR_INVALID, "%s: bad variable bindings (%d)", what, nvars);
  for (int i = 0; i < nvars; i++) {
    if (!vars[i].name) return frit_set_error(ctx, FRIT_ERR_INVALID, "%s: binding %d has no name", what, i);
    for (int j = 0; j < i; j++)
      if (!strcmp(vars[i].name, vars[j].name) && vars[i].value != vars[j].value)
        return frit_set_error(ctx, FRIT_ERR_INVALID, "%s: variable '%s' bound twice (%" PRId64
                              " and %" PRId64 ")", what, vars[i].name, vars[j].value, vars[i].value);
  }
  for (int v = 0; v < s->nvars; v++) {
    const frit_uop *dv = s->vars[v];
    const char *name = dv->arg.blob;
    if (p->is_ivar[v]) { /* a host loop's index: the runtime sets it */
      p->binds[v].name = name;
      p->binds[v].value = p->varvals[v] = 0;
      continue;
    }
    int found = -1;
    for (int i = 0; i < nvars && found < 0; i++)
      if (!strcmp(vars[i].name, name)) found = i;
    if (found < 0)
      return frit_set_error(ctx, FRIT_ERR_RUNTIME, "%s: variable '%s' is not bound (it sizes the "
                            "program's tensors; bounds %" PRId64 "..%" PRId64 ")", what, name,
                            dv->arg.i0, dv->arg.i1);
    int64_t val = vars[found].value;
    if (val < dv->arg.i0 || val > dv->arg.i1)
      return frit_set_error(ctx, FRIT_ERR_RUNTIME, "%s: variable '%s' = %" PRId64
                            " is outside its bounds %" PRId64 "..%" PRId64, what, name, val,
                            dv->arg.i0, dv->arg.i1);
    p->binds[v].name = name;
    p->binds[v].value = val;
    p->varvals[v] = val;
  }
  return FRIT_OK;
}

/* Evaluates every buffer's element count, rejecting shapes the bindings make negative. */
static frit_status size_buffers(frit_program *p, const char *what) {
  const frit_schedule *s = p->c->sched;
  for (int b = 0; b < s->nbufs; b++) {
    const frit_sched_buf *sb = &s->bufs[b];
    for (int d = 0; d < sb->ndim; d++) {
      int64_t v;
      frit_status st = frit_eval_int_expr(p->ctx, sb->dims[d], p->binds, s->nvars, &v);
      if (st != FRIT_OK) return st;
      if (v < 0) {
        const char *kind = sb->kind == FRIT_BUF_INPUT ? "input" : sb->kind == FRIT_BUF_OUTPUT ? "output" : "temporary";
        return frit_set_error(p->ctx, FRIT_ERR_RUNTIME, "%s: %s buffer %d has dim %d = %s = %" PRId64
                              " < 0 for these bindings", what, kind, b, d,
                              frit_render_c_expr(p->ctx, sb->dims[d]), v);
      }
    }
    frit_status st = frit_eval_int_expr(p->ctx, sb->numel, p->binds, s->nvars, &p->numel[b]);
    if (st != FRIT_OK) return st;
    if (p->numel[b] < 0)
      return frit_set_error(p->ctx, FRIT_ERR_RUNTIME, "%s: buffer %d has %" PRId64 " elements",
                            what, b, p->numel[b]);
  }
  return FRIT_OK;
}

/* An arena of several megabytes in transparent huge pages where the kernel allows it (its
 * "madvise" mode asks for the advice): a kernel striding across megabytes (a conv's patches read
 * a row of K at a time, 6 KB apart) otherwise takes a TLB miss at nearly every load. */
static void *alloc_arena(size_t cap) {
  const size_t huge = (size_t)2 << 20;
  if (cap < 2 * huge || getenv("FRIT_NO_HUGEPAGES")) return aligned_alloc(FRIT_ARENA_ALIGN, cap);
  cap = (cap + huge - 1) / huge * huge;
  void *a = aligned_alloc(huge, cap);
#ifdef MADV_HUGEPAGE
  if (a) (void)madvise(a, cap, MADV_HUGEPAGE);
#endif
  return a;
}

static frit_status grow_arena(frit_program *p, int64_t bytes) {
  if (bytes < 0) return frit_set_error(p->ctx, FRIT_ERR_RUNTIME, "run: negative arena size");
  if ((uint64_t)bytes <= p->arena_cap) return FRIT_OK;
  /* grow geometrically so that a slowly increasing size reallocates rarely */
  uint64_t cap = p->arena_cap * 2 > (uint64_t)bytes ? p->arena_cap * 2 : (uint64_t)bytes;
  cap = (cap + FRIT_ARENA_ALIGN - 1) / FRIT_ARENA_ALIGN * FRIT_ARENA_ALIGN;
  if (cap > SIZE_MAX / 2)
    return frit_set_error(p->ctx, FRIT_ERR_NOMEM, "run: arena of %" PRIu64 " bytes is too large", cap);
  void *a = alloc_arena((size_t)cap);
  if (!a) return frit_set_error(p->ctx, FRIT_ERR_NOMEM, "run: cannot allocate %" PRIu64 " bytes", cap);
  free(p->arena);
  p->arena = a;
  p->arena_cap = (size_t)cap;
  return FRIT_OK;
}

uint64_t frit_rt_kernel_extents(frit_program *p, int k, int64_t ext[64]) {
  uint64_t unknown = 0;
  for (int r = 0; r < p->c->nranges[k] && r < 64; r++)
    if (frit_eval_int_expr(p->ctx, p->c->range_ends[k][r], p->binds, p->c->sched->nvars, &ext[r]) != FRIT_OK) {
      frit_clear_error(p->ctx);
      unknown |= (uint64_t)1 << r;
      ext[r] = INT64_MAX;
    } else if (ext[r] < 0) {
      ext[r] = 0;
    }
  return unknown;
}

/* Iterations of kernel k's loops (saturating), the parallelism and specialisation decisions'
 * input: over each of its maximal loop sets the product of those loops' trip counts, summed (two
 * loops one after the other in a body add, as they run); without the sets, the product of all.
 * A set with a loop of no trips counts 0 (a kernel of no points does nothing); else a loop whose
 * trip count the bindings do not give (a kernel's own variable) makes it big, and *unknown is
 * set (NULL: not asked). */
int64_t frit_rt_kernel_work(frit_program *p, int k, bool *unknown) {
  int nr = p->c->nranges[k], nset = nr > 64 ? -1 : p->c->nwork_sets[k];
  int64_t ext[64], all = 1;
  uint64_t unknown_bits = frit_rt_kernel_extents(p, k, ext);
  bool any_unknown = unknown_bits != 0;
  if (unknown) *unknown = false;
  for (int r = 0; r < nr; r++) {
    int64_t e;
    if (r < 64) {
      e = ext[r];
    } else if (frit_eval_int_expr(p->ctx, p->c->range_ends[k][r], p->binds, p->c->sched->nvars, &e) != FRIT_OK) {
      frit_clear_error(p->ctx); /* past the loops that ext holds: a nest that deep has no sets */
      any_unknown = true;
      e = INT64_MAX;
    } else if (e < 0) {
      e = 0;
    }
    all = e && all > INT64_MAX / e ? INT64_MAX : all * e;
  }
  if (nset <= 0) {
    if (any_unknown && all && unknown) *unknown = true;
    return all;
  }
  int64_t work = 0;
  for (int i = 0; i < nset; i++) {
    uint64_t set = p->c->work_sets[k][i];
    int64_t w = 1;
    for (int r = 0; r < nr && w; r++)
      if (set >> r & 1) w = ext[r] && w > INT64_MAX / ext[r] ? INT64_MAX : w * ext[r];
    if (w && (set & unknown_bits) && unknown) *unknown = true;
    work = work > INT64_MAX - w ? INT64_MAX : work + w;
  }
  return work;
}

/* ---------- executing the step list ---------- */

static frit_status run_kernel(frit_program *p, int k) {
  if (p->npending) {
    frit_status st = frit_rt_collective_settle(p, k);
    if (st != FRIT_OK) return st;
  }
  if (frit_rt_collective_runs(p, k)) return frit_rt_collective(p, k);
  if (p->c->dev) return frit_rt_device_kernel(p, k);
  frit_ctx *ctx = p->ctx;
  const frit_rt_compiled *c = p->c;
  const frit_schedule *s = c->sched;
  const frit_sched_kernel *sk = &s->kernels[k];
  for (int i = 0; i < sk->nparams; i++) {
    p->params[i] = p->bufptr[sk->param_buf[i]];
    p->param_sizes[i] = (size_t)p->numel[sk->param_buf[i]];
  }
  if (c->interpret) {
    frit_status st = frit_interpret(ctx, sk->ast, p->params, p->param_sizes, sk->nparams, p->binds, s->nvars, NULL);
    if (st != FRIT_OK) return st;
  } else {
    const frit_cg_kernel *ck = &c->cg->kernels[k];
    frit_kernel_fn fn = ck->fn;
    bool unknown;
    int64_t extent, work = frit_rt_kernel_work(p, k, &unknown);
    bool have = false, alone = false;
    frit_status st = frit_rt_specialised(p, k, unknown ? -1 : work, &fn, &extent, &have, &alone);
    if (st != FRIT_OK) return st;
    if (!have) {
      st = frit_eval_int_expr(ctx, ck->g0_extent, p->binds, s->nvars, &extent);
      if (st != FRIT_OK) return st;
    }
    if (extent > 0) {
      if (p->threads > 1 && extent > 1 && work >= FRIT_RT_MIN_PARALLEL_WORK && !alone) {
        if (!p->pool) p->pool = frit_pool_acquire(p->threads); /* NULL: run on the caller */
        frit_pool_launch(p->pool, fn, p->params, p->varvals, extent);
      } else {
        fn(p->params, p->varvals, 0, extent);
      }
    }
  }
  /* bounds policy CHECK: the first out-of-range access of an explicit kernel fails the run */
  if (s->err_buf >= 0 && p->bufptr[s->err_buf]) {
    int32_t code = *(const int32_t *)p->bufptr[s->err_buf];
    if (code != 0) {
      const char *msg = code > 0 && code <= s->nerr_msgs ? s->err_msgs[code - 1] : "index out of range";
      return frit_set_error(ctx, FRIT_ERR_RUNTIME, "run: %s", msg);
    }
  }
  return FRIT_OK;
}

/* Element 0 of a buffer of an integer (or bool) dtype, as i64. */
static int64_t read_int(const void *ptr, frit_dtype dt) {
  switch (frit_dtype_kind(dt)) {
  case FRIT_BOOL: return *(const uint8_t *)ptr != 0;
  case FRIT_I8: return *(const int8_t *)ptr;
  case FRIT_I16: return *(const int16_t *)ptr;
  case FRIT_I32: return *(const int32_t *)ptr;
  case FRIT_I64: return *(const int64_t *)ptr;
  case FRIT_U8: return *(const uint8_t *)ptr;
  case FRIT_U16: return *(const uint16_t *)ptr;
  case FRIT_U32: return *(const uint32_t *)ptr;
  case FRIT_U64: return (int64_t)*(const uint64_t *)ptr;
  case FRIT_F16: case FRIT_BF16: case FRIT_F32: case FRIT_F64: case FRIT_C64: case FRIT_C128: case FRIT_VOID:
  case FRIT_SCALAR_KIND_COUNT_:
    break;
  }
  return 0;
}

/* Element 0 of buffer b as an integer, wherever the buffer lives. */
static frit_status buf_int(frit_program *p, int b, int64_t *out) {
  if (p->c->dev) return frit_rt_device_read_int(p, b, out);
  *out = read_int(p->bufptr[b], p->c->sched->bufs[b].dtype);
  return FRIT_OK;
}

static void set_ivar(frit_program *p, const frit_sched_loop *L, int64_t i) {
  if (L->ivar < 0) return;
  p->varvals[L->ivar] = i;
  p->binds[L->ivar].value = i;
}

/* i = start; while (step > 0 ? i < end : i > end) { body; i += step } */
static bool loop_more(int64_t i, int64_t end, int64_t step) { return step > 0 ? i < end : i > end; }

static frit_status loop_begin(frit_program *p, int l, bool *enter) {
  const frit_schedule *s = p->c->sched;
  const frit_sched_loop *L = &s->loops[l];
  int64_t v[3];
  for (int b = 0; b < 3; b++) {
    if (L->bound[b]) {
      frit_status st = frit_eval_int_expr(p->ctx, L->bound[b], p->binds, s->nvars, &v[b]);
      if (st != FRIT_OK) return st;
    } else {
      int bb = L->bound_buf[b];
      if ((!p->c->dev && !p->bufptr[bb]) || p->numel[bb] < 1)
        return frit_set_error(p->ctx, FRIT_ERR_RUNTIME, "run: host loop loop%" PRId64 ": bound buffer %d is empty",
                              L->id, bb);
      frit_status st = buf_int(p, bb, &v[b]);
      if (st != FRIT_OK) return st;
    }
  }
  if (v[2] == 0)
    return frit_set_error(p->ctx, FRIT_ERR_RUNTIME, "run: host loop loop%" PRId64 ": step is 0 (start %" PRId64
                          ", end %" PRId64 ")", L->id, v[0], v[1]);
  p->loop_i[l] = v[0], p->loop_end[l] = v[1], p->loop_step[l] = v[2];
  p->loop_stop[l] = 0;
  *enter = loop_more(v[0], v[1], v[2]);
  if (*enter) set_ivar(p, L, v[0]);
  return FRIT_OK;
}

static frit_status run_steps(frit_program *p);
frit_status frit_rt_run_steps(frit_program *p) { return frit_rt_collective_wait_all(p, run_steps(p)); }

static frit_status run_steps(frit_program *p) {
  const frit_schedule *s = p->c->sched;
  for (int pc = 0; pc < s->nsteps;) {
    const frit_sched_step *st = &s->steps[pc];
    switch ((frit_step_kind)st->kind) {
    case FRIT_STEP_KERNEL: {
      bool rec = frit_rt_profiling();
      int64_t t0 = p->prof_ns || rec ? now_ns() : 0;
      frit_status rc = run_kernel(p, st->kernel);
      if (p->prof_ns || rec) {
        int64_t t1 = now_ns();
        if (p->prof_ns && p->prof_calls) p->prof_ns[st->kernel] += t1 - t0, p->prof_calls[st->kernel]++;
        if (rec) frit_rt_prof_kernel(p, st->kernel, t0, t1); /* a failed launch too: it took the time */
      }
      if (rc != FRIT_OK) return rc;
      pc++;
      break;
    }
    case FRIT_STEP_LOOP_BEGIN: {
      bool enter = false;
      frit_status rc = loop_begin(p, st->loop, &enter);
      if (rc != FRIT_OK) return rc;
      pc = enter ? pc + 1 : s->loops[st->loop].end_step + 1;
      break;
    }
    case FRIT_STEP_STOP_IF: {
      int64_t flag = 1;
      if (st->a >= 0) {
        frit_status rc = buf_int(p, st->a, &flag);
        if (rc != FRIT_OK) return rc;
      }
      if (flag) p->loop_stop[st->loop] = 1;
      pc++;
      break;
    }
    case FRIT_STEP_SWAP: {
      void *t = p->bufptr[st->a];
      p->bufptr[st->a] = p->bufptr[st->b];
      p->bufptr[st->b] = t;
      if (p->devoff) {
        int64_t o = p->devoff[st->a];
        p->devoff[st->a] = p->devoff[st->b];
        p->devoff[st->b] = o;
      }
      pc++;
      break;
    }
    case FRIT_STEP_LOOP_END: {
      int l = st->loop;
      int64_t next;
      bool more = !p->loop_stop[l] && !__builtin_add_overflow(p->loop_i[l], p->loop_step[l], &next) &&
                  loop_more(next, p->loop_end[l], p->loop_step[l]);
      if (more) {
        p->loop_i[l] = next;
        set_ivar(p, &s->loops[l], next);
        pc = s->loops[l].begin_step + 1;
      } else {
        pc++;
      }
      break;
    }
    }
  }
  return FRIT_OK;
}

/* ---------- run ---------- */

/* $FRIT_POISON_ARENA=1 (a test aid): every run starts with its temporaries full of 0xA5 bytes, so
 * that a kernel reading memory nothing wrote this run (a stale or a zero-filled page) shows as a
 * wrong result rather than passing by luck. */
static bool arena_poisoned(void) {
  static atomic_int on = -1;
  return frit_rt_env_is(&on, "FRIT_POISON_ARENA", "1");
}

bool frit_rt_env_is(atomic_int *cached, const char *name, const char *value) {
  int v = atomic_load_explicit(cached, memory_order_relaxed);
  if (v < 0) { /* threads that race here all store the same value */
    const char *e = getenv(name);
    v = e && strcmp(e, value) == 0;
    atomic_store_explicit(cached, v, memory_order_relaxed);
  }
  return v;
}

static bool donated_output(const frit_program *p, int k) {
  for (int j = 0; j < p->ndonate; j++)
    if (p->donate[j].output == k) return true;
  return false;
}

frit_status frit_program_run(frit_program *p, void *const *inputs, void *const *outputs,
                             const frit_binding *vars, int nvars) {
  if (!p) return FRIT_ERR_INVALID;
  frit_ctx *ctx = p->ctx;
  const frit_rt_compiled *c = p->c;
  const frit_schedule *s = c->sched;
  frit_status st = bind_vars(p, vars, nvars, "run");
  if (st == FRIT_OK) st = size_buffers(p, "run");
  if (st != FRIT_OK) return st;
  int64_t total = 0;
  st = frit_schedule_plan_memory(ctx, s, p->binds, s->nvars, p->offsets, &total);
  if (st == FRIT_OK && !c->dev) st = grow_arena(p, total);
  if (st != FRIT_OK) return st;
  for (int b = 0; b < s->nbufs; b++) {
    const frit_sched_buf *sb = &s->bufs[b];
    void *ptr = NULL;
    if (sb->kind == FRIT_BUF_INPUT) {
      ptr = inputs ? inputs[sb->io_index] : NULL;
    } else if (sb->kind == FRIT_BUF_OUTPUT) {
      ptr = outputs ? outputs[sb->io_index] : NULL;
    } else {
      FRIT_ASSERT(p->offsets[b] >= 0 && p->offsets[b] + p->numel[b] * ((frit_dtype_bits(sb->dtype) + 7) / 8) <= total);
      if (c->dev) { /* in the device arena (device_run.c) */
        p->bufptr[b] = NULL;
        continue;
      }
      ptr = (char *)p->arena + p->offsets[b];
    }
    if (!ptr && p->numel[b] > 0 && !(sb->kind == FRIT_BUF_OUTPUT && donated_output(p, sb->io_index)))
      return frit_set_error(ctx, FRIT_ERR_INVALID, "run: %s %d is a NULL pointer",
                            sb->kind == FRIT_BUF_INPUT ? "input" : "output", sb->io_index);
    p->bufptr[b] = ptr;
  }
  if (c->dev) return frit_rt_device_run(p, inputs, outputs, total);
  if (p->ndonate) {
    st = frit_rt_donate_bind(p, inputs, outputs);
    if (st != FRIT_OK) return st;
  }
  if (arena_poisoned() && total > 0) memset(p->arena, 0xA5, (size_t)total);
  if (s->err_buf >= 0 && p->bufptr[s->err_buf]) memset(p->bufptr[s->err_buf], 0, sizeof(int32_t));
  st = frit_rt_run_steps(p);
  if (st == FRIT_OK && p->ndonate) frit_rt_donate_finish(p, inputs);
  return st;
}

/* ---------- shape and memory queries ---------- */

frit_status frit_program_output_shape(frit_program *p, int k, const frit_binding *vars, int nvars,
                                      int *ndim, int64_t *dims) {
  if (!p) return FRIT_ERR_INVALID;
  const frit_schedule *s = p->c->sched;
  if (k < 0 || k >= s->noutputs)
    return frit_set_error(p->ctx, FRIT_ERR_INVALID, "output_shape: output %d of %d", k, s->noutputs);
  frit_status st = bind_vars(p, vars, nvars, "output_shape");
  if (st != FRIT_OK) return st;
  const frit_sched_buf *b = &s->bufs[s->output_buf[k]];
  if (b->ndim > FRIT_MAX_DIMS)
    return frit_set_error(p->ctx, FRIT_ERR_INVALID, "output_shape: %d dims", b->ndim);
  for (int d = 0; d < b->ndim; d++) {
    st = frit_eval_int_expr(p->ctx, b->dims[d], p->binds, s->nvars, &dims[d]);
    if (st != FRIT_OK) return st;
  }
  *ndim = b->ndim;
  return FRIT_OK;
}

frit_status frit_program_required_memory(frit_program *p, const frit_binding *vars, int nvars,
                                         size_t *bytes) {
  if (!p) return FRIT_ERR_INVALID;
  frit_status st = bind_vars(p, vars, nvars, "required_memory");
  if (st == FRIT_OK) st = size_buffers(p, "required_memory");
  int64_t total = 0;
  if (st == FRIT_OK)
    st = frit_schedule_plan_memory(p->ctx, p->c->sched, p->binds, p->c->sched->nvars, NULL, &total);
  if (st != FRIT_OK) return st;
  *bytes = (size_t)total;
  return FRIT_OK;
}

/* ---------- printing and configuration ---------- */

frit_status frit_program_print(frit_program *p, const char *stage, int k, FILE *out) {
  if (!p) return FRIT_ERR_INVALID;
  frit_ctx *ctx = p->ctx;
  if (!stage || !out) return frit_set_error(ctx, FRIT_ERR_INVALID, "print: no stage or stream");
  if (k < -1 || k >= p->c->sched->nkernels)
    return frit_set_error(ctx, FRIT_ERR_INVALID, "print: kernel %d of %d", k, p->c->sched->nkernels);
  if (!strcmp(stage, "tensor") || !strcmp(stage, "kernel") || !strcmp(stage, "plan"))
    return frit_schedule_print(ctx, p->c->sched, stage, k, out);
  if (!strcmp(stage, "optimized") || !strcmp(stage, "linear")) {
    frit_status st = frit_rt_ensure_codegen(ctx, p->c);
    return st != FRIT_OK ? st : frit_codegen_print(ctx, p->c->cg, stage, k, out);
  }
  if (!strcmp(stage, "source")) {
    const char *src = frit_program_source(p);
    if (!src) return frit_last_status(ctx);
    fputs(src, out);
    return FRIT_OK;
  }
  return frit_set_error(ctx, FRIT_ERR_INVALID, "print: unknown stage '%s' (tensor, kernel, "
                        "optimized, linear, plan, source)", stage);
}

static const char *threads_source(const frit_compile_opts *opts) {
  if (opts && opts->threads > 0) return "opts.threads";
  const char *env = getenv("FRIT_THREADS");
  if (env && atoi(env) > 0) return "$FRIT_THREADS";
  return "online CPUs";
}

frit_status frit_program_info(frit_program *p, FILE *out) {
  if (!p) return FRIT_ERR_INVALID;
  const frit_rt_compiled *c = p->c;
  fprintf(out, "threads: %d\n", p->threads);
  fprintf(out, "mode: %s%s\n", c->interpret ? "interpret" : "compiled",
          c->no_fusion ? ", no fusion" : "");
  fprintf(out, "kernels: %d\nbuffers: %d\nvariables: %d\n", c->sched->nkernels, c->sched->nbufs,
          c->sched->nvars);
  if (c->sched->arena_bytes >= 0)
    fprintf(out, "arena: %" PRId64 " bytes\n", c->sched->arena_bytes);
  else
    fprintf(out, "arena: symbolic (see frit_program_required_memory)\n");
  if (c->cg && !c->interpret) {
    static const char *const how[] = {"compiled now", "found on disk", "found in memory"};
    int h = c->cg->cache_hit;
    fprintf(out, "code: %016" PRIx64 " (%s)\n", c->cg->hash, h >= 0 && h <= 2 ? how[h] : "?");
  }
  frit_rt_spec_print(p, out);
  frit_rt_stats stats = frit_rt_stats_get(p->ctx);
  fprintf(out, "compile cache: %" PRIu64 " compiled, %" PRIu64 " reused\n", stats.compiles,
          stats.hits);
  return frit_codegen_info(p->ctx, &p->cfg, out);
}

#define FRIT_STR_(x) #x
#define FRIT_STR(x) FRIT_STR_(x)
const char *frit_version(void) {
  return FRIT_STR(FRIT_VERSION_MAJOR) "." FRIT_STR(FRIT_VERSION_MINOR) "." FRIT_STR(FRIT_VERSION_PATCH);
}

frit_status frit_info(frit_ctx *ctx, FILE *out) {
  if (!ctx) return FRIT_ERR_INVALID;
  frit_cg_config cfg;
  frit_status st = frit_codegen_config(ctx, NULL, &cfg);
  if (st != FRIT_OK) return st;
  fprintf(out, "version: %s\n", frit_version());
  fprintf(out, "threads: %d (%s)\n", frit_rt_default_threads(NULL), threads_source(NULL));
  return frit_codegen_info(ctx, &cfg, out);
}

frit_status frit_cache_clear(frit_ctx *ctx, const char *cache_dir) {
  if (!ctx) return FRIT_ERR_INVALID;
  return frit_codegen_cache_clear(ctx, cache_dir);
}
