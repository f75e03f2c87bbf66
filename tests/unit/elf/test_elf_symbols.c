/* The ELF loader and symbolizer on real example firmware and on broken variants of it.
 * Expected values come from binutils (arm-none-eabi-nm, -objcopy, -readelf), not from spoor. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "spoor/elf.h"
#include "spoor/error.h"

#define FW SPOOR_FIRMWARE_DIR "/examples/calls-m3.elf"

static char tmpdir[] = "/tmp/spoor-elf-test-XXXXXX";

static void run(const char *fmt, ...)
{
    char cmd[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    assert_int_equal(system(cmd), 0);
}

/* One line of a command's output. */
static void capture(char *out, size_t len, const char *fmt, ...)
{
    char cmd[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    out[0] = 0;
    assert_non_null(fgets(out, (int)len, p));
    out[strcspn(out, "\n")] = 0;
    pclose(p);
}

/* The address of a symbol according to arm-none-eabi-nm, Thumb bit cleared. */
static uint32_t nm_address(const char *elf, const char *sym)
{
    char line[256];
    capture(line, sizeof line, "arm-none-eabi-nm %s | awk '$3 == \"%s\" {print $1}'", elf, sym);
    return (uint32_t)strtoul(line, NULL, 16) & ~1u;
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    return system(cmd);
}

static void test_function_and_line(void **state)
{
    (void)state;
    spoor_elf *e = spoor_elf_open(FW);
    assert_non_null(e);
    assert_true(spoor_elf_has_dwarf(e));
    uint32_t main_addr = nm_address(FW, "main");
    spoor_location f[8];
    size_t n = spoor_elf_symbolize(e, main_addr + 1, f, 8); /* Thumb bit set: same answer */
    assert_true(n >= 1);
    assert_string_equal(f[0].function, "main");
    assert_true(f[0].has_offset);
    assert_int_equal(f[0].offset, 0);
    assert_non_null(f[0].file);
    char ref[512];
    capture(ref, sizeof ref, "arm-none-eabi-addr2line -e %s 0x%x", FW, main_addr);
    char got[512];
    snprintf(got, sizeof got, "%s:%u", f[0].file, f[0].line);
    assert_string_equal(got, ref);

    /* The vector table is data (an object per nm): no function, no line, although code the
     * linker discarded left line rows at these addresses. */
    assert_true(nm_address(FW, "vector_table") == 0);
    n = spoor_elf_symbolize(e, 0x10, f, 8);
    assert_int_equal(n, 1);
    assert_null(f[0].function);
    assert_null(f[0].file);

    const char *name;
    uint32_t start, size;
    assert_true(spoor_elf_function(e, main_addr + 2, &name, &start, &size));
    assert_string_equal(name, "main");
    assert_int_equal(start, main_addr);
    spoor_elf_close(e);
}

static void test_memory_image_and_build_id(void **state)
{
    (void)state;
    spoor_elf *e = spoor_elf_open(FW);
    assert_non_null(e);
    uint32_t vectors[2];
    assert_int_equal(spoor_elf_read(e, nm_address(FW, "vector_table"), vectors, 8), 8);
    assert_int_equal(vectors[1] & ~1u, nm_address(FW, "Reset_Handler"));
    assert_int_equal(vectors[1] & 1u, 1);
    assert_true(spoor_elf_is_code(e, nm_address(FW, "main")));
    assert_int_equal(spoor_elf_read(e, 0xfffffff0u, vectors, 8), 0);

    const uint8_t *id;
    size_t len;
    assert_true(spoor_elf_build_id(e, &id, &len));
    char hex[128] = "", ref[256];
    for (size_t i = 0; i < len && 2 * i + 2 < sizeof hex; i++)
        sprintf(hex + 2 * i, "%02x", id[i]);
    capture(ref, sizeof ref, "arm-none-eabi-readelf -n %s | awk '/Build ID/ {print $3}'", FW);
    assert_string_equal(hex, ref);

    uint32_t addr, size;
    assert_true(spoor_elf_symbol(e, "main", &addr, &size));
    assert_int_equal(addr, nm_address(FW, "main"));
    assert_false(spoor_elf_symbol(e, "no_such_symbol_here", &addr, &size));
    spoor_elf_close(e);
}

static void test_no_dwarf_uses_symbol_table(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "%s/nodwarf.elf", tmpdir);
    run("arm-none-eabi-objcopy --strip-debug %s %s", FW, path);
    spoor_elf *e = spoor_elf_open(path);
    assert_non_null(e);
    assert_false(spoor_elf_has_dwarf(e));
    assert_true(spoor_elf_has_symbols(e));
    uint32_t main_addr = nm_address(path, "main");
    spoor_location f[4];
    assert_int_equal(spoor_elf_symbolize(e, main_addr + 4, f, 4), 1);
    assert_string_equal(f[0].function, "main");
    assert_int_equal(f[0].offset, 4);
    assert_null(f[0].file);
    assert_int_equal(f[0].line, 0);
    spoor_elf_close(e);
}

static void test_stripped_has_no_symbols(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "%s/stripped.elf", tmpdir);
    run("arm-none-eabi-objcopy --strip-all %s %s", FW, path);
    spoor_elf *e = spoor_elf_open(path);
    assert_non_null(e);                     /* still a loadable image ... */
    assert_false(spoor_elf_has_symbols(e)); /* ... but nothing to name addresses with */
    spoor_location f[2];
    assert_int_equal(spoor_elf_symbolize(e, 0x100, f, 2), 1);
    assert_null(f[0].function);
    assert_null(f[0].file);
    spoor_elf_close(e);
}

static void expect_open_error(const char *path, const char *needle)
{
    spoor_elf *e = spoor_elf_open(path);
    assert_null(e);
    const char *msg = spoor_last_error();
    if (!strstr(msg, needle))
        fail_msg("error '%s' does not name '%s'", msg, needle);
    assert_null(strchr(msg, '\n'));
}

static void test_truncated(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "%s/truncated.elf", tmpdir);
    run("head -c 4096 %s > %s", FW, path);
    expect_open_error(path, "truncated or corrupt ELF");
    run("head -c 20 %s > %s", FW, path);
    expect_open_error(path, "not an ELF file");
}

static void test_wrong_inputs(void **state)
{
    (void)state;
    expect_open_error("/proc/self/exe", "not a 32-bit ARM ELF");
    expect_open_error("/nonexistent/fw.elf", "cannot open");
    expect_open_error(SPOOR_SOURCE_DIR "/CMakeLists.txt", "not an ELF file");
    expect_open_error("/tmp", "not a regular file");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_function_and_line),
        cmocka_unit_test(test_memory_image_and_build_id),
        cmocka_unit_test(test_no_dwarf_uses_symbol_table),
        cmocka_unit_test(test_stripped_has_no_symbols),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_wrong_inputs),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
