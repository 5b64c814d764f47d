/* Scalar C expressions for frit's ALU ops, casts and constants, spelling out the semantics of
 * docs/semantics.md (wraparound in unsigned types, guarded division, masked shift counts,
 * f16/bf16 computed in float and rounded once, saturating float->int casts). */
#include "codegen/cg_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

/* ---------- strings ---------- */

static bool cg_grow(cg_str *b, size_t extra) {
  if (b->oom) return false;
  if (b->n + extra + 1 <= b->cap) return true;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->n + extra + 1) cap *= 2;
  char *s = realloc(b->s, cap);
  if (!s) {
    b->oom = true;
    return false;
  }
  b->s = s, b->cap = cap;
  return true;
}

void cg_puts(cg_str *b, const char *s) {
  size_t len = strlen(s);
  if (!cg_grow(b, len)) return;
  memcpy(b->s + b->n, s, len + 1);
  b->n += len;
}

void cg_printf(cg_str *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char tmp[256];
  int len = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (len < 0) return;
  if ((size_t)len < sizeof tmp) {
    cg_puts(b, tmp);
    return;
  }
  if (!cg_grow(b, (size_t)len)) return;
  va_start(ap, fmt);
  vsnprintf(b->s + b->n, (size_t)len + 1, fmt, ap);
  va_end(ap);
  b->n += (size_t)len;
}

char *cg_take(cg_str *b) {
  if (b->oom) {
    cg_free(b);
    return NULL;
  }
  char *s = b->s;
  if (!s) s = calloc(1, 1);
  b->s = NULL, b->n = b->cap = 0;
  return s;
}

void cg_free(cg_str *b) {
  free(b->s);
  b->s = NULL, b->n = b->cap = 0, b->oom = false;
}

/* ---------- types ---------- */

bool cg_kind_float(frit_scalar_kind k) { return k >= FRIT_F16 && k <= FRIT_F64; }
bool cg_kind_signed(frit_scalar_kind k) { return k >= FRIT_I8 && k <= FRIT_I64; }

int cg_kind_bits(frit_scalar_kind k) {
  switch (k) {
  case FRIT_BOOL: case FRIT_I8: case FRIT_U8: return 8;
  case FRIT_I16: case FRIT_U16: case FRIT_F16: case FRIT_BF16: return 16;
  case FRIT_I32: case FRIT_U32: case FRIT_F32: return 32;
  case FRIT_I64: case FRIT_U64: case FRIT_F64: case FRIT_C64: return 64;
  case FRIT_C128: return 128;
  case FRIT_VOID: case FRIT_SCALAR_KIND_COUNT_: break;
  }
  return 0;
}

static const char *const ctypes[FRIT_SCALAR_KIND_COUNT_] = {
    [FRIT_VOID] = "void",     [FRIT_BOOL] = "uint8_t",  [FRIT_I8] = "int8_t",    [FRIT_I16] = "int16_t",
    [FRIT_I32] = "int32_t",   [FRIT_I64] = "int64_t",   [FRIT_U8] = "uint8_t",   [FRIT_U16] = "uint16_t",
    [FRIT_U32] = "uint32_t",  [FRIT_U64] = "uint64_t",  [FRIT_F16] = "float",    [FRIT_BF16] = "float",
    [FRIT_F32] = "float",     [FRIT_F64] = "double",    [FRIT_C64] = "float _Complex",
    [FRIT_C128] = "double _Complex"};

const char *cg_ctype(frit_scalar_kind k) { return (unsigned)k < FRIT_SCALAR_KIND_COUNT_ ? ctypes[k] : "void"; }
const char *cg_mtype(frit_scalar_kind k) { return k == FRIT_F16 || k == FRIT_BF16 ? "uint16_t" : cg_ctype(k); }
const char *cg_wtype(frit_scalar_kind k) { return cg_kind_bits(k) > 32 ? "uint64_t" : "uint32_t"; }

static const char *kname(frit_scalar_kind k) {
  static const char *const n[FRIT_SCALAR_KIND_COUNT_] = {
      [FRIT_VOID] = "void", [FRIT_BOOL] = "bool", [FRIT_I8] = "i8",   [FRIT_I16] = "i16", [FRIT_I32] = "i32",
      [FRIT_I64] = "i64",   [FRIT_U8] = "u8",     [FRIT_U16] = "u16", [FRIT_U32] = "u32", [FRIT_U64] = "u64",
      [FRIT_F16] = "f16",   [FRIT_BF16] = "bf16", [FRIT_F32] = "f32", [FRIT_F64] = "f64",
      [FRIT_C64] = "c64",   [FRIT_C128] = "c128"};
  return (unsigned)k < FRIT_SCALAR_KIND_COUNT_ ? n[k] : "?";
}

/* ---------- constants ---------- */

static void render_float_lit(cg_str *o, double f, bool is_double) {
  const char *t = is_double ? "double" : "float";
  if (isnan(f)) cg_printf(o, "(%s(%s)NAN)", signbit(f) ? "-" : "", t);
  else if (isinf(f)) cg_printf(o, "(%s(%s)INFINITY)", f < 0 ? "-" : "", t);
  else cg_printf(o, "((%s)%a)", t, f);
}

bool cg_render_const(frit_ctx *ctx, cg_str *o, frit_scalar_kind k, frit_scalar v) {
  if (k == FRIT_BOOL) {
    cg_puts(o, v.u ? "((uint8_t)1)" : "((uint8_t)0)");
  } else if (cg_kind_signed(k)) {
    if (v.i == INT64_MIN) cg_printf(o, "((%s)(-9223372036854775807LL - 1))", cg_ctype(k));
    else cg_printf(o, "((%s)%" PRId64 "LL)", cg_ctype(k), v.i);
  } else if (k >= FRIT_U8 && k <= FRIT_U64) {
    cg_printf(o, "((%s)%" PRIu64 "ULL)", cg_ctype(k), v.u);
  } else if (cg_kind_float(k)) {
    render_float_lit(o, v.f, k == FRIT_F64);
  } else if (k == FRIT_C64 || k == FRIT_C128) {
    cg_puts(o, k == FRIT_C64 ? "CMPLXF(" : "CMPLX(");
    render_float_lit(o, v.c.re, k == FRIT_C128);
    cg_puts(o, ", ");
    render_float_lit(o, v.c.im, k == FRIT_C128);
    cg_puts(o, ")");
  } else {
    frit_set_error(ctx, FRIT_ERR_INVALID, "codegen: CONST of dtype %s", kname(k));
    return false;
  }
  return true;
}

bool cg_render_minmax_const(cg_str *o, frit_op op, frit_scalar_kind k, const char *x, const char *c, double cv) {
  if ((k != FRIT_F32 && k != FRIT_F64) || (op != FRIT_OP_MAX && op != FRIT_OP_MIN) || cv != cv) return false;
  /* max(x, c) is c where x <= c, else x (x's NaN included); the zeros order as frit_max*: for
   * c = -0, x = +0 wins, so the compare is strict there (and for min, strict at c = +0) */
  bool strict = cv == 0 && (signbit(cv) ? op == FRIT_OP_MAX : op == FRIT_OP_MIN);
  const char *cmp = op == FRIT_OP_MAX ? (strict ? "<" : "<=") : (strict ? ">" : ">=");
  cg_printf(o, "frit_blend%s(%s %s %s, %s, %s)", k == FRIT_F64 ? "d" : "f", x, cmp, c, c, x);
  return true;
}

frit_scalar cg_reduce_identity(frit_op op, frit_scalar_kind k) {
  frit_scalar z;
  z.u = 0;
  bool fl = cg_kind_float(k);
  int bits = cg_kind_bits(k);
  uint64_t mask = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
  if (k == FRIT_C64 || k == FRIT_C128) { /* only sums and products reduce complex */
    z.c.re = op == FRIT_OP_MUL ? 1.0 : 0.0, z.c.im = 0;
    return z;
  }
  if (op == FRIT_OP_MUL) {
    if (fl) z.f = 1.0;
    else z.u = 1;
  } else if (op == FRIT_OP_MAX) {
    if (fl) z.f = -INFINITY;
    else if (cg_kind_signed(k)) z.i = bits >= 64 ? INT64_MIN : -(INT64_C(1) << (bits - 1));
    else z.u = 0;
  } else if (op == FRIT_OP_MIN) {
    if (fl) z.f = INFINITY;
    else if (cg_kind_signed(k)) z.i = bits >= 64 ? INT64_MAX : (INT64_C(1) << (bits - 1)) - 1;
    else if (k == FRIT_BOOL) z.u = 1;
    else z.u = mask;
  } else if (op == FRIT_OP_AND) {
    if (k == FRIT_BOOL) z.u = 1;
    else if (cg_kind_signed(k)) z.i = -1;
    else z.u = mask;
  }
  return z;
}

/* ---------- ALU ---------- */

static bool unsupported(frit_ctx *ctx, frit_op op, frit_scalar_kind k) {
  frit_set_error(ctx, FRIT_ERR_INVALID, "codegen: op %s on dtype %s is not supported by the C backend",
                 frit_op_name(op), kname(k));
  return false;
}

/* f16/bf16 results are computed in float and rounded once to the format */
static void rnd_open(cg_str *o, frit_scalar_kind k) {
  if (k == FRIT_F16) cg_puts(o, "frit_rh(");
  else if (k == FRIT_BF16) cg_puts(o, "frit_rb(");
  else cg_puts(o, "(");
}

static bool render_float(frit_ctx *ctx, cg_str *o, frit_op op, frit_scalar_kind k, const char *const *a) {
  const char *S = k == FRIT_F64 ? "" : "f";
  const char *one = k == FRIT_F64 ? "1.0" : "1.0f";
  const char *fn = NULL;
  switch (op) {
  case FRIT_OP_NEG: cg_printf(o, "(-%s)", a[0]); return true;
  case FRIT_OP_ABS: cg_printf(o, "fabs%s(%s)", S, a[0]); return true;
  case FRIT_OP_FLOOR: cg_printf(o, "floor%s(%s)", S, a[0]); return true;
  case FRIT_OP_CEIL: cg_printf(o, "ceil%s(%s)", S, a[0]); return true;
  case FRIT_OP_TRUNC: cg_printf(o, "trunc%s(%s)", S, a[0]); return true;
  case FRIT_OP_RINT: cg_printf(o, "nearbyint%s(%s)", S, a[0]); return true;
  case FRIT_OP_MAX: cg_printf(o, "frit_max%s(%s, %s)", k == FRIT_F64 ? "d" : "f", a[0], a[1]); return true;
  case FRIT_OP_MIN: cg_printf(o, "frit_min%s(%s, %s)", k == FRIT_F64 ? "d" : "f", a[0], a[1]); return true;
  case FRIT_OP_SQRT: fn = "sqrt"; break;
  case FRIT_OP_EXP: fn = "exp"; break;
  case FRIT_OP_EXP2: fn = "exp2"; break;
  case FRIT_OP_LOG: fn = "log"; break;
  case FRIT_OP_LOG2: fn = "log2"; break;
  case FRIT_OP_SIN: fn = "sin"; break;
  case FRIT_OP_COS: fn = "cos"; break;
  case FRIT_OP_TAN: fn = "tan"; break;
  case FRIT_OP_ASIN: fn = "asin"; break;
  case FRIT_OP_ACOS: fn = "acos"; break;
  case FRIT_OP_ATAN: fn = "atan"; break;
  case FRIT_OP_SINH: fn = "sinh"; break;
  case FRIT_OP_COSH: fn = "cosh"; break;
  case FRIT_OP_TANH: fn = "tanh"; break;
  case FRIT_OP_ERF: fn = "erf"; break;
  case FRIT_OP_RSQRT: rnd_open(o, k); cg_printf(o, "%s / sqrt%s(%s))", one, S, a[0]); return true;
  case FRIT_OP_RECIP: rnd_open(o, k); cg_printf(o, "%s / %s)", one, a[0]); return true;
  case FRIT_OP_ADD: rnd_open(o, k); cg_printf(o, "%s + %s)", a[0], a[1]); return true;
  case FRIT_OP_SUB: rnd_open(o, k); cg_printf(o, "%s - %s)", a[0], a[1]); return true;
  case FRIT_OP_MUL: rnd_open(o, k); cg_printf(o, "%s * %s)", a[0], a[1]); return true;
  case FRIT_OP_FDIV: rnd_open(o, k); cg_printf(o, "%s / %s)", a[0], a[1]); return true;
  case FRIT_OP_IDIV: rnd_open(o, k); cg_printf(o, "trunc%s(%s / %s))", S, a[0], a[1]); return true;
  case FRIT_OP_MOD: rnd_open(o, k); cg_printf(o, "fmod%s(%s, %s))", S, a[0], a[1]); return true;
  /* f32 (f16/bf16 too): the prelude's branch-free frit_powf, which vectorises, as the unary
   * functions below */
  case FRIT_OP_POW: rnd_open(o, k); cg_printf(o, "%spow%s(%s, %s))", k == FRIT_F64 ? "" : "frit_", S, a[0], a[1]); return true;
  /* f64 too: frit_atan2d, within 1 ulp */
  case FRIT_OP_ATAN2: rnd_open(o, k); cg_printf(o, "frit_atan2%s(%s, %s))", k == FRIT_F64 ? "d" : S, a[0], a[1]); return true;
  case FRIT_OP_COMPLEX: cg_printf(o, "%s(%s, %s)", k == FRIT_F64 ? "CMPLX" : "CMPLXF", a[0], a[1]); return true;
  /* -ffp-contract=off keeps the product and the sum two roundings */
  case FRIT_OP_MULACC: rnd_open(o, k); cg_printf(o, "%s * %s + %s)", a[0], a[1], a[2]); return true;
  case FRIT_OP_REAL: case FRIT_OP_IMAG: case FRIT_OP_CONJ:
  case FRIT_OP_NOT: case FRIT_OP_AND: case FRIT_OP_OR: case FRIT_OP_XOR: case FRIT_OP_SHL: case FRIT_OP_SHR:
  case FRIT_OP_CONST: case FRIT_OP_VECTORIZE: case FRIT_OP_GEP: case FRIT_OP_CAST: case FRIT_OP_BITCAST:
  case FRIT_OP_DEFINE_VAR: case FRIT_OP_BIND: case FRIT_OP_IOTA: case FRIT_OP_CONTIGUOUS: case FRIT_OP_COLLECTIVE: case FRIT_OP_SINK:
  case FRIT_OP_GROUP: case FRIT_OP_AFTER: case FRIT_OP_SPECIAL: case FRIT_OP_RESHAPE: case FRIT_OP_PERMUTE:
  case FRIT_OP_EXPAND: case FRIT_OP_PAD: case FRIT_OP_SHRINK: case FRIT_OP_FLIP: case FRIT_OP_GATHER:
  case FRIT_OP_REDUCE_AXIS: case FRIT_OP_REDUCE: case FRIT_OP_SCAN: case FRIT_OP_SCATTER: case FRIT_OP_SEQ: case FRIT_OP_BREAK: case FRIT_OP_CONTINUE: case FRIT_OP_LOOP: case FRIT_OP_CARRY: case FRIT_OP_RANGE: case FRIT_OP_END:
  case FRIT_OP_IF: case FRIT_OP_BARRIER: case FRIT_OP_KERNEL: case FRIT_OP_BUFFER: case FRIT_OP_DEFINE_GLOBAL:
  case FRIT_OP_DEFINE_LOCAL: case FRIT_OP_DEFINE_REG: case FRIT_OP_INDEX: case FRIT_OP_LOAD: case FRIT_OP_STORE:
  case FRIT_OP_ATOMIC: case FRIT_OP_ATOMIC_CAS: case FRIT_OP_COUNT_:
  case FRIT_OP_CMPLT: case FRIT_OP_CMPLE: case FRIT_OP_CMPEQ: case FRIT_OP_CMPNE: case FRIT_OP_WHERE:
    return unsupported(ctx, op, k); /* comparisons and WHERE: render_compare_select */
  }
  rnd_open(o, k);
  /* f32 (and f16/bf16, computed in f32) exp, exp2, log, log2, sin, cos, tan, tanh, erf, asin,
   * acos, atan, sinh, cosh: the prelude's branch-free versions, which vectorise (libm calls do
   * not without -ffast-math); within 1 ulp of the exact value, docs/semantics.md */
  bool own = k != FRIT_F64 && (op == FRIT_OP_EXP || op == FRIT_OP_EXP2 || op == FRIT_OP_LOG || op == FRIT_OP_LOG2 ||
                               op == FRIT_OP_SIN || op == FRIT_OP_COS || op == FRIT_OP_TAN || op == FRIT_OP_TANH ||
                               op == FRIT_OP_ERF || op == FRIT_OP_ASIN || op == FRIT_OP_ACOS || op == FRIT_OP_ATAN ||
                               op == FRIT_OP_SINH || op == FRIT_OP_COSH);
  /* f64 exp, exp2, log, log2, tanh, sinh, cosh, atan, asin and acos likewise (within 1 ulp); the
   * other f64 functions stay libm's calls */
  bool own_f64 = k == FRIT_F64 && (op == FRIT_OP_EXP || op == FRIT_OP_EXP2 || op == FRIT_OP_LOG || op == FRIT_OP_LOG2 ||
                                   op == FRIT_OP_TANH || op == FRIT_OP_SINH || op == FRIT_OP_COSH || op == FRIT_OP_ATAN ||
                                   op == FRIT_OP_ASIN || op == FRIT_OP_ACOS);
  cg_printf(o, "%s%s%s(%s))", own || own_f64 ? "frit_" : "", fn, own_f64 ? "d" : S, a[0]);
  return true;
}

/* complex64/complex128: C's _Complex arithmetic and <complex.h>, as the interpreter
 * (src/interp/scalar_complex.c) computes them */
static bool render_complex(frit_ctx *ctx, cg_str *o, frit_op op, frit_scalar_kind k, const char *const *a) {
  const char *S = k == FRIT_C128 ? "" : "f", *T = cg_ctype(k), *R = k == FRIT_C128 ? "double" : "float";
  const char *fn = NULL;
  switch (op) {
  case FRIT_OP_NEG: cg_printf(o, "(-%s)", a[0]); return true;
  case FRIT_OP_ABS: cg_printf(o, "((%s)cabs%s(%s))", T, S, a[0]); return true;
  case FRIT_OP_REAL: cg_printf(o, "creal%s(%s)", S, a[0]); return true;
  case FRIT_OP_IMAG: cg_printf(o, "cimag%s(%s)", S, a[0]); return true;
  case FRIT_OP_CONJ: cg_printf(o, "conj%s(%s)", S, a[0]); return true;
  case FRIT_OP_RSQRT: cg_printf(o, "((%s)1 / csqrt%s(%s))", T, S, a[0]); return true;
  case FRIT_OP_RECIP: cg_printf(o, "((%s)1 / %s)", T, a[0]); return true;
  case FRIT_OP_EXP2: cg_printf(o, "cexp%s(%s * (%s)0.693147180559945309417232121458176568)", S, a[0], R); return true;
  case FRIT_OP_LOG2: cg_printf(o, "(clog%s(%s) / (%s)0.693147180559945309417232121458176568)", S, a[0], R); return true;
  case FRIT_OP_ADD: cg_printf(o, "(%s + %s)", a[0], a[1]); return true;
  case FRIT_OP_SUB: cg_printf(o, "(%s - %s)", a[0], a[1]); return true;
  case FRIT_OP_MUL: cg_printf(o, "(%s * %s)", a[0], a[1]); return true;
  case FRIT_OP_FDIV: cg_printf(o, "(%s / %s)", a[0], a[1]); return true;
  case FRIT_OP_POW: cg_printf(o, "cpow%s(%s, %s)", S, a[0], a[1]); return true;
  case FRIT_OP_MULACC: cg_printf(o, "(%s * %s + %s)", a[0], a[1], a[2]); return true;
  case FRIT_OP_SQRT: fn = "csqrt"; break;
  case FRIT_OP_EXP: fn = "cexp"; break;
  case FRIT_OP_LOG: fn = "clog"; break;
  case FRIT_OP_SIN: fn = "csin"; break;
  case FRIT_OP_COS: fn = "ccos"; break;
  case FRIT_OP_TAN: fn = "ctan"; break;
  case FRIT_OP_ASIN: fn = "casin"; break;
  case FRIT_OP_ACOS: fn = "cacos"; break;
  case FRIT_OP_ATAN: fn = "catan"; break;
  case FRIT_OP_SINH: fn = "csinh"; break;
  case FRIT_OP_COSH: fn = "ccosh"; break;
  case FRIT_OP_TANH: fn = "ctanh"; break;
  case FRIT_OP_NOT: case FRIT_OP_ERF: case FRIT_OP_FLOOR: case FRIT_OP_CEIL: case FRIT_OP_TRUNC:
  case FRIT_OP_RINT: case FRIT_OP_IDIV: case FRIT_OP_MOD: case FRIT_OP_MAX: case FRIT_OP_MIN:
  case FRIT_OP_ATAN2: case FRIT_OP_COMPLEX: case FRIT_OP_AND: case FRIT_OP_OR: case FRIT_OP_XOR: case FRIT_OP_SHL: case FRIT_OP_SHR:
  case FRIT_OP_CONST: case FRIT_OP_VECTORIZE: case FRIT_OP_GEP: case FRIT_OP_CAST: case FRIT_OP_BITCAST:
  case FRIT_OP_DEFINE_VAR: case FRIT_OP_BIND: case FRIT_OP_IOTA: case FRIT_OP_CONTIGUOUS: case FRIT_OP_COLLECTIVE: case FRIT_OP_SINK:
  case FRIT_OP_GROUP: case FRIT_OP_AFTER: case FRIT_OP_SPECIAL: case FRIT_OP_RESHAPE: case FRIT_OP_PERMUTE:
  case FRIT_OP_EXPAND: case FRIT_OP_PAD: case FRIT_OP_SHRINK: case FRIT_OP_FLIP: case FRIT_OP_GATHER:
  case FRIT_OP_REDUCE_AXIS: case FRIT_OP_REDUCE: case FRIT_OP_SCAN: case FRIT_OP_SCATTER: case FRIT_OP_SEQ: case FRIT_OP_BREAK: case FRIT_OP_CONTINUE: case FRIT_OP_LOOP: case FRIT_OP_CARRY: case FRIT_OP_RANGE: case FRIT_OP_END:
  case FRIT_OP_IF: case FRIT_OP_BARRIER: case FRIT_OP_KERNEL: case FRIT_OP_BUFFER: case FRIT_OP_DEFINE_GLOBAL:
  case FRIT_OP_DEFINE_LOCAL: case FRIT_OP_DEFINE_REG: case FRIT_OP_INDEX: case FRIT_OP_LOAD: case FRIT_OP_STORE:
  case FRIT_OP_ATOMIC: case FRIT_OP_ATOMIC_CAS: case FRIT_OP_COUNT_:
  case FRIT_OP_CMPLT: case FRIT_OP_CMPLE: case FRIT_OP_CMPEQ: case FRIT_OP_CMPNE: case FRIT_OP_WHERE:
    return unsupported(ctx, op, k);
  }
  cg_printf(o, "%s%s(%s)", fn, S, a[0]);
  return true;
}

static bool render_bool(frit_ctx *ctx, cg_str *o, frit_op op, const char *const *a) {
  switch (op) {
  case FRIT_OP_NOT: cg_printf(o, "((uint8_t)!%s)", a[0]); return true;
  case FRIT_OP_NEG: case FRIT_OP_ABS: case FRIT_OP_FLOOR: case FRIT_OP_CEIL: case FRIT_OP_TRUNC:
  case FRIT_OP_RINT: case FRIT_OP_SHL: case FRIT_OP_SHR:
    cg_printf(o, "%s", a[0]);
    return true;
  case FRIT_OP_AND: case FRIT_OP_MUL: case FRIT_OP_MIN: case FRIT_OP_IDIV: case FRIT_OP_FDIV:
    cg_printf(o, "((uint8_t)(%s & %s))", a[0], a[1]);
    return true;
  case FRIT_OP_OR: case FRIT_OP_ADD: case FRIT_OP_MAX: cg_printf(o, "((uint8_t)(%s | %s))", a[0], a[1]); return true;
  case FRIT_OP_XOR: case FRIT_OP_SUB: cg_printf(o, "((uint8_t)(%s ^ %s))", a[0], a[1]); return true;
  case FRIT_OP_MOD: cg_printf(o, "((uint8_t)(%s & !%s))", a[0], a[1]); return true;
  case FRIT_OP_MULACC: cg_printf(o, "((uint8_t)((%s & %s) | %s))", a[0], a[1], a[2]); return true;
  case FRIT_OP_SQRT: case FRIT_OP_RSQRT: case FRIT_OP_RECIP: case FRIT_OP_EXP: case FRIT_OP_EXP2:
  case FRIT_OP_LOG: case FRIT_OP_LOG2: case FRIT_OP_SIN: case FRIT_OP_COS: case FRIT_OP_TAN: case FRIT_OP_ASIN:
  case FRIT_OP_ACOS: case FRIT_OP_ATAN: case FRIT_OP_SINH: case FRIT_OP_COSH: case FRIT_OP_TANH: case FRIT_OP_ERF:
  case FRIT_OP_POW: case FRIT_OP_ATAN2: case FRIT_OP_REAL: case FRIT_OP_IMAG: case FRIT_OP_CONJ: case FRIT_OP_COMPLEX:
  case FRIT_OP_CONST: case FRIT_OP_VECTORIZE: case FRIT_OP_GEP: case FRIT_OP_CAST: case FRIT_OP_BITCAST:
  case FRIT_OP_DEFINE_VAR: case FRIT_OP_BIND: case FRIT_OP_IOTA: case FRIT_OP_CONTIGUOUS: case FRIT_OP_COLLECTIVE: case FRIT_OP_SINK:
  case FRIT_OP_GROUP: case FRIT_OP_AFTER: case FRIT_OP_SPECIAL: case FRIT_OP_RESHAPE: case FRIT_OP_PERMUTE:
  case FRIT_OP_EXPAND: case FRIT_OP_PAD: case FRIT_OP_SHRINK: case FRIT_OP_FLIP: case FRIT_OP_GATHER:
  case FRIT_OP_REDUCE_AXIS: case FRIT_OP_REDUCE: case FRIT_OP_SCAN: case FRIT_OP_SCATTER: case FRIT_OP_SEQ: case FRIT_OP_BREAK: case FRIT_OP_CONTINUE: case FRIT_OP_LOOP: case FRIT_OP_CARRY: case FRIT_OP_RANGE: case FRIT_OP_END:
  case FRIT_OP_IF: case FRIT_OP_BARRIER: case FRIT_OP_KERNEL: case FRIT_OP_BUFFER: case FRIT_OP_DEFINE_GLOBAL:
  case FRIT_OP_DEFINE_LOCAL: case FRIT_OP_DEFINE_REG: case FRIT_OP_INDEX: case FRIT_OP_LOAD: case FRIT_OP_STORE:
  case FRIT_OP_ATOMIC: case FRIT_OP_ATOMIC_CAS: case FRIT_OP_COUNT_:
  case FRIT_OP_CMPLT: case FRIT_OP_CMPLE: case FRIT_OP_CMPEQ: case FRIT_OP_CMPNE: case FRIT_OP_WHERE:
    break; /* comparisons and WHERE: render_compare_select */
  }
  return unsupported(ctx, op, FRIT_BOOL);
}

static bool render_int(frit_ctx *ctx, cg_str *o, frit_op op, frit_scalar_kind k, const char *const *a) {
  const char *T = cg_ctype(k), *W = cg_wtype(k);
  bool sgn = cg_kind_signed(k);
  int bits = cg_kind_bits(k);
  switch (op) {
  case FRIT_OP_NEG: cg_printf(o, "((%s)((%s)0 - (%s)%s))", T, W, W, a[0]); return true;
  case FRIT_OP_NOT: cg_printf(o, "((%s)~(%s)%s)", T, W, a[0]); return true;
  case FRIT_OP_ABS:
    if (sgn) cg_printf(o, "((%s)(%s < 0 ? (%s)0 - (%s)%s : (%s)%s))", T, a[0], W, W, a[0], W, a[0]);
    else cg_printf(o, "%s", a[0]);
    return true;
  case FRIT_OP_FLOOR: case FRIT_OP_CEIL: case FRIT_OP_TRUNC: case FRIT_OP_RINT: cg_printf(o, "%s", a[0]); return true;
  case FRIT_OP_ADD: cg_printf(o, "((%s)((%s)%s + (%s)%s))", T, W, a[0], W, a[1]); return true;
  case FRIT_OP_SUB: cg_printf(o, "((%s)((%s)%s - (%s)%s))", T, W, a[0], W, a[1]); return true;
  case FRIT_OP_MUL: cg_printf(o, "((%s)((%s)%s * (%s)%s))", T, W, a[0], W, a[1]); return true;
  case FRIT_OP_MULACC:
    cg_printf(o, "((%s)((%s)%s * (%s)%s + (%s)%s))", T, W, a[0], W, a[1], W, a[2]);
    return true;
  case FRIT_OP_IDIV: case FRIT_OP_FDIV: cg_printf(o, "frit_idiv_%s(%s, %s)", kname(k), a[0], a[1]); return true;
  case FRIT_OP_MOD: cg_printf(o, "frit_mod_%s(%s, %s)", kname(k), a[0], a[1]); return true;
  case FRIT_OP_MAX: cg_printf(o, "(%s > %s ? %s : %s)", a[0], a[1], a[0], a[1]); return true;
  case FRIT_OP_MIN: cg_printf(o, "(%s < %s ? %s : %s)", a[0], a[1], a[0], a[1]); return true;
  case FRIT_OP_AND: cg_printf(o, "((%s)(%s & %s))", T, a[0], a[1]); return true;
  case FRIT_OP_OR: cg_printf(o, "((%s)(%s | %s))", T, a[0], a[1]); return true;
  case FRIT_OP_XOR: cg_printf(o, "((%s)(%s ^ %s))", T, a[0], a[1]); return true;
  case FRIT_OP_SHL: cg_printf(o, "((%s)((%s)%s << ((%s)%s & %du)))", T, W, a[0], W, a[1], bits - 1); return true;
  case FRIT_OP_SHR:
    /* GCC and Clang shift negative signed values arithmetically */
    if (sgn) cg_printf(o, "((%s)(%s >> ((%s)%s & %du)))", T, a[0], W, a[1], bits - 1);
    else cg_printf(o, "((%s)((%s)%s >> ((%s)%s & %du)))", T, W, a[0], W, a[1], bits - 1);
    return true;
  case FRIT_OP_SQRT: case FRIT_OP_RSQRT: case FRIT_OP_RECIP: case FRIT_OP_EXP: case FRIT_OP_EXP2:
  case FRIT_OP_LOG: case FRIT_OP_LOG2: case FRIT_OP_SIN: case FRIT_OP_COS: case FRIT_OP_TAN: case FRIT_OP_ASIN:
  case FRIT_OP_ACOS: case FRIT_OP_ATAN: case FRIT_OP_SINH: case FRIT_OP_COSH: case FRIT_OP_TANH: case FRIT_OP_ERF:
  case FRIT_OP_POW: case FRIT_OP_ATAN2: case FRIT_OP_REAL: case FRIT_OP_IMAG: case FRIT_OP_CONJ: case FRIT_OP_COMPLEX:
  case FRIT_OP_CONST: case FRIT_OP_VECTORIZE: case FRIT_OP_GEP: case FRIT_OP_CAST: case FRIT_OP_BITCAST:
  case FRIT_OP_DEFINE_VAR: case FRIT_OP_BIND: case FRIT_OP_IOTA: case FRIT_OP_CONTIGUOUS: case FRIT_OP_COLLECTIVE: case FRIT_OP_SINK:
  case FRIT_OP_GROUP: case FRIT_OP_AFTER: case FRIT_OP_SPECIAL: case FRIT_OP_RESHAPE: case FRIT_OP_PERMUTE:
  case FRIT_OP_EXPAND: case FRIT_OP_PAD: case FRIT_OP_SHRINK: case FRIT_OP_FLIP: case FRIT_OP_GATHER:
  case FRIT_OP_REDUCE_AXIS: case FRIT_OP_REDUCE: case FRIT_OP_SCAN: case FRIT_OP_SCATTER: case FRIT_OP_SEQ: case FRIT_OP_BREAK: case FRIT_OP_CONTINUE: case FRIT_OP_LOOP: case FRIT_OP_CARRY: case FRIT_OP_RANGE: case FRIT_OP_END:
  case FRIT_OP_IF: case FRIT_OP_BARRIER: case FRIT_OP_KERNEL: case FRIT_OP_BUFFER: case FRIT_OP_DEFINE_GLOBAL:
  case FRIT_OP_DEFINE_LOCAL: case FRIT_OP_DEFINE_REG: case FRIT_OP_INDEX: case FRIT_OP_LOAD: case FRIT_OP_STORE:
  case FRIT_OP_ATOMIC: case FRIT_OP_ATOMIC_CAS: case FRIT_OP_COUNT_:
  case FRIT_OP_CMPLT: case FRIT_OP_CMPLE: case FRIT_OP_CMPEQ: case FRIT_OP_CMPNE: case FRIT_OP_WHERE:
    break; /* comparisons and WHERE: render_compare_select */
  }
  return unsupported(ctx, op, k);
}

/* Comparisons and WHERE read the same in C for every dtype: results are uint8_t 0/1. */
static bool render_compare_select(cg_str *o, frit_op op, const char *const *a) {
  const char *cmp = op == FRIT_OP_CMPLT ? "<" : op == FRIT_OP_CMPLE ? "<=" : op == FRIT_OP_CMPEQ ? "==" :
                    op == FRIT_OP_CMPNE ? "!=" : NULL;
  if (cmp) cg_printf(o, "((uint8_t)(%s %s %s))", a[0], cmp, a[1]);
  else if (op == FRIT_OP_WHERE) cg_printf(o, "(%s ? %s : %s)", a[0], a[1], a[2]);
  else return false;
  return true;
}

bool cg_render_alu(frit_ctx *ctx, cg_str *o, frit_op op, frit_scalar_kind k, const char *const *a, int n) {
  (void)n;
  if (cg_kind_bits(k) != 0 && render_compare_select(o, op, a)) return true;
  if (cg_kind_float(k)) return render_float(ctx, o, op, k, a);
  if (k == FRIT_C64 || k == FRIT_C128) return render_complex(ctx, o, op, k, a);
  if (k == FRIT_BOOL) return render_bool(ctx, o, op, a);
  if (cg_kind_bits(k) == 0) return unsupported(ctx, op, k);
  return render_int(ctx, o, op, k, a);
}

/* Signed ADD/SUB/MUL whose result range (from the sources' sound bounds) fits the dtype cannot
 * overflow, so plain C arithmetic is exact there; it keeps index expressions affine for the
 * vectorizer, which the unsigned wraparound form hides. */
bool cg_no_overflow(const frit_uop *u) {
  frit_scalar_kind k = frit_dtype_kind(u->dtype);
  if (!cg_kind_signed(k) || u->nsrc != 2) return false;
  const frit_uop *a = u->src[0], *b = u->src[1];
  int64_t v[4], lo = 0, hi = 0;
  bool ovf = false;
  if (u->op == FRIT_OP_ADD) {
    ovf = __builtin_add_overflow(a->vmin, b->vmin, &lo) || __builtin_add_overflow(a->vmax, b->vmax, &hi);
  } else if (u->op == FRIT_OP_SUB) {
    ovf = __builtin_sub_overflow(a->vmin, b->vmax, &lo) || __builtin_sub_overflow(a->vmax, b->vmin, &hi);
  } else if (u->op == FRIT_OP_MUL) {
    ovf = __builtin_mul_overflow(a->vmin, b->vmin, &v[0]) || __builtin_mul_overflow(a->vmin, b->vmax, &v[1]) ||
          __builtin_mul_overflow(a->vmax, b->vmin, &v[2]) || __builtin_mul_overflow(a->vmax, b->vmax, &v[3]);
    if (!ovf) {
      lo = hi = v[0];
      for (int i = 1; i < 4; i++) lo = v[i] < lo ? v[i] : lo, hi = v[i] > hi ? v[i] : hi;
    }
  } else {
    return false;
  }
  if (ovf) return false;
  int bits = cg_kind_bits(k);
  int64_t dlo = bits >= 64 ? INT64_MIN : -(INT64_C(1) << (bits - 1)), dhi = bits >= 64 ? INT64_MAX : (INT64_C(1) << (bits - 1)) - 1;
  return lo >= dlo && hi <= dhi;
}

/* ---------- casts ---------- */

bool cg_render_cast(frit_ctx *ctx, cg_str *o, frit_scalar_kind from, frit_scalar_kind to, const char *a) {
  if (!cg_kind_bits(from) || !cg_kind_bits(to)) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "codegen: CAST %s -> %s", kname(from), kname(to));
    return false;
  }
  const char *T = cg_ctype(to);
  bool cf = from == FRIT_C64 || from == FRIT_C128, ct = to == FRIT_C64 || to == FRIT_C128;
  if (from == to) {
    cg_printf(o, "%s", a);
  } else if (to == FRIT_BOOL) {
    cg_printf(o, "((uint8_t)(%s != 0))", a); /* complex: either part nonzero */
  } else if (cf) { /* as numpy: the real part, then converted as a real float */
    frit_scalar_kind part = from == FRIT_C64 ? FRIT_F32 : FRIT_F64;
    if (ct) return cg_printf(o, "((%s)%s)", T, a), true;
    cg_str re = {0};
    cg_printf(&re, "creal%s(%s)", from == FRIT_C64 ? "f" : "", a);
    bool ok = cg_render_cast(ctx, o, part, to, re.s ? re.s : "0");
    cg_free(&re);
    return ok;
  } else if (ct) { /* the real part converted as to the part's float type, imaginary zero */
    frit_scalar_kind part = to == FRIT_C64 ? FRIT_F32 : FRIT_F64;
    cg_printf(o, "((%s)", T);
    bool ok = cg_render_cast(ctx, o, from, part, a);
    cg_puts(o, ")");
    return ok;
  }
  if (from == to || to == FRIT_BOOL || cf || ct) return true;
  if (!cg_kind_float(from)) {
    if (to == FRIT_F16 || to == FRIT_BF16) {
      bool sgn = cg_kind_signed(from) || from == FRIT_BOOL;
      cg_printf(o, "frit_%s2%s((%s)%s)", sgn ? "i" : "u", to == FRIT_F16 ? "h" : "b", sgn ? "int64_t" : "uint64_t", a);
    } else if (from == FRIT_BOOL && cg_kind_float(to)) {
      /* through int32: gcc's vectoriser takes a compare's 0/1 as a 1-bit type, whose conversion
       * to float it does not vectorise (a max pool's tie count kept its loop scalar: 10x) */
      cg_printf(o, "((%s)(int32_t)%s)", T, a);
    } else {
      cg_printf(o, "((%s)%s)", T, a); /* int->int wraps (GCC: modulo); int->f32/f64 rounds once */
    }
  } else if (cg_kind_float(to)) {
    if (to == FRIT_F16) cg_printf(o, "frit_rh((double)%s)", a);
    else if (to == FRIT_BF16) cg_printf(o, "frit_rb((double)%s)", a);
    else cg_printf(o, "((%s)%s)", T, a);
  } else if (cg_kind_signed(to)) {
    cg_printf(o, "((%s)frit_f2i((double)%s, %d))", T, a, cg_kind_bits(to));
  } else {
    cg_printf(o, "((%s)frit_f2u((double)%s, %d))", T, a, cg_kind_bits(to));
  }
  return true;
}

/* the value's bit pattern as uint64_t (zero-extended) */
static void to_bits(cg_str *o, frit_scalar_kind k, const char *a) {
  switch (k) {
  case FRIT_F16: cg_printf(o, "((uint64_t)frit_f2h((double)%s))", a); return;
  case FRIT_BF16: cg_printf(o, "((uint64_t)frit_f2b((double)%s))", a); return;
  case FRIT_F32: cg_printf(o, "((uint64_t)frit_f32_bits(%s))", a); return;
  case FRIT_F64: cg_printf(o, "frit_f64_bits(%s)", a); return;
  case FRIT_BOOL: case FRIT_I8: case FRIT_U8: cg_printf(o, "((uint64_t)(uint8_t)%s)", a); return;
  case FRIT_I16: case FRIT_U16: cg_printf(o, "((uint64_t)(uint16_t)%s)", a); return;
  case FRIT_I32: case FRIT_U32: cg_printf(o, "((uint64_t)(uint32_t)%s)", a); return;
  case FRIT_I64: case FRIT_U64: cg_printf(o, "((uint64_t)%s)", a); return;
  case FRIT_C64: case FRIT_C128: /* rejected by the IR checks */
  case FRIT_VOID: case FRIT_SCALAR_KIND_COUNT_: break;
  }
  cg_puts(o, "0");
}

bool cg_render_bitcast(frit_ctx *ctx, cg_str *o, frit_scalar_kind from, frit_scalar_kind to, const char *a) {
  if (!cg_kind_bits(from) || cg_kind_bits(from) != cg_kind_bits(to)) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "codegen: BITCAST %s -> %s (scalar widths must agree)", kname(from),
                   kname(to));
    return false;
  }
  cg_str b = {0};
  to_bits(&b, from, a);
  const char *x = b.s ? b.s : "0";
  switch (to) {
  case FRIT_F16: cg_printf(o, "frit_h2f((uint16_t)%s)", x); break;
  case FRIT_BF16: cg_printf(o, "frit_b2f((uint16_t)%s)", x); break;
  case FRIT_F32: cg_printf(o, "frit_f32_from((uint32_t)%s)", x); break;
  case FRIT_F64: cg_printf(o, "frit_f64_from(%s)", x); break;
  case FRIT_BOOL: cg_printf(o, "((uint8_t)((%s & 0xffu) != 0))", x); break;
  case FRIT_I8: case FRIT_I16: case FRIT_I32: case FRIT_I64: case FRIT_U8: case FRIT_U16: case FRIT_U32:
  case FRIT_U64:
    cg_printf(o, "((%s)%s)", cg_ctype(to), x);
    break;
  case FRIT_C64: case FRIT_C128:
  case FRIT_VOID: case FRIT_SCALAR_KIND_COUNT_: break;
  }
  cg_free(&b);
  return true;
}

void cg_render_load_conv(cg_str *o, frit_scalar_kind k, const char *mem) {
  if (k == FRIT_F16) cg_printf(o, "frit_h2f(%s)", mem);
  else if (k == FRIT_BF16) cg_printf(o, "frit_b2f(%s)", mem);
  else if (k == FRIT_BOOL) cg_printf(o, "((uint8_t)(%s != 0))", mem);
  else cg_printf(o, "%s", mem);
}

void cg_render_store_conv(cg_str *o, frit_scalar_kind k, const char *val) {
  if (k == FRIT_F16) cg_printf(o, "frit_f2h((double)%s)", val);
  else if (k == FRIT_BF16) cg_printf(o, "frit_f2b((double)%s)", val);
  else cg_printf(o, "%s", val);
}

/* ---------- kernel signatures per dialect ---------- */

void cg_kernel_open(cg_str *fn, frit_dialect d, const char *fn_name, int nvars, int nparams, int group) {
  switch (d) {
  case FRIT_DIALECT_C:
    cg_printf(fn, "void %s(void *const *bufs, const int64_t *vars, int64_t g0_begin, int64_t g0_end) {\n", fn_name);
    cg_puts(fn, "  (void)bufs; (void)vars; (void)g0_begin; (void)g0_end;\n");
    return;
  case FRIT_DIALECT_OPENCL: case FRIT_DIALECT_CUDA: {
    bool cl = d == FRIT_DIALECT_OPENCL;
    cg_printf(fn, "%s void %s(%s *frit_arena, %s g0_end", cl ? "__kernel" : "extern \"C\" __global__", fn_name,
              cl ? "__global uchar" : "unsigned char", cl ? "long" : "long long");
    /* frit_ prefixed: the renderer's own names are v<id>, r<id>, g<k> */
    for (int i = 0; i < nvars; i++) cg_printf(fn, ", %s frit_v%d", cl ? "long" : "long long", i);
    for (int i = 0; i < nparams; i++) cg_printf(fn, ", %s frit_o%d", cl ? "long" : "long long", i);
    cg_puts(fn, ") {\n");
    if (group) {
      /* a work-group per g0 point: its threads split the point's loops and combine its
       * reductions through frit_red (group-local memory, one 8-byte slot a thread) */
      cg_printf(fn, "  %s frit_red[%d];\n", cl ? "__local ulong" : "__shared__ unsigned long long", group);
      cg_printf(fn, "  const int64_t g0_begin = %s, g0_step = %s;\n",
                cl ? "(int64_t)get_group_id(0)" : "(int64_t)blockIdx.x", cl ? "(int64_t)get_num_groups(0)" : "(int64_t)gridDim.x");
      cg_printf(fn, "  const int64_t frit_lid = %s, frit_lsz = %d;\n", cl ? "(int64_t)get_local_id(0)" : "(int64_t)threadIdx.x",
                group);
      cg_puts(fn, "  (void)frit_lid; (void)frit_lsz;\n");
    } else {
      cg_printf(fn, "  const int64_t g0_begin = %s, g0_step = %s;\n",
                cl ? "(int64_t)get_global_id(0)" : "(int64_t)blockIdx.x * blockDim.x + threadIdx.x",
                cl ? "(int64_t)get_global_size(0)" : "(int64_t)gridDim.x * blockDim.x");
    }
    cg_puts(fn, "  (void)frit_arena; (void)g0_begin; (void)g0_end; (void)g0_step;\n");
    return;
  }
  }
}

void cg_param_decl(cg_str *fn, frit_dialect d, const char *mtype, bool restrict_, const char *name, int64_t index) {
  const char *R = restrict_ ? "restrict " : "";
  switch (d) {
  case FRIT_DIALECT_C:
    cg_printf(fn, "  %s *%s%s = (%s *)bufs[%" PRId64 "];\n", mtype, R, name, mtype, index);
    return;
  case FRIT_DIALECT_OPENCL: case FRIT_DIALECT_CUDA: {
    const char *G = d == FRIT_DIALECT_OPENCL ? "__global " : "";
    cg_printf(fn, "  %s%s *%s%s = (%s%s *)(frit_arena + frit_o%" PRId64 ");\n", G, mtype, R, name, G, mtype, index);
    return;
  }
  }
}

void cg_var_decl(cg_str *fn, frit_dialect d, int i, const char *blob) {
  if (d == FRIT_DIALECT_C) cg_printf(fn, "  const int64_t var%d = vars[%d]; /* %s */\n", i, i, blob ? blob : "");
  else cg_printf(fn, "  const int64_t var%d = (int64_t)frit_v%d; /* %s */\n", i, i, blob ? blob : "");
}

const char *cg_g0_next(frit_dialect d) { return d == FRIT_DIALECT_C ? "++" : " += g0_step"; }

const char *cg_group_barrier(frit_dialect d) {
  return d == FRIT_DIALECT_OPENCL ? "barrier(CLK_LOCAL_MEM_FENCE);" : d == FRIT_DIALECT_CUDA ? "__syncthreads();" : "";
}

int cg_param_count(frit_uop *const *nodes, size_t n) {
  int64_t m = 0;
  for (size_t k = 0; k < n; k++)
    if (nodes[k]->op == FRIT_OP_DEFINE_GLOBAL && nodes[k]->arg.i0 + 1 > m) m = nodes[k]->arg.i0 + 1;
  return (int)m;
}
