/* The time of spoor top's packets, sans I/O (the caller hands it the host's time): the
 * stream's local timestamps (target cycles: ITM_TCR.TSENA, times the prescaler). A live stream
 * that carries none (TSENA 0: 16 packets, or 100 ms after the first, without one; syncs do not
 * count) is timed by the host's monotonic clock at reception, in cycles of hz since its first
 * packet, as orbtop-rtos times every stream; from its first local timestamp on the stream's
 * clock counts, continuing where the host's stopped. A recorded stream without timestamps has
 * no time (0). */
#ifndef SPOOR_TOP_CLOCK_H
#define SPOOR_TOP_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "spoor/itm_decoder.h"

typedef struct spoor_top_clock {
    bool live;   /* a live stream: the host's clock may stand in */
    uint64_t hz; /* cycles per second */
    uint32_t prescaler;
    bool stream;         /* a local timestamp came: the stream's clock counts */
    bool used_host;      /* no timestamps: the host's clock counts */
    unsigned undated;    /* live packets without a timestamp before the host's clock counted */
    bool started;        /* a live packet came (first_ns holds) */
    uint64_t first_ns;   /* the host's clock at the first packet */
    bool undated_seen;   /* a packet other than a sync came (undated_ns holds) */
    uint64_t undated_ns; /* the host's clock at the first packet other than a sync */
    uint64_t offset;     /* added to the stream's time (where the host's clock was) */
    uint64_t last;       /* the latest time given: time never goes back */
} spoor_top_clock;

void spoor_top_clock_init(spoor_top_clock *k, bool live, uint64_t hz, uint32_t prescaler);
/* The time of packet p, received at the host's now_ns (never less than the time before). */
uint64_t spoor_top_clock_packet(spoor_top_clock *k, const spoor_itm_packet *p, uint64_t now_ns);
/* A quiet live stream timed by the host, at the host's now_ns: *now is the time (true), so
 * that intervals end while nothing comes; false when the stream's clock counts. */
bool spoor_top_clock_idle(spoor_top_clock *k, uint64_t now_ns, uint64_t *now);

#endif
