/* Test firmware for spoor's RTOS layer: the TCB types and globals of FreeRTOS, RTX5, Zephyr and
 * ThreadX, shaped as their own headers declare them (member names and order from FreeRTOS
 * tasks.c/list.h, CMSIS-RTX rtx_os.h/cmsis_os2.h, Zephyr kernel/thread.h/kernel_structs.h,
 * ThreadX tx_api.h; configuration-dependent members partly left out, as a build may), with
 * threads in .data. Built once per RTOS (-DSHAPE_FREERTOS, ...); never run: tests read .data
 * as the target would have it at start (arm-none-eabi-objcopy) and spoor reads the TCBs the
 * DWARF types describe. See tests/e2e/test_top_rtos_shapes.py. */
#include <stdint.h>

void Reset_Handler(void);
__attribute__((section(".vectors"), used)) static const uint32_t vectors[2] = {
    0x20001000u, (uint32_t)Reset_Handler};

#define NOINLINE __attribute__((noinline, used))
volatile uint32_t sink;

#if defined(SHAPE_FREERTOS)
#include "freertos_types.h"

NOINLINE void vSensorTask(void *p)
{
    sink = (uint32_t)p;
}
NOINLINE void vNetTask(void *p)
{
    sink = (uint32_t)p + 1;
}
NOINLINE void prvTaskExitError(void)
{
    sink = 0;
}
NOINLINE void prvIdleTask(void *p)
{
    sink = (uint32_t)p + 2;
}

#define DEPTH 64
/* pxPortInitialiseStack (ARM_CM3 port): the top word is left out, then xPSR, PC, LR, ... */
#define INITIAL(entry)                                                                             \
    [DEPTH - 4] = (uint32_t)prvTaskExitError, [DEPTH - 3] = (uint32_t)(entry),             \
                 [DEPTH - 2] = 0x01000000u
static StackType_t sensor_stack[DEPTH] __attribute__((aligned(8))) = {INITIAL(vSensorTask)};
static StackType_t net_stack[DEPTH] __attribute__((aligned(8))) = {INITIAL(vNetTask)};
/* the idle task has run: its initial frame is gone (overwritten by its own frames) */
static StackType_t idle_stack[DEPTH] __attribute__((aligned(8))) = {[DEPTH - 3] = 0x12345678u};

/* the lists of tasks.c: Sensor (running) and IDLE ready, Net delayed, Logger suspended */
#define END(list) ((ListItem_t *)&(list).xListEnd)
#define EMPTY(list) {0, END(list), {0xFFFFFFFFu, END(list), END(list)}}
#define ONE(list, tcb) {1, END(list), {0xFFFFFFFFu, &(tcb).xStateListItem, &(tcb).xStateListItem}}
#define ITEM(list, tcb) {0, END(list), END(list), &(tcb), (struct xLIST *)&(list)}
extern TCB_t sensor_tcb, net_tcb, idle_tcb, logger_tcb;
__attribute__((used)) static List_t pxReadyTasksLists[4];
__attribute__((used)) static List_t xDelayedTaskList1;
__attribute__((used)) static List_t xSuspendedTaskList;
static List_t pxReadyTasksLists[4] = {ONE(pxReadyTasksLists[0], idle_tcb),
                                      EMPTY(pxReadyTasksLists[1]), EMPTY(pxReadyTasksLists[2]),
                                      ONE(pxReadyTasksLists[3], sensor_tcb)};
static List_t xDelayedTaskList1 = ONE(xDelayedTaskList1, net_tcb);
__attribute__((used)) static List_t xDelayedTaskList2 = EMPTY(xDelayedTaskList2);
__attribute__((used)) static List_t xPendingReadyList = EMPTY(xPendingReadyList);
static List_t xSuspendedTaskList = ONE(xSuspendedTaskList, logger_tcb);
TCB_t logger_tcb = {.xStateListItem = ITEM(xSuspendedTaskList, logger_tcb), .uxPriority = 1,
                    .pcTaskName = "Logger"};

TCB_t sensor_tcb = {.xStateListItem = ITEM(pxReadyTasksLists[3], sensor_tcb),
                    .pxTopOfStack = &sensor_stack[DEPTH - 17], .uxPriority = 3,
                    .pxStack = sensor_stack, .pcTaskName = "Sensor",
                    .pxEndOfStack = &sensor_stack[DEPTH - 1], .uxBasePriority = 3};
TCB_t net_tcb = {.xStateListItem = ITEM(xDelayedTaskList1, net_tcb), .pxTopOfStack = &net_stack[DEPTH - 17], .uxPriority = 2, .pxStack = net_stack,
                 .pcTaskName = "Net", .pxEndOfStack = &net_stack[DEPTH - 1], .uxBasePriority = 2};
TCB_t idle_tcb = {.xStateListItem = ITEM(pxReadyTasksLists[0], idle_tcb), .pxTopOfStack = &idle_stack[DEPTH - 20], .uxPriority = 0, .pxStack = idle_stack,
                  .pcTaskName = "IDLE", .pxEndOfStack = &idle_stack[DEPTH - 1]};
TCB_t *volatile pxCurrentTCB = &sensor_tcb;
__attribute__((used)) static TaskHandle_t xIdleTaskHandle = &idle_tcb;

NOINLINE void use(void)
{
    sink = (uint32_t)xIdleTaskHandle + (uint32_t)pxCurrentTCB;
}

#elif defined(SHAPE_RTX5)
#include "rtx5_types.h"

NOINLINE void app_main(void *arg)
{
    sink = (uint32_t)arg;
}
NOINLINE void sensor_thread(void *arg)
{
    sink = (uint32_t)arg + 1;
}
NOINLINE void osRtxIdleThread(void *arg)
{
    sink = (uint32_t)arg + 2;
}

osRtxThread_t main_thread = {.id = 0xF1, .state = osRtxThreadRunning, .name = "main",
                             .priority = osPriorityNormal, .thread_addr = (uint32_t)app_main};
osRtxThread_t sensor = {.id = 0xF1, .state = osRtxThreadReady, .name = "sensor_task",
                        .priority = osPriorityHigh, .thread_addr = (uint32_t)sensor_thread};
osRtxThread_t idle = {.id = 0xF1, .state = osRtxThreadReady, .name = "osRtxIdleThread",
                      .priority = osPriorityIdle, .thread_addr = (uint32_t)osRtxIdleThread};
NOINLINE void worker_thread(void *arg)
{
    sink = (uint32_t)arg + 3;
}
extern osRtxSemaphore_t sem_data;
/* waits on sem_data (osSemaphoreAcquire, osWaitForever): on the wait list, on the semaphore's
 * thread list, thread_prev the semaphore */
osRtxThread_t worker = {.id = 0xF1, .state = osRtxThreadWaitingSemaphore, .name = "worker",
                        .thread_prev = (osRtxThread_t *)&sem_data,
                        .priority = osPriorityBelowNormal,
                        .thread_addr = (uint32_t)worker_thread};
osRtxSemaphore_t sem_data = {.id = osRtxIdSemaphore, .name = "data ready",
                             .thread_list = &worker};
osRtxThread_t not_a_thread = {.id = 0xF5, .name = "a mutex"}; /* osRtxIdMutex */
osRtxInfo_t osRtxInfo = {.os_id = "RTX V5.5.4",
                         .version = 50050004,
                         .thread = {.run = {.curr = &main_thread},
                                    .ready = {.thread_list = &sensor},
                                    .idle = &idle,
                                    .wait_list = &worker}};
osPriority_t priority_in_use = osPriorityNormal;

#elif defined(SHAPE_ZEPHYR)
#include "zephyr_types.h"

NOINLINE void blinky(void *a, void *b, void *c)
{
    sink = (uint32_t)a + (uint32_t)b + (uint32_t)c;
}
NOINLINE void z_idle(void *a, void *b, void *c)
{
    sink = (uint32_t)a + (uint32_t)b + (uint32_t)c + 1;
}

struct k_thread z_idle_threads[1] = {
    {.base = {.prio = 15}, .entry = {.pEntry = z_idle}, .name = "idle"}};
struct k_thread blink_thread = {.base = {.prio = -2},
                                .entry = {.pEntry = blinky},
                                .next_thread = z_idle_threads,
                                .name = "blinky"};
struct z_kernel _kernel = {.cpus = {{.current = &blink_thread, .idle_thread = z_idle_threads}},
                           .threads = &blink_thread};
/* the interrupt stack (the main stack), holding what a start-up dummy thread left */
uint8_t z_interrupt_stacks[1][512] __attribute__((aligned(8))) = {{[0 ... 511] = 0x3F}};

#elif defined(SHAPE_THREADX)
#include "threadx_types.h"

NOINLINE VOID thread_0_entry(ULONG id)
{
    sink = id;
}
NOINLINE VOID thread_1_entry(ULONG id)
{
    sink = id + 1;
}

extern TX_THREAD thread_1;
TX_THREAD thread_0 = {.tx_thread_id = 0x54485244, .tx_thread_name = "thread 0",
                      .tx_thread_priority = 1, .tx_thread_entry = thread_0_entry,
                      .tx_thread_created_next = &thread_1, .tx_thread_created_previous = &thread_1};
TX_THREAD thread_1 = {.tx_thread_id = 0x54485244, .tx_thread_name = "thread 1",
                      .tx_thread_priority = 16, .tx_thread_entry = thread_1_entry,
                      .tx_thread_created_next = &thread_0, .tx_thread_created_previous = &thread_0};
TX_THREAD *_tx_thread_created_ptr = &thread_0;
TX_THREAD *_tx_thread_current_ptr = &thread_0;
#endif

void Reset_Handler(void)
{
    for (;;)
        sink++;
}
