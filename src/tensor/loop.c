/* Host loops (Contract C, docs/control.md): LOOP with CARRY placeholders and AFTER(CARRY, LOOP)
 * results, carries that the body leaves unchanged dropped; and frit_indices. */
#include "tensor/kernel_build.h"

#include <stdio.h>

/* A 0-d integer start/end/step of a host loop, as i64. */
static frit_tensor *bound(frit_ctx *ctx, kb_state *st, const char *op, const char *what, frit_tensor *v) {
  char b[32];
  if (!ti_ok(ctx, op, &v, 1)) return NULL;
  const frit_shape *s = frit_shape_of(ctx, TI_U(v));
  if (!s) return NULL;
  if (s->ndim != 0) return ti_fail(ctx, op, &v, 1, "%s must be a 0-d tensor", what);
  if (!frit_dtype_is_int(TI_U(v)->dtype))
    return ti_fail(ctx, op, &v, 1, "%s has dtype %s: loop bounds must be integers", what, ti_dtname(TI_U(v)->dtype, b));
  if (kb_classify(ctx, st, TI_U(v), true) >= KB_SCALAR)
    return ti_fail(ctx, op, &v, 1, "%s is a kernel scalar; host loop bounds are tensor values", what);
  return ti_cast(ctx, v, FRIT_I64);
}

static bool const_of(const frit_tensor *t, int64_t *v) {
  if (TI_U(t)->op != FRIT_OP_CONST) return false;
  *v = TI_U(t)->arg.value.i;
  return true;
}

frit_status frit_host_loop_begin(frit_ctx *ctx, frit_tensor *start, frit_tensor *end, frit_tensor *step, int ncarry,
                                 frit_tensor *const *init, frit_tensor **index, frit_tensor **carry) {
  const char *op = "host_loop_begin";
  kb_state *st = kb_get(ctx, true);
  if (!st) return ctx->status;
  if (st->open) {
    kb_fail(ctx, op, NULL, 0, "inside kernel '%s': host loops cannot run inside a kernel (use frit_kernel_loop_begin)",
            st->name);
    return FRIT_ERR_INVALID;
  }
  if (ncarry < 0 || (ncarry > 0 && (!init || !carry))) {
    ti_fail(ctx, op, NULL, 0, "ncarry %d needs init and carry arrays", ncarry);
    return FRIT_ERR_INVALID;
  }
  frit_tensor *s = bound(ctx, st, op, "start", start);
  frit_tensor *e = s ? bound(ctx, st, op, "end", end) : NULL;
  frit_tensor *p = e ? bound(ctx, st, op, "step", step) : NULL;
  if (!p) return ctx->status != FRIT_OK ? ctx->status : FRIT_ERR_INVALID;
  for (int k = 0; k < ncarry; k++) {
    if (!ti_ok(ctx, op, &init[k], 1) || !frit_shape_of(ctx, TI_U(init[k])))
      return ctx->status != FRIT_OK ? ctx->status : FRIT_ERR_INVALID;
    if (kb_classify(ctx, st, TI_U(init[k]), true) >= KB_SCALAR) {
      ti_fail(ctx, op, &init[k], 1, "init %d is a kernel scalar; loop-carried values are tensors", k);
      return FRIT_ERR_INVALID;
    }
  }
  /* the index variable's bounds: exact when start, end (and step) are constants */
  int64_t sv, ev, pv, lo = INT64_MIN, hi = INT64_MAX;
  if (const_of(s, &sv) && const_of(e, &ev)) {
    lo = sv < ev ? sv : ev, hi = sv < ev ? ev : sv;
    if (const_of(p, &pv) && pv > 0) hi = sv < ev ? ev - 1 : sv;
    if (const_of(p, &pv) && pv < 0) lo = ev < sv ? ev + 1 : sv;
  }
  int64_t id = st->next_loop_id;
  char name[32];
  snprintf(name, sizeof name, "loop%lld", (long long)id);
  frit_uop *ivar = frit_var(ctx, name, lo, hi);
  if (!ivar || !frit_shape_of(ctx, ivar)) return ctx->status;
  frit_uop **in = calloc((size_t)ncarry + 1, sizeof *in), **cr = calloc((size_t)ncarry + 1, sizeof *cr);
  if (!in || !cr) {
    free(in), free(cr);
    return frit_set_error(ctx, FRIT_ERR_NOMEM, "out of memory");
  }
  for (int k = 0; k < ncarry; k++) {
    const frit_shape *sh = frit_shape_of(ctx, TI_U(init[k]));
    frit_arg a = frit_arg_none();
    a.i0 = id, a.i1 = k;
    in[k] = TI_U(init[k]);
    cr[k] = frit_uop_new(ctx, FRIT_OP_CARRY, in[k]->dtype, sh->dims, sh->ndim, &a);
    if (!cr[k] || !frit_shape_of(ctx, cr[k])) {
      free(in), free(cr);
      return ctx->status;
    }
  }
  if (st->nloops == st->caploops) {
    size_t cap = st->caploops ? st->caploops * 2 : 4;
    kb_host_loop *l = realloc(st->loops, cap * sizeof *l);
    if (!l) {
      free(in), free(cr);
      return frit_set_error(ctx, FRIT_ERR_NOMEM, "out of memory");
    }
    st->loops = l, st->caploops = cap;
  }
  st->loops[st->nloops++] = (kb_host_loop){id, TI_U(s), TI_U(e), TI_U(p), ivar, ncarry, in, cr};
  st->next_loop_id++;
  if (index) *index = TI_T(ivar);
  for (int k = 0; k < ncarry; k++) carry[k] = TI_T(cr[k]);
  return FRIT_OK;
}

/* Rebuilds the nodes reachable from `roots` that depend on the loop's CARRYs (all made at
 * loop begin, so only nodes with larger ids can), replacing CARRY k by subst[k]. */
typedef struct rebuild {
  frit_ctx *ctx;
  uint32_t base, limit;
  frit_uop **memo; /* by id - base */
  const kb_host_loop *loop;
  frit_uop *const *subst;
} rebuild;

static frit_uop *rebuild_node(rebuild *rb, frit_uop *root) {
  if (root->id < rb->base || root->id >= rb->limit) return root;
  kb_list stack = {0};
  bool ok = kb_list_push(&stack, root);
  while (ok && stack.n) {
    frit_uop *u = stack.v[stack.n - 1];
    if (rb->memo[u->id - rb->base]) {
      stack.n--;
      continue;
    }
    if (u->op == FRIT_OP_CARRY && u->arg.i0 == rb->loop->id) {
      rb->memo[u->id - rb->base] = rb->subst[u->arg.i1];
      stack.n--;
      continue;
    }
    bool pending = false;
    for (uint32_t i = 0; i < u->nsrc && ok; i++) {
      frit_uop *s = u->src[i];
      if (s->id >= rb->base && s->id < rb->limit && !rb->memo[s->id - rb->base]) ok = kb_list_push(&stack, s), pending = true;
    }
    if (pending || !ok) continue;
    frit_uop *tmp[64], **src = u->nsrc <= 64 ? tmp : malloc(u->nsrc * sizeof *src);
    if (!src) {
      ok = false;
      break;
    }
    for (uint32_t i = 0; i < u->nsrc; i++) {
      frit_uop *s = u->src[i];
      src[i] = s->id >= rb->base && s->id < rb->limit ? rb->memo[s->id - rb->base] : s;
    }
    frit_uop *n = frit_uop_replace_src(rb->ctx, u, src, (int)u->nsrc);
    if (src != tmp) free(src);
    if (!n || (u->shape && !frit_shape_of(rb->ctx, n))) {
      free(stack.v);
      return NULL;
    }
    rb->memo[u->id - rb->base] = n;
    stack.n--;
  }
  free(stack.v);
  if (!ok) {
    frit_set_error(rb->ctx, FRIT_ERR_NOMEM, "out of memory");
    return NULL;
  }
  return rb->memo[root->id - rb->base];
}

static bool same_shape(const frit_shape *a, const frit_shape *b) {
  if (a->ndim != b->ndim) return false;
  for (int i = 0; i < a->ndim; i++)
    if (!ti_dim_eq(a->dims[i], b->dims[i])) return false;
  return true;
}

frit_status frit_host_loop_end(frit_ctx *ctx, frit_tensor *const *next, frit_tensor *stop, frit_tensor **result) {
  const char *op = "host_loop_end";
  kb_state *st = kb_get(ctx, false);
  if (!st || !st->nloops) {
    ti_fail(ctx, op, NULL, 0, "no open host loop (frit_host_loop_begin opens one)");
    return FRIT_ERR_INVALID;
  }
  if (st->open) {
    kb_fail(ctx, op, NULL, 0, "kernel '%s' is still open inside the loop (close it with frit_kernel_end first)", st->name);
    return FRIT_ERR_INVALID;
  }
  kb_host_loop *L = &st->loops[st->nloops - 1];
  int k = L->k;
  if (k > 0 && (!next || !result)) {
    ti_fail(ctx, op, NULL, 0, "next and result arrays are needed for %d carried values", k);
    return FRIT_ERR_INVALID;
  }
  for (int j = 0; j < k; j++) {
    frit_tensor *pair[2] = {TI_T(L->init[j]), next[j]};
    if (!ti_ok(ctx, op, &next[j], 1) || !frit_shape_of(ctx, TI_U(next[j])))
      return ctx->status != FRIT_OK ? ctx->status : FRIT_ERR_INVALID;
    if (TI_U(next[j])->dtype != L->init[j]->dtype ||
        !same_shape(frit_shape_of(ctx, L->init[j]), frit_shape_of(ctx, TI_U(next[j])))) {
      ti_fail(ctx, op, pair, 2, "carried value %d: next must have init's shape and dtype", j);
      return FRIT_ERR_INVALID;
    }
    if (kb_classify(ctx, st, TI_U(next[j]), true) >= KB_SCALAR) {
      ti_fail(ctx, op, &next[j], 1, "next %d is a kernel scalar; loop-carried values are tensors", j);
      return FRIT_ERR_INVALID;
    }
  }
  frit_uop *stop_u;
  if (stop) {
    const frit_shape *s = frit_shape_of(ctx, TI_U(stop));
    if (!s) return ctx->status;
    if (s->ndim != 0 || TI_U(stop)->dtype != FRIT_BOOL) {
      ti_fail(ctx, op, &stop, 1, "stop must be a 0-d bool tensor");
      return FRIT_ERR_INVALID;
    }
    stop_u = TI_U(stop);
  } else if (!(stop_u = frit_const_int(ctx, FRIT_BOOL, 0)) || !frit_shape_of(ctx, stop_u)) {
    return ctx->status;
  }
  /* carries the body leaves unchanged are dropped: the loop does not touch them */
  int kept = 0;
  for (int j = 0; j < k; j++) kept += TI_U(next[j]) != L->carry[j];
  frit_status rc = FRIT_OK;
  frit_uop **subst = calloc((size_t)k + 1, sizeof *subst), **src = calloc(5 + 3 * (size_t)kept, sizeof *src);
  frit_uop **res = calloc((size_t)k + 1, sizeof *res);
  rebuild rb = {ctx, 0, 0, NULL, L, subst};
  if (!subst || !src || !res) {
    rc = frit_set_error(ctx, FRIT_ERR_NOMEM, "out of memory");
    goto done;
  }
  if (kept == 0) {
    for (int j = 0; j < k; j++) res[j] = L->init[j];
    goto commit;
  }
  frit_uop **P = src + 4, **I = P + kept, **N = I + kept;
  int slot = 0;
  for (int j = 0; j < k; j++) {
    if (TI_U(next[j]) == L->carry[j]) {
      subst[j] = L->init[j];
      continue;
    }
    if (slot == j) {
      subst[j] = L->carry[j];
    } else { /* renumbered: slots count the kept carries */
      frit_arg a = L->carry[j]->arg;
      a.i1 = slot;
      subst[j] = frit_uop_new(ctx, FRIT_OP_CARRY, L->carry[j]->dtype, L->carry[j]->src, (int)L->carry[j]->nsrc, &a);
      if (!subst[j] || !frit_shape_of(ctx, subst[j])) {
        rc = ctx->status;
        goto done;
      }
    }
    P[slot] = subst[j];
    I[slot] = L->init[j];
    slot++;
  }
  bool renumber = kept < k;
  if (renumber) {
    rb.base = k ? L->carry[0]->id : 0;
    rb.limit = (uint32_t)ctx->count;
    rb.memo = calloc((size_t)(rb.limit - rb.base) + 1, sizeof *rb.memo);
    if (!rb.memo) {
      rc = frit_set_error(ctx, FRIT_ERR_NOMEM, "out of memory");
      goto done;
    }
  }
  slot = 0;
  for (int j = 0; j < k; j++) {
    if (TI_U(next[j]) == L->carry[j]) continue;
    N[slot] = renumber ? rebuild_node(&rb, TI_U(next[j])) : TI_U(next[j]);
    if (!N[slot++]) {
      rc = ctx->status;
      goto done;
    }
  }
  frit_uop *stop_r = renumber ? rebuild_node(&rb, stop_u) : stop_u;
  if (!stop_r) {
    rc = ctx->status;
    goto done;
  }
  src[0] = L->start, src[1] = L->end, src[2] = L->step, src[3] = L->ivar;
  src[4 + 3 * kept] = stop_r;
  frit_arg a = frit_arg_none();
  a.i0 = kept, a.i1 = L->id;
  frit_uop *loop = frit_uop_new(ctx, FRIT_OP_LOOP, FRIT_VOID, src, 5 + 3 * kept, &a);
  if (!loop) {
    rc = ctx->status;
    goto done;
  }
  for (int j = 0; j < k; j++) {
    if (TI_U(next[j]) == L->carry[j]) {
      res[j] = L->init[j];
      continue;
    }
    frit_uop *as[2] = {subst[j], loop};
    res[j] = frit_uop_new(ctx, FRIT_OP_AFTER, subst[j]->dtype, as, 2, NULL);
    if (!res[j] || !frit_shape_of(ctx, res[j])) {
      rc = ctx->status;
      goto done;
    }
  }
commit:
  for (int j = 0; j < k; j++) result[j] = TI_T(res[j]);
  free(L->init);
  free(L->carry);
  st->nloops--;
done:
  free(rb.memo);
  free(subst);
  free(src);
  free(res);
  return rc;
}

/* ---------- index arrays ---------- */

frit_status frit_indices(frit_ctx *ctx, int ndim, frit_uop *const *dims, frit_tensor **out) {
  const char *op = "indices";
  frit_status dst = ti_check_dim_list(ctx, op, ndim, dims, out, "out");
  if (dst != FRIT_OK) return dst;
  frit_tensor *like = ti_full(ctx, FRIT_I64, (frit_scalar){.i = 0}, ndim, dims), *r[FRIT_MAX_DIMS];
  for (int a = 0; a < ndim; a++)
    if (!(r[a] = ti_axis_index(ctx, like, a))) return ctx->status != FRIT_OK ? ctx->status : FRIT_ERR_INVALID;
  for (int a = 0; a < ndim; a++) out[a] = r[a];
  return FRIT_OK;
}
