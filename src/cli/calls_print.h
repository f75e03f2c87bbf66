/* One record of the call recorder as `spoor calls` prints it as text ("{ SITE->FUNCTION
 * CALLER:OFF->NAME" indented by depth, a context column when the ring has more than one), shared
 * by spoor calls and spoor crash's "calls" section (docs/calls.md, docs/crash.md); its JSON and
 * the names are util/calls_view.h's. */
#ifndef SPOOR_CALLS_PRINT_H
#define SPOOR_CALLS_PRINT_H

#include "spoor/calls_decode.h"
#include "util/calls_view.h"
#include "util/outbuf.h"

/* The record's text line, newline included. */
void calls_record_text(outbuf *o, const calls_view *v, const spoor_call_record *r,
                       const spoor_call_context *ctx);

#endif
