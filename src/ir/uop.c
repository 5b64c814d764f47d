/* The node store: context, arena, op table queries, hash-consed node construction and the
 * per-node checks (source counts, dtype rules) that both construction and the verifier use. */
#include "ir/uop.h"

#include <stdio.h>

/* ---------- asserts and errors ---------- */

_Noreturn void frit_assert_fail(const char *expr, const char *file, int line) {
  fprintf(stderr, "frit: internal error: assertion `%s' failed at %s:%d\n", expr, file, line);
  abort();
}

frit_status frit_set_error(frit_ctx *ctx, frit_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ctx->errmsg, sizeof ctx->errmsg, fmt, ap);
  va_end(ap);
  ctx->status = st;
  return st;
}

const char *frit_error(const frit_ctx *ctx) { return ctx->errmsg; }
frit_status frit_last_status(const frit_ctx *ctx) { return ctx->status; }
void frit_clear_error(frit_ctx *ctx) {
  ctx->status = FRIT_OK;
  ctx->errmsg[0] = 0;
}

/* ---------- arena ---------- */

struct frit_arena_chunk {
  frit_arena_chunk *next;
  size_t cap;
  _Alignas(16) unsigned char data[];
};

void *frit_arena_alloc(frit_arena *a, size_t size) {
  size = (size + 15) & ~(size_t)15;
  if (!a->head || a->used + size > a->cap) {
    size_t cap = size > (1u << 20) ? size : (1u << 20);
    frit_arena_chunk *c = malloc(sizeof *c + cap);
    if (!c) return NULL;
    c->next = a->head;
    c->cap = cap;
    a->head = c;
    a->used = 0;
    a->cap = cap;
  }
  void *p = a->head->data + a->used;
  a->used += size;
  return p;
}

void frit_arena_free_all(frit_arena *a) {
  for (frit_arena_chunk *c = a->head, *next; c; c = next) {
    next = c->next;
    free(c);
  }
  a->head = NULL;
  a->used = a->cap = 0;
}

/* ---------- context ---------- */

typedef struct frit_blob {
  uint64_t hash;
  uint32_t kind, n;
  size_t bytes;
  _Alignas(8) unsigned char data[];
} frit_blob;

frit_ctx *frit_ctx_new(void) {
  frit_ctx *ctx = calloc(1, sizeof *ctx);
  if (!ctx) return NULL;
  ctx->table_cap = 1024;
  ctx->table = calloc(ctx->table_cap, sizeof *ctx->table);
  ctx->nodes_cap = 1024;
  ctx->nodes = malloc(ctx->nodes_cap * sizeof *ctx->nodes);
  ctx->blobs_cap = 64;
  ctx->blobs = calloc(ctx->blobs_cap, sizeof *ctx->blobs);
  if (!ctx->table || !ctx->nodes || !ctx->blobs) {
    frit_ctx_free(ctx);
    return NULL;
  }
  return ctx;
}

void frit_ctx_free(frit_ctx *ctx) {
  if (!ctx) return;
  for (size_t i = ctx->owned_count; i-- > 0;) ctx->owned[i].destroy(ctx->owned[i].ptr);
  free(ctx->owned);
  free(ctx->table);
  free(ctx->nodes);
  free(ctx->blobs);
  free(ctx->strbuf);
  frit_arena_free_all(&ctx->arena);
  free(ctx);
}

bool frit_ctx_own(frit_ctx *ctx, void *ptr, void (*destroy)(void *)) {
  if (ctx->owned_count == ctx->owned_cap) {
    size_t cap = ctx->owned_cap ? ctx->owned_cap * 2 : 16;
    frit_owned *o = realloc(ctx->owned, cap * sizeof *o);
    if (!o) {
      destroy(ptr);
      frit_set_error(ctx, FRIT_ERR_NOMEM, "out of memory");
      return false;
    }
    ctx->owned = o;
    ctx->owned_cap = cap;
  }
  ctx->owned[ctx->owned_count++] = (frit_owned){ptr, destroy};
  return true;
}

const char *frit_ctx_keep_string(frit_ctx *ctx, char *malloced) {
  free(ctx->strbuf);
  ctx->strbuf = malloced;
  return malloced;
}

size_t frit_node_count(const frit_ctx *ctx) { return ctx->count; }

/* ---------- op table ---------- */

static const struct {
  const char *name;
  int min_src, max_src;
  unsigned flags;
} op_info[FRIT_OP_COUNT_] = {
#define X(name, min_src, max_src, flags) [FRIT_OP_##name] = {#name, min_src, max_src, flags},
#include "frit_ops.h"
#undef X
};

const char *frit_op_name(frit_op op) { return (unsigned)op < FRIT_OP_COUNT_ ? op_info[op].name : "?"; }
unsigned frit_op_flags(frit_op op) { return op_info[op].flags; }
int frit_op_min_src(frit_op op) { return op_info[op].min_src; }
int frit_op_max_src(frit_op op) { return op_info[op].max_src; }

int frit_op_from_name(const char *name, size_t len) {
  for (int op = 0; op < FRIT_OP_COUNT_; op++) {
    const char *n = op_info[op].name;
    size_t i = 0;
    for (; i < len && n[i]; i++) {
      char c = name[i];
      if (c >= 'a' && c <= 'z') c = (char)(c - 'a' + 'A');
      if (c != n[i]) break;
    }
    if (i == len && n[i] == 0) return op;
  }
  return -1;
}

const char *frit_axis_name(frit_axis a) {
  static const char *names[FRIT_AXIS_COUNT_] = {"global", "local", "loop", "reduce", "upcast", "unroll"};
  return (unsigned)a < FRIT_AXIS_COUNT_ ? names[a] : "?";
}

/* ---------- hashing ---------- */

static inline uint64_t mix64(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 29;
  return h;
}

static uint64_t hash_bytes(const void *p, size_t n) {
  const unsigned char *b = p;
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
  return mix64(h, n);
}

/* Interns a blob so that arg.blob pointers compare equal exactly when contents do. */
static const void *intern_blob(frit_ctx *ctx, uint32_t kind, const void *data, uint32_t n) {
  size_t bytes = kind == FRIT_BLOB_INTS ? (size_t)n * sizeof(int64_t) : (size_t)n + 1;
  uint64_t h = mix64(hash_bytes(data, kind == FRIT_BLOB_INTS ? bytes : n), kind);
  if (ctx->blobs_count * 2 >= ctx->blobs_cap) {
    size_t cap = ctx->blobs_cap * 2;
    frit_blob **t = calloc(cap, sizeof *t);
    if (!t) return NULL;
    for (size_t i = 0; i < ctx->blobs_cap; i++) {
      frit_blob *b = ctx->blobs[i];
      if (!b) continue;
      size_t j = b->hash & (cap - 1);
      while (t[j]) j = (j + 1) & (cap - 1);
      t[j] = b;
    }
    free(ctx->blobs);
    ctx->blobs = t;
    ctx->blobs_cap = cap;
  }
  size_t j = h & (ctx->blobs_cap - 1);
  for (frit_blob *b; (b = ctx->blobs[j]); j = (j + 1) & (ctx->blobs_cap - 1)) {
    if (b->hash == h && b->kind == kind && b->n == n &&
        memcmp(b->data, data, kind == FRIT_BLOB_INTS ? bytes : n) == 0)
      return b->data;
  }
  frit_blob *b = frit_arena_alloc(&ctx->arena, sizeof *b + bytes);
  if (!b) return NULL;
  b->hash = h, b->kind = kind, b->n = n, b->bytes = bytes;
  memcpy(b->data, data, kind == FRIT_BLOB_INTS ? bytes : n);
  if (kind == FRIT_BLOB_STR) b->data[n] = 0;
  ctx->blobs[j] = b;
  ctx->blobs_count++;
  return b->data;
}

static uint64_t node_hash(frit_op op, frit_dtype dt, frit_uop *const *src, int nsrc, const frit_arg *a) {
  uint64_t h = mix64((uint64_t)op, dt);
  h = mix64(h, (uint64_t)nsrc);
  for (int i = 0; i < nsrc; i++) h = mix64(h, src[i]->id);
  h = mix64(h, a->value.u);
  if (frit_dtype_is_complex(dt)) { /* c.im is meaningful only there (see frit_scalar) */
    uint64_t im;
    memcpy(&im, &a->value.c.im, sizeof im);
    h = mix64(h, im);
  }
  h = mix64(h, (uint64_t)a->i0);
  h = mix64(h, (uint64_t)a->i1);
  h = mix64(h, (uint64_t)(uintptr_t)a->blob);
  return h;
}

static bool node_equal(const frit_uop *u, frit_op op, frit_dtype dt, frit_uop *const *src, int nsrc,
                       const frit_arg *a) {
  if (u->op != op || u->dtype != dt || u->nsrc != (uint32_t)nsrc) return false;
  if (frit_dtype_is_complex(dt) && memcmp(&u->arg.value.c.im, &a->value.c.im, sizeof(double)) != 0) return false;
  if (u->arg.value.u != a->value.u || u->arg.i0 != a->i0 || u->arg.i1 != a->i1 ||
      u->arg.blob != a->blob || u->arg.n != a->n || u->arg.blob_kind != a->blob_kind)
    return false;
  for (int i = 0; i < nsrc; i++)
    if (u->src[i] != src[i]) return false;
  return true;
}

static bool grow_table(frit_ctx *ctx) {
  size_t cap = ctx->table_cap * 2;
  struct frit_slot *t = calloc(cap, sizeof *t);
  if (!t) return false;
  for (size_t i = 0; i < ctx->table_cap; i++) {
    if (!ctx->table[i].node) continue;
    size_t j = ctx->table[i].hash & (cap - 1);
    while (t[j].node) j = (j + 1) & (cap - 1);
    t[j] = ctx->table[i];
  }
  free(ctx->table);
  ctx->table = t;
  ctx->table_cap = cap;
  return true;
}

/* ---------- per-node checks ---------- */

static const char *dtname(frit_dtype dt, char *buf) { return frit_dtype_name(dt, buf, 32); }

/* Dtype class an ALU op accepts: arithmetic on numbers, bit ops on ints/bool, float math. */
enum { ACCEPT_NUM = 1, ACCEPT_BOOL = 2, ACCEPT_FLOAT_ONLY = 4, ACCEPT_INT_ONLY = 8, ACCEPT_COMPLEX = 16 };

/* Ops defined on complex operands (numpy's: no ordering, no rounding, no remainder). ABS of a
 * complex stays complex (|z| + 0i); the tensor layer casts it to the real part's dtype. */
static bool complex_ok(frit_op op) {
  switch (op) {
  case FRIT_OP_NEG: case FRIT_OP_ABS: case FRIT_OP_SQRT: case FRIT_OP_RSQRT: case FRIT_OP_RECIP:
  case FRIT_OP_EXP: case FRIT_OP_EXP2: case FRIT_OP_LOG: case FRIT_OP_LOG2: case FRIT_OP_SIN:
  case FRIT_OP_COS: case FRIT_OP_TAN: case FRIT_OP_ASIN: case FRIT_OP_ACOS: case FRIT_OP_ATAN:
  case FRIT_OP_SINH: case FRIT_OP_COSH: case FRIT_OP_TANH: case FRIT_OP_ADD: case FRIT_OP_SUB:
  case FRIT_OP_MUL: case FRIT_OP_FDIV: case FRIT_OP_POW: case FRIT_OP_MULACC: case FRIT_OP_CMPEQ:
  case FRIT_OP_CMPNE: case FRIT_OP_WHERE: case FRIT_OP_REAL: case FRIT_OP_IMAG: case FRIT_OP_CONJ:
    return true;
  case FRIT_OP_COMPLEX:
  case FRIT_OP_NOT: case FRIT_OP_ERF: case FRIT_OP_FLOOR: case FRIT_OP_CEIL: case FRIT_OP_TRUNC:
  case FRIT_OP_RINT: case FRIT_OP_IDIV: case FRIT_OP_MOD: case FRIT_OP_MAX: case FRIT_OP_MIN:
  case FRIT_OP_ATAN2: case FRIT_OP_AND: case FRIT_OP_OR: case FRIT_OP_XOR: case FRIT_OP_SHL:
  case FRIT_OP_SHR: case FRIT_OP_CMPLT: case FRIT_OP_CMPLE:
  case FRIT_OP_CONST: case FRIT_OP_VECTORIZE: case FRIT_OP_GEP: case FRIT_OP_CAST: case FRIT_OP_BITCAST:
  case FRIT_OP_DEFINE_VAR: case FRIT_OP_BIND: case FRIT_OP_SINK: case FRIT_OP_GROUP: case FRIT_OP_AFTER:
  case FRIT_OP_SPECIAL: case FRIT_OP_RESHAPE: case FRIT_OP_PERMUTE: case FRIT_OP_EXPAND: case FRIT_OP_PAD:
  case FRIT_OP_SHRINK: case FRIT_OP_FLIP: case FRIT_OP_GATHER: case FRIT_OP_SCAN: case FRIT_OP_SCATTER:
  case FRIT_OP_SEQ: case FRIT_OP_BREAK: case FRIT_OP_CONTINUE: case FRIT_OP_LOOP: case FRIT_OP_CARRY:
  case FRIT_OP_IOTA: case FRIT_OP_CONTIGUOUS: case FRIT_OP_COLLECTIVE: case FRIT_OP_REDUCE_AXIS: case FRIT_OP_REDUCE: case FRIT_OP_RANGE:
  case FRIT_OP_END: case FRIT_OP_IF: case FRIT_OP_BARRIER: case FRIT_OP_KERNEL: case FRIT_OP_BUFFER:
  case FRIT_OP_DEFINE_GLOBAL: case FRIT_OP_DEFINE_LOCAL: case FRIT_OP_DEFINE_REG: case FRIT_OP_INDEX:
  case FRIT_OP_LOAD: case FRIT_OP_STORE: case FRIT_OP_ATOMIC: case FRIT_OP_ATOMIC_CAS:
  case FRIT_OP_COUNT_:
    return false;
  }
  return false;
}

static int alu_accepts(frit_op op) {
  switch (op) {
  case FRIT_OP_NOT: case FRIT_OP_AND: case FRIT_OP_OR: case FRIT_OP_XOR:
    return ACCEPT_INT_ONLY | ACCEPT_BOOL;
  case FRIT_OP_IDIV: case FRIT_OP_SHL: case FRIT_OP_SHR:
    return ACCEPT_INT_ONLY;
  case FRIT_OP_SQRT: case FRIT_OP_RSQRT: case FRIT_OP_RECIP: case FRIT_OP_EXP: case FRIT_OP_EXP2:
  case FRIT_OP_LOG: case FRIT_OP_LOG2: case FRIT_OP_SIN: case FRIT_OP_COS: case FRIT_OP_TAN:
  case FRIT_OP_ASIN: case FRIT_OP_ACOS: case FRIT_OP_ATAN: case FRIT_OP_SINH: case FRIT_OP_COSH:
  case FRIT_OP_TANH: case FRIT_OP_ERF: case FRIT_OP_FLOOR: case FRIT_OP_CEIL: case FRIT_OP_TRUNC:
  case FRIT_OP_RINT: case FRIT_OP_FDIV: case FRIT_OP_POW: case FRIT_OP_ATAN2: case FRIT_OP_COMPLEX:
    return ACCEPT_FLOAT_ONLY;
  case FRIT_OP_REAL: case FRIT_OP_IMAG: case FRIT_OP_CONJ:
    return 0; /* complex only: complex_ok */
  case FRIT_OP_MAX: case FRIT_OP_MIN: case FRIT_OP_CMPLT: case FRIT_OP_CMPLE: case FRIT_OP_CMPEQ:
  case FRIT_OP_CMPNE: case FRIT_OP_WHERE:
    return ACCEPT_NUM | ACCEPT_BOOL;
  case FRIT_OP_NEG: case FRIT_OP_ABS: case FRIT_OP_ADD: case FRIT_OP_SUB: case FRIT_OP_MUL:
  case FRIT_OP_MOD: case FRIT_OP_MULACC:
    return ACCEPT_NUM;
  case FRIT_OP_CONST: case FRIT_OP_VECTORIZE: case FRIT_OP_GEP: case FRIT_OP_CAST: case FRIT_OP_BITCAST:
  case FRIT_OP_DEFINE_VAR: case FRIT_OP_BIND: case FRIT_OP_SINK: case FRIT_OP_GROUP: case FRIT_OP_AFTER:
  case FRIT_OP_SPECIAL: case FRIT_OP_RESHAPE: case FRIT_OP_PERMUTE: case FRIT_OP_EXPAND: case FRIT_OP_PAD:
  case FRIT_OP_SHRINK: case FRIT_OP_FLIP: case FRIT_OP_GATHER: case FRIT_OP_SCAN: case FRIT_OP_SCATTER: case FRIT_OP_SEQ: case FRIT_OP_BREAK: case FRIT_OP_CONTINUE: case FRIT_OP_LOOP: case FRIT_OP_CARRY: case FRIT_OP_IOTA: case FRIT_OP_CONTIGUOUS: case FRIT_OP_COLLECTIVE: case FRIT_OP_REDUCE_AXIS: case FRIT_OP_REDUCE: case FRIT_OP_RANGE:
  case FRIT_OP_END: case FRIT_OP_IF: case FRIT_OP_BARRIER: case FRIT_OP_KERNEL: case FRIT_OP_BUFFER:
  case FRIT_OP_DEFINE_GLOBAL: case FRIT_OP_DEFINE_LOCAL: case FRIT_OP_DEFINE_REG: case FRIT_OP_INDEX:
  case FRIT_OP_LOAD: case FRIT_OP_STORE: case FRIT_OP_ATOMIC: case FRIT_OP_ATOMIC_CAS:
  case FRIT_OP_COUNT_:
    return 0;
  }
  return 0;
}

static bool dtype_accepted(int accepts, frit_dtype dt) {
  if (frit_dtype_is_ptr(dt) || frit_dtype_kind(dt) == FRIT_VOID) return false;
  if (frit_dtype_is_bool(dt)) return (accepts & ACCEPT_BOOL) != 0;
  if (frit_dtype_is_complex(dt)) return (accepts & ACCEPT_COMPLEX) != 0;
  if (frit_dtype_is_float(dt)) return (accepts & (ACCEPT_NUM | ACCEPT_FLOAT_ONLY)) != 0;
  return (accepts & (ACCEPT_NUM | ACCEPT_INT_ONLY)) != 0;
}

/* Local well-formedness of one node: source count, ALU dtype rules, basic arg shape.
 * Shared by frit_uop_new and the verifier. Sets the error and returns its status. */
frit_status frit_check_node(frit_ctx *ctx, frit_op op, frit_dtype dt, frit_uop *const *src, int nsrc,
                            const frit_arg *arg) {
  char b0[32], b1[32], b2[32];
  if ((unsigned)op >= FRIT_OP_COUNT_) return frit_set_error(ctx, FRIT_ERR_INVALID, "unknown op %d", (int)op);
  const char *name = op_info[op].name;
  if (nsrc < op_info[op].min_src || (op_info[op].max_src >= 0 && nsrc > op_info[op].max_src))
    return frit_set_error(ctx, FRIT_ERR_INVALID, "op %s: takes %d..%d sources, got %d", name,
                          op_info[op].min_src, op_info[op].max_src, nsrc);
  unsigned flags = op_info[op].flags;
  if (flags & FRIT_F_ALU) {
    int accepts = alu_accepts(op) | (complex_ok(op) ? ACCEPT_COMPLEX : 0);
    int first = op == FRIT_OP_WHERE ? 1 : 0;
    frit_dtype operand = src[first]->dtype;
    for (int i = first; i < nsrc; i++) {
      if (src[i]->dtype != operand)
        return frit_set_error(ctx, FRIT_ERR_INVALID, "op %s: operand dtypes differ (%s vs %s)", name,
                              dtname(operand, b0), dtname(src[i]->dtype, b1));
    }
    if (!dtype_accepted(accepts, operand))
      return frit_set_error(ctx, FRIT_ERR_INVALID, "op %s: unsupported operand dtype %s", name,
                            dtname(operand, b0));
    if (op == FRIT_OP_WHERE) {
      frit_dtype c = src[0]->dtype;
      if (!frit_dtype_is_bool(c) || (frit_dtype_lanes(c) != 1 && frit_dtype_lanes(c) != frit_dtype_lanes(operand)))
        return frit_set_error(ctx, FRIT_ERR_INVALID, "op WHERE: condition must be bool (lanes 1 or %d), got %s",
                              frit_dtype_lanes(operand), dtname(c, b0));
    }
    if (op == FRIT_OP_COMPLEX && frit_dtype_kind(operand) != FRIT_F32 && frit_dtype_kind(operand) != FRIT_F64)
      return frit_set_error(ctx, FRIT_ERR_INVALID, "op COMPLEX: parts must be f32 or f64, got %s", dtname(operand, b0));
    frit_dtype want = frit_alu_result_dtype(op, operand);
    if (dt != want)
      return frit_set_error(ctx, FRIT_ERR_INVALID, "op %s: result dtype %s, expected %s for operands %s", name,
                            dtname(dt, b0), dtname(want, b1), dtname(operand, b2));
    return FRIT_OK;
  }
  if (frit_dtype_is_complex(dt) && (op == FRIT_OP_REDUCE || op == FRIT_OP_REDUCE_AXIS || op == FRIT_OP_SCAN) &&
      arg->i0 != FRIT_OP_ADD && arg->i0 != FRIT_OP_MUL)
    return frit_set_error(ctx, FRIT_ERR_INVALID, "op %s: complex %s reduces by ADD or MUL only, got op %lld", name,
                          dtname(dt, b0), (long long)arg->i0);
  if ((op == FRIT_OP_ATOMIC || op == FRIT_OP_ATOMIC_CAS) && frit_dtype_is_complex(dt))
    return frit_set_error(ctx, FRIT_ERR_INVALID, "op %s: no atomics on complex %s", name, dtname(dt, b0));
  switch (op) {
  case FRIT_OP_CAST: case FRIT_OP_BITCAST:
    if (frit_dtype_lanes(dt) != frit_dtype_lanes(src[0]->dtype) && op == FRIT_OP_CAST)
      return frit_set_error(ctx, FRIT_ERR_INVALID, "op CAST: lanes differ (%s to %s)", dtname(src[0]->dtype, b0),
                            dtname(dt, b1));
    if (op == FRIT_OP_BITCAST && (frit_dtype_is_complex(dt) || frit_dtype_is_complex(src[0]->dtype)))
      return frit_set_error(ctx, FRIT_ERR_INVALID, "op BITCAST: complex dtypes are not bitcast (%s to %s)",
                            dtname(src[0]->dtype, b0), dtname(dt, b1));
    if (op == FRIT_OP_BITCAST &&
        frit_dtype_bits(dt) * frit_dtype_lanes(dt) != frit_dtype_bits(src[0]->dtype) * frit_dtype_lanes(src[0]->dtype))
      return frit_set_error(ctx, FRIT_ERR_INVALID, "op BITCAST: sizes differ (%s to %s)", dtname(src[0]->dtype, b0),
                            dtname(dt, b1));
    if (frit_dtype_kind(dt) == FRIT_VOID || frit_dtype_kind(src[0]->dtype) == FRIT_VOID)
      return frit_set_error(ctx, FRIT_ERR_INVALID, "op %s: void dtype", name);
    return FRIT_OK;
  case FRIT_OP_CONST:
    if (frit_dtype_is_ptr(dt) || frit_dtype_kind(dt) == FRIT_VOID)
      return frit_set_error(ctx, FRIT_ERR_INVALID, "op CONST: invalid dtype %s", dtname(dt, b0));
    return FRIT_OK;
  case FRIT_OP_DEFINE_VAR:
    if (arg->blob_kind != FRIT_BLOB_STR || !frit_dtype_is_int(dt) || arg->i0 > arg->i1)
      return frit_set_error(ctx, FRIT_ERR_INVALID,
                            "op DEFINE_VAR: needs a name, an integer dtype and lo <= hi (got %s, %lld..%lld)",
                            dtname(dt, b0), (long long)arg->i0, (long long)arg->i1);
    return FRIT_OK;
  case FRIT_OP_RANGE:
    if (!frit_dtype_is_int(dt) || src[0]->dtype != dt)
      return frit_set_error(ctx, FRIT_ERR_INVALID, "op RANGE: end dtype %s and range dtype %s must be the same integer",
                            dtname(src[0]->dtype, b0), dtname(dt, b1));
    if (arg->i1 < 0 || arg->i1 >= FRIT_AXIS_COUNT_)
      return frit_set_error(ctx, FRIT_ERR_INVALID, "op RANGE: bad axis type %lld", (long long)arg->i1);
    return FRIT_OK;
  case FRIT_OP_INDEX:
    /* Element form used by the scheduler (docs/schedule.md): a non-pointer INDEX(tensor, idx[, gate])
     * is "the element of a tensor-level node at idx" (idx: the index, or a VECTORIZE of them); it has
     * the tensor's element dtype. */
    if (!frit_dtype_is_ptr(dt) && dt == src[0]->dtype && frit_dtype_is_int(src[1]->dtype) &&
        (nsrc < 3 || frit_dtype_is_bool(src[2]->dtype)))
      return FRIT_OK;
    /* Element address of explicit kernels (docs/ir.md, "Shader-like code"): INDEX(t, idx[, gate])
     * of a tensor-level node t, typed as a global pointer to t's element dtype. */
    if (frit_dtype_is_ptr(dt) && !frit_dtype_is_ptr(src[0]->dtype) && frit_dtype_kind(src[0]->dtype) != FRIT_VOID &&
        frit_dtype_lanes(src[0]->dtype) == 1 && frit_dtype_kind(dt) == frit_dtype_kind(src[0]->dtype) &&
        frit_dtype_lanes(dt) == 1 && frit_dtype_addrspace(dt) == FRIT_ADDR_GLOBAL && frit_dtype_is_int(src[1]->dtype) &&
        (nsrc < 3 || frit_dtype_is_bool(src[2]->dtype)))
      return FRIT_OK;
    if (!frit_dtype_is_ptr(src[0]->dtype) || !frit_dtype_is_int(src[1]->dtype) ||
        (nsrc == 3 && !frit_dtype_is_bool(src[2]->dtype)))
      return frit_set_error(ctx, FRIT_ERR_INVALID, "op INDEX: needs (pointer, integer index[, bool gate]), got (%s, %s)",
                            dtname(src[0]->dtype, b0), dtname(src[1]->dtype, b1));
    return FRIT_OK;
  case FRIT_OP_LOOP:
    /* start, end, step, index var, then k carries, k inits, k nexts, and stop */
    if ((nsrc - 5) % 3 != 0 || arg->i0 != (nsrc - 5) / 3)
      return frit_set_error(ctx, FRIT_ERR_INVALID, "op LOOP: %d sources do not match i0 = %lld carries (5 + 3k)",
                            nsrc, (long long)arg->i0);
    return FRIT_OK;
  case FRIT_OP_REAL: case FRIT_OP_IMAG: case FRIT_OP_CONJ: case FRIT_OP_COMPLEX:
    return FRIT_OK; /* ALU: handled above */
  case FRIT_OP_LOAD: case FRIT_OP_STORE: case FRIT_OP_ATOMIC: case FRIT_OP_ATOMIC_CAS:
    if (!frit_dtype_is_ptr(src[0]->dtype))
      return frit_set_error(ctx, FRIT_ERR_INVALID, "op %s: source 0 must be a pointer, got %s", name,
                            dtname(src[0]->dtype, b0));
    return FRIT_OK;
  case FRIT_OP_VECTORIZE: case FRIT_OP_GEP: case FRIT_OP_BIND: case FRIT_OP_SINK: case FRIT_OP_GROUP:
  case FRIT_OP_AFTER: case FRIT_OP_SPECIAL: case FRIT_OP_RESHAPE: case FRIT_OP_PERMUTE: case FRIT_OP_EXPAND:
  case FRIT_OP_PAD: case FRIT_OP_SHRINK: case FRIT_OP_FLIP: case FRIT_OP_GATHER: case FRIT_OP_SCAN: case FRIT_OP_SCATTER: case FRIT_OP_SEQ: case FRIT_OP_BREAK: case FRIT_OP_CONTINUE: case FRIT_OP_CARRY: case FRIT_OP_IOTA: case FRIT_OP_CONTIGUOUS: case FRIT_OP_COLLECTIVE: case FRIT_OP_REDUCE_AXIS: case FRIT_OP_REDUCE:
  case FRIT_OP_END: case FRIT_OP_IF: case FRIT_OP_BARRIER: case FRIT_OP_KERNEL: case FRIT_OP_BUFFER:
  case FRIT_OP_DEFINE_GLOBAL: case FRIT_OP_DEFINE_LOCAL: case FRIT_OP_DEFINE_REG:
    return FRIT_OK;
  case FRIT_OP_NEG: case FRIT_OP_NOT: case FRIT_OP_ABS: case FRIT_OP_SQRT: case FRIT_OP_RSQRT: case FRIT_OP_RECIP:
  case FRIT_OP_EXP: case FRIT_OP_EXP2: case FRIT_OP_LOG: case FRIT_OP_LOG2: case FRIT_OP_SIN: case FRIT_OP_COS:
  case FRIT_OP_TAN: case FRIT_OP_ASIN: case FRIT_OP_ACOS: case FRIT_OP_ATAN: case FRIT_OP_SINH: case FRIT_OP_COSH:
  case FRIT_OP_TANH: case FRIT_OP_ERF: case FRIT_OP_FLOOR: case FRIT_OP_CEIL: case FRIT_OP_TRUNC: case FRIT_OP_RINT:
  case FRIT_OP_ADD: case FRIT_OP_SUB: case FRIT_OP_MUL: case FRIT_OP_FDIV: case FRIT_OP_IDIV: case FRIT_OP_MOD:
  case FRIT_OP_MAX: case FRIT_OP_MIN: case FRIT_OP_POW: case FRIT_OP_ATAN2: case FRIT_OP_AND: case FRIT_OP_OR:
  case FRIT_OP_XOR: case FRIT_OP_SHL: case FRIT_OP_SHR: case FRIT_OP_CMPLT: case FRIT_OP_CMPLE: case FRIT_OP_CMPEQ:
  case FRIT_OP_CMPNE: case FRIT_OP_WHERE: case FRIT_OP_MULACC: case FRIT_OP_COUNT_:
    return FRIT_OK; /* ALU ops were handled above */
  }
  return FRIT_OK;
}

/* ---------- construction ---------- */

frit_uop *frit_uop_new(frit_ctx *ctx, frit_op op, frit_dtype dt, frit_uop *const *src, int nsrc,
                       const frit_arg *arg_in) {
  for (int i = 0; i < nsrc; i++) {
    if (!src[i]) {
      /* An earlier builder failed: keep its message, it names the real cause. */
      if (ctx->status == FRIT_OK)
        frit_set_error(ctx, FRIT_ERR_INVALID, "op %s: source %d is NULL", frit_op_name(op), i);
      return NULL;
    }
  }
  frit_arg arg = arg_in ? *arg_in : frit_arg_none();
  if (frit_check_node(ctx, op, dt, src, nsrc, &arg) != FRIT_OK) return NULL;
  if (arg.blob_kind == FRIT_BLOB_NONE || !arg.blob) {
    arg.blob = NULL, arg.n = 0, arg.blob_kind = FRIT_BLOB_NONE;
  } else {
    if (arg.blob_kind == FRIT_BLOB_STR && arg.n == 0) arg.n = (uint32_t)strlen(arg.blob);
    arg.blob = intern_blob(ctx, arg.blob_kind, arg.blob, arg.n);
    if (!arg.blob) {
      frit_set_error(ctx, FRIT_ERR_NOMEM, "out of memory");
      return NULL;
    }
  }
  if (op == FRIT_OP_CONST) arg.value = frit_scalar_normalize(arg.value, frit_dtype_scalar(dt));

  uint64_t h = node_hash(op, dt, src, nsrc, &arg);
  size_t mask = ctx->table_cap - 1, j = h & mask;
  for (; ctx->table[j].node; j = (j + 1) & mask)
    if (ctx->table[j].hash == h && node_equal(ctx->table[j].node, op, dt, src, nsrc, &arg))
      return ctx->table[j].node;

  if (ctx->count >= UINT32_MAX - 1) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "node limit reached");
    return NULL;
  }
  if (ctx->count == ctx->nodes_cap) {
    size_t cap = ctx->nodes_cap * 2;
    frit_uop **nodes = realloc(ctx->nodes, cap * sizeof *nodes);
    if (!nodes) {
      frit_set_error(ctx, FRIT_ERR_NOMEM, "out of memory");
      return NULL;
    }
    ctx->nodes = nodes;
    ctx->nodes_cap = cap;
  }
  frit_uop *u = frit_arena_alloc(&ctx->arena, sizeof *u + (size_t)nsrc * sizeof(frit_uop *));
  if (!u) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "out of memory");
    return NULL;
  }
  u->id = (uint32_t)ctx->count;
  u->op = (uint16_t)op;
  u->pad_ = 0;
  u->dtype = dt;
  u->nsrc = (uint32_t)nsrc;
  u->hash = h;
  u->src = (frit_uop **)(u + 1);
  if (nsrc) memcpy(u->src, src, (size_t)nsrc * sizeof *src);
  u->arg = arg;
  u->shape = NULL;
  frit_range_analyse(u);
  ctx->nodes[ctx->count++] = u;
  ctx->table[j] = (struct frit_slot){h, u};
  if (ctx->count * 2 > ctx->table_cap && !grow_table(ctx)) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "out of memory");
    return NULL;
  }
  return u;
}

frit_uop *frit_uop_replace_src(frit_ctx *ctx, frit_uop *u, frit_uop *const *src, int nsrc) {
  if ((uint32_t)nsrc == u->nsrc) {
    int i = 0;
    while (i < nsrc && src[i] == u->src[i]) i++;
    if (i == nsrc) return u;
  }
  return frit_uop_new(ctx, (frit_op)u->op, u->dtype, src, nsrc, &u->arg);
}

/* ---------- accessors ---------- */

uint32_t frit_uop_id(const frit_uop *u) { return u->id; }
frit_op frit_uop_op(const frit_uop *u) { return (frit_op)u->op; }
frit_dtype frit_uop_dtype(const frit_uop *u) { return u->dtype; }
int frit_uop_nsrc(const frit_uop *u) { return (int)u->nsrc; }
frit_uop *frit_uop_src(const frit_uop *u, int i) {
  FRIT_ASSERT(i >= 0 && (uint32_t)i < u->nsrc);
  return u->src[i];
}
const frit_arg *frit_uop_arg(const frit_uop *u) { return &u->arg; }
int64_t frit_uop_vmin(const frit_uop *u) { return u->vmin; }
int64_t frit_uop_vmax(const frit_uop *u) { return u->vmax; }

/* ---------- convenience builders ---------- */

frit_uop *frit_const(frit_ctx *ctx, frit_dtype dt, frit_scalar v) {
  frit_arg a = frit_arg_none();
  a.value = v;
  return frit_uop_new(ctx, FRIT_OP_CONST, dt, NULL, 0, &a);
}

frit_uop *frit_const_int(frit_ctx *ctx, frit_dtype dt, int64_t v) {
  frit_scalar s = {.i = v};
  return frit_const(ctx, dt, frit_eval_cast(s, FRIT_I64, frit_dtype_scalar(dt)));
}

frit_uop *frit_const_float(frit_ctx *ctx, frit_dtype dt, double v) {
  frit_scalar s = {.f = v};
  return frit_const(ctx, dt, frit_eval_cast(s, FRIT_F64, frit_dtype_scalar(dt)));
}

frit_dtype frit_alu_result_dtype(frit_op op, frit_dtype operand) {
  int lanes = frit_dtype_lanes(operand);
  if (frit_op_flags(op) & FRIT_F_COMPARE) return frit_dtype_vec(FRIT_BOOL, lanes);
  if (op == FRIT_OP_REAL || op == FRIT_OP_IMAG) return frit_dtype_real_part(operand);
  if (op == FRIT_OP_COMPLEX) {
    frit_dtype c = frit_dtype_kind(operand) == FRIT_F32 ? FRIT_C64 : FRIT_C128;
    return lanes > 1 ? frit_dtype_vec(c, lanes) : c;
  }
  return operand;
}

frit_uop *frit_alu(frit_ctx *ctx, frit_op op, frit_uop *const *src, int nsrc) {
  if ((unsigned)op >= FRIT_OP_COUNT_ || !(op_info[op].flags & FRIT_F_ALU)) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "op %s: not an ALU op", frit_op_name(op));
    return NULL;
  }
  if (nsrc < op_info[op].min_src || nsrc > op_info[op].max_src) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "op %s: takes %d sources, got %d", op_info[op].name,
                   op_info[op].min_src, nsrc);
    return NULL;
  }
  for (int i = 0; i < nsrc; i++)
    if (!src[i]) return frit_uop_new(ctx, op, FRIT_VOID, src, nsrc, NULL); /* reports the NULL */
  frit_dtype operand = src[op == FRIT_OP_WHERE ? 1 : 0]->dtype;
  frit_dtype dt = frit_dtype_is_ptr(operand) ? operand : frit_alu_result_dtype(op, operand);
  return frit_uop_new(ctx, op, dt, src, nsrc, NULL);
}

frit_uop *frit_unary(frit_ctx *ctx, frit_op op, frit_uop *a) { return frit_alu(ctx, op, &a, 1); }
frit_uop *frit_binary(frit_ctx *ctx, frit_op op, frit_uop *a, frit_uop *b) {
  frit_uop *s[2] = {a, b};
  return frit_alu(ctx, op, s, 2);
}
frit_uop *frit_ternary(frit_ctx *ctx, frit_op op, frit_uop *a, frit_uop *b, frit_uop *c) {
  frit_uop *s[3] = {a, b, c};
  return frit_alu(ctx, op, s, 3);
}

frit_uop *frit_cast(frit_ctx *ctx, frit_uop *x, frit_dtype dt) {
  return frit_uop_new(ctx, FRIT_OP_CAST, dt, &x, 1, NULL);
}

frit_uop *frit_var(frit_ctx *ctx, const char *name, int64_t lo, int64_t hi) {
  frit_arg a = frit_arg_none();
  a.blob = name;
  a.blob_kind = FRIT_BLOB_STR;
  a.n = (uint32_t)strlen(name);
  a.i0 = lo;
  a.i1 = hi;
  if (a.n == 0) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "op DEFINE_VAR: empty name");
    return NULL;
  }
  return frit_uop_new(ctx, FRIT_OP_DEFINE_VAR, FRIT_I64, NULL, 0, &a);
}

frit_uop *frit_range(frit_ctx *ctx, frit_uop *end, int64_t axis_id, frit_axis type) {
  frit_arg a = frit_arg_none();
  a.i0 = axis_id;
  a.i1 = type;
  return frit_uop_new(ctx, FRIT_OP_RANGE, end ? end->dtype : FRIT_I64, &end, 1, &a);
}

frit_uop *frit_sink(frit_ctx *ctx, frit_uop *const *src, int nsrc) {
  return frit_uop_new(ctx, FRIT_OP_SINK, FRIT_VOID, src, nsrc, NULL);
}
