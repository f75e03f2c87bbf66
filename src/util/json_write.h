/* The JSON writer of every spoor command: objects, arrays and values onto an outbuf, commas
 * and escaping handled (strings through ob_json_string, the one escaper). Keys are literals
 * the caller knows need no escaping. Output is compact (no spaces); a document ends with a
 * newline (json_finish), so JSON Lines are one document after another on one writer. */
#ifndef SPOOR_UTIL_JSON_WRITE_H
#define SPOOR_UTIL_JSON_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/outbuf.h"

/* Linked as spoor_json_* (util/outbuf.h says why), called by their short names. */
#define json_init spoor_json_init
#define json_object_begin spoor_json_object_begin
#define json_object_end spoor_json_object_end
#define json_array_begin spoor_json_array_begin
#define json_array_end spoor_json_array_end
#define json_string spoor_json_string
#define json_hex32 spoor_json_hex32
#define json_uint spoor_json_uint
#define json_int spoor_json_int
#define json_fixed spoor_json_fixed
#define json_bool spoor_json_bool
#define json_null spoor_json_null
#define json_finish spoor_json_finish
#define json_raw spoor_json_raw

#define JSON_MAX_DEPTH 32

typedef struct json_out {
    outbuf *ob;
    unsigned depth;
    bool has_items[JSON_MAX_DEPTH]; /* the container at each depth has a first item already */
} json_out;

void json_init(json_out *j, outbuf *ob);
/* key: the member name inside an object, NULL inside an array or at the top. */
void json_object_begin(json_out *j, const char *key);
void json_object_end(json_out *j);
void json_array_begin(json_out *j, const char *key);
void json_array_end(json_out *j);
void json_string(json_out *j, const char *key, const char *value); /* NULL writes null */
void json_hex32(json_out *j, const char *key, uint32_t value);     /* "0x%08x" */
void json_uint(json_out *j, const char *key, uint64_t value);
void json_int(json_out *j, const char *key, int64_t value);
/* A number with a fixed count of decimals ("45.123"); null for NaN and infinities. */
void json_fixed(json_out *j, const char *key, double value, int decimals);
void json_bool(json_out *j, const char *key, bool value);
void json_null(json_out *j, const char *key);
/* A value already written as JSON (len bytes of text: an object, an array, a number), as it is. */
void json_raw(json_out *j, const char *key, const char *text, size_t len);
/* Ends the document with a newline (call after the outermost *_end); the next value written
 * starts a new document. */
void json_finish(json_out *j);

/* ---- the fast path: members with a literal key --------------------------------------------
 * For output of millions of small objects (spoor itm --json, spoor sym --json). JSON_KEY("name")
 * expands to the member's key as written ("\"name\":") and its length, so nothing is escaped
 * or measured at run time: json_key_uint(j, JSON_KEY("offset"), 42) writes exactly what
 * json_uint(j, "offset", 42) does. Only inside an object. */
#define JSON_KEY(name) "\"" name "\":", sizeof("\"" name "\":") - 1

/* The separator and the key, with room for value_max more bytes: where to write the value
 * (then ob_commit), or NULL when that does not fit in the buffer. */
static inline char *json_key_reserve(json_out *j, const char *key, size_t key_len, size_t value_max)
{
    char *p = ob_reserve(j->ob, 1 + key_len + value_max);
    if (!p)
        return NULL;
    if (j->has_items[j->depth])
        *p++ = ',';
    j->has_items[j->depth] = true;
    return ob_put(p, key, key_len);
}

static inline void json_key_uint(json_out *j, const char *key, size_t key_len, uint64_t value)
{
    char *p = json_key_reserve(j, key, key_len, 20);
    if (p)
        ob_commit(j->ob, ob_put_u64(p, value));
}

static inline void json_key_bool(json_out *j, const char *key, size_t key_len, bool value)
{
    char *p = json_key_reserve(j, key, key_len, 5);
    if (p)
        ob_commit(j->ob, value ? ob_put(p, "true", 4) : ob_put(p, "false", 5));
}

static inline void json_key_null(json_out *j, const char *key, size_t key_len)
{
    char *p = json_key_reserve(j, key, key_len, 4);
    if (p)
        ob_commit(j->ob, ob_put(p, "null", 4));
}

static inline void json_key_hex32(json_out *j, const char *key, size_t key_len, uint32_t value)
{
    char *p = json_key_reserve(j, key, key_len, 12);
    if (p) {
        *p++ = '"';
        p = ob_put_hex8(p, value);
        *p++ = '"';
        ob_commit(j->ob, p);
    }
}

/* A string value (NULL writes null), escaped by ob_json_string. */
static inline void json_key_string(json_out *j, const char *key, size_t key_len, const char *value)
{
    char *p = json_key_reserve(j, key, key_len, 0);
    if (p) {
        ob_commit(j->ob, p);
        ob_json_string(j->ob, value);
    }
}

/* An array or object member (c is '[' or '{'): json_array_end / json_object_end close it. */
static inline void json_key_open(json_out *j, const char *key, size_t key_len, char c)
{
    char *p = json_key_reserve(j, key, key_len, 1);
    if (!p)
        return;
    *p++ = c;
    ob_commit(j->ob, p);
    if (j->depth + 1 < JSON_MAX_DEPTH)
        j->depth++;
    j->has_items[j->depth] = false;
}

static inline void json_key_array_begin(json_out *j, const char *key, size_t key_len)
{
    json_key_open(j, key, key_len, '[');
}

static inline void json_key_object_begin(json_out *j, const char *key, size_t key_len)
{
    json_key_open(j, key, key_len, '{');
}

#endif
