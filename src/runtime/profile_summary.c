/* The summary of a saved profile (frit_profile_summary, `frit profile run.json`): reads the
 * trace's events back with a small JSON scanner and prints kernels by total time. */
#include <inttypes.h>
#include <stdio.h>

#include "runtime/runtime.h"

typedef struct row {
  char name[128], site[256], cat[32];
  int64_t calls;
  double us, bytes, flops;
} row;

/* The end of the JSON value starting at s (a string, object, array or scalar), or NULL. */
static const char *skip_value(const char *s) {
  if (*s == '"') {
    for (s++; *s && *s != '"'; s++)
      if (*s == '\\' && s[1]) s++;
    return *s ? s + 1 : NULL;
  }
  if (*s == '{' || *s == '[') {
    int depth = 0;
    for (; *s; s++) {
      if (*s == '"') {
        s = skip_value(s);
        if (!s) return NULL;
        s--;
      } else if (*s == '{' || *s == '[') {
        depth++;
      } else if (*s == '}' || *s == ']') {
        if (--depth == 0) return s + 1;
      }
    }
    return NULL;
  }
  while (*s && !strchr(",}] \t\r\n", *s)) s++;
  return s;
}

static const char *ws(const char *s) {
  while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n') s++;
  return s;
}

/* The value of "key" among the members of the object [obj, end), searched at any depth (the
 * keys frit writes are distinct between an event and its args). */
static const char *find_key(const char *obj, const char *end, const char *key) {
  size_t kl = strlen(key);
  for (const char *s = obj; s < end; s++) {
    if (*s != '"') continue;
    if ((size_t)(end - s) > kl + 2 && !strncmp(s + 1, key, kl) && s[kl + 1] == '"') {
      const char *v = ws(s + kl + 2);
      if (*v == ':') return ws(v + 1);
    }
    const char *e = skip_value(s); /* a string: step over it, keys inside strings do not count */
    if (!e) return NULL;
    s = e - 1;
  }
  return NULL;
}

static double num(const char *obj, const char *end, const char *key) {
  const char *v = find_key(obj, end, key);
  return v ? strtod(v, NULL) : 0;
}

static void str(const char *obj, const char *end, const char *key, char *out, size_t cap) {
  const char *v = find_key(obj, end, key);
  size_t n = 0;
  if (v && *v == '"') {
    for (v++; *v && *v != '"' && n + 1 < cap; v++) {
      if (*v == '\\' && v[1]) v++;
      out[n++] = *v;
    }
  }
  out[n] = 0;
}

static int by_time(const void *a, const void *b) {
  const row *x = a, *y = b;
  return (x->us < y->us) - (x->us > y->us);
}

static char *read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += got;
    if (n + 1 == cap) {
      char *b = realloc(buf, cap *= 2);
      if (!b) free(buf);
      buf = b;
    }
  }
  fclose(f);
  if (buf) buf[n] = 0;
  return buf;
}

static void print_rows(FILE *out, row *rows, int n, double total_us, double bw, double fl, bool kernels) {
  qsort(rows, (size_t)n, sizeof *rows, by_time);
  for (int i = 0; i < n; i++) {
    const row *r = &rows[i];
    if (kernels) {
      double sec = r->us > 0 ? r->us / 1e6 : 1e-9, gbps = r->bytes / sec / 1e9, gfl = r->flops / sec / 1e9;
      fprintf(out, "%-28s %7" PRId64 " %10.3f %6.1f%% %8.2f %8.2f %6.1f%% %6.1f%%  %s\n", r->name, r->calls,
              r->us / 1e3, total_us > 0 ? 100 * r->us / total_us : 0, gbps, gfl, bw > 0 ? 100 * gbps / bw : 0,
              fl > 0 ? 100 * gfl / fl : 0, r->site);
    } else {
      fprintf(out, "%-28s %7" PRId64 " %10.3f\n", r->name, r->calls, r->us / 1e3);
    }
  }
}

frit_status frit_profile_summary(frit_ctx *ctx, const char *path, FILE *out) {
  if (!ctx) return FRIT_ERR_INVALID;
  if (!path || !out) return frit_set_error(ctx, FRIT_ERR_INVALID, "profile_summary: NULL %s", path ? "stream" : "path");
  char *text = read_all(path);
  if (!text) return frit_set_error(ctx, FRIT_ERR_RUNTIME, "profile_summary: cannot read '%s'", path);
  const char *end = text + strlen(text);
  const char *ev = find_key(text, end, "traceEvents");
  if (!ev || *ev != '[') {
    free(text);
    return frit_set_error(ctx, FRIT_ERR_PARSE, "profile_summary: '%s' has no \"traceEvents\" array", path);
  }
  double bw = num(text, end, "copy_gbps"), fl = num(text, end, "fma_gflops");
  row *rows = NULL;
  int n = 0, cap = 0;
  frit_status st = FRIT_OK;
  double total[2] = {0, 0};
  for (const char *s = ws(ev + 1); *s == '{';) {
    const char *e = skip_value(s);
    if (!e) {
      st = frit_set_error(ctx, FRIT_ERR_PARSE, "profile_summary: '%s': unterminated event", path);
      break;
    }
    row r;
    memset(&r, 0, sizeof r);
    char ph[8];
    str(s, e, "ph", ph, sizeof ph);
    str(s, e, "cat", r.cat, sizeof r.cat);
    bool kernel = !strcmp(r.cat, "kernel");
    if (!strcmp(ph, "X") && (kernel || !strcmp(r.cat, "compile"))) {
      str(s, e, "name", r.name, sizeof r.name);
      str(s, e, "site", r.site, sizeof r.site);
      r.us = num(s, e, "dur");
      r.bytes = num(s, e, "bytes_read") + num(s, e, "bytes_written");
      r.flops = num(s, e, "flops");
      /* "compile" spans its passes: it is the compile total, not a row to add */
      if (strcmp(r.name, "compile") != 0) total[kernel] += r.us;
      int j = 0;
      while (j < n && (strcmp(rows[j].name, r.name) || strcmp(rows[j].site, r.site) || strcmp(rows[j].cat, r.cat))) j++;
      if (j == n) {
        if (n == cap) {
          row *g = realloc(rows, (size_t)(cap = cap ? 2 * cap : 64) * sizeof *g);
          if (!g) {
            st = frit_set_error(ctx, FRIT_ERR_NOMEM, "profile_summary: out of memory");
            break;
          }
          rows = g;
        }
        rows[n] = r;
        rows[n].us = rows[n].bytes = rows[n].flops = 0;
        n++;
      }
      rows[j].calls++, rows[j].us += r.us, rows[j].bytes += r.bytes, rows[j].flops += r.flops;
    }
    s = ws(e);
    if (*s == ',') s = ws(s + 1);
  }
  if (st == FRIT_OK) {
    /* kernels first, then the compile passes */
    int nk = 0;
    for (int i = 0; i < n; i++)
      if (!strcmp(rows[i].cat, "kernel")) {
        row t = rows[nk];
        rows[nk++] = rows[i];
        rows[i] = t;
      }
    fprintf(out, "frit profile: %d kernels, %.3f ms in kernels; machine: %.1f GB/s copy, %.1f GFLOP/s FMA\n", nk,
            total[1] / 1e3, bw, fl);
    fprintf(out, "%-28s %7s %10s %7s %8s %8s %7s %7s  %s\n", "kernel", "calls", "total ms", "%", "GB/s", "GFLOP/s",
            "%bw", "%flops", "site");
    print_rows(out, rows, nk, total[1], bw, fl, true);
    if (n > nk) {
      fprintf(out, "compile passes: %.3f ms\n%-28s %7s %10s\n", total[0] / 1e3, "pass", "calls", "total ms");
      print_rows(out, rows + nk, n - nk, total[0], bw, fl, false);
    }
  }
  free(rows);
  free(text);
  return st;
}
