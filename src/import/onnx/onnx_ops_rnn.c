/* ONNX RNN, GRU and LSTM, forward direction with the default activations: the input projection
 * for all steps at once, then the recurrence unrolled over the (static) sequence length. */
#include <string.h>

#include "import/onnx/onnx_internal.h"
#include "ir/uop.h"

typedef struct rnn {
  ox_cx *cx;
  int64_t H;
} rnn;

static frit_tensor *bin(rnn *r, frit_bfunc f, frit_tensor *a, frit_tensor *b) { return frit_binary_t(r->cx->ctx, f, a, b); }
static frit_tensor *sig(rnn *r, frit_tensor *a) { return frit_unary_t(r->cx->ctx, FRIT_UF_SIGMOID, a); }
static frit_tensor *tanh_(rnn *r, frit_tensor *a) { return frit_unary_t(r->cx->ctx, FRIT_UF_TANH, a); }

/* Gate g (H wide) of the last axis. */
static frit_tensor *gate(rnn *r, frit_tensor *x, int g) {
  int nd = x ? frit_tensor_ndim(x) : 0;
  if (x && nd < 1) frit_set_error(r->cx->ctx, FRIT_ERR_INVALID, "a 0-d gate parameter");
  if (nd < 1) return NULL; /* else an earlier op failed, and its error stays */
  int64_t b[FRIT_MAX_DIMS], e[FRIT_MAX_DIMS], s[FRIT_MAX_DIMS];
  for (int d = 0; d < nd; d++) b[d] = e[d] = FRIT_SLICE_DEFAULT, s[d] = 1;
  b[nd - 1] = g * r->H, e[nd - 1] = (g + 1) * r->H;
  return frit_slice(r->cx->ctx, x, b, e, s);
}

/* Direction 0 of a (num_directions, ...) parameter. */
static frit_tensor *dir0(ox_cx *cx, frit_tensor *p) { return frit_take(cx->ctx, p, frit_scalar_i(cx->ctx, FRIT_I64, 0), 0); }

frit_status ox_rnn(ox_cx *cx, const ox_node *n) {
  frit_ctx *c = cx->ctx;
  const char *op = n->op_type;
  const char *dir = ox_attr_s(cx, n, "direction", "forward");
  if (strcmp(dir, "forward")) return ox_fail(cx, n, "direction '%s' is not supported (forward only)", dir);
  if (ox_attr(n, "activations") || ox_attr(n, "clip"))
    return ox_fail(cx, n, "custom activations and clip are not supported");
  if (!strcmp(op, "LSTM") && ox_attr_i(n, "input_forget", 0)) return ox_fail(cx, n, "input_forget is not supported");
  int G = !strcmp(op, "LSTM") ? 4 : !strcmp(op, "GRU") ? 3 : 1;
  rnn r = {cx, ox_attr_i(n, "hidden_size", 0)};
  bool batch_first = ox_attr_i(n, "layout", 0) != 0;
  frit_tensor *x = ox_in(cx, n, 0), *w = ox_in(cx, n, 1), *rw = ox_in(cx, n, 2);
  if (!x || !w || !rw) return frit_last_status(c);
  if (frit_tensor_ndim(x) != 3 || r.H <= 0) return ox_fail(cx, n, "X must be 3-D and hidden_size positive");
  if (frit_tensor_ndim(w) != 3 || frit_tensor_ndim(rw) != 3) return ox_fail(cx, n, "W and R must be 3-D");
  if (batch_first) x = frit_permute(c, x, (int[]){1, 0, 2});
  int64_t T = frit_tensor_dim_static(x, 0), B = frit_tensor_dim_static(x, 1), H = r.H;
  if (T < 0 || B < 0) return ox_fail(cx, n, "symbolic sequence or batch length");
  if (T > 4096) return ox_fail(cx, n, "a sequence of %lld steps (it is unrolled: at most 4096)", (long long)T);
  if (ox_has_in(n, 4)) {
    const ox_const *sl = ox_in_const_opt(cx, n, 4);
    int64_t *lv = sl ? ox_const_ints(cx, sl) : NULL;
    bool full = lv != NULL;
    for (int64_t i = 0; lv && i < sl->n; i++) full = full && lv[i] == T;
    if (!full) return ox_fail(cx, n, "sequence_lens other than the full length are not supported");
  }
  frit_tensor *w0 = dir0(cx, w), *r0 = dir0(cx, rw), *wb = NULL, *rb = NULL;
  /* the input projection of every step at once: (T, B, G*H) */
  frit_tensor *xw = frit_matmul(c, x, frit_transpose(c, w0));
  if (ox_has_in(n, 3)) {
    frit_tensor *bias = ox_in(cx, n, 3);
    if (!bias) return frit_last_status(c);
    if (frit_tensor_ndim(bias) != 2) return ox_fail(cx, n, "B must be 2-D");
    frit_tensor *b0 = dir0(cx, bias);
    int64_t b1[1] = {0}, e1[1] = {G * H}, e2[1] = {2 * G * H}, s1[1] = {1};
    wb = frit_slice(c, b0, b1, e1, s1);
    rb = frit_slice(c, b0, e1, e2, s1);
    xw = bin(&r, FRIT_BF_ADD, xw, wb);
  }
  frit_tensor *h, *cst = NULL, *p = NULL;
  if (ox_has_in(n, 5)) {
    frit_tensor *h0 = ox_in(cx, n, 5);
    if (!h0) return frit_last_status(c);
    if (frit_tensor_ndim(h0) != 3) return ox_fail(cx, n, "initial_h must be 3-D");
    h = batch_first ? frit_take(c, h0, frit_scalar_i(c, FRIT_I64, 0), 1) : dir0(cx, h0);
  } else {
    h = frit_zeros(c, frit_tensor_dtype(x), 2, (int64_t[]){B, H});
  }
  if (G == 4) {
    if (ox_has_in(n, 6)) {
      frit_tensor *c0 = ox_in(cx, n, 6);
      if (!c0) return frit_last_status(c);
      cst = batch_first ? frit_take(c, c0, frit_scalar_i(c, FRIT_I64, 0), 1) : dir0(cx, c0);
    } else {
      cst = frit_zeros(c, frit_tensor_dtype(x), 2, (int64_t[]){B, H});
    }
    if (ox_has_in(n, 7)) {
      frit_tensor *pp = ox_in(cx, n, 7);
      if (!pp) return frit_last_status(c);
      p = dir0(cx, pp);
    }
  }
  bool lbr = ox_attr_i(n, "linear_before_reset", 0) != 0;
  frit_tensor **hs = ox_alloc(cx, (size_t)(T ? T : 1) * sizeof *hs);
  if (!hs) return ox_fail(cx, n, "out of memory");
  for (int64_t t = 0; t < T && h; t++) {
    frit_tensor *xt = frit_take(c, xw, frit_scalar_i(c, FRIT_I64, t), 0);
    if (G == 1) {
      frit_tensor *hr = frit_matmul(c, h, frit_transpose(c, r0));
      if (rb) hr = bin(&r, FRIT_BF_ADD, hr, rb);
      h = tanh_(&r, bin(&r, FRIT_BF_ADD, xt, hr));
    } else if (G == 3) {
      /* gates z, r, h */
      frit_tensor *rt = frit_transpose(c, r0); /* (H, 3H) */
      frit_tensor *hr = frit_matmul(c, h, rt);
      if (rb) hr = bin(&r, FRIT_BF_ADD, hr, rb);
      frit_tensor *z = sig(&r, bin(&r, FRIT_BF_ADD, gate(&r, xt, 0), gate(&r, hr, 0)));
      frit_tensor *rg = sig(&r, bin(&r, FRIT_BF_ADD, gate(&r, xt, 1), gate(&r, hr, 1)));
      frit_tensor *hh;
      if (lbr) {
        hh = bin(&r, FRIT_BF_MUL, rg, gate(&r, hr, 2));
      } else {
        hh = frit_matmul(c, bin(&r, FRIT_BF_MUL, rg, h), gate(&r, rt, 2));
        if (rb) hh = bin(&r, FRIT_BF_ADD, hh, gate(&r, rb, 2));
      }
      hh = tanh_(&r, bin(&r, FRIT_BF_ADD, gate(&r, xt, 2), hh));
      frit_tensor *one = frit_scalar_f(c, frit_tensor_dtype(z), 1);
      h = bin(&r, FRIT_BF_ADD, bin(&r, FRIT_BF_MUL, bin(&r, FRIT_BF_SUB, one, z), hh), bin(&r, FRIT_BF_MUL, z, h));
    } else {
      /* gates i, o, f, c; peepholes i, o, f */
      frit_tensor *hr = frit_matmul(c, h, frit_transpose(c, r0));
      if (rb) hr = bin(&r, FRIT_BF_ADD, hr, rb);
      frit_tensor *a = bin(&r, FRIT_BF_ADD, xt, hr);
      frit_tensor *ai = gate(&r, a, 0), *ao = gate(&r, a, 1), *af = gate(&r, a, 2), *ac = gate(&r, a, 3);
      if (p) {
        ai = bin(&r, FRIT_BF_ADD, ai, bin(&r, FRIT_BF_MUL, gate(&r, p, 0), cst));
        af = bin(&r, FRIT_BF_ADD, af, bin(&r, FRIT_BF_MUL, gate(&r, p, 2), cst));
      }
      frit_tensor *it = sig(&r, ai), *ft = sig(&r, af), *ct = tanh_(&r, ac);
      cst = bin(&r, FRIT_BF_ADD, bin(&r, FRIT_BF_MUL, ft, cst), bin(&r, FRIT_BF_MUL, it, ct));
      if (p) ao = bin(&r, FRIT_BF_ADD, ao, bin(&r, FRIT_BF_MUL, gate(&r, p, 1), cst));
      h = bin(&r, FRIT_BF_MUL, sig(&r, ao), tanh_(&r, cst));
    }
    hs[t] = h;
  }
  if (!h) return ox_fail_frit(cx, n);
  /* Y (T, 1, B, H) or (B, T, 1, H); Y_h, Y_c (1, B, H) or (B, 1, H) */
  frit_tensor *y = T ? frit_unsqueeze(c, frit_stack(c, hs, (int)T, 0), 1) : NULL;
  frit_tensor *yh = frit_unsqueeze(c, h, batch_first ? 1 : 0);
  frit_tensor *yc = cst ? frit_unsqueeze(c, cst, batch_first ? 1 : 0) : NULL;
  if (y && batch_first) y = frit_permute(c, y, (int[]){2, 0, 1, 3});
  frit_status st = FRIT_OK;
  if (n->n_output > 0 && n->output[0][0]) st = y ? ox_set_out(cx, n, 0, y) : ox_fail(cx, n, "empty sequence");
  if (!st && n->n_output > 1) st = ox_set_out(cx, n, 1, yh);
  if (!st && n->n_output > 2 && yc) st = ox_set_out(cx, n, 2, yc);
  return st;
}
