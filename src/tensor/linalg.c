/* Matrix products (numpy matmul and dot) as a broadcast multiply and a REDUCE_AXIS ADD over K,
 * the form the scheduler fuses into one kernel without materialising the (..., M, K, N) product. */
#include "tensor/grad_rules.h"

/* a and b are laid out so that broadcasting them gives (..., K, N') with K at axis -2: multiplies
 * in the promoted dtype (f16/bf16 in f32; bool as AND/OR like numpy), sums over K and reshapes
 * to the output dims. */
static frit_tensor *contract(frit_ctx *ctx, const char *name, frit_tensor *a, frit_tensor *b, int nd_out,
                             frit_uop *const *out_dims) {
  if (!a || !b) return NULL;
  frit_dtype dt = frit_promote(frit_tensor_dtype(a), frit_tensor_dtype(b));
  frit_dtype cdt = tc_is_half(dt) ? FRIT_F32 : dt;
  frit_tensor *p = tc_bin(ctx, name, frit_dtype_is_bool(dt) ? FRIT_OP_AND : FRIT_OP_MUL, ti_cast(ctx, a, cdt),
                          ti_cast(ctx, b, cdt));
  if (!p) return NULL;
  int r = ti_shape(ctx, p)->ndim;
  bool mask[FRIT_MAX_DIMS] = {false};
  mask[r - 2] = true;
  frit_tensor *s = ti_cast(ctx, tc_sum_keep(ctx, p, mask), dt);
  return s ? ti_reshape(ctx, s, nd_out, out_dims) : NULL;
}

/* A dim as text ("3", "n*2") in buf. */
static const char *dim_text(frit_ctx *ctx, frit_uop *d, char *buf) {
  int64_t v = frit_dim_value(d);
  if (v >= 0) snprintf(buf, 64, "%lld", (long long)v);
  else {
    const char *t = frit_render_c_expr(ctx, d);
    snprintf(buf, 64, "%s", t ? t : "?");
  }
  return buf;
}

static bool dim_is_one(const frit_uop *d) { return frit_dim_value(d) == 1; }

/* B (K, N) of a large matmul, read through a copy packed in column panels of PANEL:
 * (N/PANEL, K, PANEL), so the register-tiled kernel (codegen/opt_tile.c) streams each panel from
 * consecutive memory instead of striding N elements (a new page every few k) per k: 3x on a
 * 1024^2 f32 matmul. The copy costs one pass over B, the product M passes; small static products
 * keep B as it is. Symbolic sizes (default jit, eager) cannot be judged when the graph is built:
 * B is packed unless a static dim is small. A static N that panels do not divide is packed too
 * (padded, below): unpacked, its product was not register-tiled (2x slower at 1020^2). */
enum { PACK_MIN_DIM = 64 };

static frit_tensor *packed_panels(frit_ctx *ctx, frit_tensor *b, frit_uop *m_dim) {
  const frit_shape *s = ti_shape(ctx, b);
  frit_uop *kd = s->dims[0], *nd = s->dims[1];
  int64_t M = frit_dim_value(m_dim), K = frit_dim_value(kd), N = frit_dim_value(nd);
  /* the tiler's column tile: two vectors of lanes, or one where a static N is a multiple of one
   * only, whose panels it reads at (j0, k, jl) just the same */
  int64_t lanes = frit_host_tile_lanes(frit_tensor_dtype(b));
  int64_t PANEL = N >= 0 && N % (2 * lanes) && N % lanes == 0 ? lanes : 2 * lanes;
  if ((M >= 0 && M < PACK_MIN_DIM) || (K >= 0 && K < PACK_MIN_DIM) || (N >= 0 && N < 2 * PANEL)) return b;
  if (M >= 0 && K >= 0 && N >= 0 && M * N * K < ((int64_t)1 << 21)) return b;
  int perm[3] = {1, 0, 2};
  /* padded by PANEL - 1 copies of the last column and cut to whole panels (both amounts provably
   * in range): a register tile over a last, partial panel computes the last column again in
   * its padding lanes, bit for bit, and may store them all there (codegen/opt_tile.c) */
  frit_uop *zero = ti_dim(ctx, 0), *panels = ti_dim_cdiv(ctx, nd, PANEL);
  frit_uop *npad = ti_dim_mul(ctx, panels, ti_dim(ctx, PANEL));
  frit_uop *before[2] = {zero, zero}, *end[2] = {kd, npad};
  frit_tensor *whole = b;
  if (!(N >= 0 && N % PANEL == 0)) {
    frit_uop *edge[2] = {kd, ti_dim(ctx, PANEL - 1)};
    frit_tensor *last = ti_expand(ctx, ti_shrink_axis(ctx, b, 1, ti_dim_sub(ctx, nd, ti_dim(ctx, 1)), nd), 2, edge);
    frit_tensor *parts[2] = {b, last};
    whole = last ? ti_shrink(ctx, ti_cat(ctx, parts, 2, 1), before, end) : NULL;
  }
  frit_uop *split[3] = {kd, panels, ti_dim(ctx, PANEL)}, *flat[2] = {kd, npad}, *cut[2] = {kd, nd};
  frit_tensor *packed = frit_contiguous(ctx, frit_permute(ctx, ti_reshape(ctx, whole, 3, split), perm));
  frit_tensor *back = ti_reshape(ctx, frit_permute(ctx, packed, perm), 2, flat);
  frit_tensor *r = whole == b ? back : ti_shrink(ctx, back, before, cut);
  if (!r) frit_clear_error(ctx); /* a shape the movement ops cannot prove: B as it is */
  return r ? r : b;
}

static frit_tensor *matmul_impl(frit_ctx *ctx, const char *name, frit_tensor *a, frit_tensor *b);

/* out = a @ b of 2-D real float operands whose b was packed: gA = G B^T, gB = A^T G as matmuls of
 * their own, each packed and tiled as a forward product. Differentiating through the graph
 * instead would give gA as a product over N read from B's panels at (n / PANEL, k, n % PANEL):
 * a scalar loop of div/mod (1.4 GFLOP/s for a CNN's dense layer). ins: the product's operands
 * as the graph holds them, a (M, K, 1) and b (1, K, N) (a and b themselves may be views that
 * those reshapes folded away, so the gradient walk would never reach them), then a and b,
 * read for their values only. */
static frit_status matmul_rule(frit_ctx *ctx, const int64_t *params, frit_tensor *out, frit_tensor *g, int nin,
                               frit_tensor *const *ins, frit_tensor **grads) {
  (void)params, (void)nin;
  frit_dtype dt = frit_tensor_dtype(out);
  frit_tensor *a = ti_cast(ctx, ins[2], dt), *b = ti_cast(ctx, ins[3], dt);
  const int t[2] = {1, 0};
  frit_tensor *ga = ti_cast(ctx, matmul_impl(ctx, "matmul", g, ti_permute(ctx, b, t)), frit_tensor_dtype(ins[0]));
  frit_tensor *gb = ti_cast(ctx, matmul_impl(ctx, "matmul", ti_permute(ctx, a, t), g), frit_tensor_dtype(ins[1]));
  const frit_shape *sa = ti_shape(ctx, ins[0]), *sb = ti_shape(ctx, ins[1]);
  /* realized: fused into a consumer as its reduction (a max-pool's backward reading gA at its
   * own, unflattened index), a product loses the tiler's form and reads B's panels by div/mod */
  grads[0] = ga ? ti_reshape(ctx, frit_contiguous(ctx, ga), sa->ndim, sa->dims) : NULL;
  grads[1] = gb ? ti_reshape(ctx, frit_contiguous(ctx, gb), sb->ndim, sb->dims) : NULL;
  return grads[0] && grads[1] ? FRIT_OK : ctx->status != FRIT_OK ? ctx->status : FRIT_ERR_INVALID;
}

static frit_tensor *matmul_impl(frit_ctx *ctx, const char *name, frit_tensor *a, frit_tensor *b) {
  frit_tensor *ab[2] = {a, b};
  const frit_shape *sa = ti_shape(ctx, a), *sb = ti_shape(ctx, b);
  int na = sa->ndim, nb = sb->ndim;
  if (na == 0 || nb == 0)
    return ti_fail(ctx, name, ab, 2, "input operand %d does not have enough dimensions (has 0, needs 1)",
                   na == 0 ? 0 : 1);
  /* 1-D operands: a gets a leading 1 (M), b a trailing 1 (N); both are dropped at the end */
  frit_uop *one = ti_dim(ctx, 1);
  frit_uop *ad[FRIT_MAX_DIMS + 1], *bd[FRIT_MAX_DIMS + 1];
  int ra = 0, rb = 0;
  if (na == 1) ad[ra++] = one;
  for (int i = 0; i < na; i++) ad[ra++] = sa->dims[i];
  for (int i = 0; i < nb; i++) bd[rb++] = sb->dims[i];
  if (nb == 1) bd[rb++] = one;
  frit_uop *ka = ad[ra - 1], *kb = bd[rb - 2];
  if (!ti_dim_eq(ka, kb)) {
    char b1[64], b2[64];
    return ti_fail(ctx, name, ab, 2, "inner dims %s and %s differ", dim_text(ctx, ka, b1), dim_text(ctx, kb, b2));
  }
  /* batch dims broadcast like numpy */
  int nba = ra - 2, nbb = rb - 2, nbat = nba > nbb ? nba : nbb;
  frit_uop *out[FRIT_MAX_DIMS + 2];
  int nout = 0;
  for (int i = 0; i < nbat; i++) {
    int ia = i - (nbat - nba), ib = i - (nbat - nbb);
    frit_uop *da = ia >= 0 ? ad[ia] : one, *db = ib >= 0 ? bd[ib] : one;
    if (ti_dim_eq(da, db) || dim_is_one(db)) out[nout++] = da;
    else if (dim_is_one(da)) out[nout++] = db;
    else return ti_fail(ctx, name, ab, 2, "batch dims (axis %d of the broadcast batch) do not broadcast", i);
  }
  if (nout + 2 > FRIT_MAX_DIMS) return ti_fail(ctx, name, ab, 2, "result has more than %d dims", FRIT_MAX_DIMS);
  if (na > 1) out[nout++] = ad[ra - 2];
  if (nb > 1) out[nout++] = bd[rb - 1];
  /* a -> (..., M, K, 1), b -> (..., 1, K, N) */
  frit_uop *ad3[FRIT_MAX_DIMS + 2], *bd3[FRIT_MAX_DIMS + 2];
  for (int i = 0; i < ra; i++) ad3[i] = ad[i];
  ad3[ra] = one;
  for (int i = 0; i < rb - 2; i++) bd3[i] = bd[i];
  bd3[rb - 2] = one, bd3[rb - 1] = bd[rb - 2], bd3[rb] = bd[rb - 1];
  if (ra + 1 > FRIT_MAX_DIMS || rb + 1 > FRIT_MAX_DIMS)
    return ti_fail(ctx, name, ab, 2, "operands have too many dims");
  frit_tensor *b0 = b;
  if (na == 2 && nb == 2) b = packed_panels(ctx, b, ad[0]);
  frit_tensor *a3 = ti_reshape(ctx, a, ra + 1, ad3), *b3 = ti_reshape(ctx, b, rb + 1, bd3);
  frit_tensor *r = contract(ctx, name, a3, b3, nout, out);
  if (!r || b == b0 || !frit_dtype_is_float(frit_tensor_dtype(a)) || !frit_dtype_is_float(frit_tensor_dtype(b0)))
    return r;
  return frit_set_vjp(ctx, r, 4, (frit_tensor *const[]){a3, b3, a, b0}, matmul_rule, NULL, 0) == FRIT_OK ? r : NULL;
}

frit_tensor *frit_matmul(frit_ctx *ctx, frit_tensor *a, frit_tensor *b) {
  frit_tensor *ab[2] = {a, b};
  if (!ti_ok(ctx, "matmul", ab, 2)) return NULL;
  return matmul_impl(ctx, "matmul", a, b);
}

frit_tensor *frit_dot(frit_ctx *ctx, frit_tensor *a, frit_tensor *b) {
  frit_tensor *ab[2] = {a, b};
  if (!ti_ok(ctx, "dot", ab, 2)) return NULL;
  const frit_shape *sa = ti_shape(ctx, a), *sb = ti_shape(ctx, b);
  int na = sa->ndim, nb = sb->ndim;
  if (na == 0 || nb == 0) { /* a scalar operand: elementwise product */
    frit_dtype dt = frit_promote(frit_tensor_dtype(a), frit_tensor_dtype(b));
    return tc_bin(ctx, "dot", frit_dtype_is_bool(dt) ? FRIT_OP_AND : FRIT_OP_MUL, ti_cast(ctx, a, dt),
                  ti_cast(ctx, b, dt));
  }
  if (nb == 1) return matmul_impl(ctx, "dot", a, b); /* sum over the last axes: the matmul rule */
  /* dot(a, b)[i.., j.., n] = sum_k a[i.., k] * b[j.., k, n] */
  frit_uop *k = sa->dims[na - 1], *kb = sb->dims[nb - 2];
  if (!ti_dim_eq(k, kb)) {
    char b1[64], b2[64];
    return ti_fail(ctx, "dot", ab, 2, "not aligned: %s (dim %d) != %s (dim %d)", dim_text(ctx, k, b1), na - 1,
                   dim_text(ctx, kb, b2), nb - 2);
  }
  int r = na + nb - 1, nout = na + nb - 2;
  if (r > FRIT_MAX_DIMS) return ti_fail(ctx, "dot", ab, 2, "result has more than %d dims", FRIT_MAX_DIMS);
  frit_uop *one = ti_dim(ctx, 1), *ad[FRIT_MAX_DIMS], *bd[FRIT_MAX_DIMS], *out[FRIT_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < na - 1; i++) ad[n] = sa->dims[i], bd[n] = one, out[n] = sa->dims[i], n++;
  for (int i = 0; i < nb - 2; i++) ad[n] = one, bd[n] = sb->dims[i], out[n] = sb->dims[i], n++;
  out[n] = sb->dims[nb - 1];
  ad[n] = k, bd[n] = k, n++;
  ad[n] = one, bd[n] = sb->dims[nb - 1], n++;
  FRIT_ASSERT(n == r);
  return contract(ctx, "dot", ti_reshape(ctx, a, r, ad), ti_reshape(ctx, b, r, bd), nout, out);
}

/* ---------- diagonal ---------- */

static frit_uop *dim2(frit_ctx *ctx, frit_op op, frit_uop *a, frit_uop *b) {
  if (!a || !b) return NULL;
  if (a->op == FRIT_OP_CONST && b->op == FRIT_OP_CONST) {
    frit_scalar s[2] = {a->arg.value, b->arg.value};
    return frit_const(ctx, FRIT_I64, frit_eval_alu(op, FRIT_I64, s));
  }
  frit_uop *r = frit_binary(ctx, op, a, b);
  return r ? frit_simplify(ctx, r) : NULL;
}

/* numpy.diagonal: the two axes move to the end, the (offset) diagonal of the trailing square
 * block is read through a reshape trick (flatten L*L, pad by L, view as (L, L+1), column 0),
 * so it stays a view that fuses and works for symbolic dims. */
frit_tensor *frit_diagonal(frit_ctx *ctx, frit_tensor *x, int64_t offset, int axis1, int axis2) {
  const char *op = "diagonal";
  if (!ti_ok(ctx, op, &x, 1)) return NULL;
  const frit_shape *s = ti_shape(ctx, x);
  int nd = s->ndim;
  if (nd < 2) return TI_FAIL1(ctx, op, x, "diag requires an array of at least two dimensions");
  int a1 = ti_axis(ctx, op, x, axis1, nd), a2 = a1 < 0 ? -1 : ti_axis(ctx, op, x, axis2, nd);
  if (a1 < 0 || a2 < 0) return NULL;
  if (a1 == a2) return TI_FAIL1(ctx, op, x, "axis1 and axis2 cannot be the same (both %d)", a1);
  int perm[FRIT_MAX_DIMS], n = 0;
  for (int i = 0; i < nd; i++)
    if (i != a1 && i != a2) perm[n++] = i;
  perm[n++] = a1, perm[n++] = a2;
  frit_tensor *y = ti_permute(ctx, x, perm);
  if (!y) return NULL;
  frit_uop *r = s->dims[a1], *c = s->dims[a2], *zero = ti_dim(ctx, 0);
  frit_uop *rs = zero, *cs = zero, *rr = r, *cc = c;
  if (offset >= 0) {
    frit_uop *o = ti_dim(ctx, offset);
    cs = dim2(ctx, FRIT_OP_MIN, o, c);
    cc = ti_dim_sub(ctx, c, cs);
  } else {
    frit_uop *o = ti_dim(ctx, -offset);
    rs = dim2(ctx, FRIT_OP_MIN, o, r);
    rr = ti_dim_sub(ctx, r, rs);
  }
  frit_uop *L = ti_dim_eq(rr, cc) ? rr : dim2(ctx, FRIT_OP_MIN, rr, cc);
  if (!L) return NULL;
  frit_uop *b[FRIT_MAX_DIMS], *e[FRIT_MAX_DIMS], *d[FRIT_MAX_DIMS];
  for (int i = 0; i < nd - 2; i++) b[i] = zero, e[i] = d[i] = ti_shape(ctx, y)->dims[i];
  b[nd - 2] = rs, e[nd - 2] = ti_dim_add(ctx, rs, L);
  b[nd - 1] = cs, e[nd - 1] = ti_dim_add(ctx, cs, L);
  y = ti_shrink(ctx, y, b, e);
  d[nd - 2] = ti_dim_mul(ctx, L, L);
  y = y ? ti_reshape(ctx, y, nd - 1, d) : NULL;
  frit_uop *pb[FRIT_MAX_DIMS], *pa[FRIT_MAX_DIMS];
  for (int i = 0; i < nd - 1; i++) pb[i] = pa[i] = zero;
  pa[nd - 2] = L;
  y = y ? ti_pad(ctx, y, pb, pa) : NULL;
  d[nd - 2] = L, d[nd - 1] = ti_dim_add(ctx, L, ti_dim(ctx, 1));
  y = y ? ti_reshape(ctx, y, nd, d) : NULL;
  for (int i = 0; i < nd; i++) b[i] = zero, e[i] = d[i];
  e[nd - 1] = ti_dim(ctx, 1);
  y = y ? ti_shrink(ctx, y, b, e) : NULL;
  return y ? ti_reshape(ctx, y, nd - 1, d) : NULL;
}
