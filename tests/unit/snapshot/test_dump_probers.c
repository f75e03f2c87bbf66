/* The probe-rs coredump reader on files probe-rs itself wrote (its test data; the seeds of
 * fuzz/probers, tests/fuzz/corpus_probers/README.md). The expected register values are the ones
 * probe-rs's own snapshot tests record for the same files
 * (probe-rs-debug/src/snapshots/probe_rs_debug__debug_info__test__*.snap, first frame, at
 * github.com/probe-rs/probe-rs commit 67993c4b6f3fcbabfc811d1df334acfe66cef150); the memory
 * bytes are read off the file with a hex viewer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spoor/dump_formats.h"
#include "spoor/error.h"

#define SEEDS SPOOR_SOURCE_DIR "/tests/fuzz/corpus_probers/"

static spoor_dump *load(const char *name)
{
    spoor_dump *d = spoor_dump_load_as(name, SPOOR_DUMP_FORMAT_AUTO);
    if (!d)
        fail_msg("%s", spoor_last_error());
    assert_string_equal(d->foreign_format, "probe-rs");
    return d;
}

static void nrf52833_hardfault(void **state)
{
    (void)state;
    spoor_dump *d = load(SEEDS "nRF52833_xxAA_hardfault_from_busfault.coredump");
    /* probe-rs's snapshot: R0 1073741820, R1 3, R2 1, R3 85, R7 536887064, SP 536887064,
     * LR 4294967289, PC 24810, XPSR 16777219 */
    static const uint32_t r[16] = {0x3ffffffc, 3, 1, 0x55, 0, 0,          0,          0x20003f18,
                                   0,          0, 0, 0,    0, 0x20003f18, 0xfffffff9, 0x60ea};
    assert_true(d->has_registers);
    assert_memory_equal(d->regs.r, r, sizeof r);
    assert_int_equal(d->regs.xpsr, 0x01000003);
    assert_true(d->regs.have & SPOOR_HAVE_BANKED_SP);
    assert_int_equal(d->regs.msp, 0x20003f18);
    assert_int_equal(d->regs.control, 0);
    /* the first range, [{"start": 0, "end": 0x1c5}, [0x00, 0x40, 0x00, 0x20, ...]]: the vector
     * table, whose initial SP is 0x20004000 */
    assert_true(d->region_count >= 1);
    assert_int_equal(d->regions[0].address, 0);
    assert_int_equal(d->regions[0].length, 0x1c5);
    uint8_t sp[4];
    assert_true(spoor_dump_read(d, 0, sp, 4));
    assert_memory_equal(sp, ((const uint8_t[]){0x00, 0x40, 0x00, 0x20}), 4);
    spoor_dump_free(d);
}

static void rp2040_deep_stack(void **state)
{
    (void)state;
    spoor_dump *d = load(SEEDS "RP2040_full_unwind.coredump");
    /* probe-rs's snapshot: PC 268465156 in test_deep_stack */
    assert_int_equal(d->regs.r[15], 268465156u);
    assert_int_equal(d->regs.r[13], 0x20002f60);
    assert_false(d->regs.have & SPOOR_HAVE_FP); /* Armv6-M: no FPU */
    uint32_t word = 0;
    assert_true(spoor_dump_read(d, d->regs.r[13], &word, 4)); /* the stack is in the file */
    spoor_dump_free(d);
}

static void riscv_refused(void **state)
{
    (void)state;
    assert_null(spoor_dump_load_as(SEEDS "esp32c3_full_unwind.coredump", SPOOR_DUMP_FORMAT_AUTO));
    assert_string_equal(spoor_last_error(),
                        "probe-rs coredump: core type riscv, not a Cortex-M core");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nrf52833_hardfault),
        cmocka_unit_test(rp2040_deep_stack),
        cmocka_unit_test(riscv_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
