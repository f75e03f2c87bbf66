/*
 * spoor's thread-aware crash capture for FreeRTOS (spoor/crash_threads.h). FreeRTOS keeps its
 * task lists `static` in tasks.c; tasks.c includes "freertos_tasks_c_additions.h" at its end
 * when FreeRTOSConfig.h sets
 *
 *     #define configINCLUDE_FREERTOS_TASK_C_ADDITIONS_H 1
 *
 * and this file, found through the include path (add <spoor>/include/spoor/freertos to the
 * include directories of tasks.c, or #include "spoor/freertos/freertos_tasks_c_additions.h"
 * from your own freertos_tasks_c_additions.h), defines spoor_crash_add_freertos() there, with
 * the kernel's real types and variables. Call it after spoor_crash_init():
 *
 *     bool spoor_crash_add_freertos(uint32_t stack_window);   // spoor/crash_threads.h
 *
 * The dump then holds pxCurrentTCB, the ready, delayed, pending-ready, suspended and
 * terminated lists, the idle task handle, every TCB on them and stack_window bytes (0: 512) of
 * each task's stack from pxTopOfStack up, never past pxEndOfStack when the TCB has it
 * (configRECORD_STACK_HIGH_ADDRESS 1).
 *
 * Single-core FreeRTOS (V10 and V11; configNUMBER_OF_CORES 1).
 */
#ifndef SPOOR_FREERTOS_TASKS_C_ADDITIONS_H
#define SPOOR_FREERTOS_TASKS_C_ADDITIONS_H

#include <stddef.h>
#include <stdint.h>

#include "spoor/crash_threads.h"
#include "spoor/no_instrument.h"

#if defined(configNUMBER_OF_CORES) && configNUMBER_OF_CORES > 1
#error "spoor_crash_add_freertos: single-core FreeRTOS only"
#endif

#define SPOOR_FREERTOS_ADDRESS(object) ((uint32_t)(uintptr_t) & (object))
#define SPOOR_FREERTOS_GLOBAL(layout, object)                                                      \
    do {                                                                                           \
        (layout).globals[(layout).global_count].start = SPOOR_FREERTOS_ADDRESS(object);            \
        (layout).globals[(layout).global_count].end =                                              \
            SPOOR_FREERTOS_ADDRESS(object) + (uint32_t)sizeof(object);                             \
        (layout).global_count++;                                                                   \
    } while (0)
#define SPOOR_FREERTOS_LIST(layout, object, n)                                                     \
    do {                                                                                           \
        (layout).lists[(layout).list_count].kind = SPOOR_THREAD_LIST_FREERTOS;                     \
        (layout).lists[(layout).list_count].head = SPOOR_FREERTOS_ADDRESS(object);                 \
        (layout).lists[(layout).list_count].count = (n);                                           \
        (layout).list_count++;                                                                     \
    } while (0)

SPOOR_NO_INSTRUMENT bool spoor_crash_add_freertos(uint32_t stack_window)
{
    spoor_threads_layout l = {0};
    SPOOR_FREERTOS_GLOBAL(l, pxCurrentTCB);
    SPOOR_FREERTOS_GLOBAL(l, pxReadyTasksLists);
    SPOOR_FREERTOS_GLOBAL(l, xDelayedTaskList1);
    SPOOR_FREERTOS_GLOBAL(l, xDelayedTaskList2);
    SPOOR_FREERTOS_GLOBAL(l, pxDelayedTaskList);
    SPOOR_FREERTOS_GLOBAL(l, pxOverflowDelayedTaskList);
    SPOOR_FREERTOS_GLOBAL(l, xPendingReadyList);
    SPOOR_FREERTOS_GLOBAL(l, uxCurrentNumberOfTasks);
    SPOOR_FREERTOS_LIST(l, pxReadyTasksLists, configMAX_PRIORITIES);
    SPOOR_FREERTOS_LIST(l, xDelayedTaskList1, 1u);
    SPOOR_FREERTOS_LIST(l, xDelayedTaskList2, 1u);
    SPOOR_FREERTOS_LIST(l, xPendingReadyList, 1u);
#if (INCLUDE_vTaskDelete == 1)
    SPOOR_FREERTOS_GLOBAL(l, xTasksWaitingTermination);
    SPOOR_FREERTOS_LIST(l, xTasksWaitingTermination, 1u);
#endif
#if (INCLUDE_vTaskSuspend == 1)
    SPOOR_FREERTOS_GLOBAL(l, xSuspendedTaskList);
    SPOOR_FREERTOS_LIST(l, xSuspendedTaskList, 1u);
#endif
#if defined(configNUMBER_OF_CORES) /* FreeRTOS V11 */
    SPOOR_FREERTOS_GLOBAL(l, xIdleTaskHandles);
#else
    SPOOR_FREERTOS_GLOBAL(l, xIdleTaskHandle);
#endif
    l.current = SPOOR_FREERTOS_ADDRESS(pxCurrentTCB);
    l.tcb_size = (uint32_t)sizeof(TCB_t);
    l.sp_offset = (uint32_t)offsetof(TCB_t, pxTopOfStack);
#if (portSTACK_GROWTH < 0) && (configRECORD_STACK_HIGH_ADDRESS == 1)
    l.stack_top_kind = SPOOR_STACK_TOP_LAST_WORD;
    l.stack_top_offset = (uint32_t)offsetof(TCB_t, pxEndOfStack);
#endif
    l.list_size = (uint32_t)sizeof(List_t);
    l.list_end = (uint32_t)offsetof(List_t, xListEnd);
    l.list_first = (uint32_t)offsetof(List_t, xListEnd.pxNext);
    l.item_next = (uint32_t)offsetof(ListItem_t, pxNext);
    l.item_owner = (uint32_t)offsetof(ListItem_t, pvOwner);
    l.stack_window = stack_window;
    return spoor_crash_add_threads(&l);
}

#endif
