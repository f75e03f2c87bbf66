/* The OpenOCD client's connection, shared by its two transports: the telnet server
 * (openocd_telnet.c, port 4444) and the Tcl RPC server (openocd_tcl.c, port 6666).
 * openocd.c owns the socket, the bounded waits and the public calls of
 * spoor/openocd.h, which go to the transport's functions. Internal. */
#ifndef SPOOR_OPENOCD_INTERNAL_H
#define SPOOR_OPENOCD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/openocd.h"

#define OPENOCD_REPLY_MAX (256u * 1024u)
#define OPENOCD_MAX_READ_WORDS 4096u

typedef struct openocd_transport {
    const char *name; /* in messages: "openocd", "openocd tcl" */
    /* One command, its output in out (cut at cap); false with the error set when the
     * connection fails or (where the transport can tell) the command failed. */
    bool (*command)(spoor_openocd *o, const char *command, char *out, size_t cap);
    /* count words from the word-aligned addr in one request. */
    bool (*read_words)(spoor_openocd *o, uint32_t addr, uint32_t *words, size_t count);
    /* A word, or the bits of mask. */
    bool (*write)(spoor_openocd *o, uint32_t addr, uint32_t value, uint32_t mask);
} openocd_transport;

struct spoor_openocd {
    const openocd_transport *t;
    int fd; /* -1 once the connection failed */
    unsigned timeout_ms;
    char where[300]; /* "openocd HOST:PORT", "openocd tcl HOST:PORT" */
    uint64_t round_trips;
    char *buf; /* OPENOCD_REPLY_MAX + 1 bytes: what was received */
    size_t len;
    char broken[256]; /* why the connection failed, "" while it works */
};

/* Connects to "HOST:PORT" or "PORT" (localhost). NULL with the error set. */
spoor_openocd *spoor_openocd_open(const char *where, unsigned timeout_ms,
                                  const openocd_transport *t);

/* Sends a request (a round trip begins). false with the error set; the connection is then
 * broken. */
bool spoor_openocd_send(spoor_openocd *o, const void *data, size_t len);

/* Appends what arrives to buf[len..] (kept NUL terminated); false with the error set when
 * nothing arrives before deadline (now_ms() based), the peer closes, or the reply grows past
 * OPENOCD_REPLY_MAX. Each failure breaks the connection. The transports set the deadline once
 * per request, for the whole reply: a peer that drips it, or talks on without ever ending it,
 * gets no new wait per byte. */
bool spoor_openocd_receive(spoor_openocd *o, int64_t deadline);

/* Milliseconds of a monotonic clock, for deadlines. */
int64_t spoor_openocd_now_ms(void);

/* A command's output into out: len bytes from start, cut at cap, NUL terminated (cap 0:
 * nothing). */
void spoor_openocd_output(const char *start, size_t len, char *out, size_t cap);

/* Marks the connection broken with the error just set (closes the socket). */
void spoor_openocd_break(spoor_openocd *o);

#endif
