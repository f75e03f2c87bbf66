/* RTOS-shaped test firmware for the task-entry test (tests/e2e/test_unwind_task_entry.py),
 * built with -Os. A tiny FreeRTOS-like scheduler: two tasks, each started with a made-up
 * initial frame (hardware frame + r4-r11) whose LR is a task-exit hook, as FreeRTOS's
 * pxPortInitialiseStack does with portTASK_RETURN_ADDRESS:
 *   task_a returns (never) to prvTaskExitError, FreeRTOS's name for it; some code also calls
 *     prvTaskExitError (on a path never taken), so only its name says it is a hook;
 *   task_b returns (never) to task_exit_error, a name no list has and a function nothing calls.
 * The first task is started by SVC, then the tasks switch by pending PendSV
 * (xPortPendSVHandler: save r4-r11 on PSP, switch_context(), restore), and both run on PSP.
 * rtos_fw.ld places xPortPendSVHandler, prvTaskExitError and task_exit_error in that order,
 * so the function before each hook is a real one: a return-address walk that looks up
 * pc - 1 names it as every task's caller (gdb does). Self-contained: no library; the start-up
 * of fw_startup.h. */
#include <stdint.h>

#define REG32(addr) (*(volatile uint32_t *)(addr))
#define SCB_ICSR 0xE000ED04u
#define SCB_SHPR3 0xE000ED20u
#define ICSR_PENDSVSET (1u << 28)
#define NOINLINE __attribute__((noinline))
#define STACK_WORDS 256

volatile uint32_t sink, sink2;

typedef struct task_control {
    uint32_t *sp; /* first member: the context switch reads it */
} task_control;

static task_control tasks[2];
task_control *volatile current;
static uint32_t stack_a[STACK_WORDS] __attribute__((aligned(8)));
static uint32_t stack_b[STACK_WORDS] __attribute__((aligned(8)));

#include "fw_startup.h"

int main(void);
void SVC_Handler(void);
void xPortPendSVHandler(void);
void prvTaskExitError(void);
void task_exit_error(void);
void switch_context(void);

FW_VECTORS(16, [11] = SVC_Handler, [14] = xPortPendSVHandler);

/* Starts the first task: its r4-r11 from its stack, then an exception return to thread mode
 * on PSP pops the hardware frame (PC = the task function, LR = its exit hook). */
__attribute__((naked)) void SVC_Handler(void)
{
    __asm volatile("ldr r3, =current\n"
                   "ldr r1, [r3]\n"
                   "ldr r0, [r1]\n"
                   "ldmia r0!, {r4-r11}\n"
                   "msr psp, r0\n"
                   "isb\n"
                   "orr lr, lr, #4\n" /* EXC_RETURN: thread mode, PSP */
                   "bx lr\n"
                   ".ltorg\n");
}

void switch_context(void)
{
    current = current == &tasks[0] ? &tasks[1] : &tasks[0];
}

__attribute__((naked, section(".text.xPortPendSVHandler"))) void xPortPendSVHandler(void)
{
    __asm volatile("mrs r0, psp\n"
                   "isb\n"
                   "ldr r3, =current\n"
                   "ldr r2, [r3]\n"
                   "stmdb r0!, {r4-r11}\n"
                   "str r0, [r2]\n"
                   "push {r3, lr}\n"
                   "bl switch_context\n"
                   "pop {r3, lr}\n"
                   "ldr r1, [r3]\n"
                   "ldr r0, [r1]\n"
                   "ldmia r0!, {r4-r11}\n"
                   "msr psp, r0\n"
                   "isb\n"
                   "bx lr\n"
                   ".ltorg\n");
}

/* A task function returned: FreeRTOS's hook stops here for ever. */
__attribute__((section(".text.prvTaskExitError"))) void prvTaskExitError(void)
{
    for (;;) {
        sink2++;
    }
}

__attribute__((section(".text.task_exit_error"))) void task_exit_error(void)
{
    for (;;) {
        sink2 += 2u;
    }
}

static void yield(void)
{
    REG32(SCB_ICSR) = ICSR_PENDSVSET;
    __asm volatile("dsb\n"
                   "isb" ::
                       : "memory");
}

NOINLINE void a_work(uint32_t n)
{
    sink += n;
}

NOINLINE void b_work(uint32_t n)
{
    sink += n * 3u;
}

void task_a(void *arg)
{
    uint32_t n = (uint32_t)(uintptr_t)arg;
    for (;;) {
        a_work(n++);
        yield();
    }
}

void task_b(void *arg)
{
    uint32_t n = (uint32_t)(uintptr_t)arg;
    for (;;) {
        b_work(n);
        n += 2u;
        yield();
    }
}

/* The initial frame FreeRTOS's pxPortInitialiseStack writes (Cortex-M3 port). */
static uint32_t *initial_frame(uint32_t *top, void (*task)(void *), void *arg,
                               void (*exit_hook)(void))
{
    uint32_t *sp = top;
    *--sp = 0x01000000u;                     /* xPSR: Thumb state */
    *--sp = (uint32_t)(uintptr_t)task & ~1u; /* PC */
    *--sp = (uint32_t)(uintptr_t)exit_hook;  /* LR: the task-exit hook */
    sp -= 4;                                 /* r12, r3, r2, r1 */
    *--sp = (uint32_t)(uintptr_t)arg;        /* r0 */
    sp -= 8;                                 /* r11..r4 */
    return sp;
}

int main(void)
{
    if (sink == 0xDEADBEEFu) { /* never: but prvTaskExitError is called from code */
        prvTaskExitError();
    }
    tasks[0].sp = initial_frame(stack_a + STACK_WORDS, task_a, (void *)1, prvTaskExitError);
    tasks[1].sp = initial_frame(stack_b + STACK_WORDS, task_b, (void *)100, task_exit_error);
    current = &tasks[0];
    REG32(SCB_SHPR3) |= 0xFFu << 16; /* PendSV at the lowest priority */
    __asm volatile("svc 0");
    for (;;) {
        sink++;
    }
}

void Reset_Handler(void)
{
    main();
}
