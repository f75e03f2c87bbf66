/* libFuzzer harness: the call recorder's state object and ring as a device (or a corrupt RAM
 * image) leaves them. Input: SPOOR_CALLS_STATE_SIZE bytes of state, then ring bytes. Any input
 * must decode or fail with an error, never crash or leak; decoded records must be consistent
 * (contexts in range, depths not negative, at most capacity records). The capacity is also
 * forced to fit the bytes given (and next to name a slot in it, in either layout), so that
 * mutations reach the ring decoder. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spoor/calls_decode.h"

#define check(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            abort();                                                                               \
    } while (0)

static void run(const uint8_t *state, const uint8_t *ring, size_t ring_len)
{
    spoor_calls_info st;
    if (!spoor_calls_parse_state(state, SPOOR_CALLS_STATE_SIZE, &st))
        return;
    spoor_call_trace t;
    if (!spoor_calls_decode(&st, ring, ring_len, &t))
        return;
    check(t.count <= st.capacity);
    check(t.context_count >= 1);
    for (size_t i = 0; i < t.count; i++) {
        check(t.records[i].context < t.context_count);
        check(t.records[i].depth >= 0);
    }
    spoor_call_trace_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < SPOOR_CALLS_STATE_SIZE)
        return 0;
    const uint8_t *ring = data + SPOOR_CALLS_STATE_SIZE;
    size_t ring_len = size - SPOOR_CALLS_STATE_SIZE;
    run(data, ring, ring_len);
    uint8_t state[SPOOR_CALLS_STATE_SIZE];
    memcpy(state, data, sizeof state);
    unsigned rs = state[SPOOR_CALLS_ST_FORMAT];
    if (rs >= 8 && ring_len / rs >= 2) {
        uint32_t cap = (uint32_t)(ring_len / rs);
        memcpy(state + SPOOR_CALLS_ST_CAPACITY, &cap, 4); /* little-endian host */
        uint32_t next, ring_at;
        memcpy(&next, state + SPOOR_CALLS_ST_NEXT, 4);
        memcpy(&ring_at, state + SPOOR_CALLS_ST_RING, 4);
        if (state[SPOOR_CALLS_ST_FORMAT + 2] == SPOOR_CALLS_LAYOUT_ADDRESS) /* the slot's address */
            next = ring_at + (next - ring_at) / rs % cap * rs;
        else
            next %= cap;
        memcpy(state + SPOOR_CALLS_ST_NEXT, &next, 4);
        run(state, ring, ring_len);
    }
    return 0;
}
