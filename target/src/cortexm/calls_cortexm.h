/*
 * The Cortex-M parts of the call recorder (target/src/calls_recorder.c): the accesses of the
 * atomic claim of the next ring slot, the timestamp and context sources and the ITM output. Static
 * inline so that the hooks stay leaf functions without calls.
 */
#ifndef SPOOR_CALLS_CORTEXM_H
#define SPOOR_CALLS_CORTEXM_H

#include <stdint.h>

#include "spoor/calls.h"
#include "spoor/no_instrument.h"

#if defined(__ARM_ARCH_7M__) || defined(__ARM_ARCH_7EM__) || defined(__ARM_ARCH_8M_MAIN__)
#define SPOOR_CALLS_LDREX 1
#else
#define SPOOR_CALLS_LDREX 0 /* ARMv6-M, ARMv8-M Baseline: PRIMASK section */
#endif

#define SPOOR_CALLS_REG32(addr) (*(volatile uint32_t *)(addr))
#define SPOOR_CALLS_DEMCR 0xE000EDFCu
#define SPOOR_CALLS_DEMCR_TRCENA (1u << 24)
#define SPOOR_CALLS_DWT_CTRL 0xE0001000u
#define SPOOR_CALLS_DWT_CYCCNT 0xE0001004u
#define SPOOR_CALLS_SYST_CVR 0xE000E018u
#define SPOOR_CALLS_ITM_PORT(n) (0xE0000000u + 4u * (uint32_t)(n))

/* The claim of the next ring slot (calls_recorder.c's claim()): load_next, then store_next
 * of the advanced value, repeated while store_next returns non-zero. ARMv7-M / ARMv8-M
 * Mainline: LDREX and STREX (the STREX fails when an interrupt came in between). ARMv6-M /
 * ARMv8-M Baseline: plain accesses inside spoor_calls_mask() .. spoor_calls_unmask(). */
#if SPOOR_CALLS_LDREX
SPOOR_NO_INSTRUMENT static inline __attribute__((always_inline)) uint32_t
spoor_calls_load_next(volatile uint32_t *next)
{
    uint32_t v;
    __asm volatile("ldrex %0, [%1]" : "=r"(v) : "r"(next) : "memory");
    return v;
}
SPOOR_NO_INSTRUMENT static inline __attribute__((always_inline)) uint32_t
spoor_calls_store_next(volatile uint32_t *next, uint32_t value)
{
    uint32_t failed;
    __asm volatile("strex %0, %2, [%1]" : "=&r"(failed) : "r"(next), "r"(value) : "memory");
    return failed;
}
#else
SPOOR_NO_INSTRUMENT static inline __attribute__((always_inline)) uint32_t spoor_calls_mask(void)
{
    uint32_t primask;
    __asm volatile("mrs %0, primask\n cpsid i" : "=r"(primask)::"memory");
    return primask;
}
SPOOR_NO_INSTRUMENT static inline __attribute__((always_inline)) void
spoor_calls_unmask(uint32_t primask)
{
    __asm volatile("msr primask, %0" ::"r"(primask) : "memory");
}
SPOOR_NO_INSTRUMENT static inline __attribute__((always_inline)) uint32_t
spoor_calls_load_next(volatile uint32_t *next)
{
    return *next;
}
SPOOR_NO_INSTRUMENT static inline __attribute__((always_inline)) uint32_t
spoor_calls_store_next(volatile uint32_t *next, uint32_t value)
{
    *next = value;
    return 0u;
}
#endif

SPOOR_NO_INSTRUMENT static inline __attribute__((always_inline)) uint32_t spoor_calls_ipsr(void)
{
    uint32_t ipsr;
    __asm volatile("mrs %0, ipsr" : "=r"(ipsr));
    return ipsr;
}

/* The timestamp source: DWT CYCCNT where the core has one (SPOOR_CALLS_TIME=1 on ARMv7-M /
 * ARMv8-M Mainline), SysTick's current value otherwise (or with SPOOR_CALLS_TIME=2). */
#if SPOOR_CALLS_LDREX && SPOOR_CALLS_TIME == 1
#define SPOOR_CALLS_TIME_IS_SYSTICK 0
SPOOR_NO_INSTRUMENT static inline __attribute__((always_inline)) uint32_t spoor_calls_now(void)
{
    return SPOOR_CALLS_REG32(SPOOR_CALLS_DWT_CYCCNT);
}
SPOOR_NO_INSTRUMENT static inline void spoor_calls_time_start(void)
{
    SPOOR_CALLS_REG32(SPOOR_CALLS_DEMCR) |= SPOOR_CALLS_DEMCR_TRCENA;
    SPOOR_CALLS_REG32(SPOOR_CALLS_DWT_CTRL) |= 1u; /* CYCCNTENA */
}
#else
#define SPOOR_CALLS_TIME_IS_SYSTICK 1
SPOOR_NO_INSTRUMENT static inline __attribute__((always_inline)) uint32_t spoor_calls_now(void)
{
    return SPOOR_CALLS_REG32(SPOOR_CALLS_SYST_CVR);
}
SPOOR_NO_INSTRUMENT static inline void spoor_calls_time_start(void) {}
#endif

/* One word to an ITM stimulus port: waits until the port's FIFO has room. */
SPOOR_NO_INSTRUMENT static inline __attribute__((always_inline)) void
spoor_calls_itm_put(uint32_t port, uint32_t w)
{
    volatile uint32_t *p = (volatile uint32_t *)SPOOR_CALLS_ITM_PORT(port);
    while ((*p & 1u) == 0u) {
    }
    *p = w;
}

#endif
