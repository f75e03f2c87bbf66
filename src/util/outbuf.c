#include "util/outbuf.h"

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
    ob->mem = NULL;
    ob->mem_len = ob->mem_cap = 0;
}

void ob_init_memory(outbuf *ob)
{
    ob_init(ob, -1);
}

/* ob_flush of a memory outbuf: the buffer appended to mem. */
static bool flush_memory(outbuf *ob)
{
    if (!ob->failed && ob->mem_len + ob->len + 1 > ob->mem_cap) {
        size_t cap = ob->mem_cap ? ob->mem_cap : sizeof ob->buf;
        while (cap < ob->mem_len + ob->len + 1)
            cap *= 2;
        char *more = realloc(ob->mem, cap);
        if (!more)
            ob->failed = true;
        else
            ob->mem = more, ob->mem_cap = cap;
    }
    if (!ob->failed) {
        memcpy(ob->mem + ob->mem_len, ob->buf, ob->len);
        ob->mem_len += ob->len;
        ob->mem[ob->mem_len] = 0;
    }
    ob->len = 0;
    return !ob->failed;
}

char *ob_take(outbuf *ob, size_t *len)
{
    char *text = NULL;
    if (ob_flush(ob) && (ob->mem || (ob->mem = calloc(1, 1)))) {
        text = ob->mem;
        *len = ob->mem_len;
    } else
        free(ob->mem);
    ob_init_memory(ob);
    return text;
}

bool ob_flush(outbuf *ob)
{
    size_t off = 0;
    ob->flushes++;
    if (ob->fd < 0)
        return flush_memory(ob);
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

/* The length of the UTF-8 sequence at p (1 to 4) and its code point in *cp, or 0 when the bytes
 * there are not one (a stray continuation byte, an overlong form, a surrogate, a cut sequence). */
static size_t utf8_seq(const unsigned char *p, uint32_t *cp)
{
    unsigned c = p[0];
    size_t n;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xC2 && c <= 0xDF)
        n = 2, v = c & 0x1Fu, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3, v = c & 0x0Fu, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4, v = c & 0x07u, min = 0x10000;
    else
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) /* a NUL stops here too */
            return 0;
        v = v << 6 | (p[i] & 0x3Fu);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return n;
}

/* What must not reach a terminal or a page as it is: C0 and C1 controls, DEL, and the
 * bidirectional formatting characters, which reorder the text around them. */
static bool hostile(uint32_t cp)
{
    return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x061C || cp == 0x200E ||
           cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

/* The next character of s (not at its NUL): its length, *bad when it is hostile or not UTF-8
 * (then its length is 1 for a byte that is no UTF-8, and *cp the byte). */
static size_t next_char(const unsigned char *s, uint32_t *cp, bool *bad)
{
    size_t n = utf8_seq(s, cp);
    if (!n) {
        *cp = s[0];
        *bad = true;
        return 1;
    }
    *bad = hostile(*cp);
    return n;
}

bool ob_text_plain(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        if (*p >= 0x20 && *p < 0x7F) {
            p++;
            continue;
        }
        uint32_t cp;
        bool bad;
        p += next_char(p, &cp, &bad);
        if (bad)
            return false;
    }
    return true;
}

void ob_text(outbuf *ob, const char *s)
{
    const unsigned char *p = (const unsigned char *)s, *run = p;
    while (*p) {
        if (*p >= 0x20 && *p < 0x7F) {
            p++;
            continue;
        }
        uint32_t cp;
        bool bad;
        size_t n = next_char(p, &cp, &bad);
        if (bad) {
            ob_write(ob, (const char *)run, (size_t)(p - run));
            ob_char(ob, '?');
            run = p + n;
        }
        p += n;
    }
    ob_write(ob, (const char *)run, (size_t)(p - run));
}

char *ob_text_clean(char *s)
{
    unsigned char *p = (unsigned char *)s, *to = p;
    while (*p) {
        uint32_t cp;
        bool bad;
        size_t n = next_char(p, &cp, &bad);
        if (bad)
            *to++ = '?';
        else
            memmove(to, p, n), to += n;
        p += n;
    }
    *to = 0;
    return s;
}

void ob_json_string(outbuf *ob, const char *s)
{
    if (!s) {
        ob_write(ob, "null", 4);
        return;
    }
    ob_char(ob, '"');
    const char *run = s;
    for (const unsigned char *p = (const unsigned char *)s;;) {
        if (*p && *p >= 0x20 && *p < 0x7F && *p != '"' && *p != '\\') {
            p++;
            continue;
        }
        uint32_t cp = *p;
        bool bad = false;
        size_t n = *p >= 0x80 ? next_char(p, &cp, &bad) : 1;
        if (*p >= 0x80 && !bad) { /* UTF-8, kept as it is */
            p += n;
            continue;
        }
        ob_write(ob, run, (size_t)((const char *)p - run));
        if (!*p)
            break;
        char esc[7] = {'\\', (char)*p};
        size_t len = 2;
        switch (*p) {
        case '\n': esc[1] = 'n'; break;
        case '\t': esc[1] = 't'; break;
        case '\r': esc[1] = 'r'; break;
        case '"':
        case '\\': break;
        default: /* controls, bidi controls, and a byte that is no UTF-8 as the code point of
                    its value (so the output is always UTF-8) */
            esc[1] = 'u';
            for (int i = 0; i < 4; i++)
                esc[2 + i] = hexdigits[cp >> (12 - 4 * i) & 15];
            len = 6;
        }
        ob_write(ob, esc, len);
        p += n;
        run = (const char *)p;
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
