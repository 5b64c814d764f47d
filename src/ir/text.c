/* Textual IR: the exact, parseable form of a graph (frit_print_ir / frit_parse_ir) and the
 * number and string spelling it shares with the human printers. Format: docs/ir.md. */
#include "ir/irfmt.h"
#include "ir/walk.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

/* ---------- spelling shared with the printers ---------- */

void frit_fmt_double(char *buf, size_t bufsize, double v) {
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  if (isnan(v)) {
    if (bits == 0x7ff8000000000000ull) snprintf(buf, bufsize, "nan");
    else if (bits == 0xfff8000000000000ull) snprintf(buf, bufsize, "-nan");
    else snprintf(buf, bufsize, "nan(0x%016" PRIx64 ")", bits);
    return;
  }
  if (isinf(v)) {
    snprintf(buf, bufsize, v < 0 ? "-inf" : "inf");
    return;
  }
  /* The shortest %g that strtod reads back to the same bits; 17 digits always do. */
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, bufsize, "%.*g", prec, v);
    double back = strtod(buf, NULL);
    if (memcmp(&back, &v, sizeof v) == 0) return;
  }
}

void frit_fmt_value(char *buf, size_t bufsize, frit_dtype dt, frit_scalar v) {
  if (frit_dtype_is_complex(dt)) { /* "re:im", each part as a float */
    char im[40];
    frit_fmt_double(buf, bufsize, v.c.re);
    frit_fmt_double(im, sizeof im, v.c.im);
    size_t k = strlen(buf);
    snprintf(buf + k, bufsize - k, ":%s", im);
  } else if (frit_dtype_is_float(dt)) frit_fmt_double(buf, bufsize, v.f);
  else if (frit_dtype_is_unsigned(dt)) snprintf(buf, bufsize, "%" PRIu64, v.u);
  else if (frit_dtype_is_bool(dt) && (v.i == 0 || v.i == 1)) snprintf(buf, bufsize, v.i ? "true" : "false");
  else snprintf(buf, bufsize, "%" PRId64, v.i);
}

void frit_fmt_string(FILE *out, const char *s, size_t n) {
  fputc('"', out);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
    else if (c == '\n') fputs("\\n", out);
    else if (c == '\t') fputs("\\t", out);
    else if (c == '\r') fputs("\\r", out);
    else if (c < 0x20 || c >= 0x7f) fprintf(out, "\\x%02x", c);
    else fputc(c, out);
  }
  fputc('"', out);
}

const char *frit_fmt_opname(frit_op op, char *buf, size_t bufsize) {
  const char *n = frit_op_name(op);
  size_t i = 0;
  for (; n[i] && i + 1 < bufsize; i++) buf[i] = (char)(n[i] >= 'A' && n[i] <= 'Z' ? n[i] - 'A' + 'a' : n[i]);
  buf[i] = 0;
  return buf;
}

static const char *const atomic_names[FRIT_ATOMIC_COUNT_] = {"add", "min", "max", "and", "or", "xor", "xchg"};

const char *frit_fmt_atomic_name(int64_t a) {
  return a >= 0 && a < FRIT_ATOMIC_COUNT_ ? atomic_names[a] : NULL;
}

const char *frit_fmt_axis_name(int64_t a, char *buf, size_t bufsize) {
  if (a < 0 || a >= FRIT_AXIS_COUNT_) return NULL;
  const char *n = frit_axis_name((frit_axis)a);
  size_t i = 0;
  for (; n[i] && i + 1 < bufsize; i++) buf[i] = (char)(n[i] >= 'A' && n[i] <= 'Z' ? n[i] - 'A' + 'a' : n[i]);
  buf[i] = 0;
  return buf;
}

frit_argfield frit_fmt_i0_kind(frit_op op) {
  if (op == FRIT_OP_REDUCE || op == FRIT_OP_REDUCE_AXIS) return FRIT_AF_OP;
  if (op == FRIT_OP_ATOMIC) return FRIT_AF_ATOMIC;
  return FRIT_AF_NUM;
}

frit_argfield frit_fmt_i1_kind(frit_op op) { return op == FRIT_OP_RANGE ? FRIT_AF_AXIS : FRIT_AF_NUM; }

/* i0/i1 by name where the op gives the number a meaning; names keep text stable if enums grow. */
static void fmt_argfield(char *buf, size_t bufsize, frit_argfield kind, int64_t v) {
  const char *name = NULL;
  char tmp[32];
  switch (kind) {
  case FRIT_AF_OP:
    if (v >= 0 && v < FRIT_OP_COUNT_) name = frit_fmt_opname((frit_op)v, tmp, sizeof tmp);
    break;
  case FRIT_AF_AXIS: name = frit_fmt_axis_name(v, tmp, sizeof tmp); break;
  case FRIT_AF_ATOMIC: name = frit_fmt_atomic_name(v); break;
  case FRIT_AF_NUM: break;
  }
  if (name) snprintf(buf, bufsize, "%s", name);
  else snprintf(buf, bufsize, "%" PRId64, v);
}

/* ---------- exact printer ---------- */

frit_status frit_print_ir(frit_ctx *ctx, frit_uop *root, FILE *out) {
  if (!root || !out) return frit_set_error(ctx, FRIT_ERR_INVALID, "print_ir: NULL root or stream");
  size_t n;
  frit_uop **nodes = frit_walk_topo(root, &n);
  uint32_t *local = nodes ? malloc(((size_t)root->id + 1) * sizeof *local) : NULL;
  if (!local) {
    free(nodes);
    return frit_set_error(ctx, FRIT_ERR_NOMEM, "print_ir: out of memory");
  }
  char opbuf[32], dtbuf[48], vbuf[96];
  for (size_t k = 0; k < n; k++) {
    frit_uop *u = nodes[k];
    local[u->id] = (uint32_t)k;
    fprintf(out, "%%%zu = %s %s", k, frit_fmt_opname((frit_op)u->op, opbuf, sizeof opbuf),
            frit_dtype_name(u->dtype, dtbuf, sizeof dtbuf));
    if (u->nsrc) {
      fputs(" (", out);
      for (uint32_t i = 0; i < u->nsrc; i++) fprintf(out, "%s%%%" PRIu32, i ? ", " : "", local[u->src[i]->id]);
      fputc(')', out);
    }
    const frit_arg *a = &u->arg;
    if (u->op == FRIT_OP_CONST || a->value.u != 0 || (frit_dtype_is_complex(u->dtype) && a->value.c.im != 0)) {
      frit_fmt_value(vbuf, sizeof vbuf, u->dtype, a->value);
      fprintf(out, " value=%s", vbuf);
    }
    if (a->i0) {
      fmt_argfield(vbuf, sizeof vbuf, frit_fmt_i0_kind((frit_op)u->op), a->i0);
      fprintf(out, " i0=%s", vbuf);
    }
    if (a->i1) {
      fmt_argfield(vbuf, sizeof vbuf, frit_fmt_i1_kind((frit_op)u->op), a->i1);
      fprintf(out, " i1=%s", vbuf);
    }
    if (a->blob_kind == FRIT_BLOB_INTS) {
      const int64_t *v = a->blob;
      fputs(" ints=[", out);
      for (uint32_t i = 0; i < a->n; i++) fprintf(out, "%s%" PRId64, i ? ", " : "", v[i]);
      fputc(']', out);
    } else if (a->blob_kind == FRIT_BLOB_STR) {
      fputs(" str=", out);
      frit_fmt_string(out, a->blob, a->n);
    }
    fputc('\n', out);
  }
  free(local);
  free(nodes);
  return ferror(out) ? frit_set_error(ctx, FRIT_ERR_INVALID, "print_ir: write error") : FRIT_OK;
}

/* The strings frit_ir_to_string handed out, by root. A node never changes, so its text never
 * does: asking again returns the same string, and a loop that prints one graph many times does
 * not grow the ctx. Open addressing on the root pointer. */
typedef struct ir_strings {
  frit_uop **roots;
  char **texts;
  size_t n, cap; /* cap: a power of two */
} ir_strings;

static void ir_strings_destroy(void *p) {
  ir_strings *m = p;
  for (size_t i = 0; i < m->cap; i++) free(m->texts[i]);
  free(m->roots);
  free(m->texts);
  free(m);
}

static ir_strings *ir_strings_of(frit_ctx *ctx) {
  for (size_t i = 0; i < ctx->owned_count; i++)
    if (ctx->owned[i].destroy == ir_strings_destroy) return ctx->owned[i].ptr;
  ir_strings *m = calloc(1, sizeof *m);
  if (!m || !frit_ctx_own(ctx, m, ir_strings_destroy)) return NULL;
  return m;
}

static size_t ir_slot(const ir_strings *m, const frit_uop *root) {
  size_t h = (size_t)(((uintptr_t)root >> 4) * UINT64_C(0x9E3779B97F4A7C15));
  size_t i = h & (m->cap - 1);
  while (m->roots[i] && m->roots[i] != root) i = (i + 1) & (m->cap - 1);
  return i;
}

static bool ir_strings_grow(ir_strings *m) {
  size_t cap = m->cap ? m->cap * 2 : 16;
  ir_strings g = {calloc(cap, sizeof *g.roots), calloc(cap, sizeof *g.texts), m->n, cap};
  if (!g.roots || !g.texts) {
    free(g.roots), free(g.texts);
    return false;
  }
  for (size_t i = 0; i < m->cap; i++)
    if (m->roots[i]) {
      size_t j = ir_slot(&g, m->roots[i]);
      g.roots[j] = m->roots[i], g.texts[j] = m->texts[i];
    }
  free(m->roots), free(m->texts);
  *m = g;
  return true;
}

const char *frit_ir_to_string(frit_ctx *ctx, frit_uop *root) {
  ir_strings *m = ir_strings_of(ctx);
  if (!m || ((m->n + 1) * 2 > m->cap && !ir_strings_grow(m))) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "ir_to_string: out of memory");
    return NULL;
  }
  size_t slot = root ? ir_slot(m, root) : 0;
  if (root && m->roots[slot]) return m->texts[slot];
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "ir_to_string: out of memory");
    return NULL;
  }
  frit_status st = frit_print_ir(ctx, root, f);
  if (fclose(f) != 0 && st == FRIT_OK) st = frit_set_error(ctx, FRIT_ERR_NOMEM, "ir_to_string: out of memory");
  if (st != FRIT_OK) {
    free(buf);
    return NULL;
  }
  /* The API promises the string lives as long as ctx, so it is kept in the map, not in the
   * single result slot that the next string result would free. */
  m->roots[slot] = root;
  m->texts[slot] = buf;
  m->n++;
  return buf;
}

/* ---------- parser ---------- */

typedef struct name_entry {
  const char *name;
  size_t len;
  frit_uop *node;
} name_entry;

typedef struct parser {
  frit_ctx *ctx;
  const char *p, *eol; /* cursor and end of the current line */
  int line;
  name_entry *names;
  size_t names_cap, names_count;
  frit_uop **srcs;
  size_t srcs_cap;
  int64_t *ints;
  size_t ints_cap;
  char *str;
  size_t str_cap;
} parser;

static frit_uop *perr(parser *ps, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static frit_uop *perr(parser *ps, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  frit_set_error(ps->ctx, FRIT_ERR_PARSE, "ir line %d: %s", ps->line, msg);
  return NULL;
}

/* What the cursor is at, for messages: the rest of the token or "end of line". */
static const char *near(parser *ps, char *buf, size_t bufsize) {
  if (ps->p >= ps->eol) return "end of line";
  size_t k = 0;
  while (ps->p + k < ps->eol && k + 1 < bufsize && k < 20 && ps->p[k] != ' ' && ps->p[k] != '\t') k++;
  snprintf(buf, bufsize, "'%.*s'", (int)k, ps->p);
  return buf;
}

static void skip_ws(parser *ps) {
  while (ps->p < ps->eol && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\r')) ps->p++;
}

static bool at_end(parser *ps) { return ps->p >= ps->eol || *ps->p == '#'; }

static bool is_ident(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

static size_t ident_len(parser *ps) {
  size_t k = 0;
  while (ps->p + k < ps->eol && is_ident(ps->p[k])) k++;
  return k;
}

static uint64_t name_hash(const char *s, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
  return h ^ (h >> 29);
}

static name_entry *name_slot(parser *ps, const char *s, size_t n) {
  size_t mask = ps->names_cap - 1, j = name_hash(s, n) & mask;
  while (ps->names[j].name && !(ps->names[j].len == n && memcmp(ps->names[j].name, s, n) == 0))
    j = (j + 1) & mask;
  return &ps->names[j];
}

static bool name_define(parser *ps, const char *s, size_t n, frit_uop *u) {
  if ((ps->names_count + 1) * 2 > ps->names_cap) {
    size_t old_cap = ps->names_cap, cap = old_cap ? old_cap * 2 : 256;
    name_entry *old = ps->names;
    ps->names = calloc(cap, sizeof *ps->names);
    if (!ps->names) {
      ps->names = old;
      return false;
    }
    ps->names_cap = cap;
    for (size_t i = 0; i < old_cap; i++)
      if (old[i].name) *name_slot(ps, old[i].name, old[i].len) = old[i];
    free(old);
  }
  name_entry *e = name_slot(ps, s, n);
  *e = (name_entry){s, n, u};
  ps->names_count++;
  return true;
}

static frit_uop *name_lookup(parser *ps, const char *s, size_t n) {
  if (!ps->names_cap) return NULL;
  name_entry *e = name_slot(ps, s, n);
  return e->name ? e->node : NULL;
}

static bool grow(void **buf, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return true;
  size_t c = *cap ? *cap : 16;
  while (c < need) c *= 2;
  void *g = realloc(*buf, c * elem);
  if (!g) return false;
  *buf = g;
  *cap = c;
  return true;
}

/* A token for a number or name: up to whitespace, ',', ']', or a comment. */
static size_t token_len(parser *ps) {
  size_t k = 0;
  while (ps->p + k < ps->eol && ps->p[k] != ' ' && ps->p[k] != '\t' && ps->p[k] != '\r' && ps->p[k] != '#' &&
         ps->p[k] != ',' && ps->p[k] != ']')
    k++;
  return k;
}

static bool parse_i64(const char *s, size_t n, int64_t *out) {
  char buf[64];
  if (n == 0 || n >= sizeof buf) return false;
  memcpy(buf, s, n);
  buf[n] = 0;
  char *end;
  errno = 0;
  long long v = strtoll(buf, &end, 10);
  if (errno || *end) return false;
  *out = v;
  return true;
}

static bool parse_value(parser *ps, frit_dtype dt, const char *s, size_t n, frit_scalar *out) {
  char buf[128];
  if (n == 0 || n >= sizeof buf) return false;
  memcpy(buf, s, n);
  buf[n] = 0;
  char *end;
  errno = 0;
  (void)ps;
  if (frit_dtype_is_complex(dt)) {
    char *colon = strchr(buf, ':');
    frit_dtype part = frit_dtype_real_part(frit_dtype_scalar(dt));
    frit_scalar re, im;
    if (!colon || !parse_value(ps, part, buf, (size_t)(colon - buf), &re) ||
        !parse_value(ps, part, colon + 1, strlen(colon + 1), &im))
      return false;
    out->c.re = re.f, out->c.im = im.f;
    return true;
  }
  if (frit_dtype_is_float(dt)) {
    const char *b = buf;
    bool neg = *b == '-';
    if (neg) b++;
    if (strncmp(b, "nan", 3) == 0) {
      uint64_t bits = 0x7ff8000000000000ull;
      if (b[3] == '(') {
        bits = strtoull(b + 4, &end, 16);
        if (errno || end[0] != ')' || end[1]) return false;
      } else if (b[3]) {
        return false;
      }
      if (neg) bits ^= 0x8000000000000000ull;
      memcpy(&out->f, &bits, sizeof bits);
      return true;
    }
    out->f = strtod(buf, &end);
    return *end == 0; /* ERANGE is fine: denormals and infinities read exactly */
  }
  if (frit_dtype_is_bool(dt) && (strcmp(buf, "true") == 0 || strcmp(buf, "false") == 0)) {
    out->i = buf[0] == 't';
    return true;
  }
  if (frit_dtype_is_unsigned(dt)) {
    if (buf[0] == '-') return false;
    out->u = strtoull(buf, &end, 10);
    return !errno && *end == 0;
  }
  out->i = strtoll(buf, &end, 10);
  return !errno && *end == 0;
}

static bool parse_argfield(frit_argfield kind, const char *s, size_t n, int64_t *out) {
  if (parse_i64(s, n, out)) return true;
  char tmp[32];
  switch (kind) {
  case FRIT_AF_OP: {
    int op = frit_op_from_name(s, n);
    if (op < 0) return false;
    *out = op;
    return true;
  }
  case FRIT_AF_AXIS:
    for (int a = 0; a < FRIT_AXIS_COUNT_; a++) {
      const char *name = frit_fmt_axis_name(a, tmp, sizeof tmp);
      if (strlen(name) == n && memcmp(name, s, n) == 0) return (*out = a), true;
    }
    return false;
  case FRIT_AF_ATOMIC:
    for (int a = 0; a < FRIT_ATOMIC_COUNT_; a++)
      if (strlen(atomic_names[a]) == n && memcmp(atomic_names[a], s, n) == 0) return (*out = a), true;
    return false;
  case FRIT_AF_NUM: return false;
  }
  return false;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* A quoted string with the escapes frit_fmt_string writes; the cursor is on the '"'. */
static bool parse_string(parser *ps, size_t *len) {
  size_t n = 0;
  ps->p++;
  for (;;) {
    if (ps->p >= ps->eol) return perr(ps, "unterminated string"), false;
    char c = *ps->p++;
    if (c == '"') break;
    if (c == '\\') {
      if (ps->p >= ps->eol) return perr(ps, "unterminated string"), false;
      char e = *ps->p++;
      switch (e) {
      case 'n': c = '\n'; break;
      case 't': c = '\t'; break;
      case 'r': c = '\r'; break;
      case '"': case '\\': c = e; break;
      case 'x': {
        int h1 = ps->p < ps->eol ? hexval(ps->p[0]) : -1;
        int h2 = ps->p + 1 < ps->eol ? hexval(ps->p[1]) : -1;
        if (h1 < 0 || h2 < 0) return perr(ps, "expected two hex digits after \\x"), false;
        c = (char)(h1 * 16 + h2);
        ps->p += 2;
        break;
      }
      default: return perr(ps, "unknown escape '\\%c' in string", e), false;
      }
    }
    if (!grow((void **)&ps->str, &ps->str_cap, n + 2, 1)) return perr(ps, "out of memory"), false;
    ps->str[n++] = c;
  }
  if (!grow((void **)&ps->str, &ps->str_cap, n + 1, 1)) return perr(ps, "out of memory"), false;
  ps->str[n] = 0;
  *len = n;
  return true;
}

/* One definition line: %name = op dtype [(%a, ...)] [field=value ...] */
static frit_uop *parse_line(parser *ps) {
  char nb[48];
  if (*ps->p != '%') return perr(ps, "expected '%%name =' at the start of a definition, got %s", near(ps, nb, sizeof nb));
  ps->p++;
  const char *def = ps->p;
  size_t deflen = ident_len(ps);
  if (!deflen) return perr(ps, "expected a node name after '%%'");
  ps->p += deflen;
  skip_ws(ps);
  if (ps->p >= ps->eol || *ps->p != '=') return perr(ps, "expected '=' after %%%.*s, got %s", (int)deflen, def, near(ps, nb, sizeof nb));
  ps->p++;
  skip_ws(ps);
  size_t oplen = ident_len(ps);
  int op = oplen ? frit_op_from_name(ps->p, oplen) : -1;
  if (op < 0) return perr(ps, "expected an op name, got %s", near(ps, nb, sizeof nb));
  ps->p += oplen;
  skip_ws(ps);
  size_t dtlen = 0;
  while (ps->p + dtlen < ps->eol && (is_ident(ps->p[dtlen]) || ps->p[dtlen] == '*')) dtlen++;
  frit_dtype dt;
  if (!dtlen || frit_dtype_parse(ps->p, dtlen, &dt) != FRIT_OK)
    return perr(ps, "expected a dtype (i64, f32x4, f32*, ...) after the op, got %s", near(ps, nb, sizeof nb));
  ps->p += dtlen;
  skip_ws(ps);

  int nsrc = 0;
  if (ps->p < ps->eol && *ps->p == '(') {
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->eol && *ps->p == ')') {
      ps->p++;
    } else {
      for (;;) {
        skip_ws(ps);
        if (ps->p >= ps->eol || *ps->p != '%') return perr(ps, "expected a source '%%name', got %s", near(ps, nb, sizeof nb));
        ps->p++;
        size_t len = ident_len(ps);
        frit_uop *s = len ? name_lookup(ps, ps->p, len) : NULL;
        if (!s) return perr(ps, "undefined node %%%.*s", (int)len, ps->p);
        if (!grow((void **)&ps->srcs, &ps->srcs_cap, (size_t)nsrc + 1, sizeof *ps->srcs)) return perr(ps, "out of memory");
        ps->srcs[nsrc++] = s;
        ps->p += len;
        skip_ws(ps);
        if (ps->p < ps->eol && *ps->p == ',') {
          ps->p++;
          continue;
        }
        if (ps->p < ps->eol && *ps->p == ')') {
          ps->p++;
          break;
        }
        return perr(ps, "expected ',' or ')' in the source list, got %s", near(ps, nb, sizeof nb));
      }
    }
  }

  frit_arg arg = frit_arg_none();
  bool seen_value = false, seen_i0 = false, seen_i1 = false, seen_blob = false;
  for (;;) {
    skip_ws(ps);
    if (at_end(ps)) break;
    size_t klen = ident_len(ps);
    const char *key = ps->p;
    ps->p += klen;
    if (!klen || ps->p >= ps->eol || *ps->p != '=')
      return perr(ps, "expected a field 'value=', 'i0=', 'i1=', 'ints=' or 'str=', got '%.*s'", (int)(klen ? klen : 1), key);
    ps->p++;
#define KEY(s) (klen == sizeof(s) - 1 && memcmp(key, s, klen) == 0)
    if (KEY("value") || KEY("i0") || KEY("i1")) {
      bool *seen = KEY("value") ? &seen_value : KEY("i0") ? &seen_i0 : &seen_i1;
      if (*seen) return perr(ps, "field '%.*s' given twice", (int)klen, key);
      *seen = true;
      size_t tl = token_len(ps);
      bool ok;
      if (KEY("value")) ok = parse_value(ps, dt, ps->p, tl, &arg.value);
      else if (KEY("i0")) ok = parse_argfield(frit_fmt_i0_kind((frit_op)op), ps->p, tl, &arg.i0);
      else ok = parse_argfield(frit_fmt_i1_kind((frit_op)op), ps->p, tl, &arg.i1);
      if (!ok) {
        char dtb[48];
        return perr(ps, "bad %.*s '%.*s' for %s %s", (int)klen, key, (int)tl, ps->p, frit_op_name((frit_op)op),
                    frit_dtype_name(dt, dtb, sizeof dtb));
      }
      ps->p += tl;
    } else if (KEY("ints")) {
      if (seen_blob) return perr(ps, "more than one of 'ints=' and 'str='");
      seen_blob = true;
      if (ps->p >= ps->eol || *ps->p != '[') return perr(ps, "expected '[' after ints=");
      ps->p++;
      size_t n = 0;
      skip_ws(ps);
      if (ps->p < ps->eol && *ps->p == ']') {
        ps->p++;
      } else {
        for (;;) {
          skip_ws(ps);
          size_t tl = token_len(ps);
          if (!grow((void **)&ps->ints, &ps->ints_cap, n + 1, sizeof *ps->ints)) return perr(ps, "out of memory");
          if (!parse_i64(ps->p, tl, &ps->ints[n])) return perr(ps, "expected an integer in ints=[...], got %s", near(ps, nb, sizeof nb));
          n++;
          ps->p += tl;
          skip_ws(ps);
          if (ps->p < ps->eol && *ps->p == ',') {
            ps->p++;
            continue;
          }
          if (ps->p < ps->eol && *ps->p == ']') {
            ps->p++;
            break;
          }
          return perr(ps, "expected ',' or ']' in ints=[...], got %s", near(ps, nb, sizeof nb));
        }
      }
      /* A non-NULL pointer even for [] so that an empty int blob stays an int blob. */
      if (!grow((void **)&ps->ints, &ps->ints_cap, 1, sizeof *ps->ints)) return perr(ps, "out of memory");
      arg.blob = ps->ints, arg.n = (uint32_t)n, arg.blob_kind = FRIT_BLOB_INTS;
    } else if (KEY("str")) {
      if (seen_blob) return perr(ps, "more than one of 'ints=' and 'str='");
      seen_blob = true;
      if (ps->p >= ps->eol || *ps->p != '"') return perr(ps, "expected '\"' after str=");
      size_t n;
      if (!parse_string(ps, &n)) return NULL;
      arg.blob = ps->str, arg.n = (uint32_t)n, arg.blob_kind = FRIT_BLOB_STR;
    } else {
      return perr(ps, "unknown field '%.*s' (expected value, i0, i1, ints or str)", (int)klen, key);
    }
#undef KEY
    if (ps->p < ps->eol && *ps->p != ' ' && *ps->p != '\t' && *ps->p != '\r' && *ps->p != '#')
      return perr(ps, "expected whitespace after a field, got %s", near(ps, nb, sizeof nb));
  }

  if (name_lookup(ps, def, deflen)) return perr(ps, "node %%%.*s defined twice", (int)deflen, def);
  frit_uop *u = frit_uop_new(ps->ctx, (frit_op)op, dt, ps->srcs, nsrc, &arg);
  if (!u) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", frit_error(ps->ctx));
    return perr(ps, "%s", msg);
  }
  if (!name_define(ps, def, deflen, u)) return perr(ps, "out of memory");
  return u;
}

frit_uop *frit_parse_ir(frit_ctx *ctx, const char *text) {
  if (!text) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "parse_ir: NULL text");
    return NULL;
  }
  parser ps = {.ctx = ctx, .p = text, .line = 0};
  frit_uop *root = NULL;
  bool failed = false;
  while (*ps.p) {
    ps.line++;
    const char *nl = strchr(ps.p, '\n');
    ps.eol = nl ? nl : ps.p + strlen(ps.p);
    skip_ws(&ps);
    if (!at_end(&ps)) {
      frit_uop *u = parse_line(&ps);
      if (!u) {
        failed = true;
        break;
      }
      root = u;
    }
    ps.p = nl ? nl + 1 : ps.eol;
  }
  if (!failed && !root) {
    ps.line = ps.line ? ps.line : 1;
    perr(&ps, "no node defined (the last definition is the root)");
  }
  free(ps.names);
  free(ps.srcs);
  free(ps.ints);
  free(ps.str);
  return failed ? NULL : root;
}
