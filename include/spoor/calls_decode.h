/* The function-call recorder's ring (target/include/spoor/calls.h), decoded: the state object
 * and the ring bytes in, the records out oldest first, each with its context and its depth
 * in that context. Sans-I/O: the caller reads target memory (spoor/memory.h) and hands the
 * bytes over; the decoder checks every field and every bound itself.
 *
 * Layout of the state object and of the records: spoor/dump_format.h ("The function-call
 * recorder"), docs/calls.md. */
#ifndef SPOOR_CALLS_DECODE_H
#define SPOOR_CALLS_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/cortexm_facts.h" /* call sites that are EXC_RETURN values: handlers */
#include "spoor/dump_format.h"
#include "spoor/elf.h"
#include "spoor/read.h"

struct spoor_itm_packet;

/* Rings larger than this are refused as corrupt (the state object says so, not the device). */
#define SPOOR_CALLS_MAX_RING (256u << 20)

/* The state object, checked. */
typedef struct spoor_calls_info {
    uint32_t ring;     /* target address */
    uint32_t capacity; /* records */
    uint32_t next;     /* index of the slot written next (whatever the layout) */
    uint32_t flags;    /* SPOOR_CALLS_FLAG_* */
    unsigned record_size;
    unsigned layout; /* SPOOR_CALLS_LAYOUT_*: how the device's state named the next slot */
    bool has_time, has_context, time_systick;
} spoor_calls_info;

/* Parses SPOOR_CALLS_STATE_SIZE bytes of state object, of either layout (format bits 16-23:
 * next an index, or the slot's address). false with the error set:
 * "call recorder not initialised (spoor_calls_init was not called)", "call recorder state
 * is corrupt: ...". */
bool spoor_calls_parse_state(const uint8_t *bytes, size_t len, spoor_calls_info *out);

/* Bytes of ring the state describes (capacity * record_size). */
size_t spoor_calls_ring_bytes(const spoor_calls_info *st);

typedef enum spoor_call_kind { SPOOR_CALL_ENTER, SPOOR_CALL_EXIT } spoor_call_kind;

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

/* The recorder's ring in target memory: finds the state object by the ELF's symbol
 * SPOOR_CALLS_STATE_SYMBOL, reads it and the ring it points to through read (ctx), and decodes
 * them into *info and *out (free with spoor_call_trace_free, also after a failure). input names
 * the memory in the errors. false with the error set: "ELF: no call recorder (no symbol
 * spoor_calls_state: ...)", "INPUT: the call recorder's state (spoor_calls_state, 0xADDR+24) is
 * not in the input", "INPUT: the call ring (0xADDR+LEN) is not in the input", "out of memory",
 * and "INPUT: " before the errors of spoor_calls_parse_state and spoor_calls_decode. */
bool spoor_calls_read(const spoor_elf *elf, spoor_read_fn read, void *ctx, const char *input,
                      spoor_calls_info *info, spoor_call_trace *out);

/* Name of an EXC_RETURN value's return state: "thread, MSP", "thread, PSP", "handler", with
 * ", FP" for an extended frame; NULL when value is not an EXC_RETURN. */
const char *spoor_calls_exc_return_text(uint32_t value);

/* ---- Live records: the recorder's ITM output (spoor_calls_itm) --------------------------
 * The recorder writes each record as two 32-bit words: the function word (as in the ring:
 * bit 0 the kind) to stimulus port P, then the call site to port P+1. An interrupt taken
 * between the two writes sends the handler's whole records in between, so the words pair
 * innermost first: a function word waits on a stack, a call-site word completes the newest
 * waiting one. Words of other ports and other packets in between are ignored.
 *
 * Loss: an ITM overflow packet (the ITM dropped writes before it), bytes the ITM decoder
 * could not decode, a call-site word with no function word waiting, a word that is not a
 * valid function or call site, or more waiting function words than interrupts can nest: the
 * waiting words are dropped and the next record comes with after_gap set. */

#define SPOOR_CALLS_ITM_PENDING 32

typedef enum spoor_calls_loss {
    SPOOR_CALLS_LOSS_NONE,
    SPOOR_CALLS_LOSS_OVERFLOW,    /* an ITM overflow packet */
    SPOOR_CALLS_LOSS_UNDECODABLE, /* an ITM decoder error (bytes skipped to the next sync) */
    SPOOR_CALLS_LOSS_UNPAIRED,    /* a call-site word with no function word before it */
    SPOOR_CALLS_LOSS_BAD_WORD,    /* not a function / call-site word (size, value) */
    SPOOR_CALLS_LOSS_TOO_DEEP,    /* more function words waiting than interrupts nest */
    SPOOR_CALLS_LOSS_SOURCE,      /* the source reported a gap (a TCP reconnect) */
} spoor_calls_loss;

/* What a loss is, in words: "ITM overflow", ... */
const char *spoor_calls_loss_text(spoor_calls_loss why);

typedef struct spoor_calls_itm_pairer {
    uint16_t port; /* P: function words; P+1: call sites */
    uint32_t pending[SPOOR_CALLS_ITM_PENDING];
    unsigned npending;
    spoor_calls_loss loss;    /* a loss since the last record (the first one seen) */
    spoor_calls_loss gap_why; /* the loss before the last record completed (after_gap) */
    uint64_t records;         /* records paired */
    uint64_t losses;          /* loss events */
    uint64_t words_dropped;   /* waiting function words and lone call-site words dropped */
    uint64_t other_ports;     /* software writes on other ports than P and P+1 (ignored) */
    /* writes on P or P+1 whose stimulus port page was unknown (after a gap in the stream, before
     * a sync or page packet: spoor/itm_decoder.h, sw.page_unknown), taken as written */
    uint64_t page_unknown;
} spoor_calls_itm_pairer;

/* port: P (0..254: P+1 must exist). */
void spoor_calls_itm_pairer_init(spoor_calls_itm_pairer *p, unsigned port);

/* Takes one decoded ITM packet (spoor/itm_decoder.h). true when it completed a record: *out then
 * holds kind, function, site and after_gap (the other fields 0); false otherwise. */
bool spoor_calls_itm_pair(spoor_calls_itm_pairer *p, const struct spoor_itm_packet *pkt,
                          spoor_call_record *out);

/* A gap the caller saw (e.g. the source reconnected): as an ITM overflow. */
void spoor_calls_itm_lose(spoor_calls_itm_pairer *p, spoor_calls_loss why);

/* ---- Records one at a time: contexts and depths as they arrive ----------------------------
 * The rules of spoor_calls_decode() for EXC_RETURN contexts, without looking ahead:
 * - an enter whose call site is an EXC_RETURN value opens a handler context (a new index) at
 *   depth 0; the exit with such a site closes it;
 * - depth counts enters and exits per context; an exit at depth 0 (its enter came before the
 *   stream or before a loss) is shown at depth 0 and the depth stays 0;
 * - an exit with an EXC_RETURN site and no handler open (the stream began inside a handler)
 *   gets a handler context of its own; the records before it stay in the context they were
 *   given (spoor_calls_decode() moves them into the handler's: it sees the whole ring);
 * - a loss (spoor_calls_stream_lose) closes every handler context and sets every depth to 0:
 *   the next records start as at the beginning of the stream.
 * For records that begin outside any call, contexts and depths are those spoor_calls_decode()
 * gives the same records in a ring. Memory: a fixed struct, whatever the stream's length. */

#define SPOOR_CALLS_STREAM_NEST 64

typedef struct spoor_calls_stream {
    spoor_call_context open[SPOOR_CALLS_STREAM_NEST + 1]; /* [0] the thread */
    unsigned index[SPOOR_CALLS_STREAM_NEST + 1];          /* their context indices */
    int depth[SPOOR_CALLS_STREAM_NEST + 1];
    unsigned nopen;         /* handlers open */
    unsigned contexts;      /* context indices given so far */
    size_t count;           /* records added */
    spoor_call_context ctx; /* the context of the last record added */
} spoor_calls_stream;

void spoor_calls_stream_init(spoor_calls_stream *s);

/* Gives r its context (r->context; *ctx describes it, until the next call) and depth. A record
 * with after_gap set first does spoor_calls_stream_lose(). */
void spoor_calls_stream_add(spoor_calls_stream *s, spoor_call_record *r,
                            const spoor_call_context **ctx);

/* Records were lost: handlers closed, depths 0. */
void spoor_calls_stream_lose(spoor_calls_stream *s);

#endif
