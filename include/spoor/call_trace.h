/* The function-call recorder's ring (target/include/spoor/calls.h), decoded: the state object
 * and the ring bytes in, the records out oldest first, each with its context and its depth
 * in that context. Sans-I/O: the caller reads target memory (spoor/memory.h) and hands the
 * bytes over; the decoder checks every field and every bound itself.
 *
 * Layout of the state object and of the records: spoor/dump_format.h ("The function-call
 * recorder"), docs/calls.md. */
#ifndef SPOOR_CALL_TRACE_H
#define SPOOR_CALL_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/dump_format.h"

/* Rings larger than this are refused as corrupt (the state object says so, not the device). */
#define SPOOR_CALLS_MAX_RING (256u << 20)

/* The state object, checked. */
typedef struct spoor_calls_info {
    uint32_t ring;     /* target address */
    uint32_t capacity; /* records */
    uint32_t next;     /* slot written next */
    uint32_t flags;    /* SPOOR_CALLS_FLAG_* */
    unsigned record_size;
    bool has_time, has_context, time_systick;
} spoor_calls_info;

/* Parses SPOOR_CALLS_STATE_SIZE bytes of state object. false with the error set:
 * "call recorder not initialised (spoor_calls_init was not called)", "call recorder state
 * is corrupt: ...". */
bool spoor_calls_parse_state(const uint8_t *bytes, size_t len, spoor_calls_info *out);

/* Bytes of ring the state describes (capacity * record_size). */
size_t spoor_calls_ring_bytes(const spoor_calls_info *st);

typedef enum spoor_call_kind { SPOOR_CALL_ENTER, SPOOR_CALL_EXIT } spoor_call_kind;

/* EXC_RETURN values (the call site of an instrumented exception handler) start here. */
#define SPOOR_CALLS_EXC_RETURN_MIN 0xF0000000u

typedef struct spoor_call_record {
    spoor_call_kind kind;
    uint32_t function; /* the function entered or left, Thumb bit cleared */
    uint32_t site;     /* the return address into the caller (Thumb bit cleared) or EXC_RETURN */
    uint32_t time;     /* the raw timestamp (has_time) */
    uint32_t context_id;
    uint64_t time_ticks; /* time since the first record, unwrapped (has_time) */
    unsigned context;    /* index into spoor_call_trace.contexts */
    int depth;           /* nesting in its context: 0 outermost */
    bool after_gap;      /* one or more records before this one are lost (wrap cut, empty slot) */
} spoor_call_record;

/* A context the records ran in: the thread, an exception handler's invocation (found from
 * EXC_RETURN call sites) or a recorded context id. */
typedef struct spoor_call_context {
    bool handler;        /* an exception handler (EXC_RETURN call site or context id != 0) */
    uint32_t id;         /* the recorded context id, or the handler's function address */
    uint32_t exc_return; /* the EXC_RETURN value of the handler's entry/exit, 0 unknown */
    size_t first;        /* index of its first record */
} spoor_call_context;

typedef struct spoor_call_trace {
    spoor_call_record *records; /* oldest first */
    size_t count;
    spoor_call_context *contexts; /* [0] is the thread context */
    size_t context_count;
    bool wrapped;       /* older records were overwritten: records[0] follows a cut */
    size_t empty_slots; /* slots inside the written part that hold no record */
    bool has_time, has_context;
} spoor_call_trace;

/* Decodes ring (ring_len bytes read at st->ring) into out (free with spoor_call_trace_free).
 * false with the error set: "call ring truncated: N of M bytes", "call ring: record N is
 * corrupt: ...". */
bool spoor_calls_decode(const spoor_calls_info *st, const uint8_t *ring, size_t ring_len,
                        spoor_call_trace *out);
void spoor_call_trace_free(spoor_call_trace *t);

/* Name of an EXC_RETURN value's return state: "thread, MSP", "thread, PSP", "handler", with
 * ", FP" for an extended frame; NULL when value is not an EXC_RETURN. */
const char *spoor_calls_exc_return_text(uint32_t value);

#endif
