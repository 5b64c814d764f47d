/* Whole-array reductions staged in parallel parts: a reduction of a whole large tensor to one
 * value has no parallel axis, so it is computed as partial results over slices (materialised, so
 * one kernel computes them on every thread) and then their reduction. */
#include "tensor/composite.h"
#include "tensor/grad_rules.h"

/* Static sizes: only those of SPLIT_PARTS * SPLIT_MIN_PART elements and more, which the parts
 * divide; from SPLIT_MANY_PARTS * SPLIT_MIN_PART on, SPLIT_MANY_PARTS parts, since a GPU needs
 * thousands of parts to be busy (a work-group each) and a CPU does not mind.
 * Symbolic sizes (default jit, eager ops), unknown when the graph is built: as many parts as
 * there are SPLIT_SYM_MIN_PART elements, at least 1 and at most SPLIT_SYM_FEW_PARTS (or
 * SPLIT_SYM_PARTS where the size is known to be large), each of floor(size / parts) elements,
 * and a tail of the fewer than `parts` left over, reduced on its own. A part costs a partial
 * result's setup whatever its length (1024 parts of one element each made the eager sum of 1000
 * floats take 17 us; 128 parts of 8 made the eager max of 1000 floats 2.6 us slower than not
 * staged). Padded to whole parts instead, every element's load was guarded by a compare with the
 * size, and max and min needed an identity for every dtype.
 * Design debt: this belongs to the scheduler's kernel optimisation (tiling reductions), where
 * the part count could follow the device. */
enum {
  SPLIT_PARTS = 256, SPLIT_MANY_PARTS = 4096, SPLIT_MIN_PART = 4096,
  SPLIT_SYM_PARTS = 1024, SPLIT_SYM_FEW_PARTS = 128, SPLIT_SYM_MIN_PART = 2048
};

static frit_tensor *parts_of_symbolic(frit_ctx *ctx, frit_tensor *x, frit_uop *numel, frit_tensor **tail) {
  int64_t most = numel->vmin >= (int64_t)SPLIT_PARTS * SPLIT_MIN_PART ? SPLIT_SYM_PARTS : SPLIT_SYM_FEW_PARTS;
  frit_uop *by_size = ti_dim_div(ctx, numel, SPLIT_SYM_MIN_PART);
  frit_uop *nparts = ti_dim_max(ctx, ti_dim(ctx, 1), ti_dim_min(ctx, ti_dim(ctx, most), by_size));
  frit_uop *m = ti_dim_div_by(ctx, numel, nparts), *whole = ti_dim_mul(ctx, nparts, m);
  frit_uop *zero = ti_dim(ctx, 0), *parts_shape[2] = {nparts, m};
  frit_tensor *flat = ti_shape(ctx, x)->ndim == 1 ? x : ti_reshape(ctx, x, 1, &numel);
  frit_tensor *parts = ti_reshape(ctx, ti_shrink(ctx, flat, &zero, &whole), 2, parts_shape);
  *tail = parts ? ti_shrink(ctx, flat, &whole, &numel) : NULL;
  if (!*tail) { /* a size the reshape cannot prove: the unstaged reduction serves */
    frit_clear_error(ctx);
    return NULL;
  }
  return parts;
}

frit_tensor *ti_whole_parts(frit_ctx *ctx, frit_tensor *x, frit_tensor **tail) {
  const frit_shape *s = ti_shape(ctx, x);
  *tail = NULL;
  if (s->ndim == 0) return NULL;
  int64_t numel = 1;
  for (int i = 0; i < s->ndim; i++) {
    int64_t d = frit_dim_value(s->dims[i]);
    if (d < 0) {
      frit_uop *n = s->dims[0];
      for (int k = 1; k < s->ndim; k++) n = ti_dim_mul(ctx, n, s->dims[k]);
      return parts_of_symbolic(ctx, x, n, tail);
    }
    numel *= d;
    if (numel > ((int64_t)1 << 50)) return NULL;
  }
  if (numel < (int64_t)SPLIT_PARTS * SPLIT_MIN_PART || numel % SPLIT_PARTS) return NULL;
  int64_t parts = numel >= (int64_t)SPLIT_MANY_PARTS * SPLIT_MIN_PART && numel % SPLIT_MANY_PARTS == 0 ? SPLIT_MANY_PARTS
                                                                                                        : SPLIT_PARTS;
  int64_t parts_shape[2] = {parts, numel / parts};
  return frit_reshape(ctx, x, 2, parts_shape);
}

frit_tensor *ti_staged_whole_reduce(frit_ctx *ctx, frit_tensor *x, frit_op op) {
  frit_tensor *tail, *parts = ti_whole_parts(ctx, x, &tail);
  if (!parts) return NULL;
  const frit_shape *s = ti_shape(ctx, x);
  /* (over one of two axes each: not staged again) */
  const bool inner[2] = {false, true}, outer[2] = {true, false};
  frit_tensor *partial = frit_contiguous(ctx, ti_reduce_axis(ctx, parts, op, inner));
  frit_tensor *total = ti_reduce_axis(ctx, partial, op, outer);
  frit_uop *one = ti_dim(ctx, 1);
  if (tail) { /* the tail's reduction, which may be of no element (as a row: not staged again) */
    frit_uop *row[2] = {one, ti_shape(ctx, tail)->dims[0]};
    total = ti_alu2(ctx, op, total, ti_reduce_axis(ctx, ti_reshape(ctx, tail, 2, row), op, inner));
  }
  frit_uop *ones[FRIT_MAX_DIMS];
  for (int i = 0; i < s->ndim; i++) ones[i] = one;
  frit_tensor *r = ti_reshape(ctx, total, s->ndim, ones);
  /* ties share the gradient equally over the whole array, as the unstaged reduction's rule has
   * them, not part by part; on a node of its own (a reshape of r would fold into one of total) */
  if ((op == FRIT_OP_MAX || op == FRIT_OP_MIN) && frit_dtype_is_float(frit_tensor_dtype(x)))
    return tg_whole_extreme(ctx, ti_fresh(ctx, r), x);
  return r;
}
