/* Work-group renderings for devices (docs/devices.md, "Work-group reductions"): which fused
 * kernels get one, and how a work-group combines its threads' accumulators. */
#include "codegen/linear.h"

/* On a device, a kernel whose points each reduce a long range can run a work-group per point
 * (GROUP_SIZE threads, each folding a strided share, then combined through local memory): one
 * thread a point leaves most of the device idle when there are few points (a row softmax, a
 * staged full sum) and reads memory with a stride. Which rendering runs is chosen at launch,
 * from the sizes (frit_device_use_groups). Kernels with registers, local arrays, atomics or
 * conditionals have no grouped rendering (their statements are not safe to repeat on every
 * thread), nor kernels whose reductions are short (under GROUP_MIN_TRIP) or whose length
 * depends on the point. */
enum { GROUP_SIZE = 256, GROUP_MIN_TRIP = 256 };

bool cgl_launch_known(const frit_uop *u, int depth) {
  if (u->op == FRIT_OP_CONST || u->op == FRIT_OP_DEFINE_VAR) return true;
  if (depth > 32 || u->op == FRIT_OP_RANGE || (frit_op_flags(u->op) & FRIT_F_MEMORY) || u->nsrc == 0) return false;
  for (uint32_t i = 0; i < u->nsrc; i++)
    if (!cgl_launch_known(u->src[i], depth + 1)) return false;
  return true;
}

int cgl_group_size(cg *g, frit_uop **trip) {
  *trip = NULL;
  if (g->dialect == FRIT_DIALECT_C) return 0;
  for (size_t k = 0; k < g->n; k++) {
    frit_uop *u = g->nodes[k];
    if (u->op == FRIT_OP_DEFINE_REG || u->op == FRIT_OP_DEFINE_LOCAL || u->op == FRIT_OP_ATOMIC ||
        u->op == FRIT_OP_ATOMIC_CAS || u->op == FRIT_OP_IF)
      return 0;
    if (*trip || u->op != FRIT_OP_REDUCE || u->nsrc < 2) continue;
    /* the elements a point reduces: the product of the ranges' extents (the first is split) */
    frit_uop *t = NULL;
    bool known = true, is_const = true;
    int64_t c = 1;
    for (uint32_t i = 1; i < u->nsrc && known; i++) {
      frit_uop *e = u->src[i]->src[0];
      known = cgl_launch_known(e, 0);
      if (e->op == FRIT_OP_CONST) c = c < ((int64_t)1 << 40) ? c * e->arg.value.i : c;
      else is_const = false;
      t = !known ? NULL : t ? frit_binary(g->ctx, FRIT_OP_MUL, t, frit_cast(g->ctx, e, FRIT_I64)) : frit_cast(g->ctx, e, FRIT_I64);
      if (!t) known = false;
    }
    if (known && !(is_const && c < GROUP_MIN_TRIP)) *trip = t;
    if (!known) frit_clear_error(g->ctx);
  }
  return *trip ? GROUP_SIZE : 0;
}

bool cgl_group_combine(cg *g, int b, const char *acc, const char *T, frit_op rop, frit_scalar_kind k, bool wide) {
  const char *S = g->dialect == FRIT_DIALECT_OPENCL ? "__local " : "", *bar = cg_group_barrier(g->dialect);
  cg_str e = {0};
  const char *xy[2] = {"x_", "y_"};
  if (wide) cg_printf(&e, "x_ %s y_", rop == FRIT_OP_ADD ? "+" : "*");
  else if (!cg_render_alu(g->ctx, &e, rop, k, xy, 2)) return cg_free(&e), g->failed = true, false;
  /* a tree over the group's slots, in a fixed order (the same bits on every run) */
  cgl_line(g, b, "{ %s%s *red_ = (%s%s *)frit_red; red_[frit_lid] = %s; %s", S, T, S, T, acc, bar);
  cgl_line(g, b, "  for (int64_t s_ = frit_lsz / 2; s_ > 0; s_ /= 2) {");
  cgl_line(g, b, "    if (frit_lid < s_) { %s x_ = red_[frit_lid], y_ = red_[frit_lid + s_]; red_[frit_lid] = %s; }", T,
           e.s ? e.s : "x_");
  cgl_line(g, b, "    %s", bar);
  cgl_line(g, b, "  }");
  cgl_line(g, b, "  %s = red_[0]; %s }", acc, bar);
  bool ok = !e.oom;
  cg_free(&e);
  return ok || (frit_set_error(g->ctx, FRIT_ERR_NOMEM, "codegen: out of memory"), g->failed = true, false);
}
