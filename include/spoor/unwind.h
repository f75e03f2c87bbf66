/* The host-side Cortex-M stack unwinder: from one register state and a way to read the
 * target's memory (a crash dump, the ELF image, a live debugger) to a list of frames.
 *
 * Each step tries, in order, DWARF CFI (.debug_frame), EHABI (.ARM.exidx/.ARM.extab),
 * prologue analysis, and last a stack scan; every frame says which method produced it.
 * Exception frames (EXC_RETURN in the return address) are crossed: basic or extended FP
 * frame, MSP or PSP, the ARMv8-M additional state context, the xPSR stack-alignment bit.
 * A PC that is not code (a call through a bad function pointer) is continued from LR.
 * Functions that left no frame because they tail-called the next one are rebuilt from DWARF
 * call sites, as gdb does; a task an RTOS started ends the walk at the task's function.
 * Every memory read is bounds-checked by the reader; the walk is bounded. */
#ifndef SPOOR_UNWIND_H
#define SPOOR_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/elf.h"
#include "spoor/error.h"
#include "spoor/read.h"
#include "spoor/regs.h"
#include "spoor/thumb.h"

/* How a frame's PC and SP were recovered from the frame below it. */
typedef enum spoor_unwind_method {
    SPOOR_UNWIND_REGISTERS, /* frame 0: the given register state */
    SPOOR_UNWIND_CFI,       /* DWARF call frame information (.debug_frame) */
    SPOOR_UNWIND_EHABI,     /* ARM exception-handling tables (.ARM.exidx/.ARM.extab) */
    SPOOR_UNWIND_PROLOGUE,  /* analysis of the function's prologue instructions */
    SPOOR_UNWIND_SCAN,      /* a return address found by scanning the stack */
    SPOOR_UNWIND_LINK,      /* PC was not code: continued from LR (bad function pointer) */
    SPOOR_UNWIND_EXCEPTION, /* read from a hardware-stacked exception frame */
    SPOOR_UNWIND_TAILCALL,  /* a function that tail-called the frame below it (`b.w callee`):
                               it has no frame of its own on the stack, and is rebuilt from
                               DWARF call sites; its registers are not known */
} spoor_unwind_method;

/* Bit masks of the methods a walk may use (SPOOR_UNWIND_ALL by default). */
#define SPOOR_UNWIND_USE_CFI (1u << SPOOR_UNWIND_CFI)
#define SPOOR_UNWIND_USE_EHABI (1u << SPOOR_UNWIND_EHABI)
#define SPOOR_UNWIND_USE_PROLOGUE (1u << SPOOR_UNWIND_PROLOGUE)
#define SPOOR_UNWIND_USE_SCAN (1u << SPOOR_UNWIND_SCAN)
#define SPOOR_UNWIND_ALL                                                                           \
    (SPOOR_UNWIND_USE_CFI | SPOOR_UNWIND_USE_EHABI | SPOOR_UNWIND_USE_PROLOGUE |                   \
     SPOOR_UNWIND_USE_SCAN)

typedef enum spoor_frame_kind {
    SPOOR_FRAME_CALL,      /* a function's frame */
    SPOOR_FRAME_EXCEPTION, /* the boundary where a handler was entered (no code of its own) */
} spoor_frame_kind;

typedef struct spoor_frame {
    spoor_frame_kind kind;
    spoor_unwind_method method;
    /* CALL: the frame's PC (Thumb bit clear). EXCEPTION: the EXC_RETURN value. */
    uint32_t pc;
    /* CALL: SP in this frame. EXCEPTION: address of the hardware-stacked frame. */
    uint32_t sp;
    /* CALL: true when pc is a return address (the call is the instruction before it, so
     * look up pc - 1 for the line); false for frame 0 and for a PC read from an exception
     * frame, which is the instruction that was interrupted. */
    bool pc_is_return;
    /* EXCEPTION: number of the handler that was entered (from the IPSR of the handler's
     * xPSR: 2 NMI, 3 HardFault, ..., 15 SysTick, 16+ IRQ); always one an exception can
     * have (spoor_exception_name() is not NULL for it). CALL: -1. */
    int exception;
    /* EXCEPTION: the frame was an extended (FP) frame / on PSP / had the additional state
     * context (ARMv8-M). */
    bool fp_frame, on_psp, additional_state;
    /* CALL: between this frame and the next, tail calls may have been left out: the caller's
     * call site calls another function and no single chain of tail calls leads from it to
     * this one (more than one fits, or one on the way is not known). The frames that every
     * chain has are there; nothing is guessed. */
    bool tailcalls_possible;
    /* CALL, the last frame of a walk that stopped with SPOOR_STOP_TASK_ENTRY: the entry of the
     * function its return address is (the task-exit hook an RTOS put there when it started the
     * task: prvTaskExitError, osThreadExit, ...). 0 otherwise. */
    uint32_t task_exit_hook;
} spoor_frame;

/* Why a walk ended. */
typedef enum spoor_unwind_stop {
    SPOOR_STOP_RESET,               /* reached the reset handler (Reset_Handler or the ELF entry) */
    SPOOR_STOP_END_OF_STACK,        /* return address 0 or 0xFFFFFFFF (the reset value of LR) */
    SPOOR_STOP_LOOP,                /* the same PC and SP came back */
    SPOOR_STOP_FRAME_LIMIT,         /* the caller's frame array is full */
    SPOOR_STOP_UNREADABLE,          /* a needed stack word could not be read */
    SPOOR_STOP_NO_INFO,             /* no method could unwind the frame */
    SPOOR_STOP_BAD_FRAME,           /* a method produced a frame that cannot be right (SP went down,
                                       PC not code, an exception return outside a handler) */
    SPOOR_STOP_OTHER_STACK,         /* an exception frame is on the other stack (PSP while the walk
                                       is on MSP, or the reverse) and that stack pointer is not in
                                       the input (no SPOOR_HAVE_BANKED_SP, as from QEMU's gdbstub) */
    SPOOR_STOP_BAD_EXCEPTION_FRAME, /* the exception frame was read but cannot be right: its
                                       xPSR names no possible exception, or disagrees with
                                       the EXC_RETURN's mode */
    SPOOR_STOP_TASK_ENTRY,          /* the last frame is a task's function, started by an RTOS
                                       (not called): its return address is the first byte of a
                                       task-exit hook (a known one, or a function nothing calls
                                       and no call precedes); see task_exit_hook */
    SPOOR_STOP_THREAD_ROOT,         /* the last frame is the function an RTOS starts every thread
                                       in and that never returns (Zephyr z_thread_entry, ThreadX
                                       _tx_thread_shell_entry): it has no caller */
} spoor_unwind_stop;

typedef struct spoor_unwind_options {
    unsigned methods;    /* SPOOR_UNWIND_USE_* mask; 0 means SPOOR_UNWIND_ALL */
    unsigned scan_words; /* words the stack scan may look at per frame; 0 means 1024 */
} spoor_unwind_options;

/* Walks the stack from regs. Writes at most max frames (frames[0] is the innermost) and
 * returns how many; *stop (when not NULL) says why the walk ended. read is the only source
 * of stack memory; code is read from the ELF first and from read second. options may be
 * NULL. */
size_t spoor_unwind(const spoor_elf *elf, const spoor_regs *regs, spoor_read_fn read, void *ctx,
                    const spoor_unwind_options *options, spoor_frame *frames, size_t max,
                    spoor_unwind_stop *stop);

/* The state of the code an exception interrupted, read from its hardware-stacked frame
 * (basic or FP extended, MSP or PSP, ARMv8-M additional state context, xPSR alignment
 * bit), for a dump or debugger state taken inside the handler. handler gives r4-r11 (the
 * handler's own, used unless the additional state context holds them) and, with
 * SPOOR_HAVE_BANKED_SP, MSP and PSP as they were when the handler was entered (without them
 * handler->r[13] is taken as MSP). On success interrupted->r[13] is the interrupted SP and
 * interrupted->xpsr the stacked xPSR. False when exc_return is not an EXC_RETURN value or
 * the frame cannot be read (spoor_last_error() says which). */
bool spoor_regs_from_exception(const spoor_regs *handler, uint32_t exc_return, spoor_read_fn read,
                               void *ctx, spoor_regs *interrupted);

/* The address to name a frame by (symbolize, find its function): spoor_lookup_pc()
 * (spoor/thumb.h). */
static inline uint32_t spoor_frame_lookup_pc(const spoor_frame *f)
{
    return spoor_lookup_pc(f->pc, f->pc_is_return);
}

/* Names a call frame: spoor_elf_symbolize_pc() of its pc. */
size_t spoor_frame_symbolize(const spoor_elf *elf, const spoor_frame *f, spoor_location *loc,
                             size_t max);

/* The offset to show after a frame's outermost name: spoor_elf_function_offset() of its pc. */
uint32_t spoor_frame_function_offset(const spoor_elf *elf, const spoor_frame *f,
                                     const spoor_location *innermost);

/* "registers", "cfi", "ehabi", "prologue", "scan", "lr", "exception", "tailcall". */
const char *spoor_unwind_method_name(spoor_unwind_method method);
/* "reset handler", "end of stack", "loop", "frame limit", "unreadable memory",
 * "no unwind information", "bad frame", "other stack pointer unknown (no msp/psp in the
 * input)", "bad exception frame", "task entry", "thread root". */
const char *spoor_unwind_stop_name(spoor_unwind_stop stop);
/* "NMI", "HardFault", ..., "SysTick", "IRQ" for 16 and up, NULL for numbers no exception
 * has (0 thread mode, 1 reset, the reserved 8-10 and 13, negative numbers). */
const char *spoor_exception_name(int number);

#endif
