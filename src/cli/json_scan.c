/* A small JSON reader (json_scan.h): recursive descent, no allocation. */
#include "json_scan.h"
#include "spoor/number.h"

#include <stdio.h>
#include <string.h>

#define MAX_DEPTH 64

struct scan {
    const char *p, *begin, *end;
    json_scan_fn fn;
    void *ctx;
    unsigned objects;
    char *error;
    size_t error_len;
    bool failed;
};

static bool fail(struct scan *s, const char *what)
{
    if (!s->failed)
        snprintf(s->error, s->error_len, "byte %zu: %s", (size_t)(s->p - s->begin), what);
    s->failed = true;
    return false;
}

static void skip_space(struct scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

static bool read_hex4(struct scan *s, unsigned *out)
{
    if (s->end - s->p < 4)
        return fail(s, "truncated \\u escape");
    *out = 0;
    for (int i = 0; i < 4; i++) {
        int d = spoor_hex_digit((unsigned char)*s->p++);
        if (d < 0)
            return fail(s, "bad \\u escape");
        *out = *out << 4 | (unsigned)d;
    }
    return true;
}

/* Appends code point cp as UTF-8 when it fits (out has room for JSON_SCAN_MAX_STRING bytes). */
static void put_utf8(char *out, size_t *n, unsigned cp)
{
    char b[4];
    size_t k;
    if (cp < 0x80) {
        b[0] = (char)cp;
        k = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | cp >> 6);
        b[1] = (char)(0x80 | (cp & 0x3F));
        k = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | cp >> 12);
        b[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F));
        k = 3;
    } else {
        b[0] = (char)(0xF0 | cp >> 18);
        b[1] = (char)(0x80 | (cp >> 12 & 0x3F));
        b[2] = (char)(0x80 | (cp >> 6 & 0x3F));
        b[3] = (char)(0x80 | (cp & 0x3F));
        k = 4;
    }
    if (*n + k < JSON_SCAN_MAX_STRING) {
        memcpy(out + *n, b, k);
        *n += k;
    }
}

/* A string at s->p (the opening quote), decoded into out (NUL-terminated, cut to fit). */
static bool read_string(struct scan *s, char *out)
{
    size_t n = 0;
    s->p++;
    for (;;) {
        if (s->p >= s->end)
            return fail(s, "unterminated string");
        unsigned char c = (unsigned char)*s->p++;
        if (c == '"')
            break;
        if (c < 0x20)
            return fail(s, "control character in a string");
        if (c != '\\') {
            if (n + 1 < JSON_SCAN_MAX_STRING)
                out[n++] = (char)c;
            continue;
        }
        if (s->p >= s->end)
            return fail(s, "unterminated string");
        char e = *s->p++;
        const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
        const char *at = e ? strchr(from, e) : NULL;
        if (at) {
            put_utf8(out, &n, (unsigned char)to[at - from]);
            continue;
        }
        if (e != 'u')
            return fail(s, "bad escape in a string");
        unsigned cp, low;
        if (!read_hex4(s, &cp))
            return false;
        if (cp >= 0xD800 && cp < 0xDC00 && s->end - s->p >= 6 && s->p[0] == '\\' &&
            s->p[1] == 'u') {
            const char *save = s->p;
            s->p += 2;
            if (!read_hex4(s, &low))
                return false;
            if (low >= 0xDC00 && low < 0xE000)
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            else
                s->p = save;
        }
        put_utf8(out, &n, cp);
    }
    out[n] = 0;
    return true;
}

static bool read_number(struct scan *s, char *out)
{
    const char *start = s->p;
    if (s->p < s->end && *s->p == '-')
        s->p++;
    if (s->p >= s->end || *s->p < '0' || *s->p > '9')
        return fail(s, "expected a value");
    if (*s->p == '0')
        s->p++;
    else
        while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
            s->p++;
    if (s->p < s->end && *s->p == '.') {
        s->p++;
        if (s->p >= s->end || *s->p < '0' || *s->p > '9')
            return fail(s, "expected a digit after '.'");
        while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
            s->p++;
    }
    if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
        s->p++;
        if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
            s->p++;
        if (s->p >= s->end || *s->p < '0' || *s->p > '9')
            return fail(s, "expected a digit in the exponent");
        while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
            s->p++;
    }
    size_t n = (size_t)(s->p - start);
    if (n >= JSON_SCAN_MAX_STRING)
        n = JSON_SCAN_MAX_STRING - 1;
    memcpy(out, start, n);
    out[n] = 0;
    return true;
}

static bool read_value(struct scan *s, const char *key, unsigned object, int depth);

static bool read_container(struct scan *s, int depth)
{
    bool is_object = *s->p == '{';
    char close = is_object ? '}' : ']';
    unsigned object = is_object ? ++s->objects : 0;
    static char keys[MAX_DEPTH][JSON_SCAN_MAX_STRING];
    if (depth >= MAX_DEPTH)
        return fail(s, "nested too deeply");
    s->p++;
    skip_space(s);
    if (s->p < s->end && *s->p == close) {
        s->p++;
        return true;
    }
    for (;;) {
        skip_space(s);
        if (is_object) {
            if (s->p >= s->end || *s->p != '"')
                return fail(s, "expected a string key");
            if (!read_string(s, keys[depth]))
                return false;
            skip_space(s);
            if (s->p >= s->end || *s->p != ':')
                return fail(s, "expected ':'");
            s->p++;
        }
        if (!read_value(s, is_object ? keys[depth] : "", object, depth + 1))
            return false;
        skip_space(s);
        if (s->p < s->end && *s->p == ',') {
            s->p++;
            continue;
        }
        if (s->p < s->end && *s->p == close) {
            s->p++;
            return true;
        }
        return fail(s, is_object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static bool literal(struct scan *s, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n))
        return fail(s, "expected a value");
    s->p += n;
    return true;
}

static bool read_value(struct scan *s, const char *key, unsigned object, int depth)
{
    static char text[JSON_SCAN_MAX_STRING];
    skip_space(s);
    if (s->p >= s->end)
        return fail(s, "expected a value");
    json_scan_value v = {key, object, false, text};
    switch (*s->p) {
    case '{':
    case '[': return read_container(s, depth);
    case 't': return literal(s, "true");
    case 'f': return literal(s, "false");
    case 'n': return literal(s, "null");
    case '"':
        if (!read_string(s, text))
            return false;
        v.is_string = true;
        break;
    default:
        if (!read_number(s, text))
            return false;
    }
    if (s->fn)
        s->fn(s->ctx, &v);
    return true;
}

bool json_scan(const char *text, size_t len, json_scan_fn fn, void *ctx, char *error,
               size_t error_len)
{
    struct scan s = {text, text, text + len, fn, ctx, 0, error, error_len, false};
    skip_space(&s);
    if (s.p >= s.end || *s.p != '{')
        return fail(&s, "not a JSON object");
    if (!read_value(&s, "", 0, 0))
        return false;
    skip_space(&s);
    if (s.p != s.end)
        return fail(&s, "more after the end of the document");
    return true;
}
