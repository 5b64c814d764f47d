/* Running a program on a device: one device arena per program holds the plan's temporaries and,
 * after them, a region per input and output; inputs are copied in before the steps run and
 * outputs copied out after, so the caller's contract (host memory in and out) is the host's. */
#include "backend/device.h"
#include "runtime/profile.h"
#include "runtime/runtime.h"

#include <inttypes.h>
#include <string.h>

static int64_t elem_bytes(frit_dtype dt) { return (frit_dtype_bits(dt) + 7) / 8; }
static int64_t align_up(int64_t x) { return (x + FRIT_ARENA_ALIGN - 1) / FRIT_ARENA_ALIGN * FRIT_ARENA_ALIGN; }

void frit_rt_device_release(frit_program *p) {
  if (p->dev_arena) p->c->dev->ops->free(p->c->dev, p->dev_arena);
  p->dev_arena = NULL, p->dev_cap = 0;
}

/* The host memory output k's value goes to: the caller's pointer, or a donated input's. */
static void *output_dest(const frit_program *p, void *const *inputs, void *const *outputs, int k) {
  void *out = outputs ? outputs[k] : NULL;
  if (out) return out;
  for (int j = 0; j < p->ndonate; j++)
    if (p->donate[j].output == k) return inputs ? inputs[p->donate[j].input] : NULL;
  return NULL;
}

frit_status frit_rt_device_run(frit_program *p, void *const *inputs, void *const *outputs, int64_t total) {
  frit_ctx *ctx = p->ctx;
  frit_device *d = p->c->dev;
  const frit_schedule *s = p->c->sched;
  /* temporaries where the plan put them; each input and output its own region after them */
  int64_t end = align_up(total);
  for (int b = 0; b < s->nbufs; b++) {
    const frit_sched_buf *sb = &s->bufs[b];
    if (sb->kind == FRIT_BUF_INPUT || sb->kind == FRIT_BUF_OUTPUT) {
      p->devoff[b] = end;
      end += align_up(p->numel[b] * elem_bytes(sb->dtype));
    } else {
      p->devoff[b] = p->offsets[b];
    }
    p->devoff0[b] = p->devoff[b];
  }
  if (!p->dev_arena || (uint64_t)end > p->dev_cap) {
    /* geometric growth: a slowly growing size reallocates rarely */
    size_t cap = p->dev_cap * 2 > (size_t)end ? p->dev_cap * 2 : (size_t)end;
    frit_rt_device_release(p);
    frit_status st = d->ops->alloc(ctx, d, cap, &p->dev_arena);
    if (st != FRIT_OK) return st;
    p->dev_cap = cap;
  }
  for (int b = 0; b < s->nbufs; b++) {
    const frit_sched_buf *sb = &s->bufs[b];
    if (sb->kind != FRIT_BUF_INPUT || p->numel[b] <= 0) continue;
    frit_status st = d->ops->write(ctx, d, p->dev_arena, (size_t)p->devoff[b], inputs[sb->io_index],
                                   (size_t)(p->numel[b] * elem_bytes(sb->dtype)));
    if (st != FRIT_OK) return st;
  }
  if (s->err_buf >= 0 && p->numel[s->err_buf] > 0) {
    int32_t zero = 0;
    frit_status st = d->ops->write(ctx, d, p->dev_arena, (size_t)p->devoff[s->err_buf], &zero, sizeof zero);
    if (st != FRIT_OK) return st;
  }
  frit_status st = frit_rt_run_steps(p);
  if (st != FRIT_OK) return st;
  /* the outputs' values are in their own regions (host loops swap buffers in pairs, and the
   * schedule leaves every output's value in its first memory, as on the host) */
  for (int b = 0; b < s->nbufs; b++) {
    const frit_sched_buf *sb = &s->bufs[b];
    if (sb->kind != FRIT_BUF_OUTPUT || p->numel[b] <= 0) continue;
    void *dst = output_dest(p, inputs, outputs, sb->io_index);
    if (!dst) continue;
    st = d->ops->read(ctx, d, p->dev_arena, (size_t)p->devoff0[b], dst, (size_t)(p->numel[b] * elem_bytes(sb->dtype)));
    if (st != FRIT_OK) return st;
  }
  return FRIT_OK;
}

frit_status frit_rt_device_read_int(frit_program *p, int b, int64_t *out) {
  frit_device *d = p->c->dev;
  frit_dtype dt = p->c->sched->bufs[b].dtype;
  unsigned char raw[8] = {0};
  int64_t n = elem_bytes(dt);
  if (n < 1 || n > 8 || p->numel[b] < 1)
    return frit_set_error(p->ctx, FRIT_ERR_RUNTIME, "run: buffer %d holds no integer to read", b);
  frit_status st = d->ops->read(p->ctx, d, p->dev_arena, (size_t)p->devoff[b], raw, (size_t)n);
  if (st != FRIT_OK) return st;
  int64_t v = 0;
  switch (frit_dtype_kind(dt)) {
  case FRIT_BOOL: v = raw[0] != 0; break;
  case FRIT_I8: v = (int8_t)raw[0]; break;
  case FRIT_U8: v = raw[0]; break;
  case FRIT_I16: { int16_t x; memcpy(&x, raw, 2); v = x; break; }
  case FRIT_U16: { uint16_t x; memcpy(&x, raw, 2); v = x; break; }
  case FRIT_I32: { int32_t x; memcpy(&x, raw, 4); v = x; break; }
  case FRIT_U32: { uint32_t x; memcpy(&x, raw, 4); v = x; break; }
  case FRIT_I64: case FRIT_U64: memcpy(&v, raw, 8); break;
  case FRIT_F16: case FRIT_BF16: case FRIT_F32: case FRIT_F64: case FRIT_C64: case FRIT_C128: case FRIT_VOID:
  case FRIT_SCALAR_KIND_COUNT_:
    return frit_set_error(p->ctx, FRIT_ERR_RUNTIME, "run: buffer %d is not an integer buffer", b);
  }
  *out = v;
  return FRIT_OK;
}

frit_status frit_rt_device_kernel(frit_program *p, int k) {
  frit_ctx *ctx = p->ctx;
  frit_device *d = p->c->dev;
  const frit_schedule *s = p->c->sched;
  const frit_sched_kernel *sk = &s->kernels[k];
  for (int i = 0; i < sk->nparams; i++) p->param_off[i] = p->devoff[sk->param_buf[i]];
  int64_t extent;
  frit_status st = frit_eval_int_expr(ctx, p->c->cg->kernels[k].g0_extent, p->binds, s->nvars, &extent);
  if (st != FRIT_OK) return st;
  const frit_cg_kernel *K = &p->c->cg->kernels[k];
  int64_t trip = 0, tm = 0, tn = 0, tk = 0, tiles = 0;
  if (K->group && (st = frit_eval_int_expr(ctx, K->group_trip, p->binds, s->nvars, &trip)) != FRIT_OK) return st;
  if (K->tile.threads && p->c->dev_kernels_tile[k] &&
      ((st = frit_eval_int_expr(ctx, K->tile.m, p->binds, s->nvars, &tm)) != FRIT_OK ||
       (st = frit_eval_int_expr(ctx, K->tile.n, p->binds, s->nvars, &tn)) != FRIT_OK ||
       (st = frit_eval_int_expr(ctx, K->tile.k, p->binds, s->nvars, &tk)) != FRIT_OK ||
       (st = frit_eval_int_expr(ctx, K->tile.count, p->binds, s->nvars, &tiles)) != FRIT_OK))
    return st;
  bool tiled = K->tile.threads && p->c->dev_kernels_tile[k] && frit_device_use_tiles(&d->props, tm, tn, tk, K->tile.threads);
  bool grouped = !tiled && K->group && p->c->dev_kernels_group[k] && frit_device_use_groups(&d->props, extent, trip, K->group);
  if (tiled) extent = tiles;
  if (extent > 0) {
    void *kern = tiled ? p->c->dev_kernels_tile[k] : grouped ? p->c->dev_kernels_group[k] : p->c->dev_kernels[k];
    st = d->ops->launch(ctx, d, kern, p->dev_arena, p->param_off, sk->nparams, p->varvals, s->nvars, extent,
                        tiled ? K->tile.threads : grouped ? K->group : 0);
    if (st != FRIT_OK) return st;
    /* FRIT_PROFILE times kernels one by one: wait for each (run_steps adds the time) */
    if ((p->prof_ns || frit_rt_profiling()) && (st = d->ops->sync(ctx, d)) != FRIT_OK) return st;
  }
  if (s->err_buf >= 0 && p->numel[s->err_buf] > 0) {
    int32_t code = 0;
    st = d->ops->read(ctx, d, p->dev_arena, (size_t)p->devoff[s->err_buf], &code, sizeof code);
    if (st != FRIT_OK) return st;
    if (code != 0) {
      const char *msg = code > 0 && code <= s->nerr_msgs ? s->err_msgs[code - 1] : "index out of range";
      return frit_set_error(ctx, FRIT_ERR_RUNTIME, "run: %s", msg);
    }
  }
  return FRIT_OK;
}
