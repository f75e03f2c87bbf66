/* The frames of a backtrace as JSON, one writer for spoor crash's "backtrace" and each
 * thread's "backtrace" of --threads (docs/crash.md): an entry per function, inlined ones
 * innermost first, exception entries where the walk crossed a hardware-stacked frame. */
#ifndef SPOOR_CRASH_FRAMES_H
#define SPOOR_CRASH_FRAMES_H

#include <stddef.h>

#include "json_out.h"
#include "spoor/elf.h"
#include "spoor/unwind.h"

/* Writes the member "backtrace": [...] of the object j is in. */
void crash_frames_json(json_out *j, const spoor_elf *elf, const spoor_frame *frames, size_t n);

#endif
