/* Start-up code of the sensor firmware: vector table, Reset_Handler, a default handler.
 * Every exception handler is a weak alias, named as in CMSIS: spoor's target library brings
 * strong HardFault/MemManage/BusFault/UsageFault handlers that take their place. */
#include <stdint.h>

#include "semihost.h"

extern uint32_t __data_load[], __data_start[], __data_end[], __bss_start[], __bss_end[];
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
WEAK_HANDLER(SVC_Handler);
WEAK_HANDLER(DebugMon_Handler);
WEAK_HANDLER(PendSV_Handler);
WEAK_HANDLER(SysTick_Handler);

__attribute__((section(".vectors"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))__stack_top,
    Reset_Handler,
    NMI_Handler,
    HardFault_Handler,
    MemManage_Handler,
    BusFault_Handler,
    UsageFault_Handler,
    0,
    0,
    0,
    0,
    SVC_Handler,
    DebugMon_Handler,
    0,
    PendSV_Handler,
    SysTick_Handler,
};

void Reset_Handler(void)
{
    for (uint32_t *from = __data_load, *to = __data_start; to < __data_end;)
        *to++ = *from++;
    for (uint32_t *to = __bss_start; to < __bss_end;)
        *to++ = 0u;
    semihost_exit(main());
}

void Default_Handler(void)
{
    semihost_puts("unhandled exception\n");
    semihost_exit(0x80);
}
