/* The target's ITM/DWT set-up for spoor top (target/src/itm_watch_plan.c): every register
 * write against the encodings of the ARMv7-M ARM (C1.8, DWT_FUNCTION FUNCTION 0b1101 "sample
 * data for write transfers"; C1.7 ITM_TCR) and the ARMv8-M ARM (DWT_FUNCTION MATCH 0b1101 "data
 * address with value, writes", ACTION 0b10, which for that comparator type "generate[s] a Data
 * Trace Data Value packet"), written out here by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "spoor/itm_watch.h"

static void expect_common(const spoor_reg_write *w)
{
    assert_int_equal(w[0].addr, 0xE000EDFC); /* DEMCR */
    assert_int_equal(w[0].value, 0x01000000);
    assert_int_equal(w[0].mask, 0x01000000);
    assert_int_equal(w[1].addr, 0xE0000FB0); /* ITM_LAR */
    assert_int_equal(w[1].value, 0xC5ACCE55);
    assert_int_equal(w[2].addr, 0xE0001FB0); /* DWT_LAR */
    assert_int_equal(w[3].addr, 0xE0000E80); /* ITM_TCR: TraceBusID 1, TXENA, SYNCENA, TSENA,
                                                ITMENA; TSPrescale 0 */
    assert_int_equal(w[3].value, 0x0001000F);
    assert_int_equal(w[3].mask, 0x007F030F);
}

static void test_armv7m(void **state)
{
    (void)state;
    spoor_reg_write w[SPOOR_ITM_WATCH_MAX_WRITES];
    size_t n = spoor_itm_watch_plan(0x20001248, 1, SPOOR_DWT_ARMV7M, 0, w);
    assert_int_equal(n, 9);
    expect_common(w);
    assert_int_equal(w[4].addr, 0xE0001000); /* DWT_CTRL: CYCCNTENA, SYNCTAP 0b01 */
    assert_int_equal(w[4].value, 0x00000401);
    assert_int_equal(w[4].mask, 0x00010C01);
    assert_int_equal(w[5].addr, 0xE0001038); /* FUNCTION1 off */
    assert_int_equal(w[5].value, 0);
    assert_int_equal(w[6].addr, 0xE0001030); /* COMP1 */
    assert_int_equal(w[6].value, 0x20001248);
    assert_int_equal(w[7].addr, 0xE0001034); /* MASK1 */
    assert_int_equal(w[7].value, 0);
    assert_int_equal(w[8].addr, 0xE0001038); /* FUNCTION1: 0b1101, DATAVSIZE word */
    assert_int_equal(w[8].value, 0x80D);
    assert_int_equal(w[8].mask, 0xFFFFFFFF);
}

static void test_armv8m(void **state)
{
    (void)state;
    spoor_reg_write w[SPOOR_ITM_WATCH_MAX_WRITES];
    size_t n = spoor_itm_watch_plan(0x38000100, 2, SPOOR_DWT_ARMV8M, 1, w);
    assert_int_equal(n, 8);
    expect_common(w);
    assert_int_equal(w[4].value, 0x00010401); /* with EXCTRCENA */
    assert_int_equal(w[5].addr, 0xE0001048);  /* FUNCTION2 off */
    assert_int_equal(w[6].addr, 0xE0001040);  /* COMP2 */
    assert_int_equal(w[6].value, 0x38000100);
    /* MATCH 0b1101 data address with value, writes; ACTION 0b10 (for that MATCH a Data Trace
     * Data Value packet); DATAVSIZE word */
    assert_int_equal(w[7].addr, 0xE0001048);
    assert_int_equal(w[7].value, 0x82D);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    spoor_reg_write w[SPOOR_ITM_WATCH_MAX_WRITES];
    assert_int_equal(spoor_itm_watch_plan(0x20000000, 4, SPOOR_DWT_ARMV7M, 0, w), 0);
    assert_int_equal(spoor_itm_watch_plan(0x20000002, 1, SPOOR_DWT_ARMV7M, 0, w), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_armv7m),
        cmocka_unit_test(test_armv8m),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
