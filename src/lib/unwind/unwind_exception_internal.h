/* exception_frame.c, for the driver (unwind.c): crossing a hardware-stacked exception frame.
 * Whether a value is an EXC_RETURN and what its bits say: spoor/cortexm_facts.h. */
#ifndef SPOOR_UNWIND_EXCEPTION_INTERNAL_H
#define SPOOR_UNWIND_EXCEPTION_INTERNAL_H

#include "unwind/unwind_frame_internal.h"

/* A hardware-stacked exception frame at frame_addr as described by exc_return. */
typedef struct exception_frame_layout {
    bool fp_frame;         /* extended frame: s0-s15, FPSCR and a reserved word follow */
    bool on_psp;           /* the frame is on the process stack */
    bool additional_state; /* ARMv8-M: integrity signature + r4-r11 precede the frame */
} exception_frame_layout;

exception_frame_layout spoor_unwind_exception_layout(uint32_t exc_return);

/* Reads the exception frame at frame_addr into out (r0-r3, r12, lr, pc, the stacked xPSR
 * in *xpsr, r4-r11 when the additional state context is there) and sets out->r[13] to
 * the interrupted context's SP. */
unwind_result spoor_unwind_exception_step(const unwind_env *env, uint32_t exc_return,
                                          uint32_t frame_addr, unwind_state *out, uint32_t *xpsr);

#endif
