/* The thread lists of the RTOS layer (spoor/rtos.h): every thread the RTOS knows, from its
 * ready, delayed, blocked and suspended lists or its thread list, and what could not be walked. */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/byteorder.h"
#include "elf/elf_sections.h"
#include "rtos/rtos_internal.h"

#define MAX_WALK 1024   /* items per list: a longer list is cut here, and said */
#define MAX_FOUND 8192  /* threads counted in all (found beyond max are counted, not kept) */
#define SET_SLOTS 16384 /* a power of two, more than MAX_FOUND and MAX_WALK */

/* An open-addressing set of nonzero 32-bit addresses. */
struct set {
    uint32_t slot[SET_SLOTS];
};

/* true when v was not in the set (and is now) */
static bool set_insert(struct set *s, uint32_t v)
{
    for (uint32_t h = (v * 2654435761u) & (SET_SLOTS - 1);; h = (h + 1) & (SET_SLOTS - 1)) {
        if (s->slot[h] == v)
            return false;
        if (!s->slot[h]) {
            s->slot[h] = v;
            return true;
        }
    }
}

struct collect {
    spoor_rtos_thread_ref *out;
    size_t n, max, found;
    uint32_t current;    /* the current-thread pointer's TCB, 0 when none or not read */
    bool current_listed; /* found on one of the lists */
    struct set tcbs;     /* every TCB found */
    struct set items;    /* the items of the list being walked (a loop) */
    spoor_rtos_walk *walk;
};

static void add(struct collect *c, uint32_t tcb, spoor_thread_state state, const char *list)
{
    if (tcb && tcb == c->current && list)
        c->current_listed = true;
    if (!tcb || c->found >= MAX_FOUND || !set_insert(&c->tcbs, tcb))
        return;
    c->found++;
    if (c->n < c->max)
        c->out[c->n++] = (spoor_rtos_thread_ref){tcb, state, list};
}

/* A list that ended early: counted, and the first reason kept. */
__attribute__((format(printf, 3, 4))) static void cut(struct collect *c, const char *list,
                                                      const char *fmt, ...)
{
    spoor_rtos_walk *w = c->walk;
    if (w->lists_cut++)
        return;
    int k = snprintf(w->why, sizeof w->why, "%s: ", list);
    if (k > 0 && (size_t)k < sizeof w->why) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(w->why + k, sizeof w->why - (size_t)k, fmt, ap);
        va_end(ap);
    }
}

static const char *indexed(const char *head, uint32_t k, bool array, char *buf, size_t size)
{
    if (!array)
        return head;
    snprintf(buf, size, "%s[%u]", head, k);
    return buf;
}

static void walk_array(const spoor_rtos *r, const rtos_list *l, spoor_read_fn read, void *ctx,
                       struct collect *c)
{
    uint32_t addr;
    rtos_field f;
    if (!spoor_rtos_eval(r->elf, l->head, &addr, &f) || !f.is_array)
        return;
    for (uint32_t off = 0; off + 4 <= f.size; off += 4) {
        uint32_t tcb;
        if (off / 4 >= MAX_WALK) {
            cut(c, l->head, "more than %u entries, the rest not read", MAX_WALK);
            return;
        }
        if (!spoor_rtos_read32(read, ctx, addr + off, &tcb)) {
            cut(c, l->head, "memory at 0x%08x not available", addr + off);
            continue;
        }
        add(c, tcb, l->state, l->head);
    }
}

static void walk_linked(const spoor_rtos *r, const rtos_list *l, spoor_read_fn read, void *ctx,
                        struct collect *c)
{
    uint32_t addr, first;
    rtos_field f, next;
    Dwarf_Die tcb_type = r->tcb_type;
    if (!spoor_rtos_eval(r->elf, l->head, &addr, &f) || !f.is_pointer ||
        !spoor_rtos_dwarf_field(&tcb_type, l->next, &next))
        return;
    if (!spoor_rtos_read32(read, ctx, addr, &first)) {
        cut(c, l->head, "memory at 0x%08x not available", addr);
        return;
    }
    memset(&c->items, 0, sizeof c->items);
    uint32_t tcb = first;
    for (unsigned i = 0; tcb; i++) {
        if (i == MAX_WALK) {
            cut(c, l->head, "more than %u threads, the rest not read", MAX_WALK);
            return;
        }
        if (!set_insert(&c->items, tcb)) {
            cut(c, l->head, "the list loops (TCB 0x%08x comes again)", tcb);
            return;
        }
        add(c, tcb, l->state, l->head);
        uint32_t at = tcb + next.offset;
        if (!spoor_rtos_read32(read, ctx, at, &tcb)) {
            cut(c, l->head, "memory at 0x%08x not available", at);
            return;
        }
        if (tcb == first && l->circular) /* back at the start: ThreadX's created list */
            return;
    }
}

/* FreeRTOS list.h: List_t { uxNumberOfItems; pxIndex; MiniListItem_t xListEnd }, items
 * ListItem_t { xItemValue; pxNext; pxPrevious; pvOwner; pxContainer }. */
static void walk_freertos(const spoor_rtos *r, const rtos_list *l, spoor_read_fn read, void *ctx,
                          struct collect *c)
{
    Dwarf *dw = spoor_elf_libdw(r->elf);
    Dwarf_Die list, item;
    rtos_field end, end_next, item_next, owner, head;
    uint32_t addr;
    if (!spoor_rtos_eval(r->elf, l->head, &addr, &head) ||
        (!spoor_rtos_dwarf_type(dw, "List_t", &list) &&
         !spoor_rtos_dwarf_type(dw, "xLIST", &list)) ||
        (!spoor_rtos_dwarf_type(dw, "ListItem_t", &item) &&
         !spoor_rtos_dwarf_type(dw, "xLIST_ITEM", &item)) ||
        !spoor_rtos_dwarf_field(&list, "xListEnd", &end) ||
        !spoor_rtos_dwarf_field(&list, "xListEnd.pxNext", &end_next) ||
        !spoor_rtos_dwarf_field(&item, "pxNext", &item_next) ||
        !spoor_rtos_dwarf_field(&item, "pvOwner", &owner))
        return;
    uint32_t list_size = spoor_rtos_dwarf_size(&list);
    uint32_t count = head.is_array && list_size ? head.size / list_size : 1;
    if (count > MAX_WALK)
        count = MAX_WALK;
    for (uint32_t k = 0; k < count; k++) {
        char name[96];
        const char *what = indexed(l->head, k, head.is_array, name, sizeof name);
        uint32_t base = addr + k * list_size, sentinel = base + end.offset, it;
        if (!spoor_rtos_read32(read, ctx, base + end_next.offset, &it)) {
            cut(c, what, "memory at 0x%08x not available", base + end_next.offset);
            continue;
        }
        memset(&c->items, 0, sizeof c->items);
        for (unsigned i = 0; it != sentinel; i++) {
            uint32_t tcb;
            if (!it) {
                cut(c, what, "a null link after %u items", i);
                break;
            }
            if (i == MAX_WALK) {
                cut(c, what, "more than %u items, the rest not read", MAX_WALK);
                break;
            }
            if (!set_insert(&c->items, it)) {
                cut(c, what, "the list loops (item 0x%08x comes again)", it);
                break;
            }
            if (!spoor_rtos_read32(read, ctx, it + owner.offset, &tcb)) {
                cut(c, what, "memory at 0x%08x not available", it + owner.offset);
                break;
            }
            add(c, tcb, l->state, l->head);
            if (!spoor_rtos_read32(read, ctx, it + item_next.offset, &it)) {
                cut(c, what, "memory at 0x%08x not available", it + item_next.offset);
                break;
            }
        }
    }
}

size_t spoor_rtos_threads(const spoor_rtos *r, spoor_read_fn read, void *ctx,
                          spoor_rtos_thread_ref *out, size_t max, spoor_rtos_walk *walk)
{
    spoor_rtos_walk ignored;
    struct collect *c = calloc(1, sizeof *c);
    if (!walk)
        walk = &ignored;
    memset(walk, 0, sizeof *walk);
    if (!c) {
        snprintf(walk->why, sizeof walk->why, "out of memory");
        walk->lists_cut = 1;
        return 0;
    }
    *c = (struct collect){.out = out, .max = max, .walk = walk};
    uint32_t current;
    if (spoor_rtos_read_current(r, read, ctx, &current)) {
        add(c, current, SPOOR_THREAD_RUNNING, NULL);
        c->current = current;
    } else
        cut(c, r->current_name, "memory at 0x%08x not available", r->current_addr);
    for (const rtos_list *l = r->d->lists;
         l < r->d->lists + RTOS_MAX_LISTS && l->kind != RTOS_LIST_END; l++) {
        switch (l->kind) {
        case RTOS_LIST_END: break;
        case RTOS_LIST_ARRAY: walk_array(r, l, read, ctx, c); break;
        case RTOS_LIST_LINKED: walk_linked(r, l, read, ctx, c); break;
        case RTOS_LIST_FREERTOS: walk_freertos(r, l, read, ctx, c); break;
        }
    }
    /* a running thread stays on the lists: a current TCB on none of them is none of the
     * kernel's threads (Zephyr's start-up dummy thread, a deleted TCB), unless a list was cut */
    if (c->current && !c->current_listed && r->d->current_on_lists && !walk->lists_cut && c->n &&
        c->out[0].tcb == c->current)
        c->out[0].state = SPOOR_THREAD_UNLISTED;
    if (c->found >= MAX_FOUND)
        cut(c, "all lists", "more than %u threads, the rest not counted", MAX_FOUND);
    walk->not_shown = c->found - c->n;
    size_t n = c->n;
    free(c);
    return n;
}

bool spoor_rtos_state_needs_lists(const spoor_rtos *r)
{
    return !r->d->state_member || r->d->current_on_lists;
}

bool spoor_rtos_find(const spoor_rtos *r, const spoor_rtos_thread_ref *refs, size_t n,
                     const spoor_rtos_walk *walk, uint32_t tcb, spoor_rtos_thread_ref *ref)
{
    spoor_rtos_thread_ref found = {tcb, SPOOR_THREAD_READY, NULL};
    bool known = false;
    for (size_t i = 0; i < n && !known; i++)
        if (refs[i].tcb == tcb) {
            found = refs[i];
            known = true;
        }
    if (!known && tcb && r->d->current_on_lists && !walk->lists_cut && !walk->not_shown)
        found.state = SPOOR_THREAD_UNLISTED;
    if (ref)
        *ref = found;
    return found.state != SPOOR_THREAD_UNLISTED;
}

bool spoor_rtos_listed(const spoor_rtos *r, spoor_read_fn read, void *ctx, uint32_t tcb,
                       spoor_rtos_thread_ref *ref)
{
    enum { MAX_REFS = 512 };
    if (!spoor_rtos_state_needs_lists(r)) { /* no walk: a live target's reads are the cost */
        if (ref)
            *ref = (spoor_rtos_thread_ref){tcb, SPOOR_THREAD_READY, NULL};
        return true;
    }
    spoor_rtos_thread_ref *refs = malloc(MAX_REFS * sizeof *refs);
    spoor_rtos_walk walk = {0};
    size_t n = refs ? spoor_rtos_threads(r, read, ctx, refs, MAX_REFS, &walk) : 0;
    if (!refs) /* cannot be told */
        walk.lists_cut = 1;
    bool listed = spoor_rtos_find(r, refs, n, &walk, tcb, ref);
    free(refs);
    return listed;
}
