/* The autotuner from C (src/runtime/tune.c): a search on a static-shape matmul computes the same
 * product as plain C loops, stores its tuning, and a later context uses the stored tuning without
 * searching. Runs under the sanitizers in CI: the search's scratch copies and candidates. */
#include <dirent.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "frit.h"

enum { M = 150, K = 130, N = 96 }; /* 1.9M multiply-adds: a variant on the second run */

static float av[M * K], bv[K * N], cv[M * N];

static int wrong_elements(void) {
  int bad = 0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double want = 0;
      for (int k = 0; k < K; k++) want += (double)av[i * K + k] * bv[k * N + j];
      bad += fabs(cv[i * N + j] - want) > 1e-4 * (1 + fabs(want));
    }
  return bad;
}

/* Compiles and runs a @ b twice in a fresh context; returns the program's info text (malloc'd). */
static char *run_matmul(const char *cache_dir) {
  frit_ctx *ctx = frit_ctx_new();
  int64_t ad[2] = {M, K}, bd[2] = {K, N};
  frit_tensor *a = frit_input(ctx, "a", FRIT_F32, 2, ad), *b = frit_input(ctx, "b", FRIT_F32, 2, bd);
  frit_tensor *c = frit_matmul(ctx, a, b);
  frit_compile_opts opts = {0};
  opts.cache_dir = cache_dir;
  opts.threads = 2;
  frit_program *p = frit_compile(ctx, &c, 1, &opts);
  CHECK(p != NULL);
  char *text = NULL;
  size_t len = 0;
  if (p) {
    void *in[2] = {av, bv}, *out[1] = {cv};
    for (int r = 0; r < 2; r++) {
      memset(cv, 0, sizeof cv);
      CHECK_EQ_INT(frit_program_run(p, in, out, NULL, 0), FRIT_OK);
      CHECK_EQ_INT(wrong_elements(), 0);
    }
    FILE *f = open_memstream(&text, &len);
    if (f) {
      frit_program_info(p, f);
      fclose(f);
    }
  }
  frit_ctx_free(ctx);
  return text;
}

static int count_tunings(const char *dir, bool remove) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    n++;
    if (remove) {
      char path[4400];
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      unlink(path);
    }
  }
  closedir(d);
  return n;
}

int main(void) {
  for (int i = 0; i < M * K; i++) av[i] = (float)((i * 37 % 101) - 50) / 50.0f;
  for (int i = 0; i < K * N; i++) bv[i] = (float)((i * 53 % 97) - 48) / 48.0f;
  char cache_dir[256], tune_dir[300];
  snprintf(cache_dir, sizeof cache_dir, "/tmp/frit-test-tune-%ld", (long)getpid());
  snprintf(tune_dir, sizeof tune_dir, "%s/tune", cache_dir);
  mkdir(cache_dir, 0755);

  setenv("FRIT_TUNE", "1", 1);
  setenv("FRIT_TUNE_ROUNDS", "1", 1);
  setenv("FRIT_TUNE_BEAM", "1", 1);
  char *info = run_matmul(cache_dir);
  CHECK(info && strstr(info, "tuned now:"));
  if (info && !strstr(info, "tuned now:")) fprintf(stderr, "%s", info);
  free(info);
  CHECK(count_tunings(tune_dir, false) >= 1);

  unsetenv("FRIT_TUNE");
  info = run_matmul(cache_dir);
  CHECK(info && strstr(info, "tuned earlier:"));
  free(info);

  /* forced choices that do not fit this kernel fall back to the heuristics, still correct */
  setenv("FRIT_TUNE_FORCE", "rows=8 vecs=2 block=64", 1);
  info = run_matmul(cache_dir);
  CHECK(info && strstr(info, "forced:"));
  free(info);
  unsetenv("FRIT_TUNE_FORCE");

  count_tunings(tune_dir, true);
  rmdir(tune_dir);
  frit_ctx *ctx = frit_ctx_new();
  frit_cache_clear(ctx, cache_dir);
  frit_ctx_free(ctx);
  rmdir(cache_dir);
  CHECK_DONE();
}
