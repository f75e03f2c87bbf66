/* The TCB type of ThreadX as tx_api.h declares it (member names and order; the port extensions
 * and the members past tx_thread_created_previous left out), the thread state values and the
 * heads of the objects a thread suspends on (TX_SEMAPHORE, TX_QUEUE, TX_MUTEX,
 * TX_EVENT_FLAGS_GROUP: their first members), for the test firmware rtos_shapes_fw.c and
 * rtos_ctx_fw.c. */
#ifndef THREADX_TYPES_H
#define THREADX_TYPES_H

typedef unsigned long ULONG;
typedef unsigned int UINT;
typedef char CHAR;
typedef void VOID;
typedef struct TX_TIMER_INTERNAL_STRUCT {
    ULONG tx_timer_internal_remaining_ticks;
    ULONG tx_timer_internal_re_initialize_ticks;
    VOID (*tx_timer_internal_timeout_function)(ULONG id);
    ULONG tx_timer_internal_timeout_param;
    struct TX_TIMER_INTERNAL_STRUCT *tx_timer_internal_active_next,
        *tx_timer_internal_active_previous, **tx_timer_internal_list_head;
} TX_TIMER_INTERNAL;
/* tx_thread_state values */
#define TX_READY ((UINT)0)
#define TX_COMPLETED ((UINT)1)
#define TX_TERMINATED ((UINT)2)
#define TX_SUSPENDED ((UINT)3)
#define TX_SLEEP ((UINT)4)
#define TX_QUEUE_SUSP ((UINT)5)
#define TX_SEMAPHORE_SUSP ((UINT)6)
#define TX_EVENT_FLAG ((UINT)7)
#define TX_MUTEX_SUSP ((UINT)13)
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
    TX_TIMER_INTERNAL tx_thread_timer;
    VOID (*tx_thread_suspend_cleanup)(struct TX_THREAD_STRUCT *thread_ptr, ULONG sequence);
    VOID *tx_thread_suspend_control_block;
    struct TX_THREAD_STRUCT *tx_thread_suspended_next, *tx_thread_suspended_previous;
    ULONG tx_thread_suspend_info;
    VOID *tx_thread_additional_suspend_info;
    UINT tx_thread_suspend_option;
    UINT tx_thread_suspend_status;
    struct TX_THREAD_STRUCT *tx_thread_created_next, *tx_thread_created_previous;
} TX_THREAD;
typedef struct TX_SEMAPHORE_STRUCT {
    ULONG tx_semaphore_id;
    CHAR *tx_semaphore_name;
    ULONG tx_semaphore_count;
    TX_THREAD *tx_semaphore_suspension_list;
    UINT tx_semaphore_suspended_count;
} TX_SEMAPHORE;
typedef struct TX_QUEUE_STRUCT {
    ULONG tx_queue_id;
    CHAR *tx_queue_name;
    UINT tx_queue_message_size;
    UINT tx_queue_capacity;
    UINT tx_queue_enqueued;
    UINT tx_queue_available_storage;
    ULONG *tx_queue_start, *tx_queue_end, *tx_queue_read, *tx_queue_write;
    TX_THREAD *tx_queue_suspension_list;
    UINT tx_queue_suspended_count;
} TX_QUEUE;
typedef struct TX_MUTEX_STRUCT {
    ULONG tx_mutex_id;
    CHAR *tx_mutex_name;
    UINT tx_mutex_ownership_count;
    TX_THREAD *tx_mutex_owner;
    UINT tx_mutex_inherit;
    UINT tx_mutex_original_priority;
    TX_THREAD *tx_mutex_suspension_list;
    UINT tx_mutex_suspended_count;
} TX_MUTEX;
typedef struct TX_EVENT_FLAGS_GROUP_STRUCT {
    ULONG tx_event_flags_group_id;
    CHAR *tx_event_flags_group_name;
    ULONG tx_event_flags_group_current;
    UINT tx_event_flags_group_reset_search;
    TX_THREAD *tx_event_flags_group_suspension_list;
    UINT tx_event_flags_group_suspended_count;
} TX_EVENT_FLAGS_GROUP;

#endif
