/* Simplifier throughput: 100k random index expressions of the shapes a lowering produces,
 * ((a*K + b)*M + c) / M % K and relatives, each simplified once. Prints one JSON line. */
#include "frit.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t next(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}
static int64_t pick(int64_t lo, int64_t hi) { return lo + (int64_t)(next() % (uint64_t)(hi - lo + 1)); }

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 100000;
  frit_ctx *ctx = frit_ctx_new();
  if (!ctx) return 1;
  enum { POOL = 64 };
  frit_uop *va[POOL], *vb[POOL], *vc[POOL];
  int64_t K[POOL], M[POOL];
  for (int i = 0; i < POOL; i++) {
    char name[16];
    K[i] = pick(2, 16), M[i] = pick(2, 32);
    snprintf(name, sizeof name, "a%d", i);
    va[i] = frit_var(ctx, name, 0, pick(1, 64));
    snprintf(name, sizeof name, "b%d", i);
    vb[i] = frit_var(ctx, name, 0, K[i] - 1);
    snprintf(name, sizeof name, "c%d", i);
    vc[i] = frit_var(ctx, name, 0, M[i] - 1);
  }
  /* Build every expression first so that only simplification is timed. */
  frit_uop **exprs = malloc((size_t)n * sizeof *exprs);
  if (!exprs) return 1;
  for (int i = 0; i < n; i++) {
    int p = (int)(next() % POOL), q = (int)(next() % POOL);
    frit_uop *a = va[p], *b = vb[p], *c = next() % 2 ? vc[p] : vc[q];
    frit_uop *k = frit_const_int(ctx, FRIT_I64, K[p]), *m = frit_const_int(ctx, FRIT_I64, M[p]);
    frit_uop *off = frit_const_int(ctx, FRIT_I64, pick(0, 3) * M[p]);
    frit_uop *idx = frit_binary(ctx, FRIT_OP_ADD, frit_binary(ctx, FRIT_OP_MUL, a, k), b);
    idx = frit_binary(ctx, FRIT_OP_ADD, frit_binary(ctx, FRIT_OP_MUL, idx, m), c);
    idx = frit_binary(ctx, FRIT_OP_ADD, idx, off);
    frit_uop *e;
    switch (next() % 4) {
    case 0: e = frit_binary(ctx, FRIT_OP_MOD, frit_binary(ctx, FRIT_OP_IDIV, idx, m), k); break;
    case 1: e = frit_binary(ctx, FRIT_OP_IDIV, frit_binary(ctx, FRIT_OP_IDIV, idx, m), k); break;
    case 2: e = frit_binary(ctx, FRIT_OP_MOD, idx, m); break;
    default:
      e = frit_binary(ctx, FRIT_OP_CMPLT, idx, frit_const_int(ctx, FRIT_I64, pick(1, 4) * M[p] * K[p]));
      break;
    }
    exprs[i] = e;
  }
  if (!frit_simplifier_rules(ctx)) {
    fprintf(stderr, "bench_simplify: %s\n", frit_error(ctx));
    return 1;
  }
  double t0 = now();
  size_t changed = 0;
  for (int i = 0; i < n; i++) {
    frit_uop *r = frit_simplify(ctx, exprs[i]);
    if (!r) {
      fprintf(stderr, "bench_simplify: %s\n", frit_error(ctx));
      return 1;
    }
    changed += r != exprs[i];
  }
  double dt = now() - t0;
  fprintf(stderr, "bench_simplify: %d expressions, %zu changed, %.3f s, %zu nodes\n", n, changed, dt,
          frit_node_count(ctx));
  printf("{\"bench\":\"simplify_throughput\",\"value\":%.0f,\"unit\":\"expr/s\",\"peer\":\"none\",\"peer_value\":null}\n",
         (double)n / dt);
  free(exprs);
  frit_ctx_free(ctx);
  return 0;
}
