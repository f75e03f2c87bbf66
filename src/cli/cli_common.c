#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "spoor/dump.h"
#include "spoor/elf.h"
#include "spoor/elf_dir.h"
#include "util/outbuf.h"

/* The one printer of every line spoor writes to stderr: "spoor CMD: " kind message. */
static void say(const char *cmd, const char *kind, const char *fmt, va_list ap)
{
    char line[8192]; /* one line: what a message quotes from a dump or an ELF is escaped */
    vsnprintf(line, sizeof line, fmt, ap);
    fprintf(stderr, "spoor %s: %s%s\n", cmd, kind, ob_text_clean(line));
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

static const char *elf_dir;

int cli_elf_dir_option(const char *cmd, const char *dir)
{
    (void)cmd;
    elf_dir = dir;
    return 0;
}

spoor_elf *cli_open_elf_for(const char *cmd, const char *path, const char *dump_path)
{
    if (!elf_dir)
        return cli_open_elf(cmd, path);
    if (path) {
        cli_error(cmd, "give -e FW.elf or --elf-dir DIR, not both");
        return NULL;
    }
    if (!dump_path) {
        cli_error(cmd, "--elf-dir finds the ELF by the build-id of a DUMP: give one DUMP");
        return NULL;
    }
    spoor_dump *dump = spoor_dump_load(dump_path);
    if (!dump) {
        cli_error(cmd, "%s", spoor_last_error());
        return NULL;
    }
    spoor_elf_dir *dir = dump->build_id ? spoor_elf_dir_scan(elf_dir) : NULL;
    const char *found = dir ? spoor_elf_dir_find(dir, dump->build_id, dump->build_id_len) : NULL;
    const char *const *warnings; /* folders skipped, one build-id in files that differ */
    for (size_t i = 0, n = dir ? spoor_elf_dir_warnings(dir, &warnings) : 0; i < n; i++)
        cli_warn_input(cmd, "%s", warnings[i]);
    spoor_elf *elf = NULL;
    char hex[130];
    if (!dump->build_id)
        cli_error(cmd, "%s: no build-id in the dump: give its ELF with -e", dump_path);
    else if (!dir)
        cli_error(cmd, "%s", spoor_last_error());
    else if (!found)
        cli_error(cmd, "%s: no ELF with build-id %s in %s (%zu indexed)", dump_path,
                  spoor_build_id_hex(dump->build_id, dump->build_id_len, hex), elf_dir,
                  spoor_elf_dir_count(dir));
    else
        elf = cli_open_elf(cmd, found);
    spoor_elf_dir_free(dir);
    spoor_dump_free(dump);
    return elf;
}
