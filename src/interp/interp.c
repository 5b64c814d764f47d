/* The reference interpreter: a direct evaluator over loop-level graphs, the oracle every later
 * stage is tested against. Evaluation uses an explicit stack; values are cached per node and
 * recomputed only when a range in the node's validity set changed (interp_sets.c). */
#include "interp/interp.h"
#include "interp/scalar.h"
#include "ir/walk.h"

#include <inttypes.h>
#include <math.h>

enum { ST_DONE, ST_PUSHED, ST_ERR };

static int fail(frit_interp *I, const frit_uop *u, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int fail(frit_interp *I, const frit_uop *u, const char *fmt, ...) {
  char msg[700];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  frit_interp_error(I->ctx, u, "%s", msg);
  return ST_ERR;
}

static uint32_t L(const frit_interp *I, const frit_uop *u) { return I->pos[u->id]; }

static bool valid(const frit_interp *I, uint32_t k) {
  uint64_t st = I->stamp[k];
  if (!st) return false;
  const uint32_t *s = I->sets + I->set_off[k];
  for (uint32_t j = 0; j < I->set_len[k]; j++)
    if (!I->r_active[s[j]] || I->r_changed[s[j]] > st) return false;
  return true;
}

static bool push(frit_interp *I, uint32_t k) {
  if (I->fsp == I->fcap) {
    size_t cap = I->fcap ? I->fcap * 2 : 256;
    frit_iframe *f = realloc(I->fr, cap * sizeof *f);
    if (!f) return false;
    I->fr = f, I->fcap = cap;
  }
  I->fr[I->fsp++] = (frit_iframe){.n = k, .phase = 0, .i = 0, .lvl = 0};
  return true;
}

/* Makes sure node `s` is valid; if not, schedules it and makes the caller return ST_PUSHED.
 * The caller must have saved its progress in the frame first (push may move the frames). */
#define NEED(s)                                                                              \
  do {                                                                                       \
    uint32_t need_k_ = L(I, (s));                                                            \
    if (!valid(I, need_k_)) {                                                                \
      if (!push(I, need_k_)) return fail(I, (s), "out of memory");                          \
      return ST_PUSHED;                                                                      \
    }                                                                                        \
  } while (0)

static frit_scalar *V(frit_interp *I, const frit_uop *u) { return I->val[L(I, u)]; }
static frit_ptrval *P(frit_interp *I, const frit_uop *u) { return &I->ptr[L(I, u)]; }
#define lanes_of frit_interp_lanes

#define as_i64 frit_interp_as_i64

static frit_scalar zero_scalar(void) {
  frit_scalar z;
  z.c.re = 0, z.c.im = 0; /* all of it: complex zeros read c.im */
  return z;
}

/* ---------- memory ---------- */

static int new_buf(frit_interp *I, const frit_uop *u, uint8_t *data, size_t size, frit_scalar_kind kind, bool owned,
                   int32_t *slot) {
  if (I->nbufs == I->cap_bufs) {
    size_t cap = I->cap_bufs ? I->cap_bufs * 2 : 8;
    frit_ibuf *b = realloc(I->bufs, cap * sizeof *b);
    if (!b) {
      if (owned) free(data);
      return fail(I, u, "out of memory");
    }
    I->bufs = b, I->cap_bufs = cap;
  }
  I->bufs[I->nbufs] = (frit_ibuf){.data = data, .size = size, .kind = kind, .owned = owned};
  *slot = (int32_t)I->nbufs++;
  return ST_DONE;
}

static int eval_define(frit_interp *I, frit_uop *u) {
  frit_scalar_kind kind = frit_dtype_kind(u->dtype);
  frit_ptrval *p = P(I, u);
  if (!frit_dtype_is_ptr(u->dtype) || kind == FRIT_VOID) return fail(I, u, "needs a pointer dtype");
  *p = (frit_ptrval){.buf = 0, .off = 0, .gate = true};
  if (u->op == FRIT_OP_DEFINE_GLOBAL) {
    int64_t k = u->arg.i0;
    if (k < 0 || (uint64_t)k >= I->nuser)
      return fail(I, u, "parameter %" PRId64 " but %zu buffers were given", k, I->nuser);
    frit_ibuf *b = &I->bufs[k];
    if (!b->data && b->size) return fail(I, u, "buffer %" PRId64 " is NULL", k);
    if (b->kind == FRIT_VOID) b->kind = kind;
    if (b->kind != kind) return fail(I, u, "buffer %" PRId64 " used with two element dtypes", k);
    p->buf = (int32_t)k;
    return ST_DONE;
  }
  /* local and register memory: fresh and zeroed for each frit_interpret call */
  int64_t count = u->arg.i1;
  if (count < 0 || count > (INT64_C(1) << 32)) return fail(I, u, "bad element count %" PRId64, count);
  uint8_t *data = calloc((size_t)count + 1, (size_t)frit_kind_bytes(kind));
  if (!data) return fail(I, u, "out of memory");
  return new_buf(I, u, data, (size_t)count, kind, true, &p->buf);
}

static int eval_index(frit_interp *I, frit_uop *u) {
  const frit_scalar *gate = u->nsrc > 2 ? V(I, u->src[2]) : NULL;
  return frit_interp_index(I->ctx, u, *P(I, u->src[0]), V(I, u->src[1]), gate, P(I, u)) ? ST_DONE : ST_ERR;
}

static bool is_dep(const frit_uop *u, uint32_t i) {
  frit_op op = (frit_op)u->op;
  if (op == FRIT_OP_AFTER) return i >= 1;
  if (op == FRIT_OP_LOAD || op == FRIT_OP_STORE || op == FRIT_OP_ATOMIC || op == FRIT_OP_ATOMIC_CAS)
    return i >= 1 && frit_dtype_kind(u->src[i]->dtype) == FRIT_VOID && !frit_dtype_is_ptr(u->src[i]->dtype);
  return false;
}

static int eval_memory(frit_interp *I, frit_uop *u) {
  frit_ptrval *p = P(I, u->src[0]);
  bool ok;
  if (u->op == FRIT_OP_LOAD) {
    bool has_alt = u->nsrc > 1 && !is_dep(u, 1);
    ok = frit_interp_load(I->ctx, u, I->bufs, p, has_alt ? V(I, u->src[1]) : NULL,
                          has_alt ? lanes_of(u->src[1]->dtype) : 0, V(I, u));
  } else {
    ok = frit_interp_write(I->ctx, u, I->bufs, p, V(I, u->src[1]), u->op == FRIT_OP_ATOMIC_CAS ? V(I, u->src[2]) : NULL,
                           V(I, u));
  }
  return ok ? ST_DONE : ST_ERR;
}

/* ---------- values ---------- */

static int eval_var(frit_interp *I, frit_uop *u) {
  const char *name = u->arg.blob_kind == FRIT_BLOB_STR ? (const char *)u->arg.blob : "";
  for (int i = 0; i < I->nvars; i++) {
    if (I->vars[i].name && strcmp(I->vars[i].name, name) == 0) {
      int64_t v = I->vars[i].value;
      if (u->op == FRIT_OP_DEFINE_VAR && (v < u->arg.i0 || v > u->arg.i1))
        return fail(I, u, "variable '%s' = %" PRId64 " is outside its bounds %" PRId64 "..%" PRId64, name, v,
                    u->arg.i0, u->arg.i1);
      frit_scalar s;
      s.i = v;
      s = frit_eval_cast(s, FRIT_I64, frit_dtype_scalar(u->dtype));
      for (int l = 0; l < lanes_of(u->dtype); l++) V(I, u)[l] = s;
      return ST_DONE;
    }
  }
  if (u->op == FRIT_OP_SPECIAL)
    return fail(I, u, "SPECIAL '%s' needs a backend (or a binding of that name)", name);
  return fail(I, u, "unbound variable '%s'", name);
}

static int eval_value(frit_interp *I, frit_uop *u) {
  frit_scalar *out = V(I, u);
  int lanes = lanes_of(u->dtype);
  frit_op op = (frit_op)u->op;
  if (frit_op_flags(op) & FRIT_F_ALU) {
    int first = op == FRIT_OP_WHERE ? 1 : 0;
    frit_dtype operand = frit_dtype_scalar(u->src[first]->dtype);
    for (int l = 0; l < lanes; l++) {
      frit_scalar a[3];
      for (uint32_t i = 0; i < u->nsrc; i++) {
        frit_uop *s = u->src[i];
        a[i] = V(I, s)[lanes_of(s->dtype) == 1 ? 0 : l];
      }
      out[l] = frit_eval_alu(op, operand, a);
    }
    return ST_DONE;
  }
  switch (op) {
  case FRIT_OP_CONST:
    for (int l = 0; l < lanes; l++) out[l] = u->arg.value;
    return ST_DONE;
  case FRIT_OP_VECTORIZE: {
    int l = 0;
    for (uint32_t i = 0; i < u->nsrc; i++) {
      frit_uop *s = u->src[i];
      for (int j = 0; j < lanes_of(s->dtype); j++) {
        if (l >= lanes) return fail(I, u, "more source lanes than result lanes");
        out[l++] = V(I, s)[j];
      }
    }
    if (l != lanes) return fail(I, u, "%d source lanes for %d result lanes", l, lanes);
    return ST_DONE;
  }
  case FRIT_OP_GEP: {
    frit_uop *s = u->src[0];
    const int64_t *ix = u->arg.blob_kind == FRIT_BLOB_INTS ? u->arg.blob : &u->arg.i0;
    int n = u->arg.blob_kind == FRIT_BLOB_INTS ? (int)u->arg.n : 1;
    if (n != lanes) return fail(I, u, "%d lane indices for %d lanes", n, lanes);
    for (int l = 0; l < lanes; l++) {
      if (ix[l] < 0 || ix[l] >= lanes_of(s->dtype)) return fail(I, u, "lane %" PRId64 " out of range", ix[l]);
      out[l] = V(I, s)[ix[l]];
    }
    return ST_DONE;
  }
  case FRIT_OP_CAST: case FRIT_OP_BITCAST: {
    frit_uop *s = u->src[0];
    if (frit_dtype_is_ptr(u->dtype) && frit_dtype_is_ptr(s->dtype)) {
      *P(I, u) = *P(I, s);
      return ST_DONE;
    }
    if (lanes == 0 || lanes_of(s->dtype) == 0) return fail(I, u, "cannot convert pointers or void");
    frit_scalar_kind kf = frit_dtype_kind(s->dtype), kt = frit_dtype_kind(u->dtype);
    if (op == FRIT_OP_CAST) {
      if (lanes_of(s->dtype) != lanes) return fail(I, u, "lane counts differ");
      for (int l = 0; l < lanes; l++) out[l] = frit_eval_cast(V(I, s)[l], kf, kt);
      return ST_DONE;
    }
    /* through the memory image, so lane counts may differ when the total size agrees */
    uint8_t img[FRIT_MAX_LANES * 8];
    int fb = frit_kind_bytes(kf), tb = frit_kind_bytes(kt);
    if (fb * lanes_of(s->dtype) != tb * lanes) return fail(I, u, "sizes differ");
    for (int l = 0; l < lanes_of(s->dtype); l++) frit_scalar_store(img + l * fb, kf, V(I, s)[l]);
    for (int l = 0; l < lanes; l++) out[l] = frit_scalar_load(img + l * tb, kt);
    return ST_DONE;
  }
  case FRIT_OP_BIND:
    for (int l = 0; l < lanes; l++) out[l] = V(I, u->src[1])[lanes_of(u->src[1]->dtype) == 1 ? 0 : l];
    return ST_DONE;
  case FRIT_OP_DEFINE_VAR: case FRIT_OP_SPECIAL: return eval_var(I, u);
  case FRIT_OP_RANGE: return fail(I, u, "RANGE used outside its loop");
  case FRIT_OP_DEFINE_GLOBAL: case FRIT_OP_DEFINE_LOCAL: case FRIT_OP_DEFINE_REG: return eval_define(I, u);
  case FRIT_OP_INDEX: return eval_index(I, u);
  case FRIT_OP_AFTER: *P(I, u) = *P(I, u->src[0]); return ST_DONE;
  case FRIT_OP_LOAD: case FRIT_OP_STORE: case FRIT_OP_ATOMIC: case FRIT_OP_ATOMIC_CAS: return eval_memory(I, u);
  case FRIT_OP_SINK: case FRIT_OP_GROUP: case FRIT_OP_BARRIER: return ST_DONE;
  case FRIT_OP_RESHAPE: case FRIT_OP_PERMUTE: case FRIT_OP_EXPAND: case FRIT_OP_PAD: case FRIT_OP_SHRINK:
  case FRIT_OP_FLIP: case FRIT_OP_GATHER: case FRIT_OP_SCAN: case FRIT_OP_SCATTER: case FRIT_OP_SEQ: case FRIT_OP_BREAK: case FRIT_OP_CONTINUE: case FRIT_OP_LOOP: case FRIT_OP_CARRY: case FRIT_OP_IOTA: case FRIT_OP_CONTIGUOUS: case FRIT_OP_COLLECTIVE: case FRIT_OP_REDUCE_AXIS: case FRIT_OP_BUFFER: case FRIT_OP_KERNEL:
    return fail(I, u, "tensor-level op; lower it to loops before interpreting");
  case FRIT_OP_REDUCE: case FRIT_OP_END: case FRIT_OP_IF:
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
  return fail(I, u, "not supported by the interpreter");
}

/* ---------- control: loops and branches ---------- */

enum { D_INIT, D_OPEN, D_BODY, D_NEXT };

frit_scalar frit_interp_reduce_identity(frit_op op, frit_dtype dt) {
  frit_scalar z = zero_scalar();
  bool fl = frit_dtype_is_float(dt) || frit_dtype_is_complex(dt); /* complex one: 1 + 0i */
  int64_t lo, hi;
  frit_dtype_limits(dt, &lo, &hi);
  if (op == FRIT_OP_MUL) {
    if (fl) z.f = 1.0;
    else z.i = 1;
  } else if (op == FRIT_OP_MAX) {
    if (fl) z.f = -INFINITY;
    else z.i = lo;
  } else if (op == FRIT_OP_MIN) {
    if (fl) z.f = INFINITY;
    else if (frit_dtype_kind(dt) == FRIT_U64) z.u = UINT64_MAX;
    else if (frit_dtype_kind(dt) == FRIT_I64) z.i = INT64_MAX;
    else z.i = hi;
  } else if (op == FRIT_OP_AND) {
    z.i = -1;
    z = frit_scalar_normalize(z, dt);
  }
  return z; /* ADD, OR, XOR: zero */
}

static void set_range(frit_interp *I, frit_uop *r, int64_t v) {
  uint32_t k = L(I, r);
  int32_t x = I->rix[k];
  I->val[k][0].i = v;
  I->stamp[k] = ++I->clock;
  I->r_changed[x] = I->clock;
  I->r_active[x] = true;
}

/* Float sums are pairwise, as in the generated C (src/codegen/linear_reduce.c): blocks of
 * PW_BLOCK values summed in order, the block sums combined as a binary tree (s[i] holds 2^i
 * blocks), so that no partial sum saturates and the error grows with log2 of the length. */
#define PW_BLOCK 256 /* the generated C's block per vector of lanes; in order within one, so
                          * that a sum of at most 256 terms is the plain loop's, bit for bit */
typedef struct frit_ipw {
  uint64_t nblocks;
  uint32_t inblock;
  frit_scalar s[64];
} frit_ipw;

static bool pairwise_sum(const frit_uop *u) {
  return u->op == FRIT_OP_REDUCE && u->arg.i0 == FRIT_OP_ADD &&
         (frit_dtype_is_float(u->dtype) || frit_dtype_is_complex(u->dtype)) &&
         !frit_dtype_is_ptr(u->dtype);
}

/* Closes the block held in acc into the tree. */
static void pw_push(frit_ipw *p, frit_dtype sdt, frit_scalar acc) {
  uint64_t c = p->nblocks++;
  int i = 0;
  for (; c & 1; c >>= 1, i++) acc = frit_eval_alu(FRIT_OP_ADD, sdt, (frit_scalar[2]){p->s[i], acc});
  p->s[i] = acc;
  p->inblock = 0;
}

/* The sum: the open block, then the tree from its smallest subtrees up. */
static frit_scalar pw_finish(frit_ipw *p, frit_dtype sdt, frit_scalar acc, frit_scalar zero) {
  if (p->inblock) pw_push(p, sdt, acc);
  frit_scalar r = zero;
  for (int i = 0; i < 64; i++)
    if ((p->nblocks >> i) & 1) r = frit_eval_alu(FRIT_OP_ADD, sdt, (frit_scalar[2]){p->s[i], r});
  return r;
}

/* END(body, ranges...) and REDUCE(value, ranges...): an odometer over the ranges, outermost
 * first; an inner range's end is evaluated once the outer ranges are set (triangular loops). */
static int step_loop(frit_interp *I, frit_iframe *f, frit_uop *u) {
  int nr = (int)u->nsrc - 1;
  bool red = u->op == FRIT_OP_REDUCE;
  frit_dtype sdt = frit_dtype_scalar(u->dtype);
  frit_op rop = (frit_op)u->arg.i0;
  for (;;) {
    switch (f->phase) {
    case D_INIT:
      if (red) {
        if (rop < 0 || rop >= FRIT_OP_COUNT_ || !(frit_op_flags(rop) & FRIT_F_BINARY))
          return fail(I, u, "bad reduce op %" PRId64, u->arg.i0);
        for (int l = 0; l < lanes_of(u->dtype); l++) V(I, u)[l] = frit_interp_reduce_identity(rop, sdt);
        if (pairwise_sum(u)) {
          uint32_t k = L(I, u);
          if (!I->pw && !(I->pw = calloc(I->n + 1, sizeof *I->pw))) return fail(I, u, "out of memory");
          free(I->pw[k]);
          if (!(I->pw[k] = calloc((size_t)lanes_of(u->dtype), sizeof **I->pw))) return fail(I, u, "out of memory");
        }
      }
      for (int j = 1; j <= nr; j++)
        if (u->src[j]->op != FRIT_OP_RANGE) return fail(I, u, "source %d is not a RANGE", j);
      f->lvl = 0;
      f->phase = nr ? D_OPEN : D_BODY;
      break;
    case D_OPEN: {
      frit_uop *r = u->src[1 + f->lvl];
      int32_t x = I->rix[L(I, r)];
      if (I->r_active[x]) return fail(I, u, "RANGE %" PRIu32 " is already running", r->id);
      NEED(r->src[0]);
      int64_t end = as_i64(r->src[0], V(I, r->src[0])[0]);
      I->r_end[x] = end;
      if (end <= 0) {
        f->lvl--;
        f->phase = D_NEXT;
        break;
      }
      set_range(I, r, 0);
      if (f->lvl + 1 < nr) f->lvl++;
      else f->phase = D_BODY;
      break;
    }
    case D_BODY:
      NEED(u->src[0]);
      if (red) {
        frit_uop *b = u->src[0];
        frit_ipw *pw = pairwise_sum(u) ? I->pw[L(I, u)] : NULL;
        for (int l = 0; l < lanes_of(u->dtype); l++) {
          frit_scalar ab[2] = {V(I, u)[l], V(I, b)[lanes_of(b->dtype) == 1 ? 0 : l]};
          V(I, u)[l] = frit_eval_alu(rop, sdt, ab);
          if (pw && ++pw[l].inblock == PW_BLOCK) {
            pw_push(&pw[l], sdt, V(I, u)[l]);
            V(I, u)[l] = frit_interp_reduce_identity(rop, sdt);
          }
        }
      }
      f->lvl = nr - 1;
      f->phase = D_NEXT;
      break;
    case D_NEXT: {
      if (f->lvl < 0) {
        frit_ipw *pw = red && pairwise_sum(u) ? I->pw[L(I, u)] : NULL;
        for (int l = 0; pw && l < lanes_of(u->dtype); l++)
          V(I, u)[l] = pw_finish(&pw[l], sdt, V(I, u)[l], frit_interp_reduce_identity(rop, sdt));
        if (pw) free(pw), I->pw[L(I, u)] = NULL;
        return ST_DONE;
      }
      frit_uop *r = u->src[1 + f->lvl];
      uint32_t k = L(I, r);
      int32_t x = I->rix[k];
      int64_t v = I->val[k][0].i + 1;
      if (v < I->r_end[x]) {
        set_range(I, r, v);
        if (f->lvl + 1 < nr) {
          f->lvl++;
          f->phase = D_OPEN;
        } else {
          f->phase = D_BODY;
        }
      } else {
        I->r_active[x] = false;
        f->lvl--;
      }
      break;
    }
    default: FRIT_ASSERT(!"bad loop phase");
    }
  }
}

static int step_if(frit_interp *I, frit_iframe *f, frit_uop *u) {
  if (f->phase == 0) {
    frit_uop *c = u->src[0];
    if (lanes_of(c->dtype) != 1) return fail(I, u, "condition must be a scalar");
    NEED(c);
    f->lvl = V(I, c)[0].u ? 1 : u->nsrc > 2 ? 2 : -1;
    f->phase = 1;
  }
  if (f->lvl > 0) NEED(u->src[f->lvl]);
  return ST_DONE;
}

/* One step of the node on top of the stack. */
static int step(frit_interp *I, frit_iframe *f) {
  frit_uop *u = I->nodes[f->n];
  if (u->op == FRIT_OP_END || u->op == FRIT_OP_REDUCE) return step_loop(I, f, u);
  if (u->op == FRIT_OP_IF) return step_if(I, f, u);
  /* tensor-level ops fail before their sources, so the message names the outermost one */
  if ((frit_op_flags((frit_op)u->op) & FRIT_F_MOVEMENT) || u->op == FRIT_OP_REDUCE_AXIS || u->op == FRIT_OP_BUFFER ||
      u->op == FRIT_OP_KERNEL)
    return eval_value(I, u);
  /* sources in order, ordering deps (and AFTER's effects) before the rest */
  while (f->phase < 2) {
    while (f->i < u->nsrc) {
      uint32_t i = f->i;
      if (is_dep(u, i) == (f->phase == 0)) NEED(u->src[i]);
      f->i++;
    }
    f->phase++;
    f->i = 0;
  }
  return eval_value(I, u);
}

/* ---------- entry ---------- */

static void interp_free(frit_interp *I) {
  for (size_t b = 0; b < I->nbufs; b++)
    if (I->bufs[b].owned) free(I->bufs[b].data);
  free(I->bufs);
  free(I->nodes);
  free(I->pos);
  free(I->val);
  free(I->pool);
  free(I->ptr);
  free(I->stamp);
  for (size_t k = 0; I->pw && k < I->n; k++) free(I->pw[k]);
  free(I->pw);
  free(I->set_off);
  free(I->set_len);
  free(I->sets);
  free(I->dyn);
  free(I->rix);
  free(I->r_active);
  free(I->r_changed);
  free(I->r_end);
  free(I->fr);
}

static frit_status interp_setup(frit_interp *I, frit_uop *root, void *const *bufs, const size_t *bufsizes, int nbufs) {
  size_t n = 0;
  I->nodes = frit_walk_topo(root, &n);
  if (!I->nodes) return frit_set_error(I->ctx, FRIT_ERR_NOMEM, "interpret: out of memory");
  I->n = n;
  I->pos = malloc(((size_t)root->id + 1) * sizeof *I->pos);
  I->val = calloc(n, sizeof *I->val);
  I->ptr = calloc(n, sizeof *I->ptr);
  I->stamp = calloc(n, sizeof *I->stamp);
  I->set_off = calloc(n, sizeof *I->set_off);
  I->set_len = calloc(n, sizeof *I->set_len);
  I->dyn = calloc(n, sizeof *I->dyn);
  I->rix = calloc(n, sizeof *I->rix);
  if (!I->pos || !I->val || !I->ptr || !I->stamp || !I->set_off || !I->set_len || !I->dyn || !I->rix)
    return frit_set_error(I->ctx, FRIT_ERR_NOMEM, "interpret: out of memory");
  memset(I->pos, 0xff, ((size_t)root->id + 1) * sizeof *I->pos);
  size_t total = 0;
  for (size_t k = 0; k < n; k++) {
    I->pos[I->nodes[k]->id] = (uint32_t)k;
    total += (size_t)lanes_of(I->nodes[k]->dtype);
  }
  I->pool = calloc(total + 1, sizeof *I->pool);
  if (!I->pool) return frit_set_error(I->ctx, FRIT_ERR_NOMEM, "interpret: out of memory");
  for (size_t k = 0, at = 0; k < n; k++) {
    int l = lanes_of(I->nodes[k]->dtype);
    I->val[k] = l ? I->pool + at : NULL;
    at += (size_t)l;
  }
  if (frit_interp_compute_sets(I) != FRIT_OK) return FRIT_ERR_NOMEM;
  I->r_active = calloc(I->nr + 1, sizeof *I->r_active);
  I->r_changed = calloc(I->nr + 1, sizeof *I->r_changed);
  I->r_end = calloc(I->nr + 1, sizeof *I->r_end);
  if (!I->r_active || !I->r_changed || !I->r_end) return frit_set_error(I->ctx, FRIT_ERR_NOMEM, "interpret: out of memory");
  for (int b = 0; b < nbufs; b++) {
    int32_t slot;
    if (new_buf(I, root, bufs ? bufs[b] : NULL, bufsizes ? bufsizes[b] : 0, FRIT_VOID, false, &slot) != ST_DONE)
      return FRIT_ERR_NOMEM;
  }
  I->nuser = (size_t)(nbufs > 0 ? nbufs : 0);
  return FRIT_OK;
}

frit_status frit_interpret(frit_ctx *ctx, frit_uop *root, void *const *bufs, const size_t *bufsizes, int nbufs,
                           const frit_binding *vars, int nvars, frit_scalar *out) {
  if (!ctx) return FRIT_ERR_INVALID;
  if (!root) return frit_set_error(ctx, FRIT_ERR_INVALID, "interpret: NULL root");
  if (nbufs < 0 || nvars < 0 || (nvars > 0 && !vars))
    return frit_set_error(ctx, FRIT_ERR_INVALID, "interpret: bad buffer or variable list");
  /* kernels with statements (SEQ) run with statement semantics, one point at a time */
  frit_status sst;
  if (frit_interp_is_structured(root, &sst)) return frit_interpret_seq(ctx, root, bufs, bufsizes, nbufs, vars, nvars, out);
  if (sst != FRIT_OK) return frit_set_error(ctx, sst, "interpret: out of memory");
  frit_interp I;
  memset(&I, 0, sizeof I);
  I.ctx = ctx;
  I.vars = vars;
  I.nvars = nvars;
  I.clock = 1; /* stamp 0 means "never computed" */
  frit_status st = interp_setup(&I, root, bufs, bufsizes, nbufs);
  if (st == FRIT_OK) {
    uint32_t rk = I.pos[root->id];
    if (!push(&I, rk)) {
      st = frit_set_error(ctx, FRIT_ERR_NOMEM, "interpret: out of memory");
    }
    while (st == FRIT_OK && I.fsp) {
      frit_iframe *f = &I.fr[I.fsp - 1];
      uint32_t k = f->n;
      int r = step(&I, f);
      if (r == ST_ERR) st = frit_last_status(ctx) != FRIT_OK ? frit_last_status(ctx) : FRIT_ERR_RUNTIME;
      else if (r == ST_DONE) {
        I.stamp[k] = I.clock;
        I.fsp--;
      }
    }
    if (st == FRIT_OK && out && lanes_of(root->dtype))
      memcpy(out, I.val[rk], (size_t)lanes_of(root->dtype) * sizeof *out);
  }
  interp_free(&I);
  return st;
}
