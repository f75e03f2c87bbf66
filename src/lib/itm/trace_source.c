/* Trace sources: parsing a SOURCE argument into the constructor of its kind, and the two
 * operations every kind has. */
#include <stdlib.h>
#include <string.h>

#include "base/set_error.h"
#include "itm/trace_source_internal.h"
#include "util/number.h"

/* Copies the n bytes at src into dst as a string; false when n is 0 or does not fit. */
static bool copy(char *dst, size_t cap, const char *src, size_t n)
{
    if (n == 0 || n >= cap)
        return false;
    memcpy(dst, src, n);
    dst[n] = '\0';
    return true;
}

spoor_trace_source *spoor_trace_source_open(const char *spec, unsigned reconnect_s)
{
    if (!strncmp(spec, "tcp:", 4)) {
        char host[256], port[16];
        const char *hp = spec + 4, *colon = strrchr(hp, ':');
        if (!colon || !copy(host, sizeof host, hp, (size_t)(colon - hp)) ||
            !copy(port, sizeof port, colon + 1, strlen(colon + 1))) {
            spoor_set_error(SPOOR_ERR_ARGUMENT, "%s: expected tcp:HOST:PORT", spec);
            return NULL;
        }
        return spoor_trace_source_tcp(host, port, reconnect_s);
    }
    if (!strncmp(spec, "serial:", 7)) {
        char device[512];
        uint32_t baud;
        const char *dp = spec + 7, *colon = strrchr(dp, ':');
        if (!colon || !copy(device, sizeof device, dp, (size_t)(colon - dp)) ||
            !spoor_parse_u32z(colon + 1, SPOOR_NUM_AUTO, &baud) || baud == 0) {
            spoor_set_error(SPOOR_ERR_ARGUMENT, "%s: expected serial:/dev/ttyX:BAUD", spec);
            return NULL;
        }
        return spoor_trace_source_serial(device, baud);
    }
    if (!*spec) {
        spoor_set_error(SPOOR_ERR_ARGUMENT, "empty SOURCE");
        return NULL;
    }
    return strcmp(spec, "-") ? spoor_trace_source_file(spec) : spoor_trace_source_stdin();
}

ssize_t spoor_trace_source_receive(spoor_trace_source *s, const uint8_t **data, int timeout_ms)
{
    return s->ops->receive(s, data, timeout_ms);
}

void spoor_trace_source_close(spoor_trace_source *s)
{
    if (s)
        s->ops->close(s);
}
