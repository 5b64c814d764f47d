/* Gradient rules attached to tensor nodes (frit_set_vjp): a per-context table from node to rule,
 * read by frit_vjp. The ops built from explicit kernels (sort, frit.linalg) attach theirs here. */
#include "tensor/tensor_internal.h"

enum { VJP_MAX_INS = 4, VJP_MAX_PARAMS = 8 };

typedef struct ti_vjp_entry {
  frit_uop *out; /* NULL: empty slot */
  frit_vjp_rule rule;
  int nin;
  frit_tensor *ins[VJP_MAX_INS];
  int64_t params[VJP_MAX_PARAMS];
} ti_vjp_entry;

struct ti_vjp_table {
  ti_vjp_entry *slots;
  size_t cap, count;
};

static void table_destroy(void *p) {
  struct ti_vjp_table *t = p;
  free(t->slots);
  free(t);
}

static size_t slot_of(const struct ti_vjp_table *t, const frit_uop *u) {
  size_t i = (size_t)(u->hash ^ u->id) & (t->cap - 1);
  while (t->slots[i].out && t->slots[i].out != u) i = (i + 1) & (t->cap - 1);
  return i;
}

static bool grow(frit_ctx *ctx, struct ti_vjp_table *t) {
  size_t cap = t->cap ? t->cap * 2 : 64;
  ti_vjp_entry *old = t->slots, *s = calloc(cap, sizeof *s);
  if (!s) return false;
  size_t oldcap = t->cap;
  t->slots = s, t->cap = cap;
  for (size_t i = 0; i < oldcap; i++)
    if (old[i].out) t->slots[slot_of(t, old[i].out)] = old[i];
  free(old);
  (void)ctx;
  return true;
}

frit_status frit_set_vjp(frit_ctx *ctx, frit_tensor *out, int nin, frit_tensor *const *ins, frit_vjp_rule rule,
                         const int64_t *params, int nparams) {
  if (!ctx) return FRIT_ERR_INVALID;
  if (!out || !rule || nin < 0 || nin > VJP_MAX_INS || nparams < 0 || nparams > VJP_MAX_PARAMS ||
      (nin && !ins) || (nparams && !params)) {
    ti_fail(ctx, "set_vjp", NULL, 0, "needs an output, a rule, at most %d inputs and %d params", VJP_MAX_INS,
            VJP_MAX_PARAMS);
    return ctx->status;
  }
  for (int i = 0; i < nin; i++)
    if (!ins[i] || TI_U(ins[i])->id >= TI_U(out)->id) {
      ti_fail(ctx, "set_vjp", NULL, 0, "input %d is NULL or not built before the output", i);
      return ctx->status;
    }
  struct ti_vjp_table *t = ctx->vjp_rules;
  if (!t) {
    t = calloc(1, sizeof *t);
    if (!t) return frit_set_error(ctx, FRIT_ERR_NOMEM, "out of memory");
    if (!frit_ctx_own(ctx, t, table_destroy)) return ctx->status; /* it freed t */
    ctx->vjp_rules = t;
  }
  if (2 * (t->count + 1) > t->cap && !grow(ctx, t)) return frit_set_error(ctx, FRIT_ERR_NOMEM, "out of memory");
  ti_vjp_entry *e = &t->slots[slot_of(t, TI_U(out))];
  if (!e->out) t->count++;
  memset(e, 0, sizeof *e);
  e->out = TI_U(out), e->rule = rule, e->nin = nin;
  for (int i = 0; i < nin; i++) e->ins[i] = ins[i];
  for (int i = 0; i < nparams; i++) e->params[i] = params[i];
  return FRIT_OK;
}

bool ti_vjp_lookup(frit_ctx *ctx, const frit_uop *u, frit_vjp_rule *rule, int *nin, frit_tensor *const **ins,
                   const int64_t **params) {
  struct ti_vjp_table *t = ctx->vjp_rules;
  if (!t || !t->count) return false;
  const ti_vjp_entry *e = &t->slots[slot_of(t, u)];
  if (!e->out) return false;
  *rule = e->rule, *nin = e->nin, *ins = e->ins, *params = e->params;
  return true;
}

frit_status ti_vjp_copy(frit_ctx *ctx, const frit_uop *from, frit_tensor *to, frit_tensor *const *ins) {
  frit_vjp_rule rule;
  int nin;
  frit_tensor *const *old;
  const int64_t *params;
  if (!ti_vjp_lookup(ctx, from, &rule, &nin, &old, &params)) return FRIT_OK;
  return frit_set_vjp(ctx, to, nin, ins, rule, params, VJP_MAX_PARAMS);
}
