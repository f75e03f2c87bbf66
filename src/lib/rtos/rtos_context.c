/* The saved contexts of the RTOS layer (spoor/rtos.h): the registers a thread that is not
 * running will resume with, from what its RTOS port's context switch saved. One function per
 * port layout, each naming the port source it was read from (docs/crash.md). */
#include "base/byteorder.h"
#include "base/set_error.h"
#include "elf/elf_sections.h"
#include "rtos/rtos_internal.h"
#include "spoor/unwind.h"
#include <string.h>

/* The registers a thread resumes with: r4-r11 as its port saved them, the hardware frame the
 * context switch's exception stacked at frame, returned from with exc_return. */
static bool resume_regs(const uint32_t r4_r11[8], uint32_t frame, uint32_t exc_return,
                        spoor_read_fn read, void *ctx, spoor_regs *out)
{
    spoor_regs h;
    memset(&h, 0, sizeof h);
    memcpy(&h.r[4], r4_r11, 8 * sizeof r4_r11[0]);
    h.psp = frame;
    h.msp = 0;
    h.control = 2; /* SPSEL: thread mode on PSP */
    h.have = SPOOR_HAVE_CORE | SPOOR_HAVE_BANKED_SP;
    if (!spoor_regs_from_exception(&h, exc_return, read, ctx, out))
        return false;
    out->psp = out->r[13];
    out->have = SPOOR_HAVE_CORE | SPOOR_HAVE_BANKED_SP;
    return true;
}

/* n little-endian words at addr; false with the error set when they cannot be read. */
static bool read_saved_words(const spoor_rtos_thread *t, spoor_read_fn read, void *ctx,
                             uint32_t addr, uint32_t *words, size_t n)
{
    uint8_t b[9 * 4];
    if (n > 9 || !read(ctx, addr, b, n * 4)) {
        spoor_set_error(SPOOR_ERR_UNAVAILABLE,
                        "TCB 0x%08x: the saved context at 0x%08x is not available", t->tcb, addr);
        return false;
    }
    for (size_t i = 0; i < n; i++)
        words[i] = spoor_le32(b + 4 * i);
    return true;
}

static bool is_armv6m(const spoor_rtos *r)
{
    spoor_elf_arch arch = spoor_elf_cpu_arch(r->elf);
    return arch == SPOOR_ELF_ARCH_V6M || arch == SPOOR_ELF_ARCH_V6SM;
}

/* A saved SP no context switch leaves: 0 (a TCB that never ran, or not a TCB) or unaligned. */
static bool bad_saved_sp(const spoor_rtos_thread *t)
{
    if (t->sp && !(t->sp & 3u))
        return false;
    spoor_set_error(SPOOR_ERR_FORMAT,
                    "TCB 0x%08x: saved stack pointer 0x%08x is not a stack address", t->tcb, t->sp);
    return true;
}

/* ARMv8-M baseline (Cortex-M23): the ports have their own files (RTX5 irq_armv8mbl.S, ThreadX
 * cortex_m23), whose layouts spoor has not been checked against. */
static bool unchecked_arch(const spoor_rtos *r)
{
    if (spoor_elf_cpu_arch(r->elf) != SPOOR_ELF_ARCH_V8M_BASE)
        return false;
    spoor_set_error(SPOOR_ERR_UNSUPPORTED,
                    "%s: the saved context layout of the ARMv8-M baseline port is not known",
                    r->d->display);
    return true;
}

/* EXC_RETURN from the TCB member (exc_return_member) that keeps its low byte, as the RTX5 and
 * Zephyr context switches restore it: 0xFFFFFF00 | the byte. 0 when the TCB type has no such
 * member, -1 (error set) when it cannot be read. */
static int exc_return_from_member(const spoor_rtos *r, spoor_read_fn read, void *ctx,
                                  const spoor_rtos_thread *t, uint32_t *exc_return)
{
    rtos_field f;
    uint8_t low;
    Dwarf_Die tcb_type = r->tcb_type;
    if (!spoor_rtos_dwarf_field(&tcb_type, r->d->exc_return_member, &f))
        return 0;
    if (f.size != 1 || !read(ctx, t->tcb + f.offset, &low, 1)) {
        spoor_set_error(SPOOR_ERR_UNAVAILABLE, "TCB 0x%08x: no readable %s member", t->tcb,
                        r->d->exc_return_member);
        return -1;
    }
    *exc_return = 0xFFFFFF00u | low;
    return 1;
}

/* RTX5 (CMSIS-RTX Source/GCC/irq_armv7m.S and irq_armv8mml.S, SVC_Handler's SVC_ContextSave
 * and Sys_Context's Sys_ContextSave): STMDB r4-r11 below the hardware frame, then, when
 * EXC_RETURN bit 4 is 0 (an FP extended frame), VSTMDB s16-s31 below them; the SP goes to the
 * TCB's sp and EXC_RETURN's low byte to its stack_frame (SVC_ContextRestore returns with
 * 0xFFFFFF00 | stack_frame; it stays 0xFD, STACK_FRAME_INIT_VAL, in a build without FP, which
 * does not store it). At sp: [s16-s31] r4-r11, then the hardware frame. irq_armv6m.S
 * (SVC_ContextSave): sp = PSP - 32, r4-r7 then r8-r11 stored upwards from it (the same order),
 * EXC_RETURN always 0xFFFFFFFD. A TrustZone non-secure build's thread in the secure domain
 * (EXC_RETURN bit 6) saves no registers: not supported. */
static bool saved_regs_rtx5(const spoor_rtos *r, spoor_read_fn read, void *ctx,
                            const spoor_rtos_thread *t, spoor_regs *out)
{
    uint32_t exc_return = 0xFFFFFFFDu, words[8];
    if (unchecked_arch(r) || bad_saved_sp(t))
        return false;
    int found = is_armv6m(r) ? 1 : exc_return_from_member(r, read, ctx, t, &exc_return);
    if (found == 0) /* RTX5 always has it */
        spoor_set_error(SPOOR_ERR_UNAVAILABLE, "TCB 0x%08x: no %s member", t->tcb,
                        r->d->exc_return_member);
    if (found != 1)
        return false;
    uint32_t at = t->sp + (exc_return & 0x10u ? 0 : 64); /* past s16-s31 */
    return read_saved_words(t, read, ctx, at, words, 8) &&
           resume_regs(words, at + 32, exc_return, read, ctx, out);
}

/* ThreadX (ports/cortex_m3, cortex_m4, cortex_m7, cortex_m33 /gnu/src/tx_thread_schedule.S,
 * PendSV_Handler / __tx_ts_handler): STMDB r4-r11 below the hardware frame, VSTMDB s16-s31
 * below them when EXC_RETURN bit 4 is 0 (the FP builds), then STMDB EXC_RETURN (LR); the SP goes
 * to tx_thread_stack_ptr. At it: EXC_RETURN, [s16-s31], r4-r11, the hardware frame. The
 * ARMv6-M port (ports/cortex_m0/gnu/src/tx_thread_schedule.S) stores r4-r7 at PSP - 16, r8-r11
 * at PSP - 32 and EXC_RETURN at PSP - 36: EXC_RETURN, r8-r11, r4-r7, the frame. */
static bool saved_regs_threadx(const spoor_rtos *r, spoor_read_fn read, void *ctx,
                               const spoor_rtos_thread *t, spoor_regs *out)
{
    uint32_t words[9], regs[8];
    if (unchecked_arch(r) || bad_saved_sp(t) || !read_saved_words(t, read, ctx, t->sp, words, 1))
        return false;
    uint32_t exc_return = words[0], at = t->sp + 4;
    if (is_armv6m(r)) {
        if (!(exc_return & 0x10u)) {
            spoor_set_error(SPOOR_ERR_FORMAT,
                            "TCB 0x%08x: saved EXC_RETURN 0x%08x has an FP frame on ARMv6-M",
                            t->tcb, exc_return);
            return false;
        }
        if (!read_saved_words(t, read, ctx, at, words, 8))
            return false;
        memcpy(regs, words + 4, 4 * sizeof regs[0]); /* r4-r7 */
        memcpy(regs + 4, words, 4 * sizeof regs[0]); /* r8-r11 */
    } else {
        at += exc_return & 0x10u ? 0 : 64; /* past s16-s31 */
        if (!read_saved_words(t, read, ctx, at, regs, 8))
            return false;
    }
    return resume_regs(regs, at + 32, exc_return, read, ctx, out);
}

static bool has_symbol(const spoor_rtos *r, const char *name)
{
    uint32_t addr, size;
    return spoor_elf_symbol(r->elf, name, &addr, &size);
}

/* The FreeRTOS port a build used, told from the ELF (FreeRTOS-Kernel portable/GCC/...). */
typedef enum freertos_port {
    FREERTOS_PORT_CM3,      /* ARM_CM0, ARM_CM3: r4-r11 */
    FREERTOS_PORT_CM4F,     /* ARM_CM4F, ARM_CM7/r0p1: r4-r11, EXC_RETURN, [s16-s31] */
    FREERTOS_PORT_CM33_NTZ, /* ARM_CM33_NTZ (and CM35P/CM55/CM85 NTZ): PSPLIM, EXC_RETURN,
                               r4-r11, [s16-s31] */
    FREERTOS_PORT_CM33_TZ,  /* ARM_CM33 (TrustZone, non_secure): xSecureContext, PSPLIM,
                               EXC_RETURN, r4-r11, [s16-s31] */
} freertos_port;

/* ARMv8-M mainline by the build attributes, or (none) by the function only the ARMv8-M ports'
 * portasm.c has; there xSecureContext (port.c, configENABLE_TRUSTZONE) marks the TrustZone port.
 * ARMv7-M: vPortEnableVFP, a function of the ARM_CM4F and ARM_CM7 ports only (the float ABI
 * does not tell: the CM4F port builds with -mfloat-abi=softfp too, and an M4 built soft-float
 * uses ARM_CM3). ARMv6-M: the ARM_CM0 port, whose order of words is ARM_CM3's. */
static bool pick_freertos_port(const spoor_rtos *r, freertos_port *port)
{
    rtos_field mpu;
    Dwarf_Die tcb_type = r->tcb_type;
    if (unchecked_arch(r))
        return false;
    if (spoor_rtos_dwarf_field(&tcb_type, "xMPUSettings", &mpu)) {
        spoor_set_error(SPOOR_ERR_UNSUPPORTED,
                        "FreeRTOS: the saved context layout of the MPU ports (TCB member "
                        "xMPUSettings) is not known");
        return false;
    }
    spoor_elf_arch arch = spoor_elf_cpu_arch(r->elf);
    if (arch == SPOOR_ELF_ARCH_V8M_MAIN || arch == SPOOR_ELF_ARCH_V81M_MAIN ||
        (arch == SPOOR_ELF_ARCH_UNKNOWN && has_symbol(r, "vRestoreContextOfFirstTask")))
        *port = has_symbol(r, "xSecureContext") ? FREERTOS_PORT_CM33_TZ : FREERTOS_PORT_CM33_NTZ;
    else
        *port = has_symbol(r, "vPortEnableVFP") ? FREERTOS_PORT_CM4F : FREERTOS_PORT_CM3;
    return true;
}

/* FreeRTOS: what each port's PendSV handler leaves at pxTopOfStack (the TCB's first member),
 * read in FreeRTOS-Kernel portable/GCC:
 *   ARM_CM0/port.c xPortPendSVHandler: sp = PSP - 32, r4-r7 then r8-r11 stored upwards from
 *     it: r4-r11, then the hardware frame;
 *   ARM_CM3/port.c xPortPendSVHandler: STMDB r4-r11 below the frame: the same;
 *   ARM_CM4F/port.c xPortPendSVHandler: VSTMDB s16-s31 when EXC_RETURN bit 4 is 0, then STMDB
 *     {r4-r11, r14}: r4-r11, EXC_RETURN, [s16-s31], the frame;
 *   ARM_CM33_NTZ/non_secure/portasm.c PendSV_Handler (configENABLE_MPU 0): VSTMDB s16-s31 when
 *     EXC_RETURN bit 4 is 0, then STMDB {r2-r11} with r2 = PSPLIM, r3 = EXC_RETURN: PSPLIM,
 *     EXC_RETURN, r4-r11, [s16-s31], the frame;
 *   ARM_CM33/non_secure/portasm.c PendSV_Handler (save_ns_context): xSecureContext, PSPLIM,
 *     EXC_RETURN, r4-r11, [s16-s31], the frame; a task switched out in the secure state
 *     (EXC_RETURN bit 6) left only the first three words, its frame is on the secure stack. */
static bool saved_regs_freertos(const spoor_rtos *r, spoor_read_fn read, void *ctx,
                                const spoor_rtos_thread *t, spoor_regs *out)
{
    freertos_port port;
    uint32_t words[3], regs[8], exc_return = 0xFFFFFFFDu, at = t->sp;
    if (bad_saved_sp(t) || !pick_freertos_port(r, &port))
        return false;
    if (port == FREERTOS_PORT_CM33_NTZ || port == FREERTOS_PORT_CM33_TZ) {
        size_t head = port == FREERTOS_PORT_CM33_TZ ? 3 : 2; /* [xSecureContext], PSPLIM, LR */
        if (!read_saved_words(t, read, ctx, at, words, head))
            return false;
        exc_return = words[head - 1];
        at += (uint32_t)head * 4;
        if (port == FREERTOS_PORT_CM33_TZ && (exc_return & 0x40u)) {
            spoor_set_error(SPOOR_ERR_UNSUPPORTED,
                            "TCB 0x%08x: switched out in the secure state (EXC_RETURN 0x%08x): "
                            "its registers are on the secure stack",
                            t->tcb, exc_return);
            return false;
        }
    }
    if (!read_saved_words(t, read, ctx, at, regs, 8))
        return false;
    at += 32;
    if (port == FREERTOS_PORT_CM4F) {
        if (!read_saved_words(t, read, ctx, at, &exc_return, 1))
            return false;
        at += 4;
    }
    if (!(exc_return & 0x10u)) /* s16-s31 between the saved registers and the frame */
        at += 64;
    return resume_regs(regs, at, exc_return, read, ctx, out);
}

/* Zephyr (arch/arm/core/cortex_m/swap_helper.S, z_arm_pendsv): r4-r11 and PSP into the
 * thread's callee_saved (v1-v8, psp; ARMv6-M and ARMv8-M baseline store r4-r7, then r8-r11 and
 * PSP, in the same order); with CONFIG_ARM_STORE_EXC_RETURN the low byte of EXC_RETURN into
 * arch.mode_exc_return (restored by LDRSB: 0xFFFFFF00 | the byte), and with CONFIG_FPU_SHARING
 * s16-s31 into arch.preempt_float when its bit 4 is 0. The hardware frame (an extended one when
 * bit 4 is 0) is at psp. Without mode_exc_return every switch returns with the basic frame's
 * 0xFFFFFFFD. CONFIG_USE_SWITCH (arm-m-switch.c, arm_m_must_switch) keeps a frame of its own on
 * the thread's stack instead: not supported. */
static bool saved_regs_zephyr(const spoor_rtos *r, spoor_read_fn read, void *ctx,
                              const spoor_rtos_thread *t, spoor_regs *out)
{
    rtos_field regs_field;
    uint32_t regs[8], exc_return = 0xFFFFFFFDu;
    Dwarf_Die tcb_type = r->tcb_type;
    if (bad_saved_sp(t))
        return false;
    if (has_symbol(r, "arm_m_must_switch")) {
        spoor_set_error(SPOOR_ERR_UNSUPPORTED,
                        "Zephyr: the saved context layout of arch_switch (CONFIG_USE_SWITCH) is "
                        "not known");
        return false;
    }
    if (!spoor_rtos_dwarf_field(&tcb_type, r->d->callee_saved_member, &regs_field)) {
        spoor_set_error(SPOOR_ERR_UNAVAILABLE, "TCB 0x%08x: callee-saved registers not available",
                        t->tcb);
        return false;
    }
    if (!read_saved_words(t, read, ctx, t->tcb + regs_field.offset, regs, 8) ||
        exc_return_from_member(r, read, ctx, t, &exc_return) < 0)
        return false;
    return resume_regs(regs, t->sp, exc_return, read, ctx, out);
}

bool spoor_rtos_saved_regs(const spoor_rtos *r, spoor_read_fn read, void *ctx,
                           const spoor_rtos_thread *t, spoor_regs *out)
{
    rtos_context layout = r->d->context;
    if (layout == RTOS_CONTEXT_NONE) {
        spoor_set_error(SPOOR_ERR_UNSUPPORTED, "%s: the saved context layout is not known",
                        r->d->display);
        return false;
    }
    if (!t->has_sp) {
        spoor_set_error(SPOOR_ERR_UNAVAILABLE, "TCB 0x%08x: no saved stack pointer", t->tcb);
        return false;
    }
    if (layout == RTOS_CONTEXT_FREERTOS)
        return saved_regs_freertos(r, read, ctx, t, out);
    if (layout == RTOS_CONTEXT_ZEPHYR)
        return saved_regs_zephyr(r, read, ctx, t, out);
    if (layout == RTOS_CONTEXT_RTX5)
        return saved_regs_rtx5(r, read, ctx, t, out);
    if (layout == RTOS_CONTEXT_THREADX)
        return saved_regs_threadx(r, read, ctx, t, out);
    uint32_t words[9];
    size_t n = layout == RTOS_CONTEXT_R4_R11_LR ? 9 : 8;
    if (!read_saved_words(t, read, ctx, t->sp, words, n))
        return false;
    uint32_t frame = t->sp + (uint32_t)n * 4, exc_return = 0xFFFFFFFDu; /* thread, PSP, basic */
    if (layout == RTOS_CONTEXT_R4_R11_LR) {
        exc_return = words[8];
        if (!(exc_return & 0x10u)) /* s16-s31 pushed by the port below the frame */
            frame += 64;
    }
    return resume_regs(words, frame, exc_return, read, ctx, out);
}
