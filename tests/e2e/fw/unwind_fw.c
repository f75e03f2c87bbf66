/* Test firmware for the unwinder's live test (tests/e2e/test_unwind_live.py). It runs under
 * QEMU (mps2-an385 Cortex-M3, mps2-an386 Cortex-M4F, mps2-an505 Cortex-M33 secure) and walks
 * through stacks with a known shape, each ending in a function where the test stops:
 *   1. thread mode on MSP: main -> t_level1 -> t_level2 (VLA, frame pointer) -> t_deep
 *   2. an interrupt taken in thread code: IRQ0_Handler -> i_work -> i_deep, and a nested
 *      one: i_work pends the higher-priority IRQ1 -> IRQ1_Handler -> n_deep
 *   3. (FPU builds) the same with an active FP context: an extended exception frame
 *   4. a task on PSP started by SVC like an RTOS does (stacked LR 0xFFFFFFFF):
 *      task_entry -> task_level -> task_deep, then an interrupt taken in the task
 *   5. the task calls through a bad function pointer (crash_caller): HardFault_Handler ->
 *      fault_stop, where the test stops; the handler then exits through semihosting.
 * Self-contained: no library; the start-up of fw_startup.h. */
#include <stdint.h>

#define REG32(addr) (*(volatile uint32_t *)(addr))
#define NVIC_ISER0 0xE000E100u
#define NVIC_ISPR0 0xE000E200u
#define NVIC_IPR0 0xE000E400u
#define SCB_CPACR 0xE000ED88u
#define NOINLINE __attribute__((noinline))

extern uint32_t __task_stack_top[];

volatile uint32_t sink;
#if defined(__ARM_FP)
volatile float fsink = 1.25f;
#endif
static volatile int irq_count;
/* PSP as the interrupt found it: QEMU's gdbstub does not show the banked stack pointers,
 * so the test reads this (as a crash handler would capture it). */
volatile uint32_t irq_psp;

#define FW_OWN_DEFAULT_HANDLER /* the program's end, with a failure status */
#define FW_EHABI_PR2
#include "fw_startup.h"

int main(void);
void SVC_Handler(void);
void IRQ0_Handler(void);
void IRQ1_Handler(void);
void HardFault_Handler(void);

FW_VECTORS(48, [3] = HardFault_Handler, [4] = Default_Handler, [5] = Default_Handler,
           [6] = Default_Handler, [7] = Default_Handler, [11] = SVC_Handler, [16] = IRQ0_Handler,
           [17] = IRQ1_Handler);

static void semihost_exit(uint32_t code)
{
    /* SYS_EXIT with ADS_ApplicationExit (0x20026); the status is not carried. */
    (void)code;
    register uint32_t r0 __asm__("r0") = 0x18u;
    register uint32_t r1 __asm__("r1") = 0x20026u;
    __asm__ volatile("bkpt 0xab" : : "r"(r0), "r"(r1) : "memory");
    for (;;) {
    }
}

void Default_Handler(void)
{
    semihost_exit(1);
}

NOINLINE void i_deep(int n)
{
    sink += (uint32_t)n;
}

NOINLINE void n_deep(int n)
{
    sink += (uint32_t)n;
}

void IRQ1_Handler(void)
{
    n_deep(5);
    sink += 1;
}

static void pend_irq1(void)
{
    REG32(NVIC_ISER0) = 2u;
    REG32(NVIC_ISPR0) = 2u;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
}

NOINLINE void i_work(int n)
{
    i_deep(n + 1);
    if (n == 1) {
        pend_irq1(); /* preempts IRQ0: a nested exception frame on MSP */
    }
    sink += 2;
}

void IRQ0_Handler(void)
{
    uint32_t psp;
    __asm__ volatile("mrs %0, psp" : "=r"(psp));
    irq_psp = psp;
    irq_count++;
    i_work(irq_count);
    sink += 3;
}

static void pend_irq0(void)
{
    REG32(NVIC_ISER0) = 1u;
    REG32(NVIC_ISPR0) = 1u;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
}

NOINLINE void t_deep(int n)
{
    sink += (uint32_t)n;
}

NOINLINE int t_level2(int n)
{
    volatile uint8_t buffer[n + 4]; /* a VLA: the function needs a frame pointer */
    buffer[n] = (uint8_t)n;
    t_deep(buffer[n]);
    return buffer[n] + 1;
}

NOINLINE void t_interrupted(int n)
{
    sink += (uint32_t)n;
    pend_irq0();
    sink += 1;
}

NOINLINE int t_level1(int n)
{
    int r = t_level2(n + 1);
    t_interrupted(r);
    return r + 1;
}

#if defined(__ARM_FP)
NOINLINE float t_float(float x)
{
    float y = x * fsink; /* the FP context is active when the interrupt comes */
    pend_irq0();
    return y + fsink;
}
#endif

NOINLINE void task_deep(int n)
{
    sink += (uint32_t)n;
}

NOINLINE void task_level(int n)
{
    task_deep(n + 1);
#if defined(__ARM_FP)
    fsink = t_float((float)n);
#else
    t_interrupted(n);
#endif
    sink += 4;
}

/* Not a function: a branch here faults (INVSTATE: no Thumb bit), PC = this, LR returns. */
volatile uint32_t bad_target = 0xbf00de4cu;

NOINLINE void fault_stop(void)
{
    sink += 1;
}

void HardFault_Handler(void)
{
    uint32_t psp;
    __asm__ volatile("mrs %0, psp" : "=r"(psp));
    irq_psp = psp;
    fault_stop();
    semihost_exit(0);
}

NOINLINE void crash_caller(void)
{
    void (*function)(void) = (void (*)(void))(uintptr_t)bad_target;
    function();
    sink += 5;
}

NOINLINE void task_entry(void)
{
    task_level(7);
    crash_caller();
    semihost_exit(0);
}

/* Starts task_entry on the task stack (PSP) by exception return, with LR 0xFFFFFFFF in its
 * frame as an RTOS does for a task that must not return. */
__attribute__((naked)) void SVC_Handler(void)
{
    __asm__ volatile("ldr r0, =__task_stack_top\n\t"
                     "sub r0, r0, #32\n\t"
                     "mov r1, #0\n\t"
                     "str r1, [r0, #0]\n\t"
                     "str r1, [r0, #4]\n\t"
                     "str r1, [r0, #8]\n\t"
                     "str r1, [r0, #12]\n\t"
                     "str r1, [r0, #16]\n\t"
                     "mvn r1, #0\n\t"
                     "str r1, [r0, #20]\n\t" /* lr */
                     "ldr r1, =task_entry\n\t"
                     "str r1, [r0, #24]\n\t" /* pc */
                     "mov r1, #0x01000000\n\t"
                     "str r1, [r0, #28]\n\t" /* xpsr: Thumb */
                     "msr psp, r0\n\t"
                     "mvn lr, #2\n\t" /* 0xFFFFFFFD: thread mode, PSP, basic frame */
                     "bx lr\n\t"
                     ".ltorg\n\t");
}

int main(void)
{
    REG32(NVIC_IPR0) = 0x80u | 0x40u << 8; /* IRQ1 preempts IRQ0 */
#if defined(__ARM_FP)
    REG32(SCB_CPACR) |= 0xFu << 20; /* CP10, CP11 full access */
    __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
    sink = (uint32_t)t_level1(2);
#if defined(__ARM_FP)
    fsink = t_float(2.0f);
#endif
    __asm__ volatile("svc 0" ::: "memory");
    return 0;
}

void Reset_Handler(void)
{
    main();
    semihost_exit(0);
}
