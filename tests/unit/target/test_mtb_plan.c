/* The target MTB driver's checks and register values (target/src/mtb_plan.c), on the host.
 * Expected values from the MTB-M33/MTB-M0+ TRMs: MASK = log2(size) - 4; POSITION.POINTER is
 * the offset from MTB_BASE; FLOW = watermark offset | AUTOSTOP (bit 0); MASTER.EN bit 31,
 * TSTARTEN bit 5, TSTOPEN bit 6. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "spoor/mtb.h"

static _Alignas(8192) uint8_t sram[16384];

static spoor_mtb_config config(void *buffer, uint32_t size, uint32_t max)
{
    spoor_mtb_config c = {0};
    c.registers = SPOOR_MTB_M33_REGISTERS;
    c.buffer = buffer;
    c.size = size;
    c.max_size = max;
    return c;
}

static void values(void **state)
{
    (void)state;
    uintptr_t base = (uintptr_t)sram;
    spoor_mtb_setup s;
    spoor_mtb_config c = config(sram, 8192, 8192); /* the seed's DA14695: MASK 9 */
    assert_int_equal(spoor_mtb_plan(&c, base, &s), SPOOR_MTB_OK);
    assert_int_equal(s.master, 0x80000000u | 9u);
    assert_int_equal(s.position, 0);
    assert_int_equal(s.flow, 0);
    c = config(sram + 4096, 16, 8192); /* the smallest buffer, 4 KiB into the SRAM */
    assert_int_equal(spoor_mtb_plan(&c, base, &s), SPOOR_MTB_OK);
    assert_int_equal(s.master, 0x80000000u);
    assert_int_equal(s.position, 4096);
    c = config(sram + 1024, 1024, 0);
    c.watermark = 512;
    c.tstart_comparators = 1u;
    c.tstop_comparators = 2u;
    assert_int_equal(spoor_mtb_plan(&c, base, &s), SPOOR_MTB_OK);
    assert_int_equal(s.flow, (1024u + 512u) | 1u);
    assert_int_equal(s.master, 6u | (1u << 5) | (1u << 6)); /* EN waits for the comparator */
    assert_int_equal(s.tstart, 1);
    assert_int_equal(s.tstop, 2);
}

static void checks(void **state)
{
    (void)state;
    uintptr_t base = (uintptr_t)sram;
    spoor_mtb_setup s;
    spoor_mtb_config c = config(sram, 24, 0);
    assert_int_equal(spoor_mtb_plan(&c, base, &s), SPOOR_MTB_BAD_SIZE);
    c = config(sram, 8, 0);
    assert_int_equal(spoor_mtb_plan(&c, base, &s), SPOOR_MTB_BAD_SIZE);
    c = config(sram, 16384, 8192);
    assert_int_equal(spoor_mtb_plan(&c, base, &s), SPOOR_MTB_TOO_LARGE);
    c = config(sram + 512, 1024, 0);
    assert_int_equal(spoor_mtb_plan(&c, base, &s), SPOOR_MTB_MISALIGNED);
    c = config(sram, 1024, 0);
    assert_int_equal(spoor_mtb_plan(&c, base + 2048, &s), SPOOR_MTB_NOT_IN_SRAM);
    c = config(sram + 8192, 1024, 8192); /* past base + max */
    assert_int_equal(spoor_mtb_plan(&c, base, &s), SPOOR_MTB_NOT_IN_SRAM);
    c = config(sram, 1024, 0);
    c.watermark = 12;
    assert_int_equal(spoor_mtb_plan(&c, base, &s), SPOOR_MTB_BAD_WATERMARK);
    c.watermark = 1024;
    assert_int_equal(spoor_mtb_plan(&c, base, &s), SPOOR_MTB_BAD_WATERMARK);
    c = config(NULL, 1024, 0);
    assert_int_equal(spoor_mtb_plan(&c, base, &s), SPOOR_MTB_NO_REGISTERS);
    c = config(sram, 1024, 0);
    c.registers = 0;
    assert_int_equal(spoor_mtb_plan(&c, base, &s), SPOOR_MTB_NO_REGISTERS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(values), cmocka_unit_test(checks)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
