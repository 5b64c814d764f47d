/* Benchmark of the rewrite engine on a 1,000,000-node graph, and of node interning.
 * Prints one JSON line per metric; each figure is the best of a few runs in fresh contexts. */
#include "frit.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Rules of the shape a simplifier has: identities that fire, and others tried in vain. */
static const char bench_rules[] =
    "(add x 0) -> x\n"
    "(mul x 1) -> x\n"
    "(mul x:int 0) -> 0\n"
    "(sub x x) -> 0\n"
    "(add (mul x c0:const) (mul x c1:const)) -> (mul x (add c0 c1))\n"
    "(add (add x c0:const) c1:const) -> (add x (add c0 c1))\n"
    "(mul (mul x c0:const) c1:const) -> (mul x (mul c0 c1))\n"
    "(idiv x 1) -> x\n"
    "(max x x) -> x\n"
    "(min x x) -> x\n";

/* A chain of `n` nodes: each link applies one of add v_k, +0, *1, *k to the previous value. */
static frit_uop *build_graph(frit_ctx *ctx, size_t n, size_t *made) {
  frit_uop *vars[16];
  char name[16];
  for (int i = 0; i < 16; i++) {
    snprintf(name, sizeof name, "v%d", i);
    vars[i] = frit_var(ctx, name, 0, 1000);
  }
  frit_uop *zero = frit_const_int(ctx, FRIT_I64, 0), *one = frit_const_int(ctx, FRIT_I64, 1);
  frit_uop *x = vars[0];
  size_t start = frit_node_count(ctx);
  for (size_t k = 0; frit_node_count(ctx) - start < n; k++) {
    switch (k % 4) {
    case 0: x = frit_binary(ctx, FRIT_OP_ADD, x, vars[k % 16]); break;
    case 1: x = frit_binary(ctx, FRIT_OP_ADD, x, zero); break;
    case 2: x = frit_binary(ctx, FRIT_OP_MUL, x, one); break;
    default: x = frit_binary(ctx, FRIT_OP_MUL, x, frit_const_int(ctx, FRIT_I64, (int64_t)k)); break;
    }
  }
  *made = frit_node_count(ctx) - start;
  return x;
}

int main(void) {
  const size_t n = 1000000;
  double best_rw = 1e30, best_intern = 1e30;
  size_t nodes = 0;
  for (int run = 0; run < 3; run++) {
    frit_ctx *ctx = frit_ctx_new();
    if (!ctx) return 1;
    const frit_ruleset *rs = frit_ruleset_parse(ctx, "bench", bench_rules, NULL, 0);
    if (!rs) {
      fprintf(stderr, "%s\n", frit_error(ctx));
      return 1;
    }
    double t0 = now();
    frit_uop *root = build_graph(ctx, n, &nodes);
    double t1 = now();
    frit_uop *r = frit_rewrite(ctx, root, rs);
    double t2 = now();
    if (!r) {
      fprintf(stderr, "rewrite failed: %s\n", frit_error(ctx));
      return 1;
    }
    if (t1 - t0 < best_intern) best_intern = t1 - t0;
    if (t2 - t1 < best_rw) best_rw = t2 - t1;
    frit_ctx_free(ctx);
  }
  printf("{\"bench\": \"rewrite_1m_nodes\", \"value\": %.4f, \"unit\": \"s\", \"peer\": \"limit_1s\", "
         "\"peer_value\": 1.0}\n", best_rw);
  printf("{\"bench\": \"rewrite_rate\", \"value\": %.0f, \"unit\": \"nodes/s\", \"peer\": \"limit\", "
         "\"peer_value\": 1000000}\n", (double)nodes / best_rw);
  printf("{\"bench\": \"intern_rate\", \"value\": %.2f, \"unit\": \"Mnodes/s\", \"peer\": \"limit\", "
         "\"peer_value\": 1.0}\n", (double)nodes / best_intern / 1e6);
  return 0;
}
