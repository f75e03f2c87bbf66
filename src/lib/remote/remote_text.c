/* A peer's bytes in a one-line message (remote_text_internal.h). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "remote/remote_text_internal.h"

void spoor_peer_excerpt(const void *b, size_t n, size_t max, bool quoted, char *out, size_t cap)
{
    const uint8_t *p = b;
    size_t o = 0, i = 0;
    if (!cap)
        return;
    for (; i < n && i < max && o + 5 < cap; i++) {
        uint8_t c = p[i];
        if (c >= ' ' && c <= '~' && !(quoted && c == '"') && c != '\\')
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
    }
    out[o] = 0;
}
