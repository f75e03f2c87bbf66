/* The call-stack model (src/lib/flow/call_stack.c): events, depths, inclusive and exclusive
 * times and per-function counts. Every expected value is worked out by hand in the test from
 * the times it sends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "spoor/call_stack.h"

#define U SPOOR_CALL_UNKNOWN

/* One event as the sink saw it. */
struct seen {
    spoor_call_stack_event_kind kind;
    spoor_call_stack_cause cause;
    uint32_t context, fn, ret;
    size_t depth, nframes;
    bool has_frame, kept, exception;
    uint64_t inclusive, exclusive;
};

struct log {
    struct seen ev[64];
    size_t n, next; /* events logged, the next one to check */
};

static void sink(void *arg, const spoor_call_stack_event *ev)
{
    struct log *l = arg;
    assert_true(l->n < 64);
    struct seen *s = &l->ev[l->n++];
    *s = (struct seen){.kind = ev->kind,
                       .cause = ev->cause,
                       .context = ev->context,
                       .depth = ev->depth,
                       .nframes = ev->nframes,
                       .kept = ev->kept,
                       .inclusive = ev->inclusive,
                       .exclusive = ev->exclusive};
    if (ev->frame) {
        s->has_frame = true;
        s->fn = ev->frame->fn;
        s->ret = ev->frame->ret;
        s->exception = ev->frame->exception;
    }
    if (ev->kept) /* a kept frame is the last of frames */
        assert_ptr_equal(ev->frame, &ev->frames[ev->nframes - 1]);
}

static const struct seen *next(struct log *l)
{
    assert_true(l->next < l->n);
    return &l->ev[l->next++];
}

static void expect_kind(struct log *l, spoor_call_stack_event_kind kind, uint32_t ctx)
{
    const struct seen *s = next(l);
    assert_int_equal(s->kind, kind);
    assert_int_equal(s->context, ctx);
}

static void expect_enter(struct log *l, spoor_call_stack_cause cause, uint32_t fn, size_t depth)
{
    const struct seen *s = next(l);
    assert_int_equal(s->kind, SPOOR_CALL_STACK_ENTER);
    assert_int_equal(s->cause, cause);
    assert_int_equal(s->fn, fn);
    assert_int_equal(s->depth, depth);
}

/* The exit of a kept frame, with its times. */
static void expect_exit(struct log *l, spoor_call_stack_cause cause, uint32_t fn, size_t depth,
                        uint64_t inclusive, uint64_t exclusive)
{
    const struct seen *s = next(l);
    assert_int_equal(s->kind, SPOOR_CALL_STACK_EXIT);
    assert_int_equal(s->cause, cause);
    assert_true(s->kept);
    assert_int_equal(s->fn, fn);
    assert_int_equal(s->depth, depth);
    assert_int_equal(s->nframes, depth);
    assert_int_equal(s->inclusive, inclusive);
    assert_int_equal(s->exclusive, exclusive);
}

static void expect_done(struct log *l)
{
    assert_int_equal(l->next, l->n);
}

static void expect_stats(spoor_call_stack *cs, const spoor_call_fn_stats *want, size_t n)
{
    size_t got;
    const spoor_call_fn_stats *s = spoor_call_stack_stats(cs, &got);
    assert_int_equal(got, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(s[i].fn, want[i].fn);
        assert_int_equal(s[i].calls, want[i].calls);
        assert_int_equal(s[i].inclusive, want[i].inclusive);
        assert_int_equal(s[i].exclusive, want[i].exclusive);
    }
}

/* A calls B, B calls C, C returns, B returns, A calls C again:
 *   t   0 A{  10 B{  15 C{  25 }C  40 }B  45 C{  50 }C  100 }A
 * C: 25-15 = 10 and 50-45 = 5, no callees: inclusive 15, exclusive 15.
 * B: 40-10 = 30, less C's 10: exclusive 20.
 * A: 100, less B's 30 and C's 5: exclusive 65. */
static void test_nested_calls(void **state)
{
    (void)state;
    struct log l = {0};
    spoor_call_stack cs;
    spoor_call_stack_init(&cs, 8, SPOOR_CALL_STACK_COUNT, sink, &l);
    assert_true(spoor_call_stack_call(&cs, 0, 0xA0, 0xA0, 0x10, 0));
    assert_true(spoor_call_stack_call(&cs, 0, 0xB0, 0xB0, 0xA4, 10));
    assert_true(spoor_call_stack_call(&cs, 0, 0xC0, 0xC0, 0xB4, 15));
    assert_int_equal(spoor_call_stack_depth(&cs, 0), 3);
    assert_true(spoor_call_stack_return(&cs, 0, 25));
    assert_true(spoor_call_stack_return(&cs, 0, 40));
    assert_true(spoor_call_stack_call(&cs, 0, 0xC0, 0xC0, 0xA8, 45));
    assert_true(spoor_call_stack_return(&cs, 0, 50));
    assert_true(spoor_call_stack_return(&cs, 0, 100));
    assert_int_equal(spoor_call_stack_depth(&cs, 0), 0);

    expect_kind(&l, SPOOR_CALL_STACK_BEGIN, 0);
    expect_enter(&l, SPOOR_CALL_STACK_CALL, 0xA0, 1);
    expect_enter(&l, SPOOR_CALL_STACK_CALL, 0xB0, 2);
    expect_enter(&l, SPOOR_CALL_STACK_CALL, 0xC0, 3);
    expect_exit(&l, SPOOR_CALL_STACK_RETURN, 0xC0, 3, 10, 10);
    expect_exit(&l, SPOOR_CALL_STACK_RETURN, 0xB0, 2, 30, 20);
    expect_enter(&l, SPOOR_CALL_STACK_CALL, 0xC0, 2);
    expect_exit(&l, SPOOR_CALL_STACK_RETURN, 0xC0, 2, 5, 5);
    expect_exit(&l, SPOOR_CALL_STACK_RETURN, 0xA0, 1, 100, 65);
    expect_done(&l);
    /* C has the most calls; A and B one each, by number */
    const spoor_call_fn_stats want[] = {{0xC0, 2, 15, 15}, {0xA0, 1, 100, 65}, {0xB0, 1, 30, 20}};
    expect_stats(&cs, want, 3);
    spoor_call_stack_free(&cs);
}

/* Branches that are not calls (MTB): within a function, a tail call, a return to the frame's
 * site, a return past the caller, and the outermost frame that no branch returns from.
 *   t 0 in M (resumed)   1 M calls F (returns to 0x110)   3 F branches within F
 *   5 F branches to G: a tail call (F: 5-1 = 4)   9 G returns to 0x110 (G: 9-5 = 4)
 *  10 M calls F (0x114)  11 F calls H (0x210)  14 a return to 0x114: H (3) and F (4) leave
 *  15 a branch to 0x500 in no known function: nothing */
static void test_tail_calls_and_returns(void **state)
{
    (void)state;
    struct log l = {0};
    spoor_call_stack cs;
    spoor_call_stack_init(&cs, 8, SPOOR_CALL_STACK_FORGET, sink, &l);
    assert_true(spoor_call_stack_restart(&cs, 0, 0x100, 0x104, 0));
    assert_true(spoor_call_stack_call(&cs, 0, 0x200, 0x200, 0x110, 1));
    assert_true(spoor_call_stack_branch(&cs, 0, 0x200, 0x208, 3));
    assert_true(spoor_call_stack_branch(&cs, 0, 0x300, 0x300, 5));
    assert_true(spoor_call_stack_branch(&cs, 0, 0x100, 0x110, 9));
    assert_true(spoor_call_stack_call(&cs, 0, 0x200, 0x200, 0x114, 10));
    assert_true(spoor_call_stack_call(&cs, 0, 0x400, 0x400, 0x210, 11));
    assert_true(spoor_call_stack_branch(&cs, 0, 0x100, 0x114, 14));
    assert_true(spoor_call_stack_branch(&cs, 0, U, 0x500, 15));
    assert_int_equal(spoor_call_stack_depth(&cs, 0), 1);

    expect_kind(&l, SPOOR_CALL_STACK_BEGIN, 0);
    expect_enter(&l, SPOOR_CALL_STACK_RESUME, 0x100, 1);
    expect_enter(&l, SPOOR_CALL_STACK_CALL, 0x200, 2);
    expect_exit(&l, SPOOR_CALL_STACK_TAIL_CALL, 0x200, 2, 4, 4);
    const struct seen *g = &l.ev[l.next];
    expect_enter(&l, SPOOR_CALL_STACK_TAIL_CALL, 0x300, 2);
    assert_int_equal(g->ret, 0x110); /* G returns where F would have */
    expect_exit(&l, SPOOR_CALL_STACK_RETURN, 0x300, 2, 4, 4);
    expect_enter(&l, SPOOR_CALL_STACK_CALL, 0x200, 2);
    expect_enter(&l, SPOOR_CALL_STACK_CALL, 0x400, 3);
    expect_exit(&l, SPOOR_CALL_STACK_RETURN, 0x400, 3, 3, 3);
    expect_exit(&l, SPOOR_CALL_STACK_RETURN, 0x200, 2, 4, 1);
    expect_done(&l);
    /* M was resumed: no call, no time. F: 4 + 4 inclusive, 4 + 1 exclusive */
    const spoor_call_fn_stats want[] = {{0x200, 2, 8, 5}, {0x300, 1, 4, 4}, {0x400, 1, 3, 3}};
    expect_stats(&cs, want, 3);

    /* A stack whose outermost frame is a call: a branch to its return address is no return
     * (nothing shows what called it); into another function, it is a tail call. */
    spoor_call_stack_end(&cs, 0, 16);
    l = (struct log){0};
    assert_true(spoor_call_stack_call(&cs, 0, 0x200, 0x200, 0x110, 20));
    assert_true(spoor_call_stack_branch(&cs, 0, 0x100, 0x110, 22));
    expect_kind(&l, SPOOR_CALL_STACK_BEGIN, 0);
    expect_enter(&l, SPOOR_CALL_STACK_CALL, 0x200, 1);
    expect_exit(&l, SPOOR_CALL_STACK_TAIL_CALL, 0x200, 1, 2, 2);
    expect_enter(&l, SPOOR_CALL_STACK_TAIL_CALL, 0x100, 1);
    expect_done(&l);
    spoor_call_stack_free(&cs);
}

/* An exception taken inside a call, a return that does not cross the exception frame, a
 * tail-chained exception and an exception return with no exception frame.
 *   t 0 in main   2 main calls work (returns to 0x108)   4 IRQ interrupts work at 0x20a
 *   6 IRQ calls helper (0x404)   7 a branch to 0x108: below IRQ's frame, no return
 *   8 helper returns (2)   10 IRQ returns to 0x20a (10-4 = 6, less helper's 2: 4)
 *  12 work returns (12-2 = 10, less IRQ's 6: 4)
 *  14 IRQ again at 0x10c   16 its return chains into 0x600 (IRQ: 2)   18 0x600 returns (2)
 *  20 an exception return with no exception frame: the stack restarts at 0x700 */
static void test_exception_in_call(void **state)
{
    (void)state;
    struct log l = {0};
    spoor_call_stack cs;
    spoor_call_stack_init(&cs, 8, SPOOR_CALL_STACK_FORGET, sink, &l);
    assert_true(spoor_call_stack_restart(&cs, 0, 0x100, 0x100, 0));
    assert_true(spoor_call_stack_call(&cs, 0, 0x200, 0x200, 0x108, 2));
    assert_true(spoor_call_stack_exception(&cs, 0, 0x400, 0x400, 0x20a, 4));
    assert_true(spoor_call_stack_call(&cs, 0, 0x500, 0x500, 0x404, 6));
    assert_true(spoor_call_stack_branch(&cs, 0, U, 0x108, 7));
    assert_int_equal(spoor_call_stack_depth(&cs, 0), 4);
    assert_true(spoor_call_stack_branch(&cs, 0, 0x400, 0x404, 8));
    assert_true(spoor_call_stack_exception_return(&cs, 0, 0x200, 0x20a, 10));
    assert_true(spoor_call_stack_branch(&cs, 0, 0x100, 0x108, 12));
    assert_true(spoor_call_stack_exception(&cs, 0, 0x400, 0x400, 0x10c, 14));
    assert_true(spoor_call_stack_exception_return(&cs, 0, 0x600, 0x600, 16));
    assert_true(spoor_call_stack_exception_return(&cs, 0, 0x100, 0x10c, 18));
    assert_int_equal(spoor_call_stack_depth(&cs, 0), 1);
    assert_true(spoor_call_stack_exception_return(&cs, 0, 0x700, 0x700, 20));

    expect_kind(&l, SPOOR_CALL_STACK_BEGIN, 0);
    expect_enter(&l, SPOOR_CALL_STACK_RESUME, 0x100, 1);
    expect_enter(&l, SPOOR_CALL_STACK_CALL, 0x200, 2);
    const struct seen *irq = &l.ev[l.next];
    expect_enter(&l, SPOOR_CALL_STACK_EXCEPTION, 0x400, 3);
    assert_true(irq->exception);
    expect_enter(&l, SPOOR_CALL_STACK_CALL, 0x500, 4);
    expect_exit(&l, SPOOR_CALL_STACK_RETURN, 0x500, 4, 2, 2);
    expect_exit(&l, SPOOR_CALL_STACK_EXCEPTION_RETURN, 0x400, 3, 6, 4);
    expect_exit(&l, SPOOR_CALL_STACK_RETURN, 0x200, 2, 10, 4);
    expect_enter(&l, SPOOR_CALL_STACK_EXCEPTION, 0x400, 2);
    expect_exit(&l, SPOOR_CALL_STACK_EXCEPTION_RETURN, 0x400, 2, 2, 2);
    const struct seen *chained = &l.ev[l.next];
    expect_enter(&l, SPOOR_CALL_STACK_TAIL_CHAIN, 0x600, 2);
    assert_true(chained->exception);
    assert_int_equal(chained->ret, 0x10c); /* it returns where the first one was taken */
    expect_exit(&l, SPOOR_CALL_STACK_EXCEPTION_RETURN, 0x600, 2, 2, 2);
    expect_exit(&l, SPOOR_CALL_STACK_UNWIND, 0x100, 1, 20, 20 - 10 - 2 - 2);
    expect_enter(&l, SPOOR_CALL_STACK_RESUME, 0x700, 1);
    expect_done(&l);
    const spoor_call_fn_stats want[] = {
        {0x400, 2, 8, 6}, {0x200, 1, 10, 4}, {0x500, 1, 2, 2}, {0x600, 1, 2, 2}};
    expect_stats(&cs, want, 4);
    spoor_call_stack_free(&cs);
}

/* Returns with no call open: the trace began inside them. */
static void test_unmatched_returns(void **state)
{
    (void)state;
    struct log l = {0};
    spoor_call_stack cs;
    spoor_call_stack_init(&cs, 8, SPOOR_CALL_STACK_COUNT, sink, &l);
    assert_true(spoor_call_stack_return(&cs, 3, 1));
    assert_true(spoor_call_stack_call(&cs, 3, 0xA0, 0xA0, 0x10, 2));
    assert_true(spoor_call_stack_return(&cs, 3, 5));
    assert_true(spoor_call_stack_return(&cs, 3, 6));
    assert_int_equal(spoor_call_stack_depth(&cs, 3), 0);
    expect_kind(&l, SPOOR_CALL_STACK_BEGIN, 3);
    expect_kind(&l, SPOOR_CALL_STACK_UNMATCHED, 3);
    expect_enter(&l, SPOOR_CALL_STACK_CALL, 0xA0, 1);
    expect_exit(&l, SPOOR_CALL_STACK_RETURN, 0xA0, 1, 3, 3);
    expect_kind(&l, SPOOR_CALL_STACK_UNMATCHED, 3);
    expect_done(&l);
    const spoor_call_fn_stats want[] = {{0xA0, 1, 3, 3}};
    expect_stats(&cs, want, 1);
    spoor_call_stack_free(&cs);
}

static void expect_overflow(struct log *l, uint32_t fn)
{
    const struct seen *s = next(l);
    assert_int_equal(s->kind, SPOOR_CALL_STACK_OVERFLOW);
    assert_true(s->has_frame);
    assert_int_equal(s->fn, fn);
}

/* COUNT, 2 frames kept: A{0 B{1 C{2 D{3 }4 }5 }6 }7. C and D are counted, not kept: their
 * exits have no frame and no time, and B's exclusive time keeps theirs (6-1 = 5). A: 7, less
 * B's 5: 2. */
static void test_deeper_than_limit_counts(void **state)
{
    (void)state;
    struct log l = {0};
    spoor_call_stack cs;
    spoor_call_stack_init(&cs, 2, SPOOR_CALL_STACK_COUNT, sink, &l);
    for (uint32_t i = 0; i < 4; i++)
        assert_true(spoor_call_stack_call(&cs, 0, 0xA0 + 0x10 * i, 0xA0 + 0x10 * i, 0, i));
    assert_int_equal(spoor_call_stack_depth(&cs, 0), 4);
    for (uint32_t t = 4; t < 8; t++)
        assert_true(spoor_call_stack_return(&cs, 0, t));

    expect_kind(&l, SPOOR_CALL_STACK_BEGIN, 0);
    expect_enter(&l, SPOOR_CALL_STACK_CALL, 0xA0, 1);
    expect_enter(&l, SPOOR_CALL_STACK_CALL, 0xB0, 2);
    for (uint32_t fn = 0xC0; fn <= 0xD0; fn += 0x10) {
        expect_overflow(&l, fn);
        const struct seen *s = next(&l);
        assert_int_equal(s->kind, SPOOR_CALL_STACK_ENTER);
        assert_int_equal(s->fn, fn);
        assert_int_equal(s->depth, fn == 0xC0 ? 3 : 4);
        assert_false(s->kept);
        assert_int_equal(s->nframes, 2); /* the stack --folded shows: A;B */
    }
    for (size_t depth = 4; depth >= 3; depth--) {
        const struct seen *s = next(&l);
        assert_int_equal(s->kind, SPOOR_CALL_STACK_EXIT);
        assert_int_equal(s->depth, depth);
        assert_false(s->has_frame);
        assert_false(s->kept);
    }
    expect_exit(&l, SPOOR_CALL_STACK_RETURN, 0xB0, 2, 5, 5);
    expect_exit(&l, SPOOR_CALL_STACK_RETURN, 0xA0, 1, 7, 2);
    expect_done(&l);
    const spoor_call_fn_stats want[] = {
        {0xA0, 1, 7, 2}, {0xB0, 1, 5, 5}, {0xC0, 1, 0, 0}, {0xD0, 1, 0, 0}};
    expect_stats(&cs, want, 4);
    spoor_call_stack_free(&cs);
}

/* FORGET, 2 frames kept: A{0 B{1 C{2 forgets A; the depth stays 2. C returns to B (3); B is the
 * outermost frame now, so a branch to its return address is no return; the end unwinds B. */
static void test_deeper_than_limit_forgets(void **state)
{
    (void)state;
    struct log l = {0};
    spoor_call_stack cs;
    spoor_call_stack_init(&cs, 2, SPOOR_CALL_STACK_FORGET, sink, &l);
    assert_true(spoor_call_stack_call(&cs, 0, 0xA0, 0xA0, 0x1A, 0));
    assert_true(spoor_call_stack_call(&cs, 0, 0xB0, 0xB0, 0xA4, 1));
    assert_true(spoor_call_stack_call(&cs, 0, 0xC0, 0xC0, 0xB4, 2));
    assert_int_equal(spoor_call_stack_depth(&cs, 0), 2);
    assert_true(spoor_call_stack_branch(&cs, 0, 0xB0, 0xB4, 3));
    assert_true(spoor_call_stack_branch(&cs, 0, U, 0xA4, 4));
    assert_int_equal(spoor_call_stack_depth(&cs, 0), 1);
    spoor_call_stack_finish(&cs, 9);

    expect_kind(&l, SPOOR_CALL_STACK_BEGIN, 0);
    expect_enter(&l, SPOOR_CALL_STACK_CALL, 0xA0, 1);
    expect_enter(&l, SPOOR_CALL_STACK_CALL, 0xB0, 2);
    expect_overflow(&l, 0xA0);
    expect_enter(&l, SPOOR_CALL_STACK_CALL, 0xC0, 2);
    expect_exit(&l, SPOOR_CALL_STACK_RETURN, 0xC0, 2, 1, 1);
    expect_exit(&l, SPOOR_CALL_STACK_UNWIND, 0xB0, 1, 8, 7);
    expect_kind(&l, SPOOR_CALL_STACK_END, 0);
    expect_done(&l);
    /* A and B never returned: no time */
    const spoor_call_fn_stats want[] = {{0xA0, 1, 0, 0}, {0xB0, 1, 0, 0}, {0xC0, 1, 1, 1}};
    expect_stats(&cs, want, 3);
    spoor_call_stack_free(&cs);
}

/* Two contexts interleaved, each with its own stack and times:
 *   ctx 1: A{0        C{2        }C4  }A6      (C: 2; A: 6, less 2: 4)
 *   ctx 2:      B{1        }B3                 (B: 2)
 * then contexts ending: 2 ends and begins anew, 3 begins, 1 ends (3 takes its place), and
 * the finish ends 3 then 2 with their open calls. */
static void test_two_contexts_interleaved(void **state)
{
    (void)state;
    struct log l = {0};
    spoor_call_stack cs;
    spoor_call_stack_init(&cs, 8, SPOOR_CALL_STACK_COUNT, sink, &l);
    assert_true(spoor_call_stack_call(&cs, 1, 0xA0, 0xA0, 0, 0));
    assert_true(spoor_call_stack_call(&cs, 2, 0xB0, 0xB0, 0, 1));
    assert_true(spoor_call_stack_call(&cs, 1, 0xC0, 0xC0, 0, 2));
    assert_int_equal(spoor_call_stack_depth(&cs, 1), 2);
    assert_int_equal(spoor_call_stack_depth(&cs, 2), 1);
    assert_true(spoor_call_stack_return(&cs, 2, 3));
    assert_true(spoor_call_stack_return(&cs, 1, 4));
    assert_true(spoor_call_stack_return(&cs, 1, 6));
    expect_kind(&l, SPOOR_CALL_STACK_BEGIN, 1);
    expect_enter(&l, SPOOR_CALL_STACK_CALL, 0xA0, 1);
    expect_kind(&l, SPOOR_CALL_STACK_BEGIN, 2);
    expect_enter(&l, SPOOR_CALL_STACK_CALL, 0xB0, 1);
    expect_enter(&l, SPOOR_CALL_STACK_CALL, 0xC0, 2);
    expect_exit(&l, SPOOR_CALL_STACK_RETURN, 0xB0, 1, 2, 2);
    expect_exit(&l, SPOOR_CALL_STACK_RETURN, 0xC0, 2, 2, 2);
    expect_exit(&l, SPOOR_CALL_STACK_RETURN, 0xA0, 1, 6, 4);
    expect_done(&l);

    assert_true(spoor_call_stack_call(&cs, 2, 0xB0, 0xB0, 0, 7));
    spoor_call_stack_end(&cs, 2, 8);
    assert_int_equal(spoor_call_stack_depth(&cs, 2), 0);
    assert_true(spoor_call_stack_call(&cs, 2, 0xB0, 0xB0, 0, 9));
    assert_true(spoor_call_stack_call(&cs, 3, 0xD0, 0xD0, 0, 10));
    spoor_call_stack_end(&cs, 1, 11);
    spoor_call_stack_finish(&cs, 12);
    expect_enter(&l, SPOOR_CALL_STACK_CALL, 0xB0, 1);
    expect_exit(&l, SPOOR_CALL_STACK_UNWIND, 0xB0, 1, 1, 1);
    expect_kind(&l, SPOOR_CALL_STACK_END, 2);
    expect_kind(&l, SPOOR_CALL_STACK_BEGIN, 2);
    expect_enter(&l, SPOOR_CALL_STACK_CALL, 0xB0, 1);
    expect_kind(&l, SPOOR_CALL_STACK_BEGIN, 3);
    expect_enter(&l, SPOOR_CALL_STACK_CALL, 0xD0, 1);
    expect_kind(&l, SPOOR_CALL_STACK_END, 1);
    expect_exit(&l, SPOOR_CALL_STACK_UNWIND, 0xD0, 1, 2, 2);
    expect_kind(&l, SPOOR_CALL_STACK_END, 3);
    expect_exit(&l, SPOOR_CALL_STACK_UNWIND, 0xB0, 1, 3, 3);
    expect_kind(&l, SPOOR_CALL_STACK_END, 2);
    expect_done(&l);
    assert_int_equal(spoor_call_stack_depth(&cs, 2), 0);
    /* the unwound calls count, without time */
    const spoor_call_fn_stats want[] = {
        {0xB0, 3, 2, 2}, {0xA0, 1, 6, 4}, {0xC0, 1, 2, 2}, {0xD0, 1, 0, 0}};
    expect_stats(&cs, want, 4);
    spoor_call_stack_free(&cs);
}

/* 150 nested calls, 100 kept (the frames grow as they nest): level L (1 the outermost) is
 * entered at L-1 and exits at 300-L, so its inclusive time is 301-2L. A kept level below 100
 * has the kept level L+1 inside (299-2L): exclusive 2. Level 100's callee is not kept:
 * exclusive = inclusive = 101. */
static void test_deep_stack_grows(void **state)
{
    (void)state;
    spoor_call_stack cs;
    spoor_call_stack_init(&cs, 100, SPOOR_CALL_STACK_COUNT, NULL, NULL);
    for (uint32_t level = 1; level <= 150; level++)
        assert_true(spoor_call_stack_call(&cs, 0, 0x1000 + 4 * level, 0, 0, level - 1));
    assert_int_equal(spoor_call_stack_depth(&cs, 0), 150);
    for (uint32_t t = 150; t < 300; t++)
        assert_true(spoor_call_stack_return(&cs, 0, t));
    size_t n;
    const spoor_call_fn_stats *s = spoor_call_stack_stats(&cs, &n);
    assert_int_equal(n, 150);
    for (uint32_t level = 1; level <= 150; level++) { /* one call each: by number, by level */
        const spoor_call_fn_stats *f = &s[level - 1];
        assert_int_equal(f->fn, 0x1000 + 4 * level);
        assert_int_equal(f->calls, 1);
        uint64_t inclusive = level <= 100 ? 301 - 2 * level : 0;
        assert_int_equal(f->inclusive, inclusive);
        assert_int_equal(f->exclusive, level < 100 ? 2 : inclusive);
    }
    spoor_call_stack_free(&cs);
}

/* Many functions: the index grows and finds each one; after sorting it still does. Function i
 * (of 1000, 4 bytes apart) is called once, function 7 twice more per pass (3, then 5 calls):
 * 7 first, then the others by number. */
static void test_many_functions(void **state)
{
    (void)state;
    spoor_call_stack cs;
    spoor_call_stack_init(&cs, 4, SPOOR_CALL_STACK_COUNT, NULL, NULL);
    for (uint32_t i = 0; i < 1000; i++) {
        assert_true(spoor_call_stack_call(&cs, 0, 0x1000 + 4 * i, 0, 0, 0));
        assert_true(spoor_call_stack_return(&cs, 0, 0));
    }
    for (int pass = 0; pass < 2; pass++) {
        for (int k = 0; k < 2; k++) {
            assert_true(spoor_call_stack_call(&cs, 0, 0x1000 + 4 * 7, 0, 0, 0));
            assert_true(spoor_call_stack_return(&cs, 0, 0));
        }
        size_t n;
        const spoor_call_fn_stats *s = spoor_call_stack_stats(&cs, &n);
        assert_int_equal(n, 1000);
        assert_int_equal(s[0].fn, 0x1000 + 4 * 7);
        assert_int_equal(s[0].calls, 3 + 2 * pass);
        for (uint32_t i = 1; i < 1000; i++) {
            assert_int_equal(s[i].fn, 0x1000 + 4 * (i <= 7 ? i - 1 : i));
            assert_int_equal(s[i].calls, 1);
        }
    }
    spoor_call_stack_free(&cs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nested_calls),
        cmocka_unit_test(test_tail_calls_and_returns),
        cmocka_unit_test(test_exception_in_call),
        cmocka_unit_test(test_unmatched_returns),
        cmocka_unit_test(test_deeper_than_limit_counts),
        cmocka_unit_test(test_deeper_than_limit_forgets),
        cmocka_unit_test(test_two_contexts_interleaved),
        cmocka_unit_test(test_deep_stack_grows),
        cmocka_unit_test(test_many_functions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
