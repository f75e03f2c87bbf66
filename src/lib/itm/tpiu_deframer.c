/* CoreSight TPIU formatter deframer (see include/spoor/tpiu_deframer.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spoor/itm_decoder.h"
#include "spoor/tpiu_deframer.h"

#define FULL_SYNC 0xFFFFFF7Fu /* bytes FF FF FF 7F, the 7F last */

void spoor_tpiu_init(spoor_tpiu_deframer *t, int alignment, spoor_tpiu_sink sink, void *ctx)
{
    memset(t, 0, sizeof *t);
    t->sink = sink;
    t->ctx = ctx;
    t->cur_id = -1;
    if (alignment >= 0) {
        t->how = SPOOR_TPIU_ALIGN_GIVEN;
        t->alignment = (unsigned)alignment & 15;
        snprintf(t->why, sizeof t->why, "frames start at offset %u (given)", t->alignment);
    }
}

static void emit(spoor_tpiu_deframer *t, int id, const uint8_t *data, size_t n)
{
    if (!n)
        return;
    if (id < 0)
        t->stats.no_id_bytes += n;
    else if (id > 0 && id < 0x70) /* 0 is the null (padding) source, 0x70..0x7F reserved */
        t->sink(t->ctx, (uint8_t)id, data, n);
}

/* One formatter frame: for k = 0..7 the even byte 2k is an ID (bit 0 = 1, ID in bits [7:1])
 * or data whose bit 0 is aux bit k (byte 15); odd bytes 2k+1 (k < 7) are always data. After an
 * ID byte, aux bit k = 1 means byte 2k+1 still belongs to the previous ID. */
void spoor_tpiu_decode_frame(spoor_tpiu_deframer *t, const uint8_t f[16])
{
    uint8_t out[15];
    size_t n = 0;
    int id = t->cur_id;
    uint8_t aux = f[15];
    for (unsigned k = 0; k < 8; k++) {
        uint8_t b = f[2 * k];
        bool a = (aux >> k) & 1;
        if (b & 1) {
            int nid = b >> 1;
            t->stats.id_changes++;
            if (nid >= 0x70)
                t->stats.reserved_ids++;
            if (k < 7 && a) {
                out[n++] = f[2 * k + 1];
                emit(t, id, out, n);
                n = 0;
                id = nid;
            } else {
                emit(t, id, out, n);
                n = 0;
                id = nid;
                if (k < 7)
                    out[n++] = f[2 * k + 1];
            }
        } else {
            out[n++] = (uint8_t)((b & 0xFE) | a);
            if (k < 7)
                out[n++] = f[2 * k + 1];
        }
    }
    emit(t, id, out, n);
    t->cur_id = id;
    t->stats.frames++;
}

/* Frames are being cut at a known alignment. */
static void aligned_byte(spoor_tpiu_deframer *t, uint8_t b)
{
    t->last4 = t->last4 << 8 | b;
    if (t->fill == 0 && (t->pos & 15) != t->alignment && t->stats.frames == 0 &&
        t->stats.full_syncs == 0) {
        /* before the first frame boundary */
        t->pos++;
        t->stats.skipped++;
        if (t->last4 == FULL_SYNC) {
            t->stats.full_syncs++;
            t->alignment = t->pos & 15;
        }
        return;
    }
    t->pos++;
    t->frame[t->fill++] = b;
    if (t->last4 == FULL_SYNC) {
        t->stats.full_syncs++;
        t->stats.skipped += t->fill >= 4 ? t->fill - 4 : 0;
        t->fill = 0;
        t->alignment = t->pos & 15;
        return;
    }
    if (t->fill == 2 && t->frame[0] == 0xFF && t->frame[1] == 0x7F) {
        t->stats.half_syncs++;
        t->fill = 0;
        t->alignment = t->pos & 15;
        return;
    }
    if (t->fill == 16) {
        spoor_tpiu_decode_frame(t, t->frame);
        t->fill = 0;
    }
}

/* ---- alignment detection ------------------------------------------------------------------- */

#define SCORE_IDS 8

struct score {
    uint8_t ids[SCORE_IDS];
    unsigned nids;
    uint64_t extra_ids; /* bytes of IDs beyond SCORE_IDS: counted as lost */
    spoor_itm_decoder *dec;
};

static void score_sink(void *ctx, uint8_t id, const uint8_t *data, size_t len)
{
    struct score *s = ctx;
    unsigned i = 0;
    while (i < s->nids && s->ids[i] != id)
        i++;
    if (i == s->nids) {
        if (s->nids == SCORE_IDS) {
            s->extra_ids += len;
            return;
        }
        s->ids[s->nids++] = id;
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

uint64_t spoor_tpiu_alignment_cost(const uint8_t *buf, size_t len, unsigned a)
{
    struct score s = {0};
    s.dec = calloc(SCORE_IDS, sizeof *s.dec);
    if (!s.dec)
        return UINT64_MAX;
    spoor_tpiu_deframer *t = malloc(sizeof *t);
    if (!t) {
        free(s.dec);
        return UINT64_MAX;
    }
    spoor_tpiu_init(t, (int)(a & 15), score_sink, &s);
    for (size_t i = 0; i < len; i++)
        aligned_byte(t, buf[i]);
    uint64_t cost = s.extra_ids + 16 * t->stats.reserved_ids;
    spoor_itm_packet p;
    for (unsigned i = 0; i < s.nids; i++) {
        /* Bytes lost, including a resynchronisation still under way, but not the packet
         * the end of the probe window cut. */
        spoor_itm_finish(&s.dec[i]);
        while (spoor_itm_next(&s.dec[i], &p))
            if (p.type == SPOOR_ITM_ERROR && p.u.error.why != SPOOR_ITM_ERR_TRUNCATED)
                cost += p.u.error.bytes_lost;
    }
    free(t);
    free(s.dec);
    return cost;
}

static void replay_probe(spoor_tpiu_deframer *t)
{
    size_t n = t->probe_len;
    t->probe_len = 0;
    t->pos = t->stats.bytes - n;
    for (size_t i = 0; i < n; i++)
        aligned_byte(t, t->probe[i]);
}

static void decide_alignment(spoor_tpiu_deframer *t)
{
    uint64_t best = UINT64_MAX, second = UINT64_MAX;
    unsigned best_a = 0, second_a = 0;
    for (unsigned a = 0; a < 16; a++) {
        uint64_t c = spoor_tpiu_alignment_cost(t->probe, t->probe_len, a);
        if (c < best) {
            second = best;
            second_a = best_a;
            best = c;
            best_a = a;
        } else if (c < second) {
            second = c;
            second_a = a;
        }
    }
    t->how = SPOOR_TPIU_ALIGN_DETECTED;
    t->alignment = best_a;
    snprintf(t->why, sizeof t->why,
             "no full sync in the first %zu bytes; frames start at offset %u, where the "
             "deframed ITM loses %llu bytes (next best: offset %u, %llu bytes)",
             t->probe_len, best_a, (unsigned long long)best, second_a, (unsigned long long)second);
    replay_probe(t);
}

void spoor_tpiu_feed(spoor_tpiu_deframer *t, const uint8_t *data, size_t len)
{
    size_t i = 0;
    while (i < len && t->how == SPOOR_TPIU_ALIGN_UNKNOWN) {
        uint8_t b = data[i++];
        t->probe[t->probe_len++] = b;
        t->stats.bytes++;
        t->last4 = t->last4 << 8 | b;
        if (t->last4 == FULL_SYNC) {
            /* Frames before the sync end where it starts. */
            uint64_t sync_start = t->stats.bytes - 4;
            t->how = SPOOR_TPIU_ALIGN_SYNC;
            t->alignment = sync_start & 15;
            snprintf(t->why, sizeof t->why, "full sync at offset %llu",
                     (unsigned long long)sync_start);
            t->last4 = 0;
            replay_probe(t);
        } else if (t->probe_len == SPOOR_TPIU_PROBE) {
            t->last4 = 0;
            decide_alignment(t);
        }
    }
    for (; i < len; i++) {
        t->stats.bytes++;
        aligned_byte(t, data[i]);
    }
}

void spoor_tpiu_finish(spoor_tpiu_deframer *t)
{
    if (t->how == SPOOR_TPIU_ALIGN_UNKNOWN) {
        t->last4 = 0;
        decide_alignment(t);
    }
    t->stats.skipped += t->fill;
    t->fill = 0;
}

/* A byte that starts a frame: a trace source ID change (bit 0 set) naming 0..111. */
static bool starts_frame(uint8_t b)
{
    return (b & 1) && (b >> 1) < 0x70;
}

static bool full_sync_at(const uint8_t *buf, size_t len, size_t i)
{
    return i + 4 <= len && buf[i] == 0xFF && buf[i + 1] == 0xFF && buf[i + 2] == 0xFF &&
           buf[i + 3] == 0x7F;
}

bool spoor_tpiu_looks_framed(const uint8_t *buf, size_t len)
{
    size_t framed = 0, not_framed = 0;
    for (size_t i = 0; i + 4 <= len; i++) {
        if (!full_sync_at(buf, len, i))
            continue;
        size_t f = i + 4;
        while (full_sync_at(buf, len, f)) /* a run of syncs */
            f += 4;
        i = f - 1;
        if (f + 16 > len)
            break;
        if (!starts_frame(buf[f])) {
            not_framed++;
            continue;
        }
        /* the frames after it, while whole and not another sync */
        bool ok = true;
        for (size_t g = f + 16; g + 16 <= len && !full_sync_at(buf, len, g) && ok; g += 16)
            ok = (buf[g] & 1) == 0 || starts_frame(buf[g]);
        if (ok)
            framed++;
        else
            not_framed++;
    }
    return framed > 0 && framed > not_framed;
}
