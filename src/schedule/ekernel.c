/* Explicit kernels: KERNEL nodes (Contract A, built by src/tensor/kernel.c) lowered to one
 * structured kernel each (Contract B, docs/schedule.md "Explicit kernels"). */
#include "schedule/sched_internal.h"

#include "ir/walk.h"

#include <inttypes.h>
#include <stdio.h>

typedef struct ek_kernel {
  frit_uop *k;
  frit_uop **after; /* its versions AFTER(t, K), first-store order */
  int nafter;
  uint8_t *full;     /* per version: every element is stored before anything reads it */
  frit_uop **scalar; /* tensors K reads as whole 0-d values */
  int nscalar;
  int64_t next_axis; /* one above the largest axis id in the body */
} ek_kernel;

struct sched_ek {
  ek_kernel *ks;
  int n;
};

static frit_status nomem(frit_ctx *ctx) { return frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory"); }

/* A growable array of node pointers. */
typedef struct nodes {
  frit_uop **v;
  int n, cap;
} nodes;

static bool push(nodes *a, frit_uop *u) {
  if (a->n == a->cap) {
    int c = a->cap ? 2 * a->cap : 8;
    frit_uop **nv = realloc(a->v, (size_t)c * sizeof *nv);
    if (!nv) return false;
    a->v = nv, a->cap = c;
  }
  a->v[a->n++] = u;
  return true;
}

static bool has(const nodes *a, const frit_uop *u) {
  for (int i = 0; i < a->n; i++)
    if (a->v[i] == u) return true;
  return false;
}

static bool is_kernel_level(frit_op op) {
  return op == FRIT_OP_RANGE || op == FRIT_OP_END || op == FRIT_OP_IF || op == FRIT_OP_BARRIER || op == FRIT_OP_SEQ ||
         op == FRIT_OP_BREAK || op == FRIT_OP_CONTINUE || op == FRIT_OP_DEFINE_GLOBAL || op == FRIT_OP_DEFINE_LOCAL ||
         op == FRIT_OP_DEFINE_REG || op == FRIT_OP_INDEX || op == FRIT_OP_LOAD || op == FRIT_OP_STORE ||
         op == FRIT_OP_ATOMIC || op == FRIT_OP_ATOMIC_CAS || op == FRIT_OP_REDUCE || op == FRIT_OP_SINK ||
         op == FRIT_OP_GROUP || op == FRIT_OP_SPECIAL || op == FRIT_OP_VECTORIZE || op == FRIT_OP_GEP ||
         op == FRIT_OP_BIND;
}

frit_status sched_check_tensor_node(frit_ctx *ctx, frit_uop *u) {
  frit_op op = (frit_op)u->op;
  if (op == FRIT_OP_KERNEL || op == FRIT_OP_LOOP) return FRIT_OK; /* void: no shape */
  bool tensor_after = op == FRIT_OP_AFTER && u->nsrc == 2 &&
                      (u->src[1]->op == FRIT_OP_KERNEL || u->src[1]->op == FRIT_OP_LOOP);
  if (is_kernel_level(op) || (op == FRIT_OP_AFTER && !tensor_after)) {
    if (op == FRIT_OP_RANGE)
      return frit_set_error(ctx, FRIT_ERR_INVALID,
                            "schedule: RANGE (node %u, axis %" PRId64 ") of a kernel is used outside its kernel",
                            u->id, u->arg.i0);
    return frit_set_error(ctx, FRIT_ERR_INVALID, "schedule: kernel-level node %s (node %u) is used outside its kernel",
                          frit_op_name(op), u->id);
  }
  return frit_shape_of(ctx, u) ? FRIT_OK : frit_last_status(ctx);
}

/* ---------- finding kernels and their versions ---------- */

static bool is_address(const frit_uop *u) {
  return u->op == FRIT_OP_INDEX && frit_dtype_is_ptr(u->dtype) && u->src[0]->op != FRIT_OP_DEFINE_REG &&
         u->src[0]->op != FRIT_OP_DEFINE_GLOBAL && u->src[0]->op != FRIT_OP_DEFINE_LOCAL;
}

/* Walks K's body in program order (pre-order, sources in order), not entering its tensor
 * sources: the written tensors (targets of STORE/ATOMIC), the tensors used as whole values, and
 * the largest axis id. */
static frit_status scan_body(frit_ctx *ctx, frit_uop *k, const uint8_t *is_src, nodes *written, nodes *scalar,
                             int64_t *max_axis) {
  frit_uop *body = k->src[0];
  uint8_t *seen = calloc((size_t)k->id + 1, 1);
  nodes st = {0};
  frit_status rc = FRIT_OK;
  if (!seen || !push(&st, body)) rc = nomem(ctx);
  if (rc == FRIT_OK) seen[body->id] = 1;
  while (rc == FRIT_OK && st.n) {
    frit_uop *u = st.v[--st.n];
    if (u->op == FRIT_OP_RANGE && u->arg.i0 > *max_axis) *max_axis = u->arg.i0;
    if ((u->op == FRIT_OP_STORE || u->op == FRIT_OP_ATOMIC) && is_address(u->src[0]) && is_src[u->src[0]->src[0]->id] &&
        !has(written, u->src[0]->src[0]) && !push(written, u->src[0]->src[0]))
      rc = nomem(ctx);
    for (uint32_t i = u->nsrc; rc == FRIT_OK && i-- > 0;) {
      frit_uop *s = u->src[i];
      if (s->id < k->id && is_src[s->id]) {
        if (!(i == 0 && is_address(u)) && s->op != FRIT_OP_CONST && s->op != FRIT_OP_DEFINE_VAR && !has(scalar, s) &&
            !push(scalar, s))
          rc = nomem(ctx);
        continue;
      }
      if (s->id > k->id || seen[s->id]) continue;
      seen[s->id] = 1;
      if (!push(&st, s)) rc = nomem(ctx);
    }
  }
  free(seen);
  free(st.v);
  return rc;
}

/* Does node u (a statement of K's body) reach an element address of t? */
static bool touches(frit_uop *u, const frit_uop *t, const uint8_t *is_src, uint8_t *seen, nodes *st) {
  st->n = 0;
  if (!push(st, u)) return true; /* out of memory: answer conservatively */
  while (st->n) {
    frit_uop *x = st->v[--st->n];
    if (is_address(x) && x->src[0] == t) return true;
    for (uint32_t i = 0; i < x->nsrc; i++) {
      frit_uop *s = x->src[i];
      if (is_src[s->id] || seen[s->id]) continue;
      seen[s->id] = 1;
      if (!push(st, s)) return true;
    }
  }
  return false;
}

/* Is t's old value dead in K: does each point store its own element of t, unconditionally at
 * the top level of the body, before anything touches t? Then every element is overwritten
 * before it is read (points only read their own stores; reading another point's element is
 * a race whose result is unspecified anyway) and the version needs no copy of t. */
static bool fully_stored(frit_ctx *ctx, frit_uop *k, frit_uop *t, const uint8_t *is_src) {
  if (k->arg.i0 == FRIT_KERNEL_TRUSTED) /* frit's own kernel says t is its scratch (kb_scratch) */
    for (uint32_t s = 1; s < k->nsrc && s < 64; s++)
      if (k->src[s] == t && ((uint64_t)k->arg.i1 >> s & 1)) return true;
  frit_uop *body = k->src[0], *seq = body->op == FRIT_OP_END ? body->src[0] : body;
  const frit_shape *sh = frit_shape_of(ctx, t);
  int d = body->op == FRIT_OP_END ? (int)body->nsrc - 1 : 0;
  if (!sh || sh->ndim != d || seq->op != FRIT_OP_SEQ) return false;
  for (int a = 0; a < d; a++) /* the kernel's index space is t's shape */
    if (body->src[1 + a]->op != FRIT_OP_RANGE || body->src[1 + a]->src[0] != sh->dims[a]) return false;
  uint8_t *seen = calloc((size_t)k->id + 1, 1);
  nodes st = {0};
  bool full = false;
  for (uint32_t i = 0; seen && i < seq->nsrc; i++) {
    frit_uop *c = seq->src[i];
    if (c->op == FRIT_OP_STORE && is_address(c->src[0]) && c->src[0]->src[0] == t && c->src[0]->nsrc == 2) {
      frit_uop *I = c->src[0]->src[1];
      bool ident = d == 0 ? I->op == FRIT_OP_CONST : d == 1 ? I == body->src[1] : I->op == FRIT_OP_VECTORIZE;
      for (int a = 0; ident && d > 1 && a < d; a++) ident = (int)I->nsrc == d && I->src[a] == body->src[1 + a];
      /* the stored value must not read t either */
      if (ident && !touches(c->src[1], t, is_src, seen, &st)) full = true;
      break;
    }
    if (touches(c, t, is_src, seen, &st)) break;
  }
  free(seen);
  free(st.v);
  return full;
}

static frit_uop **arena_nodes(frit_ctx *ctx, const nodes *a) {
  frit_uop **v = frit_arena_alloc(&ctx->arena, (size_t)(a->n + 1) * sizeof *v);
  if (v && a->n) memcpy(v, a->v, (size_t)a->n * sizeof *v);
  return v;
}

frit_status sched_ek_prepare(sched_state *S, frit_uop *const *outs, int n, frit_uop ***extra, int *nextra) {
  frit_ctx *ctx = S->ctx;
  *extra = NULL, *nextra = 0;
  S->ek = NULL;
  size_t count = frit_node_count(ctx);
  uint8_t *seen = calloc(count + 1, 1);
  nodes st = {0}, kernels = {0}, ex = {0};
  frit_status rc = FRIT_OK;
  if (!seen) return nomem(ctx);
  for (int i = 0; i < n && rc == FRIT_OK; i++)
    if (outs[i] && !seen[outs[i]->id]) {
      seen[outs[i]->id] = 1;
      if (!push(&st, outs[i])) rc = nomem(ctx);
    }
  while (rc == FRIT_OK && st.n) {
    frit_uop *u = st.v[--st.n];
    if (u->op == FRIT_OP_KERNEL && !push(&kernels, u)) rc = nomem(ctx);
    for (uint32_t i = 0; i < u->nsrc && rc == FRIT_OK; i++) {
      frit_uop *s = u->src[i];
      if (!sched_is_tensor_src(u, i) || seen[s->id]) continue;
      seen[s->id] = 1;
      if (!push(&st, s)) rc = nomem(ctx);
    }
  }
  if (rc != FRIT_OK || kernels.n == 0) goto done;
  sched_ek *E = frit_arena_alloc(&ctx->arena, sizeof *E);
  int32_t *slot = malloc((count + 1) * sizeof *slot); /* KERNEL id -> entry */
  nodes *found = calloc((size_t)kernels.n, sizeof *found); /* the graph's AFTER(t, K) per kernel */
  if (!E || !slot || !found || !(E->ks = frit_arena_alloc(&ctx->arena, (size_t)kernels.n * sizeof *E->ks))) {
    free(slot), free(found);
    rc = nomem(ctx);
    goto done;
  }
  E->n = kernels.n;
  for (size_t id = 0; id < count; id++) slot[id] = -1;
  uint32_t lo = UINT32_MAX;
  for (int j = 0; j < kernels.n; j++) {
    slot[kernels.v[j]->id] = j;
    if (kernels.v[j]->id < lo) lo = kernels.v[j]->id;
  }
  for (size_t id = lo; id < count && rc == FRIT_OK; id++) {
    frit_uop *u = frit_node_by_id(ctx, (uint32_t)id);
    if (sched_is_kversion(u) && slot[u->src[1]->id] >= 0 && !push(&found[slot[u->src[1]->id]], u)) rc = nomem(ctx);
  }
  for (int j = 0; j < kernels.n && rc == FRIT_OK; j++) {
    frit_uop *k = kernels.v[j];
    uint8_t *is_src = calloc((size_t)k->id + 1, 1);
    nodes written = {0}, scalar = {0}, after = {0};
    int64_t max_axis = -1;
    if (!is_src) rc = nomem(ctx);
    for (uint32_t i = 1; rc == FRIT_OK && i < k->nsrc; i++) is_src[k->src[i]->id] = 1;
    if (rc == FRIT_OK) rc = scan_body(ctx, k, is_src, &written, &scalar, &max_axis);
    /* versions the graph holds for tensors the body does not store to are versions too */
    for (int i = 0; rc == FRIT_OK && i < found[j].n; i++)
      if (!has(&written, found[j].v[i]->src[0]) && !push(&written, found[j].v[i]->src[0])) rc = nomem(ctx);
    for (int i = 0; rc == FRIT_OK && i < written.n; i++) {
      frit_uop *t = written.v[i], *a = NULL;
      for (int f = 0; f < found[j].n && !a; f++)
        if (found[j].v[f]->src[0] == t) a = found[j].v[f];
      if (!a) {
        frit_uop *src[2] = {t, k};
        if (!(a = frit_uop_new(ctx, FRIT_OP_AFTER, t->dtype, src, 2, NULL))) rc = frit_last_status(ctx);
      }
      if (rc == FRIT_OK && !push(&after, a)) rc = nomem(ctx);
      if (rc == FRIT_OK && (a->id >= count || !seen[a->id]) && !push(&ex, a)) rc = nomem(ctx);
    }
    ek_kernel *K = &E->ks[j];
    K->k = k;
    K->nafter = after.n;
    if (rc == FRIT_OK && !(K->full = frit_arena_alloc(&ctx->arena, (size_t)after.n + 1))) rc = nomem(ctx);
    for (int i = 0; rc == FRIT_OK && i < after.n; i++) K->full[i] = fully_stored(ctx, k, after.v[i]->src[0], is_src);
    K->nscalar = scalar.n;
    K->next_axis = max_axis + 1;
    if (rc == FRIT_OK && (!(K->after = arena_nodes(ctx, &after)) || !(K->scalar = arena_nodes(ctx, &scalar))))
      rc = nomem(ctx);
    free(is_src), free(written.v), free(scalar.v), free(after.v);
  }
  for (int j = 0; j < kernels.n; j++) free(found[j].v);
  free(found), free(slot);
  if (rc == FRIT_OK) {
    S->ek = E;
    *extra = ex.v, *nextra = ex.n;
    ex.v = NULL;
  }
done:
  free(seen), free(st.v), free(kernels.v), free(ex.v);
  return rc;
}

static const ek_kernel *find_kernel(const sched_state *S, const frit_uop *k) {
  for (int j = 0; S->ek && j < S->ek->n; j++)
    if (S->ek->ks[j].k == k) return &S->ek->ks[j];
  return NULL;
}

int sched_ek_versions(const sched_state *S, const frit_uop *k, frit_uop *const **after) {
  const ek_kernel *K = find_kernel(S, k);
  *after = K ? K->after : NULL;
  return K ? K->nafter : 0;
}

bool sched_ek_fully_stored(const sched_state *S, const frit_uop *a) {
  const ek_kernel *K = find_kernel(S, a->src[1]);
  for (int i = 0; K && i < K->nafter; i++)
    if (K->after[i] == a) return K->full[i] != 0;
  return false;
}

bool sched_ek_scalar_use(const sched_state *S, const frit_uop *k, const frit_uop *t) {
  const ek_kernel *K = find_kernel(S, k);
  for (int i = 0; K && i < K->nscalar; i++)
    if (K->scalar[i] == t) return true;
  return false;
}

void sched_ek_free(sched_state *S) { S->ek = NULL; /* arena-owned */ }

/* ---------- lowering ---------- */

typedef struct lower {
  sched_state *S;
  frit_ctx *ctx;
  const ek_kernel *K;
  const char *name;     /* kernel name, for messages */
  int bounds;           /* the schedule's bounds policy, UNCHECKED for a trusted kernel */
  uint8_t *is_src;      /* by id: a tensor source of K */
  uint8_t *own_range;   /* by id: a RANGE closed by an END of this body */
  frit_uop **memo;      /* by original id: the lowered node */
  frit_uop **checks;    /* by original element address id: CHECK statements (a SEQ) or NULL */
  uint8_t *pure;        /* by original id: a LOAD that became a pure value */
  frit_uop **global;    /* per version: its DEFINE_GLOBAL */
  frit_uop *perr;       /* the error buffer's DEFINE_GLOBAL (CHECK) */
  int perr_param;
  int depth;            /* lower_node's recursion depth */
} lower;

static frit_uop *i64c(frit_ctx *ctx, int64_t v) { return frit_const_int(ctx, FRIT_I64, v); }

static frit_uop *lower_node(lower *L, frit_uop *u);

/* The new-version DEFINE_GLOBAL of t when K writes t, else NULL. */
static frit_uop *written_global(const lower *L, const frit_uop *t) {
  for (int i = 0; i < L->K->nafter; i++)
    if (L->K->after[i]->src[0] == t) return L->global[i];
  return NULL;
}

/* "'keys'" for an input (through earlier versions), "'add#12'" for a computed tensor. */
static void tensor_label(const frit_uop *t, char *out, size_t cap) {
  while (sched_is_kversion(t)) t = t->src[0];
  if (t->op == FRIT_OP_BUFFER && t->arg.blob) {
    snprintf(out, cap, "'%s'", (const char *)t->arg.blob);
    return;
  }
  char low[32];
  const char *nm = frit_op_name((frit_op)t->op);
  size_t l = 0;
  for (; nm[l] && l + 1 < sizeof low; l++) low[l] = (char)(nm[l] >= 'A' && nm[l] <= 'Z' ? nm[l] - 'A' + 'a' : nm[l]);
  low[l] = 0;
  snprintf(out, cap, "'%s#%u'", low, t->id);
}

/* The error code (1 + message index) of an out-of-range access; equal messages share one. */
static int64_t error_code(lower *L, frit_uop *t, int axis, frit_uop *dim) {
  char label[96], dtext[96], msg[320];
  tensor_label(t, label, sizeof label);
  int64_t dv = frit_dim_value(dim);
  if (dv >= 0) snprintf(dtext, sizeof dtext, "%" PRId64, dv);
  else {
    const char *e = frit_render_c_expr(L->ctx, dim);
    snprintf(dtext, sizeof dtext, "%s", e ? e : "?");
    if (!e) frit_clear_error(L->ctx);
  }
  snprintf(msg, sizeof msg, "kernel %s: index out of range on axis %d of tensor %s (dim %s)", L->name, axis, label,
           dtext);
  sched_state *S = L->S;
  for (int i = 0; i < S->nerr_msgs; i++)
    if (!strcmp(S->err_msgs[i], msg)) return i + 1;
  if (S->nerr_msgs == S->cap_err_msgs) {
    int c = S->cap_err_msgs ? 2 * S->cap_err_msgs : 8;
    const char **nm = realloc(S->err_msgs, (size_t)c * sizeof *nm);
    if (!nm) return -1;
    S->err_msgs = nm, S->cap_err_msgs = c;
  }
  char *m = frit_arena_alloc(&L->ctx->arena, strlen(msg) + 1);
  if (!m) return -1;
  strcpy(m, msg);
  S->err_msgs[S->nerr_msgs++] = m;
  return S->nerr_msgs;
}

static frit_uop *and_gate(frit_ctx *ctx, frit_uop *a, frit_uop *b) { return a ? frit_binary(ctx, FRIT_OP_AND, a, b) : b; }

/* An element address INDEX(t, I[, gate]) after the bounds policy: the per-axis indices c (clamped
 * unless UNCHECKED or provably in range) and the gate (NULL if none). CHECK statements for the
 * address go to L->checks. Returns the rank, -1 on error. */
static int bounded(lower *L, frit_uop *A, frit_uop **c, frit_uop **gate) {
  frit_ctx *ctx = L->ctx;
  frit_uop *t = A->src[0], *I = A->src[1];
  const frit_shape *sh = frit_shape_of(ctx, t);
  if (!sh) return -1;
  int n = sh->ndim;
  *gate = NULL;
  if (A->nsrc > 2 && !(*gate = lower_node(L, A->src[2]))) return -1;
  for (int a = 0; a < n; a++) {
    frit_uop *x = n == 1 ? I : I->op == FRIT_OP_VECTORIZE && (int)I->nsrc == n ? I->src[a] : NULL;
    if (!x && I->op == FRIT_OP_CONST) x = frit_const(ctx, frit_dtype_scalar(I->dtype), I->arg.value);
    if (!x) {
      frit_set_error(ctx, FRIT_ERR_INVALID, "schedule: kernel %s: index of rank %d tensor is not a %d-vector",
                     L->name, n, n);
      return -1;
    }
    if (!(x = lower_node(L, x))) return -1;
    if (x->dtype != FRIT_I64 && !(x = frit_cast(ctx, x, FRIT_I64))) return -1;
    c[a] = x;
  }
  if (L->bounds == FRIT_BOUNDS_UNCHECKED) return n;
  frit_uop *chk[FRIT_MAX_DIMS];
  int nchk = 0;
  for (int a = 0; a < n; a++) {
    frit_uop *d = sh->dims[a], *x = c[a];
    int64_t dv = frit_dim_value(d);
    bool in_range = x->vmin >= 0 && ((dv >= 0 && x->vmax < dv) || x->vmax < d->vmin ||
                                     (x->op == FRIT_OP_RANGE && x->src[0] == d));
    if (d->vmin <= 0 && dv != 0 && !(*gate = and_gate(ctx, *gate, frit_binary(ctx, FRIT_OP_CMPLT, i64c(ctx, 0), d))))
      return -1; /* a dim that may be 0: no element to clamp into */
    if (dv == 0 && !(*gate = frit_const_int(ctx, FRIT_BOOL, 0))) return -1;
    if (in_range) continue;
    frit_uop *hi = frit_binary(ctx, FRIT_OP_SUB, d, i64c(ctx, 1));
    frit_uop *cl = hi ? frit_binary(ctx, FRIT_OP_MAX, frit_binary(ctx, FRIT_OP_MIN, x, hi), i64c(ctx, 0)) : NULL;
    if (!cl) return -1;
    c[a] = cl;
    if (L->bounds != FRIT_BOUNDS_CHECK) continue;
    frit_uop *bad = frit_binary(ctx, FRIT_OP_OR, frit_binary(ctx, FRIT_OP_CMPLT, x, i64c(ctx, 0)),
                                frit_binary(ctx, FRIT_OP_CMPLE, d, x));
    if (bad && A->nsrc > 2) bad = frit_binary(ctx, FRIT_OP_AND, lower_node(L, A->src[2]), bad);
    int64_t code = error_code(L, t, a, d);
    if (!bad || code < 0) return bad ? (nomem(ctx), -1) : -1;
    if (!L->perr) {
      if (!(L->perr = sched_global(L->S, L->S->err_buf))) return -1;
      L->perr_param = L->S->nparams - 1;
    }
    frit_uop *ix[3] = {L->perr, i64c(ctx, 0), bad};
    frit_uop *pi = frit_uop_new(ctx, FRIT_OP_INDEX, L->perr->dtype, ix, 3, NULL);
    frit_uop *st[2] = {pi, frit_const_int(ctx, FRIT_I32, code)};
    if (!pi || !st[1] || !(chk[nchk++] = frit_uop_new(ctx, FRIT_OP_STORE, FRIT_VOID, st, 2, NULL))) return -1;
  }
  if (nchk && !(L->checks[A->id] = frit_uop_new(ctx, FRIT_OP_SEQ, FRIT_VOID, chk, nchk, NULL))) return -1;
  return n;
}

/* Row-major flat index of c over dims d. */
static frit_uop *flatten(frit_ctx *ctx, frit_uop *const *c, frit_uop *const *d, int n) {
  frit_uop *flat = NULL, *stride = NULL;
  for (int k = n - 1; k >= 0; k--) {
    frit_uop *term = stride ? frit_binary(ctx, FRIT_OP_MUL, c[k], stride) : c[k];
    flat = flat ? frit_binary(ctx, FRIT_OP_ADD, flat, term) : term;
    stride = stride ? frit_binary(ctx, FRIT_OP_MUL, stride, d[k]) : d[k];
    if (!flat || !stride) return NULL;
  }
  return flat ? flat : i64c(ctx, 0);
}

/* Element form INDEX(t, I[, gate]) of a tensor K does not write, pushed down by the rangeify
 * rules to loads of realized buffers and fused arithmetic; 0 where the gate is false. */
static frit_uop *pure_element(lower *L, frit_uop *t, frit_uop *const *c, int n, frit_uop *gate) {
  frit_ctx *ctx = L->ctx;
  frit_uop *I = n == 0 ? i64c(ctx, 0)
                : n == 1 ? c[0]
                         : frit_uop_new(ctx, FRIT_OP_VECTORIZE, frit_dtype_vec(FRIT_I64, n), c, n, NULL);
  if (!I) return NULL;
  frit_uop *src[3] = {t, I, gate};
  frit_uop *e = frit_uop_new(ctx, FRIT_OP_INDEX, t->dtype, src, gate ? 3 : 2, NULL);
  if (!e || !(e = frit_rewrite(ctx, e, L->S->rules))) return NULL;
  if (!gate) return e;
  frit_uop *zero = frit_const_int(ctx, t->dtype, 0);
  return zero ? frit_ternary(ctx, FRIT_OP_WHERE, gate, e, zero) : NULL;
}

/* A pointer INDEX into the new version's buffer for an element address of a written tensor. */
static frit_uop *lower_address(lower *L, frit_uop *A, frit_uop *g) {
  frit_uop *c[FRIT_MAX_DIMS], *gate;
  int n = bounded(L, A, c, &gate);
  const frit_shape *sh = frit_shape_of(L->ctx, A->src[0]);
  frit_uop *flat = n >= 0 && sh ? flatten(L->ctx, c, sh->dims, n) : NULL;
  if (!flat) return NULL;
  frit_uop *src[3] = {g, flat, gate};
  return frit_uop_new(L->ctx, FRIT_OP_INDEX, g->dtype, src, gate ? 3 : 2, NULL);
}

/* A SEQ: check statements before the accesses they guard; reads that became pure are dropped. */
static frit_uop *lower_seq(lower *L, frit_uop *u) {
  nodes out = {0};
  frit_uop *r = NULL;
  for (uint32_t i = 0; i < u->nsrc; i++) {
    frit_uop *s = u->src[i], *ns = lower_node(L, s);
    if (!ns) goto done;
    bool access = (s->op == FRIT_OP_LOAD || s->op == FRIT_OP_STORE || s->op == FRIT_OP_ATOMIC) && is_address(s->src[0]);
    frit_uop *chk = access ? L->checks[s->src[0]->id] : NULL;
    for (uint32_t j = 0; chk && j < chk->nsrc; j++)
      if (!push(&out, chk->src[j])) goto oom;
    if (L->pure[s->id] || ns->op == FRIT_OP_CONST) continue;
    if (!push(&out, ns)) goto oom;
  }
  r = frit_uop_new(L->ctx, FRIT_OP_SEQ, FRIT_VOID, out.v, out.n, &u->arg);
  goto done;
oom:
  nomem(L->ctx);
done:
  free(out.v);
  return r;
}

static frit_uop *lower_uncached(lower *L, frit_uop *u) {
  frit_ctx *ctx = L->ctx;
  if (u->op == FRIT_OP_CONST || u->op == FRIT_OP_DEFINE_VAR) return u;
  if (u->id < L->K->k->id && L->is_src[u->id]) { /* a tensor used as a whole 0-d value */
    const frit_shape *sh = frit_shape_of(ctx, u);
    if (!sh) return NULL;
    if (sh->ndim != 0) {
      frit_set_error(ctx, FRIT_ERR_INVALID, "schedule: kernel %s: tensor %s (node %u) of rank %d used as a scalar",
                     L->name, frit_op_name((frit_op)u->op), u->id, sh->ndim);
      return NULL;
    }
    return pure_element(L, u, NULL, 0, NULL);
  }
  if (u->id >= L->K->k->id || (!is_kernel_level((frit_op)u->op) && !(frit_op_flags((frit_op)u->op) & FRIT_F_ALU) &&
                               u->op != FRIT_OP_CAST && u->op != FRIT_OP_BITCAST)) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "schedule: kernel %s: tensor-level node %s (node %u) is not among its sources",
                   L->name, frit_op_name((frit_op)u->op), u->id);
    return NULL;
  }
  if (u->op == FRIT_OP_RANGE && !L->own_range[u->id]) {
    frit_set_error(ctx, FRIT_ERR_INVALID,
                   "schedule: kernel %s: RANGE (node %u, axis %" PRId64 ") belongs to another kernel or loop", L->name,
                   u->id, u->arg.i0);
    return NULL;
  }
  if (u->op == FRIT_OP_SEQ) return lower_seq(L, u);
  if (is_address(u)) {
    frit_uop *g = written_global(L, u->src[0]);
    if (g) return lower_address(L, u, g);
    frit_set_error(ctx, FRIT_ERR_INVALID, "schedule: kernel %s: element address of a tensor it does not write (node %u) "
                   "used other than by a load", L->name, u->id);
    return NULL;
  }
  if (u->op == FRIT_OP_LOAD && is_address(u->src[0]) && !written_global(L, u->src[0]->src[0])) {
    frit_uop *c[FRIT_MAX_DIMS], *gate;
    int n = bounded(L, u->src[0], c, &gate);
    frit_uop *v = n >= 0 ? pure_element(L, u->src[0]->src[0], c, n, gate) : NULL;
    if (v) L->pure[u->id] = 1;
    return v;
  }
  frit_uop *src[64], **sv = u->nsrc <= 64 ? src : malloc(u->nsrc * sizeof *sv);
  if (!sv) return nomem(ctx), NULL;
  bool changed = false;
  for (uint32_t i = 0; i < u->nsrc; i++) {
    if (!(sv[i] = lower_node(L, u->src[i]))) {
      if (sv != src) free(sv);
      return NULL;
    }
    changed |= sv[i] != u->src[i];
  }
  int ns = (int)u->nsrc;
  /* a load that gained a gate (a dim that may be 0) reads 0 there */
  if (u->op == FRIT_OP_LOAD && u->nsrc == 1 && sv[0]->nsrc > 2 && u->src[0]->nsrc == 2) {
    frit_uop *zero = frit_const_int(ctx, u->dtype, 0);
    frit_uop *ls[2] = {sv[0], zero};
    if (sv != src) free(sv);
    return zero ? frit_uop_new(ctx, FRIT_OP_LOAD, u->dtype, ls, 2, &u->arg) : NULL;
  }
  frit_uop *r = changed ? frit_uop_replace_src(ctx, u, sv, ns) : u;
  if (sv != src) free(sv);
  return r;
}

/* Past this recursion depth a chain of pure values is lowered bottom-up first (walk.h), so
 * that a body a million operations deep does not overflow the C stack. */
#define LOWER_MAX_DEPTH 256

static bool pure_unlowered(void *arg, frit_uop *v) {
  const lower *L = arg;
  return ((frit_op_flags((frit_op)v->op) & FRIT_F_ALU) || v->op == FRIT_OP_CAST || v->op == FRIT_OP_BITCAST) &&
         v->id < L->K->k->id && !L->is_src[v->id] && !L->memo[v->id];
}
static bool lower_leave(void *arg, frit_uop *v) { return lower_node(arg, v) != NULL; }

static frit_uop *lower_node(lower *L, frit_uop *u) {
  if (u->id < L->K->k->id && L->memo[u->id]) return L->memo[u->id];
  if (L->depth > LOWER_MAX_DEPTH && !frit_walk_post(u, pure_unlowered, lower_leave, L)) {
    if (frit_last_status(L->ctx) == FRIT_OK) nomem(L->ctx);
    return NULL;
  }
  L->depth++;
  frit_uop *r = lower_uncached(L, u);
  L->depth--;
  if (r && u->id < L->K->k->id) L->memo[u->id] = r;
  return r;
}

/* "k3_bitonic": the user's name, reduced to identifier characters ("kernel" when empty). */
static const char *ekernel_name(frit_ctx *ctx, int k, const frit_uop *K, const char **ops) {
  char buf[64], nm[40];
  const char *user = K->arg.blob ? (const char *)K->arg.blob : "";
  size_t l = 0;
  for (const char *p = user; *p && l + 1 < sizeof nm; p++) {
    char ch = *p;
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
    nm[l++] = ok ? ch : '_';
  }
  nm[l] = 0;
  if (!l) strcpy(nm, "kernel");
  snprintf(buf, sizeof buf, "k%d_%s", k, nm);
  char *s = frit_arena_alloc(&ctx->arena, strlen(buf) + 1), *o = frit_arena_alloc(&ctx->arena, strlen(nm) + 1);
  if (!s || !o) return NULL;
  strcpy(s, buf);
  strcpy(o, nm);
  *ops = o;
  return s;
}

/* Nothing tensor-level may be left: element forms without a rule, tensor ops. */
static frit_status check_lowered(lower *L, frit_uop *ast) {
  size_t n;
  frit_uop **all = frit_walk_topo(ast, &n);
  if (!all) return nomem(L->ctx);
  frit_status rc = FRIT_OK;
  for (size_t i = 0; i < n && rc == FRIT_OK; i++) {
    frit_uop *u = all[i];
    if (u->op == FRIT_OP_INDEX && !frit_dtype_is_ptr(u->dtype))
      rc = frit_set_error(L->ctx, FRIT_ERR_INVALID, "schedule: kernel %s: op %s (node %u) cannot be lowered to loops",
                          L->name, frit_op_name((frit_op)u->src[0]->op), u->src[0]->id);
  }
  free(all);
  return rc;
}

frit_status sched_ekernel(sched_state *S, const sched_kspec *ks, int k, frit_sched_kernel *out) {
  frit_ctx *ctx = S->ctx;
  frit_uop *K = ks->root;
  const ek_kernel *E = find_kernel(S, K);
  FRIT_ASSERT(E != NULL);
  lower L = {.S = S, .ctx = ctx, .K = E, .perr_param = -1};
  L.bounds = K->op == FRIT_OP_KERNEL && K->arg.i0 == FRIT_KERNEL_TRUSTED ? FRIT_BOUNDS_UNCHECKED : S->bounds;
  S->root = K;
  S->nsib = 0;
  S->load_root = false;
  S->nparams = 0;
  S->next_axis = E->next_axis;
  sched_rangeify_enter(S);
  frit_status rc = FRIT_OK;
  const char *ops = NULL;
  if (!(L.name = ekernel_name(ctx, k, K, &ops))) return nomem(ctx);
  size_t cnt = (size_t)K->id + 1;
  L.is_src = calloc(cnt, 1);
  L.own_range = calloc(cnt, 1);
  L.pure = calloc(cnt, 1);
  L.memo = calloc(cnt, sizeof *L.memo);
  L.checks = calloc(cnt, sizeof *L.checks);
  L.global = calloc((size_t)E->nafter + 1, sizeof *L.global);
  if (!L.is_src || !L.own_range || !L.pure || !L.memo || !L.checks || !L.global) {
    rc = nomem(ctx);
    goto done;
  }
  for (uint32_t i = 1; i < K->nsrc; i++) L.is_src[K->src[i]->id] = 1;
  /* the RANGEs this body opens: kernel axes and inner loops */
  size_t nb;
  frit_uop **body_nodes = frit_walk_topo(K->src[0], &nb);
  if (!body_nodes) {
    rc = nomem(ctx);
    goto done;
  }
  for (size_t i = 0; i < nb; i++)
    if (body_nodes[i]->op == FRIT_OP_END)
      for (uint32_t j = 1; j < body_nodes[i]->nsrc; j++)
        if (body_nodes[i]->src[j]->op == FRIT_OP_RANGE && body_nodes[i]->src[j]->id < cnt)
          L.own_range[body_nodes[i]->src[j]->id] = 1;
  free(body_nodes);
  /* parameters: the new versions first (written), then what the body loads */
  for (int i = 0; i < E->nafter; i++)
    if (!(L.global[i] = sched_global(S, S->buf_of[E->after[i]->id]))) {
      rc = frit_last_status(ctx);
      goto done;
    }
  frit_uop *body = lower_node(&L, K->src[0]);
  frit_uop *ast = body ? frit_sink(ctx, &body, 1) : NULL;
  if (!ast || !(ast = frit_simplify(ctx, ast))) {
    rc = frit_last_status(ctx);
    goto done;
  }
  if ((rc = check_lowered(&L, ast)) != FRIT_OK) goto done;
  out->ast = ast;
  out->nparams = S->nparams;
  out->param_buf = frit_arena_alloc(&ctx->arena, (size_t)(S->nparams ? S->nparams : 1) * sizeof(int));
  out->param_written = frit_arena_alloc(&ctx->arena, (size_t)(S->nparams ? S->nparams : 1));
  if (!out->param_buf || !out->param_written) {
    rc = nomem(ctx);
    goto done;
  }
  for (int p = 0; p < S->nparams; p++) {
    out->param_buf[p] = S->params[p];
    out->param_written[p] = p < E->nafter || p == L.perr_param;
  }
  out->tensor = K;
  out->structured = 1;
  out->name = L.name;
  out->ops = ops;
done:
  free(L.is_src), free(L.own_range), free(L.pure), free(L.memo), free(L.checks), free(L.global);
  return rc;
}
