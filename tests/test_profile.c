/* The profiler's C API: trace events of a known program against bytes, FLOPs and call sites
 * worked out here by hand, the summary of the saved trace, and recording only between start/stop. */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "frit.h"

/* A trace path of this process under $TMPDIR (the build directory may not be the cwd). */
static const char *tmp_path(const char *tag) {
  static char buf[2][512];
  static int n;
  const char *dir = getenv("TMPDIR");
  char *b = buf[n++ % 2];
  snprintf(b, sizeof buf[0], "%s/frit_test_profile_%d_%s.json", dir && *dir ? dir : "/tmp", (int)getpid(), tag);
  return b;
}

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
  if (s) s[n] = 0;
  fclose(f);
  return s;
}

/* Occurrences of needle in s. */
static int count(const char *s, const char *needle) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, needle)); p++) n++;
  return n;
}

/* The sum of the "dur" of events whose text (up to the next "dur") contains cat. */
static double sum_dur(const char *s, const char *cat) {
  double sum = 0;
  for (const char *p = s; (p = strstr(p, cat)); p++) {
    const char *d = strstr(p, "\"dur\":");
    if (d) sum += strtod(d + 6, NULL);
  }
  return sum;
}

static void test_elementwise_trace(void) {
  enum { N = 4096, RUNS = 3 };
  frit_ctx *ctx = frit_ctx_new();
  int64_t dims[1] = {N};
  frit_profile_start();
  frit_tensor *x = frit_input(ctx, "x", FRIT_F32, 1, dims);
  frit_tensor *y = frit_input(ctx, "y", FRIT_F32, 1, dims);
  frit_tensor *z = frit_binary_t(ctx, FRIT_BF_MUL, x, y);
  int site_line = __LINE__ + 1;
  CHECK_EQ_INT(FRIT_PROFILE_SITE(ctx, z), FRIT_OK);
  frit_program *p = frit_compile(ctx, &z, 1, NULL);
  CHECK(p != NULL);
  static float xv[N], yv[N], zv[N];
  for (int i = 0; i < N; i++) xv[i] = (float)i, yv[i] = 2.0f;
  void *in[2] = {xv, yv}, *out[1] = {zv};
  double t0 = now_us();
  for (int r = 0; r < RUNS && p; r++) CHECK_EQ_INT(frit_program_run(p, in, out, NULL, 0), FRIT_OK);
  double wall = now_us() - t0;
  CHECK(zv[7] == 14.0f);
  frit_profile_stop();
  size_t nev = frit_profile_event_count();
  if (p) CHECK_EQ_INT(frit_program_run(p, in, out, NULL, 0), FRIT_OK);
  CHECK_EQ_INT(frit_profile_event_count(), nev); /* stopped: nothing more */
  const char *path = tmp_path("trace");
  CHECK_EQ_INT(frit_profile_save(ctx, path), FRIT_OK);
  char *s = slurp(path);
  CHECK(s != NULL);
  if (s) {
    CHECK(strncmp(s, "{\"traceEvents\":[", 16) == 0);
    CHECK_EQ_INT(count(s, "\"cat\":\"kernel\""), RUNS);
    char want[64];
    /* x*y over N float32: reads both inputs, writes the output, one multiply per element */
    snprintf(want, sizeof want, "\"bytes_read\":%d,\"bytes_written\":%d,\"flops\":%d", 2 * N * 4, N * 4, N);
    CHECK_EQ_INT(count(s, want), RUNS);
    snprintf(want, sizeof want, "test_profile.c:%d\"", site_line);
    CHECK_EQ_INT(count(s, want), RUNS);
    CHECK(count(s, "\"name\":\"schedule\",\"cat\":\"compile\"") == 1);
    CHECK(count(s, "\"name\":\"codegen\",\"cat\":\"compile\"") == 1);
    double kd = sum_dur(s, "\"cat\":\"kernel\"");
    CHECK(kd > 0 && kd <= wall);
    CHECK(count(s, "\"dur\":-") == 0);
    CHECK(strstr(s, "\"copy_gbps\":") && strstr(s, "\"fma_gflops\":"));
    free(s);
  }
  /* the summary reads the trace back */
  FILE *f = tmpfile();
  CHECK_EQ_INT(frit_profile_summary(ctx, path, f), FRIT_OK);
  if (f) {
    rewind(f);
    char buf[4096] = "";
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    const char *kname = p ? frit_program_kernel_name(p, 0) : "?";
    CHECK(strstr(buf, "1 kernels") != NULL);
    const char *row = strstr(buf, kname);
    CHECK(row != NULL);
    int calls = 0;
    if (row) sscanf(row + strlen(kname), "%d", &calls);
    CHECK_EQ_INT(calls, RUNS);
    CHECK(strstr(buf, "schedule") != NULL);
    fclose(f);
  }
  remove(path);
  frit_ctx_free(ctx);
}

/* a (M x K) @ b (K x N): 2*M*N*K FLOPs (a multiply and an add per term) */
static void test_matmul_flops(void) {
  enum { M = 8, K = 16, N = 4 };
  frit_ctx *ctx = frit_ctx_new();
  int64_t ad[2] = {M, K}, bd[2] = {K, N};
  frit_tensor *a = frit_input(ctx, "a", FRIT_F32, 2, ad);
  frit_tensor *b = frit_input(ctx, "b", FRIT_F32, 2, bd);
  frit_tensor *c = frit_matmul(ctx, a, b);
  frit_program *p = frit_compile(ctx, &c, 1, NULL);
  CHECK(p != NULL);
  static float av[M * K], bv[K * N], cv[M * N];
  void *in[2] = {av, bv}, *out[1] = {cv};
  frit_profile_start();
  if (p) CHECK_EQ_INT(frit_program_run(p, in, out, NULL, 0), FRIT_OK);
  frit_profile_stop();
  const char *path = tmp_path("mm");
  CHECK_EQ_INT(frit_profile_save(ctx, path), FRIT_OK);
  char *s = slurp(path);
  char want[64];
  snprintf(want, sizeof want, "\"flops\":%d,", 2 * M * N * K);
  CHECK(s && count(s, want) == 1);
  snprintf(want, sizeof want, "\"bytes_read\":%d,\"bytes_written\":%d,", (M * K + K * N) * 4, M * N * 4);
  CHECK(s && count(s, want) == 1);
  if (s && !count(s, want)) fprintf(stderr, "%s\n", s);
  free(s);
  remove(path);
  frit_ctx_free(ctx);
}

static void test_bad_input(void) {
  frit_ctx *ctx = frit_ctx_new();
  CHECK_EQ_INT(frit_profile_note_site(ctx, NULL, "x.c:1"), FRIT_ERR_INVALID);
  CHECK(strstr(frit_error(ctx), "profile_note_site") != NULL);
  CHECK_EQ_INT(frit_profile_save(ctx, "/nonexistent-dir/x.json"), FRIT_ERR_RUNTIME);
  CHECK(strstr(frit_error(ctx), "/nonexistent-dir/x.json") != NULL);
  CHECK_EQ_INT(frit_profile_summary(ctx, "/nonexistent-dir/x.json", stdout), FRIT_ERR_RUNTIME);
  double bw = 0, fl = 0;
  CHECK_EQ_INT(frit_machine_limits(ctx, &bw, &fl), FRIT_OK);
  CHECK(bw > 0 && fl > 0);
  fprintf(stderr, "machine limits: %.1f GB/s copy, %.1f GFLOP/s FMA\n", bw, fl);
  frit_ctx_free(ctx);
}

int main(void) {
  test_elementwise_trace();
  test_matmul_flops();
  test_bad_input();
  printf("test_profile: %d checks, %d failures\n", check_count_, check_failures_);
  return check_failures_ != 0;
}
