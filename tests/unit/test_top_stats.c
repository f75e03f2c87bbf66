/* spoor top's statistics engine on streams written by the test ITM encoder (itm_encoder.h)
 * from a known schedule, decoded by the real decoder: every per-thread and per-exception number
 * of every interval is the one the schedule gives, worked out by hand in the comments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "itm_encoder.h"
#include "spoor/itm_decoder.h"
#include "spoor/top_stats.h"

#define A 0x20000100u
#define B 0x20000200u
#define IDLE 0x20000300u
#define INTERVAL 10000u /* -F 1000000 -I 10 */

#define MAX_REPORTS 16

struct saved {
    spoor_top_report r;
    spoor_top_thread_stats threads[8];
    spoor_top_exc_stats exc[8];
};

static struct saved reports[MAX_REPORTS];
static size_t nreports;
static unsigned switches_seen, exceptions_seen;

static void on_report(void *ctx, const spoor_top_report *r)
{
    (void)ctx;
    assert_true(nreports < MAX_REPORTS);
    struct saved *s = &reports[nreports++];
    s->r = *r;
    assert_true(r->nthreads <= 8 && r->nexceptions <= 8);
    memcpy(s->threads, r->threads, r->nthreads * sizeof *r->threads);
    memcpy(s->exc, r->exceptions, r->nexceptions * sizeof *r->exceptions);
}

static void on_switch(void *ctx, uint64_t time, uint32_t prev, bool prev_known, uint32_t next)
{
    (void)ctx, (void)time, (void)prev, (void)prev_known, (void)next;
    switches_seen++;
}

static void on_exception(void *ctx, unsigned number, uint64_t enter, bool enter_known,
                         uint64_t exit, unsigned depth)
{
    (void)ctx, (void)number, (void)enter, (void)enter_known, (void)exit, (void)depth;
    exceptions_seen++;
}

/* Decodes the stream fed `step` bytes at a time and runs the engine over it. */
static void run(const itm_encoder *e, size_t step, unsigned comparator)
{
    static spoor_itm_decoder d;
    nreports = 0;
    switches_seen = exceptions_seen = 0;
    spoor_top_callbacks cb = {on_report, on_switch, on_exception, NULL};
    spoor_top *t = spoor_top_new(INTERVAL, &cb);
    assert_non_null(t);
    spoor_top_set_idle(t, IDLE);
    spoor_itm_init(&d, false);
    spoor_itm_packet p;
    for (size_t i = 0; i < e->len;) {
        size_t n = e->len - i < step ? e->len - i : step;
        i += spoor_itm_feed(&d, e->buf + i, n);
        while (spoor_itm_next(&d, &p))
            spoor_top_packet(t, &p, comparator);
    }
    spoor_itm_finish(&d);
    uint64_t end = 0;
    while (spoor_itm_next(&d, &p)) {
        spoor_top_packet(t, &p, comparator);
        end = p.time;
    }
    if (spoor_top_now(t) > end)
        end = spoor_top_now(t);
    spoor_top_finish(t, end);
    spoor_top_free(t);
}

static const spoor_top_thread_stats *thread(const struct saved *s, uint32_t tcb)
{
    for (size_t i = 0; i < s->r.nthreads; i++)
        if (s->threads[i].tcb == tcb)
            return &s->threads[i];
    fail_msg("thread 0x%08x not in report %llu", tcb, (unsigned long long)s->r.index);
    return NULL;
}

static const spoor_top_exc_stats *exception(const struct saved *s, unsigned number)
{
    for (size_t i = 0; i < s->r.nexceptions; i++)
        if (s->exc[i].number == number)
            return &s->exc[i];
    fail_msg("exception %u not in report %llu", number, (unsigned long long)s->r.index);
    return NULL;
}

static void expect_thread(const struct saved *s, uint32_t tcb, uint64_t cycles, uint64_t switches,
                          double pct, double max_pct)
{
    const spoor_top_thread_stats *t = thread(s, tcb);
    assert_int_equal(t->cycles, cycles);
    assert_int_equal(t->switches, switches);
    assert_float_equal(t->pct, pct, 1e-9);
    assert_float_equal(t->max_pct, max_pct, 1e-9);
}

static void expect_exception(const struct saved *s, unsigned number, uint64_t count, unsigned maxd,
                             uint64_t total, uint64_t completed, uint64_t completed_own,
                             uint64_t min, uint64_t max, uint64_t maxwall, double pct)
{
    const spoor_top_exc_stats *e = exception(s, number);
    assert_int_equal(e->count, count);
    assert_int_equal(e->maxd, maxd);
    assert_int_equal(e->total, total);
    assert_int_equal(e->completed, completed);
    assert_int_equal(e->completed_own, completed_own);
    assert_int_equal(e->min, min);
    assert_int_equal(e->max, max);
    assert_int_equal(e->maxwall, maxwall);
    assert_float_equal(e->pct, pct, 1e-9);
}

enum { ENTER = 1, EXIT = 2, RETURN = 3 };

/* The schedule (cycles; intervals of 10000):
 *        0 A   3000 B   5000 IDLE   8000 A | 12000 B   15000 A   16000 IDLE | 21000 A   end 25000
 * Exceptions in interval 0: SysTick 15 at 1000-1200; IRQ0 (16) at 2000 preempted by IRQ1 (17)
 * from 2100 to 2300, IRQ0 resumed at 2310 (RETURN 16) and exits at 2500; 15 at 4000-4500; 15
 * again from 9900 to 10100, across the boundary. */
static void write_schedule(itm_encoder *e, unsigned comparator)
{
    memset(e, 0, sizeof *e);
    enc_sync(e);
    enc_switch_at(e, 0, comparator, A);
    enc_exception_at(e, 1000, 15, ENTER);
    enc_exception_at(e, 1200, 15, EXIT);
    enc_exception_at(e, 1210, 0, RETURN);
    enc_exception_at(e, 2000, 16, ENTER);
    enc_exception_at(e, 2100, 17, ENTER);
    enc_exception_at(e, 2300, 17, EXIT);
    enc_exception_at(e, 2310, 16, RETURN);
    enc_exception_at(e, 2500, 16, EXIT);
    enc_exception_at(e, 2510, 0, RETURN);
    enc_switch_at(e, 3000, comparator, B);
    enc_exception_at(e, 4000, 15, ENTER);
    enc_exception_at(e, 4500, 15, EXIT);
    enc_exception_at(e, 4510, 0, RETURN);
    enc_switch_at(e, 5000, comparator, IDLE);
    enc_switch_at(e, 8000, comparator, A);
    enc_exception_at(e, 9900, 15, ENTER);
    enc_exception_at(e, 10100, 15, EXIT);
    enc_exception_at(e, 10110, 0, RETURN);
    enc_switch_at(e, 12000, comparator, B);
    /* a write of the comparator that is not watched, and of the current value: no switches */
    enc_switch_at(e, 13000, comparator ^ 1, IDLE);
    enc_switch_at(e, 14000, comparator, B);
    enc_switch_at(e, 15000, comparator, A);
    enc_switch_at(e, 16000, comparator, IDLE);
    enc_switch_at(e, 21000, comparator, A);
    enc_sw8(e, 'x'); /* the end of the stream at 25000 */
    enc_at(e, 25000);
}

static void check_schedule(void)
{
    assert_int_equal(nreports, 4); /* two intervals, the partial third, the summary */
    const struct saved *r0 = &reports[0], *r1 = &reports[1], *r2 = &reports[2], *rs = &reports[3];
    assert_int_equal(r0->r.start, 0);
    assert_int_equal(r0->r.end, 10000);
    assert_false(r0->r.partial || r0->r.summary);
    assert_int_equal(r0->r.unknown_cycles, 0);
    /* interval 0: A 0-3000 and 8000-10000; B 3000-5000; IDLE 5000-8000 */
    expect_thread(r0, A, 5000, 2, 50.0, 50.0);
    expect_thread(r0, B, 2000, 1, 20.0, 20.0);
    expect_thread(r0, IDLE, 3000, 1, 30.0, 30.0);
    assert_true(thread(r0, IDLE)->idle);
    assert_float_equal(r0->r.cpu_usage, 70.0, 1e-9);
    assert_float_equal(r0->r.cpu_max, 70.0, 1e-9);
    /* 15: entered 3 times; own 200, 500 and (of the third, up to the boundary) 100 */
    expect_exception(r0, 15, 3, 1, 800, 2, 700, 200, 500, 500, 8.0);
    /* 16: own 100 before the preemption and 200 after (2300-2500), wall 500 */
    expect_exception(r0, 16, 1, 1, 300, 1, 300, 300, 300, 500, 3.0);
    expect_exception(r0, 17, 1, 2, 200, 1, 200, 200, 200, 200, 2.0);
    assert_int_equal(r0->r.nexceptions, 3);
    assert_int_equal(r0->r.overflows, 0);
    assert_int_equal(r0->r.lost_bytes, 0);

    /* interval 1: A 10000-12000 and 15000-16000; B 12000-15000; IDLE 16000-20000 */
    assert_int_equal(r1->r.start, 10000);
    assert_int_equal(r1->r.index, 1);
    expect_thread(r1, A, 3000, 1, 30.0, 50.0);
    expect_thread(r1, B, 3000, 1, 30.0, 30.0);
    expect_thread(r1, IDLE, 4000, 1, 40.0, 40.0);
    assert_float_equal(r1->r.cpu_usage, 60.0, 1e-9);
    assert_float_equal(r1->r.cpu_max, 70.0, 1e-9);
    /* the rest of the third 15: 100 cycles of own time, and it ended here (own 200, wall 200) */
    expect_exception(r1, 15, 0, 0, 100, 1, 200, 200, 200, 200, 1.0);
    assert_int_equal(r1->r.nexceptions, 1);

    /* partial interval 2: 20000-25000: IDLE until 21000, then A */
    assert_true(r2->r.partial);
    assert_int_equal(r2->r.start, 20000);
    assert_int_equal(r2->r.end, 25000);
    expect_thread(r2, A, 4000, 1, 80.0, 80.0);
    expect_thread(r2, B, 0, 0, 0.0, 30.0);
    expect_thread(r2, IDLE, 1000, 0, 20.0, 40.0); /* switched to in interval 1 */
    assert_float_equal(r2->r.cpu_usage, 80.0, 1e-9);
    assert_float_equal(r2->r.cpu_max, 80.0, 1e-9);

    /* the run: 25000 cycles */
    assert_true(rs->r.summary);
    assert_int_equal(rs->r.start, 0);
    assert_int_equal(rs->r.end, 25000);
    expect_thread(rs, A, 12000, 4, 48.0, 80.0);
    expect_thread(rs, B, 5000, 2, 20.0, 30.0);
    expect_thread(rs, IDLE, 8000, 2, 32.0, 40.0);
    assert_float_equal(rs->r.cpu_usage, 68.0, 1e-9);
    expect_exception(rs, 15, 3, 1, 900, 3, 900, 200, 500, 500, 900 * 100.0 / 25000);
    assert_int_equal(switches_seen, 8);
    assert_int_equal(exceptions_seen, 5);
}

static void test_schedule(void **state)
{
    (void)state;
    static itm_encoder e;
    write_schedule(&e, 1);
    run(&e, e.len, 1);
    check_schedule();
    /* byte by byte, and in odd pieces: the same numbers */
    run(&e, 1, 1);
    check_schedule();
    run(&e, 7, 1);
    check_schedule();
}

static void test_other_comparator(void **state)
{
    (void)state;
    static itm_encoder e;
    write_schedule(&e, 2); /* the watch on comparator 2 (--comparator 2) */
    run(&e, e.len, 2);
    check_schedule();
    /* read as comparator 3: only the write to comparator 3 (2 ^ 1) counts: one switch to IDLE */
    run(&e, e.len, 3);
    assert_int_equal(switches_seen, 1);
    assert_int_equal(reports[1].r.unknown_cycles, 3000); /* 10000-13000 */
}

/* Before the first switch no thread is known: that time is unknown, in no thread's share. */
static void test_unknown_before_first_switch(void **state)
{
    (void)state;
    static itm_encoder e;
    memset(&e, 0, sizeof e);
    enc_sw8(&e, 1);
    enc_at(&e, 2500);
    enc_switch_at(&e, 4000, 1, A);
    enc_sw8(&e, 2);
    enc_at(&e, 10000);
    run(&e, e.len, 1);
    assert_int_equal(nreports, 2); /* one full interval (ends exactly at the end), summary */
    assert_int_equal(reports[0].r.unknown_cycles, 4000);
    expect_thread(&reports[0], A, 6000, 1, 60.0, 60.0);
    assert_float_equal(reports[0].r.cpu_usage, 60.0, 1e-9);
    assert_true(reports[1].r.summary);
}

/* An overflow packet and a reserved header (lost bytes) are reported in their interval only. */
static void test_overflow_and_lost(void **state)
{
    (void)state;
    static itm_encoder e;
    memset(&e, 0, sizeof e);
    enc_switch_at(&e, 100, 1, A);
    enc_overflow(&e);
    enc_at(&e, 5000);
    enc_switch_at(&e, 12000, 1, B);
    /* interval 1: a reserved header; the decoder skips to the next sync */
    enc_byte(&e, 0x04);
    enc_byte(&e, 0x11);
    enc_byte(&e, 0x22);
    enc_sync(&e);
    enc_switch_at(&e, 25000, 1, A);
    enc_sw8(&e, 0);
    enc_at(&e, 30000);
    run(&e, e.len, 1);
    assert_int_equal(nreports, 4); /* three intervals and the summary */
    assert_int_equal(reports[0].r.overflows, 1);
    assert_int_equal(reports[0].r.lost_bytes, 0);
    assert_int_equal(reports[1].r.overflows, 0);
    assert_int_equal(reports[1].r.lost_bytes, 3); /* 0x04 0x11 0x22 */
    assert_int_equal(reports[2].r.overflows, 0);
    assert_int_equal(reports[2].r.lost_bytes, 0);
    assert_int_equal(reports[3].r.overflows, 1);
    assert_int_equal(reports[3].r.lost_bytes, 3);
    expect_thread(&reports[2], A, 5000, 1, 50.0, 99.0); /* 100-10000 in interval 0 */
}

/* Exception trace edge cases: a stream starting inside a handler (RETURN to an exception never
 * entered), a lost EXIT (RETURN 0 with exceptions still active), tail-chaining (EXIT then ENTER
 * with no RETURN between). */
static void test_exception_edges(void **state)
{
    (void)state;
    static itm_encoder e;
    memset(&e, 0, sizeof e);
    /* 16 was active when the stream began: returned to at 100 after 18 ran 50-100 */
    enc_exception_at(&e, 50, 18, ENTER); /* depth 1: the stack does not know 16 */
    enc_exception_at(&e, 100, 18, EXIT);
    enc_exception_at(&e, 100, 16, RETURN);
    enc_exception_at(&e, 400, 16, EXIT); /* own 300, not a complete activation */
    enc_exception_at(&e, 410, 0, RETURN);
    /* tail-chaining: 15 1000-1100, straight into 19 1100-1400 */
    enc_exception_at(&e, 1000, 15, ENTER);
    enc_exception_at(&e, 1100, 15, EXIT);
    enc_exception_at(&e, 1100, 19, ENTER);
    enc_exception_at(&e, 1400, 19, EXIT);
    enc_exception_at(&e, 1405, 0, RETURN);
    /* a lost EXIT: 20 entered at 2000, RETURN 0 at 2600 */
    enc_exception_at(&e, 2000, 20, ENTER);
    enc_exception_at(&e, 2600, 0, RETURN);
    enc_sw8(&e, 0);
    enc_at(&e, 10000);
    run(&e, e.len, 1);
    const struct saved *r = &reports[0];
    expect_exception(r, 18, 1, 1, 50, 1, 50, 50, 50, 50, 0.5);
    expect_exception(r, 16, 0, 0, 300, 0, 0, 0, 0, 0, 3.0);
    expect_exception(r, 15, 1, 1, 100, 1, 100, 100, 100, 100, 1.0);
    expect_exception(r, 19, 1, 1, 300, 1, 300, 300, 300, 300, 3.0);
    /* 20: its time up to the RETURN 0, but no completed activation */
    expect_exception(r, 20, 1, 1, 600, 0, 0, 0, 0, 0, 6.0);
    assert_int_equal(r->r.unknown_cycles, 10000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schedule),
        cmocka_unit_test(test_other_comparator),
        cmocka_unit_test(test_unknown_before_first_switch),
        cmocka_unit_test(test_overflow_and_lost),
        cmocka_unit_test(test_exception_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
