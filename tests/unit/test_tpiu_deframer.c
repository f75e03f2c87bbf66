/* TPIU formatter deframer: frames written by hand from the CoreSight formatter rules (even
 * byte = ID when bit 0 is set, aux byte 15 supplies the low bit of even data bytes or says
 * whether an ID change applies after the next byte), full and half syncs, and alignment
 * detection when a capture starts mid-frame with no sync. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "spoor/itm_decoder.h"
#include "spoor/tpiu_deframer.h"

struct collected {
    uint8_t data[128][8192];
    size_t len[128];
    uint8_t order[64]; /* IDs in the order their runs arrived */
    size_t runs;
};

static struct collected C;

static void collect(void *ctx, uint8_t id, const uint8_t *data, size_t len)
{
    struct collected *c = ctx;
    if (c->runs < sizeof c->order)
        c->order[c->runs] = id;
    c->runs++;
    assert_true(c->len[id] + len <= sizeof c->data[id]);
    memcpy(c->data[id] + c->len[id], data, len);
    c->len[id] += len;
}

static spoor_tpiu_deframer T;

static void reset(int alignment)
{
    memset(&C, 0, sizeof C);
    spoor_tpiu_init(&T, alignment, collect, &C);
}

/* byte 0: ID 1, aux 0 -> byte 1 is ID 1's; byte 2: data 0x42 with aux 1 -> 0x43;
 * byte 4: ID 2 with aux 1 -> byte 5 still ID 1's; byte 12: ID 1 with aux 0. */
static const uint8_t frame_a[16] = {0x03, 0x41, 0x42, 0x44, 0x05, 0x45, 0x46, 0x47,
                                    0x48, 0x49, 0x4A, 0x4C, 0x03, 0x4D, 0x4E, 0xA6};

static void check_frame_a(void)
{
    static const uint8_t id1[] = {0x41, 0x43, 0x44, 0x45, 0x4D, 0x4F};
    static const uint8_t id2[] = {0x46, 0x47, 0x48, 0x49, 0x4B, 0x4C};
    assert_int_equal(C.len[1], sizeof id1);
    assert_memory_equal(C.data[1], id1, sizeof id1);
    assert_int_equal(C.len[2], sizeof id2);
    assert_memory_equal(C.data[2], id2, sizeof id2);
    assert_int_equal(C.order[0], 1);
    assert_int_equal(C.order[1], 2);
    assert_int_equal(C.order[2], 1);
}

static void test_frame_ids_and_aux(void **state)
{
    (void)state;
    reset(0);
    spoor_tpiu_decode_frame(&T, frame_a);
    check_frame_a();
    assert_int_equal(T.stats.id_changes, 3);
    assert_int_equal(T.cur_id, 1);
}

/* An ID in byte 14 applies to the next frame; data before any ID is counted, not passed. */
static void test_id_carries_to_next_frame(void **state)
{
    (void)state;
    reset(0);
    uint8_t f1[16] = {0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
                      0x18, 0x19, 0x1A, 0x1B, 0x1C, 0x1D, 0x07, 0x00};
    uint8_t f2[16] = {0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27,
                      0x28, 0x29, 0x2A, 0x2B, 0x2C, 0x2D, 0x2E, 0x00};
    spoor_tpiu_decode_frame(&T, f1);
    assert_int_equal(T.stats.no_id_bytes, 14);
    spoor_tpiu_decode_frame(&T, f2);
    assert_int_equal(C.len[3], 15);
    assert_int_equal(C.data[3][0], 0x20);
    assert_int_equal(C.data[3][14], 0x2E);
}

/* Full sync: frames start after it; bytes of a frame it interrupts are skipped. */
static void test_full_sync_sets_alignment(void **state)
{
    (void)state;
    reset(-1);
    uint8_t s[5 + 4 + 16 + 2 + 16];
    memcpy(s, "\x11\x22\x33\x44\x55", 5);
    memcpy(s + 5, "\xFF\xFF\xFF\x7F", 4);
    memcpy(s + 9, frame_a, 16);
    memcpy(s + 25, "\xFF\x7F", 2); /* half sync between frames: padding */
    memcpy(s + 27, frame_a, 16);
    spoor_tpiu_feed(&T, s, sizeof s);
    spoor_tpiu_finish(&T);
    assert_int_equal(T.how, SPOOR_TPIU_ALIGN_SYNC);
    assert_int_equal(T.stats.full_syncs, 1);
    assert_int_equal(T.stats.half_syncs, 1);
    assert_int_equal(T.stats.frames, 2);
    assert_int_equal(T.stats.skipped, 5);
    assert_int_equal(C.len[1], 12);
    assert_int_equal(C.len[2], 12);
}

/* A formatter writing one source per frame: ID in byte 0 (aux 0), 14 data bytes. */
static size_t frame_stream(uint8_t *out, const uint8_t *a, size_t alen, const uint8_t *b,
                           size_t blen)
{
    size_t n = 0, ia = 0, ib = 0;
    for (int turn = 0; ia < alen || ib < blen; turn ^= 1) {
        const uint8_t *src = turn ? b : a;
        size_t *i = turn ? &ib : &ia, len = turn ? blen : alen;
        if (*i >= len)
            continue;
        uint8_t *f = out + n, aux = 0;
        f[0] = (uint8_t)((turn ? 2 : 1) << 1 | 1);
        for (int k = 1; k < 15; k++) {
            uint8_t v = *i < len ? src[(*i)++] : 0x00;
            if (k % 2 == 0) {
                aux |= (uint8_t)((v & 1) << (k / 2));
                v &= 0xFE;
            }
            f[k] = v;
        }
        f[15] = aux;
        n += 16;
    }
    return n;
}

/* An ITM stream of software and timestamp packets. */
static size_t itm_stream(uint8_t *out, size_t packets, uint8_t seed)
{
    size_t n = 0;
    for (size_t i = 0; i < packets; i++) {
        out[n++] = 0x03 | (uint8_t)((i % 4) << 3);
        for (int k = 0; k < 4; k++)
            out[n++] = (uint8_t)(seed + i * 7 + k);
        out[n++] = 0xC0;
        out[n++] = (uint8_t)(0x80 | (i & 0x7F));
        out[n++] = 0x01;
    }
    return n;
}

static void test_alignment_detected_without_sync(void **state)
{
    (void)state;
    static uint8_t a[4096], b[4096], framed[16384], capture[16384];
    size_t alen = itm_stream(a, 300, 1), blen = itm_stream(b, 300, 100);
    /* the capture starts 9 bytes into a frame (offset 7 of the stream is a frame start) */
    size_t flen = frame_stream(framed, a, 14 * 120, b, 14 * 120);
    (void)alen;
    (void)blen;
    size_t clen = flen - 9;
    memcpy(capture, framed + 9, clen);
    reset(-1);
    spoor_tpiu_feed(&T, capture, clen);
    spoor_tpiu_finish(&T);
    assert_int_equal(T.how, SPOOR_TPIU_ALIGN_DETECTED);
    assert_int_equal(T.alignment, 7);
    /* The streams from the second frame on are exactly the originals. */
    assert_true(C.len[1] >= 14 * 119 - 1);
    assert_memory_equal(C.data[1], a + 14, 14 * 119);
    assert_memory_equal(C.data[2] + C.len[2] - 14 * 120, b, 14 * 120);
    assert_true(strstr(T.why, "offset 7") != NULL);
}

/* Real capture: Blinky+Arm.TB.raw has no full sync; it must split into IDs 1 and 2 whose ITM
 * decodes without errors. */
static void test_tb_capture(void **state)
{
    (void)state;
    static uint8_t buf[8192];
    FILE *f = fopen(SPOOR_SHARED_DIR "/testdata/itm/cmsis-ctrace-blinky/Blinky+Arm.TB.raw", "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_int_equal(n, 4096);
    reset(-1);
    spoor_tpiu_feed(&T, buf, n);
    spoor_tpiu_finish(&T);
    assert_int_equal(T.how, SPOOR_TPIU_ALIGN_DETECTED);
    assert_int_equal(T.alignment, 0);
    assert_int_equal(T.stats.reserved_ids, 0);
    for (int id = 0; id < 128; id++)
        if (id != 1 && id != 2)
            assert_int_equal(C.len[id], 0);
    for (int id = 1; id <= 2; id++) {
        static spoor_itm_decoder d;
        spoor_itm_init(&d, false);
        size_t done = 0;
        spoor_itm_packet p;
        size_t packets = 0;
        while (done < C.len[id]) {
            done += spoor_itm_feed(&d, C.data[id] + done, C.len[id] - done);
            while (spoor_itm_next(&d, &p)) {
                assert_int_not_equal(p.type, SPOOR_ITM_ERROR);
                packets++;
            }
        }
        spoor_itm_finish(&d);
        while (spoor_itm_next(&d, &p))
            packets++; /* a packet cut by the end of the capture is allowed */
        assert_true(packets > 300);
        assert_true(spoor_itm_stats_get(&d)->packets[SPOOR_ITM_EXCEPTION] > 50);
        assert_true(spoor_itm_stats_get(&d)->packets[SPOOR_ITM_PC_SAMPLE] > 50);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frame_ids_and_aux),
        cmocka_unit_test(test_id_carries_to_next_frame),
        cmocka_unit_test(test_full_sync_sets_alignment),
        cmocka_unit_test(test_alignment_detected_without_sync),
        cmocka_unit_test(test_tb_capture),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
