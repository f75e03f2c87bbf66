/*
 * Cortex-M crash capture: the fault handlers, the software capture entry points, and
 * spoor_crash_init(). Everything lives in this one object file so that a firmware calling
 * spoor_crash_init() links the handlers too (they then replace the startup code's weak
 * CMSIS-named handlers).
 *
 * Fault path: a naked entry (Thumb-1 only, so it also runs on ARMv6-M) saves r0-r11, the
 * EXC_RETURN value, MSP and PSP into a static block without touching the stack, switches SP
 * to a reserved stack, and calls spoor_fault_capture(). That C code locates the stacked
 * frame from EXC_RETURN, checks the whole frame lies in configured RAM before reading it,
 * reads the fault status registers, and hands everything to the portable dump writer; then
 * the after_capture hook runs (default: reset through AIRCR.SYSRESETREQ).
 */
#include <string.h>

#include "spoor/cortexm_facts.h"
#include "spoor/crash.h"
#include "spoor/handlers.h"
#include "spoor/no_instrument.h"

#if defined(__ARM_ARCH_6M__)
#define SPOOR_V6M 1
#else
#define SPOOR_V6M 0
#endif
#if defined(__ARM_ARCH_8M_MAIN__)
#define SPOOR_V8M_MAIN 1
#else
#define SPOOR_V8M_MAIN 0
#endif

#define REG32(addr) (*(volatile uint32_t *)(addr))
#define SCB_CCR 0xE000ED14u
#define SCB_SHCSR 0xE000ED24u
#define SCB_AIRCR 0xE000ED0Cu
#define FPU_FPCCR 0xE000EF34u
#define SCB_DCCMVAC 0xE000EF68u
#define CCR_BFHFNMIGN (1u << 8)
#define CCR_DC (1u << 16)
#define CFSR_MSTKERR (1u << 4)
#define CFSR_BSTKERR (1u << 12)
#define CFSR_STKOF (1u << 20)

#define BASIC_FRAME (4u * SPOOR_EXC_FRAME_BASIC_WORDS)
#define EXTENDED_FRAME (4u * (SPOOR_EXC_FRAME_BASIC_WORDS + SPOOR_EXC_FRAME_FP_WORDS))
#define ADDITIONAL_CONTEXT (4u * SPOOR_EXC_FRAME_ADDITIONAL_WORDS)

/* Filled by the naked fault entry: r1-r11, r0, EXC_RETURN, MSP, PSP, and on ARMv8-M MSPLIM. */
enum {
    SAVE_R1 = 0,
    SAVE_R0 = 11,
    SAVE_EXC_RETURN = 12,
    SAVE_MSP = 13,
    SAVE_PSP = 14,
    SAVE_MSPLIM = 15
};
__attribute__((used)) uint32_t spoor_fault_save[16];
/* The top of the reserved handler stack (8-byte aligned), set by spoor_crash_init(). */
__attribute__((used)) uint32_t spoor_fault_stack_top;
/* The MTB register block (0: none), set by spoor_crash_init(), and MTB_MASTER as the fault
 * entry found it before clearing MASTER.EN: the trace ends at the fault (docs/mtb.md). */
__attribute__((used)) uint32_t spoor_fault_mtb;
__attribute__((used)) uint32_t spoor_fault_mtb_master;

static uint64_t builtin_stack[64]; /* 512 bytes */
static volatile uint32_t in_fault;

/* Provided by the linker script around .note.gnu.build-id and .ARM.exidx; weak so that a
 * firmware without them still links (no build-id record, no on-target backtrace). */
extern const uint8_t __build_id_start[] __attribute__((weak));
extern const uint8_t __build_id_end[] __attribute__((weak));
extern const uint8_t __exidx_start[] __attribute__((weak));
extern const uint8_t __exidx_end[] __attribute__((weak));

void spoor_fault_capture(void) __attribute__((used, noreturn));
/* The call recorder (spoor/calls.h) when it is linked in: stopped first on the fault path. */
void spoor_calls_freeze(void) __attribute__((weak));
bool spoor_crash_capture_impl(const spoor_crash_event *event, const uint32_t *block)
    __attribute__((used));
void spoor_crash_fatal_impl(const spoor_crash_event *event, const uint32_t *block)
    __attribute__((used, noreturn));
uint32_t spoor_backtrace_impl(uint32_t *pcs, uint32_t max, const uint32_t *block)
    __attribute__((used));

/* ---- naked entries (Thumb-1 subset: ARMv6-M compatible) ------------------------------- */

#if SPOOR_V8M_MAIN
/* keep MSPLIM (save slot 15), then clear it: the reserved stack may lie below the limit */
#define CLEAR_MSPLIM "mrs r1, msplim\n str r1, [r0]\n movs r1, #0\n msr msplim, r1\n"
#else
#define CLEAR_MSPLIM ""
#endif
#if SPOOR_V6M
#define MASK_FAULTS "cpsid i\n"
#else
#define MASK_FAULTS "cpsid i\n cpsid f\n"
#endif

/* Stops the MTB before the first branch of the handler (sequential code writes no packet; a
 * not-taken conditional branch neither): MASTER.EN = 0, the old MASTER kept for the dump. */
#define FREEZE_MTB                                                                                 \
    "ldr r1, =spoor_fault_mtb\n ldr r1, [r1]\n cmp r1, #0\n beq 2f\n"                              \
    "ldr r2, [r1, #4]\n ldr r3, =spoor_fault_mtb_master\n str r2, [r3]\n"                          \
    "lsl r2, r2, #1\n lsr r2, r2, #1\n str r2, [r1, #4]\n"                                         \
    "2:\n"

/* Saves the state, changes to the reserved stack, never returns. The live r12 is given up
 * (it holds r0 for a moment); r12 is in the stacked frame whenever the frame is readable. */
#define FAULT_ENTRY                                                                                \
    MASK_FAULTS                                                                                    \
    "mov r12, r0\n"                                                                                \
    "ldr r0, =spoor_fault_save\n"                                                                  \
    "stmia r0!, {r1-r7}\n" FREEZE_MTB "mov r1, r8\n mov r2, r9\n mov r3, r10\n mov r4, r11\n"      \
    "stmia r0!, {r1-r4}\n"                                                                         \
    "mov r1, r12\n mov r2, lr\n mrs r3, msp\n mrs r4, psp\n"                                       \
    "stmia r0!, {r1-r4}\n" CLEAR_MSPLIM "ldr r0, =spoor_fault_stack_top\n"                         \
    "ldr r0, [r0]\n"                                                                               \
    "mov sp, r0\n"                                                                                 \
    "bl spoor_fault_capture\n"                                                                     \
    "1: b 1b\n"                                                                                    \
    ".ltorg\n"

#define NAKED_HANDLER(name)                                                                        \
    SPOOR_NO_INSTRUMENT __attribute__((naked, used)) void name(void)                               \
    {                                                                                              \
        __asm volatile(FAULT_ENTRY);                                                               \
    }

NAKED_HANDLER(HardFault_Handler)
#if !SPOOR_V6M
NAKED_HANDLER(MemManage_Handler)
NAKED_HANDLER(BusFault_Handler)
NAKED_HANDLER(UsageFault_Handler)
#endif
#if SPOOR_V8M_MAIN
NAKED_HANDLER(SecureFault_Handler)
#endif

/* Software entries: push the caller's r8-r11, r4-r7, SP at the call and return address as a
 * 10-word block (r8 first), call IMPL(r0, r1, block), restore and return IMPL's r0. */
#define SOFTWARE_ENTRY(block_reg, impl)                                                            \
    "mov r2, sp\n mov r3, lr\n push {r2, r3}\n push {r4-r7}\n"                                     \
    "mov r4, r8\n mov r5, r9\n mov r6, r10\n mov r7, r11\n push {r4-r7}\n"                         \
    "mov " block_reg ", sp\n"                                                                      \
    "bl " impl "\n"                                                                                \
    "add sp, #16\n pop {r4-r7}\n pop {r2, r3}\n bx r3\n"

enum { BLOCK_R8 = 0, BLOCK_R4 = 4, BLOCK_SP = 8, BLOCK_RETURN = 9 };

SPOOR_NO_INSTRUMENT __attribute__((naked)) bool spoor_crash_capture(const spoor_crash_event *event)
{
    (void)event;
    __asm volatile(SOFTWARE_ENTRY("r1", "spoor_crash_capture_impl"));
}

SPOOR_NO_INSTRUMENT __attribute__((naked)) void spoor_crash_fatal(const spoor_crash_event *event)
{
    (void)event;
    __asm volatile(SOFTWARE_ENTRY("r1", "spoor_crash_fatal_impl"));
}

SPOOR_NO_INSTRUMENT __attribute__((naked)) uint32_t spoor_backtrace(uint32_t *pcs, uint32_t max)
{
    (void)pcs;
    (void)max;
    __asm volatile(SOFTWARE_ENTRY("r2", "spoor_backtrace_impl"));
}

/* ---- helpers --------------------------------------------------------------------------- */

SPOOR_NO_INSTRUMENT static uint32_t read_ipsr(void)
{
    uint32_t v;
    __asm volatile("mrs %0, ipsr" : "=r"(v));
    return v & 0x1FFu;
}

SPOOR_NO_INSTRUMENT static uint32_t read_xpsr(void)
{
    uint32_t v;
    __asm volatile("mrs %0, xpsr" : "=r"(v));
    return v;
}

SPOOR_NO_INSTRUMENT static uint32_t read_control(void)
{
    uint32_t v;
    __asm volatile("mrs %0, control" : "=r"(v));
    return v;
}

SPOOR_NO_INSTRUMENT static uint32_t read_msp(void)
{
    uint32_t v;
    __asm volatile("mrs %0, msp" : "=r"(v));
    return v;
}

SPOOR_NO_INSTRUMENT static uint32_t read_psp(void)
{
    uint32_t v;
    __asm volatile("mrs %0, psp" : "=r"(v));
    return v;
}

SPOOR_NO_INSTRUMENT static bool direct_read(void *ctx, uint32_t addr, void *dst, uint32_t len)
{
    (void)ctx;
    const volatile uint8_t *src = (const volatile uint8_t *)(uintptr_t)addr;
    uint8_t *out = dst;
    if (((addr | (uint32_t)(uintptr_t)dst | len) & 3u) == 0) {
        for (uint32_t i = 0; i < len; i += 4)
            *(uint32_t *)(void *)(out + i) = *(const volatile uint32_t *)(src + i);
    } else {
        for (uint32_t i = 0; i < len; i++)
            out[i] = src[i];
    }
    return true;
}

SPOOR_NO_INSTRUMENT static void add_build_id(spoor_capture *c)
{
    const uint8_t *p = __build_id_start, *end = __build_id_end;
    if (!p || !end || end - p < 16)
        return;
    uint32_t namesz, descsz, type;
    memcpy(&namesz, p, 4);
    memcpy(&descsz, p + 4, 4);
    memcpy(&type, p + 8, 4);
    uint32_t desc = 12u + ((namesz + 3u) & ~3u);
    if (type != 3u || namesz != 4u || memcmp(p + 12, "GNU", 4) != 0 || descsz == 0 ||
        descsz > 64u || (uint32_t)(end - p) < desc + descsz)
        return;
    c->build_id = p + desc;
    c->build_id_len = descsz;
}

SPOOR_NO_INSTRUMENT static void add_mtb(spoor_capture *c, const spoor_crash_config *cfg)
{
    if (!cfg->mtb_registers)
        return;
    uint32_t base = cfg->mtb_registers;
    for (uint32_t i = 0; i < 4u; i++)
        c->mtb_regs[i] = REG32(base + 4u * i); /* POSITION, MASTER, FLOW, BASE */
    if (spoor_fault_mtb == base)
        c->mtb_regs[1] = spoor_fault_mtb_master;     /* as before the fault entry froze it */
    REG32(base + 4u) = c->mtb_regs[1] & 0x7FFFFFFFu; /* MASTER.EN = 0: stop tracing */
    c->has_mtb = true;
}

SPOOR_NO_INSTRUMENT static void stack_windows(spoor_capture *c, const spoor_crash_config *cfg,
                                              const spoor_memory *m, uint32_t active,
                                              uint32_t other)
{
    uint32_t want = cfg->stack_window;
    c->stack_start = active;
    c->stack_len = spoor_range_room(m->ram, m->ram_count, active, want);
    if (other != 0 && other != active) {
        c->other_stack_start = other;
        c->other_stack_len = spoor_range_room(m->ram, m->ram_count, other, want);
    }
}

/* Writes the dump buffer back from a Cortex-M7 data cache (CCR.DC set), so that it is in RAM
 * when the reset comes. CCR.DC reads as zero on cores without a data cache. */
SPOOR_NO_INSTRUMENT static void clean_dump_from_cache(void)
{
#if !SPOOR_V6M
    const spoor_crash_config *cfg = spoor_crash_current_config();
    if (!cfg || (REG32(SCB_CCR) & CCR_DC) == 0)
        return;
    __asm volatile("dsb 0xF" ::: "memory");
    uint32_t start = (uint32_t)(uintptr_t)cfg->buffer & ~31u;
    uint32_t end = (uint32_t)(uintptr_t)cfg->buffer + cfg->buffer_size;
    for (uint32_t line = start; line < end; line += 32u)
        REG32(SCB_DCCMVAC) = line; /* clean data cache line by address */
    __asm volatile("dsb 0xF\n isb 0xF" ::: "memory");
#endif
}

static void system_reset(void) __attribute__((noreturn));
SPOOR_NO_INSTRUMENT static void system_reset(void)
{
    __asm volatile("dsb 0xF" ::: "memory");
    REG32(SCB_AIRCR) = 0x05FA0004u; /* VECTKEY | SYSRESETREQ */
    __asm volatile("dsb 0xF" ::: "memory");
    for (;;) {
    }
}

static void run_hook(const spoor_crash_config *cfg) __attribute__((noreturn));
SPOOR_NO_INSTRUMENT static void run_hook(const spoor_crash_config *cfg)
{
    if (cfg && cfg->after_capture)
        cfg->after_capture();
    system_reset();
}

/* ---- the fault handler body (on the reserved stack) -------------------------------------- */

/* The exception frame the fault entry left, as EXC_RETURN and the saved stack pointers
 * describe it. */
typedef struct fault_frame {
    uint32_t exc_return;
    uint32_t msp, psp; /* of the stack the frame is on (ARMv8-M: the Non-secure ones for ES=0) */
    uint32_t flags;    /* SPOOR_REGS_* */
    bool on_psp, fp_frame, additional, stack_ok;
    uint32_t frame; /* the frame's address (its additional state context first) */
    uint32_t sp;    /* the interrupted code's SP */
} fault_frame;

/* What EXC_RETURN says about the frame; on ARMv8-M also the banked stack pointers and limits. */
SPOOR_NO_INSTRUMENT static void decode_exc_return(fault_frame *ff, uint32_t *regs)
{
    const uint32_t exc_return = spoor_fault_save[SAVE_EXC_RETURN];
    ff->exc_return = exc_return;
    ff->msp = spoor_fault_save[SAVE_MSP];
    ff->psp = spoor_fault_save[SAVE_PSP];
    ff->flags = SPOOR_REGS_HANDLER_STACK;
    ff->on_psp = (exc_return & SPOOR_EXC_RETURN_SPSEL) != 0;
    ff->fp_frame = !SPOOR_V6M && (exc_return & SPOOR_EXC_RETURN_FTYPE) == 0;
    ff->additional = false;
    ff->stack_ok = true;
    if (ff->on_psp)
        ff->flags |= SPOOR_REGS_ON_PSP;
    if ((exc_return & SPOOR_EXC_RETURN_MODE) == 0)
        ff->flags |= SPOOR_REGS_HANDLER;
    if (ff->fp_frame)
        ff->flags |= SPOOR_REGS_FP_FRAME;
#if SPOOR_V8M_MAIN
    if (exc_return & SPOOR_EXC_RETURN_S) {
        ff->flags |= SPOOR_REGS_SECURE;
    } else if (exc_return & SPOOR_EXC_RETURN_ES) {
        /* we run secure, the frame is on a non-secure stack */
        __asm volatile("mrs %0, msp_ns" : "=r"(ff->msp));
        __asm volatile("mrs %0, psp_ns" : "=r"(ff->psp));
    }
    /* callee registers are in the frame when DCRS says an earlier exception stacked them,
     * or when a secure background was interrupted by a non-secure handler */
    ff->additional =
        (exc_return & SPOOR_EXC_RETURN_DCRS) == 0 ||
        ((exc_return & SPOOR_EXC_RETURN_S) != 0 && (exc_return & SPOOR_EXC_RETURN_ES) == 0);
    if (ff->additional)
        ff->flags |= SPOOR_REGS_ADDITIONAL;
    uint32_t lim;
    regs[SPOOR_REGS_MSPLIM / 4] = spoor_fault_save[SAVE_MSPLIM];
    __asm volatile("mrs %0, psplim" : "=r"(lim));
    regs[SPOOR_REGS_PSPLIM / 4] = lim;
    ff->flags |= SPOOR_REGS_HAS_LIMITS;
#else
    (void)regs;
#endif
}

/* The fault status registers; a stacking error means the frame was never written. */
SPOOR_NO_INSTRUMENT static void read_fault_status(spoor_capture *c, fault_frame *ff)
{
#if !SPOOR_V6M
    c->has_fault = true;
    for (uint32_t i = 0; i < 6u; i++)
        c->fault[1 + i] = REG32(0xE000ED28u + 4u * i); /* CFSR HFSR DFSR MMFAR BFAR AFSR */
    c->fault[0] = 0x3Fu;
#if SPOOR_V8M_MAIN
    c->fault[SPOOR_FAULT_SFSR / 4] = REG32(0xE000EDE4u);
    c->fault[SPOOR_FAULT_SFAR / 4] = REG32(0xE000EDE8u);
    c->fault[0] |= SPOOR_FAULT_HAS_SFSR | SPOOR_FAULT_HAS_SFAR;
#endif
    uint32_t cfsr = c->fault[SPOOR_FAULT_CFSR / 4];
    if (cfsr & (CFSR_MSTKERR | CFSR_BSTKERR | CFSR_STKOF)) {
        ff->flags |= SPOOR_REGS_STACK_OVERFLOW;
        ff->stack_ok = false; /* the hardware could not write the frame */
    }
#else
    (void)c;
    (void)ff;
#endif
}

/* s0-s15 and FPSCR of an extended frame, once lazy state preservation has written them. */
SPOOR_NO_INSTRUMENT static void read_fp_state(uint32_t *regs, fault_frame *ff,
                                              const volatile uint32_t *f)
{
#if defined(__ARM_FP) && !SPOOR_V6M
    if (ff->fp_frame) {
        uint32_t fpscr;
        /* any FP instruction makes lazy state preservation write s0-s15/FPSCR */
        __asm volatile("vmrs %0, fpscr" : "=r"(fpscr)::"memory");
        (void)fpscr;
    }
#endif
#if !SPOOR_V6M
    if (ff->fp_frame && (REG32(FPU_FPCCR) & 1u) == 0) { /* LSPACT clear: saved */
        for (uint32_t i = 0; i < 16u; i++)
            regs[SPOOR_REGS_S0 / 4 + i] = f[8u + i];
        regs[SPOOR_REGS_FPSCR / 4] = f[24];
        ff->flags |= SPOOR_REGS_FP_VALID;
    }
#else
    (void)regs;
    (void)ff;
    (void)f;
#endif
}

/* The registers: r4-r11 live (or from the additional state context), the rest from the
 * stacked frame when it lies in RAM; r0-r3 live and PC unknown when it does not. Sets
 * ff->frame and ff->sp. */
SPOOR_NO_INSTRUMENT static void read_registers(uint32_t *regs, fault_frame *ff,
                                               const spoor_memory *m)
{
    regs[SPOOR_REGS_R0 / 4] = spoor_fault_save[SAVE_R0];
    for (uint32_t i = 1; i < 12u; i++)
        regs[SPOOR_REGS_R0 / 4 + i] = spoor_fault_save[SAVE_R1 + i - 1u];
    regs[SPOOR_REGS_LR / 4] = 0xFFFFFFFFu;

    uint32_t frame = ff->on_psp ? ff->psp : ff->msp;
    uint32_t basic = frame + (ff->additional ? ADDITIONAL_CONTEXT : 0u);
    uint32_t size = (basic - frame) + (ff->fp_frame ? EXTENDED_FRAME : BASIC_FRAME);
    ff->frame = frame;
    ff->sp = frame;
    if (ff->stack_ok && (frame & 3u) == 0 &&
        spoor_range_contains(m->ram, m->ram_count, frame, size)) {
        const volatile uint32_t *f = (const volatile uint32_t *)(uintptr_t)basic;
        if (ff->additional) {
            const volatile uint32_t *a = (const volatile uint32_t *)(uintptr_t)frame;
            for (uint32_t i = 0; i < 8u; i++)
                regs[SPOOR_REGS_R0 / 4 + 4u + i] = a[2u + i];
        }
        for (uint32_t i = 0; i < 4u; i++)
            regs[SPOOR_REGS_R0 / 4 + i] = f[i];
        regs[SPOOR_REGS_R0 / 4 + 12u] = f[4];
        regs[SPOOR_REGS_LR / 4] = f[5];
        regs[SPOOR_REGS_PC / 4] = f[6];
        regs[SPOOR_REGS_XPSR / 4] = f[7];
        ff->sp = frame + size + ((f[7] & SPOOR_EXC_FRAME_XPSR_ALIGNED) ? 4u : 0u);
        ff->flags |= SPOOR_REGS_FRAME_VALID;
        read_fp_state(regs, ff, f);
    } else {
        regs[SPOOR_REGS_R0 / 4 + 12u] = 0;
        if (!spoor_range_contains(m->ram, m->ram_count, frame, 4))
            ff->flags |= SPOOR_REGS_STACK_OVERFLOW;
    }
}

/* SP, MSP, PSP and CONTROL as the interrupted code had them, and the flags. */
SPOOR_NO_INSTRUMENT static void set_stack_registers(uint32_t *regs, fault_frame *ff)
{
    if (ff->on_psp)
        ff->psp = ff->sp;
    else
        ff->msp = ff->sp;
    regs[SPOOR_REGS_SP / 4] = ff->sp;
    regs[SPOOR_REGS_EXC_RETURN / 4] = ff->exc_return;
    regs[SPOOR_REGS_MSP / 4] = ff->msp;
    regs[SPOOR_REGS_PSP / 4] = ff->psp;
    uint32_t control = read_control() & ~6u;
    control |= (ff->on_psp ? 2u : 0u) | (ff->fp_frame ? 4u : 0u);
    regs[SPOOR_REGS_CONTROL / 4] = control;
    regs[SPOOR_REGS_FLAGS / 4] = ff->flags;
}

SPOOR_NO_INSTRUMENT void spoor_fault_capture(void)
{
    if (spoor_calls_freeze)
        spoor_calls_freeze();
    const spoor_crash_config *cfg = spoor_crash_current_config();
    const spoor_memory *m = spoor_crash_current_memory();
    if (in_fault)
        system_reset(); /* a fault inside the capture or inside the hook */
    if (!cfg || !m)
        run_hook(cfg); /* capture not set up */
    in_fault = 1;
#if !SPOOR_V6M
    /* Bus errors of our own loads are ignored at priority -1 (FAULTMASK is set). */
    REG32(SCB_CCR) |= CCR_BFHFNMIGN;
#endif

    static spoor_capture c;
    static fault_frame ff; /* static: the reserved stack is small */
    memset(&c, 0, sizeof c);
    decode_exc_return(&ff, c.regs);
    read_fault_status(&c, &ff);
    read_registers(c.regs, &ff, m);
    set_stack_registers(c.regs, &ff);

    c.reason = SPOOR_REASON_FAULT;
    c.code = read_ipsr();
    /* the window starts at the frame so that the dump holds it too */
    stack_windows(&c, cfg, m, (ff.flags & SPOOR_REGS_FRAME_VALID) ? ff.frame : ff.sp,
                  ff.on_psp ? ff.msp : ff.psp);
    add_build_id(&c);
    add_mtb(&c, cfg);
    spoor_crash_write(&c);
    clean_dump_from_cache();
    run_hook(cfg);
}

/* ---- software captures ------------------------------------------------------------------ */

/* The address of the call instruction that returns to ret: a 32-bit BL (ret - 4) or a 16-bit
 * BLX Rm (ret - 2). Without readable code, ret - 2, which lies inside the call either way. */
SPOOR_NO_INSTRUMENT static uint32_t call_site(const spoor_memory *m, uint32_t ret)
{
    if (m && spoor_range_contains(m->flash, m->flash_count, ret - 4u, 4)) {
        const volatile uint16_t *code = (const volatile uint16_t *)(uintptr_t)(ret - 4u);
        uint16_t first = code[0], second = code[1];
        if (spoor_cortexm_is_bl(first, second))
            return ret - 4u;
    }
    return ret - 2u;
}

SPOOR_NO_INSTRUMENT static void software_capture(spoor_capture *c, const spoor_crash_event *event,
                                                 const uint32_t *block)
{
    const spoor_crash_config *cfg = spoor_crash_current_config();
    const spoor_memory *m = spoor_crash_current_memory();
    uint32_t *regs = c->regs;
    memset(c, 0, sizeof *c);
    for (uint32_t i = 0; i < 4u; i++) {
        regs[SPOOR_REGS_R0 / 4 + 4u + i] = block[BLOCK_R4 + i];
        regs[SPOOR_REGS_R0 / 4 + 8u + i] = block[BLOCK_R8 + i];
    }
    uint32_t sp = block[BLOCK_SP];
    uint32_t control = read_control();
    uint32_t ipsr = read_ipsr();
    bool on_psp = ipsr == 0 && (control & 2u) != 0;
    uint32_t flags =
        SPOOR_REGS_SOFTWARE | (on_psp ? SPOOR_REGS_ON_PSP : 0u) | (ipsr ? SPOOR_REGS_HANDLER : 0u);
    regs[SPOOR_REGS_SP / 4] = sp;
    regs[SPOOR_REGS_LR / 4] = 0xFFFFFFFFu;
    regs[SPOOR_REGS_PC / 4] = call_site(m, block[BLOCK_RETURN] & ~1u);
    regs[SPOOR_REGS_XPSR / 4] = read_xpsr() | (1u << 24); /* T bit */
    uint32_t msp = on_psp ? read_msp() : sp;
    uint32_t psp = on_psp ? sp : read_psp();
    regs[SPOOR_REGS_MSP / 4] = msp;
    regs[SPOOR_REGS_PSP / 4] = psp;
    regs[SPOOR_REGS_CONTROL / 4] = control;
#if SPOOR_V8M_MAIN
    uint32_t lim;
    __asm volatile("mrs %0, msplim" : "=r"(lim));
    regs[SPOOR_REGS_MSPLIM / 4] = lim;
    __asm volatile("mrs %0, psplim" : "=r"(lim));
    regs[SPOOR_REGS_PSPLIM / 4] = lim;
    flags |= SPOOR_REGS_HAS_LIMITS;
#endif
    regs[SPOOR_REGS_FLAGS / 4] = flags;
    c->reason = event ? (uint32_t)event->reason : (uint32_t)SPOOR_REASON_USER;
    c->code = event ? event->code : 0u;
    c->file = event ? event->file : NULL;
    c->line = event ? event->line : 0u;
    c->message = event ? event->message : NULL;
    if (cfg && m)
        stack_windows(c, cfg, m, sp, on_psp ? msp : psp);
    add_build_id(c);
}

SPOOR_NO_INSTRUMENT static bool capture_masked(const spoor_crash_event *event,
                                               const uint32_t *block)
{
    static spoor_capture c;
    uint32_t primask;
    __asm volatile("mrs %0, primask" : "=r"(primask));
    __asm volatile("cpsid i" ::: "memory");
    bool written = false;
    if (spoor_crash_current_config()) {
        software_capture(&c, event, block);
        written = spoor_crash_write(&c);
        clean_dump_from_cache();
    }
    if ((primask & 1u) == 0)
        __asm volatile("cpsie i" ::: "memory");
    return written;
}

SPOOR_NO_INSTRUMENT bool spoor_crash_capture_impl(const spoor_crash_event *event,
                                                  const uint32_t *block)
{
    return capture_masked(event, block);
}

SPOOR_NO_INSTRUMENT void spoor_crash_fatal_impl(const spoor_crash_event *event,
                                                const uint32_t *block)
{
    if (spoor_calls_freeze)
        spoor_calls_freeze();
    capture_masked(event, block);
    __asm volatile("cpsid i" ::: "memory");
    run_hook(spoor_crash_current_config());
}

/* ---- on-target backtrace ------------------------------------------------------------------ */

SPOOR_NO_INSTRUMENT uint32_t spoor_backtrace_impl(uint32_t *pcs, uint32_t max,
                                                  const uint32_t *block)
{
    const spoor_memory *m = spoor_crash_current_memory();
    if (!m || !pcs || max == 0)
        return 0;
    spoor_ehabi_state state;
    memset(&state, 0, sizeof state);
    for (uint32_t i = 0; i < 4u; i++) {
        state.r[4 + i] = block[BLOCK_R4 + i];
        state.r[8 + i] = block[BLOCK_R8 + i];
    }
    state.r[13] = block[BLOCK_SP];
    state.r[14] = block[BLOCK_RETURN];
    state.r[15] = block[BLOCK_RETURN] & ~1u;
    state.pc_is_return = true;
    state.psp = read_psp();
    spoor_ehabi_table table = {(uint32_t)(uintptr_t)__exidx_start,
                               (uint32_t)(uintptr_t)__exidx_end};
    return spoor_ehabi_unwind(&table, m, &state, pcs, max, NULL);
}

/* ---- the vector table check ---------------------------------------------------------------- */

#define SCB_CPUID 0xE000ED00u
#define SCB_VTOR 0xE000ED08u
#define SCB_CPUID_NS 0xE002ED00u /* the Non-secure alias: reads as zero from Non-secure code */
#define CPUID_PARTNO_M0 0xC20u
#define SHCSR_MEMFAULTENA (1u << 16)

static const char *init_message;
static char init_text[192];

/* The active vector table: VTOR, or address 0 on a Cortex-M0 (no VTOR; on a Cortex-M0+ without
 * one the register reads as zero, which is where its table is). */
SPOOR_NO_INSTRUMENT static uint32_t vector_table(void)
{
#if SPOOR_V6M
    if (((REG32(SCB_CPUID) >> 4) & 0xFFFu) == CPUID_PARTNO_M0)
        return 0;
#endif
    return REG32(SCB_VTOR) & ~0x7Fu;
}

/* Where the instruction at entry (a Thumb address) branches to when it is B (T2) or B.W (T4),
 * else 0. Reads code only inside the configured flash. */
SPOOR_NO_INSTRUMENT static uint32_t branch_target(const spoor_memory *m, uint32_t entry)
{
    uint32_t at = entry & ~1u;
    if (!spoor_range_contains(m->flash, m->flash_count, at, 4))
        return 0;
    const volatile uint16_t *code = (const volatile uint16_t *)(uintptr_t)at;
    uint32_t h1 = code[0], h2 = code[1];
    if ((h1 & 0xF800u) == 0xE000u) { /* B T2: 11100 imm11 */
        uint32_t imm = (h1 & 0x7FFu) << 1;
        if (imm & 0x800u)
            imm |= 0xFFFFF000u;
        return (at + 4u + imm) | 1u;
    }
    if ((h1 & 0xF800u) == 0xF000u && (h2 & 0xD000u) == 0x9000u) { /* B.W T4 */
        uint32_t s = (h1 >> 10) & 1u, j1 = (h2 >> 13) & 1u, j2 = (h2 >> 11) & 1u;
        uint32_t i1 = !(j1 ^ s), i2 = !(j2 ^ s);
        uint32_t imm = s << 24 | i1 << 23 | i2 << 22 | (h1 & 0x3FFu) << 12 | (h2 & 0x7FFu) << 1;
        if (s)
            imm |= 0xFE000000u;
        return (at + 4u + imm) | 1u;
    }
    return 0;
}

SPOOR_NO_INSTRUMENT static char *put_text(char *p, char *end, const char *s)
{
    while (*s && p < end)
        *p++ = *s++;
    return p;
}

SPOOR_NO_INSTRUMENT static char *put_hex(char *p, char *end, uint32_t v)
{
    p = put_text(p, end, "0x");
    for (int shift = 28; shift >= 0 && p < end; shift -= 4)
        *p++ = "0123456789abcdef"[(v >> shift) & 0xFu];
    return p;
}

typedef struct fault_vector {
    uint8_t number;
    const char *name;
    void (*handler)(void);
} fault_vector;

/* Checks the fault entries of the active vector table against spoor's handlers; returns the
 * SHCSR enable bits of the configurable faults whose entries are spoor's (the others stay
 * disabled and escalate to HardFault). Sets init_message for the first entry that is not. */
SPOOR_NO_INSTRUMENT static uint32_t check_vectors(const spoor_memory *m)
{
    static const fault_vector vectors[] = {
        {3, "HardFault", HardFault_Handler},
#if !SPOOR_V6M
        {4, "MemManage", MemManage_Handler},
        {5, "BusFault", BusFault_Handler},
        {6, "UsageFault", UsageFault_Handler},
#endif
#if SPOOR_V8M_MAIN
        {7, "SecureFault", SecureFault_Handler},
#endif
    };
    uint32_t table = vector_table(), enable = 0;
    for (uint32_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
        const fault_vector *v = &vectors[i];
#if SPOOR_V8M_MAIN
        if (v->number == 7 && REG32(SCB_CPUID_NS) == 0)
            continue; /* Non-secure code (or no Security Extension): not our exception */
#endif
        uint32_t mine = (uint32_t)(uintptr_t)v->handler | 1u;
        uint32_t entry = *(const volatile uint32_t *)(uintptr_t)(table + 4u * v->number);
        if (entry == mine || branch_target(m, entry) == mine) {
            if (v->number >= 4)
                enable |= SHCSR_MEMFAULTENA << (v->number - 4u);
            continue;
        }
        if (init_message)
            continue;
        char *p = init_text, *end = init_text + sizeof init_text - 1u;
        p = put_text(p, end, v->name);
        p = put_text(p, end, " entry of the vector table at ");
        p = put_hex(p, end, table);
        p = put_text(p, end, " is ");
        p = put_hex(p, end, entry);
        p = put_text(p, end, ", not spoor's ");
        p = put_text(p, end, v->name);
        p = put_text(p, end, "_Handler ");
        p = put_hex(p, end, mine);
        p = put_text(p, end, " (the startup code's own handler? see spoor/handlers.h)");
        *p = '\0';
        init_message = init_text;
    }
    return enable;
}

SPOOR_NO_INSTRUMENT const char *spoor_crash_init_message(void)
{
    return init_message;
}

/* ---- initialisation ------------------------------------------------------------------------ */

SPOOR_NO_INSTRUMENT bool spoor_crash_init(const spoor_crash_config *config)
{
    init_message = "no configuration";
    if (!config)
        return false;
    spoor_memory memory = {direct_read,       NULL,          config->ram,
                           config->ram_count, config->flash, config->flash_count};
    init_message = "unusable configuration (no buffer, buffer not 4-byte aligned or too small)";
    if (!spoor_crash_setup(config, &memory))
        return false;
    init_message = NULL;
    uint32_t top;
    if (config->handler_stack && config->handler_stack_size >= 256u)
        top = (uint32_t)(uintptr_t)config->handler_stack + config->handler_stack_size;
    else
        top = (uint32_t)(uintptr_t)builtin_stack + (uint32_t)sizeof builtin_stack;
    spoor_fault_stack_top = top & ~7u;
    spoor_fault_mtb = config->mtb_registers;
    in_fault = 0;
    uint32_t enable = check_vectors(&memory);
#if !SPOOR_V6M
    /* separate MemManage, BusFault, UsageFault (and SecureFault) handlers, where the vector
     * table has spoor's */
    REG32(SCB_SHCSR) |= enable;
#else
    (void)enable;
#endif
    return init_message == NULL;
}
