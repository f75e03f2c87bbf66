/* spoor report's scan of a JSON document, on libspoor's reader (util/json_read.h): checks that a
 * text is one JSON object (RFC 8259) and hands every string and number member to a callback
 * with its key, decoded. Enough to find the addresses and source lines of a crash report
 * (docs/crash.md) and to refuse a file that is not JSON; it keeps nothing itself. */
#ifndef SPOOR_JSON_SCAN_H
#define SPOOR_JSON_SCAN_H

#include <stdbool.h>
#include <stddef.h>

#define JSON_SCAN_MAX_STRING 4096 /* what the report's annex keeps of a file name */

typedef struct json_scan_value {
    const char *key;  /* the member's key; "" for an array element or the top value */
    unsigned object;  /* which object it is in: 1, 2, ... in document order; 0 at the top */
    bool is_string;   /* else a number */
    const char *text; /* the string decoded (UTF-8), or the number as written */
} json_scan_value;

typedef void (*json_scan_fn)(void *ctx, const json_scan_value *v);

/* Reads text[0..len): true when it is one JSON value whose top is an object. Otherwise false
 * with a message ("byte 12: expected ':'") in error. fn may be NULL. */
bool json_scan(const char *text, size_t len, json_scan_fn fn, void *ctx, char *error,
               size_t error_len);

#endif
