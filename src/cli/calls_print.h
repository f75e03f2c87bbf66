/* One record of the call recorder as `spoor calls` prints it (text: "{ SITE->FUNCTION
 * CALLER:OFF->NAME" indented by depth, a context column when the ring has more than one; JSON:
 * {"kind","fn","site","function","caller","depth",...}), shared by spoor calls and spoor crash's
 * "calls" section (docs/calls.md, docs/crash.md). */
#ifndef SPOOR_CALLS_PRINT_H
#define SPOOR_CALLS_PRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json_out.h"
#include "outbuf.h"
#include "spoor/calls_decode.h"
#include "spoor/elf.h"

/* How records are printed: what the ring records, and the text's context column. */
typedef struct calls_view {
    const spoor_elf *elf;
    bool has_time, has_context;
    bool many;       /* more than one context: the text has a context column */
    int label_width; /* its width */
} calls_view;

/* The view of a decoded ring: its options, the column as wide as the widest label. */
void calls_view_of_trace(calls_view *v, const spoor_elf *elf, const spoor_call_trace *t);

/* The function around addr: its name and *offset into it; NULL when no symbol covers it. */
const char *calls_name_at(const spoor_elf *elf, uint32_t addr, uint32_t *offset);

/* "name" or "name+0xOFF" for JSON (site: an EXC_RETURN value is "<exception from ...>"), in
 * buf when it needs one; NULL when no symbol covers addr. */
const char *calls_json_name(const spoor_elf *elf, uint32_t addr, bool site, char *buf, size_t len);

/* The label of a context: "thread", the handler's name or "ctx N" (in id_buf). */
const char *calls_context_label(const calls_view *v, const spoor_call_context *ctx, char *id_buf,
                                size_t id_len);

/* The record's text line, newline included. */
void calls_record_text(outbuf *o, const calls_view *v, const spoor_call_record *r,
                       const spoor_call_context *ctx);

/* The record as one JSON object (an array element, or a JSON Lines document once the caller
 * calls json_finish). */
void calls_record_json(json_out *j, const calls_view *v, const spoor_call_record *r,
                       const spoor_call_context *ctx);

#endif
