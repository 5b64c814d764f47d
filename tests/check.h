/* Minimal test harness shared by the C test programs: CHECK macros and a failure count. */
#ifndef FRIT_TEST_CHECK_H
#define FRIT_TEST_CHECK_H
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int check_failures_;
static int check_count_;

#define CHECK(cond)                                                                          \
  do {                                                                                       \
    check_count_++;                                                                          \
    if (!(cond)) {                                                                           \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
      check_failures_++;                                                                     \
    }                                                                                        \
  } while (0)

#define CHECK_EQ_INT(a, b)                                                                   \
  do {                                                                                       \
    long long va_ = (long long)(a), vb_ = (long long)(b);                                    \
    check_count_++;                                                                          \
    if (va_ != vb_) {                                                                        \
      fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld vs %lld)\n", __FILE__, __LINE__, \
              #a, #b, va_, vb_);                                                             \
      check_failures_++;                                                                     \
    }                                                                                        \
  } while (0)

#define CHECK_EQ_STR(a, b)                                                                   \
  do {                                                                                       \
    const char *sa_ = (a), *sb_ = (b);                                                       \
    check_count_++;                                                                          \
    if (!sa_ || !sb_ || strcmp(sa_, sb_) != 0) {                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s == %s (\"%s\" vs \"%s\")\n", __FILE__,       \
              __LINE__, #a, #b, sa_ ? sa_ : "(null)", sb_ ? sb_ : "(null)");                 \
      check_failures_++;                                                                     \
    }                                                                                        \
  } while (0)

/* Ends main(): prints a summary and gives the exit status. */
#define CHECK_DONE()                                                                         \
  do {                                                                                       \
    fprintf(stderr, "%s: %d checks, %d failed\n", __FILE__, check_count_, check_failures_); \
    return check_failures_ ? 1 : 0;                                                          \
  } while (0)
#endif
