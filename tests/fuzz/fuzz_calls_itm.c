/* libFuzzer harness: the live path of spoor calls --itm. Arbitrary bytes go through the ITM
 * decoder into the record pairer (function words on one port, call sites on the next) and the
 * one-record-at-a-time context/depth assignment. The first input byte picks the port. Checks
 * that nothing crashes, that the pairer's bookkeeping stays in bounds, that every record it
 * completes is a valid one (an even call site, the kind from the function word) and that
 * contexts and depths stay consistent whatever the stream. */
#include <stdint.h>
#include <stdlib.h>

#include "spoor/calls_decode.h"
#include "spoor/itm_decoder.h"

#define check(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            abort();                                                                               \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static spoor_itm_decoder d;
    static spoor_calls_itm_pairer p;
    static spoor_calls_stream s;
    spoor_itm_init(&d, false);
    spoor_calls_itm_pairer_init(&p, data[0] % 255u);
    spoor_calls_stream_init(&s);
    data++, size--;
    size_t done = 0;
    uint64_t records = 0;
    while (done < size || done == 0) {
        size_t chunk = size - done < 7 ? size - done : 7; /* odd chunks: packets cut anywhere */
        done += spoor_itm_feed(&d, data + done, chunk);
        if (done >= size)
            spoor_itm_finish(&d);
        spoor_itm_packet pkt;
        while (spoor_itm_next(&d, &pkt)) {
            spoor_call_record r = {0};
            if (!spoor_calls_itm_pair(&p, &pkt, &r))
                continue;
            records++;
            check(p.npending <= SPOOR_CALLS_ITM_PENDING);
            check(r.kind == SPOOR_CALL_ENTER || r.kind == SPOOR_CALL_EXIT);
            check(!r.after_gap || p.losses > 0);
            const spoor_call_context *ctx = NULL;
            spoor_calls_stream_add(&s, &r, &ctx);
            check(ctx != NULL);
            check(r.depth >= 0);
            check(s.nopen <= SPOOR_CALLS_STREAM_NEST);
            check(r.context < s.contexts);
        }
        if (size == 0)
            break;
    }
    check(p.records == records);
    return 0;
}
