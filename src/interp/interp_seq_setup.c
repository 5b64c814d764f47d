/* Setup of the structured-kernel interpreter: node kinds (value sources, volatile reads), the
 * leaves each pure value depends on, and the buffers kernels address. */
#include "interp/interp_seq.h"
#include "interp/scalar.h"
#include "ir/walk.h"

#include <inttypes.h>

#define fail frit_sq_fail
#define L frit_sq_pos
#define lanes_of frit_sq_lanes
#define is_void frit_sq_is_void
#define needed frit_sq_needed

static int new_buf(sq *S, const frit_uop *u, uint8_t *data, size_t size, frit_scalar_kind kind, bool owned,
                   int32_t *slot) {
  if (S->nbufs == S->cap_bufs) {
    size_t cap = S->cap_bufs ? S->cap_bufs * 2 : 8;
    frit_ibuf *b = realloc(S->bufs, cap * sizeof *b);
    if (!b) {
      if (owned) free(data);
      return fail(S, u, "out of memory");
    }
    S->bufs = b, S->cap_bufs = cap;
  }
  S->bufs[S->nbufs] = (frit_ibuf){.data = data, .size = size, .kind = kind, .owned = owned};
  *slot = (int32_t)S->nbufs++;
  return S_OK;
}

static int bind_define(sq *S, frit_uop *u) {
  frit_scalar_kind kind = frit_dtype_kind(u->dtype);
  frit_ptrval *p = &S->ptr[L(S, u)];
  if (!frit_dtype_is_ptr(u->dtype) || kind == FRIT_VOID) return fail(S, u, "needs a pointer dtype");
  *p = (frit_ptrval){.buf = 0, .off = 0, .gate = true};
  if (u->op == FRIT_OP_DEFINE_GLOBAL) {
    int64_t k = u->arg.i0;
    if (k < 0 || (uint64_t)k >= S->nuser)
      return fail(S, u, "parameter %" PRId64 " but %zu buffers were given", k, S->nuser);
    frit_ibuf *b = &S->bufs[k];
    if (!b->data && b->size) return fail(S, u, "buffer %" PRId64 " is NULL", k);
    if (b->kind == FRIT_VOID) b->kind = kind;
    if (b->kind != kind) return fail(S, u, "buffer %" PRId64 " used with two element dtypes", k);
    p->buf = (int32_t)k;
    return S_OK;
  }
  int64_t count = u->arg.i1;
  if (count < 0 || count > (INT64_C(1) << 32)) return fail(S, u, "bad element count %" PRId64, count);
  uint8_t *data = calloc((size_t)count + 1, (size_t)frit_kind_bytes(kind));
  if (!data) return fail(S, u, "out of memory");
  if (new_buf(S, u, data, (size_t)count, kind, true, &p->buf) != S_OK) return S_ERR;
  if (u->op == FRIT_OP_DEFINE_REG) S->regs[S->nregs++] = (uint32_t)p->buf;
  return S_OK;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* Node kinds, value sources, volatile reads and each value's leaf set. */
static int analyse(sq *S) {
  size_t n = S->n;
  uint32_t *base = malloc((n + 1) * sizeof *base); /* the DEFINE_* under a pointer, or UINT32_MAX */
  bool *written = calloc(n + 1, sizeof *written);
  size_t cap = 1024, len = 0;
  uint32_t *sets = malloc(cap * sizeof *sets);
  int st = S_ERR;
  if (!base || !written || !sets) goto oom;
  for (size_t k = 0; k < n; k++) {
    frit_uop *u = S->nodes[k];
    frit_op op = (frit_op)u->op;
    base[k] = UINT32_MAX;
    if (op == FRIT_OP_DEFINE_GLOBAL || op == FRIT_OP_DEFINE_LOCAL || op == FRIT_OP_DEFINE_REG) base[k] = (uint32_t)k;
    else if (frit_dtype_is_ptr(u->dtype) && u->nsrc > 0 &&
             (op == FRIT_OP_INDEX || op == FRIT_OP_AFTER || op == FRIT_OP_CAST || op == FRIT_OP_BITCAST))
      base[k] = base[L(S, u->src[0])];
    if (op == FRIT_OP_DEFINE_LOCAL || op == FRIT_OP_DEFINE_REG) written[k] = true;
    if ((op == FRIT_OP_STORE || op == FRIT_OP_ATOMIC || op == FRIT_OP_ATOMIC_CAS) && base[L(S, u->src[0])] != UINT32_MAX)
      written[base[L(S, u->src[0])]] = true;
    S->kind[k] = op == FRIT_OP_RANGE ? K_RANGE : is_void(u->dtype) ? K_STMT : K_PURE;
  }
  for (size_t k = 0; k < n; k++) {
    frit_uop *u = S->nodes[k];
    if (u->op != FRIT_OP_SEQ) continue;
    for (uint32_t i = 0; i < u->nsrc; i++) {
      frit_uop *x = u->src[i];
      frit_op sop = (frit_op)x->op;
      uint32_t b = base[L(S, x->src[0])];
      if (sop == FRIT_OP_ATOMIC || sop == FRIT_OP_ATOMIC_CAS || (sop == FRIT_OP_LOAD && (b == UINT32_MAX || written[b])))
        S->kind[L(S, x)] = K_SOURCE;
    }
  }
  size_t nregs = 0;
  for (size_t k = 0; k < n; k++) {
    frit_uop *u = S->nodes[k];
    if ((u->op == FRIT_OP_ATOMIC || u->op == FRIT_OP_ATOMIC_CAS) && S->kind[k] != K_SOURCE) {
      fail(S, u, "an atomic must be listed in a SEQ (it runs where it is listed)");
      goto done;
    }
    if (u->op == FRIT_OP_DEFINE_REG) nregs++;
  }
  S->regs = malloc((nregs + 1) * sizeof *S->regs); /* filled by bind_define */
  if (!S->regs) goto oom;
  /* leaf sets, sources first; an unlisted LOAD of memory the kernel writes is volatile */
  for (size_t k = 0; k < n; k++) {
    frit_uop *u = S->nodes[k];
    uint32_t from = (uint32_t)len;
    int kd = S->kind[k];
    S->set_off[k] = from;
    if (kd == K_STMT) {
      S->set_len[k] = 0;
      continue;
    }
    if (kd == K_RANGE || kd == K_SOURCE) {
      if (len == cap) {
        uint32_t *g = realloc(sets, (cap *= 2) * sizeof *sets);
        if (!g) goto oom;
        sets = g;
      }
      sets[len++] = (uint32_t)k;
      S->set_len[k] = 1;
      continue;
    }
    if (u->op == FRIT_OP_LOAD && base[L(S, u->src[0])] != UINT32_MAX && written[base[L(S, u->src[0])]])
      S->kind[k] = K_VOLATILE;
    for (uint32_t i = 0; i < u->nsrc; i++) {
      if (!needed(u, i)) continue;
      uint32_t s = L(S, u->src[i]);
      if (S->kind[s] == K_VOLATILE) S->kind[k] = K_VOLATILE;
      for (uint32_t j = 0; j < S->set_len[s]; j++) {
        uint32_t l = sets[S->set_off[s] + j];
        bool closed = false;
        for (uint32_t r = 1; u->op == FRIT_OP_REDUCE && r < u->nsrc && !closed; r++) closed = L(S, u->src[r]) == l;
        if (closed) continue;
        if (len == cap) {
          uint32_t *g = realloc(sets, (cap *= 2) * sizeof *sets);
          if (!g) goto oom;
          sets = g;
        }
        sets[len++] = l;
      }
    }
    if (len - from > 1) qsort(sets + from, len - from, sizeof *sets, cmp_u32);
    size_t m = 0;
    for (size_t i = from; i < len; i++)
      if (m == 0 || sets[from + m - 1] != sets[i]) sets[from + m++] = sets[i];
    len = from + m;
    S->set_len[k] = (uint32_t)m;
  }
  S->sets = sets;
  sets = NULL;
  st = S_OK;
  goto done;
oom:
  frit_set_error(S->ctx, FRIT_ERR_NOMEM, "interpret: out of memory");
done:
  free(base);
  free(written);
  free(sets);
  return st;
}

void frit_sq_free(sq *S) {
  for (size_t b = 0; b < S->nbufs; b++)
    if (S->bufs[b].owned) free(S->bufs[b].data);
  free(S->bufs);
  free(S->nodes);
  free(S->pos);
  free(S->val);
  free(S->pool);
  free(S->ptr);
  free(S->kind);
  free(S->active);
  free(S->rend);
  free(S->stamp);
  free(S->set_off);
  free(S->set_len);
  free(S->sets);
  free(S->regs);
  free(S->fr);
}

frit_status frit_sq_setup(sq *S, frit_uop *root, void *const *bufs, const size_t *bufsizes, int nbufs) {
  size_t n = 0;
  S->nodes = frit_walk_topo(root, &n);
  if (!S->nodes) return frit_set_error(S->ctx, FRIT_ERR_NOMEM, "interpret: out of memory");
  S->n = n;
  S->pos = malloc(((size_t)root->id + 1) * sizeof *S->pos);
  S->val = calloc(n, sizeof *S->val);
  S->ptr = calloc(n, sizeof *S->ptr);
  S->kind = calloc(n, sizeof *S->kind);
  S->active = calloc(n, sizeof *S->active);
  S->rend = calloc(n, sizeof *S->rend);
  S->stamp = calloc(n, sizeof *S->stamp);
  S->set_off = calloc(n, sizeof *S->set_off);
  S->set_len = calloc(n, sizeof *S->set_len);
  if (!S->pos || !S->val || !S->ptr || !S->kind || !S->active || !S->rend || !S->stamp || !S->set_off ||
      !S->set_len)
    return frit_set_error(S->ctx, FRIT_ERR_NOMEM, "interpret: out of memory");
  size_t total = 0;
  for (size_t k = 0; k < n; k++) {
    S->pos[S->nodes[k]->id] = (uint32_t)k;
    total += (size_t)lanes_of(S->nodes[k]->dtype);
  }
  S->pool = calloc(total + 1, sizeof *S->pool);
  if (!S->pool) return frit_set_error(S->ctx, FRIT_ERR_NOMEM, "interpret: out of memory");
  for (size_t k = 0, at = 0; k < n; k++) {
    int l = lanes_of(S->nodes[k]->dtype);
    S->val[k] = l ? S->pool + at : NULL;
    at += (size_t)l;
  }
  for (int b = 0; b < nbufs; b++) {
    int32_t slot;
    if (new_buf(S, root, bufs ? bufs[b] : NULL, bufsizes ? bufsizes[b] : 0, FRIT_VOID, false, &slot) != S_OK)
      return FRIT_ERR_NOMEM;
  }
  S->nuser = (size_t)(nbufs > 0 ? nbufs : 0);
  if (analyse(S) != S_OK) return frit_last_status(S->ctx);
  for (size_t k = 0; k < n; k++) {
    frit_uop *u = S->nodes[k];
    if (u->op == FRIT_OP_DEFINE_GLOBAL || u->op == FRIT_OP_DEFINE_LOCAL || u->op == FRIT_OP_DEFINE_REG) {
      if (bind_define(S, u) != S_OK) return frit_last_status(S->ctx);
      S->stamp[k] = 1;
    }
  }
  return FRIT_OK;
}

bool frit_interp_is_structured(frit_uop *root, frit_status *st) {
  size_t n = 0;
  *st = FRIT_OK;
  frit_uop **nodes = frit_walk_topo(root, &n);
  if (!nodes) {
    *st = FRIT_ERR_NOMEM;
    return false;
  }
  bool found = false;
  for (size_t k = 0; k < n && !found; k++) found = nodes[k]->op == FRIT_OP_SEQ;
  free(nodes);
  return found;
}

