/* Scalar semantics of the ALU ops on complex64 / complex128: C's float/double _Complex arithmetic
 * and <complex.h> functions, which generated code uses too (docs/complex.md). */
#include "interp/scalar.h"

#include <complex.h>
#include <math.h>

/* exp2 and log2 have no <complex.h> function: defined through exp/log as numpy's are. */
#define LN2 0.693147180559945309417232121458176568

#define DEFINE_COMPLEX_OPS(fname, T, R, S)                                                  \
  static T fname(frit_op op, T a, T b, T c) {                                               \
    switch (op) {                                                                           \
    case FRIT_OP_NEG: return -a;                                                            \
    case FRIT_OP_ABS: return (T)cabs##S(a);                                                 \
    case FRIT_OP_SQRT: return csqrt##S(a);                                                  \
    case FRIT_OP_RSQRT: { T s = csqrt##S(a); return (T)1 / s; }                             \
    case FRIT_OP_RECIP: return (T)1 / a;                                                    \
    case FRIT_OP_EXP: return cexp##S(a);                                                    \
    case FRIT_OP_EXP2: { T t = a * (R)LN2; return cexp##S(t); }                             \
    case FRIT_OP_LOG: return clog##S(a);                                                    \
    case FRIT_OP_LOG2: { T l = clog##S(a); return l / (R)LN2; }                             \
    case FRIT_OP_SIN: return csin##S(a);                                                    \
    case FRIT_OP_COS: return ccos##S(a);                                                    \
    case FRIT_OP_TAN: return ctan##S(a);                                                    \
    case FRIT_OP_ASIN: return casin##S(a);                                                  \
    case FRIT_OP_ACOS: return cacos##S(a);                                                  \
    case FRIT_OP_ATAN: return catan##S(a);                                                  \
    case FRIT_OP_SINH: return csinh##S(a);                                                  \
    case FRIT_OP_COSH: return ccosh##S(a);                                                  \
    case FRIT_OP_TANH: return ctanh##S(a);                                                  \
    case FRIT_OP_ADD: return a + b;                                                         \
    case FRIT_OP_SUB: return a - b;                                                         \
    case FRIT_OP_MUL: return a * b;                                                         \
    case FRIT_OP_FDIV: return a / b;                                                        \
    case FRIT_OP_POW: return cpow##S(a, b);                                                 \
    case FRIT_OP_MULACC: { T p = a * b; return p + c; }                                     \
    case FRIT_OP_NOT: case FRIT_OP_ERF: case FRIT_OP_FLOOR: case FRIT_OP_CEIL:              \
    case FRIT_OP_TRUNC: case FRIT_OP_RINT: case FRIT_OP_IDIV: case FRIT_OP_MOD:             \
    case FRIT_OP_MAX: case FRIT_OP_MIN: case FRIT_OP_ATAN2: case FRIT_OP_AND:               \
    case FRIT_OP_OR: case FRIT_OP_XOR: case FRIT_OP_SHL: case FRIT_OP_SHR:                  \
    case FRIT_OP_CMPLT: case FRIT_OP_CMPLE: case FRIT_OP_CMPEQ: case FRIT_OP_CMPNE:         \
    case FRIT_OP_WHERE: case FRIT_OP_CONST: case FRIT_OP_VECTORIZE: case FRIT_OP_GEP:       \
    case FRIT_OP_CAST: case FRIT_OP_BITCAST: case FRIT_OP_DEFINE_VAR: case FRIT_OP_BIND:    \
    case FRIT_OP_SINK: case FRIT_OP_GROUP: case FRIT_OP_AFTER: case FRIT_OP_SPECIAL:        \
    case FRIT_OP_RESHAPE: case FRIT_OP_PERMUTE: case FRIT_OP_EXPAND: case FRIT_OP_PAD:      \
    case FRIT_OP_SHRINK: case FRIT_OP_FLIP: case FRIT_OP_GATHER: case FRIT_OP_SCAN:         \
    case FRIT_OP_SCATTER: case FRIT_OP_SEQ: case FRIT_OP_BREAK: case FRIT_OP_CONTINUE:      \
    case FRIT_OP_LOOP: case FRIT_OP_CARRY: case FRIT_OP_IOTA: case FRIT_OP_CONTIGUOUS: case FRIT_OP_COLLECTIVE:      \
    case FRIT_OP_REDUCE_AXIS: case FRIT_OP_REDUCE: case FRIT_OP_RANGE: case FRIT_OP_END:    \
    case FRIT_OP_IF: case FRIT_OP_BARRIER: case FRIT_OP_KERNEL: case FRIT_OP_BUFFER:        \
    case FRIT_OP_DEFINE_GLOBAL: case FRIT_OP_DEFINE_LOCAL: case FRIT_OP_DEFINE_REG:         \
    case FRIT_OP_INDEX: case FRIT_OP_LOAD: case FRIT_OP_STORE: case FRIT_OP_ATOMIC:         \
    case FRIT_OP_ATOMIC_CAS: case FRIT_OP_COUNT_: case FRIT_OP_REAL: case FRIT_OP_IMAG:     \
    case FRIT_OP_CONJ: case FRIT_OP_COMPLEX:                                                \
      break;                                                                                \
    }                                                                                       \
    frit_assert_fail("complex op not handled", __FILE__, __LINE__);                         \
  }

DEFINE_COMPLEX_OPS(c128_op, double _Complex, double, )
DEFINE_COMPLEX_OPS(c64_op, float _Complex, float, f)

frit_scalar frit_eval_complex(frit_op op, frit_scalar_kind k, const frit_scalar *src) {
  FRIT_ASSERT(k == FRIT_C64 || k == FRIT_C128);
  frit_scalar r;
  if (op == FRIT_OP_REAL || op == FRIT_OP_IMAG) { /* a real result */
    r.f = op == FRIT_OP_REAL ? src[0].c.re : src[0].c.im;
    return r;
  }
  if (op == FRIT_OP_CONJ) {
    r.c.re = src[0].c.re, r.c.im = -src[0].c.im;
    return r;
  }
  if (op == FRIT_OP_CMPEQ || op == FRIT_OP_CMPNE) {
    bool eq = src[0].c.re == src[1].c.re && src[0].c.im == src[1].c.im;
    r.i = op == FRIT_OP_CMPEQ ? eq : !eq;
    return r;
  }
  unsigned flags = frit_op_flags(op);
  int n = (flags & FRIT_F_TERNARY) ? 3 : (flags & FRIT_F_BINARY) ? 2 : 1;
  if (k == FRIT_C128) {
    double _Complex v[3] = {0, 0, 0};
    for (int i = 0; i < n; i++) v[i] = CMPLX(src[i].c.re, src[i].c.im);
    double _Complex z = c128_op(op, v[0], v[1], v[2]);
    r.c.re = creal(z), r.c.im = cimag(z);
  } else {
    float _Complex v[3] = {0, 0, 0};
    for (int i = 0; i < n; i++) v[i] = CMPLXF((float)src[i].c.re, (float)src[i].c.im);
    float _Complex z = c64_op(op, v[0], v[1], v[2]);
    r.c.re = crealf(z), r.c.im = cimagf(z);
  }
  return r;
}
