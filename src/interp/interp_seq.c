/* The reference interpreter for structured kernels (graphs with SEQ): statement semantics, one
 * kernel point at a time in row-major order, SEQ sources in program order (docs/semantics.md). */
#include "interp/interp_seq.h"
#include "interp/scalar.h"

#include <inttypes.h>
#include <math.h>

#define L frit_sq_pos
#define lanes_of frit_sq_lanes
#define is_void frit_sq_is_void
#define is_dep frit_sq_is_dep
#define needed frit_sq_needed
#define fail frit_sq_fail

int frit_sq_fail(sq *S, const frit_uop *u, const char *fmt, ...) {
  char msg[700];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  frit_interp_error(S->ctx, u, "%s", msg);
  return S_ERR;
}

static frit_scalar *V(sq *S, const frit_uop *u) { return S->val[L(S, u)]; }

#define as_i64 frit_interp_as_i64

/* ---------- validity of cached values ---------- */

static bool valid(const sq *S, uint32_t k) {
  uint64_t st = S->stamp[k];
  switch (S->kind[k]) {
  case K_RANGE: return S->active[k] || S->stamp[k] >= S->point; /* after its loop: the last value */
  case K_SOURCE: return S->stamp[k] >= S->point; /* evaluated at this point */
  case K_STMT: return false;
  case K_VOLATILE:
    if (st < S->req) return false;
    break;
  default:
    if (!st) return false;
    break;
  }
  /* A value over a loop that has ended keeps its last value (a variable assigned in the loop,
   * read after it) if it was computed at this point. */
  const uint32_t *s = S->sets + S->set_off[k];
  for (uint32_t j = 0; j < S->set_len[k]; j++) {
    uint32_t l = s[j];
    if (S->stamp[l] > st || (S->kind[l] == K_RANGE && !S->active[l] && st < S->point) ||
        (S->kind[l] == K_SOURCE && S->stamp[l] < S->point))
      return false;
  }
  return true;
}

static bool push(sq *S, uint32_t k) {
  if (S->fsp == S->fcap) {
    size_t cap = S->fcap ? S->fcap * 2 : 256;
    sframe *f = realloc(S->fr, cap * sizeof *f);
    if (!f) return false;
    S->fr = f, S->fcap = cap;
  }
  S->fr[S->fsp++] = (sframe){.k = k, .phase = 0, .lvl = 0};
  return true;
}

static void set_range(sq *S, uint32_t k, int64_t v) {
  S->val[k][0].i = v;
  S->active[k] = true;
  S->stamp[k] = ++S->clock;
}

/* ---------- memory ---------- */

/* A gated read into the node's value slot (value sources and unlisted loads alike). */
static int do_load(sq *S, frit_uop *u) {
  bool has_alt = u->nsrc > 1 && !is_dep(u, 1);
  return frit_interp_load(S->ctx, u, S->bufs, &S->ptr[L(S, u->src[0])], has_alt ? V(S, u->src[1]) : NULL,
                          has_alt ? lanes_of(u->src[1]->dtype) : 0, V(S, u))
             ? S_OK
             : S_ERR;
}

/* STORE, ATOMIC, ATOMIC_CAS once their pointer and values are computed. */
static int do_write(sq *S, frit_uop *u) {
  frit_scalar *out = lanes_of(u->dtype) ? V(S, u) : NULL;
  const frit_scalar *desired = u->op == FRIT_OP_ATOMIC_CAS ? V(S, u->src[2]) : NULL;
  return frit_interp_write(S->ctx, u, S->bufs, &S->ptr[L(S, u->src[0])], V(S, u->src[1]), desired, out) ? S_OK : S_ERR;
}

static int eval_var(sq *S, frit_uop *u) {
  const char *name = u->arg.blob_kind == FRIT_BLOB_STR ? (const char *)u->arg.blob : "";
  for (int i = 0; i < S->nvars; i++) {
    if (S->vars[i].name && strcmp(S->vars[i].name, name) == 0) {
      int64_t v = S->vars[i].value;
      if (u->op == FRIT_OP_DEFINE_VAR && (v < u->arg.i0 || v > u->arg.i1))
        return fail(S, u, "variable '%s' = %" PRId64 " is outside its bounds %" PRId64 "..%" PRId64, name, v,
                    u->arg.i0, u->arg.i1);
      frit_scalar s;
      s.i = v;
      s = frit_eval_cast(s, FRIT_I64, frit_dtype_scalar(u->dtype));
      for (int l = 0; l < lanes_of(u->dtype); l++) V(S, u)[l] = s;
      return S_OK;
    }
  }
  if (u->op == FRIT_OP_SPECIAL) return fail(S, u, "SPECIAL '%s' needs a backend (or a binding of that name)", name);
  return fail(S, u, "unbound variable '%s'", name);
}

static int eval_index(sq *S, frit_uop *u) {
  if (!frit_dtype_is_ptr(u->src[0]->dtype))
    return fail(S, u, "element address of a tensor-level node: schedule the kernel before interpreting it");
  const frit_scalar *gate = u->nsrc > 2 ? V(S, u->src[2]) : NULL;
  return frit_interp_index(S->ctx, u, S->ptr[L(S, u->src[0])], V(S, u->src[1]), gate, &S->ptr[L(S, u)]) ? S_OK
                                                                                                           : S_ERR;
}

/* A pure node whose sources are valid. */
static int compute(sq *S, frit_uop *u) {
  frit_scalar *out = V(S, u);
  int lanes = lanes_of(u->dtype);
  frit_op op = (frit_op)u->op;
  if (frit_op_flags(op) & FRIT_F_ALU) {
    frit_dtype operand = frit_dtype_scalar(u->src[op == FRIT_OP_WHERE ? 1 : 0]->dtype);
    for (int l = 0; l < lanes; l++) {
      frit_scalar a[3];
      for (uint32_t i = 0; i < u->nsrc; i++) a[i] = V(S, u->src[i])[lanes_of(u->src[i]->dtype) == 1 ? 0 : l];
      out[l] = frit_eval_alu(op, operand, a);
    }
    return S_OK;
  }
  switch (op) {
  case FRIT_OP_CONST:
    for (int l = 0; l < lanes; l++) out[l] = u->arg.value;
    return S_OK;
  case FRIT_OP_VECTORIZE: {
    int l = 0;
    for (uint32_t i = 0; i < u->nsrc; i++)
      for (int j = 0; j < lanes_of(u->src[i]->dtype); j++) {
        if (l >= lanes) return fail(S, u, "more source lanes than result lanes");
        out[l++] = V(S, u->src[i])[j];
      }
    if (l != lanes) return fail(S, u, "%d source lanes for %d result lanes", l, lanes);
    return S_OK;
  }
  case FRIT_OP_GEP: {
    frit_uop *s = u->src[0];
    const int64_t *ix = u->arg.blob_kind == FRIT_BLOB_INTS ? u->arg.blob : &u->arg.i0;
    int n = u->arg.blob_kind == FRIT_BLOB_INTS ? (int)u->arg.n : 1;
    if (n != lanes) return fail(S, u, "%d lane indices for %d lanes", n, lanes);
    for (int l = 0; l < lanes; l++) {
      if (ix[l] < 0 || ix[l] >= lanes_of(s->dtype)) return fail(S, u, "lane %" PRId64 " out of range", ix[l]);
      out[l] = V(S, s)[ix[l]];
    }
    return S_OK;
  }
  case FRIT_OP_CAST: case FRIT_OP_BITCAST: {
    frit_uop *s = u->src[0];
    if (frit_dtype_is_ptr(u->dtype) && frit_dtype_is_ptr(s->dtype)) {
      S->ptr[L(S, u)] = S->ptr[L(S, s)];
      return S_OK;
    }
    if (lanes == 0 || lanes_of(s->dtype) == 0) return fail(S, u, "cannot convert pointers or void");
    frit_scalar_kind kf = frit_dtype_kind(s->dtype), kt = frit_dtype_kind(u->dtype);
    if (op == FRIT_OP_CAST) {
      if (lanes_of(s->dtype) != lanes) return fail(S, u, "lane counts differ");
      for (int l = 0; l < lanes; l++) out[l] = frit_eval_cast(V(S, s)[l], kf, kt);
      return S_OK;
    }
    uint8_t img[FRIT_MAX_LANES * 8];
    int fb = frit_kind_bytes(kf), tb = frit_kind_bytes(kt);
    if (fb * lanes_of(s->dtype) != tb * lanes) return fail(S, u, "sizes differ");
    for (int l = 0; l < lanes_of(s->dtype); l++) frit_scalar_store(img + l * fb, kf, V(S, s)[l]);
    for (int l = 0; l < lanes; l++) out[l] = frit_scalar_load(img + l * tb, kt);
    return S_OK;
  }
  case FRIT_OP_BIND:
    for (int l = 0; l < lanes; l++) out[l] = V(S, u->src[1])[lanes_of(u->src[1]->dtype) == 1 ? 0 : l];
    return S_OK;
  case FRIT_OP_DEFINE_VAR: case FRIT_OP_SPECIAL: return eval_var(S, u);
  case FRIT_OP_INDEX: return eval_index(S, u);
  case FRIT_OP_AFTER: S->ptr[L(S, u)] = S->ptr[L(S, u->src[0])]; return S_OK;
  case FRIT_OP_LOAD: return do_load(S, u);
  case FRIT_OP_DEFINE_GLOBAL: case FRIT_OP_DEFINE_LOCAL: case FRIT_OP_DEFINE_REG:
    return S_OK; /* bound at setup */
  case FRIT_OP_RESHAPE: case FRIT_OP_PERMUTE: case FRIT_OP_EXPAND: case FRIT_OP_PAD: case FRIT_OP_SHRINK:
  case FRIT_OP_FLIP: case FRIT_OP_GATHER: case FRIT_OP_SCAN: case FRIT_OP_SCATTER: case FRIT_OP_LOOP:
  case FRIT_OP_CARRY: case FRIT_OP_IOTA: case FRIT_OP_CONTIGUOUS: case FRIT_OP_COLLECTIVE: case FRIT_OP_REDUCE_AXIS: case FRIT_OP_BUFFER:
  case FRIT_OP_KERNEL:
    return fail(S, u, "tensor-level op; lower it to loops before interpreting");
  case FRIT_OP_STORE: case FRIT_OP_ATOMIC: case FRIT_OP_ATOMIC_CAS: case FRIT_OP_SEQ: case FRIT_OP_BREAK:
  case FRIT_OP_CONTINUE: case FRIT_OP_END: case FRIT_OP_IF: case FRIT_OP_SINK: case FRIT_OP_GROUP:
  case FRIT_OP_BARRIER:
    return fail(S, u, "an effect used as a value (effects run where a SEQ lists them)");
  case FRIT_OP_RANGE: case FRIT_OP_REDUCE:
  case FRIT_OP_NEG: case FRIT_OP_NOT: case FRIT_OP_ABS: case FRIT_OP_SQRT: case FRIT_OP_RSQRT:
  case FRIT_OP_RECIP: case FRIT_OP_EXP: case FRIT_OP_EXP2: case FRIT_OP_LOG: case FRIT_OP_LOG2:
  case FRIT_OP_SIN: case FRIT_OP_COS: case FRIT_OP_TAN: case FRIT_OP_ASIN: case FRIT_OP_ACOS:
  case FRIT_OP_ATAN: case FRIT_OP_SINH: case FRIT_OP_COSH: case FRIT_OP_TANH: case FRIT_OP_ERF:
  case FRIT_OP_FLOOR: case FRIT_OP_CEIL: case FRIT_OP_TRUNC: case FRIT_OP_RINT: case FRIT_OP_ADD:
  case FRIT_OP_SUB: case FRIT_OP_MUL: case FRIT_OP_FDIV: case FRIT_OP_IDIV: case FRIT_OP_MOD:
  case FRIT_OP_MAX: case FRIT_OP_MIN: case FRIT_OP_POW: case FRIT_OP_ATAN2: case FRIT_OP_REAL: case FRIT_OP_IMAG: case FRIT_OP_CONJ: case FRIT_OP_COMPLEX: case FRIT_OP_AND:
  case FRIT_OP_OR: case FRIT_OP_XOR: case FRIT_OP_SHL: case FRIT_OP_SHR: case FRIT_OP_CMPLT:
  case FRIT_OP_CMPLE: case FRIT_OP_CMPEQ: case FRIT_OP_CMPNE: case FRIT_OP_WHERE: case FRIT_OP_MULACC:
  case FRIT_OP_COUNT_:
    break;
  }
  return fail(S, u, "not supported by the interpreter");
}

/* REDUCE(value, ranges...): an odometer over its ranges (outermost first), on the frame. */
enum { R_INIT, R_OPEN, R_BODY, R_NEXT };

static int step_reduce(sq *S, sframe *f, frit_uop *u) {
  int nr = (int)u->nsrc - 1;
  frit_dtype sdt = frit_dtype_scalar(u->dtype);
  frit_op rop = (frit_op)u->arg.i0;
  uint32_t k = f->k;
  for (;;) {
    switch (f->phase) {
    case R_INIT:
      if (rop < 0 || rop >= FRIT_OP_COUNT_ || !(frit_op_flags(rop) & FRIT_F_BINARY))
        return fail(S, u, "bad reduce op %" PRId64, u->arg.i0);
      for (int j = 1; j <= nr; j++)
        if (u->src[j]->op != FRIT_OP_RANGE) return fail(S, u, "source %d is not a RANGE", j);
      for (int l = 0; l < lanes_of(u->dtype); l++) S->val[k][l] = frit_interp_reduce_identity(rop, sdt);
      f->lvl = 0;
      f->phase = nr ? R_OPEN : R_BODY;
      break;
    case R_OPEN: {
      frit_uop *r = u->src[1 + f->lvl];
      uint32_t rk = L(S, r), ek = L(S, r->src[0]);
      if (S->active[rk]) return fail(S, u, "RANGE %" PRIu32 " is already running", r->id);
      if (!valid(S, ek)) return push(S, ek) ? S_PUSHED : fail(S, u, "out of memory");
      S->rend[rk] = as_i64(r->src[0], S->val[ek][0]);
      if (S->rend[rk] <= 0) {
        f->lvl--;
        f->phase = R_NEXT;
        break;
      }
      set_range(S, rk, 0);
      if (f->lvl + 1 < nr) f->lvl++;
      else f->phase = R_BODY;
      break;
    }
    case R_BODY: {
      frit_uop *b = u->src[0];
      uint32_t bk = L(S, b);
      if (!valid(S, bk)) return push(S, bk) ? S_PUSHED : fail(S, u, "out of memory");
      for (int l = 0; l < lanes_of(u->dtype); l++) {
        frit_scalar ab[2] = {S->val[k][l], S->val[bk][lanes_of(b->dtype) == 1 ? 0 : l]};
        S->val[k][l] = frit_eval_alu(rop, sdt, ab);
      }
      f->lvl = nr - 1;
      f->phase = R_NEXT;
      break;
    }
    case R_NEXT: {
      if (f->lvl < 0) return S_DONE;
      uint32_t rk = L(S, u->src[1 + f->lvl]);
      int64_t v = S->val[rk][0].i + 1;
      if (v < S->rend[rk]) {
        set_range(S, rk, v);
        if (f->lvl + 1 < nr) {
          f->lvl++;
          f->phase = R_OPEN;
        } else {
          f->phase = R_BODY;
        }
      } else {
        S->active[rk] = false;
        f->lvl--;
      }
      break;
    }
    default: FRIT_ASSERT(!"bad reduce phase");
    }
  }
}

/* Makes node u's value current, computing what it needs with an explicit stack (deep graphs). */
static int eval(sq *S, frit_uop *u) {
  uint32_t k0 = L(S, u);
  S->req = ++S->clock;
  if (valid(S, k0)) return S_OK;
  size_t base = S->fsp;
  if (!push(S, k0)) return fail(S, u, "out of memory");
  while (S->fsp > base) {
    sframe *f = &S->fr[S->fsp - 1];
    uint32_t k = f->k;
    frit_uop *x = S->nodes[k];
    if (f->phase == 0 && valid(S, k)) {
      S->fsp--;
      continue;
    }
    if (S->kind[k] == K_RANGE) return fail(S, x, "RANGE used outside its loop");
    if (S->kind[k] == K_SOURCE)
      return fail(S, x, "read before the statement that evaluates it ran at this kernel point");
    if (S->kind[k] == K_STMT) return fail(S, x, "an effect used as a value");
    if (x->op == FRIT_OP_REDUCE) {
      if (f->phase == 0) f->phase = R_INIT;
      int r = step_reduce(S, f, x);
      if (r == S_ERR) return S_ERR;
      if (r == S_DONE) {
        S->stamp[k] = S->clock;
        S->fsp--;
      }
      continue;
    }
    if (f->phase == 0) {
      if (x->op == FRIT_OP_INDEX && !frit_dtype_is_ptr(x->src[0]->dtype)) return eval_index(S, x); /* names it */
      f->phase = 1;
      for (uint32_t i = x->nsrc; i-- > 0;) {
        if (!needed(x, i)) continue;
        uint32_t s = L(S, x->src[i]);
        if (!valid(S, s) && !push(S, s)) return fail(S, x, "out of memory");
      }
      continue;
    }
    for (uint32_t i = 0; i < x->nsrc; i++)
      if (needed(x, i) && !valid(S, L(S, x->src[i])))
        return fail(S, x, "source %" PRIu32 " changed while computing this value (a range used outside its loop?)", i);
    if (compute(S, x) != S_OK) return S_ERR;
    S->stamp[k] = S->clock;
    S->fsp--;
  }
  return S_OK;
}

/* ---------- statements ---------- */

/* A kernel point starts: registers are zero, and values of earlier points are forgotten. */
static void reset_point(sq *S) {
  S->point = ++S->clock;
  for (size_t i = 0; i < S->nregs; i++) {
    frit_ibuf *b = &S->bufs[S->regs[i]];
    memset(b->data, 0, b->size * (size_t)frit_kind_bytes(b->kind));
  }
}

static int exec(sq *S, frit_uop *u, int depth);

/* END(body, ranges...): loops outermost first; a range's trip count is evaluated when its loop
 * starts. At depth 0 (the kernel's own END) each iteration of the nest is one kernel point. */
static int exec_end(sq *S, frit_uop *u, int depth) {
  int nr = (int)u->nsrc - 1;
  for (int j = 1; j <= nr; j++)
    if (u->src[j]->op != FRIT_OP_RANGE) return fail(S, u, "source %d is not a RANGE", j);
  int lvl = 0;
  bool opening = nr > 0;
  for (;;) {
    if (opening) {
      frit_uop *r = u->src[1 + lvl];
      uint32_t rk = L(S, r);
      if (S->active[rk]) return fail(S, u, "RANGE %" PRIu32 " is already running", r->id);
      if (eval(S, r->src[0]) != S_OK) return S_ERR;
      S->rend[rk] = as_i64(r->src[0], V(S, r->src[0])[0]);
      if (S->rend[rk] > 0) {
        set_range(S, rk, 0);
        if (lvl + 1 < nr) {
          lvl++;
          continue;
        }
        opening = false;
      } else {
        lvl--;
        goto next;
      }
    }
    /* body */
    if (depth == 0) reset_point(S);
    if (exec(S, u->src[0], depth == 0 ? 1 : depth) != S_OK) return S_ERR;
    lvl = nr - 1;
    if (S->sig != SIG_NONE) {
      int j = nr - 1;
      while (j >= 0 && L(S, u->src[1 + j]) != S->sig_at) j--;
      if (j < 0) { /* not one of ours: leave these loops, the signal goes up */
        for (int i = 0; i < nr; i++) S->active[L(S, u->src[1 + i])] = false;
        return S_OK;
      }
      for (int i = j + 1; i < nr; i++) S->active[L(S, u->src[1 + i])] = false;
      if (S->sig == SIG_BREAK) {
        S->active[L(S, u->src[1 + j])] = false;
        lvl = j - 1;
      } else {
        lvl = j;
      }
      S->sig = SIG_NONE;
    }
  next:
    for (;;) {
      if (lvl < 0) return S_OK;
      uint32_t rk = L(S, u->src[1 + lvl]);
      if (S->active[rk] && S->val[rk][0].i + 1 < S->rend[rk]) {
        set_range(S, rk, S->val[rk][0].i + 1);
        break;
      }
      S->active[rk] = false;
      lvl--;
    }
    if (lvl + 1 < nr) {
      lvl++;
      opening = true;
    }
  }
}

/* Computes the pointer and the values of a memory op (one request each, in source order). */
static int eval_operands(sq *S, frit_uop *u) {
  for (uint32_t i = 0; i < u->nsrc; i++)
    if (needed(u, i) && eval(S, u->src[i]) != S_OK) return S_ERR;
  return S_OK;
}

static int exec(sq *S, frit_uop *u, int depth) {
  frit_op op = (frit_op)u->op;
  switch (op) {
  case FRIT_OP_SEQ:
    if (depth == 0) reset_point(S); /* a rank-0 kernel: one point */
    for (uint32_t i = 0; i < u->nsrc; i++) {
      if (exec(S, u->src[i], depth ? depth : 1) != S_OK) return S_ERR;
      if (S->sig != SIG_NONE) return S_OK;
    }
    return S_OK;
  case FRIT_OP_SINK: case FRIT_OP_GROUP:
    for (uint32_t i = 0; i < u->nsrc; i++) {
      if (exec(S, u->src[i], depth) != S_OK) return S_ERR;
      if (S->sig != SIG_NONE) return S_OK;
    }
    return S_OK;
  case FRIT_OP_END: return exec_end(S, u, depth);
  case FRIT_OP_IF: {
    frit_uop *c = u->src[0];
    if (lanes_of(c->dtype) != 1) return fail(S, u, "condition must be a scalar");
    if (eval(S, c) != S_OK) return S_ERR;
    if (V(S, c)[0].u) return exec(S, u->src[1], depth);
    return u->nsrc > 2 ? exec(S, u->src[2], depth) : S_OK;
  }
  case FRIT_OP_BREAK: case FRIT_OP_CONTINUE: {
    uint32_t rk = L(S, u->src[0]);
    if (u->src[0]->op != FRIT_OP_RANGE || !S->active[rk])
      return fail(S, u, "not inside the loop of RANGE %" PRIu32, u->src[0]->id);
    S->sig = op == FRIT_OP_BREAK ? SIG_BREAK : SIG_CONTINUE;
    S->sig_at = rk;
    return S_OK;
  }
  case FRIT_OP_LOAD: case FRIT_OP_STORE: case FRIT_OP_ATOMIC: case FRIT_OP_ATOMIC_CAS: {
    if (op == FRIT_OP_LOAD && S->kind[L(S, u)] != K_SOURCE) return eval(S, u); /* a pure read */
    if (eval_operands(S, u) != S_OK) return S_ERR;
    if ((op == FRIT_OP_LOAD ? do_load(S, u) : do_write(S, u)) != S_OK) return S_ERR;
    uint32_t k = L(S, u);
    if (S->kind[k] == K_SOURCE) S->stamp[k] = ++S->clock;
    return S_OK;
  }
  case FRIT_OP_BARRIER: return S_OK;
  case FRIT_OP_KERNEL: case FRIT_OP_LOOP:
    return fail(S, u, "tensor-level op; schedule it before interpreting");
  case FRIT_OP_CONST: case FRIT_OP_VECTORIZE: case FRIT_OP_GEP: case FRIT_OP_CAST: case FRIT_OP_BITCAST:
  case FRIT_OP_DEFINE_VAR: case FRIT_OP_BIND: case FRIT_OP_IOTA: case FRIT_OP_CONTIGUOUS: case FRIT_OP_COLLECTIVE: case FRIT_OP_AFTER:
  case FRIT_OP_SPECIAL: case FRIT_OP_RESHAPE: case FRIT_OP_PERMUTE: case FRIT_OP_EXPAND: case FRIT_OP_PAD:
  case FRIT_OP_SHRINK: case FRIT_OP_FLIP: case FRIT_OP_GATHER: case FRIT_OP_REDUCE_AXIS: case FRIT_OP_REDUCE:
  case FRIT_OP_SCAN: case FRIT_OP_RANGE: case FRIT_OP_BUFFER: case FRIT_OP_DEFINE_GLOBAL:
  case FRIT_OP_DEFINE_LOCAL: case FRIT_OP_DEFINE_REG: case FRIT_OP_INDEX: case FRIT_OP_NEG: case FRIT_OP_NOT:
  case FRIT_OP_ABS: case FRIT_OP_SQRT: case FRIT_OP_RSQRT: case FRIT_OP_RECIP: case FRIT_OP_EXP:
  case FRIT_OP_EXP2: case FRIT_OP_LOG: case FRIT_OP_LOG2: case FRIT_OP_SIN: case FRIT_OP_COS: case FRIT_OP_TAN:
  case FRIT_OP_ASIN: case FRIT_OP_ACOS: case FRIT_OP_ATAN: case FRIT_OP_SINH: case FRIT_OP_COSH:
  case FRIT_OP_TANH: case FRIT_OP_ERF: case FRIT_OP_FLOOR: case FRIT_OP_CEIL: case FRIT_OP_TRUNC:
  case FRIT_OP_RINT: case FRIT_OP_ADD: case FRIT_OP_SUB: case FRIT_OP_MUL: case FRIT_OP_FDIV:
  case FRIT_OP_IDIV: case FRIT_OP_MOD: case FRIT_OP_MAX: case FRIT_OP_MIN: case FRIT_OP_POW:
  case FRIT_OP_ATAN2: case FRIT_OP_REAL: case FRIT_OP_IMAG: case FRIT_OP_CONJ: case FRIT_OP_COMPLEX: case FRIT_OP_AND: case FRIT_OP_OR: case FRIT_OP_XOR: case FRIT_OP_SHL: case FRIT_OP_SHR:
  case FRIT_OP_CMPLT: case FRIT_OP_CMPLE: case FRIT_OP_CMPEQ: case FRIT_OP_CMPNE: case FRIT_OP_WHERE:
  case FRIT_OP_MULACC: case FRIT_OP_SCATTER: case FRIT_OP_CARRY: case FRIT_OP_COUNT_:
    break;
  }
  /* a value listed as a statement: evaluate it here */
  return eval(S, u);
}

frit_status frit_interpret_seq(frit_ctx *ctx, frit_uop *root, void *const *bufs, const size_t *bufsizes, int nbufs,
                               const frit_binding *vars, int nvars, frit_scalar *out) {
  sq S;
  memset(&S, 0, sizeof S);
  S.ctx = ctx;
  S.vars = vars;
  S.nvars = nvars;
  S.clock = 1; /* stamp 0 means "never computed" */
  frit_status st = frit_sq_setup(&S, root, bufs, bufsizes, nbufs);
  if (st == FRIT_OK) {
    int r;
    if (is_void(root->dtype)) {
      r = exec(&S, root, 0);
      if (r == S_OK && S.sig != SIG_NONE) r = fail(&S, root, "BREAK/CONTINUE outside the loop of its RANGE");
    } else {
      reset_point(&S);
      r = eval(&S, root);
      if (r == S_OK && out && lanes_of(root->dtype))
        memcpy(out, V(&S, root), (size_t)lanes_of(root->dtype) * sizeof *out);
    }
    if (r != S_OK) st = frit_last_status(ctx) != FRIT_OK ? frit_last_status(ctx) : FRIT_ERR_RUNTIME;
  }
  frit_sq_free(&S);
  return st;
}

