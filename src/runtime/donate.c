/* Buffer donation: an output written into the memory of an input of the same dtype and shape
 * (frit_program_donate), the schedule analysis that decides whether that can happen in place,
 * and the staging copy the run falls back to when it cannot. The rule is in docs/runtime.md
 * "Donated buffers". */
#include <inttypes.h>

#include "runtime/runtime.h"

/* The kernels [lo, hi] kernel k spans for ordering: a kernel in a host loop body runs again after
 * every later kernel of that body, so it spans its whole outermost loop. */
static void kernel_span(const frit_schedule *s, int k, int *lo, int *hi) {
  *lo = *hi = k;
  for (int l = 0; l < s->nloops; l++) {
    const frit_sched_loop *L = &s->loops[l];
    if (L->parent < 0 && L->first_kernel <= k && k <= L->last_kernel) *lo = L->first_kernel, *hi = L->last_kernel;
  }
}

static int64_t elem_bytes(frit_dtype dt) { return (frit_dtype_bits(dt) + 7) / 8; }

/* Whether output buffer bo can be written straight into input buffer bi's memory: every
 * kernel that reads bi finishes before the first kernel that writes bo starts (a kernel in a
 * host loop spans its outermost loop), or is that kernel and reads only the element it writes
 * (frit_sched_same_element, with the kernel rendered without restrict on the pair); no SWAP
 * step moves either buffer, and the host does not read the input as a loop bound or stop flag. */
static bool donation_in_place(const frit_schedule *s, int bi, int bo) {
  for (int i = 0; i < s->nsteps; i++)
    if (s->steps[i].kind == FRIT_STEP_SWAP &&
        (s->steps[i].a == bi || s->steps[i].b == bi || s->steps[i].a == bo || s->steps[i].b == bo))
      return false;
  /* the host reads loop bounds and stop flags between kernels: no ordering to reason about */
  for (int i = 0; i < s->nsteps; i++)
    if (s->steps[i].kind == FRIT_STEP_STOP_IF && s->steps[i].a == bi) return false;
  for (int l = 0; l < s->nloops; l++)
    for (int b = 0; b < 3; b++)
      if (!s->loops[l].bound[b] && s->loops[l].bound_buf[b] == bi) return false;
  int wfirst = -1, wlo = 0;
  for (int k = 0; k < s->nkernels; k++) {
    const frit_sched_kernel *K = &s->kernels[k];
    for (int q = 0; q < K->nparams; q++) {
      if (K->param_buf[q] != bo) continue;
      int lo, hi;
      kernel_span(s, k, &lo, &hi);
      if (wfirst < 0 || lo < wlo) wfirst = k, wlo = lo;
    }
  }
  if (wfirst < 0) return true; /* nothing writes it (size 0): nothing to order */
  for (int k = 0; k < s->nkernels; k++) {
    const frit_sched_kernel *K = &s->kernels[k];
    for (int q = 0; q < K->nparams; q++) {
      if (K->param_buf[q] != bi) continue;
      int lo, hi;
      kernel_span(s, k, &lo, &hi);
      if (hi < wlo) continue;
      if (k != wfirst || frit_sched_in_loop(s, k)) return false;
      int pout = -1;
      for (int r = 0; r < K->nparams; r++)
        if (K->param_buf[r] == bo) pout = r;
      /* the kernel's code must also have been rendered without restrict on the pair */
      if (pout < 0 || q >= 64 || pout >= 64 || !((K->alias_mask >> q) & (K->alias_mask >> pout) & 1) ||
          !frit_sched_same_element(K, q, pout))
        return false;
    }
  }
  return true;
}

frit_status frit_program_donate(frit_program *p, int input, int output, int *in_place) {
  if (!p) return FRIT_ERR_INVALID;
  frit_ctx *ctx = p->ctx;
  const frit_schedule *s = p->c->sched;
  if (input < 0 || input >= s->ninputs || output < 0 || output >= s->noutputs)
    return frit_set_error(ctx, FRIT_ERR_INVALID, "donate: input %d of %d, output %d of %d", input, s->ninputs,
                          output, s->noutputs);
  const frit_sched_buf *bi = &s->bufs[s->input_buf[input]], *bo = &s->bufs[s->output_buf[output]];
  char d1[32], d2[32];
  if (bi->dtype != bo->dtype || !frit_sched_same_dims(bi, bo)) {
    char sh1[160] = "", sh2[160] = "";
    for (int pass = 0; pass < 2; pass++) {
      const frit_sched_buf *b = pass ? bo : bi;
      char *o = pass ? sh2 : sh1;
      size_t used = 0;
      for (int d = 0; d < b->ndim && used < 120; d++) {
        const char *t = frit_render_c_expr(ctx, b->dims[d]);
        used += (size_t)snprintf(o + used, 160 - used, "%s%s", d ? ", " : "", t ? t : "?");
        if (!t) frit_clear_error(ctx);
      }
    }
    return frit_set_error(ctx, FRIT_ERR_INVALID, "donate: input %d (%s, shape (%s)) and output %d (%s, shape (%s)) "
                          "differ in dtype or shape", input, frit_dtype_name(bi->dtype, d1, sizeof d1), sh1, output,
                          frit_dtype_name(bo->dtype, d2, sizeof d2), sh2);
  }
  for (int j = 0; j < p->ndonate; j++)
    if (p->donate[j].input == input || p->donate[j].output == output)
      return frit_set_error(ctx, FRIT_ERR_INVALID, "donate: input %d or output %d is already donated "
                            "(input %d -> output %d)", input, output, p->donate[j].input, p->donate[j].output);
  frit_rt_donation *nd = realloc(p->donate, (size_t)(p->ndonate + 1) * sizeof *nd);
  if (!nd) return frit_set_error(ctx, FRIT_ERR_NOMEM, "donate: out of memory");
  p->donate = nd;
  bool direct = donation_in_place(s, s->input_buf[input], s->output_buf[output]);
  p->donate[p->ndonate++] = (frit_rt_donation){input, output, direct, false, false};
  if (in_place) *in_place = direct;
  return FRIT_OK;
}

static bool overlap(const void *a, int64_t na, const void *b, int64_t nb) {
  uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
  return na > 0 && nb > 0 && x < y + (uint64_t)nb && y < x + (uint64_t)na;
}

frit_status frit_rt_donate_bind(frit_program *p, void *const *inputs, void *const *outputs) {
  const frit_schedule *s = p->c->sched;
  int64_t stage_bytes = 0;
  for (int j = 0; j < p->ndonate; j++) {
    frit_rt_donation *D = &p->donate[j];
    int bi = s->input_buf[D->input], bo = s->output_buf[D->output];
    void *in = inputs ? inputs[D->input] : NULL;
    void *out = outputs ? outputs[D->output] : NULL;
    D->staged = false;
    D->active = (out == NULL || out == in) && in != NULL;
    if (!D->active) continue; /* a separate output buffer this run: no donation */
    if (p->numel[bi] != p->numel[bo])
      return frit_set_error(p->ctx, FRIT_ERR_RUNTIME, "run: donated input %d has %" PRId64 " elements but output %d "
                            "has %" PRId64, D->input, p->numel[bi], D->output, p->numel[bo]);
    int64_t bytes = p->numel[bi] * elem_bytes(s->bufs[bi].dtype);
    bool staged = !D->direct;
    /* another input in the same memory is read on its own schedule: stage */
    for (int i = 0; i < s->ninputs && !staged; i++) {
      if (i == D->input || !inputs[i]) continue;
      const frit_sched_buf *b = &s->bufs[s->input_buf[i]];
      if (overlap(in, bytes, inputs[i], p->numel[s->input_buf[i]] * elem_bytes(b->dtype))) {
        for (int q = 0; q < p->ndonate; q++)
          if (p->donate[q].input == i && (!outputs || !outputs[p->donate[q].output] ||
                                           outputs[p->donate[q].output] == inputs[i]))
            return frit_set_error(p->ctx, FRIT_ERR_INVALID, "run: donated inputs %d and %d share memory (two "
                                  "outputs cannot both take it)", D->input, i);
        staged = true;
      }
    }
    D->staged = staged;
    if (staged) stage_bytes += (bytes + FRIT_ARENA_ALIGN - 1) / FRIT_ARENA_ALIGN * FRIT_ARENA_ALIGN;
  }
  if (stage_bytes > 0 && (uint64_t)stage_bytes > p->stage_cap) {
    void *m = aligned_alloc(FRIT_ARENA_ALIGN, (size_t)stage_bytes);
    if (!m) return frit_set_error(p->ctx, FRIT_ERR_NOMEM, "run: cannot allocate %" PRId64 " bytes to stage "
                                  "donated outputs", stage_bytes);
    free(p->stage);
    p->stage = m;
    p->stage_cap = (size_t)stage_bytes;
  }
  int64_t off = 0;
  for (int j = 0; j < p->ndonate; j++) {
    frit_rt_donation *D = &p->donate[j];
    if (!D->active) continue;
    int bi = s->input_buf[D->input], bo = s->output_buf[D->output];
    if (D->staged) {
      p->bufptr[bo] = (char *)p->stage + off;
      off += (p->numel[bi] * elem_bytes(s->bufs[bi].dtype) + FRIT_ARENA_ALIGN - 1) / FRIT_ARENA_ALIGN *
             FRIT_ARENA_ALIGN;
    } else {
      p->bufptr[bo] = inputs[D->input];
    }
  }
  return FRIT_OK;
}

void frit_rt_donate_finish(frit_program *p, void *const *inputs) {
  const frit_schedule *s = p->c->sched;
  for (int j = 0; j < p->ndonate; j++) {
    const frit_rt_donation *D = &p->donate[j];
    if (!D->active || !D->staged) continue;
    int bi = s->input_buf[D->input], bo = s->output_buf[D->output];
    memcpy(inputs[D->input], p->bufptr[bo], (size_t)(p->numel[bi] * elem_bytes(s->bufs[bi].dtype)));
  }
}
