/* The kernel function around the linearizer's emitter (linear.c): parameter, variable and
 * register-array declarations, the plain and work-group renderings, and freeing the state. */
#include "codegen/linear.h"

#include <inttypes.h>
#include <string.h>

bool cgl_declare(cg *g, cg_str *fn, uint64_t alias_mask) {
  for (size_t k = 0; k < g->n; k++) {
    frit_uop *u = g->nodes[k];
    char bn[32];
    if (u->op == FRIT_OP_DEFINE_GLOBAL) {
      if (u->arg.i0 < 0) return cgl_fail(g, u, "negative parameter index");
      /* a donated input and the output written into it (alias_mask) may be the same memory */
      bool may_alias = u->arg.i0 < 64 && (alias_mask >> u->arg.i0 & 1);
      cg_param_decl(fn, g->dialect, cg_mtype(frit_dtype_kind(u->dtype)), !may_alias, cgl_base_name(g, u, bn, sizeof bn),
                    u->arg.i0);
    } else if (u->op == FRIT_OP_DEFINE_REG || u->op == FRIT_OP_DEFINE_LOCAL) {
      if (u->arg.i1 < 0 || u->arg.i1 > (1 << 20))
        return cgl_fail(g, u, "register/local arrays need a static element count up to 2^20");
      cg_printf(fn, "  %s %s[%" PRId64 "] = {0};\n", cg_mtype(frit_dtype_kind(u->dtype)), cgl_base_name(g, u, bn, sizeof bn),
                u->arg.i1 ? u->arg.i1 : 1);
    } else if (u->op == FRIT_OP_DEFINE_VAR) {
      for (int i = 0; i < g->nvars; i++)
        if (g->vars[i] == u ||
            (g->vars[i] && g->vars[i]->arg.blob && u->arg.blob && strcmp(g->vars[i]->arg.blob, u->arg.blob) == 0)) {
          cg_var_decl(fn, g->dialect, i, (const char *)u->arg.blob);
          break;
        }
    }
  }
  return true;
}

void cgl_teardown(cg *g) {
  for (int b = 0; b < g->nblocks; b++) {
    cg_free(&g->blocks[b].text);
    cg_free(&g->blocks[b].header);
    cg_free(&g->blocks[b].red);
  }
  if (g->st)
    for (size_t k = 0; k < g->n; k++) free(g->st[k].name);
  free(g->blocks);
  free(g->nodes);
  free(g->pos);
  free(g->free_);
  free(g->scope);
  free(g->dyn);
  free(g->rix);
  free(g->st);
  free(g->stamp);
}

char *frit_codegen_render_kernel(frit_ctx *ctx, frit_uop *opt, const char *fn_name, frit_uop *const *vars,
                                 int nvars, uint64_t alias_mask, frit_dialect dialect, char **linear_text, int *group,
                                 frit_uop **group_trip) {
  cg G;
  cg *g = &G;
  if (linear_text) *linear_text = NULL;
  if (group) *group = 0, *group_trip = NULL;
  char *out = NULL;
  cg_str fn = {0};
  const int root = 0;
  if (!cgl_setup(g, ctx, opt, vars, nvars, dialect)) goto done;
  if (group) {
    g->group = cgl_group_size(g, group_trip);
    *group = g->group;
    if (!g->group) goto done; /* no grouped rendering: the caller keeps the plain one */
  }
  g->group_top = g->g0 ? -2 : root;
  g->alias_mask = alias_mask;
  /* parameters, variables and register arrays at the top */
  cg_kernel_open(&fn, dialect, fn_name, nvars, cg_param_count(g->nodes, g->n), g->group);
  if (!cgl_declare(g, &fn, alias_mask)) goto done;
  if (!cgl_emit(g, opt, root)) goto done;
  if (g->blocks[root].text.oom || fn.oom) {
    frit_set_error(ctx, FRIT_ERR_NOMEM, "codegen: out of memory");
    goto done;
  }
  if (g->blocks[root].text.s) cg_puts(&fn, g->blocks[root].text.s);
  cg_puts(&fn, "}\n");
  out = cg_take(&fn);
  if (!out) frit_set_error(ctx, FRIT_ERR_NOMEM, "codegen: out of memory");
  else if (linear_text) {
    *linear_text = malloc(strlen(out) + 1);
    if (*linear_text) strcpy(*linear_text, out);
  }
done:
  cg_free(&fn);
  cgl_teardown(g);
  return out;
}
