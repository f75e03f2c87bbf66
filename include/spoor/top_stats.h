/* The statistics of `spoor top`, sans I/O: thread switches and exception trace in, one report
 * per interval of target time out.
 *
 * Time is what the ITM decoder gives each packet (spoor_itm_packet.time: the accumulated local
 * timestamps, in CPU cycles when the timestamp prescaler is 1), counted from the start of the
 * stream (time 0). Interval k covers [k*L, (k+1)*L) for an interval length of L cycles; a thread
 * or an exception running across a boundary is split there. When time jumps over many
 * intervals at once (a large timestamp), the first two intervals with no event after the last
 * event are reported one by one and the rest up to the next event as one report (quiet).
 *
 * Threads: a switch is a write of a new value to the RTOS's current-thread pointer (a DWT data
 * trace packet of the watching comparator); the value is the TCB of the thread that runs from
 * then on. A thread's time is the time from a switch to it until the next switch (exception
 * handlers that interrupt it included, as the RTOS sees it); time before the first switch
 * belongs to no known thread (unknown_cycles). A write of the value already current is not a
 * switch.
 *
 * Exceptions (exception trace packets): a stack of active exceptions. ENTER n pushes n; EXIT n
 * pops it (and whatever is above it, whose exits were lost) and completes one activation;
 * RETURN n makes n the active exception again (RETURN 0: back in thread mode, nothing active).
 * At every moment the top of the stack is the active exception and accrues its own time.
 *   count    entries in the interval
 *   maxd     the deepest nesting level an entry reached (1: not nested)
 *   total    cycles it was the active exception in the interval (time in exceptions that
 *            preempted it excluded; from its EXIT to the RETURN into the exception below, the
 *            one below is active)
 *   min/max/ave  own time per activation, over the activations that ended (EXIT) in the
 *            interval; ave = their sum / their number
 *   maxwall  the longest ENTER-to-EXIT time of those activations, preemption included
 * An activation whose ENTER was not seen (the stream started inside it, or RETURN to an
 * exception not on the stack) accrues total time but is not counted in min/max/ave/maxwall. */
#ifndef SPOOR_TOP_STATS_H
#define SPOOR_TOP_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/itm_decoder.h"

#define SPOOR_TOP_MAX_THREADS 1024
#define SPOOR_TOP_MAX_EXCEPTIONS 512 /* exception numbers 0..511 (ARMv7-M/ARMv8-M) */
#define SPOOR_TOP_MAX_NESTING 64
#define SPOOR_TOP_MAX_IDLE 8

typedef struct spoor_top_thread_stats {
    uint32_t tcb;
    bool idle;
    uint64_t cycles;   /* time it ran in the interval (the run, in a summary) */
    uint64_t switches; /* times switched to in the interval (the run) */
    double pct;        /* cycles * 100 / interval length */
    double max_pct;    /* the largest pct of the intervals so far */
} spoor_top_thread_stats;

typedef struct spoor_top_exc_stats {
    unsigned number;
    uint64_t count;
    unsigned maxd;
    uint64_t total;
    uint64_t completed; /* activations that ended */
    uint64_t completed_own;
    uint64_t min, max, maxwall; /* 0 when completed is 0 */
    double pct;
} spoor_top_exc_stats;

typedef struct spoor_top_report {
    uint64_t index;      /* interval number from 0; the number of intervals in a summary */
    bool summary;        /* the whole run, at the end of the input */
    bool partial;        /* the last interval, cut short by the end of the input */
    uint64_t quiet;      /* 0, or: this report stands for that many intervals from index on in which
                            nothing happened (no switch, exception, overflow or lost byte: each the
                            same as the others), over [start, end); the counters cover them all */
    uint64_t start, end; /* cycles; the summary covers [0, end of input) */
    uint64_t unknown_cycles; /* time with no known current thread */
    /* every thread seen so far, in the order they were first seen */
    const spoor_top_thread_stats *threads;
    size_t nthreads;
    double cpu_usage; /* the sum of the non-idle threads' pct */
    double cpu_max;   /* the largest cpu_usage of the intervals so far */
    /* the exceptions with any entry or time in the interval, by number */
    const spoor_top_exc_stats *exceptions;
    size_t nexceptions;
    uint64_t overflows;       /* ITM overflow packets in the interval */
    uint64_t lost_bytes;      /* bytes the decoder could not decode (error packets) */
    uint64_t dropped_threads; /* switches to threads beyond SPOOR_TOP_MAX_THREADS */
} spoor_top_report;

typedef struct spoor_top_callbacks {
    /* an interval ended, or the run (summary) */
    void (*report)(void *ctx, const spoor_top_report *r);
    /* a switch at time from prev (prev_known false before the first switch) to next */
    void (*on_switch)(void *ctx, uint64_t time, uint32_t prev, bool prev_known, uint32_t next);
    /* an activation ended: entered at enter (known only when enter_known), ended at exit */
    void (*on_exception)(void *ctx, unsigned number, uint64_t enter, bool enter_known,
                         uint64_t exit, unsigned depth);
    void *ctx;
} spoor_top_callbacks;

typedef struct spoor_top spoor_top;

/* interval_cycles > 0. NULL when out of memory (error set). */
spoor_top *spoor_top_new(uint64_t interval_cycles, const spoor_top_callbacks *cb);
void spoor_top_free(spoor_top *t);

/* Marks a TCB as an idle thread (shown apart, not counted in cpu_usage); up to
 * SPOOR_TOP_MAX_IDLE. */
void spoor_top_set_idle(spoor_top *t, uint32_t tcb);

/* Events, in time order (an earlier time than the last one is taken as the last one). Each
 * first closes the intervals that ended before its time. */
void spoor_top_advance(spoor_top *t, uint64_t time);
void spoor_top_switch(spoor_top *t, uint64_t time, uint32_t tcb);
void spoor_top_exception(spoor_top *t, uint64_t time, unsigned number,
                         spoor_itm_exception_action action);
void spoor_top_overflow(spoor_top *t, uint64_t time);
void spoor_top_lost(spoor_top *t, uint64_t time, uint64_t bytes);

/* One decoded packet: a DWT data value write of comparator is a switch, exception trace,
 * overflow and error packets are what they are; every packet advances the time. */
void spoor_top_packet(spoor_top *t, const spoor_itm_packet *p, unsigned comparator);

/* The end of the input at time: reports the partial last interval (when it has any time) and
 * then the summary of the whole run. */
void spoor_top_finish(spoor_top *t, uint64_t time);

/* The number of intervals reported so far (partial and summary not counted). */
uint64_t spoor_top_intervals(const spoor_top *t);
/* The time of the last event. */
uint64_t spoor_top_now(const spoor_top *t);

#endif
