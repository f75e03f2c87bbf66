/*
 * The fault handlers of spoor's crash capture, by the CMSIS names a vector table uses.
 *
 * They are defined in the target library (target/src/cortexm/crash_cortexm.c) and linked
 * whenever the firmware calls spoor_crash_init(). A startup file whose vector table names
 * weak handlers (the CMSIS convention) gets them without any change. A startup file that has
 * its own handlers does not: a `static void HardFault_Handler(void)` in the startup file is a
 * different function with the same name, its table points to it, and spoor's handler is left
 * out at link time (--gc-sections). Such a startup file includes this header and puts these
 * names in its table (removing its own definitions), or its own handler branches to spoor's
 * as its first instruction (`b HardFault_Handler` written as B or B.W).
 *
 * spoor_crash_init() reads the active vector table (VTOR; address 0 on a Cortex-M0) and
 * returns false with a reason (spoor_crash_init_message()) when an entry below is not spoor's.
 *
 *   exception        number  handler                 cores
 *   HardFault           3    HardFault_Handler       all
 *   MemManage           4    MemManage_Handler       Armv7-M, Armv8-M Mainline
 *   BusFault            5    BusFault_Handler        Armv7-M, Armv8-M Mainline
 *   UsageFault          6    UsageFault_Handler      Armv7-M, Armv8-M Mainline
 *   SecureFault         7    SecureFault_Handler     Armv8-M Mainline, Secure state
 */
#ifndef SPOOR_HANDLERS_H
#define SPOOR_HANDLERS_H

#ifdef __cplusplus
extern "C" {
#endif

void HardFault_Handler(void);
#if !defined(__ARM_ARCH_6M__)
void MemManage_Handler(void);
void BusFault_Handler(void);
void UsageFault_Handler(void);
#endif
#if defined(__ARM_ARCH_8M_MAIN__)
void SecureFault_Handler(void);
#endif

#ifdef __cplusplus
}
#endif

#endif
