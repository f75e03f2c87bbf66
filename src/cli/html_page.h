/* Self-contained HTML pages written to a file: the JSON captured from a json_out, put in place
 * of the template's @MARKER@s (util/html_fill.h), the page written new beside its path and
 * renamed over it. spoor triage's index page; spoor report's page, which libspoor makes
 * (spoor_crash_html), is written as a template without markers. */
#ifndef SPOOR_HTML_PAGE_H
#define SPOOR_HTML_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "util/outbuf.h"

/* Points o at a temporary file; NULL when none can be made. */
FILE *html_capture_begin(outbuf *o);
/* What o wrote since html_capture_begin (malloc'd, NUL-terminated, *len bytes); NULL on an
 * error. Closes tmp. */
char *html_capture_end(outbuf *o, FILE *tmp, size_t *len);

/* Writes the template tmpl (tmpl_len bytes, NUL-terminated) to path ("-": standard output)
 * with its n markers (at most HTML_MAX_MARKERS; none: tmpl as it is), each found once and in this
 * order, replaced by docs[i] (lens[i] bytes, through html_put_json): util/html_fill.h's
 * html_fill. A file is written new beside path and renamed over it; a path that is there but not
 * a regular file (a symbolic link, a directory, a device) is refused. Returns SPOOR_EXIT_OK or
 * the exit status after a one-line error of cmd. */
int html_write(const char *cmd, const char *path, const char *tmpl, size_t tmpl_len,
               const char *const *markers, const char *const *docs, const size_t *lens, size_t n);

#endif
