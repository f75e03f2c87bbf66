/* Fault decoding against the bit positions of the ARMv7-M ARM (B3.2.15 CFSR: MMFSR bits 0-7,
 * BFSR 8-15, UFSR 16-31; B3.2.16 HFSR) and the ARMv8-M ARM (STKOF = UFSR bit 4, SFSR). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "spoor/fault.h"

/* The inputs of one case: which registers are known, their values, the handler and PC. */
typedef struct fault_case {
    bool has_cfsr, has_hfsr, has_mmfar, has_bfar, has_sfsr, has_sfar;
    uint32_t cfsr, hfsr, mmfar, bfar, sfsr, sfar;
    int exception;
    uint32_t pc;
} fault_case;

static void decode(const fault_case *c, spoor_fault_info *f)
{
    spoor_fault_status st = {.valid = (c->has_cfsr ? SPOOR_FAULT_HAS_CFSR : 0u) |
                                      (c->has_hfsr ? SPOOR_FAULT_HAS_HFSR : 0u) |
                                      (c->has_mmfar ? SPOOR_FAULT_HAS_MMFAR : 0u) |
                                      (c->has_bfar ? SPOOR_FAULT_HAS_BFAR : 0u) |
                                      (c->has_sfsr ? SPOOR_FAULT_HAS_SFSR : 0u) |
                                      (c->has_sfar ? SPOOR_FAULT_HAS_SFAR : 0u),
                             .cfsr = c->cfsr,
                             .hfsr = c->hfsr,
                             .mmfar = c->mmfar,
                             .bfar = c->bfar,
                             .sfsr = c->sfsr,
                             .sfar = c->sfar};
    spoor_fault_decode(&st, c->exception, c->pc, f);
}

static void test_invstate_bad_function_pointer(void **state)
{
    (void)state;
    fault_case r = {
        .has_cfsr = true, .has_hfsr = true, .cfsr = 1u << 17, .exception = 6, .pc = 0xbf00de4c};
    spoor_fault_info f;
    decode(&r, &f);
    assert_string_equal(f.type, "UsageFault");
    assert_int_equal(f.nbits, 1);
    assert_string_equal(f.bits[0].name, "INVSTATE");
    assert_true(f.has_address);
    assert_int_equal(f.address, 0xbf00de4c);
    char line[256];
    spoor_fault_summary(&f, line, sizeof line);
    assert_string_equal(line, "UsageFault: INVSTATE - branch to an address without the Thumb bit "
                              "/ bad function pointer, PC 0xbf00de4c");
}

static void test_precise_bus_fault_uses_bfar_only_when_valid(void **state)
{
    (void)state;
    fault_case r = {.has_cfsr = true,
                    .has_bfar = true,
                    .cfsr = (1u << 9) | (1u << 15),
                    .bfar = 0x60000000,
                    .exception = 5};
    spoor_fault_info f;
    decode(&r, &f);
    assert_string_equal(f.type, "BusFault");
    assert_string_equal(f.bits[0].name, "PRECISERR");
    assert_true(f.has_address);
    assert_string_equal(f.address_from, "BFAR");
    assert_int_equal(f.address, 0x60000000);
    r.cfsr = 1u << 9; /* BFARVALID clear: the address register means nothing */
    decode(&r, &f);
    assert_false(f.has_address);
}

static void test_escalated_and_multiple_bits(void **state)
{
    (void)state;
    fault_case r = {.has_cfsr = true,
                    .has_hfsr = true,
                    .cfsr = (1u << 25) | (1u << 12),
                    .hfsr = 1u << 30,
                    .exception = 3,
                    .pc = 0x100};
    spoor_fault_info f;
    decode(&r, &f);
    assert_true(f.escalated);
    assert_string_equal(f.type, "BusFault"); /* BFSR bits are listed before UFSR bits */
    assert_int_equal(f.nbits, 3);            /* STKERR, DIVBYZERO, FORCED */
    assert_string_equal(f.bits[0].name, "STKERR");
    assert_string_equal(f.bits[1].name, "DIVBYZERO");
    assert_string_equal(f.bits[2].name, "FORCED");
    char line[512];
    spoor_fault_summary(&f, line, sizeof line);
    assert_non_null(strstr(line, "BusFault (escalated to HardFault): STKERR"));
    assert_null(strstr(line, "FORCED"));
}

static void test_v8m_stack_overflow_and_secure(void **state)
{
    (void)state;
    fault_case r = {.has_cfsr = true, .cfsr = 1u << 20, .exception = 6};
    spoor_fault_info f;
    decode(&r, &f);
    assert_string_equal(f.bits[0].name, "STKOF");
    fault_case s = {.has_sfsr = true,
                    .has_sfar = true,
                    .sfsr = (1u << 3) | (1u << 6),
                    .sfar = 0x30000000,
                    .exception = 7};
    decode(&s, &f);
    assert_string_equal(f.type, "SecureFault");
    assert_string_equal(f.bits[0].name, "AUVIOL");
    assert_int_equal(f.address, 0x30000000);
}

static void test_armv6m_has_no_status_registers(void **state)
{
    (void)state;
    fault_case r = {.exception = 3, .pc = 0xbf00de4c};
    spoor_fault_info f;
    decode(&r, &f);
    assert_string_equal(f.type, "HardFault");
    assert_int_equal(f.nbits, 0);
    r.exception = -1;
    decode(&r, &f);
    assert_string_equal(f.type, "fault");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_invstate_bad_function_pointer),
        cmocka_unit_test(test_precise_bus_fault_uses_bfar_only_when_valid),
        cmocka_unit_test(test_escalated_and_multiple_bits),
        cmocka_unit_test(test_v8m_stack_overflow_and_secure),
        cmocka_unit_test(test_armv6m_has_no_status_registers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
