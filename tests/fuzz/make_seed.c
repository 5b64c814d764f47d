/* Writes the fuzzer's seed model (tests/onnx_pb.h's sample: Add, Relu, Shape, Reshape, Mul with
 * initializers) to the file named by argv[1]. */
#include <stdio.h>

#include "../onnx_pb.h"

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  pb m = pb_sample_model();
  FILE *f = fopen(argv[1], "wb");
  if (!f) return 1;
  fwrite(m.p, 1, m.n, f);
  fclose(f);
  free(m.p);
  return 0;
}
