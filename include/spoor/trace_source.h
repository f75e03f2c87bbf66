/* Where a trace byte stream comes from: a file, standard input, a TCP server (OpenOCD's or
 * J-Link's SWO port, an Orbuculum server) or a serial tty. Each kind is its own module
 * (trace_source_file.c, trace_source_tcp.c, trace_source_serial.c); trace_source.c parses the
 * SOURCE argument and reads with reconnection for TCP. */
#ifndef SPOOR_TRACE_SOURCE_H
#define SPOOR_TRACE_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum spoor_trace_kind {
    SPOOR_TRACE_FILE,   /* a path */
    SPOOR_TRACE_STDIN,  /* "-" */
    SPOOR_TRACE_TCP,    /* "tcp:HOST:PORT" */
    SPOOR_TRACE_SERIAL, /* "serial:/dev/ttyX:BAUD" */
} spoor_trace_kind;

typedef struct spoor_trace_source {
    spoor_trace_kind kind;
    int fd;
    char host[256];
    char port[16];
    char path[512];
    unsigned baud;
    unsigned reconnect_s; /* TCP: how long to keep trying after the server goes away */
    unsigned reconnects;  /* how many times it reconnected */
    const void *map;      /* a regular file mapped by spoor_trace_source_map() */
    size_t map_len;
} spoor_trace_source;

/* Parses and opens SOURCE. false with spoor_last_error() set ("tcp:HOST:PORT: connection
 * refused", "FILE: cannot open: ...", "serial:...: unsupported baud rate N", ...). */
bool spoor_trace_source_open(spoor_trace_source *s, const char *spec, unsigned reconnect_s);

/* Status of a read. */
enum {
    SPOOR_TRACE_EOF = 0,          /* end of the stream */
    SPOOR_TRACE_ERROR = -1,       /* an I/O error (spoor_last_error() says which) */
    SPOOR_TRACE_IDLE = -2,        /* no data within timeout_ms (live sources) */
    SPOOR_TRACE_RECONNECTED = -3, /* the TCP server went away and is back: a gap in the data */
};

/* Reads up to cap bytes: > 0 bytes read, or one of the statuses above. timeout_ms < 0 waits
 * for data. */
ssize_t spoor_trace_source_read(spoor_trace_source *s, void *buf, size_t cap, int timeout_ms);

/* True for sources whose data arrives over time (stdin, TCP, serial). */
bool spoor_trace_source_is_live(const spoor_trace_source *s);

/* For a regular file: maps it whole (read-only, sequential) so that it can be decoded without
 * copying. false for other sources or when mapping fails: then use spoor_trace_source_read().
 * The mapping lives until spoor_trace_source_close(). */
bool spoor_trace_source_map(spoor_trace_source *s, const uint8_t **data, size_t *len);

void spoor_trace_source_close(spoor_trace_source *s);

/* The modules: each opens its kind and returns a file descriptor, or -1 with the error set. */
int spoor_trace_open_file(const char *path);
int spoor_trace_open_tcp(const char *host, const char *port);
int spoor_trace_open_serial(const char *device, unsigned baud);

#endif
