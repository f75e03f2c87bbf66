/*
 * spoor's thread-aware crash capture for Keil RTX5 / CMSIS-RTX (spoor/crash_threads.h).
 * Include it after "rtx_os.h" (osRtxInfo, osRtxThread_t) in a file of the application and call
 * spoor_crash_add_rtx5() after spoor_crash_init().
 *
 * The dump then holds osRtxInfo (the running thread, the ready, delay, wait and terminate
 * lists, the idle thread), every thread on them and stack_window bytes (0: 512) of each
 * thread's stack from its saved sp up, never past stack_mem + stack_size.
 */
#ifndef SPOOR_THREADS_RTX5_H
#define SPOOR_THREADS_RTX5_H

#include <stddef.h>
#include <stdint.h>

#include "spoor/crash_threads.h"
#include "spoor/no_instrument.h"

#define SPOOR_RTX5_LIST(layout, member, link)                                                      \
    do {                                                                                           \
        (layout).lists[(layout).list_count].kind = SPOOR_THREAD_LIST_POINTER;                      \
        (layout).lists[(layout).list_count].head = (uint32_t)(uintptr_t)&osRtxInfo.member;         \
        (layout).lists[(layout).list_count].next = (link);                                         \
        (layout).list_count++;                                                                     \
    } while (0)

SPOOR_NO_INSTRUMENT static inline bool spoor_crash_add_rtx5(uint32_t stack_window)
{
    const uint32_t thread_next = (uint32_t)offsetof(osRtxThread_t, thread_next);
    const uint32_t delay_next = (uint32_t)offsetof(osRtxThread_t, delay_next);
    spoor_threads_layout l = {0};
    l.globals[0].start = (uint32_t)(uintptr_t)&osRtxInfo;
    l.globals[0].end = (uint32_t)(uintptr_t)&osRtxInfo + (uint32_t)sizeof osRtxInfo;
    l.global_count = 1;
    SPOOR_RTX5_LIST(l, thread.ready.thread_list, thread_next);
    SPOOR_RTX5_LIST(l, thread.idle, SPOOR_THREAD_NO_NEXT);
    SPOOR_RTX5_LIST(l, thread.delay_list, delay_next);
    SPOOR_RTX5_LIST(l, thread.wait_list, delay_next);
    SPOOR_RTX5_LIST(l, thread.terminate_list, thread_next);
    l.current = (uint32_t)(uintptr_t)&osRtxInfo.thread.run.curr;
    l.tcb_size = (uint32_t)sizeof(osRtxThread_t);
    l.sp_offset = (uint32_t)offsetof(osRtxThread_t, sp);
    l.stack_top_kind = SPOOR_STACK_TOP_SIZE;
    l.stack_low_offset = (uint32_t)offsetof(osRtxThread_t, stack_mem);
    l.stack_top_offset = (uint32_t)offsetof(osRtxThread_t, stack_size);
    l.stack_window = stack_window;
    return spoor_crash_add_threads(&l);
}

#endif
