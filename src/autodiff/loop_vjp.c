/* The vector-Jacobian product of a host loop (LOOP with its AFTER results): a reverse host loop
 * whose body is the VJP of the forward body, fed by checkpoints of the carried values. */
#include "autodiff/autodiff.h"
#include "tensor/kernel_build.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copies of the loop body with some nodes replaced (the carries, the index, captured values).
 * Only nodes created after the loop began (ids >= base) can depend on its placeholders, so the
 * copy never descends below base. Nested LOOPs are copied with fresh loop ids: two LOOPs sharing
 * CARRY placeholders would alias each other's state. */
typedef struct clone {
  frit_ctx *ctx;
  kb_state *st;
  uint32_t base, limit;
  frit_uop **memo; /* by id, < limit */
  bool *fixed;     /* by id: memo entries set by the caller (substitutions) */
  int probing;       /* > 0: finding out whether a nested loop changes */
  uint32_t probe_lo; /* while probing: nodes from here on may be copied again (nothing recorded) */
  bool collect;    /* record the captured float values (ext) */
  bool *seen;      /* by id: already in ext */
  kb_list ext;
} clone;

static frit_uop *clone_node(clone *cl, frit_uop *u);

static bool note_ext(clone *cl, frit_uop *owner, uint32_t i, frit_uop *s) {
  /* a CARRY is a placeholder valid only in its loop's body, never a captured value */
  if (!cl->collect || (cl->probing && owner->id >= cl->probe_lo) || s->op == FRIT_OP_CARRY || !frit_is_tensor_src(owner, i) ||
      !ad_dtype_carries(s->dtype) || cl->seen[s->id])
    return true;
  cl->seen[s->id] = true;
  if (!kb_list_push(&cl->ext, s)) {
    frit_set_error(cl->ctx, FRIT_ERR_NOMEM, "out of memory");
    return false;
  }
  return true;
}

/* A nested loop is copied only when it depends on the substituted nodes: one that does not is
 * a captured value like any other (and is not recomputed by the reverse pass). */
static frit_uop *clone_loop(clone *cl, frit_uop *L) {
  frit_ctx *ctx = cl->ctx;
  int k = (int)L->arg.i0, n = 5 + 3 * k;
  bool changed = false;
  uint32_t lo = L->src[3]->id, saved_lo = cl->probe_lo;
  for (int j = 0; j < k; j++) lo = L->src[4 + j]->id < lo ? L->src[4 + j]->id : lo;
  cl->probe_lo = cl->probing && saved_lo < lo ? saved_lo : lo;
  cl->probing++;
  for (int i = 0; i < n; i++) {
    if (i >= 4 && i < 4 + k) continue;
    frit_uop *s = clone_node(cl, L->src[i]);
    if (!s) {
      cl->probing--, cl->probe_lo = saved_lo;
      return NULL;
    }
    changed |= s != L->src[i];
  }
  cl->probing--, cl->probe_lo = saved_lo;
  if (!changed) return cl->memo[L->id] = L;
  /* the probe copied the body with the loop's own CARRYs kept: forget those copies (everything
   * made for the body lies between its index variable / CARRYs and the LOOP) */
  for (uint32_t id = lo < cl->base ? cl->base : lo; id < L->id; id++)
    if (!cl->fixed[id]) cl->memo[id] = NULL;
  int64_t id = cl->st->next_loop_id++;
  char name[32];
  snprintf(name, sizeof name, "loop%lld", (long long)id);
  int32_t most;
  if (kb_map_get(&cl->st->trips, (uint32_t)L->arg.i1, &most) && !kb_map_put(&cl->st->trips, (uint32_t)id, most)) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "out of memory");
    return NULL;
  }
  frit_uop *iv = L->src[3], *niv = frit_var(ctx, name, iv->arg.i0, iv->arg.i1);
  if (!niv || !frit_shape_of(ctx, niv)) return NULL;
  cl->memo[iv->id] = niv;
  for (int j = 0; j < k; j++) {
    frit_uop *P = L->src[4 + j];
    frit_arg a = frit_arg_none();
    a.i0 = id, a.i1 = j;
    frit_uop *nP = frit_uop_new(ctx, FRIT_OP_CARRY, P->dtype, P->src, (int)P->nsrc, &a);
    if (!nP || !frit_shape_of(ctx, nP)) return NULL;
    cl->memo[P->id] = nP;
  }
  frit_uop **src = malloc((size_t)n * sizeof *src);
  if (!src) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "out of memory");
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    if (!(src[i] = clone_node(cl, L->src[i]))) {
      free(src);
      return NULL;
    }
    if (i >= 4 + k && i < 4 + 2 * k && src[i] == L->src[i] && !note_ext(cl, L, (uint32_t)i, src[i])) {
      free(src);
      return NULL;
    }
  }
  frit_arg a = frit_arg_none();
  a.i0 = k, a.i1 = id;
  frit_uop *nL = frit_uop_new(ctx, FRIT_OP_LOOP, FRIT_VOID, src, n, &a);
  free(src);
  if (nL) cl->memo[L->id] = nL;
  return nL;
}

/* A gradient rule attached to u (sort, linalg, custom_vjp) goes with its copy r, its inputs
 * copied too. */
static bool copy_rule(clone *cl, frit_uop *u, frit_uop *r) {
  frit_vjp_rule rule;
  int nin;
  frit_tensor *const *ins;
  const int64_t *params;
  if (!ti_vjp_lookup(cl->ctx, u, &rule, &nin, &ins, &params)) return true;
  frit_tensor *nins[8];
  FRIT_ASSERT(nin <= 8);
  for (int i = 0; i < nin; i++) nins[i] = ins[i]; /* copying may grow the rule table under ins */
  for (int i = 0; i < nin; i++) {
    frit_uop *c = clone_node(cl, TI_U(nins[i]));
    if (!c) return false;
    nins[i] = TI_T(c);
  }
  return ti_vjp_copy(cl->ctx, u, TI_T(r), nins) == FRIT_OK;
}

/* Recursion depth is that of the loop body (nodes below base are never entered). */
static frit_uop *clone_node(clone *cl, frit_uop *u) {
  if (u->id < cl->limit && cl->memo[u->id]) return cl->memo[u->id];
  if (u->id < cl->base || u->id >= cl->limit) return u;
  if (u->op == FRIT_OP_LOOP) return clone_loop(cl, u);
  /* a loop's CARRYs get their copies when the loop is copied: that must come first */
  if (u->op == FRIT_OP_AFTER && u->nsrc == 2 && u->src[1]->op == FRIT_OP_LOOP && !clone_node(cl, u->src[1])) return NULL;
  frit_uop *tmp[16], **src = u->nsrc <= 16 ? tmp : malloc(u->nsrc * sizeof *src);
  if (!src) {
    frit_set_error(cl->ctx, FRIT_ERR_NOMEM, "out of memory");
    return NULL;
  }
  bool changed = false;
  for (uint32_t i = 0; i < u->nsrc; i++) {
    if (!(src[i] = clone_node(cl, u->src[i]))) goto fail;
    changed |= src[i] != u->src[i];
  }
  frit_uop *r = u;
  if (changed) {
    for (uint32_t i = 0; i < u->nsrc; i++)
      if (src[i] == u->src[i] && !note_ext(cl, u, i, src[i])) goto fail;
    r = frit_uop_replace_src(cl->ctx, u, src, (int)u->nsrc);
    if (!r || (u->shape && !frit_shape_of(cl->ctx, r))) goto fail;
    if (!copy_rule(cl, u, r)) goto fail;
  }
  if (src != tmp) free(src);
  cl->memo[u->id] = r;
  return r;
fail:
  if (src != tmp) free(src);
  return NULL;
}

static void clone_reset(clone *cl) {
  memset(cl->memo, 0, cl->limit * sizeof *cl->memo);
  memset(cl->fixed, 0, cl->limit * sizeof *cl->fixed);
}

/* A substitution for the copies to come. */
static void clone_set(clone *cl, frit_uop *from, frit_uop *to) {
  if (from->id >= cl->limit) return;
  cl->memo[from->id] = to;
  cl->fixed[from->id] = true;
}

typedef struct loop_parts {
  frit_uop *L, *start, *step, *ivar, **P, **I, **N, *stop;
  int k;
  int *fl, nf; /* the float carries (their slots) */
  frit_uop **ext;
  int m; /* captured float values that need a cotangent */
} loop_parts;

static frit_tensor *i64c(frit_ctx *ctx, int64_t v) { return frit_scalar_i(ctx, FRIT_I64, v); }
static frit_tensor *op2(frit_ctx *ctx, frit_op op, frit_tensor *a, frit_tensor *b) { return ti_alu2(ctx, op, a, b); }

/* One reverse step at forward iteration t (i64 0-d), carries c[] at its start: gbar[] (float
 * carries) and gext[] become the cotangents before that iteration. */
static bool reverse_step(frit_ctx *ctx, clone *cl, const loop_parts *lp, frit_tensor *t, frit_tensor *const *c,
                         frit_tensor **gbar, frit_tensor **gext) {
  int k = lp->k, nf = lp->nf, m = lp->m;
  bool ok = false;
  frit_tensor **wrt = calloc((size_t)(nf + m) * 2 + (size_t)nf + 1, sizeof *wrt);
  if (!wrt) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "out of memory");
    return false;
  }
  frit_tensor **grads = wrt + nf + m, **outs = grads + nf + m;
  clone_reset(cl);
  cl->collect = false;
  frit_tensor *i = op2(ctx, FRIT_OP_ADD, TI_T(lp->start), op2(ctx, FRIT_OP_MUL, t, TI_T(lp->step)));
  if (!i) goto done;
  clone_set(cl, lp->ivar, TI_U(i));
  for (int j = 0; j < k; j++) clone_set(cl, lp->P[j], TI_U(c[j]));
  for (int f = 0; f < nf; f++) {
    /* a fresh node per carry, so that the cotangent of this iteration's state is its own */
    if (!(wrt[f] = frit_identity(ctx, c[lp->fl[f]]))) goto done;
    clone_set(cl, lp->P[lp->fl[f]], TI_U(wrt[f]));
  }
  for (int e = 0; e < m; e++) {
    if (!(wrt[nf + e] = frit_identity(ctx, TI_T(lp->ext[e])))) goto done;
    clone_set(cl, lp->ext[e], TI_U(wrt[nf + e]));
  }
  for (int f = 0; f < nf; f++) {
    frit_uop *o = clone_node(cl, lp->N[lp->fl[f]]);
    if (!o) goto done;
    outs[f] = TI_T(o);
  }
  if (ad_vjp_multi(ctx, nf, outs, gbar, nf + m, wrt, grads) != FRIT_OK) goto done;
  for (int f = 0; f < nf; f++) gbar[f] = grads[f];
  for (int e = 0; e < m; e++)
    if (!(gext[e] = op2(ctx, FRIT_OP_ADD, gext[e], grads[nf + e]))) goto done;
  ok = true;
done:
  free(wrt);
  return ok;
}

static bool const_i(frit_uop *u, int64_t *v) {
  if (u->op != FRIT_OP_CONST || !frit_dtype_is_int(u->dtype)) return false;
  *v = u->arg.value.i;
  return true;
}

/* The checkpoint interval: the ctx knob, else $FRIT_LOOP_CHECKPOINT, else ceil(sqrt(T)). */
static int64_t interval(frit_ctx *ctx, int64_t T) {
  int64_t n = ctx->loop_checkpoint;
  if (n <= 0) {
    const char *e = getenv("FRIT_LOOP_CHECKPOINT");
    n = e ? strtoll(e, NULL, 10) : 0;
  }
  if (n <= 0) {
    n = (int64_t)ceil(sqrt((double)T));
    while (n * n < T) n++;
  }
  return n < 1 ? 1 : n > T ? T : n;
}

static frit_tensor *row_of(frit_ctx *ctx, frit_tensor *x) {
  frit_uop *one = ti_dim(ctx, 1);
  return x && one ? ti_reshape(ctx, x, 1, &one) : NULL;
}

static frit_tensor *zeros_rows(frit_ctx *ctx, frit_uop *like, int64_t rows) {
  const frit_shape *s = frit_shape_of(ctx, like);
  frit_uop *dims[FRIT_MAX_DIMS + 1];
  dims[0] = ti_dim(ctx, rows);
  for (int d = 0; d < s->ndim; d++) dims[d + 1] = s->dims[d];
  return ti_full(ctx, like->dtype, (frit_scalar){.i = 0}, s->ndim + 1, dims);
}

/* Records that the next host loop runs at most `most` trips. */
static bool hint(frit_ctx *ctx, kb_state *st, int64_t most) {
  if (kb_map_put(&st->trips, (uint32_t)st->next_loop_id, (int32_t)(most > INT32_MAX ? INT32_MAX : most))) return true;
  frit_set_error(ctx, FRIT_ERR_NOMEM, "out of memory");
  return false;
}

bool ad_loop_vjp(frit_ctx *ctx, frit_uop *L, frit_tensor *const *gres, bool (*want)(void *, frit_uop *),
                 bool (*emit)(void *, frit_uop *, frit_tensor *), void *cb) {
  FRIT_ASSERT(L->op == FRIT_OP_LOOP);
  int k = (int)L->arg.i0;
  loop_parts lp = {L, L->src[0], L->src[2], L->src[3], L->src + 4, L->src + 4 + k, L->src + 4 + 2 * k,
                   L->src[4 + 3 * k], k, NULL, 0, NULL, 0};
  kb_state *st = kb_get(ctx, true);
  if (!st) return false;
  int64_t s0, e0, p0, T;
  int32_t most;
  if (const_i(L->src[0], &s0) && const_i(L->src[1], &e0) && const_i(L->src[2], &p0) && p0 != 0) {
    T = p0 > 0 ? (e0 > s0 ? (e0 - s0 + p0 - 1) / p0 : 0) : (s0 > e0 ? (s0 - e0 - p0 - 1) / -p0 : 0);
  } else if (kb_map_get(&st->trips, (uint32_t)L->arg.i1, &most)) {
    T = most; /* a reverse loop of an earlier frit_vjp: grad of grad */
  } else {
    ti_fail(ctx, "grad", NULL, 0,
            "frit_vjp through host loop %lld: its start, end or step is computed at run time (or the step is 0); "
            "the reverse pass needs constant bounds to size its checkpoints (a stop/break condition is fine)",
            (long long)L->arg.i1);
    return false;
  }
  char db[32];
  for (int j = 0; j < k; j++)
    if (frit_dtype_is_complex(lp.P[j]->dtype)) {
      ti_fail(ctx, "grad", NULL, 0, "frit_vjp through host loop %lld: carried value %d is %s: complex gradients are not implemented yet",
              (long long)L->arg.i1, j, frit_dtype_name(lp.P[j]->dtype, db, sizeof db));
      return false;
    }
  if (T == 0) { /* the results are the inits */
    for (int j = 0; j < k; j++)
      if (gres[j] && !emit(cb, lp.I[j], gres[j])) return false;
    return true;
  }
  int64_t n = interval(ctx, T), S = (T + n - 1) / n, rows = n == 1 ? S : S + 1;
  bool ok = false;
  clone cl = {ctx, st, UINT32_MAX, (uint32_t)ctx->count, NULL, NULL, 0, 0, true, NULL, {0}};
  for (int j = 0; j < k; j++) cl.base = lp.P[j]->id < cl.base ? lp.P[j]->id : cl.base;
  cl.base = lp.ivar->id < cl.base ? lp.ivar->id : cl.base;
  cl.memo = calloc((size_t)cl.limit + 1, sizeof *cl.memo);
  cl.seen = calloc((size_t)cl.limit + 1, sizeof *cl.seen);
  cl.fixed = calloc((size_t)cl.limit + 1, sizeof *cl.fixed);
  frit_tensor **buf = calloc((size_t)(12 * k + 8), sizeof *buf);
  lp.fl = calloc((size_t)k + 1, sizeof *lp.fl);
  frit_tensor **gb = NULL, **gi = NULL, **go = NULL;
  if (!cl.memo || !cl.seen || !cl.fixed || !buf || !lp.fl) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "out of memory");
    goto done;
  }
  for (int j = 0; j < k; j++)
    if (frit_dtype_is_float(lp.P[j]->dtype)) lp.fl[lp.nf++] = j;

  /* 1. the forward loop again, counting its iterations (a stop may end it early) and storing
   *    the carries entering every n-th iteration (rows t / n; the others go to a scratch row) */
  {
    frit_tensor **init = buf, **car = buf + 2 * k + 1, **nx = buf + 4 * k + 2, *iv = NULL;
    for (int j = 0; j < k; j++) {
      init[j] = TI_T(lp.I[j]);
      if (!(init[k + 1 + j] = zeros_rows(ctx, lp.P[j], rows))) goto done;
    }
    init[k] = i64c(ctx, 0);
    if (frit_host_loop_begin(ctx, TI_T(L->src[0]), TI_T(L->src[1]), TI_T(L->src[2]), 2 * k + 1, init, &iv, car) != FRIT_OK)
      goto done;
    clone_set(&cl, lp.ivar, TI_U(iv));
    for (int j = 0; j < k; j++) clone_set(&cl, lp.P[j], TI_U(car[j]));
    frit_tensor *t = car[k], *row = t;
    if (n > 1)
      row = ti_where(ctx, op2(ctx, FRIT_OP_CMPEQ, op2(ctx, FRIT_OP_MOD, t, i64c(ctx, n)), i64c(ctx, 0)),
                     op2(ctx, FRIT_OP_IDIV, t, i64c(ctx, n)), i64c(ctx, S));
    bool built = row != NULL;
    for (int j = 0; j < k && built; j++) {
      frit_uop *o = clone_node(&cl, lp.N[j]);
      nx[j] = o ? TI_T(o) : NULL;
      nx[k + 1 + j] = o ? frit_scatter(ctx, car[k + 1 + j], row_of(ctx, row), car[j], FRIT_ATOMIC_XCHG) : NULL;
      built = nx[j] && nx[k + 1 + j];
    }
    nx[k] = built ? op2(ctx, FRIT_OP_ADD, t, i64c(ctx, 1)) : NULL;
    frit_uop *stop = built ? clone_node(&cl, lp.stop) : NULL;
    frit_tensor **res = init; /* reused: the inits are in the loop now */
    if (!nx[k] || !stop) {
      frit_host_loop_end(ctx, car, NULL, res); /* closes the loop; the error stays */
      goto done;
    }
    if (frit_host_loop_end(ctx, nx, TI_T(stop), res) != FRIT_OK) goto done;
    for (int j = 0; j <= k; j++) buf[10 * k + 4 + j] = res[k + j]; /* trip count, checkpoints */
  }
  frit_tensor *trips = buf[10 * k + 4], **ckpt = buf + 10 * k + 5;
  /* the captured values that need a cotangent */
  lp.ext = malloc((cl.ext.n + 1) * sizeof *lp.ext);
  if (!lp.ext) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "out of memory");
    goto done;
  }
  for (size_t e = 0; e < cl.ext.n; e++)
    if (want(cb, cl.ext.v[e])) lp.ext[lp.m++] = cl.ext.v[e];
  int nf = lp.nf, m = lp.m, nr = nf + m;
  if (nr == 0) {
    ok = true;
    goto done;
  }
  gb = calloc((size_t)nr * 4 + 4, sizeof *gb);
  if (!gb) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "out of memory");
    goto done;
  }
  gi = gb + nr, go = gi + nr;
  for (int f = 0; f < nf; f++) {
    int j = lp.fl[f];
    gi[f] = gres[j] ? gres[j] : ti_const_f(ctx, lp.P[j]->dtype, 0, TI_T(lp.I[j]));
  }
  for (int e = 0; e < m; e++) gi[nf + e] = ti_const_f(ctx, lp.ext[e]->dtype, 0, TI_T(lp.ext[e]));
  for (int r = 0; r < nr; r++)
    if (!gi[r]) goto done;

  /* 2. segments in reverse: reload the checkpoint, recompute the segment's carries into a
   *    tape of n rows, run the body's VJP over them backwards */
  {
    frit_tensor *nseg = op2(ctx, FRIT_OP_IDIV, op2(ctx, FRIT_OP_ADD, trips, i64c(ctx, n - 1)), i64c(ctx, n));
    frit_tensor *sv = NULL, **car = gb; /* outer carries: gbar then gext */
    if (!hint(ctx, st, S)) goto done;
    if (!nseg ||
        frit_host_loop_begin(ctx, op2(ctx, FRIT_OP_SUB, nseg, i64c(ctx, 1)), i64c(ctx, -1), i64c(ctx, -1), nr, gi, &sv,
                             car) != FRIT_OK)
      goto done;
    bool built = true;
    frit_tensor **c0 = buf, **nx = go; /* buf's first k slots are free again */
    for (int j = 0; j < k && built; j++) built = (c0[j] = ti_gather(ctx, ckpt[j], sv, 0)) != NULL;
    frit_tensor *t0 = built ? op2(ctx, FRIT_OP_MUL, sv, i64c(ctx, n)) : NULL;
    for (int r = 0; r < nr; r++) nx[r] = car[r];
    if (!t0) {
      built = false;
    } else if (n == 1) {
      built = reverse_step(ctx, &cl, &lp, t0, c0, nx, nx + nf);
    } else {
      /* the segment's length, n except in the last one, and its carries recomputed */
      frit_tensor *len = op2(ctx, FRIT_OP_MIN, i64c(ctx, n), op2(ctx, FRIT_OP_SUB, trips, t0));
      frit_tensor **ri = buf + k, **rc = buf + 3 * k, **rn = buf + 5 * k, *rv = NULL, **tape = buf + 7 * k;
      for (int j = 0; j < k && built; j++) {
        ri[j] = c0[j];
        frit_tensor *z = zeros_rows(ctx, lp.P[j], n);
        built = z && (ri[k + j] = frit_scatter(ctx, z, row_of(ctx, i64c(ctx, 0)), c0[j], FRIT_ATOMIC_XCHG)) != NULL;
      }
      built = built && hint(ctx, st, n - 1) && frit_host_loop_begin(ctx, i64c(ctx, 0), op2(ctx, FRIT_OP_SUB, len, i64c(ctx, 1)), i64c(ctx, 1),
                                            2 * k, ri, &rv, rc) == FRIT_OK;
      if (built) {
        clone_reset(&cl);
        cl.collect = false;
        frit_tensor *tt = op2(ctx, FRIT_OP_ADD, t0, rv);
        frit_tensor *i = tt ? op2(ctx, FRIT_OP_ADD, TI_T(lp.start), op2(ctx, FRIT_OP_MUL, tt, TI_T(lp.step))) : NULL;
        bool body = i != NULL;
        if (body) clone_set(&cl, lp.ivar, TI_U(i));
        for (int j = 0; j < k; j++) clone_set(&cl, lp.P[j], TI_U(rc[j]));
        frit_tensor *r1 = body ? row_of(ctx, op2(ctx, FRIT_OP_ADD, rv, i64c(ctx, 1))) : NULL;
        for (int j = 0; j < k && body; j++) {
          frit_uop *o = clone_node(&cl, lp.N[j]);
          rn[j] = o ? TI_T(o) : NULL;
          rn[k + j] = o && r1 ? frit_scatter(ctx, rc[k + j], r1, rn[j], FRIT_ATOMIC_XCHG) : NULL;
          body = rn[j] && rn[k + j];
        }
        frit_tensor **res = ri;
        if (!body) {
          frit_host_loop_end(ctx, rc, NULL, res);
          built = false;
        } else {
          built = frit_host_loop_end(ctx, rn, NULL, res) == FRIT_OK;
          for (int j = 0; j < k && built; j++) tape[j] = res[k + j];
        }
      }
      /* the segment backwards */
      frit_tensor *qv = NULL, **qc = NULL;
      frit_tensor **qbuf = built ? calloc((size_t)nr * 2 + (size_t)k + 2, sizeof *qbuf) : NULL;
      if (built && !qbuf) frit_set_error(ctx, FRIT_ERR_NOMEM, "out of memory");
      built = qbuf && hint(ctx, st, n) && frit_host_loop_begin(ctx, op2(ctx, FRIT_OP_SUB, len, i64c(ctx, 1)), i64c(ctx, -1), i64c(ctx, -1),
                                           nr, car, &qv, (qc = qbuf)) == FRIT_OK;
      if (built) {
        frit_tensor **qn = qbuf + nr, **cr = qn + nr;
        for (int r = 0; r < nr; r++) qn[r] = qc[r];
        bool body = true;
        for (int j = 0; j < k && body; j++) body = (cr[j] = ti_gather(ctx, tape[j], qv, 0)) != NULL;
        frit_tensor *tt = body ? op2(ctx, FRIT_OP_ADD, t0, qv) : NULL;
        body = tt && reverse_step(ctx, &cl, &lp, tt, cr, qn, qn + nf);
        if (!body) {
          frit_host_loop_end(ctx, qc, NULL, nx);
          built = false;
        } else {
          built = frit_host_loop_end(ctx, qn, NULL, nx) == FRIT_OK;
        }
      }
      free(qbuf);
    }
    frit_tensor **res = gi;
    if (!built) {
      frit_host_loop_end(ctx, car, NULL, res);
      goto done;
    }
    if (frit_host_loop_end(ctx, nx, NULL, res) != FRIT_OK) goto done;
  }
  for (int f = 0; f < nf; f++)
    if (!emit(cb, lp.I[lp.fl[f]], gi[f])) goto done;
  for (int e = 0; e < m; e++)
    if (!emit(cb, lp.ext[e], gi[nf + e])) goto done;
  ok = true;
done:
  if (!ok && ctx->status == FRIT_OK) ti_fail(ctx, "grad", NULL, 0, "frit_vjp through host loop %lld failed", (long long)L->arg.i1);
  free(cl.memo), free(cl.seen), free(cl.fixed), free(cl.ext.v), free(buf), free(lp.fl), free(lp.ext), free(gb);
  return ok;
}

frit_status frit_set_loop_checkpoint(frit_ctx *ctx, int n) {
  if (!ctx) return FRIT_ERR_INVALID;
  if (n < 0) {
    ti_fail(ctx, "set_loop_checkpoint", NULL, 0, "the interval is %d: 0 (default) or a positive number of iterations", n);
    return ctx->status;
  }
  ctx->loop_checkpoint = n;
  return FRIT_OK;
}
