/* Tables per compile unit, made on demand, against the tables of all units merged: on every
 * example ELF (and on copies without .debug_aranges, where units are found by their DIEs'
 * ranges), a fresh spoor_elf per address, which builds only the unit the address falls into,
 * answers spoor_elf_symbolize and spoor_elf_function exactly as one spoor_elf whose tables were
 * all built first (the merged table, the one tests/e2e/test_sym_addr2line.py checks against
 * arm-none-eabi-addr2line). The addresses: the starts, ends and middles of the code each unit
 * claims and the addresses around them (outside any unit: gaps, the vector table, past the
 * end), every function symbol's start, a grid over the code, and data. And the promise of
 * spoor_elf_answer_id on every byte of their code. And each unit's scopes and ranges against
 * libdw's count of its function and inlined-instance DIEs. */
#include <dirent.h>
#include <dwarf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "example_elves.h"

#include "elf/elf_sections.h"
#include "elf/symbols_internal.h"

#define MAX_FRAMES 16
#define GRID 160 /* addresses spread evenly over the code, per ELF */

struct counts {
    size_t addresses, inlined, outside, lazy, units_built;
};

static bool same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

static bool in_any_unit(const struct symbol_tables *t, uint32_t addr)
{
    for (size_t i = 0; i < t->nunits; i++)
        for (size_t k = 0; k < t->units[i].claims.n; k++)
            if (addr >= t->units[i].claims.ranges[k][0] && addr < t->units[i].claims.ranges[k][1])
                return true;
    return false;
}

static void check_address(const char *path, const spoor_elf *ref, uint32_t addr,
                          bool function_first, struct counts *c)
{
    spoor_location want[MAX_FRAMES], got[MAX_FRAMES];
    const char *want_name = NULL, *got_name = NULL;
    uint32_t want_start = 0, want_size = 0, got_start = 0, got_size = 0;
    size_t nw = spoor_elf_symbolize(ref, addr, want, MAX_FRAMES);
    bool fw = spoor_elf_function(ref, addr, &want_name, &want_start, &want_size);

    spoor_elf *e = spoor_elf_open(path);
    assert_non_null(e);
    size_t ng = 0;
    bool fg;
    if (function_first) {
        fg = spoor_elf_function(e, addr, &got_name, &got_start, &got_size);
        ng = spoor_elf_symbolize(e, addr, got, MAX_FRAMES);
    } else {
        ng = spoor_elf_symbolize(e, addr, got, MAX_FRAMES);
        fg = spoor_elf_function(e, addr, &got_name, &got_start, &got_size);
    }
    const struct symbol_tables *t = e->symbolizer;
    assert_non_null(t);
    if (!t->merged) {
        size_t tables = 0;
        for (size_t i = 0; i < t->nunits; i++)
            tables += t->units[i].table != NULL;
        assert_true(tables <= 1); /* the one unit the address falls into, or none */
        c->lazy++;
        c->units_built += tables;
    }
    if (nw != ng)
        fail_msg("%s 0x%x: %zu frames from the merged table, %zu from the unit's", path, addr, nw,
                 ng);
    for (size_t i = 0; i < nw; i++) {
        const spoor_location *w = &want[i], *g = &got[i];
        if (!same(w->function, g->function) || w->has_offset != g->has_offset ||
            w->offset != g->offset || !same(w->file, g->file) || w->line != g->line)
            fail_msg("%s 0x%x frame %zu: merged %s+0x%x %s:%u, unit %s+0x%x %s:%u", path, addr, i,
                     w->function, w->offset, w->file, w->line, g->function, g->offset, g->file,
                     g->line);
    }
    if (fw != fg || !same(want_name, got_name) || want_start != got_start || want_size != got_size)
        fail_msg("%s 0x%x: function merged %d %s 0x%x+%u, unit %d %s 0x%x+%u", path, addr, fw,
                 want_name, want_start, want_size, fg, got_name, got_start, got_size);
    spoor_elf_close(e);
    c->addresses++;
    c->inlined += nw > 1;
    c->outside += !in_any_unit(ref->symbolizer, addr);
}

/* Checks one ELF; returns the counts. */
static struct counts check_elf(const char *path)
{
    struct counts c = {0};
    spoor_elf *ref = spoor_elf_open(path);
    assert_non_null(ref);
    spoor_symbols_build_all(ref);
    const struct symbol_tables *t = ref->symbolizer;
    assert_non_null(t);
    assert_non_null(t->merged);
    assert_false(t->merged_only); /* the units can be told apart: lookups are per unit */
    uint32_t lo = UINT32_MAX, hi = 0;
    size_t n = 0;
    for (size_t i = 0; i < t->nunits; i++) {
        const struct unit_claims *cl = &t->units[i].claims;
        for (size_t k = 0; k < cl->n; k++) {
            uint32_t a = cl->ranges[k][0], b = cl->ranges[k][1];
            const uint32_t around[] = {a - 2, a, a + 2, a + (b - a) / 2, b - 2, b, b + 2};
            for (size_t j = 0; j < sizeof around / sizeof *around; j++)
                check_address(path, ref, around[j], n++ % 2, &c);
            lo = a < lo ? a : lo;
            hi = b > hi ? b : hi;
        }
    }
    for (size_t i = 0; i < ref->nsymbols; i++)
        check_address(path, ref, ref->symbols[i].start, n++ % 2, &c);
    for (size_t i = 0; i <= GRID && lo < hi; i++)
        check_address(path, ref, lo + (uint32_t)((uint64_t)(hi - lo + 0x100) * i / GRID), n++ % 2,
                      &c);
    spoor_elf_range r[32];
    size_t nr = spoor_elf_ranges(ref, r, 32);
    for (size_t i = 0; i < nr && i < 32; i++)
        check_address(path, ref, r[i].addr, n++ % 2, &c);
    const uint32_t odd[] = {0, 0x10, 0xfffffffe};
    for (size_t j = 0; j < sizeof odd / sizeof *odd; j++)
        check_address(path, ref, odd[j], n++ % 2, &c);
    spoor_elf_close(ref);
    return c;
}

/* spoor_elf_answer_id's promise, on every byte of the code of every example ELF (odd addresses
 * too: the Thumb bit is ignored): addresses with the same id get the same frames but for the
 * first frame's offset, which is the address minus the base the id came with, and its line, the
 * line the id came with (0 without a file). */
struct id_addr {
    uint64_t id[2];
    uint32_t addr, base;
    unsigned line;
};

static int cmp_id_addr(const void *a, const void *b)
{
    const struct id_addr *x = a, *y = b;
    for (int i = 0; i < 2; i++)
        if (x->id[i] != y->id[i])
            return x->id[i] < y->id[i] ? -1 : 1;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static size_t check_answer_ids(const char *path, size_t *nids)
{
    spoor_elf *e = spoor_elf_open(path);
    assert_non_null(e);
    uint64_t id[2];
    uint32_t base;
    unsigned line;
    assert_false(spoor_elf_answer_id(e, 0x100, id, &base, &line)); /* no tables of all units yet */
    spoor_symbols_build_all(e);
    struct id_addr *all = NULL;
    size_t n = 0, cap = 0;
    spoor_elf_range r[32];
    size_t nr = spoor_elf_ranges(e, r, 32);
    for (size_t i = 0; i < nr && i < 32; i++)
        for (uint32_t a = r[i].addr; r[i].code && a - r[i].addr < r[i].size; a++) {
            if (n == cap) {
                cap = cap ? 2 * cap : 4096;
                all = realloc(all, cap * sizeof *all);
                assert_non_null(all);
            }
            assert_true(spoor_elf_answer_id(e, a, all[n].id, &all[n].base, &all[n].line));
            all[n++].addr = a;
        }
    qsort(all, n, sizeof *all, cmp_id_addr);
    *nids = 0;
    spoor_location first[MAX_FRAMES], f[MAX_FRAMES];
    size_t nfirst = 0;
    for (size_t i = 0; i < n; i++) {
        const struct id_addr *x = &all[i];
        size_t nf = spoor_elf_symbolize(e, x->addr, f, MAX_FRAMES);
        if (f[0].has_offset && f[0].offset != (x->addr & ~1u) - x->base)
            fail_msg("%s 0x%x: offset 0x%x, base 0x%x", path, x->addr, f[0].offset, x->base);
        if (f[0].line != x->line || (!f[0].file && x->line))
            fail_msg("%s 0x%x: line %u, its id's %u", path, x->addr, f[0].line, x->line);
        if (!i || memcmp(x->id, all[i - 1].id, sizeof x->id)) { /* a new id */
            memcpy(first, f, sizeof f);
            nfirst = nf;
            ++*nids;
            continue;
        }
        if (nf != nfirst)
            fail_msg("%s 0x%x: %zu frames, 0x%x of the same id %zu", path, x->addr, nf,
                     all[i - 1].addr, nfirst);
        for (size_t k = 0; k < nf; k++)
            if (!same(f[k].function, first[k].function) || f[k].has_offset != first[k].has_offset ||
                (k && f[k].offset != first[k].offset) || !same(f[k].file, first[k].file) ||
                (k && f[k].line != first[k].line))
                fail_msg("%s 0x%x frame %zu: %s %s:%u, %s %s:%u at 0x%x of the same id", path,
                         x->addr, k, f[k].function, f[k].file, f[k].line, first[k].function,
                         first[k].file, first[k].line, all[i - 1].addr);
    }
    free(all);
    spoor_elf_close(e);
    return n;
}

static void check_dir(const char *suffix_filter, bool strip_aranges)
{
    DIR *dir = opendir(SPOOR_FIRMWARE_DIR "/examples");
    assert_non_null(dir);
    char tmp[] = "/tmp/spoor-symbol-units-XXXXXX";
    assert_non_null(mkdtemp(tmp));
    struct dirent *ent;
    struct counts all = {0};
    size_t elves = 0;
    char path[1024], cmd[2200];
    while ((ent = next_example(dir, suffix_filter, path))) {
        if (strip_aranges) { /* units found by their DIEs' ranges */
            char copy[1024];
            snprintf(copy, sizeof copy, "%s/%s", tmp, ent->d_name);
            snprintf(cmd, sizeof cmd, "arm-none-eabi-objcopy --remove-section=.debug_aranges %s %s",
                     path, copy);
            assert_int_equal(system(cmd), 0);
            snprintf(path, sizeof path, "%s", copy);
        }
        if (!strip_aranges) {
            size_t nids, n = check_answer_ids(path, &nids);
            print_message("%s: %zu code addresses, %zu answer ids\n", ent->d_name, n, nids);
            assert_true(n > 0 && nids > 1 && nids < n);
        }
        struct counts c = check_elf(path);
        print_message("%s%s: %zu addresses (%zu in inlined code, %zu outside any unit), %zu "
                      "answered by one unit's table (%zu unit tables built)\n",
                      ent->d_name, strip_aranges ? " without .debug_aranges" : "", c.addresses,
                      c.inlined, c.outside, c.lazy, c.units_built);
        assert_true(c.outside > 0);
        if (!strncmp(ent->d_name, "calls", 5) || !strncmp(ent->d_name, "printf", 6))
            assert_true(c.inlined > 0);
        /* one unit's table answered every lookup (the merged table would where a unit has no
         * line row at the start of its code, which none of these has) */
        assert_int_equal(c.lazy, c.addresses);
        all.addresses += c.addresses;
        all.inlined += c.inlined;
        all.outside += c.outside;
        elves++;
    }
    closedir(dir);
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    assert_int_equal(system(cmd), 0);
    print_message("%zu ELFs, %zu addresses (%zu in inlined code, %zu outside any unit): equal\n",
                  elves, all.addresses, all.inlined, all.outside);
    assert_true(elves >= 1);
}

static void test_every_example_elf(void **state)
{
    (void)state;
    check_dir(NULL, false);
}

static void test_without_aranges(void **state)
{
    (void)state;
    check_dir("-m", true);
}

/* The code ranges of the function and inlined-instance DIEs under die, counted through libdw
 * (empty ones and those at address 0, code the linker discarded, left out, and what lies under a
 * function without code), as the scopes of a unit are made of them: every such DIE with code is
 * one scope, each of its ranges one range. */
static void count_die_ranges(Dwarf_Die *die, bool in_function, size_t *scopes, size_t *ranges)
{
    Dwarf_Die child;
    if (dwarf_child(die, &child) != 0)
        return;
    do {
        int tag = dwarf_tag(&child);
        bool scope = tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
        bool type =
            tag == DW_TAG_class_type || tag == DW_TAG_structure_type || tag == DW_TAG_union_type;
        if (scope) {
            Dwarf_Addr base, lo, hi;
            ptrdiff_t off = 0;
            size_t n = 0;
            while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0)
                n += lo < hi && lo != 0;
            *ranges += n;
            *scopes += n > 0;
            if (!n && (dwarf_hasattr(&child, DW_AT_declaration) ||
                       dwarf_hasattr(&child, DW_AT_low_pc) || dwarf_hasattr(&child, DW_AT_ranges)))
                continue; /* a declaration, or code the linker discarded: nothing under it */
        }
        if (scope || tag == DW_TAG_lexical_block || tag == DW_TAG_namespace ||
            (type && in_function))
            count_die_ranges(&child, in_function || scope || tag == DW_TAG_lexical_block, scopes,
                             ranges);
    } while (dwarf_siblingof(&child, &child) == 0);
}

/* Every function and inlined instance is one scope of its unit, taken once: a unit's scopes and
 * ranges as spoor builds them against libdw's count of its DIEs. (A unit whose fourth scope was
 * read without libdw was once walked again through libdw, its scopes and ranges added twice.) */
static void test_scopes_taken_once(void **state)
{
    (void)state;
    DIR *dir = opendir(SPOOR_FIRMWARE_DIR "/examples");
    assert_non_null(dir);
    struct dirent *ent;
    size_t elves = 0, units = 0, scopes = 0;
    char path[1024];
    while ((ent = next_example(dir, NULL, path))) {
        spoor_elf *e = spoor_elf_open(path);
        assert_non_null(e);
        struct symbol_tables *t = spoor_symbol_tables(e);
        assert_non_null(t);
        Dwarf *dw = spoor_elf_libdw(e);
        assert_non_null(dw);
        for (size_t i = 0; i < t->nunits; i++) {
            const struct dw_unit *u = &t->units[i];
            Dwarf_Die cu;
            size_t want_scopes = 0, want_ranges = 0;
            assert_int_equal(spoor_dwarf_unit_build(e, t, i), 0);
            assert_non_null(dwarf_offdie(dw, u->die, &cu));
            count_die_ranges(&cu, false, &want_scopes, &want_ranges);
            size_t got_scopes = 0; /* the unit's scopes: the ones its ranges name */
            for (size_t k = 0; k < u->nranges; k++)
                got_scopes += k == 0 || u->ranges[k].scope != u->ranges[k - 1].scope;
            if (got_scopes != want_scopes || u->nranges != want_ranges)
                fail_msg("%s unit at 0x%llx (%s): %zu scopes with %zu ranges, libdw's DIEs %zu "
                         "with %zu",
                         ent->d_name, (unsigned long long)u->header, dwarf_diename(&cu), got_scopes,
                         u->nranges, want_scopes, want_ranges);
            units++;
            scopes += got_scopes;
        }
        spoor_elf_close(e);
        elves++;
    }
    closedir(dir);
    print_message("%zu ELFs, %zu units, %zu scopes: each DIE taken once\n", elves, units, scopes);
    assert_true(elves >= 1 && scopes > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_every_example_elf),
                                       cmocka_unit_test(test_without_aranges),
                                       cmocka_unit_test(test_scopes_taken_once)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
