/* Test firmware for the noreturn test (tests/e2e/test_unwind_noreturn.py): functions whose
 * LAST instruction is a call to a noreturn function, so that their return address is the
 * first byte after the function. It runs under QEMU (mps2-an385 Cortex-M3, microbit
 * Cortex-M0, ...); the global `scenario` (set by gdb before the first `continue`) picks the
 * stack:
 *   1. main -> chain_mid -> mid_caller -> fatal_mid: noreturn_fw.ld places mid_caller right
 *      before Reset_Handler, so mid_caller's return address is Reset_Handler's first byte;
 *   2. main -> chain_end -> end_caller -> fatal_end: end_caller is the last function of
 *      .text (section .text_last, placed last by noreturn_fw.ld), so its return address is
 *      the end of .text, which is no code at all.
 * The test stops in fatal_mid / fatal_end. Self-contained: no library; the start-up of
 * fw_startup.h (the build defines the EHABI personality routines -funwind-tables refers to as
 * 0). */
#include <stdint.h>

#define NOINLINE __attribute__((noinline))
#define NORETURN __attribute__((noreturn))

#define FW_NO_EHABI_STUBS /* the build defines them as 0 */
#include "fw_startup.h"

volatile uint32_t sink;
volatile uint32_t scenario = 1;

int main(void);

FW_VECTORS(16);

NOINLINE void work(uint32_t n)
{
    sink += n;
}

/* A fault handler's last stop: never returns, saves nothing (GCC keeps LR as it came). */
NORETURN NOINLINE void fatal_mid(uint32_t code)
{
    sink = code;
    for (;;) {
        sink++;
    }
}

NORETURN NOINLINE void fatal_end(uint32_t code)
{
    sink = code + 1u;
    for (;;) {
        sink++;
    }
}

/* Touches no global (that would put a literal pool after the call): the `bl fatal_mid`
 * is the last instruction. */
NOINLINE void mid_caller(uint32_t n)
{
    work(n);
    fatal_mid(n + 1u);
}

__attribute__((section(".text_last"))) NOINLINE void end_caller(uint32_t n)
{
    work(n);
    fatal_end(n + 2u);
}

NOINLINE void chain_mid(uint32_t n)
{
    mid_caller(n + 1u);
}

NOINLINE void chain_end(uint32_t n)
{
    end_caller(n + 1u);
}

int main(void)
{
    if (scenario == 2u) {
        chain_end(20u);
    }
    chain_mid(10u);
    return 0;
}

void Reset_Handler(void)
{
    main();
    for (;;) {
        sink++;
    }
}
