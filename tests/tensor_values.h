/* Value checks for tensor tests: test inputs, a small reference evaluator of tensor-level graphs
 * (independent of the scheduler and backends) and runs through the whole pipeline. Include after
 * check.h. */
#ifndef FRIT_TEST_TENSOR_VALUES_H
#define FRIT_TEST_TENSOR_VALUES_H

#include "frit.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* ---------- test inputs ---------- */

#define MAXIN 8
typedef struct tin {
  const char *name;
  frit_dtype dt;
  int64_t n;
  double *d; /* values as doubles (the oracle's view) */
} tin;
static tin ins[MAXIN];
static int nins;
/* symbolic dims bound for the evaluator and the runs */
static frit_binding binds[4];
static int nbinds;

static uint64_t rng = 88172645463325252ull;
static double rnd(void) { /* uniform in [-1, 1) with a few bits, so sums are exact-ish */
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)((int64_t)(rng >> 40) % 2001 - 1000) / 1000.0;
}

static void reset_inputs(void) {
  for (int i = 0; i < nins; i++) free(ins[i].d);
  nins = 0, nbinds = 0;
}

/* An input with values from vals (or random when vals is NULL; integer dtypes get small ints). */
static frit_tensor *input_with(frit_tensor *t, const char *name, frit_dtype dt, int nd, const int64_t *dims,
                               const double *vals);
static frit_tensor *input(frit_ctx *ctx, const char *name, frit_dtype dt, int nd, const int64_t *dims,
                          const double *vals) {
  return input_with(frit_input(ctx, name, dt, nd, dims), name, dt, nd, dims, vals);
}
/* An input with symbolic dims sym[i] (NULL: static), bound to dims[i] for the runs. */
static frit_tensor *input_sym(frit_ctx *ctx, const char *name, frit_dtype dt, int nd, const int64_t *dims,
                              frit_uop *const *sym, const double *vals) {
  frit_uop *d[FRIT_MAX_DIMS];
  for (int i = 0; i < nd; i++) d[i] = sym[i] ? sym[i] : frit_const_int(ctx, FRIT_I64, dims[i]);
  return input_with(frit_input_sym(ctx, name, dt, nd, d), name, dt, nd, dims, vals);
}
static frit_tensor *input_with(frit_tensor *t, const char *name, frit_dtype dt, int nd, const int64_t *dims,
                               const double *vals) {
  int64_t n = 1;
  for (int i = 0; i < nd; i++) n *= dims[i];
  tin *in = &ins[nins++];
  in->name = name, in->dt = dt, in->n = n;
  in->d = malloc(sizeof(double) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) {
    double v = vals ? vals[i] : rnd();
    if (!vals && !frit_dtype_is_float(dt)) v = floor(v * 10);
    if (!vals && frit_dtype_is_bool(dt)) v = v > 0;
    if (frit_dtype_kind(dt) == FRIT_F32) v = (float)v;
    in->d[i] = v;
  }
  return t;
}

static void *to_raw(frit_dtype dt, const double *d, int64_t n) {
  int bytes = frit_dtype_bits(dt) / 8;
  char *p = calloc((size_t)(n ? n : 1), (size_t)(bytes ? bytes : 1));
  for (int64_t i = 0; i < n; i++) {
    frit_scalar_kind k = frit_dtype_kind(dt);
    void *q = p + i * bytes;
    if (k == FRIT_F32) *(float *)q = (float)d[i];
    else if (k == FRIT_F64) *(double *)q = d[i];
    else if (k == FRIT_I64) *(int64_t *)q = (int64_t)d[i];
    else if (k == FRIT_I32) *(int32_t *)q = (int32_t)d[i];
    else if (k == FRIT_I16) *(int16_t *)q = (int16_t)d[i];
    else if (k == FRIT_I8) *(int8_t *)q = (int8_t)d[i];
    else if (k == FRIT_U8 || k == FRIT_BOOL) *(uint8_t *)q = (uint8_t)d[i];
    else if (k == FRIT_U64) *(uint64_t *)q = (uint64_t)d[i];
    else if (k == FRIT_U32) *(uint32_t *)q = (uint32_t)d[i];
    else abort(); /* the tests use no other input dtype */
  }
  return p;
}

static double from_raw(frit_dtype dt, const void *p, int64_t i) {
  frit_scalar_kind k = frit_dtype_kind(dt);
  if (k == FRIT_F32) return ((const float *)p)[i];
  if (k == FRIT_F64) return ((const double *)p)[i];
  if (k == FRIT_I64) return (double)((const int64_t *)p)[i];
  if (k == FRIT_I32) return ((const int32_t *)p)[i];
  if (k == FRIT_U64) return (double)((const uint64_t *)p)[i];
  if (k == FRIT_BOOL || k == FRIT_U8) return ((const uint8_t *)p)[i];
  abort();
}

/* ---------- a small reference evaluator of the tensor graph ----------
 * Independent of the scheduler and backends: evaluates Contract-1 nodes directly, in doubles,
 * so that the lowering of each op is checked even where the pipeline is not involved. */

typedef struct ev {
  int nd;
  int64_t d[FRIT_MAX_DIMS];
  double *v;
} ev;
static ev **memo;
static size_t memo_n;

static int64_t ev_numel(const ev *e) {
  int64_t n = 1;
  for (int i = 0; i < e->nd; i++) n *= e->d[i];
  return n;
}
static void unravel(const ev *e, int64_t flat, int64_t *idx) {
  for (int i = e->nd - 1; i >= 0; i--) idx[i] = e->d[i] ? flat % e->d[i] : 0, flat = e->d[i] ? flat / e->d[i] : 0;
}
static int64_t ravel(const ev *e, const int64_t *idx) {
  int64_t f = 0;
  for (int i = 0; i < e->nd; i++) f = f * e->d[i] + idx[i];
  return f;
}
static ev *ev_new(int nd, const int64_t *d) {
  ev *e = calloc(1, sizeof *e);
  e->nd = nd;
  for (int i = 0; i < nd; i++) e->d[i] = d[i];
  int64_t n = ev_numel(e);
  e->v = calloc((size_t)(n ? n : 1), sizeof(double));
  return e;
}

static double to_dtype(double v, frit_dtype dt) {
  if (frit_dtype_is_bool(dt)) return v != 0;
  if (frit_dtype_is_float(dt)) return frit_dtype_kind(dt) == FRIT_F32 ? (double)(float)v : v;
  if (isnan(v)) return 0;
  return trunc(v);
}

static double alu(frit_op op, frit_dtype dt, const double *a) {
  bool fl = frit_dtype_is_float(dt);
  double x = a[0], y = a[1];
  if (op == FRIT_OP_NEG) return -x;
  if (op == FRIT_OP_ABS) return fabs(x);
  if (op == FRIT_OP_SQRT) return sqrt(x);
  if (op == FRIT_OP_EXP) return exp(x);
  if (op == FRIT_OP_LOG) return log(x);
  if (op == FRIT_OP_RECIP) return 1 / x;
  if (op == FRIT_OP_NOT) return frit_dtype_is_bool(dt) ? !x : (double)~(int64_t)x;
  if (op == FRIT_OP_ADD) return frit_dtype_is_bool(dt) ? (x || y) : x + y;
  if (op == FRIT_OP_SUB) return x - y;
  if (op == FRIT_OP_MUL) return frit_dtype_is_bool(dt) ? (x && y) : x * y;
  if (op == FRIT_OP_FDIV) return x / y;
  if (op == FRIT_OP_IDIV) return y == 0 ? 0 : trunc(x / y);
  if (op == FRIT_OP_MOD) return fl ? fmod(x, y) : (y == 0 ? x : (double)((int64_t)x % (int64_t)y));
  if (op == FRIT_OP_MAX) return isnan(x) || isnan(y) ? NAN : (x > y ? x : y);
  if (op == FRIT_OP_MIN) return isnan(x) || isnan(y) ? NAN : (x < y ? x : y);
  if (op == FRIT_OP_AND) return frit_dtype_is_bool(dt) ? (x && y) : (double)((int64_t)x & (int64_t)y);
  if (op == FRIT_OP_OR) return frit_dtype_is_bool(dt) ? (x || y) : (double)((int64_t)x | (int64_t)y);
  if (op == FRIT_OP_XOR) return frit_dtype_is_bool(dt) ? ((x != 0) != (y != 0)) : (double)((int64_t)x ^ (int64_t)y);
  if (op == FRIT_OP_CMPLT) return x < y;
  if (op == FRIT_OP_CMPLE) return x <= y;
  if (op == FRIT_OP_CMPEQ) return x == y;
  if (op == FRIT_OP_CMPNE) return x != y;
  if (op == FRIT_OP_WHERE) return x != 0 ? y : a[2];
  if (op == FRIT_OP_FLOOR) return floor(x);
  if (op == FRIT_OP_CEIL) return ceil(x);
  if (op == FRIT_OP_TRUNC) return trunc(x);
  if (op == FRIT_OP_POW) return pow(x, y);
  fprintf(stderr, "evaluator: op %s not supported\n", frit_op_name(op));
  abort();
}

static double red_init(int64_t op) {
  if (op == FRIT_OP_MUL || op == FRIT_OP_AND) return 1;
  if (op == FRIT_OP_MAX) return -INFINITY;
  if (op == FRIT_OP_MIN) return INFINITY;
  return 0;
}

static ev *eval(frit_uop *u);

static int64_t eval_dim(frit_uop *u) { return (int64_t)eval(u)->v[0]; }

static ev *eval_node(frit_uop *u) {
  frit_op op = frit_uop_op(u);
  frit_dtype dt = frit_uop_dtype(u);
  const frit_arg *arg = frit_uop_arg(u);
  int ns = frit_uop_nsrc(u);
  int64_t d[FRIT_MAX_DIMS], ix[FRIT_MAX_DIMS], jx[FRIT_MAX_DIMS];
  const int64_t *ints = arg->blob_kind == FRIT_BLOB_INTS ? arg->blob : NULL;
  if (op == FRIT_OP_CONST) {
    ev *e = ev_new(0, d);
    e->v[0] = frit_dtype_is_float(dt) ? arg->value.f : frit_dtype_is_unsigned(dt) ? (double)arg->value.u : (double)arg->value.i;
    return e;
  }
  if (op == FRIT_OP_DEFINE_VAR) {
    ev *e = ev_new(0, d);
    bool found = false;
    for (int i = 0; i < nbinds; i++)
      if (!strcmp(binds[i].name, (const char *)arg->blob)) e->v[0] = (double)binds[i].value, found = true;
    if (!found) abort();
    return e;
  }
  if (op == FRIT_OP_BUFFER) {
    for (int i = 0; i < ns; i++) d[i] = eval_dim(frit_uop_src(u, i));
    ev *e = ev_new(ns, d);
    const char *name = arg->blob;
    for (int i = 0; i < nins; i++)
      if (!strcmp(ins[i].name, name)) memcpy(e->v, ins[i].d, sizeof(double) * (size_t)ins[i].n);
    return e;
  }
  if (op == FRIT_OP_IOTA) {
    d[0] = eval_dim(frit_uop_src(u, 0));
    ev *e = ev_new(1, d);
    for (int64_t i = 0; i < d[0]; i++) e->v[i] = (double)i;
    return e;
  }
  ev *x = eval(frit_uop_src(u, 0));
  int64_t nx = ev_numel(x);
  if ((frit_op_flags(op) & FRIT_F_ALU) || op == FRIT_OP_CAST) {
    ev *e = ev_new(x->nd, x->d);
    ev *s[3] = {x, ns > 1 ? eval(frit_uop_src(u, 1)) : NULL, ns > 2 ? eval(frit_uop_src(u, 2)) : NULL};
    for (int i = 1; i < ns; i++)
      if (ev_numel(s[i]) != nx) abort();
    frit_dtype sdt = frit_uop_dtype(frit_uop_src(u, op == FRIT_OP_WHERE ? 1 : 0));
    for (int64_t i = 0; i < nx; i++) {
      double a[3] = {s[0]->v[i], s[1] ? s[1]->v[i] : 0, s[2] ? s[2]->v[i] : 0};
      e->v[i] = op == FRIT_OP_CAST ? to_dtype(a[0], dt) : to_dtype(alu(op, sdt, a), dt);
    }
    return e;
  }
  if (op == FRIT_OP_RESHAPE || op == FRIT_OP_EXPAND) {
    for (int i = 1; i < ns; i++) d[i - 1] = eval_dim(frit_uop_src(u, i));
    ev *e = ev_new(ns - 1, d);
    int64_t n = ev_numel(e);
    for (int64_t f = 0; f < n; f++) {
      if (op == FRIT_OP_RESHAPE) {
        e->v[f] = x->v[f];
        continue;
      }
      unravel(e, f, ix);
      for (int i = 0; i < e->nd; i++) jx[i] = x->d[i] == 1 ? 0 : ix[i];
      e->v[f] = x->v[ravel(x, jx)];
    }
    return e;
  }
  if (op == FRIT_OP_PERMUTE || op == FRIT_OP_FLIP) {
    for (int i = 0; i < x->nd; i++) d[i] = op == FRIT_OP_PERMUTE ? x->d[ints[i]] : x->d[i];
    ev *e = ev_new(x->nd, d);
    for (int64_t f = 0; f < nx; f++) {
      unravel(e, f, ix);
      for (int i = 0; i < x->nd; i++) jx[i] = ix[i];
      if (op == FRIT_OP_PERMUTE)
        for (int i = 0; i < x->nd; i++) jx[ints[i]] = ix[i];
      else
        for (uint32_t k = 0; k < arg->n; k++) jx[ints[k]] = x->d[ints[k]] - 1 - ix[ints[k]];
      e->v[f] = x->v[ravel(x, jx)];
    }
    return e;
  }
  if (op == FRIT_OP_PAD || op == FRIT_OP_SHRINK) {
    int n = x->nd;
    int64_t b[FRIT_MAX_DIMS], a[FRIT_MAX_DIMS];
    for (int i = 0; i < n; i++) b[i] = eval_dim(frit_uop_src(u, 1 + i)), a[i] = eval_dim(frit_uop_src(u, 1 + n + i));
    for (int i = 0; i < n; i++) d[i] = op == FRIT_OP_PAD ? x->d[i] + b[i] + a[i] : a[i] - b[i];
    ev *e = ev_new(n, d);
    int64_t ne = ev_numel(e);
    for (int64_t f = 0; f < ne; f++) {
      unravel(e, f, ix);
      bool in = true;
      for (int i = 0; i < n; i++) {
        jx[i] = op == FRIT_OP_PAD ? ix[i] - b[i] : ix[i] + b[i];
        in &= jx[i] >= 0 && jx[i] < x->d[i];
      }
      e->v[f] = in ? x->v[ravel(x, jx)] : 0;
    }
    return e;
  }
  if (op == FRIT_OP_REDUCE_AXIS || op == FRIT_OP_SCAN) {
    bool mask[FRIT_MAX_DIMS] = {false};
    if (op == FRIT_OP_SCAN) mask[arg->i1] = true;
    else
      for (uint32_t k = 0; k < arg->n; k++) mask[ints[k]] = true;
    for (int i = 0; i < x->nd; i++) d[i] = op == FRIT_OP_SCAN || !mask[i] ? x->d[i] : 1;
    ev *e = ev_new(x->nd, d);
    int64_t ne = ev_numel(e);
    for (int64_t f = 0; f < ne; f++) e->v[f] = red_init(arg->i0);
    for (int64_t f = 0; f < nx; f++) { /* row-major order: scans see earlier elements first */
      unravel(x, f, ix);
      if (op == FRIT_OP_SCAN) {
        double acc = red_init(arg->i0);
        int ax = (int)arg->i1;
        for (int64_t k = 0; k <= ix[ax]; k++) {
          for (int i = 0; i < x->nd; i++) jx[i] = i == ax ? k : ix[i];
          double ab[2] = {acc, x->v[ravel(x, jx)]};
          acc = to_dtype(alu((frit_op)arg->i0, dt, ab), dt);
        }
        e->v[f] = acc;
        continue;
      }
      for (int i = 0; i < x->nd; i++) jx[i] = mask[i] ? 0 : ix[i];
      int64_t o = ravel(e, jx);
      double ab[2] = {e->v[o], x->v[f]};
      e->v[o] = to_dtype(alu((frit_op)arg->i0, dt, ab), dt);
    }
    return e;
  }
  if (op == FRIT_OP_GATHER) {
    ev *id = eval(frit_uop_src(u, 1));
    int ax = (int)arg->i0, n = 0;
    for (int i = 0; i < ax; i++) d[n++] = x->d[i];
    for (int i = 0; i < id->nd; i++) d[n++] = id->d[i];
    for (int i = ax + 1; i < x->nd; i++) d[n++] = x->d[i];
    ev *e = ev_new(n, d);
    int64_t ne = ev_numel(e), kx[FRIT_MAX_DIMS];
    for (int64_t f = 0; f < ne; f++) {
      unravel(e, f, ix);
      for (int i = 0; i < id->nd; i++) kx[i] = ix[ax + i];
      int64_t k = (int64_t)id->v[ravel(id, kx)];
      if (k < 0 || k >= x->d[ax]) {
        fprintf(stderr, "evaluator: gather index %lld out of range\n", (long long)k);
        abort();
      }
      for (int i = 0; i < x->nd; i++) jx[i] = i < ax ? ix[i] : i == ax ? k : ix[i - 1 + id->nd];
      e->v[f] = x->v[ravel(x, jx)];
    }
    return e;
  }
  if (op == FRIT_OP_CONTIGUOUS) return x;
  fprintf(stderr, "evaluator: op %s not supported\n", frit_op_name(op));
  abort();
}

static ev *eval(frit_uop *u) {
  uint32_t id = frit_uop_id(u);
  if (id >= memo_n) abort();
  if (!memo[id]) memo[id] = eval_node(u);
  return memo[id];
}

static void ev_free_all(void) {
  for (size_t i = 0; i < memo_n; i++) {
    if (!memo[i]) continue;
    bool dup = false; /* CONTIGUOUS shares its source's result */
    for (size_t j = 0; j < i && !dup; j++) dup = memo[j] == memo[i];
    if (!dup) free(memo[i]->v), free(memo[i]);
  }
  free(memo);
  memo = NULL, memo_n = 0;
}

/* ---------- value checks ---------- */

static bool close_to(double got, double want, double tol) {
  if (isnan(want)) return isnan(got);
  if (isinf(want)) return got == want;
  return fabs(got - want) <= tol * (1 + fabs(want));
}

static int compare(const char *what, const char *how, const double *got, const double *want, int64_t n, double tol) {
  for (int64_t i = 0; i < n; i++) {
    if (!close_to(got[i], want[i], tol)) {
      fprintf(stderr, "%s [%s]: element %lld is %.9g, want %.9g\n", what, how, (long long)i, got[i], want[i]);
      return 1;
    }
  }
  return 0;
}

/* Runs the whole pipeline on t (interpreted or compiled); results as doubles in got. */
static int run_pipeline(frit_ctx *ctx, frit_tensor *t, int interpret, double *got, int64_t n) {
  frit_compile_opts o;
  memset(&o, 0, sizeof o);
  o.interpret = interpret;
  frit_program *p = frit_compile(ctx, &t, 1, &o);
  if (!p) {
    fprintf(stderr, "compile failed: %s\n", frit_error(ctx));
    return 1;
  }
  int ni = frit_program_num_inputs(p);
  void *inb[MAXIN] = {0};
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nins; j++)
      if (!strcmp(frit_program_input_name(p, i), ins[j].name)) inb[i] = to_raw(ins[j].dt, ins[j].d, ins[j].n);
  frit_dtype dt = frit_tensor_dtype(t);
  void *out = calloc((size_t)(n ? n : 1), 8);
  void *outs[1] = {out};
  frit_status st = frit_program_run(p, inb, outs, binds, nbinds);
  if (st != FRIT_OK) fprintf(stderr, "run failed: %s\n", frit_error(ctx));
  for (int64_t i = 0; i < n && st == FRIT_OK; i++) got[i] = from_raw(dt, out, i);
  for (int i = 0; i < ni; i++) free(inb[i]);
  free(out);
  return st != FRIT_OK;
}

static int pipeline_mode(void) { /* FRIT_TEST_PIPELINE=0 skips the pipeline runs */
  const char *e = getenv("FRIT_TEST_PIPELINE");
  return !e || strcmp(e, "0") != 0;
}

/* Checks t's values against want[n] (the C oracle): the reference evaluator first, then the
 * pipeline interpreted and compiled. */
static void check_values(frit_ctx *ctx, const char *what, frit_tensor *t, const double *want, int64_t n, double tol) {
  check_count_++;
  if (!t) {
    fprintf(stderr, "%s: build failed: %s\n", what, frit_error(ctx));
    check_failures_++;
    return;
  }
  memo_n = frit_node_count(ctx);
  memo = calloc(memo_n, sizeof *memo);
  ev *e = eval(frit_tensor_uop(t));
  int bad = 0;
  if (ev_numel(e) != n) {
    fprintf(stderr, "%s: evaluator gives %lld elements, want %lld\n", what, (long long)ev_numel(e), (long long)n);
    bad = 1;
  } else {
    bad |= compare(what, "evaluator", e->v, want, n, tol);
  }
  for (int i = 0; i < e->nd && !bad; i++)
    if (frit_tensor_dim_static(t, i) >= 0 && frit_tensor_dim_static(t, i) != e->d[i]) {
      fprintf(stderr, "%s: shape dim %d is %lld, evaluator has %lld\n", what, i,
              (long long)frit_tensor_dim_static(t, i), (long long)e->d[i]);
      bad = 1;
    }
  ev_free_all();
  if (!bad && pipeline_mode()) {
    double *got = malloc(sizeof(double) * (size_t)(n ? n : 1));
    for (int mode = 1; mode >= 0 && !bad; mode--) {
      if (run_pipeline(ctx, t, mode, got, n)) bad = 1;
      else bad |= compare(what, mode ? "interpreted" : "compiled", got, want, n, tol);
    }
    free(got);
  }
  if (bad) check_failures_++;
}

#endif
