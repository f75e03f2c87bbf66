/* Decoders started in several threads at the same moment (the first decoders of the process:
 * nothing was initialised before) decode the same input exactly as one decoder does alone
 * afterwards. The decoder keeps no state outside its struct; its lookup tables are constants
 * (they used to be filled on first use, a data race between threads starting decoders at once,
 * which ThreadSanitizer reports on that code). Inputs: the real SWO capture, and pseudo-random
 * bytes of every header kind (errors, resynchronisation). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spoor/itm_decoder.h"

#define CAPTURE SPOOR_SHARED_DIR "/testdata/itm/cmsis-ctrace-blinky/Blinky+Arm.SWO.raw"
#define THREADS 6
#define CHUNK 1000

static uint8_t input[1 << 18];
static size_t input_len;

/* What a decoder gave: a digest of every field of every packet returned, and the counters. */
struct result {
    uint32_t types;
    uint64_t digest, packets;
    spoor_itm_stats stats;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
    return (h ^ v) * 0x100000001B3ull; /* FNV-1a, a word at a time */
}

static uint64_t fold_packet(uint64_t h, const spoor_itm_packet *p)
{
    h = mix(h, p->type);
    h = mix(h, p->offset);
    h = mix(h, p->time);
    h = mix(h, p->time_exact);
    h = mix(h, p->size);
    switch (p->type) {
    case SPOOR_ITM_TS_LOCAL: return mix(mix(h, p->u.ts_local.delta), p->u.ts_local.tc);
    case SPOOR_ITM_TS_GLOBAL1:
        h = mix(h, p->u.ts_global1.value);
        return mix(mix(h, p->u.ts_global1.wrap), p->u.ts_global1.clkch);
    case SPOOR_ITM_TS_GLOBAL2: return mix(mix(h, p->u.ts_global2.value), p->u.ts_global2.wide);
    case SPOOR_ITM_EXTENSION: return mix(mix(h, p->u.ext.page), p->u.ext.hw);
    case SPOOR_ITM_SW: return mix(mix(mix(h, p->u.sw.port), p->u.sw.size), p->u.sw.value);
    case SPOOR_ITM_EVENT_COUNTER: return mix(h, p->u.event_counter.bits);
    case SPOOR_ITM_EXCEPTION: return mix(mix(h, p->u.exception.number), p->u.exception.action);
    case SPOOR_ITM_PC_SAMPLE: return mix(mix(h, p->u.pc_sample.pc), p->u.pc_sample.sleep);
    case SPOOR_ITM_DWT_PC: return mix(mix(h, p->u.dwt_pc.comparator), p->u.dwt_pc.pc);
    case SPOOR_ITM_DWT_ADDR: return mix(mix(h, p->u.dwt_addr.comparator), p->u.dwt_addr.offset);
    case SPOOR_ITM_DWT_MATCH: return mix(h, p->u.dwt_match.comparator);
    case SPOOR_ITM_DWT_DATA:
        h = mix(mix(h, p->u.dwt_data.comparator), p->u.dwt_data.write);
        return mix(mix(h, p->u.dwt_data.size), p->u.dwt_data.value);
    case SPOOR_ITM_ERROR:
        h = mix(mix(h, p->u.error.bytes_lost), p->u.error.why);
        return mix(h, p->u.error.detected_at);
    default: return h;
    }
}

/* Decodes the input in chunks with the selection r->types; no cmocka calls (not thread-safe). */
static void decode(struct result *r)
{
    spoor_itm_decoder *d = malloc(sizeof *d);
    if (!d)
        abort();
    spoor_itm_init(d, false);
    spoor_itm_select(d, r->types);
    r->digest = 0xCBF29CE484222325ull;
    r->packets = 0;
    const spoor_itm_packet *p;
    for (size_t off = 0; off < input_len;) {
        size_t n = input_len - off < CHUNK ? input_len - off : CHUNK;
        off += spoor_itm_feed(d, input + off, n);
        while ((p = spoor_itm_next_ref(d)) != NULL) {
            r->digest = fold_packet(r->digest, p);
            r->packets++;
        }
    }
    spoor_itm_finish(d);
    while ((p = spoor_itm_next_ref(d)) != NULL) {
        r->digest = fold_packet(r->digest, p);
        r->packets++;
    }
    r->stats = *spoor_itm_stats_get(d);
    free(d);
}

static pthread_barrier_t start_together;

static void *decode_thread(void *arg)
{
    pthread_barrier_wait(&start_together);
    decode(arg);
    return NULL;
}

static void same_result(const struct result *a, const struct result *b)
{
    assert_int_equal(a->types, b->types);
    assert_int_equal(a->packets, b->packets);
    assert_int_equal(a->digest, b->digest);
    assert_memory_equal(&a->stats, &b->stats, sizeof a->stats);
}

/* The loops of the decoder: every type selected, the counters only, the software packets. */
static const uint32_t selections[3] = {SPOOR_ITM_ALL_TYPES, 0, 1u << SPOOR_ITM_SW};

static void test_decoders_started_at_once(void **state)
{
    (void)state;
    struct result concurrent[THREADS], alone[3];
    pthread_t t[THREADS];
    assert_int_equal(pthread_barrier_init(&start_together, NULL, THREADS), 0);
    for (int i = 0; i < THREADS; i++) {
        memset(&concurrent[i], 0, sizeof concurrent[i]);
        concurrent[i].types = selections[i % 3];
        assert_int_equal(pthread_create(&t[i], NULL, decode_thread, &concurrent[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    pthread_barrier_destroy(&start_together);

    for (int s = 0; s < 3; s++) {
        memset(&alone[s], 0, sizeof alone[s]);
        alone[s].types = selections[s];
        decode(&alone[s]);
    }
    for (int i = 0; i < THREADS; i++)
        same_result(&concurrent[i], &alone[i % 3]);
    /* the input is one that exercises the decoder: every kind of packet, and errors */
    assert_true(alone[0].packets > 50000);
    for (int type = 0; type < SPOOR_ITM_TYPE_COUNT; type++)
        assert_true(alone[0].stats.packets[type] > 0);
    assert_int_equal(alone[1].packets, 0); /* nothing selected */
    assert_memory_equal(&alone[0].stats, &alone[1].stats, sizeof alone[0].stats);
}

/* The input: the real capture, then pseudo-random packets with a sync now and then. */
static int setup(void **state)
{
    (void)state;
    FILE *f = fopen(CAPTURE, "rb");
    if (!f)
        return -1;
    input_len = fread(input, 1, sizeof input / 2, f);
    fclose(f);
    uint32_t x = 0x9E3779B9u;
    while (input_len < sizeof input - 16) {
        x ^= x << 13; /* xorshift32 */
        x ^= x >> 17;
        x ^= x << 5;
        uint8_t *o = input + input_len;
        unsigned n = 0, sel = x & 0x0F; /* n: payload bytes with a continuation bit */
        uint8_t r = (uint8_t)(x >> 24), ss = (uint8_t)(1 + (x >> 4) % 3), cmp = (x >> 6) & 0x30;
        switch (sel) {
        case 0: o[0] = (uint8_t)(0xC0 | cmp), n = 1 + (x >> 8) % 4; break;      /* local TS 1 */
        case 1: o[0] = (uint8_t)(0x10 + cmp); break;                            /* local TS 2 */
        case 2: o[0] = 0x94, n = 1 + (x >> 8) % 4; break;                       /* GTS1 */
        case 3: o[0] = 0xB4, n = (x >> 8) % 2 ? 4 : 6; break;                   /* GTS2 */
        case 4: o[0] = (x >> 8) % 2 ? 0x08 : 0x18; break;                       /* port page 0, 1 */
        case 5: o[0] = 0x0E, o[1] = r, o[2] = (uint8_t)(x >> 12) & 0x31; break; /* FN may be 0 */
        case 6: o[0] = 0x17, memcpy(o + 1, &x, 4); break;
        case 7: o[0] = 0x15, o[1] = r < 8 ? r : 0; break; /* asleep, rarely a bad payload */
        case 8: o[0] = (uint8_t)(0x47 | cmp), memcpy(o + 1, &x, 4); break;
        case 9: o[0] = (uint8_t)(0x4E | cmp), o[1] = r, o[2] = 0x12; break;
        case 10: o[0] = (uint8_t)(0x84 | cmp | (x >> 20 & 8) | ss), memcpy(o + 1, &x, 4); break;
        case 11: o[0] = 0x05, o[1] = r; break;
        case 12: o[0] = r < 4 ? 0xA0 : 0x70; break;                /* reserved, overflow */
        case 14: o[0] = (uint8_t)(0x45 | cmp), o[1] = 0x01; break; /* ARMv8-M data trace match */
        case 13:                                                   /* a synchronization packet */
            memset(o, 0, 6);
            o[6] = 0x80;
            break;
        default: o[0] = (uint8_t)((x >> 8) & 0xF8) | ss, memcpy(o + 1, &x, 4); break; /* SW */
        }
        static const uint8_t size[16] = {1, 1, 1, 1, 1, 3, 5, 2, 5, 3, 0, 2, 1, 7, 2, 0};
        if (sel == 10 || sel == 15)
            input_len += 1 + ss + (ss == 3);
        else
            input_len += size[sel];
        for (unsigned k = 0; k < n; k++) /* continuation bytes, C = 0 in the last */
            input[input_len++] = (uint8_t)((x >> (3 * k)) & 0x7F) | (k + 1 < n ? 0x80 : 0);
    }
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decoders_started_at_once),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
