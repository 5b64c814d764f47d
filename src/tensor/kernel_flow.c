/* Control flow inside explicit kernels (Contract A): inner loops END(SEQ, RANGE(trip)) with
 * dynamic start/end/step, IF(cond, SEQ[, SEQ]), BREAK and CONTINUE of the innermost loop. */
#include "tensor/kernel_build.h"

static kb_state *open_kernel(frit_ctx *ctx, const char *op) {
  kb_state *st = kb_get(ctx, false);
  if (!st || !st->open) {
    kb_fail(ctx, op, NULL, 0, "called outside a kernel (frit_kernel_begin opens one; host loops use frit_host_loop_begin)");
    return NULL;
  }
  return st;
}

static bool is_const_i(const frit_tensor *t, int64_t *v) {
  if (TI_U(t)->op != FRIT_OP_CONST) return false;
  *v = TI_U(t)->arg.value.i;
  return true;
}

static frit_tensor *ci(frit_ctx *ctx, int64_t v) { return frit_tensor_of(ctx, ti_dim(ctx, v)); }
static frit_tensor *bin(frit_ctx *ctx, frit_op op, frit_tensor *a, frit_tensor *b) {
  return a && b ? ti_alu2(ctx, op, a, b) : NULL;
}

/* ceil(d / a) clamped at 0, for a > 0 (IDIV truncates, so a negative numerator gives <= 0). */
static frit_tensor *cdiv0(frit_ctx *ctx, frit_tensor *d, frit_tensor *a, int64_t a_static) {
  frit_tensor *q = a_static == 1 ? d : bin(ctx, FRIT_OP_IDIV, bin(ctx, FRIT_OP_ADD, d, bin(ctx, FRIT_OP_SUB, a, ci(ctx, 1))), a);
  if (q && TI_U(q)->vmin >= 0) return q;
  return bin(ctx, FRIT_OP_MAX, q, ci(ctx, 0));
}

/* Number of iterations of i = s; while (st > 0 ? i < e : i > e) i += st, with st == 0 giving 0
 * (kernels cannot raise). Exact in C when all three are constants. */
static frit_tensor *trip_count(frit_ctx *ctx, kb_state *st, frit_tensor *s, frit_tensor *e, frit_tensor *step) {
  int64_t sv = 0, ev = 0, pv = 0;
  bool ks = is_const_i(s, &sv), ke = is_const_i(e, &ev), kp = is_const_i(step, &pv) && pv != INT64_MIN;
  if (ks && ke && kp) {
    __int128 d = pv > 0 ? (__int128)ev - sv : (__int128)sv - ev, a = pv > 0 ? (__int128)pv : -(__int128)pv;
    __int128 n = pv == 0 || d <= 0 ? 0 : (d + a - 1) / a;
    return ci(ctx, (int64_t)n);
  }
  frit_tensor *t;
  if (kp) {
    if (pv == 0) return ci(ctx, 0);
    if (pv > 0) t = cdiv0(ctx, ks && sv == 0 ? e : bin(ctx, FRIT_OP_SUB, e, s), step, pv);
    else t = cdiv0(ctx, bin(ctx, FRIT_OP_SUB, s, e), ci(ctx, -pv), -pv);
  } else {
    frit_tensor *up = cdiv0(ctx, bin(ctx, FRIT_OP_SUB, e, s), step, 0);
    frit_tensor *neg = ti_alu1(ctx, FRIT_OP_NEG, step);
    frit_tensor *down = cdiv0(ctx, bin(ctx, FRIT_OP_SUB, s, e), neg, 0);
    frit_tensor *pos = bin(ctx, FRIT_OP_CMPLT, ci(ctx, 0), step), *negc = bin(ctx, FRIT_OP_CMPLT, step, ci(ctx, 0));
    t = pos && negc && up && down ? ti_where(ctx, pos, up, ti_where(ctx, negc, down, ci(ctx, 0))) : NULL;
  }
  if (t && kb_classify(ctx, st, TI_U(t), true) == KB_SYM) t = frit_tensor_of(ctx, frit_simplify(ctx, TI_U(t)));
  return t;
}

frit_status frit_kernel_loop_begin(frit_ctx *ctx, frit_tensor *start, frit_tensor *end, frit_tensor *step,
                                   frit_tensor **index) {
  const char *op = "kernel_loop";
  kb_state *st = open_kernel(ctx, op);
  if (!st) return FRIT_ERR_INVALID;
  frit_tensor *s = kb_scalar(ctx, st, op, "start", start, true);
  frit_tensor *e = s ? kb_scalar(ctx, st, op, "end", end, true) : NULL;
  frit_tensor *p = e ? kb_scalar(ctx, st, op, "step", step, true) : NULL;
  if (!p) return ctx->status != FRIT_OK ? ctx->status : FRIT_ERR_INVALID;
  s = ti_cast(ctx, s, FRIT_I64), e = ti_cast(ctx, e, FRIT_I64), p = ti_cast(ctx, p, FRIT_I64);
  frit_tensor *trip = s && e && p ? trip_count(ctx, st, s, e, p) : NULL;
  frit_uop *r = trip ? frit_range(ctx, TI_U(trip), st->next_axis, FRIT_AXIS_LOOP) : NULL;
  frit_tensor *i = r ? frit_tensor_of(ctx, r) : NULL;
  int64_t sv = 0, pv = 0;
  if (i && !(is_const_i(p, &pv) && pv == 1)) i = bin(ctx, FRIT_OP_MUL, i, p);
  if (i && !(is_const_i(s, &sv) && sv == 0)) i = bin(ctx, FRIT_OP_ADD, s, i);
  if (!i) {
    st->failed = true;
    return ctx->status != FRIT_OK ? ctx->status : FRIT_ERR_INVALID;
  }
  kb_block *b = kb_push_block(ctx, st, KB_LOOP);
  if (!b) return ctx->status;
  b->range = r;
  if (!kb_leaf(ctx, st, r, b->uid)) return ctx->status;
  st->next_axis++;
  if (index) *index = i;
  return FRIT_OK;
}

/* Pops the top block (its statements are freed; the caller built what it needed first). */
static void pop_block(kb_state *st) {
  free(kb_top(st)->stmts.v);
  st->nblocks--;
  kb_map_clear(&st->memo); /* values of the closed block are no longer valid */
}

static const char *block_name(kb_kind k) {
  return k == KB_LOOP ? "a loop" : k == KB_THEN || k == KB_ELSE ? "an if" : "no loop or if";
}

frit_status frit_kernel_loop_end(frit_ctx *ctx) {
  const char *op = "kernel_loop_end";
  kb_state *st = open_kernel(ctx, op);
  if (!st) return FRIT_ERR_INVALID;
  kb_block *b = kb_top(st);
  if (b->kind != KB_LOOP) {
    kb_fail(ctx, op, NULL, 0, "the innermost open block is %s, not a loop", block_name(b->kind));
    return FRIT_ERR_INVALID;
  }
  frit_uop *seq = kb_seq(ctx, &b->stmts);
  frit_uop *src[2] = {seq, b->range};
  frit_uop *end = seq ? frit_uop_new(ctx, FRIT_OP_END, FRIT_VOID, src, 2, NULL) : NULL;
  if (!end) {
    st->failed = true;
    return ctx->status;
  }
  pop_block(st);
  return kb_emit(ctx, st, end) ? FRIT_OK : ctx->status;
}

frit_status frit_kernel_if_begin(frit_ctx *ctx, frit_tensor *cond) {
  const char *op = "kernel_if";
  kb_state *st = open_kernel(ctx, op);
  if (!st) return FRIT_ERR_INVALID;
  frit_tensor *c = kb_scalar(ctx, st, op, "condition", cond, false);
  if (c) c = ti_cast(ctx, c, FRIT_BOOL); /* != 0 */
  if (!c) {
    st->failed = true;
    return ctx->status != FRIT_OK ? ctx->status : FRIT_ERR_INVALID;
  }
  kb_block *b = kb_push_block(ctx, st, KB_THEN);
  if (!b) return ctx->status;
  b->cond = TI_U(c);
  return FRIT_OK;
}

frit_status frit_kernel_else(frit_ctx *ctx) {
  const char *op = "kernel_else";
  kb_state *st = open_kernel(ctx, op);
  if (!st) return FRIT_ERR_INVALID;
  kb_block *b = kb_top(st);
  if (b->kind != KB_THEN) {
    if (b->kind == KB_ELSE) kb_fail(ctx, op, NULL, 0, "this if already has an else");
    else kb_fail(ctx, op, NULL, 0, "else without an open if (the innermost open block is %s)", block_name(b->kind));
    return FRIT_ERR_INVALID;
  }
  frit_uop *seq = kb_seq(ctx, &b->stmts);
  if (!seq) {
    st->failed = true;
    return ctx->status;
  }
  b->then_seq = seq;
  b->stmts.n = 0;
  b->kind = KB_ELSE;
  b->uid = st->next_uid++; /* values of the then-branch are not valid in the else-branch */
  kb_map_clear(&st->memo);
  return FRIT_OK;
}

frit_status frit_kernel_if_end(frit_ctx *ctx) {
  const char *op = "kernel_if_end";
  kb_state *st = open_kernel(ctx, op);
  if (!st) return FRIT_ERR_INVALID;
  kb_block *b = kb_top(st);
  if (b->kind != KB_THEN && b->kind != KB_ELSE) {
    kb_fail(ctx, op, NULL, 0, "the innermost open block is %s, not an if", block_name(b->kind));
    return FRIT_ERR_INVALID;
  }
  frit_uop *seq = kb_seq(ctx, &b->stmts);
  frit_uop *src[3] = {b->cond, b->kind == KB_ELSE ? b->then_seq : seq, seq};
  frit_uop *u = seq ? frit_uop_new(ctx, FRIT_OP_IF, FRIT_VOID, src, b->kind == KB_ELSE ? 3 : 2, NULL) : NULL;
  if (!u) {
    st->failed = true;
    return ctx->status;
  }
  pop_block(st);
  return kb_emit(ctx, st, u) ? FRIT_OK : ctx->status;
}

static frit_status jump(frit_ctx *ctx, frit_op jop, const char *op) {
  kb_state *st = open_kernel(ctx, op);
  if (!st) return FRIT_ERR_INVALID;
  frit_uop *r = NULL;
  for (size_t i = st->nblocks; i-- > 0 && !r;)
    if (st->blocks[i].kind == KB_LOOP) r = st->blocks[i].range;
  if (!r) {
    kb_fail(ctx, op, NULL, 0, "not inside a loop of the kernel (kernel_loop_begin opens one)");
    return FRIT_ERR_INVALID;
  }
  frit_uop *u = frit_uop_new(ctx, jop, FRIT_VOID, &r, 1, NULL);
  if (!u) {
    st->failed = true;
    return ctx->status;
  }
  return kb_emit(ctx, st, u) ? FRIT_OK : ctx->status;
}

frit_status frit_kernel_break(frit_ctx *ctx) { return jump(ctx, FRIT_OP_BREAK, "kernel_break"); }
frit_status frit_kernel_continue(frit_ctx *ctx) { return jump(ctx, FRIT_OP_CONTINUE, "kernel_continue"); }
