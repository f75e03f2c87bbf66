/*
 * spoor's thread-aware crash capture for Eclipse ThreadX (spoor/crash_threads.h). Include it
 * after "tx_api.h" (TX_THREAD) in a file of the application and call spoor_crash_add_threadx()
 * after spoor_crash_init(). The kernel's _tx_thread_created_ptr and _tx_thread_current_ptr
 * (tx_thread.h) are reached by their link names, whatever their declared qualifiers.
 *
 * The dump then holds the two pointers, every thread on the (circular) created list and
 * stack_window bytes (0: 512) of each thread's stack from tx_thread_stack_ptr up, never past
 * tx_thread_stack_end.
 */
#ifndef SPOOR_THREADS_THREADX_H
#define SPOOR_THREADS_THREADX_H

#include <stddef.h>
#include <stdint.h>

#include "spoor/crash_threads.h"
#include "spoor/no_instrument.h"

extern uint8_t spoor_tx_thread_created_ptr[4] __asm__("_tx_thread_created_ptr");
extern uint8_t spoor_tx_thread_current_ptr[4] __asm__("_tx_thread_current_ptr");

SPOOR_NO_INSTRUMENT static inline bool spoor_crash_add_threadx(uint32_t stack_window)
{
    spoor_threads_layout l = {0};
    l.globals[0].start = (uint32_t)(uintptr_t)spoor_tx_thread_created_ptr;
    l.globals[0].end = l.globals[0].start + 4u;
    l.globals[1].start = (uint32_t)(uintptr_t)spoor_tx_thread_current_ptr;
    l.globals[1].end = l.globals[1].start + 4u;
    l.global_count = 2;
    l.lists[0].kind = SPOOR_THREAD_LIST_POINTER;
    l.lists[0].head = (uint32_t)(uintptr_t)spoor_tx_thread_created_ptr;
    l.lists[0].next = (uint32_t)offsetof(TX_THREAD, tx_thread_created_next);
    l.list_count = 1;
    l.current = (uint32_t)(uintptr_t)spoor_tx_thread_current_ptr;
    l.tcb_size = (uint32_t)sizeof(TX_THREAD);
    l.sp_offset = (uint32_t)offsetof(TX_THREAD, tx_thread_stack_ptr);
    l.stack_top_kind = SPOOR_STACK_TOP_LAST_BYTE;
    l.stack_top_offset = (uint32_t)offsetof(TX_THREAD, tx_thread_stack_end);
    l.stack_window = stack_window;
    return spoor_crash_add_threads(&l);
}

#endif
