/* Explicit kernels (Contract A, docs/control.md): the builder state kept in the ctx, value
 * checks, frit_kernel_begin/end, element reads, stores, atomics and kernel variables. */
#include "tensor/kernel_build.h"

#include <stdio.h>

/* ---------- small containers ---------- */

static size_t map_find(const kb_map *m, uint32_t key) {
  size_t mask = m->cap - 1, i = (size_t)(key * 2654435761u) & mask;
  while (m->slots[i].key && m->slots[i].key != key) i = (i + 1) & mask;
  return i;
}

bool kb_map_get(const kb_map *m, uint32_t id, int32_t *val) {
  if (!m->cap) return false;
  size_t i = map_find(m, id + 1);
  if (!m->slots[i].key) return false;
  *val = m->slots[i].val;
  return true;
}

bool kb_map_put(kb_map *m, uint32_t id, int32_t val) {
  if ((m->n + 1) * 2 > m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 64;
    struct kb_slot *s = calloc(cap, sizeof *s);
    if (!s) return false;
    kb_map old = *m;
    m->slots = s, m->cap = cap;
    for (size_t i = 0; i < old.cap; i++)
      if (old.slots[i].key) m->slots[map_find(m, old.slots[i].key)] = old.slots[i];
    free(old.slots);
  }
  size_t i = map_find(m, id + 1);
  if (!m->slots[i].key) m->n++;
  m->slots[i].key = id + 1;
  m->slots[i].val = val;
  return true;
}

void kb_map_clear(kb_map *m) {
  if (m->cap) memset(m->slots, 0, m->cap * sizeof *m->slots);
  m->n = 0;
}

void kb_map_free(kb_map *m) {
  free(m->slots);
  memset(m, 0, sizeof *m);
}

bool kb_list_push(kb_list *l, frit_uop *u) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 16;
    frit_uop **v = realloc(l->v, cap * sizeof *v);
    if (!v) return false;
    l->v = v, l->cap = cap;
  }
  l->v[l->n++] = u;
  return true;
}

/* ---------- the state in the ctx ---------- */

static void close_kernel(kb_state *st) {
  for (size_t i = 0; i < st->nblocks; i++) free(st->blocks[i].stmts.v);
  st->nblocks = 0;
  st->nvars = 0;
  kb_map_clear(&st->leaves);
  kb_map_clear(&st->memo);
  st->written.n = 0;
  st->scratch.n = 0;
  free(st->name);
  st->name = NULL;
  st->open = st->failed = false;
}

static void state_destroy(void *p) {
  kb_state *st = p;
  close_kernel(st);
  free(st->blocks);
  free(st->vars);
  kb_map_free(&st->leaves);
  kb_map_free(&st->memo);
  kb_map_free(&st->trips);
  free(st->written.v);
  free(st->scratch.v);
  free(st->res_old.v);
  free(st->res_new.v);
  for (size_t i = 0; i < st->nloops; i++) {
    free(st->loops[i].init);
    free(st->loops[i].carry);
  }
  free(st->loops);
  free(st);
}

kb_state *kb_get(frit_ctx *ctx, bool create) {
  for (size_t i = 0; i < ctx->owned_count; i++)
    if (ctx->owned[i].destroy == state_destroy) return ctx->owned[i].ptr;
  if (!create) return NULL;
  kb_state *st = calloc(1, sizeof *st);
  if (!st) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "out of memory");
    return NULL;
  }
  return frit_ctx_own(ctx, st, state_destroy) ? st : NULL;
}

static frit_tensor *oom(frit_ctx *ctx) {
  frit_set_error(ctx, FRIT_ERR_NOMEM, "out of memory");
  kb_state *st = kb_get(ctx, false);
  if (st && st->open) st->failed = true;
  return NULL;
}

frit_tensor *kb_fail(frit_ctx *ctx, const char *op, frit_tensor *const *ts, int n, const char *fmt, ...) {
  char why[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  ti_fail(ctx, op, ts, n, "%s", why);
  kb_state *st = kb_get(ctx, false);
  if (st && st->open) st->failed = true;
  return NULL;
}

bool kb_ok(frit_ctx *ctx, const char *op, frit_tensor *const *ts, int n) {
  if (ti_ok(ctx, op, ts, n)) return true;
  kb_state *st = kb_get(ctx, false);
  if (st && st->open) st->failed = true;
  return false;
}

/* ---------- blocks ---------- */

kb_block *kb_top(kb_state *st) { return st->nblocks ? &st->blocks[st->nblocks - 1] : NULL; }

bool kb_emit(frit_ctx *ctx, kb_state *st, frit_uop *stmt) {
  if (kb_list_push(&kb_top(st)->stmts, stmt)) return true;
  oom(ctx);
  return false;
}

bool kb_leaf(frit_ctx *ctx, kb_state *st, frit_uop *u, int32_t uid) {
  if (kb_map_put(&st->leaves, u->id, uid)) return true;
  oom(ctx);
  return false;
}

kb_block *kb_push_block(frit_ctx *ctx, kb_state *st, kb_kind kind) {
  if (st->nblocks == st->capblocks) {
    size_t cap = st->capblocks ? st->capblocks * 2 : 8;
    kb_block *b = realloc(st->blocks, cap * sizeof *b);
    if (!b) return (kb_block *)oom(ctx);
    st->blocks = b, st->capblocks = cap;
  }
  kb_block *b = &st->blocks[st->nblocks++];
  memset(b, 0, sizeof *b);
  b->kind = kind;
  b->uid = st->next_uid++;
  return b;
}

frit_uop *kb_seq(frit_ctx *ctx, const kb_list *stmts) {
  if (stmts->n > INT32_MAX) {
    oom(ctx);
    return NULL;
  }
  return frit_uop_new(ctx, FRIT_OP_SEQ, FRIT_VOID, stmts->v, (int)stmts->n, NULL);
}

static bool uid_open(const kb_state *st, int32_t uid) {
  for (size_t i = 0; i < st->nblocks; i++)
    if (st->blocks[i].uid == uid) return true;
  return false;
}

/* ---------- classification of values ---------- */

static bool is_leaf_op(frit_op op) {
  return op == FRIT_OP_RANGE || op == FRIT_OP_LOAD || op == FRIT_OP_ATOMIC || op == FRIT_OP_DEFINE_REG;
}
static bool is_value_op(frit_op op) {
  return (frit_op_flags(op) & FRIT_F_ALU) || op == FRIT_OP_CAST || op == FRIT_OP_BITCAST;
}

/* Combining sources: a bad source makes the node bad; any scalar makes it a scalar; only
 * symbolic sources keep it symbolic. */
static int combine(int a, int b) {
  if (a >= KB_FOREIGN || b >= KB_FOREIGN) return a > b ? a : b;
  if (a == KB_SCALAR || b == KB_SCALAR) return KB_SCALAR;
  if (a == KB_TENSOR || b == KB_TENSOR) return KB_TENSOR;
  return KB_SYM;
}

static int leaf_class(const kb_state *st, const frit_uop *u, bool scoped) {
  int32_t uid;
  if (!scoped) return KB_SCALAR;
  if (!st->open || !kb_map_get(&st->leaves, u->id, &uid)) return KB_FOREIGN;
  return uid_open(st, uid) ? KB_SCALAR : KB_OUT_SCOPE;
}

int kb_classify(frit_ctx *ctx, kb_state *st, frit_uop *u, bool scoped) {
  frit_op op = (frit_op)u->op;
  if (op == FRIT_OP_CONST || op == FRIT_OP_DEFINE_VAR) return KB_SYM;
  if (is_leaf_op(op)) return leaf_class(st, u, scoped);
  if (!is_value_op(op)) return KB_TENSOR;
  /* st->memo holds scoped classes while a kernel is open, unscoped ones once it is being closed
   * (collect_tensors clears it first); checks made with no kernel open use a local memo */
  kb_map local = {0}, *memo = !scoped || st->open ? &st->memo : &local;
  int32_t c;
  if (kb_map_get(memo, u->id, &c)) return c;
  /* iterative post-order over value sources: expressions may be long chains */
  kb_list stack = {0};
  int result = KB_TENSOR;
  if (!kb_list_push(&stack, u)) goto nomem;
  while (stack.n) {
    frit_uop *t = stack.v[stack.n - 1];
    if (kb_map_get(memo, t->id, &c)) {
      stack.n--;
      continue;
    }
    int cls = 0;
    bool pushed = false;
    for (uint32_t i = 0; i < t->nsrc; i++) {
      frit_uop *s = t->src[i];
      frit_op so = (frit_op)s->op;
      int sc;
      if (so == FRIT_OP_CONST || so == FRIT_OP_DEFINE_VAR) sc = KB_SYM;
      else if (is_leaf_op(so)) sc = leaf_class(st, s, scoped);
      else if (!is_value_op(so)) sc = KB_TENSOR;
      else if (!kb_map_get(memo, s->id, &c)) {
        if (!kb_list_push(&stack, s)) goto nomem;
        pushed = true;
        continue;
      } else sc = c;
      cls = cls ? combine(cls, sc) : sc;
    }
    if (pushed) continue;
    if (!kb_map_put(memo, t->id, cls ? cls : KB_SYM)) goto nomem;
    stack.n--;
  }
  kb_map_get(memo, u->id, &c);
  result = c;
  free(stack.v);
  kb_map_free(&local);
  return result;
nomem:
  free(stack.v);
  kb_map_free(&local);
  oom(ctx);
  return KB_FOREIGN;
}

static const char *bad_class_text(int c) {
  return c == KB_FOREIGN ? "it is a kernel scalar of another kernel (kernel scalars are only valid inside the kernel that made them)"
                         : "it is a kernel scalar made inside a loop or if block that has ended (use a kernel variable to carry it out)";
}

frit_tensor *kb_scalar(frit_ctx *ctx, kb_state *st, const char *op, const char *what, frit_tensor *v, bool int_only) {
  char b[32];
  if (!kb_ok(ctx, op, &v, 1)) return NULL;
  const frit_shape *s = frit_shape_of(ctx, TI_U(v));
  if (!s) {
    if (st->open) st->failed = true;
    return NULL;
  }
  if (s->ndim != 0) return kb_fail(ctx, op, &v, 1, "%s must be 0-d (a kernel scalar or a 0-d tensor)", what);
  frit_dtype dt = TI_U(v)->dtype;
  if (int_only && !frit_dtype_is_int(dt))
    return kb_fail(ctx, op, &v, 1, "%s has dtype %s: indices and loop bounds must be integers", what, ti_dtname(dt, b));
  int c = kb_classify(ctx, st, TI_U(v), true);
  if (ctx->status == FRIT_ERR_NOMEM) return NULL;
  if (c >= KB_FOREIGN) return kb_fail(ctx, op, &v, 1, "%s: %s", what, bad_class_text(c));
  return v;
}

/* ---------- kernel begin / end ---------- */

static kb_state *open_kernel(frit_ctx *ctx, const char *op) {
  kb_state *st = kb_get(ctx, false);
  if (!st || !st->open) {
    kb_fail(ctx, op, NULL, 0, "called outside a kernel (frit_kernel_begin opens one)");
    return NULL;
  }
  return st;
}

frit_status frit_kernel_begin(frit_ctx *ctx, const char *name, int ndim, frit_uop *const *dims, frit_tensor **idx) {
  const char *op = "kernel_begin";
  kb_state *st = kb_get(ctx, true);
  if (!st) return ctx->status;
  if (st->open) {
    kb_fail(ctx, op, NULL, 0, "kernel '%s' is still open: kernels do not nest (close it with frit_kernel_end)",
            st->name ? st->name : "");
    return FRIT_ERR_INVALID;
  }
  frit_status dst = ti_check_dim_list(ctx, op, ndim, dims, idx, "idx");
  if (dst != FRIT_OK) return dst;
  frit_uop *r[FRIT_MAX_DIMS];
  for (int a = 0; a < ndim; a++)
    if (!(r[a] = frit_range(ctx, dims[a], a, FRIT_AXIS_GLOBAL)) || !frit_shape_of(ctx, r[a])) return ctx->status;
  char *nm = strdup(name ? name : "");
  if (!nm) return frit_set_error(ctx, FRIT_ERR_NOMEM, "out of memory");
  st->res_old.n = st->res_new.n = 0;
  st->name = nm;
  st->trusted = false;
  st->ndim = ndim;
  st->next_uid = 0;
  st->next_serial = 0;
  st->next_axis = ndim;
  kb_block *b = kb_push_block(ctx, st, KB_KERNEL);
  if (!b) {
    close_kernel(st);
    return ctx->status;
  }
  st->open = true;
  for (int a = 0; a < ndim; a++) {
    st->ranges[a] = r[a];
    if (!kb_leaf(ctx, st, r[a], b->uid)) {
      close_kernel(st);
      return ctx->status;
    }
    idx[a] = TI_T(r[a]);
  }
  return FRIT_OK;
}

void kb_trust_indices(frit_ctx *ctx) {
  kb_state *st = kb_get(ctx, false);
  if (st && st->open) st->trusted = true;
}

void kb_scratch(frit_ctx *ctx, frit_tensor *t) {
  kb_state *st = kb_get(ctx, false);
  if (st && st->open && t && !kb_list_push(&st->scratch, TI_U(t))) st->failed = true, oom(ctx);
}

frit_status frit_kernel_begin_static(frit_ctx *ctx, const char *name, int ndim, const int64_t *dims, frit_tensor **idx) {
  frit_uop *d[FRIT_MAX_DIMS];
  if (ndim < 0 || ndim > FRIT_MAX_DIMS) {
    ti_fail(ctx, "kernel_begin", NULL, 0, "rank %d outside 0..%d", ndim, FRIT_MAX_DIMS);
    return FRIT_ERR_INVALID;
  }
  for (int a = 0; a < ndim; a++) {
    if (dims[a] < 0) {
      ti_fail(ctx, "kernel_begin", NULL, 0, "negative dimensions are not allowed (dim %d is %lld)", a, (long long)dims[a]);
      return FRIT_ERR_INVALID;
    }
    if (!(d[a] = ti_dim(ctx, dims[a]))) return ctx->status;
  }
  return frit_kernel_begin(ctx, name, ndim, d, idx);
}

/* The tensor-level nodes a body references, in first-use order (preorder, sources in order):
 * element targets, and values that do not depend on kernel-level leaves and are not symbolic. */
static bool collect_tensors(frit_ctx *ctx, kb_state *st, frit_uop *body, kb_list *out) {
  kb_map seen = {0};
  kb_list stack = {0};
  kb_map_clear(&st->memo);
  bool ok = kb_list_push(&stack, body);
  while (ok && stack.n) {
    frit_uop *u = stack.v[--stack.n];
    int32_t dummy;
    if (kb_map_get(&seen, u->id, &dummy)) continue;
    if (!(ok = kb_map_put(&seen, u->id, 0))) break;
    frit_op op = (frit_op)u->op;
    bool structural = op == FRIT_OP_SEQ || op == FRIT_OP_END || op == FRIT_OP_IF || op == FRIT_OP_STORE ||
                      op == FRIT_OP_INDEX || op == FRIT_OP_BREAK || op == FRIT_OP_CONTINUE ||
                      op == FRIT_OP_VECTORIZE || is_leaf_op(op);
    uint32_t first = 0;
    if (!structural) {
      int c = is_value_op(op) ? kb_classify(ctx, st, u, false) : op == FRIT_OP_CONST || op == FRIT_OP_DEFINE_VAR ? KB_SYM : KB_TENSOR;
      if (c == KB_SYM) continue;
      if (c != KB_SCALAR) {
        ok = kb_list_push(out, u);
        continue;
      }
    } else if (op == FRIT_OP_INDEX && !frit_dtype_is_ptr(u->src[0]->dtype)) {
      /* an element address: its target is a referenced tensor whatever it is */
      if (!kb_map_get(&seen, u->src[0]->id, &dummy)) {
        ok = kb_map_put(&seen, u->src[0]->id, 0) && kb_list_push(out, u->src[0]);
      }
      first = 1;
    }
    for (uint32_t i = u->nsrc; ok && i > first; i--) ok = kb_list_push(&stack, u->src[i - 1]);
  }
  free(stack.v);
  kb_map_free(&seen);
  if (!ok) oom(ctx);
  return ok && ctx->status != FRIT_ERR_NOMEM;
}

int frit_kernel_end(frit_ctx *ctx) {
  const char *op = "kernel_end";
  kb_state *st = open_kernel(ctx, op);
  if (!st) return -1;
  if (st->nblocks != 1) {
    kb_block *b = kb_top(st);
    const char *what = b->kind == KB_LOOP ? "a loop (frit_kernel_loop_end)" : "an if (frit_kernel_if_end)";
    kb_fail(ctx, op, NULL, 0, "kernel '%s': %zu block(s) still open, innermost %s; the kernel is discarded",
            st->name, st->nblocks - 1, what);
    close_kernel(st);
    return -1;
  }
  if (st->failed) {
    if (ctx->status == FRIT_OK)
      ti_fail(ctx, op, NULL, 0, "kernel '%s': an earlier call in this kernel failed; the kernel is discarded", st->name);
    close_kernel(st);
    return -1;
  }
  frit_uop *body = kb_seq(ctx, &st->blocks[0].stmts);
  if (body && st->ndim > 0) {
    frit_uop *src[1 + FRIT_MAX_DIMS];
    src[0] = body;
    memcpy(src + 1, st->ranges, (size_t)st->ndim * sizeof *src);
    body = frit_uop_new(ctx, FRIT_OP_END, FRIT_VOID, src, 1 + st->ndim, NULL);
  }
  kb_list refs = {0};
  int result = -1;
  if (!body || !kb_list_push(&refs, body) || !collect_tensors(ctx, st, body, &refs)) {
    if (ctx->status == FRIT_OK) oom(ctx);
    goto done;
  }
  if (refs.n > INT32_MAX) {
    ti_fail(ctx, op, NULL, 0, "kernel '%s' references too many tensors", st->name);
    goto done;
  }
  frit_arg a = frit_arg_none();
  a.blob = st->name;
  a.blob_kind = FRIT_BLOB_STR;
  a.n = (uint32_t)strlen(st->name);
  a.i0 = st->trusted ? FRIT_KERNEL_TRUSTED : 0;
  for (size_t s = 1; st->trusted && s < refs.n && s < 64; s++) /* bit s: src s is scratch (kb_scratch) */
    for (size_t j = 0; j < st->scratch.n; j++)
      if (st->scratch.v[j] == refs.v[s]) a.i1 |= (int64_t)((uint64_t)1 << s);
  frit_uop *k = frit_uop_new(ctx, FRIT_OP_KERNEL, FRIT_VOID, refs.v, (int)refs.n, &a);
  if (!k) goto done;
  st->res_old.n = st->res_new.n = 0;
  for (size_t i = 0; i < st->written.n; i++) {
    frit_uop *t = st->written.v[i], *src[2] = {t, k};
    frit_uop *after = frit_uop_new(ctx, FRIT_OP_AFTER, t->dtype, src, 2, NULL);
    if (!after || !frit_shape_of(ctx, after)) goto done;
    if (!kb_list_push(&st->res_old, t) || !kb_list_push(&st->res_new, after)) {
      oom(ctx);
      st->res_old.n = st->res_new.n = 0;
      goto done;
    }
  }
  result = (int)st->written.n;
done:
  free(refs.v);
  close_kernel(st);
  return result;
}

frit_status frit_kernel_written(frit_ctx *ctx, int k, frit_tensor **old, frit_tensor **new_) {
  kb_state *st = kb_get(ctx, false);
  size_t n = st ? st->res_new.n : 0;
  if (k < 0 || (size_t)k >= n) {
    ti_fail(ctx, "kernel_written", NULL, 0, "index %d outside the %zu tensors the last closed kernel wrote", k, n);
    return FRIT_ERR_INVALID;
  }
  if (old) *old = TI_T(st->res_old.v[k]);
  if (new_) *new_ = TI_T(st->res_new.v[k]);
  return FRIT_OK;
}

/* ---------- element access ---------- */

static const char *const atomic_names[FRIT_ATOMIC_COUNT_] = {"add", "min", "max", "and", "or", "xor", "exchange"};

/* INDEX(t, I) with I the i64 index (CONST 0 for rank 0, VECTORIZE for rank >= 2). */
static frit_uop *element_address(frit_ctx *ctx, kb_state *st, const char *op, frit_tensor *t, int nidx,
                                 frit_tensor *const *idx) {
  if (!kb_ok(ctx, op, &t, 1)) return NULL;
  const frit_shape *s = frit_shape_of(ctx, TI_U(t));
  if (!s) {
    if (st->open) st->failed = true;
    return NULL;
  }
  if (nidx != s->ndim)
    return (frit_uop *)kb_fail(ctx, op, &t, 1, "%d index(es) given for a tensor of rank %d", nidx, s->ndim);
  if (nidx > 0 && !idx) return (frit_uop *)kb_fail(ctx, op, &t, 1, "idx must not be NULL");
  int c = kb_classify(ctx, st, TI_U(t), true);
  if (c == KB_SCALAR || c >= KB_FOREIGN)
    return (frit_uop *)kb_fail(ctx, op, &t, 1, "the target is a kernel scalar, not a tensor: kernels read and write tensors");
  frit_uop *ix[FRIT_MAX_DIMS];
  for (int a = 0; a < nidx; a++) {
    char what[32];
    snprintf(what, sizeof what, "index %d", a);
    frit_tensor *v = kb_scalar(ctx, st, op, what, idx[a], true);
    if (!v || !(v = ti_cast(ctx, v, FRIT_I64))) return NULL;
    ix[a] = TI_U(v);
  }
  frit_uop *I = nidx == 0 ? ti_dim(ctx, 0)
              : nidx == 1 ? ix[0]
                          : frit_uop_new(ctx, FRIT_OP_VECTORIZE, frit_dtype_vec(FRIT_I64, nidx), ix, nidx, NULL);
  if (!I) return NULL;
  frit_uop *src[2] = {TI_U(t), I};
  return frit_uop_new(ctx, FRIT_OP_INDEX, frit_dtype_ptr(TI_U(t)->dtype, FRIT_ADDR_GLOBAL), src, 2, NULL);
}

static bool note_written(frit_ctx *ctx, kb_state *st, frit_uop *t) {
  for (size_t i = 0; i < st->written.n; i++)
    if (st->written.v[i] == t) return true;
  if (kb_list_push(&st->written, t)) return true;
  oom(ctx);
  return false;
}

/* A LOAD/ATOMIC that reads at this point: listed in the SEQ, valid in the current block. */
static frit_tensor *emit_read(frit_ctx *ctx, kb_state *st, frit_uop *u) {
  if (!u || !frit_shape_of(ctx, u)) {
    st->failed = true;
    return NULL;
  }
  if (!kb_leaf(ctx, st, u, kb_top(st)->uid) || !kb_emit(ctx, st, u)) return NULL;
  return TI_T(u);
}

frit_tensor *frit_kernel_load(frit_ctx *ctx, frit_tensor *t, int nidx, frit_tensor *const *idx) {
  kb_state *st = open_kernel(ctx, "kernel_load");
  if (!st) return NULL;
  frit_uop *addr = element_address(ctx, st, "kernel_load", t, nidx, idx);
  if (!addr) return NULL;
  frit_arg a = frit_arg_none();
  a.i1 = kb_serial(st);
  return emit_read(ctx, st, frit_uop_new(ctx, FRIT_OP_LOAD, TI_U(t)->dtype, &addr, 1, &a));
}

/* STORE(addr, value cast to dt) with a serial number (so that equal stores at different
 * points stay distinct statements). */
static frit_uop *make_store(frit_ctx *ctx, kb_state *st, frit_uop *addr, frit_tensor *v, frit_dtype dt) {
  frit_tensor *c = frit_astype(ctx, v, dt);
  if (!c) return NULL;
  frit_arg a = frit_arg_none();
  a.i1 = kb_serial(st);
  frit_uop *src[2] = {addr, TI_U(c)};
  return frit_uop_new(ctx, FRIT_OP_STORE, FRIT_VOID, src, 2, &a);
}

frit_status frit_kernel_store(frit_ctx *ctx, frit_tensor *t, int nidx, frit_tensor *const *idx, frit_tensor *value) {
  const char *op = "kernel_store";
  kb_state *st = open_kernel(ctx, op);
  if (!st) return FRIT_ERR_INVALID;
  frit_uop *addr = element_address(ctx, st, op, t, nidx, idx);
  frit_tensor *v = addr ? kb_scalar(ctx, st, op, "value", value, false) : NULL;
  frit_uop *s = v ? make_store(ctx, st, addr, v, TI_U(t)->dtype) : NULL;
  if (!s) {
    st->failed = true;
    return ctx->status != FRIT_OK ? ctx->status : FRIT_ERR_INVALID;
  }
  if (!note_written(ctx, st, TI_U(t)) || !kb_emit(ctx, st, s)) return ctx->status;
  return FRIT_OK;
}

frit_tensor *frit_kernel_atomic(frit_ctx *ctx, frit_atomic_op aop, frit_tensor *t, int nidx, frit_tensor *const *idx,
                                frit_tensor *value) {
  const char *op = "kernel_atomic";
  char b[32];
  kb_state *st = open_kernel(ctx, op);
  if (!st) return NULL;
  if (!kb_ok(ctx, op, &t, 1)) return NULL;
  if ((unsigned)aop >= FRIT_ATOMIC_COUNT_) return kb_fail(ctx, op, &t, 1, "unknown atomic op %d", (int)aop);
  if ((aop == FRIT_ATOMIC_AND || aop == FRIT_ATOMIC_OR || aop == FRIT_ATOMIC_XOR) && frit_dtype_is_float(TI_U(t)->dtype))
    return kb_fail(ctx, op, &t, 1, "atomic %s needs an integer or bool tensor, not %s", atomic_names[aop],
                   ti_dtname(TI_U(t)->dtype, b));
  frit_uop *addr = element_address(ctx, st, op, t, nidx, idx);
  frit_tensor *v = addr ? kb_scalar(ctx, st, op, "value", value, false) : NULL;
  if (v) v = frit_astype(ctx, v, TI_U(t)->dtype);
  if (!v) {
    st->failed = true;
    return NULL;
  }
  frit_arg a = frit_arg_none();
  a.i0 = aop;
  a.i1 = kb_serial(st);
  frit_uop *src[2] = {addr, TI_U(v)};
  frit_tensor *r = emit_read(ctx, st, frit_uop_new(ctx, FRIT_OP_ATOMIC, TI_U(t)->dtype, src, 2, &a));
  if (r && !note_written(ctx, st, TI_U(t))) return NULL;
  return r;
}

/* ---------- variables ---------- */

/* INDEX(Rg, 0): the variable's one element. */
static frit_uop *var_address(frit_ctx *ctx, frit_uop *reg) {
  frit_uop *src[2] = {reg, ti_dim(ctx, 0)};
  if (!src[1]) return NULL;
  return frit_uop_new(ctx, FRIT_OP_INDEX, reg->dtype, src, 2, NULL);
}

int frit_kernel_var(frit_ctx *ctx, frit_dtype dt, frit_tensor *init) {
  const char *op = "kernel_var";
  char b[32];
  kb_state *st = open_kernel(ctx, op);
  if (!st) return -1;
  if (frit_dtype_is_ptr(dt) || frit_dtype_lanes(dt) != 1 || frit_dtype_kind(dt) == FRIT_VOID ||
      frit_dtype_kind(dt) >= FRIT_SCALAR_KIND_COUNT_) {
    kb_fail(ctx, op, NULL, 0, "dtype %s: variables have a scalar dtype", ti_dtname(dt, b));
    return -1;
  }
  frit_tensor *v = kb_scalar(ctx, st, op, "init", init, false);
  if (!v) return -1;
  if (st->nvars >= (size_t)INT32_MAX) {
    kb_fail(ctx, op, NULL, 0, "too many variables");
    return -1;
  }
  frit_arg a = frit_arg_none();
  a.i0 = (int64_t)st->nvars;
  a.i1 = 1;
  frit_uop *reg = frit_uop_new(ctx, FRIT_OP_DEFINE_REG, frit_dtype_ptr(dt, FRIT_ADDR_REG), NULL, 0, &a);
  frit_uop *addr = reg ? var_address(ctx, reg) : NULL;
  frit_uop *s = addr ? make_store(ctx, st, addr, v, dt) : NULL;
  if (!s) {
    st->failed = true;
    return -1;
  }
  if (st->nvars == st->capvars) {
    size_t cap = st->capvars ? st->capvars * 2 : 8;
    kb_var *nv = realloc(st->vars, cap * sizeof *nv);
    if (!nv) {
      oom(ctx);
      return -1;
    }
    st->vars = nv, st->capvars = cap;
  }
  if (!kb_emit(ctx, st, s)) return -1;
  st->vars[st->nvars] = (kb_var){reg, kb_top(st)->uid};
  return (int)st->nvars++;
}

/* The variable's register, if valid at this point. */
static frit_uop *var_reg(frit_ctx *ctx, kb_state *st, const char *op, int var) {
  if (var < 0 || (size_t)var >= st->nvars)
    return (frit_uop *)kb_fail(ctx, op, NULL, 0, "variable %d is not a variable of the open kernel (it has %zu)", var,
                               st->nvars);
  if (!uid_open(st, st->vars[var].uid))
    return (frit_uop *)kb_fail(ctx, op, NULL, 0, "variable %d was declared inside a loop or if block that has ended", var);
  return st->vars[var].reg;
}

frit_tensor *frit_kernel_var_get(frit_ctx *ctx, int var) {
  const char *op = "kernel_var_get";
  kb_state *st = open_kernel(ctx, op);
  frit_uop *reg = st ? var_reg(ctx, st, op, var) : NULL;
  frit_uop *addr = reg ? var_address(ctx, reg) : NULL;
  if (!addr) {
    if (st) st->failed = true;
    return NULL;
  }
  frit_arg a = frit_arg_none();
  a.i1 = kb_serial(st);
  return emit_read(ctx, st, frit_uop_new(ctx, FRIT_OP_LOAD, frit_dtype_scalar(reg->dtype), &addr, 1, &a));
}

frit_status frit_kernel_var_set(frit_ctx *ctx, int var, frit_tensor *value) {
  const char *op = "kernel_var_set";
  kb_state *st = open_kernel(ctx, op);
  if (!st) return FRIT_ERR_INVALID;
  frit_uop *reg = var_reg(ctx, st, op, var);
  frit_tensor *v = reg ? kb_scalar(ctx, st, op, "value", value, false) : NULL;
  frit_uop *addr = v ? var_address(ctx, reg) : NULL;
  frit_uop *s = addr ? make_store(ctx, st, addr, v, frit_dtype_scalar(reg->dtype)) : NULL;
  if (!s) {
    st->failed = true;
    return ctx->status != FRIT_OK ? ctx->status : FRIT_ERR_INVALID;
  }
  return kb_emit(ctx, st, s) ? FRIT_OK : ctx->status;
}
