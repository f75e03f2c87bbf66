/* spoor crash: what else the input holds besides the registers and the stack, after the
 * backtrace: the last branches the MTB recorded (spoor_mtb_from_dump / spoor_mtb_read) and the
 * last calls of the call recorder's ring (spoor_calls_read), each as spoor mtb and spoor calls
 * print them, newest N, oldest first, with what was lost. Nothing when the input has neither.
 * docs/crash.md. */
#ifndef SPOOR_CRASH_SECTIONS_H
#define SPOOR_CRASH_SECTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "json_out.h"
#include "outbuf.h"
#include "spoor/elf.h"
#include "spoor/mtb_decode.h"
#include "spoor/snapshot.h"

/* What the sections show, from --branches N, --calls N and --mtb-regs ADDR (spoor crash and
 * spoor report take the same flags). */
typedef struct crash_sections_config {
    unsigned nbranches, ncalls; /* the newest N shown (0: that section left out) */
    uint32_t mtb_regs;          /* the MTB register block in target memory */
    bool mtb_regs_given;        /* --mtb-regs: an MTB is there; say why when it cannot be read */
} crash_sections_config;

#define CRASH_SECTIONS_DEFAULTS                                                                    \
    {                                                                                              \
        16, 16, SPOOR_MTB_M33_REGISTERS, false                                                     \
    }

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

/* Takes one of the flags above into cfg; returns 0, or the exit status after a one-line error
 * ("spoor CMD: --calls: ..."). */
int crash_sections_option(const char *cmd, crash_sections_config *cfg, int opt, const char *arg);

/* The sections of the text report (each after an empty line). */
void crash_sections_text(outbuf *o, const spoor_elf *elf, spoor_snapshot *snap,
                         const crash_sections_config *cfg);

/* The members "branches", "branches_info", "calls", "calls_info" of the JSON report, each pair
 * only when the input has that trace. */
void crash_sections_json(json_out *j, const spoor_elf *elf, spoor_snapshot *snap,
                         const crash_sections_config *cfg);

#endif
