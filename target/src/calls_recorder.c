/*
 * The function-call recorder: __cyg_profile_func_enter/exit append records to the ring set up
 * by spoor_calls_init(); layout in spoor/dump_format.h, API in spoor/calls.h.
 *
 * The hooks are leaf functions: one load of the flags word decides whether to record, one
 * atomic claim gives the slot, two (or more) stores fill it. Nothing here is instrumented.
 * Built for the host too (SPOOR_TARGET_HOST), with a plain claim, for the unit tests.
 */
#include <string.h>

#include "spoor/calls.h"

#ifndef SPOOR_CALLS_TIME
#define SPOOR_CALLS_TIME 0
#endif
#ifndef SPOOR_CALLS_CONTEXT
#define SPOOR_CALLS_CONTEXT 0
#endif

#if defined(SPOOR_TARGET_HOST) || !defined(__arm__)
#define SPOOR_CALLS_ON_DEVICE 0
/* Host build: the ring lives at a host address the u32 state field cannot hold. */
static uint32_t *host_ring;
#define RING_WORDS(s) (host_ring)
SPOOR_NO_INSTRUMENT static inline uint32_t spoor_calls_claim(spoor_calls_state_t *s)
{
    uint32_t i = s->next, n = i + 1u;
    if (n == s->capacity)
        n = 0u;
    s->next = n;
    return i;
}
static uint32_t host_clock;
SPOOR_NO_INSTRUMENT static inline uint32_t spoor_calls_now(void)
{
    return host_clock++;
}
SPOOR_NO_INSTRUMENT static inline uint32_t spoor_calls_ipsr(void)
{
    return 0u;
}
#define SPOOR_CALLS_TIME_IS_SYSTICK 0
#else
#define SPOOR_CALLS_ON_DEVICE 1
#include "cortexm/calls_cortexm.h"
#include "spoor/no_instrument.h"
#define RING_WORDS(s) ((uint32_t *)(uintptr_t)(s)->ring)
#endif

#define EXTRA_WORDS ((SPOOR_CALLS_TIME ? 1u : 0u) + (SPOOR_CALLS_CONTEXT ? 1u : 0u))
#define RECORD_WORDS (2u + EXTRA_WORDS)
#define RUNNING (SPOOR_CALLS_FLAG_READY | SPOOR_CALLS_FLAG_ENABLED)

__attribute__((used)) spoor_calls_state_t spoor_calls_state;
#if SPOOR_CALLS_ON_DEVICE && SPOOR_CALLS_LDREX
static uint32_t itm_port;
#endif

uint32_t spoor_calls_context(void) __attribute__((weak));

SPOOR_NO_INSTRUMENT uint32_t spoor_calls_record_size(void)
{
    return RECORD_WORDS * 4u;
}

SPOOR_NO_INSTRUMENT bool spoor_calls_init(void *buf, size_t size)
{
    spoor_calls_state_t *s = &spoor_calls_state;
    s->flags = 0u;
    uint32_t capacity = (uint32_t)(size / (RECORD_WORDS * 4u));
    if (!buf || ((uintptr_t)buf & 3u) != 0u || capacity < 2u)
        return false;
    memset(buf, 0, (size_t)capacity * RECORD_WORDS * 4u);
#if SPOOR_CALLS_ON_DEVICE
    s->ring = (uint32_t)(uintptr_t)buf;
#else
    host_ring = buf;
    s->ring = (uint32_t)(uintptr_t)buf;
#endif
#if SPOOR_CALLS_TIME && SPOOR_CALLS_ON_DEVICE
    spoor_calls_time_start();
#endif
    uint32_t optional =
        (SPOOR_CALLS_TIME ? SPOOR_CALLS_HAS_TIME : 0u) |
        (SPOOR_CALLS_TIME && SPOOR_CALLS_TIME_IS_SYSTICK ? SPOOR_CALLS_TIME_SYSTICK : 0u) |
        (SPOOR_CALLS_CONTEXT ? SPOOR_CALLS_HAS_CONTEXT : 0u);
    s->format = RECORD_WORDS * 4u | optional << 8;
    s->capacity = capacity;
    s->next = 0u;
    s->magic = SPOOR_CALLS_MAGIC;
    s->flags = RUNNING;
    return true;
}

SPOOR_NO_INSTRUMENT void spoor_calls_enable(bool on)
{
    spoor_calls_state_t *s = &spoor_calls_state;
    uint32_t f = s->flags;
    if (!(f & SPOOR_CALLS_FLAG_READY) || (f & SPOOR_CALLS_FLAG_FROZEN))
        return;
    s->flags = on ? f | SPOOR_CALLS_FLAG_ENABLED : f & ~SPOOR_CALLS_FLAG_ENABLED;
}

SPOOR_NO_INSTRUMENT void spoor_calls_freeze(void)
{
    spoor_calls_state_t *s = &spoor_calls_state;
    s->flags = (s->flags & ~SPOOR_CALLS_FLAG_ENABLED) | SPOOR_CALLS_FLAG_FROZEN;
}

SPOOR_NO_INSTRUMENT void spoor_calls_itm(int port)
{
    spoor_calls_state_t *s = &spoor_calls_state;
#if SPOOR_CALLS_ON_DEVICE && SPOOR_CALLS_LDREX
    if (port >= 0 && port < 31) {
        itm_port = (uint32_t)port;
        s->flags |= SPOOR_CALLS_FLAG_ITM;
        return;
    }
#else
    (void)port;
#endif
    s->flags &= ~SPOOR_CALLS_FLAG_ITM;
}

SPOOR_NO_INSTRUMENT static inline __attribute__((always_inline)) void
store(spoor_calls_state_t *s, uint32_t fn, uint32_t site)
{
    uint32_t *slot = RING_WORDS(s) + spoor_calls_claim(s) * RECORD_WORDS;
    slot[0] = fn;
    slot[1] = site;
#if SPOOR_CALLS_TIME
    slot[2] = spoor_calls_now();
#endif
#if SPOOR_CALLS_CONTEXT
    slot[2u + (SPOOR_CALLS_TIME ? 1u : 0u)] =
        spoor_calls_context ? spoor_calls_context() : spoor_calls_ipsr();
#endif
}

/* Off the fast path: not recording, or recording with ITM output. */
SPOOR_NO_INSTRUMENT static __attribute__((noinline)) void
record_slow(uint32_t fn, uint32_t site)
{
    spoor_calls_state_t *s = &spoor_calls_state;
    if (s->flags != (RUNNING | SPOOR_CALLS_FLAG_ITM))
        return;
#if SPOOR_CALLS_ON_DEVICE && SPOOR_CALLS_LDREX
    /* port P: the function word, port P+1: the call site (an interrupt between the two writes
     * sends a whole record of its own: the host pairs them innermost first) */
    spoor_calls_itm_put(itm_port, fn);
    spoor_calls_itm_put(itm_port + 1u, site);
#endif
    store(s, fn, site);
}

/* The common part of both hooks: fn carries the kind in bit 0. */
SPOOR_NO_INSTRUMENT static inline __attribute__((always_inline)) void record(uint32_t fn,
                                                                             uint32_t site)
{
    spoor_calls_state_t *s = &spoor_calls_state;
    if (s->flags != RUNNING)
        record_slow(fn, site);
    else
        store(s, fn, site);
}

SPOOR_NO_INSTRUMENT void __cyg_profile_func_enter(void *this_fn, void *call_site)
{
    record((uint32_t)(uintptr_t)this_fn | SPOOR_CALLS_KIND_ENTER, (uint32_t)(uintptr_t)call_site);
}

SPOOR_NO_INSTRUMENT void __cyg_profile_func_exit(void *this_fn, void *call_site)
{
    record((uint32_t)(uintptr_t)this_fn & ~SPOOR_CALLS_KIND_ENTER, (uint32_t)(uintptr_t)call_site);
}
