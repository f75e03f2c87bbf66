/* The ELF's architecture from its build attributes (spoor_elf_cpu_arch, elf_arch.c):
 *   - the example ELFs of each core: the Tag_CPU_arch values of the ABI addenda (ARM IHI 0045,
 *     2.4.1: 10 ARMv7, 12 ARMv6S-M, 13 ARMv7E-M, 17 ARMv8-M.mainline) for the -mcpu each is
 *     built with (cortex-m0plus, m3, m4, m33); arm-none-eabi-readelf -A prints the same;
 *   - copies with the section damaged (not starting with 'A'; a subsection length past the
 *     end or below its own header; a file-attributes length that cuts the CPU name off; a
 *     vendor name other than "aeabi"):
 *     unknown, read no further than the section. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "elf/elf_internal.h"

#define EXAMPLES SPOOR_FIRMWARE_DIR "/examples/"

static void test_examples(void **state)
{
    (void)state;
    static const struct {
        const char *elf;
        spoor_elf_arch arch;
    } cases[] = {{"hello-m0.elf", SPOOR_ELF_ARCH_V6SM},
                 {"hello-m3.elf", SPOOR_ELF_ARCH_V7},
                 {"hello-m4f.elf", SPOOR_ELF_ARCH_V7EM},
                 {"hello-m33.elf", SPOOR_ELF_ARCH_V8M_MAIN}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, EXAMPLES "%s", cases[i].elf);
        spoor_elf *e = spoor_elf_open(path);
        assert_non_null(e);
        assert_int_equal(spoor_elf_cpu_arch(e), cases[i].arch);
        spoor_elf_close(e);
    }
}

/* The arch of a copy of hello-m3.elf whose .ARM.attributes bytes [at, at + len) are replaced. */
static spoor_elf_arch patched_arch(size_t at, const void *bytes, size_t len)
{
    spoor_elf *e = spoor_elf_open(EXAMPLES "hello-m3.elf");
    assert_non_null(e);
    const struct elf_section *s = spoor_elf_debug_section(e, ".ARM.attributes");
    assert_non_null(s);
    size_t size, off = (size_t)((const char *)s->data -
                                (const char *)elf_rawfile(spoor_elf_libelf(e), &size)) +
                       at;
    size_t section_size = s->size;
    static uint8_t buf[4 << 20];
    FILE *in = fopen(EXAMPLES "hello-m3.elf", "rb");
    assert_non_null(in);
    size_t n = fread(buf, 1, sizeof buf, in);
    fclose(in);
    spoor_elf_close(e);
    assert_true(n < sizeof buf && off + len <= n && at + len <= section_size);
    memcpy(buf + off, bytes, len);
    char path[] = "/tmp/spoor-arch-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, buf, n), (ssize_t)n);
    close(fd);
    e = spoor_elf_open(path);
    unlink(path);
    assert_non_null(e);
    spoor_elf_arch arch = spoor_elf_cpu_arch(e);
    spoor_elf_close(e);
    return arch;
}

static void test_damaged(void **state)
{
    (void)state;
    /* 'A', uint32 length, "aeabi\0", tag 1, uint32 length, attributes */
    assert_int_equal(patched_arch(0, "B", 1), SPOOR_ELF_ARCH_UNKNOWN);
    assert_int_equal(patched_arch(1, "\xff\xff\x00\x00", 4), SPOOR_ELF_ARCH_UNKNOWN);
    assert_int_equal(patched_arch(1, "\x02\x00\x00\x00", 4), SPOOR_ELF_ARCH_UNKNOWN);
    assert_int_equal(patched_arch(12, "\x06\x00\x00\x00", 4), SPOOR_ELF_ARCH_UNKNOWN);
    assert_int_equal(patched_arch(5, "aeabiX", 6), SPOOR_ELF_ARCH_UNKNOWN);
    assert_int_equal(patched_arch(0, "A", 1), SPOOR_ELF_ARCH_V7); /* the copy itself */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_examples),
        cmocka_unit_test(test_damaged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
