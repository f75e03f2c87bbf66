/* spoor top's pieces inside the CLI: the options, the stream and the outputs of the library
 * session (spoor/top_session.h; cmd_top.c), target memory and the ITM/DWT set-up
 * (top_target.c), the console table (top_console.c), the JSON lines (top_json.c) and the trace
 * files for viewers (top_trace_files.c: ftrace text, Chrome trace-event JSON). */
#ifndef SPOOR_TOP_CLI_H
#define SPOOR_TOP_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "chrome_trace.h"
#include "spoor/dump.h"
#include "spoor/elf.h"
#include "spoor/gdb_remote.h"
#include "spoor/memory.h"
#include "spoor/openocd.h"
#include "spoor/rtos.h"
#include "spoor/snapshot.h"
#include "spoor/stack_usage.h"
#include "spoor/top_session.h"
#include "spoor/top_stats.h"
#include "util/outbuf.h"

/* What the output knows of a thread: the session's. */
typedef spoor_top_thread_info top_thread_info;

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

/* One JSON object for a report of session s (one line), its exceptions with exceptions (-E).
 * udp_refused (-j udp:): the exceptions go in separate {"ex":1,...} lines after it instead of
 * an "exceptions" member, each line is sent as a datagram, and the sends that found nobody
 * listening are counted there. */
void top_json_report(outbuf *o, spoor_top_session *s, const spoor_top_report *r, bool exceptions,
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

/* One run of spoor top. */
struct top_cli {
    spoor_elf *elf;
    spoor_rtos *rtos;
    spoor_snapshot *target; /* target memory, or NULL */
    spoor_top_session *session;
    top_view view;
    unsigned comparator;
    bool console, refresh, udp;
    outbuf *out, *json;
    top_ftrace ftrace;
    top_chrome chrome;
    int tpiu_id;          /* -p TPIU / --tpiu: the trace source ID decoded */
    const char *spec;     /* the stream's SOURCE (spoor/trace_source.h) */
    int status;           /* the exit status so far */
    uint64_t udp_refused; /* -j udp: datagrams that found no listener */
};

/* top_target.c. */
/* The RTOS layer for -T KIND (c->rtos); with auto and no RTOS in the ELF (and no --setup,
 * which needs its current-thread pointer) a warning and c->rtos NULL: threads are TCB
 * addresses. 0 or the exit status of the one-line error. */
int top_open_rtos(struct top_cli *c, const char *kind, bool setup);
/* The target memory of --gdb, -W, DUMP and --mem (c->target; NULL when none is given): the
 * snapshot's layers; 0 or the exit status of the one-line error. */
int top_open_memory(struct top_cli *c, const char *gdb, const char *telnet, const char *dump,
                    const spoor_raw_memory *mems, size_t nmems);
/* --setup v7m|v8m|proc through the live target; 0 or the exit status of the one-line error. */
int top_set_up_trace(struct top_cli *c, const char *how, unsigned comparator);
/* --stats: the memory view's counters (and the halts of a running target) on stderr. */
void top_print_mem_stats(const struct top_cli *c, bool live);
void top_cleanup(struct top_cli *c);

/* top_explain.c: why the output is empty or partial, once on stderr. */
struct spoor_trace_pump;
/* Whether the first bytes of the stream look TPIU-formatted (spoor_tpiu_looks_framed). */
bool top_stream_looks_tpiu(const struct spoor_trace_pump *pump);
/* After the stream: an empty stream is an error (its exit status returned); bytes lost in a
 * stream that looks TPIU-formatted read without --tpiu, and a stream without a thread switch
 * (packets by type, comparators that matched, what to check), are warnings (0). */
int top_explain_stream(struct top_cli *c, const struct spoor_trace_pump *pump, bool tpiu);
/* A live stream without timestamps, timed by the host's clock: says so. */
void top_explain_host_clock(const struct top_cli *c);
/* No target memory for an RTOS's TCBs: which flags would give names. */
void top_explain_no_memory(const struct top_cli *c);

#endif
