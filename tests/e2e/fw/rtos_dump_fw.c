/* Test firmware for the thread-aware crash dump (tests/e2e/test_crash_dump_threads.py), QEMU
 * mps2-an385 (Cortex-M3) and mps2-an505 (Cortex-M33, Secure state, no FP), linked with spoor's
 * target library and a vendor-style startup file (rtos_dump_startup.c). Built once per RTOS
 * (-DDUMP_FREERTOS, -DDUMP_ZEPHYR, -DDUMP_RTX5, -DDUMP_THREADX) with the kernel's TCB types and
 * globals (freertos_types.h, zephyr_types.h, rtx5_types.h, threadx_types.h, names as in the
 * kernels' sources), and configures spoor's capture as an application would: spoor_crash_init()
 * with an 8 KiB .noinit buffer, then the RTOS's spoor_crash_add_*() call.
 *
 * Four tasks really switch, round robin, through one PendSV_Handler that leaves each task's
 * context where the kernel's Cortex-M3 port leaves it:
 *   FreeRTOS (ARM_CM3): r4-r11 then the hardware frame at pxTopOfStack; TCBs and stacks from a
 *     heap array (ucHeap, as heap_4 would), the lists static as in tasks.c, whose end this file
 *     imitates by including freertos_tasks_c_additions.h (spoor's) last;
 *   RTX5: r4-r11 then the frame at the TCB's sp, stack_frame 0xFD;
 *   ThreadX: EXC_RETURN, r4-r11, the frame at tx_thread_stack_ptr;
 *   Zephyr: r4-r11 in callee_saved v1-v8, the frame at callee_saved.psp.
 * alpha: alpha_main -> alpha_mid -> alpha_leaf -> task_yield; beta: beta_main -> beta_wait ->
 * task_yield; gamma: gamma_main -> gamma_deep x5 -> task_yield; monitor: after ROUNDS rounds
 * monitor_main -> monitor_check -> monitor_fault, an undefined instruction (UsageFault).
 * spoor's handler writes the dump and resets; after the reset main() finds the dump and writes
 * it to dump.bin through semihosting, prints "dump written" and exits 0. When
 * spoor_crash_init() returns false, main() prints its reason and exits 1. */
#include <stddef.h>
#include <stdint.h>

#include "spoor/crash.h"
#include "spoor/crash_threads.h"
#include "spoor/semihost.h"

#define REG32(addr) (*(volatile uint32_t *)(addr))
#define SCB_ICSR 0xE000ED04u
#define SCB_SHPR3 0xE000ED20u
#define NOINLINE __attribute__((noinline))
#define NTASKS 4u
#define STACK_WORDS 192u
#define ROUNDS 3u
#define THREAD_WINDOW 512u

volatile uint32_t sink;
volatile uint32_t switches;
void *fw_tcbs[NTASKS];                  /* the TCBs, for the test */
static unsigned current_index = NTASKS; /* NTASKS: the boot context */

static uint8_t dump_buffer[8192] __attribute__((section(".noinit"), aligned(8)));
extern char __ram_start[], __ram_end[], __flash_start[], __flash_end[]; /* rtos_dump_fw.ld */
static spoor_range ram[1], flash[1];

/* ---------------------------------------------------------------- the tasks */

NOINLINE void task_yield(void)
{
    REG32(SCB_ICSR) = 1u << 28; /* PENDSVSET */
    __asm__ volatile("dsb\n\tisb" ::: "memory");
}

NOINLINE void alpha_leaf(uint32_t n)
{
    sink += n;
    task_yield();
    sink += 1u;
}

NOINLINE void alpha_mid(uint32_t n)
{
    alpha_leaf(n * 3u);
    sink ^= n;
}

NOINLINE void alpha_main(void)
{
    for (uint32_t n = 0;; n++)
        alpha_mid(n);
}

NOINLINE void beta_wait(void)
{
    task_yield();
    sink -= 2u;
}

NOINLINE void beta_main(void)
{
    for (;;)
        beta_wait();
}

NOINLINE uint32_t gamma_deep(uint32_t depth)
{
    if (depth == 0) {
        task_yield();
        return sink;
    }
    uint32_t v = gamma_deep(depth - 1u);
    sink += v;
    return v + depth;
}

NOINLINE void gamma_main(void)
{
    for (;;)
        gamma_deep(4);
}

NOINLINE void monitor_fault(void)
{
    __asm__ volatile("udf #7" ::: "memory");
    sink++;
}

NOINLINE void monitor_check(void)
{
    if (switches >= ROUNDS * NTASKS)
        monitor_fault();
    sink++;
}

NOINLINE void monitor_main(void)
{
    for (;;) {
        monitor_check();
        task_yield();
    }
}

static void (*const task_entries[NTASKS])(void) = {alpha_main, beta_main, gamma_main, monitor_main};
static const char *const task_names[NTASKS] = {"alpha", "beta", "gamma", "monitor"};

/* A new task's stack: the hardware frame at the top (PC at the entry, LR 0xFFFFFFFF) and
 * r4-r11 (zero) below it; returns the address of r4. */
static uint32_t *initial_stack(uint32_t *stack, unsigned i)
{
    uint32_t *sp = stack + STACK_WORDS;
    *--sp = 0x01000000u;                     /* xPSR: Thumb */
    *--sp = (uint32_t)task_entries[i] & ~1u; /* PC */
    *--sp = 0xFFFFFFFFu;                     /* LR */
    for (int k = 0; k < 5 + 8; k++)          /* r12, r3-r0, r11-r4 */
        *--sp = 0;
    return sp;
}

__attribute__((unused)) static void copy_name(char *dst, unsigned cap, const char *src)
{
    unsigned n = 0;
    for (; n + 1u < cap && src[n]; n++)
        dst[n] = src[n];
    dst[n] = '\0';
}

/* ---------------------------------------------------------------- FreeRTOS */
#if defined(DUMP_FREERTOS)
#include "freertos_types.h"
/* FreeRTOSConfig.h and portmacro.h, as the kernel sees them */
#define configMAX_PRIORITIES 5
#define configNUMBER_OF_CORES 1
#define configRECORD_STACK_HIGH_ADDRESS 1
#define portSTACK_GROWTH (-1)
#define INCLUDE_vTaskDelete 1
#define INCLUDE_vTaskSuspend 1

/* tasks.c's file-scope data */
TCB_t *volatile pxCurrentTCB = NULL;
static List_t pxReadyTasksLists[configMAX_PRIORITIES];
static List_t xDelayedTaskList1;
static List_t xDelayedTaskList2;
static List_t *volatile pxDelayedTaskList;
static List_t *volatile pxOverflowDelayedTaskList;
static List_t xPendingReadyList;
static List_t xTasksWaitingTermination;
static List_t xSuspendedTaskList;
static volatile UBaseType_t uxCurrentNumberOfTasks;
static TaskHandle_t xIdleTaskHandles[configNUMBER_OF_CORES];

/* heap_4's heap: the TCBs and stacks come from it */
static uint8_t ucHeap[NTASKS * (sizeof(TCB_t) + STACK_WORDS * 4u + 16u)]
    __attribute__((aligned(8)));
static uint32_t heap_used;

static void *heap_alloc(uint32_t size)
{
    void *p = ucHeap + heap_used;
    heap_used += (size + 7u) & ~7u;
    return p;
}

static void rtos_init(void)
{
    for (unsigned p = 0; p < configMAX_PRIORITIES; p++)
        list_initialise(&pxReadyTasksLists[p]);
    list_initialise(&xDelayedTaskList1);
    list_initialise(&xDelayedTaskList2);
    list_initialise(&xPendingReadyList);
    list_initialise(&xTasksWaitingTermination);
    list_initialise(&xSuspendedTaskList);
    pxDelayedTaskList = &xDelayedTaskList1;
    pxOverflowDelayedTaskList = &xDelayedTaskList2;
    /* alpha and monitor ready, beta suspended, gamma delayed */
    List_t *const lists[NTASKS] = {&pxReadyTasksLists[1], &xSuspendedTaskList, &xDelayedTaskList1,
                                   &pxReadyTasksLists[2]};
    for (unsigned i = 0; i < NTASKS; i++) {
        TCB_t *t = heap_alloc(sizeof(TCB_t));
        uint32_t *stack = heap_alloc(STACK_WORDS * 4u);
        t->pxTopOfStack = initial_stack(stack, i);
        t->pxStack = stack;
        t->pxEndOfStack = stack + STACK_WORDS - 1u;
        t->uxPriority = i == 3 ? 2 : 1;
        copy_name(t->pcTaskName, sizeof t->pcTaskName, task_names[i]);
        t->xStateListItem.pvOwner = t;
        t->xEventListItem.pvOwner = t;
        list_insert_end(lists[i], &t->xStateListItem);
        fw_tcbs[i] = t;
        uxCurrentNumberOfTasks++;
    }
    xIdleTaskHandles[0] = NULL;
}

static uint32_t save_context(unsigned i, uint32_t sp)
{
    ((TCB_t *)fw_tcbs[i])->pxTopOfStack = (StackType_t *)sp;
    return sp;
}

static uint32_t resume_context(unsigned i)
{
    pxCurrentTCB = fw_tcbs[i];
    return (uint32_t)pxCurrentTCB->pxTopOfStack;
}

static bool add_threads(void)
{
    return spoor_crash_add_freertos(THREAD_WINDOW);
}

/* ---------------------------------------------------------------- Zephyr */
#elif defined(DUMP_ZEPHYR)
#define CONFIG_THREAD_MONITOR 1
#define CONFIG_THREAD_STACK_INFO 1
#include "zephyr_types.h"
extern struct z_kernel _kernel; /* kernel_structs.h */

#include "spoor/threads_zephyr.h"

struct k_thread alpha_tcb, beta_tcb, gamma_tcb, monitor_tcb;
static struct k_thread *const tcbs[NTASKS] = {&alpha_tcb, &beta_tcb, &gamma_tcb, &monitor_tcb};
struct z_kernel _kernel = {.threads = &alpha_tcb};
static uint32_t stacks[NTASKS][STACK_WORDS] __attribute__((aligned(8)));

static void rtos_init(void)
{
    for (unsigned i = 0; i < NTASKS; i++) {
        struct k_thread *t = tcbs[i];
        t->callee_saved.psp = (uint32_t)(initial_stack(stacks[i], i) + 8);
        copy_name(t->name, sizeof t->name, task_names[i]);
        t->base.prio = 1;
        t->stack_info.start = (uintptr_t)stacks[i];
        t->stack_info.size = sizeof stacks[i];
        t->entry.pEntry = (k_thread_entry_t)(uintptr_t)task_entries[i];
        t->next_thread = i + 1u < NTASKS ? tcbs[i + 1u] : NULL;
        fw_tcbs[i] = t;
    }
}

/* z_arm_pendsv keeps r4-r11 and PSP in callee_saved: here they come off the task's stack */
static uint32_t save_context(unsigned i, uint32_t sp)
{
    const uint32_t *r = (const uint32_t *)sp;
    struct _callee_saved *c = &tcbs[i]->callee_saved;
    c->v1 = r[0], c->v2 = r[1], c->v3 = r[2], c->v4 = r[3];
    c->v5 = r[4], c->v6 = r[5], c->v7 = r[6], c->v8 = r[7];
    c->psp = sp + 32u;
    return sp;
}

static uint32_t resume_context(unsigned i)
{
    struct _callee_saved *c = &tcbs[i]->callee_saved;
    uint32_t *r = (uint32_t *)(c->psp - 32u);
    r[0] = c->v1, r[1] = c->v2, r[2] = c->v3, r[3] = c->v4;
    r[4] = c->v5, r[5] = c->v6, r[6] = c->v7, r[7] = c->v8;
    _kernel.cpus[0].current = tcbs[i];
    return (uint32_t)r;
}

static bool add_threads(void)
{
    return spoor_crash_add_zephyr(THREAD_WINDOW);
}

/* ---------------------------------------------------------------- RTX5 */
#elif defined(DUMP_RTX5)
#include "rtx5_types.h"
extern osRtxInfo_t osRtxInfo; /* rtx_os.h */

#include "spoor/threads_rtx5.h"

osRtxThread_t alpha_tcb, beta_tcb, gamma_tcb, monitor_tcb;
static osRtxThread_t *const tcbs[NTASKS] = {&alpha_tcb, &beta_tcb, &gamma_tcb, &monitor_tcb};
osRtxInfo_t osRtxInfo = {.os_id = "RTX V5.5.4", .version = 50050004};
static uint32_t stacks[NTASKS][STACK_WORDS] __attribute__((aligned(8)));

/* the ready list (thread_next) holds every thread but the running one and gamma, which
 * waits on the delay list (delay_next) */
static void relink(osRtxThread_t *running)
{
    osRtxThread_t **link = &osRtxInfo.thread.ready.thread_list;
    for (unsigned i = 0; i < NTASKS; i++)
        if (tcbs[i] != running && tcbs[i] != &gamma_tcb) {
            *link = tcbs[i];
            link = &tcbs[i]->thread_next;
        }
    *link = NULL;
    osRtxInfo.thread.delay_list = running == &gamma_tcb ? NULL : &gamma_tcb;
}

static void rtos_init(void)
{
    for (unsigned i = 0; i < NTASKS; i++) {
        osRtxThread_t *t = tcbs[i];
        t->id = 0xF1; /* osRtxIdThread */
        t->name = task_names[i];
        t->priority = osPriorityNormal;
        t->priority_base = osPriorityNormal;
        t->stack_frame = 0xFD;
        t->thread_addr = (uint32_t)task_entries[i];
        t->stack_mem = stacks[i];
        t->stack_size = sizeof stacks[i];
        t->sp = (uint32_t)initial_stack(stacks[i], i);
        stacks[i][0] = 0xE25A2EA5u; /* osRtxStackMagicWord */
        fw_tcbs[i] = t;
    }
    relink(NULL);
}

static uint32_t save_context(unsigned i, uint32_t sp)
{
    tcbs[i]->sp = sp;
    tcbs[i]->stack_frame = 0xFD; /* EXC_RETURN's low byte: thread mode, PSP, basic frame */
    return sp;
}

static uint32_t resume_context(unsigned i)
{
    osRtxInfo.thread.run.curr = tcbs[i];
    osRtxInfo.thread.run.next = tcbs[i];
    relink(tcbs[i]);
    return tcbs[i]->sp;
}

static bool add_threads(void)
{
    return spoor_crash_add_rtx5(THREAD_WINDOW);
}

/* ---------------------------------------------------------------- ThreadX */
#elif defined(DUMP_THREADX)
#include "threadx_types.h"

#include "spoor/threads_threadx.h"

TX_THREAD alpha_tcb, beta_tcb, gamma_tcb, monitor_tcb;
static TX_THREAD *const tcbs[NTASKS] = {&alpha_tcb, &beta_tcb, &gamma_tcb, &monitor_tcb};
TX_THREAD *_tx_thread_created_ptr;
TX_THREAD *volatile _tx_thread_current_ptr;
static uint32_t stacks[NTASKS][STACK_WORDS] __attribute__((aligned(8)));

static void rtos_init(void)
{
    for (unsigned i = 0; i < NTASKS; i++) {
        TX_THREAD *t = tcbs[i];
        uint32_t *sp = initial_stack(stacks[i], i);
        *--sp = 0xFFFFFFFDu;           /* EXC_RETURN below r4-r11 */
        t->tx_thread_id = 0x54485244u; /* TX_THREAD_ID */
        t->tx_thread_name = (CHAR *)task_names[i];
        t->tx_thread_priority = 16;
        t->tx_thread_entry = (VOID(*)(ULONG))task_entries[i];
        t->tx_thread_stack_start = stacks[i];
        t->tx_thread_stack_end = (uint8_t *)(stacks[i] + STACK_WORDS) - 1; /* last byte */
        t->tx_thread_stack_size = sizeof stacks[i];
        t->tx_thread_stack_ptr = sp;
        t->tx_thread_created_next = tcbs[(i + 1u) % NTASKS];
        t->tx_thread_created_previous = tcbs[(i + NTASKS - 1u) % NTASKS];
        fw_tcbs[i] = t;
    }
    _tx_thread_created_ptr = tcbs[0];
}

/* the port's PendSV stores EXC_RETURN below r4-r11 */
static uint32_t save_context(unsigned i, uint32_t sp)
{
    ((uint32_t *)sp)[-1] = 0xFFFFFFFDu;
    tcbs[i]->tx_thread_stack_ptr = (VOID *)(sp - 4u);
    return sp;
}

static uint32_t resume_context(unsigned i)
{
    _tx_thread_current_ptr = tcbs[i];
    tcbs[i]->tx_thread_run_count++;
    return (uint32_t)tcbs[i]->tx_thread_stack_ptr + 4u;
}

static bool add_threads(void)
{
    return spoor_crash_add_threadx(THREAD_WINDOW);
}

#else
#error "build with -DDUMP_FREERTOS, -DDUMP_ZEPHYR, -DDUMP_RTX5 or -DDUMP_THREADX"
#endif

/* ---------------------------------------------------------------- switching */

/* Called by PendSV_Handler with the outgoing task's SP (at its r4); returns the incoming's. */
uint32_t fw_switch(uint32_t sp)
{
    unsigned next = 0;
    if (current_index < NTASKS) { /* not the boot context, which is never resumed */
        save_context(current_index, sp);
        next = (current_index + 1u) % NTASKS;
        switches = switches + 1u;
    }
    current_index = next;
    return resume_context(next);
}

__attribute__((naked)) void PendSV_Handler(void)
{
    __asm__ volatile("mrs r0, psp\n\t"
                     "stmdb r0!, {r4-r11}\n\t"
                     "push {r4, lr}\n\t"
                     "bl fw_switch\n\t"
                     "pop {r4, lr}\n\t"
                     "ldmia r0!, {r4-r11}\n\t"
                     "msr psp, r0\n\t"
                     "bx lr\n\t");
}

static uint32_t boot_stack[64] __attribute__((aligned(8))); /* PSP before the first task */

static void print(const char *text)
{
    spoor_semihost_print(text);
}

int main(void)
{
    ram[0] = (spoor_range){(uint32_t)__ram_start, (uint32_t)__ram_end};
    flash[0] = (spoor_range){(uint32_t)__flash_start, (uint32_t)__flash_end};
    spoor_crash_config config = {0};
    config.buffer = dump_buffer;
    config.buffer_size = sizeof dump_buffer;
    config.stack_window = 256;
    config.ram = ram;
    config.ram_count = 1;
    config.flash = flash;
    config.flash_count = 1;
    if (!spoor_crash_init(&config)) {
        print("spoor_crash_init: ");
        print(spoor_crash_init_message());
        print("\n");
        spoor_semihost_exit(1);
    }
    if (spoor_crash_valid()) { /* after the reset of a capture */
        bool written = spoor_crash_to_host_file("dump.bin");
        spoor_crash_take();
        print(written ? "dump written\n" : "dump not written\n");
        spoor_semihost_exit(written ? 0 : 2);
    }
    rtos_init();
    if (!add_threads()) {
        print("spoor_crash_add: false\n");
        spoor_semihost_exit(3);
    }
    __asm__ volatile("msr psp, %0\n\tmovs r0, #2\n\tmsr control, r0\n\tisb" ::"r"(boot_stack + 64)
                     : "r0", "memory");
    REG32(SCB_SHPR3) |= 0xFFu << 16; /* PendSV lowest */
    task_yield();                    /* the first switch: never comes back */
    for (;;)
        sink++;
}

#if defined(DUMP_FREERTOS)
/* the end of tasks.c with configINCLUDE_FREERTOS_TASK_C_ADDITIONS_H 1 */
#include "freertos_tasks_c_additions.h"
#endif
