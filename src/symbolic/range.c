/* Range analysis: inclusive int64 bounds (vmin/vmax) of every integer and bool node, computed
 * once when the node is built from its sources' bounds. The simplifier's decisions rest on it. */
#include "symbolic/symbolic.h"

#include <math.h>

/* Bounds of a dtype's element kind; pointers, void and floats get the whole int64 line. */
static void limits(frit_dtype dt, int64_t *lo, int64_t *hi) {
  if (frit_dtype_is_ptr(dt) || !(frit_dtype_is_int(dt) || frit_dtype_is_bool(dt))) {
    *lo = INT64_MIN, *hi = INT64_MAX;
    return;
  }
  frit_dtype_limits(frit_dtype_scalar(dt), lo, hi);
}

bool frit_range_known(const frit_uop *u, int64_t *lo, int64_t *hi) {
  frit_dtype dt = u->dtype;
  if (frit_dtype_is_ptr(dt) || !(frit_dtype_is_int(dt) || frit_dtype_is_bool(dt))) return false;
  /* u64 values above INT64_MAX cannot be represented, so a u64 bound reaching INT64_MAX is
   * "unknown upper end", never a real bound. */
  if (frit_dtype_kind(dt) == FRIT_U64 && u->vmax == INT64_MAX) return false;
  *lo = u->vmin, *hi = u->vmax;
  return true;
}

static inline int64_t min2(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t max2(int64_t a, int64_t b) { return a > b ? a : b; }

/* A candidate interval being assembled; ok=false means "unknown": the dtype's limits. */
typedef struct iv {
  bool ok;
  int64_t lo, hi;
} iv;

static const iv IV_NONE = {false, 0, 0};
static iv ivmk(int64_t lo, int64_t hi) { return (iv){true, lo, hi}; }

static iv hull4(const int64_t v[4]) {
  int64_t lo = v[0], hi = v[0];
  for (int i = 1; i < 4; i++) lo = min2(lo, v[i]), hi = max2(hi, v[i]);
  return ivmk(lo, hi);
}

static iv iv_add(iv a, iv b) {
  if (!a.ok || !b.ok) return IV_NONE;
  int64_t lo, hi;
  if (__builtin_add_overflow(a.lo, b.lo, &lo) || __builtin_add_overflow(a.hi, b.hi, &hi)) return IV_NONE;
  return ivmk(lo, hi);
}

static iv iv_sub(iv a, iv b) {
  if (!a.ok || !b.ok) return IV_NONE;
  int64_t lo, hi;
  if (__builtin_sub_overflow(a.lo, b.hi, &lo) || __builtin_sub_overflow(a.hi, b.lo, &hi)) return IV_NONE;
  return ivmk(lo, hi);
}

static iv iv_mul(iv a, iv b) {
  if (!a.ok || !b.ok) return IV_NONE;
  int64_t v[4];
  if (__builtin_mul_overflow(a.lo, b.lo, &v[0]) || __builtin_mul_overflow(a.lo, b.hi, &v[1]) ||
      __builtin_mul_overflow(a.hi, b.lo, &v[2]) || __builtin_mul_overflow(a.hi, b.hi, &v[3]))
    return IV_NONE;
  return hull4(v);
}

/* Truncating a/b over a box where b has one sign and excludes 0: the quotient is monotone in
 * each operand separately, so the corners bound it. */
static iv idiv_part(iv a, int64_t b1, int64_t b2) {
  if (a.lo == INT64_MIN && b2 == -1) return IV_NONE; /* INT64_MIN / -1 wraps */
  int64_t v[4] = {a.lo / b1, a.lo / b2, a.hi / b1, a.hi / b2};
  return hull4(v);
}

static iv iv_union(iv a, iv b) {
  if (!a.ok || !b.ok) return IV_NONE;
  return ivmk(min2(a.lo, b.lo), max2(a.hi, b.hi));
}

static iv iv_idiv(iv a, iv b) {
  iv r = {false, 0, 0};
  bool any = false;
  if (b.lo <= 0 && b.hi >= 0) r = ivmk(0, 0), any = true; /* x/0 == 0 */
  if (b.hi >= 1) {
    iv p = idiv_part(a, max2(b.lo, 1), b.hi);
    r = any ? iv_union(r, p) : p, any = true;
  }
  if (b.lo <= -1) {
    iv p = idiv_part(a, b.lo, min2(b.hi, -1));
    r = any ? iv_union(r, p) : p, any = true;
  }
  return any ? r : IV_NONE;
}

static iv iv_mod(iv a, iv b) {
  bool zero = b.lo <= 0 && b.hi >= 0;
  iv r = zero ? a : IV_NONE; /* x%0 == x */
  if (b.lo == 0 && b.hi == 0) return r;
  /* |divisor| over the nonzero divisors: smallest and largest (in unsigned, INT64_MIN safe) */
  uint64_t mlo = b.lo == INT64_MIN ? (uint64_t)1 << 63 : (uint64_t)(b.lo < 0 ? -b.lo : b.lo);
  uint64_t mhi = b.hi == INT64_MIN ? (uint64_t)1 << 63 : (uint64_t)(b.hi < 0 ? -b.hi : b.hi);
  uint64_t amax = mlo > mhi ? mlo : mhi; /* largest |d| */
  uint64_t amin = zero ? 1 : (mlo < mhi ? mlo : mhi);
  int64_t m = amax - 1 > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)(amax - 1); /* |r| <= m */
  iv p;
  /* |a| < every |d|: the remainder is a itself */
  bool small = a.lo > INT64_MIN && (uint64_t)(a.lo < 0 ? -a.lo : a.lo) < amin &&
               (uint64_t)(a.hi < 0 ? -a.hi : a.hi) < amin;
  if (small) p = a;
  else if (a.lo >= 0) p = ivmk(0, min2(a.hi, m));
  else if (a.hi <= 0) p = ivmk(max2(a.lo, -m), 0);
  else p = ivmk(max2(a.lo, -m), min2(a.hi, m));
  return zero ? iv_union(r, p) : p;
}

/* Smallest 2^k - 1 covering v >= 0. */
static int64_t fill_ones(int64_t v) {
  uint64_t x = (uint64_t)v;
  x |= x >> 1, x |= x >> 2, x |= x >> 4, x |= x >> 8, x |= x >> 16, x |= x >> 32;
  return (int64_t)x;
}

static iv iv_shift(frit_op op, iv a, iv s, int bits) {
  if (s.lo < 0 || s.hi >= bits) return IV_NONE; /* counts wrap modulo the width */
  if (op == FRIT_OP_SHR) {
    int64_t v[4] = {a.lo >> s.lo, a.lo >> s.hi, a.hi >> s.lo, a.hi >> s.hi};
    return hull4(v);
  }
  if (s.hi >= 63) return a.lo == 0 && a.hi == 0 ? ivmk(0, 0) : IV_NONE;
  return iv_mul(a, ivmk((int64_t)1 << s.lo, (int64_t)1 << s.hi));
}

static iv iv_compare(frit_op op, iv a, iv b) {
  if (op == FRIT_OP_CMPLT) {
    if (a.hi < b.lo) return ivmk(1, 1);
    if (a.lo >= b.hi) return ivmk(0, 0);
  } else if (op == FRIT_OP_CMPLE) {
    if (a.hi <= b.lo) return ivmk(1, 1);
    if (a.lo > b.hi) return ivmk(0, 0);
  } else {
    int eq = -1;
    if (a.lo == a.hi && b.lo == b.hi && a.lo == b.lo) eq = 1;
    else if (a.hi < b.lo || b.hi < a.lo) eq = 0;
    if (eq >= 0) return op == FRIT_OP_CMPEQ ? ivmk(eq, eq) : ivmk(!eq, !eq);
  }
  return ivmk(0, 1);
}

/* A source's bounds as an interval (IV_NONE when unknown: floats, pointers, big u64). */
static iv src_iv(const frit_uop *s) {
  int64_t lo, hi;
  if (!frit_range_known(s, &lo, &hi)) return IV_NONE;
  return ivmk(lo, hi);
}

/* a * b for the MUL u: (x / y) * y lies between 0 and x whatever y is (truncating, x/0 == 0),
 * where the corners of the two ranges may overflow (a flat size cut to whole parts). */
static iv iv_mul_of(const frit_uop *u, iv a, iv b) {
  iv r = iv_mul(a, b);
  for (int k = 0; k < 2; k++) {
    const frit_uop *q = u->src[k];
    if (q->op != FRIT_OP_IDIV || q->src[1] != u->src[1 - k]) continue;
    iv x = src_iv(q->src[0]);
    if (!x.ok) continue;
    iv t = ivmk(min2(0, x.lo), max2(0, x.hi));
    return r.ok ? ivmk(max2(r.lo, t.lo), min2(r.hi, t.hi)) : t;
  }
  return r;
}

static iv analyse_alu(const frit_uop *u, frit_op op) {
  frit_dtype dt = u->dtype;
  iv a = u->nsrc > 0 ? src_iv(u->src[0]) : IV_NONE;
  iv b = u->nsrc > 1 ? src_iv(u->src[1]) : IV_NONE;
  bool isbool = frit_dtype_is_bool(dt);
  if (op == FRIT_OP_WHERE) {
    iv c = src_iv(u->src[0]), t = b, f = u->nsrc > 2 ? src_iv(u->src[2]) : IV_NONE;
    if (c.ok && c.lo == 1) return t;
    if (c.ok && c.hi == 0) return f;
    return iv_union(t, f);
  }
  if (!a.ok || (u->nsrc > 1 && !b.ok)) {
    /* comparisons still yield a bool even when the operands are unknown */
    return IV_NONE;
  }
  if (op == FRIT_OP_MULACC) {
    iv c = src_iv(u->src[2]);
    return c.ok ? iv_add(iv_mul(a, b), c) : IV_NONE;
  }
  if ((frit_op_flags(op) & FRIT_F_COMPARE)) return iv_compare(op, a, b);
  if (op == FRIT_OP_ADD) return iv_add(a, b);
  if (op == FRIT_OP_SUB) return iv_sub(a, b);
  if (op == FRIT_OP_MUL) return iv_mul_of(u, a, b);
  if (op == FRIT_OP_IDIV) return iv_idiv(a, b);
  if (op == FRIT_OP_MOD) return iv_mod(a, b);
  if (op == FRIT_OP_MAX) return ivmk(max2(a.lo, b.lo), max2(a.hi, b.hi));
  if (op == FRIT_OP_MIN) return ivmk(min2(a.lo, b.lo), min2(a.hi, b.hi));
  if (op == FRIT_OP_NEG) return a.lo == INT64_MIN ? IV_NONE : ivmk(-a.hi, -a.lo);
  if (op == FRIT_OP_ABS) {
    if (frit_dtype_is_unsigned(dt) || a.lo >= 0) return a;
    if (a.lo == INT64_MIN) return IV_NONE;
    if (a.hi <= 0) return ivmk(-a.hi, -a.lo);
    return ivmk(0, max2(-a.lo, a.hi));
  }
  if (op == FRIT_OP_NOT) {
    if (isbool) return ivmk(1 - a.hi, 1 - a.lo);
    if (!frit_dtype_is_unsigned(dt)) return ivmk(~a.hi, ~a.lo);
    if (frit_dtype_kind(dt) == FRIT_U64) return IV_NONE; /* ~x >= 2^63 for any known x */
    int64_t dlo, dhi;
    limits(dt, &dlo, &dhi);
    return ivmk(dhi - a.hi, dhi - a.lo);
  }
  if (op == FRIT_OP_AND) {
    if (isbool) return ivmk(a.lo & b.lo, a.hi & b.hi);
    if (a.lo >= 0 && b.lo >= 0) return ivmk(0, min2(a.hi, b.hi));
    if (a.lo >= 0) return ivmk(0, a.hi);
    if (b.lo >= 0) return ivmk(0, b.hi);
    return IV_NONE;
  }
  if (op == FRIT_OP_OR) {
    if (a.lo >= 0 && b.lo >= 0) return ivmk(max2(a.lo, b.lo), fill_ones(max2(a.hi, b.hi)));
    return IV_NONE;
  }
  if (op == FRIT_OP_XOR) {
    if (isbool && a.lo == a.hi && b.lo == b.hi) return ivmk(a.lo ^ b.lo, a.lo ^ b.lo);
    if (a.lo >= 0 && b.lo >= 0) return ivmk(0, fill_ones(max2(a.hi, b.hi)));
    return IV_NONE;
  }
  if (op == FRIT_OP_SHL || op == FRIT_OP_SHR) return iv_shift(op, a, b, frit_dtype_bits(dt));
  return IV_NONE;
}

/* All sources of an ALU node constant (scalar or broadcast): evaluate exactly. */
static bool const_sources(const frit_uop *u) {
  for (uint32_t i = 0; i < u->nsrc; i++)
    if (u->src[i]->op != FRIT_OP_CONST) return false;
  return u->nsrc > 0;
}

static iv analyse_const_value(frit_dtype dt, frit_scalar v) {
  if (frit_dtype_is_complex(dt)) return IV_NONE;
  if (frit_dtype_is_float(dt)) {
    if (!isfinite(v.f)) return IV_NONE;
    double lo = floor(v.f), hi = ceil(v.f);
    if (lo < -9.2e18 || hi > 9.2e18) return IV_NONE;
    return ivmk((int64_t)lo, (int64_t)hi);
  }
  if (frit_dtype_kind(dt) == FRIT_U64 && v.u >= (uint64_t)INT64_MAX) return IV_NONE;
  return ivmk(v.i, v.i);
}

void frit_range_analyse(frit_uop *u) {
  frit_op op = (frit_op)u->op;
  frit_dtype dt = u->dtype;
  int64_t dlo, dhi;
  limits(dt, &dlo, &dhi);
  bool intlike = !frit_dtype_is_ptr(dt) && (frit_dtype_is_int(dt) || frit_dtype_is_bool(dt));
  iv r = IV_NONE;
  if (op == FRIT_OP_CONST) {
    r = analyse_const_value(frit_dtype_scalar(dt), u->arg.value);
    if (frit_dtype_is_float(dt) && r.ok) {
      u->vmin = r.lo, u->vmax = r.hi;
      return;
    }
  } else if (!intlike) {
    r = IV_NONE;
  } else if ((frit_op_flags(op) & FRIT_F_ALU) && const_sources(u) && op != FRIT_OP_WHERE) {
    frit_scalar s[3];
    frit_dtype sdt = frit_dtype_scalar(u->src[0]->dtype);
    for (uint32_t i = 0; i < u->nsrc && i < 3; i++) s[i] = u->src[i]->arg.value;
    r = analyse_const_value(frit_dtype_scalar(dt), frit_eval_alu(op, sdt, s));
  } else {
    switch (op) {
    case FRIT_OP_DEFINE_VAR:
      r = ivmk(max2(u->arg.i0, dlo), min2(u->arg.i1, dhi));
      break;
    case FRIT_OP_RANGE: {
      iv e = src_iv(u->src[0]);
      if (e.ok) r = e.hi <= 0 ? ivmk(0, 0) : ivmk(0, e.hi - 1); /* empty loop: any value */
      break;
    }
    case FRIT_OP_SPECIAL: {
      iv e = src_iv(u->src[0]);
      if (e.ok) r = e.hi <= 0 ? ivmk(0, 0) : ivmk(0, e.hi - 1);
      break;
    }
    case FRIT_OP_CAST: {
      frit_uop *s = u->src[0];
      if (s->op == FRIT_OP_CONST) {
        frit_dtype sdt = frit_dtype_scalar(s->dtype);
        r = analyse_const_value(frit_dtype_scalar(dt), frit_eval_cast(s->arg.value, sdt, frit_dtype_scalar(dt)));
        break;
      }
      iv a = src_iv(s);
      if (!a.ok) break;
      if (frit_dtype_is_bool(dt)) r = a.lo > 0 || a.hi < 0 ? ivmk(1, 1) : a.lo == 0 && a.hi == 0 ? ivmk(0, 0) : ivmk(0, 1);
      else r = a; /* kept only if it fits the target (checked below) */
      break;
    }
    case FRIT_OP_GEP: r = src_iv(u->src[0]); break;
    case FRIT_OP_VECTORIZE:
      r = src_iv(u->src[0]);
      for (uint32_t i = 1; i < u->nsrc && r.ok; i++) r = iv_union(r, src_iv(u->src[i]));
      break;
    case FRIT_OP_NEG: case FRIT_OP_NOT: case FRIT_OP_ABS: case FRIT_OP_ADD: case FRIT_OP_SUB:
    case FRIT_OP_MUL: case FRIT_OP_IDIV: case FRIT_OP_MOD: case FRIT_OP_MAX: case FRIT_OP_MIN:
    case FRIT_OP_AND: case FRIT_OP_OR: case FRIT_OP_XOR: case FRIT_OP_SHL: case FRIT_OP_SHR:
    case FRIT_OP_CMPLT: case FRIT_OP_CMPLE: case FRIT_OP_CMPEQ: case FRIT_OP_CMPNE: case FRIT_OP_WHERE:
    case FRIT_OP_MULACC:
      r = analyse_alu(u, op);
      if (!r.ok && (frit_op_flags(op) & FRIT_F_COMPARE)) r = ivmk(0, 1);
      break;
    case FRIT_OP_CONST: case FRIT_OP_BITCAST: case FRIT_OP_BIND: case FRIT_OP_SINK: case FRIT_OP_GROUP:
    case FRIT_OP_AFTER: case FRIT_OP_RESHAPE: case FRIT_OP_PERMUTE: case FRIT_OP_EXPAND: case FRIT_OP_PAD:
    case FRIT_OP_SHRINK: case FRIT_OP_FLIP: case FRIT_OP_GATHER: case FRIT_OP_SCAN: case FRIT_OP_SCATTER: case FRIT_OP_SEQ: case FRIT_OP_BREAK: case FRIT_OP_CONTINUE: case FRIT_OP_LOOP: case FRIT_OP_CARRY: case FRIT_OP_IOTA: case FRIT_OP_CONTIGUOUS: case FRIT_OP_COLLECTIVE: case FRIT_OP_REDUCE_AXIS: case FRIT_OP_REDUCE: case FRIT_OP_END:
    case FRIT_OP_IF: case FRIT_OP_BARRIER: case FRIT_OP_KERNEL: case FRIT_OP_BUFFER: case FRIT_OP_DEFINE_GLOBAL:
    case FRIT_OP_DEFINE_LOCAL: case FRIT_OP_DEFINE_REG: case FRIT_OP_INDEX: case FRIT_OP_LOAD: case FRIT_OP_STORE:
    case FRIT_OP_ATOMIC: case FRIT_OP_ATOMIC_CAS: case FRIT_OP_SQRT: case FRIT_OP_RSQRT: case FRIT_OP_RECIP:
    case FRIT_OP_EXP: case FRIT_OP_EXP2: case FRIT_OP_LOG: case FRIT_OP_LOG2: case FRIT_OP_SIN: case FRIT_OP_COS:
    case FRIT_OP_TAN: case FRIT_OP_ASIN: case FRIT_OP_ACOS: case FRIT_OP_ATAN: case FRIT_OP_SINH:
    case FRIT_OP_COSH: case FRIT_OP_TANH: case FRIT_OP_ERF: case FRIT_OP_FLOOR: case FRIT_OP_CEIL:
    case FRIT_OP_TRUNC: case FRIT_OP_RINT: case FRIT_OP_FDIV: case FRIT_OP_POW: case FRIT_OP_ATAN2: case FRIT_OP_REAL: case FRIT_OP_IMAG: case FRIT_OP_CONJ: case FRIT_OP_COMPLEX:
    case FRIT_OP_COUNT_:
      break;
    }
  }
  /* Anything that does not fit the dtype wrapped somewhere: only the limits are sure. */
  if (!r.ok || r.lo < dlo || r.hi > dhi || r.lo > r.hi) r = ivmk(dlo, dhi);
  u->vmin = r.lo, u->vmax = r.hi;
}
