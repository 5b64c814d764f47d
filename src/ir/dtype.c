/* Dtypes: the packed dtype encoding, its queries, names and parsing. */
#include "ir/uop.h"

#include <stdio.h>

#define KIND_MASK 0xffu
#define LANES_SHIFT 8
#define PTR_BIT (1u << 16)
#define SPACE_SHIFT 17

static const struct {
  const char *name;
  int bits;
} kind_info[FRIT_SCALAR_KIND_COUNT_] = {
    [FRIT_VOID] = {"void", 0}, [FRIT_BOOL] = {"bool", 8}, [FRIT_I8] = {"i8", 8},
    [FRIT_I16] = {"i16", 16},  [FRIT_I32] = {"i32", 32},  [FRIT_I64] = {"i64", 64},
    [FRIT_U8] = {"u8", 8},     [FRIT_U16] = {"u16", 16},  [FRIT_U32] = {"u32", 32},
    [FRIT_U64] = {"u64", 64},  [FRIT_F16] = {"f16", 16},  [FRIT_BF16] = {"bf16", 16},
    [FRIT_F32] = {"f32", 32},  [FRIT_F64] = {"f64", 64},  [FRIT_C64] = {"c64", 64},
    [FRIT_C128] = {"c128", 128},
};

static const char *space_names[] = {"global", "local", "reg"};

frit_dtype frit_dtype_vec(frit_dtype scalar, int lanes) {
  FRIT_ASSERT(lanes >= 1 && lanes <= FRIT_MAX_LANES);
  FRIT_ASSERT(!frit_dtype_is_ptr(scalar) && frit_dtype_lanes(scalar) == 1);
  return (scalar & KIND_MASK) | ((frit_dtype)(lanes - 1) << LANES_SHIFT);
}

frit_dtype frit_dtype_ptr(frit_dtype elem, frit_addrspace space) {
  FRIT_ASSERT(!frit_dtype_is_ptr(elem));
  return elem | PTR_BIT | ((frit_dtype)space << SPACE_SHIFT);
}

frit_scalar_kind frit_dtype_kind(frit_dtype dt) { return (frit_scalar_kind)(dt & KIND_MASK); }
frit_dtype frit_dtype_scalar(frit_dtype dt) {
  if (dt & PTR_BIT) return dt & ((1u << 16) - 1);
  return dt & KIND_MASK;
}
int frit_dtype_lanes(frit_dtype dt) { return (int)((dt >> LANES_SHIFT) & 0xffu) + 1; }
int frit_dtype_is_ptr(frit_dtype dt) { return (dt & PTR_BIT) != 0; }
frit_addrspace frit_dtype_addrspace(frit_dtype dt) { return (frit_addrspace)((dt >> SPACE_SHIFT) & 3u); }

int frit_dtype_is_int(frit_dtype dt) {
  frit_scalar_kind k = frit_dtype_kind(dt);
  return !frit_dtype_is_ptr(dt) && k >= FRIT_I8 && k <= FRIT_U64;
}
int frit_dtype_is_unsigned(frit_dtype dt) {
  frit_scalar_kind k = frit_dtype_kind(dt);
  return !frit_dtype_is_ptr(dt) && k >= FRIT_U8 && k <= FRIT_U64;
}
int frit_dtype_is_float(frit_dtype dt) {
  frit_scalar_kind k = frit_dtype_kind(dt);
  return !frit_dtype_is_ptr(dt) && k >= FRIT_F16 && k <= FRIT_F64;
}
int frit_dtype_is_complex(frit_dtype dt) {
  frit_scalar_kind k = frit_dtype_kind(dt);
  return !frit_dtype_is_ptr(dt) && (k == FRIT_C64 || k == FRIT_C128);
}
frit_dtype frit_dtype_real_part(frit_dtype dt) {
  frit_scalar_kind k = frit_dtype_kind(dt);
  if (frit_dtype_is_ptr(dt) || (k != FRIT_C64 && k != FRIT_C128)) return dt;
  frit_dtype r = k == FRIT_C64 ? FRIT_F32 : FRIT_F64;
  return frit_dtype_lanes(dt) > 1 ? frit_dtype_vec(r, frit_dtype_lanes(dt)) : r;
}
int frit_dtype_is_bool(frit_dtype dt) { return !frit_dtype_is_ptr(dt) && frit_dtype_kind(dt) == FRIT_BOOL; }
int frit_dtype_bits(frit_dtype dt) {
  frit_scalar_kind k = frit_dtype_kind(dt);
  return k < FRIT_SCALAR_KIND_COUNT_ ? kind_info[k].bits : 0;
}

void frit_dtype_limits(frit_dtype dt, int64_t *lo, int64_t *hi) {
  if (frit_dtype_is_ptr(dt)) {
    *lo = INT64_MIN, *hi = INT64_MAX;
    return;
  }
  switch (frit_dtype_kind(dt)) {
  case FRIT_BOOL: *lo = 0, *hi = 1; return;
  case FRIT_I8: *lo = INT8_MIN, *hi = INT8_MAX; return;
  case FRIT_I16: *lo = INT16_MIN, *hi = INT16_MAX; return;
  case FRIT_I32: *lo = INT32_MIN, *hi = INT32_MAX; return;
  case FRIT_U8: *lo = 0, *hi = UINT8_MAX; return;
  case FRIT_U16: *lo = 0, *hi = UINT16_MAX; return;
  case FRIT_U32: *lo = 0, *hi = UINT32_MAX; return;
  case FRIT_U64: *lo = 0, *hi = INT64_MAX; return;
  case FRIT_VOID: case FRIT_I64: case FRIT_F16: case FRIT_BF16: case FRIT_F32: case FRIT_F64:
  case FRIT_C64: case FRIT_C128: case FRIT_SCALAR_KIND_COUNT_:
    *lo = INT64_MIN, *hi = INT64_MAX;
    return;
  }
}

const char *frit_dtype_name(frit_dtype dt, char *buf, size_t bufsize) {
  frit_scalar_kind k = frit_dtype_kind(dt);
  const char *base = k < FRIT_SCALAR_KIND_COUNT_ ? kind_info[k].name : "?";
  int lanes = frit_dtype_lanes(dt);
  char lane_part[16] = "";
  if (lanes > 1) snprintf(lane_part, sizeof lane_part, "x%d", lanes);
  if (frit_dtype_is_ptr(dt)) {
    frit_addrspace sp = frit_dtype_addrspace(dt);
    snprintf(buf, bufsize, "%s%s*%s", base, lane_part, sp == FRIT_ADDR_GLOBAL ? "" : space_names[sp]);
  } else {
    snprintf(buf, bufsize, "%s%s", base, lane_part);
  }
  return buf;
}

frit_status frit_dtype_parse(const char *s, size_t len, frit_dtype *out) {
  size_t base_len = 0;
  while (base_len < len && s[base_len] != 'x' && s[base_len] != '*') base_len++;
  int kind = -1;
  for (int k = 0; k < FRIT_SCALAR_KIND_COUNT_; k++)
    if (strlen(kind_info[k].name) == base_len && memcmp(kind_info[k].name, s, base_len) == 0) kind = k;
  if (kind < 0) return FRIT_ERR_PARSE;
  size_t pos = base_len;
  int lanes = 1;
  if (pos < len && s[pos] == 'x') {
    pos++;
    if (pos >= len || s[pos] < '0' || s[pos] > '9') return FRIT_ERR_PARSE;
    lanes = 0;
    while (pos < len && s[pos] >= '0' && s[pos] <= '9') {
      lanes = lanes * 10 + (s[pos++] - '0');
      if (lanes > FRIT_MAX_LANES) return FRIT_ERR_PARSE;
    }
    if (lanes < 1 || kind == FRIT_VOID) return FRIT_ERR_PARSE;
  }
  frit_dtype dt = lanes > 1 ? frit_dtype_vec((frit_dtype)kind, lanes) : (frit_dtype)kind;
  if (pos < len && s[pos] == '*') {
    pos++;
    frit_addrspace sp = FRIT_ADDR_GLOBAL;
    size_t rest = len - pos;
    if (rest == 0) sp = FRIT_ADDR_GLOBAL;
    else if (rest == 5 && memcmp(s + pos, "local", 5) == 0) sp = FRIT_ADDR_LOCAL;
    else if (rest == 3 && memcmp(s + pos, "reg", 3) == 0) sp = FRIT_ADDR_REG;
    else return FRIT_ERR_PARSE;
    pos = len;
    dt = frit_dtype_ptr(dt, sp);
  }
  if (pos != len) return FRIT_ERR_PARSE;
  *out = dt;
  return FRIT_OK;
}

int frit_host_tile_lanes(frit_dtype dt) {
  int bytes = frit_dtype_bits(dt) / 8, vbytes = 32;
#if defined(__x86_64__) && defined(__GNUC__)
  /* the kernels are compiled with -march=native for this machine (prelude: 512-bit preferred) */
  vbytes = __builtin_cpu_supports("avx512f") ? 64 : __builtin_cpu_supports("avx2") ? 32 : 16;
#endif
  int lanes = vbytes / (bytes < 4 ? 4 : bytes);
  return lanes < 8 ? 8 : lanes;
}

int frit_host_tile_accumulators(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx512f")) return 16;
#endif
  return 12;
}
