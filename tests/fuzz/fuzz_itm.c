/* libFuzzer harness: arbitrary bytes through the ITM decoder (split at fuzzer-chosen points,
 * plain and waiting for a sync) and through the TPIU deframer into per-ID ITM decoders.
 * Checks that nothing crashes and that what comes out is consistent: packets in stream
 * order, inside the input, and errors accounting for lost bytes; and that a consumer of the
 * counters only (selection 0: the decoder's stats loop) counts and times exactly as one that
 * takes every packet. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spoor/itm_decoder.h"
#include "spoor/tpiu_deframer.h"

static void check(int ok)
{
    if (!ok)
        abort();
}

/* Returns the run's stats. */
static spoor_itm_stats run_itm(const uint8_t *data, size_t len, bool require_sync, size_t split)
{
    static spoor_itm_decoder d;
    spoor_itm_init(&d, require_sync);
    spoor_itm_packet p;
    uint64_t last_offset = 0, lost = 0, released = 0;
    size_t done = 0;
    while (done < len) {
        size_t chunk = split ? split : len - done;
        if (chunk > len - done)
            chunk = len - done;
        done += spoor_itm_feed(&d, data + done, chunk);
        if (split == 5) { /* the counting-only consumer */
            uint64_t t0, t1;
            size_t k = spoor_itm_skip(&d, &t0, &t1);
            check(k == 0 || t0 <= t1);
            continue;
        }
        while (spoor_itm_next(&d, &p)) {
            check(p.offset >= last_offset || p.type == SPOOR_ITM_ERROR);
            check(p.offset <= len);
            if (p.type == SPOOR_ITM_ERROR) {
                check(p.offset + p.u.error.bytes_lost <= len);
                lost += p.u.error.bytes_lost;
            } else {
                last_offset = p.offset;
            }
            released++;
        }
    }
    spoor_itm_finish(&d);
    while (spoor_itm_next(&d, &p)) {
        if (p.type == SPOOR_ITM_ERROR) {
            check(p.offset + p.u.error.bytes_lost <= len);
            lost += p.u.error.bytes_lost;
        }
        released++;
    }
    const spoor_itm_stats *s = spoor_itm_stats_get(&d);
    check(s->bytes == len);
    check(split == 5 || s->bytes_lost == lost);
    check(lost <= len);
    (void)released;
    return *s;
}

/* The stats of a whole run through a decoder that returns no packet type (a consumer of the
 * counters only), fed in chunks of `chunk` bytes (0: at once). */
static spoor_itm_stats run_counters(const uint8_t *data, size_t len, size_t chunk)
{
    static spoor_itm_decoder d;
    spoor_itm_init(&d, false);
    spoor_itm_select(&d, 0);
    spoor_itm_packet p;
    size_t done = 0;
    while (done < len) {
        size_t n = chunk && chunk < len - done ? chunk : len - done;
        done += spoor_itm_feed(&d, data + done, n);
        while (spoor_itm_next(&d, &p))
            ;
    }
    spoor_itm_finish(&d);
    while (spoor_itm_next(&d, &p))
        ;
    return *spoor_itm_stats_get(&d);
}

/* A consumer of the counters only (its own fast loops) counts and times exactly as one that
 * takes every packet (all: the stats of the whole input fed at once to such a one). */
static void check_counters(const spoor_itm_stats *all_types, const uint8_t *data, size_t len,
                           size_t chunk)
{
    const spoor_itm_stats all = *all_types;
    spoor_itm_stats none = run_counters(data, len, chunk);
    check(all.bytes == none.bytes && all.bytes_lost == none.bytes_lost);
    for (int k = 0; k < SPOOR_ITM_TYPE_COUNT; k++)
        check(all.packets[k] == none.packets[k]);
    check(all.sw_page_unknown == none.sw_page_unknown && all.released_any == none.released_any);
    check(all.time_first == none.time_first && all.time_last == none.time_last);
}

struct ids {
    spoor_itm_decoder dec[4];
    uint8_t id[4];
    unsigned n;
};

static void sink(void *ctx, uint8_t id, const uint8_t *data, size_t len)
{
    struct ids *s = ctx;
    check(id > 0 && id < 0x70);
    unsigned i = 0;
    while (i < s->n && s->id[i] != id)
        i++;
    if (i == s->n) {
        if (s->n == 4)
            return;
        s->id[s->n++] = id;
        spoor_itm_init(&s->dec[i], false);
    }
    spoor_itm_packet p;
    while (len) {
        size_t k = spoor_itm_feed(&s->dec[i], data, len);
        data += k;
        len -= k;
        while (spoor_itm_next(&s->dec[i], &p))
            ;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    size_t split = len ? (size_t)data[0] % 17 : 0;
    spoor_itm_stats all = run_itm(data, len, false, 0); /* every packet type, at once */
    run_itm(data, len, false, split);
    run_itm(data, len, true, split ? split : 1);
    check_counters(&all, data, len, 0);
    check_counters(&all, data, len, split * 97 + 1);

    static spoor_tpiu_deframer t;
    static struct ids ids;
    memset(&ids, 0, sizeof ids);
    spoor_tpiu_init(&t, -1, sink, &ids);
    size_t done = 0;
    while (done < len) {
        size_t chunk = split ? split * 37 : len;
        if (chunk > len - done)
            chunk = len - done;
        spoor_tpiu_feed(&t, data + done, chunk);
        done += chunk;
    }
    spoor_tpiu_finish(&t);
    check(t.stats.bytes == len);
    check(t.how != SPOOR_TPIU_ALIGN_UNKNOWN);
    return 0;
}
