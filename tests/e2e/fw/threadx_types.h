/* The TCB type of ThreadX as tx_api.h declares it (member names and order; the members past
 * tx_thread_created_previous left out), for the test firmware rtos_shapes_fw.c and
 * rtos_ctx_fw.c. */
#ifndef THREADX_TYPES_H
#define THREADX_TYPES_H

typedef unsigned long ULONG;
typedef unsigned int UINT;
typedef char CHAR;
typedef void VOID;
typedef struct TX_THREAD_STRUCT {
    ULONG tx_thread_id;
    ULONG tx_thread_run_count;
    VOID *tx_thread_stack_ptr;
    VOID *tx_thread_stack_start;
    VOID *tx_thread_stack_end;
    ULONG tx_thread_stack_size;
    ULONG tx_thread_time_slice;
    ULONG tx_thread_new_time_slice;
    struct TX_THREAD_STRUCT *tx_thread_ready_next, *tx_thread_ready_previous;
    CHAR *tx_thread_name;
    UINT tx_thread_priority;
    UINT tx_thread_state;
    UINT tx_thread_delayed_suspend;
    UINT tx_thread_suspending;
    UINT tx_thread_preempt_threshold;
    VOID (*tx_thread_schedule_hook)(struct TX_THREAD_STRUCT *thread_ptr, ULONG id);
    VOID (*tx_thread_entry)(ULONG id);
    ULONG tx_thread_entry_parameter;
    struct TX_THREAD_STRUCT *tx_thread_created_next, *tx_thread_created_previous;
} TX_THREAD;

#endif
