/* spoor_itm_select(): a decoder that returns only some packet types (or none, for the
 * counters) must count, time and drop exactly as one that returns every packet, and return
 * the same packets of the selected types. Inputs: the real captures, and pseudo-random bytes
 * (errors, resynchronisation, truncation), each fed in odd-sized chunks. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_captures),
        cmocka_unit_test(test_random_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
