/* The C emitter for structured (explicit) kernels: SEQ statements in program order, IF, inner
 * loops with break/continue, registers as C locals, atomics (__atomic builtins, CAS loops for
 * floats and min/max); pure values are computed where used and hoisted out of loops they do not
 * depend on. Expressions come from render.c, so semantics match the other kernels. */
#include "codegen/structured.h"
#include "ir/walk.h"

#include <inttypes.h>
#include <stdio.h>

enum { SB_ROOT, SB_LOOP, SB_IF };

typedef struct sblk {
  int parent, depth, kind;
  uint32_t rix;  /* loop blocks: local index of the RANGE */
  int lbl;       /* loop blocks: number for the labels (a RANGE may be looped over twice) */
  bool alive;
  bool kaxis;    /* a loop of a kernel axis (no break/continue) */
  bool simd;     /* the innermost kernel axis: points are independent, so it may run as SIMD lanes */
  bool brk, cont; /* labels for a goto out of nested loops */
  cg_str text, head;
} sblk;

typedef struct sval {
  char *name; /* C expression of the value */
  int blk;    /* block it was bound in; -2: valid everywhere */
  int nbind;  /* bindings so far (unique names) */
  bool done;  /* SEQ values: evaluated at their point */
} sval;

typedef struct sg {
  frit_ctx *ctx;
  frit_dialect dialect;
  frit_uop **nodes;
  size_t n;
  uint32_t *pos;
  sval *st;
  uint8_t *seqv;  /* LOAD/ATOMIC listed in a SEQ: evaluated at that point */
  uint8_t *hoist; /* SEQ values used after the block they are evaluated in: declared per point */
  uint8_t *vol;   /* unlisted reads of memory the kernel writes, and values over them: never reused */
  sblk *b;
  int nb, capb;
  frit_uop *g0;
  frit_uop *const *vars;
  int nvars;
  int tmp;
  bool failed, rerun;
  int depth; /* val's recursion depth */
  int cur;   /* pre_emit's block */
} sg;

static inline uint32_t L(const sg *g, const frit_uop *u) { return g->pos[u->id]; }

static bool fail(sg *g, const frit_uop *u, const char *msg) {
  if (!g->failed) {
    char dt[32];
    frit_set_error(g->ctx, FRIT_ERR_INVALID, "codegen: node %" PRIu32 " %s : %s: %s (structured kernel)", u->id,
                   frit_op_name((frit_op)u->op), frit_dtype_name(u->dtype, dt, sizeof dt), msg);
  }
  g->failed = true;
  return false;
}

static bool oom(sg *g) {
  if (!g->failed) frit_set_error(g->ctx, FRIT_ERR_NOMEM, "codegen: out of memory");
  g->failed = true;
  return false;
}

bool cg_is_structured(frit_uop *ast) {
  size_t n = 0;
  frit_uop **nodes = frit_walk_topo(ast, &n);
  bool r = false;
  for (size_t i = 0; nodes && i < n && !r; i++) r = nodes[i]->op == FRIT_OP_SEQ;
  free(nodes);
  return r;
}

/* ---------- blocks ---------- */

static int new_blk(sg *g, int parent, int kind, uint32_t rix) {
  if (g->nb == g->capb) {
    int cap = g->capb ? 2 * g->capb : 16;
    sblk *b = realloc(g->b, (size_t)cap * sizeof *b);
    if (!b) return oom(g), -1;
    g->b = b, g->capb = cap;
  }
  sblk *B = &g->b[g->nb];
  memset(B, 0, sizeof *B);
  B->parent = parent, B->kind = kind, B->rix = rix, B->alive = true;
  B->depth = parent >= 0 ? g->b[parent].depth + 1 : 1;
  return g->nb++;
}

static cg_str *indent(sg *g, int b) {
  for (int i = 0; i < g->b[b].depth; i++) cg_puts(&g->b[b].text, "  ");
  return &g->b[b].text;
}
/* Appends one indented line to block b (cg_printf checks the format). */
#define line(G_, B_, ...) (cg_printf(indent((G_), (B_)), __VA_ARGS__), cg_puts(&(G_)->b[(B_)].text, "\n"))

/* a is b or one of b's enclosing blocks (open or not) */
static bool is_anc(const sg *g, int a, int b) {
  for (int x = b; x >= 0; x = g->b[x].parent)
    if (x == a) return true;
  return false;
}

/* The block on cur's chain where a value bound in block b may be used from now on: b itself when
 * it is open, else the innermost open block enclosing b (the value was computed before now). */
static int eff_blk(const sg *g, int cur, int b) {
  if (b == -2) return -2;
  for (int x = cur; x >= 0; x = g->b[x].parent)
    if (is_anc(g, x, b)) return x;
  return 0;
}

static int deeper(const sg *g, int a, int b) {
  int da = a < 0 ? 0 : g->b[a].depth, db = b < 0 ? 0 : g->b[b].depth;
  return db > da ? b : a;
}

static void close_blk(sg *g, int b) {
  sblk *B = &g->b[b];
  if (B->cont) line(g, b, "cont%" PRIu32 "_%d:;", B->rix, B->lbl);
  B = &g->b[b];
  int p = B->parent;
  if (B->simd && g->dialect == FRIT_DIALECT_C) line(g, p, "#pragma omp simd");
  line(g, p, "%s {", B->head.s ? B->head.s : "");
  B = &g->b[b];
  if (B->text.s) cg_puts(&g->b[p].text, B->text.s);
  if (B->text.oom || B->head.oom) g->b[p].text.oom = true;
  line(g, p, "}");
  B = &g->b[b];
  if (B->brk) line(g, p, "brk%" PRIu32 "_%d:;", B->rix, B->lbl);
  B = &g->b[b];
  cg_free(&B->text);
  cg_free(&B->head);
  B->alive = false;
}

static bool on_chain(const sg *g, int cur, int b) {
  if (b == -2) return true;
  if (b < 0 || !g->b[b].alive) return false;
  for (int x = cur; x >= 0; x = g->b[x].parent)
    if (x == b) return true;
  return false;
}

/* ---------- names ---------- */

static const char *set_name(sg *g, frit_uop *u, int b, const char *name) {
  sval *s = &g->st[L(g, u)];
  char *d = malloc(strlen(name) + 1);
  if (!d) return oom(g), NULL;
  strcpy(d, name);
  free(s->name);
  s->name = d, s->blk = b;
  return d;
}

/* A fresh C name for node u ("v<pos>", then "v<pos>_<n>" for later bindings). */
static void fresh(sg *g, frit_uop *u, char *buf, size_t n) {
  sval *s = &g->st[L(g, u)];
  if (s->nbind == 0 || g->hoist[L(g, u)]) snprintf(buf, n, "v%" PRIu32, L(g, u));
  else snprintf(buf, n, "v%" PRIu32 "_%d", L(g, u), s->nbind);
  s->nbind++;
}

/* Declares "T name = expr;" in block b and names u after it. */
static const char *bind(sg *g, frit_uop *u, int b, const char *expr) {
  char nm[48];
  fresh(g, u, nm, sizeof nm);
  line(g, b, "%s %s = %s;", cg_ctype(frit_dtype_kind(u->dtype)), nm, expr);
  return set_name(g, u, b, nm);
}

/* ---------- values ---------- */

static const char *val(sg *g, frit_uop *u, int cur);
static bool stmt(sg *g, frit_uop *u, int cur);
static const char *seq_value(sg *g, frit_uop *u, int cur);

static char *dupstr(sg *g, const char *s) {
  char *d = s ? malloc(strlen(s) + 1) : NULL;
  if (!d) return oom(g), NULL;
  strcpy(d, s);
  return d;
}

/* Effects a node must follow (trailing void sources, AFTER's effects): emitted here if no
 * statement emitted them yet. */
static bool deps(sg *g, frit_uop *u, uint32_t first, int cur) {
  for (uint32_t i = first; i < u->nsrc; i++) {
    frit_uop *d = u->src[i];
    if (frit_dtype_kind(d->dtype) != FRIT_VOID || frit_dtype_is_ptr(d->dtype)) continue;
    if (!g->st[L(g, d)].done && !stmt(g, d, cur)) return false;
  }
  return true;
}

typedef struct addr {
  frit_uop *base;
  cg_str off, gate;
} addr;

static void addr_free(addr *x) {
  cg_free(&x->off);
  cg_free(&x->gate);
}

static bool resolve(sg *g, frit_uop *p, int cur, addr *x) {
  if (p->op == FRIT_OP_DEFINE_GLOBAL || p->op == FRIT_OP_DEFINE_REG) {
    x->base = p;
    return true;
  }
  if (p->op == FRIT_OP_AFTER) return deps(g, p, 1, cur) && resolve(g, p->src[0], cur, x);
  if (p->op != FRIT_OP_INDEX)
    return fail(g, p, "unsupported address (expected INDEX of DEFINE_GLOBAL/DEFINE_REG, or AFTER)");
  if (!resolve(g, p->src[0], cur, x)) return false;
  if (frit_dtype_lanes(p->src[1]->dtype) != 1 || !frit_dtype_is_int(p->src[1]->dtype))
    return fail(g, p, "the index must be a scalar integer (flatten it first)");
  const char *ix = val(g, p->src[1], cur);
  if (!ix) return false;
  if (x->off.n) {
    cg_str t = {0};
    cg_printf(&t, "(int64_t)(%s + (int64_t)%s)", x->off.s, ix);
    cg_free(&x->off);
    x->off = t;
  } else {
    cg_puts(&x->off, ix);
  }
  if (p->nsrc > 2) {
    const char *gt = val(g, p->src[2], cur);
    if (!gt) return false;
    if (x->gate.n) cg_printf(&x->gate, " & %s", gt);
    else cg_puts(&x->gate, gt);
  }
  return true;
}

/* Registers of one element are plain C scalars; larger ones arrays (register type). */
static bool reg_scalar(const frit_uop *base) { return base->op == FRIT_OP_DEFINE_REG && base->arg.i1 <= 1; }

/* The memory lvalue of a resolved address. */
static void mem_ref(sg *g, const addr *x, cg_str *o) {
  char c = x->base->op == FRIT_OP_DEFINE_GLOBAL ? 'g' : 'm';
  if (reg_scalar(x->base)) cg_printf(o, "m%" PRIu32, L(g, x->base));
  else cg_printf(o, "%c%" PRIu32 "[%s]", c, L(g, x->base), x->off.s ? x->off.s : "0");
}

/* The value of LOAD u (gated: the alt value or 0 when the gate is off) as an expression. */
static bool load_expr(sg *g, frit_uop *u, int cur, cg_str *e) {
  addr x = {0};
  bool ok = resolve(g, u->src[0], cur, &x);
  const char *alt = NULL;
  uint32_t first_dep = 1;
  if (ok && u->nsrc > 1 && frit_dtype_kind(u->src[1]->dtype) != FRIT_VOID) {
    alt = val(g, u->src[1], cur);
    ok = alt != NULL;
    first_dep = 2;
  }
  ok = ok && deps(g, u, first_dep, cur);
  if (ok && frit_dtype_lanes(u->dtype) != 1) ok = fail(g, u, "vector loads are not supported");
  if (ok) {
    frit_scalar_kind k = frit_dtype_kind(u->dtype);
    cg_str m = {0};
    mem_ref(g, &x, &m);
    if (x.gate.n) cg_printf(e, "(%s ? ", x.gate.s);
    if (x.base->op == FRIT_OP_DEFINE_GLOBAL) cg_render_load_conv(e, k, m.s ? m.s : "0");
    else cg_puts(e, m.s ? m.s : "0");
    if (x.gate.n) {
      if (alt) cg_printf(e, " : %s)", alt);
      else {
        cg_puts(e, " : ");
        ok = cg_render_const(g->ctx, e, k, (frit_scalar){.u = 0}) || fail(g, u, "bad dtype");
        cg_puts(e, ")");
      }
    }
    cg_free(&m);
  }
  addr_free(&x);
  return ok && !e->oom;
}

static const char *emit_reduce(sg *g, frit_uop *u, int cur);
static const char *emit_atomic(sg *g, frit_uop *u, int cur);

/* An ALU op, CAST or BITCAST. */
static const char *emit_pure(sg *g, frit_uop *u, int cur) {
  frit_op op = (frit_op)u->op;
  frit_scalar_kind kd = frit_dtype_kind(u->dtype);
  /* pure: placed in the innermost block among its sources' (hoisted out of loops it does not
     depend on, but never before a value it reads) */
  char *a[3] = {NULL, NULL, NULL};
  int at = -2;
  bool ok = u->nsrc <= 3;
  for (uint32_t i = 0; i < u->nsrc && ok; i++) {
    const char *x = val(g, u->src[i], cur);
    if (!x || !(a[i] = dupstr(g, x))) ok = false;
    else at = deeper(g, at, eff_blk(g, cur, g->st[L(g, u->src[i])].blk));
  }
  /* not out of an IF either: a branch may skip expensive work */
  for (int b = cur; b >= 0 && b != at; b = g->b[b].parent)
    if (g->b[b].kind == SB_IF) {
      at = b;
      break;
    }
  if (at < 0) at = 0;
  cg_str e = {0};
  if (ok && (op == FRIT_OP_CAST || op == FRIT_OP_BITCAST)) {
    if (frit_dtype_is_ptr(u->dtype)) ok = fail(g, u, "pointer casts are not supported");
    else {
      frit_scalar_kind kf = frit_dtype_kind(u->src[0]->dtype);
      ok = op == FRIT_OP_CAST ? cg_render_cast(g->ctx, &e, kf, kd, a[0]) : cg_render_bitcast(g->ctx, &e, kf, kd, a[0]);
      if (!ok) g->failed = true;
    }
  } else if (ok && op == FRIT_OP_POW && kd == FRIT_F32 && u->src[1]->op == FRIT_OP_CONST &&
             u->src[1]->arg.value.f == 1.5 && !getenv("FRIT_LIBM_POW")) {
    cg_printf(&e, "frit_pow15f(%s)", a[0]);
  } else if (ok && cg_no_overflow(u)) {
    cg_printf(&e, "((%s)(%s %s %s))", cg_ctype(kd), a[0], op == FRIT_OP_ADD ? "+" : op == FRIT_OP_SUB ? "-" : "*",
              a[1]);
  } else if (ok) {
    frit_scalar_kind ko = frit_dtype_kind(u->src[op == FRIT_OP_WHERE ? 1 : 0]->dtype);
    ok = cg_render_alu(g->ctx, &e, op, ko, (const char *const *)a, (int)u->nsrc);
    if (!ok) g->failed = true;
  }
  for (int i = 0; i < 3; i++) free(a[i]);
  const char *r = ok && !e.oom ? bind(g, u, at, e.s) : NULL;
  if (ok && e.oom) oom(g);
  cg_free(&e);
  return r;
}

static const char *val_rec(sg *g, frit_uop *u, int cur);

/* Past this recursion depth, chains of pure values are emitted bottom-up first (walk.h): each
 * is emitted for use in the same block, as emit_pure asks for its sources, so the order and the
 * code are unchanged, and a body a million operations deep does not overflow the C stack. */
#define EMIT_MAX_DEPTH 256

static bool pure_pending(void *arg, frit_uop *v) {
  const sg *g = arg;
  uint32_t k = L(g, v);
  frit_op op = (frit_op)v->op;
  if (!(frit_op_flags(op) & FRIT_F_ALU) && op != FRIT_OP_CAST && op != FRIT_OP_BITCAST) return false;
  if (g->seqv[k] || g->vol[k]) return false;
  return !(g->st[k].name && on_chain(g, g->cur, g->st[k].blk));
}
static bool pure_emit(void *arg, frit_uop *v) {
  sg *g = arg;
  return val_rec(g, v, g->cur) != NULL;
}

static const char *val(sg *g, frit_uop *u, int cur) {
  if (g->failed) return NULL;
  if (g->depth > EMIT_MAX_DEPTH) {
    int saved = g->cur;
    g->cur = cur;
    bool ok = frit_walk_post(u, pure_pending, pure_emit, g);
    g->cur = saved;
    if (!ok) return g->failed ? NULL : (oom(g), NULL);
  }
  g->depth++;
  const char *r = val_rec(g, u, cur);
  g->depth--;
  return r;
}

static const char *val_rec(sg *g, frit_uop *u, int cur) {
  if (g->failed) return NULL;
  uint32_t k = L(g, u);
  sval *s = &g->st[k];
  if (g->seqv[k]) return seq_value(g, u, cur);
  if (s->name && !g->vol[k] && on_chain(g, cur, s->blk)) return s->name;
  frit_op op = (frit_op)u->op;
  frit_scalar_kind kd = frit_dtype_kind(u->dtype);
  if (!frit_dtype_is_ptr(u->dtype) && kd != FRIT_VOID && frit_dtype_lanes(u->dtype) != 1)
    return fail(g, u, "vector dtypes are not supported by the C backend yet"), NULL;
  if (op == FRIT_OP_CONST) {
    cg_str e = {0};
    if (!cg_render_const(g->ctx, &e, kd, u->arg.value)) return cg_free(&e), g->failed = true, NULL;
    const char *r = e.oom ? NULL : set_name(g, u, -2, e.s);
    cg_free(&e);
    return r;
  }
  if (op == FRIT_OP_DEFINE_VAR) {
    for (int i = 0; i < g->nvars; i++) {
      frit_uop *v = g->vars[i];
      if (v == u || (v && v->arg.blob && u->arg.blob && strcmp(v->arg.blob, u->arg.blob) == 0)) {
        char nm[32];
        snprintf(nm, sizeof nm, "var%d", i);
        return set_name(g, u, -2, nm);
      }
    }
    return fail(g, u, "DEFINE_VAR not in the program's variable list"), NULL;
  }
  if (op == FRIT_OP_RANGE) {
    for (int b = cur; b >= 0; b = g->b[b].parent)
      if (g->b[b].kind == SB_LOOP && g->b[b].rix == k) {
        char nm[32];
        snprintf(nm, sizeof nm, "r%" PRIu32, k);
        return set_name(g, u, b, nm);
      }
    return fail(g, u, "RANGE used outside its loop"), NULL;
  }
  if (op == FRIT_OP_BIND) {
    const char *r = val(g, u->src[1], cur);
    return r ? set_name(g, u, g->st[L(g, u->src[1])].blk, r) : NULL;
  }
  if (op == FRIT_OP_LOAD) {
    /* a pure read (not listed in a SEQ): evaluated where it is used, never hoisted out of an
       IF or loop (the branch may guard its address) */
    cg_str e = {0};
    if (!load_expr(g, u, cur, &e)) return cg_free(&e), NULL;
    const char *r = bind(g, u, cur, e.s);
    cg_free(&e);
    return r;
  }
  if (op == FRIT_OP_ATOMIC || op == FRIT_OP_ATOMIC_CAS) return emit_atomic(g, u, cur);
  if (op == FRIT_OP_REDUCE) return emit_reduce(g, u, cur);
  if ((frit_op_flags(op) & FRIT_F_ALU) || op == FRIT_OP_CAST || op == FRIT_OP_BITCAST) return emit_pure(g, u, cur);
  if (frit_dtype_is_ptr(u->dtype)) return fail(g, u, "pointer used as a value"), NULL;
  if (kd == FRIT_VOID) return fail(g, u, "effect used as a value"), NULL;
  return fail(g, u, "not supported by the C backend (lower it first)"), NULL;
}

/* A LOAD/ATOMIC listed in a SEQ, referenced as a value. Evaluated at its listing; a use from a
 * block where its binding is out of C scope marks it for a declaration per point (next pass). */
static const char *seq_value(sg *g, frit_uop *u, int cur) {
  uint32_t k = L(g, u);
  sval *s = &g->st[k];
  if (!s->done || !s->name) {
    /* used before its listing (not Contract B): evaluate here */
    g->seqv[k] = 0;
    const char *r = val(g, u, cur);
    g->seqv[k] = 1;
    s = &g->st[k];
    s->done = r != NULL;
    return r;
  }
  if (g->hoist[k] || on_chain(g, cur, s->blk)) return s->name;
  g->hoist[k] = 1;
  g->rerun = true;
  return s->name;
}

/* Evaluates a SEQ-listed LOAD/ATOMIC at this point of the program. */
static bool eval_seq(sg *g, frit_uop *u, int cur) {
  uint32_t k = L(g, u);
  if (u->op == FRIT_OP_ATOMIC || u->op == FRIT_OP_ATOMIC_CAS) {
    if (g->st[k].done) return true; /* one effect, listed once */
    const char *r = emit_atomic(g, u, cur);
    g->st[k].done = r != NULL;
    return r != NULL;
  }
  cg_str e = {0};
  if (!load_expr(g, u, cur, &e)) return cg_free(&e), false;
  const char *r;
  if (g->hoist[k]) {
    char nm[32];
    snprintf(nm, sizeof nm, "v%" PRIu32, k);
    line(g, cur, "%s = %s;", nm, e.s);
    r = set_name(g, u, cur, nm);
  } else {
    r = bind(g, u, cur, e.s);
  }
  cg_free(&e);
  g->st[k].done = r != NULL;
  return r != NULL;
}

/* ---------- REDUCE (a pure value with its own loops) ---------- */

static bool open_loops(sg *g, frit_uop *u, int cur, int *inner, bool kernel);

static const char *emit_reduce(sg *g, frit_uop *u, int cur) {
  frit_scalar_kind k = frit_dtype_kind(u->dtype);
  cg_str id = {0}, upd = {0};
  if (!cg_render_const(g->ctx, &id, k, cg_reduce_identity((frit_op)u->arg.i0, k))) return cg_free(&id), g->failed = true, NULL;
  char acc[48];
  fresh(g, u, acc, sizeof acc);
  line(g, cur, "%s %s = %s;", cg_ctype(k), acc, id.s);
  cg_free(&id);
  int in = cur;
  if (!open_loops(g, u, cur, &in, false)) return NULL;
  const char *x = val(g, u->src[0], in);
  if (!x) return NULL;
  const char *ab[2] = {acc, x};
  if (!cg_render_alu(g->ctx, &upd, (frit_op)u->arg.i0, k, ab, 2)) return cg_free(&upd), g->failed = true, NULL;
  line(g, in, "%s = %s;", acc, upd.s ? upd.s : "0");
  cg_free(&upd);
  for (int b = in; b != cur; b = g->b[b].parent) close_blk(g, b);
  return set_name(g, u, cur, acc);
}

/* ---------- atomics ---------- */

static const char *emit_atomic(sg *g, frit_uop *u, int cur) {
  uint32_t k = L(g, u);
  if (u->op == FRIT_OP_ATOMIC_CAS) return fail(g, u, "ATOMIC_CAS is not supported in structured kernels"), NULL;
  if (frit_dtype_lanes(u->dtype) != 1) return fail(g, u, "vector atomics are not supported"), NULL;
  frit_scalar_kind kd = frit_dtype_kind(u->dtype);
  addr x = {0};
  if (!resolve(g, u->src[0], cur, &x)) return addr_free(&x), NULL;
  const char *v = val(g, u->src[1], cur);
  char *vv = v ? dupstr(g, v) : NULL;
  if (!vv || !deps(g, u, 2, cur)) return free(vv), addr_free(&x), NULL;
  /* the old value: declared here, or per point when used beyond this block */
  char o[48];
  if (g->hoist[k]) snprintf(o, sizeof o, "v%" PRIu32, k);
  else {
    fresh(g, u, o, sizeof o);
    line(g, cur, "%s %s = 0;", cg_ctype(kd), o);
  }
  cg_str m = {0}, body = {0}, ind = {0};
  mem_ref(g, &x, &m);
  for (int i = 0; i <= g->b[cur].depth; i++) cg_puts(&ind, "  ");
  bool ok = cg_render_atomic(g->ctx, g->dialect, &body, ind.s ? ind.s : "", (frit_atomic_op)u->arg.i0, kd,
                             x.base->op == FRIT_OP_DEFINE_GLOBAL, m.s ? m.s : "", vv, o);
  if (!ok) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", frit_error(g->ctx));
    fail(g, u, msg);
  } else {
    /* gated: the access happens only when the gate is on (the old value reads 0 otherwise) */
    line(g, cur, x.gate.n ? "if (%s) {" : "{%s", x.gate.n ? x.gate.s : "");
    if (body.s) cg_puts(&g->b[cur].text, body.s);
    line(g, cur, "}");
    if (m.oom || body.oom || ind.oom) ok = oom(g);
  }
  cg_free(&m), cg_free(&body), cg_free(&ind);
  addr_free(&x);
  free(vv);
  return ok ? set_name(g, u, cur, o) : NULL;
}

/* ---------- statements ---------- */

static bool emit_store(sg *g, frit_uop *u, int cur) {
  addr x = {0};
  bool ok = resolve(g, u->src[0], cur, &x);
  const char *v = ok ? val(g, u->src[1], cur) : NULL;
  char *vv = v ? dupstr(g, v) : NULL;
  ok = vv && deps(g, u, 2, cur);
  if (ok && frit_dtype_lanes(u->src[1]->dtype) != 1) ok = fail(g, u, "vector stores are not supported");
  if (ok) {
    cg_str m = {0}, e = {0};
    mem_ref(g, &x, &m);
    if (x.base->op == FRIT_OP_DEFINE_GLOBAL) cg_render_store_conv(&e, frit_dtype_kind(u->src[1]->dtype), vv);
    else cg_puts(&e, vv);
    if (x.gate.n) line(g, cur, "if (%s) %s = %s;", x.gate.s, m.s, e.s);
    else line(g, cur, "%s = %s;", m.s, e.s);
    if (m.oom || e.oom) ok = oom(g);
    cg_free(&m), cg_free(&e);
    g->st[L(g, u)].done = true;
  }
  free(vv);
  addr_free(&x);
  return ok;
}

/* Points of a kernel are independent (races are the program's), so the innermost kernel axis is
 * marked `omp simd`: gcc then vectorises across points (outer-loop vectorisation through inner
 * loops of uniform trip count, e.g. an n-body loop over j), each lane keeping its own program
 * order. Not with atomics, whose read-modify-write must stay one per point in sequence. */
static bool has_atomic(const sg *g) {
  for (size_t k = 0; k < g->n; k++)
    if (g->nodes[k]->op == FRIT_OP_ATOMIC || g->nodes[k]->op == FRIT_OP_ATOMIC_CAS) return true;
  return false;
}

/* Opens the loops of END/REDUCE u's ranges (first outermost) below cur; *inner gets the
 * innermost. Trip counts are evaluated once, before their loop. */
static bool open_loops(sg *g, frit_uop *u, int cur, int *inner, bool kernel) {
  int b = cur;
  for (uint32_t i = 1; i < u->nsrc; i++) {
    frit_uop *r = u->src[i];
    if (r->op != FRIT_OP_RANGE) return fail(g, u, "sources after the first must be RANGEs");
    uint32_t rk = L(g, r);
    for (int x = b; x >= 0; x = g->b[x].parent)
      if (g->b[x].kind == SB_LOOP && g->b[x].rix == rk) return fail(g, r, "RANGE opened inside its own loop");
    const char *T = cg_ctype(frit_dtype_kind(r->dtype));
    int nb;
    if (r == g->g0) {
      if ((nb = new_blk(g, b, SB_LOOP, rk)) < 0) return false;
      cg_printf(&g->b[nb].head, "for (%s r%" PRIu32 " = (%s)g0_begin; r%" PRIu32 " < (%s)g0_end; r%" PRIu32 "%s)", T,
                rk, T, rk, T, rk, cg_g0_next(g->dialect));
    } else {
      const char *t = val(g, r->src[0], b);
      if (!t) return false;
      /* a trip count that is not a plain name is evaluated once, before the loop */
      char tn[48];
      snprintf(tn, sizeof tn, "t%" PRIu32 "_%d", rk, g->tmp++);
      line(g, b, "const %s %s = %s;", T, tn, t);
      if ((nb = new_blk(g, b, SB_LOOP, rk)) < 0) return false;
      cg_printf(&g->b[nb].head, "for (%s r%" PRIu32 " = 0; r%" PRIu32 " < %s; r%" PRIu32 "++)", T, rk, rk, tn, rk);
    }
    g->b[nb].kaxis = kernel;
    g->b[nb].simd = kernel && i + 1 == u->nsrc && !has_atomic(g);
    g->b[nb].lbl = g->tmp++;
    b = nb;
  }
  *inner = b;
  return true;
}

/* Registers and SEQ values used beyond their block: C locals of one kernel point, zeroed. */
static void point_decls(sg *g, int b) {
  for (size_t k = 0; k < g->n; k++) {
    frit_uop *u = g->nodes[k];
    if (u->op == FRIT_OP_DEFINE_REG) {
      const char *T = cg_ctype(frit_dtype_kind(u->dtype));
      if (reg_scalar(u)) line(g, b, "%s m%zu = 0;", T, k);
      else line(g, b, "%s m%zu[%" PRId64 "] = {0};", T, k, u->arg.i1);
    } else if (g->hoist[k]) {
      line(g, b, "%s v%zu = 0;", cg_ctype(frit_dtype_kind(u->dtype)), k);
    }
  }
}

static bool emit_end(sg *g, frit_uop *u, int cur, bool kernel) {
  int in = cur;
  if (!open_loops(g, u, cur, &in, kernel)) return false;
  if (kernel) point_decls(g, in);
  if (!stmt(g, u->src[0], in)) return false;
  for (int b = in; b != cur; b = g->b[b].parent) close_blk(g, b);
  g->st[L(g, u)].done = true;
  return true;
}

static bool emit_if(sg *g, frit_uop *u, int cur) {
  const char *c = val(g, u->src[0], cur);
  if (!c) return false;
  char cn[48];
  snprintf(cn, sizeof cn, "c%d", g->tmp++);
  /* the condition is kept, so that the else branch tests the value the then branch saw */
  line(g, cur, "const uint8_t %s = %s;", cn, c);
  for (uint32_t i = 1; i < u->nsrc; i++) {
    int b = new_blk(g, cur, SB_IF, 0);
    if (b < 0) return false;
    cg_printf(&g->b[b].head, i == 1 ? "if (%s)" : "if (!%s)", cn);
    if (!stmt(g, u->src[i], b)) return false;
    close_blk(g, b);
  }
  g->st[L(g, u)].done = true;
  return true;
}

static bool emit_jump(sg *g, frit_uop *u, int cur) {
  frit_uop *r = u->src[0];
  bool brk = u->op == FRIT_OP_BREAK, direct = true;
  for (int b = cur; b >= 0; b = g->b[b].parent) {
    sblk *B = &g->b[b];
    if (B->kind != SB_LOOP) continue;
    if (B->rix != L(g, r)) {
      direct = false; /* a loop in between: C's break/continue would leave that one */
      continue;
    }
    if (B->kaxis) return fail(g, u, "BREAK/CONTINUE of a kernel axis");
    if (direct) line(g, cur, brk ? "break;" : "continue;");
    else {
      line(g, cur, "goto %s%" PRIu32 "_%d;", brk ? "brk" : "cont", B->rix, B->lbl);
      if (brk) B->brk = true;
      else B->cont = true;
    }
    return true;
  }
  return fail(g, u, "BREAK/CONTINUE outside the loop of its RANGE");
}

static bool stmt(sg *g, frit_uop *u, int cur) {
  if (g->failed) return false;
  frit_op op = (frit_op)u->op;
  if (op == FRIT_OP_SEQ || op == FRIT_OP_GROUP || op == FRIT_OP_SINK) {
    for (uint32_t i = 0; i < u->nsrc; i++)
      if (!stmt(g, u->src[i], cur)) return false;
    g->st[L(g, u)].done = true;
    return true;
  }
  if (op == FRIT_OP_STORE) return emit_store(g, u, cur);
  if (op == FRIT_OP_LOAD || op == FRIT_OP_ATOMIC || op == FRIT_OP_ATOMIC_CAS)
    return g->seqv[L(g, u)] ? eval_seq(g, u, cur) : val(g, u, cur) != NULL; /* else reached as a dependency */
  if (op == FRIT_OP_IF) return emit_if(g, u, cur);
  if (op == FRIT_OP_END) return emit_end(g, u, cur, false);
  if (op == FRIT_OP_BREAK || op == FRIT_OP_CONTINUE) return emit_jump(g, u, cur);
  if (op == FRIT_OP_AFTER) return deps(g, u, 1, cur);
  if (frit_dtype_kind(u->dtype) == FRIT_VOID && !frit_dtype_is_ptr(u->dtype))
    return fail(g, u, "not a statement of a structured kernel");
  /* a pure value listed in a SEQ: evaluating it early changes nothing */
  return val(g, u, cur) != NULL;
}

/* ---------- kernel ---------- */

/* Does the extent depend on a range or on memory (then it cannot be split across calls)? */
static bool static_extent(frit_uop *e) {
  size_t n = 0;
  frit_uop **nodes = frit_walk_topo(e, &n);
  bool ok = nodes != NULL;
  for (size_t i = 0; ok && i < n; i++) {
    frit_op op = (frit_op)nodes[i]->op;
    if (op == FRIT_OP_RANGE || (frit_op_flags(op) & FRIT_F_MEMORY) || op == FRIT_OP_REDUCE) ok = false;
  }
  free(nodes);
  return ok;
}

static char *render_pass(sg *g, frit_uop *ast, const char *fn_name) {
  for (size_t k = 0; k < g->n; k++) {
    free(g->st[k].name);
    memset(&g->st[k], 0, sizeof g->st[k]);
  }
  for (int b = 0; b < g->nb; b++) cg_free(&g->b[b].text), cg_free(&g->b[b].head);
  g->nb = 0, g->tmp = 0, g->rerun = false;
  cg_str fn = {0};
  cg_kernel_open(&fn, g->dialect, fn_name, g->nvars, cg_param_count(g->nodes, g->n), 0);
  for (size_t k = 0; k < g->n; k++) {
    frit_uop *u = g->nodes[k];
    if (u->op == FRIT_OP_DEFINE_GLOBAL) {
      char nm[32];
      snprintf(nm, sizeof nm, "g%zu", k);
      cg_param_decl(&fn, g->dialect, cg_mtype(frit_dtype_kind(u->dtype)), true, nm, u->arg.i0);
    } else if (u->op == FRIT_OP_DEFINE_VAR) {
      for (int i = 0; i < g->nvars; i++)
        if (g->vars[i] == u ||
            (g->vars[i] && g->vars[i]->arg.blob && u->arg.blob && strcmp(g->vars[i]->arg.blob, u->arg.blob) == 0)) {
          cg_var_decl(&fn, g->dialect, i, (const char *)u->arg.blob);
          break;
        }
    } else if (u->op == FRIT_OP_DEFINE_REG && (u->arg.i1 < 0 || u->arg.i1 > 4096)) {
      fail(g, u, "registers need a static element count up to 4096");
    }
  }
  int root = new_blk(g, -1, SB_ROOT, 0);
  bool ok = root >= 0 && !g->failed;
  if (ok) {
    bool top_end = false;
    for (uint32_t i = 0; i < ast->nsrc; i++) top_end = top_end || ast->src[i]->op == FRIT_OP_END;
    if (!g->g0) line(g, root, "if (g0_begin >= g0_end) return;");
    if (!top_end) point_decls(g, root);
    for (uint32_t i = 0; ok && i < ast->nsrc; i++) {
      frit_uop *s = ast->src[i];
      ok = s->op == FRIT_OP_END ? emit_end(g, s, root, true) : stmt(g, s, root);
    }
  }
  char *out = NULL;
  if (ok && !g->failed) {
    if (g->b[root].text.oom) oom(g);
    else if (g->b[root].text.s) cg_puts(&fn, g->b[root].text.s);
    cg_puts(&fn, "}\n");
    out = cg_take(&fn);
    if (!out) oom(g);
  }
  cg_free(&fn);
  return out;
}

char *cg_render_structured(frit_ctx *ctx, frit_uop *ast, const char *fn_name, frit_uop *const *vars, int nvars,
                           frit_dialect dialect, frit_uop **g0_extent) {
  sg G;
  memset(&G, 0, sizeof G);
  sg *g = &G;
  g->ctx = ctx, g->vars = vars, g->nvars = nvars, g->dialect = dialect;
  char *out = NULL;
  if (!ast || ast->op != FRIT_OP_SINK) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "codegen: a structured kernel must be a SINK");
    return NULL;
  }
  g->nodes = frit_walk_topo(ast, &g->n);
  g->pos = malloc(((size_t)ast->id + 1) * sizeof *g->pos);
  g->st = calloc(g->n + 1, sizeof *g->st);
  g->seqv = calloc(g->n + 1, 1);
  g->hoist = calloc(g->n + 1, 1);
  g->vol = calloc(g->n + 1, 1);
  if (!g->nodes || !g->pos || !g->st || !g->seqv || !g->hoist || !g->vol) {
    oom(g);
    goto done;
  }
  for (size_t k = 0; k < g->n; k++) g->pos[g->nodes[k]->id] = (uint32_t)k;
  for (size_t k = 0; k < g->n; k++) {
    frit_uop *u = g->nodes[k];
    if (u->op != FRIT_OP_SEQ) continue;
    for (uint32_t i = 0; i < u->nsrc; i++) {
      frit_op so = (frit_op)u->src[i]->op;
      if (so == FRIT_OP_LOAD || so == FRIT_OP_ATOMIC || so == FRIT_OP_ATOMIC_CAS) g->seqv[L(g, u->src[i])] = 1;
    }
  }
  /* unlisted reads of written memory are re-read at every use (as the interpreter does) */
  for (size_t k = 0; k < g->n; k++) {
    frit_uop *u = g->nodes[k];
    if (u->op != FRIT_OP_STORE && u->op != FRIT_OP_ATOMIC && u->op != FRIT_OP_ATOMIC_CAS) continue;
    frit_uop *p = u->src[0];
    while (p->op == FRIT_OP_INDEX || p->op == FRIT_OP_AFTER) p = p->src[0];
    g->vol[L(g, p)] = 1; /* the written base */
  }
  for (size_t k = 0; k < g->n; k++) {
    frit_uop *u = g->nodes[k];
    if (g->seqv[k] || u->op == FRIT_OP_DEFINE_GLOBAL || u->op == FRIT_OP_DEFINE_REG) continue;
    bool v = false;
    if (u->op == FRIT_OP_LOAD) {
      frit_uop *p = u->src[0];
      while (p->op == FRIT_OP_INDEX || p->op == FRIT_OP_AFTER) p = p->src[0];
      v = g->vol[L(g, p)];
    }
    for (uint32_t i = 0; i < u->nsrc && !v; i++) {
      frit_uop *x = u->src[i];
      v = !g->seqv[L(g, x)] && x->op != FRIT_OP_DEFINE_GLOBAL && x->op != FRIT_OP_DEFINE_REG && g->vol[L(g, x)];
    }
    g->vol[k] = v;
  }
  /* the g0 axis: the first range of the only END, with an extent known before the kernel runs */
  frit_uop *ext = NULL;
  if (ast->nsrc == 1 && ast->src[0]->op == FRIT_OP_END && ast->src[0]->nsrc >= 2 &&
      ast->src[0]->src[1]->op == FRIT_OP_RANGE && static_extent(ast->src[0]->src[1]->src[0])) {
    g->g0 = ast->src[0]->src[1];
    ext = g->g0->src[0];
  } else {
    ext = frit_const_int(ctx, FRIT_I64, 1);
    if (!ext) goto done;
  }
  /* a second pass when a SEQ value turned out to be used beyond its C block (then declared per
     point); each pass adds declarations only, so two or three passes settle */
  for (int pass = 0; pass < 4; pass++) {
    free(out);
    out = render_pass(g, ast, fn_name);
    if (!out || !g->rerun) break;
  }
  if (out && g->rerun) {
    free(out);
    out = NULL;
    frit_set_error(ctx, FRIT_ERR_INVALID, "codegen: structured kernel: value scopes did not settle");
  }
  if (out && g0_extent) *g0_extent = ext;
done:
  if (g->st)
    for (size_t k = 0; k < g->n; k++) free(g->st[k].name);
  for (int b = 0; b < g->nb; b++) cg_free(&g->b[b].text), cg_free(&g->b[b].head);
  free(g->b);
  free(g->nodes);
  free(g->pos);
  free(g->st);
  free(g->seqv);
  free(g->hoist);
  free(g->vol);
  return out;
}
