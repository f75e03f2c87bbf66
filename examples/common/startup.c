/*
 * Startup for the example firmware: the vector table, Reset_Handler and the default handler.
 *
 * Every exception handler is a weak alias of Default_Handler, named as in CMSIS, so a strong
 * definition anywhere in the link (the program, or spoor's target library) replaces it.
 */
#include <stdint.h>

#include "cortexm_regs.h"
#include "semihost.h"

/* Provided by the linker script (examples/ld/sections.ld). */
extern uint32_t __data_load[];
extern uint32_t __data_start[];
extern uint32_t __data_end[];
extern uint32_t __bss_start[];
extern uint32_t __bss_end[];
extern uint32_t __stack_bottom[];
extern uint32_t __stack_top[];

int main(void);

void Reset_Handler(void) __attribute__((noreturn));
void Default_Handler(void);

#define WEAK_HANDLER(name) void name(void) __attribute__((weak, alias("Default_Handler")))

WEAK_HANDLER(NMI_Handler);
WEAK_HANDLER(HardFault_Handler);
WEAK_HANDLER(MemManage_Handler);
WEAK_HANDLER(BusFault_Handler);
WEAK_HANDLER(UsageFault_Handler);
WEAK_HANDLER(SecureFault_Handler);
WEAK_HANDLER(SVC_Handler);
WEAK_HANDLER(DebugMon_Handler);
WEAK_HANDLER(PendSV_Handler);
WEAK_HANDLER(SysTick_Handler);
WEAK_HANDLER(IRQ0_Handler);
WEAK_HANDLER(IRQ1_Handler);
WEAK_HANDLER(IRQ2_Handler);
WEAK_HANDLER(IRQ3_Handler);
WEAK_HANDLER(IRQ4_Handler);
WEAK_HANDLER(IRQ5_Handler);
WEAK_HANDLER(IRQ6_Handler);
WEAK_HANDLER(IRQ7_Handler);
WEAK_HANDLER(IRQ8_Handler);
WEAK_HANDLER(IRQ9_Handler);
WEAK_HANDLER(IRQ10_Handler);
WEAK_HANDLER(IRQ11_Handler);
WEAK_HANDLER(IRQ12_Handler);
WEAK_HANDLER(IRQ13_Handler);
WEAK_HANDLER(IRQ14_Handler);
WEAK_HANDLER(IRQ15_Handler);
WEAK_HANDLER(IRQ16_Handler);
WEAK_HANDLER(IRQ17_Handler);
WEAK_HANDLER(IRQ18_Handler);
WEAK_HANDLER(IRQ19_Handler);
WEAK_HANDLER(IRQ20_Handler);
WEAK_HANDLER(IRQ21_Handler);
WEAK_HANDLER(IRQ22_Handler);
WEAK_HANDLER(IRQ23_Handler);
WEAK_HANDLER(IRQ24_Handler);
WEAK_HANDLER(IRQ25_Handler);
WEAK_HANDLER(IRQ26_Handler);
WEAK_HANDLER(IRQ27_Handler);
WEAK_HANDLER(IRQ28_Handler);
WEAK_HANDLER(IRQ29_Handler);
WEAK_HANDLER(IRQ30_Handler);
WEAK_HANDLER(IRQ31_Handler);

/*
 * -funwind-tables makes every .ARM.exidx entry name an EHABI personality routine. The examples
 * never raise C++ exceptions (the tables are there for stack unwinders such as spoor's), so
 * these stand-ins keep libgcc's exception unwinder, and the abort/signal/malloc it drags in
 * from newlib, out of the link. They are never called.
 */
void __aeabi_unwind_cpp_pr0(void) __attribute__((weak, alias("Default_Handler")));
void __aeabi_unwind_cpp_pr1(void) __attribute__((weak, alias("Default_Handler")));
void __aeabi_unwind_cpp_pr2(void) __attribute__((weak, alias("Default_Handler")));

typedef void (*exception_handler)(void);

/* Layout fixed by the architecture: initial SP, then exceptions 1..15, then device IRQs. */
struct vector_table {
    uint32_t *initial_stack_pointer;
    exception_handler exceptions[15];
    exception_handler irqs[32];
};

#if defined(__ARM_ARCH_6M__)
/* Armv6-M: only NMI, HardFault, SVC, PendSV and SysTick exist. */
#define MAIN_EXTENSION_HANDLER(name) 0
#else
#define MAIN_EXTENSION_HANDLER(name) name
#endif

#if defined(__ARM_ARCH_8M_MAIN__)
#define SECURE_FAULT_HANDLER SecureFault_Handler
#else
#define SECURE_FAULT_HANDLER 0
#endif

__attribute__((section(".vectors"), used)) const struct vector_table vector_table = {
    .initial_stack_pointer = __stack_top,
    .exceptions =
        {
            Reset_Handler,                              /*  1 */
            NMI_Handler,                                /*  2 */
            HardFault_Handler,                          /*  3 */
            MAIN_EXTENSION_HANDLER(MemManage_Handler),  /*  4 */
            MAIN_EXTENSION_HANDLER(BusFault_Handler),   /*  5 */
            MAIN_EXTENSION_HANDLER(UsageFault_Handler), /*  6 */
            SECURE_FAULT_HANDLER,                       /*  7 */
            0,                                          /*  8 reserved */
            0,                                          /*  9 reserved */
            0,                                          /* 10 reserved */
            SVC_Handler,                                /* 11 */
            MAIN_EXTENSION_HANDLER(DebugMon_Handler),   /* 12 */
            0,                                          /* 13 reserved */
            PendSV_Handler,                             /* 14 */
            SysTick_Handler,                            /* 15 */
        },
    .irqs =
        {
            IRQ0_Handler,  IRQ1_Handler,  IRQ2_Handler,  IRQ3_Handler,  IRQ4_Handler,
            IRQ5_Handler,  IRQ6_Handler,  IRQ7_Handler,  IRQ8_Handler,  IRQ9_Handler,
            IRQ10_Handler, IRQ11_Handler, IRQ12_Handler, IRQ13_Handler, IRQ14_Handler,
            IRQ15_Handler, IRQ16_Handler, IRQ17_Handler, IRQ18_Handler, IRQ19_Handler,
            IRQ20_Handler, IRQ21_Handler, IRQ22_Handler, IRQ23_Handler, IRQ24_Handler,
            IRQ25_Handler, IRQ26_Handler, IRQ27_Handler, IRQ28_Handler, IRQ29_Handler,
            IRQ30_Handler, IRQ31_Handler,
        },
};

void Reset_Handler(void)
{
#if defined(__ARM_FP)
    /* Grant full access to the FPU (CP10, CP11) before any floating-point instruction runs. */
    SCB_CPACR |= SCB_CPACR_CP10_CP11_FULL;
    barrier_dsb_isb();
#endif
#if defined(__ARM_ARCH_8M_MAIN__)
    /* A stack overflow then raises a UsageFault (STKOF) instead of corrupting memory. */
    __asm__ volatile("msr msplim, %0" : : "r"(__stack_bottom));
#endif
    for (uint32_t *from = __data_load, *to = __data_start; to < __data_end;) {
        *to++ = *from++;
    }
    for (uint32_t *to = __bss_start; to < __bss_end;) {
        *to++ = 0u;
    }
    semihost_exit(main());
}

/* Reports which exception had no handler and stops the program with a non-zero status. */
void Default_Handler(void)
{
    uint32_t ipsr;
    __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
    semihost_write_string("unhandled exception ");
    semihost_write_decimal(ipsr & 0x1FFu);
    semihost_write_string("\n");
    semihost_exit((int)(0x80u | (ipsr & 0x7Fu)));
}
