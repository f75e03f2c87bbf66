/* Stack usage: how big a stack is, how much of it was in use when the snapshot was taken, and
 * how deep it ever went (its high-water mark, from the pattern the RTOS filled it with when it
 * created the thread), with a flag when it overflowed or nearly did. For the main stack (from
 * the ELF's stack symbols and sections) and for every RTOS thread (from its TCB, through the
 * RTOS's DWARF types: spoor/rtos.h). spoor crash prints them; spoor top can ask for them too.
 *
 * Per RTOS (member names from its own sources, read by name through DWARF):
 *   FreeRTOS  pxStack (the far end) and pxEndOfStack (configRECORD_STACK_HIGH_ADDRESS: the
 *             last word); without pxEndOfStack the heap block header before pxStack (heap_2,
 *             heap_4, heap_5: BlockLink_t, size with the allocated bit), else the saved SP only
 *             bounds it. Fill byte 0xA5 (tskSTACK_FILL_BYTE); free_min counted as
 *             uxTaskGetStackHighWaterMark does (fill bytes from pxStack up, whole words);
 *             overflowed when the 16 bytes at pxStack are not all 0xA5 (what
 *             configCHECK_FOR_STACK_OVERFLOW 2 checks).
 *   RTX5      stack_mem, stack_size. Fill word 0xCCCCCCCC (osRtxStackFillPattern), the magic
 *             word 0xE25A2EA5 (osRtxStackMagicWord) at stack_mem; free_min counted as
 *             osThreadGetStackSpace does (the magic word and the fill words above it; 0 when
 *             the magic word is broken); overflowed when it is.
 *   Zephyr    stack_info.start, stack_info.size. Fill byte 0xAA (CONFIG_INIT_STACKS); free_min
 *             counted as k_thread_stack_space_get does (fill bytes from start up); overflowed
 *             when none is left.
 *   ThreadX   tx_thread_stack_start, tx_thread_stack_end (its last byte). Fill byte 0xEF
 *             (TX_STACK_FILL, TX_ENABLE_STACK_CHECKING); free_min counted as
 *             _tx_thread_stack_analyze does (fill words from the start up); overflowed when the
 *             first word is not the fill word.
 * A stack whose unused part holds no fill word was not filled: no high-water mark. Every
 * stack: overflowed too when the SP lies below the stack. */
#ifndef SPOOR_STACK_USAGE_H
#define SPOOR_STACK_USAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "spoor/elf.h"
#include "spoor/read.h"
#include "spoor/rtos.h"

typedef struct spoor_stack_usage {
    bool found;         /* the stack's far end is known (low) */
    uint32_t low, high; /* [low, high): the stack grows down from high; has_high */
    bool has_high;      /* high and size are known */
    uint32_t size;      /* high - low */
    bool has_sp;        /* used is known: sp given and high known */
    uint32_t sp;        /* the stack pointer at the snapshot (the thread's saved SP) */
    uint32_t used;      /* high - sp */
    bool filled;        /* the fill pattern was found: peak and free_min are known */
    uint32_t free_min;  /* bytes at the far end never written (as the RTOS counts them) */
    uint32_t peak;      /* size - free_min (has_high), else 0 */
    bool overflowed;    /* the guard/magic word is broken, or sp is below low */
    bool unreadable;    /* the fill count met memory the input does not hold (at unreadable_at):
                           free_min and peak are unknown (filled false) */
    uint32_t unreadable_at;
    bool overflow_unknown; /* unreadable, and the guard/magic word was not read: whether the
                              stack overflowed is unknown (overflowed false) */
    bool nearly_full;      /* the free part (free_min, else sp - low) is under 10 % of size */
    const char *from;      /* where the bounds come from, in words: "pxStack/pxEndOfStack",
                              "heap block header", "saved SP", "stack_mem/stack_size",
                              "stack_info", "tx_thread_stack_start/end", "section .stack",
                              "symbols __stack_bottom/__stack_top", ... */
    char why[160];         /* found false: why (no stack symbols, no such members, ...) */
} spoor_stack_usage;

/* The main stack: the ELF's .stack section, or its symbols (the top: _estack, __StackTop,
 * __stack_top, __stack, _stack_top, __initial_sp; the far end: __StackLimit, __stack_bottom,
 * __stack_limit, _sstack, __stack_start__; only a top: the end of .heap as the far end). sp:
 * MSP at the snapshot (has_sp false: unknown). The fill pattern is looked for as one of the
 * RTOSes' words (0xA5A5A5A5, 0xCCCCCCCC, 0xAAAAAAAA, 0xEFEFEFEF) at the far end, counted in
 * whole words. found false with why set when the ELF names no main stack. read (ctx): target
 * memory. Returns out->found. */
bool spoor_stack_usage_main(const spoor_elf *elf, spoor_read_fn read, void *ctx, bool has_sp,
                            uint32_t sp, spoor_stack_usage *out);

/* A thread's stack from its TCB (t from spoor_rtos_read_thread); sp: its stack pointer (the
 * snapshot's for the running thread, else t->sp), has_sp false when unknown. found false with
 * why set when the RTOS's TCB records no stack (the members are not in its DWARF type, the
 * example scheduler) or the TCB cannot be read. rtos_fills: the caller knows this RTOS fills
 * its stacks (spoor_stack_usage_rtos_fills), so a stack that holds no fill word any more was
 * used to its end (overflowed) rather than never filled. Returns out->found. */
bool spoor_stack_usage_thread(const spoor_rtos *r, spoor_read_fn read, void *ctx,
                              const spoor_rtos_thread *t, bool has_sp, uint32_t sp, bool rtos_fills,
                              spoor_stack_usage *out);

/* Whether the build fills its threads' stacks: the fill pattern is found on at least one
 * thread's stack (every thread on the RTOS's lists is looked at, with its saved SP). */
bool spoor_stack_usage_rtos_fills(const spoor_rtos *r, spoor_read_fn read, void *ctx);
/* Whether thread t's stack (t from spoor_rtos_read_thread, with its saved SP) holds the fill
 * pattern: spoor_stack_usage_rtos_fills asks this of each thread, for a caller that has read
 * the threads already. */
bool spoor_stack_usage_thread_filled(const spoor_rtos *r, spoor_read_fn read, void *ctx,
                                     const spoor_rtos_thread *t);

#endif
