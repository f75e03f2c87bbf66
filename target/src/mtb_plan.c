/* MTB configuration checks and register values (spoor/mtb.h), portable. The rules are the
 * MTB-M33 and MTB-M0+ TRMs': MASTER.MASK gives a 2^(MASK+4)-byte circular buffer placed at a
 * multiple of its size; POSITION.POINTER is the offset from MTB_BASE of the next write; FLOW's
 * WATERMARK is compared with POINTER and AUTOSTOP clears MASTER.EN when they meet. */
#include "spoor/mtb.h"
#include "spoor/no_instrument.h"

SPOOR_NO_INSTRUMENT spoor_mtb_status spoor_mtb_plan(const spoor_mtb_config *config, uintptr_t base,
                                                    spoor_mtb_setup *out)
{
    if (!config || !config->registers || !config->buffer)
        return SPOOR_MTB_NO_REGISTERS;
    uint32_t size = config->size;
    if (size < 16u || (size & (size - 1u)) != 0)
        return SPOOR_MTB_BAD_SIZE;
    if (config->max_size && size > config->max_size)
        return SPOOR_MTB_TOO_LARGE;
    uintptr_t buffer = (uintptr_t)config->buffer;
    if (buffer & (size - 1u))
        return SPOOR_MTB_MISALIGNED;
    if (buffer < base || buffer - base > 0x7FFFFFF8u)
        return SPOOR_MTB_NOT_IN_SRAM;
    uint32_t offset = (uint32_t)(buffer - base);
    if (config->max_size && (offset > config->max_size || config->max_size - offset < size))
        return SPOOR_MTB_NOT_IN_SRAM;
    if (config->watermark && ((config->watermark & 7u) || config->watermark >= size))
        return SPOOR_MTB_BAD_WATERMARK;
    uint32_t mask = 0;
    while ((16u << mask) < size)
        mask++;
    out->position = offset; /* WRAP clear */
    out->flow = config->watermark ? (offset + config->watermark) | SPOOR_MTB_FLOW_AUTOSTOP : 0u;
    out->tstart = config->tstart_comparators;
    out->tstop = config->tstop_comparators;
    out->master = mask | (config->tstart_comparators ? SPOOR_MTB_MASTER_TSTARTEN : 0u) |
                  (config->tstop_comparators ? SPOOR_MTB_MASTER_TSTOPEN : 0u) |
                  (config->tstart_comparators ? 0u : SPOOR_MTB_MASTER_EN);
    return SPOOR_MTB_OK;
}
