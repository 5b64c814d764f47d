/* frit_vjp / frit_grad: reverse-mode autodiff as a graph transform. The gradient is more tensor
 * nodes in the same context, so it compiles, fuses and differentiates again like any program. */
#include "autodiff/autodiff.h"
#include "ir/walk.h"

#include <string.h>

/* Position of node id in the topologically (= id) sorted walk, or -1. */
static long position(frit_uop *const *order, size_t n, uint32_t id) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (order[mid]->id < id) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && order[lo]->id == id ? (long)lo : -1;
}

/* Whether the cotangent flows along source i of u: tensor sources except the selector of a
 * WHERE and the indices of GATHER and SCATTER. */
static bool carries_edge(const frit_uop *u, uint32_t i) {
  if (!frit_is_tensor_src(u, i)) return false;
  if (u->op == FRIT_OP_WHERE) return i != 0;
  if (u->op == FRIT_OP_GATHER || u->op == FRIT_OP_SCATTER) return i != 1;
  return true;
}

static bool same_shape(frit_ctx *ctx, frit_tensor *a, frit_tensor *b) {
  const frit_shape *sa = ti_shape(ctx, a), *sb = ti_shape(ctx, b);
  if (sa->ndim != sb->ndim) return false;
  for (int i = 0; i < sa->ndim; i++)
    if (!ti_dim_eq(sa->dims[i], sb->dims[i])) return false;
  return true;
}

static int cmp_id(const void *a, const void *b) {
  uint32_t x = (*(frit_uop *const *)a)->id, y = (*(frit_uop *const *)b)->id;
  return x < y ? -1 : x > y;
}

typedef struct grad_walk {
  frit_uop **order;
  size_t n;
  bool *needs;        /* a float value on a path from some wrt to the output */
  frit_tensor **cot;  /* accumulated cotangent per node (NULL: none yet) */
} grad_walk;

static void walk_free(grad_walk *w) {
  free(w->order), free(w->needs), free(w->cot);
}

static bool accumulate(frit_ctx *ctx, grad_walk *w, frit_uop *src, frit_tensor *c) {
  long k = position(w->order, w->n, src->id);
  FRIT_ASSERT(k >= 0 && c && TI_U(c)->dtype == src->dtype);
  FRIT_ASSERT(same_shape(ctx, c, TI_T(src)));
  w->cot[k] = w->cot[k] ? ti_alu2(ctx, FRIT_OP_ADD, w->cot[k], c) : c;
  return w->cot[k] != NULL;
}

/* wrt may be complex (its gradient is dL/dRe + i dL/dIm); the output must be real */
static frit_status check_float(frit_ctx *ctx, const char *what, int i, frit_tensor *t) {
  char db[32];
  frit_dtype dt = frit_tensor_dtype(t);
  if (frit_dtype_is_float(dt) || (i >= 0 && frit_dtype_is_complex(dt))) return FRIT_OK;
  if (i < 0)
    ti_fail(ctx, "grad", (frit_tensor *const[]){t}, 1, "%s has dtype %s: gradients are defined for real float tensors",
            what, frit_dtype_name(dt, db, sizeof db));
  else
    ti_fail(ctx, "grad", (frit_tensor *const[]){t}, 1, "%s[%d] has dtype %s: gradients are defined for float and complex tensors",
            what, i, frit_dtype_name(dt, db, sizeof db));
  return ctx->status;
}

/* Applies the rule attached to u (frit_set_vjp), if any: true when there is one (*st tells how
 * it went). */
static bool custom_rule(frit_ctx *ctx, grad_walk *w, frit_uop *u, frit_tensor *g, frit_status *st) {
  frit_vjp_rule rule;
  int nin;
  frit_tensor *const *ins;
  const int64_t *params;
  if (!ti_vjp_lookup(ctx, u, &rule, &nin, &ins, &params)) return false;
  frit_tensor *grads[4] = {NULL, NULL, NULL, NULL};
  *st = rule(ctx, params, TI_T(u), g, nin, ins, grads);
  if (*st != FRIT_OK) {
    if (ctx->status == FRIT_OK) ti_fail(ctx, "grad", NULL, 0, "a gradient rule failed without a message");
    *st = ctx->status;
    return true;
  }
  for (int i = 0; i < nin && *st == FRIT_OK; i++) {
    long s = position(w->order, w->n, TI_U(ins[i])->id);
    if (s < 0 || !w->needs[s] || !grads[i]) continue;
    if (TI_U(grads[i])->dtype != TI_U(ins[i])->dtype || !same_shape(ctx, grads[i], ins[i])) {
      char db[32];
      ti_fail(ctx, "grad", (frit_tensor *const[]){grads[i], ins[i]}, 2,
              "the gradient rule of a %s node gave input %d a cotangent of another shape or dtype",
              frit_dtype_name(u->dtype, db, sizeof db), i);
      *st = ctx->status;
    } else if (!accumulate(ctx, w, TI_U(ins[i]), grads[i]))
      *st = ctx->status;
  }
  return true;
}

/* The nodes reachable from several roots, in id order, each once. */
static frit_uop **walk_roots(int n, frit_tensor *const *roots, size_t *count) {
  if (n == 1) return frit_walk_topo(TI_U(roots[0]), count);
  frit_uop **all = NULL;
  size_t total = 0;
  for (int i = 0; i < n; i++) {
    size_t m;
    frit_uop **o = frit_walk_topo(TI_U(roots[i]), &m);
    frit_uop **grown = o ? realloc(all, (total + m) * sizeof *all) : NULL;
    if (!grown) {
      free(o), free(all);
      return NULL;
    }
    all = grown;
    memcpy(all + total, o, m * sizeof *o);
    total += m;
    free(o);
  }
  /* merge: sort by id, drop repeats */
  qsort(all, total, sizeof *all, cmp_id);
  size_t k = 0;
  for (size_t i = 0; i < total; i++)
    if (k == 0 || all[k - 1] != all[i]) all[k++] = all[i];
  *count = k;
  return all;
}

typedef struct loop_cb {
  frit_ctx *ctx;
  grad_walk *w;
} loop_cb;

static bool loop_want(void *arg, frit_uop *v) {
  grad_walk *w = ((loop_cb *)arg)->w;
  long k = position(w->order, w->n, v->id);
  return k >= 0 && w->needs[k];
}

static bool loop_emit(void *arg, frit_uop *v, frit_tensor *c) {
  loop_cb *cb = arg;
  return !loop_want(arg, v) || accumulate(cb->ctx, cb->w, v, c);
}

/* A host loop's results (AFTER(CARRY j, LOOP)) pass their cotangents to the LOOP, which runs
 * its reverse loop once all of them are in (every result has a larger id than the LOOP). */
static bool loop_stash(frit_ctx *ctx, grad_walk *w, frit_tensor ****lc, frit_uop *u, frit_tensor *g) {
  frit_uop *L = u->src[1];
  long k = position(w->order, w->n, L->id);
  FRIT_ASSERT(k >= 0 && u->src[0]->op == FRIT_OP_CARRY);
  if (!*lc && !(*lc = calloc(w->n, sizeof **lc))) return frit_set_error(ctx, FRIT_ERR_NOMEM, "grad: out of memory"), false;
  if (!(*lc)[k] && !((*lc)[k] = calloc((size_t)L->arg.i0 + 1, sizeof ***lc)))
    return frit_set_error(ctx, FRIT_ERR_NOMEM, "grad: out of memory"), false;
  frit_tensor **slot = &(*lc)[k][u->src[0]->arg.i1];
  *slot = *slot ? ti_alu2(ctx, FRIT_OP_ADD, *slot, g) : g;
  return *slot != NULL;
}

static bool walk_wants(void *env, const frit_uop *u) {
  grad_walk *w = env;
  long s = position(w->order, w->n, u->id);
  return s >= 0 && w->needs[s];
}

/* AFTER(T, KERNEL) of a user explicit kernel: its reverse kernel (kernel_vjp.c) sends
 * cotangents to T and to what the kernel reads, which are not AFTER's own sources. */
static frit_status kernel_rule(frit_ctx *ctx, grad_walk *w, frit_uop *u, frit_tensor *g) {
  ad_contrib *c = NULL;
  size_t n = 0;
  if (!ad_kernel_vjp(ctx, u, g, walk_wants, w, &c, &n)) return ctx->status != FRIT_OK ? ctx->status : FRIT_ERR_INVALID;
  frit_status st = FRIT_OK;
  for (size_t i = 0; i < n && st == FRIT_OK; i++)
    if (walk_wants(w, c[i].target) && !accumulate(ctx, w, c[i].target, c[i].value)) st = ctx->status;
  free(c);
  return st;
}

frit_status frit_vjp(frit_ctx *ctx, frit_tensor *out, frit_tensor *seed, int nwrt, frit_tensor *const *wrt,
                     frit_tensor **grads) {
  if (!ctx) return FRIT_ERR_INVALID;
  if (!out || nwrt < 0 || (nwrt > 0 && (!wrt || !grads))) {
    ti_fail(ctx, "grad", NULL, 0, "needs an output tensor and %d input tensors with room for their gradients", nwrt);
    return ctx->status;
  }
  for (int i = 0; i < nwrt; i++) {
    grads[i] = NULL;
    if (!wrt[i]) return ti_fail(ctx, "grad", NULL, 0, "wrt[%d] is NULL", i), ctx->status;
  }
  if (!frit_shape_of(ctx, TI_U(out)) || check_float(ctx, "the output", -1, out) != FRIT_OK) return ctx->status;
  const frit_shape *so = ti_shape(ctx, out);
  frit_tensor *g = seed ? ti_broadcast(ctx, "grad", ti_cast(ctx, seed, frit_tensor_dtype(out)), so->ndim, so->dims)
                        : ti_const_f(ctx, frit_tensor_dtype(out), 1, out);
  if (!g) return ctx->status;
  return ad_vjp_multi(ctx, 1, &out, &g, nwrt, wrt, grads);
}

frit_status ad_vjp_multi(frit_ctx *ctx, int nout, frit_tensor *const *outs, frit_tensor *const *seeds, int nwrt,
                         frit_tensor *const *wrt, frit_tensor **grads) {
  for (int i = 0; i < nwrt; i++) {
    grads[i] = NULL;
    if (!frit_shape_of(ctx, TI_U(wrt[i]))) return ctx->status;
    if (check_float(ctx, "wrt", i, wrt[i]) != FRIT_OK) return ctx->status;
  }
  grad_walk w = {0};
  w.order = walk_roots(nout, outs, &w.n);
  w.needs = w.order ? calloc(w.n, sizeof *w.needs) : NULL;
  w.cot = w.order ? calloc(w.n, sizeof *w.cot) : NULL;
  if (!w.order || !w.needs || !w.cot) {
    walk_free(&w);
    return frit_set_error(ctx, FRIT_ERR_NOMEM, "grad: out of memory");
  }
  for (int i = 0; i < nwrt; i++) {
    long k = position(w.order, w.n, TI_U(wrt[i])->id);
    if (k >= 0) w.needs[k] = true;
  }
  /* forward: which values lie on a path from a wrt. dep follows every edge; needs only the ones
   * a cotangent flows along, except that a value written by an explicit kernel or a host loop
   * (AFTER) that depends on a wrt in any way needs one, so that its rule refuses it: depending
   * on a wrt must never give a silent zero. */
  bool *dep = calloc(w.n, sizeof *dep);
  if (!dep) {
    walk_free(&w);
    return frit_set_error(ctx, FRIT_ERR_NOMEM, "grad: out of memory");
  }
  for (size_t k = 0; k < w.n; k++) {
    frit_uop *u = w.order[k];
    dep[k] = w.needs[k];
    frit_vjp_rule rule;
    int nin;
    frit_tensor *const *ins;
    const int64_t *params;
    if (ti_vjp_lookup(ctx, u, &rule, &nin, &ins, &params)) { /* the rule's inputs are its sources */
      bool unreached = false;
      for (int i = 0; i < nin; i++) {
        long s = position(w.order, w.n, TI_U(ins[i])->id);
        unreached |= s < 0;
        if (s >= 0 && w.needs[s] && ad_dtype_carries(u->dtype)) w.needs[k] = true;
      }
      for (uint32_t i = 0; i < u->nsrc; i++) dep[k] |= dep[position(w.order, w.n, u->src[i]->id)];
      if (unreached && dep[k] && !w.needs[k]) { /* a rule that would drop a dependence */
        free(dep);
        walk_free(&w);
        ti_fail(ctx, "grad", (frit_tensor *const[]){TI_T(u)}, 1,
                "internal: an input of the gradient rule of %s is not part of the graph", frit_op_name((frit_op)u->op));
        return ctx->status;
      }
      dep[k] = dep[k] || w.needs[k];
      continue;
    }
    bool edge_needs = false, bits_need = false;
    for (uint32_t i = 0; i < u->nsrc; i++) {
      long s = position(w.order, w.n, u->src[i]->id);
      FRIT_ASSERT(s >= 0 && (size_t)s < k);
      dep[k] |= dep[s];
      bool carried = carries_edge(u, i) && w.needs[s];
      edge_needs |= carried;
      bits_need |= carried && (u->op == FRIT_OP_BITCAST || !ad_dtype_carries(u->src[i]->dtype));
    }
    if (ad_dtype_carries(u->dtype))
      w.needs[k] |= u->op == FRIT_OP_AFTER ? dep[k] : edge_needs;
    else if (u->op != FRIT_OP_CAST)
      /* the bits of a differentiated value, and integer ops on them: a float made of them again
       * (BITCAST) needs a gradient rule, never a silent zero */
      w.needs[k] |= bits_need;
  }
  free(dep);
  frit_status st = FRIT_OK;
  for (int o = 0; o < nout && st == FRIT_OK; o++)
    if (!accumulate(ctx, &w, TI_U(outs[o]), seeds[o])) st = ctx->status;
  frit_tensor ***loopcot = NULL; /* by position of a LOOP: its results' cotangents */
  loop_cb lcb = {ctx, &w};
  for (size_t k = w.n; k-- > 0 && st == FRIT_OK;) {
    frit_uop *u = w.order[k];
    if (u->op == FRIT_OP_LOOP && loopcot && loopcot[k]) {
      if (!ad_loop_vjp(ctx, u, loopcot[k], loop_want, loop_emit, &lcb))
        st = ctx->status != FRIT_OK ? ctx->status : FRIT_ERR_INVALID;
      continue;
    }
    if (!w.needs[k] || !w.cot[k]) continue;
    if (custom_rule(ctx, &w, u, w.cot[k], &st)) continue;
    if (u->op == FRIT_OP_AFTER && u->src[1]->op == FRIT_OP_LOOP) {
      if (!loop_stash(ctx, &w, &loopcot, u, w.cot[k])) st = ctx->status;
      continue;
    }
    if (u->op == FRIT_OP_AFTER && u->src[1]->op == FRIT_OP_KERNEL) {
      st = kernel_rule(ctx, &w, u, w.cot[k]);
      continue;
    }
    bool want[4] = {false, false, false, false};
    frit_tensor *contrib[4] = {NULL, NULL, NULL, NULL};
    bool any = false;
    for (uint32_t i = 0; i < u->nsrc && i < 4; i++) {
      long s = carries_edge(u, i) ? position(w.order, w.n, u->src[i]->id) : -1;
      want[i] = s >= 0 && w.needs[s] && ad_dtype_carries(u->src[i]->dtype);
      any |= want[i];
    }
    if (u->op == FRIT_OP_AFTER || u->op == FRIT_OP_BITCAST) any = true; /* the rule refuses it */
    if (!any) continue;
    if (!ad_op_vjp(ctx, u, w.cot[k], want, contrib)) {
      st = ctx->status != FRIT_OK ? ctx->status : FRIT_ERR_INVALID;
      break;
    }
    for (uint32_t i = 0; i < u->nsrc && i < 4; i++)
      if (want[i] && contrib[i] && !accumulate(ctx, &w, u->src[i], contrib[i])) {
        st = ctx->status;
        break;
      }
  }
  for (int i = 0; i < nwrt && st == FRIT_OK; i++) {
    long k = position(w.order, w.n, TI_U(wrt[i])->id);
    /* an input the output does not depend on gets zeros (documented) */
    grads[i] = k >= 0 && w.cot[k] ? w.cot[k] : ti_const_f(ctx, frit_tensor_dtype(wrt[i]), 0, wrt[i]);
    if (!grads[i]) st = ctx->status;
  }
  if (loopcot)
    for (size_t k = 0; k < w.n; k++) free(loopcot[k]);
  free(loopcot);
  walk_free(&w);
  return st;
}

frit_status frit_grad(frit_ctx *ctx, frit_tensor *out, int nwrt, frit_tensor *const *wrt, frit_tensor **grads) {
  if (!ctx) return FRIT_ERR_INVALID;
  if (out && frit_shape_of(ctx, TI_U(out)) && ti_shape(ctx, out)->ndim != 0) {
    ti_fail(ctx, "grad", (frit_tensor *const[]){out}, 1,
            "the output must be a scalar (0-d); use frit_vjp with a seed for other shapes");
    return ctx->status;
  }
  return frit_vjp(ctx, out, NULL, nwrt, wrt, grads);
}

frit_tensor *frit_stop_gradient(frit_ctx *ctx, frit_tensor *x) {
  if (!ctx) return NULL;
  if (!x) return ti_fail(ctx, "stop_gradient", NULL, 0, "x is NULL");
  return ti_stop_gradient(ctx, x);
}

frit_tensor *frit_identity(frit_ctx *ctx, frit_tensor *x) {
  if (!ctx) return NULL;
  if (!x) return ti_fail(ctx, "identity", NULL, 0, "x is NULL");
  return ti_fresh(ctx, x);
}
