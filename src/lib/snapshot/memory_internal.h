/* The memory view's plumbing shared by memory.c (the layer stack and static layers) and the
 * live backends (memory_gdb.c). Internal. */
#ifndef SPOOR_MEMORY_INTERNAL_H
#define SPOOR_MEMORY_INTERNAL_H

#include "spoor/memory.h"

/* A live layer: it may have any address, and asking costs a round trip. */
typedef struct mem_live_ops {
    /* All-or-nothing read of [addr, addr+len). */
    bool (*read)(void *impl, uint32_t addr, void *buf, size_t len);
    /* All of [addr, addr+len) written to the target, or false with the error set; NULL for a
     * layer that cannot write. */
    bool (*write)(void *impl, uint32_t addr, const void *buf, size_t len);
    void (*invalidate)(void *impl);
    /* Adds its counters (round_trips, bytes_wire, cache_hits, cache_misses, write_packets,
     * bytes_written) to *st. */
    void (*stats)(void *impl, spoor_mem_stats *st);
    void (*free)(void *impl);
} mem_live_ops;

/* Adds a live layer; the view owns impl from then on (ops->free on spoor_mem_free). */
bool spoor_mem_add_live(spoor_mem *m, const mem_live_ops *ops, void *impl);

#endif
