/* Reading hardware-stacked exception frames (spoor_regs_from_exception) on hand-built
 * stacks. The layouts are the architecture's (ARMv7-M ARM B1.5.6-7, ARMv8-M ARM B3.19):
 * basic frame r0-r3, r12, lr, pc, xPSR; extended frame 18 more words (s0-s15, FPSCR,
 * reserved); ARMv8-M additional state context (integrity signature, reserved, r4-r11)
 * below the basic frame when EXC_RETURN.DCRS is 0; one padding word when xPSR bit 9. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "spoor/error.h"
#include "spoor/unwind.h"

#define BASE 0x20000000u
#define SIZE 1024u

static uint8_t mem[SIZE];

static bool read_mem(void *ctx, uint32_t addr, void *buf, size_t len)
{
    (void)ctx;
    if (addr < BASE || addr - BASE > SIZE || len > SIZE - (addr - BASE)) {
        return false;
    }
    memcpy(buf, mem + (addr - BASE), len);
    return true;
}

static void put(uint32_t addr, uint32_t value)
{
    memcpy(mem + (addr - BASE), &value, 4); /* the host is little-endian like the target */
}

/* A basic frame at addr: r0..r3 = 0x10..0x13, r12 = 0x1c, lr = 0x1e1, pc = 0x2001. */
static void basic_frame(uint32_t addr, uint32_t xpsr)
{
    for (uint32_t i = 0; i < 4; i++) {
        put(addr + 4 * i, 0x10 + i);
    }
    put(addr + 16, 0x1c);
    put(addr + 20, 0x1e1);
    put(addr + 24, 0x2001);
    put(addr + 28, xpsr);
}

static spoor_regs handler_state(uint32_t msp, uint32_t psp)
{
    spoor_regs h = {0};
    for (int r = 4; r <= 11; r++) {
        h.r[r] = 0x400 + (uint32_t)r;
    }
    h.r[13] = msp;
    h.msp = msp;
    h.psp = psp;
    h.have |= SPOOR_HAVE_BANKED_SP;
    h.xpsr = 0x01000003u; /* HardFault */
    return h;
}

static void check_basic(const spoor_regs *out, uint32_t sp, uint32_t xpsr)
{
    for (int r = 0; r < 4; r++) {
        assert_int_equal(out->r[r], 0x10 + (uint32_t)r);
    }
    assert_int_equal(out->r[12], 0x1c);
    assert_int_equal(out->r[14], 0x1e1);
    assert_int_equal(out->r[15], 0x2000); /* Thumb bit cleared */
    assert_int_equal(out->r[13], sp);
    assert_int_equal(out->xpsr, xpsr);
}

static void test_basic_frame_on_msp(void **state)
{
    (void)state;
    memset(mem, 0, sizeof mem);
    basic_frame(BASE + 0x100, 0x21000000u);
    spoor_regs h = handler_state(BASE + 0x100, BASE + 0x300), out;
    assert_true(spoor_regs_from_exception(&h, 0xFFFFFFF9u, read_mem, NULL, &out));
    check_basic(&out, BASE + 0x120, 0x21000000u);
    assert_int_equal(out.r[4], 0x404); /* r4-r11 are the handler's (it must not change them) */
    assert_int_equal(out.r[11], 0x40b);
}

static void test_basic_frame_on_psp(void **state)
{
    (void)state;
    memset(mem, 0, sizeof mem);
    basic_frame(BASE + 0x300, 0x01000000u);
    spoor_regs h = handler_state(BASE + 0x100, BASE + 0x300), out;
    assert_true(spoor_regs_from_exception(&h, 0xFFFFFFFDu, read_mem, NULL, &out));
    check_basic(&out, BASE + 0x320, 0x01000000u);
    h.have &= ~SPOOR_HAVE_BANKED_SP;
    assert_false(spoor_regs_from_exception(&h, 0xFFFFFFFDu, read_mem, NULL, &out));
    assert_non_null(strstr(spoor_last_error(), "PSP"));
}

static void test_extended_fp_frame_and_alignment(void **state)
{
    (void)state;
    memset(mem, 0, sizeof mem);
    basic_frame(BASE + 0x100, 0x01000200u); /* bit 9: a padding word was inserted */
    spoor_regs h = handler_state(BASE + 0x100, 0), out;
    assert_true(spoor_regs_from_exception(&h, 0xFFFFFFE9u, read_mem, NULL, &out));
    check_basic(&out, BASE + 0x100 + 26 * 4 + 4, 0x01000200u);
    assert_true(spoor_regs_from_exception(&h, 0xFFFFFFF9u, read_mem, NULL, &out));
    check_basic(&out, BASE + 0x100 + 8 * 4 + 4, 0x01000200u);
}

static void test_armv8m_additional_state_context(void **state)
{
    (void)state;
    memset(mem, 0, sizeof mem);
    uint32_t f = BASE + 0x100;
    put(f, 0xFEFA125Bu);
    for (uint32_t r = 4; r <= 11; r++) {
        put(f + 8 + 4 * (r - 4), 0x900 + r);
    }
    basic_frame(f + 40, 0x01000000u);
    spoor_regs h = handler_state(f, 0), out;
    /* S = 1, DCRS = 0, FType = 1, Mode = 1, SPSEL = 0, ES = 0: a non-secure handler that
     * interrupted secure code. */
    assert_true(spoor_regs_from_exception(&h, 0xFFFFFFD8u, read_mem, NULL, &out));
    check_basic(&out, f + 40 + 32, 0x01000000u);
    assert_int_equal(out.r[4], 0x904);
    assert_int_equal(out.r[11], 0x90b);
}

static void test_rejects_bad_input(void **state)
{
    (void)state;
    spoor_regs h = handler_state(BASE + SIZE - 16, 0), out;
    assert_false(spoor_regs_from_exception(&h, 0xFFFFFFF9u, read_mem, NULL, &out));
    assert_non_null(strstr(spoor_last_error(), "cannot read"));
    assert_false(spoor_regs_from_exception(&h, 0xFFFFFFFFu, read_mem, NULL, &out));
    assert_false(spoor_regs_from_exception(&h, 0x08001235u, read_mem, NULL, &out));
    assert_non_null(strstr(spoor_last_error(), "not an EXC_RETURN"));
    h.msp = 0xFFFFFFF0u; /* the frame would wrap around the address space */
    assert_false(spoor_regs_from_exception(&h, 0xFFFFFFF9u, read_mem, NULL, &out));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic_frame_on_msp),
        cmocka_unit_test(test_basic_frame_on_psp),
        cmocka_unit_test(test_extended_fp_frame_and_alignment),
        cmocka_unit_test(test_armv8m_additional_state_context),
        cmocka_unit_test(test_rejects_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
