/* The profiler's internal hooks (profile.c): the runtime and the pipeline report kernel launches
 * and compile passes while a profile records. */
#ifndef FRIT_RUNTIME_PROFILE_H
#define FRIT_RUNTIME_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "frit.h"

int64_t frit_rt_now_ns(void);
/* A profile is recording (one relaxed atomic load: the runtime's fast path asks per launch). */
bool frit_rt_profiling(void);
/* An event of category cat ("compile") from t0 to t1 (frit_rt_now_ns). */
void frit_rt_prof_event(const char *name, const char *cat, int64_t t0, int64_t t1);
/* Kernel k of p ran from t0 to t1 with p's current bindings. */
void frit_rt_prof_kernel(frit_program *p, int k, int64_t t0, int64_t t1);
/* Reads $FRIT_PROFILE once (a value ending in .json starts a profile saved there at exit);
 * true when it asks for the stderr table of program.c. */
bool frit_rt_profile_env(void);

#endif
