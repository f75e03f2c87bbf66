/* The JSON of records several reports share: a backtrace's frames (spoor crash's "backtrace" and
 * each thread's), a stack's use (spoor crash's "main_stack" and threads' "stack", spoor top
 * --stack), an MTB packet (spoor mtb --json, spoor crash's "branches"). docs/crash.md,
 * docs/mtb.md, docs/top.md. */
#ifndef SPOOR_UTIL_RECORD_JSON_H
#define SPOOR_UTIL_RECORD_JSON_H

#include <stddef.h>

#include "spoor/elf.h"
#include "spoor/mtb_decode.h"
#include "spoor/stack_usage.h"
#include "spoor/unwind.h"
#include "util/json_write.h"

/* Linked as spoor_* (util/outbuf.h says why), called by their short names. */
#define frames_json spoor_frames_json
#define stack_usage_json spoor_stack_usage_json
#define mtb_packet_json spoor_mtb_packet_json

/* The member "backtrace": [...] of the object j is in: an entry per function, inlined ones
 * innermost first, exception entries where the walk crossed a hardware-stacked frame. */
void frames_json(json_out *j, const spoor_elf *elf, const spoor_frame *frames, size_t n);

/* The object key of a stack's use: {"low", "high", "size", "used", "peak", "free_min",
 * "overflowed", "nearly_full", "from"}, null where unknown; null when !u->found. */
void stack_usage_json(json_out *j, const char *key, const spoor_stack_usage *u);

/* The packet as one JSON object {"src","dst","a","s","kind"} (an array element, or a JSON Lines
 * document once the caller calls json_finish). */
void mtb_packet_json(json_out *j, const spoor_mtb_packet *p);

#endif
