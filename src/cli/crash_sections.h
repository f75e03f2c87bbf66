/* spoor crash: what else the input holds besides the registers and the stack, after the
 * backtrace: the last branches the MTB recorded (spoor_mtb_from_dump / spoor_mtb_read) and the
 * last calls of the call recorder's ring (spoor_calls_read), each as spoor mtb and spoor calls
 * print them, newest N, oldest first, with what was lost. Nothing when the input has neither.
 * docs/crash.md. */
#ifndef SPOOR_CRASH_SECTIONS_H
#define SPOOR_CRASH_SECTIONS_H

#include "json_out.h"
#include "outbuf.h"
#include "spoor/elf.h"
#include "spoor/snapshot.h"

/* The sections of the text report (each after an empty line); nbranches, ncalls: the newest N
 * shown (0: that section left out). */
void crash_sections_text(outbuf *o, const spoor_elf *elf, spoor_snapshot *snap, unsigned nbranches,
                         unsigned ncalls);

/* The members "branches", "branches_info", "calls", "calls_info" of the JSON report, each pair
 * only when the input has that trace. */
void crash_sections_json(json_out *j, const spoor_elf *elf, spoor_snapshot *snap,
                         unsigned nbranches, unsigned ncalls);

#endif
