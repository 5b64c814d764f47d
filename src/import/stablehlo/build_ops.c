/* The StableHLO ops with structure: dot_general, convolution, reduce and reduce_window with their
 * regions, gather and scatter in their general dimension numbers, sort, dynamic slices. */
#include <stdlib.h>
#include <string.h>

#include "import/stablehlo/build.h"
#include "ir/uop.h"
#include "tensor/tensor_internal.h"

static shlo_attr *attr2(const shlo_op *op, const char *a, const char *b) {
  shlo_attr *r = shlo_attr_get(op, a);
  return r ? r : b ? shlo_attr_get(op, b) : NULL;
}

/* A field of a #stablehlo.xxx<...> struct attribute, or the pretty form's own attribute. */
static int dn_ints(const shlo_attr *dn, const char *key, int64_t *out) {
  shlo_attr *a = shlo_dict_get(dn, key);
  if (!a) return 0;
  return shlo_attr_ints(a, out, FRIT_MAX_DIMS);
}

/* ---------------------------------------------------------------- dot_general */
/* A movement of an input or a constant: reading it in a product costs a load, nothing to redo. */
static int view_of_leaf(const frit_tensor *t) {
  const frit_uop *u = frit_tensor_uop(t);
  while (u && (frit_uop_op(u) == FRIT_OP_RESHAPE || frit_uop_op(u) == FRIT_OP_PERMUTE || frit_uop_op(u) == FRIT_OP_EXPAND))
    u = frit_uop_src((frit_uop *)u, 0);
  return u && (frit_uop_op(u) == FRIT_OP_BUFFER || frit_uop_op(u) == FRIT_OP_CONST || frit_uop_op(u) == FRIT_OP_CONTIGUOUS);
}

frit_status shlo_dot_general(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out) {
  (void)env;
  frit_ctx *ctx = b->ctx;
  int64_t lb[FRIT_MAX_DIMS], rb[FRIT_MAX_DIMS], lc[FRIT_MAX_DIMS], rc[FRIT_MAX_DIMS];
  int nb = 0, nc = 0;
  shlo_attr *dn = shlo_attr_get(op, "dot_dimension_numbers");
  if (dn) {
    nb = dn_ints(dn, "lhs_batching_dimensions", lb);
    if (dn_ints(dn, "rhs_batching_dimensions", rb) != nb) return shlo_fail(b, op, "batching dimensions differ in count");
    nc = dn_ints(dn, "lhs_contracting_dimensions", lc);
    if (dn_ints(dn, "rhs_contracting_dimensions", rc) != nc) return shlo_fail(b, op, "contracting dimensions differ in count");
  } else {
    shlo_attr *bd = shlo_attr_get(op, "batching_dims"), *cd = shlo_attr_get(op, "contracting_dims");
    if (bd) {
      if (bd->kind != SA_LIST || bd->n != 2) return shlo_fail(b, op, "batching_dims must be [..] x [..]");
      nb = shlo_attr_ints(bd->items[0], lb, FRIT_MAX_DIMS);
      if (shlo_attr_ints(bd->items[1], rb, FRIT_MAX_DIMS) != nb) return shlo_fail(b, op, "batching dims differ in count");
    }
    if (cd) {
      if (cd->kind != SA_LIST || cd->n != 2) return shlo_fail(b, op, "contracting_dims must be [..] x [..]");
      nc = shlo_attr_ints(cd->items[0], lc, FRIT_MAX_DIMS);
      if (shlo_attr_ints(cd->items[1], rc, FRIT_MAX_DIMS) != nc) return shlo_fail(b, op, "contracting dims differ in count");
    }
  }
  if (nb < 0 || nc < 0) return shlo_fail(b, op, "bad dimension numbers");
  const shlo_type *t = shlo_rtype(op, 0);
  if (!t || t->dt == FRIT_VOID) return shlo_fail(b, op, "needs a result type");
  frit_tensor *l = frit_astype(ctx, in[0], t->dt), *r = frit_astype(ctx, in[1], t->dt);
  SHLO_CHECK(b, op, l && r);
  int lr = frit_tensor_ndim(l), rr = frit_tensor_ndim(r);
  /* lhs to (batch, free, contracting), rhs to (batch, contracting, free): one batched matmul */
  int lperm[FRIT_MAX_DIMS], rperm[FRIT_MAX_DIMS], lfree[FRIT_MAX_DIMS], rfree[FRIT_MAX_DIMS], nlf = 0, nrf = 0;
  int used_l[FRIT_MAX_DIMS] = {0}, used_r[FRIT_MAX_DIMS] = {0};
  for (int i = 0; i < nb; i++) {
    if (lb[i] < 0 || lb[i] >= lr || rb[i] < 0 || rb[i] >= rr) return shlo_fail(b, op, "batching dimension out of range");
    used_l[lb[i]] = used_r[rb[i]] = 1;
  }
  for (int i = 0; i < nc; i++) {
    if (lc[i] < 0 || lc[i] >= lr || rc[i] < 0 || rc[i] >= rr) return shlo_fail(b, op, "contracting dimension out of range");
    used_l[lc[i]] = used_r[rc[i]] = 1;
  }
  for (int d = 0; d < lr; d++)
    if (!used_l[d]) lfree[nlf++] = d;
  for (int d = 0; d < rr; d++)
    if (!used_r[d]) rfree[nrf++] = d;
  int k = 0;
  for (int i = 0; i < nb; i++) lperm[k++] = (int)lb[i];
  for (int i = 0; i < nlf; i++) lperm[k++] = lfree[i];
  for (int i = 0; i < nc; i++) lperm[k++] = (int)lc[i];
  k = 0;
  for (int i = 0; i < nb; i++) rperm[k++] = (int)rb[i];
  for (int i = 0; i < nc; i++) rperm[k++] = (int)rc[i];
  for (int i = 0; i < nrf; i++) rperm[k++] = rfree[i];
  l = frit_permute(ctx, l, lperm);
  r = frit_permute(ctx, r, rperm);
  SHLO_CHECK(b, op, l && r);
  int ax[FRIT_MAX_DIMS];
  frit_uop *ld[FRIT_MAX_DIMS + 3], *rd[FRIT_MAX_DIMS + 3], *od[2 * FRIT_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < nb; i++) ld[n] = rd[n] = frit_tensor_dim(l, i), od[n] = ld[n], n++;
  for (int i = 0; i < nlf; i++) ax[i] = nb + i;
  ld[n] = shlo_dim_prod(ctx, l, ax, nlf);
  for (int i = 0; i < nc; i++) ax[i] = nb + nlf + i;
  ld[n + 1] = shlo_dim_prod(ctx, l, ax, nc);
  rd[n] = ld[n + 1];
  for (int i = 0; i < nrf; i++) ax[i] = nb + nc + i;
  rd[n + 1] = shlo_dim_prod(ctx, r, ax, nrf);
  l = frit_reshape_sym(ctx, l, n + 2, ld);
  r = frit_reshape_sym(ctx, r, n + 2, rd);
  /* operands computed elementwise (a ReLU's mask in a backward pass) would be recomputed for every
   * tile of the product: materialised first, the product runs at its tiled speed */
  if (!view_of_leaf(l)) l = frit_contiguous(ctx, l);
  if (!view_of_leaf(r)) r = frit_contiguous(ctx, r);
  frit_tensor *m = frit_matmul(ctx, l, r);
  SHLO_CHECK(b, op, m);
  int no = n;
  for (int i = 0; i < nlf; i++) od[no++] = frit_tensor_dim(in[0], lfree[i]);
  for (int i = 0; i < nrf; i++) od[no++] = frit_tensor_dim(in[1], rfree[i]);
  out[0] = frit_reshape_sym(ctx, m, no, od);
  SHLO_CHECK(b, op, out[0]);
  return FRIT_OK;
}

/* ---------------------------------------------------------------- convolution */
typedef struct conv_dims {
  int in_batch, in_feat, in_sp[3];
  int k_in, k_out, k_sp[3];
  int out_batch, out_feat, out_sp[3];
  int nsp;
} conv_dims;

/* "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]" or the pretty form's three lists. */
static int conv_layout_list(const shlo_attr *l, int *batch, int *feat, int *sp, int *nsp, char bc, char fc) {
  if (!l || l->kind != SA_LIST) return 0;
  *nsp = 0;
  for (int d = 0; d < l->n; d++) {
    const shlo_attr *e = l->items[d];
    if (d > 3) return 0;
    if (e->kind == SA_INT) {
      if (e->i < 0 || e->i > 1) return 0;
      sp[e->i] = d;
      (*nsp)++;
    } else if (e->kind == SA_WORD && e->s[1] == 0 && e->s[0] == bc) {
      *batch = d;
    } else if (e->kind == SA_WORD && e->s[1] == 0 && e->s[0] == fc) {
      *feat = d;
    } else {
      return 0;
    }
  }
  return 1;
}

static int parse_raw_layout(const char *s, shlo_attr lists[3], shlo_attr items[3][FRIT_MAX_DIMS],
                            shlo_attr *ptrs[3][FRIT_MAX_DIMS], char words[3][FRIT_MAX_DIMS][2]) {
  int li = -1, n = 0;
  for (const char *p = s; *p; p++) {
    if (*p == '[') {
      if (++li > 2) return 0;
      n = 0;
      lists[li].kind = SA_LIST;
      lists[li].items = ptrs[li];
    } else if (*p == ']') {
      lists[li].n = n;
    } else if (li >= 0 && (*p >= '0' && *p <= '9')) {
      if (n == FRIT_MAX_DIMS) return 0;
      items[li][n].kind = SA_INT;
      items[li][n].i = *p - '0';
      ptrs[li][n] = &items[li][n];
      n++;
    } else if (li >= 0 && (*p == 'b' || *p == 'f' || *p == 'i' || *p == 'o')) {
      if (n == FRIT_MAX_DIMS) return 0;
      items[li][n].kind = SA_WORD;
      words[li][n][0] = *p;
      words[li][n][1] = 0;
      items[li][n].s = words[li][n];
      ptrs[li][n] = &items[li][n];
      n++;
    }
  }
  return li == 2;
}

static int conv_layout(const shlo_op *op, conv_dims *cd) {
  shlo_attr *a = attr2(op, "dim_numbers", "dimension_numbers");
  shlo_attr lists[3], items[3][FRIT_MAX_DIMS], *ptrs[3][FRIT_MAX_DIMS];
  char words[3][FRIT_MAX_DIMS][2];
  const shlo_attr *l0, *l1, *l2;
  memset(lists, 0, sizeof lists);
  memset(items, 0, sizeof items);
  if (a && a->kind == SA_RAW) {
    if (!parse_raw_layout(a->s, lists, items, ptrs, words)) return 0;
    l0 = &lists[0], l1 = &lists[1], l2 = &lists[2];
  } else if (a && a->kind == SA_LIST && a->n == 3) {
    l0 = a->items[0], l1 = a->items[1], l2 = a->items[2];
  } else {
    return 0;
  }
  int n0 = 0, n1 = 0, n2 = 0;
  if (!conv_layout_list(l0, &cd->in_batch, &cd->in_feat, cd->in_sp, &n0, 'b', 'f') ||
      !conv_layout_list(l1, &cd->k_in, &cd->k_out, cd->k_sp, &n1, 'i', 'o') ||
      !conv_layout_list(l2, &cd->out_batch, &cd->out_feat, cd->out_sp, &n2, 'b', 'f'))
    return 0;
  cd->nsp = n0;
  /* each list: the batch (or output) axis, the feature (input) axis and the spatial ones, once */
  return n0 == n1 && n1 == n2 && n0 >= 1 && n0 <= 2 && l0->n == n0 + 2 && l1->n == n0 + 2 && l2->n == n0 + 2 &&
         cd->in_batch != cd->in_feat && cd->k_in != cd->k_out && cd->out_batch != cd->out_feat;
}

static int window_ints(const shlo_op *op, const char *pretty, const char *generic, int64_t *out, int n, int64_t dflt) {
  for (int i = 0; i < n; i++) out[i] = dflt;
  shlo_attr *w = shlo_attr_get(op, "window");
  shlo_attr *a = w ? shlo_dict_get(w, pretty) : shlo_attr_get(op, generic);
  if (!a) return 1;
  return shlo_attr_ints(a, out, n) == n;
}

frit_status shlo_convolution(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out) {
  (void)env;
  frit_ctx *ctx = b->ctx;
  conv_dims cd;
  memset(&cd, 0, sizeof cd);
  if (!conv_layout(op, &cd)) return shlo_fail(b, op, "dimension numbers not understood (1-D and 2-D convolutions are supported)");
  int ns = cd.nsp;
  int64_t stride[2], lhs_dil[2], rhs_dil[2], pad[4] = {0, 0, 0, 0}, rev[2], fgc = 1, bgc = 1;
  if (!window_ints(op, "stride", "window_strides", stride, ns, 1) ||
      !window_ints(op, "lhs_dilate", "lhs_dilation", lhs_dil, ns, 1) ||
      !window_ints(op, "rhs_dilate", "rhs_dilation", rhs_dil, ns, 1) ||
      !window_ints(op, "reverse", "window_reversal", rev, ns, 0) || !window_ints(op, "pad", "padding", pad, 2 * ns, 0))
    return shlo_fail(b, op, "window attributes not understood");
  shlo_attr *a;
  if ((a = shlo_attr_get(op, "feature_group_count")) && shlo_attr_ints(a, &fgc, 1) != 1) return shlo_fail(b, op, "bad feature_group_count");
  if ((a = shlo_attr_get(op, "batch_group_count")) && shlo_attr_ints(a, &bgc, 1) != 1) return shlo_fail(b, op, "bad batch_group_count");
  if (bgc != 1) return shlo_fail(b, op, "batch_group_count %lld is not supported", (long long)bgc);
  const shlo_type *t = shlo_rtype(op, 0);
  if (!t || t->dt == FRIT_VOID) return shlo_fail(b, op, "needs a result type");
  frit_tensor *x = frit_astype(ctx, in[0], t->dt), *w = frit_astype(ctx, in[1], t->dt);
  int perm[4];
  perm[0] = cd.in_batch, perm[1] = cd.in_feat;
  for (int i = 0; i < ns; i++) perm[2 + i] = cd.in_sp[i];
  x = frit_permute(ctx, x, perm);
  perm[0] = cd.k_out, perm[1] = cd.k_in;
  for (int i = 0; i < ns; i++) perm[2 + i] = cd.k_sp[i];
  w = frit_permute(ctx, w, perm);
  SHLO_CHECK(b, op, x && w);
  if (ns == 1) { /* 1-D as 2-D with a unit height */
    x = frit_unsqueeze(ctx, x, 2);
    w = frit_unsqueeze(ctx, w, 2);
    stride[1] = stride[0], stride[0] = 1;
    lhs_dil[1] = lhs_dil[0], lhs_dil[0] = 1;
    rhs_dil[1] = rhs_dil[0], rhs_dil[0] = 1;
    rev[1] = rev[0], rev[0] = 0;
    pad[2] = pad[0], pad[3] = pad[1], pad[0] = pad[1] = 0;
  }
  int flip_axes[2], nflip = 0;
  for (int i = 0; i < 2; i++)
    if (rev[i]) flip_axes[nflip++] = 2 + i;
  if (nflip) w = frit_flip(ctx, w, flip_axes, nflip);
  int64_t lo[4] = {0, 0, pad[0], pad[2]}, hi[4] = {0, 0, pad[1], pad[3]}, inter[4] = {0, 0, lhs_dil[0] - 1, lhs_dil[1] - 1};
  int64_t cpad[2] = {0, 0};
  if (!inter[2] && !inter[3] && pad[0] == pad[1] && pad[2] == pad[3] && pad[0] >= 0 && pad[2] >= 0) {
    cpad[0] = pad[0], cpad[1] = pad[2]; /* the convolution pads by itself */
  } else if (pad[0] || pad[1] || pad[2] || pad[3] || inter[2] || inter[3]) {
    x = shlo_pad_value(ctx, x, frit_scalar_f(ctx, t->dt, 0), lo, hi, inter);
  }
  frit_tensor *y = frit_conv2d(ctx, x, w, NULL, stride, cpad, rhs_dil, fgc);
  SHLO_CHECK(b, op, y);
  if (ns == 1) y = frit_squeeze(ctx, y, (int[]){2}, 1);
  /* (N, O, spatial...) to the output layout */
  int inv[4], where_[4] = {0, 0, 0, 0};
  where_[cd.out_batch] = 0, where_[cd.out_feat] = 1;
  for (int i = 0; i < ns; i++) where_[cd.out_sp[i]] = 2 + i;
  for (int d = 0; d < ns + 2; d++) inv[d] = where_[d];
  out[0] = frit_permute(ctx, y, inv);
  SHLO_CHECK(b, op, out[0]);
  return FRIT_OK;
}

/* ---------------------------------------------------------------- reductions */
const char *shlo_region_binop(const shlo_region *r) {
  if (r->nargs != 2 || r->nops != 2) return NULL;
  const shlo_op *o = r->ops[0], *ret = r->ops[1];
  if (o->nopnd != 2 || o->nres != 1 || ret->nopnd != 1 || ret->opnd[0] != o->res0) return NULL;
  int a = o->opnd[0], c = o->opnd[1];
  if (!((a == r->args[0] && c == r->args[1]) || (a == r->args[1] && c == r->args[0]))) return NULL;
  const char *dot = strchr(o->name, '.');
  return dot ? dot + 1 : o->name;
}

static frit_tensor *reduce_by(frit_ctx *ctx, const char *opname, frit_tensor *x, const int *axes, int n) {
  frit_dtype dt = frit_tensor_dtype(x);
  int isbool = frit_dtype_is_bool(dt);
  frit_rfunc f;
  if (!strcmp(opname, "add")) f = isbool ? FRIT_RF_ANY : FRIT_RF_SUM;
  else if (!strcmp(opname, "multiply")) f = isbool ? FRIT_RF_ALL : FRIT_RF_PROD;
  else if (!strcmp(opname, "maximum")) f = isbool ? FRIT_RF_ANY : FRIT_RF_MAX;
  else if (!strcmp(opname, "minimum")) f = isbool ? FRIT_RF_ALL : FRIT_RF_MIN;
  else if (!strcmp(opname, "and") && isbool) f = FRIT_RF_ALL;
  else if (!strcmp(opname, "or") && isbool) f = FRIT_RF_ANY;
  else return NULL;
  frit_tensor *r = frit_reduce(ctx, f, x, axes, n, 0, 0);
  return r && frit_tensor_dtype(r) != dt ? frit_astype(ctx, r, dt) : r;
}

/* Any reducer region (several operands, argmax's compare-and-select): the reduced axes moved
 * last and flattened, then halves joined by the region, evaluated on whole tensors (its ops are
 * elementwise), until one element is left. The reducer is associative and commutative, so this
 * order is as good as any. */
static frit_status tree_reduce(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, const int *axes, int nd,
                               frit_tensor **out) {
  frit_ctx *ctx = b->ctx;
  int n = op->nopnd / 2, r = frit_tensor_ndim(in[0]);
  int perm[FRIT_MAX_DIMS], keep = 0, red[FRIT_MAX_DIMS] = {0};
  for (int i = 0; i < nd; i++) red[axes[i]] = 1;
  for (int d = 0; d < r; d++)
    if (!red[d]) perm[keep++] = d;
  for (int i = 0; i < nd; i++) perm[keep + i] = axes[i];
  frit_tensor *v[64], *args[128];
  frit_uop *shape[FRIT_MAX_DIMS + 1];
  int64_t len = 1;
  for (int i = 0; i < nd; i++) {
    int64_t e = frit_tensor_dim_static(in[0], axes[i]);
    if (e < 0) return shlo_fail(b, op, "needs static reduced dims");
    len *= e;
  }
  for (int k = 0; k < n; k++) {
    frit_tensor *x = frit_permute(ctx, in[k], perm);
    for (int d = 0; d < keep; d++) shape[d] = frit_tensor_dim(x, d);
    shape[keep] = frit_const_int(ctx, FRIT_I64, len);
    v[k] = frit_reshape_sym(ctx, x, keep + 1, shape);
    SHLO_CHECK(b, op, v[k]);
  }
  if (len == 0) {
    for (int k = 0; k < n; k++) out[k] = frit_broadcast_to_sym(ctx, in[n + k], keep, shape);
    return FRIT_OK;
  }
  int64_t st[FRIT_MAX_DIMS + 1], li[FRIT_MAX_DIMS + 1], sp[FRIT_MAX_DIMS + 1];
  for (int d = 0; d <= keep; d++) st[d] = 0, li[d] = FRIT_SLICE_DEFAULT, sp[d] = 1;
  while (len > 1) {
    int64_t h = len / 2;
    for (int k = 0; k < n; k++) {
      st[keep] = 0, li[keep] = h;
      args[k] = frit_slice(ctx, v[k], st, li, sp);
      st[keep] = h, li[keep] = 2 * h;
      args[n + k] = frit_slice(ctx, v[k], st, li, sp);
    }
    frit_tensor *res[64];
    int nr = 0;
    frit_status s = shlo_run_region(b, op->regions[0], env, args, 2 * n, res, &nr, 64);
    if (s) return s;
    if (nr != n) return shlo_fail(b, op, "reducer gives %d values for %d operands", nr, n);
    for (int k = 0; k < n; k++) {
      frit_uop *hd[FRIT_MAX_DIMS + 1]; /* a region value may be a 0-d constant: widen it */
      for (int dd = 0; dd <= keep; dd++) hd[dd] = frit_tensor_dim(args[k], dd);
      res[k] = frit_broadcast_to_sym(ctx, res[k], keep + 1, hd);
      if (len % 2) { /* the odd one out rides along */
        st[keep] = 2 * h, li[keep] = len;
        res[k] = frit_concat(ctx, (frit_tensor *[]){res[k], frit_slice(ctx, v[k], st, li, sp)}, 2, keep);
      }
      v[k] = res[k];
      SHLO_CHECK(b, op, v[k]);
    }
    len = h + len % 2;
  }
  /* the inits join once */
  for (int k = 0; k < n; k++) args[k] = frit_squeeze(ctx, v[k], (int[]){keep}, 1), args[n + k] = in[n + k];
  int nr = 0;
  frit_status s = shlo_run_region(b, op->regions[0], env, args, 2 * n, out, &nr, 64);
  if (!s && nr != n) s = shlo_fail(b, op, "reducer gives %d values for %d operands", nr, n);
  return s;
}

frit_status shlo_reduce(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out) {
  frit_ctx *ctx = b->ctx;
  int n = op->nopnd / 2;
  if (n < 1 || 2 * n != op->nopnd || op->nres != n || n > 64) return shlo_fail(b, op, "needs inputs and as many inits");
  const char *fn = NULL;
  for (int i = 0; i + 1 < op->nword; i++)
    if (!strcmp(op->words[i], "applies")) fn = strchr(op->words[i + 1], '.') ? strchr(op->words[i + 1], '.') + 1 : op->words[i + 1];
  if (!fn && op->nregion == 1) fn = shlo_region_binop(op->regions[0]);
  int64_t d[FRIT_MAX_DIMS];
  int nd = shlo_attr_ints(attr2(op, "dimensions", NULL), d, FRIT_MAX_DIMS);
  if (nd < 0) return shlo_fail(b, op, "needs dimensions");
  int axes[FRIT_MAX_DIMS];
  for (int i = 0; i < nd; i++) {
    if (d[i] < 0 || d[i] >= frit_tensor_ndim(in[0])) return shlo_fail(b, op, "dimension %lld out of range", (long long)d[i]);
    axes[i] = (int)d[i];
  }
  frit_tensor *r = fn && n == 1 ? (nd ? reduce_by(ctx, fn, in[0], axes, nd) : in[0]) : NULL;
  if (!r) {
    if (frit_last_status(ctx) && fn && n == 1) return shlo_wrap(b, op);
    if (op->nregion != 1) return shlo_fail(b, op, "reduction by %s is not supported", fn ? fn : "?");
    frit_clear_error(ctx);
    return tree_reduce(b, op, env, in, axes, nd, out);
  }
  out[0] = shlo_binop(ctx, fn, r, in[1]); /* the init joins once */
  SHLO_CHECK(b, op, out[0]);
  return FRIT_OK;
}

frit_status shlo_reduce_window(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out) {
  (void)env;
  frit_ctx *ctx = b->ctx;
  if (op->nopnd != 2 || op->nres != 1 || op->nregion != 1) return shlo_fail(b, op, "only one operand is supported");
  const char *fn = shlo_region_binop(op->regions[0]);
  if (!fn) return shlo_fail(b, op, "its region is not one binary op of its arguments");
  frit_tensor *x = in[0], *init = in[1];
  int r = frit_tensor_ndim(x);
  int64_t wd[FRIT_MAX_DIMS], ws[FRIT_MAX_DIMS], bd[FRIT_MAX_DIMS], wdl[FRIT_MAX_DIMS], pad[2 * FRIT_MAX_DIMS];
  if (shlo_attr_ints(shlo_attr_get(op, "window_dimensions"), wd, FRIT_MAX_DIMS) != r)
    return shlo_fail(b, op, "needs window_dimensions for %d axes", r);
  for (int i = 0; i < r; i++) ws[i] = bd[i] = wdl[i] = 1, pad[2 * i] = pad[2 * i + 1] = 0;
  shlo_attr *a;
  if ((a = shlo_attr_get(op, "window_strides")) && shlo_attr_ints(a, ws, FRIT_MAX_DIMS) != r) return shlo_fail(b, op, "bad window_strides");
  if ((a = shlo_attr_get(op, "base_dilations")) && shlo_attr_ints(a, bd, FRIT_MAX_DIMS) != r) return shlo_fail(b, op, "bad base_dilations");
  if ((a = shlo_attr_get(op, "window_dilations")) && shlo_attr_ints(a, wdl, FRIT_MAX_DIMS) != r) return shlo_fail(b, op, "bad window_dilations");
  if ((a = shlo_attr_get(op, "padding")) && shlo_attr_ints(a, pad, 2 * FRIT_MAX_DIMS) != 2 * r) return shlo_fail(b, op, "bad padding");
  /* a window over a whole padded axis moving by one: a running reduction (jax's cumsum etc.) */
  int cum_axis = -1, others_unit = 1;
  for (int i = 0; i < r; i++) {
    int64_t n = frit_tensor_dim_static(x, i);
    if (wd[i] == n && n > 1 && ws[i] == 1 && bd[i] == 1 && wdl[i] == 1 && pad[2 * i] == n - 1 && pad[2 * i + 1] == 0)
      cum_axis = cum_axis < 0 ? i : -2;
    else if (!(wd[i] == 1 && ws[i] == 1 && bd[i] == 1 && pad[2 * i] == 0 && pad[2 * i + 1] == 0))
      others_unit = 0;
  }
  if (cum_axis >= 0 && others_unit && (!strcmp(fn, "add") || !strcmp(fn, "multiply") || !strcmp(fn, "maximum") ||
                                        !strcmp(fn, "minimum"))) {
    frit_tensor *s;
    if (!strcmp(fn, "add")) s = frit_cumsum(ctx, x, cum_axis);
    else if (!strcmp(fn, "multiply")) s = frit_cumprod(ctx, x, cum_axis);
    else s = ti_scan(ctx, x, !strcmp(fn, "maximum") ? FRIT_OP_MAX : FRIT_OP_MIN, cum_axis);
    if (s && frit_tensor_dtype(s) != frit_tensor_dtype(x)) s = frit_astype(ctx, s, frit_tensor_dtype(x));
    out[0] = shlo_binop(ctx, fn, s, init);
    SHLO_CHECK(b, op, out[0]);
    return FRIT_OK;
  }
  /* otherwise: pad with the init, then join one strided slice per window offset */
  int64_t lo[FRIT_MAX_DIMS], hi[FRIT_MAX_DIMS], inter[FRIT_MAX_DIMS], offsets = 1;
  for (int i = 0; i < r; i++) lo[i] = pad[2 * i], hi[i] = pad[2 * i + 1], inter[i] = bd[i] - 1, offsets *= wd[i];
  if (offsets > 1024) return shlo_fail(b, op, "windows of %lld elements are not supported (at most 1024)", (long long)offsets);
  frit_tensor *p = shlo_pad_value(ctx, x, init, lo, hi, inter);
  SHLO_CHECK(b, op, p);
  int64_t odims[FRIT_MAX_DIMS];
  const shlo_type *t = shlo_rtype(op, 0);
  if (shlo_static_dims(b, op, t, odims)) return frit_last_status(ctx);
  frit_tensor *acc = NULL;
  for (int64_t k = 0; k < offsets; k++) {
    int64_t rem = k, st[FRIT_MAX_DIMS], li[FRIT_MAX_DIMS];
    for (int i = r - 1; i >= 0; i--) {
      int64_t o = rem % wd[i];
      rem /= wd[i];
      st[i] = o * wdl[i];
      li[i] = st[i] + (odims[i] - 1) * ws[i] + 1;
    }
    frit_tensor *s = frit_slice(ctx, p, st, li, ws);
    acc = acc ? shlo_binop(ctx, fn, acc, s) : s;
    SHLO_CHECK(b, op, acc);
  }
  out[0] = acc;
  return FRIT_OK;
}

/* ---------------------------------------------------------------- gather and scatter */
/* The index tensor with its index vector as the last axis (a unit one added when
 * index_vector_dim is the rank), as i64. */
static frit_tensor *index_last(frit_ctx *ctx, frit_tensor *idx, int64_t ivd) {
  int r = frit_tensor_ndim(idx);
  idx = frit_astype(ctx, idx, FRIT_I64);
  if (ivd == r) return frit_unsqueeze(ctx, idx, r);
  int perm[FRIT_MAX_DIMS], k = 0;
  for (int d = 0; d < r; d++)
    if (d != ivd) perm[k++] = d;
  perm[k] = (int)ivd;
  return frit_permute(ctx, idx, perm);
}

static int has(const int64_t *v, int n, int64_t x) {
  for (int i = 0; i < n; i++)
    if (v[i] == x) return 1;
  return 0;
}

/* Linear offsets into x (flattened) for every position of a result whose axes are the batch
 * axes (those not in window_dims) and the window axes (window_dims, in operand order of the
 * axes not collapsed). Also reports which positions start in range (for scatter). */
typedef struct gs_dims {
  int64_t window_dims[FRIT_MAX_DIMS], collapsed[FRIT_MAX_DIMS], start_map[FRIT_MAX_DIMS];
  int64_t obatch[FRIT_MAX_DIMS], ibatch[FRIT_MAX_DIMS];
  int nwin, ncol, nmap, nob, nib;
  int64_t ivd;
} gs_dims;

static frit_tensor *linear_index(frit_ctx *ctx, frit_tensor *x, frit_tensor *idx, const gs_dims *g, int res_rank,
                                 const int64_t *res_dims, const int64_t *slice_sizes, int clamp, frit_tensor **valid) {
  int xr = frit_tensor_ndim(x), ir = frit_tensor_ndim(idx);
  int bad = g->ivd < 0 || g->ivd > ir || res_rank < 0;
  for (int i = 0; i < g->nwin; i++) bad |= g->window_dims[i] < 0 || g->window_dims[i] >= res_rank;
  for (int i = 0; i < g->ncol; i++) bad |= g->collapsed[i] < 0 || g->collapsed[i] >= xr;
  for (int i = 0; i < g->nmap; i++) bad |= g->start_map[i] < 0 || g->start_map[i] >= xr;
  for (int i = 0; i < g->nib; i++) bad |= g->ibatch[i] < 0 || g->ibatch[i] >= xr || g->obatch[i] < 0 || g->obatch[i] >= res_rank;
  if (bad) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "dimension numbers out of range for an operand of rank %d, indices of rank %d "
                   "and a result of rank %d", xr, ir, res_rank);
    return NULL;
  }
  frit_tensor *S = index_last(ctx, idx, g->ivd); /* (batch..., K) */
  if (!S) return NULL;
  int sr = frit_tensor_ndim(S);
  /* the result's batch axes, in order, are S's leading axes */
  int batch_axes[FRIT_MAX_DIMS], nbatch = 0;
  for (int d = 0; d < res_rank; d++)
    if (!has(g->window_dims, g->nwin, d)) batch_axes[nbatch++] = d;
  if (nbatch != sr - 1) {
    frit_set_error(ctx, FRIT_ERR_INVALID, "%d batch axes in the result, %d in the indices", nbatch, sr - 1);
    return NULL;
  }
  frit_uop *rd[FRIT_MAX_DIMS];
  for (int d = 0; d < res_rank; d++) rd[d] = frit_const_int(ctx, FRIT_I64, res_dims[d]);
  frit_tensor *pos[FRIT_MAX_DIMS];
  if (frit_indices(ctx, res_rank, rd, pos)) return NULL;
  /* the operand axes that have a window axis in the result, in order */
  int win_of[FRIT_MAX_DIMS], k = 0;
  for (int d = 0; d < xr; d++) {
    win_of[d] = -1;
    if (!has(g->collapsed, g->ncol, d) && !has(g->ibatch, g->nib, d)) {
      if (k >= g->nwin) {
        frit_set_error(ctx, FRIT_ERR_INVALID, "more operand window axes than offset dims");
        return NULL;
      }
      win_of[d] = (int)g->window_dims[k++];
    }
  }
  /* S with unit axes at the result's window places: broadcasts against pos */
  int64_t sshape[FRIT_MAX_DIMS + 1];
  int bi = 0;
  for (int d = 0; d < res_rank; d++)
    sshape[d] = has(g->window_dims, g->nwin, d) ? 1 : frit_tensor_dim_static(S, bi++);
  frit_tensor *lin = frit_scalar_i(ctx, FRIT_I64, 0), *ok = NULL;
  int64_t stride = 1;
  for (int d = xr - 1; d >= 0; d--) {
    int64_t n = frit_tensor_dim_static(x, d);
    frit_tensor *start = frit_scalar_i(ctx, FRIT_I64, 0);
    for (int j = 0; j < g->nmap; j++) {
      if (g->start_map[j] != d) continue;
      int64_t st[FRIT_MAX_DIMS + 1], li[FRIT_MAX_DIMS + 1], sp[FRIT_MAX_DIMS + 1];
      for (int a = 0; a < sr; a++) st[a] = 0, li[a] = FRIT_SLICE_DEFAULT, sp[a] = 1;
      st[sr - 1] = j, li[sr - 1] = j + 1;
      frit_tensor *sj = frit_reshape(ctx, frit_slice(ctx, S, st, li, sp), res_rank, sshape);
      if (clamp) {
        start = frit_clip(ctx, sj, frit_scalar_i(ctx, FRIT_I64, 0), frit_scalar_i(ctx, FRIT_I64, n - slice_sizes[d]));
      } else {
        start = sj;
        frit_tensor *in_range = frit_binary_t(ctx, FRIT_BF_LOGICAL_AND,
                                              frit_binary_t(ctx, FRIT_BF_GE, sj, frit_scalar_i(ctx, FRIT_I64, 0)),
                                              frit_binary_t(ctx, FRIT_BF_LE, sj, frit_scalar_i(ctx, FRIT_I64, n - slice_sizes[d])));
        ok = ok ? frit_binary_t(ctx, FRIT_BF_LOGICAL_AND, ok, in_range) : in_range;
      }
    }
    /* operand batching dims (newer dimension numbers) pair with a result batch axis */
    for (int j = 0; j < g->nib; j++)
      if (g->ibatch[j] == d && g->obatch[j] < nbatch) start = pos[batch_axes[g->obatch[j]]];
    frit_tensor *coord = win_of[d] >= 0 ? frit_binary_t(ctx, FRIT_BF_ADD, start, pos[win_of[d]]) : start;
    lin = frit_binary_t(ctx, FRIT_BF_ADD, lin, frit_binary_t(ctx, FRIT_BF_MUL, coord, frit_scalar_i(ctx, FRIT_I64, stride)));
    stride *= n;
    if (!lin) return NULL;
  }
  frit_uop *full[FRIT_MAX_DIMS];
  for (int d = 0; d < res_rank; d++) full[d] = rd[d];
  lin = frit_broadcast_to_sym(ctx, lin, res_rank, full);
  if (valid) *valid = ok ? frit_broadcast_to_sym(ctx, ok, res_rank, full) : NULL;
  return lin;
}

static int read_gs_dims(const shlo_op *op, const char *attr, int scatter, gs_dims *g) {
  shlo_attr *dn = shlo_attr_get(op, attr);
  if (!dn || dn->kind != SA_DICT) return 0;
  memset(g, 0, sizeof *g);
  g->nwin = dn_ints(dn, scatter ? "update_window_dims" : "offset_dims", g->window_dims);
  g->ncol = dn_ints(dn, scatter ? "inserted_window_dims" : "collapsed_slice_dims", g->collapsed);
  g->nmap = dn_ints(dn, scatter ? "scatter_dims_to_operand_dims" : "start_index_map", g->start_map);
  g->nib = dn_ints(dn, "operand_batching_dims", g->ibatch);
  g->nob = dn_ints(dn, scatter ? "scatter_indices_batching_dims" : "start_indices_batching_dims", g->obatch);
  shlo_attr *iv = shlo_dict_get(dn, "index_vector_dim"); /* the printer leaves out the default, 0 */
  if (iv && iv->kind != SA_INT) return 0;
  g->ivd = iv ? iv->i : 0;
  return g->nwin >= 0 && g->ncol >= 0 && g->nmap >= 0 && g->nib >= 0 && g->nob >= 0 && g->nib == g->nob;
}

frit_status shlo_gather(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out) {
  (void)env;
  frit_ctx *ctx = b->ctx;
  gs_dims g;
  if (!read_gs_dims(op, "dimension_numbers", 0, &g)) return shlo_fail(b, op, "dimension_numbers not understood");
  if (g.nib) {
    /* batching dims index the indices' batch axes in order: map them to result batch positions */
    for (int j = 0; j < g.nob; j++) {
      int64_t ob = g.obatch[j];
      g.obatch[j] = ob - (ob > g.ivd ? 1 : 0);
    }
  }
  int64_t sizes[FRIT_MAX_DIMS], odims[FRIT_MAX_DIMS];
  int xr = frit_tensor_ndim(in[0]);
  if (shlo_attr_ints(shlo_attr_get(op, "slice_sizes"), sizes, FRIT_MAX_DIMS) != xr) return shlo_fail(b, op, "needs slice_sizes");
  const shlo_type *t = shlo_rtype(op, 0);
  if (shlo_static_dims(b, op, t, odims)) return frit_last_status(ctx);
  for (int d = 0; d < xr; d++)
    if (frit_tensor_dim_static(in[0], d) < 0) return shlo_fail(b, op, "needs an operand of static shape");
  frit_tensor *lin = linear_index(ctx, in[0], in[1], &g, t->ndim, odims, sizes, 1, NULL);
  SHLO_CHECK(b, op, lin);
  int64_t flat = -1;
  out[0] = frit_take(ctx, frit_reshape(ctx, in[0], 1, &flat), lin, 0);
  SHLO_CHECK(b, op, out[0]);
  return FRIT_OK;
}

frit_status shlo_scatter(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out) {
  frit_ctx *ctx = b->ctx;
  if (op->nopnd != 3 || op->nres != 1) return shlo_fail(b, op, "scatters of several operands together are not supported");
  gs_dims g;
  if (!read_gs_dims(op, "scatter_dimension_numbers", 1, &g)) return shlo_fail(b, op, "scatter_dimension_numbers not understood");
  for (int j = 0; j < g.nob; j++) g.obatch[j] -= g.obatch[j] > g.ivd ? 1 : 0;
  frit_tensor *x = in[0], *upd = in[2];
  int xr = frit_tensor_ndim(x), ur = frit_tensor_ndim(upd);
  int64_t sizes[FRIT_MAX_DIMS], udims[FRIT_MAX_DIMS];
  for (int d = 0; d < xr; d++) {
    if (frit_tensor_dim_static(x, d) < 0) return shlo_fail(b, op, "needs an operand of static shape");
    sizes[d] = 1;
  }
  for (int d = 0; d < ur; d++) udims[d] = frit_tensor_dim_static(upd, d);
  int k = 0;
  for (int d = 0; d < xr; d++)
    if (!has(g.collapsed, g.ncol, d) && !has(g.ibatch, g.nib, d)) sizes[d] = k < g.nwin ? udims[g.window_dims[k++]] : 1;
  /* the mode from the update region: combine(old, update) */
  const shlo_region *rg = op->nregion == 1 ? op->regions[0] : NULL;
  frit_atomic_op mode = FRIT_ATOMIC_XCHG;
  const char *fn = rg ? shlo_region_binop(rg) : NULL;
  shlo_attr *uq = shlo_attr_get(op, "unique_indices");
  int unique = uq && uq->kind == SA_BOOL && uq->i, general = 0;
  if (rg && rg->nops == 1 && rg->ops[0]->nopnd == 1 && rg->ops[0]->opnd[0] == rg->args[1]) mode = FRIT_ATOMIC_XCHG;
  else if (fn && !strcmp(fn, "add")) mode = FRIT_ATOMIC_ADD;
  else if (fn && !strcmp(fn, "maximum")) mode = FRIT_ATOMIC_MAX;
  else if (fn && !strcmp(fn, "minimum")) mode = FRIT_ATOMIC_MIN;
  else if (rg && unique) general = 1; /* each element updated once: old values read, combined, set */
  else return shlo_fail(b, op, "its update region is not set, add, maximum or minimum (other regions need unique_indices)");
  frit_tensor *valid = NULL;
  frit_tensor *lin = linear_index(ctx, x, in[1], &g, ur, udims, sizes, 0, &valid);
  SHLO_CHECK(b, op, lin);
  /* updates whose window leaves the operand are skipped: they go to a spare last slot */
  int64_t total = 1, flat = -1;
  for (int d = 0; d < xr; d++) total *= frit_tensor_dim_static(x, d);
  if (valid) lin = frit_where(ctx, valid, lin, frit_scalar_i(ctx, FRIT_I64, total));
  frit_tensor *fx = frit_reshape(ctx, x, 1, &flat);
  if (general) {
    frit_tensor *old = frit_take(ctx, fx, lin, 0), *args[2] = {old, upd}, *res[1];
    int nr = 0;
    frit_status s2 = shlo_run_region(b, rg, env, args, 2, res, &nr, 1);
    if (s2) return s2;
    if (nr != 1) return shlo_fail(b, op, "update region gives %d values", nr);
    upd = res[0];
  }
  frit_tensor *spare = frit_zeros(ctx, frit_tensor_dtype(x), 1, (int64_t[]){1});
  fx = frit_concat(ctx, (frit_tensor *[]){fx, spare}, 2, 0);
  frit_tensor *r = frit_scatter(ctx, fx, frit_reshape(ctx, lin, 1, &flat), frit_reshape(ctx, upd, 1, &flat), mode);
  int64_t st = 0, li = total, sp = 1;
  r = frit_slice(ctx, r, &st, &li, &sp);
  int64_t xd[FRIT_MAX_DIMS];
  for (int d = 0; d < xr; d++) xd[d] = frit_tensor_dim_static(x, d);
  out[0] = frit_reshape(ctx, r, xr, xd);
  SHLO_CHECK(b, op, out[0]);
  return FRIT_OK;
}

/* ---------------------------------------------------------------- dynamic slices */
static frit_tensor *start_of(frit_ctx *ctx, frit_tensor *s, int64_t n, int64_t size) {
  s = frit_astype(ctx, frit_reshape(ctx, s, 0, NULL), FRIT_I64);
  return frit_clip(ctx, s, frit_scalar_i(ctx, FRIT_I64, 0), frit_scalar_i(ctx, FRIT_I64, n - size));
}

frit_status shlo_dynamic_slice(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out) {
  (void)env;
  frit_ctx *ctx = b->ctx;
  frit_tensor *x = in[0];
  int r = frit_tensor_ndim(x);
  int64_t sizes[FRIT_MAX_DIMS];
  if (op->nopnd != r + 1) return shlo_fail(b, op, "needs %d start indices", r);
  if (shlo_attr_ints(attr2(op, "sizes", "slice_sizes"), sizes, FRIT_MAX_DIMS) != r) return shlo_fail(b, op, "needs slice sizes");
  for (int d = 0; d < r; d++) {
    int64_t n = frit_tensor_dim_static(x, d);
    if (n < 0 || sizes[d] > n || sizes[d] < 0) return shlo_fail(b, op, "slice size %lld of axis %d does not fit", (long long)sizes[d], d);
    if (sizes[d] == n) continue;
    frit_tensor *s = start_of(ctx, in[1 + d], n, sizes[d]);
    frit_tensor *idx = frit_binary_t(ctx, FRIT_BF_ADD, frit_arange(ctx, 0, (double)sizes[d], 1, FRIT_I64), s);
    x = frit_take(ctx, x, idx, d);
    SHLO_CHECK(b, op, x);
  }
  out[0] = x;
  return FRIT_OK;
}

frit_status shlo_dynamic_update_slice(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in,
                                      frit_tensor **out) {
  (void)env;
  frit_ctx *ctx = b->ctx;
  frit_tensor *x = in[0], *u = in[1];
  int r = frit_tensor_ndim(x);
  if (op->nopnd != r + 2) return shlo_fail(b, op, "needs %d start indices", r);
  int64_t ud[FRIT_MAX_DIMS];
  for (int d = 0; d < r; d++) {
    ud[d] = frit_tensor_dim_static(u, d);
    if (ud[d] < 0 || frit_tensor_dim_static(x, d) < 0) return shlo_fail(b, op, "needs static shapes");
  }
  frit_uop *udims[FRIT_MAX_DIMS];
  for (int d = 0; d < r; d++) udims[d] = frit_const_int(ctx, FRIT_I64, ud[d]);
  frit_tensor *pos[FRIT_MAX_DIMS];
  if (r && frit_indices(ctx, r, udims, pos)) return shlo_wrap(b, op);
  frit_tensor *lin = frit_scalar_i(ctx, FRIT_I64, 0);
  int64_t stride = 1;
  for (int d = r - 1; d >= 0; d--) {
    int64_t n = frit_tensor_dim_static(x, d);
    frit_tensor *c = frit_binary_t(ctx, FRIT_BF_ADD, pos[d], start_of(ctx, in[2 + d], n, ud[d]));
    lin = frit_binary_t(ctx, FRIT_BF_ADD, lin, frit_binary_t(ctx, FRIT_BF_MUL, c, frit_scalar_i(ctx, FRIT_I64, stride)));
    stride *= n;
  }
  int64_t flat = -1, xd[FRIT_MAX_DIMS];
  for (int d = 0; d < r; d++) xd[d] = frit_tensor_dim_static(x, d);
  frit_tensor *res = frit_scatter(ctx, frit_reshape(ctx, x, 1, &flat), frit_reshape(ctx, lin, 1, &flat),
                                  frit_reshape(ctx, u, 1, &flat), FRIT_ATOMIC_XCHG);
  out[0] = frit_reshape(ctx, res, r, xd);
  SHLO_CHECK(b, op, out[0]);
  return FRIT_OK;
}

/* ---------------------------------------------------------------- sort */
/* The comparator must end in compare(DIR, f(lhs_k), f(rhs_k)) for one operand k: f is built on
 * the whole operand (the region's ops are elementwise), and a stable argsort of it by DIR orders
 * every operand. */
static int depends_on(const shlo_region *r, int value, int arg, int depth) {
  if (value == arg) return 1;
  if (depth > 64) return 0;
  for (int i = 0; i < r->nops; i++) {
    const shlo_op *o = r->ops[i];
    if (o->nres && value >= o->res0 && value < o->res0 + o->nres) {
      for (int j = 0; j < o->nopnd; j++)
        if (depends_on(r, o->opnd[j], arg, depth + 1)) return 1;
      return 0;
    }
  }
  return 0;
}

frit_status shlo_sort(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out) {
  frit_ctx *ctx = b->ctx;
  int n = op->nopnd;
  if (op->nregion != 1) return shlo_fail(b, op, "needs a comparator region");
  const shlo_region *rg = op->regions[0];
  int64_t dim = -1;
  shlo_attr *a = attr2(op, "dimension", NULL);
  if (shlo_attr_ints(a, &dim, 1) != 1) dim = frit_tensor_ndim(in[0]) - 1;
  if (rg->nargs != 2 * n || rg->nops < 2) return shlo_fail(b, op, "comparator takes %d arguments, not %d", rg->nargs, 2 * n);
  const shlo_op *ret = rg->ops[rg->nops - 1], *cmp = rg->ops[rg->nops - 2];
  const char *dir = cmp->nword ? cmp->words[0] : NULL;
  shlo_attr *da = shlo_attr_get(cmp, "comparison_direction");
  if (da && da->kind == SA_WORD) dir = da->s;
  if (ret->nopnd != 1 || ret->opnd[0] != cmp->res0 || strcmp(strchr(cmp->name, '.') ? strchr(cmp->name, '.') + 1 : "", "compare") ||
      !dir || (strcmp(dir, "LT") && strcmp(dir, "GT")))
    return shlo_fail(b, op, "comparator not recognised: it must end in compare LT or GT of one key");
  int key = -1;
  for (int k = 0; k < n && key < 0; k++)
    if (depends_on(rg, cmp->opnd[0], rg->args[2 * k], 0) && depends_on(rg, cmp->opnd[1], rg->args[2 * k + 1], 0)) key = k;
  if (key < 0) return shlo_fail(b, op, "comparator not recognised: its compare does not read one operand's pair");
  for (int k = 0; k < n; k++)
    if (k != key && (depends_on(rg, cmp->opnd[0], rg->args[2 * k], 0) || depends_on(rg, cmp->opnd[1], rg->args[2 * k + 1], 0) ||
                     depends_on(rg, cmp->opnd[0], rg->args[2 * k + 1], 0)))
      return shlo_fail(b, op, "comparators over several keys are not supported");
  /* the key function f: the comparator's ops evaluated with lhs_key bound to the operand */
  frit_tensor *args[2 * 64];
  if (n > 64) return shlo_fail(b, op, "more than 64 operands");
  for (int k = 0; k < 2 * n; k++) args[k] = in[k / 2];
  for (int k = 0; k < rg->nargs; k++) env[rg->args[k]] = args[k];
  frit_tensor *kv = NULL;
  for (int i = 0; i < rg->nops - 2; i++) {
    const shlo_op *o = rg->ops[i];
    if (!depends_on(rg, o->res0, rg->args[2 * key], 0) && o->nopnd) continue;
    /* evaluate through the region runner one op at a time */
    shlo_region one = {0, NULL, NULL, 1, (shlo_op **)&rg->ops[i]};
    int nr;
    frit_status st = shlo_run_region(b, &one, env, NULL, 0, NULL, &nr, 0);
    if (st) return st;
  }
  kv = env[cmp->opnd[0]];
  if (!kv) return shlo_fail(b, op, "comparator key could not be built");
  /* TOTALORDER on floats and the key's own order agree once -0 and NaN are folded as jax does */
  frit_tensor *perm = frit_argsort(ctx, kv, (int)dim, !strcmp(dir, "GT"));
  SHLO_CHECK(b, op, perm);
  for (int k = 0; k < n; k++) {
    out[k] = frit_take_along_axis(ctx, in[k], perm, (int)dim);
    SHLO_CHECK(b, op, out[k]);
  }
  return FRIT_OK;
}

/* chlo.top_k: the k largest along the last axis, largest first, ties in index order. */
frit_status shlo_top_k(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out) {
  (void)env;
  frit_ctx *ctx = b->ctx;
  int64_t k = -1;
  if (shlo_attr_ints(shlo_attr_get(op, "k"), &k, 1) != 1 || k < 0) return shlo_fail(b, op, "needs k");
  int r = frit_tensor_ndim(in[0]);
  if (r < 1 || op->nres != 2) return shlo_fail(b, op, "needs an operand of rank >= 1 and two results");
  frit_tensor *perm = frit_argsort(ctx, in[0], r - 1, 1);
  int64_t st[FRIT_MAX_DIMS], li[FRIT_MAX_DIMS], sp[FRIT_MAX_DIMS];
  for (int d = 0; d < r; d++) st[d] = 0, li[d] = FRIT_SLICE_DEFAULT, sp[d] = 1;
  li[r - 1] = k;
  perm = frit_slice(ctx, perm, st, li, sp);
  out[0] = frit_take_along_axis(ctx, in[0], perm, r - 1);
  const shlo_type *t = shlo_rtype(op, 1);
  out[1] = frit_astype(ctx, perm, t && t->dt != FRIT_VOID ? t->dt : FRIT_I32);
  SHLO_CHECK(b, op, out[0] && out[1]);
  return FRIT_OK;
}

/* select_and_scatter (max pooling's gradient): each window of the padded operand picks one
 * element by the select region, scanning the window in order; the source value of the window
 * is added at the picked place; padding is never picked. */
frit_status shlo_select_and_scatter(B *b, const shlo_op *op, frit_tensor **env, frit_tensor **in, frit_tensor **out) {
  frit_ctx *ctx = b->ctx;
  if (op->nopnd != 3 || op->nregion != 2) return shlo_fail(b, op, "needs operand, source, init and two regions");
  const char *sc = shlo_region_binop(op->regions[1]);
  if (!sc || strcmp(sc, "add")) return shlo_fail(b, op, "only an add scatter region is supported");
  frit_tensor *x = in[0], *src = in[1], *init = in[2];
  int r = frit_tensor_ndim(x);
  int64_t wd[FRIT_MAX_DIMS], ws[FRIT_MAX_DIMS], pad[2 * FRIT_MAX_DIMS], sd[FRIT_MAX_DIMS], pd[FRIT_MAX_DIMS];
  if (shlo_attr_ints(shlo_attr_get(op, "window_dimensions"), wd, FRIT_MAX_DIMS) != r)
    return shlo_fail(b, op, "needs window_dimensions for %d axes", r);
  for (int i = 0; i < r; i++) ws[i] = 1, pad[2 * i] = pad[2 * i + 1] = 0;
  shlo_attr *a;
  if ((a = shlo_attr_get(op, "window_strides")) && shlo_attr_ints(a, ws, FRIT_MAX_DIMS) != r) return shlo_fail(b, op, "bad window_strides");
  if ((a = shlo_attr_get(op, "padding")) && shlo_attr_ints(a, pad, 2 * FRIT_MAX_DIMS) != 2 * r) return shlo_fail(b, op, "bad padding");
  int64_t lo[FRIT_MAX_DIMS], hi[FRIT_MAX_DIMS], offsets = 1;
  for (int i = 0; i < r; i++) {
    lo[i] = pad[2 * i], hi[i] = pad[2 * i + 1], offsets *= wd[i];
    sd[i] = frit_tensor_dim_static(src, i);
    pd[i] = frit_tensor_dim_static(x, i) + lo[i] + hi[i];
    if (sd[i] < 0 || pd[i] < 0 || lo[i] < 0 || hi[i] < 0) return shlo_fail(b, op, "needs static shapes and padding >= 0");
  }
  if (offsets > 1024) return shlo_fail(b, op, "windows of %lld elements are not supported (at most 1024)", (long long)offsets);
  frit_dtype dt = frit_tensor_dtype(x);
  frit_tensor *px = shlo_pad_value(ctx, x, frit_scalar_f(ctx, dt, 0), lo, hi, NULL);
  frit_uop *xd[FRIT_MAX_DIMS]; /* where the padded operand holds real elements */
  for (int d = 0; d < r; d++) xd[d] = frit_tensor_dim(x, d);
  frit_scalar one = {.i = 1};
  frit_tensor *mask = shlo_pad_value(ctx, ti_full(ctx, FRIT_BOOL, one, r, xd), frit_full_i(ctx, FRIT_BOOL, 0, NULL, 0), lo, hi, NULL);
  SHLO_CHECK(b, op, px && mask);
  frit_tensor *best = NULL, *bestk = NULL, *has = NULL;
  int64_t st[FRIT_MAX_DIMS], li[FRIT_MAX_DIMS];
  for (int64_t k = 0; k < offsets; k++) {
    int64_t rem = k;
    for (int i = r - 1; i >= 0; i--) {
      st[i] = rem % wd[i];
      rem /= wd[i];
      li[i] = st[i] + (sd[i] - 1) * ws[i] + 1;
    }
    frit_tensor *v = frit_slice(ctx, px, st, li, ws), *ok = frit_slice(ctx, mask, st, li, ws);
    frit_tensor *kk = frit_full_i(ctx, FRIT_I64, r, sd, k);
    if (!best) {
      best = v, bestk = kk, has = ok;
    } else {
      frit_tensor *args[2] = {best, v}, *keep[1];
      int nr = 0;
      frit_status s = shlo_run_region(b, op->regions[0], env, args, 2, keep, &nr, 1);
      if (s) return s;
      if (nr != 1) return shlo_fail(b, op, "select region gives %d values", nr);
      frit_tensor *take = frit_binary_t(ctx, FRIT_BF_LOGICAL_AND, ok,
                                        frit_binary_t(ctx, FRIT_BF_LOGICAL_OR, frit_unary_t(ctx, FRIT_UF_LOGICAL_NOT, has),
                                                      frit_unary_t(ctx, FRIT_UF_LOGICAL_NOT, keep[0])));
      best = frit_where(ctx, take, v, best);
      bestk = frit_where(ctx, take, kk, bestk);
      has = frit_binary_t(ctx, FRIT_BF_LOGICAL_OR, has, ok);
    }
    SHLO_CHECK(b, op, best && bestk && has);
  }
  frit_tensor *acc = NULL;
  frit_tensor *zero = frit_scalar_f(ctx, frit_tensor_dtype(src), 0);
  for (int64_t k = 0; k < offsets; k++) {
    int64_t rem = k, plo[FRIT_MAX_DIMS], phi[FRIT_MAX_DIMS], inter[FRIT_MAX_DIMS];
    for (int i = r - 1; i >= 0; i--) {
      plo[i] = rem % wd[i];
      rem /= wd[i];
      inter[i] = ws[i] - 1;
      phi[i] = pd[i] - plo[i] - ((sd[i] - 1) * ws[i] + 1);
    }
    frit_tensor *pick = frit_binary_t(ctx, FRIT_BF_LOGICAL_AND, has, frit_binary_t(ctx, FRIT_BF_EQ, bestk, frit_scalar_i(ctx, FRIT_I64, k)));
    frit_tensor *c = shlo_pad_value(ctx, frit_where(ctx, pick, src, zero), zero, plo, phi, inter);
    acc = acc ? frit_binary_t(ctx, FRIT_BF_ADD, acc, c) : c;
    SHLO_CHECK(b, op, acc);
  }
  int64_t cst[FRIT_MAX_DIMS], cli[FRIT_MAX_DIMS], csp[FRIT_MAX_DIMS];
  for (int i = 0; i < r; i++) cst[i] = lo[i], cli[i] = pd[i] - hi[i], csp[i] = 1;
  acc = frit_slice(ctx, acc, cst, cli, csp);
  out[0] = shlo_binop(ctx, "add", acc, init);
  SHLO_CHECK(b, op, out[0]);
  return FRIT_OK;
}
