/* The start-up code the test firmware share (noreturn_fw.c, rtos_ctx_fw.c, rtos_fw.c,
 * tailcall_fw.c, unwind_fw.c). They run under QEMU, which loads the ELF's sections as they are
 * (-nostdlib, no startup files): there is no .data to copy and no .bss to zero. What each needs
 * is the head of the vector table (the initial SP, __stack_top from its linker script, and
 * Reset_Handler), a Default_Handler for the exceptions it does not handle, and the EHABI
 * personality routines -funwind-tables refers to. A firmware includes this header once, defines
 * Reset_Handler and the handlers it names, and declares its table:
 *   FW_VECTORS(16, [11] = SVC_Handler, [14] = PendSV_Handler);
 * NMI (2), HardFault (3), SVCall (11), PendSV (14) and SysTick (15) are Default_Handler unless
 * the list names them; the other entries are 0.
 * Default_Handler spins, counting in the firmware's `volatile uint32_t sink`; a firmware that
 * wants another one defines FW_OWN_DEFAULT_HANDLER and writes its own. FW_NO_EHABI_STUBS: the
 * build defines the personality routines itself (--defsym); FW_EHABI_PR2: the firmware's
 * tables also name __aeabi_unwind_cpp_pr2.
 * Not used by the firmware whose start-up is the point of the test: calls_minimal_fw.c (no C
 * runtime at all, every handler kept out of -finstrument-functions), rtos_dump_startup.c (a
 * vendor's startup file with its own handler variants) and rtos_shapes_fw.c (never run). */
#ifndef FW_STARTUP_H
#define FW_STARTUP_H

#include <stdint.h>

extern uint32_t __stack_top[];
void Reset_Handler(void);
void Default_Handler(void);

/* The vector table of n entries; the designators given override the defaults. */
#define FW_VECTORS(n, ...)                                                                         \
    _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Woverride-init\"")           \
        __attribute__((section(".vectors"), used)) void (*const vectors[n])(void) = {              \
            [0] = (void (*)(void))(uintptr_t)__stack_top,                                          \
            [1] = Reset_Handler,                                                                   \
            [2] = Default_Handler,                                                                 \
            [3] = Default_Handler,                                                                 \
            [11] = Default_Handler,                                                                \
            [14] = Default_Handler,                                                                \
            [15] = Default_Handler,                                                                \
            __VA_ARGS__};                                                                          \
    _Pragma("GCC diagnostic pop") extern void (*const vectors[n])(void) /* takes the ';' */

#if !defined(FW_NO_EHABI_STUBS)
/* -funwind-tables references the EHABI personality routines; nothing here throws. */
void __aeabi_unwind_cpp_pr0(void);
void __aeabi_unwind_cpp_pr1(void);
void __aeabi_unwind_cpp_pr0(void) {}
void __aeabi_unwind_cpp_pr1(void) {}
#if defined(FW_EHABI_PR2) /* a firmware with frames that need the long-form routine */
void __aeabi_unwind_cpp_pr2(void);
void __aeabi_unwind_cpp_pr2(void) {}
#endif
#endif

#if !defined(FW_OWN_DEFAULT_HANDLER)
extern volatile uint32_t sink;

void Default_Handler(void)
{
    for (;;)
        sink++;
}
#endif

#endif
