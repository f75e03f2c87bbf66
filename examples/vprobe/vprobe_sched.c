/*
 * vprobe_sched: a small preemptive scheduler for the virtual trace probe (docs/vprobe.md).
 *
 * Four threads (three workers and an idle thread) share the Cortex-M3 of QEMU's mps2-an385.
 * SysTick ticks every millisecond (25 MHz SysTick clock, CLKSOURCE = processor clock): it wakes
 * sleeping threads and pends PendSV for round-robin; a worker that sleeps pends PendSV itself.
 * PendSV saves r4-r11 on the process stack, picks the next ready thread and stores its TCB
 * address in `current_thread`, the variable a DWT comparator watches.
 *
 * The firmware sets up ITM and DWT as firmware for a real probe does (ARMv7-M ARM C1.7, C1.8):
 * DEMCR.TRCENA, the ITM lock, ITM_TCR (ITM, local timestamps, syncs, DWT forwarding, trace bus
 * ID 1), ITM_TER (ports 0 and 1), DWT comparator 1 on `current_thread` (data value on write),
 * DWT_CTRL (CYCCNT, exception trace, PC sampling every 16 x 64 cycles, syncs at CYCCNT[24]).
 * QEMU emulates none of these registers; it ignores the stores, and the virtual probe
 * (tools/vprobe.py) follows them in QEMU's log. The workers print through ITM stimulus port 0
 * (text) and port 1 (a 32-bit counter).
 *
 * Under QEMU reads of the ITM registers return 0, so the stimulus port is written without
 * polling it for FIFO space (a real target polls: while (ITM_STIM(0) == 0) {}).
 *
 * Semihosting command line (optional, its last word): the number of ticks to run (default 200);
 * the program then exits with status 0.
 */
#include <stdint.h>

#include "cortexm_regs.h"
#include "semihost.h"

#define REG32(address) (*(volatile uint32_t *)(address))
#define REG8(address) (*(volatile uint8_t *)(address))

/* ITM (ARMv7-M ARM C1.7.4) */
#define ITM_STIM32(port) REG32(0xE0000000u + 4u * (port))
#define ITM_STIM8(port) REG8(0xE0000000u + 4u * (port))
#define ITM_TER REG32(0xE0000E00u)
#define ITM_TPR REG32(0xE0000E40u)
#define ITM_TCR REG32(0xE0000E80u)
#define ITM_LAR REG32(0xE0000FB0u)
#define ITM_TCR_ITMENA (1u << 0)
#define ITM_TCR_TSENA (1u << 1)
#define ITM_TCR_SYNCENA (1u << 2)
#define ITM_TCR_TXENA (1u << 3) /* DWTENA: forward DWT packets */
#define ITM_TCR_TSPRESCALE(p) ((uint32_t)(p) << 8)
#define ITM_TCR_TRACEBUSID(id) ((uint32_t)(id) << 16)
#define ITM_LAR_KEY 0xC5ACCE55u

/* DWT (ARMv7-M ARM C1.8.7) */
#define DWT_CTRL REG32(0xE0001000u)
#define DWT_COMP(n) REG32(0xE0001020u + 16u * (n))
#define DWT_MASK(n) REG32(0xE0001024u + 16u * (n))
#define DWT_FUNCTION(n) REG32(0xE0001028u + 16u * (n))
#define DWT_CTRL_CYCCNTENA (1u << 0)
#define DWT_CTRL_POSTPRESET(n) ((uint32_t)(n) << 1)
#define DWT_CTRL_CYCTAP (1u << 9)
#define DWT_CTRL_SYNCTAP(n) ((uint32_t)(n) << 10)
#define DWT_CTRL_PCSAMPLENA (1u << 12)
#define DWT_CTRL_EXCTRCENA (1u << 16)
#define DWT_FUNCTION_DATA_WRITE 0xDu /* sample data value for write transfers */

#define DEMCR REG32(0xE000EDFCu)
#define DEMCR_TRCENA (1u << 24)

/* SysTick and the system handler priorities (ARMv7-M ARM B3.3, B3.2.12) */
#define SYST_CSR REG32(0xE000E010u)
#define SYST_RVR REG32(0xE000E014u)
#define SYST_CVR REG32(0xE000E018u)
#define SCB_SHPR3 REG32(0xE000ED20u)
#define SYST_CSR_ENABLE_TICKINT_CLKSOURCE 7u
#define SCB_ICSR_PENDSVSET (1u << 28)

#define SYSTICK_HZ 25000000u
#define TICK_HZ 1000u
#define STACK_WORDS 256u

struct thread {
    uint32_t *sp; /* saved process stack pointer (PendSV's r4-r11 frame on top) */
    const char *name;
    uint32_t wake_tick; /* sleeping until this tick */
    uint32_t priority;
    void (*entry)(void);
};

/* The current-thread pointer a DWT comparator watches (written by PendSV only). */
struct thread *volatile current_thread;
static volatile uint32_t ticks;
static uint32_t tick_limit = 200u;

static uint32_t stacks[4][STACK_WORDS] __attribute__((aligned(8)));
static void worker_sensor(void);
static void worker_control(void);
static void worker_logger(void);
static void idle_thread(void);
struct thread threads[4] = {
    {0, "sensor", 0, 2, worker_sensor},
    {0, "control", 0, 3, worker_control},
    {0, "logger", 0, 1, worker_logger},
    {0, "idle", 0, 0, idle_thread},
};
#define THREAD_COUNT (sizeof threads / sizeof threads[0])

static void itm_print(const char *text)
{
    while (*text != '\0') {
        ITM_STIM8(0) = (uint8_t)*text++;
    }
}

static void yield(void)
{
    SCB_ICSR = SCB_ICSR_PENDSVSET;
    barrier_dsb_isb();
}

static void sleep_ticks(uint32_t n)
{
    current_thread->wake_tick = ticks + n;
    yield();
}

static __attribute__((noinline)) uint32_t work(uint32_t rounds)
{
    uint32_t x = rounds;
    for (uint32_t i = 0; i < rounds; i++) {
        x = x * 1103515245u + 12345u;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

/* sensor: short bursts, sleeps a tick after each */
static void worker_sensor(void)
{
    for (uint32_t n = 0;; n++) {
        (void)work(1500u);
        ITM_STIM32(1) = n;
        sleep_ticks(1u);
    }
}

/* control: long computation, preempted by the tick, sleeps every third round */
static void worker_control(void)
{
    for (uint32_t n = 0;; n++) {
        (void)work(6000u);
        if (n % 3u == 2u) {
            sleep_ticks(2u);
        }
    }
}

/* logger: prints a line through ITM port 0 every few ticks */
static void worker_logger(void)
{
    for (;;) {
        itm_print("log\n");
        (void)work(400u);
        sleep_ticks(5u);
    }
}

/* idle: spins (not WFI: an instruction-count clock cannot see time asleep) */
static void idle_thread(void)
{
    for (;;) {
        __asm__ volatile("nop");
    }
}

static struct thread *next_ready(void)
{
    uint32_t start = (uint32_t)(current_thread - threads);
    for (uint32_t i = 1; i <= THREAD_COUNT; i++) {
        struct thread *t = &threads[(start + i) % THREAD_COUNT];
        if (t != &threads[THREAD_COUNT - 1u] && (int32_t)(ticks - t->wake_tick) >= 0) {
            return t;
        }
    }
    return &threads[THREAD_COUNT - 1u];
}

/* Called by PendSV with the outgoing thread's stack pointer; returns the incoming one's. */
uint32_t *switch_context(uint32_t *sp)
{
    current_thread->sp = sp;
    current_thread = next_ready();
    return current_thread->sp;
}

__attribute__((naked)) void PendSV_Handler(void)
{
    __asm__ volatile("mrs r0, psp\n\t"
                     "stmdb r0!, {r4-r11}\n\t"
                     "push {r3, lr}\n\t"
                     "bl switch_context\n\t"
                     "pop {r3, lr}\n\t"
                     "ldmia r0!, {r4-r11}\n\t"
                     "msr psp, r0\n\t"
                     "bx lr\n\t");
}

void SysTick_Handler(void)
{
    ticks++;
    if (ticks >= tick_limit) {
        itm_print("done\n");
        semihost_exit(0);
    }
    SCB_ICSR = SCB_ICSR_PENDSVSET; /* round-robin */
}

static void thread_init(struct thread *t, uint32_t *stack)
{
    uint32_t *sp = stack + STACK_WORDS - 16u;
    sp[8 + 5] = 0xFFFFFFFDu;                        /* lr (unused) */
    sp[8 + 6] = (uint32_t)(uintptr_t)t->entry | 1u; /* pc */
    sp[8 + 7] = 0x01000000u;                        /* xPSR: Thumb */
    t->sp = sp;
}

static void trace_setup(void)
{
    DEMCR |= DEMCR_TRCENA;
    ITM_LAR = ITM_LAR_KEY;
    ITM_TCR = ITM_TCR_ITMENA | ITM_TCR_TSENA | ITM_TCR_SYNCENA | ITM_TCR_TXENA |
              ITM_TCR_TSPRESCALE(0) | ITM_TCR_TRACEBUSID(1);
    ITM_TPR = 0u;
    ITM_TER = 0x3u;
    DWT_COMP(1) = (uint32_t)(uintptr_t)&current_thread;
    DWT_MASK(1) = 0u;
    DWT_FUNCTION(1) = DWT_FUNCTION_DATA_WRITE;
    DWT_CTRL = DWT_CTRL_CYCCNTENA | DWT_CTRL_POSTPRESET(15) | DWT_CTRL_SYNCTAP(1) |
               DWT_CTRL_PCSAMPLENA | DWT_CTRL_EXCTRCENA;
}

static uint32_t parse_ticks(void)
{
    char line[32];
    uint32_t n = 0;
    if (!semihost_get_cmdline(line, sizeof line)) {
        return 0;
    }
    const char *c = line;
    for (const char *p = line; *p != '\0'; p++) {
        if (*p == ' ') {
            c = p + 1; /* the last word: QEMU puts the program's name first */
        }
    }
    for (; *c >= '0' && *c <= '9'; c++) {
        n = n * 10u + (uint32_t)(*c - '0');
    }
    return n;
}

int main(void)
{
    uint32_t n = parse_ticks();
    if (n != 0u) {
        tick_limit = n;
    }
    trace_setup();
    for (uint32_t i = 0; i < THREAD_COUNT; i++) {
        thread_init(&threads[i], stacks[i]);
    }
    SCB_SHPR3 = (0xFFu << 16) | (0x80u << 24); /* PendSV lowest, SysTick above it */
    SYST_RVR = SYSTICK_HZ / TICK_HZ - 1u;
    SYST_CVR = 0u;
    SYST_CSR = SYST_CSR_ENABLE_TICKINT_CLKSOURCE;
    /* become the idle thread's context: PendSV saves this one into idle (never resumed) */
    current_thread = &threads[THREAD_COUNT - 1u];
    __asm__ volatile("msr psp, %0\n\t"
                     "movs r0, #2\n\t"
                     "msr control, r0\n\t"
                     "isb" ::"r"(stacks[THREAD_COUNT - 1u] + STACK_WORDS)
                     : "r0");
    yield();
    idle_thread();
    return 0;
}
