/* The one JSON reader of spoor (RFC 8259), for the documents it reads back: a spoor crash --json
 * report (spoor report) and triage output (spoor triage --merge). It checks that a text is one
 * JSON value and hands every value to a callback in document order, with its member key and its
 * text decoded; it keeps nothing itself. Recursive descent, depth bounded by the caller. */
#ifndef SPOOR_JSON_H
#define SPOOR_JSON_H

#include <stdbool.h>
#include <stddef.h>

typedef enum spoor_json_type {
    SPOOR_JSON_NULL,
    SPOOR_JSON_FALSE,
    SPOOR_JSON_TRUE,
    SPOOR_JSON_NUMBER,
    SPOOR_JSON_STRING,
    SPOOR_JSON_OBJECT, /* its members follow, then SPOOR_JSON_END */
    SPOOR_JSON_ARRAY,  /* its elements follow, then SPOOR_JSON_END */
    SPOOR_JSON_END,
} spoor_json_type;

typedef struct spoor_json_item {
    spoor_json_type type;
    const char *key; /* the member's key, decoded; NULL for an array element, the top and END */
    size_t key_len;
    const char *text; /* STRING: decoded UTF-8; NUMBER: as written; "" for the others */
    size_t len;       /* a decoded string may hold NUL bytes (\u0000): len counts them */
    unsigned depth;   /* 0 for the top value; END has its container's depth */
} spoor_json_item;

/* The callback: NULL to go on, or a message that stops the reading and becomes its error. */
typedef const char *(*spoor_json_fn)(void *ctx, const spoor_json_item *item);

typedef struct spoor_json_error {
    size_t offset; /* the byte of the text where the reading stopped */
    char message[160];
} spoor_json_error;

/* Reads text[0..len) (space, tab, CR and LF allowed around tokens): true when it is one JSON
 * value with containers nested at most max_depth deep. Otherwise false with err set ("expected
 * ':'", "unterminated string", the callback's message). Strings are decoded to UTF-8 (a \u
 * surrogate pair as one code point; a lone surrogate is an error); numbers are checked against
 * the grammar and given as written. fn may be NULL (a check only). */
bool spoor_json_read(const char *text, size_t len, unsigned max_depth, spoor_json_fn fn, void *ctx,
                     spoor_json_error *err);

#endif
