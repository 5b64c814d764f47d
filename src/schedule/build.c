/* frit_schedule_build: the tensor graph's realize decisions (realize.c) turned into kernels (rangeify,
 * siblings, explicit kernels, host loops), their names, the buffer table and the memory plan. */
#include "dist/dist.h"
#include "schedule/sched_internal.h"

#include <stdio.h>
#include <stdlib.h>

static bool has_sib(const sched_kspec *ks, const frit_uop *b) {
  for (int k = 0; k < ks->nsib; k++)
    if (ks->sib[k] == b) return true;
  return false;
}

/* ---------- names ---------- */

static const char *op_label(const frit_uop *u, bool *compute) {
  static const struct { frit_op op; const char *red, *scan; } names[] = {
      {FRIT_OP_ADD, "sum", "cumsum"}, {FRIT_OP_MUL, "prod", "cumprod"}, {FRIT_OP_MAX, "max", "cummax"},
      {FRIT_OP_MIN, "min", "cummin"}, {FRIT_OP_AND, "all", "scan_and"}, {FRIT_OP_OR, "any", "scan_or"}};
  *compute = true;
  if (u->op == FRIT_OP_REDUCE_AXIS || u->op == FRIT_OP_SCAN) {
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
      if ((int64_t)names[i].op == u->arg.i0) return u->op == FRIT_OP_SCAN ? names[i].scan : names[i].red;
    return u->op == FRIT_OP_SCAN ? "scan" : "reduce";
  }
  if (u->op == FRIT_OP_SCATTER) {
    static const char *const modes[] = {"scatter_add", "scatter_min", "scatter_max", "scatter_and",
                                        "scatter_or", "scatter_xor", "scatter_set"};
    return u->arg.i0 >= 0 && u->arg.i0 < FRIT_ATOMIC_COUNT_ ? modes[u->arg.i0] : "scatter";
  }
  if (u->op == FRIT_OP_COLLECTIVE) return frit_coll_kind_name((int)u->arg.i0);
  *compute = !(frit_op_flags((frit_op)u->op) & FRIT_F_MOVEMENT) && u->op != FRIT_OP_CONTIGUOUS;
  if (u->op == FRIT_OP_GATHER) *compute = true;
  return frit_op_name((frit_op)u->op);
}

/* "mul,add,sum": the ops folded into the kernel of root, in graph order. */
static void kernel_ops(frit_ctx *ctx, sched_graph *g, frit_uop *root, bool load_root, char *out, size_t cap) {
  uint8_t *seen = calloc((size_t)root->id + 1, 1);
  frit_uop **st = malloc(((size_t)root->id + 2) * sizeof *st);
  uint8_t *inc = calloc((size_t)root->id + 1, 1);
  out[0] = 0;
  if (!seen || !st || !inc) goto done;
  size_t sp = 0;
  if (!load_root) st[sp++] = root, seen[root->id] = 1;
  while (sp) {
    frit_uop *u = st[--sp];
    if (sched_is_leaf(u)) continue;
    inc[u->id] = 1;
    for (uint32_t i = u->op == FRIT_OP_SCATTER ? 1 : 0; i < u->nsrc; i++) {
      frit_uop *s = u->src[i];
      if (!sched_is_tensor_src(u, i) || seen[s->id] || sched_graph_is_real(g, s)) continue;
      seen[s->id] = 1;
      st[sp++] = s;
    }
  }
  for (int pass = 0; pass < 2 && !out[0]; pass++) {
    size_t len = 0;
    for (uint32_t id = 0; id <= root->id; id++) {
      if (!inc[id]) continue;
      bool compute;
      const char *lab = op_label(frit_node_by_id(ctx, id), &compute);
      if (compute != (pass == 0)) continue;
      char low[32];
      size_t l = strlen(lab);
      if (l >= sizeof low) l = sizeof low - 1;
      for (size_t i = 0; i < l; i++) low[i] = (char)(lab[i] >= 'A' && lab[i] <= 'Z' ? lab[i] - 'A' + 'a' : lab[i]);
      low[l] = 0;
      /* each name once */
      bool dup = false;
      for (const char *p = out; *p && !dup; p = strchr(p, ',') ? strchr(p, ',') + 1 : p + strlen(p))
        dup = strncmp(p, low, l) == 0 && (p[l] == ',' || p[l] == 0);
      if (dup || len + l + 2 >= cap) continue;
      if (len) out[len++] = ',';
      memcpy(out + len, low, l + 1);
      len += l;
    }
  }
  if (!out[0]) snprintf(out, cap, "copy");
  if (root->op == FRIT_OP_SCATTER && !load_root) { /* name the kernel after the scatter */
    bool compute;
    const char *lab = op_label(root, &compute);
    size_t l = strlen(lab), n = strlen(out);
    char *p = strstr(out, lab);
    if (p && (p == out || p[-1] == ',') && (p[l] == ',' || p[l] == 0) && p != out && n + 1 < cap) {
      memmove(p - 1, p + l, strlen(p + l) + 1); /* drop ",label" */
      n = strlen(out);
      if (n + l + 2 < cap) {
        memmove(out + l + 1, out, n + 1);
        memcpy(out, lab, l);
        out[l] = ',';
      }
    }
  }
done:
  free(seen);
  free(st);
  free(inc);
}

/* A collective's kernel reads one buffer and writes one: the exchange's source and destination. */
static frit_status collective_params(frit_ctx *ctx, const frit_uop *root, frit_sched_kernel *K, int seq) {
  K->coll_in = K->coll_out = -1;
  for (int p = 0; p < K->nparams; p++) {
    int *slot = K->param_written[p] ? &K->coll_out : &K->coll_in;
    if (*slot >= 0)
      return frit_set_error(ctx, FRIT_ERR_INVALID, "schedule: a collective's kernel has more than one %s buffer",
                            K->param_written[p] ? "output" : "input");
    *slot = p;
  }
  if (K->coll_in < 0 || K->coll_out < 0)
    return frit_set_error(ctx, FRIT_ERR_INVALID, "schedule: a collective's kernel needs an input and an output buffer");
  K->collective = root;
  K->coll_seq = seq;
  return FRIT_OK;
}

static const char *kernel_name(frit_ctx *ctx, int k, const char *ops) {
  char buf[96];
  int len = snprintf(buf, sizeof buf, "k%d", k);
  int nops = 0;
  for (const char *p = ops; *p && nops < 3 && len < 80; nops++) {
    const char *e = strchr(p, ',');
    size_t l = e ? (size_t)(e - p) : strlen(p);
    len += snprintf(buf + len, sizeof buf - (size_t)len, "_%.*s", (int)(l > 16 ? 16 : l), p);
    p = e ? e + 1 : p + l;
  }
  char *s = frit_arena_alloc(&ctx->arena, strlen(buf) + 1);
  if (s) strcpy(s, buf);
  return s;
}

static const char *arena_str(frit_ctx *ctx, const char *src) {
  char *s = frit_arena_alloc(&ctx->arena, strlen(src) + 1);
  if (s) strcpy(s, src);
  return s;
}

/* ---------- build ---------- */

/* Without host loops kernels run in node order (a realized node's kernels at its place, an
 * explicit kernel's copies and itself at the KERNEL's). Is every kernel that reads t through
 * user v (a fused v: the kernels it fuses into) before K, so done with t when K overwrites it?
 * Conservative: false when the search grows large. */
static bool read_before(const sched_graph *g, frit_uop *v, const frit_uop *t, const frit_uop *k) {
  enum { CAP = 256 };
  frit_uop *st[CAP];
  int sp = 0, visits = 0;
  st[sp++] = v;
  while (sp) {
    frit_uop *u = st[--sp];
    if (++visits > 4 * CAP || u->op == FRIT_OP_LOOP || u->op == FRIT_OP_CARRY) return false;
    uint32_t at;
    if (u->op == FRIT_OP_KERNEL) at = u->id;
    else if (sched_is_kversion(u)) at = u->src[1]->id; /* its copy kernel runs with its KERNEL */
    else if (g->real[u->id]) at = u->id;
    else { /* fused: read wherever its value goes */
      uint32_t p = g->pos[u->id];
      for (uint32_t j = 0; j < g->ulen[p]; j++) {
        if (sp == CAP) return false;
        st[sp++] = g->list[g->users[g->uoff[p] + j]];
      }
      continue;
    }
    if (at >= k->id) return false;
  }
  (void)t;
  return true;
}

/* Explicit kernels: may AFTER(t, K) be written in t's own buffer (no copy)? Only when nothing
 * still reads t: t is realized by this schedule (not an input or output), its other users are
 * K, this AFTER and readers whose kernels all run before K, and K reads it only through element
 * addresses (docs/schedule.md). */
static bool version_in_place(const sched_graph *g, const sched_state *st, frit_uop *a, frit_uop *const *outs, int n) {
  frit_uop *t = a->src[0], *k = a->src[1];
  if (sched_is_leaf(t) || !g->in[t->id] || (!g->real[t->id] && !sched_in_slot(t))) return false;
  if (!sched_loops_inplace_ok(st, t, k)) return false; /* loop.c: not a value the next iteration needs */
  for (int j = 0; j < n; j++)
    if (outs[j] == t) return false;
  uint32_t p = g->pos[t->id];
  for (uint32_t j = 0; j < g->ulen[p]; j++) {
    frit_uop *v = g->list[g->users[g->uoff[p] + j]];
    if (v != k && v != a && sched_loops_user_reads(v, t) && !(st->loops == NULL && read_before(g, v, t, k)))
      return false;
  }
  return !sched_ek_scalar_use(st, k, t);
}

/* A buffer a kernel may overwrite in place: a TEMP of this schedule. */
static bool buffer_reusable(const frit_sched_buf *bufs, int b) { return b >= 0 && bufs[b].kind == FRIT_BUF_TEMP; }

static frit_status add_buf(frit_ctx *ctx, frit_sched_buf **bufs, int *nb, int *cap, frit_uop *t, int kind, int io);
frit_status sched_add_buf(frit_ctx *ctx, frit_sched_buf **bufs, int *nb, int *cap, frit_uop *t, int kind, int io) {
  return add_buf(ctx, bufs, nb, cap, t, kind, io);
}

static frit_status add_buf(frit_ctx *ctx, frit_sched_buf **bufs, int *nb, int *cap, frit_uop *t, int kind, int io) {
  if (*nb == *cap) {
    int c = *cap ? 2 * *cap : 16;
    frit_sched_buf *nbufs = realloc(*bufs, (size_t)c * sizeof *nbufs);
    if (!nbufs) return frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
    *bufs = nbufs, *cap = c;
  }
  const frit_shape *s = frit_shape_of(ctx, t);
  frit_uop *numel = s ? frit_shape_numel(ctx, s) : NULL;
  if (!numel) return frit_last_status(ctx);
  frit_sched_buf *b = &(*bufs)[(*nb)++];
  memset(b, 0, sizeof *b);
  b->dtype = t->dtype;
  b->numel = numel;
  b->kind = kind;
  b->io_index = io;
  b->first_use = b->last_use = -1;
  b->arena_offset = -1;
  b->tensor = t;
  b->ndim = s->ndim;
  b->dims = (frit_uop **)s->dims;
  return FRIT_OK;
}

static int cmp_input(const void *a, const void *b) {
  const frit_uop *x = *(frit_uop *const *)a, *y = *(frit_uop *const *)b;
  if (x->arg.i0 != y->arg.i0) return x->arg.i0 < y->arg.i0 ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_var(const void *a, const void *b) {
  const frit_uop *x = *(frit_uop *const *)a, *y = *(frit_uop *const *)b;
  return strcmp((const char *)x->arg.blob, (const char *)y->arg.blob);
}

/* The DEFINE_VARs below root, added to vars (deduplicated). */
static frit_status collect_vars(frit_ctx *ctx, frit_uop *root, frit_uop ***vars, int *nv, int *cap) {
  uint8_t *seen = calloc((size_t)root->id + 1, 1);
  frit_uop **st = malloc(((size_t)root->id + 2) * sizeof *st);
  frit_status rc = FRIT_OK;
  if (!seen || !st) {
    rc = frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
    goto done;
  }
  size_t sp = 0;
  st[sp++] = root, seen[root->id] = 1;
  while (sp) {
    frit_uop *u = st[--sp];
    if (u->op == FRIT_OP_DEFINE_VAR) {
      bool have = false;
      for (int i = 0; i < *nv && !have; i++) have = (*vars)[i] == u;
      if (!have) {
        if (*nv == *cap) {
          int c = *cap ? 2 * *cap : 8;
          frit_uop **nvs = realloc(*vars, (size_t)c * sizeof *nvs);
          if (!nvs) {
            rc = frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
            goto done;
          }
          *vars = nvs, *cap = c;
        }
        (*vars)[(*nv)++] = u;
      }
    }
    for (uint32_t i = 0; i < u->nsrc; i++)
      if (!seen[u->src[i]->id]) seen[u->src[i]->id] = 1, st[sp++] = u->src[i];
  }
done:
  free(seen);
  free(st);
  return rc;
}

frit_schedule *frit_schedule_build(frit_ctx *ctx, frit_uop *const *outputs, int n, int no_fusion) {
  return frit_schedule_build_bounds(ctx, outputs, n, no_fusion, FRIT_BOUNDS_CLAMP);
}

frit_schedule *frit_schedule_build_bounds(frit_ctx *ctx, frit_uop *const *outputs, int n, int no_fusion,
                                          int bounds) {
  if (!ctx) return NULL;
  if (bounds < FRIT_BOUNDS_CLAMP || bounds > FRIT_BOUNDS_UNCHECKED) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "schedule: unknown bounds policy %d", bounds);
    return NULL;
  }
  if (n <= 0 || !outputs) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "schedule: no outputs");
    return NULL;
  }
  for (int k = 0; k < n; k++)
    if (!outputs[k] || !frit_shape_of(ctx, outputs[k])) {
      if (frit_last_status(ctx) == FRIT_OK) frit_set_error(ctx, FRIT_ERR_INVALID, "schedule: output %d is NULL", k);
      return NULL;
    }
  frit_schedule *S = NULL;
  sched_graph g;
  memset(&g, 0, sizeof g);
  sched_state st;
  memset(&st, 0, sizeof st);
  st.ctx = ctx;
  st.bounds = bounds;
  st.err_buf = -1;
  frit_sched_buf *bufs = NULL;
  sched_kspec *specs = NULL;
  frit_uop **inputs = NULL, **vars = NULL, **extra = NULL, **roots = NULL;
  int32_t *host_of = NULL; /* rule 3: by node id, the root of the kernel storing this output too */
  int nb = 0, capb = 0, nspec = 0, nv = 0, capv = 0, nextra = 0;
  frit_sched_kernel *kernels = NULL;
  const char **amsgs = NULL;
  /* explicit kernels: versions nobody reads are still written, so they are collected too */
  if (sched_ek_prepare(&st, outputs, n, &extra, &nextra) != FRIT_OK) goto fail;
  uint32_t nids = (uint32_t)frit_node_count(ctx);
  if (!(roots = malloc((size_t)(n + nextra) * sizeof *roots))) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
    goto fail;
  }
  memcpy(roots, outputs, (size_t)n * sizeof *roots);
  if (nextra) memcpy(roots + n, extra, (size_t)nextra * sizeof *roots);
  if (sched_collect(ctx, &g, roots, n + nextra, nids) != FRIT_OK || sched_decide(ctx, &g, outputs, n, no_fusion) != FRIT_OK)
    goto fail;
  st.ctx = ctx;
  if (sched_loops_decide(&st, g.list, g.n, g.real, outputs, n) != FRIT_OK) goto fail; /* host loops */
  /* rule 3: sibling outputs (not across host loops or explicit kernels, whose order is their own) */
  if (!no_fusion && !st.ek && !st.loops) {
    if (!(host_of = malloc((size_t)nids * sizeof *host_of))) {
      frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
      goto fail;
    }
    for (uint32_t id = 0; id < nids; id++) host_of[id] = -1;
    sched_compute_heavy(&g);
    if (sched_find_siblings(ctx, g.real, g.heavy, outputs, n, host_of) != FRIT_OK) goto fail;
  }

  /* buffer table: inputs (by input number), outputs, then temps in kernel order */
  st.buf_of = malloc((size_t)nids * sizeof *st.buf_of);
  inputs = malloc((g.n + 1) * sizeof *inputs);
  specs = malloc((2 * g.n + (size_t)n + 1) * sizeof *specs);
  if (!st.buf_of || !inputs || !specs) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
    goto fail;
  }
  for (uint32_t id = 0; id < nids; id++) st.buf_of[id] = -1;
  int ninputs = 0;
  for (size_t i = 0; i < g.n; i++)
    if (g.list[i]->op == FRIT_OP_BUFFER) inputs[ninputs++] = g.list[i];
  qsort(inputs, (size_t)ninputs, sizeof *inputs, cmp_input);
  for (int i = 0; i < ninputs; i++) {
    st.buf_of[inputs[i]->id] = nb;
    if (add_buf(ctx, &bufs, &nb, &capb, inputs[i], FRIT_BUF_INPUT, i) != FRIT_OK) goto fail;
  }
  int first_out = nb;
  for (int k = 0; k < n; k++) {
    frit_uop *t = outputs[k];
    if (add_buf(ctx, &bufs, &nb, &capb, t, FRIT_BUF_OUTPUT, k) != FRIT_OK) goto fail;
    if (!sched_is_leaf(t) && st.buf_of[t->id] < 0) st.buf_of[t->id] = nb - 1;
  }
  if (sched_loops_buffers(&st, &bufs, &nb, &capb) != FRIT_OK) goto fail; /* host loops: slots */
  /* an output version AFTER(t, K) written in place: t (and its own in-place chain) lives in the
   * output buffer from the start, so that no copy is needed at the end */
  for (int k = 0; k < n; k++)
    for (frit_uop *u = outputs[k]; sched_is_kversion(u) && st.buf_of[u->id] >= 0;) {
      frit_uop *t = u->src[0];
      if (st.buf_of[t->id] >= 0 || (t->op == FRIT_OP_AFTER && !sched_is_kversion(t)) ||
          !version_in_place(&g, &st, u, outputs, n))
        break;
      st.buf_of[t->id] = st.buf_of[u->id];
      u = t;
    }
  for (size_t i = 0; i < g.n; i++) {
    frit_uop *u = g.list[i];
    if (u->op == FRIT_OP_KERNEL) {
      /* each version AFTER(t, K) gets a buffer holding t before K runs: t's own (in place) or a
       * copy made by a kernel just before K */
      frit_uop *const *vs;
      int nvs = sched_ek_versions(&st, u, &vs);
      for (int j = 0; j < nvs; j++) {
        frit_uop *a = vs[j];
        int tb = st.buf_of[a->src[0]->id];
        bool inplace = version_in_place(&g, &st, a, outputs, n) && tb >= 0 &&
                       (tb == st.buf_of[a->id] || (st.buf_of[a->id] < 0 && buffer_reusable(bufs, tb)));
        if (st.buf_of[a->id] < 0) {
          if (inplace) st.buf_of[a->id] = tb;
          else {
            st.buf_of[a->id] = nb;
            if (add_buf(ctx, &bufs, &nb, &capb, a, FRIT_BUF_TEMP, -1) != FRIT_OK) goto fail;
          }
        }
        if (!inplace && !sched_ek_fully_stored(&st, a)) /* K overwrites every element first: no copy */
          specs[nspec++] = (sched_kspec){.root = a, .out_buf = st.buf_of[a->id], .scatter = 1};
      }
      specs[nspec++] = (sched_kspec){.root = u, .out_buf = -1, .ekernel = 1};
      continue;
    }
    if (sched_is_kversion(u)) continue; /* its buffer came with its kernel */
    if (!g.real[u->id] || sched_is_leaf(u)) continue;
    if (st.buf_of[u->id] < 0) {
      st.buf_of[u->id] = nb;
      if (add_buf(ctx, &bufs, &nb, &capb, u, FRIT_BUF_TEMP, -1) != FRIT_OK) goto fail;
    }
    if (u->op == FRIT_OP_SCATTER) {
      /* two kernels into one buffer: a copy of x, then the in-order updates */
      specs[nspec++] = (sched_kspec){.root = u, .out_buf = st.buf_of[u->id], .scatter = 1};
      specs[nspec++] = (sched_kspec){.root = u, .out_buf = st.buf_of[u->id], .scatter = 2};
      continue;
    }
    if (host_of && host_of[u->id] >= 0) continue; /* stored by its host's kernel */
    sched_kspec ks = {.root = u, .out_buf = st.buf_of[u->id], .load_root = false};
    for (int k = 0; host_of && k < n; k++) {
      frit_uop *b = outputs[k];
      if (host_of[b->id] != (int32_t)u->id || st.buf_of[b->id] != first_out + k || ks.nsib == SCHED_MAX_SIB) continue;
      ks.sib_buf[ks.nsib] = first_out + k;
      ks.sib[ks.nsib++] = b;
    }
    for (int k = 0; host_of && k < n; k++) /* past the limit: a kernel of its own after all */
      if (host_of[outputs[k]->id] == (int32_t)u->id && !has_sib(&ks, outputs[k])) host_of[outputs[k]->id] = -1;
    specs[nspec++] = ks;
  }
  int nplain = nspec;
  /* outputs that are inputs, constants, or the same node twice get a copy kernel */
  for (int k = 0; k < n; k++) {
    frit_uop *t = outputs[k];
    if (!sched_is_leaf(t) && st.buf_of[t->id] == first_out + k) continue;
    specs[nspec++] = (sched_kspec){.root = t, .out_buf = first_out + k, .load_root = !sched_is_leaf(t)};
  }

  /* host loops: execution order, init and next copies, the step list */
  if (sched_loops_order(&st, &bufs, &nb, &capb, &specs, &nspec, nplain) != FRIT_OK) goto fail;

  /* bounds policy CHECK: the i32 error buffer of explicit kernels */
  if (bounds == FRIT_BOUNDS_CHECK && st.ek) {
    frit_uop *zero = frit_const_int(ctx, FRIT_I32, 0);
    if (!zero || add_buf(ctx, &bufs, &nb, &capb, zero, FRIT_BUF_TEMP, -1) != FRIT_OK) goto fail;
    st.err_buf = nb - 1;
  }

  /* kernels */
  st.ctx = ctx;
  st.no_fusion = no_fusion;
  st.nids = nids;
  st.bufs = bufs;
  if (!(st.rules = sched_rangeify_rules(ctx))) goto fail;
  kernels = calloc((size_t)nspec + 1, sizeof *kernels);
  if (!kernels) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
    goto fail;
  }
  int ncoll = 0;
  for (int k = 0; k < nspec; k++) {
    if (specs[k].ekernel) { /* explicit kernel: ekernel.c names it */
      if (sched_ekernel(&st, &specs[k], k, &kernels[k]) != FRIT_OK) goto fail;
    } else {
      if (sched_rangeify(&st, &specs[k], &kernels[k]) != FRIT_OK) goto fail;
      char ops[256];
      if (specs[k].scatter == 1) { /* the copy of x (SCATTER) or of the old version (AFTER) */
        frit_uop *x = specs[k].root->src[0];
        kernel_ops(ctx, &g, x, sched_graph_is_real(&g, x), ops, sizeof ops);
      } else {
        kernel_ops(ctx, &g, specs[k].root, specs[k].load_root, ops, sizeof ops);
        for (int j = 0; j < specs[k].nsib; j++) { /* "ops of root;ops of sibling" */
          size_t len = strlen(ops);
          if (len + 2 >= sizeof ops) break;
          ops[len] = ';';
          kernel_ops(ctx, &g, specs[k].sib[j], false, ops + len + 1, sizeof ops - len - 1);
        }
      }
      if (specs[k].root->op == FRIT_OP_COLLECTIVE && !specs[k].load_root && !specs[k].scatter &&
          collective_params(ctx, specs[k].root, &kernels[k], ncoll++) != FRIT_OK)
        goto fail;
      kernels[k].ops = arena_str(ctx, ops);
      kernels[k].name = kernel_name(ctx, k, ops);
    }
    if (!kernels[k].ops || !kernels[k].name) {
      frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
      goto fail;
    }
    if (collect_vars(ctx, kernels[k].ast, &vars, &nv, &capv) != FRIT_OK) goto fail;
  }
  bool hoisted = ncoll && !st.loops && !st.ek; /* exchanges overlap the kernels after them */
  if (hoisted) {
    if (sched_hoist_collectives(ctx, kernels, nspec, bufs, nb) != FRIT_OK) goto fail;
    for (int k = 0; k < nspec; k++)
      if (!(kernels[k].name = kernel_name(ctx, k, kernels[k].ops))) {
        frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
        goto fail;
      }
  }
  for (int k = 0; k < nspec; k++) /* liveness, in the final kernel order */
    for (int p = 0; p < kernels[k].nparams; p++) {
      frit_sched_buf *b = &bufs[kernels[k].param_buf[p]];
      if (b->first_use < 0) b->first_use = k;
      b->last_use = k;
    }
  if (hoisted) sched_keep_collective_sources(kernels, nspec, bufs);
  for (int b = 0; b < nb; b++) {
    if (collect_vars(ctx, bufs[b].numel, &vars, &nv, &capv) != FRIT_OK) goto fail;
    for (int d = 0; d < bufs[b].ndim; d++)
      if (collect_vars(ctx, bufs[b].dims[d], &vars, &nv, &capv) != FRIT_OK) goto fail;
  }
  if (nv > 1) qsort(vars, (size_t)nv, sizeof *vars, cmp_var);
  if (st.err_buf >= 0) { /* read by the runtime after every kernel: live throughout */
    bufs[st.err_buf].first_use = 0;
    bufs[st.err_buf].last_use = nspec - 1;
  }

  /* move everything into the context's arena */
  S = frit_arena_alloc(&ctx->arena, sizeof *S);
  frit_sched_kernel *ak = frit_arena_alloc(&ctx->arena, (size_t)(nspec + 1) * sizeof *ak);
  frit_sched_buf *ab = frit_arena_alloc(&ctx->arena, (size_t)(nb + 1) * sizeof *ab);
  frit_uop **av = frit_arena_alloc(&ctx->arena, (size_t)(nv + 1) * sizeof *av);
  int *ib = frit_arena_alloc(&ctx->arena, (size_t)(ninputs + 1) * sizeof *ib);
  int *ob = frit_arena_alloc(&ctx->arena, (size_t)(n + 1) * sizeof *ob);
  amsgs = frit_arena_alloc(&ctx->arena, (size_t)(st.nerr_msgs + 1) * sizeof *amsgs);
  if (!S || !ak || !ab || !av || !ib || !ob || !amsgs) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
    S = NULL;
    goto fail;
  }
  memcpy(ak, kernels, (size_t)nspec * sizeof *ak);
  memcpy(ab, bufs, (size_t)nb * sizeof *ab);
  if (nv) memcpy(av, vars, (size_t)nv * sizeof *av);
  for (int i = 0; i < ninputs; i++) ib[i] = i;
  for (int k = 0; k < n; k++) ob[k] = first_out + k;
  if (st.nerr_msgs) memcpy(amsgs, st.err_msgs, (size_t)st.nerr_msgs * sizeof *amsgs);
  *S = (frit_schedule){.kernels = ak, .nkernels = nspec, .bufs = ab, .nbufs = nb, .vars = av, .nvars = nv,
                       .ninputs = ninputs, .noutputs = n, .input_buf = ib, .output_buf = ob, .arena_bytes = -1,
                       .no_fusion = no_fusion, .err_buf = st.err_buf, .err_msgs = amsgs,
                       .nerr_msgs = st.nerr_msgs};
  if (sched_loops_finish(&st, S) != FRIT_OK) goto fail; /* steps, loop variables, liveness */
  sched_plan_static(ctx, S);
  sched_mark_alias(S);
  goto done;
fail:
  S = NULL;
done:
  free(g.list), free(g.in), free(g.real), free(g.heavy), free(g.costly), free(g.rowcast), free(g.mark), free(g.uoff), free(g.ulen), free(g.users), free(g.pos);
  free(st.buf_of), free(st.params), free(st.err_msgs);
  sched_ek_free(&st);
  sched_loops_free(&st);
  free(bufs), free(specs), free(inputs), free(vars), free(kernels), free(extra), free(roots), free(host_of);
  return S;
}
