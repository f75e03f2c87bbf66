/* The RTOSes the DWARF layer knows: where each keeps its current-thread pointer, the name of
 * its TCB type and the names of the members spoor reads. Member names are those of the RTOS's
 * own sources (FreeRTOS tasks.c, CMSIS-RTX rtx_os.h, Zephyr kernel/thread.h, ThreadX
 * tx_api.h); examples/sched/sched.h for the example scheduler. */
#include "rtos/rtos_internal.h"

const rtos_desc spoor_rtos_descs[SPOOR_RTOS_KIND_COUNT] = {
    [SPOOR_RTOS_FREERTOS] =
        {
            .kind = SPOOR_RTOS_FREERTOS,
            .name = "freertos",
            .display = "FreeRTOS",
            .current = "pxCurrentTCB|pxCurrentTCBs[0]",
            .tcb_type = "TCB_t|tskTCB",
            .name_member = "pcTaskName",
            .prio_member = "uxPriority",
            .sp_member = "pxTopOfStack",
            /* no entry member: the initial frame pxPortInitialiseStack() leaves just below
             * pxEndOfStack (configRECORD_STACK_HIGH_ADDRESS) holds it */
            .stack_end_member = "pxEndOfStack",
            .idle = "xIdleTaskHandles[0]|xIdleTaskHandle",
            .lists = {{RTOS_LIST_FREERTOS, "pxReadyTasksLists", NULL, SPOOR_THREAD_READY, "ready"},
                      {RTOS_LIST_FREERTOS, "xPendingReadyList", NULL, SPOOR_THREAD_READY, "ready"},
                      {RTOS_LIST_FREERTOS, "xDelayedTaskList1", NULL, SPOOR_THREAD_SLEEPING,
                       "delayed"},
                      {RTOS_LIST_FREERTOS, "xDelayedTaskList2", NULL, SPOOR_THREAD_SLEEPING,
                       "delayed"},
                      {RTOS_LIST_FREERTOS, "xSuspendedTaskList", NULL, SPOOR_THREAD_SUSPENDED,
                       "suspended"},
                      {RTOS_LIST_FREERTOS, "xTasksWaitingTermination", NULL,
                       SPOOR_THREAD_TERMINATED, "deleted"}},
            .context = RTOS_CONTEXT_FREERTOS,
            .stack_low_member = "pxStack",
            .stack_top_member = "pxEndOfStack", /* configRECORD_STACK_HIGH_ADDRESS */
            .stack_top = RTOS_TOP_LAST_WORD,
            .stack_fill = RTOS_FILL_FREERTOS,
            /* no state word: the lists say; a blocked task's event list item is on the queue's
             * xTasksWaitingToReceive or xTasksWaitingToSend (queue.c) */
            .wait_member = "xEventListItem.pxContainer",
            .current_on_lists = true,
        },
    [SPOOR_RTOS_RTX5] =
        {
            .kind = SPOOR_RTOS_RTX5,
            .name = "rtx5",
            .display = "RTX5",
            .current = "osRtxInfo.thread.run.curr",
            .tcb_type = "osRtxThread_t|osRtxThread_s",
            .name_member = "name",
            .prio_member = "priority",
            .entry_member = "thread_addr",
            .sp_member = "sp",
            .id_member = "id",
            .id_value = 0xF1, /* osRtxIdThread */
            .prio_enum = "osPriority_t",
            .idle = "osRtxInfo.thread.idle",
            .lists = {{RTOS_LIST_LINKED, "osRtxInfo.thread.ready.thread_list", "thread_next",
                       SPOOR_THREAD_READY, "ready"},
                      {RTOS_LIST_LINKED, "osRtxInfo.thread.idle", "thread_next", SPOOR_THREAD_READY,
                       "ready"},
                      {RTOS_LIST_LINKED, "osRtxInfo.thread.delay_list", "delay_next",
                       SPOOR_THREAD_SLEEPING, "delayed"},
                      {RTOS_LIST_LINKED, "osRtxInfo.thread.wait_list", "delay_next",
                       SPOOR_THREAD_BLOCKED, "blocked"},
                      {RTOS_LIST_LINKED, "osRtxInfo.thread.terminate_list", "thread_next",
                       SPOOR_THREAD_TERMINATED, "terminated"}},
            .context = RTOS_CONTEXT_RTX5,
            .exc_return_member = "stack_frame",
            .stack_low_member = "stack_mem",
            .stack_top_member = "stack_size",
            .stack_top = RTOS_TOP_SIZE,
            .stack_fill = RTOS_FILL_RTX5,
            .state_member = "state",      /* rtx_os.h osRtxThread* / osRtxThreadWaiting* */
            .wait_member = "thread_prev", /* up the object's waiting list to the object */
        },
    [SPOOR_RTOS_ZEPHYR] =
        {
            .kind = SPOOR_RTOS_ZEPHYR,
            .name = "zephyr",
            .display = "Zephyr",
            .current = "_kernel.cpus[0].current|_kernel.current",
            .tcb_type = "k_thread",
            .name_member = "name",
            .prio_member = "base.prio",
            .entry_member = "entry.pEntry",
            .sp_member = "callee_saved.psp",
            .idle = "&z_idle_threads",
            /* CONFIG_THREAD_MONITOR: every thread on one list */
            .lists = {{RTOS_LIST_LINKED, "_kernel.threads", "next_thread", SPOOR_THREAD_READY,
                       "ready"}},
            .context = RTOS_CONTEXT_ZEPHYR,
            .callee_saved_member = "callee_saved.v1",
            .exc_return_member = "arch.mode_exc_return",
            .stack_low_member = "stack_info.start", /* CONFIG_THREAD_STACK_INFO */
            .stack_top_member = "stack_info.size",
            .stack_top = RTOS_TOP_SIZE,
            .stack_fill = RTOS_FILL_ZEPHYR,
            .state_member = "base.thread_state",
            .wait_member = "base.pended_on",
            .timeout_member = "base.timeout.node.next",
            .thread_root = "z_thread_entry",
            .current_on_lists = true,
        },
    [SPOOR_RTOS_THREADX] =
        {
            .kind = SPOOR_RTOS_THREADX,
            .name = "threadx",
            .display = "ThreadX",
            .current = "_tx_thread_current_ptr",
            .tcb_type = "TX_THREAD|TX_THREAD_STRUCT",
            .name_member = "tx_thread_name",
            .prio_member = "tx_thread_priority",
            .entry_member = "tx_thread_entry",
            .sp_member = "tx_thread_stack_ptr",
            .idle = NULL, /* no idle thread: the scheduler waits with no current thread */
            /* tx_thread_create: a circular list through tx_thread_created_next */
            .lists = {{RTOS_LIST_LINKED, "_tx_thread_created_ptr", "tx_thread_created_next",
                       SPOOR_THREAD_UNKNOWN, "created", true}},
            .context = RTOS_CONTEXT_THREADX,
            .stack_low_member = "tx_thread_stack_start",
            .stack_top_member = "tx_thread_stack_end",
            .stack_top = RTOS_TOP_LAST_BYTE,
            .stack_fill = RTOS_FILL_THREADX,
            .state_member = "tx_thread_state", /* tx_api.h TX_READY ... */
            .wait_member = "tx_thread_suspend_control_block",
            .thread_root = "_tx_thread_shell_entry",
            .current_on_lists = true,
        },
    [SPOOR_RTOS_SCHED] =
        {
            .kind = SPOOR_RTOS_SCHED,
            .name = "sched",
            .display = "sched",
            .current = "sched_current",
            .tcb_type = "sched_task",
            .name_member = "name",
            .prio_member = "priority",
            .entry_member = "entry",
            .sp_member = "sp",
            .idle = "sched_idle",
            .lists = {{RTOS_LIST_ARRAY, "sched_tasks", NULL, SPOOR_THREAD_READY, "not running"}},
            .context = RTOS_CONTEXT_R4_R11_LR,
        },
};
