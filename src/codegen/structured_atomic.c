/* C statements of one atomic read-modify-write for the structured emitter: __atomic builtins for
 * integer and bool add/and/or/xor/exchange, compare-and-swap loops for min/max and for floats
 * (on the bit pattern, combining exactly as the non-atomic op), plain code for registers. */
#include "codegen/structured.h"

static const char *utype(int bits) {
  return bits == 8 ? "uint8_t" : bits == 16 ? "uint16_t" : bits == 32 ? "uint32_t" : "uint64_t";
}

/* one line: indentation, the statement, newline (cg_printf checks the format) */
#define put(o, ind, ...) (cg_puts((o), (ind)), cg_printf((o), __VA_ARGS__), cg_puts((o), "\n"))

/* Device dialects: load, combine, and swap in the new bits if the memory still holds the old. */
static bool device_cas(frit_ctx *ctx, cg_str *o, const char *ind, frit_op alu, frit_scalar_kind kd, const char *mem,
                       const char *v, const char *old) {
  int bits = cg_kind_bits(kd);
  frit_scalar_kind uk = bits == 8 ? FRIT_U8 : bits == 16 ? FRIT_U16 : bits == 32 ? FRIT_U32 : FRIT_U64;
  const char *M = cg_mtype(kd), *T = cg_ctype(kd);
  cg_str val = {0}, comb = {0}, st = {0}, ob = {0}, nb = {0};
  bool ok = true;
  cg_render_load_conv(&val, kd, "mc_");
  if (alu == FRIT_OP_CONST) cg_puts(&comb, v);
  else {
    const char *ab[2] = {"ac_", v};
    ok = cg_render_alu(ctx, &comb, alu, kd, ab, 2);
  }
  cg_render_store_conv(&st, kd, "an_");
  /* the memory type's bits: f16/bf16 and bool are already unsigned words there */
  frit_scalar_kind mk = kd == FRIT_F16 || kd == FRIT_BF16 ? FRIT_U16 : kd == FRIT_BOOL ? FRIT_U8 : kd;
  ok = ok && cg_render_bitcast(ctx, &ob, mk, uk, "mc_") && cg_render_bitcast(ctx, &nb, mk, uk, "mn_");
  if (ok) {
    const char *cas = bits == 8 ? "frit_cas_u8" : bits == 16 ? "frit_cas_u16" : bits == 32 ? "frit_cas_w32" : "frit_cas_w64";
    put(o, ind, "%s mc_, mn_; %s ac_, an_;", M, T);
    put(o, ind, "do { mc_ = %s; ac_ = %s; an_ = %s; mn_ = %s; } while (!%s(&%s, %s, %s));", mem, val.s, comb.s, st.s,
        cas, mem, ob.s, nb.s);
    put(o, ind, "%s = ac_;", old);
  }
  if (val.oom || comb.oom || st.oom || ob.oom || nb.oom) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "codegen: out of memory");
    ok = false;
  }
  cg_free(&val), cg_free(&comb), cg_free(&st), cg_free(&ob), cg_free(&nb);
  return ok;
}

bool cg_render_atomic(frit_ctx *ctx, frit_dialect d, cg_str *o, const char *ind, frit_atomic_op aop, frit_scalar_kind kd,
                      bool global, const char *mem, const char *v, const char *old) {
  static const frit_op alu[FRIT_ATOMIC_COUNT_] = {
      [FRIT_ATOMIC_ADD] = FRIT_OP_ADD, [FRIT_ATOMIC_MIN] = FRIT_OP_MIN, [FRIT_ATOMIC_MAX] = FRIT_OP_MAX,
      [FRIT_ATOMIC_AND] = FRIT_OP_AND, [FRIT_ATOMIC_OR] = FRIT_OP_OR,   [FRIT_ATOMIC_XOR] = FRIT_OP_XOR,
      [FRIT_ATOMIC_XCHG] = FRIT_OP_CONST};
  if ((int)aop < 0 || aop >= FRIT_ATOMIC_COUNT_) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "codegen: bad atomic op %d", (int)aop);
    return false;
  }
  bool fl = cg_kind_float(kd);
  if (fl && (aop == FRIT_ATOMIC_AND || aop == FRIT_ATOMIC_OR || aop == FRIT_ATOMIC_XOR)) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "codegen: atomic AND/OR/XOR need an integer or bool dtype");
    return false;
  }
  if (global && d != FRIT_DIALECT_C) return device_cas(ctx, o, ind, alu[aop], kd, mem, v, old);
  const char *T = cg_ctype(kd), *R = "__ATOMIC_RELAXED";
  cg_str comb = {0}, ld = {0}, sv = {0};
  bool ok = true;
  if (!global) {
    /* a register belongs to one point: a plain read-modify-write */
    const char *ab[2] = {"ac_", v};
    if (aop == FRIT_ATOMIC_XCHG) cg_puts(&comb, v);
    else ok = cg_render_alu(ctx, &comb, alu[aop], kd, ab, 2);
    if (ok) put(o, ind, "%s ac_ = %s; %s = ac_; %s = %s;", T, mem, old, mem, comb.s);
  } else if (!fl) {
    const char *U = utype(cg_kind_bits(kd)), *fn;
    if (kd == FRIT_BOOL) /* on 0/1: ADD and MAX are OR, MIN is AND */
      fn = aop == FRIT_ATOMIC_ADD || aop == FRIT_ATOMIC_MAX || aop == FRIT_ATOMIC_OR ? "__atomic_fetch_or"
           : aop == FRIT_ATOMIC_MIN || aop == FRIT_ATOMIC_AND                       ? "__atomic_fetch_and"
           : aop == FRIT_ATOMIC_XOR                                                 ? "__atomic_fetch_xor"
                                                                                    : "__atomic_exchange_n";
    else
      fn = aop == FRIT_ATOMIC_ADD ? "__atomic_fetch_add" : aop == FRIT_ATOMIC_AND ? "__atomic_fetch_and"
           : aop == FRIT_ATOMIC_OR ? "__atomic_fetch_or" : aop == FRIT_ATOMIC_XOR ? "__atomic_fetch_xor"
           : aop == FRIT_ATOMIC_XCHG ? "__atomic_exchange_n" : NULL;
    if (fn && kd == FRIT_BOOL) {
      put(o, ind, "%s = (uint8_t)(%s((uint8_t *)&%s, (uint8_t)%s, %s) != 0);", old, fn, mem, v, R);
    } else if (fn) { /* in the unsigned type: wraparound, as the non-atomic op */
      put(o, ind, "%s = (%s)%s((%s *)&%s, (%s)%s, %s);", old, T, fn, U, mem, U, v, R);
    } else { /* integer MIN/MAX: compare-and-swap */
      const char *ab[2] = {"ac_", v};
      ok = cg_render_alu(ctx, &comb, alu[aop], kd, ab, 2);
      if (ok) {
        put(o, ind, "%s ac_ = __atomic_load_n(&%s, %s);", T, mem, R);
        put(o, ind, "while (!__atomic_compare_exchange_n(&%s, &ac_, %s, 1, %s, %s)) {}", mem, comb.s, R, R);
        put(o, ind, "%s = ac_;", old);
      }
    }
  } else if (kd == FRIT_F32 || kd == FRIT_F64) {
    /* compare-and-swap on the bit pattern (NaN and -0 compare as themselves) */
    put(o, ind, "%s ac_, an_;", T);
    put(o, ind, "__atomic_load(&%s, &ac_, %s);", mem, R);
    if (aop == FRIT_ATOMIC_XCHG) {
      put(o, ind, "an_ = %s;", v);
      put(o, ind, "__atomic_exchange(&%s, &an_, &ac_, %s);", mem, R);
    } else {
      const char *ab[2] = {"ac_", v};
      ok = cg_render_alu(ctx, &comb, alu[aop], kd, ab, 2);
      if (ok) put(o, ind, "do { an_ = %s; } while (!__atomic_compare_exchange(&%s, &ac_, &an_, 1, %s, %s));", comb.s, mem, R, R);
    }
    put(o, ind, "%s = ac_;", old);
  } else { /* f16/bf16: 16-bit patterns in memory, combined in float and rounded once */
    cg_render_load_conv(&ld, kd, "ac_");
    if (aop == FRIT_ATOMIC_XCHG) {
      cg_render_store_conv(&sv, kd, v);
      put(o, ind, "uint16_t ac_ = __atomic_exchange_n(&%s, %s, %s);", mem, sv.s, R);
    } else {
      const char *ab[2] = {ld.s, v};
      ok = cg_render_alu(ctx, &comb, alu[aop], kd, ab, 2);
      if (ok) {
        cg_render_store_conv(&sv, kd, comb.s);
        put(o, ind, "uint16_t ac_ = __atomic_load_n(&%s, %s);", mem, R);
        put(o, ind, "while (!__atomic_compare_exchange_n(&%s, &ac_, %s, 1, %s, %s)) {}", mem, sv.s, R, R);
      }
    }
    put(o, ind, "%s = %s;", old, ld.s);
  }
  if (comb.oom || ld.oom || sv.oom) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "codegen: out of memory");
    ok = false;
  }
  cg_free(&comb), cg_free(&ld), cg_free(&sv);
  return ok;
}
