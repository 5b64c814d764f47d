/* Recursive-descent parser of StableHLO textual MLIR, both the pretty form (custom syntax per
 * op) and the generic form ("op"(operands) <{props}> ({regions}) {attrs} : type). */
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "import/stablehlo/shlo.h"
#include "ir/uop.h"

/* ---------------------------------------------------------------- arena */
struct shlo_chunk {
  shlo_chunk *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
};

void *shlo_alloc(shlo_arena *a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (!n) n = 16;
  shlo_chunk *c = a->head;
  if (!c || c->cap - c->used < n) {
    size_t cap = n > 65536 ? n : 65536;
    c = malloc(sizeof *c + cap);
    if (!c) return NULL;
    c->next = a->head;
    c->used = 0;
    c->cap = cap;
    a->head = c;
  }
  void *p = c->data + c->used;
  c->used += n;
  memset(p, 0, n);
  return p;
}

void shlo_arena_free(shlo_arena *a) {
  while (a->head) {
    shlo_chunk *n = a->head->next;
    free(a->head);
    a->head = n;
  }
}

/* ---------------------------------------------------------------- parser state */
typedef struct scope_entry {
  const char *name;
  int count, base;
} scope_entry;

typedef struct P {
  frit_ctx *ctx;
  const char *s, *end, *text;
  int failed;
  shlo_arena *a;
  int nvalues;
  scope_entry *scope;
  int nscope, capscope;
} P;

static void pos_of(const P *p, const char *at, int *line, int *col) {
  int l = 1, c = 1;
  for (const char *q = p->text; q < at && q < p->end; q++) {
    if (*q == '\n') l++, c = 1;
    else c++;
  }
  *line = l;
  *col = c;
}

static int fail(P *p, const char *fmt, ...) {
  if (p->failed) return 0;
  p->failed = 1;
  char msg[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  int line, col;
  pos_of(p, p->s, &line, &col);
  char near[40];
  size_t k = 0;
  for (const char *q = p->s; q < p->end && *q != '\n' && k < sizeof near - 1; q++) near[k++] = *q;
  near[k] = 0;
  frit_set_error(p->ctx, FRIT_ERR_PARSE, "stablehlo: line %d, column %d: %s (at \"%s\")", line, col, msg,
                 near);
  return 0;
}

static void *P_alloc(P *p, size_t n) {
  void *r = shlo_alloc(p->a, n);
  if (!r && !p->failed) {
    p->failed = 1;
    frit_set_error(p->ctx, FRIT_ERR_NOMEM, "stablehlo: out of memory");
  }
  return r;
}

static const char *dup_span(P *p, const char *b, const char *e) {
  char *r = P_alloc(p, (size_t)(e - b) + 1);
  if (r) memcpy(r, b, (size_t)(e - b));
  return r;
}

/* Growable arrays built in malloc memory, moved into the arena when complete. */
typedef struct vec {
  void *data;
  int n, cap;
  size_t elem;
} vec;

static int vec_push(P *p, vec *v, const void *x) {
  if (v->n == v->cap) {
    int cap = v->cap ? v->cap * 2 : 8;
    void *d = realloc(v->data, (size_t)cap * v->elem);
    if (!d) return fail(p, "out of memory");
    v->data = d;
    v->cap = cap;
  }
  memcpy((char *)v->data + (size_t)v->n * v->elem, x, v->elem);
  v->n++;
  return 1;
}

static void *vec_finish(P *p, vec *v) {
  void *r = NULL;
  if (v->n) {
    r = P_alloc(p, (size_t)v->n * v->elem);
    if (r) memcpy(r, v->data, (size_t)v->n * v->elem);
  }
  free(v->data);
  v->data = NULL;
  return r;
}

/* ---------------------------------------------------------------- lexing helpers */
static void ws(P *p) {
  if (p->s > p->end) p->s = p->end; /* a skip that ran one past the end */
  for (;;) {
    while (p->s < p->end && isspace((unsigned char)*p->s)) p->s++;
    if (p->s + 1 < p->end && p->s[0] == '/' && p->s[1] == '/') {
      while (p->s < p->end && *p->s != '\n') p->s++;
      continue;
    }
    return;
  }
}

static int at(P *p, const char *lit) {
  ws(p);
  size_t n = strlen(lit);
  return p->s <= p->end && (size_t)(p->end - p->s) >= n && memcmp(p->s, lit, n) == 0;
}

static int is_id_char(int c) { return isalnum(c) || c == '_' || c == '$' || c == '.' || c == '-'; }

/* Punctuation, or a keyword that must not run on into an identifier. */
static int eat(P *p, const char *lit) {
  if (!at(p, lit)) return 0;
  size_t n = strlen(lit);
  if (isalpha((unsigned char)lit[0]) && is_id_char((unsigned char)lit[n - 1]) && p->s + n < p->end && is_id_char((unsigned char)p->s[n]) &&
      p->s[n] != '-')
    return 0;
  p->s += n;
  return 1;
}

static int expect(P *p, const char *lit) {
  if (eat(p, lit)) return 1;
  return fail(p, "expected '%s'", lit);
}

static const char *ident(P *p) {
  ws(p);
  const char *b = p->s;
  if (p->s >= p->end || !(isalpha((unsigned char)*p->s) || *p->s == '_')) return NULL;
  while (p->s < p->end && (isalnum((unsigned char)*p->s) || *p->s == '_' || *p->s == '$' || *p->s == '.'))
    p->s++;
  return dup_span(p, b, p->s);
}

static int peek_ident_is(P *p, const char *w) {
  ws(p);
  size_t n = strlen(w);
  return (size_t)(p->end - p->s) >= n && memcmp(p->s, w, n) == 0 &&
         (p->s + n >= p->end || !(isalnum((unsigned char)p->s[n]) || p->s[n] == '_' || p->s[n] == '.'));
}

/* A name after % @ or ^: letters, digits, _ $ . - */
static const char *sigil_name(P *p, char sigil) {
  ws(p);
  if (p->s >= p->end || *p->s != sigil) return NULL;
  const char *b = ++p->s;
  if (p->s < p->end && *p->s == '"') { /* @"quoted" */
    p->s++;
    while (p->s < p->end && *p->s != '"') p->s++;
    const char *r = dup_span(p, b + 1, p->s);
    if (p->s < p->end) p->s++;
    return r;
  }
  while (p->s < p->end && (isalnum((unsigned char)*p->s) || *p->s == '_' || *p->s == '$' || *p->s == '.' ||
                           *p->s == '-'))
    p->s++;
  if (p->s == b) {
    fail(p, "a name must follow '%c'", sigil);
    return NULL;
  }
  return dup_span(p, b, p->s);
}

/* The text is not NUL-terminated: numbers are copied out (at most 63 chars) before strto*. */
static size_t number_copy(const P *p, const char *from, char *buf) {
  size_t n = 0;
  while (from + n < p->end && n < 63 && (isalnum((unsigned char)from[n]) || from[n] == '.' || from[n] == '-' || from[n] == '+'))
    n++;
  memcpy(buf, from, n);
  buf[n] = 0;
  return n;
}

static int parse_int(P *p, int64_t *v) {
  ws(p);
  char buf[64], *e;
  number_copy(p, p->s, buf);
  long long x = strtoll(buf, &e, 0);
  if (e == buf) return fail(p, "expected an integer");
  p->s += e - buf;
  *v = x;
  return 1;
}

static const char *string_lit(P *p) {
  ws(p);
  if (p->s >= p->end || *p->s != '"') return NULL;
  const char *b = ++p->s;
  while (p->s < p->end && *p->s != '"') {
    if (*p->s == '\\' && p->s + 1 < p->end) p->s++;
    p->s++;
  }
  if (p->s >= p->end) {
    fail(p, "unterminated string");
    return NULL;
  }
  const char *r = dup_span(p, b, p->s);
  p->s++;
  return r;
}

/* Skips a balanced <...> (the opening '<' already eaten); returns the end of its content. */
static const char *skip_angle(P *p) {
  int depth = 1;
  while (p->s < p->end) {
    char c = *p->s;
    if (c == '"') {
      p->s++;
      while (p->s < p->end && *p->s != '"') p->s++;
    } else if (c == '<') {
      depth++;
    } else if (c == '>' && p->s[-1] != '-') {
      if (--depth == 0) {
        const char *e = p->s;
        p->s++;
        return e;
      }
    }
    p->s++;
  }
  fail(p, "unbalanced '<'");
  return NULL;
}

/* ---------------------------------------------------------------- scopes */
static int scope_def(P *p, const char *name, int count) {
  if (p->nscope == p->capscope) {
    int cap = p->capscope ? p->capscope * 2 : 64;
    scope_entry *s = realloc(p->scope, (size_t)cap * sizeof *s);
    if (!s) return fail(p, "out of memory");
    p->scope = s;
    p->capscope = cap;
  }
  p->scope[p->nscope++] = (scope_entry){name, count, p->nvalues};
  p->nvalues += count;
  return p->nvalues - count;
}

static int value_ref(P *p) {
  const char *at_ = (ws(p), p->s);
  const char *name = sigil_name(p, '%');
  if (!name) return fail(p, "expected a value (%%name)"), -1;
  int64_t k = -1;
  if (p->s < p->end && *p->s == '#') {
    p->s++;
    if (!parse_int(p, &k)) return -1;
  }
  for (int i = p->nscope - 1; i >= 0; i--) {
    if (p->scope[i].name && strcmp(p->scope[i].name, name) == 0) {
      if (k < 0 && p->scope[i].count != 1 && p->scope[i].count != 0) {
        p->s = at_;
        return fail(p, "%%%s has %d results: name one with #", name, p->scope[i].count), -1;
      }
      if (k >= p->scope[i].count) {
        p->s = at_;
        return fail(p, "%%%s has %d results, #%lld asked", name, p->scope[i].count, (long long)k), -1;
      }
      return p->scope[i].base + (k < 0 ? 0 : (int)k);
    }
  }
  p->s = at_;
  return fail(p, "undefined value %%%s", name), -1;
}

/* ---------------------------------------------------------------- types */
static frit_dtype elem_type(const char *s, size_t n) {
  static const struct {
    const char *name;
    frit_dtype dt;
  } tab[] = {{"i1", FRIT_BOOL},   {"i8", FRIT_I8},     {"i16", FRIT_I16},   {"i32", FRIT_I32},
             {"i64", FRIT_I64},   {"si8", FRIT_I8},    {"si16", FRIT_I16},  {"si32", FRIT_I32},
             {"si64", FRIT_I64},  {"ui8", FRIT_U8},    {"ui16", FRIT_U16},  {"ui32", FRIT_U32},
             {"ui64", FRIT_U64},  {"f16", FRIT_F16},   {"bf16", FRIT_BF16}, {"f32", FRIT_F32},
             {"f64", FRIT_F64},   {"complex<f32>", FRIT_C64}, {"complex<f64>", FRIT_C128},
             {"index", FRIT_I64}};
  for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
    if (strlen(tab[i].name) == n && memcmp(tab[i].name, s, n) == 0) return tab[i].dt;
  return FRIT_VOID;
}

static int parse_type(P *p, shlo_type *t) {
  ws(p);
  const char *b = p->s;
  memset(t, 0, sizeof *t);
  if (eat(p, "tensor<")) {
    int nd = 0;
    for (;;) {
      ws(p);
      if (*p->s == '?' || isdigit((unsigned char)*p->s)) {
        int64_t d = -1;
        if (*p->s == '?') p->s++;
        else if (!parse_int(p, &d)) return 0;
        if (p->s >= p->end || *p->s != 'x') return fail(p, "expected 'x' in a tensor type");
        p->s++;
        if (nd == FRIT_MAX_DIMS) return fail(p, "tensor type of more than %d dims", FRIT_MAX_DIMS);
        t->dims[nd++] = d;
      } else if (*p->s == '*') {
        p->s++;
        if (p->s < p->end && *p->s == 'x') p->s++;
        nd = -1;
      } else {
        break;
      }
    }
    const char *eb = p->s;
    while (p->s < p->end && *p->s != '>' && *p->s != ',') {
      if (*p->s == '<') { /* complex<f32> */
        while (p->s < p->end && *p->s != '>') p->s++;
      }
      if (p->s < p->end) p->s++;
    }
    t->ndim = nd;
    t->dt = elem_type(eb, (size_t)(p->s - eb));
    if (p->s < p->end && *p->s == ',') { /* an encoding (bounds): skipped */
      p->s++;
      if (!skip_angle(p)) return 0;
    } else if (!expect(p, ">")) {
      return 0;
    }
  } else if (eat(p, "tuple<") || eat(p, "!stablehlo.token") || eat(p, "!")) {
    if (p->s[-1] == '<' && !skip_angle(p)) return 0;
    while (p->s < p->end && is_id_char((unsigned char)*p->s)) p->s++;
    t->dt = FRIT_VOID;
    t->ndim = -1;
  } else {
    const char *e = p->s;
    while (e < p->end && (isalnum((unsigned char)*e) || *e == '_')) e++;
    t->dt = elem_type(p->s, (size_t)(e - p->s));
    if (t->dt == FRIT_VOID || e == p->s) return fail(p, "expected a type");
    p->s = e; /* a bare element type: a 0-d value */
    t->ndim = 0;
  }
  t->text = dup_span(p, b, p->s);
  return !p->failed;
}

/* "(t, ...)" or one type; *n types into a new array. */
static int parse_type_list(P *p, shlo_type **out, int *n, int allow_attrs) {
  vec v = {0};
  v.elem = sizeof(shlo_type);
  int paren = eat(p, "(");
  if (!(paren && eat(p, ")"))) {
    do {
      shlo_type t;
      if (!parse_type(p, &t)) break;
      vec_push(p, &v, &t);
      if (allow_attrs && at(p, "{")) { /* result attributes: skipped */
        int depth = 0;
        do {
          if (*p->s == '{') depth++;
          if (*p->s == '}') depth--;
          p->s++;
        } while (p->s < p->end && depth > 0);
      }
    } while (paren && eat(p, ","));
    if (paren) expect(p, ")");
  }
  *n = v.n;
  *out = vec_finish(p, &v);
  return !p->failed;
}

/* ---------------------------------------------------------------- attribute values */
static shlo_attr *new_attr(P *p, shlo_attr_kind k) {
  shlo_attr *a = P_alloc(p, sizeof *a);
  if (a) a->kind = k;
  return a;
}

static shlo_attr *parse_value(P *p);

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* One scalar of a dense literal (or a nested list of them), appended to the value vectors. */
static int dense_elems(P *p, vec *fv, vec *iv, vec *im, int *has_im) {
  ws(p);
  if (eat(p, "[")) {
    if (eat(p, "]")) return 1;
    do {
      if (!dense_elems(p, fv, iv, im, has_im)) return 0;
    } while (eat(p, ","));
    return expect(p, "]");
  }
  double f = 0, g = 0;
  int64_t i = 0;
  if (eat(p, "(")) { /* complex (re, im) */
    shlo_attr *re = parse_value(p);
    expect(p, ",");
    shlo_attr *imv = parse_value(p);
    expect(p, ")");
    if (!re || !imv) return 0;
    f = re->f;
    g = imv->f;
    i = (int64_t)f;
    *has_im = 1;
  } else if (eat(p, "true")) {
    f = 1, i = 1;
  } else if (eat(p, "false")) {
    f = 0, i = 0;
  } else {
    shlo_attr *x = parse_value(p);
    if (!x) return 0;
    if (x->kind != SA_INT && x->kind != SA_FLOAT) return fail(p, "expected a number in a dense literal");
    f = x->f, i = x->kind == SA_INT ? x->i : (int64_t)x->f;
    if (x->kind == SA_INT && x->s) { /* a hex literal: the bits of a float */
      shlo_attr *h = x;
      f = 0;
      i = h->i;
      g = 1e300; /* marker: bits, fixed up by the builder through iv */
    }
  }
  vec_push(p, fv, &f);
  vec_push(p, iv, &i);
  vec_push(p, im, &g);
  return 1;
}

static shlo_attr *parse_dense(P *p) {
  shlo_attr *a = new_attr(p, SA_DENSE);
  if (!a) return NULL;
  ws(p);
  if (*p->s == '"') { /* "0x..." raw bytes */
    const char *str = string_lit(p);
    if (!str) return NULL;
    if (strncmp(str, "0x", 2) != 0 || strlen(str) % 2) return fail(p, "expected a hex string"), NULL;
    size_t n = (strlen(str) - 2) / 2;
    uint8_t *bytes = P_alloc(p, n ? n : 1);
    if (!bytes) return NULL;
    for (size_t k = 0; k < n; k++) {
      int hi = hexval(str[2 + 2 * k]), lo = hexval(str[3 + 2 * k]);
      if (hi < 0 || lo < 0) return fail(p, "bad hex digit in a dense literal"), NULL;
      bytes[k] = (uint8_t)(hi * 16 + lo);
    }
    a->hex = bytes;
    a->hexlen = n;
  } else {
    vec fv = {0}, iv = {0}, im = {0};
    fv.elem = im.elem = sizeof(double);
    iv.elem = sizeof(int64_t);
    int has_im = 0;
    dense_elems(p, &fv, &iv, &im, &has_im);
    a->n = fv.n;
    a->fv = vec_finish(p, &fv);
    a->iv = vec_finish(p, &iv);
    a->imv = vec_finish(p, &im);
    if (!has_im) {
      /* imv doubles as the "bits" marker of hex scalars: keep only when one is set */
      int bits = 0;
      for (int k = 0; k < a->n; k++) bits |= a->imv[k] == 1e300;
      if (!bits) a->imv = NULL;
    }
  }
  if (!expect(p, ">")) return NULL;
  if (eat(p, ":") && !parse_type(p, &a->type)) return NULL;
  return p->failed ? NULL : a;
}

/* dot_general's "[1] x [0]" and convolution's "[b, 0, 1, f]x[o, i, 0, 1]->[b, 0, 1, f]": the
 * lists joined by x and -> become one list of lists (marked "group"). */
static shlo_attr *group_lists(P *p, shlo_attr *v) {
  shlo_attr *g = NULL;
  while (v && v->kind == SA_LIST && (eat(p, "x") || eat(p, "->"))) {
    shlo_attr *w = parse_value(p);
    if (!w) return NULL;
    if (!g) {
      g = new_attr(p, SA_LIST);
      if (!g || !(g->items = P_alloc(p, 8 * sizeof *g->items))) return NULL;
      g->s = "group";
      g->items[g->n++] = v;
    }
    if (g->n == 8) return fail(p, "too many joined lists"), NULL;
    g->items[g->n++] = w;
  }
  return g ? g : v;
}

static shlo_attr *parse_dict_body(P *p, const char *close) {
  shlo_attr *a = new_attr(p, SA_DICT);
  if (!a) return NULL;
  vec keys = {0}, vals = {0};
  keys.elem = vals.elem = sizeof(void *);
  int until_end = !close[0]; /* the inside of #x<...>: up to the end of the text window */
  if (until_end ? (ws(p), p->s < p->end) : !eat(p, close)) {
    do {
      ws(p);
      const char *k = *p->s == '"' ? string_lit(p) : ident(p);
      if (!k) {
        fail(p, "expected an attribute name");
        break;
      }
      shlo_attr *v;
      if (eat(p, "=")) {
        v = group_lists(p, parse_value(p));
      } else {
        v = new_attr(p, SA_UNIT);
      }
      if (!v) break;
      vec_push(p, &keys, &k);
      vec_push(p, &vals, &v);
    } while (eat(p, ","));
    if (!until_end) expect(p, close);
  }
  a->n = keys.n;
  a->keys = vec_finish(p, &keys);
  a->items = vec_finish(p, &vals);
  return p->failed ? NULL : a;
}

/* #dialect<...> and #dialect.name<...>: an enum word, a struct of key = value, or raw text. */
static shlo_attr *parse_hash(P *p) {
  p->s++;
  const char *b = p->s;
  while (p->s < p->end && is_id_char((unsigned char)*p->s)) p->s++;
  const char *dialect = dup_span(p, b, p->s);
  if (!eat(p, "<")) {
    shlo_attr *a = new_attr(p, SA_WORD);
    if (a) a->s = dialect;
    return a;
  }
  const char *cb = p->s;
  const char *ce = skip_angle(p);
  if (!ce) return NULL;
  const char *after = p->s;
  int has_eq = 0;
  for (const char *q = cb; q < ce; q++) has_eq |= *q == '=';
  shlo_attr *a;
  if (has_eq && *cb != '[') {
    const char *save_end = p->end;
    p->s = cb;
    p->end = ce;
    a = parse_dict_body(p, "");
    p->end = save_end;
    if (!a) return NULL;
  } else if (*cb != '[') { /* "precision DEFAULT", "comparison_direction LT": the last word */
    const char *q = ce;
    while (q > cb && isspace((unsigned char)q[-1])) q--;
    const char *we = q;
    while (q > cb && is_id_char((unsigned char)q[-1])) q--;
    a = new_attr(p, SA_WORD);
    if (a) a->s = dup_span(p, q, we);
  } else {
    a = new_attr(p, SA_RAW);
    if (a) a->s = dup_span(p, cb, ce);
  }
  p->s = after;
  return a;
}

static shlo_attr *parse_number(P *p) {
  ws(p);
  const char *b = p->s;
  int neg = *p->s == '-';
  const char *q = p->s + neg;
  char buf[64];
  if (q + 1 < p->end && q[0] == '0' && (q[1] == 'x' || q[1] == 'X')) {
    char *e;
    number_copy(p, q, buf);
    unsigned long long v = strtoull(buf, &e, 16);
    p->s = q + (e - buf);
    shlo_attr *a = new_attr(p, SA_INT);
    if (a) {
      a->i = neg ? -(int64_t)v : (int64_t)v;
      a->f = (double)a->i;
      a->s = "hex";
    }
    return a;
  }
  char *e1, *e2;
  number_copy(p, b, buf);
  long long iv = strtoll(buf, &e1, 10);
  double fv = strtod(buf, &e2);
  if (e2 == buf) return fail(p, "expected a value"), NULL;
  shlo_attr *a = new_attr(p, e2 > e1 ? SA_FLOAT : SA_INT);
  if (!a) return NULL;
  a->i = iv;
  a->f = fv;
  p->s = b + ((e2 > e1 ? e2 : e1) - buf);
  return a;
}

static shlo_attr *parse_value(P *p) {
  ws(p);
  if (p->failed || p->s >= p->end) return fail(p, "expected a value"), NULL;
  char c = *p->s;
  shlo_attr *a = NULL;
  if (c == '[') {
    p->s++;
    a = new_attr(p, SA_LIST);
    vec v = {0};
    v.elem = sizeof(void *);
    if (!eat(p, "]")) {
      do {
        shlo_attr *x = parse_value(p);
        if (!x) break;
        vec_push(p, &v, &x);
      } while (eat(p, ","));
      expect(p, "]");
    }
    if (a) {
      a->n = v.n;
      a->items = vec_finish(p, &v);
    } else {
      free(v.data);
    }
  } else if (c == '{') {
    p->s++;
    a = parse_dict_body(p, "}");
  } else if (c == '"') {
    a = new_attr(p, SA_STRING);
    if (a) a->s = string_lit(p);
  } else if (c == '@') {
    a = new_attr(p, SA_SYMBOL);
    if (a) a->s = sigil_name(p, '@');
  } else if (c == '#') {
    a = parse_hash(p);
  } else if (c == '(') {
    a = new_attr(p, SA_FUNCTYPE);
    if (a && parse_type_list(p, &a->tin, &a->nin, 1) && expect(p, "->"))
      parse_type_list(p, &a->tout, &a->nout, 1);
  } else if (eat(p, "dense<")) {
    a = parse_dense(p);
  } else if (eat(p, "dense_resource<")) {
    return fail(p, "dense_resource constants (stored blobs) are not supported: print the module with "
                   "its constants inline"), NULL;
  } else if (eat(p, "array<")) {
    a = new_attr(p, SA_LIST);
    shlo_type t;
    if (!a || !parse_type(p, &t)) return NULL;
    vec v = {0};
    v.elem = sizeof(void *);
    if (eat(p, ":")) {
      do {
        shlo_attr *x = at(p, "true") || at(p, "false") ? parse_value(p) : parse_number(p);
        if (!x) break;
        vec_push(p, &v, &x);
      } while (eat(p, ","));
    }
    expect(p, ">");
    a->n = v.n;
    a->items = vec_finish(p, &v);
  } else if (c == '-' || isdigit((unsigned char)c)) {
    a = parse_number(p);
  } else if (at(p, "tensor<")) {
    a = new_attr(p, SA_TYPE);
    if (a) parse_type(p, &a->type);
  } else if (eat(p, "true") || eat(p, "false")) {
    a = new_attr(p, SA_BOOL);
    if (a) a->i = a->f = p->s[-1] == 'e' && p->s[-2] == 'u';
  } else if (isalpha((unsigned char)c) || c == '_') {
    a = new_attr(p, SA_WORD);
    if (a) a->s = ident(p);
  } else {
    return fail(p, "expected an attribute value"), NULL;
  }
  if (!a || p->failed) return NULL;
  if ((a->kind == SA_INT || a->kind == SA_FLOAT || a->kind == SA_BOOL) && at(p, ":") &&
      !at(p, "::")) {
    /* "1 : i64": a typed scalar; but not the op's trailing ": type" (the caller decides) */
    const char *save = p->s;
    p->s++;
    ws(p);
    shlo_type t;
    if ((isalpha((unsigned char)*p->s)) && !at(p, "tensor<") && parse_type(p, &t) && t.dt != FRIT_VOID) {
      a->type = t;
    } else {
      p->failed = 0;
      frit_clear_error(p->ctx);
      p->s = save;
    }
  }
  return a;
}

/* ---------------------------------------------------------------- ops and regions */
typedef struct op_build {
  vec opnd, keys, vals, words, regions, pending;
} op_build;

static shlo_region *parse_region(P *p, const char *const *arg_names, const shlo_type *arg_types, int nargs);

static void add_attr(P *p, op_build *b, const char *k, shlo_attr *v) {
  vec_push(p, &b->keys, &k);
  vec_push(p, &b->vals, &v);
}

static void merge_dict(P *p, op_build *b, shlo_attr *d) {
  if (!d) return;
  for (int i = 0; i < d->n; i++) add_attr(p, b, d->keys[i], d->items[i]);
}

/* "(%a, %b)" operand lists; also "(%x init: %y)" (reduce) and "(%it = %x, ...)" (while). */
static void paren_operands(P *p, op_build *b, vec *inits) {
  if (eat(p, ")")) return;
  do {
    ws(p);
    if (p->s < p->end && (isalpha((unsigned char)*p->s) || *p->s == '_')) { /* an attribute: k = 3 */
      const char *k = ident(p);
      if (!k || !expect(p, "=")) return;
      shlo_attr *v = parse_value(p);
      if (v) add_attr(p, b, k, v);
      continue;
    }
    if (*p->s != '%') {
      fail(p, "expected an operand");
      return;
    }
    const char *save = p->s;
    const char *nm = sigil_name(p, '%');
    if (eat(p, "=")) { /* while: %iterArg = %init */
      vec_push(p, &b->pending, &nm);
    } else {
      p->s = save;
    }
    int v = value_ref(p);
    if (v < 0) return;
    if (eat(p, "init")) {
      expect(p, ":");
      int w = value_ref(p);
      if (w < 0) return;
      vec_push(p, inits, &w);
    }
    vec_push(p, &b->opnd, &v);
  } while (eat(p, ","));
  expect(p, ")");
}

static int parse_slice_ranges(P *p, shlo_op *op) {
  vec v = {0};
  v.elem = sizeof(int64_t);
  if (!eat(p, "]")) {
    do {
      int64_t s = 0, l = 0, st = 1;
      if (!parse_int(p, &s) || !expect(p, ":") || !parse_int(p, &l)) break;
      if (eat(p, ":") && !parse_int(p, &st)) break;
      vec_push(p, &v, &s);
      vec_push(p, &v, &l);
      vec_push(p, &v, &st);
    } while (eat(p, ","));
    expect(p, "]");
  }
  op->nslice = v.n / 3;
  op->slice = vec_finish(p, &v);
  return !p->failed;
}

static int is_region_word(P *p) {
  static const char *const words[] = {"cond", "do", "reducer", "else", "then", "body", "comparator"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
    if (peek_ident_is(p, words[i])) {
      const char *save = p->s;
      p->s += strlen(words[i]);
      ws(p);
      int ok = p->s < p->end && (*p->s == '{' || *p->s == '(');
      p->s = save;
      if (ok) return 1;
    }
  }
  return 0;
}

/* A region of the pretty form after the types: "cond {...}", "reducer(%a: t, %b: t) (...) {...}". */
static shlo_region *pretty_region(P *p, op_build *b, const shlo_op *op) {
  ident(p);
  const char *names[2 * FRIT_MAX_DIMS + 8];
  shlo_type types[2 * FRIT_MAX_DIMS + 8];
  int n = 0;
  if (b->pending.n) { /* while: the iteration arguments, typed by the op's types */
    n = b->pending.n;
    if (n > (int)(sizeof names / sizeof names[0]) || n != op->ntout) {
      fail(p, "while: %d iteration arguments, %d types", n, op->ntout);
      return NULL;
    }
    for (int i = 0; i < n; i++) {
      names[i] = ((const char **)b->pending.data)[i];
      types[i] = op->tout[i];
    }
    return parse_region(p, names, types, n);
  }
  const char *lhs[FRIT_MAX_DIMS + 4], *rhs[FRIT_MAX_DIMS + 4];
  shlo_type tl[FRIT_MAX_DIMS + 4], tr[FRIT_MAX_DIMS + 4];
  int groups = 0;
  while (eat(p, "(")) { /* (%lhs: t, %rhs: t) per operand */
    if (groups == FRIT_MAX_DIMS + 4) return fail(p, "too many reducer groups"), NULL;
    lhs[groups] = sigil_name(p, '%');
    if (!expect(p, ":") || !parse_type(p, &tl[groups]) || !expect(p, ",")) return NULL;
    rhs[groups] = sigil_name(p, '%');
    if (!expect(p, ":") || !parse_type(p, &tr[groups]) || !expect(p, ")")) return NULL;
    groups++;
  }
  for (int g = 0; g < groups; g++) names[n] = lhs[g], types[n++] = tl[g];
  for (int g = 0; g < groups; g++) names[n] = rhs[g], types[n++] = tr[g];
  return parse_region(p, names, types, n);
}

static shlo_op *parse_op(P *p) {
  ws(p);
  shlo_op *op = P_alloc(p, sizeof *op);
  if (!op) return NULL;
  pos_of(p, p->s, &op->line, &op->col);
  /* results */
  const char *res_names[64];
  int res_counts[64], nresn = 0, nres = 0;
  if (at(p, "%")) {
    do {
      if (nresn == 64) return fail(p, "too many result names"), NULL;
      res_names[nresn] = sigil_name(p, '%');
      int64_t cnt = 1;
      if (p->s < p->end && *p->s == ':' && !parse_int(p, (p->s++, &cnt))) return NULL;
      if (cnt < 1 || cnt > 4096) return fail(p, "a result count of %lld", (long long)cnt), NULL;
      res_counts[nresn++] = (int)cnt;
      nres += (int)cnt;
    } while (eat(p, ","));
    if (!expect(p, "=")) return NULL;
  }
  op_build b;
  memset(&b, 0, sizeof b);
  b.opnd.elem = sizeof(int);
  b.keys.elem = b.vals.elem = b.words.elem = b.regions.elem = b.pending.elem = sizeof(void *);
  vec inits = {0};
  inits.elem = sizeof(int);
  ws(p);
  int generic = *p->s == '"';
  if (generic) {
    op->name = string_lit(p);
    if (!expect(p, "(")) goto out;
    paren_operands(p, &b, &inits);
    if (eat(p, "<{")) merge_dict(p, &b, parse_dict_body(p, "}>"));
    if (at(p, "(") && (p->s++, at(p, "{"))) {
      do {
        shlo_region *r = parse_region(p, NULL, NULL, 0);
        if (!r) goto out;
        vec_push(p, &b.regions, &r);
      } while (eat(p, ","));
      if (!expect(p, ")")) goto out;
    }
    if (eat(p, "{")) merge_dict(p, &b, parse_dict_body(p, "}"));
    if (!expect(p, ":")) goto out;
    shlo_attr *ft = parse_value(p);
    if (!ft || ft->kind != SA_FUNCTYPE) {
      fail(p, "expected the op's function type");
      goto out;
    }
    op->ntin = ft->nin, op->tin = ft->tin, op->ntout = ft->nout, op->tout = ft->tout;
  } else {
    const char *nm = ident(p);
    if (!nm) {
      fail(p, "expected an op");
      goto out;
    }
    if (!strcmp(nm, "call")) nm = "func.call";
    else if (!strcmp(nm, "return")) nm = "func.return";
    op->name = nm;
    for (;;) {
      /* the pretty form writes an op's operands and attributes on one line */
      const char *q = p->s;
      while (q < p->end && (*q == ' ' || *q == '\t')) q++;
      if (q < p->end && (*q == '\n' || *q == '\r')) break;
      ws(p);
      if (p->failed || p->s >= p->end) break;
      char c = *p->s;
      if (c == '%') {
        int v = value_ref(p);
        if (v >= 0) vec_push(p, &b.opnd, &v);
      } else if (c == ',') {
        p->s++;
      } else if (c == '(') {
        p->s++;
        paren_operands(p, &b, &inits);
      } else if (c == '[' && strstr(op->name, "slice")) {
        p->s++;
        parse_slice_ranges(p, op);
      } else if (at(p, "<{")) {
        p->s += 2;
        merge_dict(p, &b, parse_dict_body(p, "}>"));
      } else if (c == '{') {
        p->s++;
        merge_dict(p, &b, parse_dict_body(p, "}"));
      } else if (c == '@') {
        op->callee = sigil_name(p, '@');
      } else if (c == ':' || c == '}') {
        break;
      } else if (isalpha((unsigned char)c) || c == '_') {
        const char *save = p->s;
        const char *w = ident(p);
        if (!w) break;
        if (is_region_word(p) || !strcmp(w, "func.return") || !strcmp(w, "stablehlo.return")) {
          p->s = save;
          break;
        }
        if (p->s < p->end && *p->s == '<') { /* dense<...>, array<...>: the op's literal */
          p->s = save;
          shlo_attr *v = parse_value(p);
          if (v) add_attr(p, &b, "value", v);
          continue;
        }
        if (eat(p, "=")) {
          shlo_attr *v = group_lists(p, parse_value(p));
          if (v) add_attr(p, &b, w, v);
        } else {
          vec_push(p, &b.words, &w);
        }
      } else {
        fail(p, "unexpected '%c' in %s", c, op->name);
        break;
      }
    }
    if (p->failed) goto out;
    if (eat(p, ":")) {
      ws(p);
      if (*p->s == '(') {
        shlo_attr *ft = parse_value(p);
        if (!ft || ft->kind != SA_FUNCTYPE) {
          fail(p, "expected the op's type");
          goto out;
        }
        op->ntin = ft->nin, op->tin = ft->tin, op->ntout = ft->nout, op->tout = ft->tout;
      } else {
        vec tv = {0};
        tv.elem = sizeof(shlo_type);
        do {
          shlo_type t;
          if (!parse_type(p, &t)) break;
          vec_push(p, &tv, &t);
        } while (eat(p, ","));
        op->ntout = tv.n;
        op->tout = vec_finish(p, &tv);
        if (eat(p, "->")) { /* "t -> t" (chlo ops): the types were the inputs' */
          op->ntin = op->ntout, op->tin = op->tout;
          if (!parse_type_list(p, &op->tout, &op->ntout, 0)) goto out;
        }
      }
    } else {
      /* "stablehlo.constant dense<...> : type": the literal carried the type */
      for (int i = 0; i < b.keys.n; i++) {
        shlo_attr *v = ((shlo_attr **)b.vals.data)[i];
        if (v->kind == SA_DENSE && v->type.text) op->ntout = 1, op->tout = &v->type;
      }
    }
    while (!p->failed && (is_region_word(p) || (b.regions.n && at(p, "{")))) {
      shlo_region *r = pretty_region(p, &b, op);
      if (!r) goto out;
      vec_push(p, &b.regions, &r);
    }
  }
  if (p->failed) goto out;
  /* inits of a pretty reduce follow the inputs */
  for (int i = 0; i < inits.n; i++) vec_push(p, &b.opnd, &((int *)inits.data)[i]);
  op->ninit = inits.n;
  /* results are defined after the op's regions (which cannot see them) */
  int base = -1;
  for (int i = 0; i < nresn; i++) {
    int bb = scope_def(p, res_names[i], res_counts[i]);
    if (i == 0) base = bb;
  }
  op->nres = nres;
  op->res0 = base;
out:
  free(inits.data);
  op->nopnd = b.opnd.n;
  op->opnd = vec_finish(p, &b.opnd);
  op->nattr = b.keys.n;
  op->akeys = vec_finish(p, &b.keys);
  op->avals = vec_finish(p, &b.vals);
  op->nword = b.words.n;
  op->words = vec_finish(p, &b.words);
  op->nregion = b.regions.n;
  op->regions = vec_finish(p, &b.regions);
  free(b.pending.data);
  return p->failed ? NULL : op;
}

static shlo_region *parse_region(P *p, const char *const *arg_names, const shlo_type *arg_types, int nargs) {
  if (!expect(p, "{")) return NULL;
  shlo_region *r = P_alloc(p, sizeof *r);
  if (!r) return NULL;
  int mark = p->nscope;
  vec args = {0}, types = {0};
  args.elem = sizeof(int);
  types.elem = sizeof(shlo_type);
  for (int i = 0; i < nargs; i++) {
    int v = scope_def(p, arg_names[i], 1);
    vec_push(p, &args, &v);
    vec_push(p, &types, &arg_types[i]);
  }
  if (at(p, "^")) { /* ^bb0(%a: t, ...): */
    sigil_name(p, '^');
    if (eat(p, "(") && !eat(p, ")")) {
      do {
        const char *nm = sigil_name(p, '%');
        shlo_type t;
        if (!nm || !expect(p, ":") || !parse_type(p, &t)) break;
        if (at(p, "loc(")) { /* a location: skipped */
          while (p->s < p->end && *p->s != ')') p->s++;
          p->s++;
        }
        int v = scope_def(p, nm, 1);
        vec_push(p, &args, &v);
        vec_push(p, &types, &t);
      } while (eat(p, ","));
      expect(p, ")");
    }
    expect(p, ":");
  }
  vec ops = {0};
  ops.elem = sizeof(void *);
  while (!p->failed && !eat(p, "}")) {
    if (p->s >= p->end) {
      fail(p, "unterminated region");
      break;
    }
    shlo_op *op = parse_op(p);
    if (!op) break;
    vec_push(p, &ops, &op);
  }
  p->nscope = mark;
  r->nargs = args.n;
  r->args = vec_finish(p, &args);
  r->arg_types = vec_finish(p, &types);
  r->nops = ops.n;
  r->ops = vec_finish(p, &ops);
  return p->failed ? NULL : r;
}

/* ---------------------------------------------------------------- functions and the module */
static const char *result_info(const shlo_attr *d) {
  shlo_attr *ri = d ? shlo_dict_get(d, "jax.result_info") : NULL;
  return ri && ri->kind == SA_STRING ? ri->s : NULL;
}

static shlo_func *pretty_func(P *p) {
  shlo_func *f = P_alloc(p, sizeof *f);
  if (!f) return NULL;
  pos_of(p, p->s, &f->line, &f->col);
  p->nvalues = 0;
  p->nscope = 0; /* a function sees only its own values */
  if (eat(p, "public")) f->is_public = 1;
  else eat(p, "private");
  f->name = sigil_name(p, '@');
  if (!f->name || !expect(p, "(")) return NULL;
  const char *names[256];
  vec types = {0};
  types.elem = sizeof(shlo_type);
  int n = 0;
  if (!eat(p, ")")) {
    do {
      if (n == 256) return fail(p, "more than 256 arguments"), NULL;
      names[n] = sigil_name(p, '%');
      shlo_type t;
      if (!names[n] || !expect(p, ":") || !parse_type(p, &t)) break;
      if (eat(p, "{")) parse_dict_body(p, "}");
      if (at(p, "loc(")) {
        while (p->s < p->end && *p->s != ')') p->s++;
        p->s++;
      }
      vec_push(p, &types, &t);
      n++;
    } while (eat(p, ","));
    expect(p, ")");
  }
  f->nargs = n;
  f->arg_types = vec_finish(p, &types);
  if (p->failed) return NULL;
  vec rt = {0}, rn = {0};
  rt.elem = sizeof(shlo_type);
  rn.elem = sizeof(void *);
  if (eat(p, "->")) {
    int paren = eat(p, "(");
    if (!(paren && eat(p, ")"))) {
      do {
        shlo_type t;
        if (!parse_type(p, &t)) break;
        const char *info = NULL;
        if (paren && eat(p, "{")) info = result_info(parse_dict_body(p, "}"));
        vec_push(p, &rt, &t);
        vec_push(p, &rn, &info);
      } while (paren && eat(p, ","));
      if (paren) expect(p, ")");
    }
  }
  f->nres = rt.n;
  f->res_types = vec_finish(p, &rt);
  f->res_names = vec_finish(p, &rn);
  if (eat(p, "attributes")) {
    expect(p, "{");
    parse_dict_body(p, "}");
  }
  if (p->failed) return NULL;
  f->body = parse_region(p, names, f->arg_types, n);
  f->nvalues = p->nvalues;
  return p->failed ? NULL : f;
}

/* A generic "func.func" op, parsed as an op: its name, types and body come from the props. */
static shlo_func *generic_func(P *p, shlo_op *op) {
  shlo_func *f = P_alloc(p, sizeof *f);
  if (!f) return NULL;
  f->line = op->line, f->col = op->col;
  shlo_attr *nm = shlo_attr_get(op, "sym_name"), *ft = shlo_attr_get(op, "function_type");
  shlo_attr *vis = shlo_attr_get(op, "sym_visibility"), *ra = shlo_attr_get(op, "res_attrs");
  if (!nm || nm->kind != SA_STRING || !ft || ft->kind != SA_FUNCTYPE || op->nregion != 1)
    return fail(p, "func.func without sym_name, function_type or body"), NULL;
  f->name = nm->s;
  f->is_public = !vis || (vis->kind == SA_STRING && !strcmp(vis->s, "public"));
  f->nargs = ft->nin, f->arg_types = ft->tin;
  f->nres = ft->nout, f->res_types = ft->tout;
  f->res_names = P_alloc(p, (size_t)(f->nres ? f->nres : 1) * sizeof *f->res_names);
  if (!f->res_names) return NULL;
  for (int i = 0; ra && ra->kind == SA_LIST && i < ra->n && i < f->nres; i++)
    f->res_names[i] = ra->items[i]->kind == SA_DICT ? result_info(ra->items[i]) : NULL;
  f->body = op->regions[0];
  f->nvalues = p->nvalues;
  if (f->body->nargs != f->nargs) return fail(p, "func.func @%s: %d block arguments for %d inputs", f->name,
                                              f->body->nargs, f->nargs), NULL;
  return f;
}

static int module_items(P *p, vec *funcs, const char *close);

static int module_item(P *p, vec *funcs) {
  ws(p);
  if (eat(p, "module")) {
    if (at(p, "@")) sigil_name(p, '@');
    if (eat(p, "attributes")) {
      expect(p, "{");
      parse_dict_body(p, "}");
    }
    if (!expect(p, "{")) return 0;
    return module_items(p, funcs, "}");
  }
  if (eat(p, "func.func")) {
    shlo_func *f = pretty_func(p);
    return f && vec_push(p, funcs, &f);
  }
  if (at(p, "\"builtin.module\"")) {
    string_lit(p);
    expect(p, "(");
    expect(p, ")");
    if (eat(p, "<{")) parse_dict_body(p, "}>");
    if (!expect(p, "(") || !expect(p, "{")) return 0;
    if (!module_items(p, funcs, "}")) return 0;
    expect(p, ")");
    if (eat(p, "{")) parse_dict_body(p, "}");
    if (expect(p, ":")) parse_value(p);
    return !p->failed;
  }
  if (at(p, "\"func.func\"")) {
    p->nvalues = 0;
    p->nscope = 0;
    shlo_op *op = parse_op(p);
    shlo_func *f = op ? generic_func(p, op) : NULL;
    return f && vec_push(p, funcs, &f);
  }
  if (at(p, "#")) { /* #loc = loc(...) aliases and the like: skipped to the end of the line */
    while (p->s < p->end && *p->s != '\n') p->s++;
    return 1;
  }
  return fail(p, "expected a module or a func.func");
}

static int module_items(P *p, vec *funcs, const char *close) {
  while (!p->failed) {
    ws(p);
    if (close ? eat(p, close) : p->s >= p->end) return 1;
    if (p->s >= p->end) return fail(p, "unexpected end of text (a '}' is missing)");
    if (!module_item(p, funcs)) return 0;
  }
  return 0;
}

frit_status shlo_parse(frit_ctx *ctx, const char *text, size_t len, shlo_module *m) {
  /* a private copy with NUL padding: a skip that steps one past the end reads a 0, never beyond
   * (the caller's text need not be NUL-terminated) */
  char *copy = malloc(len + 8);
  if (!copy) return frit_set_error(ctx, FRIT_ERR_NOMEM, "stablehlo: out of memory");
  memcpy(copy, text, len);
  memset(copy + len, 0, 8);
  P p;
  memset(&p, 0, sizeof p);
  p.ctx = ctx;
  p.s = p.text = copy;
  p.end = copy + len;
  p.a = &m->arena;
  vec funcs = {0};
  funcs.elem = sizeof(void *);
  module_items(&p, &funcs, NULL);
  m->nfuncs = funcs.n;
  m->funcs = vec_finish(&p, &funcs);
  free(p.scope);
  if (!p.failed && !m->nfuncs) {
    p.s = p.end;
    fail(&p, "no func.func in the text");
  }
  free(copy);
  return p.failed ? frit_last_status(ctx) : FRIT_OK;
}

/* ---------------------------------------------------------------- lookups */
shlo_attr *shlo_dict_get(const shlo_attr *d, const char *key) {
  if (!d || d->kind != SA_DICT) return NULL;
  for (int i = 0; i < d->n; i++)
    if (!strcmp(d->keys[i], key)) return d->items[i];
  return NULL;
}

shlo_attr *shlo_attr_get(const shlo_op *op, const char *key) {
  for (int i = 0; i < op->nattr; i++)
    if (!strcmp(op->akeys[i], key)) return op->avals[i];
  return NULL;
}

int shlo_attr_ints(const shlo_attr *a, int64_t *out, int max) {
  if (!a) return -1;
  if (a->kind == SA_INT) {
    if (max < 1) return -1;
    out[0] = a->i;
    return 1;
  }
  if (a->kind == SA_DENSE && a->iv) {
    int64_t count = 1;
    for (int d = 0; d < a->type.ndim; d++) count *= a->type.dims[d];
    if (a->n != count && a->n != 1) return -1;
    if (count > max) return -1;
    for (int64_t i = 0; i < count; i++) out[i] = a->iv[a->n == 1 ? 0 : i];
    return (int)count;
  }
  if (a->kind != SA_LIST) return -1;
  int n = 0; /* nested lists ([[1, 1], [0, 2]]) flatten in order */
  for (int i = 0; i < a->n; i++) {
    const shlo_attr *e = a->items[i];
    if (e->kind == SA_LIST) {
      int k = shlo_attr_ints(e, out + n, max - n);
      if (k < 0) return -1;
      n += k;
    } else if (e->kind == SA_INT || e->kind == SA_BOOL) {
      if (n >= max) return -1;
      out[n++] = e->i;
    } else {
      return -1;
    }
  }
  return n;
}

int shlo_has_word(const shlo_op *op, const char *w) {
  for (int i = 0; i < op->nword; i++)
    if (!strcmp(op->words[i], w)) return 1;
  return 0;
}
