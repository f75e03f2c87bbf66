/* Zephyr's thread and kernel types as its headers declare them (member names and order from
 * include/zephyr/kernel/thread.h, kernel_structs.h, kernel.h and arch/arm/thread.h;
 * configuration-dependent members partly left out, as a build may; CONFIG_FPU_SHARING and
 * CONFIG_ARM_STORE_EXC_RETURN as Zephyr's own #ifs), the base.thread_state bits of Zephyr 2.3 to
 * 4.0 (kernel_structs.h) and the heads of the objects a thread pends on (k_sem, k_mutex, k_msgq,
 * k_event: their wait queue first), for the test firmware (rtos_shapes_fw.c, rtos_ctx_fw.c). */
#ifndef ZEPHYR_TYPES_H
#define ZEPHYR_TYPES_H

#include <stddef.h>
#include <stdint.h>

typedef void (*k_thread_entry_t)(void *p1, void *p2, void *p3);
/* base.thread_state */
#define _THREAD_DUMMY (1u << 0)
#define _THREAD_PENDING (1u << 1)
#define _THREAD_PRESTART (1u << 2)
#define _THREAD_DEAD (1u << 3)
#define _THREAD_SUSPENDED (1u << 4)
#define _THREAD_ABORTING (1u << 5)
#define _THREAD_QUEUED (1u << 7)
struct _dnode {
    union {
        struct _dnode *head;
        struct _dnode *next;
    };
    union {
        struct _dnode *tail;
        struct _dnode *prev;
    };
};
typedef struct _dnode sys_dlist_t;
typedef struct _dnode sys_dnode_t;
typedef struct {
    sys_dlist_t waitq;
} _wait_q_t;
struct _timeout {
    sys_dnode_t node;
    void (*fn)(struct _timeout *t);
    int32_t dticks;
};
struct _thread_base {
    union {
        sys_dnode_t qnode_dlist;
    };
    _wait_q_t *pended_on;
    uint8_t user_options;
    uint8_t thread_state;
    union {
        struct {
            int8_t prio;
            uint8_t sched_locked;
        };
        uint16_t preempt;
    };
    uint32_t order_key;
    struct _timeout timeout;
};
struct _callee_saved {
    uint32_t v1, v2, v3, v4, v5, v6, v7, v8;
    uint32_t psp;
};
struct _preempt_float {
    float s16, s17, s18, s19, s20, s21, s22, s23, s24, s25, s26, s27, s28, s29, s30, s31;
};
struct _thread_arch {
    uint32_t basepri;
    uint32_t swap_return_value;
#if defined(CONFIG_FPU_SHARING)
    struct _preempt_float preempt_float;
#endif
#if defined(CONFIG_ARM_STORE_EXC_RETURN)
    union {
        uint32_t mode;
        struct {
            uint8_t mode_bits;
            uint8_t mode_exc_return;
            uint16_t mode_reserved2;
        };
    };
#endif
};
struct _thread_stack_info { /* CONFIG_THREAD_STACK_INFO */
    uintptr_t start;
    size_t size;
    size_t delta;
};
struct __thread_entry {
    k_thread_entry_t pEntry;
    void *parameter1, *parameter2, *parameter3;
};
struct k_thread {
    struct _thread_base base;
    struct _callee_saved callee_saved;
    void *init_data;
    struct __thread_entry entry;
    struct k_thread *next_thread;
    char name[32];
    struct _thread_stack_info stack_info;
    struct _thread_arch arch;
};
struct _cpu {
    uint32_t nested;
    char *irq_stack;
    struct k_thread *current;
    struct k_thread *idle_thread;
};
struct z_kernel {
    struct _cpu cpus[1];
    struct k_thread *threads;
};
struct k_sem {
    _wait_q_t wait_q;
    unsigned int count;
    unsigned int limit;
};
struct k_mutex {
    _wait_q_t wait_q;
    struct k_thread *owner;
    uint32_t lock_count;
    int owner_orig_prio;
};
struct k_msgq {
    _wait_q_t wait_q;
    uint32_t lock;
    size_t msg_size;
    uint32_t max_msgs;
    char *buffer_start, *buffer_end, *read_ptr, *write_ptr;
    uint32_t used_msgs;
};
struct k_event {
    _wait_q_t wait_q;
    uint32_t events;
    uint32_t lock;
};

#endif
