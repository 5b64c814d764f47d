/* The fallback fuzz driver, for machines without clang's libFuzzer: a harness built with
 * -DFRIT_FUZZ_DRIVER becomes a program "NAME SECONDS FILE..." that runs each file, then random
 * mutations of them (bit flips, truncations, random bytes, runs of 0xff where a length or a
 * varint was) until SECONDS have passed. Include it after LLVMFuzzerTestOneInput, with
 * FUZZ_NAME defined. */
#ifdef FRIT_FUZZ_DRIVER
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s SECONDS FILE...\n", argv[0]);
    return 2;
  }
  double secs = atof(argv[1]);
  int n = argc - 2;
  uint8_t **bufs = calloc((size_t)n, sizeof *bufs);
  size_t *lens = calloc((size_t)n, sizeof *lens);
  for (int i = 0; i < n; i++) {
    FILE *f = fopen(argv[i + 2], "rb");
    if (!f) continue;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    bufs[i] = malloc(len > 0 ? (size_t)len : 1);
    lens[i] = fread(bufs[i], 1, len > 0 ? (size_t)len : 0, f);
    fclose(f);
    LLVMFuzzerTestOneInput(bufs[i], lens[i]);
  }
  time_t start = time(NULL);
  long runs = 0;
  while (difftime(time(NULL), start) < secs) {
    int k = (int)(next_rand() % (uint64_t)n);
    if (!bufs[k] || !lens[k]) continue;
    size_t len = lens[k];
    uint8_t *b = malloc(len + 16);
    memcpy(b, bufs[k], len);
    int edits = 1 + (int)(next_rand() % 4);
    for (int e = 0; e < edits; e++) {
      switch (next_rand() % 4) {
      case 0: b[next_rand() % len] ^= (uint8_t)(1u << (next_rand() % 8)); break;
      case 1: len = 1 + next_rand() % len; break;
      case 2: b[next_rand() % len] = (uint8_t)next_rand(); break;
      default: /* a large varint where a length or value was */
        memset(b + next_rand() % len, 0xff, 1 + next_rand() % (len < 4 ? len : 4));
        break;
      }
      if (len > lens[k]) len = lens[k];
    }
    LLVMFuzzerTestOneInput(b, len);
    free(b);
    runs++;
  }
  fprintf(stderr, FUZZ_NAME ": %ld mutated inputs in %.0f s, no crash\n", runs, secs);
  for (int i = 0; i < n; i++) free(bufs[i]);
  free(bufs);
  free(lens);
  return 0;
}
#endif
