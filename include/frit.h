/* frit: an optimizing tensor compiler. This is the whole public C API.
 *
 * Conventions, as in lua.h:
 *  - Every object belongs to a frit_ctx. Nothing is freed separately: frit_ctx_free frees it all.
 *  - Handles are opaque. A frit_uop is immutable and hash-consed: two handles are equal exactly
 *    when the nodes are equal (same op, dtype, sources and argument).
 *  - Functions that can fail on user input return NULL or a frit_status other than FRIT_OK and
 *    leave a message in the context (frit_error). The context stays usable afterwards.
 *  - The library never exits and never aborts on user error; only a broken internal invariant
 *    aborts, naming file and line. */
#ifndef FRIT_H
#define FRIT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------- status and context ---------- */

typedef enum frit_status {
  FRIT_OK = 0,
  FRIT_ERR_INVALID,   /* bad argument: wrong op arity, dtype mismatch, bad axis ... */
  FRIT_ERR_PARSE,     /* malformed text: rules, textual IR, expressions */
  FRIT_ERR_RUNTIME,   /* evaluation failed: out-of-bounds access, unbound variable ... */
  FRIT_ERR_NOMEM,
  FRIT_ERR_VERIFY,    /* a graph broke an IR invariant */
} frit_status;

typedef struct frit_ctx frit_ctx;
typedef struct frit_uop frit_uop;

/* New context; NULL only when out of memory. The caller owns it. */
frit_ctx *frit_ctx_new(void);
/* Frees the context and every node, rule set and string it handed out. NULL is ignored. */
void frit_ctx_free(frit_ctx *ctx);
/* Message of the last failure, "" if none. Owned by ctx, valid until the next failing call. */
const char *frit_error(const frit_ctx *ctx);
frit_status frit_last_status(const frit_ctx *ctx);
void frit_clear_error(frit_ctx *ctx);
/* Number of distinct nodes interned so far. */
size_t frit_node_count(const frit_ctx *ctx);

/* ---------- ops ---------- */

enum {
  FRIT_F_META = 1u << 0, FRIT_F_MOVEMENT = 1u << 1, FRIT_F_REDUCTION = 1u << 2,
  FRIT_F_CONTROL = 1u << 3, FRIT_F_MEMORY = 1u << 4, FRIT_F_UNARY = 1u << 5,
  FRIT_F_BINARY = 1u << 6, FRIT_F_TERNARY = 1u << 7, FRIT_F_COMMUTATIVE = 1u << 8,
  FRIT_F_COMPARE = 1u << 9, FRIT_F_EFFECT = 1u << 10,
  FRIT_F_ALU = FRIT_F_UNARY | FRIT_F_BINARY | FRIT_F_TERNARY,
};

typedef enum frit_op {
#define X(name, min_src, max_src, flags) FRIT_OP_##name,
#include "frit_ops.h"
#undef X
  FRIT_OP_COUNT_
} frit_op;

/* Upper-case name ("ADD"); static storage. */
const char *frit_op_name(frit_op op);
/* Op from a case-insensitive name; returns -1 if unknown. */
int frit_op_from_name(const char *name, size_t len);
unsigned frit_op_flags(frit_op op);
int frit_op_min_src(frit_op op);
int frit_op_max_src(frit_op op); /* -1: unbounded */

/* Axis types of a RANGE: how a backend realises the loop. */
typedef enum frit_axis {
  FRIT_AXIS_GLOBAL, FRIT_AXIS_LOCAL, FRIT_AXIS_LOOP, FRIT_AXIS_REDUCE, FRIT_AXIS_UPCAST,
  FRIT_AXIS_UNROLL, FRIT_AXIS_COUNT_
} frit_axis;
const char *frit_axis_name(frit_axis a);

/* Atomic read-modify-write kinds, arg.i0 of ATOMIC. */
typedef enum frit_atomic_op {
  FRIT_ATOMIC_ADD, FRIT_ATOMIC_MIN, FRIT_ATOMIC_MAX, FRIT_ATOMIC_AND, FRIT_ATOMIC_OR,
  FRIT_ATOMIC_XOR, FRIT_ATOMIC_XCHG, FRIT_ATOMIC_COUNT_
} frit_atomic_op;

/* ---------- dtypes ----------
 * A dtype is a packed value: scalar kind (bits 0-7), lanes-1 (bits 8-15), pointer flag (bit 16),
 * address space (bits 17-18). Scalar dtypes are the frit_scalar_kind values themselves. */
typedef uint32_t frit_dtype;

typedef enum frit_scalar_kind {
  FRIT_VOID, FRIT_BOOL,
  FRIT_I8, FRIT_I16, FRIT_I32, FRIT_I64,
  FRIT_U8, FRIT_U16, FRIT_U32, FRIT_U64,
  FRIT_F16, FRIT_BF16, FRIT_F32, FRIT_F64,
  FRIT_SCALAR_KIND_COUNT_
} frit_scalar_kind;

typedef enum frit_addrspace { FRIT_ADDR_GLOBAL, FRIT_ADDR_LOCAL, FRIT_ADDR_REG } frit_addrspace;

#define FRIT_MAX_LANES 64

/* Vector of `lanes` (1..FRIT_MAX_LANES) elements of a scalar dtype; lanes 1 gives the scalar. */
frit_dtype frit_dtype_vec(frit_dtype scalar, int lanes);
/* Pointer to elements of `elem` (scalar or vector) in an address space. */
frit_dtype frit_dtype_ptr(frit_dtype elem, frit_addrspace space);
frit_scalar_kind frit_dtype_kind(frit_dtype dt); /* the element scalar kind (through vectors and pointers) */
frit_dtype frit_dtype_scalar(frit_dtype dt);     /* the scalar of a vector; the pointee of a pointer */
int frit_dtype_lanes(frit_dtype dt);
int frit_dtype_is_ptr(frit_dtype dt);
frit_addrspace frit_dtype_addrspace(frit_dtype dt);
int frit_dtype_is_int(frit_dtype dt);      /* signed or unsigned integer (not bool) */
int frit_dtype_is_unsigned(frit_dtype dt);
int frit_dtype_is_float(frit_dtype dt);
int frit_dtype_is_bool(frit_dtype dt);
int frit_dtype_bits(frit_dtype dt);        /* bits of the element scalar */
/* Name such as "f32", "i64x4", "f32*", "f32x4*local"; written into buf (>= 32 bytes). */
const char *frit_dtype_name(frit_dtype dt, char *buf, size_t bufsize);
/* Parses what frit_dtype_name writes; returns FRIT_OK or FRIT_ERR_PARSE. */
frit_status frit_dtype_parse(const char *s, size_t len, frit_dtype *out);

/* ---------- nodes ---------- */

/* A scalar constant: signed integers and bool in i, unsigned in u, floats in f.
 * Values are always normalised to their dtype (wrapped, rounded to f16/bf16/f32). */
typedef union frit_scalar {
  int64_t i;
  uint64_t u;
  double f;
} frit_scalar;

/* The small argument of a node. Fields not used by an op are zero. blob points to n int64
 * values (FRIT_BLOB_INTS) or to a NUL-terminated string of n bytes (FRIT_BLOB_STR); the
 * context copies it when the node is built. */
typedef enum frit_blob_kind { FRIT_BLOB_NONE, FRIT_BLOB_INTS, FRIT_BLOB_STR } frit_blob_kind;
typedef struct frit_arg {
  frit_scalar value;
  int64_t i0, i1;
  const void *blob;
  uint32_t n;
  uint32_t blob_kind; /* frit_blob_kind */
} frit_arg;

/* Builds (or finds) the node. Checks the source count against the op table, and the dtype
 * rules of ALU ops. Returns NULL with FRIT_ERR_INVALID on a violation. Owned by ctx. */
frit_uop *frit_uop_new(frit_ctx *ctx, frit_op op, frit_dtype dtype, frit_uop *const *src,
                       int nsrc, const frit_arg *arg);

uint32_t frit_uop_id(const frit_uop *u); /* creation order, a topological order */
frit_op frit_uop_op(const frit_uop *u);
frit_dtype frit_uop_dtype(const frit_uop *u);
int frit_uop_nsrc(const frit_uop *u);
frit_uop *frit_uop_src(const frit_uop *u, int i);
const frit_arg *frit_uop_arg(const frit_uop *u);
/* Inclusive value bounds found by range analysis. Exact for integers and bool (unknown values
 * get the dtype's limits; u64 beyond INT64_MAX is reported as INT64_MAX). Floats: -inf..inf
 * encoded as INT64_MIN..INT64_MAX unless constant. */
int64_t frit_uop_vmin(const frit_uop *u);
int64_t frit_uop_vmax(const frit_uop *u);

/* Convenience builders. All return NULL with an error on invalid input. */
frit_uop *frit_const_int(frit_ctx *ctx, frit_dtype dt, int64_t v);   /* any dtype: converted */
frit_uop *frit_const_float(frit_ctx *ctx, frit_dtype dt, double v); /* any dtype: converted */
frit_uop *frit_const(frit_ctx *ctx, frit_dtype dt, frit_scalar v);   /* v already normalised */
/* ALU op with the dtype inferred: comparisons give bool (with lanes), WHERE takes its
 * branches' dtype, the rest their operands' dtype. Operands must agree in dtype. */
frit_uop *frit_alu(frit_ctx *ctx, frit_op op, frit_uop *const *src, int nsrc);
frit_uop *frit_unary(frit_ctx *ctx, frit_op op, frit_uop *a);
frit_uop *frit_binary(frit_ctx *ctx, frit_op op, frit_uop *a, frit_uop *b);
frit_uop *frit_ternary(frit_ctx *ctx, frit_op op, frit_uop *a, frit_uop *b, frit_uop *c);
frit_uop *frit_cast(frit_ctx *ctx, frit_uop *x, frit_dtype dt);
/* Symbolic integer variable (i64) named `name` with inclusive bounds lo..hi. */
frit_uop *frit_var(frit_ctx *ctx, const char *name, int64_t lo, int64_t hi);
/* Loop index in [0, end) with an axis id and type. */
frit_uop *frit_range(frit_ctx *ctx, frit_uop *end, int64_t axis_id, frit_axis type);
frit_uop *frit_sink(frit_ctx *ctx, frit_uop *const *src, int nsrc);

/* ---------- rewriting ---------- */

/* A named C function that rules may call. A `build` function gives the replacement node or
 * NULL when the rule should not fire; a `pred` function answers a guard (nonzero: holds).
 * args are the rule's variable bindings in the order written at the call site. */
typedef frit_uop *(*frit_build_fn)(frit_ctx *ctx, frit_uop *root, frit_uop *const *args, int nargs);
typedef int (*frit_pred_fn)(frit_ctx *ctx, frit_uop *root, frit_uop *const *args, int nargs);
typedef struct frit_rule_fn {
  const char *name;
  frit_build_fn build; /* exactly one of build and pred is set */
  frit_pred_fn pred;
} frit_rule_fn;

typedef struct frit_ruleset frit_ruleset;

/* Parses rule text (notation in docs/rules.md), one rule per line. `fns` names the C functions
 * the rules may call; it must outlive the rule set. Returns NULL with FRIT_ERR_PARSE (message
 * with the line number) on bad text. Owned by ctx. `name` labels the set in messages. */
frit_ruleset *frit_ruleset_parse(frit_ctx *ctx, const char *name, const char *text,
                                 const frit_rule_fn *fns, int nfns);
/* Rewrites to a fixed point, bottom-up, memoised within the call: afterwards no rule of `rs`
 * matches any node reachable from the result. NULL on error (e.g. a build function failed). */
frit_uop *frit_rewrite(frit_ctx *ctx, frit_uop *root, const frit_ruleset *rs);
/* Rule statistics: rule count, a rule's source line text, and how often it has fired. */
int frit_ruleset_size(const frit_ruleset *rs);
const char *frit_ruleset_rule_text(const frit_ruleset *rs, int i);
uint64_t frit_ruleset_fired(const frit_ruleset *rs, int i);

/* ---------- symbolic simplifier ---------- */

/* Runs the simplifier rule sets (folding, identities, range-driven division/modulo and
 * comparison folding) to a fixed point. The result is equivalent for every variable value
 * within the variables' bounds. NULL on error. */
frit_uop *frit_simplify(frit_ctx *ctx, frit_uop *root);
/* The simplifier's rule set, for statistics. Built on first use; owned by ctx. */
const frit_ruleset *frit_simplifier_rules(frit_ctx *ctx);

/* ---------- reference interpreter ---------- */

/* Evaluates a scalar- or loop-level graph. `root` is a SINK of effects (stores run for their
 * side effect on `bufs`) or a value node (its value is written to *out; vectors use
 * out[0..lanes)). DEFINE_GLOBAL with arg.i0 = k reads/writes bufs[k] of bufsizes[k] elements,
 * laid out in the pointee dtype (frit_dtype_bits/8 bytes per scalar, packed).
 * DEFINE_VAR values come from vars (matched by name). Out-of-bounds access, an unbound
 * variable or an unsupported node is an error: FRIT_ERR_RUNTIME with a message. */
typedef struct frit_binding {
  const char *name;
  int64_t value;
} frit_binding;
frit_status frit_interpret(frit_ctx *ctx, frit_uop *root, void *const *bufs,
                           const size_t *bufsizes, int nbufs, const frit_binding *vars,
                           int nvars, frit_scalar *out);

/* Evaluates one ALU op (or CAST/BITCAST) on scalar operands of scalar dtype `dt` (the operand
 * dtype; for CAST, `dt` is the target and `src_dt` the source). Semantics are those of
 * docs/semantics.md: integer wraparound, truncating division, x/0 == 0, x%0 == x, shift counts
 * taken modulo the bit width. Shared by the interpreter and constant folding. */
frit_scalar frit_eval_alu(frit_op op, frit_dtype dt, const frit_scalar *src);
frit_scalar frit_eval_cast(frit_scalar v, frit_dtype from, frit_dtype to);
frit_scalar frit_eval_bitcast(frit_scalar v, frit_dtype from, frit_dtype to);
/* Normalises a value to a scalar dtype (wrap integers, round floats). */
frit_scalar frit_scalar_normalize(frit_scalar v, frit_dtype dt);

/* ---------- printers, textual IR, verifier ---------- */

/* Tree: one node per line, indented; a node already shown is referred to by its id. */
frit_status frit_print_tree(frit_ctx *ctx, frit_uop *root, FILE *out);
/* Listing: one line per node in topological order, C-like: "%5 = add(%3, %4) : i64". */
frit_status frit_print_listing(frit_ctx *ctx, frit_uop *root, FILE *out);
/* Textual IR: the listing's exact, parseable form. frit_parse_ir(frit_print_ir(g)) == g. */
frit_status frit_print_ir(frit_ctx *ctx, frit_uop *root, FILE *out);
/* Returns a malloc-free string owned by ctx (valid until ctx is freed), or NULL on failure. */
const char *frit_ir_to_string(frit_ctx *ctx, frit_uop *root);
/* Parses textual IR; the last node defined is the root. NULL with FRIT_ERR_PARSE on bad text. */
frit_uop *frit_parse_ir(frit_ctx *ctx, const char *text);
/* Checks every reachable node: source counts, source and result dtypes, argument kinds, RANGE
 * ends being integers, effects closed by END. FRIT_ERR_VERIFY with a message naming the node. */
frit_status frit_verify(frit_ctx *ctx, frit_uop *root);

/* Renders an integer/bool expression graph in C syntax (variables by name). */
const char *frit_render_c_expr(frit_ctx *ctx, frit_uop *root);

#ifdef __cplusplus
}
#endif
#endif
