/* What a crash report reads on first use (crash.c), kept for the printers after it. */
#ifndef SPOOR_ANALYSIS_CRASH_INTERNAL_H
#define SPOOR_ANALYSIS_CRASH_INTERNAL_H

#include "spoor/analysis.h"

struct spoor_crash_lazy {
    bool main_read, threads_read, branches_read, calls_read;
    spoor_stack_usage main;
    const char *main_no_sp;
    spoor_threads *threads;
    spoor_crash_mtb branches;
    spoor_crash_ring calls;
};

#endif
