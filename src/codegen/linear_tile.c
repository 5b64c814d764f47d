/* Tiled renderings of contractions for devices (docs/devices.md, "Tiled contractions"): a kernel
 * whose one reduction multiplies operands read along one of its two innermost output axes each
 * (a matmul, a batched matmul, a dense layer with its epilogue) runs a work-group per output tile,
 * the operands' tiles staged through local memory and each thread holding a block of outputs in
 * registers. */
#include "codegen/linear.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* 256 threads as 16 x 16, each 8 x 8 outputs: a 128 x 128 tile, its operands staged 8 steps of
 * the reduction at a time (2 x 4 KiB of f32 a step). The row stride of the staged tiles is
 * padded by 4 elements: a row-major operand staged with its reduction index fastest across the
 * threads writes 8 rows at once, which would hit one bank 8 times. */
enum { TILE_THREADS = 256, TILE_TX = 16, TILE_TY = 16, TILE_TM = 8, TILE_TN = 8, TILE_PAD = 4 };
enum { TILE_BM = TILE_TY * TILE_TM, TILE_BN = TILE_TX * TILE_TN, TILE_MAX_OPS = 2, TILE_MAX_BATCH = 6 };

/* The reduction steps staged at a time: 8, or FRIT_DEVICE_TILE_BK (4 to 32, a power of two; a
 * measuring knob). */
static int tile_bk(void) {
  const char *e = getenv("FRIT_DEVICE_TILE_BK");
  int v = e ? atoi(e) : 8;
  return v == 4 || v == 16 || v == 32 ? v : 8;
}
#define TILE_BK tile_bk()

typedef struct tile_plan {
  frit_uop *store, *red;
  frit_uop *batch[TILE_MAX_BATCH];
  int nbatch;
  frit_uop *ri, *rj, *rk;
  frit_uop *op[2][TILE_MAX_OPS]; /* [0]: read along the rows (i), [1]: along the columns (j) */
  int nop[2];
  bool red_fast[2][TILE_MAX_OPS]; /* the reduction index is the operand's contiguous one */
} tile_plan;

static int rbit(const cg *g, const frit_uop *r) { return g->rix[L(g, r)]; }
static bool uses(const cg *g, const frit_uop *u, const frit_uop *r) { return (g->free_[L(g, u)] >> rbit(g, r)) & 1; }

static bool parallel_axis(const frit_uop *r) {
  return r->arg.i1 == FRIT_AXIS_GLOBAL || r->arg.i1 == FRIT_AXIS_LOOP || r->arg.i1 == FRIT_AXIS_UPCAST;
}

/* Does u's subgraph read memory? (an index through loaded data: a gather) */
static bool reads_memory(const frit_uop *u, int depth) {
  if (u->op == FRIT_OP_LOAD || depth > 64) return true;
  for (uint32_t i = 0; i < u->nsrc; i++)
    if (!frit_dtype_is_ptr(u->src[i]->dtype) && reads_memory(u->src[i], depth + 1)) return true;
  return false;
}

static const frit_uop *param_of(const frit_uop *access) {
  const frit_uop *ix = access->src[0];
  return ix->op == FRIT_OP_INDEX && ix->src[0]->op == FRIT_OP_DEFINE_GLOBAL ? ix->src[0] : NULL;
}

/* The reduction's element value, down to its loads: each load is an operand; a range used outside
 * the loads (a mask on the indices) or more operands than staged make it no contraction. */
static bool collect_operands(cg *g, tile_plan *t, frit_uop *u, uint8_t *seen) {
  uint32_t k = L(g, u);
  if (seen[k]) return true;
  seen[k] = 1;
  if (u->op == FRIT_OP_RANGE || u->op == FRIT_OP_AFTER || u->op == FRIT_OP_REDUCE) return false;
  if (u->op != FRIT_OP_LOAD) {
    for (uint32_t i = 0; i < u->nsrc; i++)
      if (!collect_operands(g, t, u->src[i], seen)) return false;
    return true;
  }
  const frit_uop *p = param_of(u), *ps = param_of(t->store);
  if (!p || !ps || p->arg.i0 == ps->arg.i0 || u->nsrc != 1 || reads_memory(u->src[0]->src[1], 0)) return false;
  if (uses(g, u, t->ri) && uses(g, u, t->rj)) return false;
  int side = uses(g, u, t->rj) ? 1 : 0;
  if (t->nop[side] == TILE_MAX_OPS) return false;
  t->red_fast[side][t->nop[side]] = cgl_stride1(g, u->src[0]->src[1], rbit(g, t->rk), 0);
  t->op[side][t->nop[side]++] = u;
  return true;
}

static bool plan(cg *g, frit_uop *ast, tile_plan *t) {
  memset(t, 0, sizeof *t);
  if (g->dialect == FRIT_DIALECT_C || ast->op != FRIT_OP_SINK || ast->nsrc != 1) return false;
  frit_uop *e = ast->src[0];
  if (e->op != FRIT_OP_END || e->nsrc < 3 || e->nsrc > 3 + TILE_MAX_BATCH || e->src[0]->op != FRIT_OP_STORE)
    return false;
  for (uint32_t i = 1; i < e->nsrc; i++)
    if (!parallel_axis(e->src[i]) || !cgl_launch_known(e->src[i]->src[0], 0)) return false;
  t->store = e->src[0];
  t->nbatch = (int)e->nsrc - 3;
  for (int b = 0; b < t->nbatch; b++) t->batch[b] = e->src[1 + b];
  t->ri = e->src[e->nsrc - 2], t->rj = e->src[e->nsrc - 1];
  for (size_t k = 0; k < g->n; k++) {
    frit_uop *u = g->nodes[k];
    frit_op op = (frit_op)u->op;
    if (op == FRIT_OP_DEFINE_REG || op == FRIT_OP_DEFINE_LOCAL || op == FRIT_OP_ATOMIC || op == FRIT_OP_ATOMIC_CAS ||
        op == FRIT_OP_IF || op == FRIT_OP_AFTER || op == FRIT_OP_BARRIER || (op == FRIT_OP_STORE && u != t->store) ||
        (op == FRIT_OP_END && u != e))
      return false;
    if (op != FRIT_OP_REDUCE) continue;
    if (t->red || u->nsrc != 2 || frit_dtype_lanes(u->dtype) != 1 || !cgl_launch_known(u->src[1]->src[0], 0)) return false;
    t->red = u, t->rk = u->src[1];
  }
  frit_op rop = t->red ? (frit_op)t->red->arg.i0 : FRIT_OP_COUNT_;
  if (rop != FRIT_OP_ADD && rop != FRIT_OP_MUL && rop != FRIT_OP_MAX && rop != FRIT_OP_MIN && rop != FRIT_OP_AND &&
      rop != FRIT_OP_OR && rop != FRIT_OP_XOR)
    return false;
  frit_scalar_kind k = frit_dtype_kind(t->red->dtype);
  if (k == FRIT_C64 || k == FRIT_C128) return false;
  /* short constant axes are not worth a tile */
  const frit_uop *ext[3] = {t->ri->src[0], t->rj->src[0], t->rk->src[0]};
  for (int a = 0; a < 3; a++)
    if (ext[a]->op == FRIT_OP_CONST && ext[a]->arg.value.i < (a == 2 ? TILE_BK : 16)) return false;
  uint8_t *seen = calloc(g->n + 1, 1);
  if (!seen) return false;
  bool ok = collect_operands(g, t, t->red->src[0], seen);
  free(seen);
  return ok && t->nop[0] >= 1 && t->nop[1] >= 1;
}

/* A chain of scopes for emission: one block per batch range, then the given ranges in order,
 * each with its definition line (NULL: defined outside, or never used), inside holder block h. */
static int chain(cg *g, int h, const tile_plan *t, frit_uop *const *rs, const char *const *defs, const char *const *hdrs,
                 int n) {
  int b = h;
  for (int i = 0; i < t->nbatch + n && b >= 0; i++) {
    frit_uop *r = i < t->nbatch ? t->batch[i] : rs[i - t->nbatch];
    b = cgl_new_block(g, b, rbit(g, r), false);
    if (b < 0) return -1;
    if (i < t->nbatch) continue;
    const char *d = defs[i - t->nbatch], *hd = hdrs ? hdrs[i - t->nbatch] : NULL;
    if (hd) cg_puts(&g->blocks[b].header, hd);
    if (d) cgl_line(g, b, "const %s r%" PRIu32 " = (%s)(%s);", cg_ctype(frit_dtype_kind(r->dtype)), L(g, r),
                    cg_ctype(frit_dtype_kind(r->dtype)), d);
  }
  return b;
}

/* Closes the chain from block b up to holder h and moves h's text onto out. */
static void unchain(cg *g, int b, int h, cg_str *out) {
  for (; b != h; b = g->blocks[b].parent) cgl_close_block(g, b);
  blk *H = &g->blocks[h];
  if (H->text.oom) out->oom = true;
  if (H->text.s) cg_puts(out, H->text.s);
  cgl_retire_block(H);
}

/* Staging of operand o of side s (0: rows, 1: columns) for reduction step k0_: each thread
 * loads its share of the BM x BK (or BK x BN) elements into local array sS<s><o>, the index
 * that is contiguous in memory fastest across the threads; rows, columns and steps past the
 * end are clamped to the last (their values are never combined into a stored output). */
static bool stage(cg *g, const tile_plan *t, int s, int o, const char *M, const char *N, const char *K, cg_str *out) {
  int wide = s == 0 ? TILE_BM : TILE_BN;
  bool red_fast = t->red_fast[s][o];
  cg_printf(out, "for (int e_ = (int)frit_lid; e_ < %d; e_ += %d) {\n", wide * TILE_BK, TILE_THREADS);
  if (red_fast) cg_printf(out, "const int kk_ = e_ %% %d, xx_ = e_ / %d;\n", TILE_BK, TILE_BK);
  else cg_printf(out, "const int xx_ = e_ %% %d, kk_ = e_ / %d;\n", wide, wide);
  int h = cgl_new_block(g, 0, -1, false);
  if (h < 0) return false;
  char dx[256], dk[256];
  snprintf(dx, sizeof dx, "frit_%c0 + xx_ < %s ? frit_%c0 + xx_ : %s - 1", s ? 'j' : 'i', s ? N : M, s ? 'j' : 'i',
           s ? N : M);
  snprintf(dk, sizeof dk, "k0_ + kk_ < %s ? k0_ + kk_ : %s - 1", K, K);
  frit_uop *rs[3] = {t->ri, t->rj, t->rk};
  const char *defs[3] = {s ? NULL : dx, s ? dx : NULL, dk};
  int b = chain(g, h, t, rs, defs, NULL, 3);
  const char *v = b < 0 ? NULL : cgl_emit(g, t->op[s][o], b);
  if (!v) return false;
  cgl_line(g, b, "frit_s%d%d[kk_][xx_] = %s;", s, o, v);
  unchain(g, b, h, out);
  cg_puts(out, "}\n");
  return !g->failed;
}

/* One step of the reduction (kk_) on the staged tiles: every thread's 8 x 8 accumulators. */
static bool step(cg *g, const tile_plan *t, bool wide, cg_str *out) {
  frit_scalar_kind k = frit_dtype_kind(t->red->dtype);
  for (int s = 0; s < 2; s++)
    for (int o = 0; o < t->nop[s]; o++) {
      int n = s ? TILE_TN : TILE_TM;
      frit_scalar_kind ko = frit_dtype_kind(t->op[s][o]->dtype);
      cg_printf(out, "%s frit_r%d%d[%d];\n", cg_ctype(ko), s, o, n);
      if (g->dialect == FRIT_DIALECT_CUDA && ko == FRIT_F32) /* 16-byte loads (nvcc keeps them scalar) */
        cg_printf(out, "#pragma unroll\nfor (int x_ = 0; x_ < %d; x_ += 4) { const float4 q_ = *(const float4 *)"
                       "&frit_s%d%d[kk_][frit_t%c * %d + x_]; frit_r%d%d[x_] = q_.x; frit_r%d%d[x_ + 1] = q_.y; "
                       "frit_r%d%d[x_ + 2] = q_.z; frit_r%d%d[x_ + 3] = q_.w; }\n",
                  n, s, o, s ? 'x' : 'y', n, s, o, s, o, s, o, s, o);
      else
        cg_printf(out, "#pragma unroll\nfor (int x_ = 0; x_ < %d; x_++) frit_r%d%d[x_] = frit_s%d%d[kk_][frit_t%c * %d + x_];\n",
                  n, s, o, s, o, s ? 'x' : 'y', n);
    }
  cg_printf(out, "#pragma unroll\nfor (int m_ = 0; m_ < %d; m_++)\n#pragma unroll\nfor (int n_ = 0; n_ < %d; n_++)",
            TILE_TM, TILE_TN);
  int h = cgl_new_block(g, 0, -1, false);
  if (h < 0) return false;
  frit_uop *rs[3] = {t->ri, t->rj, t->rk};
  const char *defs[3] = {NULL, NULL, NULL};
  int b = chain(g, h, t, rs, defs, NULL, 3);
  if (b < 0) return false;
  for (int s = 0; s < 2; s++)
    for (int o = 0; o < t->nop[s]; o++) {
      char nm[64];
      snprintf(nm, sizeof nm, "frit_r%d%d[%c_]", s, o, s ? 'n' : 'm');
      if (!cgl_set_name(g, t->op[s][o], b, nm)) return false;
    }
  frit_op rop = (frit_op)t->red->arg.i0;
  frit_uop *x = t->red->src[0];
  cg_str e = {0};
  const char *acc = "frit_acc[m_][n_]";
  if (x->op == FRIT_OP_MUL && rop == FRIT_OP_ADD && (k == FRIT_F32 || k == FRIT_F64)) {
    const char *va = cgl_emit(g, x->src[0], b);
    char *a = va ? cgl_strdup(g, va) : NULL;
    const char *vb = a ? cgl_emit(g, x->src[1], b) : NULL;
    if (vb) cg_printf(&e, "frit_fma%s(%s, %s, %s)", k == FRIT_F32 ? "f" : "", a, vb, acc);
    free(a);
  } else {
    const char *v = cgl_emit(g, x, b);
    if (v && wide) cg_printf(&e, "%s %s (%s)%s", acc, rop == FRIT_OP_ADD ? "+" : "*", cg_wtype(k), v);
    else if (v) {
      const char *ab[2] = {acc, v};
      if (!cg_render_alu(g->ctx, &e, rop, k, ab, 2)) g->failed = true;
    }
  }
  if (e.s && !g->failed) cgl_line(g, b, "%s = %s;", acc, e.s);
  else g->failed = true;
  cg_free(&e);
  unchain(g, b, h, out);
  return !g->failed;
}

/* Each thread's outputs: the kernel's code after the reduction, with the accumulator as its
 * value, for the rows and columns inside the extents. */
static bool epilogue(cg *g, const tile_plan *t, bool wide, const char *M, const char *N, cg_str *out) {
  cg_printf(out, "#pragma unroll\nfor (int m_ = 0; m_ < %d; m_++)\n#pragma unroll\nfor (int n_ = 0; n_ < %d; n_++) {\n",
            TILE_TM, TILE_TN);
  int h = cgl_new_block(g, 0, -1, false);
  if (h < 0) return false;
  char di[128], dj[128], hi[320], hj[320];
  snprintf(di, sizeof di, "frit_i0 + frit_ty * %d + m_", TILE_TM);
  snprintf(dj, sizeof dj, "frit_j0 + frit_tx * %d + n_", TILE_TN);
  snprintf(hi, sizeof hi, "if (%s < %s)", di, M);
  snprintf(hj, sizeof hj, "if (%s < %s)", dj, N);
  frit_uop *rs[2] = {t->ri, t->rj};
  const char *defs[2] = {di, dj}, *hdrs[2] = {hi, hj};
  int b = chain(g, h, t, rs, defs, hdrs, 2);
  if (b < 0) return false;
  char nm[64];
  frit_scalar_kind k = frit_dtype_kind(t->red->dtype);
  if (wide) snprintf(nm, sizeof nm, "((%s)frit_acc[m_][n_])", cg_ctype(k));
  else snprintf(nm, sizeof nm, "frit_acc[m_][n_]");
  if (!cgl_set_name(g, t->red, b, nm) || !cgl_emit(g, t->store, b)) return false;
  unchain(g, b, h, out);
  cg_puts(out, "}\n");
  return !g->failed;
}

static bool body(cg *g, const tile_plan *t, cg_str *out) {
  const char *ext[3];
  char *keep[3] = {NULL, NULL, NULL};
  frit_uop *rs[3] = {t->ri, t->rj, t->rk};
  for (int a = 0; a < 3; a++) {
    const char *v = cgl_emit(g, rs[a]->src[0], 0);
    if (!v || !(keep[a] = cgl_strdup(g, v))) goto fail;
  }
  cg_printf(out, "const int64_t frit_M = (int64_t)(%s), frit_N = (int64_t)(%s), frit_K = (int64_t)(%s);\n", keep[0],
            keep[1], keep[2]);
  ext[0] = "frit_M", ext[1] = "frit_N", ext[2] = "frit_K";
  const char *S = g->dialect == FRIT_DIALECT_OPENCL ? "__local" : "__shared__", *bar = cg_group_barrier(g->dialect);
  for (int s = 0; s < 2; s++)
    for (int o = 0; o < t->nop[s]; o++)
      cg_printf(out, "%s %s frit_s%d%d[%d][%d];\n", S, cg_ctype(frit_dtype_kind(t->op[s][o]->dtype)), s, o, TILE_BK,
                (s ? TILE_BN : TILE_BM) + TILE_PAD);
  cg_printf(out, "const int frit_tx = (int)(frit_lid %% %d), frit_ty = (int)(frit_lid / %d);\n", TILE_TX, TILE_TX);
  cg_printf(out, "const int64_t frit_tm = (frit_M + %d) / %d, frit_tn = (frit_N + %d) / %d;\n", TILE_BM - 1, TILE_BM,
            TILE_BN - 1, TILE_BN);
  cg_puts(out, "for (int64_t t_ = g0_begin; t_ < g0_end; t_ += g0_step) {\n");
  cg_printf(out, "const int64_t frit_i0 = t_ / frit_tn %% frit_tm * %d, frit_j0 = t_ %% frit_tn * %d;\n", TILE_BM,
            TILE_BN);
  cg_puts(out, "int64_t frit_b = t_ / frit_tn / frit_tm; (void)frit_b;\n");
  /* batch indices, the innermost varying fastest */
  for (int b = t->nbatch - 1; b >= 0; b--) {
    const char *v = cgl_emit(g, t->batch[b]->src[0], 0);
    if (!v) goto fail;
    const char *T = cg_ctype(frit_dtype_kind(t->batch[b]->dtype));
    cg_printf(out, "const %s r%" PRIu32 " = (%s)(frit_b %% (int64_t)(%s)); frit_b /= (int64_t)(%s);\n", T,
              L(g, t->batch[b]), T, v, v);
  }
  frit_scalar_kind k = frit_dtype_kind(t->red->dtype);
  frit_op rop = (frit_op)t->red->arg.i0;
  bool wide = frit_dtype_is_int(t->red->dtype) && (rop == FRIT_OP_ADD || rop == FRIT_OP_MUL);
  cg_str id = {0};
  if (!cg_render_const(g->ctx, &id, k, cg_reduce_identity(rop, k))) goto fail;
  cg_printf(out, "%s frit_acc[%d][%d];\n", wide ? cg_wtype(k) : cg_ctype(k), TILE_TM, TILE_TN);
  cg_printf(out, "#pragma unroll\nfor (int m_ = 0; m_ < %d; m_++)\n#pragma unroll\nfor (int n_ = 0; n_ < %d; n_++) "
                 "frit_acc[m_][n_] = %s%s;\n",
            TILE_TM, TILE_TN, wide ? "(uint64_t)" : "", id.s);
  cg_free(&id);
  cg_printf(out, "for (int64_t k0_ = 0; k0_ < frit_K; k0_ += %d) {\n", TILE_BK);
  for (int s = 0; s < 2; s++)
    for (int o = 0; o < t->nop[s]; o++)
      if (!stage(g, t, s, o, ext[0], ext[1], ext[2], out)) goto fail;
  cg_printf(out, "%s\n", bar);
  cg_str st = {0};
  if (!step(g, t, wide, &st)) return cg_free(&st), false;
  /* full steps unrolled; the last, shorter one a plain loop */
  cg_printf(out, "if (frit_K - k0_ >= %d) {\n#pragma unroll\nfor (int kk_ = 0; kk_ < %d; kk_++) {\n%s}\n", TILE_BK,
            TILE_BK, st.s ? st.s : "");
  cg_printf(out, "} else {\nfor (int kk_ = 0; kk_ < (int)(frit_K - k0_); kk_++) {\n%s}\n}\n", st.s ? st.s : "");
  if (st.oom) out->oom = true;
  cg_free(&st);
  cg_printf(out, "%s\n}\n", bar);
  if (!epilogue(g, t, wide, ext[0], ext[1], out)) goto fail;
  cg_puts(out, "}\n");
  for (int a = 0; a < 3; a++) free(keep[a]);
  return !g->failed && !out->oom;
fail:
  for (int a = 0; a < 3; a++) free(keep[a]);
  return false;
}

/* The tile extents and launch size of a kernel with a tiled rendering. */
static bool tile_sizes(cg *g, const tile_plan *t, frit_cg_tile *out) {
  frit_ctx *ctx = g->ctx;
  frit_uop *e[3] = {t->ri->src[0], t->rj->src[0], t->rk->src[0]};
  for (int a = 0; a < 3; a++)
    if (frit_dtype_kind(e[a]->dtype) != FRIT_I64 && !(e[a] = frit_cast(ctx, e[a], FRIT_I64))) return false;
  out->m = e[0], out->n = e[1], out->k = e[2];
  frit_uop *tiles = NULL;
  for (int a = 0; a < 2; a++) {
    int64_t sz = a ? TILE_BN : TILE_BM;
    frit_uop *q = frit_binary(ctx, FRIT_OP_ADD, e[a], frit_const_int(ctx, FRIT_I64, sz - 1));
    q = q ? frit_binary(ctx, FRIT_OP_IDIV, q, frit_const_int(ctx, FRIT_I64, sz)) : NULL;
    tiles = q && tiles ? frit_binary(ctx, FRIT_OP_MUL, tiles, q) : q;
    if (!tiles) return false;
  }
  for (int b = 0; b < t->nbatch; b++) {
    frit_uop *x = t->batch[b]->src[0];
    if (frit_dtype_kind(x->dtype) != FRIT_I64) x = frit_cast(ctx, x, FRIT_I64);
    if (!x || !(tiles = frit_binary(ctx, FRIT_OP_MUL, tiles, x))) return false;
  }
  out->count = tiles;
  out->threads = TILE_THREADS;
  return true;
}

frit_status frit_codegen_render_tiled(frit_ctx *ctx, frit_uop *ast, const char *fn_name, frit_uop *const *vars,
                                      int nvars, uint64_t alias_mask, frit_dialect dialect, char **text_out,
                                      frit_cg_tile *tile) {
  cg G;
  cg *g = &G;
  frit_status st = FRIT_OK;
  cg_str fn = {0}, text = {0};
  *text_out = NULL;
  memset(tile, 0, sizeof *tile);
  tile_plan t;
  if (!cgl_setup(g, ctx, ast, vars, nvars, dialect)) goto fail;
  if (!plan(g, ast, &t)) goto done;
  g->group = TILE_THREADS, g->group_top = -2;
  cg_kernel_open(&fn, dialect, fn_name, nvars, cg_param_count(g->nodes, g->n), TILE_THREADS);
  if (dialect == FRIT_DIALECT_CUDA && fn.s) {
    /* two groups a multiprocessor: at most 128 registers a thread (the 8 x 8 tile took 130) */
    char *at = strstr(fn.s, "__global__ void ");
    if (at) {
      cg_str f2 = {0};
      cg_printf(&f2, "%.*s__global__ void __launch_bounds__(%d, 2) %s", (int)(at - fn.s), fn.s, TILE_THREADS,
                at + strlen("__global__ void "));
      cg_free(&fn);
      fn = f2;
    }
  }
  if (!cgl_declare(g, &fn, alias_mask) || !body(g, &t, &text) || !tile_sizes(g, &t, tile)) goto fail;
  if (g->blocks[0].text.s) cg_puts(&fn, g->blocks[0].text.s);
  if (text.s) cg_puts(&fn, text.s);
  cg_puts(&fn, "}\n");
  if (!fn.oom && !text.oom && !g->blocks[0].text.oom && (*text_out = cg_take(&fn))) goto done;
  frit_set_error(ctx, FRIT_ERR_NOMEM, "codegen: out of memory");
fail:
  st = frit_last_status(ctx) != FRIT_OK ? frit_last_status(ctx) : frit_set_error(ctx, FRIT_ERR_INVALID, "codegen: tiled rendering failed");
  memset(tile, 0, sizeof *tile);
done:
  cg_free(&fn);
  cg_free(&text);
  cgl_teardown(g);
  return st;
}
