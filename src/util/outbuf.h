/* A buffered writer for high-volume text output (stdio's printf costs more than the lookups
 * it prints). Writes go to a file descriptor in large blocks; errors are sticky. */
#ifndef SPOOR_UTIL_OUTBUF_H
#define SPOOR_UTIL_OUTBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* libspoor.a's global names start with spoor_ (a static library shares the application's
 * namespace): these are linked as spoor_ob_*, and called by their short names. */
#define ob_init spoor_ob_init
#define ob_flush spoor_ob_flush
#define ob_write_slow spoor_ob_write_slow
#define ob_str spoor_ob_str
#define ob_u32 spoor_ob_u32
#define ob_hex spoor_ob_hex
#define ob_hex8 spoor_ob_hex8
#define ob_json_string spoor_ob_json_string
#define ob_text spoor_ob_text
#define ob_text_clean spoor_ob_text_clean
#define ob_text_plain spoor_ob_text_plain
#define ob_printf spoor_ob_printf
#define ob_hex_pairs spoor_ob_hex_pairs
#define ob_decimal_pairs spoor_ob_decimal_pairs
#define ob_init_memory spoor_ob_init_memory
#define ob_take spoor_ob_take

typedef struct outbuf {
    int fd; /* -1: into memory (ob_init_memory) */
    bool failed;
    size_t len;
    unsigned long flushes; /* ob_flush calls: a caller can tell that its text stayed in buf */
    char *mem;             /* what was flushed into memory, mem_len bytes of mem_cap */
    size_t mem_len, mem_cap;
    char buf[1 << 16];
} outbuf;

void ob_init(outbuf *ob, int fd);
bool ob_flush(outbuf *ob); /* false once any write has failed */
/* An outbuf that keeps what is written in memory; ob_take hands it over (NUL-terminated, *len
 * without the NUL; the caller frees it) and starts again empty: NULL when memory ran out. */
void ob_init_memory(outbuf *ob);
char *ob_take(outbuf *ob, size_t *len);
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

/* Room for n more bytes in one piece, flushing first when needed: returns where to write them,
 * or NULL when n is more than the buffer holds (then write piecewise with ob_write). After
 * writing, ob_commit(ob, end) with end one past the last byte written (at most n). */
static inline char *ob_reserve(outbuf *ob, size_t n)
{
    if (n > sizeof ob->buf - ob->len) {
        if (n > sizeof ob->buf)
            return NULL;
        ob_flush(ob);
    }
    return ob->buf + ob->len;
}

static inline void ob_commit(outbuf *ob, char *end)
{
    ob->len = (size_t)(end - ob->buf);
}

/* Formatting into reserved space: each writes at p and returns one past what it wrote. */
extern const char ob_hex_pairs[];     /* "000102..ff" */
extern const char ob_decimal_pairs[]; /* "000102..99" */

#if defined(__SSE2__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#include <emmintrin.h>

/* The 8 hex digits of v (lowercase) as they lie in memory, the first in the lowest byte: the
 * bytes of v split into their nibbles and turned into ASCII at once, in one SSE2 register. */
static inline uint64_t ob_hex_word(uint32_t v)
{
    __m128i b = _mm_cvtsi32_si128((int)__builtin_bswap32(v)); /* the first byte lowest */
    __m128i nibble = _mm_set1_epi8(0x0f);
    __m128i d = _mm_unpacklo_epi8(_mm_and_si128(_mm_srli_epi16(b, 4), nibble),
                                  _mm_and_si128(b, nibble)); /* high nibble, then low */
    __m128i letters =
        _mm_and_si128(_mm_cmpgt_epi8(d, _mm_set1_epi8(9)), _mm_set1_epi8('a' - '0' - 10));
    return (uint64_t)_mm_cvtsi128_si64(_mm_add_epi8(_mm_add_epi8(d, _mm_set1_epi8('0')), letters));
}
#else
/* The same from the table of digit pairs, a byte of v at a time. */
static inline uint64_t ob_hex_word(uint32_t v)
{
    char d[8];
    for (int i = 0; i < 4; i++)
        memcpy(d + 2 * i, ob_hex_pairs + 2 * ((v >> (24 - 8 * i)) & 255), 2);
    uint64_t w;
    memcpy(&w, d, 8);
    return w;
}
#endif

static inline char *ob_put_hex8(char *p, uint32_t v) /* 0x%08x: 10 bytes */
{
    uint64_t w = ob_hex_word(v);
    memcpy(p, "0x", 2);
    memcpy(p + 2, &w, 8);
    return p + 10;
}

/* %x: the hex digits of v without leading zeros, 1 to 8 bytes (8 written). Below 0x10000 (the
 * common case, offsets into functions) from two digit pairs of the table. */
static inline char *ob_put_hex_digits(char *p, uint32_t v)
{
    size_t n = (35 - (size_t)__builtin_clz(v | 1)) / 4; /* digits */
    if (v < 0x10000) {
        uint16_t hi, lo;
        memcpy(&hi, ob_hex_pairs + 2 * (v >> 8), 2);
        memcpy(&lo, ob_hex_pairs + 2 * (v & 255), 2);
        uint32_t w = (hi | (uint32_t)lo << 16) >> (8 * (4 - n)); /* the first digit lowest */
        memcpy(p, &w, 4);
    } else {
        uint64_t w = ob_hex_word(v) >> (8 * (8 - n)); /* without the leading zeros */
        memcpy(p, &w, 8);
    }
    return p + n;
}

static inline char *ob_put_hex(char *p, uint32_t v) /* 0x%x: 3 to 10 bytes (10 written) */
{
    memcpy(p, "0x", 2);
    return ob_put_hex_digits(p + 2, v);
}

static inline char *ob_put_u32(char *p, uint32_t v) /* %u: at most 10 bytes */
{
    if (v < 100) { /* line numbers and small offsets: the common case */
        if (v < 10) {
            *p = (char)('0' + v);
            return p + 1;
        }
        memcpy(p, ob_decimal_pairs + 2 * v, 2);
        return p + 2;
    }
    if (v < 10000) {
        uint32_t hi = v / 100, lo = v % 100;
        if (hi < 10)
            *p++ = (char)('0' + hi);
        else
            p = (char *)memcpy(p, ob_decimal_pairs + 2 * hi, 2) + 2;
        memcpy(p, ob_decimal_pairs + 2 * lo, 2);
        return p + 2;
    }
    size_t n = 5;
    for (uint32_t t = v / 100000; t; t /= 10)
        n++;
    char *end = p + n, *q = end;
    while (v >= 100) {
        q -= 2;
        memcpy(q, ob_decimal_pairs + 2 * (v % 100), 2);
        v /= 100;
    }
    if (v >= 10)
        memcpy(q - 2, ob_decimal_pairs + 2 * v, 2);
    else
        q[-1] = (char)('0' + v);
    return end;
}

static inline char *ob_put_u64(char *p, uint64_t v) /* %llu: at most 20 bytes */
{
    if (v <= UINT32_MAX)
        return ob_put_u32(p, (uint32_t)v);
    char tmp[20], *q = tmp + sizeof tmp;
    do {
        q -= 2;
        memcpy(q, ob_decimal_pairs + 2 * (v % 100), 2);
        v /= 100;
    } while (v >= 100);
    if (v >= 10) {
        q -= 2;
        memcpy(q, ob_decimal_pairs + 2 * v, 2);
    } else {
        *--q = (char)('0' + v);
    }
    size_t n = (size_t)(tmp + sizeof tmp - q);
    memcpy(p, q, n);
    return p + n;
}

static inline char *ob_put(char *p, const char *s, size_t n)
{
    memcpy(p, s, n);
    return p + n;
}

/* ob_put for the short strings of symbolized output (names, paths): inline copies of
 * overlapping 8- or 16-byte pieces instead of a call, reading nothing outside s[0..n). */
static inline char *ob_put_short(char *p, const char *s, size_t n)
{
    if (n >= 16) {
        size_t i = 0;
        for (; i + 32 < n; i += 32) {
            memcpy(p + i, s + i, 16);
            memcpy(p + i + 16, s + i + 16, 16);
        }
        if (i + 16 < n)
            memcpy(p + i, s + i, 16);
        memcpy(p + n - 16, s + n - 16, 16);
    } else if (n >= 8) {
        memcpy(p, s, 8);
        memcpy(p + n - 8, s + n - 8, 8);
    } else if (n >= 4) {
        memcpy(p, s, 4);
        memcpy(p + n - 4, s + n - 4, 4);
    } else {
        for (size_t i = 0; i < n; i++)
            p[i] = s[i];
    }
    return p + n;
}

void ob_str(outbuf *ob, const char *s);
void ob_u32(outbuf *ob, uint32_t v);  /* decimal */
void ob_hex(outbuf *ob, uint32_t v);  /* 0x.. without padding */
void ob_hex8(outbuf *ob, uint32_t v); /* 0x%08x */
/* "..." escaped, or null: the one JSON escaper. Its output is always UTF-8: a byte of s that is
 * not part of a UTF-8 character is written as the code point of its value (\u00XX); controls
 * and the bidirectional formatting characters (U+202E, ...) as \u escapes. */
void ob_json_string(outbuf *ob, const char *s);
/* The one escaper of text from a dump or an ELF (names, paths, messages) for a terminal: C0 and
 * C1 controls, DEL, bidirectional formatting characters and bytes that are not UTF-8 are
 * written as '?' (as thread names are read), so no such string can start a line or send an
 * escape sequence. ob_text_clean does it in place (s shrinks or stays), ob_text_plain says
 * whether s has nothing to escape. */
void ob_text(outbuf *ob, const char *s);
char *ob_text_clean(char *s);
bool ob_text_plain(const char *s);
void ob_printf(outbuf *ob, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
