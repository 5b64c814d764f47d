/* Counter-based random tensors: Philox-4x32-10 written as integer ALU ops over an IOTA counter,
 * so element i is a pure function of (seed, i) that any backend computes (and fuses) alike. */
#include "tensor/tensor_internal.h"

#include <math.h>

enum { PHILOX_ROUNDS = 10 };
#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

static frit_tensor *cu(frit_ctx *ctx, frit_dtype dt, uint64_t v, frit_tensor *like) {
  return ti_const_i(ctx, dt, (int64_t)v, like);
}
static frit_tensor *shr(frit_ctx *ctx, frit_tensor *x, int k) {
  return ti_alu2(ctx, FRIT_OP_SHR, x, cu(ctx, TI_U(x)->dtype, (uint64_t)k, x));
}

/* The four output words (u32) of Philox-4x32-10 for counter (i_lo, i_hi, 0, 0) and key seed,
 * i = 0..n-1. mulhi/mullo come from one u64 product. */
static bool philox(frit_ctx *ctx, uint64_t seed, int64_t n, frit_tensor *out[4]) {
  frit_tensor *i = ti_cast(ctx, ti_iota(ctx, ti_dim(ctx, n)), FRIT_U64);
  if (!i) return false;
  frit_tensor *c[4];
  c[0] = ti_cast(ctx, i, FRIT_U32);
  c[1] = ti_cast(ctx, shr(ctx, i, 32), FRIT_U32);
  c[2] = c[3] = cu(ctx, FRIT_U32, 0, i);
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  for (int r = 0; r < PHILOX_ROUNDS; r++) {
    frit_tensor *p0 = ti_alu2(ctx, FRIT_OP_MUL, ti_cast(ctx, c[0], FRIT_U64), cu(ctx, FRIT_U64, PHILOX_M0, i));
    frit_tensor *p1 = ti_alu2(ctx, FRIT_OP_MUL, ti_cast(ctx, c[2], FRIT_U64), cu(ctx, FRIT_U64, PHILOX_M1, i));
    frit_tensor *hi0 = ti_cast(ctx, shr(ctx, p0, 32), FRIT_U32), *lo0 = ti_cast(ctx, p0, FRIT_U32);
    frit_tensor *hi1 = ti_cast(ctx, shr(ctx, p1, 32), FRIT_U32), *lo1 = ti_cast(ctx, p1, FRIT_U32);
    frit_tensor *n0 = ti_alu2(ctx, FRIT_OP_XOR, ti_alu2(ctx, FRIT_OP_XOR, hi1, c[1]), cu(ctx, FRIT_U32, k0, i));
    frit_tensor *n2 = ti_alu2(ctx, FRIT_OP_XOR, ti_alu2(ctx, FRIT_OP_XOR, hi0, c[3]), cu(ctx, FRIT_U32, k1, i));
    c[0] = n0, c[1] = lo1, c[2] = n2, c[3] = lo0;
    k0 += PHILOX_W0, k1 += PHILOX_W1;
  }
  for (int k = 0; k < 4; k++) out[k] = c[k];
  return c[0] && c[1] && c[2] && c[3];
}

/* Mantissa bits a uniform of dtype dt gets: every value k * 2^-p (k < 2^p) is exact. */
static int precision_of(frit_dtype dt) {
  frit_scalar_kind k = frit_dtype_kind(dt);
  return k == FRIT_F16 ? 11 : k == FRIT_BF16 ? 8 : k == FRIT_F32 ? 24 : 53;
}

/* Uniform in [0, 1) of dtype ct (f32 or f64) with p random bits, from words w[first...]. */
static frit_tensor *unit(frit_ctx *ctx, frit_tensor *const *w, int p, frit_dtype ct) {
  frit_tensor *bits;
  if (p <= 32) {
    bits = shr(ctx, w[0], 32 - p);
  } else { /* numpy's 53-bit double: (a >> 5) * 2^26 + (b >> 6) */
    frit_tensor *a = ti_cast(ctx, shr(ctx, w[0], 5), FRIT_U64), *b = ti_cast(ctx, shr(ctx, w[1], 6), FRIT_U64);
    bits = ti_alu2(ctx, FRIT_OP_OR, ti_alu2(ctx, FRIT_OP_SHL, a, cu(ctx, FRIT_U64, 26, a)), b);
  }
  frit_tensor *f = ti_cast(ctx, bits, ct);
  return ti_alu2(ctx, FRIT_OP_MUL, f, ti_const_f(ctx, ct, ldexp(1.0, -p), f));
}

static bool rand_args(frit_ctx *ctx, const char *op, frit_dtype dt, int ndim, const int64_t *dims, bool want_float,
                      int64_t *n, frit_uop **d) {
  char b[32];
  if (frit_dtype_is_ptr(dt) || frit_dtype_lanes(dt) != 1 ||
      (want_float ? !frit_dtype_is_float(dt) : !frit_dtype_is_int(dt))) {
    ti_fail(ctx, op, NULL, 0, "dtype %s: needs %s dtype", ti_dtname(dt, b), want_float ? "a float" : "an integer");
    return false;
  }
  if (ndim < 0 || ndim > FRIT_MAX_DIMS) {
    ti_fail(ctx, op, NULL, 0, "rank %d outside 0..%d", ndim, FRIT_MAX_DIMS);
    return false;
  }
  *n = 1;
  for (int i = 0; i < ndim; i++) {
    if (dims[i] < 0) {
      ti_fail(ctx, op, NULL, 0, "negative dimensions are not allowed (%lld)", (long long)dims[i]);
      return false;
    }
    if (dims[i] && *n > INT64_MAX / dims[i]) {
      ti_fail(ctx, op, NULL, 0, "too many elements");
      return false;
    }
    *n *= dims[i];
  }
  return ti_dims_from_ints(ctx, ndim, dims, d);
}

frit_tensor *frit_rand_uniform(frit_ctx *ctx, uint64_t seed, frit_dtype dt, int ndim, const int64_t *dims, double lo,
                               double hi) {
  int64_t n;
  frit_uop *d[FRIT_MAX_DIMS];
  if (!rand_args(ctx, "rand_uniform", dt, ndim, dims, true, &n, d)) return NULL;
  frit_tensor *w[4];
  if (!philox(ctx, seed, n, w)) return NULL;
  frit_dtype ct = frit_dtype_kind(dt) == FRIT_F64 ? FRIT_F64 : FRIT_F32;
  frit_tensor *u = unit(ctx, w, precision_of(dt), ct);
  if (lo != 0 || hi != 1) {
    u = ti_alu2(ctx, FRIT_OP_MUL, u, ti_const_f(ctx, ct, hi - lo, u));
    u = ti_alu2(ctx, FRIT_OP_ADD, u, ti_const_f(ctx, ct, lo, u));
  }
  return ti_reshape(ctx, ti_cast(ctx, u, dt), ndim, d);
}

/* Box-Muller: sqrt(-2 log(1 - u1)) * cos(2 pi u2), with 1 - u1 in (0, 1]. */
frit_tensor *frit_rand_normal(frit_ctx *ctx, uint64_t seed, frit_dtype dt, int ndim, const int64_t *dims, double mean,
                              double stddev) {
  int64_t n;
  frit_uop *d[FRIT_MAX_DIMS];
  if (!rand_args(ctx, "rand_normal", dt, ndim, dims, true, &n, d)) return NULL;
  frit_tensor *w[4];
  if (!philox(ctx, seed, n, w)) return NULL;
  frit_dtype ct = frit_dtype_kind(dt) == FRIT_F64 ? FRIT_F64 : FRIT_F32;
  int p = ct == FRIT_F64 ? 53 : 24;
  frit_tensor *u1 = unit(ctx, w, p, ct), *u2 = unit(ctx, p > 32 ? w + 2 : w + 1, p, ct);
  if (!u1 || !u2) return NULL;
  frit_tensor *r = ti_alu1(ctx, FRIT_OP_LOG, ti_alu2(ctx, FRIT_OP_SUB, ti_const_f(ctx, ct, 1.0, u1), u1));
  r = ti_alu1(ctx, FRIT_OP_SQRT, ti_alu2(ctx, FRIT_OP_MUL, r, ti_const_f(ctx, ct, -2.0, u1)));
  frit_tensor *th = ti_alu2(ctx, FRIT_OP_MUL, u2, ti_const_f(ctx, ct, 6.283185307179586476925, u2));
  frit_tensor *z = ti_alu2(ctx, FRIT_OP_MUL, r, ti_alu1(ctx, FRIT_OP_COS, th));
  if (stddev != 1) z = ti_alu2(ctx, FRIT_OP_MUL, z, ti_const_f(ctx, ct, stddev, u1));
  if (mean != 0) z = ti_alu2(ctx, FRIT_OP_ADD, z, ti_const_f(ctx, ct, mean, u1));
  return ti_reshape(ctx, ti_cast(ctx, z, dt), ndim, d);
}

/* lo + (x mod (hi - lo)) for a 64-bit random x: the bias is below (hi - lo) / 2^64. */
frit_tensor *frit_rand_int(frit_ctx *ctx, uint64_t seed, frit_dtype dt, int ndim, const int64_t *dims, int64_t lo,
                           int64_t hi) {
  int64_t n;
  frit_uop *d[FRIT_MAX_DIMS];
  char b[32];
  if (!rand_args(ctx, "rand_int", dt, ndim, dims, false, &n, d)) return NULL;
  int64_t dmin, dmax;
  frit_dtype_limits(dt, &dmin, &dmax);
  if (lo >= hi) return ti_fail(ctx, "rand_int", NULL, 0, "low >= high (%lld >= %lld)", (long long)lo, (long long)hi);
  if (lo < dmin || hi - 1 > dmax)
    return ti_fail(ctx, "rand_int", NULL, 0, "bounds [%lld, %lld) out of range for %s", (long long)lo, (long long)hi,
                   ti_dtname(dt, b));
  frit_tensor *w[4];
  if (!philox(ctx, seed, n, w)) return NULL;
  frit_tensor *x = ti_alu2(ctx, FRIT_OP_OR,
                           ti_alu2(ctx, FRIT_OP_SHL, ti_cast(ctx, w[0], FRIT_U64), cu(ctx, FRIT_U64, 32, w[0])),
                           ti_cast(ctx, w[1], FRIT_U64));
  uint64_t range = (uint64_t)hi - (uint64_t)lo;
  x = ti_alu2(ctx, FRIT_OP_MOD, x, cu(ctx, FRIT_U64, range, x));
  x = ti_alu2(ctx, FRIT_OP_ADD, x, cu(ctx, FRIT_U64, (uint64_t)lo, x));
  return ti_reshape(ctx, ti_cast(ctx, x, dt), ndim, d);
}
