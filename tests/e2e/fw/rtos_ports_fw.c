/* Test firmware for spoor's saved-context layouts of FreeRTOS and Zephyr
 * (tests/e2e/test_crash_threads_freertos_zephyr.py). Three tasks, each a few calls deep when it
 * yields, really switch in QEMU through a PendSV handler written here that saves and restores
 * exactly what the RTOS's port does, into the RTOS's own TCB types (freertos_types.h,
 * zephyr_types.h) and globals:
 *   -DSHAPE_FREERTOS: FreeRTOS-Kernel portable/GCC xPortPendSVHandler of ARM_CM0 (ARMv6-M),
 *     ARM_CM3 (ARMv7-M soft float), ARM_CM4F (ARMv7E-M with an FPU), PendSV_Handler of
 *     ARM_CM33_NTZ/non_secure/portasm.c (ARMv8-M mainline): the context below the hardware frame
 *     on the task's stack, its address in pxTopOfStack; the tasks on pxReadyTasksLists (with
 *     -DFREERTOS_TRUSTZONE on the M33, the ARM_CM33 TrustZone port's words: see PendSV_Handler);
 *   -DSHAPE_ZEPHYR: arch/arm/core/cortex_m/swap_helper.S z_arm_pendsv: r4-r11 and PSP in the
 *     thread's callee_saved, with an FPU (CONFIG_FPU_SHARING, CONFIG_ARM_STORE_EXC_RETURN)
 *     EXC_RETURN's low byte in arch.mode_exc_return and s16-s31 in arch.preempt_float; the
 *     threads on _kernel.threads.
 * On a core with an FPU the "filter" task computes in floating point across its yield, so its
 * context switch has the extended frame (and s16-s31). Cooperative: a task yields by pending
 * PendSV; after ROUNDS rounds the running task calls fw_checkpoint() (the test's breakpoint)
 * and spins there, the others parked. Self-contained: no library, no startup files. */
#include <stddef.h>
#include <stdint.h>

#define REG32(addr) (*(volatile uint32_t *)(addr))
#define SCB_ICSR 0xE000ED04u
#define SCB_CPACR 0xE000ED88u
#define PENDSVSET (1u << 28)
#define NOINLINE __attribute__((noinline))
#define STACK_WORDS 256u
#define ROUNDS 3u

#if defined(__ARM_ARCH_6M__)
#define ARMV6M 1
#endif
#if defined(__ARM_FP) && !defined(ARMV6M)
#define HAS_FPU 1
#define CONFIG_FPU_SHARING 1
#define CONFIG_ARM_STORE_EXC_RETURN 1
#endif
#if defined(__ARM_ARCH_8M_MAIN__)
#define ARMV8M 1
#endif

#if defined(SHAPE_FREERTOS)
#include "freertos_types.h"
#elif defined(SHAPE_ZEPHYR)
#include "zephyr_types.h"
#else
#error build with -DSHAPE_FREERTOS or -DSHAPE_ZEPHYR
#endif

extern uint32_t __stack_top[];
volatile uint32_t sink;
#if defined(HAS_FPU)
volatile float fsink = 1.25f;
#endif
static volatile uint32_t rounds_done[3];

void Reset_Handler(void);
void Fault_Handler(void);
void PendSV_Handler(void);
/* -funwind-tables references the EHABI personality routines; nothing here throws. */
void __aeabi_unwind_cpp_pr0(void);
void __aeabi_unwind_cpp_pr1(void);
void __aeabi_unwind_cpp_pr0(void) {}
void __aeabi_unwind_cpp_pr1(void) {}

__attribute__((section(".vectors"), used)) void (*const vectors[16])(void) = {
    [0] = (void (*)(void))(uintptr_t)__stack_top,
    [1] = Reset_Handler,
    [2] = Fault_Handler,
    [3] = Fault_Handler,
    [4] = Fault_Handler,
    [5] = Fault_Handler,
    [6] = Fault_Handler,
    [7] = Fault_Handler,
    [14] = PendSV_Handler,
};

void Fault_Handler(void)
{
    for (;;)
        sink++;
}

/* Every task has run ROUNDS times: the test's breakpoint. */
NOINLINE void fw_checkpoint(void)
{
    sink = rounds_done[0] + rounds_done[1] + rounds_done[2];
}

NOINLINE void fw_yield(void)
{
    REG32(SCB_ICSR) = PENDSVSET;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
}

/* sensor: three calls deep when it yields */
NOINLINE static uint32_t sensor_sample(uint32_t n)
{
    sink = n;
    fw_yield();
    return sink + n;
}
NOINLINE static uint32_t sensor_average(uint32_t n)
{
    uint32_t v = sensor_sample(n * 3u);
    sink = v;
    return v + 1u;
}
NOINLINE static void sensor_main(void)
{
    for (uint32_t n = 0;; n++) {
        sink = sensor_average(n);
        rounds_done[0] = n + 1u;
    }
}

/* filter: floating point live across its yield on a core with an FPU */
#if defined(HAS_FPU)
NOINLINE static float filter_step(float x)
{
    float y = x * 1.5f + fsink;
    fw_yield();
    return y * fsink + x;
}
#else
NOINLINE static uint32_t filter_step(uint32_t x)
{
    uint32_t y = x * 3u + sink;
    fw_yield();
    return y + x;
}
#endif
NOINLINE static void filter_main(void)
{
    for (uint32_t n = 0;; n++) {
#if defined(HAS_FPU)
        fsink = filter_step((float)n);
#else
        sink = filter_step(n);
#endif
        rounds_done[1] = n + 1u;
    }
}

/* logger: two calls deep; the one that reaches the checkpoint and stays running */
NOINLINE static void logger_flush(uint32_t n)
{
    sink = n;
    if (rounds_done[0] >= ROUNDS && rounds_done[1] >= ROUNDS && rounds_done[2] >= ROUNDS) {
        fw_checkpoint();
        for (;;)
            sink++;
    }
    fw_yield();
}
NOINLINE static void logger_main(void)
{
    for (uint32_t n = 0;; n++) {
        logger_flush(n);
        rounds_done[2] = n + 1u;
    }
}

static uint32_t sensor_stack[STACK_WORDS] __attribute__((aligned(8)));
static uint32_t filter_stack[STACK_WORDS] __attribute__((aligned(8)));
static uint32_t logger_stack[STACK_WORDS] __attribute__((aligned(8)));
static uint32_t boot_stack[64] __attribute__((aligned(8)));

/* The hardware frame an exception taken in a task would stack, at the top of its stack: xPSR
 * (Thumb), PC at the entry, LR 0xFFFFFFFF (the end of the call chain for a debugger; the task
 * functions never return), r12, r3-r0. Returns its address. */
static uint32_t *initial_frame(uint32_t *stack, void (*entry)(void))
{
    uint32_t *sp = stack + STACK_WORDS;
    *--sp = 0x01000000u;
    *--sp = (uint32_t)entry;
    *--sp = 0xFFFFFFFFu;
    for (int i = 0; i < 5; i++)
        *--sp = 0;
    return sp;
}

/* main leaves the MSP for a stack of its own on PSP, as a task would be, so that the first
 * PendSV returns with the EXC_RETURN of a task (thread mode, PSP); its context is saved into
 * a TCB no list has and never resumed. */
static void run_on_psp(void)
{
    __asm__ volatile("msr psp, %0\n\t"
                     "movs r0, #2\n\t"
                     "msr control, r0\n\t"
                     "isb" ::"r"(boot_stack + 64)
                     : "r0", "memory");
}

#if defined(SHAPE_FREERTOS)
#define configMAX_PRIORITIES 4
List_t pxReadyTasksLists[configMAX_PRIORITIES];
TCB_t sensor_tcb = {.uxPriority = 3, .pcTaskName = "sensor"};
TCB_t filter_tcb = {.uxPriority = 2, .pcTaskName = "filter"};
TCB_t logger_tcb = {.uxPriority = 1, .pcTaskName = "logger"};
static TCB_t boot_tcb = {.pcTaskName = "boot"};
TCB_t *volatile pxCurrentTCB = &boot_tcb;
static TCB_t *const tasks[] = {&sensor_tcb, &filter_tcb, &logger_tcb};

/* list.h vListInitialise / vListInsertEnd */
static void list_initialise(List_t *l)
{
    ListItem_t *end = (ListItem_t *)&l->xListEnd;
    l->pxIndex = end;
    l->xListEnd.xItemValue = 0xFFFFFFFFu;
    l->xListEnd.pxNext = end;
    l->xListEnd.pxPrevious = end;
    l->uxNumberOfItems = 0;
}
static void list_insert_end(List_t *l, ListItem_t *item)
{
    ListItem_t *end = (ListItem_t *)&l->xListEnd;
    item->pxNext = end;
    item->pxPrevious = end->pxPrevious;
    end->pxPrevious->pxNext = item;
    end->pxPrevious = item;
    item->pxContainer = l;
    l->uxNumberOfItems++;
}

#if defined(HAS_FPU) && !defined(ARMV8M)
/* the ARM_CM4F port's own function (ARM_CM3 has none): spoor tells the ports apart by it */
NOINLINE void vPortEnableVFP(void)
{
    REG32(SCB_CPACR) |= 0xFu << 20; /* CP10, CP11 full access */
    __asm__ volatile("dsb\n\tisb" ::: "memory");
}
#endif

/* What the port's pxPortInitialiseStack leaves below the initial frame, as its PendSV
 * restores it. */
static void prepare(TCB_t *t, uint32_t *stack, void (*entry)(void))
{
    uint32_t *sp = initial_frame(stack, entry);
#if defined(ARMV8M)
    for (int i = 0; i < 8; i++) /* r11-r4 */
        *--sp = 0;
    *--sp = 0xFFFFFFFDu;     /* EXC_RETURN */
    *--sp = (uint32_t)stack; /* PSPLIM */
#if defined(FREERTOS_TRUSTZONE)
    *--sp = 0; /* xSecureContext: none */
#endif
#elif defined(HAS_FPU)
    *--sp = 0xFFFFFFFDu; /* EXC_RETURN above r4-r11 */
    for (int i = 0; i < 8; i++)
        *--sp = 0;
#else
    for (int i = 0; i < 8; i++)
        *--sp = 0;
#endif
    t->pxTopOfStack = sp;
    t->pxStack = stack;
    t->pxEndOfStack = stack + STACK_WORDS - 1;
    t->xStateListItem.pvOwner = t;
    list_insert_end(&pxReadyTasksLists[t->uxPriority], &t->xStateListItem);
}

/* tasks.c vTaskSwitchContext, round robin over the three tasks */
void vTaskSwitchContext(void)
{
    static unsigned next;
    pxCurrentTCB = tasks[next];
    next = next == 2u ? 0u : next + 1u;
}

#if defined(ARMV6M)
/* ARM_CM0 port.c xPortPendSVHandler */
__attribute__((naked)) void PendSV_Handler(void)
{
    __asm__ volatile(".syntax unified\n\t"
                     "mrs r0, psp\n\t"
                     "ldr r3, =pxCurrentTCB\n\t"
                     "ldr r2, [r3]\n\t"
                     "subs r0, r0, #32\n\t"
                     "str r0, [r2]\n\t"
                     "stmia r0!, {r4-r7}\n\t"
                     "mov r4, r8\n\t"
                     "mov r5, r9\n\t"
                     "mov r6, r10\n\t"
                     "mov r7, r11\n\t"
                     "stmia r0!, {r4-r7}\n\t"
                     "push {r3, r14}\n\t"
                     "cpsid i\n\t"
                     "bl vTaskSwitchContext\n\t"
                     "cpsie i\n\t"
                     "pop {r2, r3}\n\t"
                     "ldr r1, [r2]\n\t"
                     "ldr r0, [r1]\n\t"
                     "adds r0, r0, #16\n\t"
                     "ldmia r0!, {r4-r7}\n\t"
                     "mov r8, r4\n\t"
                     "mov r9, r5\n\t"
                     "mov r10, r6\n\t"
                     "mov r11, r7\n\t"
                     "msr psp, r0\n\t"
                     "subs r0, r0, #32\n\t"
                     "ldmia r0!, {r4-r7}\n\t"
                     "bx r3\n\t"
                     ".ltorg");
}
#elif defined(ARMV8M)
/* ARM_CM33_NTZ non_secure/portasm.c PendSV_Handler, configENABLE_MPU 0. With
 * -DFREERTOS_TRUSTZONE the words ARM_CM33/non_secure/portasm.c's save_ns_context stores
 * (xSecureContext first) although this firmware runs in the secure state, where the real port
 * would have taken its secure-stack path (EXC_RETURN bit 6 set): spoor must say so. */
#if defined(FREERTOS_TRUSTZONE)
volatile uint32_t xSecureContext; /* port.c, configENABLE_TRUSTZONE */
#endif
__attribute__((naked)) void PendSV_Handler(void)
{
    __asm__ volatile("mrs r0, psp\n\t"
#if defined(HAS_FPU)
                     "tst lr, #0x10\n\t"
                     "it eq\n\t"
                     "vstmdbeq r0!, {s16-s31}\n\t"
#endif
                     "mrs r2, psplim\n\t"
                     "mov r3, lr\n\t"
#if defined(FREERTOS_TRUSTZONE)
                     "ldr r1, =xSecureContext\n\t"
                     "ldr r1, [r1]\n\t"
                     "stmdb r0!, {r1-r11}\n\t"
#else
                     "stmdb r0!, {r2-r11}\n\t"
#endif
                     "ldr r2, =pxCurrentTCB\n\t"
                     "ldr r1, [r2]\n\t"
                     "str r0, [r1]\n\t"
                     "bl vTaskSwitchContext\n\t"
                     "ldr r2, =pxCurrentTCB\n\t"
                     "ldr r1, [r2]\n\t"
                     "ldr r0, [r1]\n\t"
#if defined(FREERTOS_TRUSTZONE)
                     "ldmia r0!, {r1-r11}\n\t"
#else
                     "ldmia r0!, {r2-r11}\n\t"
#endif
#if defined(HAS_FPU)
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
#if defined(HAS_FPU)
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
#if defined(HAS_FPU)
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

static void start(void)
{
    for (unsigned i = 0; i < configMAX_PRIORITIES; i++)
        list_initialise(&pxReadyTasksLists[i]);
    prepare(&sensor_tcb, sensor_stack, sensor_main);
    prepare(&filter_tcb, filter_stack, filter_main);
    prepare(&logger_tcb, logger_stack, logger_main);
#if defined(HAS_FPU) && !defined(ARMV8M)
    vPortEnableVFP();
#elif defined(HAS_FPU)
    REG32(SCB_CPACR) |= 0xFu << 20;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
}

#elif defined(SHAPE_ZEPHYR)
struct k_thread sensor_thread = {.base = {.prio = 3}, .entry = {.pEntry = 0}, .name = "sensor"};
struct k_thread filter_thread = {.base = {.prio = 2}, .name = "filter"};
struct k_thread logger_thread = {.base = {.prio = 1}, .name = "logger"};
static struct k_thread boot_thread = {.name = "boot"};
struct z_kernel _kernel = {.cpus = {{.current = &boot_thread}}, .threads = &sensor_thread};
static struct k_thread *const threads[] = {&sensor_thread, &filter_thread, &logger_thread};

/* the scheduler's choice, round robin: _kernel.cpus[0].current becomes the next thread */
void z_fw_switch(void)
{
    static unsigned next;
    _kernel.cpus[0].current = threads[next];
    next = next == 2u ? 0u : next + 1u;
}

#define OFF_CURRENT offsetof(struct z_kernel, cpus[0].current)
#define OFF_CALLEE offsetof(struct k_thread, callee_saved)
#if defined(CONFIG_ARM_STORE_EXC_RETURN)
#define OFF_EXC_RETURN offsetof(struct k_thread, arch.mode_exc_return)
#define OFF_FLOAT offsetof(struct k_thread, arch.preempt_float)
#endif

#if defined(ARMV6M)
/* z_arm_pendsv, CONFIG_ARMV6_M_ARMV8_M_BASELINE */
__attribute__((naked)) void PendSV_Handler(void)
{
    __asm__ volatile(".syntax unified\n\t"
                     "ldr r1, =_kernel\n\t"
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
                     ".ltorg" ::[cur] "i"(OFF_CURRENT),
                     [callee] "i"(OFF_CALLEE));
}
#else
/* z_arm_pendsv, CONFIG_ARMV7_M_ARMV8_M_MAINLINE (with CONFIG_FPU_SHARING on an FPU) */
__attribute__((naked)) void PendSV_Handler(void)
{
    __asm__ volatile("ldr r1, =_kernel\n\t"
                     "ldr r2, [r1, %[cur]]\n\t"
#if defined(CONFIG_ARM_STORE_EXC_RETURN)
                     "strb lr, [r2, %[exc]]\n\t"
#endif
                     "add r0, r2, %[callee]\n\t"
                     "mrs ip, psp\n\t"
                     "stmia r0, {r4-r11, ip}\n\t"
#if defined(CONFIG_FPU_SHARING)
                     "tst lr, #0x10\n\t"
                     "bne 1f\n\t"
                     "add r0, r2, %[fp]\n\t"
                     "vstmia r0, {s16-s31}\n"
                     "1:\n\t"
#endif
                     "push {r0, lr}\n\t"
                     "bl z_fw_switch\n\t"
                     "pop {r0, lr}\n\t"
                     "ldr r1, =_kernel\n\t"
                     "ldr r2, [r1, %[cur]]\n\t"
#if defined(CONFIG_ARM_STORE_EXC_RETURN)
                     "ldrsb lr, [r2, %[exc]]\n\t"
#endif
#if defined(CONFIG_FPU_SHARING)
                     "tst lr, #0x10\n\t"
                     "bne 2f\n\t"
                     "add r0, r2, %[fp]\n\t"
                     "vldmia r0, {s16-s31}\n"
                     "2:\n\t"
#endif
                     "add r0, r2, %[callee]\n\t"
                     "ldmia r0, {r4-r11, ip}\n\t"
                     "msr psp, ip\n\t"
                     "bx lr\n\t"
                     ".ltorg" ::[cur] "i"(OFF_CURRENT),
                     [callee] "i"(OFF_CALLEE)
#if defined(CONFIG_ARM_STORE_EXC_RETURN)
                         ,
                     [exc] "i"(OFF_EXC_RETURN), [fp] "i"(OFF_FLOAT)
#endif
    );
}
#endif

/* arch_new_thread: the initial frame at psp, no callee-saved registers, a basic frame */
static void prepare(struct k_thread *t, uint32_t *stack, void (*entry)(void))
{
    t->callee_saved.psp = (uint32_t)initial_frame(stack, entry);
    t->entry.pEntry = (k_thread_entry_t)(uintptr_t)entry;
#if defined(CONFIG_ARM_STORE_EXC_RETURN)
    t->arch.mode_exc_return = 0xFD;
#endif
}

static void start(void)
{
    prepare(&sensor_thread, sensor_stack, sensor_main);
    prepare(&filter_thread, filter_stack, filter_main);
    prepare(&logger_thread, logger_stack, logger_main);
    sensor_thread.next_thread = &filter_thread;
    filter_thread.next_thread = &logger_thread;
#if defined(CONFIG_ARM_STORE_EXC_RETURN)
    boot_thread.arch.mode_exc_return = 0xFD;
#endif
#if defined(HAS_FPU)
    REG32(SCB_CPACR) |= 0xFu << 20; /* CP10, CP11 full access */
    __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
}
#endif

void Reset_Handler(void)
{
    start();
    run_on_psp();
    fw_yield();
    for (;;) /* not reached: the boot context is never resumed */
        sink++;
}
