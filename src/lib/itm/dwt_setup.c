/* The host's ITM/DWT set-up through a live target (spoor/dwt_setup.h). */
#include <inttypes.h>

#include "base/set_error.h"
#include "spoor/dwt_setup.h"
#include "spoor/itm_watch.h"

/* A register; false with the error set (the view leaves none when no layer has the address). */
static bool read_register(spoor_mem *m, uint32_t addr, uint32_t *value)
{
    spoor_set_error(SPOOR_OK, "%s", "");
    if (spoor_mem_read_u32(m, addr, value))
        return true;
    if (spoor_last_status() == SPOOR_OK)
        spoor_set_error(SPOOR_ERR_UNAVAILABLE, "cannot read 0x%08" PRIx32 ": no live target", addr);
    return false;
}

/* One register through the live layer: whole, or the bits of its mask (read-modify-write). */
static bool write_register(spoor_mem *m, const spoor_reg_write *w)
{
    uint32_t v = w->value;
    if (w->mask != 0xFFFFFFFFu) {
        uint32_t old;
        if (!read_register(m, w->addr, &old))
            return false;
        v = (old & ~w->mask) | (w->value & w->mask);
    }
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    return spoor_mem_write(m, w->addr, b, 4);
}

spoor_dwt_apply_status spoor_dwt_plan_apply(spoor_mem *m, const spoor_reg_write *plan, size_t n,
                                            unsigned comparator, spoor_dwt_apply_result *r)
{
    r->written = 0;
    r->dwt_ctrl = 0;
    if (n == 0 || plan[0].addr != SPOOR_DEMCR || comparator > 3) {
        spoor_set_error(SPOOR_ERR_ARGUMENT,
                        "DWT set-up: expected a plan that starts with DEMCR and a comparator 0..3");
        return SPOOR_DWT_APPLY_BAD_PLAN;
    }
    if (!write_register(m, &plan[0])) /* DEMCR.TRCENA: the DWT reads as zero without it */
        return SPOOR_DWT_APPLY_WRITE_FAILED;
    r->written = 1;
    if (!read_register(m, SPOOR_DWT_CTRL, &r->dwt_ctrl))
        return SPOOR_DWT_APPLY_CTRL_FAILED;
    if ((r->dwt_ctrl >> 28) <= comparator) {
        spoor_set_error(SPOOR_ERR_UNSUPPORTED,
                        "DWT_CTRL 0x%08" PRIx32 ": the core has %" PRIu32
                        " comparators, no comparator %u",
                        r->dwt_ctrl, r->dwt_ctrl >> 28, comparator);
        return SPOOR_DWT_APPLY_NO_COMPARATOR;
    }
    for (; r->written < n; r->written++)
        if (!write_register(m, &plan[r->written]))
            return SPOOR_DWT_APPLY_WRITE_FAILED;
    return SPOOR_DWT_APPLY_OK;
}
