/* Tests of frit_sort, frit_argsort and frit_searchsorted through the C API: compiled and
 * interpreted programs, short rows (insertion sort) and long rows (radix sort), static and symbolic,
 * both directions, NaN and -0.0, against a plain C stable insertion sort and a linear search. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "check.h"
#include "frit.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}

/* The total order of the sort: NaN last in both directions, -0.0 == 0.0. */
static int cmp(float a, float b, bool desc) {
  if (isnan(a) || isnan(b)) return isnan(a) - isnan(b);
  if (a == b) return 0;
  return (a < b) != desc ? -1 : 1;
}

/* Stable reference: qsort of positions with the position as the tie-break. */
static const float *ref_x;
static bool ref_desc;
static int ref_cmp(const void *pa, const void *pb) {
  int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
  int c = cmp(ref_x[a], ref_x[b], ref_desc);
  return c ? c : (a > b) - (a < b);
}
static void ref_argsort(const float *x, int64_t n, bool desc, int64_t *out) {
  for (int64_t i = 0; i < n; i++) out[i] = i;
  ref_x = x, ref_desc = desc;
  qsort(out, (size_t)n, sizeof *out, ref_cmp);
}

static frit_program *compile_outs(frit_ctx *ctx, frit_tensor **outs, int n, int interpret) {
  frit_compile_opts o;
  memset(&o, 0, sizeof o);
  o.interpret = interpret;
  frit_program *p = frit_compile(ctx, outs, n, &o);
  if (!p) fprintf(stderr, "compile failed: %s\n", frit_error(ctx));
  return p;
}

/* Sorts (rows, n) f32 along axis 1 (and, transposed, along axis 0 of (n, rows)). */
static void run_sort(int64_t rows, int64_t n, bool symbolic, bool desc, int interpret) {
  frit_ctx *ctx = frit_ctx_new();
  frit_tensor *x;
  if (symbolic) {
    frit_uop *dims[2] = {frit_const_int(ctx, FRIT_I64, rows), frit_var(ctx, "n", 0, 1 << 20)};
    x = frit_input_sym(ctx, "x", FRIT_F32, 2, dims);
  } else {
    x = frit_input(ctx, "x", FRIT_F32, 2, (const int64_t[]){rows, n});
  }
  frit_tensor *xt = frit_transpose(ctx, x);
  frit_tensor *outs[3] = {frit_sort(ctx, x, 1, desc), frit_argsort(ctx, x, -1, desc), frit_argsort(ctx, xt, 0, desc)};
  CHECK(outs[0] && outs[1] && outs[2]);
  frit_program *p = outs[0] && outs[1] && outs[2] ? compile_outs(ctx, outs, 3, interpret) : NULL;
  CHECK(p != NULL);
  if (!p) {
    frit_ctx_free(ctx);
    return;
  }
  size_t tot = (size_t)(rows * n) + 1;
  float *xv = malloc(tot * sizeof *xv), *sv = malloc(tot * sizeof *sv);
  int64_t *iv = malloc(tot * sizeof *iv), *it = malloc(tot * sizeof *it), *want = malloc(tot * sizeof *want);
  for (size_t i = 0; i + 1 < tot; i++) {
    uint64_t r = next_rand() % 16;
    xv[i] = r == 0 ? NAN : r == 1 ? -0.0f : r == 2 ? 0.0f : r == 3 ? -INFINITY : (float)((int)(r % 7) - 3) * 0.5f;
  }
  void *in[1] = {xv}, *out[3] = {sv, iv, it};
  frit_binding b = {"n", n};
  CHECK_EQ_INT(frit_program_run(p, in, out, &b, symbolic ? 1 : 0), FRIT_OK);
  int bad = 0;
  for (int64_t r = 0; r < rows; r++) {
    ref_argsort(xv + r * n, n, desc, want);
    for (int64_t i = 0; i < n; i++) {
      float w = xv[r * n + want[i]], g = sv[r * n + i];
      bool ok = iv[r * n + i] == want[i] && it[i * rows + r] == want[i] &&
                ((isnan(w) && isnan(g)) || (w == g && signbit(w) == signbit(g)));
      if (!ok && bad++ < 3)
        fprintf(stderr, "sort rows %" PRId64 " n %" PRId64 " sym %d desc %d interp %d: [%" PRId64 ", %" PRId64
                        "] idx %" PRId64 "/%" PRId64 " want %" PRId64 ", value %g want %g\n",
                rows, n, symbolic, desc, interpret, r, i, iv[r * n + i], it[i * rows + r], want[i], g, w);
    }
  }
  CHECK_EQ_INT(bad, 0);
  free(xv), free(sv), free(iv), free(it), free(want);
  frit_ctx_free(ctx);
}

static void test_sort(void) {
  for (int interp = 0; interp < 2; interp++)
    for (int desc = 0; desc < 2; desc++) {
      run_sort(3, 7, false, desc, interp);    /* insertion sort */
      run_sort(12, 300, false, desc, interp); /* many rows: radix sort of a row per point */
      run_sort(11, 90, true, desc, interp);
      run_sort(10, 20, true, desc, interp);
      run_sort(2, 300, false, desc, interp);  /* radix sort */
      if (!interp || !desc) run_sort(1, 70000, false, desc, interp); /* chunked, static */
      run_sort(4, 37, true, desc, interp);    /* symbolic, short: insertion sort */
      run_sort(3, 250, true, desc, interp);   /* symbolic, long, few rows: chunked radix passes */
      if (!interp) run_sort(2, 140000, true, desc, interp); /* chunked radix passes (3 chunks per row) */
      run_sort(2, 0, true, desc, interp);     /* empty rows */
      run_sort(2, 1, false, desc, interp);
    }
}

static void test_searchsorted(void) {
  for (int interp = 0; interp < 2; interp++)
    for (int right = 0; right < 2; right++) {
      frit_ctx *ctx = frit_ctx_new();
      int64_t na = 9, nv = 13;
      frit_tensor *a = frit_input(ctx, "a", FRIT_I32, 1, &na), *v = frit_input(ctx, "v", FRIT_I32, 1, &nv);
      frit_tensor *o = frit_searchsorted(ctx, a, v, right, NULL);
      frit_program *p = o ? compile_outs(ctx, &o, 1, interp) : NULL;
      CHECK(p != NULL);
      if (p) {
        int32_t av[9] = {-5, -2, -2, 0, 1, 1, 1, 4, 9}, vv[13];
        int64_t got[13];
        for (int i = 0; i < 13; i++) vv[i] = (int32_t)(next_rand() % 17) - 8;
        void *in[2] = {av, vv}, *out[1] = {got};
        CHECK_EQ_INT(frit_program_run(p, in, out, NULL, 0), FRIT_OK);
        for (int i = 0; i < 13; i++) {
          int64_t w = 0;
          while (w < na && (right ? av[w] <= vv[i] : av[w] < vv[i])) w++;
          CHECK_EQ_INT(got[i], w);
        }
      }
      frit_ctx_free(ctx);
    }
}

static void test_errors(void) {
  frit_ctx *ctx = frit_ctx_new();
  frit_tensor *x = frit_input(ctx, "x", FRIT_F32, 2, (const int64_t[]){2, 3});
  CHECK(frit_sort(ctx, x, 2, 0) == NULL);
  CHECK(strstr(frit_error(ctx), "axis") != NULL);
  CHECK(frit_argsort(ctx, x, -3, 0) == NULL);
  CHECK(frit_sort(ctx, frit_scalar_f(ctx, FRIT_F32, 1), -1, 0) == NULL);
  CHECK(frit_sort(ctx, NULL, 0, 0) == NULL);
  CHECK(frit_searchsorted(ctx, x, x, 0, NULL) == NULL);
  CHECK(strstr(frit_error(ctx), "1-d") != NULL);
  frit_tensor *a = frit_input(ctx, "a", FRIT_F32, 1, (const int64_t[]){4});
  frit_tensor *s = frit_input(ctx, "s", FRIT_I64, 1, (const int64_t[]){3});
  CHECK(frit_searchsorted(ctx, a, x, 0, s) == NULL);
  CHECK(strstr(frit_error(ctx), "sorter") != NULL);
  /* the axis=None form of a 0-d array is one element */
  frit_tensor *z = frit_sort(ctx, frit_scalar_f(ctx, FRIT_F32, 1), FRIT_NO_AXIS, 0);
  CHECK(z != NULL && frit_tensor_ndim(z) == 1);
  frit_ctx_free(ctx);
}

int main(void) {
  test_sort();
  test_searchsorted();
  test_errors();
  CHECK_DONE();
}
