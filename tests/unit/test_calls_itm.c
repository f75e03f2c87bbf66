/* The call recorder's ITM output read back (src/lib/calls_itm.c) and records given contexts
 * and depths one at a time (src/lib/calls_stream.c). The packets are built here as the ITM
 * decoder hands them over; the expected records are the ones each test sends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "spoor/calls_decode.h"
#include "spoor/itm_decoder.h"

#define P 7

static spoor_itm_packet sw(unsigned port, uint32_t value, uint8_t size)
{
    spoor_itm_packet p = {.type = SPOOR_ITM_SW};
    p.u.sw.port = (uint16_t)port;
    p.u.sw.value = value;
    p.u.sw.size = size;
    return p;
}

/* Feeds packets to a new pairer and stream; returns the records paired, contexts and depths
 * given. */
static size_t run(spoor_calls_itm_pairer *pr, spoor_calls_stream *st, const spoor_itm_packet *in,
                  size_t n, spoor_call_record *out)
{
    spoor_calls_itm_pairer_init(pr, P);
    spoor_calls_stream_init(st);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (spoor_calls_itm_pair(pr, &in[i], &out[k])) {
            const spoor_call_context *ctx;
            spoor_calls_stream_add(st, &out[k], &ctx);
            k++;
        }
    return k;
}

/* An interrupt between the two words of the record it preempts: its records pair first;
 * other ports' words and other packets in between change nothing. */
static void test_interleaved_words_pair_innermost_first(void **state)
{
    (void)state;
    spoor_calls_itm_pairer pr;
    spoor_calls_stream st;
    spoor_itm_packet ts = {.type = SPOOR_ITM_TS_LOCAL};
    const spoor_itm_packet in[] = {
        sw(P, 0x1001, 4),     sw(0, 'a', 1),
        sw(P + 1, 0x2001, 4),                            /* enter A */
        sw(P, 0x1101, 4),                                /* enter B: fn word */
        sw(P, 0x3001, 4),     sw(P + 1, 0xFFFFFFF9u, 4), /* enter handler H */
        sw(P + 2, 5, 4),      ts,                        /* noise */
        sw(P, 0x3000, 4),     sw(P + 1, 0xFFFFFFF9u, 4), /* exit H */
        sw(P + 1, 0x2011, 4),                            /* B's site */
        sw(P, 0x1100, 4),     sw(P + 1, 0x2011, 4),      /* exit B */
    };
    spoor_call_record r[8];
    size_t n = run(&pr, &st, in, sizeof in / sizeof in[0], r);
    assert_int_equal(n, 5);
    assert_int_equal(r[0].function, 0x1000);
    assert_int_equal(r[0].depth, 0);
    assert_int_equal(r[1].function, 0x3000); /* H before B */
    assert_int_equal(r[1].site, 0xFFFFFFF9u);
    assert_int_equal(r[1].context, 1);
    assert_int_equal(r[2].context, 1);
    assert_int_equal(r[3].function, 0x1100);
    assert_int_equal(r[3].kind, SPOOR_CALL_ENTER);
    assert_int_equal(r[3].site, 0x2010);
    assert_int_equal(r[3].context, 0);
    assert_int_equal(r[3].depth, 1);
    assert_int_equal(r[4].depth, 1);
    for (size_t i = 0; i < n; i++)
        assert_false(r[i].after_gap);
    assert_int_equal(pr.losses, 0);
}

/* Overflow after a lost call site, a lone call site, a bad word: the waiting words go, the
 * next record follows a gap, depths restart at 0. */
static void test_losses(void **state)
{
    (void)state;
    spoor_calls_itm_pairer pr;
    spoor_calls_stream st;
    spoor_itm_packet ovf = {.type = SPOOR_ITM_OVERFLOW};
    const spoor_itm_packet in[] = {
        sw(P, 0x1001, 4),     sw(P + 1, 0x2001, 4), /* enter A, depth 0 */
        sw(P, 0x1101, 4),     ovf,                  /* enter B lost (its site) */
        sw(P, 0x1201, 4),     sw(P + 1, 0x2021, 4), /* enter C: after the gap, depth 0 */
        sw(P + 1, 0x2031, 4),                       /* a lone call site */
        sw(P, 0x1200, 4),     sw(P + 1, 0x2020, 4), /* an even call site: bad word */
        sw(P, 0x1200, 2),     sw(P + 1, 0x2021, 4), /* a 2-byte function word: bad word */
        sw(P, 0x1200, 4),     sw(P + 1, 0x2021, 4), /* exit C: after a gap */
    };
    spoor_call_record r[8];
    size_t n = run(&pr, &st, in, sizeof in / sizeof in[0], r);
    assert_int_equal(n, 3);
    assert_false(r[0].after_gap);
    assert_true(r[1].after_gap);
    assert_int_equal(r[1].function, 0x1200);
    assert_int_equal(r[1].depth, 0);
    assert_int_equal(pr.gap_why, SPOOR_CALLS_LOSS_UNPAIRED);
    assert_true(r[2].after_gap);
    assert_int_equal(r[2].depth, 0); /* depths restarted: the exit stays at 0 */
    assert_int_equal(pr.losses, 5);  /* the 2-byte word left its call site alone */
    assert_string_equal(spoor_calls_loss_text(SPOOR_CALLS_LOSS_OVERFLOW), "ITM overflow");
}

/* A stream that starts inside calls and inside a handler. */
static void test_stream_starts_inside(void **state)
{
    (void)state;
    spoor_calls_stream st;
    spoor_calls_stream_init(&st);
    spoor_call_record r[] = {
        {.kind = SPOOR_CALL_EXIT, .function = 0x1000, .site = 0x2000},
        {.kind = SPOOR_CALL_EXIT, .function = 0x3000, .site = 0xFFFFFFF9u},
        {.kind = SPOOR_CALL_EXIT, .function = 0x1100, .site = 0x2010},
        {.kind = SPOOR_CALL_ENTER, .function = 0x1100, .site = 0x2010},
    };
    const spoor_call_context *ctx;
    for (size_t i = 0; i < 4; i++)
        spoor_calls_stream_add(&st, &r[i], &ctx);
    assert_int_equal(r[0].depth, 0);
    assert_int_equal(r[0].context, 0);
    assert_int_equal(r[1].context, 1); /* the handler's exit: a context of its own */
    assert_int_equal(r[1].depth, 0);
    assert_int_equal(r[2].context, 0);
    assert_int_equal(r[2].depth, 0);
    assert_int_equal(r[3].depth, 0);
    assert_false(ctx->handler);
}

/* Writes on P and P+1 whose stimulus port page the decoder does not know (after a gap) are
 * paired as written and counted; other ports' writes on an unknown page are not. */
static void test_page_unknown_counted(void **state)
{
    (void)state;
    spoor_calls_itm_pairer pr;
    spoor_calls_stream st;
    spoor_itm_packet in[] = {
        sw(P, 0x1001, 4), sw(P + 1, 0x2001, 4), /* page known */
        sw(P, 0x1101, 4), sw(P + 1, 0x2101, 4), /* page unknown */
        sw(P + 3, 5, 4),                        /* page unknown, another port */
    };
    in[2].u.sw.page_unknown = in[3].u.sw.page_unknown = in[4].u.sw.page_unknown = true;
    spoor_call_record r[4];
    assert_int_equal(run(&pr, &st, in, sizeof in / sizeof in[0], r), 2);
    assert_int_equal(r[1].function, 0x1100);
    assert_int_equal(pr.page_unknown, 2);
    assert_int_equal(pr.other_ports, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interleaved_words_pair_innermost_first),
        cmocka_unit_test(test_losses),
        cmocka_unit_test(test_stream_starts_inside),
        cmocka_unit_test(test_page_unknown_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
