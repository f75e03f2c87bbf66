/* A sans-I/O deframer for the CoreSight TPIU formatter (CoreSight Architecture Specification,
 * "Trace Formatter"; CoreSight TPIU TRM, "Formatter and Flush Control"): 16-byte frames whose
 * even bytes are either data or a new 7-bit trace source ID, whose odd bytes are data, and
 * whose last byte holds the auxiliary bits (the low bit of each even data byte, or, after an
 * ID byte, whether the change applies from the next byte or the one after). Full syncs
 * (FF FF FF 7F) mark frame boundaries; half syncs (FF 7F) between frames are padding.
 *
 * A capture can start in the middle of a frame with no full sync anywhere. Until a full sync
 * is seen the deframer buffers up to SPOOR_TPIU_PROBE bytes and picks the frame alignment
 * (0..15) under which the data decodes best as ITM: fewest bytes lost by the ITM decoder of
 * each source, then fewest reserved IDs. It reports the choice and why. */
#ifndef SPOOR_TPIU_DEFRAMER_H
#define SPOOR_TPIU_DEFRAMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SPOOR_TPIU_PROBE 4096

/* Called with a run of bytes of one trace source ID (1..0x6F; ID 0 = padding is dropped). */
typedef void (*spoor_tpiu_sink)(void *ctx, uint8_t id, const uint8_t *data, size_t len);

typedef enum spoor_tpiu_align_how {
    SPOOR_TPIU_ALIGN_UNKNOWN,  /* not decided yet */
    SPOOR_TPIU_ALIGN_SYNC,     /* from a full sync */
    SPOOR_TPIU_ALIGN_DETECTED, /* chosen from the data (no full sync in the probe window) */
    SPOOR_TPIU_ALIGN_GIVEN,    /* set by the caller */
} spoor_tpiu_align_how;

typedef struct spoor_tpiu_stats {
    uint64_t bytes;  /* bytes fed */
    uint64_t frames; /* complete frames decoded */
    uint64_t full_syncs;
    uint64_t half_syncs;
    uint64_t id_changes;
    uint64_t skipped;      /* bytes before the first frame boundary or in a frame cut by a sync */
    uint64_t no_id_bytes;  /* data before any ID was announced */
    uint64_t reserved_ids; /* ID bytes naming a reserved ID (0x70..0x7F) */
} spoor_tpiu_stats;

typedef struct spoor_tpiu_deframer {
    spoor_tpiu_sink sink;
    void *ctx;
    int cur_id; /* -1 until an ID byte is seen */
    uint8_t frame[16];
    unsigned fill;  /* bytes in frame[] */
    uint32_t last4; /* last four bytes, newest in the low byte (full sync search) */
    spoor_tpiu_align_how how;
    unsigned alignment; /* stream offset of the first frame, modulo 16 */
    uint64_t pos;       /* stream position of the next byte */
    uint8_t probe[SPOOR_TPIU_PROBE];
    size_t probe_len;
    spoor_tpiu_stats stats;
    char why[160]; /* how the alignment was chosen */
} spoor_tpiu_deframer;

/* alignment < 0: find it (full sync, else detection); 0..15: frames start at that offset. */
void spoor_tpiu_init(spoor_tpiu_deframer *t, int alignment, spoor_tpiu_sink sink, void *ctx);
void spoor_tpiu_feed(spoor_tpiu_deframer *t, const uint8_t *data, size_t len);
/* End of stream: decides the alignment if still open and drains the probe buffer. */
void spoor_tpiu_finish(spoor_tpiu_deframer *t);

/* Decodes one 16-byte frame (exposed for tests): calls sink for each run of one ID. */
void spoor_tpiu_decode_frame(spoor_tpiu_deframer *t, const uint8_t frame[16]);

/* Scores alignment a (0..15) of buf: ITM bytes lost plus reserved-ID and no-ID penalties,
 * lower is better. Exposed for tests and for the CLI's explanation. */
uint64_t spoor_tpiu_alignment_cost(const uint8_t *buf, size_t len, unsigned a);

/* Whether bytes read as a plain ITM stream look TPIU-formatted instead: a full sync
 * (FF FF FF 7F) followed by a 16-byte frame whose first byte is a trace source ID change (bit 0
 * set, ID 0..111), and, where a sync is followed by more than one frame, further frames 16 bytes
 * on that start with an ID change or a sync. For a hint ("try --tpiu"), not a proof. */
bool spoor_tpiu_looks_framed(const uint8_t *buf, size_t len);

#endif
