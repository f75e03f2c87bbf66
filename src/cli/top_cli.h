/* spoor top's pieces inside the CLI: the options and the stream (cmd_top.c), target memory,
 * the threads as the RTOS layer reads them and the ITM/DWT set-up (top_target.c), the console
 * table (top_console.c), the JSON lines (top_json.c) and the trace files for viewers
 * (top_trace_files.c: ftrace text, Chrome trace-event JSON). */
#ifndef SPOOR_TOP_CLI_H
#define SPOOR_TOP_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "chrome_trace.h"
#include "outbuf.h"
#include "spoor/dump.h"
#include "spoor/elf.h"
#include "spoor/gdb_remote.h"
#include "spoor/memory.h"
#include "spoor/openocd.h"
#include "spoor/rtos.h"
#include "spoor/stack_usage.h"
#include "spoor/top_stats.h"

/* What the output knows of a thread. */
typedef struct top_thread_info {
    uint32_t tcb;
    bool read_ok;
    char name[48];        /* the RTOS's name, or a stand-in ("(no thread)", "?") */
    const char *func;     /* the entry function's name, or NULL */
    unsigned entry_tries; /* backtraces tried for the entry function (top_target.c) */
    bool has_prio;
    int32_t prio;
    const char *prio_name; /* the RTOS's name of the priority, or NULL */
    bool has_stack;        /* --stack: stack was read (stack.found may still be false) */
    spoor_stack_usage stack;
    bool unlisted;          /* the TCB is on none of the RTOS's thread lists: named "(start-up)" */
    spoor_rtos_state state; /* as last read (when it was switched in, or re-read live) */
} top_thread_info;

typedef struct top_view {
    const char *rtos_name; /* "FreeRTOS", ... */
    uint64_t cpu_hz;       /* -F */
    uint32_t interval_ms;  /* -I */
    bool exceptions;       /* -E */
    unsigned cols;         /* the terminal's width for the in-place console; 0 unknown */
    bool idle_unknown;     /* the RTOS's idle thread could not be read: its time counts as busy */
    bool stack;            /* --stack: the stack columns and JSON "stack" objects */
    /* the thread behind a TCB (never NULL: a stand-in when unknown) */
    const top_thread_info *(*thread)(void *ctx, uint32_t tcb);
    void *ctx;
} top_view;

/* cycles in milliseconds / seconds at the view's clock */
double top_ms(const top_view *v, uint64_t cycles);

/* "15 (SysTick)", "37 (IRQ 21)" */
void top_exception_label(unsigned number, char *buf, size_t cap);

/* The console table of one report (threads, then exceptions with -E); refresh: in place on a
 * terminal (lines cut at v->cols), else plain lines. */
void top_console_report(outbuf *o, const top_view *v, const spoor_top_report *r, bool refresh);

/* One JSON object for a report (one line); with separate_ex the exceptions go in separate
 * {"ex":1,...} lines after it instead of an "exceptions" member. udp_refused (-j udp:): each
 * line is sent as a datagram, and the sends that found nobody listening are counted there. */
void top_json_report(outbuf *o, const top_view *v, const spoor_top_report *r, bool separate_ex,
                     uint64_t *udp_refused);

/* -j FILE or -j udp:[HOST:]PORT (datagrams to HOST, default 127.0.0.1, *udp set): *fd for the
 * JSON lines; 0 or the exit status of the one-line error. */
int top_json_open(const char *arg, int *fd, bool *udp);

/* The ftrace text file (Linux ftrace "nop" tracer output with sched_switch events). */
typedef struct top_ftrace {
    FILE *f;
    long count_at; /* file position of the entry counts in the header */
    uint64_t entries;
} top_ftrace;
bool top_ftrace_open(top_ftrace *t, const char *path);
void top_ftrace_switch(top_ftrace *t, const top_view *v, uint64_t time, uint32_t prev,
                       bool prev_known, uint32_t next);
/* running_known false: no thread has run yet ("<unknown>", as a switch's unknown prev) */
void top_ftrace_exception(top_ftrace *t, const top_view *v, uint64_t time, unsigned number,
                          bool entry, bool running_known, uint32_t running);
bool top_ftrace_close(top_ftrace *t);

/* The Chrome trace-event JSON file: one track per thread, exceptions as slices on their own. */
typedef struct top_chrome {
    chrome_trace trace; /* trace.ob: open */
    bool have_current;
    uint32_t current;
    uint64_t since;
    uint32_t seen[SPOOR_TOP_MAX_THREADS];
    size_t nseen;
} top_chrome;
bool top_chrome_open(top_chrome *c, const char *path);
void top_chrome_switch(top_chrome *c, const top_view *v, uint64_t time, uint32_t next);
void top_chrome_exception(top_chrome *c, const top_view *v, unsigned number, uint64_t enter,
                          uint64_t exit, unsigned depth);
bool top_chrome_close(top_chrome *c, const top_view *v, uint64_t end);

/* The time of the packets: the stream's local timestamps (target cycles: ITM_TCR.TSENA, times
 * the prescaler). A live stream that carries none (TSENA 0: 16 packets, or 100 ms after the
 * first, without one; syncs do not count) is timed by the host's monotonic clock at reception, in
 * cycles of -F since its first packet, as orbtop-rtos times every stream; from its first local
 * timestamp on the stream's clock counts, continuing where the host's stopped. A recorded stream
 * without timestamps has no time (top_explain_stream says so). */
typedef struct top_clock {
    bool live;   /* -s: the host's clock may stand in */
    uint64_t hz; /* -F */
    uint32_t prescaler;
    bool stream;         /* a local timestamp came: the stream's clock counts */
    bool used_host;      /* no timestamps: the host's clock counts */
    unsigned undated;    /* live packets without a timestamp before the host's clock counted */
    uint64_t first_ns;   /* the host's clock at the first packet (0: none yet) */
    uint64_t undated_ns; /* ... at the first packet other than a sync (0: none yet) */
    uint64_t offset;     /* added to the stream's time (where the host's clock was) */
    uint64_t last;       /* the latest time given: time never goes back */
} top_clock;
void top_clock_init(top_clock *k, bool live, uint64_t hz, uint32_t prescaler);
/* The time of packet p (never less than the time before). */
uint64_t top_clock_packet(top_clock *k, const spoor_itm_packet *p);
/* A quiet live stream timed by the host: *now is the host's time (true), so that intervals end
 * while nothing comes; false when the stream's clock counts. */
bool top_clock_idle(top_clock *k, uint64_t *now);

/* One run of spoor top. */
struct top_cli {
    spoor_elf *elf;
    spoor_rtos *rtos;
    spoor_mem *mem;
    spoor_gdb *gdb;
    spoor_openocd *openocd;
    spoor_dump *dump;
    spoor_top *stats;
    top_view view;
    top_thread_info *threads;
    size_t nthreads;
    top_thread_info unknown; /* a TCB beyond the table */
    unsigned comparator;
    uint64_t max_intervals;
    bool stop, console, refresh, udp;
    bool live;         /* -s with --gdb: the target runs, halted only for reads (let_run) */
    bool idle_pending; /* live: the idle thread is read with the first thread (RAM set up) */
    outbuf *out, *json;
    top_ftrace ftrace;
    top_chrome chrome;
    bool have_current;
    uint32_t current;
    uint64_t last_time;
    bool warned_match; /* the watched comparator sends match packets without values */
    bool any_packet;   /* the stream had a packet (else it was empty: no table) */
    bool no_memory;    /* no target memory given: TCBs are not read (top_explain_no_memory) */
    unsigned comparators_seen; /* bit k: a data trace packet of comparator k came */
    int tpiu_id;               /* -p TPIU / --tpiu: the trace source ID decoded */
    const char *spec;          /* the stream's SOURCE (spoor/trace_source.h) */
    int status;                /* the exit status so far */
    uint32_t prescaler;        /* --prescaler: cycles per local timestamp tick (0, 1: none) */
    top_clock clock;           /* the packets' time */
    bool said_host_clock;      /* top_explain_host_clock */
    uint64_t udp_refused;      /* -j udp: datagrams that found no listener */
    char lost[200];            /* why the live target's connection was lost; "" while it works */
    int fills;                 /* --stack: the RTOS fills its stacks (1), not (0), not asked (-1) */
};

/* top_target.c. true when the OpenOCD or GDB connection has failed (closed, timed out): spoor
 * top stops (c->stop) and says why once (c->lost), instead of a warning per thread. */
bool top_connection_lost(struct top_cli *c);
/* Reads the RTOS's idle thread and marks it; when it cannot be read, warns once and marks the
 * view (the CPU figures then include the idle thread's time). */
void top_read_idle(struct top_cli *c);
/* A live stream with --gdb: the target runs between batches of reads (each read halts it). */
void top_let_run(struct top_cli *c);
/* The thread of a TCB (top_view's thread callback; ctx is the top_cli): read through the RTOS
 * layer the first time it is seen. */
const top_thread_info *top_thread(void *ctx, uint32_t tcb);
/* Re-reads, on a live target, the threads that ran in the interval: priority, a TCB taken by a
 * new thread, an entry function not found yet, and with --stack the stack's use. */
void top_refresh_priorities(struct top_cli *c, const spoor_top_report *r);
/* The RTOS layer for -T KIND (c->rtos); with auto and no RTOS in the ELF (and no --setup,
 * which needs its current-thread pointer) a warning and c->rtos NULL: threads are TCB
 * addresses. 0 or the exit status of the one-line error. */
int top_open_rtos(struct top_cli *c, const char *kind, bool setup);
/* The memory view: the ELF, then -W, --gdb, DUMP and --mem; 0 or the exit status of the
 * one-line error. */
int top_open_memory(struct top_cli *c, const char *gdb, const char *telnet, const char *dump,
                    const spoor_raw_memory *mems, size_t nmems);
/* --setup v7m|v8m|proc through the live target; 0 or the exit status of the one-line error. */
int top_set_up_trace(struct top_cli *c, const char *how, unsigned comparator);
/* --stats: the memory view's counters (and the halts of a running target) on stderr. */
void top_print_mem_stats(const struct top_cli *c);
void top_cleanup(struct top_cli *c);

/* top_explain.c: why the output is empty or partial, once on stderr. */
struct spoor_trace_pump;
/* Notes the comparators of the stream's data trace packets. */
void top_note_packet(struct top_cli *c, const spoor_itm_packet *p);
/* Whether the first bytes of the stream look TPIU-formatted (spoor_tpiu_looks_framed). */
bool top_stream_looks_tpiu(const struct spoor_trace_pump *pump);
/* After the stream: an empty stream is an error (its exit status returned); bytes lost in a
 * stream that looks TPIU-formatted read without --tpiu, and a stream without a thread switch
 * (packets by type, comparators that matched, what to check), are warnings (0). */
int top_explain_stream(struct top_cli *c, const struct spoor_trace_pump *pump, bool tpiu);
/* A live stream without timestamps, timed by the host's clock: says so, once. */
void top_explain_host_clock(struct top_cli *c);
/* No target memory for an RTOS's TCBs: which flags would give names, once. */
void top_explain_no_memory(const struct top_cli *c, bool memory_given);

#endif
