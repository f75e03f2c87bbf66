#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "spoor/elf.h"

int cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "spoor %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return SPOOR_EXIT_USAGE;
}

int cli_bad_option(const char *cmd, char **argv)
{
    return cli_error(cmd, "unknown or incomplete option '%s' (see spoor %s --help)",
                     argv[optind - 1], cmd);
}

spoor_elf *cli_open_elf(const char *cmd, const char *path)
{
    if (!path) {
        cli_error(cmd, "no ELF given (-e FW.elf)");
        return NULL;
    }
    spoor_elf *elf = spoor_elf_open(path);
    if (!elf)
        cli_error(cmd, "%s", spoor_last_error());
    return elf;
}

static int digit_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return 99;
}

bool cli_parse_u32n(const char *s, size_t n, uint32_t *out)
{
    unsigned base = 10;
    if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
        n -= 2;
    }
    if (!n || n > (base == 16 ? 8u : 10u) + 32) /* leading zeros are fine, endless ones not */
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        int d = digit_value(s[i]);
        if (d >= (int)base)
            return false;
        v = v * base + (unsigned)d;
        if (v > UINT32_MAX)
            return false;
    }
    *out = (uint32_t)v;
    return true;
}

bool cli_parse_u32(const char *s, uint32_t *out)
{
    return s && cli_parse_u32n(s, strlen(s), out);
}
