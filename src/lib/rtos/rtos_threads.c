/* The thread lists of the RTOS layer (spoor/rtos.h): every thread the RTOS knows, from its
 * ready, delayed, blocked and suspended lists or its thread list. */

#include "base/byteorder.h"
#include "elf/elf_sections.h"
#include "rtos/rtos_internal.h"

#define MAX_WALK 1024 /* items per list: a corrupt list ends here */

struct collect {
    spoor_rtos_thread_ref *out;
    size_t n, max;
};

static bool read32(spoor_read_fn read, void *ctx, uint32_t addr, uint32_t *v)
{
    uint8_t b[4];
    if (!read(ctx, addr, b, 4))
        return false;
    *v = spoor_le32(b);
    return true;
}

static void add(struct collect *c, uint32_t tcb, const char *state)
{
    if (!tcb)
        return;
    for (size_t i = 0; i < c->n; i++)
        if (c->out[i].tcb == tcb)
            return;
    if (c->n < c->max)
        c->out[c->n++] = (spoor_rtos_thread_ref){tcb, state};
}

static void walk_array(const spoor_rtos *r, const rtos_list *l, spoor_read_fn read, void *ctx,
                       struct collect *c)
{
    uint32_t addr;
    rtos_field f;
    if (!spoor_rtos_eval(r->elf, l->head, &addr, &f) || !f.is_array)
        return;
    for (uint32_t off = 0; off + 4 <= f.size && off / 4 < MAX_WALK; off += 4) {
        uint32_t tcb;
        if (read32(read, ctx, addr + off, &tcb))
            add(c, tcb, l->state);
    }
}

static void walk_linked(const spoor_rtos *r, const rtos_list *l, spoor_read_fn read, void *ctx,
                        struct collect *c)
{
    uint32_t addr, first;
    rtos_field f, next;
    Dwarf_Die tcb_type = r->tcb_type;
    if (!spoor_rtos_eval(r->elf, l->head, &addr, &f) || !f.is_pointer ||
        !spoor_rtos_dwarf_field(&tcb_type, l->next, &next) || !read32(read, ctx, addr, &first))
        return;
    uint32_t tcb = first;
    for (unsigned i = 0; tcb && i < MAX_WALK; i++) {
        add(c, tcb, l->state);
        if (!read32(read, ctx, tcb + next.offset, &tcb) || tcb == first)
            break;
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
    for (uint32_t k = 0; k < count && k < MAX_WALK; k++) {
        uint32_t base = addr + k * list_size, sentinel = base + end.offset, it;
        if (!read32(read, ctx, base + end_next.offset, &it))
            continue;
        for (unsigned i = 0; it != sentinel && it && i < MAX_WALK; i++) {
            uint32_t tcb;
            if (!read32(read, ctx, it + owner.offset, &tcb))
                break;
            add(c, tcb, l->state);
            if (!read32(read, ctx, it + item_next.offset, &it))
                break;
        }
    }
}

size_t spoor_rtos_threads(const spoor_rtos *r, spoor_read_fn read, void *ctx,
                          spoor_rtos_thread_ref *out, size_t max)
{
    struct collect c = {out, 0, max};
    uint32_t current;
    if (spoor_rtos_read_current(r, read, ctx, &current))
        add(&c, current, "running");
    for (const rtos_list *l = r->d->lists; l < r->d->lists + RTOS_MAX_LISTS; l++) {
        switch (l->kind) {
        case RTOS_LIST_END: return c.n;
        case RTOS_LIST_ARRAY: walk_array(r, l, read, ctx, &c); break;
        case RTOS_LIST_LINKED: walk_linked(r, l, read, ctx, &c); break;
        case RTOS_LIST_FREERTOS: walk_freertos(r, l, read, ctx, &c); break;
        }
    }
    return c.n;
}
