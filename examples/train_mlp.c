/* Trains the Fashion-MNIST MLP (784-256-10, ReLU, log-softmax cross-entropy, Adam) through the C
 * API alone: the forward pass, frit_grad for the backward pass and the Adam update are one graph,
 * compiled once into one program that runs every step.
 *
 *   build/examples/train_mlp [data dir] [epochs]     (default /usr/share/datasets/fashion-mnist, 5)
 *   build/examples/train_mlp --synthetic N [epochs]  (N generated images, for the tests)
 *
 * The idx files may be gzipped (read through `gzip -dc`, so no zlib is needed). */
#include "frit.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { IN = 784, HID = 256, OUT = 10, BATCH = 128, NPARAM = 4 };

#define D(...) ((const int64_t[]){__VA_ARGS__})

typedef struct dataset {
  float *x;   /* n x 784, normalised */
  int64_t *y; /* n labels */
  int n;
} dataset;

/* The bytes of an idx file (plain or .gz); *len set. NULL when it cannot be read. */
static unsigned char *read_file(const char *dir, const char *name, size_t *len) {
  char path[1024], cmd[1200];
  snprintf(path, sizeof path, "%s/%s.gz", dir, name);
  FILE *f = NULL;
  bool piped = false;
  FILE *probe = fopen(path, "rb");
  if (probe) {
    fclose(probe);
    snprintf(cmd, sizeof cmd, "gzip -dc '%s'", path);
    f = popen(cmd, "r");
    piped = true;
  } else {
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "rb");
  }
  if (!f) return NULL;
  size_t cap = 1 << 20, n = 0;
  unsigned char *buf = malloc(cap);
  while (buf) {
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (n < cap) break;
    unsigned char *b2 = realloc(buf, cap *= 2);
    if (!b2) free(buf);
    buf = b2;
  }
  if (piped) pclose(f);
  else fclose(f);
  *len = n;
  return buf;
}

static uint32_t be32(const unsigned char *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

static bool load(const char *dir, const char *images, const char *labels, dataset *d) {
  size_t ni, nl;
  unsigned char *im = read_file(dir, images, &ni), *lb = read_file(dir, labels, &nl);
  bool ok = im && lb && ni >= 16 && nl >= 8 && be32(im) == 0x803 && be32(lb) == 0x801 && be32(im + 4) == be32(lb + 4) &&
            be32(im + 8) == 28 && be32(im + 12) == 28 && ni >= 16 + (size_t)be32(im + 4) * IN && nl >= 8 + be32(lb + 4);
  if (ok) {
    d->n = (int)be32(im + 4);
    d->x = malloc((size_t)d->n * IN * sizeof *d->x);
    d->y = malloc((size_t)d->n * sizeof *d->y);
    ok = d->x && d->y;
    for (size_t i = 0; ok && i < (size_t)d->n * IN; i++) d->x[i] = (im[16 + i] / 255.0f - 0.2860f) / 0.3530f;
    for (int i = 0; ok && i < d->n; i++) d->y[i] = lb[8 + i];
  }
  free(im), free(lb);
  if (!ok) fprintf(stderr, "train_mlp: cannot read %s/%s(.gz) and %s(.gz)\n", dir, images, labels);
  return ok;
}

static uint64_t rng_state = 88172645463325252ull;
static double uniform01(void) { /* xorshift64 */
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
  return (rng_state >> 11) * (1.0 / 9007199254740992.0);
}

/* n images of 10 classes: a random template per class plus noise. */
static void synthetic(int n, dataset *train, dataset *test) {
  float *tmpl = malloc(OUT * IN * sizeof *tmpl);
  for (int i = 0; i < OUT * IN; i++) tmpl[i] = (float)(2 * uniform01() - 1);
  int nt = n * 5 / 6;
  dataset *ds[2] = {train, test};
  int sizes[2] = {nt, n - nt};
  for (int s = 0; s < 2; s++) {
    dataset *d = ds[s];
    d->n = sizes[s];
    d->x = malloc((size_t)d->n * IN * sizeof *d->x);
    d->y = malloc((size_t)d->n * sizeof *d->y);
    for (int i = 0; i < d->n; i++) {
      d->y[i] = (int64_t)(uniform01() * OUT) % OUT;
      for (int k = 0; k < IN; k++) d->x[(size_t)i * IN + k] = tmpl[d->y[i] * IN + k] + (float)(uniform01() - 0.5);
    }
  }
  free(tmpl);
}

static frit_tensor *bin(frit_ctx *ctx, frit_bfunc f, frit_tensor *a, frit_tensor *b) { return frit_binary_t(ctx, f, a, b); }
static frit_tensor *num(frit_ctx *ctx, double v) { return frit_scalar_f(ctx, FRIT_F32, v); }

/* logits of x under params (W1, b1, W2, b2) */
static frit_tensor *forward(frit_ctx *ctx, frit_tensor *x, frit_tensor *const *p) {
  frit_tensor *h = frit_unary_t(ctx, FRIT_UF_RELU, bin(ctx, FRIT_BF_ADD, frit_matmul(ctx, x, p[0]), p[1]));
  return bin(ctx, FRIT_BF_ADD, frit_matmul(ctx, h, p[2]), p[3]);
}

int main(int argc, char **argv) {
  const char *dir = "/usr/share/datasets/fashion-mnist";
  int epochs = 5, synth = 0;
  if (argc > 2 && !strcmp(argv[1], "--synthetic")) synth = atoi(argv[2]), argv += 2, argc -= 2;
  else if (argc > 1) dir = argv[1], argv++, argc--;
  if (argc > 1) epochs = atoi(argv[1]);
  dataset train = {0}, test = {0};
  if (synth) synthetic(synth, &train, &test);
  else if (!load(dir, "train-images-idx3-ubyte", "train-labels-idx1-ubyte", &train) ||
           !load(dir, "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", &test))
    return 1;

  /* parameters (PyTorch's Linear init) and Adam moments, host-side; the program reads and
   * writes them each step */
  const int64_t shapes[NPARAM][2] = {{IN, HID}, {HID, 1}, {HID, OUT}, {OUT, 1}};
  const int nd[NPARAM] = {2, 1, 2, 1};
  size_t sizes[NPARAM];
  float *param[NPARAM], *m[NPARAM], *v[NPARAM];
  for (int i = 0; i < NPARAM; i++) {
    sizes[i] = (size_t)(shapes[i][0] * shapes[i][1]);
    param[i] = malloc(sizes[i] * sizeof(float)), m[i] = calloc(sizes[i], sizeof(float)), v[i] = calloc(sizes[i], sizeof(float));
    double bound = 1 / sqrt(i < 2 ? IN : HID);
    for (size_t k = 0; k < sizes[i]; k++) param[i][k] = (float)((2 * uniform01() - 1) * bound);
  }

  frit_ctx *ctx = frit_ctx_new();
  frit_tensor *x = frit_input(ctx, "x", FRIT_F32, 2, D(BATCH, IN));
  frit_tensor *y = frit_input(ctx, "y", FRIT_I64, 1, D(BATCH));
  frit_tensor *t = frit_input(ctx, "t", FRIT_F32, 0, NULL); /* Adam's step count, from 1 */
  frit_tensor *lr = frit_input(ctx, "lr", FRIT_F32, 0, NULL);
  frit_tensor *p[NPARAM], *pm[NPARAM], *pv[NPARAM];
  for (int i = 0; i < NPARAM; i++) {
    char name[16];
    int64_t s[2] = {shapes[i][0], shapes[i][1]};
    snprintf(name, sizeof name, "p%d", i), p[i] = frit_input(ctx, name, FRIT_F32, nd[i], s);
    snprintf(name, sizeof name, "m%d", i), pm[i] = frit_input(ctx, name, FRIT_F32, nd[i], s);
    snprintf(name, sizeof name, "v%d", i), pv[i] = frit_input(ctx, name, FRIT_F32, nd[i], s);
  }
  /* loss = mean(-log_softmax(logits)[y]) as a one-hot product */
  frit_tensor *logp = frit_log_softmax(ctx, forward(ctx, x, p), 1);
  frit_tensor *picked = bin(ctx, FRIT_BF_MUL, logp, frit_one_hot(ctx, y, OUT, FRIT_F32));
  frit_tensor *loss = frit_unary_t(ctx, FRIT_UF_NEG,
                                   bin(ctx, FRIT_BF_TRUEDIV, frit_reduce(ctx, FRIT_RF_SUM, picked, NULL, FRIT_ALL_AXES, 0, 0),
                                       num(ctx, BATCH)));
  frit_tensor *g[NPARAM];
  if (frit_grad(ctx, loss, NPARAM, p, g) != FRIT_OK) {
    fprintf(stderr, "train_mlp: %s\n", frit_error(ctx));
    return 1;
  }
  /* Adam (b1 0.9, b2 0.999, eps 1e-8) with bias correction */
  frit_tensor *outs[1 + 3 * NPARAM];
  outs[0] = loss;
  frit_tensor *c1 = bin(ctx, FRIT_BF_SUB, num(ctx, 1), bin(ctx, FRIT_BF_POW, num(ctx, 0.9), t));
  frit_tensor *c2 = bin(ctx, FRIT_BF_SUB, num(ctx, 1), bin(ctx, FRIT_BF_POW, num(ctx, 0.999), t));
  for (int i = 0; i < NPARAM; i++) {
    frit_tensor *m2 = bin(ctx, FRIT_BF_ADD, bin(ctx, FRIT_BF_MUL, num(ctx, 0.9), pm[i]), bin(ctx, FRIT_BF_MUL, num(ctx, 0.1), g[i]));
    frit_tensor *v2 = bin(ctx, FRIT_BF_ADD, bin(ctx, FRIT_BF_MUL, num(ctx, 0.999), pv[i]),
                          bin(ctx, FRIT_BF_MUL, num(ctx, 0.001), bin(ctx, FRIT_BF_MUL, g[i], g[i])));
    frit_tensor *mh = bin(ctx, FRIT_BF_TRUEDIV, m2, c1), *vh = bin(ctx, FRIT_BF_TRUEDIV, v2, c2);
    frit_tensor *upd = bin(ctx, FRIT_BF_TRUEDIV, bin(ctx, FRIT_BF_MUL, lr, mh),
                           bin(ctx, FRIT_BF_ADD, frit_unary_t(ctx, FRIT_UF_SQRT, vh), num(ctx, 1e-8)));
    outs[1 + i] = bin(ctx, FRIT_BF_SUB, p[i], upd), outs[1 + NPARAM + i] = m2, outs[1 + 2 * NPARAM + i] = v2;
  }
  frit_program *step = frit_compile(ctx, outs, 1 + 3 * NPARAM, NULL);
  /* evaluation: predicted class per row of a batch */
  frit_tensor *pred = frit_reduce(ctx, FRIT_RF_ARGMAX, forward(ctx, x, p), (const int[]){1}, 1, 0, 0);
  frit_program *eval = step ? frit_compile(ctx, &pred, 1, NULL) : NULL;
  if (!step || !eval) {
    fprintf(stderr, "train_mlp: compile: %s\n", frit_error(ctx));
    return 1;
  }
  printf("train_mlp: one step = %d kernels\n", frit_program_num_kernels(step));
  /* the new parameters and moments go into the memory of the old ones (buffer donation) */
  int in_place = 0;
  for (int i = 0; i < frit_program_num_inputs(step); i++) {
    const char *nm = frit_program_input_name(step, i);
    int k = nm[1] - '0', base = nm[0] == 'p' ? 1 : nm[0] == 'm' ? 1 + NPARAM : nm[0] == 'v' ? 1 + 2 * NPARAM : -1;
    int direct = 0;
    if (base < 0) continue;
    if (frit_program_donate(step, i, base + k, &direct) != FRIT_OK) {
      fprintf(stderr, "train_mlp: donate: %s\n", frit_error(ctx));
      return 1;
    }
    in_place += direct;
  }
  printf("train_mlp: %d of %d state arrays updated in place\n", in_place, 3 * NPARAM);

  /* buffers by input name */
  float *bx = malloc((size_t)BATCH * IN * sizeof *bx), step_t = 0, rate = 1e-3f, loss_v = 0;
  int64_t by[BATCH], bp[BATCH];
  int *order = malloc((size_t)train.n * sizeof *order);
  for (int i = 0; i < train.n; i++) order[i] = i;
  int nb = train.n / BATCH, nsteps = epochs * nb;
  for (int ep = 0; ep < epochs; ep++) {
    for (int i = train.n - 1; i > 0; i--) { /* shuffle */
      int j = (int)(uniform01() * (i + 1)), tmp = order[i];
      order[i] = order[j], order[j] = tmp;
    }
    double total = 0;
    for (int b = 0; b < nb; b++) {
      for (int r = 0; r < BATCH; r++) {
        int k = order[b * BATCH + r];
        memcpy(bx + (size_t)r * IN, train.x + (size_t)k * IN, IN * sizeof *bx);
        by[r] = train.y[k];
      }
      int s = ep * nb + b;
      step_t = (float)(s + 1);
      rate = (float)(1e-3 * (0.05 + 0.95 * 0.5 * (1 + cos(3.14159265358979323846 * s / nsteps)))); /* cosine to lr/20 */
      void *ins[4 + 3 * NPARAM];
      for (int i = 0; i < frit_program_num_inputs(step); i++) {
        const char *nm = frit_program_input_name(step, i);
        int k = nm[1] - '0';
        ins[i] = !strcmp(nm, "x") ? (void *)bx : !strcmp(nm, "y") ? (void *)by : !strcmp(nm, "t") ? (void *)&step_t
                 : !strcmp(nm, "lr") ? (void *)&rate : nm[0] == 'p' ? (void *)param[k] : nm[0] == 'm' ? (void *)m[k]
                 : (void *)v[k];
      }
      void *ob[1 + 3 * NPARAM] = {&loss_v}; /* NULL: into the donated input */
      if (frit_program_run(step, ins, ob, NULL, 0) != FRIT_OK) {
        fprintf(stderr, "train_mlp: run: %s\n", frit_error(ctx));
        return 1;
      }
      total += loss_v;
    }
    int hits = 0;
    for (int b = 0; b + BATCH <= test.n; b += BATCH) {
      void *ins[1 + NPARAM];
      for (int i = 0; i < frit_program_num_inputs(eval); i++) {
        const char *nm = frit_program_input_name(eval, i);
        ins[i] = !strcmp(nm, "x") ? (void *)(test.x + (size_t)b * IN) : (void *)param[nm[1] - '0'];
      }
      if (frit_program_run(eval, ins, (void *[]){bp}, NULL, 0) != FRIT_OK) return 1;
      for (int r = 0; r < BATCH; r++) hits += bp[r] == test.y[b + r];
    }
    printf("epoch %d: loss %.4f, test accuracy %.4f\n", ep + 1, total / nb, (double)hits / (test.n / BATCH * BATCH));
    fflush(stdout);
  }
  for (int i = 0; i < NPARAM; i++) free(param[i]), free(m[i]), free(v[i]);
  free(bx), free(order), free(train.x), free(train.y), free(test.x), free(test.y);
  frit_ctx_free(ctx);
  return 0;
}
