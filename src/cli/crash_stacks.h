/* spoor crash: stack usage (spoor/stack_usage.h), one text line per stack and the JSON "stack"
 * objects: the main stack in the report, each thread's with --threads. docs/crash.md. */
#ifndef SPOOR_CRASH_STACKS_H
#define SPOOR_CRASH_STACKS_H

#include <stdbool.h>

#include "json_out.h"
#include "outbuf.h"
#include "spoor/elf.h"
#include "spoor/rtos.h"
#include "spoor/snapshot.h"
#include "spoor/stack_usage.h"

/* "main stack: ..." after an empty line. */
void crash_stacks_main_text(outbuf *o, const spoor_elf *elf, const spoor_snapshot *snap);
/* The member "main_stack" (null when the ELF names no main stack). */
void crash_stacks_main_json(json_out *j, const spoor_elf *elf, const spoor_snapshot *snap);

/* "    stack: ..." for thread t (current: the thread that runs, whose SP is the snapshot's;
 * fills: spoor_stack_usage_rtos_fills of the RTOS, asked once for all its threads). */
void crash_stacks_thread_text(outbuf *o, const spoor_rtos *r, const spoor_snapshot *snap,
                              const spoor_rtos_thread *t, bool current, bool fills);
/* The member "stack" of a thread's object (null when its TCB records no stack). */
void crash_stacks_thread_json(json_out *j, const spoor_rtos *r, const spoor_snapshot *snap,
                              const spoor_rtos_thread *t, bool current, bool fills);

/* The object key of a stack's use: {"low", "high", "size", "used", "peak", "free_min",
 * "overflowed", "nearly_full", "from"}, null where unknown; null when !u->found. spoor top --stack
 * prints the same. */
void stack_usage_json(json_out *j, const char *key, const spoor_stack_usage *u);

#endif
