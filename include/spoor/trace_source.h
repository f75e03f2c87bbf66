/* Where a trace byte stream comes from: a file, standard input, a TCP server (OpenOCD's or
 * J-Link's SWO port, an Orbuculum server) or a serial tty. A source is an opaque handle with
 * two operations, receive and close; each kind has its own constructor and module
 * (trace_source_file.c, trace_source_tcp.c, trace_source_serial.c), and
 * spoor_trace_source_open() parses a SOURCE argument into one of them.
 *
 *     spoor_trace_source *s = spoor_trace_source_open(spec, 10);
 *     const uint8_t *data;
 *     ssize_t n;
 *     while ((n = spoor_trace_source_receive(s, &data, 100)) != SPOOR_TRACE_EOF)
 *         if (n > 0)
 *             consume(data, (size_t)n);  // else IDLE, RECONNECTED or ERROR
 *     spoor_trace_source_close(s);
 */
#ifndef SPOOR_TRACE_SOURCE_H
#define SPOOR_TRACE_SOURCE_H

#include <stdint.h>
#include <sys/types.h>

typedef struct spoor_trace_source spoor_trace_source;

/* The constructors: NULL with spoor_last_error() set ("FILE: cannot open: ...",
 * "tcp:HOST:PORT: connection refused", "serial:...: unsupported baud rate N", ...). */

/* A capture file. A regular file is read through a window of a few MB whatever its size, so
 * memory stays bounded; other files (a FIFO, a character device) are read as they come. */
spoor_trace_source *spoor_trace_source_file(const char *path);
/* Standard input (live: it may go quiet). */
spoor_trace_source *spoor_trace_source_stdin(void);
/* A TCP server. When it closes the connection or a read fails, the source keeps trying to
 * reconnect for reconnect_s seconds (0: it does not) and reports the gap. */
spoor_trace_source *spoor_trace_source_tcp(const char *host, const char *port,
                                           unsigned reconnect_s);
/* A serial tty in raw mode at baud (one of the termios rates, 9600 to 4000000). */
spoor_trace_source *spoor_trace_source_serial(const char *device, unsigned baud);

/* Parses SOURCE: "-" (standard input), "tcp:HOST:PORT", "serial:/dev/ttyX:BAUD" or a file
 * path, and opens it with the constructor of its kind (reconnect_s is for TCP). */
spoor_trace_source *spoor_trace_source_open(const char *spec, unsigned reconnect_s);

/* Status of a receive. */
enum {
    SPOOR_TRACE_EOF = 0,          /* end of the stream */
    SPOOR_TRACE_ERROR = -1,       /* an I/O error (spoor_last_error() says which) */
    SPOOR_TRACE_IDLE = -2,        /* no data within timeout_ms (live sources) */
    SPOOR_TRACE_RECONNECTED = -3, /* the TCP server went away and is back: a gap in the data */
};

/* The next bytes of the stream: > 0 is how many are at *data (the source's memory, valid
 * until the next call on s), otherwise one of the statuses above. timeout_ms < 0 waits for
 * data; files never wait and never return SPOOR_TRACE_IDLE. */
ssize_t spoor_trace_source_receive(spoor_trace_source *s, const uint8_t **data, int timeout_ms);

/* Closes the source and frees it (NULL is fine). */
void spoor_trace_source_close(spoor_trace_source *s);

#endif
