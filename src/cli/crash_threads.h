/* spoor crash --threads: every thread the RTOS knows, with a backtrace each (the current one
 * from the snapshot's registers, the others from the context their RTOS saved). */
#ifndef SPOOR_CRASH_THREADS_H
#define SPOOR_CRASH_THREADS_H

#include <stddef.h>

#include "json_out.h"
#include "outbuf.h"
#include "spoor/snapshot.h"
#include "spoor/unwind.h"

/* The threads section of the text report; current_frames and current_stop: the backtrace of the
 * snapshot (the current thread's). */
void crash_threads_text(outbuf *o, const spoor_elf *elf, const spoor_snapshot *snap,
                        const spoor_frame *current_frames, size_t ncurrent,
                        spoor_unwind_stop current_stop);
/* The "threads" member of the JSON report. */
void crash_threads_json(json_out *j, const spoor_elf *elf, const spoor_snapshot *snap,
                        const spoor_frame *current_frames, size_t ncurrent,
                        spoor_unwind_stop current_stop);

#endif
