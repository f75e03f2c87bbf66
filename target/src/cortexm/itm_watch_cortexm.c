/* spoor_itm_watch_current_thread() on the core (spoor/itm_watch.h): the plan's writes to the
 * real registers, after checking that the ITM and the comparator exist. */
#include "spoor/itm_watch.h"
#include "spoor/no_instrument.h"

#define REG(addr) (*(volatile uint32_t *)(addr))

#if defined(__ARM_ARCH_7M__) || defined(__ARM_ARCH_7EM__)
#define SPOOR_HAVE_ITM 1
#define SPOOR_THIS_ARCH SPOOR_DWT_ARMV7M
#elif defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
#define SPOOR_HAVE_ITM 1
#define SPOOR_THIS_ARCH SPOOR_DWT_ARMV8M
#else
#define SPOOR_HAVE_ITM 0 /* ARMv6-M, ARMv8-M Baseline, or a host build */
#define SPOOR_THIS_ARCH SPOOR_DWT_ARMV7M
#endif

SPOOR_NO_INSTRUMENT int spoor_itm_watch_current_thread_ex(void *const *current, unsigned comparator,
                                                          int exceptions)
{
    spoor_reg_write writes[SPOOR_ITM_WATCH_MAX_WRITES];
    size_t n = spoor_itm_watch_plan((uint32_t)(uintptr_t)current, comparator, SPOOR_THIS_ARCH,
                                    exceptions, writes);
    if (!n)
        return SPOOR_ITM_WATCH_BAD_ARGUMENT;
    if (!SPOOR_HAVE_ITM)
        return SPOOR_ITM_WATCH_NO_ITM;
    /* DEMCR.TRCENA first: the DWT's registers read as zero without it */
    REG(SPOOR_DEMCR) |= 1u << 24;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    /* NUMCOMP; a DWT_CTRL of all zeros is no DWT state at all (QEMU: the writes are ignored) */
    const uint32_t ctrl = REG(SPOOR_DWT_CTRL);
    if (ctrl != 0u && (ctrl >> 28) <= comparator)
        return SPOOR_ITM_WATCH_NO_COMPARATOR;
    for (size_t i = 0; i < n; i++) {
        const spoor_reg_write *w = &writes[i];
        if (w->mask == 0xFFFFFFFFu)
            REG(w->addr) = w->value;
        else
            REG(w->addr) = (REG(w->addr) & ~w->mask) | (w->value & w->mask);
    }
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    return ctrl != 0u ? SPOOR_ITM_WATCH_OK : SPOOR_ITM_WATCH_UNCHECKED;
}

SPOOR_NO_INSTRUMENT int spoor_itm_watch_current_thread(void *const *current)
{
    return spoor_itm_watch_current_thread_ex(current, 1, 0);
}
