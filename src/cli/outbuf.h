/* A buffered writer for high-volume text output (stdio's printf costs more than the lookups
 * it prints). Writes go to a file descriptor in large blocks; errors are sticky. */
#ifndef SPOOR_OUTBUF_H
#define SPOOR_OUTBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct outbuf {
    int fd;
    bool failed;
    size_t len;
    char buf[1 << 16];
} outbuf;

void ob_init(outbuf *ob, int fd);
bool ob_flush(outbuf *ob); /* false once any write has failed */
void ob_write_slow(outbuf *ob, const char *s, size_t n);

static inline void ob_write(outbuf *ob, const char *s, size_t n)
{
    if (ob->len + n <= sizeof ob->buf) {
        if (n <= 8) /* short pieces: cheaper than a memcpy call */
            for (size_t i = 0; i < n; i++)
                ob->buf[ob->len + i] = s[i];
        else
            memcpy(ob->buf + ob->len, s, n);
        ob->len += n;
    } else {
        ob_write_slow(ob, s, n);
    }
}

static inline void ob_char(outbuf *ob, char c)
{
    if (ob->len == sizeof ob->buf)
        ob_flush(ob);
    ob->buf[ob->len++] = c;
}
void ob_str(outbuf *ob, const char *s);
void ob_u32(outbuf *ob, uint32_t v);            /* decimal */
void ob_hex(outbuf *ob, uint32_t v);            /* 0x.. without padding */
void ob_hex8(outbuf *ob, uint32_t v);           /* 0x%08x */
void ob_json_string(outbuf *ob, const char *s); /* "..." escaped, or null */

#endif
