/* Test firmware for the saved-context layouts of RTX5 and ThreadX
 * (tests/e2e/test_crash_threads_rtx_threadx.py), FreeRTOS and Zephyr
 * (test_crash_threads_freertos_zephyr.py): four tasks that really switch, in QEMU, through a
 * PendSV_Handler written here that saves and restores exactly what the RTOS's own port does, with
 * the RTOS's TCB type and globals (rtx5_types.h, threadx_types.h, freertos_types.h,
 * zephyr_types.h). Built once per RTOS (-DCTX_RTX5, -DCTX_THREADX, -DCTX_FREERTOS, -DCTX_ZEPHYR)
 * and core (ARMv6-M, ARMv7-M, ARMv7E-M with FP, ARMv8-M mainline with FP); the port's words,
 * per architecture:
 *   RTX5 (CMSIS-RTX irq_armv6m.S, irq_armv7m.S, irq_armv8mml.S; SVC_ContextSave /
 *     Sys_ContextSave, SVC_ContextRestore): at the TCB's sp [s16-s31 when EXC_RETURN bit 4 is
 *     0] r4-r11, then the hardware frame; EXC_RETURN's low byte in the TCB's stack_frame, the
 *     return with 0xFFFFFF00 | stack_frame (ARMv6-M: r4-r7, r8-r11 upwards from PSP - 32, the
 *     return with 0xFFFFFFFD, stack_frame unused);
 *   ThreadX (ports/cortex_m0, cortex_m3/m4/m33 gnu/src/tx_thread_schedule.S, PendSV_Handler):
 *     at tx_thread_stack_ptr EXC_RETURN [s16-s31 when its bit 4 is 0] r4-r11, then the hardware
 *     frame (ARMv6-M: EXC_RETURN, r8-r11, r4-r7);
 *   FreeRTOS (-DCTX_FREERTOS; FreeRTOS-Kernel portable/GCC ARM_CM0, ARM_CM3, ARM_CM4F port.c
 *     xPortPendSVHandler, ARM_CM33_NTZ/non_secure/portasm.c PendSV_Handler): at pxTopOfStack
 *     r4-r11 (ARM_CM0, ARM_CM3); r4-r11 EXC_RETURN [s16-s31] (ARM_CM4F); PSPLIM EXC_RETURN
 *     r4-r11 [s16-s31] (ARM_CM33_NTZ; -DFREERTOS_TRUSTZONE: the ARM_CM33 TrustZone port's
 *     xSecureContext first); then the hardware frame; the tasks on pxReadyTasksLists;
 *   Zephyr (-DCTX_ZEPHYR; arch/arm/core/cortex_m/swap_helper.S z_arm_pendsv): r4-r11 and PSP in
 *     the thread's callee_saved, the hardware frame at that PSP; with an FPU
 *     (CONFIG_FPU_SHARING, CONFIG_ARM_STORE_EXC_RETURN) EXC_RETURN's low byte in
 *     arch.mode_exc_return and s16-s31 in arch.preempt_float; the threads on _kernel.threads.
 * The tasks, scheduled round robin, each yield (pend PendSV) a few calls deep:
 *   alpha:   alpha_main -> alpha_stage_a -> alpha_stage_b (frame pointer r7) -> alpha_stage_c
 *            -> task_yield
 *   beta:    beta_main -> beta_float -> beta_leaf -> task_yield, with an active FP context in
 *            an FP build (an extended frame, s16-s31 saved by the handler)
 *   gamma:   gamma_main -> gamma_deep (5 times, recursive) -> task_yield
 *   monitor: monitor_main -> task_yield; after ROUNDS rounds it calls fw_checkpoint, which
 *            never returns: the place the test stops at, every other task parked.
 * Stack usage (tests/e2e/test_crash_stacks.py): every task's stack is filled with its RTOS's
 * pattern when it is created (FreeRTOS 0xA5 bytes, RTX5 0xCCCCCCCC words above the magic word
 * 0xE25A2EA5, Zephyr 0xAA bytes, ThreadX 0xEF bytes), as the kernels do; FreeRTOS's stacks
 * follow a heap_4 block header (BlockLink_t) as pvPortMalloc leaves it, and -DFREERTOS_NO_END
 * builds the TCB without pxEndOfStack (configRECORD_STACK_HIGH_ADDRESS 0). gamma overflows its
 * stack once when it starts (stack_hog recurses until SP is below the stack's far end), into a
 * red zone below each stack that no task owns, breaking the guard bytes / magic word. Reset_Handler
 * fills the main stack below itself with the same pattern.
 * With -DFW_STATES (tests/e2e/test_rtos_states.py) the threads are in the states their kernel
 * has, set as the kernel sets them, with its own state words, values and objects: each task
 * that yields is blocked when it is switched out (alpha on the semaphore sem_ready, beta on the
 * message queue rx_queue, gamma on the mutex state_lock) and four more threads never run
 * (flagger waits on the event flags events, sleeper sleeps, pauser is suspended, ended has
 * terminated); fw_expect[] says, per thread, what the firmware made of it. Every thread starts
 * where its kernel starts it: Zephyr in z_thread_entry (lib/os/thread_entry.c), ThreadX in
 * _tx_thread_shell_entry (tx_thread_shell_entry.c), RTX5 in its function returning to
 * osThreadExit (rtx_thread.c), FreeRTOS in its function returning to prvTaskExitError
 * (portTASK_RETURN_ADDRESS). Zephyr's start-up thread is a dummy TCB on the interrupt stack
 * (kernel/init.c z_cstart) until the first switch: fw_boot_checkpoint is where it is current.
 * With -DFW_PAST_TOP (tests/e2e/test_threads_past_top.py; implies -DFW_STATES) two threads that
 * never run, sleeper and pauser, have a saved context as if switched out in chain_leaf, under a
 * chain of frames the firmware lays out word by word (chain_frames): sleeper's chain_outer has its
 * stack's top as SP and its return address above the top, in the next stack's red zone, where a
 * frame of chain_above follows (its return address 0xFFFFFFFF): an unwinder walks past the top;
 * pauser's chain_mid, half way down its stack, returns to 0: its walk ends before its kernel's
 * thread root. fw_chain[] records each frame laid out (PC, SP) and the stack's top.
 * Self-contained: no library, no startup files (QEMU loads the sections as they are). */
#include <stdint.h>

#define REG32(addr) (*(volatile uint32_t *)(addr))
#define SCB_ICSR 0xE000ED04u
#define SCB_SHPR3 0xE000ED20u
#define SCB_CPACR 0xE000ED88u
#define ICSR_PENDSVSET (1u << 28)
#define NOINLINE __attribute__((noinline))
#define STACK_WORDS 160u
#define RED_WORDS 32u /* below each stack: what an overflow runs into */
#define NTASKS 4u     /* the tasks that switch */
#if defined(FW_PAST_TOP) && !defined(FW_STATES)
#define FW_STATES 1 /* the thread roots and the threads that never run */
#endif
#if defined(FW_STATES)
#define NEXTRA 4u /* threads that never run: flagger, sleeper, pauser, ended */
#else
#define NEXTRA 0u
#endif
#define NTHREADS (NTASKS + NEXTRA)
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

extern uint32_t __stack_top[], __stack_bottom[];

/* the RTOS's stack fill, as a word */
#if defined(CTX_RTX5)
#define STACK_FILL 0xCCCCCCCCu /* osRtxStackFillPattern */
#elif defined(CTX_ZEPHYR)
#define STACK_FILL 0xAAAAAAAAu /* CONFIG_INIT_STACKS */
#elif defined(CTX_THREADX)
#define STACK_FILL 0xEFEFEFEFu /* TX_STACK_FILL */
#else
#define STACK_FILL 0xA5A5A5A5u /* tskSTACK_FILL_BYTE */
#endif
volatile uint32_t sink;
volatile uint32_t switches; /* context switches made */
#if defined(__ARM_FP)
volatile float fsink = 1.25f;
#endif

void PendSV_Handler(void);
#include "fw_startup.h"

FW_VECTORS(16, [14] = PendSV_Handler);

/* ---------------------------------------------------------------- the tasks */

#if V6M
#define ASM_UNIFIED ".syntax unified\n\t" /* GCC's Thumb-1 inline assembly is divided */
/* r4-r7, then r8-r11 through r4-r7, stored upwards from r0 (ARMv6-M has no STM of high
 * registers); and r8-r11 loaded back from r0 through r4-r7 */
#define V6M_STORE_R4_R11                                                                           \
    "stmia r0!, {r4-r7}\n\tmov r4, r8\n\tmov r5, r9\n\tmov r6, r10\n\tmov r7, r11\n\t"             \
    "stmia r0!, {r4-r7}\n\t"
#define V6M_LOAD_R8_R11                                                                            \
    "ldmia r0!, {r4-r7}\n\tmov r8, r4\n\tmov r9, r5\n\tmov r10, r6\n\tmov r11, r7\n\t"
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

static uint32_t stack_area[NTHREADS][RED_WORDS + STACK_WORDS] __attribute__((aligned(8)));
#define task_stack(i) (stack_area[i] + RED_WORDS)

/* Recurses until SP is below gamma's stack: the overflow writes into the red zone below it. */
NOINLINE void stack_hog(void)
{
    volatile uint32_t pad[8];
    uint32_t sp;
    for (unsigned k = 0; k < 8u; k++)
        pad[k] = sink + k;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    if (sp > (uint32_t)task_stack(2) - 16u)
        stack_hog();
    sink += pad[0];
}

NOINLINE void gamma_main(void)
{
    stack_hog();
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

#if defined(FW_STATES)
/* the threads that never run: what they would do */
NOINLINE void flagger_main(void)
{
    for (;;)
        task_yield();
}
NOINLINE void sleeper_main(void)
{
    for (;;)
        task_yield();
}
NOINLINE void pauser_main(void)
{
    for (;;)
        task_yield();
}
NOINLINE void ended_main(void)
{
    sink += 1u;
}
#define EXTRA_ENTRIES , flagger_main, sleeper_main, pauser_main, ended_main
#define EXTRA_NAMES , "flagger", "sleeper", "pauser", "ended"

/* What the firmware made of each thread, in the order of tcbs[]: the state in spoor's words, what
 * it waits on, the object and its name (tests/e2e/test_rtos_states.py reads it through gdb). */
struct fw_expect {
    const char *state, *wait;
    const void *object;
    const char *object_name;
};
#else
#define EXTRA_ENTRIES
#define EXTRA_NAMES
#endif
static void (*const task_entries[NTHREADS])(void) = {alpha_main, beta_main, gamma_main,
                                                     monitor_main EXTRA_ENTRIES};
static const char *const task_names[NTHREADS] = {"alpha", "beta", "gamma", "monitor" EXTRA_NAMES};
#if defined(CTX_FREERTOS) || defined(CTX_ZEPHYR)
/* a task name into a TCB's char array (no C library here) */
static void copy_name(char *dst, unsigned cap, const char *src)
{
    unsigned n = 0;
    for (; n + 1u < cap && src[n]; n++)
        dst[n] = src[n];
    dst[n] = '\0';
}
#endif
static uint32_t scratch_stack[32] __attribute__((aligned(8))); /* PSP before the first task */

#if defined(FW_STATES) && defined(CTX_ZEPHYR)
/* lib/os/thread_entry.c: every thread starts here (arch_new_thread: PC z_thread_entry, r0 the
 * thread's function), and never returns */
__attribute__((noreturn, noinline)) void z_thread_entry(void (*entry)(void), void *p1, void *p2,
                                                        void *p3)
{
    (void)p1;
    (void)p2;
    (void)p3;
    entry();
    for (;;) /* k_thread_abort(k_current_get()) */
        sink++;
}
#define THREAD_PC(i) ((uint32_t)z_thread_entry)
#define THREAD_R0(i) ((uint32_t)task_entries[i])
#define THREAD_LR STACK_FILL /* arch_new_thread leaves LR as the stack held it */
#elif defined(FW_STATES) && defined(CTX_THREADX)
void _tx_thread_shell_entry(void);
#define THREAD_PC(i) ((uint32_t)_tx_thread_shell_entry)
#define THREAD_R0(i) 0u
#define THREAD_LR 0xFFFFFFFFu
#elif defined(FW_STATES) && defined(CTX_RTX5)
/* rtx_thread.c: a thread's function returns here (svcRtxThreadNew: LR osThreadExit) */
__attribute__((noreturn, noinline)) void osThreadExit(void)
{
    for (;;)
        sink++;
}
#define THREAD_PC(i) ((uint32_t)task_entries[i])
#define THREAD_R0(i) 0u
#define THREAD_LR ((uint32_t)osThreadExit)
#elif defined(FW_STATES) && defined(CTX_FREERTOS)
/* port.c: a task's function returns here (portTASK_RETURN_ADDRESS) */
__attribute__((noreturn, noinline)) void prvTaskExitError(void)
{
    for (;;)
        sink++;
}
#define THREAD_PC(i) ((uint32_t)task_entries[i])
#define THREAD_R0(i) 0u
#define THREAD_LR ((uint32_t)prvTaskExitError)
#else
#define THREAD_PC(i) ((uint32_t)task_entries[i])
#define THREAD_R0(i) 0u
#define THREAD_LR 0xFFFFFFFFu /* the end of the call chain for a debugger */
#endif

#if defined(FW_PAST_TOP)
/* Four functions that each push {r4, lr} (CFA = SP + 8, the return address at CFA - 4, as their
 * CFI and EHABI entries say) and call the one below: chain_above -> chain_outer -> chain_mid ->
 * chain_leaf, which waits. The encodings are 16-bit push, 32-bit bl, 16-bit b: a return address
 * is the function + 6, chain_leaf's waiting PC the function + 2. */
#define CHAIN_FN(name, body)                                                                       \
    ".global " #name "\n\t.type " #name ", %function\n\t.thumb_func\n" #name ":\n\t"               \
    ".fnstart\n\t.cfi_startproc\n\tpush {r4, lr}\n\t.save {r4, lr}\n\t"                            \
    ".cfi_def_cfa_offset 8\n\t.cfi_offset 4, -8\n\t.cfi_offset 14, -4\n\t" body                    \
    "\n\tpop {r4, pc}\n\t.cfi_endproc\n\t.fnend\n\t.size " #name ", .-" #name "\n\t"
__asm__(".pushsection .text\n\t.thumb\n\t.align 2\n\t" ASM_UNIFIED CHAIN_FN(chain_leaf, "b .")
            CHAIN_FN(chain_mid, "bl chain_leaf") CHAIN_FN(chain_outer, "bl chain_mid")
                CHAIN_FN(chain_above, "bl chain_outer") ASM_DIVIDED ".popsection");
void chain_leaf(void), chain_mid(void), chain_outer(void), chain_above(void);
#define CHAIN_RET(fn) ((uint32_t)(fn) + 6u) /* after its bl, Thumb bit set */

#define STRAY 5u /* sleeper: its walk goes past its stack's top */
#define SHORT 6u /* pauser: its walk ends before its thread root */
/* What the firmware laid out, per thread (tests/e2e/test_threads_past_top.py reads it through
 * gdb): its stack's top, each frame's PC (Thumb bit clear) and SP, innermost first. */
struct fw_frame {
    uint32_t pc, sp;
};
struct fw_chain {
    const char *thread;
    uint32_t top, nframes;
    struct fw_frame frame[4];
};
struct fw_chain fw_chain[2];

/* A frame of a function that pushed {r4, lr}: r4, then its return address, at sp; records it. */
static uint32_t *push_frame(struct fw_chain *c, uint32_t *sp, uint32_t pc, uint32_t ret)
{
    c->frame[c->nframes].pc = pc & ~1u;
    c->frame[c->nframes++].sp = (uint32_t)sp;
    sp[0] = 0x44444444u; /* r4 */
    sp[1] = ret;
    return sp + 2;
}

/* The saved context of STRAY or SHORT: the hardware frame (PC in chain_leaf after its push), the
 * frames above it; returns the hardware frame. */
static uint32_t *chain_frames(unsigned i)
{
    struct fw_chain *c = &fw_chain[i - STRAY];
    uint32_t *top = task_stack(i) + STACK_WORDS;
    /* STRAY: chain_outer's SP is the top, two frames below it, one above; SHORT: half way down */
    uint32_t *sp = i == STRAY ? top - 4 : top - STACK_WORDS / 2u, *frame = sp - 8, *p = sp;
    c->thread = task_names[i];
    c->top = (uint32_t)top;
    p = push_frame(c, p, (uint32_t)chain_leaf + 2u, CHAIN_RET(chain_mid));
    if (i == SHORT) {
        push_frame(c, p, CHAIN_RET(chain_mid), 0); /* a return address 0: nothing above */
    } else {
        p = push_frame(c, p, CHAIN_RET(chain_mid), CHAIN_RET(chain_outer));
        p = push_frame(c, p, CHAIN_RET(chain_outer), CHAIN_RET(chain_above)); /* p: above */
        push_frame(c, p, CHAIN_RET(chain_above), 0xFFFFFFFFu);
    }
    frame[0] = THREAD_R0(i);
    for (int k = 1; k < 5; k++) /* r1, r2, r3, r12 */
        frame[k] = 0;
    frame[5] = CHAIN_RET(chain_mid);              /* LR: what chain_leaf pushed */
    frame[6] = ((uint32_t)chain_leaf & ~1u) + 2u; /* PC */
    frame[7] = 0x01000000u;                       /* xPSR */
    return frame;
}
#endif

/* The hardware frame of a task that has not run yet, at the top of its stack (xPSR Thumb bit,
 * PC where its kernel starts it, LR); returns where it starts. */
static uint32_t *initial_frame(unsigned i)
{
    for (unsigned k = 0; k < STACK_WORDS; k++) /* the RTOS fills a new thread's stack */
        task_stack(i)[k] = STACK_FILL;
#if defined(FW_PAST_TOP)
    if (i == STRAY || i == SHORT)
        return chain_frames(i);
#endif
    uint32_t *sp = task_stack(i) + STACK_WORDS;
    *--sp = 0x01000000u;        /* xPSR */
    *--sp = THREAD_PC(i);       /* PC */
    *--sp = THREAD_LR;          /* LR */
    for (int k = 0; k < 4; k++) /* r12, r3, r2, r1 */
        *--sp = 0;
    *--sp = THREAD_R0(i); /* r0 */
    return sp;
}

/* ---------------------------------------------------------------- RTX5 */
#if defined(CTX_RTX5)
#include "rtx5_types.h"

osRtxThread_t alpha_tcb, beta_tcb, gamma_tcb, monitor_tcb;
osRtxInfo_t osRtxInfo = {.os_id = "RTX V5.5.4", .version = 50050004};
#if defined(FW_STATES)
osRtxThread_t flagger_tcb, sleeper_tcb, pauser_tcb, ended_tcb;
static osRtxThread_t *const tcbs[NTHREADS] = {&alpha_tcb,   &beta_tcb,    &gamma_tcb,  &monitor_tcb,
                                              &flagger_tcb, &sleeper_tcb, &pauser_tcb, &ended_tcb};
osRtxSemaphore_t sem_ready = {.id = osRtxIdSemaphore, .name = "sem_ready"};
osRtxMessageQueue_t rx_queue = {.id = osRtxIdMessageQueue, .name = "rx_queue", .msg_size = 4};
osRtxMutex_t state_lock = {.id = osRtxIdMutex, .name = "state_lock"};
osRtxEventFlags_t events = {.id = osRtxIdEventFlags, .name = "events"};
/* the state a thread is left in when it is switched out (the four that never run: from the
 * start; osThreadSuspend leaves osRtxThreadBlocked), and the object it waits on */
static const uint8_t parked_state[NTHREADS] = {
    osRtxThreadWaitingSemaphore,  osRtxThreadWaitingMessageGet,
    osRtxThreadWaitingMutex,      osRtxThreadReady,
    osRtxThreadWaitingEventFlags, osRtxThreadWaitingDelay,
    osRtxThreadBlocked,           osRtxThreadTerminated};
static void *const parked_on[NTHREADS] = {&sem_ready, &rx_queue, &state_lock, 0, &events, 0, 0, 0};

/* rtx_thread.c's lists from the states: the ready list (thread_next, the running thread off
 * it), the delay list and the wait list (delay_next: a wait with osWaitForever, as
 * osRtxThreadDelayInsert), the terminate list (thread_next); a thread waiting on an object is
 * its thread_list, its thread_prev the object (osRtxThreadListPut). */
static void relink_ready(osRtxThread_t *running)
{
    osRtxThread_t **ready = &osRtxInfo.thread.ready.thread_list;
    osRtxThread_t **delay = &osRtxInfo.thread.delay_list, **wait = &osRtxInfo.thread.wait_list;
    osRtxThread_t **ended = &osRtxInfo.thread.terminate_list;
    for (unsigned i = 0; i < NTHREADS; i++) {
        osRtxThread_t *t = tcbs[i];
        t->thread_next = t->thread_prev = t->delay_next = t->delay_prev = 0;
    }
    for (unsigned i = 0; i < NTHREADS; i++) {
        osRtxThread_t *t = tcbs[i];
        if (t == running)
            continue;
        if (t->state == osRtxThreadReady) {
            *ready = t;
            ready = &t->thread_next;
        } else if (t->state == osRtxThreadTerminated) {
            *ended = t;
            ended = &t->thread_next;
        } else if (t->state == osRtxThreadWaitingDelay) {
            *delay = t;
            delay = &t->delay_next;
        } else {
            *wait = t;
            wait = &t->delay_next;
        }
        if (parked_on[i] && t->state != osRtxThreadReady) {
            ((osRtxSemaphore_t *)parked_on[i])->thread_list = t;
            t->thread_prev = (osRtxThread_t *)parked_on[i];
        }
    }
    *ready = *delay = *wait = *ended = 0;
}
#else
static osRtxThread_t *const tcbs[NTASKS] = {&alpha_tcb, &beta_tcb, &gamma_tcb, &monitor_tcb};

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
#endif

static void rtos_init(void)
{
    for (unsigned i = 0; i < NTHREADS; i++) {
        osRtxThread_t *t = tcbs[i];
        t->id = 0xF1; /* osRtxIdThread */
        t->name = task_names[i];
        t->priority = osPriorityNormal;
        t->priority_base = osPriorityNormal;
        t->stack_frame = 0xFD; /* STACK_FRAME_INIT_VAL */
        t->thread_addr = (uint32_t)task_entries[i];
        t->stack_mem = task_stack(i);
        t->stack_size = STACK_WORDS * 4u;
        t->sp = (uint32_t)(initial_frame(i) - 8); /* r4-r11 below the frame */
        task_stack(i)[0] = 0xE25A2EA5u;           /* osRtxStackMagicWord */
#if defined(FW_STATES)
        t->state = i < NTASKS ? osRtxThreadReady : parked_state[i];
#else
        t->state = osRtxThreadReady;
#endif
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
            if (tcbs[i] == curr) {
                next = tcbs[(i + 1u) % NTASKS];
#if defined(FW_STATES)
                curr->state = parked_state[i];
#else
                curr->state = osRtxThreadReady;
#endif
            }
        switches = switches + 1u;
    }
    next->state = osRtxThreadRunning;
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
                                 "mov r2, r0\n\t" V6M_STORE_R4_R11 "mov r0, r2\n\t"
                                 "mov r1, lr\n\t"
                                 "bl rtx_switch\n\t"
                                 "adds r0, #16\n\t" V6M_LOAD_R8_R11 "msr psp, r0\n\t"
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
TX_THREAD *_tx_thread_created_ptr;
TX_THREAD *volatile _tx_thread_current_ptr;
TX_THREAD *volatile _tx_thread_execute_ptr;
#if defined(FW_STATES)
TX_THREAD flagger_tcb, sleeper_tcb, pauser_tcb, ended_tcb;
static TX_THREAD *const tcbs[NTHREADS] = {&alpha_tcb,   &beta_tcb,    &gamma_tcb,  &monitor_tcb,
                                          &flagger_tcb, &sleeper_tcb, &pauser_tcb, &ended_tcb};
TX_SEMAPHORE sem_ready = {.tx_semaphore_id = 0x53454D41u, .tx_semaphore_name = "sem_ready"};
TX_QUEUE rx_queue = {.tx_queue_id = 0x51554555u, .tx_queue_name = "rx_queue"};
TX_MUTEX state_lock = {.tx_mutex_id = 0x4D555445u, .tx_mutex_name = "state_lock"};
TX_EVENT_FLAGS_GROUP events = {.tx_event_flags_group_id = 0x4456444Eu,
                               .tx_event_flags_group_name = "events"};
/* tx_thread_state when switched out (the four that never run: from the start) and the object
 * (tx_thread_suspend_control_block) */
static const UINT parked_state[NTHREADS] = {TX_SEMAPHORE_SUSP, TX_QUEUE_SUSP, TX_MUTEX_SUSP,
                                            TX_READY,          TX_EVENT_FLAG, TX_SLEEP,
                                            TX_SUSPENDED,      TX_COMPLETED};
static void *const parked_on[NTHREADS] = {&sem_ready, &rx_queue, &state_lock, 0, &events, 0, 0, 0};

/* tx_thread_shell_entry.c: every thread starts here (tx_thread_stack_build: PC
 * _tx_thread_shell_entry) and calls its entry function with its parameter */
NOINLINE void _tx_thread_shell_entry(void)
{
    TX_THREAD *t = _tx_thread_current_ptr;
    (t->tx_thread_entry)(t->tx_thread_entry_parameter);
    t->tx_thread_state = TX_COMPLETED;
    for (;;)
        sink++;
}

/* what tx_semaphore_get, tx_queue_receive, tx_mutex_get, ... leave when they suspend: the state,
 * the object, the thread on its suspension list */
static void park(unsigned i)
{
    TX_THREAD *t = tcbs[i];
    t->tx_thread_state = parked_state[i];
    t->tx_thread_suspend_control_block = parked_on[i];
    if (parked_on[i]) /* alone on the object's suspension list */
        t->tx_thread_suspended_next = t->tx_thread_suspended_previous = t;
}
#else
static TX_THREAD *const tcbs[NTASKS] = {&alpha_tcb, &beta_tcb, &gamma_tcb, &monitor_tcb};
#endif

static void rtos_init(void)
{
    for (unsigned i = 0; i < NTHREADS; i++) {
        TX_THREAD *t = tcbs[i];
        uint32_t *sp = initial_frame(i) - 8; /* r4-r11 (ARMv6-M: r8-r11, r4-r7) */
        *--sp = 0xFFFFFFFDu;                 /* EXC_RETURN: thread mode, PSP, basic frame */
        t->tx_thread_id = 0x54485244u;       /* TX_THREAD_ID */
        t->tx_thread_name = (CHAR *)task_names[i];
        t->tx_thread_priority = 16;
        t->tx_thread_entry = (VOID(*)(ULONG))task_entries[i];
        t->tx_thread_stack_start = task_stack(i);
        t->tx_thread_stack_end = (uint8_t *)(task_stack(i) + STACK_WORDS) - 1; /* last byte */
        t->tx_thread_stack_size = STACK_WORDS * 4u;
        t->tx_thread_stack_ptr = sp;
        t->tx_thread_created_next = tcbs[(i + 1u) % NTHREADS];
        t->tx_thread_created_previous = tcbs[(i + NTHREADS - 1u) % NTHREADS];
#if defined(FW_STATES)
        if (i >= NTASKS)
            park(i);
#endif
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
        for (unsigned i = 0; i < NTASKS; i++)
            if (tcbs[i] == curr) {
                next = tcbs[(i + 1u) % NTASKS];
#if defined(FW_STATES)
                park(i);
#endif
            }
        switches = switches + 1u;
    }
#if defined(FW_STATES)
    next->tx_thread_state = TX_READY;
    next->tx_thread_suspend_control_block = 0;
#endif
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

/* ---------------------------------------------------------------- FreeRTOS */
#elif defined(CTX_FREERTOS)
#include "freertos_types.h"

TCB_t alpha_tcb, beta_tcb, gamma_tcb, monitor_tcb;
#if defined(FW_STATES)
TCB_t flagger_tcb, sleeper_tcb, pauser_tcb, ended_tcb;
static TCB_t *const tcbs[NTHREADS] = {&alpha_tcb,   &beta_tcb,    &gamma_tcb,  &monitor_tcb,
                                      &flagger_tcb, &sleeper_tcb, &pauser_tcb, &ended_tcb};
#else
static TCB_t *const tcbs[NTASKS] = {&alpha_tcb, &beta_tcb, &gamma_tcb, &monitor_tcb};
#endif
static TCB_t boot_tcb; /* the context before the first switch: never resumed */
TCB_t *volatile pxCurrentTCB = &boot_tcb;
List_t pxReadyTasksLists[2];
#if defined(FW_STATES)
List_t xDelayedTaskList1, xDelayedTaskList2, xPendingReadyList, xSuspendedTaskList,
    xTasksWaitingTermination;
List_t *volatile pxDelayedTaskList = &xDelayedTaskList1;
/* the objects: a binary semaphore (uxItemSize 0) and a mutex (pcHead NULL) as variables, a queue
 * from the heap named by the queue registry (configQUEUE_REGISTRY_SIZE), an event group */
Queue_t sem_ready, state_lock;
static uint8_t ucHeap[256] __attribute__((aligned(8)));
#define rx_queue (*(Queue_t *)(void *)(ucHeap + 16))
QueueRegistryItem_t xQueueRegistry[4];
EventGroup_t events;
/* the list a thread is on when switched out (the four that never run: from the start): a wait
 * with portMAX_DELAY puts it on xSuspendedTaskList (INCLUDE_vTaskSuspend), one with a timeout on
 * the delayed list; its event list item on the object's waiting list */
static List_t *const parked_list[NTHREADS] = {
    &xSuspendedTaskList, &xDelayedTaskList1, &xSuspendedTaskList, &pxReadyTasksLists[1],
    &xDelayedTaskList1,  &xDelayedTaskList1, &xSuspendedTaskList, &xTasksWaitingTermination};
static List_t *parked_on(unsigned i)
{
    switch (i) {
    case 0: return &sem_ready.xTasksWaitingToReceive;
    case 1: return &rx_queue.xTasksWaitingToReceive;
    case 2: return &state_lock.xTasksWaitingToReceive;
    case 4: return &events.xTasksWaitingForBits;
    default: return 0;
    }
}
#endif

#if defined(FW_STATES)
/* list.c's uxListRemove */
static void list_remove(ListItem_t *item)
{
    List_t *l = item->pxContainer;
    if (!l)
        return;
    item->pxNext->pxPrevious = item->pxPrevious;
    item->pxPrevious->pxNext = item->pxNext;
    if (l->pxIndex == item)
        l->pxIndex = item->pxPrevious;
    item->pxContainer = 0;
    l->uxNumberOfItems--;
}

/* what a blocking call leaves (xQueueSemaphoreTake, xQueueReceive, xEventGroupWaitBits,
 * vTaskDelay, vTaskSuspend, vTaskDelete): the task's state item on a list, its event item on
 * the object's waiting list */
static void park(unsigned i)
{
    TCB_t *t = tcbs[i];
    list_remove(&t->xStateListItem);
    list_remove(&t->xEventListItem);
    list_insert_end(parked_list[i], &t->xStateListItem);
    if (parked_on(i))
        list_insert_end(parked_on(i), &t->xEventListItem);
}

static void unpark(unsigned i)
{
    TCB_t *t = tcbs[i];
    list_remove(&t->xStateListItem);
    list_remove(&t->xEventListItem);
    list_insert_end(&pxReadyTasksLists[t->uxPriority], &t->xStateListItem);
}

static void objects_init(void)
{
    List_t *lists[] = {&xDelayedTaskList1,
                       &xDelayedTaskList2,
                       &xPendingReadyList,
                       &xSuspendedTaskList,
                       &xTasksWaitingTermination,
                       &sem_ready.xTasksWaitingToSend,
                       &sem_ready.xTasksWaitingToReceive,
                       &state_lock.xTasksWaitingToSend,
                       &state_lock.xTasksWaitingToReceive,
                       &rx_queue.xTasksWaitingToSend,
                       &rx_queue.xTasksWaitingToReceive,
                       &events.xTasksWaitingForBits};
    for (unsigned k = 0; k < sizeof lists / sizeof lists[0]; k++)
        list_initialise(lists[k]);
    sem_ready.pcHead = (int8_t *)&sem_ready; /* a semaphore's pcHead: not NULL, no storage */
    sem_ready.uxLength = 1;
    state_lock.pcHead = 0; /* queueQUEUE_IS_MUTEX */
    state_lock.uxLength = 1;
    rx_queue.pcHead = (int8_t *)(ucHeap + 16 + sizeof(Queue_t));
    rx_queue.uxLength = 4;
    rx_queue.uxItemSize = 4;
    xQueueRegistry[0].pcQueueName = "rx_queue";
    xQueueRegistry[0].xHandle = &rx_queue;
}
#endif

#if defined(__ARM_FP) && !defined(__ARM_ARCH_8M_MAIN__)
/* A function of the ARM_CM4F port (ARM_CM3 has none): spoor tells the ports apart by it. */
NOINLINE void vPortEnableVFP(void)
{
    REG32(SCB_CPACR) |= 0xFu << 20;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
}
#endif

/* What the port's pxPortInitialiseStack leaves below the initial frame, as its PendSV restores
 * it: ARM_CM0/CM3 r4-r11; ARM_CM4F r4-r11, EXC_RETURN; ARM_CM33_NTZ PSPLIM, EXC_RETURN,
 * r4-r11 (lowest address first); with -DFREERTOS_TRUSTZONE xSecureContext below them. */
static void rtos_init(void)
{
    list_initialise(&pxReadyTasksLists[0]);
    list_initialise(&pxReadyTasksLists[1]);
#if defined(FW_STATES)
    objects_init();
#endif
    for (unsigned i = 0; i < NTHREADS; i++) {
        TCB_t *t = tcbs[i];
        uint32_t *sp = initial_frame(i);
#if defined(__ARM_ARCH_8M_MAIN__)
        sp -= 8;                         /* r4-r11 */
        *--sp = 0xFFFFFFFDu;             /* EXC_RETURN: thread mode, PSP, basic frame */
        *--sp = (uint32_t)stack_area[i]; /* PSPLIM: the red zone's bottom (gamma overflows) */
#if defined(FREERTOS_TRUSTZONE)
        *--sp = 0;                       /* xSecureContext: none */
#endif
#elif defined(__ARM_FP)
        *--sp = 0xFFFFFFFDu; /* EXC_RETURN above r4-r11 */
        sp -= 8;
#else
        sp -= 8;
#endif
        t->pxTopOfStack = sp;
        copy_name(t->pcTaskName, sizeof t->pcTaskName, task_names[i]);
        t->uxPriority = 1;
        t->pxStack = task_stack(i);
#if !defined(FREERTOS_NO_END)
        t->pxEndOfStack = task_stack(i) + STACK_WORDS - 1;
#endif
        /* heap_4's BlockLink_t before the block pvPortMalloc returned: pxNextFreeBlock NULL,
         * xBlockSize with the header and heapBLOCK_ALLOCATED_BITMASK */
        task_stack(i)[-2] = 0;
        task_stack(i)[-1] = 0x80000000u | (8u + STACK_WORDS * 4u);
        t->xStateListItem.pvOwner = t;
        t->xEventListItem.pvOwner = t;
        list_insert_end(&pxReadyTasksLists[t->uxPriority], &t->xStateListItem);
#if defined(FW_STATES)
        if (i >= NTASKS)
            park(i);
#endif
    }
#if defined(__ARM_FP) && !defined(__ARM_ARCH_8M_MAIN__)
    vPortEnableVFP();
#endif
}

/* tasks.c's vTaskSwitchContext: round robin */
void vTaskSwitchContext(void)
{
    TCB_t *next = tcbs[0];
    for (unsigned i = 0; i < NTASKS; i++)
        if (tcbs[i] == pxCurrentTCB) {
            next = tcbs[(i + 1u) % NTASKS];
            switches = switches + 1u;
#if defined(FW_STATES)
            park(i);
#endif
        }
#if defined(FW_STATES)
    for (unsigned i = 0; i < NTASKS; i++)
        if (tcbs[i] == next)
            unpark(i);
#endif
    pxCurrentTCB = next;
}

#if V6M
/* ARM_CM0 port.c xPortPendSVHandler */
__attribute__((naked)) void PendSV_Handler(void)
{
    __asm__ volatile(ASM_UNIFIED "mrs r0, psp\n\t"
                                 "ldr r3, =pxCurrentTCB\n\t"
                                 "ldr r2, [r3]\n\t"
                                 "subs r0, r0, #32\n\t"
                                 "str r0, [r2]\n\t" V6M_STORE_R4_R11 "push {r3, r14}\n\t"
                                 "cpsid i\n\t"
                                 "bl vTaskSwitchContext\n\t"
                                 "cpsie i\n\t"
                                 "pop {r2, r3}\n\t"
                                 "ldr r1, [r2]\n\t"
                                 "ldr r0, [r1]\n\t"
                                 "adds r0, r0, #16\n\t" V6M_LOAD_R8_R11 "msr psp, r0\n\t"
                                 "subs r0, r0, #32\n\t"
                                 "ldmia r0!, {r4-r7}\n\t"
                                 "bx r3\n\t"
                                 ".ltorg\n\t" ASM_DIVIDED);
}
#elif defined(__ARM_ARCH_8M_MAIN__)
#if defined(FREERTOS_TRUSTZONE)
/* ARM_CM33/non_secure/portasm.c's save_ns_context words (xSecureContext first), although this
 * firmware runs in the secure state, where the real port would have taken its secure-stack path
 * (EXC_RETURN bit 6 set): spoor must say so. */
volatile uint32_t xSecureContext; /* port.c, configENABLE_TRUSTZONE */
#define SAVE_SECURE_CONTEXT "ldr r1, =xSecureContext\n\tldr r1, [r1]\n\tstmdb r0!, {r1-r11}\n\t"
#define RESTORE_SECURE_CONTEXT "ldmia r0!, {r1-r11}\n\t"
#else
#define SAVE_SECURE_CONTEXT "stmdb r0!, {r2-r11}\n\t"
#define RESTORE_SECURE_CONTEXT "ldmia r0!, {r2-r11}\n\t"
#endif
/* ARM_CM33_NTZ/non_secure/portasm.c PendSV_Handler, configENABLE_MPU 0 */
__attribute__((naked)) void PendSV_Handler(void)
{
    __asm__ volatile("mrs r0, psp\n\t"
#if defined(__ARM_FP)
                     "tst lr, #0x10\n\t"
                     "it eq\n\t"
                     "vstmdbeq r0!, {s16-s31}\n\t"
#endif
                     "mrs r2, psplim\n\t"
                     "mov r3, lr\n\t" SAVE_SECURE_CONTEXT "ldr r2, =pxCurrentTCB\n\t"
                     "ldr r1, [r2]\n\t"
                     "str r0, [r1]\n\t"
                     "bl vTaskSwitchContext\n\t"
                     "ldr r2, =pxCurrentTCB\n\t"
                     "ldr r1, [r2]\n\t"
                     "ldr r0, [r1]\n\t" RESTORE_SECURE_CONTEXT
#if defined(__ARM_FP)
                     "tst r3, #0x10\n\t"
                     "it eq\n\t"
                     "vldmiaeq r0!, {s16-s31}\n\t"
#endif
                     "msr psplim, r2\n\t"
                     "msr psp, r0\n\t"
                     "bx r3\n\t"
                     ".ltorg");
}
#else
/* ARM_CM4F port.c xPortPendSVHandler with an FPU, ARM_CM3's without */
__attribute__((naked)) void PendSV_Handler(void)
{
    __asm__ volatile("mrs r0, psp\n\t"
                     "isb\n\t"
                     "ldr r3, =pxCurrentTCB\n\t"
                     "ldr r2, [r3]\n\t"
#if defined(__ARM_FP)
                     "tst r14, #0x10\n\t"
                     "it eq\n\t"
                     "vstmdbeq r0!, {s16-s31}\n\t"
                     "stmdb r0!, {r4-r11, r14}\n\t"
#else
                     "stmdb r0!, {r4-r11}\n\t"
#endif
                     "str r0, [r2]\n\t"
                     "stmdb sp!, {r3, r14}\n\t"
                     "bl vTaskSwitchContext\n\t"
                     "ldmia sp!, {r3, r14}\n\t"
                     "ldr r1, [r3]\n\t"
                     "ldr r0, [r1]\n\t"
#if defined(__ARM_FP)
                     "ldmia r0!, {r4-r11, r14}\n\t"
                     "tst r14, #0x10\n\t"
                     "it eq\n\t"
                     "vldmiaeq r0!, {s16-s31}\n\t"
#else
                     "ldmia r0!, {r4-r11}\n\t"
#endif
                     "msr psp, r0\n\t"
                     "isb\n\t"
                     "bx r14\n\t"
                     ".ltorg");
}
#endif

/* ---------------------------------------------------------------- Zephyr */
#elif defined(CTX_ZEPHYR)
#if defined(__ARM_FP)
#define CONFIG_FPU_SHARING 1
#define CONFIG_ARM_STORE_EXC_RETURN 1
#endif
#include <stddef.h>

#include "zephyr_types.h"

struct k_thread alpha_tcb, beta_tcb, gamma_tcb, monitor_tcb;
#if defined(FW_STATES)
struct k_thread flagger_tcb, sleeper_tcb, pauser_tcb, ended_tcb;
static struct k_thread *const tcbs[NTHREADS] = {&alpha_tcb,   &beta_tcb,    &gamma_tcb,
                                                &monitor_tcb, &flagger_tcb, &sleeper_tcb,
                                                &pauser_tcb,  &ended_tcb};
/* z_cstart's dummy thread is on the interrupt stack, current until the first switch */
struct z_kernel _kernel = {.threads = &alpha_tcb};
/* the version Zephyr's boot banner carries (kernel/banner.c) */
const char fw_banner[] = "*** Booting Zephyr OS build zephyr-v2.5.0 ***";
struct k_sem sem_ready;
struct k_msgq rx_queue;
struct k_mutex state_lock;
struct k_event events;
static sys_dlist_t timeout_list; /* kernel/timeout.c's list of running timeouts */
/* base.thread_state when switched out (the four that never run: from the start), the wait queue
 * of the object (base.pended_on) */
static const uint8_t parked_state[NTHREADS] = {_THREAD_PENDING,   _THREAD_PENDING,
                                               _THREAD_PENDING,   _THREAD_QUEUED,
                                               _THREAD_PENDING,   0 /* k_sleep: its timeout runs */,
                                               _THREAD_SUSPENDED, _THREAD_DEAD};
static _wait_q_t *const parked_on[NTHREADS] = {
    &sem_ready.wait_q, &rx_queue.wait_q, &state_lock.wait_q, 0, &events.wait_q, 0, 0, 0};

/* what z_pend_curr, z_tick_sleep, k_thread_suspend, k_thread_abort leave */
static void park(unsigned i)
{
    struct k_thread *t = tcbs[i];
    t->base.thread_state = parked_state[i];
    t->base.pended_on = parked_on[i];
    if (parked_on[i]) { /* alone on the object's wait queue */
        parked_on[i]->waitq.head = parked_on[i]->waitq.tail = &t->base.qnode_dlist;
        t->base.qnode_dlist.next = t->base.qnode_dlist.prev = &parked_on[i]->waitq;
    }
    if (i == 5) /* the sleeper: its timeout on the timeout list */
        t->base.timeout.node.next = t->base.timeout.node.prev = &timeout_list;
}

/* the boot thread's part of z_cstart: fw_boot_checkpoint while the dummy thread is current */
NOINLINE void fw_boot_checkpoint(void)
{
    sink += (uint32_t)fw_banner[0];
#if defined(FW_BOOT_STOP) /* tests/e2e/test_rtos_states.py stops here */
    for (;;)
        sink++;
#endif
}
#else
static struct k_thread *const tcbs[NTASKS] = {&alpha_tcb, &beta_tcb, &gamma_tcb, &monitor_tcb};
static struct k_thread boot_thread; /* the context before the first switch: never resumed */
struct z_kernel _kernel = {.cpus = {{.current = &boot_thread}}, .threads = &alpha_tcb};
#endif

/* arch_new_thread: the initial frame at psp, a basic frame to return to */
static void rtos_init(void)
{
    for (unsigned i = 0; i < NTHREADS; i++) {
        struct k_thread *t = tcbs[i];
        t->callee_saved.psp = (uint32_t)initial_frame(i);
        copy_name(t->name, sizeof t->name, task_names[i]);
        t->base.prio = 1;
        t->stack_info.start = (uintptr_t)task_stack(i);
        t->stack_info.size = STACK_WORDS * 4u;
        t->entry.pEntry = (k_thread_entry_t)(uintptr_t)task_entries[i];
        t->next_thread = i + 1u < NTHREADS ? tcbs[i + 1u] : 0;
#if defined(CONFIG_ARM_STORE_EXC_RETURN)
        t->arch.mode_exc_return = 0xFD;
#endif
        t->base.thread_state = _THREAD_QUEUED;
#if defined(FW_STATES)
        if (i >= NTASKS)
            park(i);
#endif
    }
}

/* the scheduler's choice, round robin: _kernel.cpus[0].current becomes the next thread */
void z_fw_switch(void)
{
    struct k_thread *next = tcbs[0];
    for (unsigned i = 0; i < NTASKS; i++)
        if (tcbs[i] == _kernel.cpus[0].current) {
            next = tcbs[(i + 1u) % NTASKS];
            switches = switches + 1u;
#if defined(FW_STATES)
            park(i);
#endif
        }
    next->base.thread_state = _THREAD_QUEUED; /* z_ready_thread; kept while it runs */
    next->base.pended_on = 0;
    _kernel.cpus[0].current = next;
}

#define OFF_CURRENT offsetof(struct z_kernel, cpus[0].current)
#define OFF_CALLEE offsetof(struct k_thread, callee_saved)

#if V6M
/* swap_helper.S z_arm_pendsv, CONFIG_ARMV6_M_ARMV8_M_BASELINE */
__attribute__((naked)) void PendSV_Handler(void)
{
    __asm__ volatile(ASM_UNIFIED "ldr r1, =_kernel\n\t"
                                 "ldr r2, [r1, %[cur]]\n\t"
                                 "movs r0, %[callee]\n\t"
                                 "add r0, r2\n\t"
                                 "mrs r3, psp\n\t"
                                 "mov ip, r3\n\t"
                                 "stmia r0!, {r4-r7}\n\t"
                                 "mov r3, r8\n\t"
                                 "mov r4, r9\n\t"
                                 "mov r5, r10\n\t"
                                 "mov r6, r11\n\t"
                                 "mov r7, ip\n\t"
                                 "stmia r0!, {r3-r7}\n\t"
                                 "mov r4, lr\n\t"
                                 "bl z_fw_switch\n\t"
                                 "mov lr, r4\n\t"
                                 "ldr r1, =_kernel\n\t"
                                 "ldr r2, [r1, %[cur]]\n\t"
                                 "movs r0, %[callee]\n\t"
                                 "add r0, r2\n\t"
                                 "adds r0, #16\n\t"
                                 "ldmia r0!, {r3-r7}\n\t"
                                 "mov r8, r3\n\t"
                                 "mov r9, r4\n\t"
                                 "mov r10, r5\n\t"
                                 "mov r11, r6\n\t"
                                 "mov ip, r7\n\t"
                                 "subs r0, #36\n\t"
                                 "ldmia r0!, {r4-r7}\n\t"
                                 "mov r3, ip\n\t"
                                 "msr psp, r3\n\t"
                                 "bx lr\n\t"
                                 ".ltorg\n\t" ASM_DIVIDED ::[cur] "i"(OFF_CURRENT),
                     [callee] "i"(OFF_CALLEE));
}
#else
#if defined(CONFIG_ARM_STORE_EXC_RETURN)
#define OFF_EXC_RETURN offsetof(struct k_thread, arch.mode_exc_return)
#define OFF_FLOAT offsetof(struct k_thread, arch.preempt_float)
#define SAVE_EXC_RETURN "strb lr, [r2, %[exc]]\n\t"
#define RESTORE_EXC_RETURN "ldrsb lr, [r2, %[exc]]\n\t"
#define SAVE_FLOAT "tst lr, #0x10\n\tbne 1f\n\tadd r0, r2, %[fp]\n\tvstmia r0, {s16-s31}\n1:\n\t"
#define RESTORE_FLOAT "tst lr, #0x10\n\tbne 2f\n\tadd r0, r2, %[fp]\n\tvldmia r0, {s16-s31}\n2:\n\t"
#define FP_OPERANDS , [exc] "i"(OFF_EXC_RETURN), [fp] "i"(OFF_FLOAT)
#else
#define SAVE_EXC_RETURN ""
#define RESTORE_EXC_RETURN ""
#define SAVE_FLOAT ""
#define RESTORE_FLOAT ""
#define FP_OPERANDS
#endif
/* swap_helper.S z_arm_pendsv, CONFIG_ARMV7_M_ARMV8_M_MAINLINE (with an FPU: CONFIG_FPU_SHARING,
 * CONFIG_ARM_STORE_EXC_RETURN) */
__attribute__((naked)) void PendSV_Handler(void)
{
    __asm__ volatile("ldr r1, =_kernel\n\t"
                     "ldr r2, [r1, %[cur]]\n\t" SAVE_EXC_RETURN "add r0, r2, %[callee]\n\t"
                     "mrs ip, psp\n\t"
                     "stmia r0, {r4-r11, ip}\n\t" SAVE_FLOAT "push {r0, lr}\n\t"
                     "bl z_fw_switch\n\t"
                     "pop {r0, lr}\n\t"
                     "ldr r1, =_kernel\n\t"
                     "ldr r2, [r1, %[cur]]\n\t" RESTORE_EXC_RETURN RESTORE_FLOAT
                     "add r0, r2, %[callee]\n\t"
                     "ldmia r0, {r4-r11, ip}\n\t"
                     "msr psp, ip\n\t"
                     "bx lr\n\t"
                     ".ltorg" ::[cur] "i"(OFF_CURRENT),
                     [callee] "i"(OFF_CALLEE)FP_OPERANDS);
}
#endif
#else
#error "build with -DCTX_RTX5, -DCTX_THREADX, -DCTX_FREERTOS or -DCTX_ZEPHYR"
#endif

#if defined(FW_STATES)
const struct fw_expect fw_expect[NTHREADS] = {
    {"blocked", "semaphore", &sem_ready, "sem_ready"},
    {"blocked", "message queue", &rx_queue, "rx_queue"},
    {"blocked", "mutex", &state_lock, "state_lock"},
    {"running", "", 0, ""},
    {"blocked", "event flags", &events, "events"},
    {"sleeping", "", 0, ""},
    {"suspended", "", 0, ""},
    {"terminated", "", 0, ""},
};
#endif

void Reset_Handler(void)
{
    uint32_t msp;
    __asm__ volatile("mov %0, sp" : "=r"(msp));
    for (uint32_t *p = __stack_bottom; (uint32_t)p < msp; p++) /* the main stack's fill */
        *p = STACK_FILL;
#if defined(__ARM_FP)
    REG32(SCB_CPACR) |= 0xFu << 20; /* CP10, CP11 full access */
    __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
    rtos_init();
#if defined(FW_STATES) && defined(CTX_ZEPHYR)
    struct k_thread dummy; /* z_cstart: a dummy thread on the interrupt stack */
    for (unsigned k = 0; k < sizeof dummy; k++)
        ((volatile uint8_t *)&dummy)[k] = (uint8_t)(0x3F + k); /* what the stack held */
    dummy.base.thread_state = _THREAD_DUMMY;
    _kernel.cpus[0].current = &dummy;
    fw_boot_checkpoint();
#endif
    __asm__ volatile("msr psp, %0" ::"r"(scratch_stack + 32) : "memory");
#if defined(CTX_FREERTOS) || defined(CTX_ZEPHYR)
    /* these ports return from PendSV with the EXC_RETURN it was entered with: the first switch
     * comes from thread mode on PSP, as a task's would */
    __asm__ volatile("movs r0, #2\n\tmsr control, r0\n\tisb" ::: "r0", "memory");
#endif
    REG32(SCB_SHPR3) = (REG32(SCB_SHPR3) & 0xFF00FFFFu) | 0xFFu << 16; /* PendSV lowest */
    task_yield(); /* the first switch: never resumed */
    for (;;)
        sink++;
}
