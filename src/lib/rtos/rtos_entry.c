/* A thread's entry function from its own backtrace (spoor/rtos.h): the outermost frame of the
 * walk from the context the thread saved when it was switched out. */
#include "base/set_error.h"
#include "rtos/rtos_internal.h"
#include "spoor/unwind.h"

#define ENTRY_MAX_FRAMES 64

bool spoor_rtos_entry_from_backtrace(const spoor_rtos *r, spoor_read_fn read, void *ctx,
                                     const spoor_rtos_thread *t, const spoor_regs *running,
                                     uint32_t *entry)
{
    spoor_regs regs;
    if (running)
        regs = *running;
    else if (!spoor_rtos_saved_regs(r, read, ctx, t, &regs))
        return false;
    const spoor_elf *elf = r->elf;
    spoor_frame frames[ENTRY_MAX_FRAMES];
    spoor_unwind_stop stop;
    size_t n = spoor_unwind(elf, &regs, read, ctx, NULL, frames, ENTRY_MAX_FRAMES, &stop);
    /* only a walk that ended where the thread started names its function: a task-exit hook
     * as the return address (the RTOS started it), or the return address 0 a port puts there */
    if (!n || (stop != SPOOR_STOP_TASK_ENTRY && stop != SPOOR_STOP_END_OF_STACK)) {
        spoor_set_error(SPOOR_ERR_UNAVAILABLE,
                        "TCB 0x%08x: the backtrace does not reach the thread's start (%s)", t->tcb,
                        spoor_unwind_stop_name(stop));
        return false;
    }
    const spoor_frame *last = &frames[n - 1];
    uint32_t start;
    if (last->kind != SPOOR_FRAME_CALL ||
        !spoor_elf_function(elf, spoor_frame_lookup_pc(last), NULL, &start, NULL)) {
        spoor_set_error(SPOOR_ERR_UNAVAILABLE,
                        "TCB 0x%08x: the outermost frame (0x%08x) is in no known function", t->tcb,
                        last->pc);
        return false;
    }
    *entry = start & ~1u;
    return true;
}
