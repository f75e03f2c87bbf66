/* spoor's own .debug_line reader (src/lib/dwarf_line_reader.c, spoor_line_program_read from
 * libspoor) against libdw's dwarf_getsrclines and dwarf_getsrcfiles, the independent reference:
 * for every unit of every example ELF, the same file names in the same order and the same rows
 * (address, line, end of sequence, file), every row kept (no code ranges given). */
#include <dirent.h>
#include <dwarf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "elf/symbols_internal.h"

#include <cmocka.h>

#include "example_elves.h"

struct lrow {
    uint32_t addr;
    int line;
    bool end;
    const char *file;
    size_t seq;
};

static int cmp_lrow(const void *a, const void *b)
{
    const struct lrow *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    if (x->end != y->end)
        return x->end ? -1 : 1;
    if (x->end) { /* rows ending sequences at one address: order by content */
        if (x->line != y->line)
            return x->line < y->line ? -1 : 1;
        return strcmp(x->file ? x->file : "", y->file ? y->file : "");
    }
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static bool same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* The units' DIEs one after the other: *off is where to look next. */
static bool next_unit(Dwarf *dwarf, Dwarf_Off *off, Dwarf_Die *cu)
{
    Dwarf_Off next;
    size_t hsize;
    while (dwarf_nextcu(dwarf, *off, &next, &hsize, NULL, NULL, NULL) == 0) {
        Dwarf_Off here = *off;
        *off = next;
        if (dwarf_offdie(dwarf, here + hsize, cu))
            return true;
    }
    return false;
}

/* Compares one ELF; returns the units the reader read itself, fails on any difference. */
static size_t check_elf(const char *path, size_t *rows_compared)
{
    spoor_elf *e = spoor_elf_open(path);
    assert_non_null(e);
    Dwarf *dwarf = spoor_elf_libdw(e);
    assert_non_null(dwarf);
    Dwarf_Die cu;
    Dwarf_Off off = 0;
    struct unit_lines u = {0};
    struct name_block *names = NULL;
    const struct unit_claims every_row = {0}; /* no code ranges: every row kept (with 0) */
    struct dw_line *rows = NULL;
    size_t own = 0, cap_rows = 0;
    while (next_unit(dwarf, &off, &cu)) {
        Dwarf_Attribute a, d;
        Dwarf_Word sl;
        if (!dwarf_attr(&cu, DW_AT_stmt_list, &a) || dwarf_formudata(&a, &sl))
            continue;
        /* the reader hands units it cannot read to libdw; none of these needs that */
        size_t nrows = 0;
        if (spoor_line_program_read(e, &names, sl,
                                    dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &d)),
                                    &every_row, true, &u, &rows, &nrows, &cap_rows))
            fail_msg("%s: a unit went to the libdw fallback", path);
        own++;
        Dwarf_Lines *lines;
        size_t n;
        assert_int_equal(dwarf_getsrclines(&cu, &lines, &n), 0);
        Dwarf_Files *df;
        size_t nf;
        assert_int_equal(dwarf_getsrcfiles(&cu, &df, &nf), 0);
        assert_int_equal(nf, u.nfiles);
        for (size_t k = 0; k < nf; k++)
            if (!same(dwarf_filesrc(df, k, NULL, NULL), u.files[k]))
                fail_msg("%s: file %zu: libdw '%s', spoor '%s'", path, k,
                         dwarf_filesrc(df, k, NULL, NULL), u.files[k]);
        struct lrow *mine = calloc(nrows + 1, sizeof *mine);
        struct lrow *theirs = calloc(n + 1, sizeof *theirs);
        assert_true(mine && theirs);
        for (size_t k = 0; k < nrows; k++)
            mine[k] = (struct lrow){rows[k].addr, (int)rows[k].line, rows[k].end_sequence,
                                    rows[k].file, k};
        size_t nt = 0;
        for (size_t k = 0; k < n; k++) {
            Dwarf_Line *l = dwarf_onesrcline(lines, k);
            Dwarf_Addr ad;
            int ln;
            bool en;
            dwarf_lineaddr(l, &ad);
            dwarf_lineno(l, &ln);
            dwarf_lineendsequence(l, &en);
            if (ad <= UINT32_MAX)
                theirs[nt++] = (struct lrow){(uint32_t)ad, ln, en, dwarf_linesrc(l, NULL, NULL), k};
        }
        qsort(mine, nrows, sizeof *mine, cmp_lrow);
        qsort(theirs, nt, sizeof *theirs, cmp_lrow);
        assert_int_equal(nt, nrows);
        for (size_t k = 0; k < nt; k++)
            if (mine[k].addr != theirs[k].addr || mine[k].line != theirs[k].line ||
                mine[k].end != theirs[k].end || !same(mine[k].file, theirs[k].file))
                fail_msg("%s: row %zu: libdw 0x%x %d %d %s, spoor 0x%x %d %d %s", path, k,
                         theirs[k].addr, theirs[k].line, theirs[k].end, theirs[k].file,
                         mine[k].addr, mine[k].line, mine[k].end, mine[k].file);
        *rows_compared += nt;
        free(mine);
        free(theirs);
    }
    spoor_unit_lines_free(&u);
    free(rows);
    for (struct name_block *b = names, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    spoor_elf_close(e);
    return own;
}

static void test_every_example_elf(void **state)
{
    (void)state;
    DIR *dir = opendir(SPOOR_FIRMWARE_DIR "/examples");
    assert_non_null(dir);
    struct dirent *ent;
    size_t elves = 0, units = 0, rows = 0;
    char path[1024];
    while ((ent = next_example(dir, NULL, path))) {
        size_t own = check_elf(path, &rows);
        assert_true(own > 0); /* the reader, not the fallback, read this ELF */
        units += own;
        elves++;
    }
    closedir(dir);
    print_message("%zu ELFs, %zu units read by spoor, %zu rows equal to libdw's\n", elves, units,
                  rows);
    assert_true(elves >= 13);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_every_example_elf)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
