/* Recursive-descent parser for the CLI's C-syntax integer expressions. Values are bool or
 * integer nodes; C's conversions are applied where an operator needs the other kind. */
#include "cli/expr.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
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

/* Reports an error at column `pos` with the text and a caret under it. */
static void fail_at(parser *p, size_t pos, const char *fmt, ...) {
  if (p->failed) return;
  p->failed = true;
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  int n = snprintf(p->err, p->errsize, "syntax error at column %zu: %s\n  %s\n  ", pos + 1, msg,
                   p->s);
  for (size_t i = 0; i < pos && n >= 0 && (size_t)n + 2 < p->errsize; i++, n++)
    p->err[n] = p->s[i] == '\t' ? '\t' : ' ';
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

static frit_uop *parse_ternary(parser *p);

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

static frit_uop *parse_unary(parser *p);

static frit_uop *parse_primary(parser *p) {
  if (p->failed) return NULL;
  size_t pos = p->tpos;
  if (p->tok == TK_INT) {
    if (p->tval > (uint64_t)INT64_MAX) {
      fail_at(p, pos, "integer literal does not fit in int64");
      return NULL;
    }
    int64_t v = (int64_t)p->tval;
    next(p);
    return lib_check(p, frit_const_int(p->ctx, FRIT_I64, v), pos);
  }
  if (p->tok == TK_IDENT) {
    size_t len = p->tlen;
    if (is_ident(p, "true") || is_ident(p, "false")) {
      bool v = is_ident(p, "true");
      next(p);
      return lib_check(p, frit_const_int(p->ctx, FRIT_BOOL, v), pos);
    }
    next(p);
    if (!is_punct(p, "(")) return make_var(p, pos, len);
    bool is_min = len == 3 && memcmp(p->s + pos, "min", 3) == 0;
    bool is_max = len == 3 && memcmp(p->s + pos, "max", 3) == 0;
    if (!is_min && !is_max) {
      fail_at(p, pos, "unknown function '%.*s' (known: min, max)", (int)len, p->s + pos);
      return NULL;
    }
    next(p);
    size_t apos = p->tpos;
    frit_uop *a = parse_ternary(p);
    expect(p, ",");
    size_t bpos = p->tpos;
    frit_uop *b = parse_ternary(p);
    if (p->failed) return NULL;
    if (!is_punct(p, ")")) {
      fail_at(p, p->tpos, "%.*s takes two arguments: expected ')'", (int)len, p->s + pos);
      return NULL;
    }
    next(p);
    a = as_int(p, a, apos);
    b = as_int(p, b, bpos);
    if (!unify_ints(p, &a, &b, pos)) return NULL;
    return lib_check(p, frit_binary(p->ctx, is_min ? FRIT_OP_MIN : FRIT_OP_MAX, a, b), pos);
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
      size_t xpos = p->tpos;
      frit_uop *x = parse_unary(p);
      if (!x) return NULL;
      if (frit_uop_dtype(x) == dt) return x;
      /* a cast literal such as (int32_t)-1 is a literal of that type */
      if (frit_uop_op(x) == FRIT_OP_CONST && frit_dtype_is_int(dt) &&
          frit_dtype_is_int(frit_uop_dtype(x)))
        return lib_check(p, frit_const_int(p->ctx, dt, frit_uop_arg(x)->value.i), xpos);
      /* C converts to bool by comparing with zero, which is what CAST to bool does */
      return lib_check(p, frit_cast(p->ctx, x, dt), xpos);
    }
    frit_uop *x = parse_ternary(p);
    expect(p, ")");
    return p->failed ? NULL : x;
  }
  if (p->tok == TK_EOF)
    fail_at(p, pos, "expected an expression before end of input");
  else
    fail_at(p, pos, "expected an expression before '%.*s'", (int)p->tlen, p->s + pos);
  return NULL;
}

static frit_uop *parse_unary(parser *p) {
  if (p->failed) return NULL;
  size_t pos = p->tpos;
  if (is_punct(p, "-")) {
    next(p);
    if (p->tok == TK_INT) {
      /* -9223372036854775808 is a literal here, as INT64_MIN, though not in C */
      uint64_t mag = p->tval;
      next(p);
      return lib_check(p, frit_const_int(p->ctx, FRIT_I64, (int64_t)(0 - mag)), pos);
    }
    frit_uop *x = as_int(p, parse_unary(p), pos);
    return x ? lib_check(p, frit_unary(p->ctx, FRIT_OP_NEG, x), pos) : NULL;
  }
  if (is_punct(p, "+")) {
    next(p);
    return as_int(p, parse_unary(p), pos);
  }
  if (is_punct(p, "!")) {
    next(p);
    frit_uop *x = as_bool(p, parse_unary(p), pos);
    return x ? lib_check(p, frit_unary(p->ctx, FRIT_OP_NOT, x), pos) : NULL;
  }
  if (is_punct(p, "~")) {
    next(p);
    frit_uop *x = as_int(p, parse_unary(p), pos);
    return x ? lib_check(p, frit_unary(p->ctx, FRIT_OP_NOT, x), pos) : NULL;
  }
  return parse_primary(p);
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

static frit_uop *parse_binary(parser *p, int min_prec) {
  frit_uop *lhs = parse_unary(p);
  for (;;) {
    if (p->failed) return NULL;
    const struct binop *bo = current_binop(p);
    if (!bo || bo->prec < min_prec) return lhs;
    size_t pos = p->tpos;
    next(p);
    frit_uop *rhs = parse_binary(p, bo->prec + 1);
    lhs = combine(p, bo, lhs, rhs, pos);
  }
}

static frit_uop *parse_ternary(parser *p) {
  size_t cpos = p->tpos;
  frit_uop *c = parse_binary(p, 1);
  if (p->failed || !is_punct(p, "?")) return c;
  size_t qpos = p->tpos;
  next(p);
  frit_uop *a = parse_ternary(p);
  expect(p, ":");
  frit_uop *b = parse_ternary(p);
  if (p->failed) return NULL;
  c = as_bool(p, c, cpos);
  if (!(is_bool(a) && is_bool(b)) && !unify_ints(p, &a, &b, qpos)) return NULL;
  if (!c) return NULL;
  return lib_check(p, frit_ternary(p->ctx, FRIT_OP_WHERE, c, a, b), qpos);
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
  frit_uop *root = parse_ternary(&p);
  if (!p.failed && p.tok != TK_EOF)
    fail_at(&p, p.tpos, "unexpected '%.*s' after the expression", (int)p.tlen, p.s + p.tpos);
  return p.failed ? NULL : root;
}
