/* The unwind methods, for the driver (unwind.c) only: a method never calls another method,
 * and what they share is in unwind_frame_internal.h (tests/lint/check_library.py checks both). */
#ifndef SPOOR_UNWIND_METHODS_INTERNAL_H
#define SPOOR_UNWIND_METHODS_INTERNAL_H

#include "unwind/unwind_frame_internal.h"

/* Each method turns the state of a frame (callee) into the state of its caller: on
 * UNWIND_OK, out->r[15] is the raw return address (Thumb bit set, or an EXC_RETURN value),
 * out->r[13] the caller's SP, and callee-saved registers the method restored are known. */
unwind_result spoor_unwind_cfi_step(const unwind_env *env, const unwind_state *in,
                                    unwind_state *out);
unwind_result spoor_unwind_ehabi_step(const unwind_env *env, const unwind_state *in,
                                      unwind_state *out);
unwind_result spoor_unwind_prologue_step(const unwind_env *env, const unwind_state *in,
                                         unwind_state *out);
unwind_result spoor_unwind_scan_step(const unwind_env *env, const unwind_state *in,
                                     unwind_state *out);

#endif
