/*
 * spoor's thread-aware crash capture for Zephyr (spoor/crash_threads.h). Include it after
 * Zephyr's <zephyr/kernel.h> and <zephyr/kernel_structs.h> (struct k_thread, struct z_kernel,
 * _kernel), in a file of the application, and call spoor_crash_add_zephyr() after
 * spoor_crash_init(). Needs CONFIG_THREAD_MONITOR (every thread on _kernel.threads); with
 * CONFIG_THREAD_STACK_INFO a thread's stack is never read past its top.
 *
 * The dump then holds _kernel, every thread on _kernel.threads and stack_window bytes (0: 512)
 * of each thread's stack from its saved PSP (callee_saved.psp) up. Single-core builds.
 */
#ifndef SPOOR_THREADS_ZEPHYR_H
#define SPOOR_THREADS_ZEPHYR_H

#include <stddef.h>
#include <stdint.h>

#include "spoor/crash_threads.h"
#include "spoor/no_instrument.h"

#if !defined(CONFIG_THREAD_MONITOR)
#error "spoor_crash_add_zephyr needs CONFIG_THREAD_MONITOR=y (the list of all threads)"
#endif

SPOOR_NO_INSTRUMENT static inline bool spoor_crash_add_zephyr(uint32_t stack_window)
{
    spoor_threads_layout l = {0};
    l.globals[0].start = (uint32_t)(uintptr_t)&_kernel;
    l.globals[0].end = (uint32_t)(uintptr_t)&_kernel + (uint32_t)sizeof _kernel;
    l.global_count = 1;
    l.lists[0].kind = SPOOR_THREAD_LIST_POINTER;
    l.lists[0].head = (uint32_t)(uintptr_t)&_kernel.threads;
    l.lists[0].next = (uint32_t)offsetof(struct k_thread, next_thread);
    l.list_count = 1;
    l.current = (uint32_t)(uintptr_t)&_kernel.cpus[0].current;
    l.tcb_size = (uint32_t)sizeof(struct k_thread);
    l.sp_offset = (uint32_t)offsetof(struct k_thread, callee_saved.psp);
#if defined(CONFIG_THREAD_STACK_INFO)
    l.stack_top_kind = SPOOR_STACK_TOP_SIZE;
    l.stack_low_offset = (uint32_t)offsetof(struct k_thread, stack_info.start);
    l.stack_top_offset = (uint32_t)offsetof(struct k_thread, stack_info.size);
#endif
    l.stack_window = stack_window;
    return spoor_crash_add_threads(&l);
}

#endif
