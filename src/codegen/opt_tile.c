/* Register tiling of matmul-shaped kernels: out[i, j] = f(reductions over k of terms loading
 * contiguously along j). The (i, j) loops become i1 (the thread axis: blocks of TB row tiles),
 * j0, i0, ii (TI rows), jv (JV vectors), jl (L lanes) with i = min((i1*TB + i0)*TI + ii, M - 1)
 * and j = (j0*JV + jv)*L + jl. The unroller gives the TI x JV (row, vector) pairs their own
 * reductions in one k loop, and the renderer vectorises the jl loop outside-in, so the kernel
 * holds TI x JV vector accumulators over k (6 x 2 on AVX2: 12 of the 16 registers, 2 loads of b
 * and 6 broadcasts of a per 12 FMAs) and a thread's B panel stays in cache over its TB tiles.
 * Rows past M (the last tile of an M that TI does not divide) read row M - 1 and store its values
 * again, in the same thread (see cg_tile for in-place updates). Each output element still folds
 * its k terms in order: results are bit for bit those of the untiled loop. */
#include "codegen/cg_internal.h"
#include "ir/walk.h"
#include <unistd.h>


/* Is r a term of the index sum with coefficient 1 (the other terms free of r)? */
static bool unit_term(frit_uop *ix, frit_uop *r, const uint8_t *dep, int depth) {
  if (ix == r) return true;
  if (ix->op != FRIT_OP_ADD || depth > 64) return false; /* a sum that long: not claimed (deep graphs) */
  for (int i = 0; i < 2; i++)
    if (!dep[ix->src[1 - i]->id] && unit_term(ix->src[i], r, dep, depth + 1)) return true;
  return false;
}

/* dep[id] = the node depends on r, for every node below root */
static uint8_t *dep_map(frit_uop *root, frit_uop *r, frit_uop **nodes, size_t n) {
  uint8_t *dep = calloc((size_t)root->id + 1, 1);
  if (!dep) return NULL;
  for (size_t k = 0; k < n; k++) {
    frit_uop *u = nodes[k];
    bool d = u == r;
    for (uint32_t i = 0; i < u->nsrc && !d; i++) d = dep[u->src[i]->id];
    dep[u->id] = d;
  }
  return dep;
}

/* Does a load of st read consecutive elements along j? With rows (a dependence map on a row
 * range, by node id), only a load that depends on the row counts. */
static bool loads_along(frit_uop *st, frit_uop *j, const uint8_t *rows) {
  size_t n = 0;
  frit_uop **nodes = frit_walk_topo(st, &n);
  uint8_t *dj = nodes ? dep_map(st, j, nodes, n) : NULL;
  bool r = false;
  for (size_t k = 0; k < n && dj && !r; k++) {
    frit_uop *u = nodes[k];
    r = u->op == FRIT_OP_LOAD && (!rows || rows[u->id]) && u->src[0]->op == FRIT_OP_INDEX &&
        unit_term(u->src[0]->src[1], j, dj, 0);
  }
  free(nodes);
  free(dj);
  return r;
}

/* Does a load in the reduction body rb not depend on i, so that the rows of a tile share it (a
 * matmul's b[k, j], a conv's weights)? Where every load depends on i (x.max(axis=1) of (N, C,
 * HW): x[n, c, hw]) the tile shares nothing, and its accumulators, whose max/min carry NaN and
 * sign flags, ran 2-6x slower than the register-array rewrite (codegen/opt_regacc.c). */
static bool shares_a_load(frit_uop *rb, const uint8_t *di) {
  size_t n = 0;
  frit_uop **nodes = frit_walk_topo(rb, &n);
  bool r = !nodes; /* out of memory: as before */
  for (size_t k = 0; k < n && !r; k++)
    r = nodes[k]->op == FRIT_OP_LOAD && !di[nodes[k]->id];
  free(nodes);
  return r;
}

/* ops whose order or state a tile's reordering of rows would break */
static bool stateful(frit_op op) {
  return op == FRIT_OP_AFTER || op == FRIT_OP_DEFINE_REG || op == FRIT_OP_DEFINE_LOCAL || op == FRIT_OP_IF ||
         op == FRIT_OP_END || op == FRIT_OP_ATOMIC || op == FRIT_OP_ATOMIC_CAS || op == FRIT_OP_GROUP ||
         op == FRIT_OP_BARRIER;
}

/* contiguous: a load reads along j as it stands (else only after j is split into panels) */
static bool fits(frit_uop *e, frit_uop *i, frit_uop *j, bool *contiguous_out, int *nred_out) {
  frit_uop *st = e->src[0];
  if (st->op != FRIT_OP_STORE || st->nsrc != 2) return false;
  size_t n = 0;
  frit_uop **nodes = frit_walk_topo(st, &n);
  if (!nodes) return false;
  uint8_t *di = dep_map(st, i, nodes, n), *dj = dep_map(st, j, nodes, n);
  bool ok = di && dj, red = false;
  int nred = 0;
  for (size_t k = 0; k < n && ok; k++) {
    frit_uop *u = nodes[k];
    frit_op op = (frit_op)u->op;
    if (stateful(op)) ok = false;
    if (op == FRIT_OP_REDUCE) {
      if (!di[u->src[0]->id] || !dj[u->src[0]->id] || frit_dtype_lanes(u->dtype) != 1) ok = false;
      if (ok && !shares_a_load(u->src[0], di)) ok = false;
      for (uint32_t s = 1; s < u->nsrc && ok; s++)
        if (di[u->src[s]->src[0]->id] || dj[u->src[s]->src[0]->id]) ok = false; /* triangular */
      red = true;
      nred++;
    }
  }
  /* the reductions' own loads decide: a bias read along j in the epilogue says nothing of B, whose
   * packed panel index (a division by the panel) must still be simplified, or the jl loop does
   * not vectorise (x @ w + b ran 10x slower than x @ w) */
  bool along = false;
  for (size_t k = 0; k < n && ok && !along; k++)
    if (nodes[k]->op == FRIT_OP_REDUCE) along = loads_along(nodes[k]->src[0], j, NULL);
  free(nodes);
  free(di);
  free(dj);
  *contiguous_out = ok && red && along;
  *nred_out = nred;
  return ok && red;
}

static frit_uop *cint(frit_ctx *ctx, frit_dtype dt, int64_t v) { return frit_const_int(ctx, dt, v); }
static frit_uop *mul(frit_ctx *ctx, frit_uop *a, frit_uop *b) { return a && b ? frit_binary(ctx, FRIT_OP_MUL, a, b) : NULL; }
static frit_uop *add(frit_ctx *ctx, frit_uop *a, frit_uop *b) { return a && b ? frit_binary(ctx, FRIT_OP_ADD, a, b) : NULL; }

/* Half the L2 of the core generating the code (the host kernels run there): a thread block's rows
 * of A, with the B panel they share beside them. 128 KiB where it cannot be read. */
static int64_t a_block_budget(void) {
  long l2 = -1; /* asked each time: contexts generate code in several threads at once */
#ifdef _SC_LEVEL2_CACHE_SIZE
  l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
  return l2 >= 256 * 1024 && l2 <= 64 * 1024 * 1024 ? l2 / 2 : 128 * 1024;
}

/* Row tiles a thread block: as many as keep a block's rows of A in L2 over one B panel's pass (N: B's columns)
 * (each block streams all of B once: a dense layer's 3136-long reduction in blocks of 2 tiles
 * read its 3.2 MB of B 11 times a call, at 64% of the FMA peak; in blocks of 11, 83%), at most
 * 16; among those, the count whose blocks end soonest when `threads` share them (the most tiles
 * one thread computes, clamped tiles included), the larger on a tie. */
static int64_t tiles_per_block(int64_t T, int64_t TI, int64_t K, int64_t N, int64_t esize, int64_t threads) {
  int64_t cap = 16;
  if (K > 0) {
    /* A B much larger than L2 comes from memory, once for each block: then fewer and taller
     * blocks, A filling twice the L2 (a 4096^2 matmul's 64 MB of B: 0.71 of OpenBLAS in blocks
     * of 10 6-row tiles, 0.85 in 32; with 8-row tiles 171-217 GFLOP/s in blocks of 16, 252-276
     * in 32; at 2048^2, whose 16 MB of B the L3 keeps, 32 was worse than 16) */
    int64_t l2 = 2 * a_block_budget();
    bool b_from_memory = N > 0 && K * N * esize > 16 * l2;
    int64_t top = b_from_memory ? 32 : 16;
    int64_t fit = (b_from_memory ? 2 * l2 : l2 / 2) / (TI * K * esize);
    cap = fit < 2 ? 2 : fit < top ? fit : top;
  }
  if (cap > T) cap = T;
  int64_t best = cap, cost = -1;
  for (int64_t tb = cap; tb >= 1 && tb >= cap / 4; tb--) {
    int64_t blocks = (T + tb - 1) / tb, c = (blocks + threads - 1) / threads * tb;
    if (cost < 0 || c < cost) best = tb, cost = c;
  }
  return best;
}

/* the static extent of the reduction (the first REDUCE's ranges), or -1 */
static int64_t reduce_extent(frit_uop *st) {
  size_t n = 0;
  frit_uop **nodes = frit_walk_topo(st, &n);
  int64_t k = -1;
  for (size_t q = 0; q < n && k < 0 && nodes; q++)
    if (nodes[q]->op == FRIT_OP_REDUCE) {
      k = 1;
      for (uint32_t s = 1; s < nodes[q]->nsrc && k > 0; s++) {
        int64_t x = cg_const_extent(nodes[q]->src[s]);
        k = x > 0 ? k * x : -1;
      }
    }
  free(nodes);
  return k;
}

/* Does v read memory at row i outside its reductions (an in-place update's own element, p in
 * p - lr * a @ b, whose buffer a donated call also writes)? */
static bool epilogue_reads_row(frit_uop *v, frit_uop *i) {
  size_t n = 0;
  frit_uop **nodes = frit_walk_topo(v, &n);
  uint8_t *outside = nodes ? calloc((size_t)v->id + 1, 1) : NULL, *di = nodes ? dep_map(v, i, nodes, n) : NULL;
  bool r = !outside || !di; /* conservative on OOM */
  if (outside) outside[v->id] = 1;
  for (size_t k = n; k-- > 0 && !r;) {
    frit_uop *u = nodes[k];
    if (!outside[u->id] || u->op == FRIT_OP_REDUCE) continue;
    if (u->op == FRIT_OP_LOAD && di[u->id]) r = true;
    for (uint32_t q = 0; q < u->nsrc; q++) outside[u->src[q]->id] = 1;
  }
  free(nodes);
  free(outside);
  free(di);
  return r;
}

/* STORE(INDEX(buf, idx[, gate]), v) -> the same with the gate row < M (and the old gate) */
static frit_uop *gate_store(frit_ctx *ctx, frit_uop *st, frit_uop *row, frit_uop *m) {
  frit_uop *ix = st->src[0], *in = row && m ? frit_binary(ctx, FRIT_OP_CMPLT, row, m) : NULL;
  if (in && ix->nsrc > 2) in = frit_binary(ctx, FRIT_OP_AND, ix->src[2], in);
  if (!in) return NULL;
  frit_uop *srcs[3] = {ix->src[0], ix->src[1], in};
  frit_uop *nix = frit_uop_replace_src(ctx, ix, srcs, 3);
  frit_uop *ss[2] = {nix, st->src[1]};
  return nix ? frit_uop_replace_src(ctx, st, ss, 2) : NULL;
}

/* The store with i -> ie and j -> je inside its reductions, j -> min(je, N - 1) outside them
 * (the epilogue's loads and the store's index): see pad_cols in cg_tile. */
static frit_uop *subst_padded_columns(frit_ctx *ctx, frit_uop *st, frit_uop *i, frit_uop *j, frit_uop *ie,
                                      frit_uop *je, int64_t N) {
  enum { MAX_RED = 14 };
  size_t n = 0;
  frit_uop **nodes = frit_walk_topo(st, &n);
  frit_uop *from[MAX_RED + 2] = {i, j}, *to[MAX_RED + 2] = {ie, frit_binary(ctx, FRIT_OP_MIN, je, cint(ctx, je->dtype, N - 1))};
  int w = 2;
  bool ok = nodes && to[1];
  for (size_t k = 0; k < n && ok; k++) {
    if (nodes[k]->op != FRIT_OP_REDUCE) continue;
    if (w == MAX_RED + 2) ok = false;
    frit_uop *r = ok ? cg_subst(ctx, nodes[k], (frit_uop *[]){i, j}, (frit_uop *[]){ie, je}, 2) : NULL;
    if (!r) ok = false;
    else from[w] = nodes[k], to[w++] = r;
  }
  free(nodes);
  return ok ? cg_subst(ctx, st, from, to, w) : NULL;
}

/* Do the loads inside st's reductions that depend on jl all read one buffer (the packed panels,
 * whose padding repeats the last column) consecutively along jl? Another one (a gather, or a
 * vector of N read past its end by the padding lanes) would break pad_cols. */
static bool reduce_loads_all_along(frit_uop *st, frit_uop *jl) {
  size_t n = 0;
  frit_uop **nodes = frit_walk_topo(st, &n);
  uint8_t *dj = nodes ? dep_map(st, jl, nodes, n) : NULL, *in_red = nodes ? calloc((size_t)st->id + 1, 1) : NULL;
  bool ok = dj && in_red;
  frit_uop *panels = NULL;
  for (size_t k = n; k-- > 0 && ok;) { /* parents first: mark what the reductions read */
    frit_uop *u = nodes[k];
    if (u->op == FRIT_OP_REDUCE) in_red[u->id] = 1;
    if (!in_red[u->id]) continue;
    if (u->op == FRIT_OP_LOAD && dj[u->id]) {
      if (!(u->src[0]->op == FRIT_OP_INDEX && unit_term(u->src[0]->src[1], jl, dj, 0))) ok = false;
      else if (!panels) panels = u->src[0]->src[0];
      else if (u->src[0]->src[0] != panels) ok = false;
    }
    for (uint32_t q = 0; q < u->nsrc; q++) in_red[u->src[q]->id] = 1;
  }
  free(nodes);
  free(dj);
  free(in_red);
  return ok;
}

/* Kernels of dot products, out[i] = f(reductions over k of terms such as a[i, k] * v[k]), whose
 * one output loop is the thread axis i: a matrix-vector product ran one accumulator chain a row,
 * at 0.27 of numpy's sgemv. The rows are split into tiles of TI (i = i1 * TI + ii, the thread axis
 * now i1), which the unroller turns into TI reductions fused in one k loop: TI vector accumulators,
 * and each load of v serves TI rows. Only where a reduction shares a load between rows (v) and
 * reads along its own range (a[i, k]); each row folds its terms as before. NULL: an error. */
static frit_uop *tile_dot_rows(frit_ctx *ctx, frit_uop *ast, frit_uop **g0p, const frit_cg_choices *ch) {
  frit_uop *e = ast->src[0], *i = *g0p, *st = e->src[0];
  int64_t M = cg_const_extent(i);
  if (M <= 0 || st->op != FRIT_OP_STORE || st->nsrc != 2) return ast;
  size_t n = 0;
  frit_uop **nodes = frit_walk_topo(st, &n);
  uint8_t *di = nodes ? dep_map(st, i, nodes, n) : NULL;
  bool ok = di != NULL;
  int nred = 0;
  bool lane_sums = true;
  for (size_t k = 0; k < n && ok; k++) {
    frit_uop *u = nodes[k];
    frit_op op = (frit_op)u->op;
    if (stateful(op)) ok = false;
    if (op != FRIT_OP_REDUCE || !ok) continue;
    /* a row's own load along k (a[i, k]): v @ a reads v[k] along k and a[k, j] down a column,
     * the register array's case (codegen/opt_regacc.c); tiled here it ran 4x slower */
    nred++;
    lane_sums &= cg_long_float_sum(u);
    ok = nred <= 4 && di[u->src[0]->id] && frit_dtype_lanes(u->dtype) == 1 && u->nsrc == 2 && !di[u->src[1]->src[0]->id] &&
         shares_a_load(u->src[0], di) && loads_along(u->src[0], u->src[1], di);
  }
  free(nodes);
  free(di);
  /* one or two float sums over a long range get four (two) vectors of lanes each in the
   * linearizer (linear_reduce.c sum_vectors), chains enough: untiled, a 1024^2 matrix-vector
   * product took 42 us a thread against 58 in 8-row tiles (each row a stream of its own) */
  if (!ok || nred == 0 || (lane_sums && nred <= 2)) return ast;
  /* 8 accumulator chains: FMA latency x throughput on these cores, and 9 load streams */
  int64_t TI = 8 / nred;
  if (ch->tile_rows >= 1 && ch->tile_rows <= 16) TI = ch->tile_rows;
  bool epi = epilogue_reads_row(st->src[1], i);
  for (int64_t t = TI; epi && M % TI && t >= 2; t--)
    if (M % t == 0) TI = t;
  if (TI < 2 || M < 2 * TI || (epi && M % TI)) return ast;
  frit_dtype dt = i->dtype;
  int64_t T = (M + TI - 1) / TI;
  frit_uop *i1 = frit_range(ctx, cint(ctx, dt, T), 3000, FRIT_AXIS_GLOBAL);
  frit_uop *ii = frit_range(ctx, cint(ctx, dt, TI), 3002, FRIT_AXIS_UPCAST);
  frit_uop *row = add(ctx, mul(ctx, i1, cint(ctx, dt, TI)), ii);
  /* rows past M (a last tile that TI does not divide) compute and store row M - 1 again */
  if (row && T * TI != M) row = frit_binary(ctx, FRIT_OP_MIN, row, cint(ctx, dt, M - 1));
  frit_uop *nst = row ? cg_subst(ctx, st, &i, &row, 1) : NULL;
  frit_arg z = frit_arg_none();
  frit_uop *ne = nst ? frit_uop_new(ctx, FRIT_OP_END, FRIT_VOID, (frit_uop *[]){nst, i1, ii}, 3, &z) : NULL;
  frit_uop *sink = ne ? frit_uop_replace_src(ctx, ast, &ne, 1) : NULL;
  if (sink) *g0p = i1;
  return sink;
}

frit_uop *cg_tile(frit_ctx *ctx, frit_uop *ast, frit_uop **g0p, const frit_cg_choices *ch) {
  frit_uop *g0 = *g0p;
  if (!g0 || ast->op != FRIT_OP_SINK || ast->nsrc != 1) return ast;
  frit_uop *e = ast->src[0];
  if (e->op == FRIT_OP_END && e->nsrc == 2 && e->src[1] == g0) return tile_dot_rows(ctx, ast, g0p, ch);
  if (e->op != FRIT_OP_END || e->nsrc < 3 || e->nsrc > 16 || e->src[1] != g0) return ast;
  /* the rows: the range next to j (a conv's output column ow beside its channels o: the rows of
   * a tile then read neighbouring inputs), else the thread axis (a matmul's i) */
  uint32_t ri = e->nsrc > 3 && cg_const_extent(e->src[e->nsrc - 2]) >= 12 ? e->nsrc - 2 : 1;
  frit_uop *i = e->src[ri], *j = e->src[e->nsrc - 1];
  bool contiguous = false;
  int nred = 0;
  bool ok = fits(e, i, j, &contiguous, &nred);
  if (!ok && ri != 1) ri = 1, i = g0, ok = fits(e, i, j, &contiguous, &nred); /* no reduction reads that range */
  int64_t M = cg_const_extent(i), N = cg_const_extent(j);
  if (!ok || M <= 0 || N <= 0 || frit_dtype_kind(i->dtype) != frit_dtype_kind(j->dtype)) return ast;
  frit_dtype vt = e->src[0]->src[1]->dtype;
  int64_t L = frit_host_tile_lanes(vt);
  /* columns that whole vectors do not cover (N = 1000 of 16 lanes): half-width vectors where
   * they divide N (a 1000^2 matmul 14 ms in 8-lane tiles, where the untiled loop over B's
   * panels took 550 and the static untiled one 34; 4-lane tiles lost to the untiled static
   * loop: 500^2 16 ms against 4.7) */
  if (N % L && L >= 16 && N % (L / 2) == 0) L /= 2;
  int64_t JV = N % (2 * L) == 0 && !frit_dtype_is_complex(vt) ? 2 : 1;
  if (ch->tile_vecs == 1) JV = 1;
  if (ch->tile_vecs > 2 && ch->tile_vecs <= 4 && N % (ch->tile_vecs * L) == 0 && !frit_dtype_is_complex(vt))
    JV = ch->tile_vecs;
  /* 12 vector accumulators of AVX2's 16 registers (6 rows x 2 vectors), 16 of AVX-512's 32 (8 x
   * 2), leave registers for the loads of b and the broadcasts of a; one vector a row: 8 rows.
   * AVX-512 at 8 x 2: matmul 1024^2 280 -> 299 GFLOP/s against 6 x 2, the bench conv 31.0 ->
   * 26.9 ms against its 4 x 2 (the divisor of its 56 rows below); 10 x 2 tied, 12 x 2 and 14 x 2
   * spilled (250, 254). */
  int64_t TI = (JV >= 2 ? frit_host_tile_accumulators() / JV : 8) / nred;
  /* few rows (a conv's 16 output channels): a last tile that clamps would redo 2 of 18 rows; a
   * smaller height that divides M instead (8 rows of 2 vectors were 2x slower) */
  if (nred == 1 && M % TI && (M + TI - 1) / TI * TI - M > M / 20)
    for (int64_t t = TI; t >= 4; t--)
      if (M % t == 0) {
        TI = t;
        break;
      }
  /* two tiles of rows at least: fewer rows a tile where M is short of two 8-row tiles (as AVX2's
   * 6-row tiles took M of 12 and more) */
  if (TI > 6 && M < 2 * TI && M >= 12) TI = M / 2;
  if (ch->tile_rows >= 1 && ch->tile_rows <= 16 && M >= 2 * ch->tile_rows) TI = ch->tile_rows;
  /* rows past M (the last tile when TI does not divide M) read row M - 1 and store its values
   * again: the same values, unless the value reads its own element outside the reductions (an
   * in-place update would then apply twice). Such a kernel takes a row tile that divides M, or
   * else gates the stores of those rows (correct, but gcc does not vectorise the gated tile). */
  bool epi = epilogue_reads_row(e->src[0]->src[1], i);
  for (int64_t t = TI; epi && M % TI && t >= 2; t--)
    if (M % t == 0 && M >= 2 * t) TI = t;
  /* columns past N in the last tile: only where B is read from packed panels (tensor/linalg.c
   * packed_panels), whose padding repeats column N - 1. Their lanes then compute column N - 1
   * again, bit for bit, and the epilogue and the store take column min(j, N - 1): they store
   * the same values there (a scatter, once a tile). Not where the value reads its own element
   * outside the reductions (as for rows). */
  bool pad_cols = N % L != 0;
  if (pad_cols && (contiguous || epi)) return ast;
  if (TI < 1 || M < 2 * TI) return ast;
  int64_t T = (M + TI - 1) / TI;
  /* the blocks are the threads' work when the rows are the thread axis: a core each here */
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int64_t threads = i != g0 ? 1 : cores > 1 ? cores : 1;
  int64_t TB = tiles_per_block(T, TI, reduce_extent(e->src[0]), N, frit_dtype_bits(vt) / 8, threads);
  if (ch->tile_block >= 1 && ch->tile_block <= 64) TB = ch->tile_block < T ? ch->tile_block : T;
  int64_t NB = (T + TB - 1) / TB;
  frit_dtype dt = i->dtype;
  frit_uop *i1 = frit_range(ctx, cint(ctx, dt, NB), 3000, i == g0 ? FRIT_AXIS_GLOBAL : FRIT_AXIS_LOOP);
  frit_uop *i0 = frit_range(ctx, cint(ctx, dt, TB), 3001, FRIT_AXIS_LOOP);
  frit_uop *ii = frit_range(ctx, cint(ctx, dt, TI), 3002, FRIT_AXIS_UPCAST);
  frit_uop *j0 = frit_range(ctx, cint(ctx, dt, (N + JV * L - 1) / (JV * L)), 3003, FRIT_AXIS_LOOP);
  frit_uop *jv = frit_range(ctx, cint(ctx, dt, JV), 3005, FRIT_AXIS_UPCAST);
  frit_uop *jl = frit_range(ctx, cint(ctx, dt, L), 3004, FRIT_AXIS_LOOP);
  if (!i1 || !i0 || !ii || !j0 || !jv || !jl) return NULL;
  frit_uop *row = add(ctx, mul(ctx, add(ctx, mul(ctx, i1, cint(ctx, dt, TB)), i0), cint(ctx, dt, TI)), ii), *ie = row;
  bool clamp = NB * TB * TI != M;
  if (ie && clamp) ie = frit_binary(ctx, FRIT_OP_MIN, ie, cint(ctx, dt, M - 1));
  frit_uop *je = add(ctx, mul(ctx, add(ctx, mul(ctx, j0, cint(ctx, dt, JV)), jv), cint(ctx, dt, L)), jl);
  if (!ie || !je) return NULL;
  frit_uop *st = pad_cols ? subst_padded_columns(ctx, e->src[0], i, j, ie, je, N)
                         : cg_subst(ctx, e->src[0], (frit_uop *[]){i, j}, (frit_uop *[]){ie, je}, 2);
  if (!st) return ctx->status == FRIT_OK ? ast : NULL;
  if (clamp && epi && (st->src[0]->op != FRIT_OP_INDEX || !(st = gate_store(ctx, st, row, cint(ctx, dt, M)))))
    return ctx->status == FRIT_OK ? ast : NULL;
  /* B packed in panels of JV*L columns (tensor/linalg.c) is read at (j / (JV*L), k, j % (JV*L)):
   * with j as above that simplifies to consecutive jl */
  if (!contiguous && (!(st = frit_simplify(ctx, st)) || !loads_along(st, jl, NULL))) return st ? ast : NULL;
  if (pad_cols && !reduce_loads_all_along(st, jl)) return ast;
  frit_uop *es[24];
  int w = 0;
  es[w++] = st;
  for (uint32_t k = 1; k + 1 < e->nsrc; k++) es[w++] = k == ri ? i1 : e->src[k];
  /* panels outside row tiles (a block's rows of A stay in L2 over the B panels), or the other
   * way round (a tile's rows stay in L1 while the panels stream past) */
  es[w++] = ch->tile_order == 1 ? i0 : j0;
  es[w++] = ch->tile_order == 1 ? j0 : i0;
  es[w++] = ii;
  es[w++] = jv;
  es[w++] = jl;
  frit_arg z = frit_arg_none();
  frit_uop *ne = frit_uop_new(ctx, FRIT_OP_END, FRIT_VOID, es, w, &z);
  frit_uop *sink = ne ? frit_uop_replace_src(ctx, ast, &ne, 1) : NULL;
  if (sink && i == g0) *g0p = i1;
  return sink;
}
