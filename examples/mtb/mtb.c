/*
 * mtb: firmware for the Micro Trace Buffer proof cases (docs/mtb.md). QEMU has no MTB; the
 * end-to-end tests turn QEMU's execution log into the image a real MTB would hold
 * (tools/virtual_mtb.py) and place it in RAM at MTB_FAKE_AREA before the program starts
 * (-device loader): a register block (POSITION, MASTER, FLOW, BASE) and the buffer it points at.
 * spoor's crash capture is configured with that register block, so the fault handler freezes
 * "the MTB" (clears MASTER.EN in the fake block) and copies the buffer into the dump, as it would
 * on a Cortex-M33 with its MTB at 0xE0043000.
 *
 * Armv6-M (mtb-m0.elf, run on QEMU's microbit: a Cortex-M0, which runs the same Thumb code an
 * M0+ does; QEMU has no M0+ machine): the microbit has 16 KiB of RAM, so the fake area is a
 * .noinit array the linker places (symbol mtb_fake_area, 1 KiB aligned: the register block at
 * its start, the buffer at +0x400), as an MTB-M0+ block sits wherever the vendor put it. The
 * overflow scenario is left out there: the Cortex-M0 has neither MSPLIM nor an MPU to stop a
 * runaway stack before it leaves RAM.
 *
 * Run under QEMU with
 *   -semihosting-config enable=on,target=native,arg=mtb,arg=SCENARIO,arg=OUTFILE
 * First boot: SCENARIO runs and ends in a fault; the dump is written and the core reset. Second
 * boot: the dump goes to OUTFILE through semihosting and the program exits with status 0.
 *
 * Scenarios (the seed's cases):
 *   loop      infinite_loop() counts; every fifth count it stops at a checkpoint; the 40th count
 *             ends in a UDF (the seed's bkpt, which QEMU would take as a semihosting call)
 *   overflow  recursion with a variable-length array until the stack guard (MSPLIM on the M33,
 *             an MPU region on the M3) stops it
 *   badjump   bad_asm_function() clears LR and jumps to 0xbf00de4c
 *   preempt   IRQ 0 pends IRQ 1 (higher priority: preempts) and IRQ 2 (same priority: tail-chained
 *             after IRQ 0 returns), then main faults
 *   driver    spoor_mtb_enable()/disable() on a fake register block in RAM (its BASE word set as
 *             an MTB would report it); prints what the driver wrote, and the status of bad
 *             configurations; exits 0
 */
#include <stdint.h>

#include "cortexm_regs.h"
#include "semihost.h"
#include "spoor/crash.h"
#include "spoor/mtb.h"

#define NOINLINE __attribute__((noinline))
#define REG32(address) (*(volatile uint32_t *)(address))

/* NVIC_IPR0 and the Armv7-M MPU (ARMv7-M ARM B3.4, B3.5) */
#define NVIC_IPR0 SCS_REG(0xE000E400u)
#define MPU_REGION_NUMBER SCS_REG(0xE000ED98u)
#define MPU_REGION_BASE SCS_REG(0xE000ED9Cu)
#define MPU_REGION_ATTRIBUTES SCS_REG(0xE000EDA0u)
#define MPU_CONTROL SCS_REG(0xE000ED94u)

extern uint8_t __ram_start[];
extern uint8_t __ram_end[];
extern uint8_t __flash_start[];
extern uint8_t __flash_end[];
extern uint8_t __stack_bottom[];

#if defined(__ARM_ARCH_6M__)
/* The fake MTB: the register block at the start of the area, the buffer (at most 1 KiB) at
 * +0x400 (its BASE); the driver scenario uses 2 KiB from there. */
#define MTB_FAKE_BUFFER_OFFSET 0x400u
#define MTB_FAKE_BUFFER_MAX 1024u
#define DUMP_BUFFER_SIZE 4096u
#define STACK_WINDOW 512u
__attribute__((section(".noinit"), aligned(1024)))
uint8_t mtb_fake_area[MTB_FAKE_BUFFER_OFFSET + 2048u];
#define MTB_FAKE_AREA ((uint32_t)(uintptr_t)mtb_fake_area)
#else
/* The fake MTB: the register block at the start of the area, the buffer (at most 4 KiB) at
 * +0x1000 (its BASE), all in RAM the program does not otherwise use. */
#define MTB_FAKE_AREA_OFFSET 0x100000u /* from the start of RAM */
#define MTB_FAKE_AREA ((uint32_t)(uintptr_t)__ram_start + MTB_FAKE_AREA_OFFSET)
#define MTB_FAKE_BUFFER_OFFSET 0x1000u
#define MTB_FAKE_BUFFER_MAX 4096u
#define DUMP_BUFFER_SIZE 16384u
#define STACK_WINDOW 1024u
#endif

__attribute__((section(".noinit"), aligned(8))) static uint8_t dump_buffer[DUMP_BUFFER_SIZE];
/* address constants: the linker script's symbols */
static const spoor_range ram_ranges[1] = {
    {(uint32_t)(uintptr_t)__ram_start, (uint32_t)(uintptr_t)__ram_end}};
static const spoor_range flash_ranges[1] = {
    {(uint32_t)(uintptr_t)__flash_start, (uint32_t)(uintptr_t)__flash_end}};
volatile uint32_t mtb_sink;

static void barrier(void)
{
    __asm__ volatile("dsb\n\tisb" ::: "memory");
}

static void crash_setup(void)
{
    uint32_t area = MTB_FAKE_AREA;
    const spoor_crash_config config = {
        .buffer = dump_buffer,
        .buffer_size = sizeof dump_buffer,
        .stack_window = STACK_WINDOW,
        .ram = ram_ranges,
        .ram_count = 1u,
        .flash = flash_ranges,
        .flash_count = 1u,
        .mtb_registers = area,
        .mtb_buffer = area + MTB_FAKE_BUFFER_OFFSET,
        .mtb_buffer_size = MTB_FAKE_BUFFER_MAX,
    };
    if (!spoor_crash_init(&config)) {
        semihost_write_string("spoor_crash_init failed\n");
        semihost_exit(3);
    }
    barrier();
}

/* ---- loop ----------------------------------------------------------------------------------- */

NOINLINE void checkpoint(int i)
{
    mtb_sink = (uint32_t)i;
    if (i >= 40)
        __asm__ volatile("udf #6" ::: "memory"); /* the end of the window: a UsageFault */
}

NOINLINE void infinite_loop(void)
{
    volatile int i = 0;
    while (1) {
        i++;
        if ((i % 5) == 0)
            checkpoint(i);
    }
}

/* ---- overflow ------------------------------------------------------------------------------- */

static volatile uint32_t overflow_width = 40u;
static volatile uint32_t overflow_depth_limit = 0xFFFFFFFFu; /* never reached */

NOINLINE uint32_t recurse_func0(uint32_t depth)
{
    if (depth == overflow_depth_limit)
        return 0u;
    volatile uint8_t computation_buf[overflow_width + (depth & 3u)];
    for (uint32_t i = 0; i < sizeof computation_buf; i++)
        computation_buf[i] = (uint8_t)(depth + i);
    uint32_t below = recurse_func0(depth + 1u);
    return below + computation_buf[depth % sizeof computation_buf];
}

#if !defined(__ARM_ARCH_6M__)
static void guard_main_stack(void)
{
#if !defined(__ARM_ARCH_8M_MAIN__)
    /* an MPU region with no access at the bottom of the main stack (the M33's MSPLIM is set by
     * the startup code) */
    MPU_REGION_NUMBER = 0u;
    MPU_REGION_BASE = (uint32_t)(uintptr_t)__stack_bottom;
    MPU_REGION_ATTRIBUTES = (1u << 28) | (7u << 1) | 1u; /* XN, no access, 256 bytes, enable */
    MPU_CONTROL = (1u << 2) | 1u;                        /* PRIVDEFENA, ENABLE */
    barrier();
#endif
}
#endif

/* ---- badjump -------------------------------------------------------------------------------- */

/* the seed's function: clobbers LR, then jumps to a bogus address */
__attribute__((naked, noinline)) void bad_asm_function(void)
{
    __asm__ volatile("movs r0, #0\n"
                     "ldr r2, =0xbf00de4d\n"
                     "mov lr, r0\n"
                     "bx r2\n"
                     ".ltorg\n");
}

/* ---- preempt -------------------------------------------------------------------------------- */

NOINLINE void note(uint32_t v)
{
    mtb_sink = v;
}

void IRQ1_Handler(void)
{
    note(0x11u);
}

void IRQ2_Handler(void)
{
    note(0x22u);
}

void IRQ0_Handler(void)
{
    note(0x01u);
    NVIC_ISPR0 = 1u << 2; /* same priority: waits, then tail-chains */
    NVIC_ISPR0 = 1u << 1; /* higher priority: preempts now */
    barrier();
    note(0x02u);
}

NOINLINE void scenario_preempt(void)
{
    /* IRQ 1 at 0x40 preempts IRQ 0 and 2 at 0x80 */
    NVIC_IPR0 = 0x80u | (0x40u << 8) | (0x80u << 16);
    __asm__ volatile("cpsid i" ::: "memory");
    NVIC_ISER0 = 7u;
    NVIC_ISPR0 = 1u;
    barrier();
    __asm__ volatile("cpsie i\n\tisb" ::: "memory");
    note(0x03u);
    __asm__ volatile("udf #7" ::: "memory");
}

/* ---- driver: the register writes of spoor_mtb_enable() on a fake block ---------------------- */

static void print_word(const char *name, uint32_t value)
{
    semihost_write_string(name);
    semihost_write_hex(value);
}

static void print_block(const char *what, uint32_t status, uint32_t block)
{
    semihost_write_string(what);
    semihost_write_string(" status ");
    semihost_write_decimal(status);
    print_word(" POSITION ", REG32(block + SPOOR_MTB_REG_POSITION));
    print_word(" MASTER ", REG32(block + SPOOR_MTB_REG_MASTER));
    print_word(" FLOW ", REG32(block + SPOOR_MTB_REG_FLOW));
    print_word(" TSTART ", REG32(block + SPOOR_MTB_REG_TSTART));
    print_word(" TSTOP ", REG32(block + SPOOR_MTB_REG_TSTOP));
    semihost_write_string("\n");
}

static int scenario_driver(void)
{
    uint32_t block = MTB_FAKE_AREA + 0x40u;
    uint32_t base = block - 0x40u + MTB_FAKE_BUFFER_OFFSET;
    uint8_t *sram = (uint8_t *)(uintptr_t)base;
    for (uint32_t i = 0; i < 7u; i++)
        REG32(block + 4u * i) = 0xFFFFFFF0u; /* junk the driver must overwrite */
    REG32(block + SPOOR_MTB_REG_BASE) = base;
    for (uint32_t i = 0; i < 2048u; i++)
        sram[i] = 0xAAu;
    spoor_mtb_config c = {block, sram, 1024u, 4096u, 0u, 0u, 0u};
    print_block("plain", spoor_mtb_enable(&c), block);
    uint32_t cleared = 1;
    for (uint32_t i = 0; i < 1024u; i++)
        cleared &= sram[i] == 0u;
    semihost_write_string(cleared && sram[1024] == 0xAAu ? "buffer cleared\n"
                                                         : "buffer NOT cleared\n");
    spoor_mtb_disable();
    print_block("disabled", 0, block);
    c.buffer = sram + 1024u;
    c.watermark = 512u;
    c.tstart_comparators = 1u;
    c.tstop_comparators = 2u;
    print_block("watermark", spoor_mtb_enable(&c), block);
    semihost_write_string("frozen ");
    semihost_write_hex(spoor_mtb_freeze(block));
    print_word(" now ", REG32(block + SPOOR_MTB_REG_MASTER));
    semihost_write_string("\n");
    spoor_mtb_config bad = {block, sram, 24u, 4096u, 0u, 0u, 0u};
    semihost_write_string("bad size ");
    semihost_write_decimal(spoor_mtb_enable(&bad));
    bad.size = 8192u;
    semihost_write_string(" too large ");
    semihost_write_decimal(spoor_mtb_enable(&bad));
    bad.size = 1024u;
    bad.buffer = sram + 512u;
    semihost_write_string(" misaligned ");
    semihost_write_decimal(spoor_mtb_enable(&bad));
    bad.buffer = sram - 1024u;
    semihost_write_string(" before base ");
    semihost_write_decimal(spoor_mtb_enable(&bad));
    semihost_write_string("\n");
    return 0;
}

/* ---- main ----------------------------------------------------------------------------------- */

static bool write_to_host(void *ctx, const uint8_t *bytes, uint32_t len)
{
    return semihost_write(*(const int *)ctx, bytes, len) == 0u;
}

static int save_dump(const char *path)
{
    int handle = path ? semihost_open(path, SEMIHOST_OPEN_WRITE_BINARY) : -1;
    if (handle < 0) {
        semihost_write_string("cannot open the output file\n");
        return 1;
    }
    bool written = spoor_crash_stream(write_to_host, &handle, 512u);
    if (semihost_close(handle) != 0 || !written)
        return 1;
    spoor_crash_take();
    semihost_write_string("dump saved\n");
    return 0;
}

static int same(const char *a, const char *b)
{
    while (*a && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

int main(void)
{
    static char cmdline[256];
    char *words[3] = {0, 0, 0};
    uint32_t count = 0;
    crash_setup();
    if (semihost_get_cmdline(cmdline, sizeof cmdline)) {
        char *p = cmdline;
        while (*p && count < 3u) {
            while (*p == ' ')
                *p++ = 0;
            if (*p)
                words[count++] = p;
            while (*p && *p != ' ')
                p++;
        }
        if (*p)
            *p = 0;
    }
    if (spoor_crash_valid())
        return save_dump(count >= 3u ? words[2] : 0);
    if (count < 2u) {
        semihost_write_string("usage: mtb loop|overflow|badjump|preempt|driver OUTFILE\n");
        return 2;
    }
    if (same(words[1], "loop"))
        infinite_loop();
#if !defined(__ARM_ARCH_6M__)
    else if (same(words[1], "overflow")) {
        guard_main_stack();
        mtb_sink = recurse_func0(0u);
    }
#endif
    else if (same(words[1], "badjump"))
        bad_asm_function();
    else if (same(words[1], "preempt"))
        scenario_preempt();
    else if (same(words[1], "driver"))
        return scenario_driver();
    semihost_write_string("unknown scenario\n");
    return 2;
}
