/* frit: an optimizing tensor compiler. This is the whole public C API.
 *
 * Conventions, as in lua.h:
 *  - Every object belongs to a frit_ctx. Nothing is freed separately: frit_ctx_free frees it all.
 *  - Handles are opaque. A frit_uop is immutable and hash-consed: two handles are equal exactly
 *    when the nodes are equal (same op, dtype, sources and argument).
 *  - Functions that can fail on user input return NULL or a frit_status other than FRIT_OK and
 *    leave a message in the context (frit_error). The context stays usable afterwards.
 *  - The library never exits and never aborts on user error; only a broken internal invariant
 *    aborts, naming file and line.
 *  - Threads: a ctx and everything made from it (nodes, tensors, programs, its error message)
 *    is used by one thread at a time; serialise calls if threads share one. Different ctxs are
 *    independent and may be used by different threads at once (programs share a locked kernel
 *    thread pool; see docs/runtime.md, "Threads"). */
#ifndef FRIT_H
#define FRIT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------- version ---------- */

/* The one place the version is written: the Makefile (soname, frit.pc), the Python package
 * (setup.py, frit.__version__) all read these three lines. MAJOR is the soname's number. */
#define FRIT_VERSION_MAJOR 0
#define FRIT_VERSION_MINOR 1
#define FRIT_VERSION_PATCH 0
/* The library's version as "MAJOR.MINOR.PATCH": the one actually loaded, which may differ from
 * the header a program was compiled against. */
const char *frit_version(void);

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

/* Collectives across ranks (src/dist): arg.i0 and arg.i1 of COLLECTIVE. */
typedef enum frit_coll_kind {
  FRIT_COLL_ALL_REDUCE, FRIT_COLL_ALL_GATHER, FRIT_COLL_REDUCE_SCATTER,
  FRIT_COLL_BROADCAST, FRIT_COLL_SENDRECV, FRIT_COLL_KIND_COUNT_
} frit_coll_kind;
typedef enum frit_coll_op { FRIT_COLL_SUM, FRIT_COLL_PROD, FRIT_COLL_MAX, FRIT_COLL_MIN, FRIT_COLL_OP_COUNT_ } frit_coll_op;

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
  /* after the real floats, so that F16..F64 stays the range of real floats */
  FRIT_C64, FRIT_C128, /* complex: interleaved (re, im) of f32 / f64, as C's float/double _Complex */
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
int frit_dtype_is_float(frit_dtype dt);   /* real floats only */
int frit_dtype_is_complex(frit_dtype dt);
/* The real float kind of a complex dtype's parts (c64 -> f32, c128 -> f64); other dtypes: itself. */
frit_dtype frit_dtype_real_part(frit_dtype dt);
int frit_dtype_is_bool(frit_dtype dt);
int frit_dtype_bits(frit_dtype dt);        /* bits of the element scalar */
/* Name such as "f32", "i64x4", "f32*", "f32x4*local"; written into buf (>= 32 bytes). */
const char *frit_dtype_name(frit_dtype dt, char *buf, size_t bufsize);
/* Parses what frit_dtype_name writes; returns FRIT_OK or FRIT_ERR_PARSE. */
frit_status frit_dtype_parse(const char *s, size_t len, frit_dtype *out);

/* ---------- nodes ---------- */

/* A scalar constant: signed integers and bool in i, unsigned in u, floats in f, complex in c
 * (c.re shares its storage with f). Values are always normalised to their dtype (wrapped,
 * rounded to f16/bf16/f32; both parts of c64 rounded to f32). Only complex dtypes read c.im:
 * nodes of other dtypes hash and compare the first 8 bytes alone, so a constructor need not
 * clear c.im. */
typedef union frit_scalar {
  int64_t i;
  uint64_t u;
  double f;
  struct { double re, im; } c;
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
/* The result dtype of an ALU op on operands of `operand` (for WHERE: the branches'): bool for
 * comparisons, the parts' float for REAL/IMAG, the complex of the parts for COMPLEX. */
frit_dtype frit_alu_result_dtype(frit_op op, frit_dtype operand);
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
/* Returns a malloc-free string owned by ctx (valid until ctx is freed), or NULL on failure.
 * Asking again for the same root returns the same string (the ctx does not grow). */
const char *frit_ir_to_string(frit_ctx *ctx, frit_uop *root);
/* Parses textual IR; the last node defined is the root. NULL with FRIT_ERR_PARSE on bad text. */
frit_uop *frit_parse_ir(frit_ctx *ctx, const char *text);
/* Checks every reachable node: source counts, source and result dtypes, argument kinds, RANGE
 * ends being integers, effects closed by END. FRIT_ERR_VERIFY with a message naming the node. */
frit_status frit_verify(frit_ctx *ctx, frit_uop *root);

/* Renders an integer/bool expression graph in C syntax (variables by name). */
const char *frit_render_c_expr(frit_ctx *ctx, frit_uop *root);

/* ================= tensors (tensor frontend) =================
 * A frit_tensor is a lazy, immutable tensor value: a tensor-level UOp graph node with a shape
 * (dims are i64 UOps: CONST, or symbolic expressions of DEFINE_VARs) and an element dtype.
 * Semantics follow numpy: broadcasting, type promotion (numpy 2 / NEP 50 for arrays; bf16 ranks
 * like f16), negative axes, and the same results. Every function returns NULL on bad input with
 * FRIT_ERR_INVALID and a message naming the op, the shapes and the dtypes. Handles belong to ctx.
 * Passing a NULL tensor returns NULL and keeps the earlier error. */
typedef struct frit_tensor frit_tensor;

#define FRIT_MAX_DIMS 16
#define FRIT_ALL_AXES (-1)         /* naxes value meaning "every axis" */
#define FRIT_NO_AXIS INT32_MIN     /* "axis=None" where numpy allows it (flatten) */
#define FRIT_SLICE_DEFAULT INT64_MIN /* a slice bound left out (numpy's None) */

frit_uop *frit_tensor_uop(const frit_tensor *t);
/* The tensor view of a tensor-level node (checks it has a shape); NULL with an error if not. */
frit_tensor *frit_tensor_of(frit_ctx *ctx, frit_uop *u);
frit_dtype frit_tensor_dtype(const frit_tensor *t);
int frit_tensor_ndim(const frit_tensor *t);
frit_uop *frit_tensor_dim(const frit_tensor *t, int axis);        /* i64 node */
int64_t frit_tensor_dim_static(const frit_tensor *t, int axis);  /* -1 when symbolic */
/* Shape as text, e.g. "(4, n, 3)"; owned by ctx, valid until the next string-returning call. */
const char *frit_tensor_shape_str(frit_ctx *ctx, const frit_tensor *t);

/* Inputs: a named buffer bound when the program runs. Dims may be symbolic i64 nodes. Inputs
 * are numbered in creation order within the ctx; that is their position in frit_program_run. */
frit_tensor *frit_input(frit_ctx *ctx, const char *name, frit_dtype dt, int ndim, const int64_t *dims);
frit_tensor *frit_input_sym(frit_ctx *ctx, const char *name, frit_dtype dt, int ndim, frit_uop *const *dims);

/* Creation */
frit_tensor *frit_scalar_f(frit_ctx *ctx, frit_dtype dt, double v);  /* 0-d */
frit_tensor *frit_scalar_i(frit_ctx *ctx, frit_dtype dt, int64_t v); /* 0-d */
frit_tensor *frit_full(frit_ctx *ctx, frit_dtype dt, int ndim, const int64_t *dims, double v);
frit_tensor *frit_full_i(frit_ctx *ctx, frit_dtype dt, int ndim, const int64_t *dims, int64_t v);
frit_tensor *frit_full_sym(frit_ctx *ctx, frit_dtype dt, int ndim, frit_uop *const *dims, double v);
frit_tensor *frit_zeros(frit_ctx *ctx, frit_dtype dt, int ndim, const int64_t *dims);
frit_tensor *frit_ones(frit_ctx *ctx, frit_dtype dt, int ndim, const int64_t *dims);
frit_tensor *frit_arange(frit_ctx *ctx, double start, double stop, double step, frit_dtype dt);
frit_tensor *frit_linspace(frit_ctx *ctx, double start, double stop, int64_t num, int endpoint, frit_dtype dt);
frit_tensor *frit_eye(frit_ctx *ctx, int64_t n, int64_t m, int64_t k, frit_dtype dt);
/* Counter-based random numbers (Philox-4x32-10): element i of a call is a pure function of
 * (seed, i), the same on every backend. uniform in [lo, hi); normal via Box-Muller. */
frit_tensor *frit_rand_uniform(frit_ctx *ctx, uint64_t seed, frit_dtype dt, int ndim, const int64_t *dims,
                               double lo, double hi);
frit_tensor *frit_rand_normal(frit_ctx *ctx, uint64_t seed, frit_dtype dt, int ndim, const int64_t *dims,
                              double mean, double stddev);
frit_tensor *frit_rand_int(frit_ctx *ctx, uint64_t seed, frit_dtype dt, int ndim, const int64_t *dims,
                           int64_t lo, int64_t hi);

/* Elementwise */
typedef enum frit_ufunc {
  FRIT_UF_NEG, FRIT_UF_ABS, FRIT_UF_SIGN, FRIT_UF_SQRT, FRIT_UF_RSQRT, FRIT_UF_RECIPROCAL,
  FRIT_UF_EXP, FRIT_UF_EXP2, FRIT_UF_LOG, FRIT_UF_LOG2, FRIT_UF_LOG1P, FRIT_UF_EXPM1,
  FRIT_UF_SIN, FRIT_UF_COS, FRIT_UF_TAN, FRIT_UF_ASIN, FRIT_UF_ACOS, FRIT_UF_ATAN,
  FRIT_UF_SINH, FRIT_UF_COSH, FRIT_UF_TANH, FRIT_UF_SIGMOID, FRIT_UF_RELU, FRIT_UF_GELU,
  FRIT_UF_ERF, FRIT_UF_FLOOR, FRIT_UF_CEIL, FRIT_UF_ROUND, FRIT_UF_TRUNC, FRIT_UF_ISNAN,
  FRIT_UF_ISINF, FRIT_UF_LOGICAL_NOT, FRIT_UF_BITWISE_NOT,
  FRIT_UF_ACOSH, FRIT_UF_ASINH, FRIT_UF_ATANH, FRIT_UF_CBRT, FRIT_UF_RINT, FRIT_UF_DEG2RAD,
  FRIT_UF_RAD2DEG, FRIT_UF_SIGNBIT, FRIT_UF_COUNT_
} frit_ufunc;
typedef enum frit_bfunc {
  FRIT_BF_ADD, FRIT_BF_SUB, FRIT_BF_MUL, FRIT_BF_TRUEDIV, FRIT_BF_FLOORDIV, FRIT_BF_REMAINDER,
  FRIT_BF_POW, FRIT_BF_MINIMUM, FRIT_BF_MAXIMUM, FRIT_BF_ATAN2, FRIT_BF_LT, FRIT_BF_LE,
  FRIT_BF_GT, FRIT_BF_GE, FRIT_BF_EQ, FRIT_BF_NE, FRIT_BF_LOGICAL_AND, FRIT_BF_LOGICAL_OR,
  FRIT_BF_LOGICAL_XOR, FRIT_BF_BITWISE_AND, FRIT_BF_BITWISE_OR, FRIT_BF_BITWISE_XOR,
  FRIT_BF_LSHIFT, FRIT_BF_RSHIFT,
  FRIT_BF_COPYSIGN, FRIT_BF_HYPOT, FRIT_BF_LOGADDEXP, FRIT_BF_LOGADDEXP2, FRIT_BF_NEXTAFTER,
  FRIT_BF_FMOD, FRIT_BF_FMAX, FRIT_BF_FMIN, FRIT_BF_COUNT_
} frit_bfunc;
const char *frit_ufunc_name(frit_ufunc f); /* short name: "neg", "abs", "sqrt" ... */
const char *frit_bfunc_name(frit_bfunc f);
frit_tensor *frit_unary_t(frit_ctx *ctx, frit_ufunc f, frit_tensor *x);
frit_tensor *frit_binary_t(frit_ctx *ctx, frit_bfunc f, frit_tensor *a, frit_tensor *b);
frit_tensor *frit_where(frit_ctx *ctx, frit_tensor *cond, frit_tensor *a, frit_tensor *b);
frit_tensor *frit_clip(frit_ctx *ctx, frit_tensor *x, frit_tensor *lo, frit_tensor *hi); /* lo/hi may be NULL */
frit_tensor *frit_astype(frit_ctx *ctx, frit_tensor *x, frit_dtype dt);
/* Complex parts, as numpy: real/imag give the parts' float dtype (real input: x, zeros), conj,
 * angle = atan2(imag, real), and complex(re, im) = re + im*1j (c64 for parts of <= 32-bit
 * floats, else c128). Complex tensors otherwise take the ufuncs numpy has complex loops for
 * (others fail naming the op), sum/prod/mean, matmul, where, astype and every movement op. */
frit_tensor *frit_real(frit_ctx *ctx, frit_tensor *x);
frit_tensor *frit_imag(frit_ctx *ctx, frit_tensor *x);
frit_tensor *frit_conj(frit_ctx *ctx, frit_tensor *x);
frit_tensor *frit_angle(frit_ctx *ctx, frit_tensor *x);
frit_tensor *frit_complex_t(frit_ctx *ctx, frit_tensor *re, frit_tensor *im);
/* numpy's result_type of two array dtypes. */
frit_dtype frit_promote(frit_dtype a, frit_dtype b);

/* Movement */
frit_tensor *frit_reshape(frit_ctx *ctx, frit_tensor *x, int ndim, const int64_t *dims); /* one -1 allowed */
frit_tensor *frit_reshape_sym(frit_ctx *ctx, frit_tensor *x, int ndim, frit_uop *const *dims);
frit_tensor *frit_permute(frit_ctx *ctx, frit_tensor *x, const int *perm);
frit_tensor *frit_transpose(frit_ctx *ctx, frit_tensor *x); /* reverses the axes */
frit_tensor *frit_broadcast_to(frit_ctx *ctx, frit_tensor *x, int ndim, const int64_t *dims);
frit_tensor *frit_broadcast_to_sym(frit_ctx *ctx, frit_tensor *x, int ndim, frit_uop *const *dims);
frit_tensor *frit_squeeze(frit_ctx *ctx, frit_tensor *x, const int *axes, int naxes); /* naxes 0: all size-1 */
frit_tensor *frit_unsqueeze(frit_ctx *ctx, frit_tensor *x, int axis);
/* numpy's pad modes. Any width works with every mode (reflect/symmetric/wrap repeat
 * periodically, as numpy's repeated application does), also on symbolic dims. */
typedef enum frit_pad_mode {
  FRIT_PAD_CONSTANT, FRIT_PAD_REFLECT, FRIT_PAD_EDGE, FRIT_PAD_SYMMETRIC, FRIT_PAD_WRAP
} frit_pad_mode;
frit_tensor *frit_pad(frit_ctx *ctx, frit_tensor *x, const int64_t *before, const int64_t *after,
                      frit_pad_mode mode, double value);
/* x[start:stop:step] per axis (arrays of ndim; FRIT_SLICE_DEFAULT for a left-out bound). Every
 * bound is clamped into the axis as in numpy (static and symbolic dims alike): out-of-range
 * bounds never read outside x, and empty ranges give empty axes. */
frit_tensor *frit_slice(frit_ctx *ctx, frit_tensor *x, const int64_t *start, const int64_t *stop,
                        const int64_t *step);
frit_tensor *frit_flip(frit_ctx *ctx, frit_tensor *x, const int *axes, int naxes); /* naxes -1: all */
frit_tensor *frit_concat(frit_ctx *ctx, frit_tensor *const *xs, int n, int axis);
frit_tensor *frit_stack(frit_ctx *ctx, frit_tensor *const *xs, int n, int axis);
frit_tensor *frit_repeat(frit_ctx *ctx, frit_tensor *x, int64_t repeats, int axis); /* FRIT_NO_AXIS: flat */
frit_tensor *frit_tile(frit_ctx *ctx, frit_tensor *x, int nreps, const int64_t *reps);
/* numpy roll: element i of each axis moves to (i + shift) mod dim (static or symbolic dims).
 * n (shift, axis) pairs; shifts on the same axis add up. axes NULL: x flattened, rolled by the
 * sum of the shifts, reshaped back. */
frit_tensor *frit_roll(frit_ctx *ctx, frit_tensor *x, int n, const int64_t *shifts, const int *axes);
/* Marks x to be materialised in memory (a kernel boundary), as a hint to the scheduler. */
frit_tensor *frit_contiguous(frit_ctx *ctx, frit_tensor *x);

/* Reductions. axes/naxes: naxes == FRIT_ALL_AXES reduces everything. ddof: VAR and STD only.
 * ARGMAX/ARGMIN take exactly one axis, or FRIT_ALL_AXES (flattened index), and give i64. */
typedef enum frit_rfunc {
  FRIT_RF_SUM, FRIT_RF_PROD, FRIT_RF_MAX, FRIT_RF_MIN, FRIT_RF_MEAN, FRIT_RF_VAR, FRIT_RF_STD,
  FRIT_RF_ARGMAX, FRIT_RF_ARGMIN, FRIT_RF_ANY, FRIT_RF_ALL, FRIT_RF_LOGSUMEXP, FRIT_RF_COUNT_
} frit_rfunc;
frit_tensor *frit_reduce(frit_ctx *ctx, frit_rfunc f, frit_tensor *x, const int *axes, int naxes,
                         int keepdims, double ddof);
frit_tensor *frit_cumsum(frit_ctx *ctx, frit_tensor *x, int axis); /* FRIT_NO_AXIS: flattened */
frit_tensor *frit_cumprod(frit_ctx *ctx, frit_tensor *x, int axis); /* numpy dtypes as cumsum */
/* numpy tril/triu: zeros above (tril) or below (triu) diagonal k of the last two axes. */
frit_tensor *frit_tril(frit_ctx *ctx, frit_tensor *x, int64_t k);
frit_tensor *frit_triu(frit_ctx *ctx, frit_tensor *x, int64_t k);

/* Linear algebra and neural-net ops */
frit_tensor *frit_matmul(frit_ctx *ctx, frit_tensor *a, frit_tensor *b); /* numpy matmul rules */
frit_tensor *frit_dot(frit_ctx *ctx, frit_tensor *a, frit_tensor *b);    /* numpy dot rules */
/* frit.linalg (numpy.linalg semantics, batched over leading dims; ints and bool compute in f64,
 * f16/bf16 are rejected as in numpy). Each builds one explicit kernel per call, one point per
 * matrix. Numerical failure is not an error at build time: solve/inv give NaN for a singular
 * matrix (exact zero pivot), cholesky NaN when not positive definite; det gives 0 and slogdet
 * (0, -inf) for a singular matrix. docs/linalg.md has the details and tolerances. */
frit_tensor *frit_linalg_solve(frit_ctx *ctx, frit_tensor *a, frit_tensor *b); /* a (..., M, M), b (..., M, K) */
frit_tensor *frit_linalg_inv(frit_ctx *ctx, frit_tensor *a);
frit_tensor *frit_linalg_det(frit_ctx *ctx, frit_tensor *a);
frit_status frit_linalg_slogdet(frit_ctx *ctx, frit_tensor *a, frit_tensor **sign, frit_tensor **logabsdet);
frit_tensor *frit_linalg_cholesky(frit_ctx *ctx, frit_tensor *a, int upper); /* lower triangle of a is read */
/* mode 0 reduced (Q (..., M, K), R (..., K, N), K = min(M, N)), 1 complete, 2 R only (*q NULL). */
frit_status frit_linalg_qr(frit_ctx *ctx, frit_tensor *a, int mode, frit_tensor **q, frit_tensor **r);
/* Symmetric eigendecomposition from the lower triangle (cyclic Jacobi): w ascending (..., M),
 * v (..., M, M) with a = v diag(w) v^T; v may be NULL for eigenvalues only. */
frit_status frit_linalg_eigh(frit_ctx *ctx, frit_tensor *a, frit_tensor **w, frit_tensor **v);
/* SVD (one-sided Jacobi): s descending (..., K); with u and vh non-NULL also u (..., M, M or K)
 * and vh (..., N or K, N) (full_matrices selects the first). */
frit_status frit_linalg_svd(frit_ctx *ctx, frit_tensor *a, int full_matrices, frit_tensor **u, frit_tensor **s,
                            frit_tensor **vh);
/* numpy diagonal (diagonal as the last axis) and trace (sum of it in numpy's sum dtype). */
frit_tensor *frit_diagonal(frit_ctx *ctx, frit_tensor *x, int64_t offset, int axis1, int axis2);
/* x: (N, C, H, W), w: (O, C/groups, KH, KW), bias: (O) or NULL. */
frit_tensor *frit_conv2d(frit_ctx *ctx, frit_tensor *x, frit_tensor *w, frit_tensor *bias,
                         const int64_t stride[2], const int64_t padding[2], const int64_t dilation[2],
                         int64_t groups);
/* Pooling over the last two axes; padding with -inf (max) or excluded from the count (avg:
 * count_include_pad = 0). */
frit_tensor *frit_max_pool2d(frit_ctx *ctx, frit_tensor *x, const int64_t kernel[2], const int64_t stride[2],
                             const int64_t padding[2]);
frit_tensor *frit_avg_pool2d(frit_ctx *ctx, frit_tensor *x, const int64_t kernel[2], const int64_t stride[2],
                             const int64_t padding[2]);
frit_tensor *frit_softmax(frit_ctx *ctx, frit_tensor *x, int axis);
frit_tensor *frit_log_softmax(frit_ctx *ctx, frit_tensor *x, int axis);
/* numpy take (axis FRIT_NO_AXIS: flattened) and take_along_axis. Negative indices count from
 * the end; out-of-range indices are clamped (kernels cannot raise). */
frit_tensor *frit_take(frit_ctx *ctx, frit_tensor *x, frit_tensor *idx, int axis);
frit_tensor *frit_take_along_axis(frit_ctx *ctx, frit_tensor *x, frit_tensor *idx, int axis);
frit_tensor *frit_one_hot(frit_ctx *ctx, frit_tensor *idx, int64_t num_classes, frit_dtype dt);
/* Functional scatter along axis 0: a copy of x in which, for j = 0, 1, ... in order,
 * out[idx[j], ...] = combine(out[idx[j], ...], updates[j, ...]). idx is 1-D of any integer dtype
 * (negatives count from the end, out-of-range values are clamped, as in frit_take); updates are
 * cast to x's dtype and broadcast to (len(idx),) + x.shape[1:]. mode: FRIT_ATOMIC_ADD
 * (duplicates accumulate; logical OR on bool), FRIT_ATOMIC_MIN / FRIT_ATOMIC_MAX (NaN
 * propagates; AND / OR on bool), FRIT_ATOMIC_XCHG (set: the last duplicate in index order
 * wins). Other index forms reduce to this one by flattening the indexed axes of x. */
frit_tensor *frit_scatter(frit_ctx *ctx, frit_tensor *x, frit_tensor *idx, frit_tensor *updates,
                          frit_atomic_op mode);
/* ---------- the world of ranks: collectives (src/dist, docs/distributed.md) ----------
 * A process joins a world of ranks once (MPI, loaded at run time; see frit_dist_init) and every
 * ctx of the process sees it. A collective is an op like any other: eager or compiled, it
 * exchanges the values of the ranks, which must run the same collectives in the same order
 * (checked: a disagreement in kind, dtype or shape is an error on every rank, and a rank that
 * never arrives is an error after $FRIT_DIST_TIMEOUT seconds, never a hang). One rank: each
 * collective is the identity (all_gather and reduce_scatter included). In a compiled CPU program
 * a collective moves on an exchange thread while the kernels after it run, and a kernel that
 * touches its memory waits for it ($FRIT_DIST_OVERLAP=0: each at its step); a run returns only
 * once all have finished. */
/* mode 0: MPI when the process was started by an MPI launcher (mpirun), else a world of one
 * rank without MPI; mode 1: MPI always. FRIT_ERR_RUNTIME naming the reason when MPI is absent. */
frit_status frit_dist_init(frit_ctx *ctx, int mode);
int frit_dist_rank(void); /* 0 before init */
int frit_dist_size(void); /* 1 before init */
frit_status frit_dist_barrier(frit_ctx *ctx);
/* Leaves MPI (if frit joined it); collectives fail afterwards. Call once, before the process exits. */
frit_status frit_dist_finalize(frit_ctx *ctx);
/* f: SUM, PROD, MAX, MIN (NaN wins, as numpy) or MEAN (integers give f64). Bool: SUM/MAX is any,
 * PROD/MIN all. The shape and dtype are x's. */
frit_tensor *frit_all_reduce(frit_ctx *ctx, frit_tensor *x, frit_rfunc f);
/* The ranks' x concatenated along axis, in rank order (every rank's x of the same shape). */
frit_tensor *frit_all_gather(frit_ctx *ctx, frit_tensor *x, int axis);
/* The reduction over ranks of x, cut along axis (static, divisible by the size) into one block a
 * rank: this rank's block. */
frit_tensor *frit_reduce_scatter(frit_ctx *ctx, frit_tensor *x, frit_rfunc f, int axis);
/* Root's x on every rank. */
frit_tensor *frit_broadcast_from(frit_ctx *ctx, frit_tensor *x, int root);
/* Sends x to rank dest and gives what rank source sent (its x, of the same shape and dtype);
 * -1: no partner (nothing sent; zeros received). A ring shift is dest = r+1, source = r-1. */
frit_tensor *frit_sendrecv(frit_ctx *ctx, frit_tensor *x, int dest, int source);

/* Sorting (src/tensor/sort.c): stable along `axis` (FRIT_NO_AXIS: flattened), ascending or
 * descending (equal elements keep their order either way); NaNs last in both directions, -0.0
 * equal to 0.0. Every bool/int/uint/float dtype. argsort gives i64 positions along the axis.
 * searchsorted: for each element of v, the i64 insertion point into the sorted 1-d a (left: the
 * first i with a[i] >= v; right: the first with a[i] > v; in the same total order), with the
 * optional i64 permutation `sorter` (a[sorter] sorted; NULL: none). An unsorted a gives some
 * index (as numpy: undefined). */
frit_tensor *frit_sort(frit_ctx *ctx, frit_tensor *x, int axis, int descending);
frit_tensor *frit_argsort(frit_ctx *ctx, frit_tensor *x, int axis, int descending);
frit_tensor *frit_searchsorted(frit_ctx *ctx, frit_tensor *a, frit_tensor *v, int right, frit_tensor *sorter);

/* ================= shader-like code: explicit kernels and host loops =================
 * Builders record code in program order; the ctx holds the open structure (one kernel at a time,
 * loops and ifs nested inside it or, outside kernels, host loops). docs/control.md has the model.
 *
 * Values inside a kernel are 0-d tensors ("kernel scalars"): the kernel's indices, elements read
 * from tensors, variables, and every elementwise frit_* op over them (numpy promotion rules). A
 * kernel scalar is only valid inside the kernel that made it. Everything returns NULL / an error
 * status on bad input (FRIT_ERR_INVALID naming the op, shapes and dtypes) and on calls in the
 * wrong context (e.g. frit_kernel_store outside a kernel, frit_break outside a loop). */

/* Opens a kernel over the index space (ndim 0..FRIT_MAX_DIMS i64 dims, static or symbolic).
 * idx[a] receives the i64 index along axis a. name may be NULL. The body's points run in an
 * unspecified order, possibly concurrently (as on a GPU): two points writing one element, or one
 * writing what another reads, is a race (some value results, never undefined behaviour) unless
 * atomics are used. Within one point, effects happen in program order. */
frit_status frit_kernel_begin(frit_ctx *ctx, const char *name, int ndim, frit_uop *const *dims, frit_tensor **idx);
frit_status frit_kernel_begin_static(frit_ctx *ctx, const char *name, int ndim, const int64_t *dims, frit_tensor **idx);
/* Element t[idx...] (nidx == rank of t; integer kernel scalars or 0-d tensors), read at this
 * point in program order: after a store by this point to that element it gives the stored value.
 * t may be any tensor (lazy expressions fuse into the kernel). Out-of-range indices follow the
 * compile option `bounds` (default: clamped into range per axis). */
frit_tensor *frit_kernel_load(frit_ctx *ctx, frit_tensor *t, int nidx, frit_tensor *const *idx);
/* t[idx...] = value (value converted to t's dtype, numpy assignment casting). The kernel writes
 * a new version of t (see frit_kernel_end); t itself, a value, is unchanged. */
frit_status frit_kernel_store(frit_ctx *ctx, frit_tensor *t, int nidx, frit_tensor *const *idx, frit_tensor *value);
/* Atomic read-modify-write of t[idx...] with value (converted to t's dtype); returns the old
 * value. ADD/MIN/MAX on every dtype (floats by compare-and-swap: exact under contention, in an
 * unspecified order; MIN/MAX propagate NaN), AND/OR/XOR on integers and bool, XCHG on all. */
frit_tensor *frit_kernel_atomic(frit_ctx *ctx, frit_atomic_op op, frit_tensor *t, int nidx, frit_tensor *const *idx,
                                frit_tensor *value);
/* A variable of this kernel point (a register): created with init converted to dt; get reads
 * its current value (at this point in program order), set assigns. Returns the var id (>= 0) or
 * -1 on error. Variables carry values across iterations of loops inside the kernel. */
int frit_kernel_var(frit_ctx *ctx, frit_dtype dt, frit_tensor *init);
frit_tensor *frit_kernel_var_get(frit_ctx *ctx, int var);
frit_status frit_kernel_var_set(frit_ctx *ctx, int var, frit_tensor *value);
/* Closes the kernel. Returns the number of tensors it wrote (>= 0; -1 on error); then
 * frit_kernel_written(ctx, k, &old, &new_) gives the k-th written tensor (first-store order) and
 * its version after the kernel. Valid until the next frit_kernel_begin. */
int frit_kernel_end(frit_ctx *ctx);
frit_status frit_kernel_written(frit_ctx *ctx, int k, frit_tensor **old, frit_tensor **new_);

/* Control flow. Inside a kernel these build per-point control flow (loops with dynamic trip
 * counts, if/else on per-point conditions, break/continue of the innermost loop). Outside a
 * kernel, frit_loop_begin/end is a host loop (a loop of kernel launches, below).
 * Loop: i = start; while (step > 0 ? i < end : i > end) { body; i += step } with i64 start,
 * end, step (0-d integer tensors or kernel scalars; step 0 is a run-time error). *index gets i. */
frit_status frit_kernel_loop_begin(frit_ctx *ctx, frit_tensor *start, frit_tensor *end, frit_tensor *step,
                                   frit_tensor **index);
frit_status frit_kernel_loop_end(frit_ctx *ctx);
frit_status frit_kernel_if_begin(frit_ctx *ctx, frit_tensor *cond); /* cond != 0 */
frit_status frit_kernel_else(frit_ctx *ctx);                        /* once, between begin and end */
frit_status frit_kernel_if_end(frit_ctx *ctx);
frit_status frit_kernel_break(frit_ctx *ctx);
frit_status frit_kernel_continue(frit_ctx *ctx);

/* Host loops: the loop runs on the host, its body (any tensor code, explicit kernels included)
 * as launches per iteration. Loop-carried values are explicit: init[k] are the values entering
 * the loop; carry[k] receives a placeholder standing for the value at the start of each
 * iteration (use it in the body); frit_host_loop_end takes next[k], the value at the end of the
 * body (same shape and dtype as init[k]), and an optional 0-d bool `stop` (NULL: none) evaluated
 * after each iteration: true leaves the loop (a break after the iteration). result[k] receives the
 * value after the loop. start/end/step are 0-d integer tensors (symbolic expressions or values
 * computed by the program) evaluated when the loop starts. Host loops nest. A value computed in
 * the body is only valid in the body. */
frit_status frit_host_loop_begin(frit_ctx *ctx, frit_tensor *start, frit_tensor *end, frit_tensor *step, int ncarry,
                                 frit_tensor *const *init, frit_tensor **index, frit_tensor **carry);
frit_status frit_host_loop_end(frit_ctx *ctx, frit_tensor *const *next, frit_tensor *stop, frit_tensor **result);

/* Index arrays: out[a] (ndim entries) is the i64 tensor of `dims`'s shape counting along axis a
 * (numpy's indices, as a tuple). */
frit_status frit_indices(frit_ctx *ctx, int ndim, frit_uop *const *dims, frit_tensor **out);

/* ================= programs (compile and run) ================= */
typedef struct frit_program frit_program;

/* ---------- autodiff (src/autodiff, docs/autodiff.md) ----------
 * Reverse mode as a graph transform: the gradients are new tensor nodes owned by ctx, built from
 * the same ops as any program (so they compile, fuse, and differentiate again).
 * frit_vjp: grads[i] = the gradient of sum(out * seed) with respect to wrt[i], of wrt[i]'s shape
 * and dtype. seed is broadcast to out's shape and cast to its dtype; NULL means ones. out and
 * every wrt must be real float tensors; wrt may be inputs or any intermediate tensor. An input
 * that out does not depend on gets zeros. Fails (naming the op) where a gradient is not
 * defined or not implemented: complex intermediates, explicit kernels and host loops. */
frit_status frit_vjp(frit_ctx *ctx, frit_tensor *out, frit_tensor *seed, int nwrt, frit_tensor *const *wrt,
                     frit_tensor **grads);
/* frit_vjp of a 0-d out with seed 1: the gradient of a scalar. */
frit_status frit_grad(frit_ctx *ctx, frit_tensor *out, int nwrt, frit_tensor *const *wrt, frit_tensor **grads);
/* A gradient rule for a tensor, used by frit_vjp instead of differentiating the graph that
 * computes it (an explicit kernel has no graph to differentiate; a formula may be cheaper or
 * more stable). Given out's cotangent g (out's shape and dtype), the rule sets grads[i] to the
 * cotangent of ins[i] (ins[i]'s shape and dtype) or NULL for zero, and returns FRIT_OK or an
 * error left in ctx. params (copied, at most 8) are passed back to it. Attaching a rule to the
 * same node again replaces the earlier one; nin 0 makes out a constant for frit_vjp. */
typedef frit_status (*frit_vjp_rule)(frit_ctx *ctx, const int64_t *params, frit_tensor *out, frit_tensor *g,
                                     int nin, frit_tensor *const *ins, frit_tensor **grads);
frit_status frit_set_vjp(frit_ctx *ctx, frit_tensor *out, int nin, frit_tensor *const *ins, frit_vjp_rule rule,
                         const int64_t *params, int nparams);
/* Gradients through host loops store the carried values entering every n-th iteration and
 * recompute the others in the reverse pass: n = 1 stores them all (memory T carries, no
 * recomputation), larger n stores T/n and recomputes about T - T/n iterations. n = 0 (default):
 * $FRIT_LOOP_CHECKPOINT if set, else ceil(sqrt(T)). Read when frit_vjp runs. */
frit_status frit_set_loop_checkpoint(frit_ctx *ctx, int n);
/* x's value as a new node (never hash-consed with another): for frit_set_vjp on a value that is
 * one of the rule's inputs. An identity once compiled. */
frit_tensor *frit_identity(frit_ctx *ctx, frit_tensor *x);
/* x's value, through which no gradient flows (an identity once compiled). */
frit_tensor *frit_stop_gradient(frit_ctx *ctx, frit_tensor *x);

typedef struct frit_compile_opts {
  const char *cc;        /* C compiler; NULL: $FRIT_CC or "cc" */
  const char *cflags;    /* NULL: $FRIT_CFLAGS or "-O3 -march=native -fno-math-errno ..." */
  const char *cache_dir; /* NULL: $FRIT_CACHE_DIR or $XDG_CACHE_HOME/frit or ~/.cache/frit */
  int threads;           /* 0: $FRIT_THREADS or the number of online CPUs */
  int no_fusion;         /* 1: every op its own kernel (the unfused reference schedule) */
  int interpret;         /* 1: run kernels with the reference interpreter instead of compiling */
  int bounds;            /* out-of-range indices in explicit kernels: FRIT_BOUNDS_CLAMP (0, default),
                            FRIT_BOUNDS_CHECK (run-time error naming kernel, tensor and axis),
                            FRIT_BOUNDS_UNCHECKED (no check: out of range is undefined) */
  const char *device;    /* where the kernels run: NULL: $FRIT_DEVICE or "cpu" (the host, C compiled by
                            cc); "opencl" (the first OpenCL GPU, else any OpenCL device); "cuda"
                            (device 0, NVRTC + the driver API). A device
                            program takes and returns host memory like any other: the run copies its
                            inputs in and its outputs out. FRIT_ERR_RUNTIME naming the backend when it
                            is unavailable (no driver, no device). */
} frit_compile_opts;
enum { FRIT_BOUNDS_CLAMP = 0, FRIT_BOUNDS_CHECK = 1, FRIT_BOUNDS_UNCHECKED = 2 };
/* A KERNEL node's arg.i0 for frit's own kernels whose indices are in range by construction
 * (the sort's scatter): no bounds policy applies to them. */
enum { FRIT_KERNEL_TRUSTED = 1 };

/* Schedules, optimises, generates and compiles a program computing `outputs`. Inputs are all
 * frit_input tensors reachable from the outputs, in their creation order. Owned by ctx (freed
 * with it) unless freed earlier with frit_program_free. An identical graph compiled again in the
 * same ctx returns quickly from the in-memory cache. NULL on error. */
frit_program *frit_compile(frit_ctx *ctx, frit_tensor *const *outputs, int noutputs,
                           const frit_compile_opts *opts);
void frit_program_free(frit_program *p);
int frit_program_num_inputs(const frit_program *p);
const char *frit_program_input_name(const frit_program *p, int i);
int frit_program_num_outputs(const frit_program *p);
/* Runs on host pointers: inputs[i] and outputs[k] are dense C-order buffers of the tensors'
 * dtypes and (bound) shapes. vars bind the symbolic dims by name. Returns FRIT_OK or an error
 * (unbound or out-of-bounds variable, shape mismatch between inputs). One caller at a time per
 * ctx (the program holds its run state); programs of different ctxs may run at once. */
frit_status frit_program_run(frit_program *p, void *const *inputs, void *const *outputs,
                             const frit_binding *vars, int nvars);
/* Buffer donation: output `output` is written into the memory of input `input` (same dtype and
 * the same shape expressions, else FRIT_ERR_INVALID), so a run that updates state (parameters,
 * optimizer moments) allocates nothing for it. Declared once per program; from then on a run
 * given NULL or inputs[input] as outputs[output] leaves the output's value in the input's memory
 * (any other pointer is a plain output for that run). Always the right answer: *in_place (may be
 * NULL) is 1 when the schedule writes the output straight into the input, because every kernel
 * that reads the input runs before the first kernel that writes the output, or is that kernel
 * and reads only the element it stores, to compute the stored value, outside host loops (such
 * kernels' parameters are rendered without `restrict`); else 0, and each run writes the
 * output to staging memory and copies it into the input at the end. A run where the donated
 * memory overlaps another input's is staged too (two donated inputs sharing memory is
 * FRIT_ERR_INVALID). If a run fails, an input written in place may hold partial results. */
frit_status frit_program_donate(frit_program *p, int input, int output, int *in_place);
/* Output k's shape for these bindings: ndim into *ndim, dims into dims[FRIT_MAX_DIMS]. */
frit_status frit_program_output_shape(frit_program *p, int k, const frit_binding *vars, int nvars,
                                      int *ndim, int64_t *dims);
/* Bytes of the intermediate arena for these bindings (after reuse by liveness). */
frit_status frit_program_required_memory(frit_program *p, const frit_binding *vars, int nvars,
                                         size_t *bytes);
int frit_program_num_kernels(const frit_program *p);
/* Kernel k: a name, the frontend ops it came from ("exp,sub,max"), its launch dims (global
 * sizes as C expressions of the symbolic variables) and the buffers it reads and writes. */
const char *frit_program_kernel_name(const frit_program *p, int k);
const char *frit_program_kernel_ops(const frit_program *p, int k);
const char *frit_program_kernel_launch(const frit_program *p, int k);
/* Generated C source of the whole program (one translation unit). */
const char *frit_program_source(const frit_program *p);
/* Prints a stage of the pipeline for kernel k (-1: all): "tensor", "kernel" (loop-level after
 * scheduling), "optimized" (after axis choices and simplification), "linear" (linearised). */
frit_status frit_program_print(frit_program *p, const char *stage, int k, FILE *out);
/* Configuration as used: compiler, flags, cache directory, threads. */
frit_status frit_program_info(frit_program *p, FILE *out);
frit_status frit_info(frit_ctx *ctx, FILE *out);  /* defaults, without compiling */
frit_status frit_cache_clear(frit_ctx *ctx, const char *cache_dir); /* NULL: the default */
/* The autotuner's stored tunings (FRIT_TUNE=1; docs/runtime.md "The autotuner") in cache_dir
 * (NULL: the default): list prints one line each, "KERNEL: CHOICES (DEFAULT -> TUNED ms, N
 * candidates) on MACHINE", and the count of files it could not read; clear removes them. */
frit_status frit_tune_list(frit_ctx *ctx, const char *cache_dir, FILE *out);
frit_status frit_tune_clear(frit_ctx *ctx, const char *cache_dir);

/* ---------- importing models (src/import, docs/import.md) ----------
 * A frit_model is a model read from another format (StableHLO text, ONNX): a function from
 * argument tensors to result tensors. It belongs to ctx. Calling it builds its graph on the given
 * tensors (lazy, like any tensor op), so an imported model composes with frit's own ops, jit,
 * autodiff and compile. Parse errors are FRIT_ERR_PARSE naming the line and column (StableHLO)
 * or the node (ONNX); an op or dtype frit lacks is FRIT_ERR_INVALID naming it and where it is. */
typedef struct frit_model frit_model;

/* Parses a StableHLO module as textual MLIR, in the pretty or the generic form (as
 * jax.jit(f).lower(...).as_text() prints it). The model is its public function "main" (or its
 * only function). NULL on error. */
frit_model *frit_import_stablehlo(frit_ctx *ctx, const char *text, size_t len);
/* Reads an ONNX ModelProto from memory; base_dir (may be NULL) is where external data files are
 * looked up. NULL on error. */
frit_model *frit_import_onnx(frit_ctx *ctx, const void *data, size_t len, const char *base_dir);
/* frit_import_onnx on a file; external data is looked up beside it. */
frit_model *frit_import_onnx_file(frit_ctx *ctx, const char *path);
/* The inputs are the model's arguments followed by its weights: the last num_weights inputs
 * carry values (initializers, large constants), C-order data of the input's dtype and shape,
 * owned by the model. The others have none (NULL). */
int frit_model_num_inputs(const frit_model *m);
int frit_model_num_weights(const frit_model *m);
const void *frit_model_weight_data(const frit_model *m, int k);
int frit_model_num_outputs(const frit_model *m);
/* Signature of input (output = 0) or output (output = 1) k: its name (owned by the model, "" when
 * the format has none), dtype, and shape: the rank is returned (-1 when unknown) and dims[] gets
 * FRIT_MAX_DIMS at most, -1 for a dynamic dim. */
const char *frit_model_value_name(const frit_model *m, int output, int k);
frit_dtype frit_model_value_dtype(const frit_model *m, int output, int k);
int frit_model_value_shape(const frit_model *m, int output, int k, int64_t *dims);
/* Builds the model on args (nargs must be the number of inputs, with the signature's dtypes and
 * ranks; static dims must match); outs gets frit_model_num_outputs tensors. */
frit_status frit_model_call(frit_ctx *ctx, frit_model *m, frit_tensor *const *args, int nargs,
                            frit_tensor **outs);
/* New frit_input tensors matching the model's inputs, weights included (dynamic dims become
 * symbolic dims named in<k>_d<axis>), for compiling the model on its own: args gets
 * frit_model_num_inputs tensors; a run binds the weights to frit_model_weight_data. */
frit_status frit_model_inputs(frit_ctx *ctx, frit_model *m, frit_tensor **args);
/* A listing of the model as parsed: its functions and ops with their source locations. */
frit_status frit_model_print(frit_ctx *ctx, frit_model *m, FILE *out);

/* ---------- profiling (docs/profiling.md) ---------- */

/* One process-wide profile. start drops the events of an earlier profile and records, from any
 * ctx and thread, every kernel launch (wall time, bytes read and written, a FLOP estimate, its
 * ops and call site) and every compile pass, until stop. Device programs wait for each kernel
 * while recording. The profiler owns everything it records (names are copied). */
void frit_profile_start(void);
void frit_profile_stop(void);
int frit_profile_active(void);
size_t frit_profile_event_count(void); /* events recorded so far (metadata not counted) */
/* Writes the recorded events as a Chrome trace / Perfetto JSON file ("traceEvents" of "X"
 * events, ts/dur in microseconds; kernel args: ops, site, bytes_read, bytes_written, flops,
 * gbps, gflops, frac_bw, frac_flops). Works while recording or after stop. ctx: for the
 * message and the cache directory of the machine limits. */
frit_status frit_profile_save(frit_ctx *ctx, const char *path);
/* Names the call site ("file:line") that created tensor t: a kernel that realises t (or, failing
 * that, reads it) is labelled with it. site is copied. FRIT_PROFILE_SITE notes the C caller's. */
frit_status frit_profile_note_site(frit_ctx *ctx, const frit_tensor *t, const char *site);
#define FRIT_PROFILE_STR_(x) #x
#define FRIT_PROFILE_STR(x) FRIT_PROFILE_STR_(x)
#define FRIT_PROFILE_SITE(ctx, t) frit_profile_note_site((ctx), (t), __FILE__ ":" FRIT_PROFILE_STR(__LINE__))
/* Prints the summary of a saved trace: per kernel and site, calls, total ms, share, GB/s,
 * GFLOP/s and their fractions of the machine limits, slowest first; then the compile passes. */
frit_status frit_profile_summary(frit_ctx *ctx, const char *trace_path, FILE *out);
/* This machine's copy bandwidth (bytes read + written per second, GB/s) and FMA throughput
 * (GFLOP/s, all threads): measured on a process's first use (about 0.1 s), and the best figures
 * ever measured are kept in the kernel cache directory under a fingerprint of the CPU (model name
 * and ISA flags) and thread count; returned is the better of the two. */
frit_status frit_machine_limits(frit_ctx *ctx, double *copy_gbps, double *fma_gflops);

#ifdef __cplusplus
}
#endif
#endif
