/* Rangeify: turns one kernel's tensor-level cone into a loop-level AST by pushing element
 * indices through the tensor graph with the rewrite engine (rangeify.rules + the callbacks here). */
#include "schedule/sched_internal.h"

#include <stdio.h>

/* The rule callbacks have no user pointer: the kernel being built is this thread's. */
static _Thread_local sched_state *cur;

/* ---------- index vectors ---------- */

static frit_uop *i64c(frit_ctx *ctx, int64_t v) { return frit_const_int(ctx, FRIT_I64, v); }

static int rank_of(frit_ctx *ctx, frit_uop *x) {
  const frit_shape *s = frit_shape_of(ctx, x);
  return s ? s->ndim : -1;
}

/* Component k of an index of rank n. */
static frit_uop *comp(frit_ctx *ctx, frit_uop *I, int k, int n) {
  if (n == 1) return I;
  if (I->op == FRIT_OP_VECTORIZE) return I->src[k];
  if (I->op == FRIT_OP_CONST) return frit_const(ctx, FRIT_I64, I->arg.value);
  FRIT_ASSERT(!"bad element index");
}

/* Element form INDEX(x, I[, gate]) with I built from n components. */
static frit_uop *elem(frit_ctx *ctx, frit_uop *x, frit_uop *const *c, int n, frit_uop *gate) {
  frit_uop *I;
  if (n == 0) I = i64c(ctx, 0);
  else if (n == 1) I = c[0];
  else I = frit_uop_new(ctx, FRIT_OP_VECTORIZE, frit_dtype_vec(FRIT_I64, n), c, n, NULL);
  if (!I) return NULL;
  frit_uop *src[3] = {x, I, gate};
  return frit_uop_new(ctx, FRIT_OP_INDEX, x->dtype, src, gate ? 3 : 2, NULL);
}

/* Decodes the matched root INDEX(x, I[, gate]): components into c (FRIT_MAX_DIMS). */
static int decode(frit_ctx *ctx, frit_uop *root, frit_uop **c, frit_uop **gate) {
  /* a pointer INDEX (an explicit kernel's element address, met when the rewrite walks through
   * a KERNEL body below a version AFTER(t, K)) is not an element form: no rule fires */
  if (frit_dtype_is_ptr(root->dtype)) return -1;
  int n = rank_of(ctx, root->src[0]);
  if (n < 0) return -1;
  for (int k = 0; k < n; k++) c[k] = comp(ctx, root->src[1], k, n);
  *gate = root->nsrc > 2 ? root->src[2] : NULL;
  return n;
}

static frit_uop *add(frit_ctx *ctx, frit_uop *a, frit_uop *b) { return frit_binary(ctx, FRIT_OP_ADD, a, b); }
static frit_uop *mul(frit_ctx *ctx, frit_uop *a, frit_uop *b) { return frit_binary(ctx, FRIT_OP_MUL, a, b); }
static frit_uop *sub(frit_ctx *ctx, frit_uop *a, frit_uop *b) { return frit_binary(ctx, FRIT_OP_SUB, a, b); }

static bool is_c(const frit_uop *d, int64_t v) { return d->op == FRIT_OP_CONST && d->arg.value.i == v; }

/* Row-major flat index of components c over dims d. */
static frit_uop *flatten(frit_ctx *ctx, frit_uop *const *c, frit_uop *const *d, int n) {
  frit_uop *flat = i64c(ctx, 0), *stride = i64c(ctx, 1);
  for (int k = n - 1; k >= 0 && flat; k--) {
    if (!is_c(d[k], 1)) flat = add(ctx, flat, is_c(stride, 1) ? c[k] : mul(ctx, c[k], stride));
    stride = is_c(d[k], 1) ? stride : mul(ctx, stride, d[k]);
  }
  return flat;
}

/* ---------- guards and callbacks ---------- */

static int realized(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int n) {
  (void)ctx, (void)n;
  frit_uop *x = a[0];
  if (frit_dtype_is_ptr(root->dtype) || frit_dtype_is_ptr(x->dtype)) return 0;
  if (x->op == FRIT_OP_BUFFER) return 1;
  if (x->id >= cur->nids || cur->buf_of[x->id] < 0) return 0;
  for (int k = 0; k < cur->nsib; k++)
    if (x == cur->sibs[k]) return 0;
  return x != cur->root || cur->load_root;
}

/* The matched INDEX is an element form (not an explicit kernel's pointer INDEX). */
static int elem_form(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int n) {
  (void)ctx, (void)a, (void)n;
  return !frit_dtype_is_ptr(root->dtype);
}

static int param_of(sched_state *S, int buf) {
  for (int p = 0; p < S->nparams; p++)
    if (S->params[p] == buf) return p;
  if (S->nparams == S->cap_params) {
    int cap = S->cap_params ? 2 * S->cap_params : 8;
    int *np = realloc(S->params, (size_t)cap * sizeof *np);
    if (!np) return -1;
    S->params = np, S->cap_params = cap;
  }
  S->params[S->nparams] = buf;
  return S->nparams++;
}

static frit_uop *global_of(sched_state *S, int buf) {
  int p = param_of(S, buf);
  if (p < 0) {
    frit_set_error(S->ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
    return NULL;
  }
  frit_arg arg = frit_arg_none();
  arg.i0 = p;
  frit_uop *numel = S->bufs[buf].numel;
  arg.i1 = numel->op == FRIT_OP_CONST ? numel->arg.value.i : -1;
  return frit_uop_new(S->ctx, FRIT_OP_DEFINE_GLOBAL, frit_dtype_ptr(S->bufs[buf].dtype, FRIT_ADDR_GLOBAL), NULL, 0,
                      &arg);
}

/* Explicit kernels (ekernel.c) push their element reads with these rules too. */
void sched_rangeify_enter(sched_state *S) { cur = S; }
frit_uop *sched_global(sched_state *S, int buf) { return global_of(S, buf); }

static frit_uop *load(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int na) {
  (void)a, (void)na;
  frit_uop *x = root->src[0], *c[FRIT_MAX_DIMS], *gate;
  int n = decode(ctx, root, c, &gate);
  const frit_shape *s = frit_shape_of(ctx, x);
  if (n < 0 || !s) return NULL;
  int buf = cur->buf_of[x->id];
  frit_uop *g = global_of(cur, buf);
  frit_uop *flat = flatten(ctx, c, s->dims, n);
  if (!g || !flat) return NULL;
  frit_uop *src[3] = {g, flat, gate};
  frit_uop *ix = frit_uop_new(ctx, FRIT_OP_INDEX, g->dtype, src, gate ? 3 : 2, NULL);
  return ix ? frit_uop_new(ctx, FRIT_OP_LOAD, x->dtype, &ix, 1, NULL) : NULL;
}

static frit_uop *leaf(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int n) {
  (void)ctx, (void)a, (void)n;
  return frit_dtype_is_ptr(root->dtype) ? NULL : root->src[0];
}

/* CONTIGUOUS computed in its own kernel: the element of its source. */
static frit_uop *push_same(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int n) {
  (void)a, (void)n;
  if (frit_dtype_is_ptr(root->dtype)) return NULL;
  frit_uop *src[3] = {root->src[0]->src[0], root->src[1], root->nsrc > 2 ? root->src[2] : NULL};
  return frit_uop_new(ctx, FRIT_OP_INDEX, root->dtype, src, (int)root->nsrc, NULL);
}

static frit_uop *push_iota(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int n) {
  (void)ctx, (void)a, (void)n;
  if (frit_dtype_is_ptr(root->dtype)) return NULL;
  return comp(ctx, root->src[1], 0, 1);
}

static frit_uop *push_alu(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int na) {
  (void)a, (void)na;
  frit_uop *x = root->src[0], *c[FRIT_MAX_DIMS], *gate, *src[3];
  int n = decode(ctx, root, c, &gate);
  if (n < 0) return NULL;
  for (uint32_t i = 0; i < x->nsrc; i++)
    if (!(src[i] = elem(ctx, x->src[i], c, n, gate))) return NULL;
  return frit_uop_new(ctx, (frit_op)x->op, x->dtype, src, (int)x->nsrc, &x->arg);
}

/* Reshape: dims that survive unchanged map one to one; otherwise flatten and unflatten. */
static frit_uop *push_reshape(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int na) {
  (void)a, (void)na;
  frit_uop *x = root->src[0], *c[FRIT_MAX_DIMS], *ic[FRIT_MAX_DIMS], *gate;
  int n = decode(ctx, root, c, &gate);
  const frit_shape *in = frit_shape_of(ctx, x->src[0]);
  if (n < 0 || !in) return NULL;
  frit_uop *const *od = x->src + 1;
  int oi[FRIT_MAX_DIMS], ii[FRIT_MAX_DIMS], no = 0, ni = 0;
  for (int k = 0; k < n; k++)
    if (!is_c(od[k], 1)) oi[no++] = k;
  for (int k = 0; k < in->ndim; k++)
    if (!is_c(in->dims[k], 1)) ii[ni++] = k;
  bool direct = no == ni;
  for (int k = 0; direct && k < no; k++) direct = od[oi[k]] == in->dims[ii[k]];
  if (direct) {
    for (int k = 0; k < in->ndim; k++) ic[k] = i64c(ctx, 0);
    for (int k = 0; k < no; k++) ic[ii[k]] = c[oi[k]];
  } else {
    /* leading and trailing dims the reshape keeps map one to one; only the dims between are
     * flattened and unflattened, and the outermost of those needs no MOD (the middle products
     * agree): with symbolic sizes the simplifier cannot remove a flatten it never sees */
    int pre = 0, suf = 0;
    while (pre < n && pre < in->ndim && od[pre] == in->dims[pre]) ic[pre] = c[pre], pre++;
    while (suf < n - pre && suf < in->ndim - pre && od[n - 1 - suf] == in->dims[in->ndim - 1 - suf])
      ic[in->ndim - 1 - suf] = c[n - 1 - suf], suf++;
    frit_uop *flat = n - suf > pre ? flatten(ctx, c + pre, od + pre, n - suf - pre) : i64c(ctx, 0);
    frit_uop *stride = i64c(ctx, 1);
    for (int k = in->ndim - 1 - suf; k >= pre && flat; k--) {
      frit_uop *d = in->dims[k];
      if (is_c(d, 1)) {
        ic[k] = i64c(ctx, 0);
        continue;
      }
      frit_uop *q = is_c(stride, 1) ? flat : frit_binary(ctx, FRIT_OP_IDIV, flat, stride);
      ic[k] = k == pre ? q : frit_binary(ctx, FRIT_OP_MOD, q, d);
      stride = is_c(stride, 1) ? d : mul(ctx, stride, d);
    }
    if (!flat) return NULL;
  }
  return elem(ctx, x->src[0], ic, in->ndim, gate);
}

static frit_uop *push_permute(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int na) {
  (void)a, (void)na;
  frit_uop *x = root->src[0], *c[FRIT_MAX_DIMS], *ic[FRIT_MAX_DIMS], *gate;
  int n = decode(ctx, root, c, &gate);
  if (n < 0) return NULL;
  const int64_t *perm = x->arg.blob;
  for (int k = 0; k < n; k++) ic[perm[k]] = c[k];
  return elem(ctx, x->src[0], ic, n, gate);
}

static frit_uop *push_expand(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int na) {
  (void)a, (void)na;
  frit_uop *x = root->src[0], *c[FRIT_MAX_DIMS], *gate;
  int n = decode(ctx, root, c, &gate);
  const frit_shape *in = frit_shape_of(ctx, x->src[0]);
  if (n < 0 || !in) return NULL;
  for (int k = 0; k < n; k++)
    if (is_c(in->dims[k], 1)) c[k] = i64c(ctx, 0);
  return elem(ctx, x->src[0], c, n, gate);
}

static frit_uop *push_shrink(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int na) {
  (void)a, (void)na;
  frit_uop *x = root->src[0], *c[FRIT_MAX_DIMS], *gate;
  int n = decode(ctx, root, c, &gate);
  if (n < 0) return NULL;
  for (int k = 0; k < n; k++)
    if (!is_c(x->src[1 + k], 0) && !(c[k] = add(ctx, c[k], x->src[1 + k]))) return NULL;
  return elem(ctx, x->src[0], c, n, gate);
}

static frit_uop *push_flip(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int na) {
  (void)a, (void)na;
  frit_uop *x = root->src[0], *c[FRIT_MAX_DIMS], *gate;
  int n = decode(ctx, root, c, &gate);
  const frit_shape *in = frit_shape_of(ctx, x->src[0]);
  if (n < 0 || !in) return NULL;
  const int64_t *axes = x->arg.blob;
  for (uint32_t i = 0; i < x->arg.n; i++) {
    int k = (int)axes[i];
    if (!(c[k] = sub(ctx, sub(ctx, in->dims[k], i64c(ctx, 1)), c[k]))) return NULL;
  }
  return elem(ctx, x->src[0], c, n, gate);
}

/* Zero padding: valid ? x[i - before] : 0, with the load gated so that it never reads outside. */
static frit_uop *push_pad(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int na) {
  (void)a, (void)na;
  frit_uop *x = root->src[0], *c[FRIT_MAX_DIMS], *gate, *valid = NULL;
  int n = decode(ctx, root, c, &gate);
  const frit_shape *in = frit_shape_of(ctx, x->src[0]);
  if (n < 0 || !in) return NULL;
  for (int k = 0; k < n; k++) {
    frit_uop *b = x->src[1 + k], *e = x->src[1 + n + k], *ok = NULL;
    if (!is_c(b, 0)) ok = frit_binary(ctx, FRIT_OP_CMPLE, b, c[k]);
    if (!is_c(e, 0)) {
      frit_uop *hi = frit_binary(ctx, FRIT_OP_CMPLT, c[k], is_c(b, 0) ? in->dims[k] : add(ctx, b, in->dims[k]));
      ok = ok ? frit_binary(ctx, FRIT_OP_AND, ok, hi) : hi;
    }
    if (!is_c(b, 0)) c[k] = sub(ctx, c[k], b);
    if (ok) valid = valid ? frit_binary(ctx, FRIT_OP_AND, valid, ok) : ok;
    if (!c[k] || (ok && !valid)) return NULL;
  }
  if (!valid) return elem(ctx, x->src[0], c, n, gate);
  frit_uop *g = gate ? frit_binary(ctx, FRIT_OP_AND, gate, valid) : valid;
  frit_uop *v = g ? elem(ctx, x->src[0], c, n, g) : NULL;
  frit_uop *zero = frit_const_int(ctx, x->dtype, 0);
  return v && zero ? frit_ternary(ctx, FRIT_OP_WHERE, valid, v, zero) : NULL;
}

static frit_uop *push_gather(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int na) {
  (void)a, (void)na;
  frit_uop *x = root->src[0], *c[FRIT_MAX_DIMS], *ic[FRIT_MAX_DIMS], *gate;
  int n = decode(ctx, root, c, &gate);
  int xr = rank_of(ctx, x->src[0]), ir = rank_of(ctx, x->src[1]), ax = (int)x->arg.i0;
  if (n < 0 || xr < 0 || ir < 0) return NULL;
  frit_uop *v = elem(ctx, x->src[1], c + ax, ir, gate);
  if (!v) return NULL;
  for (int k = 0; k < ax; k++) ic[k] = c[k];
  ic[ax] = v;
  for (int k = ax + 1; k < xr; k++) ic[k] = c[k - 1 + ir];
  return elem(ctx, x->src[0], ic, xr, gate);
}

static frit_uop *push_reduce(frit_ctx *ctx, frit_uop *root, frit_uop *const *a, int na) {
  (void)a, (void)na;
  frit_uop *x = root->src[0], *c[FRIT_MAX_DIMS], *gate, *src[1 + FRIT_MAX_DIMS];
  int n = decode(ctx, root, c, &gate);
  const frit_shape *in = frit_shape_of(ctx, x->src[0]);
  if (n < 0 || !in) return NULL;
  const int64_t *axes = x->arg.blob;
  int nr = 0;
  for (uint32_t i = 0; i < x->arg.n; i++) {
    int k = (int)axes[i];
    frit_uop *r = frit_range(ctx, in->dims[k], cur->next_axis++, FRIT_AXIS_REDUCE);
    if (!r) return NULL;
    c[k] = r;
    src[1 + nr++] = r;
  }
  if (!(src[0] = elem(ctx, x->src[0], c, n, gate))) return NULL;
  if (nr == 0) return src[0];
  frit_arg arg = frit_arg_none();
  arg.i0 = x->arg.i0;
  return frit_uop_new(ctx, FRIT_OP_REDUCE, x->dtype, src, 1 + nr, &arg);
}

static const frit_rule_fn rangeify_fns[] = {
    {"realized", NULL, realized},         {"load", load, NULL},
    {"elem_form", NULL, elem_form},
    {"leaf", leaf, NULL},                 {"push_iota", push_iota, NULL},
    {"push_same", push_same, NULL},
    {"push_alu", push_alu, NULL},         {"push_reshape", push_reshape, NULL},
    {"push_permute", push_permute, NULL}, {"push_expand", push_expand, NULL},
    {"push_pad", push_pad, NULL},         {"push_shrink", push_shrink, NULL},
    {"push_flip", push_flip, NULL},       {"push_gather", push_gather, NULL},
    {"push_reduce", push_reduce, NULL},
};

static const char rangeify_text[] =
#include "schedule/rangeify.rules.inc"
    ;

/* The parsed rules, once per ctx (found among its owned objects by the holder's destructor):
 * parsing them on every compile kept a new rule set per program in the ctx, ~130 KB each. */
typedef struct rules_holder {
  frit_ruleset *rs;
} rules_holder;
static void rules_holder_destroy(void *p) { free(p); } /* the rule set is owned by the ctx */

frit_ruleset *sched_rangeify_rules(frit_ctx *ctx) {
  for (size_t i = 0; i < ctx->owned_count; i++)
    if (ctx->owned[i].destroy == rules_holder_destroy) return ((rules_holder *)ctx->owned[i].ptr)->rs;
  frit_ruleset *rs = frit_ruleset_parse(ctx, "rangeify", rangeify_text, rangeify_fns,
                                        (int)(sizeof rangeify_fns / sizeof *rangeify_fns));
  rules_holder *h = rs ? malloc(sizeof *h) : NULL;
  if (h) {
    h->rs = rs;
    if (!frit_ctx_own(ctx, h, rules_holder_destroy)) frit_clear_error(ctx); /* not cached: still usable */
  }
  return rs;
}

/* ---------- kernels ---------- */

static frit_uop *scan_identity(frit_ctx *ctx, frit_op op, frit_dtype dt) {
  int64_t lo, hi;
  bool fl = frit_dtype_is_float(dt);
  frit_dtype_limits(dt, &lo, &hi);
  if (op == FRIT_OP_MUL) return frit_const_int(ctx, dt, 1);
  if (op == FRIT_OP_MAX) return fl ? frit_const_float(ctx, dt, -1.0 / 0.0) : frit_const_int(ctx, dt, lo);
  if (op == FRIT_OP_MIN) {
    if (fl) return frit_const_float(ctx, dt, 1.0 / 0.0);
    if (frit_dtype_kind(dt) == FRIT_U64) {
      frit_scalar s;
      s.u = UINT64_MAX;
      return frit_const(ctx, dt, s);
    }
    return frit_const_int(ctx, dt, hi);
  }
  if (op == FRIT_OP_AND) return frit_const_int(ctx, dt, -1);
  return frit_const_int(ctx, dt, 0); /* ADD, OR, XOR */
}

/* Any element-form INDEX left means a tensor op without a rule. */
static frit_status check_lowered(frit_ctx *ctx, frit_uop *ast) {
  size_t cap = 64, sp = 0;
  frit_uop **st = malloc(cap * sizeof *st);
  uint8_t *seen = calloc((size_t)ast->id + 1, 1);
  frit_status rc = FRIT_OK;
  if (!st || !seen) {
    free(st), free(seen);
    return frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
  }
  st[sp++] = ast;
  seen[ast->id] = 1;
  while (sp && rc == FRIT_OK) {
    frit_uop *u = st[--sp];
    if (u->op == FRIT_OP_INDEX && !frit_dtype_is_ptr(u->dtype)) {
      rc = frit_set_error(ctx, FRIT_ERR_INVALID, "schedule: op %s (node %u) cannot be lowered to loops",
                          frit_op_name((frit_op)u->src[0]->op), u->src[0]->id);
      break;
    }
    for (uint32_t i = 0; i < u->nsrc; i++) {
      frit_uop *s = u->src[i];
      if (seen[s->id]) continue;
      seen[s->id] = 1;
      if (sp == cap) {
        frit_uop **g = realloc(st, 2 * cap * sizeof *g);
        if (!g) {
          rc = frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
          break;
        }
        st = g, cap *= 2;
      }
      st[sp++] = s;
    }
  }
  free(st);
  free(seen);
  return rc;
}

static frit_status finish(sched_state *S, frit_ctx *ctx, frit_uop *t, frit_uop *effect, frit_sched_kernel *out);

/* The update kernel of SCATTER(x, idx, upd) (x already copied into the output buffer):
 *   for k (x.shape[1:], outermost GLOBAL): for j in order (LOOP, sequential):
 *     p = out + idx[j] * inner + k;  *p = combine(*p, upd[j, k])
 * The j loop is innermost and sequential, so each element sees its updates in index order; the
 * store of iteration j reaches the load of iteration j+1 because both run in program order on
 * one thread (the codegen never splits a loop whose store address depends on it only through a
 * load). Different k touch different elements, so the k loops may run in parallel. */
static frit_uop *scatter_effect(sched_state *S, frit_uop *t, int out_buf, frit_uop **order, int *no) {
  frit_ctx *ctx = S->ctx;
  const frit_shape *sh = frit_shape_of(ctx, t), *si = frit_shape_of(ctx, t->src[1]);
  int n = sh->ndim;
  frit_uop *r[FRIT_MAX_DIMS], *c[FRIT_MAX_DIMS];
  frit_uop *dg = global_of(S, out_buf); /* parameter 0: the output, before the loads of idx/upd */
  if (!dg) return NULL;
  for (int k = 1; k < n; k++) {
    if (!(r[k] = frit_range(ctx, sh->dims[k], k, k == 1 ? FRIT_AXIS_GLOBAL : FRIT_AXIS_LOOP))) return NULL;
    order[(*no)++] = r[k];
  }
  if (!(r[0] = frit_range(ctx, si->dims[0], 0, FRIT_AXIS_LOOP))) return NULL;
  order[(*no)++] = r[0];
  frit_uop *upd = elem(ctx, t->src[2], r, n, NULL);
  frit_uop *iv = elem(ctx, t->src[1], r, 1, NULL);
  if (!upd || !iv || !(upd = frit_rewrite(ctx, upd, S->rules)) || !(iv = frit_rewrite(ctx, iv, S->rules))) return NULL;
  c[0] = iv;
  for (int k = 1; k < n; k++) c[k] = r[k];
  frit_uop *flat = flatten(ctx, c, sh->dims, n);
  if (!flat) return NULL;
  frit_uop *ixs[2] = {dg, flat};
  frit_uop *ix = frit_uop_new(ctx, FRIT_OP_INDEX, dg->dtype, ixs, 2, NULL);
  frit_uop *old = ix ? frit_uop_new(ctx, FRIT_OP_LOAD, t->dtype, &ix, 1, NULL) : NULL;
  if (!old) return NULL;
  bool b = frit_dtype_is_bool(t->dtype);
  frit_uop *nv = upd;
  switch ((frit_atomic_op)t->arg.i0) {
  case FRIT_ATOMIC_ADD: nv = frit_binary(ctx, b ? FRIT_OP_OR : FRIT_OP_ADD, old, upd); break;
  case FRIT_ATOMIC_MIN: nv = frit_binary(ctx, b ? FRIT_OP_AND : FRIT_OP_MIN, old, upd); break;
  case FRIT_ATOMIC_MAX: nv = frit_binary(ctx, b ? FRIT_OP_OR : FRIT_OP_MAX, old, upd); break;
  case FRIT_ATOMIC_AND: nv = frit_binary(ctx, FRIT_OP_AND, old, upd); break; /* logical on bool */
  case FRIT_ATOMIC_OR: nv = frit_binary(ctx, FRIT_OP_OR, old, upd); break;
  case FRIT_ATOMIC_XOR: nv = frit_binary(ctx, FRIT_OP_XOR, old, upd); break;
  case FRIT_ATOMIC_XCHG: break;
  case FRIT_ATOMIC_COUNT_:
    frit_set_error(ctx, FRIT_ERR_INVALID, "schedule: SCATTER mode %d not supported", (int)t->arg.i0);
    return NULL;
  }
  if (!nv) return NULL;
  frit_uop *st[2] = {ix, nv};
  return frit_uop_new(ctx, FRIT_OP_STORE, FRIT_VOID, st, 2, NULL);
}

/* GROUP(STORE root, STORE sibling...) at the kernel's index. The element forms are rewritten in
 * one pass, so a sibling's reads of the root's value share its nodes (a reduction is computed
 * once): the root is not realized inside its own kernel. */
static frit_uop *sibling_stores(sched_state *S, const sched_kspec *ks, frit_uop *const *r, int n, frit_uop *flat,
                                frit_uop *oidx) {
  frit_ctx *ctx = S->ctx;
  frit_uop *vals[1 + SCHED_MAX_SIB], *st[1 + SCHED_MAX_SIB];
  int nv = 1 + ks->nsib;
  vals[0] = elem(ctx, ks->root, r, n, NULL);
  for (int k = 0; k < ks->nsib; k++) vals[1 + k] = elem(ctx, ks->sib[k], r, n, NULL);
  for (int k = 0; k < nv; k++)
    if (!vals[k]) return NULL;
  frit_uop *all = frit_uop_new(ctx, FRIT_OP_SINK, FRIT_VOID, vals, nv, NULL);
  if (!all || !(all = frit_rewrite(ctx, all, S->rules))) return NULL;
  for (int k = 0; k < nv; k++) {
    frit_uop *ix = oidx;
    if (k) {
      frit_uop *dg = global_of(S, ks->sib_buf[k - 1]);
      frit_uop *src[2] = {dg, flat};
      ix = dg ? frit_uop_new(ctx, FRIT_OP_INDEX, dg->dtype, src, 2, NULL) : NULL;
    }
    frit_uop *s2[2] = {ix, all->src[k]};
    if (!ix || !(st[k] = frit_uop_new(ctx, FRIT_OP_STORE, FRIT_VOID, s2, 2, NULL))) return NULL;
  }
  return frit_uop_new(ctx, FRIT_OP_GROUP, FRIT_VOID, st, nv, NULL);
}

static bool fused(const void *env, const frit_uop *u) {
  const sched_state *S = env;
  return !sched_is_leaf(u) && u->id < S->nids && S->buf_of[u->id] < 0;
}

/* A PERMUTE moving the last axis of a fused reduction (sched_permuted_reduction), read by t
 * itself or through t's fused elementwise operands (a conv's bias): that permute, else NULL.
 * Looping over t's axes would make the reduction's innermost output axis a strided one, which
 * loses its register tiles (a conv's (N, OH, OW, O) product stored as NCHW through a separate
 * transposing kernel cost 15% of the conv); t then loops in the reduction's order. */
static frit_uop *permuted_reduction(sched_state *S, frit_uop *t, int depth) {
  if (depth > 8) return NULL;
  if (t->op == FRIT_OP_PERMUTE) return sched_permuted_reduction(t, fused, S) ? t : NULL;
  if (!sched_is_elementwise(t)) return NULL;
  for (uint32_t i = 0; i < t->nsrc; i++) {
    frit_uop *p = fused(S, t->src[i]) ? permuted_reduction(S, t->src[i], depth + 1) : NULL;
    if (p) return p;
  }
  return NULL;
}

frit_status sched_rangeify(sched_state *S, const sched_kspec *ks, frit_sched_kernel *out) {
  frit_ctx *ctx = S->ctx;
  frit_uop *t = ks->root;
  const frit_shape *sh = frit_shape_of(ctx, t);
  const frit_ruleset *rs = S->rules;
  if (!sh || !rs) return frit_last_status(ctx);
  S->root = t;
  S->load_root = ks->load_root;
  S->sibs = ks->sib;
  S->sib_bufs = ks->sib_buf;
  S->nsib = ks->nsib;
  S->nparams = 0;
  S->next_axis = sh->ndim;
  cur = S;
  int n = sh->ndim;
  if (ks->scatter == 2) {
    frit_uop *order[FRIT_MAX_DIMS];
    int no = 0;
    frit_uop *effect = scatter_effect(S, t, ks->out_buf, order, &no);
    if (!effect) return frit_last_status(ctx);
    frit_uop *es[1 + FRIT_MAX_DIMS];
    es[0] = effect;
    memcpy(es + 1, order, (size_t)no * sizeof *order);
    if (!(effect = frit_uop_new(ctx, FRIT_OP_END, FRIT_VOID, es, 1 + no, NULL))) return frit_last_status(ctx);
    return finish(S, ctx, t, effect, out);
  }
  bool scan = t->op == FRIT_OP_SCAN && !ks->load_root;
  int sax = scan ? (int)t->arg.i1 : -1;
  frit_uop *r[FRIT_MAX_DIMS], *order[FRIT_MAX_DIMS];
  /* loops: output axes in order; a scan's axis goes innermost and stays sequential (LOOP); a
   * permuted reduction loops in its source's order (the order its register tiles want) and is
   * stored through the permutation */
  int no = 0;
  frit_uop *pr = !scan && !ks->load_root && !ks->nsib && !ks->scatter ? permuted_reduction(S, t, 0) : NULL;
  const int64_t *perm = pr ? (const int64_t *)pr->arg.blob : NULL;
  const frit_shape *loop_sh = pr ? frit_shape_of(ctx, pr->src[0]) : sh;
  for (int k = 0; k < n; k++) {
    if (k == sax) continue;
    frit_uop *rk = frit_range(ctx, loop_sh->dims[k], k, no == 0 ? FRIT_AXIS_GLOBAL : FRIT_AXIS_LOOP);
    if (!rk) return frit_last_status(ctx);
    order[no++] = rk;
  }
  for (int k = 0, q = 0; k < n; k++)
    if (k != sax) r[k] = perm ? order[perm[k]] : order[q++];
  if (scan) {
    if (!(r[sax] = frit_range(ctx, sh->dims[sax], sax, FRIT_AXIS_LOOP))) return frit_last_status(ctx);
    order[no++] = r[sax];
  }
  frit_uop *dg = global_of(S, ks->out_buf);
  frit_uop *flat = flatten(ctx, r, sh->dims, n);
  if (!dg || !flat) return frit_last_status(ctx);
  frit_uop *value = scan || ks->scatter == 1 ? elem(ctx, t->src[0], r, n, NULL) : elem(ctx, t, r, n, NULL);
  if (!value || (!ks->nsib && !(value = frit_rewrite(ctx, value, rs)))) return frit_last_status(ctx);
  frit_uop *oix[2] = {dg, flat};
  frit_uop *oidx = frit_uop_new(ctx, FRIT_OP_INDEX, dg->dtype, oix, 2, NULL);
  if (!oidx) return frit_last_status(ctx);
  frit_uop *effect;
  if (scan) {
    /* sequential accumulator in a register: acc = (first ? identity : acc) op x; out = acc */
    frit_arg ra = frit_arg_none();
    ra.i1 = 1;
    frit_uop *acc = frit_uop_new(ctx, FRIT_OP_DEFINE_REG, frit_dtype_ptr(t->dtype, FRIT_ADDR_REG), NULL, 0, &ra);
    frit_uop *first = frit_binary(ctx, FRIT_OP_CMPNE, r[sax], i64c(ctx, 0));
    frit_uop *ai[3] = {acc, i64c(ctx, 0), first};
    frit_uop *gidx = acc && first ? frit_uop_new(ctx, FRIT_OP_INDEX, acc->dtype, ai, 3, NULL) : NULL;
    frit_uop *pidx = acc ? frit_uop_new(ctx, FRIT_OP_INDEX, acc->dtype, ai, 2, NULL) : NULL;
    frit_uop *ld[2] = {gidx, scan_identity(ctx, (frit_op)t->arg.i0, t->dtype)};
    frit_uop *prev = gidx && ld[1] ? frit_uop_new(ctx, FRIT_OP_LOAD, t->dtype, ld, 2, NULL) : NULL;
    frit_uop *nv = prev ? frit_binary(ctx, (frit_op)t->arg.i0, prev, value) : NULL;
    if (!nv || !pidx) return frit_last_status(ctx);
    frit_uop *s1[2] = {pidx, nv}, *s2[2] = {oidx, nv};
    frit_uop *g[2] = {frit_uop_new(ctx, FRIT_OP_STORE, FRIT_VOID, s1, 2, NULL),
                      frit_uop_new(ctx, FRIT_OP_STORE, FRIT_VOID, s2, 2, NULL)};
    effect = g[0] && g[1] ? frit_uop_new(ctx, FRIT_OP_GROUP, FRIT_VOID, g, 2, NULL) : NULL;
  } else if (ks->nsib) {
    if (!(effect = sibling_stores(S, ks, r, n, flat, oidx))) return frit_last_status(ctx);
  } else {
    frit_uop *s2[2] = {oidx, value};
    effect = frit_uop_new(ctx, FRIT_OP_STORE, FRIT_VOID, s2, 2, NULL);
  }
  if (!effect) return frit_last_status(ctx);
  if (no) {
    frit_uop *es[1 + FRIT_MAX_DIMS];
    es[0] = effect;
    memcpy(es + 1, order, (size_t)no * sizeof *order);
    if (!(effect = frit_uop_new(ctx, FRIT_OP_END, FRIT_VOID, es, 1 + no, NULL))) return frit_last_status(ctx);
  }
  return finish(S, ctx, t, effect, out);
}

/* SINK, simplification and the parameter table of a kernel whose effect is built. */
static frit_status finish(sched_state *S, frit_ctx *ctx, frit_uop *t, frit_uop *effect, frit_sched_kernel *out) {
  frit_uop *ast = frit_sink(ctx, &effect, 1);
  if (!ast || !(ast = frit_simplify(ctx, ast))) return frit_last_status(ctx);
  if (check_lowered(ctx, ast) != FRIT_OK) return frit_last_status(ctx);
  out->ast = ast;
  out->nparams = S->nparams;
  out->param_buf = frit_arena_alloc(&ctx->arena, (size_t)(S->nparams ? S->nparams : 1) * sizeof(int));
  out->param_written = frit_arena_alloc(&ctx->arena, (size_t)(S->nparams ? S->nparams : 1));
  if (!out->param_buf || !out->param_written) return frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
  for (int p = 0; p < S->nparams; p++) {
    out->param_buf[p] = S->params[p];
    out->param_written[p] = p == 0;
    for (int k = 0; k < S->nsib; k++)
      if (S->params[p] == S->sib_bufs[k]) out->param_written[p] = 1;
  }
  out->tensor = t;
  return FRIT_OK;
}
