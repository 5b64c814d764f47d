/* Evaluation of small symbolic expressions (buffer sizes, dims, launch extents) for given
 * variable bindings, using the same scalar semantics as the interpreter and constant folding;
 * a walk of the expression, without the interpreter's setup (the memory plan of every run
 * evaluated each buffer's size through frit_interpret before; a 1000-element sum's jit call has
 * been 1.1-1.7 us faster since). */
#include "interp/scalar.h"

#include <string.h>

#define EVAL_MAX_DEPTH 256

static frit_status eval_rec(frit_ctx *ctx, frit_uop *u, const frit_binding *vars, int nvars,
                            frit_scalar *out, int depth) {
  if (depth > EVAL_MAX_DEPTH)
    return frit_set_error(ctx, FRIT_ERR_RUNTIME, "expression too deep to evaluate (node %u)", u->id);
  frit_op op = (frit_op)u->op;
  if (op == FRIT_OP_CONST) {
    *out = u->arg.value;
    return FRIT_OK;
  }
  if (op == FRIT_OP_DEFINE_VAR) {
    const char *name = u->arg.blob;
    for (int i = 0; i < nvars; i++) {
      if (vars[i].name && !strcmp(vars[i].name, name)) {
        out->i = vars[i].value;
        return FRIT_OK;
      }
    }
    return frit_set_error(ctx, FRIT_ERR_RUNTIME, "variable '%s' is not bound", name);
  }
  if (op == FRIT_OP_BIND && u->nsrc >= 1) return eval_rec(ctx, u->src[0], vars, nvars, out, depth + 1);
  bool alu = (frit_op_flags(op) & FRIT_F_ALU) != 0;
  if (!alu && op != FRIT_OP_CAST && op != FRIT_OP_BITCAST)
    return frit_set_error(ctx, FRIT_ERR_RUNTIME, "cannot evaluate %s in a size expression",
                          frit_op_name(op));
  if (frit_dtype_lanes(u->dtype) != 1 || u->nsrc > 3)
    return frit_set_error(ctx, FRIT_ERR_RUNTIME, "cannot evaluate vector %s in a size expression",
                          frit_op_name(op));
  frit_scalar v[3];
  for (uint32_t i = 0; i < u->nsrc; i++) {
    frit_status st = eval_rec(ctx, u->src[i], vars, nvars, &v[i], depth + 1);
    if (st != FRIT_OK) return st;
  }
  if (op == FRIT_OP_CAST) {
    *out = frit_eval_cast(v[0], u->src[0]->dtype, u->dtype);
  } else if (op == FRIT_OP_BITCAST) {
    *out = frit_eval_bitcast(v[0], u->src[0]->dtype, u->dtype);
  } else {
    /* the operand dtype: WHERE's is its branches', a comparison's its operands' */
    frit_dtype dt = op == FRIT_OP_WHERE ? u->src[1]->dtype : u->src[0]->dtype;
    *out = frit_eval_alu(op, dt, v);
  }
  return FRIT_OK;
}

frit_status frit_eval_int_expr(frit_ctx *ctx, frit_uop *u, const frit_binding *vars, int nvars, int64_t *out) {
  frit_scalar v;
  frit_status st = eval_rec(ctx, u, vars, nvars, &v, 0);
  if (st != FRIT_OK) return st;
  if (frit_dtype_is_float(u->dtype)) v = frit_eval_cast(v, u->dtype, FRIT_I64);
  *out = v.i;
  return FRIT_OK;
}
