/* Self-contained HTML pages (a template compiled in, JSON documents in it, rendered by the
 * page's own script): the template's @MARKER@s replaced by JSON documents, escaped for a
 * <script type="application/json">. The one scheme of spoor report's page (libspoor's
 * spoor_crash_html) and spoor triage's index (the CLI). Internal. */
#ifndef SPOOR_UTIL_HTML_FILL_H
#define SPOOR_UTIL_HTML_FILL_H

#include <stdbool.h>
#include <stddef.h>

#include "util/outbuf.h"

/* Linked as spoor_html_* (util/outbuf.h says why), called by their short names. */
#define html_put_json spoor_html_put_json
#define html_fill spoor_html_fill

#define HTML_MAX_MARKERS 4

/* JSON text for inside <script type="application/json">: '<', '>' and '&' (only ever inside
 * its strings) as \u escapes, so no "</script>" or "<!--" in a string can end the element. */
void html_put_json(outbuf *o, const char *s, size_t n);

/* Writes the template tmpl (tmpl_len bytes, NUL-terminated) to o with its n markers (at most
 * HTML_MAX_MARKERS), each found once and in this order, replaced by docs[i] (lens[i] bytes,
 * through html_put_json). false, and nothing written, when the template lacks a marker or has a
 * NUL before its end (a bad build). */
bool html_fill(outbuf *o, const char *tmpl, size_t tmpl_len, const char *const *markers,
               const char *const *docs, const size_t *lens, size_t n);

#endif
