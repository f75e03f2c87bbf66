/* Reading back one line of a triage's JSON Lines output (triage_internal.h): a small JSON
 * reader (objects, arrays, strings, integers, null, true/false; depth and sizes bounded) and the
 * mapping of a bucket or per-dump object onto the records. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spoor/fault.h"
#include "spoor/number.h"
#include "triage/triage_internal.h"

#define MAX_DEPTH 4
#define MAX_ITEMS 4096

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jv {
    enum jtype type;
    char *str; /* J_STR */
    long long num;
    struct jv *items; /* J_ARR, J_OBJ */
    char **keys;      /* J_OBJ */
    size_t n;
};

struct reader {
    const char *p, *end;
    char error[160];
};

static bool fail(struct reader *r, const char *fmt, ...)
{
    if (!r->error[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->error, sizeof r->error, fmt, ap);
        va_end(ap);
    }
    return false;
}

static void jv_free(struct jv *v)
{
    free(v->str);
    for (size_t i = 0; i < v->n; i++) {
        jv_free(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    memset(v, 0, sizeof *v);
}

static void skip_space(struct reader *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\r'))
        r->p++;
}

/* A string after its opening quote: escapes decoded, \u00XX only below 0x80 and as UTF-8
 * above (surrogates refused). */
static bool read_string(struct reader *r, char **out)
{
    size_t cap = 16, n = 0;
    char *s = malloc(cap);
    if (!s)
        return fail(r, "out of memory");
    for (;;) {
        if (r->p >= r->end) {
            free(s);
            return fail(r, "unterminated string");
        }
        unsigned char c = (unsigned char)*r->p++;
        unsigned code = c;
        if (c == '"')
            break;
        if (c < 0x20) {
            free(s);
            return fail(r, "control character in a string");
        }
        if (c == '\\') {
            if (r->p >= r->end) {
                free(s);
                return fail(r, "unterminated string");
            }
            char e = *r->p++;
            const char *simple = strchr("\"\\/bfnrt", e);
            if (e && simple) {
                code = (unsigned char)"\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
            } else if (e == 'u' && r->end - r->p >= 4) {
                code = 0;
                for (int i = 0; i < 4; i++) {
                    int d = spoor_hex_digit((unsigned char)r->p[i]);
                    if (d < 0) {
                        free(s);
                        return fail(r, "bad \\u escape");
                    }
                    code = code * 16 + (unsigned)d;
                }
                r->p += 4;
                if ((code >= 0xD800 && code <= 0xDFFF) || code == 0) {
                    free(s);
                    return fail(r, "unsupported \\u escape");
                }
            } else {
                free(s);
                return fail(r, "bad escape in a string");
            }
        }
        char utf8[4];
        size_t m = 1;
        if (code < 0x80 || c == code) { /* a raw byte is copied as it is */
            utf8[0] = (char)code;
        } else if (code < 0x800) {
            utf8[0] = (char)(0xC0 | (code >> 6));
            utf8[1] = (char)(0x80 | (code & 0x3F));
            m = 2;
        } else {
            utf8[0] = (char)(0xE0 | (code >> 12));
            utf8[1] = (char)(0x80 | ((code >> 6) & 0x3F));
            utf8[2] = (char)(0x80 | (code & 0x3F));
            m = 3;
        }
        if (n + m + 1 > cap) {
            cap *= 2;
            char *grown = realloc(s, cap);
            if (!grown) {
                free(s);
                return fail(r, "out of memory");
            }
            s = grown;
        }
        memcpy(s + n, utf8, m);
        n += m;
    }
    s[n] = 0;
    *out = s;
    return true;
}

static bool read_value(struct reader *r, struct jv *v, int depth);

static bool read_items(struct reader *r, struct jv *v, int depth, bool object)
{
    char close = object ? '}' : ']';
    skip_space(r);
    if (r->p < r->end && *r->p == close) {
        r->p++;
        return true;
    }
    for (;;) {
        if (v->n == MAX_ITEMS)
            return fail(r, "more than %d items", MAX_ITEMS);
        struct jv *items = realloc(v->items, (v->n + 1) * sizeof *items);
        if (!items)
            return fail(r, "out of memory");
        v->items = items;
        memset(&items[v->n], 0, sizeof items[v->n]);
        if (object) {
            char **keys = realloc(v->keys, (v->n + 1) * sizeof *keys);
            if (!keys)
                return fail(r, "out of memory");
            v->keys = keys;
            keys[v->n] = NULL;
        }
        v->n++;
        if (object) {
            skip_space(r);
            if (r->p >= r->end || *r->p != '"')
                return fail(r, "expected a key");
            r->p++;
            if (!read_string(r, &v->keys[v->n - 1]))
                return false;
            skip_space(r);
            if (r->p >= r->end || *r->p != ':')
                return fail(r, "expected ':'");
            r->p++;
        }
        if (!read_value(r, &v->items[v->n - 1], depth + 1))
            return false;
        skip_space(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            continue;
        }
        if (r->p < r->end && *r->p == close) {
            r->p++;
            return true;
        }
        return fail(r, "expected ',' or '%c'", close);
    }
}

static bool read_value(struct reader *r, struct jv *v, int depth)
{
    if (depth > MAX_DEPTH)
        return fail(r, "nested deeper than %d", MAX_DEPTH);
    skip_space(r);
    if (r->p >= r->end)
        return fail(r, "unexpected end of line");
    char c = *r->p;
    static const struct {
        const char *word;
        enum jtype type;
        long long num;
    } words[] = {{"null", J_NULL, 0}, {"true", J_BOOL, 1}, {"false", J_BOOL, 0}};
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen(words[i].word);
        if ((size_t)(r->end - r->p) >= n && !memcmp(r->p, words[i].word, n)) {
            r->p += n;
            v->type = words[i].type;
            v->num = words[i].num;
            return true;
        }
    }
    if (c == '"') {
        r->p++;
        v->type = J_STR;
        return read_string(r, &v->str);
    }
    if (c == '[' || c == '{') {
        r->p++;
        v->type = c == '[' ? J_ARR : J_OBJ;
        return read_items(r, v, depth, c == '{');
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        bool neg = c == '-';
        if (neg)
            r->p++;
        long long n = 0;
        int digits = 0;
        while (r->p < r->end && *r->p >= '0' && *r->p <= '9') {
            if (++digits > 18)
                return fail(r, "number too large");
            n = n * 10 + (*r->p++ - '0');
        }
        if (!digits || (r->p < r->end && strchr(".eE", *r->p)))
            return fail(r, "expected an integer");
        v->type = J_NUM;
        v->num = neg ? -n : n;
        return true;
    }
    return fail(r, "unexpected '%c'", c);
}

static const struct jv *member(const struct jv *o, const char *key)
{
    for (size_t i = 0; i < o->n; i++)
        if (!strcmp(o->keys[i], key))
            return &o->items[i];
    return NULL;
}

/* A string member (nullable: null or absent gives *out NULL). */
static bool get_string(struct reader *r, const struct jv *o, const char *key, bool nullable,
                       char **out)
{
    const struct jv *v = member(o, key);
    *out = NULL;
    if (!v || v->type == J_NULL)
        return nullable || fail(r, "\"%s\": missing", key);
    if (v->type != J_STR)
        return fail(r, "\"%s\": expected a string", key);
    if (!(*out = strdup(v->str)))
        return fail(r, "out of memory");
    return true;
}

static bool get_count(struct reader *r, const struct jv *o, const char *key, uint64_t *out)
{
    const struct jv *v = member(o, key);
    if (!v || v->type != J_NUM || v->num < 1)
        return fail(r, "\"%s\": expected a count of 1 or more", key);
    *out = (uint64_t)v->num;
    return true;
}

static bool get_time(struct reader *r, const struct jv *o, const char *key, int64_t *out)
{
    const struct jv *v = member(o, key);
    if (!v || v->type != J_STR || !spoor_triage_time_parse(v->str, out))
        return fail(r, "\"%s\": expected a time YYYY-MM-DDTHH:MM:SSZ", key);
    return true;
}

static bool get_strings(struct reader *r, const struct jv *o, const char *key, size_t max,
                        char ***out, size_t *n)
{
    const struct jv *v = member(o, key);
    if (!v || v->type != J_ARR || v->n > max)
        return fail(r, "\"%s\": expected an array of at most %zu strings", key, max);
    if (v->n && !(*out = calloc(v->n, sizeof **out)))
        return fail(r, "out of memory");
    for (size_t i = 0; i < v->n; i++) {
        if (v->items[i].type != J_STR)
            return fail(r, "\"%s\": expected an array of strings", key);
        if (!((*out)[i] = strdup(v->items[i].str)))
            return fail(r, "out of memory");
        (*n)++;
    }
    return true;
}

static bool is_id(const char *s)
{
    if (!s || strlen(s) != 16)
        return false;
    for (const char *p = s; *p; p++)
        if (spoor_hex_digit((unsigned char)*p) < 0 || (*p >= 'A' && *p <= 'F'))
            return false;
    return true;
}

static bool to_bucket(struct reader *r, const struct jv *o, spoor_triage_bucket *b)
{
    char *id = NULL, *signature = NULL;
    spoor_triage_sig *s = &b->sig;
    bool ok = get_string(r, o, "bucket", false, &id) && get_count(r, o, "count", &b->count) &&
              get_string(r, o, "signature", false, &signature) &&
              get_string(r, o, "reason", false, &s->reason) &&
              get_string(r, o, "fault", true, &s->fault) &&
              get_strings(r, o, "bits", SPOOR_FAULT_MAX_BITS, &s->bits, &s->nbits) &&
              get_string(r, o, "assert", true, &s->assert_at) &&
              get_strings(r, o, "frames", SPOOR_TRIAGE_MAX_K, &s->frames, &s->nframes) &&
              get_time(r, o, "first", &b->first) && get_time(r, o, "last", &b->last) &&
              get_string(r, o, "example", false, &b->example);
    if (ok && b->first > b->last)
        ok = fail(r, "\"first\" is after \"last\"");
    if (ok && !spoor_triage_sig_finish(s))
        ok = fail(r, "out of memory");
    if (ok && (!is_id(id) || strcmp(id, s->id) || strcmp(signature, s->text)))
        ok = fail(r, "bucket %s: its id and signature do not match its parts (expected %s: %s)", id,
                  s->id, s->text);
    free(id);
    free(signature);
    const struct jv *versions = member(o, "versions");
    if (ok && (!versions || versions->type != J_ARR || !versions->n || versions->n > MAX_ITEMS))
        ok = fail(r, "\"versions\": expected an array of objects");
    if (ok && !(b->versions = calloc(versions->n, sizeof *b->versions)))
        ok = fail(r, "out of memory");
    uint64_t total = 0;
    for (size_t i = 0; ok && i < versions->n; i++) {
        const struct jv *v = &versions->items[i];
        spoor_triage_version *out = &b->versions[b->nversions];
        if (v->type != J_OBJ)
            ok = fail(r, "\"versions\": expected an array of objects");
        else if ((ok = get_string(r, v, "build_id", false, &out->build_id) &&
                       get_string(r, v, "version", true, &out->version) &&
                       get_count(r, v, "count", &out->count)))
            b->nversions++;
        else {
            free(out->build_id);
            free(out->version);
        }
        for (size_t j = 0; ok && j + 1 < b->nversions; j++)
            if (strcmp(b->versions[j].build_id, out->build_id) >= 0)
                ok = fail(r, "\"versions\": not sorted by build_id, or one twice");
        total += ok ? out->count : 0;
    }
    if (ok && total != b->count)
        ok = fail(r, "\"count\" %llu is not the sum of the versions' counts (%llu)",
                  (unsigned long long)b->count, (unsigned long long)total);
    if (!ok)
        spoor_triage_bucket_clear(b);
    return ok;
}

static bool to_dump(struct reader *r, const struct jv *o, spoor_triage_dump *d)
{
    char *bucket = NULL;
    bool ok =
        get_string(r, o, "dump", false, &d->path) && get_string(r, o, "error", true, &d->error);
    if (ok && !d->error) {
        ok = get_string(r, o, "bucket", false, &bucket) &&
             get_string(r, o, "build_id", true, &d->build_id) && get_time(r, o, "time", &d->time);
        if (ok && !is_id(bucket))
            ok = fail(r, "\"bucket\": expected 16 lowercase hex digits");
        if (ok)
            memcpy(d->bucket, bucket, sizeof d->bucket);
    }
    free(bucket);
    if (!ok)
        spoor_triage_dump_clear(d);
    return ok;
}

bool spoor_triage_line_parse(const char *text, size_t len, struct triage_line *out)
{
    struct reader r = {.p = text, .end = text + len};
    struct jv v;
    memset(&v, 0, sizeof v);
    memset(out, 0, sizeof *out);
    bool ok = read_value(&r, &v, 0);
    skip_space(&r);
    if (ok && r.p != r.end)
        ok = fail(&r, "text after the object");
    if (ok && v.type != J_OBJ)
        ok = fail(&r, "expected a JSON object");
    if (ok) {
        out->kind = member(&v, "dump") ? TRIAGE_LINE_DUMP : TRIAGE_LINE_BUCKET;
        ok = out->kind == TRIAGE_LINE_DUMP ? to_dump(&r, &v, &out->dump)
                                           : to_bucket(&r, &v, &out->bucket);
    }
    jv_free(&v);
    if (!ok)
        spoor_set_error(SPOOR_ERR_FORMAT, "%s", r.error);
    return ok;
}
