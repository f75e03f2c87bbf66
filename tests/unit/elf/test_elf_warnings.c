/* What spoor cannot read in an ELF, on copies of example ELFs with one field patched:
 *   - a line program with line_range 0 (the first unit of calls-m3.elf): the reader calls it
 *     malformed, the lookup warns once (naming .debug_line and the unit's offset), drops that
 *     unit's lines but keeps its functions, marks answers in that unit partial and leaves the
 *     answers of the other units as on the clean ELF;
 *   - initialised data typed SHT_REL with a size that is no relocation multiple (RIOT's
 *     .relocate): the file opens, nothing is warned, its bytes are the clean file's;
 *   - a symbol table whose sh_link is no section: refused, the message names the section;
 *   - every example ELF as built: no warning, no answer partial.
 * The expectations come from the DWARF and ELF specifications (line_range divides every special
 * opcode; sh_link names a section), not from spoor's output. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "elf/symbols_internal.h"

#define EXAMPLES SPOOR_FIRMWARE_DIR "/examples/"

/* A copy of path with bytes [off, off + len) replaced, in a temporary file (name into out). */
static void patched_copy(const char *path, size_t off, const void *bytes, size_t len, char *out)
{
    FILE *in = fopen(path, "rb");
    assert_non_null(in);
    static uint8_t buf[4 << 20];
    size_t n = fread(buf, 1, sizeof buf, in);
    fclose(in);
    assert_true(n < sizeof buf && off + len <= n);
    memcpy(buf + off, bytes, len);
    strcpy(out, "/tmp/spoor-warn-XXXXXX");
    int fd = mkstemp(out);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, buf, n), (ssize_t)n);
    close(fd);
}

/* The file offset of a section's contents. */
static size_t file_offset(const spoor_elf *e, const char *name)
{
    const struct elf_section *s = spoor_elf_debug_section(e, name);
    size_t size;
    const char *raw = elf_rawfile(spoor_elf_libelf(e), &size);
    assert_non_null(s);
    return (size_t)((const char *)s->data - raw);
}

/* An address in the first code range unit u claims, and in no other unit. */
static uint32_t address_in_unit(const spoor_elf *e, size_t u)
{
    struct symbol_tables *t = spoor_symbol_tables(e);
    assert_non_null(t);
    assert_true(u < t->nunits && t->units[u].claims.n > 0);
    return t->units[u].claims.ranges[0][0] + 2;
}

static void test_line_range_zero(void **state)
{
    (void)state;
    const char *path = EXAMPLES "calls-m3.elf";
    spoor_elf *clean = spoor_elf_open(path);
    assert_non_null(clean);
    size_t line = file_offset(clean, ".debug_line");
    const uint8_t *p = spoor_elf_debug_section(clean, ".debug_line")->data;
    unsigned version = p[4] | p[5] << 8;
    /* unit_length(4) version(2) [address_size, seg_sel_size: v5] header_length(4)
     * minimum_instruction_length(1) [maximum_operations_per_instruction: v4+]
     * default_is_stmt(1) line_base(1) line_range(1) */
    size_t line_range = 4 + 2 + (version >= 5 ? 2 : 0) + 4 + 1 + (version >= 4 ? 1 : 0) + 2;
    assert_true(p[line_range] != 0);
    char copy[64];
    patched_copy(path, line + line_range, "\0", 1, copy);
    spoor_elf *e = spoor_elf_open(copy);
    assert_non_null(e);

    struct unit_lines u = {0};
    struct name_block *names = NULL;
    const struct unit_claims every_row = {0};
    struct dw_line *rows = NULL;
    size_t nrows = 0, cap_rows = 0;
    assert_int_equal(
        spoor_line_program_read(e, &names, 0, NULL, &every_row, true, &u, &rows, &nrows, &cap_rows),
        2);
    assert_string_equal(u.problem, "line_range 0");
    assert_int_equal(nrows, 0);
    free(rows);
    spoor_unit_lines_free(&u);
    assert_null(names);

    assert_int_equal(spoor_elf_warnings(e, NULL), 0); /* units are read on first use */
    uint32_t in0 = address_in_unit(e, 0), in1 = address_in_unit(e, 1);
    spoor_location got[8], want[8];
    for (int round = 0; round < 2; round++) { /* the second lookup warns no more */
        size_t n = spoor_elf_symbolize(e, in0, got, 8);
        assert_int_equal(spoor_elf_symbolize(clean, in0, want, 8), n);
        assert_non_null(want[0].file);
        assert_null(got[0].file);                               /* the unit's rows are gone */
        assert_string_equal(got[0].function, want[0].function); /* its functions are not */
        const char *const *list;
        assert_int_equal(spoor_elf_warnings(e, &list), 1);
        assert_non_null(strstr(list[0], ".debug_line unit at 0x0: line_range 0"));
        assert_true(!strncmp(list[0], copy, strlen(copy)));
    }
    assert_true(spoor_elf_partial(e, in0));
    size_t n = spoor_elf_symbolize(e, in1, got, 8);
    assert_int_equal(spoor_elf_symbolize(clean, in1, want, 8), n);
    assert_string_equal(got[0].file, want[0].file);
    assert_int_equal(got[0].line, want[0].line);
    assert_false(spoor_elf_partial(e, in1));
    assert_false(spoor_elf_partial(clean, in0));
    spoor_elf_close(e);
    spoor_elf_close(clean);
    unlink(copy);
}

/* The file offset of section `name`'s header. */
static size_t section_header(const spoor_elf *e, const char *name)
{
    Elf *elf = spoor_elf_libelf(e);
    GElf_Ehdr eh;
    size_t shstrndx;
    assert_non_null(gelf_getehdr(elf, &eh));
    assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
    for (size_t i = 1; i < eh.e_shnum; i++) {
        GElf_Shdr sh;
        assert_non_null(gelf_getshdr(elf_getscn(elf, i), &sh));
        if (!strcmp(elf_strptr(elf, shstrndx, sh.sh_name), name))
            return eh.e_shoff + i * eh.e_shentsize;
    }
    fail_msg("no section %s", name);
    return 0;
}

static void test_rel_typed_data(void **state)
{
    (void)state;
    const char *path = EXAMPLES "printf-m4f.elf";
    spoor_elf *clean = spoor_elf_open(path);
    assert_non_null(clean);
    uint32_t addr, size;
    const uint8_t *data;
    size_t len;
    assert_true(spoor_elf_section(clean, ".data", &addr, &data, &len));
    assert_true(len % 8 != 0); /* no whole number of Elf32_Rel */
    size_t hdr = section_header(clean, ".data");
    char copy[64], copy2[64];
    uint32_t rel = SHT_REL, entsize = 8;
    patched_copy(path, hdr + 4, &rel, 4, copy);
    patched_copy(copy, hdr + 36, &entsize, 4, copy2);
    unlink(copy);
    spoor_elf *e = spoor_elf_open(copy2);
    assert_non_null(e);
    uint8_t got[64];
    size = (uint32_t)(len < sizeof got ? len : sizeof got);
    assert_int_equal(spoor_elf_read(e, addr, got, size), size);
    assert_memory_equal(got, data, size);
    spoor_symbols_build_all(e);
    assert_int_equal(spoor_elf_warnings(e, NULL), 0);
    spoor_elf_close(e);
    spoor_elf_close(clean);
    unlink(copy2);
}

static void test_symtab_link_out_of_range(void **state)
{
    (void)state;
    const char *path = EXAMPLES "calls-m3.elf";
    spoor_elf *clean = spoor_elf_open(path);
    assert_non_null(clean);
    size_t hdr = section_header(clean, ".symtab");
    spoor_elf_close(clean);
    char copy[64];
    uint32_t link = 999;
    patched_copy(path, hdr + 24, &link, 4, copy);
    assert_null(spoor_elf_open(copy));
    assert_non_null(strstr(spoor_last_error(), "truncated or corrupt ELF: section ["));
    assert_non_null(strstr(spoor_last_error(), "] .symtab: sh_link 999 is not a section"));
    unlink(copy);
}

static void test_examples_warn_nothing(void **state)
{
    (void)state;
    DIR *dir = opendir(EXAMPLES);
    assert_non_null(dir);
    struct dirent *ent;
    size_t elves = 0;
    while ((ent = readdir(dir))) {
        size_t len = strlen(ent->d_name);
        if (len < 5 || strcmp(ent->d_name + len - 4, ".elf"))
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s%s", EXAMPLES, ent->d_name);
        spoor_elf *e = spoor_elf_open(path);
        assert_non_null(e);
        spoor_symbols_build_all(e);
        const char *const *list;
        if (spoor_elf_warnings(e, &list))
            fail_msg("%s", list[0]);
        assert_false(spoor_elf_partial(e, 0x100));
        spoor_elf_close(e);
        elves++;
    }
    closedir(dir);
    assert_true(elves >= 13);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_line_range_zero),
        cmocka_unit_test(test_rel_typed_data),
        cmocka_unit_test(test_symtab_link_out_of_range),
        cmocka_unit_test(test_examples_warn_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
