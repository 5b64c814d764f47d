/* The frit command-line tool: simplify and evaluate C-syntax expressions, print, simplify and
 * verify textual IR files. Subcommands live in one table; exit status 2 on any user error. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/expr.h"
#include "cli/import.h"
#include "frit.h"

#define EXIT_USER_ERROR 2

typedef int (*cmd_fn)(int argc, char **argv);
typedef struct command {
  const char *name;
  cmd_fn fn;
  const char *args;
  const char *help;
} command;

static const command *find_command(const char *name);
static int cmd_help(int argc, char **argv);

static int user_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static int user_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "frit: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  return EXIT_USER_ERROR;
}

static int lib_error(frit_ctx *ctx, const char *what) {
  fprintf(stderr, "frit: %s: %s\n", what, frit_error(ctx));
  frit_ctx_free(ctx);
  return EXIT_USER_ERROR;
}

/* ---------- option helpers ---------- */

#define MAX_VARS 64

typedef struct var_opts {
  cli_var_range ranges[MAX_VARS];
  int nranges;
  frit_binding binds[MAX_VARS];
  int nbinds;
  char *expr_text; /* EXPR read from standard input ("-"), freed by the command */
} var_opts;

static bool parse_i64(const char *s, size_t len, int64_t *out) {
  char buf[64];
  if (len == 0 || len >= sizeof buf) return false;
  memcpy(buf, s, len);
  buf[len] = '\0';
  errno = 0;
  char *end;
  long long v = strtoll(buf, &end, 0);
  if (errno || *end) return false;
  *out = v;
  return true;
}

static bool valid_name(const char *s, size_t len) {
  if (len == 0) return false;
  for (size_t i = 0; i < len; i++) {
    char c = s[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

/* NAME=LO:HI, half-open; an empty LO or HI leaves that side unbounded. */
static int add_range(var_opts *o, char *spec) {
  char *eq = strchr(spec, '=');
  char *colon = eq ? strchr(eq, ':') : NULL;
  if (!eq || !colon || !valid_name(spec, (size_t)(eq - spec)))
    return user_error("bad --range '%s': expected NAME=LO:HI (half-open, e.g. x=0:16)", spec);
  int64_t lo = INT64_MIN, hi = INT64_MAX;
  bool hi_open = colon[1] == '\0';
  if (eq + 1 != colon && !parse_i64(eq + 1, (size_t)(colon - eq - 1), &lo))
    return user_error("bad --range '%s': LO is not a 64-bit integer", spec);
  if (!hi_open && !parse_i64(colon + 1, strlen(colon + 1), &hi))
    return user_error("bad --range '%s': HI is not a 64-bit integer", spec);
  if (!hi_open && hi <= lo)
    return user_error("bad --range '%s': the range is empty (HI must be greater than LO)", spec);
  if (o->nranges == MAX_VARS) return user_error("too many --range options");
  *eq = '\0';
  cli_var_range *r = &o->ranges[o->nranges++];
  r->name = spec;
  r->lo = lo;
  r->hi = hi_open ? INT64_MAX : hi - 1;
  return 0;
}

static int add_binding(var_opts *o, char *spec) {
  char *eq = strchr(spec, '=');
  int64_t v;
  if (!eq || !valid_name(spec, (size_t)(eq - spec)) || !parse_i64(eq + 1, strlen(eq + 1), &v))
    return user_error("bad binding '%s': expected NAME=VALUE", spec);
  if (o->nbinds == MAX_VARS) return user_error("too many bindings");
  *eq = '\0';
  o->binds[o->nbinds].name = spec;
  o->binds[o->nbinds].value = v;
  o->nbinds++;
  return 0;
}

typedef enum out_form { OUT_C, OUT_TREE, OUT_LISTING, OUT_IR } out_form;

static bool parse_form(const char *a, out_form *f) {
  if (!strcmp(a, "--tree")) *f = OUT_TREE;
  else if (!strcmp(a, "--listing")) *f = OUT_LISTING;
  else if (!strcmp(a, "--ir")) *f = OUT_IR;
  else if (!strcmp(a, "--c")) *f = OUT_C;
  else return false;
  return true;
}

static int print_graph(frit_ctx *ctx, frit_uop *root, out_form form) {
  frit_status st = FRIT_OK;
  switch (form) {
    case OUT_C: {
      const char *s = frit_render_c_expr(ctx, root);
      if (!s) return lib_error(ctx, "render");
      printf("%s\n", s);
      break;
    }
    case OUT_TREE: st = frit_print_tree(ctx, root, stdout); break;
    case OUT_LISTING: st = frit_print_listing(ctx, root, stdout); break;
    case OUT_IR: st = frit_print_ir(ctx, root, stdout); break;
  }
  if (st != FRIT_OK) return lib_error(ctx, "print");
  return 0;
}

/* Reads a whole file ("-": standard input). Returns malloc'd text or NULL. */
static char *read_file(const char *path) {
  FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
  if (!f) return NULL;
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  while (buf) {
    size_t n = fread(buf + len, 1, cap - len - 1, f);
    len += n;
    if (len + 1 < cap) break;
    cap *= 2;
    char *nb = realloc(buf, cap);
    if (!nb) free(buf);
    buf = nb;
  }
  if (buf) buf[len] = '\0';
  if (f != stdin) fclose(f);
  return buf;
}

/* Parses a textual IR file into ctx; prints the error itself. */
static frit_uop *load_ir(frit_ctx *ctx, const char *path) {
  char *text = read_file(path);
  if (!text) {
    fprintf(stderr, "frit: cannot read '%s': %s\n", path, strerror(errno));
    return NULL;
  }
  frit_uop *root = frit_parse_ir(ctx, text);
  free(text);
  if (!root) fprintf(stderr, "frit: %s: %s\n", path, frit_error(ctx));
  return root;
}

/* ---------- commands ---------- */

/* Shared by simplify and eval: EXPR, --range NAME=LO:HI, NAME=VALUE (when binds), output form. */
static int parse_expr_args(int argc, char **argv, bool binds, var_opts *o, const char **expr,
                           out_form *form) {
  *expr = NULL;
  for (int i = 0; i < argc; i++) {
    char *a = argv[i];
    int rc = 0;
    if (!strcmp(a, "--range") || !strcmp(a, "-r")) {
      if (i + 1 == argc) return user_error("%s needs NAME=LO:HI", a);
      rc = add_range(o, argv[++i]);
    } else if (!strncmp(a, "--range=", 8)) {
      rc = add_range(o, a + 8);
    } else if (form && parse_form(a, form)) {
    } else if (a[0] == '-' && a[1] == '-' && a[2] == '\0' && i + 1 < argc && !*expr) {
      *expr = argv[++i]; /* "--" ends the options: "-- --x" is the expression --x */
    } else if (a[0] == '-' && a[1] == '-') {
      return user_error("unknown option '%s'", a);
    } else if (!*expr && a[0] == '-' && a[1] == '\0') {
      /* "-": the expression from standard input, for text longer than an argument may be */
      o->expr_text = read_file("-");
      if (!o->expr_text) return user_error("cannot read standard input: %s", strerror(errno));
      *expr = o->expr_text;
    } else if (!*expr) {
      *expr = a;
    } else if (binds && strchr(a, '=')) {
      rc = add_binding(o, a);
    } else {
      return user_error("unexpected argument '%s'", a);
    }
    if (rc) return rc;
  }
  if (!*expr) return user_error("missing EXPR argument");
  return 0;
}

static frit_uop *build_expr(frit_ctx *ctx, const char *expr, const var_opts *o) {
  char err[2048];
  frit_uop *root = cli_parse_expr(ctx, expr, o->ranges, o->nranges, err, sizeof err);
  if (!root) fprintf(stderr, "frit: %s\n", err);
  return root;
}

/* simplify, or with `simplify` false only parse (to write IR files from C syntax) */
static int simplify_or_parse(int argc, char **argv, bool simplify, out_form form) {
  var_opts o = {0};
  const char *expr;
  int rc = parse_expr_args(argc, argv, false, &o, &expr, &form);
  if (rc) return free(o.expr_text), rc;
  frit_ctx *ctx = frit_ctx_new();
  if (!ctx) return free(o.expr_text), user_error("out of memory");
  frit_uop *root = build_expr(ctx, expr, &o);
  free(o.expr_text);
  if (!root) {
    frit_ctx_free(ctx);
    return EXIT_USER_ERROR;
  }
  frit_uop *s = simplify ? frit_simplify(ctx, root) : root;
  if (!s) return lib_error(ctx, "simplify");
  rc = print_graph(ctx, s, form);
  if (!rc) frit_ctx_free(ctx);
  return rc;
}

static int cmd_simplify(int argc, char **argv) { return simplify_or_parse(argc, argv, true, OUT_C); }
static int cmd_parse(int argc, char **argv) { return simplify_or_parse(argc, argv, false, OUT_IR); }

static int cmd_eval(int argc, char **argv) {
  var_opts o = {0};
  const char *expr;
  int rc = parse_expr_args(argc, argv, true, &o, &expr, NULL);
  if (rc) return free(o.expr_text), rc;
  for (int i = 0; i < o.nbinds; i++) {
    for (int j = 0; j < o.nranges; j++) {
      if (!strcmp(o.binds[i].name, o.ranges[j].name) &&
          (o.binds[i].value < o.ranges[j].lo || o.binds[i].value > o.ranges[j].hi)) {
        fprintf(stderr, "frit: %s=%" PRId64 " is outside its --range %" PRId64 "..%" PRId64 "\n",
                o.binds[i].name, o.binds[i].value, o.ranges[j].lo, o.ranges[j].hi);
        return free(o.expr_text), EXIT_USER_ERROR;
      }
    }
  }
  frit_ctx *ctx = frit_ctx_new();
  if (!ctx) return free(o.expr_text), user_error("out of memory");
  frit_uop *root = build_expr(ctx, expr, &o);
  free(o.expr_text);
  if (!root) {
    frit_ctx_free(ctx);
    return EXIT_USER_ERROR;
  }
  frit_scalar out[FRIT_MAX_LANES];
  if (frit_interpret(ctx, root, NULL, NULL, 0, o.binds, o.nbinds, out) != FRIT_OK)
    return lib_error(ctx, "eval");
  printf("%" PRId64 "\n", out[0].i);
  frit_ctx_free(ctx);
  return 0;
}

/* FILE then an optional output form; shared by print and simplify-ir. */
static int parse_file_args(int argc, char **argv, const char **file, out_form *form) {
  *file = NULL;
  for (int i = 0; i < argc; i++) {
    if (form && parse_form(argv[i], form)) continue;
    if (argv[i][0] == '-' && argv[i][1]) return user_error("unknown option '%s'", argv[i]);
    if (*file) return user_error("unexpected argument '%s'", argv[i]);
    *file = argv[i];
  }
  if (!*file) return user_error("missing FILE argument ('-' reads standard input)");
  return 0;
}

static int cmd_print(int argc, char **argv) {
  const char *file;
  out_form form = OUT_LISTING;
  int rc = parse_file_args(argc, argv, &file, &form);
  if (rc) return rc;
  frit_ctx *ctx = frit_ctx_new();
  frit_uop *root = ctx ? load_ir(ctx, file) : NULL;
  if (!root) {
    frit_ctx_free(ctx);
    return EXIT_USER_ERROR;
  }
  rc = print_graph(ctx, root, form);
  if (!rc) frit_ctx_free(ctx);
  return rc;
}

static int cmd_simplify_ir(int argc, char **argv) {
  const char *file;
  out_form form = OUT_IR;
  int rc = parse_file_args(argc, argv, &file, &form);
  if (rc) return rc;
  frit_ctx *ctx = frit_ctx_new();
  frit_uop *root = ctx ? load_ir(ctx, file) : NULL;
  if (!root) {
    frit_ctx_free(ctx);
    return EXIT_USER_ERROR;
  }
  frit_uop *s = frit_simplify(ctx, root);
  if (!s) return lib_error(ctx, "simplify");
  rc = print_graph(ctx, s, form);
  if (!rc) frit_ctx_free(ctx);
  return rc;
}

static int cmd_verify(int argc, char **argv) {
  const char *file;
  int rc = parse_file_args(argc, argv, &file, NULL);
  if (rc) return rc;
  frit_ctx *ctx = frit_ctx_new();
  frit_uop *root = ctx ? load_ir(ctx, file) : NULL;
  if (!root) {
    frit_ctx_free(ctx);
    return EXIT_USER_ERROR;
  }
  if (frit_verify(ctx, root) != FRIT_OK) {
    /* the file parsed but breaks an IR invariant: a finding, not a usage error */
    fprintf(stderr, "frit: %s: %s\n", file, frit_error(ctx));
    frit_ctx_free(ctx);
    return 1;
  }
  printf("%s: ok (%zu nodes)\n", file, frit_node_count(ctx));
  frit_ctx_free(ctx);
  return 0;
}

/* The runtime's configuration as frit_compile would use it, without compiling anything. */
static int cmd_info(int argc, char **argv) {
  if (argc > 0) return user_error("unexpected argument '%s'", argv[0]);
  frit_ctx *ctx = frit_ctx_new();
  if (!ctx) return user_error("out of memory");
  if (frit_info(ctx, stdout) != FRIT_OK) return lib_error(ctx, "info");
  frit_ctx_free(ctx);
  return 0;
}

static int cmd_cache(int argc, char **argv) {
  if (argc < 1 || strcmp(argv[0], "clear") != 0)
    return user_error("usage: frit cache clear [DIR]");
  if (argc > 2) return user_error("unexpected argument '%s'", argv[2]);
  frit_ctx *ctx = frit_ctx_new();
  if (!ctx) return user_error("out of memory");
  if (frit_cache_clear(ctx, argc == 2 ? argv[1] : NULL) != FRIT_OK) return lib_error(ctx, "cache clear");
  frit_ctx_free(ctx);
  return 0;
}

/* The autotuner: a command run with FRIT_TUNE=1 (its programs' kernels are searched and the
 * tunings stored in the cache), or the stored tunings listed or removed. */
static int cmd_tune(int argc, char **argv) {
  if (argc < 1) return user_error("usage: frit tune COMMAND [ARGS]... | frit tune --list [DIR] | frit tune --clear [DIR]");
  bool list = !strcmp(argv[0], "--list"), clear = !strcmp(argv[0], "--clear");
  if (list || clear) {
    if (argc > 2) return user_error("unexpected argument '%s'", argv[2]);
    frit_ctx *ctx = frit_ctx_new();
    if (!ctx) return user_error("out of memory");
    const char *dir = argc == 2 ? argv[1] : NULL;
    if ((list ? frit_tune_list(ctx, dir, stdout) : frit_tune_clear(ctx, dir)) != FRIT_OK) return lib_error(ctx, "tune");
    frit_ctx_free(ctx);
    return 0;
  }
  if (!strcmp(argv[0], "--")) argv++, argc--;
  if (argc < 1) return user_error("usage: frit tune COMMAND [ARGS]...");
  if (setenv("FRIT_TUNE", "1", 1) != 0) return user_error("cannot set FRIT_TUNE: %s", strerror(errno));
  fflush(stdout);
  execvp(argv[0], argv);
  return user_error("cannot run '%s': %s", argv[0], strerror(errno));
}

/* The summary of a trace written by frit_profile_save / FRIT_PROFILE=x.json / frit.profile. */
static int cmd_profile(int argc, char **argv) {
  if (argc != 1) return user_error(argc ? "unexpected argument '%s'" : "usage: frit profile TRACE.json", argc ? argv[1] : "");
  frit_ctx *ctx = frit_ctx_new();
  if (!ctx) return user_error("out of memory");
  if (frit_profile_summary(ctx, argv[0], stdout) != FRIT_OK) return lib_error(ctx, "profile");
  frit_ctx_free(ctx);
  return 0;
}

/* To add a subcommand: write cmd_NAME(argc, argv) (argv excludes the command name) and add a
 * row here; help and dispatch pick it up. */
static const command commands[] = {
    {"simplify", cmd_simplify, "EXPR [--range NAME=LO:HI]... [--c|--ir|--listing|--tree]",
     "simplify a C integer expression over i64 variables; print it as C"},
    {"parse", cmd_parse, "EXPR [--range NAME=LO:HI]... [--ir|--listing|--tree|--c]",
     "parse an expression and print its graph unsimplified (default: textual IR)"},
    {"eval", cmd_eval, "EXPR [NAME=VALUE]... [--range NAME=LO:HI]...",
     "evaluate an expression with the reference interpreter"},
    {"print", cmd_print, "FILE [--listing|--tree|--ir]", "print a textual IR file"},
    {"simplify-ir", cmd_simplify_ir, "FILE [--ir|--listing|--tree]",
     "simplify a textual IR file and print the result"},
    {"verify", cmd_verify, "FILE", "check a textual IR file against the IR invariants"},
    {"info", cmd_info, "", "show the version, compiler, flags, cache directory and threads programs use"},
    {"cache", cmd_cache, "clear [DIR]", "remove compiled kernels from the code cache (default: see info)"},
    {"tune", cmd_tune, "COMMAND [ARGS]... | --list [DIR] | --clear [DIR]",
     "run COMMAND with FRIT_TUNE=1 (its kernels autotuned, the tunings kept in the cache); list or remove the tunings"},
    {"profile", cmd_profile, "TRACE.json", "summarise a saved profile: kernels by time, GB/s, GFLOP/s, compile passes"},
    {"import", cli_import, "FILE.mlir|FILE.onnx [--print|--graph]",
     "read a StableHLO or ONNX model; print its signature and ops (--print) or the frit graph it builds"},
    {"help", cmd_help, "[COMMAND]", "show this help"},
};
#define NCOMMANDS ((int)(sizeof commands / sizeof commands[0]))

static const command *find_command(const char *name) {
  for (int i = 0; i < NCOMMANDS; i++)
    if (!strcmp(commands[i].name, name)) return &commands[i];
  return NULL;
}

static void usage(FILE *out) {
  fprintf(out, "usage: frit COMMAND [ARGS]\n\ncommands:\n");
  for (int i = 0; i < NCOMMANDS; i++)
    fprintf(out, "  %-12s %s\n  %-12s   %s\n", commands[i].name, commands[i].args, "",
            commands[i].help);
  fprintf(out,
          "\nRanges are half-open: --range x=0:16 means 0 <= x < 16 (LO or HI may be left\n"
          "empty for no bound); variables without one range over all of int64.\n"
          "FILE may be '-' for standard input. Exit status: 0 ok, 1 verify found a problem,\n"
          "2 a usage, syntax or evaluation error. See docs/cli.md.\n");
}

static int cmd_help(int argc, char **argv) {
  if (argc >= 1) {
    const command *c = find_command(argv[0]);
    if (!c) return user_error("unknown command '%s'; see 'frit help'", argv[0]);
    printf("usage: frit %s %s\n  %s\n", c->name, c->args, c->help);
    return 0;
  }
  usage(stdout);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return EXIT_USER_ERROR;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) return cmd_help(0, NULL);
  const command *c = find_command(argv[1]);
  if (!c) return user_error("unknown command '%s'; see 'frit help'", argv[1]);
  for (int i = 2; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return cmd_help(1, &argv[1]);
  return c->fn(argc - 2, argv + 2);
}
