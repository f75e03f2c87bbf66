/* The call recorder (target/src/calls_recorder.c, built for the host) and its decoder
 * (src/lib/calls_decode.c): records written by the very hooks the device runs, read back. The
 * expected sequences are the calls each test makes itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "spoor/calls.h"
#include "spoor/calls_decode.h"
#include "spoor/error.h"

#define FN(n) ((void *)(uintptr_t)(0x1001u + 0x100u * (n))) /* Thumb function addresses */
#define SITE(n) ((void *)(uintptr_t)(0x2001u + 0x10u * (n)))
#define EXC_THREAD_MSP ((void *)(uintptr_t)0xFFFFFFF9u)

static uint32_t ring[64];

/* The state object as the device holds it, little-endian, with the ring at ring_addr (and the
 * address of the next slot moved with it). */
static void state_bytes(uint8_t out[SPOOR_CALLS_STATE_SIZE], uint32_t ring_addr)
{
    const spoor_calls_state_t *s = &spoor_calls_state;
    uint32_t words[6] = {
        s->magic, s->format, ring_addr, s->capacity, ring_addr + (s->next - s->ring), s->flags};
    for (int i = 0; i < 6; i++)
        for (int b = 0; b < 4; b++)
            out[4 * i + b] = (uint8_t)(words[i] >> (8 * b));
}

static bool decode(spoor_call_trace *t)
{
    uint8_t st[SPOOR_CALLS_STATE_SIZE];
    state_bytes(st, 0x20000000u);
    spoor_calls_info state;
    if (!spoor_calls_parse_state(st, sizeof st, &state))
        return false;
    return spoor_calls_decode(&state, (const uint8_t *)ring, spoor_calls_ring_bytes(&state), t);
}

static void call(int fn, int site)
{
    __cyg_profile_func_enter(FN(fn), SITE(site));
}

static void ret(int fn, int site)
{
    __cyg_profile_func_exit(FN(fn), SITE(site));
}

static void expect(const spoor_call_record *r, spoor_call_kind kind, int fn, int site, int depth)
{
    assert_int_equal(r->kind, kind);
    assert_int_equal(r->function, (uintptr_t)FN(fn) & ~1u);
    assert_int_equal(r->site, (uintptr_t)SITE(site) & ~1u);
    assert_int_equal(r->depth, depth);
}

static void test_nothing_before_init(void **state)
{
    (void)state;
    memset(&spoor_calls_state, 0, sizeof spoor_calls_state);
    call(1, 1);
    uint8_t st[SPOOR_CALLS_STATE_SIZE];
    state_bytes(st, 0x20000000u);
    spoor_calls_info s;
    assert_false(spoor_calls_parse_state(st, sizeof st, &s));
    assert_non_null(strstr(spoor_last_error(), "not initialised"));
    assert_false(spoor_calls_init(ring, 8)); /* fewer than 2 records */
    assert_false(spoor_calls_init((uint8_t *)ring + 1, 64));
}

static void test_tree(void **state)
{
    (void)state;
    assert_true(spoor_calls_init(ring, sizeof ring));
    assert_int_equal(spoor_calls_record_size(), 8);
    call(1, 0);
    call(2, 1);
    ret(2, 1);
    call(3, 2);
    call(2, 3);
    ret(2, 3);
    ret(3, 2);
    spoor_call_trace t;
    assert_true(decode(&t));
    assert_int_equal(t.count, 7);
    assert_false(t.wrapped);
    assert_int_equal(t.context_count, 1);
    expect(&t.records[0], SPOOR_CALL_ENTER, 1, 0, 0);
    expect(&t.records[1], SPOOR_CALL_ENTER, 2, 1, 1);
    expect(&t.records[2], SPOOR_CALL_EXIT, 2, 1, 1);
    expect(&t.records[3], SPOOR_CALL_ENTER, 3, 2, 1);
    expect(&t.records[4], SPOOR_CALL_ENTER, 2, 3, 2);
    expect(&t.records[5], SPOOR_CALL_EXIT, 2, 3, 2);
    expect(&t.records[6], SPOOR_CALL_EXIT, 3, 2, 1);
    spoor_call_trace_free(&t);
}

static void test_enable_and_freeze(void **state)
{
    (void)state;
    assert_true(spoor_calls_init(ring, sizeof ring));
    call(1, 0);
    spoor_calls_enable(false);
    call(2, 1); /* not recorded */
    spoor_calls_enable(true);
    ret(1, 0);
    spoor_calls_freeze();
    spoor_calls_enable(true); /* a frozen recorder stays off */
    call(3, 0);
    spoor_call_trace t;
    assert_true(decode(&t));
    assert_int_equal(t.count, 2);
    expect(&t.records[1], SPOOR_CALL_EXIT, 1, 0, 0);
    assert_true(spoor_calls_state.flags & SPOOR_CALLS_FLAG_FROZEN);
    spoor_call_trace_free(&t);
}

/* 4 records of room, 3 nested calls and their returns, then one more call: the oldest three
 * are gone; the depth the data implies starts the window at 2. */
static void test_wrap_keeps_newest(void **state)
{
    (void)state;
    assert_true(spoor_calls_init(ring, 4 * 8));
    call(1, 0);
    call(2, 1);
    call(3, 2);
    ret(3, 2);
    ret(2, 1);
    ret(1, 0);
    call(4, 0);
    spoor_call_trace t;
    assert_true(decode(&t));
    assert_true(t.wrapped);
    assert_int_equal(t.count, 4);
    assert_true(t.records[0].after_gap);
    expect(&t.records[0], SPOOR_CALL_EXIT, 3, 2, 2);
    expect(&t.records[1], SPOOR_CALL_EXIT, 2, 1, 1);
    expect(&t.records[2], SPOOR_CALL_EXIT, 1, 0, 0);
    expect(&t.records[3], SPOOR_CALL_ENTER, 4, 0, 0);
    spoor_call_trace_free(&t);
}

/* An instrumented handler interrupts fn 2: its records form a context of their own. A ring
 * that starts inside a handler gives the records before the handler's exit to that handler. */
static void test_exception_contexts(void **state)
{
    (void)state;
    assert_true(spoor_calls_init(ring, sizeof ring));
    call(1, 0);
    call(2, 1);
    __cyg_profile_func_enter(FN(9), EXC_THREAD_MSP);
    call(3, 4);
    ret(3, 4);
    __cyg_profile_func_exit(FN(9), EXC_THREAD_MSP);
    ret(2, 1);
    spoor_call_trace t;
    assert_true(decode(&t));
    assert_int_equal(t.count, 7);
    assert_int_equal(t.context_count, 2);
    assert_true(t.contexts[1].handler);
    assert_int_equal(t.contexts[1].exc_return, 0xFFFFFFF9u);
    assert_int_equal(t.records[2].context, 1);
    assert_int_equal(t.records[2].depth, 0);
    assert_int_equal(t.records[2].site, 0xFFFFFFF9u);
    assert_int_equal(t.records[3].depth, 1);
    assert_int_equal(t.records[5].context, 1);
    assert_int_equal(t.records[6].context, 0);
    expect(&t.records[6], SPOOR_CALL_EXIT, 2, 1, 1);
    spoor_call_trace_free(&t);
    assert_string_equal(spoor_calls_exc_return_text(0xFFFFFFF9u), "thread, MSP");
    assert_string_equal(spoor_calls_exc_return_text(0xFFFFFFEDu), "thread, PSP, FP");
    assert_string_equal(spoor_calls_exc_return_text(0xFFFFFFF1u), "handler");
    assert_null(spoor_calls_exc_return_text(0x08000001u));

    /* ring starts inside the handler */
    assert_true(spoor_calls_init(ring, sizeof ring));
    call(3, 4);
    ret(3, 4);
    __cyg_profile_func_exit(FN(9), EXC_THREAD_MSP);
    ret(2, 1);
    assert_true(decode(&t));
    assert_int_equal(t.context_count, 2);
    assert_int_equal(t.records[0].context, 1);
    assert_int_equal(t.records[0].depth, 1);
    assert_int_equal(t.records[2].context, 1);
    assert_int_equal(t.records[2].depth, 0);
    assert_int_equal(t.records[3].context, 0);
    assert_int_equal(t.records[3].depth, 0);
    spoor_call_trace_free(&t);
}

static void test_bad_state_and_ring(void **state)
{
    (void)state;
    assert_true(spoor_calls_init(ring, sizeof ring));
    call(1, 0);
    uint8_t st[SPOOR_CALLS_STATE_SIZE];
    spoor_calls_info s;
    spoor_call_trace t;

    state_bytes(st, 0x20000000u);
    st[0] ^= 1; /* magic */
    assert_false(spoor_calls_parse_state(st, sizeof st, &s));
    assert_non_null(strstr(spoor_last_error(), "magic"));

    state_bytes(st, 0x20000000u);
    st[SPOOR_CALLS_ST_NEXT + 1] = 1; /* the next slot beyond the ring */
    assert_false(spoor_calls_parse_state(st, sizeof st, &s));
    assert_string_equal(spoor_last_error(),
                        "call recorder state is corrupt: next slot at 0x20000108, ring at "
                        "0x20000000, 32 records of 8 bytes");
    state_bytes(st, 0x20000000u);
    st[SPOOR_CALLS_ST_NEXT] += 4; /* not a slot's start */
    assert_false(spoor_calls_parse_state(st, sizeof st, &s));
    assert_non_null(strstr(spoor_last_error(), "next slot at 0x2000000c"));
    state_bytes(st, 0x20000000u);
    st[SPOOR_CALLS_ST_NEXT + 3] = 0x1F; /* below the ring */
    assert_false(spoor_calls_parse_state(st, sizeof st, &s));
    assert_non_null(strstr(spoor_last_error(), "next slot at 0x1f000008"));

    state_bytes(st, 0x20000000u);
    st[SPOOR_CALLS_ST_FORMAT + 2] = SPOOR_CALLS_LAYOUT_INDEX; /* next an index: the first layout */
    st[SPOOR_CALLS_ST_NEXT + 3] = 0;
    st[SPOOR_CALLS_ST_NEXT] = 1;
    assert_true(spoor_calls_parse_state(st, sizeof st, &s));
    assert_int_equal(s.next, 1);
    assert_int_equal(s.layout, SPOOR_CALLS_LAYOUT_INDEX);
    st[SPOOR_CALLS_ST_NEXT] = 200; /* next beyond capacity */
    assert_false(spoor_calls_parse_state(st, sizeof st, &s));
    assert_string_equal(spoor_last_error(),
                        "call recorder state is corrupt: next index 200, capacity 32");

    state_bytes(st, 0x20000000u);
    st[SPOOR_CALLS_ST_FORMAT + 2] = 2; /* a layout this host does not know */
    assert_false(spoor_calls_parse_state(st, sizeof st, &s));
    assert_non_null(strstr(spoor_last_error(), "record format 0x00020008"));

    state_bytes(st, 0x20000000u);
    st[SPOOR_CALLS_ST_FORMAT] = 12; /* size without the flags that make it 12 */
    assert_false(spoor_calls_parse_state(st, sizeof st, &s));
    assert_non_null(strstr(spoor_last_error(), "record format"));

    state_bytes(st, 0x20000000u);
    st[SPOOR_CALLS_ST_CAPACITY + 3] = 0x40; /* a ring of gigabytes */
    assert_false(spoor_calls_parse_state(st, sizeof st, &s));
    assert_non_null(strstr(spoor_last_error(), "capacity"));

    state_bytes(st, 0xFFFFFF04u); /* ring past the end of the address space */
    assert_false(spoor_calls_parse_state(st, sizeof st, &s));

    assert_false(spoor_calls_parse_state(st, 10, &s));
    assert_non_null(strstr(spoor_last_error(), "truncated"));

    state_bytes(st, 0x20000000u);
    assert_true(spoor_calls_parse_state(st, sizeof st, &s));
    assert_false(spoor_calls_decode(&s, (const uint8_t *)ring, 17, &t));
    assert_non_null(strstr(spoor_last_error(), "truncated"));

    ring[1] = 0x2000; /* an even call site: not a return address */
    assert_false(spoor_calls_decode(&s, (const uint8_t *)ring, sizeof ring, &t));
    assert_non_null(strstr(spoor_last_error(), "corrupt"));
}

/* A slot that was claimed but never written (a fault inside a hook) is skipped and marked. */
static void test_unwritten_slot(void **state)
{
    (void)state;
    assert_true(spoor_calls_init(ring, sizeof ring));
    call(1, 0);
    call(2, 1);
    ret(2, 1);
    ring[2] = ring[3] = 0;
    spoor_call_trace t;
    assert_true(decode(&t));
    assert_int_equal(t.count, 2);
    assert_int_equal(t.empty_slots, 1);
    assert_true(t.records[1].after_gap);
    spoor_call_trace_free(&t);
}

/* Records with timestamp and context id, laid out by hand (the host library is built
 * without those options). */
static void test_time_and_context_ids(void **state)
{
    (void)state;
    uint32_t words[] = {
        SPOOR_CALLS_MAGIC,
        16u | (SPOOR_CALLS_HAS_TIME | SPOOR_CALLS_HAS_CONTEXT) << 8,
        0x20000000u,
        4u,
        3u,
        SPOOR_CALLS_FLAG_READY | SPOOR_CALLS_FLAG_ENABLED,
    };
    uint8_t st[SPOOR_CALLS_STATE_SIZE];
    memcpy(st, words, sizeof st); /* the host is little-endian */
    spoor_calls_info s;
    assert_true(spoor_calls_parse_state(st, sizeof st, &s));
    assert_true(s.has_time && s.has_context);
    uint32_t r[16] = {
        0x1001, 0x2001,      0xFFFFFFF0u, 0,  /* enter fn at cycle 0xFFFFFFF0, thread */
        0x1101, 0xFFFFFFF9u, 0x00000010u, 15, /* SysTick handler, the counter wrapped */
        0x1100, 0xFFFFFFF9u, 0x00000030u, 15, 0, 0, 0, 0,
    };
    spoor_call_trace t;
    assert_true(spoor_calls_decode(&s, (const uint8_t *)r, sizeof r, &t));
    assert_int_equal(t.count, 3);
    assert_int_equal(t.records[1].time_ticks, 0x20);
    assert_int_equal(t.records[2].time_ticks, 0x40);
    assert_int_equal(t.context_count, 2);
    assert_int_equal(t.records[1].context, 1);
    assert_int_equal(t.contexts[1].id, 15);
    assert_int_equal(t.records[1].depth, 0);
    spoor_call_trace_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nothing_before_init), cmocka_unit_test(test_tree),
        cmocka_unit_test(test_enable_and_freeze),   cmocka_unit_test(test_wrap_keeps_newest),
        cmocka_unit_test(test_exception_contexts),  cmocka_unit_test(test_bad_state_and_ring),
        cmocka_unit_test(test_unwritten_slot),      cmocka_unit_test(test_time_and_context_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
