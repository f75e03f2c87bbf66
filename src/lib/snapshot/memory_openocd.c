/* The memory view's OpenOCD layer, over either transport (telnet or Tcl RPC, spoor/openocd.h):
 * reads by 256-byte page, one read command (mdw, read_memory) per run of pages missed,
 * cached until spoor_mem_invalidate() (spoor top invalidates whenever it reads a new thread:
 * the target runs). Device and system addresses (0x40000000-0x5FFFFFFF, 0xA0000000 and up)
 * are read exactly as asked, never cached, and pages that cannot be read whole are read
 * exactly as asked (the end of RAM). The pages a read misses are fetched in one command. */
#include <stdlib.h>
#include <string.h>

#include "base/byteorder.h"
#include "base/set_error.h"
#include "snapshot/memory_internal.h"
#include "spoor/openocd.h"

#define PAGE 256u
#define SLOTS 64u
#define MAX_SPAN 4u /* pages: longer reads go straight to the server */

typedef struct openocd_layer {
    spoor_openocd *o;
    uint32_t page[SLOTS];
    bool valid[SLOTS];
    uint8_t data[SLOTS][PAGE];
    uint64_t hits, misses;
    uint64_t bytes; /* target bytes the read commands returned (--stats' bytes) */
} openocd_layer;

/* One read command (mdw, read_memory), its bytes counted. */
static bool read_counted(openocd_layer *l, uint32_t addr, void *buf, size_t len)
{
    if (!spoor_openocd_read(l->o, addr, buf, len))
        return false;
    l->bytes += len;
    return true;
}

static bool is_device(uint32_t addr, size_t len)
{
    uint64_t end = (uint64_t)addr + len;
    return (addr < 0x60000000u && end > 0x40000000u) || end > 0xA0000000u;
}

static const uint8_t *cached(openocd_layer *l, uint32_t page)
{
    unsigned slot = (page / PAGE) % SLOTS;
    return l->valid[slot] && l->page[slot] == page ? l->data[slot] : NULL;
}

/* Fetches the pages [first, last] in one read command and caches them; false when they cannot be
 * read whole. */
static bool fetch(openocd_layer *l, uint32_t first, uint32_t last)
{
    static uint8_t buf[(MAX_SPAN + 1) * PAGE];
    size_t n = (size_t)(last - first) + PAGE;
    l->misses += n / PAGE;
    if (!read_counted(l, first, buf, n))
        return false;
    for (size_t off = 0; off < n; off += PAGE) {
        uint32_t page = first + (uint32_t)off;
        unsigned slot = (page / PAGE) % SLOTS;
        memcpy(l->data[slot], buf + off, PAGE);
        l->page[slot] = page;
        l->valid[slot] = true;
    }
    return true;
}

static bool openocd_read(void *impl, uint32_t addr, void *buf, size_t len)
{
    openocd_layer *l = impl;
    uint64_t end = (uint64_t)addr + len;
    if (!len)
        return true;
    if (is_device(addr, len) || len > MAX_SPAN * PAGE || end > 0xFFFFFF00u)
        return read_counted(l, addr, buf, len);
    uint32_t first = addr & ~(PAGE - 1), last = (uint32_t)(end - 1) & ~(PAGE - 1);
    uint32_t miss_first = 0, miss_last = 0;
    bool missing = false;
    for (uint32_t page = first;; page += PAGE) {
        if (!cached(l, page)) {
            if (!missing)
                miss_first = page;
            miss_last = page;
            missing = true;
        } else {
            l->hits++;
        }
        if (page == last)
            break;
    }
    if (missing && !fetch(l, miss_first, miss_last)) /* the end of RAM: exactly as asked */
        return read_counted(l, addr, buf, len);
    uint8_t *out = buf;
    for (uint64_t pos = addr; pos < end;) {
        uint32_t page = (uint32_t)pos & ~(PAGE - 1);
        uint64_t n = (uint64_t)page + PAGE - pos;
        if (n > end - pos)
            n = end - pos;
        const uint8_t *p = cached(l, page);
        if (!p)
            return false;
        memcpy(out + (pos - addr), p + (pos - page), (size_t)n);
        pos += n;
    }
    return true;
}

/* Whole aligned words, one write command (mww, write_memory) each; the cached pages they touch are
 * dropped. */
static bool openocd_write(void *impl, uint32_t addr, const void *buf, size_t len)
{
    openocd_layer *l = impl;
    const uint8_t *b = buf;
    if ((addr & 3u) || (len & 3u)) {
        spoor_set_error(SPOOR_ERR_ARGUMENT, "openocd: writes are whole words (%zu bytes at 0x%08x)",
                        len, addr);
        return false;
    }
    for (size_t i = 0; i < len; i += 4) {
        uint32_t v = spoor_le32(b + i);
        if (!spoor_openocd_write(l->o, addr + (uint32_t)i, v, 0xFFFFFFFFu))
            return false;
    }
    memset(l->valid, 0, sizeof l->valid);
    return true;
}

static void openocd_invalidate(void *impl)
{
    openocd_layer *l = impl;
    memset(l->valid, 0, sizeof l->valid);
}

static void openocd_stats(void *impl, spoor_mem_stats *st)
{
    openocd_layer *l = impl;
    st->round_trips += spoor_openocd_round_trips(l->o);
    st->bytes_wire += l->bytes;
    st->cache_hits += l->hits;
    st->cache_misses += l->misses;
}

static void openocd_free(void *impl)
{
    free(impl); /* the connection is borrowed */
}

static const mem_live_ops openocd_ops = {openocd_read, openocd_write, openocd_invalidate,
                                         openocd_stats, openocd_free};

bool spoor_mem_add_openocd(spoor_mem *m, spoor_openocd *o)
{
    openocd_layer *l = calloc(1, sizeof *l);
    if (!l) {
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
        return false;
    }
    l->o = o;
    if (!spoor_mem_add_live(m, &openocd_ops, l)) {
        free(l);
        return false;
    }
    return true;
}
