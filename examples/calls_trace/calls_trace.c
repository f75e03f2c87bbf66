/*
 * calls_trace: the function-call recorder (spoor/calls.h) on a small demo program, built with
 * -finstrument-functions (this file only; startup and semihosting code are not instrumented).
 *
 *   DEMO_Init
 *   DEMO_Run -> decide -> calcValue
 *                      -> getValue -> calcValue
 *
 * Run under QEMU with
 *   -semihosting-config enable=on,target=native,arg=calls_trace,arg=MODE,arg=OUTFILE
 * Modes:
 *   plain  the demo once and again, no interrupts; then the RAM image (.data and .bss, which
 *          hold the state and the ring) goes to OUTFILE: `spoor calls -e ELF --mem ADDR:OUTFILE`
 *   irq    the demo in a loop while SysTick fires every few hundred instructions and calcValue
 *          pends device interrupt 3 (both handlers are instrumented and call instrumented code)
 *   hold   as plain, then waits in calls_done() for a debugger (`spoor calls --gdb`)
 *   wrap   the demo in a loop until the ring has wrapped many times
 *   pause  paused_work() before spoor_calls_init, while paused, and after spoor_calls_freeze
 *          (also after an enable that a frozen recorder ignores): none of it may be recorded;
 *          DEMO_Init and DEMO_Run(1) in between are
 *   fault  the demo, then decide() calls through a bad pointer: spoor's fault handler freezes
 *          the recorder and writes a crash dump holding the ring; after the reset the dump goes
 *          to OUTFILE: `spoor calls -e ELF OUTFILE`
 * Built as calls_trace_mtb-m33.elf (CALLS_TRACE_MTB), the fault handler also saves an MTB-M33:
 * QEMU has none, so its register block and buffer are a fake area in RAM (RAM + 0x100000, the
 * buffer at +0x1000, as examples/mtb) that a test fills before the program starts
 * (-device loader); spoor crash then shows the last branches and the last calls of one dump.
 * Built as calls_trace_ts-<core>.elf, the recorder has its options SPOOR_CALLS_TIME=2 (SysTick's
 * current value as timestamp) and SPOOR_CALLS_CONTEXT=1 (IPSR as context id): SysTick then
 * runs free (reload 0xFFFFFF, no interrupt) in every mode, and in irq mode only interrupt 3
 * fires.
 * Every mode stops in calls_done() (a debugger may read the ring there) and prints
 * "image 0xADDR SIZE" for the RAM image it wrote.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cortexm_regs.h"
#include "semihost.h"
#include "spoor/calls.h"
#include "spoor/crash.h"

#define NOINLINE __attribute__((noinline, noipa))
#define NOTRACE __attribute__((no_instrument_function))
#define REG32(address) (*(volatile uint32_t *)(address))

#define SYST_CSR 0xE000E010u
#define SYST_RVR 0xE000E014u
#define SYST_CVR 0xE000E018u

/* calls_trace_ts: the recorder's timestamp is SysTick's current value */
#if defined(SPOOR_CALLS_TIME) && SPOOR_CALLS_TIME
#define SYSTICK_IS_TIMESTAMP 1
#else
#define SYSTICK_IS_TIMESTAMP 0
#endif

#if defined(__ARM_ARCH_6M__)
#define RING_BYTES 2048u /* 256 records: the microbit has 16 KiB of RAM */
#define DUMP_BUFFER_SIZE 4096u
#else
#define RING_BYTES 4096u /* 512 records */
#if defined(CALLS_TRACE_MTB)
#define DUMP_BUFFER_SIZE 16384u /* the MTB's buffer too */
#else
#define DUMP_BUFFER_SIZE 8192u
#endif
#endif

static uint32_t call_ring[RING_BYTES / 4u];
volatile int demo_sink;
static volatile bool irq_mode;
static volatile uint32_t ticks, irqs;

extern uint8_t __data_start[], __bss_end[];
extern uint8_t __ram_start[], __ram_end[], __flash_start[], __flash_end[];

/* ---- the demo program ----------------------------------------------------------------------- */

NOINLINE int calcValue(int i, int j)
{
    if (irq_mode && (i & 3) == 1) {
        NVIC_ISER0 = 1u << 3;
        NVIC_ISPR0 = 1u << 3; /* taken right here, inside calcValue */
        barrier_dsb_isb();
    }
    return i * j + 1;
}

NOINLINE int getValue(int i)
{
    return calcValue(i, 3) + 2;
}

typedef int (*value_fn)(int);
volatile value_fn bad_pointer; /* set to a data address in fault mode */

NOINLINE int decide(int i)
{
    if (bad_pointer)
        return bad_pointer(i);
    if (i < 10) {
        return calcValue(i, 5) + getValue(7);
    } else {
        return getValue(i);
    }
}

NOINLINE void DEMO_Run(int rounds)
{
    for (int i = 0; i < rounds; i++)
        demo_sink += decide(i % 16);
}

NOINLINE void DEMO_Init(void)
{
    demo_sink = 0;
}

NOINLINE int paused_work(int n)
{
    return calcValue(n, 2) + 1;
}

NOINLINE int tick_work(int n)
{
    return calcValue(n, 7);
}

void SysTick_Handler(void)
{
    ticks = ticks + 1u;
    demo_sink += tick_work((int)ticks);
}

void IRQ3_Handler(void)
{
    irqs = irqs + 1u;
    demo_sink += getValue((int)irqs);
}

/* ---- set-up and hand-over (not instrumented) ------------------------------------------------ */

static volatile bool hold;

/* Where every mode ends; a debugger stops here to read the ring. In mode "hold" the program
 * stays here for a debugger to attach. */
NOTRACE NOINLINE void calls_done(void)
{
    while (hold) {
    }
}

NOTRACE static bool str_eq(const char *a, const char *b)
{
    while (*a && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

NOTRACE static uint32_t split_words(char *s, char **words, uint32_t max)
{
    uint32_t n = 0;
    while (*s && n < max) {
        while (*s == ' ')
            *s++ = 0;
        if (!*s)
            break;
        words[n++] = s;
        while (*s && *s != ' ')
            s++;
    }
    return n;
}

NOTRACE static int save(const char *path, const void *bytes, uint32_t len)
{
    int handle = semihost_open(path, SEMIHOST_OPEN_WRITE_BINARY);
    if (handle < 0 || semihost_write(handle, bytes, len) != 0u || semihost_close(handle) != 0) {
        semihost_write_string("cannot write the output file\n");
        return 1;
    }
    return 0;
}

NOTRACE static int save_image(const char *path)
{
    uint32_t start = (uint32_t)(uintptr_t)__data_start, end = (uint32_t)(uintptr_t)__bss_end;
    semihost_write_string("image ");
    semihost_write_hex(start);
    semihost_write_string(" ");
    semihost_write_decimal(end - start);
    semihost_write_string("\n");
    return path ? save(path, __data_start, end - start) : 0;
}

__attribute__((section(".noinit"), aligned(8))) static uint8_t dump_buffer[DUMP_BUFFER_SIZE];
static spoor_range ram_range[1], flash_range[1];
#if defined(CALLS_TRACE_MTB)
#define MTB_FAKE_AREA ((uint32_t)(uintptr_t)__ram_start + 0x100000u)
#define MTB_FAKE_BUFFER_OFFSET 0x1000u
#define MTB_FAKE_BUFFER_MAX 4096u
#endif

NOTRACE static void crash_setup(void)
{
    ram_range[0] = (spoor_range){(uint32_t)(uintptr_t)__ram_start, (uint32_t)(uintptr_t)__ram_end};
    flash_range[0] =
        (spoor_range){(uint32_t)(uintptr_t)__flash_start, (uint32_t)(uintptr_t)__flash_end};
    const spoor_crash_config config = {
        .buffer = dump_buffer,
        .buffer_size = sizeof dump_buffer,
        .stack_window = 256u,
        .ram = ram_range,
        .ram_count = 1u,
        .flash = flash_range,
        .flash_count = 1u,
#if defined(CALLS_TRACE_MTB)
        .mtb_registers = MTB_FAKE_AREA,
        .mtb_buffer = MTB_FAKE_AREA + MTB_FAKE_BUFFER_OFFSET,
        .mtb_buffer_size = MTB_FAKE_BUFFER_MAX,
#endif
    };
    if (!spoor_crash_init(&config)) {
        semihost_write_string("spoor_crash_init failed\n");
        semihost_exit(3);
    }
    /* the recorder's state object and its ring go into every dump */
    spoor_dump_add_region(&spoor_calls_state, sizeof spoor_calls_state, SPOOR_REGION_DATA);
    spoor_dump_add_region(call_ring, sizeof call_ring, SPOOR_REGION_DATA);
}

NOTRACE static void systick_start(uint32_t reload, uint32_t csr)
{
    REG32(SYST_RVR) = reload;
    REG32(SYST_CVR) = 0u;
    REG32(SYST_CSR) = csr;
}

NOTRACE static void systick_stop(void)
{
    REG32(SYST_CSR) = 0u;
}

NOTRACE int main(void)
{
    static char cmdline[256];
    char *words[3] = {0, 0, 0};
    uint32_t count = 0;
    crash_setup();
    if (semihost_get_cmdline(cmdline, sizeof cmdline))
        count = split_words(cmdline, words, 3u);
    const char *mode = count >= 2u ? words[1] : "plain";
    const char *out = count >= 3u ? words[2] : 0;
    if (spoor_crash_valid()) { /* second boot after the fault */
        uint32_t size = 0;
        const uint8_t *dump = spoor_crash_data(&size);
        int rc = out ? save(out, dump, size) : 1;
        spoor_crash_take();
        semihost_write_string(rc ? "no OUTFILE for the crash dump\n" : "crash dump saved\n");
        return rc;
    }
    semihost_write_string("calls_trace on " SPOOR_EXAMPLE_CPU ": ");
    semihost_write_string(mode);
    semihost_write_string("\n");
    if (SYSTICK_IS_TIMESTAMP) /* free-running, counting down, no interrupt */
        systick_start(0xFFFFFFu, 5u);
    if (str_eq(mode, "pause"))
        demo_sink += paused_work(1);
    if (!spoor_calls_init(call_ring, sizeof call_ring)) {
        semihost_write_string("spoor_calls_init failed\n");
        return 3;
    }
    if (str_eq(mode, "plain") || str_eq(mode, "hold")) {
        hold = str_eq(mode, "hold");
        DEMO_Init();
        DEMO_Run(2);
    } else if (str_eq(mode, "irq")) {
        irq_mode = true;
        if (!SYSTICK_IS_TIMESTAMP)
            systick_start(9u, 7u); /* processor clock, interrupt, enable */
        DEMO_Init();
        DEMO_Run(40);
        if (!SYSTICK_IS_TIMESTAMP)
            systick_stop();
        irq_mode = false;
    } else if (str_eq(mode, "wrap")) {
        DEMO_Init();
        DEMO_Run(600);
    } else if (str_eq(mode, "pause")) {
        DEMO_Init();
        spoor_calls_enable(false);
        demo_sink += paused_work(2);
        spoor_calls_enable(true);
        DEMO_Run(1);
        spoor_calls_freeze();
        demo_sink += paused_work(3);
        spoor_calls_enable(true);
        demo_sink += paused_work(4);
    } else if (str_eq(mode, "fault")) {
        DEMO_Init();
        DEMO_Run(3);
        bad_pointer = (value_fn)(uintptr_t)&demo_sink; /* even: no Thumb bit, faults */
        DEMO_Run(1);
        semihost_write_string("the fault did not happen\n");
        return 4;
    } else {
        semihost_write_string("unknown mode (plain, hold, irq, wrap, pause, fault)\n");
        return 2;
    }
    spoor_calls_enable(false);
    calls_done();
    semihost_write_string("ticks ");
    semihost_write_decimal(ticks);
    semihost_write_string(" irqs ");
    semihost_write_decimal(irqs);
    semihost_write_string("\n");
    return save_image(out);
}
