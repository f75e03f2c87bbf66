/* The startup file of the thread-aware dump firmware (rtos_dump_fw.c), written as a vendor's
 * would be: its own vector table, Reset_Handler and Default_Handler.
 * -DSTATIC_HANDLER: the vendor's own `static void HardFault_Handler(void)` in the table and
 * Default_Handler for MemManage, BusFault and UsageFault (links without a word; spoor's
 * handlers are never reached, and spoor_crash_init() must say so). Without it the table names
 * spoor's handlers from spoor/handlers.h (SecureFault too on the Armv8-M Mainline core, which
 * QEMU runs in the Secure state; -DSECUREFAULT_DEFAULT leaves that one to Default_Handler).
 * -DBRANCH_HANDLER: the table names the vendor's HardFault and UsageFault handlers, which
 * branch to spoor's (B.W) as their first instruction. */
#include <stdint.h>

extern uint32_t __stack_top[], __bss_start[], __bss_end[];
int main(void);
void Reset_Handler(void);
void Default_Handler(void);
void PendSV_Handler(void);

#if defined(STATIC_HANDLER)
static void HardFault_Handler(void)
{
    for (;;) {
    }
}
#define MEMMANAGE Default_Handler
#define BUSFAULT Default_Handler
#define USAGEFAULT Default_Handler
#define SECUREFAULT Default_Handler
#elif defined(BRANCH_HANDLER)
/* the vendor's own handlers whose first instruction hands over to spoor's (B.W) */
#include "spoor/handlers.h"
__attribute__((naked)) static void vendor_hardfault(void)
{
    __asm__ volatile("b.w HardFault_Handler");
}
__attribute__((naked)) static void vendor_usagefault(void)
{
    __asm__ volatile("b.w UsageFault_Handler");
}
#define HardFault_Handler vendor_hardfault
#define MEMMANAGE MemManage_Handler
#define BUSFAULT BusFault_Handler
#define USAGEFAULT vendor_usagefault
#define SECUREFAULT SecureFault_Handler
#else
#include "spoor/handlers.h"
#define MEMMANAGE MemManage_Handler
#define BUSFAULT BusFault_Handler
#define USAGEFAULT UsageFault_Handler
#if defined(SECUREFAULT_DEFAULT) /* only SecureFault left to the vendor's Default_Handler */
#define SECUREFAULT Default_Handler
#else
#define SECUREFAULT SecureFault_Handler
#endif
#endif

__attribute__((section(".vectors"), used)) void (*const vectors[16])(void) = {
    [0] = (void (*)(void))(uintptr_t)__stack_top,
    [1] = Reset_Handler,
    [2] = Default_Handler,
    [3] = HardFault_Handler,
    [4] = MEMMANAGE,
    [5] = BUSFAULT,
    [6] = USAGEFAULT,
#if defined(__ARM_ARCH_8M_MAIN__)
    [7] = SECUREFAULT,
#endif
    [11] = Default_Handler,
    [12] = Default_Handler,
    [14] = PendSV_Handler,
    [15] = Default_Handler,
};

void Default_Handler(void)
{
    for (;;) {
    }
}

void Reset_Handler(void)
{
    for (uint32_t *p = __bss_start; p < __bss_end; p++)
        *p = 0;
    main();
    for (;;) {
    }
}
