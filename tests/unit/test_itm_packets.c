/* ITM/DWT decoder: one vector per packet type and length, written from the ARMv7-M ARM
 * appendix D4 (and the ARMv8-M packet protocol chapter) encodings, plus the protocol traps
 * and the error/resynchronisation rules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "itm_encoder.h"
#include "spoor/itm_decoder.h"

#define MAXP 4096

struct result {
    spoor_itm_packet p[MAXP];
    size_t n;
};

/* Feeds bytes to d up to `split` first, then `step` at a time (0 = all at once), then finishes
 * the stream (or the piece of it); appends what d released to r. */
static void feed_and_finish(spoor_itm_decoder *d, const uint8_t *b, size_t len, size_t split,
                            size_t step, struct result *r)
{
    size_t i = 0;
    while (i < len) {
        size_t end = i < split ? split : step && step < len - i ? i + step : len;
        i += spoor_itm_feed(d, b + i, end - i);
        while (r->n < MAXP && spoor_itm_next(d, &r->p[r->n]))
            r->n++;
    }
    spoor_itm_finish(d);
    while (r->n < MAXP && spoor_itm_next(d, &r->p[r->n]))
        r->n++;
}

/* Decodes bytes fed up to `split` first, then `step` at a time (0 = all at once), then
 * finishes the stream; returns the decoder's counters. */
static const spoor_itm_stats *decode_pieces(const uint8_t *b, size_t len, size_t split, size_t step,
                                            bool require_sync, struct result *r)
{
    static spoor_itm_decoder d;
    spoor_itm_init(&d, require_sync);
    r->n = 0;
    feed_and_finish(&d, b, len, split, step, r);
    return spoor_itm_stats_get(&d);
}

/* Decodes bytes fed `step` at a time (0 = all at once), then finishes the stream. */
static void decode_step(const uint8_t *b, size_t len, size_t step, bool require_sync,
                        struct result *r)
{
    decode_pieces(b, len, 0, step, require_sync, r);
}

static struct result R;

static void decode(const uint8_t *b, size_t len)
{
    decode_step(b, len, 0, false, &R);
    /* Byte-at-a-time feeding (the slow path) must give the same packets. */
    static struct result one;
    decode_step(b, len, 1, false, &one);
    assert_int_equal(one.n, R.n);
    for (size_t i = 0; i < R.n; i++) {
        assert_int_equal(one.p[i].type, R.p[i].type);
        assert_int_equal(one.p[i].offset, R.p[i].offset);
        assert_int_equal(one.p[i].time, R.p[i].time);
        assert_memory_equal(&one.p[i].u, &R.p[i].u, sizeof R.p[i].u);
    }
}

#define DECODE(...)                                                                                \
    do {                                                                                           \
        static const uint8_t v_[] = {__VA_ARGS__};                                                 \
        decode(v_, sizeof v_);                                                                     \
    } while (0)

static void no_errors(void)
{
    for (size_t i = 0; i < R.n; i++)
        assert_int_not_equal(R.p[i].type, SPOOR_ITM_ERROR);
}

/* D4 'Synchronization packet': 47 zero bits then a one; longer runs of zeros are allowed. */
static void test_sync(void **state)
{
    (void)state;
    DECODE(0x00, 0x00, 0x00, 0x00, 0x00, 0x80);
    assert_int_equal(R.n, 1);
    assert_int_equal(R.p[0].type, SPOOR_ITM_SYNC);
    assert_int_equal(R.p[0].size, 6);
    DECODE(0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x70);
    assert_int_equal(R.n, 2);
    assert_int_equal(R.p[0].type, SPOOR_ITM_SYNC);
    assert_int_equal(R.p[0].size, 8);
    assert_int_equal(R.p[1].type, SPOOR_ITM_OVERFLOW);
    assert_int_equal(R.p[1].offset, 8);
}

/* A sync is at least 47 zero bits then a one, whatever the number of zeros: a run of zero
 * bytes longer than 65535 (the count once stopped there, leaving the sync's offset 65535
 * bytes before its 0x80 and the zeros before it neither sync nor lost) is one sync packet
 * from its first zero byte; its size saturates at 255. The same after an error (the zeros
 * end the lost region) and while waiting for the first sync. */
static void test_long_zero_run(void **state)
{
    (void)state;
    enum { ZEROS = 100000 };
    static uint8_t v[2 + ZEROS + 2];
    memset(v, 0, sizeof v);
    v[0] = 0x01;
    v[1] = 'a';
    v[2 + ZEROS] = 0x80;
    v[3 + ZEROS] = 0x70;
    decode(v, sizeof v);
    no_errors();
    assert_int_equal(R.n, 3);
    assert_int_equal(R.p[0].type, SPOOR_ITM_SW);
    assert_int_equal(R.p[1].type, SPOOR_ITM_SYNC);
    assert_int_equal(R.p[1].offset, 2);
    assert_int_equal(R.p[1].size, 255);
    assert_int_equal(R.p[2].type, SPOOR_ITM_OVERFLOW);
    assert_int_equal(R.p[2].offset, 3 + ZEROS);

    v[0] = 0x04; /* a reserved header: lost up to the zeros */
    decode(v, sizeof v);
    assert_int_equal(R.n, 3);
    assert_int_equal(R.p[0].type, SPOOR_ITM_ERROR);
    assert_int_equal(R.p[0].offset, 0);
    assert_int_equal(R.p[0].u.error.bytes_lost, 2);
    assert_int_equal(R.p[1].type, SPOOR_ITM_SYNC);
    assert_int_equal(R.p[1].offset, 2);
    assert_int_equal(R.p[2].offset, 3 + ZEROS);

    decode_step(v + 2, sizeof v - 2, 4096, true, &R); /* waiting for a sync: nothing lost */
    assert_int_equal(R.n, 2);
    assert_int_equal(R.p[0].type, SPOOR_ITM_SYNC);
    assert_int_equal(R.p[0].offset, 0);
    assert_int_equal(R.p[1].type, SPOOR_ITM_OVERFLOW);
    assert_int_equal(R.p[1].offset, 1 + ZEROS);
}

/* The zero-run path (a run of zero bytes is skipped many bytes at a time, in a sync and while
 * lost): a sync is 47 zero bits then a one (five zero bytes and 0x80, bit 7 the first one bit
 * after bits 0-6 of the 0x80); 46 zero bits then a one (five zero bytes and 0x40) or 39 (four
 * zero bytes and 0x80) is no sync, and its bytes are lost up to the next sync. */
static void test_zero_run_sync_bits(void **state)
{
    (void)state;
    /* a local timestamp (0x10: format 2, delta 1) first: it releases itself, so the error
     * drops no held packet */
    DECODE(0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x70);
    no_errors();
    assert_int_equal(R.n, 3);
    assert_int_equal(R.p[1].type, SPOOR_ITM_SYNC);
    assert_int_equal(R.p[1].offset, 1);
    assert_int_equal(R.p[1].size, 6);
    assert_int_equal(R.p[2].type, SPOOR_ITM_OVERFLOW);
    assert_int_equal(R.p[2].offset, 7);

    static const uint8_t short_runs[][8] = {
        {0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x70}, /* 46 zero bits, then a one */
        {0x10, 0x70, 0x00, 0x00, 0x00, 0x00, 0x80, 0x70}, /* 39 zero bits, then a one */
    };
    for (size_t t = 0; t < 2; t++) {
        decode(short_runs[t], sizeof short_runs[t]);
        assert_int_equal(R.n, 2);
        assert_int_equal(R.p[0].type, SPOOR_ITM_TS_LOCAL);
        assert_int_equal(R.p[1].type, SPOOR_ITM_ERROR);
        assert_int_equal(R.p[1].u.error.why, SPOOR_ITM_ERR_BAD_SYNC);
        /* from the run's first zero (the overflow of the second stream is held, then
         * dropped with it) to the end of the stream: no sync came */
        assert_int_equal(R.p[1].offset, 1);
        assert_int_equal(R.p[1].u.error.bytes_lost, 7);
        assert_int_equal(R.p[1].u.error.detected_at, 6);
    }
}

/* A stream of long zero runs, a sync, zeros that end in 0x40 (no sync: lost), then zeros and
 * the sync that ends the lost region, decoded split in two at every offset: the same packets
 * and lost-byte counts wherever the runs are cut. */
static void test_zero_run_split_at_every_offset(void **state)
{
    (void)state;
    static uint8_t v[407];
    memset(v, 0, sizeof v);
    v[0] = 0x10;   /* ts_local, delta 1 */
    v[201] = 0x80; /* ends 200 zeros: a sync from 1 */
    v[202] = 0x70; /* overflow */
    v[203] = 0x10; /* ts_local */
    v[304] = 0x40; /* ends 100 zeros: no sync, lost from 204 */
    v[405] = 0x80; /* ends 100 zeros: a sync from 305, which ends the lost region */
    v[406] = 0x70; /* overflow */
    static const struct {
        spoor_itm_type type;
        uint64_t offset;
        uint8_t size;
    } want[] = {
        {SPOOR_ITM_TS_LOCAL, 0, 1},   {SPOOR_ITM_SYNC, 1, 201},  {SPOOR_ITM_OVERFLOW, 202, 1},
        {SPOOR_ITM_TS_LOCAL, 203, 1}, {SPOOR_ITM_ERROR, 204, 0}, {SPOOR_ITM_SYNC, 305, 101},
        {SPOOR_ITM_OVERFLOW, 406, 1},
    };
    static struct result r;
    for (size_t split = 0; split <= sizeof v; split++) {
        const spoor_itm_stats *st = decode_pieces(v, sizeof v, split, 0, false, &r);
        assert_int_equal(st->bytes, sizeof v);
        assert_int_equal(st->bytes_lost, 101);
        assert_int_equal(r.n, sizeof want / sizeof want[0]);
        for (size_t i = 0; i < r.n; i++) {
            assert_int_equal(r.p[i].type, want[i].type);
            assert_int_equal(r.p[i].offset, want[i].offset);
            assert_int_equal(r.p[i].size, want[i].size);
        }
        assert_int_equal(r.p[4].u.error.why, SPOOR_ITM_ERR_BAD_SYNC);
        assert_int_equal(r.p[4].u.error.bytes_lost, 101);
        assert_int_equal(r.p[4].u.error.detected_at, 304);
        assert_int_equal(r.p[6].time, 2);
    }
}

/* D4 'Overflow packet': overflow is the single byte 0x70. */
static void test_overflow(void **state)
{
    (void)state;
    DECODE(0x70);
    assert_int_equal(R.n, 1);
    assert_int_equal(R.p[0].type, SPOOR_ITM_OVERFLOW);
}

/* D4 'Local timestamp packets': format 2 is 0b0TTT0000 (TS = TTT, 1..6); format 1 is 0b11TT0000 (TC
 * = TT) and one to four bytes of 7 timestamp bits each, bit 7 = continuation. */
static void test_local_timestamps(void **state)
{
    (void)state;
    DECODE(0x10, 0x60, 0x30);
    assert_int_equal(R.n, 3);
    assert_int_equal(R.p[0].type, SPOOR_ITM_TS_LOCAL);
    assert_int_equal(R.p[0].u.ts_local.delta, 1);
    assert_int_equal(R.p[1].u.ts_local.delta, 6);
    assert_int_equal(R.p[2].u.ts_local.delta, 3);
    assert_int_equal(R.p[2].u.ts_local.tc, 0);
    assert_int_equal(R.p[2].time, 10);

    /* one, two, three and four payload bytes; TC 0..3 */
    DECODE(0xC0, 0x05, 0xD0, 0x81, 0x01, 0xE0, 0xFF, 0xFF, 0x01, 0xF0, 0xFF, 0xFF, 0xFF, 0x7F);
    assert_int_equal(R.n, 4);
    no_errors();
    assert_int_equal(R.p[0].u.ts_local.delta, 5);
    assert_int_equal(R.p[0].u.ts_local.tc, 0);
    assert_int_equal(R.p[1].u.ts_local.delta, 1 + (1 << 7));
    assert_int_equal(R.p[1].u.ts_local.tc, 1);
    assert_int_equal(R.p[2].u.ts_local.delta, 0x7F + (0x7F << 7) + (1 << 14));
    assert_int_equal(R.p[2].u.ts_local.tc, 2);
    assert_int_equal(R.p[3].u.ts_local.delta, 0x0FFFFFFF);
    assert_int_equal(R.p[3].u.ts_local.tc, 3);
    assert_int_equal(R.p[3].size, 5);
    assert_int_equal(R.p[3].time, 5 + 129 + 32767 + 0x0FFFFFFFull);

    /* a fifth continuation byte is not allowed */
    DECODE(0xC0, 0x81, 0x81, 0x81, 0x81, 0x01);
    assert_int_equal(R.p[0].type, SPOOR_ITM_ERROR);
}

/* D4 'Global timestamp packets' trap: 0x94 is GTS1 (bits [25:0], last byte: TS[25:21], ClkCh bit 5,
 * Wrap bit 6) and 0xB4 is GTS2 (bits [47:26] in 4 bytes or [63:26] in 6 bytes). */
static void test_global_timestamps(void **state)
{
    (void)state;
    DECODE(0x94, 0x80, 0xA0, 0x84, 0x60,              /* GTS1 full, wrap + clkch */
           0xB4, 0xBD, 0xF4, 0x91, 0x01,              /* GTS2 48-bit */
           0x94, 0x05,                                /* GTS1, low 7 bits only */
           0xB4, 0xBD, 0xF4, 0x91, 0x81, 0xF4, 0x07); /* GTS2 64-bit */
    assert_int_equal(R.n, 4);
    no_errors();
    uint64_t low = (0x20ull << 7) | (0x04ull << 14); /* 0x00, 0x20, 0x04, TS[25:21] = 0 */
    assert_int_equal(R.p[0].type, SPOOR_ITM_TS_GLOBAL1);
    assert_int_equal(R.p[0].u.ts_global1.value, low);
    assert_true(R.p[0].u.ts_global1.wrap);
    assert_true(R.p[0].u.ts_global1.clkch);
    uint64_t hi48 = 0x3D | (0x74ull << 7) | (0x11ull << 14) | (1ull << 21);
    assert_int_equal(R.p[1].type, SPOOR_ITM_TS_GLOBAL2);
    assert_int_equal(R.p[1].u.ts_global2.value, hi48 << 26 | low);
    assert_false(R.p[1].u.ts_global2.wide);
    low = (low & ~0x7Full) | 5;
    assert_int_equal(R.p[2].type, SPOOR_ITM_TS_GLOBAL1);
    assert_int_equal(R.p[2].u.ts_global1.value, hi48 << 26 | low);
    assert_false(R.p[2].u.ts_global1.wrap);
    uint64_t hi64 =
        0x3D | (0x74ull << 7) | (0x11ull << 14) | (0x01ull << 21) | (0x74ull << 28) | (7ull << 35);
    assert_int_equal(R.p[3].type, SPOOR_ITM_TS_GLOBAL2);
    assert_int_equal(R.p[3].u.ts_global2.value, hi64 << 26 | low);
    assert_true(R.p[3].u.ts_global2.wide);
}

/* D4 'Extension packet' trap: 0x08 is the page-0 extension, not a software packet; pages select
 * stimulus ports page * 32 + A. */
static void test_extension_pages(void **state)
{
    (void)state;
    DECODE(0x78, 0xF9, 0x41, /* page 7, port 31 -> 255 */
           0x18, 0x01, 0x42, /* page 1, port 0 -> 32 */
           0x08, 0x09, 0x43  /* page 0, port 1 */
    );
    assert_int_equal(R.n, 6);
    no_errors();
    assert_int_equal(R.p[0].type, SPOOR_ITM_EXTENSION);
    assert_int_equal(R.p[0].u.ext.page, 7);
    assert_int_equal(R.p[1].type, SPOOR_ITM_SW);
    assert_int_equal(R.p[1].u.sw.port, 255);
    assert_int_equal(R.p[2].u.ext.page, 1);
    assert_int_equal(R.p[3].u.sw.port, 32);
    assert_int_equal(R.p[4].type, SPOOR_ITM_EXTENSION);
    assert_int_equal(R.p[4].u.ext.page, 0);
    assert_int_equal(R.p[4].size, 1);
    assert_int_equal(R.p[5].u.sw.port, 1);
    assert_int_equal(R.p[5].u.sw.value, 0x43);
}

/* A lost byte that decodes as a page extension (0x38: page 3) moves every later port write to
 * its page; the stimulus port page starts at 0 and a synchronization packet starts it there
 * again, so only the writes before the next sync land on the wrong ports. */
static void test_page_reset_by_sync(void **state)
{
    (void)state;
    DECODE(0x38,                               /* page 3 */
           0x09, 0x41,                         /* port 1 -> 97 */
           0x00, 0x00, 0x00, 0x00, 0x00, 0x80, /* sync */
           0x09, 0x42                          /* port 1 */
    );
    assert_int_equal(R.n, 4);
    no_errors();
    assert_int_equal(R.p[1].u.sw.port, 97);
    assert_int_equal(R.p[2].type, SPOOR_ITM_SYNC);
    assert_int_equal(R.p[3].type, SPOOR_ITM_SW);
    assert_int_equal(R.p[3].u.sw.port, 1);
    assert_int_equal(R.p[3].u.sw.value, 0x42);
}

/* Two pieces of one stream with a gap between them (a reconnected source: spoor_itm_finish()
 * after the first), decoded with the packet types `types` (all, none: the counting loop, or
 * the software packets) fed `step` bytes at a time; returns the counters. */
static const spoor_itm_stats *decode_gap(const itm_encoder *a, const itm_encoder *b, uint32_t types,
                                         size_t step, struct result *r)
{
    static spoor_itm_decoder d;
    spoor_itm_init(&d, false);
    spoor_itm_select(&d, types);
    r->n = 0;
    feed_and_finish(&d, a->buf, a->len, 0, step, r);
    feed_and_finish(&d, b->buf, b->len, 0, step, r);
    return spoor_itm_stats_get(&d);
}

/* The software packets of r (types left out), as port << 1 | page_unknown. */
static size_t sw_ports(const struct result *r, unsigned *out)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->p[i].type == SPOOR_ITM_SW)
            out[n++] = (unsigned)r->p[i].u.sw.port << 1 | r->p[i].u.sw.page_unknown;
    return n;
}

static itm_encoder E1, E2;

/* Starts the two pieces: E1 sets page `page` and writes value on its port a; E2 is empty. */
static void gap_start(unsigned page, unsigned a, uint32_t value)
{
    memset(&E1, 0, sizeof E1);
    memset(&E2, 0, sizeof E2);
    enc_page(&E1, page);
    enc_sw32(&E1, a, value);
}

/* Checks the stream E1, gap, E2 under every selection and feed size: the software packets'
 * ports and page_unknown marks are want[] (port << 1 | unknown), and sw_page_unknown counts
 * the marked ones. */
static void check_gap(const unsigned *want, size_t nwant)
{
    static const uint32_t selections[] = {SPOOR_ITM_ALL_TYPES, 0, 1u << SPOOR_ITM_SW};
    static struct result r;
    uint64_t unknown = 0;
    for (size_t i = 0; i < nwant; i++)
        unknown += want[i] & 1;
    for (size_t s = 0; s < 3; s++) {
        for (size_t step = 0; step <= 3; step += 3) {
            const spoor_itm_stats *st = decode_gap(&E1, &E2, selections[s], step, &r);
            assert_int_equal(st->sw_page_unknown, unknown);
            assert_int_equal(st->packets[SPOOR_ITM_SW], nwant);
            assert_int_equal(st->packets[SPOOR_ITM_ERROR], 0);
            if (selections[s] == 0)
                continue; /* the counters only */
            unsigned got[64];
            assert_int_equal(sw_ports(&r, got), nwant);
            assert_memory_equal(got, want, nwant * sizeof *want);
        }
    }
}

/* After a gap in the stream the stimulus port page is unknown (an extension packet may have
 * been in the gap): the writes are marked and counted until a page extension says the page;
 * their ports are those of the page before the gap. */
static void test_page_unknown_after_gap_until_extension(void **state)
{
    (void)state;
    gap_start(2, 1, 0x11111111); /* port 65 */
    enc_at(&E1, 100);
    for (unsigned i = 0; i < 6; i++) /* after the gap: page unknown, taken as 2 */
        enc_sw32(&E2, i, 0x22222222);
    enc_at(&E2, 200);
    enc_page(&E2, 1);
    enc_sw32(&E2, 1, 0x33333333); /* port 33, known */
    enc_at(&E2, 300);
    const unsigned want[] = {65 << 1,     64 << 1 | 1, 65 << 1 | 1, 66 << 1 | 1,
                             67 << 1 | 1, 68 << 1 | 1, 69 << 1 | 1, 33 << 1};
    check_gap(want, sizeof want / sizeof want[0]);
}

/* A synchronization packet ends the unknown page too: D4.2.8 has page 0 after a sync until an
 * extension packet comes. */
static void test_page_unknown_after_gap_until_sync(void **state)
{
    (void)state;
    gap_start(3, 0, 1); /* port 96 */
    enc_at(&E1, 10);
    enc_sw32(&E2, 0, 2); /* port 96, page unknown */
    enc_at(&E2, 20);
    enc_sync(&E2);
    for (unsigned i = 0; i < 4; i++)
        enc_sw32(&E2, 0, 3); /* port 0 */
    enc_at(&E2, 30);
    const unsigned want[] = {96 << 1, 96 << 1 | 1, 0, 0, 0, 0};
    check_gap(want, sizeof want / sizeof want[0]);
}

/* An overflow packet leaves the page as it was: the ITM emits one for writes it did not take
 * (D4.2.3), and the debugger's rule (D4.2.8) goes by the extension packets received. */
static void test_page_kept_across_overflow(void **state)
{
    (void)state;
    gap_start(2, 1, 1); /* port 65 */
    enc_overflow(&E1);
    for (unsigned i = 0; i < 4; i++)
        enc_sw32(&E1, 1, 2); /* port 65, known */
    enc_at(&E1, 10);
    const unsigned want[] = {65 << 1, 65 << 1, 65 << 1, 65 << 1, 65 << 1};
    check_gap(want, sizeof want / sizeof want[0]);
}

/* A write on an unknown page that an error then drops is no longer counted. */
static void test_page_unknown_write_dropped(void **state)
{
    (void)state;
    gap_start(1, 2, 1); /* port 34 */
    enc_at(&E1, 10);
    enc_sw32(&E2, 2, 2); /* port 34, page unknown, held */
    enc_byte(&E2, 0x04); /* a reserved header: the held write is dropped */
    enc_sync(&E2);
    enc_sw32(&E2, 2, 3); /* port 2 */
    enc_at(&E2, 20);
    static struct result r;
    static const uint32_t selections[] = {SPOOR_ITM_ALL_TYPES, 0, 1u << SPOOR_ITM_SW};
    for (size_t s = 0; s < 3; s++) {
        const spoor_itm_stats *st = decode_gap(&E1, &E2, selections[s], 0, &r);
        assert_int_equal(st->packets[SPOOR_ITM_SW], 2);
        assert_int_equal(st->packets[SPOOR_ITM_ERROR], 1);
        assert_int_equal(st->sw_page_unknown, 0);
    }
}

/* D4 'Instrumentation packet': 0bAAAAA0SS, SS = 01/10/11 for 1/2/4 bytes, little-endian payload. */
static void test_software_sizes(void **state)
{
    (void)state;
    DECODE(0x01, 0x41, 0x0A, 0x34, 0x12, 0xFB, 0x78, 0x56, 0x34, 0x12, 0x8B, 0x03, 0x0F, 0x3F,
           0xFF);
    assert_int_equal(R.n, 4);
    assert_int_equal(R.p[0].u.sw.port, 0);
    assert_int_equal(R.p[0].u.sw.size, 1);
    assert_int_equal(R.p[0].u.sw.value, 0x41);
    assert_int_equal(R.p[1].u.sw.port, 1);
    assert_int_equal(R.p[1].u.sw.size, 2);
    assert_int_equal(R.p[1].u.sw.value, 0x1234);
    assert_int_equal(R.p[2].u.sw.port, 31);
    assert_int_equal(R.p[2].u.sw.size, 4);
    assert_int_equal(R.p[2].u.sw.value, 0x12345678);
    assert_int_equal(R.p[3].u.sw.port, 17);
    assert_int_equal(R.p[3].u.sw.value, 0xFF3F0F03);
    assert_int_equal(R.p[3].offset, 10);
}

/* D4 'Event counter packet': 0x05 + one byte: bit 0 CPI, 1 Exc, 2 Sleep, 3 LSU, 4 Fold, 5 Cyc. */
static void test_event_counter(void **state)
{
    (void)state;
    DECODE(0x05, 0x2A, 0x05, 0x15);
    assert_int_equal(R.n, 2);
    assert_int_equal(R.p[0].type, SPOOR_ITM_EVENT_COUNTER);
    assert_int_equal(R.p[0].u.event_counter.bits, 0x2A); /* cyc, lsu, exc */
    assert_int_equal(R.p[1].u.event_counter.bits, 0x15); /* fold, sleep, cpi */
}

/* D4 'Exception trace packet': 0x0E + ExceptionNumber[7:0], then number bit 8 in bit 0 and FN in
 * bits [5:4]. */
static void test_exception(void **state)
{
    (void)state;
    DECODE(0x0E, 0x0F, 0x10, 0x0E, 0x0F, 0x20, 0x0E, 0x20, 0x30, 0x0E, 0x00, 0x11);
    assert_int_equal(R.n, 4);
    assert_int_equal(R.p[0].type, SPOOR_ITM_EXCEPTION);
    assert_int_equal(R.p[0].u.exception.number, 15);
    assert_int_equal(R.p[0].u.exception.action, SPOOR_ITM_EXC_ENTER);
    assert_int_equal(R.p[1].u.exception.action, SPOOR_ITM_EXC_EXIT);
    assert_int_equal(R.p[2].u.exception.number, 32);
    assert_int_equal(R.p[2].u.exception.action, SPOOR_ITM_EXC_RETURN);
    assert_int_equal(R.p[3].u.exception.number, 256);
    /* FN = 00 is reserved */
    DECODE(0x0E, 0x0F, 0x00);
    assert_int_equal(R.p[0].type, SPOOR_ITM_ERROR);
}

/* D4 'Periodic PC sample packets': 0x17 + PC, or 0x15 + 0x00 while the core sleeps. */
static void test_pc_sample(void **state)
{
    (void)state;
    DECODE(0x17, 0x03, 0x0F, 0x3F, 0xFF, 0x15, 0x00);
    assert_int_equal(R.n, 2);
    assert_int_equal(R.p[0].type, SPOOR_ITM_PC_SAMPLE);
    assert_int_equal(R.p[0].u.pc_sample.pc, 0xFF3F0F03);
    assert_false(R.p[0].u.pc_sample.sleep);
    assert_true(R.p[1].u.pc_sample.sleep);
    DECODE(0x15, 0x01); /* a one-byte sample other than 0 is not defined */
    assert_int_equal(R.p[0].type, SPOOR_ITM_ERROR);
}

/* D4 'Data trace packets': 0b01NN0111 PC value, 0b01NN1110 address offset, 0b10NNWxSS data value.
 */
static void test_data_trace(void **state)
{
    (void)state;
    DECODE(0x47, 0xAA, 0xB8, 0x00, 0x08, /* cmp 0 PC */
           0x77, 0x03, 0x0F, 0x3F, 0xFF, /* cmp 3 PC */
           0x6E, 0x03, 0x0F,             /* cmp 2 address offset */
           0x8F, 0xC2, 0x00, 0x00, 0x00, /* cmp 0 write word */
           0xAE, 0x03, 0x0F,             /* cmp 2 write halfword */
           0xB5, 0x7E,                   /* cmp 3 read byte */
           0xB7, 0x44, 0x33, 0x22, 0x11  /* cmp 3 read word */
    );
    assert_int_equal(R.n, 7);
    assert_int_equal(R.p[6].type, SPOOR_ITM_DWT_DATA);
    assert_int_equal(R.p[6].u.dwt_data.comparator, 3);
    assert_false(R.p[6].u.dwt_data.write);
    assert_int_equal(R.p[6].u.dwt_data.size, 4);
    assert_int_equal(R.p[6].u.dwt_data.value, 0x11223344);
    no_errors();
    assert_int_equal(R.p[0].type, SPOOR_ITM_DWT_PC);
    assert_int_equal(R.p[0].u.dwt_pc.comparator, 0);
    assert_int_equal(R.p[0].u.dwt_pc.pc, 0x0800B8AA);
    assert_int_equal(R.p[1].u.dwt_pc.comparator, 3);
    assert_int_equal(R.p[1].u.dwt_pc.pc, 0xFF3F0F03);
    assert_int_equal(R.p[2].type, SPOOR_ITM_DWT_ADDR);
    assert_int_equal(R.p[2].u.dwt_addr.comparator, 2);
    assert_int_equal(R.p[2].u.dwt_addr.offset, 0x0F03);
    assert_int_equal(R.p[3].type, SPOOR_ITM_DWT_DATA);
    assert_int_equal(R.p[3].u.dwt_data.comparator, 0);
    assert_true(R.p[3].u.dwt_data.write);
    assert_int_equal(R.p[3].u.dwt_data.size, 4);
    assert_int_equal(R.p[3].u.dwt_data.value, 0xC2);
    assert_int_equal(R.p[4].u.dwt_data.comparator, 2);
    assert_int_equal(R.p[4].u.dwt_data.size, 2);
    assert_int_equal(R.p[4].u.dwt_data.value, 0x0F03);
    assert_int_equal(R.p[5].u.dwt_data.comparator, 3);
    assert_false(R.p[5].u.dwt_data.write);
    assert_int_equal(R.p[5].u.dwt_data.size, 1);
    assert_int_equal(R.p[5].u.dwt_data.value, 0x7E);
}

/* A local timestamp dates the packets before it; the next ones wait for the next one. */
static void test_time_accumulates(void **state)
{
    (void)state;
    DECODE(0x01, 0x41, 0x05, 0x01, 0xC0, 0x64, 0x01, 0x42, 0x20, 0x01, 0x43);
    assert_int_equal(R.n, 6);
    assert_int_equal(R.p[0].time, 100);
    assert_true(R.p[0].time_exact);
    assert_int_equal(R.p[1].time, 100);
    assert_int_equal(R.p[2].type, SPOOR_ITM_TS_LOCAL);
    assert_int_equal(R.p[3].time, 102);
    assert_int_equal(R.p[5].type, SPOOR_ITM_SW);
    assert_int_equal(R.p[5].time, 102); /* no timestamp after it: a lower bound */
    assert_false(R.p[5].time_exact);
    no_errors();
}

/* Reserved headers: counted, and the decoder skips to the next sync, saying how many bytes
 * it lost. Packets no timestamp confirmed yet are part of the loss. */
/* ARMv8-M ARM 'Data Trace Match packet' (DWT_FUNCTION.ACTION 0b10 on a comparator that carries
 * no value): 0b01NN0101 and one payload byte. The other sizes of discriminators 8 + 2n stay
 * reserved but 4 (the PC value). */
static void test_data_trace_match(void **state)
{
    (void)state;
    DECODE(0x45, 0x01, /* cmp 0 match */
           0x75, 0x01, /* cmp 3 match */
           0x55, 0x01  /* cmp 1 match */
    );
    assert_int_equal(R.n, 3);
    no_errors();
    static const uint8_t cmp[3] = {0, 3, 1};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(R.p[i].type, SPOOR_ITM_DWT_MATCH);
        assert_int_equal(R.p[i].u.dwt_match.comparator, cmp[i]);
        assert_int_equal(R.p[i].size, 2);
    }
    DECODE(0x46, 0x01, 0x02); /* two payload bytes: reserved */
    assert_int_equal(R.p[0].type, SPOOR_ITM_ERROR);
    assert_int_equal(R.p[0].u.error.why, SPOOR_ITM_ERR_RESERVED_HEADER);
}

static void test_reserved_header_resync(void **state)
{
    (void)state;
    static const uint8_t reserved[] = {0x04, 0x1D, 0x80, 0x90, 0xA0, 0xB0, 0x44, 0xF4, 0xFF};
    for (size_t i = 0; i < sizeof reserved; i++) {
        uint8_t v[] = {0x01, 0x41, 0x10, reserved[i], 0x11, 0x22, 0x00,
                       0x00, 0x00, 0x00, 0x00,        0x80, 0x01, 0x42};
        decode(v, sizeof v);
        assert_int_equal(R.n, 5);
        assert_int_equal(R.p[0].type, SPOOR_ITM_SW);
        assert_int_equal(R.p[1].type, SPOOR_ITM_TS_LOCAL);
        assert_int_equal(R.p[2].type, SPOOR_ITM_ERROR);
        assert_int_equal(R.p[2].offset, 3);
        assert_int_equal(R.p[2].u.error.bytes_lost, 3);
        assert_int_equal(R.p[2].u.error.why, SPOOR_ITM_ERR_RESERVED_HEADER);
        assert_int_equal(R.p[3].type, SPOOR_ITM_SYNC);
        assert_int_equal(R.p[3].offset, 6);
        assert_int_equal(R.p[4].u.sw.value, 0x42);
    }
    /* a held packet before the error is dropped with it */
    DECODE(0x01, 0x41, 0x1D, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80);
    assert_int_equal(R.n, 2);
    assert_int_equal(R.p[0].type, SPOOR_ITM_ERROR);
    assert_int_equal(R.p[0].offset, 0);
    assert_int_equal(R.p[0].u.error.bytes_lost, 3);
}

/* D4 'Synchronization packet' trap: a sync can begin inside what looked like the payload of a
 * packet. */
static void test_sync_inside_payload(void **state)
{
    (void)state;
    /* 0x03 0x11 then 5 zeros and 0x80: "0x11 0 0 0" parses as a payload, but only a sync
     * starting after 0x11 explains the 0x80, so 0x03 0x11 were not a packet. */
    DECODE(0x03, 0x11, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x01, 0x42);
    assert_int_equal(R.n, 3);
    assert_int_equal(R.p[0].type, SPOOR_ITM_ERROR);
    assert_int_equal(R.p[0].offset, 0);
    assert_int_equal(R.p[0].u.error.bytes_lost, 2);
    assert_int_equal(R.p[0].u.error.why, SPOOR_ITM_ERR_SYNC_IN_PACKET);
    assert_int_equal(R.p[1].type, SPOOR_ITM_SYNC);
    assert_int_equal(R.p[1].offset, 2);
    assert_int_equal(R.p[2].u.sw.value, 0x42);

    /* A 0x47 (PC value) header whose "payload" is the start of a sync. */
    DECODE(0x47, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80);
    assert_int_equal(R.n, 2);
    assert_int_equal(R.p[0].type, SPOOR_ITM_ERROR);
    assert_int_equal(R.p[0].u.error.bytes_lost, 1);
    assert_int_equal(R.p[1].type, SPOOR_ITM_SYNC);
    assert_int_equal(R.p[1].offset, 1);

    /* A real zero payload followed by a real sync is not an error. */
    DECODE(0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80);
    assert_int_equal(R.n, 2);
    assert_int_equal(R.p[0].type, SPOOR_ITM_SW);
    assert_int_equal(R.p[0].u.sw.value, 0);
    assert_int_equal(R.p[1].type, SPOOR_ITM_SYNC);
}

static void test_bad_sync_and_truncation(void **state)
{
    (void)state;
    DECODE(0x00, 0x00, 0x41, 0x01);
    assert_int_equal(R.p[0].type, SPOOR_ITM_ERROR);
    assert_int_equal(R.p[0].u.error.why, SPOOR_ITM_ERR_BAD_SYNC);
    assert_int_equal(R.p[0].u.error.bytes_lost, 4);

    DECODE(0x10, 0x03, 0x11, 0x22);
    assert_int_equal(R.n, 2);
    assert_int_equal(R.p[1].type, SPOOR_ITM_ERROR);
    assert_int_equal(R.p[1].u.error.why, SPOOR_ITM_ERR_TRUNCATED);
    assert_int_equal(R.p[1].offset, 1);
    assert_int_equal(R.p[1].u.error.bytes_lost, 3);

    DECODE(0xC0, 0x81);
    assert_int_equal(R.n, 1);
    assert_int_equal(R.p[0].u.error.why, SPOOR_ITM_ERR_TRUNCATED);
}

static void test_require_sync(void **state)
{
    (void)state;
    static const uint8_t v[] = {0x01, 0x41, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x01, 0x42};
    decode_step(v, sizeof v, 0, true, &R);
    assert_int_equal(R.n, 3);
    assert_int_equal(R.p[0].type, SPOOR_ITM_ERROR);
    assert_int_equal(R.p[0].u.error.why, SPOOR_ITM_ERR_NO_SYNC);
    assert_int_equal(R.p[0].u.error.bytes_lost, 2);
    assert_int_equal(R.p[2].u.sw.value, 0x42);
}

/* Many packets and no timestamp: the hold queue releases them in order, nothing is lost. */
static void test_hold_queue_overflows_in_order(void **state)
{
    (void)state;
    static uint8_t v[2 * 300];
    for (int i = 0; i < 300; i++) {
        v[2 * i] = 0x01;
        v[2 * i + 1] = (uint8_t)i;
    }
    decode(v, sizeof v);
    assert_int_equal(R.n, 300);
    for (int i = 0; i < 300; i++) {
        assert_int_equal(R.p[i].type, SPOOR_ITM_SW);
        assert_int_equal(R.p[i].u.sw.value, (uint8_t)i);
        assert_int_equal(R.p[i].offset, 2 * i);
    }
}

/* The fast path (whole packets in the buffer) and the byte-at-a-time path must agree on any
 * input: random bytes biased towards real headers, fed in several chunk sizes. */
static void test_chunking_never_changes_the_result(void **state)
{
    (void)state;
    static const uint8_t headers[] = {0x01, 0x02, 0x03, 0x0B, 0x47, 0x77, 0x8F, 0xAF,
                                      0xB7, 0x9D, 0x0E, 0x17, 0x15, 0x05, 0x10, 0xC0,
                                      0xD0, 0x94, 0xB4, 0x08, 0x70, 0x00};
    static uint8_t v[6000];
    static struct result whole, chunked;
    uint32_t x = 12345;
    for (int round = 0; round < 20; round++) {
        for (size_t i = 0; i < sizeof v; i++) {
            x = x * 1103515245u + 12345u;
            uint32_t r = x >> 8;
            v[i] = (r % 4 == 0)   ? headers[(r >> 4) % sizeof headers]
                   : (r % 4 == 1) ? 0x00
                   : (r % 4 == 2) ? 0x80
                                  : (uint8_t)(r >> 12);
        }
        size_t len = 200 + (size_t)round * 37;
        decode_step(v, len, 0, round & 1, &whole);
        for (size_t step = 1; step <= 7; step += 3) {
            decode_step(v, len, step, round & 1, &chunked);
            assert_int_equal(chunked.n, whole.n);
            for (size_t i = 0; i < whole.n; i++) {
                assert_int_equal(chunked.p[i].type, whole.p[i].type);
                assert_int_equal(chunked.p[i].offset, whole.p[i].offset);
                assert_int_equal(chunked.p[i].size, whole.p[i].size);
                assert_int_equal(chunked.p[i].time, whole.p[i].time);
                assert_int_equal(chunked.p[i].time_exact, whole.p[i].time_exact);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sync),
        cmocka_unit_test(test_long_zero_run),
        cmocka_unit_test(test_zero_run_sync_bits),
        cmocka_unit_test(test_zero_run_split_at_every_offset),
        cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_local_timestamps),
        cmocka_unit_test(test_global_timestamps),
        cmocka_unit_test(test_extension_pages),
        cmocka_unit_test(test_page_reset_by_sync),
        cmocka_unit_test(test_page_unknown_after_gap_until_extension),
        cmocka_unit_test(test_page_unknown_after_gap_until_sync),
        cmocka_unit_test(test_page_kept_across_overflow),
        cmocka_unit_test(test_page_unknown_write_dropped),
        cmocka_unit_test(test_software_sizes),
        cmocka_unit_test(test_event_counter),
        cmocka_unit_test(test_exception),
        cmocka_unit_test(test_pc_sample),
        cmocka_unit_test(test_data_trace),
        cmocka_unit_test(test_time_accumulates),
        cmocka_unit_test(test_data_trace_match),
        cmocka_unit_test(test_reserved_header_resync),
        cmocka_unit_test(test_sync_inside_payload),
        cmocka_unit_test(test_bad_sync_and_truncation),
        cmocka_unit_test(test_require_sync),
        cmocka_unit_test(test_hold_queue_overflows_in_order),
        cmocka_unit_test(test_chunking_never_changes_the_result),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
