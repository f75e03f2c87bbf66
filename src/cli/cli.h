/* Shared helpers of the spoor subcommands. Exit codes: 0 success, 1 the program found a
 * problem it reports (e.g. a test failed), 2 usage or input error, 3 out of memory.
 *
 * Every line on stderr goes through one printer, "spoor CMD: " then:
 *   cli_error       the command cannot go on (the caller returns its exit code)
 *   cli_warn_input  "WARNING: " the answers may be wrong (a damaged ELF, a dump of another build)
 *   cli_warn        "warning: " something is missing or degraded; what is shown is right
 *   cli_note        what happened (a reconnect, a refused client, statistics) */
#ifndef SPOOR_CLI_H
#define SPOOR_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "spoor/error.h"
#include "util/number.h"

#define SPOOR_EXIT_OK 0
#define SPOOR_EXIT_FAIL 1
#define SPOOR_EXIT_USAGE 2
#define SPOOR_EXIT_NOMEM 3

#define SPOOR_COMMAND(name, summary) int cmd_##name(int argc, char **argv);
#include "commands.def"
#undef SPOOR_COMMAND

/* Prints "spoor CMD: message" on stderr; returns SPOOR_EXIT_USAGE for `return cli_error(...)`. */
int cli_error(const char *cmd, const char *fmt, ...) SPOOR_PRINTF(2, 3);
/* spoor_last_error() as cli_error does; SPOOR_EXIT_NOMEM when the last status is out of memory. */
int cli_fail(const char *cmd);
/* "spoor CMD: out of memory"; returns SPOOR_EXIT_NOMEM. */
int cli_out_of_memory(const char *cmd);
void cli_warn_input(const char *cmd, const char *fmt, ...) SPOOR_PRINTF(2, 3);
void cli_warn(const char *cmd, const char *fmt, ...) SPOOR_PRINTF(2, 3);
void cli_note(const char *cmd, const char *fmt, ...) SPOOR_PRINTF(2, 3);

/* The error for an option getopt_long did not accept (call from its default case). */
int cli_bad_option(const char *cmd, char **argv);

/* Opens the firmware ELF named by -e; NULL after a one-line error (none given, unreadable,
 * not a 32-bit ARM ELF, no symbols at all, ...). */
struct spoor_elf *cli_open_elf(const char *cmd, const char *path);

/* --elf-dir DIR, taken by every command that takes -e: the ELF is the one under DIR whose
 * build-id the DUMP has (spoor/elf_dir.h). */
enum { CLI_OPT_ELF_DIR = 280 };
#define CLI_ELF_DIR_LONG_OPTION                                                                    \
    {                                                                                              \
        "elf-dir", required_argument, 0, CLI_OPT_ELF_DIR                                           \
    }
#define CLI_ELF_DIR_HELP                                                                           \
    "      --elf-dir DIR  instead of -e: the ELF under DIR (read recursively, .build-id trees\n"   \
    "                     too) whose GNU build-id the DUMP has\n"
/* Takes --elf-dir DIR (for cli_open_elf_for); returns 0 or the exit status after an error. */
int cli_elf_dir_option(const char *cmd, const char *dir);
/* cli_open_elf(cmd, path), or with --elf-dir the ELF of the dump at dump_path by its
 * build-id: errors when both -e and --elf-dir, or neither, are given, when there is no DUMP,
 * when the dump has no build-id or no ELF under DIR has it. */
struct spoor_elf *cli_open_elf_for(const char *cmd, const char *path, const char *dump_path);

struct spoor_dump;
/* Prints "spoor CMD: WARNING: build-id mismatch: ..." on stderr when dump (NULL: none, as for a
 * live target) comes from another build than the ELF (spoor_dump_build_id_warning). */
void cli_warn_build_id(const char *cmd, const struct spoor_dump *dump, const struct spoor_elf *elf);

/* A command-line number (0x hex or decimal, util/number.h) into 32 bits. */
static inline bool cli_parse_u32(const char *s, uint32_t *out)
{
    return spoor_parse_u32z(s, SPOOR_NUM_AUTO, out);
}

#endif
