/* Formatting helpers shared by the printers and the textual IR (src/ir/text.c implements them):
 * exact number spelling, string escaping, names of enum-valued node arguments. */
#ifndef FRIT_IRFMT_H
#define FRIT_IRFMT_H

#include "ir/uop.h"

/* Shortest decimal that reads back to exactly v ("0.1", "-0", "1e-300", "inf", "-inf");
 * NaN is "nan", "-nan" or "nan(0x<64-bit pattern>)" so that its bits survive. buf >= 48. */
void frit_fmt_double(char *buf, size_t bufsize, double v);
/* A constant's value as its dtype reads it: floats as above, unsigned as u, bool as
 * true/false, other integers as signed. buf >= 48. */
void frit_fmt_value(char *buf, size_t bufsize, frit_dtype dt, frit_scalar v);
/* Writes s[0..n) in double quotes with C escapes (\" \\ \n \t \r \xHH). */
void frit_fmt_string(FILE *out, const char *s, size_t n);
/* Lower-case op name into buf (>= 32). */
const char *frit_fmt_opname(frit_op op, char *buf, size_t bufsize);
/* Lower-case names of atomic ops ("add", "xchg") and axis types ("global"); NULL if out of range. */
const char *frit_fmt_atomic_name(int64_t a);
const char *frit_fmt_axis_name(int64_t a, char *buf, size_t bufsize);

/* How an op reads its i0 / i1: a plain number, an ALU op, an axis type or an atomic op. */
typedef enum frit_argfield { FRIT_AF_NUM, FRIT_AF_OP, FRIT_AF_AXIS, FRIT_AF_ATOMIC } frit_argfield;
frit_argfield frit_fmt_i0_kind(frit_op op);
frit_argfield frit_fmt_i1_kind(frit_op op);

#endif
