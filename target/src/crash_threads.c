/*
 * The thread walk of a thread-aware dump (spoor/crash_threads.h): the TCBs an RTOS's lists
 * hold, read through the capture's memory reader, every word checked against the configured
 * RAM before it is read. Bounded by SPOOR_THREADS_MAX threads and as many steps per list; no
 * allocation (the TCB addresses live in a static table: the fault path has a small stack).
 * Portable: host unit tests run it over fake memory.
 */
#include <string.h>

#include "spoor/crash_threads.h"
#include "spoor/no_instrument.h"

typedef struct walk {
    const spoor_threads_layout *l;
    const spoor_memory *m;
    uint32_t tcbs[SPOOR_THREADS_MAX];
    uint32_t count;
} walk;

SPOOR_NO_INSTRUMENT static bool read_word(const spoor_memory *m, uint32_t addr, uint32_t *v)
{
    uint8_t b[4];
    if ((addr & 3u) != 0 || !spoor_range_contains(m->ram, m->ram_count, addr, 4) ||
        !m->read(m->ctx, addr, b, 4))
        return false;
    *v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return true;
}

/* Adds a TCB (once); false when the walk must stop (the table is full). */
SPOOR_NO_INSTRUMENT static bool add_tcb(walk *w, uint32_t tcb)
{
    if (tcb == 0 || (tcb & 3u) != 0 ||
        !spoor_range_contains(w->m->ram, w->m->ram_count, tcb, w->l->tcb_size))
        return true;
    for (uint32_t i = 0; i < w->count; i++)
        if (w->tcbs[i] == tcb)
            return true;
    if (w->count == SPOOR_THREADS_MAX)
        return false;
    w->tcbs[w->count++] = tcb;
    return true;
}

SPOOR_NO_INSTRUMENT static void walk_pointer(walk *w, const spoor_thread_list *list)
{
    uint32_t first, tcb;
    if (!read_word(w->m, list->head, &first))
        return;
    tcb = first;
    for (uint32_t step = 0; tcb != 0 && step < SPOOR_THREADS_MAX; step++) {
        if (!add_tcb(w, tcb) || list->next == SPOOR_THREAD_NO_NEXT ||
            !read_word(w->m, tcb + list->next, &tcb) || tcb == first)
            return;
    }
}

SPOOR_NO_INSTRUMENT static void walk_freertos(walk *w, const spoor_thread_list *list)
{
    const spoor_threads_layout *l = w->l;
    uint32_t count = list->count ? list->count : 1u;
    for (uint32_t k = 0; k < count && k < 256u; k++) {
        uint32_t base = list->head + k * l->list_size, end = base + l->list_end, item, tcb;
        if (!read_word(w->m, base + l->list_first, &item))
            continue;
        for (uint32_t step = 0; item != end && step < SPOOR_THREADS_MAX; step++) {
            if (!read_word(w->m, item + l->item_owner, &tcb) || !add_tcb(w, tcb) ||
                !read_word(w->m, item + l->item_next, &item))
                break;
        }
    }
}

/* The top of tcb's stack (one past its last byte), 0 when the TCB does not say. */
SPOOR_NO_INSTRUMENT static uint32_t stack_top(const walk *w, uint32_t tcb)
{
    const spoor_threads_layout *l = w->l;
    uint32_t v, low;
    if (l->stack_top_kind == SPOOR_STACK_TOP_NONE ||
        !read_word(w->m, tcb + l->stack_top_offset, &v))
        return 0;
    switch (l->stack_top_kind) {
    case SPOOR_STACK_TOP_LAST_WORD: return v + 4u;
    case SPOOR_STACK_TOP_LAST_BYTE: return v + 1u;
    case SPOOR_STACK_TOP_SIZE:
        return read_word(w->m, tcb + l->stack_low_offset, &low) ? low + v : 0u;
    default: return 0;
    }
}

/* [sp, top) or the window, clipped to the RAM range holding sp; 0 when sp is not in RAM. */
SPOOR_NO_INSTRUMENT static uint32_t stack_length(const walk *w, uint32_t sp, uint32_t top)
{
    uint32_t want = w->l->stack_window ? w->l->stack_window : SPOOR_THREADS_DEFAULT_WINDOW;
    if (top > sp && top - sp < want)
        want = top - sp;
    return spoor_range_room(w->m->ram, w->m->ram_count, sp, want);
}

SPOOR_NO_INSTRUMENT uint32_t spoor_threads_regions(const spoor_threads_layout *l,
                                                   const spoor_memory *m, spoor_region_fn emit,
                                                   void *ctx)
{
    static walk w; /* static: the fault handler's stack is small */
    if (!l || !m || !emit || l->tcb_size == 0)
        return 0;
    w.l = l;
    w.m = m;
    w.count = 0;
    for (uint32_t i = 0; i < l->global_count && i < SPOOR_THREADS_MAX_GLOBALS; i++)
        if (l->globals[i].end > l->globals[i].start)
            emit(ctx, l->globals[i].start, l->globals[i].end - l->globals[i].start,
                 SPOOR_REGION_RTOS);
    uint32_t current = 0;
    if (l->current && read_word(m, l->current, &current))
        add_tcb(&w, current);
    for (uint32_t i = 0; i < l->list_count && i < SPOOR_THREADS_MAX_LISTS; i++) {
        if (l->lists[i].kind == SPOOR_THREAD_LIST_POINTER)
            walk_pointer(&w, &l->lists[i]);
        else if (l->lists[i].kind == SPOOR_THREAD_LIST_FREERTOS)
            walk_freertos(&w, &l->lists[i]);
    }
    for (uint32_t i = 0; i < w.count; i++)
        emit(ctx, w.tcbs[i], l->tcb_size, SPOOR_REGION_RTOS);
    for (uint32_t i = 0; i < w.count; i++) {
        uint32_t tcb = w.tcbs[i], sp, len;
        if (tcb == current || !read_word(m, tcb + l->sp_offset, &sp))
            continue;
        len = stack_length(&w, sp, stack_top(&w, tcb));
        if (len)
            emit(ctx, sp, len, SPOOR_REGION_THREAD_STACK);
    }
    return w.count;
}

static spoor_threads_layout layout; /* the one spoor_crash_add_threads() was given */

SPOOR_NO_INSTRUMENT static void extra_regions(const spoor_memory *m, spoor_region_fn emit,
                                              void *ctx)
{
    spoor_threads_regions(&layout, m, emit, ctx);
}

SPOOR_NO_INSTRUMENT bool spoor_crash_add_threads(const spoor_threads_layout *l)
{
    if (!l || l->list_count == 0 || l->list_count > SPOOR_THREADS_MAX_LISTS ||
        l->global_count > SPOOR_THREADS_MAX_GLOBALS || l->tcb_size == 0 || l->tcb_size > 0x10000u)
        return false;
    layout = *l;
    spoor_dump_set_extra(extra_regions);
    return true;
}
