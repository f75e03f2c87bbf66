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

#include "spoor/itm.h"

#define DIR SPOOR_SHARED_DIR "/testdata/itm/"
#define MAX_SW 200000

struct run {
    spoor_itm_stats stats;
    size_t nsw;
    spoor_itm_packet *sw; /* the SW packets returned, in order */
};

static void decode(const uint8_t *data, size_t len, uint32_t types, size_t chunk, struct run *r)
{
    static spoor_itm_decoder d;
    spoor_itm_init(&d, false);
    spoor_itm_select(&d, types);
    r->nsw = 0;
    r->sw = calloc(MAX_SW, sizeof *r->sw);
    assert_non_null(r->sw);
    spoor_itm_packet p;
    size_t off = 0;
    while (off < len) {
        size_t n = len - off < chunk ? len - off : chunk;
        while (n) {
            size_t k = spoor_itm_feed(&d, data + off, n);
            off += k;
            n -= k;
            while (spoor_itm_next(&d, &p)) {
                assert_true(types & (1u << p.type)); /* only what was selected */
                if (p.type == SPOOR_ITM_SW && r->nsw < MAX_SW)
                    r->sw[r->nsw++] = p;
            }
        }
    }
    spoor_itm_finish(&d);
    while (spoor_itm_next(&d, &p)) {
        assert_true(types & (1u << p.type));
        if (p.type == SPOOR_ITM_SW && r->nsw < MAX_SW)
            r->sw[r->nsw++] = p;
    }
    r->stats = *spoor_itm_stats_get(&d);
}

/* Text mode: the stats and the text of the ports in ports[]. */
static void decode_text(const uint8_t *data, size_t len, const uint32_t ports[8], size_t chunk,
                        spoor_itm_stats *stats, uint8_t *text, size_t *ntext, size_t cap)
{
    static spoor_itm_decoder d;
    spoor_itm_init(&d, false);
    spoor_itm_select_text(&d, ports);
    *ntext = 0;
    spoor_itm_packet p;
    const uint8_t *b;
    size_t off = 0, n;
    while (off < len) {
        size_t m = len - off < chunk ? len - off : chunk;
        while (m) {
            size_t k = spoor_itm_feed(&d, data + off, m);
            off += k;
            m -= k;
            assert_false(spoor_itm_next(&d, &p)); /* no packets in text mode */
            while ((n = spoor_itm_next_text(&d, &b)) != 0) {
                assert_true(*ntext + n <= cap);
                memcpy(text + *ntext, b, n);
                *ntext += n;
            }
        }
    }
    spoor_itm_finish(&d);
    assert_false(spoor_itm_next(&d, &p));
    while ((n = spoor_itm_next_text(&d, &b)) != 0) {
        assert_true(*ntext + n <= cap);
        memcpy(text + *ntext, b, n);
        *ntext += n;
    }
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
            const uint8_t *piece;
            size_t n;
            static const uint8_t sw0[] = {0x01, 'h'}, sw1b[] = {0x09, 'P'},
                                 sw1h[] = {0x0a, 'Q', 'R'}, sw1w[] = {0x0b, 'S', 'T', 'U', 'V'},
                                 sw2[] = {0x11, 'x'}, pc[] = {0x47, 0x10, 0x20, 0x00, 0x08},
                                 reserved[] = {0x04}, sync[] = {0, 0, 0, 0, 0, 0x80},
                                 ts[] = {0xc0, 0x85, 0x01};
            if (r < 900u - 100u * (unsigned)seed)
                piece = sw0, n = sizeof sw0;
            else if (r < 920)
                piece = sw1b, n = sizeof sw1b;
            else if (r < 940)
                piece = sw1h, n = sizeof sw1h;
            else if (r < 950)
                piece = sw1w, n = sizeof sw1w;
            else if (r < 970)
                piece = sw2, n = sizeof sw2;
            else if (r < 990)
                piece = pc, n = sizeof pc;
            else if (r < 993)
                piece = reserved, n = sizeof reserved;
            else if (r < 997)
                piece = sync, n = sizeof sync;
            else
                piece = ts, n = sizeof ts;
            memcpy(data + i, piece, n);
            if (piece == sw0)
                data[i + 1] = (uint8_t)('a' + x % 26);
            i += n;
        }
        check_input(data, i);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_captures),
        cmocka_unit_test(test_random_bytes),
        cmocka_unit_test(test_no_timestamps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
