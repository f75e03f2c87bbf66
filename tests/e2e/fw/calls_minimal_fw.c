/* The call recorder in a firmware without a C runtime (tests/e2e/test_calls_minimal.py): built
 * with -nostdlib, linked with the target library alone, and nothing copies .data or zeroes .bss
 * (calls_minimal_fw.ld). Reset_Handler calls spoor_calls_init and then instrumented code, while
 * an instrumented SysTick handler fires every few dozen instructions. At the end the RAM from
 * .data to the end of .bss goes to the file named last on the semihosting command line, and the
 * program prints "image 0xADDR SIZE". Then it zeroes the state object, as a C runtime's .bss
 * zeroing after init would, and runs the instrumented code again: nothing may be recorded. An
 * instrumented call before spoor_calls_init (the state reads zero) records nothing either. It
 * exits with status 0 at its end; a HardFault or a failed check exits with status 1.
 * Only work_*, SysTick_Handler and main_work are instrumented (no_instrument_function on the
 * rest). */
#include <stdint.h>

#include "semihost.h"
#include "spoor/calls.h"

#define NOTRACE __attribute__((no_instrument_function))
#define NOINLINE __attribute__((noinline, noipa))
#define REG32(address) (*(volatile uint32_t *)(address))
#define SYST_CSR 0xE000E010u
#define SYST_RVR 0xE000E014u
#define SYST_CVR 0xE000E018u

extern uint32_t __stack_top[];
extern uint8_t __data_start[], __bss_end[];

uint32_t call_ring[64]; /* 32 records: the ring wraps */
volatile uint32_t sink;
volatile uint32_t ticks;
/* in .data, never copied: reads 0 here, although its initialiser says 7 */
volatile uint32_t data_word = 7u;

void Reset_Handler(void) NOTRACE __attribute__((noreturn));
void HardFault_Handler(void) NOTRACE __attribute__((noreturn));
void SysTick_Handler(void);

/* memset, as a firmware without a C library brings its own (test_calls_minimal.py checks that
 * the recorder does not call it) */
NOTRACE void *memset(void *to, int c, unsigned n);
NOTRACE void *memset(void *to, int c, unsigned n)
{
    volatile uint8_t *p = to;
    while (n--)
        *p++ = (uint8_t)c;
    return to;
}

/* ---- semihosting: semihost_call from examples/common/semihost.h (not instrumented: the build
 * leaves the header out with -finstrument-functions-exclude-file-list), no library ---------- */
NOTRACE static void put(const char *s)
{
    semihost_call(SEMIHOST_SYS_WRITE0, s);
}

NOTRACE static void put_hex(uint32_t v)
{
    char text[11] = "0x";
    for (int i = 0; i < 8; i++)
        text[2 + i] = "0123456789abcdef"[(v >> (28 - 4 * i)) & 15u];
    text[10] = 0;
    put(text);
}

NOTRACE __attribute__((noreturn)) static void leave(uint32_t ok)
{
    /* SYS_EXIT with ADP_Stopped_ApplicationExit (status 0) or RunTimeErrorUnknown (status 1) */
    semihost_call(SEMIHOST_SYS_EXIT,
                  (const void *)(uintptr_t)(ok ? SEMIHOST_ADP_STOPPED_APPLICATION_EXIT
                                               : SEMIHOST_ADP_STOPPED_RUNTIME_ERROR_UNKNOWN));
    for (;;) {
    }
}

NOTRACE static uint32_t length(const char *s)
{
    uint32_t n = 0;
    while (s[n])
        n++;
    return n;
}

/* the RAM from .data to the end of .bss to the file named last on the command line */
NOTRACE static void save_image(void)
{
    static char cmdline[200];
    uint32_t block[2] = {(uint32_t)(uintptr_t)cmdline, sizeof cmdline - 1u};
    if (semihost_call(SEMIHOST_SYS_GET_CMDLINE, block) != 0u)
        leave(0);
    char *path = cmdline;
    for (char *p = cmdline; *p; p++)
        if (*p == ' ' && p[1])
            path = p + 1;
    uint32_t start = (uint32_t)(uintptr_t)__data_start;
    uint32_t size = (uint32_t)(uintptr_t)__bss_end - start;
    uint32_t open[3] = {(uint32_t)(uintptr_t)path, SEMIHOST_OPEN_WRITE_BINARY, length(path)};
    uint32_t handle = semihost_call(SEMIHOST_SYS_OPEN, open);
    uint32_t write[3] = {handle, start, size};
    if (handle == 0xFFFFFFFFu || semihost_call(SEMIHOST_SYS_WRITE, write) != 0u)
        leave(0);
    semihost_call(SEMIHOST_SYS_CLOSE, &handle);
    put("image ");
    put_hex(start);
    put(" ");
    put_hex(size);
    put("\n");
}

/* ---- instrumented --------------------------------------------------------------------------- */
NOINLINE uint32_t work_leaf(uint32_t n)
{
    return n * 3u + data_word;
}

NOINLINE uint32_t work_mid(uint32_t n)
{
    return work_leaf(n) + work_leaf(n + 1u);
}

void SysTick_Handler(void)
{
    ticks = ticks + 1u;
    sink += work_leaf(ticks);
}

NOINLINE void main_work(void)
{
    for (uint32_t i = 0; i < 40u; i++)
        sink += work_mid(i);
}

/* ---- not instrumented ------------------------------------------------------------------------ */
NOTRACE static uint32_t ring_sum(void)
{
    uint32_t sum = 0;
    for (uint32_t i = 0; i < sizeof call_ring / 4u; i++)
        sum = sum * 31u + call_ring[i];
    return sum;
}

void Reset_Handler(void)
{
    sink += work_leaf(1u); /* before init: the state reads zero, nothing is recorded */
    if (!spoor_calls_init(call_ring, sizeof call_ring)) {
        put("spoor_calls_init failed\n");
        leave(0);
    }
    REG32(SYST_RVR) = 50u;
    REG32(SYST_CVR) = 0u;
    REG32(SYST_CSR) = 7u; /* processor clock, interrupt, enable */
    main_work();
    REG32(SYST_CSR) = 0u;
    spoor_calls_enable(false);
    put("ticks ");
    put_hex(ticks);
    put("\n");
    save_image();
    /* the state zeroed after init, as a C runtime's .bss zeroing does: nothing is recorded */
    uint32_t sum = ring_sum();
    volatile uint32_t *state = (volatile uint32_t *)&spoor_calls_state;
    for (uint32_t i = 0; i < sizeof spoor_calls_state / 4u; i++)
        state[i] = 0u;
    main_work();
    if (ring_sum() != sum) {
        put("recorded after the state was zeroed\n");
        leave(0);
    }
    leave(1);
}

void HardFault_Handler(void)
{
    put("HardFault\n");
    leave(0);
}

NOTRACE static void Default_Handler(void)
{
    put("unexpected exception\n");
    leave(0);
}

__attribute__((section(".vectors"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))(uintptr_t)__stack_top,
    Reset_Handler,
    Default_Handler, /* NMI */
    HardFault_Handler,
    Default_Handler,
    Default_Handler,
    Default_Handler,
    0,
    0,
    0,
    0,
    Default_Handler, /* SVCall */
    Default_Handler,
    0,
    Default_Handler, /* PendSV */
    SysTick_Handler,
};
