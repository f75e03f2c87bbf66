/* The target's address space as one view, for every command that reads target memory.
 *
 * A spoor_mem is a stack of layers searched in the order they were added, first match wins:
 * a crash dump's regions, then --mem ADDR:FILE images, then the ELF's read-only loadable
 * contents (code and constants: what flash holds when the device runs that ELF), and last a
 * live GDB server, which can answer any address (so it must come last for the others to be
 * used at all). A read is served piecewise: each byte from the first layer that has
 * it, so a read may cross from a dump region into ELF code.
 *
 * The live layer (spoor_mem_add_gdb) caches by page: a page read once is not asked for again
 * until spoor_mem_invalidate() (call it when the target ran). Misses of one read are batched
 * into the fewest 'm' packets the server's PacketSize allows. spoor_mem_stats() counts what
 * went over the wire, for tests and --stats.
 *
 * Writes (spoor_mem_write) go to the live layer only: a dump, an image or the ELF is what was
 * captured, not the target, and a write that a static layer in front would hide is refused.
 *
 * Every reader in libspoor has the one callback type spoor_read_fn; spoor_mem_reader adapts a
 * spoor_mem to it. */
#ifndef SPOOR_MEMORY_H
#define SPOOR_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/error.h"
#include "spoor/read.h"

typedef struct spoor_mem spoor_mem;
struct spoor_elf;
struct spoor_dump;
struct spoor_gdb;
struct spoor_openocd;

spoor_mem *spoor_mem_new(void);
/* Frees the view and what it owns (images it loaded); borrowed dumps, ELFs and GDB
 * connections stay open. */
void spoor_mem_free(spoor_mem *m);

/* Layers. Each returns false with the error set (spoor_last_error) on failure. */
/* The memory regions of a dump (borrowed: keep the dump alive while the view is used). */
bool spoor_mem_add_dump(spoor_mem *m, const struct spoor_dump *dump);
/* Bytes at addr, copied. name says where they came from (for messages, may be NULL). */
bool spoor_mem_add_bytes(spoor_mem *m, uint32_t addr, const void *bytes, size_t len,
                         const char *name);
/* A file's contents at addr (--mem ADDR:FILE). Errors: "FILE: cannot open: ...", "FILE: N bytes
 * at 0x... run past the 4 GiB address space", "FILE: larger than 256 MiB". */
bool spoor_mem_add_file(spoor_mem *m, uint32_t addr, const char *path);
/* The ELF's loadable sections that are not writable (borrowed). Writable sections (.data)
 * hold initial values, not what the target has now, and are left out. */
bool spoor_mem_add_elf(spoor_mem *m, const struct spoor_elf *elf);
/* A live target behind a GDB server (borrowed), cached by page. */
bool spoor_mem_add_gdb(spoor_mem *m, struct spoor_gdb *gdb);
/* A live memory layer over an OpenOCD telnet or Tcl connection (borrowed), cached by page
 * (spoor/openocd.h). */
bool spoor_mem_add_openocd(spoor_mem *m, struct spoor_openocd *o);

/* Reads [addr, addr+len) into buf: true when every byte was available. */
bool spoor_mem_read(spoor_mem *m, uint32_t addr, void *buf, size_t len);
/* A little-endian 32-bit word. */
bool spoor_mem_read_u32(spoor_mem *m, uint32_t addr, uint32_t *value);
/* spoor_read_fn over a spoor_mem (ctx is the spoor_mem). */
bool spoor_mem_reader(void *ctx, uint32_t addr, void *buf, size_t len);
/* True when some layer can supply every byte of [addr, addr+len) without asking a live
 * target (dump regions, images, ELF). */
bool spoor_mem_has_static(const spoor_mem *m, uint32_t addr, size_t len);

/* A range of target addresses. */
typedef struct spoor_mem_range {
    uint32_t addr, len;
} spoor_mem_range;

/* The ranges the layers that hold a captured state have (a dump's regions, --mem images, bytes
 * added; not the ELF's contents, not a live target), in layer order (ranges of two layers may
 * overlap). Writes at most max into out, returns how many exist. */
size_t spoor_mem_captured_ranges(const spoor_mem *m, spoor_mem_range *out, size_t max);

/* Writes [addr, addr+len) to the live target (cached pages it touches take the new bytes).
 * Fails with SPOOR_ERR_UNAVAILABLE when the view has no live layer, or when a dump, image or ELF
 * layer in front of it holds a byte of the range ("... at 0x...: held by IMAGE, not the live
 * target"), and with the server's error when the target refuses. */
bool spoor_mem_write(spoor_mem *m, uint32_t addr, const void *buf, size_t len);

/* Drops the live layer's cache (the target ran, or memory changed behind our back). */
void spoor_mem_invalidate(spoor_mem *m);

typedef struct spoor_mem_stats {
    uint64_t reads;         /* spoor_mem_read calls */
    uint64_t round_trips;   /* requests sent to a live target ('m' packets) */
    uint64_t bytes_wire;    /* target bytes those requests returned */
    uint64_t cache_hits;    /* live pages served from the cache */
    uint64_t cache_misses;  /* live pages that had to be fetched */
    uint64_t writes;        /* spoor_mem_write calls */
    uint64_t write_packets; /* write requests sent to a live target ('M' packets) */
    uint64_t bytes_written; /* target bytes they wrote */
} spoor_mem_stats;

void spoor_mem_stats_get(const spoor_mem *m, spoor_mem_stats *out);

#endif
