/* spoor_itm_select(): a decoder that returns only some packet types (or none, for the
 * counters) must count, time and drop exactly as one that returns every packet, and return
 * the same packets of the selected types; spoor_itm_select_text() likewise, and its text must
 * be the payload bytes of the software packets of its ports that the full decoder returns.
 * Inputs: the real captures, pseudo-random bytes (errors, resynchronisation, truncation) and
 * printf-like streams without timestamps (the hold queue overflows all the time), each fed in
 * odd-sized chunks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spoor/itm_decoder.h"

#define DIR SPOOR_SHARED_DIR "/testdata/itm/"
#define MAX_SW 200000

struct run {
    spoor_itm_stats stats;
    size_t nsw;
    spoor_itm_packet *sw; /* the SW packets returned, in order */
};

/* What a decoder released, taken after every feed and after the finish. */
struct taker {
    void (*take)(spoor_itm_decoder *d, struct taker *t);
};

/* Feeds data chunk bytes at a time, as a consumer does, then finishes the stream. */
static void feed_all(spoor_itm_decoder *d, const uint8_t *data, size_t len, size_t chunk,
                     struct taker *t)
{
    size_t off = 0;
    while (off < len) {
        size_t n = len - off < chunk ? len - off : chunk;
        while (n) {
            size_t k = spoor_itm_feed(d, data + off, n);
            off += k;
            n -= k;
            t->take(d, t);
        }
    }
    spoor_itm_finish(d);
    t->take(d, t);
}

struct packet_taker {
    struct taker t;
    uint32_t types;
    struct run *r;
};

static void take_packets(spoor_itm_decoder *d, struct taker *t)
{
    struct packet_taker *pt = (struct packet_taker *)t;
    spoor_itm_packet p;
    while (spoor_itm_next(d, &p)) {
        assert_true(pt->types & (1u << p.type)); /* only what was selected */
        if (p.type == SPOOR_ITM_SW && pt->r->nsw < MAX_SW)
            pt->r->sw[pt->r->nsw++] = p;
    }
}

static void decode(const uint8_t *data, size_t len, uint32_t types, size_t chunk, struct run *r)
{
    static spoor_itm_decoder d;
    spoor_itm_init(&d, false);
    spoor_itm_select(&d, types);
    r->nsw = 0;
    r->sw = calloc(MAX_SW, sizeof *r->sw);
    assert_non_null(r->sw);
    struct packet_taker pt = {{take_packets}, types, r};
    feed_all(&d, data, len, chunk, &pt.t);
    r->stats = *spoor_itm_stats_get(&d);
}

struct text_taker {
    struct taker t;
    uint8_t *text;
    size_t n, cap;
};

/* Appends the released text; a text-mode decoder returns no packet. */
static void take_text(spoor_itm_decoder *d, struct taker *t)
{
    struct text_taker *tt = (struct text_taker *)t;
    spoor_itm_packet p;
    assert_false(spoor_itm_next(d, &p));
    const uint8_t *b;
    size_t n;
    while ((n = spoor_itm_next_text(d, &b)) != 0) {
        assert_true(tt->n + n <= tt->cap);
        memcpy(tt->text + tt->n, b, n);
        tt->n += n;
    }
}

/* Text mode: the stats and the text of the ports in ports[]. */
static void decode_text(const uint8_t *data, size_t len, const uint32_t ports[8], size_t chunk,
                        spoor_itm_stats *stats, uint8_t *text, size_t *ntext, size_t cap)
{
    static spoor_itm_decoder d;
    spoor_itm_init(&d, false);
    spoor_itm_select_text(&d, ports);
    struct text_taker tt = {{take_text}, text, 0, cap};
    feed_all(&d, data, len, chunk, &tt.t);
    *ntext = tt.n;
    *stats = *spoor_itm_stats_get(&d);
}

static void same_stats(const spoor_itm_stats *a, const spoor_itm_stats *b)
{
    assert_int_equal(a->bytes, b->bytes);
    for (int t = 0; t < SPOOR_ITM_TYPE_COUNT; t++)
        assert_int_equal(a->packets[t], b->packets[t]);
    assert_int_equal(a->bytes_lost, b->bytes_lost);
    assert_int_equal(a->released_any, b->released_any);
    assert_int_equal(a->time_first, b->time_first);
    assert_int_equal(a->time_last, b->time_last);
}

static void check_input(const uint8_t *data, size_t len)
{
    static const size_t chunks[] = {1, 7, 4096, 1 << 20};
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
        struct run all, none, sw;
        decode(data, len, SPOOR_ITM_ALL_TYPES, chunks[c], &all);
        decode(data, len, 0, chunks[c], &none);
        decode(data, len, 1u << SPOOR_ITM_SW, chunks[c], &sw);
        same_stats(&all.stats, &none.stats);
        same_stats(&all.stats, &sw.stats);
        assert_true(all.nsw < MAX_SW);
        /* text of ports 0 and 1 (the common ones), and of port 0 alone */
        static const uint32_t port_sets[2][8] = {{0x3}, {0x1}};
        static uint8_t want[4 * MAX_SW], got[4 * MAX_SW];
        for (int t = 0; t < 2; t++) {
            size_t nwant = 0, ngot;
            for (size_t i = 0; i < all.nsw; i++) {
                const spoor_itm_packet *p = &all.sw[i];
                if (p->u.sw.port < 256 &&
                    (port_sets[t][p->u.sw.port / 32] >> (p->u.sw.port % 32) & 1))
                    for (unsigned b = 0; b < p->u.sw.size; b++)
                        want[nwant++] = (uint8_t)(p->u.sw.value >> (8 * b));
            }
            spoor_itm_stats text_stats;
            decode_text(data, len, port_sets[t], chunks[c], &text_stats, got, &ngot, sizeof got);
            same_stats(&all.stats, &text_stats);
            assert_int_equal(ngot, nwant);
            assert_memory_equal(got, want, nwant);
        }
        assert_int_equal(none.nsw, 0);
        assert_int_equal(all.nsw, sw.nsw);
        for (size_t i = 0; i < all.nsw; i++) {
            assert_int_equal(all.sw[i].offset, sw.sw[i].offset);
            assert_int_equal(all.sw[i].time, sw.sw[i].time);
            assert_int_equal(all.sw[i].time_exact, sw.sw[i].time_exact);
            assert_int_equal(all.sw[i].size, sw.sw[i].size);
            assert_int_equal(all.sw[i].u.sw.port, sw.sw[i].u.sw.port);
            assert_int_equal(all.sw[i].u.sw.size, sw.sw[i].u.sw.size);
            assert_int_equal(all.sw[i].u.sw.value, sw.sw[i].u.sw.value);
        }
        free(all.sw);
        free(none.sw);
        free(sw.sw);
    }
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static uint8_t buf[1 << 20];
    *len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return buf;
}

static void test_captures(void **state)
{
    (void)state;
    static const char *const files[] = {
        DIR "cmsis-ctrace-blinky/Blinky+Arm.SWO.raw",
        DIR "rust-itm/itm.bin",
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        size_t len;
        const uint8_t *data = read_file(files[i], &len);
        assert_true(len > 100);
        check_input(data, len);
    }
}

static void test_random_bytes(void **state)
{
    (void)state;
    static uint8_t data[1 << 16];
    uint32_t x = 0x12345678u;
    for (int seed = 0; seed < 8; seed++) {
        for (size_t i = 0; i < sizeof data; i++) {
            x ^= x << 13; /* xorshift32 */
            x ^= x >> 17;
            x ^= x << 5;
            /* mostly the common headers (SW 1-byte on port 0, local TS, sync bytes), some
             * anything: errors and resynchronisation happen throughout */
            static const uint8_t common[] = {0x01, 'a', 0xc0, 0x10, 0x00, 0x80, 0x70, 0x47};
            data[i] = (x >> 24) < 200 ? common[x & 7] : (uint8_t)x;
        }
        check_input(data, sizeof data);
    }
}

/* printf text on port 0 (four packets at a time), with a few writes to port 1 (1, 2 and 4
 * bytes), DWT PC packets, rarely a reserved header (drops the held packets), a sync, a
 * timestamp or a port-0 run broken in the middle of a group of four; no timestamps for long
 * stretches, so the hold queue releases its oldest packets all the time. */
static void test_no_timestamps(void **state)
{
    (void)state;
    static uint8_t data[1 << 17];
    uint32_t x = 0x9e3779b9u;
    for (int seed = 0; seed < 4; seed++) {
        size_t i = 0;
        while (i + 16 < sizeof data) {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            unsigned r = x % 1000;
            /* pieces by r (0-999): the first while r < its bound (port 0's shrinks by seed) */
            static const struct {
                unsigned below;
                uint8_t n, bytes[6];
            } pieces[] = {
                {0, 2, {0x01, 'h'}}, /* port 0, one character (below: set per seed) */
                {920, 2, {0x09, 'P'}},
                {940, 3, {0x0a, 'Q', 'R'}},
                {950, 5, {0x0b, 'S', 'T', 'U', 'V'}},
                {970, 2, {0x11, 'x'}},
                {990, 5, {0x47, 0x10, 0x20, 0x00, 0x08}}, /* data trace PC */
                {993, 1, {0x04}},                         /* reserved header */
                {997, 6, {0, 0, 0, 0, 0, 0x80}},          /* sync */
                {1000, 3, {0xc0, 0x85, 0x01}},            /* local timestamp */
            };
            size_t k = r < 900u - 100u * (unsigned)seed ? 0 : 1;
            while (r >= pieces[k].below && k + 1 < sizeof pieces / sizeof pieces[0])
                k++;
            const uint8_t *piece = pieces[k].bytes;
            size_t n = pieces[k].n;
            memcpy(data + i, piece, n);
            if (k == 0)
                data[i + 1] = (uint8_t)('a' + x % 26);
            i += n;
        }
        check_input(data, i);
    }
}

/* Packets of every kind drawn one at a time (what the counters-only loop sees at its worst:
 * the kinds do not repeat), valid ones mostly: software and hardware source packets of every
 * size, local timestamps of both formats and every length, GTS1 and GTS2 of every length,
 * extensions, overflows, syncs (some too short); and payloads the protocol refuses (an
 * exception trace with FN = 0, an asleep PC sample with a payload, a local timestamp whose
 * four payload bytes continue), reserved headers and stray zero bytes. Each such packet stops
 * the stats loop of a counters-only consumer; the stretches between are long enough for it. */
static void test_every_kind(void **state)
{
    (void)state;
    static uint8_t data[1 << 18];
    uint32_t x = 0x2545F491u;
#define NEXT() (x ^= x << 13, x ^= x >> 17, x ^= x << 5, x)
    for (int seed = 0; seed < 6; seed++) {
        size_t i = 0;
        /* one rare packet per `rare` packets: seed 0 none but syncs */
        unsigned rare = seed == 0 ? 0 : 40u << seed;
        while (i + 16 < sizeof data) {
            uint32_t r = NEXT(), v = NEXT();
            uint8_t *o = data + i;
            size_t n;
            unsigned k = r % 100;
            if (rare && NEXT() % rare == 0) { /* something the stats loop leaves to the others */
                static const uint8_t odd[][7] = {
                    {3, 0x0E, 0x20, 0x00},                   /* exception, FN = 0 */
                    {2, 0x15, 0x07},                         /* asleep with a payload */
                    {6, 0xC0, 0x81, 0x82, 0x83, 0x84, 0x05}, /* timestamp of 4 + C */
                    {3, 0x94, 0x81, 0x02},                   /* GTS1, 2 payload bytes */
                    {5, 0xB4, 0x81, 0x82, 0x83, 0x01},       /* GTS2 */
                    {2, 0x88, 0x01},                         /* extension: page 1 */
                    {1, 0x08},                               /* extension: page 0 */
                    {1, 0x70},                               /* overflow */
                    {1, 0x04},                               /* reserved */
                    {2, 0x00, 0x00},                         /* zeros: no sync */
                };
                const uint8_t *e = odd[v % (sizeof odd / sizeof odd[0])];
                n = e[0];
                memcpy(o, e + 1, n);
            } else if (k < 30) { /* software, any port and size */
                unsigned ss = 1 + v % 3;
                n = ss == 3 ? 5 : ss + 1;
                o[0] = (uint8_t)((r >> 8 & 0x1F) << 3 | ss);
                memcpy(o + 1, &r, 4);
            } else if (k < 42) { /* local timestamp format 1, 1-4 payload bytes */
                n = 2 + v % 4;
                o[0] = (uint8_t)(0xC0 | (r >> 8 & 3) << 4);
                for (size_t b = 1; b < n; b++)
                    o[b] = (uint8_t)((b + 1 < n ? 0x80 : 0) | (NEXT() & 0x7F));
            } else if (k < 50) { /* local timestamp format 2 */
                n = 1;
                o[0] = (uint8_t)((1 + v % 6) << 4);
            } else if (k < 53) { /* GTS1, all four payload bytes */
                n = 5;
                o[0] = 0x94;
                for (size_t b = 1; b < 5; b++)
                    o[b] = (uint8_t)((b < 4 ? 0x80 : 0) | (NEXT() & 0x7F));
            } else if (k < 60) { /* exception trace, FN 1-3 */
                n = 3;
                o[0] = 0x0E;
                o[1] = (uint8_t)v;
                o[2] = (uint8_t)((1 + r % 3) << 4 | (v >> 8 & 1));
            } else if (k < 66) { /* PC sample, or asleep */
                n = v % 4 ? 5 : 2;
                o[0] = n == 5 ? 0x17 : 0x15;
                memcpy(o + 1, &r, 4);
                if (n == 2)
                    o[1] = 0;
            } else if (k < 69) { /* event counter */
                n = 2;
                o[0] = 0x05;
                o[1] = (uint8_t)(v & 0x3F);
            } else if (k < 96) { /* data trace: PC, address, match, value of every size */
                static const uint8_t heads[] = {0x47, 0x4E, 0x45, 0x85, 0x86,
                                                0x87, 0x8D, 0x8E, 0x8F};
                o[0] = (uint8_t)(heads[v % sizeof heads] | (r >> 8 & 3) << 4);
                static const uint8_t sizes[] = {5, 3, 2, 2, 3, 5, 2, 3, 5};
                n = sizes[v % sizeof heads];
                memcpy(o + 1, &r, 4);
            } else { /* sync */
                n = 6 + v % 3;
                memset(o, 0, n - 1);
                o[n - 1] = 0x80;
            }
            i += n;
        }
        check_input(data, i);
    }
#undef NEXT
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_captures),
        cmocka_unit_test(test_random_bytes),
        cmocka_unit_test(test_no_timestamps),
        cmocka_unit_test(test_every_kind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
