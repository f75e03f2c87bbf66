/* The JSON writer of every spoor command: objects, arrays and values onto an outbuf, commas
 * and escaping handled (strings through ob_json_string, the one escaper). Keys are literals
 * the caller knows need no escaping. */
#ifndef SPOOR_JSON_OUT_H
#define SPOOR_JSON_OUT_H

#include <stdbool.h>
#include <stdint.h>

#include "outbuf.h"

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
/* Ends the document with a newline (call after the outermost *_end). */
void json_finish(json_out *j);

#endif
