#include "outbuf.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

void ob_init(outbuf *ob, int fd)
{
    ob->fd = fd;
    ob->failed = false;
    ob->len = 0;
}

bool ob_flush(outbuf *ob)
{
    size_t off = 0;
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

/* "00" .. "99" */
static const char decimal_pairs[] =
    "00010203040506070809101112131415161718192021222324252627282930"
    "31323334353637383940414243444546474849505152535455565758596061"
    "6263646566676869707172737475767778798081828384858687888990919293"
    "949596979899";

void ob_u32(outbuf *ob, uint32_t v)
{
    char tmp[10];
    size_t n = 0;
    while (v >= 100) {
        const char *d = decimal_pairs + 2 * (v % 100);
        tmp[sizeof tmp - ++n] = d[1];
        tmp[sizeof tmp - ++n] = d[0];
        v /= 100;
    }
    if (v >= 10) {
        tmp[sizeof tmp - ++n] = decimal_pairs[2 * v + 1];
        tmp[sizeof tmp - ++n] = decimal_pairs[2 * v];
    } else {
        tmp[sizeof tmp - ++n] = (char)('0' + v);
    }
    ob_write(ob, tmp + sizeof tmp - n, n);
}

void ob_hex(outbuf *ob, uint32_t v)
{
    char tmp[10];
    size_t n = 0;
    do
        tmp[sizeof tmp - ++n] = hexdigits[v & 15];
    while ((v >>= 4));
    tmp[sizeof tmp - ++n] = 'x';
    tmp[sizeof tmp - ++n] = '0';
    ob_write(ob, tmp + sizeof tmp - n, n);
}

void ob_hex8(outbuf *ob, uint32_t v)
{
    if (ob->len + 10 > sizeof ob->buf)
        ob_flush(ob);
    char *p = ob->buf + ob->len;
    p[0] = '0';
    p[1] = 'x';
    for (int i = 9; i >= 2; i--, v >>= 4)
        p[i] = hexdigits[v & 15];
    ob->len += 10;
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
