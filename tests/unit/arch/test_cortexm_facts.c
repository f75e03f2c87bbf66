/* spoor/cortexm_facts.h against the architecture manuals: the EXC_RETURN values of the
 * ARMv6-M/ARMv7-M tables (B1.5.8) and the ARMv8-M bit layout (prefix 0xFF, bits 23:7 RES1, bit 1
 * RES0), FNC_RETURN, and the Thumb call encodings (ARMv7-M A7.7.18 BL, A7.7.19 BLX (register));
 * the instruction words are arm-none-eabi-as's output for -mcpu=cortex-m3 (bl, blx rN, bx lr,
 * b.w, beq.w) and -march=armv7-a (blx to ARM code). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "spoor/cortexm_facts.h"
#include "spoor/thumb.h"

static void exc_return_armv7m_table(void **state)
{
    (void)state;
    /* handler/MSP, thread/MSP, thread/PSP; basic and (FP extension) extended frames */
    static const uint32_t valid[] = {0xFFFFFFF1u, 0xFFFFFFF9u, 0xFFFFFFFDu,
                                     0xFFFFFFE1u, 0xFFFFFFE9u, 0xFFFFFFEDu};
    for (size_t i = 0; i < sizeof valid / sizeof valid[0]; i++)
        assert_true(spoor_cortexm_is_exc_return(valid[i]));
}

static void exc_return_armv8m_security_states(void **state)
{
    (void)state;
    /* S=0 DCRS=1 FType=1 Mode=1 SPSEL=1 ES=0: a Non-secure handler returning to Non-secure
     * thread code on PSP (what a Non-secure-only Cortex-M33 firmware sees) */
    assert_true(spoor_cortexm_is_exc_return(0xFFFFFFBCu));
    assert_true(spoor_cortexm_is_exc_return(0xFFFFFFB8u)); /* ... on MSP */
    assert_true(spoor_cortexm_is_exc_return(0xFFFFFFB0u)); /* ... to handler mode */
    assert_true(spoor_cortexm_is_exc_return(0xFFFFFFACu)); /* ... with an FP frame */
    /* DCRS=0: the callee registers were stacked (Secure background, Non-secure handler) */
    assert_true(spoor_cortexm_is_exc_return(0xFFFFFFDCu));
    assert_true(spoor_cortexm_is_exc_return(0xFFFFFF9Cu));
    assert_true(spoor_cortexm_is_exc_return(0xFFFFFF80u)); /* every variable bit clear */
    assert_int_equal(0xFFFFFFBCu & SPOOR_EXC_RETURN_S, 0);
    assert_int_equal(0xFFFFFFBCu & SPOOR_EXC_RETURN_ES, 0);
    assert_int_not_equal(0xFFFFFFBCu & SPOOR_EXC_RETURN_DCRS, 0);
    assert_int_not_equal(0xFFFFFFEDu & SPOOR_EXC_RETURN_SPSEL, 0);
    assert_int_equal(0xFFFFFFEDu & SPOOR_EXC_RETURN_FTYPE, 0);
    assert_int_equal(0xFFFFFFF1u & SPOOR_EXC_RETURN_MODE, 0);
}

static void not_exc_return(void **state)
{
    (void)state;
    assert_false(spoor_cortexm_is_exc_return(0xFFFFFFFFu)); /* LR's reset value: bit 1 set */
    assert_false(spoor_cortexm_is_exc_return(0xFFFFFFFEu)); /* -2: bit 1 (RES0) set */
    assert_false(spoor_cortexm_is_exc_return(0xFFFFFFFBu)); /* bit 1 set */
    assert_false(spoor_cortexm_is_exc_return(0xFFFFFF7Du)); /* bit 7 (RES1) clear */
    assert_false(spoor_cortexm_is_exc_return(0xFFFFFF00u)); /* bits 7 and up: -256 */
    assert_false(spoor_cortexm_is_exc_return(0xFEFFFFFFu)); /* FNC_RETURN */
    assert_false(spoor_cortexm_is_exc_return(0xF0000001u)); /* ARMv7-M's 0xF prefix alone */
    assert_false(spoor_cortexm_is_exc_return(0x08000001u));
    assert_false(spoor_cortexm_is_exc_return(0u));
}

static void fnc_return(void **state)
{
    (void)state;
    assert_true(spoor_cortexm_is_fnc_return(0xFEFFFFFFu));
    assert_true(spoor_cortexm_is_fnc_return(0xFEFFFFFEu));
    assert_false(spoor_cortexm_is_fnc_return(0xFEFFFFFDu));
    assert_false(spoor_cortexm_is_fnc_return(0xFFFFFFFEu));
    assert_false(spoor_cortexm_is_fnc_return(0xFFFFFFBCu));
}

static void frame_sizes(void **state)
{
    (void)state;
    /* 0x20 bytes basic, 0x68 extended, 0x28 of additional state context */
    assert_int_equal(4u * SPOOR_EXC_FRAME_BASIC_WORDS, 0x20u);
    assert_int_equal(4u * (SPOOR_EXC_FRAME_BASIC_WORDS + SPOOR_EXC_FRAME_FP_WORDS), 0x68u);
    assert_int_equal(4u * SPOOR_EXC_FRAME_ADDITIONAL_WORDS, 0x28u);
}

static void bl(void **state)
{
    (void)state;
    assert_true(spoor_cortexm_is_bl(0xF7FFu, 0xFFFEu));  /* bl . */
    assert_true(spoor_cortexm_is_bl(0xF000u, 0xF808u));  /* bl forward */
    assert_false(spoor_cortexm_is_bl(0xF000u, 0xB803u)); /* b.w (T4) */
    assert_false(spoor_cortexm_is_bl(0xF000u, 0x8001u)); /* beq.w (T3) */
    assert_false(spoor_cortexm_is_bl(0xF000u, 0xE800u)); /* blx imm: not on M-profile */
    assert_false(spoor_cortexm_is_bl(0xE7FEu, 0xF808u)); /* b . (16-bit) then anything */
}

static void blx_register(void **state)
{
    (void)state;
    assert_true(spoor_cortexm_is_blx_register(0x4798u));  /* blx r3 */
    assert_true(spoor_cortexm_is_blx_register(0x47F0u));  /* blx lr */
    assert_false(spoor_cortexm_is_blx_register(0x4770u)); /* bx lr */
    assert_false(spoor_cortexm_is_blx_register(0x4718u)); /* bx r3 */
    assert_false(spoor_cortexm_is_blx_register(0x4799u)); /* bits 2:0 must be zero */
    assert_false(spoor_cortexm_is_blx_register(0xBF00u)); /* nop */
}

/* spoor_thumb_is_call took the BLX (immediate) encoding for a call; ARMv6-M, ARMv7-M and
 * ARMv8-M have only BL: 11 J1 0 J2 in the second halfword is UNDEFINED there. */
static void thumb_is_call_uses_the_fact(void **state)
{
    (void)state;
    static const uint8_t bl_fwd[] = {0x00, 0xF0, 0x08, 0xF8};
    static const uint8_t blx_imm[] = {0x00, 0xF0, 0x00, 0xE8};
    static const uint8_t blx_r3[] = {0x98, 0x47};
    static const uint8_t bx_lr[] = {0x70, 0x47};
    assert_true(spoor_thumb_is_call(bl_fwd, 4));
    assert_false(spoor_thumb_is_call(blx_imm, 4));
    assert_true(spoor_thumb_is_call(blx_r3, 2));
    assert_false(spoor_thumb_is_call(bx_lr, 2));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exc_return_armv7m_table),
        cmocka_unit_test(exc_return_armv8m_security_states),
        cmocka_unit_test(not_exc_return),
        cmocka_unit_test(fnc_return),
        cmocka_unit_test(frame_sizes),
        cmocka_unit_test(bl),
        cmocka_unit_test(blx_register),
        cmocka_unit_test(thumb_is_call_uses_the_fact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
