/* Test firmware for the saved-context layouts of RTX5 and ThreadX (tests/e2e/
 * test_crash_threads_rtx_threadx.py): four tasks that really switch, in QEMU, through a
 * PendSV_Handler written here that saves and restores exactly what the RTOS's own port does, with
 * the RTOS's TCB type and globals (rtx5_types.h, threadx_types.h). Built once per RTOS
 * (-DCTX_RTX5 or -DCTX_THREADX) and core (ARMv6-M, ARMv7-M, ARMv7E-M with FP, ARMv8-M
 * mainline with FP); the port's words, per architecture:
 *   RTX5 (CMSIS-RTX irq_armv6m.S, irq_armv7m.S, irq_armv8mml.S; SVC_ContextSave /
 *     Sys_ContextSave, SVC_ContextRestore): at the TCB's sp [s16-s31 when EXC_RETURN bit 4 is
 *     0] r4-r11, then the hardware frame; EXC_RETURN's low byte in the TCB's stack_frame, the
 *     return with 0xFFFFFF00 | stack_frame (ARMv6-M: r4-r7, r8-r11 upwards from PSP - 32, the
 *     return with 0xFFFFFFFD, stack_frame unused);
 *   ThreadX (ports/cortex_m0, cortex_m3/m4/m33 gnu/src/tx_thread_schedule.S, PendSV_Handler):
 *     at tx_thread_stack_ptr EXC_RETURN [s16-s31 when its bit 4 is 0] r4-r11, then the hardware
 *     frame (ARMv6-M: EXC_RETURN, r8-r11, r4-r7).
 * The tasks, scheduled round robin, each yield (pend PendSV) a few calls deep:
 *   alpha:   alpha_main -> alpha_stage_a -> alpha_stage_b (frame pointer r7) -> alpha_stage_c
 *            -> task_yield
 *   beta:    beta_main -> beta_float -> beta_leaf -> task_yield, with an active FP context in
 *            an FP build (an extended frame, s16-s31 saved by the handler)
 *   gamma:   gamma_main -> gamma_deep (5 times, recursive) -> task_yield
 *   monitor: monitor_main -> task_yield; after ROUNDS rounds it calls fw_checkpoint, which
 *            never returns: the place the test stops at, every other task parked.
 * Self-contained: no library, no startup files (QEMU loads the sections as they are). */
#include <stdint.h>

#define REG32(addr) (*(volatile uint32_t *)(addr))
#define SCB_ICSR 0xE000ED04u
#define SCB_SHPR3 0xE000ED20u
#define SCB_CPACR 0xE000ED88u
#define ICSR_PENDSVSET (1u << 28)
#define NOINLINE __attribute__((noinline))
#define STACK_WORDS 160u
#define NTASKS 4u
#define ROUNDS 3u

#if defined(__ARM_ARCH_6M__)
#define V6M 1
#else
#define V6M 0
#endif
#if defined(__ARM_FP)
#define FP_SAVE "tst lr, #0x10\n\tit eq\n\tvstmdbeq r12!, {s16-s31}\n\t"
#define FP_RESTORE "tst lr, #0x10\n\tit eq\n\tvldmiaeq r0!, {s16-s31}\n\t"
#else
#define FP_SAVE ""
#define FP_RESTORE ""
#endif

extern uint32_t __stack_top[];
volatile uint32_t sink;
volatile uint32_t switches; /* context switches made */
#if defined(__ARM_FP)
volatile float fsink = 1.25f;
#endif

/* -funwind-tables references the EHABI personality routines; nothing here throws. */
void __aeabi_unwind_cpp_pr0(void);
void __aeabi_unwind_cpp_pr1(void);
void __aeabi_unwind_cpp_pr0(void) {}
void __aeabi_unwind_cpp_pr1(void) {}
void Reset_Handler(void);
void Default_Handler(void);
void PendSV_Handler(void);

__attribute__((section(".vectors"), used)) void (*const vectors[16])(void) = {
    [0] = (void (*)(void))(uintptr_t)__stack_top,
    [1] = Reset_Handler,
    [2] = Default_Handler,
    [3] = Default_Handler,
    [11] = Default_Handler,
    [14] = PendSV_Handler,
    [15] = Default_Handler,
};

void Default_Handler(void)
{
    for (;;)
        sink++;
}

/* ---------------------------------------------------------------- the tasks */

#if V6M
#define ASM_UNIFIED ".syntax unified\n\t" /* GCC's Thumb-1 inline assembly is divided */
#define ASM_DIVIDED ".syntax divided\n\t"
#else
#define ASM_UNIFIED ""
#define ASM_DIVIDED ""
#endif

/* r4-r11 set to base + 4 ... base + 11: callee-saved, so they reach the context switch (and
 * the saved context) with these values, and the caller's values are saved in this frame. */
#define MARK_REGS(base)                                                                            \
    __asm__ volatile(                                                                              \
        ASM_UNIFIED                                                                                \
        "mov r4, %0\n\tadds r4, #8\n\tmov r8, r4\n\t"                                              \
        "adds r4, #1\n\tmov r9, r4\n\tadds r4, #1\n\tmov r10, r4\n\t"                              \
        "adds r4, #1\n\tmov r11, r4\n\t"                                                           \
        "mov r4, %0\n\tadds r4, #4\n\tmov r5, %0\n\tadds r5, #5\n\t"                               \
        "mov r6, %0\n\tadds r6, #6\n\tmov r7, %0\n\tadds r7, #7\n\t" ASM_DIVIDED ::"l"(base)       \
        : "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "cc")

NOINLINE void task_yield(void)
{
    REG32(SCB_ICSR) = ICSR_PENDSVSET;
    __asm__ volatile("dsb\n\tisb" ::: "memory"); /* PendSV is taken here */
}

/* Every task has been switched away from ROUNDS times: the test stops here. */
NOINLINE void fw_checkpoint(void)
{
    for (;;)
        sink++;
}

NOINLINE void alpha_stage_c(uint32_t n)
{
    sink += n;
    MARK_REGS(0xA1000000u);
    task_yield();
    sink += 1u;
}

/* A variable-length array: GCC keeps a frame pointer (r7), and the CFA of this frame is r7 plus
 * an offset, so the backtrace depends on r7 as the port saved it. */
NOINLINE void alpha_stage_b(uint32_t n)
{
    volatile uint8_t buf[n % 8u + 1u];
    buf[0] = (uint8_t)n;
    alpha_stage_c(n * 3u + buf[0]);
    sink ^= n;
}

NOINLINE void alpha_stage_a(uint32_t n)
{
    alpha_stage_b(n + 1u);
    sink += 2u;
}

NOINLINE void alpha_main(void)
{
    for (uint32_t n = 0;; n++)
        alpha_stage_a(n);
}

NOINLINE void beta_leaf(uint32_t n)
{
#if defined(__ARM_FP)
    fsink = fsink * 1.5f + (float)n; /* the task's FP context is active from here on */
#endif
    sink += n;
    MARK_REGS(0xB2000000u);
    task_yield();
    sink -= n;
}

NOINLINE void beta_float(uint32_t n)
{
    beta_leaf(n + 7u);
#if defined(__ARM_FP)
    fsink = fsink * 0.5f;
#endif
    sink += 3u;
}

NOINLINE void beta_main(void)
{
    for (uint32_t n = 0;; n++)
        beta_float(n);
}

NOINLINE uint32_t gamma_deep(uint32_t depth)
{
    if (depth == 0) {
        MARK_REGS(0xC3000000u);
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
        gamma_deep(5);
}

NOINLINE void monitor_main(void)
{
    for (;;) {
        if (switches >= ROUNDS * NTASKS)
            fw_checkpoint();
        task_yield();
    }
}

static void (*const task_entries[NTASKS])(void) = {alpha_main, beta_main, gamma_main, monitor_main};
static const char *const task_names[NTASKS] = {"alpha", "beta", "gamma", "monitor"};
static uint32_t task_stacks[NTASKS][STACK_WORDS] __attribute__((aligned(8)));
static uint32_t scratch_stack[32] __attribute__((aligned(8))); /* PSP before the first task */

/* The hardware frame of a task that has not run yet, at the top of its stack (xPSR Thumb bit,
 * PC at the entry, LR 0xFFFFFFFF: the end of the call chain for a debugger); returns where it
 * starts. */
static uint32_t *initial_frame(unsigned i)
{
    uint32_t *sp = task_stacks[i] + STACK_WORDS;
    *--sp = 0x01000000u;               /* xPSR */
    *--sp = (uint32_t)task_entries[i]; /* PC */
    *--sp = 0xFFFFFFFFu;               /* LR */
    for (int k = 0; k < 5; k++)        /* r12, r3, r2, r1, r0 */
        *--sp = 0;
    return sp;
}

/* ---------------------------------------------------------------- RTX5 */
#if defined(CTX_RTX5)
#include "rtx5_types.h"

osRtxThread_t alpha_tcb, beta_tcb, gamma_tcb, monitor_tcb;
static osRtxThread_t *const tcbs[NTASKS] = {&alpha_tcb, &beta_tcb, &gamma_tcb, &monitor_tcb};
osRtxInfo_t osRtxInfo = {.os_id = "RTX V5.5.4", .version = 50050004};

/* The ready list (thread_next) holds every task but the running one, as in RTX. */
static void relink_ready(osRtxThread_t *running)
{
    osRtxThread_t **link = &osRtxInfo.thread.ready.thread_list;
    for (unsigned i = 0; i < NTASKS; i++)
        if (tcbs[i] != running) {
            *link = tcbs[i];
            link = &tcbs[i]->thread_next;
        }
    *link = 0;
}

static void rtos_init(void)
{
    for (unsigned i = 0; i < NTASKS; i++) {
        osRtxThread_t *t = tcbs[i];
        t->id = 0xF1; /* osRtxIdThread */
        t->name = task_names[i];
        t->priority = osPriorityNormal;
        t->priority_base = osPriorityNormal;
        t->stack_frame = 0xFD; /* STACK_FRAME_INIT_VAL */
        t->thread_addr = (uint32_t)task_entries[i];
        t->stack_mem = task_stacks[i];
        t->stack_size = sizeof task_stacks[i];
        t->sp = (uint32_t)(initial_frame(i) - 8); /* r4-r11 below the frame */
    }
    relink_ready(0);
}

/* Called by PendSV_Handler with the outgoing task's SP (below its saved registers) and
 * EXC_RETURN; returns the incoming task's SP (r0) and its EXC_RETURN (r1). */
uint64_t rtx_switch(uint32_t sp, uint32_t exc_return)
{
    osRtxThread_t *curr = osRtxInfo.thread.run.curr, *next = tcbs[0];
    if (curr) { /* not the first switch */
        curr->sp = sp;
        if (!V6M)
            curr->stack_frame = (uint8_t)exc_return;
        for (unsigned i = 0; i < NTASKS; i++)
            if (tcbs[i] == curr)
                next = tcbs[(i + 1u) % NTASKS];
        switches = switches + 1u;
    }
    osRtxInfo.thread.run.curr = next;
    osRtxInfo.thread.run.next = next;
    relink_ready(next);
    uint32_t ret = V6M ? 0xFFFFFFFDu : 0xFFFFFF00u | next->stack_frame;
    return next->sp | (uint64_t)ret << 32;
}

#if V6M
__attribute__((naked)) void PendSV_Handler(void)
{
    __asm__ volatile(ASM_UNIFIED "mrs r0, psp\n\t"
                                 "subs r0, #32\n\t"
                                 "mov r2, r0\n\t"
                                 "stmia r0!, {r4-r7}\n\t"
                                 "mov r4, r8\n\t"
                                 "mov r5, r9\n\t"
                                 "mov r6, r10\n\t"
                                 "mov r7, r11\n\t"
                                 "stmia r0!, {r4-r7}\n\t"
                                 "mov r0, r2\n\t"
                                 "mov r1, lr\n\t"
                                 "bl rtx_switch\n\t"
                                 "adds r0, #16\n\t"
                                 "ldmia r0!, {r4-r7}\n\t"
                                 "mov r8, r4\n\t"
                                 "mov r9, r5\n\t"
                                 "mov r10, r6\n\t"
                                 "mov r11, r7\n\t"
                                 "msr psp, r0\n\t"
                                 "subs r0, #32\n\t"
                                 "ldmia r0!, {r4-r7}\n\t"
                                 "movs r0, #2\n\t"
                                 "mvns r0, r0\n\t" /* 0xFFFFFFFD */
                                 "bx r0\n\t" ASM_DIVIDED);
}
#else
__attribute__((naked)) void PendSV_Handler(void)
{
    __asm__ volatile("mrs r12, psp\n\t"
                     "stmdb r12!, {r4-r11}\n\t" FP_SAVE "mov r0, r12\n\t"
                     "mov r1, lr\n\t"
                     "bl rtx_switch\n\t"
                     "mov lr, r1\n\t" FP_RESTORE "ldmia r0!, {r4-r11}\n\t"
                     "msr psp, r0\n\t"
                     "bx lr\n\t");
}
#endif

/* ---------------------------------------------------------------- ThreadX */
#elif defined(CTX_THREADX)
#include "threadx_types.h"

TX_THREAD alpha_tcb, beta_tcb, gamma_tcb, monitor_tcb;
static TX_THREAD *const tcbs[NTASKS] = {&alpha_tcb, &beta_tcb, &gamma_tcb, &monitor_tcb};
TX_THREAD *_tx_thread_created_ptr;
TX_THREAD *volatile _tx_thread_current_ptr;
TX_THREAD *volatile _tx_thread_execute_ptr;

static void rtos_init(void)
{
    for (unsigned i = 0; i < NTASKS; i++) {
        TX_THREAD *t = tcbs[i];
        uint32_t *sp = initial_frame(i) - 8; /* r4-r11 (ARMv6-M: r8-r11, r4-r7) */
        *--sp = 0xFFFFFFFDu;                 /* EXC_RETURN: thread mode, PSP, basic frame */
        t->tx_thread_id = 0x54485244u;       /* TX_THREAD_ID */
        t->tx_thread_name = (CHAR *)task_names[i];
        t->tx_thread_priority = 16;
        t->tx_thread_entry = (VOID(*)(ULONG))task_entries[i];
        t->tx_thread_stack_start = task_stacks[i];
        t->tx_thread_stack_end = task_stacks[i] + STACK_WORDS - 1;
        t->tx_thread_stack_size = sizeof task_stacks[i];
        t->tx_thread_stack_ptr = sp;
        t->tx_thread_created_next = tcbs[(i + 1u) % NTASKS];
        t->tx_thread_created_previous = tcbs[(i + NTASKS - 1u) % NTASKS];
    }
    _tx_thread_created_ptr = tcbs[0];
}

/* Called by PendSV_Handler with the outgoing task's SP (at its saved EXC_RETURN); returns the
 * incoming task's. */
uint32_t tx_switch(uint32_t sp)
{
    TX_THREAD *curr = _tx_thread_current_ptr, *next = tcbs[0];
    _tx_thread_current_ptr = 0;
    if (curr) { /* not the first switch */
        curr->tx_thread_stack_ptr = (VOID *)sp;
        next = curr->tx_thread_created_next;
        switches = switches + 1u;
    }
    _tx_thread_execute_ptr = next;
    _tx_thread_current_ptr = next;
    next->tx_thread_run_count++;
    return (uint32_t)next->tx_thread_stack_ptr;
}

#if V6M
__attribute__((naked)) void PendSV_Handler(void)
{
    __asm__ volatile(ASM_UNIFIED "mrs r0, psp\n\t"
                                 "subs r0, #16\n\t"
                                 "stmia r0!, {r4-r7}\n\t" /* r4-r7 at PSP - 16 */
                                 "mov r4, r8\n\t"
                                 "mov r5, r9\n\t"
                                 "mov r6, r10\n\t"
                                 "mov r7, r11\n\t"
                                 "subs r0, #32\n\t"
                                 "stmia r0!, {r4-r7}\n\t" /* r8-r11 at PSP - 32 */
                                 "subs r0, #20\n\t"
                                 "mov r1, lr\n\t"
                                 "str r1, [r0]\n\t" /* EXC_RETURN at PSP - 36 */
                                 "bl tx_switch\n\t"
                                 "ldr r1, [r0]\n\t"
                                 "mov lr, r1\n\t"
                                 "adds r0, #4\n\t"
                                 "ldmia r0!, {r4-r7}\n\t"
                                 "mov r11, r7\n\t"
                                 "mov r10, r6\n\t"
                                 "mov r9, r5\n\t"
                                 "mov r8, r4\n\t"
                                 "ldmia r0!, {r4-r7}\n\t"
                                 "msr psp, r0\n\t"
                                 "bx lr\n\t" ASM_DIVIDED);
}
#else
__attribute__((naked)) void PendSV_Handler(void)
{
    __asm__ volatile("mrs r12, psp\n\t"
                     "stmdb r12!, {r4-r11}\n\t" FP_SAVE "stmdb r12!, {lr}\n\t"
                     "mov r0, r12\n\t"
                     "bl tx_switch\n\t"
                     "ldmia r0!, {lr}\n\t" FP_RESTORE "ldmia r0!, {r4-r11}\n\t"
                     "msr psp, r0\n\t"
                     "bx lr\n\t");
}
#endif
#else
#error "build with -DCTX_RTX5 or -DCTX_THREADX"
#endif

void Reset_Handler(void)
{
#if defined(__ARM_FP)
    REG32(SCB_CPACR) |= 0xFu << 20; /* CP10, CP11 full access */
    __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
    rtos_init();
    __asm__ volatile("msr psp, %0" ::"r"(scratch_stack + 32) : "memory");
    REG32(SCB_SHPR3) = (REG32(SCB_SHPR3) & 0xFF00FFFFu) | 0xFFu << 16; /* PendSV lowest */
    task_yield(); /* the first switch: never resumed */
    for (;;)
        sink++;
}
