/* The dump input shared by spoor crash and spoor gdbserver: a dump file, or raw debugger
 * output (--regs regs.json and repeated --mem ADDR:FILE). */
#ifndef SPOOR_DUMP_INPUT_H
#define SPOOR_DUMP_INPUT_H

#include "spoor/dump.h"

#define DUMP_INPUT_MAX_MEMS 64
enum { DUMP_OPT_REGS = 256, DUMP_OPT_MEM };

#define DUMP_INPUT_LONG_OPTIONS                                                                    \
    {"regs", required_argument, 0, DUMP_OPT_REGS},                                                 \
    {                                                                                              \
        "mem", required_argument, 0, DUMP_OPT_MEM                                                  \
    }

#define DUMP_INPUT_HELP                                                                            \
    "      --regs FILE    registers as a debugger saw them (JSON object of hex strings:\n"         \
    "                     r0..r12, sp, lr, pc, xpsr, msp, psp, control, exc_return, cfsr, ...)\n"  \
    "      --mem ADDR:FILE  raw memory contents at ADDR (repeatable), e.g. a RAM dump\n"

typedef struct dump_input {
    const char *regs;
    spoor_raw_memory mems[DUMP_INPUT_MAX_MEMS];
    size_t nmems;
} dump_input;

/* Takes a DUMP_OPT_* option; returns 0, or the exit status after printing the error. */
int dump_input_option(const char *cmd, dump_input *in, int opt, const char *arg);

/* Loads the dump from the raw options or from the one positional argument (args, nargs).
 * NULL after printing a one-line error. */
spoor_dump *dump_input_load(const char *cmd, const dump_input *in, char **args, int nargs);

#endif
