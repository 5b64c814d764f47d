/* Linear forms of integer expressions: flattening ADD/SUB/NEG/MUL-by-constant trees into
 * sum c_i*v_i + k, the canonical rebuild, and the exact-range test that says "no wraparound". */
#include "symbolic/symbolic.h"

int64_t frit_wrap_int(int64_t v, frit_dtype dt) {
  int bits = frit_dtype_bits(dt);
  if (bits >= 64 || bits <= 0) return v;
  uint64_t m = ((uint64_t)1 << bits) - 1, x = (uint64_t)v & m;
  if (!frit_dtype_is_unsigned(dt) && (x >> (bits - 1)) & 1) x |= ~m;
  return (int64_t)x;
}

static int64_t wmul(int64_t a, int64_t b, frit_dtype dt) {
  return frit_wrap_int((int64_t)((uint64_t)a * (uint64_t)b), dt);
}
static int64_t wadd(int64_t a, int64_t b, frit_dtype dt) {
  return frit_wrap_int((int64_t)((uint64_t)a + (uint64_t)b), dt);
}

static bool int_const(const frit_uop *u) {
  return u->op == FRIT_OP_CONST && frit_dtype_is_int(u->dtype);
}

static bool add_atom(frit_lin *L, frit_uop *v, int64_t c) {
  for (int i = 0; i < L->n; i++)
    if (L->t[i].v == v) {
      L->t[i].c = wadd(L->t[i].c, c, L->dt);
      return true;
    }
  if (L->n == FRIT_LIN_MAX) return false;
  L->t[L->n].v = v, L->t[L->n].c = c, L->n++;
  return true;
}

#define LIN_STACK 256

bool frit_lin_add(frit_lin *L, frit_uop *root, int64_t coef) {
  struct item {
    frit_uop *u;
    int64_t c;
  } st[LIN_STACK];
  int sp = 0, steps = 0;
  st[sp++] = (struct item){root, frit_wrap_int(coef, L->dt)};
  while (sp) {
    struct item it = st[--sp];
    frit_uop *u = it.u;
    if (++steps > 4 * LIN_STACK || sp + 2 > LIN_STACK) return false;
    if (it.c == 0) continue;
    frit_op op = (frit_op)u->op;
    if (op == FRIT_OP_CONST && int_const(u)) {
      L->k = wadd(L->k, wmul(it.c, u->arg.value.i, L->dt), L->dt);
      continue;
    }
    if (op == FRIT_OP_ADD || op == FRIT_OP_SUB) {
      st[sp++] = (struct item){u->src[0], it.c};
      st[sp++] = (struct item){u->src[1], op == FRIT_OP_ADD ? it.c : wmul(it.c, -1, L->dt)};
      continue;
    }
    if (op == FRIT_OP_NEG) {
      st[sp++] = (struct item){u->src[0], wmul(it.c, -1, L->dt)};
      continue;
    }
    if (op == FRIT_OP_MUL && (int_const(u->src[0]) || int_const(u->src[1]))) {
      int c = int_const(u->src[1]) ? 1 : 0;
      st[sp++] = (struct item){u->src[1 - c], wmul(it.c, u->src[c]->arg.value.i, L->dt)};
      continue;
    }
    if (!add_atom(L, u, it.c)) return false;
  }
  return true;
}

void frit_lin_normalize(frit_lin *L) {
  int k = 0;
  for (int i = 0; i < L->n; i++)
    if (L->t[i].c != 0) L->t[k++] = L->t[i];
  L->n = k;
  /* insertion sort by atom id: the sums are short */
  for (int i = 1; i < L->n; i++) {
    frit_lin_term t = L->t[i];
    int j = i;
    for (; j > 0 && L->t[j - 1].v->id > t.v->id; j--) L->t[j] = L->t[j - 1];
    L->t[j] = t;
  }
}

bool frit_lin_flatten(frit_uop *u, frit_lin *L) {
  L->dt = u->dtype, L->n = 0, L->k = 0;
  if (!frit_lin_add(L, u, 1)) return false;
  frit_lin_normalize(L);
  return true;
}

/* The shape frit_lin_build gives: terms left to right, a term with coefficient -1 (first) or a
 * negative one (later, signed) written with NEG / SUB, then the constant. */
static bool use_sub(int64_t c, frit_dtype dt) {
  return !frit_dtype_is_unsigned(dt) && c < 0 && c != INT64_MIN && frit_wrap_int(-c, dt) == -c;
}

frit_uop *frit_lin_build(frit_ctx *ctx, const frit_lin *L) {
  frit_dtype dt = L->dt;
  bool sgn = !frit_dtype_is_unsigned(dt);
  frit_uop *acc = NULL;
  for (int i = 0; i < L->n; i++) {
    int64_t c = L->t[i].c;
    frit_uop *v = L->t[i].v;
    /* signed: subtract terms with negative coefficients, it reads better than x + y*-1 */
    bool sub = acc && use_sub(c, dt);
    int64_t m = sub ? -c : c;
    frit_uop *t = m == 1                ? v
                  : m == -1 && sgn ? frit_unary(ctx, FRIT_OP_NEG, v) /* what the -1 rule gives */
                                   : frit_binary(ctx, FRIT_OP_MUL, v, frit_const_int(ctx, dt, m));
    acc = !acc ? t : frit_binary(ctx, sub ? FRIT_OP_SUB : FRIT_OP_ADD, acc, t);
    if (!acc) return NULL;
  }
  if (!acc) return frit_const_int(ctx, dt, L->k);
  if (L->k == 0) return acc;
  bool sub = use_sub(L->k, dt);
  return frit_binary(ctx, sub ? FRIT_OP_SUB : FRIT_OP_ADD, acc, frit_const_int(ctx, dt, sub ? -L->k : L->k));
}

static bool is_const_val(const frit_uop *u, int64_t v, frit_dtype dt) {
  return u->op == FRIT_OP_CONST && u->dtype == dt && u->arg.value.i == frit_wrap_int(v, dt);
}

bool frit_lin_is(const frit_uop *u, const frit_lin *L) {
  frit_dtype dt = L->dt;
  if (u->dtype != dt) return false;
  if (L->n == 0) return is_const_val(u, L->k, dt);
  if (L->k != 0) {
    bool sub = use_sub(L->k, dt);
    if (u->op != (sub ? FRIT_OP_SUB : FRIT_OP_ADD) || !is_const_val(u->src[1], sub ? -L->k : L->k, dt)) return false;
    u = u->src[0];
  }
  for (int i = L->n - 1; i >= 0; i--) {
    int64_t c = L->t[i].c;
    const frit_uop *t = u;
    bool sub = i > 0 && use_sub(c, dt);
    if (i > 0) {
      if (u->op != (sub ? FRIT_OP_SUB : FRIT_OP_ADD)) return false;
      t = u->src[1];
      u = u->src[0];
    }
    int64_t m = sub ? -c : c;
    if (m == 1) {
      if (t != L->t[i].v) return false;
    } else if (m == -1 && !frit_dtype_is_unsigned(dt)) {
      if (t->op != FRIT_OP_NEG || t->src[0] != L->t[i].v) return false;
    } else if (t->op != FRIT_OP_MUL || t->src[0] != L->t[i].v || !is_const_val(t->src[1], m, dt)) {
      return false;
    }
  }
  return true;
}

bool frit_lin_exact_range(const frit_lin *L, int64_t *lo, int64_t *hi) {
  int64_t l = L->k, h = L->k;
  for (int i = 0; i < L->n; i++) {
    int64_t vl, vh, c = L->t[i].c, a, b;
    if (!frit_range_known(L->t[i].v, &vl, &vh)) return false;
    if (__builtin_mul_overflow(c, vl, &a) || __builtin_mul_overflow(c, vh, &b)) return false;
    if (a > b) {
      int64_t t = a;
      a = b, b = t;
    }
    if (__builtin_add_overflow(l, a, &l) || __builtin_add_overflow(h, b, &h)) return false;
  }
  *lo = l, *hi = h;
  return true;
}

bool frit_lin_no_wrap(const frit_lin *L, int64_t *lo, int64_t *hi) {
  int64_t dlo, dhi;
  if (!frit_lin_exact_range(L, lo, hi)) return false;
  frit_dtype_limits(frit_dtype_scalar(L->dt), &dlo, &dhi);
  if (frit_dtype_kind(L->dt) == FRIT_U64 && *hi >= INT64_MAX) return false;
  return *lo >= dlo && *hi <= dhi;
}
