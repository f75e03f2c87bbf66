/* The live layer of the memory view: a halted target behind a GDB server (gdb_remote.c),
 * cached by page. A target let run (spoor_gdb_continue) is halted by the client for the first
 * miss of a batch; the caller drops the cache (spoor_mem_invalidate) when it lets it run again.
 *
 * Page size 256 bytes. What is read live is the stack (code and constants come from the ELF
 * first), and a walk reads it upward from SP in small steps: a call frame is 8-64 bytes, an
 * exception frame 32 or 104 (with FP state), so one page usually holds a frame and the one
 * above it, and a whole walk of a few hundred bytes of stack costs a round trip or two. Misses
 * of one read are batched (a run of missing pages is one range, split only where
 * spoor_gdb_max_read says), so a small page costs nothing on a long read, while a large one would
 * read more memory no one asked for and more often run into the end of a readable region. 256 bytes
 * is 512 hex digits, one packet at any PacketSize from 0x208 on (QEMU, OpenOCD, J-Link: 0x1000 or
 * more).
 *
 * A page the target cannot read (an 'E' reply) is remembered as such and never poisons its
 * neighbours: a batch that failed is retried page by page, and the bytes asked for in an
 * unreadable page are read exactly, uncached, so a read that ends at the end of RAM (in the
 * middle of a page) still works.
 *
 * A write ('M' packets) goes through to the target; the cached pages it touches take the new
 * bytes (a page known to be unreadable stays so: write-only memory exists), and a write the
 * target refused part of drops the whole cache, as the parts before the refusal were written.
 *
 * Peripheral and system addresses (0x40000000-0x5FFFFFFF, 0xA0000000 and up: Device and
 * System regions of the ARMv7-M/ARMv8-M default memory map) are read exactly as asked and
 * never cached: reading a device register can have side effects (a FIFO pops), and a page
 * around it must not be read behind the caller's back. */
#include <stdlib.h>
#include <string.h>

#include "base/set_error.h"
#include "spoor/gdb_remote.h"

#include "snapshot/memory_internal.h"

#define PAGE 256u
#define TABLE_SLOTS 8192u /* hash slots; at most half of them used */
#define MAX_PAGES (TABLE_SLOTS / 2)
#define CACHED_READ_MAX (64u * 1024u) /* larger reads go straight to the server */

enum { SLOT_EMPTY = -1, SLOT_UNREADABLE = -2 };

typedef struct slot {
    uint32_t page;
    int32_t index; /* into pool, or SLOT_EMPTY / SLOT_UNREADABLE */
} slot;

typedef struct mem_gdb {
    spoor_gdb *gdb;
    slot table[TABLE_SLOTS];
    size_t used;
    uint8_t (*pool)[PAGE];
    size_t pool_used, pool_cap;
    uint64_t hits, misses;
    spoor_gdb_stats base; /* the connection's counters when the layer was added */
    uint32_t missing[CACHED_READ_MAX / PAGE + 2];
    uint8_t buf[CACHED_READ_MAX + 2 * PAGE]; /* one fetched range */
} mem_gdb;

static bool is_device(uint32_t addr, size_t len)
{
    uint64_t end = (uint64_t)addr + len;
    return (addr < 0x60000000u && end > 0x40000000u) || end > 0xA0000000u;
}

static void clear(mem_gdb *m)
{
    for (size_t i = 0; i < TABLE_SLOTS; i++)
        m->table[i].index = SLOT_EMPTY;
    m->used = 0;
    m->pool_used = 0;
}

/* The slot of page (a page address), or the empty slot where it would go. */
static slot *find(mem_gdb *m, uint32_t page)
{
    size_t i = ((page / PAGE) * 2654435761u) % TABLE_SLOTS;
    while (m->table[i].index != SLOT_EMPTY && m->table[i].page != page)
        i = (i + 1) % TABLE_SLOTS;
    return &m->table[i];
}

/* Enters page with its bytes (NULL: unreadable). False when out of memory. */
static bool remember(mem_gdb *m, uint32_t page, const uint8_t *bytes)
{
    if (m->used >= MAX_PAGES)
        clear(m); /* a full cache starts over: a walk never needs 1 MiB of stack */
    slot *at = find(m, page);
    if (bytes && at->index < 0 && m->pool_used == m->pool_cap) {
        size_t cap = m->pool_cap ? 2 * m->pool_cap : 16;
        void *more = realloc(m->pool, cap * PAGE);
        if (!more) {
            spoor_set_error(SPOOR_ERR_NOMEM, "live memory cache: out of memory");
            return false;
        }
        m->pool = more;
        m->pool_cap = cap;
    }
    slot *s = at;
    if (s->index == SLOT_EMPTY)
        m->used++;
    s->page = page;
    if (bytes) {
        if (s->index < 0) /* a page read again (between two runs) keeps its place */
            s->index = (int32_t)m->pool_used++;
        memcpy(m->pool[s->index], bytes, PAGE);
    } else {
        s->index = SLOT_UNREADABLE;
    }
    return true;
}

/* No page in [from, to) is known to be unreadable. */
static bool gap_readable(mem_gdb *m, uint32_t from, uint32_t to)
{
    for (uint64_t p = from; p < to; p += PAGE)
        if (find(m, (uint32_t)p)->index == SLOT_UNREADABLE)
            return false;
    return true;
}

static uint64_t packets_for(uint64_t bytes, uint64_t max)
{
    return (bytes + max - 1) / max;
}

/* Fetches pages[0..n) (ascending, all missing) in the fewest 'm' packets: runs of adjacent
 * missing pages are read as one range (split into packets of spoor_gdb_max_read bytes), and
 * two runs are read as one when the cached pages between them cost fewer packets than a
 * second start (they are read again: bytes, not a round trip). A range the target refuses
 * is retried page by page, and the pages it still refuses are remembered as unreadable. */
static bool fetch(mem_gdb *m, const uint32_t *pages, size_t n)
{
    const uint64_t max = spoor_gdb_max_read(m->gdb);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        for (; j < n; j++) {
            uint64_t run = pages[j - 1] + PAGE - pages[i];
            uint64_t merged = pages[j] + PAGE - pages[i];
            if (pages[j] != pages[j - 1] + PAGE &&
                (packets_for(merged, max) > packets_for(run, max) + packets_for(PAGE, max) ||
                 !gap_readable(m, pages[j - 1] + PAGE, pages[j])))
                break;
        }
        size_t span = pages[j - 1] + PAGE - pages[i];
        if (spoor_gdb_read_memory(m->gdb, pages[i], m->buf, span)) {
            for (size_t k = i; k < j; k++)
                if (!remember(m, pages[k], m->buf + (pages[k] - pages[i])))
                    return false;
        } else if (spoor_last_status() != SPOOR_ERR_UNAVAILABLE) {
            return false; /* the connection, not the target */
        } else {
            for (size_t k = i; k < j; k++) {
                bool ok = j - i > 1 && spoor_gdb_read_memory(m->gdb, pages[k], m->buf, PAGE);
                if (!ok && spoor_last_status() != SPOOR_ERR_UNAVAILABLE)
                    return false;
                if (!remember(m, pages[k], ok ? m->buf : NULL))
                    return false;
            }
        }
        i = j;
    }
    return true;
}

static bool gdb_read(void *impl, uint32_t addr, void *buf, size_t len)
{
    mem_gdb *m = impl;
    if (!len)
        return true;
    if (is_device(addr, len) || len > CACHED_READ_MAX)
        return spoor_gdb_read_memory(m->gdb, addr, buf, len);
    const uint32_t first = addr & ~(PAGE - 1);
    const uint32_t last = (uint32_t)((uint64_t)addr + len - 1) & ~(PAGE - 1);
    /* Too many new pages for what is left of the cache: start over, so that no page is
     * dropped while this read still needs it. */
    if (m->used + (last - first) / PAGE + 1 > MAX_PAGES)
        clear(m);
    size_t nmissing = 0;
    for (uint64_t p = first; p <= last; p += PAGE) {
        if (find(m, (uint32_t)p)->index == SLOT_EMPTY) {
            m->missing[nmissing++] = (uint32_t)p;
            m->misses++;
        } else {
            m->hits++;
        }
    }
    if (nmissing && !fetch(m, m->missing, nmissing))
        return false;
    uint8_t *out = buf;
    for (uint64_t p = first; p <= last; p += PAGE) {
        uint64_t lo = p > addr ? p : addr, hi = (uint64_t)addr + len;
        if (hi > p + PAGE)
            hi = p + PAGE;
        const slot *s = find(m, (uint32_t)p);
        if (s->index >= 0)
            memcpy(out + (lo - addr), m->pool[s->index] + (lo - p), (size_t)(hi - lo));
        else if (!spoor_gdb_read_memory(m->gdb, (uint32_t)lo, out + (lo - addr), (size_t)(hi - lo)))
            return false;
    }
    return true;
}

static bool gdb_write(void *impl, uint32_t addr, const void *buf, size_t len)
{
    mem_gdb *m = impl;
    if (!spoor_gdb_write_memory(m->gdb, addr, buf, len)) {
        clear(m);
        return false;
    }
    if (is_device(addr, len))
        return true; /* never cached */
    const uint8_t *in = buf;
    const uint64_t end = (uint64_t)addr + len;
    for (uint64_t p = addr & ~(PAGE - 1); p < end; p += PAGE) {
        const slot *s = find(m, (uint32_t)p);
        if (s->index < 0)
            continue;
        uint64_t lo = p > addr ? p : addr, hi = end < p + PAGE ? end : p + PAGE;
        memcpy(m->pool[s->index] + (lo - p), in + (lo - addr), (size_t)(hi - lo));
    }
    return true;
}

static void gdb_invalidate(void *impl)
{
    clear(impl);
}

static void gdb_stats(void *impl, spoor_mem_stats *st)
{
    const mem_gdb *m = impl;
    spoor_gdb_stats now;
    spoor_gdb_stats_get(m->gdb, &now);
    st->round_trips += now.mem_packets - m->base.mem_packets;
    st->bytes_wire += now.mem_bytes - m->base.mem_bytes;
    st->write_packets += now.mem_write_packets - m->base.mem_write_packets;
    st->bytes_written += now.mem_write_bytes - m->base.mem_write_bytes;
    st->cache_hits += m->hits;
    st->cache_misses += m->misses;
}

static void gdb_free(void *impl)
{
    mem_gdb *m = impl;
    free(m->pool);
    free(m);
}

static const mem_live_ops gdb_ops = {gdb_read, gdb_write, gdb_invalidate, gdb_stats, gdb_free};

bool spoor_mem_add_gdb(spoor_mem *mem, spoor_gdb *gdb)
{
    mem_gdb *m = calloc(1, sizeof *m);
    if (!m) {
        spoor_set_error(SPOOR_ERR_NOMEM, "live memory cache: out of memory");
        return false;
    }
    m->gdb = gdb;
    clear(m);
    spoor_gdb_stats_get(gdb, &m->base);
    return spoor_mem_add_live(mem, &gdb_ops, m);
}
