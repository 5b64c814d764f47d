/* Interpreter caching analysis: for every node, the loop ranges whose change invalidates its
 * cached value. Pure values depend on their free ranges; memory reads and effects also on the
 * loops that enclose every use of them (so an effect in a loop body runs every iteration). */
#include "interp/interp.h"

typedef struct uvec {
  uint32_t *a;
  size_t n, cap;
} uvec;

static bool uvec_push(uvec *v, uint32_t x) {
  if (v->n == v->cap) {
    size_t cap = v->cap ? v->cap * 2 : 64;
    uint32_t *a = realloc(v->a, cap * sizeof *a);
    if (!a) return false;
    v->a = a, v->cap = cap;
  }
  v->a[v->n++] = x;
  return true;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* Sorts and dedups v[from..]; returns the new length of that tail. */
static size_t sort_unique(uvec *v, size_t from) {
  size_t len = v->n - from;
  if (len > 1) qsort(v->a + from, len, sizeof *v->a, cmp_u32);
  size_t k = 0;
  for (size_t i = 0; i < len; i++)
    if (k == 0 || v->a[from + i] != v->a[from + k - 1]) v->a[from + k++] = v->a[from + i];
  v->n = from + k;
  return k;
}

static bool is_loop_op(frit_op op) { return op == FRIT_OP_END || op == FRIT_OP_REDUCE; }

/* Range indices closed by an END/REDUCE (its RANGE sources after the first). */
static bool closes(frit_interp *I, frit_uop *u, uint32_t r) {
  for (uint32_t i = 1; i < u->nsrc; i++) {
    int32_t x = I->rix[I->pos[u->src[i]->id]];
    if (x >= 0 && (uint32_t)x == r) return true;
  }
  return false;
}

static bool node_is_dyn(frit_op op) {
  switch (op) {
  case FRIT_OP_LOAD: case FRIT_OP_STORE: case FRIT_OP_ATOMIC: case FRIT_OP_ATOMIC_CAS:
  case FRIT_OP_BARRIER: case FRIT_OP_END: case FRIT_OP_IF: case FRIT_OP_GROUP: case FRIT_OP_SINK:
  case FRIT_OP_AFTER: case FRIT_OP_KERNEL:
    return true;
  case FRIT_OP_CONST: case FRIT_OP_VECTORIZE: case FRIT_OP_GEP: case FRIT_OP_CAST: case FRIT_OP_BITCAST:
  case FRIT_OP_DEFINE_VAR: case FRIT_OP_BIND: case FRIT_OP_SPECIAL: case FRIT_OP_RESHAPE:
  case FRIT_OP_PERMUTE: case FRIT_OP_EXPAND: case FRIT_OP_PAD: case FRIT_OP_SHRINK: case FRIT_OP_FLIP: case FRIT_OP_GATHER: case FRIT_OP_SCAN: case FRIT_OP_SCATTER: case FRIT_OP_SEQ: case FRIT_OP_BREAK: case FRIT_OP_CONTINUE: case FRIT_OP_LOOP: case FRIT_OP_CARRY: case FRIT_OP_IOTA: case FRIT_OP_CONTIGUOUS: case FRIT_OP_COLLECTIVE:
  case FRIT_OP_REDUCE_AXIS: case FRIT_OP_REDUCE: case FRIT_OP_RANGE: case FRIT_OP_BUFFER:
  case FRIT_OP_DEFINE_GLOBAL: case FRIT_OP_DEFINE_LOCAL: case FRIT_OP_DEFINE_REG: case FRIT_OP_INDEX:
  case FRIT_OP_NEG: case FRIT_OP_NOT: case FRIT_OP_ABS: case FRIT_OP_SQRT: case FRIT_OP_RSQRT:
  case FRIT_OP_RECIP: case FRIT_OP_EXP: case FRIT_OP_EXP2: case FRIT_OP_LOG: case FRIT_OP_LOG2:
  case FRIT_OP_SIN: case FRIT_OP_COS: case FRIT_OP_TAN: case FRIT_OP_ASIN: case FRIT_OP_ACOS:
  case FRIT_OP_ATAN: case FRIT_OP_SINH: case FRIT_OP_COSH: case FRIT_OP_TANH: case FRIT_OP_ERF:
  case FRIT_OP_FLOOR: case FRIT_OP_CEIL: case FRIT_OP_TRUNC: case FRIT_OP_RINT: case FRIT_OP_ADD:
  case FRIT_OP_SUB: case FRIT_OP_MUL: case FRIT_OP_FDIV: case FRIT_OP_IDIV: case FRIT_OP_MOD:
  case FRIT_OP_MAX: case FRIT_OP_MIN: case FRIT_OP_POW: case FRIT_OP_ATAN2: case FRIT_OP_REAL: case FRIT_OP_IMAG: case FRIT_OP_CONJ: case FRIT_OP_COMPLEX: case FRIT_OP_AND:
  case FRIT_OP_OR: case FRIT_OP_XOR: case FRIT_OP_SHL: case FRIT_OP_SHR: case FRIT_OP_CMPLT:
  case FRIT_OP_CMPLE: case FRIT_OP_CMPEQ: case FRIT_OP_CMPNE: case FRIT_OP_WHERE: case FRIT_OP_MULACC:
  case FRIT_OP_COUNT_:
    return false;
  }
  return false;
}

frit_status frit_interp_compute_sets(frit_interp *I) {
  size_t n = I->n;
  uvec fr = {0}, tmp = {0}, body = {0};
  uint32_t *foff = malloc((n + 1) * sizeof *foff), *flen = malloc((n + 1) * sizeof *flen);
  /* intersection of the contexts of all uses; NULL list with has_ctx false = no use seen yet */
  uint32_t **acc = calloc(n + 1, sizeof *acc);
  uint32_t *acc_len = calloc(n + 1, sizeof *acc_len);
  bool *has_ctx = calloc(n + 1, sizeof *has_ctx);
  uvec out = {0};
  frit_status st = FRIT_ERR_NOMEM;
  if (!foff || !flen || !acc || !acc_len || !has_ctx) goto done;

  I->nr = 0;
  for (size_t k = 0; k < n; k++) {
    frit_uop *u = I->nodes[k];
    I->rix[k] = u->op == FRIT_OP_RANGE ? (int32_t)I->nr++ : -1;
    bool d = node_is_dyn((frit_op)u->op);
    for (uint32_t i = 0; i < u->nsrc && !d; i++) d = I->dyn[I->pos[u->src[i]->id]];
    I->dyn[k] = d;
  }
  /* free ranges, sources first */
  for (size_t k = 0; k < n; k++) {
    frit_uop *u = I->nodes[k];
    size_t from = fr.n;
    if (I->rix[k] >= 0 && !uvec_push(&fr, (uint32_t)I->rix[k])) goto done;
    for (uint32_t i = 0; i < u->nsrc; i++) {
      uint32_t s = I->pos[u->src[i]->id];
      for (uint32_t j = 0; j < flen[s]; j++) {
        uint32_t r = fr.a[foff[s] + j];
        if (is_loop_op((frit_op)u->op) && closes(I, u, r)) continue;
        if (!uvec_push(&fr, r)) goto done;
      }
    }
    foff[k] = (uint32_t)from;
    flen[k] = (uint32_t)sort_unique(&fr, from);
  }
  /* contexts, users first: scope(u) = free(u) | intersection over uses of the use's context */
  for (size_t k = n; k-- > 0;) {
    frit_uop *u = I->nodes[k];
    tmp.n = 0;
    for (uint32_t j = 0; j < flen[k]; j++)
      if (!uvec_push(&tmp, fr.a[foff[k] + j])) goto done;
    for (uint32_t j = 0; j < acc_len[k]; j++)
      if (!uvec_push(&tmp, acc[k][j])) goto done;
    size_t scope_len = sort_unique(&tmp, 0);
    /* the validity set: scope for context-dependent nodes, free ranges for pure values */
    I->set_off[k] = (uint32_t)out.n;
    if (I->dyn[k]) {
      for (size_t j = 0; j < scope_len; j++)
        if (!uvec_push(&out, tmp.a[j])) goto done;
    } else {
      for (uint32_t j = 0; j < flen[k]; j++)
        if (!uvec_push(&out, fr.a[foff[k] + j])) goto done;
    }
    I->set_len[k] = (uint32_t)(out.n - I->set_off[k]);
    for (uint32_t i = 0; i < u->nsrc; i++) {
      uint32_t s = I->pos[u->src[i]->id];
      /* context of this use: u's scope, plus u's own loops for the body of an END/REDUCE */
      const uint32_t *cx = tmp.a;
      size_t cn = scope_len;
      if (is_loop_op((frit_op)u->op) && i == 0) {
        body.n = 0;
        for (size_t j = 0; j < scope_len; j++)
          if (!uvec_push(&body, tmp.a[j])) goto done;
        for (uint32_t j = 1; j < u->nsrc; j++) {
          int32_t r = I->rix[I->pos[u->src[j]->id]];
          if (r >= 0 && !uvec_push(&body, (uint32_t)r)) goto done;
        }
        cn = sort_unique(&body, 0);
        cx = body.a;
      }
      if (!has_ctx[s]) {
        has_ctx[s] = true;
        acc[s] = malloc((cn ? cn : 1) * sizeof **acc);
        if (!acc[s]) goto done;
        if (cn) memcpy(acc[s], cx, cn * sizeof **acc);
        acc_len[s] = (uint32_t)cn;
      } else {
        /* intersect two sorted lists in place */
        uint32_t m = 0;
        size_t a = 0, b = 0;
        while (a < acc_len[s] && b < cn) {
          if (acc[s][a] < cx[b]) a++;
          else if (acc[s][a] > cx[b]) b++;
          else acc[s][m++] = acc[s][a++], b++;
        }
        acc_len[s] = m;
      }
    }
  }
  free(I->sets);
  I->sets = out.a;
  out.a = NULL;
  st = FRIT_OK;
done:
  if (acc)
    for (size_t k = 0; k < n; k++) free(acc[k]);
  free(acc);
  free(acc_len);
  free(has_ctx);
  free(foff);
  free(flen);
  free(fr.a);
  free(tmp.a);
  free(body.a);
  free(out.a);
  if (st != FRIT_OK) frit_set_error(I->ctx, st, "interpret: out of memory");
  return st;
}
