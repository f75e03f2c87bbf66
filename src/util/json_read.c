/* The JSON reader (util/json_read.h): recursive descent over the text, strings decoded into two
 * buffers the reader grows (the current member's key and the current value). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "util/json_read.h"
#include "util/number.h"

struct buf {
    char *s;
    size_t n, cap;
};

struct reader {
    const char *p, *begin, *end;
    unsigned max_depth;
    spoor_json_fn fn;
    void *ctx;
    struct buf key, value;
    spoor_json_error *err;
    bool failed;
};

static bool fail(struct reader *r, const char *what)
{
    if (!r->failed) {
        r->err->offset = (size_t)(r->p - r->begin);
        snprintf(r->err->message, sizeof r->err->message, "%s", what);
    }
    r->failed = true;
    return false;
}

static void skip_space(struct reader *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
        r->p++;
}

static bool put(struct reader *r, struct buf *b, const char *bytes, size_t n)
{
    if (spoor_grow((void **)&b->s, &b->cap, b->n + n + 1, 1))
        return fail(r, "out of memory");
    memcpy(b->s + b->n, bytes, n);
    b->n += n;
    b->s[b->n] = 0;
    return true;
}

static bool read_hex4(struct reader *r, unsigned *out)
{
    if (r->end - r->p < 4)
        return fail(r, "truncated \\u escape");
    *out = 0;
    for (int i = 0; i < 4; i++) {
        int d = spoor_hex_digit((unsigned char)*r->p++);
        if (d < 0)
            return fail(r, "bad \\u escape");
        *out = *out << 4 | (unsigned)d;
    }
    return true;
}

static bool put_utf8(struct reader *r, struct buf *b, unsigned cp)
{
    char u[4];
    size_t k;
    if (cp < 0x80) {
        u[0] = (char)cp;
        k = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | cp >> 6);
        u[1] = (char)(0x80 | (cp & 0x3F));
        k = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | cp >> 12);
        u[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        k = 3;
    } else {
        u[0] = (char)(0xF0 | cp >> 18);
        u[1] = (char)(0x80 | (cp >> 12 & 0x3F));
        u[2] = (char)(0x80 | (cp >> 6 & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        k = 4;
    }
    return put(r, b, u, k);
}

/* A \u escape after its backslash and 'u': one code point, or a surrogate pair as one. */
static bool read_unicode(struct reader *r, struct buf *b)
{
    unsigned cp, low;
    if (!read_hex4(r, &cp))
        return false;
    if (cp >= 0xD800 && cp < 0xDC00 && r->end - r->p >= 6 && r->p[0] == '\\' && r->p[1] == 'u') {
        r->p += 2;
        if (!read_hex4(r, &low))
            return false;
        if (low < 0xDC00 || low >= 0xE000)
            return fail(r, "lone surrogate in a \\u escape");
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    } else if (cp >= 0xD800 && cp < 0xE000) {
        return fail(r, "lone surrogate in a \\u escape");
    }
    return put_utf8(r, b, cp);
}

/* A string at r->p (the opening quote), decoded into b. */
static bool read_string(struct reader *r, struct buf *b)
{
    b->n = 0;
    if (!put(r, b, "", 0))
        return false;
    r->p++;
    for (;;) {
        const char *run = r->p;
        while (r->p < r->end && *r->p != '"' && *r->p != '\\' && (unsigned char)*r->p >= 0x20)
            r->p++;
        if (r->p > run && !put(r, b, run, (size_t)(r->p - run)))
            return false;
        if (r->p >= r->end)
            return fail(r, "unterminated string");
        unsigned char c = (unsigned char)*r->p++;
        if (c == '"')
            return true;
        if (c < 0x20)
            return fail(r, "control character in a string");
        if (r->p >= r->end)
            return fail(r, "unterminated string");
        char e = *r->p++;
        const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
        const char *at = e ? strchr(from, e) : NULL;
        if (at) {
            if (!put(r, b, &to[at - from], 1))
                return false;
        } else if (e != 'u') {
            return fail(r, "bad escape in a string");
        } else if (!read_unicode(r, b)) {
            return false;
        }
    }
}

static void skip_digits(struct reader *r)
{
    while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
        r->p++;
}

static bool is_digit_at(const struct reader *r)
{
    return r->p < r->end && *r->p >= '0' && *r->p <= '9';
}

/* A number as the grammar has it: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool read_number(struct reader *r)
{
    if (r->p < r->end && *r->p == '-')
        r->p++;
    if (!is_digit_at(r))
        return fail(r, "expected a value");
    if (*r->p == '0')
        r->p++;
    else
        skip_digits(r);
    if (r->p < r->end && *r->p == '.') {
        r->p++;
        if (!is_digit_at(r))
            return fail(r, "expected a digit after '.'");
        skip_digits(r);
    }
    if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
        r->p++;
        if (r->p < r->end && (*r->p == '+' || *r->p == '-'))
            r->p++;
        if (!is_digit_at(r))
            return fail(r, "expected a digit in the exponent");
        skip_digits(r);
    }
    return true;
}

static bool emit(struct reader *r, spoor_json_type type, const char *key, size_t key_len,
                 const char *text, size_t len, unsigned depth)
{
    if (!r->fn)
        return true;
    spoor_json_item item = {type, key, key_len, text, len, depth};
    const char *stop = r->fn(r->ctx, &item);
    return !stop || fail(r, stop);
}

static bool read_value(struct reader *r, const char *key, size_t key_len, unsigned depth);

static bool read_container(struct reader *r, const char *key, size_t key_len, unsigned depth)
{
    bool is_object = *r->p == '{';
    char close = is_object ? '}' : ']';
    if (depth >= r->max_depth)
        return fail(r, "nested too deeply");
    r->p++;
    if (!emit(r, is_object ? SPOOR_JSON_OBJECT : SPOOR_JSON_ARRAY, key, key_len, "", 0, depth))
        return false;
    skip_space(r);
    if (r->p < r->end && *r->p == close) {
        r->p++;
        return emit(r, SPOOR_JSON_END, NULL, 0, "", 0, depth);
    }
    for (;;) {
        skip_space(r);
        if (is_object) {
            if (r->p >= r->end || *r->p != '"')
                return fail(r, "expected a string key");
            if (!read_string(r, &r->key))
                return false;
            skip_space(r);
            if (r->p >= r->end || *r->p != ':')
                return fail(r, "expected ':'");
            r->p++;
        }
        if (!(is_object ? read_value(r, r->key.s, r->key.n, depth + 1)
                        : read_value(r, NULL, 0, depth + 1)))
            return false;
        skip_space(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            continue;
        }
        if (r->p < r->end && *r->p == close) {
            r->p++;
            return emit(r, SPOOR_JSON_END, NULL, 0, "", 0, depth);
        }
        return fail(r, is_object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static bool literal(struct reader *r, const char *word, spoor_json_type type, const char *key,
                    size_t key_len, unsigned depth)
{
    size_t n = strlen(word);
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n))
        return fail(r, "expected a value");
    r->p += n;
    return emit(r, type, key, key_len, "", 0, depth);
}

static bool read_value(struct reader *r, const char *key, size_t key_len, unsigned depth)
{
    skip_space(r);
    if (r->p >= r->end)
        return fail(r, "expected a value");
    const char *start = r->p;
    switch (*r->p) {
    case '{':
    case '[': return read_container(r, key, key_len, depth);
    case 't': return literal(r, "true", SPOOR_JSON_TRUE, key, key_len, depth);
    case 'f': return literal(r, "false", SPOOR_JSON_FALSE, key, key_len, depth);
    case 'n': return literal(r, "null", SPOOR_JSON_NULL, key, key_len, depth);
    case '"':
        return read_string(r, &r->value) &&
               emit(r, SPOOR_JSON_STRING, key, key_len, r->value.s, r->value.n, depth);
    default:
        r->value.n = 0;
        return read_number(r) && put(r, &r->value, start, (size_t)(r->p - start)) &&
               emit(r, SPOOR_JSON_NUMBER, key, key_len, r->value.s, r->value.n, depth);
    }
}

bool spoor_json_read(const char *text, size_t len, unsigned max_depth, spoor_json_fn fn, void *ctx,
                     spoor_json_error *err)
{
    struct reader r = {.p = text,
                       .begin = text,
                       .end = text + len,
                       .max_depth = max_depth,
                       .fn = fn,
                       .ctx = ctx,
                       .err = err};
    err->offset = 0;
    err->message[0] = 0;
    bool ok = read_value(&r, NULL, 0, 0);
    if (ok) {
        skip_space(&r);
        if (r.p != r.end)
            ok = fail(&r, "more after the end of the document");
    }
    free(r.key.s);
    free(r.value.s);
    return ok;
}
