/* The target input every command that reads target memory takes, parsed the same way:
 * a DUMP argument, or --regs FILE and --mem ADDR:FILE (repeatable), or --gdb HOST:PORT (with
 * --mem images on top if given). */
#ifndef SPOOR_TARGET_INPUT_H
#define SPOOR_TARGET_INPUT_H

#include "cli.h"
#include "spoor/snapshot.h"

#define TARGET_INPUT_MAX_MEMS 64
enum {
    TARGET_OPT_REGS = 256,
    TARGET_OPT_MEM,
    TARGET_OPT_GDB,
    TARGET_OPT_FORMAT,
    TARGET_OPT_ELF_DIR = CLI_OPT_ELF_DIR
};

#define TARGET_INPUT_LONG_OPTIONS                                                                  \
    {"regs", required_argument, 0, TARGET_OPT_REGS},                                               \
        {"mem", required_argument, 0, TARGET_OPT_MEM},                                             \
        {"format", required_argument, 0, TARGET_OPT_FORMAT}, CLI_ELF_DIR_LONG_OPTION,              \
    {                                                                                              \
        "gdb", required_argument, 0, TARGET_OPT_GDB                                                \
    }

#define TARGET_INPUT_HELP                                                                          \
    "      --regs FILE    registers as a debugger saw them (JSON object of hex strings:\n"         \
    "                     r0..r12, sp, lr, pc, xpsr, msp, psp, control, exc_return, cfsr, ...)\n"  \
    "      --mem ADDR:FILE  raw memory contents at ADDR (repeatable), e.g. a RAM dump\n"           \
    "      --gdb HOST:PORT  a live target halted behind a GDB server (OpenOCD :3333, pyOCD,\n"     \
    "                     J-Link GDB server, QEMU -gdb): registers and memory read over the\n"     \
    "                     remote protocol\n"                                                       \
    "      --format FMT   the DUMP's format: auto (default: from its content), spoor,\n"           \
    "                     zephyr (a Zephyr coredump: binary, #CD: UART log or flash\n"             \
    "                     partition), elfcore (gdb's gcore of the target), probe-rs (a\n"          \
    "                     probe-rs .coredump)\n" CLI_ELF_DIR_HELP

typedef struct target_input {
    spoor_snapshot_source src;
    spoor_raw_memory mems[TARGET_INPUT_MAX_MEMS];
} target_input;

/* The case labels of the TARGET_OPT_* options in a command's getopt switch, every command that
 * takes a target input handing them to target_input_option:
 *     TARGET_INPUT_CASES:
 *         if ((rc = target_input_option("cmd", &in, opt, optarg)))
 *             return rc;
 *         break; */
#define TARGET_INPUT_CASES                                                                         \
    case TARGET_OPT_REGS:                                                                          \
    case TARGET_OPT_MEM:                                                                           \
    case TARGET_OPT_GDB:                                                                           \
    case TARGET_OPT_FORMAT:                                                                        \
    case TARGET_OPT_ELF_DIR

/* Takes a TARGET_OPT_* option; returns 0, or the exit status after printing the error. */
int target_input_option(const char *cmd, target_input *in, int opt, const char *arg);

/* The ELF of -e (path), or with --elf-dir the one whose build-id the DUMP among args (nargs)
 * has; NULL after a one-line error. */
spoor_elf *target_input_elf(const char *cmd, const char *path, char **args, int nargs);

/* Opens the snapshot from the options and the positional arguments (args, nargs: at most one
 * DUMP). NULL after printing a one-line error. */
spoor_snapshot *target_input_open(const char *cmd, target_input *in, char **args, int nargs,
                                  const spoor_elf *elf);

#endif
