/* spoor crash --threads: every thread the RTOS knows (spoor_crash_threads), with its state, stack
 * use and backtrace, as text. */
#ifndef SPOOR_CRASH_THREADS_H
#define SPOOR_CRASH_THREADS_H

#include "spoor/analysis.h"
#include "util/outbuf.h"

/* The threads section of the text report. */
void crash_threads_text(outbuf *o, spoor_crash *c);

#endif
