/* Human-readable printers: the indented tree (shared nodes shown once, then as ^%id) and the
 * compact C-like listing. Both use global node ids so they match verifier messages. */
#include "ir/irfmt.h"
#include "ir/walk.h"

#include <inttypes.h>

/* A name as is when it is a plain identifier, else quoted and escaped. */
static void write_name(FILE *out, const char *s, size_t n) {
  bool plain = n > 0;
  for (size_t i = 0; i < n && plain; i++)
    plain = (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
            s[i] == '_' || s[i] == '.';
  if (plain) fwrite(s, 1, n, out);
  else frit_fmt_string(out, s, n);
}

/* The op's name and its argument, readable: "const 4", "range axis=0 global", "reduce add". */
static void describe(FILE *out, const frit_uop *u, bool with_sources) {
  char buf[96], tmp[32];
  const frit_arg *a = &u->arg;
  frit_op op = (frit_op)u->op;
  fputs(frit_fmt_opname(op, buf, sizeof buf), out);
  if (with_sources && u->nsrc) {
    fputc('(', out);
    for (uint32_t i = 0; i < u->nsrc; i++) fprintf(out, "%s%%%" PRIu32, i ? ", " : "", u->src[i]->id);
    fputc(')', out);
  }
  bool generic = false;
  switch (op) {
  case FRIT_OP_CONST:
    frit_fmt_value(buf, sizeof buf, u->dtype, a->value);
    fprintf(out, " %s", buf);
    break;
  case FRIT_OP_DEFINE_VAR:
    fputc(' ', out);
    if (a->blob_kind == FRIT_BLOB_STR) write_name(out, a->blob, a->n);
    fprintf(out, " [%" PRId64 ", %" PRId64 "]", a->i0, a->i1);
    break;
  case FRIT_OP_RANGE: {
    const char *ax = frit_fmt_axis_name(a->i1, tmp, sizeof tmp);
    fprintf(out, " axis=%" PRId64, a->i0);
    if (ax) fprintf(out, " %s", ax);
    else fprintf(out, " type=%" PRId64, a->i1);
    break;
  }
  case FRIT_OP_REDUCE: case FRIT_OP_REDUCE_AXIS:
    if (a->i0 >= 0 && a->i0 < FRIT_OP_COUNT_) fprintf(out, " %s", frit_fmt_opname((frit_op)a->i0, buf, sizeof buf));
    else fprintf(out, " op=%" PRId64, a->i0);
    if (a->blob_kind == FRIT_BLOB_INTS) {
      const int64_t *v = a->blob;
      fputs(" axes=[", out);
      for (uint32_t i = 0; i < a->n; i++) fprintf(out, "%s%" PRId64, i ? ", " : "", v[i]);
      fputc(']', out);
    }
    break;
  case FRIT_OP_ATOMIC: {
    const char *name = frit_fmt_atomic_name(a->i0);
    if (name) fprintf(out, " %s", name);
    else fprintf(out, " op=%" PRId64, a->i0);
    if (a->i1) fprintf(out, " serial=%" PRId64, a->i1);
    break;
  }
  case FRIT_OP_LOAD:
    /* explicit kernels number their reads so that reads at different program points differ */
    if (a->i0) fprintf(out, " i0=%" PRId64, a->i0);
    if (a->i1) fprintf(out, " serial=%" PRId64, a->i1);
    break;
  case FRIT_OP_LOOP:
    fprintf(out, " carries=%" PRId64 " id=%" PRId64, a->i0, a->i1);
    break;
  case FRIT_OP_CARRY:
    fprintf(out, " loop=%" PRId64 " slot=%" PRId64, a->i0, a->i1);
    break;
  case FRIT_OP_DEFINE_GLOBAL:
    fprintf(out, " param=%" PRId64, a->i0);
    if (a->i1 >= 0) fprintf(out, " size=%" PRId64, a->i1);
    break;
  case FRIT_OP_BUFFER: case FRIT_OP_DEFINE_LOCAL: case FRIT_OP_DEFINE_REG:
    fprintf(out, " id=%" PRId64 " size=%" PRId64, a->i0, a->i1);
    break;
  case FRIT_OP_VECTORIZE: case FRIT_OP_GEP: case FRIT_OP_CAST: case FRIT_OP_BITCAST: case FRIT_OP_BIND:
  case FRIT_OP_SINK: case FRIT_OP_GROUP: case FRIT_OP_AFTER: case FRIT_OP_SPECIAL: case FRIT_OP_RESHAPE:
  case FRIT_OP_PERMUTE: case FRIT_OP_EXPAND: case FRIT_OP_PAD: case FRIT_OP_SHRINK: case FRIT_OP_FLIP: case FRIT_OP_GATHER: case FRIT_OP_SCAN: case FRIT_OP_SCATTER: case FRIT_OP_SEQ: case FRIT_OP_BREAK: case FRIT_OP_CONTINUE: case FRIT_OP_IOTA: case FRIT_OP_CONTIGUOUS: case FRIT_OP_COLLECTIVE:
  case FRIT_OP_END: case FRIT_OP_IF: case FRIT_OP_BARRIER: case FRIT_OP_KERNEL: case FRIT_OP_INDEX:
  case FRIT_OP_STORE: case FRIT_OP_ATOMIC_CAS: case FRIT_OP_NEG: case FRIT_OP_NOT:
  case FRIT_OP_ABS: case FRIT_OP_SQRT: case FRIT_OP_RSQRT: case FRIT_OP_RECIP: case FRIT_OP_EXP:
  case FRIT_OP_EXP2: case FRIT_OP_LOG: case FRIT_OP_LOG2: case FRIT_OP_SIN: case FRIT_OP_COS: case FRIT_OP_TAN:
  case FRIT_OP_ASIN: case FRIT_OP_ACOS: case FRIT_OP_ATAN: case FRIT_OP_SINH: case FRIT_OP_COSH:
  case FRIT_OP_TANH: case FRIT_OP_ERF: case FRIT_OP_FLOOR: case FRIT_OP_CEIL: case FRIT_OP_TRUNC:
  case FRIT_OP_RINT: case FRIT_OP_ADD: case FRIT_OP_SUB: case FRIT_OP_MUL: case FRIT_OP_FDIV:
  case FRIT_OP_IDIV: case FRIT_OP_MOD: case FRIT_OP_MAX: case FRIT_OP_MIN: case FRIT_OP_POW:
  case FRIT_OP_ATAN2: case FRIT_OP_REAL: case FRIT_OP_IMAG: case FRIT_OP_CONJ: case FRIT_OP_COMPLEX: case FRIT_OP_AND: case FRIT_OP_OR: case FRIT_OP_XOR: case FRIT_OP_SHL: case FRIT_OP_SHR:
  case FRIT_OP_CMPLT: case FRIT_OP_CMPLE: case FRIT_OP_CMPEQ: case FRIT_OP_CMPNE: case FRIT_OP_WHERE:
  case FRIT_OP_MULACC: case FRIT_OP_COUNT_:
    generic = true;
    break;
  }
  if (generic) {
    /* Whatever argument these ops carry, shown plainly (zero fields are unused). */
    if (a->value.u) {
      frit_fmt_value(buf, sizeof buf, u->dtype, a->value);
      fprintf(out, " value=%s", buf);
    }
    if (a->i0) fprintf(out, " i0=%" PRId64, a->i0);
    if (a->i1) fprintf(out, " i1=%" PRId64, a->i1);
    if (a->blob_kind == FRIT_BLOB_INTS) {
      const int64_t *v = a->blob;
      fputs(" [", out);
      for (uint32_t i = 0; i < a->n; i++) fprintf(out, "%s%" PRId64, i ? ", " : "", v[i]);
      fputc(']', out);
    }
  }
  if (a->blob_kind == FRIT_BLOB_STR && op != FRIT_OP_DEFINE_VAR) {
    fputc(' ', out);
    frit_fmt_string(out, a->blob, a->n);
  }
  if (frit_dtype_kind(u->dtype) != FRIT_VOID || frit_dtype_is_ptr(u->dtype))
    fprintf(out, " : %s", frit_dtype_name(u->dtype, buf, sizeof buf));
}

frit_status frit_print_listing(frit_ctx *ctx, frit_uop *root, FILE *out) {
  if (!root || !out) return frit_set_error(ctx, FRIT_ERR_INVALID, "print_listing: NULL root or stream");
  size_t n;
  frit_uop **nodes = frit_walk_topo(root, &n);
  if (!nodes) return frit_set_error(ctx, FRIT_ERR_NOMEM, "print_listing: out of memory");
  for (size_t k = 0; k < n; k++) {
    fprintf(out, "%%%" PRIu32 " = ", nodes[k]->id);
    describe(out, nodes[k], true);
    fputc('\n', out);
  }
  free(nodes);
  return FRIT_OK;
}

/* Indentation stops growing here so that a 100k-deep chain prints in linear size; deeper
 * lines carry their depth instead. */
#define TREE_MAX_INDENT 40

typedef struct tree_item {
  frit_uop *u;
  size_t depth;
} tree_item;

frit_status frit_print_tree(frit_ctx *ctx, frit_uop *root, FILE *out) {
  if (!root || !out) return frit_set_error(ctx, FRIT_ERR_INVALID, "print_tree: NULL root or stream");
  unsigned char *shown = calloc((size_t)root->id + 1, 1);
  size_t cap = 64, sp = 0;
  tree_item *stack = malloc(cap * sizeof *stack);
  if (!shown || !stack) {
    free(shown);
    free(stack);
    return frit_set_error(ctx, FRIT_ERR_NOMEM, "print_tree: out of memory");
  }
  /* Pre-order with an explicit stack: children are pushed in reverse so that they pop in order. */
  stack[sp++] = (tree_item){root, 0};
  while (sp) {
    tree_item it = stack[--sp];
    size_t ind = it.depth < TREE_MAX_INDENT ? it.depth : TREE_MAX_INDENT;
    fprintf(out, "%*s", (int)(2 * ind), "");
    if (it.depth > TREE_MAX_INDENT) fprintf(out, "[depth %zu] ", it.depth);
    if (shown[it.u->id]) {
      fprintf(out, "^%%%" PRIu32 "\n", it.u->id);
      continue;
    }
    shown[it.u->id] = 1;
    fprintf(out, "%%%" PRIu32 " = ", it.u->id);
    describe(out, it.u, false);
    fputc('\n', out);
    if (sp + it.u->nsrc > cap) {
      while (sp + it.u->nsrc > cap) cap *= 2;
      tree_item *g = realloc(stack, cap * sizeof *stack);
      if (!g) {
        free(shown);
        free(stack);
        return frit_set_error(ctx, FRIT_ERR_NOMEM, "print_tree: out of memory");
      }
      stack = g;
    }
    for (uint32_t i = it.u->nsrc; i-- > 0;) stack[sp++] = (tree_item){it.u->src[i], it.depth + 1};
  }
  free(shown);
  free(stack);
  return FRIT_OK;
}
