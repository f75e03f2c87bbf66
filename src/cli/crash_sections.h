/* spoor crash: what else the input holds besides the registers and the stack, after the
 * backtrace: the last branches the MTB recorded (spoor_crash_branches) and the last calls of the
 * call recorder's ring (spoor_crash_calls), each as spoor mtb and spoor calls print them, newest
 * N, oldest first, with what was lost. Nothing when the input has neither. docs/crash.md. */
#ifndef SPOOR_CRASH_SECTIONS_H
#define SPOOR_CRASH_SECTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "spoor/analysis.h"
#include "util/outbuf.h"

enum { CRASH_OPT_BRANCHES = 320, CRASH_OPT_CALLS, CRASH_OPT_MTB_REGS };
#define CRASH_SECTIONS_LONG_OPTIONS                                                                \
    {"branches", required_argument, 0, CRASH_OPT_BRANCHES},                                        \
        {"calls", required_argument, 0, CRASH_OPT_CALLS},                                          \
    {                                                                                              \
        "mtb-regs", required_argument, 0, CRASH_OPT_MTB_REGS                                       \
    }
#define CRASH_SECTIONS_HELP                                                                        \
    "      --branches N   the newest N branches of the MTB (default 16; 0: none)\n"                \
    "      --calls N      the newest N records of the call ring (default 16; 0: none)\n"           \
    "      --mtb-regs ADDR  the MTB register block, read from target memory when the input\n"      \
    "                     is no dump with an MTB record (default 0xE0043000, the MTB-M33's;\n"     \
    "                     an MTB-M0+ block is where the vendor put it)\n"

/* Takes one of the flags above into the report's options; returns 0, or the exit status after a
 * one-line error ("spoor CMD: --calls: ..."). */
int crash_sections_option(const char *cmd, spoor_crash_options *cfg, int opt, const char *arg);

/* The sections of the text report (each after an empty line). */
void crash_sections_text(outbuf *o, spoor_crash *c);

#endif
