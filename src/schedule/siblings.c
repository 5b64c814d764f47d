/* Sibling outputs (docs/schedule.md, rule 3): an output computed elementwise from the value of
 * an earlier kernel, over the same loops, is stored by that kernel instead of a kernel of its own. */
#include "schedule/sched_internal.h"

static bool is_elementwise(const frit_uop *u) {
  return (frit_op_flags((frit_op)u->op) & FRIT_F_ALU) || u->op == FRIT_OP_CAST || u->op == FRIT_OP_BITCAST;
}

static bool same_shape(frit_ctx *ctx, frit_uop *a, frit_uop *b) {
  const frit_shape *sa = frit_shape_of(ctx, a), *sb = frit_shape_of(ctx, b);
  if (!sa || !sb || sa->ndim != sb->ndim) return false;
  for (int k = 0; k < sa->ndim; k++)
    if (sa->dims[k] != sb->dims[k]) return false;
  return true;
}

static bool stops(const uint8_t *real, const frit_uop *u) {
  return u->op == FRIT_OP_BUFFER || u->op == FRIT_OP_CONST || u->op == FRIT_OP_DEFINE_VAR || real[u->id];
}

/* The fused cone of root (root included, realized sources excluded) as flags by id; NULL: no memory. */
static uint8_t *cone(const uint8_t *real, frit_uop *root) {
  uint8_t *in = calloc((size_t)root->id + 1, 1);
  frit_uop **st = malloc(((size_t)root->id + 2) * sizeof *st);
  if (!in || !st) {
    free(in), free(st);
    return NULL;
  }
  size_t sp = 0;
  st[sp++] = root, in[root->id] = 1;
  while (sp) {
    frit_uop *u = st[--sp];
    for (uint32_t i = 0; i < u->nsrc; i++) {
      frit_uop *s = u->src[i];
      if (!sched_is_tensor_src(u, i) || in[s->id] || stops(real, s)) continue;
      in[s->id] = 1;
      st[sp++] = s;
    }
  }
  free(st);
  return in;
}

/* The realized value under movement ops and casts (NULL when another ALU op comes first): an
 * operand's base. */
static frit_uop *moved_base(const uint8_t *real, frit_uop *x, bool *expanded) {
  /* a cast, too: the gradient rules cast their operands (conv2d's weight gradient) */
  while (!stops(real, x) && (x->op == FRIT_OP_CAST || (frit_op_flags((frit_op)x->op) & FRIT_F_MOVEMENT))) {
    if (x->op == FRIT_OP_EXPAND) *expanded = true;
    x = x->src[0];
  }
  return stops(real, x) && x->op != FRIT_OP_CONST ? x : NULL;
}

/* A sum over products of two different broadcast operands (matmul's form): codegen tiles such a
 * kernel for one store (opt_tile.c, opt_regacc.c), so it keeps a single output. */
static bool matmul_like(frit_ctx *ctx, const uint8_t *real, frit_uop *a, const uint8_t *in) {
  for (uint32_t id = 0; id <= a->id; id++) {
    if (!in[id]) continue;
    frit_uop *u = frit_node_by_id(ctx, id);
    if (u->op != FRIT_OP_REDUCE_AXIS || u->arg.i0 != FRIT_OP_ADD) continue;
    frit_uop *m = u->src[0];
    while (m->op == FRIT_OP_CAST || (!stops(real, m) && (frit_op_flags((frit_op)m->op) & FRIT_F_MOVEMENT))) m = m->src[0];
    if (m->op != FRIT_OP_MUL || stops(real, m)) continue;
    bool ex0 = false, ex1 = false;
    frit_uop *b0 = moved_base(real, m->src[0], &ex0), *b1 = moved_base(real, m->src[1], &ex1);
    if (b0 && b1 && b0 != b1 && (ex0 || ex1)) return true;
  }
  return false;
}

static bool plain_kernel(const frit_uop *u) {
  return u->op != FRIT_OP_SCAN && u->op != FRIT_OP_SCATTER && u->op != FRIT_OP_KERNEL && u->op != FRIT_OP_AFTER &&
         u->op != FRIT_OP_COLLECTIVE &&
         u->op != FRIT_OP_BUFFER && u->op != FRIT_OP_CONST && u->op != FRIT_OP_DEFINE_VAR;
}

/* host_of[id] (by node id, -1 when none) gets, for each output that can be stored by an earlier
 * kernel, that kernel's root. An output b qualifies when its fused cone holds no reduction, every
 * node of the cone on a path to the host value a is elementwise over b's shape (so it reads a at
 * the kernel's own index), a is the latest kernel b reads, and a is an ordinary kernel. */
frit_status sched_find_siblings(frit_ctx *ctx, const uint8_t *real, const uint8_t *heavy, frit_uop *const *outs,
                                int nout, int32_t *host_of) {
  for (int k = 0; k < nout; k++) {
    frit_uop *b = outs[k];
    if (!plain_kernel(b) || !real[b->id] || heavy[b->id] || host_of[b->id] >= 0 || b->op == FRIT_OP_CONTIGUOUS)
      continue;
    uint8_t *in = cone(real, b);
    if (!in) return frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
    /* the latest kernel b reads */
    frit_uop *a = NULL;
    for (uint32_t id = 0; id <= b->id; id++) {
      if (!in[id]) continue;
      frit_uop *u = frit_node_by_id(ctx, id);
      for (uint32_t i = 0; i < u->nsrc; i++) {
        frit_uop *s = u->src[i];
        if (sched_is_tensor_src(u, i) && stops(real, s) && s->op != FRIT_OP_CONST && (!a || s->id > a->id)) a = s;
      }
    }
    bool ok = a && plain_kernel(a) && a->op != FRIT_OP_CONTIGUOUS && host_of[a->id] < 0 && same_shape(ctx, a, b);
    uint8_t *reach = ok ? calloc((size_t)b->id + 1, 1) : NULL;
    ok = ok && reach;
    for (uint32_t id = 0; ok && id <= b->id; id++) {
      if (!in[id]) continue;
      frit_uop *u = frit_node_by_id(ctx, id);
      for (uint32_t i = 0; i < u->nsrc; i++)
        if (sched_is_tensor_src(u, i) && (u->src[i] == a || (in[u->src[i]->id] && reach[u->src[i]->id]))) reach[id] = 1;
      if (reach[id] && (!is_elementwise(u) || !same_shape(ctx, u, b))) ok = false;
    }
    free(reach);
    free(in);
    if (!ok) continue;
    uint8_t *ain = cone(real, a);
    if (!ain) return frit_set_error(ctx, FRIT_ERR_NOMEM, "schedule: out of memory");
    if (!matmul_like(ctx, real, a, ain)) host_of[b->id] = (int32_t)a->id;
    free(ain);
  }
  /* a host that became a sibling itself has no kernel of its own: its siblings keep theirs */
  for (int k = 0; k < nout; k++) {
    int32_t h = host_of[outs[k]->id];
    if (h >= 0 && host_of[h] >= 0) host_of[outs[k]->id] = -1;
  }
  return FRIT_OK;
}
