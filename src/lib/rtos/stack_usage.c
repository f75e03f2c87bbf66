/* Stack usage of the main stack and of RTOS threads (spoor/stack_usage.h): bounds from the ELF
 * or the TCB, the fill pattern counted from the far end as each RTOS counts it. */
#include <stdio.h>
#include <string.h>

#include "base/byteorder.h"
#include "elf/elf_sections.h"
#include "rtos/rtos_internal.h"
#include "spoor/stack_usage.h"

#define MAX_STACK (16u << 20) /* larger stacks are taken for corrupt bounds */
#define CHUNK 256u
#define RTX5_MAGIC 0xE25A2EA5u
#define FREERTOS_GUARD 16u /* bytes configCHECK_FOR_STACK_OVERFLOW 2 checks at pxStack */

/* Bytes equal to fill from low up, up to limit. When memory gives out first (a chunk that
 * cannot be read is read again byte by byte, to the first byte the input does not hold), the
 * count is cut there: u->unreadable and u->unreadable_at say so. */
static uint32_t count_fill(spoor_read_fn read, void *ctx, uint32_t low, uint32_t limit,
                           uint8_t fill, spoor_stack_usage *u)
{
    uint8_t buf[CHUNK];
    uint32_t n = 0;
    while (low + n < limit) {
        uint32_t len = limit - (low + n) < CHUNK ? limit - (low + n) : CHUNK;
        if (!read(ctx, low + n, buf, len)) {
            for (uint32_t i = 0; i < len; i++, n++)
                if (!read(ctx, low + n, buf, 1)) {
                    u->unreadable = true;
                    u->unreadable_at = low + n;
                    return n;
                } else if (buf[0] != fill) {
                    return n;
                }
            continue;
        }
        for (uint32_t i = 0; i < len; i++, n++)
            if (buf[i] != fill)
                return n;
    }
    return n;
}

/* Whether a whole word of fill bytes lies anywhere in [low, limit): the stack was filled. */
static bool holds_fill_word(spoor_read_fn read, void *ctx, uint32_t low, uint32_t limit,
                            uint32_t word)
{
    uint8_t buf[CHUNK];
    for (uint32_t at = (low + 3u) & ~3u; at + 4u <= limit; at += CHUNK) {
        uint32_t len = limit - at < CHUNK ? (limit - at) & ~3u : CHUNK;
        if (!read(ctx, at, buf, len))
            return false;
        for (uint32_t i = 0; i + 4u <= len; i += 4)
            if (spoor_le32(buf + i) == word)
                return true;
    }
    return false;
}

static bool read_word(spoor_read_fn read, void *ctx, uint32_t addr, uint32_t *out)
{
    uint8_t b[4];
    if (!read(ctx, addr, b, 4))
        return false;
    *out = spoor_le32(b);
    return true;
}

/* The word at addr on the stack, or false with u->unreadable at its first byte not held. */
static bool read_stack_word(spoor_read_fn read, void *ctx, uint32_t addr, uint32_t *out,
                            spoor_stack_usage *u)
{
    if (read_word(read, ctx, addr, out))
        return true;
    uint8_t b;
    uint32_t at = addr;
    while (at < addr + 3u && read(ctx, at, &b, 1))
        at++;
    u->unreadable = true;
    u->unreadable_at = at;
    return false;
}

/* used, nearly_full and the SP check, once bounds, sp and the fill are known. */
static void finish(spoor_stack_usage *u)
{
    if (u->has_sp && u->sp < u->low)
        u->overflowed = true;
    if (u->has_high) {
        u->size = u->high - u->low;
        if (u->has_sp) {
            u->used = u->high > u->sp ? u->high - u->sp : 0;
            if (u->sp > u->high) /* not on this stack */
                u->has_sp = false, u->used = 0;
        }
        if (u->filled)
            u->peak = u->size > u->free_min ? u->size - u->free_min : 0;
        uint64_t free = u->filled                      ? u->free_min
                        : u->has_sp && u->sp >= u->low ? u->sp - u->low
                                                       : UINT64_MAX;
        if (free != UINT64_MAX && free * 10u < (uint64_t)u->size)
            u->nearly_full = true;
    } else {
        u->has_sp = u->has_sp && u->sp >= u->low;
        u->used = 0;
    }
    if (u->overflowed)
        u->nearly_full = true;
}

/* The limit of the fill search: what lies above the SP is in use. */
static uint32_t fill_limit(const spoor_stack_usage *u)
{
    uint32_t limit = u->has_high ? u->high : u->low;
    if (u->has_sp && u->sp >= u->low && (!u->has_high || u->sp < limit))
        limit = u->sp;
    if (!u->has_high && !u->has_sp)
        limit = u->low;
    return limit;
}

/* The fill count cut by memory the input does not hold (count_fill): free_min and peak are
 * unknown, and so is the overflow unless the guard was read intact (guard_ok). */
static void fill_unreadable(spoor_stack_usage *u, bool guard_ok)
{
    u->filled = false;
    u->overflowed = false;
    u->overflow_unknown = !guard_ok;
}

static void count_thread_fill(rtos_stack_fill kind, spoor_read_fn read, void *ctx, bool rtos_fills,
                              spoor_stack_usage *u)
{
    uint32_t limit = fill_limit(u);
    switch (kind) {
    case RTOS_FILL_FREERTOS:
    case RTOS_FILL_THREADX: {
        uint8_t byte = kind == RTOS_FILL_FREERTOS ? 0xA5 : 0xEF;
        uint32_t n = count_fill(read, ctx, u->low, limit, byte, u);
        uint32_t guard = kind == RTOS_FILL_FREERTOS ? FREERTOS_GUARD : 4u;
        if (u->unreadable) {
            fill_unreadable(u, n >= guard);
            break;
        }
        u->filled =
            rtos_fills || n >= 4 || holds_fill_word(read, ctx, u->low, limit, byte * 0x01010101u);
        u->free_min = n & ~3u;
        u->overflowed = u->filled && n < guard;
        break;
    }
    case RTOS_FILL_RTX5: {
        uint32_t magic = 0;
        if (!read_stack_word(read, ctx, u->low, &magic, u)) {
            fill_unreadable(u, false);
            break;
        }
        bool has_magic = magic == RTX5_MAGIC;
        uint32_t n = has_magic ? count_fill(read, ctx, u->low + 4u, limit, 0xCC, u) : 0;
        if (u->unreadable) {
            fill_unreadable(u, true);
            break;
        }
        u->filled =
            rtos_fills || has_magic || holds_fill_word(read, ctx, u->low, limit, 0xCCCCCCCCu);
        u->free_min = has_magic ? 4u + (n & ~3u) : 0;
        u->overflowed = u->filled && !has_magic;
        break;
    }
    case RTOS_FILL_ZEPHYR: {
        uint32_t n = count_fill(read, ctx, u->low, limit, 0xAA, u);
        if (u->unreadable) {
            fill_unreadable(u, n > 0);
            break;
        }
        u->filled = rtos_fills || n >= 4 || holds_fill_word(read, ctx, u->low, limit, 0xAAAAAAAAu);
        u->free_min = n;
        u->overflowed = u->filled && n == 0;
        break;
    }
    case RTOS_FILL_NONE: break;
    }
    if (!u->filled)
        u->free_min = 0;
}

/* FreeRTOS without pxEndOfStack: heap_2/4/5's BlockLink_t before pxStack (pxNextFreeBlock
 * NULL while allocated, xBlockSize the block's bytes with the header, the top bit set by heap_4
 * and heap_5 while allocated). */
static bool heap_block_top(spoor_read_fn read, void *ctx, uint32_t low, uint32_t *high)
{
    uint8_t b[8];
    if (low < 8 || !read(ctx, low - 8, b, 8) || spoor_le32(b) != 0)
        return false;
    uint32_t size = spoor_le32(b + 4) & 0x7FFFFFFFu;
    if (size <= 8 || size > MAX_STACK || (uint64_t)low - 8 + size > UINT32_MAX)
        return false;
    *high = low - 8 + size;
    return true;
}

static uint32_t field_u32(const rtos_field *f, const uint8_t *tcb)
{
    return f->size >= 4   ? spoor_le32(tcb + f->offset)
           : f->size == 2 ? spoor_le16(tcb + f->offset)
                          : tcb[f->offset];
}

bool spoor_stack_usage_thread(const spoor_rtos *r, spoor_read_fn read, void *ctx,
                              const spoor_rtos_thread *t, bool has_sp, uint32_t sp, bool rtos_fills,
                              spoor_stack_usage *u)
{
    memset(u, 0, sizeof *u);
    u->has_sp = has_sp;
    u->sp = sp;
    const rtos_desc *d = r->d;
    rtos_field low_f, top_f;
    Dwarf_Die tcb_type = r->tcb_type;
    memset(&top_f, 0, sizeof top_f);
    if (d->stack_fill == RTOS_FILL_NONE || !d->stack_low_member ||
        !spoor_rtos_dwarf_field(&tcb_type, d->stack_low_member, &low_f)) {
        snprintf(u->why, sizeof u->why, "%s's TCB records no stack%s%s", d->display,
                 d->stack_low_member ? " (no member " : "",
                 d->stack_low_member ? d->stack_low_member : "");
        if (d->stack_low_member)
            strncat(u->why, ")", sizeof u->why - strlen(u->why) - 1);
        return false;
    }
    tcb_type = r->tcb_type;
    bool has_top = spoor_rtos_dwarf_field(&tcb_type, d->stack_top_member, &top_f);
    uint8_t tcb[4096];
    if (r->tcb_size > sizeof tcb || !read(ctx, t->tcb, tcb, r->tcb_size)) {
        snprintf(u->why, sizeof u->why, "TCB 0x%08x: memory not available", t->tcb);
        return false;
    }
    u->low = field_u32(&low_f, tcb);
    if (!u->low) {
        snprintf(u->why, sizeof u->why, "%s is 0 (no stack recorded)", d->stack_low_member);
        return false;
    }
    u->found = true;
    static char from[SPOOR_RTOS_KIND_COUNT][96];
    if (has_top) {
        uint32_t v = field_u32(&top_f, tcb);
        uint64_t high = d->stack_top == RTOS_TOP_SIZE        ? (uint64_t)u->low + v
                        : d->stack_top == RTOS_TOP_LAST_WORD ? (uint64_t)v + 4u
                                                             : (uint64_t)v + 1u;
        if (high > u->low && high - u->low <= MAX_STACK && high <= UINT32_MAX) {
            u->high = (uint32_t)high;
            u->has_high = true;
            snprintf(from[d->kind], sizeof from[d->kind], "%s/%s", d->stack_low_member,
                     d->stack_top_member);
            u->from = from[d->kind];
        }
    }
    if (!u->has_high && d->kind == SPOOR_RTOS_FREERTOS &&
        heap_block_top(read, ctx, u->low, &u->high)) {
        u->has_high = true;
        u->from = "pxStack/heap block header";
    }
    if (!u->has_high)
        u->from = has_sp ? "pxStack/saved SP (the top is not recorded)"
                         : "pxStack (the top is not recorded)";
    count_thread_fill(d->stack_fill, read, ctx, rtos_fills, u);
    finish(u);
    return true;
}

#define MAX_THREADS 256

bool spoor_stack_usage_thread_filled(const spoor_rtos *r, spoor_read_fn read, void *ctx,
                                     const spoor_rtos_thread *t)
{
    spoor_stack_usage u;
    return spoor_stack_usage_thread(r, read, ctx, t, t->has_sp, t->sp, false, &u) && u.filled;
}

bool spoor_stack_usage_rtos_fills(const spoor_rtos *r, spoor_read_fn read, void *ctx)
{
    static spoor_rtos_thread_ref refs[MAX_THREADS];
    size_t n = spoor_rtos_threads(r, read, ctx, refs, MAX_THREADS, NULL);
    for (size_t i = 0; i < n; i++) {
        spoor_rtos_thread t;
        if (spoor_rtos_read_thread(r, read, ctx, refs[i].tcb, &t) &&
            spoor_stack_usage_thread_filled(r, read, ctx, &t))
            return true;
    }
    return false;
}

/* ---- the main stack ------------------------------------------------------------------------ */

static const char *const top_symbols[] = {"_estack", "__StackTop", "__stack_top",
                                          "__stack", "_stack_top", "__initial_sp"};
static const char *const low_symbols[] = {"__StackLimit", "__stack_bottom", "__stack_limit",
                                          "_sstack", "__stack_start__"};

static const char *first_symbol(const spoor_elf *elf, const char *const *names, size_t n,
                                uint32_t *addr)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t size;
        if (spoor_elf_symbol(elf, names[i], addr, &size))
            return names[i];
    }
    return NULL;
}

bool spoor_stack_usage_main(const spoor_elf *elf, spoor_read_fn read, void *ctx, bool has_sp,
                            uint32_t sp, spoor_stack_usage *u)
{
    memset(u, 0, sizeof *u);
    u->has_sp = has_sp;
    u->sp = sp;
    static char from[128];
    uint32_t addr, top, low;
    size_t size;
    const char *top_name = first_symbol(elf, top_symbols, 6, &top);
    const char *low_name = first_symbol(elf, low_symbols, 5, &low);
    rtos_field isr;
    uint32_t isr_addr;
    if (spoor_elf_libdw(elf) && spoor_rtos_eval(elf, "z_interrupt_stacks[0]", &isr_addr, &isr) &&
        isr.size && isr.size <= MAX_STACK) {
        /* Zephyr: CPU 0's interrupt stack, the MSP from reset on (kernel/init.c) */
        u->low = isr_addr;
        u->high = isr_addr + isr.size;
        u->from = "symbol z_interrupt_stacks";
    } else if (spoor_elf_section(elf, ".stack", &addr, NULL, &size) && size && size <= MAX_STACK) {
        u->low = addr;
        u->high = addr + (uint32_t)size;
        u->from = "section .stack";
    } else if (top_name && low_name && low < top && top - low <= MAX_STACK) {
        u->low = low;
        u->high = top;
        snprintf(from, sizeof from, "symbols %s/%s", low_name, top_name);
        u->from = from;
    } else if (top_name && spoor_elf_section(elf, ".heap", &addr, NULL, &size) &&
               addr + size <= top && top - (addr + size) <= MAX_STACK) {
        u->low = addr + (uint32_t)size;
        u->high = top;
        snprintf(from, sizeof from, "the end of .heap/symbol %s", top_name);
        u->from = from;
    } else {
        snprintf(u->why, sizeof u->why,
                 "none found in the ELF (no .stack section, no z_interrupt_stacks, _estack, "
                 "__StackTop, __stack_top, __stack with __StackLimit, __stack_bottom, ... or "
                 ".heap)");
        return false;
    }
    u->found = true;
    u->has_high = true;
    if (u->high > u->low) {
        static const uint32_t fills[] = {0xA5A5A5A5u, 0xCCCCCCCCu, 0xAAAAAAAAu, 0xEFEFEFEFu};
        uint32_t w = 0;
        if (read_stack_word(read, ctx, u->low, &w, u))
            for (size_t i = 0; i < 4; i++)
                if (w == fills[i]) {
                    u->filled = true;
                    u->free_min = count_fill(read, ctx, u->low, fill_limit(u), (uint8_t)w, u) & ~3u;
                }
        if (u->unreadable) /* no guard word on the main stack: its overflow is the SP's */
            u->filled = false, u->free_min = 0;
    }
    finish(u);
    return true;
}
