/*
 * sched: a preemptive fixed-priority scheduler and four tasks, for spoor top and the thread
 * views (docs/top.md). SysTick ticks every millisecond (25 MHz core clock on QEMU's MPS2
 * boards); the highest-priority task whose wake tick has come runs; a task gives up the CPU
 * with sched_sleep(); PendSV, at the lowest priority, switches context on the process stack
 * (r4-r11 and EXC_RETURN saved below the hardware frame).
 *
 *   sensor   priority 3  sleeps 2 ticks after each round of work
 *   control  priority 2  sleeps 3 ticks
 *   logger   priority 1  sleeps 5 ticks
 *   idle     priority 0  never sleeps
 *
 * The firmware sets up its own trace for a probe, as firmware for a real one does: the target
 * library's spoor_itm_watch_current_thread_ex() (spoor/itm_watch.h) turns on the ITM with local
 * timestamps, DWT comparator 1 on sched_current (a data value packet on every switch) and
 * exception trace; that is the stream spoor top reads (-T sched -E). QEMU emulates no ITM or
 * DWT and ignores these writes; the virtual probe (spoor vprobe, docs/vprobe.md) follows them.
 *
 * After RUN_TICKS ticks (or as many as a number on the semihosting command line says) the
 * SysTick handler calls sched_checkpoint() (a place for a breakpoint: every task has run and
 * been switched away from) and the program exits; with the semihosting argument "park" it
 * stays in the handler instead, every task frozen, for a debugger to attach to (QEMU stops the
 * machine when GDB connects). With "nosetup" it leaves the ITM and DWT alone, for a debugger
 * to set them up (spoor top --setup, tests/e2e/test_vprobe_setup.py).
 */
#include <stdint.h>
#include <string.h>

#include "cortexm_regs.h"
#include "sched.h"
#include "semihost.h"
#include "spoor/itm_watch.h"

#define NOINLINE __attribute__((noinline))
#define RUN_TICKS 100u
#define STACK_WORDS 256u
#define SYST_CSR SCS_REG(0xE000E010u)
#define SYST_RVR SCS_REG(0xE000E014u)
#define SYST_CVR SCS_REG(0xE000E018u)
#define SCB_SHPR3 SCS_REG(0xE000ED20u)
#define SCB_ICSR_PENDSVSET (1u << 28)
#define TICK_RELOAD 25000u /* 1 ms at 25 MHz */

volatile uint32_t sched_ticks;
static uint32_t run_ticks = RUN_TICKS;
static int park;     /* "park" on the command line: stop at the checkpoint instead of exiting */
static int no_setup; /* "nosetup": the trace is the debugger's to set up */
volatile uint32_t work_sink;

static void sensor_main(void);
static void control_main(void);
static void logger_main(void);
static void idle_main(void);

static uint32_t sensor_stack[STACK_WORDS] __attribute__((aligned(8)));
static uint32_t control_stack[STACK_WORDS] __attribute__((aligned(8)));
static uint32_t logger_stack[STACK_WORDS] __attribute__((aligned(8)));
static uint32_t idle_stack[STACK_WORDS] __attribute__((aligned(8)));

struct sched_task task_sensor = {0, "sensor", 3, sensor_main, 0, 0, sensor_stack, STACK_WORDS};
struct sched_task task_control = {0, "control", 2, control_main, 0, 0, control_stack, STACK_WORDS};
struct sched_task task_logger = {0, "logger", 1, logger_main, 0, 0, logger_stack, STACK_WORDS};
struct sched_task task_idle = {0, "idle", 0, idle_main, 0, 0, idle_stack, STACK_WORDS};
struct sched_task *const volatile sched_idle = &task_idle; /* volatile: kept, read at run time */

/* every task (spoor reads this list for the thread views) */
struct sched_task *const sched_tasks[] = {&task_sensor, &task_control, &task_logger, &task_idle};
#define NTASKS (sizeof sched_tasks / sizeof sched_tasks[0])

/* the context main had when the first switch was made (never resumed) */
static struct sched_task boot_task;
static uint32_t boot_stack[32] __attribute__((aligned(8)));

struct sched_task *volatile sched_current = &boot_task;

NOINLINE static uint32_t work(uint32_t rounds, uint32_t seed)
{
    for (uint32_t i = 0; i < rounds; i++)
        seed = seed * 1103515245u + 12345u;
    work_sink = seed;
    return seed;
}

NOINLINE static void sensor_main(void)
{
    for (uint32_t n = 0;; n++) {
        work(200, n);
        sched_sleep(2);
    }
}

NOINLINE static void control_main(void)
{
    for (uint32_t n = 0;; n++) {
        work(400, n);
        sched_sleep(3);
    }
}

NOINLINE static void logger_main(void)
{
    for (uint32_t n = 0;; n++) {
        work(800, n);
        sched_sleep(5);
    }
}

NOINLINE static void idle_main(void)
{
    for (;;)
        work(10, sched_ticks);
}

/* The initial context of a task: the hardware frame of an exception taken in thread mode on
 * the process stack (xPSR with the Thumb bit, PC at the entry, LR 0xFFFFFFFF: the end of the
 * call chain for a debugger; the task functions never return), below it r4-r11 and EXC_RETURN
 * 0xFFFFFFFD, as PendSV_Handler restores them. */
static void prepare(struct sched_task *t)
{
    uint32_t *sp = t->stack + t->stack_words;
    *--sp = 0x01000000u;        /* xPSR */
    *--sp = (uint32_t)t->entry; /* PC */
    *--sp = 0xFFFFFFFFu;        /* LR */
    for (int i = 0; i < 5; i++) /* r12, r3, r2, r1, r0 */
        *--sp = 0;
    *--sp = 0xFFFFFFFDu;        /* EXC_RETURN: thread mode, PSP, basic frame */
    for (int i = 0; i < 8; i++) /* r11 .. r4 */
        *--sp = 0;
    t->sp = sp;
}

static struct sched_task *pick(void)
{
    struct sched_task *best = sched_idle;
    for (unsigned i = 0; i < NTASKS; i++)
        if (sched_tasks[i]->wake_tick <= sched_ticks && sched_tasks[i]->priority > best->priority)
            best = sched_tasks[i];
    return best;
}

/* Called by PendSV_Handler with the outgoing task's saved stack pointer; returns the incoming
 * task's. The write to sched_current is the switch the DWT comparator sees. */
uint32_t *sched_switch_context(uint32_t *sp)
{
    sched_current->sp = sp;
    struct sched_task *next = pick();
    next->runs++;
    sched_current = next;
    return next->sp;
}

__attribute__((naked)) void PendSV_Handler(void)
{
    __asm__ volatile("mrs r0, psp\n\t"
                     "stmdb r0!, {r4-r11, lr}\n\t"
                     "bl sched_switch_context\n\t"
                     "ldmia r0!, {r4-r11, lr}\n\t"
                     "msr psp, r0\n\t"
                     "bx lr\n\t");
}

static void pend_switch(void)
{
    SCB_ICSR = SCB_ICSR_PENDSVSET;
    barrier_dsb_isb();
}

void sched_sleep(uint32_t ticks)
{
    __asm__ volatile("cpsid i" ::: "memory");
    sched_current->wake_tick = sched_ticks + ticks;
    __asm__ volatile("cpsie i" ::: "memory");
    pend_switch();
}

/* Every task has run by now: a place for a breakpoint. */
NOINLINE void sched_checkpoint(void)
{
    work_sink = sched_ticks;
}

void SysTick_Handler(void)
{
    sched_ticks = sched_ticks + 1u;
    if (sched_ticks == run_ticks) {
        sched_checkpoint();
        semihost_write_string("sched: ");
        for (unsigned i = 0; i < NTASKS; i++) {
            semihost_write_string(sched_tasks[i]->name);
            semihost_write_string(sched_tasks[i]->runs ? " ran " : " never ran ");
        }
        semihost_write_string("\n");
        while (park)
            work_sink = work_sink + 1u;
        semihost_exit(0);
    }
    if (pick() != sched_current)
        pend_switch();
}

void sched_start(void)
{
    for (unsigned i = 0; i < NTASKS; i++)
        prepare(sched_tasks[i]);
    boot_task.name = "boot";
    /* trace for a probe: every write to sched_current, exceptions (a core without ITM, or
     * QEMU, which ignores the writes, leaves the stream empty: the scheduler runs the same) */
    if (!no_setup)
        (void)spoor_itm_watch_current_thread_ex((void *const *)&sched_current, 1, 1);
    /* the outgoing context of the first switch is saved on this stack */
    __asm__ volatile("msr psp, %0" ::"r"(boot_stack + 32) : "memory");
    SCB_SHPR3 = (SCB_SHPR3 & 0x0000FFFFu) | 0xFFu << 16 | 0x80u << 24; /* PendSV lowest */
    SYST_RVR = TICK_RELOAD - 1u;
    SYST_CVR = 0;
    SYST_CSR = 7u; /* processor clock, interrupt, enable */
    pend_switch();
    for (;;) /* not reached: PendSV returns to the first task */
        ;
}

/* The last word of the command line, when it is a number: the ticks to run. */
static void parse_run_ticks(const char *cmdline)
{
    const char *word = cmdline;
    for (const char *p = cmdline; *p; p++)
        if (*p == ' ')
            word = p + 1;
    uint32_t n = 0;
    for (; *word >= '0' && *word <= '9' && n < 100000u; word++)
        n = n * 10u + (uint32_t)(*word - '0');
    if (n && !*word)
        run_ticks = n;
}

int main(void)
{
    static char cmdline[64];
    if (semihost_get_cmdline(cmdline, sizeof cmdline)) {
        park = strstr(cmdline, "park") != NULL;
        no_setup = strstr(cmdline, "nosetup") != NULL;
        parse_run_ticks(cmdline);
    }
    sched_start();
}
