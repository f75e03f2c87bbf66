/* The plumbing behind the opaque spoor_trace_source (include/spoor/trace_source.h): each kind
 * of source embeds struct spoor_trace_source first and fills in its operations. Internal. */
#ifndef SPOOR_TRACE_SOURCE_INTERNAL_H
#define SPOOR_TRACE_SOURCE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "spoor/trace_source.h"

typedef struct trace_source_ops {
    /* spoor_trace_source_receive() for this kind */
    ssize_t (*receive)(spoor_trace_source *s, const uint8_t **data, int timeout_ms);
    /* releases everything, the handle included */
    void (*close)(spoor_trace_source *s);
} trace_source_ops;

struct spoor_trace_source {
    const trace_source_ops *ops;
};

/* How much a source hands out at most per receive. */
#define TRACE_SOURCE_CHUNK ((size_t)1 << 20)

/* A new source: size bytes (the kind's struct, spoor_trace_source first) zeroed, with ops set
 * and a copy of name, for messages, stored after it (*name_copy). NULL when memory runs out:
 * then the error is set and fd closed (unless it is a standard descriptor). */
void *spoor_trace_source_new(size_t size, const trace_source_ops *ops, int fd, const char *name,
                             const char **name_copy);

/* For the sources that are a file descriptor (trace_source_fd.c): waits up to timeout_ms for
 * fd to have data (< 0: as long as it takes), then reads up to cap bytes into buf, retrying
 * on EINTR. Returns > 0 bytes read, 0 at end of stream, SPOOR_TRACE_IDLE, or
 * SPOOR_TRACE_ERROR with errno set and no error message (the caller names the source). */
ssize_t spoor_trace_fd_read(int fd, void *buf, size_t cap, int timeout_ms);

#endif
