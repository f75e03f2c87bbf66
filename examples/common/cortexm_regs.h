/* The few System Control Space registers the examples touch (Armv6-M/v7-M/v8-M ARM). */
#ifndef SPOOR_EXAMPLES_CORTEXM_REGS_H
#define SPOOR_EXAMPLES_CORTEXM_REGS_H

#include <stdint.h>

#define SCS_REG(address) (*(volatile uint32_t *)(address))

#define SCB_CPUID SCS_REG(0xE000ED00u)
#define SCB_ICSR SCS_REG(0xE000ED04u)
#define SCB_CPACR SCS_REG(0xE000ED88u)
#define NVIC_ISER0 SCS_REG(0xE000E100u)
#define NVIC_ISPR0 SCS_REG(0xE000E200u)

#define SCB_ICSR_PENDSTSET (1u << 26)
#define SCB_CPACR_CP10_CP11_FULL (0xFu << 20)

/* CPUID.PARTNO, bits [15:4]. */
#define CPUID_PARTNO(cpuid) (((cpuid) >> 4) & 0xFFFu)

static inline void barrier_dsb_isb(void)
{
    __asm__ volatile("dsb\n\tisb" ::: "memory");
}

#endif
