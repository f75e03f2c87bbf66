/*
 * crash: firmware that crashes on purpose, in a way chosen on the command line, and hands the
 * crash dump to the host after the reset that follows. It is the end-to-end test bed of spoor's
 * crash capture (target/) and of `spoor crash` (docs/crash.md).
 *
 * Run under QEMU with
 *   -semihosting-config enable=on,target=native,arg=crash,arg=SCENARIO,arg=OUTFILE
 *
 * First boot: no dump is waiting, so the program runs SCENARIO, which faults (or asserts);
 * spoor's fault handler writes the dump into .noinit RAM and resets the core through
 * AIRCR.SYSRESETREQ. QEMU's system reset keeps RAM (the .noinit section is in no ELF program
 * header, so -kernel does not re-load it). Second boot: a dump is waiting; the program writes it
 * to OUTFILE on the host through semihosting (SYS_OPEN/SYS_WRITE/SYS_CLOSE), marks it read and
 * exits with status 0.
 *
 * Scenarios (every one reached through a few named, noinline functions):
 *   badptr    a SysTick interrupt handler calls through a bad function pointer (the address of
 *             a data object: even, so the Thumb bit is clear)
 *   busfault  a load from an address no device answers (precise BusFault, BFAR)
 *   div0      an unsigned division by zero with CCR.DIV_0_TRP set (not on Armv6-M)
 *   undef     a permanently undefined instruction (UDF)
 *   overflow  recursion with a variable-length array until the main stack runs out; the main
 *             stack is at the bottom of RAM, guarded by MSPLIM (M33) or an MPU region (M3/M4F)
 *   nested    a low-priority interrupt pends a higher-priority one whose handler faults
 *   psp       a task started on its own stack (PSP, thread mode, like an RTOS task) faults
 *   assert    SPOOR_CRASH_ASSERT fails
 * On the Cortex-M4F every scenario has live floating-point registers at the fault, so the
 * exception frames are the extended (FP) ones. On Armv6-M every fault is a HardFault.
 */
#include <stdint.h>

#include "semihost.h"
#include "spoor/crash.h"

#define NOINLINE __attribute__((noinline))
#define REG32(address) (*(volatile uint32_t *)(address))

#define SCB_ICSR 0xE000ED04u
#define SCB_CCR 0xE000ED14u
#define SCB_SHPR3 0xE000ED20u
#define SCB_SHCSR 0xE000ED24u
#define SYST_CSR 0xE000E010u
#define SYST_RVR 0xE000E014u
#define SYST_CVR 0xE000E018u
#define NVIC_ISER0 0xE000E100u
#define NVIC_ISPR0 0xE000E200u
#define NVIC_IPR0 0xE000E400u
#define MPU_CTRL 0xE000ED94u
#define MPU_RNR 0xE000ED98u
#define MPU_RBAR 0xE000ED9Cu
#define MPU_RASR 0xE000EDA0u

#define ICSR_PENDSTSET (1u << 26)
#define CCR_DIV_0_TRP (1u << 4)
#define SHCSR_MEMFAULTENA (1u << 16)
#define SHCSR_BUSFAULTENA (1u << 17)
#define SHCSR_USGFAULTENA (1u << 18)
#define SHCSR_SECUREFAULTENA (1u << 19)
#define SYST_CSR_ENABLE (1u << 0)
#define SYST_CSR_TICKINT (1u << 1)
#define SYST_CSR_CLKSOURCE (1u << 2)

/* Addresses that no device decodes on any of the four QEMU machines (0x60000000-0xdfffffff
 * is empty on mps2-an385/386/505 and on the microbit): loads from them end in a bus error. */
#define UNMAPPED_ADDRESS 0x60001230u
#define UNMAPPED_TASK_ADDRESS 0x60002340u
/* The MPU guard at the bottom of the main stack (Armv7-M): 2^8 = 256 bytes. */
#define STACK_GUARD_SIZE_LOG2 8u

#if defined(__ARM_ARCH_6M__)
#define HAS_FAULT_HANDLERS 0 /* Armv6-M: HardFault only, no CCR.DIV_0_TRP, no SHCSR enables */
#else
#define HAS_FAULT_HANDLERS 1
#endif

/* Linker script symbols (examples/ld/sections.ld). */
extern uint8_t __ram_start[];
extern uint8_t __ram_end[];
extern uint8_t __flash_start[];
extern uint8_t __flash_end[];
extern uint8_t __stack_bottom[];

/* ---- crash capture setup ------------------------------------------------------------------ */

/* The dump buffer survives the reset: .noinit is neither loaded nor zeroed. */
#if defined(__ARM_ARCH_6M__)
#define DUMP_BUFFER_SIZE 3072u /* the microbit has 16 KiB of RAM */
#define DUMP_STACK_WINDOW 1024u
#else
#define DUMP_BUFFER_SIZE 8192u
#define DUMP_STACK_WINDOW 2048u
#endif
__attribute__((section(".noinit"), aligned(8))) static uint8_t dump_buffer[DUMP_BUFFER_SIZE];

static spoor_range ram_ranges[1];
static spoor_range flash_ranges[1];

static void crash_setup(void)
{
    ram_ranges[0].start = (uint32_t)(uintptr_t)__ram_start;
    ram_ranges[0].end = (uint32_t)(uintptr_t)__ram_end;
    flash_ranges[0].start = (uint32_t)(uintptr_t)__flash_start;
    flash_ranges[0].end = (uint32_t)(uintptr_t)__flash_end;
    const spoor_crash_config config = {
        .buffer = dump_buffer,
        .buffer_size = sizeof dump_buffer,
        .stack_window = DUMP_STACK_WINDOW,
        .ram = ram_ranges,
        .ram_count = 1u,
        .flash = flash_ranges,
        .flash_count = 1u,
        .after_capture = 0, /* reset through AIRCR.SYSRESETREQ */
    };
    if (!spoor_crash_init(&config)) {
        semihost_write_string("spoor_crash_init failed\n");
        semihost_exit(3);
    }
#if HAS_FAULT_HANDLERS
    uint32_t enable = SHCSR_MEMFAULTENA | SHCSR_BUSFAULTENA | SHCSR_USGFAULTENA;
#if defined(__ARM_ARCH_8M_MAIN__)
    enable |= SHCSR_SECUREFAULTENA;
#endif
    REG32(SCB_SHCSR) |= enable;
    REG32(SCB_CCR) |= CCR_DIV_0_TRP;
#endif
    __asm__ volatile("dsb\n\tisb" ::: "memory");
}

/* ---- handing the dump over ---------------------------------------------------------------- */

static bool write_to_host(void *ctx, const uint8_t *bytes, uint32_t len)
{
    return semihost_write(*(const int *)ctx, bytes, len) == 0u;
}

static int save_dump(const char *path)
{
    uint32_t size = 0;
    (void)spoor_crash_data(&size);
    if (path == 0) {
        semihost_write_string("a crash dump is waiting; give OUTFILE to save it\n");
        return 1;
    }
    int handle = semihost_open(path, SEMIHOST_OPEN_WRITE_BINARY);
    if (handle < 0) {
        semihost_write_string("cannot open the output file\n");
        return 1;
    }
    bool written = spoor_crash_stream(write_to_host, &handle, 512u);
    if (semihost_close(handle) != 0 || !written) {
        semihost_write_string("writing the crash dump failed\n");
        return 1;
    }
    spoor_crash_take();
    semihost_write_string("crash dump saved: ");
    semihost_write_decimal(size);
    semihost_write_string(" bytes to ");
    semihost_write_string(path);
    semihost_write_string("\n");
    return 0;
}

/* ---- shared helpers ----------------------------------------------------------------------- */

volatile uint32_t crash_sink;

#if defined(__ARM_FP)
/* Floating-point work that is live across the fault point: the context has FP state
 * (CONTROL.FPCA), so every exception frame stacked from here on is the extended one. */
volatile float fp_input = 1.5f;
volatile float fp_output;
#define FP_LIVE_BEGIN float fp_live = fp_input * 2.25f
#define FP_LIVE_END fp_output = fp_live + fp_input
#else
#define FP_LIVE_BEGIN
#define FP_LIVE_END
#endif

static void barrier(void)
{
    __asm__ volatile("dsb\n\tisb" ::: "memory");
}

/* ---- badptr: a bad function pointer called from the SysTick interrupt --------------------- */

typedef void (*tick_callback)(uint32_t tick);

/* The callback table a timer driver would keep; its only entry got corrupted. */
volatile tick_callback tick_callbacks[1];
static volatile uint32_t tick_count;

NOINLINE void dispatch_tick_callback(uint32_t tick)
{
    FP_LIVE_BEGIN;
    tick_callback callback = tick_callbacks[0];
    callback(tick); /* BLX to an even address: INVSTATE (v7-M/v8-M), HardFault (v6-M) */
    FP_LIVE_END;
}

NOINLINE void timer_tick(void)
{
    tick_count = tick_count + 1u;
    dispatch_tick_callback(tick_count);
    crash_sink = tick_count;
}

void SysTick_Handler(void)
{
    timer_tick();
}

/* Unmasks interrupts and sleeps until the timer interrupt has run once. The tick is already
 * pending, so it is taken right after the CPSIE: at the same instruction in every run. */
NOINLINE void wait_for_tick(void)
{
    __asm__ volatile("cpsie i\n\tisb" ::: "memory");
    while (tick_count == 0u) {
        __asm__ volatile("wfi" ::: "memory");
    }
}

/* Starts the timer with interrupts masked and waits until it has fired (the SysTick exception
 * is pending); wait_for_tick() then takes it. SysTick runs below the configurable faults
 * (priority 0), so they preempt it. */
NOINLINE void arm_systick(void)
{
    REG32(SCB_SHPR3) = (REG32(SCB_SHPR3) & 0x00FFFFFFu) | (0x80u << 24);
    __asm__ volatile("cpsid i" ::: "memory");
    REG32(SYST_CVR) = 0u;
    REG32(SYST_RVR) = 2000u;
    REG32(SYST_CSR) = SYST_CSR_CLKSOURCE | SYST_CSR_TICKINT | SYST_CSR_ENABLE;
    while ((REG32(SCB_ICSR) & ICSR_PENDSTSET) == 0u) {
    }
}

NOINLINE void scenario_badptr(void)
{
    FP_LIVE_BEGIN;
    /* The callback slot holds the address of a data object instead of a function: an even
     * address in executable RAM, so the BLX clears EPSR.T and the next instruction raises
     * INVSTATE (a HardFault on Armv6-M). (An even address in a never-execute region such as
     * 0xbf00de4c gives IACCVIOL under QEMU instead: it checks the fetch first.) */
    tick_callbacks[0] = (tick_callback)(uintptr_t)&tick_count;
    arm_systick();
    wait_for_tick();
    FP_LIVE_END;
}

/* ---- busfault: a load from an address nothing decodes ------------------------------------- */

NOINLINE uint32_t read_sensor_register(const volatile uint32_t *reg)
{
    FP_LIVE_BEGIN;
    uint32_t value = *reg; /* precise BusFault, BFAR = reg */
    FP_LIVE_END;
    return value;
}

NOINLINE uint32_t poll_sensor(uint32_t channel)
{
    uint32_t value = read_sensor_register((const volatile uint32_t *)UNMAPPED_ADDRESS + channel);
    return value + 1u;
}

NOINLINE void scenario_busfault(void)
{
    crash_sink = poll_sensor(0u);
}

/* ---- div0: udiv by zero with CCR.DIV_0_TRP ------------------------------------------------ */

static volatile uint32_t sample_total = 1000u;
static volatile uint32_t sample_count = 0u;

NOINLINE uint32_t average(uint32_t total, uint32_t count)
{
    FP_LIVE_BEGIN;
    uint32_t result = total / count; /* UsageFault DIVBYZERO */
    FP_LIVE_END;
    return result;
}

NOINLINE uint32_t report_average(void)
{
    return average(sample_total, sample_count) + 1u;
}

NOINLINE void scenario_div0(void)
{
    crash_sink = report_average();
}

/* ---- undef: a permanently undefined instruction ------------------------------------------- */

NOINLINE void execute_opcode(uint32_t opcode)
{
    FP_LIVE_BEGIN;
    crash_sink = opcode;
    __asm__ volatile("udf #0x42" ::: "memory"); /* UsageFault UNDEFINSTR */
    FP_LIVE_END;
}

NOINLINE void interpret(uint32_t program)
{
    execute_opcode(program ^ 0x5Au);
    crash_sink = program;
}

NOINLINE void scenario_undef(void)
{
    interpret(7u);
}

/* ---- overflow: unbounded recursion with a variable-length array --------------------------- */

static volatile uint32_t overflow_width = 40u;
static volatile uint32_t overflow_depth_limit = 0xFFFFFFFFu; /* never reached */

NOINLINE uint32_t stack_eater(uint32_t depth)
{
    if (depth == overflow_depth_limit) {
        return 0u;
    }
    volatile uint8_t scratch[overflow_width + (depth & 3u)]; /* a VLA: r7 frame pointer */
    for (uint32_t i = 0; i < sizeof scratch; i++) {
        scratch[i] = (uint8_t)(depth + i);
    }
    uint32_t below = stack_eater(depth + 1u);
    return below + scratch[depth % sizeof scratch];
}

#if !defined(__ARM_ARCH_8M_MAIN__) && !defined(__ARM_ARCH_6M__)
/* Armv7-M has no stack limit register: an MPU region with no access at the bottom of the main
 * stack catches the overflow (MemManage). The default memory map stays on elsewhere. */
static void guard_main_stack(void)
{
    REG32(MPU_RNR) = 0u;
    REG32(MPU_RBAR) = (uint32_t)(uintptr_t)__stack_bottom;
    /* XN, AP = no access, SIZE = log2(guard) - 1, ENABLE */
    REG32(MPU_RASR) = (1u << 28) | (0u << 24) | ((STACK_GUARD_SIZE_LOG2 - 1u) << 1) | 1u;
    REG32(MPU_CTRL) = (1u << 2) | 1u; /* PRIVDEFENA, ENABLE */
    barrier();
}
#else
static void guard_main_stack(void)
{
    /* Armv8-M: the startup code set MSPLIM to the bottom of the main stack. */
}
#endif

NOINLINE void scenario_overflow(void)
{
    FP_LIVE_BEGIN;
    guard_main_stack();
    crash_sink = stack_eater(0u);
    FP_LIVE_END;
}

/* ---- nested: a fault in a high-priority interrupt that preempted a low-priority one -------- */

#define LOW_IRQ 0u
#define HIGH_IRQ 1u

/* Pends an interrupt with interrupts masked, then unmasks them: the interrupt is taken right
 * after the CPSIE, at the same instruction in every run (with or without a debugger). */
static void pend_irq(uint32_t irq)
{
    __asm__ volatile("cpsid i" ::: "memory");
    REG32(NVIC_ISER0) = 1u << irq;
    REG32(NVIC_ISPR0) = 1u << irq;
    barrier();
    __asm__ volatile("cpsie i\n\tisb" ::: "memory");
}

NOINLINE void decode_packet(uint32_t word)
{
    FP_LIVE_BEGIN;
    crash_sink = word;
    __asm__ volatile("udf #0x17" ::: "memory"); /* UsageFault UNDEFINSTR in IRQ 1 */
    FP_LIVE_END;
}

void IRQ1_Handler(void)
{
    decode_packet(0x1234u);
}

NOINLINE void low_priority_work(uint32_t n)
{
    FP_LIVE_BEGIN;
    crash_sink = n;
    pend_irq(HIGH_IRQ); /* taken at once: it preempts this handler */
    crash_sink = n + 1u;
    FP_LIVE_END;
}

void IRQ0_Handler(void)
{
    low_priority_work(5u);
}

NOINLINE void scenario_nested(void)
{
    FP_LIVE_BEGIN;
    /* IRQ 1 (priority 0x40) preempts IRQ 0 (priority 0x80); the faults (priority 0) both. */
    REG32(NVIC_IPR0) = 0x80u | (0x40u << 8);
    pend_irq(LOW_IRQ);
    crash_sink = 1u;
    FP_LIVE_END;
}

/* ---- psp: a task on its own stack (thread mode, PSP) faults ------------------------------- */

__attribute__((aligned(8), used)) uint32_t task_stack[256];

NOINLINE uint32_t task_read_input(const volatile uint32_t *port)
{
    FP_LIVE_BEGIN;
    uint32_t value = *port; /* precise BusFault on the task's stack */
    FP_LIVE_END;
    return value;
}

NOINLINE uint32_t task_step(uint32_t n)
{
    return task_read_input((const volatile uint32_t *)UNMAPPED_TASK_ADDRESS) + n;
}

/* The task's entry point: started by exception return with LR = 0xFFFFFFFF in its frame, as
 * an RTOS starts a task that never returns. */
NOINLINE void task_entry(void)
{
    FP_LIVE_BEGIN;
    crash_sink = task_step(3u);
    FP_LIVE_END;
    semihost_exit(4);
}

/* SVC 0 starts task_entry on task_stack: a basic frame (r0-r3, r12, lr, pc, xpsr) at the top
 * of the task stack, PSP pointing at it, and an exception return to thread mode on PSP. */
__attribute__((naked)) void SVC_Handler(void)
{
    __asm__ volatile("ldr r0, =task_stack + 1024 - 32\n\t"
                     "movs r1, #0\n\t"
                     "str r1, [r0, #0]\n\t"
                     "str r1, [r0, #4]\n\t"
                     "str r1, [r0, #8]\n\t"
                     "str r1, [r0, #12]\n\t"
                     "str r1, [r0, #16]\n\t"
                     "ldr r1, =0xFFFFFFFF\n\t"
                     "str r1, [r0, #20]\n\t" /* lr: no caller */
                     "ldr r1, =task_entry\n\t"
                     "str r1, [r0, #24]\n\t" /* pc */
                     "ldr r1, =0x01000000\n\t"
                     "str r1, [r0, #28]\n\t" /* xpsr: Thumb */
                     "msr psp, r0\n\t"
                     "ldr r0, =0xFFFFFFFD\n\t" /* thread mode, PSP, basic frame */
                     "bx r0\n\t"
                     ".ltorg\n\t");
}

NOINLINE void scenario_psp(void)
{
    __asm__ volatile("svc 0" ::: "memory");
}

/* ---- assert: SPOOR_CRASH_ASSERT fails ----------------------------------------------------- */

static volatile uint32_t configured_channels = 9u;

NOINLINE uint32_t check_channel_count(uint32_t count)
{
    FP_LIVE_BEGIN;
    SPOOR_CRASH_ASSERT(count <= 8u); /* the line the dump's reason record names */
    FP_LIVE_END;
    return count * 2u;
}

NOINLINE void configure_channels(void)
{
    crash_sink = check_channel_count(configured_channels);
}

NOINLINE void scenario_assert(void)
{
    configure_channels();
}

/* ---- backtrace, backtrace_irq: the on-target EHABI unwinder, no fault --------------------- */

static uint32_t backtrace_pcs[16];

/* Prints "backtrace: PC PC ..." from spoor_backtrace(): pcs[0] returns into this function. */
NOINLINE void print_backtrace(void)
{
    uint32_t n = spoor_backtrace(backtrace_pcs, sizeof backtrace_pcs / sizeof backtrace_pcs[0]);
    semihost_write_string("backtrace:");
    for (uint32_t i = 0; i < n; i++) {
        semihost_write_string(" ");
        semihost_write_hex(backtrace_pcs[i]);
    }
    semihost_write_string("\n");
}

NOINLINE void bt_inner(uint32_t depth)
{
    print_backtrace();
    crash_sink = depth;
}

NOINLINE void bt_middle(uint32_t depth)
{
    bt_inner(depth + 1u);
    crash_sink = crash_sink + depth;
}

NOINLINE void bt_outer(void)
{
    bt_middle(1u);
    crash_sink = crash_sink + 1u;
}

NOINLINE void scenario_backtrace(void)
{
    bt_outer();
    semihost_exit(0);
}

static void tick_backtrace(uint32_t tick)
{
    crash_sink = tick;
    bt_outer();
}

NOINLINE void scenario_backtrace_irq(void)
{
    tick_callbacks[0] = tick_backtrace;
    arm_systick();
    wait_for_tick();
    REG32(SYST_CSR) = 0u;
    semihost_exit(0);
}

/* ---- command line and main ---------------------------------------------------------------- */

struct scenario {
    const char *name;
    void (*run)(void);
};

/* clang-format off */
static const struct scenario scenarios[] = {
    {"badptr", scenario_badptr},
    {"busfault", scenario_busfault},
#if HAS_FAULT_HANDLERS
    {"div0", scenario_div0},
#endif
    {"undef", scenario_undef},
    {"overflow", scenario_overflow},
#if HAS_FAULT_HANDLERS
    {"nested", scenario_nested},
#endif
    {"psp", scenario_psp},
    {"assert", scenario_assert},
    {"backtrace", scenario_backtrace},
    {"backtrace_irq", scenario_backtrace_irq},
};
/* clang-format on */

static bool same_text(const char *a, const char *b)
{
    while (*a != '\0' && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

/* Splits the command line at spaces into at most max words. */
static uint32_t split_words(char *line, char **words, uint32_t max)
{
    uint32_t count = 0;
    while (*line != '\0' && count < max) {
        while (*line == ' ') {
            *line++ = '\0';
        }
        if (*line == '\0') {
            break;
        }
        words[count++] = line;
        while (*line != '\0' && *line != ' ') {
            line++;
        }
    }
    return count;
}

NOINLINE int run_scenario(const char *name)
{
    for (uint32_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
        if (same_text(name, scenarios[i].name)) {
            scenarios[i].run();
            semihost_write_string("the scenario returned without crashing\n");
            return 4;
        }
    }
    semihost_write_string("unknown scenario: ");
    semihost_write_string(name);
    semihost_write_string("\n");
    return 2;
}

static void usage(void)
{
    semihost_write_string("usage: crash SCENARIO OUTFILE   (scenarios:");
    for (uint32_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
        semihost_write_string(" ");
        semihost_write_string(scenarios[i].name);
    }
    semihost_write_string(")\n");
}

int main(void)
{
    static char cmdline[256];
    char *words[3] = {0, 0, 0};
    crash_setup();
    uint32_t count = 0;
    if (semihost_get_cmdline(cmdline, sizeof cmdline)) {
        count = split_words(cmdline, words, 3u);
    }
    if (spoor_crash_valid()) {
        return save_dump(count >= 3u ? words[2] : 0);
    }
    if (count < 3u) {
        usage();
        return 2;
    }
    semihost_write_string("crash on " SPOOR_EXAMPLE_CPU ": ");
    semihost_write_string(words[1]);
    semihost_write_string("\n");
    return run_scenario(words[1]);
}
