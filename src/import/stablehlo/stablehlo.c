/* frit_import_stablehlo: parses the module, picks its main function, turns its large constants
 * into model weights, and prints what was parsed. */
#include <stdlib.h>
#include <string.h>

#include "import/model.h"
#include "import/stablehlo/build.h"
#include "ir/uop.h"


static void impl_destroy(void *p) {
  shlo_impl *impl = p;
  shlo_arena_free(&impl->m.arena);
  free(impl);
}

static frit_status impl_call(frit_ctx *ctx, void *p, frit_tensor *const *args, frit_tensor **outs) {
  return shlo_call_main(ctx, p, args, outs);
}

/* ---------------------------------------------------------------- printing */
static void print_type(FILE *out, const shlo_type *t) { fprintf(out, "%s", t->text ? t->text : "?"); }

static void print_region(FILE *out, const shlo_region *r, int indent);

static void print_op(FILE *out, const shlo_op *op, int indent) {
  fprintf(out, "%4d:%-3d %*s", op->line, op->col, indent, "");
  if (op->nres == 1) fprintf(out, "%%v%d = ", op->res0);
  else if (op->nres > 1) fprintf(out, "%%v%d..%%v%d = ", op->res0, op->res0 + op->nres - 1);
  fprintf(out, "%s", op->name);
  if (op->callee) fprintf(out, " @%s", op->callee);
  for (int i = 0; i < op->nword; i++) fprintf(out, " %s", op->words[i]);
  for (int i = 0; i < op->nopnd; i++) fprintf(out, "%s%%v%d", i ? ", " : " ", op->opnd[i]);
  for (int i = 0; i < op->nattr; i++) fprintf(out, "%s%s", i ? ", " : " {", op->akeys[i]);
  if (op->nattr) fprintf(out, "}");
  if (op->weight1) fprintf(out, " (weight %d)", op->weight1 - 1);
  if (op->ntout) {
    fprintf(out, " :");
    for (int i = 0; i < op->ntout; i++) {
      fprintf(out, i ? ", " : " ");
      print_type(out, &op->tout[i]);
    }
  }
  if (!shlo_op_known(op->name) && strcmp(strchr(op->name, '.') ? strchr(op->name, '.') + 1 : op->name, "return"))
    fprintf(out, "   <- not supported");
  fprintf(out, "\n");
  for (int i = 0; i < op->nregion; i++) print_region(out, op->regions[i], indent + 2);
}

static void print_region(FILE *out, const shlo_region *r, int indent) {
  fprintf(out, "         %*s{", indent, "");
  for (int i = 0; i < r->nargs; i++) {
    fprintf(out, "%s%%v%d: ", i ? ", " : " ^(", r->args[i]);
    print_type(out, &r->arg_types[i]);
  }
  fprintf(out, "%s\n", r->nargs ? ")" : "");
  for (int i = 0; i < r->nops; i++) print_op(out, r->ops[i], indent + 2);
  fprintf(out, "         %*s}\n", indent, "");
}

static frit_status impl_print(frit_ctx *ctx, void *p, FILE *out) {
  (void)ctx;
  shlo_impl *impl = p;
  for (int f = 0; f < impl->m.nfuncs; f++) {
    const shlo_func *fn = impl->m.funcs[f];
    fprintf(out, "%4d:%-3d func @%s(", fn->line, fn->col, fn->name);
    for (int i = 0; i < fn->nargs; i++) {
      fprintf(out, "%s%%v%d: ", i ? ", " : "", fn->body->args[i]);
      print_type(out, &fn->arg_types[i]);
    }
    fprintf(out, ") ->");
    for (int i = 0; i < fn->nres; i++) {
      fprintf(out, i ? ", " : " ");
      print_type(out, &fn->res_types[i]);
    }
    fprintf(out, "%s\n", fn == impl->main ? "   (the model)" : "");
    for (int i = 0; i < fn->body->nops; i++) print_op(out, fn->body->ops[i], 2);
  }
  return FRIT_OK;
}

static const model_ops stablehlo_ops = {"stablehlo", impl_call, impl_print, impl_destroy};

/* ---------------------------------------------------------------- weights */
typedef struct weight_list {
  model_value_sig *sigs;
  int n, cap;
} weight_list;

/* Constants with more than one distinct element become weights: frit's graphs hold scalars, and
 * a literal array is an input whose value the model supplies. */
static frit_status collect_weights(frit_ctx *ctx, shlo_region *r, weight_list *w) {
  for (int i = 0; i < r->nops; i++) {
    shlo_op *op = r->ops[i];
    for (int k = 0; k < op->nregion; k++)
      if (collect_weights(ctx, op->regions[k], w)) return frit_last_status(ctx);
    const char *dot = strchr(op->name, '.');
    if (!dot || strcmp(dot + 1, "constant")) continue;
    shlo_attr *v = shlo_attr_get(op, "value");
    for (int k = 0; k < op->nattr && !v; k++)
      if (op->avals[k]->kind == SA_DENSE) v = op->avals[k];
    if (!v || v->kind != SA_DENSE)
      return frit_set_error(ctx, FRIT_ERR_INVALID, "stablehlo: line %d, column %d: constant without a dense literal",
                            op->line, op->col);
    if (v->type.dt == FRIT_VOID || v->type.ndim < 0)
      return frit_set_error(ctx, FRIT_ERR_INVALID, "stablehlo: line %d, column %d: constant of type %s, which frit does not hold",
                            op->line, op->col, v->type.text ? v->type.text : "?");
    int64_t count = 1;
    for (int d = 0; d < v->type.ndim; d++) count *= v->type.dims[d];
    int64_t have = shlo_dense_count(v, v->type.dt);
    if (have == 1 || count <= 1) continue; /* a splat */
    if (frit_dtype_is_complex(v->type.dt)) /* the weights' storage holds real values only */
      return frit_set_error(ctx, FRIT_ERR_INVALID, "stablehlo: line %d, column %d: complex literal arrays (%s) are not "
                            "supported (complex splats are)", op->line, op->col, v->type.text);
    if (have != count)
      return frit_set_error(ctx, FRIT_ERR_PARSE, "stablehlo: line %d, column %d: literal of %lld values for %s", op->line,
                            op->col, (long long)have, v->type.text);
    if (w->n == w->cap) {
      int cap = w->cap ? 2 * w->cap : 8;
      model_value_sig *s = realloc(w->sigs, (size_t)cap * sizeof *s);
      if (!s) return frit_set_error(ctx, FRIT_ERR_NOMEM, "stablehlo: out of memory");
      w->sigs = s;
      w->cap = cap;
    }
    model_value_sig *s = &w->sigs[w->n];
    memset(s, 0, sizeof *s);
    char nm[64];
    snprintf(nm, sizeof nm, "const_l%d", op->line);
    s->name = strdup(nm);
    s->dtype = v->type.dt;
    s->ndim = v->type.ndim;
    memcpy(s->dims, v->type.dims, sizeof s->dims);
    s->data = shlo_dense_storage(v, count);
    if (!s->name || !s->data) {
      free(s->name);
      free(s->data);
      return frit_set_error(ctx, FRIT_ERR_NOMEM, "stablehlo: out of memory");
    }
    op->weight1 = ++w->n;
  }
  return FRIT_OK;
}

static frit_status sig_of(frit_ctx *ctx, const shlo_func *f, const shlo_type *t, const char *name, model_value_sig *s) {
  memset(s, 0, sizeof *s);
  if (t->dt == FRIT_VOID || t->ndim < 0)
    return frit_set_error(ctx, FRIT_ERR_INVALID, "stablehlo: @%s: %s values (%s) are not supported", f->name, name,
                          t->text ? t->text : "?");
  s->name = strdup(name);
  if (!s->name) return frit_set_error(ctx, FRIT_ERR_NOMEM, "stablehlo: out of memory");
  s->dtype = t->dt;
  s->ndim = t->ndim;
  memcpy(s->dims, t->dims, sizeof s->dims);
  return FRIT_OK;
}

frit_model *frit_import_stablehlo(frit_ctx *ctx, const char *text, size_t len) {
  if (!text) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "frit_import_stablehlo: no text");
    return NULL;
  }
  shlo_impl *impl = calloc(1, sizeof *impl);
  if (!impl) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "stablehlo: out of memory");
    return NULL;
  }
  weight_list w = {0};
  model_value_sig *ins = NULL, *outs = NULL;
  int nin = 0, nout = 0;
  if (shlo_parse(ctx, text, len, &impl->m)) goto fail;
  for (int i = 0; i < impl->m.nfuncs && !impl->main; i++)
    if (!strcmp(impl->m.funcs[i]->name, "main")) impl->main = impl->m.funcs[i];
  if (!impl->main && impl->m.nfuncs == 1) impl->main = impl->m.funcs[0];
  if (!impl->main) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "stablehlo: no function @main among the module's %d functions", impl->m.nfuncs);
    goto fail;
  }
  for (int i = 0; i < impl->m.nfuncs; i++)
    if (collect_weights(ctx, impl->m.funcs[i]->body, &w)) goto fail;
  const shlo_func *f = impl->main;
  nin = f->nargs + w.n;
  nout = f->nres;
  ins = calloc((size_t)(nin ? nin : 1), sizeof *ins);
  outs = calloc((size_t)(nout ? nout : 1), sizeof *outs);
  if (!ins || !outs) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "stablehlo: out of memory");
    goto fail;
  }
  for (int i = 0; i < f->nargs; i++) {
    char nm[32];
    snprintf(nm, sizeof nm, "arg%d", i);
    if (sig_of(ctx, f, &f->arg_types[i], nm, &ins[i])) goto fail;
  }
  if (w.n) memcpy(ins + f->nargs, w.sigs, (size_t)w.n * sizeof *ins);
  free(w.sigs);
  w.sigs = NULL;
  w.n = 0;
  for (int i = 0; i < nout; i++) {
    char nm[32];
    snprintf(nm, sizeof nm, "result%d", i);
    if (sig_of(ctx, f, &f->res_types[i], f->res_names && f->res_names[i] ? f->res_names[i] : nm, &outs[i])) goto fail;
  }
  impl->nweights = nin - f->nargs;
  return model_new(ctx, &stablehlo_ops, impl, nin, ins, nout, outs);
fail:
  for (int i = 0; i < w.n; i++) free(w.sigs[i].name), free(w.sigs[i].data);
  free(w.sigs);
  for (int i = 0; ins && i < nin; i++) free(ins[i].name), free(ins[i].data);
  for (int i = 0; outs && i < nout; i++) free(outs[i].name);
  free(ins);
  free(outs);
  impl_destroy(impl);
  return NULL;
}
