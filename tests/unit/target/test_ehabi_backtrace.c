/* The EHABI unwinder over index tables built by hand from the encodings in the EHABI spec
 * ("Exception Handling ABI for the ARM Architecture", the exception-index table and the
 * ARM-defined personality routines), with hand-made stacks in a fake target; and over the
 * real .ARM.exidx of a program compiled by arm-none-eabi-gcc -funwind-tables at test time,
 * stopped in QEMU by gdb-multiarch, whose `bt` is the expected answer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "spoor/crash.h"
#include "spoor/elf.h"
#include "spoor/error.h"

#define FLASH_BASE 0x08000000u
#define FLASH_SIZE 0x1000u
#define RAM_BASE 0x20000000u
#define RAM_SIZE 0x1000u
#define EXIDX (FLASH_BASE + 0x800u)
#define EXTAB (FLASH_BASE + 0xA00u)
#define EXIDX_CANTUNWIND_WORD 1u

/* functions of the fake program */
#define FN_A (FLASH_BASE + 0x100u)
#define FN_B (FLASH_BASE + 0x200u)
#define FN_C (FLASH_BASE + 0x300u)
#define FN_D (FLASH_BASE + 0x400u)
#define FN_E (FLASH_BASE + 0x500u)

static uint8_t flash[FLASH_SIZE];
static uint8_t ram[RAM_SIZE];
static const spoor_range flash_range[] = {{FLASH_BASE, FLASH_BASE + FLASH_SIZE}};
static const spoor_range ram_range[] = {{RAM_BASE, RAM_BASE + RAM_SIZE}};
static uint32_t exidx_count;
static uint32_t extab_used;

/* Copies the fake target's bytes at [addr, addr+len); false outside flash and RAM. */
static bool copy_target(uint32_t addr, void *dst, size_t len)
{
    if (addr >= FLASH_BASE && addr + (uint64_t)len <= FLASH_BASE + FLASH_SIZE) {
        memcpy(dst, flash + (addr - FLASH_BASE), len);
        return true;
    }
    if (addr >= RAM_BASE && addr + (uint64_t)len <= RAM_BASE + RAM_SIZE) {
        memcpy(dst, ram + (addr - RAM_BASE), len);
        return true;
    }
    return false;
}

static bool fake_read(void *ctx, uint32_t addr, void *dst, uint32_t len)
{
    (void)ctx;
    if (copy_target(addr, dst, len))
        return true;
    fail_msg("unchecked read at 0x%08x", addr); /* the unwinder must check ranges first */
    return false;
}

static const spoor_memory memory = {fake_read, NULL, ram_range, 1, flash_range, 1};

static void put_flash(uint32_t addr, uint32_t v)
{
    uint8_t *p = flash + (addr - FLASH_BASE);
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put_ram(uint32_t addr, uint32_t v)
{
    uint8_t *p = ram + (addr - RAM_BASE);
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t prel31_to(uint32_t target, uint32_t place)
{
    return (target - place) & 0x7FFFFFFFu;
}

/* Index entries must be added in address order (the linker sorts them). */
static void add_entry(uint32_t fn, uint32_t second)
{
    uint32_t at = EXIDX + 8u * exidx_count++;
    put_flash(at, prel31_to(fn, at));
    put_flash(at + 4, second);
}

/* An entry whose second word points to words placed in .ARM.extab. */
static void add_extab_entry(uint32_t fn, const uint32_t *words, uint32_t count)
{
    uint32_t tab = EXTAB + extab_used;
    for (uint32_t i = 0; i < count; i++)
        put_flash(tab + 4u * i, words[i]);
    extab_used += 4u * count;
    add_entry(fn, prel31_to(tab, EXIDX + 8u * exidx_count + 4u));
}

static spoor_ehabi_table table(void)
{
    return (spoor_ehabi_table){EXIDX, EXIDX + 8u * exidx_count};
}

static int reset(void **state)
{
    (void)state;
    memset(flash, 0, sizeof flash);
    memset(ram, 0xEE, sizeof ram);
    exidx_count = 0;
    extab_used = 0;
    return 0;
}

static spoor_ehabi_state at(uint32_t pc, uint32_t sp, uint32_t lr)
{
    spoor_ehabi_state st;
    memset(&st, 0, sizeof st);
    st.r[15] = pc;
    st.r[13] = sp;
    st.r[14] = lr;
    return st;
}

/* push {r4, lr} -> inline Su16 entry "pop {r4, r14}; finish; finish" = 0x80A8B0B0 */
static void inline_pop_r4_lr(void **state)
{
    (void)state;
    add_entry(FN_A, 0x80A8B0B0u);
    add_entry(FN_B, EXIDX_CANTUNWIND_WORD);
    spoor_ehabi_table t = table();
    uint32_t sp = RAM_BASE + 0x100;
    put_ram(sp, 0x44444444u);     /* r4 */
    put_ram(sp + 4, FN_B + 0x11); /* lr: return into B, Thumb bit set */
    spoor_ehabi_state st = at(FN_A + 0x10, sp, 0);
    assert_int_equal(spoor_ehabi_step(&t, &memory, &st), -1);
    assert_int_equal(st.r[15], FN_B + 0x10);
    assert_int_equal(st.r[13], sp + 8);
    assert_int_equal(st.r[4], 0x44444444u);
    assert_true(st.pc_is_return);
    /* B cannot be unwound: the walk ends there */
    assert_int_equal(spoor_ehabi_step(&t, &memory, &st), SPOOR_EHABI_END);
}

/* push {r4-r7, lr}; sub sp, #8 -> "vsp += 8; pop {r4-r7, r14}" = 0x8001ABB0, then a chain of
 * three frames ending at LR = 0xFFFFFFFF (the reset value). */
static void chain_to_end_of_stack(void **state)
{
    (void)state;
    add_entry(FN_A, 0x8001ABB0u);
    add_entry(FN_B, 0x80A8B0B0u);
    add_entry(FN_C, 0x80A8B0B0u);
    spoor_ehabi_table t = table();
    uint32_t sp = RAM_BASE + 0x200;
    /* A's frame: 8 bytes of locals, r4-r7, lr */
    put_ram(sp + 8, 4);
    put_ram(sp + 12, 5);
    put_ram(sp + 16, 6);
    put_ram(sp + 20, 7);
    put_ram(sp + 24, FN_B + 0x21);
    /* B's frame: r4, lr */
    put_ram(sp + 28, 0xB4);
    put_ram(sp + 32, FN_C + 0x31);
    /* C's frame: r4, lr = end */
    put_ram(sp + 36, 0xC4);
    put_ram(sp + 40, 0xFFFFFFFFu);
    spoor_ehabi_state st = at(FN_A + 0x41, sp, 0);
    uint32_t pcs[8];
    int stop = -99;
    uint32_t n = spoor_ehabi_unwind(&t, &memory, &st, pcs, 8, &stop);
    assert_int_equal(n, 3);
    assert_int_equal(pcs[0], FN_A + 0x40);
    assert_int_equal(pcs[1], FN_B + 0x20);
    assert_int_equal(pcs[2], FN_C + 0x30);
    assert_int_equal(stop, SPOOR_EHABI_END);

    /* the same walk into a two-entry array stops because it is full */
    n = spoor_ehabi_unwind(&t, &memory, &st, pcs, 2, &stop);
    assert_int_equal(n, 2);
    assert_int_equal(stop, SPOOR_EHABI_FULL);
}

/* PR1 (Lu16) in .ARM.extab with one extra word: "vsp = r7; vsp += 16; pop {r4, r5, r7, r14}"
 * = 0x97 0x03 0x84 0x0B then finish. */
static void extab_pr1_frame_pointer_and_mask(void **state)
{
    (void)state;
    const uint32_t words[] = {0x81019703u, 0x840BB0B0u};
    add_extab_entry(FN_A, words, 2);
    add_entry(FN_B, EXIDX_CANTUNWIND_WORD);
    spoor_ehabi_table t = table();
    uint32_t r7 = RAM_BASE + 0x300;
    put_ram(r7 + 16, 0x4);
    put_ram(r7 + 20, 0x5);
    put_ram(r7 + 24, r7 + 0x100); /* caller's r7 */
    put_ram(r7 + 28, FN_B + 0x9);
    spoor_ehabi_state st = at(FN_A + 0x20, RAM_BASE + 0x2C0, 0);
    st.r[7] = r7;
    assert_int_equal(spoor_ehabi_step(&t, &memory, &st), -1);
    assert_int_equal(st.r[15], FN_B + 0x8);
    assert_int_equal(st.r[13], r7 + 32);
    assert_int_equal(st.r[4], 4);
    assert_int_equal(st.r[5], 5);
    assert_int_equal(st.r[7], r7 + 0x100);
}

/* PR2 (Lu32), no extra words: "pop {r0, r1}" (0xB1 0x03) then "vsp += 0x204 + (129 << 2)"
 * with the ULEB128 129 = 0x81 0x01 - needs one extra word. */
static void extab_pr2_pop_low_and_uleb(void **state)
{
    (void)state;
    const uint32_t words[] = {0x8201B103u, 0xB28101B0u};
    add_extab_entry(FN_A, words, 2);
    add_entry(FN_B, 0x80B0B0B0u);
    spoor_ehabi_table t = table();
    uint32_t sp = RAM_BASE + 0x10;
    put_ram(sp, 0xA0);
    put_ram(sp + 4, 0xA1);
    spoor_ehabi_state st = at(FN_A + 2, sp, FN_B + 0x31);
    assert_int_equal(spoor_ehabi_step(&t, &memory, &st), -1);
    assert_int_equal(st.r[0], 0xA0);
    assert_int_equal(st.r[1], 0xA1);
    assert_int_equal(st.r[13], sp + 8 + 0x204 + 129 * 4);
    assert_int_equal(st.r[15], FN_B + 0x30); /* from LR: no PC popped */
}

/* "pop {r4-r11, r15}" by mask 0x88 0xFF... here {r4, r15} = 0x88 0x01: PC from the stack. */
static void pop_pc_by_mask(void **state)
{
    (void)state;
    add_entry(FN_A, 0x808801B0u);
    add_entry(FN_B, 0x80B0B0B0u);
    spoor_ehabi_table t = table();
    uint32_t sp = RAM_BASE + 0x40;
    put_ram(sp, 0x1234);
    put_ram(sp + 4, FN_B + 0x45);
    spoor_ehabi_state st = at(FN_A + 4, sp, 0x0BADBAD0u);
    assert_int_equal(spoor_ehabi_step(&t, &memory, &st), -1);
    assert_int_equal(st.r[4], 0x1234);
    assert_int_equal(st.r[15], FN_B + 0x44);
    assert_int_equal(st.r[13], sp + 8);
}

/* VFP: "vpush {d8-d11}" is 0xC9 0x83 (32 bytes), FSTMFDX d8-d9 is 0xB9 (16 + 4), "vpush
 * {d8}" short form 0xD0 (8); then "pop {r14}" via mask 0x84 0x00. Needs PR1 for 6 bytes. */
static void vfp_pops_adjust_vsp(void **state)
{
    (void)state;
    const uint32_t words[] = {0x8101C983u, 0xB9D08400u};
    add_extab_entry(FN_A, words, 2);
    add_entry(FN_B, 0x80B0B0B0u);
    spoor_ehabi_table t = table();
    uint32_t sp = RAM_BASE + 0x400;
    put_ram(sp + 32 + 20 + 8, FN_B + 0x51);
    spoor_ehabi_state st = at(FN_A + 4, sp, 0);
    assert_int_equal(spoor_ehabi_step(&t, &memory, &st), -1);
    assert_int_equal(st.r[13], sp + 32 + 20 + 8 + 4);
    assert_int_equal(st.r[15], FN_B + 0x50);
}

/* "vsp -= 4" (0x40) then "vsp += 8" (0x01) - net +4 - then finish: a frameless function
 * whose caller is in LR. */
static void vsp_decrement(void **state)
{
    (void)state;
    add_entry(FN_A, 0x804001B0u);
    add_entry(FN_B, 0x80B0B0B0u);
    spoor_ehabi_table t = table();
    spoor_ehabi_state st = at(FN_A + 4, RAM_BASE + 0x80, FN_B + 0x3);
    assert_int_equal(spoor_ehabi_step(&t, &memory, &st), -1);
    assert_int_equal(st.r[13], RAM_BASE + 0x84);
    assert_int_equal(st.r[15], FN_B + 0x2);
}

/* Frame 0 (or a PC from an exception frame) at a function's first instruction: nothing is
 * pushed yet, so the table's instructions do not apply; the caller is LR, SP stays. */
static void first_instruction_returns_to_lr(void **state)
{
    (void)state;
    add_entry(FN_A, 0x804001B0u); /* vsp += 4 ... as if after the prologue */
    add_entry(FN_B, 0x80B0B0B0u);
    spoor_ehabi_table t = table();
    spoor_ehabi_state st = at(FN_A, RAM_BASE + 0x80, FN_B + 0x3);
    assert_int_equal(spoor_ehabi_step(&t, &memory, &st), -1);
    assert_int_equal(st.r[13], RAM_BASE + 0x80);
    assert_int_equal(st.r[15], FN_B + 0x2);
}

/* A personality routine of the generic model (GCC's __gxx_personality_v0 layout): the
 * word after its address holds the extra-word count and three instructions. */
static void generic_personality(void **state)
{
    (void)state;
    const uint32_t words[] = {prel31_to(FN_E, EXTAB), 0x00A8B0B0u};
    add_extab_entry(FN_A, words, 2);
    add_entry(FN_B, 0x80B0B0B0u);
    spoor_ehabi_table t = table();
    uint32_t sp = RAM_BASE + 0x100;
    put_ram(sp, 4);
    put_ram(sp + 4, FN_B + 0x61);
    spoor_ehabi_state st = at(FN_A + 6, sp, 0);
    assert_int_equal(spoor_ehabi_step(&t, &memory, &st), -1);
    assert_int_equal(st.r[15], FN_B + 0x60);
}

static void refusals_and_bad_opcodes(void **state)
{
    (void)state;
    add_entry(FN_A, 0x808000B0u); /* 0x80 0x00: refuse to unwind */
    add_entry(FN_B, 0x80B4B0B0u); /* 0xB4: spare */
    add_entry(FN_C, 0x809DB0B0u); /* 0x9D: reserved (vsp = r13) */
    add_entry(FN_D, 0x83B0B0B0u); /* personality index 3 in an inline entry: not ARM's */
    add_entry(FN_E, 0x80B100B0u); /* 0xB1 0x00: spare */
    spoor_ehabi_table t = table();
    struct {
        uint32_t pc;
        int want;
    } cases[] = {
        {FN_A + 2, SPOOR_EHABI_REFUSED},    {FN_B + 2, SPOOR_EHABI_BAD_OPCODE},
        {FN_C + 2, SPOOR_EHABI_BAD_OPCODE}, {FN_D + 2, SPOOR_EHABI_REFUSED},
        {FN_E + 2, SPOOR_EHABI_BAD_OPCODE}, {FN_A - 2, SPOOR_EHABI_NO_ENTRY},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        spoor_ehabi_state st = at(cases[i].pc, RAM_BASE + 0x100, FN_B + 1);
        assert_int_equal(spoor_ehabi_step(&t, &memory, &st), cases[i].want);
    }
}

/* Reads outside the RAM ranges and PCs outside flash stop the walk before any access. */
static void address_checks(void **state)
{
    (void)state;
    add_entry(FN_A, 0x80A8B0B0u);
    add_entry(FN_B, 0x80B0B0B0u);
    spoor_ehabi_table t = table();
    /* SP near the end of RAM: the pop of lr would read past it */
    spoor_ehabi_state st = at(FN_A + 2, RAM_BASE + RAM_SIZE - 4, 0);
    assert_int_equal(spoor_ehabi_step(&t, &memory, &st), SPOOR_EHABI_BAD_READ);
    /* SP in unmapped space */
    st = at(FN_A + 2, 0x40000000u, 0);
    assert_int_equal(spoor_ehabi_step(&t, &memory, &st), SPOOR_EHABI_BAD_READ);
    /* unaligned SP */
    st = at(FN_A + 2, RAM_BASE + 0x102, 0);
    assert_int_equal(spoor_ehabi_step(&t, &memory, &st), SPOOR_EHABI_BAD_READ);
    /* the popped return address is not in flash */
    put_ram(RAM_BASE + 0x100, 0);
    put_ram(RAM_BASE + 0x104, 0x60000001u);
    st = at(FN_A + 2, RAM_BASE + 0x100, 0);
    assert_int_equal(spoor_ehabi_step(&t, &memory, &st), SPOOR_EHABI_BAD_PC);
    /* an index table that is not in flash is not read */
    spoor_ehabi_table outside = {0x30000000u, 0x30000010u};
    st = at(FN_A + 2, RAM_BASE + 0x100, 0);
    assert_int_equal(spoor_ehabi_step(&outside, &memory, &st), SPOOR_EHABI_BAD_READ);
}

/* A return address just past a call at the very end of A belongs to A, not to B. */
static void return_address_at_next_function(void **state)
{
    (void)state;
    add_entry(FN_A, 0x80A8B0B0u);           /* A: push {r4, lr} */
    add_entry(FN_B, EXIDX_CANTUNWIND_WORD); /* B: cannot unwind */
    spoor_ehabi_table t = table();
    uint32_t sp = RAM_BASE + 0x100;
    put_ram(sp, 0);
    put_ram(sp + 4, 0xFFFFFFFFu);
    spoor_ehabi_state st = at(FN_B, sp, 0);
    st.pc_is_return = true;
    assert_int_equal(spoor_ehabi_step(&t, &memory, &st), SPOOR_EHABI_END); /* A's rules ran */
    st = at(FN_B, sp, 0);
    st.pc_is_return = false;
    assert_int_equal(spoor_ehabi_step(&t, &memory, &st), SPOOR_EHABI_END); /* B: CANTUNWIND */
    /* tell the two apart: make A's pop yield a real caller */
    put_ram(sp + 4, FN_A + 0x11);
    add_entry(FN_C, 0x80B0B0B0u);
    st = at(FN_B, sp, 0);
    st.pc_is_return = true;
    assert_int_equal(spoor_ehabi_step(&t, &memory, &st), -1);
    assert_int_equal(st.r[15], FN_A + 0x10);
}

/* An exception frame: the leaf's LR is EXC_RETURN 0xFFFFFFF9 (thread mode, MSP, basic frame);
 * the caller is the interrupted PC from the stacked frame, then unwinding goes on. */
static void crosses_exception_frame(void **state)
{
    (void)state;
    add_entry(FN_A, 0x80B0B0B0u); /* the handler: a leaf, no frame */
    add_entry(FN_B, 0x80A8B0B0u); /* interrupted: push {r4, lr} */
    add_entry(FN_C, 0x80B0B0B0u);
    spoor_ehabi_table t = table();
    uint32_t sp = RAM_BASE + 0x500;
    const uint32_t frame[8] = {0, 1, 2, 3, 12, FN_C + 0x7, FN_B + 0x22, 0x01000200u};
    for (int i = 0; i < 8; i++)
        put_ram(sp + 4u * (uint32_t)i, frame[i]);
    /* xPSR bit 9: an alignment word follows the frame; then B's push {r4, lr} */
    put_ram(sp + 0x24, 0x4);
    put_ram(sp + 0x28, 0xFFFFFFFFu);
    spoor_ehabi_state st = at(FN_A + 8, sp, 0xFFFFFFF9u);
    uint32_t pcs[8];
    int stop;
    uint32_t n = spoor_ehabi_unwind(&t, &memory, &st, pcs, 8, &stop);
    assert_int_equal(n, 2);
    assert_int_equal(pcs[0], FN_A + 8);
    assert_int_equal(pcs[1], FN_B + 0x22);
    assert_int_equal(stop, SPOOR_EHABI_END);

    /* a frame on PSP is followed only when PSP is known */
    st = at(FN_A + 8, RAM_BASE + 0x700, 0xFFFFFFFDu);
    n = spoor_ehabi_unwind(&t, &memory, &st, pcs, 8, &stop);
    assert_int_equal(n, 1);
    assert_int_equal(stop, SPOOR_EHABI_END);
    st.psp = sp;
    n = spoor_ehabi_unwind(&t, &memory, &st, pcs, 8, &stop);
    assert_int_equal(n, 2);
    assert_int_equal(pcs[1], FN_B + 0x22);
    assert_int_equal(stop, SPOOR_EHABI_END);

    /* an extended (FP) frame is 0x68 bytes: EXC_RETURN 0xFFFFFFE9 */
    put_ram(sp + 0x1c, 0x01000000u); /* no alignment word this time */
    put_ram(sp + 0x68, 0x4);
    put_ram(sp + 0x6c, 0xFFFFFFFFu);
    st = at(FN_A + 8, sp, 0xFFFFFFE9u);
    assert_int_equal(spoor_ehabi_step(&t, &memory, &st), -1);
    assert_int_equal(st.r[15], FN_B + 0x22);
    assert_int_equal(st.r[13], sp + 0x68);
    assert_false(st.pc_is_return);
    assert_int_equal(st.r[14], FN_C + 0x7);
    assert_int_equal(st.r[12], 12);
}

/* A function whose rules leave SP and PC unchanged would loop forever: stopped. */
static void no_progress(void **state)
{
    (void)state;
    add_entry(FN_A, 0x80B0B0B0u);
    spoor_ehabi_table t = table();
    spoor_ehabi_state st = at(FN_A + 4, RAM_BASE + 0x100, FN_A + 5);
    uint32_t pcs[100];
    int stop;
    uint32_t n = spoor_ehabi_unwind(&t, &memory, &st, pcs, 100, &stop);
    assert_int_equal(stop, SPOOR_EHABI_NO_PROGRESS);
    assert_true(n <= SPOOR_EHABI_MAX_STEPS + 1);
}

/* ---- the machine itself (spoor_ehabi_exec), as the host unwinder calls it ------------------ */

/* The machine's reader over the fake target: false outside flash and RAM. */
static bool machine_read(void *ctx, uint32_t addr, void *dst, size_t len)
{
    (void)ctx;
    return copy_target(addr, dst, len);
}

static spoor_ehabi_source machine_source(void)
{
    return (spoor_ehabi_source){
        EXIDX, EXIDX + 8u * exidx_count, {machine_read, NULL}, {machine_read, NULL}};
}

/* EHABI32 section 5: an index entry's second word may hold the whole table entry "if it can be
 * encoded in 31 bits"; a Lu16/Lu32 entry (personality 1/2) with no extra words can (two
 * instructions in bits 15-0), one that counts extra words cannot: they would have nowhere to
 * be. The target refused the first, the host read the second's words from address 4. */
static void inline_personality_1_and_2(void **state)
{
    (void)state;
    add_entry(FN_A, 0x8100A8B0u); /* PR1, 0 extra words: pop {r4, r14}; finish */
    add_entry(FN_B, 0x8200A8B0u); /* PR2, the same */
    add_entry(FN_C, 0x8101A8B0u); /* PR1 counting 1 extra word: not encodable inline */
    add_entry(FN_D, EXIDX_CANTUNWIND_WORD);
    spoor_ehabi_table t = table();
    uint32_t sp = RAM_BASE + 0x100;
    put_ram(sp, 0x44u);
    put_ram(sp + 4, FN_D + 0x11);
    for (uint32_t fn = FN_A; fn <= FN_B; fn += FN_B - FN_A) {
        spoor_ehabi_state st = at(fn + 4, sp, 0);
        assert_int_equal(spoor_ehabi_step(&t, &memory, &st), SPOOR_EHABI_STEPPED);
        assert_int_equal(st.r[4], 0x44u);
        assert_int_equal(st.r[13], sp + 8);
        assert_int_equal(st.r[15], FN_D + 0x10);
    }
    spoor_ehabi_state st = at(FN_C + 4, sp, 0);
    assert_int_equal(spoor_ehabi_step(&t, &memory, &st), SPOOR_EHABI_REFUSED);
}

/* EHABI32 section 5: the first word of an index entry is the function's address "or-d with 1
 * for a Thumb function". A PC at the very start of B must find B's entry, not A's (the host
 * compared the raw word), and with SPOOR_EHABI_EXACT_PC nothing is pushed there yet. */
static void thumb_bit_in_index_entries(void **state)
{
    (void)state;
    add_entry(FN_A | 1u, 0x80B0B0B0u); /* A: a leaf, LR returns */
    add_entry(FN_B | 1u, 0x80A8B0B0u); /* B: push {r4, lr} */
    add_entry(FN_C | 1u, EXIDX_CANTUNWIND_WORD);
    spoor_ehabi_table t = table();
    uint32_t sp = RAM_BASE + 0x100;
    put_ram(sp, 0x44u);
    put_ram(sp + 4, FN_C + 0x21);
    spoor_ehabi_state st = at(FN_B + 2, sp, FN_C + 0x41);
    assert_int_equal(spoor_ehabi_step(&t, &memory, &st), SPOOR_EHABI_STEPPED);
    assert_int_equal(st.r[15], FN_C + 0x20); /* B's rules popped the return address */
    assert_int_equal(st.r[13], sp + 8);

    spoor_ehabi_source src = machine_source();
    uint32_t r[16] = {0};
    uint16_t known = 0xFFFFu;
    r[13] = sp;
    r[14] = FN_C + 0x41;
    assert_int_equal(spoor_ehabi_exec(&src, FN_B, SPOOR_EHABI_EXACT_PC, r, &known),
                     SPOOR_EHABI_STEPPED);
    assert_int_equal(r[15], FN_C + 0x41); /* at B's first instruction: LR, raw */
    assert_int_equal(r[13], sp);
    assert_int_equal(r[4], 0);
    /* one instruction later the push has run */
    r[13] = sp;
    assert_int_equal(spoor_ehabi_exec(&src, FN_B + 2, SPOOR_EHABI_EXACT_PC, r, &known),
                     SPOOR_EHABI_STEPPED);
    assert_int_equal(r[15], FN_C + 0x21);
    assert_int_equal(r[13], sp + 8);
    assert_int_equal(r[4], 0x44u);
}

/* Lu16 allows 255 extra words (EHABI32 section 10.2, "Long" format): 82 instruction bytes here,
 * beyond the host's former 64-byte buffer. 78 times "vsp += 4", then pop {r4, r14}. */
static void long_instruction_stream(void **state)
{
    (void)state;
    uint32_t words[21];
    words[0] = 0x81140000u; /* PR1, 20 extra words, two "vsp += 4" */
    for (int i = 1; i < 20; i++)
        words[i] = 0; /* four "vsp += 4" each */
    words[20] = 0xA8B0B0B0u;
    add_extab_entry(FN_A, words, 21);
    add_entry(FN_B, EXIDX_CANTUNWIND_WORD);
    spoor_ehabi_table t = table();
    uint32_t sp = RAM_BASE + 0x100;
    put_ram(sp + 78 * 4, 0x44u);
    put_ram(sp + 78 * 4 + 4, FN_B + 0x31);
    spoor_ehabi_state st = at(FN_A + 8, sp, 0);
    assert_int_equal(spoor_ehabi_step(&t, &memory, &st), SPOOR_EHABI_STEPPED);
    assert_int_equal(st.r[4], 0x44u);
    assert_int_equal(st.r[13], sp + 78 * 4 + 8);
    assert_int_equal(st.r[15], FN_B + 0x30);
}

/* EHABI32 section 10.3, remarks d-f: FSTMFDX saves D0-D15 and "vsp += 8N + 4", VPUSH D0-D31 and
 * "vsp += 8N"; an encoding naming a register past those is Reserved and the unwind fails. */
static void vfp_register_ranges(void **state)
{
    (void)state;
    add_entry(FN_A, 0x80B30FB0u);        /* FSTMFDX D0-D15: 132 bytes */
    add_entry(FN_A + 0x40, 0x80B388B0u); /* FSTMFDX D8-D16: reserved */
    add_entry(FN_B, 0x80C80FB0u);        /* VPUSH D16-D31: 128 bytes */
    add_entry(FN_B + 0x40, 0x80C81FB0u); /* VPUSH D17-D32: reserved */
    add_entry(FN_C, 0x80C9FFB0u);        /* VPUSH D15-D30: 128 bytes */
    add_entry(FN_D, EXIDX_CANTUNWIND_WORD);
    spoor_ehabi_table t = table();
    uint32_t sp = RAM_BASE + 0x100;
    const struct {
        uint32_t pc;
        int want;
        uint32_t size;
    } cases[] = {
        {FN_A + 2, SPOOR_EHABI_STEPPED, 132}, {FN_A + 0x42, SPOOR_EHABI_BAD_OPCODE, 0},
        {FN_B + 2, SPOOR_EHABI_STEPPED, 128}, {FN_B + 0x42, SPOOR_EHABI_BAD_OPCODE, 0},
        {FN_C + 2, SPOOR_EHABI_STEPPED, 128},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        spoor_ehabi_state st = at(cases[i].pc, sp, FN_D + 0x51);
        assert_int_equal(spoor_ehabi_step(&t, &memory, &st), cases[i].want);
        if (cases[i].want == SPOOR_EHABI_STEPPED) {
            assert_int_equal(st.r[13], sp + cases[i].size);
            assert_int_equal(st.r[15], FN_D + 0x50);
        }
    }
}

/* The host knows only some registers of a frame: the machine refuses what needs an unknown one
 * (vsp = r7, the SP it starts from, LR when no PC is popped) and marks what it restored. */
static void machine_tracks_known_registers(void **state)
{
    (void)state;
    add_entry(FN_A, 0x8097A8B0u); /* vsp = r7; pop {r4, r14}; finish */
    add_entry(FN_B, 0x80B0B0B0u); /* a leaf */
    add_entry(FN_C, EXIDX_CANTUNWIND_WORD);
    spoor_ehabi_source src = machine_source();
    uint32_t r7 = RAM_BASE + 0x200;
    put_ram(r7, 0x44u);
    put_ram(r7 + 4, FN_C + 0x61);
    const uint16_t sp_pc = (1u << 13) | (1u << 15);

    uint32_t r[16] = {0};
    r[7] = r7;
    r[13] = RAM_BASE + 0x100;
    uint16_t known = sp_pc;
    assert_int_equal(spoor_ehabi_exec(&src, FN_A + 4, 0, r, &known), SPOOR_EHABI_REFUSED);
    known = sp_pc | (1u << 7);
    assert_int_equal(spoor_ehabi_exec(&src, FN_A + 4, 0, r, &known), SPOOR_EHABI_STEPPED);
    assert_int_equal(known, sp_pc | (1u << 7) | (1u << 4) | (1u << 14));
    assert_int_equal(r[4], 0x44u);
    assert_int_equal(r[14], FN_C + 0x61);
    assert_int_equal(r[15], FN_C + 0x61);
    assert_int_equal(r[13], r7 + 8);

    /* a leaf returns through LR: only when LR is known */
    r[13] = RAM_BASE + 0x100;
    known = sp_pc;
    assert_int_equal(spoor_ehabi_exec(&src, FN_B + 2, 0, r, &known), SPOOR_EHABI_REFUSED);
    known = sp_pc | (1u << 14);
    r[14] = FN_C + 0x71;
    assert_int_equal(spoor_ehabi_exec(&src, FN_B + 2, 0, r, &known), SPOOR_EHABI_STEPPED);
    assert_int_equal(r[15], FN_C + 0x71);
    assert_int_equal(r[13], RAM_BASE + 0x100);
    /* without SP there is no vsp */
    known = 0xFFFFu & ~(1u << 13);
    assert_int_equal(spoor_ehabi_exec(&src, FN_B + 2, 0, r, &known), SPOOR_EHABI_REFUSED);
    /* a stack the reader cannot supply */
    r[7] = 0x40000000u;
    known = 0xFFFFu;
    assert_int_equal(spoor_ehabi_exec(&src, FN_A + 4, 0, r, &known), SPOOR_EHABI_BAD_READ);
}

/* ---- a real .ARM.exidx, checked against gdb ---------------------------------------------- */

static const char fixture_c[] =
    "#include <stdint.h>\n"
    "extern uint32_t __stack_top[];\n"
    "void reset(void);\n"
    "__attribute__((section(\".vectors\"), used)) const void *vectors[2] = {__stack_top, (void "
    "*)reset};\n"
    "volatile uint32_t sink;\n"
    "volatile float fsink = 1.5f;\n"
    "__attribute__((noinline)) void deepest(int x) { sink = (uint32_t)x; }\n"
    "__attribute__((noinline)) void level5(void (*fn)(int), int x) { fn(x + 1); sink += 1; }\n"
    "__attribute__((noinline)) float with_float(float f) {\n"
    "    float keep = f * fsink, more = f + fsink;\n"
    "    level5(deepest, (int)f);\n"
    "    return keep * more + fsink;\n"
    "}\n"
    "__attribute__((noinline)) void level3(int x) {\n"
    "    volatile uint8_t big[700]; big[x % 700] = 1;\n"
    "    fsink = with_float((float)(big[3] + x)); sink += big[5];\n"
    "}\n"
    "__attribute__((noinline)) void level2(int n) {\n"
    "    volatile uint8_t vla[n + 4]; vla[0] = 1; level3(vla[0] + n); sink += vla[1];\n"
    "}\n"
    "__attribute__((noinline)) int level1(int a, int b, int c, int d) {\n"
    "    int v[8]; for (int i = 0; i < 8; i++) v[i] = (int)sink * i + a;\n"
    "    level2(a + b);\n"
    "    int s = 0; for (int i = 0; i < 8; i++) s += v[i] * (b + c + d + i);\n"
    "    return s + a * b * c * d;\n"
    "}\n"
    "int main(void) { sink = (uint32_t)level1(3, 4, 5, 6); for (;;) {} }\n"
    "void reset(void) {\n"
    "#ifdef __ARM_FP\n"
    "    *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20; /* CPACR: enable CP10/CP11 */\n"
    "    __asm volatile(\"dsb\\n isb\");\n"
    "#endif\n"
    "    main();\n"
    "}\n"
    "/* -funwind-tables refers to these; the program never throws */\n"
    "void __aeabi_unwind_cpp_pr0(void) {}\n"
    "void __aeabi_unwind_cpp_pr1(void) {}\n"
    "void __aeabi_unwind_cpp_pr2(void) {}\n";

static const char fixture_ld[] =
    "MEMORY { FLASH (rx) : ORIGIN = 0, LENGTH = 256K\n"
    "         RAM (rwx) : ORIGIN = 0x20000000, LENGTH = %uK }\n"
    "SECTIONS {\n"
    "  .text : { KEEP(*(.vectors)) *(.text .text.*) *(.rodata .rodata.*) } > FLASH\n"
    "  .ARM.extab : { *(.ARM.extab*) } > FLASH\n"
    "  .ARM.exidx : { __exidx_start = .; *(.ARM.exidx*) __exidx_end = .; } > FLASH\n"
    "  .data : { *(.data .data.*) } > RAM AT > FLASH\n"
    "  .bss (NOLOAD) : { *(.bss .bss.* COMMON) } > RAM\n"
    "  __stack_top = ORIGIN(RAM) + LENGTH(RAM);\n"
    "}\n";

static bool write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    fputs(text, f);
    return fclose(f) == 0;
}

static bool have_tools(void)
{
    return system("arm-none-eabi-gcc --version >/dev/null 2>&1") == 0 &&
           system("qemu-system-arm --version >/dev/null 2>&1") == 0 &&
           system("gdb-multiarch --version >/dev/null 2>&1") == 0;
}

typedef struct real_target {
    const spoor_elf *elf;
    uint8_t *stack;
    uint32_t stack_base, stack_len;
} real_target;

static bool real_read(void *ctx, uint32_t addr, void *dst, uint32_t len)
{
    real_target *t = ctx;
    if (addr >= t->stack_base && addr + (uint64_t)len <= (uint64_t)t->stack_base + t->stack_len) {
        memcpy(dst, t->stack + (addr - t->stack_base), len);
        return true;
    }
    return spoor_elf_read(t->elf, addr, dst, len) == len;
}

static void real_exidx_matches_gdb(const char *cpu, const char *cflags, const char *machine,
                                   unsigned ram_kib)
{
    const uint32_t ram_end = 0x20000000u + ram_kib * 1024u;
    char ld[1024];
    snprintf(ld, sizeof ld, fixture_ld, ram_kib);
    if (!have_tools()) {
        print_message("arm-none-eabi-gcc, qemu-system-arm or gdb-multiarch missing: skipped\n");
        skip();
    }
    char dir[512], cmd[4096], path[600];
    snprintf(dir, sizeof dir, "%s/test_ehabi_backtrace", SPOOR_BUILD_DIR);
    mkdir(dir, 0777);
    snprintf(dir, sizeof dir, "%s/test_ehabi_backtrace/%s", SPOOR_BUILD_DIR, cpu);
    mkdir(dir, 0777);
    snprintf(path, sizeof path, "%s/fw.c", dir);
    assert_true(write_text(path, fixture_c));
    snprintf(path, sizeof path, "%s/fw.ld", dir);
    assert_true(write_text(path, ld));
    snprintf(cmd, sizeof cmd,
             "cd '%s' && arm-none-eabi-gcc %s -mthumb -g -funwind-tables "
             "-fno-optimize-sibling-calls -ffreestanding -nostdlib -T fw.ld fw.c -lgcc -o fw.elf",
             dir, cflags);
    assert_int_equal(system(cmd), 0);

    char script[1024];
    snprintf(script, sizeof script,
             "target remote | qemu-system-arm -M %s -kernel fw.elf -display none -serial null "
             "-monitor none -gdb stdio -S\n"
             "break deepest\n"
             "continue\n"
             "printf \"REGS %%x %%x %%x %%x %%x %%x %%x %%x %%x %%x %%x %%x %%x %%x %%x %%x\\n\", "
             "$r0,$r1,$r2,$r3,$r4,$r5,$r6,$r7,$r8,$r9,$r10,$r11,$r12,$sp,$lr,$pc\n"
             "dump binary memory stack.bin $sp 0x%08x\n"
             "bt\n"
             "kill\n",
             machine, ram_end);
    snprintf(path, sizeof path, "%s/bt.gdb", dir);
    assert_true(write_text(path, script));
    snprintf(cmd, sizeof cmd,
             "cd '%s' && rm -f stack.bin && timeout 60 gdb-multiarch -batch -nx -x bt.gdb fw.elf "
             ">gdb.out 2>&1",
             dir);
    (void)system(cmd); /* gdb's exit status after "kill" varies; the output is checked */

    /* gdb's answer: the registers at the breakpoint and the function of every bt row */
    snprintf(path, sizeof path, "%s/gdb.out", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[1024];
    spoor_ehabi_state st;
    memset(&st, 0, sizeof st);
    bool have_regs = false;
    char gdb_frames[16][64];
    unsigned gdb_count = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned v[16];
        if (sscanf(line, "REGS %x %x %x %x %x %x %x %x %x %x %x %x %x %x %x %x", &v[0], &v[1],
                   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11], &v[12],
                   &v[13], &v[14], &v[15]) == 16) {
            for (int i = 0; i < 16; i++)
                st.r[i] = v[i];
            have_regs = true;
            continue;
        }
        unsigned level;
        int at = 0;
        if (line[0] == '#' && sscanf(line, "#%u %n", &level, &at) == 1 && gdb_count < 16) {
            const char *p = line + at;
            const char *in = strstr(p, " in ");
            if (strncmp(p, "0x", 2) == 0 && in)
                p = in + 4;
            size_t n = strcspn(p, " (");
            assert_true(n < 64);
            memcpy(gdb_frames[gdb_count], p, n);
            gdb_frames[gdb_count][n] = '\0';
            gdb_count++;
        }
    }
    fclose(f);
    if (!have_regs || gdb_count < 6)
        fail_msg("gdb did not stop in deepest with a backtrace; see %s", path);

    /* the unwinder over the ELF's .ARM.exidx and the stack gdb dumped */
    snprintf(path, sizeof path, "%s/fw.elf", dir);
    spoor_elf *elf = spoor_elf_open(path);
    if (!elf)
        fail_msg("%s", spoor_last_error());
    uint32_t exidx_addr;
    const uint8_t *exidx_data;
    size_t exidx_size;
    assert_true(spoor_elf_section(elf, ".ARM.exidx", &exidx_addr, &exidx_data, &exidx_size));
    real_target target = {elf, NULL, st.r[13], ram_end - st.r[13]};
    target.stack = malloc(target.stack_len);
    snprintf(path, sizeof path, "%s/stack.bin", dir);
    f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fread(target.stack, 1, target.stack_len, f), target.stack_len);
    fclose(f);
    const spoor_range flash_r[] = {{0, 256u * 1024u}};
    const spoor_range ram_r[] = {{target.stack_base, ram_end}};
    const spoor_memory mem = {real_read, &target, ram_r, 1, flash_r, 1};
    spoor_ehabi_table t = {exidx_addr, exidx_addr + (uint32_t)exidx_size};
    uint32_t pcs[32];
    int stop;
    uint32_t n = spoor_ehabi_unwind(&t, &mem, &st, pcs, 32, &stop);

    print_message("%s: gdb %u frames, EHABI %u frames (stop %d)\n", cpu, gdb_count, n, stop);
    assert_true(n >= gdb_count);
    for (unsigned i = 0; i < gdb_count; i++) {
        const char *name = NULL;
        uint32_t start, size;
        bool found = spoor_elf_function(elf, i == 0 ? pcs[i] : pcs[i] - 1, &name, &start, &size);
        print_message("  #%u 0x%08x %-12s gdb: %s\n", i, pcs[i], found ? name : "?", gdb_frames[i]);
        assert_true(found);
        assert_string_equal(name, gdb_frames[i]);
    }
    free(target.stack);
    spoor_elf_close(elf);
}

static void real_exidx_m3(void **state)
{
    (void)state;
    real_exidx_matches_gdb("m3", "-mcpu=cortex-m3 -O1", "mps2-an385", 64);
}

static void real_exidx_m4f(void **state)
{
    (void)state;
    real_exidx_matches_gdb("m4f", "-mcpu=cortex-m4 -mfloat-abi=hard -mfpu=fpv4-sp-d16 -O2",
                           "mps2-an386", 64);
}

/* ARMv6-M: Thumb-1 prologues (high registers moved through low ones) on the micro:bit */
static void real_exidx_m0(void **state)
{
    (void)state;
    real_exidx_matches_gdb("m0", "-mcpu=cortex-m0 -Os", "microbit", 16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(inline_pop_r4_lr, reset),
        cmocka_unit_test_setup(chain_to_end_of_stack, reset),
        cmocka_unit_test_setup(extab_pr1_frame_pointer_and_mask, reset),
        cmocka_unit_test_setup(extab_pr2_pop_low_and_uleb, reset),
        cmocka_unit_test_setup(pop_pc_by_mask, reset),
        cmocka_unit_test_setup(vfp_pops_adjust_vsp, reset),
        cmocka_unit_test_setup(vsp_decrement, reset),
        cmocka_unit_test_setup(first_instruction_returns_to_lr, reset),
        cmocka_unit_test_setup(generic_personality, reset),
        cmocka_unit_test_setup(refusals_and_bad_opcodes, reset),
        cmocka_unit_test_setup(address_checks, reset),
        cmocka_unit_test_setup(return_address_at_next_function, reset),
        cmocka_unit_test_setup(crosses_exception_frame, reset),
        cmocka_unit_test_setup(no_progress, reset),
        cmocka_unit_test_setup(inline_personality_1_and_2, reset),
        cmocka_unit_test_setup(thumb_bit_in_index_entries, reset),
        cmocka_unit_test_setup(long_instruction_stream, reset),
        cmocka_unit_test_setup(vfp_register_ranges, reset),
        cmocka_unit_test_setup(machine_tracks_known_registers, reset),
        cmocka_unit_test(real_exidx_m3),
        cmocka_unit_test(real_exidx_m4f),
        cmocka_unit_test(real_exidx_m0),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
