/*
 * Firmware for bench/calls.sh: one instrumented function called PAIRS times, recorded either by
 * spoor's recorder (target/src/calls_recorder.c) or, with -DBASELINE, by a recorder written like
 * the seed document's: a 9-byte element { bool isEnter; void *this_fn; void *call_site; } put
 * byte by byte into a generic ring buffer inside a PRIMASK critical section, refusing new
 * elements when full (the ring here is large enough never to fill). noipa: the seed has the ring
 * buffer in a module of its own, which the compiler cannot look into.
 */
#include <stdbool.h>
#include <stdint.h>

#include "semihost.h"

#define PAIRS 200u
#define NOTRACE __attribute__((no_instrument_function))

volatile uint32_t bench_sink;

#ifdef BASELINE
typedef struct __attribute__((packed)) {
    bool isEnter;
    void *this_fn;
    void *call_site;
} CYG_RNG_ElementType; /* 9 bytes */

#define RNG_ELEM_SIZE sizeof(CYG_RNG_ElementType)
#define RNG_NOF_ELEMS (2u * PAIRS + 8u)
#define RNG_BUF_SIZE (RNG_ELEM_SIZE * RNG_NOF_ELEMS)
static uint8_t rngBuf[RNG_BUF_SIZE];
static uint16_t rngInIdx, rngInSize;
static volatile bool CYG_Enabled;

NOTRACE __attribute__((noinline, noipa)) static uint8_t RNG_Put(const void *elem)
{
    uint8_t res = 0;
    uint32_t primask;
    __asm volatile("mrs %0, primask\n cpsid i" : "=r"(primask)::"memory");
    if (rngInSize == RNG_NOF_ELEMS) {
        res = 1; /* overflow: the seed keeps the oldest records */
    } else {
        const uint8_t *p = elem;
        for (uint32_t i = 0; i < RNG_ELEM_SIZE; i++) {
            rngBuf[rngInIdx] = p[i];
            rngInIdx++;
            if (rngInIdx == RNG_BUF_SIZE)
                rngInIdx = 0;
        }
        rngInSize++;
    }
    __asm volatile("msr primask, %0" ::"r"(primask) : "memory");
    return res;
}

NOTRACE __attribute__((noinline, noipa)) static void CYG_Store(bool isEnter, void *this_fn,
                                                               void *call_site)
{
    CYG_RNG_ElementType elem;
    elem.isEnter = isEnter;
    elem.this_fn = this_fn;
    elem.call_site = call_site;
    (void)RNG_Put(&elem);
}

NOTRACE void __cyg_profile_func_enter(void *this_fn, void *call_site)
{
    if (CYG_Enabled)
        CYG_Store(true, call_site, this_fn);
}

NOTRACE void __cyg_profile_func_exit(void *this_fn, void *call_site)
{
    if (CYG_Enabled)
        CYG_Store(false, call_site, this_fn);
}

NOTRACE static void recorder_start(void)
{
    CYG_Enabled = true;
}
#else
#include "spoor/calls.h"
static uint32_t ring[(2u * PAIRS + 8u) * 2u];
NOTRACE static void recorder_start(void)
{
    spoor_calls_init(ring, sizeof ring);
}
#endif

__attribute__((noinline)) void bench_leaf(uint32_t i)
{
    bench_sink = i;
}

NOTRACE int main(void)
{
    recorder_start();
    for (uint32_t i = 0; i < PAIRS; i++)
        bench_leaf(i);
    semihost_write_string("done\n");
    return 0;
}
