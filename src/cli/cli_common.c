#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "spoor/dump.h"
#include "spoor/elf.h"

/* The one printer of every line spoor writes to stderr: "spoor CMD: " kind message. */
static void say(const char *cmd, const char *kind, const char *fmt, va_list ap)
{
    fprintf(stderr, "spoor %s: %s", cmd, kind);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

int cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(cmd, "", fmt, ap);
    va_end(ap);
    return SPOOR_EXIT_USAGE;
}

int cli_fail(const char *cmd)
{
    if (spoor_last_status() == SPOOR_ERR_NOMEM)
        return cli_out_of_memory(cmd);
    return cli_error(cmd, "%s", spoor_last_error());
}

int cli_out_of_memory(const char *cmd)
{
    cli_error(cmd, "out of memory");
    return SPOOR_EXIT_NOMEM;
}

void cli_note(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(cmd, "", fmt, ap);
    va_end(ap);
}

void cli_warn(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(cmd, "warning: ", fmt, ap);
    va_end(ap);
}

void cli_warn_input(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(cmd, "WARNING: ", fmt, ap);
    va_end(ap);
}

int cli_bad_option(const char *cmd, char **argv)
{
    return cli_error(cmd, "unknown or incomplete option '%s' (see spoor %s --help)",
                     argv[optind - 1], cmd);
}

void cli_warn_build_id(const char *cmd, const spoor_dump *dump, const spoor_elf *elf)
{
    char warning[400];
    if (spoor_dump_build_id_warning(dump, elf, warning, sizeof warning))
        cli_warn_input(cmd, "%s", warning);
}

spoor_elf *cli_open_elf(const char *cmd, const char *path)
{
    if (!path) {
        cli_error(cmd, "no ELF given (-e FW.elf)");
        return NULL;
    }
    spoor_elf *elf = spoor_elf_open(path);
    if (!elf) {
        cli_error(cmd, "%s", spoor_last_error());
        return NULL;
    }
    if (!spoor_elf_has_symbols(elf)) { /* every command names code: nothing to name it with */
        cli_error(cmd, "%s: no symbols (no symbol table and no DWARF)", path);
        spoor_elf_close(elf);
        return NULL;
    }
    return elf;
}
