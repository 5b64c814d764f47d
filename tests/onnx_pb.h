/* A tiny protobuf writer for the ONNX tests and the fuzzer's seed: models are written field by
 * field here, independently of the importer's protobuf-c schema. */
#ifndef FRIT_TEST_ONNX_PB_H
#define FRIT_TEST_ONNX_PB_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct pb {
  uint8_t *p;
  size_t n, cap;
} pb;

static void pb_put(pb *b, const void *d, size_t n) {
  if (b->n + n > b->cap) {
    b->cap = (b->n + n) * 2 + 64;
    b->p = realloc(b->p, b->cap);
    if (!b->p) abort();
  }
  memcpy(b->p + b->n, d, n);
  b->n += n;
}
static void pb_varint(pb *b, uint64_t v) {
  do {
    uint8_t c = (uint8_t)(v & 0x7f);
    v >>= 7;
    if (v) c |= 0x80;
    pb_put(b, &c, 1);
  } while (v);
}
static void pb_int(pb *b, int field, int64_t v) {
  pb_varint(b, (uint64_t)field << 3);
  pb_varint(b, (uint64_t)v);
}
static void pb_bytes(pb *b, int field, const void *d, size_t n) {
  pb_varint(b, (uint64_t)field << 3 | 2);
  pb_varint(b, n);
  pb_put(b, d, n);
}
static void pb_str(pb *b, int field, const char *s) { pb_bytes(b, field, s, strlen(s)); }
/* Embeds sub as a message field and frees it. */
static void pb_msg(pb *b, int field, pb *sub) {
  pb_bytes(b, field, sub->p, sub->n);
  free(sub->p);
  memset(sub, 0, sizeof *sub);
}

/* ValueInfoProto of a tensor: name, ONNX elem type, dims. */
static void pb_value_info(pb *g, int field, const char *name, int elem, int ndim, const int64_t *dims) {
  pb vi = {0}, ty = {0}, tt = {0}, sh = {0};
  pb_str(&vi, 1, name);
  pb_int(&tt, 1, elem);
  for (int d = 0; d < ndim; d++) {
    pb dim = {0};
    pb_int(&dim, 1, dims[d]);
    pb_msg(&sh, 1, &dim);
  }
  pb_msg(&tt, 2, &sh);
  pb_msg(&ty, 1, &tt);
  pb_msg(&vi, 2, &ty);
  pb_msg(g, field, &vi);
}

/* NodeProto with up to 3 inputs and one output. */
static void pb_node(pb *g, const char *op, const char *name, const char *in0, const char *in1, const char *out) {
  pb nd = {0};
  if (in0) pb_str(&nd, 1, in0);
  if (in1) pb_str(&nd, 1, in1);
  pb_str(&nd, 2, out);
  pb_str(&nd, 3, name);
  pb_str(&nd, 4, op);
  pb_msg(g, 1, &nd);
}

/* ModelProto around graph g (freed) with the default domain at opset. */
static pb pb_model(pb *g, int64_t opset) {
  pb m = {0}, os = {0};
  pb_int(&m, 1, 8);
  pb_str(&m, 2, "frit-test");
  pb_str(&os, 1, "");
  pb_int(&os, 2, opset);
  pb_msg(&m, 8, &os);
  pb_msg(&m, 7, g);
  return m;
}

/* y = relu(x + w) * 2 with x f32 (3) an input, w (3) an initializer, 2 a Constant-free
 * initializer "two" (0-d), and shape arithmetic (Shape -> Reshape) on the way. */
static pb pb_sample_model(void) {
  pb g = {0}, w = {0}, two = {0};
  static const float wv[3] = {1.0f, -2.0f, 0.5f}, tv = 2.0f;
  int64_t d3[1] = {3};
  pb_node(&g, "Add", "add0", "x", "w", "s");
  pb_node(&g, "Relu", "relu0", "s", NULL, "r");
  pb_node(&g, "Shape", "shape0", "x", NULL, "xs");
  pb_node(&g, "Reshape", "reshape0", "r", "xs", "r2");
  pb_node(&g, "Mul", "mul0", "r2", "two", "y");
  pb_int(&w, 1, 3);
  pb_int(&w, 2, 1);
  pb_str(&w, 8, "w");
  pb_bytes(&w, 9, wv, sizeof wv);
  pb_msg(&g, 5, &w);
  pb_int(&two, 2, 1);
  pb_str(&two, 8, "two");
  pb_bytes(&two, 9, &tv, sizeof tv);
  pb_msg(&g, 5, &two);
  pb_value_info(&g, 11, "x", 1, 1, d3);
  pb_value_info(&g, 12, "y", 1, 1, d3);
  return pb_model(&g, 17);
}
#endif
