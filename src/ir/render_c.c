/* Renders an integer/bool expression graph as one C expression with the fewest parentheses C's
 * precedence allows. Emission is iterative over an explicit work stack, linear in output size. */
#include "ir/irfmt.h"
#include "ir/walk.h"

#include <inttypes.h>

/* C precedence levels, higher binds tighter. */
enum {
  P_TERNARY = 3, P_LOR = 4, P_LAND = 5, P_BOR = 6, P_BXOR = 7, P_BAND = 8, P_EQ = 9, P_REL = 10,
  P_SHIFT = 11, P_ADD = 12, P_MUL = 13, P_UNARY = 15, P_PRIMARY = 16,
};

/* CAST from bool to an integer is value-preserving in C (bool promotes to 0/1), so it renders
 * as its operand. */
static bool is_dropped_cast(const frit_uop *u) {
  return u->op == FRIT_OP_CAST && frit_dtype_is_bool(u->src[0]->dtype) && frit_dtype_is_int(u->dtype);
}

static const frit_uop *skip_casts(const frit_uop *u) {
  while (is_dropped_cast(u)) u = u->src[0];
  return u;
}

static bool is_bool(const frit_uop *u) { return frit_dtype_is_bool(u->dtype); }

/* The binary operator text and its precedence, or NULL if the op is not a C infix operator. */
static const char *infix(const frit_uop *u, int *prec) {
  bool b = is_bool(u->src[0]);
  switch ((frit_op)u->op) {
  case FRIT_OP_ADD: *prec = P_ADD; return " + ";
  case FRIT_OP_SUB: *prec = P_ADD; return " - ";
  case FRIT_OP_MUL: *prec = P_MUL; return " * ";
  case FRIT_OP_IDIV: *prec = P_MUL; return " / ";
  case FRIT_OP_MOD: *prec = P_MUL; return " % ";
  case FRIT_OP_SHL: *prec = P_SHIFT; return " << ";
  case FRIT_OP_SHR: *prec = P_SHIFT; return " >> ";
  case FRIT_OP_CMPLT: *prec = P_REL; return " < ";
  case FRIT_OP_CMPLE: *prec = P_REL; return " <= ";
  case FRIT_OP_CMPEQ: *prec = P_EQ; return " == ";
  case FRIT_OP_CMPNE: *prec = P_EQ; return " != ";
  case FRIT_OP_AND: *prec = b ? P_LAND : P_BAND; return b ? " && " : " & ";
  case FRIT_OP_OR: *prec = b ? P_LOR : P_BOR; return b ? " || " : " | ";
  case FRIT_OP_XOR: *prec = b ? P_EQ : P_BXOR; return b ? " != " : " ^ "; /* bool xor is != */
  case FRIT_OP_CONST: case FRIT_OP_VECTORIZE: case FRIT_OP_GEP: case FRIT_OP_CAST: case FRIT_OP_BITCAST:
  case FRIT_OP_DEFINE_VAR: case FRIT_OP_BIND: case FRIT_OP_SINK: case FRIT_OP_GROUP: case FRIT_OP_AFTER:
  case FRIT_OP_SPECIAL: case FRIT_OP_RESHAPE: case FRIT_OP_PERMUTE: case FRIT_OP_EXPAND: case FRIT_OP_PAD:
  case FRIT_OP_SHRINK: case FRIT_OP_FLIP: case FRIT_OP_GATHER: case FRIT_OP_SCAN: case FRIT_OP_SCATTER: case FRIT_OP_SEQ: case FRIT_OP_BREAK: case FRIT_OP_CONTINUE: case FRIT_OP_LOOP: case FRIT_OP_CARRY: case FRIT_OP_IOTA: case FRIT_OP_CONTIGUOUS: case FRIT_OP_COLLECTIVE: case FRIT_OP_REDUCE_AXIS: case FRIT_OP_REDUCE: case FRIT_OP_RANGE:
  case FRIT_OP_END: case FRIT_OP_IF: case FRIT_OP_BARRIER: case FRIT_OP_KERNEL: case FRIT_OP_BUFFER:
  case FRIT_OP_DEFINE_GLOBAL: case FRIT_OP_DEFINE_LOCAL: case FRIT_OP_DEFINE_REG: case FRIT_OP_INDEX:
  case FRIT_OP_LOAD: case FRIT_OP_STORE: case FRIT_OP_ATOMIC: case FRIT_OP_ATOMIC_CAS: case FRIT_OP_NEG:
  case FRIT_OP_NOT: case FRIT_OP_ABS: case FRIT_OP_SQRT: case FRIT_OP_RSQRT: case FRIT_OP_RECIP:
  case FRIT_OP_EXP: case FRIT_OP_EXP2: case FRIT_OP_LOG: case FRIT_OP_LOG2: case FRIT_OP_SIN: case FRIT_OP_COS:
  case FRIT_OP_TAN: case FRIT_OP_ASIN: case FRIT_OP_ACOS: case FRIT_OP_ATAN: case FRIT_OP_SINH:
  case FRIT_OP_COSH: case FRIT_OP_TANH: case FRIT_OP_ERF: case FRIT_OP_FLOOR: case FRIT_OP_CEIL:
  case FRIT_OP_TRUNC: case FRIT_OP_RINT: case FRIT_OP_FDIV: case FRIT_OP_MAX: case FRIT_OP_MIN:
  case FRIT_OP_POW: case FRIT_OP_ATAN2: case FRIT_OP_REAL: case FRIT_OP_IMAG: case FRIT_OP_CONJ: case FRIT_OP_COMPLEX: case FRIT_OP_WHERE: case FRIT_OP_MULACC: case FRIT_OP_COUNT_:
    return NULL;
  }
  return NULL;
}

/* Whether a reachable node can be rendered; sets the error if not. */
static bool supported(frit_ctx *ctx, const frit_uop *u) {
  char dtb[48];
  frit_dtype dt = u->dtype;
  bool ok_dtype = (frit_dtype_is_int(dt) || frit_dtype_is_bool(dt)) && frit_dtype_lanes(dt) == 1;
  int prec;
  bool ok_op = false;
  switch ((frit_op)u->op) {
  case FRIT_OP_CONST: case FRIT_OP_DEFINE_VAR: case FRIT_OP_RANGE: case FRIT_OP_SPECIAL: case FRIT_OP_NEG:
  case FRIT_OP_NOT: case FRIT_OP_MAX: case FRIT_OP_MIN: case FRIT_OP_WHERE:
    ok_op = true;
    break;
  case FRIT_OP_CAST:
    ok_op = frit_dtype_is_int(u->src[0]->dtype) || frit_dtype_is_bool(u->src[0]->dtype);
    break;
  case FRIT_OP_VECTORIZE: case FRIT_OP_GEP: case FRIT_OP_BITCAST: case FRIT_OP_BIND: case FRIT_OP_SINK:
  case FRIT_OP_GROUP: case FRIT_OP_AFTER: case FRIT_OP_RESHAPE: case FRIT_OP_PERMUTE: case FRIT_OP_EXPAND:
  case FRIT_OP_PAD: case FRIT_OP_SHRINK: case FRIT_OP_FLIP: case FRIT_OP_GATHER: case FRIT_OP_SCAN: case FRIT_OP_SCATTER: case FRIT_OP_SEQ: case FRIT_OP_BREAK: case FRIT_OP_CONTINUE: case FRIT_OP_LOOP: case FRIT_OP_CARRY: case FRIT_OP_IOTA: case FRIT_OP_CONTIGUOUS: case FRIT_OP_COLLECTIVE: case FRIT_OP_REDUCE_AXIS: case FRIT_OP_REDUCE:
  case FRIT_OP_END: case FRIT_OP_IF: case FRIT_OP_BARRIER: case FRIT_OP_KERNEL: case FRIT_OP_BUFFER:
  case FRIT_OP_DEFINE_GLOBAL: case FRIT_OP_DEFINE_LOCAL: case FRIT_OP_DEFINE_REG: case FRIT_OP_INDEX:
  case FRIT_OP_LOAD: case FRIT_OP_STORE: case FRIT_OP_ATOMIC: case FRIT_OP_ATOMIC_CAS: case FRIT_OP_ABS:
  case FRIT_OP_SQRT: case FRIT_OP_RSQRT: case FRIT_OP_RECIP: case FRIT_OP_EXP: case FRIT_OP_EXP2:
  case FRIT_OP_LOG: case FRIT_OP_LOG2: case FRIT_OP_SIN: case FRIT_OP_COS: case FRIT_OP_TAN: case FRIT_OP_ASIN:
  case FRIT_OP_ACOS: case FRIT_OP_ATAN: case FRIT_OP_SINH: case FRIT_OP_COSH: case FRIT_OP_TANH:
  case FRIT_OP_ERF: case FRIT_OP_FLOOR: case FRIT_OP_CEIL: case FRIT_OP_TRUNC: case FRIT_OP_RINT:
  case FRIT_OP_FDIV: case FRIT_OP_POW: case FRIT_OP_ATAN2: case FRIT_OP_REAL: case FRIT_OP_IMAG: case FRIT_OP_CONJ: case FRIT_OP_COMPLEX: case FRIT_OP_MULACC: case FRIT_OP_COUNT_:
    ok_op = false;
    break;
  case FRIT_OP_ADD: case FRIT_OP_SUB: case FRIT_OP_MUL: case FRIT_OP_IDIV: case FRIT_OP_MOD: case FRIT_OP_AND:
  case FRIT_OP_OR: case FRIT_OP_XOR: case FRIT_OP_SHL: case FRIT_OP_SHR: case FRIT_OP_CMPLT: case FRIT_OP_CMPLE:
  case FRIT_OP_CMPEQ: case FRIT_OP_CMPNE:
    ok_op = infix(u, &prec) != NULL;
    break;
  }
  if (ok_op && ok_dtype) return true;
  frit_set_error(ctx, FRIT_ERR_INVALID, "render_c: node %%%" PRIu32 " %s : %s is not a scalar integer/bool expression",
                 u->id, frit_op_name((frit_op)u->op), frit_dtype_name(dt, dtb, sizeof dtb));
  return false;
}

static int prec_of(const frit_uop *u) {
  u = skip_casts(u);
  int p;
  switch ((frit_op)u->op) {
  case FRIT_OP_CONST:
    /* Negative literals are a unary minus applied to a literal; INT64_MIN is parenthesised. */
    if (!frit_dtype_is_unsigned(u->dtype) && u->arg.value.i < 0) return u->arg.value.i == INT64_MIN ? P_PRIMARY : P_UNARY;
    return P_PRIMARY;
  case FRIT_OP_NEG: case FRIT_OP_NOT: return P_UNARY;
  case FRIT_OP_CAST: return frit_dtype_is_bool(u->dtype) ? P_EQ : P_UNARY;
  case FRIT_OP_WHERE: return P_TERNARY;
  case FRIT_OP_VECTORIZE: case FRIT_OP_GEP: case FRIT_OP_BITCAST: case FRIT_OP_DEFINE_VAR: case FRIT_OP_BIND:
  case FRIT_OP_SINK: case FRIT_OP_GROUP: case FRIT_OP_AFTER: case FRIT_OP_SPECIAL: case FRIT_OP_RESHAPE:
  case FRIT_OP_PERMUTE: case FRIT_OP_EXPAND: case FRIT_OP_PAD: case FRIT_OP_SHRINK: case FRIT_OP_FLIP: case FRIT_OP_GATHER: case FRIT_OP_SCAN: case FRIT_OP_SCATTER: case FRIT_OP_SEQ: case FRIT_OP_BREAK: case FRIT_OP_CONTINUE: case FRIT_OP_LOOP: case FRIT_OP_CARRY: case FRIT_OP_IOTA: case FRIT_OP_CONTIGUOUS: case FRIT_OP_COLLECTIVE:
  case FRIT_OP_REDUCE_AXIS: case FRIT_OP_REDUCE: case FRIT_OP_RANGE: case FRIT_OP_END: case FRIT_OP_IF:
  case FRIT_OP_BARRIER: case FRIT_OP_KERNEL: case FRIT_OP_BUFFER: case FRIT_OP_DEFINE_GLOBAL:
  case FRIT_OP_DEFINE_LOCAL: case FRIT_OP_DEFINE_REG: case FRIT_OP_INDEX: case FRIT_OP_LOAD: case FRIT_OP_STORE:
  case FRIT_OP_ATOMIC: case FRIT_OP_ATOMIC_CAS: case FRIT_OP_ABS: case FRIT_OP_SQRT: case FRIT_OP_RSQRT:
  case FRIT_OP_RECIP: case FRIT_OP_EXP: case FRIT_OP_EXP2: case FRIT_OP_LOG: case FRIT_OP_LOG2: case FRIT_OP_SIN:
  case FRIT_OP_COS: case FRIT_OP_TAN: case FRIT_OP_ASIN: case FRIT_OP_ACOS: case FRIT_OP_ATAN: case FRIT_OP_SINH:
  case FRIT_OP_COSH: case FRIT_OP_TANH: case FRIT_OP_ERF: case FRIT_OP_FLOOR: case FRIT_OP_CEIL:
  case FRIT_OP_TRUNC: case FRIT_OP_RINT: case FRIT_OP_FDIV: case FRIT_OP_MAX: case FRIT_OP_MIN: case FRIT_OP_POW:
  case FRIT_OP_ATAN2: case FRIT_OP_REAL: case FRIT_OP_IMAG: case FRIT_OP_CONJ: case FRIT_OP_COMPLEX: case FRIT_OP_MULACC: case FRIT_OP_COUNT_:
    return P_PRIMARY;
  case FRIT_OP_ADD: case FRIT_OP_SUB: case FRIT_OP_MUL: case FRIT_OP_IDIV: case FRIT_OP_MOD: case FRIT_OP_AND:
  case FRIT_OP_OR: case FRIT_OP_XOR: case FRIT_OP_SHL: case FRIT_OP_SHR: case FRIT_OP_CMPLT: case FRIT_OP_CMPLE:
  case FRIT_OP_CMPEQ: case FRIT_OP_CMPNE:
    return infix(u, &p) ? p : P_PRIMARY;
  }
  return P_PRIMARY;
}

/* Work items: a node to render, or literal text (static or ctx-owned) to emit. */
typedef struct work {
  const frit_uop *u; /* NULL: emit text */
  const char *text;
} work;

typedef struct emitter {
  work *stack;
  size_t sp, cap;
  bool oom;
} emitter;

static void push(emitter *e, const frit_uop *u, const char *text) {
  if (e->sp == e->cap) {
    size_t cap = e->cap ? e->cap * 2 : 64;
    work *g = realloc(e->stack, cap * sizeof *g);
    if (!g) {
      e->oom = true;
      return;
    }
    e->stack = g, e->cap = cap;
  }
  e->stack[e->sp++] = (work){u, text};
}

/* Pushes a child operand, parenthesised when its precedence is below `need`. Items pop in
 * reverse, so callers push right to left. */
static void push_operand(emitter *e, const frit_uop *child, int need) {
  bool paren = prec_of(child) < need;
  if (paren) push(e, NULL, ")");
  push(e, child, NULL);
  if (paren) push(e, NULL, "(");
}

static const char *int_ctype(frit_dtype dt) {
  switch (frit_dtype_kind(dt)) {
  case FRIT_I8: return "int8_t";
  case FRIT_I16: return "int16_t";
  case FRIT_I32: return "int32_t";
  case FRIT_I64: return "int64_t";
  case FRIT_U8: return "uint8_t";
  case FRIT_U16: return "uint16_t";
  case FRIT_U32: return "uint32_t";
  case FRIT_U64: return "uint64_t";
  case FRIT_VOID: case FRIT_BOOL: case FRIT_F16: case FRIT_BF16: case FRIT_F32: case FRIT_F64:
  case FRIT_C64: case FRIT_C128: case FRIT_SCALAR_KIND_COUNT_:
    return "int";
  }
  return "int";
}

static void emit_const(FILE *out, const frit_uop *u) {
  frit_scalar v = u->arg.value;
  if (frit_dtype_is_unsigned(u->dtype)) fprintf(out, v.u > INT64_MAX ? "%" PRIu64 "u" : "%" PRIu64, v.u);
  else if (v.i == INT64_MIN) fputs("(-9223372036854775807 - 1)", out); /* the literal 9223372036854775808 has no signed type */
  else fprintf(out, "%" PRId64, v.i);
}

const char *frit_render_c_expr(frit_ctx *ctx, frit_uop *root) {
  if (!root) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "render_c: NULL root");
    return NULL;
  }
  size_t n;
  frit_uop **nodes = frit_walk_topo(root, &n);
  if (!nodes) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "render_c: out of memory");
    return NULL;
  }
  for (size_t k = 0; k < n; k++)
    if (!supported(ctx, nodes[k])) {
      free(nodes);
      return NULL;
    }
  free(nodes);

  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  if (!out) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "render_c: out of memory");
    return NULL;
  }
  emitter e = {0};
  push(&e, root, NULL);
  while (e.sp && !e.oom) {
    work w = e.stack[--e.sp];
    if (!w.u) {
      fputs(w.text, out);
      continue;
    }
    const frit_uop *u = skip_casts(w.u);
    int p = prec_of(u);
    switch ((frit_op)u->op) {
    case FRIT_OP_CONST: emit_const(out, u); break;
    case FRIT_OP_DEFINE_VAR: case FRIT_OP_SPECIAL: fwrite(u->arg.blob, 1, u->arg.n, out); break;
    case FRIT_OP_RANGE: fprintf(out, "ridx%" PRId64, u->arg.i0); break;
    case FRIT_OP_NEG: case FRIT_OP_NOT: {
      const frit_uop *c = skip_casts(u->src[0]);
      /* "- -x" must not become the decrement "--x": a minus operand starting with '-' is parenthesised. */
      bool minus_start = u->op == FRIT_OP_NEG && (c->op == FRIT_OP_NEG || (prec_of(c) == P_UNARY && c->op == FRIT_OP_CONST));
      if (minus_start) push(&e, NULL, ")");
      push_operand(&e, u->src[0], P_UNARY);
      if (minus_start) push(&e, NULL, "(");
      push(&e, NULL, u->op == FRIT_OP_NEG ? "-" : is_bool(u) ? "!" : "~");
      break;
    }
    case FRIT_OP_CAST:
      if (frit_dtype_is_bool(u->dtype)) {
        push(&e, NULL, " != 0");
        push_operand(&e, u->src[0], P_EQ);
      } else {
        push_operand(&e, u->src[0], P_UNARY);
        push(&e, NULL, ")");
        push(&e, NULL, int_ctype(u->dtype));
        push(&e, NULL, "(");
      }
      break;
    case FRIT_OP_MAX: case FRIT_OP_MIN:
      push(&e, NULL, ")");
      push(&e, u->src[1], NULL);
      push(&e, NULL, ", ");
      push(&e, u->src[0], NULL);
      push(&e, NULL, u->op == FRIT_OP_MAX ? "max(" : "min(");
      break;
    case FRIT_OP_WHERE:
      /* c ? a : b groups to the right: only the condition needs care with a nested ?:. */
      push_operand(&e, u->src[2], P_TERNARY);
      push(&e, NULL, " : ");
      push(&e, u->src[1], NULL);
      push(&e, NULL, " ? ");
      push_operand(&e, u->src[0], P_TERNARY + 1);
      break;
    case FRIT_OP_ADD: case FRIT_OP_SUB: case FRIT_OP_MUL: case FRIT_OP_IDIV: case FRIT_OP_MOD: case FRIT_OP_AND:
    case FRIT_OP_OR: case FRIT_OP_XOR: case FRIT_OP_SHL: case FRIT_OP_SHR: case FRIT_OP_CMPLT: case FRIT_OP_CMPLE:
    case FRIT_OP_CMPEQ: case FRIT_OP_CMPNE: {
      /* Left-associative: the right operand needs parentheses at equal precedence too. */
      const char *opstr = infix(u, &p);
      push_operand(&e, u->src[1], p + 1);
      push(&e, NULL, opstr);
      push_operand(&e, u->src[0], p);
      break;
    }
    case FRIT_OP_VECTORIZE: case FRIT_OP_GEP: case FRIT_OP_BITCAST: case FRIT_OP_BIND: case FRIT_OP_SINK:
    case FRIT_OP_GROUP: case FRIT_OP_AFTER: case FRIT_OP_RESHAPE: case FRIT_OP_PERMUTE: case FRIT_OP_EXPAND:
    case FRIT_OP_PAD: case FRIT_OP_SHRINK: case FRIT_OP_FLIP: case FRIT_OP_GATHER: case FRIT_OP_SCAN: case FRIT_OP_SCATTER: case FRIT_OP_SEQ: case FRIT_OP_BREAK: case FRIT_OP_CONTINUE: case FRIT_OP_LOOP: case FRIT_OP_CARRY: case FRIT_OP_IOTA: case FRIT_OP_CONTIGUOUS: case FRIT_OP_COLLECTIVE: case FRIT_OP_REDUCE_AXIS: case FRIT_OP_REDUCE:
    case FRIT_OP_END: case FRIT_OP_IF: case FRIT_OP_BARRIER: case FRIT_OP_KERNEL: case FRIT_OP_BUFFER:
    case FRIT_OP_DEFINE_GLOBAL: case FRIT_OP_DEFINE_LOCAL: case FRIT_OP_DEFINE_REG: case FRIT_OP_INDEX:
    case FRIT_OP_LOAD: case FRIT_OP_STORE: case FRIT_OP_ATOMIC: case FRIT_OP_ATOMIC_CAS: case FRIT_OP_ABS:
    case FRIT_OP_SQRT: case FRIT_OP_RSQRT: case FRIT_OP_RECIP: case FRIT_OP_EXP: case FRIT_OP_EXP2:
    case FRIT_OP_LOG: case FRIT_OP_LOG2: case FRIT_OP_SIN: case FRIT_OP_COS: case FRIT_OP_TAN: case FRIT_OP_ASIN:
    case FRIT_OP_ACOS: case FRIT_OP_ATAN: case FRIT_OP_SINH: case FRIT_OP_COSH: case FRIT_OP_TANH:
    case FRIT_OP_ERF: case FRIT_OP_FLOOR: case FRIT_OP_CEIL: case FRIT_OP_TRUNC: case FRIT_OP_RINT:
    case FRIT_OP_FDIV: case FRIT_OP_POW: case FRIT_OP_ATAN2: case FRIT_OP_REAL: case FRIT_OP_IMAG: case FRIT_OP_CONJ: case FRIT_OP_COMPLEX: case FRIT_OP_MULACC: case FRIT_OP_COUNT_:
      FRIT_ASSERT(!"render_c: unsupported op passed the support check");
      break;
    }
  }
  free(e.stack);
  bool failed = e.oom;
  if (fclose(out) != 0) failed = true;
  if (failed) {
    free(buf);
    frit_set_error(ctx, FRIT_ERR_NOMEM, "render_c: out of memory");
    return NULL;
  }
  return frit_ctx_keep_string(ctx, buf);
}
