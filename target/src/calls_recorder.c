/*
 * The function-call recorder: __cyg_profile_func_enter/exit append records to the ring set up
 * by spoor_calls_init(); layout in spoor/dump_format.h, API in spoor/calls.h.
 *
 * The hooks are leaf functions: one atomic claim gives the slot, two (or more) stores fill it.
 * With the default 8-byte record on the device the hooks are written in assembly (below,
 * "The hand-written hooks"); with the options (timestamp, context id) and on the host they are
 * C: one load of the flags word decides whether to record. Nothing here is instrumented.
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

/* The hand-written hooks: the default record on ARMv7-M / ARMv8-M Mainline (LDREX/STREX) and
 * on ARMv6-M / ARMv8-M Baseline (a PRIMASK section). */
#if SPOOR_CALLS_ON_DEVICE && EXTRA_WORDS == 0
#define ASM_HOOKS 1
#else
#define ASM_HOOKS 0
#endif

__attribute__((used)) spoor_calls_state_t spoor_calls_state;

#if ASM_HOOKS
/* What the hand-written hooks read, set from the state object by gate(): the address of
 * spoor_calls_state.next, the index of the ring's last slot (capacity - 1) while the records go
 * to the ring alone, 0 otherwise (before init, paused, frozen, ITM output: the hooks then call
 * spoor_calls_record_slow), and the ring's address - 8. Not part of the layout the host reads. */
typedef struct spoor_calls_fast_t {
    volatile uint32_t *next;
    volatile uint32_t last;
    volatile uint32_t ring_before;
} spoor_calls_fast_t;
__attribute__((used)) spoor_calls_fast_t spoor_calls_fast = {&spoor_calls_state.next, 0u, 0u};

SPOOR_NO_INSTRUMENT static void gate(const spoor_calls_state_t *s)
{
    if (s->flags == RUNNING) {
        spoor_calls_fast.ring_before = s->ring - 8u;
        spoor_calls_fast.last = s->capacity - 1u;
    } else {
        spoor_calls_fast.last = 0u;
    }
}
#else
SPOOR_NO_INSTRUMENT static inline void gate(const spoor_calls_state_t *s)
{
    (void)s;
}
#endif
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
    gate(s);
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
    gate(s);
    return true;
}

SPOOR_NO_INSTRUMENT void spoor_calls_enable(bool on)
{
    spoor_calls_state_t *s = &spoor_calls_state;
    uint32_t f = s->flags;
    if (!(f & SPOOR_CALLS_FLAG_READY) || (f & SPOOR_CALLS_FLAG_FROZEN))
        return;
    s->flags = on ? f | SPOOR_CALLS_FLAG_ENABLED : f & ~SPOOR_CALLS_FLAG_ENABLED;
    gate(s);
}

SPOOR_NO_INSTRUMENT void spoor_calls_freeze(void)
{
    spoor_calls_state_t *s = &spoor_calls_state;
    s->flags = (s->flags & ~SPOOR_CALLS_FLAG_ENABLED) | SPOOR_CALLS_FLAG_FROZEN;
    gate(s);
}

SPOOR_NO_INSTRUMENT void spoor_calls_itm(int port)
{
    spoor_calls_state_t *s = &spoor_calls_state;
#if SPOOR_CALLS_ON_DEVICE && SPOOR_CALLS_LDREX
    if (port >= 0 && port < 31) {
        itm_port = (uint32_t)port;
        s->flags |= SPOOR_CALLS_FLAG_ITM;
        gate(s);
        return;
    }
#else
    (void)port;
#endif
    s->flags &= ~SPOOR_CALLS_FLAG_ITM;
    gate(s);
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

/* Off the fast path: not recording, or recording with ITM output (and, with the hand-written
 * hooks, the moments in which their gate and the flags disagree). */
#if ASM_HOOKS
SPOOR_NO_INSTRUMENT void spoor_calls_record_slow(uint32_t fn, uint32_t site);
SPOOR_NO_INSTRUMENT __attribute__((used, noinline)) void spoor_calls_record_slow(uint32_t fn,
                                                                                 uint32_t site)
#else
SPOOR_NO_INSTRUMENT static __attribute__((noinline)) void record_slow(uint32_t fn, uint32_t site)
#endif
{
    spoor_calls_state_t *s = &spoor_calls_state;
    uint32_t f = s->flags;
    if ((f & ~SPOOR_CALLS_FLAG_ITM) != RUNNING)
        return;
#if SPOOR_CALLS_ON_DEVICE && SPOOR_CALLS_LDREX
    /* port P: the function word, port P+1: the call site (an interrupt between the two writes
     * sends a whole record of its own: the host pairs them innermost first) */
    if (f & SPOOR_CALLS_FLAG_ITM) {
        spoor_calls_itm_put(itm_port, fn);
        spoor_calls_itm_put(itm_port + 1u, site);
    }
#endif
    store(s, fn, site);
}

#if !ASM_HOOKS
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
#endif

#if ASM_HOOKS
/* ---- The hand-written hooks ---------------------------------------------------------------
 * r0 = this_fn, r1 = call_site. this_fn is a Thumb code address, bit 0 set: the enter record's
 * function word as it is (kind 1); the exit hook clears the bit first. One compare of the index
 * read under the claim with spoor_calls_fast.last sends both the wrap (the index is the last
 * slot's) and "not recording into the ring alone" (last = 0) off the straight path, which
 * claims slot i (next = i + 1) and stores the record at ring - 8 + 8 * (i + 1).
 *
 * ARMv7-M / ARMv8-M Mainline, 12 instructions (exit 13): the claim is LDREX/STREX; when an
 * interrupt came between the two, the STREX fails and the claim is made again. The wrap claims
 * the last slot (ring + 8 * capacity - 8) and stores next = 0 with its own STREX. */
#if SPOOR_CALLS_LDREX
#define SPOOR_CALLS_HOOK_BODY                                                                      \
    "    ldr   r2, =spoor_calls_fast\n"                                                            \
    "    ldrd  r2, ip, [r2]      @ r2 = &spoor_calls_state.next, ip = last or 0\n"                 \
    "0:  ldrex r3, [r2]          @ i\n"                                                            \
    "    cmp   r3, ip\n"                                                                           \
    "    bhs   2f                @ i == last: wrap; last == 0: not to the ring alone\n"            \
    "    add   ip, r3, #1        @ n\n"                                                            \
    "    strex r3, ip, [r2]\n"                                                                     \
    "    cbnz  r3, 1f            @ an interrupt came first: claim again\n"                         \
    "    ldr   r3, [r2, #-8]     @ spoor_calls_state.ring\n"                                       \
    "    add   r3, r3, ip, lsl #3\n"                                                               \
    "    strd  r0, r1, [r3, #-8]\n"                                                                \
    "    bx    lr\n"                                                                               \
    "1:  ldr   ip, =spoor_calls_fast\n"                                                            \
    "    ldr   ip, [ip, #4]\n"                                                                     \
    "    b     0b\n"                                                                               \
    "2:  cmp   ip, #0\n"                                                                           \
    "    beq   3f\n"                                                                               \
    "    movs  ip, #0            @ the last slot: next = 0\n"                                      \
    "    strex r3, ip, [r2]\n"                                                                     \
    "    cmp   r3, #0\n"                                                                           \
    "    bne   1b\n"                                                                               \
    "    ldrd  r3, ip, [r2, #-8] @ ring, capacity\n"                                               \
    "    add   ip, r3, ip, lsl #3\n"                                                               \
    "    strd  r0, r1, [ip, #-8]\n"                                                                \
    "    bx    lr\n"                                                                               \
    "3:  b     spoor_calls_record_slow @ r0, r1 as they came\n"                                    \
    "    .ltorg\n"
#define SPOOR_CALLS_EXIT_KIND "    bic   r0, r0, #1\n"
#else
/* ARMv6-M / ARMv8-M Baseline, 15 instructions (exit 16): the claim is a PRIMASK section of
 * five instructions (PRIMASK saved and restored: the hooks may run with interrupts masked). */
#define SPOOR_CALLS_HOOK_BODY                                                                      \
    "    push  {r4, r5, lr}\n"                                                                     \
    "    ldr   r2, =spoor_calls_fast\n"                                                            \
    "    ldm   r2, {r2, r3, r4}  @ &next, last or 0, ring - 8\n"                                   \
    "    mrs   ip, primask\n"                                                                      \
    "    cpsid i\n"                                                                                \
    "    ldr   r5, [r2]          @ i\n"                                                            \
    "    cmp   r5, r3\n"                                                                           \
    "    bhs   2f                @ i == last: wrap; last == 0: not to the ring alone\n"            \
    "    adds  r5, r5, #1\n"                                                                       \
    "    str   r5, [r2]\n"                                                                         \
    "1:  msr   primask, ip\n"                                                                      \
    "    lsls  r5, r5, #3\n"                                                                       \
    "    adds  r4, r4, r5\n"                                                                       \
    "    stm   r4!, {r0, r1}\n"                                                                    \
    "    pop   {r4, r5, pc}\n"                                                                     \
    "2:  cmp   r3, #0\n"                                                                           \
    "    beq   3f\n"                                                                               \
    "    adds  r5, r5, #1\n"                                                                       \
    "    movs  r3, #0            @ the last slot: next = 0\n"                                      \
    "    str   r3, [r2]\n"                                                                         \
    "    b     1b\n"                                                                               \
    "3:  msr   primask, ip\n"                                                                      \
    "    pop   {r4, r5}\n"                                                                         \
    "    pop   {r2}\n"                                                                             \
    "    mov   lr, r2\n"                                                                           \
    "    ldr   r2, =spoor_calls_record_slow\n"                                                     \
    "    bx    r2\n"                                                                               \
    "    .ltorg\n"
#define SPOOR_CALLS_EXIT_KIND "    subs  r0, r0, #1\n"
#endif

/* The arguments are in r0 and r1, where the assembly reads them. */
#define UNUSED __attribute__((unused))

SPOOR_NO_INSTRUMENT __attribute__((naked)) void __cyg_profile_func_enter(void *this_fn UNUSED,
                                                                         void *call_site UNUSED)
{
    __asm volatile(".syntax unified\n" SPOOR_CALLS_HOOK_BODY);
}

SPOOR_NO_INSTRUMENT __attribute__((naked)) void __cyg_profile_func_exit(void *this_fn UNUSED,
                                                                        void *call_site UNUSED)
{
    __asm volatile(".syntax unified\n" SPOOR_CALLS_EXIT_KIND SPOOR_CALLS_HOOK_BODY);
}
#endif
