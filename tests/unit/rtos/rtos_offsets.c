/* The layouts of the kernels' structures the test firmware declares (tests/e2e/fw/*_types.h), as
 * arm-none-eabi-gcc lays them out for the target: compiled with -S, each OFF/SIZE line leaves
 * "@@ NAME VALUE" in the assembly, which tests/unit/rtos/rtos_offsets.cmake turns into
 * rtos_offsets.h for the RTOS-layer unit test (test_rtos_threads.c). The test writes its TCB
 * images with these numbers, found by the compiler, not by the DWARF reader under test. */
#include <stddef.h>

#include "freertos_types.h"
#include "rtx5_types.h"
#include "threadx_types.h"
#include "zephyr_types.h"

#define OFF(name, type, member) __asm__ volatile("\n@@ " #name " %c0" ::"i"(offsetof(type, member)))
#define SIZE(name, type) __asm__ volatile("\n@@ " #name " %c0" ::"i"(sizeof(type)))

void rtos_offsets(void);
void rtos_offsets(void)
{
    /* FreeRTOS tasks.c TCB_t, list.h, queue.c, event_groups.c */
    SIZE(FR_TCB_SIZE, TCB_t);
    OFF(FR_TCB_TOP, TCB_t, pxTopOfStack);
    OFF(FR_TCB_STATE_ITEM, TCB_t, xStateListItem);
    OFF(FR_TCB_EVENT_ITEM, TCB_t, xEventListItem);
    OFF(FR_TCB_PRIO, TCB_t, uxPriority);
    OFF(FR_TCB_STACK, TCB_t, pxStack);
    OFF(FR_TCB_NAME, TCB_t, pcTaskName);
    OFF(FR_TCB_END, TCB_t, pxEndOfStack);
    OFF(FR_TCB_NOTIFY_STATE, TCB_t, ucNotifyState);
    SIZE(FR_ITEM_SIZE, ListItem_t);
    OFF(FR_ITEM_VALUE, ListItem_t, xItemValue);
    OFF(FR_ITEM_NEXT, ListItem_t, pxNext);
    OFF(FR_ITEM_PREV, ListItem_t, pxPrevious);
    OFF(FR_ITEM_OWNER, ListItem_t, pvOwner);
    OFF(FR_ITEM_CONTAINER, ListItem_t, pxContainer);
    SIZE(FR_LIST_SIZE, List_t);
    OFF(FR_LIST_COUNT, List_t, uxNumberOfItems);
    OFF(FR_LIST_INDEX, List_t, pxIndex);
    OFF(FR_LIST_END, List_t, xListEnd);
    OFF(FR_QUEUE_HEAD, Queue_t, pcHead);
    OFF(FR_QUEUE_SEND, Queue_t, xTasksWaitingToSend);
    OFF(FR_QUEUE_RECV, Queue_t, xTasksWaitingToReceive);
    OFF(FR_QUEUE_ITEM_SIZE, Queue_t, uxItemSize);
    SIZE(FR_QUEUE_SIZE, Queue_t);
    OFF(FR_GROUP_WAITING, EventGroup_t, xTasksWaitingForBits);
    SIZE(FR_REGISTRY_ITEM_SIZE, QueueRegistryItem_t);
    OFF(FR_REGISTRY_NAME, QueueRegistryItem_t, pcQueueName);
    OFF(FR_REGISTRY_HANDLE, QueueRegistryItem_t, xHandle);

    /* Zephyr struct k_thread, struct z_kernel, the objects' wait queues */
    SIZE(Z_THREAD_SIZE, struct k_thread);
    OFF(Z_PENDED_ON, struct k_thread, base.pended_on);
    OFF(Z_STATE, struct k_thread, base.thread_state);
    OFF(Z_PRIO, struct k_thread, base.prio);
    OFF(Z_TIMEOUT_NEXT, struct k_thread, base.timeout.node.next);
    OFF(Z_CALLEE_V1, struct k_thread, callee_saved.v1);
    OFF(Z_CALLEE_PSP, struct k_thread, callee_saved.psp);
    OFF(Z_ENTRY, struct k_thread, entry.pEntry);
    OFF(Z_NEXT_THREAD, struct k_thread, next_thread);
    OFF(Z_NAME, struct k_thread, name);
    OFF(Z_STACK_START, struct k_thread, stack_info.start);
    OFF(Z_STACK_SIZE, struct k_thread, stack_info.size);
    OFF(Z_KERNEL_CURRENT, struct z_kernel, cpus[0].current);
    OFF(Z_KERNEL_THREADS, struct z_kernel, threads);
    OFF(Z_SEM_WAIT_Q, struct k_sem, wait_q);

    /* RTX5 rtx_os.h osRtxThread_t, osRtxInfo_t, the objects' headers */
    SIZE(RTX_THREAD_SIZE, osRtxThread_t);
    OFF(RTX_ID, osRtxThread_t, id);
    OFF(RTX_STATE, osRtxThread_t, state);
    OFF(RTX_NAME, osRtxThread_t, name);
    OFF(RTX_THREAD_NEXT, osRtxThread_t, thread_next);
    OFF(RTX_THREAD_PREV, osRtxThread_t, thread_prev);
    OFF(RTX_DELAY_NEXT, osRtxThread_t, delay_next);
    OFF(RTX_PRIORITY, osRtxThread_t, priority);
    OFF(RTX_STACK_FRAME, osRtxThread_t, stack_frame);
    OFF(RTX_STACK_MEM, osRtxThread_t, stack_mem);
    OFF(RTX_STACK_SIZE, osRtxThread_t, stack_size);
    OFF(RTX_SP, osRtxThread_t, sp);
    OFF(RTX_THREAD_ADDR, osRtxThread_t, thread_addr);
    OFF(RTX_INFO_CURR, osRtxInfo_t, thread.run.curr);
    OFF(RTX_INFO_READY, osRtxInfo_t, thread.ready.thread_list);
    OFF(RTX_INFO_IDLE, osRtxInfo_t, thread.idle);
    OFF(RTX_INFO_DELAY, osRtxInfo_t, thread.delay_list);
    OFF(RTX_INFO_WAIT, osRtxInfo_t, thread.wait_list);
    OFF(RTX_INFO_TERMINATE, osRtxInfo_t, thread.terminate_list);
    OFF(RTX_OBJECT_ID, osRtxObject_t, id);
    OFF(RTX_OBJECT_NAME, osRtxObject_t, name);
    OFF(RTX_OBJECT_THREADS, osRtxObject_t, thread_list);

    /* ThreadX tx_api.h TX_THREAD */
    SIZE(TX_THREAD_SIZE, TX_THREAD);
    OFF(TX_STACK_PTR, TX_THREAD, tx_thread_stack_ptr);
    OFF(TX_STACK_START, TX_THREAD, tx_thread_stack_start);
    OFF(TX_STACK_END, TX_THREAD, tx_thread_stack_end);
    OFF(TX_NAME, TX_THREAD, tx_thread_name);
    OFF(TX_PRIORITY, TX_THREAD, tx_thread_priority);
    OFF(TX_STATE, TX_THREAD, tx_thread_state);
    OFF(TX_ENTRY, TX_THREAD, tx_thread_entry);
    OFF(TX_SUSPEND_BLOCK, TX_THREAD, tx_thread_suspend_control_block);
    OFF(TX_CREATED_NEXT, TX_THREAD, tx_thread_created_next);
}
