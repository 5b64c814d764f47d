/* The IR verifier: checks every node reachable from a root against the IR invariants (source
 * counts and dtypes, argument kinds, memory typing) and that effects inside loops are closed by
 * an END before they reach a SINK. Invariants are documented in docs/ir.md. */
#include "ir/irfmt.h"
#include "ir/walk.h"

#include <inttypes.h>

/* Records the failure naming the node, its op and dtype and its sources' dtypes. */
static frit_status fail(frit_ctx *ctx, const frit_uop *u, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static frit_status fail(frit_ctx *ctx, const frit_uop *u, const char *fmt, ...) {
  char msg[512], head[384], dt[48];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  size_t k = (size_t)snprintf(head, sizeof head, "node %%%" PRIu32 " %s : %s", u->id, frit_op_name((frit_op)u->op),
                              frit_dtype_name(u->dtype, dt, sizeof dt));
  if (u->nsrc && k < sizeof head) {
    k += (size_t)snprintf(head + k, sizeof head - k, " (");
    for (uint32_t i = 0; i < u->nsrc && i < 6 && k < sizeof head; i++)
      k += (size_t)snprintf(head + k, sizeof head - k, "%s%%%" PRIu32 ":%s", i ? ", " : "", u->src[i]->id,
                            frit_dtype_name(u->src[i]->dtype, dt, sizeof dt));
    if (k < sizeof head) snprintf(head + k, sizeof head - k, "%s)", u->nsrc > 6 ? ", ..." : "");
  }
  return frit_set_error(ctx, FRIT_ERR_VERIFY, "verify: %s: %s", head, msg);
}

static bool is_void(frit_dtype dt) { return !frit_dtype_is_ptr(dt) && frit_dtype_kind(dt) == FRIT_VOID; }

/* Something that can order or be ordered: a void effect/control node or a value-yielding effect. */
static bool is_effect(const frit_uop *s) {
  return is_void(s->dtype) || (frit_op_flags((frit_op)s->op) & FRIT_F_EFFECT) != 0;
}

static bool is_assoc_alu(int64_t op) {
  return op == FRIT_OP_ADD || op == FRIT_OP_MUL || op == FRIT_OP_MAX || op == FRIT_OP_MIN || op == FRIT_OP_AND ||
         op == FRIT_OP_OR || op == FRIT_OP_XOR;
}

static frit_status check_deps(frit_ctx *ctx, const frit_uop *u, uint32_t first) {
  for (uint32_t i = first; i < u->nsrc; i++)
    if (!is_effect(u->src[i]))
      return fail(ctx, u, "source %" PRIu32 " must be an effect (void dtype or STORE/ATOMIC/BARRIER)", i);
  return FRIT_OK;
}

/* Blob ints each in [0, bound) and pairwise distinct; bound < 0 means unbounded. */
static bool distinct_ints(const frit_arg *a, int64_t bound) {
  if (a->blob_kind != FRIT_BLOB_INTS) return false;
  const int64_t *v = a->blob;
  for (uint32_t i = 0; i < a->n; i++) {
    if (v[i] < 0 || (bound >= 0 && v[i] >= bound)) return false;
    for (uint32_t j = 0; j < i; j++)
      if (v[i] == v[j]) return false;
  }
  return true;
}

/* A kernel body in statement form: SEQ, or END(SEQ, ranges...). */
static bool is_structured_body(const frit_uop *b) {
  return b->op == FRIT_OP_SEQ || (b->op == FRIT_OP_END && b->src[0]->op == FRIT_OP_SEQ);
}

/* LOOP(start, end, step, ivar, P_0..P_{k-1}, init_0.., next_0.., stop), arg.i0 = k, arg.i1 = id. */
static frit_status check_loop(frit_ctx *ctx, const frit_uop *u) {
  frit_uop *const *s = u->src;
  int64_t k = u->arg.i0;
  char b0[48];
  if (!is_void(u->dtype)) return fail(ctx, u, "dtype must be void");
  if (k < 0 || (int64_t)u->nsrc != 5 + 3 * k) return fail(ctx, u, "needs 5 + 3k sources with k = i0");
  if (u->arg.i1 < 0) return fail(ctx, u, "loop id i1 must be >= 0");
  for (uint32_t i = 0; i < 3; i++)
    if (s[i]->dtype != FRIT_I64) return fail(ctx, u, "start, end and step must be i64 (source %" PRIu32 ")", i);
  if (s[3]->op != FRIT_OP_DEFINE_VAR) return fail(ctx, u, "source 3 (the index variable) must be a DEFINE_VAR");
  for (int64_t j = 0; j < k; j++) {
    const frit_uop *p = s[4 + j], *init = s[4 + k + j], *next = s[4 + 2 * k + j];
    if (p->op != FRIT_OP_CARRY || p->arg.i0 != u->arg.i1 || p->arg.i1 != j)
      return fail(ctx, u, "source %" PRId64 " must be CARRY slot %" PRId64 " of loop %" PRId64, 4 + j, j, u->arg.i1);
    if (init->dtype != p->dtype || next->dtype != p->dtype)
      return fail(ctx, u, "init and next of carry %" PRId64 " must have its dtype %s", j,
                  frit_dtype_name(p->dtype, b0, sizeof b0));
  }
  if (s[4 + 3 * k]->dtype != FRIT_BOOL) return fail(ctx, u, "stop (last source) must be bool");
  return FRIT_OK;
}

static frit_status check_node(frit_ctx *ctx, const frit_uop *u) {
  frit_op op = (frit_op)u->op;
  frit_dtype dt = u->dtype;
  const frit_arg *a = &u->arg;
  frit_uop *const *s = u->src;
  uint32_t n = u->nsrc;
  char b0[48];
  /* The construction-time checks first (counts, ALU dtype rules, CAST sizes ...): a node
   * built behind frit_uop_new's back, or by an older version, must still pass them. */
  if (frit_check_node(ctx, op, dt, s, (int)n, a) != FRIT_OK) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", frit_error(ctx));
    return fail(ctx, u, "%s", msg);
  }
  switch (op) {
  case FRIT_OP_CONST: {
    frit_scalar norm = frit_scalar_normalize(a->value, frit_dtype_scalar(dt));
    if (norm.u != a->value.u || (frit_dtype_is_complex(dt) && memcmp(&norm.c.im, &a->value.c.im, sizeof(double)) != 0))
      return fail(ctx, u, "constant not normalised to its dtype");
    return FRIT_OK;
  }
  case FRIT_OP_VECTORIZE:
    for (uint32_t i = 0; i < n; i++)
      if (s[i]->dtype != s[0]->dtype || frit_dtype_lanes(s[i]->dtype) != 1 || frit_dtype_is_ptr(s[i]->dtype) ||
          is_void(s[i]->dtype))
        return fail(ctx, u, "sources must be scalars of one dtype");
    if (n > FRIT_MAX_LANES || dt != frit_dtype_vec(s[0]->dtype, (int)n))
      return fail(ctx, u, "dtype must be %s x %" PRIu32 " lanes", frit_dtype_name(s[0]->dtype, b0, sizeof b0), n);
    return FRIT_OK;
  case FRIT_OP_GEP:
    if (frit_dtype_is_ptr(s[0]->dtype) || !distinct_ints(a, frit_dtype_lanes(s[0]->dtype)) || a->n == 0 ||
        a->n > FRIT_MAX_LANES)
      return fail(ctx, u, "needs a vector source and ints naming distinct lanes of it");
    if (dt != frit_dtype_vec(frit_dtype_scalar(s[0]->dtype), (int)a->n))
      return fail(ctx, u, "dtype must be the source's scalar x %" PRIu32 " lanes", a->n);
    return FRIT_OK;
  case FRIT_OP_CAST: case FRIT_OP_BITCAST:
    if (frit_dtype_is_ptr(dt) || frit_dtype_is_ptr(s[0]->dtype)) return fail(ctx, u, "pointer casts are not allowed");
    return FRIT_OK;
  case FRIT_OP_DEFINE_VAR:
    if (a->n == 0) return fail(ctx, u, "variable needs a non-empty name");
    if (dt != FRIT_I64) return fail(ctx, u, "variables are i64");
    return FRIT_OK;
  case FRIT_OP_BIND:
    if (s[0]->op != FRIT_OP_DEFINE_VAR) return fail(ctx, u, "source 0 must be a DEFINE_VAR");
    if (s[1]->dtype != s[0]->dtype) return fail(ctx, u, "bound value must have the variable's dtype");
    return FRIT_OK;
  case FRIT_OP_SINK: case FRIT_OP_GROUP: case FRIT_OP_BARRIER:
    if (!is_void(dt)) return fail(ctx, u, "dtype must be void");
    return op == FRIT_OP_SINK ? FRIT_OK : check_deps(ctx, u, 0);
  case FRIT_OP_KERNEL:
    if (!is_void(dt)) return fail(ctx, u, "dtype must be void");
    if (n > 0 && is_structured_body(s[0])) {
      /* explicit kernel KERNEL(body, tensors...): the tensor-level nodes its body references */
      for (uint32_t i = 1; i < n; i++)
        if (is_void(s[i]->dtype) || frit_dtype_is_ptr(s[i]->dtype))
          return fail(ctx, u, "source %" PRIu32 " must be a tensor-level value the body references", i);
      return FRIT_OK;
    }
    return check_deps(ctx, u, 0);
  case FRIT_OP_AFTER:
    if (dt != s[0]->dtype) return fail(ctx, u, "dtype must be source 0's dtype");
    return check_deps(ctx, u, 1);
  case FRIT_OP_SPECIAL:
    if (!frit_dtype_is_int(dt) || !frit_dtype_is_int(s[0]->dtype)) return fail(ctx, u, "needs integer dtypes");
    if (a->blob_kind != FRIT_BLOB_STR || a->n == 0) return fail(ctx, u, "needs a name");
    return FRIT_OK;
  case FRIT_OP_RESHAPE: case FRIT_OP_EXPAND: case FRIT_OP_PAD: case FRIT_OP_SHRINK:
    for (uint32_t i = 1; i < n; i++)
      if (!frit_dtype_is_int(s[i]->dtype)) return fail(ctx, u, "shape source %" PRIu32 " must be integer", i);
    return FRIT_OK;
  case FRIT_OP_PERMUTE:
    if (!distinct_ints(a, a->blob_kind == FRIT_BLOB_INTS ? (int64_t)a->n : 0))
      return fail(ctx, u, "ints must be a permutation of 0..n-1");
    return FRIT_OK;
  case FRIT_OP_FLIP:
    if (a->blob_kind != FRIT_BLOB_NONE && !distinct_ints(a, -1)) return fail(ctx, u, "axes must be distinct and >= 0");
    return FRIT_OK;
  case FRIT_OP_GATHER:
    if (!frit_dtype_is_int(s[1]->dtype)) return fail(ctx, u, "indices must be integers");
    if (a->i0 < 0) return fail(ctx, u, "axis must be >= 0");
    return FRIT_OK;
  case FRIT_OP_SCAN:
    if (!is_assoc_alu(a->i0) || a->i1 < 0) return fail(ctx, u, "needs an associative ALU op in i0 and an axis in i1");
    return FRIT_OK;
  case FRIT_OP_SCATTER:
    if (a->i0 < 0 || a->i0 >= FRIT_ATOMIC_COUNT_) return fail(ctx, u, "i0 must be a frit_atomic_op");
    if ((a->i0 == FRIT_ATOMIC_AND || a->i0 == FRIT_ATOMIC_OR || a->i0 == FRIT_ATOMIC_XOR) && frit_dtype_is_float(dt))
      return fail(ctx, u, "bitwise modes AND, OR, XOR need an integer or bool dtype");
    if (s[1]->dtype != FRIT_I64 || dt != s[0]->dtype || s[2]->dtype != dt)
      return fail(ctx, u, "needs i64 indices and updates of x's dtype");
    return FRIT_OK;
  case FRIT_OP_SEQ:
    if (!is_void(dt)) return fail(ctx, u, "dtype must be void");
    /* values are "evaluate here": reads (LOAD), or what scheduling made of a read of a tensor the
     * kernel does not write (any pure value) */
    for (uint32_t i = 0; i < n; i++)
      if (frit_dtype_is_ptr(s[i]->dtype))
        return fail(ctx, u, "source %" PRIu32 " (%s) must be a statement (an effect) or a value evaluated at this point",
                    i, frit_op_name((frit_op)s[i]->op));
    return FRIT_OK;
  case FRIT_OP_BREAK: case FRIT_OP_CONTINUE:
    if (!is_void(dt) || s[0]->op != FRIT_OP_RANGE) return fail(ctx, u, "needs void dtype and a RANGE source");
    return FRIT_OK;
  case FRIT_OP_LOOP: return check_loop(ctx, u);
  case FRIT_OP_CARRY:
    if (is_void(dt) || frit_dtype_is_ptr(dt)) return fail(ctx, u, "dtype must be a value dtype");
    if (a->i0 < 0 || a->i1 < 0) return fail(ctx, u, "needs a loop id i0 >= 0 and a slot i1 >= 0");
    for (uint32_t i = 0; i < n; i++)
      if (s[i]->dtype != FRIT_I64) return fail(ctx, u, "dims must be i64");
    return FRIT_OK;
  case FRIT_OP_IOTA:
    if (!frit_dtype_is_int(s[0]->dtype) || dt != FRIT_I64) return fail(ctx, u, "needs an integer length and dtype i64");
    return FRIT_OK;
  case FRIT_OP_CONTIGUOUS: case FRIT_OP_COLLECTIVE:
    if (dt != s[0]->dtype) return fail(ctx, u, "dtype must be source 0's dtype");
    if (op == FRIT_OP_COLLECTIVE &&
        (a->i0 < 0 || a->i0 >= FRIT_COLL_KIND_COUNT_ || a->i1 < 0 || a->i1 >= FRIT_COLL_OP_COUNT_ ||
         a->blob_kind != FRIT_BLOB_INTS || a->n != 2))
      return fail(ctx, u, "needs a kind i0 (frit_coll_kind), an op i1 (frit_coll_op) and two ints {root or dest, source}");
    return FRIT_OK;
  case FRIT_OP_REDUCE_AXIS: case FRIT_OP_REDUCE:
    if (!is_assoc_alu(a->i0))
      return fail(ctx, u, "i0 = %" PRId64 " (%s) is not an associative ALU op (ADD MUL MAX MIN AND OR XOR)", a->i0,
                  a->i0 >= 0 && a->i0 < FRIT_OP_COUNT_ ? frit_op_name((frit_op)a->i0) : "?");
    if (dt != s[0]->dtype) return fail(ctx, u, "dtype must be the reduced value's dtype");
    if (op == FRIT_OP_REDUCE_AXIS && a->blob_kind != FRIT_BLOB_NONE && !distinct_ints(a, -1))
      return fail(ctx, u, "axes must be distinct and >= 0");
    if (op == FRIT_OP_REDUCE)
      for (uint32_t i = 1; i < n; i++)
        if (s[i]->op != FRIT_OP_RANGE) return fail(ctx, u, "source %" PRIu32 " must be a RANGE", i);
    return FRIT_OK;
  case FRIT_OP_RANGE:
    if (frit_dtype_lanes(dt) != 1) return fail(ctx, u, "a range is a scalar");
    return FRIT_OK;
  case FRIT_OP_END:
    if (!is_void(dt)) return fail(ctx, u, "dtype must be void");
    if (!is_effect(s[0])) return fail(ctx, u, "source 0 must be an effect");
    for (uint32_t i = 1; i < n; i++)
      if (s[i]->op != FRIT_OP_RANGE) return fail(ctx, u, "closes source %" PRIu32 ", which is not a RANGE", i);
    return FRIT_OK;
  case FRIT_OP_IF:
    if (!is_void(dt)) return fail(ctx, u, "dtype must be void");
    if (s[0]->dtype != FRIT_BOOL) return fail(ctx, u, "condition must be a scalar bool");
    return check_deps(ctx, u, 1);
  case FRIT_OP_BUFFER:
    return FRIT_OK;
  case FRIT_OP_DEFINE_GLOBAL: case FRIT_OP_DEFINE_LOCAL: case FRIT_OP_DEFINE_REG: {
    frit_addrspace want = op == FRIT_OP_DEFINE_GLOBAL ? FRIT_ADDR_GLOBAL
                          : op == FRIT_OP_DEFINE_LOCAL ? FRIT_ADDR_LOCAL : FRIT_ADDR_REG;
    static const char *const space_names[] = {"global", "local", "reg"};
    if (!frit_dtype_is_ptr(dt) || frit_dtype_addrspace(dt) != want)
      return fail(ctx, u, "dtype must be a pointer in the %s address space", space_names[want]);
    if (a->i0 < 0 || a->i1 < -1) return fail(ctx, u, "needs i0 >= 0 and i1 (elements) >= -1");
    return FRIT_OK;
  }
  case FRIT_OP_INDEX:
    if (!frit_dtype_is_ptr(s[0]->dtype)) {
      /* tensor-level forms: the element (scheduler) or the element address (explicit kernels) */
      if (is_void(s[0]->dtype)) return fail(ctx, u, "source 0 must be a pointer or a tensor-level value");
      if (dt == s[0]->dtype) return FRIT_OK;
      if (dt != frit_dtype_ptr(s[0]->dtype, FRIT_ADDR_GLOBAL))
        return fail(ctx, u, "element address of a tensor of %s must have dtype %s*",
                    frit_dtype_name(s[0]->dtype, b0, sizeof b0), b0);
      return FRIT_OK;
    }
    if (!frit_dtype_is_ptr(dt) || frit_dtype_kind(dt) != frit_dtype_kind(s[0]->dtype) ||
        frit_dtype_addrspace(dt) != frit_dtype_addrspace(s[0]->dtype))
      return fail(ctx, u, "dtype must be a pointer to the same element kind and address space as source 0");
    return FRIT_OK;
  case FRIT_OP_LOAD: {
    frit_dtype pointee = frit_dtype_scalar(s[0]->dtype);
    if (dt != pointee) return fail(ctx, u, "dtype must be the pointee %s", frit_dtype_name(pointee, b0, sizeof b0));
    uint32_t first_dep = 1;
    if (n > 1 && !is_effect(s[1])) {
      if (s[1]->dtype != dt) return fail(ctx, u, "alternative value must have the loaded dtype");
      first_dep = 2;
    }
    return check_deps(ctx, u, first_dep);
  }
  case FRIT_OP_STORE: case FRIT_OP_ATOMIC: case FRIT_OP_ATOMIC_CAS: {
    frit_dtype pointee = frit_dtype_scalar(s[0]->dtype);
    uint32_t nvals = op == FRIT_OP_ATOMIC_CAS ? 2 : 1;
    for (uint32_t i = 1; i <= nvals; i++)
      if (s[i]->dtype != pointee)
        return fail(ctx, u, "value source %" PRIu32 " must have the pointee dtype %s", i,
                    frit_dtype_name(pointee, b0, sizeof b0));
    if (op == FRIT_OP_STORE && !is_void(dt)) return fail(ctx, u, "dtype must be void");
    if (op != FRIT_OP_STORE && dt != pointee) return fail(ctx, u, "yields the old value: dtype must be the pointee");
    if (op == FRIT_OP_ATOMIC && !frit_fmt_atomic_name(a->i0)) return fail(ctx, u, "bad atomic op %" PRId64, a->i0);
    return check_deps(ctx, u, 1 + nvals);
  }
  case FRIT_OP_NEG: case FRIT_OP_NOT: case FRIT_OP_ABS: case FRIT_OP_SQRT: case FRIT_OP_RSQRT: case FRIT_OP_RECIP:
  case FRIT_OP_EXP: case FRIT_OP_EXP2: case FRIT_OP_LOG: case FRIT_OP_LOG2: case FRIT_OP_SIN: case FRIT_OP_COS:
  case FRIT_OP_TAN: case FRIT_OP_ASIN: case FRIT_OP_ACOS: case FRIT_OP_ATAN: case FRIT_OP_SINH: case FRIT_OP_COSH:
  case FRIT_OP_TANH: case FRIT_OP_ERF: case FRIT_OP_FLOOR: case FRIT_OP_CEIL: case FRIT_OP_TRUNC: case FRIT_OP_RINT:
  case FRIT_OP_ADD: case FRIT_OP_SUB: case FRIT_OP_MUL: case FRIT_OP_FDIV: case FRIT_OP_IDIV: case FRIT_OP_MOD:
  case FRIT_OP_MAX: case FRIT_OP_MIN: case FRIT_OP_POW: case FRIT_OP_ATAN2: case FRIT_OP_REAL: case FRIT_OP_IMAG: case FRIT_OP_CONJ: case FRIT_OP_COMPLEX: case FRIT_OP_AND: case FRIT_OP_OR:
  case FRIT_OP_XOR: case FRIT_OP_SHL: case FRIT_OP_SHR: case FRIT_OP_CMPLT: case FRIT_OP_CMPLE: case FRIT_OP_CMPEQ:
  case FRIT_OP_CMPNE: case FRIT_OP_WHERE: case FRIT_OP_MULACC:
    return FRIT_OK; /* frit_check_node holds all ALU rules */
  case FRIT_OP_COUNT_:
    return fail(ctx, u, "not an op");
  }
  return fail(ctx, u, "unknown op %d", (int)op);
}

/* ---------- effects closed by END ---------- */

/* Sorted sets of RANGE ids; NULL is the empty set. Sets are shared between nodes whenever a
 * union adds nothing, so straight-line code costs no allocation. */
typedef struct rset {
  uint32_t n;
  uint32_t ids[];
} rset;

typedef struct rpool {
  rset **all;
  size_t count, cap;
  bool oom;
} rpool;

static rset *rset_new(rpool *p, uint32_t n) {
  if (p->count == p->cap) {
    size_t cap = p->cap ? p->cap * 2 : 64;
    rset **g = realloc(p->all, cap * sizeof *g);
    if (!g) return p->oom = true, NULL;
    p->all = g, p->cap = cap;
  }
  rset *r = malloc(sizeof *r + (size_t)n * sizeof(uint32_t));
  if (!r) return p->oom = true, NULL;
  r->n = n;
  p->all[p->count++] = r;
  return r;
}

static rset *rset_union(rpool *p, rset *a, rset *b) {
  if (!a || a == b) return b ? b : a;
  if (!b) return a;
  rset *r = rset_new(p, a->n + b->n);
  if (!r) return NULL;
  uint32_t i = 0, j = 0, k = 0;
  while (i < a->n || j < b->n) {
    if (j >= b->n || (i < a->n && a->ids[i] < b->ids[j])) r->ids[k++] = a->ids[i++];
    else if (i >= a->n || b->ids[j] < a->ids[i]) r->ids[k++] = b->ids[j++];
    else r->ids[k++] = a->ids[i++], j++;
  }
  r->n = k;
  if (k == a->n) return a;
  if (k == b->n) return b;
  return r;
}

/* a without the RANGE sources src[first..] of u. */
static rset *rset_minus_ranges(rpool *p, rset *a, const frit_uop *u, uint32_t first) {
  if (!a) return NULL;
  rset *r = rset_new(p, a->n);
  if (!r) return NULL;
  uint32_t k = 0;
  for (uint32_t i = 0; i < a->n; i++) {
    bool closed = false;
    for (uint32_t j = first; j < u->nsrc && !closed; j++) closed = u->src[j]->id == a->ids[i];
    if (!closed) r->ids[k++] = a->ids[i];
  }
  r->n = k;
  return k == a->n ? a : k ? r : NULL;
}

static bool rset_has(const rset *a, uint32_t id) {
  for (uint32_t i = 0; a && i < a->n; i++)
    if (a->ids[i] == id) return true;
  return false;
}

/* used: the RANGEs a value depends on (REDUCE closes its own). open: the RANGEs that effects
 * below a node index by and that no END has closed yet. A SINK or KERNEL must see none open. */
static frit_status check_effects_closed(frit_ctx *ctx, frit_uop **nodes, size_t count, uint32_t nslots) {
  rpool pool = {0};
  uint32_t *pos = malloc((size_t)nslots * sizeof *pos);
  rset **used = calloc(count, sizeof *used), **open = calloc(count, sizeof *open);
  frit_status st = FRIT_OK;
  if (!pos || !used || !open) {
    st = frit_set_error(ctx, FRIT_ERR_NOMEM, "verify: out of memory");
    goto done;
  }
  for (size_t k = 0; k < count && st == FRIT_OK && !pool.oom; k++) {
    frit_uop *u = nodes[k];
    pos[u->id] = (uint32_t)k;
    rset *us = NULL, *os = NULL;
    for (uint32_t i = 0; i < u->nsrc; i++) {
      uint32_t sk = pos[u->src[i]->id];
      us = rset_union(&pool, us, used[sk]);
      os = rset_union(&pool, os, open[sk]);
    }
    switch ((frit_op)u->op) {
    case FRIT_OP_RANGE: {
      rset *self = rset_new(&pool, 1);
      if (self) self->ids[0] = u->id;
      us = rset_union(&pool, us, self);
      break;
    }
    case FRIT_OP_REDUCE: us = rset_minus_ranges(&pool, us, u, 1); break;
    case FRIT_OP_END: os = rset_minus_ranges(&pool, os, u, 1); break;
    case FRIT_OP_STORE: case FRIT_OP_ATOMIC: case FRIT_OP_ATOMIC_CAS:
    case FRIT_OP_BREAK: case FRIT_OP_CONTINUE: /* these must sit inside the loop of their RANGE */
      os = rset_union(&pool, os, used[pos[u->src[0]->id]]);
      break;
    case FRIT_OP_SINK: case FRIT_OP_KERNEL:
      if (os && os->n) {
        /* Name an effect that indexes by the first open range, for the message. */
        uint32_t r = os->ids[0];
        const frit_uop *eff = NULL;
        for (size_t j = 0; j < k && !eff; j++) {
          frit_uop *e = nodes[j];
          if ((e->op == FRIT_OP_STORE || e->op == FRIT_OP_ATOMIC || e->op == FRIT_OP_ATOMIC_CAS ||
               e->op == FRIT_OP_BREAK || e->op == FRIT_OP_CONTINUE) &&
              rset_has(used[pos[e->src[0]->id]], r))
            eff = e;
        }
        st = fail(ctx, u, "effect %%%" PRIu32 " %s indexes by RANGE %%%" PRIu32 " but no END closes that range before this %s",
                  eff ? eff->id : 0, eff ? frit_op_name((frit_op)eff->op) : "?", r, frit_op_name((frit_op)u->op));
      }
      /* A kernel's ranges are its own: a later kernel storing into AFTER(t, this kernel) does
       * not index by them (they are not the same loops even when hash-consed alike). */
      if (u->op == FRIT_OP_KERNEL) us = os = NULL;
      break;
    case FRIT_OP_CONST: case FRIT_OP_VECTORIZE: case FRIT_OP_GEP: case FRIT_OP_CAST: case FRIT_OP_BITCAST:
    case FRIT_OP_DEFINE_VAR: case FRIT_OP_BIND: case FRIT_OP_GROUP: case FRIT_OP_AFTER: case FRIT_OP_SPECIAL:
    case FRIT_OP_RESHAPE: case FRIT_OP_PERMUTE: case FRIT_OP_EXPAND: case FRIT_OP_PAD: case FRIT_OP_SHRINK:
    case FRIT_OP_FLIP: case FRIT_OP_GATHER: case FRIT_OP_SCAN: case FRIT_OP_SCATTER: case FRIT_OP_SEQ: case FRIT_OP_LOOP: case FRIT_OP_CARRY: case FRIT_OP_IOTA: case FRIT_OP_CONTIGUOUS: case FRIT_OP_COLLECTIVE: case FRIT_OP_REDUCE_AXIS: case FRIT_OP_IF: case FRIT_OP_BARRIER: case FRIT_OP_BUFFER:
    case FRIT_OP_DEFINE_GLOBAL: case FRIT_OP_DEFINE_LOCAL: case FRIT_OP_DEFINE_REG: case FRIT_OP_INDEX:
    case FRIT_OP_LOAD: case FRIT_OP_NEG: case FRIT_OP_NOT: case FRIT_OP_ABS: case FRIT_OP_SQRT:
    case FRIT_OP_RSQRT: case FRIT_OP_RECIP: case FRIT_OP_EXP: case FRIT_OP_EXP2: case FRIT_OP_LOG:
    case FRIT_OP_LOG2: case FRIT_OP_SIN: case FRIT_OP_COS: case FRIT_OP_TAN: case FRIT_OP_ASIN:
    case FRIT_OP_ACOS: case FRIT_OP_ATAN: case FRIT_OP_SINH: case FRIT_OP_COSH: case FRIT_OP_TANH:
    case FRIT_OP_ERF: case FRIT_OP_FLOOR: case FRIT_OP_CEIL: case FRIT_OP_TRUNC: case FRIT_OP_RINT:
    case FRIT_OP_ADD: case FRIT_OP_SUB: case FRIT_OP_MUL: case FRIT_OP_FDIV: case FRIT_OP_IDIV:
    case FRIT_OP_MOD: case FRIT_OP_MAX: case FRIT_OP_MIN: case FRIT_OP_POW: case FRIT_OP_ATAN2: case FRIT_OP_REAL: case FRIT_OP_IMAG: case FRIT_OP_CONJ: case FRIT_OP_COMPLEX:
    case FRIT_OP_AND: case FRIT_OP_OR: case FRIT_OP_XOR: case FRIT_OP_SHL: case FRIT_OP_SHR:
    case FRIT_OP_CMPLT: case FRIT_OP_CMPLE: case FRIT_OP_CMPEQ: case FRIT_OP_CMPNE: case FRIT_OP_WHERE:
    case FRIT_OP_MULACC: case FRIT_OP_COUNT_:
      break;
    }
    used[k] = us;
    open[k] = os;
  }
  if (st == FRIT_OK && pool.oom) st = frit_set_error(ctx, FRIT_ERR_NOMEM, "verify: out of memory");
done:
  for (size_t i = 0; i < pool.count; i++) free(pool.all[i]);
  free(pool.all);
  free(pos);
  free(used);
  free(open);
  return st;
}

frit_status frit_verify(frit_ctx *ctx, frit_uop *root) {
  if (!root) return frit_set_error(ctx, FRIT_ERR_VERIFY, "verify: NULL root");
  size_t n;
  frit_uop **nodes = frit_walk_topo(root, &n);
  if (!nodes) return frit_set_error(ctx, FRIT_ERR_NOMEM, "verify: out of memory");
  frit_status st = FRIT_OK;
  for (size_t k = 0; k < n && st == FRIT_OK; k++) st = check_node(ctx, nodes[k]);
  if (st == FRIT_OK) st = check_effects_closed(ctx, nodes, n, root->id + 1);
  free(nodes);
  return st;
}
