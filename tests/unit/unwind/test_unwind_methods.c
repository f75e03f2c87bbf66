/* The unwinder on hand-built stacks over a real ELF: tests/unit/data/unwind_frames.S is
 * assembled here (arm-none-eabi-gcc) and gives functions whose frames are written down in
 * the source three ways (CFI, EHABI, the prologue itself). Each test lays out the stack
 * those frame layouts imply and checks every method produces the same, expected frames;
 * the expected addresses are the assembler's labels, looked up by name. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spoor/elf.h"
#include "spoor/error.h"
#include "spoor/unwind.h"

#define RAM_BASE 0x20000000u
#define RAM_SIZE 0x2000u
#define S0 (RAM_BASE + 0x1000u) /* inner's SP */
#define VLA 16u                 /* middle's run-time stack allocation */
#define MIDDLE_R7 (S0 + 32u + VLA)
#define MIDDLE_CFA (MIDDLE_R7 + 8u)
#define OUTER_CFA (MIDDLE_CFA + 24u)
#define HANDLER_SP (RAM_BASE + 0x400u) /* the MSP stack of the interrupt tests */

static spoor_elf *elf;
static uint8_t ram[RAM_SIZE];

static bool read_ram(void *ctx, uint32_t addr, void *buf, size_t len)
{
    (void)ctx;
    if (addr < RAM_BASE || addr - RAM_BASE > RAM_SIZE || len > RAM_SIZE - (addr - RAM_BASE)) {
        return false;
    }
    memcpy(buf, ram + (addr - RAM_BASE), len);
    return true;
}

static void put(uint32_t addr, uint32_t value)
{
    assert_true(addr >= RAM_BASE && addr + 4 <= RAM_BASE + RAM_SIZE);
    uint8_t *p = ram + (addr - RAM_BASE);
    p[0] = (uint8_t)value;
    p[1] = (uint8_t)(value >> 8);
    p[2] = (uint8_t)(value >> 16);
    p[3] = (uint8_t)(value >> 24);
}

static uint32_t sym(const char *name)
{
    uint32_t addr, size;
    if (!spoor_elf_symbol(elf, name, &addr, &size)) {
        fail_msg("no symbol %s in the test program", name);
    }
    return addr & ~1u;
}

static int build_program(void **state)
{
    (void)state;
    const char *out = SPOOR_BUILD_DIR "/unwind_frames_test.elf";
    char command[2048];
    snprintf(command, sizeof command,
             "arm-none-eabi-gcc -mcpu=cortex-m3 -mthumb -nostdlib -g -Wl,-Ttext=0x1000 "
             "-Wl,-e,Reset_Handler %s/tests/unit/data/unwind_frames.S -o %s",
             SPOOR_SOURCE_DIR, out);
    if (system(command) != 0) {
        fprintf(stderr, "cannot build the test program: %s\n", command);
        return -1;
    }
    elf = spoor_elf_open(out);
    if (elf == NULL) {
        fprintf(stderr, "%s\n", spoor_last_error());
        return -1;
    }
    return 0;
}

static int close_program(void **state)
{
    (void)state;
    spoor_elf_close(elf);
    return 0;
}

/* The stack of Reset_Handler -> outer -> middle -> inner, inner's SP = S0. */
static void lay_out_call_chain(void)
{
    memset(ram, 0, sizeof ram);
    /* inner: pad 8, r4..r8, return into middle */
    put(S0 + 8, 0x44);
    put(S0 + 12, 0x55);
    put(S0 + 16, 0x66);
    put(S0 + 20, MIDDLE_R7); /* middle's frame pointer, saved by inner */
    put(S0 + 24, 0x88);
    put(S0 + 28, sym("ret_middle") | 1u);
    /* middle: VLA bytes, then saved r7 and the return into outer at r7 */
    put(MIDDLE_R7, 0x77);
    put(MIDDLE_R7 + 4, sym("ret_outer") | 1u);
    /* outer: pad 12, r4, r5, return into Reset_Handler */
    put(MIDDLE_CFA + 12, 0x1004);
    put(MIDDLE_CFA + 16, 0x55);
    put(MIDDLE_CFA + 20, sym("ret_reset") | 1u);
}

static spoor_regs leaf_regs(uint32_t return_address, uint32_t sp)
{
    spoor_regs regs = {0};
    regs.r[7] = MIDDLE_R7;
    regs.r[13] = sp;
    regs.r[14] = return_address | 1u;
    regs.r[15] = sym("leaf_body");
    regs.xpsr = 0x01000000u;
    return regs;
}

typedef struct expected {
    spoor_frame_kind kind;
    uint32_t pc;
    uint32_t sp;
} expected;

static void check_frames(const spoor_frame *frames, size_t n, const expected *want, size_t count,
                         spoor_unwind_method method)
{
    assert_int_equal(n, count);
    for (size_t i = 0; i < count; i++) {
        if (frames[i].pc != want[i].pc || frames[i].sp != want[i].sp ||
            frames[i].kind != want[i].kind) {
            fail_msg("frame %zu: pc 0x%08x sp 0x%08x kind %d, want pc 0x%08x sp 0x%08x kind %d", i,
                     frames[i].pc, frames[i].sp, frames[i].kind, want[i].pc, want[i].sp,
                     want[i].kind);
        }
        if (i > 0 && frames[i].kind == SPOOR_FRAME_CALL && frames[i - 1].kind == SPOOR_FRAME_CALL) {
            assert_string_equal(spoor_unwind_method_name(frames[i].method),
                                spoor_unwind_method_name(method));
        }
    }
}

static const spoor_unwind_method methods[] = {SPOOR_UNWIND_CFI, SPOOR_UNWIND_EHABI,
                                              SPOOR_UNWIND_PROLOGUE, SPOOR_UNWIND_SCAN};

static void test_call_chain_every_method(void **state)
{
    (void)state;
    lay_out_call_chain();
    spoor_regs regs = leaf_regs(sym("ret_inner"), S0);
    const expected want[] = {
        {SPOOR_FRAME_CALL, sym("leaf_body"), S0},
        {SPOOR_FRAME_CALL, sym("ret_inner"), S0},
        {SPOOR_FRAME_CALL, sym("ret_middle"), S0 + 32},
        {SPOOR_FRAME_CALL, sym("ret_outer"), MIDDLE_CFA},
        {SPOOR_FRAME_CALL, sym("ret_reset"), OUTER_CFA},
    };
    for (size_t m = 0; m < sizeof methods / sizeof methods[0]; m++) {
        spoor_unwind_options options = {.methods = 1u << methods[m]};
        spoor_frame frames[16];
        spoor_unwind_stop stop;
        size_t n = spoor_unwind(elf, &regs, read_ram, NULL, &options, frames, 16, &stop);
        check_frames(frames, n, want, 5, methods[m]);
        assert_int_equal(stop, SPOOR_STOP_RESET);
        assert_false(frames[0].pc_is_return);
        assert_true(frames[1].pc_is_return);
    }
    /* All methods together: CFI comes first and does everything. */
    spoor_frame frames[16];
    size_t n = spoor_unwind(elf, &regs, read_ram, NULL, NULL, frames, 16, NULL);
    check_frames(frames, n, want, 5, SPOOR_UNWIND_CFI);
    assert_int_equal(frames[0].method, SPOOR_UNWIND_REGISTERS);
}

static void test_stale_return_address_fools_only_the_scan(void **state)
{
    (void)state;
    lay_out_call_chain();
    put(S0 + 4, sym("ret_outer") | 1u); /* a dead slot in inner's padding */
    spoor_regs regs = leaf_regs(sym("ret_inner"), S0);
    spoor_frame frames[16];
    spoor_unwind_options cfi = {.methods = SPOOR_UNWIND_USE_CFI};
    size_t n = spoor_unwind(elf, &regs, read_ram, NULL, &cfi, frames, 16, NULL);
    assert_int_equal(n, 5);
    assert_int_equal(frames[2].pc, sym("ret_middle"));
    spoor_unwind_options scan = {.methods = SPOOR_UNWIND_USE_SCAN};
    n = spoor_unwind(elf, &regs, read_ram, NULL, &scan, frames, 16, NULL);
    assert_true(n >= 3);
    assert_int_equal(frames[2].pc, sym("ret_outer"));
    assert_int_equal(frames[2].method, SPOOR_UNWIND_SCAN);
}

/* A local -2 (0xFFFFFFFE) below the return address: the scan once took every 0xFFFFFFxx but
 * 0xFFFFFFFF for an EXC_RETURN; bit 1 of EXC_RETURN is RES0, so the word is no return. */
static void test_scan_skips_minus_two(void **state)
{
    (void)state;
    lay_out_call_chain();
    put(S0 + 4, 0xFFFFFFFEu);
    spoor_regs regs = leaf_regs(sym("ret_inner"), S0);
    spoor_frame frames[16];
    spoor_unwind_options scan = {.methods = SPOOR_UNWIND_USE_SCAN};
    size_t n = spoor_unwind(elf, &regs, read_ram, NULL, &scan, frames, 16, NULL);
    assert_true(n >= 3);
    assert_int_equal(frames[2].pc, sym("ret_middle"));
    assert_int_equal(frames[2].method, SPOOR_UNWIND_SCAN);
}

static void test_bad_function_pointer_continues_from_lr(void **state)
{
    (void)state;
    lay_out_call_chain();
    spoor_regs regs = leaf_regs(sym("ret_inner"), S0);
    regs.r[15] = 0xbf00de4cu; /* blx through garbage: PC is not code, LR returns */
    spoor_frame frames[16];
    spoor_unwind_stop stop;
    size_t n = spoor_unwind(elf, &regs, read_ram, NULL, NULL, frames, 16, &stop);
    const expected want[] = {
        {SPOOR_FRAME_CALL, 0xbf00de4cu, S0},
        {SPOOR_FRAME_CALL, sym("ret_inner"), S0},
        {SPOOR_FRAME_CALL, sym("ret_middle"), S0 + 32},
        {SPOOR_FRAME_CALL, sym("ret_outer"), MIDDLE_CFA},
        {SPOOR_FRAME_CALL, sym("ret_reset"), OUTER_CFA},
    };
    assert_int_equal(n, 5);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(frames[i].pc, want[i].pc);
        assert_int_equal(frames[i].sp, want[i].sp);
    }
    assert_int_equal(frames[1].method, SPOOR_UNWIND_LINK);
    assert_int_equal(stop, SPOOR_STOP_RESET);
}

/* An interrupt taken in inner (at inner_body, SP = S0); the handler called leaf. */
static void check_interrupt(uint32_t exc_return, uint32_t frame_addr, uint32_t stacked_xpsr,
                            bool psp_known, uint32_t methods_mask)
{
    bool on_psp = (exc_return & 4u) != 0;
    uint32_t handler_sp = on_psp ? HANDLER_SP : frame_addr - 8u;
    put(handler_sp, 0x1234);         /* handler's saved r4 */
    put(handler_sp + 4, exc_return); /* handler's saved LR */
    uint32_t basic = frame_addr;
    if ((exc_return & 0x20u) == 0) { /* ARMv8-M additional state context */
        put(frame_addr, (exc_return & 0x10u) ? 0xFEFA125Bu : 0xFEFA125Au);
        for (uint32_t reg = 4; reg <= 11; reg++) {
            put(frame_addr + 8 + 4 * (reg - 4), reg == 7 ? MIDDLE_R7 : 0xA0u + reg);
        }
        basic += 40;
    }
    for (uint32_t i = 0; i < 5; i++) {
        put(basic + 4 * i, 0xC0u + i); /* r0-r3, r12 */
    }
    put(basic + 20, 0);                      /* the interrupted code's LR: dead */
    put(basic + 24, sym("inner_body") | 1u); /* its PC */
    put(basic + 28, stacked_xpsr);

    spoor_regs regs = leaf_regs(sym("ret_handler"), handler_sp);
    regs.xpsr = 0x01000000u | 16u; /* in IRQ0 */
    if (psp_known) {
        regs.have |= SPOOR_HAVE_BANKED_SP;
        regs.msp = handler_sp;
        regs.psp = frame_addr;
    }
    spoor_unwind_options options = {.methods = methods_mask};
    spoor_frame frames[16];
    spoor_unwind_stop stop;
    size_t n = spoor_unwind(elf, &regs, read_ram, NULL, &options, frames, 16, &stop);
    if (on_psp && !psp_known) { /* the handler is on MSP; PSP is not in the input */
        assert_int_equal(n, 2);
        assert_int_equal(stop, SPOOR_STOP_OTHER_STACK);
        return;
    }
    const expected want[] = {
        {SPOOR_FRAME_CALL, sym("leaf_body"), handler_sp},
        {SPOOR_FRAME_CALL, sym("ret_handler"), handler_sp},
        {SPOOR_FRAME_EXCEPTION, exc_return, frame_addr},
        {SPOOR_FRAME_CALL, sym("inner_body"), S0},
        {SPOOR_FRAME_CALL, sym("ret_middle"), S0 + 32},
        {SPOOR_FRAME_CALL, sym("ret_outer"), MIDDLE_CFA},
        {SPOOR_FRAME_CALL, sym("ret_reset"), OUTER_CFA},
    };
    for (size_t i = 0; i < n && i < 7; i++) {
        if (frames[i].pc != want[i].pc || frames[i].sp != want[i].sp ||
            frames[i].kind != want[i].kind) {
            fail_msg("EXC_RETURN 0x%08x frame %zu: pc 0x%08x sp 0x%08x, want 0x%08x 0x%08x",
                     exc_return, i, frames[i].pc, frames[i].sp, want[i].pc, want[i].sp);
        }
    }
    assert_int_equal(n, 7);
    assert_int_equal(stop, SPOOR_STOP_RESET);
    assert_int_equal(frames[2].exception, 16);
    assert_int_equal(frames[2].fp_frame, (exc_return & 0x10u) == 0);
    assert_int_equal(frames[2].on_psp, on_psp);
    assert_int_equal(frames[2].additional_state, (exc_return & 0x20u) == 0);
    assert_int_equal(frames[3].method, SPOOR_UNWIND_EXCEPTION);
    assert_false(frames[3].pc_is_return);
}

/* The state of check_interrupt() inside handler (called leaf), its EXC_RETURN saved at
 * handler_sp + 4 and a basic frame at frame_addr whose interrupted code is inner_body. */
static spoor_regs handler_regs(uint32_t exc_return, uint32_t handler_sp, uint32_t frame_addr,
                               uint32_t xpsr, uint32_t stacked_xpsr)
{
    put(handler_sp, 0x1234);
    put(handler_sp + 4, exc_return);
    for (uint32_t i = 0; i < 5; i++) {
        put(frame_addr + 4 * i, 0xC0u + i);
    }
    put(frame_addr + 20, 0);
    put(frame_addr + 24, sym("inner_body") | 1u);
    put(frame_addr + 28, stacked_xpsr);
    spoor_regs regs = leaf_regs(sym("ret_handler"), handler_sp);
    regs.xpsr = xpsr;
    return regs;
}

/* No frame carries an exception number no exception has (-1, thread mode 0, reset 1, the
 * reserved 8-10 and 13); call frames carry -1. */
static void check_exception_numbers(const spoor_frame *frames, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (frames[i].kind == SPOOR_FRAME_EXCEPTION) {
            if (spoor_exception_name(frames[i].exception) == NULL) {
                fail_msg("frame %zu: exception %d", i, frames[i].exception);
            }
        } else {
            assert_int_equal(frames[i].exception, -1);
        }
    }
}

/* An EXC_RETURN value where the frame below is not a handler with a possible number (the
 * state says thread mode, or an impossible IPSR, as with the wrong firmware for a dump):
 * no method's answer is believed, no exception row, the walk ends as a bad frame. */
static void test_exception_return_outside_a_handler(void **state)
{
    (void)state;
    static const uint32_t ipsr[] = {0, 1, 8, 9, 10, 13};
    for (size_t m = 0; m < sizeof methods / sizeof methods[0]; m++) {
        for (size_t i = 0; i < sizeof ipsr / sizeof ipsr[0]; i++) {
            lay_out_call_chain();
            spoor_regs regs =
                handler_regs(0xFFFFFFF9u, S0 - 40, S0 - 32, 0x01000000u | ipsr[i], 0x01000000u);
            spoor_unwind_options options = {.methods = 1u << methods[m]};
            spoor_frame frames[16];
            spoor_unwind_stop stop;
            size_t n = spoor_unwind(elf, &regs, read_ram, NULL, &options, frames, 16, &stop);
            check_exception_numbers(frames, n);
            for (size_t k = 0; k < n; k++) {
                assert_int_equal(frames[k].kind, SPOOR_FRAME_CALL);
                assert_int_not_equal(frames[k].pc, 0xFFFFFFF9u);
            }
            assert_int_equal(n, 2); /* leaf_body, ret_handler */
            assert_int_equal(stop, SPOOR_STOP_BAD_FRAME);
        }
        /* The same stack from a HardFault handler's state crosses the frame. */
        lay_out_call_chain();
        spoor_regs regs = handler_regs(0xFFFFFFF9u, S0 - 40, S0 - 32, 0x01000003u, 0x01000000u);
        spoor_unwind_options options = {.methods = 1u << methods[m]};
        spoor_frame frames[16];
        spoor_unwind_stop stop;
        size_t n = spoor_unwind(elf, &regs, read_ram, NULL, &options, frames, 16, &stop);
        assert_int_equal(n, 7);
        assert_int_equal(frames[2].kind, SPOOR_FRAME_EXCEPTION);
        assert_int_equal(frames[2].exception, 3);
        assert_int_equal(stop, SPOOR_STOP_RESET);
    }
}

/* The exception frame an EXC_RETURN points to is not in memory: the exception row (the
 * handler's real number) is the last frame, the walk ends with "unreadable memory". */
static void test_unreadable_exception_frame(void **state)
{
    (void)state;
    memset(ram, 0, sizeof ram);
    uint32_t handler_sp = RAM_BASE + RAM_SIZE - 16; /* the frame would start at the end */
    put(handler_sp, 0x1234);
    put(handler_sp + 4, 0xFFFFFFF9u);
    spoor_regs regs = leaf_regs(sym("ret_handler"), handler_sp);
    regs.xpsr = 0x01000000u | 16u;
    for (size_t m = 0; m < sizeof methods / sizeof methods[0]; m++) {
        spoor_unwind_options options = {.methods = 1u << methods[m]};
        spoor_frame frames[16];
        spoor_unwind_stop stop;
        size_t n = spoor_unwind(elf, &regs, read_ram, NULL, &options, frames, 16, &stop);
        check_exception_numbers(frames, n);
        assert_int_equal(n, 3);
        assert_int_equal(frames[2].kind, SPOOR_FRAME_EXCEPTION);
        assert_int_equal(frames[2].exception, 16);
        assert_int_equal(frames[2].sp, handler_sp + 8);
        assert_int_equal(stop, SPOOR_STOP_UNREADABLE);
    }
}

/* A stacked xPSR the core cannot have written for that EXC_RETURN: an impossible IPSR, an
 * exception number for a return to thread mode, thread mode for a return to a handler. */
static void test_bad_exception_frame(void **state)
{
    (void)state;
    static const struct {
        uint32_t exc_return, stacked_xpsr;
    } bad[] = {
        {0xFFFFFFF9u, 0x01000000u | 3u},  /* to thread mode, IPSR 3 */
        {0xFFFFFFF9u, 0x01000000u | 13u}, /* reserved number */
        {0xFFFFFFF1u, 0x01000000u},       /* to handler mode, IPSR 0 */
        {0xFFFFFFF1u, 0x01000000u | 1u},  /* to handler mode, reset */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        lay_out_call_chain();
        spoor_regs regs =
            handler_regs(bad[i].exc_return, S0 - 40, S0 - 32, 0x01000010u, bad[i].stacked_xpsr);
        spoor_frame frames[16];
        spoor_unwind_stop stop;
        size_t n = spoor_unwind(elf, &regs, read_ram, NULL, NULL, frames, 16, &stop);
        check_exception_numbers(frames, n);
        assert_int_equal(n, 3);
        assert_int_equal(frames[2].kind, SPOOR_FRAME_EXCEPTION);
        assert_int_equal(stop, SPOOR_STOP_BAD_EXCEPTION_FRAME);
    }
    /* A nested interrupt (to handler mode, IRQ0 interrupted) is crossed. */
    lay_out_call_chain();
    spoor_regs regs = handler_regs(0xFFFFFFF1u, S0 - 40, S0 - 32, 0x01000011u, 0x01000010u);
    spoor_frame frames[16];
    spoor_unwind_stop stop;
    size_t n = spoor_unwind(elf, &regs, read_ram, NULL, NULL, frames, 16, &stop);
    assert_true(n >= 4);
    assert_int_equal(frames[2].exception, 17);
    assert_int_equal(frames[3].pc, sym("inner_body"));
}

/* The exception frame is on PSP, the walk is in a handler (on MSP): with PSP in the input it
 * is crossed there; without it the walk ends saying so, before any exception row. */
static void test_other_stack_pointer_unknown(void **state)
{
    (void)state;
    lay_out_call_chain();
    spoor_regs regs = handler_regs(0xFFFFFFFDu, HANDLER_SP, S0 - 32, 0x01000003u, 0x01000000u);
    /* a word that looks like a frame right above the handler's: the walk must not guess MSP */
    put(HANDLER_SP + 8 + 24, sym("inner_body") | 1u);
    for (size_t m = 0; m < sizeof methods / sizeof methods[0]; m++) {
        spoor_unwind_options options = {.methods = 1u << methods[m]};
        spoor_frame frames[16];
        spoor_unwind_stop stop;
        size_t n = spoor_unwind(elf, &regs, read_ram, NULL, &options, frames, 16, &stop);
        assert_int_equal(n, 2);
        assert_int_equal(stop, SPOOR_STOP_OTHER_STACK);
        assert_non_null(strstr(spoor_unwind_stop_name(stop), "psp"));
    }
    regs.have |= SPOOR_HAVE_BANKED_SP;
    regs.msp = HANDLER_SP;
    regs.psp = S0 - 32;
    spoor_frame frames[16];
    spoor_unwind_stop stop;
    size_t n = spoor_unwind(elf, &regs, read_ram, NULL, NULL, frames, 16, &stop);
    assert_int_equal(n, 7);
    assert_int_equal(frames[2].sp, S0 - 32);
    assert_true(frames[2].on_psp);
    assert_int_equal(stop, SPOOR_STOP_RESET);
}

static void test_interrupt_frames(void **state)
{
    (void)state;
    const uint32_t thumb = 0x01000000u, align = 1u << 9;
    for (size_t m = 0; m < sizeof methods / sizeof methods[0]; m++) {
        uint32_t mask = 1u << methods[m];
        lay_out_call_chain();
        check_interrupt(0xFFFFFFF9u, S0 - 32, thumb, false, mask); /* basic, MSP */
        lay_out_call_chain();
        check_interrupt(0xFFFFFFE9u, S0 - 104, thumb, false, mask); /* FP extended frame */
        lay_out_call_chain();
        check_interrupt(0xFFFFFFF9u, S0 - 36, thumb | align, false, mask); /* realigned */
        lay_out_call_chain();
        check_interrupt(0xFFFFFFFDu, S0 - 32, thumb, true, mask); /* thread on PSP */
        lay_out_call_chain();
        /* ARMv8-M: secure stack, DCRS = 0: integrity signature and r4-r11 stacked */
        check_interrupt(0xFFFFFFD9u, S0 - 72, thumb, false, mask);
        lay_out_call_chain();
        check_interrupt(0xFFFFFFFDu, S0 - 32, thumb, false, mask); /* PSP not known */
    }
}

static void test_stop_reasons(void **state)
{
    (void)state;
    spoor_frame frames[16];
    spoor_unwind_stop stop;

    lay_out_call_chain();
    spoor_regs regs = leaf_regs(sym("ret_inner"), S0);
    size_t n = spoor_unwind(elf, &regs, read_ram, NULL, NULL, frames, 2, &stop);
    assert_int_equal(n, 2);
    assert_int_equal(stop, SPOOR_STOP_FRAME_LIMIT);

    put(MIDDLE_CFA + 20, 0xFFFFFFFFu); /* outer returns to the reset value of LR */
    n = spoor_unwind(elf, &regs, read_ram, NULL, NULL, frames, 16, &stop);
    assert_int_equal(n, 4);
    assert_int_equal(stop, SPOOR_STOP_END_OF_STACK);

    regs = leaf_regs(sym("leaf_body"), S0); /* LR returns into leaf itself: same pc+sp */
    spoor_unwind_options cfi = {.methods = SPOOR_UNWIND_USE_CFI};
    n = spoor_unwind(elf, &regs, read_ram, NULL, &cfi, frames, 16, &stop);
    assert_int_equal(n, 1);
    assert_int_equal(stop, SPOOR_STOP_LOOP);

    regs = leaf_regs(0, 0x30000000u); /* in inner with an SP outside memory */
    regs.r[15] = sym("inner_body");
    n = spoor_unwind(elf, &regs, read_ram, NULL, NULL, frames, 16, &stop);
    assert_int_equal(n, 1);
    assert_int_equal(stop, SPOOR_STOP_UNREADABLE);

    /* Code without CFI (the personality stub): DWARF alone has nothing to say. */
    regs = leaf_regs(sym("ret_inner"), S0);
    regs.r[15] = sym("__aeabi_unwind_cpp_pr0");
    n = spoor_unwind(elf, &regs, read_ram, NULL, &cfi, frames, 16, &stop);
    assert_int_equal(n, 1);
    assert_int_equal(stop, SPOOR_STOP_NO_INFO);
}

/* Garbage registers over garbage memory: the walk must stay bounded and read only through
 * the reader (ASan/UBSan builds catch anything else). A fixed LCG keeps it repeatable. */
static void test_garbage_states_stay_bounded(void **state)
{
    (void)state;
    uint32_t seed = 12345u;
#define NEXT() (seed = seed * 1103515245u + 12345u, seed ^ (seed >> 16))
    for (int round = 0; round < 300; round++) {
        for (size_t i = 0; i < RAM_SIZE; i += 4) {
            uint32_t v = NEXT();
            if ((v & 7u) == 0) {
                v = 0x1000u + (v >> 8) % 0x44u; /* code-looking words */
            } else if ((v & 7u) == 1) {
                v = 0xFFFFFF00u | (v >> 24); /* EXC_RETURN-looking words */
            }
            put(RAM_BASE + (uint32_t)i, v);
        }
        spoor_regs regs = {0};
        for (int r = 0; r < 16; r++) {
            regs.r[r] = NEXT();
        }
        regs.r[13] = RAM_BASE + (NEXT() % RAM_SIZE);
        regs.r[15] = 0x1000u + NEXT() % 0x44u;
        regs.xpsr = NEXT();
        regs.have |= ((round & 1) != 0) ? SPOOR_HAVE_BANKED_SP : 0u;
        regs.psp = RAM_BASE + (NEXT() % (RAM_SIZE + 64));
        spoor_frame frames[32];
        spoor_unwind_stop stop;
        size_t n = spoor_unwind(elf, &regs, read_ram, NULL, NULL, frames, 32, &stop);
        assert_true(n >= 1 && n <= 32);
        check_exception_numbers(frames, n);
        assert_non_null(spoor_unwind_stop_name(stop));
    }
#undef NEXT
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(spoor_exception_name(3), "HardFault");
    assert_string_equal(spoor_exception_name(6), "UsageFault");
    assert_string_equal(spoor_exception_name(7), "SecureFault");
    assert_string_equal(spoor_exception_name(15), "SysTick");
    assert_string_equal(spoor_exception_name(16), "IRQ");
    assert_null(spoor_exception_name(0));
    assert_null(spoor_exception_name(-1));
    assert_string_equal(spoor_unwind_method_name(SPOOR_UNWIND_PROLOGUE), "prologue");
    assert_string_equal(spoor_unwind_stop_name(SPOOR_STOP_LOOP), "loop");
    assert_string_equal(spoor_unwind_stop_name(SPOOR_STOP_OTHER_STACK),
                        "other stack pointer unknown (no msp/psp in the input)");
    assert_string_equal(spoor_unwind_stop_name(SPOOR_STOP_BAD_EXCEPTION_FRAME),
                        "bad exception frame");
    static const int impossible[] = {-1, 0, 1, 8, 9, 10, 13};
    for (size_t i = 0; i < sizeof impossible / sizeof impossible[0]; i++) {
        assert_null(spoor_exception_name(impossible[i]));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_call_chain_every_method),
        cmocka_unit_test(test_stale_return_address_fools_only_the_scan),
        cmocka_unit_test(test_scan_skips_minus_two),
        cmocka_unit_test(test_bad_function_pointer_continues_from_lr),
        cmocka_unit_test(test_interrupt_frames),
        cmocka_unit_test(test_exception_return_outside_a_handler),
        cmocka_unit_test(test_unreadable_exception_frame),
        cmocka_unit_test(test_bad_exception_frame),
        cmocka_unit_test(test_other_stack_pointer_unknown),
        cmocka_unit_test(test_stop_reasons),
        cmocka_unit_test(test_garbage_states_stay_bounded),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, build_program, close_program);
}
