/* Tests of reverse-mode autodiff through the C API (frit_grad, frit_vjp, frit_set_vjp,
 * frit_stop_gradient): a small network's gradients compiled and interpreted against central
 * finite differences of the same loss evaluated by plain C here; a user gradient rule; grad of
 * grad; host loops (stop conditions, captured values, nested loops, checkpoint intervals); a user
 * explicit kernel (stencil read, accumulation loop, in-place write under an if, atomic add)
 * against finite differences; and the errors (non-float, non-scalar, refused kernels, loops with
 * bounds computed at run time). */
#include "check.h"
#include "frit.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define D(...) ((const int64_t[]){__VA_ARGS__})
enum { B = 5, I = 4, H = 6 };

static double X[B * I], W[I * H], V[H];

/* loss = mean over rows of (sum_h tanh((X W)_bh) V_h)^2, in plain C */
static double loss_c(const double *w, const double *v) {
  double total = 0;
  for (int b = 0; b < B; b++) {
    double r = 0;
    for (int h = 0; h < H; h++) {
      double z = 0;
      for (int i = 0; i < I; i++) z += X[b * I + i] * w[i * H + h];
      r += tanh(z) * v[h];
    }
    total += r * r;
  }
  return total / B;
}

static frit_tensor *loss_t(frit_ctx *ctx, frit_tensor *x, frit_tensor *w, frit_tensor *v) {
  frit_tensor *h = frit_unary_t(ctx, FRIT_UF_TANH, frit_matmul(ctx, x, w));
  frit_tensor *r = frit_matmul(ctx, h, v);
  return frit_reduce(ctx, FRIT_RF_MEAN, frit_binary_t(ctx, FRIT_BF_MUL, r, r), NULL, FRIT_ALL_AXES, 0, 0);
}

/* Central differences of loss_c in each entry of W (which 0) or V (which 1). */
static void fd_grad(const double *base, int n, double *out, int which) {
  double p[I * H];
  for (int k = 0; k < n; k++) {
    memcpy(p, base, (size_t)n * sizeof *p);
    double e = 1e-6;
    p[k] += e;
    double hi = which ? loss_c(W, p) : loss_c(p, V);
    p[k] -= 2 * e;
    out[k] = (hi - (which ? loss_c(W, p) : loss_c(p, V))) / (2 * e);
  }
}

static bool run(frit_ctx *ctx, frit_tensor *const *outs, int n, int interpret, void *const *out_bufs) {
  frit_compile_opts o;
  memset(&o, 0, sizeof o);
  o.interpret = interpret;
  frit_program *p = frit_compile(ctx, outs, n, &o);
  if (!p) {
    fprintf(stderr, "compile: %s\n", frit_error(ctx));
    CHECK(p != NULL);
    return false;
  }
  void *ins[3];
  for (int i = 0; i < frit_program_num_inputs(p); i++) {
    const char *nm = frit_program_input_name(p, i);
    ins[i] = nm[0] == 'x' ? (void *)X : nm[0] == 'w' ? (void *)W : (void *)V;
  }
  frit_status st = frit_program_run(p, ins, out_bufs, NULL, 0);
  CHECK_EQ_INT(st, FRIT_OK);
  return st == FRIT_OK;
}

static int count_bad(const double *got, const double *want, int n, double tol) {
  int bad = 0;
  for (int i = 0; i < n; i++)
    if (!(fabs(got[i] - want[i]) <= tol * (1 + fabs(want[i])))) {
      if (bad < 3) fprintf(stderr, "  [%d] got %.12g want %.12g\n", i, got[i], want[i]);
      bad++;
    }
  return bad;
}

static void test_network(int interpret) {
  frit_ctx *ctx = frit_ctx_new();
  frit_tensor *x = frit_input(ctx, "x", FRIT_F64, 2, D(B, I));
  frit_tensor *w = frit_input(ctx, "w", FRIT_F64, 2, D(I, H));
  frit_tensor *v = frit_input(ctx, "v", FRIT_F64, 1, D(H));
  frit_tensor *loss = loss_t(ctx, x, w, v), *grads[2];
  CHECK_EQ_INT(frit_grad(ctx, loss, 2, (frit_tensor *const[]){w, v}, grads), FRIT_OK);
  double gw[I * H], gv[H], l;
  if (run(ctx, (frit_tensor *const[]){loss, grads[0], grads[1]}, 3, interpret, (void *[]){&l, gw, gv})) {
    double fw[I * H], fv[H];
    fd_grad(W, I * H, fw, 0);
    fd_grad(V, H, fv, 1);
    CHECK(fabs(l - loss_c(W, V)) < 1e-12);
    CHECK_EQ_INT(count_bad(gw, fw, I * H, 1e-6), 0);
    CHECK_EQ_INT(count_bad(gv, fv, H, 1e-6), 0);
  }
  frit_ctx_free(ctx);
}

/* A user rule: out = x * 3 computed as a graph, but the rule says the slope is 5 (a rule replaces
 * the graph's own derivative). */
static frit_status slope5(frit_ctx *ctx, const int64_t *params, frit_tensor *out, frit_tensor *g, int nin,
                          frit_tensor *const *ins, frit_tensor **grads) {
  (void)out, (void)nin, (void)ins;
  CHECK_EQ_INT(params[0], 42);
  grads[0] = frit_binary_t(ctx, FRIT_BF_MUL, g, frit_full(ctx, FRIT_F64, 0, NULL, 5.0));
  return grads[0] ? FRIT_OK : FRIT_ERR_INVALID;
}

static void test_rule_stop_and_second_order(void) {
  frit_ctx *ctx = frit_ctx_new();
  frit_tensor *x = frit_input(ctx, "x", FRIT_F64, 1, D(3));
  frit_tensor *y = frit_binary_t(ctx, FRIT_BF_MUL, x, frit_full(ctx, FRIT_F64, 0, NULL, 3.0));
  CHECK_EQ_INT(frit_set_vjp(ctx, y, 1, &x, slope5, (const int64_t[]){42}, 1), FRIT_OK);
  /* sum(y) + sum(stop_gradient(x) * x) + sum(x^3): gradient 5 + x + 3x^2 */
  frit_tensor *x3 = frit_binary_t(ctx, FRIT_BF_MUL, x, frit_binary_t(ctx, FRIT_BF_MUL, x, x));
  frit_tensor *parts[3] = {y, frit_binary_t(ctx, FRIT_BF_MUL, frit_stop_gradient(ctx, x), x), x3};
  frit_tensor *total = NULL;
  for (int i = 0; i < 3; i++) {
    frit_tensor *s = frit_reduce(ctx, FRIT_RF_SUM, parts[i], NULL, FRIT_ALL_AXES, 0, 0);
    total = total ? frit_binary_t(ctx, FRIT_BF_ADD, total, s) : s;
  }
  frit_tensor *g, *h;
  CHECK_EQ_INT(frit_grad(ctx, total, 1, &x, &g), FRIT_OK);
  /* second order: d/dx sum(g) = 6x (the rule's constant slope drops out, and the x in g that came
   * through stop_gradient is itself stopped) */
  frit_tensor *sg = frit_reduce(ctx, FRIT_RF_SUM, g, NULL, FRIT_ALL_AXES, 0, 0);
  CHECK_EQ_INT(frit_grad(ctx, sg, 1, &x, &h), FRIT_OK);
  frit_program *p = frit_compile(ctx, (frit_tensor *const[]){g, h}, 2, NULL);
  CHECK(p != NULL);
  if (p) {
    double xv[3] = {0.5, -1.25, 2}, gv[3], hv[3];
    CHECK_EQ_INT(frit_program_run(p, (void *[]){xv}, (void *[]){gv, hv}, NULL, 0), FRIT_OK);
    for (int i = 0; i < 3; i++) {
      CHECK(fabs(gv[i] - (5 + xv[i] + 3 * xv[i] * xv[i])) < 1e-12);
      CHECK(fabs(hv[i] - 6 * xv[i]) < 1e-12);
    }
  }
  frit_ctx_free(ctx);
}


/* Host loops: for i in [0, 9): x = x * w + 0.1 sin(v); v = v + 0.05 sum(x * x) + 0.01 i;
 * stop after i == STOP. loss = sum(x^2) + v. Gradient w.r.t. x0, w and v0 against central
 * differences of the same loop in plain C, for checkpoint intervals 1, 2 and the default. */
enum { LN = 5, LT = 9, LSTOP = 6 };
static double loop_loss_c(const double *x0, const double *w, double v0) {
  double x[LN], v = v0;
  memcpy(x, x0, sizeof x);
  for (int i = 0; i < LT; i++) {
    double sv = sin(v), ss = 0;
    for (int j = 0; j < LN; j++) x[j] = x[j] * w[j] + 0.1 * sv, ss += x[j] * x[j];
    v = v + 0.05 * ss + 0.01 * i;
    if (i >= LSTOP) break;
  }
  double l = v;
  for (int j = 0; j < LN; j++) l += x[j] * x[j];
  return l;
}

static frit_tensor *f64c(frit_ctx *ctx, double v) { return frit_full(ctx, FRIT_F64, 0, NULL, v); }

static void test_host_loop(int interpret, int ckpt) {
  frit_ctx *ctx = frit_ctx_new();
  CHECK_EQ_INT(frit_set_loop_checkpoint(ctx, ckpt), FRIT_OK);
  frit_tensor *x0 = frit_input(ctx, "x", FRIT_F64, 1, D(LN)), *w = frit_input(ctx, "w", FRIT_F64, 1, D(LN));
  frit_tensor *v0 = frit_input(ctx, "v", FRIT_F64, 0, NULL);
  frit_tensor *init[2] = {x0, v0}, *c[2], *i, *nx[2], *res[2];
  CHECK_EQ_INT(frit_host_loop_begin(ctx, frit_scalar_i(ctx, FRIT_I64, 0), frit_scalar_i(ctx, FRIT_I64, LT),
                                    frit_scalar_i(ctx, FRIT_I64, 1), 2, init, &i, c), FRIT_OK);
  nx[0] = frit_binary_t(ctx, FRIT_BF_ADD, frit_binary_t(ctx, FRIT_BF_MUL, c[0], w),
                        frit_binary_t(ctx, FRIT_BF_MUL, f64c(ctx, 0.1), frit_unary_t(ctx, FRIT_UF_SIN, c[1])));
  frit_tensor *ss = frit_reduce(ctx, FRIT_RF_SUM, frit_binary_t(ctx, FRIT_BF_MUL, nx[0], nx[0]), NULL, FRIT_ALL_AXES, 0, 0);
  nx[1] = frit_binary_t(ctx, FRIT_BF_ADD, frit_binary_t(ctx, FRIT_BF_ADD, c[1], frit_binary_t(ctx, FRIT_BF_MUL, f64c(ctx, 0.05), ss)),
                        frit_binary_t(ctx, FRIT_BF_MUL, f64c(ctx, 0.01), frit_astype(ctx, i, FRIT_F64)));
  frit_tensor *stop = frit_binary_t(ctx, FRIT_BF_GE, i, frit_scalar_i(ctx, FRIT_I64, LSTOP));
  CHECK_EQ_INT(frit_host_loop_end(ctx, nx, stop, res), FRIT_OK);
  frit_tensor *loss = frit_binary_t(ctx, FRIT_BF_ADD, res[1],
                                    frit_reduce(ctx, FRIT_RF_SUM, frit_binary_t(ctx, FRIT_BF_MUL, res[0], res[0]), NULL,
                                                FRIT_ALL_AXES, 0, 0));
  frit_tensor *g[3];
  frit_status st = frit_grad(ctx, loss, 3, (frit_tensor *const[]){x0, w, v0}, g);
  if (st != FRIT_OK) fprintf(stderr, "grad: %s\n", frit_error(ctx));
  CHECK_EQ_INT(st, FRIT_OK);
  frit_compile_opts o;
  memset(&o, 0, sizeof o);
  o.interpret = interpret;
  frit_program *p = st == FRIT_OK ? frit_compile(ctx, (frit_tensor *const[]){loss, g[0], g[1], g[2]}, 4, &o) : NULL;
  if (st == FRIT_OK && !p) fprintf(stderr, "compile: %s\n", frit_error(ctx));
  CHECK(p != NULL);
  if (p) {
    double xv[LN], wv[LN], vv = 0.3, l, gx[LN], gw[LN], gv;
    for (int j = 0; j < LN; j++) xv[j] = 0.2 * j - 0.3, wv[j] = 0.9 - 0.07 * j;
    void *ins[3];
    for (int k = 0; k < frit_program_num_inputs(p); k++) {
      const char *nm = frit_program_input_name(p, k);
      ins[k] = nm[0] == 'x' ? (void *)xv : nm[0] == 'w' ? (void *)wv : (void *)&vv;
    }
    CHECK_EQ_INT(frit_program_run(p, ins, (void *[]){&l, gx, gw, &gv}, NULL, 0), FRIT_OK);
    CHECK(fabs(l - loop_loss_c(xv, wv, vv)) < 1e-12);
    double e = 1e-6, bad = 0;
    for (int j = 0; j < LN; j++) {
      double a[LN], b[LN];
      memcpy(a, xv, sizeof a), memcpy(b, xv, sizeof b);
      a[j] += e, b[j] -= e;
      double fx = (loop_loss_c(a, wv, vv) - loop_loss_c(b, wv, vv)) / (2 * e);
      memcpy(a, wv, sizeof a), memcpy(b, wv, sizeof b);
      a[j] += e, b[j] -= e;
      double fw = (loop_loss_c(xv, a, vv) - loop_loss_c(xv, b, vv)) / (2 * e);
      bad += fabs(fx - gx[j]) > 1e-6 * (1 + fabs(fx)) || fabs(fw - gw[j]) > 1e-6 * (1 + fabs(fw));
    }
    double fv = (loop_loss_c(xv, wv, vv + e) - loop_loss_c(xv, wv, vv - e)) / (2 * e);
    bad += fabs(fv - gv) > 1e-6 * (1 + fabs(fv));
    if (bad) fprintf(stderr, "host loop grad (interpret %d, checkpoint %d): gv %g want %g\n", interpret, ckpt, gv, fv);
    CHECK(bad == 0);
  }
  frit_ctx_free(ctx);
}

/* Nested host loops: for i in [0, 3): { y = x; for j in [0, 2): y = sin(y) * w; x = x + 0.5 y }
 * loss = sum(x^2), gradient w.r.t. x and w against central differences; and a loop whose bounds
 * are computed at run time, refused by name. */
static double nested_c(const double *x0, const double *w) {
  double x[3], l = 0;
  memcpy(x, x0, sizeof x);
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 3; k++) {
      double y = x[k];
      for (int j = 0; j < 2; j++) y = sin(y) * w[k];
      x[k] += 0.5 * y;
    }
  for (int k = 0; k < 3; k++) l += x[k] * x[k];
  return l;
}

static void test_host_loop_nested(int interpret) {
  frit_ctx *ctx = frit_ctx_new();
  frit_tensor *x0 = frit_input(ctx, "x", FRIT_F64, 1, D(3)), *w = frit_input(ctx, "w", FRIT_F64, 1, D(3));
  frit_tensor *i, *j, *x, *y, *nx, *ny, *rx, *ry;
  CHECK_EQ_INT(frit_host_loop_begin(ctx, frit_scalar_i(ctx, FRIT_I64, 0), frit_scalar_i(ctx, FRIT_I64, 3),
                                    frit_scalar_i(ctx, FRIT_I64, 1), 1, &x0, &i, &x), FRIT_OK);
  CHECK_EQ_INT(frit_host_loop_begin(ctx, frit_scalar_i(ctx, FRIT_I64, 0), frit_scalar_i(ctx, FRIT_I64, 2),
                                    frit_scalar_i(ctx, FRIT_I64, 1), 1, &x, &j, &y), FRIT_OK);
  ny = frit_binary_t(ctx, FRIT_BF_MUL, frit_unary_t(ctx, FRIT_UF_SIN, y), w);
  CHECK_EQ_INT(frit_host_loop_end(ctx, &ny, NULL, &ry), FRIT_OK);
  nx = frit_binary_t(ctx, FRIT_BF_ADD, x, frit_binary_t(ctx, FRIT_BF_MUL, f64c(ctx, 0.5), ry));
  CHECK_EQ_INT(frit_host_loop_end(ctx, &nx, NULL, &rx), FRIT_OK);
  frit_tensor *loss = frit_reduce(ctx, FRIT_RF_SUM, frit_binary_t(ctx, FRIT_BF_MUL, rx, rx), NULL, FRIT_ALL_AXES, 0, 0);
  frit_tensor *g[2];
  frit_status st = frit_grad(ctx, loss, 2, (frit_tensor *const[]){x0, w}, g);
  if (st != FRIT_OK) fprintf(stderr, "grad: %s\n", frit_error(ctx));
  CHECK_EQ_INT(st, FRIT_OK);
  frit_compile_opts o;
  memset(&o, 0, sizeof o);
  o.interpret = interpret;
  frit_program *p = st == FRIT_OK ? frit_compile(ctx, (frit_tensor *const[]){g[0], g[1]}, 2, &o) : NULL;
  CHECK(p != NULL);
  if (p) {
    double xv[3] = {0.4, -0.7, 1.1}, wv[3] = {0.8, 1.2, -0.6}, gx[3], gw[3];
    bool x_first = frit_program_input_name(p, 0)[0] == 'x';
    CHECK_EQ_INT(frit_program_run(p, x_first ? (void *[]){xv, wv} : (void *[]){wv, xv}, (void *[]){gx, gw}, NULL, 0),
                 FRIT_OK);
    int bad = 0;
    for (int k = 0; k < 3; k++) {
      double a[3], b[3], e = 1e-6;
      memcpy(a, xv, sizeof a), memcpy(b, xv, sizeof b);
      a[k] += e, b[k] -= e;
      double fx = (nested_c(a, wv) - nested_c(b, wv)) / (2 * e);
      memcpy(a, wv, sizeof a), memcpy(b, wv, sizeof b);
      a[k] += e, b[k] -= e;
      double fw = (nested_c(xv, a) - nested_c(xv, b)) / (2 * e);
      bad += fabs(fx - gx[k]) > 1e-6 * (1 + fabs(fx)) || fabs(fw - gw[k]) > 1e-6 * (1 + fabs(fw));
    }
    CHECK_EQ_INT(bad, 0);
  }
  /* bounds computed at run time: refused, naming frit_vjp and the loop */
  frit_tensor *n = frit_astype(ctx, frit_reduce(ctx, FRIT_RF_SUM, w, NULL, FRIT_ALL_AXES, 0, 0), FRIT_I64), *k, *c, *nc, *rc;
  CHECK_EQ_INT(frit_host_loop_begin(ctx, frit_scalar_i(ctx, FRIT_I64, 0), n, frit_scalar_i(ctx, FRIT_I64, 1), 1, &x0, &k, &c),
               FRIT_OK);
  nc = frit_binary_t(ctx, FRIT_BF_MUL, c, w);
  CHECK_EQ_INT(frit_host_loop_end(ctx, &nc, NULL, &rc), FRIT_OK);
  frit_tensor *l2 = frit_reduce(ctx, FRIT_RF_SUM, rc, NULL, FRIT_ALL_AXES, 0, 0), *g2;
  st = frit_grad(ctx, l2, 1, &w, &g2);
  CHECK(st != FRIT_OK && strstr(frit_error(ctx), "frit_vjp through host loop") && strstr(frit_error(ctx), "run time"));
  frit_clear_error(ctx);
  /* the same loop inside a constant one: refused while the reverse loops are open, which are
   * closed again (the ctx builds loops and gradients afterwards) */
  frit_tensor *oi, *oc, *onc, *orc;
  CHECK_EQ_INT(frit_host_loop_begin(ctx, frit_scalar_i(ctx, FRIT_I64, 0), frit_scalar_i(ctx, FRIT_I64, 2),
                                    frit_scalar_i(ctx, FRIT_I64, 1), 1, &x0, &oi, &oc), FRIT_OK);
  CHECK_EQ_INT(frit_host_loop_begin(ctx, frit_scalar_i(ctx, FRIT_I64, 0), n, frit_scalar_i(ctx, FRIT_I64, 1), 1, &oc, &k, &c),
               FRIT_OK);
  nc = frit_binary_t(ctx, FRIT_BF_MUL, c, w);
  CHECK_EQ_INT(frit_host_loop_end(ctx, &nc, NULL, &rc), FRIT_OK);
  onc = frit_binary_t(ctx, FRIT_BF_ADD, oc, rc);
  CHECK_EQ_INT(frit_host_loop_end(ctx, &onc, NULL, &orc), FRIT_OK);
  st = frit_grad(ctx, frit_reduce(ctx, FRIT_RF_SUM, orc, NULL, FRIT_ALL_AXES, 0, 0), 1, &w, &g2);
  CHECK(st != FRIT_OK && strstr(frit_error(ctx), "frit_vjp through host loop") && strstr(frit_error(ctx), "run time"));
  frit_clear_error(ctx);
  CHECK_EQ_INT(frit_grad(ctx, loss, 2, (frit_tensor *const[]){x0, w}, g), FRIT_OK);
  CHECK(frit_compile(ctx, (frit_tensor *const[]){g[0], g[1]}, 2, &o) != NULL);
  CHECK_EQ_INT(frit_set_loop_checkpoint(ctx, -1), FRIT_ERR_INVALID);
  frit_clear_error(ctx);
  /* a gradient rule on a body node stays with the body's copies: c = 3c with the rule's slope 5,
   * three times */
  frit_tensor *ri, *rcr, *rn, *rr, *rg;
  CHECK_EQ_INT(frit_host_loop_begin(ctx, frit_scalar_i(ctx, FRIT_I64, 0), frit_scalar_i(ctx, FRIT_I64, 3),
                                    frit_scalar_i(ctx, FRIT_I64, 1), 1, &x0, &ri, &rcr), FRIT_OK);
  rn = frit_binary_t(ctx, FRIT_BF_MUL, rcr, f64c(ctx, 3.0));
  CHECK_EQ_INT(frit_set_vjp(ctx, rn, 1, &rcr, slope5, (const int64_t[]){42}, 1), FRIT_OK);
  CHECK_EQ_INT(frit_host_loop_end(ctx, &rn, NULL, &rr), FRIT_OK);
  CHECK_EQ_INT(frit_grad(ctx, frit_reduce(ctx, FRIT_RF_SUM, rr, NULL, FRIT_ALL_AXES, 0, 0), 1, &x0, &rg), FRIT_OK);
  frit_program *rp = frit_compile(ctx, &rg, 1, &o);
  CHECK(rp != NULL);
  if (rp) {
    double xv[3] = {1, 2, 3}, gv[3];
    CHECK_EQ_INT(frit_program_run(rp, (void *[]){xv}, (void *[]){gv}, NULL, 0), FRIT_OK);
    for (int q = 0; q < 3; q++) CHECK(fabs(gv[q] - 125.0) < 1e-12);
  }
  frit_clear_error(ctx);
  frit_ctx_free(ctx);
}

#define CHECK_FAILS(ctx, expr, sub)                                                                \
  do {                                                                                             \
    frit_status st_ = (expr);                                                                      \
    bool ok_ = st_ != FRIT_OK && strstr(frit_error(ctx), sub) != NULL;                             \
    if (!ok_) fprintf(stderr, "error check: got \"%s\"\n", frit_error(ctx));                      \
    CHECK(ok_);                                                                                    \
    frit_clear_error(ctx);                                                                         \
  } while (0)

static void test_errors(void) {
  frit_ctx *ctx = frit_ctx_new();
  frit_tensor *x = frit_input(ctx, "x", FRIT_F32, 1, D(4)), *n = frit_input(ctx, "n", FRIT_I32, 1, D(4));
  frit_tensor *g = NULL;
  frit_tensor *s = frit_reduce(ctx, FRIT_RF_SUM, x, NULL, FRIT_ALL_AXES, 0, 0);
  CHECK_FAILS(ctx, frit_grad(ctx, x, 1, &x, &g), "must be a scalar");
  CHECK_FAILS(ctx, frit_grad(ctx, s, 1, &n, &g), "wrt[0] has dtype i32");
  CHECK_FAILS(ctx, frit_grad(ctx, frit_reduce(ctx, FRIT_RF_SUM, n, NULL, FRIT_ALL_AXES, 0, 0), 1, &x, &g),
              "the output has dtype i64");
  CHECK_FAILS(ctx, frit_vjp(ctx, NULL, NULL, 1, &x, &g), "needs an output");
  /* an input the output does not use: zeros */
  frit_tensor *y = frit_input(ctx, "y", FRIT_F32, 2, D(2, 3));
  CHECK_EQ_INT(frit_grad(ctx, s, 1, &y, &g), FRIT_OK);
  CHECK(g != NULL && frit_tensor_ndim(g) == 2 && frit_tensor_dtype(g) == FRIT_F32);
  /* through an explicit kernel with an inner loop: refused, never a zero */
  frit_tensor *out = frit_zeros(ctx, FRIT_F32, 1, D(4)), *i = NULL, *k = NULL;
  CHECK_EQ_INT(frit_kernel_begin_static(ctx, "looped", 1, D(4), &i), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_loop_begin(ctx, frit_scalar_i(ctx, FRIT_I64, 0), frit_scalar_i(ctx, FRIT_I64, 2),
                                      frit_scalar_i(ctx, FRIT_I64, 1), &k),
               FRIT_OK);
  CHECK_EQ_INT(frit_kernel_store(ctx, out, 1, &i, frit_kernel_load(ctx, x, 1, &i)), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_loop_end(ctx), FRIT_OK);
  frit_tensor *old = NULL, *after = NULL;
  CHECK_EQ_INT(frit_kernel_end(ctx), 1);
  CHECK_EQ_INT(frit_kernel_written(ctx, 0, &old, &after), FRIT_OK);
  frit_tensor *ks = frit_reduce(ctx, FRIT_RF_SUM, after, NULL, FRIT_ALL_AXES, 0, 0);
  CHECK_FAILS(ctx, frit_grad(ctx, ks, 1, &x, &g), "frit_vjp through explicit kernel 'looped'");
  frit_ctx_free(ctx);
}

/* Kernel "kstep" over i < KN: s = sum over k < 3 of x[(i+k)%KN] c[i] (a per-point loop adding into a
 * variable); c[i] = x[(i+1)%KN] * c[i] + x[i]^2 + s where c[i] > 0 (in place, some elements only),
 * acc[i % 3] += 2 x[i] (atomic); loss = sum(c'^2) + sum(acc'^2) + sum(c' * x). */
enum { KN = 7 };
static double kloss_c(const double *x, const double *c0) {
  double c[KN], acc[3] = {0, 0, 0}, l = 0;
  for (int i = 0; i < KN; i++) {
    double s = 0;
    for (int k = 0; k < 3; k++) s += x[(i + k) % KN] * c0[i];
    c[i] = c0[i] > 0 ? x[(i + 1) % KN] * c0[i] + x[i] * x[i] + s : c0[i];
    acc[i % 3] += 2 * x[i];
  }
  for (int i = 0; i < KN; i++) l += c[i] * c[i] + c[i] * x[i];
  return l + acc[0] * acc[0] + acc[1] * acc[1] + acc[2] * acc[2];
}

static void test_explicit_kernel(int interpret) {
  frit_ctx *ctx = frit_ctx_new();
  frit_tensor *x = frit_input(ctx, "x", FRIT_F64, 1, D(KN)), *c = frit_input(ctx, "c", FRIT_F64, 1, D(KN));
  frit_tensor *acc = frit_zeros(ctx, FRIT_F64, 1, D(3)), *i = NULL;
  CHECK_EQ_INT(frit_kernel_begin_static(ctx, "kstep", 1, D(KN), &i), FRIT_OK);
  frit_tensor *one = frit_scalar_i(ctx, FRIT_I64, 1), *n = frit_scalar_i(ctx, FRIT_I64, KN);
  frit_tensor *ip = frit_binary_t(ctx, FRIT_BF_REMAINDER, frit_binary_t(ctx, FRIT_BF_ADD, i, one), n);
  frit_tensor *xn = frit_kernel_load(ctx, x, 1, &ip), *xi = frit_kernel_load(ctx, x, 1, &i);
  frit_tensor *ci = frit_kernel_load(ctx, c, 1, &i), *k = NULL;
  int sv = frit_kernel_var(ctx, FRIT_F64, frit_full(ctx, FRIT_F64, 0, NULL, 0));
  CHECK(sv >= 0);
  CHECK_EQ_INT(frit_kernel_loop_begin(ctx, frit_scalar_i(ctx, FRIT_I64, 0), frit_scalar_i(ctx, FRIT_I64, 3), one, &k),
               FRIT_OK);
  frit_tensor *ik = frit_binary_t(ctx, FRIT_BF_REMAINDER, frit_binary_t(ctx, FRIT_BF_ADD, i, k), n);
  frit_tensor *term = frit_binary_t(ctx, FRIT_BF_MUL, frit_kernel_load(ctx, x, 1, &ik), ci);
  CHECK_EQ_INT(frit_kernel_var_set(ctx, sv, frit_binary_t(ctx, FRIT_BF_ADD, frit_kernel_var_get(ctx, sv), term)), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_loop_end(ctx), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_if_begin(ctx, frit_binary_t(ctx, FRIT_BF_GT, ci, frit_full(ctx, FRIT_F64, 0, NULL, 0))),
               FRIT_OK);
  frit_tensor *v = frit_binary_t(ctx, FRIT_BF_ADD, frit_binary_t(ctx, FRIT_BF_MUL, xn, ci),
                                 frit_binary_t(ctx, FRIT_BF_MUL, xi, xi));
  v = frit_binary_t(ctx, FRIT_BF_ADD, v, frit_kernel_var_get(ctx, sv));
  CHECK_EQ_INT(frit_kernel_store(ctx, c, 1, &i, v), FRIT_OK);
  CHECK_EQ_INT(frit_kernel_if_end(ctx), FRIT_OK);
  frit_tensor *slot = frit_binary_t(ctx, FRIT_BF_REMAINDER, i, frit_scalar_i(ctx, FRIT_I64, 3));
  CHECK(frit_kernel_atomic(ctx, FRIT_ATOMIC_ADD, acc, 1, &slot,
                           frit_binary_t(ctx, FRIT_BF_MUL, xi, frit_full(ctx, FRIT_F64, 0, NULL, 2))) != NULL);
  CHECK_EQ_INT(frit_kernel_end(ctx), 2);
  frit_tensor *cn = NULL, *an = NULL, *old = NULL;
  CHECK_EQ_INT(frit_kernel_written(ctx, 0, &old, &cn), FRIT_OK);
  CHECK(old == c);
  CHECK_EQ_INT(frit_kernel_written(ctx, 1, &old, &an), FRIT_OK);
  CHECK(old == acc);
  frit_tensor *parts[3] = {frit_binary_t(ctx, FRIT_BF_MUL, cn, cn), frit_binary_t(ctx, FRIT_BF_MUL, an, an),
                           frit_binary_t(ctx, FRIT_BF_MUL, cn, x)};
  frit_tensor *loss = NULL, *g[2] = {NULL, NULL};
  for (int p = 0; p < 3; p++) {
    frit_tensor *s = frit_reduce(ctx, FRIT_RF_SUM, parts[p], NULL, FRIT_ALL_AXES, 0, 0);
    loss = loss ? frit_binary_t(ctx, FRIT_BF_ADD, loss, s) : s;
  }
  CHECK_EQ_INT(frit_grad(ctx, loss, 2, (frit_tensor *const[]){x, c}, g), FRIT_OK);
  /* the reverse kernels leave the user's last kernel's results in place */
  frit_tensor *an2 = NULL;
  CHECK_EQ_INT(frit_kernel_written(ctx, 1, &old, &an2), FRIT_OK);
  CHECK(old == acc && an2 == an);
  frit_compile_opts o;
  memset(&o, 0, sizeof o);
  o.interpret = interpret;
  frit_program *p = frit_compile(ctx, (frit_tensor *const[]){loss, g[0], g[1]}, 3, &o);
  if (!p) fprintf(stderr, "compile: %s\n", frit_error(ctx));
  CHECK(p != NULL);
  double xv[KN], cv[KN], l = 0, gx[KN], gc[KN], fx[KN], fc[KN];
  for (int j = 0; j < KN; j++) xv[j] = ((j * 5) % 7 - 3) / 2.5, cv[j] = ((j * 3) % 5 - 1.7) / 1.5;
  if (p) {
    void *ins[2];
    for (int j = 0; j < 2; j++) ins[j] = frit_program_input_name(p, j)[0] == 'x' ? (void *)xv : (void *)cv;
    CHECK_EQ_INT(frit_program_run(p, ins, (void *[]){&l, gx, gc}, NULL, 0), FRIT_OK);
    for (int j = 0; j < KN; j++) {
      double e = 1e-6, s0 = xv[j];
      xv[j] = s0 + e;
      double hi = kloss_c(xv, cv);
      xv[j] = s0 - e;
      fx[j] = (hi - kloss_c(xv, cv)) / (2 * e);
      xv[j] = s0, s0 = cv[j];
      cv[j] = s0 + e;
      hi = kloss_c(xv, cv);
      cv[j] = s0 - e;
      fc[j] = (hi - kloss_c(xv, cv)) / (2 * e);
      cv[j] = s0;
    }
    CHECK(fabs(l - kloss_c(xv, cv)) < 1e-12);
    CHECK_EQ_INT(count_bad(gx, fx, KN, 1e-6), 0);
    CHECK_EQ_INT(count_bad(gc, fc, KN, 1e-6), 0);
    frit_program_free(p);
  }
  frit_ctx_free(ctx);
}

int main(void) {
  for (int i = 0; i < B * I; i++) X[i] = ((i * 7) % 11 - 5) / 4.0;
  for (int i = 0; i < I * H; i++) W[i] = ((i * 5) % 13 - 6) / 6.0;
  for (int i = 0; i < H; i++) V[i] = (i % 4 - 1.5) / 2.0;
  test_network(0);
  test_network(1);
  test_rule_stop_and_second_order();
  test_errors();
  for (int ck = 0; ck <= 2; ck++) {
    test_host_loop(0, ck);
    test_host_loop(1, ck);
  }
  test_host_loop_nested(0);
  test_host_loop_nested(1);
  test_explicit_kernel(0);
  test_explicit_kernel(1);
  CHECK_DONE();
}
