/*
 * Thread-aware crash dumps (docs/crash-capture.md, "RTOS threads in a dump"): at capture time
 * the dump writer walks the RTOS's thread lists and records, as MEMORY regions, what
 * `spoor crash --threads` reads through the ELF's DWARF types: the kernel globals (list heads,
 * the current-thread pointer), every thread control block (TCB) and each thread's stack from
 * its saved stack pointer up (its saved registers, then its frames), at most stack_window bytes
 * and never past the stack's top. The fault's own stack windows and the kernel data come
 * first, then every TCB, then the thread stacks in list order, as far as the buffer holds.
 *
 * The walk is bounded (SPOOR_THREADS_MAX threads, as many steps per list), allocates nothing
 * and reads a word only after checking it lies in the configured RAM: a corrupted list ends
 * the walk of that list, never the capture.
 *
 * One call after spoor_crash_init() configures it, from code compiled with the kernel's own
 * headers, so that every offset and size comes from the kernel's real types:
 *   FreeRTOS  spoor_crash_add_freertos()   spoor/freertos/freertos_tasks_c_additions.h
 *   Zephyr    spoor_crash_add_zephyr()     spoor/threads_zephyr.h
 *   RTX5      spoor_crash_add_rtx5()       spoor/threads_rtx5.h
 *   ThreadX   spoor_crash_add_threadx()    spoor/threads_threadx.h
 * or, for another kernel, spoor_crash_add_threads() with a layout filled in by hand.
 */
#ifndef SPOOR_CRASH_THREADS_H
#define SPOOR_CRASH_THREADS_H

#include <stdbool.h>
#include <stdint.h>

#include "spoor/crash.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SPOOR_THREADS_MAX 64u         /* threads one capture records */
#define SPOOR_THREADS_MAX_GLOBALS 12u /* kernel objects copied whole */
#define SPOOR_THREADS_MAX_LISTS 6u
#define SPOOR_THREADS_DEFAULT_WINDOW 512u /* stack bytes per thread when the layout says 0 */

/* How a thread list is linked. */
enum spoor_thread_list_kind {
    /* head: the address of a pointer to the first TCB; next: the offset in the TCB of the
     * pointer to the following TCB (SPOOR_THREAD_NO_NEXT: the first TCB only). Ends at a null
     * pointer or when the first TCB comes again (a circular list). */
    SPOOR_THREAD_LIST_POINTER = 1,
    /* head: the address of count FreeRTOS lists (list.h List_t) one after another; the items
     * run from the list's xListEnd.pxNext to &xListEnd, each item's pvOwner is a TCB. */
    SPOOR_THREAD_LIST_FREERTOS = 2,
};
#define SPOOR_THREAD_NO_NEXT 0xFFFFFFFFu

typedef struct spoor_thread_list {
    uint32_t kind; /* enum spoor_thread_list_kind */
    uint32_t head;
    uint32_t next;  /* POINTER: offset of the next pointer in the TCB */
    uint32_t count; /* FREERTOS: lists in the array (0 counts as 1) */
} spoor_thread_list;

/* Where a TCB keeps the top of its thread's stack. */
enum spoor_stack_top_kind {
    SPOOR_STACK_TOP_NONE = 0,      /* not known: stack_window bytes from the saved SP */
    SPOOR_STACK_TOP_LAST_WORD = 1, /* a pointer to the stack's last word (FreeRTOS pxEndOfStack) */
    SPOOR_STACK_TOP_LAST_BYTE = 2, /* a pointer to its last byte (ThreadX tx_thread_stack_end) */
    SPOOR_STACK_TOP_SIZE = 3,      /* a size (at stack_top) added to a start (at stack_low) */
};

typedef struct spoor_threads_layout {
    /* kernel objects copied whole: list heads, the current-thread pointer, kernel state */
    spoor_range globals[SPOOR_THREADS_MAX_GLOBALS];
    uint32_t global_count;
    spoor_thread_list lists[SPOOR_THREADS_MAX_LISTS];
    uint32_t list_count;
    /* the address of the current-thread pointer (0: none): that thread's saved SP is stale
     * while it runs, its stack is in the fault's stack windows */
    uint32_t current;
    uint32_t tcb_size;
    uint32_t sp_offset; /* the saved stack pointer in the TCB */
    uint32_t stack_top_kind;
    uint32_t stack_top_offset;
    uint32_t stack_low_offset; /* SPOOR_STACK_TOP_SIZE: the stack's start */
    /* FreeRTOS lists (list.h): sizeof(List_t), offsetof(List_t, xListEnd),
     * offsetof(List_t, xListEnd.pxNext), offsetof(ListItem_t, pxNext) and pvOwner */
    uint32_t list_size, list_end, list_first, item_next, item_owner;
    uint32_t stack_window; /* stack bytes per thread (0: SPOOR_THREADS_DEFAULT_WINDOW) */
} spoor_threads_layout;

/* Records the threads of layout in every future dump (after spoor_crash_init(), which forgets
 * an earlier layout). The layout is copied. False when it is unusable (no list, a TCB size of
 * 0 or more than 64 KiB, too many globals or lists). */
bool spoor_crash_add_threads(const spoor_threads_layout *layout);

/* FreeRTOS: defined inside tasks.c by spoor/freertos/freertos_tasks_c_additions.h. */
bool spoor_crash_add_freertos(uint32_t stack_window);

/* ---- portable pieces (also built for the host and unit-tested there) ------------------- */

/* Walks layout's lists in memory (every read checked against memory->ram) and hands out the
 * regions in order: globals (SPOOR_REGION_RTOS), TCBs (SPOOR_REGION_RTOS), then the thread
 * stacks (SPOOR_REGION_THREAD_STACK), each stack clipped to the RAM range it starts in.
 * Returns the number of threads found. */
uint32_t spoor_threads_regions(const spoor_threads_layout *layout, const spoor_memory *memory,
                               spoor_region_fn emit, void *ctx);

#ifdef __cplusplus
}
#endif

#endif
