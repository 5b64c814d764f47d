/* Compiled form of a rule set, shared by the rule parser (parse.c) and the matcher/rewriter
 * (rewrite.c). The notation itself is described in docs/rules.md. */
#ifndef FRIT_RULES_H
#define FRIT_RULES_H

#include "ir/uop.h"

#define FRIT_RULE_MAX_SLOTS 32  /* distinct variable names per rule */
#define FRIT_RULE_MAX_CLASSES 4 /* ':class' suffixes on one pattern */
#define FRIT_RULE_MAX_SRC 16    /* sources written in one pattern or template node */
#define FRIT_RULE_MAX_ARGS 16   /* arguments of a guard or callback */

/* Op bit sets: the op table has fewer than 128 entries. */
_Static_assert(FRIT_OP_COUNT_ <= 128, "op mask needs more words");

typedef enum rule_class {
  RC_INT, RC_SINT, RC_UINT, RC_FLOAT, RC_BOOL, RC_CONST, RC_DTYPE /* exact dtype */
} rule_class;

/* A numeric literal: `true`/`false` are the integers 1/0; inf and nan are floats. */
typedef struct rule_lit {
  bool is_float;
  int64_t i;
  double f;
} rule_lit;

typedef enum pat_kind { PK_OP, PK_VAR, PK_LIT } pat_kind;

typedef struct rule_pat {
  uint8_t kind;     /* pat_kind */
  uint8_t ncls;
  uint8_t ellipsis; /* PK_OP: '...' after the sources */
  uint8_t nsrc;
  int16_t slot;     /* PK_VAR: binding slot, -1 for the wildcard `_` */
  uint8_t cls[FRIT_RULE_MAX_CLASSES];
  frit_dtype cls_dt[FRIT_RULE_MAX_CLASSES];
  uint64_t ops[2];  /* PK_OP: the alternatives */
  rule_lit lit;
  struct rule_pat **src;
} rule_pat;

typedef enum tmpl_kind { TK_VAR, TK_LIT, TK_OP, TK_CALL } tmpl_kind;

typedef struct rule_tmpl {
  uint8_t kind; /* tmpl_kind */
  uint8_t has_dt;
  uint8_t typed; /* its dtype does not depend on the context: has a variable, call or ':dtype' */
  uint16_t op;   /* TK_OP */
  frit_dtype dt;
  int slot;     /* TK_VAR */
  rule_lit lit; /* TK_LIT */
  int fn;       /* TK_CALL: index into the rule set's fns */
  int nsrc;     /* TK_OP: sources; TK_CALL: arguments (slots in args) */
  int *args;
  struct rule_tmpl **src;
} rule_tmpl;

typedef struct rule_guard {
  int fn;
  bool negate;
  int nargs;
  int args[FRIT_RULE_MAX_ARGS];
} rule_guard;

typedef struct rule {
  rule_pat *pat;
  rule_tmpl *res;
  rule_guard *guards;
  int nguards;
  int nslots;
  bool needs_root; /* guards or callbacks see the root: it must be a real node */
  int line;
  const char *text;
} rule;

struct rewrite_scratch;

struct frit_ruleset {
  frit_ctx *ctx;
  frit_arena arena; /* patterns, templates, texts, tables: freed with the rule set */
  char *name;
  const frit_rule_fn *fns;
  int nfns;
  rule *rules;
  int nrules;
  uint64_t *fired;
  /* rules by root op, in file order; a rule whose root is a variable is in every list */
  int *by_op[FRIT_OP_COUNT_];
  int nby_op[FRIT_OP_COUNT_];
  uint64_t commutative[2]; /* ops with FRIT_F_COMMUTATIVE, for the matcher */
  /* memo and stack kept between calls so that a small rewrite in a big context costs only
   * what it touches; NULL while a call is using them (a nested call then makes its own) */
  struct rewrite_scratch *scratch;
};

/* Frees a rewrite scratch (rewrite.c); used by the rule set's destructor. */
void frit_rewrite_scratch_free(struct rewrite_scratch *s);

static inline bool rule_op_in(const uint64_t ops[2], unsigned op) {
  return (ops[op >> 6] >> (op & 63)) & 1u;
}

#endif
