/* The rewrite engine behind every pass: matching compiled patterns against nodes, building
 * results from templates, and the iterative bottom-up fixed-point rewrite (docs/rules.md). */
#include "rewrite/rules.h"

#include <math.h>
#include <stdio.h>

/* ---------- matching ---------- */

/* Matching state of one rule attempt. Goals not yet matched form an immutable list, so that
 * backtracking (commutative orders, a failed guard) just returns to an older list. */
typedef struct matcher {
  frit_ctx *ctx;
  const frit_ruleset *rs;
  const rule *r;
  frit_uop *root;
  frit_uop *bind[FRIT_RULE_MAX_SLOTS];
  frit_uop *result;
  bool error;
  /* The root may be virtual: n rebuilt over new sources but not interned yet, so that a node
   * a rule replaces at once never enters the node store. It is interned (`materialize`) as
   * soon as C code could see it (guards, callbacks, a variable bound to the root). */
  frit_uop *orig;
} matcher;

typedef struct goal {
  const rule_pat *p;
  frit_uop *u;
  const struct goal *next;
} goal;

static bool class_ok(const rule_pat *p, const frit_uop *u) {
  for (int i = 0; i < p->ncls; i++) {
    frit_dtype dt = u->dtype;
    bool ptr = frit_dtype_is_ptr(dt);
    switch ((rule_class)p->cls[i]) {
    case RC_INT: if (ptr || !frit_dtype_is_int(dt)) return false; break;
    case RC_SINT: if (ptr || !frit_dtype_is_int(dt) || frit_dtype_is_unsigned(dt)) return false; break;
    case RC_UINT: if (ptr || !frit_dtype_is_int(dt) || !frit_dtype_is_unsigned(dt)) return false; break;
    case RC_FLOAT: if (ptr || !frit_dtype_is_float(dt)) return false; break;
    case RC_BOOL: if (ptr || !frit_dtype_is_bool(dt)) return false; break;
    case RC_CONST: if (u->op != FRIT_OP_CONST) return false; break;
    case RC_DTYPE: if (dt != p->cls_dt[i]) return false; break;
    }
  }
  return true;
}

/* A CONST (any dtype, vectors are broadcasts) numerically equal to the literal. */
static bool lit_match(const rule_lit *l, const frit_uop *u) {
  if (u->op != FRIT_OP_CONST || frit_dtype_is_ptr(u->dtype)) return false;
  frit_scalar v = u->arg.value;
  frit_scalar_kind k = frit_dtype_kind(u->dtype);
  switch (k) {
  case FRIT_BOOL: case FRIT_I8: case FRIT_I16: case FRIT_I32: case FRIT_I64:
    return l->is_float ? (double)v.i == l->f && fabs(l->f) < 9.2e18 : v.i == l->i;
  case FRIT_U8: case FRIT_U16: case FRIT_U32: case FRIT_U64:
    if (l->is_float) return l->f >= 0 && l->f < 1.8e19 && (double)v.u == l->f;
    return l->i >= 0 && v.u == (uint64_t)l->i;
  case FRIT_F16: case FRIT_BF16: case FRIT_F32: case FRIT_F64:
    if (l->is_float && isnan(l->f)) return isnan(v.f);
    return v.f == (l->is_float ? l->f : (double)l->i);
  case FRIT_C64: case FRIT_C128: /* a real literal: the constant re + 0i */
    if (v.c.im != 0) return false;
    if (l->is_float && isnan(l->f)) return isnan(v.c.re);
    return v.c.re == (l->is_float ? l->f : (double)l->i);
  case FRIT_VOID: case FRIT_SCALAR_KIND_COUNT_:
    return false;
  }
  return false;
}

static frit_uop *build(matcher *m, const rule_tmpl *t, frit_dtype want);
static void build_fail(matcher *m);

static bool materialize(matcher *m) {
  if (!m->orig) return true;
  frit_uop *real = frit_uop_replace_src(m->ctx, m->orig, m->root->src, (int)m->root->nsrc);
  if (!real) {
    build_fail(m);
    return false;
  }
  m->root = real;
  m->orig = NULL;
  return true;
}

/* The virtual root's node would be exactly u. */
static bool same_as_virtual(const frit_uop *v, const frit_uop *u) {
  if (u->op != v->op || u->dtype != v->dtype || u->nsrc != v->nsrc || u->arg.value.u != v->arg.value.u ||
      (frit_dtype_is_complex(u->dtype) && memcmp(&u->arg.value.c.im, &v->arg.value.c.im, sizeof(double)) != 0) ||
      u->arg.i0 != v->arg.i0 || u->arg.i1 != v->arg.i1 || u->arg.blob != v->arg.blob)
    return false;
  for (uint32_t i = 0; i < u->nsrc; i++)
    if (u->src[i] != v->src[i]) return false;
  return true;
}

/* All goals matched: check the guards, then build. Returns true when the rule fires (or on an
 * error, with m->error set) so that the search stops; false backtracks. */
static bool finish(matcher *m) {
  const rule *r = m->r;
  if (r->needs_root && !materialize(m)) return true;
  for (int i = 0; i < r->nguards; i++) {
    const rule_guard *g = &r->guards[i];
    frit_uop *args[FRIT_RULE_MAX_ARGS];
    for (int a = 0; a < g->nargs; a++) args[a] = m->bind[g->args[a]];
    bool holds = m->rs->fns[g->fn].pred(m->ctx, m->root, args, g->nargs) != 0;
    if (holds == g->negate) return false;
  }
  frit_uop *res = build(m, r->res, m->root->dtype);
  if (m->error) return true;
  /* a callback declined, or nothing changes */
  if (!res || res == m->root || (m->orig && same_as_virtual(m->root, res))) return false;
  m->result = res;
  return true;
}

static bool solve(matcher *m, const goal *g) {
  if (!g) return finish(m);
  const rule_pat *p = g->p;
  frit_uop *u = g->u;
  if (p->ncls && !class_ok(p, u)) return false;
  switch ((pat_kind)p->kind) {
  case PK_VAR: {
    if (p->slot < 0) return solve(m, g->next);
    frit_uop **b = &m->bind[p->slot];
    if (*b) return *b == u && solve(m, g->next);
    *b = u;
    if (solve(m, g->next)) return true;
    *b = NULL;
    return false;
  }
  case PK_LIT:
    return lit_match(&p->lit, u) && solve(m, g->next);
  case PK_OP: {
    if (!rule_op_in(p->ops, u->op)) return false;
    int n = p->nsrc;
    if (p->ellipsis ? u->nsrc < (uint32_t)n : u->nsrc != (uint32_t)n) return false;
    goal cells[FRIT_RULE_MAX_SRC];
    for (int i = 0; i < n; i++) {
      cells[i].p = p->src[i];
      cells[i].u = u->src[i];
      cells[i].next = i + 1 < n ? &cells[i + 1] : g->next;
    }
    if (solve(m, n ? &cells[0] : g->next)) return true;
    if (n == 2 && !p->ellipsis && rule_op_in(m->rs->commutative, u->op) &&
        u->src[0] != u->src[1]) {
      cells[0].u = u->src[1];
      cells[1].u = u->src[0];
      return solve(m, &cells[0]);
    }
    return false;
  }
  }
  return false;
}

/* ---------- building results ---------- */

static void build_fail(matcher *m) {
  char msg[sizeof m->ctx->errmsg];
  snprintf(msg, sizeof msg, "%s", m->ctx->errmsg);
  frit_set_error(m->ctx, m->ctx->status != FRIT_OK ? m->ctx->status : FRIT_ERR_INVALID,
                 "rules %s: rule at line %d `%s` failed to build its result: %s", m->rs->name,
                 m->r->line, m->r->text, msg);
  m->error = true;
}

static frit_uop *build_lit(matcher *m, const rule_lit *l, frit_dtype dt) {
  frit_uop *c = l->is_float ? frit_const_float(m->ctx, dt, l->f) : frit_const_int(m->ctx, dt, l->i);
  if (!c) build_fail(m);
  return c;
}

static frit_uop *build(matcher *m, const rule_tmpl *t, frit_dtype want) {
  switch ((tmpl_kind)t->kind) {
  case TK_VAR:
    return m->bind[t->slot];
  case TK_LIT:
    return build_lit(m, &t->lit, t->has_dt ? t->dt : want);
  case TK_CALL: {
    frit_uop *args[FRIT_RULE_MAX_ARGS];
    for (int i = 0; i < t->nsrc; i++) args[i] = m->bind[t->args[i]];
    frit_status before = m->ctx->status;
    m->ctx->status = FRIT_OK;
    frit_uop *r = m->rs->fns[t->fn].build(m->ctx, m->root, args, t->nsrc);
    if (!r && m->ctx->status != FRIT_OK) {
      build_fail(m);
      return NULL;
    }
    if (m->ctx->status == FRIT_OK) m->ctx->status = before;
    return r;
  }
  case TK_OP: {
    frit_op op = (frit_op)t->op;
    frit_uop *src[FRIT_RULE_MAX_SRC];
    bool is_where = op == FRIT_OP_WHERE;
    /* Operands whose dtype is known (a variable, call or ':dtype' inside) first, then the
     * rest: a literal or all-literal template takes the dtype of a sibling built before it. */
    frit_dtype sib = 0, base = t->has_dt && op != FRIT_OP_CAST && op != FRIT_OP_BITCAST ? t->dt : want;
    bool have_sib = false;
    for (int pass = 0; pass < 2; pass++) {
      for (int i = 0; i < t->nsrc; i++) {
        const rule_tmpl *c = t->src[i];
        if (c->kind == TK_LIT || (pass == 0) != (c->typed != 0)) continue;
        frit_dtype w = have_sib ? sib : base;
        if (is_where && i == 0) w = frit_dtype_vec(FRIT_BOOL, frit_dtype_lanes(w));
        if (!(src[i] = build(m, t->src[i], w))) return NULL;
        if (!have_sib && !(is_where && i == 0)) sib = src[i]->dtype, have_sib = true;
      }
    }
    unsigned flags = frit_op_flags(op);
    bool alu = (flags & FRIT_F_ALU) != 0;
    frit_dtype lit_dt = have_sib ? sib : base;
    for (int i = 0; i < t->nsrc; i++) {
      if (t->src[i]->kind != TK_LIT) continue;
      frit_dtype dt = is_where && i == 0 ? frit_dtype_vec(FRIT_BOOL, frit_dtype_lanes(lit_dt)) : lit_dt;
      if (!(src[i] = build(m, t->src[i], dt))) return NULL;
    }
    frit_uop *r;
    if (alu && !t->has_dt) {
      r = frit_alu(m->ctx, op, src, t->nsrc);
    } else if (op == FRIT_OP_CAST) {
      r = frit_cast(m->ctx, src[0], t->dt);
    } else {
      /* other ops keep the matched root's argument when they are the root's op */
      frit_arg none = frit_arg_none();
      const frit_arg *arg = alu ? &none : op == m->root->op ? &m->root->arg : &none;
      r = frit_uop_new(m->ctx, op, t->has_dt ? t->dt : m->root->dtype, src, t->nsrc, arg);
    }
    if (!r) build_fail(m);
    return r;
  }
  }
  return NULL;
}

/* First rule (file order) that fires on u: its result, or NULL with *root_out set when none
 * fires, or NULL with *error set. u may be virtual (orig != NULL, see matcher); *root_out is
 * then the interned node if it had to be interned, else NULL. */
static frit_uop *apply_rules(frit_ctx *ctx, const frit_ruleset *rs, frit_uop *u, frit_uop *orig,
                             int *fired_rule, frit_uop **root_out, bool *error) {
  int n = rs->nby_op[u->op];
  const int *list = rs->by_op[u->op];
  matcher m;
  m.ctx = ctx;
  m.rs = rs;
  m.root = u;
  m.orig = orig;
  m.error = false;
  *error = false;
  for (int k = 0; k < n; k++) {
    const rule *r = &rs->rules[list[k]];
    m.r = r;
    m.result = NULL;
    if (r->pat->kind == PK_VAR && !materialize(&m)) break;
    memset(m.bind, 0, (size_t)r->nslots * sizeof m.bind[0]);
    goal g = {r->pat, m.root, NULL};
    if (!solve(&m, &g)) continue;
    if (m.error) break;
    rs->fired[list[k]]++;
    *fired_rule = list[k];
    *root_out = m.orig ? NULL : m.root;
    return m.result;
  }
  if (!m.error) materialize(&m);
  *error = m.error;
  *root_out = m.root;
  return NULL;
}

/* ---------- the fixed-point rewrite ---------- */

enum { ST_ENTER, ST_SRCS, ST_WAIT };
typedef struct frame {
  frit_uop *n;   /* the node being rewritten */
  frit_uop *np;  /* n with rewritten sources, if it was interned */
  frit_uop *r;   /* the result of the rule that fired on np */
  uint32_t state;
  int rule;      /* that rule */
} frame;

typedef struct rewrite_scratch {
  frit_uop **memo; /* by id: NULL unvisited, &in_progress, or the node's normal form */
  size_t memo_cap;
  uint32_t *touched; /* ids set in memo, to clear them afterwards */
  size_t ntouched, touched_cap;
  frame *stack;
  size_t stack_cap;
  frit_uop **srcbuf;
  size_t srcbuf_cap;
} rewrite_scratch;

static frit_uop in_progress_;
#define IN_PROGRESS (&in_progress_)

void frit_rewrite_scratch_free(rewrite_scratch *s) {
  if (!s) return;
  free(s->memo);
  free(s->touched);
  free(s->stack);
  free(s->srcbuf);
  free(s);
}

static bool grow(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return true;
  size_t c = *cap ? *cap : 64;
  while (c < need) c *= 2;
  void *q = realloc(*p, c * elem);
  if (!q) return false;
  *p = q;
  *cap = c;
  return true;
}

static inline frit_uop *memo_get(const rewrite_scratch *s, const frit_uop *u) {
  return u->id < s->memo_cap ? s->memo[u->id] : NULL;
}

static bool memo_set(rewrite_scratch *s, frit_ctx *ctx, const frit_uop *u, frit_uop *v) {
  if (u->id >= s->memo_cap) {
    size_t old = s->memo_cap;
    size_t want = ctx->count > (size_t)u->id + 1 ? ctx->count : (size_t)u->id + 1;
    if (!grow((void **)&s->memo, &s->memo_cap, want, sizeof *s->memo)) return false;
    memset(s->memo + old, 0, (s->memo_cap - old) * sizeof *s->memo);
  }
  if (!s->memo[u->id]) {
    if (!grow((void **)&s->touched, &s->touched_cap, s->ntouched + 1, sizeof *s->touched)) return false;
    s->touched[s->ntouched++] = u->id;
  }
  s->memo[u->id] = v;
  return true;
}

static frit_uop *fail_nomem(frit_ctx *ctx) {
  frit_set_error(ctx, FRIT_ERR_NOMEM, "out of memory");
  return NULL;
}

static frit_uop *fail_cycle(frit_ctx *ctx, const frit_ruleset *rs, int rule_i, const frit_uop *u) {
  if (rule_i < 0)
    frit_set_error(ctx, FRIT_ERR_INVALID, "rules %s: graph cycle at %s node %u", rs->name,
                   frit_op_name((frit_op)u->op), u->id);
  else
    frit_set_error(ctx, FRIT_ERR_INVALID,
                   "rules %s: rewrite does not terminate: rule at line %d `%s` leads back to %s "
                   "node %u, which is still being rewritten",
                   rs->name, rs->rules[rule_i].line, rs->rules[rule_i].text,
                   frit_op_name((frit_op)u->op), u->id);
  return NULL;
}

static frit_uop *rewrite_run(frit_ctx *ctx, frit_uop *root, const frit_ruleset *rs, rewrite_scratch *s) {
  /* Runaway growth (x -> f(x) without end) makes new nodes forever rather than a cycle. */
  uint64_t budget = 64 * (uint64_t)ctx->count + 1000000, firings = 0;
  int last_rule = -1;
  size_t sp = 0;
#define PUSH(node)                                                                           \
  do {                                                                                       \
    if (!grow((void **)&s->stack, &s->stack_cap, sp + 1, sizeof *s->stack)) return fail_nomem(ctx); \
    s->stack[sp++] = (frame){(node), NULL, NULL, ST_ENTER, -1};                              \
  } while (0)
  PUSH(root);
  while (sp) {
    frame *f = &s->stack[sp - 1];
    frit_uop *n = f->n;
    if (f->state == ST_ENTER) {
      frit_uop *m = memo_get(s, n);
      if (m == IN_PROGRESS) return fail_cycle(ctx, rs, last_rule, n);
      if (m) {
        sp--;
        continue;
      }
      if (!memo_set(s, ctx, n, IN_PROGRESS)) return fail_nomem(ctx);
      f->state = ST_SRCS;
      size_t base = sp;
      for (uint32_t i = n->nsrc; i-- > 0;) {
        frit_uop *sm = memo_get(s, n->src[i]);
        if (sm == IN_PROGRESS) return fail_cycle(ctx, rs, last_rule, n->src[i]);
        if (!sm) PUSH(n->src[i]);
      }
      if (sp != base) continue;
      f = &s->stack[sp - 1];
    }
    if (f->state == ST_SRCS) {
      /* sources are all rewritten: rebuild n over them (virtually at first), try the rules */
      frit_uop tmp, *u = n;
      for (uint32_t i = 0; i < n->nsrc; i++) {
        if (memo_get(s, n->src[i]) == n->src[i]) continue;
        if (!grow((void **)&s->srcbuf, &s->srcbuf_cap, n->nsrc, sizeof *s->srcbuf)) return fail_nomem(ctx);
        for (uint32_t j = 0; j < n->nsrc; j++) s->srcbuf[j] = memo_get(s, n->src[j]);
        tmp = *n;
        tmp.id = UINT32_MAX;
        tmp.src = s->srcbuf;
        u = &tmp;
        break;
      }
      int rule_i = -1;
      bool err;
      frit_uop *np, *done = NULL;
      frit_uop *r = apply_rules(ctx, rs, u, u == n ? NULL : n, &rule_i, &np, &err);
      if (err) return NULL;
      if (np && np != n) {
        /* the rebuilt node exists now: it may have been rewritten already, or be in progress */
        frit_uop *m = memo_get(s, np);
        if (m == IN_PROGRESS) return fail_cycle(ctx, rs, last_rule, np);
        if (m) done = m;
      }
      if (!done && !r) done = np;
      if (!done) {
        last_rule = rule_i;
        if (++firings > budget) {
          frit_set_error(ctx, FRIT_ERR_INVALID,
                         "rules %s: rewrite does not terminate: %llu rules fired, the last at "
                         "line %d `%s`", rs->name, (unsigned long long)firings,
                         rs->rules[rule_i].line, rs->rules[rule_i].text);
          return NULL;
        }
        frit_uop *m = memo_get(s, r);
        if (m == IN_PROGRESS) return fail_cycle(ctx, rs, rule_i, r);
        if (m) {
          done = m;
        } else {
          if (np && np != n && !memo_set(s, ctx, np, IN_PROGRESS)) return fail_nomem(ctx);
          f->np = np;
          f->r = r;
          f->rule = rule_i;
          f->state = ST_WAIT;
          PUSH(r);
          continue;
        }
      }
      if (!memo_set(s, ctx, n, done) || (np && !memo_set(s, ctx, np, done))) return fail_nomem(ctx);
      sp--;
      continue;
    }
    /* ST_WAIT: the rule's result has been rewritten */
    frit_uop *done = memo_get(s, f->r);
    FRIT_ASSERT(done && done != IN_PROGRESS);
    if (!memo_set(s, ctx, n, done) || (f->np && !memo_set(s, ctx, f->np, done))) return fail_nomem(ctx);
    sp--;
  }
#undef PUSH
  frit_uop *res = memo_get(s, root);
  FRIT_ASSERT(res && res != IN_PROGRESS);
  return res;
}

frit_uop *frit_rewrite(frit_ctx *ctx, frit_uop *root, const frit_ruleset *rs) {
  if (!ctx) return NULL;
  if (!root || !rs) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "frit_rewrite: %s is NULL", root ? "rule set" : "root");
    return NULL;
  }
  if (rs->ctx != ctx) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "rules %s: rule set belongs to another context", rs->name);
    return NULL;
  }
  /* The scratch lives in the rule set; a nested call (from a callback) gets its own. */
  frit_ruleset *mrs = (frit_ruleset *)rs;
  rewrite_scratch *s = mrs->scratch;
  mrs->scratch = NULL;
  if (!s && !(s = calloc(1, sizeof *s))) return fail_nomem(ctx);
  frit_uop *res = rewrite_run(ctx, root, rs, s);
  for (size_t i = 0; i < s->ntouched; i++) s->memo[s->touched[i]] = NULL;
  s->ntouched = 0;
  if (mrs->scratch) {
    frit_rewrite_scratch_free(s);
  } else {
    mrs->scratch = s;
  }
  return res;
}
