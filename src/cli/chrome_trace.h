/* The Chrome/Perfetto trace-event JSON sink of every command that writes --chrome FILE
 * (calls, mtb, top): {"displayTimeUnit":"ns","traceEvents":[...]} through the one JSON writer.
 * Format: the Trace Event Format document (Chromium), events with name, ph, ts, pid, tid;
 * "M" thread_name metadata names a track; "B"/"E" pairs must nest per track. */
#ifndef SPOOR_CHROME_TRACE_H
#define SPOOR_CHROME_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "util/json_write.h"
#include "util/outbuf.h"

typedef struct chrome_trace {
    const char *path;
    int fd;
    outbuf *ob;
    json_out j;
} chrome_trace;

/* Creates FILE and starts the document; false with errno set when it cannot be created. */
bool chrome_trace_open(chrome_trace *t, const char *path);
/* Names track (pid, tid): a "thread_name" metadata event. */
void chrome_trace_track(chrome_trace *t, unsigned pid, unsigned tid, const char *name);
/* One event: ph "B" (begin), "E" (end), "i" (instant), ts in the trace's time unit. */
void chrome_trace_event(chrome_trace *t, const char *name, const char *ph, uint64_t ts,
                        unsigned pid, unsigned tid);
/* An event with more fields than the helpers above (a category, fractional microseconds,
 * args): writes {"name":..,"ph":.. and returns the writer for the caller's fields; end it with
 * chrome_trace_event_end(). */
json_out *chrome_trace_event_begin(chrome_trace *t, const char *name, const char *ph);
void chrome_trace_event_end(chrome_trace *t);
/* Drops a trace begun but not wanted (the command failed): closes and removes the file. */
void chrome_trace_discard(chrome_trace *t);
/* Ends the document and closes the file; false when a write failed. */
bool chrome_trace_close(chrome_trace *t);

#endif
