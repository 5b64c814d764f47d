/* The parsed form of a StableHLO module (textual MLIR, pretty or generic): functions of ops
 * with their attributes, regions and types, SSA names resolved to value numbers. */
#ifndef FRIT_IMPORT_SHLO_H
#define FRIT_IMPORT_SHLO_H

#include <stddef.h>
#include <stdint.h>

#include "frit.h"

/* All of a module's parse data lives in one arena, freed at once. */
typedef struct shlo_chunk shlo_chunk;
typedef struct shlo_arena {
  shlo_chunk *head;
} shlo_arena;
void *shlo_alloc(shlo_arena *a, size_t n); /* zeroed; NULL when out of memory */
void shlo_arena_free(shlo_arena *a);

typedef struct shlo_type {
  frit_dtype dt;   /* FRIT_VOID for a type frit cannot hold (token, tuple): named in errors */
  int ndim;        /* -1: unranked */
  int64_t dims[FRIT_MAX_DIMS]; /* -1: dynamic (?) */
  const char *text; /* the type as written, for messages */
} shlo_type;

typedef enum shlo_attr_kind {
  SA_INT, SA_FLOAT, SA_BOOL, SA_WORD, SA_STRING, SA_LIST, SA_DICT, SA_DENSE, SA_TYPE, SA_FUNCTYPE,
  SA_SYMBOL, SA_RAW, SA_UNIT
} shlo_attr_kind;

typedef struct shlo_attr shlo_attr;
struct shlo_attr {
  shlo_attr_kind kind;
  int64_t i;             /* SA_INT, SA_BOOL */
  double f;              /* SA_FLOAT (SA_INT also sets it) */
  const char *s;         /* SA_WORD, SA_STRING, SA_SYMBOL, SA_RAW (the text inside #x<...>) */
  int n;                 /* SA_LIST, SA_DICT: items; SA_DENSE: values */
  shlo_attr **items;     /* SA_LIST, SA_DICT values */
  const char **keys;     /* SA_DICT */
  shlo_type type;        /* SA_TYPE, SA_DENSE (its tensor type), typed ints/floats */
  /* SA_DENSE: n values (n == 1 with more elements: a splat), or hex bytes */
  double *fv;            /* values as doubles (real part for complex) */
  int64_t *iv;           /* values as integers (exact for ints) */
  double *imv;           /* imaginary parts (complex literals), else NULL */
  const uint8_t *hex;    /* raw little-endian bytes of a "0x..." dense literal */
  size_t hexlen;
  int nin, nout;         /* SA_FUNCTYPE */
  shlo_type *tin, *tout;
};

typedef struct shlo_region shlo_region;
typedef struct shlo_op {
  const char *name;      /* "stablehlo.add", "func.call", "func.return", ... */
  int line, col;
  int nres, res0;        /* results are values res0 .. res0 + nres - 1 */
  int nopnd;
  int *opnd;             /* operand values */
  int ninit;             /* pretty reduce: the last ninit operands are the inits */
  int nattr;
  const char **akeys;
  shlo_attr **avals;
  int nword;             /* bare words of the pretty form, in order (GT, FLOAT, applies ...) */
  const char **words;
  int nregion;
  shlo_region **regions;
  int ntin, ntout;       /* the trailing type: (tin) -> (tout), or ntout types alone */
  shlo_type *tin, *tout;
  const char *callee;    /* @symbol of call and custom_call */
  int weight1;           /* a constant held as a model weight: its number + 1 (0: inline) */
  int nslice;            /* pretty slice: [start:limit:stride, ...] */
  int64_t *slice;        /* 3 per axis */
} shlo_op;

struct shlo_region {
  int nargs;
  int *args;             /* block argument values */
  shlo_type *arg_types;
  int nops;
  shlo_op **ops;
};

typedef struct shlo_func {
  const char *name;
  int is_public;
  int line, col;
  int nargs, nres;
  shlo_type *arg_types, *res_types;
  const char **res_names; /* jax.result_info when present, else NULL */
  shlo_region *body;
  int nvalues;            /* values numbered 0 .. nvalues - 1 */
} shlo_func;

typedef struct shlo_module {
  shlo_arena arena;
  int nfuncs;
  shlo_func **funcs;
} shlo_module;

/* Parses text into m (zeroed by the caller). On failure: FRIT_ERR_PARSE with "line L, column C"
 * in ctx; m may hold partial data (free it with shlo_arena_free). */
frit_status shlo_parse(frit_ctx *ctx, const char *text, size_t len, shlo_module *m);

/* Attribute lookups on an op (NULL when absent). */
shlo_attr *shlo_attr_get(const shlo_op *op, const char *key);
shlo_attr *shlo_dict_get(const shlo_attr *dict, const char *key);
/* An int list attribute (SA_LIST of ints, array<i64: ...>, or a dense of ints) into out (at most
 * max); returns the count, -1 when it is not one. */
int shlo_attr_ints(const shlo_attr *a, int64_t *out, int max);
int shlo_has_word(const shlo_op *op, const char *w);

#endif
