/* How call-recorder records are named (the functions, the call sites, the contexts: a handler,
 * a thread after its TCB) and written as JSON, shared by spoor calls, spoor crash's "calls"
 * section and libspoor's crash report (docs/calls.md, docs/crash.md). */
#ifndef SPOOR_UTIL_CALLS_VIEW_H
#define SPOOR_UTIL_CALLS_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/calls_decode.h"
#include "spoor/elf.h"
#include "spoor/read.h"
#include "util/json_write.h"

/* Linked as spoor_calls_* (util/outbuf.h says why), called by their short names. */
#define calls_view_of_trace spoor_calls_view_of_trace
#define calls_name_at spoor_calls_name_at
#define calls_json_name spoor_calls_json_name
#define calls_context_label spoor_calls_context_label
#define calls_record_json spoor_calls_record_json

#define CALLS_NAMED_MAX 64 /* recorded context ids named after their thread, at most */
#define CALLS_LABEL_MAX 80 /* a context label's buffer */

/* How records are printed: what the ring records, and the text's context column. */
typedef struct calls_view {
    const spoor_elf *elf;
    bool has_time, has_context;
    bool many;       /* more than one context: the text has a context column */
    int label_width; /* its width */
    /* recorded context ids that are the TCB of a thread the RTOS layer reads, with its name */
    size_t nnamed;
    struct calls_named {
        uint32_t id;
        char name[48];
    } named[CALLS_NAMED_MAX];
} calls_view;

/* The view of a decoded ring: its options, the column as wide as the widest label. With read
 * (may be NULL: no memory), a recorded context id that is the address of a thread's TCB in that
 * memory (spoor/rtos.h, the RTOS the ELF has) is named after the thread. */
void calls_view_of_trace(calls_view *v, const spoor_elf *elf, const spoor_call_trace *t,
                         spoor_read_fn read, void *read_ctx);

/* The function around addr: its name and *offset into it; NULL when no symbol covers it. */
const char *calls_name_at(const spoor_elf *elf, uint32_t addr, uint32_t *offset);

/* "name" or "name+0xOFF" for JSON (site: an EXC_RETURN value is "<exception from ...>"), in
 * buf when it needs one; NULL when no symbol covers addr. */
const char *calls_json_name(const spoor_elf *elf, uint32_t addr, bool site, char *buf, size_t len);

/* The label of a context: "thread", the handler's name, or a recorded id (in id_buf, at least
 * CALLS_LABEL_MAX bytes): "ctx N" for a small one (an exception number, IPSR), else "ctx 0xID"
 * with " (NAME)" when it is a thread's TCB. */
const char *calls_context_label(const calls_view *v, const spoor_call_context *ctx, char *id_buf,
                                size_t id_len);

/* The record as one JSON object (an array element, or a JSON Lines document once the caller
 * calls json_finish). */
void calls_record_json(json_out *j, const calls_view *v, const spoor_call_record *r,
                       const spoor_call_context *ctx);

#endif
