/* A run of `spoor top` as a library session: the events of a trace pump (spoor/trace_pump.h)
 * in; for every interval a report (spoor/top_stats.h) with the threads behind its TCBs, read from
 * target memory through the RTOS layer, out. The session is the pump's callback:
 *
 *     spoor_top_session *s = spoor_top_session_new(&cfg, &cb);   // cb: the outputs
 *     spoor_trace_pump *p = spoor_trace_pump_open(spec, 10, &pump_cfg,
 *                                                 spoor_top_session_event, s);
 *     spoor_top_session_start(s);   // a target halted for the first reads may run now
 *     spoor_trace_pump_run(p);
 *
 * What it does with each packet, in order:
 *   - time: the stream's local timestamps (cycles times the prescaler); a live stream that
 *     carries none (16 packets, or 100 ms after the first, without one; syncs do not count) is
 *     timed by the host's clock (config.now_ns) in cycles of cpu_hz since its first packet; from
 *     its first timestamp on the stream's clock counts, continuing where the host's stopped. A
 *     recorded stream without timestamps has time 0 throughout.
 *   - statistics: spoor_top_packet (switches are data trace values of config.comparator);
 *   - threads: a TCB seen for the first time is read while it is current: its name, priority,
 *     state, entry function (the TCB's, its initial frame's, or the outermost frame of a
 *     backtrace, tried up to 3 times while it is not found) and, with config.stack, its stack
 *     use. At the end of each interval, on a live target (a GDB server or OpenOCD), the threads
 *     that ran are read again in full (a TCB taken by a new thread gets the new name and entry
 *     function), the others' states and priorities.
 * Callbacks are the outputs only: a report, a switch, an exception activation, a packet with
 * its time, and notices (what a caller may want to tell its user). */
#ifndef SPOOR_TOP_SESSION_H
#define SPOOR_TOP_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/elf.h"
#include "spoor/itm_decoder.h"
#include "spoor/rtos.h"
#include "spoor/snapshot.h"
#include "spoor/stack_usage.h"
#include "spoor/top_stats.h"
#include "spoor/trace_pump.h"

/* What the session knows of a thread. */
typedef struct spoor_top_thread_info {
    uint32_t tcb;
    bool read_ok;         /* the TCB was read */
    char name[48];        /* the RTOS's name, or a stand-in ("(no thread)", "(start-up)", "?");
                             "" without an RTOS (a thread is its TCB address) */
    const char *func;     /* the entry function's name, or NULL */
    unsigned entry_tries; /* backtraces tried for the entry function */
    bool has_prio;
    int32_t prio;
    const char *prio_name; /* the RTOS's name of the priority, or NULL */
    bool has_stack;        /* config.stack: the stack was read (stack.found may still be false) */
    spoor_stack_usage stack;
    bool unlisted;          /* the TCB is on none of the RTOS's thread lists: "(start-up)" */
    spoor_rtos_state state; /* as last read (when it was switched in, or re-read live) */
} spoor_top_thread_info;

typedef enum spoor_top_notice {
    /* the stream's first packet (before it is counted) */
    SPOOR_TOP_NOTICE_FIRST_PACKET,
    /* a live stream without timestamps is timed by the host's clock from now on (once) */
    SPOOR_TOP_NOTICE_HOST_CLOCK,
    /* the comparator sends match packets, which carry no value (once) */
    SPOOR_TOP_NOTICE_MATCH_WITHOUT_VALUE,
    /* the idle thread could not be read (text: why): its time counts as busy */
    SPOOR_TOP_NOTICE_IDLE_UNKNOWN,
    /* a thread could not be read, or a running target not resumed (text: why) */
    SPOOR_TOP_NOTICE_TARGET_READ,
    /* the pump's source reconnected: the stream has a gap here */
    SPOOR_TOP_NOTICE_RECONNECTED,
    /* the pump's source failed (text: why) */
    SPOOR_TOP_NOTICE_STREAM_ERROR,
} spoor_top_notice;

typedef struct spoor_top_session_config {
    uint64_t cpu_hz;        /* the core clock: cycles per second (> 0) */
    uint32_t interval_ms;   /* the interval (> 0; at least one cycle) */
    uint32_t prescaler;     /* cycles per local timestamp tick (0 or 1: 1) */
    unsigned comparator;    /* the DWT comparator watching the current-thread pointer */
    bool live;              /* a live stream: the host's clock may stand in for timestamps */
    bool stack;             /* read each thread's stack use */
    uint64_t max_intervals; /* stop after this many intervals (0: at the end of the stream) */
    const spoor_elf *elf;   /* the firmware (borrowed) */
    const spoor_rtos *rtos; /* the RTOS layer (borrowed), or NULL: threads are TCB addresses */
    /* target memory (borrowed; spoor_snapshot_open with memory_only), or NULL: no TCB is read.
     * A live target behind a GDB server with config.live runs between batches of reads (each
     * read halts it); its reads are fresh each time a thread is read. */
    spoor_snapshot *target;
    /* the host's monotonic clock in nanoseconds, for a live stream (NULL: CLOCK_MONOTONIC) */
    uint64_t (*now_ns)(void *ctx);
    void *now_ctx;
} spoor_top_session_config;

typedef struct spoor_top_session_callbacks {
    /* an interval ended (threads re-read first on a live target), or the run (summary) */
    void (*report)(void *ctx, const spoor_top_report *r);
    /* a thread switch (next's thread read first: spoor_top_session_thread) */
    void (*on_switch)(void *ctx, uint64_t time, uint32_t prev, bool prev_known, uint32_t next);
    /* an exception activation ended (spoor_top_callbacks.on_exception) */
    void (*on_exception)(void *ctx, unsigned number, uint64_t enter, bool enter_known,
                         uint64_t exit, unsigned depth);
    /* a packet with its time, before it is counted */
    void (*on_packet)(void *ctx, const spoor_itm_packet *p);
    /* text: NULL, or why (valid during the call) */
    void (*notice)(void *ctx, spoor_top_notice notice, const char *text);
    void *ctx;
} spoor_top_session_callbacks;

typedef struct spoor_top_session spoor_top_session;

/* A session. Reads the idle thread now (a live stream with a GDB server: with the first
 * thread, when the target has run its start-up code). NULL with the error set for a config
 * out of range or when memory runs out. */
spoor_top_session *spoor_top_session_new(const spoor_top_session_config *cfg,
                                         const spoor_top_session_callbacks *cb);
void spoor_top_session_free(spoor_top_session *s);

/* The trace pump's callback (spoor_trace_pump_fn; ctx is the session): false once the
 * session has stopped (config.max_intervals reached, the target's connection lost). */
bool spoor_top_session_event(void *ctx, const spoor_trace_pump_event *event);

/* The stream is connected: a live target halted for the session's first reads may run. */
void spoor_top_session_start(spoor_top_session *s);

/* The thread of a TCB (never NULL): read the first time it is asked for. */
const spoor_top_thread_info *spoor_top_session_thread(spoor_top_session *s, uint32_t tcb);

/* The thread running now (false before the first switch). */
bool spoor_top_session_current(const spoor_top_session *s, uint32_t *tcb);

/* NULL while the live target's connection works; once it failed (closed, timed out), why:
 * the session has stopped. */
const char *spoor_top_session_lost(spoor_top_session *s);

typedef struct spoor_top_session_status {
    bool any_packet;           /* the stream had a packet */
    bool any_switch;           /* ... a thread switch */
    bool stream_timed;         /* a local timestamp came */
    bool host_timed;           /* the host's clock counted (a live stream without timestamps) */
    bool intervals_done;       /* stopped at config.max_intervals */
    bool idle_known;           /* the idle thread was read (or there is none to read) */
    unsigned comparators_seen; /* bit k: a data trace packet of comparator k came */
    uint64_t now;              /* the time of the last event, in cycles */
    size_t nthreads;           /* threads read */
} spoor_top_session_status;

void spoor_top_session_status_get(const spoor_top_session *s, spoor_top_session_status *st);

/* Flags of spoor_top_session_report_json. */
#define SPOOR_TOP_JSON_EXCEPTIONS 1u /* the report's exceptions (spoor top -E) */
/* with EXCEPTIONS: the exceptions as one line {"ex":1,...} each after the report's, not as
 * its "exceptions" member (spoor top -j udp:, one datagram a line) */
#define SPOOR_TOP_JSON_EXCEPTION_LINES 2u

/* The JSON of a report of this session (from its report callback), as `spoor top --json`
 * writes it (docs/top.md, "JSON"): one object on one line ending in a newline, each thread as
 * the session knows it (spoor_top_session_thread) with its "stack" when config.stack,
 * "idle_known" the session's, times in ms of config.cpu_hz. Malloc'd and NUL-terminated (the
 * caller frees it), *len its length; NULL with the error set when memory runs out. */
char *spoor_top_session_report_json(spoor_top_session *s, const spoor_top_report *r, unsigned flags,
                                    size_t *len);

#endif
