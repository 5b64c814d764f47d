/* The CLI's C-syntax integer expression parser: text such as "(x*4+y)/4" into a frit graph
 * over i64 DEFINE_VARs, with C precedence and C's int/bool conversions. */
#ifndef FRIT_CLI_EXPR_H
#define FRIT_CLI_EXPR_H

#include "frit.h"

/* Inclusive bounds of a named variable (from --range). */
typedef struct cli_var_range {
  const char *name;
  int64_t lo, hi;
} cli_var_range;

/* Deepest nesting (brackets, prefix operators, conditionals) accepted; deeper input is an
 * error rather than a graph too deep to be worth building. */
#define CLI_EXPR_MAX_DEPTH 100000

/* Parses `text`. Variables named in `ranges` get those bounds, others the full i64 range.
 * On failure returns NULL and writes a message (with a caret line under the text for syntax
 * errors) into err. */
frit_uop *cli_parse_expr(frit_ctx *ctx, const char *text, const cli_var_range *ranges,
                         int nranges, char *err, size_t errsize);

#endif
