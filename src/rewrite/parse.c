/* Parser of the rule notation (docs/rules.md) into compiled patterns and templates, and the
 * rule-set accessors. One rule per line; errors name the set and the line. */
#include "rewrite/rules.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>

typedef struct parser {
  frit_ruleset *rs;
  const char *s, *end; /* the current line, comment stripped */
  const char *at;
  char err[256];
  int nslots;
  const char *slot_name[FRIT_RULE_MAX_SLOTS];
  size_t slot_len[FRIT_RULE_MAX_SLOTS];
  int depth;
} parser;

#define MAX_DEPTH 64

static void *p_alloc(parser *p, size_t size) {
  void *r = frit_arena_alloc(&p->rs->arena, size);
  if (!r) {
    if (!p->err[0]) snprintf(p->err, sizeof p->err, "out of memory");
    return NULL;
  }
  memset(r, 0, size);
  return r;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void *p_fail(parser *p, const char *fmt, ...) {
  if (!p->err[0]) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err, sizeof p->err, fmt, ap);
    va_end(ap);
  }
  return NULL;
}

static void skip_ws(parser *p) {
  while (p->at < p->end && isspace((unsigned char)*p->at)) p->at++;
}

static bool peek_c(parser *p, char c) {
  skip_ws(p);
  return p->at < p->end && *p->at == c;
}

static bool eat_c(parser *p, char c) {
  if (!peek_c(p, c)) return false;
  p->at++;
  return true;
}

static bool eat_s(parser *p, const char *s) {
  skip_ws(p);
  size_t n = strlen(s);
  if ((size_t)(p->end - p->at) < n || memcmp(p->at, s, n) != 0) return false;
  p->at += n;
  return true;
}

static bool is_name_start(char c) { return isalpha((unsigned char)c) || c == '_'; }
static bool is_name_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Reads a name; returns its length (0 if none). */
static size_t read_name(parser *p, const char **name) {
  skip_ws(p);
  const char *b = p->at;
  if (b >= p->end || !is_name_start(*b)) return 0;
  while (p->at < p->end && is_name_char(*p->at)) p->at++;
  *name = b;
  return (size_t)(p->at - b);
}

static bool name_is(const char *s, size_t n, const char *kw) {
  return strlen(kw) == n && memcmp(s, kw, n) == 0;
}

/* Token text for messages: up to the next space or parenthesis. */
static int tok_len(const char *s, const char *end) {
  int n = 0;
  while (s + n < end && n < 40 && !isspace((unsigned char)s[n]) && s[n] != '(' && s[n] != ')')
    n++;
  return n ? n : (s < end ? 1 : 0);
}

static const char *here(parser *p, int *len) {
  skip_ws(p);
  if (p->at >= p->end) {
    *len = 11;
    return "end of line";
  }
  *len = tok_len(p->at, p->end);
  return p->at;
}

/* A literal at the cursor, if there is one: numbers, true/false/inf/nan, -inf. */
static bool read_literal(parser *p, rule_lit *lit, bool *ok) {
  skip_ws(p);
  *ok = true;
  const char *b = p->at, *e = p->end;
  if (b >= e) return false;
  bool neg = *b == '-';
  const char *d = neg ? b + 1 : b;
  if (d < e && is_name_start(*d)) {
    const char *q = d;
    while (q < e && is_name_char(*q)) q++;
    size_t n = (size_t)(q - d);
    memset(lit, 0, sizeof *lit);
    if (!neg && (name_is(d, n, "true") || name_is(d, n, "false"))) {
      lit->i = name_is(d, n, "true");
      lit->f = (double)lit->i;
    } else if (name_is(d, n, "inf")) {
      lit->is_float = true;
      lit->f = neg ? -INFINITY : INFINITY;
    } else if (!neg && name_is(d, n, "nan")) {
      lit->is_float = true;
      lit->f = NAN;
    } else {
      return false;
    }
    p->at = q;
    return true;
  }
  if (!(d < e && (isdigit((unsigned char)*d) || (*d == '.' && d + 1 < e && isdigit((unsigned char)d[1])))))
    return false;
  const char *q = d;
  bool is_float = false;
  while (q < e && (isalnum((unsigned char)*q) || *q == '.' ||
                   ((*q == '+' || *q == '-') && (q[-1] == 'e' || q[-1] == 'E')))) {
    if (*q == '.' || *q == 'e' || *q == 'E') is_float = true;
    q++;
  }
  char buf[64];
  size_t n = (size_t)(q - b);
  if (n >= sizeof buf) {
    *ok = false;
    p_fail(p, "number too long");
    return true;
  }
  memcpy(buf, b, n);
  buf[n] = 0;
  char *stop;
  errno = 0;
  memset(lit, 0, sizeof *lit);
  if (is_float) {
    lit->is_float = true;
    lit->f = strtod(buf, &stop);
  } else {
    lit->i = strtoll(buf, &stop, 10);
    lit->f = (double)lit->i;
  }
  if (*stop || errno) {
    *ok = false;
    p_fail(p, "bad number '%s'", buf);
    return true;
  }
  p->at = q;
  return true;
}

/* ':class' suffixes of a pattern. */
static bool read_classes(parser *p, rule_pat *pt) {
  while (eat_c(p, ':')) {
    skip_ws(p);
    const char *b = p->at;
    while (p->at < p->end && (is_name_char(*p->at) || *p->at == '*')) p->at++;
    size_t n = (size_t)(p->at - b);
    if (n == 0) return p_fail(p, "expected a class after ':'"), false;
    if (pt->ncls == FRIT_RULE_MAX_CLASSES) return p_fail(p, "too many classes"), false;
    static const char *const names[] = {"int", "sint", "uint", "float", "bool", "const"};
    int c = -1;
    for (int i = 0; i < 6; i++)
      if (name_is(b, n, names[i])) c = i;
    frit_dtype dt = 0;
    if (c < 0) {
      if (frit_dtype_parse(b, n, &dt) != FRIT_OK)
        return p_fail(p, "bad class '%.*s' (int, sint, uint, float, bool, const or a dtype)", (int)n, b), false;
      c = RC_DTYPE;
    }
    pt->cls[pt->ncls] = (uint8_t)c;
    pt->cls_dt[pt->ncls] = dt;
    pt->ncls++;
  }
  return true;
}

static int find_slot(parser *p, const char *name, size_t n) {
  for (int i = 0; i < p->nslots; i++)
    if (p->slot_len[i] == n && memcmp(p->slot_name[i], name, n) == 0) return i;
  return -1;
}

static int read_op(parser *p, bool in_pattern) {
  const char *name;
  size_t n = read_name(p, &name);
  int len;
  const char *h;
  if (!n) return h = here(p, &len), p_fail(p, "expected an op name, got '%.*s'", len, h), -1;
  int op = frit_op_from_name(name, n);
  if (op < 0) return p_fail(p, "unknown op '%.*s'", (int)n, name), -1;
  if (!in_pattern && peek_c(p, '|'))
    return p_fail(p, "op alternatives '|' are only allowed in patterns"), -1;
  return op;
}

static rule_pat *parse_pat(parser *p) {
  if (++p->depth > MAX_DEPTH) return p_fail(p, "pattern nested deeper than %d levels", MAX_DEPTH);
  rule_pat *pt = p_alloc(p, sizeof *pt);
  if (!pt) return NULL;
  rule_lit lit;
  bool ok;
  const char *name;
  size_t n;
  int len;
  const char *h;
  if (eat_c(p, '(')) {
    pt->kind = PK_OP;
    int nops = 0, opl[FRIT_OP_COUNT_];
    do {
      int op = read_op(p, true);
      if (op < 0) return NULL;
      pt->ops[op >> 6] |= 1ull << (op & 63);
      opl[nops++] = op;
    } while (eat_c(p, '|') && nops < FRIT_OP_COUNT_);
    rule_pat *srcs[FRIT_RULE_MAX_SRC];
    int ns = 0;
    while (!peek_c(p, ')')) {
      if (eat_s(p, "...")) {
        pt->ellipsis = 1;
        if (!peek_c(p, ')')) return p_fail(p, "'...' must be the last source");
        break;
      }
      if (p->at >= p->end) return p_fail(p, "missing ')'");
      if (ns == FRIT_RULE_MAX_SRC) return p_fail(p, "more than %d sources", FRIT_RULE_MAX_SRC);
      if (!(srcs[ns++] = parse_pat(p))) return NULL;
    }
    eat_c(p, ')');
    for (int i = 0; i < nops; i++) {
      int lo = frit_op_min_src((frit_op)opl[i]), hi = frit_op_max_src((frit_op)opl[i]);
      if ((hi >= 0 && ns > hi) || (!pt->ellipsis && ns < lo))
        return p_fail(p, "arity mismatch: %s takes %d..%d sources, pattern has %d%s",
                      frit_op_name((frit_op)opl[i]), lo, hi, ns, pt->ellipsis ? " and '...'" : "");
    }
    pt->nsrc = (uint8_t)ns;
    if (ns) {
      if (!(pt->src = p_alloc(p, (size_t)ns * sizeof *pt->src))) return NULL;
      memcpy(pt->src, srcs, (size_t)ns * sizeof *srcs);
    }
  } else if (read_literal(p, &lit, &ok)) {
    if (!ok) return NULL;
    pt->kind = PK_LIT;
    pt->lit = lit;
  } else if ((n = read_name(p, &name)) != 0) {
    if (name_is(name, n, "if")) return p_fail(p, "'if' cannot name a variable");
    pt->kind = PK_VAR;
    if (name_is(name, n, "_")) {
      pt->slot = -1;
    } else {
      int s = find_slot(p, name, n);
      if (s < 0) {
        if (p->nslots == FRIT_RULE_MAX_SLOTS) return p_fail(p, "too many variables");
        s = p->nslots++;
        p->slot_name[s] = name;
        p->slot_len[s] = n;
      }
      pt->slot = (int16_t)s;
    }
  } else {
    h = here(p, &len);
    return p_fail(p, "expected a pattern, got '%.*s'", len, h);
  }
  if (!read_classes(p, pt)) return NULL;
  p->depth--;
  return pt;
}

static int find_fn(parser *p, const char *name, size_t n, bool want_build) {
  for (int i = 0; i < p->rs->nfns; i++) {
    const frit_rule_fn *f = &p->rs->fns[i];
    if (f->name && name_is(name, n, f->name)) {
      if (want_build && !f->build)
        return p_fail(p, "function '%.*s' is a predicate, not a build function", (int)n, name), -1;
      if (!want_build && !f->pred)
        return p_fail(p, "function '%.*s' is a build function, not a predicate", (int)n, name), -1;
      return i;
    }
  }
  return p_fail(p, "unknown function '%.*s'", (int)n, name), -1;
}

/* '(' name { ',' name } ')' of a guard or callback: bound variables as slots. */
static int read_args(parser *p, int *args, const char *what) {
  int nargs = 0;
  if (eat_c(p, ')')) return 0;
  do {
    const char *name;
    size_t n = read_name(p, &name);
    if (!n) return p_fail(p, "expected a variable name in the arguments of %s", what), -1;
    int s = find_slot(p, name, n);
    if (s < 0) return p_fail(p, "unbound variable '%.*s' in %s", (int)n, name, what), -1;
    if (nargs == FRIT_RULE_MAX_ARGS) return p_fail(p, "too many arguments"), -1;
    args[nargs++] = s;
  } while (eat_c(p, ','));
  if (!eat_c(p, ')')) return p_fail(p, "expected ')' after the arguments of %s", what), -1;
  return nargs;
}

static bool read_dtype(parser *p, frit_dtype *dt) {
  skip_ws(p);
  const char *b = p->at;
  while (p->at < p->end && (is_name_char(*p->at) || *p->at == '*')) p->at++;
  size_t n = (size_t)(p->at - b);
  if (!n || frit_dtype_parse(b, n, dt) != FRIT_OK)
    return p_fail(p, "bad dtype '%.*s'", (int)n, b), false;
  return true;
}

static rule_tmpl *parse_tmpl(parser *p) {
  if (++p->depth > MAX_DEPTH) return p_fail(p, "result nested deeper than %d levels", MAX_DEPTH);
  rule_tmpl *t = p_alloc(p, sizeof *t);
  if (!t) return NULL;
  rule_lit lit;
  bool ok;
  const char *name;
  size_t n;
  int len;
  const char *h;
  if (eat_c(p, '(')) {
    t->kind = TK_OP;
    int op = read_op(p, false);
    if (op < 0) return NULL;
    t->op = (uint16_t)op;
    rule_tmpl *srcs[FRIT_RULE_MAX_SRC];
    int ns = 0;
    while (!eat_c(p, ')')) {
      if (p->at >= p->end) return p_fail(p, "missing ')'");
      if (peek_c(p, '.')) return p_fail(p, "'...' is only allowed in patterns");
      if (ns == FRIT_RULE_MAX_SRC) return p_fail(p, "more than %d sources", FRIT_RULE_MAX_SRC);
      if (!(srcs[ns++] = parse_tmpl(p))) return NULL;
    }
    int lo = frit_op_min_src((frit_op)op), hi = frit_op_max_src((frit_op)op);
    if (ns < lo || (hi >= 0 && ns > hi))
      return p_fail(p, "arity mismatch: %s takes %d..%d sources, result has %d", frit_op_name((frit_op)op),
                    lo, hi, ns);
    t->nsrc = ns;
    if (ns) {
      if (!(t->src = p_alloc(p, (size_t)ns * sizeof *t->src))) return NULL;
      memcpy(t->src, srcs, (size_t)ns * sizeof *srcs);
    }
    for (int i = 0; i < ns; i++) t->typed |= srcs[i]->typed;
    if (eat_c(p, ':')) {
      if (!read_dtype(p, &t->dt)) return NULL;
      t->has_dt = t->typed = 1;
    } else if (op == FRIT_OP_CAST || op == FRIT_OP_BITCAST) {
      return p_fail(p, "%s in a result needs ':dtype'", frit_op_name((frit_op)op));
    }
  } else if (eat_c(p, '@')) {
    t->kind = TK_CALL;
    t->typed = 1;
    if (!(n = read_name(p, &name))) return p_fail(p, "expected a function name after '@'");
    if ((t->fn = find_fn(p, name, n, true)) < 0) return NULL;
    if (eat_c(p, '(')) {
      int args[FRIT_RULE_MAX_ARGS];
      int na = read_args(p, args, "a callback");
      if (na < 0) return NULL;
      t->nsrc = na;
      if (na) {
        if (!(t->args = p_alloc(p, (size_t)na * sizeof *args))) return NULL;
        memcpy(t->args, args, (size_t)na * sizeof *args);
      }
    }
  } else if (read_literal(p, &lit, &ok)) {
    if (!ok) return NULL;
    t->kind = TK_LIT;
    t->lit = lit;
    if (eat_c(p, ':')) {
      if (!read_dtype(p, &t->dt)) return NULL;
      t->has_dt = 1;
    }
  } else if ((n = read_name(p, &name)) != 0) {
    t->kind = TK_VAR;
    t->typed = 1;
    if ((t->slot = find_slot(p, name, n)) < 0)
      return p_fail(p, "unbound variable '%.*s' in result", (int)n, name);
  } else {
    h = here(p, &len);
    return p_fail(p, "expected a result, got '%.*s'", len, h);
  }
  p->depth--;
  return t;
}

static bool parse_guards(parser *p, rule *r) {
  rule_guard gs[FRIT_RULE_MAX_ARGS];
  int ng = 0;
  do {
    if (ng == FRIT_RULE_MAX_ARGS) return p_fail(p, "too many guards"), false;
    rule_guard *g = &gs[ng++];
    memset(g, 0, sizeof *g);
    g->negate = eat_c(p, '!');
    const char *name;
    size_t n = read_name(p, &name);
    if (!n) return p_fail(p, "expected a guard name"), false;
    if ((g->fn = find_fn(p, name, n, false)) < 0) return false;
    if (!eat_c(p, '(')) return p_fail(p, "expected '(' after guard '%.*s'", (int)n, name), false;
    if ((g->nargs = read_args(p, g->args, "a guard")) < 0) return false;
  } while (eat_c(p, ','));
  if (!(r->guards = p_alloc(p, (size_t)ng * sizeof *gs))) return false;
  memcpy(r->guards, gs, (size_t)ng * sizeof *gs);
  r->nguards = ng;
  return true;
}

static bool tmpl_has_call(const rule_tmpl *t) {
  if (t->kind == TK_CALL) return true;
  if (t->kind == TK_OP)
    for (int i = 0; i < t->nsrc; i++)
      if (tmpl_has_call(t->src[i])) return true;
  return false;
}

static bool parse_rule(parser *p, rule *r) {
  p->nslots = 0;
  p->depth = 0;
  if (!(r->pat = parse_pat(p))) return false;
  if (!eat_s(p, "->")) {
    int len;
    const char *h = here(p, &len);
    return p_fail(p, "expected '->', got '%.*s'", len, h), false;
  }
  p->depth = 0;
  if (!(r->res = parse_tmpl(p))) return false;
  const char *kw;
  size_t n = read_name(p, &kw);
  if (n) {
    if (!name_is(kw, n, "if")) return p_fail(p, "expected 'if' or end of rule, got '%.*s'", (int)n, kw), false;
    if (!parse_guards(p, r)) return false;
  }
  skip_ws(p);
  if (p->at < p->end) {
    int len;
    const char *h = here(p, &len);
    return p_fail(p, "unexpected '%.*s' after the rule", len, h), false;
  }
  r->nslots = p->nslots;
  r->needs_root = r->nguards > 0 || tmpl_has_call(r->res);
  return true;
}

static void ruleset_destroy(void *ptr) {
  frit_ruleset *rs = ptr;
  frit_rewrite_scratch_free(rs->scratch);
  frit_arena_free_all(&rs->arena);
  free(rs);
}

/* Tables by root op, in file order. */
static bool index_rules(parser *p) {
  frit_ruleset *rs = p->rs;
  for (int pass = 0; pass < 2; pass++) {
    for (int op = 0; op < FRIT_OP_COUNT_; op++) {
      if (pass == 1) {
        if (rs->nby_op[op] && !(rs->by_op[op] = p_alloc(p, (size_t)rs->nby_op[op] * sizeof(int))))
          return false;
        rs->nby_op[op] = 0;
      }
    }
    for (int i = 0; i < rs->nrules; i++) {
      const rule_pat *pt = rs->rules[i].pat;
      for (int op = 0; op < FRIT_OP_COUNT_; op++) {
        bool in = pt->kind == PK_OP ? rule_op_in(pt->ops, (unsigned)op)
                                     : pt->kind == PK_VAR || op == FRIT_OP_CONST;
        if (!in) continue;
        if (pass == 1) rs->by_op[op][rs->nby_op[op]] = i;
        rs->nby_op[op]++;
      }
    }
  }
  return true;
}

frit_ruleset *frit_ruleset_parse(frit_ctx *ctx, const char *name, const char *text,
                                 const frit_rule_fn *fns, int nfns) {
  if (!ctx) return NULL;
  if (!name) name = "?";
  if (!text || nfns < 0 || (nfns && !fns)) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "rules %s: missing text or functions", name);
    return NULL;
  }
  frit_ruleset *rs = calloc(1, sizeof *rs);
  if (!rs) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "out of memory");
    return NULL;
  }
  rs->ctx = ctx;
  rs->fns = fns;
  rs->nfns = nfns;
  for (int op = 0; op < FRIT_OP_COUNT_; op++)
    if (frit_op_flags((frit_op)op) & FRIT_F_COMMUTATIVE) rs->commutative[op >> 6] |= 1ull << (op & 63);
  parser p;
  memset(&p, 0, sizeof p);
  p.rs = rs;
  size_t cap = 0;
  rule *rules = NULL;
  int line = 0;
  rs->name = p_alloc(&p, strlen(name) + 1);
  if (rs->name) strcpy(rs->name, name);
  for (const char *ls = text; *ls && !p.err[0];) {
    const char *le = strchr(ls, '\n');
    if (!le) le = ls + strlen(ls);
    line++;
    const char *hash = memchr(ls, '#', (size_t)(le - ls));
    const char *b = ls, *e = hash ? hash : le;
    while (b < e && isspace((unsigned char)*b)) b++;
    while (e > b && isspace((unsigned char)e[-1])) e--;
    ls = *le ? le + 1 : le;
    if (b == e) continue;
    if ((size_t)rs->nrules == cap) {
      cap = cap ? 2 * cap : 32;
      rule *grown = realloc(rules, cap * sizeof *rules);
      if (!grown) {
        p_fail(&p, "out of memory");
        break;
      }
      rules = grown;
    }
    rule *r = &rules[rs->nrules];
    memset(r, 0, sizeof *r);
    r->line = line;
    p.s = p.at = b;
    p.end = e;
    if (!parse_rule(&p, r)) break;
    char *t = p_alloc(&p, (size_t)(e - b) + 1);
    if (!t) break;
    memcpy(t, b, (size_t)(e - b));
    r->text = t;
    rs->nrules++;
  }
  if (!p.err[0]) {
    rs->rules = p_alloc(&p, (size_t)(rs->nrules ? rs->nrules : 1) * sizeof *rules);
    rs->fired = p_alloc(&p, (size_t)(rs->nrules ? rs->nrules : 1) * sizeof *rs->fired);
    if (rs->rules && rs->nrules) memcpy(rs->rules, rules, (size_t)rs->nrules * sizeof *rules);
    if (rs->rules && rs->fired) index_rules(&p);
  }
  free(rules);
  if (p.err[0]) {
    frit_set_error(ctx, FRIT_ERR_PARSE, "rules %s:%d: %s", name, line, p.err);
    ruleset_destroy(rs);
    return NULL;
  }
  if (!frit_ctx_own(ctx, rs, ruleset_destroy)) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "out of memory");
    return NULL;
  }
  return rs;
}

int frit_ruleset_size(const frit_ruleset *rs) { return rs ? rs->nrules : 0; }

const char *frit_ruleset_rule_text(const frit_ruleset *rs, int i) {
  if (!rs || i < 0 || i >= rs->nrules) return NULL;
  return rs->rules[i].text;
}

uint64_t frit_ruleset_fired(const frit_ruleset *rs, int i) {
  if (!rs || i < 0 || i >= rs->nrules) return 0;
  return rs->fired[i];
}
