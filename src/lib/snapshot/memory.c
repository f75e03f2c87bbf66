/* The target memory view: a stack of layers, first match wins byte by byte. Static layers
 * (dump regions, images, ELF sections) are sorted, non-overlapping ranges; a live layer
 * (memory_gdb.c) may hold any address. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/set_error.h"
#include "spoor/dump.h"
#include "spoor/elf.h"
#include "spoor/memory.h"

#include "base/byteorder.h"
#include "base/partition_point.h"
#include "snapshot/dump_internal.h"
#include "snapshot/memory_internal.h"

typedef struct mem_range {
    uint32_t addr;
    uint32_t len;
    const uint8_t *bytes;
} mem_range;

typedef struct mem_layer {
    mem_range *ranges; /* static layer: sorted by addr, not overlapping; NULL for a live one */
    size_t nranges;
    uint8_t *owned; /* bytes this layer copied */
    void *mapped;   /* an image file mapped (munmap at the end) */
    size_t mapped_len;
    char *name;    /* a static layer's origin, for messages ("the dump", a file name) */
    bool captured; /* the target's state as captured: a dump's regions, an image, bytes */
    const mem_live_ops *live;
    void *impl;
} mem_layer;

struct spoor_mem {
    mem_layer *layers;
    size_t nlayers;
    uint64_t reads, writes;
};

spoor_mem *spoor_mem_new(void)
{
    spoor_mem *m = calloc(1, sizeof *m);
    if (!m)
        spoor_set_error(SPOOR_ERR_NOMEM, "memory view: out of memory");
    return m;
}

void spoor_mem_free(spoor_mem *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nlayers; i++) {
        free(m->layers[i].ranges);
        free(m->layers[i].owned);
        if (m->layers[i].mapped)
            munmap(m->layers[i].mapped, m->layers[i].mapped_len);
        free(m->layers[i].name);
        if (m->layers[i].live && m->layers[i].live->free)
            m->layers[i].live->free(m->layers[i].impl);
    }
    free(m->layers);
    free(m);
}

static mem_layer *push_layer(spoor_mem *m, const char *name)
{
    char *copy = NULL;
    if (name && !(copy = strdup(name))) {
        spoor_set_error(SPOOR_ERR_NOMEM, "memory view: out of memory");
        return NULL;
    }
    mem_layer *more = realloc(m->layers, (m->nlayers + 1) * sizeof *more);
    if (!more) {
        free(copy);
        spoor_set_error(SPOOR_ERR_NOMEM, "memory view: out of memory");
        return NULL;
    }
    m->layers = more;
    mem_layer *l = &m->layers[m->nlayers++];
    memset(l, 0, sizeof *l);
    l->name = copy;
    return l;
}

/* Takes back the layer push_layer just added (its setup failed). */
static void pop_layer(spoor_mem *m)
{
    m->nlayers--;
    free(m->layers[m->nlayers].name);
}

static int cmp_range(const void *a, const void *b)
{
    const mem_range *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Sorts a static layer's ranges and trims overlaps (an earlier range in the input wins is not
 * promised: the callers never pass overlapping ranges except ELF sections that alias). */
static void finish_static(mem_layer *l)
{
    if (l->nranges > 1)
        qsort(l->ranges, l->nranges, sizeof *l->ranges, cmp_range);
    size_t out = 0;
    for (size_t i = 0; i < l->nranges; i++) {
        mem_range r = l->ranges[i];
        if (out) {
            const mem_range *prev = &l->ranges[out - 1];
            uint64_t prev_end = (uint64_t)prev->addr + prev->len;
            if (r.addr < prev_end) {
                uint64_t end = (uint64_t)r.addr + r.len;
                if (end <= prev_end)
                    continue;
                uint32_t cut = (uint32_t)(prev_end - r.addr);
                r.addr += cut;
                r.bytes += cut;
                r.len -= cut;
            }
        }
        l->ranges[out++] = r;
    }
    l->nranges = out;
}

bool spoor_mem_add_dump(spoor_mem *m, const spoor_dump *dump)
{
    mem_layer *l = push_layer(m, "the dump");
    if (!l)
        return false;
    l->captured = true;
    if (dump->region_count && !(l->ranges = calloc(dump->region_count, sizeof *l->ranges))) {
        pop_layer(m);
        spoor_set_error(SPOOR_ERR_NOMEM, "memory view: out of memory");
        return false;
    }
    for (size_t i = 0; i < dump->region_count; i++)
        if (dump->regions[i].length)
            l->ranges[l->nranges++] = (mem_range){dump->regions[i].address, dump->regions[i].length,
                                                  dump->regions[i].bytes};
    finish_static(l);
    return true;
}

/* false with the error set when len bytes at addr run past the 32-bit address space */
static bool fits(uint32_t addr, size_t len, const char *name)
{
    if ((uint64_t)addr + len <= 0x100000000ull)
        return true;
    spoor_set_error(SPOOR_ERR_ARGUMENT,
                    "%s: %zu bytes at 0x%08" PRIx32 " run past the 4 GiB address space", name, len,
                    addr);
    return false;
}

bool spoor_mem_add_bytes(spoor_mem *m, uint32_t addr, const void *bytes, size_t len,
                         const char *name)
{
    if (!fits(addr, len, name ? name : "memory"))
        return false;
    mem_layer *l = push_layer(m, name ? name : "a memory image");
    if (!l)
        return false;
    l->owned = malloc(len ? len : 1);
    l->ranges = malloc(sizeof *l->ranges);
    if (!l->owned || !l->ranges) {
        free(l->owned);
        free(l->ranges);
        pop_layer(m);
        spoor_set_error(SPOOR_ERR_NOMEM, "memory view: out of memory");
        return false;
    }
    l->captured = true;
    if (len)
        memcpy(l->owned, bytes, len);
    l->ranges[0] = (mem_range){addr, (uint32_t)len, l->owned};
    l->nranges = len ? 1 : 0;
    return true;
}

/* The image is mapped, not read: a 256 MiB image costs only the pages that are read (a copy
 * would cost twice its size while loading). */
bool spoor_mem_add_file(spoor_mem *m, uint32_t addr, const char *path)
{
    size_t size;
    int fd = spoor_dump_open_file(path, &size);
    if (fd < 0)
        return false;
    if (!fits(addr, size, path)) {
        close(fd);
        return false;
    }
    void *map = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    close(fd);
    if (map == MAP_FAILED) {
        spoor_set_error(SPOOR_ERR_IO, "%s: cannot map: %s", path, strerror(errno));
        return false;
    }
    mem_layer *l = push_layer(m, path);
    if (l)
        l->ranges = malloc(sizeof *l->ranges);
    if (!l || !l->ranges) {
        if (l)
            pop_layer(m);
        if (map)
            munmap(map, size);
        spoor_set_error(SPOOR_ERR_NOMEM, "memory view: out of memory");
        return false;
    }
    l->captured = true;
    l->mapped = map;
    l->mapped_len = size;
    l->ranges[0] = (mem_range){addr, (uint32_t)size, map};
    l->nranges = size ? 1 : 0;
    return true;
}

/* The ELF's read-only contents: its read-only loadable sections, and the read-only PT_LOAD
 * segments that hold them, so that the padding between two sections of flash (what a call at
 * the very end of .text returns to) reads as the device would read it. */
bool spoor_mem_add_elf(spoor_mem *m, const spoor_elf *elf)
{
    size_t nsec = spoor_elf_ranges(elf, NULL, 0), nseg = spoor_elf_load_segments(elf, NULL, 0);
    size_t n = nsec + nseg;
    spoor_elf_range *r = calloc(n ? n : 1, sizeof *r);
    mem_layer *l = r ? push_layer(m, "the ELF") : NULL;
    if (l && n && !(l->ranges = calloc(n, sizeof *l->ranges))) {
        pop_layer(m);
        l = NULL;
    }
    if (!l) {
        free(r);
        spoor_set_error(SPOOR_ERR_NOMEM, "memory view: out of memory");
        return false;
    }
    spoor_elf_ranges(elf, r, nsec);
    spoor_elf_load_segments(elf, r + nsec, nseg);
    for (size_t i = 0; i < n; i++)
        if (!r[i].writable && (uint64_t)r[i].addr + r[i].size <= 0x100000000ull)
            l->ranges[l->nranges++] = (mem_range){r[i].addr, r[i].size, r[i].data};
    free(r);
    finish_static(l);
    return true;
}

size_t spoor_mem_captured_ranges(const spoor_mem *m, spoor_mem_range *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < m->nlayers; i++)
        for (size_t j = 0; m->layers[i].captured && j < m->layers[i].nranges; j++, n++)
            if (n < max)
                out[n] = (spoor_mem_range){m->layers[i].ranges[j].addr, m->layers[i].ranges[j].len};
    return n;
}

bool spoor_mem_add_live(spoor_mem *m, const mem_live_ops *ops, void *impl)
{
    mem_layer *l = push_layer(m, NULL);
    if (!l) {
        if (ops->free)
            ops->free(impl);
        return false;
    }
    l->live = ops;
    l->impl = impl;
    return true;
}

typedef struct range_search {
    const mem_range *ranges; /* sorted and disjoint */
    uint32_t addr;
} range_search;

static bool ends_at_or_below(const void *ctx, size_t i)
{
    const range_search *s = ctx;
    return (uint64_t)s->ranges[i].addr + s->ranges[i].len <= s->addr;
}

/* The range of static layer l holding addr, or the first one above it (NULL: none). */
static const mem_range *range_at_or_after(const mem_layer *l, uint32_t addr)
{
    const range_search search = {l->ranges, addr};
    size_t first = spoor_partition_point(0, l->nranges, ends_at_or_below, &search);
    return first < l->nranges ? &l->ranges[first] : NULL;
}

/* How many bytes from pos (at most want) layer i supplies before a layer in front of it takes
 * over; 0 when layer i does not hold pos. */
static uint64_t layer_run(const spoor_mem *m, size_t i, uint64_t pos, uint64_t want)
{
    const mem_layer *l = &m->layers[i];
    uint64_t run = want;
    if (!l->live) {
        const mem_range *r = range_at_or_after(l, (uint32_t)pos);
        if (!r || r->addr > pos)
            return 0;
        uint64_t left = (uint64_t)r->addr + r->len - pos;
        if (left < run)
            run = left;
    }
    for (size_t j = 0; j < i; j++) { /* earlier layers hold nothing at pos: stop where they start */
        const mem_range *r = range_at_or_after(&m->layers[j], (uint32_t)pos);
        if (r && r->addr - pos < run)
            run = r->addr - pos;
    }
    return run;
}

bool spoor_mem_read(spoor_mem *m, uint32_t addr, void *buf, size_t len)
{
    uint8_t *out = buf;
    uint64_t pos = addr;
    const uint64_t end = (uint64_t)addr + len;
    m->reads++;
    if (end > 0x100000000ull)
        return false;
    while (pos < end) {
        size_t i = 0;
        uint64_t run = 0;
        for (; i < m->nlayers; i++)
            if ((run = layer_run(m, i, pos, end - pos)) != 0)
                break;
        if (i == m->nlayers)
            return false;
        const mem_layer *l = &m->layers[i];
        uint8_t *dst = out + (pos - addr);
        if (l->live) {
            if (!l->live->read(l->impl, (uint32_t)pos, dst, (size_t)run))
                return false;
        } else {
            const mem_range *r = range_at_or_after(l, (uint32_t)pos);
            memcpy(dst, r->bytes + (pos - r->addr), (size_t)run);
        }
        pos += run;
    }
    return true;
}

bool spoor_mem_read_u32(spoor_mem *m, uint32_t addr, uint32_t *value)
{
    uint8_t b[4];
    if (!spoor_mem_read(m, addr, b, sizeof b))
        return false;
    *value = spoor_le32(b);
    return true;
}

bool spoor_mem_reader(void *ctx, uint32_t addr, void *buf, size_t len)
{
    return spoor_mem_read(ctx, addr, buf, len);
}

bool spoor_mem_has_static(const spoor_mem *m, uint32_t addr, size_t len)
{
    uint64_t pos = addr;
    const uint64_t end = (uint64_t)addr + len;
    if (end > 0x100000000ull)
        return false;
    while (pos < end) {
        uint64_t best = 0;
        for (size_t i = 0; i < m->nlayers; i++) {
            const mem_layer *l = &m->layers[i];
            if (l->live)
                continue;
            const mem_range *r = range_at_or_after(l, (uint32_t)pos);
            if (r && r->addr <= pos && (uint64_t)r->addr + r->len - pos > best)
                best = (uint64_t)r->addr + r->len - pos;
        }
        if (!best)
            return false;
        pos += best;
    }
    return true;
}

bool spoor_mem_write(spoor_mem *m, uint32_t addr, const void *buf, size_t len)
{
    const uint64_t end = (uint64_t)addr + len;
    m->writes++;
    if (end > 0x100000000ull) {
        spoor_set_error(SPOOR_ERR_ARGUMENT,
                        "cannot write %zu bytes at 0x%08" PRIx32 ": past the 4 GiB address space",
                        len, addr);
        return false;
    }
    size_t live = 0;
    while (live < m->nlayers && !m->layers[live].live)
        live++;
    if (live == m->nlayers || !m->layers[live].live->write) {
        spoor_set_error(SPOOR_ERR_UNAVAILABLE,
                        "cannot write %zu bytes at 0x%08" PRIx32
                        ": no live target (dumps, images and the ELF are read-only)",
                        len, addr);
        return false;
    }
    for (size_t i = 0; i < live && len; i++) { /* a layer in front would hide the write */
        const mem_range *r = range_at_or_after(&m->layers[i], addr);
        if (r && r->addr < end) {
            uint32_t at = r->addr > addr ? r->addr : addr;
            spoor_set_error(SPOOR_ERR_UNAVAILABLE,
                            "cannot write %zu bytes at 0x%08" PRIx32 ": 0x%08" PRIx32
                            " is held by %s, not the live target",
                            len, addr, at, m->layers[i].name);
            return false;
        }
    }
    return !len || m->layers[live].live->write(m->layers[live].impl, addr, buf, len);
}

void spoor_mem_invalidate(spoor_mem *m)
{
    for (size_t i = 0; i < m->nlayers; i++)
        if (m->layers[i].live && m->layers[i].live->invalidate)
            m->layers[i].live->invalidate(m->layers[i].impl);
}

void spoor_mem_stats_get(const spoor_mem *m, spoor_mem_stats *out)
{
    memset(out, 0, sizeof *out);
    out->reads = m->reads;
    out->writes = m->writes;
    for (size_t i = 0; i < m->nlayers; i++)
        if (m->layers[i].live && m->layers[i].live->stats)
            m->layers[i].live->stats(m->layers[i].impl, out);
}
