/* The target memory view: layer order, reads that cross layers, the ELF's read-only layer (on
 * real example firmware; section contents from arm-none-eabi-objcopy, not from spoor), file
 * images, and the fault status read from the System Control Space. */
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
#include "spoor/fault.h"
#include "spoor/memory.h"

#define FW SPOOR_FIRMWARE_DIR "/examples/crash-m3.elf"

static char tmpdir[] = "/tmp/spoor-mem-test-XXXXXX";

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

static void layers_first_match_wins_byte_by_byte(void **state)
{
    (void)state;
    uint8_t a[16], b[32], out[40];
    memset(a, 0xAA, sizeof a);
    memset(b, 0xBB, sizeof b);
    spoor_mem *m = spoor_mem_new();
    assert_non_null(m);
    /* a: 0x1008..0x1017 in front of b: 0x1000..0x101f */
    assert_true(spoor_mem_add_bytes(m, 0x1008, a, sizeof a, "a"));
    assert_true(spoor_mem_add_bytes(m, 0x1000, b, sizeof b, "b"));
    assert_true(spoor_mem_read(m, 0x1000, out, 32));
    for (int i = 0; i < 32; i++)
        assert_int_equal(out[i], i >= 8 && i < 24 ? 0xAA : 0xBB);
    /* one byte past the end of everything: the whole read fails */
    assert_false(spoor_mem_read(m, 0x1000, out, 33));
    assert_false(spoor_mem_read(m, 0xFFFFFFFF, out, 2));
    uint32_t w;
    assert_true(spoor_mem_read_u32(m, 0x1006, &w));
    assert_int_equal(w, 0xAAAABBBBu);
    assert_true(spoor_mem_has_static(m, 0x1000, 32));
    assert_false(spoor_mem_has_static(m, 0x0FFF, 2));
    spoor_mem_stats st;
    spoor_mem_stats_get(m, &st);
    assert_int_equal(st.reads, 4);
    assert_int_equal(st.round_trips, 0);
    spoor_mem_free(m);
}

static void range_past_4gib_is_refused(void **state)
{
    (void)state;
    uint8_t b[8] = {0};
    spoor_mem *m = spoor_mem_new();
    assert_false(spoor_mem_add_bytes(m, 0xFFFFFFFC, b, sizeof b, "img.bin"));
    assert_int_equal(spoor_last_status(), SPOOR_ERR_ARGUMENT);
    assert_non_null(strstr(spoor_last_error(), "img.bin"));
    spoor_mem_free(m);
}

/* The ELF layer holds .text (compared with objcopy's dump of it) but not .data, whose bytes
 * are initial values, not what a running target has. */
static void elf_layer_is_read_only_sections(void **state)
{
    (void)state;
    char text_bin[256], data_bin[256], cmd[1024];
    snprintf(text_bin, sizeof text_bin, "%s/text.bin", tmpdir);
    snprintf(data_bin, sizeof data_bin, "%s/data.bin", tmpdir);
    snprintf(cmd, sizeof cmd,
             "arm-none-eabi-objcopy -O binary --only-section=.text %s %s && "
             "arm-none-eabi-objcopy -O binary --only-section=.data %s %s",
             FW, text_bin, FW, data_bin);
    assert_int_equal(system(cmd), 0);
    spoor_elf *elf = spoor_elf_open(FW);
    assert_non_null(elf);
    spoor_elf_range r[64];
    size_t n = spoor_elf_ranges(elf, r, 64);
    uint32_t text = 0, data = 0, text_size = 0;
    for (size_t i = 0; i < n && i < 64; i++) {
        if (!strcmp(r[i].name, ".text")) {
            text = r[i].addr;
            text_size = r[i].size;
            assert_true(r[i].code);
            assert_false(r[i].writable);
        }
        if (!strcmp(r[i].name, ".data")) {
            data = r[i].addr;
            assert_true(r[i].writable);
        }
    }
    assert_true(text_size > 64);
    assert_true(data != 0);

    spoor_mem *m = spoor_mem_new();
    assert_true(spoor_mem_add_elf(m, elf));
    uint8_t *want = malloc(text_size), *got = malloc(text_size);
    FILE *f = fopen(text_bin, "rb");
    assert_non_null(f);
    assert_int_equal(fread(want, 1, text_size, f), text_size);
    fclose(f);
    assert_true(spoor_mem_read(m, text, got, text_size));
    assert_memory_equal(want, got, text_size);
    uint8_t b[4];
    assert_false(spoor_mem_read(m, data, b, 4));

    /* a RAM image in front: .data comes from it */
    assert_true(spoor_mem_add_file(m, data, data_bin));
    assert_true(spoor_mem_read(m, data, b, 4));
    assert_false(spoor_mem_add_file(m, 0x20000000, "/nonexistent/ram.bin"));
    assert_int_equal(spoor_last_status(), SPOOR_ERR_IO);
    free(want);
    free(got);
    spoor_mem_free(m);
    spoor_elf_close(elf);
}

/* A debugger snapshot that covers the SCS page: CFSR/HFSR/MMFAR/BFAR read from it. */
static void fault_status_from_scs_page(void **state)
{
    (void)state;
    uint8_t page[0x100] = {0};
    const uint32_t cfsr = 0x00008200u, hfsr = 0x40000000u, bfar = 0x30000000u;
    memcpy(page + 0x28, &cfsr, 4); /* host is little-endian like the target (x86_64) */
    memcpy(page + 0x2C, &hfsr, 4);
    memcpy(page + 0x38, &bfar, 4);
    spoor_mem *m = spoor_mem_new();
    spoor_fault_status st;
    assert_false(spoor_fault_status_read(spoor_mem_reader, m, &st));
    assert_int_equal(st.valid, 0);
    assert_true(spoor_mem_add_bytes(m, 0xE000ED00u, page, sizeof page, "scs"));
    assert_true(spoor_fault_status_read(spoor_mem_reader, m, &st));
    assert_true(st.valid & SPOOR_FAULT_HAS_CFSR);
    assert_true(st.valid & SPOOR_FAULT_HAS_BFAR);
    assert_int_equal(st.cfsr, cfsr);
    assert_int_equal(st.hfsr, hfsr);
    assert_int_equal(st.bfar, bfar);
    spoor_fault_info info;
    spoor_fault_decode(&st, 3, 0x100, &info);
    assert_string_equal(info.type, "BusFault");
    assert_true(info.escalated);
    assert_true(info.has_address);
    assert_int_equal(info.address, bfar);
    spoor_mem_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(layers_first_match_wins_byte_by_byte),
        cmocka_unit_test(range_past_4gib_is_refused),
        cmocka_unit_test(elf_layer_is_read_only_sections),
        cmocka_unit_test(fault_status_from_scs_page),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
