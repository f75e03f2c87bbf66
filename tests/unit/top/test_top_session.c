/* spoor top's library session (spoor/top_session.h): its clock, sans I/O (the host's time is
 * the test's), on packets made by hand, and the session behind a sans-I/O trace pump fed with
 * streams of the test ITM encoder (itm_encoder.h), the time of a live stream the test's clock.
 * The expected times are worked out from the rules the clock's header states: a recording's
 * timestamps times the prescaler; a live stream without timestamps timed by the host from its
 * 16th undated packet or 100 ms after the first, in cycles of hz since its first packet. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "itm_encoder.h"
#include "spoor/top_session.h"
#include "spoor/trace_pump.h"
#include "top/top_clock.h"

#define MS 1000000u /* nanoseconds */

static spoor_itm_packet packet(spoor_itm_type type, uint64_t time, bool exact)
{
    spoor_itm_packet p;
    memset(&p, 0, sizeof p);
    p.type = type;
    p.time = time;
    p.time_exact = exact;
    return p;
}

/* ---- the clock ---------------------------------------------------------------------------- */

static void test_clock_recording(void **state)
{
    (void)state;
    spoor_top_clock k;
    spoor_top_clock_init(&k, false, 1000000, 4);
    spoor_itm_packet p = packet(SPOOR_ITM_DWT_DATA, 10, false);
    assert_int_equal(spoor_top_clock_packet(&k, &p, 123), 40); /* 10 ticks of 4 cycles */
    assert_false(k.stream);
    p = packet(SPOOR_ITM_TS_LOCAL, 20, true);
    assert_int_equal(spoor_top_clock_packet(&k, &p, 0), 80);
    assert_true(k.stream);
    uint64_t now;
    assert_false(spoor_top_clock_idle(&k, 10000 * MS, &now)); /* a recording never idles */
    /* a recording without timestamps: time 0, and the host's clock never stands in */
    spoor_top_clock_init(&k, false, 1000000, 1);
    for (int i = 0; i < 40; i++) {
        p = packet(SPOOR_ITM_DWT_DATA, 0, false);
        assert_int_equal(spoor_top_clock_packet(&k, &p, (uint64_t)i * 100 * MS), 0);
    }
    assert_false(k.used_host || k.stream);
}

static void test_clock_live_stamped(void **state)
{
    (void)state;
    spoor_top_clock k;
    spoor_top_clock_init(&k, true, 1000000, 1);
    spoor_itm_packet p = packet(SPOOR_ITM_TS_LOCAL, 100, true);
    assert_int_equal(spoor_top_clock_packet(&k, &p, 5000 * MS), 100);
    p = packet(SPOOR_ITM_DWT_DATA, 150, false);
    assert_int_equal(spoor_top_clock_packet(&k, &p, 9000 * MS), 150); /* the host's time unused */
    p = packet(SPOOR_ITM_DWT_DATA, 120, false);
    assert_int_equal(spoor_top_clock_packet(&k, &p, 9000 * MS), 150); /* never back */
    uint64_t now;
    assert_false(spoor_top_clock_idle(&k, 20000 * MS, &now)); /* the stream's clock counts */
    assert_false(k.used_host);
}

/* 16 undated packets: the 16th and those after it are timed by the host, from the first. */
static void test_clock_live_undated_count(void **state)
{
    (void)state;
    spoor_top_clock k;
    spoor_top_clock_init(&k, true, 1000000, 1); /* 1 cycle a microsecond */
    spoor_itm_packet p = packet(SPOOR_ITM_DWT_DATA, 0, false);
    for (unsigned i = 0; i < 15; i++) /* at 1 ms, 1.001 ms, ... */
        assert_int_equal(spoor_top_clock_packet(&k, &p, 1 * MS + i * 1000), 0);
    assert_false(k.used_host);
    /* the 16th at 1.015 ms: 15 us after the first */
    assert_int_equal(spoor_top_clock_packet(&k, &p, 1 * MS + 15000), 15);
    assert_true(k.used_host);
    assert_int_equal(spoor_top_clock_packet(&k, &p, 1001 * MS), 1000000); /* 1 s later */
    /* a timestamp at last: the stream's clock, from where the host's was */
    p = packet(SPOOR_ITM_TS_LOCAL, 10, true);
    assert_int_equal(spoor_top_clock_packet(&k, &p, 1002 * MS), 1000010);
    p = packet(SPOOR_ITM_DWT_DATA, 30, false);
    assert_int_equal(spoor_top_clock_packet(&k, &p, 5000 * MS), 1000030);
}

/* Syncs neither count nor start the 100 ms; the first other packet does. */
static void test_clock_live_undated_time(void **state)
{
    (void)state;
    spoor_top_clock k;
    spoor_top_clock_init(&k, true, 1000000, 1);
    spoor_itm_packet sync = packet(SPOOR_ITM_SYNC, 0, false);
    for (unsigned i = 0; i < 20; i++) /* from 10 ms to 200 ms */
        assert_int_equal(spoor_top_clock_packet(&k, &sync, (10 + i * 10) * MS), 0);
    assert_false(k.used_host);
    uint64_t now;
    assert_false(spoor_top_clock_idle(&k, 500 * MS, &now)); /* nothing undated yet */
    spoor_itm_packet p = packet(SPOOR_ITM_DWT_DATA, 0, false);
    assert_int_equal(spoor_top_clock_packet(&k, &p, 300 * MS), 0);
    assert_false(spoor_top_clock_idle(&k, 399 * MS, &now)); /* 99 ms after it */
    assert_false(k.used_host);
    /* 100 ms after the first undated packet: the host's clock, since the first packet (10 ms) */
    assert_true(spoor_top_clock_idle(&k, 400 * MS, &now));
    assert_int_equal(now, 390000);
    assert_true(k.used_host);
    assert_int_equal(spoor_top_clock_packet(&k, &p, 410 * MS), 400000);
    assert_true(spoor_top_clock_idle(&k, 405 * MS, &now)); /* earlier: time does not go back */
    assert_int_equal(now, 400000);
}

/* ---- the session ------------------------------------------------------------------------- */

#define A 0x20000100u
#define B 0x20000200u

struct seen {
    unsigned reports, switches, host_clock, first_packet;
    spoor_top_report first;
    uint64_t first_a_cycles;
    bool stop_at_report;
};

static uint64_t fake_now;

static uint64_t test_now(void *ctx)
{
    (void)ctx;
    return fake_now;
}

static void on_report(void *ctx, const spoor_top_report *r)
{
    struct seen *s = ctx;
    if (!s->reports++) {
        s->first = *r;
        for (size_t i = 0; i < r->nthreads; i++)
            if (r->threads[i].tcb == A)
                s->first_a_cycles = r->threads[i].cycles;
    }
}

static void on_switch(void *ctx, uint64_t time, uint32_t prev, bool prev_known, uint32_t next)
{
    (void)time, (void)prev, (void)prev_known, (void)next;
    ((struct seen *)ctx)->switches++;
}

static void on_notice(void *ctx, spoor_top_notice n, const char *text)
{
    (void)text;
    struct seen *s = ctx;
    if (n == SPOOR_TOP_NOTICE_HOST_CLOCK)
        s->host_clock++;
    if (n == SPOOR_TOP_NOTICE_FIRST_PACKET)
        s->first_packet++;
}

static spoor_top_session *session(struct seen *seen, bool live, uint64_t max_intervals)
{
    memset(seen, 0, sizeof *seen);
    spoor_top_session_config cfg = {.cpu_hz = 1000000,
                                    .interval_ms = 10, /* 10000 cycles */
                                    .comparator = 1,
                                    .live = live,
                                    .max_intervals = max_intervals,
                                    .now_ns = test_now};
    spoor_top_session_callbacks cb = {
        .report = on_report, .on_switch = on_switch, .notice = on_notice, .ctx = seen};
    spoor_top_session *s = spoor_top_session_new(&cfg, &cb);
    assert_non_null(s);
    return s;
}

static spoor_trace_pump *pump_for(spoor_top_session *s)
{
    spoor_trace_pump_config cfg;
    spoor_trace_pump_config_init(&cfg);
    spoor_trace_pump *p = spoor_trace_pump_new(&cfg, spoor_top_session_event, s);
    assert_non_null(p);
    return p;
}

/* A recording: A from 0, B from 15000, A from 25000 to 30000; 10 ms intervals. With -n 1 the
 * session stops after interval 0 (A 10000 cycles); the pump is told to stop. Without an RTOS a
 * thread is its TCB: no name; TCB 0 is "(no thread)". */
static void test_session_intervals(void **state)
{
    (void)state;
    static itm_encoder e;
    memset(&e, 0, sizeof e);
    enc_switch_at(&e, 0, 1, A);
    enc_switch_at(&e, 15000, 1, B);
    enc_switch_at(&e, 25000, 1, A);
    enc_at(&e, 30000);
    struct seen seen;
    spoor_top_session *s = session(&seen, false, 1);
    spoor_trace_pump *p = pump_for(s);
    bool running = spoor_trace_pump_feed(p, e.buf, e.len) && spoor_trace_pump_finish(p);
    assert_false(running); /* stopped at -n 1 */
    assert_int_equal(seen.reports, 1);
    assert_int_equal(seen.first.index, 0);
    assert_int_equal(seen.first_a_cycles, 10000);
    assert_int_equal(seen.first_packet, 1);
    spoor_top_session_status st;
    spoor_top_session_status_get(s, &st);
    assert_true(st.intervals_done && st.any_packet && st.any_switch && st.stream_timed);
    assert_false(st.host_timed);
    assert_true(st.comparators_seen == 1u << 1);
    uint32_t current;
    assert_true(spoor_top_session_current(s, &current));
    assert_int_equal(current, B); /* the switch that ended interval 0 */
    assert_string_equal(spoor_top_session_thread(s, A)->name, "");
    assert_false(spoor_top_session_thread(s, A)->read_ok);
    assert_string_equal(spoor_top_session_thread(s, 0)->name, "(no thread)");
    assert_null(spoor_top_session_lost(s));
    spoor_trace_pump_free(p);
    spoor_top_session_free(s);

    /* to the end: intervals 0, 1, the partial interval 2 [20000, 30000) (whole here), summary */
    s = session(&seen, false, 0);
    p = pump_for(s);
    assert_true(spoor_trace_pump_feed(p, e.buf, e.len) && spoor_trace_pump_finish(p));
    assert_int_equal(seen.switches, 3);
    assert_true(seen.reports >= 3);
    spoor_trace_pump_free(p);
    spoor_top_session_free(s);
}

/* A live stream without timestamps: its time is the test's clock once 100 ms have passed since
 * the first undated packet; intervals end while nothing comes (the pump's IDLE). */
static void test_session_host_clock(void **state)
{
    (void)state;
    static itm_encoder e;
    memset(&e, 0, sizeof e);
    enc_dwt_write(&e, 1, A);
    struct seen seen;
    spoor_top_session *s = session(&seen, true, 0);
    spoor_trace_pump *p = pump_for(s);
    fake_now = 1 * MS;
    assert_true(spoor_trace_pump_feed(p, e.buf, e.len) && spoor_trace_pump_idle(p));
    assert_int_equal(seen.switches, 1); /* A at time 0 */
    assert_int_equal(seen.reports, 0);
    fake_now = 50 * MS;
    assert_true(spoor_trace_pump_idle(p));
    assert_int_equal(seen.reports, 0); /* 49 ms: not yet the host's clock */
    fake_now = 101 * MS;
    assert_true(spoor_trace_pump_idle(p)); /* 100 ms: 100000 cycles, intervals 0.. end */
    assert_true(seen.reports >= 1);
    assert_int_equal(seen.first.index, 0);
    assert_int_equal(seen.first_a_cycles, 10000);
    assert_int_equal(seen.host_clock, 0); /* said with the next packet */
    fake_now = 102 * MS;
    memset(&e, 0, sizeof e);
    enc_dwt_write(&e, 1, B);
    enc_dwt_write(&e, 1, A);
    assert_true(spoor_trace_pump_feed(p, e.buf, e.len) && spoor_trace_pump_idle(p));
    assert_int_equal(seen.host_clock, 1); /* once */
    spoor_top_session_status st;
    spoor_top_session_status_get(s, &st);
    assert_true(st.host_timed);
    assert_false(st.stream_timed);
    assert_int_equal(st.now, 101000); /* 101 ms since the first packet at 1 ms */
    spoor_trace_pump_free(p);
    spoor_top_session_free(s);
}

/* The JSON of a report (spoor_top_session_report_json), the object of spoor top -j: a recording
 * of A from 0 with a SysTick activation 2000..2300 (back in thread mode at 2310), B from 15000,
 * A from 25000 to 30000; no RTOS (a thread is its TCB: name "", nothing read). Interval 0 is
 * A's alone, 10000 cycles (the exception's time included, as the RTOS sees it); SysTick's own
 * time is 300 cycles, 3 % of it. Interval 1 has no exception. */
struct json_seen {
    spoor_top_session *s;
    unsigned flags;
    char texts[2][1024];
    unsigned n;
};

static void on_report_json(void *ctx, const spoor_top_report *r)
{
    struct json_seen *j = ctx;
    size_t len;
    char *text = spoor_top_session_report_json(j->s, r, j->flags, &len);
    assert_non_null(text);
    assert_int_equal(strlen(text), len);
    if (j->n < 2)
        snprintf(j->texts[j->n], sizeof j->texts[0], "%s", text);
    j->n++;
    free(text);
}

static void report_json(unsigned flags, struct json_seen *j)
{
    static itm_encoder e;
    memset(&e, 0, sizeof e);
    enc_switch_at(&e, 0, 1, A);
    enc_exception_at(&e, 2000, 15, 1);
    enc_exception_at(&e, 2300, 15, 2);
    enc_exception_at(&e, 2310, 0, 3);
    enc_switch_at(&e, 15000, 1, B);
    enc_switch_at(&e, 25000, 1, A);
    enc_at(&e, 30000);
    memset(j, 0, sizeof *j);
    j->flags = flags;
    spoor_top_session_config cfg = {.cpu_hz = 1000000, .interval_ms = 10, .comparator = 1};
    spoor_top_session_callbacks cb = {.report = on_report_json, .ctx = j};
    assert_non_null(j->s = spoor_top_session_new(&cfg, &cb));
    spoor_trace_pump *p = pump_for(j->s);
    assert_true(spoor_trace_pump_feed(p, e.buf, e.len) && spoor_trace_pump_finish(p));
    assert_int_equal(j->n, 4); /* intervals 0, 1, 2 (partial) and the summary */
    spoor_trace_pump_free(p);
    spoor_top_session_free(j->s);
}

#define JSON_A0                                                                                    \
    "{\"threads\":[{\"tcb\":\"0x20000100\",\"name\":\"\",\"func\":null,\"prio\":null,"             \
    "\"prio_name\":null,\"state\":null,\"time_ms\":10.000,\"cpu\":100.000,\"max\":100.000,"        \
    "\"switches\":1,\"cycles\":10000,\"idle\":false}],\"interval\":0,\"summary\":false,"           \
    "\"partial\":false,\"quiet_intervals\":0,\"start_ms\":0.000,\"interval_ms\":10.000,"           \
    "\"cpu_usage\":100.000,\"cpu_max\":100.000,\"idle_known\":true,\"cpu_freq\":1000000,"          \
    "\"overflow\":false,\"overflows\":0,\"lost_bytes\":0,\"unknown_ms\":0.000"
#define JSON_SYSTICK                                                                               \
    "\"num\":15,\"name\":\"SysTick\",\"count\":1,\"maxd\":1,\"total\":300,\"pct\":3.000,"          \
    "\"ave\":300,\"min\":300,\"max\":300,\"maxwall\":300,\"completed\":1"

static void test_session_report_json(void **state)
{
    (void)state;
    struct json_seen j;
    report_json(0, &j);
    assert_string_equal(j.texts[0], JSON_A0 "}\n");
    report_json(SPOOR_TOP_JSON_EXCEPTIONS, &j);
    assert_string_equal(j.texts[0], JSON_A0 ",\"exceptions\":[{" JSON_SYSTICK "}]}\n");
    assert_non_null(strstr(j.texts[1], "\"exceptions\":[]}\n"));
    report_json(SPOOR_TOP_JSON_EXCEPTIONS | SPOOR_TOP_JSON_EXCEPTION_LINES, &j);
    assert_string_equal(j.texts[0], JSON_A0 "}\n{\"ex\":1," JSON_SYSTICK "}\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clock_recording),
        cmocka_unit_test(test_clock_live_stamped),
        cmocka_unit_test(test_clock_live_undated_count),
        cmocka_unit_test(test_clock_live_undated_time),
        cmocka_unit_test(test_session_intervals),
        cmocka_unit_test(test_session_host_clock),
        cmocka_unit_test(test_session_report_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
