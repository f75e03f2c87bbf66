/* task_entry.c, for the driver (unwind.c): whether a return address a method found is
 * believable when it is a function's first byte. */
#ifndef SPOOR_UNWIND_TASK_ENTRY_INTERNAL_H
#define SPOOR_UNWIND_TASK_ENTRY_INTERNAL_H

#include "unwind/unwind_frame_internal.h"

/* What a return address that is a function's first byte is (any other return
 * address is UNWIND_RETURN_CALL). callee_entry is the entry of the frame's own function (0
 * when unknown). */
typedef enum unwind_return_kind {
    UNWIND_RETURN_CALL,       /* a return from a call (the instruction before it can be one) */
    UNWIND_RETURN_TASK_START, /* a task-exit hook an RTOS made a task's first return address:
                                 the frame is the task's function; *hook is the hook's entry */
    UNWIND_RETURN_NONE,       /* a function's first byte no call returns to: not believable */
} unwind_return_kind;

unwind_return_kind spoor_unwind_return_kind(const unwind_env *env, uint32_t return_address,
                                            uint32_t callee_entry, uint32_t *hook);

/* True when addr is in a function an RTOS starts every thread in and that never returns
 * (Zephyr lib/os/thread_entry.c z_thread_entry, ThreadX common/src/tx_thread_shell_entry.c
 * _tx_thread_shell_entry): a thread's walk ends there, whatever its stack holds above. */
bool spoor_unwind_thread_root(const spoor_elf *elf, uint32_t addr);

#endif
