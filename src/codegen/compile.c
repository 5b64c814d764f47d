/* Program generation and the compiler driver: renders all kernels into one translation unit,
 * compiles it with the system C compiler into a shared object, and loads it. Two caches: on disk
 * (keyed by a hash of source, compiler, flags and compiler version; written atomically with
 * rename, so concurrent processes are safe) and in memory per ctx (hash -> dlopen handle). */
#include "codegen/cg_internal.h"
#include "codegen/structured.h"
#include "ir/walk.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* ---------- per-ctx state: loaded objects and compiler versions ---------- */

typedef struct cg_loaded {
  uint64_t hash;
  void *handle;
} cg_loaded;

typedef struct cg_state {
  cg_loaded *loaded;
  int nloaded, cap;
  char *ver_cc;  /* compiler the version string belongs to */
  char *version; /* first line of `cc --version` */
} cg_state;

static void cg_state_destroy(void *p) {
  cg_state *s = p;
  for (int i = 0; i < s->nloaded; i++) dlclose(s->loaded[i].handle);
  free(s->loaded);
  free(s->ver_cc);
  free(s->version);
  free(s);
}

/* The ctx's codegen state, found among its owned objects by its destructor. */
static cg_state *state_of(frit_ctx *ctx) {
  for (size_t i = 0; i < ctx->owned_count; i++)
    if (ctx->owned[i].destroy == cg_state_destroy) return ctx->owned[i].ptr;
  cg_state *s = calloc(1, sizeof *s);
  if (!s || !frit_ctx_own(ctx, s, cg_state_destroy)) return NULL;
  return s;
}

static char *ctx_strdup(frit_ctx *ctx, const char *s) {
  size_t n = strlen(s) + 1;
  char *d = frit_arena_alloc(&ctx->arena, n);
  if (d) memcpy(d, s, n);
  return d;
}

/* ---------- configuration ---------- */

static const char *env_nonempty(const char *name) {
  const char *v = getenv(name);
  return v && *v ? v : NULL;
}

char *frit_cg_default_cache_dir(void) {
  const char *d = env_nonempty("FRIT_CACHE_DIR");
  char buf[4096];
  if (d) snprintf(buf, sizeof buf, "%s", d);
  else if ((d = env_nonempty("XDG_CACHE_HOME"))) snprintf(buf, sizeof buf, "%s/frit", d);
  else if ((d = env_nonempty("HOME"))) snprintf(buf, sizeof buf, "%s/.cache/frit", d);
  else return NULL;
  char *r = malloc(strlen(buf) + 1);
  if (r) strcpy(r, buf);
  return r;
}

static const char *compiler_version(frit_ctx *ctx, const char *cc);

frit_status frit_codegen_config(frit_ctx *ctx, const frit_compile_opts *opts, frit_cg_config *out) {
  const char *cc = opts && opts->cc ? opts->cc : env_nonempty("FRIT_CC");
  const char *fl = opts && opts->cflags ? opts->cflags : env_nonempty("FRIT_CFLAGS");
  out->cc = ctx_strdup(ctx, cc ? cc : "cc");
  if (fl) out->cflags = ctx_strdup(ctx, fl);
  else if (strstr(compiler_version(ctx, out->cc ? out->cc : "cc"), "clang"))
    out->cflags = ctx_strdup(ctx, FRIT_CG_DEFAULT_CFLAGS);
  else out->cflags = ctx_strdup(ctx, FRIT_CG_DEFAULT_CFLAGS " " FRIT_CG_GCC_CFLAGS);
  out->cache_dir = NULL;
  if (opts && opts->cache_dir) {
    out->cache_dir = ctx_strdup(ctx, opts->cache_dir);
  } else {
    char *d = frit_cg_default_cache_dir();
    if (d) out->cache_dir = ctx_strdup(ctx, d);
    free(d);
  }
  if (!out->cc || !out->cflags) return frit_set_error(ctx, FRIT_ERR_NOMEM, "codegen: out of memory");
  return FRIT_OK;
}

/* ---------- shell helpers ---------- */

/* Appends s in single quotes for /bin/sh. */
static void sh_quote(cg_str *o, const char *s) {
  cg_puts(o, "'");
  for (; *s; s++) {
    if (*s == '\'') cg_puts(o, "'\\''");
    else {
      char c[2] = {*s, 0};
      cg_puts(o, c);
    }
  }
  cg_puts(o, "'");
}

/* Runs a shell command, capturing up to cap-1 bytes of its output; returns the exit status. */
static int run_capture(const char *cmd, char *buf, size_t cap) {
  FILE *f = popen(cmd, "r");
  if (!f) {
    snprintf(buf, cap, "cannot run: %s", strerror(errno));
    return -1;
  }
  size_t n = 0;
  int c;
  while ((c = fgetc(f)) != EOF)
    if (n + 1 < cap) buf[n++] = (char)c;
  buf[n] = 0;
  int st = pclose(f);
  return st;
}

/* `cc --version` costs a process (3-4 ms: most of a disk-cache hit), so its first line is kept
 * for the whole process, per compiler string, besides the ctx's own copy that callers read. */
static pthread_mutex_t versions_lock = PTHREAD_MUTEX_INITIALIZER;
static struct { char cc[256], line[512]; } versions[8];
static int nversions;

static const char *compiler_version(frit_ctx *ctx, const char *cc) {
  cg_state *s = state_of(ctx);
  if (s && s->version && s->ver_cc && strcmp(s->ver_cc, cc) == 0) return s->version;
  char out[512];
  out[0] = 0;
  bool known = false;
  pthread_mutex_lock(&versions_lock);
  for (int i = 0; i < nversions && !known; i++)
    if (strcmp(versions[i].cc, cc) == 0) snprintf(out, sizeof out, "%s", versions[i].line), known = true;
  pthread_mutex_unlock(&versions_lock);
  if (!known) {
    cg_str cmd = {0};
    cg_puts(&cmd, cc); /* cc may carry arguments (e.g. "ccache gcc"): not quoted */
    cg_puts(&cmd, " --version 2>&1");
    if (cmd.s) run_capture(cmd.s, out, sizeof out);
    cg_free(&cmd);
    char *nl = strchr(out, '\n');
    if (nl) *nl = 0;
    pthread_mutex_lock(&versions_lock);
    if (out[0] && strlen(cc) < sizeof versions[0].cc && strlen(out) < sizeof versions[0].line &&
        nversions < (int)(sizeof versions / sizeof versions[0])) {
      snprintf(versions[nversions].cc, sizeof versions[0].cc, "%s", cc);
      snprintf(versions[nversions].line, sizeof versions[0].line, "%s", out);
      nversions++;
    }
    pthread_mutex_unlock(&versions_lock);
  }
  if (!s) return "";
  free(s->version);
  free(s->ver_cc);
  s->version = malloc(strlen(out) + 1);
  s->ver_cc = malloc(strlen(cc) + 1);
  if (!s->version || !s->ver_cc) {
    free(s->version), free(s->ver_cc);
    s->version = s->ver_cc = NULL;
    return "";
  }
  strcpy(s->version, out);
  strcpy(s->ver_cc, cc);
  return s->version;
}

uint64_t frit_cg_hash(uint64_t h, const char *s) {
  for (; *s; s++) h = (h ^ (uint8_t)*s) * UINT64_C(0x100000001b3);
  return (h ^ 0xff) * UINT64_C(0x100000001b3); /* a separator, so fields cannot run together */
}

int frit_cg_make_dirs(const char *dir) {
  char buf[4096];
  if (strlen(dir) >= sizeof buf) return -1;
  strcpy(buf, dir);
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) return -1;
    *p = '/';
  }
  if (mkdir(buf, 0755) != 0 && errno != EEXIST) return -1;
  return 0;
}

static bool write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  size_t n = strlen(text);
  bool ok = fwrite(text, 1, n, f) == n;
  return fclose(f) == 0 && ok;
}

/* ---------- compile ---------- */

static frit_status load_symbols(frit_ctx *ctx, frit_cg_program *p) {
  for (int k = 0; k < p->nkernels; k++) {
    void *sym = dlsym(p->handle, p->kernels[k].fn_name);
    if (!sym) return frit_set_error(ctx, FRIT_ERR_RUNTIME, "codegen: symbol %s missing from the compiled object", p->kernels[k].fn_name);
    /* the ISO C cast from object to function pointer goes through memcpy */
    memcpy(&p->kernels[k].fn, &sym, sizeof sym);
  }
  return FRIT_OK;
}

static frit_status remember(frit_ctx *ctx, uint64_t hash, void *handle) {
  cg_state *s = state_of(ctx);
  if (!s) {
    dlclose(handle);
    return frit_set_error(ctx, FRIT_ERR_NOMEM, "codegen: out of memory");
  }
  if (s->nloaded == s->cap) {
    int cap = s->cap ? 2 * s->cap : 8;
    cg_loaded *l = realloc(s->loaded, (size_t)cap * sizeof *l);
    if (!l) {
      dlclose(handle);
      return frit_set_error(ctx, FRIT_ERR_NOMEM, "codegen: out of memory");
    }
    s->loaded = l, s->cap = cap;
  }
  s->loaded[s->nloaded++] = (cg_loaded){hash, handle};
  return FRIT_OK;
}

/* The first lines of the compiler's output, for the error message. */
static void first_lines(char *s, int nlines) {
  for (char *p = s; *p; p++)
    if (*p == '\n' && --nlines == 0) {
      *p = 0;
      return;
    }
}

/* Flags the prelude reads: FRIT_OMP_SIMD where `omp declare simd` takes effect, so that a
 * vector loop may call the prelude's hand-written vector exp (gcc defines no macro for it). */
static const char *prelude_defines(const frit_cg_config *cfg) {
  return strstr(cfg->cflags, "-fopenmp") ? " -DFRIT_OMP_SIMD" : "";
}

/* ---------- a large program compiled in parts, in parallel ---------- */

/* Kernel text a part should at least have: below it, a compiler process (start-up and the
 * prelude, ~50 ms) costs more than the parallelism saves. */
enum { PART_MIN_BYTES = 24 * 1024, PART_MAX = 16 };

/* How many translation units to compile p in: one per core ($FRIT_CC_JOBS overrides; 1: one
 * unit), fewer when the kernels' text is small. */
static int split_parts(const frit_cg_program *p) {
  if (p->nkernels < 2 || !p->prelude_len) return 1;
  const char *env = env_nonempty("FRIT_CC_JOBS");
  long jobs = env ? atol(env) : sysconf(_SC_NPROCESSORS_ONLN);
  size_t text = p->kernels[p->nkernels - 1].src_end - p->kernels[0].src_begin;
  long by_size = (long)(text / PART_MIN_BYTES);
  long n = jobs < by_size ? jobs : by_size;
  if (n > p->nkernels) n = p->nkernels;
  return n < 2 ? 1 : n > PART_MAX ? PART_MAX : (int)n;
}

static void part_path(char *out, size_t cap, const char *tmp_c, int i, const char *ext) {
  snprintf(out, cap, "%.*s.part%d.%s", (int)(strlen(tmp_c) - 2), tmp_c, i, ext);
}

/* Writes the parts (the prelude and a run of consecutive kernels of about equal text each) and
 * the shell command that compiles them at once and links them into tmp_so; false on failure
 * (the caller then compiles the one unit). */
static bool compile_parts_cmd(cg_str *cmd, const frit_cg_program *p, const frit_cg_config *cfg, const char *tmp_c,
                              const char *tmp_so, int parts) {
  size_t total = p->kernels[p->nkernels - 1].src_end - p->kernels[0].src_begin, done = 0;
  int k = 0;
  char path[4400];
  for (int i = 0; i < parts; i++) {
    part_path(path, sizeof path, tmp_c, i, "c");
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    bool ok = fwrite(p->source, 1, p->prelude_len, f) == p->prelude_len;
    /* kernels until this part's share of the text; the last part takes the rest */
    size_t goal = total * (size_t)(i + 1) / (size_t)parts;
    do {
      const frit_cg_kernel *K = &p->kernels[k];
      size_t n = K->src_end - K->src_begin;
      ok = ok && fwrite(p->source + K->src_begin, 1, n, f) == n;
      done += n;
      k++;
    } while (k < p->nkernels && (done < goal || i == parts - 1) && p->nkernels - k > parts - 1 - i);
    if (fclose(f) != 0 || !ok) return false;
    cg_printf(cmd, "%s %s%s -fPIC -c -o ", cfg->cc, cfg->cflags, prelude_defines(cfg));
    part_path(path, sizeof path, tmp_c, i, "o");
    sh_quote(cmd, path);
    cg_puts(cmd, " ");
    part_path(path, sizeof path, tmp_c, i, "c");
    sh_quote(cmd, path);
    cg_printf(cmd, " 2>&1 & p%d=$!; ", i);
  }
  if (k != p->nkernels) return false;
  /* every part waited for (none left running), then linked when all succeeded */
  cg_puts(cmd, "ok=0; ");
  for (int i = 0; i < parts; i++) cg_printf(cmd, "wait $p%d || ok=1; ", i);
  cg_printf(cmd, "[ $ok = 0 ] && %s %s -fPIC -shared -o ", cfg->cc, cfg->cflags);
  sh_quote(cmd, tmp_so);
  for (int i = 0; i < parts; i++) {
    part_path(path, sizeof path, tmp_c, i, "o");
    cg_puts(cmd, " ");
    sh_quote(cmd, path);
  }
  cg_puts(cmd, " -lm 2>&1");
  return !cmd->oom;
}

static void remove_parts(const char *tmp_c, int parts) {
  char path[4400];
  for (int i = 0; i < parts; i++) {
    part_path(path, sizeof path, tmp_c, i, "c");
    unlink(path);
    part_path(path, sizeof path, tmp_c, i, "o");
    unlink(path);
  }
}

static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;
static char cpu_model[256] = "unknown", cpu_key[320];

static void read_cpu(void) {
  uint64_t flags = UINT64_C(0xcbf29ce484222325);
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[4096];
  bool model = false, feats = false;
  while (f && fgets(line, sizeof line, f) && !(model && feats)) {
    const char *c = strchr(line, ':');
    if (!c) continue;
    for (c++; *c == ' '; c++) {}
    if (!model && strncmp(line, "model name", 10) == 0) {
      snprintf(cpu_model, sizeof cpu_model, "%s", c);
      cpu_model[strcspn(cpu_model, "\n")] = 0;
      model = true;
    } else if (!feats && (strncmp(line, "flags", 5) == 0 || strncmp(line, "Features", 8) == 0)) {
      flags = frit_cg_hash(flags, c); /* a long line: its first 4 KB, which hold the ISA flags */
      feats = true;
    }
  }
  if (f) fclose(f);
  const char *env = env_nonempty("FRIT_CPU_KEY");
  if (env) snprintf(cpu_key, sizeof cpu_key, "%s", env);
  else snprintf(cpu_key, sizeof cpu_key, "%s/%016" PRIx64, cpu_model, flags);
}

const char *frit_cg_cpu_model(void) {
  pthread_once(&cpu_once, read_cpu);
  return cpu_model;
}

const char *frit_cg_cpu_key(void) {
  pthread_once(&cpu_once, read_cpu);
  return cpu_key;
}

frit_status frit_codegen_compile(frit_ctx *ctx, frit_cg_program *p, const frit_cg_config *cfg) {
  if (!p || !cfg || !p->source) return frit_set_error(ctx, FRIT_ERR_INVALID, "codegen: compile of NULL program");
  const char *ver = compiler_version(ctx, cfg->cc);
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  h = frit_cg_hash(h, p->source);
  h = frit_cg_hash(h, cfg->cc);
  h = frit_cg_hash(h, cfg->cflags);
  h = frit_cg_hash(h, ver);
  /* -march=native code runs on this CPU only: the key keeps another machine's kernels apart */
  if (strstr(cfg->cflags, "native")) h = frit_cg_hash(h, frit_cg_cpu_key());
  p->hash = h;
  cg_state *s = state_of(ctx);
  if (!s) return frit_set_error(ctx, FRIT_ERR_NOMEM, "codegen: out of memory");
  for (int i = 0; i < s->nloaded; i++)
    if (s->loaded[i].hash == h) {
      p->handle = s->loaded[i].handle;
      p->cache_hit = 2;
      return load_symbols(ctx, p);
    }

  /* on disk: <dir>/frit-<hash>.so; without a usable cache dir, a private temporary dir */
  char dir[4096], final_so[4200], tmp_c[4200], tmp_so[4200];
  bool private_dir = false;
  if (cfg->cache_dir && strlen(cfg->cache_dir) < 4000 && frit_cg_make_dirs(cfg->cache_dir) == 0 &&
      access(cfg->cache_dir, W_OK) == 0) {
    snprintf(dir, sizeof dir, "%s", cfg->cache_dir);
  } else {
    const char *t = env_nonempty("TMPDIR");
    snprintf(dir, sizeof dir, "%s/frit-XXXXXX", t ? t : "/tmp");
    if (!mkdtemp(dir)) return frit_set_error(ctx, FRIT_ERR_RUNTIME, "codegen: cannot create a directory for compiling: %s", strerror(errno));
    private_dir = true;
  }
  snprintf(final_so, sizeof final_so, "%s/frit-%016" PRIx64 ".so", dir, h);
  void *handle = NULL;
  if (!private_dir && access(final_so, R_OK) == 0) {
    handle = dlopen(final_so, RTLD_NOW | RTLD_LOCAL);
    if (handle) p->cache_hit = 1;
  }
  if (!handle) {
    static unsigned counter;
    unsigned uniq = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
    snprintf(tmp_c, sizeof tmp_c, "%s/frit-%016" PRIx64 ".%ld.%u.tmp.c", dir, h, (long)getpid(), uniq);
    snprintf(tmp_so, sizeof tmp_so, "%s/frit-%016" PRIx64 ".%ld.%u.tmp.so", dir, h, (long)getpid(), uniq);
    if (!write_file(tmp_c, p->source)) {
      frit_status st = frit_set_error(ctx, FRIT_ERR_RUNTIME, "codegen: cannot write %s: %s", tmp_c, strerror(errno));
      unlink(tmp_c);
      if (private_dir) rmdir(dir);
      return st;
    }
    cg_str cmd = {0};
    int parts = split_parts(p);
    if (parts > 1 && !compile_parts_cmd(&cmd, p, cfg, tmp_c, tmp_so, parts)) {
      remove_parts(tmp_c, parts);
      parts = 1;
    }
    if (parts <= 1) {
      cg_free(&cmd);
      cg_printf(&cmd, "%s %s%s -fPIC -shared -o ", cfg->cc, cfg->cflags, prelude_defines(cfg));
      sh_quote(&cmd, tmp_so);
      cg_puts(&cmd, " ");
      sh_quote(&cmd, tmp_c);
      cg_puts(&cmd, " -lm 2>&1");
    }
    char out[4096];
    int rc = cmd.s ? run_capture(cmd.s, out, sizeof out) : -1;
    if (parts > 1) remove_parts(tmp_c, parts);
    if (rc != 0) {
      first_lines(out, 12);
      frit_status st = frit_set_error(ctx, FRIT_ERR_RUNTIME, "codegen: compiling with '%s %s' failed:\n%s",
                                      cfg->cc, cfg->cflags, out);
      cg_free(&cmd);
      unlink(tmp_c);
      unlink(tmp_so);
      if (private_dir) rmdir(dir);
      return st;
    }
    cg_free(&cmd);
    /* rename is atomic: a concurrent process sees the whole object or none; the source is
       kept beside it for inspection */
    if (rename(tmp_so, final_so) != 0) {
      frit_status st = frit_set_error(ctx, FRIT_ERR_RUNTIME, "codegen: cannot rename %s: %s", tmp_so, strerror(errno));
      unlink(tmp_c);
      unlink(tmp_so);
      if (private_dir) rmdir(dir);
      return st;
    }
    char final_c[4200];
    snprintf(final_c, sizeof final_c, "%s/frit-%016" PRIx64 ".c", dir, h);
    if (private_dir || rename(tmp_c, final_c) != 0) unlink(tmp_c);
    handle = dlopen(final_so, RTLD_NOW | RTLD_LOCAL);
    p->cache_hit = 0;
    if (private_dir) {
      unlink(final_so); /* the mapping stays valid */
      rmdir(dir);
    }
    if (!handle) return frit_set_error(ctx, FRIT_ERR_RUNTIME, "codegen: dlopen failed: %s", dlerror());
  }
  frit_status st = remember(ctx, h, handle);
  if (st != FRIT_OK) return st;
  p->handle = handle;
  return load_symbols(ctx, p);
}

/* ---------- generation ---------- */

frit_cg_program *frit_codegen_generate(frit_ctx *ctx, frit_uop *const *asts, const char *const *names, int nkernels,
                                       frit_uop *const *vars, int nvars) {
  return frit_codegen_generate_alias(ctx, asts, names, nkernels, vars, nvars, NULL);
}

frit_cg_program *frit_codegen_generate_alias(frit_ctx *ctx, frit_uop *const *asts, const char *const *names,
                                             int nkernels, frit_uop *const *vars, int nvars,
                                             const uint64_t *alias_masks) {
  return frit_codegen_generate_for(ctx, asts, names, nkernels, vars, nvars, alias_masks, FRIT_DIALECT_C);
}

static const char *dialect_name(frit_dialect d) {
  switch (d) {
  case FRIT_DIALECT_C: return "C";
  case FRIT_DIALECT_OPENCL: return "OpenCL";
  case FRIT_DIALECT_CUDA: return "CUDA";
  }
  return "?";
}

/* Devices have no complex arithmetic in their kernel languages (yet): say so by name. */
static bool device_dtypes_ok(frit_ctx *ctx, frit_uop *ast, frit_dialect d) {
  if (d == FRIT_DIALECT_C) return true;
  size_t n = 0;
  frit_uop **nodes = frit_walk_topo(ast, &n);
  if (!nodes) return frit_set_error(ctx, FRIT_ERR_NOMEM, "codegen: out of memory"), false;
  bool ok = true;
  for (size_t i = 0; i < n && ok; i++) {
    frit_scalar_kind k = frit_dtype_kind(nodes[i]->dtype);
    if (k == FRIT_C64 || k == FRIT_C128) {
      frit_set_error(ctx, FRIT_ERR_INVALID, "codegen: complex dtypes (%s) are not supported by the %s backend yet",
                     k == FRIT_C64 ? "complex64" : "complex128", dialect_name(d));
      ok = false;
    }
  }
  free(nodes);
  return ok;
}

/* Appends a device kernel's second or third rendering (text, freed here) to the program's source
 * and returns its function name kept in the ctx; NULL on out of memory (error set). */
static const char *append_variant(frit_ctx *ctx, cg_str *src, char *text, const char *fn, int k, const char *name,
                                  const char *what) {
  cg_printf(src, "\n/* kernel %d: %s, %s */\n", k, name, what);
  cg_puts(src, text);
  free(text);
  const char *kept = ctx_strdup(ctx, fn);
  if (!kept) frit_set_error(ctx, FRIT_ERR_NOMEM, "codegen: out of memory");
  return kept;
}

/* choices: NULL, or one a kernel */
static frit_cg_program *generate(frit_ctx *ctx, frit_uop *const *asts, const char *const *names, int nkernels,
                                 frit_uop *const *vars, int nvars, const uint64_t *alias_masks, frit_dialect dialect,
                                 const frit_cg_choices *choices);

frit_cg_program *frit_codegen_generate_for(frit_ctx *ctx, frit_uop *const *asts, const char *const *names,
                                           int nkernels, frit_uop *const *vars, int nvars,
                                           const uint64_t *alias_masks, frit_dialect dialect) {
  return generate(ctx, asts, names, nkernels, vars, nvars, alias_masks, dialect, NULL);
}

frit_cg_program *frit_codegen_generate_choices(frit_ctx *ctx, frit_uop *const *asts, const char *const *names,
                                               int nkernels, frit_uop *const *vars, int nvars,
                                               const uint64_t *alias_masks, const frit_cg_choices *choices) {
  return generate(ctx, asts, names, nkernels, vars, nvars, alias_masks, FRIT_DIALECT_C, choices);
}

static frit_cg_program *generate(frit_ctx *ctx, frit_uop *const *asts, const char *const *names, int nkernels,
                                 frit_uop *const *vars, int nvars, const uint64_t *alias_masks, frit_dialect dialect,
                                 const frit_cg_choices *choices) {
  if (nkernels < 0 || (nkernels > 0 && !asts)) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "codegen: bad kernel list");
    return NULL;
  }
  frit_cg_program *p = frit_arena_alloc(&ctx->arena, sizeof *p);
  frit_cg_kernel *ks = frit_arena_alloc(&ctx->arena, (size_t)(nkernels ? nkernels : 1) * sizeof *ks);
  if (!p || !ks) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "codegen: out of memory");
    return NULL;
  }
  memset(p, 0, sizeof *p);
  memset(ks, 0, (size_t)(nkernels ? nkernels : 1) * sizeof *ks);
  p->nkernels = nkernels;
  p->kernels = ks;
  cg_str src = {0}; /* the kernels; the prelude goes in front once they are known */
  for (int k = 0; k < nkernels; k++) {
    frit_cg_kernel *K = &ks[k];
    char fn[32];
    snprintf(fn, sizeof fn, "frit_k%d", k);
    K->ast = asts[k];
    K->fn_name = ctx_strdup(ctx, fn);
    K->name = ctx_strdup(ctx, names && names[k] ? names[k] : fn);
    if (!K->fn_name || !K->name) {
      frit_set_error(ctx, FRIT_ERR_NOMEM, "codegen: out of memory");
      cg_free(&src);
      return NULL;
    }
    /* structured (explicit) kernels: rendered statement by statement (structured.c) */
    bool structured = cg_is_structured(asts[k]);
    if (!device_dtypes_ok(ctx, asts[k], dialect)) {
      char msg[512];
      snprintf(msg, sizeof msg, "%s", frit_error(ctx));
      frit_set_error(ctx, FRIT_ERR_INVALID, "kernel %d (%s): %s", k, K->name, msg);
      cg_free(&src);
      return NULL;
    }
    frit_uop *unflat = NULL;
    K->opt = structured ? asts[k] : cg_optimize(ctx, asts[k], &K->g0_extent, dialect, &unflat, choices ? &choices[k] : NULL);
    if (!K->opt) {
      cg_free(&src);
      return NULL;
    }
    char *lin = NULL;
    char *text = structured ? cg_render_structured(ctx, asts[k], fn, vars, nvars, dialect, &K->g0_extent)
                            : frit_codegen_render_kernel(ctx, K->opt, fn, vars, nvars,
                                                         alias_masks ? alias_masks[k] : 0, dialect, &lin, NULL, NULL);
    if (!text) {
      char msg[1024];
      snprintf(msg, sizeof msg, "%s", frit_error(ctx));
      frit_set_error(ctx, frit_last_status(ctx) != FRIT_OK ? frit_last_status(ctx) : FRIT_ERR_INVALID,
                     "kernel %d (%s): %s", k, K->name, msg);
      cg_free(&src);
      return NULL;
    }
    K->linear = lin ? ctx_strdup(ctx, lin) : structured ? ctx_strdup(ctx, text) : "";
    free(lin);
    K->src_begin = src.n;
    cg_printf(&src, "\n/* kernel %d: %s */\n", k, K->name);
    cg_puts(&src, text);
    free(text);
    K->src_end = src.n;
    if (dialect != FRIT_DIALECT_C && !structured) {
      /* the work-group rendering, when the kernel has a long reduction to share */
      snprintf(fn, sizeof fn, "frit_k%d_g", k);
      char *gtext = frit_codegen_render_kernel(ctx, K->opt, fn, vars, nvars, alias_masks ? alias_masks[k] : 0, dialect,
                                               NULL, &K->group, &K->group_trip);
      if (!gtext && K->group) {
        cg_free(&src);
        return NULL;
      }
      if (gtext && !(K->fn_name_group = append_variant(ctx, &src, gtext, fn, k, K->name, "a work-group a point"))) {
        cg_free(&src);
        return NULL;
      }
      /* the tiled rendering, when the kernel is a contraction (linear_tile.c) */
      snprintf(fn, sizeof fn, "frit_k%d_t", k);
      char *ttext = NULL;
      if (unflat && frit_codegen_render_tiled(ctx, unflat, fn, vars, nvars, alias_masks ? alias_masks[k] : 0, dialect,
                                              &ttext, &K->tile) != FRIT_OK) {
        cg_free(&src);
        return NULL;
      }
      if (ttext && !(K->fn_name_tile = append_variant(ctx, &src, ttext, fn, k, K->name, "a work-group an output tile"))) {
        cg_free(&src);
        return NULL;
      }
    }
  }
  cg_str full = {0};
  cg_put_prelude(&full, dialect, dialect == FRIT_DIALECT_C ? cg_vector_clones_used(src.s) : 0);
  p->prelude_len = full.n;
  if (src.s) cg_puts(&full, src.s);
  if (src.oom) full.oom = true;
  cg_free(&src);
  for (int k = 0; k < nkernels; k++) ks[k].src_begin += p->prelude_len, ks[k].src_end += p->prelude_len;
  char *s = cg_take(&full);
  if (!s) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "codegen: out of memory");
    return NULL;
  }
  p->source = ctx_strdup(ctx, s);
  free(s);
  if (!p->source) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "codegen: out of memory");
    return NULL;
  }
  return p;
}

frit_status frit_codegen_print(frit_ctx *ctx, const frit_cg_program *p, const char *stage, int k, FILE *out) {
  if (!p || !stage || !out) return frit_set_error(ctx, FRIT_ERR_INVALID, "codegen: print: NULL argument");
  bool lin = strcmp(stage, "linear") == 0;
  if (!lin && strcmp(stage, "optimized") != 0)
    return frit_set_error(ctx, FRIT_ERR_INVALID, "codegen: unknown stage '%s' (optimized, linear)", stage);
  if (k < -1 || k >= p->nkernels) return frit_set_error(ctx, FRIT_ERR_INVALID, "codegen: no kernel %d", k);
  for (int i = 0; i < p->nkernels; i++) {
    if (k >= 0 && i != k) continue;
    fprintf(out, "# kernel %d: %s\n", i, p->kernels[i].name);
    if (lin) fputs(p->kernels[i].linear, out);
    else if (frit_print_listing(ctx, p->kernels[i].opt, out) != FRIT_OK) return frit_last_status(ctx);
  }
  return FRIT_OK;
}

frit_status frit_codegen_info(frit_ctx *ctx, const frit_cg_config *cfg, FILE *out) {
  fprintf(out, "cc: %s\ncflags: %s\ncache: %s\ncompiler: %s\n", cfg->cc, cfg->cflags,
          cfg->cache_dir ? cfg->cache_dir : "(none: a temporary directory per compile)", compiler_version(ctx, cfg->cc));
  return FRIT_OK;
}

frit_status frit_codegen_cache_clear(frit_ctx *ctx, const char *dir) {
  char *def = NULL;
  if (!dir) dir = def = frit_cg_default_cache_dir();
  if (!dir) return FRIT_OK;
  DIR *d = opendir(dir);
  if (!d) {
    free(def);
    return errno == ENOENT ? FRIT_OK : frit_set_error(ctx, FRIT_ERR_RUNTIME, "codegen: cannot open cache dir: %s", strerror(errno));
  }
  struct dirent *e;
  frit_status st = FRIT_OK;
  while ((e = readdir(d))) {
    const char *n = e->d_name;
    size_t len = strlen(n);
    if (strncmp(n, "frit-", 5) != 0) continue;
    if (!(len > 3 && (strcmp(n + len - 3, ".so") == 0 || strcmp(n + len - 2, ".c") == 0))) continue;
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, n);
    if (unlink(path) != 0 && errno != ENOENT)
      st = frit_set_error(ctx, FRIT_ERR_RUNTIME, "codegen: cannot remove %s: %s", path, strerror(errno));
  }
  closedir(d);
  free(def);
  return st;
}

frit_cg_program *frit_codegen_generate_fixed(frit_ctx *ctx, frit_uop *ast, const char *name, frit_uop *const *vars,
                                             int nvars, const int64_t *values, const uint8_t *fixed,
                                             uint64_t alias_mask, const frit_cg_choices *choices) {
  frit_uop *from[64], *to[64];
  int n = 0;
  for (int v = 0; v < nvars; v++) {
    if (!fixed[v]) continue;
    if (n == 64) {
      frit_set_error(ctx, FRIT_ERR_INVALID, "codegen: more than 64 fixed variables");
      return NULL;
    }
    from[n] = vars[v];
    to[n] = frit_const_int(ctx, vars[v]->dtype, values[v]);
    if (!to[n++]) return NULL;
  }
  frit_uop *fixed_ast = cg_subst(ctx, ast, from, to, n);
  if (fixed_ast) fixed_ast = frit_simplify(ctx, fixed_ast);
  if (!fixed_ast) {
    if (frit_last_status(ctx) == FRIT_OK) frit_set_error(ctx, FRIT_ERR_INVALID, "codegen: cannot fix the sizes");
    return NULL;
  }
  if (frit_verify(ctx, fixed_ast) != FRIT_OK) return NULL;
  return generate(ctx, &fixed_ast, &name, 1, vars, nvars, &alias_mask, FRIT_DIALECT_C, choices);
}
