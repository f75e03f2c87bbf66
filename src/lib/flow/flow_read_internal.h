/* A read of target memory that failed in the flow layer's readers (calls_read.c, mtb_read.c):
 * when it failed because a live target's connection did, the error says so. */
#ifndef SPOOR_FLOW_READ_INTERNAL_H
#define SPOOR_FLOW_READ_INTERNAL_H

#include <stdbool.h>

/* Before a read whose failure is to be judged: clears the last error (an input without the
 * bytes fails silently, a live target says why). */
void spoor_flow_read_begin(void);

/* After a failed read of what (its address and size in words, e.g. "the call ring
 * (0x20002128+4096)"): when the last error is a live connection's (closed, timed out, a reply
 * that broke the protocol), sets the error to "INPUT: the connection failed while reading
 * WHAT (BEFORE): WHY" (WHY without a second "INPUT: ") and returns true; else false, the error
 * left as it was for the caller's own message. before says what was read before ("the
 * recorder's state was read", "nothing was read"). */
bool spoor_flow_connection_failed(const char *input, const char *what, const char *before);

/* The last error without a leading "INPUT: " (the live layer names its connection as the
 * readers name their input). */
const char *spoor_flow_error_after(const char *input);

#endif
