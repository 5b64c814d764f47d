/* Memory semantics both interpreters share (interp.c for loop nests, interp_seq.c for structured
 * kernels): index arithmetic, checked buffer access, gated loads and the read-modify-write of
 * STORE / ATOMIC / ATOMIC_CAS. Errors are FRIT_ERR_RUNTIME naming the node. */
#include "interp/interp.h"
#include "interp/scalar.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

void frit_interp_error(frit_ctx *ctx, const frit_uop *u, const char *fmt, ...) {
  char msg[700];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  frit_set_error(ctx, FRIT_ERR_RUNTIME, "interpret: %s (node %" PRIu32 "): %s", frit_op_name((frit_op)u->op), u->id,
                 msg);
}

int64_t frit_interp_as_i64(const frit_uop *u, frit_scalar v) {
  if (frit_dtype_is_unsigned(u->dtype) && v.u > (uint64_t)INT64_MAX) return INT64_MAX;
  return v.i;
}

bool frit_interp_index(frit_ctx *ctx, const frit_uop *u, frit_ptrval base, const frit_scalar *ix,
                       const frit_scalar *gate, frit_ptrval *out) {
  if (frit_interp_lanes(u->src[1]->dtype) != 1) {
    frit_interp_error(ctx, u, "vector indices are not supported");
    return false;
  }
  int64_t off = frit_interp_as_i64(u->src[1], ix[0]);
  if ((off > 0 && base.off > INT64_MAX / 2 - off) || (off < 0 && base.off < INT64_MIN / 2 - off)) {
    frit_interp_error(ctx, u, "index %" PRId64 " overflows", off);
    return false;
  }
  *out = base;
  out->off = base.off + off;
  if (gate) out->gate = out->gate && gate[0].u != 0;
  return true;
}

/* The buffer of an access of `lanes` elements of `kind` at p, or NULL (error set). */
static frit_ibuf *access_buf(frit_ctx *ctx, const frit_uop *u, frit_ibuf *bufs, const frit_ptrval *p, int lanes,
                             frit_scalar_kind kind) {
  frit_ibuf *b = &bufs[p->buf];
  if (b->kind != kind) {
    char b0[32], b1[32];
    frit_interp_error(ctx, u, "access as %s to a buffer of %s", frit_dtype_name(kind, b0, 32),
                      frit_dtype_name(b->kind, b1, 32));
    return NULL;
  }
  if (p->off < 0 || (uint64_t)p->off + (uint64_t)lanes > b->size) {
    frit_interp_error(ctx, u, "index %" PRId64 "%s out of bounds of buffer %d (%zu elements)", p->off,
                      lanes > 1 ? " (vector)" : "", (int)p->buf, b->size);
    return NULL;
  }
  return b;
}

static frit_scalar zero(void) {
  frit_scalar z;
  z.c.re = 0, z.c.im = 0; /* all of it: complex zeros read c.im */
  return z;
}

bool frit_interp_load(frit_ctx *ctx, const frit_uop *u, frit_ibuf *bufs, const frit_ptrval *p,
                      const frit_scalar *alt, int alt_lanes, frit_scalar *out) {
  int lanes = frit_interp_lanes(u->dtype);
  frit_scalar_kind kind = frit_dtype_kind(u->dtype);
  if (!p->gate) {
    for (int l = 0; l < lanes; l++) out[l] = alt ? alt[alt_lanes == 1 ? 0 : l] : zero();
    return true;
  }
  frit_ibuf *b = access_buf(ctx, u, bufs, p, lanes, kind);
  if (!b) return false;
  int sz = frit_kind_bytes(kind);
  for (int l = 0; l < lanes; l++) out[l] = frit_scalar_load(b->data + (size_t)(p->off + l) * (size_t)sz, kind);
  return true;
}

bool frit_interp_write(frit_ctx *ctx, const frit_uop *u, frit_ibuf *bufs, const frit_ptrval *p, const frit_scalar *v,
                       const frit_scalar *desired, frit_scalar *out) {
  frit_uop *val = u->src[1];
  int lanes = frit_interp_lanes(val->dtype), out_lanes = out ? frit_interp_lanes(u->dtype) : 0;
  frit_scalar_kind kind = frit_dtype_kind(val->dtype);
  if (lanes == 0) {
    frit_interp_error(ctx, u, "stored value has no value dtype");
    return false;
  }
  if (!p->gate) {
    for (int l = 0; l < out_lanes; l++) out[l] = zero();
    return true;
  }
  frit_op op = FRIT_OP_CONST; /* CONST: the value replaces the old one */
  if (u->op == FRIT_OP_ATOMIC) {
    static const frit_op aop[FRIT_ATOMIC_COUNT_] = {
        [FRIT_ATOMIC_ADD] = FRIT_OP_ADD, [FRIT_ATOMIC_MIN] = FRIT_OP_MIN, [FRIT_ATOMIC_MAX] = FRIT_OP_MAX,
        [FRIT_ATOMIC_AND] = FRIT_OP_AND, [FRIT_ATOMIC_OR] = FRIT_OP_OR,   [FRIT_ATOMIC_XOR] = FRIT_OP_XOR,
        [FRIT_ATOMIC_XCHG] = FRIT_OP_CONST};
    if (u->arg.i0 < 0 || u->arg.i0 >= FRIT_ATOMIC_COUNT_) {
      frit_interp_error(ctx, u, "bad atomic op %" PRId64, u->arg.i0);
      return false;
    }
    op = aop[u->arg.i0];
  }
  frit_ibuf *b = access_buf(ctx, u, bufs, p, lanes, kind);
  if (!b) return false;
  int sz = frit_kind_bytes(kind);
  for (int l = 0; l < lanes; l++) {
    uint8_t *at = b->data + (size_t)(p->off + l) * (size_t)sz;
    frit_scalar old = frit_scalar_load(at, kind), nv = v[l];
    if (op != FRIT_OP_CONST) {
      frit_scalar ab[2] = {old, v[l]};
      nv = frit_eval_alu(op, frit_dtype_scalar(val->dtype), ab);
    } else if (u->op == FRIT_OP_ATOMIC_CAS) {
      nv = frit_scalar_to_bits(old, kind) != frit_scalar_to_bits(v[l], kind) ? old : desired[l];
    }
    frit_scalar_store(at, kind, nv);
    if (l < out_lanes) out[l] = old;
  }
  return true;
}
