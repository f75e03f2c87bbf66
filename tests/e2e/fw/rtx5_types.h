/* The TCB type and kernel globals of CMSIS-RTX (RTX5) as rtx_os.h and cmsis_os2.h declare them
 * (member names and order; configuration-dependent members partly left out, as a build may),
 * the object ids and thread states of rtx_os.h and the control blocks a thread waits on
 * (semaphore, mutex, message queue, event flags; their header lines up with a TCB's), for the
 * test firmware rtos_shapes_fw.c and rtos_ctx_fw.c. */
#ifndef RTX5_TYPES_H
#define RTX5_TYPES_H

#include <stdint.h>

typedef enum {
    osPriorityNone = 0,
    osPriorityIdle = 1,
    osPriorityLow = 8,
    osPriorityBelowNormal = 16,
    osPriorityNormal = 24,
    osPriorityAboveNormal = 32,
    osPriorityHigh = 40,
    osPriorityRealtime = 48,
    osPriorityISR = 56,
    osPriorityError = -1,
    osPriorityReserved = 0x7FFFFFFF
} osPriority_t;
#define osRtxIdThread 0xF1U
#define osRtxIdEventFlags 0xF3U
#define osRtxIdMutex 0xF5U
#define osRtxIdSemaphore 0xF6U
#define osRtxIdMessageQueue 0xFAU
#define osRtxThreadReady 0x01U
#define osRtxThreadRunning 0x02U
#define osRtxThreadBlocked 0x03U
#define osRtxThreadTerminated 0x04U
#define osRtxThreadWaitingDelay (osRtxThreadBlocked | 0x10U)
#define osRtxThreadWaitingEventFlags (osRtxThreadBlocked | 0x40U)
#define osRtxThreadWaitingMutex (osRtxThreadBlocked | 0x50U)
#define osRtxThreadWaitingSemaphore (osRtxThreadBlocked | 0x60U)
#define osRtxThreadWaitingMessageGet (osRtxThreadBlocked | 0x80U)
typedef struct osRtxThread_s {
    uint8_t id;
    uint8_t state;
    uint8_t flags;
    uint8_t attr;
    const char *name;
    struct osRtxThread_s *thread_next;
    struct osRtxThread_s *thread_prev;
    struct osRtxThread_s *delay_next;
    struct osRtxThread_s *delay_prev;
    struct osRtxThread_s *thread_join;
    uint32_t delay;
    int8_t priority;
    int8_t priority_base;
    uint8_t stack_frame;
    uint8_t flags_options;
    uint32_t wait_flags;
    uint32_t thread_flags;
    void *mutex_list;
    void *stack_mem;
    uint32_t stack_size;
    uint32_t sp;
    uint32_t thread_addr;
    uint32_t tz_memory;
} osRtxThread_t;
typedef struct osRtxObject_s {
    uint8_t id, state, flags, reserved;
    const char *name;
    osRtxThread_t *thread_list;
} osRtxObject_t;
typedef struct osRtxSemaphore_s {
    uint8_t id, state, flags, reserved;
    const char *name;
    osRtxThread_t *thread_list;
    uint16_t tokens, max_tokens;
} osRtxSemaphore_t;
typedef struct osRtxMutex_s {
    uint8_t id, state, flags, attr;
    const char *name;
    osRtxThread_t *thread_list;
    osRtxThread_t *owner_thread;
    struct osRtxMutex_s *owner_prev, *owner_next;
    uint8_t lock;
    uint8_t padding[3];
} osRtxMutex_t;
typedef struct osRtxEventFlags_s {
    uint8_t id, state, flags, reserved;
    const char *name;
    osRtxThread_t *thread_list;
    uint32_t event_flags;
} osRtxEventFlags_t;
typedef struct osRtxMessageQueue_s {
    uint8_t id, state, flags, reserved;
    const char *name;
    osRtxThread_t *thread_list;
    uint32_t msg_size, msg_count;
    void *msg_first, *msg_last;
} osRtxMessageQueue_t;
typedef struct {
    const char *os_id;
    uint32_t version;
    struct {
        uint8_t state;
        volatile uint8_t blocked;
        uint8_t pendSV;
        uint8_t reserved;
        uint32_t tick;
    } kernel;
    int32_t tick_irqn;
    struct {
        struct {
            osRtxThread_t *curr;
            osRtxThread_t *next;
        } run;
        osRtxObject_t ready;
        osRtxThread_t *idle;
        osRtxThread_t *delay_list;
        osRtxThread_t *wait_list;
        osRtxThread_t *terminate_list;
    } thread;
} osRtxInfo_t;

#endif
