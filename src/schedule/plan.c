/* The memory plan (TEMP buffers share one arena, placed first-fit by size over their live
 * kernel intervals) and the schedule printer. */
#include "schedule/sched_internal.h"
#include "interp/scalar.h"

#include <inttypes.h>
#include <stdio.h>

frit_status frit_schedule_eval_size(frit_ctx *ctx, frit_uop *e, const frit_binding *vars, int nvars, int64_t *out) {
  return frit_eval_int_expr(ctx, e, vars, nvars, out);
}

typedef struct item {
  int buf;
  int64_t size, first, last;
} item;

static int cmp_item(const void *a, const void *b) {
  const item *x = a, *y = b;
  if (x->size != y->size) return x->size > y->size ? -1 : 1;
  if (x->first != y->first) return x->first < y->first ? -1 : 1;
  return x->buf - y->buf;
}

static int64_t align_up(int64_t v) { return (v + FRIT_ARENA_ALIGN - 1) / FRIT_ARENA_ALIGN * FRIT_ARENA_ALIGN; }

/* Greedy by size: each buffer goes at the lowest offset that collides with no placed buffer
 * whose live interval overlaps its own. sizes[b] < 0 marks non-TEMP buffers. */
static frit_status place(frit_ctx *ctx, const frit_schedule *s, const int64_t *sizes, int64_t *offsets, int64_t *total) {
  item *it = malloc((size_t)(s->nbufs + 1) * sizeof *it);
  int64_t *lo = malloc((size_t)(s->nbufs + 1) * 2 * sizeof *lo);
  if (!it || !lo) {
    free(it), free(lo);
    return frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
  }
  int n = 0;
  for (int b = 0; b < s->nbufs; b++) {
    offsets[b] = -1;
    if (sizes[b] < 0 || s->bufs[b].first_use < 0) continue;
    it[n++] = (item){b, align_up(sizes[b] > 0 ? sizes[b] : 1), s->bufs[b].first_use, s->bufs[b].last_use};
  }
  qsort(it, (size_t)n, sizeof *it, cmp_item);
  int64_t end = 0;
  for (int i = 0; i < n; i++) {
    /* intervals [off, off+size) of placed, live-overlapping buffers, sorted by offset */
    int m = 0;
    for (int j = 0; j < i; j++) {
      if (it[j].last < it[i].first || it[i].last < it[j].first) continue;
      int64_t o = offsets[it[j].buf], e = o + it[j].size;
      int at = m++;
      while (at > 0 && lo[2 * (at - 1)] > o) lo[2 * at] = lo[2 * (at - 1)], lo[2 * at + 1] = lo[2 * (at - 1) + 1], at--;
      lo[2 * at] = o, lo[2 * at + 1] = e;
    }
    int64_t off = 0;
    for (int j = 0; j < m; j++) {
      if (lo[2 * j] >= off + it[i].size) break;
      if (lo[2 * j + 1] > off) off = lo[2 * j + 1];
    }
    offsets[it[i].buf] = off;
    if (off + it[i].size > end) end = off + it[i].size;
  }
  *total = end;
  free(it);
  free(lo);
  return FRIT_OK;
}

frit_status frit_schedule_plan_memory(frit_ctx *ctx, const frit_schedule *s, const frit_binding *vars, int nvars,
                                      int64_t *offsets, int64_t *total) {
  int64_t *sizes = malloc((size_t)(s->nbufs + 1) * sizeof *sizes);
  int64_t *offs = malloc((size_t)(s->nbufs + 1) * sizeof *offs);
  frit_status st = FRIT_OK;
  if (!sizes || !offs) st = frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
  for (int b = 0; st == FRIT_OK && b < s->nbufs; b++) {
    sizes[b] = -1;
    if (s->bufs[b].kind != FRIT_BUF_TEMP) continue;
    int64_t ne;
    st = frit_schedule_eval_size(ctx, s->bufs[b].numel, vars, nvars, &ne);
    if (st == FRIT_OK && ne < 0) ne = 0;
    if (st == FRIT_OK && ne > INT64_MAX / 16) st = frit_set_error(ctx, FRIT_ERR_RUNTIME, "schedule: buffer %d too large", b);
    sizes[b] = ne * sched_elem_bytes(s->bufs[b].dtype);
  }
  int64_t tot = 0;
  if (st == FRIT_OK) st = place(ctx, s, sizes, offs, &tot);
  if (st == FRIT_OK) {
    if (offsets) memcpy(offsets, offs, (size_t)s->nbufs * sizeof *offs);
    if (total) *total = tot;
  }
  free(sizes);
  free(offs);
  return st;
}

void sched_plan_static(frit_ctx *ctx, frit_schedule *s) {
  for (int b = 0; b < s->nbufs; b++)
    if (s->bufs[b].kind == FRIT_BUF_TEMP && s->bufs[b].numel->op != FRIT_OP_CONST) return; /* planned at run */
  int64_t *offs = malloc((size_t)(s->nbufs + 1) * sizeof *offs);
  int64_t tot;
  if (offs && frit_schedule_plan_memory(ctx, s, NULL, 0, offs, &tot) == FRIT_OK) {
    for (int b = 0; b < s->nbufs; b++) s->bufs[b].arena_offset = offs[b];
    s->arena_bytes = tot;
  }
  free(offs);
}

/* ---------- printing ---------- */

static const char *kind_name(int k) {
  return k == FRIT_BUF_INPUT ? "input" : k == FRIT_BUF_OUTPUT ? "output" : "temp";
}

static void print_expr(frit_ctx *ctx, frit_uop *e, FILE *out) {
  if (e->op == FRIT_OP_CONST) {
    fprintf(out, "%" PRId64, e->arg.value.i);
    return;
  }
  const char *s = frit_render_c_expr(ctx, e);
  fprintf(out, "%s", s ? s : "?");
  if (!s) frit_clear_error(ctx);
}

/* The step list of a schedule with host loops, indented by loop nesting. */
static void print_steps(frit_ctx *ctx, const frit_schedule *s, FILE *out) {
  static const char *const bname[3] = {"start", "end", "step"};
  fprintf(out, "steps (%d):\n", s->nsteps);
  int depth = 0;
  for (int i = 0; i < s->nsteps; i++) {
    const frit_sched_step *st = &s->steps[i];
    if (st->kind == FRIT_STEP_LOOP_END && depth > 0) depth--;
    fprintf(out, "  %3d %*s", i, 2 * depth, "");
    switch ((frit_step_kind)st->kind) {
    case FRIT_STEP_KERNEL: fprintf(out, "kernel %d %s\n", st->kernel, s->kernels[st->kernel].name); break;
    case FRIT_STEP_LOOP_BEGIN: {
      const frit_sched_loop *L = &s->loops[st->loop];
      fprintf(out, "loop%" PRId64 ": index %s,", L->id, L->ivar >= 0 ? (const char *)s->vars[L->ivar]->arg.blob : "?");
      for (int b = 0; b < 3; b++) {
        fprintf(out, " %s=", bname[b]);
        if (L->bound[b]) print_expr(ctx, L->bound[b], out);
        else fprintf(out, "b%d[0]", L->bound_buf[b]);
      }
      fprintf(out, " (zero trips: to %d)\n", L->end_step + 1);
      depth++;
      break;
    }
    case FRIT_STEP_LOOP_END: fprintf(out, "end loop%" PRId64 " (again: to %d)\n", s->loops[st->loop].id,
                                     s->loops[st->loop].begin_step + 1); break;
    case FRIT_STEP_SWAP: fprintf(out, "swap b%d b%d\n", st->a, st->b); break;
    case FRIT_STEP_STOP_IF:
      if (st->a < 0) fprintf(out, "stop loop%" PRId64 "\n", s->loops[st->loop].id);
      else fprintf(out, "stop loop%" PRId64 " if b%d[0]\n", s->loops[st->loop].id, st->a);
      break;
    }
  }
}

static void print_plan(frit_ctx *ctx, const frit_schedule *s, FILE *out) {
  char dt[32];
  fprintf(out, "buffers (%d):\n", s->nbufs);
  for (int b = 0; b < s->nbufs; b++) {
    const frit_sched_buf *B = &s->bufs[b];
    fprintf(out, "  b%d %-6s", b, kind_name(B->kind));
    if (B->kind != FRIT_BUF_TEMP) fprintf(out, " #%d", B->io_index);
    fprintf(out, " %s (", frit_dtype_name(B->dtype, dt, sizeof dt));
    for (int d = 0; d < B->ndim; d++) {
      if (d) fprintf(out, ", ");
      print_expr(ctx, B->dims[d], out);
    }
    fprintf(out, ") numel=");
    print_expr(ctx, B->numel, out);
    fprintf(out, " live=[%d,%d]", B->first_use, B->last_use);
    if (B->kind == FRIT_BUF_TEMP) {
      if (B->arena_offset >= 0) fprintf(out, " offset=%" PRId64, B->arena_offset);
      else fprintf(out, " offset=(at run time)");
    }
    fprintf(out, "\n");
  }
  if (s->arena_bytes >= 0) fprintf(out, "arena: %" PRId64 " bytes\n", s->arena_bytes);
  else fprintf(out, "arena: symbolic, planned at run time\n");
  if (s->nloops > 0) print_steps(ctx, s, out);
}

frit_status frit_schedule_print(frit_ctx *ctx, const frit_schedule *s, const char *stage, int k, FILE *out) {
  if (!s || !stage || !out) return frit_set_error(ctx, FRIT_ERR_INVALID, "schedule print: NULL argument");
  bool tensor = strcmp(stage, "tensor") == 0, kernel = strcmp(stage, "kernel") == 0, plan = strcmp(stage, "plan") == 0;
  if (!tensor && !kernel && !plan)
    return frit_set_error(ctx, FRIT_ERR_INVALID, "schedule print: unknown stage '%s' (tensor, kernel, plan)", stage);
  if (k < -1 || k >= s->nkernels)
    return frit_set_error(ctx, FRIT_ERR_INVALID, "schedule print: kernel %d of %d", k, s->nkernels);
  if (plan) {
    if (k >= 0) {
      const frit_sched_kernel *K = &s->kernels[k];
      fprintf(out, "kernel %d %s (%s):", k, K->name, K->ops);
      for (int p = 0; p < K->nparams; p++) fprintf(out, " p%d=b%d%s", p, K->param_buf[p], K->param_written[p] ? "(w)" : "");
      fprintf(out, "\n");
      return FRIT_OK;
    }
    print_plan(ctx, s, out);
    return FRIT_OK;
  }
  for (int i = k < 0 ? 0 : k; i < (k < 0 ? s->nkernels : k + 1); i++) {
    const frit_sched_kernel *K = &s->kernels[i];
    fprintf(out, "kernel %d %s (%s) params:", i, K->name, K->ops);
    for (int p = 0; p < K->nparams; p++) fprintf(out, " p%d=b%d%s", p, K->param_buf[p], K->param_written[p] ? "(w)" : "");
    fprintf(out, "\n");
    frit_status st = tensor ? frit_print_tree(ctx, K->tensor, out) : frit_print_listing(ctx, K->ast, out);
    if (st != FRIT_OK) return st;
  }
  if (k < 0 && kernel) print_plan(ctx, s, out);
  return FRIT_OK;
}
