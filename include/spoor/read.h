/* The one callback type through which libspoor reads target memory: a dump's regions, --mem
 * images, the ELF's read-only contents or a live GDB/OpenOCD connection (spoor/memory.h adapts
 * its stack of layers to it with spoor_mem_reader). A leaf header, so that the decoders and
 * the unwinder can take a reader without depending on where the memory comes from. */
#ifndef SPOOR_READ_H
#define SPOOR_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Reads len bytes of target memory at addr into buf; false (buf unspecified) when any byte is
 * unavailable. The one read callback type of libspoor. */
typedef bool (*spoor_read_fn)(void *ctx, uint32_t addr, void *buf, size_t len);

#endif
