/* The MTB driver's register writes (spoor/mtb.h); the checks and values are in mtb_plan.c. */
#include <string.h>

#include "spoor/mtb.h"
#include "spoor/no_instrument.h"

#define REG32(addr) (*(volatile uint32_t *)(addr))

static uintptr_t programmed; /* the block spoor_mtb_enable() set up */

SPOOR_NO_INSTRUMENT static void barrier(void)
{
    __asm volatile("dsb 0xF\n isb 0xF" ::: "memory");
}

SPOOR_NO_INSTRUMENT uint32_t spoor_mtb_freeze(uintptr_t registers)
{
    if (!registers)
        return 0;
    uint32_t master = REG32(registers + SPOOR_MTB_REG_MASTER);
    REG32(registers + SPOOR_MTB_REG_MASTER) = master & ~SPOOR_MTB_MASTER_EN;
    barrier();
    return master;
}

SPOOR_NO_INSTRUMENT void spoor_mtb_disable(void)
{
    (void)spoor_mtb_freeze(programmed);
}

SPOOR_NO_INSTRUMENT spoor_mtb_status spoor_mtb_enable(const spoor_mtb_config *config)
{
    if (!config || !config->registers)
        return SPOOR_MTB_NO_REGISTERS;
    uintptr_t r = config->registers;
    (void)spoor_mtb_freeze(r); /* about to reconfigure: stop first */
    spoor_mtb_setup setup;
    spoor_mtb_status status = spoor_mtb_plan(config, REG32(r + SPOOR_MTB_REG_BASE), &setup);
    if (status != SPOOR_MTB_OK)
        return status;
    memset(config->buffer, 0, config->size); /* what was not written reads as zeros */
    REG32(r + SPOOR_MTB_REG_POSITION) = setup.position;
    REG32(r + SPOOR_MTB_REG_FLOW) = setup.flow;
    if (setup.tstart || setup.tstop) { /* MTB-M33 only */
        REG32(r + SPOOR_MTB_REG_TSTART) = setup.tstart;
        REG32(r + SPOOR_MTB_REG_TSTOP) = setup.tstop;
    }
    programmed = r;
    barrier();
    REG32(r + SPOOR_MTB_REG_MASTER) = setup.master;
    barrier();
    return SPOOR_MTB_OK;
}
