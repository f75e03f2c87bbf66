/* What could not be read in a firmware ELF: one line per part spoor skipped (a section, a DWARF
 * unit, a line table), kept with the spoor_elf for the caller to show. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf_internal.h"

/* More lines than this name one file's problems no better: the rest is summed up in one. */
#define MAX_WARNINGS 100

static void add(spoor_elf *e, const char *line)
{
    struct elf_warnings *w = &e->warnings;
    for (size_t i = 0; i < w->n; i++)
        if (!strcmp(w->lines[i], line))
            return;
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 8;
        char **lines = realloc(w->lines, cap * sizeof *lines);
        if (!lines)
            return;
        w->lines = lines;
        w->cap = cap;
    }
    char *copy = strdup(line);
    if (copy)
        w->lines[w->n++] = copy;
}

void spoor_elf_warn(const spoor_elf *ce, const char *fmt, ...)
{
    spoor_elf *e = (spoor_elf *)ce; /* warnings are found while tables are built on first use */
    if (e->warnings.full)
        return;
    char line[512];
    int n = snprintf(line, sizeof line, "%s: ", e->path);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    if (e->warnings.n + 1 == MAX_WARNINGS) {
        snprintf(line, sizeof line, "%s: more parts could not be read (not listed)", e->path);
        e->warnings.full = true;
    }
    add(e, line);
}

void spoor_elf_warnings_free(spoor_elf *e)
{
    for (size_t i = 0; i < e->warnings.n; i++)
        free(e->warnings.lines[i]);
    free(e->warnings.lines);
    memset(&e->warnings, 0, sizeof e->warnings);
}

size_t spoor_elf_warnings(const spoor_elf *e, const char *const **list)
{
    if (list)
        *list = (const char *const *)e->warnings.lines;
    return e->warnings.n;
}
