/* A run of spoor top as a library session (spoor/top_session.h): the trace pump's events go
 * down one route, clock, statistics, thread catalogue, and out through the caller's
 * callbacks. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/set_error.h"
#include "top/top_catalogue.h"
#include "top/top_clock.h"
#include "top/top_json.h"

struct spoor_top_session {
    spoor_top_session_config cfg;
    spoor_top_session_callbacks cb;
    spoor_top *stats;
    spoor_top_clock clock;
    spoor_top_catalogue threads;
    bool stop;            /* config.max_intervals reached */
    bool any_packet;      /* the stream had a packet */
    bool have_current;    /* a switch came: current holds */
    uint32_t current;     /* the thread running now */
    uint64_t last_time;   /* the latest packet's time */
    bool warned_match;    /* SPOOR_TOP_NOTICE_MATCH_WITHOUT_VALUE said */
    bool said_host_clock; /* SPOOR_TOP_NOTICE_HOST_CLOCK said */
    unsigned comparators_seen;
};

static uint64_t monotonic_ns(void *ctx)
{
    (void)ctx;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void notice(void *ctx, spoor_top_notice n, const char *text)
{
    spoor_top_session *s = ctx;
    if (s->cb.notice)
        s->cb.notice(s->cb.ctx, n, text);
}

/* Stopped: -n reached, or the live target's connection lost. */
static bool stopped(const spoor_top_session *s)
{
    return s->stop || s->threads.lost[0];
}

/* ---- the statistics' callbacks --------------------------------------------------------------- */

static void on_report(void *ctx, const spoor_top_report *r)
{
    spoor_top_session *s = ctx;
    if (stopped(s))
        return;
    if (!r->summary && !r->partial)
        spoor_top_catalogue_refresh(&s->threads, r);
    if (spoor_top_catalogue_lost(&s->threads))
        return;
    if (s->cb.report)
        s->cb.report(s->cb.ctx, r);
    if (s->cfg.max_intervals && !r->summary && !r->partial &&
        r->index + (r->quiet ? r->quiet : 1) >= s->cfg.max_intervals)
        s->stop = true;
}

static void on_switch(void *ctx, uint64_t time, uint32_t prev, bool prev_known, uint32_t next)
{
    spoor_top_session *s = ctx;
    spoor_top_catalogue_thread(&s->threads, next); /* a new TCB is read now, while it is current */
    if (s->cb.on_switch)
        s->cb.on_switch(s->cb.ctx, time, prev, prev_known, next);
    s->have_current = true;
    s->current = next;
}

static void on_exception(void *ctx, unsigned number, uint64_t enter, bool enter_known,
                         uint64_t exit, unsigned depth)
{
    spoor_top_session *s = ctx;
    if (s->cb.on_exception)
        s->cb.on_exception(s->cb.ctx, number, enter, enter_known, exit, depth);
}

/* ---- the stream -------------------------------------------------------------------------------
 */

static unsigned comparator_of(const spoor_itm_packet *p)
{
    switch (p->type) {
    case SPOOR_ITM_DWT_DATA: return 1u << (p->u.dwt_data.comparator & 3);
    case SPOOR_ITM_DWT_MATCH: return 1u << (p->u.dwt_match.comparator & 3);
    case SPOOR_ITM_DWT_PC: return 1u << (p->u.dwt_pc.comparator & 3);
    case SPOOR_ITM_DWT_ADDR: return 1u << (p->u.dwt_addr.comparator & 3);
    default: return 0;
    }
}

static void packet(spoor_top_session *s, const spoor_itm_packet *p)
{
    if (stopped(s))
        return;
    spoor_itm_packet timed = *p; /* the stream's time in cycles, or the host's */
    uint64_t now_ns = s->clock.live ? s->cfg.now_ns(s->cfg.now_ctx) : 0;
    timed.time = spoor_top_clock_packet(&s->clock, p, now_ns);
    p = &timed;
    if (s->clock.used_host && !s->said_host_clock) {
        s->said_host_clock = true;
        notice(s, SPOOR_TOP_NOTICE_HOST_CLOCK, NULL);
    }
    if (s->cb.on_packet)
        s->cb.on_packet(s->cb.ctx, p);
    if (p->type == SPOOR_ITM_DWT_MATCH && p->u.dwt_match.comparator == s->cfg.comparator &&
        !s->warned_match) { /* a switch was seen, but not to which thread */
        s->warned_match = true;
        notice(s, SPOOR_TOP_NOTICE_MATCH_WITHOUT_VALUE, NULL);
    }
    if (!s->any_packet)
        notice(s, SPOOR_TOP_NOTICE_FIRST_PACKET, NULL);
    s->any_packet = true;
    s->comparators_seen |= comparator_of(p);
    spoor_top_packet(s->stats, p, s->cfg.comparator);
    if (p->time > s->last_time)
        s->last_time = p->time;
}

bool spoor_top_session_event(void *ctx, const spoor_trace_pump_event *ev)
{
    spoor_top_session *s = ctx;
    switch (ev->type) {
    case SPOOR_TRACE_PUMP_PACKET: packet(s, ev->packet); break;
    case SPOOR_TRACE_PUMP_RECONNECTED: notice(s, SPOOR_TOP_NOTICE_RECONNECTED, NULL); break;
    case SPOOR_TRACE_PUMP_ERROR:
        notice(s, SPOOR_TOP_NOTICE_STREAM_ERROR, spoor_last_error());
        break;
    case SPOOR_TRACE_PUMP_END:
        if (s->any_packet) /* an empty stream has no table */
            spoor_top_finish(s->stats, s->last_time);
        break;
    case SPOOR_TRACE_PUMP_IDLE: { /* the pump released what the decoder held */
        uint64_t now;
        if (s->any_packet && s->clock.live &&
            spoor_top_clock_idle(&s->clock, s->cfg.now_ns(s->cfg.now_ctx), &now)) {
            spoor_top_advance(s->stats, now); /* host-timed: intervals end */
            s->last_time = now;
        }
        break;
    }
    default: break;
    }
    return !stopped(s);
}

/* ---- the session ------------------------------------------------------------------------------
 */

spoor_top_session *spoor_top_session_new(const spoor_top_session_config *cfg,
                                         const spoor_top_session_callbacks *cb)
{
    uint64_t interval = cfg->cpu_hz * cfg->interval_ms / 1000u;
    if (!interval) {
        spoor_set_error(SPOOR_ERR_ARGUMENT, "an interval of %u ms at %llu Hz is less than a cycle",
                        (unsigned)cfg->interval_ms, (unsigned long long)cfg->cpu_hz);
        return NULL;
    }
    spoor_top_session *s = calloc(1, sizeof *s);
    if (!s) {
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
        return NULL;
    }
    s->cfg = *cfg;
    if (!s->cfg.now_ns)
        s->cfg.now_ns = monotonic_ns;
    if (cb)
        s->cb = *cb;
    spoor_top_clock_init(&s->clock, cfg->live, cfg->cpu_hz, cfg->prescaler);
    spoor_top_callbacks stats_cb = {on_report, on_switch, on_exception, s};
    if (!(s->stats = spoor_top_new(interval, &stats_cb)) ||
        !spoor_top_catalogue_init(&s->threads, &s->cfg, s->stats, notice, s)) {
        spoor_top_session_free(s);
        return NULL;
    }
    if (cfg->rtos && !s->threads.let_run) /* else with the first thread (idle_pending) */
        spoor_top_catalogue_read_idle(&s->threads);
    spoor_top_set_idle(s->stats, 0); /* no thread at all: the scheduler waits */
    return s;
}

void spoor_top_session_free(spoor_top_session *s)
{
    if (!s)
        return;
    spoor_top_free(s->stats);
    spoor_top_catalogue_free(&s->threads);
    free(s);
}

void spoor_top_session_start(spoor_top_session *s)
{
    spoor_top_catalogue_let_run(&s->threads);
}

const spoor_top_thread_info *spoor_top_session_thread(spoor_top_session *s, uint32_t tcb)
{
    return spoor_top_catalogue_thread(&s->threads, tcb);
}

bool spoor_top_session_current(const spoor_top_session *s, uint32_t *tcb)
{
    *tcb = s->current;
    return s->have_current;
}

const char *spoor_top_session_lost(spoor_top_session *s)
{
    /* asked afresh: a connection may have failed since the last read */
    spoor_top_catalogue_lost(&s->threads);
    return s->threads.lost[0] ? s->threads.lost : NULL;
}

void spoor_top_session_status_get(const spoor_top_session *s, spoor_top_session_status *st)
{
    *st = (spoor_top_session_status){
        .any_packet = s->any_packet,
        .any_switch = s->have_current,
        .stream_timed = s->clock.stream,
        .host_timed = s->clock.used_host,
        .intervals_done = s->stop,
        .idle_known = !s->threads.idle_unknown,
        .comparators_seen = s->comparators_seen,
        .now = spoor_top_now(s->stats),
        .nthreads = s->threads.nthreads,
    };
}

char *spoor_top_session_report_json(spoor_top_session *s, const spoor_top_report *r, unsigned flags,
                                    size_t *len)
{
    return spoor_top_json_report(&s->threads, r, flags, s->cfg.cpu_hz, s->cfg.stack, len);
}
