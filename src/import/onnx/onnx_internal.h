/* Shared by the ONNX importer's files: the parsed model kept for building, the per-call value
 * environment (tensors and build-time constants), and the converter helpers and op table. */
#ifndef FRIT_IMPORT_ONNX_INTERNAL_H
#define FRIT_IMPORT_ONNX_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "frit.h"
#include "onnx_subset.pb-c.h"

typedef FritOnnx__NodeProto ox_node;

/* A value known while the graph is built: small integer shape arithmetic (Shape, Gather, Concat
 * ...) is folded on the host, because frit needs reshape targets, slice bounds and pads as
 * numbers, not as run-time tensors. data is C-order storage of dt (never NULL; may be empty). */
typedef struct ox_const {
  frit_dtype dt;
  int ndim;
  int64_t dims[FRIT_MAX_DIMS];
  int64_t n;
  const void *data;
} ox_const;

/* The importer's model: the unpacked protobuf (read again at each call) and, for each weight (an
 * initializer or a Constant node's value), where its value lives. */
typedef struct ox_model {
  FritOnnx__ModelProto *proto;
  int64_t opset;
  int ninputs, nweights;           /* graph inputs proper, then weights */
  char **weight_names;             /* borrowed from the model's signature */
  ox_const *weight_values;         /* data borrowed from the signature (the model owns it) */
} ox_model;

typedef struct ox_val {
  const char *name;
  frit_tensor *t;                  /* NULL while only the constant is known */
  ox_const *c;                     /* NULL unless known at build time */
} ox_val;

typedef struct ox_cx {
  frit_ctx *ctx;
  ox_model *m;
  int64_t opset;
  ox_val *vals;
  int nvals, cap;
  int *table; int table_cap;       /* open-addressing index of vals by name */
  void **owned; int nowned, owned_cap; /* host buffers freed after the call */
} ox_cx;

typedef frit_status (*ox_convert_fn)(ox_cx *cx, const ox_node *n);

/* ---- onnx_call.c: the environment and helpers for converters ---- */
const char *ox_s(const char *s);                       /* NULL as "" */
frit_status ox_fail(ox_cx *cx, const ox_node *n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* The frit call that failed (returned NULL): its message, prefixed with the node. */
frit_status ox_fail_frit(ox_cx *cx, const ox_node *n);
void *ox_alloc(ox_cx *cx, size_t bytes);              /* zeroed; freed after the call */
bool ox_has_in(const ox_node *n, int k);              /* input k given (not "" or missing) */
frit_tensor *ox_in(ox_cx *cx, const ox_node *n, int k); /* NULL with an error when missing */
/* Input k as a build-time constant; NULL with an error naming the input when it is not one. */
const ox_const *ox_in_const(ox_cx *cx, const ox_node *n, int k);
const ox_const *ox_in_const_opt(ox_cx *cx, const ox_node *n, int k); /* NULL, no error, if not */
frit_status ox_set_out(ox_cx *cx, const ox_node *n, int k, frit_tensor *t);
frit_status ox_set_out_const(ox_cx *cx, const ox_node *n, int k, ox_const *c);
/* A constant's values as int64 / double (NULL with an error for a non-numeric dtype). */
int64_t *ox_const_ints(ox_cx *cx, const ox_const *c);
double *ox_const_doubles(ox_cx *cx, const ox_const *c);
ox_const *ox_const_new(ox_cx *cx, frit_dtype dt, int ndim, const int64_t *dims);
frit_tensor *ox_const_tensor(ox_cx *cx, const ox_const *c);

const FritOnnx__AttributeProto *ox_attr(const ox_node *n, const char *name);
int64_t ox_attr_i(const ox_node *n, const char *name, int64_t def);
double ox_attr_f(const ox_node *n, const char *name, double def);
const char *ox_attr_s(ox_cx *cx, const ox_node *n, const char *name, const char *def); /* NUL-terminated copy */
/* The ints attribute (count, values in *out; -1 when absent). */
int ox_attr_ints(const ox_node *n, const char *name, const int64_t **out);
/* Axes given as an attribute (older opsets) or as input k (newer): count, -1 when neither. */
int ox_axes(ox_cx *cx, const ox_node *n, const char *attr, int k, int64_t *axes, int max);
/* Normalises an axis into [0, ndim); false (with an error) when out of range. */
bool ox_axis(ox_cx *cx, const ox_node *n, int64_t *axis, int ndim);

/* Conv's geometry (pads, auto_pad, strides, dilations, group of node n) applied to x and w:
 * shared by Conv and the quantized convolutions. NULL with an error. */
frit_tensor *ox_conv_of(ox_cx *cx, const ox_node *n, frit_tensor *x, frit_tensor *w, frit_tensor *bias);

/* ---- onnx_read.c ---- */
frit_dtype ox_dtype(int32_t onnx_type);               /* FRIT_VOID when unsupported */
const char *ox_dtype_name(int32_t onnx_type);
/* A TensorProto's values as C-order storage (malloc'd *data); FRIT_ERR_PARSE/INVALID in ctx. */
frit_status ox_tensor_data(frit_ctx *ctx, const FritOnnx__TensorProto *t, const char *base_dir, const char *what,
                           frit_dtype *dt, int *ndim, int64_t *dims, void **data);

/* ---- the op table (onnx_ops.c) and the converters by family ---- */
ox_convert_fn ox_find_op(const char *op_type);
frit_status ox_run_graph(ox_cx *cx);

#define OX_DECLARE(fn) frit_status fn(ox_cx *cx, const ox_node *n);
#define OX_OPS(X)                                                                                 \
  /* elementwise (onnx_ops_elem.c) */                                                             \
  X("Add", ox_binary) X("Sub", ox_binary) X("Mul", ox_binary) X("Div", ox_binary)                  \
  X("Pow", ox_binary) X("Mod", ox_binary) X("Equal", ox_binary) X("Less", ox_binary)              \
  X("LessOrEqual", ox_binary) X("Greater", ox_binary) X("GreaterOrEqual", ox_binary)              \
  X("And", ox_binary) X("Or", ox_binary) X("Xor", ox_binary) X("BitwiseAnd", ox_binary)           \
  X("BitwiseOr", ox_binary) X("BitwiseXor", ox_binary) X("BitShift", ox_binary)                   \
  X("Max", ox_variadic) X("Min", ox_variadic) X("Sum", ox_variadic) X("Mean", ox_variadic)        \
  X("Abs", ox_unary) X("Neg", ox_unary) X("Sqrt", ox_unary) X("Exp", ox_unary) X("Log", ox_unary) \
  X("Sin", ox_unary) X("Cos", ox_unary) X("Tan", ox_unary) X("Asin", ox_unary)                    \
  X("Acos", ox_unary) X("Atan", ox_unary) X("Sinh", ox_unary) X("Cosh", ox_unary)                 \
  X("Tanh", ox_unary) X("Asinh", ox_unary) X("Acosh", ox_unary) X("Atanh", ox_unary)              \
  X("Sigmoid", ox_unary) X("Relu", ox_unary) X("Erf", ox_unary) X("Floor", ox_unary)              \
  X("Ceil", ox_unary) X("Round", ox_unary) X("Sign", ox_unary) X("Reciprocal", ox_unary)          \
  X("Not", ox_unary) X("BitwiseNot", ox_unary) X("IsNaN", ox_unary) X("Softsign", ox_unary)       \
  X("Softplus", ox_unary) X("IsInf", ox_isinf)                                                    \
  X("Identity", ox_identity) X("Dropout", ox_identity) X("Cast", ox_cast) X("CastLike", ox_cast)  \
  X("Where", ox_where) X("Clip", ox_clip) X("LeakyRelu", ox_act) X("Elu", ox_act)                 \
  X("Selu", ox_act) X("Celu", ox_act) X("ThresholdedRelu", ox_act) X("HardSigmoid", ox_act)       \
  X("HardSwish", ox_act) X("Mish", ox_act) X("Gelu", ox_act) X("PRelu", ox_prelu)                 \
  /* linear algebra and nn (onnx_ops_nn.c) */                                                     \
  X("MatMul", ox_matmul) X("Gemm", ox_gemm) X("Conv", ox_conv) X("MaxPool", ox_pool)              \
  X("ConvTranspose", ox_conv_transpose)                                                           \
  X("AveragePool", ox_pool) X("GlobalAveragePool", ox_global_pool)                                \
  X("GlobalMaxPool", ox_global_pool) X("BatchNormalization", ox_batchnorm)                        \
  X("InstanceNormalization", ox_instnorm) X("LayerNormalization", ox_layernorm)                   \
  X("Softmax", ox_softmax) X("LogSoftmax", ox_softmax) X("Hardmax", ox_softmax)                   \
  X("Einsum", ox_einsum) X("Trilu", ox_trilu)                                                     \
  /* shapes and movement (onnx_ops_shape.c) */                                                    \
  X("Reshape", ox_reshape) X("Transpose", ox_transpose) X("Flatten", ox_flatten)                  \
  X("Squeeze", ox_squeeze) X("Unsqueeze", ox_unsqueeze) X("Concat", ox_concat)                    \
  X("Slice", ox_slice) X("Gather", ox_gather) X("GatherElements", ox_gather_elements)             \
  X("Pad", ox_pad) X("Expand", ox_expand) X("Tile", ox_tile) X("Split", ox_split)                 \
  X("Shape", ox_shape) X("Size", ox_size) X("ConstantOfShape", ox_constant_of_shape)              \
  X("Range", ox_range) X("Constant", ox_constant) X("OneHot", ox_onehot)                          \
  X("DepthToSpace", ox_depth_to_space) X("SpaceToDepth", ox_space_to_depth)                       \
  /* reductions (onnx_ops_reduce.c) */                                                            \
  X("ReduceSum", ox_reduce) X("ReduceMean", ox_reduce) X("ReduceMax", ox_reduce)                  \
  X("ReduceMin", ox_reduce) X("ReduceProd", ox_reduce) X("ReduceL1", ox_reduce)                   \
  X("ReduceL2", ox_reduce) X("ReduceLogSum", ox_reduce) X("ReduceLogSumExp", ox_reduce)           \
  X("ReduceSumSquare", ox_reduce) X("ArgMax", ox_argminmax) X("ArgMin", ox_argminmax)             \
  X("CumSum", ox_cumsum) X("TopK", ox_topk)                                                      \
  /* the rest (onnx_ops_misc.c) */                                                                \
  X("NegativeLogLikelihoodLoss", ox_nll_loss) X("SoftmaxCrossEntropyLoss", ox_sce_loss)           \
  X("HannWindow", ox_window) X("HammingWindow", ox_window) X("BlackmanWindow", ox_window)         \
  X("EyeLike", ox_eyelike) X("Shrink", ox_shrink) X("LRN", ox_lrn)                                \
  X("MeanVarianceNormalization", ox_mvn) X("Det", ox_det) X("DequantizeLinear", ox_dequantize)    \
  X("QuantizeLinear", ox_quantize) X("GatherND", ox_gather_nd)                                    \
  X("ScatterElements", ox_scatter_elements) X("Scatter", ox_scatter_elements)                     \
  X("ScatterND", ox_scatter_nd) X("Resize", ox_resize) X("Upsample", ox_resize)                   \
  X("ReverseSequence", ox_reverse_sequence) X("Compress", ox_compress) X("MaxUnpool", ox_maxunpool) \
  X("DFT", ox_dft)                                                                                \
  /* recurrent (onnx_ops_rnn.c) */                                                                \
  X("RNN", ox_rnn) X("GRU", ox_rnn) X("LSTM", ox_rnn)                                             \
  /* integer and quantized linear algebra (onnx_ops_quant.c) */                                   \
  X("MatMulInteger", ox_qlinear) X("ConvInteger", ox_qlinear) X("QLinearMatMul", ox_qlinear)      \
  X("QLinearConv", ox_qlinear) X("DynamicQuantizeLinear", ox_dynamic_quantize)

#define OX_DECL_ONE(name, fn) OX_DECLARE(fn)
OX_OPS(OX_DECL_ONE)
#undef OX_DECL_ONE

#endif
