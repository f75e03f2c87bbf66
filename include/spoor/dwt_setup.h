/* ITM/DWT set-up of a live target from the host (spoor top --setup v7m|v8m): the register
 * writes of spoor_itm_watch_plan() (the target library's target/include/spoor/itm_watch.h,
 * also in libspoor) made through a memory view's live layer (a GDB server or OpenOCD,
 * spoor/memory.h), as the target's own spoor_itm_watch_current_thread() makes them:
 *
 *     spoor_reg_write plan[SPOOR_ITM_WATCH_MAX_WRITES];
 *     size_t n = spoor_itm_watch_plan(watch, 1, SPOOR_DWT_ARMV7M, 0, plan);
 *     spoor_dwt_apply_result r;
 *     if (spoor_dwt_plan_apply(mem, plan, n, 1, &r) != SPOOR_DWT_APPLY_OK) ...;
 *
 * The first write (DEMCR.TRCENA) goes first because the DWT reads as zero without it; then
 * DWT_CTRL is read and a comparator that DWT_CTRL.NUMCOMP does not count (bits 31:28; an
 * emulator with no DWT reads 0) is refused before any other register is written; then the
 * other writes in order. A write whose mask is not 0xFFFFFFFF is read-modify-write: the bits
 * outside the mask keep the register's value. */
#ifndef SPOOR_DWT_SETUP_H
#define SPOOR_DWT_SETUP_H

#include <stddef.h>
#include <stdint.h>

#include "spoor/memory.h"

struct spoor_reg_write; /* target/include/spoor/itm_watch.h */

typedef enum spoor_dwt_apply_status {
    SPOOR_DWT_APPLY_OK = 0,        /* every write made */
    SPOOR_DWT_APPLY_BAD_PLAN,      /* no writes, the first not DEMCR, or a comparator above 3 */
    SPOOR_DWT_APPLY_WRITE_FAILED,  /* plan[written] failed (its write, or its read when masked) */
    SPOOR_DWT_APPLY_CTRL_FAILED,   /* DWT_CTRL could not be read after the first write */
    SPOOR_DWT_APPLY_NO_COMPARATOR, /* DWT_CTRL.NUMCOMP does not count the comparator */
} spoor_dwt_apply_status;

typedef struct spoor_dwt_apply_result {
    size_t written;    /* the writes made, in plan order: the failed one is plan[written] */
    uint32_t dwt_ctrl; /* DWT_CTRL as read after the first write (NUMCOMP: bits 31:28) */
} spoor_dwt_apply_result;

/* Makes the n writes of plan through m (see above) for the given comparator; fills *r. Every
 * status but OK sets the error (spoor_last_error): the memory view's for a failed read or
 * write ("cannot write 4 bytes at 0x...: no live target ..."), else one naming the problem
 * ("DWT_CTRL 0x10000000: the core has 1 comparators, no comparator 1"). */
spoor_dwt_apply_status spoor_dwt_plan_apply(spoor_mem *m, const struct spoor_reg_write *plan,
                                            size_t n, unsigned comparator,
                                            spoor_dwt_apply_result *r);

#endif
