/* spoor crash: stack usage (spoor/stack_usage.h), one text line per stack: the main stack in the
 * report, each thread's with --threads. docs/crash.md. */
#ifndef SPOOR_CRASH_STACKS_H
#define SPOOR_CRASH_STACKS_H

#include "spoor/analysis.h"
#include "spoor/stack_usage.h"
#include "util/outbuf.h"
#include "util/record_json.h"

/* "main stack: ..." after an empty line. */
void crash_stacks_main_text(outbuf *o, spoor_crash *c);

/* One stack's line: INDENT WHAT: bounds, use, peak and overflow (no_sp: why there is no SP,
 * NULL for "no SP"); spoor crash --threads' "    stack: ..." of each thread. */
void crash_stacks_line_text(outbuf *o, const char *indent, const char *what,
                            const spoor_stack_usage *u, const char *no_sp);

#endif
