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
#include <stddef.h>

#include "spoor/calls.h"

#ifndef SPOOR_CALLS_TIME
#define SPOOR_CALLS_TIME 0
#endif
#ifndef SPOOR_CALLS_CONTEXT
#define SPOOR_CALLS_CONTEXT 0
#endif

#if defined(SPOOR_TARGET_HOST) || !defined(__arm__)
#define SPOOR_CALLS_ON_DEVICE 0
/* Host build: the ring lives at a host address the u32 state fields cannot hold; they hold its
 * low 32 bits, and a slot's address is turned back into a host pointer through host_ring. */
static uint32_t *host_ring;
#define SLOT_WORDS(s, a) (host_ring + ((a) - (s)->ring) / 4u)
#define SPOOR_CALLS_LDREX 0
SPOOR_NO_INSTRUMENT static inline uint32_t spoor_calls_load_next(volatile uint32_t *next)
{
    return *next;
}
SPOOR_NO_INSTRUMENT static inline uint32_t spoor_calls_store_next(volatile uint32_t *next,
                                                                  uint32_t value)
{
    *next = value;
    return 0u;
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
#define SLOT_WORDS(s, a) ((uint32_t *)(uintptr_t)(a))
#endif

#define EXTRA_WORDS ((SPOOR_CALLS_TIME ? 1u : 0u) + (SPOOR_CALLS_CONTEXT ? 1u : 0u))
#define RECORD_WORDS (2u + EXTRA_WORDS)
#define RECORD_BYTES (RECORD_WORDS * 4u)
#define RUNNING (SPOOR_CALLS_FLAG_READY | SPOOR_CALLS_FLAG_ENABLED)

/* The hand-written hooks: the default record on ARMv7-M / ARMv8-M Mainline (LDREX/STREX) and
 * on ARMv6-M / ARMv8-M Baseline (a PRIMASK section). */
#if SPOOR_CALLS_ON_DEVICE && EXTRA_WORDS == 0
#define ASM_HOOKS 1
#else
#define ASM_HOOKS 0
#endif

/* The hand-written hooks address the state's fields by these offsets (#8, #16, #24 below). */
typedef char
    spoor_calls_offsets_match[(offsetof(spoor_calls_state_t, ring) == SPOOR_CALLS_ST_RING &&
                               offsetof(spoor_calls_state_t, next) == SPOOR_CALLS_ST_NEXT &&
                               offsetof(spoor_calls_state_t, flags) == SPOOR_CALLS_ST_FLAGS &&
                               offsetof(spoor_calls_state_t, last) == SPOOR_CALLS_ST_LAST &&
                               SPOOR_CALLS_ST_RING == 8u && SPOOR_CALLS_ST_NEXT == 16u &&
                               SPOOR_CALLS_ST_LAST == 24u)
                                  ? 1
                                  : -1];

/* In .bss: all zero until spoor_calls_init writes every word of it, and zero reads as "not
 * recording" (last = 0). Nothing of the recorder is in .data. */
__attribute__((used)) spoor_calls_state_t spoor_calls_state;
#if SPOOR_CALLS_ON_DEVICE && SPOOR_CALLS_LDREX
static uint32_t itm_port;
#endif

/* Keeps the compiler from moving the state's plain stores across the store that opens the
 * gate (the hooks run in interrupts on the same core: program order is enough). */
#define ORDERED() __asm volatile("" ::: "memory")

/* The hooks' gate from the flags: the last slot's address while the records go to the ring
 * alone, 0 otherwise (before init, paused, frozen, ITM output: the hooks then take the slow
 * path, which reads the flags). */
SPOOR_NO_INSTRUMENT static void gate(spoor_calls_state_t *s)
{
    ORDERED();
    s->last = s->flags == RUNNING ? s->ring + (s->capacity - 1u) * RECORD_BYTES : 0u;
}

uint32_t spoor_calls_context(void) __attribute__((weak));

SPOOR_NO_INSTRUMENT uint32_t spoor_calls_record_size(void)
{
    return RECORD_BYTES;
}

SPOOR_NO_INSTRUMENT bool spoor_calls_init(void *buf, size_t size)
{
    spoor_calls_state_t *s = &spoor_calls_state;
    s->last = 0u; /* the hooks stop using the ring first */
    s->flags = 0u;
    ORDERED();
    s->magic = 0u;
    s->format = 0u;
    s->ring = 0u;
    s->capacity = 0u;
    s->next = 0u;
    uint32_t capacity = (uint32_t)(size / RECORD_BYTES);
    if (!buf || ((uintptr_t)buf & 3u) != 0u || capacity < 2u)
        return false;
    /* zeroed word by word: no memset, so that no C library is needed */
    volatile uint32_t *w = buf;
    for (uint32_t i = 0; i < capacity * RECORD_WORDS; i++)
        w[i] = 0u;
#if !SPOOR_CALLS_ON_DEVICE
    host_ring = buf;
#endif
#if SPOOR_CALLS_TIME && SPOOR_CALLS_ON_DEVICE
    spoor_calls_time_start();
#endif
    uint32_t optional =
        (SPOOR_CALLS_TIME ? SPOOR_CALLS_HAS_TIME : 0u) |
        (SPOOR_CALLS_TIME && SPOOR_CALLS_TIME_IS_SYSTICK ? SPOOR_CALLS_TIME_SYSTICK : 0u) |
        (SPOOR_CALLS_CONTEXT ? SPOOR_CALLS_HAS_CONTEXT : 0u);
    s->ring = (uint32_t)(uintptr_t)buf;
    s->format = RECORD_BYTES | optional << 8 | SPOOR_CALLS_LAYOUT_ADDRESS << 16;
    s->capacity = capacity;
    s->next = s->ring;
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

/* Claims the slot at s->next and advances it (to the ring's first slot after its last one);
 * returns the slot's address. A cursor outside the ring (never written so by the recorder)
 * claims the last slot: nothing is written outside the ring. */
SPOOR_NO_INSTRUMENT static inline __attribute__((always_inline)) uint32_t
claim(spoor_calls_state_t *s)
{
    uint32_t ring = s->ring, last = ring + (s->capacity - 1u) * RECORD_BYTES, a, n;
#if SPOOR_CALLS_ON_DEVICE && !SPOOR_CALLS_LDREX
    uint32_t primask = spoor_calls_mask();
#endif
    do {
        a = spoor_calls_load_next(&s->next);
        n = a + RECORD_BYTES;
        if (a - ring >= last - ring) {
            a = last;
            n = ring;
        }
    } while (spoor_calls_store_next(&s->next, n) != 0u);
#if SPOOR_CALLS_ON_DEVICE && !SPOOR_CALLS_LDREX
    spoor_calls_unmask(primask);
#endif
    return a;
}

SPOOR_NO_INSTRUMENT static inline __attribute__((always_inline)) void
store(spoor_calls_state_t *s, uint32_t fn, uint32_t site)
{
    uint32_t *slot = SLOT_WORDS(s, claim(s));
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
 * function word as it is (kind 1); the exit hook clears the bit first. The state's address is
 * a literal in flash; its fields are read at their offsets: ring #8, next #16 (the address of
 * the slot written next), last #24 (the gate: the address of the ring's last slot while the
 * records go to the ring alone, 0 otherwise). One unsigned compare of the slot's address with
 * last sends both the wrap (the slot is the last one) and "not recording into the ring alone"
 * (last = 0) off the straight path, which stores next = slot + 8 and the record at the slot.
 *
 * ARMv7-M / ARMv8-M Mainline, 10 instructions (exit 11): the claim is LDREX/STREX; when an
 * interrupt came between the two, the STREX fails and the claim is made again. The record
 * goes to the new next - 8, so the STREX's status may take the register the slot was in. The
 * wrap claims the last slot with next = ring, with r0 and r1 saved to have two more
 * registers. */
#if SPOOR_CALLS_LDREX
#define SPOOR_CALLS_HOOK_BODY                                                                      \
    "    ldr   r2, =spoor_calls_state\n"                                                           \
    "    ldr   ip, [r2, #24]     @ last: the last slot, or 0\n"                                    \
    "0:  ldrex r3, [r2, #16]     @ the slot: next\n"                                               \
    "    cmp   r3, ip\n"                                                                           \
    "    bhs   2f                @ the last slot: wrap; last == 0: not to the ring alone\n"        \
    "    add   ip, r3, #8\n"                                                                       \
    "    strex r3, ip, [r2, #16] @ next = slot + 8\n"                                              \
    "    cbnz  r3, 1f            @ an interrupt came first: claim again\n"                         \
    "    strd  r0, r1, [ip, #-8]\n"                                                                \
    "    bx    lr\n"                                                                               \
    "1:  ldr   ip, [r2, #24]\n"                                                                    \
    "    b     0b\n"                                                                               \
    "2:  cmp   ip, #0\n"                                                                           \
    "    beq   3f\n"                                                                               \
    "    push  {r0, r1}\n"                                                                         \
    "    ldr   r0, [r2, #8]      @ ring\n"                                                         \
    "    strex r1, r0, [r2, #16] @ next = ring\n"                                                  \
    "    cmp   r1, #0\n"                                                                           \
    "    pop   {r0, r1}\n"                                                                         \
    "    bne   1b\n"                                                                               \
    "    strd  r0, r1, [ip]      @ the last slot\n"                                                \
    "    bx    lr\n"                                                                               \
    "3:  b     spoor_calls_record_slow @ r0, r1 as they came\n"                                    \
    "    .ltorg\n"
#define SPOOR_CALLS_EXIT_KIND "    bic   r0, r0, #1\n"
#else
/* ARMv6-M / ARMv8-M Baseline, 12 instructions (exit 13): claim and store in one PRIMASK
 * section of seven instructions (PRIMASK saved and restored: the hooks may run with
 * interrupts masked). */
#define SPOOR_CALLS_HOOK_BODY                                                                      \
    "    ldr   r2, =spoor_calls_state\n"                                                           \
    "    mrs   ip, primask\n"                                                                      \
    "    cpsid i\n"                                                                                \
    "    ldr   r3, [r2, #16]     @ the slot: next\n"                                               \
    "    ldr   r2, [r2, #24]     @ last: the last slot, or 0\n"                                    \
    "    cmp   r3, r2\n"                                                                           \
    "    bhs   2f                @ the last slot: wrap; last == 0: not to the ring alone\n"        \
    "    stm   r3!, {r0, r1}     @ the record; r3 = slot + 8\n"                                    \
    "    ldr   r2, =spoor_calls_state\n"                                                           \
    "    str   r3, [r2, #16]     @ next = slot + 8\n"                                              \
    "1:  msr   primask, ip\n"                                                                      \
    "    bx    lr\n"                                                                               \
    "2:  cmp   r2, #0\n"                                                                           \
    "    beq   3f\n"                                                                               \
    "    stm   r2!, {r0, r1}     @ the last slot\n"                                                \
    "    ldr   r2, =spoor_calls_state\n"                                                           \
    "    ldr   r3, [r2, #8]      @ ring\n"                                                         \
    "    str   r3, [r2, #16]     @ next = ring\n"                                                  \
    "    b     1b\n"                                                                               \
    "3:  msr   primask, ip\n"                                                                      \
    "    ldr   r2, =spoor_calls_record_slow\n"                                                     \
    "    bx    r2                @ r0, r1 and lr as they came\n"                                   \
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
