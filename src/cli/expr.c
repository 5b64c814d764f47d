/* Operator-precedence parser (explicit stacks, no recursion) for the CLI's C-syntax integer expressions. Values are bool or
 * integer nodes; C's conversions are applied where an operator needs the other kind. */
#include "cli/expr.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum tok_kind { TK_EOF, TK_INT, TK_IDENT, TK_PUNCT };

typedef struct parser {
  frit_ctx *ctx;
  const char *s;
  const cli_var_range *ranges;
  int nranges;
  char *err;
  size_t errsize;
  bool failed;
  /* current token */
  enum tok_kind tok;
  size_t tpos, tlen;
  uint64_t tval;     /* TK_INT magnitude (up to 2^63, checked on use) */
  char punct[3];     /* TK_PUNCT spelling */
} parser;

/* Reports an error at column `pos` with the text and a caret under it; long text is cut to a
 * window around the column. */
static void fail_at(parser *p, size_t pos, const char *fmt, ...) {
  if (p->failed) return;
  p->failed = true;
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  enum { WINDOW = 60 };
  size_t len = strlen(p->s);
  size_t from = pos > WINDOW ? pos - WINDOW : 0, to = len - pos > WINDOW ? pos + WINDOW : len;
  const char *pre = from ? "..." : "", *post = to < len ? "..." : "";
  int n = snprintf(p->err, p->errsize, "syntax error at column %zu: %s\n  %s%.*s%s\n  ", pos + 1, msg,
                   pre, (int)(to - from), p->s + from, post);
  for (size_t i = 0; i < strlen(pre) + pos - from && n >= 0 && (size_t)n + 2 < p->errsize; i++, n++)
    p->err[n] = i >= strlen(pre) && p->s[from + i - strlen(pre)] == '\t' ? '\t' : ' ';
  if (n >= 0 && (size_t)n + 2 < p->errsize) {
    p->err[n++] = '^';
    p->err[n] = '\0';
  }
}

/* A failure inside the library (dtype rules and such): its own message. */
static frit_uop *lib_check(parser *p, frit_uop *u, size_t pos) {
  if (!u && !p->failed) {
    p->failed = true;
    snprintf(p->err, p->errsize, "at column %zu: %s", pos + 1, frit_error(p->ctx));
  }
  return u;
}

static const char *const puncts2[] = {"||", "&&", "==", "!=", "<=", ">=", "<<", ">>"};
static const char puncts1[] = "+-*/%<>!~&|^?:(),";

static void next(parser *p) {
  const char *s = p->s;
  size_t i = p->tpos + p->tlen;
  while (s[i] && isspace((unsigned char)s[i])) i++;
  p->tpos = i;
  p->tlen = 0;
  if (!s[i]) {
    p->tok = TK_EOF;
    return;
  }
  unsigned char c = (unsigned char)s[i];
  if (isdigit(c)) {
    uint64_t v = 0;
    bool overflow = false;
    size_t j = i;
    int base = 10;
    if (s[j] == '0' && (s[j + 1] == 'x' || s[j + 1] == 'X') && isxdigit((unsigned char)s[j + 2])) {
      base = 16;
      j += 2;
    }
    for (; isxdigit((unsigned char)s[j]); j++) {
      int d = isdigit((unsigned char)s[j]) ? s[j] - '0' : (tolower((unsigned char)s[j]) - 'a' + 10);
      if (d >= base) break;
      if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base) overflow = true;
      v = v * (uint64_t)base + (uint64_t)d;
    }
    /* C suffixes such as 10LL are accepted and ignored: the value is i64 anyway */
    while (s[j] == 'l' || s[j] == 'L' || s[j] == 'u' || s[j] == 'U') j++;
    if (isalnum((unsigned char)s[j]) || s[j] == '_') {
      p->tlen = j - i;
      fail_at(p, j, "bad character '%c' in number", s[j]);
      p->tok = TK_EOF;
      return;
    }
    if (overflow || v > (uint64_t)INT64_MAX + 1) {
      fail_at(p, i, "integer literal does not fit in 64 bits");
      p->tok = TK_EOF;
      return;
    }
    p->tok = TK_INT;
    p->tval = v;
    p->tlen = j - i;
    return;
  }
  if (isalpha(c) || c == '_') {
    size_t j = i;
    while (isalnum((unsigned char)s[j]) || s[j] == '_') j++;
    p->tok = TK_IDENT;
    p->tlen = j - i;
    return;
  }
  for (size_t k = 0; k < sizeof puncts2 / sizeof puncts2[0]; k++) {
    if (s[i] == puncts2[k][0] && s[i + 1] == puncts2[k][1]) {
      p->tok = TK_PUNCT;
      memcpy(p->punct, puncts2[k], 3);
      p->tlen = 2;
      return;
    }
  }
  if (strchr(puncts1, c)) {
    p->tok = TK_PUNCT;
    p->punct[0] = (char)c;
    p->punct[1] = '\0';
    p->tlen = 1;
    return;
  }
  fail_at(p, i, "unexpected character '%c'", c);
  p->tok = TK_EOF;
}

static bool is_punct(const parser *p, const char *s) {
  return p->tok == TK_PUNCT && strcmp(p->punct, s) == 0;
}
static bool is_ident(const parser *p, const char *s) {
  return p->tok == TK_IDENT && strlen(s) == p->tlen && memcmp(p->s + p->tpos, s, p->tlen) == 0;
}

static void expect(parser *p, const char *s) {
  if (p->failed) return;
  if (!is_punct(p, s)) {
    if (p->tok == TK_EOF)
      fail_at(p, p->tpos, "expected '%s' before end of input", s);
    else
      fail_at(p, p->tpos, "expected '%s' before '%.*s'", s, (int)p->tlen, p->s + p->tpos);
    return;
  }
  next(p);
}

static bool is_bool(frit_uop *u) { return frit_uop_dtype(u) == FRIT_BOOL; }

/* Where an integer is needed, a bool becomes 0/1. */
static frit_uop *as_int(parser *p, frit_uop *u, size_t pos) {
  if (!u) return NULL;
  return is_bool(u) ? lib_check(p, frit_cast(p->ctx, u, FRIT_I64), pos) : u;
}
/* Where a truth value is needed, an integer x becomes x != 0. */
static frit_uop *as_bool(parser *p, frit_uop *u, size_t pos) {
  if (!u) return NULL;
  if (is_bool(u)) return u;
  frit_uop *zero = lib_check(p, frit_const_int(p->ctx, frit_uop_dtype(u), 0), pos);
  if (!zero) return NULL;
  return lib_check(p, frit_binary(p->ctx, FRIT_OP_CMPNE, u, zero), pos);
}
/* Two integers of different widths meet at the wider one (i64 unless both are narrower). */
static bool unify_ints(parser *p, frit_uop **a, frit_uop **b, size_t pos) {
  *a = as_int(p, *a, pos);
  *b = as_int(p, *b, pos);
  if (!*a || !*b) return false;
  frit_dtype da = frit_uop_dtype(*a), db = frit_uop_dtype(*b);
  if (da == db) return true;
  if (frit_dtype_bits(da) >= frit_dtype_bits(db))
    *b = lib_check(p, frit_cast(p->ctx, *b, da), pos);
  else
    *a = lib_check(p, frit_cast(p->ctx, *a, db), pos);
  return *a && *b;
}

/* C type names accepted in casts. */
static bool cast_type(const parser *p, frit_dtype *dt) {
  static const struct { const char *name; frit_dtype dt; } types[] = {
      {"int64_t", FRIT_I64}, {"long", FRIT_I64},  {"int32_t", FRIT_I32}, {"int", FRIT_I32},
      {"int16_t", FRIT_I16}, {"short", FRIT_I16}, {"int8_t", FRIT_I8},   {"bool", FRIT_BOOL},
      {"_Bool", FRIT_BOOL},
  };
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
    if (is_ident(p, types[i].name)) {
      *dt = types[i].dt;
      return true;
    }
  }
  return false;
}

static frit_uop *make_var(parser *p, size_t pos, size_t len) {
  char name[128];
  if (len >= sizeof name) {
    fail_at(p, pos, "variable name too long");
    return NULL;
  }
  memcpy(name, p->s + pos, len);
  name[len] = '\0';
  int64_t lo = INT64_MIN, hi = INT64_MAX;
  for (int i = 0; i < p->nranges; i++) {
    if (strcmp(p->ranges[i].name, name) == 0) {
      lo = p->ranges[i].lo;
      hi = p->ranges[i].hi;
    }
  }
  return lib_check(p, frit_var(p->ctx, name, lo, hi), pos);
}

/* Binary operators by C precedence (higher binds tighter); all left-associative. */
static const struct binop {
  const char *s;
  int prec;
  frit_op op;
} binops[] = {
    {"||", 1, FRIT_OP_OR},    {"&&", 2, FRIT_OP_AND},   {"|", 3, FRIT_OP_OR},
    {"^", 4, FRIT_OP_XOR},    {"&", 5, FRIT_OP_AND},    {"==", 6, FRIT_OP_CMPEQ},
    {"!=", 6, FRIT_OP_CMPNE}, {"<", 7, FRIT_OP_CMPLT},  {"<=", 7, FRIT_OP_CMPLE},
    {">", 7, FRIT_OP_CMPLT},  {">=", 7, FRIT_OP_CMPLE}, {"<<", 8, FRIT_OP_SHL},
    {">>", 8, FRIT_OP_SHR},   {"+", 9, FRIT_OP_ADD},    {"-", 9, FRIT_OP_SUB},
    {"*", 10, FRIT_OP_MUL},   {"/", 10, FRIT_OP_IDIV},  {"%", 10, FRIT_OP_MOD},
};

static const struct binop *current_binop(const parser *p) {
  if (p->tok != TK_PUNCT) return NULL;
  for (size_t i = 0; i < sizeof binops / sizeof binops[0]; i++)
    if (strcmp(p->punct, binops[i].s) == 0) return &binops[i];
  return NULL;
}

static frit_uop *combine(parser *p, const struct binop *bo, frit_uop *a, frit_uop *b, size_t pos) {
  if (!a || !b) return NULL;
  const char *s = bo->s;
  if (!strcmp(s, "||") || !strcmp(s, "&&")) {
    a = as_bool(p, a, pos);
    b = as_bool(p, b, pos);
  } else if ((!strcmp(s, "|") || !strcmp(s, "^") || !strcmp(s, "&")) && is_bool(a) && is_bool(b)) {
    /* on two truth values the bitwise ops are the logical ones; staying bool keeps it simple */
  } else {
    if (!unify_ints(p, &a, &b, pos)) return NULL;
    if (s[0] == '>' && s[1] != '>') {
      frit_uop *t = a; /* a > b is b < a */
      a = b;
      b = t;
    }
  }
  if (!a || !b) return NULL;
  return lib_check(p, frit_binary(p->ctx, bo->op, a, b), pos);
}

/* ---------- the operator-precedence machine ----------
 * The parser keeps its nesting on two heap stacks rather than the C stack, so that deeply
 * nested input ends in a clear error at CLI_EXPR_MAX_DEPTH instead of a stack overflow. */

enum pending_kind {
  PK_GROUP,   /* "(" */
  PK_CALL1,   /* min(/max( before the ',' */
  PK_CALL2,   /* min(/max( after the ',' (the first argument is on the value stack) */
  PK_PREFIX,  /* unary - + ! ~ */
  PK_CAST,    /* (T) */
  PK_BINOP,   /* the left operand is on the value stack */
  PK_QUEST,   /* c ? ... (c on the value stack) */
  PK_COLON,   /* c ? a : ... (c and a on the value stack) */
};

typedef struct pending {
  enum pending_kind kind;
  size_t pos, pos2;          /* the operator's column; PK_QUEST/PK_COLON: the condition's */
  const struct binop *bo;    /* PK_BINOP */
  char prefix;               /* PK_PREFIX: '-', '+', '!' or '~' */
  bool is_min;               /* PK_CALL* */
  frit_dtype dt;             /* PK_CAST */
} pending;

typedef struct operand {
  frit_uop *u;
  size_t pos;
} operand;

typedef struct machine {
  pending *ops;
  size_t nops, capops;
  operand *vals;
  size_t nvals, capvals;
} machine;

static bool grow(parser *p, void **buf, size_t *cap, size_t n, size_t elem) {
  if (n < *cap) return true;
  size_t nc = *cap ? *cap * 2 : 64;
  void *b = realloc(*buf, nc * elem);
  if (!b) {
    fail_at(p, p->tpos, "out of memory");
    return false;
  }
  *buf = b;
  *cap = nc;
  return true;
}

static bool push_op(parser *p, machine *m, pending op) {
  if (m->nops >= CLI_EXPR_MAX_DEPTH) {
    fail_at(p, op.pos, "expression nested deeper than %d levels at offset %zu", CLI_EXPR_MAX_DEPTH, op.pos);
    return false;
  }
  if (!grow(p, (void **)&m->ops, &m->capops, m->nops, sizeof *m->ops)) return false;
  m->ops[m->nops++] = op;
  return true;
}

static bool push_val(parser *p, machine *m, frit_uop *u, size_t pos) {
  if (!u) return false;
  if (!grow(p, (void **)&m->vals, &m->capvals, m->nvals, sizeof *m->vals)) return false;
  m->vals[m->nvals++] = (operand){u, pos};
  return true;
}

/* The grammar pushes an operand before every operator that pops one. */
static operand pop_val(machine *m) {
  return m->nvals ? m->vals[--m->nvals] : (operand){NULL, 0};
}

/* An operand is complete: the prefix operators and casts waiting for it apply, innermost
 * first, as C's unary operators bind tighter than any binary one. */
static bool operand_done(parser *p, machine *m, frit_uop *x, size_t xpos) {
  while (x && m->nops && (m->ops[m->nops - 1].kind == PK_PREFIX || m->ops[m->nops - 1].kind == PK_CAST)) {
    pending op = m->ops[--m->nops];
    if (op.kind == PK_CAST) {
      if (frit_uop_dtype(x) == op.dt) {
      } else if (frit_uop_op(x) == FRIT_OP_CONST && frit_dtype_is_int(op.dt) &&
                 frit_dtype_is_int(frit_uop_dtype(x))) {
        /* a cast literal such as (int32_t)-1 is a literal of that type */
        x = lib_check(p, frit_const_int(p->ctx, op.dt, frit_uop_arg(x)->value.i), xpos);
      } else {
        /* C converts to bool by comparing with zero, which is what CAST to bool does */
        x = lib_check(p, frit_cast(p->ctx, x, op.dt), xpos);
      }
      continue;
    }
    switch (op.prefix) {
    case '-': x = as_int(p, x, op.pos); x = x ? lib_check(p, frit_unary(p->ctx, FRIT_OP_NEG, x), op.pos) : NULL; break;
    case '+': x = as_int(p, x, op.pos); break;
    case '!': x = as_bool(p, x, op.pos); x = x ? lib_check(p, frit_unary(p->ctx, FRIT_OP_NOT, x), op.pos) : NULL; break;
    default: x = as_int(p, x, op.pos); x = x ? lib_check(p, frit_unary(p->ctx, FRIT_OP_NOT, x), op.pos) : NULL; break;
    }
    xpos = op.pos;
  }
  return push_val(p, m, x, xpos);
}

/* Applies the binary operators on top of the stack that bind at least as tightly as
 * min_prec; with `colons` also the finished conditionals (for ')', ',', ':' and the end). */
static bool reduce(parser *p, machine *m, int min_prec, bool colons) {
  while (!p->failed && m->nops) {
    pending *top = &m->ops[m->nops - 1];
    if (top->kind == PK_BINOP && top->bo->prec >= min_prec) {
      operand b = pop_val(m), a = pop_val(m);
      m->nops--;
      if (!push_val(p, m, combine(p, top->bo, a.u, b.u, top->pos), a.pos)) return false;
    } else if (top->kind == PK_COLON && colons) {
      operand b = pop_val(m), a = pop_val(m), c = pop_val(m);
      size_t qpos = top->pos;
      m->nops--;
      frit_uop *cu = as_bool(p, c.u, c.pos), *au = a.u, *bu = b.u;
      if (!(is_bool(au) && is_bool(bu)) && !unify_ints(p, &au, &bu, qpos)) return false;
      if (!cu) return false;
      if (!push_val(p, m, lib_check(p, frit_ternary(p->ctx, FRIT_OP_WHERE, cu, au, bu), qpos), c.pos))
        return false;
    } else {
      break;
    }
  }
  return !p->failed;
}

/* Expecting an operand: a literal, variable or call, or a prefix that waits for one. */
static void step_operand(parser *p, machine *m) {
  size_t pos = p->tpos;
  if (p->tok == TK_INT) {
    if (p->tval > (uint64_t)INT64_MAX) {
      fail_at(p, pos, "integer literal does not fit in int64");
      return;
    }
    int64_t v = (int64_t)p->tval;
    next(p);
    operand_done(p, m, lib_check(p, frit_const_int(p->ctx, FRIT_I64, v), pos), pos);
    return;
  }
  if (p->tok == TK_PUNCT && strchr("-+!~", p->punct[0]) && p->punct[1] == '\0') {
    char c = p->punct[0];
    next(p);
    if (c == '-' && p->tok == TK_INT) {
      /* -9223372036854775808 is a literal here, as INT64_MIN, though not in C */
      uint64_t mag = p->tval;
      next(p);
      operand_done(p, m, lib_check(p, frit_const_int(p->ctx, FRIT_I64, (int64_t)(0 - mag)), pos), pos);
      return;
    }
    push_op(p, m, (pending){.kind = PK_PREFIX, .pos = pos, .prefix = c});
    return;
  }
  if (p->tok == TK_IDENT) {
    size_t len = p->tlen;
    if (is_ident(p, "true") || is_ident(p, "false")) {
      bool v = is_ident(p, "true");
      next(p);
      operand_done(p, m, lib_check(p, frit_const_int(p->ctx, FRIT_BOOL, v), pos), pos);
      return;
    }
    next(p);
    if (!is_punct(p, "(")) {
      operand_done(p, m, make_var(p, pos, len), pos);
      return;
    }
    bool is_min = len == 3 && memcmp(p->s + pos, "min", 3) == 0;
    bool is_max = len == 3 && memcmp(p->s + pos, "max", 3) == 0;
    if (!is_min && !is_max) {
      fail_at(p, pos, "unknown function '%.*s' (known: min, max)", (int)len, p->s + pos);
      return;
    }
    next(p);
    push_op(p, m, (pending){.kind = PK_CALL1, .pos = pos, .pos2 = len, .is_min = is_min});
    return;
  }
  if (is_punct(p, "(")) {
    next(p);
    frit_dtype dt;
    if (p->tok == TK_IDENT && cast_type(p, &dt)) {
      /* a C cast "(T)x"; "long long" is one type */
      bool was_long = is_ident(p, "long");
      next(p);
      if (was_long && is_ident(p, "long")) next(p);
      expect(p, ")");
      if (!p->failed) push_op(p, m, (pending){.kind = PK_CAST, .pos = p->tpos, .dt = dt});
      return;
    }
    push_op(p, m, (pending){.kind = PK_GROUP, .pos = pos});
    return;
  }
  if (p->tok == TK_EOF)
    fail_at(p, pos, "expected an expression before end of input");
  else
    fail_at(p, pos, "expected an expression before '%.*s'", (int)p->tlen, p->s + pos);
}

/* The innermost bracket or conditional still open, for messages. */
static const pending *open_scope(const machine *m) {
  for (size_t i = m->nops; i-- > 0;)
    if (m->ops[i].kind != PK_BINOP && m->ops[i].kind != PK_COLON) return &m->ops[i];
  return NULL;
}

static void fail_expected(parser *p, const char *what) {
  if (p->tok == TK_EOF)
    fail_at(p, p->tpos, "expected '%s' before end of input", what);
  else
    fail_at(p, p->tpos, "expected '%s' before '%.*s'", what, (int)p->tlen, p->s + p->tpos);
}

/* After an operand: a binary operator, '?', ':', ',', ')' or the end. Returns true at the end. */
static bool step_operator(parser *p, machine *m, bool *expect_operand) {
  const struct binop *bo = current_binop(p);
  size_t pos = p->tpos;
  if (bo) {
    if (!reduce(p, m, bo->prec, false)) return false;
    next(p);
    push_op(p, m, (pending){.kind = PK_BINOP, .pos = pos, .bo = bo});
    *expect_operand = true;
    return false;
  }
  if (is_punct(p, "?")) {
    /* the condition is everything back to the open bracket or an earlier ':' */
    if (!reduce(p, m, 1, false)) return false;
    next(p);
    push_op(p, m, (pending){.kind = PK_QUEST, .pos = pos});
    *expect_operand = true;
    return false;
  }
  if (!reduce(p, m, 1, true)) return false;
  const pending *sc = open_scope(m);
  if (is_punct(p, ":") && sc && sc->kind == PK_QUEST) {
    m->ops[sc - m->ops].kind = PK_COLON;
    next(p);
    *expect_operand = true;
    return false;
  }
  if (is_punct(p, ",") && sc && sc->kind == PK_CALL1) {
    m->ops[sc - m->ops].kind = PK_CALL2;
    next(p);
    *expect_operand = true;
    return false;
  }
  if (is_punct(p, ")") && sc && (sc->kind == PK_GROUP || sc->kind == PK_CALL2)) {
    pending op = *sc;
    m->nops--;
    next(p);
    if (op.kind == PK_GROUP) {
      operand x = pop_val(m);
      operand_done(p, m, x.u, x.pos);
      return false;
    }
    operand b = pop_val(m), a = pop_val(m);
    frit_uop *au = as_int(p, a.u, a.pos), *bu = as_int(p, b.u, b.pos);
    if (!unify_ints(p, &au, &bu, op.pos)) return false;
    operand_done(p, m, lib_check(p, frit_binary(p->ctx, op.is_min ? FRIT_OP_MIN : FRIT_OP_MAX, au, bu), op.pos),
                 op.pos);
    return false;
  }
  if (!sc && p->tok == TK_EOF) return true;
  if (!sc) {
    fail_at(p, p->tpos, "unexpected '%.*s' after the expression", (int)p->tlen, p->s + p->tpos);
  } else if (sc->kind == PK_QUEST) {
    fail_expected(p, ":");
  } else if (sc->kind == PK_CALL1) {
    fail_expected(p, ",");
  } else if (sc->kind == PK_CALL2) {
    fail_at(p, p->tpos, "%.*s takes two arguments: expected ')'", (int)sc->pos2, p->s + sc->pos);
  } else {
    fail_expected(p, ")");
  }
  return false;
}

frit_uop *cli_parse_expr(frit_ctx *ctx, const char *text, const cli_var_range *ranges,
                         int nranges, char *err, size_t errsize) {
  parser p;
  memset(&p, 0, sizeof p);
  p.ctx = ctx;
  p.s = text;
  p.ranges = ranges;
  p.nranges = nranges;
  p.err = err;
  p.errsize = errsize;
  if (errsize) err[0] = '\0';
  next(&p);
  machine m = {0};
  bool expect_operand = true, done = false;
  while (!p.failed && !done) {
    if (expect_operand) {
      size_t before = m.nvals;
      step_operand(&p, &m);
      expect_operand = m.nvals == before;
    } else {
      done = step_operator(&p, &m, &expect_operand);
    }
  }
  frit_uop *root = !p.failed && m.nvals == 1 ? m.vals[0].u : NULL;
  free(m.ops);
  free(m.vals);
  return p.failed ? NULL : root;
}
