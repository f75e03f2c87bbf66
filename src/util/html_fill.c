/* Self-contained HTML pages (util/html_fill.h). */
#include <string.h>

#include "util/html_fill.h"

void html_put_json(outbuf *o, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        switch (s[i]) {
        case '<': ob_write(o, "\\u003c", 6); break;
        case '>': ob_write(o, "\\u003e", 6); break;
        case '&': ob_write(o, "\\u0026", 6); break;
        default: ob_char(o, s[i]);
        }
    }
}

bool html_fill(outbuf *o, const char *tmpl, size_t tmpl_len, const char *const *markers,
               const char *const *docs, const size_t *lens, size_t n)
{
    const char *at[HTML_MAX_MARKERS], *from = tmpl;
    bool found = n <= HTML_MAX_MARKERS && strlen(tmpl) == tmpl_len;
    for (size_t i = 0; found && i < n; i++)
        if ((found = (at[i] = strstr(from, markers[i])) != NULL))
            from = at[i] + strlen(markers[i]);
    if (!found)
        return false;
    from = tmpl;
    for (size_t i = 0; i < n; i++) {
        ob_write(o, from, (size_t)(at[i] - from));
        html_put_json(o, docs[i], lens[i]);
        from = at[i] + strlen(markers[i]);
    }
    ob_write(o, from, strlen(from));
    return true;
}
