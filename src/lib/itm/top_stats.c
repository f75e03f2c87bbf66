/* The statistics engine of `spoor top` (spoor/top_stats.h): per-thread and per-exception counters
 * for the current interval and for the whole run, cut at interval boundaries in target time. */
#include <stdlib.h>
#include <string.h>

#include "base/set_error.h"
#include "spoor/top_stats.h"

#define THREAD_SLOTS (2 * SPOOR_TOP_MAX_THREADS)

struct thread_acc {
    uint32_t tcb;
    bool idle;
    uint64_t cycles, switches;         /* interval */
    uint64_t run_cycles, run_switches; /* whole run */
    double max_pct;
};

struct exc_acc {
    uint64_t count, total, completed, completed_own, min, max, maxwall;
    unsigned maxd;
};

struct activation {
    unsigned number;
    uint64_t enter, own;
    bool enter_known;
};

struct spoor_top {
    uint64_t interval; /* cycles */
    spoor_top_callbacks cb;
    uint64_t now;
    uint64_t interval_start;
    uint64_t intervals;
    /* threads */
    struct thread_acc *threads;
    size_t nthreads;
    int32_t slots[THREAD_SLOTS]; /* index into threads, -1 empty */
    bool have_current;
    size_t current;
    uint32_t idle[SPOOR_TOP_MAX_IDLE];
    size_t nidle;
    uint64_t unknown, run_unknown;
    double cpu_max;
    uint64_t dropped;
    /* exceptions */
    struct exc_acc exc[SPOOR_TOP_MAX_EXCEPTIONS], run_exc[SPOOR_TOP_MAX_EXCEPTIONS];
    struct activation stack[SPOOR_TOP_MAX_NESTING];
    size_t depth;
    /* warnings */
    uint64_t overflows, run_overflows, lost, run_lost;
    /* the report being handed out */
    spoor_top_thread_stats *out_threads;
    spoor_top_exc_stats out_exc[SPOOR_TOP_MAX_EXCEPTIONS];
};

spoor_top *spoor_top_new(uint64_t interval_cycles, const spoor_top_callbacks *cb)
{
    spoor_top *t = calloc(1, sizeof *t);
    if (t) {
        t->threads = calloc(SPOOR_TOP_MAX_THREADS, sizeof *t->threads);
        t->out_threads = calloc(SPOOR_TOP_MAX_THREADS, sizeof *t->out_threads);
    }
    if (!t || !t->threads || !t->out_threads) {
        spoor_top_free(t);
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
        return NULL;
    }
    t->interval = interval_cycles ? interval_cycles : 1;
    if (cb)
        t->cb = *cb;
    for (size_t i = 0; i < THREAD_SLOTS; i++)
        t->slots[i] = -1;
    return t;
}

void spoor_top_free(spoor_top *t)
{
    if (!t)
        return;
    free(t->threads);
    free(t->out_threads);
    free(t);
}

static bool is_idle(const spoor_top *t, uint32_t tcb)
{
    for (size_t i = 0; i < t->nidle; i++)
        if (t->idle[i] == tcb)
            return true;
    return false;
}

void spoor_top_set_idle(spoor_top *t, uint32_t tcb)
{
    if (is_idle(t, tcb) || t->nidle == SPOOR_TOP_MAX_IDLE)
        return;
    t->idle[t->nidle++] = tcb;
    for (size_t i = 0; i < t->nthreads; i++)
        if (t->threads[i].tcb == tcb)
            t->threads[i].idle = true;
}

/* The thread of tcb, added when new; -1 when the table is full. */
static long thread_index(spoor_top *t, uint32_t tcb)
{
    size_t h = (size_t)((tcb >> 2) * 2654435761u) % THREAD_SLOTS;
    for (;; h = (h + 1) % THREAD_SLOTS) {
        if (t->slots[h] < 0)
            break;
        if (t->threads[t->slots[h]].tcb == tcb)
            return t->slots[h];
    }
    if (t->nthreads == SPOOR_TOP_MAX_THREADS)
        return -1;
    struct thread_acc *a = &t->threads[t->nthreads];
    memset(a, 0, sizeof *a);
    a->tcb = tcb;
    a->idle = is_idle(t, tcb);
    t->slots[h] = (int32_t)t->nthreads;
    return (long)t->nthreads++;
}

/* Gives the time from now to time to the running thread and the active exception. */
static void accrue(spoor_top *t, uint64_t time)
{
    uint64_t dt = time - t->now;
    if (!dt)
        return;
    if (t->have_current) {
        t->threads[t->current].cycles += dt;
        t->threads[t->current].run_cycles += dt;
    } else {
        t->unknown += dt;
        t->run_unknown += dt;
    }
    if (t->depth) {
        struct activation *a = &t->stack[t->depth - 1];
        a->own += dt;
        t->exc[a->number].total += dt;
        t->run_exc[a->number].total += dt;
    }
    t->now = time;
}

static double percent(uint64_t part, uint64_t whole)
{
    return whole ? (double)part * 100.0 / (double)whole : 0.0;
}

/* Builds and hands out a report of [start, end) from the interval counters (run false) or
 * the run counters (run true). */
static void emit(spoor_top *t, uint64_t start, uint64_t end, bool run, bool partial, uint64_t quiet)
{
    uint64_t len = end - start;
    spoor_top_report r = {0};
    r.index = t->intervals;
    r.summary = run;
    r.partial = partial;
    r.quiet = quiet;
    r.start = start;
    r.end = end;
    r.unknown_cycles = run ? t->run_unknown : t->unknown;
    double usage = 0;
    for (size_t i = 0; i < t->nthreads; i++) {
        struct thread_acc *a = &t->threads[i];
        spoor_top_thread_stats *o = &t->out_threads[i];
        o->tcb = a->tcb;
        o->idle = a->idle;
        o->cycles = run ? a->run_cycles : a->cycles;
        o->switches = run ? a->run_switches : a->switches;
        o->pct = percent(o->cycles, len);
        if (!run && o->pct > a->max_pct)
            a->max_pct = o->pct;
        o->max_pct = a->max_pct;
        if (!a->idle)
            usage += o->pct;
    }
    if (!run && usage > t->cpu_max)
        t->cpu_max = usage;
    r.threads = t->out_threads;
    r.nthreads = t->nthreads;
    r.cpu_usage = usage;
    r.cpu_max = t->cpu_max;
    size_t n = 0;
    for (unsigned k = 0; k < SPOOR_TOP_MAX_EXCEPTIONS; k++) {
        const struct exc_acc *e = run ? &t->run_exc[k] : &t->exc[k];
        if (!e->count && !e->total && !e->completed)
            continue;
        spoor_top_exc_stats *o = &t->out_exc[n++];
        o->number = k;
        o->count = e->count;
        o->maxd = e->maxd;
        o->total = e->total;
        o->completed = e->completed;
        o->completed_own = e->completed_own;
        o->min = e->min;
        o->max = e->max;
        o->maxwall = e->maxwall;
        o->pct = percent(e->total, len);
    }
    r.exceptions = t->out_exc;
    r.nexceptions = n;
    r.overflows = run ? t->run_overflows : t->overflows;
    r.lost_bytes = run ? t->run_lost : t->lost;
    r.dropped_threads = t->dropped;
    if (t->cb.report)
        t->cb.report(t->cb.ctx, &r);
}

static void reset_interval(spoor_top *t)
{
    for (size_t i = 0; i < t->nthreads; i++)
        t->threads[i].cycles = t->threads[i].switches = 0;
    memset(t->exc, 0, sizeof t->exc);
    t->unknown = 0;
    t->overflows = 0;
    t->lost = 0;
}

/* Intervals with no event shown one by one after the one an event was in, before the rest up
 * to the next event are reported as one: a large timestamp costs a few reports, not millions. */
#define QUIET_SHOWN 2

void spoor_top_advance(spoor_top *t, uint64_t time)
{
    if (time < t->now)
        time = t->now;
    for (unsigned shown = 0; time - t->interval_start >= t->interval; shown++) {
        uint64_t n = (time - t->interval_start) / t->interval; /* whole intervals until time */
        if (shown <= QUIET_SHOWN || n < 2)
            n = 1;
        uint64_t end = t->interval_start + n * t->interval;
        accrue(t, end);
        emit(t, t->interval_start, end, false, false, n > 1 ? n : 0);
        t->intervals += n;
        reset_interval(t);
        t->interval_start = end;
    }
    accrue(t, time);
}

void spoor_top_switch(spoor_top *t, uint64_t time, uint32_t tcb)
{
    spoor_top_advance(t, time);
    if (t->have_current && t->threads[t->current].tcb == tcb)
        return;
    long i = thread_index(t, tcb);
    uint32_t prev = t->have_current ? t->threads[t->current].tcb : 0;
    bool prev_known = t->have_current;
    if (i < 0) {
        t->dropped++;
        t->have_current = false;
        return;
    }
    t->threads[i].switches++;
    t->threads[i].run_switches++;
    t->current = (size_t)i;
    t->have_current = true;
    if (t->cb.on_switch)
        t->cb.on_switch(t->cb.ctx, t->now, prev, prev_known, tcb);
}

static void count_entry(struct exc_acc *e, unsigned depth)
{
    e->count++;
    if (depth > e->maxd)
        e->maxd = depth;
}

static void count_end(struct exc_acc *e, const struct activation *a, uint64_t wall)
{
    if (!e->completed || a->own < e->min)
        e->min = a->own;
    if (a->own > e->max)
        e->max = a->own;
    if (wall > e->maxwall)
        e->maxwall = wall;
    e->completed++;
    e->completed_own += a->own;
}

/* The stack position of number from the top, or -1. */
static long find_active(const spoor_top *t, unsigned number)
{
    for (size_t i = t->depth; i-- > 0;)
        if (t->stack[i].number == number)
            return (long)i;
    return -1;
}

void spoor_top_exception(spoor_top *t, uint64_t time, unsigned number,
                         spoor_itm_exception_action action)
{
    spoor_top_advance(t, time);
    if (number >= SPOOR_TOP_MAX_EXCEPTIONS)
        return;
    long at;
    switch (action) {
    case SPOOR_ITM_EXC_ENTER:
        if (t->depth == SPOOR_TOP_MAX_NESTING) /* deeper than any real core nests */
            t->depth = 0;
        t->stack[t->depth++] = (struct activation){number, t->now, 0, true};
        count_entry(&t->exc[number], (unsigned)t->depth);
        count_entry(&t->run_exc[number], (unsigned)t->depth);
        break;
    case SPOOR_ITM_EXC_EXIT:
        at = find_active(t, number);
        if (at < 0)
            break;
        {
            const struct activation *a = &t->stack[at];
            if (a->enter_known) {
                count_end(&t->exc[number], a, t->now - a->enter);
                count_end(&t->run_exc[number], a, t->now - a->enter);
            }
            if (t->cb.on_exception)
                t->cb.on_exception(t->cb.ctx, number, a->enter, a->enter_known, t->now,
                                   (unsigned)at + 1);
        }
        t->depth = (size_t)at;
        break;
    case SPOOR_ITM_EXC_RETURN:
        if (number == 0) {
            t->depth = 0;
            break;
        }
        at = find_active(t, number);
        if (at >= 0) {
            t->depth = (size_t)at + 1;
        } else if (t->depth < SPOOR_TOP_MAX_NESTING) { /* entered before the stream began */
            t->stack[t->depth++] = (struct activation){number, t->now, 0, false};
        }
        break;
    }
}

void spoor_top_overflow(spoor_top *t, uint64_t time)
{
    spoor_top_advance(t, time);
    t->overflows++;
    t->run_overflows++;
}

void spoor_top_lost(spoor_top *t, uint64_t time, uint64_t bytes)
{
    spoor_top_advance(t, time);
    t->lost += bytes;
    t->run_lost += bytes;
}

void spoor_top_packet(spoor_top *t, const spoor_itm_packet *p, unsigned comparator)
{
    switch (p->type) {
    case SPOOR_ITM_DWT_DATA:
        if (p->u.dwt_data.comparator == comparator && p->u.dwt_data.write)
            spoor_top_switch(t, p->time, p->u.dwt_data.value);
        else
            spoor_top_advance(t, p->time);
        break;
    case SPOOR_ITM_EXCEPTION:
        spoor_top_exception(t, p->time, p->u.exception.number, p->u.exception.action);
        break;
    case SPOOR_ITM_OVERFLOW: spoor_top_overflow(t, p->time); break;
    case SPOOR_ITM_ERROR: spoor_top_lost(t, p->time, p->u.error.bytes_lost); break;
    default: spoor_top_advance(t, p->time); break;
    }
}

void spoor_top_finish(spoor_top *t, uint64_t time)
{
    spoor_top_advance(t, time);
    if (t->now > t->interval_start)
        emit(t, t->interval_start, t->now, false, true, 0);
    emit(t, 0, t->now, true, false, 0);
}

uint64_t spoor_top_intervals(const spoor_top *t)
{
    return t->intervals;
}

uint64_t spoor_top_now(const spoor_top *t)
{
    return t->now;
}
