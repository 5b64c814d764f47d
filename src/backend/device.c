/* The ctx's open devices, by backend name: each is opened on first use and closed with the ctx. */
#include "backend/device.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

typedef struct dev_slot {
  char name[16];
  frit_device *dev;
} dev_slot;

typedef struct dev_state {
  dev_slot slots[4];
  int n;
} dev_state;

static void device_close(frit_device *d) {
  for (int i = 0; i < d->nmodules; i++) {
    frit_device_module *m = &d->modules[i];
    d->ops->release(d, m->module, m->n, m->kernels);
    free(m->kernels);
  }
  free(d->modules);
  d->ops->close(d);
}

static void dev_state_destroy(void *p) {
  dev_state *s = p;
  for (int i = 0; i < s->n; i++) device_close(s->slots[i].dev);
  free(s);
}

frit_status frit_device_build(frit_ctx *ctx, frit_device *d, const char *source, int n, const char *const *fn_names,
                              void **kernels) {
  if (d->nmodules == d->cap) {
    int cap = d->cap ? 2 * d->cap : 8;
    frit_device_module *m = realloc(d->modules, (size_t)cap * sizeof *m);
    if (!m) return frit_set_error(ctx, FRIT_ERR_NOMEM, "%s: out of memory", d->ops->name);
    d->modules = m, d->cap = cap;
  }
  frit_device_module *m = &d->modules[d->nmodules];
  m->n = n;
  m->kernels = calloc((size_t)(n ? n : 1), sizeof *m->kernels);
  if (!m->kernels) return frit_set_error(ctx, FRIT_ERR_NOMEM, "%s: out of memory", d->ops->name);
  frit_status st = d->ops->build(ctx, d, source, n, fn_names, &m->module, m->kernels);
  if (st != FRIT_OK) {
    free(m->kernels);
    return st;
  }
  memcpy(kernels, m->kernels, (size_t)n * sizeof *kernels);
  d->nmodules++;
  return FRIT_OK;
}

static dev_state *state_of(frit_ctx *ctx) {
  for (size_t i = 0; i < ctx->owned_count; i++)
    if (ctx->owned[i].destroy == dev_state_destroy) return ctx->owned[i].ptr;
  dev_state *s = calloc(1, sizeof *s);
  if (!s || !frit_ctx_own(ctx, s, dev_state_destroy)) return NULL;
  return s;
}

void frit_device_geometry(int compute_units, int64_t g0_extent, int group, int64_t max_threads, size_t *groups,
                          size_t *size) {
  int64_t points = g0_extent < 1 ? 1 : g0_extent;
  /* 2048 resident threads per compute unit (an SM's limit on recent NVIDIA parts) */
  int64_t threads_cap = max_threads > 0 ? max_threads : (int64_t)(compute_units > 0 ? compute_units : 1) * 2048;
  int64_t sz = group > 0 ? group : points < 256 ? points : 256;
  int64_t want = group > 0 ? points : (points + sz - 1) / sz, cap = threads_cap / sz > 0 ? threads_cap / sz : 1;
  *size = (size_t)sz;
  *groups = (size_t)(want < cap ? want : cap);
}

bool frit_device_use_groups(const frit_device_props *props, int64_t g0_extent, int64_t trip, int group) {
  if (group <= 0 || (size_t)group > props->max_group || trip < group) return false;
  int64_t cu = props->compute_units > 0 ? props->compute_units : 1;
  /* few points: a thread a point leaves compute units idle (64 points a unit: two warps) */
  if (g0_extent <= cu * 64) return true;
  /* long reductions (16 and more elements a thread), while the groups stay few enough for
   * their combine to be a small part (a matmul's millions of points keep a thread a point) */
  return trip >= 16 * (int64_t)group && g0_extent < ((int64_t)1 << 18);
}

bool frit_device_use_tiles(const frit_device_props *props, int64_t m, int64_t n, int64_t k, int threads) {
  /* a tile is 128 x 128 outputs; below 32 rows or columns, or 16 steps of the reduction, most of
   * its threads would idle or the staging would outweigh the work (FRIT_DEVICE_TILES=0: never) */
  const char *e = getenv("FRIT_DEVICE_TILES");
  if (e && strcmp(e, "0") == 0) return false;
  if (e && strcmp(e, "1") == 0) return (size_t)threads <= props->max_group && m > 0 && n > 0;
  return (size_t)threads <= props->max_group && m >= 32 && n >= 32 && k >= 16;
}

bool frit_device_is_host(const char *name) { return !name || !*name || strcmp(name, "cpu") == 0; }

frit_device *frit_device_get(frit_ctx *ctx, const char *name) {
  if (frit_device_is_host(name)) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "device: '%s' is the host, not a device backend", name ? name : "");
    return NULL;
  }
  dev_state *s = state_of(ctx);
  if (!s) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "device: out of memory");
    return NULL;
  }
  for (int i = 0; i < s->n; i++)
    if (strcmp(s->slots[i].name, name) == 0) return s->slots[i].dev;
  frit_device *d = NULL;
  frit_status st;
  if (strcmp(name, "opencl") == 0) st = frit_opencl_open(ctx, &d);
  else if (strcmp(name, "cuda") == 0) st = frit_cuda_open(ctx, &d);
  else
    st = frit_set_error(ctx, FRIT_ERR_INVALID, "device: unknown device '%s' (cpu, opencl, cuda)", name);
  if (st != FRIT_OK) return NULL;
  if (s->n == (int)(sizeof s->slots / sizeof s->slots[0])) {
    d->ops->close(d);
    frit_set_error(ctx, FRIT_ERR_INVALID, "device: too many devices open");
    return NULL;
  }
  snprintf(s->slots[s->n].name, sizeof s->slots[s->n].name, "%s", name);
  s->slots[s->n++].dev = d;
  return d;
}
