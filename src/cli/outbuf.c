#include "outbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void ob_init(outbuf *ob, int fd)
{
    ob->fd = fd;
    ob->failed = false;
    ob->len = 0;
    ob->flushes = 0;
}

bool ob_flush(outbuf *ob)
{
    size_t off = 0;
    ob->flushes++;
    while (off < ob->len && !ob->failed) {
        ssize_t n = write(ob->fd, ob->buf + off, ob->len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            ob->failed = true;
        else
            off += (size_t)n;
    }
    ob->len = 0;
    return !ob->failed;
}

void ob_write_slow(outbuf *ob, const char *s, size_t n)
{
    while (n) {
        if (ob->len == sizeof ob->buf)
            ob_flush(ob);
        size_t k = sizeof ob->buf - ob->len;
        if (k > n)
            k = n;
        memcpy(ob->buf + ob->len, s, k);
        ob->len += k;
        s += k;
        n -= k;
    }
}

void ob_str(outbuf *ob, const char *s)
{
    ob_write(ob, s, strlen(s));
}

static const char hexdigits[] = "0123456789abcdef";

#define HEX_ROW(h)                                                                                 \
    h "0" h "1" h "2" h "3" h "4" h "5" h "6" h "7" h "8" h "9" h "a" h "b" h "c" h "d" h "e" h "f"
const char ob_hex_pairs[] = HEX_ROW("0") HEX_ROW("1") HEX_ROW("2") HEX_ROW("3") HEX_ROW("4")
    HEX_ROW("5") HEX_ROW("6") HEX_ROW("7") HEX_ROW("8") HEX_ROW("9") HEX_ROW("a") HEX_ROW("b")
        HEX_ROW("c") HEX_ROW("d") HEX_ROW("e") HEX_ROW("f");
#undef HEX_ROW

#define DECIMAL_ROW(d) d "0" d "1" d "2" d "3" d "4" d "5" d "6" d "7" d "8" d "9"
const char ob_decimal_pairs[] =
    DECIMAL_ROW("0") DECIMAL_ROW("1") DECIMAL_ROW("2") DECIMAL_ROW("3") DECIMAL_ROW("4")
        DECIMAL_ROW("5") DECIMAL_ROW("6") DECIMAL_ROW("7") DECIMAL_ROW("8") DECIMAL_ROW("9");
#undef DECIMAL_ROW

void ob_u32(outbuf *ob, uint32_t v)
{
    ob_commit(ob, ob_put_u32(ob_reserve(ob, 10), v));
}

void ob_hex(outbuf *ob, uint32_t v)
{
    ob_commit(ob, ob_put_hex(ob_reserve(ob, 10), v));
}

void ob_hex8(outbuf *ob, uint32_t v)
{
    ob_commit(ob, ob_put_hex8(ob_reserve(ob, 10), v));
}

void ob_json_string(outbuf *ob, const char *s)
{
    if (!s) {
        ob_write(ob, "null", 4);
        return;
    }
    ob_char(ob, '"');
    const char *run = s;
    for (const unsigned char *p = (const unsigned char *)s;; p++) {
        if (*p && *p >= 0x20 && *p != '"' && *p != '\\')
            continue;
        ob_write(ob, run, (size_t)((const char *)p - run));
        if (!*p)
            break;
        char esc[7] = {'\\', (char)*p};
        size_t n = 2;
        switch (*p) {
        case '\n': esc[1] = 'n'; break;
        case '\t': esc[1] = 't'; break;
        case '\r': esc[1] = 'r'; break;
        case '"':
        case '\\': break;
        default:
            esc[1] = 'u';
            esc[2] = '0';
            esc[3] = '0';
            esc[4] = hexdigits[*p >> 4];
            esc[5] = hexdigits[*p & 15];
            n = 6;
        }
        ob_write(ob, esc, n);
        run = (const char *)p + 1;
    }
    ob_char(ob, '"');
}

void ob_printf(outbuf *ob, const char *fmt, ...)
{
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof tmp) {
        ob_write(ob, tmp, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big)
        return;
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    ob_write(ob, big, (size_t)n);
    free(big);
}
