/* The register writes of spoor_itm_watch_current_thread() (spoor/itm_watch.h), portable so
 * that the host tests check them. */
#include "spoor/itm_watch.h"
#include "spoor/no_instrument.h"

/* DEMCR.TRCENA: trace (DWT, ITM) on */
#define DEMCR_TRCENA (1u << 24)
/* ITM_TCR: ITMENA, TSENA (local timestamps), SYNCENA, TXENA (DWT packets to the ITM; DWTENA in
 * some TRMs), TSPrescale 0 (no prescaling: timestamps count core cycles), TraceBusID 1 */
#define ITM_TCR_VALUE (1u << 0 | 1u << 1 | 1u << 2 | 1u << 3 | 1u << 16)
#define ITM_TCR_MASK (0xFu | 3u << 8 | 0x7Fu << 16)
/* DWT_CTRL: CYCCNTENA, SYNCTAP = 0b01 (a synchronisation packet every 2^24 cycles), EXCTRCENA */
#define DWT_CTRL_CYCCNTENA (1u << 0)
#define DWT_CTRL_SYNCTAP_24 (1u << 10)
#define DWT_CTRL_SYNCTAP_MASK (3u << 10)
#define DWT_CTRL_EXCTRCENA (1u << 16)
/* ARMv7-M DWT_FUNCTION: FUNCTION [3:0] = 0b1101 with EMITRANGE (bit 5) 0 and DATAVMATCH (bit
 * 8) 0: sample data for write transfers; DATAVSIZE [11:10] = 0b10 word */
#define V7_FUNCTION_DATA_ON_WRITE (0xDu | 2u << 10)
/* ARMv8-M DWT_FUNCTION: MATCH [3:0] = 0b1101 data address with value, writes; ACTION [5:4] =
 * 0b10, which for a Data Address With Value comparator generates a Data Trace Data Value packet
 * (for a plain Data Address comparator, MATCH 0b0101, it would generate a Data Trace Match
 * packet, which carries no value); DATAVSIZE [11:10] = 0b10 word (the watched range) */
#define V8_FUNCTION_DATA_ON_WRITE (0xDu | 2u << 4 | 2u << 10)

SPOOR_NO_INSTRUMENT static void put(spoor_reg_write *out, size_t *n, uint32_t addr, uint32_t value,
                                    uint32_t mask)
{
    out[*n].addr = addr;
    out[*n].value = value;
    out[*n].mask = mask;
    (*n)++;
}

SPOOR_NO_INSTRUMENT size_t spoor_itm_watch_plan(uint32_t watch_addr, unsigned comparator,
                                                spoor_dwt_arch arch, int exceptions,
                                                spoor_reg_write *out)
{
    size_t n = 0;
    if (comparator > 3 || (watch_addr & 3u))
        return 0;
    put(out, &n, SPOOR_DEMCR, DEMCR_TRCENA, DEMCR_TRCENA);
    put(out, &n, SPOOR_ITM_LAR, SPOOR_CORESIGHT_UNLOCK, 0xFFFFFFFFu);
    put(out, &n, SPOOR_DWT_LAR, SPOOR_CORESIGHT_UNLOCK, 0xFFFFFFFFu);
    put(out, &n, SPOOR_ITM_TCR, ITM_TCR_VALUE, ITM_TCR_MASK);
    uint32_t ctrl = DWT_CTRL_CYCCNTENA | DWT_CTRL_SYNCTAP_24;
    uint32_t ctrl_mask = DWT_CTRL_CYCCNTENA | DWT_CTRL_SYNCTAP_MASK | DWT_CTRL_EXCTRCENA;
    if (exceptions)
        ctrl |= DWT_CTRL_EXCTRCENA;
    put(out, &n, SPOOR_DWT_CTRL, ctrl, ctrl_mask);
    /* the comparator: off while it is changed, then the address, then the function */
    put(out, &n, SPOOR_DWT_FUNCTION(comparator), 0, 0xFFFFFFFFu);
    put(out, &n, SPOOR_DWT_COMP(comparator), watch_addr, 0xFFFFFFFFu);
    if (arch == SPOOR_DWT_ARMV7M) {
        put(out, &n, SPOOR_DWT_MASK(comparator), 0, 0xFFFFFFFFu);
        put(out, &n, SPOOR_DWT_FUNCTION(comparator), V7_FUNCTION_DATA_ON_WRITE, 0xFFFFFFFFu);
    } else {
        put(out, &n, SPOOR_DWT_FUNCTION(comparator), V8_FUNCTION_DATA_ON_WRITE, 0xFFFFFFFFu);
    }
    return n;
}
